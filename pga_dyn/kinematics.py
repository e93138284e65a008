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

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from .conventions import CODE_P, CODE_R, CODE_S, CODE_U, JOINT_CODE, gravity_seed
from .errors import PgaDynError
from .model import Robot, check_robot

if TYPE_CHECKING:
    import numpy.typing as npt


@njit(cache=True)
def rotation_into(axis, angle, r):
    """Write Rodrigues' rotation about the unit ``axis`` by ``angle`` into ``r[:3, :3]``; twin: the
    matrix of ``pga.motor_exp(pga.twist(angle * axis, 0))`` (eq. 102)."""
    _rodrigues(axis[0], axis[1], axis[2], angle, r)


@njit(cache=True)
def _rodrigues(x, y, z, angle, r):
    """:func:`rotation_into` about the unit axis (x, y, z) (scalars: the kernels pass read-only
    axes of the robot and axes they compute, and numba compiles one version per kind of array).
    ``math``'s cosine and sine: the C library's, in the compiled code and in Python alike (numpy's
    may differ in the last bit), so the kernels' Python source gives their bits (pga_dyn.interpreted)."""
    c, s = math.cos(angle), math.sin(angle)
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


@njit(cache=True, inline="always")
def mul_rigid(a, b, out):
    """out = a b for 4x4 rigid transforms (bottom rows 0 0 0 1); twin: the motor product
    M_b M_a (eq. 27: the left factor acts first)."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
        out[r, 3] = a[r, 0] * b[0, 3] + a[r, 1] * b[1, 3] + a[r, 2] * b[2, 3] + a[r, 3]
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def so3_exp(r):
    """Rotation matrix exp(r^) (3, 3) of a rotation vector ``r`` (3,); twin: ``pga.motor_exp``
    of the twist (r; 0), and below |r| = 1e-14 the commutator with it (eq. 34)."""
    angle = np.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    if angle < 1e-14:
        out = np.eye(3)
        out[0, 1], out[0, 2], out[1, 2] = -r[2], r[1], -r[0]
        out[1, 0], out[2, 0], out[2, 1] = r[2], -r[1], r[0]
        return out
    out = np.empty((3, 3))
    _rodrigues(r[0] / angle, r[1] / angle, r[2] / angle, angle, out)
    return out


@njit(cache=True)
def se3_exp(xi):
    """Homogeneous matrix exp(xi^) (4, 4) of a spatial twist xi = (omega; v) (6,) (paper eq. 102);
    twin: the matrix of ``pga.motor_exp(pga.twist(omega, v))``."""
    w = xi[:3]
    v = xi[3:]
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    th = np.sqrt(th2)
    # A = (1 - cos th)/th^2 = 1/2 sinc(th/2)^2, free of cancellation; B = (th - sin th)/th^3 by
    # its series below 1e-2 (the direct form loses digits to cancellation there)
    half = 0.5 * th
    sinc = math.sin(half) / half if half > 1e-8 else 1.0 - half * half / 6.0
    a = 0.5 * sinc * sinc
    if th < 1e-2:
        b = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0
    else:
        b = (th - math.sin(th)) / (th2 * th)
    # p = (1 + A w^ + B w^ w^) v, written out (numba's matrix product needs SciPy's BLAS)
    c0 = w[1] * v[2] - w[2] * v[1]
    c1 = w[2] * v[0] - w[0] * v[2]
    c2 = w[0] * v[1] - w[1] * v[0]
    t = np.eye(4)
    rot = so3_exp(w)
    for r in range(3):  # loops, not slice assignments: those compile numba's shape checks (seconds)
        for c in range(3):
            t[r, c] = rot[r, c]
    t[0, 3] = v[0] + a * c0 + b * (w[1] * c2 - w[2] * c1)
    t[1, 3] = v[1] + a * c1 + b * (w[2] * c0 - w[0] * c2)
    t[2, 3] = v[2] + a * c2 + b * (w[0] * c1 - w[1] * c0)
    return t


@njit(cache=True)
def _axis_line(rot, pos, axis, prismatic, line):
    """World line of ``axis`` given in a frame with rotation ``rot[:3, :3]`` and origin ``pos``
    (twin: the join of the origin and the axis direction, eq. 18; the ideal line for a translation):
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
    """out += [W, L] qd: the rate of change of line L carried by a body with twist W; twin: the
    commutator L x W (eq. 28)."""
    out[0] += (w[1] * line[2] - w[2] * line[1]) * qd
    out[1] += (w[2] * line[0] - w[0] * line[2]) * qd
    out[2] += (w[0] * line[1] - w[1] * line[0]) * qd
    out[3] += (w[1] * line[5] - w[2] * line[4] + w[4] * line[2] - w[5] * line[1]) * qd
    out[4] += (w[2] * line[3] - w[0] * line[5] + w[5] * line[0] - w[3] * line[2]) * qd
    out[5] += (w[0] * line[4] - w[1] * line[3] + w[3] * line[1] - w[4] * line[0]) * qd


