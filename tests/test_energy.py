"""Energy-based identification (identification.energy) against independent oracles: the
energy regressor against Pinocchio's kinetic and potential energies; the work of a closed-loop
machine's actuator forces against the change of Pinocchio's energy of its spanning tree; the
parameters from Pinocchio's forces; the standard deviations against the spread of the errors."""

import json

import numpy as np
import pytest
from oracle import Oracle, TreeOracle, erd_path, pin
from test_identify import EXTRAS, PKM_LIMITS, UR5, Setup

import pga_dyn
import robots
from identification import (
    consistent_estimate,
    identification_model,
    identify_energy,
    map_estimate,
    random_excitation,
    report,
    report_text,
    simulate,
    trajectory,
)
from identification.energy import energy_equations, energy_regressor, force_noise, windows
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError
from pga_dyn.sampling import complete_states


def pinocchio_energy(oracle, q, qd) -> float:
    """Pinocchio's kinetic plus potential energy at pga-dyn's tree state (q, qd)."""
    if isinstance(oracle, TreeOracle):
        qp, vp = oracle.configuration(q), np.asarray(qd, float)
    else:
        qp, vp, _, _ = oracle.to_pinocchio(q, qd, np.zeros_like(qd))
    return pin.computeKineticEnergy(oracle.model, oracle.data, qp, vp) + pin.computePotentialEnergy(
        oracle.model, oracle.data, qp
    )


@pytest.mark.parametrize("name", ["puma560", "ur5", "2rru_1rrs", "go2"])
def test_energy_regressor_against_pinocchio(name):
    """h(q, qd) pi = Pinocchio's computeKineticEnergy + computePotentialEnergy at random tree
    states (the 2RRU-1RRS: its spanning tree; go2: a floating base, Pinocchio's free flyer)."""
    if name == "ur5":
        path = erd_path(UR5)
        robot = robots.load_urdf(path)
        oracle = Oracle(robot, path)
    elif name == "2rru_1rrs":
        robot = robots.load(name)
        oracle = TreeOracle(robot)
    else:
        robot = robots.load(name)
        oracle = Oracle(robot, robots.data_path(name))
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1.5, 1.5, (2, 30, robot.nq))
    energy = energy_regressor(robot, q, qd) @ pga_dyn.inertial_parameters(robot)
    reference = np.array([pinocchio_energy(oracle, *state) for state in zip(q, qd)])
    assert np.abs(energy - reference).max() < 1e-12 * np.abs(reference).max()
    one = energy_regressor(robot, q[0], qd[0])
    assert one.shape == (10 * robot.n,) and np.allclose(one, energy_regressor(robot, q[:1], qd[:1])[0])


def test_work_is_the_energy_change_on_a_closed_loop():
    """2RRU-1RRS: the work of the actuator forces of simulate() (noise-free) over windows of 0.1 s
    equals the change of Pinocchio's energy of the spanning tree at the assembled states (the
    constraint forces do no work), to the integration error: 1e-5 of the largest work with
    Simpson's rule, 1e-2 with the trapezoid rule on these brisk motions at 200 Hz."""
    robot = robots.load("2rru_1rrs")
    oracle = TreeOracle(robot)
    traj = random_excitation(robot, duration=4, rate=200, seed=1, **PKM_LIMITS).trajectory
    data, _ = simulate(robot, traj)
    states = complete_states(robot, data.q, data.qd, data.qdd)
    power = np.sum(data.qd * data.tau, axis=1)
    errors = {}
    for rule in ("simpson", "trapezoid"):
        starts, weights = windows(data.t, 0.1, rule)
        ends = starts + len(weights) - 1
        work = power[starts[:, None] + np.arange(len(weights))] @ weights
        change = np.array(
            [
                pinocchio_energy(oracle, states.q[e], states.qd[e])
                - pinocchio_energy(oracle, states.q[s], states.qd[s])
                for s, e in zip(starts, ends)
            ]
        )
        errors[rule] = np.abs(work - change).max() / np.abs(work).max()
    assert errors["simpson"] < 1e-5 and 1e-4 < errors["trapezoid"] < 1e-2, errors


@pytest.mark.parametrize("name", ["puma560", "ur5", "2rru_1rrs"])
def test_noise_free_recovery(name):
    """Pinocchio's forces with viscous, Coulomb, offset and armature terms on a random 20 s
    trajectory at 200 Hz (exact q, qd): the same identifiable parameters as the dynamic model (the
    armature regrouped into Izz1R, ...) to 1e-4 relative, the integration error; the work of
    every window fitted to 1e-5. The windows of a periodic motion repeat from one period to the
    next, so a period must hold more windows than parameters: 0.02 s for the PKM's 2 s period."""
    setup = Setup(name)
    model = identification_model(setup.robot, friction=("viscous", "coulomb", "offset"), armature=True)
    limits = PKM_LIMITS if name == "2rru_1rrs" else {"period": 10.0}
    traj = random_excitation(setup.robot, duration=20, rate=200, model=model, seed=3, **limits).trajectory
    window = 0.02 if name == "2rru_1rrs" else 0.1
    est = identify_energy(setup.robot, traj.with_tau(setup.forces(traj, EXTRAS)), model=model, window=window)
    truth = setup.beta(model, EXTRAS)
    assert np.linalg.norm(est.beta - truth) <= 1e-4 * np.linalg.norm(truth), est.cond
    assert np.abs(est.work_residuals).max() < 1e-5 * np.abs(est.equations.work).max()
    assert (
        est.method == "energy"
        and len(est.equations.work) == (len(traj) - 1) // round(200 * window)
        and est.window == window
    )


