"""The generalized principles: DRNG's three principles (section 4 of the DRNG paper) extended to
the fixed elements of every body, compiled with numba. Complete on trees (docs/drng.md).

Parameters are in the coordinates of eq. (97), spatial assignment (section 5.2): a point fixed
to a body has the same homogeneous coordinates c = (p, w) in every body it is shared by, its
world position at q0, so SSP (Algorithm 1) is the joint's frame at q0: O (on the axis), x, y
(perpendicular directions) and z (the axis direction; the first axis a1 of a U joint).
sym(a, b) = a b^T + b a^T and sym(a) = a a^T, read into R^10 by eq. (97).

Every vector is a *transfer* across a joint i with parent p: +v in body i's block, -v in p's
(nothing when p is the fixed base). Null(Y) is the direct sum over the joints of the transfer
spaces T_i (RPNA's Theorem 2; in the spatial assignment its frame maps are identities), and T_i
depends only on the joint and on two descriptors of the parent, carried from the base in O(1)
per joint:

* F_p, the *fixed points* of body p: the points (Euclidean or ideal) that no velocity of p
  moves, gravity counted as a prismatic joint of the base along g (gravity moves every
  Euclidean point). F_0 = all points if g = 0, else the ideal plane {w = 0};
  F_i = F_p ∩ Fix(joint i) with Fix(R) = the axis line span{O, z}, Fix(P) = the ideal plane,
  Fix(U) = Fix(S) = {O}, Fix(F) = {}. Kinds: all, ideal plane, a Euclidean line, a Euclidean
  point, an ideal point (a direction), none.
* IL_p, the *invariant lines* of body p: the Euclidean lines that every velocity of p (and
  gravity) maps into themselves. IL_0 = all lines if g = 0, else the lines parallel to g;
  IL_i = IL_p ∩ Inv(joint i) with Inv(R) = {its axis}, Inv(P along d) = {lines parallel to d},
  Inv(U, S, F) = {}. Kinds: all, the lines parallel to a direction, one line, none.

The rules (vectors of joint i, parent p; the rule codes are the constants below, ``RULES``
names them with the paper's principle and equation where they coincide):

* R, axis through O along z. Shared points (Principle 1, eqs. 60, 62): sym(O), sym(O, z),
  sym(z). Planar rotation, z ∈ F_p: sym(x) - sym(y), sym(x, y) (83a, 83b). Then, if the axis
  is in IL_p: sym(x, O), sym(y, O), sym(x, z), sym(y, z) (on the base 74a-d; off it the new
  rule AXIS_LINE and 83c, 83d); else if F_p ∩ axis is the direction z: sym(x, z), sym(y, z)
  (74c, 74d on the base, 83c, 83d off it); else if it is a Euclidean point P: sym(x, P),
  sym(y, P) (new rule AXIS_POINT). 3, 5, 7 or 9 vectors.
* P along z. Shared points: sym(e_a, e_b), a <= b, for the directions x, y, z (6). If z ∈ F_p:
  sym(O, z), sym(O, x), sym(O, y) (73a-c on the base; 84, 89, 90 when the parent turns about z;
  the new rule TRANSLATING when it only translates); else if F_p holds one direction w:
  sym(O, w) (84). 6, 7 or 9 vectors.
* S centred at O. Shared point: sym(O). If O ∈ F_p: sym(O, x), sym(O, y), sym(O, z) (72a-c on
  the base, else the new rule CENTRE). 1 or 4 vectors.
* U, axes a1 (in the parent) and a2 (in the child) meeting at O: as S, and else, if the line
  (O, a1) is in IL_p: sym(O, a2) (new rule FIRST_AXIS). 1, 2 or 4 vectors.
* F: none. Loop joints: the shared points of their type (Algorithm 4, lines 46-51).

The vectors of the tree joints are independent (a basis of the direct sum): count = rank. The
derivation and its tests are in docs/drng.md. A readable twin of these rules, in numpy, which
derives F_p and the invariant axes from the velocity spans themselves rather than by
propagation, is :mod:`drng.rules`; the tests compare the two rule by rule.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pga_dyn.conventions import CODE_F, CODE_P, CODE_R, CODE_S, CODE_U, PARAM_COL, PARAM_ROW

#: Joint type codes of the kernel (pga_dyn.conventions).
R, P, U, S, F = CODE_R, CODE_P, CODE_U, CODE_S, CODE_F

#: Kinds of the fixed-point set F_b (a projective subspace of R^4).
F_ALL, F_IDEAL_PLANE, F_LINE, F_POINT, F_DIRECTION, F_NONE = 0, 1, 2, 3, 4, 5
#: Kinds of the invariant-line set IL_b (Euclidean lines).
IL_ALL, IL_PARALLEL, IL_LINE, IL_NONE = 0, 1, 2, 3


#: What each principle of the provenance is called (the paper's three, and the rules it lacks).
PRINCIPLE_NAMES = {1: "shared points", 2: "fixed points", 3: "planar rotations", "generalized": "generalized rules"}


class Rule(NamedTuple):
    """What a vector of the kernel is: the rule's name, the paper's principle (1, 2, 3) or
    "generalized" for a rule the paper does not have, and the paper's equation where the rule
    coincides with one (None otherwise)."""

    name: str
    principle: object
    equation: str | None


#: Every rule, indexed by the codes below (provenance codes of the kernel).
RULES = (
    Rule("shared points", 1, "60"),
    Rule("shared points", 1, "62"),
    Rule("fixed centre", 2, "72a"),
    Rule("fixed centre", 2, "72b"),
    Rule("fixed centre", 2, "72c"),
    Rule("fixed directions", 2, "73a"),
    Rule("fixed directions", 2, "73b"),
    Rule("fixed directions", 2, "73c"),
    Rule("fixed axis line", 2, "74a"),
    Rule("fixed axis line", 2, "74b"),
    Rule("fixed axis line", 2, "74c"),
    Rule("fixed axis line", 2, "74d"),
    Rule("fixed axis direction", 2, "74c"),
    Rule("fixed axis direction", 2, "74d"),
    Rule("planar rotation", 3, "83a"),
    Rule("planar rotation", 3, "83b"),
    Rule("fixed axis direction", 3, "83c"),
    Rule("fixed axis direction", 3, "83d"),
    Rule("fixed directions", 3, "84"),
    Rule("fixed directions", 3, "89"),
    Rule("fixed directions", 3, "90"),
    Rule("fixed point on the axis", "generalized", None),
    Rule("fixed point on the axis", "generalized", None),
    Rule("fixed axis line", "generalized", None),
    Rule("fixed axis line", "generalized", None),
    Rule("translating parent", "generalized", None),
    Rule("translating parent", "generalized", None),
    Rule("translating parent", "generalized", None),
    Rule("fixed centre", "generalized", None),
    Rule("fixed centre", "generalized", None),
    Rule("fixed centre", "generalized", None),
    Rule("fixed first axis", "generalized", None),
    Rule("free spin", "generalized", None),
)
#: Rule codes: the first code of each group (a group of k vectors uses codes c .. c + k - 1).
SHARED_SELF, SHARED_PAIR = 0, 1  # Principle 1: sym(P), sym(P, Q) of shared points
CENTRE_BASE = 2  # 72a-c: sym(O, x), sym(O, y), sym(O, z), S or U on the base, g = 0
SLIDER_BASE = 5  # 73a-c: sym(O, x), sym(O, y), sym(O, z), P on the base
AXIS_LINE_BASE = 8  # 74a-d: sym(x, O), sym(y, O), sym(x, z), sym(y, z), R on the base, g = 0 or along it
AXIS_DIRECTION_BASE = 12  # 74c, 74d: sym(x, z), sym(y, z), R on the base
PLANAR = 14  # 83a, 83b: sym(x) - sym(y), sym(x, y), z ∈ F_p
AXIS_DIRECTION = 16  # 83c, 83d: sym(x, z), sym(y, z), F_p ∩ axis = {z}, off the base
SLIDER_TURNING = 18  # 84 sym(O, w), and 89, 90 sym(O, x), sym(O, y) when w = z
AXIS_POINT = 21  # new (F1): sym(x, P), sym(y, P), F_p ∩ axis = {P} Euclidean
AXIS_LINE = 23  # new (F3): sym(x, O), sym(y, O) for an invariant axis off the base (with 83c, 83d)
TRANSLATING = 25  # new (F2): sym(O, z), sym(O, x), sym(O, y), a P joint on a body that only translates
CENTRE = 28  # new (F5): sym(O, x), sym(O, y), sym(O, z), S or U centre fixed off the base
FIRST_AXIS = 31  # new (F4): sym(O, a2), U whose first axis line is invariant
FREE_SPIN = 32  # not a kernel rule: a body's inertia about the line of its locked free spin (pga_dyn.loops.spins)

#: Relative tolerance of the geometric tests: unit directions, and lengths over the robot's size.
TOL = 1e-9
#: Relative tolerance of :func:`independent_loop_vectors` (a loop vector's part outside the span
#: of the others, over its norm; the vectors have entries of the robot's size squared at most).
DEPENDENT_RTOL = 1e-9
#: Shared points of each joint type (Table 1), as rows of a joint's point table (O, x, y, z).
_SHARED = np.array([[0, 3, -1], [1, 2, 3], [0, -1, -1], [0, -1, -1], [-1, -1, -1]])
_NSHARED = np.array([2, 3, 1, 1, 0])


# -- geometry ------------------------------------------------------------------------------------


@njit(cache=True)
def _cross_norm2(a, b):
    """|a x b|^2 of the first three entries."""
    c0 = a[1] * b[2] - a[2] * b[1]
    c1 = a[2] * b[0] - a[0] * b[2]
    c2 = a[0] * b[1] - a[1] * b[0]
    return c0 * c0 + c1 * c1 + c2 * c2


@njit(cache=True)
def _parallel(a, b):
    """Unit directions a, b parallel: |a x b| <= TOL."""
    return _cross_norm2(a, b) <= TOL * TOL


@njit(cache=True)
def _on_line(c, o, d, tol):
    """The point c lies on the line through o along the unit d: |(c - o) x d| <= tol."""
    e0, e1, e2 = c[0] - o[0], c[1] - o[1], c[2] - o[2]
    c0 = e1 * d[2] - e2 * d[1]
    c1 = e2 * d[0] - e0 * d[2]
    c2 = e0 * d[1] - e1 * d[0]
    return c0 * c0 + c1 * c1 + c2 * c2 <= tol * tol


@njit(cache=True)
def _perpendicular(z):
    """Unit directions x, y with (x, y, z) orthonormal and right-handed (z a unit vector), as
    the tuple (x0, x1, x2, y0, y1, y2)."""
    h0, h1 = (1.0, 0.0) if abs(z[0]) < 0.9 else (0.0, 1.0)
    # x = h x z with h = (h0, h1, 0)
    x0, x1, x2 = h1 * z[2], -h0 * z[2], h0 * z[1] - h1 * z[0]
    norm = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    x0, x1, x2 = x0 / norm, x1 / norm, x2 / norm
    return x0, x1, x2, z[1] * x2 - z[2] * x1, z[2] * x0 - z[0] * x2, z[0] * x1 - z[1] * x0


@njit(cache=True)
def joint_points(frame, axis, out):
    """SSP (Algorithm 1): the points of a joint whose frame at q0 is ``frame`` (4x4, world) with
    ``axis`` (unit) in that frame, in homogeneous coordinates: out[0] = O (the origin), out[1],
    out[2] = x, y (directions perpendicular to the axis), out[3] = z (the axis direction).
    With the spatial assignment these are their coordinates in every body sharing them."""
    x0, x1, x2, y0, y1, y2 = _perpendicular(axis)
    for r in range(3):
        out[0, r] = frame[r, 3]
        out[1, r] = frame[r, 0] * x0 + frame[r, 1] * x1 + frame[r, 2] * x2
        out[2, r] = frame[r, 0] * y0 + frame[r, 1] * y1 + frame[r, 2] * y2
        out[3, r] = frame[r, 0] * axis[0] + frame[r, 1] * axis[1] + frame[r, 2] * axis[2]
    out[0, 3] = 1.0
    out[1, 3] = out[2, 3] = out[3, 3] = 0.0


@njit(cache=True)
def _copy3(src, dst):
    """dst[:3] = src[:3], as a loop (a slice assignment pulls in numba's shape checks, seconds of
    compilation)."""
    for k in range(3):
        dst[k] = src[k]


# -- fixed points and invariant lines -------------------------------------------------------------
# A set is (kind, point, direction); the point and direction (3) are used by the kinds that have them.


@njit(cache=True)
def _fixed_on_line(kind, fp, fd, o, z, tol, out_p, out_d):
    """F ∩ the line through o along z (an R joint): its kind, written to out_p / out_d."""
    _copy3(o, out_p)
    _copy3(z, out_d)
    if kind == F_ALL:
        return F_LINE
    if kind == F_IDEAL_PLANE:
        return F_DIRECTION
    if kind == F_DIRECTION:
        return F_DIRECTION if _parallel(fd, z) else F_NONE
    if kind == F_POINT:
        _copy3(fp, out_p)
        return F_POINT if _on_line(fp, o, z, tol) else F_NONE
    if kind == F_LINE:
        if _parallel(fd, z):
            return F_LINE if _on_line(fp, o, z, tol) else F_DIRECTION
        # two lines that are not parallel: they meet in a Euclidean point, or not at all
        n0 = fd[1] * z[2] - fd[2] * z[1]
        n1 = fd[2] * z[0] - fd[0] * z[2]
        n2 = fd[0] * z[1] - fd[1] * z[0]
        nn = n0 * n0 + n1 * n1 + n2 * n2
        e0, e1, e2 = o[0] - fp[0], o[1] - fp[1], o[2] - fp[2]
        if abs(e0 * n0 + e1 * n1 + e2 * n2) > tol * np.sqrt(nn):
            return F_NONE  # skew
        # fp + t fd = o + s z: t = ((o - fp) x z) . n / |n|^2
        c0 = e1 * z[2] - e2 * z[1]
        c1 = e2 * z[0] - e0 * z[2]
        c2 = e0 * z[1] - e1 * z[0]
        t = (c0 * n0 + c1 * n1 + c2 * n2) / nn
        for k in range(3):
            out_p[k] = fp[k] + t * fd[k]
        return F_POINT
    return F_NONE


@njit(cache=True)
def _fixed_ideal(kind, fp, fd, out_p, out_d):
    """F ∩ the ideal plane (a P joint, or gravity)."""
    _copy3(fp, out_p)
    _copy3(fd, out_d)
    if kind == F_ALL or kind == F_IDEAL_PLANE:
        return F_IDEAL_PLANE
    if kind == F_LINE or kind == F_DIRECTION:
        return F_DIRECTION
    return F_NONE


@njit(cache=True)
def _fixed_at(kind, fp, fd, o, tol, out_p, out_d):
    """F ∩ {o} (an S or U joint centred at o)."""
    _copy3(o, out_p)
    _copy3(fd, out_d)
    if kind == F_ALL:
        return F_POINT
    if kind == F_LINE:
        return F_POINT if _on_line(o, fp, fd, tol) else F_NONE
    if kind == F_POINT:
        e0, e1, e2 = o[0] - fp[0], o[1] - fp[1], o[2] - fp[2]
        return F_POINT if e0 * e0 + e1 * e1 + e2 * e2 <= tol * tol else F_NONE
    return F_NONE


@njit(cache=True)
def _invariant_line(kind, ip, idir, o, z, tol, out_p, out_d):
    """IL ∩ {the line through o along z} (an R joint, or the first axis of a U joint)."""
    _copy3(o, out_p)
    _copy3(z, out_d)
    if kind == IL_ALL:
        return IL_LINE
    if kind == IL_PARALLEL:
        return IL_LINE if _parallel(idir, z) else IL_NONE
    if kind == IL_LINE:
        return IL_LINE if _parallel(idir, z) and _on_line(ip, o, z, tol) else IL_NONE
    return IL_NONE


@njit(cache=True)
def _invariant_parallel(kind, ip, idir, d, out_p, out_d):
    """IL ∩ {the lines parallel to d} (a P joint along d, or gravity)."""
    _copy3(ip, out_p)
    _copy3(idir, out_d)
    if kind == IL_ALL:
        _copy3(d, out_d)
        return IL_PARALLEL
    if kind == IL_PARALLEL or kind == IL_LINE:
        return kind if _parallel(idir, d) else IL_NONE
    return IL_NONE


# -- writing vectors -----------------------------------------------------------------------------


@njit(cache=True)
def _sym(a, b, out):
    """out = hat(a b^T + b a^T) (eq. 97)."""
    for k in range(10):
        r, c = PARAM_ROW[k], PARAM_COL[k]
        out[k] = a[r] * b[c] + b[r] * a[c]


@njit(cache=True)
def _square(a, out):
    """out = hat(a a^T) (eq. 97)."""
    for k in range(10):
        out[k] = a[PARAM_ROW[k]] * a[PARAM_COL[k]]


@njit(cache=True)
def _emit(vals, bodies, prov, col, joint, rule, child, parent, v_child, v_parent, write):
    """Vector ``col``: +v_child on ``child`` (slot 0) and -v_parent on ``parent`` (slot 1; none
    when the parent is the fixed base, body 0, which has no parameters), provenance (joint,
    rule); written only when ``write``. Returns the next column; raises IndexError rather than
    write past the arrays (numba does not check bounds)."""
    if write:
        if col >= vals.shape[0]:
            raise IndexError("drng_kernel: more vectors than counted")
        bodies[col, 0], bodies[col, 1] = child, max(parent, 0)
        sign = -1.0 if parent > 0 else 0.0
        for k in range(10):
            vals[col, 0, k] = v_child[k]
            vals[col, 1, k] = sign * v_parent[k]
        prov[col, 0], prov[col, 1] = joint, rule
    return col + 1


@njit(cache=True)
def _transfer(vals, bodies, prov, col, joint, rule, child, parent, a, b, v, write):
    """The transfer of sym(a, b) across a tree joint (``v``: a scratch 10-vector)."""
    if write:
        _sym(a, b, v)
    return _emit(vals, bodies, prov, col, joint, rule, child, parent, v, v, write)


@njit(cache=True)
def _shared(vals, bodies, prov, col, joint, kind, parent, child, pts_p, pts_c, n, v_c, v_p, write):
    """JNG (Algorithm 3, eqs. 60 and 62): one vector per pair of shared points (Table 1),
    +sym in the child's block, -sym in the parent's (Algorithm 3 prints the same sign); the
    points as the child (``pts_c``) and the parent (``pts_p``) carry them (the same points for
    a tree joint, ``joint`` <= ``n``)."""
    k = _NSHARED[kind]
    tree = joint <= n
    for a in range(k):
        for b in range(a, k):
            ia, ib = _SHARED[kind, a], _SHARED[kind, b]
            if write and a == b:
                _square(pts_c[ia], v_c)
                if not tree:
                    _square(pts_p[ia], v_p)
            elif write:
                _sym(pts_c[ia], pts_c[ib], v_c)
                if not tree:
                    _sym(pts_p[ia], pts_p[ib], v_p)
            col = _emit(
                vals,
                bodies,
                prov,
                col,
                joint,
                SHARED_SELF if a == b else SHARED_PAIR,
                child,
                parent,
                v_c,
                v_c if tree else v_p,
                write,
            )
    return col


# -- the kernel ----------------------------------------------------------------------------------


@njit(cache=True)
def fixed_elements(kind, parent, frame, local_axes, gravity):
    """The SSP points of every tree joint and the fixed points and invariant lines of every body.

    Returns ``pts`` (n + 1, 4, 4): O, x, y, z of joint i at q0 (:func:`joint_points`); ``kinds``
    (n + 1, 2): the kind of F_b (``F_*``) and of IL_b (``IL_*``), body 0 the base with gravity as a
    slider along g; ``geo`` (4, n + 1, 3): the point and direction of F_b, then of IL_b (where
    the kind has them); and the length tolerance (TOL times the robot's size, at least 1 m)."""
    n = kind.shape[0] - 1
    scale = 1.0
    for i in range(1, n + 1):
        for r in range(3):
            scale = max(scale, abs(frame[i, r, 3]))
    tol = TOL * scale
    pts = np.zeros((n + 1, 4, 4))
    kinds = np.empty((n + 1, 2), dtype=np.int64)
    geo = np.zeros((4, n + 1, 3))
    fpt, fdir, ipt, idir = geo[0], geo[1], geo[2], geo[3]
    kinds[0, 0], kinds[0, 1] = F_ALL, IL_ALL
    g2 = gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]
    if g2 > 0.0:  # gravity, a slider along g, moves every Euclidean point (as in RPNA: exact zero)
        kinds[0, 0], kinds[0, 1] = F_IDEAL_PLANE, IL_PARALLEL  # all ∩ ideal plane, all ∩ lines parallel to g
        for r in range(3):
            idir[0, r] = gravity[r] / np.sqrt(g2)
    for i in range(1, n + 1):
        c, p = kind[i], parent[i]
        joint_points(frame[i], local_axes[i, 0], pts[i])
        O, z = pts[i, 0], pts[i, 3]
        fk, ik = kinds[p, 0], kinds[p, 1]
        if c == R:
            kinds[i, 0] = _fixed_on_line(fk, fpt[p], fdir[p], O, z, tol, fpt[i], fdir[i])
            kinds[i, 1] = _invariant_line(ik, ipt[p], idir[p], O, z, tol, ipt[i], idir[i])
        elif c == P:
            kinds[i, 0] = _fixed_ideal(fk, fpt[p], fdir[p], fpt[i], fdir[i])
            kinds[i, 1] = _invariant_parallel(ik, ipt[p], idir[p], z, ipt[i], idir[i])
        elif c == U or c == S:
            kinds[i, 0] = _fixed_at(fk, fpt[p], fdir[p], O, tol, fpt[i], fdir[i])
            kinds[i, 1] = IL_NONE
        else:  # floating
            kinds[i, 0], kinds[i, 1] = F_NONE, IL_NONE
    return pts, kinds, geo, tol


