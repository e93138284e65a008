"""``pga-dyn excite``: an exciting trajectory (``identification.excite``, docs/identification.md);
with ``--contacts FOOT ...`` a floating robot's standing excitation (``identification.standing``)."""

from __future__ import annotations

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "excite",
        help="an exciting trajectory (Fourier series, optimised condition number)",
        description="A periodic trajectory of the actuated coordinates (finite Fourier series) inside position, "
        "velocity and acceleration limits, optimised to minimise the condition number of the "
        "column-scaled regressor of the base parameters (and friction/armature columns); for closed "
        "loops every sample assembles. Writes t, q_NAME, qd_NAME, qdd_NAME as CSV or NPZ. With --contacts, "
        "a floating robot standing on those feet: the trunk's six channels as multisines, the feet pinned, the "
        "joints by inverse kinematics, inside the friction cone and the joint limits; written as a legged log "
        "(the reference a controller tracks, with the model's torques and contact forces).",
    )
    common.robot_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="trajectory file (.csv or .npz)")
    parser.add_argument(
        "--contacts",
        nargs="+",
        metavar="FOOT",
        help="a standing excitation of a floating robot on these feet (point contact frames, links of its file)",
    )
    parser.add_argument("--duration", type=float, default=None, help="seconds (default 20; standing: 10)")
    parser.add_argument("--rate", type=float, default=200.0, help="samples per second (default 200)")
    parser.add_argument("--period", type=float, default=None, help="period of the series, s (default 10; standing: 5)")
    parser.add_argument("--harmonics", type=int, default=None, help="harmonics per coordinate (default 5; standing: 4)")
    parser.add_argument("--velocity", type=float, help="velocity limit, rad/s or m/s (default 1 and 0.25)")
    parser.add_argument("--acceleration", type=float, help="acceleration limit, rad/s^2 or m/s^2 (default 5 and 1)")
    parser.add_argument(
        "--bounds",
        nargs=3,
        action="append",
        metavar=("JOINT", "LOWER", "UPPER"),
        help="position range of an actuated coordinate (default: the joint limits)",
    )
    parser.add_argument("--iterations", type=int, default=100, help="optimiser iterations (default 100)")
    parser.add_argument(
        "--amplitudes",
        nargs=6,
        type=float,
        metavar=("X", "Y", "Z", "ROLL", "PITCH", "YAW"),
        help="with --contacts: the trunk channels' peaks, m and rad (default 0.04 0.04 0.03 0.15 0.15 0.15)",
    )
    parser.add_argument(
        "--stand",
        nargs="+",
        metavar="JOINT=ANGLE",
        help="with --contacts: the standing joint angles, rad (the others at q0; the feet level); default: "
        "the feet below where they are at q0, at 3/4 of the legs' reach below the hips",
    )
    parser.add_argument(
        "--friction-coefficient", type=float, default=0.6, help="with --contacts: the floor's mu (default 0.6)"
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=0.2,
        help="with --contacts: the friction ratio is kept below mu (1 - MARGIN) (default 0.2)",
    )
    parser.add_argument(
        "--max-cond",
        type=float,
        help="cond(J_p) limit of closed loops (default: 2.75, the distal links of a five-bar 40 "
        "degrees from collinear, or 1.5 times cond(J_p) at q0 when that is larger)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random start (default 0)")
    common.identification_terms(parser)
    parser.add_argument(
        "--coefficients",
        metavar="FILE",
        help="also write the Fourier series (frequency, q0, a, b per coordinate) that a controller "
        "replays, .json or .npz",
    )
    parser.add_argument(
        "--controller-rate",
        type=float,
        metavar="HZ",
        help="also write the trajectory sampled at the controller's rate, beside the output (FILE_<HZ>Hz.csv or .npz)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    common.force_argument(parser)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    import json
    import os

    from identification import excite, identification_model

    robot = common.robot(args)
    output = common.new_file(args.output, robot.source, force=args.force)
    if args.contacts:
        return standing(args, robot, output, out)
    coefficients = (
        common.new_file(args.coefficients, robot.source, args.output, force=args.force) if args.coefficients else None
    )
    controller_file = None
    if args.controller_rate is not None:
        stem, ext = os.path.splitext(args.output)
        controller_file = common.new_file(f"{stem}_{args.controller_rate:g}Hz{ext}", robot.source, force=args.force)
    excitation = excite(
        robot,
        duration=20.0 if args.duration is None else args.duration,
        rate=args.rate,
        period=10.0 if args.period is None else args.period,
        harmonics=5 if args.harmonics is None else args.harmonics,
        model=identification_model(robot, **common.model_options(args)),
        bounds=common.bounds(args.bounds),
        velocity=args.velocity,
        acceleration=args.acceleration,
        seed=args.seed,
        max_cond=args.max_cond,
        iterations=args.iterations,
    )
    excitation.trajectory.write(output)
    written = []
    if coefficients:
        excitation.write_coefficients(coefficients)
        written.append(f"coefficients:     {coefficients}")
    if controller_file:
        controller = excitation.at_rate(args.controller_rate)
        controller.write(controller_file)
        written.append(f"controller rate:  {controller_file}: {len(controller)} samples at {args.controller_rate:g} Hz")
    if args.json:
        json.dump(excitation.report(args.output), out, indent=2)
        out.write("\n")
        return 0
    print("\n".join(excitation.report_text(args.output) + written), file=out)
    return 0


def standing(args, robot, output, out) -> int:
    """``pga-dyn excite ROBOT --contacts FOOT ...``: identification.standing.standing_excitation."""
    import json

    from identification.standing import standing_excitation

    from ..errors import PgaDynError

    if not robot.floating_base:
        raise PgaDynError(f"--contacts: '{args.robot}' has no floating base here: add --floating")
    if args.coefficients or args.controller_rate is not None or args.bounds:
        raise PgaDynError("--contacts: --coefficients, --controller-rate and --bounds are for fixed-base robots")
    given = {"duration": args.duration, "period": args.period, "harmonics": args.harmonics}
    joints = None
    if args.stand:
        joints = {}
        for entry in args.stand:
            name, _, value = entry.partition("=")
            try:
                joints[name.strip()] = float(value)
            except ValueError:
                raise PgaDynError(f"--stand: '{entry}' is not JOINT=ANGLE (rad)") from None
    excitation = standing_excitation(
        robot,
        args.contacts,
        rate=args.rate,
        amplitudes=args.amplitudes,
        joints=joints,
        seed=args.seed,
        iterations=args.iterations,
        friction_coefficient=args.friction_coefficient,
        margin=args.margin,
        **{k: v for k, v in given.items() if v is not None},
    )
    excitation.write(output)
    if args.json:
        json.dump(excitation.report(output), out, indent=2)
        out.write("\n")
        return 0
    print("\n".join(excitation.report_text(output)), file=out)
    return 0
