"""Every numba kernel of kinematics.py, tp_regressor.py and the loops package (loops/closure.py,
loops/newton.py) equals the PGA expression, or the numpy function, it implements.

The building blocks are compared with expressions written here with pga_dyn.pga only (kingdon
multivectors in the paper's bases): points and directions (eqs. 13, 15), join (eqs. 17, 18),
commutator (eq. 28), sandwich (eq. 27), power (eq. 31), motor_exp (eq. 102). The three kernels
that implement the paper's algorithms are compared with their readable twins in the package, on
random robots: forward / kinematics.forward_pga, _tp_batch / tp_regressor.tp_tensor_pga and bar,
loop_kernel / loops.closure.loop_pga. forward() is also checked against the definitions of velocity and
acceleration by central finite differences (V = 2 reverse(M) dM/dt, eq. 29; A - G = dV/dt).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pga_dyn import kinematics as kin
from pga_dyn import loops, pga
from pga_dyn import tp_regressor as tp
from pga_dyn.loops import closure, newton
from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot

SETTINGS = settings(max_examples=40, deadline=None)
ATOL = 1e-9

coord = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
vec3 = hnp.arrays(np.float64, 3, elements=coord)
vec6 = hnp.arrays(np.float64, 6, elements=coord)
unit3 = (
    hnp.arrays(np.float64, 3, elements=st.floats(-1.0, 1.0))
    .filter(lambda a: np.linalg.norm(a) > 0.1)
    .map(lambda a: a / np.linalg.norm(a))
)
seeds = st.integers(0, 2**32 - 1)
# Angles of any size; tiny ones reach the small-angle branches of so3_exp (< 1e-14) and se3_exp.
angles = st.one_of(
    st.floats(-3 * np.pi, 3 * np.pi),
    st.floats(-1e-5, 1e-5),
    st.sampled_from([0.0, 1e-16, 1e-14, 1e-9, 1e-6, 1.0000001e-6, np.pi, -np.pi]),
)

#: The world frame points e032, e013, e021 (ideal: x, y, z) and e123 (the origin O); at q0 they are the
#: tetrahedral points of every body (spatial assignment, eqs. 41-43 and 93). Building them here also
#: builds the kingdon algebra outside of the hypothesis tests.
FRAME = (pga.direction(1, 0, 0), pga.direction(0, 1, 0), pga.direction(0, 0, 1), pga.point(0, 0, 0))


# ---------------------------------------------------------------------------
# kingdon references
# ---------------------------------------------------------------------------


def exp_matrix(omega, v=(0.0, 0.0, 0.0)):
    """The rigid motion of the twist (omega; v) run for unit time: the matrix of motor_exp (eq. 102)."""
    return pga.matrix_from_motor(pga.motor_exp(pga.twist(omega, v)))


def line(x):
    """The bivector with coordinates x = (d; m)."""
    return pga.line(x[:3], x[3:])


def ideal_line(d):
    """The ideal line (0; d) as the join of two ideal points u, d x u with u a unit vector normal to d (eq. 18)."""
    u = np.cross(d, np.eye(3)[int(np.argmin(np.abs(d)))])
    u /= np.linalg.norm(u)
    return pga.join(pga.direction(*u), pga.direction(*np.cross(d, u)))


def axis_line(pos, d, prismatic=False):
    """The world line of a joint axis: the join of its origin and its direction (R), or the ideal line (P)."""
    return ideal_line(d) if prismatic else pga.join(pga.point(*pos), pga.direction(*d))


def random_rigid(rng, scale=1.5):
    Q, U = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(U)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] *= -1
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = Q, scale * rng.normal(size=3)
    return T


def unit(x):
    return x / np.linalg.norm(x)


# ---------------------------------------------------------------------------
# Rotations and exponentials
# ---------------------------------------------------------------------------


@SETTINGS
@given(unit3, angles)
def test_rotation_is_the_motor_exponential(axis, angle):
    expected = exp_matrix(angle * axis)[:3, :3]
    r = np.full((4, 4), 7.0)
    kin.rotation_into(axis, angle, r)
    np.testing.assert_allclose(r[:3, :3], expected, atol=ATOL)
    assert np.all(r[3] == 7.0) and np.all(r[:3, 3] == 7.0)  # only the 3x3 block is written


@SETTINGS
@given(unit3, angles)
def test_so3_exp_is_the_motor_exponential(axis, angle):
    r = angle * axis
    np.testing.assert_allclose(kin.so3_exp(r), exp_matrix(r)[:3, :3], atol=ATOL)


@SETTINGS
@given(unit3, st.sampled_from([0.0, 1e-300, 1e-20, 1e-16, 9.9e-15]))
def test_so3_exp_first_order_branch_is_the_commutator(axis, angle):
    """Below |r| = 1e-14 so3_exp is I + r^: each world axis e_k moves by the commutator
    e_k x (r; 0) = r x e_k (eq. 34). Compared relative to |r|, which the matrix of the motor cannot
    resolve (its sandwich has round-off ~1e-17 whatever the angle)."""
    r = angle * axis
    step = np.column_stack([pga.point_coords(pga.commutator(E, pga.twist(r, [0, 0, 0])))[:3] for E in FRAME[:3]])
    np.testing.assert_allclose(kin.so3_exp(r) - np.eye(3), step, rtol=1e-12, atol=0)


@SETTINGS
@given(unit3, angles, vec3)
def test_se3_exp_is_the_motor_exponential(axis, angle, v):
    xi = np.concatenate([angle * axis, v])
    np.testing.assert_allclose(kin.se3_exp(xi), exp_matrix(xi[:3], xi[3:]), atol=ATOL)


@pytest.mark.parametrize("angle", [1e-9, 1.01e-6, 2e-6, 5e-6, 1e-3, 0.99e-2, 1.01e-2])
def test_se3_exp_is_accurate_at_small_angles(angle):
    """No cancellation in (1 - cos th)/th^2 and (th - sin th)/th^3 at small angles."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        xi = np.concatenate([angle * unit(rng.normal(size=3)), 5.0 * rng.normal(size=3)])
        np.testing.assert_allclose(
            kin.se3_exp(xi), exp_matrix(xi[:3], xi[3:]), rtol=0, atol=1e-13 * np.linalg.norm(xi[3:])
        )


