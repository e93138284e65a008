"""The built-in parallel kinematic machines (DRNG paper sections 6.3 and 6.4): 2RRU-1RRS and
2PRS-1PSR, checked independently of pga_dyn.loops.

The test writes its own loop residual (point coincidence, axis alignment), its own constraint
Jacobian (central finite differences over all tree coordinates) and its own assembly (Newton /
least squares over the passive coordinates, from q = 0). It uses only numpy, robots.load,
pga_dyn.kinematics.Kinematics and the model's public description (links, loops, coordinates).
"""

import functools
import itertools

import numpy as np
import pytest

import robots
from pga_dyn.kinematics import Kinematics, initial_poses

MAX_COND = 30.0  # DRNG section 6.3: valid samples have cond(J_p) < 30

MACHINES = {
    "2rru_1rrs": dict(
        bodies=("limb1_link1", "limb1_link2", "platform", "limb2_link1", "limb2_link2", "limb3_link1", "limb3_link2"),
        parent=(-1, 0, 1, 2, 0, 4, 0, 6),
        nq=8,
        actuated=("limb1_R1", "limb2_R1", "limb3_R1"),
        loops=(("limb2_U", "U", "limb2_link2", "platform"), ("limb3_S", "S", "limb3_link2", "platform")),
    ),
    "2prs_1psr": dict(
        bodies=("limb1_slider", "limb1_rod", "platform", "limb2_slider", "limb2_rod", "limb3_slider", "limb3_rod"),
        parent=(-1, 0, 1, 2, 0, 4, 0, 6),
        nq=11,
        actuated=("limb1_P", "limb2_P", "limb3_P"),
        loops=(("limb2_S", "S", "limb2_rod", "platform"), ("limb3_R", "R", "limb3_rod", "platform")),
    ),
}


# -- the test's own loop geometry -------------------------------------------------------------


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def loop_frames(robot, T, loop):
    """World poses of the predecessor and successor frames of a loop joint."""
    a = T[robot.body_index(loop.predecessor)] @ robot.link_pose(loop.predecessor) @ loop.predecessor_origin
    b = T[robot.body_index(loop.successor)] @ robot.link_pose(loop.successor) @ loop.successor_origin
    return a, b


def normal_pair(u):
    """Two unit vectors orthogonal to the unit vector u and to each other."""
    e1 = np.cross(u, np.eye(3)[np.argmin(np.abs(u))])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(u, e1)


def residual(robot, q):
    """Loop residual: S: the origins coincide (3 rows); U: and the first axis (predecessor)
    is perpendicular to the second (successor) (1 row); R: and the successor's axis has no
    component across the predecessor's (2 rows)."""
    T = Kinematics(robot, q).T
    rows = []
    for loop in robot.loop_specs:
        a, b = loop_frames(robot, T, loop)
        rows.append(b[:3, 3] - a[:3, 3])
        if loop.type == "U":
            rows.append([(a[:3, :3] @ unit(loop.axes[0])) @ (b[:3, :3] @ unit(loop.axes[1]))])
        elif loop.type == "R":
            u = unit(loop.axes[0])
            ub = b[:3, :3] @ u
            rows.append([(a[:3, :3] @ e) @ ub for e in normal_pair(u)])
        else:
            assert loop.type == "S"
    return np.concatenate(rows)


def jacobian(robot, q, h=1e-6):
    """Constraint Jacobian dC/dq (all tree coordinates) by central differences."""
    cols = []
    for k in range(robot.nq):
        dq = np.zeros(robot.nq)
        dq[k] = h
        cols.append((residual(robot, q + dq) - residual(robot, q - dq)) / (2 * h))
    return np.array(cols).T


def passive_cond(robot, J):
    s = np.linalg.svd(J[:, robot.passive], compute_uv=False)
    return s[0] / s[-1]


