"""Identification (identification) against Pinocchio: the forces of every test come from
pin.rnea (with its armature), for the 2RRU-1RRS from pin.rnea of its spanning tree projected
onto the actuated coordinates, so the parameters recovered are checked against a dynamics
that pga-dyn did not compute."""

import json
import os
from math import perm

import numpy as np
import pytest
from oracle import Oracle, TreeOracle, erd_path, pin

import pga_dyn
import robots
from identification import (
    consistent_estimate,
    default_prior,
    excite,
    identification_model,
    identify_log,
    map_estimate,
    model_violations,
    random_excitation,
    read_trajectory,
    report,
    report_text,
    simulate,
    trajectory,
    violations,
    write_urdf,
)
from identification.estimation import estimate, predict
from identification.excitation import fit, limits
from identification.model import STICTION_ZONE
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError
from pga_dyn.sampling import complete_states

UR5 = "ur_description/urdf/ur5_robot.urdf"
EXTRAS = {"viscous": 0.6, "coulomb": 1.2, "offset": -0.3, "armature": 0.05}
UR5_FRICTION = {
    "viscous": np.array([1.0, 1.5, 0.8, 0.3, 0.2, 0.25]),
    "coulomb": np.array([2.0, 3.0, 1.5, 0.6, 0.5, 0.4]),
}
#: the limits of the 2RRU-1RRS trajectories: a module with 0.2 m cranks turned briskly
PKM_LIMITS = {"period": 2.0, "velocity": 3.0, "acceleration": 30.0}


class Setup:
    """A robot with Pinocchio as the oracle of its actuated forces."""

    def __init__(self, name):
        if name == "ur5":
            path = erd_path(UR5)
            self.robot = robots.load_urdf(path)
            self.oracle = Oracle(self.robot, path)
        elif name == "2rru_1rrs":
            self.robot = robots.load(name)
            self.oracle = TreeOracle(self.robot)
        else:
            self.robot = robots.load(name)
            self.oracle = Oracle(self.robot, robots.data_path(name))
        self.phi = self.oracle.link_parameters().reshape(-1)  # Pinocchio's own inertias

    def forces(self, traj, extras=None):
        """Pinocchio's actuated forces along ``traj`` with the extra terms (armature inside pin.rnea)."""
        robot, model = self.robot, self.oracle.model
        extras = extras or {}
        model.armature[:] = 0.0
        states = complete_states(robot, traj.q, traj.qd, traj.qdd)
        if "armature" in extras:  # Pinocchio's v indices of the actuated coordinates
            model.armature[[self._v_index(k) for k in robot.actuated]] = extras["armature"]
        tau = np.array(
            [G.T @ self.oracle.rnea(q, qd, qdd) for q, qd, qdd, G in zip(states.q, states.qd, states.qdd, states.G)]
        )
        model.armature[:] = 0.0
        for term, sign in (("viscous", traj.qd), ("coulomb", np.sign(traj.qd)), ("offset", 1.0)):
            if term in extras:
                tau = tau + extras[term] * sign
        return tau

    def _v_index(self, k):
        """Pinocchio's velocity index of tree coordinate k."""
        return k if isinstance(self.oracle, TreeOracle) else int(self.oracle.vi[k])

    def beta(self, model, extras=None):
        return model.values(model.theta(self.phi, extras))


@pytest.fixture(scope="module")
def ur5():
    return Setup("ur5")


@pytest.fixture(scope="module")
def ur5_model(ur5):
    return identification_model(ur5.robot, friction=True)


@pytest.fixture(scope="module")
def ur5_excitation(ur5, ur5_model):
    """The optimised 20 s trajectory at 200 Hz."""
    return excite(ur5.robot, model=ur5_model, seed=0, iterations=20)


def noisy(setup, traj, extras, seed):
    """(trajectory with 1 % noise on Pinocchio's forces, the noise (ns, n_a))."""
    tau = setup.forces(traj, extras)
    noise = 0.01 * np.sqrt(np.mean(tau**2, axis=0)) * np.random.default_rng(seed).standard_normal(tau.shape)
    return traj.with_tau(tau + noise), noise


@pytest.fixture(scope="module")
def ur5_estimate(ur5, ur5_model, ur5_excitation):
    data, _ = noisy(ur5, ur5_excitation.trajectory, UR5_FRICTION, 0)
    return estimate(ur5_model, data)


@pytest.fixture(scope="module")
def ur5_held_out(ur5, ur5_model):
    traj = random_excitation(ur5.robot, model=ur5_model, seed=7).trajectory
    return noisy(ur5, traj, UR5_FRICTION, 1)


@pytest.fixture(scope="module")
def pkm():
    return Setup("2rru_1rrs")


@pytest.fixture(scope="module")
def pkm_model(pkm):
    return identification_model(pkm.robot, friction=True)


@pytest.fixture(scope="module")
def pkm_excitation(pkm, pkm_model):
    return excite(pkm.robot, model=pkm_model, seed=0, iterations=15, points=48, **PKM_LIMITS)


# -- noise-free data: the parameters exactly ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["puma560", "ur5", "2rru_1rrs"])
def test_noise_free_recovery(name):
    """Friction (viscous, Coulomb, offset) and armature on every actuated coordinate, forces from
    Pinocchio: beta to 1e-9 relative, on a random trajectory of 5 s at 100 Hz."""
    setup = Setup(name)
    model = identification_model(setup.robot, friction=("viscous", "coulomb", "offset"), armature=True)
    limits = PKM_LIMITS if name == "2rru_1rrs" else {"period": 5.0}
    traj = random_excitation(setup.robot, duration=5, rate=100, model=model, seed=3, **limits).trajectory
    est = estimate(model, traj.with_tau(setup.forces(traj, EXTRAS)))
    truth = setup.beta(model, EXTRAS)
    assert np.linalg.norm(est.beta - truth) <= 1e-9 * np.linalg.norm(truth), est.cond
    # Pinocchio's forces have the sign function's Coulomb friction; the model's smooth sign equals
    # it outside the stiction zones, the rows the fit uses (inside, it ramps through 0 instead)
    assert np.abs(est.residuals[est.used]).max() < 1e-9 * np.abs(est.data.tau).max()
    assert est.used.mean() > 0.8