@SETTINGS
@given(seeds)
def test_mul_rigid_is_the_matrix_product(seed):
    rng = np.random.default_rng(seed)
    a, b = random_rigid(rng), random_rigid(rng)
    out = np.full((4, 4), np.nan)
    kin.mul_rigid(a, b, out)
    np.testing.assert_allclose(out, a @ b, atol=ATOL)
    # and it composes rigid motions as motors do: T(M_b M_a) = T_a T_b (pga: left factor acts first)
    M = pga.motor_from_matrix(b) * pga.motor_from_matrix(a)
    np.testing.assert_allclose(out, pga.matrix_from_motor(M), atol=1e-8)


# ---------------------------------------------------------------------------
# Lines: the axis line and its rate (eqs. 18, 28)
# ---------------------------------------------------------------------------


@SETTINGS
@given(seeds, unit3)
def test_axis_line_of_a_rotation_is_the_join_of_origin_and_direction(seed, axis):
    T = random_rigid(np.random.default_rng(seed))
    out = np.full(6, np.nan)
    kin._axis_line(T, T[:3, 3], axis, False, out)
    expected = pga.join(pga.point(*T[:3, 3]), pga.direction(*(T[:3, :3] @ axis)))
    np.testing.assert_allclose(out, pga.line_coords(expected), atol=ATOL)


@SETTINGS
@given(seeds, unit3)
def test_axis_line_of_a_translation_is_the_ideal_line(seed, axis):
    T = random_rigid(np.random.default_rng(seed))
    out = np.full(6, np.nan)
    kin._axis_line(T, T[:3, 3], axis, True, out)
    d = T[:3, :3] @ axis
    np.testing.assert_allclose(out, pga.line_coords(ideal_line(d)), atol=ATOL)
    # the same ideal line as the meet of the ideal plane e0 with a plane normal to d (eq. 12)
    np.testing.assert_allclose(out, pga.line_coords(pga.meet(pga.plane(0, 0, 0, 1), pga.plane(*d, 0))), atol=ATOL)


@SETTINGS
@given(vec6, vec6, coord, vec6)
def test_line_rate_is_the_commutator_of_the_line_with_the_twist(W, L, qd, out0):
    """_line_rate adds qd [W, L] with [W, L] = (w x d; w x m + v x d) = +commutator(L, W) = L x W.

    This is eq. (28), Ldot = L x V, for the line L carried by a body of twist V = W: the
    kernel's bracket is the commutator with the line on the LEFT, i.e. -commutator(W, L).
    """
    out = out0.copy()
    kin._line_rate(W, L, qd, out)
    expected = out0 + qd * pga.line_coords(pga.commutator(line(L), line(W)))
    np.testing.assert_allclose(out, expected, atol=1e-8)


@SETTINGS
@given(seeds, vec3, vec3, vec3, vec3)
def test_line_rate_is_the_derivative_of_a_carried_line(seed, omega, v, p, d):
    """Finite differences: the line reverse(M(t)) L0 M(t) with M(t) = M0 motor_exp(t W) changes at [W, L]."""
    M0 = pga.motor_from_matrix(random_rigid(np.random.default_rng(seed)))
    L0 = pga.line_through(p, p + d)
    h = 1e-6

    def at(t):
        return pga.line_coords(pga.sandwich(M0 * pga.motor_exp(pga.twist(t * omega, t * v)), L0))

    out = np.zeros(6)
    kin._line_rate(np.concatenate([omega, v]), at(0.0), 1.0, out)
    np.testing.assert_allclose(out, (at(h) - at(-h)) / (2 * h), atol=1e-5 * (1 + np.abs(out).max()))


