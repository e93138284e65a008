"""Legged robots (issue 27): identification of the Go2 from logs pga-dyn did not make, and its speed.

Run: python benchmarks/legged.py [mujoco | speed]   (both without an argument)

**mujoco**: MuJoCo (the ``mjcf`` extra) simulates the Go2 of robots/data/go2.urdf at 1 kHz on a
floor with point feet (``benchmarks/legged_sim.py``: its own controllers and references): a
standing wobble (the trunk's six channels as multisines, the four feet pinned), hops with flight
phases, and a suspended trunk (welded in the air, legs swinging); each logged noise-free, with the
exact accelerations of MuJoCo's ``qacc`` (the ``.truth.npz`` beside the log), and with noise (1 %
of each force column's RMS on tau, f, m and qd, 1e-4 rad on q, a gyro's noise and bias; the
derivatives of the noisy log are pga-dyn's own, from the logged signals). For each log and each
sensing case (A all rows, B base rows from contact forces, C joint torques with the contact forces
projected out): the relative error of the base parameters against the model file's,
||beta - beta_true|| / ||beta_true|| (beta_true = K phi of robots/data/go2.urdf), the total mass
against the file's, the held-out joint-torque RMS against the noise floor (the torque noise's
RMS) and the held-out contact force error in % of the weight (last 20 % of each log held out);
and the model identified with the trunk clamped (the suspended log, a fixed-base Go2: the arms'
pipeline) checked on the floating held-out data. Goals: 1e-6 noise-free (A, B, C); <= 2 % (A),
<= 5 % (C) with noise; total mass within 1 % (A, B); held-out joint torque RMS within 1.2x the
noise floor; contact forces within 5 % of mg; the clamped model fails the floating check.

**speed**: ``identify_legged`` (case A, WLS, the record already read) on 20,000 samples of the
Go2 (random states with three or four feet pinned, their forces from the model file with 1 %
noise) against the peer in the same run: Pinocchio's joint-torque regressor of the free-flyer
model (``computeJointTorqueRegressor``) per sample, the feet's forces mapped by Pinocchio's frame
Jacobians, and ``numpy.linalg.lstsq`` on the base columns; best of 3. The consistent estimate
(LMIs, Clarabel) on the same record. Goals: identify under 2 s, the consistent estimate under 5 s.
One BLAS thread throughout (the default of identification).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import robots  # noqa: E402
from identification import consistent_estimate  # noqa: E402
from identification.legged import (  # noqa: E402
    identify_legged,
)

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
#: The sphere feet's radius of benchmarks/legged_sim.py (its default).
FOOT_RADIUS = 0.02


def synthetic(robot, samples, noise=0.01, seed=0):
    """A record of ``samples`` random states of the Go2, half with four feet pinned and half with
    three, with the model file's joint torques and least-norm contact forces and ``noise``
    (tests/test_legged.py's records)."""
    from test_legged import simulated

    return simulated(robot, [FEET, FEET[:3]], n=samples // 2, seed=seed, noise=noise)[0]


def peer(robot, record):
    """Pinocchio's regressor per sample, the feet's forces by its frame Jacobians, lstsq on the
    base columns (chosen once by a pivoted QR of the first 200 samples' rows): the seconds."""
    import pinocchio as pin
    from scipy.linalg import qr

    from robots.interop import pinocchio_state

    model = pin.buildModelFromUrdf(robots.data_path("go2"), pin.JointModelFreeFlyer())
    data = model.createData()
    feet = [model.getFrameId(name) for name in FEET]
    m = record.motion
    start = time.perf_counter()
    q, v, a = pinocchio_state(robot, model, m.q, m.qd, m.qdd)
    ns = len(q)
    Y = np.empty((ns, model.nv, 10 * (model.njoints - 1)))
    rhs = np.zeros((ns, model.nv))
    tau = m.tau[:, 6:]
    forces = record.wrenches[:, :, :3]
    for s in range(ns):
        Y[s] = pin.computeJointTorqueRegressor(model, data, q[s], v[s], a[s])
        pin.computeJointJacobians(model, data, q[s])
        pin.updateFramePlacements(model, data)
        rhs[s, 6:] = tau[s]
        for c, fid in enumerate(feet):
            J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
            rhs[s] += J.T @ forces[s, c]
    stacked = Y.reshape(-1, Y.shape[2])
    _, R, piv = qr(stacked[: 200 * model.nv], mode="economic", pivoting=True)
    rank = int(np.sum(np.abs(np.diag(R)) > 1e-8 * np.abs(R[0, 0])))
    np.linalg.lstsq(stacked[:, piv[:rank]], rhs.reshape(-1), rcond=None)
    return time.perf_counter() - start


def speed():
    robot = robots.load("go2")
    record = synthetic(robot, 20000)
    print("identify_legged (case A, WLS) on 20,000 samples of the Go2 (1 % noise); best of 3; goal: under 2 s\n")
    print("| samples | identify | peer (Pinocchio regressor + frame Jacobians + lstsq) | ratio | consistent (LMI) |")
    print("|---|---|---|---|---|")
    identify_legged(robot, record.part(0, 500))  # warm: the kernels
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        est = identify_legged(robot, record)
        runs.append(time.perf_counter() - start)
    start = time.perf_counter()
    consistent_estimate(est.estimate)
    t_lmi = time.perf_counter() - start
    t_peer = min(peer(robot, record) for _ in range(3))
    print(f"| {len(record)} | {min(runs):.2f} s | {t_peer:.2f} s | {min(runs) / t_peer:.2f} | {t_lmi:.2f} s |")


EXPERIMENTS = ("standing", "hops", "trot")


def logs(folder, duration=15.0):
    """The MuJoCo logs of benchmarks/legged_sim.py in ``folder`` (written when missing)."""
    import legged_sim

    if not os.path.exists(os.path.join(folder, "go2_trot_noisy.csv")):
        legged_sim.main([folder, "--duration", str(duration), "--force"])
    return folder


def base_error(robot, est):
    """||beta - K phi_file|| / ||K phi_file||, phi_file the model file's link-frame parameters."""
    import pga_dyn

    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    true = est.model.K[:, : phi.size] @ phi
    return float(np.linalg.norm(est.beta - true) / np.linalg.norm(true))


def logged_rows(est, record):
    """The right-hand side of ``est``'s rows along ``record`` from tau and the wrenches as logged."""
    from identification.legged import right_hand_side
    from identification.model import states_of

    raw = record.as_logged()
    return right_hand_side(raw, est.case, states_of(est.model.robot, raw.motion))[0]


def mujoco(folder="/tmp/pga-dyn-legged"):
    from identification.legged import estimate_report, read_legged, split

    logs(folder)
    robot = robots.load("go2")
    mass = sum(robot.inertial(i).mass for i in range(1, robot.n + 1))
    print(
        "MuJoCo Go2 logs (benchmarks/legged_sim.py, 15 s at 1 kHz each; the last 20 % held out). exact: noise-free "
        "with MuJoCo's accelerations; noise-free: pga-dyn derives the accelerations; noisy: 1 % noise on tau, f, m, qd, "
        "1e-4 rad on q, gyro noise and bias (derivatives pga-dyn's). beta error: ||beta - beta_file|| / ||beta_file||; "
        "tau RMS / floor: the held-out joint-torque RMS error over the torque noise's RMS after the smoother pga-dyn "
        "passes the forces through (worst joint; noisy logs); "
        "rows RMS / floor: the held-out residual RMS of the case's rows over the RMS of the noise of their right-hand "
        "side (the noisy log's rows against the noise-free log's, as logged, times the smoother's gain; noisy logs); "
        "force: the held-out total contact force's RMS error in % of the weight. C: the feet's frame origins held "
        "still; C, r = 2 cm: the sphere feet's lowest points (--foot-radius 0.02)\n"
    )
    print(
        "| log | case | samples fitted | base parameters | beta error | total mass (kg, file 16.085) | "
        "tau RMS / floor | rows RMS / floor | force (% mg) | verdict | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for experiment in EXPERIMENTS:
        for kind in ("exact", "", "noisy"):
            name = f"go2_{experiment}{'_' + kind if kind else ''}"
            path = os.path.join(folder, name + ".csv")
            record = read_legged(robot, path, FEET)
            rolling = split(read_legged(robot, path, FEET, radius=FOOT_RADIUS))
            fit, test = split(record)
            floor = None
            if kind == "noisy":
                truth = np.load(os.path.join(folder, name + ".truth.npz"))
                clean = np.column_stack([truth[f"tau_{j}"] for j in robot.actuated_names[6:]])
                floor = np.sqrt(np.mean((record.motion.tau[:, 6:] - clean[: len(record)]) ** 2, axis=0))
            for label, case, (fit, test) in (
                ("A", "A", (fit, test)),
                ("B", "B", (fit, test)),
                ("C", "C", (fit, test)),
                ("C, r = 2 cm", "C", rolling),
            ):
                start = time.perf_counter()
                est = identify_legged(robot, fit, case)
                seconds = time.perf_counter() - start
                rep = estimate_report(est, test)
                held = rep["held_out"]
                total = rep["total_mass"]
                ratio = "-"
                if floor is not None and "tau_rms" in held:
                    ratio = f"{max(np.array(list(held['tau_rms'].values())) / (floor * test.noise_gain)):.2f}"
                mass_text = (
                    "-" if total is None else f"{total['value']:.4f} ({100 * (total['value'] / mass - 1):+.2f} %)"
                )
                force = "-" if "force_share" not in held else f"{100 * held['force_share']:.2f}"
                rows = "-"
                if kind == "noisy":  # the rows' noise: the noisy log's rows as logged against the clean log's
                    clean = split(
                        read_legged(
                            robot,
                            os.path.join(folder, f"go2_{experiment}.csv"),
                            FEET,
                            radius=FOOT_RADIUS if "r =" in label else 0.0,
                        )
                    )[1].steady()
                    noise = logged_rows(est, test.steady()) - logged_rows(est, clean)
                    rows = f"{held['rms'] / (np.sqrt(np.mean(noise**2)) * test.noise_gain):.2f}"
                print(
                    f"| {experiment} {kind or 'noise-free'} | {label} | {len(est.record)} | "
                    f"{est.model.base.num_base_parameters} | {base_error(robot, est):.2e} | {mass_text} | {ratio} | {rows} | "
                    f"{force} | {rep['verdict']['state']} | {seconds:.2f} |",
                    flush=True,
                )
    clamped(folder, robot)


def clamped(folder, robot):
    """The legs identified with the trunk clamped (the suspended log, a fixed-base Go2: the arms'
    pipeline, its consistent estimate with a prior 30 % off the file), the trunk's parameters from
    that prior, checked on the floating held-out data of the trot against the floating estimate."""
    import pga_dyn
    from identification import consistent_estimate, default_prior, identify, read_trajectory
    from identification.legged import estimate_report, read_legged, split

    fixed = robots.load("go2", floating_base=False)
    data = read_trajectory(fixed, os.path.join(folder, "go2_suspended_noisy.csv"), require_tau=True)
    est = identify(fixed, data)
    theta0, sigma0 = default_prior(est.model, data)
    rng = np.random.default_rng(0)
    off = np.repeat(rng.uniform(0.7, 1.3, fixed.n), 10)  # a CAD model 30 % off, body by body
    full = consistent_estimate(est, prior=(theta0 * off, sigma0))
    phi_file = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))
    trunk = phi_file[0] * rng.uniform(0.7, 1.3)
    phi = np.concatenate([trunk, full.phi.reshape(-1)])
    record = read_legged(robot, os.path.join(folder, "go2_trot_noisy.csv"), FEET)
    fit, test = split(record)
    floating = identify_legged(robot, fit, "A")
    rep = estimate_report(floating, test)
    beta = floating.model.K[:, : phi.size] @ phi
    check = floating.check(test.steady(), floating.predict(test.steady(), beta))
    print(
        "\nThe trunk clamped (suspended log, noisy; its legs' consistent estimate with a prior 30 % off, the trunk from "
        "that prior) on the trot's floating held-out data, against the floating estimate (case A):\n"
    )
    print("| model | held-out residual RMS | held-out contact force error (% mg) | worst joint torque RMS (N m) |")
    print("|---|---|---|---|")
    for label, r in (("floating (trot, case A)", rep["held_out"]), ("clamped trunk", check)):
        tau = r["tau_rms"] if isinstance(r["tau_rms"], dict) else dict(zip(robot.actuated_names[6:], r["tau_rms"]))
        print(f"| {label} | {r['rms']:.3g} | {100 * r['force_share']:.2f} | {max(tau.values()):.3g} |")
    fails = check["rms"] > 2.0 * rep["fit"]["rms"]
    print(
        f"\nthe clamped model {'FAILS' if fails else 'passes'} the floating check (held-out residual over 2x the "
        f"floating fit's: {check['rms'] / rep['fit']['rms']:.1f}x)"
    )


def main(argv):
    what = argv[1:] or ["mujoco", "speed"]
    for name in what:
        {"speed": speed, "mujoco": mujoco}[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
