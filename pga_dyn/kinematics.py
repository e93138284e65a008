"""Tree kinematics in the spatial (fixed) frame: body motors, twists, accelerations, Jacobian lines.

All quantities are coordinates on the paper's PGA bases (see docs/conventions.md):

* the pose of body i is the 4x4 homogeneous matrix T_i of its body frame; the motor of
  the paper (eq. 45) is ``pga.motor_from_matrix(T_i)``;
* the Jacobian line of tree coordinate k is the world line L_k = (d; m) about or along which
  the coordinate moves its child (eq. 47): for an R joint the axis line (s; p x s) through
  the joint origin p, for a P joint the ideal line (0; s);
* V_i = sum over the path of L_k qd_k is the spatial twist (omega; v) of body i (eq. 98);
* A_i = dV_i/dt + G, with G = (0; -g) the gravity seed (eq. 70), so that the acceleration
  of a point P of body i is P x A_i + Pd x V_i (eq. 35 with gravity).

The recursion is V_i = V_p + S_i qd_i and A_i = A_p + S_i qdd_i + sum_k [W_k, L_k] qd_k,
where [W, L] = (w x d; w x m + v x d) is the derivative of a line carried by a body moving
with twist W = (w; v): W_k is the twist of the body that carries axis k (the parent for the
first axis of a joint, the intermediate body for the second axis of a U joint, the child for
the three axes of an S joint; F lines are fixed in space).

The kernels are compiled with numba (cache=True) and work on raw arrays, one sample or a
batch of samples at a time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .errors import PgaDynError
from .model import JOINT_CODE, Robot, Table2, check_robot


@njit(cache=True)
def rotation_into(axis, angle, r):
    """Write Rodrigues' rotation about the unit ``axis`` by ``angle`` into ``r[:3, :3]``."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = axis[0], axis[1], axis[2]
    t = 1.0 - c
    r[0, 0] = c + x * x * t
    r[0, 1] = x * y * t - z * s
    r[0, 2] = x * z * t + y * s
    r[1, 0] = y * x * t + z * s
    r[1, 1] = c + y * y * t
    r[1, 2] = y * z * t - x * s
    r[2, 0] = z * x * t - y * s
    r[2, 1] = z * y * t + x * s
    r[2, 2] = c + z * z * t


@njit(cache=True)
def rotation(axis, angle):
    """Rodrigues' rotation matrix about the unit ``axis`` by ``angle``."""
    r = np.empty((3, 3))
    rotation_into(axis, angle, r)
    return r


