"""``pga-dyn excite``: an exciting trajectory (``drng.identification.excite``, docs/identification.md)."""

from __future__ import annotations

from ..display import number, text_table
from . import common


def register(sub) -> None:
    parser = sub.add_parser(
        "excite", help="an exciting trajectory (Fourier series, optimised condition number)",
        description="A periodic trajectory of the actuated coordinates (finite Fourier series) inside position, "
                    "velocity and acceleration limits, optimised to minimise the condition number of the "
                    "column-scaled regressor of the base parameters (and friction/armature columns); for closed "
                    "loops every sample assembles. Writes t, q_NAME, qd_NAME, qdd_NAME as CSV or NPZ.")
    common.robot_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="trajectory file (.csv or .npz)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds (default 20)")
    parser.add_argument("--rate", type=float, default=200.0, help="samples per second (default 200)")
    parser.add_argument("--period", type=float, default=10.0, help="period of the series, s (default 10)")
    parser.add_argument("--harmonics", type=int, default=5, help="harmonics per coordinate (default 5)")
    parser.add_argument("--velocity", type=float, help="velocity limit, rad/s or m/s (default 1 and 0.25)")
    parser.add_argument("--acceleration", type=float, help="acceleration limit, rad/s^2 or m/s^2 (default 5 and 1)")
    parser.add_argument("--bounds", nargs=3, action="append", metavar=("JOINT", "LOWER", "UPPER"),
                        help="position range of an actuated coordinate (default: the joint limits)")
    parser.add_argument("--iterations", type=int, default=100, help="optimiser iterations (default 100)")
    parser.add_argument("--max-cond", type=float, default=30.0, help="cond(J_p) limit of closed loops")
    parser.add_argument("--seed", type=int, default=0, help="random start (default 0)")
    common.identification_terms(parser)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def excite_report(robot, excitation, path) -> dict:
    """What ``pga-dyn excite`` prints, as a JSON-ready dict."""
    box = excitation.limits
    traj = excitation.trajectory
    rate = 1 / float(traj.t[1] - traj.t[0])
    return {"robot": robot.name, "file": path, "samples": len(traj), "duration": len(traj) / rate,
            "rate": rate, "period": float(1 / excitation.fourier.frequency),
            "harmonics": excitation.fourier.a.shape[1], "coordinates": list(traj.names),
            "parameters": list(excitation.model.names), "condition_number": excitation.cond,
            "condition_number_start": excitation.cond_start, "iterations": excitation.iterations,
            "max_cond_jp": excitation.max_cond_jp,
            "limits": {"position": box.position.tolist(), "velocity": box.velocity.tolist(),
                       "acceleration": box.acceleration.tolist()}}


def run(args, out) -> int:
    import json

    from drng.identification import excite

    robot = common.robot(args)
    excitation = excite(robot, duration=args.duration, rate=args.rate, period=args.period, harmonics=args.harmonics,
                        friction=common.friction(args.friction), armature=args.armature,
                        bounds=common.bounds(args.bounds), velocity=args.velocity, acceleration=args.acceleration,
                        seed=args.seed, max_cond=args.max_cond, iterations=args.iterations)
    excitation.trajectory.write(common.new_file(args.output, robot.source))
    report = excite_report(robot, excitation, args.output)
    if args.json:
        json.dump(report, out, indent=2)
        out.write("\n")
        return 0
    lines = [f"robot:            {robot.name}",
             f"trajectory:       {report['file']}: {report['samples']} samples, {report['duration']:g} s at "
             f"{report['rate']:g} Hz; Fourier series, period {report['period']:g} s, {report['harmonics']} harmonics",
             f"condition number: {report['condition_number']:.4g} (column-scaled regressor of {len(report['parameters'])} "
             f"parameters; random start {report['condition_number_start']:.4g}, {report['iterations']} iterations)"]
    if robot.constrained:
        lines.append(f"assembly:         every sample assembled, cond(J_p) <= {report['max_cond_jp']:.3g} "
                     f"(limit {args.max_cond:g})")
    rows = [(name, f"[{lo:.4g}, {hi:.4g}]", number(v), number(a)) for name, (lo, hi), v, a in
            zip(report["coordinates"], report["limits"]["position"], report["limits"]["velocity"],
                report["limits"]["acceleration"])]
    lines += ["", "Limits (respected at every sample)"]
    lines += text_table(("coordinate", "position", "velocity", "acceleration"), rows)
    print("\n".join(lines), file=out)
    return 0
