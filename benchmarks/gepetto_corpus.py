"""Gepetto's example-parallel-robots (Extended URDF + YAML), read directly: per robot folder, whether
pga-dyn loads it (and how far its reference moved when q0's loops do not close), certifies it, and
gives the nullspace dimension of Pinocchio's sampled rank on the reference's branch
(tests/fixture_oracle.py, ``file_nullity``), or the message that refuses it; for a robot with free
spins, both treatments (docs/drng.md, "Free spins and redundant closures"): the spins locked (the
default; for a body not symmetric about its line the bound of what the lock neglects,
``pga_dyn.sampling.spin_lock_bounds``: the largest torque about the line the lock holds over the
largest actuated force) and exact (``pga_dyn.loops.exact_spins``: each spin a coordinate of its own).

Usage (from the repository root; ``pip install -e ".[test]"`` for Pinocchio and PyYAML)::

    PYTHONPATH=. python benchmarks/gepetto_corpus.py PATH/TO/example-parallel-robots [--no-oracle] [--only NAME ...]

(PATH: the checkout, or its ``robots`` folder.) The files are not part of the project (the tests use
fixtures it writes: tests/test_spins.py). The oracle is told the passive joints from the YAML
(every moving joint not in ``name_mot``, and the URDF's mimic joints) and either the spins that pga-dyn locks (the body and its
line: the oracle holds the same spin rate at zero, so it checks the dimension given that rule, not
the detection of the spin) or, for the exact treatment, the coordinates pga-dyn made independent
(the oracle's rows then include theirs); it starts at pga-dyn's reference configuration when q0's
loops do not close (the same reference), with its own cond(J_p) limit there; its states are closed by
its own Newton steps on Pinocchio's kinematics. When the certificate's sampling in the joint
limits finds too few states (a knee and an ankle motor drawn independently), both sample within
BOX rad of the reference's actuated coordinates (``--bounds``), as the oracle does, and the line
says so.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

#: Half-width (rad or m) of the sampling box about the reference when the joint limits' box fails.
BOX = 0.3
#: The oracle's sampling spreads about the reference, tried in turn while it closes too few draws.
ORACLE_SPREADS = (BOX, BOX / 4, BOX / 16)


def oracle_dimension(robot, urdf_path, yaml_path):
    """(dimension, gap, spread) of Pinocchio's sampled rank with the YAML's passive joints and pga-dyn's
    locks, or, for a robot with exact spins, its independent spin coordinates; from pga-dyn's
    reference when the reference moved to close (or came from exact_spins); its draws spread by
    the first of ORACLE_SPREADS that closes enough of them."""
    import yaml
    from fixture_oracle import file_nullity
    from oracle import TreeOracle

    from pga_dyn.loops import constraints, spin_coordinates

    with open(yaml_path) as handle:
        motors = set(yaml.safe_load(handle).get("name_mot") or ()) | set(spin_coordinates(robot))
    motors -= {robot.coordinate_names[c.follower] for c in robot.couplings}  # a mimic joint follows, named or not
    model = TreeOracle(robot).model
    free = [
        k
        for joint, name in zip(model.joints[1:], model.names[1:])
        if name not in motors and not name.endswith("_weld")
        for k in range(joint.idx_v, joint.idx_v + joint.nv)
    ]
    with open(urdf_path) as handle:
        text = handle.read()
    con = constraints(robot)
    start = None
    if con.closest is not None or con.start is not None:
        q = con.E @ con.z_ref + con.e0
        start = {robot.coordinate_names[k]: float(q[k]) for k in range(robot.nq)}
    for spread in ORACLE_SPREADS:  # a reference near the edge of the workspace closes few draws of a wide box
        try:
            dim, gap, _, _ = file_nullity(
                robot,
                text,
                locks=[(spin.body, spin.axis) for spin in con.spins],
                free=free,
                spread=spread,
                start=start,
            )
        except AssertionError:
            if spread == ORACLE_SPREADS[-1]:
                raise
            continue
        return dim, gap, spread


def answer(robot, drng):
    """(result, note): drng.nullspace of the robot; in the box BOX about the reference, with no
    time limit, when the sampling in the joint limits finds too few states in the default budget."""
    from pga_dyn.errors import PgaDynError
    from pga_dyn.loops import constraints

    try:
        return drng.nullspace(robot), ""
    except PgaDynError as exc:
        if "draws" not in str(exc) and "sampling stopped" not in str(exc):
            raise
    qa = constraints(robot).z_ref[: len(robot.actuated)]
    bounds = np.column_stack([qa - BOX, qa + BOX])
    return drng.nullspace(robot, bounds=bounds, budget=None), f" (sampled within {BOX} of the reference)"


def line_of(name, robot, result, note, seconds, urdf, yaml_path, oracle):
    from pga_dyn.loops import constraints

    spins = constraints(robot).spins if robot.loop_joints else ()
    closest = constraints(robot).closest if robot.loop_joints else None
    moved = (
        f"q0 open, reference moved {closest.distance:.3g} ({len(closest.moved)} coordinates, residual "
        f"{closest.residual:.1e}); "
        if closest is not None
        else ""
    )
    bounds = result.certificate.get("spin_locks", [])
    worst = max((b["ratio"] for b in bounds if b["ratio"] is not None), default=None)
    line = (
        f"{name:28s} loaded ({robot.n} bodies, {len(robot.loop_joints)} loops, {len(spins)} spins locked"
        f"{f', {sum(not s.symmetric for s in spins)} approximately: bound {worst:.2g}' if worst is not None else ''}"
        f"{', spins exact: ' + ', '.join(result.certificate['spin_coordinates']) if 'spin_coordinates' in result.certificate else ''}"
        f"); {moved}"
        f"{'proven' if result.proven else 'certified' if result.certified else 'not certified'}: nullspace {result.dim} of "
        f"{10 * robot.n}{note} ({seconds:.1f} s)"
    )
    if oracle and robot.loop_joints and yaml_path:
        try:
            dim, gap, spread = oracle_dimension(robot, urdf, yaml_path)
            within = f", spread {spread:g}" if spread != BOX else ""
            line += f"; Pinocchio {dim} (gap {gap:.1e}{within}): {'equal' if dim == result.dim else 'DIFFERENT'}"
        except (AssertionError, NotImplementedError) as exc:
            line += f"; Pinocchio: no answer ({type(exc).__name__}: {str(exc)[:80]})"
    return line


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="path of a checkout of Gepetto/example-parallel-robots (or its robots folder)")
    parser.add_argument("--no-oracle", action="store_true", help="skip Pinocchio's sampled rank")
    parser.add_argument("--only", nargs="+", default=None, help="the folders to run (default: all)")
    args = parser.parse_args(argv)
    import drng
    import robots
    import robots.extended
    from pga_dyn.errors import PgaDynError
    from pga_dyn.loops import constraints, exact_spins

    top = os.path.join(args.checkout, "robots")
    top = top if os.path.isdir(top) else args.checkout
    folders = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(top, "**", "*.urdf"), recursive=True)})
    for folder in folders:
        name = os.path.relpath(folder, top)
        if args.only and name not in args.only:
            continue
        urdf = sorted(glob.glob(os.path.join(folder, "*.urdf")))[0]
        yaml_path = robots.extended.yaml_beside(urdf)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                robot = robots.load_file(urdf)
                result, note = answer(robot, drng)
        except PgaDynError as exc:
            print(f"{name:28s} refused: {exc}", flush=True)
            continue
        print(line_of(name, robot, result, note, time.perf_counter() - start, urdf, yaml_path, not args.no_oracle))
        if robot.loop_joints and constraints(robot).spins:
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exact = exact_spins(robot)
                    result, note = answer(exact, drng)
            except PgaDynError as exc:
                print(f"{name + ' --spins exact':28s} refused: {exc}", flush=True)
                continue
            seconds = time.perf_counter() - start
            print(line_of(name + " --spins exact", exact, result, note, seconds, urdf, yaml_path, not args.no_oracle))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
