"""Closed loops and couplings: constraints C(q) = 0, assembly, and the projection onto q_a.

A constrained robot is a spanning tree plus loop joints and couplings (DRNG paper section 5.1,
URDF+). Its configuration is fixed by the actuated coordinates q_a; the passive ones follow
from the constraints (eq. 91)

    C(q) = 0,   J_a qd_a + J_p qd_p = 0 (eq. 92),   J qdd + Jd qd = 0.

**Couplings** (URDF ``<mimic>``, URDF+ ``<coupling>``) are linear, q_f = r q_l + c, and are
solved in closed form, never by Newton: substituting them (chains included) gives an affine
map q = E z + e0 from the free coordinates z = (q_a, q_f), q_f the passive coordinates that
no coupling determines. A robot with couplings and no loops has q_f empty: q = E q_a + e0 and
G = dq/dq_a = E is constant, exact at any ratio and over any range.

**Loop joints** between a parent body a and a child body b, with joint frames F_a and F_b
(origins p_a, p_b), state that the two bodies share points and lines:

* S: the centre is shared, p_b - p_a = 0;
* U: the centre is shared and the two axes keep the angle they have at q0:
  p_b - p_a = 0 and (R_a u1) . (R_b u2) = cos(angle at q0) (u1 fixed in a, u2 fixed in b);
* R: the centre and the axis are shared: p_b - p_a = 0, R_b u - R_a u = 0 (the directions,
  not only the lines: a cross product would also vanish for a body turned over);
* P: the orientation is shared and the offset lies along the axis: R_b e_k - R_a e_k = 0
  (k = 1, 2, 3) and (p_b - p_a) x (R_a u) = 0.

Velocities of the points and directions come from the Jacobian lines of the tree (a point p
on a body moves with dp/dq_k = m_k + d_k x p for every line L_k = (d_k; m_k) on the body's
path, a direction u with d_k x u), so the constraint Jacobian is exact. The R and P residuals
have 6 and 12 rows of rank 5, and planar loops are over-constrained in space: the Newton
steps are least-squares solutions (Householder QR), which handles both.

**Assembly** (:meth:`Constraints.assemble`) is compiled (:func:`newton_kernel`): Newton's
method on q_f along a path of actuated positions from a start that is assembled already (by
default the reference configuration: q0, with its passive coordinates closed when the file's
q0 is not assembled), with a predictor step from the tangent dq_f/dq_a. Following the path
keeps the solution on the assembly branch of the start (the assembly mode of q0);
a path that leaves the workspace fails, and the draw is rejected; a state whose J_f is
singular is refused. Loops that share no coordinate moving one of a loop's bodies relative to
the other are independent (:class:`Part`): each part is solved, watched for singularities and
sampled on its own (:meth:`Constraints._parts`), so sixty independent four-bars cost sixty small
solves, not one solve of all their coordinates, and a draw is not lost because one of them
meets a singularity.

The regressor with respect to q_a is the projection of the tree regressor: with
G = dq/dq_a = E [I; -J_f^+ J_z,a] (rows in tree order), L_j^i = sum_k L_k dq_k/dq_j (eq. 52)
and Y_a = G^T Y_tree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import networkx as nx
import numpy as np
from numba import njit

from .conventions import CODE_P, CODE_R, CODE_U, JOINT_CODE, LOOP_JOINT_TYPES
from .errors import ModelError, PgaDynError, PgaDynWarning
from .kinematics import forward, initial_poses, robot_arrays, so3_exp
from .model import Robot

#: Rows of the residual of each loop-joint type, and the same by joint code for the kernels.
LOOP_ROWS = {"R": 6, "P": 12, "U": 4, "S": 3}
ROWS_BY_CODE = np.array([LOOP_ROWS[t] for t in sorted(LOOP_JOINT_TYPES, key=JOINT_CODE.get)], dtype=np.int64)
#: Residual norm below which a loop is closed (m, or unit-vector differences).
CLOSURE_TOL = 1e-9
#: Residual norm the assembly aims at: residuals of 1e-12 leave errors near 1e-11 (relative) in
#: the sampled regressor, too close to the certificate's threshold of 1e-10 (a chain of eight
#: four-bars; docs/drng.md). A model whose round-off floor is above it stops at the floor,
#: which must lie below FLOOR_TOL.
ASSEMBLY_TOL = 1e-14
FLOOR_TOL = 1e-11
#: Longest step of the actuated coordinates along an assembly path (rad or m).
PATH_STEP = 0.2
#: Steps (rad or m, every actuated coordinate) from a singular reference configuration towards
#: the regular one the samples start from (:meth:`Constraints.close_reference`).
REFERENCE_STEP = 0.1
REFERENCE_STEPS = 10
#: An assembly path slows down where the reciprocal condition estimate of J_f falls below
#: PATH_SLOW times its value at the reference configuration; sampling stops a path where it
#: falls below PATH_LIMIT times that value (:func:`newton_kernel`).
PATH_SLOW = 0.1
PATH_LIMIT = 0.01
#: Reciprocal condition (smallest over largest |R_ii| of the QR of J_f) below which the
#: predictor step of an assembly path is skipped.
SINGULAR_RCOND = 1e-8
#: A singular value of J_f at or below SINGULAR_S times the largest (or 1) makes J_f singular.
SINGULAR_S = 1e-12


# -- compiled kernels -------------------------------------------------------------------------------
@njit(cache=True)
def _point_rows(S, on, b, p, sign, J, row):
    """J[row:row+3, k] += sign dp/dq_k = sign (m_k + d_k x p) for the coordinates k moving body b."""
    for k in range(S.shape[0]):
        if on[b, k]:
            d = S[k]
            J[row, k] += sign * (d[3] + d[1] * p[2] - d[2] * p[1])
            J[row + 1, k] += sign * (d[4] + d[2] * p[0] - d[0] * p[2])
            J[row + 2, k] += sign * (d[5] + d[0] * p[1] - d[1] * p[0])


@njit(cache=True)
def _direction_rows(S, on, b, u, sign, J, row):
    """J[row:row+3, k] += sign du/dq_k = sign d_k x u for the coordinates k moving body b."""
    for k in range(S.shape[0]):
        if on[b, k]:
            d = S[k]
            J[row, k] += sign * (d[1] * u[2] - d[2] * u[1])
            J[row + 1, k] += sign * (d[2] * u[0] - d[0] * u[2])
            J[row + 2, k] += sign * (d[0] * u[1] - d[1] * u[0])


@njit(cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def _point_motion(V, A, b, p, vel, acc):
    """Velocity and acceleration (qdd = 0, no gravity: the bias part) of point p on body b."""
    w = V[b, :3]
    t = np.empty(3)
    _cross(w, p, vel)
    for r in range(3):
        vel[r] += V[b, 3 + r]
    _cross(A[b, :3], p, acc)
    _cross(w, vel, t)
    for r in range(3):
        acc[r] += A[b, 3 + r] + t[r]


@njit(cache=True)
def _direction_motion(V, A, b, u, vel, acc):
    """Velocity w x u and bias acceleration a x u + w x (w x u) of direction u on body b."""
    t = np.empty(3)
    _cross(V[b, :3], u, vel)
    _cross(A[b, :3], u, acc)
    _cross(V[b, :3], vel, t)
    for r in range(3):
        acc[r] += t[r]


@njit(cache=True)
def _rotate(R, v, out):
    """out = R v for R (3, 3) and v (3,)."""
    for k in range(3):
        out[k] = R[k, 0] * v[0] + R[k, 1] * v[1] + R[k, 2] * v[2]


@njit(cache=True)
def _coincide(point, S, V, A, on, a, b, xa, xb, with_bias, r, J, bias, row, va, aa, vb, ab):
    """The 3 rows of x_b - x_a = 0 for two points (``point``) or two directions x_a, x_b moving
    with bodies a and b (in the world): residual, Jacobian rows and, ``with_bias``, the bias."""
    for k in range(3):
        r[row + k] = xb[k] - xa[k]
    if point:
        _point_rows(S, on, b, xb, 1.0, J, row)
        _point_rows(S, on, a, xa, -1.0, J, row)
    else:
        _direction_rows(S, on, b, xb, 1.0, J, row)
        _direction_rows(S, on, a, xa, -1.0, J, row)
    if with_bias:
        if point:
            _point_motion(V, A, b, xb, vb, ab)
            _point_motion(V, A, a, xa, va, aa)
        else:
            _direction_motion(V, A, b, xb, vb, ab)
            _direction_motion(V, A, a, xa, va, aa)
        for k in range(3):
            bias[row + k] = ab[k] - aa[k]


@njit(cache=True)
def _frame(T, F, R, p):
    """Rotation R (3x3) and origin p of the frame F (4x4, in the body frame) of a body at pose T."""
    for r in range(3):
        for c in range(3):
            R[r, c] = T[r, 0] * F[0, c] + T[r, 1] * F[1, c] + T[r, 2] * F[2, c]
        p[r] = T[r, 0] * F[0, 3] + T[r, 1] * F[1, 3] + T[r, 2] * F[2, 3] + T[r, 3]


@njit(cache=True)
def loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, axes, cos0, with_bias, r, J, bias):
    """Residual r (m,), Jacobian J (m, nq) and, ``with_bias``, the bias Jd qd (m,) of the loop
    joints at a tree state (T, S from :func:`pga_dyn.kinematics.forward`; V, A its twists and
    accelerations with qdd = 0 and no gravity). Rows per loop: :data:`LOOP_ROWS`. Readable twin:
    :func:`loop_pga`."""
    Ra, Rb = np.empty((3, 3)), np.empty((3, 3))
    pa, pb = np.empty(3), np.empty(3)
    ua, ub, t = np.empty(3), np.empty(3), np.empty(3)
    va, aa, vb, ab = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    wa, xa, wb, xb = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    J[:, :] = 0.0
    row = np.int64(0)  # not numba literals: one compiled version of the row helpers
    point, direction = np.bool_(True), np.bool_(False)
    for l in range(kind.shape[0]):
        a, b, c = lpar[l], lchi[l], kind[l]
        _frame(T[a], Fp[l], Ra, pa)
        _frame(T[b], Fc[l], Rb, pb)
        if c != CODE_P:  # R, U, S: the centre is shared
            _coincide(point, S, V, A, on, a, b, pa, pb, with_bias, r, J, bias, row, va, aa, vb, ab)
            row += 3
        if c == CODE_R:  # the axis directions coincide
            _rotate(Ra, axes[l, 0], ua)
            _rotate(Rb, axes[l, 0], ub)
            _coincide(direction, S, V, A, on, a, b, ua, ub, with_bias, r, J, bias, row, va, aa, vb, ab)
            row += 3
        elif c == CODE_U:  # the axes keep their angle, (R_a u1) . (R_b u2) = cos0
            _rotate(Ra, axes[l, 0], ua)
            _rotate(Rb, axes[l, 1], ub)
            r[row] = ua[0] * ub[0] + ua[1] * ub[1] + ua[2] * ub[2] - cos0[l]
            _cross(ua, ub, t)  # d/dq_k (ua . ub) = w_k . (ua x ub) on a's path, w_k . (ub x ua) on b's
            for k in range(S.shape[0]):
                s = S[k, 0] * t[0] + S[k, 1] * t[1] + S[k, 2] * t[2]
                if on[a, k]:
                    J[row, k] += s
                if on[b, k]:
                    J[row, k] -= s
            if with_bias:
                _direction_motion(V, A, a, ua, va, aa)
                _direction_motion(V, A, b, ub, vb, ab)
                bias[row] = (aa[0] * ub[0] + aa[1] * ub[1] + aa[2] * ub[2]
                             + 2.0 * (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2])
                             + ua[0] * ab[0] + ua[1] * ab[1] + ua[2] * ab[2])
            row += 1
        elif c == CODE_P:  # same orientation, offset along the axis
            for e in range(3):
                for k in range(3):
                    ua[k] = Ra[k, e]
                    ub[k] = Rb[k, e]
                _coincide(direction, S, V, A, on, a, b, ua, ub, with_bias, r, J, bias, row, va, aa, vb, ab)
                row += 3
            _rotate(Ra, axes[l, 0], ua)
            for k in range(3):
                t[k] = pb[k] - pa[k]
            _cross(t, ua, ub)
            for k in range(3):
                r[row + k] = ub[k]
            dd, du, x = np.empty(3), np.empty(3), np.empty(3)
            for k in range(S.shape[0]):  # d(d x u) = dd x u + d x du, du = w_k x u on a's path
                d = S[k]
                for s in range(3):
                    dd[s] = 0.0
                    du[s] = 0.0
                if on[b, k]:
                    dd[0] += d[3] + d[1] * pb[2] - d[2] * pb[1]
                    dd[1] += d[4] + d[2] * pb[0] - d[0] * pb[2]
                    dd[2] += d[5] + d[0] * pb[1] - d[1] * pb[0]
                if on[a, k]:
                    dd[0] -= d[3] + d[1] * pa[2] - d[2] * pa[1]
                    dd[1] -= d[4] + d[2] * pa[0] - d[0] * pa[2]
                    dd[2] -= d[5] + d[0] * pa[1] - d[1] * pa[0]
                    _cross(d[:3], ua, du)
                _cross(dd, ua, x)
                _cross(t, du, ub)
                for s in range(3):
                    J[row + s, k] = x[s] + ub[s]
            if with_bias:  # (d x u)'' = d'' x u + 2 d' x u' + d x u''
                _point_motion(V, A, b, pb, vb, ab)
                _point_motion(V, A, a, pa, va, aa)
                for k in range(3):
                    vb[k] -= va[k]
                    ab[k] -= aa[k]
                _direction_motion(V, A, a, ua, wa, xa)
                _cross(ab, ua, x)
                _cross(vb, wa, wb)
                _cross(t, xa, xb)
                for k in range(3):
                    bias[row + k] = x[k] + 2.0 * wb[k] + xb[k]
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
    from . import pga

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
        return (pga.point_coords(world)[:3], dX, pga.point_coords(pga.commutator(world, Vb))[:3],
                pga.point_coords(pga.acceleration(world, Vb, Ab))[:3])

    for l in range(kind.shape[0]):
        a, b, c = lpar[l], lchi[l], kind[l]
        centre = [track(a, Fp[l], pga.point(0.0, 0.0, 0.0)), track(b, Fc[l], pga.point(0.0, 0.0, 0.0))]
        if c != CODE_P:  # R, U, S: the centre is shared
            (pa, dpa, _, ppa), (pb, dpb, _, ppb) = centre
            rows_r.append(pb - pa)
            rows_J.append(dpb - dpa)
            rows_b.append(ppb - ppa)
        if c == CODE_R:  # the axis directions coincide
            (ua, dua, _, uua), (ub, dub, _, uub) = (track(a, Fp[l], pga.direction(*axes[l, 0])),
                                                    track(b, Fc[l], pga.direction(*axes[l, 0])))
            rows_r.append(ub - ua)
            rows_J.append(dub - dua)
            rows_b.append(uub - uua)
        elif c == CODE_U:  # (R_a u1) . (R_b u2) = cos0
            (ua, dua, vua, uua), (ub, dub, vub, uub) = (track(a, Fp[l], pga.direction(*axes[l, 0])),
                                                        track(b, Fc[l], pga.direction(*axes[l, 1])))
            rows_r.append([ua @ ub - cos0[l]])
            rows_J.append((ub @ dua + ua @ dub)[None])
            rows_b.append([uua @ ub + 2.0 * vua @ vub + ua @ uub])
        elif c == CODE_P:  # same orientation, offset along the axis
            for e in np.eye(3):
                (ea, dea, _, eea), (eb, deb, _, eeb) = (track(a, Fp[l], pga.direction(*e)),
                                                        track(b, Fc[l], pga.direction(*e)))
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
def _reflect(v, j, vnorm, X, first):
    """X[j:, first:] <- (I - 2 v v^T / v^T v) X[j:, first:], v (m,) nonzero from row j on."""
    for c in range(first, X.shape[1]):
        s = 0.0
        for i in range(j, X.shape[0]):
            s += v[i] * X[i, c]
        s *= 2.0 / vnorm
        for i in range(j, X.shape[0]):
            X[i, c] -= s * v[i]


@njit(cache=True)
def qr_solve(M, B, X):
    """Least-squares solution X (k, c) of M X = B for M (m, k), m >= k, by Householder QR (M and B
    are overwritten; twin: ``numpy.linalg.lstsq``). Returns min |R_ii| / max |R_ii|, 0 when M has fewer rows than columns or a
    zero column: an estimate of the reciprocal condition number (0: no solution was written)."""
    m, k = M.shape
    if m < k:
        return 0.0
    v = np.empty(m)
    whole = np.int64(0)  # B's first column: not a numba literal, one compiled _reflect
    for j in range(k):
        norm = 0.0
        for i in range(j, m):
            norm += M[i, j] * M[i, j]
        norm = np.sqrt(norm)
        if norm == 0.0:
            return 0.0
        alpha = -norm if M[j, j] >= 0.0 else norm
        vnorm = 0.0
        for i in range(j, m):
            v[i] = M[i, j]
        v[j] -= alpha
        for i in range(j, m):
            vnorm += v[i] * v[i]
        if vnorm > 0.0:  # M <- (I - 2 v v^T / v^T v) M, and B likewise
            _reflect(v, j, vnorm, M, j)
            _reflect(v, j, vnorm, B, whole)
    big, small = 0.0, np.inf
    for j in range(k):
        big = max(big, abs(M[j, j]))
        small = min(small, abs(M[j, j]))
    if small == 0.0:
        return 0.0
    for c in range(B.shape[1]):  # back substitution R X = Q^T B
        for j in range(k - 1, -1, -1):
            s = B[j, c]
            for i in range(j + 1, k):
                s -= M[j, i] * X[i, c]
            X[j, c] = s / M[j, j]
    return small / big


@njit(cache=True)
def so3_log(R):
    """The rotation vector r with so3_exp(r) = R, |r| <= pi (from the unit quaternion, stable at
    every angle); twin: the rotation part of ``pga.motor_log`` (``pga.se3_log``)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    q = np.empty(4)
    if tr > max(R[0, 0], R[1, 1], R[2, 2]):
        s = 2.0 * np.sqrt(1.0 + tr)
        q[0], q[1], q[2], q[3] = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q[0], q[1], q[2], q[3] = (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q[0], q[1], q[2], q[3] = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q[0], q[1], q[2], q[3] = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s
    if q[0] < 0.0:
        for k in range(4):
            q[k] = -q[k]
    sin_half = np.sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    half = np.arctan2(sin_half, q[0])
    scale = 2.0 * half / sin_half if sin_half > 1e-12 else 2.0 / q[0]
    out = np.empty(3)
    for k in range(3):
        out[k] = scale * q[k + 1]
    return out


@njit(cache=True)
def _coordinates(E, e0, z, q):
    """q = E z + e0: the tree coordinates of the free coordinates z."""
    for i in range(q.shape[0]):
        s = e0[i]
        for j in range(z.shape[0]):
            s += E[i, j] * z[j]
        q[i] = s


@njit(cache=True)
def _update(z, dx, na, spherical, scale):
    """z_f += scale dx; a spherical joint's rotation is composed, exp(r'^) = exp(r^) exp(dw^)."""
    for j in range(dx.shape[0]):
        z[na + j] += scale * dx[j]
    for s in range(spherical.shape[0]):
        k = spherical[s]  # its three free coordinates start at z[k]
        r = z[k:k + 3].copy()
        for c in range(3):
            r[c] -= scale * dx[k - na + c]
        Ra = so3_exp(r)
        Rb = so3_exp(scale * dx[k - na:k - na + 3])
        R = np.empty((3, 3))
        for i in range(3):
            for c in range(3):
                R[i, c] = Ra[i, 0] * Rb[0, c] + Ra[i, 1] * Rb[1, c] + Ra[i, 2] * Rb[2, c]
        r = so3_log(R)
        for c in range(3):  # a loop, not a slice assignment (numba's shape checks compile for seconds)
            z[k + c] = r[c]


@njit(cache=True)
def _jacobian_free(J, E, na, rows, out):
    """out (rows, nz) = J[:rows] E: the constraint Jacobian in the free coordinates."""
    for i in range(rows):
        for j in range(E.shape[1]):
            s = 0.0
            for k in range(E.shape[0]):
                s += J[i, k] * E[k, j]
            out[i, j] = s


@njit(cache=True)
def _orientation(Jz, na, Q):
    """Q (m, nf): the columns of J_f = Jz[:, na:] made orthonormal by modified Gram-Schmidt; the
    frame in which the next point's J_f must keep a positive determinant. False when J_f is
    rank-deficient."""
    m, nf = Q.shape
    for j in range(nf):
        for i in range(m):
            Q[i, j] = Jz[i, na + j]
        for k in range(j):
            s = 0.0
            for i in range(m):
                s += Q[i, k] * Q[i, j]
            for i in range(m):
                Q[i, j] -= s * Q[i, k]
        norm = 0.0
        for i in range(m):
            norm += Q[i, j] * Q[i, j]
        norm = np.sqrt(norm)
        if norm == 0.0:
            return False
        for i in range(m):
            Q[i, j] /= norm
    return True


@njit(cache=True)
def _same_orientation(Q, Jz, na):
    """Whether det(Q^T J_f) > 0 for J_f = Jz[:, na:] (Gaussian elimination with partial pivoting):
    J_f has not passed through a singular configuration since Q was taken (at a regular point
    det(Q^T J_f) = det(R) > 0; it changes sign where J_f crosses a singularity)."""
    m, nf = Q.shape
    B = np.empty((nf, nf))
    for a in range(nf):
        for b in range(nf):
            s = 0.0
            for i in range(m):
                s += Q[i, a] * Jz[i, na + b]
            B[a, b] = s
    sign = 1.0
    for k in range(nf):
        p = k
        for i in range(k + 1, nf):
            if abs(B[i, k]) > abs(B[p, k]):
                p = i
        if B[p, k] == 0.0:
            return False
        if p != k:
            for c in range(nf):
                B[k, c], B[p, c] = B[p, c], B[k, c]
            sign = -sign
        if B[k, k] < 0.0:
            sign = -sign
        for i in range(k + 1, nf):
            f = B[i, k] / B[k, k]
            for c in range(k, nf):
                B[i, c] -= f * B[k, c]
    return sign > 0.0


@njit(cache=True)
def newton_kernel(parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0,
                  E, e0, na, spherical, z, target, tol, max_iter, rcond_ref, min_rcond):
    """Assemble: move the actuated part of z (nz,) to ``target`` (na,) along a straight path,
    solving the loop constraints for the free passive part z[na:] by Newton's method on the
    exact Jacobian J_f = J E[:, na:] at every step, with a tangent predictor dz_f = -J_f^+ J_a
    dq_a (skipped where J_f is singular). The Newton steps are Levenberg-Marquardt steps,
    min |J_f dx + r|^2 + mu^2 |dx|^2 with mu = |r| (Yamashita and Fukushima: quadratic
    convergence at regular solutions, progress from singular starts such as a flat linkage),
    at most 0.5 long, to a residual below ``tol`` at the end of the path (or at the round-off
    floor of the model, when that is above ``tol`` but below FLOOR_TOL). z is updated in place.

    The steps are at most PATH_STEP long in q_a, and shorter near a singularity: scaled by
    rho / (PATH_SLOW rcond_ref) when the reciprocal condition estimate rho of J_f (from its
    QR, :func:`qr_solve`) falls below PATH_SLOW rcond_ref (rcond_ref: rho at the start of the
    paths, the reference configuration), and never below PATH_STEP / 1000. With ``min_rcond`` >
    0 (a path that must stay in the regular region of its start, on one assembly branch) a
    path stops (status 2) where rho falls below ``min_rcond`` or where det(Q^T J_f) changes
    sign between two steps (Q: orthonormal columns of the previous J_f; the sign changes where
    the path steps over a singular configuration). Returns (status, residual): status 0
    assembled, 1 no convergence (the path leaves the workspace), 2 the path meets a
    singularity. A numerical method, not a PGA expression: its geometry is :func:`loop_kernel`
    (twin :func:`loop_pga`); the tests check what it returns, a closed configuration on the
    branch of the start."""
    nq, nz = E.shape
    nf = nz - na
    n = parent.shape[0] - 1
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.zeros((n + 1, 6)), np.zeros((n + 1, 6))
    zero, seed, q = np.zeros(nq), np.zeros(6), np.empty(nq)
    m = np.int64(0)  # not a numba literal: one compiled version of _jacobian_free
    for l in range(kind.shape[0]):
        m += ROWS_BY_CODE[kind[l]]
    r, J, bias = np.empty(m), np.empty((m, nq)), np.empty(0)
    Jz, M, B, X = np.empty((m, nz)), np.zeros((m + nf, nf)), np.zeros((m + nf, 1)), np.empty((nf, 1))
    Q = np.empty((m, nf))
    start = z[:na].copy()
    big = 0.0
    for j in range(na):
        big = max(big, abs(target[j] - start[j]))
    dt_max = PATH_STEP / big if big > 0.0 else 1.0
    watch = min_rcond > 0.0 and m >= nf
    norm = np.inf
    t = 0.0
    first = True
    while first or t < 1.0:
        if not first:  # tangent dz_f/dt and rho at the last converged point (Jz holds its Jacobian)
            if watch and not _orientation(Jz, na, Q):
                return 2, norm
            for i in range(m):
                s = 0.0
                for j in range(na):
                    s += Jz[i, j] * (target[j] - start[j])
                B[i, 0] = -s
                for j in range(nf):
                    M[i, j] = Jz[i, na + j]
            for i in range(m, m + nf):
                B[i, 0] = 0.0
                for j in range(nf):
                    M[i, j] = 0.0
            rho = qr_solve(M, B, X)
            if rho < min_rcond:
                return 2, norm
            dt = dt_max * min(1.0, max(rho / (PATH_SLOW * rcond_ref), 1e-3))
            dt = min(dt, 1.0 - t)
            if rho >= SINGULAR_RCOND:
                _update(z, X[:, 0], na, spherical, dt)
            t = 1.0 if dt >= 1.0 - t else t + dt
        first = False
        for j in range(na):
            z[j] = start[j] + t * (target[j] - start[j])
        converged = False
        last = np.inf
        for _ in range(max_iter):
            _coordinates(E, e0, z, q)
            forward(parent, code, origin, axes, qidx, seed, q, zero, zero, T, S, V, A)
            loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, bias.shape[0] > 0, r, J, bias)
            _jacobian_free(J, E, na, m, Jz)
            norm = 0.0
            for i in range(m):
                norm += r[i] * r[i]
            norm = np.sqrt(norm)
            # converged: below tol, or at the round-off floor (below FLOOR_TOL and no longer halving)
            if norm < (tol if t >= 1.0 else 1e-8) or (t >= 1.0 and norm < FLOOR_TOL and norm > 0.5 * last):
                converged = True
                break
            last = norm
            for i in range(m):
                B[i, 0] = -r[i]
                for j in range(nf):
                    M[i, j] = Jz[i, na + j]
            for i in range(nf):  # the damping rows mu I
                B[m + i, 0] = 0.0
                for j in range(nf):
                    M[m + i, j] = norm if i == j else 0.0
            qr_solve(M, B, X)
            big = 0.0
            for j in range(nf):
                big = max(big, abs(X[j, 0]))
            _update(z, X[:, 0], na, spherical, min(1.0, 0.5 / big) if big > 0.0 else 1.0)
        if not converged:
            return 1, norm
        if watch and t > 0.0 and not _same_orientation(Q, Jz, na):
            return 2, norm
    return 0, norm


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
    m = 0
    for l in range(kind.shape[0]):
        m += ROWS_BY_CODE[kind[l]]
    r, J, bias = np.empty(m), np.empty((m, nq)), np.empty(m)
    loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, bias.shape[0] > 0, r, J, bias)
    return r, J, bias