def test_floating_base_go2():
    """A floating base: random states (arrays, no trajectory needed), Pinocchio's generalized forces
    (the free-flyer's rows included): beta to 1e-9; friction only on the 12 leg joints."""
    robot = robots.load("go2")
    oracle = Oracle(robot, robots.data_path("go2"))
    model = identification_model(robot, friction=True)
    assert len(model.extras) == 24 and all(robot.actuated_names[j].endswith("_joint") for _, j in model.extras)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 100, robot.nq))
    tau = np.array([oracle.rnea(*state) for state in zip(q, qd, qdd)])
    assert robot.joint_type[1] == "F" and set(robot.joint_type[2:]) == {"R"}  # q[6:]: the leg joints
    tau[:, 6:] += 0.4 * qd[:, 6:] + 0.9 * np.sign(qd[:, 6:])
    est = estimate(model, trajectory(robot, np.arange(100) * 0.01, q, qd, qdd, tau))
    truth = model.values(model.theta(oracle.link_parameters().reshape(-1), {"viscous": 0.4, "coulomb": 0.9}))
    assert np.linalg.norm(est.beta - truth) <= 1e-9 * np.linalg.norm(truth)


def test_armature_and_offset_regrouped():
    """The armature of a joint whose body turns about a fixed axis joins its inertia (Izz1 of the Puma's
    vertical joint 1; Izz2 of joint 2, perpendicular to joint 1: the inertia about the vertical of body 2
    involves only its Ixx, Iyy); a vertical slider's reflected inertia joins its mass, and since the mass
    also feels gravity, the offset takes -g Ia."""
    puma = identification_model(robots.load("puma560"), friction=("offset",), armature=True)
    rows = dict(zip(puma.names, puma.K))
    col = puma.parameter_names.index
    assert rows["Izz1R"][col("Ia_joint1")] == 1.0 and rows["Izz2R"][col("Ia_joint2")] == 1.0
    assert "Ia_joint3" in puma.names and "Ia_joint1" not in puma.names
    prs = identification_model(robots.load("2prs_1psr"), friction=("offset",), armature=True)
    rows = dict(zip(prs.names, prs.K))
    assert rows["m1R"][prs.parameter_names.index("Ia_limb1_P")] == 1.0
    assert rows["f0_limb1_PR"][prs.parameter_names.index("Ia_limb1_P")] == pytest.approx(-9.81, abs=1e-9)
    assert prs.expressions[prs.names.index("f0_limb1_PR")] == "f0_limb1_PR = f0_limb1_P - 9.81*Ia_limb1_P"


# -- noisy data ----------------------------------------------------------------------------------------------
def test_ur5_noise_and_friction(ur5, ur5_model, ur5_estimate):
    """Optimised 20 s at 200 Hz, 1 % noise, viscous and Coulomb friction: beta to 1e-2, every error
    below 4 standard deviations, friction to 5 %, the noise level estimated per joint."""
    est, truth = ur5_estimate, ur5.beta(ur5_model, UR5_FRICTION)
    assert len(est.data) == 4000 and est.method == "wls"
    assert np.linalg.norm(est.beta - truth) < 1e-2 * np.linalg.norm(truth)
    assert np.max(np.abs(est.beta - truth) / est.std) < 4
    friction = ur5_model.is_extra
    assert friction.sum() == 12
    assert np.all(np.abs(est.beta[friction] - truth[friction]) < 0.05 * np.abs(truth[friction]))
    assert est.scale == pytest.approx(1.0, abs=0.05)
    # along its own data, the prediction is tau - residuals: the regressor's, without computing it again
    again = predict(est.model, est.beta, est.data)
    assert np.abs(est.predict(est.data) - again).max() <= 1e-12 * np.abs(again).max()


def test_pkm_from_actuator_forces(pkm, pkm_model, pkm_excitation):
    """2RRU-1RRS, 3 actuator forces with 1 % noise: its 25 base parameters and 6 friction terms to
    1e-2; the consistent estimate exists and is reported."""
    data, noise = noisy(pkm, pkm_excitation.trajectory, {"viscous": 0.5, "coulomb": 1.0}, 0)
    est = estimate(pkm_model, data)
    truth = pkm.beta(pkm_model, {"viscous": 0.5, "coulomb": 1.0})
    assert pkm_model.num_parameters == 31 and data.tau.shape[1] == 3
    assert np.linalg.norm(est.beta - truth) < 1e-2 * np.linalg.norm(truth)
    full = consistent_estimate(est)
    assert full.min_eigenvalues.min() >= -1e-9
    out = report(est, full)
    assert set(out["full"]["min_pseudo_inertia_eigenvalue"]) == set(pkm.robot.body_names)
    assert out["full"]["violations"] == []