# ---------------------------------------------------------------------------
# Tetrahedral points and the regressor block (eqs. 27, 35, 41-43, 49)
# ---------------------------------------------------------------------------


@SETTINGS
@given(seeds, vec6, vec6)
def test_point_accelerations_are_eq35_on_the_moved_world_frame(seed, V, A):
    D = random_rigid(np.random.default_rng(seed))
    E, acc = np.full((3, 4), np.nan), np.full((3, 4), np.nan)
    tp._point_accelerations(D, np.stack([np.zeros(6), V]), np.stack([np.zeros(6), A]), 1, E, acc)
    M = pga.motor_from_matrix(D)
    for m, E0 in enumerate(FRAME):
        Em = pga.sandwich(M, E0)  # x, y, z ideal, O Euclidean (eqs. 41-43, spatial assignment)
        Edd = pga.acceleration(Em, line(V), line(A))
        np.testing.assert_allclose(pga.point_coords(Em), [*E[:, m], 1.0 if m == 3 else 0.0], atol=ATOL)
        np.testing.assert_allclose(pga.point_coords(Edd), [*acc[:, m], 0.0], atol=1e-8)


@SETTINGS
@given(seeds, vec6, hnp.arrays(np.float64, (3, 4), elements=coord))
def test_block_is_the_power_of_the_joined_lines(seed, L, acc):
    """R[m, n] = L ^ (E_m v Edd_n) (eq. 49): E_3 = O is Euclidean, E_0..2 and every Edd_n are ideal."""
    D = random_rigid(np.random.default_rng(seed))
    E = np.ascontiguousarray(D[:3])
    R = np.full((4, 4), np.nan)
    tp._block(L, E, acc, R)
    for m in range(4):
        Em = pga.point(*E[:, m], 1.0 if m == 3 else 0.0)
        for n in range(4):
            expected = pga.power(pga.join(Em, pga.direction(*acc[:, n])), line(L))
            assert R[m, n] == pytest.approx(expected, abs=1e-8), (m, n)


@SETTINGS
@given(seeds, vec6, hnp.arrays(np.float64, (3, 4), elements=coord))
def test_joined_lines_are_the_bar_operator_of_the_joins(seed, L, acc):
    """J[p] = E_r v Edd_c + E_c v Edd_r (r != c), E_r v Edd_r (eq. 18 per join; (r, c) = PARAM_INDEX[p]),
    and L ^ J[p] is the bar operator of eq. (100) applied to the block R[m, n] = L ^ (E_m v Edd_n)."""
    from pga_dyn.conventions import PARAM_INDEX

    D = random_rigid(np.random.default_rng(seed))
    E = np.ascontiguousarray(D[:3])
    J = np.full((10, 6), np.nan)
    tp._joined_lines(E, acc, J)
    points = [pga.point(*E[:, m], 1.0 if m == 3 else 0.0) for m in range(4)]
    rates = [pga.direction(*acc[:, n]) for n in range(4)]
    for p, (r, c) in enumerate(PARAM_INDEX):
        joined = pga.join(points[r], rates[c]) + (pga.join(points[c], rates[r]) if r != c else 0)
        np.testing.assert_allclose(J[p], pga.line_coords(joined), atol=1e-8)
        block = [pga.power(pga.join(points[m], rates[n]), line(L)) for m, n in ((r, c), (c, r))]
        expected = block[0] + block[1] if r != c else block[0]
        assert L[:3] @ J[p, 3:] + L[3:] @ J[p, :3] == pytest.approx(expected, abs=1e-8), p


# ---------------------------------------------------------------------------
# forward(): poses, Jacobian lines, twists and accelerations of a random tree
# ---------------------------------------------------------------------------

AXES = {"R": 1, "P": 1, "U": 2, "S": 0}


def random_inertial(rng):
    J = rng.normal(size=(3, 3))
    return Inertial(float(rng.uniform(0.5, 3.0)), rng.normal(size=3), J @ J.T + 0.1 * np.eye(3))


def random_robot(seed, types, floating=False, loops=()):
    """A random tree (each link hangs from a random earlier link) with random origins, axes and
    inertias, and loop joints of the given types between random links (not closed: the kernels and
    their twins evaluate any state)."""
    rng = np.random.default_rng(seed)
    links = [LinkSpec("l0", random_inertial(rng))]
    joints = []
    for k, t in enumerate(types, 1):
        parent = f"l{rng.integers(0, k)}"
        links.append(LinkSpec(f"l{k}", random_inertial(rng)))
        axes = np.array([unit(rng.normal(size=3)) for _ in range(AXES[t])]).reshape(-1, 3)
        joints.append(JointSpec(f"j{k}", t, parent, f"l{k}", origin=random_rigid(rng, 0.8), axes=axes))
    closures = []
    for k, t in enumerate(loops):
        a, b = rng.choice(len(links), 2, replace=False)
        axes = np.array([unit(rng.normal(size=3)) for _ in range(AXES[t])]).reshape(-1, 3)
        closures.append(LoopSpec(f"loop{k}", t, f"l{a}", f"l{b}", random_rigid(rng, 0.5), random_rigid(rng, 0.5), axes))
    return Robot(f"random{seed}", links, joints, closures, gravity=rng.normal(size=3) * 5, floating_base=bool(floating))


