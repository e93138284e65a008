"""``pga-dyn identify``: the parameters from measured forces (``identification``,
docs/identification.md)."""

from __future__ import annotations

from ..errors import PgaDynError
from . import common, legged, reading
from .estimates import bounds, delay, terms


def register(sub) -> None:
    parser = sub.add_parser(
        "identify",
        help="identify the parameters from measured forces",
        description="Least squares (weighted by default) on the base parameters, with optional friction and "
        "armature, standard deviations, residuals; optionally the physically consistent full "
        "parameters (LMI; needs the extra 'identify': pip install '.[identify]') written to a new URDF file.",
    )
    common.robot_arguments(parser)
    parser.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="measurements (.csv, .npz, or a ROS bag: .bag, .db3, .mcap, rosbag2 folder): t, q_NAME, "
        "tau_NAME (or current_NAME with --gains), optionally qd_NAME, qdd_NAME; other columns "
        "are ignored and named. Several files: experiments combined in one estimate, each "
        "differentiated on its own",
    )
    common.identification_terms(parser)
    parser.add_argument(
        "--no-friction", action="store_true", help="no friction terms (default: chosen by cross-validation)"
    )
    parser.add_argument(
        "--no-armature",
        action="store_true",
        help="no rotor inertia column (default: --friction and --armature left out are chosen by cross-validation)",
    )
    parser.add_argument(
        "--ols", action="store_true", help="ordinary least squares (default: the estimate chosen by cross-validation)"
    )
    parser.add_argument(
        "--energy",
        action="store_true",
        help="energy-based: the work of the forces over windows of time against the change of "
        "kinetic and potential energy and the friction work, no accelerations",
    )
    parser.add_argument(
        "--energy-window", type=float, metavar="SECONDS", help="the windows of --energy (default 0.1 s)"
    )
    parser.add_argument(
        "--cutoff",
        type=float,
        help="filter cutoff, Hz, when qd, qdd are derived from q (default: chosen from the spectrum of q)",
    )
    reading.log_options(parser)
    full = parser.add_mutually_exclusive_group()
    full.add_argument(
        "--consistent",
        action="store_true",
        help="full parameters with positive semidefinite pseudo-inertias, bounded masses and extents, "
        "closest to the prior (default: the estimate chosen by cross-validation among WLS, MAP, consistent, OLS)",
    )
    full.add_argument("--map", action="store_true", help="full parameters: the MAP estimate with the prior")
    parser.add_argument(
        "--prior-std",
        type=float,
        default=0.5,
        help="prior standard deviation relative to the model file's values (default 0.5)",
    )
    parser.add_argument(
        "--mass-bounds",
        type=float,
        nargs=2,
        metavar=("LOWER", "UPPER"),
        help="--consistent: each body's mass between these factors of the model file's (default 0.5 2)",
    )
    parser.add_argument(
        "--extent",
        type=float,
        metavar="FACTOR",
        help="--consistent: each body's density inside the ellipsoid of the model file's inertia with "
        "its semi-axes times FACTOR (default 2; 0: no extent bound)",
    )
    parser.add_argument(
        "--ellipsoid",
        nargs=7,
        action="append",
        metavar=("LINK", "CX", "CY", "CZ", "AX", "AY", "AZ"),
        help="--consistent: the bounding ellipsoid of a link instead: centre and semi-axes (m) along "
        "the link frame's axes (repeat for several links)",
    )
    parser.add_argument(
        "--payload",
        nargs=2,
        metavar=("LINK", "FILE"),
        help="identify a payload rigidly attached to LINK from the loaded measurements FILE, given "
        "the parameters identified from DATA",
    )
    parser.add_argument(
        "--test",
        metavar="FILE",
        nargs="+",
        help="held-out measurements to predict, read like DATA (replaces the held-out segment)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the identified model (inertials, and friction and armature where the format "
        "holds them) to this new file, in the robot file's format (URDF or MJCF)",
    )
    hold = parser.add_mutually_exclusive_group()
    hold.add_argument(
        "--hold-out",
        type=float,
        default=0.2,
        metavar="SHARE",
        help="without --test, the share of the record held out at its end to check the estimate on "
        "(default 0.2; 0: estimate from every sample)",
    )
    hold.add_argument(
        "--no-hold-out",
        dest="hold_out",
        action="store_const",
        const=0.0,
        help="estimate from every sample (the same as --hold-out 0)",
    )
    parser.add_argument(
        "--delay",
        metavar="auto|SECONDS",
        type=delay,
        help="advance the forces by this delay of their channel behind the positions, or by the "
        "estimated one (auto), before the estimate (the report gives the estimate either way)",
    )
    parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    legged.contact_arguments(parser, identify=True)
    common.force_argument(parser)
    parser.set_defaults(func=run)