# -- exciting trajectories -----------------------------------------------------------------------------------
def check_limits(excitation):
    """Every sample inside the position box, velocity and acceleration limits; periodic; qd and qdd
    the derivatives of q (central differences)."""
    traj, box = excitation.trajectory, excitation.limits
    assert np.all(traj.q >= box.position[:, 0]) and np.all(traj.q <= box.position[:, 1])
    assert np.all(np.abs(traj.qd) <= box.velocity) and np.all(np.abs(traj.qdd) <= box.acceleration)
    f = excitation.fourier
    period = 1 / f.frequency
    for a, b in zip(f.evaluate([0.0]), f.evaluate([period])):
        np.testing.assert_allclose(a, b, atol=1e-12)
    h = 1e-5
    plus, minus = f.evaluate(traj.t[:50] + h), f.evaluate(traj.t[:50] - h)
    np.testing.assert_allclose((plus[0] - minus[0]) / (2 * h), traj.qd[:50], atol=1e-6)
    np.testing.assert_allclose((plus[1] - minus[1]) / (2 * h), traj.qdd[:50], atol=1e-5)


def test_excitation_ur5(ur5, ur5_model, ur5_excitation):
    random = random_excitation(ur5.robot, model=ur5_model, seed=1)
    assert len(ur5_excitation.trajectory) == len(random.trajectory) == 4000
    assert ur5_excitation.cond <= 0.5 * random.cond
    check_limits(ur5_excitation)


def test_excitation_puma560():
    robot = robots.load("puma560")
    model = identification_model(robot, friction=True)
    best = excite(robot, model=model, seed=0, iterations=20, duration=10, rate=100)
    random = random_excitation(robot, model=model, seed=1, duration=10, rate=100)
    assert best.cond <= 0.5 * random.cond
    check_limits(best)


def test_excitation_pkm(pkm, pkm_model, pkm_excitation):
    """Every sample assembles (closure residual from Pinocchio's kinematics) with cond(J_p) below the
    default limit, 1.5 times cond(J_p) at q0 for this machine (6.27 there, above 2.75)."""
    random = random_excitation(pkm.robot, model=pkm_model, seed=1, **PKM_LIMITS)
    assert pkm_excitation.cond <= 0.5 * random.cond
    check_limits(pkm_excitation)
    traj = pkm_excitation.trajectory
    states = complete_states(pkm.robot, traj.q, traj.qd, traj.qdd)
    limit = 1.5 * complete_states(pkm.robot, np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3))).cond[0]
    assert limit > 2.75 and pkm_excitation.max_cond == pytest.approx(limit)
    assert states.cond.max() < limit and pkm_excitation.max_cond_jp == pytest.approx(states.cond.max())
    assert f"cond(J_p) <= {states.cond.max():.3g} (limit {limit:g})" in "\n".join(pkm_excitation.report_text())
    for k in range(0, len(traj), 97):
        qp = pkm.oracle.configuration(states.q[k])
        assert np.abs(pkm.oracle.residual(qp)).max() < 1e-9
        assert np.abs(pkm.oracle.jacobian(qp) @ states.qd[k]).max() < 1e-6


def test_excitation_refuses_floating_base():
    with pytest.raises(PgaDynError, match="floating"):
        excite(robots.load("go2"), iterations=1)


def test_fit_scales_into_limits():
    robot = robots.load("puma560")
    box = limits(robot, velocity=0.5, acceleration={"joint2": 2.0})
    assert box.velocity.tolist() == [0.5] * 6 and box.acceleration[1] == 2.0 and box.acceleration[0] == 5.0
    f = fit(np.random.default_rng(0).standard_normal((6, 8)), box, 0.2)
    t = np.linspace(0, 5, 20001)
    q, qd, qdd = f.evaluate(t)
    assert np.all(q >= box.position[:, 0]) and np.all(q <= box.position[:, 1])
    assert np.all(np.abs(qd) <= box.velocity) and np.all(np.abs(qdd) <= box.acceleration)
    # each coordinate reaches one of its limits (within the margin)
    reach = np.max(
        [
            np.abs(q - box.position.mean(1)).max(0) / (0.5 * np.diff(box.position, axis=1)[:, 0]),
            np.abs(qd).max(0) / box.velocity,
            np.abs(qdd).max(0) / box.acceleration,
        ],
        axis=0,
    )
    assert np.all(reach > 0.98)


# -- the consistent estimate and the MAP estimate -----------------------------------------------------------
def perturbed_prior(model, data, seed=3):
    theta0, sigma0 = default_prior(model, data)
    return theta0 * (1 + 0.3 * np.random.default_rng(seed).standard_normal(theta0.shape)), sigma0


def test_consistent_ur5(ur5, ur5_model, ur5_estimate, ur5_held_out):
    """Prior: the file's parameters perturbed by 30 %. Every pseudo-inertia PSD, base values as good as
    least squares (within 1.2x), held-out forces predicted to the noise (within 1.05x)."""
    est, truth = ur5_estimate, ur5.beta(ur5_model, UR5_FRICTION)
    full = consistent_estimate(est, perturbed_prior(ur5_model, est.data))
    eig = [np.linalg.eigvalsh(pseudo)[0] for pseudo in (pin_pseudo(p) for p in full.phi)]
    assert min(eig) >= -1e-9 and full.min_eigenvalues.min() >= -1e-9
    assert np.linalg.norm(full.beta - truth) <= 1.2 * np.linalg.norm(est.beta - truth)
    held, noise = ur5_held_out
    # outside the stiction zones, where the smooth sign of the model's Coulomb friction is the sign
    # function of Pinocchio's forces (inside, it ramps through 0 instead of jumping)
    sliding = np.abs(held.qd) >= STICTION_ZONE * np.abs(held.qd).max(axis=0)
    rms = np.sqrt(np.sum(np.where(sliding, held.tau - full.predict(held), 0) ** 2, axis=0) / sliding.sum(axis=0))
    assert np.all(rms <= 1.05 * np.sqrt(np.mean(noise**2, axis=0)))
    assert violations(ur5.robot.body_names, full.phi) == []
    assert np.all(full.extras >= 0)


