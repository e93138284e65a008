"""The three principles of the DRNG paper (section 4) and Algorithms 1-4, compiled with numba.

Every tree joint and every loop joint contributes nullspace vectors of the regressor, in the
parameter coordinates of eq. (97) (spatial assignment, section 5.2: a point fixed to a body has
the same homogeneous coordinates c = (p, w) in every body frame it is shared by, namely its
world position at q0, so SSP (Algorithm 1) is the joint's points at q0):

* Principle 1, shared points (eqs. 53-62, JNG = Algorithm 3): for shared points P_a, P_b of a
  joint between parent p and child c, the vector with sym(c_a c_b) in the child's block and
  -sym(c_a c_b) in the parent's (none for the fixed base). Shared points (Table 1): R: O, z on
  the axis; P: the directions x, y, z; U, S: the centre O; F: none. Algorithm 3 prints the
  same sign in both blocks; eq. (60) requires opposite signs.
* Principle 2, fixed points (eqs. 63-74), for joints on the fixed base: S/U without gravity:
  sym(O, x), sym(O, y), sym(O, z) (72); P: the same three (73); R: sym(z, x), sym(z, y)
  (74c, 74d; the paper prints 74c twice) and, without gravity or with gravity along the axis,
  sym(O, x), sym(O, y) (74a, 74b).
* Principle 3, planar rotations (eqs. 75-90), for bodies found by PRI (Algorithm 2) to rotate
  about a fixed direction d: R joint: x x^T - y y^T, sym(x, y) (83a, 83b) and, off the base,
  sym(z, x), sym(z, y) (83c, 83d), with z = d and x, y perpendicular; P joint off the base:
  sym(d, O) (84) and, when it translates along d, the transfers (89), (90).

Here sym(a, b) = a b^T + b a^T (a a^T for a point with itself), mapped to R^10 by eq. (97).
The basis may hold dependent or zero vectors (for instance the planar-rotation vectors of a
body that only translates): its dimension is a rank.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Equation of each kind of vector (the provenance codes of the kernel).
EQUATIONS = ("60", "62", "72a", "72b", "72c", "73a", "73b", "73c", "74a", "74b", "74c", "74d",
             "83a", "83b", "83c", "83d", "84", "89", "90")
#: Principle of each equation code.
PRINCIPLE = (1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3)
_EQ = {name: k for k, name in enumerate(EQUATIONS)}
#: Joint type codes, as in pga_dyn.model.JOINT_CODE.
R, P, U, S, F = 0, 1, 2, 3, 4
#: Index pairs (row, column) of eq. (97).
_ROW = np.array([0, 0, 0, 1, 1, 2, 0, 1, 2, 3])
_COL = np.array([0, 1, 2, 1, 2, 2, 3, 3, 3, 3])
_TOL = 1e-9


@njit(cache=True, inline="always")
def _add_sym(vals, bodies, col, body, a, b, sign, same=False):
    """Vector ``col``, block of ``body``: += sign * hat(a b^T + b a^T), or hat(a a^T) when
    ``same`` (eq. 97). A vector touches at most two bodies: slots 0 and 1 of ``vals`` (K, 2, 10)
    and ``bodies`` (K, 2); body 0 (the fixed base) has no parameters."""
    if body <= 0:
        return
    slot = 0 if bodies[col, 0] == 0 or bodies[col, 0] == body else 1
    bodies[col, slot] = body
    for k in range(10):
        r, c = _ROW[k], _COL[k]
        value = a[r] * a[c] if same else a[r] * b[c] + b[r] * a[c]
        vals[col, slot, k] += sign * value


#: Shared points of each joint type (Table 1), as rows of a joint's point table (O, x, y, z).
_SHARED = np.array([[0, 3, -1], [1, 2, 3], [0, -1, -1], [0, -1, -1], [-1, -1, -1]])
_NSHARED = np.array([2, 3, 1, 1, 0])


@njit(cache=True, inline="always")
def _parallel(a, b, tol):
    """|a x b| <= tol."""
    c0 = a[1] * b[2] - a[2] * b[1]
    c1 = a[2] * b[0] - a[0] * b[2]
    c2 = a[0] * b[1] - a[1] * b[0]
    return c0 * c0 + c1 * c1 + c2 * c2 <= tol * tol


@njit(cache=True)
def _perpendicular(z, x, y):
    """Write unit directions x, y with (x, y, z) orthonormal and right-handed (z a unit vector)."""
    h0, h1 = (1.0, 0.0) if abs(z[0]) < 0.9 else (0.0, 1.0)
    # x = h x z with h = (h0, h1, 0)
    x[0], x[1], x[2] = h1 * z[2], -h0 * z[2], h0 * z[1] - h1 * z[0]
    norm = np.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
    x[0], x[1], x[2] = x[0] / norm, x[1] / norm, x[2] / norm
    y[0] = z[1] * x[2] - z[2] * x[1]
    y[1] = z[2] * x[0] - z[0] * x[2]
    y[2] = z[0] * x[1] - z[1] * x[0]


@njit(cache=True)
def _frame_points(frame, axis, out):
    """SSP (Algorithm 1): the points of a joint whose frame at q0 is ``frame`` (4x4, world) with
    ``axis`` (unit) in that frame, in homogeneous coordinates: out[0] = O (the origin), out[1],
    out[2] = x, y (directions perpendicular to the axis), out[3] = z (the axis direction).
    With the spatial assignment these are their coordinates in every body sharing them."""
    lx, ly = np.empty(3), np.empty(3)
    _perpendicular(axis, lx, ly)
    for r in range(3):
        out[0, r] = frame[r, 3]
        out[1, r] = frame[r, 0] * lx[0] + frame[r, 1] * lx[1] + frame[r, 2] * lx[2]
        out[2, r] = frame[r, 0] * ly[0] + frame[r, 1] * ly[1] + frame[r, 2] * ly[2]
        out[3, r] = frame[r, 0] * axis[0] + frame[r, 1] * axis[1] + frame[r, 2] * axis[2]
    out[0, 3] = 1.0
    out[1, 3] = out[2, 3] = out[3, 3] = 0.0


@njit(cache=True)
def _jng(vals, bodies, prov, col, joint, kind, parent, child, pts_p, pts_c):
    """JNG (Algorithm 3, eqs. 60 and 62): one vector per pair of shared points (Table 1),
    +sym in the child's block, -sym in the parent's (Algorithm 3 prints the same sign)."""
    k = _NSHARED[kind]
    for a in range(k):
        for b in range(a, k):
            ia, ib = _SHARED[kind, a], _SHARED[kind, b]
            _add_sym(vals, bodies, col, child, pts_c[ia], pts_c[ib], 1.0, a == b)
            _add_sym(vals, bodies, col, parent, pts_p[ia], pts_p[ib], -1.0, a == b)
            prov[col, 0], prov[col, 1] = joint, 0 if a == b else 1
            col += 1
    return col


@njit(cache=True)
def _one(vals, bodies, prov, col, joint, body, a, b, sign, eq):
    _add_sym(vals, bodies, col, body, a, b, sign, False)
    prov[col, 0], prov[col, 1] = joint, eq
    return col + 1


@njit(cache=True)
def planar_rotations(kind, parent, axis):
    """PRI (Algorithm 2): is_pr[i] and the direction d_pr[i] of the planar rotation of body i.

    ``axis`` holds the direction part of each joint's line at q0 (the axis of an R joint, zero
    for the others);
    axes are compared with a relative tolerance of 1e-9. Correction to Algorithm 2: the test
    L_d,i x L_d,parent = 0 passes trivially when the parent joint is P (L_d = 0), and would
    mark an R joint about any axis below a slider as planar; the axis must be parallel to the
    parent's planar-rotation direction, d = L_d,parent if nonzero, else d_pr[parent]."""
    n = kind.shape[0] - 1
    is_pr = np.zeros(n + 1, dtype=np.bool_)
    d_pr = np.zeros((n + 1, 3))
    for i in range(1, n + 1):
        if kind[i] != R and kind[i] != P:
            continue
        p = parent[i]
        ld = axis[i]  # zero for a P joint
        if p == 0:
            is_pr[i] = True
            d_pr[i] = ld
        elif is_pr[p]:
            d = axis[p] if kind[p] == R else d_pr[p]
            if _parallel(ld, d, _TOL):
                is_pr[i] = True
                d_pr[i] = d if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > _TOL * _TOL else ld
    return is_pr, d_pr


