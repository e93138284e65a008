"""Wall time of the whole ``pga-dyn identify`` job on a 20,000-sample CSV log (issue 26: at most
3 s, model selection included), with a breakdown, against peers that only read the file.

Run: PYTHONPATH=. python benchmarks/identify_job.py [--repeat 5] [--keep DIR] [--data FILE]
                                                    [--before REVISION] [--profile N]

The log: Puma560 (built in), ``excite`` with viscous and Coulomb friction and armature (seed 0,
20 s at 1 kHz: 20,000 samples), its forces from ``simulate`` (viscous 0.5, Coulomb 0.3, armature
0.01, 1 % noise), positions with 1e-5 rad of encoder noise, written by ``Trajectory.write`` with
the columns t, q_NAME, tau_NAME only (as a robot logs them: the job derives qd and qdd). Made
once into ``--keep DIR`` (default a temporary folder) and reused from there; ``--data FILE``
times a log of your own instead.

Timed, each in a fresh Python process (as a user types the command) after one untimed run (the
numba cache filled), interleaved and repeated ``--repeat`` times (best and median printed; the
machine may be shared, so compare figures of one run):

- ``job``: ``python -m pga_dyn.cli identify puma560 data.csv --friction viscous coulomb
  --armature --quiet`` end to end, with the code of this checkout and, with ``--before
  REVISION``, with that revision's (``git archive`` into a temporary folder);
- ``help``: ``python -m pga_dyn.cli identify --help`` (the command line's fixed cost);
- peers: ``python -c pass``; ``import numpy``; ``import numpy, pandas; pandas.read_csv(data)``;
  ``import numpy; numpy.loadtxt(data, delimiter=",", skiprows=1)``.

Then, per checkout, the breakdown of one job: the modules it imports (``python -X importtime``:
the cumulative import time of the heaviest top-level imports and of a few heavy packages
wherever they were imported) and the wall time of its stages (:data:`STAGE_FUNCTIONS`: timers
around the library functions the command calls, wrapped as their modules load: the argument
parser, the robot, the check of the model file's inertias, the CSV parsing, the derivatives,
the identification model, the regressor wherever it is called, the model selection where there
is one, the estimate, the force delay's search, the hold-out, the diagnostics, the report's
text), each stage's own time
(the stages nested in it taken out) and the imports that happened in it. ``--profile N`` also
prints the N costliest functions of the job by cumulative time (cProfile).
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

#: The stages timed in the child: (module, function or Class.method, stage). Each is wrapped as its
#: module is first loaded, before any other module imports it by name.
STAGE_FUNCTIONS = (
    ("pga_dyn.cli", "build_parser", "argument parser built"),
    ("pga_dyn.cli.common", "robot", "robot loaded"),
    ("identification.physics", "model_violations", "model file check"),
    ("identification.data", "_read_csv", "CSV parsed"),
    ("identification.data", "_table_arrays", "CSV parsed"),
    ("identification.data", "read_trajectory", "rest of the reading (checks)"),
    ("identification.signals", "differentiate", "qd, qdd derived"),
    ("identification.model", "identification_model", "identification model"),
    ("identification.model", "IdentificationModel.regressor", "regressor (wherever called)"),
    ("identification.job", "identify_log", "rest of identify_log"),
    ("identification.selection", "select", "model selection (without the regressor)"),
    ("identification.estimation", "identify", "estimate (without the regressor)"),
    ("identification.estimation", "estimate", "estimate (without the regressor)"),
    ("identification.estimation", "force_delay", "force delay (without the regressor)"),
    ("identification.diagnostics", "hold_out", "hold-out"),
    ("identification.diagnostics", "report", "diagnostics (without the regressor)"),
    ("identification.diagnostics", "report_text", "report text"),
)

#: The child of the stage timers: the import machinery timed (the outermost imports), and the
#: functions of STAGE_FUNCTIONS wrapped by timers that keep each stage's own time (the time of
#: stages nested in it taken out) and the imports that happened in it.
STAGES = r"""
import _frozen_importlib as bootstrap
import contextlib, io, json, sys, time

start = time.perf_counter()
STAGE_FUNCTIONS = json.loads(sys.argv.pop(1))
totals, active, imports = {}, [], [0.0, 0]
find_and_load = bootstrap._find_and_load


def timer(name, function):
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


def timed_import(name, *args):
    imports[1] += 1
    t0 = time.perf_counter()
    try:
        module = find_and_load(name, *args)
    finally:
        imports[1] -= 1
        if not imports[1]:
            imports[0] += time.perf_counter() - t0
    for where, attribute, stage in STAGE_FUNCTIONS:
        if where == name:
            owner, _, function = attribute.rpartition(".")
            holder = getattr(module, owner) if owner else module
            setattr(holder, function, timer(stage, getattr(holder, function)))
    return module


bootstrap._find_and_load = timed_import
import pga_dyn.cli as cli

