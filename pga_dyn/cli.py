"""The ``pga-dyn`` command line.

    pga-dyn info ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ]

``info`` prints what pga-dyn made of a robot: its bodies (with the URDF links merged into
each), tree joints, loop joints, coordinates and the number of inertial parameters.
ROBOT_OR_PATH is a built-in robot (``robots.available()``) or a URDF / URDF+ file.

Every problem with the input is reported as one line ``pga-dyn: error: <message>`` on
stderr, with exit status 2. Subcommands are argparse subparsers: a new one is a function
``_cmd_<name>(args, out)`` registered in :func:`build_parser`.
"""

from __future__ import annotations

import argparse
import os
import sys

from .errors import PgaDynError

PROG = "pga-dyn"


def _load(target: str, floating, gravity):
    """A built-in robot or a URDF file, as a Robot."""
    import robots

    if os.path.exists(target):
        return robots.load_urdf(target, floating_base=bool(floating), gravity=gravity)
    if target.lower() in robots.available():
        return robots.load(target, floating_base=floating, gravity=gravity)
    if target.lower().endswith((".urdf", ".xml")) or os.sep in target or "/" in target:
        return robots.load_urdf(target, floating_base=bool(floating), gravity=gravity)
    raise PgaDynError(f"'{target}' is neither a file nor a built-in robot "
                      f"(built-in: {', '.join(robots.available())})")


def _table(headers, rows) -> list:
    """Lines of a left-aligned text table."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[k]) for row in cells) for k in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return ["  " + line for line in lines]


def _num(x: float) -> str:
    return f"{float(x):.6g}"


def _coordinates(robot, i: int) -> str:
    s = robot.coordinates(i)
    if s.stop - s.start == 1:
        return f"q[{s.start}]"
    return f"q[{s.start}:{s.stop}]"


def info_lines(robot) -> list:
    """The lines ``pga-dyn info`` prints for ``robot``."""
    graph = robot.graph
    base = next(name for name, data in graph.nodes(data=True) if data["index"] == 0)
    names = [base, *robot.body_names]
    g = robot.gravity
    lines = [
        f"robot:       {robot.name}",
        f"source:      {robot.source or '-'}",
        f"gravity:     ({_num(g[0])}, {_num(g[1])}, {_num(g[2])}) m/s^2",
        f"base:        {'floating' if robot.floating_base else 'fixed'}",
        f"bodies:      {robot.n} moving (body 0 is the {'world' if robot.floating_base else 'fixed base'})",
        f"tree joints: {robot.n}",
        f"loop joints: {len(robot.loop_joints)}",
        f"degrees of freedom: {len(robot.actuated)} actuated of {robot.nq} tree coordinates",
        f"parameters:  {robot.num_parameters} (10 per moving body)",
        "",
        "Bodies",
    ]
    rows = []
    for k, name in enumerate(names):
        data = graph.nodes[name]
        mass = "-" if k == 0 else _num(data["inertial"].mass)
        rows.append((k, name, mass, " ".join(data["links"]) or "-"))
    lines += _table(("index", "name", "mass [kg]", "links"), rows)

    lines += ["", "Tree joints"]
    rows = []
    for i in range(1, robot.n + 1):
        child = names[i]
        (_, _, edge), = graph.in_edges(child, data=True)
        independent = edge.get("independent")
        rows.append((i, robot.joint_names[i], robot.joint_type[i], f"{robot.parent[i]} {names[robot.parent[i]]}",
                     f"{i} {child}", _coordinates(robot, i),
                     "-" if independent is None else ("yes" if independent else "no")))
    lines += _table(("index", "name", "type", "parent body", "child body", "coordinates", "independent"), rows)

    lines += ["", "Loop joints"]
    if robot.loop_joints:
        rows = [(lp.name, lp.type, f"{lp.parent} {names[lp.parent]}", f"{lp.child} {names[lp.child]}")
                for lp in robot.loop_joints]
        lines += _table(("name", "type", "parent body", "child body"), rows)
    else:
        lines.append("  none")
    if robot.couplings:
        lines += ["", "Couplings (follower = ratio * leader + offset)"]
        rows = [(c.name, robot.coordinate_names[c.follower], robot.coordinate_names[c.leader], _num(c.ratio),
                 _num(c.offset)) for c in robot.couplings]
        lines += _table(("name", "follower", "leader", "ratio", "offset"), rows)
    lines += ["", f"actuated coordinates: {' '.join(robot.actuated_names)}"]
    if robot.constrained:
        passive = " ".join(robot.coordinate_names[k] for k in robot.passive) or "none"
        lines.append(f"passive coordinates:  {passive}")
        lines.append(f"at q0 (all tree coordinates 0): {_closure_at_q0(robot)}")
    return lines


def _closure_at_q0(robot) -> str:
    """Whether the loops close at q0, and cond(J_p) there."""
    import numpy as np

    from .loops import constraints

    con = constraints(robot)
    residual, J, _ = con.evaluate(robot.q0)
    if np.linalg.norm(residual) > 1e-9:
        return f"the loops are open (constraint residual {np.linalg.norm(residual):.3g})"
    return f"the loops close; cond(J_p) = {_num(con.condition(J))}"


def _cmd_info(args, out) -> int:
    floating = True if args.floating else (False if args.fixed else None)
    robot = _load(args.robot, floating, tuple(args.gravity))
    print("\n".join(info_lines(robot)), file=out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Rigid-body dynamics in projective geometric algebra: robot models "
                               "and the identifiability of their inertial parameters.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    info = sub.add_parser("info", help="show the bodies, joints and parameters of a robot",
                          description="Show what pga-dyn makes of a robot: bodies (with merged links), "
                                      "tree and loop joints, coordinates, parameter count.")
    info.add_argument("robot", metavar="ROBOT_OR_PATH", help="a built-in robot name or a URDF/URDF+ file")
    base = info.add_mutually_exclusive_group()
    base.add_argument("--floating", action="store_true", help="add a floating base (default: fixed; go2: floating)")
    base.add_argument("--fixed", action="store_true", help="fix the base even for a robot that floats by default")
    info.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"), default=[0.0, 0.0, -9.81],
                      help="gravity vector in the world frame, m/s^2 (default: 0 0 -9.81)")
    info.set_defaults(func=_cmd_info)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``pga-dyn`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args, sys.stdout)
    except PgaDynError as exc:
        message = " ".join(str(exc).split())
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader of our output went away (e.g. `pga-dyn info go2 | head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
