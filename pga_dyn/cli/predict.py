"""``pga-dyn predict``: the forces of a new log predicted by an identified model, from the files
``pga-dyn identify -o`` wrote (``identification.saved_model``)."""

from __future__ import annotations

from . import common, reading


def register(sub) -> None:
    parser = sub.add_parser(
        "predict",
        help="predict the forces of a log with an identified model and compare them with the measured ones",
        description="Predict the forces of a log from a model file written by pga-dyn identify -o and its "
        "sidecar FILE.pga-dyn.json (the terms, the estimate, the delay, the drive gains; without a sidecar, the "
        "file's own inertial parameters), and give the relative residual error per coordinate: the figures of "
        "pga-dyn identify --test, without refitting.",
    )
    common.robot_arguments(parser)
    parser.add_argument("data", metavar="DATA", nargs="+", help="the log(s) to predict, read like identify's DATA")
    parser.add_argument(
        "--cutoff", type=float, help="filter cutoff, Hz, when qd, qdd are derived from q (default: from the spectrum)"
    )
    reading.log_options(parser)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def run(args, out) -> int:
    from identification import saved_model

    robot = common.robot(args)
    saved = saved_model(robot, args.robot)
    if args.gains is None and saved.gains is not None:
        args.gains = [str(g) for g in saved.gains]
    result = saved.report(reading.read_data(robot, args.data, args))
    if args.json:
        common.print_json(result, out)
        return 0
    names = result["coordinates"]
    lines = [
        f"model:            {result['model']} ({result['estimate'].upper()})",
        f"data:             {result['data']}: {result['samples']} samples"
        + (f"; forces advanced by {1e3 * result['delay']:.3g} ms (the model's delay)" if result["delay"] else ""),
        "coordinates:      " + ", ".join(names),
        "RRE %:            " + ", ".join(f"{v:.3g}" for v in result["rre_%"]),
        "residual RMS:     " + ", ".join(f"{v:.4g}" for v in result["residual_rms"]),
    ]
    print("\n".join(lines), file=out)
    return 0
