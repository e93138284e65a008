"""The ``pga-dyn`` command line.

    pga-dyn info ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ]
    pga-dyn analyze ROBOT_OR_PATH [ROBOT_OR_PATH ...] [--floating | --fixed] [--gravity GX GY GZ]
                    [--certify | --no-certify] [--bounds JOINT LOWER UPPER ...] [--budget SECONDS]
                    [--per-parameter] [--json] [--jobs N]
    pga-dyn base ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ] [--keep NAME ...]
                 [--json] [--csv FILE]
    pga-dyn excite ROBOT_OR_PATH -o TRAJECTORY [--duration S] [--rate HZ] [--period S] [--harmonics L]
                   [--velocity V] [--acceleration A] [--bounds JOINT LOWER UPPER ...] [--friction [TERM ...]]
                   [--armature] [--iterations N] [--seed N] [--json]
    pga-dyn simulate ROBOT_OR_PATH TRAJECTORY -o DATA [--noise FRACTION] [--viscous X] [--coulomb X]
                     [--offset X] [--armature X] [--seed N]
    pga-dyn plot ROBOT_OR_PATH -o FILE [--samples N] [--seed N]
    pga-dyn identify ROBOT_OR_PATH DATA [--friction [TERM ...]] [--armature] [--ols] [--consistent | --map]
                     [--prior-std REL] [--test DATA] [-o URDF] [--plot FILE] [--json]
    pga-dyn compile

``info`` prints what pga-dyn made of a robot: its bodies (with the URDF links merged into
each), tree joints, loop joints, coordinates and the number of inertial parameters.
``analyze`` runs DRNG: the dimension of the regressor nullspace, the number of base
parameters, the vectors per principle and per joint, and the status of the answer: proven (a
tree: the generalized principles are complete, no sampling), or certified against the sampled
regressor (loops and couplings; ``--certify`` adds the check to a proven answer; exit status 1
when the answer cannot be certified; ``--no-certify`` skips it and labels an answer that is not
proven NOT CERTIFIED; several robots: one line each, analysed by ``drng.nullspaces`` on
``--jobs`` worker processes). ``base`` prints the base parameters
(``drng.base_parameters``): each regrouped combination, its expression in the link-frame
parameters and its value for the model's own inertias. ``excite``, ``simulate`` and ``identify``
carry an identification from an exciting trajectory to identified parameters
(``drng.identification``, docs/identification.md). ROBOT_OR_PATH is a built-in robot
(``robots.available()``) or a robot file read by ``robots.load_file``: URDF, URDF+, Extended
URDF + YAML (``--yaml FILE``, default a ``robot.yaml`` beside the URDF) or MJCF. ``plot``
draws the robot, the sampled regressor's spectrum and the identifiability of each parameter
(``drng.plot``). ``compile`` compiles every numba kernel into numba's on-disk cache
(:func:`compile_kernels`; ``pip install .`` runs it, so a new install does not compile on its
first call: docs/performance.md, "Cold start"). Every command takes ``--quiet`` (no progress bars; bars are drawn on stderr
only when it is a terminal) and ``--yaml FILE``; ``pga-dyn --version`` prints the version.

Every problem with the input is reported as one line ``pga-dyn: error: <message>`` on
stderr, with exit status 2. Subcommands are argparse subparsers: a new one is a function
``_cmd_<name>(args, out)`` registered in :func:`build_parser`.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from . import __version__
from .conventions import DEFAULT_GRAVITY
from .errors import PgaDynError, PgaDynWarning
from .progress import reporting

PROG = "pga-dyn"


def _load(target: str, floating, gravity, yaml=None):
    """A built-in robot (by name, before any file of that name) or a robot file (URDF, URDF+,
    Extended URDF + YAML, MJCF: robots.load_file), as a Robot."""
    import robots

    if target.lower() in robots.available():
        return robots.load(target, floating_base=floating, gravity=DEFAULT_GRAVITY if gravity is None else gravity)
    if os.path.exists(target) or target.lower().endswith((".urdf", ".xml")) or os.sep in target or "/" in target:
        return robots.load_file(target, yaml=yaml, floating_base=floating, gravity=gravity)
    raise PgaDynError(f"'{target}' is neither a file nor a built-in robot "
                      f"(built-in: {', '.join(robots.available())})")


def _robot(args, target=None):
    """The robot of a command's ROBOT_OR_PATH (or ``target``), --floating/--fixed, --gravity and
    --yaml."""
    return _loader(args)(args.robot if target is None else target)


def _loader(args):
    """``load(ROBOT_OR_PATH) -> Robot`` with the command's --floating/--fixed, --gravity and
    --yaml: a partial of :func:`_load`, so that it pickles (``drng.nullspaces`` runs it in its
    workers)."""
    import functools

    floating = True if args.floating else (False if args.fixed else None)
    gravity = None if args.gravity is None else tuple(args.gravity)
    return functools.partial(_load, floating=floating, gravity=gravity, yaml=args.yaml)


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
    names = [robot.graph_name(i) for i in range(robot.n + 1)]
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
        independent = graph.edges[names[robot.parent[i]], child, robot.joint_names[i]]["independent"]
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
        lines += _loop_report(robot)
    return lines


def _loop_report(robot) -> list:
    """The rank of each part of the loops at the reference and the free spins locked there
    (:meth:`pga_dyn.loops.Constraints.report`), or why the reference cannot be settled."""
    from .loops import constraints

    if not robot.loop_joints:
        return []
    try:
        return ["at the reference configuration (loops closed):"] + ["  " + line for line in constraints(robot).report()]
    except PgaDynError as exc:
        return [f"at the reference configuration: {exc}"]


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
    robot = _robot(args)
    print("\n".join(info_lines(robot)), file=out)
    return 0


def _cmd_plot(args, out) -> int:
    from drng.plot import plot

    robot = _robot(args)
    figure = plot(robot, _new_file(args.output, robot.source), samples=args.samples, seed=args.seed)
    title = figure.texts[0].get_text() if figure.texts else robot.name
    print(f"{title}: written to {args.output}", file=out)
    return 0


def analyze(robot, certify: bool | None = None, per_parameter: bool = False, bounds=None,
            budget: float | None = None) -> dict:
    """The figures ``pga-dyn analyze`` prints, as a JSON-ready dict (``certify``, ``bounds`` and
    ``budget`` as in :func:`drng.nullspace`: None samples only an answer that is not proven;
    ``budget`` None: the library's default time budget)."""
    import time

    import drng

    start = time.perf_counter()
    kwargs = {} if budget is None else {"budget": budget}
    result = drng.nullspace(robot, certify=certify, bounds=bounds, **kwargs)
    seconds = time.perf_counter() - start  # with the certificate and the loading of the kernels
    warm = drng.nullspace(robot, certify=False).seconds  # DRNG alone, compiled kernels loaded
    per_joint = {}
    for (joint, principle), count in result.counts(("joint", "principle")).items():
        per_joint.setdefault(joint or "numerical completion", {})[str(principle)] = count
    report = {
        "robot": robot.name, "source": robot.source, "gravity": robot.gravity.tolist(),
        "floating_base": robot.floating_base, "bodies": robot.n, **answer(result),
        "vectors_per_principle": {str(k): v for k, v in sorted(result.counts().items(), key=lambda item: str(item[0]))},
        "vectors_per_joint": per_joint, "method": result.method, "geometric": result.geometric,
        "trusted": result.trusted, "seconds": seconds, "drng_seconds": warm,
    }
    if result.certified is not None:
        c = result.certificate
        report["certificate"] = {"rank": c["rank"], "rank_drng": c["rank_drng"], "rank_numerical": c["rank_numerical"],
                                 "singular_gap": c["gap"], "threshold": c["threshold"],
                                 "smallest_kept": c["smallest_kept"], "largest_dropped": c["largest_dropped"],
                                 "clean_gap": c["clean"], "residual": c["residual"], "samples": c["samples"],
                                 "short_bodies": list(c["short"]), "structure": c["structure"],
                                 "reason": c["reason"]}
    if per_parameter:
        report["per_parameter"] = [{"body": row.body, "parameter": row.parameter, "class": row.cls}
                                   for row in drng.classify(robot, result)]
        report["regrouped_into"] = regrouped_into(robot, result)
    return report


def answer(result) -> dict:
    """The answer's figures of a NullspaceResult that every ``analyze`` report carries."""
    return {"parameters": result.num_parameters, "nullspace_dimension": result.dim,
            "base_parameters": result.num_base_parameters, "status": result.status, "proven": result.proven,
            "certified": result.certified}


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
    """The lines ``pga-dyn analyze`` prints for an :func:`analyze` report."""
    from drng.principles import PRINCIPLE_NAMES as NAMES

    names = {str(k): v for k, v in NAMES.items()}  # the report's keys are strings (JSON)
    lines = [
        f"robot:                {report['robot']}",
        f"parameters:           {report['parameters']} (10 per body, {report['bodies']} bodies)",
        f"nullspace dimension:  {report['nullspace_dimension']} (unidentifiable directions)",
        f"base parameters:      {report['base_parameters']} (identifiable combinations)",
        "vectors per principle: " + ", ".join(
            f"{names.get(k, k)} {v}" for k, v in report["vectors_per_principle"].items()),
    ]
    if report["bodies"] == 0:
        lines.append("no moving body:       every link is fixed to the base: no inertial parameter to identify")
    if report["proven"] and report["certified"] is False:
        lines.append(f"status:               {report['status']}: the principles are complete on a tree, yet the "
                     "sampled regressor disagrees (numerical trouble, or a defect: please report it); not trusted")
    elif report["proven"]:
        lines.append(f"status:               {report['status']}: the generalized principles are complete on a "
                     "tree (docs/drng.md)" + ("" if report["certified"] is not None else ", no sampling"))
    if report["certified"] is None and not report["proven"]:
        lines.append("certificate:          NOT CERTIFIED (--no-certify): the principles alone, which can "
                     "miss directions on loops and couplings (docs/drng.md)")
    elif report["certified"] is not None:
        from drng.numerical import GAP_MIN

        c = report["certificate"]
        verdict = "certified" if report["certified"] else "NOT certified"
        lines.append(f"certificate:          {verdict}: nullspace rank {c['rank']} + sampled regressor rank "
                     f"{c['rank_numerical']} = {c['rank'] + c['rank_numerical']} of {report['parameters']} "
                     f"(singular gap {c['singular_gap']:.1e}, residual {c['residual']:.1e}, {c['samples']} samples)")
        where = ("the diagonal blocks (one per body) of the block-triangular sampled regressor, column-scaled, "
                 "each relative to its own largest singular value, the worst over the blocks (a dropped value of "
                 "0: every block has full rank)" if c["structure"] == "block-triangular" else
                 "column-scaled sampled regressor, relative to its largest singular value")
        lines.append(f"                      {where}: "
                     f"smallest kept {c['smallest_kept']:.1e}, largest dropped {c['largest_dropped']:.1e}, "
                     f"threshold {c['threshold']:.0e}: " + ("a clean gap" if c["clean_gap"] else
                                                             f"NOT a clean gap (needs >= {GAP_MIN:.0e} with the threshold inside)"))
        if not report["geometric"]:
            lines.append(f"                      the principles give rank {c['rank_drng']} and miss directions "
                         f"on bodies {', '.join(c['short_bodies'])}: completed numerically")
    if report["certified"] is None:
        lines.append(f"time:                 DRNG {report['drng_seconds'] * 1e3:.3f} ms")
    else:
        lines.append(f"time:                 DRNG {report['drng_seconds'] * 1e3:.3f} ms; in all "
                     f"{report['seconds'] * 1e3:.1f} ms (with the certificate and loading the compiled kernels)")
    rows = [(joint, *(counts.get(k, 0) for k in names), counts.get("numerical", ""))
            for joint, counts in report["vectors_per_joint"].items()]
    lines += ["", "Vectors per joint"]
    lines += _table(("joint", *names.values(), "numerical"), rows)
    if "per_parameter" in report:
        from drng.classification import SYMBOL

        bodies = list(dict.fromkeys(row["body"] for row in report["per_parameter"]))
        names = list(dict.fromkeys(row["parameter"] for row in report["per_parameter"]))
        cls = {(row["body"], row["parameter"]): SYMBOL[row["class"]] for row in report["per_parameter"]}
        lines += ["", "Parameters in the link frames: * identifiable alone, o only in combination, "
                      "x unidentifiable" + ("" if report["trusted"] else
                                            f" ({report['status'].upper()}: this table can be wrong)")]
        lines += _table(("parameter", *bodies), [(p, *(cls[(b, p)] for b in bodies)) for p in names])
        lines += regrouped_lines(report)
    return lines


def _cmd_analyze(args, out) -> int:
    import json

    certify = False if args.no_certify else (True if args.certify or args.bounds else None)
    if args.budget is not None and not args.budget > 0:
        raise PgaDynError(f"--budget must be a positive number of seconds, got {args.budget}")
    if args.jobs is not None and args.jobs < 1:
        raise PgaDynError(f"--jobs must be a positive number of worker processes, got {args.jobs}")
    if len(args.robot) > 1:
        return _analyze_many(args, certify, out)
    robot = _robot(args, args.robot[0])
    report = analyze(robot, certify, args.per_parameter, _bounds(args.bounds), args.budget)
    if args.json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        print("\n".join(analyze_lines(report)), file=out)
    if report["certified"] is False:
        print(f"{PROG}: the answer could not be certified: {report['certificate']['reason']}", file=sys.stderr)
        return 1
    return 0


def many_lines(rows: list) -> list:
    """The table of ``pga-dyn analyze`` over several robots: one line per robot (rows of
    :func:`_analyze_many`'s report)."""
    table = [(row["robot"], str(row.get("parameters", "-")), str(row.get("nullspace_dimension", "-")),
              str(row.get("base_parameters", "-")), row.get("status") or f"refused: {row['error']}") for row in rows]
    return _table(["robot", "parameters", "nullspace", "base parameters", "status"], table)


def _analyze_many(args, certify, out) -> int:
    """``pga-dyn analyze A B ...``: :func:`drng.nullspaces` of the robots (``--jobs`` workers),
    one line each, or a JSON list. Exit status 2 when a robot is refused, else 1 when an answer
    cannot be certified."""
    import json

    import drng

    if args.per_parameter:
        raise PgaDynError("--per-parameter takes one robot")
    options = {"certify": certify, "bounds": _bounds(args.bounds)}
    if args.budget is not None:
        options["budget"] = args.budget
    results = drng.nullspaces(args.robot, _loader(args), jobs=args.jobs, errors="collect", **options)
    rows = []
    for target, result in zip(args.robot, results):
        if isinstance(result, drng.Failure):
            if not result.input_error:
                raise result.exception()  # a bug, with the worker's traceback: not a refused input
            rows.append({"robot": target, "error": result.message})
        else:
            rows.append({"robot": target, "name": result.robot_name, **answer(result),
                         "reason": (result.certificate or {}).get("reason")})
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
    else:
        print("\n".join(many_lines(rows)), file=out)
    for row in rows:
        if "error" in row:
            print(f"{PROG}: error: {' '.join(row['error'].split())}", file=sys.stderr)  # it names the robot
        elif row["certified"] is False:
            print(f"{PROG}: {row['robot']}: the answer could not be certified: {row['reason']}", file=sys.stderr)
    return 2 if any("error" in row for row in rows) else (1 if any(row.get("certified") is False for row in rows)
                                                          else 0)


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
    report["status"] = result.status
    report["trusted"] = result.trusted
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
        f"status:               {report['status']}" + ("" if report["trusted"] else
                                                       " (the base parameters can be wrong)"),
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

    robot = _robot(args)
    report = base_report(robot, args.keep)
    if args.csv:
        with open(_new_file(args.csv, robot.source), "w", newline="", encoding="utf-8") as handle:
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
    if not report["trusted"]:
        print(f"{PROG}: the nullspace behind these base parameters could not be certified (pga-dyn analyze "
              "says why): they can be wrong", file=sys.stderr)
        return 1
    return 0


def _robot_arguments(parser, many: bool = False) -> None:
    parser.add_argument("robot", metavar="ROBOT_OR_PATH", nargs="+" if many else None,
                        help="a built-in robot name or a robot file: URDF, URDF+, Extended URDF (+ YAML), MJCF"
                             + ("; several: one line each, analysed in parallel (--jobs)" if many else ""))
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars (they are drawn on stderr only when it is a terminal)")
    parser.add_argument("--yaml", metavar="PATH", default=None,
                        help="the YAML of an Extended URDF's closed loops (default: robot.yaml or <stem>.yaml "
                             "beside the URDF, if there is one)")
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--floating", action="store_true", help="add a floating base (default: fixed; go2: floating)")
    base.add_argument("--fixed", action="store_true", help="fix the base even for a robot that floats by default")
    parser.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"), default=None,
                        help="gravity vector in the world frame, m/s^2 (default: an MJCF file's <option gravity>, "
                             "else {})".format(" ".join(f"{g:g}" for g in DEFAULT_GRAVITY)))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Rigid-body dynamics in projective geometric algebra: robot models "
                               "and the identifiability of their inertial parameters.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    info = sub.add_parser("info", help="show the bodies, joints and parameters of a robot",
                          description="Show what pga-dyn makes of a robot: bodies (with merged links), "
                                      "tree and loop joints, coordinates, parameter count.")
    _robot_arguments(info)
    info.set_defaults(func=_cmd_info)

    plot_parser = sub.add_parser(
        "plot", help="draw the robot, the regressor's singular values and the identifiability of each parameter",
        description="One picture in three panels: the robot at q0 with its joint axes, actuated and loop joints, "
                    "and the joints whose nullspace vectors come from each principle (shared points, fixed points, "
                    "planar rotations); the singular values of the sampled regressor (the certificate's) with the "
                    "rank at the largest gap and the threshold; each link-frame parameter of each body: identifiable "
                    "alone, in combination, or not. Needs matplotlib (pip install 'pga-dyn[plot]').")
    _robot_arguments(plot_parser)
    plot_parser.add_argument("-o", "--output", required=True, metavar="FILE",
                             help="the picture to write (png, pdf, svg: by its extension)")
    plot_parser.add_argument("--samples", type=int, default=None, metavar="N",
                             help="valid states of the sampled regressor (default: the certificate's)")
    plot_parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the samples (default 0)")
    plot_parser.set_defaults(func=_cmd_plot)

    analyze_parser = sub.add_parser(
        "analyze", help="which inertial parameters can be identified (DRNG)",
        description="The nullspace of the dynamics regressor by the generalized principles of DRNG: its "
                    "dimension, the base parameters, the vectors per principle and joint; proven on a tree, "
                    "certified against the regressor of random valid samples on loops and couplings. Exit "
                    "status 1 when the answer cannot be certified.")
    _robot_arguments(analyze_parser, many=True)
    analyze_parser.add_argument("--jobs", type=int, metavar="N", default=None,
                                help="worker processes for several robots (default: the cores this process may use; "
                                     "1: in this process)")
    certify = analyze_parser.add_mutually_exclusive_group()
    certify.add_argument("--certify", action="store_true",
                         help="check against the regressor of random valid samples and complete the basis if the "
                              "principles fall short (the default on loops and couplings; a tree's answer is proven, "
                              "this adds the check)")
    certify.add_argument("--no-certify", action="store_true",
                         help="the principles alone, in microseconds: proven on a tree, else labelled NOT CERTIFIED "
                              "(they can miss directions on loops and couplings)")
    analyze_parser.add_argument("--bounds", nargs=3, action="append", metavar=("JOINT", "LOWER", "UPPER"),
                                help="sampling range of an actuated coordinate for the certificate (implies --certify) "
                                                  "(repeat for more; default: the joint limits, or +-pi rad, +-1 m)")
    analyze_parser.add_argument("--budget", type=float, metavar="SECONDS",
                                help="time allowed to the certificate's sampling and linear algebra (default 45 s)")
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
    _identification_parsers(sub)
    compile_parser = sub.add_parser(
        "compile", help="compile every kernel into numba's on-disk cache (pip install . does it)",
        description="Compile every numba kernel of pga-dyn into numba's on-disk cache, so that no later command "
                    "compiles. `pip install .` runs it; run it after installing a wheel built on another machine, "
                    "or when building a container image.")
    compile_parser.add_argument("--quiet", action="store_true", help="no progress bars")
    compile_parser.set_defaults(func=_cmd_compile)
    return parser