@njit(cache=True)
def _rules(
    kind,
    parent,
    frame,
    local_axes,
    pts,
    kinds,
    geo,
    tol,
    lkind,
    lparent,
    lchild,
    lframe_p,
    lframe_c,
    laxis,
    work,
    points,
    vals,
    bodies,
    prov,
    write,
):
    """The vectors of the rules (module docstring), joint by joint: their number, and with
    ``write`` the vectors themselves in ``vals``, ``bodies``, ``prov`` (one code counts and
    writes them). Tree joint i reads its points ``pts[i]``, the fixed points and invariant lines
    of its parent p (``kinds[p]``, ``geo[:, p]``) and of its own body (F_i = F_p ∩ Fix(joint i)).
    ``work`` (6, 10) and ``points`` (2, 4, 4) are scratch space.

    Rule codes and the first column are passed to the helpers as ``np.int64`` values, not as
    numba literals: a literal argument compiles one specialization per value."""
    n = kind.shape[0] - 1
    fpt, fdir, ipt, idir = geo[0], geo[1], geo[2], geo[3]
    v, u = work[0], work[1]  # the 10-vectors being written
    point, a2 = work[2], work[3]  # a fixed point or direction (4 entries); U's a2
    pts_p, pts_c = points[0], points[1]  # a loop joint's points on either side
    col = np.int64(0)
    for i in range(1, n + 1):
        c, p = kind[i], parent[i]
        O, x, y, z = pts[i, 0], pts[i, 1], pts[i, 2], pts[i, 3]
        fk, fi, ii = kinds[p, 0], kinds[i, 0], kinds[i, 1]
        col = _shared(vals, bodies, prov, col, i, c, p, i, pts[i], pts[i], n, v, u, write)  # Principle 1
        if c == R:
            if fi == F_LINE or fi == F_DIRECTION:  # z ∈ F_p: 83a, 83b
                if write:
                    _square(x, v)
                    _square(y, u)
                    for k in range(10):
                        v[k] -= u[k]  # sym(x) - sym(y)
                col = _emit(vals, bodies, prov, col, i, np.int64(PLANAR), i, p, v, v, write)
                col = _transfer(vals, bodies, prov, col, i, PLANAR + 1, i, p, x, y, v, write)
            if ii == IL_LINE:  # the axis is an invariant line of the parent (74a-d on the base)
                rule = AXIS_LINE_BASE if p == 0 else AXIS_LINE
                col = _transfer(vals, bodies, prov, col, i, rule, i, p, x, O, v, write)
                col = _transfer(vals, bodies, prov, col, i, rule + 1, i, p, y, O, v, write)
                rule = AXIS_LINE_BASE + 2 if p == 0 else AXIS_DIRECTION
                col = _transfer(vals, bodies, prov, col, i, rule, i, p, x, z, v, write)
                col = _transfer(vals, bodies, prov, col, i, rule + 1, i, p, y, z, v, write)
            elif fi == F_DIRECTION:  # the axis direction is fixed
                rule = AXIS_DIRECTION_BASE if p == 0 else AXIS_DIRECTION
                col = _transfer(vals, bodies, prov, col, i, rule, i, p, x, z, v, write)
                col = _transfer(vals, bodies, prov, col, i, rule + 1, i, p, y, z, v, write)
            elif fi == F_POINT:  # a Euclidean point of the axis is fixed
                _copy3(fpt[i], point)
                point[3] = 1.0
                col = _transfer(vals, bodies, prov, col, i, np.int64(AXIS_POINT), i, p, x, point, v, write)
                col = _transfer(vals, bodies, prov, col, i, AXIS_POINT + 1, i, p, y, point, v, write)
            elif fi == F_LINE:
                raise ValueError("drng_kernel: a fixed axis that is not an invariant line")
        elif c == P:
            if p == 0 or fk == F_IDEAL_PLANE or ((fk == F_LINE or fk == F_DIRECTION) and _parallel(fdir[p], z)):
                first = SLIDER_BASE if p == 0 else (TRANSLATING if fk == F_IDEAL_PLANE else SLIDER_TURNING)
                order = (3, 1, 2) if first != SLIDER_BASE else (1, 2, 3)  # 84 = sym(O, z) first
                for k in range(3):
                    col = _transfer(vals, bodies, prov, col, i, first + k, i, p, O, pts[i, order[k]], v, write)
            elif fk == F_LINE or fk == F_DIRECTION:  # the parent turns about one direction w only
                _copy3(fdir[p], point)
                point[3] = 0.0
                col = _transfer(vals, bodies, prov, col, i, np.int64(SLIDER_TURNING), i, p, O, point, v, write)
        elif c == U or c == S:
            if fi == F_POINT:  # the centre is fixed
                first = CENTRE_BASE if p == 0 else CENTRE
                for k in range(3):
                    col = _transfer(vals, bodies, prov, col, i, first + k, i, p, O, pts[i, 1 + k], v, write)
            elif c == U and _invariant_line(kinds[p, 1], ipt[p], idir[p], O, z, tol, work[4], work[5]) == IL_LINE:
                for r in range(3):
                    a2[r] = (
                        frame[i, r, 0] * local_axes[i, 1, 0]
                        + frame[i, r, 1] * local_axes[i, 1, 1]
                        + frame[i, r, 2] * local_axes[i, 1, 2]
                    )
                col = _transfer(vals, bodies, prov, col, i, np.int64(FIRST_AXIS), i, p, O, a2, v, write)
    for l in range(lkind.shape[0]):  # loop joints: Principle 1 (Algorithm 4, lines 46-51)
        if write:
            joint_points(lframe_p[l], laxis[l], pts_p)
            joint_points(lframe_c[l], laxis[l], pts_c)
        col = _shared(vals, bodies, prov, col, n + 1 + l, lkind[l], lparent[l], lchild[l], pts_p, pts_c, n, v, u, write)
    return col


