"""Projective geometric algebra G(3,0,1) in the conventions of the DRNG paper.

This is the one module that touches kingdon. Geometric elements go in as numpy
coordinates in the paper's bases and come out as kingdon multivectors; the
``*_coords`` readers go back. Equation numbers refer to Sun, Ding and Zhu
(2025), section 3:

* planes are vectors ``a e1 + b e2 + c e3 + d e0`` (the plane ax+by+cz+d=0);
* points are trivectors ``x e032 + y e013 + z e021 + w e123`` (eq. 13, 15);
  w = 1 is a Euclidean point, w = 0 an ideal point (a direction);
* lines, twists and wrenches are bivectors on ``e23, e31, e12, e01, e02, e03``
  (eqs. 14, 30, 20), with Pluecker coordinates (d; m), twists (omega; v) and
  wrenches (f; tau);
* motors are ``c1 + c2 e23 + c3 e31 + c4 e12 + c5 e01 + c6 e02 + c7 e03
  + c8 e0123`` (eq. 24) and move elements by ``X = reverse(M) X0 M`` (eq. 27).

The algebra is kingdon's ``Algebra.fromname("3DPGA")``, whose basis blades are the paper's
(e23, e31, e12, e032, e013, e021, ...): coordinates go in and out with no sign table.

The kingdon algebra is built on first use (``ALG``), so importing this module
costs only numpy; :func:`se3_log` and :func:`skew` never load kingdon. The SE(3)
exponential on 4x4 matrices is the compiled :func:`pga_dyn.kinematics.se3_exp`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .errors import PgaDynError

if TYPE_CHECKING:
    import numpy.typing as npt
    from kingdon import Algebra
    from kingdon.multivector import MultiVector

# ---------------------------------------------------------------------------
# Paper bases (kingdon's 3DPGA blades carry the same names)
# ---------------------------------------------------------------------------

PLANE_BASIS = ("e1", "e2", "e3", "e0")
"""Paper coordinate order of a plane (a, b, c, d)."""

POINT_BASIS = ("e032", "e013", "e021", "e123")
"""Paper coordinate order of a point (x, y, z, w), eq. (13)."""

LINE_BASIS = ("e23", "e31", "e12", "e01", "e02", "e03")
"""Paper coordinate order of a line (d; m), twist (omega; v) and wrench (f; tau), eqs. (14), (30), (20)."""

MOTOR_BASIS = ("e", *LINE_BASIS, "e0123")
"""Paper coordinate order of a motor (c1, ..., c8), eq. (24); ``e`` is kingdon's name of the scalar 1."""

_STRAY_TOL = 1e-9  # relative size of components outside the expected basis
_UNIT_TOL = 1e-6  # tolerance of the unit-motor and rigid-matrix checks


@functools.cache
def _algebra() -> Algebra:
    """The kingdon algebra G(3,0,1) with the paper's blades, built once on first use."""
    from kingdon import Algebra

    return Algebra.fromname("3DPGA")


def __getattr__(name: str):
    """Provide ``ALG`` lazily, so that importing this module does not import kingdon."""
    if name == "ALG":
        return _algebra()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _keys(basis: tuple[str, ...]) -> tuple[int, ...]:
    """kingdon's binary keys of the blades of ``basis``."""
    return tuple(_algebra().canon2bin[blade] for blade in basis)


def _as_vector(x, n: int, name: str) -> np.ndarray:
    """``x`` as a finite float array of shape (n,), or a PgaDynError."""
    a = np.asarray(x, dtype=float)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise PgaDynError(f"{name} must be {n} finite numbers, got {x!r}")
    return a


def _from_paper(basis: tuple[str, ...], coeffs, name: str) -> MultiVector:
    """The multivector sum_i coeffs[i] * basis[i]."""
    c = _as_vector(coeffs, len(basis), name)
    return _algebra().multivector(**dict(zip(basis, c.tolist())))


def _to_paper(basis: tuple[str, ...], X: MultiVector, name: str) -> np.ndarray:
    """Coefficients of ``X`` on the blades ``basis``; other components must vanish."""
    if not isinstance(X, _algebra().mvtype):
        raise PgaDynError(f"{name} must be a kingdon multivector of pga.ALG, got {type(X).__name__}")
    items = dict(X.items())
    out = np.array([float(items.pop(k, 0.0)) for k in _keys(basis)])
    stray = max((abs(float(v)) for v in items.values()), default=0.0)
    if stray > _STRAY_TOL * (1.0 + stray + np.max(np.abs(out))):
        raise PgaDynError(f"{name} has components outside the basis {basis}: {X}")
    return out


# ---------------------------------------------------------------------------
# Constructors and readers
# ---------------------------------------------------------------------------


