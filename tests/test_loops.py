"""Closed loops and couplings against Pinocchio (independent oracle).

Pinocchio models the spanning tree (built joint by joint from the Robot: tests/oracle.py
TreeOracle); the loop constraints are written again from Pinocchio's forward kinematics and
differentiated by finite differences. At the valid states that pga-dyn assembles
(pga_dyn.sampling.sample_states) the tests check that

* the assembled q closes the loops, qd satisfies J qd = 0 and qdd the acceleration constraint;
* the projection G = dq/dq_a of pga-dyn satisfies J G = 0, G[actuated] = I, and equals the one
  obtained from the nullspace of Pinocchio's constraint Jacobian;
* the rows of pga-dyn's Y_a span the rows of G_ind^T Y_pin (G_ind an orthonormal basis of that
  nullspace), and Y_a pi = G^T rnea_pin(q, qd, qdd).

Couplings (URDF <mimic>, URDF+ <coupling>) are checked against a G written from the file.
Then the nullspace dimensions of the URDF+ fixtures (tests/fixtures/), and bad input.
"""

import numpy as np
import pinocchio as pin  # noqa: E402  (the test extra installs it: a missing oracle is a failure)
import pytest
from oracle import TreeOracle, numerical_rank
from paths import FOUR_BAR, LEG_LINKAGE, SIX_BAR  # noqa: E402

import drng
import robots
from pga_dyn import PgaDynError
from pga_dyn import tp_regressor as tp
from pga_dyn.sampling import complete_states, sample_states


# -- fixtures ------------------------------------------------------------------------------------
def inertial(mass, com, rpy=(0.1, -0.2, 0.3), diag=(0.02, 0.03, 0.025)):
    """An <inertial> with an offset, rotated centre-of-mass frame (full inertia matrix)."""
    off = 0.1 * min(diag)  # products of inertia small enough for a positive definite inertia
    return (
        f'<inertial><mass value="{mass}"/><origin xyz="{com[0]} {com[1]} {com[2]}" '
        f'rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/><inertia ixx="{diag[0]}" ixy="{off}" ixz="{-0.5 * off}" '
        f'iyy="{diag[1]}" iyz="{0.75 * off}" izz="{diag[2]}"/></inertial>'
    )


def link(name, mass=None, com=(0, 0, 0), **kw):
    return f'<link name="{name}">{inertial(mass, com, **kw) if mass else ""}</link>'


def joint(name, kind, parent, child, xyz="0 0 0", axis=None, axis2=None, rpy="0 0 0", extra="", attrs=""):
    ax = f'<axis xyz="{axis}"/>' if axis else ""
    ax2 = f'<axis2 xyz="{axis2}"/>' if axis2 else ""
    return (
        f'<joint name="{name}" type="{kind}" {attrs}><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{ax2}{extra}</joint>'
    )


def loop(name, kind, pred, pred_xyz, succ, succ_xyz, axis=None, axis2=None):
    ax = f'<axis xyz="{axis}"/>' if axis else ""
    ax2 = f'<axis2 xyz="{axis2}"/>' if axis2 else ""
    return (
        f'<loop name="{name}" type="{kind}"><predecessor link="{pred}"><origin xyz="{pred_xyz}"/>'
        f'</predecessor><successor link="{succ}"><origin xyz="{succ_xyz}"/></successor>{ax}{ax2}</loop>'
    )


def robot_xml(name, *parts):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


# A tree with every joint type of the builder (R, P, non-orthogonal U, S) and a fixed joint.
MIXED_TREE = robot_xml(
    "mixed_tree",
    link("base"),
    link("l1", 1.1, (0.1, 0.02, 0.05)),
    link("l2", 0.9, (0.0, 0.1, -0.03)),
    link("l3", 1.4, (0.05, 0.05, 0.2)),
    link("l4", 0.7, (0.1, -0.05, 0.1)),
    link("l5", 0.6, (0.0, 0.0, 0.15)),
    link("tool", 0.3, (0.02, 0.0, 0.04)),
    joint("r1", "revolute", "base", "l1", "0 0 0.2", "0 0 1"),
    joint("p2", "prismatic", "l1", "l2", "0.3 0 0", "0.48 0.6 0.64", rpy="0.2 0 0.1"),
    joint("u3", "universal", "l2", "l3", "0 0.2 0.1", "1 0 0", "0 0.6 0.8"),
    joint("s4", "spherical", "l3", "l4", "0 0 0.4", rpy="0.3 -0.1 0.2"),
    joint("s5", "spherical", "base", "l5", "0.5 0 0"),
    joint("fix", "fixed", "l4", "tool", "0.1 0 0.2", rpy="0 0.4 0"),
)

# Spatial R-S-U-R four-bar: crank (R about z), coupler on a spherical tree joint, rocker (R about
# y), the coupler-rocker universal joint cut as the loop joint. Closed at q0.
RSUR = robot_xml(
    "rsur",
    link("base"),
    link("crank", 1.2, (0.15, 0.01, -0.02)),
    link("coupler", 2.0, (0.35, 0.02, 0.4)),
    link("rocker", 1.5, (0.01, 0.0, 0.3)),
    joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1"),
    joint("coupler_joint", "spherical", "crank", "coupler", "0.3 0 0", attrs='independent="false"'),
    joint("rocker_joint", "revolute", "base", "rocker", "1.0 0 0.2", "0 1 0", attrs='independent="false"'),
    loop("coupler_rocker", "universal", "coupler", "0.7 0 0.8", "rocker", "0 0 0.6", "0 1 0", "1 0 0"),
)

# The R-S-U-R four-bar with a universal loop joint whose axes meet at 60 degrees, not 90: the
# constraint keeps the angle of q0 (cos = 0.5).
RSUR_SKEW = RSUR.replace('name="rsur"', 'name="rsur_skew"').replace(
    '<axis xyz="0 1 0"/><axis2 xyz="1 0 0"/></loop>',
    '<axis xyz="0 1 0"/><axis2 xyz="0.8660254037844386 0.5 0"/></loop>',
)

