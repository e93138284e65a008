"""``pga-dyn base``: the base parameters, their expressions and values
(``drng.base_parameters``: ``BaseParameters.report()`` and ``.text()``)."""

from __future__ import annotations

import sys

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "base",
        help="the base parameters: regrouped combinations, expressions, values",
        description="The base inertial parameters beta = K phi of the certified nullspace, each named after its "
        "leading link-frame parameter, with its expression and its value for the model's inertias.",
    )
    common.robot_arguments(parser)
    parser.add_argument(
        "--keep",
        nargs="+",
        default=[],
        metavar="NAME",
        help="link-frame parameters to keep as leading parameters (e.g. m6 Izz2)",
    )
    parser.add_argument("--json", action="store_true", help="print K, names, expressions and values as JSON")
    parser.add_argument("--csv", metavar="FILE", help="also write the table to FILE as CSV")
    common.force_argument(parser)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    import drng

    robot = common.robot(args)
    csv = common.new_file(args.csv, robot.source, force=args.force) if args.csv else None
    base = drng.base_parameters(robot, keep=tuple(args.keep))
    report = base.report()
    if csv:
        write_csv(report, csv)
    if args.json:
        common.print_json(report, out)
    else:
        print(base.text(), file=out)
    if not report["trusted"]:
        print(
            f"{common.PROG}: the nullspace behind these base parameters could not be certified (pga-dyn analyze "
            "says why): they can be wrong",
            file=sys.stderr,
        )
        return 1
    return 0


def write_csv(report: dict, path: str) -> None:
    """The table of a ``BaseParameters.report()`` as CSV: name, leading parameter, body, value
    (``repr``: every digit), expression."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("name", "leading", "body", "value", "expression"))
        for name, k, value, expression in zip(
            report["names"], report["leading"], report["values"], report["expressions"]
        ):
            writer.writerow((name, report["parameter_names"][k], report["bodies"][k // 10], repr(value), expression))