@njit(cache=True, inline="always")
def mul_rigid(a, b, out):
    """out = a b for 4x4 rigid transforms (bottom rows 0 0 0 1)."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
        out[r, 3] = a[r, 0] * b[0, 3] + a[r, 1] * b[1, 3] + a[r, 2] * b[2, 3] + a[r, 3]
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def so3_exp(r):
    """Rotation matrix exp(r^) of a rotation vector ``r``."""
    angle = np.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    if angle < 1e-14:
        out = np.eye(3)
        out[0, 1], out[0, 2], out[1, 2] = -r[2], r[1], -r[0]
        out[1, 0], out[2, 0], out[2, 1] = r[2], -r[1], r[0]
        return out
    return rotation(r / angle, angle)


@njit(cache=True)
def se3_exp(xi):
    """Homogeneous matrix exp(xi^) of a spatial twist xi = (omega; v) (paper eq. 102)."""
    w = xi[:3]
    v = xi[3:]
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    th = np.sqrt(th2)
    # A = (1 - cos th)/th^2 = 1/2 sinc(th/2)^2, free of cancellation; B = (th - sin th)/th^3 by
    # its series below 1e-2 (the direct form loses digits to cancellation there)
    half = 0.5 * th
    sinc = np.sin(half) / half if half > 1e-8 else 1.0 - half * half / 6.0
    a = 0.5 * sinc * sinc
    if th < 1e-2:
        b = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0
    else:
        b = (th - np.sin(th)) / (th2 * th)
    # p = (1 + A w^ + B w^ w^) v, written out (numba's matrix product needs SciPy's BLAS)
    c0 = w[1] * v[2] - w[2] * v[1]
    c1 = w[2] * v[0] - w[0] * v[2]
    c2 = w[0] * v[1] - w[1] * v[0]
    t = np.eye(4)
    t[:3, :3] = so3_exp(w)
    t[0, 3] = v[0] + a * c0 + b * (w[1] * c2 - w[2] * c1)
    t[1, 3] = v[1] + a * c1 + b * (w[2] * c0 - w[0] * c2)
    t[2, 3] = v[2] + a * c2 + b * (w[0] * c1 - w[1] * c0)
    return t


@njit(cache=True)
def _axis_line(rot, pos, axis, prismatic, line):
    """World line of ``axis`` given in a frame with rotation ``rot[:3, :3]`` and origin ``pos``:
    (s; pos x s) for a rotation axis, the ideal line (0; s) for a translation."""
    for r in range(3):
        line[r] = rot[r, 0] * axis[0] + rot[r, 1] * axis[1] + rot[r, 2] * axis[2]
    if prismatic:
        for r in range(3):
            line[3 + r] = line[r]
            line[r] = 0.0
    else:
        line[3] = pos[1] * line[2] - pos[2] * line[1]
        line[4] = pos[2] * line[0] - pos[0] * line[2]
        line[5] = pos[0] * line[1] - pos[1] * line[0]


@njit(cache=True, inline="always")
def _line_rate(w, line, qd, out):
    """out += [W, L] qd: the rate of change of line L carried by a body with twist W."""
    out[0] += (w[1] * line[2] - w[2] * line[1]) * qd
    out[1] += (w[2] * line[0] - w[0] * line[2]) * qd
    out[2] += (w[0] * line[1] - w[1] * line[0]) * qd
    out[3] += (w[1] * line[5] - w[2] * line[4] + w[4] * line[2] - w[5] * line[1]) * qd
    out[4] += (w[2] * line[3] - w[0] * line[5] + w[5] * line[0] - w[3] * line[2]) * qd
    out[5] += (w[0] * line[4] - w[1] * line[3] + w[3] * line[1] - w[4] * line[0]) * qd


@njit(cache=True)
def forward(parent, code, origin, axes, qidx, grav, q, qd, qdd, T, S, V, A):
    """Tree kinematics of one sample (fills T, S, V, A in place).

    T: (n+1, 4, 4) body poses; S: (nq, 6) world Jacobian line of each coordinate;
    V: (n+1, 6) spatial twists; A: (n+1, 6) spatial accelerations plus the gravity seed
    A_0 = (0; -grav).
    """
    n = parent.shape[0] - 1
    frame = np.empty((4, 4))
    rel = np.eye(4)
    w = np.empty(6)
    unit = np.zeros(3)
    T[0] = 0.0
    for k in range(4):
        T[0, k, k] = 1.0
    V[0] = 0.0
    A[0, :3] = 0.0
    A[0, 3:] = -grav
    for i in range(1, n + 1):
        p = parent[i]
        k0 = qidx[i]
        c = code[i]
        mul_rigid(T[p], origin[i], frame)
        pos = frame[:3, 3]
        V[i] = V[p]
        A[i] = A[p]
        if c == 0:  # R
            rotation_into(axes[i, 0], q[k0], rel)
            mul_rigid(frame, rel, T[i])
            _axis_line(frame, pos, axes[i, 0], False, S[k0])
        elif c == 1:  # P
            for r in range(3):
                rel[r, 3] = axes[i, 0, r] * q[k0]
            mul_rigid(frame, rel, T[i])
            for r in range(3):
                rel[r, 3] = 0.0
            _axis_line(frame, pos, axes[i, 0], True, S[k0])
        elif c == 2:  # U: Rot(a1, q1) Rot(a2, q2)
            rotation_into(axes[i, 0], q[k0], rel)
            _axis_line(frame, pos, axes[i, 0], False, S[k0])
            mul_rigid(frame, rel, T[i])
            _axis_line(T[i], pos, axes[i, 1], False, S[k0 + 1])
            rotation_into(axes[i, 1], q[k0 + 1], rel)
            frame[:, :] = T[i]
            mul_rigid(frame, rel, T[i])
        elif c == 3:  # S: rotation vector; velocity = angular velocity in the child frame
            rel[:3, :3] = so3_exp(q[k0:k0 + 3])
            mul_rigid(frame, rel, T[i])
            for k in range(3):
                unit[:] = 0.0
                unit[k] = 1.0
                _axis_line(T[i], pos, unit, False, S[k0 + k])
        else:  # F: T = exp(xi^) T0, spatial twist coordinates (eqs. 102-104)
            mul_rigid(se3_exp(q[k0:k0 + 6]), frame, T[i])
            for k in range(6):
                S[k0 + k] = 0.0
                S[k0 + k, k] = 1.0
        # twists and accelerations: V_i = V_p + S qd, A_i = A_p + S qdd + sum [W_k, L_k] qd_k
        w[:] = V[p]
        for k in range(k0, qidx[i + 1]):
            for r in range(6):
                V[i, r] += S[k, r] * qd[k]
                A[i, r] += S[k, r] * qdd[k]
            if c <= 2:  # the carrier of axis k is the parent plus the axes before k
                _line_rate(w, S[k], qd[k], A[i])
                for r in range(6):
                    w[r] += S[k, r] * qd[k]
        if c == 3:  # the three axes of an S joint are carried by the child (F lines are fixed)
            for k in range(k0, k0 + 3):
                _line_rate(V[i], S[k], qd[k], A[i])
        rel[:3, :3] = 0.0
        for r in range(3):
            rel[r, r] = 1.0


def robot_arrays(robot: Robot):
    """The arrays the kernels take: parent, joint code, origin, axes, coordinate offsets, gravity."""
    cache = getattr(robot, "_kernel_arrays", None)
    if cache is None:
        code = np.array([-1] + [JOINT_CODE[t] for t in robot.joint_type[1:]], dtype=np.int64)
        cache = (robot.parent, code, robot.origin, robot.axes, robot.q_index, robot.gravity)
        robot._kernel_arrays = cache
    return cache


def float_array(name: str, value) -> np.ndarray:
    """``value`` as a float array, or a PgaDynError naming the argument."""
    try:
        x = np.asarray(value)
        if np.iscomplexobj(x):
            raise PgaDynError(f"{name} must be real, got complex values")
        return np.ascontiguousarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, PgaDynError):
            raise
        raise PgaDynError(f"{name} must be an array of numbers: {exc}") from None


def _state(robot: Robot, name: str, value, batch: bool, names) -> np.ndarray:
    x = float_array(name, value)
    shape = (x.shape[0] if x.ndim == 2 else "samples", len(names)) if batch else (len(names),)
    if x.shape != shape:
        raise PgaDynError(f"{name} must have shape {shape} for robot '{robot.name}' "
                          f"(coordinates {list(names)}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise PgaDynError(f"{name} contains non-finite values")
    return x


def states(robot: Robot, q, qd, qdd, actuated: bool = False):
    """Validate a state (1-D arrays) or a batch of states (2-D, one row a sample) of the tree
    coordinates, or of the actuated coordinates q_a when ``actuated``."""
    check_robot(robot)
    names = robot.actuated_names if actuated else robot.coordinate_names
    q = float_array("q", q)
    batch = q.ndim == 2
    q = _state(robot, "q", q, batch, names)
    qd = _state(robot, "qd", qd, batch, names)
    qdd = _state(robot, "qdd", qdd, batch, names)
    if batch and not (q.shape[0] == qd.shape[0] == qdd.shape[0]):
        raise PgaDynError("q, qd and qdd must hold the same number of samples")
    return q, qd, qdd, batch


def state(robot: Robot, q, qd=None, qdd=None, gravity=None):
    """Poses T, Jacobian lines S, twists V and accelerations A of one tree state (validated
    float arrays; qd, qdd default to zero, ``gravity`` to the robot's)."""
    n, nq = robot.n, robot.nq
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.empty((n + 1, 6)), np.empty((n + 1, 6))
    zero = np.zeros(nq)
    parent, code, origin, axes, qidx, grav = robot_arrays(robot)
    forward(parent, code, origin, axes, qidx, grav if gravity is None else gravity, q,
            zero if qd is None else qd, zero if qdd is None else qdd, T, S, V, A)
    return T, S, V, A


def _initial_state(robot: Robot):
    """Poses and Jacobian lines at q0, computed once per robot (read-only)."""
    cache = getattr(robot, "_initial_state", None)
    if cache is None:
        T, S, _, _ = state(robot, robot.q0)
        T.flags.writeable = S.flags.writeable = False
        cache = robot._initial_state = (T, S)
    return cache


def initial_poses(robot: Robot) -> np.ndarray:
    """Body poses T_i(q0) (n+1, 4, 4) at the initial configuration q0."""
    return _initial_state(robot)[0]


def inverse_initial_poses(robot: Robot) -> np.ndarray:
    cache = getattr(robot, "_initial_inverse", None)
    if cache is None:
        T = initial_poses(robot)
        cache = np.empty_like(T)
        for i, t in enumerate(T):
            cache[i] = np.eye(4)
            cache[i, :3, :3] = t[:3, :3].T
            cache[i, :3, 3] = -t[:3, :3].T @ t[:3, 3]
        cache.flags.writeable = False
        robot._initial_inverse = cache
    return cache



def table2(robot: Robot) -> Table2:
    """The robot attributes of the DRNG paper's Table 2 (see :class:`pga_dyn.model.Table2`):
    M0 the motors of the body frames at q0 (eq. 45), L0 the world lines of the 1-DoF joint
    axes at q0 (zero rows for the other joints), g the spatial gravity seed G = (0; -g)
    (eq. 70), and the loop-joint fields (lparent < lchild, and Ml: the motors of the
    loop-joint frames, on the parent side, at q0)."""
    from . import pga

    n = robot.n
    T0, S = _initial_state(robot)
    L0 = np.zeros((n + 1, 6))
    for i in range(1, n + 1):
        if robot.joint_type[i] in ("R", "P"):
            L0[i] = S[robot.q_index[i]]
    M0 = np.array([pga.motor_coords(pga.motor_from_matrix(t)) for t in T0])
    loops = robot.loop_joints
    lparent = np.array([lp.parent for lp in loops], dtype=np.int64)
    lchild = np.array([lp.child for lp in loops], dtype=np.int64)
    Ml = np.array([pga.motor_coords(pga.motor_from_matrix(T0[lp.parent] @ lp.parent_frame)) for lp in loops])
    g = np.zeros(6)
    g[3:] = -robot.gravity
    return Table2(n=n, type=robot.joint_type, parent=robot.parent.copy(), q0=robot.q0, M0=M0, L0=L0, g=g,
                  nl=len(loops), ltype=tuple(lp.type for lp in loops), lparent=lparent, lchild=lchild,
                  Ml=Ml.reshape(len(loops), 8))


class Kinematics:
    """Kinematics of a robot at one state: poses ``T``, Jacobian lines ``S`` (one per
    coordinate), twists ``V`` and accelerations-with-gravity ``A`` of every body."""

    def __init__(self, robot: Robot, q, qd=None, qdd=None):
        zeros = np.zeros(robot.nq)
        q, qd, qdd, batch = states(robot, q, zeros if qd is None else qd, zeros if qdd is None else qdd)
        if batch:
            raise PgaDynError("Kinematics takes one state; use regressor() for batches")
        self.robot = robot
        self.T, self.S, self.V, self.A = state(robot, q, qd, qdd)

    def jacobian(self, i: int) -> np.ndarray:
        """The Jacobian lines L_j^i of body i (6 x nq, eq. 98): V_i = J qd."""
        robot = self.robot
        if not 1 <= i <= robot.n:
            raise PgaDynError(f"body index i must be in 1..{robot.n}, got {i}")
        jac = np.zeros((6, robot.nq))
        k = i
        while k > 0:
            sl = robot.coordinates(k)
            jac[:, sl] = self.S[sl].T
            k = robot.parent[k]
        return jac