# R-U-S-R: the same geometry with the universal joint in the tree and the spherical one cut.
RUSR = robot_xml(
    "rusr",
    link("base"),
    link("crank", 1.2, (0.15, 0.01, -0.02)),
    link("coupler", 2.0, (0.35, 0.02, 0.4)),
    link("rocker", 1.5, (0.01, 0.0, 0.3)),
    joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1"),
    joint("coupler_joint", "universal", "crank", "coupler", "0.3 0 0", "1 0 0", "0 1 0", attrs='independent="false"'),
    joint("rocker_joint", "revolute", "base", "rocker", "1.0 0 0.2", "0 1 0", attrs='independent="false"'),
    loop("coupler_rocker", "spherical", "coupler", "0.7 0 0.8", "rocker", "0 0 0.6"),
)

# Slider-crank whose slider block is cut from the base by a prismatic loop joint (a loop whose
# parent is the base, body 0).
SLIDER = robot_xml(
    "slider",
    link("base"),
    link("crank", 1.0, (0.1, 0.0, 0.01)),
    link("rod", 1.5, (0.5, 0.01, 0.0)),
    link("block", 2.0, (0.0, 0.02, 0.03)),
    joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1"),
    joint("rod_joint", "revolute", "crank", "rod", "0.3 0 0", "0 0 1", attrs='independent="false"'),
    joint("block_joint", "revolute", "rod", "block", "1.0 0 0", "0 0 1", attrs='independent="false"'),
    loop("slide", "prismatic", "block", "0 0 0", "base", "0 0 0", "1 0 0"),
)

# A four-bar with links too short to close anywhere: 0.2 + 0.3 + 0.3 < 1.
SHORT_FOUR_BAR = robot_xml(
    "short_four_bar",
    link("base"),
    link("a", 1.0, (0.1, 0, 0)),
    link("b", 1.0, (0.15, 0, 0)),
    link("c", 1.0, (0.15, 0, 0)),
    joint("ja", "revolute", "base", "a", "0 0 0", "0 0 1"),
    joint("jb", "revolute", "a", "b", "0.2 0 0", "0 0 1", attrs='independent="false"'),
    joint("jc", "revolute", "base", "c", "1.0 0 0", "0 0 1", attrs='independent="false"'),
    loop("close", "revolute", "b", "0.3 0 0", "c", "0.3 0 0", "0 0 1"),
)

# A 3-joint arm: j2 mimics j1 (q2 = -2.5 q1 + 0.3), and a rotor on l2 turns 6 times as fast
# as j3 (URDF+ coupling between the children of j3 and jr).
COUPLED_ARM = robot_xml(
    "coupled_arm",
    link("base"),
    link("l1", 2.0, (0.0, 0.05, 0.1)),
    link("l2", 1.5, (0.15, 0.0, 0.02)),
    link("l3", 1.0, (0.2, 0.01, 0.0)),
    link("rotor", 0.2, (0.0, 0.0, 0.01), diag=(0.001, 0.002, 0.0015)),
    joint("j1", "revolute", "base", "l1", "0 0 0.1", "0 0 1"),
    joint(
        "j2", "revolute", "l1", "l2", "0 0.1 0.3", "0 1 0", extra='<mimic joint="j1" multiplier="-2.5" offset="0.3"/>'
    ),
    joint("j3", "revolute", "l2", "l3", "0.4 0 0", "0 1 0"),
    joint("jr", "continuous", "l2", "rotor", "0.1 0 0.05", "0 1 0"),
    '<coupling name="gear" type="rolling"><predecessor link="l3"/><successor link="rotor"/>'
    '<ratio value="6.0"/></coupling>',
)


def rsur_leg(tag, ground, y):
    """The R-S-U-R four-bar of RSUR hung from ``ground`` at lateral offset y, its names tagged."""
    return (
        link(f"crank_{tag}", 1.2, (0.15, 0.01, -0.02)),
        link(f"coupler_{tag}", 2.0, (0.35, 0.02, 0.4)),
        link(f"rocker_{tag}", 1.5, (0.01, 0.0, 0.3)),
        joint(f"crank_joint_{tag}", "revolute", ground, f"crank_{tag}", f"0 {y} 0", "0 0 1"),
        joint(
            f"coupler_joint_{tag}",
            "spherical",
            f"crank_{tag}",
            f"coupler_{tag}",
            "0.3 0 0",
            attrs='independent="false"',
        ),
        joint(
            f"rocker_joint_{tag}",
            "revolute",
            ground,
            f"rocker_{tag}",
            f"1.0 {y} 0.2",
            "0 1 0",
            attrs='independent="false"',
        ),
        loop(
            f"coupler_rocker_{tag}",
            "universal",
            f"coupler_{tag}",
            "0.7 0 0.8",
            f"rocker_{tag}",
            "0 0 0.6",
            "0 1 0",
            "1 0 0",
        ),
    )


# Two R-S-U-R legs on a torso that an actuated hip turns: two independent parts of the loop
# constraints (pga_dyn.loops.Part), and a coordinate (the hip) that moves both bodies of every
# loop, so that it belongs to neither part.
TWO_LEGS = robot_xml(
    "two_legs",
    link("base"),
    link("torso", 3.0, (0.4, 0.1, 0.05)),
    joint("hip", "revolute", "base", "torso", "0 0 0.5", "1 0 0"),
    *rsur_leg("left", "torso", 0.3),
    *rsur_leg("right", "torso", -0.3),
)

