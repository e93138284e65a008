"""Identification from data: its speed against a Pinocchio + numpy pipeline, and the pipeline end to
end on UR5 (example-robot-data) and the 2RRU-1RRS.

Run: python benchmarks/identify.py [speed | pipeline]   (both without an argument)

**speed** (targets of issue 22): ``identify`` (the WLS estimate from the data file's arrays:
assembly, regressor, weighted least squares; the model built before) on 20,000 samples (100 s at
200 Hz of a random exciting trajectory with viscous and Coulomb friction and 1 % noise) of
Puma560, UR5 and the 2RRU-1RRS against the peer below in the same run, the best of 3 runs each
(wall time, and in parentheses this process's CPU time: on a shared machine the wall time waits
for the other jobs, the CPU time much less); target: ratio <= 1. ``excite`` with its default options (seed 0) on Puma560, UR5, the
2RRU-1RRS and the five-bar: time, iterations, the condition number optimised and at the random
start; target: under 2 s on the 6-axis arms.

**pipeline**:

For each robot: an exciting trajectory of 20 s at 200 Hz (``excite``, 100 iterations at most;
the 2RRU-1RRS with a 2 s period and limits of 3 rad/s and 30 rad/s^2) and its condition number
against a random one of the same length; the forces of Pinocchio's RNEA (for the 2RRU-1RRS,
of its spanning tree projected on the actuated coordinates) with viscous and Coulomb friction
and 1 % noise; the WLS estimate (its time from the data file's arrays: assembly, regressor,
weighted least squares) against a peer in the same run, Pinocchio's joint-torque regressor
stacked (projected) and solved by ``numpy.linalg.lstsq`` on the base columns; the relative
error of beta; the physically consistent estimate (cvxpy + Clarabel on the p x p sufficient
statistics; the peer: the same objective written on all the weighted rows, min ||W_w K theta -
tau_w||^2 + prior, as the LMI is usually stated, with the same solver), its smallest
pseudo-inertia eigenvalue, its base error over the least-squares one and its held-out RMS over
the noise RMS. Target (issue 10): the consistent estimate in under
30 s on UR5. One BLAS thread throughout (the default of drng).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from oracle import Oracle, TreeOracle, erd_path  # noqa: E402

import robots  # noqa: E402
from identification import (  # noqa: E402
    consistent_estimate,
    default_prior,
    excite,
    identification_model,
    identify,
    random_excitation,
)
from identification.estimation import estimate  # noqa: E402
from pga_dyn.interpreted import compiled_calls  # noqa: E402
from pga_dyn.sampling import complete_states  # noqa: E402

#: The 2RRU-1RRS trajectory of the pipeline and of the speed of identify: a 2 s period, 3 rad/s, 30 rad/s^2.
PKM_LIMITS = {"period": 2.0, "velocity": 3.0, "acceleration": 30.0}


def setups(puma=False):
    if puma:
        yield "Puma560", robots.load("puma560"), Oracle(robots.load("puma560"), robots.data_path("puma560")), {}
    path = erd_path("ur_description/urdf/ur5_robot.urdf")
    ur5 = robots.load_urdf(path)
    yield "UR5", ur5, Oracle(ur5, path), {}
    pkm = robots.load("2rru_1rrs")
    yield "2RRU-1RRS", pkm, TreeOracle(pkm), PKM_LIMITS


def forces(robot, oracle, traj, seed):
    """Pinocchio's actuated forces with friction and 1 % noise, and the noise."""
    states = complete_states(robot, traj.q, traj.qd, traj.qdd)
    tau = np.array([G.T @ oracle.rnea(q, qd, qdd) for q, qd, qdd, G in zip(states.q, states.qd, states.qdd, states.G)])
    tau += 0.8 * traj.qd + 1.5 * np.sign(traj.qd)
    noise = 0.01 * np.sqrt(np.mean(tau**2, axis=0)) * np.random.default_rng(seed).standard_normal(tau.shape)
    return traj.with_tau(tau + noise), noise


