"""The floating base's coordinates from the trunk's pose and twist as robots log them
(docs/conventions.md, "Floating base").

pga-dyn's floating joint F (paper eqs. 102-104) has the coordinates q = xi = (omega; v), the
exponential coordinates of the displacement in the spatial frame: T(q) = exp(xi^) T0, T0 the
trunk's pose at q0. Its velocity coordinates are the trunk's *spatial* twist qd = (omega; v_o):
omega the angular velocity in the world frame and v_o the velocity of the point of the trunk
that is at the world origin; qdd is the time derivative of qd.

Robots (and Pinocchio, MuJoCo) log the pose as the position p of the trunk frame's origin and a
unit quaternion, and the twist as the velocity v_p of that origin. In the world frame:

    v_o = v_p - omega x p,            d v_o / dt = a_p - alpha x p - omega x v_p,

a_p the acceleration of the trunk frame's origin and alpha = d omega / dt. Pinocchio's
free-flyer velocity is local, (R^T v_p; R^T omega); MuJoCo's ``qvel`` of a free joint is
(v_p; R^T omega) (world linear, body angular).

The other way, and for the other tools: :func:`trunk_state` and :func:`trunk_motion` give the
logged quantities of the coordinates; :func:`local_coordinates` and :func:`local_wrench` give
Pinocchio's free flyer (pose, local twist and its derivative, local wrench about the trunk
origin), :func:`free_joint_coordinates` and :func:`free_joint_wrench` MuJoCo's free joint
(qpos, qvel, qacc and qfrc: world force, body-frame moment about the trunk origin); the
``from_`` functions invert them. The generalized forces are the duals of the velocities: the
power tau . qd is the same in every convention. ``robots.pinocchio_state`` and
``robots.mujoco_state`` apply them to whole robots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .errors import PgaDynError
from .pga import quaternion_log, rotation_quaternion

if TYPE_CHECKING:
    import numpy.typing as npt

#: Largest deviation of a logged quaternion's norm from 1 that is normalised silently; a larger
#: one is an error (a column mix-up, or a quaternion in another order).
QUATERNION_TOL = 1e-3


def unit_quaternions(quaternion: npt.ArrayLike, where: str = "quaternion") -> np.ndarray:
    """Quaternions (..., 4) in the order (x, y, z, w) as logged, checked to be unit within
    :data:`QUATERNION_TOL` and normalised; PgaDynError naming ``where`` otherwise."""
    q = np.asarray(quaternion, dtype=float)
    if q.shape[-1:] != (4,) or not np.all(np.isfinite(q)):
        raise PgaDynError(f"{where}: expected finite quaternions (x, y, z, w) of shape (..., 4), got {q.shape}")
    norm = np.linalg.norm(q, axis=-1)
    worst = int(np.argmax(np.abs(norm - 1.0))) if norm.size else 0
    if norm.size and abs(norm.flat[worst] - 1.0) > QUATERNION_TOL:
        raise PgaDynError(
            f"{where}: quaternion {worst} has norm {norm.flat[worst]:.6g}, not 1 (within {QUATERNION_TOL}): "
            "is it (x, y, z, w)?"
        )
    return q / norm[..., None]


def rotation_matrices(quaternion: npt.ArrayLike) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) in the order (x, y, z, w)."""
    x, y, z, w = np.moveaxis(np.asarray(quaternion, dtype=float), -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=-2,
    )


def rotation_vector_quaternions(r: npt.ArrayLike) -> np.ndarray:
    """Unit quaternions (ns, 4), (x, y, z, w), of the rotation vectors ``r`` (ns, 3): exp(r^), the
    rotation by |r| about r / |r| (a spherical joint's coordinates, docs/conventions.md)."""
    r = np.asarray(r, dtype=float)
    angle = np.linalg.norm(r, axis=1)
    return np.concatenate([0.5 * np.sinc(angle / (2 * np.pi))[:, None] * r, np.cos(angle / 2)[:, None]], 1)


