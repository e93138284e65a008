"""Assembly, compiled: Newton's method on the passive coordinates along a path of actuated
positions (DRNG paper eq. 91, C(q) = 0 solved for q_p given q_a; velocities by eq. 92).

:func:`newton_kernel` moves the actuated part of the free coordinates z = (q_a, q_f) (nz,) of
one part (:mod:`pga_dyn.loops.parts`) along the straight path q_a(t) = start + t (target -
start), 0 <= t <= 1, and keeps q_f on C(E z + e0) = 0 (E (nq, nz), e0 (nq,): the couplings'
affine map of :func:`pga_dyn.loops.closure.coupling_map`). Each point of the path is

* predicted along the tangent, J_f dz_f/dt = -J_a dq_a/dt (:func:`_tangent`, skipped where J_f
  is singular), with a step dt that shrinks near a singularity (:func:`_path_step`);
* corrected by Levenberg-Marquardt steps, min |J_f dx + r|^2 + mu^2 |dx|^2 with mu = |r|
  (:func:`_damped_step`), on the exact Jacobian J_f = J E[:, na:] (m, nf) of
  :func:`pga_dyn.loops.closure.loop_kernel`;
* watched, when the path must stay on the start's assembly branch, by the reciprocal condition
  estimate of J_f and the sign of det(Q^T J_f) (:func:`_orientation`, :func:`_same_orientation`).

The steps are least-squares solutions by Householder QR (:func:`qr_solve`, twin
``numpy.linalg.lstsq``), which handles the R and P residuals (6 and 12 rows of rank 5), planar
loops over-constrained in space, and redundant closures alike. A spherical joint's passive
rotation is composed, not added (:func:`_update`, with :func:`so3_log`, twin ``pga.se3_log``).

A numerical method, not a PGA expression: its geometry is
:func:`pga_dyn.loops.closure.loop_kernel` (twin :func:`pga_dyn.loops.closure.loop_pga`); the
tests check what it returns, a closed configuration on the branch of the start. A free spin (a
passive motion that no loop constrains: J_f rank-deficient everywhere) would take minimum-norm
steps here, where the damping already keeps them bounded.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..kinematics import forward, so3_exp
from .closure import loop_kernel, loop_work, residual_rows

#: Residual norm the assembly aims at: residuals of 1e-12 leave errors near 1e-11 (relative) in
#: the sampled regressor, too close to the certificate's threshold of 1e-10 (a chain of eight
#: four-bars; docs/drng.md). A model whose round-off floor is above it stops at the floor,
#: which must lie below FLOOR_TOL.
ASSEMBLY_TOL = 1e-14
FLOOR_TOL = 1e-11
#: Longest step of the actuated coordinates along an assembly path (rad or m).
PATH_STEP = 0.2
#: An assembly path slows down where the reciprocal condition estimate of J_f falls below
#: PATH_SLOW times its value at the reference configuration; sampling stops a path where it
#: falls below PATH_LIMIT times that value (:func:`newton_kernel`).
PATH_SLOW = 0.1
PATH_LIMIT = 0.01
#: Reciprocal condition (smallest over largest |R_ii| of the QR of J_f) below which the
#: predictor step of an assembly path is skipped.
SINGULAR_RCOND = 1e-8
#: On a path that must stay on its branch, a step is halved while the corrector moves the
#: passive coordinates from the predicted point by more than MAX_CORRECTION times the step (it
#: has landed on another branch), down to MIN_STEP times the first step (:func:`newton_kernel`)...
MAX_CORRECTION = 0.5
MIN_STEP = 1e-3
#: ... and while the path's tangent turns by more than arccos(MIN_TANGENT_COS) (25 degrees) in a
#: step: a tangent that jumps is another branch's, crossing the path's at a bifurcation.
MIN_TANGENT_COS = 0.9
#: One-sided Jacobi (:func:`svd_into`) stops when no pair of columns has a cosine above JACOBI_TOL
#: (twice the unit round-off; LAPACK's dgesvj stops at sqrt(m) times it): below it the rotations
#: only move round-off (five sweeps on the 2RRU-1RRS's J_f instead of eight at 1e-16).
JACOBI_TOL = 4.4e-16


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
    half = math.atan2(sin_half, q[0])
    scale = 2.0 * half / sin_half if sin_half > 1e-12 else 2.0 / q[0]
    out = np.empty(3)
    for k in range(3):
        out[k] = scale * q[k + 1]
    return out


@njit(cache=True, inline="always")
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
        r = z[k : k + 3].copy()
        for c in range(3):
            r[c] -= scale * dx[k - na + c]
        Ra = so3_exp(r)
        Rb = so3_exp(scale * dx[k - na : k - na + 3])
        R = np.empty((3, 3))
        for i in range(3):
            for c in range(3):
                R[i, c] = Ra[i, 0] * Rb[0, c] + Ra[i, 1] * Rb[1, c] + Ra[i, 2] * Rb[2, c]
        r = so3_log(R)
        for c in range(3):  # a loop, not a slice assignment (numba's shape checks compile for seconds)
            z[k + c] = r[c]


@njit(cache=True, inline="always")
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
def _first_step(start, target):
    """dt_max: the path parameter step that moves no actuated coordinate by more than PATH_STEP
    from ``start`` (na,) towards ``target`` (na,) (1 when they are equal)."""
    big = 0.0
    for j in range(start.shape[0]):
        big = max(big, abs(target[j] - start[j]))
    return PATH_STEP / big if big > 0.0 else 1.0


@njit(cache=True)
def _tangent(Jz, na, start, target, M, B, X):
    """Predictor: X[:, 0] <- dz_f/dt, the least-squares solution of J_f dz_f = -J_a (target - start)
    (Jz (m, nz) = [J_a, J_f] at the last converged point; M (m + nf, nf) and B (m + nf, 1) are
    work arrays whose last nf rows are zero). Returns rho, the reciprocal condition estimate of
    J_f (:func:`qr_solve`)."""
    m, nf = Jz.shape[0], M.shape[1]
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
    return qr_solve(M, B, X)


@njit(cache=True)
def _path_step(rho, dt_max, rcond_ref, t):
    """The next step of the path parameter from t: dt_max, scaled by rho / (PATH_SLOW rcond_ref)
    where the reciprocal condition estimate rho of J_f falls below PATH_SLOW rcond_ref (never
    below dt_max / 1000), and never past t = 1."""
    dt = dt_max * min(1.0, max(rho / (PATH_SLOW * rcond_ref), 1e-3))
    return min(dt, 1.0 - t)


@njit(cache=True)
def small_svd(A):
    """The thin SVD A = U diag(s) V^T of a small matrix A (m, n), k = min(m, n): U (m, k), s (k,)
    descending, V^T (k, n), by one-sided Jacobi rotations (:func:`svd_into`) of the columns of
    A, or of A^T when m < n; twin: ``numpy.linalg.svd(A, full_matrices=False)`` (the same factors up
    to the signs of the singular vectors, and s to a few units of round-off relative to each value)."""
    m, n = A.shape
    k = min(m, n)
    u, s, vt = np.empty((m, k)), np.empty(k), np.empty((k, n))
    svd_into(A, u, s, vt, np.empty(svd_work(m, n)))
    return u, s, vt


@njit(cache=True)
def svd_work(m, n):
    """The length of the work array of :func:`svd_into` for a matrix (m, n)."""
    k = min(m, n)
    return max(m, n) * k + k * k + k


@njit(cache=True)
def svd_into(A, u, s, vt, work):
    """:func:`small_svd` of A (m, n) into u (m, k), s (k,), vt (k, n), with the 1-D work array
    ``work`` (at least :func:`svd_work` long) and no allocation: one-sided Jacobi (Hestenes) on the
    columns of W = A (or A^T when m < n; W (max(m, n), k)) until no pair has a cosine above
    JACOBI_TOL, W V = U diag(s); columns of U of zero singular values are zero."""
    m, n = A.shape
    k, rows = min(m, n), max(m, n)
    W = work[: rows * k].reshape((rows, k))
    V = work[rows * k : rows * k + k * k].reshape((k, k))
    norms = work[rows * k + k * k : rows * k + k * k + k]
    for i in range(rows):
        for j in range(k):
            W[i, j] = A[i, j] if m >= n else A[j, i]
    for i in range(k):
        for j in range(k):
            V[i, j] = 1.0 if i == j else 0.0
    for _ in range(60):
        rotated = False
        for p in range(k - 1):
            for q in range(p + 1, k):
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for i in range(rows):
                    alpha += W[i, p] * W[i, p]
                    beta += W[i, q] * W[i, q]
                    gamma += W[i, p] * W[i, q]
                if gamma == 0.0 or abs(gamma) <= JACOBI_TOL * np.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                c = 1.0 / np.sqrt(1.0 + t * t)
                sn = c * t
                for i in range(rows):
                    up, uq = W[i, p], W[i, q]
                    W[i, p], W[i, q] = c * up - sn * uq, sn * up + c * uq
                for i in range(k):
                    vp, vq = V[i, p], V[i, q]
                    V[i, p], V[i, q] = c * vp - sn * vq, sn * vp + c * vq
        if not rotated:
            break
    for j in range(k):
        v = 0.0
        for i in range(rows):
            v += W[i, j] * W[i, j]
        norms[j] = np.sqrt(v)
    for c in range(k):  # the columns by descending norm (the first of equal ones first); -1 marks those taken
        j = 0
        for i in range(k):
            if norms[i] > norms[j]:
                j = i
        s[c] = norms[j]
        norms[j] = -1.0
        for i in range(rows):  # W's column normalised: U's (m >= n), else V's of A
            w = W[i, j] / s[c] if s[c] > 0.0 else 0.0
            if m >= n:
                u[i, c] = w
            else:
                vt[c, i] = w
        for i in range(k):
            if m >= n:
                vt[c, i] = V[i, j]
            else:
                u[i, c] = V[i, j]


@njit(cache=True, inline="always")
def _singular_values(Jz, na, out):
    """out (nf,) <- the singular values of J_f = Jz[:, na:] (m, nf), m >= nf, in descending order
    (:func:`small_svd`: arithmetic and square roots only, so the Python source of
    :func:`newton_kernel` gives the compiled kernel's bits, pga_dyn.interpreted; LAPACK's differ)."""
    s = small_svd(np.ascontiguousarray(Jz[:, na:]))[1]
    for i in range(out.shape[0]):  # a loop, not out[:] = s: that compiles numba's shape checks (seconds)
        out[i] = s[i]


@njit(cache=True, inline="always")
def _approach_step(dt, s, t, s_last, t_last):
    """The step dt of a path that must stay on its branch, shortened to half the distance to the
    singular configuration ahead: where a singular value of J_f (s (nf,), descending, at t) has
    fallen since the last point (s_last at t_last), its secant extrapolates to zero at t + s_i
    (t - t_last) / (s_last_i - s_i), and the step goes at most half way to the nearest such
    zero. Near a singular configuration, where the singular value that vanishes there falls in
    proportion to the distance (whether or not it is yet the smallest: the reciprocal
    condition estimate can rise while it falls), the path slows down geometrically and stops
    (:func:`newton_kernel`) instead of stepping over it: over a bifurcation (a flat
    parallelogram, where two branches cross) Newton's corrector can land on the other branch,
    and the sign of det(Q^T J_f) is kept."""
    for i in range(s.shape[0]):
        if s[i] < s_last[i] and t > t_last:
            dt = min(dt, 0.5 * s[i] * (t - t_last) / (s_last[i] - s[i]))
    return dt


@njit(cache=True, inline="always")
def _norm(r):
    """|r|, the Euclidean norm of the residual r (m,)."""
    norm = 0.0
    for i in range(r.shape[0]):
        norm += r[i] * r[i]
    return np.sqrt(norm)


@njit(cache=True, inline="always")
def _damped_step(Jz, r, na, mu, M, B, X):
    """Corrector: X[:, 0] <- the Levenberg-Marquardt step dx, min |J_f dx + r|^2 + mu^2 |dx|^2
    (Jz (m, nz) = [J_a, J_f], r (m,); M (m + nf, nf) and B (m + nf, 1) are work arrays).
    Returns the scale that keeps the step at most 0.5 long in every coordinate (at most 1)."""
    m, nf = r.shape[0], M.shape[1]
    for i in range(m):
        B[i, 0] = -r[i]
        for j in range(nf):
            M[i, j] = Jz[i, na + j]
    for i in range(nf):  # the damping rows mu I
        B[m + i, 0] = 0.0
        for j in range(nf):
            M[m + i, j] = mu if i == j else 0.0
    qr_solve(M, B, X)
    big = 0.0
    for j in range(nf):
        big = max(big, abs(X[j, 0]))
    return min(1.0, 0.5 / big) if big > 0.0 else 1.0


@njit(cache=True)
def _correct(
    parent,
    code,
    origin,
    axes,
    qidx,
    on,
    kind,
    lpar,
    lchi,
    Fp,
    Fc,
    laxes,
    cos0,
    E,
    e0,
    na,
    spherical,
    z,
    tol,
    max_iter,
    final,
    q,
    T,
    S,
    V,
    A,
    r,
    J,
    bias,
    Jz,
    M,
    B,
    X,
    scratch,
):
    """Corrector: Levenberg-Marquardt steps (:func:`_damped_step`) on the free passive part of z
    (nz,) until the residual is below ``tol`` (``final``: the end of the path; or at the round-off
    floor, below FLOOR_TOL and no longer halving) or 1e-8 (a point before the end). Jz holds the
    Jacobian in the free coordinates at the last point; ``scratch``: loop_kernel's work array
    (:func:`pga_dyn.loops.closure.loop_work`). Returns (converged, residual norm)."""
    zero, seed = np.zeros(q.shape[0]), np.zeros(6)
    m = r.shape[0]
    last = np.inf
    norm = np.inf
    for _ in range(max_iter):
        _coordinates(E, e0, z, q)
        forward(parent, code, origin, axes, qidx, seed, q, zero, zero, T, S, V, A)
        loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, bias.shape[0] > 0, r, J, bias, scratch)
        _jacobian_free(J, E, na, m, Jz)
        norm = _norm(r)
        if norm < (tol if final else 1e-8) or (final and norm < FLOOR_TOL and norm > 0.5 * last):
            return True, norm
        last = norm
        scale = _damped_step(Jz, r, na, norm, M, B, X)
        _update(z, X[:, 0], na, spherical, scale)
    return False, norm


@njit(cache=True)
def _correction_ratio(z, z_pred, na, dt, start, target, tangent):
    """How far the corrector moved the passive coordinates from the predicted point (max over
    them; ``tangent`` (nf, 1) the predictor's dz_f/dt), over the length of the step (the largest move of a coordinate, actuated or predicted
    passive): O(dt) on the branch of the last point (the predictor's error is O(dt^2)), of
    order one where the corrector lands on another branch."""
    moved, step = 0.0, 0.0
    for j in range(na, z.shape[0]):
        moved = max(moved, abs(z[j] - z_pred[j]))
        step = max(step, abs(dt * tangent[j - na, 0]))
    for j in range(na):
        step = max(step, abs(dt * (target[j] - start[j])))
    return moved / step if step > 0.0 else 0.0


@njit(cache=True)
def _tangent_cosine(start, target, tangent, X):
    """The cosine of the angle between the path's tangents dz/dt = (target - start, dz_f/dt) at
    two consecutive points (``tangent`` (nf, 1) the last one's passive part, X (nf, 1) the new
    one's): near 1 on a branch, whose tangent turns by its curvature times the step; the tangent
    jumps where the corrector has landed on another branch that crosses it (a bifurcation)."""
    along = 0.0  # the actuated part, the same at both points
    for j in range(start.shape[0]):
        along += (target[j] - start[j]) * (target[j] - start[j])
    dot, a, b = along, along, along
    for j in range(tangent.shape[0]):
        dot += tangent[j, 0] * X[j, 0]
        a += tangent[j, 0] * tangent[j, 0]
        b += X[j, 0] * X[j, 0]
    return dot / np.sqrt(a * b) if a > 0.0 and b > 0.0 else 1.0


@njit(cache=True)
def newton_kernel(
    parent,
    code,
    origin,
    axes,
    qidx,
    on,
    kind,
    lpar,
    lchi,
    Fp,
    Fc,
    laxes,
    cos0,
    E,
    e0,
    na,
    spherical,
    z,
    target,
    tol,
    max_iter,
    rcond_ref,
    min_rcond,
):
    """Assemble: move the actuated part of z (nz,) to ``target`` (na,) along a straight path,
    solving the loop constraints for the free passive part z[na:] by Newton's method on the
    exact Jacobian J_f = J E[:, na:] at every step, with a tangent predictor dz_f = -J_f^+ J_a
    dq_a (:func:`_tangent`; skipped where J_f is singular). The Newton steps are
    Levenberg-Marquardt steps (:func:`_correct`, :func:`_damped_step`), min |J_f dx + r|^2 +
    mu^2 |dx|^2 with mu = |r| (Yamashita and Fukushima: quadratic convergence at regular
    solutions, progress from singular starts such as a flat linkage), at most 0.5 long, to a
    residual below ``tol`` at the end of the path (or at the round-off floor of the model, when
    that is above ``tol`` but below FLOOR_TOL; 1e-8 at the points before). z is updated in place.

    The steps are at most PATH_STEP long in q_a, and shorter near a singularity
    (:func:`_path_step`: rcond_ref is the reciprocal condition estimate rho of J_f at the start
    of the paths, the reference configuration). With ``min_rcond`` > 0 (a path that must stay
    in the regular region of its start, on one assembly branch) a path stops (status 2) where
    rho falls below ``min_rcond`` or where det(Q^T J_f) changes sign between two steps (Q:
    orthonormal columns of the previous J_f, :func:`_orientation`; the sign changes where the
    path steps over a singular configuration, :func:`_same_orientation`); a step goes at most
    half way to where a singular value of J_f extrapolates to zero (:func:`_approach_step`;
    the path stops where that is closer than MIN_STEP times its first step), and it is halved
    and taken again while the corrector moves the passive coordinates from the predicted point
    by more than MAX_CORRECTION times the step (:func:`_correction_ratio`) or the path's tangent
    turns by more than arccos(MIN_TANGENT_COS) (:func:`_tangent_cosine`): the corrector has
    then landed on another branch, which keeps the sign of the determinant when the step
    crosses a bifurcation (a flat parallelogram, where two branches cross) or passes a singular
    configuration between two points of the path; a step shorter than MIN_STEP times the first
    that still does stops the path (status 2). Returns (status, residual): status 0 assembled,
    1 no convergence (the path leaves the workspace), 2 the path meets a singularity."""
    nq, nz = E.shape
    nf = nz - na
    n = parent.shape[0] - 1
    m = residual_rows(kind)
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.zeros((n + 1, 6)), np.zeros((n + 1, 6))
    q = np.empty(nq)
    r, J, bias = np.empty(m), np.empty((m, nq)), np.empty(0)
    Jz, M, B, X = np.empty((m, nz)), np.zeros((m + nf, nf)), np.zeros((m + nf, 1)), np.empty((nf, 1))
    Q, scratch = np.empty((m, nf)), loop_work()
    tangent, z_last, z_pred = np.zeros((nf, 1)), z.copy(), z.copy()  # tangent (nf, 1): X's layout, one signature
    start = z[:na].copy()
    dt_max = _first_step(start, target)
    watch = min_rcond > 0.0 and m >= nf
    t = 0.0
    converged, norm = _correct(
        parent,
        code,
        origin,
        axes,
        qidx,
        on,
        kind,
        lpar,
        lchi,
        Fp,
        Fc,
        laxes,
        cos0,
        E,
        e0,
        na,
        spherical,
        z,
        tol,
        max_iter,
        t >= 1.0,
        q,
        T,
        S,
        V,
        A,
        r,
        J,
        bias,
        Jz,
        M,
        B,
        X,
        scratch,
    )
    if not converged:
        return 1, norm
    rho = _tangent(Jz, na, start, target, M, B, X)  # at the converged point, for the next step
    t_last = 0.0
    sv, sv_last = np.empty(nf), np.zeros(nf)  # no last point: no secant
    while t < 1.0:  # predictor from the last converged point (Jz holds its Jacobian, X its tangent)
        if watch and not _orientation(Jz, na, Q):
            return 2, norm
        if rho < min_rcond:
            return 2, norm
        predict = rho >= SINGULAR_RCOND
        for j in range(nf):
            tangent[j, 0] = X[j, 0] if predict else 0.0
        dt = _path_step(rho, dt_max, rcond_ref, t)
        if watch:
            _singular_values(Jz, na, sv)
            dt = _approach_step(dt, sv, t, sv_last, t_last)
            if dt < min(MIN_STEP * dt_max, 1.0 - t):  # a singular configuration just ahead
                return 2, norm
            for j in range(nf):  # loops, not slice assignments: those compile numba's shape checks (seconds)
                sv_last[j] = sv[j]
            t_last = t
        for j in range(z.shape[0]):
            z_last[j] = z[j]
        while True:
            for j in range(z.shape[0]):
                z[j] = z_last[j]
            if predict:
                _update(z, tangent[:, 0], na, spherical, dt)
            t_next = 1.0 if dt >= 1.0 - t else t + dt
            for j in range(na):
                z[j] = start[j] + t_next * (target[j] - start[j])
            for j in range(z.shape[0]):
                z_pred[j] = z[j]
            converged, norm = _correct(
                parent,
                code,
                origin,
                axes,
                qidx,
                on,
                kind,
                lpar,
                lchi,
                Fp,
                Fc,
                laxes,
                cos0,
                E,
                e0,
                na,
                spherical,
                z,
                tol,
                max_iter,
                t_next >= 1.0,
                q,
                T,
                S,
                V,
                A,
                r,
                J,
                bias,
                Jz,
                M,
                B,
                X,
                scratch,
            )
            if not converged:
                return 1, norm
            rho = _tangent(Jz, na, start, target, M, B, X)
            if not watch or (
                _correction_ratio(z, z_pred, na, t_next - t, start, target, tangent) <= MAX_CORRECTION
                and _tangent_cosine(start, target, tangent, X) >= MIN_TANGENT_COS
            ):
                break
            dt *= 0.5
            if dt < MIN_STEP * dt_max:
                return 2, norm
        t = t_next
        if watch and not _same_orientation(Q, Jz, na):
            return 2, norm
    return 0, norm


@njit(cache=True, inline="always")
def _carve(buf, at, rows, cols):
    """A (rows, cols) C-contiguous view of the 1-D work array buf from buf[at] (a view, not an
    allocation: about 1 ns against 17 ns), and the position after it."""
    return buf[at : at + rows * cols].reshape((rows, cols)), at + rows * cols


@njit(cache=True)
def next_point(
    parent,
    code,
    origin,
    axes,
    qidx,
    on,
    kind,
    lpar,
    lchi,
    Fp,
    Fc,
    laxes,
    cos0,
    E,
    e0,
    na,
    spherical,
    z,
    target,
    Jz,
    tol,
    max_iter,
    rcond_ref,
    min_rcond,
    r,
    J,
    curvature,
    predicted,
    work,
    buf,
    P,
    rho_last,
    known,
):
    """The path of :func:`newton_kernel` from an assembled z (nz,), whose Jacobian in the free
    coordinates Jz (m, nz) = J E is known (the previous sample of a record), when that path is one
    step: the tangent predictor dz_f = -J_f^+ J_a (target - start) from z, plus ``curvature`` (nf,)
    added to the predicted passive coordinates (a record's second-order term, extrapolated from its
    last corrections: :func:`pga_dyn.loops.parts.record_kernel`; zeros: the tangent alone), the
    corrector to ``tol`` at ``target`` (na,), and the same watch (rho >= ``min_rcond`` at the
    start, the correction ratio from the predicted point, the turn of the tangent, the sign of
    det(Q^T J_f)); the arguments as there. ``predicted`` (nz,) receives the predicted point when
    the step is tried. Returns True when the step is taken and passes: z updated in place, r (m,)
    and J (m, nq) the loops' residual and Jacobian at the new point. False (z unchanged) when the
    path would take more than one step or the step fails a check: :func:`newton_kernel` then
    decides (smaller steps, or a refusal).

    No array is allocated: the forward kinematics in ``work`` (T, S, V, A of
    :func:`pga_dyn.kinematics.forward`, its zero seed and qd, loop_kernel's work array; T, S hold the new point's when the
    step passes), the rest carved from the 1-D work array ``buf`` (at least (m + nf)(nf + na + 1)
    + m (nf + nz) + nf (na + 3) + nz + nq long). P (nf, na) receives -J_f^+ J_a at the new point
    (the tangent of any actuated direction, from the QR that checks the step) and rho_last (1,)
    its reciprocal condition estimate; with ``known`` (they hold J_f at z: the previous step's)
    the step starts from them instead of factoring J_f again."""
    nz = E.shape[1]
    nf = nz - na
    nq = E.shape[0]
    m = r.shape[0]
    T, S, V, A = work[0], work[1], work[2], work[3]
    M, at = _carve(buf, 0, m + nf, nf)
    B, at = _carve(buf, at, m + nf, 1)
    Ba, at = _carve(buf, at, m + nf, na)
    X, at = _carve(buf, at, nf, 1)
    tangent, at = _carve(buf, at, nf, 1)
    Q, at = _carve(buf, at, m, nf)
    Jnew, at = _carve(buf, at, m, nz)
    start, at = _carve(buf, at, 1, na)
    step, at = _carve(buf, at, 1, nz)
    q, at = _carve(buf, at, 1, nq)
    for j in range(na):
        start[0, j] = z[j]
    watch = min_rcond > 0.0 and m >= nf
    if known:  # the tangent from the last step's factorisation of this J_f
        rho = rho_last[0]
        for j in range(nf):
            v = 0.0
            for i in range(na):
                v += P[j, i] * (target[i] - start[0, i])
            X[j, 0] = v
    else:
        rho = _tangent(Jz, na, start[0], target, M, B, X)
    if (watch and not _orientation(Jz, na, Q)) or rho < min_rcond:
        return False
    if _path_step(rho, _first_step(start[0], target), rcond_ref, 0.0) < 1.0:
        return False
    predict = rho >= SINGULAR_RCOND
    for j in range(nf):
        tangent[j, 0] = X[j, 0] if predict else 0.0
    for j in range(nz):
        step[0, j] = z[j]
    if predict:
        _update(step[0], tangent[:, 0], na, spherical, 1.0)
    for j in range(na):
        step[0, j] = start[0, j] + 1.0 * (target[j] - start[0, j])
    for j in range(nf):
        step[0, na + j] += curvature[j]
    for j in range(nz):
        predicted[j] = step[0, j]
    converged, _ = _correct(
        parent,
        code,
        origin,
        axes,
        qidx,
        on,
        kind,
        lpar,
        lchi,
        Fp,
        Fc,
        laxes,
        cos0,
        E,
        e0,
        na,
        spherical,
        step[0],
        tol,
        max_iter,
        np.bool_(True),  # not a numba literal: one compiled _correct
        q[0],
        T,
        S,
        V,
        A,
        r,
        J,
        r[:0],
        Jnew,
        M,
        B,
        X,
        work[6],
    )
    if not converged:
        return False
    for i in range(m):  # the tangent's QR at the new point, for every actuated direction: [J_f; 0] P = [-J_a; 0]
        for j in range(na):
            Ba[i, j] = -Jnew[i, j]
        for j in range(nf):
            M[i, j] = Jnew[i, na + j]
    for i in range(m, m + nf):
        for j in range(na):
            Ba[i, j] = 0.0
        for j in range(nf):
            M[i, j] = 0.0
    rho_last[0] = qr_solve(M, Ba, P)
    for j in range(nf):  # this step's tangent at the new point, P (target - start)
        v = 0.0
        for i in range(na):
            v += P[j, i] * (target[i] - start[0, i])
        X[j, 0] = v
    if watch and (
        _correction_ratio(step[0], predicted, na, 1.0, start[0], target, tangent) > MAX_CORRECTION
        or _tangent_cosine(start[0], target, tangent, X) < MIN_TANGENT_COS
        or not _same_orientation(Q, Jnew, na)
    ):
        return False
    for j in range(nz):
        z[j] = step[0, j]
    return True