def run(args, out) -> int:
    import json

    import robots
    from identification import (
        export_text,
        identification_model,
        identify_energy,
        identify_log,
        identify_payload,
        read_trajectory,
        report,
        report_text,
    )
    from identification.diagnostics import hold_out, plot
    from identification.energy import WINDOW

    if args.contacts:
        return legged.identify(args, out)
    robot = common.robot(args)
    if args.energy and args.ols:
        raise PgaDynError("--energy is a weighted estimate (the windows' work weighed by its noise): drop --ols")
    if args.energy_window is not None and not args.energy:
        raise PgaDynError("--energy-window is the length of the windows of --energy: add --energy")
    if args.ols and (args.consistent or args.map):
        raise PgaDynError("--ols is a least-squares estimate, --consistent and --map full ones: choose one")
    if (args.armature and args.no_armature) or (args.friction is not None and args.no_friction):
        raise PgaDynError("--friction or --armature and their --no- form: choose one (neither: the selection decides)")
    inputs = (robot.source, *args.data, *(args.test or ()), *(args.payload or ())[1:])
    output = common.new_file(args.output, *inputs, force=args.force) if args.output else None
    plot_file = common.new_file(args.plot, *inputs, force=args.force) if args.plot else None
    common.warn_model(robot)
    data = reading.read_data(robot, args.data, args)
    test = reading.read_data(robot, args.test, args) if args.test else None
    kind = "consistent" if args.consistent else "map" if args.map else "ols" if args.ols else None
    failure = None
    if args.energy:
        if args.delay is not None:
            raise PgaDynError("--delay is for the acceleration-based estimate; --energy integrates the forces")
        model = identification_model(robot, **common.model_options(args))
        data, test = hold_out(data, test, args.hold_out)
        est = identify_energy(
            robot, data, window=WINDOW if args.energy_window is None else args.energy_window, model=model
        )
        result, predictor = report(est, None, test), est
    else:
        job = identify_log(
            robot,
            data,
            test,
            estimate_kind=kind,
            hold_out_share=args.hold_out,
            delay=args.delay,
            prior_std=args.prior_std,
            bounds=bounds(args),
            full=bool(args.output),
            **terms(args),
        )
        result, est, predictor = job.report(), job.estimate, job
        data, test = job.estimate.data, job.test
    if args.payload:
        loaded = read_trajectory(robot, args.payload[1], cutoff=args.cutoff, require_tau=True)
        payload = identify_payload(est, loaded, args.payload[0])
        result["payload"] = payload.report()
    if output:
        full = None if args.energy else job.full
        try:
            if full is None:
                raise PgaDynError("--energy gives base parameters only: a model file needs full parameters")
            result["written"] = job.write(
                output,
                write_mjcf=robots.write_mjcf,
                gains=reading.gains_of(robot, args.gains),
            )
        except PgaDynError as exc:  # the estimate is printed, then the reason nothing was written
            failure = PgaDynError(f"-o {output}: {exc}")
    if plot_file:
        result["plot"] = plot(predictor, plot_file, test)
    notes_read = [
        f"{label}: {note}"
        for label, traj in (("data", data), ("held-out", test))
        if traj is not None
        for note in traj.notes
    ]
    if notes_read:
        result["reading"] = notes_read
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = report_text(result)
        lines[2:2] = [f"read:             {note}" for note in notes_read]
        lines += payload.report_text() if args.payload else []
        lines += export_text(result["written"]) if "written" in result else []
        lines += [f"written:          {result['plot']}"] if "plot" in result else []
        print("\n".join(lines), file=out)
    if failure is not None:
        raise failure
    return 0