totals["import of pga_dyn.cli"] = [time.perf_counter() - start, imports[0]]
run = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.main(sys.argv[1:])
end = time.perf_counter()
print(json.dumps({"code": code, "run": end - run, "total": end - start, "stages": totals, "imports": imports[0]}))
"""


def run(argv: list, checkout: str = ROOT) -> subprocess.CompletedProcess:
    """``argv`` run with the code of ``checkout`` (first on the path, and the working folder, which
    ``python -c`` and ``-m`` put first), its output captured (BLAS threads as the user's)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = checkout + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(argv, env=env, cwd=checkout, capture_output=True, text=True)


def export(revision: str, folder: str) -> str:
    """The files of ``revision`` of this repository exported into ``folder`` (``git archive``)."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def make_log(folder: str) -> str:
    """The benchmark's log (module docstring) in ``folder``, made unless it is there already."""
    path = os.path.join(folder, "puma560_20000.csv")
    if os.path.exists(path):
        return path
    import dataclasses

    import numpy as np

    import robots
    from identification import excite, simulate

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


def wall(argv: list, checkout: str) -> float:
    """Wall time (s) of the command ``argv`` in a fresh process; raises on a failure."""
    t0 = time.perf_counter()
    done = run(argv, checkout)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def timings(data: str, repeat: int, checkouts: dict) -> dict:
    """{label: [seconds per repetition]} of the job and ``identify --help`` with each of
    ``checkouts`` ({name: folder}) and of the peers, interleaved, after one run of each
    (numba's cache filled)."""
    py = sys.executable
    job = [data if a == "DATA" else a for a in JOB]
    commands = {}
    for name, checkout in checkouts.items():
        commands[f"job ({name}): pga-dyn " + " ".join(job)] = ([py, "-m", "pga_dyn.cli", *job], checkout)
        commands[f"help ({name}): pga-dyn identify --help"] = (
            [py, "-m", "pga_dyn.cli", "identify", "--help"],
            checkout,
        )
    peers = {
        "python -c pass": "pass",
        "import numpy": "import numpy",
        "import numpy, pandas; pandas.read_csv": f"import numpy, pandas; pandas.read_csv({data!r})",
        "import numpy; numpy.loadtxt": f"import numpy; numpy.loadtxt({data!r}, delimiter=',', skiprows=1)",
    }
    commands.update({f"peer: {label}": ([py, "-c", code], ROOT) for label, code in peers.items()})
    for argv, checkout in commands.values():
        wall(argv, checkout)
    out = {label: [] for label in commands}
    for _ in range(repeat):
        for label, (argv, checkout) in commands.items():
            out[label].append(wall(argv, checkout))
    return out


def import_times(argv: list, checkout: str) -> tuple:
    """(total import time of the top-level imports, {module: cumulative seconds} of the top-level
    imports, {module: cumulative seconds} of :data:`HEAVY` and its submodules wherever they were
    imported, not counting a submodule inside its package's import) of ``argv`` run under
    ``python -X importtime``."""
    done = run([sys.executable, "-X", "importtime", *argv], checkout)
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


def stage_times(job: list, checkout: str) -> dict:
    """{"total": seconds after the interpreter's start, "stages": {stage: [own seconds, of which
    imports]}} of one ``pga-dyn JOB`` in the child :data:`STAGES`."""
    done = run([sys.executable, "-c", STAGES, json.dumps(STAGE_FUNCTIONS), *job], checkout)
    if done.returncode:
        raise SystemExit(f"the timed child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def profile(argv: list, count: int) -> str:
    """The ``count`` costliest functions of ``pga-dyn ARGV`` by cumulative time (cProfile)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "job.prof")
        run([sys.executable, "-m", "cProfile", "-o", out, "-m", "pga_dyn.cli", *argv])
        code = "import pstats, sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(int(sys.argv[2]))"
        return run([sys.executable, "-c", code, out, str(count)]).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each timed command (default 5)")
    parser.add_argument("--keep", help="folder for the log (made there once, then reused)")
    parser.add_argument("--data", help="time this CSV log instead of the benchmark's")
    parser.add_argument("--before", metavar="REVISION", help="time this revision of the code too (git archive)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        checkouts = {"this checkout": ROOT}
        if args.before:
            checkouts[args.before] = export(args.before, tempfile.mkdtemp(dir=scratch))
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        data = os.path.abspath(args.data) if args.data else make_log(folder)
        job = [data if a == "DATA" else a for a in JOB]
        print(f"log: {data} ({os.path.getsize(data) / 1e6:.1f} MB); load average {os.getloadavg()[0]:.2f}")
        print(f"\nwall time, fresh processes, {args.repeat} runs interleaved: best / median")
        for label, seconds in timings(data, args.repeat, checkouts).items():
            print(f"  {min(seconds):6.3f} / {statistics.median(seconds):6.3f} s  {label}")
        for name, checkout in checkouts.items():
            print(f"\n== {name}")
            total, top, heavy = import_times(["-m", "pga_dyn.cli", *job], checkout)
            print(f"imports of the job (python -X importtime): {total:.3f} s in all; heaviest top-level imports:")
            for module, seconds in sorted(top.items(), key=lambda kv: -kv[1])[:6]:
                print(f"  {seconds:6.3f} s  {module}")
            print("  heavy modules, wherever imported: " + ", ".join(f"{k} {v:.3f} s" for k, v in heavy.items()))
            help_total, _, help_heavy = import_times(["-m", "pga_dyn.cli", "identify", "--help"], checkout)
            print(
                f"imports of identify --help: {help_total:.3f} s; heavy modules: "
                + (", ".join(f"{k} {v:.3f} s" for k, v in help_heavy.items()) or "none")
            )
            stages = stage_times(job, checkout)
            print(f"stages of one job (timers; {stages['total']:.3f} s after the interpreter's start):")
            print("  own time  of which imports  stage")
            for stage, (seconds, imported) in stages["stages"].items():
                print(f"  {seconds:6.3f} s  {imported:6.3f} s          {stage}")
            timed = sum(seconds for seconds, _ in stages["stages"].values())
            imported = stages["imports"] - sum(imported for _, imported in stages["stages"].values())
            print(f"  {stages['total'] - timed:6.3f} s  {imported:6.3f} s          the rest")
        if args.profile:
            print(profile(job, args.profile))


if __name__ == "__main__":
    main()
