"""The example notebook docs/example.ipynb runs (its code cells, in order, in one namespace; the
notebook's own asserts check the figures), and the notebook tables show the objects' figures."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import matplotlib
import pytest

matplotlib.use("Agg")

import drng  # noqa: E402
import robots  # noqa: E402
from pga_dyn.errors import PgaDynError  # noqa: E402

NOTEBOOK = pathlib.Path(__file__).resolve().parent.parent / "docs" / "example.ipynb"


def test_example_notebook_runs():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    namespace = {"__name__": "example_notebook"}
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code
    for k, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"example.ipynb[cell {k}]", "exec"), namespace)
    assert namespace["four_bar_result"].dim == 26  # tests/test_formats.py: Pinocchio's figure


def cells(html: str) -> list:
    return re.findall(r"<tr>(.*?)</tr>", html)


def test_tables_show_the_objects():
    pkm = robots.load("2rru_1rrs")
    result = drng.nullspace(pkm)
    assert len(cells(pkm._repr_html_())) == 1 + pkm.n + len(pkm.loop_joints)
    assert "dim=45, parameters=70, certified)" in result._repr_html_()
    unchecked = drng.nullspace(pkm, certify=False)._repr_html_()
    assert "not certified" in unchecked.lower() and "parameters=70, certified)" not in unchecked
    assert len(result.to_frame()) == result.dim
    base = drng.base_parameters(pkm, result)
    assert len(cells(base._repr_html_())) == 1 + base.num_base_parameters
    assert list(base.to_frame()["base parameter"]) == list(base.names)
    classes = drng.classify(pkm, result)
    html = classes._repr_html_()
    symbols = {"*": "identifiable alone", "o": "identifiable in combination", "x": "unidentifiable"}
    shown = re.findall(r"<td>([*ox])</td>", html)
    assert len(shown) == 10 * pkm.n
    for symbol, cls in symbols.items():
        assert shown.count(symbol) == sum(r.cls == cls for r in classes)
    frame = classes.to_frame()
    assert list(frame.columns) == ["body", "parameter", "class"] and len(frame) == 10 * pkm.n


def test_to_frame_without_pandas_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(PgaDynError, match="pip install pandas"):
        robots.load("puma560").to_frame()