def point(x: float, y: float, z: float, w: float = 1.0) -> MultiVector:
    """The point x e032 + y e013 + z e021 + w e123 (eq. 13); w = 0 gives an ideal point."""
    return _from_paper(POINT_BASIS, (x, y, z, w), "point")


def direction(x: float, y: float, z: float) -> MultiVector:
    """The ideal point (direction) x e032 + y e013 + z e021 (eq. 15, Remark 1)."""
    return point(x, y, z, 0.0)


def plane(a: float, b: float, c: float, d: float) -> MultiVector:
    """The plane ax + by + cz + d = 0 as the vector a e1 + b e2 + c e3 + d e0."""
    return _from_paper(PLANE_BASIS, (a, b, c, d), "plane")


def line(d: npt.ArrayLike, m: npt.ArrayLike) -> MultiVector:
    """The line with Pluecker coordinates (d; m): d_x e23 + d_y e31 + d_z e12 + m_x e01 + m_y e02 + m_z e03 (eq. 14)."""
    return _from_paper(LINE_BASIS, np.concatenate([_as_vector(d, 3, "d"), _as_vector(m, 3, "m")]), "line")


def line_through(p: npt.ArrayLike, q: npt.ArrayLike) -> MultiVector:
    """The join of the Euclidean points p and q, (q - p; p x q) (eq. 18 with w1 = w2 = 1)."""
    p, q = _as_vector(p, 3, "p"), _as_vector(q, 3, "q")
    return line(q - p, np.cross(p, q))


def twist(omega: npt.ArrayLike, v: npt.ArrayLike) -> MultiVector:
    """The twist (omega; v): omega on e23, e31, e12 and the velocity v of the origin on e01, e02, e03 (eq. 30)."""
    return line(omega, v)


def wrench(f: npt.ArrayLike, tau: npt.ArrayLike) -> MultiVector:
    """The wrench (f; tau): force f on e23, e31, e12 and the moment tau about the origin on e01, e02, e03 (eq. 20)."""
    return line(f, tau)


def motor(coeffs: npt.ArrayLike) -> MultiVector:
    """The motor c1 + c2 e23 + c3 e31 + c4 e12 + c5 e01 + c6 e02 + c7 e03 + c8 e0123 (eq. 24)."""
    return _from_paper(MOTOR_BASIS, coeffs, "motor")


def point_coords(P: MultiVector) -> np.ndarray:
    """Homogeneous coordinates (x, y, z, w) of a point (eq. 13)."""
    return _to_paper(POINT_BASIS, P, "point")


def plane_coords(p: MultiVector) -> np.ndarray:
    """Coefficients (a, b, c, d) of the plane ax + by + cz + d = 0."""
    return _to_paper(PLANE_BASIS, p, "plane")


def line_coords(L: MultiVector) -> np.ndarray:
    """Coordinates (d; m) of a bivector: a line (eq. 14), twist (omega; v) (eq. 30) or wrench (f; tau) (eq. 20)."""
    return _to_paper(LINE_BASIS, L, "bivector")


def motor_coords(M: MultiVector) -> np.ndarray:
    """Coefficients (c1, ..., c8) of an even multivector in the paper's order (eq. 24)."""
    return _to_paper(MOTOR_BASIS, M, "motor")


# ---------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------


def join(a: MultiVector, b: MultiVector) -> MultiVector:
    """The join a v b (regressive product, eq. 17); for two points it is eq. (18)."""
    return a & b


def meet(a: MultiVector, b: MultiVector) -> MultiVector:
    """The meet a ^ b (outer product, eq. 12): two planes meet in a line, three in a point."""
    return a ^ b


def reverse(X: MultiVector) -> MultiVector:
    """The reverse of X; on even elements it flips the sign of the bivector part (eq. 25)."""
    return ~X


def commutator(X: MultiVector, V: MultiVector) -> MultiVector:
    """The commutator X x V = (XV - VX)/2 (eq. 28).

    For a twist V = (omega; v), a Euclidean point at p gives the ideal point
    v + omega x p (its velocity, eq. 34) and an ideal point d gives omega x d.
    """
    return X.cp(V)


def sandwich(M: MultiVector, X: MultiVector) -> MultiVector:
    """The paper's motion of X by the motor M: reverse(M) X M (eq. 27, reverse on the left).

    The result is projected onto the grades of X, which only removes round-off
    (the exact product already has them for points, lines and planes). For a
    unit motor this equals kingdon's ``(~M) >> X``.
    """
    return (~M * X * M).grade(X.grades)


def acceleration(X: MultiVector, V: MultiVector, A: MultiVector) -> MultiVector:
    """The acceleration X x A + (X x V) x V of a point X (Euclidean or ideal) of a body with twist
    V and acceleration A (eq. 35; with A = dV/dt + G, G the gravity seed, a Euclidean point at p
    gets p'' - g)."""
    return commutator(X, A) + commutator(commutator(X, V), V)


