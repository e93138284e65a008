"""The URDF+ fixtures of tests/fixtures/ load as designed and close at q = 0; the rotor chains
(URDF+ couplings, 6:1 and 50:1) and the five-bar closed by a spherical loop joint against
Pinocchio near q = 0.

The expected figures come from each file's header (its design) and from Pinocchio
(tests/fixture_oracle.py), never from pga-dyn. The rotor chains and the five-bar are checked at
small configurations here (|q_a| < 0.3 rad); their full-range tests belong with the closed-form
couplings.
"""

import numpy as np
import pinocchio as pin  # noqa: E402  (the test extra installs it: a missing oracle is a failure)
import pytest
from fixture_oracle import GRAVITIES, TreeOracle, close, constraint_jacobian, fixture, nullity  # noqa: E402

import robots
from pga_dyn import tp_regressor as tp
from pga_dyn.loops import constraints
from pga_dyn.sampling import complete_states

# name: (bodies, {loop joint: (type, world position of its frames at q = 0)}, actuated
# coordinates, {follower: (leader, ratio)}), as the headers of the files describe them.
DESIGN = {
    "four_bar": (("crank", "coupler", "rocker"), {"coupler_rocker": ("R", (0.6, 0.5, 0.0))}, ("crank_joint",), {}),
    "six_bar": (
        ("crank", "coupler", "rocker", "output_coupler", "output_rocker"),
        {"coupler_rocker": ("R", (0.6, 0.5, 0.0)), "output_loop": ("R", (1.5, 0.6, 0.0))},
        ("crank_joint",),
        {},
    ),
    "leg_linkage": (
        ("thigh", "shank", "knee_crank", "rod"),
        {"rod_shank": ("R", (-0.04, 0.0, -0.28))},
        ("hip_joint", "knee_motor_joint"),
        {},
    ),
    "five_bar_spherical": (
        ("left_proximal", "left_distal", "right_proximal", "right_distal"),
        {"tip": ("S", (0.25, 0.55, 0.0))},
        ("left_joint", "right_joint"),
        {},
    ),
    "rotor_chain_6": (
        ("link1", "link2", "rotor2", "rotor1"),
        {},
        ("joint1", "joint2"),
        {"rotor1_joint": ("joint1", 6.0), "rotor2_joint": ("joint2", 6.0)},
    ),
    "rotor_chain_50": (
        ("link1", "link2", "rotor2", "rotor1"),
        {},
        ("joint1", "joint2"),
        {"rotor1_joint": ("joint1", 50.0), "rotor2_joint": ("joint2", 50.0)},
    ),
}


def load(name, gravity=(0.0, 0.0, -9.81)):
    return robots.load_urdf(fixture(name), gravity=gravity)