def kernel_arrays(robot, floating):
    """The kernels' arrays of ``robot``; floating="offset" also gives the floating joint an initial
    pose T0 != I (a Robot always has T0 = I; the kernel takes any, T = exp(xi^) T0), so that
    exp(xi^) T0 and T0 exp(xi^) differ."""
    arrays = kin.robot_arrays(robot)
    if floating != "offset":
        return arrays
    origin = arrays.origin.copy()
    origin[1] = random_rigid(np.random.default_rng(robot.n))
    return arrays._replace(origin=origin)


def random_state(robot, rng):
    """q with rotation vectors (S, F) below 2 rad, so that the logarithm stays on its principal branch."""
    q, qd, qdd = rng.normal(size=robot.nq), rng.normal(size=robot.nq), rng.normal(size=robot.nq)
    for i in range(1, robot.n + 1):
        if robot.joint_type[i] in ("S", "F"):
            k = robot.q_index[i]
            q[k : k + 3] = unit(rng.normal(size=3)) * rng.uniform(0.0, 2.0)
    return q, qd, qdd


def run_forward(arrays, q, qd, qdd):
    n, nq = arrays.parent.shape[0] - 1, q.shape[0]
    T, S, V, A = np.empty((n + 1, 4, 4)), np.zeros((nq, 6)), np.empty((n + 1, 6)), np.empty((n + 1, 6))
    kin.forward(*arrays, q, qd, qdd, T, S, V, A)
    return T, S, V, A


def path(robot, q, qd, qdd):
    """A motion through the state (q, qd, qdd) at t = 0, as the function t -> (q(t), qd(t)).

    R, P, U: q(t) = q + t qd + t^2/2 qdd. S: R(t) = R(q) exp(t a) exp(t^2/2 b) with (a, b) = (qd, qdd);
    its child-frame angular velocity is exp(-t^2/2 b) a + t b. F: T(t) = exp(t X) exp(t^2/2 Y) exp(q^),
    whose spatial twist is X + t Ad_exp(tX) Y (the line Y moved by motor_exp(tX)).
    """

    def at(t):
        qt, qdt = q + t * qd + 0.5 * t * t * qdd, qd + t * qdd
        for i in range(1, robot.n + 1):
            k, kind = robot.q_index[i], robot.joint_type[i]
            if kind == "S":
                a, b, s = qd[k : k + 3], qdd[k : k + 3], 0.5 * t * t
                rot = exp_matrix(q[k : k + 3]) @ exp_matrix(t * a) @ exp_matrix(s * b)
                qt[k : k + 3] = pga.se3_log(rot)[:3]
                qdt[k : k + 3] = exp_matrix(-s * b)[:3, :3] @ a + t * b
            elif kind == "F":
                X, Y, s = qd[k : k + 6], qdd[k : k + 6], 0.5 * t * t
                pose = exp_matrix(t * X[:3], t * X[3:]) @ exp_matrix(s * Y[:3], s * Y[3:])
                qt[k : k + 6] = pga.se3_log(pose @ exp_matrix(q[k : k + 3], q[k + 3 : k + 6]))
                Mx = pga.motor_exp(pga.twist(t * X[:3], t * X[3:]))
                qdt[k : k + 6] = X + t * pga.line_coords(pga.sandwich(Mx, line(Y)))
        return qt, qdt

    return at


TREES = [
    ("R", "P", "U", "R", "S", "P"),
    ("U", "U", "R", "P", "R", "S"),
    ("S", "R", "P", "U", "S", "R"),
    ("P", "S", "U", "R", "P", "U"),
]
CASES = [(seed, types, floating) for seed, types in enumerate(TREES) for floating in (False, True, "offset")]


@pytest.mark.parametrize("seed,types,floating", CASES)
def test_forward_is_its_pga_twin(seed, types, floating):
    """forward() and kinematics.forward_pga: poses, Jacobian lines, twists, accelerations."""
    robot = random_robot(seed, types, floating)
    arrays = kernel_arrays(robot, floating)
    rng = np.random.default_rng(100 + seed)
    for _ in range(3):
        q, qd, qdd = random_state(robot, rng)
        for got, twin in zip(run_forward(arrays, q, qd, qdd), kin.forward_pga(*arrays, q, qd, qdd)):
            np.testing.assert_allclose(got, twin, atol=1e-9)