FIXTURES = {"rsur": RSUR, "rsur_skew": RSUR_SKEW, "rusr": RUSR, "slider": SLIDER, "two_legs": TWO_LEGS}
FILES = {"four_bar": FOUR_BAR, "six_bar": SIX_BAR, "leg_linkage": LEG_LINKAGE}
BUILTIN_PKMS = ("2rru_1rrs", "2prs_1psr")


def load(name, gravity=(0.0, 0.0, -9.81)):
    """A closed-loop robot by name: a URDF+ file of tests/fixtures/, a fixture of this module,
    or a built-in PKM (a loader error fails the test)."""
    if name in FILES:
        return robots.load_urdf(FILES[name], gravity=gravity)
    if name in FIXTURES:
        return robots.parse_urdf(FIXTURES[name], where=name, gravity=gravity)
    return robots.load(name, gravity=gravity)


def relative(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def row_space_sine(A, B, rank):
    """sin of the largest principal angle between the row spaces of A and B, after checking that
    both have the given rank (with a clear gap) and so does [A; B]."""
    bases = []
    for M in (A, B):
        _, s, vt = np.linalg.svd(M)
        assert s[rank - 1] > 1e-6 * s[0], ("rank deficient rows", s)
        if len(s) > rank:
            assert s[rank] < 1e-9 * s[0], ("too many rows", s)
        bases.append(vt[:rank].T)
    Qa, Qb = bases
    return np.linalg.norm(Qb - Qa @ (Qa.T @ Qb), 2)


# -- 1. the Pinocchio tree builder, on trees -------------------------------------------------------
@pytest.mark.parametrize("name", ["puma560", "mixed_tree"])
def test_tree_builder_equals_pga_dyn(name):
    robot = (
        robots.load(name) if name == "puma560" else robots.parse_urdf(MIXED_TREE, where=name, gravity=(1.0, -2.0, -9.0))
    )
    oracle = TreeOracle(robot)
    pi, C = tp.inertial_parameters(robot), oracle.parameter_map()
    assert relative(C @ oracle.link_parameters().ravel(), pi) < 1e-13
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.nq))
        Y = tp.regressor(robot, q, qd, qdd)
        tau = oracle.rnea(q, qd, qdd)
        assert relative(Y @ pi, tau) < 1e-11
        assert relative(Y @ C, oracle.regressor(q, qd, qdd)) < 1e-11


def test_tree_builder_spherical_and_universal_kinematics():
    """Body poses of the builder equal pga-dyn's (rotation vector <-> quaternion, U = Rot Rot)."""
    from pga_dyn.kinematics import Kinematics

    robot = robots.parse_urdf(MIXED_TREE, where="mixed_tree")
    oracle = TreeOracle(robot)
    q = np.random.default_rng(5).uniform(-2.0, 2.0, robot.nq)
    pin.forwardKinematics(oracle.model, oracle.data, oracle.configuration(q))
    poses = Kinematics(robot, q).T
    for i in range(1, robot.n + 1):
        assert np.allclose(oracle.data.oMi[i].homogeneous, poses[i], atol=1e-12), robot.body_names[i - 1]


# -- 2. loops: the assembled states against Pinocchio's kinematics and dynamics --------------------
LOOP_ROBOTS = ["four_bar", "six_bar", "leg_linkage", "rsur", "rsur_skew", "rusr", "slider", "two_legs", *BUILTIN_PKMS]
BOUNDS = {"slider": [[-2.8, 2.8]]}


@pytest.fixture(scope="module", params=LOOP_ROBOTS)
def assembled(request):
    """(robot, oracle, states) with a few valid states of each closed-loop robot."""
    robot = load(request.param, gravity=(0.3, -1.2, -9.81))
    states = sample_states(robot, 6, seed=11, bounds=BOUNDS.get(request.param))
    return robot, TreeOracle(robot), states


def test_assembled_states_close_per_pinocchio(assembled):
    robot, oracle, states = assembled
    assert robot.loop_joints
    for s in range(len(states)):
        qp = oracle.configuration(states.q[s])
        r = oracle.residual(qp)
        assert np.abs(r).max() < 1e-9, (s, r)
        # the residual has teeth: moving one passive coordinate opens the loop
        moved = pin.integrate(oracle.model, qp, 1e-3 * np.eye(robot.nq)[robot.passive[0]])
        assert np.abs(oracle.residual(moved)).max() > 1e-5


def test_velocities_and_accelerations_satisfy_the_constraints(assembled):
    robot, oracle, states = assembled
    worst_naive = 0.0
    for s in range(len(states)):
        qp = oracle.configuration(states.q[s])
        J = oracle.jacobian(qp)
        qd, qdd = states.qd[s], states.qdd[s]
        assert np.linalg.norm(J @ qd) < 1e-8 * max(1.0, np.linalg.norm(J) * np.linalg.norm(qd)), s
        second = oracle.second_derivative(qp, qd, qdd)
        assert np.abs(second).max() < 1e-5, (s, second)
        # the check has teeth: an acceleration error of 1e-3 along J's main direction shows
        wrong = qdd + 1e-3 * np.linalg.svd(J)[2][0]
        assert np.abs(oracle.second_derivative(qp, qd, wrong)).max() > 1e-4
        # without the bias term -J_p^+ Jd qd, the passive accelerations violate the constraint
        naive = states.G[s] @ states.qdd_a[s]
        worst_naive = max(worst_naive, np.abs(oracle.second_derivative(qp, qd, naive)).max())
    # ... unless G is constant (as for a parallelogram four-bar: q2 = -q1, q3 = q1), where Jd qd = 0
    if not np.allclose(states.G, states.G[0], atol=1e-9):
        assert worst_naive > 1e-3, worst_naive