#: The unit axes of an S joint's three coordinates (read-only, as the robot's axes: one compiled
#: version of :func:`_axis_line`).
_UNIT = np.eye(3)
_UNIT.flags.writeable = False


@njit(cache=True, inline="always")
def _body_twist(i, p, c, k0, k1, S, qd, qdd, V, A, w):
    """Twist and acceleration of body i (joint code c, coordinates k0 <= k < k1) from its parent p's:
    V_i = V_p + sum S_k qd_k, A_i = A_p + sum (S_k qdd_k + [W_k, L_k] qd_k), W_k the twist of the
    body that carries axis k (w (6,): work array)."""
    for r in range(6):
        V[i, r] = V[p, r]
        A[i, r] = A[p, r]
        w[r] = V[p, r]
    for k in range(k0, k1):
        for r in range(6):
            V[i, r] += S[k, r] * qd[k]
            A[i, r] += S[k, r] * qdd[k]
        if c == CODE_R or c == CODE_P or c == CODE_U:  # axis k is carried by the parent and the axes before k
            _line_rate(w, S[k], qd[k], A[i])
            for r in range(6):
                w[r] += S[k, r] * qd[k]
    if c == CODE_S:  # the three axes of an S joint are carried by the child (F lines are fixed)
        for k in range(k0, k0 + 3):
            _line_rate(V[i], S[k], qd[k], A[i])