@pytest.mark.parametrize("seed,types,floating", CASES)
def test_twists_are_those_of_forward_to_the_bit(seed, types, floating):
    """kinematics.twists (the twists and accelerations of new velocities at a configuration whose
    Jacobian lines forward computed) equals forward's V and A at that configuration exactly, and
    is forward_pga's twin."""
    robot = random_robot(seed, types, floating)
    arrays = kernel_arrays(robot, floating)
    rng = np.random.default_rng(300 + seed)
    q, qd0, qdd0 = random_state(robot, rng)
    T, S, _, _ = run_forward(arrays, q, qd0, qdd0)
    for _ in range(3):
        _, qd, qdd = random_state(robot, rng)
        V, A = np.empty((robot.n + 1, 6)), np.empty((robot.n + 1, 6))
        kin.twists(arrays.parent, arrays.code, arrays.q_index, arrays.seed, qd, qdd, S, V, A)
        _, _, V_forward, A_forward = run_forward(arrays, q, qd, qdd)
        assert np.array_equal(V, V_forward) and np.array_equal(A, A_forward)
        _, _, V_pga, A_pga = kin.forward_pga(*arrays, q, qd, qdd)
        np.testing.assert_allclose(V, V_pga, atol=1e-9)
        np.testing.assert_allclose(A, A_pga, atol=1e-9)


@pytest.mark.parametrize("seed,types,floating", CASES)
def test_tree_poses_are_those_of_forward_to_the_bit(seed, types, floating):
    """kinematics.tree_poses (numpy, for the poses at q0 without compiling) equals forward's T
    exactly, at q0, at random states, and at rotations so small that so3_exp takes its first-order
    branch and se3_exp its series."""
    robot = random_robot(seed, types, floating)
    rng = np.random.default_rng(200 + seed)
    states = [np.ascontiguousarray(robot.q0, dtype=float)]
    states += [random_state(robot, rng)[0] for _ in range(3)]
    states += [np.ascontiguousarray(scale * rng.normal(size=robot.nq)) for scale in (1e-3, 1e-9, 1e-15)]
    for q in states:
        assert np.array_equal(kin.tree_poses(robot, q), kin.tree_state(robot, q)[0])
    assert np.array_equal(kin.initial_poses(robot), kin.tree_state(robot, robot.q0)[0])


@pytest.mark.parametrize("seed,types", [(seed, types) for seed, types in enumerate(TREES)])
def test_jacobian_lines_give_the_twists(seed, types):
    """V_i is the sum of the Jacobian lines on the path to the base times the velocities (eq. 98)."""
    robot = random_robot(seed, types, True)
    q, qd, qdd = random_state(robot, np.random.default_rng(150 + seed))
    kinematics = kin.Kinematics(robot, q, qd, qdd)
    for i in range(1, robot.n + 1):
        np.testing.assert_allclose(kinematics.jacobian(i) @ qd, kinematics.V[i], atol=1e-9)


@pytest.mark.parametrize("seed,types,floating", CASES)
def test_forward_twists_and_accelerations_by_finite_differences(seed, types, floating):
    """V_i = 2 reverse(M_i) dM_i/dt (eq. 29, M_i = motor_from_matrix(T_i)) and A_i - G = dV_i/dt,
    G = (0; -g); the point at p of body i then accelerates as Edd = pdd - g (eq. 35 with gravity)."""
    robot = random_robot(seed, types, floating)
    arrays = kernel_arrays(robot, floating)
    rng = np.random.default_rng(200 + seed)
    G = np.concatenate([np.zeros(3), -robot.gravity])
    h = 1e-5
    for _ in range(2):
        q, qd, qdd = random_state(robot, rng)
        at = path(robot, q, qd, qdd)
        T, S, V, A = run_forward(arrays, *at(0.0), qdd)
        np.testing.assert_allclose(at(0.0)[0], q, atol=1e-12)
        plus, minus = run_forward(arrays, *at(h), qdd), run_forward(arrays, *at(-h), qdd)
        p_body = rng.normal(size=3)
        for i in range(1, robot.n + 1):
            M = pga.motor_coords(pga.motor_from_matrix(T[i]))
            Mp = pga.motor_coords(pga.motor_from_matrix(plus[0][i]))
            Mm = pga.motor_coords(pga.motor_from_matrix(minus[0][i]))
            Mp, Mm = np.sign(Mp @ M) * Mp, np.sign(Mm @ M) * Mm  # M and -M are the same motion
            dM = pga.motor((Mp - Mm) / (2 * h))
            velocity = pga.motor_coords(pga.reverse(pga.motor(M)) * dM * 2)
            np.testing.assert_allclose(velocity, [0.0, *V[i], 0.0], atol=1e-7 * (1 + np.abs(V[i]).max()))
            dV = (plus[2][i] - minus[2][i]) / (2 * h)
            np.testing.assert_allclose(A[i] - G, dV, atol=1e-7 * (1 + np.abs(dV).max()))
            # a point of the body: its acceleration with gravity (eq. 35) is pdd - g
            x_minus, x, x_plus = ((pose[i] @ [*p_body, 1.0])[:3] for pose in (minus[0], T, plus[0]))
            pdd = (x_plus - 2 * x + x_minus) / h**2
            P = pga.point(*(T[i] @ [*p_body, 1.0])[:3])
            Pdd = pga.point_coords(pga.acceleration(P, line(V[i]), line(A[i])))
            np.testing.assert_allclose(Pdd, [*(pdd - robot.gravity), 0.0], atol=1e-4 * (1 + np.abs(pdd).max()))


