"""Every ```python block of the README and of docs/*.md runs (blocks of one file share a namespace)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("path", [f for f in FILES if blocks(f)], ids=lambda p: p.name)
def test_examples_run(path, capsys):
    namespace = {"__name__": f"doc_{path.stem}"}
    for k, code in enumerate(blocks(path)):
        exec(compile(code, f"{path.name}[block {k}]", "exec"), namespace)
