"""Wall time of the whole ``pga-dyn identify`` job on a 20,000-sample CSV log (issue 26: at most
3 s, model selection included), with a breakdown, against peers that only read the file.

Run: PYTHONPATH=. python benchmarks/identify_job.py [--repeat 5] [--keep DIR] [--data FILE]

The log: Puma560 (built in), ``excite`` with viscous and Coulomb friction and armature (seed 0,
20 s at 1 kHz: 20,000 samples), its forces from ``simulate`` (viscous 0.5, Coulomb 0.3, armature
0.01, 1 % noise), positions with 1e-5 rad of encoder noise, written by ``Trajectory.write`` with
the columns t, q_NAME, tau_NAME only (as a robot logs them: the job derives qd and qdd). Made
once into ``--keep DIR`` (default a temporary folder) and reused from there; ``--data FILE``
times a log of your own instead.

Timed, each in a fresh Python process (as a user types the command), interleaved and repeated
``--repeat`` times (best and median printed; the machine may be shared, so compare figures of
one run):

- ``job``: ``python -m pga_dyn.cli identify puma560 data.csv --friction viscous coulomb
  --armature --quiet`` end to end;
- ``help``: ``python -m pga_dyn.cli identify --help`` (the command line's fixed cost);
- peers: ``python -c pass``; ``import numpy``; ``import numpy, pandas; pandas.read_csv(data)``;
  ``import numpy; numpy.loadtxt(data, delimiter=",", skiprows=1)``.

Then the breakdown of one job: the modules it imports (``python -X importtime``: the
cumulative import time of the heaviest top-level imports and of a few heavy modules wherever
they were imported), and the wall time of its stages measured by timers around the library
functions the command calls (reading the file, deriving qd and qdd, checking the model file's
inertias, the identification model, the estimate with its regressor, the held-out diagnostics
and report, the report's text), each split into its own work and the imports that happened
during it. ``--profile N`` also prints the N costliest functions of the job by cumulative time
(cProfile).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The job's command line after ``python -m pga_dyn.cli``; DATA stands for the log.
JOB = ["identify", "puma560", "DATA", "--friction", "viscous", "coulomb", "--armature", "--quiet"]
#: Modules whose cumulative import time is printed wherever in the job they were imported.
HEAVY = (
    "numba",
    "scipy.linalg",
    "scipy.signal",
    "scipy.interpolate",
    "scipy.stats",
    "scipy.optimize",
    "pandas",
    "networkx",
    "kingdon",
)

#: The child of the stage timers: wraps the library functions the command calls (looked up at
#: call time, so that the imports they trigger are timed inside them) and the import machinery.
STAGES = r"""
import _frozen_importlib as bootstrap
import importlib, io, json, sys, time, contextlib

start = time.perf_counter()
totals, active, imports = {}, [], [0.0]
find_and_load = bootstrap._find_and_load


def timed_import(*args):
    if imports[1:]:
        return find_and_load(*args)
    imports.append(time.perf_counter())
    try:
        return find_and_load(*args)
    finally:
        imports[0] += time.perf_counter() - imports.pop()


bootstrap._find_and_load = timed_import


def timer(name, function):
    # Each stage's own time: nested stages' wall and import times are taken out of their parent's.
    def wrapped(*args, **kwargs):
        frame = [time.perf_counter(), imports[0], 0.0, 0.0]
        active.append(frame)
        try:
            return function(*args, **kwargs)
        finally:
            active.pop()
            wall, imp = time.perf_counter() - frame[0], imports[0] - frame[1]
            total = totals.setdefault(name, [0.0, 0.0])
            total[0] += wall - frame[2]
            total[1] += imp - frame[3]
            if active:
                active[-1][2] += wall
                active[-1][3] += imp
    return wrapped


def lazy(module, name, stage):
    # A stand-in for ``module.name`` that imports the module inside the stage's timer.
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return timer(stage, call)


import pga_dyn.cli as cli
import pga_dyn.cli.common as common
import drng.identification as ident
totals["import of pga_dyn.cli"] = [time.perf_counter() - start, imports[0]]

data_stages = {"_read_csv": "CSV parsed", "_table_arrays": "CSV parsed", "differentiate": "qd, qdd derived"}
real_import = importlib.import_module


def patched_module(name, package=None):
    module = real_import(name, package)
    if module.__name__ == "drng.identification.data" and not getattr(module, "_timed", False):
        for attr, stage in data_stages.items():
            setattr(module, attr, timer(stage, getattr(module, attr)))
        module._timed = True
    if module.__name__ == "drng.identification.model" and not getattr(module, "_timed", False):
        cls = module.IdentificationModel
        cls.regressor = timer("regressor (in the estimate and the diagnostics)", cls.regressor)
        module._timed = True
    return module


importlib.import_module = patched_module
common.warn_model = timer("model file check", common.warn_model)
for name, module, stage in (
    ("read_trajectory", "drng.identification.data", "rest of the reading (checks)"),
    ("identification_model", "drng.identification.model", "identification model"),
    ("identify", "drng.identification.estimation", "estimate (without the regressor)"),
    ("report", "drng.identification.diagnostics", "diagnostics (without the regressor)"),
    ("report_text", "drng.identification.diagnostics", "report text"),
):
    setattr(ident, name, lazy(module, name, stage))

run = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.main(sys.argv[1:])
end = time.perf_counter()
print(json.dumps({"code": code, "run": end - run, "total": end - start, "stages": totals, "imports": imports[0]}))
"""


def environment() -> dict:
    """The children's environment: this checkout first on the path (BLAS threads as the user's)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def make_log(folder: str) -> str:
    """The benchmark's log (module docstring) in ``folder``, made unless it is there already."""
    path = os.path.join(folder, "puma560_20000.csv")
    if os.path.exists(path):
        return path
    import dataclasses

    import numpy as np

    import robots
    from drng.identification import excite, simulate

    robot = robots.load("puma560")
    t0 = time.perf_counter()
    ex = excite(robot, duration=20.0, rate=1000.0, friction=("viscous", "coulomb"), armature=True, seed=0)
    measured, _ = simulate(
        robot, ex.trajectory, extras={"viscous": 0.5, "coulomb": 0.3, "armature": 0.01}, noise=0.01, seed=0
    )
    q = measured.q + 1e-5 * np.random.default_rng(1).standard_normal(measured.q.shape)
    log = dataclasses.replace(measured, q=q, qd=None, qdd=None)
    log.write(path)
    print(f"made {path}: {len(log)} samples ({time.perf_counter() - t0:.1f} s)")
    return path


def wall(argv: list, env: dict) -> float:
    """Wall time (s) of the command ``argv`` in a fresh process; raises on a failure."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def timings(data: str, repeat: int, env: dict) -> dict:
    """{label: [seconds per repetition]} of the job and its peers, interleaved."""
    py = sys.executable
    job = [data if a == "DATA" else a for a in JOB]
    commands = {
        "job: pga-dyn " + " ".join(job): [py, "-m", "pga_dyn.cli", *job],
        "help: pga-dyn identify --help": [py, "-m", "pga_dyn.cli", "identify", "--help"],
        "peer: python -c pass": [py, "-c", "pass"],
        "peer: import numpy": [py, "-c", "import numpy"],
        "peer: import numpy, pandas; pandas.read_csv": [
            py,
            "-c",
            f"import numpy, pandas; pandas.read_csv({data!r})",
        ],
        "peer: import numpy; numpy.loadtxt": [
            py,
            "-c",
            f"import numpy; numpy.loadtxt({data!r}, delimiter=',', skiprows=1)",
        ],
    }
    out = {label: [] for label in commands}
    for _ in range(repeat):
        for label, argv in commands.items():
            out[label].append(wall(argv, env))
    return out


def import_times(argv: list, env: dict) -> tuple:
    """(total import time of the top-level imports, {module: cumulative seconds} of the top-level
    imports, {module: cumulative seconds} of :data:`HEAVY` and its submodules wherever they were
    imported, not counting a submodule inside its package's import) of ``argv`` run under
    ``python -X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True)
    entries = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            entries.append(((len(name) - len(name.lstrip())) // 2, name.strip(), int(cumulative) * 1e-6))
    top, heavy, parents = {}, {}, []
    for depth, name, seconds in reversed(entries):  # importtime prints a module after what it imports
        del parents[depth:]
        parents.append(name)
        if depth == 0:
            top[name] = top.get(name, 0.0) + seconds
        for package in HEAVY:
            inside = [p for p in parents if p == package or p.startswith(package + ".")]
            if inside == [name]:
                heavy[package] = heavy.get(package, 0.0) + seconds
    return sum(top.values()), top, heavy


def child(script: str, argv: list, env: dict) -> dict:
    """The JSON line a child script prints after running ``pga-dyn ARGV``."""
    done = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the timed child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def profile(argv: list, env: dict, count: int) -> str:
    """The ``count`` costliest functions of ``pga-dyn ARGV`` by cumulative time (cProfile)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "job.prof")
        subprocess.run(
            [sys.executable, "-m", "cProfile", "-o", out, "-m", "pga_dyn.cli", *argv],
            env=env,
            capture_output=True,
        )
        code = "import pstats, sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(int(sys.argv[2]))"
        return subprocess.run(
            [sys.executable, "-c", code, out, str(count)], env=env, capture_output=True, text=True
        ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each timed command (default 5)")
    parser.add_argument("--keep", help="folder for the log (made there once, then reused)")
    parser.add_argument("--data", help="time this CSV log instead of the benchmark's")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    args = parser.parse_args()
    env = environment()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        data = args.data or make_log(folder)
        job = [data if a == "DATA" else a for a in JOB]
        print(f"log: {data} ({os.path.getsize(data) / 1e6:.1f} MB); load average {os.getloadavg()[0]:.2f}")
        print(f"\nwall time, fresh processes, {args.repeat} runs interleaved: best / median")
        for label, seconds in timings(data, args.repeat, env).items():
            print(f"  {min(seconds):6.3f} / {statistics.median(seconds):6.3f} s  {label}")

        total, top, heavy = import_times(["-m", "pga_dyn.cli", *job], env)
        print(f"\nimports of the job (python -X importtime): {total:.3f} s in all; heaviest top-level imports:")
        for name, seconds in sorted(top.items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {seconds:6.3f} s  {name}")
        print(
            "  heavy modules, wherever imported: " + (", ".join(f"{k} {v:.3f} s" for k, v in heavy.items()) or "none")
        )
        help_total, _, help_heavy = import_times(["-m", "pga_dyn.cli", "identify", "--help"], env)
        print(
            f"imports of identify --help: {help_total:.3f} s; heavy: "
            + (", ".join(f"{k} {v:.3f} s" for k, v in help_heavy.items()) or "none")
        )

        stages = child(STAGES, job, env)
        print(f"\nstages of one job (timers; wall {stages['total']:.3f} s after the interpreter's start):")
        print("  wall     of which imports  stage")
        for name, (seconds, imported) in stages["stages"].items():
            print(f"  {seconds:6.3f} s  {imported:6.3f} s          {name}")
        timed = sum(s for s, _ in stages["stages"].values())
        print(
            f"  {stages['total'] - timed:6.3f} s                   the rest (argument parsing, combine, hold-out, ...)"
        )
        if args.profile:
            print(profile(job, env, args.profile))


if __name__ == "__main__":
    main()