def test_projection_equals_pinocchio_nullspace(assembled):
    """pga-dyn's G: J_pin G = 0, G[actuated] = I, and it is the unique such matrix built from an
    orthonormal basis of the nullspace of Pinocchio's constraint Jacobian."""
    robot, oracle, states = assembled
    na = len(robot.actuated)
    for s in range(len(states)):
        J = oracle.jacobian(oracle.configuration(states.q[s]))
        _, sv, vt = np.linalg.svd(J)
        rank = robot.nq - na
        assert sv[rank - 1] > 1e-3 * sv[0] and (len(sv) <= rank or sv[rank] < 1e-8 * sv[0]), sv
        G_ind = vt[rank:].T
        G = states.G[s]
        assert np.allclose(G[robot.actuated], np.eye(na), atol=0)
        assert np.linalg.norm(J @ G) < 1e-8 * np.linalg.norm(J) * np.linalg.norm(G)
        G_from_pin = G_ind @ np.linalg.inv(G_ind[robot.actuated])
        assert relative(G, G_from_pin) < 1e-7


def test_regressor_rows_and_projected_inverse_dynamics(assembled):
    robot, oracle, states = assembled
    na = len(robot.actuated)
    pi, C = tp.inertial_parameters(robot), oracle.parameter_map()
    Ya = states.regressor()
    # the public entry point assembles the same states from q_a alone
    assert relative(tp.regressor(robot, states.q_a, states.qd_a, states.qdd_a), Ya) < 1e-10
    worst = 0.0
    for s in range(len(states)):
        q, qd, qdd, G = states.q[s], states.qd[s], states.qdd[s], states.G[s]
        J = oracle.jacobian(oracle.configuration(q))
        G_ind = np.linalg.svd(J)[2][robot.nq - na :].T
        Y_pin = oracle.regressor(q, qd, qdd)
        worst = max(worst, row_space_sine(G_ind.T @ Y_pin, Ya[s] @ C, na))
        tau = G.T @ oracle.rnea(q, qd, qdd)
        assert relative(Ya[s] @ pi, tau) < 1e-8, s
        assert relative(Ya[s] @ C, G.T @ Y_pin) < 1e-8, s
    assert worst < 1e-6


# The P and R loop residuals must reject a relative half-turn: a residual built from cross
# products (sin(angle) n, or (R_a u) x (R_b u)) vanishes for a body turned over, and Newton from
# q0 converges there for q_a far from q0. pga_dyn.loops compares directions instead.

# Two coaxial bodies (joints about x at the origin) held together by a revolute loop joint about z:
# the passive body must turn with the actuated one, q_b = q_a.
COAXIAL = robot_xml(
    "coaxial",
    link("base"),
    link("a", 1.0, (0.0, 0.1, 0.2)),
    link("b", 1.0, (0.0, -0.1, 0.1)),
    joint("ja", "revolute", "base", "a", "0 0 0", "1 0 0"),
    joint("jb", "revolute", "base", "b", "0 0 0", "1 0 0", attrs='independent="false"'),
    loop("weld", "revolute", "a", "0 0 0", "b", "0 0 0", "0 0 1"),
)


def test_prismatic_loop_keeps_the_orientation():
    """Slider crank at 2.5 rad: the block must keep the base orientation (q1 + q2 + q3 = 0 mod
    2 pi), not turn over (the sum would be pi)."""
    robot = load("slider")
    states = complete_states(robot, np.array([[2.5]]), np.zeros((1, 1)), np.zeros((1, 1)))
    turn = np.angle(np.exp(1j * states.q[0].sum()))
    assert abs(turn) < 1e-9, f"block turned by {turn} rad"


def test_revolute_loop_keeps_the_axis_direction():
    robot = robots.parse_urdf(COAXIAL, where="coaxial")
    states = complete_states(robot, np.array([[2.5]]), np.zeros((1, 1)), np.zeros((1, 1)))
    q_a, q_b = states.q[0]
    assert abs(np.angle(np.exp(1j * (q_b - q_a)))) < 1e-9, f"q_b - q_a = {q_b - q_a}"


def test_half_turn_states_are_open_for_pga_dyn_and_pinocchio():
    """A half-turned state is not closed for pga-dyn either: its residual agrees with Pinocchio's."""
    from pga_dyn.loops import constraints

    for robot in (load("slider"), robots.parse_urdf(COAXIAL, where="coaxial")):
        q = complete_states(robot, np.array([[2.5]]), np.zeros((1, 1)), np.zeros((1, 1))).q[0]
        oracle = TreeOracle(robot)
        assert np.abs(oracle.residual(oracle.configuration(q))).max() < 1e-9
        turned = q.copy()
        turned[robot.passive[-1]] += np.pi
        assert np.abs(constraints(robot).evaluate(turned)[0]).max() > 1.0
        assert np.abs(oracle.residual(oracle.configuration(turned))).max() > 1.0


# -- 3. couplings ----------------------------------------------------------------------------------
def test_mimic_and_rolling_coupling_against_pinocchio():
    robot = robots.parse_urdf(COUPLED_ARM, where="coupled_arm", gravity=(0.5, 0.0, -9.81))
    assert robot.actuated_names == ("j1", "j3")
    index = {name: k for k, name in enumerate(robot.coordinate_names)}
    G = np.zeros((robot.nq, 2))
    G[index["j1"], 0], G[index["j2"], 0] = 1.0, -2.5
    G[index["j3"], 1], G[index["jr"], 1] = 1.0, 6.0
    offset = np.zeros(robot.nq)
    offset[index["j2"]] = 0.3
    oracle = TreeOracle(robot)
    pi, C = tp.inertial_parameters(robot), oracle.parameter_map()
    rng = np.random.default_rng(7)
    q_a, qd_a, qdd_a = rng.uniform(-2, 2, (3, 5, 2))
    Ya = tp.regressor(robot, q_a, qd_a, qdd_a)
    for s in range(5):
        q, qd, qdd = G @ q_a[s] + offset, G @ qd_a[s], G @ qdd_a[s]
        assert np.abs(oracle.residual(oracle.configuration(q))).max() < 1e-12
        Y_pin = oracle.regressor(q, qd, qdd)
        assert relative(Ya[s] @ pi, G.T @ oracle.rnea(q, qd, qdd)) < 1e-10
        assert row_space_sine(G.T @ Y_pin, Ya[s] @ C, 2) < 1e-9
        assert relative(Ya[s] @ C, G.T @ Y_pin) < 1e-10
    states = sample_states(robot, 3, seed=2)
    assert np.allclose(states.G, G)
    assert np.allclose(states.q, states.q_a @ G.T + offset)


