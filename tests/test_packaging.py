"""The wheel's contents and metadata, read from pyproject.toml (building a wheel needs the
network; `pip wheel . -w dist` and `python -m zipfile -l dist/*.whl` show the same)."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys

import pytest

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
    globs = config["package-data"]["robots.data"]
    data = os.path.join(ROOT, "robots", "data")
    needed = [os.path.relpath(robots.data_path(name), data) for name in robots.available()]
    for relative in needed + ["go2.LICENSE"]:
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative
    packages = set(config["packages"])
    for top in ("pga_dyn", "drng", "robots"):  # not build/ (pip install . writes one), tests/, benchmarks/
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in names or folder == data:  # robots/data: a package of data (setuptools warns else)
                assert os.path.relpath(folder, ROOT).replace(os.sep, ".") in packages, folder
    assert not [name for name in os.listdir(data) if name.endswith(".py")]  # nothing to import in it


def test_metadata_and_version():
    meta = project()["project"]
    assert (
        meta["dynamic"] == ["version"]
        and project()["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "pga_dyn.__version__"
    )
    assert meta["license"] == "MIT" and not any(c.startswith("License ::") for c in meta["classifiers"])
    for path in meta["license-files"]:  # the licence texts the wheel carries exist
        assert os.path.isfile(os.path.join(ROOT, path)), path
    assert set(meta["optional-dependencies"]) >= {"test", "identify", "plot", "yaml"}
    run = subprocess.run(
        [sys.executable, "-m", "pga_dyn.cli", "--version"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert run.returncode == 0 and run.stdout.strip() == f"pga-dyn {pga_dyn.__version__}"


CHECK_NO_COMPILE = r"""
import contextlib, io, sys
import numpy as np
from numba.core import event
compiled = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__ if "dispatcher" in ev.data else "?")


event.register("numba:compile", Listener())
import drng, robots, pga_dyn
from pga_dyn.cli import main
from pga_dyn.sampling import sample_states
for argv in (["analyze", "puma560", "--certify"], ["analyze", "2rru_1rrs"], ["analyze", "2prs_1psr"],
             ["analyze", "go2"], ["base", "puma560"]):
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv + ["--quiet"]) == 0, argv
robot = robots.load("go2")
states = sample_states(robot, 5, seed=1)
pga_dyn.regressor(robot, states.q, states.qd, states.qdd)
pga_dyn.regressor(robot, states.q[0], states.qd[0], states.qdd[0])
drng.rpna(robots.load("puma560"))
drng.numerical_nullspace(robots.load("2prs_1psr"), samples=30)
print(compiled)
"""


@pytest.mark.slow  # compiles every kernel into a new build (24-58 s on the project's machine)
def test_build_ships_compiled_kernels_that_leave_nothing_to_compile(tmp_path):
    """setup.py's build step (what `pip install .` runs) compiles every kernel into the built
    packages' own __pycache__ (a NUMBA_CACHE_DIR of the builder's is not used; no .pyc files, the
    wheel is for any Python 3), and a new process
    on those packages then runs the commands on a tree, both PKMs, a floating base, batches and
    single states without one numba compile event."""
    build = tmp_path / "lib"
    # pip's isolated build environment reaches its packages through a sitecustomize on PYTHONPATH
    # (pip's legacy isolation): the compile step must keep it. This one records each process it starts.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"open({str(tmp_path / 'started')!r}, 'a').write('x')\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "elsewhere"), PYTHONPATH=str(site))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the build step keeps .pyc files out of the wheel itself
    run = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(build)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert not list(build.rglob("*.pyc"))
    assert (tmp_path / "started").read_text() == "xx"  # setup.py, then the compile step with the same path
    assert not (tmp_path / "elsewhere").exists()
    for package, kernel in (
        ("pga_dyn", "kinematics.forward"),
        ("drng", "principles.drng_kernel"),
        ("pga_dyn/loops", "newton.newton_kernel"),
        ("pga_dyn/loops", "closure.motion_kernel"),
    ):
        assert any(
            name.startswith(kernel + "-") and name.endswith(".nbi")
            for name in os.listdir(build / package / "__pycache__")
        ), kernel
    # One signature per compiled function (numba numbers a function's signatures .1.nbc, .2.nbc, ...):
    # a second one (a numba literal argument, a read-only array where a writable one was seen) doubles
    # the compile time.
    for package in ("pga_dyn", "drng"):
        assert not [path for path in (build / package).rglob("*.2.nbc")]
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    check = subprocess.run(
        [sys.executable, "-c", CHECK_NO_COMPILE],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=str(build)),
        cwd=str(tmp_path),
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip().splitlines()[-1] == "[]", check.stdout
