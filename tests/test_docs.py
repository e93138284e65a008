"""Every ```python block of the README and of docs/*.md runs: each README block alone (a reader
copies one), the blocks of a docs page in one namespace (a page is read from the top)."""

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
        if path.name == "README.md":
            namespace = {"__name__": f"doc_{path.stem}_{k}"}
        exec(compile(code, f"{path.name}[block {k}]", "exec"), namespace)


def test_api_reference_lists_every_module():
    """docs/api/*.md holds a ``::: module`` directive for every module of the three packages but
    the command line's, so the site's API reference (mkdocstrings) shows every public function."""
    listed = set(
        re.findall(
            r"^::: ([\w.]+)$",
            "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "api").glob("*.md")),
            flags=re.M,
        )
    )
    modules = set()
    for package in ("pga_dyn", "drng", "robots", "identification"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            if not name.startswith("pga_dyn.cli") and not name.startswith("robots.data"):
                modules.add(name)
    assert modules == listed, (sorted(modules - listed), sorted(listed - modules))
