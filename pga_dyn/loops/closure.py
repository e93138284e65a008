"""The constraint equations C(q) = 0 of a robot's loops and couplings (DRNG paper section 5.1,
eqs. 91-92): the compiled kernels beside their readable PGA twins, and the arrays they read.

**Loop joints** between a parent body a and a child body b, with joint frames F_a and F_b
(origins p_a, p_b), state that the two bodies share points and lines (rows per loop:
:data:`LOOP_ROWS`):

* S: the centre is shared, p_b - p_a = 0 (3 rows);
* U: the centre is shared and the two axes keep the angle they have at q0:
  p_b - p_a = 0 and (R_a u1) . (R_b u2) = cos(angle at q0) (u1 fixed in a, u2 fixed in b; 4 rows);
* R: the centre and the axis are shared: p_b - p_a = 0, R_b u - R_a u = 0 (the directions,
  not only the lines: a cross product would also vanish for a body turned over; 6 rows, rank 5);
* P: the orientation is shared and the offset lies along the axis: R_b e_k - R_a e_k = 0
  (k = 1, 2, 3) and (p_b - p_a) x (R_a u) = 0 (12 rows, rank 5).

A **spin lock** (code CODE_SPIN, :data:`LOCK_ROWS` row; :mod:`pga_dyn.loops.spins`) is not a
joint: it holds the spin rate of body b about a direction u fixed in it at zero relative to
body a (the world, a = 0, for a free spin), (w_b - w_a) . (R_b u) = 0: its Jacobian row, which
the projection and the bias use (bias (alpha_b - alpha_a) . u - w_a . (w_b x u)). The spin
angle that rate leaves depends on the path; the lock's residual fixes the configuration's: with
u_0, e_0 the directions of u and of a direction e normal to it (fixed in b) at the reference (in
body a's frame F_a, the body's orientation there), u_b, e_b their directions now, and e_t = M
e_0 for M the smallest rotation taking u_0 to u_b (k = u_0 x u_b, c = u_0 . u_b: e_t = e_0 + k
x e_0 + k x (k x e_0) / (1 + c)), the residual is (e_t x e_b) . u_b, the sine of the angle
from e_t to e_b about u_b. Its gradient is the row's up to the turning of e_t with u_b, which
the spin's motion (about u_b) leaves: the assembly's Newton steps, which correct the spin, see
the exact rate.

Velocities of the points and directions come from the Jacobian lines of the tree (a point p
on a body moves with dp/dq_k = m_k + d_k x p for every line L_k = (d_k; m_k) on the body's
path, eq. 34; a direction u with d_k x u), so the constraint Jacobian J (m, nq) is exact; the
bias Jd qd (m,) is the acceleration of the same points and directions with qdd = 0 (eq. 35, no
gravity), so that J qdd + Jd qd = 0 on the constraint manifold.

=====================  ============================================================
kernel (numba)         readable twin (:mod:`pga_dyn.pga`, for the tests)
=====================  ============================================================
:func:`loop_kernel`    :func:`loop_pga`: r (m,), J (m, nq), bias (m,) at a tree state
:func:`motion_kernel`  :func:`loop_pga` on :func:`pga_dyn.kinematics.forward_pga`
=====================  ============================================================

:func:`kernel_arrays` builds what they read from a robot: the tree's arrays, on (n + 1, nq)
(coordinate k moves body b), and per loop its code (l,), parent and child bodies (l,), frames
(l, 4, 4), axes (l, 2, 3) and the cosine of a U joint's angle at q0 (l,).

**Couplings** (URDF ``<mimic>``, URDF+ ``<coupling>``) are linear, q_f = r q_l + c, and are
solved in closed form, never by Newton: :func:`coupling_map` substitutes them (chains
included) into the affine map q = E z + e0 from the free coordinates z = (q_a, q_f), q_f the
passive coordinates that no coupling determines (their rows of C(q), q_f - r q_l - c, are
appended by :meth:`pga_dyn.loops.system.Constraints.evaluate`).

A new kind of loop joint (a planar or cylindrical pair) is a new branch of :func:`loop_kernel`
and :func:`loop_pga` and an entry of :data:`LOOP_ROWS`; redundant closures (rows of J that
depend on others) need nothing here: the solvers of :mod:`pga_dyn.loops.newton` take
least-squares steps and :mod:`pga_dyn.loops.parts` decides the rank of each part and projects
on its independent rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..conventions import CODE_P, CODE_R, CODE_SPIN, CODE_U, JOINT_CODE, LOOP_JOINT_TYPES
from ..kinematics import forward, initial_poses, robot_arrays
from ..model import Robot

#: Rows of the residual of each loop-joint type, and the same by joint code for the kernels.
LOOP_ROWS = {"R": 6, "P": 12, "U": 4, "S": 3}
#: Rows of a spin lock (its spin rate).
LOCK_ROWS = 1
ROWS_BY_CODE = np.zeros(CODE_SPIN + 1, dtype=np.int64)
ROWS_BY_CODE[[JOINT_CODE[t] for t in LOOP_JOINT_TYPES]] = [LOOP_ROWS[t] for t in LOOP_JOINT_TYPES]
ROWS_BY_CODE[CODE_SPIN] = LOCK_ROWS
#: Residual norm below which a loop is closed (m, or unit-vector differences).
CLOSURE_TOL = 1e-9


# -- compiled kernels -------------------------------------------------------------------------------
#: Rows of loop_kernel's work array W (:func:`loop_work`): the rotations R_a, R_b (3 rows each) and
#: 3-vectors, each a row of W named by its index (indices, not row views: a row view held across
#: blocks keeps numba's reference counts of every argument, an atomic increment and decrement each
#: per call; indices leave none).
_RA, _RB = 0, 3
_PA, _PB, _UA, _UB, _T, _VA, _AA, _VB, _AB, _WA, _XA, _WB, _XB, _CA, _CB, _DD, _DU, _X = range(6, 24)
#: Rows of that work array.
LOOP_WORK_ROWS = 24


@njit(cache=True)
def loop_work():
    """The work array W (LOOP_WORK_ROWS, 3) of :func:`loop_kernel`."""
    return np.empty((LOOP_WORK_ROWS, 3))


@njit(cache=True, inline="always")
def _rows(S, on, b, W, x, sign, point, J, row):
    """J[row:row+3, k] += sign dx/dq_k for the coordinates k moving body b: for a point x = W[x]
    (``point``) m_k + d_k x x, for a direction d_k x x."""
    for k in range(S.shape[0]):
        if on[b, k]:
            m0, m1, m2 = (S[k, 3], S[k, 4], S[k, 5]) if point else (0.0, 0.0, 0.0)
            J[row, k] += sign * (m0 + S[k, 1] * W[x, 2] - S[k, 2] * W[x, 1])
            J[row + 1, k] += sign * (m1 + S[k, 2] * W[x, 0] - S[k, 0] * W[x, 2])
            J[row + 2, k] += sign * (m2 + S[k, 0] * W[x, 1] - S[k, 1] * W[x, 0])


@njit(cache=True, inline="always")
def _cross(W, a, b, out):
    """W[out] = W[a] x W[b]."""
    W[out, 0] = W[a, 1] * W[b, 2] - W[a, 2] * W[b, 1]
    W[out, 1] = W[a, 2] * W[b, 0] - W[a, 0] * W[b, 2]
    W[out, 2] = W[a, 0] * W[b, 1] - W[a, 1] * W[b, 0]


@njit(cache=True, inline="always")
def _cross_row(X, b, W, x, out):
    """W[out] = w x W[x] for w = X[b, :3] (a row of the twists, accelerations or lines)."""
    W[out, 0] = X[b, 1] * W[x, 2] - X[b, 2] * W[x, 1]
    W[out, 1] = X[b, 2] * W[x, 0] - X[b, 0] * W[x, 2]
    W[out, 2] = X[b, 0] * W[x, 1] - X[b, 1] * W[x, 0]


@njit(cache=True, inline="always")
def _point_motion(V, A, b, W, p, vel, acc):
    """Velocity W[vel] and acceleration W[acc] (qdd = 0, no gravity: the bias part) of the point
    W[p] on body b: with V_b = (w; v), A_b = (a; c), v + w x p and c + a x p + w x (v + w x p)."""
    _cross_row(V, b, W, p, vel)
    for r in range(3):
        W[vel, r] += V[b, 3 + r]
    _cross_row(A, b, W, p, acc)
    W[acc, 0] += A[b, 3] + (V[b, 1] * W[vel, 2] - V[b, 2] * W[vel, 1])
    W[acc, 1] += A[b, 4] + (V[b, 2] * W[vel, 0] - V[b, 0] * W[vel, 2])
    W[acc, 2] += A[b, 5] + (V[b, 0] * W[vel, 1] - V[b, 1] * W[vel, 0])


@njit(cache=True, inline="always")
def _direction_motion(V, A, b, W, u, vel, acc):
    """Velocity w x u and bias acceleration a x u + w x (w x u) of the direction u = W[u] on body b."""
    _cross_row(V, b, W, u, vel)
    _cross_row(A, b, W, u, acc)
    W[acc, 0] += V[b, 1] * W[vel, 2] - V[b, 2] * W[vel, 1]
    W[acc, 1] += V[b, 2] * W[vel, 0] - V[b, 0] * W[vel, 2]
    W[acc, 2] += V[b, 0] * W[vel, 1] - V[b, 1] * W[vel, 0]


@njit(cache=True, inline="always")
def _rotate(W, R, axes, l, j, out):
    """W[out] = R u for R = W[R:R+3] and u = axes[l, j] (3,)."""
    for k in range(3):
        W[out, k] = W[R + k, 0] * axes[l, j, 0] + W[R + k, 1] * axes[l, j, 1] + W[R + k, 2] * axes[l, j, 2]


@njit(cache=True, inline="always")
def _coincide(point, S, V, A, on, a, b, W, xa, xb, with_bias, r, J, bias, row):
    """The 3 rows of x_b - x_a = 0 for two points (``point``) or two directions x_a = W[xa], x_b =
    W[xb] moving with bodies a and b (in the world): residual, Jacobian rows and, ``with_bias``,
    the bias. (One loop over the two bodies, one helper per quantity: numba inlines each helper
    once, and its compilation grows with the copies.)"""
    for k in range(3):
        r[row + k] = W[xb, k] - W[xa, k]
    for side in range(2):
        body, x, sign = (b, xb, 1.0) if side == 0 else (a, xa, -1.0)
        _rows(S, on, body, W, x, sign, point, J, row)
    if with_bias:
        for side in range(2):
            body, x, vel, acc = (b, xb, _VB, _AB) if side == 0 else (a, xa, _VA, _AA)
            if point:
                _point_motion(V, A, body, W, x, vel, acc)
            else:
                _direction_motion(V, A, body, W, x, vel, acc)
        for k in range(3):
            bias[row + k] = W[_AB, k] - W[_AA, k]


@njit(cache=True, inline="always")
def _frame(T, b, F, l, W, R, p):
    """Rotation W[R:R+3] (3x3) and origin W[p] of the frame F[l] (4x4, in the body frame) of body b
    at pose T[b]."""
    for r in range(3):
        for c in range(3):
            W[R + r, c] = T[b, r, 0] * F[l, 0, c] + T[b, r, 1] * F[l, 1, c] + T[b, r, 2] * F[l, 2, c]
        W[p, r] = T[b, r, 0] * F[l, 0, 3] + T[b, r, 1] * F[l, 1, 3] + T[b, r, 2] * F[l, 2, 3] + T[b, r, 3]


@njit(cache=True, inline="always")
def _spin_residual(W, axes, l):
    """The residual of a spin lock (module docstring): (e_t x e_b) . u_b with u_0 = R_a u, e_0 = R_a
    e, u_b = R_b u, e_b = R_b e (u, e = axes[l, 0], axes[l, 1] fixed in the body; R_a, R_b in W)
    and e_t = e_0 + k x e_0 + k x (k x e_0) / (1 + c), k = u_0 x u_b, c = u_0 . u_b. Leaves u_b
    in W[_UB]."""
    u0, ub, k, e0, eb, et, ke, kke = _UA, _UB, _T, _VA, _VB, _WA, _XA, _WB
    _rotate(W, _RA, axes, l, 0, u0)
    _rotate(W, _RA, axes, l, 1, e0)
    _rotate(W, _RB, axes, l, 0, ub)
    _rotate(W, _RB, axes, l, 1, eb)
    _cross(W, u0, ub, k)
    c = W[u0, 0] * W[ub, 0] + W[u0, 1] * W[ub, 1] + W[u0, 2] * W[ub, 2]
    _cross(W, k, e0, ke)
    _cross(W, k, ke, kke)
    for i in range(3):
        W[et, i] = W[e0, i] + W[ke, i] + W[kke, i] / (1.0 + c)
    _cross(W, et, eb, ke)
    return W[ke, 0] * W[ub, 0] + W[ke, 1] * W[ub, 1] + W[ke, 2] * W[ub, 2]


@njit(cache=True)
def loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, axes, cos0, with_bias, r, J, bias, W):
    """Residual r (m,), Jacobian J (m, nq) and, ``with_bias``, the bias Jd qd (m,) of the loop
    joints at a tree state (T, S from :func:`pga_dyn.kinematics.forward`; V, A its twists and
    accelerations with qdd = 0 and no gravity); W: the work array of :func:`loop_work` (given: a
    function that allocates or holds row views keeps numba's reference counts of all its
    arguments). Rows per loop: :data:`LOOP_ROWS`. Readable twin: :func:`loop_pga`."""
    for i in range(J.shape[0]):
        for k in range(J.shape[1]):
            J[i, k] = 0.0
    row = np.int64(0)
    for l in range(kind.shape[0]):
        a, b, c = lpar[l], lchi[l], kind[l]
        _frame(T, a, Fp, l, W, _RA, _PA)
        _frame(T, b, Fc, l, W, _RB, _PB)
        if c == CODE_SPIN:  # the spin rate (w_b - w_a) . u_b, u_b = R_b u; r: the spin angle's sine
            r[row] = _spin_residual(W, axes, l)
            for k in range(S.shape[0]):
                rate = S[k, 0] * W[_UB, 0] + S[k, 1] * W[_UB, 1] + S[k, 2] * W[_UB, 2]
                if on[b, k]:
                    J[row, k] += rate
                if on[a, k]:
                    J[row, k] -= rate
            if with_bias:  # d/dt: (alpha_b - alpha_a) . u_b + (w_b - w_a) . (w_b x u_b)
                _cross_row(V, b, W, _UB, _T)
                bias[row] = (
                    (A[b, 0] - A[a, 0]) * W[_UB, 0]
                    + (A[b, 1] - A[a, 1]) * W[_UB, 1]
                    + (A[b, 2] - A[a, 2]) * W[_UB, 2]
                    - V[a, 0] * W[_T, 0]
                    - V[a, 1] * W[_T, 1]
                    - V[a, 2] * W[_T, 2]
                )
            row += 1
            continue
        # pair 0: the centre, shared by R, U and S; pairs 1 to 3: directions that coincide (R: the
        # axis; P: the frame's three axes). One call of _coincide: numba compiles each inlined copy.
        last = 3 if c == CODE_P else (1 if c == CODE_R else 0)
        for e in range(1 if c == CODE_P else 0, last + 1):
            if e == 0:
                for k in range(3):
                    W[_CA, k] = W[_PA, k]
                    W[_CB, k] = W[_PB, k]
            elif c == CODE_R:
                _rotate(W, _RA, axes, l, 0, _CA)
                _rotate(W, _RB, axes, l, 0, _CB)
            else:
                for k in range(3):
                    W[_CA, k] = W[_RA + k, e - 1]
                    W[_CB, k] = W[_RB + k, e - 1]
            _coincide(e == 0, S, V, A, on, a, b, W, _CA, _CB, with_bias, r, J, bias, row)
            row += 3
        if c == CODE_U:  # the axes keep their angle, (R_a u1) . (R_b u2) = cos0
            _rotate(W, _RA, axes, l, 0, _UA)
            _rotate(W, _RB, axes, l, 1, _UB)
            r[row] = W[_UA, 0] * W[_UB, 0] + W[_UA, 1] * W[_UB, 1] + W[_UA, 2] * W[_UB, 2] - cos0[l]
            _cross(W, _UA, _UB, _T)  # d/dq_k (ua . ub) = w_k . (ua x ub) on a's path, w_k . (ub x ua) on b's
            for k in range(S.shape[0]):
                s = S[k, 0] * W[_T, 0] + S[k, 1] * W[_T, 1] + S[k, 2] * W[_T, 2]
                if on[a, k]:
                    J[row, k] += s
                if on[b, k]:
                    J[row, k] -= s
            if with_bias:
                for side in range(2):
                    body, at, vel, acc = (a, _UA, _VA, _AA) if side == 0 else (b, _UB, _VB, _AB)
                    _direction_motion(V, A, body, W, at, vel, acc)
                bias[row] = (
                    W[_AA, 0] * W[_UB, 0]
                    + W[_AA, 1] * W[_UB, 1]
                    + W[_AA, 2] * W[_UB, 2]
                    + 2.0 * (W[_VA, 0] * W[_VB, 0] + W[_VA, 1] * W[_VB, 1] + W[_VA, 2] * W[_VB, 2])
                    + W[_UA, 0] * W[_AB, 0]
                    + W[_UA, 1] * W[_AB, 1]
                    + W[_UA, 2] * W[_AB, 2]
                )
            row += 1
        elif c == CODE_P:  # same orientation (above), offset along the axis
            _rotate(W, _RA, axes, l, 0, _UA)
            for k in range(3):
                W[_T, k] = W[_PB, k] - W[_PA, k]
            _cross(W, _T, _UA, _UB)
            for k in range(3):
                r[row + k] = W[_UB, k]
            for k in range(S.shape[0]):  # d(d x u) = dd x u + d x du, du = w_k x u on a's path
                for s in range(3):
                    W[_DD, s] = 0.0
                    W[_DU, s] = 0.0
                if on[b, k]:
                    W[_DD, 0] += S[k, 3] + S[k, 1] * W[_PB, 2] - S[k, 2] * W[_PB, 1]
                    W[_DD, 1] += S[k, 4] + S[k, 2] * W[_PB, 0] - S[k, 0] * W[_PB, 2]
                    W[_DD, 2] += S[k, 5] + S[k, 0] * W[_PB, 1] - S[k, 1] * W[_PB, 0]
                if on[a, k]:
                    W[_DD, 0] -= S[k, 3] + S[k, 1] * W[_PA, 2] - S[k, 2] * W[_PA, 1]
                    W[_DD, 1] -= S[k, 4] + S[k, 2] * W[_PA, 0] - S[k, 0] * W[_PA, 2]
                    W[_DD, 2] -= S[k, 5] + S[k, 0] * W[_PA, 1] - S[k, 1] * W[_PA, 0]
                    _cross_row(S, k, W, _UA, _DU)
                _cross(W, _DD, _UA, _X)
                _cross(W, _T, _DU, _UB)
                for s in range(3):
                    J[row + s, k] = W[_X, s] + W[_UB, s]
            if with_bias:  # (d x u)'' = d'' x u + 2 d' x u' + d x u''
                for side in range(2):
                    body, at, vel, acc = (b, _PB, _VB, _AB) if side == 0 else (a, _PA, _VA, _AA)
                    _point_motion(V, A, body, W, at, vel, acc)
                for k in range(3):
                    W[_VB, k] -= W[_VA, k]
                    W[_AB, k] -= W[_AA, k]
                _direction_motion(V, A, a, W, _UA, _WA, _XA)
                _cross(W, _AB, _UA, _X)
                _cross(W, _VB, _WA, _WB)
                _cross(W, _T, _XA, _XB)
                for k in range(3):
                    bias[row + k] = W[_X, k] + 2.0 * W[_WB, k] + W[_XB, k]
            row += 3
    return row


def loop_pga(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, axes, cos0):
    """The readable twin of :func:`loop_kernel`: the residual r (m,), Jacobian J (m, nq) and bias
    Jd qd (m,) of the loop joints written with :mod:`pga_dyn.pga`. Same inputs (T, S, V, A of
    :func:`pga_dyn.kinematics.forward` with qdd = 0 and no gravity); slow, for the tests.

    Each loop's frame on its parent body a and child body b is moved by the body's motor: its
    origin is a Euclidean point P, its axes ideal points u. A coordinate k moves a point or
    direction X of a body it carries at the commutator X x L_k with its Jacobian line (eq. 34);
    the bias is the acceleration of X with qdd = 0 (eq. 35, no gravity). The residuals are
    those of the module docstring, differences of those points and directions."""
    from .. import pga

    nq = S.shape[0]
    lines = [pga.line(L[:3], L[3:]) for L in S]
    rows_r, rows_J, rows_b = [], [], []

    def track(b, frame, X):
        """X (a point or direction in the loop frame on body b) in the world: its coordinates (3,),
        dX/dq (3, nq) and its bias acceleration (3,)."""
        world = pga.sandwich(pga.motor_from_matrix(T[b] @ frame), X)
        Vb, Ab = pga.line(V[b, :3], V[b, 3:]), pga.line(A[b, :3], A[b, 3:])
        dX = np.zeros((3, nq))
        for k in range(nq):
            if on[b, k]:
                dX[:, k] = pga.point_coords(pga.commutator(world, lines[k]))[:3]
        return (
            pga.point_coords(world)[:3],
            dX,
            pga.point_coords(pga.commutator(world, Vb))[:3],
            pga.point_coords(pga.acceleration(world, Vb, Ab))[:3],
        )

    for l in range(kind.shape[0]):
        a, b, c = lpar[l], lchi[l], kind[l]
        if c == CODE_SPIN:  # (w_b - w_a) . u_b: the angular parts of the lines and twists
            ub, eb, u0, e0 = (
                pga.point_coords(pga.sandwich(pga.motor_from_matrix(T[body] @ F[l]), pga.direction(*axes[l, j])))[:3]
                for body, F, j in ((b, Fc, 0), (b, Fc, 1), (a, Fp, 0), (a, Fp, 1))
            )
            k, c = np.cross(u0, ub), u0 @ ub
            et = e0 + np.cross(k, e0) + np.cross(k, np.cross(k, e0)) / (1.0 + c)  # the smallest rotation's
            rows_r.append([np.cross(et, eb) @ ub])
            rows_J.append(np.array([(float(on[b, k]) - float(on[a, k])) * (S[k, :3] @ ub) for k in range(nq)])[None])
            rows_b.append([(A[b, :3] - A[a, :3]) @ ub + (V[b, :3] - V[a, :3]) @ np.cross(V[b, :3], ub)])
            continue
        centre = [track(a, Fp[l], pga.point(0.0, 0.0, 0.0)), track(b, Fc[l], pga.point(0.0, 0.0, 0.0))]
        if c != CODE_P:  # R, U, S: the centre is shared
            (pa, dpa, _, ppa), (pb, dpb, _, ppb) = centre
            rows_r.append(pb - pa)
            rows_J.append(dpb - dpa)
            rows_b.append(ppb - ppa)
        if c == CODE_R:  # the axis directions coincide
            (ua, dua, _, uua), (ub, dub, _, uub) = (
                track(a, Fp[l], pga.direction(*axes[l, 0])),
                track(b, Fc[l], pga.direction(*axes[l, 0])),
            )
            rows_r.append(ub - ua)
            rows_J.append(dub - dua)
            rows_b.append(uub - uua)
        elif c == CODE_U:  # (R_a u1) . (R_b u2) = cos0
            (ua, dua, vua, uua), (ub, dub, vub, uub) = (
                track(a, Fp[l], pga.direction(*axes[l, 0])),
                track(b, Fc[l], pga.direction(*axes[l, 1])),
            )
            rows_r.append([ua @ ub - cos0[l]])
            rows_J.append((ub @ dua + ua @ dub)[None])
            rows_b.append([uua @ ub + 2.0 * vua @ vub + ua @ uub])
        elif c == CODE_P:  # same orientation, offset along the axis
            for e in np.eye(3):
                (ea, dea, _, eea), (eb, deb, _, eeb) = (
                    track(a, Fp[l], pga.direction(*e)),
                    track(b, Fc[l], pga.direction(*e)),
                )
                rows_r.append(eb - ea)
                rows_J.append(deb - dea)
                rows_b.append(eeb - eea)
            (pa, dpa, vpa, ppa), (pb, dpb, vpb, ppb) = centre
            ua, dua, vua, uua = track(a, Fp[l], pga.direction(*axes[l, 0]))
            d, dd, vd, pd = pb - pa, dpb - dpa, vpb - vpa, ppb - ppa
            rows_r.append(np.cross(d, ua))
            rows_J.append(np.cross(dd.T, ua).T + np.cross(d, dua.T).T)
            rows_b.append(np.cross(pd, ua) + 2.0 * np.cross(vd, vua) + np.cross(d, uua))
    if not rows_r:
        return np.zeros(0), np.zeros((0, nq)), np.zeros(0)
    return np.concatenate(rows_r), np.vstack(rows_J), np.concatenate(rows_b)


@njit(cache=True)
def residual_rows(kind):
    """m, the rows of the residual of the loop joints of codes ``kind`` (l,) (:data:`LOOP_ROWS`)."""
    m = np.int64(0)  # not a numba literal: one compiled version of the helpers that take m
    for l in range(kind.shape[0]):
        m += ROWS_BY_CODE[kind[l]]
    return m


@njit(cache=True)
def motion_kernel(parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, q, qd):
    """Residual r, Jacobian J (m, nq) and bias Jd qd (m,) of the loops at (q, qd): :func:`loop_kernel`
    on :func:`pga_dyn.kinematics.forward`; twin: :func:`loop_pga` on
    :func:`pga_dyn.kinematics.forward_pga`."""
    n = parent.shape[0] - 1
    nq = q.shape[0]
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.empty((n + 1, 6)), np.empty((n + 1, 6))
    forward(parent, code, origin, axes, qidx, np.zeros(6), q, qd, np.zeros(nq), T, S, V, A)
    m = residual_rows(kind)
    r, J, bias = np.empty(m), np.empty((m, nq)), np.empty(m)
    loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, bias.shape[0] > 0, r, J, bias, loop_work())
    return r, J, bias


# -- the arrays the kernels read --------------------------------------------------------------------
def kernel_arrays(robot: Robot, locks=()) -> tuple:
    """The arguments of :func:`motion_kernel` before (q, qd), all read-only (one compiled signature
    per kernel): the tree's (parent, code, origin, axes, qidx) of
    :func:`pga_dyn.kinematics.robot_arrays`; on (n + 1, nq), True where tree coordinate k moves
    body b; and per loop joint its code kind (l,), parent and child bodies lpar, lchi (l,), joint
    frames Fp, Fc (l, 4, 4) in those bodies, axes laxes (l, 2, 3) and cos0 (l,), the cosine of a U
    joint's angle at q0 (0 for the others). ``locks``: (body, u (3,) in its frame, R_ref (3, 3)
    its orientation at the reference) of each spin lock, appended after the loop joints (code
    CODE_SPIN, relative to the world: F_a = R_ref, F_b the identity; axes u and a unit e normal
    to it, the spin angle's zero)."""
    n, nq = robot.n, robot.nq
    on = np.zeros((n + 1, nq), dtype=np.bool_)
    for b in range(1, n + 1):
        for k in robot.support(b):
            on[b, robot.coordinates(k)] = True
    loops = robot.loop_joints
    kind = np.array([JOINT_CODE[lp.type] for lp in loops], dtype=np.int64)
    lpar = np.array([lp.parent for lp in loops], dtype=np.int64)
    lchi = np.array([lp.child for lp in loops], dtype=np.int64)
    Fp = np.array([lp.parent_frame for lp in loops], dtype=float).reshape(-1, 4, 4)
    Fc = np.array([lp.child_frame for lp in loops], dtype=float).reshape(-1, 4, 4)
    laxes = np.zeros((len(loops), 2, 3))
    for l, lp in enumerate(loops):
        laxes[l, : len(lp.axes)] = lp.axes
    parent, code, origin, axes, qidx, _ = robot_arrays(robot)
    cos0 = _angles_at_q0(robot, kind, lpar, lchi, Fp, Fc, laxes)
    if len(locks):
        kind = np.concatenate([kind, np.full(len(locks), CODE_SPIN, dtype=np.int64)])
        lpar = np.concatenate([lpar, np.zeros(len(locks), dtype=np.int64)])
        lchi = np.concatenate([lchi, np.array([b for b, _, _ in locks], dtype=np.int64)])
        references = np.repeat(np.eye(4)[None], len(locks), axis=0)
        references[:, :3, :3] = [R for _, _, R in locks]
        Fp = np.concatenate([Fp, references])
        Fc = np.concatenate([Fc, np.repeat(np.eye(4)[None], len(locks), axis=0)])
        laxes = np.concatenate([laxes, np.array([[u, _normal(u)] for _, u, _ in locks], dtype=float)])
        cos0 = np.concatenate([cos0, np.zeros(len(locks))])
    args = (parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0)
    for array in args:
        array.flags.writeable = False
    return args


def _normal(u) -> np.ndarray:
    """A unit vector normal to the unit vector u (3,): u x e_k for the axis e_k least along u."""
    n = np.cross(u, np.eye(3)[np.argmin(np.abs(u))])
    return n / np.linalg.norm(n)


def _angles_at_q0(robot: Robot, kind, lpar, lchi, Fp, Fc, laxes) -> np.ndarray:
    """cos of the angle between the two axes of each U loop joint at q0, its constant angle (0 for
    the other loop joints), (loops,)."""
    T = initial_poses(robot)
    cos0 = np.zeros(len(kind))
    for l in range(len(kind)):
        if kind[l] == CODE_U:
            ua = T[lpar[l], :3, :3] @ Fp[l, :3, :3] @ laxes[l, 0]
            ub = T[lchi[l], :3, :3] @ Fc[l, :3, :3] @ laxes[l, 1]
            cos0[l] = ua @ ub
    return cos0


def coupling_map(robot: Robot):
    """The affine map q = E z + e0 (E: (nq, nz), e0: (nq,)) that solves the couplings, with the free
    coordinates z = (q_a, q_f): the actuated coordinates, then the passive ones that no coupling
    determines, in tree order; and the indices of z in q (nz,). Chains of couplings are
    substituted (a follower of a follower, a leader among ``others``; the model has no cycle of
    couplings)."""
    nq = robot.nq
    follow = {c.follower: c for c in robot.couplings}
    free = [k for k in range(nq) if k not in follow]
    column = {k: j for j, k in enumerate(sorted(free, key=lambda k: (k not in set(robot.actuated), k)))}
    z_index = np.array(sorted(column, key=column.get), dtype=np.int64)
    E, e0 = np.zeros((nq, len(column))), np.zeros(nq)
    state = {}

    def solve(k):  # the model refuses a cycle of couplings (Robot._actuation)
        if k in column:
            row = np.zeros(len(column))
            row[column[k]] = 1.0
            return row, 0.0
        if k in state:
            return state[k]
        c = follow[k]
        row, offset = np.zeros(len(column)), c.offset
        for leader, weight in ((c.leader, c.ratio), *c.others):
            lead_row, lead_offset = solve(leader)
            row, offset = row + weight * lead_row, offset + weight * lead_offset
        state[k] = (row, offset)
        return state[k]

    for k in range(nq):
        E[k], e0[k] = solve(k)
    return E, e0, z_index
