"""``pga-dyn identify``: the parameters from measured forces (``drng.identification``,
docs/identification.md)."""

from __future__ import annotations

from ..errors import PgaDynError
from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "identify", help="identify the parameters from measured forces",
        description="Least squares (weighted by default) on the base parameters, with optional friction and "
                    "armature, standard deviations, residuals; optionally the physically consistent full "
                    "parameters (LMI; needs the extra pga-dyn[identify]) written to a new URDF file.")
    common.robot_arguments(parser)
    parser.add_argument("data", metavar="DATA", nargs="+",
                        help="measurements (.csv, .npz, or a ROS bag: .bag, .db3, .mcap, rosbag2 folder): t, q_NAME, "
                             "tau_NAME (or current_NAME with --gains), optionally qd_NAME, qdd_NAME; other columns "
                             "are ignored and named. Several files: experiments combined in one estimate, each "
                             "differentiated on its own")
    common.identification_terms(parser)
    parser.add_argument("--ols", action="store_true", help="ordinary least squares (default: weighted)")
    parser.add_argument("--cutoff", type=float, help="filter cutoff, Hz, when qd, qdd are derived from q "
                                                     "(default: chosen from the spectrum of q)")
    log_options(parser)
    full = parser.add_mutually_exclusive_group()
    full.add_argument("--consistent", action="store_true",
                      help="full parameters with positive semidefinite pseudo-inertias, closest to the prior")
    full.add_argument("--map", action="store_true", help="full parameters: the MAP estimate with the prior")
    parser.add_argument("--prior-std", type=float, default=0.5,
                        help="prior standard deviation relative to the model file's values (default 0.5)")
    parser.add_argument("--test", metavar="FILE", nargs="+", help="held-out measurements to predict (read like DATA)")
    parser.add_argument("-o", "--output", metavar="URDF", help="write the identified model to this new file")
    parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def log_options(parser) -> None:
    """How the files are read: column map, time unit, drive gains, window, trimming, decimation, bag topic."""
    group = parser.add_argument_group("data as robots log them (every file, DATA and --test)")
    group.add_argument("--columns", nargs="+", metavar="OURS=YOURS",
                       help="your column names: q_{name}=pos_{name} for every actuated coordinate NAME ({index}: "
                            "its number from 1), q_NAME=POS1 for one, t=time; kinds q, qd, qdd, tau, current "
                            "(NPZ: whole arrays, q=position)")
    group.add_argument("--time-scale", type=float, default=1.0, metavar="SECONDS",
                       help="seconds per unit of the time column (1e-9 for nanosecond stamps; default 1)")
    group.add_argument("--gains", nargs="+", metavar="GAIN",
                       help="forces from motor currents: tau = gain x current_NAME, one gain per actuated "
                            "coordinate in order, or NAME=GAIN; gain = the motor's torque constant x the gear ratio "
                            "(joint torque per ampere, N m/A or N/A)")
    group.add_argument("--window", nargs=2, type=float, metavar=("T0", "T1"),
                       help="only the samples from T0 to T1 seconds after each file's first sample")
    group.add_argument("--trim", type=float, default=0.0, metavar="SECONDS",
                       help="drop this many seconds at both ends of each file, after the derivatives (default 0)")
    group.add_argument("--decimate", type=int, default=1, metavar="N",
                       help="keep every N-th sample after a zero-phase anti-aliasing filter on q, qd, qdd and tau "
                            "alike, after the derivatives (default 1)")
    group.add_argument("--topic", help="the sensor_msgs/JointState topic of a ROS bag (default: its only one)")


def read(robot, paths, args):
    """The files ``paths`` read with the command's options, combined into one trajectory."""
    from drng.identification import combine, read_trajectory

    return combine([read_trajectory(robot, path, cutoff=args.cutoff, require_tau=True, columns=args.columns,
                                    time_scale=args.time_scale, gains=args.gains, window=args.window, trim=args.trim,
                                    decimate=args.decimate, topic=args.topic) for path in paths])


def run(args, out) -> int:
    import json

    from drng.identification import (consistent_estimate, default_prior, identify, map_estimate, report,
                                     report_text, write_urdf)
    from drng.identification.diagnostics import plot

    robot = common.robot(args)
    if args.output and not (args.consistent or args.map):
        raise PgaDynError("-o writes identified inertials: it needs full parameters, --consistent (or --map)")
    common.warn_model(robot)
    data = read(robot, args.data, args)
    test = read(robot, args.test, args) if args.test else None
    est = identify(robot, data, friction=common.friction(args.friction), armature=args.armature,
                   weighted=not args.ols)
    full = None
    if args.consistent or args.map:
        prior = default_prior(est.model, data, relative=args.prior_std)
        full = consistent_estimate(est, prior) if args.consistent else map_estimate(est, prior)
    result = report(est, full, test)
    if args.output:
        result["urdf"] = write_urdf(robot, full.phi, common.new_file(args.output, robot.source, *args.data))
    if args.plot:
        result["plot"] = plot(est, common.new_file(args.plot, robot.source, *args.data), test)
    reading = [f"{label}: {note}" for label, traj in (("data", data), ("held-out", test)) if traj is not None
               for note in traj.notes]
    if reading:
        result["reading"] = reading
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = report_text(result)
        lines[2:2] = [f"read:             {note}" for note in reading]
        lines += [f"written:          {result[k]}" for k in ("urdf", "plot") if k in result]
        print("\n".join(lines), file=out)
    return 0