# -- the constraints of a robot ---------------------------------------------------------------------
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


class Constraints:
    """The loop and coupling constraints of a robot: assembly and projection onto q_a."""

    def __init__(self, robot: Robot):
        self.robot = robot
        n, nq = robot.n, robot.nq
        where = robot.source or robot.name
        # on[b, k]: tree coordinate k moves body b
        on = np.zeros((n + 1, nq), dtype=np.bool_)
        for b in range(1, n + 1):
            for k in robot.support(b):
                on[b, robot.coordinates(k)] = True
        self.E, self.e0, self.z_index = coupling_map(robot)
        self.na = len(robot.actuated)
        self.nf = self.E.shape[1] - self.na
        spherical = []
        column = {k: j for j, k in enumerate(self.z_index)}
        for i in range(1, n + 1):
            first = robot.coordinates(i).start
            if first in column and column[first] >= self.na and robot.joint_type[i] in ("S", "F"):
                if robot.joint_type[i] == "F":
                    raise PgaDynError(f"{where}: the floating base '{robot.joint_names[i]}' cannot be passive")
                spherical.append(column[first])
        self.spherical = np.array(spherical, dtype=np.int64)
        loops = robot.loop_joints
        self.m = sum(LOOP_ROWS[lp.type] for lp in loops)
        if self.nf > 0 and self.m < self.nf:
            raise ModelError(f"{where}: the loop joints give {self.m} equations for {self.nf} passive coordinates "
                             f"{[robot.coordinate_names[k] for k in self.z_index[self.na:]]}: the model is "
                             "under-determined")
        kind = np.array([JOINT_CODE[lp.type] for lp in loops], dtype=np.int64)
        lpar = np.array([lp.parent for lp in loops], dtype=np.int64)
        lchi = np.array([lp.child for lp in loops], dtype=np.int64)
        Fp = np.array([lp.parent_frame for lp in loops], dtype=float).reshape(-1, 4, 4)
        Fc = np.array([lp.child_frame for lp in loops], dtype=float).reshape(-1, 4, 4)
        laxes = np.zeros((len(loops), 2, 3))
        for l, lp in enumerate(loops):
            laxes[l, :len(lp.axes)] = lp.axes
        parent, code, origin, axes, qidx, _ = robot_arrays(robot)
        cos0 = _angles_at_q0(robot, kind, lpar, lchi, Fp, Fc, laxes)
        self.args = (parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0)
        for array in (*self.args, self.E, self.e0, self.z_index, self.spherical):
            array.flags.writeable = False  # read-only from the start: one compiled signature per kernel
        #: First residual row of each loop joint, and the number of rows (loops + 1,).
        self.loop_rows = np.concatenate([[0], np.cumsum([LOOP_ROWS[lp.type] for lp in loops])]).astype(np.int64)
        self.parts = self._parts(on) if self.nf else ()

    def _parts(self, on):
        """The independent parts of the loop constraints (:class:`Part`): loops that share a free
        coordinate z_j which drives (through E, the couplings) a tree coordinate moving one of a
        loop's two bodies and not the other. A tree coordinate that moves both bodies of a loop
        (or neither) moves them rigidly together, which leaves the loop's closure unchanged (its
        rows of J vanish at a closed configuration; a free coordinate coupled to two tree
        coordinates, one on each side of the loop, moves the two bodies differently and is in
        the loop's part): so each part
        is assembled, watched for singularities and sampled on its own, with the other free
        coordinates held (``tests/test_loops.py`` checks the states against Pinocchio). Every
        passive coordinate is in a part (the model checks that a loop moves it,
        ``Robot._check_determined``); a loop that no passive coordinate moves (a ball joint on
        the axis of an actuated joint) is in no part, and every assembled state is checked
        closed as a whole (:meth:`open_loops`)."""
        kind, lpar, lchi = self.args[6:9]
        cycle = (on[lpar] ^ on[lchi]).astype(np.int64)  # (loops, nq): tree coordinates on each loop's cycle
        depends = (cycle @ (self.E != 0).astype(np.int64)) > 0  # (loops, nz)
        graph = nx.Graph()
        graph.add_nodes_from(("loop", l) for l in range(len(kind)))
        graph.add_edges_from((("loop", l), ("z", j)) for l, j in zip(*np.nonzero(depends)))
        offsets = self.loop_rows
        parts = []
        for nodes in sorted(nx.connected_components(graph), key=lambda c: min(k for t, k in c if t == "loop")):
            loops = np.array(sorted(k for t, k in nodes if t == "loop"), dtype=np.int64)
            columns = np.array(sorted(k for t, k in nodes if t == "z"), dtype=np.int64)
            if np.any(columns >= self.na):  # else no passive coordinate closes it: checked, not solved
                rows = np.concatenate([np.arange(offsets[l], offsets[l + 1]) for l in loops])
                parts.append(_new_part(self, loops, columns, rows))
        return tuple(parts)

    # -- geometry of one state ----------------------------------------------------------------
    def evaluate(self, q, qd=None):
        """Loop residual r (m,), Jacobian J (m, nq) and the bias Jd qd (m,) (None without qd),
        followed by one row per coupling, q_f - r q_l - c (bias 0)."""
        robot = self.robot
        q = np.ascontiguousarray(q, dtype=float)
        r, J, bias = motion_kernel(*self.args, q, np.zeros(robot.nq) if qd is None else np.asarray(qd, float))
        rows_r, rows_J = [r], [J]
        for c in robot.couplings:
            row = np.zeros(robot.nq)
            row[c.follower] += 1.0
            for leader, weight in ((c.leader, c.ratio), *c.others):
                row[leader] -= weight
            rows_r.append([row @ q - c.offset])
            rows_J.append(row[None])
        r, J = np.concatenate(rows_r), np.vstack(rows_J)
        return r, J, (np.concatenate([bias, np.zeros(len(robot.couplings))]) if qd is not None else None)

    def loop_jacobian(self, q):
        """Residual r (m,) and Jacobian J (m, nq) of the loops (no coupling rows) at tree
        configuration q (nq,): :func:`motion_kernel` at rest."""
        r, J, _ = motion_kernel(*self.args, np.ascontiguousarray(q, dtype=float), np.zeros(self.robot.nq))
        return r, J

    def residuals(self, q, r=None) -> list:
        """(loop name, residual norm) of each loop joint at tree configuration q (or of the loop
        residual r (m,) at q, when given)."""
        r = self.loop_jacobian(q)[0] if r is None else r
        if not len(r):
            return []
        norms = np.sqrt(np.add.reduceat(r * r, self.loop_rows[:-1]))
        return [(lp.name, float(norm)) for lp, norm in zip(self.robot.loop_joints, norms)]

    def close_reference(self) -> None:
        """Assemble the reference configuration: q0 with its passive coordinates solved by Newton
        (q0 itself when its loops close, as DRNG's Table 2 assumes); every assembly path starts
        there. Raise a ModelError naming the loop joints when they cannot be closed at the
        actuated position of q0. ``cond_ref`` is cond(J_p) there (the largest over the parts); a
        singular q0 is left for a regular neighbour (``moved``), with a warning
        (:meth:`_leave_singular_reference`). ``rcond_ref`` (parts,) holds the reciprocal
        condition estimate of each part's J_f there, which its assembly paths watch."""
        z = np.zeros(self.E.shape[1])
        self.cond_ref, self.moved, self.rcond_ref = 1.0, False, np.ones(len(self.parts))
        if self.nf:
            failed = [part for part in self.parts if self._newton(part, z, z[part.actuated].copy(), 1e-12, 200,
                                                                  1e-300, 0.0)[0]]
            closed = self.residuals(self.E @ z + self.e0)
            if failed or any(res > CLOSURE_TOL for _, res in closed):
                open_ = [(name, res) for name, res in self.residuals(self.robot.q0) if res > CLOSURE_TOL]
                listed = ", ".join(f"'{name}' (residual {res:.3g} at q0)" for name, res in open_)
                raise ModelError(f"{self.robot.source or self.robot.name}: the loop joint{'s' if len(open_) > 1 else ''} "
                                 f"{listed or 'of the model'} cannot be closed at the actuated position of q0 "
                                 "(all tree coordinates zero): pga-dyn needs a model that can be assembled there")
        self.z_ref = z
        if self.nf:
            _, J, _ = self.evaluate(self.E @ z + self.e0)
            self.cond_ref = self.condition(J)
            if self.cond_ref >= 1.0 / SINGULAR_RCOND:
                self._leave_singular_reference(J)  # moves the reference (or raises)
                J = self.evaluate(self.E @ self.z_ref + self.e0)[1]
            self.rcond_ref = np.array([_rcond(p.free_jacobian(J)) for p in self.parts])

    def _newton(self, part, z, target, tol, max_iter, rcond_ref, min_rcond):
        """:func:`newton_kernel` on one part: its actuated coordinates in z move to ``target`` (their
        values at the end of the path) and its passive ones follow, the other free coordinates
        held. z (nz,) is updated in place when the part assembles. Returns the kernel's (status,
        residual)."""
        if part.held.size:
            e0 = self.e0 + self.E[:, part.held] @ z[part.held]
            e0.flags.writeable = False  # as self.e0: one compiled signature
        else:
            e0 = self.e0
        local = z[part.columns]
        status, norm = newton_kernel(*part.args, part.E, e0, part.na, part.spherical, local, target, tol, max_iter,
                                     rcond_ref, min_rcond)
        if status == 0:
            z[part.columns] = local
        return status, norm

    def _leave_singular_reference(self, J):
        """At a singular reference (J_f rank-deficient: several assembly modes, branches of C(q) = 0,
        can meet there, with different identifiability) move the reference along q_a = q0 + t (1,
        ..., 1), t = REFERENCE_STEP, 2 REFERENCE_STEP, ..., REFERENCE_STEPS REFERENCE_STEP,
        assembled from it, to the best-conditioned of these configurations when it is regular:
        the samples then follow the one branch of that configuration. A PgaDynWarning names the loops, the passive
        joints the loops leave free to first order, and the reference used."""
        robot = self.robot
        Jf = J[:self.m] @ self.E[:, self.na:]
        _, s, vt = np.linalg.svd(Jf)
        free = vt[np.concatenate([s, np.zeros(len(vt) - len(s))]) <= SINGULAR_RCOND * s[0]]
        moving = np.abs(free).max(axis=0) > 0.1 * np.abs(free).max()
        loops, row = [], 0
        for lp in robot.loop_joints:
            rows = Jf[row:row + LOOP_ROWS[lp.type]]
            if np.abs(rows[:, moving]).max() > 1e-9 * max(np.abs(Jf).max(), 1e-300):
                loops.append(lp.name)
            row += LOOP_ROWS[lp.type]
        joints = [robot.coordinate_names[k] for k in self.z_index[self.na:][moving]]
        if not loops:  # the free motion moves no loop frame (a pin spinning about the closure point):
            bodies = {b for b in range(1, robot.n + 1)  # name the loops of the clusters of its joints
                      if set(range(*robot.coordinates(b).indices(robot.nq))) & set(self.z_index[self.na:][moving])}
            clusters = [set(c) for c in robot.loop_clusters if bodies & set(c)]
            loops = [lp.name for lp in robot.loop_joints if any({lp.parent, lp.child} & c for c in clusters)]
        z, best, cond, step = self.z_ref.copy(), None, np.inf, 0.0
        for k in range(1, REFERENCE_STEPS + 1):  # along q_a = q0 + t (1, ..., 1): the best-conditioned point
            target = self.z_ref[:self.na] + k * REFERENCE_STEP
            if any(self._newton(part, z, target[part.actuated], 1e-12, 200, 1e-300, 0.0)[0] for part in self.parts):
                break
            z[:self.na] = target
            c = self.condition(self.evaluate(self.E @ z + self.e0)[1])
            if c < cond:
                best, cond, step = z.copy(), c, k * REFERENCE_STEP
        if cond < 1.0 / SINGULAR_RCOND:
            self.z_ref, self.cond_ref, self.moved = best, cond, True
            used = (f"the samples start from the regular configuration q_a = q0 + {step:g} on every actuated "
                    f"coordinate (the best-conditioned of q0 + {REFERENCE_STEP:g}, ..., "
                    f"{REFERENCE_STEPS * REFERENCE_STEP:g}; cond(J_p) = {cond:.3g}), on one branch")
        else:
            raise ModelError(
                f"{robot.source or robot.name}: J_p is rank-deficient at the reference configuration (q0, loops "
                f"closed) and at q0 + {REFERENCE_STEP:g}, ..., {REFERENCE_STEPS * REFERENCE_STEP:g} on every "
                f"actuated coordinate, along joints {_listing(joints)} (loop joint{'s' if len(loops) > 1 else ''} "
                f"{_listing(loops)}): the loops leave a passive motion that no actuator drives (a link spinning "
                "between two ball joints, a planar linkage closed by more constraints than it has), so the "
                "actuated coordinates do not determine the configuration; pga-dyn needs them to: actuate one "
                "of these joints, or use joints that remove the free motion")
        warnings.warn(f"{robot.source or robot.name}: the reference configuration (q0, loops closed) is singular at "
                      f"loop joint{'s' if len(loops) > 1 else ''} {_listing(loops)} (J_p is "
                      f"rank-deficient along joints {_listing(joints)}): assembly modes of "
                      f"different identifiability can meet there; {used} (docs/drng.md, assembly modes)",
                      PgaDynWarning, stacklevel=3)

    def conditions(self, J, parts=None) -> np.ndarray:
        """cond(J_f) of each part (:class:`Part`; or of the parts numbered ``parts``) for the
        constraint Jacobian J (rows of the loops, then of the couplings) in the tree coordinates;
        inf where J_f has fewer independent rows than columns. Shape (parts,)."""
        chosen = self.parts if parts is None else [self.parts[k] for k in parts]
        return np.array([_cond(part.free_jacobian(J)) for part in chosen])

    def condition(self, J) -> float:
        """cond(J_p): the largest cond(J_f) of the parts (1 without passive coordinates), the
        figure sampling holds below its limit part by part."""
        return float(self.conditions(J).max()) if self.parts else 1.0

    # -- assembly -----------------------------------------------------------------------------
    def free(self, q) -> np.ndarray:
        """The free coordinates z of a tree configuration that satisfies the couplings."""
        return np.asarray(q, dtype=float)[self.z_index].copy()

    def assemble_parts(self, q_a, z, parts, regular=False, tol=ASSEMBLY_TOL, max_iter=30, start=None) -> list:
        """Assemble the parts numbered ``parts`` (indices of :attr:`parts`) at actuated position
        q_a, each along a path from ``start`` (free coordinates (nz,); default the reference
        configuration's), the other parts held as they are in z (nz,), which is updated in place
        (its actuated coordinates become q_a). ``regular`` as in :meth:`assemble`. Returns
        [(part number, status, residual)] of the parts that did not assemble (status 1: the path
        leaves the workspace, 2: it meets a singularity). The loops that no part solves are not
        checked here (:meth:`open_loops`)."""
        begin = self.z_ref if start is None else start
        failed = []
        for k in parts:
            part, rcond = self.parts[k], self.rcond_ref[k]
            z[part.columns] = begin[part.columns]
            status, norm = self._newton(part, z, q_a[part.actuated], tol, max_iter, max(rcond, 1e-300),
                                        PATH_LIMIT * rcond if regular else 0.0)
            if status:
                failed.append((k, status, norm))
        z[:self.na] = q_a
        return failed

    def assemble(self, q_a, start=None, tol=ASSEMBLY_TOL, max_iter=30, regular=False):
        """Solve the constraints for the passive coordinates at actuated position q_a, following
        a path from ``start`` (an assembled tree configuration; default: the reference
        configuration, q0 closed; see :meth:`close_reference`), part by part (:class:`Part`).
        ``regular``: the path must stay away from singular configurations (reciprocal condition
        estimate of each part's J_f above PATH_LIMIT times the reference's), so that the state is
        on the reference's assembly branch.

        Returns (q, z): the tree configuration and its free coordinates. Raises PgaDynError when
        a path leaves the workspace or meets a singularity, or when a loop is left open."""
        q, z, _ = self._assemble(q_a, start, tol, max_iter, regular)
        return q, z

    def _assemble(self, q_a, start, tol, max_iter, regular):
        """:meth:`assemble`, and the loops' Jacobian at q (m, nq) that its closure check computed."""
        robot = self.robot
        q_a = np.ascontiguousarray(q_a, dtype=float)
        z = self.z_ref.copy() if start is None else self.free(start)
        failed = self.assemble_parts(q_a, z, range(len(self.parts)), regular, tol, max_iter, start=z.copy())
        if failed:
            k, status, norm = failed[0]
            loops = _listing([robot.loop_joints[l].name for l in self.parts[k].loops])
            if status == 2:
                raise PgaDynError(f"{robot.source or robot.name}: the assembly path from the start to q_a = "
                                  f"{np.round(q_a, 6).tolist()} meets a singular configuration of the loops {loops}")
            raise PgaDynError(f"{robot.source or robot.name}: the loops do not close at q_a = {np.round(q_a, 6).tolist()}: "
                              f"the assembly path from the start leaves the workspace of the loops {loops} "
                              f"(residual {norm:.2e})")
        q = self.E @ z + self.e0
        r, J = self.loop_jacobian(q)
        self._check_closed(q, q_a, r)
        return q, z, J

    def _check_closed(self, q, q_a, r=None) -> None:
        """PgaDynError naming the first loop joint open at q (:meth:`open_loops`; r as there)."""
        open_ = self.open_loops(q, r)
        if open_:
            robot = self.robot
            raise PgaDynError(f"{robot.source or robot.name}: the loop joint '{open_[0][0]}' does not close at q_a = "
                              f"{np.round(q_a, 6).tolist()} (residual {open_[0][1]:.2e})")

    def open_loops(self, q, r=None) -> list:
        """(loop name, residual norm) of the loop joints open at tree configuration q (residual
        above CLOSURE_TOL; r as in :meth:`residuals`): the check of every assembled state, also
        of the loops no part solves."""
        if not self.robot.loop_joints:
            return []
        r = self.loop_jacobian(q)[0] if r is None else r
        if np.abs(r).max() * np.sqrt(max(LOOP_ROWS.values())) <= CLOSURE_TOL:
            return []  # no loop's norm can exceed the tolerance (the common case, one reduction)
        return [(name, res) for name, res in self.residuals(q, r) if res > CLOSURE_TOL]

    def project(self, q, qd_a, qdd_a, J=None):
        """At an assembled configuration q (nq,): the velocity and acceleration of the tree (nq,),
        the projection G = dq/dq_a (nq, n_a), G = E_a - sum over the parts of E_f J_f^+ J_a
        (eq. 92, part by part), and cond(J_f) of each part (parts,); inf where a part is singular
        (its G columns are then not valid). J: the loops' Jacobian at q (:meth:`loop_jacobian`),
        when it is at hand."""
        Ea = self.E[:, :self.na]
        if not self.nf:
            return Ea @ qd_a, Ea @ qdd_a, Ea.copy(), np.ones(0)
        J = self.loop_jacobian(q)[1] if J is None else J
        G, pinvs, conds = Ea.copy(), [], np.empty(len(self.parts))
        whole = len(self.parts) == 1 and self.parts[0].rows.size == J.shape[0]  # one part: no row copies
        for k, part in enumerate(self.parts):
            Jp = J if whole else J[part.rows]
            u, s, vt = np.linalg.svd(Jp @ part.Ef, full_matrices=False)
            conds[k] = _cond_from(s, part.nf)
            keep = s > SINGULAR_S * max(s[0], 1.0)
            pinv = (vt.T / s) @ u.T if keep.all() else (vt[keep].T / s[keep]) @ u[:, keep].T
            G -= part.Ef @ (pinv @ (Jp @ Ea))
            pinvs.append(pinv)
        qd = G @ qd_a
        _, _, bias = motion_kernel(*self.args, q, qd)
        qdd = G @ qdd_a
        for part, pinv in zip(self.parts, pinvs):
            qdd -= part.Ef @ (pinv @ (bias if whole else bias[part.rows]))
        return qd, qdd, G, conds

    def complete(self, q_a, qd_a, qdd_a, start=None, regular=False):
        """Full tree state (q, qd, qdd), the projection G = dq/dq_a (nq x n_a) and cond(J_p) (the
        largest of the parts'); ``regular`` as in :meth:`assemble`."""
        q, _, J = self._assemble(q_a, start, ASSEMBLY_TOL, 30, regular)
        qd, qdd, G, conds = self.project(q, qd_a, qdd_a, J)
        cond = float(conds.max()) if len(conds) else 1.0
        if cond == np.inf:
            raise PgaDynError(f"{self.robot.source or self.robot.name}: J_p is singular at q_a = {np.round(q_a, 6).tolist()}")
        return q, qd, qdd, G, cond

    def complete_all(self, q_a, qd_a, qdd_a, start=None):
        """:meth:`complete` for a batch: actuated states (samples, n_a) in, the tree states Q, QD,
        QDD (samples, nq), the projections G (samples, nq, n_a) and cond(J_f) (samples,) out.
        Couplings alone are solved in closed form, q = E q_a + e0."""
        ns, nq, na = q_a.shape[0], self.robot.nq, self.na
        if not self.nf:
            Ea = self.E[:, :na]
            Q = q_a @ Ea.T + self.e0
            for s in range(ns):  # loops that the actuated joints alone move
                self._check_closed(Q[s], q_a[s])
            return Q, qd_a @ Ea.T, qdd_a @ Ea.T, np.repeat(Ea[None], ns, axis=0), np.ones(ns)
        Q, QD, QDD = np.empty((ns, nq)), np.empty((ns, nq)), np.empty((ns, nq))
        G, cond = np.empty((ns, nq, na)), np.empty(ns)
        for s in range(ns):
            Q[s], QD[s], QDD[s], G[s], cond[s] = self.complete(q_a[s], qd_a[s], qdd_a[s], start)
        return Q, QD, QDD, G, cond


