"""The ``pga-dyn`` command line.

    pga-dyn info ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ]
    pga-dyn analyze ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ] [--no-certify]
                    [--bounds JOINT LOWER UPPER ...] [--per-parameter] [--json]
    pga-dyn base ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ] [--keep NAME ...]
                 [--json] [--csv FILE]

``info`` prints what pga-dyn made of a robot: its bodies (with the URDF links merged into
each), tree joints, loop joints, coordinates and the number of inertial parameters.
``analyze`` runs DRNG: the dimension of the regressor nullspace, the number of base
parameters, the vectors per principle and per joint, and the certificate against the sampled
regressor (exit status 1 when the answer cannot be certified; ``--no-certify`` skips it and
labels the answer NOT CERTIFIED). ``base`` prints the base parameters
(``drng.base_parameters``): each regrouped combination, its expression in the link-frame
parameters and its value for the model's own inertias. ROBOT_OR_PATH is a built-in robot
(``robots.available()``) or
a URDF / URDF+ file.

Every problem with the input is reported as one line ``pga-dyn: error: <message>`` on
stderr, with exit status 2. Subcommands are argparse subparsers: a new one is a function
``_cmd_<name>(args, out)`` registered in :func:`build_parser`.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from .errors import PgaDynError, PgaDynWarning

PROG = "pga-dyn"


def _load(target: str, floating, gravity):
    """A built-in robot (by name, before any file of that name) or a URDF file, as a Robot."""
    import robots

    if target.lower() in robots.available():
        return robots.load(target, floating_base=floating, gravity=gravity)
    if os.path.exists(target) or target.lower().endswith((".urdf", ".xml")) or os.sep in target or "/" in target:
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
        lines += ["", "Couplings (follower = ratio * leader + the other terms + offset)"]
        rows = [(c.name, robot.coordinate_names[c.follower], robot.coordinate_names[c.leader], _num(c.ratio),
                 " ".join(f"{_num(w)}*{robot.coordinate_names[k]}" for k, w in c.others) or "-", _num(c.offset))
                for c in robot.couplings]
        lines += _table(("name", "follower", "leader", "ratio", "other terms", "offset"), rows)
    lines += ["", f"actuated coordinates: {' '.join(robot.actuated_names)}"]
    if robot.constrained:
        passive = " ".join(robot.coordinate_names[k] for k in robot.passive) or "none"
        lines.append(f"passive coordinates:  {passive}")
        lines.append(f"at q0 (all tree coordinates 0): {_closure_at_q0(robot)}")
    return lines


def _closure_at_q0(robot) -> str:
    """Whether the loops close at q0, and cond(J_p) there."""
    from .loops import Constraints

    con = Constraints(robot)
    open_ = [f"'{name}' (residual {residual:.3g})" for name, residual in con.residuals(robot.q0) if residual > 1e-9]
    if open_:
        return f"the loops are open: {', '.join(open_)}"
    _, J, _ = con.evaluate(robot.q0)
    return f"the loops close; cond(J_p) = {_num(con.condition(J))}"


def _cmd_info(args, out) -> int:
    floating = True if args.floating else (False if args.fixed else None)
    robot = _load(args.robot, floating, tuple(args.gravity))
    print("\n".join(info_lines(robot)), file=out)
    return 0


def analyze(robot, certify: bool = True, per_parameter: bool = False, bounds=None) -> dict:
    """The figures ``pga-dyn analyze`` prints, as a JSON-ready dict."""
    import time

    import drng

    start = time.perf_counter()
    result = drng.nullspace(robot, certify=certify, bounds=bounds)
    seconds = time.perf_counter() - start  # with the certificate and the loading of the kernels
    warm = drng.nullspace(robot, certify=False).seconds  # DRNG alone, compiled kernels loaded
    per_joint = {}
    for entry in result.provenance:
        joint = entry["joint"] or "numerical completion"
        per_joint.setdefault(joint, {}).setdefault(str(entry["principle"]), 0)
        per_joint[joint][str(entry["principle"])] += 1
    report = {
        "robot": robot.name, "source": robot.source, "gravity": robot.gravity.tolist(),
        "floating_base": robot.floating_base, "bodies": robot.n, "parameters": robot.num_parameters,
        "nullspace_dimension": result.dim, "base_parameters": result.num_base_parameters,
        "vectors_per_principle": {str(k): v for k, v in sorted(result.counts().items(), key=str)},
        "vectors_per_joint": per_joint, "method": result.method, "geometric": result.geometric,
        "certified": result.certified, "seconds": seconds, "drng_seconds": warm,
    }
    report["status"] = {None: "not certified", True: "certified", False: "NOT certified"}[result.certified]
    if certify:
        c = result.certificate
        report["certificate"] = {"rank": c["rank"], "rank_drng": c["rank_drng"], "rank_numerical": c["rank_numerical"],
                                 "singular_gap": c["gap"], "threshold": c["threshold"],
                                 "smallest_kept": c["smallest_kept"], "largest_dropped": c["largest_dropped"],
                                 "clean_gap": c["clean"], "residual": c["residual"], "samples": c["samples"],
                                 "short_bodies": list(c["short"])}
    if per_parameter:
        report["per_parameter"] = [{"body": row.body, "parameter": row.parameter, "class": row.cls}
                                   for row in drng.classify(robot, result)]
        report["regrouped_into"] = regrouped_into(robot, result)
    return report


def regrouped_into(robot, result) -> dict:
    """Each regrouped link-frame parameter (``Iyy2``: name + body number) -> the names of the base
    parameters of ``drng.base_parameters(robot, result)`` it enters."""
    import drng

    return {p.name: list(p.base) for p in drng.base_parameters(robot, result).parameters if p.role == "regrouped"}


def regrouped_lines(report: dict) -> list:
    """The lines of ``analyze --per-parameter`` that point each regrouped parameter to its base
    parameters."""
    rows = [(name, ", ".join(base)) for name, base in report["regrouped_into"].items()]
    return ["", "Regrouped parameters (name + body number; see pga-dyn base)"] + \
        _table(("parameter", "regrouped into"), rows)


def analyze_lines(report: dict) -> list:
    lines = [
        f"robot:                {report['robot']}",
        f"parameters:           {report['parameters']} (10 per body, {report['bodies']} bodies)",
        f"nullspace dimension:  {report['nullspace_dimension']} (unidentifiable directions)",
        f"base parameters:      {report['base_parameters']} (identifiable combinations)",
        "vectors per principle: " + ", ".join(
            f"{ {'1': 'shared points', '2': 'fixed points', '3': 'planar rotations'}.get(k, k)} {v}"
            for k, v in report["vectors_per_principle"].items()),
    ]
    if report["certified"] is None:
        lines.append("certificate:          NOT CERTIFIED (--no-certify): the three principles alone, which can "
                     "miss directions (docs/drng.md)")
    else:
        c = report["certificate"]
        verdict = "certified" if report["certified"] else "NOT certified"
        lines.append(f"certificate:          {verdict}: nullspace rank {c['rank']} + sampled regressor rank "
                     f"{c['rank_numerical']} = {c['rank'] + c['rank_numerical']} of {report['parameters']} "
                     f"(singular gap {c['singular_gap']:.1e}, residual {c['residual']:.1e}, {c['samples']} samples)")
        lines.append(f"                      column-scaled sampled regressor, relative to its largest singular value: "
                     f"smallest kept {c['smallest_kept']:.1e}, largest dropped {c['largest_dropped']:.1e}, "
                     f"threshold {c['threshold']:.0e}: " + ("a clean gap" if c["clean_gap"] else
                                                             "NOT a clean gap (needs >= 1e6 with the threshold inside)"))
        if not report["geometric"]:
            lines.append(f"                      the three principles give rank {c['rank_drng']} and miss directions "
                         f"on bodies {', '.join(c['short_bodies'])}: completed numerically")
    if report["certified"] is None:
        lines.append(f"time:                 DRNG {report['drng_seconds'] * 1e3:.3f} ms")
    else:
        lines.append(f"time:                 DRNG {report['drng_seconds'] * 1e3:.3f} ms; in all "
                     f"{report['seconds'] * 1e3:.1f} ms (with the certificate and loading the compiled kernels)")
    rows = [(joint, *(counts.get(k, 0) for k in ("1", "2", "3")), counts.get("numerical", ""))
            for joint, counts in report["vectors_per_joint"].items()]
    lines += ["", "Vectors per joint"]
    lines += _table(("joint", "shared points", "fixed points", "planar rotations", "numerical"), rows)
    if "per_parameter" in report:
        from drng.classification import SYMBOL

        bodies = list(dict.fromkeys(row["body"] for row in report["per_parameter"]))
        names = list(dict.fromkeys(row["parameter"] for row in report["per_parameter"]))
        cls = {(row["body"], row["parameter"]): SYMBOL[row["class"]] for row in report["per_parameter"]}
        lines += ["", "Parameters in the link frames: * identifiable alone, o only in combination, "
                      "x unidentifiable" + ("" if report["certified"] else
                                            f" ({report['status'].upper()}: this table can be wrong)")]
        lines += _table(("parameter", *bodies), [(p, *(cls[(b, p)] for b in bodies)) for p in names])
        lines += regrouped_lines(report)
    return lines


def _cmd_analyze(args, out) -> int:
    import json

    floating = True if args.floating else (False if args.fixed else None)
    robot = _load(args.robot, floating, tuple(args.gravity))
    report = analyze(robot, not args.no_certify, args.per_parameter, _bounds(args.bounds))
    if args.json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        print("\n".join(analyze_lines(report)), file=out)
    if report["certified"] is False:
        c = report["certificate"]
        reason = ("the sampled regressor has no clean singular gap" if c["singular_gap"] < 1e6 else
                  "the basis is not in the nullspace of the sampled regressor" if c["residual"] >= 1e-10 else
                  "the ranks do not add up to the number of parameters")
        print(f"{PROG}: the answer could not be certified: {reason}", file=sys.stderr)
        return 1
    return 0


def _bounds(triples):
    """{joint: (lower, upper)} from the --bounds triples, or None."""
    if not triples:
        return None
    out = {}
    for name, lower, upper in triples:
        try:
            out[name] = (float(lower), float(upper))
        except ValueError:
            raise PgaDynError(f"--bounds {name} {lower} {upper}: LOWER and UPPER must be numbers") from None
    return out


def base_report(robot, keep=()) -> dict:
    """What ``pga-dyn base`` prints, as a JSON-ready dict: ``BaseParameters.to_dict()`` (K, names,
    expressions, ...) with the count, and ``values``, beta for the model's own inertias."""
    import drng

    from .tp_regressor import inertial_parameters, to_link_parameters

    result = drng.nullspace(robot)
    bp = drng.base_parameters(robot, result, keep=tuple(keep))
    report = bp.to_dict()
    report["certified"] = result.certified
    report["parameters"] = robot.num_parameters
    report["base_parameters"] = bp.num_base_parameters
    report["values"] = bp.values(to_link_parameters(robot, inertial_parameters(robot))).tolist()
    return report