@njit(cache=True)
def drng_kernel(kind, parent, frame, local_axes, gravity, lkind, lparent, lchild, lframe_p, lframe_c, laxis):
    """The generalized principles on a robot (Algorithm 4 with the rules of the module docstring).

    Tree joint i (1..n): type ``kind[i]``, parent body ``parent[i]`` (< i), its frame at q0 in
    the world (``frame[i]``, the child's body frame) and its axes in that frame
    (``local_axes[i]`` (2, 3): R, P: the axis; U: a1, a2; S, F: any unit vector); ``gravity``
    (3); loop l: type, parent and child bodies, its frame at q0 on each side, its (first) axis.
    Returns the K vectors in block form, ``bodies`` (K, 2) and ``vals`` (K, 2, 10) (at most two
    bodies per vector: O(n) memory, see :func:`dense_basis`), and the provenance (K, 2): joint
    (1..n tree, n+1.. loops) and rule code (an index of ``RULES``). Three passes, each O(n):
    :func:`fixed_elements`, then :func:`_rules` counts the vectors and, on arrays of that size,
    writes them (every write is checked against the size). The tree joints' vectors are a
    basis; a loop joint's can repeat them (see :func:`independent_loop_vectors`)."""
    pts, kinds, geo, tol = fixed_elements(kind, parent, frame, local_axes, gravity)
    args = (kind, parent, frame, local_axes, pts, kinds, geo, tol, lkind, lparent, lchild, lframe_p, lframe_c, laxis)
    work, points = np.zeros((6, 10)), np.zeros((2, 4, 4))
    bodies = np.empty((0, 2), dtype=np.int64)
    count = _rules(*args, work, points, np.empty((0, 2, 10)), bodies, bodies, False)
    vals = np.empty((count, 2, 10))
    bodies = np.empty((count, 2), dtype=np.int64)
    prov = np.empty((count, 2), dtype=np.int64)
    _rules(*args, work, points, vals, bodies, prov, True)
    return bodies, vals, prov