def compile_kernels() -> list:
    """Compile every numba kernel of pga-dyn into numba's on-disk cache and return their names.

    Runs the paths that reach each kernel on built-in robots: the DRNG kernel and the poses at
    q0 (puma560), the sampled regressor, the certificate and the numerical baseline's pivoted
    QR (puma560), the loop
    closure (2rru_1rrs: assembly, loop Jacobians and their motion), a single-state regressor.
    Each kernel has one signature (docs/performance.md), so what is compiled here is what every
    later call loads. The cache is numba's: ``__pycache__`` beside the sources when it is
    writable, else ``NUMBA_CACHE_DIR`` or the user's cache folder. ``pip install .`` runs this
    on the files it installs (setup.py), so the installed package carries its compiled kernels
    for the machine it was installed on. Returns the qualified names of the kernels this process
    compiled or loaded from the cache (the helpers inside a kernel are named only when compiled).
    """
    import numpy as np

    import drng
    import robots
    from numba.core.registry import CPUDispatcher

    from . import regressor

    tree = robots.load("puma560")
    drng.nullspace(tree, certify=True)
    drng.numerical_nullspace(tree, samples=20)
    q = np.zeros(tree.nq)
    regressor(tree, q, q, q)
    drng.nullspace(robots.load("2rru_1rrs"))
    names = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("pga_dyn", "drng", "robots"):
            names += [f"{name}.{attr}" for attr, value in vars(module).items()
                      if isinstance(value, CPUDispatcher) and value.__module__ == name and value.signatures]
    return sorted(names)


