"""Friction models of the identification (identification.model, docs/identification.md,
"Friction") against oracles pga-dyn did not compute: the columns against their formulas written
here, forces from Pinocchio's RNEA plus those formulas, the identifiability against the rank of
a sampled regressor stacked here, and the friction of passive joints against G = dq/dq_a from
the loop Jacobian of Pinocchio's kinematics and against a finite-difference power balance."""

import json

import numpy as np
import pytest
from oracle import Oracle, TreeOracle, numerical_rank

import robots
from identification import (
    identification_model,
    identify,
    random_excitation,
    report,
    report_text,
    simulate,
    trajectory,
)
from identification.estimation import STRIBECK_RANGE, estimate, stribeck_estimate
from identification.model import STICTION_ZONE
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError
from pga_dyn.sampling import complete_states, sample_states

#: per joint of the Puma560: viscous, Coulomb, static friction and the speeds
FV = np.array([0.5, 0.9, 0.4, 0.1, 0.08, 0.06])
FC = np.array([1.2, 2.0, 1.0, 0.3, 0.25, 0.2])
FS = 1.5 * FC
VS = np.array([0.05, 0.08, 0.1, 0.12, 0.15, 0.2])
VC = 0.04
PKM_LIMITS = {"period": 2.0, "velocity": 3.0, "acceleration": 30.0}


# -- the formulas, written here ------------------------------------------------------------------------------
def tanh_coulomb(qd, fc, v):
    return fc * np.tanh(qd / v)


def stribeck(qd, fc, fs, vs):
    return (fc + (fs - fc) * np.exp(-((qd / vs) ** 2))) * np.sign(qd)


def per_direction(qd, fv_plus, fv_minus, fc_plus, fc_minus):
    """fv+ qd and fc+ for qd > 0; fv- qd and -fc- for qd < 0."""
    return np.where(qd > 0, fv_plus * qd + fc_plus, 0.0) + np.where(qd < 0, fv_minus * qd - fc_minus, 0.0)


#: friction models: (friction=, extras of simulate and theta, speeds, the forces by the formulas above)
MODELS = {
    "coulomb-tanh": (
        ("viscous", "coulomb-tanh"),
        {"viscous": FV, "coulomb-tanh": FC},
        {"coulomb_speed": VC},
        lambda qd: FV * qd + tanh_coulomb(qd, FC, VC),
    ),
    "per-direction": (
        ("viscous+-", "coulomb+-", "offset"),
        {"viscous+": FV, "viscous-": 1.3 * FV, "coulomb+": FC, "coulomb-": 0.7 * FC, "offset": -0.2},
        {},
        lambda qd: per_direction(qd, FV, 1.3 * FV, FC, 0.7 * FC) - 0.2,
    ),
    "stribeck": (
        ("viscous", "stribeck"),
        {"viscous": FV, "stribeck-coulomb": FC, "stribeck-static": FS},
        {"stribeck_speed": VS},
        lambda qd: FV * qd + stribeck(qd, FC, FS, VS),
    ),
}


@pytest.fixture(scope="module")
def puma():
    robot = robots.load("puma560")
    return robot, Oracle(robot, robots.data_path("puma560"))


@pytest.fixture(scope="module")
def puma_trajectory(puma):
    """A random 10 s trajectory at 100 Hz (1000 samples, every speed crossing zero)."""
    model = identification_model(puma[0], friction=True)
    return random_excitation(puma[0], duration=10, rate=100, model=model, seed=3, period=5.0).trajectory