def test_standard_deviations_are_honest():
    """UR5, 1 % white noise on its forces (exact q, qd): over 6 noise draws the errors divided by
    their standard deviations have median |z| near 0.67 (a normal's), and the noise of each
    coordinate is found to 20 %."""
    setup = Setup("ur5")
    model = identification_model(setup.robot, friction=True)
    traj = random_excitation(setup.robot, duration=20, rate=200, model=model, seed=0).trajectory
    tau = setup.forces(traj, {"viscous": 0.6, "coulomb": 1.2})
    truth = setup.beta(model, {"viscous": 0.6, "coulomb": 1.2})
    sigma = 0.01 * np.sqrt(np.mean(tau**2, axis=0))
    z = []
    for seed in range(6):
        noisy = tau + sigma * np.random.default_rng(seed).standard_normal(tau.shape)
        est = identify_energy(setup.robot, traj.with_tau(noisy), model=model)
        z.append((est.beta - truth) / est.std)
        assert np.all(np.abs(est.sigma / sigma - 1) < 0.2), est.sigma / sigma
    assert 0.5 < np.median(np.abs(z)) < 0.85


def test_force_noise_without_a_model():
    """White noise on a smooth force with Coulomb steps: its standard deviation to 5 %."""
    t = np.arange(4000) * 0.005
    smooth = 20 * np.sin(2 * np.pi * 0.3 * t)[:, None] + 3 * np.sign(np.cos(2 * np.pi * 0.2 * t))[:, None]
    sigma = np.array([0.05, 0.5])
    tau = smooth + sigma * np.random.default_rng(0).standard_normal((4000, 2))
    assert np.allclose(force_noise(tau), sigma, rtol=0.05)


def test_full_estimates_and_report():
    """The MAP and consistent estimates take an energy estimate as they take a least-squares one;
    the report names the method."""
    robot = robots.load("puma560")
    model = identification_model(robot, friction=True)
    traj = random_excitation(robot, duration=20, rate=100, model=model, seed=2).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": 0.5, "coulomb": 1.0}, noise=0.01, seed=0)
    est = identify_energy(robot, data, model=model)
    full = consistent_estimate(est)
    assert full.min_eigenvalues.min() >= -1e-9
    assert np.all(np.isfinite(map_estimate(est).theta))
    summary = report(est, full)
    assert summary["method"] == "energy" and "ENERGY of 48 parameters" in "\n".join(report_text(summary))


def test_errors():
    robot = robots.load("puma560")
    traj = random_excitation(robot, duration=2, rate=100, seed=0).trajectory
    data, _ = simulate(robot, traj)
    with pytest.raises(PgaDynError, match="windows of 0.1 s give 19 equations for 36 parameters"):
        identify_energy(robot, data)
    with pytest.raises(PgaDynError, match="200 samples are fewer than one window of 3 s \\(301 samples\\)"):
        identify_energy(robot, data, window=3)
    with pytest.raises(PgaDynError, match="window must be a positive number"):
        identify_energy(robot, data, window=0)
    with pytest.raises(PgaDynError, match="integration rule must be one of simpson, trapezoid"):
        identify_energy(robot, data, window=0.02, rule="euler")
    with pytest.raises(PgaDynError, match="no measured tau"):
        energy_equations(identification_model(robot), traj)
    t = np.cumsum(np.random.default_rng(0).uniform(0.008, 0.013, 200))
    irregular = trajectory(robot, t, traj.q[:200], traj.qd[:200], traj.qdd[:200], data.tau[:200])
    with pytest.raises(PgaDynError, match="need uniformly sampled times"):
        identify_energy(robot, irregular, window=0.02)
    still = type(data)(
        data.names, data.t, np.zeros_like(data.q), np.zeros_like(data.qd), np.zeros_like(data.qdd), data.tau
    )
    with pytest.raises(PgaDynError, match="stands still"):
        identify_energy(robot, still, window=0.02)


def test_cli(tmp_path, capsys):
    """pga-dyn identify --energy [--energy-window S]: the library's estimate in the report; --ols and a
    window without --energy refused."""
    robot = robots.load("puma560")
    model = identification_model(robot, friction=True)
    traj = random_excitation(robot, duration=20, rate=100, model=model, seed=2).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": 0.5, "coulomb": 1.0})
    path = tmp_path / "data.csv"
    data.write(path)
    for option, window in ((["--energy"], 0.1), (["--energy", "--energy-window", "0.2"], 0.2)):
        code = main(["identify", "puma560", str(path), "--friction", "--json", "--no-hold-out", *option])
        out, _ = capsys.readouterr()
        result = json.loads(out)
        est = identify_energy(robot, data, model=model, window=window)
        assert code == 0 and result["method"] == "energy"
        assert np.allclose([p["value"] for p in result["base"]], est.beta, rtol=1e-9, atol=1e-12)
    assert main(["identify", "puma560", str(path), "--energy", "--ols"]) == 2
    assert "drop --ols" in capsys.readouterr().err
    assert main(["identify", "puma560", str(path), "--energy-window", "0.2"]) == 2
    assert "add --energy" in capsys.readouterr().err