def test_spherical_velocity_is_the_child_frame_relative_angular_velocity():
    """One S joint on a moving R joint: the relative rotation R_rel = so3_exp(q) changes as
    dR_rel/dt = R_rel [qd] (child frame), and V_child - V_parent = (w; pos x w), w = R_child qd."""
    robot = random_robot(7, ("R", "S"))
    (i_s,) = [i for i in range(1, robot.n + 1) if robot.joint_type[i] == "S"]
    k = robot.q_index[i_s]
    rng = np.random.default_rng(7)
    q, qd, qdd = random_state(robot, rng)
    at = path(robot, q, qd, qdd)
    h = 1e-6
    rel = [kin.so3_exp(at(t)[0][k : k + 3]) for t in (-h, 0.0, h)]
    body_rate = rel[1].T @ (rel[2] - rel[0]) / (2 * h)
    np.testing.assert_allclose(body_rate, pga.skew(qd[k : k + 3]), atol=1e-6)
    T, S, V, A = run_forward(kin.robot_arrays(robot), q, qd, qdd)
    w = T[i_s][:3, :3] @ qd[k : k + 3]
    relative = V[i_s] - V[robot.parent[i_s]]
    np.testing.assert_allclose(relative, [*w, *np.cross(T[i_s][:3, 3], w)], atol=1e-9)


# ---------------------------------------------------------------------------
# The regressor tensor, entry by entry (eq. 49)
# ---------------------------------------------------------------------------


def twin_tensor(robot, q, qd, qdd):
    return tp.tp_tensor_pga(kin.robot_arrays(robot), kin.inverse_initial_poses(robot), q, qd, qdd)


@pytest.mark.parametrize(
    "types,floating", [(("R",), False), (("P",), False), (("U",), False), (("S",), False), ((), True)]
)
def test_regressor_tensor_of_one_body(types, floating):
    """One body on each joint type; ((), True) is a single floating body."""
    robot = random_robot(11, types, floating)
    assert robot.n == 1
    rng = np.random.default_rng(12)
    for _ in range(3):
        q, qd, qdd = random_state(robot, rng)
        np.testing.assert_allclose(tp.regressor_tensor(robot, q, qd, qdd), twin_tensor(robot, q, qd, qdd), atol=1e-8)


@pytest.mark.parametrize("seed,types,floating", [case for case in CASES if case[2] != "offset"])
def test_regressor_is_its_pga_twin(seed, types, floating):
    """The tensor of eq. (49) and the matrix regressor (the bar operator of eq. 100) of the kernel
    against tp_tensor_pga and bar."""
    robot = random_robot(seed, types, floating)
    rng = np.random.default_rng(300 + seed)
    q, qd, qdd = random_state(robot, rng)
    twin = twin_tensor(robot, q, qd, qdd)
    np.testing.assert_allclose(tp.regressor_tensor(robot, q, qd, qdd), twin, atol=1e-7)
    np.testing.assert_allclose(tp.regressor(robot, q, qd, qdd), tp.bar(twin).reshape(robot.nq, -1), atol=1e-7)


@pytest.mark.parametrize("seed,types,floating", [case for case in CASES if case[2] != "offset"])
def test_projected_regressor_is_g_transpose_times_the_tree_regressor(seed, types, floating):
    """projected_batch (Y_a = G^T Y_tree without Y_tree, eq. 52) against G^T times the tree
    regressor of _tp_batch, for any G (samples, nq, n_a), to round-off (1e-12 of the largest
    entry), and against its readable twin G^T bar(tp_tensor_pga); a non-finite state is refused
    with the argument named, as the tree regressor does."""
    robot = random_robot(seed, types, floating)
    rng = np.random.default_rng(400 + seed)
    ns, nq, n = 5, robot.nq, robot.n
    states = [random_state(robot, rng) for _ in range(ns)]
    Q, QD, QDD = (np.array([state[k] for state in states]) for k in range(3))
    for na in (1, 3):
        G = rng.normal(size=(ns, nq, na))
        out = np.full((ns * na, 10 * n), np.nan)
        assert tp.projected_batch(*tp._kernel_arrays(robot), Q, QD, QDD, G, out) == -1
        expected = np.matmul(G.transpose(0, 2, 1), tp.tree_regressor(robot, Q, QD, QDD))
        scale = np.abs(expected).max()
        np.testing.assert_allclose(out.reshape(ns, na, -1), expected, rtol=0, atol=1e-12 * scale)
        for s in range(ns):
            twin = G[s].T @ tp.bar(twin_tensor(robot, Q[s], QD[s], QDD[s])).reshape(nq, -1)
            np.testing.assert_allclose(out.reshape(ns, na, -1)[s], twin, rtol=0, atol=1e-9 * scale)
    for k in range(3):
        bad = [Q.copy(), QD.copy(), QDD.copy()]
        bad[k][2, 0] = np.inf
        assert tp.projected_batch(*tp._kernel_arrays(robot), *bad, G, out) == k