@njit(cache=True)
def _counts(kind, parent, pts, line_dir, gravity, is_pr, d_pr, lkind):
    """Number of vectors of each tree joint (1..n) and each loop joint (n+1..)."""
    n = kind.shape[0] - 1
    g2 = gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]
    no_gravity = g2 == 0.0  # any gravity moves the fixed points (as in RPNA: exact zero)
    pairs = np.array([3, 6, 1, 1, 0])  # ns (ns + 1) / 2 of R, P, U, S, F
    count = np.zeros(n + 1 + lkind.shape[0], dtype=np.int64)
    for i in range(1, n + 1):
        c = kind[i]
        m = pairs[c]
        if parent[i] == 0:
            if c == U or c == S:
                m += 3 if no_gravity else 0
            elif c == P:
                m += 3
            elif c == R:
                along = _parallel(line_dir[i], gravity, _TOL * np.sqrt(g2))
                m += 4 if (no_gravity or along) else 2
        if is_pr[i]:
            if c == R:
                m += 2 if parent[i] == 0 else 4
            elif c == P and parent[i] != 0:
                d = d_pr[i]
                translates_along = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > _TOL * _TOL and _parallel(
                    d, pts[i, 3, :3], _TOL)
                m += 3 if translates_along else 1
        count[i] = m
    for l in range(lkind.shape[0]):
        count[n + 1 + l] = pairs[lkind[l]]
    return count