def quaternion_rotation_vectors(quaternion: npt.ArrayLike) -> np.ndarray:
    """Rotation vectors (ns, 3), |r| <= pi, of unit quaternions (ns, 4), (x, y, z, w): the inverse of
    :func:`rotation_vector_quaternions` (:func:`pga_dyn.pga.quaternion_log`)."""
    q = np.asarray(quaternion, dtype=float)
    return quaternion_log(q[:, [3, 0, 1, 2]], np.zeros((len(q), 3)))[:, :3]


def quaternion_conjugate(q: npt.ArrayLike) -> np.ndarray:
    """The conjugates (..., 4) of quaternions (..., 4) in the order (x, y, z, w): the inverse
    rotations of unit ones."""
    return np.asarray(q, dtype=float) * np.array([-1.0, -1.0, -1.0, 1.0])


def continuous_quaternions(q: npt.ArrayLike) -> np.ndarray:
    """Quaternions (ns, 4) along a record with one sign: each flipped where its dot product with
    the previous one would be negative (q and -q are the same rotation), so that they can be
    differentiated."""
    q = np.array(q, dtype=float)
    flips = np.cumsum(np.concatenate([[0], np.sum(q[1:] * q[:-1], axis=1) < 0])) % 2 == 1
    q[flips] *= -1.0
    return q


def quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Hamilton product a b of quaternions (..., 4) in the order (x, y, z, w) (rotation b, then a)."""
    va, wa = a[..., :3], a[..., 3:]
    vb, wb = b[..., :3], b[..., 3:]
    return np.concatenate([wa * vb + wb * va + np.cross(va, vb), wa * wb - np.sum(va * vb, axis=-1, keepdims=True)], -1)


def base_coordinates(
    position: npt.ArrayLike,
    quaternion: npt.ArrayLike,
    reference: npt.ArrayLike | None = None,
) -> np.ndarray:
    """The floating joint's coordinates xi (ns, 6) of trunk poses: ``position`` (ns, 3) and unit
    ``quaternion`` (ns, 4), (x, y, z, w), of the trunk frame in the world; ``reference`` (4, 4) the
    trunk's pose at q0, T0 (default the identity): exp(xi^) = T T0^-1 (principal logarithm,
    |omega| <= pi, :func:`pga_dyn.pga.quaternion_log`)."""
    p = np.asarray(position, dtype=float)
    q = unit_quaternions(quaternion)
    if reference is not None:
        T0 = np.asarray(reference, dtype=float)
        if not np.allclose(T0, np.eye(4)):
            # T T0^-1 = [R R0^T, p - R R0^T p0]: the quaternion of R R0^T is q q0^-1
            q0 = _xyzw(T0[:3, :3])
            q = quaternion_product(q, quaternion_conjugate(q0))
            p = p - np.einsum("nij,j->ni", rotation_matrices(q), T0[:3, 3])
    return quaternion_log(q[..., [3, 0, 1, 2]], p)


def _xyzw(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (x, y, z, w), w >= 0, of the rotation matrix R (3, 3)."""
    return rotation_quaternion(R)[[1, 2, 3, 0]]


def spatial_twist(position: npt.ArrayLike, linear: npt.ArrayLike, angular: npt.ArrayLike) -> np.ndarray:
    """The floating joint's velocity coordinates (ns, 6), the spatial twist (omega; v_o), from the
    trunk frame origin's ``position`` p and world ``linear`` velocity v_p and the world ``angular``
    velocity omega (each (ns, 3)): v_o = v_p - omega x p."""
    p, v, w = (np.asarray(x, dtype=float) for x in (position, linear, angular))
    return np.concatenate([w, v - np.cross(w, p)], axis=-1)