# -- 4. nullspace dimensions of the URDF+ fixtures -------------------------------------------------
# The expected figures are Pinocchio's, from rest states that Pinocchio's own kinematics closes
# (tests/fixture_oracle.py, which uses nothing of pga-dyn's kinematics or regressor), printed by
#     PYTHONPATH=. python tests/fixture_oracle.py
# test_drng.py::test_urdf_plus_fixtures computes them again. The four-bar and six-bar turn about
# z (gravity along the axes, or in the plane); the leg linkage turns about y.
@pytest.mark.parametrize(
    "name,gravity,nullity",
    [
        ("four_bar", (0.0, 0.0, -9.81), 26),
        ("four_bar", (0.0, -9.81, 0.0), 22),
        ("six_bar", (0.0, 0.0, -9.81), 43),
        ("six_bar", (0.0, -9.81, 0.0), 37),
        ("leg_linkage", (0.0, 0.0, -9.81), 29),
        ("leg_linkage", (0.0, -9.81, 0.0), 33),
    ],
)
def test_nullspace_dimension(name, gravity, nullity):
    robot = load(name, gravity)
    states = sample_states(robot, 100, seed=1)
    stacked = states.regressor().reshape(-1, 10 * robot.n)
    rank, gap = numerical_rank(stacked)
    assert gap > 1e6, gap
    assert 10 * robot.n - rank == nullity
    # the same rank from Pinocchio's regressor, projected with pga-dyn's G (checked against
    # Pinocchio's kinematics above) and with the finite-difference nullspace basis G_ind, whose
    # errors (~1e-9) call for a coarser threshold
    oracle = TreeOracle(robot)
    na = len(robot.actuated)
    exact, fd = [], []
    for s in range(len(states)):
        Y_pin = oracle.regressor(states.q[s], states.qd[s], states.qdd[s])
        J = oracle.jacobian(oracle.configuration(states.q[s]))
        exact.append(states.G[s].T @ Y_pin)
        fd.append(np.linalg.svd(J)[2][robot.nq - na :] @ Y_pin)
    rank_pin, gap_pin = numerical_rank(np.vstack(exact))
    assert rank_pin == rank and gap_pin > 1e6, (rank_pin, gap_pin)
    rank_fd, gap_fd = numerical_rank(np.vstack(fd), rtol=1e-6)
    assert rank_fd == rank and gap_fd > 1e4, (rank_fd, gap_fd)


# -- 5. bad input ----------------------------------------------------------------------------------
def six_bar_output_gap(crank):
    """The Watt six-bar of tests/fixtures/six_bar.urdf by plane geometry: for the crank angle,
    |EF| - (EG + GF) on both assembly branches of the first loop (positive: the output dyad
    E-G-F cannot reach, the second loop cannot close)."""

    def turn(t, v):
        return np.array([np.cos(t) * v[0] - np.sin(t) * v[1], np.sin(t) * v[0] + np.cos(t) * v[1]])

    B0, C0, D, E0, F = map(np.array, ([0.1, 0.2], [0.6, 0.5], [0.8, 0.0], [1.1, 0.45], [1.6, 0.0]))
    bc, dc = np.linalg.norm(C0 - B0), np.linalg.norm(C0 - D)
    reach = np.hypot(0.4, 0.15) + np.hypot(0.1, 0.6)  # EG + GF
    B = turn(crank, B0)
    d = np.linalg.norm(D - B)
    u = (D - B) / d
    a = (bc**2 - dc**2 + d * d) / (2 * d)
    gaps = []
    for side in (1, -1):
        C = B + a * u + side * np.sqrt(bc**2 - a * a) * np.array([-u[1], u[0]])
        swing = np.arctan2(*(C - D)[::-1]) - np.arctan2(*(C0 - D)[::-1])
        gaps.append(np.linalg.norm(F - D - turn(swing, E0 - D)) - reach)
    return gaps


def test_unreachable_actuated_position_raises():
    """six_bar: with the crank at pi the first loop closes, but E is farther from F than the
    output dyad E-G-F reaches, on either branch."""
    assert min(six_bar_output_gap(np.pi)) > 0.005 and min(six_bar_output_gap(0.0)) < 0  # q0 closes
    robot = load("six_bar")
    with pytest.raises(PgaDynError, match="six_bar.urdf: the loops do not close.*workspace"):  # names the file
        tp.regressor(robot, [np.pi], np.zeros(1), np.zeros(1))
    with np.errstate(all="raise"):  # no NaN produced on the way, either
        with pytest.raises(PgaDynError):
            tp.regressor(robot, [np.pi], np.ones(1), np.ones(1))


def test_loop_that_never_closes():
    """A loop that cannot close at q0's actuated position is refused first, naming the loop."""
    robot = robots.parse_urdf(SHORT_FOUR_BAR, where="short_four_bar")
    for angle in (0.0, 1.0, np.pi):
        with pytest.raises(PgaDynError, match="short_four_bar: the loop joint 'close' .*cannot be closed"):
            tp.regressor(robot, [angle], [0.0], [0.0])
    with pytest.raises(PgaDynError, match="'close'"):
        sample_states(robot, 2, seed=0, max_draws=20)
    with pytest.raises(PgaDynError, match="'close'"):
        drng.nullspace(robot, certify=False)


