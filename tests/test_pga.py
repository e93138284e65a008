"""Tests of pga_dyn.pga against the paper's section 3 and independent numpy formulas."""

import pathlib
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pga_dyn import pga
from pga_dyn.errors import PgaDynError
from pga_dyn.kinematics import se3_exp

SETTINGS = settings(max_examples=40, deadline=None)
ATOL = 1e-9

coord = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
vec3 = hnp.arrays(np.float64, 3, elements=coord)
unit3 = (
    hnp.arrays(np.float64, 3, elements=st.floats(-1.0, 1.0))
    .filter(lambda a: np.linalg.norm(a) > 0.1)
    .map(lambda a: a / np.linalg.norm(a))
)
seeds = st.integers(0, 2**32 - 1)

# Rotation angles below pi, with the two delicate ends well represented.
angles_below_pi = st.one_of(
    st.floats(0.0, np.pi - 1e-6),
    st.floats(0.0, 1e-6),
    st.floats(np.pi - 1e-4, np.pi - 1e-9),
)
# Rotation angles of any size, small ones (series branches) well represented.
angles = st.one_of(st.floats(0.0, 3 * np.pi), st.floats(0.0, 0.2))


# ---------------------------------------------------------------------------
# Independent reference formulas (numpy only)
# ---------------------------------------------------------------------------


def hat(xi):
    """The 4x4 matrix [[skew(omega), v], [0, 0]] of a twist (omega, v)."""
    w, v = xi[:3], xi[3:]
    return np.array([[0, -w[2], w[1], v[0]], [w[2], 0, -w[0], v[1]], [-w[1], w[0], 0, v[2]], [0, 0, 0, 0]])


def expm_taylor(A):
    """Matrix exponential by scaling and squaring of a 30-term Taylor series."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(A).sum(axis=1).max(), 1e-300) / 0.25))))
    X = A / 2.0**s
    term = E = np.eye(len(A))
    for k in range(1, 30):
        term = term @ X / k
        E = E + term
    for _ in range(s):
        E = E @ E
    return E


def rotation(axis, angle):
    """Rodrigues' rotation about a unit axis."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def rigid(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def random_rigid(seed):
    """A random rigid transform from the QR decomposition of a Gaussian matrix."""
    rng = np.random.default_rng(seed)
    Q, U = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(U)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] *= -1
    return rigid(Q, 3.0 * rng.normal(size=3))


def ga_exp_series(B, terms=40):
    """exp(B) as the power series sum B^k/k!, with kingdon's geometric product."""
    result = term = pga.motor([1, 0, 0, 0, 0, 0, 0, 0])
    for k in range(1, terms):
        term = term * B / k
        result = result + term
    return result


def pseudoscalar(X):
    return float(X.e0123)


EDGE_TRANSFORMS = [
    np.eye(4),
    rigid(np.eye(3), [1.0, -2.0, 3.0]),
    rigid(rotation([1.0, 0, 0], np.pi), [0.5, 0, 0]),
    rigid(rotation([0, 1.0, 0], np.pi), [0, 0, 0]),
    rigid(rotation([0, 0, 1.0], np.pi), [1, 1, 1]),
    rigid(rotation(np.array([1.0, -2, 2]) / 3, np.pi), [0, 2, 0]),
    rigid(rotation(np.array([1.0, -2, 2]) / 3, np.pi - 1e-7), [0, 2, 0]),
    rigid(rotation(np.array([2.0, 1, -2]) / 3, 1e-9), [3, 0, -1]),
]


# ---------------------------------------------------------------------------
# Basis, constructors, readers
# ---------------------------------------------------------------------------


def test_kingdon_blades_are_the_papers():
    """Each paper blade e_ijk is the geometric product e_i e_j e_k of its vectors in pga.ALG (kingdon's
    3DPGA): the coordinates need no sign table."""
    vectors = {i: pga.ALG.multivector(**{f"e{i}": 1}) for i in "0123"}
    for paper in set(pga.PLANE_BASIS + pga.POINT_BASIS + pga.LINE_BASIS + pga.MOTOR_BASIS) - {"e"}:
        product = vectors[paper[1]]
        for i in paper[2:]:
            product = product * vectors[i]
        assert dict(product.items()) == {pga.ALG.canon2bin[paper]: 1}, paper


