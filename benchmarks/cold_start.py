"""Wall time of a first `pga-dyn analyze` from an empty numba cache, and warm.

Run: python benchmarks/cold_start.py [--robots puma560 2rru_1rrs] [--verbose]
     python benchmarks/cold_start.py --before REVISION [--repeat R] [--robots ...] [--filled]
     python benchmarks/cold_start.py --install [--robots puma560 2rru_1rrs]

``--before REVISION`` times the first call from an empty cache of this checkout and of that
revision (``git archive`` into a temporary folder) R times, the two trees alternating for each
command so that the load of a shared machine weighs on both alike, and prints the best and the
median wall time of each with its compile events. With ``--filled`` each tree's cache is first
filled by ``pga-dyn compile`` (what ``pip install .`` ships in the wheel), and the commands are
timed on it: a warm cache, every kernel loaded instead of compiled or run as Python.

``--install`` measures what a new user gets: a new virtual environment, ``pip install .`` of
this checkout (timed: it builds the wheel, whose build step compiles the kernels into it,
setup.py), then each command in a fresh process with that environment's ``pga-dyn``, first
and again. It needs pip's index (or its cache) for the dependencies.

Each command runs in a fresh Python process (as a user types it). "cold" starts with an empty
numba cache (NUMBA_CACHE_DIR set to a new temporary directory, so every kernel the command
needs is compiled, as after a fresh ``pip install``); "warm" is the same command run again
with that cache; "after" runs a later robot on the cache the first one filled (a first PKM
after a first tree). For each run the child process also reports what numba compiled:
the number of compile events, their total time (``numba.core.event``'s "numba:compile"
events, nested ones counted once), the specializations (signatures) of the project's
compiled functions and the CPU seconds of the kernels a first call ran as Python source
(``pga_dyn.interpreted.python_seconds``; none on code before it). No figure here is a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import io, json, sys, time
start = time.perf_counter()
from numba.core import event
events = []


class Listener(event.Listener):
    depth = 0

    def on_start(self, ev):
        if self.depth == 0:
            self.t = time.perf_counter()
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        events.append(ev.data["dispatcher"].py_func.__qualname__ if "dispatcher" in ev.data else "?")
        if self.depth == 0:
            events.append(time.perf_counter() - self.t)


listener = Listener()
event.register("numba:compile", listener)
from pga_dyn.cli import main
import contextlib
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
total = time.perf_counter() - start
from numba.core.registry import CPUDispatcher
specs = {}
for name, module in list(sys.modules.items()):
    if not name.split(".")[0] in ("pga_dyn", "drng", "robots"):
        continue
    for attr, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value.__module__ == name and value.signatures:
            specs[f"{name}.{attr}"] = len(value.signatures)
try:
    from pga_dyn.interpreted import python_seconds
    python = python_seconds()
except ImportError:  # code before it
    python = {}
print(json.dumps({"code": code, "seconds": total, "compiles": sum(isinstance(e, str) for e in events),
                  "compile_seconds": sum(e for e in events if isinstance(e, float)), "specializations": specs,
                  "python": python}))
"""


def run(args, cache, root=ROOT):
    """Wall time and the child's report of ``pga-dyn ARGS`` on the code under ``root``, numba's cache in ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, cwd=root)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{args} failed:\n{proc.stderr}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return wall, report


def line(label, args, wall, report):
    specs = report["specializations"]
    print(
        f"{label:<6} {' '.join(args):<28} {wall:>7.2f} s {report['compile_seconds']:>9.2f} s "
        f"{report['compiles']:>8d} {len(specs):>9d} {sum(specs.values()):>8d}"
    )
    return specs


def fill(cache, root):
    """``pga-dyn compile`` of the code under ``root`` into numba's cache ``cache``; its wall time."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pga_dyn.cli", "compile", "--quiet"], env=env, cwd=root, check=True)
    return time.perf_counter() - start