def base_lines(report: dict) -> list:
    """The lines ``pga-dyn base`` prints for a :func:`base_report`."""
    bodies = report["bodies"]
    lines = [
        f"robot:                {report['robot']}",
        f"parameters:           {report['parameters']} (10 per body, {len(bodies)} bodies: m, mcx, mcy, mcz, "
        f"Ixx, Ixy, Iyy, Ixz, Iyz, Izz in each body's frame, inertia about its origin; name + body number)",
        f"base parameters:      {report['base_parameters']} (suffix R: other parameters regrouped into it; "
        f"value: for the model's own inertias)",
        "",
    ]
    rows = [(name, bodies[k // 10], _num(value), expression)
            for name, k, value, expression in zip(report["names"], report["leading"], report["values"],
                                                  report["expressions"])]
    lines += _table(("base parameter", "body", "value", "expression"), rows)
    return lines


def _cmd_base(args, out) -> int:
    import csv
    import json

    floating = True if args.floating else (False if args.fixed else None)
    robot = _load(args.robot, floating, tuple(args.gravity))
    report = base_report(robot, args.keep)
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(("name", "leading", "body", "value", "expression"))
            for name, k, value, expression in zip(report["names"], report["leading"], report["values"],
                                                  report["expressions"]):
                writer.writerow((name, report["parameter_names"][k], report["bodies"][k // 10], repr(value),
                                 expression))
    if args.json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        print("\n".join(base_lines(report)), file=out)
    if not report["certified"]:
        print(f"{PROG}: the nullspace behind these base parameters could not be certified (pga-dyn analyze "
              "says why): they can be wrong", file=sys.stderr)
        return 1
    return 0


def _robot_arguments(parser) -> None:
    parser.add_argument("robot", metavar="ROBOT_OR_PATH", help="a built-in robot name or a URDF/URDF+ file")
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--floating", action="store_true", help="add a floating base (default: fixed; go2: floating)")
    base.add_argument("--fixed", action="store_true", help="fix the base even for a robot that floats by default")
    parser.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"), default=[0.0, 0.0, -9.81],
                        help="gravity vector in the world frame, m/s^2 (default: 0 0 -9.81)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Rigid-body dynamics in projective geometric algebra: robot models "
                               "and the identifiability of their inertial parameters.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    info = sub.add_parser("info", help="show the bodies, joints and parameters of a robot",
                          description="Show what pga-dyn makes of a robot: bodies (with merged links), "
                                      "tree and loop joints, coordinates, parameter count.")
    _robot_arguments(info)
    info.set_defaults(func=_cmd_info)

    analyze_parser = sub.add_parser(
        "analyze", help="which inertial parameters can be identified (DRNG)",
        description="The nullspace of the dynamics regressor by the three principles of DRNG: its "
                    "dimension, the base parameters, the vectors per principle and joint, certified against "
                    "the regressor of random valid samples. Exit status 1 when the answer cannot be certified.")
    _robot_arguments(analyze_parser)
    certify = analyze_parser.add_mutually_exclusive_group()
    certify.add_argument("--certify", action="store_true",
                         help="check against the regressor of random valid samples and complete the basis if the "
                              "principles fall short (the default)")
    certify.add_argument("--no-certify", action="store_true",
                         help="the three principles alone, in microseconds, labelled NOT CERTIFIED: they can miss "
                              "directions")
    analyze_parser.add_argument("--bounds", nargs=3, action="append", metavar=("JOINT", "LOWER", "UPPER"),
                                help="sampling range of an actuated coordinate for the certificate "
                                                  "(repeat for more; default: the joint limits, or +-pi rad, +-1 m)")
    analyze_parser.add_argument("--per-parameter", action="store_true",
                                help="classify each link-frame parameter [m, mc, I] of each body: "
                                     "identifiable alone, in combination, or unidentifiable")
    analyze_parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    analyze_parser.set_defaults(func=_cmd_analyze)

    base_parser = sub.add_parser(
        "base", help="the base parameters: regrouped combinations, expressions, values",
        description="The base inertial parameters beta = K phi of the certified nullspace, each named after its "
                    "leading link-frame parameter, with its expression and its value for the model's inertias.")
    _robot_arguments(base_parser)
    base_parser.add_argument("--keep", nargs="+", default=[], metavar="NAME",
                             help="link-frame parameters to keep as leading parameters (e.g. m6 Izz2)")
    base_parser.add_argument("--json", action="store_true", help="print K, names, expressions and values as JSON")
    base_parser.add_argument("--csv", metavar="FILE", help="also write the table to FILE as CSV")
    base_parser.set_defaults(func=_cmd_base)
    return parser


def _show_warning(message, category, *args, **kwargs) -> None:
    print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv=None) -> int:
    """Entry point of the ``pga-dyn`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", PgaDynWarning)
            warnings.showwarning = _show_warning
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