def peer(robot, oracle, data, model):
    """Seconds of Pinocchio's stacked regressor (link-frame columns, projected by G) with the
    friction columns, least squares on the base columns of the model."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        start = time.perf_counter()
        states = complete_states(robot, data.q, data.qd, data.qdd)
        Y = np.array(
            [G.T @ oracle.regressor(q, qd, qdd) for q, qd, qdd, G in zip(states.q, states.qd, states.qdd, states.G)]
        )
        full = np.concatenate([Y, model.extra_columns(data.qd, data.qdd)], axis=2)[..., model.leading]
        np.linalg.lstsq(full.reshape(-1, model.num_parameters), data.tau.reshape(-1), rcond=None)
        return time.perf_counter() - start


def lmi_on_rows(est, prior, full):
    """The peer of the consistent estimate: seconds of the LMI written on every weighted row, and the
    relative distance of its theta to pga-dyn's."""
    import cvxpy as cp
    from threadpoolctl import threadpool_limits

    from identification.model import states_of
    from identification.physics import PSEUDO_BASIS

    model, data = est.model, est.data
    theta0, sigma0 = prior
    with threadpool_limits(limits=1, user_api="blas"):
        start = time.perf_counter()
        w = 1 / np.sqrt(est.variances)
        W = (model.regressor(states_of(model.robot, data)) * w[None, :, None]).reshape(-1, model.num_parameters)
        theta = cp.Variable(theta0.size)
        nphi = model.base.K.shape[1]
        constraints = [sum(theta[10 * b + k] * PSEUDO_BASIS[k] for k in range(10)) >> 0 for b in range(nphi // 10)]
        constraints += [theta[nphi:] >= 0]
        objective = cp.sum_squares(W @ model.K @ theta - (data.tau * w).reshape(-1))
        cp.Problem(cp.Minimize(objective + cp.sum_squares(cp.multiply(1 / sigma0, theta - theta0))), constraints).solve(
            solver="CLARABEL"
        )
        seconds = time.perf_counter() - start
    return seconds, np.linalg.norm(theta.value - full.theta) / np.linalg.norm(full.theta)


def speed():
    """The speed tables (module docstring)."""
    print(
        "identify on 20,000 samples (100 s at 200 Hz), WLS, friction viscous + Coulomb; best of 3 runs; "
        "target: ratio <= 1\n"
    )
    print("| robot | parameters | identify, wall (CPU) | peer (Pinocchio + lstsq) | ratio |")
    print("|---|---|---|---|---|")
    for name, robot, oracle, limits in setups(puma=True):
        model = identification_model(robot, friction=True)
        traj = random_excitation(robot, model=model, seed=1, duration=100.0, rate=200.0, **limits).trajectory
        data, _ = forces(robot, oracle, traj, 0)
        with compiled_calls():  # compiled kernels (a first call would run some as Python source)
            identify(robot, data, model=model)  # warm
        runs, cpu = [], []
        for _ in range(3):
            start, start_cpu = time.perf_counter(), time.process_time()
            identify(robot, data, model=model)
            runs.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        t_peer = min(peer(robot, oracle, data, model) for _ in range(3))
        print(
            f"| {name} | {model.num_parameters} | {min(runs):.3f} s ({min(cpu):.3f} s) | {t_peer:.3f} s | "
            f"{min(runs) / t_peer:.2f} |",
            flush=True,
        )
    print(
        "\nexcite with its default options (seed 0: 20 s at 200 Hz, period 10 s, 5 harmonics, at most 100 "
        "iterations, no friction columns); target: under 2 s on the 6-axis arms\n"
    )
    print(
        "| robot | parameters | excite, wall (CPU) | iterations | cond (optimised / random start) | "
        "max cond(J_p) / limit |"
    )
    print("|---|---|---|---|---|---|")
    path = erd_path("ur_description/urdf/ur5_robot.urdf")
    for name, robot in (
        ("Puma560", robots.load("puma560")),
        ("UR5", robots.load_urdf(path)),
        ("2RRU-1RRS", robots.load("2rru_1rrs")),
        ("five-bar", robots.load("five_bar")),
    ):
        with compiled_calls():  # compiled kernels (a first call would run some as Python source)
            excite(robot, seed=0, iterations=1)  # warm: the model and the compiled kernels
        start, start_cpu = time.perf_counter(), time.process_time()
        excitation = excite(robot, seed=0)
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        print(
            f"| {name} | {excitation.model.num_parameters} | {seconds:.2f} s ({cpu:.2f} s) | {excitation.iterations} | "
            f"{excitation.cond:.2f} / {excitation.cond_start:.2f} | "
            f"{excitation.max_cond_jp:.3f} / {excitation.max_cond:.3f} |",
            flush=True,
        )


def pipeline():
    print(
        "| robot | parameters | excite | cond (optimised / random) | WLS | peer (Pinocchio + lstsq) | ratio | "
        "beta error | consistent (Clarabel) | peer: LMI on all rows | ratio | min eig | base error / LS | "
        "held-out RMS / noise |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, robot, oracle, limits in setups():
        model = identification_model(robot, friction=True)
        start = time.perf_counter()
        excitation = excite(robot, model=model, seed=0, iterations=100, **limits)
        t_excite = time.perf_counter() - start
        random = random_excitation(robot, model=model, seed=1, **limits)
        data, _ = forces(robot, oracle, excitation.trajectory, 0)
        held, noise = forces(robot, oracle, random_excitation(robot, model=model, seed=7, **limits).trajectory, 1)
        estimate(model, data)  # warm
        start = time.perf_counter()
        est = estimate(model, data)
        t_wls = time.perf_counter() - start
        t_peer = min(peer(robot, oracle, data, model) for _ in range(2))
        phi = oracle.link_parameters().reshape(-1)
        truth = model.values(model.theta(phi, {"viscous": 0.8, "coulomb": 1.5}))
        error = np.linalg.norm(est.beta - truth) / np.linalg.norm(truth)
        theta0, sigma0 = default_prior(model, data)
        prior = (theta0 * (1 + 0.3 * np.random.default_rng(3).standard_normal(theta0.shape)), sigma0)
        start = time.perf_counter()
        full = consistent_estimate(est, prior)
        t_cons = time.perf_counter() - start
        t_rows, gap = lmi_on_rows(est, prior, full)
        ratio_base = np.linalg.norm(full.beta - truth) / np.linalg.norm(est.beta - truth)
        held_rms = np.sqrt(np.mean((held.tau - full.predict(held)) ** 2, axis=0)) / np.sqrt(np.mean(noise**2, axis=0))
        print(
            f"| {name} | {model.num_parameters} | {t_excite:.1f} s ({excitation.iterations} it.) | "
            f"{excitation.cond:.1f} / {random.cond:.1f} | {t_wls:.3f} s | {t_peer:.3f} s | {t_wls / t_peer:.2f} | "
            f"{error:.1e} | {t_cons:.2f} s | {t_rows:.2f} s (same theta to {gap:.0e}) | {t_cons / t_rows:.3f} | "
            f"{full.min_eigenvalues.min():.1e} | {ratio_base:.3f} | "
            f"{held_rms.min():.3f}-{held_rms.max():.3f} |",
            flush=True,
        )


def main():
    parts = sys.argv[1:] or ["speed", "pipeline"]
    if any(part not in ("speed", "pipeline") for part in parts):
        sys.exit("usage: python benchmarks/identify.py [speed | pipeline]")
    for k, part in enumerate(parts):
        print("" if k == 0 else "\n", end="")
        {"speed": speed, "pipeline": pipeline}[part]()


if __name__ == "__main__":
    main()
