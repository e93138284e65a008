"""Acceleration-based against energy-based identification under position and torque noise, in
the spirit of Table II of Martinez, Tonneau and Mastalli (Bayesian identification).

Run: PYTHONPATH=. python benchmarks/noise_sweep.py [--seeds N] [--windows S ...] [--mujoco] [--quick]

pga-dyn data: the UR5 of example-robot-data with viscous and Coulomb friction on every joint, on
its optimised exciting trajectory (``excite``, 20 s at 200 Hz); the forces of ``simulate`` with
white noise of 1, 5 or 10 % of each joint's RMS force, the positions with white noise of 0,
1e-4, 1e-3, 1e-2 or 0.1 rad; t, q and tau handed to ``trajectory`` (qd and qdd derived with the
cutoff chosen from the spectrum of q), then

* acceleration-based: ``identify`` (WLS on tau = W(q, qd, qdd) beta, the CLI's default), and
* energy-based: ``identify_energy`` (WLS on the work over windows, no qdd),

with the same identification model (48 parameters). Printed per cell: the relative error of the
base parameters ||beta_hat - beta|| / ||beta|| and the median of |beta_hat - beta| / std (0.67 for
honest standard deviations), each the median over ``--seeds`` noise draws.

``--mujoco``: the same comparison on MuJoCo logs (``benchmarks/mujoco_logs.py``: the UR5 with
armature and viscous damping tracking the trajectory at 1 kHz, 18-bit encoder, noise on q and
1 % on tau; identification model with viscous, Coulomb and armature terms).
``--windows``: the energy estimate for several window lengths (s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests"), HERE]

#: Position noise (rad) and torque noise (fraction of each joint's RMS force) of the sweep.
POSITION_NOISE = (0.0, 1e-4, 1e-3, 1e-2, 0.1)
TORQUE_NOISE = (0.01, 0.05, 0.10)
#: Friction of the simulated arm (viscous N m s/rad, Coulomb N m).
FRICTION = {"viscous": np.array([1.0, 1.5, 0.8, 0.3, 0.2, 0.25]), "coulomb": np.array([2.0, 3.0, 1.5, 0.6, 0.5, 0.4])}
#: Position noise of the MuJoCo logs (rad, on top of the 18-bit encoder).
MUJOCO_NOISE = (1e-5, 1e-4, 1e-3)


def scores(est, beta) -> tuple:
    """(relative base-parameter error, median |error| / std) of an estimate."""
    error = est.beta - beta
    return float(np.linalg.norm(error) / np.linalg.norm(beta)), float(np.median(np.abs(error) / est.std))


def compare(robot, model, data, beta, windows) -> dict:
    """{method: (error, median |error|/std)} of the acceleration-based and the energy-based
    estimates of ``data``; a method that refuses the data scores (nan, nan)."""
    from identification import identify, identify_energy
    from pga_dyn.errors import PgaDynError

    out = {}
    methods = [("acceleration", lambda: identify(robot, data, model=model))]
    methods += [(f"energy {w:g} s", lambda w=w: identify_energy(robot, data, model=model, window=w)) for w in windows]
    for name, run in methods:
        try:
            out[name] = scores(run(), beta)
        except PgaDynError as exc:
            print(f"  {name}: {exc}")
            out[name] = (np.nan, np.nan)
    return out


def ur5():
    from oracle import erd_path

    import robots

    return robots.load_urdf(erd_path("ur_description/urdf/ur5_robot.urdf"))


def simulated(seeds: int, windows, position_noise, torque_noise) -> list:
    """Rows (position noise, torque noise, {method: (error, median |error|/std)}) on pga-dyn's data."""
    import pga_dyn
    from identification import excite, identification_model, simulate, trajectory

    robot = ur5()
    model = identification_model(robot, friction=True)
    traj = excite(robot, model=model, seed=0, iterations=20).trajectory
    clean, _ = simulate(robot, traj, extras=FRICTION)
    beta = model.values(model.theta(pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)), FRICTION))
    rms = np.sqrt(np.mean(clean.tau**2, axis=0))
    rows = []
    for sq in position_noise:
        for st in torque_noise:
            draws = []
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                q = traj.q + sq * rng.standard_normal(traj.q.shape)
                tau = clean.tau + st * rms * rng.standard_normal(clean.tau.shape)
                data = trajectory(robot, traj.t, q, tau=tau, source=f"noise {sq:g} rad, {100 * st:g} %")
                draws.append(compare(robot, model, data, beta, windows))
            cell = {name: tuple(np.nanmedian([d[name][k] for d in draws]) for k in range(2)) for name in draws[0]}
            rows.append((sq, st, cell))
            print(
                f"q noise {sq:g} rad, tau noise {100 * st:g} %: "
                + "; ".join(f"{name} {100 * e:.3g} % ({z:.2f})" for name, (e, z) in cell.items()),
                flush=True,
            )
    return rows