def assemble(robot, q_a, tol=1e-12, max_iter=40):
    """Passive coordinates closing the loops for the actuated q_a, by Newton's method (least
    squares on the finite-difference Jacobian) from q = 0; None when it does not converge."""
    q = np.zeros(robot.nq)
    q[robot.actuated] = q_a
    for _ in range(max_iter):
        r = residual(robot, q)
        if np.linalg.norm(r) < tol:
            return q
        step = np.linalg.lstsq(jacobian(robot, q)[:, robot.passive], -r, rcond=None)[0]
        q[robot.passive] += step * min(1.0, 0.3 / np.abs(step).max())
    return None


def box(robot):
    """The limits of the actuated joints (the default sampling box of q_a), (3, 2)."""
    limits = {j.name: j.limits for j in robot.tree_joints}
    return np.array([limits[name] for name in robot.actuated_names])


def corners_and_centre(robot):
    lo_hi = box(robot)
    return [np.array(c) for c in itertools.product(*lo_hi)] + [lo_hi.mean(axis=1)]


@functools.cache
def load(name):
    return robots.load(name)


@functools.cache
def configurations(name):
    """Assembled configurations: q = 0, and q_a at the corners and centre of the limit box."""
    robot = load(name)
    out = [np.zeros(robot.nq)]
    for q_a in corners_and_centre(robot):
        q = assemble(robot, q_a)
        assert q is not None, f"{name}: q_a = {q_a} does not assemble"
        out.append(q)
    return tuple(out)


each = pytest.mark.parametrize("name", sorted(MACHINES))


# -- the models ------------------------------------------------------------------------------


@each
def test_registered_fixed_base(name):
    robot = load(name)
    assert name in robots.available()
    assert not robot.floating_base
    np.testing.assert_array_equal(robot.gravity, (0, 0, -9.81))


@each
def test_bodies_and_coordinates(name):
    robot, spec = load(name), MACHINES[name]
    assert robot.n == 7 and robot.num_parameters == 70 and robot.nq == spec["nq"]
    assert robot.body_names == spec["bodies"]
    for i, body in enumerate(spec["bodies"], start=1):  # depth-first from the base
        assert robot.body_index(body) == i
    assert tuple(robot.parent) == spec["parent"]
    assert robot.actuated_names == spec["actuated"]
    assert len(robot.passive) == robot.nq - 3
    assert all(c in robot.coordinate_names for c in spec["actuated"])
    got = tuple((lp.name, lp.type, lp.predecessor, lp.successor) for lp in robot.loop_specs)
    assert got == spec["loops"]


@each
def test_actuated_joint_types(name):
    robot = load(name)
    kinds = {j.name: j.type for j in robot.tree_joints}
    expected = "R" if name == "2rru_1rrs" else "P"
    assert [kinds[a] for a in robot.actuated_names] == [expected] * 3


@each
def test_loops_closed_at_q0(name):
    robot = load(name)
    T = initial_poses(robot)
    for loop in robot.loop_specs:
        a, b = loop_frames(robot, T, loop)
        # The two frames coincide (origin and orientation), which closes any loop type.
        np.testing.assert_allclose(b, a, atol=1e-12, err_msg=loop.name)
        if loop.type == "U":
            assert abs((a[:3, :3] @ unit(loop.axes[0])) @ (b[:3, :3] @ unit(loop.axes[1]))) < 1e-12
        if loop.type == "R":
            assert np.linalg.norm(np.cross(a[:3, :3] @ unit(loop.axes[0]), b[:3, :3] @ unit(loop.axes[0]))) < 1e-12
    assert np.abs(residual(robot, np.zeros(robot.nq))).max() < 1e-12


# -- mobility ---------------------------------------------------------------------------------


@each
def test_mobility_at_q0(name):
    robot = load(name)
    J = jacobian(robot, np.zeros(robot.nq))
    s = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(s > 1e-6 * s[0]))
    assert rank == robot.nq - 3, f"{name}: singular values {s}"
    assert np.linalg.matrix_rank(J[:, robot.passive], tol=1e-6) == len(robot.passive)
    cond = passive_cond(robot, J)
    assert cond < MAX_COND, f"{name}: cond(J_p) = {cond:.2f} at q = 0"


