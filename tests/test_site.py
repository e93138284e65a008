"""The documentation site as readers get it (needs the docs extra: ``pip install ".[docs]"``; skipped
without it).

* The built HTML holds no raw Sphinx role (``:func:`name``` left as text): docs/api_docstrings.py
  turns each into a link, and a role it cannot resolve fails ``mkdocs build --strict``.
* The API reference renders the numpydoc sections as tables and shows the type hints.
* The example notebook's page shows its outputs (tables and the figure).
* Every public name of the API reference has a summary line.

The site is built once into a temporary folder (``mkdocs build --strict``, about 10 s), or read
from ``$PGA_DYN_SITE`` when set (.ci/run builds the site once and points this test at it). The
tests of the built site are marked slow (``python -m pytest -m slow``); the others run by default.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: A Sphinx role as text: ``:func:`` (the roles the docstrings use, and the other Python ones).
RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|data|mod|exc|obj|const):")


def raw_roles(site: pathlib.Path) -> dict[str, int]:
    """Page -> number of raw roles in its HTML, for the pages that have any."""
    counts = {}
    for page in sorted(site.rglob("*.html")):
        found = len(RAW_ROLE.findall(page.read_text(encoding="utf-8")))
        if found:
            counts[str(page.relative_to(site))] = found
    return counts


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    if os.environ.get("PGA_DYN_SITE"):
        return pathlib.Path(os.environ["PGA_DYN_SITE"])
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("mkdocs_jupyter")
    out = tmp_path_factory.mktemp("site")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)  # this tree's packages
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return out


@pytest.mark.slow  # builds the site (about 10 s) unless $PGA_DYN_SITE names one
def test_no_raw_roles(site):
    assert raw_roles(site) == {}


@pytest.mark.slow  # builds the site (about 10 s) unless $PGA_DYN_SITE names one
def test_api_reference_has_tables_links_and_types(site):
    html = (site / "api" / "pga_dyn" / "index.html").read_text(encoding="utf-8")
    start = html.index('id="pga_dyn.sampling.sample_states"')
    entry = html[start : html.index('class="doc doc-heading"', start + 100)]
    assert "<table>" in entry and "Parameters:" in entry  # a numpydoc section as a table
    assert 'href="#pga_dyn.sampling.bounds_array"' in entry  # a role as a link
    signature = re.sub(
        r"<[^>]+>", "", entry[entry.index("doc-signature") : entry.index("</code>", entry.index("doc-signature"))]
    )
    assert "robot: Robot," in signature and "max_cond: float = 30.0" in signature  # the type hints
    assert "None, array_like (n_a, 2) or dict" in entry  # a docstring type as written


@pytest.mark.slow  # builds the site (about 10 s) unless $PGA_DYN_SITE names one
def test_notebook_page_shows_outputs(site):
    html = (site / "example" / "index.html").read_text(encoding="utf-8")
    assert len(re.findall(r"Out\[\d+\]", html)) >= 6
    assert "<table" in html and "data:image/png;base64," in html
    assert "dim=45, parameters=70, certified)" in html


def api_loader():
    """(docs/api_docstrings.py as a module, a griffe loader of the packages with its extension), as
    the API reference reads the docstrings."""
    griffe = pytest.importorskip("griffe")
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import api_docstrings
    finally:
        sys.path.remove(str(ROOT / "docs"))
    extensions = griffe.load_extensions(api_docstrings.ApiDocstrings())
    return api_docstrings, griffe.GriffeLoader(extensions=extensions, search_paths=[str(ROOT)])


def test_public_names_have_a_summary():
    """Modules, classes, functions, methods, properties and module constants: each has a
    docstring (constants: a ``#:`` comment, as docs/api_docstrings.py reads them) whose first
    line says what it is. The fields of a dataclass are described by their class's docstring."""
    docs, loader = api_loader()
    PACKAGES, walk = docs.PACKAGES, docs.walk
    missing = []
    for package in PACKAGES:
        for obj in walk(loader.load(package)):
            if any(part.startswith("_") for part in obj.path.split(".")) or obj.path.startswith("pga_dyn.cli"):
                continue
            if obj.path.startswith("robots.data") or (obj.is_attribute and obj.parent.is_class):
                continue
            if obj.docstring is None or not obj.docstring.value.strip().splitlines()[0].strip():
                missing.append(obj.path)
    assert missing == []


def test_roles_become_links():
    """docs/api_docstrings.py resolves roles like Sphinx: a package's lazy name, a name relative
    to the module, ``~`` (last component only), another package's class; a private target is
    code, not a link; a docstring's type stays as written."""
    _, loader = api_loader()
    drng = loader.load("drng")
    assert "[`nullspace()`][drng.generator.nullspace]" in drng.docstring.value
    assert "[`Analysis`][drng.analysis.Analysis]" in drng.docstring.value
    robots = loader.load("robots")
    text = robots["extended.load_extended_urdf"].docstring.value
    assert "[`Robot`][pga_dyn.model.Robot]" in text and "[`yaml_beside()`][robots.extended.yaml_beside]" in text
    certificate = drng["certify.certificate"].docstring.value
    assert (
        "(`_remainder()`)" in certificate
        and "[`pga_dyn.sampling.bounds_array()`][pga_dyn.sampling.bounds_array]" in certificate
    )
    pga_dyn = loader.load("pga_dyn")
    assert not re.search(r":(func|class|meth|attr|data|mod):`", pga_dyn["sampling.sample_states"].docstring.value)
    sections = pga_dyn["sampling.sample_states"].docstring.parsed
    bounds = next(p for s in sections if s.kind.value == "parameters" for p in s.value if p.name == "bounds")
    assert bounds.annotation == "None, array_like (n_a, 2) or dict"