def rnea(oracle, traj):
    return np.array([oracle.rnea(q, qd, qdd) for q, qd, qdd in zip(traj.q, traj.qd, traj.qdd)])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_columns_are_the_formulas(puma, puma_trajectory, name):
    """simulate() with no inertia (phi = 0) gives the friction forces alone: the formulas above."""
    robot, traj = puma[0], puma_trajectory
    _, extras, speeds, formula = MODELS[name]
    data, _ = simulate(robot, traj, phi=np.zeros(10 * robot.n), extras=extras, **speeds)
    np.testing.assert_allclose(data.tau, formula(traj.qd), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_noise_free_recovery(puma, puma_trajectory, name):
    """Forces from Pinocchio's RNEA plus the formulas: beta = K theta to 1e-9 (linear models) and
    1e-6 (Stribeck: its speeds fitted, to 1e-6 too)."""
    robot, oracle = puma
    friction, extras, speeds, formula = MODELS[name]
    traj = puma_trajectory
    model = identification_model(robot, friction=friction, coulomb_speed=speeds.get("coulomb_speed"))
    est = identify(robot, traj.with_tau(rnea(oracle, traj) + formula(traj.qd)), model=model)
    truth = model.values(model.theta(oracle.link_parameters(), extras))
    tol = 1e-6 if name == "stribeck" else 1e-9
    assert np.linalg.norm(est.beta - truth) <= tol * np.linalg.norm(truth)
    if name == "stribeck":
        np.testing.assert_allclose(est.model.stribeck_speed, VS, rtol=1e-6)
        assert est.used.all()  # the Stribeck curve models the low speeds: no stiction zone
    elif name == "per-direction":
        assert not est.used.all()  # the steps of the Coulomb terms: the stiction zones are left out


def test_stribeck_with_noise(puma, puma_trajectory):
    """1 % noise: the Stribeck speeds within 4 of their standard deviations, beta within 4.5 (the
    standard deviations of beta include the speeds' uncertainty); the report states the speeds."""
    robot, oracle = puma
    friction, extras, speeds, formula = MODELS["stribeck"]
    traj = puma_trajectory
    tau = rnea(oracle, traj) + formula(traj.qd)
    tau += 0.01 * np.sqrt(np.mean(tau**2, axis=0)) * np.random.default_rng(0).standard_normal(tau.shape)
    model = identification_model(robot, friction=friction)
    est = stribeck_estimate(model, traj.with_tau(tau))
    truth = model.values(model.theta(oracle.link_parameters(), extras))
    assert np.all(np.abs(est.model.stribeck_speed - VS) < 4 * est.stribeck_speed_std)
    assert np.all(np.abs(est.beta - truth) < 4.5 * est.std)
    assert np.all(est.stribeck_speed_std < 0.1 * VS)
    out = report(est)
    assert [s["coordinate"] for s in out["stribeck_speed"]] == list(robot.actuated_names)
    first = out["stribeck_speed"][0]
    assert abs(first["value"] - 0.05) < 4 * first["std"]
    assert f"Stribeck speed:   joint1 {first['value']:.4g} +- {first['std']:.2g}, joint2" in "\n".join(report_text(out))


def test_stribeck_errors(puma, puma_trajectory):
    """A model without Stribeck terms; data whose speeds never come near the range's lower end."""
    robot, oracle = puma
    traj = puma_trajectory
    with pytest.raises(PgaDynError, match="no Stribeck term"):
        stribeck_estimate(identification_model(robot, friction=True), traj.with_tau(rnea(oracle, traj)))
    # forces with a Stribeck speed far below the range (1e-3 of the top speed): the fit is at its end
    top = np.abs(traj.qd).max(axis=0)
    tau = rnea(oracle, traj) + stribeck(traj.qd, FC, FS, 0.1 * STRIBECK_RANGE[0] * top)
    with pytest.raises(PgaDynError, match="Stribeck speed of .* at an end of its range"):
        identify(robot, traj.with_tau(tau), friction=("stribeck",))


# -- identifiability: the sampled rank, stacked here ---------------------------------------------------------
HAND_COLUMNS = {
    "offset": lambda v: np.ones_like(v),
    "coulomb": np.sign,
    "viscous": lambda v: v,
    "coulomb+": lambda v: np.maximum(np.sign(v), 0),
    "coulomb-": lambda v: np.minimum(np.sign(v), 0),
    "viscous+": lambda v: np.maximum(v, 0),
    "viscous-": lambda v: np.minimum(v, 0),
}


@pytest.mark.parametrize("robot_name", ["puma560", "five_bar"])
@pytest.mark.parametrize(
    "friction, terms, per_joint",
    [
        (("offset", "coulomb+-"), ("offset", "coulomb+", "coulomb-"), 2),
        (("coulomb", "offset", "coulomb+-"), ("coulomb", "offset", "coulomb+", "coulomb-"), 2),
        (("viscous", "viscous+-"), ("viscous", "viscous+", "viscous-"), 2),
        (("viscous+-", "coulomb+-"), ("viscous+", "viscous-", "coulomb+", "coulomb-"), 4),
    ],
)
def test_per_direction_identifiability(robot_name, friction, terms, per_joint):
    """1 = max(s, 0) - min(s, 0), s = max(s, 0) + min(s, 0), qd = max(qd, 0) + min(qd, 0): with an
    offset or the symmetric terms, the per-direction terms are regrouped. The number of parameters
    is the rank of [Y_b, columns of the formulas] on states sampled here, and the per-direction
    terms are eliminated first."""
    robot = robots.load(robot_name)
    model = identification_model(robot, friction=friction)
    base = model.base
    states = sample_states(robot, 80, seed=11)
    D = [np.zeros((len(states), len(robot.actuated))) for _ in range(len(terms) * len(robot.actuated))]
    for t, term in enumerate(terms):
        for j in range(len(robot.actuated)):
            D[t * len(robot.actuated) + j][:, j] = HAND_COLUMNS[term](states.qd_a[:, j])
    S = np.concatenate([base.regressor(states)] + [d[:, :, None] for d in D], axis=2)
    rank, gap = numerical_rank(S.reshape(-1, S.shape[2]))
    assert gap > 1e6
    assert model.num_parameters == rank == base.num_base_parameters + per_joint * len(robot.actuated)
    joint = robot.actuated_names[0]
    if "offset" in friction and "coulomb" not in friction:
        assert f"f0_{joint}R = f0_{joint} - fc-_{joint}" in model.expressions
        assert f"fc+_{joint}R = fc+_{joint} + fc-_{joint}" in model.expressions


# -- passive joints of closed loops --------------------------------------------------------------------------
def oracle_G(oracle, robot, q):
    """G = dq/dq_a (nq, n_a) from the loop Jacobian of Pinocchio's kinematics: J_p G_p = -J_a."""
    J = oracle.jacobian(oracle.configuration(q))
    G = np.zeros((robot.nq, len(robot.actuated)))
    G[robot.actuated] = np.eye(len(robot.actuated))
    G[robot.passive] = np.linalg.lstsq(J[:, robot.passive], -J[:, robot.actuated], rcond=None)[0]
    return G


@pytest.fixture(scope="module", params=["five_bar", "2rru_1rrs"])
def machine(request):
    robot = robots.load(request.param)
    model = identification_model(robot, friction=("viscous",), passive_friction=("viscous", "coulomb"))
    traj = random_excitation(robot, duration=2, rate=1000, model=model, seed=2, **PKM_LIMITS).trajectory
    return robot, TreeOracle(robot), model, traj, complete_states(robot, traj.q, traj.qd, traj.qdd)


def test_passive_columns_against_pinocchio(machine):
    """The column of passive friction at coordinate k is G[k, :]^T times its column at qd_k (eq. 52):
    G from Pinocchio's loop Jacobian, qd_k = (G qd_a)_k; every passive R/P/U coordinate gets both."""
    robot, oracle, model, traj, states = machine
    passive = [(term, k) for term, k in model.extras if term.startswith("passive-")]
    assert sorted({k for _, k in passive}) == sorted(int(k) for k in robot.passive)  # no S joints here
    assert model.num_parameters == model.base.num_base_parameters + len(model.extras)  # all identifiable
    D = model.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)
    for s in range(0, len(traj), 97):
        G = oracle_G(oracle, robot, states.q[s])
        qd = G @ traj.qd[s]
        for term, k in passive:
            column = qd[k] if term == "passive-viscous" else np.sign(qd[k])
            np.testing.assert_allclose(D[s, :, model.extras.index((term, k))], G[k] * column, atol=1e-6)


