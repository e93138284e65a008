"""``pga-dyn analyze``: which inertial parameters can be identified (``drng.analyze`` for one
robot, ``drng.nullspaces`` for several)."""

from __future__ import annotations

import sys

from ..errors import PgaDynError
from . import common, legged


def register(sub) -> None:
    parser = sub.add_parser(
        "analyze",
        help="which inertial parameters can be identified (DRNG)",
        description="The nullspace of the dynamics regressor by the generalized principles of DRNG: its "
        "dimension, the base parameters, the vectors per principle and joint; proven on a tree, "
        "certified against the regressor of random valid samples on loops and couplings. Exit "
        "status 1 when the answer cannot be certified.",
    )
    common.robot_arguments(parser, many=True)
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        default=None,
        help="worker processes for several robots (default: the cores this process may use; 1: in this process)",
    )
    certify = parser.add_mutually_exclusive_group()
    certify.add_argument(
        "--certify",
        action="store_true",
        help="check against the regressor of random valid samples and complete the basis if the "
        "principles fall short (the default on loops and couplings; a tree's answer is proven, "
        "this adds the check)",
    )
    certify.add_argument(
        "--no-certify",
        action="store_true",
        help="the principles alone, in microseconds: proven on a tree, else labelled NOT CERTIFIED "
        "(they can miss directions on loops and couplings)",
    )
    parser.add_argument(
        "--bounds",
        nargs=3,
        action="append",
        metavar=("JOINT", "LOWER", "UPPER"),
        help="sampling range of an actuated coordinate for the certificate (implies --certify) "
        "(repeat for more; default: the joint limits, or +-pi rad, +-1 m)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="time allowed to the certificate's sampling and linear algebra (default 45 s)",
    )
    parser.add_argument(
        "--per-parameter",
        action="store_true",
        help="classify each link-frame parameter [m, mc, I] of each body: "
        "identifiable alone, in combination, or unidentifiable",
    )
    parser.add_argument(
        "--branch",
        type=int,
        metavar="K",
        help="at a singular reference configuration, answer for assembly branch K (0: the default; "
        "the report lists the dimension on each branch that meets there)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    legged.contact_arguments(parser, identify=False)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    import drng

    certify = False if args.no_certify else (True if args.certify or args.bounds else None)
    if args.budget is not None and not args.budget > 0:
        raise PgaDynError(f"--budget must be a positive number of seconds, got {args.budget}")
    if args.jobs is not None and args.jobs < 1:
        raise PgaDynError(f"--jobs must be a positive number of worker processes, got {args.jobs}")
    if args.contacts:
        return legged.analyze(args, out)
    if len(args.robot) > 1:
        if args.branch is not None or args.reference is not None:
            raise PgaDynError("--branch and --reference take one robot")
        return run_many(args, certify, out)
    analysis = drng.analyze(
        common.loader(args)(args.robot[0]),
        certify,
        args.per_parameter,
        common.bounds(args.bounds),
        args.budget,
        args.branch,
        common.reference(args),
    )
    report = analysis.report()
    if args.json:
        common.print_json(report, out)
    else:
        print(analysis.text(), file=out)
    if report["certified"] is False:
        print(f"{common.PROG}: the answer could not be certified: {report['certificate']['reason']}", file=sys.stderr)
        return 1
    return 0


def run_many(args, certify, out) -> int:
    """``pga-dyn analyze A B ...``: :func:`drng.nullspaces` of the robots (``--jobs`` workers),
    one line each, or a JSON list (``drng.analysis.batch_report``). Exit status 2 when a robot is
    refused, else 1 when an answer cannot be certified."""
    import drng
    from drng.analysis import batch_report, batch_text

    if args.per_parameter:
        raise PgaDynError("--per-parameter takes one robot")
    options = {"certify": certify, "bounds": common.bounds(args.bounds)}
    if args.budget is not None:
        options["budget"] = args.budget
    results = drng.nullspaces(args.robot, common.loader(args), jobs=args.jobs, errors="collect", **options)
    rows = batch_report(args.robot, results)
    if args.json:
        common.print_json(rows, out)
    else:
        print(batch_text(rows), file=out)
    for row in rows:
        if "error" in row:
            common.error(row["error"])  # it names the robot
        elif row["certified"] is False:
            print(f"{common.PROG}: {row['robot']}: the answer could not be certified: {row['reason']}", file=sys.stderr)
    return (
        2 if any("error" in row for row in rows) else (1 if any(row.get("certified") is False for row in rows) else 0)
    )
