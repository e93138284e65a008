"""The wheel's contents and metadata, read from pyproject.toml (building a wheel needs the
network; `pip wheel . -w dist` and `python -m zipfile -l dist/*.whl` show the same)."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys

import pga_dyn
import robots

try:
    import tomllib
except ImportError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)


def test_wheel_installs_every_built_in_robot_and_its_licence():
    config = project()["tool"]["setuptools"]
    globs = config["package-data"]["robots"]
    needed = [os.path.relpath(robots.data_path(name), os.path.join(ROOT, "robots")) for name in robots.available()]
    for relative in needed + ["data/go2.LICENSE"]:
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative
    packages = set(config["packages"])
    for top in ("pga_dyn", "drng", "robots"):  # not build/ (pip install . writes one), tests/, benchmarks/
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in names:
                assert os.path.relpath(folder, ROOT).replace(os.sep, ".") in packages, folder


def test_metadata_and_version():
    meta = project()["project"]
    assert meta["dynamic"] == ["version"] and project()["tool"]["setuptools"]["dynamic"]["version"]["attr"] == \
        "pga_dyn.__version__"
    assert meta["license"] == "MIT" and not any(c.startswith("License ::") for c in meta["classifiers"])
    for path in meta["license-files"]:  # the licence texts the wheel carries exist
        assert os.path.isfile(os.path.join(ROOT, path)), path
    assert set(meta["optional-dependencies"]) >= {"test", "identify", "plot", "yaml"}
    run = subprocess.run([sys.executable, "-m", "pga_dyn.cli", "--version"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert run.returncode == 0 and run.stdout.strip() == f"pga-dyn {pga_dyn.__version__}"