@njit(cache=True)
def forward(parent, code, origin, axes, qidx, seed, q, qd, qdd, T, S, V, A):
    """Tree kinematics of one sample (fills T, S, V, A in place); readable twin:
    :func:`forward_pga`.

    T: (n+1, 4, 4) body poses; S: (nq, 6) world Jacobian line of each coordinate;
    V: (n+1, 6) spatial twists; A: (n+1, 6) spatial accelerations plus the acceleration
    ``seed`` (6,) of the base, the gravity seed G (:func:`pga_dyn.conventions.gravity_seed`).
    """
    n = parent.shape[0] - 1
    frame = np.empty((4, 4))
    rel = np.eye(4)
    w = np.empty(6)
    T[0] = 0.0
    for k in range(4):
        T[0, k, k] = 1.0
    V[0] = 0.0
    for r in range(6):  # loops, not slice assignments: those compile numba's shape checks (seconds)
        A[0, r] = seed[r]
    for i in range(1, n + 1):
        p = parent[i]
        k0 = qidx[i]
        c = code[i]
        mul_rigid(T[p], origin[i], frame)
        pos = frame[:3, 3]
        slides = c == CODE_P  # a run-time flag: a literal True / False would compile _axis_line twice
        if c == CODE_R:
            rotation_into(axes[i, 0], q[k0], rel)
            mul_rigid(frame, rel, T[i])
            _axis_line(frame, pos, axes[i, 0], slides, S[k0])
        elif c == CODE_P:
            for r in range(3):
                rel[r, 3] = axes[i, 0, r] * q[k0]
            mul_rigid(frame, rel, T[i])
            for r in range(3):
                rel[r, 3] = 0.0
            _axis_line(frame, pos, axes[i, 0], slides, S[k0])
        elif c == CODE_U:  # Rot(a1, q1) Rot(a2, q2)
            rotation_into(axes[i, 0], q[k0], rel)
            _axis_line(frame, pos, axes[i, 0], slides, S[k0])
            mul_rigid(frame, rel, T[i])
            _axis_line(T[i], pos, axes[i, 1], slides, S[k0 + 1])
            rotation_into(axes[i, 1], q[k0 + 1], rel)
            for r in range(4):
                for k in range(4):
                    frame[r, k] = T[i, r, k]
            mul_rigid(frame, rel, T[i])
        elif c == CODE_S:  # rotation vector; velocity = angular velocity in the child frame
            rot = so3_exp(q[k0 : k0 + 3])
            for r in range(3):
                for k in range(3):
                    rel[r, k] = rot[r, k]
            mul_rigid(frame, rel, T[i])
            for k in range(3):
                _axis_line(T[i], pos, _UNIT[k], slides, S[k0 + k])
        else:  # CODE_F: T = exp(xi^) T0, spatial twist coordinates (eqs. 102-104)
            mul_rigid(se3_exp(q[k0 : k0 + 6]), frame, T[i])
            for k in range(6):
                S[k0 + k] = 0.0
                S[k0 + k, k] = 1.0
        _body_twist(i, p, c, k0, qidx[i + 1], S, qd, qdd, V, A, w)
        rel[:3, :3] = 0.0
        for r in range(3):
            rel[r, r] = 1.0


@njit(cache=True)
def twists(parent, code, qidx, seed, qd, qdd, S, V, A):
    """The twists V and accelerations A (n+1, 6) of :func:`forward` at a configuration whose Jacobian
    lines S (nq, 6) it has computed, for new velocities qd and accelerations qdd (nq,) and base
    acceleration ``seed`` (6,): forward without the poses (the same operations: the same bits)."""
    w = np.empty(6)
    for r in range(6):
        V[0, r] = 0.0
        A[0, r] = seed[r]
    for i in range(1, parent.shape[0]):
        _body_twist(i, parent[i], code[i], qidx[i], qidx[i + 1], S, qd, qdd, V, A, w)


class RobotArrays(NamedTuple):
    """The arrays the kernels take, read once from a Robot: ``parent`` (n + 1,), joint ``code``
    (n + 1,; :data:`pga_dyn.conventions.JOINT_CODE`, -1 for the base), ``origin`` (n + 1, 4, 4),
    ``axes`` (n + 1, 2, 3), ``q_index`` (n + 2,) and the gravity ``seed`` (6,) of the base's
    acceleration (:func:`pga_dyn.conventions.gravity_seed`)."""

    parent: np.ndarray
    code: np.ndarray
    origin: np.ndarray
    axes: np.ndarray
    q_index: np.ndarray
    seed: np.ndarray


def _robot_arrays(robot: Robot) -> RobotArrays:
    code = np.array([-1] + [JOINT_CODE[t] for t in robot.joint_type[1:]], dtype=np.int64)
    return RobotArrays(robot.parent, code, robot.origin, robot.axes, robot.q_index, gravity_seed(robot.gravity))


def robot_arrays(robot: Robot) -> RobotArrays:
    """The kernels' arrays of ``robot`` (:class:`RobotArrays`, computed once: ``robot.derived``)."""
    return robot.derived(_robot_arrays)


def float_array(name: str, value: npt.ArrayLike) -> np.ndarray:
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


_FLOAT64 = np.dtype(np.float64)


def _state_array(name: str, value) -> np.ndarray:
    """``value`` as a C-contiguous, aligned, writable float64 array: the array itself when it is
    one (the common case, checked in a few hundred nanoseconds), else a converted copy (one kind
    of array for the kernels: numba compiles one version per kind)."""
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.flags.carray:  # C-contiguous, aligned, writable
        return value
    x = float_array(name, value)
    return x if x.flags.carray else x.copy()


