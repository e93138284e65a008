"""``pga-dyn plot``: the robot, the sampled regressor's spectrum and the identifiability of each
parameter in one picture (``drng.plot``)."""

from __future__ import annotations

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "plot",
        help="draw the robot, the regressor's singular values and the identifiability of each parameter",
        description="One picture in three panels: the robot at q0 with its joint axes, actuated and loop joints, "
        "and the joints whose nullspace vectors come from each principle (shared points, fixed points, "
        "planar rotations); the singular values of the sampled regressor (the certificate's) with the "
        "rank at the largest gap and the threshold; each link-frame parameter of each body: identifiable "
        "alone, in combination, or not. Needs matplotlib (pip install '.[plot]' in pga-dyn's checkout).",
    )
    common.robot_arguments(parser)
    parser.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the picture to write (png, pdf, svg: by its extension)"
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        metavar="N",
        help="valid states of the sampled regressor (default: the certificate's)",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the samples (default 0)")
    common.force_argument(parser)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    from drng.plot import plot

    robot = common.robot(args)
    figure = plot(
        robot, common.new_file(args.output, robot.source, force=args.force), samples=args.samples, seed=args.seed
    )
    title = figure.texts[0].get_text() if figure.texts else robot.name
    print(f"{title}: written to {args.output}", file=out)
    return 0
