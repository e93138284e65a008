"""``pga-dyn simulate``: forces of the model along a trajectory, with friction and noise
(``identification.simulate``, docs/identification.md)."""

from __future__ import annotations

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "simulate",
        help="forces of the model along a trajectory, with friction and noise",
        description="The generalized forces of the actuated coordinates along a trajectory file (pga-dyn's TP "
        "model with the model file's inertias), plus friction, armature and Gaussian noise: data for "
        "pga-dyn identify without a robot.",
    )
    common.robot_arguments(parser)
    parser.add_argument("trajectory", metavar="TRAJECTORY", help="trajectory file (.csv or .npz)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="data file (.csv or .npz)")
    parser.add_argument(
        "--noise",
        type=float,
        default=0.0,
        help="noise standard deviation as a fraction of each force's RMS (0.01: 1 %%)",
    )
    for term, unit in (
        ("viscous", "N m s/rad or N s/m"),
        ("coulomb", "N m or N"),
        ("offset", "N m or N"),
        ("armature", "kg m^2 or kg"),
    ):
        parser.add_argument(
            f"--{term}", type=float, default=0.0, help=f"{term} term of every actuated coordinate ({unit})"
        )
    parser.add_argument(
        "--coulomb-speed", type=float, metavar="V", help="the Coulomb force smooth: fc tanh(qd / V) (rad/s or m/s)"
    )
    parser.add_argument(
        "--static",
        type=float,
        default=0.0,
        metavar="FS",
        help="a Stribeck curve (fc + (fs - fc) exp(-(qd / v_s)^2)) sign(qd): its static friction fs",
    )
    parser.add_argument("--stribeck-speed", type=float, metavar="V", help="the Stribeck speed v_s (rad/s or m/s)")
    for term, unit in (("viscous", "N m s/rad or N s/m"), ("coulomb", "N m or N")):
        for side, sign in (("plus", "positive"), ("minus", "negative")):
            parser.add_argument(
                f"--{term}-{side}",
                type=float,
                default=0.0,
                help=f"{term} term of every actuated coordinate at {sign} speeds ({unit})",
            )
        parser.add_argument(
            f"--passive-{term}",
            type=float,
            default=0.0,
            help=f"{term} friction of every passive joint of the closed loops ({unit})",
        )
    parser.add_argument("--cutoff", type=float, help="filter cutoff (Hz) when qd, qdd are not in the file")
    parser.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    common.force_argument(parser)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    from identification import read_trajectory, simulate

    robot = common.robot(args)
    output = common.new_file(args.output, args.trajectory, robot.source, force=args.force)
    common.warn_model(robot)
    traj = read_trajectory(robot, args.trajectory, cutoff=args.cutoff)
    stribeck = bool(args.static or args.stribeck_speed)
    coulomb = "stribeck-coulomb" if stribeck else "coulomb-tanh" if args.coulomb_speed else "coulomb"
    extras = {
        term: value
        for term, value in (
            ("viscous", args.viscous),
            (coulomb, args.coulomb),
            ("stribeck-static", args.static),
            ("offset", args.offset),
            ("armature", args.armature),
            ("viscous+", args.viscous_plus),
            ("viscous-", args.viscous_minus),
            ("coulomb+", args.coulomb_plus),
            ("coulomb-", args.coulomb_minus),
            ("passive-viscous", args.passive_viscous),
            ("passive-coulomb", args.passive_coulomb),
        )
        if value
    }
    data, sigma = simulate(
        robot,
        traj,
        extras=extras,
        noise=args.noise,
        seed=args.seed,
        coulomb_speed=args.coulomb_speed,
        stribeck_speed=args.stribeck_speed,
    )
    data.write(output)
    print(f"robot:    {robot.name}", file=out)
    print(
        f"data:     {args.output}: {len(data)} samples of {', '.join(data.names)} (tau: the model's forces"
        f"{', ' + ', '.join(f'{k} {v:g}' for k, v in extras.items()) if extras else ''})",
        file=out,
    )
    print(
        f"noise:    {args.noise:g} of each force's RMS: standard deviation " + ", ".join(f"{s:.4g}" for s in sigma),
        file=out,
    )
    return 0
