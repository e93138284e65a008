"""Independent parts of the loop constraints: each assembled, watched for singularities,
projected and sampled on its own (DRNG paper section 5.1; eq. 92 part by part).

Loops that share no free coordinate moving one of a loop's two bodies relative to the other
are independent: :func:`independent_parts` splits the loops into :class:`Part` s (the connected
components of the graph of loops and the free coordinates z_j that drive, through the
couplings' E, a tree coordinate on a loop's cycle), so sixty independent four-bars cost sixty
small solves, not one solve of all their coordinates, and a draw is not lost because one of
them meets a singularity. A part holds its loops (l,), their rows of the residual (m_p,), its
free coordinates z[columns] (c,: the actuated ones first, then the passive ones) and E
restricted to them (nq, c).

On a part, with J its rows of the loops' Jacobian (m_p, nq):

* assembly: :meth:`Part.assemble`, :func:`pga_dyn.loops.newton.newton_kernel` on its columns,
  the other free coordinates held;
* conditioning: cond(J_f) of J_f = J E_f (m_p, nf) (:func:`condition_number`; inf where J_f has
  fewer independent rows than columns, a singular configuration), and the cheaper estimate
  that the assembly paths watch (:func:`rcond_estimate`, from the QR);
* projection: J_f^+ (:meth:`Part.inverse`), so that G = dq/dq_a = E_a - sum over the parts of
  E_f J_f^+ J E_a (nq, n_a; eq. 92) and qdd = G qdd_a - sum E_f J_f^+ Jd qd.

Redundant closures (rows of J_f that depend on others everywhere: a planar loop closed by a
6D weld, whose cut revolute joint gives 6 rows for 2 independent equations) are reduced to an
independent set by a rank-revealing step: :func:`closure_rank` decides the rank of J_f from its
singular values at the cut SINGULAR_S that the pseudo-inverse applies, and reports the decision
as the certificate does (the gap between the smallest kept and the largest dropped value, and
whether it is clean); the assembly takes least-squares steps and :meth:`Part.inverse` projects
on the rank's leading singular directions, which span the independent equations at every
configuration (which rows are independent can change with it: R's axis rows). A rank below the
passive coordinates that persists is a free motion (:mod:`pga_dyn.loops.spins`).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from .newton import newton_kernel

#: A singular value of J_f at or below SINGULAR_S times the largest (or 1) makes J_f singular.
SINGULAR_S = 1e-12
#: A rank decision of J_f is clean when its gap (smallest kept over largest dropped singular
#: value) is at least RANK_GAP and the cut lies inside it, RANK_MARGIN from both ends (the
#: certificate's GAP_MIN and THRESHOLD_MARGIN, docs/drng.md).
RANK_GAP = 1e6
RANK_MARGIN = 10.0


@dataclass(frozen=True)
class Part:
    """One independent part of the loop constraints (:func:`independent_parts`): its loops, their
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

    def inverse(self, Jp):
        """(J_f^+ (nf, m_p), cond(J_f)) for this part's rows Jp (m_p, nq) of the loops' Jacobian:
        the pseudo-inverse from the SVD, its singular values at or below SINGULAR_S times the
        largest (or 1) left out; cond as :func:`condition_number`."""
        u, s, vt = np.linalg.svd(Jp @ self.Ef, full_matrices=False)
        keep = s > SINGULAR_S * max(s[0], 1.0)
        pinv = (vt.T / s) @ u.T if keep.all() else (vt[keep].T / s[keep]) @ u[:, keep].T
        return pinv, _condition_from(s, self.nf)

    def assemble(self, E, e0, z, target, tol, max_iter, rcond_ref, min_rcond):
        """:func:`pga_dyn.loops.newton.newton_kernel` on this part: its actuated coordinates in z
        (nz,) move to ``target`` (na,; their values at the end of the path) and its passive ones
        follow, the other free coordinates held (through q = E z + e0, E (nq, nz), e0 (nq,)). z is
        updated in place when the part assembles. Returns the kernel's (status, residual)."""
        if self.held.size:
            e0 = e0 + E[:, self.held] @ z[self.held]
            e0.flags.writeable = False  # as the robot's e0: one compiled signature
        local = z[self.columns]
        status, norm = newton_kernel(
            *self.args, self.E, e0, self.na, self.spherical, local, target, tol, max_iter, rcond_ref, min_rcond
        )
        if status == 0:
            z[self.columns] = local
        return status, norm