def test_actuated_regressor_refuses_states_of_other_shapes():
    """actuated_regressor of a machine with loops checks Q, QD, QDD (samples, nq) and G (samples,
    nq, n_a) before its compiled kernel reads them (which checks no bound), naming the argument."""
    import robots
    from pga_dyn import sample_states
    from pga_dyn.errors import PgaDynError

    robot = robots.load("five_bar")
    states = sample_states(robot, 4, seed=0)
    good = (states.q, states.qd, states.qdd, states.G)
    np.testing.assert_array_equal(tp.actuated_regressor(robot, *good), states.regressor())
    for k, name in enumerate(("Q", "QD", "QDD", "G")):
        wrong = (good[k][..., :-1], np.concatenate([good[k], good[k]], axis=-1), good[k][:-1])
        for w, match in zip(wrong, (name, name, "(Q|QD|QDD|G)")):  # fewer samples in Q: the others differ
            bad = list(good)
            bad[k] = np.ascontiguousarray(w)
            with pytest.raises(PgaDynError, match=f"^{match} must have shape"):
                tp.actuated_regressor(robot, *bad)


# ---------------------------------------------------------------------------
# The loop constraints (pga_dyn.loops)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed,types", [(seed, types) for seed, types in enumerate(TREES)])
def test_loop_kernel_is_its_pga_twin(seed, types):
    """Residual, Jacobian and bias of loop joints of every type (R, P, U, S; open, at random
    states) from loop_kernel and from closure.loop_pga."""
    robot = random_robot(seed, types, seed % 2 == 1, loops=("R", "P", "U", "S"))
    con = loops.Constraints(robot)
    rng = np.random.default_rng(400 + seed)
    for _ in range(2):
        q, qd, _ = random_state(robot, rng)
        T, S, V, A = run_forward(kin.robot_arrays(robot)._replace(seed=np.zeros(6)), q, qd, np.zeros(robot.nq))
        twin = closure.loop_pga(T, S, V, A, *con.args[5:])
        for got, expected in zip(closure.motion_kernel(*con.args, q, qd), twin):
            np.testing.assert_allclose(got, expected, atol=1e-9)


def _smallest_rotation(a, b):
    """The rotation matrix of the smallest rotation taking the unit vector a to the unit vector b
    (scipy's align_vectors, written independently of pga-dyn's closed form)."""
    from scipy.spatial.transform import Rotation

    return Rotation.align_vectors([b], [a])[0].as_matrix()


@pytest.mark.parametrize("seed,types", [(seed, types) for seed, types in enumerate(TREES)])
def test_spin_lock_rows_are_their_pga_twin_and_the_spin_rate(seed, types):
    """Spin locks (loops.closure, code CODE_SPIN) on random bodies and directions: residual,
    Jacobian row and bias from loop_kernel equal closure.loop_pga's; the residual is the sine of
    the spin angle phi when the reference orientation is the body's turned about u by -phi, and
    zero when it is the body's turned by the smallest rotation taking u to another direction;
    the row times qd is the body's angular velocity along the direction (from forward's twists),
    and on trees of 1-DoF and universal joints its time derivative (central differences along q
    + t qd + t^2/2 qdd) is J qdd + bias."""
    from scipy.spatial.transform import Rotation

    robot = random_robot(seed, types, seed % 2 == 1)
    rng = np.random.default_rng(500 + seed)
    q, qd, qdd = random_state(robot, rng)
    T, S, V, A = run_forward(kin.robot_arrays(robot)._replace(seed=np.zeros(6)), q, qd, np.zeros(robot.nq))
    bodies = [int(b) for b in rng.choice(np.arange(1, robot.n + 1), 2)]
    axes = [unit(rng.normal(size=3)) for _ in bodies]
    phi, elsewhere = rng.uniform(-1.0, 1.0), unit(rng.normal(size=3))
    turned = T[bodies[0], :3, :3] @ Rotation.from_rotvec(-phi * axes[0]).as_matrix()
    Rb = T[bodies[1], :3, :3]
    moved = _smallest_rotation(Rb @ axes[1], elsewhere) @ Rb
    locks = [(bodies[0], axes[0], turned), (bodies[1], axes[1], moved)]
    args = closure.kernel_arrays(robot, locks)
    r, J, bias = closure.motion_kernel(*args, q, qd)
    for got, expected in zip((r, J, bias), closure.loop_pga(T, S, V, A, *args[5:])):
        np.testing.assert_allclose(got, expected, atol=1e-9)
    np.testing.assert_allclose(r, [np.sin(phi), 0.0], atol=1e-9)
    for row, (b, u, _) in enumerate(locks):
        np.testing.assert_allclose(J[row] @ qd, V[b, :3] @ (T[b, :3, :3] @ u), atol=1e-9)

    if set(robot.joint_type[1:]) & {"S", "F"}:
        return  # their qd is an angular velocity, not the rate of q (tests/test_spins.py checks the bias with Pinocchio)

    def rate(t):
        qt, qdt = q + t * qd + 0.5 * t * t * qdd, qd + t * qdd
        return closure.motion_kernel(*args, qt, qdt)[1] @ qdt

    h = 1e-5
    np.testing.assert_allclose((rate(h) - rate(-h)) / (2 * h), J @ qdd + bias, atol=1e-5)


