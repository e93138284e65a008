"""Legged robots in ``pga-dyn identify`` and ``pga-dyn analyze``: ``--contacts FOOT ...`` (and
``--case``) for a floating robot with contacts (``identification.legged``,
docs/identification.md, "Legged robots")."""

from __future__ import annotations

from ..errors import PgaDynError
from . import common


def contact_arguments(parser, identify: bool) -> None:
    """--contacts (and for identify --case)."""
    parser.add_argument(
        "--contacts",
        nargs="+",
        metavar="FOOT",
        help="the contact frames of a floating robot (links of its file, e.g. its feet): "
        + (
            "identify from a legged robot's log (t, base_x..base_qw, base_vx..base_wz, q_NAME, tau_NAME, "
            "f_FOOT_x/y/z, m_FOOT_x/y/z (the moment about the frame origin), contact_FOOT; docs/identification.md)"
            if identify
            else "which parameters each sensing case identifies, per contact mode"
        ),
    )
    parser.add_argument(
        "--flat-feet",
        action="store_true",
        help="with --contacts, the feet are flat: a foot in contact holds its orientation too (default: point feet)",
    )
    parser.add_argument(
        "--foot-radius",
        type=float,
        default=0.0,
        metavar="METRES",
        help="with --contacts, sphere feet of this radius: the contact point that far below each frame's origin",
    )
    if identify:
        parser.add_argument(
            "--case",
            choices=("A", "B", "C", "D"),
            help="with --contacts, the rows used: A joint torques and contact forces, B contact forces and base "
            "motion (the base rows), C joint torques with the contact forces projected out, D flight phases "
            "(default: A, or B or C when the log has only contact forces or only joint torques)",
        )


def floating_robot(args, target=None):
    robot = common.robot(args, target)
    if not robot.floating_base:
        raise PgaDynError(f"--contacts: '{target or args.robot}' has no floating base here: add --floating")
    return robot


def analyze(args, out) -> int:
    """``pga-dyn analyze ROBOT --contacts FOOT ...``: identification.legged.identifiability."""
    from identification.legged import identifiability, identifiability_text
    from pga_dyn.contacts import contact_frames

    if len(args.robot) > 1:
        raise PgaDynError("--contacts takes one robot")
    target = args.robot[0]
    robot = floating_robot(args, target)
    clamped = common.load(target, floating=False, gravity=tuple(robot.gravity), yaml=args.yaml)
    frames = contact_frames(robot, args.contacts, flat=args.flat_feet, radius=args.foot_radius)
    report = identifiability(robot, frames, clamped)
    if args.json:
        common.print_json(report, out)
    else:
        print("\n".join(identifiability_text(report)), file=out)
    return 0


def identify(args, out) -> int:
    """``pga-dyn identify ROBOT LOG --contacts FOOT ...``: identification.legged.identify_legged on the
    record with its last share held out (or --test), with --map or --consistent the full estimate,
    the report, and -o the full estimate (consistent unless --map) as a new robot file."""
    import robots
    from identification import consistent_estimate, map_estimate, write_model
    from identification.legged import default_case, estimate_report, identify_legged, read_legged, report_lines, split

    robot = floating_robot(args)
    if len(args.data) > 1 or (args.test and len(args.test) > 1):
        raise PgaDynError("--contacts: one log file (and one --test file)")
    inputs = (robot.source, *args.data, *(args.test or ()))
    output = common.new_file(args.output, *inputs, force=args.force) if args.output else None
    options = {"cutoff": args.cutoff, "flat": args.flat_feet, "radius": args.foot_radius}
    record = read_legged(robot, args.data[0], args.contacts, **options)
    test = read_legged(robot, args.test[0], args.contacts, **options) if args.test else None
    fit, test = (record, test) if test is not None else split(record, args.hold_out)
    friction = () if args.no_friction else common.friction(args.friction)
    est = identify_legged(
        robot, fit, args.case or default_case(record), friction, bool(args.armature), weighted=not args.ols
    )
    full = None
    if args.map:
        full = map_estimate(est.estimate)
    elif args.consistent or output:
        full = consistent_estimate(est.estimate)
    report = estimate_report(est, test, full)
    if output:
        report["written"] = write_model(full, output, write_mjcf=robots.write_mjcf)
    if args.json:
        common.print_json(report, out)
    else:
        lines = report_lines(report)
        if output:
            lines.append(f"written:          {output} (the {full.method} estimate)")
        print("\n".join(lines), file=out)
    return 0