def power(w: MultiVector, V: MultiVector) -> float:
    """The power P of the wrench w on the twist V: w ^ V = P e0123 with P = f.v + tau.omega (eq. 31)."""
    return float((w ^ V).e0123)


# ---------------------------------------------------------------------------
# Motors and homogeneous matrices
# ---------------------------------------------------------------------------


def _as_rigid(T) -> np.ndarray:
    """``T`` as a 4x4 homogeneous rigid transform [R p; 0 1], or a PgaDynError."""
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise PgaDynError(f"expected a finite 4x4 homogeneous matrix, got shape {T.shape}")
    R = T[:3, :3]
    if (
        np.max(np.abs(T[3] - (0.0, 0.0, 0.0, 1.0))) > _UNIT_TOL
        or np.max(np.abs(R.T @ R - np.eye(3))) > _UNIT_TOL
        or np.linalg.det(R) < 0.0
    ):
        raise PgaDynError(f"not a rigid transform [R p; 0 1] with R a rotation:\n{T}")
    return T


def rotation_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the rotation matrix R, with w >= 0 (Shepperd's method).

    R rotates by theta about the unit axis n for (w, x, y, z) = (cos theta/2, sin theta/2 n).
    The 4x4 matrix below equals 4 q q^T; its column with the largest diagonal
    entry gives q without cancellation at any angle.
    """
    tr = np.trace(R)
    Q = np.array(
        [
            [1 + tr, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]],
            [R[2, 1] - R[1, 2], 1 + R[0, 0] - R[1, 1] - R[2, 2], R[0, 1] + R[1, 0], R[0, 2] + R[2, 0]],
            [R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], 1 - R[0, 0] + R[1, 1] - R[2, 2], R[1, 2] + R[2, 1]],
            [R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], 1 - R[0, 0] - R[1, 1] + R[2, 2]],
        ]
    )
    k = int(np.argmax(np.diag(Q)))
    q = Q[:, k] / (2.0 * np.sqrt(Q[k, k]))
    return q if q[0] >= 0.0 else -q


def motor_from_matrix(T: npt.ArrayLike) -> MultiVector:
    """The unit motor M, with c1 >= 0, equivalent to T = [R p; 0 1] in the sense of eq. (45).

    M = M_R M_t: the rotor M_R = q_w + q_x e23 + q_y e31 + q_z e12 (the unit
    quaternion of R) followed by the translator M_t = 1 + t_x e01 + t_y e02 +
    t_z e03 with t = p/2. Their product is
    M = q_w + r + (q_w t - r x t) on e01, e02, e03 + (r . t) e0123, with r = (q_x, q_y, q_z).
    """
    T = _as_rigid(T)
    q = rotation_quaternion(T[:3, :3])
    r, t = q[1:], 0.5 * T[:3, 3]
    return motor(np.concatenate([[q[0]], r, q[0] * t - np.cross(r, t), [r @ t]]))


def matrix_from_motor(M: MultiVector) -> np.ndarray:
    """The homogeneous matrix whose columns are reverse(M) E M for E = e032, e013, e021, e123 (eq. 45)."""
    frame = (direction(1.0, 0.0, 0.0), direction(0.0, 1.0, 0.0), direction(0.0, 0.0, 1.0), point(0.0, 0.0, 0.0))
    return np.column_stack([point_coords(sandwich(M, E)) for E in frame])


# ---------------------------------------------------------------------------
# Exponential and logarithm
# ---------------------------------------------------------------------------


def _sinc(x):
    """sin(x)/x, equal to 1 at x = 0 (a float, or an array elementwise)."""
    return np.sinc(np.asarray(x) / np.pi)[()]


def _g(x):
    """(x cos x - sin x)/x^3, the derivative of sin(x)/x divided by x; a series below 0.1 (a float,
    or an array elementwise)."""
    x = np.asarray(x, dtype=float)
    x2 = x * x
    series = -1.0 / 3.0 + x2 / 30.0 - x2 * x2 / 840.0 + x2**3 / 45360.0
    safe = np.where(np.abs(x) < 0.1, 1.0, x)
    return np.where(np.abs(x) < 0.1, series, (safe * np.cos(safe) - np.sin(safe)) / safe**3)[()]


def _check_unit_motor(c: np.ndarray) -> None:
    """Raise unless c are the coefficients of a unit motor: reverse(M) M = 1 (eq. 26)."""
    norm2 = c[0] ** 2 + c[1:4] @ c[1:4]
    weight = c[0] * c[7] - c[1:4] @ c[4:7]
    if abs(norm2 - 1.0) > _UNIT_TOL or abs(weight) > _UNIT_TOL:
        raise PgaDynError(f"not a unit motor (reverse(M) M != 1): coefficients {c}")


def motor_exp(B: MultiVector) -> MultiVector:
    """The motor exp(B/2) of a general bivector B = (omega; v), a screw with any pitch.

    The factor 1/2 matches the velocity V = 2 reverse(M) dM/dt (eq. 29): M(t) =
    motor_exp(t V) has constant velocity V, and matrix_from_motor(motor_exp(B))
    is the SE(3) exponential expm([[skew(omega), v], [0, 0]]), which is eq. (102).

    With a = omega/2, b = v/2 and phi = |a|, (B/2)^2 = -phi^2 + 2 (a.b) e0123, so
    B/2 behaves as a dual angle phi + eps e0123 with eps = -(a.b)/phi. Expanding
    cos and sin(x)/x to first order in eps gives

        exp(B/2) = cos(phi) + s a (on e23..e12) + (s b + (a.b) g a) (on e01..e03) + (a.b) s e0123,

    with s = sin(phi)/phi and g = (phi cos(phi) - sin(phi))/phi^3, both smooth at
    phi = 0 (pure translation: exp(B/2) = 1 + b).
    """
    c = line_coords(B)
    a, b = 0.5 * c[:3], 0.5 * c[3:]
    phi = float(np.linalg.norm(a))
    s, g, ab = _sinc(phi), _g(phi), float(a @ b)
    return motor(np.concatenate([[np.cos(phi)], s * a, s * b + ab * g * a, [ab * s]]))


def motor_log(M: MultiVector) -> MultiVector:
    """The bivector B = (omega; v) with |omega| <= pi and motor_exp(B) = +-M (the principal logarithm).

    M and -M are the same rigid motion; M is first flipped to c1 >= 0, so the
    half angle phi = atan2(|r|, c1) lies in [0, pi/2] and s = sin(phi)/phi >= 2/pi.
    Inverting the formula of :func:`motor_exp` then needs no case split:
    a = r/s, a.b = c8/s, b = (t - (a.b) g a)/s, with r = (c2, c3, c4) and
    t = (c5, c6, c7); this covers pure translations and angles near pi.
    """
    c = motor_coords(M)
    _check_unit_motor(c)
    if c[0] < 0.0:
        c = -c
    r, t = c[1:4], c[4:7]
    phi = float(np.arctan2(np.linalg.norm(r), c[0]))
    s = _sinc(phi)
    a = r / s
    ab = c[7] / s
    b = (t - ab * _g(phi) * a) / s
    return twist(2.0 * a, 2.0 * b)


def skew(w: np.ndarray) -> np.ndarray:
    """The 3x3 matrix [w] with [w] x = w x x."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def se3_log(T: npt.ArrayLike) -> np.ndarray:
    """The principal logarithm of T: the spatial twist xi = (omega, v), |omega| <= pi.

    Its inverse is :func:`pga_dyn.kinematics.se3_exp`, the matrix exponential
    expm([[skew(omega), v], [0, 0]]) of paper eq. (102), which also equals
    matrix_from_motor(motor_exp(twist(omega, v))): se3_exp(se3_log(T)) = T.

    omega comes from the unit quaternion (cos phi, sin phi n) of R (phi = theta/2
    in [0, pi/2]): omega = 2 phi n. Then v = (I - K/2 + D K^2) p with K = skew(omega)
    and D = (1 - phi cot phi)/(4 phi^2) = -g(phi)/(4 sinc(phi)), finite up to theta = pi.
    Agrees with line_coords(motor_log(motor_from_matrix(T))).
    """
    T = _as_rigid(T)
    return quaternion_log(rotation_quaternion(T[:3, :3]), T[:3, 3])


def quaternion_log(quaternion: npt.ArrayLike, position: npt.ArrayLike) -> np.ndarray:
    """:func:`se3_log` of the poses given by unit quaternions (w, x, y, z) ``quaternion`` (..., 4)
    of their rotations and their translations ``position`` (..., 3): the twists xi (..., 6),
    with the formulas of :func:`se3_log` (a quaternion with w < 0 is flipped first)."""
    q = np.asarray(quaternion, dtype=float)
    p = np.asarray(position, dtype=float)
    q = np.where(q[..., :1] < 0.0, -q, q)
    phi = np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), q[..., 0])
    s = _sinc(phi)
    omega = 2.0 * q[..., 1:] / np.asarray(s)[..., None]
    Kp = np.cross(omega, p)
    v = p - 0.5 * Kp - (np.asarray(_g(phi) / (4.0 * s))[..., None]) * np.cross(omega, Kp)
    return np.concatenate([omega, v], axis=-1)
