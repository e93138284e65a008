"""Contacts of a robot with its surroundings: the frames where they act, their Jacobians and the
generalized forces of their wrenches (docs/identification.md, "Legged robots").

A contact acts at the origin of a *contact frame*, a link of the robot file (a foot: often a link
on a fixed joint, merged into the body that carries it). Its wrench is given in the world frame
at that origin: the force f (3,) and the moment m (3,) about the origin (zero when the force acts
at the origin; a sphere foot's contact point lies a radius below it, whose moment m = (p_contact -
p) x f the log may give). What the contact holds still is its kind: a *point* contact fixes the
origin's position (3 Jacobian rows), a *flat* one also its orientation (6 rows). With p the frame origin in the world, the wrench about the world origin is
(p x f + m; f), and its generalized force on tree coordinate k, whose Jacobian line is
L_k = (d_k; m_k) (eq. 47, :mod:`pga_dyn.kinematics`), is the power of that wrench on the unit
twist L_k:

    tau_c[k] = d_k . (p x f + m) + m_k . f          (J_c^T w, summed over the contacts)

for the coordinates that move the frame's body (its support), zero for the others. The rows of
J_c are the contact point's linear velocity, v_c = sum_k (m_k + d_k x c) qd_k (c the frame's
origin p, or a sphere foot's contact point p + r g / |g| on a floor), and for a flat foot the
angular velocity, omega = sum_k d_k qd_k. For the floating joint F its lines are the six unit
twists, so its generalized force is the wrench itself (moment about the world origin; force).

:func:`contact_terms` is the compiled batch (numba) along a record; :func:`contact_terms_numpy`
its readable twin on :class:`pga_dyn.kinematics.Kinematics`, kept equal by tests (and checked
against Pinocchio's frame Jacobians).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .errors import PgaDynError
from .kinematics import forward, robot_arrays, state_arrays

if TYPE_CHECKING:
    import numpy.typing as npt

    from .model import Robot


@dataclass(frozen=True, eq=False)
class ContactFrames:
    """The contact frames of a robot: ``names`` (nc,) the links, ``bodies`` (nc,) the bodies that
    carry them (1..n), ``points`` (nc, 3) their origins in their bodies' frames and ``flat``
    (nc,) bool: whether a contact also holds the frame's orientation (a flat foot: 6 Jacobian
    rows; a point contact: 3, its position only); ``offsets`` (nc, 3): the contact point's offset
    from the frame's origin in the world frame (a sphere foot of radius r on a floor: r times the
    gravity's direction), whose velocity the Jacobian rows give (None: the origin)."""

    names: tuple
    bodies: np.ndarray
    points: np.ndarray
    flat: np.ndarray
    offsets: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def rows(self) -> int:
        """The number of Jacobian rows of all contacts: 3 per point contact, 6 per flat one."""
        return int(3 * len(self.names) + 3 * np.count_nonzero(self.flat))


def contact_frames(
    robot: Robot, names: npt.ArrayLike, flat: npt.ArrayLike | bool = False, radius: float = 0.0
) -> ContactFrames:
    """The :class:`ContactFrames` of the links ``names`` of ``robot`` (``flat``: one bool for all,
    or one per frame; ``radius``: sphere feet of that radius on a floor normal to the gravity, the
    contact point that far below each origin). PgaDynError naming the robot's file and the link when a name is not a link,
    is repeated or is fixed to the world (a contact there does nothing to the robot's dynamics)."""
    names = tuple(str(n) for n in np.atleast_1d(np.asarray(names, dtype=object)))
    where = robot.source or robot.name
    if not names:
        raise PgaDynError(f"{where}: no contact frames given")
    if len(set(names)) < len(names):
        raise PgaDynError(f"{where}: contact frames given twice: {sorted({n for n in names if names.count(n) > 1})}")
    bodies = np.array([robot.body_index(name) for name in names], dtype=np.int64)
    if np.any(bodies == 0):
        fixed = [n for n, b in zip(names, bodies) if b == 0]
        raise PgaDynError(f"{where}: contact frames {fixed} are fixed to the world: a contact there moves nothing")
    points = np.array([robot.link_pose(name)[:3, 3] for name in names], dtype=float).reshape(-1, 3)
    flat = np.broadcast_to(np.asarray(flat, dtype=bool), (len(names),)).copy()
    if not (isinstance(radius, (int, float)) and np.isfinite(radius) and radius >= 0):
        raise PgaDynError(f"{where}: the feet's radius must be a non-negative number of metres, got {radius!r}")
    down = robot.gravity / max(np.linalg.norm(robot.gravity), 1e-300)
    offsets = np.tile(radius * down, (len(names), 1)) if radius else None
    return ContactFrames(names, bodies, points, flat, offsets)


