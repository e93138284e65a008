"""The layers of the code, read from its syntax trees (docs/architecture.md).

* pga_dyn imports none of the others; drng and robots import pga_dyn and not each other;
  identification, the layer above drng, imports drng and pga_dyn, not robots; the CLI, the
  package ``pga_dyn.cli``, is the composition root: its modules are the only ones that import
  drng, robots and pga_dyn together, and none is over 250 lines (thin commands: the reports are
  the library's).
* No module imports itself back through others: the graph of imports between the modules of the
  packages and their subpackages (imports inside functions included) has no cycle.
* identification is a pipeline: each stage imports only the stages before it, in the order
  its opening docstring lists them.
* No private name (``_name``) crosses a module: none is imported from another module, and no
  private attribute is read on anything but ``self`` or ``cls`` (but numba's, in the one module
  that reads them: NUMBA_INTERNALS).
"""

import ast
import pathlib
import re

import networkx as nx
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("pga_dyn", "drng", "robots", "identification")
#: Which packages each package may import; the CLI may import all.
ALLOWED = {
    "pga_dyn": {"pga_dyn"},
    "drng": {"drng", "pga_dyn"},
    "robots": {"robots", "pga_dyn"},
    "identification": {"identification", "drng", "pga_dyn"},
}
COMPOSITION_ROOT = "pga_dyn.cli"
#: The most lines a module of the composition root may have.
CLI_LINES = 250
#: Private-looking names that are public API: those of namedtuples.
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}
#: numba's internals, read in one place only (pga_dyn.interpreted.load_cached: whether numba's
#: on-disk cache holds a kernel's compiled version, without compiling it; documented there and
#: tested in tests/test_interpreted.py).
NUMBA_INTERNALS = {"pga_dyn.interpreted": {"_cache", "_index_key", "_cache_file", "_load_index"}}


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: The modules of the packages, subpackages included.
FILES = {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}
SOURCES = {module: path.read_text(encoding="utf-8") for module, path in FILES.items()}
#: The packages and subpackages (their ``__init__``), the base of their relative imports.
PACKAGE_INIT = set(PACKAGES) | {module for module, path in FILES.items() if path.name == "__init__.py"}


def in_composition_root(module: str) -> bool:
    return module == COMPOSITION_ROOT or module.startswith(COMPOSITION_ROOT + ".")


#: The stages of the identification in the order of the job (the opening docstring of
#: identification lists them so): each imports only the stages before it.
IDENTIFICATION = "identification"
STAGES = (
    "signals",
    "data",
    "model",
    "excitation",
    "simulation",
    "physics",
    "estimation",
    "energy",
    "payload",
    "consistency",
    "selection",
    "diagnostics",
    "export",
    "legged",
    "standing",
    "job",
)


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def imports(module: str, source: str):
    """(imported module, names imported from it, line) for every import in ``source``, the text of
    ``module``, at any depth (imports inside functions too)."""
    package = module if module in PACKAGE_INIT else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            names = [alias.name for alias in node.names]
            modules = [name for name in names if f"{target}.{name}" in SOURCES]  # "from . import pga"
            if len(modules) < len(names):  # "from . import common" imports a submodule, not its package's names
                yield target, tuple(name for name in names if name not in modules), node.lineno
            for name in modules:
                yield f"{target}.{name}", (), node.lineno


