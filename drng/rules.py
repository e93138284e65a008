"""The generalized principles, readable: the twin of the compiled kernel
:func:`drng.principles.drng_kernel`, in plain numpy, for reading and for the tests.

The kernel carries the fixed points F_p and the invariant lines IL_p of every body from the
base by intersecting kinds (a line, a point, ...). This module computes them from their
definitions instead, on the velocity span of every body, and then applies the same rules
(docs/drng.md, "The generalized principles"):

* a twist (omega; v) acts on the homogeneous point c = (p, w) as the 4x4 matrix
  X = [[S(omega), v], [0, 0]]: X c = omega x p + w v, the velocity of the point (eq. 34);
* V_b, the velocity span of body b in the spatial assignment (every body frame is the world
  frame at q0): V_0 = {(0; g)} (gravity, a slider of the base along g; empty when g = 0), and
  for joint i with free modes m_k (world twists at q0), V_i = the smallest span containing V_p
  that is closed under X -> [m_k, X] (the parent's velocities seen from the turned child), plus
  the m_k. A U joint is two R joints in sequence (a1 then a2), an S joint three rotations
  about its centre, a floating joint all six twists;
* F_b = {c : X c = 0 for every X in V_b}, the points that nothing moves;
* a line span{A, B} is invariant for body b when X A and X B lie in span{A, B} for every X in
  V_b.

``rule_vectors(robot)`` returns, for every joint, the vectors of each rule with the kernel's
rule codes, so that the tests can compare the two rule by rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import PARAM_INDEX

from . import principles as pr
from .generator import kernel_arrays
from .rpna_algorithms import null_rows
from .rpna_algorithms import span as orthonormal_span

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy.typing as npt

    from pga_dyn.model import Robot

#: Relative tolerance of the ranks (spans of twists and of points).
RTOL = 1e-9


def twist(omega: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The 4x4 matrix [[S(omega), v], [0, 0]] of the twist (omega; v)."""
    (a, b, c), X = omega, np.zeros((4, 4))
    X[:3, :3] = [[0.0, -c, b], [c, 0.0, -a], [-b, a, 0.0]]
    X[:3, 3] = v
    return X


def span(matrices: Sequence[np.ndarray]) -> list:
    """An orthonormal basis (as 4x4 matrices) of the span of ``matrices``."""
    if len(matrices) == 0:
        return []
    flat = np.array([m.reshape(16) for m in matrices]).T
    return [column.reshape(4, 4) for column in orthonormal_span(flat, RTOL).T]


def closure(modes: Sequence[np.ndarray], seed: Sequence[np.ndarray]) -> list:
    """The smallest span that contains ``seed`` and is closed under X -> [m, X] for each mode m."""
    basis = span(seed)
    while True:
        grown = span(basis + [m @ X - X @ m for m in modes for X in basis])
        if len(grown) == len(basis):
            return basis
        basis = grown


def null_points(V: Sequence[np.ndarray]) -> np.ndarray:
    """F = {c : X c = 0 for X in V} as a (4, k) orthonormal basis."""
    if not V:
        return np.eye(4)
    return null_rows(np.vstack(V), 4, RTOL)