@pytest.mark.parametrize("bounds", [np.zeros((1, 3)), np.zeros(2), np.zeros((2, 2)), [[1.0, -1.0]], [[0.0, np.nan]]])
def test_sample_states_bad_bounds(bounds):
    robot = load("four_bar")
    with pytest.raises(PgaDynError, match="crank_joint"):
        sample_states(robot, 2, seed=0, bounds=bounds)


@pytest.mark.parametrize("name", ["four_bar", "six_bar", "leg_linkage"])
def test_tree_sized_state_names_the_actuated_coordinates(name):
    robot = load(name)
    z = np.zeros(robot.nq)
    with pytest.raises(PgaDynError) as info:
        tp.regressor(robot, z, z, z)
    message = str(info.value)
    assert all(a in message for a in robot.actuated_names), message
    assert f"({len(robot.actuated)},)" in message
    passive = [robot.coordinate_names[k] for k in robot.passive]
    assert not any(f"'{p}'" in message for p in passive), message


# A planar four-bar whose closure is a point (spherical loop joint) between the coupler and a
# pin link hinged on the rocker (as in files that keep every joint in the tree): three passive
# coordinates, three equations, but the planar linkage makes one of them vanish, so the pin spins
# freely: a passive motion that no actuator drives (J_p rank-deficient everywhere).
PLANAR_PIN = robot_xml(
    "planar_pin",
    link("base"),
    link("crank", 1.2, (0.15, 0.01, 0.0)),
    link("coupler", 2.0, (0.35, 0.02, 0.0)),
    link("rocker", 1.5, (0.01, 0.2, 0.0)),
    link("pin", 0.2, (0.02, 0.0, 0.0)),
    joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1"),
    joint("coupler_joint", "revolute", "crank", "coupler", "0.3 0 0", "0 0 1", attrs='independent="false"'),
    joint("rocker_joint", "revolute", "base", "rocker", "1.0 0 0", "0 0 1", attrs='independent="false"'),
    joint("pin_joint", "revolute", "rocker", "pin", "0 0.6 0", "0 0 1", attrs='independent="false"'),
    loop("coupler_pin", "spherical", "coupler", "0.7 0.6 0", "pin", "0.0 0 0"),
)


def test_a_free_pin_whose_mass_is_off_its_axis_is_locked_approximately_or_made_a_coordinate():
    """The pin's free spin (its centre of mass 2 cm off its axis): locked with a warning that says
    it is an approximation, and answered; exactly, with pin_joint an unactuated independent
    coordinate, equal to Pinocchio's sampled rank with the same independent coordinates."""
    from fixture_oracle import nullity

    from pga_dyn.errors import PgaDynWarning
    from pga_dyn.loops import constraints, exact_spins

    robot = robots.parse_urdf(PLANAR_PIN, where="planar_pin")
    with pytest.warns(PgaDynWarning, match=r"planar_pin: the free spin of body 'pin' is locked, AN APPROXIMATION"):
        (spin,) = constraints(robot).spins
    assert not spin.symmetric and spin.offset == pytest.approx(0.02) and "pin_joint" in spin.joints
    assert drng.nullspace(robot).certified
    exact = exact_spins(robot)
    assert exact.actuated_names == ("crank_joint", "pin_joint")
    result = drng.nullspace(exact)
    assert result.certified and result.dim == nullity(exact)[0]


def test_independent_loops_are_separate_parts():
    """Two legs on a turning torso: one part per leg, each with its own crank; the hip moves both
    bodies of each loop (it leaves their closure unchanged) and belongs to neither part. The
    assembled states of the part-by-part solver are checked against Pinocchio above (``assembled``)."""
    from pga_dyn.loops import constraints

    robot = load("two_legs")
    con = constraints(robot)
    names = [[robot.coordinate_names[con.z_index[k]] for k in part.columns] for part in con.parts]
    assert names == [
        [
            "crank_joint_left",
            "coupler_joint_left.rx",
            "coupler_joint_left.ry",
            "coupler_joint_left.rz",
            "rocker_joint_left",
        ],
        [
            "crank_joint_right",
            "coupler_joint_right.rx",
            "coupler_joint_right.ry",
            "coupler_joint_right.rz",
            "rocker_joint_right",
        ],
    ]
    assert [robot.loop_joints[l].name for part in con.parts for l in part.loops] == [
        "coupler_rocker_left",
        "coupler_rocker_right",
    ]


def spinner_four_bar(point):
    """The four-bar of tests/fixtures/four_bar.urdf plus an actuated spinner about x held to the
    base by a spherical loop joint at ``point`` of the spinner: a loop that no passive coordinate
    moves (in no part of ``Constraints.parts``)."""
    with open(FOUR_BAR) as handle:
        text = handle.read()
    extra = (
        link("spinner", 0.5, (0.1, 0.05, 0.02))
        + joint("spin", "revolute", "base", "spinner", "0 0 1", "1 0 0")
        + loop(
            "pin",
            "spherical",
            "spinner",
            point,
            "base",
            f"{point.split()[0]} {point.split()[1]} {1 + float(point.split()[2])}",
        )
    )
    return robots.parse_urdf(text.replace("</robot>", extra + "</robot>"), where="spinner.urdf")


def test_a_loop_no_passive_coordinate_moves_is_watched():
    """On the spinner's axis the loop stays closed whatever the spinner does: the samples are valid
    (closed per Pinocchio); off the axis every turn of the spinner opens it, so no draw is valid."""
    from pga_dyn.loops import constraints

    robot = spinner_four_bar("0.3 0 0")
    con = constraints(robot)
    pin = [lp.name for lp in robot.loop_joints].index("pin")
    assert len(con.parts) == 1 and pin not in con.parts[0].loops
    states = sample_states(robot, 4, seed=2)
    oracle = TreeOracle(robot)
    assert np.ptp(states.q_a[:, list(robot.coordinate_names[k] for k in robot.actuated).index("spin")]) > 0.5
    for s in range(len(states)):
        assert np.abs(oracle.residual(oracle.configuration(states.q[s]))).max() < 1e-9
    with pytest.raises(PgaDynError, match="draws were valid"):
        sample_states(spinner_four_bar("0.3 0.2 0"), 3, seed=2, max_draws=30)