@njit(cache=True)
def _norm(v):
    total = 0.0
    for r in range(v.shape[0]):
        total += v[r] * v[r]
    return np.sqrt(total)


@njit(cache=True)
def _reduce(v, basis, k, passes):
    """Modified Gram-Schmidt: v -= its components along the first k rows of ``basis``
    (orthonormal), ``passes`` times; returns |v| after."""
    for _ in range(passes):
        for j in range(k):
            d = 0.0
            for r in range(v.shape[0]):
                d += basis[j, r] * v[r]
            for r in range(v.shape[0]):
                v[r] -= d * basis[j, r]
    return _norm(v)


@njit(cache=True)
def independent_loop_vectors(parent, bodies, vals, prov, tol):
    """Which vectors of the kernel's output to keep so that they form a basis: every tree
    joint's vector, and each loop joint's vector that is not in the span of the tree's and of
    the loop vectors kept before it.

    In the coordinates r_j = the sum of a vector's blocks over the subtree of body j (a
    triangular change of coordinates), a transfer +t on body i, -t on its parent is t in block
    i alone: the tree vectors span ⊕_i T_i with T_i spanned by joint i's child blocks. A loop
    vector with blocks w_b on body b and w_a on body a has r_j = w_b on the path from b up to
    their common ancestor c, w_a on the path from a up to c, w_a + w_b from c up (zero for shared
    points, up to round-off). Its part outside ⊕ T_i is r_j minus its projection on T_j, joint
    by joint; the loop vectors are kept greedily while these parts are independent (norm above
    ``tol`` times the vector's). O(n + loop paths): only the joints on a loop's paths matter; the
    tree vectors of one joint are independent and orthonormalized in one pass."""
    n, K = parent.shape[0] - 1, prov.shape[0]
    one = np.int64(1)  # Gram-Schmidt passes, not a numba literal (one specialization of _reduce)
    keep = np.ones(K, dtype=np.bool_)
    on_path = np.zeros(n + 1, dtype=np.bool_)  # the joints on the path of a loop vector's body
    loops = 0
    for c in range(K):
        if prov[c, 0] > n:
            loops += 1
            for slot in range(2):
                j = bodies[c, slot]
                while j > 0 and not on_path[j]:
                    on_path[j] = True
                    j = parent[j]
    # an orthonormal basis of T_i (rows) for the joints on the paths, from joint i's child blocks
    basis = np.zeros((n + 1, 10, 10))
    rank = np.zeros(n + 1, dtype=np.int64)
    v = np.empty(10)
    for c in range(K):
        i = prov[c, 0]
        if i <= n and on_path[i]:
            for k in range(10):
                v[k] = vals[c, 0, k]
            left = _reduce(v, basis[i], rank[i], one)
            for r in range(10):
                basis[i, rank[i], r] = v[r] / left
            rank[i] += 1
    kept = np.zeros((loops, 10 * (n + 1)))  # the parts outside ⊕ T_i of the loop vectors kept
    count = np.int64(0)
    r = np.empty(10 * (n + 1))  # r-coordinates, block j for body j (block 0 unused)
    for c in range(K):
        if prov[c, 0] <= n:
            continue
        r[:] = 0.0
        for slot in range(2):
            j = bodies[c, slot]
            while j > 0:
                for k in range(10):
                    r[10 * j + k] += vals[c, slot, k]
                j = parent[j]
        size = _norm(r)
        for slot in range(2):  # the blocks on this vector's paths (the others are zero)
            j = bodies[c, slot]
            while j > 0:
                _reduce(r[10 * j : 10 * j + 10], basis[j], rank[j], one)
                j = parent[j]
        left = _reduce(r, kept, count, one + one)
        if left > tol * size:
            for k in range(r.shape[0]):
                kept[count, k] = r[k] / left
            count += 1
        else:
            keep[c] = False
    return keep


@njit(cache=True)
def dense_basis(n, bodies, vals):
    """The basis as a dense (10 n, K) matrix from the kernel's block form."""
    B = np.zeros((10 * n, bodies.shape[0]))
    for col in range(bodies.shape[0]):
        for slot in range(2):
            b = bodies[col, slot]
            if b > 0:
                for k in range(10):
                    B[10 * (b - 1) + k, col] = vals[col, slot, k]
    return B