def violations(module: str, source: str) -> list:
    """What ``source`` (the text of ``module``) does against the layers and private names."""
    found = []
    allowed = set(PACKAGES) if in_composition_root(module) else ALLOWED[module.split(".")[0]]
    for target, names, line in imports(module, source):
        if target.split(".")[0] in set(PACKAGES) - allowed:
            found.append(f"{module}:{line} imports {target}")
        if [name for name in names if private(name)]:
            found.append(f"{module}:{line} imports {[n for n in names if private(n)]} from {target}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and private(node.attr) and node.attr not in NAMEDTUPLE_API:
            if node.attr in NUMBA_INTERNALS.get(module, ()):
                continue
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{module}:{node.lineno} reads {ast.unparse(node)}")
    return found


def import_graph(sources: dict) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(sources)
    for module, source in sources.items():
        graph.add_edges_from(
            (module, target) for target, _, _ in imports(module, source) if target in sources and target != module
        )
    return graph


def test_the_packages_are_found():
    assert {
        "pga_dyn",
        "pga_dyn.model",
        "pga_dyn.cli",
        "pga_dyn.cli.analyze",
        "pga_dyn.cli.__main__",
        "drng",
        "drng.principles",
        "identification",
        "robots.urdf",
        "pga_dyn.loops",
        "pga_dyn.loops.closure",
    } <= set(SOURCES)
    assert "pga_dyn.cli" in PACKAGE_INIT and "pga_dyn.cli.common" not in PACKAGE_INIT


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_layers_and_private_names(module):
    assert violations(module, SOURCES[module]) == []


def test_only_the_cli_imports_all_three_packages():
    three = {"pga_dyn", "drng", "robots"}
    for module, source in SOURCES.items():
        reached = {target.split(".")[0] for target, _, _ in imports(module, source)} & set(PACKAGES)
        assert not reached >= three or in_composition_root(module), module
    reached = {
        target.split(".")[0]
        for module in SOURCES
        if in_composition_root(module)
        for target, _, _ in imports(module, SOURCES[module])
    }
    assert reached >= set(PACKAGES)


def test_cli_modules_are_thin():
    """One module per command, none over CLI_LINES lines: the commands parse their arguments and
    call the library, whose result objects build the reports."""
    lines = {module: SOURCES[module].count("\n") for module in SOURCES if in_composition_root(module)}
    assert len(lines) > 5 and max(lines.values()) <= CLI_LINES, lines


def test_no_import_cycle():
    cycles = list(nx.simple_cycles(import_graph(SOURCES)))
    assert not cycles, f"import cycles: {cycles}"


def test_identification_is_a_pipeline():
    """The stages are the modules of identification, its docstring lists them in order, and a
    stage imports no stage after it (nor the package, whose names are lazy)."""
    modules = {m.rsplit(".", 1)[1] for m in SOURCES if m.startswith(IDENTIFICATION + ".")}
    assert modules == set(STAGES)
    doc = ast.get_docstring(ast.parse(SOURCES[IDENTIFICATION]))
    assert re.findall(r"^\s*\d+\. :mod:`\.(\w+)`", doc, flags=re.M) == list(STAGES)
    for k, stage in enumerate(STAGES):
        module = f"{IDENTIFICATION}.{stage}"
        reached = {
            target
            for target, _, _ in imports(module, SOURCES[module])
            if target == IDENTIFICATION or target.startswith(IDENTIFICATION + ".")
        }
        assert reached <= {f"{IDENTIFICATION}.{before}" for before in STAGES[:k]}, (module, reached)


def test_the_checks_see_violations():
    """Each check reports the violation it is meant to catch, and the CLI may import everything."""
    bad = (
        "import drng\nfrom .model import _lump\n\ndef f(robot):\n    from robots import urdf\n    return robot._cache\n"
    )
    assert violations("pga_dyn.kinematics", bad) == [
        "pga_dyn.kinematics:1 imports drng",
        "pga_dyn.kinematics:2 imports ['_lump'] from pga_dyn.model",
        "pga_dyn.kinematics:5 imports robots.urdf",
        "pga_dyn.kinematics:6 reads robot._cache",
    ]
    assert violations("drng.generator", "import robots\n") == ["drng.generator:1 imports robots"]
    assert violations("pga_dyn.cli", "import drng\nimport robots\nfrom . import loops\n") == []
    assert violations("pga_dyn.cli.analyze", "import drng\nimport robots\nfrom .. import loops\n") == []
    assert violations("pga_dyn.clinic", "import drng\n") == ["pga_dyn.clinic:1 imports drng"]
    assert ("pga_dyn.errors", ("PgaDynError",), 1) in list(
        imports("pga_dyn.cli.analyze", "from ..errors import PgaDynError\n")
    )
    assert ("pga_dyn.pga", (), 1) in list(imports("pga_dyn.kinematics", "from . import pga\n"))
    cyclic = {
        "pga_dyn.sampling": "from .tp_regressor import f\n",
        "pga_dyn.tp_regressor": "def g():\n    from .sampling import h\n",
    }
    assert list(nx.simple_cycles(import_graph(cyclic)))