@SETTINGS
@given(seeds, st.integers(1, 6), st.integers(0, 4), st.integers(1, 3))
def test_qr_solve_is_least_squares(seed, k, extra, columns):
    """newton.qr_solve against numpy's least squares, and its reciprocal condition estimate."""
    rng = np.random.default_rng(seed)
    M, B = rng.normal(size=(k + extra, k)), rng.normal(size=(k + extra, columns))
    X = np.full((k, columns), np.nan)
    rcond = newton.qr_solve(M.copy(), B.copy(), X)
    np.testing.assert_allclose(X, np.linalg.lstsq(M, B, rcond=None)[0], atol=1e-8 * (1 + np.abs(X).max()))
    s = np.linalg.svd(M, compute_uv=False)
    # sigma_min <= min |R_ii| and max |R_ii| <= sigma_max: the estimate is at least 1 / cond(M)
    assert s[-1] / s[0] * (1 - 1e-9) <= rcond <= 1.0
    singular = M.copy()
    singular[:, 0] = 0.0
    assert newton.qr_solve(singular, B.copy(), X) == 0.0


@SETTINGS
@given(unit3, st.one_of(st.floats(0.0, np.pi), st.sampled_from([0.0, 1e-13, np.pi - 1e-9, np.pi])))
def test_so3_log_is_the_motor_logarithm(axis, angle):
    """newton.so3_log inverts so3_exp and agrees with the rotation part of pga.motor_log."""
    R = exp_matrix(angle * axis)[:3, :3]
    r = newton.so3_log(np.ascontiguousarray(R))
    np.testing.assert_allclose(kin.so3_exp(r), R, atol=1e-9)
    M = pga.motor_from_matrix(exp_matrix(angle * axis))
    expected = pga.line_coords(pga.motor_log(M))[:3]
    if angle < np.pi - 1e-6:  # at pi, r and -r are the same rotation
        np.testing.assert_allclose(r, expected, atol=1e-9)


def test_borrowed_arrays_are_the_arrays_without_their_counts():
    """pga_dyn.borrowed.borrowed: an array, and every array of a (nested) tuple, with its meminfo
    null (read off the compiled value: numba's reference counts of it are no-ops) and the same
    data, shape and strides (a callee writes through its views and reads it, as with the array
    itself); other values pass as they are; in Python, the argument itself."""
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    from pga_dyn.borrowed import borrowed

    @intrinsic
    def counted(typingctx, a):
        def codegen(context, builder, signature, args):
            field = context.data_model_manager[signature.args[0]].get_field_position("meminfo")
            meminfo = builder.extract_value(args[0], field)
            return builder.icmp_unsigned("!=", meminfo, cgutils.get_null_value(meminfo.type))

        return types.boolean(a), codegen

    @njit
    def fill(a, pair, scale):
        rows, index = pair
        for i in range(a.shape[0]):
            row = a[i]  # a view of a borrowed array
            for j in range(row.shape[0]):
                row[j] = scale * rows[index[j], i] + i
        return a.sum() + rows.T[1, 0]

    @njit
    def both(a, b, rows, index):
        plain = fill(a, (rows, index), 2.0)
        lent = borrowed((b, (rows, index), 2.0))
        return plain, fill(*lent), counted(a), counted(lent[0]), counted(lent[1][0]), counted(lent[1][1][1:])

    rows = np.arange(12.0).reshape(4, 3)
    rows.flags.writeable = False
    index = np.array([3, 0, 2, 1, 1])
    a, b = np.zeros((3, 5)), np.ones((3, 5))
    plain, lent, *counts = both(a, b, rows, index)
    assert counts == [True, False, False, False]
    assert lent == plain and np.array_equal(a, b)
    np.testing.assert_array_equal(a, 2.0 * rows[index].T + np.arange(3)[:, None])
    x = (a, (rows, 1))
    assert borrowed(x) is x
