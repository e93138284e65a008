"""``pga-dyn identify``: the parameters from measured forces (``drng.identification``,
docs/identification.md)."""

from __future__ import annotations

from ..display import number, text_table
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
    parser.add_argument("--test", metavar="FILE", help="held-out measurements to predict")
    parser.add_argument("-o", "--output", metavar="URDF", help="write the identified model to this new file")
    parser.add_argument("--plot", metavar="FILE", help="plot measured and predicted forces (matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def identify_lines(report: dict) -> list:
    """The lines ``pga-dyn identify`` prints for a :func:`drng.identification.report`."""
    lines = [f"robot:            {report['robot']}",
             f"data:             {report['data']}: {report['samples']} samples; qd, qdd {report['derivatives']}",
             f"estimate:         {report['method'].upper()} of {report['parameters']} parameters (base inertial"
             f"{' + ' + str(len(report['extras'])) + ' friction/armature' if report['extras'] else ''}); condition "
             f"number {report['condition_number']:.4g}; variance factor {report['variance_factor']:.3g}",
             "noise std:        " + ", ".join(f"{s:.4g}" for s in report["noise_std"]),
             "residual RMS:     " + ", ".join(f"{s:.4g}" for s in report["residual_rms"])]
    if "held_out" in report:
        lines.append(f"held-out RMS:     " + ", ".join(f"{s:.4g}" for s in report["held_out"]["residual_rms"])
                     + f" ({report['held_out']['data']})")
    rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}", f"{100 * p['relative_std']:.3g}",
             number(p["model_value"])) for p in report["base"]]
    lines += ["", "Identified parameters (std: standard deviation; model: the model file's value, friction 0)"]
    lines += text_table(("parameter", "estimate", "std", "std %", "model"), rows)
    full = report.get("full")
    if full:
        label = {"consistent": "physically consistent estimate (LMI, solver " + full["solver"] + ")",
                 "map": "MAP estimate"}[full["method"]]
        lines += ["", f"Full parameters: {label}; pseudo-inertia smallest eigenvalue per body: " +
                  ", ".join(f"{b} {e:.3g}" for b, e in full["min_pseudo_inertia_eigenvalue"].items())]
        if full["violations"]:
            lines.append("  NOT physically consistent: " + "; ".join(full["violations"]))
        if "held_out_residual_rms" in full:
            lines.append("  held-out RMS: " + ", ".join(f"{s:.4g}" for s in full["held_out_residual_rms"]))
        rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}" if "std" in p else "-") for p in full["parameters"]]
        lines += text_table(("parameter", "value", "std"), rows)
    return lines


def run(args, out) -> int:
    import json

    from drng.identification import (consistent_estimate, default_prior, identify, map_estimate,
                                     read_trajectory, report, write_urdf)
    from drng.identification.results import plot

    robot = common.robot(args)
    if args.output and not (args.consistent or args.map):
        raise PgaDynError("-o writes identified inertials: it needs full parameters, --consistent (or --map)")
    common.warn_model(robot)
    data = read_trajectory(robot, args.data, cutoff=args.cutoff, require_tau=True)
    test = read_trajectory(robot, args.test, cutoff=args.cutoff, require_tau=True) if args.test else None
    est = identify(robot, data, friction=common.friction(args.friction), armature=args.armature,
                   weighted=not args.ols)
    full = None
    if args.consistent or args.map:
        prior = default_prior(est.model, data, relative=args.prior_std)
        full = consistent_estimate(est, prior) if args.consistent else map_estimate(est, prior)
    result = report(est, full, test)
    if args.output:
        result["urdf"] = write_urdf(robot, full.phi, common.new_file(args.output, robot.source, args.data))
    if args.plot:
        result["plot"] = plot(est, common.new_file(args.plot, robot.source, args.data), test)
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        lines = identify_lines(result)
        lines += [f"written:          {result[k]}" for k in ("urdf", "plot") if k in result]
        print("\n".join(lines), file=out)
    return 0