def relative(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


@pytest.mark.parametrize("name", sorted(DESIGN))
def test_fixture_loads_as_designed_and_closes_at_zero(name):
    bodies, loops, actuated, couplings = DESIGN[name]
    robot = load(name)
    assert robot.body_names == bodies and robot.nq == len(bodies)
    assert {lp.name: lp.type for lp in robot.loop_joints} == {k: v[0] for k, v in loops.items()}
    assert robot.actuated_names == actuated
    names = robot.coordinate_names
    assert {names[c.follower]: (names[c.leader], c.ratio) for c in robot.couplings} == couplings
    assert all(c.offset == 0 for c in robot.couplings)
    assert np.all(robot.q0 == 0)
    # closed at q = 0 for pga-dyn and for Pinocchio's kinematics
    residual = constraints(robot).evaluate(robot.q0)[0]
    assert residual.shape == (sum({"R": 6, "S": 3}[t] for t, _ in loops.values()) + len(couplings),)
    assert np.abs(residual).max() < 1e-12
    oracle = TreeOracle(robot)
    qp = oracle.configuration(robot.q0)
    assert np.abs(oracle.residual(qp)).max() < 1e-12
    # the loop frames meet at the point the header gives
    pin.forwardKinematics(oracle.model, oracle.data, qp)
    for lp in robot.loop_joints:
        for body, frame in ((lp.parent, lp.parent_frame), (lp.child, lp.child_frame)):
            assert np.allclose((oracle.data.oMi[body].homogeneous @ frame)[:3, 3], loops[lp.name][1], atol=1e-12)
    # regular at q = 0: J_p has full column rank, the nullspace of J is as wide as the actuation
    J = constraint_jacobian(oracle, qp)
    s = np.linalg.svd(J[:, list(robot.passive)], compute_uv=False)
    assert s[-1] > s[0] / 20, s
    assert np.linalg.matrix_rank(J, tol=1e-10 * np.abs(J).max()) == robot.nq - len(actuated)


def test_spherical_loop_of_the_planar_five_bar_is_rank_deficient():
    """The ball joint gives 3 rows, but in the plane only 2 are independent (the design)."""
    robot = load("five_bar_spherical")
    oracle = TreeOracle(robot)
    J = constraint_jacobian(oracle, oracle.configuration(robot.q0))
    assert J.shape == (3, 4)
    assert np.allclose(J[2], 0.0) and np.linalg.matrix_rank(J[:2]) == 2


# Pinocchio's nullspace dimensions (of 40 parameters), printed by
#     PYTHONPATH=. python tests/fixture_oracle.py
# Gravity "z" is along the five-bar's joint axes and along the rotor chains' joint 1; "y" lies in
# the five-bar's plane and is across joint 1 of the chains.
ORACLE_NULLITY = {
    ("five_bar_spherical", "z"): 33,
    ("five_bar_spherical", "y"): 29,
    ("rotor_chain_6", "z"): 26,
    ("rotor_chain_6", "y"): 22,
    ("rotor_chain_50", "z"): 26,
    ("rotor_chain_50", "y"): 22,
}


@pytest.mark.parametrize("name,gravity", sorted(ORACLE_NULLITY))
def test_oracle_nullity_of_the_coupled_fixtures(name, gravity):
    """Pinocchio's figures for the fixtures whose DRNG tests come with the closed-form couplings:
    the figure and a clean singular gap, also from a second draw of states."""
    robot = load(name, GRAVITIES[gravity])
    for seed in (0, 1):
        dim, gap, _ = nullity(robot, seed=seed)
        assert dim == ORACLE_NULLITY[name, gravity] and gap > 1e8, (seed, dim, gap)


def oracle_states(robot, oracle, q_a, qd_a, qdd_a):
    """Pinocchio's state for the actuated state: q closed by Newton on Pinocchio's residual;
    G = N N_a^-1 with N the nullspace of Pinocchio's constraint Jacobian; qd = G qd_a; qdd =
    G qdd_a, minus J_p^+ (d/dt J) qd on the passive coordinates, the bias by finite differences
    of Pinocchio's residual (zero for couplings alone, which are linear)."""
    closed = close(oracle, q_a)
    assert closed is not None
    q, N = closed
    G = N @ np.linalg.inv(N[list(robot.actuated)])
    qd = G @ qd_a
    qp = oracle.configuration(q)
    J = constraint_jacobian(oracle, qp)
    if robot.loop_joints:
        bias = oracle.second_derivative(qp, qd, np.zeros(robot.nq))
    else:  # couplings alone are linear in q: no bias
        bias = np.zeros(J.shape[0])
    qdd = G @ qdd_a
    qdd[list(robot.passive)] -= np.linalg.pinv(J[:, list(robot.passive)], rcond=1e-10) @ bias
    return q, qd, qdd, G


@pytest.mark.parametrize("name", ["rotor_chain_6", "rotor_chain_50", "five_bar_spherical"])
def test_regressor_near_zero_against_pinocchio(name):
    robot = load(name, gravity=(0.4, -2.0, -9.81))
    oracle = TreeOracle(robot)
    pi, C = tp.inertial_parameters(robot), oracle.parameter_map()
    na = len(robot.actuated)
    rng = np.random.default_rng(17)
    q_a = rng.uniform(-0.3, 0.3, (6, na))
    qd_a, qdd_a = rng.uniform(-1.0, 1.0, (2, 6, na))
    qd_a[0] = 0.0  # a rest state: no bias term, exact
    Ya = tp.regressor(robot, q_a, qd_a, qdd_a)
    assembled = complete_states(robot, q_a, qd_a, qdd_a)
    for s in range(len(q_a)):
        q, qd, qdd, G = oracle_states(robot, oracle, q_a[s], qd_a[s], qdd_a[s])
        assert np.abs(q - assembled.q[s]).max() < 1e-9, s
        assert relative(assembled.G[s], G) < 1e-9, s
        tol = 1e-9 if s == 0 or not robot.loop_joints else 1e-6  # finite-difference bias of loops
        assert relative(assembled.qdd[s], qdd) < tol, s
        assert relative(Ya[s] @ pi, G.T @ oracle.rnea(q, qd, qdd)) < tol, s
        assert relative(Ya[s] @ C, G.T @ oracle.regressor(q, qd, qdd)) < tol, s
    if robot.couplings:  # G from the file: a rotor turns `ratio` times as fast as its joint
        index = {n: k for k, n in enumerate(robot.coordinate_names)}
        ratio = DESIGN[name][3]["rotor1_joint"][1]
        expected = np.zeros((robot.nq, 2))
        expected[index["joint1"], 0], expected[index["rotor1_joint"], 0] = 1.0, ratio
        expected[index["joint2"], 1], expected[index["rotor2_joint"], 1] = 1.0, ratio
        assert np.allclose(assembled.G, expected, atol=1e-12)