# A parallelogram whose rocker is geared 1:1 to the crank (<mimic>): the crank's free coordinate
# turns both sides of the loop (the crank moves the coupler, the mimic the rocker), the coupler
# is passive. Analytically the coupler turns by -q and the rocker by q.
GEARED_PARALLELOGRAM = robot_xml(
    "geared_parallelogram",
    link("base"),
    link("crank", 1.0, (0.0, 0.15, 0.01)),
    link("coupler", 1.5, (0.5, 0.02, 0.0)),
    link("rocker", 1.2, (0.01, 0.15, 0.0)),
    joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1"),
    joint("coupler_joint", "revolute", "crank", "coupler", "0 0.3 0", "0 0 1", attrs='independent="false"'),
    joint(
        "rocker_joint",
        "revolute",
        "base",
        "rocker",
        "1 0 0",
        "0 0 1",
        extra='<mimic joint="crank_joint" multiplier="1" offset="0"/>',
    ),
    loop("close", "revolute", "coupler", "1 0 0", "rocker", "0 0.3 0", "0 0 1"),
)


def test_a_coordinate_coupled_across_a_loop_is_in_its_part():
    """The crank's coordinate drives a tree coordinate on each side of the loop: it moves the two
    bodies differently, so it belongs to the loop's part (counted per tree coordinate, not per
    body), and the samples close the loop with the analytic passive motion and projection."""
    from pga_dyn.loops import constraints

    robot = robots.parse_urdf(GEARED_PARALLELOGRAM, where="geared.urdf")
    con = constraints(robot)
    assert len(con.parts) == 1 and con.parts[0].na == 1
    states = sample_states(robot, 5, seed=4, bounds=[[-1.2, 1.2]])
    q_a = states.q_a[:, 0]
    assert np.ptp(q_a) > 0.5
    assert np.allclose(states.q, np.stack([q_a, -q_a, q_a], axis=1), atol=1e-9)
    assert np.allclose(states.G[:, :, 0], [1.0, -1.0, 1.0], atol=1e-9)
    oracle = TreeOracle(robot)
    for s in range(len(states)):
        assert np.abs(oracle.residual(oracle.configuration(states.q[s]))).max() < 1e-9


def test_loops_of_actuated_joints_alone_are_checked():
    """A four-bar whose every joint is actuated has no passive coordinate: nothing solves its loop,
    and a state that opens it is refused, naming the loop; one that keeps it closed passes."""
    with open(FOUR_BAR) as handle:
        text = handle.read().replace('independent="false"', 'independent="true"')
    robot = robots.parse_urdf(text, where="all_actuated.urdf")
    assert not robot.passive.size
    with pytest.raises(PgaDynError, match="all_actuated.urdf: the loop joint 'coupler_rocker' does not close"):
        sample_states(robot, 3, seed=1)
    with pytest.raises(PgaDynError, match="the loop joint 'coupler_rocker' does not close"):
        tp.regressor(robot, [0.3, 0.0, 0.0], np.zeros(3), np.zeros(3))
    assert tp.regressor(robot, np.zeros(3), np.zeros(3), np.zeros(3)).shape == (3, 30)  # q0 closes


def planar_delta():
    """A planar two-crank Delta whose effector keeps its orientation through two parallelograms
    (the layout of Gepetto's robot_delta), every axis along z, gravity along -y: cranks 0.2 at
    (-+0.1, 0) pointing down at q0, distal links to the effector's two pins (0.06 apart); a
    transmission rod pivoted 0.03 from crank 2's pivot, parallel to crank 2, carries a
    transmission hinged at crank 2's tip, on which a link parallel to distal link 2 reaches the
    effector. The parallelograms flatten 15 degrees from q0 and on the paths to a quarter of
    the box: bifurcations, where the crossed branch (the effector turning) meets the
    parallelogram branch without a sign change of det(J_f) for a path that switches."""
    from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot

    def at(p):
        t = np.eye(4)
        t[:2, 3] = p
        return t

    z = np.array([[0.0, 0.0, 1.0]])
    P1, P2 = np.array([-0.1, 0.0]), np.array([0.1, 0.0])
    C1, C2 = P1 + [0.0, -0.2], P2 + [0.0, -0.2]
    E = C1 + 0.3 * np.array([np.cos(np.radians(-60.0)), np.sin(np.radians(-60.0))])
    E2 = E + [0.06, 0.0]
    T0 = P2 + 0.03 * np.array([np.cos(np.radians(-75.0)), np.sin(np.radians(-75.0))])
    S0 = C2 + [0.03, 0.01]
    where = {
        "base": np.zeros(2),
        "crank1": P1,
        "distal1": C1,
        "effector": E,
        "crank2": P2,
        "distal2": C2,
        "trod": T0,
        "transmission": T0 + (C2 - P2),
        "tlink": S0,
    }
    rng = np.random.default_rng(7)
    links = [LinkSpec("base")] + [
        LinkSpec(name, Inertial(0.2 + 0.1 * k, rng.uniform(-0.02, 0.02, 3), np.diag(rng.uniform(1e-4, 5e-4, 3))))
        for k, name in enumerate(list(where)[1:])
    ]

    def tree(name, parent, child, actuated=False):
        return JointSpec(name, "R", parent, child, at(where[child] - where[parent]), z, independent=actuated)

    def closure(name, parent, child, point):
        return LoopSpec(name, "R", parent, child, at(point - where[parent]), at(point - where[child]), z)

    joints = [
        tree("mot1", "base", "crank1", True),
        tree("free1", "crank1", "distal1"),
        tree("free2", "distal1", "effector"),
        tree("mot2", "base", "crank2", True),
        tree("free3", "crank2", "distal2"),
        tree("free4", "base", "trod"),
        tree("free5", "trod", "transmission"),
        tree("free6", "transmission", "tlink"),
    ]
    loops = [
        closure("pin_effector", "distal2", "effector", E2),
        closure("pin_transmission", "crank2", "transmission", C2),
        closure("pin_tlink", "tlink", "effector", S0 + (E2 - C2)),
    ]
    return Robot("planar_delta", links, joints, loops=loops, gravity=(0.0, -9.81, 0.0))


