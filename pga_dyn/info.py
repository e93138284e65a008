"""What pga-dyn made of a robot, as a report: its bodies (with the URDF links merged into each),
tree joints, loop joints, couplings, coordinates, the number of inertial parameters and, for a
closed-loop or coupled robot, whether the loops close at q0 and cond(J_p) there.

:func:`report` gives the figures as a JSON-ready dict and :func:`text` the lines ``pga-dyn info``
prints, made from that dict (one place for both; ``pga-dyn info --json`` prints the dict).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .display import number, text_table
from .model import check_robot

if TYPE_CHECKING:
    from .model import Robot

__all__ = ["report", "text"]


def report(robot: Robot) -> dict:
    """The figures of ``pga-dyn info`` for ``robot``, JSON-ready.

    Keys: ``robot``, ``source``, ``gravity`` (3,), ``floating_base``, ``parameters`` (10 per
    moving body), ``coordinates`` (the nq tree coordinates' names), ``actuated`` and ``passive``
    (names); ``bodies``, one per body 0..n: ``index``, ``name``, ``mass`` (kg, None for body 0,
    the world or fixed base), ``links`` (the URDF links merged into it); ``tree_joints``, one per
    joint 1..n: ``index``, ``name``, ``type``, ``parent`` and ``child`` (body indices),
    ``coordinates`` ([start, stop) in q), ``independent`` (URDF+'s flag, None when not given);
    ``unbounded_limits``: the joints with an infinite limit (-1e16 / 1e16 in a URDF file,
    Gazebo's "no limit", :data:`robots.urdf.UNBOUNDED_LIMIT`), each ``joint`` and ``limits``;
    ``loop_joints``: ``name``, ``type``, ``parent``, ``child``; ``couplings``: ``name``,
    ``follower``, ``leader``, ``ratio``, ``others`` ([coordinate, weight] pairs), ``offset``
    (follower = ratio * leader + the others + offset); for a constrained robot, ``closure``:
    ``open`` (the loop joints open at q0, each ``joint`` and ``residual`` norm above
    ``pga_dyn.loops.CLOSURE_TOL``) and ``cond_jp``, cond(J_p) at q0 when the loops close (None
    when they are open, or when J_p is singular there); with loop joints, ``reference``
    (:func:`reference_report`) and, when q0's loops do not close at its actuated position,
    ``closest`` (:func:`reference_closest`: how far the reference moved)."""
    robot = check_robot(robot)
    graph = robot.graph
    names = [robot.graph_name(i) for i in range(robot.n + 1)]
    coordinate = robot.coordinate_names
    bodies = [
        {
            "index": k,
            "name": name,
            "mass": None if k == 0 else float(graph.nodes[name]["inertial"].mass),
            "links": list(graph.nodes[name]["links"]),
        }
        for k, name in enumerate(names)
    ]
    tree = []
    for i in range(1, robot.n + 1):
        parent = int(robot.parent[i])
        span = robot.coordinates(i)
        tree.append(
            {
                "index": i,
                "name": robot.joint_names[i],
                "type": robot.joint_type[i],
                "parent": parent,
                "child": i,
                "coordinates": [span.start, span.stop],
                "independent": graph.edges[names[parent], names[i], robot.joint_names[i]]["independent"],
            }
        )
    out = {
        "robot": robot.name,
        "source": robot.source,
        "gravity": robot.gravity.tolist(),
        "floating_base": robot.floating_base,
        "parameters": robot.num_parameters,
        "coordinates": list(coordinate),
        "actuated": list(robot.actuated_names),
        "passive": [coordinate[k] for k in robot.passive],
        "bodies": bodies,
        "tree_joints": tree,
        "unbounded_limits": [
            {"joint": j.name, "limits": [float(x) for x in j.limits]}
            for j in robot.tree_joints
            if j.limits is not None and any(math.isinf(x) for x in j.limits)
        ],
        "loop_joints": [
            {"name": lp.name, "type": lp.type, "parent": lp.parent, "child": lp.child} for lp in robot.loop_joints
        ],
        "couplings": [
            {
                "name": c.name,
                "follower": coordinate[c.follower],
                "leader": coordinate[c.leader],
                "ratio": float(c.ratio),
                "others": [[coordinate[k], float(w)] for k, w in c.others],
                "offset": float(c.offset),
            }
            for c in robot.couplings
        ],
    }
    if robot.constrained:
        out["closure"] = closure_at_q0(robot)
    if robot.loop_joints:
        out["reference"] = reference_report(robot)
        closest = reference_closest(robot)
        if closest is not None:
            out["closest"] = closest
    return out


def reference_closest(robot: Robot) -> dict | None:
    """When the loops do not close at the actuated position of q0 (or of the reference given):
    how far the reference moved, ``given``, ``open``, ``moved`` ({coordinate: change}),
    ``distance`` and ``residual`` (:meth:`pga_dyn.loops.closest.Closest.report`); else None (also
    when the reference cannot be settled: :func:`reference_report` says why)."""
    from .errors import PgaDynError
    from .loops import constraints

    try:
        closest = constraints(robot).closest
    except PgaDynError:
        return None
    return None if closest is None else closest.report()


def reference_report(robot: Robot) -> list:
    """Lines on the reference configuration (the loops closed): the rank decision of each part
    (the redundant equations dropped, the passive motions left free) and the free spins locked
    there (:meth:`pga_dyn.loops.Constraints.report`; for a lock that is an approximation, the bound of
    :func:`pga_dyn.sampling.spin_lock_bounds`; the coordinates of spins treated exactly:
    :func:`pga_dyn.loops.exact_spins`), or why the reference cannot be settled
    (followed by how far the reference moved, when q0 does not close and a closed configuration
    was found before the refusal)."""
    from .errors import PgaDynError
    from .loops import Constraints, close_at_q0, constraints, spin_coordinates
    from .sampling import bound_lines, spin_lock_bounds

    try:
        con = constraints(robot)
        lines = con.report()
    except PgaDynError as exc:
        lines = [str(exc)]
    else:
        if any(not spin.symmetric for spin in con.spins):
            lines += bound_lines(spin_lock_bounds(robot))
        exact = spin_coordinates(robot)
        if exact:
            lines.append(
                f"free spins exact: coordinates {', '.join(exact)} made independent (unactuated, zero-force rows)"
            )
        return lines
    try:  # the closure that came before the refusal, when the reference had to move to close
        con = Constraints(robot)
        closest = close_at_q0(con, con.free(robot.q0)) if con.nf else None
    except PgaDynError:
        closest = None
    return lines + (closest.describe() if closest is not None else [])


def closure_at_q0(robot: Robot) -> dict:
    """Whether the loops close at q0 (all tree coordinates 0): ``open``, the loop joints whose
    residual norm is above ``CLOSURE_TOL`` (``joint``, ``residual``), and ``cond_jp``,
    cond(J_p) = the largest cond(J_f) of the constraint's parts at q0
    (``Constraints.condition``), with the free spins locked at the reference (their spin-rate
    rows: :mod:`pga_dyn.loops.spins`), when none is open and it is finite, else None."""
    from .errors import PgaDynError
    from .loops import Constraints, constraints

    con = Constraints(robot)
    open_ = [{"joint": name, "residual": residual} for name, residual in con.open_loops(robot.q0)]
    cond = None
    if not open_:
        try:  # with the free spins locked at the reference (their rows make J_f square again)
            con = constraints(robot)
        except PgaDynError:
            pass  # the reference cannot be settled (said by reference_report): J_p as the loops give it
        _, J, _ = con.evaluate(robot.q0)
        cond = con.condition(J)
    return {"open": open_, "cond_jp": cond if cond is not None and math.isfinite(cond) else None}


def text(robot: Robot) -> str:
    """The lines ``pga-dyn info`` prints for ``robot``: the lines of its :func:`report`."""
    return "\n".join(lines(report(robot)))


def lines(info: dict) -> list:
    """The lines of an info :func:`report`: a summary, then tables of the bodies, tree joints,
    loop joints and couplings, the actuated (and passive) coordinates, the closure at q0."""
    bodies = info["bodies"]
    names = [body["name"] for body in bodies]
    g = info["gravity"]
    floating = info["floating_base"]
    out = [
        f"robot:       {info['robot']}",
        f"source:      {info['source'] or '-'}",
        f"gravity:     ({number(g[0])}, {number(g[1])}, {number(g[2])}) m/s^2",
        f"base:        {'floating' if floating else 'fixed'}",
        f"bodies:      {len(bodies) - 1} moving (body 0 is the {'world' if floating else 'fixed base'})",
        f"tree joints: {len(info['tree_joints'])}",
        f"loop joints: {len(info['loop_joints'])}",
        f"degrees of freedom: {len(info['actuated'])} actuated of {len(info['coordinates'])} tree coordinates",
        f"parameters:  {info['parameters']} (10 per moving body)",
        "",
        "Bodies",
    ]
    out += text_table(
        ("index", "name", "mass [kg]", "links"),
        [
            (b["index"], b["name"], "-" if b["mass"] is None else number(b["mass"]), " ".join(b["links"]) or "-")
            for b in bodies
        ],
    )
    out += ["", "Tree joints"]
    rows = []
    for j in info["tree_joints"]:
        start, stop = j["coordinates"]
        rows.append(
            (
                j["index"],
                j["name"],
                j["type"],
                f"{j['parent']} {names[j['parent']]}",
                f"{j['child']} {names[j['child']]}",
                f"q[{start}]" if stop - start == 1 else f"q[{start}:{stop}]",
                "-" if j["independent"] is None else ("yes" if j["independent"] else "no"),
            )
        )
    out += text_table(("index", "name", "type", "parent body", "child body", "coordinates", "independent"), rows)
    if info["unbounded_limits"]:
        out.append(
            "unbounded joint limits (-1e16 / 1e16 in the file, Gazebo's 'no limit'): "
            + ", ".join(
                f"{u['joint']} [{number(u['limits'][0])}, {number(u['limits'][1])}]" for u in info["unbounded_limits"]
            )
        )
    out += ["", "Loop joints"]
    if info["loop_joints"]:
        out += text_table(
            ("name", "type", "parent body", "child body"),
            [
                (lp["name"], lp["type"], f"{lp['parent']} {names[lp['parent']]}", f"{lp['child']} {names[lp['child']]}")
                for lp in info["loop_joints"]
            ],
        )
    else:
        out.append("  none")
    if info["couplings"]:
        out += ["", "Couplings (follower = ratio * leader + the other terms + offset)"]
        out += text_table(
            ("name", "follower", "leader", "ratio", "other terms", "offset"),
            [
                (
                    c["name"],
                    c["follower"],
                    c["leader"],
                    number(c["ratio"]),
                    " ".join(f"{number(w)}*{k}" for k, w in c["others"]) or "-",
                    number(c["offset"]),
                )
                for c in info["couplings"]
            ],
        )
    out += ["", f"actuated coordinates: {' '.join(info['actuated'])}"]
    if "closure" in info:
        closure = info["closure"]
        out.append(f"passive coordinates:  {' '.join(info['passive']) or 'none'}")
        if closure["open"]:
            state = "the loops are open: " + ", ".join(
                f"'{o['joint']}' (residual {o['residual']:.3g})" for o in closure["open"]
            )
        else:
            cond = closure["cond_jp"]
            state = f"the loops close; cond(J_p) = {'inf' if cond is None else number(cond)}"
        out.append(f"at q0 (all tree coordinates 0): {state}")
    if "reference" in info:
        out += ["at the reference configuration (loops closed):"] + ["  " + line for line in info["reference"]]
    return out
