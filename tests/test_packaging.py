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
    for top in (
        "pga_dyn",
        "drng",
        "robots",
        "identification",
    ):  # not build/ (pip install . writes one), tests/, benchmarks/
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


def numba_cache_files(folder):
    """numba's cache files under ``folder``: {relative path: content}."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in folder.rglob("__pycache__/*")
        if path.suffix in (".nbi", ".nbc")
    }


@pytest.mark.slow  # compiles every kernel into a new build (24-58 s on the project's machine)
def test_build_ships_compiled_kernels_that_leave_nothing_to_compile(tmp_path):
    """setup.py's build step (what `pip install .` runs) compiles every kernel into the built
    packages' own __pycache__ (a NUMBA_CACHE_DIR of the builder's is not used; no .pyc files, the
    wheel is for any Python 3), and a new process
    on those packages then runs the commands on a tree, both PKMs, a floating base, batches and
    single states without one numba compile event. A second build of the same files (into another
    folder, as each `pip install` builds anew) copies the kernels from the build cache the first one
    filled (setup.py), compiles nothing and ships the same files."""
    build = tmp_path / "lib"
    # pip's isolated build environment reaches its packages through a sitecustomize on PYTHONPATH
    # (pip's legacy isolation): the compile step must keep it. This one records each process it starts.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"open({str(tmp_path / 'started')!r}, 'a').write('x')\n")
    env = dict(
        os.environ, NUMBA_CACHE_DIR=str(tmp_path / "elsewhere"), PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path)
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the build step keeps .pyc files out of the wheel itself
    env.pop("PGA_DYN_NO_BUILD_CACHE", None)

    def build_into(folder):
        run = subprocess.run(
            [sys.executable, "setup.py", "build_py", "--build-lib", str(folder)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    assert "cache files stored in the build cache" in build_into(build)
    assert not list(build.rglob("*.pyc"))
    assert (tmp_path / "started").read_text() == "xx"  # setup.py, then the compile step with the same path
    assert not (tmp_path / "elsewhere").exists()
    for package, kernel in (
        ("pga_dyn", "kinematics.forward"),
        ("drng", "principles.drng_kernel"),
        ("pga_dyn/loops", "newton.newton_kernel"),
        ("pga_dyn/loops", "parts.record_kernel"),
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
    # A second build of the same files takes the kernels from the build cache: it compiles nothing
    # and ships the same files, which a new process then loads without compiling.
    again = tmp_path / "again"
    assert "(0 compiled; from the build cache" in build_into(again)
    assert (tmp_path / "started").read_text() == "xxxx"
    assert numba_cache_files(again) == numba_cache_files(build)
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    check = subprocess.run(
        [sys.executable, "-c", CHECK_NO_COMPILE],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=str(again)),
        cwd=str(tmp_path),
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip().splitlines()[-1] == "[]", check.stdout


def fake_packages(root, source="x = 1\n"):
    """Packages with one source each and numba cache files beside pga_dyn's."""
    for package in ("pga_dyn", "drng", "robots"):
        (root / package / "__pycache__").mkdir(parents=True)
        (root / package / "__init__.py").write_text(source if package == "pga_dyn" else "")
    (root / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.nbi").write_bytes(b"index")
    (root / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.1.nbc").write_bytes(b"code")
    (root / "pga_dyn" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"bytecode")
    return root


def test_build_cache_key_covers_every_source_and_numba(tmp_path, monkeypatch):
    import numba

    from pga_dyn.kernel_cache import build_cache_key

    one = fake_packages(tmp_path / "one")
    key = build_cache_key(str(one))
    assert build_cache_key(str(fake_packages(tmp_path / "two"))) == key  # the contents, not the folder
    (one / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.2.nbc").write_bytes(b"more code")
    assert build_cache_key(str(one)) == key  # numba's own files are not part of it
    for package in ("pga_dyn", "drng", "robots"):  # any source of the three packages
        changed = fake_packages(tmp_path / f"changed-{package}")
        (changed / package / "kernels.py").write_text("y = 2\n")
        assert build_cache_key(str(changed)) != key, package
    assert build_cache_key(str(fake_packages(tmp_path / "edited", source="x = 2\n"))) != key
    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".other")
    assert build_cache_key(str(one)) != key


def test_build_cache_restores_what_it_stored_and_never_a_partial_or_corrupt_entry(tmp_path):
    from pga_dyn.kernel_cache import MANIFEST, restore_kernels, store_kernels

    built = fake_packages(tmp_path / "built")
    entry = tmp_path / "cache" / "key"
    assert not restore_kernels(str(built), str(entry))  # no entry yet
    assert store_kernels(str(built), str(entry)) == 2  # the .nbi and .nbc files, not the .pyc one
    assert sorted(p.name for p in entry.iterdir()) == ["files", MANIFEST]
    fresh = fake_packages(tmp_path / "fresh")
    for path in (fresh / "pga_dyn" / "__pycache__").iterdir():
        path.unlink()
    assert restore_kernels(str(fresh), str(entry))
    assert sorted(p.name for p in (fresh / "pga_dyn" / "__pycache__").iterdir()) == [
        "__init__.f-1.py311.1.nbc",
        "__init__.f-1.py311.nbi",
    ]
    assert (fresh / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.1.nbc").read_bytes() == b"code"

    def restores_into_empty(name):
        target = fake_packages(tmp_path / name)
        for path in (target / "pga_dyn" / "__pycache__").iterdir():
            path.unlink()
        restored = restore_kernels(str(target), str(entry))
        assert restored or not list((target / "pga_dyn" / "__pycache__").iterdir())  # all or nothing
        return restored

    data = entry / "files" / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.1.nbc"
    data.write_bytes(b"cod3")  # corrupt: same size, other content
    assert not restores_into_empty("corrupt")
    data.unlink()  # partial: a listed file is missing
    assert not restores_into_empty("missing")
    store_kernels(str(built), str(entry))
    assert restores_into_empty("stored-again")
    manifest = (entry / MANIFEST).read_text()
    (entry / MANIFEST).write_text(manifest[: len(manifest) // 2])  # a torn manifest
    assert not restores_into_empty("torn")
    (entry / MANIFEST).unlink()  # no manifest: the entry was never completed
    assert not restores_into_empty("unfinished")
    store_kernels(str(built), str(entry))
    (entry / MANIFEST).write_text(manifest.replace("pga_dyn/__pycache__/__init__.f-1.py311.nbi", "pga_dyn/__init__.py"))
    assert not restores_into_empty("outside")  # an entry never writes a source


def test_a_checkout_without_kernels_gets_those_its_install_built(tmp_path, monkeypatch):
    """reuse_in_checkout copies the build cache's entry of the checkout's own key into a checkout
    whose numba cache is empty; never into one that has cache files, nor for another key, nor
    when NUMBA_CACHE_DIR puts numba's cache elsewhere."""
    from pga_dyn.kernel_cache import build_cache_folder, build_cache_key, reuse_in_checkout, store_kernels

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    built = fake_packages(tmp_path / "built")
    entry = os.path.join(build_cache_folder(), build_cache_key(str(built)))
    store_kernels(str(built), entry)

    def checkout(name, source="x = 1\n"):
        root = fake_packages(tmp_path / name, source)
        for path in (root / "pga_dyn" / "__pycache__").glob("*.nb?"):
            path.unlink()
        return root

    fresh = checkout("fresh")
    assert reuse_in_checkout(str(fresh)) == entry
    assert (fresh / "pga_dyn" / "__pycache__" / "__init__.f-1.py311.1.nbc").read_bytes() == b"code"
    assert reuse_in_checkout(str(fresh)) is None  # it has kernels now
    other = checkout("other", source="x = 2\n")
    assert reuse_in_checkout(str(other)) is None and not list((other / "pga_dyn" / "__pycache__").glob("*.nb?"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert reuse_in_checkout(str(checkout("elsewhere"))) is None


def test_build_cache_keeps_the_entries_used_last(tmp_path):
    from pga_dyn.kernel_cache import MANIFEST, prune_entries, restore_kernels, store_kernels

    built = fake_packages(tmp_path / "built")
    folder = tmp_path / "cache"
    for k in range(10):
        store_kernels(str(built), str(folder / f"entry{k}"))
        os.utime(folder / f"entry{k}" / MANIFEST, (1000 + k, 1000 + k))
    assert restore_kernels(str(built), str(folder / "entry0"))  # used now: the most recent
    (folder / "stopped").mkdir()  # a build stopped while storing, long ago
    os.utime(folder / "stopped", (1000, 1000))
    (folder / "storing").mkdir()  # a build storing now
    assert sorted(prune_entries(str(folder), keep=8)) == ["entry1", "entry2", "stopped"]
    assert sorted(p.name for p in folder.iterdir()) == ["entry0"] + [f"entry{k}" for k in range(3, 10)] + ["storing"]


def test_compile_reuse_refuses_a_numba_cache_elsewhere(monkeypatch, capsys):
    """--reuse copies numba's files beside the sources: with NUMBA_CACHE_DIR set it would store
    nothing numba wrote, so it says so before compiling."""
    from pga_dyn.cli import main

    monkeypatch.setenv("NUMBA_CACHE_DIR", "/nonexistent/numba-cache")
    assert main(["compile", "--reuse", "--quiet"]) == 2
    assert "unset NUMBA_CACHE_DIR" in capsys.readouterr().err