@dataclass(frozen=True)
class Part:
    """One independent part of the loop constraints (:meth:`Constraints._parts`): its loops, their
    rows of the residual, and its free coordinates z[columns] (actuated ones first, then passive
    ones), with the kernel arrays of its loops and E restricted to its columns.

    ``loops`` (l,), ``rows`` (m_p,), ``columns`` (c,), ``na`` actuated columns (``actuated``: the
    first ``na`` columns, also indices into q_a), ``nf`` passive ones, ``held`` (the other free
    coordinates), ``E`` (nq, c), ``Ef`` (nq, nf), ``spherical`` (positions in ``columns`` of the
    first coordinate of each spherical joint), ``args`` (the robot's and the loops' kernel arrays)."""

    loops: np.ndarray
    rows: np.ndarray
    columns: np.ndarray
    na: int
    nf: int
    actuated: np.ndarray
    held: np.ndarray
    E: np.ndarray
    Ef: np.ndarray
    spherical: np.ndarray
    args: tuple

    def __repr__(self) -> str:
        return f"Part(loops={self.loops.tolist()}, columns={self.columns.tolist()}, na={self.na})"

    def free_jacobian(self, J) -> np.ndarray:
        """J_f of this part, (m_p, nf), from the constraint Jacobian J in the tree coordinates."""
        return J[self.rows] @ self.Ef