@njit(cache=True)
def _contact_batch(parent, code, origin, axes, qidx, seed, Q, bodies, points, flat, offsets, W, P, J, tau):
    """For each sample s of Q (ns, nq): the contact frames' origins P[s] (nc, 3) in the world, their
    Jacobian rows J[s] (rows, nq) (linear velocity, then the angular velocity for a flat one) and
    the generalized force tau[s] (nq,) of the world wrenches W[s] (nc, 6) = (f; m) at the origins;
    twin: :func:`contact_terms_numpy`. ``J`` of shape (0, 0, 0): not computed."""
    n = parent.shape[0] - 1
    nq = Q.shape[1]
    T = np.empty((n + 1, 4, 4))
    S = np.empty((nq, 6))
    V = np.empty((n + 1, 6))
    A = np.empty((n + 1, 6))
    zero = np.zeros(nq)
    gravity = seed.copy()  # writable, as the other kernels' seed: one compiled version of forward
    want = J.shape[0] > 0
    for s in range(Q.shape[0]):
        forward(parent, code, origin, axes, qidx, gravity, Q[s], zero, zero, T, S, V, A)
        for k in range(nq):
            tau[s, k] = 0.0
        row = 0
        for c in range(bodies.shape[0]):
            b = bodies[c]
            for r in range(3):
                P[s, c, r] = (
                    T[b, r, 0] * points[c, 0] + T[b, r, 1] * points[c, 1] + T[b, r, 2] * points[c, 2] + T[b, r, 3]
                )
            px, py, pz = P[s, c, 0], P[s, c, 1], P[s, c, 2]
            cx, cy, cz = px + offsets[c, 0], py + offsets[c, 1], pz + offsets[c, 2]  # the contact point
            fx, fy, fz = W[s, c, 0], W[s, c, 1], W[s, c, 2]
            # the wrench about the world origin: (p x f + m; f)
            mx = py * fz - pz * fy + W[s, c, 3]
            my = pz * fx - px * fz + W[s, c, 4]
            mz = px * fy - py * fx + W[s, c, 5]
            i = b
            while i > 0:
                for k in range(qidx[i], qidx[i + 1]):
                    d0, d1, d2, m0, m1, m2 = S[k, 0], S[k, 1], S[k, 2], S[k, 3], S[k, 4], S[k, 5]
                    tau[s, k] += d0 * mx + d1 * my + d2 * mz + m0 * fx + m1 * fy + m2 * fz
                    if want:  # v_c = m + d x c, omega = d
                        J[s, row, k] = m0 + d1 * cz - d2 * cy
                        J[s, row + 1, k] = m1 + d2 * cx - d0 * cz
                        J[s, row + 2, k] = m2 + d0 * cy - d1 * cx
                        if flat[c]:
                            J[s, row + 3, k] = d0
                            J[s, row + 4, k] = d1
                            J[s, row + 5, k] = d2
                i = parent[i]
            row += 6 if flat[c] else 3


def _wrench_array(frames: ContactFrames, wrenches, ns: int) -> np.ndarray:
    W = np.zeros((ns, len(frames), 6)) if wrenches is None else np.asarray(wrenches, dtype=float)
    if W.shape == (ns, len(frames), 3):
        W = np.concatenate([W, np.zeros_like(W)], axis=2)
    if W.shape != (ns, len(frames), 6):
        raise PgaDynError(
            f"wrenches must have shape ({ns}, {len(frames)}, 6) (force; moment) or ({ns}, {len(frames)}, 3) "
            f"(forces) for the frames {list(frames.names)}, got {W.shape}"
        )
    return np.ascontiguousarray(W)


def contact_terms(
    robot: Robot,
    frames: ContactFrames,
    q: npt.ArrayLike,
    wrenches: npt.ArrayLike | None = None,
    jacobians: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Along the configurations ``q`` (ns, nq) of ``robot``: the frames' origins (ns, nc, 3) in the
    world, their Jacobians J_c (ns, rows, nq) (None unless ``jacobians``; rows of
    :attr:`ContactFrames.rows`: each frame's linear velocity rows, then its angular ones for a flat
    foot) and the generalized forces J_c^T w (ns, nq) of the world ``wrenches`` (ns, nc, 6) (force;
    moment about the frame origin) or (ns, nc, 3) (forces; default zero), module docstring."""
    Q = np.atleast_2d(q)
    Q, _, _, _ = state_arrays(robot, Q, Q, Q)
    ns = Q.shape[0]
    W = _wrench_array(frames, wrenches, ns)
    a = robot_arrays(robot)
    P = np.empty((ns, len(frames), 3))
    J = np.zeros((ns, frames.rows, robot.nq)) if jacobians else np.zeros((0, 0, 0))
    tau = np.empty((ns, robot.nq))
    _contact_batch(
        a.parent,
        a.code,
        a.origin,
        a.axes,
        a.q_index,
        a.seed,
        Q,
        frames.bodies,
        frames.points,
        frames.flat,
        np.zeros((len(frames), 3)) if frames.offsets is None else frames.offsets,
        W,
        P,
        J,
        tau,
    )
    return P, (J if jacobians else None), tau


def contact_terms_numpy(
    robot: Robot, frames: ContactFrames, q: npt.ArrayLike, wrenches: npt.ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The readable twin of :func:`contact_terms` at one configuration ``q`` (nq,): origins (nc, 3),
    J_c (rows, nq) from the bodies' Jacobians (:meth:`pga_dyn.kinematics.Kinematics.jacobian`,
    eq. 98) and J_c^T w (nq,)."""
    from .kinematics import Kinematics

    kin = Kinematics(robot, q)
    W = _wrench_array(frames, None if wrenches is None else np.asarray(wrenches, dtype=float)[None], 1)[0]
    P, blocks, tau = [], [], np.zeros(robot.nq)
    for c, body in enumerate(frames.bodies):
        p = kin.T[body] @ np.append(frames.points[c], 1.0)
        p = p[:3]
        body_jacobian = kin.jacobian(int(body))  # (6, nq): twists (omega; v_o)
        linear = body_jacobian[3:] + np.cross(body_jacobian[:3].T, p).T  # v_p = v_o + omega x p
        tau += linear.T @ W[c, :3] + body_jacobian[:3].T @ W[c, 3:]
        if frames.offsets is not None:  # the rows of the contact point c = p + offset
            linear = linear + np.cross(body_jacobian[:3].T, frames.offsets[c]).T
        blocks += [linear, body_jacobian[:3]] if frames.flat[c] else [linear]
        P.append(p)
    return np.array(P), np.concatenate(blocks), tau
