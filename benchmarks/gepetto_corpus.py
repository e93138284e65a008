"""Gepetto's example-parallel-robots (Extended URDF + YAML), read directly: per robot folder, whether
pga-dyn loads it (and how far its reference moved when q0's loops do not close), certifies it, and
gives the nullspace dimension of Pinocchio's sampled rank on the reference's branch
(tests/fixture_oracle.py, ``file_nullity``), or the message that refuses it.

Usage (from the repository root; ``pip install -e ".[test]"`` for Pinocchio and PyYAML)::

    PYTHONPATH=. python benchmarks/gepetto_corpus.py PATH/TO/example-parallel-robots [--no-oracle]

The files are not part of the project (the tests use fixtures it writes: tests/test_spins.py).
The oracle is told the passive joints from the YAML (every moving joint not in ``name_mot``) and
the spins that pga-dyn locks (the body and its line: the oracle holds the same spin rate at zero,
so it checks the dimension given that rule, not the detection of the spin); its states are
closed by its own Newton steps on Pinocchio's kinematics.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def oracle_dimension(robot, urdf_path, yaml_path, spins):
    """(dimension, gap) of Pinocchio's sampled rank with the YAML's passive joints and pga-dyn's locks."""
    import yaml
    from fixture_oracle import file_nullity
    from oracle import TreeOracle

    with open(yaml_path) as handle:
        motors = set(yaml.safe_load(handle).get("name_mot") or ())
    model = TreeOracle(robot).model
    free = [
        k
        for joint, name in zip(model.joints[1:], model.names[1:])
        if name not in motors and not name.endswith("_weld")
        for k in range(joint.idx_v, joint.idx_v + joint.nv)
    ]
    with open(urdf_path) as handle:
        text = handle.read()
    dim, gap, _, _ = file_nullity(robot, text, locks=[(spin.body, spin.axis) for spin in spins], free=free, spread=0.3)
    return dim, gap


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="path of a checkout of Gepetto/example-parallel-robots")
    parser.add_argument("--no-oracle", action="store_true", help="skip Pinocchio's sampled rank")
    args = parser.parse_args(argv)
    import drng
    import robots
    import robots.extended
    from pga_dyn.errors import PgaDynError
    from pga_dyn.loops import constraints

    folders = sorted(
        {os.path.dirname(p) for p in glob.glob(os.path.join(args.checkout, "robots", "**", "*.urdf"), recursive=True)}
    )
    for folder in folders:
        name = os.path.relpath(folder, os.path.join(args.checkout, "robots"))
        urdf = sorted(glob.glob(os.path.join(folder, "*.urdf")))[0]
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                robot = robots.load_file(urdf)
                result = drng.nullspace(robot)
        except PgaDynError as exc:
            print(f"{name:28s} refused: {exc}")
            continue
        spins = constraints(robot).spins if robot.loop_joints else ()
        closest = constraints(robot).closest if robot.loop_joints else None
        moved = (
            f"q0 open, reference moved {closest.distance:.3g} ({len(closest.moved)} coordinates, residual "
            f"{closest.residual:.1e}); "
            if closest is not None
            else ""
        )
        line = (
            f"{name:28s} loaded ({robot.n} bodies, {len(robot.loop_joints)} loops, {len(spins)} spins locked); {moved}"
            f"{'proven' if result.proven else 'certified' if result.certified else 'not certified'}: nullspace {result.dim} of "
            f"{10 * robot.n} ({time.perf_counter() - start:.1f} s)"
        )
        yaml_path = robots.extended.yaml_beside(urdf)
        if not args.no_oracle and robot.loop_joints and yaml_path:
            try:
                dim, gap = oracle_dimension(robot, urdf, yaml_path, spins)
                line += f"; Pinocchio {dim} (gap {gap:.1e}): {'equal' if dim == result.dim else 'DIFFERENT'}"
            except (AssertionError, NotImplementedError) as exc:
                line += f"; Pinocchio: no answer ({type(exc).__name__}: {str(exc)[:80]})"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
