"""Excitation a legged robot can run, a stage of the identification (:mod:`identification` lists
them in order): the trunk wobbling while every foot stays where it stands (docs/identification.md,
"Legged robots").

**The motion.** The robot stands on all of its point feet (contact frames,
:mod:`pga_dyn.contacts`) on a flat floor z = 0, gravity along -z. The trunk's six channels
x(t) = (dx, dy, dz, roll, pitch, yaw) about the standing pose are multisines: per channel k

    x_k(t) = e(t) sum_{l=1..L} a_kl sin(2 pi l f t) + b_kl cos(2 pi l f t),

harmonics of the base frequency f = 1 / period (zero mean over a period), times the envelope
e(t) = s(t / T_r) s((T - t) / T_r), s(u) = 6 u^5 - 15 u^4 + 10 u^3 on [0, 1] (1 beyond), which
rises from 0 to 1 in T_r = RAMP seconds with its first and second derivatives zero at both ends:
the trajectory starts and ends at rest in the standing pose, with x, xd and xdd continuous. Each
channel's raw coefficients are scaled so that its largest |x_k| on the samples is its amplitude.

The trunk's pose is p = p_s + (dx, dy, dz), R = R_z(yaw) R_y(pitch) R_x(roll) R_s ((p_s, R_s) the
standing pose); its world angular velocity and acceleration are

    omega = E(x) rd,   alpha = E(x) rdd + Ed(x, xd) rd,   E = [R_z R_y e_x, R_z e_y, e_z],

rd = (roll, pitch, yaw)'. The feet P_c stay where they stand; the joints follow by inverse
kinematics of the legs relative to the trunk: with the floating coordinates at zero the trunk is
at its pose T_0 at q0, and there the feet must be at P0_c(t) = R_0 R^T (P_c - p) + p_0 (the feet
seen from the trunk). Newton on the joint coordinates q_j, J_j dq_j = -(P0(q_j) - P0_c), J_j the
joint columns of the feet's Jacobians (:func:`pga_dyn.contacts.contact_terms`), from the
standing angles. Differentiating P0_c with d = P_c - p:

    J_j qd_j = R_0 r',   r' = -R^T (omega x d + v),
    J_j qdd_j = R_0 r'' - (dJ_j/dt) qd_j,   r'' = R^T (omega x (omega x d + v) - alpha x d + omega x v - a),

(dJ_j/dt) qd_j by a central difference of J_j along qd_j (the joint coordinates are angles, so
qd_j is their rate). The floating coordinates are those of the trunk's pose and twist
(:mod:`pga_dyn.floating`). The feet's velocities J_c qd and accelerations then vanish (tests).

**The forces.** The generalized forces of the model F = Y(q, qd, qdd) pi are met by the joint
torques and the feet's forces, F = S^T tau + sum_c J_c^T f_c; the base rows fix the forces up to
the internal ones between the feet. On a flat floor with every foot at z = 0 the base rows split:
the normal forces meet the vertical force and the two tilting moments, the tangential ones the
horizontal force and the yaw moment. Per sample the normal forces are the least-norm ones
(min sum_c f_n,c^2) and the tangential ones minimise the sum of squared friction ratios
sum_c |f_t,c|^2 / f_n,c^2 (a weighted least norm: the loaded feet take the tangential load); then
tau follows from the joint rows (:func:`contact_forces`).

**The limits** checked at every sample (:func:`violations`): each foot's normal force above
``min_normal`` (default MIN_NORMAL_SHARE of its share of the weight), its friction ratio
|f_t| / f_n at most mu (1 - margin); each joint inside its position limits, its speed and torque
within the ``velocity`` and ``effort`` of the robot file (where it gives them). A trajectory that
breaks one is scaled down (all amplitudes by SCALE_STEP at a time, down to MIN_SCALE); past that,
or when the standing pose itself breaks one, PgaDynError names the sample, the foot or joint.

**The optimisation** of the coefficients minimises log cond of the column-scaled stacked
regressor of sensing case A (all rows, base parameters) at ``points`` instants, plus a penalty
on the limits broken there; a (1+1) evolution strategy (derivative-free: one trial per
iteration, the step grown by 1.5 on success and shrunk by 1.5^(-1/4) on failure, the 1/5 rule),
within ``iterations`` and a ``time_budget`` in seconds. Cases B (the six base rows) and C (the
rows projected onto the nullspace of the feet's Jacobians, on the base parameters that stance
identifies) are reported, not optimised.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.contacts import ContactFrames, contact_frames, contact_terms
from pga_dyn.display import number, text_table
from pga_dyn.errors import PgaDynError
from pga_dyn.floating import base_coordinates, quaternion_product, spatial_acceleration, spatial_twist
from pga_dyn.pga import rotation_quaternion
from pga_dyn.progress import report

from .data import Trajectory
from .excitation import basis, scaled_condition
from .legged import (
    BASE_ACCELERATION,
    BASE_POSE,
    BASE_TWIST,
    case_base_parameters,
    case_nullspace,
    contact_projectors,
    legged_record,
)
from .model import identification_model, states_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .legged import LeggedRecord

#: The trunk's channels, in the order of ``amplitudes``.
CHANNELS = ("x", "y", "z", "roll", "pitch", "yaw")
#: Default peak of each channel: m for x, y, z; rad for roll, pitch, yaw.
AMPLITUDES = (0.04, 0.04, 0.03, 0.15, 0.15, 0.15)
#: Seconds of the envelope's rise at the start and fall at the end.
RAMP = 1.0
#: The default standing pose bends the legs: the feet at this fraction of the legs' reach below
#: their hips (the reach: how far below its hip a foot is at q0).
HEIGHT = 0.75
#: Default floor of a foot's normal force: this share of the weight over the number of feet.
MIN_NORMAL_SHARE = 0.1
#: A trajectory that breaks a limit is scaled by this factor, down to MIN_SCALE.
SCALE_STEP = 0.8
MIN_SCALE = 0.05
#: Inverse kinematics: the feet placed within IK_TOLERANCE m, in at most IK_ITERATIONS steps.
IK_TOLERANCE = 1e-11
IK_ITERATIONS = 30
#: Largest height difference (m) between the feet of a given standing pose (a flat floor).
FLAT_TOLERANCE = 1e-3
#: The standing joint angles are kept this share of each joint's range inside its limits.
POSE_MARGIN = 0.05
#: log cond charged per unit of relative excess over a limit at the optimisation instants.
PENALTY = 10.0
#: Singular values of a column-scaled regressor below this share of the largest count as zero.
RANK_TOLERANCE = 1e-9
#: The name under which :func:`standing_excitation` reports its iterations to :mod:`pga_dyn.progress`.
STEP = "optimising the standing excitation"


@dataclass(frozen=True, eq=False)
class StandingPose:
    """A floating robot standing on its feet: ``joints`` (n_j,) the joint coordinates (the robot's
    order after the floating joint's), the trunk frame's ``position`` (3,) and unit ``quaternion``
    (4,) (x, y, z, w) in the world, ``feet`` (nc, 3) the contact frames' origins on the floor z = 0,
    ``reference`` (4, 4) the trunk's pose T_0 at q0 (where the floating coordinates are zero)."""

    joints: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    feet: np.ndarray
    reference: np.ndarray


def _check_robot(robot: Robot) -> None:
    where = robot.source or robot.name
    if not robot.floating_base:
        raise PgaDynError(
            f"{where}: a standing excitation needs a floating base (load the robot with floating_base=True)"
        )
    if robot.constrained:
        raise PgaDynError(
            f"{where}: a standing excitation is made for legs without closed loops or couplings (not yet for "
            f"{len(robot.loop_joints)} loop joints, {len(robot.couplings)} couplings)"
        )
    g = np.asarray(robot.gravity, dtype=float)
    if not (abs(g[0]) < 1e-12 and abs(g[1]) < 1e-12 and g[2] < 0):
        raise PgaDynError(f"{where}: a standing excitation needs gravity along -z (the floor z = 0), got {g.tolist()}")


def _joint_vector(robot: Robot, joints) -> np.ndarray:
    """(n_j,) joint coordinates from an array or {joint name: value} (others at q0)."""
    names = list(robot.actuated_names[6:])
    out = np.array(robot.q0[6:], dtype=float)
    if isinstance(joints, dict):
        for key, value in joints.items():
            if key not in names:
                raise PgaDynError(f"joints: '{key}' is not a joint of '{robot.name}' ({names})")
            out[names.index(key)] = float(value)
    else:
        out = np.asarray(joints, dtype=float)
        if out.shape != (len(names),):
            raise PgaDynError(f"joints must have shape ({len(names)},), one per joint {names}, got {out.shape}")
    if not np.all(np.isfinite(out)):
        raise PgaDynError("joints must be finite")
    return out


def joint_limits(robot: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The joints' position limits (n_j, 2) (-inf, inf where the file gives none), speed limits
    (n_j,) and torque limits (n_j,) (inf where the file gives none), from the robot file."""
    spec = {j.name: j for j in robot.tree_joints}
    box, speed, effort = [], [], []
    for name in robot.actuated_names[6:]:
        joint = spec.get(name)
        limits = None if joint is None else joint.limits
        box.append((-np.inf, np.inf) if limits is None else limits)
        speed.append(np.inf if joint is None or joint.velocity is None else joint.velocity)
        effort.append(np.inf if joint is None or joint.effort is None else joint.effort)
    return np.array(box, dtype=float), np.array(speed), np.array(effort)


def feet_at(robot: Robot, frames: ContactFrames, joints: np.ndarray, jacobians: bool = True) -> tuple:
    """With the floating coordinates at zero (the trunk at T_0) and the joint coordinates
    ``joints`` (ns, n_j): the feet's origins (ns, nc, 3) and the joint columns of their Jacobians
    (ns, 3 nc, n_j) (None unless ``jacobians``)."""
    joints = np.atleast_2d(joints)
    Q = np.zeros((len(joints), robot.nq))
    Q[:, 6:] = joints
    P, J, _ = contact_terms(robot, frames, Q, jacobians=jacobians)
    return P, None if J is None else np.ascontiguousarray(J[:, :, 6:])


def leg_inverse_kinematics(
    robot: Robot, frames: ContactFrames, targets: npt.ArrayLike, start: npt.ArrayLike, t: npt.ArrayLike | None = None
) -> np.ndarray:
    """The joint coordinates (ns, n_j) that put the feet at ``targets`` (ns, nc, 3), seen with the
    floating coordinates at zero (module docstring): Newton, J_j dq = -(P0(q) - targets) by the
    pseudo-inverse of J_j, from ``start`` (n_j,) for every sample. PgaDynError naming the sample
    (its time from ``t``) and the foot that stays more than IK_TOLERANCE m from its target."""
    targets = np.asarray(targets, dtype=float)
    ns = targets.shape[0]
    q = np.tile(np.asarray(start, dtype=float), (ns, 1))
    for _ in range(IK_ITERATIONS):
        P, J = feet_at(robot, frames, q)
        error = (P - targets).reshape(ns, -1)
        if np.abs(error).max() <= IK_TOLERANCE:
            return q
        q = q - np.einsum("sij,sj->si", np.linalg.pinv(J), error)
    P, _ = feet_at(robot, frames, q, jacobians=False)
    miss = np.linalg.norm(P - targets, axis=2)
    if miss.max() <= IK_TOLERANCE * np.sqrt(3):
        return q
    s, c = np.unravel_index(int(np.argmax(miss)), miss.shape)
    when = "" if t is None else f" (t = {float(np.asarray(t)[s]):.4g} s)"
    raise PgaDynError(
        f"sample {s}{when}: the foot {frames.names[c]} cannot reach its place on the floor (off by "
        f"{miss[s, c]:.3g} m after {IK_ITERATIONS} Newton steps): lower the amplitudes or change the standing pose"
    )


def _hip_bodies(robot: Robot, frames: ContactFrames) -> list:
    """Per foot the first body on its path from the trunk (body 1): its joint is the leg's hip."""
    out = []
    for body in frames.bodies:
        b = int(body)
        if b == 1:
            raise PgaDynError(f"contact frame on the trunk itself: a foot must be on a leg ({robot.name})")
        while robot.parent[b] != 1:
            b = int(robot.parent[b])
        out.append(b)
    return out


def standing_pose(
    robot: Robot,
    feet: Sequence[str] | ContactFrames,
    joints: npt.ArrayLike | dict | None = None,
    height: float = HEIGHT,
) -> StandingPose:
    """The floating ``robot`` standing on ``feet`` (point contact frames) on the floor z = 0, the
    trunk at its orientation at q0. ``joints``: its joint coordinates (n_j,) or {name: value} (the
    feet must then be level within FLAT_TOLERANCE m). Default: the feet below where they are at q0,
    lowered to ``height`` times the legs' reach below their hips (bent legs: the mean over the
    legs, one floor), found by Newton (:func:`leg_inverse_kinematics`) from q0 held POSE_MARGIN of
    each range inside the joint limits. The joints that move a foot must be fixed by the feet's
    positions (J_j (3 nc, n_j) of full rank on them; joints that move no foot stay at their angle).
    PgaDynError naming a foot or joint at fault."""
    from pga_dyn.kinematics import initial_poses

    _check_robot(robot)
    frames = feet if isinstance(feet, ContactFrames) else contact_frames(robot, list(np.atleast_1d(feet)))
    if np.any(frames.flat):
        raise PgaDynError("a standing excitation takes point feet (contact frames that transmit no moment)")
    poses = initial_poses(robot)
    reference = np.array(poses[1])
    box, _, _ = joint_limits(robot)
    names = robot.actuated_names[6:]
    if joints is not None:
        qj = _joint_vector(robot, joints)
        P = feet_at(robot, frames, qj, jacobians=False)[0][0]
        z = P[:, 2]
        if z.max() - z.min() > FLAT_TOLERANCE:
            high = int(np.argmax(z))
            raise PgaDynError(
                f"joints: the foot {frames.names[high]} stands {z.max() - z.min():.4g} m above the lowest: the feet are "
                f"not on a flat floor (within {FLAT_TOLERANCE:g} m)"
            )
    else:
        if not 0 < height < 1:
            raise PgaDynError(
                f"height: the feet's depth below the hips as a share of the legs' reach, in (0, 1); got {height!r}"
            )
        q0 = np.array(robot.q0[6:], dtype=float)
        P0 = feet_at(robot, frames, q0, jacobians=False)[0][0]
        hips = np.array([poses[b][:3, 3] for b in _hip_bodies(robot, frames)])
        reach = hips[:, 2] - P0[:, 2]
        if np.any(reach <= 0):
            low = int(np.argmin(reach))
            raise PgaDynError(f"the foot {frames.names[low]} is not below its hip at q0: give the standing joints")
        floor = float(np.mean(hips[:, 2] - height * reach))
        targets = np.column_stack([P0[:, :2], np.full(len(frames), floor)])[None]
        span = np.where(np.isfinite(box).all(axis=1), box[:, 1] - box[:, 0], 0.0)
        start = np.clip(q0, box[:, 0] + POSE_MARGIN * span, box[:, 1] - POSE_MARGIN * span)
        qj = leg_inverse_kinematics(robot, frames, targets, start)[0]
        P = feet_at(robot, frames, qj, jacobians=False)[0][0]
    out = np.flatnonzero((qj < box[:, 0]) | (qj > box[:, 1]))
    if out.size:
        j = int(out[0])
        raise PgaDynError(
            f"the standing pose puts the joint {names[j]} at {qj[j]:.4g}, outside its limits "
            f"[{box[j, 0]:.4g}, {box[j, 1]:.4g}]: give the standing joints"
        )
    J = feet_at(robot, frames, qj)[1][0]
    moving = np.flatnonzero(np.abs(J).max(axis=0) > 0)
    rank = np.linalg.matrix_rank(J[:, moving])
    if rank < J.shape[0]:
        raise PgaDynError(
            f"at the standing pose the legs cannot move their feet in every direction (rank {rank} of "
            f"{J.shape[0]}: a leg stretched, or fewer than three joints per foot): give other standing joints"
        )
    if rank < moving.size:
        raise PgaDynError(
            f"the legs have more joints ({moving.size}) than the feet's positions fix ({rank}): the joints "
            f"{[names[j] for j in moving]} are not determined by the trunk's motion"
        )
    floor = float(np.mean(P[:, 2]))
    lift = np.array([0.0, 0.0, -floor])
    quaternion = rotation_quaternion(reference[:3, :3])[[1, 2, 3, 0]]  # (x, y, z, w)
    feet_world = P + lift
    feet_world[:, 2] = 0.0
    return StandingPose(qj, reference[:3, 3] + lift, quaternion, feet_world, reference)


def envelope(t: npt.ArrayLike, duration: float, ramp: float = RAMP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """e(t), de/dt, d2e/dt2 (ns,) at times ``t`` (ns,): e = s(t / T_r) s((T - t) / T_r), T = ``duration``,
    T_r = ``ramp``, s(u) = 6 u^5 - 15 u^4 + 10 u^3 clipped to [0, 1] (module docstring)."""
    t = np.asarray(t, dtype=float)
    u1, u2 = np.clip(t / ramp, 0.0, 1.0), np.clip((duration - t) / ramp, 0.0, 1.0)

    def s(u):
        return u**3 * (10 - 15 * u + 6 * u**2), 30 * u**2 * (1 - u) ** 2, 60 * u * (1 - u) * (1 - 2 * u)

    s1, d1, dd1 = s(u1)
    s2, d2, dd2 = s(u2)
    return s1 * s2, (d1 * s2 - s1 * d2) / ramp, (dd1 * s2 - 2 * d1 * d2 + s1 * dd2) / ramp**2


@dataclass(frozen=True, eq=False)
class Multisine:
    """The trunk's channels x_k(t) = e(t) sum_l a[k, l-1] sin(2 pi l f t) + b[k, l-1] cos(2 pi l f t)
    (k over :data:`CHANNELS`; ``a``, ``b`` (6, L)), e the :func:`envelope` over [0, ``duration``]
    with ramps of ``ramp`` s, f = ``frequency`` Hz."""

    frequency: float
    a: np.ndarray
    b: np.ndarray
    duration: float
    ramp: float

    def evaluate(self, t: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x, xd, xdd (ns, 6) at times ``t`` (ns,)."""
        B, Bd, Bdd = basis(t, self.frequency, self.a.shape[1])
        c = np.concatenate([self.a, self.b], axis=1).T  # (2 L, 6)
        m, md, mdd = B @ c, Bd @ c, Bdd @ c
        e, ed, edd = (x[:, None] for x in envelope(t, self.duration, self.ramp))
        return e * m, ed * m + e * md, edd * m + 2 * ed * md + e * mdd

    def scaled(self, factor: float) -> Multisine:
        """The channels times ``factor``."""
        return Multisine(self.frequency, factor * self.a, factor * self.b, self.duration, self.ramp)


def fitted_multisine(
    x: np.ndarray, amplitudes: np.ndarray, frequency: float, duration: float, ramp: float, grid: np.ndarray
) -> Multisine:
    """The :class:`Multisine` of raw coefficients ``x`` (6, 2 L), each channel scaled so that its
    largest |x_k| at the times ``grid`` is ``amplitudes[k]`` (a zero amplitude: the channel at rest)."""
    L = x.shape[1] // 2
    raw = Multisine(frequency, x[:, :L], x[:, L:], duration, ramp).evaluate(grid)[0]
    peak = np.abs(raw).max(axis=0)
    scale = np.divide(amplitudes, peak, out=np.zeros(6), where=peak > 0)
    return Multisine(frequency, x[:, :L] * scale[:, None], x[:, L:] * scale[:, None], duration, ramp)


def trunk_motion(pose: StandingPose, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> tuple:
    """The trunk's world position p, unit quaternion (x, y, z, w), the velocity v and acceleration a
    of its origin, its angular velocity omega and acceleration alpha (each (ns, 3), the quaternion
    (ns, 4)) from the channels x, xd, xdd (ns, 6) about the standing ``pose`` (module docstring)."""
    pitch, yaw = x[:, 4], x[:, 5]
    rd, rdd = xd[:, 3:], xdd[:, 3:]
    half = 0.5 * x[:, 3:]
    zeros = np.zeros(len(x))
    qx = np.column_stack([np.sin(half[:, 0]), zeros, zeros, np.cos(half[:, 0])])
    qy = np.column_stack([zeros, np.sin(half[:, 1]), zeros, np.cos(half[:, 1])])
    qz = np.column_stack([zeros, zeros, np.sin(half[:, 2]), np.cos(half[:, 2])])
    quat = quaternion_product(qz, quaternion_product(qy, quaternion_product(qx, np.tile(pose.quaternion, (len(x), 1)))))
    cp, sp, cy, sy = np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    ex = np.column_stack([cy * cp, sy * cp, -sp])  # R_z R_y e_x
    ey = np.column_stack([-sy, cy, zeros])  # R_z e_y
    ez = np.tile([0.0, 0.0, 1.0], (len(x), 1))
    py, yy = rd[:, 1:2], rd[:, 2:3]
    dex = np.column_stack([-sy * cp, cy * cp, zeros]) * yy + np.column_stack([-cy * sp, -sy * sp, -cp]) * py
    dey = np.column_stack([-cy, -sy, zeros]) * yy
    omega = ex * rd[:, :1] + ey * rd[:, 1:2] + ez * rd[:, 2:3]
    alpha = ex * rdd[:, :1] + ey * rdd[:, 1:2] + ez * rdd[:, 2:3] + dex * rd[:, :1] + dey * rd[:, 1:2]
    return pose.position + x[:, :3], quat, xd[:, :3], xdd[:, :3], omega, alpha


@dataclass(frozen=True, eq=False)
class StandingMotion:
    """The samples of a standing excitation: times ``t`` (ns,); the trunk frame's world
    ``position`` (ns, 3), ``quaternion`` (ns, 4) (x, y, z, w), the ``linear`` velocity and
    ``linear_acceleration`` of its origin and its ``angular`` velocity and ``angular_acceleration``
    (ns, 3); ``q``, ``qd``, ``qdd`` (ns, nq) all coordinates (the floating joint's first,
    :mod:`pga_dyn.floating`); ``tau`` (ns, n_j) the joint torques and ``forces`` (ns, nc, 3) the
    feet's world forces on the robot of the model (:func:`contact_forces`)."""

    t: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    linear_acceleration: np.ndarray
    angular_acceleration: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    forces: np.ndarray

    def __len__(self) -> int:
        return len(self.t)


def standing_motion(
    robot: Robot, frames: ContactFrames, pose: StandingPose, multisine: Multisine, t: npt.ArrayLike, forces: bool = True
) -> StandingMotion:
    """The :class:`StandingMotion` of the trunk's ``multisine`` about ``pose`` at times ``t``:
    the trunk's pose and rates (:func:`trunk_motion`), the joints by inverse kinematics with their
    rates (module docstring), and (``forces``) the joint torques and feet's forces of the model."""
    t = np.asarray(t, dtype=float)
    x, xd, xdd = multisine.evaluate(t)
    p, quat, v, a, w, alpha = trunk_motion(pose, x, xd, xdd)
    from pga_dyn.floating import rotation_matrices

    R = rotation_matrices(quat)
    R0, p0 = pose.reference[:3, :3], pose.reference[:3, 3]
    d = pose.feet[None] - p[:, None]  # (ns, nc, 3)
    RT = np.swapaxes(R, 1, 2)
    targets = np.einsum("ij,sjk,sck->sci", R0, RT, d) + p0
    u = np.cross(w[:, None], d) + v[:, None]
    r1 = -np.einsum("sjk,sck->scj", RT, u)
    r2 = np.einsum(
        "sjk,sck->scj", RT, np.cross(w[:, None], u) - np.cross(alpha[:, None], d) + np.cross(w, v)[:, None] - a[:, None]
    )
    ns = len(t)
    qj = leg_inverse_kinematics(robot, frames, targets, pose.joints, t)
    _, J = feet_at(robot, frames, qj)
    Jinv = np.linalg.pinv(J)
    qdj = np.einsum("sij,sj->si", Jinv, (r1 @ R0.T).reshape(ns, -1))
    speed = np.linalg.norm(qdj, axis=1)
    h = np.divide(1e-5, speed, out=np.zeros(ns), where=speed > 0)[:, None]
    _, Jp = feet_at(robot, frames, qj + h * qdj)
    _, Jm = feet_at(robot, frames, qj - h * qdj)
    bias = np.einsum("sij,sj->si", Jp - Jm, qdj) / np.where(h > 0, 2 * h, 1.0)
    qddj = np.einsum("sij,sj->si", Jinv, (r2 @ R0.T).reshape(ns, -1) - bias)
    q = np.hstack([base_coordinates(p, quat, pose.reference), qj])
    qd = np.hstack([spatial_twist(p, v, w), qdj])
    qdd = np.hstack([spatial_acceleration(p, v, w, a, alpha), qddj])
    tau, f = contact_forces(robot, frames, q, qd, qdd) if forces else (None, None)
    return StandingMotion(t, p, quat, v, w, a, alpha, q, qd, qdd, tau, f)


def contact_forces(
    robot: Robot, frames: ContactFrames, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Joint torques (ns, n_j) and the feet's world forces (ns, nc, 3) that realise the states
    ``q``, ``qd``, ``qdd`` (ns, nq) of the floating ``robot`` standing on all ``frames`` (point feet
    on a flat floor z = 0): F = Y pi = S^T tau + sum_c J_c^T f_c, the forces minimising
    sum_c (f_n,c^2 + w_c |f_t,c|^2) subject to the base rows (weighted least norm,
    f = H^-1 A^T (A H^-1 A^T)^-1 F_b, A (6, 3 nc) the base rows of J^T): first w_c = 1 (the
    normal forces come out least-norm, the base rows being split on a flat floor), then
    w_c = 1 / f_n,c^2 of that solution (the sum of squared friction ratios). PgaDynError naming
    the sample whose base wrench the feet cannot carry."""
    import pga_dyn

    pi = pga_dyn.inertial_parameters(robot)
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    F = pga_dyn.regressor(robot, q, qd, qdd) @ pi  # (ns, nq)
    _, J, _ = contact_terms(robot, frames, q)
    A = np.swapaxes(J[:, :, :6], 1, 2)  # (ns, 6, 3 nc)
    ns, nc = len(q), len(frames)

    def weighted(hinv):  # hinv (ns, 3 nc): the inverse weights
        M = np.einsum("sik,sk,sjk->sij", A, hinv, A)
        try:
            y = np.linalg.solve(M, F[:, :6, None])[..., 0]
        except np.linalg.LinAlgError:
            y = np.einsum("sij,sj->si", np.linalg.pinv(M), F[:, :6])
        return hinv * np.einsum("sik,si->sk", A, y)

    lam = weighted(np.ones((ns, 3 * nc)))
    normal = np.abs(lam[:, 2::3])
    tiny = 1e-9 * max(1.0, float(np.abs(F[:, :6]).max()))
    hinv = np.ones((ns, nc, 3))
    hinv[:, :, :2] = np.maximum(normal, tiny)[:, :, None] ** 2
    lam = weighted(hinv.reshape(ns, -1))
    miss = np.abs(np.einsum("sik,sk->si", A, lam) - F[:, :6]).max(axis=1)
    bad = np.flatnonzero(miss > 1e-8 * np.maximum(1.0, np.abs(F).max(axis=1)))
    if bad.size:
        s = int(bad[0])
        raise PgaDynError(
            f"sample {s}: the feet {list(frames.names)} cannot carry the trunk's wrench (off by {miss[s]:.3g})"
        )
    tau = F - np.einsum("sri,sr->si", J, lam)
    return tau[:, 6:], lam.reshape(ns, nc, 3)


@dataclass(frozen=True)
class Limits:
    """What a standing excitation must keep: ``friction_coefficient`` mu and ``margin`` (the
    friction ratio at most mu (1 - margin)), ``min_normal`` (N, each foot's normal force), the
    joints' ``position`` (n_j, 2), ``velocity`` and ``effort`` (n_j,) limits (inf: none)."""

    friction_coefficient: float
    margin: float
    min_normal: float
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray

    @property
    def friction_ratio(self) -> float:
        """The largest |f_t| / f_n allowed: mu (1 - margin)."""
        return self.friction_coefficient * (1 - self.margin)


def violations(
    motion: StandingMotion, limits: Limits, feet: Sequence[str], joints: Sequence[str]
) -> tuple[list, float]:
    """(sentences, excess): per foot or joint and kind the worst sample that breaks ``limits``
    along ``motion`` (a sentence naming the sample, its time, the foot or joint, the value and the
    limit; empty when none), and the sum of the relative excesses over the limits (0 when none)."""
    f = motion.forces
    fn = f[:, :, 2]
    ratio = np.linalg.norm(f[:, :, :2], axis=2) / np.maximum(fn, 1e-300)
    ratio = np.where(fn > 0, ratio, np.inf)
    qj, qdj = motion.q[:, 6:], motion.qd[:, 6:]
    checks = [
        ("normal force", "foot", feet, (limits.min_normal - fn) / limits.min_normal, fn, "below", limits.min_normal),
        (
            "friction ratio |f_t|/f_n",
            "foot",
            feet,
            ratio / limits.friction_ratio - 1,
            ratio,
            "above",
            np.full(len(feet), limits.friction_ratio),
        ),
        ("position", "joint", joints, _outside(qj, limits.position), qj, "outside", limits.position),
        ("speed", "joint", joints, np.abs(qdj) / limits.velocity - 1, np.abs(qdj), "above", limits.velocity),
        ("torque", "joint", joints, np.abs(motion.tau) / limits.effort - 1, np.abs(motion.tau), "above", limits.effort),
    ]
    out, excess = [], 0.0
    for kind, what, names, over, value, side, bound in checks:
        over = np.where(np.isfinite(over), over, 1e3)
        for k in np.flatnonzero(over.max(axis=0) > 0):
            s = int(np.argmax(over[:, k]))
            excess += float(min(over[s, k], 1e3))
            b = np.broadcast_to(bound, (len(names),) + np.shape(bound)[1:])[k]
            shown = f"[{b[0]:.4g}, {b[1]:.4g}]" if np.ndim(b) else f"{float(b):.4g}"
            out.append(
                f"sample {s} (t = {motion.t[s]:.4g} s): {kind} of the {what} {names[k]} {value[s, k]:.4g}, {side} {shown}"
            )
    return out, excess


def _outside(x: np.ndarray, box: np.ndarray) -> np.ndarray:
    """The relative distance (ns, n) of x outside the box (n, 2) (negative inside)."""
    span = np.where(np.isfinite(box).all(axis=1), box[:, 1] - box[:, 0], 1.0)
    with np.errstate(invalid="ignore"):
        return np.maximum(box[:, 0] - x, x - box[:, 1]) / span


def case_rows(robot: Robot, frames: ContactFrames, models: dict, motion: StandingMotion) -> dict:
    """The stacked regressors of sensing cases A, B and C along ``motion`` (all feet in contact):
    {case: W (rows, p)}, ``models`` {case: its :class:`~.model.IdentificationModel`} (A and B on
    DRNG's base parameters, C on the base parameters that stance identifies)."""
    names = tuple(robot.actuated_names)
    traj = Trajectory(names, motion.t, motion.q, motion.qd, motion.qdd, None, "standing excitation", "given")
    states = states_of(robot, traj)
    out = {}
    WA = models["A"].regressor(states)
    out["A"] = WA.reshape(-1, WA.shape[2])
    out["B"] = np.ascontiguousarray(WA[:, :6]).reshape(-1, WA.shape[2])
    if "C" in models:
        _, J, _ = contact_terms(robot, frames, states.q)
        P = contact_projectors(frames, J, np.ones((len(motion), len(frames)), dtype=bool))
        WC = np.matmul(P, models["C"].regressor(states))
        out["C"] = WC.reshape(-1, WC.shape[2])
    return out


@dataclass(frozen=True, eq=False)
class StandingExcitation:
    """A standing excitation: ``motion`` (:class:`StandingMotion`, every sample), ``frames`` the feet,
    ``pose`` the :class:`StandingPose`, ``multisine`` the trunk's channels (after ``scale``),
    ``limits`` (:class:`Limits`, met at every sample), ``scale`` the factor the amplitudes were
    scaled by to meet them (1: not scaled) and ``scaled_by`` the sentence of the limit that made it
    (None), ``cond`` and ``cond_start`` {case: condition number of the column-scaled stacked
    regressor} of the result and of the random start, ``rank`` {case: (its rank at RANK_TOLERANCE,
    its number of base parameters)}, ``iterations`` of the optimiser and
    ``seconds`` it took, ``robot``."""

    robot: Robot
    frames: ContactFrames
    pose: StandingPose
    multisine: Multisine
    motion: StandingMotion
    limits: Limits
    scale: float
    scaled_by: str | None
    cond: dict
    cond_start: dict
    rank: dict
    iterations: int
    seconds: float

    def columns(self) -> dict:
        """{column name: values (ns,)} of the legged log (docs/identification.md, "Legged robots"):
        t, base_x..base_qw, base_vx..base_wz, base_ax..base_alphaz, q_/qd_/qdd_/tau_NAME per joint,
        f_FOOT_x/y/z and contact_FOOT (1) per foot."""
        m = self.motion
        out = {"t": m.t}
        pose = np.hstack([m.position, m.quaternion])
        twist = np.hstack([m.linear, m.angular])
        acc = np.hstack([m.linear_acceleration, m.angular_acceleration])
        for names, values in ((BASE_POSE, pose), (BASE_TWIST, twist), (BASE_ACCELERATION, acc)):
            out.update(zip(names, values.T))
        joints = self.robot.actuated_names[6:]
        for prefix, values in (("q", m.q[:, 6:]), ("qd", m.qd[:, 6:]), ("qdd", m.qdd[:, 6:]), ("tau", m.tau)):
            out.update((f"{prefix}_{name}", values[:, j]) for j, name in enumerate(joints))
        for c, foot in enumerate(self.frames.names):
            out.update((f"f_{foot}_{axis}", m.forces[:, c, k]) for k, axis in enumerate("xyz"))
            out[f"contact_{foot}"] = np.ones(len(m))
        return out

    def write(self, path: os.PathLike | str) -> None:
        """Write the reference a controller tracks as a legged log (:meth:`columns`): CSV
        (``.csv``, every float with the digits that read back the same number) or NPZ (``.npz``,
        one array per column); :func:`identification.legged.read_legged` reads it back."""
        import csv

        path = os.fspath(path)
        columns = self.columns()
        ext = os.path.splitext(path)[1].lower()
        if ext == ".npz":
            with open(path, "wb") as handle:
                np.savez(handle, **columns)
            return
        if ext != ".csv":
            raise PgaDynError(f"{path}: a standing excitation is written as a .csv or .npz file")
        table = np.column_stack(list(columns.values()))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows([[repr(float(x)) for x in row] for row in table])

    def record(self) -> LeggedRecord:
        """The reference as a :class:`~.legged.LeggedRecord` (the model's torques and forces as
        measurements: what an ideal robot tracking it would log)."""
        m = self.motion
        return legged_record(
            self.robot,
            m.t,
            m.position,
            m.quaternion,
            m.q[:, 6:],
            list(self.frames.names),
            linear=m.linear,
            angular=m.angular,
            linear_acceleration=m.linear_acceleration,
            angular_acceleration=m.angular_acceleration,
            qd=m.qd[:, 6:],
            qdd=m.qdd[:, 6:],
            tau=m.tau,
            forces=m.forces,
            contact=np.ones((len(m), len(self.frames))),
            source="standing excitation",
        )

    def report(self, file: os.PathLike | str | None = None) -> dict:
        """A JSON-ready dict: robot, feet, ``file`` (where it was written), samples, duration (s),
        rate (Hz), period (s), harmonics, the amplitudes of the channels (m, rad) and the scale,
        the standing pose (trunk height, joints), the condition numbers per case (and of the random
        start), iterations and seconds, and the limits with the largest share of each used (of a
        joint's position: of the room between its standing angle and the limit it moves towards)."""
        m, lim = self.motion, self.limits
        rate = 1 / float(m.t[1] - m.t[0])
        x = self.multisine.evaluate(m.t)[0]
        fn = m.forces[:, :, 2]
        ratio = np.linalg.norm(m.forces[:, :, :2], axis=2) / fn
        joints = list(self.robot.actuated_names[6:])

        def used(values, bound):
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.abs(values).max(axis=0) / bound
            return {n: float(s) for n, s in zip(joints, share) if np.isfinite(s)}

        box, stand = lim.position, self.pose.joints
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.maximum(
                (m.q[:, 6:] - stand).max(axis=0) / (box[:, 1] - stand),
                (stand - m.q[:, 6:]).max(axis=0) / (stand - box[:, 0]),
            )
        return {
            "robot": self.robot.name,
            "feet": list(self.frames.names),
            "file": None if file is None else os.fspath(file),
            "samples": len(m),
            "duration": float(m.t[-1] - m.t[0]),
            "rate": rate,
            "period": float(1 / self.multisine.frequency),
            "harmonics": int(self.multisine.a.shape[1]),
            "amplitudes": dict(zip(CHANNELS, np.abs(x).max(axis=0).tolist())),
            "scale": self.scale,
            "scaled_by": self.scaled_by,
            "standing": {
                "trunk_height": float(self.pose.position[2]),
                "joints": dict(zip(joints, self.pose.joints.tolist())),
            },
            "condition_number": dict(self.cond),
            "condition_number_start": dict(self.cond_start),
            "rank": dict(self.rank),
            "iterations": self.iterations,
            "seconds": self.seconds,
            "limits": {
                "friction_coefficient": lim.friction_coefficient,
                "margin": lim.margin,
                "friction_ratio_limit": lim.friction_ratio,
                "friction_ratio_max": float(ratio.max()),
                "min_normal": lim.min_normal,
                "normal_min": float(fn.min()),
                "normal_max": float(fn.max()),
                "position_used": {n: float(r) for n, r in zip(joints, room) if np.isfinite(r)},
                "speed_used": used(m.qd[:, 6:], lim.velocity),
                "torque_used": used(m.tau, lim.effort),
            },
        }

    def report_text(self, file: os.PathLike | str | None = None) -> list:
        """The lines of :meth:`report` (what ``pga-dyn excite ROBOT --contacts ...`` prints)."""
        r = self.report(file)
        lim = r["limits"]
        where = "" if file is None else f"{file}: "
        amp = r["amplitudes"]
        cond, start = r["condition_number"], r["condition_number_start"]
        lines = [
            f"robot:            {r['robot']} standing on {', '.join(r['feet'])} (point feet, floor z = 0)",
            f"trajectory:       {where}{r['samples']} samples, {r['duration']:g} s at {r['rate']:g} Hz; trunk "
            f"multisines, period {r['period']:g} s, {r['harmonics']} harmonics, {RAMP:g} s ramps",
            "amplitudes:       "
            + ", ".join(
                f"{k} {1000 * v:.3g} mm" if k in "xyz" else f"{k} {np.degrees(v):.3g} deg" for k, v in amp.items()
            )
            + ("" if r["scale"] == 1 else f" (scaled by {r['scale']:.3g}: {r['scaled_by']})"),
            f"standing:         trunk at {r['standing']['trunk_height']:.4g} m",
            "condition number: "
            + ", ".join(
                f"case {k} {number(v)} (start {number(start[k])})"
                + ("" if r["rank"][k][0] == r["rank"][k][1] else f" rank {r['rank'][k][0]} of {r['rank'][k][1]}")
                for k, v in cond.items()
            )
            + f"; optimised on case A, {r['iterations']} iterations, {r['seconds']:.2g} s",
            f"friction:         |f_t|/f_n <= {lim['friction_ratio_max']:.3g} (limit mu (1 - margin) = "
            f"{lim['friction_coefficient']:g} x (1 - {lim['margin']:g}) = {lim['friction_ratio_limit']:.3g})",
            f"normal forces:    {lim['normal_min']:.4g} to {lim['normal_max']:.4g} N (floor {lim['min_normal']:.4g} N)",
        ]
        joints = list(r["standing"]["joints"])
        rows = [
            (
                n,
                number(r["standing"]["joints"][n]),
                *(
                    f"{100 * lim[key][n]:.3g} %" if n in lim[key] else "-"
                    for key in ("position_used", "speed_used", "torque_used")
                ),
            )
            for n in joints
        ]
        return (
            lines
            + ["", "Joint limits (share used at the worst sample, of the position: of the room from standing; all met)"]
            + text_table(("joint", "standing", "position", "speed", "torque"), rows)
        )


def scaled_rank(W: np.ndarray) -> int:
    """The rank of W (rows, p) with its columns scaled to unit norm: its singular values above
    RANK_TOLERANCE times the largest."""
    norms = np.linalg.norm(W, axis=0)
    s = np.linalg.svd(W / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return int(np.sum(s > RANK_TOLERANCE * s[0]))


def case_models(robot: Robot, frames: ContactFrames) -> dict:
    """{case: :class:`~.model.IdentificationModel`} for A and B (DRNG's base parameters: all rows,
    and the base rows with contact forces, identify them in stance) and C (the base parameters that
    the projected rows identify with every foot down, :func:`~.legged.case_nullspace`)."""
    model = identification_model(robot)
    stance = case_nullspace(robot, frames, "C", [tuple(frames.names)])
    return {"A": model, "B": model, "C": identification_model(robot, base=case_base_parameters(stance, robot))}


def _positive(name: str, value, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
        raise PgaDynError(f"{name} must be a positive number, got {value!r}")
    if upper is not None and value >= upper:
        raise PgaDynError(f"{name} must be below {upper:g}, got {value!r}")
    return float(value)


@one_blas_thread
def standing_excitation(
    robot: Robot,
    feet: Sequence[str],
    duration: float = 10.0,
    rate: float = 200.0,
    period: float = 5.0,
    harmonics: int = 4,
    amplitudes: npt.ArrayLike | dict | None = None,
    joints: npt.ArrayLike | dict | None = None,
    height: float = HEIGHT,
    seed: int | None = 0,
    iterations: int = 100,
    time_budget: float = 10.0,
    points: int = 40,
    friction_coefficient: float = 0.6,
    margin: float = 0.2,
    min_normal: float | None = None,
) -> StandingExcitation:
    """A standing excitation of the floating ``robot`` on all of ``feet`` (point contact frames),
    ``duration`` s at ``rate`` Hz: the trunk's six channels as multisines of ``harmonics``
    harmonics of 1 / ``period`` Hz with RAMP s ramps, of peaks ``amplitudes`` (6,) (m, m, m, rad,
    rad, rad; or {channel: peak} over :data:`CHANNELS`; default :data:`AMPLITUDES`) about the
    :func:`standing_pose` (``joints``, ``height``), the feet pinned and the joints by inverse
    kinematics (module docstring). From a random start (``seed``) the coefficients are optimised
    for the condition number of case A's column-scaled regressor at ``points`` instants, at most
    ``iterations`` trials within ``time_budget`` s; the result is checked at every sample against
    the friction cone (``friction_coefficient`` mu, ``margin``), the normal force floor
    ``min_normal`` (N; default MIN_NORMAL_SHARE of the weight per foot) and the joint limits of the
    robot file, and scaled down until it meets them. PgaDynError naming the argument, or the
    sample and the foot or joint that breaks a limit even at MIN_SCALE."""
    from pga_dyn.sampling import count

    start_clock = time.perf_counter()
    _check_robot(robot)
    frames = contact_frames(robot, list(feet))
    duration, rate, period = (_positive(n, v) for n, v in (("duration", duration), ("rate", rate), ("period", period)))
    harmonics, iterations, points = (
        count("harmonics", harmonics),
        count("iterations", iterations),
        count("points", points),
    )
    time_budget = _positive("time_budget", time_budget)
    mu = _positive("friction_coefficient", friction_coefficient)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise PgaDynError(f"margin must be in [0, 1), got {margin!r}")
    if duration <= 2 * RAMP:
        raise PgaDynError(f"duration must be above {2 * RAMP:g} s (the ramps at both ends), got {duration!r}")
    ns = int(round(duration * rate)) + 1
    t = np.arange(ns) / rate
    if isinstance(amplitudes, dict):
        unknown = set(amplitudes) - set(CHANNELS)
        if unknown:
            raise PgaDynError(f"amplitudes: {sorted(unknown)} are not channels {list(CHANNELS)}")
        amp = np.array([amplitudes.get(k, 0.0) for k in CHANNELS], dtype=float)
    else:
        amp = np.array(AMPLITUDES if amplitudes is None else amplitudes, dtype=float)
    if amp.shape != (6,) or not np.all(np.isfinite(amp)) or np.any(amp < 0) or not amp.any():
        raise PgaDynError(f"amplitudes must be 6 peaks >= 0, not all zero, for {list(CHANNELS)}, got {amplitudes!r}")
    weight = sum(robot.inertial(i).mass for i in range(1, robot.n + 1)) * float(np.linalg.norm(robot.gravity))
    floor_force = MIN_NORMAL_SHARE * weight / len(frames) if min_normal is None else _positive("min_normal", min_normal)
    box, speed, effort = joint_limits(robot)
    limits = Limits(mu, float(margin), floor_force, box, speed, effort)
    pose = standing_pose(robot, frames, joints, height)
    names, feet_names = list(robot.actuated_names[6:]), list(frames.names)
    T = float(t[-1])
    frequency = 1 / period
    rest = Multisine(frequency, np.zeros((6, harmonics)), np.zeros((6, harmonics)), T, RAMP)
    broken, _ = violations(standing_motion(robot, frames, pose, rest, t[:1]), limits, feet_names, names)
    if broken:
        raise PgaDynError(f"the standing pose itself breaks a limit: {broken[0].split(': ', 1)[1]}")
    models = case_models(robot, frames)
    t_opt = np.linspace(0.0, T, points)

    def cost(x: np.ndarray) -> tuple[float, Multisine]:
        sine = fitted_multisine(x, amp, frequency, T, RAMP, t)
        try:
            motion = standing_motion(robot, frames, pose, sine, t_opt)
        except PgaDynError:
            return np.inf, sine
        _, excess = violations(motion, limits, feet_names, names)
        W = case_rows(robot, frames, {"A": models["A"]}, motion)["A"]
        return float(np.log(scaled_condition(W)) + PENALTY * excess), sine

    rng = np.random.default_rng(seed)
    weights = np.tile(1.0 / np.arange(1, harmonics + 1), 2)
    x = rng.standard_normal((6, 2 * harmonics)) * weights
    best, sine = cost(x)
    start_sine = sine
    sigma, done = 0.3, 0
    while done < iterations and time.perf_counter() - start_clock < time_budget:
        trial = x + sigma * rng.standard_normal(x.shape) * weights
        value, trial_sine = cost(trial)
        done += 1
        report(STEP, done, iterations)
        if value < best:
            x, best, sine, sigma = trial, value, trial_sine, sigma * 1.5
        else:
            sigma *= 1.5 ** (-0.25)
    if done < iterations:
        report(STEP, iterations, iterations)
    scale, scaled_by, first = 1.0, None, None
    while True:
        motion = standing_motion(robot, frames, pose, sine.scaled(scale), t)
        broken, _ = violations(motion, limits, feet_names, names)
        if not broken:
            break
        first = first or broken[0]
        if scale * SCALE_STEP < MIN_SCALE:
            raise PgaDynError(
                f"{robot.name}: the standing excitation breaks a limit even with its amplitudes scaled by {scale:.3g}: "
                f"{broken[0]}; lower the amplitudes or relax the limits"
            )
        scale *= SCALE_STEP
    if scale < 1:
        scaled_by = first
    start_motion = standing_motion(robot, frames, pose, start_sine, t, forces=False)
    cond_start = {k: scaled_condition(W) for k, W in case_rows(robot, frames, models, start_motion).items()}
    rows = case_rows(robot, frames, models, motion)
    cond = {k: scaled_condition(W) for k, W in rows.items()}
    rank = {k: (scaled_rank(W), int(W.shape[1])) for k, W in rows.items()}
    return StandingExcitation(
        robot,
        frames,
        pose,
        sine.scaled(scale),
        motion,
        limits,
        scale,
        scaled_by,
        cond,
        cond_start,
        rank,
        done,
        time.perf_counter() - start_clock,
    )