def pin_pseudo(phi_b):
    """The pseudo-inertia of Pinocchio's inertia of link-frame parameters phi_b (an independent
    construction: pin.Inertia.FromDynamicParameters, its mass, lever and rotational inertia)."""
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(phi_b, dtype=float))
    m, c, I_c = inertia.mass, inertia.lever, inertia.inertia
    sigma = m * np.outer(c, c) + 0.5 * np.trace(I_c) * np.eye(3) - I_c
    return np.block([[sigma, m * c[:, None]], [m * c[None, :], np.array([[m]])]])


def test_map_estimate(ur5_model, ur5_estimate):
    """With the prior, theta_MAP - theta_0 lies in range(Sigma_0 K^T) (the prior decides every direction
    the data do not see), and with a wide prior the base values are the least-squares ones."""
    prior = perturbed_prior(ur5_model, ur5_estimate.data)
    full = map_estimate(ur5_estimate, prior)
    theta0, sigma0 = prior
    A = (sigma0**2)[:, None] * ur5_model.K.T
    step = full.theta - theta0
    c = np.linalg.lstsq(A, step, rcond=None)[0]
    assert np.linalg.norm(A @ c - step) < 1e-8 * np.linalg.norm(step)
    wide = map_estimate(ur5_estimate, (theta0, 1e3 * sigma0))
    np.testing.assert_allclose(wide.beta, ur5_estimate.beta, rtol=1e-6, atol=1e-9)
    assert full.std.shape == theta0.shape and np.all(full.std > 0)


# -- the physical-consistency check ------------------------------------------------------------------------
def test_puma560_model_is_not_physical():
    """The built-in Puma560 (Corke and Armstrong-Helouvry): link 1 has no mass but an inertia about its
    axis; link 3's principal moments Izz 0.0125 + Ixx 0.066 < Iyy 0.086."""
    found = [(v.body, v.condition) for v in model_violations(robots.load("puma560"))]
    assert found == [
        ("link1", "mass"),
        ("link1", "pseudo-inertia"),
        ("link3", "triangle inequality"),
        ("link3", "pseudo-inertia"),
    ]
    detail = str(model_violations(robots.load("puma560"))[2])
    assert "0.0125 + 0.066 < 0.086" in detail


def test_2rru_1rrs_platform_is_not_physical(pkm):
    """The platform of the built-in 2RRU-1RRS breaks a triangle inequality (Pinocchio's principal moments)."""
    moments = np.linalg.eigvalsh(pkm.oracle.model.inertias[3].inertia)
    assert moments[0] + moments[1] < moments[2]
    assert [(v.body, v.condition) for v in model_violations(pkm.robot)] == [
        ("platform", "triangle inequality"),
        ("platform", "pseudo-inertia"),
    ]


def test_violations_name_body_and_condition():
    box = pin.Inertia.FromBox(2.0, 0.3, 0.2, 0.1)
    good = box.toDynamicParameters()
    assert violations(["a"], good) == []
    negative = good.copy()
    negative[0] = -1.0
    assert [v.condition for v in violations(["a"], negative)][0] == "mass"
    flat = pin.Inertia(2.0, np.zeros(3), np.diag([0.01, 0.01, 0.05])).toDynamicParameters()
    assert [(v.body, v.condition) for v in violations(["b"], flat)] == [
        ("b", "triangle inequality"),
        ("b", "pseudo-inertia"),
    ]


# -- data in and out -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def puma_data():
    robot = robots.load("puma560")
    traj = random_excitation(robot, duration=4, rate=50, period=4, seed=2).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": 0.5}, noise=0.01, seed=0)
    return robot, data


@pytest.mark.parametrize("ext", ["csv", "npz"])
def test_round_trip(tmp_path, puma_data, ext):
    robot, data = puma_data
    path = tmp_path / f"data.{ext}"
    data.write(path)
    back = read_trajectory(robot, path, require_tau=True)
    for name in ("t", "q", "qd", "qdd", "tau"):
        assert np.array_equal(getattr(back, name), getattr(data, name)), name
    assert back.derivatives == "given" and back.names == robot.actuated_names


def test_derivatives_from_q():
    """qd and qdd from q alone (200 Hz): close to the Fourier series' own derivatives at every sample,
    the ends included; the base parameters follow to 1e-4."""
    robot = robots.load("puma560")
    model = identification_model(robot)
    traj = random_excitation(robot, model=model, seed=0).trajectory
    derived = trajectory(robot, traj.t, traj.q, cutoff=10)
    assert "Savitzky-Golay" in derived.derivatives and "cutoff 10 Hz" in derived.derivatives
    for mine, exact, tol in ((derived.q, traj.q, 1e-6), (derived.qd, traj.qd, 1e-4), (derived.qdd, traj.qdd, 5e-3)):
        assert np.abs(mine - exact).max() <= tol * np.abs(exact).max()
    derived = trajectory(robot, traj.t, traj.q)  # noise-free: the spectrum allows the highest cutoff, 0.1 f_s
    assert "cutoff 20 Hz from the spectrum of q" in derived.derivatives
    for mine, exact, tol in ((derived.qd, traj.qd, 1e-5), (derived.qdd, traj.qdd, 1e-3)):
        assert np.abs(mine - exact).max() <= tol * np.abs(exact).max()
    oracle = Oracle(robot, robots.data_path("puma560"))
    tau = np.array([oracle.rnea(q, qd, qdd) for q, qd, qdd in zip(traj.q, traj.qd, traj.qdd)])
    est = estimate(model, trajectory(robot, traj.t, traj.q, tau=tau))
    truth = model.values(model.theta(oracle.link_parameters()))
    assert np.linalg.norm(est.beta - truth) < 1e-4 * np.linalg.norm(truth)


