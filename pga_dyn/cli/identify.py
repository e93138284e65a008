"""``pga-dyn identify``: the parameters from measured forces (``drng.identification``,
docs/identification.md)."""

from __future__ import annotations

import argparse

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
    parser.add_argument("--cutoff", type=float, help="filter cutoff, Hz, when qd, qdd are derived from q "
                                                     "(default: 0.05 times the sample rate)")
    full = parser.add_mutually_exclusive_group()
    full.add_argument("--consistent", action="store_true",
                      help="full parameters with positive semidefinite pseudo-inertias, closest to the prior")
    full.add_argument("--map", action="store_true", help="full parameters: the MAP estimate with the prior")
    parser.add_argument("--prior-std", type=float, default=0.5,
                        help="prior standard deviation relative to the model file's values (default 0.5)")
    parser.add_argument("--test", metavar="FILE", help="held-out measurements to predict (replaces the held-out "
                                                       "segment)")
    hold = parser.add_mutually_exclusive_group()
    hold.add_argument("--hold-out", type=float, default=0.2, metavar="SHARE",
                      help="without --test, the share of the record held out at its end to check the estimate on "
                           "(default 0.2; 0: estimate from every sample)")
    hold.add_argument("--no-hold-out", dest="hold_out", action="store_const", const=0.0,
                      help="estimate from every sample (the same as --hold-out 0)")
    parser.add_argument("--delay", metavar="auto|SECONDS", type=delay,
                        help="advance the forces by this delay of their channel behind the positions, or by the "
                             "estimated one (auto), before the estimate (the report gives the estimate either way)")
    parser.add_argument("-o", "--output", metavar="URDF", help="write the identified model to this new file")
    parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def delay(text: str):
    """``auto`` or a number of seconds (argparse type of --delay)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number of seconds, got {text!r}") from None


def run(args, out) -> int:
    import json

    from drng.identification import (consistent_estimate, default_prior, identification_model, identify,
                                     map_estimate, read_trajectory, report, report_text, write_urdf)
    from drng.identification.diagnostics import compensate, hold_out, plot

    robot = common.robot(args)
    if args.output and not (args.consistent or args.map):
        raise PgaDynError("-o writes identified inertials: it needs full parameters, --consistent (or --map)")
    common.warn_model(robot)
    data = read_trajectory(robot, args.data, cutoff=args.cutoff, require_tau=True)
    test = read_trajectory(robot, args.test, cutoff=args.cutoff, require_tau=True) if args.test else None
    model = identification_model(robot, common.friction(args.friction), args.armature)
    shift = 0.0
    if args.delay is not None:
        data, test, shift = compensate(data, test, args.delay, model)
    data, test = hold_out(data, test, args.hold_out)
    est = identify(robot, data, model=model, weighted=not args.ols)
    full = None
    if args.consistent or args.map:
        prior = default_prior(est.model, data, relative=args.prior_std)
        full = consistent_estimate(est, prior) if args.consistent else map_estimate(est, prior)
    result = report(est, full, test, shift)
    if args.output:
        result["urdf"] = write_urdf(robot, full.phi, common.new_file(args.output, robot.source, args.data))
    if args.plot:
        result["plot"] = plot(est, common.new_file(args.plot, robot.source, args.data), test)
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = report_text(result)
        lines += [f"written:          {result[k]}" for k in ("urdf", "plot") if k in result]
        print("\n".join(lines), file=out)
    return 0
