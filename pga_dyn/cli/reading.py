"""How the identification commands read data files as robots log them: the options (column map,
time unit, drive gains, window, trimming, decimation, bag topic) and the reading
(``identification.read_trajectory`` per file, ``combine`` of the experiments)."""

from __future__ import annotations


def log_options(parser) -> None:
    """How the files are read: column map, time unit, drive gains, window, trimming, decimation, bag topic."""
    group = parser.add_argument_group("data as robots log them (every file, DATA and --test)")
    group.add_argument(
        "--columns",
        nargs="+",
        metavar="OURS=YOURS",
        help="your column names: q_{name}=pos_{name} for every actuated coordinate NAME ({index}: "
        "its number from 1), q_NAME=POS1 for one, t=time; kinds q, qd, qdd, tau, current "
        "(NPZ: whole arrays, q=position)",
    )
    group.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="seconds per unit of the time column (1e-9 for nanosecond stamps; default 1)",
    )
    group.add_argument(
        "--gains",
        nargs="+",
        metavar="GAIN",
        help="forces from motor currents: tau = gain x current_NAME, one gain per actuated "
        "coordinate in order, or NAME=GAIN; gain = the motor's torque constant x the gear ratio "
        "(joint torque per ampere, N m/A or N/A)",
    )
    group.add_argument(
        "--window",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="only the samples from T0 to T1 seconds after each file's first sample",
    )
    group.add_argument(
        "--trim",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="drop this many seconds at both ends of each file, after the derivatives (default 0)",
    )
    group.add_argument(
        "--decimate",
        type=int,
        default=1,
        metavar="N",
        help="keep every N-th sample after a zero-phase anti-aliasing filter on q, qd, qdd and tau "
        "alike, after the derivatives (default 1)",
    )
    group.add_argument("--topic", help="the sensor_msgs/JointState topic of a ROS bag (default: its only one)")


def read_data(robot, paths, args):
    """The files ``paths`` read with the command's options, combined into one trajectory."""
    from identification import combine, read_trajectory

    return combine(
        [
            read_trajectory(
                robot,
                path,
                cutoff=args.cutoff,
                require_tau=True,
                columns=args.columns,
                time_scale=args.time_scale,
                gains=args.gains,
                window=args.window,
                trim=args.trim,
                decimate=args.decimate,
                topic=args.topic,
            )
            for path in paths
        ]
    )


def gains_of(robot, gains):
    """The drive gains (n_a,) of the --gains strings, or None without them."""
    from identification.data import gain_values

    return None if gains is None else gain_values("--gains", gains, robot.actuated_names)