def intersect(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """An orthonormal basis of span(A) ∩ span(B) (columns)."""
    if A.shape[1] == 0 or B.shape[1] == 0:
        return np.zeros((4, 0))
    coefficients = null_rows(np.hstack([A, -B]), A.shape[1] + B.shape[1], RTOL)
    meet = A @ coefficients[: A.shape[1]]
    if meet.shape[1] == 0:
        return meet
    return orthonormal_span(meet, RTOL)


def contains(F: np.ndarray, point: npt.ArrayLike) -> bool:
    """The point lies in span(F)."""
    point = np.asarray(point, dtype=float)
    return np.linalg.norm(point - F @ (F.T @ point)) <= RTOL * np.linalg.norm(point)


def invariant(V: Iterable[np.ndarray], A: np.ndarray, B: np.ndarray) -> bool:
    """Every X of V maps the line span{A, B} into itself."""
    L = np.linalg.qr(np.column_stack([A, B]))[0]
    return all(np.linalg.norm(X @ L - L @ (L.T @ (X @ L))) <= RTOL * max(np.linalg.norm(X), 1.0) for X in V)


def sym(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a b^T + b a^T as the 10-vector of eq. (97)."""
    m = np.outer(a, b) + np.outer(b, a)
    return np.array([m[r, c] for r, c in PARAM_INDEX])


def _rotation(O, z) -> np.ndarray:
    """The twist of a unit rotation about the line through O along z."""
    return twist(z, np.cross(O[:3], z))


def velocity_spans(robot: Robot) -> list:
    """V_b for every body b = 0..n (lists of 4x4 matrices, orthonormal)."""
    kind, parent, frame, axes, gravity = kernel_arrays(robot)[:5]
    spans = [span([twist(np.zeros(3), gravity)]) if np.any(gravity) else []]
    for i in range(1, len(kind)):
        O, z = frame[i][:, 3], frame[i][:3, :3] @ axes[i, 0]
        V = spans[parent[i]]
        if kind[i] == pr.R:
            modes = [[_rotation(O, z)]]
        elif kind[i] == pr.P:
            modes = [[twist(np.zeros(3), z)]]
        elif kind[i] == pr.U:
            modes = [[_rotation(O, z)], [_rotation(O, frame[i][:3, :3] @ axes[i, 1])]]
        elif kind[i] == pr.S:
            modes = [[_rotation(O, e) for e in np.eye(3)]]
        else:
            modes = [[twist(*e.reshape(2, 3)) for e in np.eye(6)]]
        for step in modes:  # a U joint turns about a1, then about a2
            V = span(closure(step, V) + step)
        spans.append(V)
    return spans


def rule_vectors(robot: Robot) -> list:
    """The vectors of the rules for every tree joint: (joint, rule code, child, parent, v) with
    v the 10-vector that the transfer puts on the child (and -v on the parent)."""
    kind, parent, frame, axes = kernel_arrays(robot)[:4]
    spans = velocity_spans(robot)
    ideal_plane = np.eye(4)[:, :3]
    out = []
    for i in range(1, len(kind)):
        p, c = int(parent[i]), kind[i]
        pts = np.zeros((4, 4))
        pr.joint_points(frame[i], axes[i, 0], pts)
        O, x, y, z = pts
        Vp, Fp = spans[p], null_points(spans[p])

        def add(code, a, b):
            out.append((i, code, i, p, sym(a, b) / (2.0 if a is b else 1.0)))

        for a, b in _shared_pairs(c, pts):
            add(pr.SHARED_SELF if a is b else pr.SHARED_PAIR, a, b)
        if c == pr.R:
            on_axis = intersect(Fp, np.column_stack([O, z]))
            if contains(Fp, z):  # the parent turns about z only: 83a, 83b
                out.append((i, pr.PLANAR, i, p, sym(x, x) / 2 - sym(y, y) / 2))
                add(pr.PLANAR + 1, x, y)
            if invariant(Vp, O, z):
                codes = (
                    range(pr.AXIS_LINE_BASE, pr.AXIS_LINE_BASE + 4)
                    if p == 0
                    else (pr.AXIS_LINE, pr.AXIS_LINE + 1, pr.AXIS_DIRECTION, pr.AXIS_DIRECTION + 1)
                )
                for code, (a, b) in zip(codes, ((x, O), (y, O), (x, z), (y, z))):
                    add(code, a, b)
            elif on_axis.shape[1] == 1:
                fixed = on_axis[:, 0]
                if abs(fixed[3]) > RTOL:  # a Euclidean point
                    fixed, first = fixed / fixed[3], pr.AXIS_POINT
                else:
                    first = pr.AXIS_DIRECTION_BASE if p == 0 else pr.AXIS_DIRECTION
                add(first, x, fixed)
                add(first + 1, y, fixed)
        elif c == pr.P:
            if contains(Fp, z):
                directions = (x, y, z) if p == 0 else (z, x, y)
                first = (
                    pr.SLIDER_BASE
                    if p == 0
                    else (pr.TRANSLATING if intersect(Fp, ideal_plane).shape[1] == 3 else pr.SLIDER_TURNING)
                )
            else:
                directions, first = tuple(intersect(Fp, ideal_plane).T), pr.SLIDER_TURNING
            for k, h in enumerate(directions):
                add(first + k, O, h)
        elif c in (pr.U, pr.S):
            if contains(Fp, O):
                for k, h in enumerate((x, y, z)):
                    add((pr.CENTRE_BASE if p == 0 else pr.CENTRE) + k, O, h)
            elif c == pr.U and invariant(Vp, O, z):
                add(pr.FIRST_AXIS, O, np.append(frame[i][:3, :3] @ axes[i, 1], 0.0))
    return out


def _shared_pairs(kind, pts) -> list:
    """The pairs of shared points of a joint (Table 1): R: O, z; P: x, y, z; U, S: O; F: none."""
    O, x, y, z = pts
    points = {pr.R: (O, z), pr.P: (x, y, z), pr.U: (O,), pr.S: (O,)}.get(kind, ())
    return [(a, b) for k, a in enumerate(points) for b in points[k:]]