@SETTINGS
@given(hnp.arrays(np.float64, 8, elements=coord))
def test_readers_invert_constructors(c):
    assert np.array_equal(pga.point_coords(pga.point(*c[:4])), c[:4])
    assert np.array_equal(pga.plane_coords(pga.plane(*c[4:])), c[4:])
    assert np.array_equal(pga.line_coords(pga.line(c[:3], c[3:6])), c[:6])
    assert np.array_equal(pga.line_coords(pga.twist(c[:3], c[3:6])), c[:6])
    assert np.array_equal(pga.line_coords(pga.wrench(c[:3], c[3:6])), c[:6])
    assert np.array_equal(pga.motor_coords(pga.motor(c)), c)
    assert np.array_equal(pga.point_coords(pga.direction(*c[:3])), [*c[:3], 0.0])


def test_bad_input_raises_pgadyn_error():
    with pytest.raises(PgaDynError):
        pga.point_coords(pga.line([1, 0, 0], [0, 0, 0]))
    with pytest.raises(PgaDynError):
        pga.line([1, 0], [0, 0, 0])
    with pytest.raises(PgaDynError):
        pga.line_coords(np.zeros(6))
    with pytest.raises(PgaDynError):
        pga.motor_from_matrix(np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(PgaDynError):
        pga.motor_log(pga.motor([2, 0, 0, 0, 0, 0, 0, 0]))


def test_import_does_not_load_kingdon():
    code = "import sys, pga_dyn.pga; assert 'kingdon' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=pathlib.Path(__file__).resolve().parents[1])


# ---------------------------------------------------------------------------
# Join and meet (eqs. 12, 17, 18)
# ---------------------------------------------------------------------------


@SETTINGS
@given(vec3, vec3, st.one_of(st.just(0.0), coord), st.one_of(st.just(0.0), coord))
def test_join_of_points_is_eq18(p1, p2, w1, w2):
    L = pga.join(pga.point(*p1, w1), pga.point(*p2, w2))
    expected = np.concatenate([w1 * p2 - w2 * p1, np.cross(p1, p2)])
    np.testing.assert_allclose(pga.line_coords(L), expected, atol=ATOL)


@SETTINGS
@given(vec3, vec3)
def test_join_of_euclidean_points_is_line_through(p, q):
    np.testing.assert_allclose(
        pga.line_coords(pga.join(pga.point(*p), pga.point(*q))), pga.line_coords(pga.line_through(p, q)), atol=ATOL
    )


@SETTINGS
@given(vec3, unit3, unit3)
def test_meet_of_two_planes_is_their_line(x, n1, n2):
    d = np.cross(n1, n2)
    assume(np.linalg.norm(d) > 1e-3)
    L = pga.meet(pga.plane(*n1, -n1 @ x), pga.plane(*n2, -n2 @ x))
    np.testing.assert_allclose(pga.line_coords(L), pga.line_coords(pga.line_through(x, x + d)), atol=ATOL)


@SETTINGS
@given(vec3, unit3, unit3, unit3)
def test_meet_of_three_planes_is_their_point(x, n1, n2, n3):
    P = pga.meet(pga.meet(pga.plane(*n1, -n1 @ x), pga.plane(*n2, -n2 @ x)), pga.plane(*n3, -n3 @ x))
    weight = np.linalg.det(np.array([n1, n2, n3]))
    np.testing.assert_allclose(pga.point_coords(P), weight * np.append(x, 1.0), atol=ATOL)


# ---------------------------------------------------------------------------
# Theorem 1 and its corollaries
# ---------------------------------------------------------------------------


@SETTINGS
@given(vec3, vec3, vec3, vec3)
def test_wedge_of_lines_is_the_triple_product(p1, d1, p2, d2):
    """(p1 + s d1) and (p2 + t d2): L1 ^ L2 = (p1 - p2).(d1 x d2) e0123, zero iff coplanar."""
    L1, L2 = pga.line_through(p1, p1 + d1), pga.line_through(p2, p2 + d2)
    expected = (p1 - p2) @ np.cross(d1, d2)
    assert pseudoscalar(pga.meet(L1, L2)) == pytest.approx(expected, abs=1e-8)


@SETTINGS
@given(vec3, vec3, vec3, coord)
def test_theorem1_coplanar_lines_have_zero_wedge(x, d1, d2, shift):
    intersecting = pga.meet(pga.line_through(x, x + d1), pga.line_through(x, x + d2))
    parallel = pga.meet(pga.line_through(x, x + d1), pga.line_through(x + d2, x + d2 + shift * d1))
    assert pseudoscalar(intersecting) == pytest.approx(0.0, abs=1e-8)
    assert pseudoscalar(parallel) == pytest.approx(0.0, abs=1e-8)


@SETTINGS
@given(st.floats(0.1, 3.0), st.floats(0.1, np.pi - 0.1), seeds)
def test_theorem1_skew_lines_have_nonzero_wedge(h, alpha, seed):
    """The x axis and a line at distance h and angle alpha, moved rigidly: L1 ^ L2 = -h sin(alpha)."""
    M = pga.motor_from_matrix(random_rigid(seed))
    L1 = pga.sandwich(M, pga.line([1, 0, 0], [0, 0, 0]))
    L2 = pga.sandwich(M, pga.line_through([0, 0, h], [np.cos(alpha), np.sin(alpha), h]))
    assert pseudoscalar(pga.meet(L1, L2)) == pytest.approx(-h * np.sin(alpha), rel=1e-9)


@SETTINGS
@given(vec3, vec3)
def test_lines_are_simple_and_screws_are_not(p, q):
    L = pga.line_through(p, q)
    assert pseudoscalar(pga.meet(L, L)) == pytest.approx(0.0, abs=1e-8)
    d = q - p
    if np.linalg.norm(d) > 0.1:
        screw = pga.line(d, np.cross(p, d) + d)  # pitch 1
        assert pseudoscalar(pga.meet(screw, screw)) == pytest.approx(2 * d @ d)


@SETTINGS
@given(vec3, vec3, vec3, st.one_of(st.just(0.0), st.just(1.0)), st.floats(-3.0, 3.0))
def test_corollary1_point_on_line(p, r, q, wq, s):
    """P on L (a Euclidean point of L or its ideal point) => L ^ (P v Q) = 0 for any Q."""
    L = pga.line_through(p, r)
    Q = pga.point(*q, wq)
    for P in (pga.point(*(p + s * (r - p))), pga.direction(*(r - p))):
        assert pseudoscalar(pga.meet(L, pga.join(P, Q))) == pytest.approx(0.0, abs=1e-7)


@SETTINGS
@given(vec3, vec3, vec3, vec3)
def test_corollary2_ideal_line_and_ideal_points(m, dp, dq, q):
    L = pga.line([0, 0, 0], m)
    P = pga.direction(*dp)
    assert pseudoscalar(pga.meet(L, pga.join(P, pga.direction(*dq)))) == pytest.approx(0.0, abs=1e-9)
    # With a Euclidean Q, P v Q = (-dp; dp x q) leaves the ideal plane and L ^ (P v Q) = -m.dp.
    assert pseudoscalar(pga.meet(L, pga.join(P, pga.point(*q)))) == pytest.approx(-m @ dp, abs=1e-8)


# ---------------------------------------------------------------------------
# Power pairing and velocities (eqs. 28-31, 34)
# ---------------------------------------------------------------------------


@SETTINGS
@given(vec3, vec3, vec3, vec3)
def test_power_is_f_dot_v_plus_tau_dot_omega(f, tau, omega, v):
    w, V = pga.wrench(f, tau), pga.twist(omega, v)
    expected = f @ v + tau @ omega
    assert pga.power(w, V) == pytest.approx(expected, abs=1e-9)
    assert pseudoscalar(pga.meet(V, w)) == pytest.approx(expected, abs=1e-9)


@SETTINGS
@given(vec3, vec3, vec3)
def test_commutator_gives_point_velocities(p, omega, v):
    V = pga.twist(omega, v)
    np.testing.assert_allclose(
        pga.point_coords(pga.commutator(pga.point(*p), V)), [*(v + np.cross(omega, p)), 0.0], atol=ATOL
    )
    np.testing.assert_allclose(
        pga.point_coords(pga.commutator(pga.direction(*p), V)), [*np.cross(omega, p), 0.0], atol=ATOL
    )


@SETTINGS
@given(vec3, vec3, vec3, vec3, seeds)
def test_velocity_of_moving_elements(omega, v, p, d, seed):
    """M(t) = M0 motor_exp(t V): 2 reverse(M) dM/dt = V (eq. 29) and dX/dt = X x V (eq. 28)."""
    M0, V = pga.motor_from_matrix(random_rigid(seed)), pga.twist(omega, v)
    h = 1e-6

    def at(t):
        return M0 * pga.motor_exp(pga.twist(t * omega, t * v))

    dM = (at(h) - at(-h)) * (1 / (2 * h))
    np.testing.assert_allclose(pga.motor_coords(pga.reverse(M0) * dM * 2), [0, *omega, *v, 0], atol=1e-5)
    for X0, coords in ((pga.point(*p), pga.point_coords), (pga.line_through(p, p + d), pga.line_coords)):
        dX = (coords(pga.sandwich(at(h), X0)) - coords(pga.sandwich(at(-h), X0))) / (2 * h)
        np.testing.assert_allclose(dX, coords(pga.commutator(pga.sandwich(M0, X0), V)), atol=1e-4)


# ---------------------------------------------------------------------------
# Motors and matrices (eqs. 27, 45)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("T", EDGE_TRANSFORMS)
def test_motor_matrix_round_trip_edge_cases(T):
    np.testing.assert_allclose(pga.matrix_from_motor(pga.motor_from_matrix(T)), T, atol=ATOL)


@SETTINGS
@given(seeds, vec3, vec3)
def test_motor_matrix_round_trip_and_action(seed, p, d):
    T = random_rigid(seed)
    M = pga.motor_from_matrix(T)
    np.testing.assert_allclose(pga.matrix_from_motor(M), T, atol=ATOL)
    np.testing.assert_allclose(pga.motor_coords(M * pga.reverse(M)), [1, 0, 0, 0, 0, 0, 0, 0], atol=ATOL)
    np.testing.assert_allclose(pga.point_coords(pga.sandwich(M, pga.point(*p))), T @ [*p, 1.0], atol=ATOL)
    np.testing.assert_allclose(pga.point_coords(pga.sandwich(M, pga.direction(*d))), T @ [*d, 0.0], atol=ATOL)


@SETTINGS
@given(seeds, seeds)
def test_motor_product_applies_left_factor_first(seed1, seed2):
    """With X = reverse(M) X0 M, the motor M1 M2 moves by M1 and then by M2: T(M1 M2) = T2 T1."""
    T1, T2 = random_rigid(seed1), random_rigid(seed2)
    M = pga.motor_from_matrix(T1) * pga.motor_from_matrix(T2)
    np.testing.assert_allclose(pga.matrix_from_motor(M), T2 @ T1, atol=1e-8)


@SETTINGS
@given(seeds, vec3)
def test_sandwich_equals_kingdon_sandwich_with_reversed_motor(seed, p):
    M = pga.motor_from_matrix(random_rigid(seed))
    X = pga.point(*p)
    np.testing.assert_allclose(pga.point_coords(pga.sandwich(M, X)), pga.point_coords(pga.reverse(M) >> X), atol=ATOL)


# ---------------------------------------------------------------------------
# Exponential and logarithm (eqs. 29, 102)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("x", [0.0, 1e-8, 1e-3, 0.05, 0.0999, 0.1, 0.1001, 0.3, 1.0, np.pi / 2, 3.0])
def test_series_helper_matches_high_precision(x):
    """The private g(x) = (x cos x - sin x)/x^3 is accurate on both sides of its series switch."""
    with mpmath.workdps(50):
        X = mpmath.mpf(x)
        g = (X * mpmath.cos(X) - mpmath.sin(X)) / X**3 if x else mpmath.mpf(-1) / 3
    assert pga._g(x) == pytest.approx(float(g), rel=1e-13, abs=0)


@SETTINGS
@given(unit3, angles, vec3)
def test_motor_exp_is_the_ga_series_of_half_the_bivector(axis, angle, v):
    B = pga.twist(angle * axis, v)
    np.testing.assert_allclose(pga.motor_coords(pga.motor_exp(B)), pga.motor_coords(ga_exp_series(B * 0.5)), atol=ATOL)


@SETTINGS
@given(st.sampled_from([0, 1, 2]), st.floats(-3 * np.pi, 3 * np.pi), vec3)
def test_motor_exp_agrees_with_kingdon_exp_on_simple_bivectors(k, angle, v):
    """kingdon's exp needs B ~B exactly scalar, so omega is along axis k and v has no k component."""
    omega, v = angle * np.eye(3)[k], v * (1.0 - np.eye(3)[k])
    B = pga.twist(omega, v)
    np.testing.assert_allclose(pga.motor_coords(pga.motor_exp(B)), pga.motor_coords((B * 0.5).exp()), atol=ATOL)


@SETTINGS
@given(unit3, angles, vec3)
def test_motor_exp_gives_the_se3_matrix_exponential(axis, angle, v):
    """Eq. (102): matrix_from_motor(motor_exp(q)) = expm(hat(q)), and kinematics.se3_exp agrees."""
    xi = np.concatenate([angle * axis, v])
    expected = expm_taylor(hat(xi))
    np.testing.assert_allclose(pga.matrix_from_motor(pga.motor_exp(pga.twist(xi[:3], xi[3:]))), expected, atol=1e-8)
    np.testing.assert_allclose(se3_exp(xi), expected, atol=1e-8)


@SETTINGS
@given(seeds, unit3, angles, vec3)
def test_twists_are_spatial(seed, axis, angle, v):
    """T(M0 motor_exp(V)) = se3_exp(V) T(M0): the twist acts from the left, in world coordinates (eq. 30)."""
    T0, xi = random_rigid(seed), np.concatenate([angle * axis, v])
    M = pga.motor_from_matrix(T0) * pga.motor_exp(pga.twist(xi[:3], xi[3:]))
    np.testing.assert_allclose(pga.matrix_from_motor(M), se3_exp(xi) @ T0, atol=1e-8)


@SETTINGS
@given(unit3, angles_below_pi, vec3)
def test_motor_log_inverts_motor_exp(axis, angle, v):
    B = pga.twist(angle * axis, v)
    np.testing.assert_allclose(pga.line_coords(pga.motor_log(pga.motor_exp(B))), pga.line_coords(B), atol=ATOL)


@SETTINGS
@given(vec3)
def test_motor_log_of_pure_translation(v):
    M = pga.motor_exp(pga.twist([0, 0, 0], v))
    np.testing.assert_allclose(pga.motor_coords(M), [1, 0, 0, 0, *(v / 2), 0], atol=ATOL)
    np.testing.assert_allclose(pga.line_coords(pga.motor_log(M)), [0, 0, 0, *v], atol=ATOL)


@SETTINGS
@given(unit3, st.floats(0.0, 4 * np.pi), vec3)
def test_motor_exp_of_motor_log_is_the_same_motion(axis, angle, v):
    """Any unit motor (c1 < 0 too): motor_exp(motor_log(M)) = +-M, |omega| <= pi."""
    M = pga.motor_exp(pga.twist(angle * axis, v))
    B = pga.motor_log(M)
    assert np.linalg.norm(pga.line_coords(B)[:3]) <= np.pi + 1e-12
    c, c_back = pga.motor_coords(M), pga.motor_coords(pga.motor_exp(B))
    np.testing.assert_allclose(c_back, np.sign(c @ c_back) * c, atol=1e-8)


@SETTINGS
@given(unit3, angles_below_pi, vec3)
def test_se3_log_inverts_se3_exp(axis, angle, v):
    xi = np.concatenate([angle * axis, v])
    np.testing.assert_allclose(pga.se3_log(se3_exp(xi)), xi, atol=ATOL)


@pytest.mark.parametrize("T", EDGE_TRANSFORMS)
def test_se3_log_and_motor_log_agree_on_edge_cases(T):
    xi = pga.se3_log(T)
    np.testing.assert_allclose(se3_exp(xi), T, atol=ATOL)
    M = pga.motor_from_matrix(T)
    np.testing.assert_allclose(pga.matrix_from_motor(pga.motor_exp(pga.motor_log(M))), T, atol=ATOL)
    if not np.isclose(np.linalg.norm(xi[:3]), np.pi):  # at exactly pi, +-axis are both valid logarithms
        np.testing.assert_allclose(pga.line_coords(pga.motor_log(M)), xi, atol=1e-8)


@SETTINGS
@given(seeds)
def test_se3_log_and_motor_log_agree(seed):
    T = random_rigid(seed)
    xi = pga.se3_log(T)
    np.testing.assert_allclose(pga.line_coords(pga.motor_log(pga.motor_from_matrix(T))), xi, atol=1e-8)
    np.testing.assert_allclose(expm_taylor(hat(xi)), T, atol=1e-8)