def independent_parts(args, E, na, spherical, loop_rows) -> tuple:
    """The independent parts of the loop constraints (:class:`Part`) of a robot with the kernel
    arrays ``args`` (:func:`pga_dyn.loops.closure.kernel_arrays`), the couplings' map E (nq, nz)
    with ``na`` actuated free coordinates first, the positions in z of the spherical joints'
    first passive coordinates ``spherical`` and the first residual row of each loop
    ``loop_rows`` (loops + 1,).

    Loops are in one part when they share a free coordinate z_j which drives (through E) a tree
    coordinate moving one of a loop's two bodies and not the other. A tree coordinate that moves
    both bodies of a loop (or neither) moves them rigidly together, which leaves the loop's
    closure unchanged (its rows of J vanish at a closed configuration; a free coordinate coupled
    to two tree coordinates, one on each side of the loop, moves the two bodies differently and
    is in the loop's part): so each part is assembled, watched for singularities and sampled on
    its own, with the other free coordinates held (``tests/test_loops.py`` checks the states
    against Pinocchio). Every passive coordinate is in a part (the model checks that a loop
    moves it, ``Robot._check_determined``); a loop that no passive coordinate moves (a ball
    joint on the axis of an actuated joint) is in no part, and every assembled state is checked
    closed as a whole (:meth:`pga_dyn.loops.system.Constraints.open_loops`)."""
    on, kind, lpar, lchi = args[5:9]
    cycle = (on[lpar] ^ on[lchi]).astype(np.int64)  # (loops, nq): tree coordinates on each loop's cycle
    depends = (cycle @ (E != 0).astype(np.int64)) > 0  # (loops, nz)
    graph = nx.Graph()
    graph.add_nodes_from(("loop", l) for l in range(len(kind)))
    graph.add_edges_from((("loop", l), ("z", j)) for l, j in zip(*np.nonzero(depends)))
    parts = []
    for nodes in sorted(nx.connected_components(graph), key=lambda c: min(k for t, k in c if t == "loop")):
        loops = np.array(sorted(k for t, k in nodes if t == "loop"), dtype=np.int64)
        columns = np.array(sorted(k for t, k in nodes if t == "z"), dtype=np.int64)
        if np.any(columns >= na):  # else no passive coordinate closes it: checked, not solved
            rows = np.concatenate([np.arange(loop_rows[l], loop_rows[l + 1]) for l in loops])
            parts.append(_new_part(args, E, na, spherical, loops, columns, rows))
    return tuple(parts)


def _new_part(args, E_all, na_all, spherical_all, loops, columns, rows) -> Part:
    """The :class:`Part` made of ``loops`` (l,), their residual ``rows`` and the free coordinates
    ``columns`` (sorted: the actuated ones come first) of a robot with kernel arrays ``args``,
    couplings' map E_all (nq, nz), ``na_all`` actuated free coordinates and spherical joints at
    ``spherical_all`` in z; its arrays read-only (one compiled signature of the kernels, and a
    frozen model)."""
    na = int(np.count_nonzero(columns < na_all))
    E = np.ascontiguousarray(E_all[:, columns])
    position = {int(k): i for i, k in enumerate(columns)}
    spherical = np.array([position[k] for k in spherical_all if k in position], dtype=np.int64)
    parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0 = args
    own = tuple(np.ascontiguousarray(array[loops]) for array in (kind, lpar, lchi, Fp, Fc, laxes, cos0))
    held = np.setdiff1d(np.arange(E_all.shape[1]), columns)
    for array in (*own, loops, columns, rows, E, spherical, held):
        array.flags.writeable = False
    return Part(
        loops,
        rows,
        columns,
        na,
        len(columns) - na,
        columns[:na],
        held,
        E,
        E[:, na:],
        spherical,
        (parent, code, origin, axes, qidx, on, *own),
    )


@dataclass(frozen=True)
class ClosureRank:
    """The rank decision of a part's J_f (:func:`closure_rank`)."""

    rank: int
    rows: int
    columns: int
    redundant: int
    free: int
    gap: float
    smallest_kept: float
    largest_dropped: float
    clean: bool


def closure_rank(Jf) -> ClosureRank:
    """The rank decision of a part's J_f (m_p, nf): ``rank``, the singular values above
    SINGULAR_S times the largest (or 1), the cut of :meth:`Part.inverse`; ``rows`` m_p and
    ``columns`` nf (``redundant`` = rows - rank equations depend on the others, ``free`` =
    columns - rank passive motions the rows leave free); ``gap``, the smallest kept over the
    largest dropped singular value (inf when none is dropped; missing values are zero);
    ``smallest_kept`` and ``largest_dropped`` relative to the largest; ``clean``: gap >= RANK_GAP
    with the cut at least RANK_MARGIN inside it."""
    rows, cols = Jf.shape
    s = np.linalg.svd(Jf, compute_uv=False) if Jf.size else np.zeros(0)
    s = np.concatenate([s, np.zeros(max(cols, rows) - len(s))])
    top = max(s[0], 1.0) if len(s) else 1.0
    cut = SINGULAR_S * top
    rank = int(np.count_nonzero(s[: min(rows, cols)] > cut))
    kept = s[rank - 1] if rank else 0.0
    dropped = s[rank] if rank < len(s) else 0.0
    gap = kept / dropped if dropped > 0 else np.inf
    clean = bool(gap >= RANK_GAP and (rank == 0 or kept >= RANK_MARGIN * cut) and dropped * RANK_MARGIN <= cut)
    return ClosureRank(
        rank, rows, cols, rows - rank, cols - rank, float(gap), float(kept / top), float(dropped / top), clean
    )


def condition_number(Jf) -> float:
    """cond(Jf) of Jf (m_p, nf); inf when Jf has fewer independent rows than columns; 1 for no
    columns."""
    return _condition_from(np.linalg.svd(Jf, compute_uv=False), Jf.shape[1]) if Jf.shape[1] else 1.0


def _condition_from(s, columns: int) -> float:
    """s[0] / s[-1] for the singular values s (descending) of a matrix of ``columns`` columns; inf
    when it has fewer, or one at or below SINGULAR_S times the largest (or 1)."""
    if len(s) < columns or s[-1] <= SINGULAR_S * max(s[0], 1.0):
        return np.inf
    return float(s[0] / s[-1])


def rcond_estimate(Jf) -> float:
    """min |R_ii| / max |R_ii| of the QR of Jf (m_p, nf) (>= 1 / cond(Jf)): the estimate the
    assembly paths watch (:func:`pga_dyn.loops.newton.newton_kernel`); 0 when Jf is
    rank-deficient."""
    if Jf.shape[0] < Jf.shape[1]:
        return 0.0
    d = np.abs(np.diag(np.linalg.qr(Jf, mode="r")))
    return float(d.min() / d.max()) if d.max() > 0 else 0.0