def _cmd_compile(args, out) -> int:
    import time

    start = time.perf_counter()
    names = compile_kernels()
    print(f"{len(names)} kernels compiled or loaded from numba's cache in {time.perf_counter() - start:.1f} s",
          file=out)
    return 0


# -- identification: excite, simulate, identify (drng.identification; docs/identification.md) -----------
def _draw(label: str, done: int, total: int) -> None:
    """One progress bar on stderr, redrawn in place."""
    filled = int(30 * min(done, total) / max(total, 1))
    print(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)


def _bars(quiet: bool):
    """The listener of pga_dyn.progress for the command: a bar per step on stderr, its line ended
    when the step is done; None (silent) with --quiet or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(step, done, total):
        _draw(step, done, total)
        if done >= total:
            print(file=sys.stderr)

    return show


def _friction(values):
    """The friction terms of --friction: None when absent, DEFAULT_FRICTION when bare."""
    from drng.identification.model import DEFAULT_FRICTION

    if values is None:
        return ()
    return tuple(values) or DEFAULT_FRICTION


def _new_file(path: str, *inputs: str) -> str:
    """``path`` unless it is one of the input files (which pga-dyn never overwrites)."""
    for source in inputs:
        if source and os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise PgaDynError(f"{path}: this is an input file; write the output to a new file")
    return path


def _warn_model(robot) -> None:
    """A warning naming every body whose parameters in the model file are not physical."""
    from drng.identification import model_violations

    bad = model_violations(robot)
    if bad:
        warnings.warn(f"{robot.source or robot.name}: the model's inertial parameters are not physically consistent: "
                      + "; ".join(str(v) for v in bad), PgaDynWarning, stacklevel=2)


def excite_report(robot, excitation, path) -> dict:
    """What ``pga-dyn excite`` prints, as a JSON-ready dict."""
    box = excitation.limits
    traj = excitation.trajectory
    rate = 1 / float(traj.t[1] - traj.t[0])
    return {"robot": robot.name, "file": path, "samples": len(traj), "duration": len(traj) / rate,
            "rate": rate, "period": float(1 / excitation.fourier.frequency),
            "harmonics": excitation.fourier.a.shape[1], "coordinates": list(traj.names),
            "parameters": list(excitation.model.names), "condition_number": excitation.cond,
            "condition_number_start": excitation.cond_start, "iterations": excitation.iterations,
            "max_cond_jp": excitation.max_cond_jp,
            "limits": {"position": box.position.tolist(), "velocity": box.velocity.tolist(),
                       "acceleration": box.acceleration.tolist()}}


def _cmd_excite(args, out) -> int:
    import json

    from drng.identification import excite

    robot = _robot(args)
    excitation = excite(robot, duration=args.duration, rate=args.rate, period=args.period, harmonics=args.harmonics,
                        friction=_friction(args.friction), armature=args.armature, bounds=_bounds(args.bounds),
                        velocity=args.velocity, acceleration=args.acceleration, seed=args.seed,
                        max_cond=args.max_cond, iterations=args.iterations)
    excitation.trajectory.write(_new_file(args.output, robot.source))
    report = excite_report(robot, excitation, args.output)
    if args.json:
        json.dump(report, out, indent=2)
        out.write("\n")
        return 0
    lines = [f"robot:            {robot.name}",
             f"trajectory:       {report['file']}: {report['samples']} samples, {report['duration']:g} s at "
             f"{report['rate']:g} Hz; Fourier series, period {report['period']:g} s, {report['harmonics']} harmonics",
             f"condition number: {report['condition_number']:.4g} (column-scaled regressor of {len(report['parameters'])} "
             f"parameters; random start {report['condition_number_start']:.4g}, {report['iterations']} iterations)"]
    if robot.constrained:
        lines.append(f"assembly:         every sample assembled, cond(J_p) <= {report['max_cond_jp']:.3g} "
                     f"(limit {args.max_cond:g})")
    rows = [(name, f"[{lo:.4g}, {hi:.4g}]", _num(v), _num(a)) for name, (lo, hi), v, a in
            zip(report["coordinates"], report["limits"]["position"], report["limits"]["velocity"],
                report["limits"]["acceleration"])]
    lines += ["", "Limits (respected at every sample)"]
    lines += _table(("coordinate", "position", "velocity", "acceleration"), rows)
    print("\n".join(lines), file=out)
    return 0


def _cmd_simulate(args, out) -> int:
    from drng.identification import read_trajectory, simulate

    robot = _robot(args)
    _warn_model(robot)
    traj = read_trajectory(robot, args.trajectory, cutoff=args.cutoff)
    extras = {term: value for term, value in (("viscous", args.viscous), ("coulomb", args.coulomb),
                                              ("offset", args.offset), ("armature", args.armature)) if value}
    data, sigma = simulate(robot, traj, extras=extras, noise=args.noise, seed=args.seed)
    data.write(_new_file(args.output, args.trajectory, robot.source))
    print(f"robot:    {robot.name}", file=out)
    print(f"data:     {args.output}: {len(data)} samples of {', '.join(data.names)} (tau: the model's forces"
          f"{', ' + ', '.join(f'{k} {v:g}' for k, v in extras.items()) if extras else ''})", file=out)
    print(f"noise:    {args.noise:g} of each force's RMS: standard deviation " +
          ", ".join(f"{s:.4g}" for s in sigma), file=out)
    return 0


def identify_lines(report: dict) -> list:
    """The lines ``pga-dyn identify`` prints for a :func:`drng.identification.report`."""
    lines = [f"robot:            {report['robot']}",
             f"data:             {report['data']}: {report['samples']} samples; qd, qdd {report['derivatives']}",
             f"estimate:         {report['method'].upper()} of {report['parameters']} parameters (base inertial"
             f"{' + ' + str(len(report['extras'])) + ' friction/armature' if report['extras'] else ''}); condition "
             f"number {report['condition_number']:.4g}; variance factor {report['variance_factor']:.3g}",
             "noise std:        " + ", ".join(f"{s:.4g}" for s in report["noise_std"]),
             "residual RMS:     " + ", ".join(f"{s:.4g}" for s in report["residual_rms"])]
    if "held_out" in report:
        lines.append(f"held-out RMS:     " + ", ".join(f"{s:.4g}" for s in report["held_out"]["residual_rms"])
                     + f" ({report['held_out']['data']})")
    rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}", f"{100 * p['relative_std']:.3g}",
             _num(p["model_value"])) for p in report["base"]]
    lines += ["", "Identified parameters (std: standard deviation; model: the model file's value, friction 0)"]
    lines += _table(("parameter", "estimate", "std", "std %", "model"), rows)
    full = report.get("full")
    if full:
        label = {"consistent": "physically consistent estimate (LMI, solver " + full["solver"] + ")",
                 "map": "MAP estimate"}[full["method"]]
        lines += ["", f"Full parameters: {label}; pseudo-inertia smallest eigenvalue per body: " +
                  ", ".join(f"{b} {e:.3g}" for b, e in full["min_pseudo_inertia_eigenvalue"].items())]
        if full["violations"]:
            lines.append("  NOT physically consistent: " + "; ".join(full["violations"]))
        if "held_out_residual_rms" in full:
            lines.append("  held-out RMS: " + ", ".join(f"{s:.4g}" for s in full["held_out_residual_rms"]))
        rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}" if "std" in p else "-") for p in full["parameters"]]
        lines += _table(("parameter", "value", "std"), rows)
    return lines


def _cmd_identify(args, out) -> int:
    import json

    from drng.identification import (consistent_estimate, default_prior, identify, map_estimate,
                                     read_trajectory, report, write_urdf)
    from drng.identification.results import plot

    robot = _robot(args)
    if args.output and not (args.consistent or args.map):
        raise PgaDynError("-o writes identified inertials: it needs full parameters, --consistent (or --map)")
    _warn_model(robot)
    data = read_trajectory(robot, args.data, cutoff=args.cutoff, require_tau=True)
    test = read_trajectory(robot, args.test, cutoff=args.cutoff, require_tau=True) if args.test else None
    est = identify(robot, data, friction=_friction(args.friction), armature=args.armature, weighted=not args.ols)
    full = None
    if args.consistent or args.map:
        prior = default_prior(est.model, data, relative=args.prior_std)
        full = consistent_estimate(est, prior) if args.consistent else map_estimate(est, prior)
    result = report(est, full, test)
    if args.output:
        result["urdf"] = write_urdf(robot, full.phi, _new_file(args.output, robot.source, args.data))
    if args.plot:
        result["plot"] = plot(est, _new_file(args.plot, robot.source, args.data), test)
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = identify_lines(result)
        lines += [f"written:          {result[k]}" for k in ("urdf", "plot") if k in result]
        print("\n".join(lines), file=out)
    return 0


def _identification_parsers(sub) -> None:
    """The subcommands excite, simulate and identify."""
    excite_parser = sub.add_parser(
        "excite", help="an exciting trajectory (Fourier series, optimised condition number)",
        description="A periodic trajectory of the actuated coordinates (finite Fourier series) inside position, "
                    "velocity and acceleration limits, optimised to minimise the condition number of the "
                    "column-scaled regressor of the base parameters (and friction/armature columns); for closed "
                    "loops every sample assembles. Writes t, q_NAME, qd_NAME, qdd_NAME as CSV or NPZ.")
    _robot_arguments(excite_parser)
    excite_parser.add_argument("-o", "--output", required=True, metavar="FILE", help="trajectory file (.csv or .npz)")
    excite_parser.add_argument("--duration", type=float, default=20.0, help="seconds (default 20)")
    excite_parser.add_argument("--rate", type=float, default=200.0, help="samples per second (default 200)")
    excite_parser.add_argument("--period", type=float, default=10.0, help="period of the series, s (default 10)")
    excite_parser.add_argument("--harmonics", type=int, default=5, help="harmonics per coordinate (default 5)")
    excite_parser.add_argument("--velocity", type=float, help="velocity limit, rad/s or m/s (default 1 and 0.25)")
    excite_parser.add_argument("--acceleration", type=float,
                               help="acceleration limit, rad/s^2 or m/s^2 (default 5 and 1)")
    excite_parser.add_argument("--bounds", nargs=3, action="append", metavar=("JOINT", "LOWER", "UPPER"),
                               help="position range of an actuated coordinate (default: the joint limits)")
    excite_parser.add_argument("--iterations", type=int, default=100, help="optimiser iterations (default 100)")
    excite_parser.add_argument("--max-cond", type=float, default=30.0, help="cond(J_p) limit of closed loops")
    excite_parser.add_argument("--seed", type=int, default=0, help="random start (default 0)")
    _identification_terms(excite_parser)
    excite_parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    excite_parser.set_defaults(func=_cmd_excite)

    simulate_parser = sub.add_parser(
        "simulate", help="forces of the model along a trajectory, with friction and noise",
        description="The generalized forces of the actuated coordinates along a trajectory file (pga-dyn's TP "
                    "model with the model file's inertias), plus friction, armature and Gaussian noise: data for "
                    "pga-dyn identify without a robot.")
    _robot_arguments(simulate_parser)
    simulate_parser.add_argument("trajectory", metavar="TRAJECTORY", help="trajectory file (.csv or .npz)")
    simulate_parser.add_argument("-o", "--output", required=True, metavar="FILE", help="data file (.csv or .npz)")
    simulate_parser.add_argument("--noise", type=float, default=0.0,
                                 help="noise standard deviation as a fraction of each force's RMS (0.01: 1 %%)")
    for term, unit in (("viscous", "N m s/rad or N s/m"), ("coulomb", "N m or N"), ("offset", "N m or N"),
                       ("armature", "kg m^2 or kg")):
        simulate_parser.add_argument(f"--{term}", type=float, default=0.0, help=f"{term} term of every actuated "
                                                                                 f"coordinate ({unit})")
    simulate_parser.add_argument("--cutoff", type=float, help="filter cutoff (Hz) when qd, qdd are not in the file")
    simulate_parser.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    simulate_parser.set_defaults(func=_cmd_simulate)

    identify_parser = sub.add_parser(
        "identify", help="identify the parameters from measured forces",
        description="Least squares (weighted by default) on the base parameters, with optional friction and "
                    "armature, standard deviations, residuals; optionally the physically consistent full "
                    "parameters (LMI; needs the extra pga-dyn[identify]) written to a new URDF file.")
    _robot_arguments(identify_parser)
    identify_parser.add_argument("data", metavar="DATA", help="measurements (.csv or .npz): t, q_NAME, tau_NAME, "
                                                              "optionally qd_NAME, qdd_NAME")
    _identification_terms(identify_parser)
    identify_parser.add_argument("--ols", action="store_true", help="ordinary least squares (default: weighted)")
    identify_parser.add_argument("--cutoff", type=float, help="filter cutoff, Hz, when qd, qdd are derived from q "
                                                              "(default: 0.05 times the sample rate)")
    full = identify_parser.add_mutually_exclusive_group()
    full.add_argument("--consistent", action="store_true",
                      help="full parameters with positive semidefinite pseudo-inertias, closest to the prior")
    full.add_argument("--map", action="store_true", help="full parameters: the MAP estimate with the prior")
    identify_parser.add_argument("--prior-std", type=float, default=0.5,
                                 help="prior standard deviation relative to the model file's values (default 0.5)")
    identify_parser.add_argument("--test", metavar="FILE", help="held-out measurements to predict")
    identify_parser.add_argument("-o", "--output", metavar="URDF", help="write the identified model to this new file")
    identify_parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    identify_parser.add_argument("--json", action="store_true", help="print the results as JSON")
    identify_parser.set_defaults(func=_cmd_identify)


def _identification_terms(parser) -> None:
    parser.add_argument("--friction", nargs="*", choices=("viscous", "coulomb", "offset"), metavar="TERM",
                        help="friction columns per actuated coordinate: viscous, coulomb, offset "
                             "(bare --friction: viscous coulomb)")
    parser.add_argument("--armature", action="store_true", help="a rotor inertia column per actuated coordinate")


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
            with reporting(_bars(getattr(args, "quiet", False))):
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
    except OSError as exc:  # an output file that cannot be written (no such folder, no permission, disk full)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{PROG}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