def test_passive_power_balance(machine):
    """The power of viscous friction fv_k at passive coordinate k is fv_k qd_k^2: qd_a^T D_k = qd_k^2,
    qd_k by central differences of the assembled positions (1 kHz)."""
    robot, _, model, traj, states = machine
    D = model.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)
    qd = np.gradient(states.q, traj.t, axis=0)[1:-1]
    for term, k in model.extras:
        if term == "passive-viscous":
            power = np.einsum("sj,sj->s", traj.qd, D[:, :, model.extras.index((term, k))])[1:-1]
            np.testing.assert_allclose(power, qd[:, k] ** 2, rtol=0, atol=1e-4 * np.max(qd[:, k] ** 2))


def test_passive_noise_free_recovery(machine):
    """Forces G^T (RNEA + F) of Pinocchio's spanning tree, G from Pinocchio's loop Jacobian, F the
    viscous and Coulomb friction of the passive joints (and viscous at the motors): beta to 1e-9;
    the samples where a passive joint with Coulomb friction is in its stiction zone are left out."""
    robot, oracle, model, traj, states = machine
    every = slice(None, None, 4)  # 500 samples
    fv, fc, fm = 0.02, 0.05, 0.3
    tau = []
    for q, qd, qdd, qd_a in zip(states.q[every], states.qd[every], states.qdd[every], traj.qd[every]):
        G = oracle_G(oracle, robot, q)
        F = np.zeros(robot.nq)
        F[robot.passive] = fv * qd[robot.passive] + fc * np.sign(qd[robot.passive])
        tau.append(G.T @ (oracle.rnea(q, qd, qdd) + F) + fm * qd_a)
    data = trajectory(robot, traj.t[every], traj.q[every], traj.qd[every], traj.qdd[every], np.array(tau))
    est = estimate(model, data)
    extras = {"viscous": fm, "passive-viscous": fv, "passive-coulomb": fc}
    truth = model.values(model.theta(oracle.link_parameters(), extras))
    assert np.linalg.norm(est.beta - truth) <= 1e-9 * np.linalg.norm(truth)
    speed = np.abs(states.qd[every][:, robot.passive])
    stuck = np.any(speed < STICTION_ZONE * speed.max(axis=0), axis=1)
    assert stuck.any() and np.array_equal(est.used, np.repeat(~stuck[:, None], len(robot.actuated), axis=1))