@pytest.mark.parametrize("ns", [255, 300, 4096, 20001])
def test_filter_and_spectrum_are_scipys(ns):
    """The Savitzky-Golay filter and Welch's spectrum, computed with numpy (scipy.signal is slow
    to import): the filter gives the exact derivatives of a polynomial of its order at every
    sample, ends included, for windows of 7 to 785 samples (up to the rounding of the samples
    that the filter amplifies); it is scipy.signal's savgol_filter
    with mode="interp" (and its taps savgol_coeffs) to 1e-9 of the largest value for windows up
    to 21 samples (scipy fits the polynomial in the samples' unscaled positions, whose powers
    lose digits on longer windows: its taps are 8e-11 off the exact rational ones at 101
    samples, 1.7e-8 at 401, where ours stay within 1e-14); the spectrum is scipy.signal's welch of the detrended signal, to 1e-9."""
    signal = pytest.importorskip("scipy.signal")
    from identification.signals import POLYORDER, savgol, savgol_matrix, spectrum

    rng = np.random.default_rng(ns)
    step = 1e-3
    t = np.arange(ns) * step
    c = rng.standard_normal((POLYORDER + 1, 2))
    s = (t - t.mean()) / (t[-1] - t[0])
    poly = np.stack([s**j for j in range(POLYORDER + 1)], axis=1) @ c
    x = np.column_stack([np.sin(7 * t), (t / t[-1]) ** 2, np.cos(40 * t)]) + 1e-3 * rng.standard_normal((ns, 3))
    for window in (7, 21, 101, 401, 785):
        if window > ns:
            continue
        for deriv in range(3):
            exact = np.stack([perm(j, deriv) * s ** max(j - deriv, 0) for j in range(POLYORDER + 1)], axis=1) @ c
            exact /= (t[-1] - t[0]) ** deriv
            rounding = 1e-13 * np.abs(savgol_matrix(window, deriv, step)).sum(axis=1).max() * np.abs(poly).max()
            assert np.abs(savgol(poly, window, deriv, step) - exact).max() <= rounding + 1e-13 * np.abs(exact).max()
            if window > 21:
                continue
            mine = savgol(x, window, deriv, step)
            theirs = signal.savgol_filter(x, window, POLYORDER, deriv=deriv, delta=step, axis=0, mode="interp")
            assert np.abs(mine - theirs).max() <= 1e-9 * np.abs(theirs).max(), (window, deriv)
            taps = signal.savgol_coeffs(window, POLYORDER, deriv=deriv, delta=step, use="dot")
            assert np.abs(savgol_matrix(window, deriv, step)[window // 2] - taps).max() <= 1e-9 * np.abs(taps).max()
    f, P, floor = spectrum(x, 1000.0)
    nperseg = min(ns, max(256, 2 ** int(np.log2(ns // 4))))
    f_scipy, P_scipy = signal.welch(signal.detrend(x, axis=0), fs=1000.0, nperseg=nperseg, axis=0)
    assert np.array_equal(f, f_scipy) and P.shape == P_scipy.shape
    assert np.abs(P - P_scipy).max() <= 1e-9 * np.abs(P_scipy).max()
    assert np.allclose(floor, np.median(P_scipy[f > 250], axis=0), rtol=1e-9)


@pytest.mark.parametrize("noise", [1e-2, 1e-3])
def test_cutoff_from_the_spectrum(noise):
    """Two sines per coordinate under white noise at 1 kHz, the upper one at 1, 2 or 3 Hz with
    the larger power: the bandwidth of each coordinate is its upper sine (within the spectrum's
    resolution, 1000 / 4096 Hz), and the cutoff 5 times their median (the noise is strong
    enough that the spectrum falls to 100 times its floor below that)."""
    from identification.signals import bandwidth

    rng = np.random.default_rng(0)
    t = np.arange(20000) / 1000.0
    top = np.array([1.0, 2.0, 3.0])
    q = np.column_stack([0.5 * np.sin(2 * np.pi * 0.3 * t) + np.sin(2 * np.pi * f * t) for f in top])
    q += noise * rng.standard_normal(q.shape)
    cutoff, band, how = bandwidth(q, 1000.0)
    assert np.all(np.abs(band - top) <= 2 * 1000 / 4096), band
    assert cutoff == 5 * band[1] and "from the spectrum of q" in how


def test_irregular_times_and_measured_velocity():
    """A 100 Hz log with times jittering by up to 2.5 ms and measured qd: resampled onto the
    uniform grid of the median step, qdd from the measured qd; the derivatives match the exact
    ones of the sines to the filter's accuracy."""
    robot = robots.load("puma560")
    rng = np.random.default_rng(1)
    t = np.arange(2000) * 0.01 + rng.uniform(-2.5e-3, 2.5e-3, 2000)
    w = 2 * np.pi * 0.2 * np.arange(1, 7)
    q, qd = np.sin(np.outer(t, w)), w * np.cos(np.outer(t, w))
    data = trajectory(robot, t, q + 1e-6 * rng.standard_normal(q.shape), qd=qd, tau=q)
    assert "resampled onto a uniform" in data.derivatives
    assert "qdd derived from the measured qd" in data.derivatives
    step = np.diff(data.t)
    assert np.allclose(step, step[0]) and abs(step[0] - 0.01) < 1e-4
    exact = -(w**2) * np.sin(np.outer(data.t, w))
    inner = slice(50, -50)
    assert np.abs(data.qdd[inner] - exact[inner]).max() < 1e-2 * np.abs(exact).max()
    assert np.abs(data.tau - np.sin(np.outer(data.t, w))).max() < 0.02  # linear interpolation of a 1.2 Hz sine


def write_csv(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(str(x) for x in row) for row in rows]) + "\n")
    return path


def test_bad_files(tmp_path, puma_data):
    robot, data = puma_data
    names = robot.actuated_names
    header = ["t"] + [f"q_{n}" for n in names] + [f"tau_{n}" for n in names]
    rows = [[k * 0.01] + [0.1] * 12 for k in range(40)]
    cases = {
        "missing": (header[:-1], [r[:-1] for r in rows], r"missing columns \['tau_joint6'\]"),
        "nan": (
            header,
            rows[:5] + [rows[5][:3] + ["nan"] + rows[5][4:]] + rows[6:],
            "line 7, column 'q_joint3' is nan",
        ),
        "text": (header, rows[:2] + [["x"] + rows[2][1:]] + rows[3:], "line 4, column 't': 'x' is not a number"),
        "ragged": (header, rows[:3] + [rows[3][:-2]] + rows[4:], "line 5 has 11 fields, the header has 13"),
        "time": (header, rows[:3] + [[0.0] + rows[3][1:]] + rows[4:], r"t must increase, but t\[3\] = 0.0"),
        "no_q": (["t"] + header[7:], [[r[0]] + r[7:] for r in rows], "missing q"),
    }
    for name, (head, body, message) in cases.items():
        path = write_csv(tmp_path / f"{name}.csv", head, body)
        with pytest.raises(PgaDynError, match=message) as info:
            read_trajectory(robot, path, require_tau=True)
        assert str(path) in str(info.value), name
    extra = read_trajectory(
        robot, write_csv(tmp_path / "extra.csv", header + ["tau_joint7"], [r + [0] for r in rows]), require_tau=True
    )  # an extra column is ignored and named (tests/test_logs.py)
    assert extra.notes == ("ignored columns: ['tau_joint7']",)
    path = write_csv(tmp_path / "no_tau.csv", header[:7], [r[:7] for r in rows])
    with pytest.raises(PgaDynError, match="no measured forces"):
        read_trajectory(robot, path, require_tau=True)
    with pytest.raises(PgaDynError, match=r"must end in \.csv or \.npz"):
        read_trajectory(robot, tmp_path / "data.txt")
    with pytest.raises(PgaDynError, match="cannot be read"):
        read_trajectory(robot, tmp_path / "absent.csv")
    np.savez(tmp_path / "names.npz", t=data.t, q=data.q, names=np.array(names[::-1]))
    with pytest.raises(PgaDynError, match="names do not match"):
        read_trajectory(robot, tmp_path / "names.npz")


def test_bad_arrays(puma_data):
    robot, data = puma_data
    with pytest.raises(PgaDynError, match="unequal lengths: t has 200 samples, tau has 199"):
        trajectory(robot, data.t, data.q, data.qd, data.qdd, data.tau[:-1])
    bad = data.qd.copy()
    bad[17, 2] = np.nan
    with pytest.raises(PgaDynError, match="qd of 'joint3' is nan at sample 17"):
        trajectory(robot, data.t, data.q, bad, data.qdd)
    with pytest.raises(PgaDynError, match="one column per actuated coordinate"):
        trajectory(robot, data.t, data.q[:, :5])
    few = trajectory(robot, data.t[:7], data.q[:7], data.qd[:7], data.qdd[:7], data.tau[:7])
    with pytest.raises(PgaDynError, match="42 equations for 42 parameters: too few samples"):
        estimate(identification_model(robot, friction=("viscous",)), few)
    still = trajectory(robot, data.t, np.zeros_like(data.q), np.zeros_like(data.q), np.zeros_like(data.q), data.tau)
    with pytest.raises(PgaDynError, match="do not excite every parameter"):
        estimate(identification_model(robot), still)


def test_urdf_out(tmp_path, ur5, ur5_model, ur5_estimate):
    """The consistent estimate written to a new URDF reads back, in Pinocchio, as the same inertias."""
    full = consistent_estimate(ur5_estimate)
    path = write_urdf(ur5.robot, full.phi, tmp_path / "identified.urdf")
    back = Oracle(robots.load_urdf(path), path)  # Pinocchio reads the new file
    np.testing.assert_allclose(back.link_parameters(), full.phi, atol=1e-12)
    with pytest.raises(PgaDynError, match="robot's own file"):
        write_urdf(ur5.robot, full.phi, ur5.robot.source)
    puma = robots.load("puma560")
    with pytest.raises(PgaDynError, match="link3: principal moments"):
        write_urdf(puma, pga_dyn.to_link_parameters(puma, pga_dyn.inertial_parameters(puma)), tmp_path / "p.urdf")


# -- the command line ---------------------------------------------------------------------------------------
def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_whole_job(tmp_path, capsys):
    """excite, simulate (no noise), identify: the model's values and friction come back exactly; the
    consistent estimate is written to a URDF that Pinocchio reads; the plot is written."""
    traj, data, test = tmp_path / "traj.csv", tmp_path / "data.csv", tmp_path / "test.npz"
    code, out, _ = run(
        [
            "excite",
            "puma560",
            "-o",
            traj,
            "--duration",
            4,
            "--rate",
            50,
            "--period",
            4,
            "--iterations",
            3,
            "--friction",
        ],
        capsys,
    )
    assert code == 0 and "condition number:" in out and "Limits (respected at every sample)" in out
    code, out, err = run(["simulate", "puma560", traj, "-o", data, "--viscous", 0.5, "--coulomb", 1.0], capsys)
    assert code == 0 and "puma560: not physically consistent in its source (" in err and "): link1, link3; used" in err
    code, _, _ = run(
        ["simulate", "puma560", traj, "-o", test, "--viscous", 0.5, "--coulomb", 1.0, "--noise", 0.01], capsys
    )
    assert code == 0
    urdf, png = tmp_path / "identified.urdf", tmp_path / "fit.png"
    code, out, _ = run(
        [
            "identify",
            "puma560",
            data,
            "--friction",
            "--no-armature",
            "--consistent",
            "--test",
            test,
            "-o",
            urdf,
            "--plot",
            png,
            "--json",
        ],
        capsys,
    )
    assert code == 0
    result = json.loads(out)
    robot = robots.load("puma560")
    oracle = Oracle(robot, robots.data_path("puma560"))
    model = identification_model(robot, friction=True)
    truth = model.values(model.theta(oracle.link_parameters(), {"viscous": 0.5, "coulomb": 1.0}))
    values = np.array([p["value"] for p in result["base"]])
    assert [p["name"] for p in result["base"]] == list(model.names)
    assert np.linalg.norm(values - truth) < 1e-9 * np.linalg.norm(truth)
    assert result["full"]["violations"] == [] and min(result["full"]["min_pseudo_inertia_eigenvalue"].values()) >= -1e-9
    assert os.path.getsize(png) > 10000
    assert pin.buildModelFromUrdf(str(urdf)).nv == 6
    code, out, _ = run(["identify", "puma560", data, "--friction"], capsys)
    assert code == 0 and "Identified parameters" in out and "fv_joint1" in out
    code, out, _ = run(["identify", "puma560", test, "--friction", "--map", "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["chosen"] == "map" and result["full"]["method"] == "map"
    code, _, err = run(["identify", "puma560", test, "--ols", "--map"], capsys)
    assert code == 2 and "choose one" in err
    assert all(p["std"] > 0 for p in result["full"]["parameters"])


def test_cli_reports_are_the_library_reports(tmp_path, capsys):
    """``excite`` and ``identify`` write (--json) the library's reports and print their text, for
    the same inputs: Excitation.report and report_text, identification.report and
    report_text."""
    robot = robots.load("puma560")
    traj = str(tmp_path / "traj.csv")
    argv = [
        "excite",
        "puma560",
        "-o",
        traj,
        "--duration",
        4,
        "--rate",
        50,
        "--period",
        4,
        "--iterations",
        3,
        "--seed",
        3,
        "--friction",
    ]
    excitation = excite(robot, duration=4.0, rate=50.0, period=4.0, iterations=3, seed=3, friction=True)
    code, out, _ = run(argv + ["--json"], capsys)
    assert code == 0 and json.loads(out) == json.loads(json.dumps(excitation.report(traj)))
    assert json.loads(out)["file"] == traj and json.loads(out)["iterations"] == 3
    assert excitation.report(tmp_path / "traj.csv") == excitation.report(traj)  # a path-like file too
    code, out, _ = run(argv + ["--force"], capsys)
    assert code == 0 and out == "\n".join(excitation.report_text(traj)) + "\n"
    assert read_trajectory(robot, traj).q.shape == (200, 6)

    data, test = str(tmp_path / "data.csv"), str(tmp_path / "test.npz")
    simulate(robot, excitation.trajectory, extras={"viscous": 0.5}, noise=0.01, seed=0)[0].write(data)
    held = random_excitation(robot, duration=4, rate=50, period=4, seed=1).trajectory
    simulate(robot, held, extras={"viscous": 0.5}, noise=0.01, seed=1)[0].write(test)
    argv = ["identify", "puma560", data, "--friction", "viscous", "--consistent", "--prior-std", 0.3, "--test", test]
    measured = read_trajectory(robot, data, require_tau=True)
    expected = identify_log(
        robot,
        measured,
        read_trajectory(robot, test, require_tau=True),
        friction=("viscous",),
        estimate_kind="consistent",
        prior_std=0.3,
    ).report()
    code, out, _ = run(argv + ["--json"], capsys)
    assert code == 0 and json.loads(out) == json.loads(json.dumps(expected))
    assert json.loads(out)["full"]["method"] == "consistent" and "held_out" in json.loads(out)
    code, out, _ = run(argv, capsys)
    assert code == 0 and out == "\n".join(report_text(expected)) + "\n"


def test_cli_simulate_against_pinocchio(tmp_path, capsys, ur5):
    robot = ur5.robot
    traj = random_excitation(robot, duration=2, rate=50, period=2, seed=0).trajectory
    traj.write(tmp_path / "traj.csv")
    code, _, _ = run(
        [
            "simulate",
            robot.source,
            tmp_path / "traj.csv",
            "-o",
            tmp_path / "data.npz",
            "--viscous",
            0.7,
            "--coulomb",
            0.4,
        ],
        capsys,
    )
    assert code == 0
    data = read_trajectory(robot, tmp_path / "data.npz", require_tau=True)
    expected = ur5.forces(traj, {"viscous": 0.7, "coulomb": 0.4})
    assert np.abs(data.tau - expected).max() < 1e-9 * np.abs(expected).max()


def test_cli_errors(tmp_path, capsys):
    traj = tmp_path / "traj.csv"
    random_excitation(robots.load("puma560"), duration=1, rate=50, period=1, seed=0).trajectory.write(traj)
    code, _, err = run(["identify", "puma560", traj], capsys)
    assert code == 2 and "no measured forces" in err and "Traceback" not in err
    code, _, err = run(["simulate", "puma560", traj, "-o", traj], capsys)
    assert code == 2 and "this is an input file" in err
    code, _, err = run(["identify", "puma560", traj, "--armature", "--no-armature"], capsys)
    assert code == 2 and "choose one" in err
    code, _, err = run(["excite", "go2", "-o", tmp_path / "x.csv", "--iterations", 1], capsys)
    assert code == 2 and "floating" in err


def test_force_delay(puma_data):
    """Forces logged 3 samples late: the estimated delay is 3 samples (within 0.1), and the
    aligned trajectory gives back the simulated model's parameters to the noise."""
    from identification.estimation import force_delay

    robot, data = puma_data
    model = identification_model(robot, friction=["viscous"])
    step = data.t[1] - data.t[0]
    late = data.with_tau(np.vstack([np.repeat(data.tau[:1], 3, axis=0), data.tau[:-3]]))
    d, delays, ssr = force_delay(model, late, max_delay=10 * step)
    assert abs(d / step - 3) < 0.1, d / step
    assert round(delays[np.argmin(ssr)] / step) == 3
    truth = model.values(
        model.theta(pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)), {"viscous": 0.5})
    )
    aligned = late.aligned(d)
    assert len(aligned) in (len(late) - 3, len(late) - 4) and "forces advanced by 6" in aligned.derivatives
    fixed = estimate(model, aligned)
    assert np.all(np.abs(fixed.beta - truth) < 5 * fixed.std + 1e-9)
    with pytest.raises(PgaDynError, match="end of the searched range"):
        force_delay(model, late, max_delay=2 * step)


def test_rows_of_a_record_are_its_states(pkm, pkm_model, pkm_excitation):
    """The job assembles a record once: the samples a delay keeps (``aligned_rows``) and the force
    delay's subset take their states from the whole record's (``state_rows``). On the 2RRU-1RRS
    (loops closed by Newton), those equal the same samples assembled as a record of their own, to
    1e-12 of each array's scale; the delay found, and a prediction from a given regressor, are
    the same either way."""
    from identification.estimation import force_delay
    from identification.model import state_rows, states_of

    data, _ = noisy(pkm, pkm_excitation.trajectory, {"viscous": 0.5, "coulomb": 1.0}, 0)
    late = data.with_tau(np.vstack([np.repeat(data.tau[:1], 2, axis=0), data.tau[:-2]]))
    states = states_of(pkm.robot, late)
    step = late.t[1] - late.t[0]
    for delay in (2 * step, -3 * step):
        moved, kept = late.aligned_rows(delay)
        assert np.array_equal(moved.q, late.q[kept]) and np.array_equal(moved.tau, late.aligned(delay).tau)
        own, rows = states_of(pkm.robot, moved), state_rows(states, kept)
        for name in ("q", "qd", "qdd", "q_a", "qd_a", "qdd_a", "G", "cond"):
            a, b = getattr(own, name), getattr(rows, name)
            assert a.shape == b.shape and np.abs(a - b).max() <= 1e-12 * max(np.abs(a).max(), 1.0), name
    d_own, _, ssr_own = force_delay(pkm_model, late, samples=1000)
    d_rows, _, ssr_rows = force_delay(pkm_model, late, samples=1000, states=states)
    assert np.abs(ssr_own - ssr_rows).max() <= 1e-9 * ssr_own.max() and abs(d_own - d_rows) <= 1e-6 * step
    assert abs(d_own / step - 2) < 0.2
    est = estimate(pkm_model, data)
    W = est.model.regressor(states_of(pkm.robot, late))
    assert np.array_equal(est.predict(late, W), W @ est.beta)
    assert np.abs(est.predict(late) - W @ est.beta).max() <= 1e-12 * np.abs(data.tau).max()


def test_consistent_estimate_equals_cvxpys_statement(ur5, ur5_model, ur5_estimate):
    """The consistent estimate (Clarabel, the problem stated by hand in its cones) against the same
    problem stated in cvxpy on theta directly: objective (K theta - beta)^T A (K theta - beta) +
    ||(theta - theta_0) / sigma_0||^2, every pseudo-inertia PSD (margin 1e-8), masses and extents
    bounded, friction >= 0: the same minimum, at the same theta to 1e-3 relative."""
    import cvxpy as cp

    from identification.consistency import PSD_MARGIN, body_bounds
    from identification.physics import PSEUDO_BASIS

    est = ur5_estimate
    prior = perturbed_prior(ur5_model, est.data)
    full = consistent_estimate(est, prior)
    theta0, sigma0 = prior
    K, A = ur5_model.K, est.information()
    theta = cp.Variable(theta0.size)
    L = np.linalg.cholesky(A).T
    bounds = body_bounds(ur5.robot)
    constraints = []
    for b in range(ur5.robot.n):
        phi = theta[10 * b : 10 * b + 10]
        constraints.append(sum(phi[k] * PSEUDO_BASIS[k] for k in range(10)) - PSD_MARGIN * np.eye(4) >> 0)
        lo, hi = bounds.mass[b]
        if np.isfinite(lo):
            constraints += [phi[0] >= lo, phi[0] <= hi]
        if bounds.ellipsoids[b] is not None:
            Q = bounds.ellipsoids[b].matrix()
            constraints.append(sum(phi[k] * np.trace(Q @ PSEUDO_BASIS[k]) for k in range(10)) >= PSD_MARGIN)
    nphi = 10 * ur5.robot.n
    constraints.append(theta[nphi:] >= 0)
    objective = cp.sum_squares(L @ (K @ theta - est.beta)) + cp.sum_squares(cp.multiply(1 / sigma0, theta - theta0))
    cp.Problem(cp.Minimize(objective), constraints).solve(solver="CLARABEL")

    def cost(t):
        return np.sum((L @ (K @ t - est.beta)) ** 2) + np.sum(((t - theta0) / sigma0) ** 2)

    # the same minimum of a strictly convex objective (to the solvers' gap), the same point to
    # what that leaves of the directions the prior alone holds (theta = theta_0 + sigma_0 z)
    assert abs(cost(full.theta) - cost(theta.value)) <= 1e-7 * cost(theta.value)
    assert np.linalg.norm(full.theta - theta.value) <= 1e-3 * np.linalg.norm(theta.value)