@njit(cache=True)
def drng_kernel(kind, parent, frame, local_axis, gravity, lkind, lparent, lchild, lframe_p, lframe_c, laxis):
    """DRNG (Algorithm 4). Tree joint i (1..n): type ``kind[i]``, parent body ``parent[i]``, its
    frame at q0 in the world (``frame[i]``, the child's body frame) and its (first) axis in that
    frame; loop l: type, parent and child bodies, its frame at q0 on each side, its axis.
    Returns the K vectors in block form, ``bodies`` (K, 2) and ``vals`` (K, 2, 10) (at most two
    bodies per vector: O(n) memory, see :func:`dense_basis`), and the provenance (K, 2): joint
    (1..n tree, n+1.. loops) and equation code (``EQUATIONS``).

    Every joint's work is independent once PRI has run (the paper's O(1) with parallelism):
    the loops below could run in parallel; serially, the time grows linearly with n."""
    n = kind.shape[0] - 1
    pts = np.zeros((n + 1, 4, 4))  # per joint: O, x, y, z at q0 (homogeneous)
    line_dir = np.zeros((n + 1, 3))  # direction part of each 1-DoF joint line: R axis, 0 for P
    for i in range(1, n + 1):
        _frame_points(frame[i], local_axis[i], pts[i])
        if kind[i] == R:
            line_dir[i] = pts[i, 3, :3]
    is_pr, d_pr = planar_rotations(kind, parent, line_dir)
    count = _counts(kind, parent, pts, line_dir, gravity, is_pr, d_pr, lkind)
    total = count.sum()
    vals = np.zeros((total, 2, 10))
    bodies = np.zeros((total, 2), dtype=np.int64)
    prov = np.zeros((total, 2), dtype=np.int64)
    g2 = gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]
    no_gravity = g2 == 0.0  # any gravity moves the fixed points (as in RPNA: exact zero)
    planar = np.zeros((4, 4))  # the planar-rotation frame: rows O (unused), x, y, d
    col = 0
    for i in range(1, n + 1):
        c, p = kind[i], parent[i]
        col = _jng(vals, bodies, prov, col, i, c, p, i, pts[i], pts[i])  # Principle 1
        O, x, y, z = pts[i, 0], pts[i, 1], pts[i, 2], pts[i, 3]
        if p == 0:  # Principle 2: fixed points
            if (c == U or c == S) and no_gravity:
                col = _one(vals, bodies, prov, col, i, i, O, x, 1.0, 2)
                col = _one(vals, bodies, prov, col, i, i, O, y, 1.0, 3)
                col = _one(vals, bodies, prov, col, i, i, O, z, 1.0, 4)
            elif c == P:
                col = _one(vals, bodies, prov, col, i, i, O, x, 1.0, 5)
                col = _one(vals, bodies, prov, col, i, i, O, y, 1.0, 6)
                col = _one(vals, bodies, prov, col, i, i, O, z, 1.0, 7)
            elif c == R:
                if no_gravity or _parallel(line_dir[i], gravity, _TOL * np.sqrt(g2)):
                    col = _one(vals, bodies, prov, col, i, i, O, x, 1.0, 8)
                    col = _one(vals, bodies, prov, col, i, i, O, y, 1.0, 9)
                col = _one(vals, bodies, prov, col, i, i, z, x, 1.0, 10)
                col = _one(vals, bodies, prov, col, i, i, z, y, 1.0, 11)
        if is_pr[i] and (c == R or p != 0):  # Principle 3: planar rotations about d = d_pr[i]
            d = d_pr[i]
            has_d = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > _TOL * _TOL
            planar[3, :3] = d
            if has_d:
                _perpendicular(d, planar[1, :3], planar[2, :3])
            else:
                planar[1:3, :3] = 0.0
            px, py, pd = planar[1], planar[2], planar[3]
            if c == R:
                _add_sym(vals, bodies, col, i, px, px, 1.0, True)
                _add_sym(vals, bodies, col, i, py, py, -1.0, True)
                prov[col, 0], prov[col, 1] = i, 12
                col += 1
                col = _one(vals, bodies, prov, col, i, i, px, py, 1.0, 13)
                if p != 0:
                    col = _one(vals, bodies, prov, col, i, i, pd, px, 1.0, 14)
                    col = _one(vals, bodies, prov, col, i, i, pd, py, 1.0, 15)
            elif c == P:
                col = _one(vals, bodies, prov, col, i, i, pd, O, 1.0, 16)
                if has_d and _parallel(d, z[:3], _TOL):
                    _add_sym(vals, bodies, col, i, O, px, 1.0, False)
                    col = _one(vals, bodies, prov, col, i, p, O, px, -1.0, 17)
                    _add_sym(vals, bodies, col, i, O, py, 1.0, False)
                    col = _one(vals, bodies, prov, col, i, p, O, py, -1.0, 18)
    pts_p, pts_c = np.zeros((4, 4)), np.zeros((4, 4))
    for l in range(lkind.shape[0]):  # loop joints: Principle 1 (Algorithm 4, lines 46-51)
        _frame_points(lframe_p[l], laxis[l], pts_p)
        _frame_points(lframe_c[l], laxis[l], pts_c)
        col = _jng(vals, bodies, prov, col, n + 1 + l, lkind[l], lparent[l], lchild[l], pts_p, pts_c)
    return bodies, vals, prov


@njit(cache=True)
def dense_basis(n, bodies, vals):
    """The basis as a dense (10 n, K) matrix from the kernel's block form."""
    B = np.zeros((10 * n, bodies.shape[0]))
    for col in range(bodies.shape[0]):
        for slot in range(2):
            b = bodies[col, slot]
            if b > 0:
                B[10 * (b - 1):10 * b, col] = vals[col, slot]
    return B