def _new_part(con: Constraints, loops, columns, rows) -> Part:
    """The :class:`Part` of ``con`` made of ``loops`` (l,), their residual ``rows`` and the free
    coordinates ``columns`` (sorted: the actuated ones come first), its arrays read-only (one
    compiled signature of the kernels, and a frozen model)."""
    na = int(np.count_nonzero(columns < con.na))
    E = np.ascontiguousarray(con.E[:, columns])
    position = {int(k): i for i, k in enumerate(columns)}
    spherical = np.array([position[k] for k in con.spherical if k in position], dtype=np.int64)
    parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0 = con.args
    own = tuple(np.ascontiguousarray(array[loops]) for array in (kind, lpar, lchi, Fp, Fc, laxes, cos0))
    held = np.setdiff1d(np.arange(con.E.shape[1]), columns)
    for array in (*own, loops, columns, rows, E, spherical, held):
        array.flags.writeable = False
    return Part(loops, rows, columns, na, len(columns) - na, columns[:na], held, E, E[:, na:], spherical,
                (parent, code, origin, axes, qidx, on, *own))


def _cond(Jf) -> float:
    """cond(Jf); inf when Jf has fewer independent rows than columns; 1 for no columns."""
    return _cond_from(np.linalg.svd(Jf, compute_uv=False), Jf.shape[1]) if Jf.shape[1] else 1.0


