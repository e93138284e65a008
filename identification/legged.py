"""Legged robots, a stage of the identification (:mod:`identification` lists them in order): a
floating base with contacts, its records, the rows each way of sensing gives, which parameters
they identify per contact mode (certified), the estimate and its held-out check
(docs/identification.md, "Legged robots").

A record (:class:`LeggedRecord`) holds the motion of all coordinates of a floating robot (the
floating joint's from the trunk's logged pose and twist, :mod:`pga_dyn.floating`), the joint
torques tau when measured, and per contact frame c (a foot, :mod:`pga_dyn.contacts`) the world
wrench w_c = (f_c; m_c) at its origin and whether it is in contact. The equations of motion of
the floating robot are

    Y(q, qd, qdd) phi = S^T tau + sum_c J_c(q)^T w_c,

Y the regressor of all coordinates (the first six rows the base's: the world moment about the
origin and the force on the trunk, docs/conventions.md), S^T tau the joint torques with zero base
rows. The sensing cases (:data:`CASES`) take different rows of it:

* **A** joint torques and contact forces: all rows, right-hand side S^T tau + sum_c J_c^T w_c;
* **B** contact forces and base motion only: the six base rows, Y_b phi = sum_c (p_c x f_c + m_c;
  f_c) (no joint torques, so no joint friction or rotor inertia);
* **C** joint torques only, the contact set known: each sample's rows projected onto the nullspace
  of its stacked contact Jacobians, P = I - J^+ J (P J^T = 0): P Y phi = P S^T tau;
* **D** flight phases: the samples without contact, all rows, Y phi = S^T tau (the base rows
  are zero);
* **E** a suspended or clamped trunk is the fixed-base pipeline (load the robot without its
  floating base): not a case of this module.

Which parameters a case identifies depends on the contact modes the record holds: in a mode the
feet in contact do not move, J_c qd = 0 and J_c qdd + dJ_c/dt qd = 0, which restricts the states.
:func:`case_nullspace` stacks the case's rows at random states of each mode present (sampled with
those constraints, :func:`mode_states`) and reads the nullspace at the largest singular gap,
certified against DRNG's proven nullspace of the floating robot (all rows, every state): where
they span the same space, the base parameters are DRNG's (proven); where the case sees less, its
own (certified by the sampled rank), and the report names what is lost (:func:`identifiability`).

Legs with closed loops (a knee driven through a four-bar linkage) are the same equations in the
actuated coordinates q_a: Y = G^T Y_tree with G = dq/dq_a (:class:`pga_dyn.States`), the contact
terms G^T J_c^T w_c and the Jacobians J_c G (:func:`actuated_terms`; G = I without loops), the
records' states assembled along them (:func:`~.model.states_of`), the random states of a mode
assembled and contact-consistent in q_a (:func:`mode_states`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.contacts import ContactFrames, contact_frames, contact_terms
from pga_dyn.errors import PgaDynError
from pga_dyn.floating import (
    base_coordinates,
    continuous_quaternions,
    quaternion_conjugate,
    quaternion_product,
    spatial_acceleration,
    spatial_twist,
    unit_quaternions,
)

from .data import Trajectory, read_columns
from .diagnostics import EXPLAINED, TRANSFER, noise_floor
from .estimation import estimate
from .model import identification_model, states_of
from .signals import AGREE_LAG, bandwidth, differentiate, filter_window, is_uniform, savgol, velocity_delay

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy.typing as npt

    from drng.regrouping import BaseParameters
    from drng.result import NullspaceResult
    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .estimation import Estimate, FullEstimate
    from .model import IdentificationModel

#: The sensing cases and their equations (module docstring).
CASES = {
    "A": "joint torques and contact forces: all rows, Y phi = S^T tau + sum_c J_c^T w_c",
    "B": "contact forces and base motion: the six base rows, Y_b phi = sum_c (p_c x f_c + m_c; f_c)",
    "C": "joint torques, contact set known: rows projected onto null(J_c), P Y phi = P S^T tau",
    "D": "flight phases: the samples without contact, all rows, Y phi = S^T tau",
}
#: The columns of the trunk's pose, world twist and world accelerations in a log (item order of
#: :func:`legged_record`'s arrays).
BASE_POSE = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
BASE_TWIST = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
BASE_ACCELERATION = ("base_ax", "base_ay", "base_az", "base_alphax", "base_alphay", "base_alphaz")
#: An IMU at the trunk frame's origin, in the trunk frame: the gyro's angular velocity (used when
#: ``base_w*`` are absent) and the accelerometer's specific force f = R^T (a - g) (used when
#: ``base_a*`` and ``base_v*`` are absent: a logged velocity's derivative is preferred, as an
#: accelerometer's bias b biases the total mass by b / g, 0.5 % for 0.05 m/s^2).
IMU = ("imu_gx", "imu_gy", "imu_gz", "imu_ax", "imu_ay", "imu_az")
#: A foot without a contact flag is in contact when its force exceeds this share of the robot's
#: weight (the masses of its file).
CONTACT_SHARE = 0.02
#: Random states per contact mode for the identifiability of a case.
MODE_SAMPLES = 60


@dataclass(frozen=True, eq=False)
class LeggedRecord:
    """A record of a floating robot with contacts: ``motion`` the :class:`~.data.Trajectory` of
    all its coordinates (``motion.tau``: the joint torques, zero on the six base coordinates, or
    None when not measured), ``frames`` its :class:`pga_dyn.contacts.ContactFrames`, ``wrenches``
    (ns, nc, 6) the world wrenches (f; m) at the frames' origins (None: not measured) and
    ``contact`` (ns, nc) bool, whether each frame is in contact; ``notes``: how it was read;
    ``transitions``: the samples around a contact change (a touchdown's impact, a lift-off) where
    derived accelerations do not hold (0 when they were given): the filter's half window, at least
    :data:`IMPACT_SETTLE`; :meth:`steady` leaves them out; ``smoothing``: the window (samples) of
    the Savitzky-Golay smoother that passed tau and the wrenches through the filter that derived
    the accelerations, so that both sides of the equations see the same filter (0: not smoothed),
    ``raw_tau`` and ``raw_wrenches`` their values as logged (for the noise floor)."""

    motion: Trajectory
    frames: ContactFrames
    wrenches: np.ndarray | None
    contact: np.ndarray
    notes: tuple = ()
    transitions: int = 0
    smoothing: int = 0
    raw_tau: np.ndarray | None = None
    raw_wrenches: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.motion)

    @property
    def source(self) -> str:
        return self.motion.source

    def part(self, start: int, stop: int, source: str | None = None) -> LeggedRecord:
        """The samples ``start`` to ``stop`` (stop excluded) as a record of their own."""
        return LeggedRecord(
            self.motion.part(start, stop, source),
            self.frames,
            None if self.wrenches is None else self.wrenches[start:stop],
            self.contact[start:stop],
            self.notes,
            self.transitions,
            self.smoothing,
            None if self.raw_tau is None else self.raw_tau[start:stop],
            None if self.raw_wrenches is None else self.raw_wrenches[start:stop],
        )

    def as_logged(self) -> LeggedRecord:
        """The record with tau and the wrenches as logged (before the smoother, when one passed
        them: :attr:`smoothing`)."""
        if not self.smoothing:
            return self
        motion = dataclasses.replace(self.motion, tau=self.raw_tau)
        return dataclasses.replace(self, motion=motion, wrenches=self.raw_wrenches, smoothing=0)

    @property
    def noise_gain(self) -> float:
        """The noise gain ||c|| of the smoother c that passed tau and the wrenches (1 when none):
        white noise of deviation sigma comes out of it with sigma ||c||."""
        if not self.smoothing:
            return 1.0
        from .signals import savgol_matrix

        step = (self.motion.t[-1] - self.motion.t[0]) / (len(self) - 1)
        return float(np.linalg.norm(savgol_matrix(self.smoothing, 0, step)[self.smoothing // 2]))

    def steady(self) -> LeggedRecord:
        """The samples farther than :attr:`transitions` + 1 from every contact change (all of them
        when the accelerations were given), their number left out in the source; the record it
        returns has ``transitions`` 0 (steady already)."""
        if not self.transitions:
            return self
        changes = np.flatnonzero(np.any(self.contact[1:] != self.contact[:-1], axis=1)) + 1
        near = np.zeros(len(self), dtype=bool)
        for k in changes:
            near[max(k - self.transitions - 1, 0) : k + self.transitions + 1] = True
        if not near.any():
            return self
        kept = self.select(
            ~near,
            f"{self.source} ({int(near.sum())} samples within {self.transitions + 1} of a contact change left out: "
            "the derived accelerations there are the filter's)",
        )
        return dataclasses.replace(kept, transitions=0)  # steady: its own changes are the gaps'

    def select(self, keep: np.ndarray, source: str | None = None) -> LeggedRecord:
        """The samples where ``keep`` (ns,) bool is True (not necessarily contiguous: nothing that
        needs continuity is done on them)."""
        m = self.motion
        motion = dataclasses.replace(
            m,
            t=m.t[keep],
            q=m.q[keep],
            qd=m.qd[keep],
            qdd=m.qdd[keep],
            tau=None if m.tau is None else m.tau[keep],
            source=m.source if source is None else source,
            breaks=(),
            passive={},
        )
        return LeggedRecord(
            motion,
            self.frames,
            None if self.wrenches is None else self.wrenches[keep],
            self.contact[keep],
            self.notes,
            self.transitions,
            self.smoothing,
            None if self.raw_tau is None else self.raw_tau[keep],
            None if self.raw_wrenches is None else self.raw_wrenches[keep],
        )

    def modes(self) -> dict:
        """{the frames in contact (a tuple of names): the number of samples in that mode}."""
        patterns, counts = np.unique(self.contact, axis=0, return_counts=True)
        return {
            tuple(n for n, c in zip(self.frames.names, row) if c): int(k)
            for row, k in sorted(zip(patterns, counts), key=lambda x: -x[1])
        }


def _samples(source: str, name: str, value, shape: tuple) -> np.ndarray:
    x = np.asarray(value, dtype=float)
    if x.shape != shape:
        raise PgaDynError(f"{source}: {name} must have shape {shape}, got {x.shape}")
    if not np.all(np.isfinite(x)):
        s = int(np.flatnonzero(~np.isfinite(x).reshape(len(x), -1).all(axis=1))[0])
        raise PgaDynError(f"{source}: {name} is not finite at sample {s}")
    return np.ascontiguousarray(x)


def _world_rates(t, quaternion, cutoff, source):
    """World angular velocity and acceleration (ns, 3) of unit quaternions (x, y, z, w) sampled
    at uniform times: omega = 2 vec(dq/dt q*), alpha = 2 vec(d2q/dt2 q*) (the product dq/dt dq*/dt
    is a scalar), the quaternions smoothed and differentiated (:func:`~.signals.differentiate`)."""
    qs, qd, qdd, _, how = differentiate(t, continuous_quaternions(quaternion), cutoff, source)
    conj = quaternion_conjugate(qs)
    norm2 = np.sum(qs * qs, axis=1)[:, None]
    return 2 * quaternion_product(qd, conj)[:, :3] / norm2, 2 * quaternion_product(qdd, conj)[:, :3] / norm2, how


#: The time (s) after or before a contact change within which derived accelerations are left out
#: (with the filter's half window when longer, :meth:`LeggedRecord.steady`): a touchdown's
#: transient (the contact's compliance, the leg's ringing, the controller's answer) lasts tens of
#: milliseconds, and no derivative of sampled velocities follows it. On MuJoCo logs of a Go2's trot
#: at 1 kHz, leaving out 10 ms gave a total mass of 11.6 kg and 30 ms 16.085 kg (the file's).
IMPACT_SETTLE = 0.03
#: Logged velocities that lag their positions' derivative by at least this share of a sample are
#: aligned before they are differentiated (:func:`.signals.velocity_delay`; a backward difference
#: lags by half a sample, which a central derivative would pass on to the accelerations).
ALIGN_SHARE = 0.25


def _half_window(t: np.ndarray, x: np.ndarray, cutoff: float | None) -> int:
    """Half the window (samples) of the filter :func:`.signals.differentiate` uses on ``x`` (ns, n)
    at ``cutoff`` Hz (None: its choice from the spectrum, :func:`.signals.bandwidth`)."""
    rate = (len(t) - 1) / (t[-1] - t[0])
    return filter_window(bandwidth(x, rate)[0] if cutoff is None else cutoff, rate) // 2


def _aligned(t: np.ndarray, position: np.ndarray, velocity: np.ndarray, cutoff, what: str) -> tuple:
    """``velocity`` (ns, n) advanced by its delay behind the derivative of ``position`` (linear
    interpolation, the last samples held) when the delay is at least :data:`ALIGN_SHARE` of a
    sample, and a sentence saying so (or "")."""
    step = (t[-1] - t[0]) / (len(t) - 1)
    delay = velocity_delay(t, position, velocity, cutoff)
    if abs(delay) < ALIGN_SHARE * step or abs(delay) > AGREE_LAG * step * 1.5:
        return velocity, ""
    moved = np.column_stack([np.interp(t + delay, t, c) for c in velocity.T])
    return moved, f"{what} advanced by {delay / step:.2g} sample to the positions' derivative before differentiating"


def _aligned_velocities(t, p, quat, v, w, cutoff) -> tuple:
    """The trunk's logged world velocities ``v`` and ``w`` (ns, 3), each aligned with the
    derivative of the pose (:func:`_aligned`: ``w`` through the quaternion's rate, dq/dt = (w, 0)
    q / 2), and what was done."""
    q = continuous_quaternions(quat)
    rate = 0.5 * quaternion_product(np.hstack([w, np.zeros((len(w), 1))]), q)
    v, how_v = _aligned(t, p, v, cutoff, "the trunk's linear velocity")
    aligned_rate, how_w = _aligned(t, q, rate, cutoff, "the trunk's angular velocity")
    if how_w:
        w = 2 * quaternion_product(aligned_rate, quaternion_conjugate(q))[:, :3]
    return v, w, "; ".join(x for x in (how_v, how_w) if x)


def legged_record(
    robot: Robot,
    t: npt.ArrayLike,
    position: npt.ArrayLike,
    quaternion: npt.ArrayLike,
    q: npt.ArrayLike,
    feet: Sequence[str],
    *,
    linear: npt.ArrayLike | None = None,
    angular: npt.ArrayLike | None = None,
    linear_acceleration: npt.ArrayLike | None = None,
    angular_acceleration: npt.ArrayLike | None = None,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    tau: npt.ArrayLike | None = None,
    forces: npt.ArrayLike | None = None,
    moments: npt.ArrayLike | None = None,
    contact: npt.ArrayLike | None = None,
    flat: bool | Sequence[bool] = False,
    radius: float = 0.0,
    cutoff: float | None = None,
    source: str = "arrays",
    notes: Iterable[str] = (),
) -> LeggedRecord:
    """A :class:`LeggedRecord` of the floating ``robot`` from arrays of ``ns`` samples: times
    ``t``; the trunk frame's ``position`` (ns, 3) and unit ``quaternion`` (ns, 4) (x, y, z, w) in
    the world; its world ``linear`` velocity (of the frame's origin) and ``angular`` velocity
    (ns, 3), derived from the pose when not given; their world accelerations, derived from the
    velocities when not given; the actuated joint coordinates ``q`` (ns, n_j) (n_j = n_a - 6, in the
    robot's order after the floating joint's; n_a = nq for a robot without loops), ``qd``, ``qdd`` (derived when not given), joint torques
    ``tau`` (ns, n_j) or None; per contact frame of ``feet`` (links of the robot) the world
    ``forces`` (ns, nc, 3) on the robot at the frame's origin and the ``moments`` (ns, nc, 3) of
    the contact forces about it (a sphere foot's contact point below the origin, a flat foot's
    torque), or None; ``flat``: which feet are flat (their orientation held in contact, 6
    constraints; default point feet, 3); ``radius``: sphere feet's radius, their contact point
    that far below the origin (:func:`pga_dyn.contacts.contact_frames`; the projections of case C
    and the contact modes' constraints hold it still); ``contact`` (ns, nc) flags (default: the force above
    :data:`CONTACT_SHARE` of the robot's weight). Derivatives as in
    :func:`~.data.trajectory` (``cutoff`` Hz, None: from the spectrum), each group (trunk
    position, orientation, velocities, joints) on its own. PgaDynError naming ``source`` and the
    array at fault."""
    if not robot.floating_base:
        raise PgaDynError(
            f"{robot.source or robot.name}: a legged record needs a floating base (load the robot with "
            "floating_base=True; a clamped trunk is identified as a fixed-base robot)"
        )
    frames = contact_frames(robot, list(feet), flat=flat, radius=radius)
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise PgaDynError(f"{source}: t must be at least two finite, strictly increasing times")
    ns, nj, nc = t.size, len(robot.actuated_names) - 6, len(frames)
    p = _samples(source, "the trunk's position", position, (ns, 3))
    quat = unit_quaternions(_samples(source, "the trunk's quaternion", quaternion, (ns, 4)), f"{source}: base_q*")
    qj = _samples(source, "q", q, (ns, nj))
    given = {
        name: None if value is None else _samples(source, name, value, shape)
        for name, value, shape in (
            ("linear", linear, (ns, 3)),
            ("angular", angular, (ns, 3)),
            ("linear_acceleration", linear_acceleration, (ns, 3)),
            ("angular_acceleration", angular_acceleration, (ns, 3)),
            ("qd", qd, (ns, nj)),
            ("qdd", qdd, (ns, nj)),
            ("tau", tau, (ns, nj)),
            ("forces", forces, (ns, nc, 3)),
            ("moments", moments, (ns, nc, 3)),
        )
    }
    needed = [
        name
        for name in ("linear", "angular", "linear_acceleration", "angular_acceleration", "qdd")
        if given[name] is None
    ]
    if needed and not is_uniform(t):
        raise PgaDynError(f"{source}: {needed} are derived only from uniformly sampled times: resample the log first")
    steps, windows = [], []
    v, w = given["linear"], given["angular"]
    a, alpha = given["linear_acceleration"], given["angular_acceleration"]
    if v is None or w is None:
        windows.append(2 * _half_window(t, p, cutoff) + 1)
        _, dp, ddp, _, how = differentiate(t, p, cutoff, source)
        w_d, alpha_d, how_w = _world_rates(t, quat, cutoff, source)
        v, a = (v, a) if v is not None else (dp, ddp if a is None else a)
        w, alpha = (w, alpha) if w is not None else (w_d, alpha_d if alpha is None else alpha)
        steps.append(f"trunk velocities derived from its pose ({how}; orientation: {how_w})")
    if a is None or alpha is None:
        if given["linear"] is not None and given["angular"] is not None:  # logged: aligned with the pose
            v, w, how = _aligned_velocities(t, p, quat, v, w, cutoff)
            steps += [how] if how else []
        windows.append(2 * _half_window(t, np.hstack([v, w]), cutoff) + 1)
        _, rates, _, _, how = differentiate(t, np.hstack([v, w]), cutoff, source)
        a = rates[:, :3] if a is None else a
        alpha = rates[:, 3:] if alpha is None else alpha
        steps.append(f"trunk accelerations derived from its velocities ({how})")
    qdj, qddj = given["qd"], given["qdd"]
    if qddj is None:
        if qdj is not None:
            qdj, how = _aligned(t, qj, qdj, cutoff, "the joints' qd")
            steps += [how] if how else []
        windows.append(2 * _half_window(t, qj, cutoff) + 1)
        qj, qdj, qddj, _, how = differentiate(t, qj, cutoff, source, qdj)
        steps.append(f"joints: {how}")
    elif qdj is None:
        _, qdj, _, _, how = differentiate(t, qj, cutoff, source)
        steps.append(f"joints: qd derived ({how})")
    from pga_dyn.kinematics import initial_poses

    xi = base_coordinates(p, quat, initial_poses(robot)[1])
    names = tuple(robot.actuated_names)
    motion = Trajectory(
        names,
        t,
        np.hstack([xi, qj]),
        np.hstack([spatial_twist(p, v, w), qdj]),
        np.hstack([spatial_acceleration(p, v, w, a, alpha), qddj]),
        None if given["tau"] is None else np.hstack([np.zeros((ns, 6)), given["tau"]]),
        source,
        "; ".join(steps) or "given",
        notes=tuple(notes),
    )
    f, m = given["forces"], given["moments"]
    wrenches = None
    if f is not None:
        wrenches = np.concatenate([f, np.zeros_like(f) if m is None else m], axis=2)
    elif m is not None:
        raise PgaDynError(f"{source}: contact moments without contact forces")
    if contact is not None:
        flags = _samples(source, "contact", contact, (ns, nc))
        if np.any((flags != 0) & (flags != 1)):
            raise PgaDynError(f"{source}: contact flags must be 0 or 1")
        flags = flags.astype(bool)
    elif f is not None:
        weight = sum(robot.inertial(i).mass for i in range(1, robot.n + 1)) * np.linalg.norm(robot.gravity)
        flags = np.linalg.norm(f, axis=2) > CONTACT_SHARE * weight
        notes = (*motion.notes, f"contact where the force exceeds {CONTACT_SHARE:g} of the weight ({weight:.4g} N)")
        motion = dataclasses.replace(motion, notes=notes)
    else:
        raise PgaDynError(f"{source}: neither contact forces nor contact flags for the feet {list(frames.names)}")
    if not windows:
        return LeggedRecord(motion, frames, wrenches, flags, motion.notes)
    # an impact's transient outlasts a short filter: at least IMPACT_SETTLE
    smear = max(max(windows) // 2, int(np.ceil(IMPACT_SETTLE * (ns - 1) / (t[-1] - t[0]))))
    # the forces through the shortest smoother that derived accelerations: both sides of the
    # equations see the same filter (the arms' rule for decimation)
    window, step = min(windows), (t[-1] - t[0]) / (ns - 1)
    raw_tau, raw_wrenches = motion.tau, wrenches
    if raw_tau is not None:
        motion = dataclasses.replace(motion, tau=savgol(raw_tau, window, 0, step))
    if raw_wrenches is not None:
        wrenches = savgol(raw_wrenches.reshape(ns, -1), window, 0, step).reshape(raw_wrenches.shape)
    notes = (
        *motion.notes,
        f"tau and the contact wrenches smoothed by the filter of the derivatives ({window} samples)",
    )
    motion = dataclasses.replace(motion, notes=notes)
    return LeggedRecord(motion, frames, wrenches, flags, notes, smear, window, raw_tau, raw_wrenches)


def read_legged(
    robot: Robot,
    path: os.PathLike | str,
    feet: Sequence[str],
    cutoff: float | None = None,
    flat: bool | Sequence[bool] = False,
    radius: float = 0.0,
) -> LeggedRecord:
    """The :class:`LeggedRecord` in a CSV or NPZ log (one column or array per quantity): ``t``;
    the trunk's pose ``base_x base_y base_z base_qx base_qy base_qz base_qw`` in the world; its
    world twist ``base_vx base_vy base_vz`` (the trunk frame origin's velocity) and ``base_wx
    base_wy base_wz`` (optional: derived from the pose; or from an IMU's gyro ``imu_gx imu_gy
    imu_gz`` in the trunk frame); optionally its world accelerations ``base_ax base_ay base_az
    base_alphax base_alphay base_alphaz`` (else the derivative of the logged velocity; without
    one, an accelerometer at the trunk's origin ``imu_ax imu_ay imu_az``, the specific force in the
    trunk frame: :data:`IMU`); per joint NAME ``q_NAME``
    and optionally ``qd_NAME``, ``qdd_NAME``, ``tau_NAME``; per contact frame FOOT of ``feet``
    ``f_FOOT_x f_FOOT_y f_FOOT_z`` (the world force on the robot at the frame's origin),
    optionally ``m_FOOT_x m_FOOT_y m_FOOT_z`` (the moment of the contact forces about it), and
    ``contact_FOOT`` (1 in contact; from the force when absent); ``flat``, ``radius``: as in
    :func:`legged_record`. A group (three force columns, the joints' tau) is read
    whole or not at all. PgaDynError naming the file and the missing columns."""
    path = os.fspath(path)
    if not robot.floating_base:
        raise PgaDynError(f"{path}: the robot '{robot.name}' has no floating base: read it as a fixed-base log")
    joints = tuple(robot.actuated_names[6:])
    feet = list(feet)
    contact_frames(robot, feet, flat=flat, radius=radius)  # the frames named exist, before the file's columns
    groups = {
        "pose": list(BASE_POSE),
        "linear": list(BASE_TWIST[:3]),
        "angular": list(BASE_TWIST[3:]),
        "linear_acceleration": list(BASE_ACCELERATION[:3]),
        "angular_acceleration": list(BASE_ACCELERATION[3:]),
        "gyro": list(IMU[:3]),
        "accelerometer": list(IMU[3:]),
        "q": [f"q_{n}" for n in joints],
        "qd": [f"qd_{n}" for n in joints],
        "qdd": [f"qdd_{n}" for n in joints],
        "tau": [f"tau_{n}" for n in joints],
        "forces": [f"f_{foot}_{x}" for foot in feet for x in "xyz"],
        "moments": [f"m_{foot}_{x}" for foot in feet for x in "xyz"],
        "contact": [f"contact_{foot}" for foot in feet],
    }
    columns, ignored = read_columns(path, ["t", *(c for group in groups.values() for c in group)])
    arrays = {}
    for group, names in groups.items():
        present = [c for c in names if c in columns]
        if present and len(present) < len(names) or group in ("pose", "q") and not present:
            missing = [c for c in names if c not in columns]
            raise PgaDynError(
                f"{path}: missing columns {missing}" + (f" (the other {group} columns are there)" if present else "")
            )
        if present:
            arrays[group] = np.column_stack([columns[c] for c in names])
    if "t" not in columns:
        raise PgaDynError(f"{path}: missing the time column t")
    nc = len(feet)
    ns = len(columns["t"])
    notes = [f"ignored columns: {ignored}"] if ignored else []
    if "gyro" in arrays or "accelerometer" in arrays:
        from pga_dyn.floating import rotation_matrices

        R = rotation_matrices(unit_quaternions(arrays["pose"][:, 3:], f"{path}: base_q*"))
    if "angular" not in arrays and "gyro" in arrays:
        arrays["angular"] = np.einsum("sij,sj->si", R, arrays["gyro"])
        notes.append("the trunk's angular velocity from the gyro (imu_g*, trunk frame): omega = R omega_imu")
    if "linear_acceleration" not in arrays and "accelerometer" in arrays and "linear" not in arrays:
        arrays["linear_acceleration"] = np.einsum("sij,sj->si", R, arrays["accelerometer"]) + robot.gravity
        notes.append(
            "the trunk origin's acceleration from the accelerometer (imu_a*, trunk frame, at the "
            "trunk's origin): a = R f_imu + g"
        )
    record = legged_record(
        robot,
        columns["t"],
        arrays["pose"][:, :3],
        arrays["pose"][:, 3:],
        arrays["q"],
        feet,
        linear=arrays.get("linear"),
        angular=arrays.get("angular"),
        linear_acceleration=arrays.get("linear_acceleration"),
        angular_acceleration=arrays.get("angular_acceleration"),
        qd=arrays.get("qd"),
        qdd=arrays.get("qdd"),
        tau=arrays.get("tau"),
        forces=None if "forces" not in arrays else arrays["forces"].reshape(ns, nc, 3),
        moments=None if "moments" not in arrays else arrays["moments"].reshape(ns, nc, 3),
        contact=arrays.get("contact"),
        flat=flat,
        radius=radius,
        cutoff=cutoff,
        source=path,
        notes=notes,
    )
    return record


def sensing_rows(
    model: IdentificationModel,
    record: LeggedRecord,
    case: str = "A",
    states: States | None = None,
    regressor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of sensing ``case`` (:data:`CASES`) along ``record``: W (ns, m, p) and the
    right-hand side y (ns, m) with W beta = y (module docstring; m = n_a for A, C and D, 6 for B;
    for D, the samples without contact only). The rows are the actuated coordinates': with closed
    loops the contact terms are mapped through them (:func:`actuated_terms`: G^T J_c^T w, J_c G). ``states`` and ``regressor`` (W of all rows) when
    the caller has them. PgaDynError when the record lacks what the case needs."""
    case = check_case(case)
    tau = record.motion.tau
    if case in "ACD" and tau is None:
        raise PgaDynError(f"{record.source}: case {case} needs joint torques (columns tau_NAME)")
    if case in "AB" and record.wrenches is None:
        raise PgaDynError(f"{record.source}: case {case} needs contact forces (columns f_FOOT_x, ...)")
    if case == "D":
        flight = ~record.contact.any(axis=1)
        if not flight.any():
            raise PgaDynError(f"{record.source}: case D needs flight phases, and every sample has a foot in contact")
        record = record.select(flight)
        tau, states, regressor = record.motion.tau, None, None
    robot = model.robot
    states = states_of(robot, record.motion) if states is None else states
    W = model.regressor(states) if regressor is None else regressor
    y, P = right_hand_side(record, case, states)
    if case == "B":
        return np.ascontiguousarray(W[:, :6]), y
    return (W if P is None else np.matmul(P, W)), y


def right_hand_side(record: LeggedRecord, case: str, states: States) -> tuple[np.ndarray, np.ndarray | None]:
    """The right-hand side y (ns, m) of sensing ``case``'s rows along ``record`` at its ``states``
    (:func:`sensing_rows`; for D the record of its flight phases), and for C the projectors P
    (ns, n_a, n_a) (None for the other cases)."""
    tau = record.motion.tau
    if case == "D":
        return tau, None
    _, J, tau_c = contact_terms(states.robot, record.frames, states.q, record.wrenches, jacobians=case == "C")
    tau_c, J = actuated_terms(states, tau_c, J)
    if case == "A":
        return tau + tau_c, None
    if case == "B":
        return tau_c[:, :6], None
    P = contact_projectors(record.frames, J, record.contact)
    return np.matmul(P, tau[:, :, None])[:, :, 0], P


def contact_projectors(frames: ContactFrames, J: np.ndarray, contact: np.ndarray) -> np.ndarray:
    """P (ns, m, m) = I - J_s^+ J_s, the orthogonal projector onto the nullspace of each sample's
    Jacobian rows ``J`` (ns, rows, m) (m = nq, or n_a for J_c G with loops) of the frames in ``contact`` (ns, nc) (P J_s^T = 0; the
    identity without contact), one pseudo-inverse per contact mode's batch."""
    ns, _, nq = J.shape
    per_frame = np.where(frames.flat, 6, 3)
    row_frame = np.repeat(np.arange(len(frames)), per_frame)
    P = np.empty((ns, nq, nq))
    patterns, inverse = np.unique(contact, axis=0, return_inverse=True)
    for k, pattern in enumerate(patterns):
        samples = np.flatnonzero(inverse.reshape(-1) == k)
        rows = np.flatnonzero(pattern[row_frame])
        Js = J[samples][:, rows]
        P[samples] = np.eye(nq) - (np.linalg.pinv(Js) @ Js if rows.size else 0.0)
    return P


def actuated_terms(
    states: States, tau_c: np.ndarray, J: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The contact terms of :func:`pga_dyn.contacts.contact_terms`, given in the tree coordinates,
    in the actuated coordinates of ``states`` (:class:`pga_dyn.States`, G = dq/dq_a (ns, nq, n_a)):
    the generalized forces G^T tau_c (ns, n_a) of tau_c = J_c^T w (ns, nq), since a wrench's power
    tau_c . qd = (G^T tau_c) . qd_a, and the Jacobians J_c G (ns, rows, n_a) of ``J`` (ns, rows, nq)
    (None: not mapped), since the frames' velocities are J_c qd = J_c G qd_a (eq. 52). A robot
    without loops or couplings has G = I: both are returned as given."""
    if not states.robot.constrained:
        return tau_c, J
    G = states.G
    return np.einsum("skj,sk->sj", G, tau_c), None if J is None else np.matmul(J, G)


def default_case(record: LeggedRecord) -> str:
    """The sensing case a record supports with the most rows: A with joint torques and contact
    forces, B with contact forces alone, C with joint torques alone (the contact flags known);
    PgaDynError when it has neither."""
    if record.motion.tau is not None:
        return "A" if record.wrenches is not None else "C"
    if record.wrenches is not None:
        return "B"
    raise PgaDynError(
        f"{record.source}: neither joint torques (tau_NAME) nor contact forces (f_FOOT_*): nothing to identify from"
    )


def check_case(case: str) -> str:
    """``case`` as one of :data:`CASES` (case-insensitive), or a PgaDynError naming them."""
    key = str(case).upper()
    if key not in CASES:
        raise PgaDynError(
            f"sensing case '{case}': one of {', '.join(CASES)} ({'; '.join(f'{k}: {v}' for k, v in CASES.items())})"
        )
    return key


def mode_states(robot: Robot, frames: ContactFrames, mode: Iterable[str], n: int, seed: int = 0) -> States:
    """``n`` random states (:func:`pga_dyn.sample_states`, closed loops assembled) of the floating
    ``robot`` in the contact ``mode`` (the names of the frames in contact): the actuated velocities
    projected onto the nullspace of the contact Jacobian in the actuated coordinates, J_a = J G
    (G = dq/dq_a, the identity without loops; J_a qd_a = 0), the actuated accelerations such that
    the frames in contact do not accelerate, J_a qdd_a = -(J c + (dJ/dt) qd) (the minimum-norm
    correction of random accelerations; c = the tree's accelerations at qdd_a = 0, zero without
    loops). With loops the tree's velocities and accelerations are those of the assembly,
    qd = G qd_a, qdd = G qdd_a + c (:func:`pga_dyn.sampling.projected_states`)."""
    from pga_dyn.conventions import gravity_seed
    from pga_dyn.kinematics import Kinematics
    from pga_dyn.sampling import projected_states, sample_states

    st = sample_states(robot, n, seed=seed)
    mode = set(mode)
    chosen = [k for k, name in enumerate(frames.names) if name in mode]
    if not chosen:
        return flight_states(st)
    rows = np.concatenate(
        [np.arange(3) + 3 * k + 3 * int(np.count_nonzero(frames.flat[:k])) for k in chosen]
        + [np.arange(3, 6) + 3 * k + 3 * int(np.count_nonzero(frames.flat[:k])) for k in chosen if frames.flat[k]]
    )
    _, J, tau0 = contact_terms(robot, frames, st.q)
    _, J = actuated_terms(st, tau0, J)  # (n, rows, n_a)
    G = gravity_seed(robot.gravity)
    loops = robot.constrained
    qd, qdd = st.qd_a.copy(), st.qdd_a.copy()
    spaces = []
    for s in range(len(st)):
        _, sv, vt = np.linalg.svd(J[s, rows])
        spaces.append(vt[int(np.sum(sv > 1e-10 * sv[0])) :].T)
        qd[s] = spaces[s] @ (spaces[s].T @ st.qd_a[s])
    if loops:  # the tree's rates of the assembly, and its accelerations at qdd_a = 0
        drift = projected_states(robot, st.q, st.q_a, qd, np.zeros_like(qdd))
        tree_qd, c = drift.qd, drift.qdd
    else:
        tree_qd, c = qd, np.zeros_like(qdd)
    for s in range(len(st)):
        kin = Kinematics(robot, st.q[s], tree_qd[s], c[s])
        bias = []
        for k in chosen:
            body = frames.bodies[k]
            p = (kin.T[body] @ np.append(frames.points[k], 1.0))[:3]
            if frames.offsets is not None:  # the body's point at the contact held still
                p = p + frames.offsets[k]
            acc, V = kin.A[body] - G, kin.V[body]
            v_p = V[3:] + np.cross(V[:3], p)
            bias.append(acc[3:] + np.cross(acc[:3], p) + np.cross(V[:3], v_p))
        bias += [kin.A[frames.bodies[k]][:3] - G[:3] for k in chosen if frames.flat[k]]
        N = spaces[s]
        qdd[s] = N @ (N.T @ st.qdd_a[s]) - np.linalg.pinv(J[s, rows]) @ np.concatenate(bias)
    if not loops:
        return dataclasses.replace(st, qd=qd, qdd=qdd, qd_a=qd, qdd_a=qdd)
    done = projected_states(robot, st.q, st.q_a, qd, qdd)
    return dataclasses.replace(done, drawn=st.drawn, rejected=st.rejected, max_cond=st.max_cond)


def flight_states(states: States) -> States:
    """``states`` with the floating base's accelerations those of a flight with the robot's own
    parameters pi (:func:`pga_dyn.inertial_parameters`): no external force, so the base rows of
    G^T Y(q, qd, qdd) pi vanish (G = dq/dq_a; the identity without loops). With the tree's
    accelerations qdd = G qdd_a + c (c those at qdd_a = 0, zero without loops) they are linear in
    qdd_a, M_b qdd_a + h_b, M_b (6, n_a) from the tree's regressor at the unit accelerations G e_j;
    the six base accelerations are solved for, the joints' kept."""
    import pga_dyn
    from pga_dyn.sampling import projected_states
    from pga_dyn.tp_regressor import tree_regressor

    robot = states.robot
    pi = pga_dyn.inertial_parameters(robot)
    n, nq, na = len(states), robot.nq, states.qd_a.shape[1]
    loops = robot.constrained
    zero = np.zeros((n, nq))
    c = projected_states(robot, states.q, states.q_a, states.qd_a, np.zeros((n, na))).qdd if loops else zero

    def base_rows(q, qd, qdd, G):
        """(m, 6): the base rows of G^T Y(q, qd, qdd) pi."""
        Y = tree_regressor(robot, *(np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd)))
        return (np.matmul(G.transpose(0, 2, 1)[:, :6], Y) if loops else Y[:, :6]) @ pi

    h = base_rows(states.q, states.qd, c, states.G)  # (n, 6)
    G_rep = np.repeat(states.G, na, axis=0) if loops else None
    units = (
        states.G.transpose(0, 2, 1).reshape(-1, nq) if loops else np.repeat(np.eye(nq)[None], n, axis=0).reshape(-1, nq)
    )
    M = base_rows(np.repeat(states.q, na, axis=0), np.zeros((n * na, nq)), units, G_rep)
    gravity = base_rows(states.q, zero, zero, states.G)
    M = M.reshape(n, na, 6).transpose(0, 2, 1) - gravity[:, :, None]  # (n, 6, n_a): the base rows' mass matrix
    qdd = states.qdd_a.copy()
    rhs = -(h + np.einsum("sij,sj->si", M[:, :, 6:], qdd[:, 6:]))
    qdd[:, :6] = np.linalg.solve(M[:, :, :6], rhs[..., None])[..., 0]
    if not loops:
        return dataclasses.replace(states, qdd=qdd, qdd_a=qdd)
    return dataclasses.replace(states, qdd=np.einsum("skj,sj->sk", states.G, qdd) + c, qdd_a=qdd)


def case_matrix(robot: Robot, frames: ContactFrames, case: str, mode: Iterable[str], states: States) -> np.ndarray:
    """The rows (rows, 10 n) of ``case`` in the spatial parameters (:func:`pga_dyn.inertial_parameters`)
    at ``states`` of contact ``mode``: all rows (A, and D in flight), the base rows (B), the rows
    projected onto the nullspace of the contact Jacobians (C)."""
    Y = states.regressor()
    if case == "B":
        return Y[:, :6].reshape(-1, Y.shape[2])
    if case == "C" and set(mode):
        _, J, tau_c = contact_terms(robot, frames, states.q)
        _, J = actuated_terms(states, tau_c, J)
        contact = np.tile([name in set(mode) for name in frames.names], (len(states), 1))
        Y = np.matmul(contact_projectors(frames, J, contact), Y)
    return Y.reshape(-1, Y.shape[2])


@one_blas_thread
def case_nullspace(
    robot: Robot,
    frames: ContactFrames,
    case: str,
    modes: Iterable[Iterable[str]],
    samples: int = MODE_SAMPLES,
    seed: int = 0,
) -> NullspaceResult:
    """The nullspace of sensing ``case``'s rows stacked over the contact ``modes`` (each the names
    of the frames in contact; a case D record's are its flight phases, ``()``), from ``samples``
    random states of each mode (:func:`mode_states`), at the largest singular gap of the column-
    scaled stack (:func:`drng.numerical.sampled_nullspace`); ``certified`` when the gap is clean
    (:data:`drng.numerical.GAP_MIN`). Its ``certificate`` says whether it spans DRNG's
    nullspace of the floating robot (``equals_drng``; ``drng_status``: proven on a tree, certified
    with closed loops)."""
    import time

    import drng
    from drng.numerical import sampled_nullspace
    from drng.result import NullspaceResult

    case = check_case(case)
    start = time.perf_counter()
    modes = [tuple(m) for m in modes] or [tuple(frames.names)]
    blocks = [
        case_matrix(robot, frames, case, mode, mode_states(robot, frames, mode, samples, seed + k))
        for k, mode in enumerate(modes)
    ]
    null, decision, s, _ = sampled_nullspace(np.concatenate(blocks))
    proven = drng.nullspace(robot)
    reference = proven.nullspace
    inside = np.linalg.norm(null.T @ reference @ reference.T - null.T) if null.size else 0.0
    equals = null.shape[1] == proven.dim and inside < 1e-6 * max(1.0, np.sqrt(null.shape[1]))
    certificate = {
        **decision,
        "case": case,
        "modes": [list(m) for m in modes],
        "samples": samples * len(modes),
        "equals_drng": bool(equals),
        "drng_dim": int(proven.dim),
        "drng_status": proven.status,  # proven on a tree, certified with loops
        "singular_values": s,
    }
    certified = bool(decision["clean"])
    return NullspaceResult(
        robot.name,
        f"sampled rows of case {case}",
        null,
        None,
        (),
        certified,
        certificate,
        False,
        time.perf_counter() - start,
    )


def case_base_parameters(result: NullspaceResult, robot: Robot) -> BaseParameters:
    """The base parameters of a case: DRNG's (proven) when its nullspace equals DRNG's, else those
    of its certified sampled nullspace; PgaDynError when the sampled rank is not certified."""
    import drng

    if result.certificate["equals_drng"]:
        return drng.base_parameters(robot)
    if not result.certified:
        raise PgaDynError(
            f"{robot.source or robot.name}: the rank of case {result.certificate['case']}'s rows has no clean "
            f"singular gap (gap {result.certificate.get('gap', 0):.3g}): its base parameters are not certified"
        )
    return drng.base_parameters(robot, result=result)


def legged_forces(
    robot: Robot,
    frames: ContactFrames,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    contact: npt.ArrayLike,
    pi: npt.ArrayLike | None = None,
    G: npt.ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Actuated joint torques (ns, n_a - 6) and contact wrenches (ns, nc, 6) that realise the tree
    states ``q``, ``qd``, ``qdd`` (ns, nq) of the floating ``robot`` (assembled, with closed loops)
    with parameters ``pi`` (default its own), in the actuated coordinates:
    G^T Y pi = S^T tau + G^T J_c^T w, G = dq/dq_a (ns, nq, n_a) at the states (``G``; default:
    projected at q, :meth:`pga_dyn.loops.system.Constraints.project_all`; the identity without
    loops, n_a = nq). The base rows fix the wrenches of the frames in ``contact`` (ns, nc)
    up to the internal forces between the feet, taken as the least-norm solution (no friction cone:
    simulated measurements for checks and examples, not a controller); the joint rows then give
    tau. PgaDynError when a sample's base rows cannot be met (no contact where the base
    accelerates otherwise than in flight)."""
    import pga_dyn

    pi = pga_dyn.inertial_parameters(robot) if pi is None else np.asarray(pi, dtype=float)
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    contact = np.atleast_2d(np.asarray(contact, dtype=bool))
    if robot.constrained:
        from pga_dyn.kinematics import state_arrays
        from pga_dyn.loops import constraints
        from pga_dyn.tp_regressor import tree_regressor

        q, qd, qdd, _ = state_arrays(robot, q, qd, qdd)
        if G is None:
            na = len(robot.actuated_names)
            G = constraints(robot).project_all(q, np.zeros((len(q), na)), np.zeros((len(q), na)))[2]
        G = np.asarray(G, dtype=float)
        if G.shape != (len(q), robot.nq, len(robot.actuated_names)):
            raise PgaDynError(
                f"legged_forces: G must have shape {(len(q), robot.nq, len(robot.actuated_names))} (samples, nq, n_a), "
                f"got {G.shape}"
            )
        forces = np.einsum("skj,sk->sj", G, tree_regressor(robot, q, qd, qdd) @ pi)  # (ns, n_a)
        _, J, _ = contact_terms(robot, frames, q)
        J = np.matmul(J, G)
    else:
        forces = pga_dyn.regressor(robot, q, qd, qdd) @ pi  # (ns, nq)
        _, J, _ = contact_terms(robot, frames, q)
    per_frame = np.where(frames.flat, 6, 3)
    row_frame = np.repeat(np.arange(len(frames)), per_frame)
    lam = np.zeros((len(q), frames.rows))
    for s in range(len(q)):
        rows = np.flatnonzero(contact[s][row_frame])
        base = J[s][rows][:, :6].T  # (6, k): the base rows of J_c^T
        if rows.size:
            lam[s, rows] = np.linalg.lstsq(base, forces[s, :6], rcond=None)[0]
        miss = np.abs(forces[s, :6] - base @ lam[s, rows]).max() if rows.size else np.abs(forces[s, :6]).max()
        if miss > 1e-8 * max(1.0, np.abs(forces[s]).max()):
            raise PgaDynError(
                f"sample {s}: the contacts {contact[s].nonzero()[0].tolist()} cannot carry the base's "
                f"wrench (off by {miss:.3g})"
            )
    wrenches = np.zeros((len(q), len(frames), 6))
    row = 0
    for c in range(len(frames)):
        wrenches[:, c, : per_frame[c]] = lam[:, row : row + per_frame[c]]
        row += per_frame[c]
    tau = forces - np.einsum("sri,sr->si", J, lam)
    return tau[:, 6:], wrenches


@dataclass(frozen=True, eq=False)
class LeggedEstimate:
    """An estimate of a floating robot's parameters from sensing ``case``'s rows: ``estimate`` the
    least-squares :class:`~.estimation.Estimate` (its ``targets`` the case's right-hand side),
    ``nullspace`` the case's :class:`drng.result.NullspaceResult` over the record's contact modes
    (:func:`case_nullspace`), ``record`` the :class:`LeggedRecord` it fitted."""

    case: str
    estimate: Estimate
    nullspace: NullspaceResult
    record: LeggedRecord

    @property
    def model(self) -> IdentificationModel:
        return self.estimate.model

    @property
    def beta(self) -> np.ndarray:
        return self.estimate.beta

    @property
    def std(self) -> np.ndarray:
        return self.estimate.std

    def mass_identifiable(self) -> bool:
        """Whether the total mass sum_i m_i is a function of the identifiable parameters: its
        selector is orthogonal to the case's nullspace."""
        robot = self.model.robot
        c = np.zeros(10 * robot.n)
        c[9::10] = 1.0  # m is entry 9 of the spatial 10-vector, eq. (97)
        N = self.nullspace.nullspace
        return bool(np.linalg.norm(N.T @ c) <= 1e-8 * np.sqrt(robot.n))

    def total_mass(self) -> tuple[float, float] | None:
        """(the total mass, its standard deviation) from beta, or None when the case does not
        identify it (:meth:`mass_identifiable`): any theta with K theta = beta gives it, theta zero
        but at the leading parameters (K[:, leading] = I)."""
        if not self.mass_identifiable():
            return None
        model = self.model
        selector = np.zeros(model.K.shape[1])
        selector[0 : 10 * model.robot.n : 10] = 1.0  # m is entry 0 of the link-frame 10-vector
        g = selector[model.leading]
        return float(g @ self.beta), float(np.sqrt(g @ self.estimate.covariance @ g))

    def predict(self, record: LeggedRecord, beta: np.ndarray | None = None) -> dict:
        """Along ``record`` (same robot and frames): ``rows`` (ns, m) the case's rows W beta and
        ``measured`` their right-hand side; when the case's base parameters are DRNG's (all rows
        determined by beta): ``tau`` (ns, n_a - 6) the joint torques W beta - G^T J_c^T w (measured
        wrenches) and ``wrench`` (ns, 6) the total contact wrench about the world origin, the base
        rows of W beta. Along the fitted record of case A, from the fit's residuals. ``beta``:
        other values of the base parameters (a full estimate's K theta; default this estimate's)."""
        model = self.model
        if beta is None and record is self.record and self.case == "A":
            measured = self.estimate.targets
            rows = measured - self.estimate.residuals
            out, predicted, states = {"rows": rows, "measured": measured}, rows, None
        else:
            states = states_of(model.robot, record.motion)
            full = model.regressor(states)
            W, y = sensing_rows(model, record, self.case, states, full)
            beta = self.beta if beta is None else np.asarray(beta, dtype=float)
            out = {"rows": W @ beta, "measured": y}
            predicted = full @ beta
        if self.nullspace.certificate["equals_drng"] and self.case != "D":
            out["wrench"] = predicted[:, :6]
            if record.wrenches is not None:
                if states is None and model.robot.constrained:  # the fitted record's tree states
                    states = states_of(model.robot, record.motion)
                q = record.motion.q if states is None else states.q
                _, _, tau_c = contact_terms(model.robot, record.frames, q, record.wrenches, jacobians=False)
                if states is not None:
                    tau_c, _ = actuated_terms(states, tau_c)
                out["tau"] = (predicted - tau_c)[:, 6:]
        return out

    def check(self, record: LeggedRecord, predicted: dict | None = None) -> dict:
        """Held-out figures along ``record``: ``rre`` the relative residual error of the case's
        rows (%) and ``rms`` their residual's RMS, per joint the torque RMS error ``tau_rms`` (N m) when predicted and measured,
        and the RMS error of the total contact force ``force_rms`` (N) with it over the robot's
        weight ``force_share`` when the record has contact forces. ``predicted``: :meth:`predict`'s
        answer on ``record``, when the caller has it."""
        p = self.predict(record) if predicted is None else predicted
        e = p["rows"] - p["measured"]
        out = {
            "rre": float(100 * np.linalg.norm(e) / np.linalg.norm(p["measured"])),
            "rms": float(np.sqrt(np.mean(e**2))),
        }
        if "tau" in p and record.motion.tau is not None:
            out["tau_rms"] = np.sqrt(np.mean((p["tau"] - record.motion.tau[:, 6:]) ** 2, axis=0))
        if "wrench" in p and record.wrenches is not None:
            measured = record.wrenches[:, :, :3].sum(axis=1)
            out["force_rms"] = float(np.sqrt(np.mean(np.sum((p["wrench"][:, 3:] - measured) ** 2, axis=1))))
            robot = self.model.robot
            weight = sum(robot.inertial(i).mass for i in range(1, robot.n + 1)) * np.linalg.norm(robot.gravity)
            out["force_share"] = out["force_rms"] / weight
        return out


#: The verdict fails an estimate whose held-out total contact force (the base rows of all rows,
#: predicted where the case's base parameters are DRNG's) is off by more than this share of the
#: robot's weight (RMS): a case that fits its own rows but not the others' (joint torques alone,
#: standing) is caught here.
FORCE_SHARE = 0.05


def rows_floor(est: LeggedEstimate, record: LeggedRecord, measured: np.ndarray) -> tuple:
    """(the noise floor (m,) of the right-hand side ``measured`` (ns, m) of ``est``'s rows along
    ``record``, or None; why not, or ""): :func:`.diagnostics.noise_floor` of the rows as logged
    (:meth:`LeggedRecord.as_logged`) times the smoother's noise gain
    (:attr:`LeggedRecord.noise_gain`): the floor of the smoothed rows' own differences would be
    the smoother's, not the sensors'."""
    if not record.smoothing:
        floor, _, _, why = noise_floor(dataclasses.replace(record.motion, tau=measured))
        return floor, why
    raw = record.as_logged()
    logged, _ = right_hand_side(raw, est.case, states_of(est.model.robot, raw.motion))
    floor, _, _, why = noise_floor(dataclasses.replace(record.motion, tau=logged))
    return (None, why) if floor is None else (floor * record.noise_gain, "")


def estimate_report(est: LeggedEstimate, test: LeggedRecord | None = None, full: FullEstimate | None = None) -> dict:
    """A JSON-ready dict of a legged estimate: the case and its equations, the record (samples per
    contact mode, how it was read), the identifiability (base parameters, DRNG's or the case's
    certified ones), the estimate (names, beta, std), the total mass, the fit's and the held-out
    ``test``'s relative residual errors and residual RMS (per contact mode the RMS: a flight's
    base rows are zero), the held-out joint torques and contact forces
    (:meth:`LeggedEstimate.check`), a ``full`` estimate's (MAP or consistent) total mass and
    residual RMS on the fit and the test, the noise floor of the case's right-hand side
    (:func:`.diagnostics.noise_floor`), and the ``verdict``: FAILS when the held-out residual's RMS
    is over :data:`.diagnostics.TRANSFER` times the fit's (RMS, not the relative error, which
    depends on the mix of contact modes: a flight's base rows are zero) or the held-out total
    contact force is off by over :data:`FORCE_SHARE` of the weight, MISFIT when the fit's
    residual is over :data:`.diagnostics.EXPLAINED` times the noise floor (the model misses what
    the data hold: a loop ignored, friction left out), OK otherwise; "not checked" without a test
    and no misfit."""
    record, cert = est.record, est.nullspace.certificate
    mass = est.total_mass()
    fitted = est.predict(record)

    def per_mode(rec, p):
        modes = mode_names(rec if est.case != "D" else rec.select(~rec.contact.any(axis=1)))
        out = {}
        for mode in dict.fromkeys(modes):
            keep = modes == mode
            out[str(mode)] = float(np.sqrt(np.mean((p["rows"][keep] - p["measured"][keep]) ** 2)))
        return out

    report = {
        "robot": est.model.robot.name,
        "case": est.case,
        "equations": CASES[est.case],
        "data": {
            "source": record.source,
            "samples": len(record),
            "modes": {"+".join(k) or "flight": v for k, v in record.modes().items()},
            "derivatives": record.motion.derivatives,
            "notes": list(record.notes),
        },
        "identifiability": {
            "base_parameters": est.model.base.num_base_parameters,
            "equals_drng": cert["equals_drng"],
            "drng_status": cert["drng_status"],
            "certified": bool(est.nullspace.certified),
            "modes": cert["modes"],
        },
        "estimate": {
            "method": est.estimate.method,
            "names": list(est.model.names),
            "beta": est.beta.tolist(),
            "std": est.std.tolist(),
            "cond": float(est.estimate.cond),
        },
        "total_mass": None if mass is None else {"value": mass[0], "std": mass[1]},
        "fit": {**est.check(record, fitted), "per_mode": per_mode(record, fitted)},
    }
    fit = report["fit"]["rms"]
    if est.case == "D":
        floor, why = None, "the flight phases are not one contiguous record"
    else:
        floor, why = rows_floor(est, record, fitted["measured"])
    floor_rms = None if floor is None else float(np.sqrt(np.mean(floor**2)))
    report["noise_floor"] = {"rms": floor_rms, "why_not": why}
    reasons, state = [], "OK"
    if test is not None:
        test = test.steady()
        on_test = est.predict(test)
        report["held_out"] = {"source": test.source, **est.check(test, on_test), "per_mode": per_mode(test, on_test)}
        held = report["held_out"]["rms"]
        if held > TRANSFER * fit:
            state = "FAILS"
            reasons.append(
                f"held-out residual RMS {held:.4g} against {fit:.4g} on the fit: more than {TRANSFER:g}x, "
                "the estimate does not transfer"
            )
        else:
            reasons.append(f"held-out residual RMS {held:.4g} against {fit:.4g} on the fit (within {TRANSFER:g}x)")
        share = report["held_out"].get("force_share")
        if share is not None and share > FORCE_SHARE:
            state = "FAILS"
            reasons.append(
                f"the held-out total contact force is predicted {100 * share:.3g} % of the weight off (over "
                f"{100 * FORCE_SHARE:g} %): the rows the case did not fit do not transfer"
            )
    else:
        reasons.append("no held-out data")
    if floor_rms is not None:
        worst = max(report["fit"]["per_mode"].items(), key=lambda item: item[1])[0]
        if fit > EXPLAINED * floor_rms:
            state = "MISFIT" if state == "OK" else state
            reasons.append(
                f"the fit's residual is {fit / floor_rms:.3g}x the noise floor {floor_rms:.4g}: the "
                f"model misses what the data hold (worst mode: {worst})"
            )
        else:
            reasons.append(f"the fit's residual is {fit / floor_rms:.3g}x the noise floor")
    else:
        reasons.append(f"noise floor not measured ({why})")
    report["verdict"] = {
        "state": state if test is not None or state != "OK" else "not checked",
        "reason": "; ".join(reasons),
    }
    if full is not None:
        on_fit = est.check(record, est.predict(record, full.beta))
        report["full"] = {
            "method": full.method,
            "total_mass": float(full.phi[:, 0].sum()),
            "fit_rms": on_fit["rms"],
            "held_out_rms": None if test is None else est.check(test, est.predict(test, full.beta))["rms"],
        }
    for part in ("fit", "held_out"):
        if part in report and "tau_rms" in report[part]:
            report[part]["tau_rms"] = dict(zip(est.model.robot.actuated_names[6:], report[part]["tau_rms"].tolist()))
    return report


def report_lines(report: dict) -> list:
    """The lines of :func:`estimate_report`'s report."""
    from pga_dyn.display import number, text_table

    ident, data = report["identifiability"], report["data"]
    lines = [
        f"verdict:          {report['verdict']['state']}: {report['verdict']['reason']}",
        f"robot:            {report['robot']}, case {report['case']}: {report['equations']}",
        f"data:             {data['source']}: {data['samples']} samples; modes "
        + ", ".join(f"{k} {v}" for k, v in data["modes"].items()),
        f"derivatives:      {data['derivatives']}",
        f"base parameters:  {ident['base_parameters']} "
        + (
            f"(DRNG's, all rows: {ident.get('drng_status', 'proven')})"
            if ident["equals_drng"]
            else "(the case's own over these modes: certified by the sampled rank)"
            if ident["certified"]
            else "(NOT certified)"
        ),
    ]
    mass = report["total_mass"]
    lines.append(
        "total mass:       "
        + (f"{number(mass['value'])} +- {number(mass['std'])} kg" if mass else "not identified by this case and record")
    )
    for part, label in (("fit", "fit"), ("held_out", "held out")):
        if part not in report:
            continue
        r = report[part]
        modes = ", ".join(f"{k} {number(v)}" for k, v in r["per_mode"].items())
        lines.append(
            f"{label + ':':<18}RRE {r['rre']:.3g} %, residual RMS {number(r['rms'])} (per contact mode: {modes})"
            + (
                f"; contact force RMS {number(r['force_rms'])} N = {100 * r['force_share']:.3g} % of the weight"
                if "force_rms" in r
                else ""
            )
        )
        if "tau_rms" in r:
            lines.append(
                f"{'':18}joint torque RMS error: " + ", ".join(f"{k} {number(v)}" for k, v in r["tau_rms"].items())
            )
    if "full" in report:
        f = report["full"]
        lines.append(
            f"{f['method'] + ':':<18}total mass {number(f['total_mass'])} kg, residual RMS {number(f['fit_rms'])} on the fit"
            + ("" if f["held_out_rms"] is None else f", {number(f['held_out_rms'])} held out")
        )
    est = report["estimate"]
    lines += [f"estimate:         {est['method']}, cond {number(est['cond'])}"]
    lines += text_table(
        ["parameter", "value", "std"],
        [(n, number(b), number(s)) for n, b, s in zip(est["names"], est["beta"], est["std"])],
    )
    return lines


def mode_names(record: LeggedRecord) -> np.ndarray:
    """(ns,) the contact mode of each sample, in words: "flight", "stance" (every frame in
    contact) or the frames in contact joined by "+"."""
    names = np.array(record.frames.names, dtype=object)
    return np.array(
        ["flight" if not row.any() else "stance" if row.all() else "+".join(names[row]) for row in record.contact],
        dtype=object,
    )


def split(record: LeggedRecord, share: float = 0.2) -> tuple:
    """(fit, test): the samples before and from t_0 + (1 - ``share``) (t_end - t_0), the latter
    held out; ``share`` 0: (record, None)."""
    if not (isinstance(share, (int, float)) and 0 <= share < 1):
        raise PgaDynError(f"hold-out: the held-out share of the record is in [0, 1), got {share!r}")
    if share == 0:
        return record, None
    t = record.motion.t
    cut = int(np.searchsorted(t, t[0] + (1 - share) * (t[-1] - t[0])))
    return (
        record.part(0, cut, f"{record.source} (first {100 * (1 - share):.3g} %)"),
        record.part(cut, len(record), f"{record.source} (last {100 * share:.3g} % held out)"),
    )


@one_blas_thread
def identify_legged(
    robot: Robot,
    record: LeggedRecord,
    case: str = "A",
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    weighted: bool = True,
    samples: int = MODE_SAMPLES,
) -> LeggedEstimate:
    """The estimate of the floating ``robot``'s base parameters (with joint ``friction`` and
    ``armature`` where joint torques are measured: cases A, C, D) from sensing ``case``'s rows of
    ``record`` (:func:`sensing_rows`), OLS or (``weighted``) WLS (:func:`~.estimation.estimate`),
    on the base parameters the case identifies over the record's contact modes
    (:func:`case_nullspace`, ``samples`` random states per mode; :func:`case_base_parameters`).
    PgaDynError when the record lacks what the case needs or does not excite every parameter."""
    case = check_case(case)
    if case == "B" and (friction or armature):
        raise PgaDynError(f"{record.source}: case B has no joint torques: no joint friction or armature to identify")
    record = record.steady()
    if case == "D":
        flight = ~record.contact.any(axis=1)
        if not flight.any():
            raise PgaDynError(f"{record.source}: case D needs flight phases, and every sample has a foot in contact")
        record = record.select(flight, f"{record.source} (flight phases)")
        modes = [()]
    else:
        modes = list(record.modes())
    result = case_nullspace(robot, record.frames, case, modes, samples)
    model = identification_model(robot, friction, armature, base=case_base_parameters(result, robot))
    states = states_of(robot, record.motion)
    W, y = sensing_rows(model, record, "A" if case == "D" else case, states)
    if case == "D":
        y = record.motion.tau
    est = estimate(
        model,
        record.motion,
        weighted,
        **({"stiction": 0.0} if case == "C" else {}),
        states=states,
        regressor=W,
        targets=y,
    )
    return LeggedEstimate(case, est, result, record)


#: The contact modes :func:`identifiability` answers for: the names of the modes and which of
#: the frames are in contact in each (all, none).
RECORDS = {"stance": ("stance",), "flight": ("flight",), "stance + flight": ("stance", "flight")}


#: The whole robot's inertial quantities, sums over its bodies of one entry of the spatial
#: 10-vector (eq. 97, at q0 in the world frame), in the order :func:`lost_quantities` tries them.
WHOLE_ROBOT = (
    ("m", 9),
    ("hx", 6),
    ("hy", 7),
    ("hz", 8),
    ("Sxx", 0),
    ("Syy", 3),
    ("Szz", 5),
    ("Sxy", 1),
    ("Sxz", 2),
    ("Syz", 4),
)


def lost_quantities(robot: Robot, seen: np.ndarray, reference: np.ndarray) -> tuple[list, int]:
    """Which whole-robot quantities (:data:`WHOLE_ROBOT`: the total mass m, first moment h and
    second moments S of all bodies in the spatial assignment) a case's rows lose: those
    identifiable from all rows (orthogonal to DRNG's nullspace ``reference`` (10 n, d)) that the
    case's nullspace ``seen`` (10 n, d') does not determine, taken in order while each adds a lost
    direction. Returns (their names, the lost directions they leave unexplained)."""
    n = robot.n
    rows = np.eye(10 * n) - seen @ seen.T  # the case's identifiable directions (a projector)
    target = 10 * n - reference.shape[1]
    rank = 10 * n - seen.shape[1]
    names = []
    for name, k in WHOLE_ROBOT:
        c = np.zeros(10 * n)
        c[k::10] = 1.0
        if np.linalg.norm(reference.T @ c) > 1e-8 * np.sqrt(n) or np.linalg.norm(seen.T @ c) <= 1e-8 * np.sqrt(n):
            continue  # not identifiable at all, or seen by the case
        grown = np.linalg.matrix_rank(np.column_stack([rows, c]), tol=1e-8)
        if grown > rank:
            rows, rank = np.column_stack([rows, c]), int(grown)
            names.append(name)
        if rank == target:
            break
    return names, int(target - rank)


def identifiability(
    robot: Robot, frames: ContactFrames, clamped: Robot | None = None, samples: int = MODE_SAMPLES
) -> dict:
    """Which parameters each sensing case identifies from a stance-only, a flight-only and a
    stance-and-flight record (:data:`RECORDS`; stance: every frame of ``frames`` in contact), JSON-
    ready: per case and record the nullspace dimension, the base parameters, whether they are
    DRNG's (all rows, proven) and certified, whether the total mass is identified, and how many
    directions are lost against case A (and which whole-robot quantities they are,
    :func:`lost_quantities`); with ``clamped`` (the same robot file without its floating
    base) case E, a clamped or suspended trunk: the fixed robot's base parameters (DRNG, proven),
    and how many of the floating robot's identifiable directions it cannot see (the trunk's own
    parameters among them)."""
    import drng

    proven = drng.nullspace(robot)
    mass = np.zeros(10 * robot.n)
    mass[9::10] = 1.0
    out = {
        "robot": robot.name,
        "frames": list(frames.names),
        "parameters": 10 * robot.n,
        "drng_dim": int(proven.dim),
        "drng_status": proven.status,
        "cases": {},
    }
    for case in CASES:
        rows = {}
        for record, parts in RECORDS.items():
            modes = [tuple(frames.names) if part == "stance" else () for part in parts]
            if case == "D" and record != "flight":
                continue  # D keeps the flight phases of any record
            result = case_nullspace(robot, frames, case, modes, samples)
            N = result.nullspace
            lost_names, unexplained = (
                lost_quantities(robot, N, proven.nullspace) if N.shape[1] > proven.dim else ([], 0)
            )
            rows[record] = {
                "lost_quantities": lost_names,
                "unexplained": unexplained,
                "nullspace_dimension": int(N.shape[1]),
                "base_parameters": int(10 * robot.n - N.shape[1]),
                "equals_drng": result.certificate["equals_drng"],
                "certified": bool(result.certified),
                "mass_identified": bool(np.linalg.norm(N.T @ mass) <= 1e-8 * np.sqrt(robot.n)),
                "lost": int(N.shape[1] - proven.dim),
            }
        out["cases"][case] = {"equations": CASES[case], "records": rows}
    if clamped is not None:
        fixed = drng.nullspace(clamped)
        if tuple(clamped.body_names) != tuple(robot.body_names[1:]):
            raise PgaDynError(
                f"{clamped.name}: the clamped robot's bodies are not the floating robot's without its trunk"
            )
        embedded = np.zeros((10 * robot.n, fixed.dim + 10))
        embedded[10:, : fixed.dim] = fixed.nullspace
        embedded[:10, fixed.dim :] = np.eye(10)  # the trunk does not move: none of its parameters is seen
        lost = int(np.linalg.matrix_rank(embedded, tol=1e-9)) - proven.dim
        out["cases"]["E"] = {
            "equations": "a clamped or suspended trunk: the fixed-base robot's rows (its trunk does not move)",
            "base_parameters": int(10 * clamped.n - fixed.dim),
            "status": fixed.status,
            "lost": lost,
        }
    return out


def identifiability_text(report: dict) -> list:
    """The lines of :func:`identifiability`'s report."""
    lines = [
        f"robot:           {report['robot']} ({report['parameters']} inertial parameters; all rows, any motion "
        f"(DRNG, {report.get('drng_status', 'proven')}): {report['parameters'] - report['drng_dim']} base parameters)",
        f"contact frames:  {', '.join(report['frames'])}",
    ]
    for case, entry in report["cases"].items():
        lines += ["", f"case {case}: {entry['equations']}"]
        if case == "E":
            lines.append(
                f"  clamped trunk     {entry['base_parameters']:>3} base parameters ({entry['status']}), "
                f"{entry['lost']} directions lost (the trunk's own among them), total mass not identified"
            )
            continue
        for record, row in entry["records"].items():
            lines.append(
                f"  {record:<16}  {row['base_parameters']:>3} base parameters, "
                + ("the same as all rows" if row["equals_drng"] else f"{row['lost']} direction(s) lost")
                + (
                    f" (the whole robot's {', '.join(row['lost_quantities'])}"
                    + (f" and {row['unexplained']} more" if row["unexplained"] else "")
                    + ")"
                    if row["lost_quantities"]
                    else ""
                )
                + f", total mass {'identified' if row['mass_identified'] else 'NOT identified'}"
                + ("" if row["certified"] else " (NOT certified: no clean singular gap)")
            )
    lines += [
        "",
        "stance: every contact frame pinned (J_c qd = 0); flight: no contact, the base accelerating as the model "
        "falls; each answer certified by the sampled rank of the case's rows in those modes",
    ]
    return lines
