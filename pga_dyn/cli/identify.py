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
    parser.add_argument("data", metavar="DATA", help="measurements (.csv or .npz): t, q_NAME, tau_NAME, "
                                                     "optionally qd_NAME, qdd_NAME")
    common.identification_terms(parser)
    parser.add_argument("--ols", action="store_true", help="ordinary least squares (default: weighted)")
    parser.add_argument("--energy", action="store_true",
                        help="energy-based: the work of the forces over windows of time against the change of "
                             "kinetic and potential energy and the friction work, no accelerations")
    parser.add_argument("--window", type=float, metavar="SECONDS", help="the windows of --energy (default 0.1 s)")
    parser.add_argument("--cutoff", type=float, help="filter cutoff, Hz, when qd, qdd are derived from q "
                                                     "(default: 0.05 times the sample rate)")
    full = parser.add_mutually_exclusive_group()
    full.add_argument("--consistent", action="store_true",
                      help="full parameters with positive semidefinite pseudo-inertias, bounded masses and extents, "
                           "closest to the prior")
    full.add_argument("--map", action="store_true", help="full parameters: the MAP estimate with the prior")
    parser.add_argument("--prior-std", type=float, default=0.5,
                        help="prior standard deviation relative to the model file's values (default 0.5)")
    parser.add_argument("--mass-bounds", type=float, nargs=2, metavar=("LOWER", "UPPER"),
                        help="--consistent: each body's mass between these factors of the model file's "
                             "(default 0.5 2)")
    parser.add_argument("--extent", type=float, metavar="FACTOR",
                        help="--consistent: each body's density inside the ellipsoid of the model file's inertia with "
                             "its semi-axes times FACTOR (default 2; 0: no extent bound)")
    parser.add_argument("--ellipsoid", nargs=7, action="append", metavar=("LINK", "CX", "CY", "CZ", "AX", "AY", "AZ"),
                        help="--consistent: the bounding ellipsoid of a link instead: centre and semi-axes (m) along "
                             "the link frame's axes (repeat for several links)")
    parser.add_argument("--payload", nargs=2, metavar=("LINK", "FILE"),
                        help="identify a payload rigidly attached to LINK from the loaded measurements FILE, given "
                             "the parameters identified from DATA")
    parser.add_argument("--test", metavar="FILE", help="held-out measurements to predict")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the identified model (inertials, and friction and armature where the format "
                             "holds them) to this new file, in the robot file's format (URDF or MJCF)")
    parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def ellipsoids(given) -> dict:
    """{link: (centre, semi-axes)} of the --ellipsoid arguments."""
    out = {}
    for link, *numbers in given or ():
        try:
            values = [float(v) for v in numbers]
        except ValueError:
            raise PgaDynError(f"--ellipsoid {link}: centre and semi-axes must be numbers, got {numbers}") from None
        out[link] = (values[:3], values[3:])
    return out


def bounds(args) -> dict:
    """The bounds of the consistent estimate given on the command line (the library's defaults for
    the others)."""
    given = {"ellipsoids": ellipsoids(args.ellipsoid)}
    if args.mass_bounds is not None:
        given["mass_bounds"] = tuple(args.mass_bounds)
    if args.extent is not None:
        given["extent"] = args.extent or None
    return given


def run(args, out) -> int:
    import json

    import robots
    from drng.identification import (consistent_estimate, default_prior, export_text, identification_model, identify,
                                     identify_energy, identify_payload, map_estimate, read_trajectory, report,
                                     report_text, write_model)
    from drng.identification.diagnostics import plot
    from drng.identification.energy import WINDOW

    robot = common.robot(args)
    if args.output and not (args.consistent or args.map):
        raise PgaDynError("-o writes an identified model: it needs full parameters, --consistent (or --map)")
    if args.energy and args.ols:
        raise PgaDynError("--energy is a weighted estimate (the windows' work weighed by its noise): drop --ols")
    if args.window is not None and not args.energy:
        raise PgaDynError("--window is the length of the windows of --energy: add --energy")
    common.warn_model(robot)
    data = read_trajectory(robot, args.data, cutoff=args.cutoff, require_tau=True)
    test = read_trajectory(robot, args.test, cutoff=args.cutoff, require_tau=True) if args.test else None
    model = identification_model(robot, **common.model_options(args))
    if args.energy:
        est = identify_energy(robot, data, window=WINDOW if args.window is None else args.window, model=model)
    else:
        est = identify(robot, data, model=model, weighted=not args.ols)
    full, failure = None, None
    if args.consistent or args.map:
        prior = default_prior(est.model, data, relative=args.prior_std)
        try:
            full = consistent_estimate(est, prior, **bounds(args)) if args.consistent else map_estimate(est, prior)
        except PgaDynError as exc:  # the least-squares estimate is still printed
            failure = exc
    result = report(est, full, test)
    if args.payload:
        loaded = read_trajectory(robot, args.payload[1], cutoff=args.cutoff, require_tau=True)
        payload = identify_payload(est, loaded, args.payload[0])
        result["payload"] = payload.report()
    if args.output and full is not None:
        try:
            result["written"] = write_model(full, common.new_file(args.output, robot.source, args.data),
                                            write_mjcf=robots.write_mjcf)
        except PgaDynError as exc:  # the estimate is printed, then the reason nothing was written
            failure = PgaDynError(f"-o {args.output}: {exc}")
    if args.plot:
        result["plot"] = plot(est, common.new_file(args.plot, robot.source, args.data), test)
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = report_text(result)
        lines += payload.report_text() if args.payload else []
        lines += export_text(result["written"]) if "written" in result else []
        lines += [f"written:          {result['plot']}"] if "plot" in result else []
        print("\n".join(lines), file=out)
    if failure is not None:
        raise failure
    return 0
