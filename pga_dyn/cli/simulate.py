"""``pga-dyn simulate``: forces of the model along a trajectory, with friction and noise
(``drng.identification.simulate``, docs/identification.md)."""

from __future__ import annotations

from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "simulate", help="forces of the model along a trajectory, with friction and noise",
        description="The generalized forces of the actuated coordinates along a trajectory file (pga-dyn's TP "
                    "model with the model file's inertias), plus friction, armature and Gaussian noise: data for "
                    "pga-dyn identify without a robot.")
    common.robot_arguments(parser)
    parser.add_argument("trajectory", metavar="TRAJECTORY", help="trajectory file (.csv or .npz)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="data file (.csv or .npz)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="noise standard deviation as a fraction of each force's RMS (0.01: 1 %%)")
    for term, unit in (("viscous", "N m s/rad or N s/m"), ("coulomb", "N m or N"), ("offset", "N m or N"),
                       ("armature", "kg m^2 or kg")):
        parser.add_argument(f"--{term}", type=float, default=0.0, help=f"{term} term of every actuated "
                                                                        f"coordinate ({unit})")
    parser.add_argument("--cutoff", type=float, help="filter cutoff (Hz) when qd, qdd are not in the file")
    parser.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    parser.set_defaults(func=run)


def run(args, out) -> int:
    from drng.identification import read_trajectory, simulate

    robot = common.robot(args)
    common.warn_model(robot)
    traj = read_trajectory(robot, args.trajectory, cutoff=args.cutoff)
    extras = {term: value for term, value in (("viscous", args.viscous), ("coulomb", args.coulomb),
                                              ("offset", args.offset), ("armature", args.armature)) if value}
    data, sigma = simulate(robot, traj, extras=extras, noise=args.noise, seed=args.seed)
    data.write(common.new_file(args.output, args.trajectory, robot.source))
    print(f"robot:    {robot.name}", file=out)
    print(f"data:     {args.output}: {len(data)} samples of {', '.join(data.names)} (tau: the model's forces"
          f"{', ' + ', '.join(f'{k} {v:g}' for k, v in extras.items()) if extras else ''})", file=out)
    print(f"noise:    {args.noise:g} of each force's RMS: standard deviation " +
          ", ".join(f"{s:.4g}" for s in sigma), file=out)
    return 0