def spatial_acceleration(
    position: npt.ArrayLike,
    linear: npt.ArrayLike,
    angular: npt.ArrayLike,
    linear_acceleration: npt.ArrayLike,
    angular_acceleration: npt.ArrayLike,
) -> np.ndarray:
    """The floating joint's acceleration coordinates (ns, 6), d/dt (omega; v_o), from p, v_p, omega
    and the world accelerations a_p, alpha of the trunk frame's origin: (alpha; a_p - alpha x p -
    omega x v_p)."""
    p, v, w, a, al = (
        np.asarray(x, dtype=float) for x in (position, linear, angular, linear_acceleration, angular_acceleration)
    )
    return np.concatenate([al, a - np.cross(al, p) - np.cross(w, v)], axis=-1)


def trunk_state(q: npt.ArrayLike, qd: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> tuple:
    """The inverse of :func:`base_coordinates` and :func:`spatial_twist`: the trunk's position
    (ns, 3), quaternion (ns, 4) (x, y, z, w; w >= 0), world linear velocity of its origin and world
    angular velocity (ns, 3) from the floating joint's coordinates ``q`` and ``qd`` (ns, 6)."""
    from .kinematics import se3_exp

    q = np.atleast_2d(np.asarray(q, dtype=float))
    qd = np.atleast_2d(np.asarray(qd, dtype=float))
    T0 = np.eye(4) if reference is None else np.asarray(reference, dtype=float)
    T = np.stack([se3_exp(np.ascontiguousarray(x)) @ T0 for x in q])
    p = T[:, :3, 3]
    quats = np.stack([_xyzw(R) for R in T[:, :3, :3]])
    w = qd[:, :3]
    return p, quats, qd[:, 3:] + np.cross(w, p), w


# -- the base in other tools' conventions (docs/conventions.md, "Floating base") -----------------


def batch(*arrays: npt.ArrayLike | None) -> tuple:
    """(single, arrays as 2-D float arrays (ns, ...), None kept): single when the first array is
    1-D (one state). The conversions of this module and of ``robots`` (Pinocchio's and MuJoCo's
    states and forces) take one state or a batch with it; :func:`unbatched` gives back the shape."""
    single = np.ndim(arrays[0]) == 1
    return single, tuple(None if a is None else np.atleast_2d(np.asarray(a, dtype=float)) for a in arrays)


def unbatched(single: bool, *arrays: np.ndarray | None) -> tuple:
    """The arrays (ns, ...) of :func:`batch`'s conversion, each its first row when ``single``."""
    return tuple(a[0] if single and a is not None else a for a in arrays)


def trunk_motion(
    q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike | None = None, reference: npt.ArrayLike | None = None
) -> tuple:
    """The trunk frame's pose and motion in the world from the floating joint's coordinates ``q``,
    ``qd``, ``qdd`` (ns, 6) or (6,): (position p, quaternion (x, y, z, w), w >= 0, rotation matrix R
    (ns, 3, 3), linear velocity v_p of its origin, angular velocity omega, linear acceleration a_p
    of its origin, angular acceleration alpha), each (ns, 3) (or one state's shapes); the last two
    None without ``qdd``. With alpha = qdd[:3], v_p = v_o + omega x p and a_p = d v_o/dt + alpha x p
    + omega x v_p (the inverse of :func:`spatial_twist` and :func:`spatial_acceleration`)."""
    single, (q, qd, qdd) = batch(q, qd, qdd)
    p, quat, v, w = trunk_state(q, qd, reference)
    a = alpha = None
    if qdd is not None:
        alpha = qdd[:, :3]
        a = qdd[:, 3:] + np.cross(alpha, p) + np.cross(w, v)
    return unbatched(single, p, quat, rotation_matrices(quat), v, w, a, alpha)


def local_coordinates(
    q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike | None = None, reference: npt.ArrayLike | None = None
) -> tuple:
    """Pinocchio's free-flyer coordinates of the floating joint's ``q``, ``qd``, ``qdd`` ((ns, 6) or
    (6,); ``reference`` T0 (4, 4) as in :func:`base_coordinates`): (x (ns, 7) = (p, quaternion x y
    z w) of the trunk in the world, v (ns, 6) = (R^T v_p; R^T omega) the trunk's twist in its own
    frame, a (ns, 6) = dv/dt = (R^T a_p - (R^T omega) x (R^T v_p); R^T alpha), None without ``qdd``).
    The pose is the trunk's in the world: for a free-flyer placed at T0, Pinocchio's q is T0^-1 T."""
    single, (q, qd, qdd) = batch(q, qd, qdd)
    p, quat, R, v, w, a, alpha = trunk_motion(q, qd, qdd, reference)
    Rt = np.swapaxes(R, -1, -2)
    vl, wl = np.einsum("nij,nj->ni", Rt, v), np.einsum("nij,nj->ni", Rt, w)
    acc = None
    if qdd is not None:
        acc = np.concatenate([np.einsum("nij,nj->ni", Rt, a) - np.cross(wl, vl), np.einsum("nij,nj->ni", Rt, alpha)], 1)
    return unbatched(single, np.concatenate([p, quat], 1), np.concatenate([vl, wl], 1), acc)


def from_local_coordinates(
    x: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike | None = None, reference: npt.ArrayLike | None = None
) -> tuple:
    """The inverse of :func:`local_coordinates`: the floating joint's (q, qd, qdd) ((ns, 6) each, or
    (6,); qdd None without ``a``) from Pinocchio's free-flyer pose ``x`` (ns, 7) (p, x y z w), twist
    ``v`` (ns, 6) (linear; angular, trunk frame) and its derivative ``a`` (ns, 6)."""
    single, (x, v, a) = batch(x, v, a)
    quat = unit_quaternions(x[:, 3:7], "free-flyer quaternion")
    p, R = x[:, :3], rotation_matrices(quat)
    vp, w = np.einsum("nij,nj->ni", R, v[:, :3]), np.einsum("nij,nj->ni", R, v[:, 3:])
    qdd = None
    if a is not None:
        alpha = np.einsum("nij,nj->ni", R, a[:, 3:])
        ap = np.einsum("nij,nj->ni", R, a[:, :3] + np.cross(v[:, 3:], v[:, :3]))
        qdd = spatial_acceleration(p, vp, w, ap, alpha)
    return unbatched(single, base_coordinates(p, quat, reference), spatial_twist(p, vp, w), qdd)


def free_joint_coordinates(
    q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike | None = None, reference: npt.ArrayLike | None = None
) -> tuple:
    """MuJoCo's free-joint coordinates of the floating joint's ``q``, ``qd``, ``qdd`` ((ns, 6) or
    (6,)): (qpos (ns, 7) = (p, quaternion w x y z), qvel (ns, 6) = (v_p; R^T omega) (world linear,
    body angular), qacc (ns, 6) = d qvel/dt = (a_p; R^T alpha), None without ``qdd``)."""
    single, (q, qd, qdd) = batch(q, qd, qdd)
    p, quat, R, v, w, a, alpha = trunk_motion(q, qd, qdd, reference)
    Rt = np.swapaxes(R, -1, -2)
    qacc = None if qdd is None else np.concatenate([a, np.einsum("nij,nj->ni", Rt, alpha)], 1)
    qvel = np.concatenate([v, np.einsum("nij,nj->ni", Rt, w)], 1)
    return unbatched(single, np.concatenate([p, quat[:, [3, 0, 1, 2]]], 1), qvel, qacc)


def from_free_joint_coordinates(
    qpos: npt.ArrayLike, qvel: npt.ArrayLike, qacc: npt.ArrayLike | None = None, reference: npt.ArrayLike | None = None
) -> tuple:
    """The inverse of :func:`free_joint_coordinates`: the floating joint's (q, qd, qdd) ((ns, 6) each,
    or (6,); qdd None without ``qacc``) from MuJoCo's free joint ``qpos`` (ns, 7) (p, w x y z),
    ``qvel`` (ns, 6) and ``qacc`` (ns, 6)."""
    single, (qpos, qvel, qacc) = batch(qpos, qvel, qacc)
    quat = unit_quaternions(qpos[:, [4, 5, 6, 3]], "free joint quaternion")
    p, R = qpos[:, :3], rotation_matrices(quat)
    w = np.einsum("nij,nj->ni", R, qvel[:, 3:])
    qdd = None
    if qacc is not None:
        qdd = spatial_acceleration(p, qvel[:, :3], w, qacc[:, :3], np.einsum("nij,nj->ni", R, qacc[:, 3:]))
    return unbatched(single, base_coordinates(p, quat, reference), spatial_twist(p, qvel[:, :3], w), qdd)


def _frame(q, reference):
    """(p (ns, 3), R (ns, 3, 3)) of the trunk at the floating joint's coordinates q (ns, 6)."""
    p, quat, _, _ = trunk_state(q, np.zeros_like(q), reference)
    return p, rotation_matrices(quat)


def local_wrench(q: npt.ArrayLike, tau: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> np.ndarray:
    """Pinocchio's free-flyer generalized force (ns, 6) or (6,), the wrench on the trunk in its own
    frame about its origin (f_l; n_l) = (R^T f; R^T (n_o - p x f)), from the floating joint's
    generalized force ``tau`` = (n_o; f) (world moment about the world origin, world force; (ns, 6)
    or (6,)) at the coordinates ``q`` (same shape)."""
    single, (q, tau) = batch(q, tau)
    p, R = _frame(q, reference)
    Rt = np.swapaxes(R, -1, -2)
    f, n = tau[:, 3:], tau[:, :3] - np.cross(p, tau[:, 3:])
    return unbatched(single, np.concatenate([np.einsum("nij,nj->ni", Rt, f), np.einsum("nij,nj->ni", Rt, n)], 1))[0]


def from_local_wrench(q: npt.ArrayLike, wrench: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> np.ndarray:
    """The inverse of :func:`local_wrench`: the floating joint's generalized force (n_o; f) (ns, 6)
    or (6,) from Pinocchio's free-flyer force ``wrench`` (f_l; n_l) at the coordinates ``q``."""
    single, (q, wrench) = batch(q, wrench)
    p, R = _frame(q, reference)
    f, n = np.einsum("nij,nj->ni", R, wrench[:, :3]), np.einsum("nij,nj->ni", R, wrench[:, 3:])
    return unbatched(single, np.concatenate([n + np.cross(p, f), f], 1))[0]


def free_joint_wrench(q: npt.ArrayLike, tau: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> np.ndarray:
    """MuJoCo's free-joint generalized force (ns, 6) or (6,) (``qfrc_inverse``, ``qfrc_applied``):
    (f; R^T (n_o - p x f)), the world force and the moment about the trunk's origin in the trunk
    frame, from the floating joint's generalized force ``tau`` = (n_o; f) at the coordinates ``q``."""
    single, (q, tau) = batch(q, tau)
    p, R = _frame(q, reference)
    n = np.einsum("nji,nj->ni", R, tau[:, :3] - np.cross(p, tau[:, 3:]))
    return unbatched(single, np.concatenate([tau[:, 3:], n], 1))[0]


def from_free_joint_wrench(q: npt.ArrayLike, qfrc: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> np.ndarray:
    """The inverse of :func:`free_joint_wrench`: (n_o; f) (ns, 6) or (6,) from MuJoCo's free-joint
    force ``qfrc`` (f; n_b) at the coordinates ``q``."""
    single, (q, qfrc) = batch(q, qfrc)
    p, R = _frame(q, reference)
    f = qfrc[:, :3]
    return unbatched(single, np.concatenate([np.einsum("nij,nj->ni", R, qfrc[:, 3:]) + np.cross(p, f), f], 1))[0]