@each
def test_mobility_at_assembled_configurations(name):
    robot = load(name)
    for q in configurations(name):
        assert np.abs(residual(robot, q)).max() < 1e-12
        J = jacobian(robot, q)
        s = np.linalg.svd(J, compute_uv=False)
        assert int(np.sum(s > 1e-6 * s[0])) == robot.nq - 3, f"{name} at q = {q}: {s}"
        assert passive_cond(robot, J) < MAX_COND


@each
def test_limit_box_in_workspace(name):
    """Every q_a of a 5 x 5 x 5 grid of the limit box assembles from q = 0, with cond(J_p) < 30,
    on the branch of q = 0 (passive coordinates below 1 rad)."""
    robot = load(name)
    worst = 0.0
    for q_a in itertools.product(*[np.linspace(lo, hi, 5) for lo, hi in box(robot)]):
        q = assemble(robot, np.array(q_a))
        assert q is not None, f"{name}: q_a = {q_a} does not assemble"
        assert np.abs(q[robot.passive]).max() < 1.0
        worst = max(worst, passive_cond(robot, jacobian(robot, q)))
    assert worst < MAX_COND, f"{name}: worst cond(J_p) {worst:.2f}"


# -- the geometric features the paper relies on -----------------------------------------------


def axis_direction(kin, robot, joint):
    """World direction of the axis line of 1-DoF tree joint ``joint`` (its Jacobian line)."""
    return kin.S[robot.coordinate_names.index(joint), :3]


def test_2rru_1rrs_parallel_r_axes_not_along_gravity():
    robot = load("2rru_1rrs")
    g = unit(robot.gravity)
    for q in configurations("2rru_1rrs"):
        kin = Kinematics(robot, q)
        for limb in (1, 2, 3):
            a1 = axis_direction(kin, robot, f"limb{limb}_R1")
            a2 = axis_direction(kin, robot, f"limb{limb}_R2")
            assert np.linalg.norm(np.cross(a1, a2)) < 1e-12
            assert np.linalg.norm(np.cross(a1, g)) > 0.9  # far from parallel (here perpendicular)


def test_2rru_1rrs_u_constraints_redundant():
    """The second U axes lie along the line joining the two U centres, so the rotational row
    of the U loop vanishes identically: it adds nothing to the constraints (paper: "the
    rotational constraints in the U joints have no effect")."""
    robot = load("2rru_1rrs")
    loop = robot.loop_specs[0]
    for q in configurations("2rru_1rrs"):
        T = Kinematics(robot, q).T
        a, b = loop_frames(robot, T, loop)
        u1 = T[robot.body_index("platform")][:3, 3]
        w = b[:3, :3] @ unit(loop.axes[1])
        assert np.linalg.norm(np.cross(w, unit(b[:3, 3] - u1))) < 1e-9
        assert np.abs(jacobian(robot, q)[3]).max() < 1e-9  # the U row of the residual


def test_2prs_1psr_pr_couples():
    """In limbs 1 and 2 the R axis keeps its direction while the slide moves (the paper's "PR"
    couple): the rod turns in a fixed vertical plane. All slides are vertical."""
    robot = load("2prs_1psr")
    kin0 = Kinematics(robot, np.zeros(robot.nq))
    for q in configurations("2prs_1psr"):
        kin = Kinematics(robot, q)
        for limb in (1, 2, 3):
            slide = kin.S[robot.coordinate_names.index(f"limb{limb}_P")]
            np.testing.assert_allclose(slide, [0, 0, 0, 0, 0, 1], atol=1e-12)
        for limb in (1, 2):
            r = axis_direction(kin, robot, f"limb{limb}_R")
            np.testing.assert_allclose(r, axis_direction(kin0, robot, f"limb{limb}_R"), atol=1e-12)
            assert abs(r[2]) < 1e-12  # horizontal: perpendicular to its slide