@njit(cache=True)
def first_nonfinite(q, qd, qdd):
    """The index (0, 1, 2) of the first of three 1-D arrays that holds a NaN or an infinity, -1
    when all values are finite (x * 0 is 0 for a finite x, NaN otherwise); see
    :func:`raise_nonfinite`."""
    for index, x in enumerate((q, qd, qdd)):
        zero = 0.0
        for k in range(x.shape[0]):
            zero += x[k] * 0.0
        if zero != 0.0:
            return index
    return -1


def raise_nonfinite(bad: int) -> None:
    """PgaDynError naming q, qd or qdd when ``bad`` (the index :func:`first_nonfinite` returns) is
    not -1."""
    if bad >= 0:
        raise PgaDynError(f"{('q', 'qd', 'qdd')[bad]} contains non-finite values")


def check_states(
    robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike, actuated: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """``(q, qd, qdd, batch)``: one state (1-D arrays (nq,)) or a batch of states (2-D, one row a
    sample, (samples, nq)) of the tree coordinates, or of the actuated coordinates q_a (n_a,)
    when ``actuated``, validated as finite float arrays; PgaDynError naming the argument."""
    q, qd, qdd, batch = state_arrays(robot, q, qd, qdd, actuated)
    raise_nonfinite(first_nonfinite(q.reshape(-1), qd.reshape(-1), qdd.reshape(-1)))
    return q, qd, qdd, batch


def state_arrays(
    robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike, actuated: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """:func:`check_states` but for the finiteness of the values, for a kernel that starts with
    :func:`first_nonfinite` on the flat arrays and whose caller passes its answer to
    :func:`raise_nonfinite` (one compiled call instead of two)."""
    check_robot(robot)
    size = len(robot.actuated) if actuated else robot.nq
    if not (
        type(q) is type(qd) is type(qdd) is np.ndarray
        and q.dtype is qd.dtype is qdd.dtype is _FLOAT64
        and q.flags.carray
        and qd.flags.carray
        and qdd.flags.carray
    ):  # not three arrays ready as they are
        q, qd, qdd = _state_array("q", q), _state_array("qd", qd), _state_array("qdd", qdd)
    shape = q.shape
    if not (shape == qd.shape == qdd.shape and (shape == (size,) or len(shape) == 2 and shape[1] == size)):
        raise _shape_error(robot, (q, qd, qdd), size, actuated)
    return q, qd, qdd, len(shape) == 2


def _shape_error(robot: Robot, states, size: int, actuated: bool) -> PgaDynError:
    """The error for states whose shapes are not all (size,) or all (samples, size), naming the
    first argument at fault."""
    batch = states[0].ndim == 2
    for name, x in zip(("q", "qd", "qdd"), states):
        shape = (x.shape[0] if x.ndim == 2 else "samples", size) if batch else (size,)
        if x.shape != shape:
            names = robot.actuated_names if actuated else robot.coordinate_names
            return PgaDynError(
                f"{name} must have shape {shape} for robot '{robot.name}' (coordinates {list(names)}), got {x.shape}"
            )
    return PgaDynError("q, qd and qdd must hold the same number of samples")


def tree_state(
    robot: Robot, q: np.ndarray, qd: np.ndarray | None = None, qdd: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Poses T (n + 1, 4, 4), Jacobian lines S (nq, 6), twists V (n + 1, 6) and accelerations A
    (n + 1, 6) of one tree state (validated float arrays (nq,); qd, qdd default to zero)."""
    n, nq = robot.n, robot.nq
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.empty((n + 1, 6)), np.empty((n + 1, 6))
    zero = np.zeros(nq)
    arrays = robot_arrays(robot)
    # a writable seed, as the loop kernels' (np.zeros(6)): one compiled version of forward
    forward(*arrays[:5], arrays.seed.copy(), q, zero if qd is None else qd, zero if qdd is None else qdd, T, S, V, A)
    return T, S, V, A


def _rodrigues_py(x: float, y: float, z: float, angle: float) -> np.ndarray:
    """:func:`_rodrigues` in Python (3, 3), the same operations in the same order."""
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array(
        [
            [c + x * x * t, x * y * t - z * s, x * z * t + y * s],
            [y * x * t + z * s, c + y * y * t, y * z * t - x * s],
            [z * x * t - y * s, z * y * t + x * s, c + z * z * t],
        ]
    )


def _so3_exp_py(r: np.ndarray) -> np.ndarray:
    """:func:`so3_exp` in Python, the same operations in the same order."""
    r0, r1, r2 = float(r[0]), float(r[1]), float(r[2])
    angle = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if angle < 1e-14:
        return np.array([[1.0, -r2, r1], [r2, 1.0, -r0], [-r1, r0, 1.0]])
    return _rodrigues_py(r0 / angle, r1 / angle, r2 / angle, angle)


def _se3_exp_py(xi: np.ndarray) -> np.ndarray:
    """:func:`se3_exp` in Python, the same operations in the same order."""
    w0, w1, w2, v0, v1, v2 = (float(x) for x in xi)
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    th = math.sqrt(th2)
    half = 0.5 * th
    sinc = math.sin(half) / half if half > 1e-8 else 1.0 - half * half / 6.0
    a = 0.5 * sinc * sinc
    b = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0 if th < 1e-2 else (th - math.sin(th)) / (th2 * th)
    c0, c1, c2 = w1 * v2 - w2 * v1, w2 * v0 - w0 * v2, w0 * v1 - w1 * v0
    t = np.eye(4)
    t[:3, :3] = _so3_exp_py(xi[:3])
    t[0, 3] = v0 + a * c0 + b * (w1 * c2 - w2 * c1)
    t[1, 3] = v1 + a * c1 + b * (w2 * c0 - w0 * c2)
    t[2, 3] = v2 + a * c2 + b * (w0 * c1 - w1 * c0)
    return t


def _mul_rigid_py(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`mul_rigid` with numpy (a new array), the same operations in the same order."""
    out = np.zeros((4, 4))
    out[:3, :3] = a[:3, 0:1] * b[0, :3] + a[:3, 1:2] * b[1, :3] + a[:3, 2:3] * b[2, :3]
    out[:3, 3] = a[:3, 0] * b[0, 3] + a[:3, 1] * b[1, 3] + a[:3, 2] * b[2, 3] + a[:3, 3]
    out[3, 3] = 1.0
    return out


def tree_poses(robot: Robot, q: np.ndarray) -> np.ndarray:
    """Body poses T (n + 1, 4, 4) at one state ``q`` (a float array (nq,)), the poses of
    :func:`forward` to the bit (the same operations in the same order, in numpy: nothing to compile,
    for the commands that need only the poses at q0, such as ``pga-dyn analyze`` on a tree)."""
    arrays = robot_arrays(robot)
    parent, code, origin, axes, qidx = arrays[:5]
    T = np.zeros((robot.n + 1, 4, 4))
    T[0] = np.eye(4)
    for i in range(1, robot.n + 1):
        frame = _mul_rigid_py(T[parent[i]], origin[i])
        c, k = code[i], qidx[i]
        rel = np.eye(4)
        if c == CODE_R or c == CODE_U:
            axis = axes[i, 0]
            rel[:3, :3] = _rodrigues_py(float(axis[0]), float(axis[1]), float(axis[2]), float(q[k]))
        elif c == CODE_P:
            rel[:3, 3] = axes[i, 0] * q[k]
        elif c == CODE_S:
            rel[:3, :3] = _so3_exp_py(q[k : k + 3])
        else:  # CODE_F
            T[i] = _mul_rigid_py(_se3_exp_py(q[k : k + 6]), frame)
            continue
        T[i] = _mul_rigid_py(frame, rel)
        if c == CODE_U:  # Rot(a1, q1) Rot(a2, q2)
            axis = axes[i, 1]
            rel[:3, :3] = _rodrigues_py(float(axis[0]), float(axis[1]), float(axis[2]), float(q[k + 1]))
            T[i] = _mul_rigid_py(T[i], rel)
    return T


#: The most bodies whose poses at q0 are computed in numpy (:func:`tree_poses`, about 17 us a
#: body) when :func:`forward` is not loaded yet in this process: a first ``pga-dyn analyze`` of a
#: tree then compiles no kinematics kernel, and a large robot keeps the compiled speed.
NUMPY_POSES_BODIES = 32


def _poses_at_q0(robot: Robot):
    if robot.n <= NUMPY_POSES_BODIES and not getattr(forward, "signatures", None):
        T = tree_poses(robot, robot.q0)  # the same bits as forward's (tests/test_kernels.py)
    else:
        T = tree_state(robot, robot.q0)[0]
    inverse = np.zeros_like(T)  # [R^T, -R^T p; 0 0 0 1] for every body at once
    inverse[:, :3, :3] = T[:, :3, :3].transpose(0, 2, 1)
    inverse[:, :3, 3] = -np.matmul(inverse[:, :3, :3], T[:, :3, 3:])[:, :, 0]
    inverse[:, 3, 3] = 1.0
    return T, inverse


def initial_poses(robot: Robot) -> np.ndarray:
    """Body poses T_i(q0) (n + 1, 4, 4) at the initial configuration q0 (read-only, computed once)."""
    return robot.derived(_poses_at_q0)[0]


def inverse_initial_poses(robot: Robot) -> np.ndarray:
    """Their inverses T_i(q0)^-1 (n + 1, 4, 4) (read-only, computed once)."""
    return robot.derived(_poses_at_q0)[1]


class Kinematics:
    """Kinematics of a robot at one state of its tree coordinates.

    Parameters
    ----------
    robot : Robot
    q : array_like (nq,)
    qd, qdd : array_like (nq,), optional
        Velocity and acceleration coordinates (default zero).

    Attributes
    ----------
    T : ndarray (n + 1, 4, 4)
        Body poses (body 0 the base).
    S : ndarray (nq, 6)
        The world Jacobian line (d; m) of each coordinate (eq. 47).
    V, A : ndarray (n + 1, 6)
        Spatial twists (omega; v) and accelerations plus the gravity seed, A = dV/dt + G (eq. 70).
    """

    def __init__(
        self, robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike | None = None, qdd: npt.ArrayLike | None = None
    ) -> None:
        zeros = np.zeros(robot.nq)
        q, qd, qdd, batch = check_states(robot, q, zeros if qd is None else qd, zeros if qdd is None else qdd)
        if batch:
            raise PgaDynError("Kinematics takes one state; use regressor() for batches")
        self.robot = robot
        self.T, self.S, self.V, self.A = tree_state(robot, q, qd, qdd)

    def jacobian(self, i: int) -> np.ndarray:
        """The Jacobian lines L_j^i of body ``i`` (1..n) as a (6, nq) matrix J (eq. 98): V_i = J qd."""
        robot = self.robot
        if not 1 <= i <= robot.n:
            raise PgaDynError(f"body index i must be in 1..{robot.n}, got {i}")
        jac = np.zeros((6, robot.nq))
        for k in robot.support(i):
            sl = robot.coordinates(k)
            jac[:, sl] = self.S[sl].T
        return jac


def forward_pga(
    parent: np.ndarray,
    code: np.ndarray,
    origin: np.ndarray,
    axes: np.ndarray,
    qidx: np.ndarray,
    seed: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The readable twin of :func:`forward`: the same tree kinematics written with the PGA of
    :mod:`pga_dyn.pga` (kingdon multivectors), one body at a time. Same arrays in; T (n+1, 4, 4),
    S (nq, 6), V (n+1, 6), A (n+1, 6) out. Slow; tests compare it with the kernel.

    The motor of body i is M_i = M_rel M_origin M_parent (the left factor of a motor product
    acts first, eq. 27); a joint moves by motor_exp of its axis line times its coordinate
    (eq. 102). The Jacobian line of a coordinate is its axis line moved by the motor that
    carries it (eq. 47): the join of the frame origin and the axis direction for a rotation,
    the ideal line (0; a) for a translation. V_i = V_p + sum_k L_k qd_k (eq. 98) and
    A_i = A_p + sum_k (L_k qdd_k + (L_k x W_k) qd_k), the rate of a line L carried with twist W
    being the commutator L x W (eq. 28)."""
    from . import pga

    n = parent.shape[0] - 1
    zero = np.zeros(3)
    origin_point = pga.point(0.0, 0.0, 0.0)
    M = [pga.motor_from_matrix(np.eye(4))]
    V, A = [pga.twist(zero, zero)], [pga.line(seed[:3], seed[3:])]
    S = [None] * q.shape[0]

    def rotation(axis, angle):
        return pga.motor_exp(pga.twist(angle * axis, zero))

    def axis_line(motor, axis, prismatic=False):
        """The world line of ``axis`` (in the frame of ``motor``) through that frame's origin."""
        local = pga.line(zero, axis) if prismatic else pga.join(origin_point, pga.direction(*axis))
        return pga.sandwich(motor, local)

    for i in range(1, n + 1):
        c, k = code[i], qidx[i]
        frame = pga.motor_from_matrix(origin[i]) * M[parent[i]]
        carriers = []  # the coordinates whose axes the parent (and the axes before) carry
        if c == CODE_R:
            M.append(rotation(axes[i, 0], q[k]) * frame)
            S[k] = axis_line(frame, axes[i, 0])
            carriers = [k]
        elif c == CODE_P:
            M.append(pga.motor_exp(pga.twist(zero, q[k] * axes[i, 0])) * frame)
            S[k] = axis_line(frame, axes[i, 0], prismatic=True)
            carriers = [k]
        elif c == CODE_U:
            middle = rotation(axes[i, 0], q[k]) * frame
            M.append(rotation(axes[i, 1], q[k + 1]) * middle)
            S[k], S[k + 1] = axis_line(frame, axes[i, 0]), axis_line(middle, axes[i, 1])
            carriers = [k, k + 1]
        elif c == CODE_S:
            M.append(rotation(q[k : k + 3], 1.0) * frame)  # exp of the rotation vector
            for j in range(3):
                S[k + j] = axis_line(M[i], np.eye(3)[j])
        else:  # F: T = exp(xi^) T0 in the spatial frame, fixed basis lines
            M.append(frame * pga.motor_exp(pga.twist(q[k : k + 3], q[k + 3 : k + 6])))
            for j in range(3):
                S[k + j] = pga.line(np.eye(3)[j], zero)
                S[k + 3 + j] = pga.line(zero, np.eye(3)[j])
        W, Vi, Ai = V[parent[i]], V[parent[i]], A[parent[i]]
        for j in range(k, qidx[i + 1]):
            Vi = Vi + S[j] * qd[j]
            Ai = Ai + S[j] * qdd[j]
            if j in carriers:
                Ai = Ai + pga.commutator(S[j], W) * qd[j]
                W = W + S[j] * qd[j]
        if c == CODE_S:  # the three axes are carried by the child
            for j in range(k, k + 3):
                Ai = Ai + pga.commutator(S[j], Vi) * qd[j]
        V.append(Vi)
        A.append(Ai)
    return (
        np.array([pga.matrix_from_motor(m) for m in M]),
        np.array([pga.line_coords(L) for L in S]).reshape(-1, 6),
        np.array([pga.line_coords(v) for v in V]),
        np.array([pga.line_coords(a) for a in A]),
    )