@pytest.mark.slow  # 300 samples over bifurcations and Pinocchio's rank of the planar Delta
def test_samples_stay_on_the_branch_over_bifurcations():
    """The planar Delta's straight assembly paths cross bifurcations of its parallelograms, where
    Newton's corrector can land on the crossed branch with det(J_f) keeping its sign (before the
    paths watched their tangent and the singular values of J_f, one state in a hundred turned
    the effector and the rank was not certified). Every sample keeps the effector's orientation,
    and the certified dimension is Pinocchio's on the reference's branch (tests/fixture_oracle.py,
    whose paths check their tangent too)."""
    from fixture_oracle import file_nullity

    from pga_dyn.kinematics import tree_state

    robot = planar_delta()
    effector = robot.body_index("effector")
    for seed in range(3):
        states = sample_states(robot, 100, seed=seed)
        for q in states.q:
            R = tree_state(robot, q, 0 * q, 0 * q)[0][effector][:3, :3]
            np.testing.assert_allclose(R, np.eye(3), atol=1e-9)
    dim, gap, _, _ = file_nullity(robot, "<robot name='planar_delta'/>", free=list(robot.passive))
    assert gap > 1e8
    result = drng.nullspace(robot)
    assert result.certified and result.dim == dim == 69


@pytest.mark.parametrize("name", ["two_legs", "rsur", "six_bar", "2rru_1rrs", "2prs_1psr", "five_bar"])
def test_compiled_record_and_projection_equal_their_twins(name):
    """The compiled record (pga_dyn.loops.parts.record_kernel: each sample from the previous one,
    Newton's one step from its Jacobian or the whole path) and projection (project_kernel) give the
    states of their readable twins, Constraints.complete(regular=True) sample after sample and
    Constraints.project, to the Newton tolerance; two independent parts, a held hip, spherical
    joints among them."""
    from pga_dyn.loops import constraints
    from pga_dyn.sampling import projected_states, record_states

    robot = load(name)
    con = constraints(robot)
    t = np.linspace(0.0, 1.0, 201)
    w = 2 * np.pi * np.arange(1, con.na + 1)
    q_a = con.z_ref[: con.na] + 0.05 * np.sin(np.outer(t, w))
    qd_a, qdd_a = 0.05 * w * np.cos(np.outer(t, w)), -0.05 * w**2 * np.sin(np.outer(t, w))
    states = record_states(robot, t, q_a, qd_a, qdd_a)
    twin = [
        con.complete(q_a[s], qd_a[s], qdd_a[s], None if s == 0 else states.q[s - 1], regular=True)
        for s in range(len(t))
    ]
    for k, got in enumerate((states.q, states.qd, states.qdd, states.G, states.cond)):
        expected = np.array([state[k] for state in twin])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))
    moved = states.q + 1e-3 * states.G[:, :, 0]  # not assembled: projected where it is
    projected = projected_states(robot, moved, q_a, qd_a, qdd_a)
    for s in range(0, len(t), 20):
        qd, qdd, G, conds = con.project(moved[s], qd_a[s], qdd_a[s])
        for got, expected in ((projected.qd[s], qd), (projected.qdd[s], qdd), (projected.G[s], G)):
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))
        assert projected.cond[s] == pytest.approx(conds.max(), rel=1e-12)
    # k sets of velocities at each configuration (sharing its projection): set after set, each as projected alone
    sets = projected_states(robot, moved, q_a, np.stack([qd_a, -2 * qd_a]), np.stack([qdd_a, qd_a]))
    ns = len(t)
    for k, (qd_k, qdd_k) in enumerate(((qd_a, qdd_a), (-2 * qd_a, qd_a))):
        alone = projected_states(robot, moved, q_a, qd_k, qdd_k)
        for name in ("q", "qd", "qdd", "q_a", "qd_a", "qdd_a", "G", "cond"):
            got, expected = getattr(sets, name)[k * ns : (k + 1) * ns], getattr(alone, name)
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13 * max(1.0, np.abs(expected).max()))


def test_small_svd_equals_numpy():
    """pga_dyn.loops.newton.small_svd (one-sided Jacobi) against its twin numpy.linalg.svd: the
    singular values, and the pseudo-inverse they give, on matrices of the shapes of the parts' J_f
    (also fewer rows than columns) with condition numbers up to 1e6."""
    from pga_dyn.loops.newton import small_svd

    rng = np.random.default_rng(0)
    for shape in [(7, 5), (6, 6), (12, 5), (3, 2), (5, 1), (18, 12), (2, 5), (1, 3)]:
        for _ in range(20):
            A = rng.standard_normal(shape) * np.logspace(0, -rng.uniform(0, 6), shape[1])
            if shape[0] < shape[1]:
                A = rng.standard_normal(shape[::-1]).T * np.logspace(0, -rng.uniform(0, 6), shape[0])[:, None]
            u, s, vt = small_svd(A)
            np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False), rtol=0, atol=1e-13 * s[0])
            np.testing.assert_allclose(u * s @ vt, A, rtol=0, atol=1e-13 * s[0])
            pinv = np.linalg.pinv(A)
            np.testing.assert_allclose((vt.T / s) @ u.T, pinv, rtol=0, atol=1e-9 * np.abs(pinv).max())
