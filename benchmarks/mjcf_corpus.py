"""The MJCF models shipped with gymnasium and dm_control through pga-dyn (MuJoCo's compiler,
robots.load_mjcf) against Pinocchio's sampled rank on the same files (tests/mjcf_corpus.py).

Run: python benchmarks/mjcf_corpus.py

For each file: loaded (or the message naming what pga-dyn lacks), answered (the nullspace's
status), its dimension, 10 n minus Pinocchio's rank, equal, and the time. Prints a markdown
table and the counts.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

from mjcf_corpus import PACKAGES, corpus, pinocchio_rank, split, tendon_constraints  # noqa: E402

import drng  # noqa: E402
import robots  # noqa: E402
from pga_dyn.errors import PgaDynError  # noqa: E402


def row(path, folder) -> dict:
    start = time.perf_counter()
    out = {"file": os.path.basename(path), "loaded": "yes", "answered": "", "dim": "", "pinocchio": "", "equal": ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # armature
            robot = robots.load_mjcf(path)
    except PgaDynError as error:
        out["loaded"] = "no: " + str(error).split(": ", 1)[1]
        return out | {"seconds": time.perf_counter() - start}
    result = drng.nullspace(robot)
    out |= {"n": robot.n, "answered": result.status, "dim": result.dim}
    try:
        constraints = tendon_constraints(path)  # the tendon equalities, read off MuJoCo's model
        rank = sum(pinocchio_rank(part, robot.gravity, constraints=constraints)[0] for part in split(path, folder))
        out |= {"pinocchio": 10 * robot.n - rank, "equal": "yes" if 10 * robot.n - rank == result.dim else "NO"}
    except Exception as error:  # noqa: BLE001 - Pinocchio's parser: any failure is a row of the table
        out["pinocchio"] = f"fails: {str(error).splitlines()[0]}"
    return out | {"seconds": time.perf_counter() - start}


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for package in PACKAGES:
            paths = corpus(package)
            if not paths:
                print(f"{package}: not installed")
            rows += [{"package": package} | row(path, folder) for path in paths]
    print("| package | file | n | loaded | answered | dim | 10 n - rank (Pinocchio) | equal | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['package']} | {r['file']} | {r.get('n', '')} | {r['loaded']} | {r['answered']} | {r['dim']} | "
            f"{r['pinocchio']} | {r['equal']} | {r['seconds']:.1f} |"
        )
    loaded = [r for r in rows if r["loaded"] == "yes"]
    print(
        f"\n{len(rows)} files: {len(loaded)} loaded, {sum(bool(r['answered']) for r in loaded)} answered, "
        f"{sum(r['equal'] == 'yes' for r in rows)} equal to Pinocchio, "
        f"{sum(r['equal'] == 'NO' for r in rows)} different"
    )
    return 1 if any(r["equal"] == "NO" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