# -- options and errors --------------------------------------------------------------------------------------
def test_options_refused(puma):
    robot = puma[0]
    with pytest.raises(PgaDynError, match="coulomb-tanh: give its speed scale"):
        identification_model(robot, friction=("coulomb-tanh",))
    with pytest.raises(PgaDynError, match="coulomb_speed is the speed scale of coulomb-tanh"):
        identification_model(robot, friction=("coulomb",), coulomb_speed=0.1)
    with pytest.raises(PgaDynError, match="coulomb and stribeck are two shapes"):
        identification_model(robot, friction=("coulomb", "stribeck"))
    with pytest.raises(PgaDynError, match="expected distinct models among viscous"):
        identification_model(robot, friction=("dry",))
    with pytest.raises(PgaDynError, match="coulomb_speed: expected a positive number"):
        identification_model(robot, friction=("coulomb-tanh",), coulomb_speed=-1)
    with pytest.raises(PgaDynError, match="no passive revolute, prismatic or universal joint"):
        identification_model(robot, passive_friction=("viscous",))
    with pytest.raises(PgaDynError, match="passive friction: expected distinct models"):
        identification_model(robots.load("five_bar"), passive_friction=("stribeck",))


# -- the command line ----------------------------------------------------------------------------------------
def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_passive_friction(tmp_path, capsys):
    """excite, simulate and identify a five-bar with damping at its passive elbows: recovered exactly."""
    traj, data = tmp_path / "traj.csv", tmp_path / "data.csv"
    options = ["--friction", "viscous", "--passive-friction", "viscous"]
    code, out, _ = run(
        ["excite", "five_bar", "-o", traj, "--duration", 4, "--rate", 100, "--period", 4, "--iterations", 2, *options],
        capsys,
    )
    assert code == 0 and "of 11 parameters" in out
    code, out, _ = run(["simulate", "five_bar", traj, "-o", data, "--viscous", 0.3, "--passive-viscous", 0.02], capsys)
    assert code == 0 and "passive-viscous 0.02" in out
    code, out, _ = run(["identify", "five_bar", data, *options, "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["extras"][-2:] == ["passive-viscous B1", "passive-viscous B2"]
    values = {p["name"]: p["value"] for p in result["base"]}
    assert values["fv_B1"] == pytest.approx(0.02, abs=1e-12) and values["fv_A2"] == pytest.approx(0.3, abs=1e-12)


def test_cli_smooth_coulomb_and_stribeck(tmp_path, capsys, puma):
    """simulate a tanh Coulomb and a Stribeck curve; identify each with its model: the friction
    terms and the fitted Stribeck speed come back."""
    robot, oracle = puma
    traj, data = tmp_path / "traj.csv", tmp_path / "data.csv"
    code, _, _ = run(
        [
            "excite",
            "puma560",
            "-o",
            traj,
            "--duration",
            10,
            "--rate",
            100,
            "--period",
            5,
            "--iterations",
            1,
            "--friction",
            "viscous",
            "coulomb-tanh",
            "--coulomb-speed",
            0.05,
        ],
        capsys,
    )
    assert code == 0
    code, _, _ = run(
        ["simulate", "puma560", traj, "-o", data, "--viscous", 0.5, "--coulomb", 1.0, "--coulomb-speed", 0.05], capsys
    )
    assert code == 0
    code, out, _ = run(
        ["identify", "puma560", data, "--friction", "viscous", "coulomb-tanh", "--coulomb-speed", 0.05, "--json"],
        capsys,
    )
    result = json.loads(out)
    values = {p["name"]: p["value"] for p in result["base"]}
    assert code == 0 and result["coulomb_speed"] == [0.05] * 6
    assert values["fc_joint3"] == pytest.approx(1.0, abs=1e-9) and values["fv_joint6"] == pytest.approx(0.5, abs=1e-9)
    code, _, _ = run(
        [
            "simulate",
            "puma560",
            traj,
            "-o",
            data,
            "--viscous",
            0.5,
            "--coulomb",
            1.0,
            "--static",
            1.5,
            "--stribeck-speed",
            0.1,
            "--force",
        ],
        capsys,
    )
    assert code == 0
    code, out, _ = run(["identify", "puma560", data, "--friction", "viscous", "stribeck", "--no-hold-out"], capsys)
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("Stribeck speed:"))
    assert line.startswith("Stribeck speed:   joint1 0.1 +- ") and line.endswith("(fitted)")
    values = dict(row.split()[:2] for row in out.splitlines() if row.strip().startswith(("fs_", "fc_")))
    assert float(values["fs_joint2"]) == pytest.approx(1.5, rel=1e-6)
    code, _, err = run(["identify", "puma560", data, "--friction", "coulomb-tanh"], capsys)
    assert code == 2 and "coulomb-tanh: give its speed scale" in err


def test_simulate_values_refused(puma, puma_trajectory):
    """simulate's values: one per passive coordinate, a speed with its term, no passive friction on a tree."""
    robot, traj = puma[0], puma_trajectory
    with pytest.raises(PgaDynError, match="passive-viscous: 'puma560' has no passive revolute"):
        simulate(robot, traj, extras={"passive-viscous": 0.1})
    with pytest.raises(PgaDynError, match="stribeck: give its speed scale"):
        simulate(robot, traj, extras={"stribeck-static": 1.0})
    five_bar = robots.load("five_bar")
    with pytest.raises(
        PgaDynError,
        match=r"expected a finite number or 2 numbers \(one per passive coordinate "
        r"\['B1', 'B2'\]\)",
    ):
        simulate(five_bar, traj, extras={"passive-viscous": [0.1, 0.2, 0.3]})