def mujoco(windows, position_noise=MUJOCO_NOISE) -> list:
    """Rows (position noise, 0.01, {method: ...}) on MuJoCo logs of the UR5 (viscous damping and
    armature, no dry friction) tracking its optimised trajectory."""
    import mujoco_logs as ml

    import pga_dyn
    import robots
    from identification import excite, identification_model, read_trajectory

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ur5.xml")
        with open(path, "w") as f:
            f.write(ml.ur5_mjcf(frictionloss=None))
        robot = robots.load_file(path)
        model = identification_model(robot, friction=("viscous", "coulomb"), armature=True)
        ref = excite(robot, model=model, duration=20, rate=1000, iterations=10, seed=0).trajectory
        record = ml.track(ml.ur5_mjcf(frictionloss=None), ref.t, ref.q, ref.qd, ref.qdd)
        phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))
        beta = model.values(model.theta(phi, {"viscous": ml.DAMPING, "armature": ml.ARMATURE}))
        for sq in position_noise:
            csv = ml.write_csv(
                os.path.join(folder, "data.csv"), ml.log(record, seed=0, q_noise=sq), robot.actuated_names
            )
            cell = compare(robot, model, read_trajectory(robot, csv, require_tau=True), beta, windows)
            rows.append((sq, 0.01, cell))
            print(
                f"MuJoCo, q noise {sq:g} rad + 18-bit encoder, tau noise 1 %: "
                + "; ".join(f"{name} {100 * e:.3g} % ({z:.2f})" for name, (e, z) in cell.items()),
                flush=True,
            )
    return rows


def table(rows) -> str:
    """A markdown table of the rows: one line per noise level, error and median |error|/std per method."""
    names = list(rows[0][2])
    lines = [
        "| q noise (rad) | tau noise | " + " | ".join(f"{n}: error | {n}: med |err|/std" for n in names) + " |",
        "|---|---|" + "---|---|" * len(names),
    ]
    for sq, st, cell in rows:
        lines.append(
            f"| {sq:g} | {100 * st:g} % | " + " | ".join(f"{100 * e:.3g} % | {z:.2f}" for e, z in cell.values()) + " |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    from identification.energy import WINDOW

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="noise draws per cell (default 3)")
    parser.add_argument("--windows", type=float, nargs="+", default=[WINDOW], help="energy windows (s)")
    parser.add_argument("--mujoco", action="store_true", help="also the MuJoCo logs")
    parser.add_argument("--quick", action="store_true", help="one seed, two noise levels (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        rows = simulated(1, args.windows, (0.0, 1e-3), (0.01,))
    else:
        rows = simulated(args.seeds, args.windows, POSITION_NOISE, TORQUE_NOISE)
    print("\n" + table(rows))
    if args.mujoco:
        print("\n" + table(mujoco(args.windows, MUJOCO_NOISE[:1] if args.quick else MUJOCO_NOISE)))


if __name__ == "__main__":
    main()