def against(revision, robots, repeat, filled=False):
    """The first call from an empty cache (or, ``filled``, from a cache ``pga-dyn compile`` filled),
    this checkout and ``revision`` alternating, ``repeat`` times."""
    import statistics

    with (
        tempfile.TemporaryDirectory(prefix="pga-dyn-before-") as before,
        tempfile.TemporaryDirectory(prefix="pga-dyn-filled-") as caches,
    ):
        archive = subprocess.run(["git", "-C", ROOT, "archive", revision], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        trees = {"this checkout": ROOT, revision: before}
        full = {label: os.path.join(caches, str(k)) for k, label in enumerate(trees)}
        if filled:
            for label, root in trees.items():
                print(f"pga-dyn compile ({label}): {fill(full[label], root):.1f} s")
        print(f"{'command (pga-dyn ...)':<28} {'code':<14} {'best':>8} {'median':>8} {'compiling':>10} {'compiles':>8}")
        for robot in robots:
            command = ["analyze", robot]
            walls = {label: [] for label in trees}
            reports = {}
            for _ in range(repeat):
                for label, root in trees.items():
                    if filled:
                        wall, reports[label] = run(command, full[label], root)
                    else:
                        with tempfile.TemporaryDirectory(prefix="pga-dyn-cache-") as cache:
                            wall, reports[label] = run(command, cache, root)
                    walls[label].append(wall)
            for label in trees:
                print(
                    f"{' '.join(command):<28} {label:<14} {min(walls[label]):>6.2f} s {statistics.median(walls[label]):>6.2f} s "
                    f"{reports[label]['compile_seconds']:>8.2f} s {reports[label]['compiles']:>8d}"
                )


def installed(robots):
    """A fresh virtual environment with ``pip install .``; then each command first and again."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_") and key != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="pga-dyn-venv-") as folder:
        subprocess.run([sys.executable, "-m", "venv", folder], check=True)
        start = time.perf_counter()
        subprocess.run(
            [os.path.join(folder, "bin", "python"), "-m", "pip", "install", "--quiet", ROOT],
            check=True,
            env=env,
            capture_output=True,
        )
        print(f"pip install . (build with the compiled kernels, and install): {time.perf_counter() - start:.1f} s")
        for robot in robots:
            for label in ("first", "again"):
                start = time.perf_counter()
                subprocess.run(
                    [os.path.join(folder, "bin", "pga-dyn"), "analyze", robot],
                    check=True,
                    env=env,
                    capture_output=True,
                    cwd=folder,
                )
                print(f"{label:<6} pga-dyn analyze {robot:<12} {time.perf_counter() - start:6.2f} s wall")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["puma560", "2rru_1rrs"])
    parser.add_argument("--verbose", action="store_true", help="print the specializations per function")
    parser.add_argument(
        "--install",
        action="store_true",
        help="a new virtual environment with `pip install .`, then the first and a second call",
    )
    parser.add_argument("--before", metavar="REVISION", help="time this revision's first calls too (git archive)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each first call with --before (default 3)")
    parser.add_argument("--filled", action="store_true", help="with --before: on a cache pga-dyn compile filled")
    args = parser.parse_args()
    if args.before:
        against(args.before, args.robots, args.repeat, args.filled)
        return
    if args.install:
        installed(args.robots)
        return
    print(
        f"{'run':<6} {'command (pga-dyn ...)':<28} {'wall':>9} {'compiling':>11} {'compiles':>8} "
        f"{'functions':>9} {'signatures':>8}"
    )
    shared = tempfile.mkdtemp(prefix="pga-dyn-cache-")  # the first robot's cache, then the others'
    for k, robot in enumerate(args.robots):
        command = ["analyze", robot]
        cold_cache = shared if k == 0 else tempfile.mkdtemp(prefix="pga-dyn-cache-")
        wall, report = run(command, cold_cache)
        specs = line("cold", command, wall, report)
        if args.verbose:
            for name, count in sorted(specs.items()):
                print(f"         {name}: {count}")
            for name, seconds in sorted(report["python"].items()):
                print(f"         {name}: its Python source, {seconds:.3f} s CPU")
        line("warm", command, *run(command, cold_cache))
        if k > 0:
            line("after", command, *run(command, shared))


if __name__ == "__main__":
    main()
