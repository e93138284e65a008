"""``pga-dyn info``: what pga-dyn made of a robot (``pga_dyn.info``)."""

from __future__ import annotations

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "info",
        help="show the bodies, joints and parameters of a robot",
        description="Show what pga-dyn makes of a robot: bodies (with merged links), "
        "tree and loop joints, coordinates, parameter count.",
    )
    common.robot_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args, out) -> int:
    from .. import info

    robot = common.robot(args)
    if args.json:
        common.print_json(info.report(robot), out)
    else:
        print(info.text(robot), file=out)
    return 0