def _cond_from(s, columns: int) -> float:
    """s[0] / s[-1] for the singular values s (descending) of a matrix of ``columns`` columns; inf
    when it has fewer, or one at or below SINGULAR_S times the largest (or 1)."""
    if len(s) < columns or s[-1] <= SINGULAR_S * max(s[0], 1.0):
        return np.inf
    return float(s[0] / s[-1])


def _rcond(Jf) -> float:
    """min |R_ii| / max |R_ii| of the QR of Jf (>= 1 / cond(Jf)): the estimate the assembly paths
    watch (:func:`newton_kernel`); 0 when Jf is rank-deficient."""
    if Jf.shape[0] < Jf.shape[1]:
        return 0.0
    d = np.abs(np.diag(np.linalg.qr(Jf, mode="r")))
    return float(d.min() / d.max()) if d.max() > 0 else 0.0


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


def _closed_constraints(robot: Robot) -> Constraints:
    con = Constraints(robot)
    con.close_reference()
    return con


def _listing(names, most=6) -> str:
    """'a', 'b', 'c' (and 4 more)."""
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" (and {len(names) - most} more)" if len(names) > most else "")


def constraints(robot: Robot) -> Constraints:
    """The constraints of a robot, computed once (``robot.derived``); its loops must close at the
    actuated position of q0."""
    return robot.derived(_closed_constraints)
