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
from numba import njit

from ..borrowed import borrowed
from ..interpreted import SMALL_BODIES, first_calls
from ..kinematics import forward, twists
from .closure import CLOSURE_TOL, loop_kernel, loop_work, residual_rows
from .newton import newton_kernel, next_point, svd_into, svd_work

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
        # e0 of the part, its other free coordinates held: a new writable array, as in record_kernel (one signature)
        e0 = e0 + E[:, self.held] @ z[self.held] if self.held.size else e0.copy()
        local = z[self.columns]
        # a process's first paths on a small robot: the kernel's source run by Python when the compiled
        # kernel is neither loaded nor in numba's cache (pga_dyn.interpreted.first_calls; the same results)
        status, norm = first_calls(newton_kernel, self.args[0].shape[0] <= SMALL_BODIES + 1)(
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


# -- compiled batches: assembly along a record, projection of many states ----------------------------
def pack_parts(parts: tuple) -> tuple:
    """The arrays of the parts ``parts`` (:class:`Part`) that :func:`record_kernel` and
    :func:`project_kernel` read, concatenated in part order with offsets (parts + 1,) into them:
    (loop offsets, the parts' own loop arrays kind, lpar, lchi, Fp, Fc, laxes, cos0 (as in
    :attr:`Part.args`), column offsets, columns, na of each part (parts,), held offsets, held,
    offsets of E, each part's E (nq, c) flattened, spherical offsets, spherical, row offsets,
    rows); read-only (one compiled signature)."""

    def joined(arrays, dtype):
        return np.ascontiguousarray(np.concatenate(arrays), dtype=dtype)

    def offsets(sizes):
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    own = [joined([part.args[a] for part in parts], parts[0].args[a].dtype) for a in range(6, 13)]
    packed = (
        offsets([len(part.loops) for part in parts]),
        *own,
        offsets([len(part.columns) for part in parts]),
        joined([part.columns for part in parts], np.int64),
        np.array([part.na for part in parts], dtype=np.int64),
        offsets([len(part.held) for part in parts]),
        joined([part.held for part in parts], np.int64),
        offsets([part.E.size for part in parts]),
        joined([part.E.reshape(-1) for part in parts], float),
        offsets([len(part.spherical) for part in parts]),
        joined([part.spherical for part in parts], np.int64),
        offsets([len(part.rows) for part in parts]),
        joined([part.rows for part in parts], np.int64),
    )
    for array in packed:
        array.flags.writeable = False
    return packed


@njit(cache=True)
def _assemble_state(
    args,
    E,
    e0,
    na,
    packed,
    rcond_ref,
    z,
    q_a,
    tol,
    max_iter,
    min_factor,
    follow,
    r,
    J,
    last,
    before,
    known,
    work,
    buf,
    tangents,
    rhos,
):
    """Assemble every part of ``packed`` (:func:`pack_parts`) at actuated position q_a (na,) from the
    free coordinates z (nz,), updated in place (its actuated coordinates become q_a): the compiled
    twin of :meth:`pga_dyn.loops.system.Constraints.assemble_parts` on all parts from z, each part
    by :func:`pga_dyn.loops.newton.newton_kernel` with q = E_p z_p + e0 + E_held z_held and
    min_rcond = ``min_factor`` rcond_ref of the part (0: any path). With ``follow`` (z is the
    previous sample's assembled state and J (m, nq) the loops' Jacobian there), a part first tries
    the path's single step from it (:func:`pga_dyn.loops.newton.next_point`, the tangent predictor
    from the previous sample plus the second-order term extrapolated from the corrections of the
    part's last two steps, 2 c_1 - c_2, or c_1 after one step, where c = assembled - tangent's
    predicted passive coordinates: ``last``, ``before`` (nz,), and ``known`` (parts,) how many of
    them hold for each part, updated here), and newton_kernel runs where that does not pass. Returns (status,
    part, residual, fresh) of the first part that fails (status 1: the path leaves the workspace,
    2: it meets a singularity), (0, -1, 0, fresh) when all assemble; ``fresh``: r (m,) and J hold
    the loops' residual and Jacobian at the new point (one part with every row and column, assembled
    by that single step). Work arrays (:func:`_step_work`): ``work`` (T, S, V, A of the forward
    kinematics, its seed and zero qd), ``buf`` (1-D), and each part's -J_f^+ J_a (nf, n_a) and its
    reciprocal condition estimate at the end of its last single step, ``tangents`` (flat) and
    ``rhos`` (parts,): where the record has one part and its last sample took that step, its next
    step starts from them (next_point's ``known``)."""
    parent, code, origin, axes, qidx, on = args[0], args[1], args[2], args[3], args[4], args[5]
    loops, kind, lpar, lchi, Fp, Fc, laxes, cos0 = packed[:8]
    cols_off, cols, part_na, held_off, held, e_off, e_flat, sph_off, sph = packed[8:17]
    rows_off, rows = packed[17], packed[18]
    nq = E.shape[0]
    whole = part_na.shape[0] == 1 and rows_off[1] == r.shape[0] and held_off[1] == 0
    fresh = False
    at_tangent = 0
    for k in range(part_na.shape[0]):
        a, b, c0, c = loops[k], loops[k + 1], cols_off[k], cols_off[k + 1] - cols_off[k]
        r0, mp, nf = rows_off[k], rows_off[k + 1] - rows_off[k], c - part_na[k]
        e0k, at = buf[:nq], nq  # views of buf, not allocations
        local, at = buf[at : at + c], at + c
        target, at = buf[at : at + part_na[k]], at + part_na[k]
        curvature, at = buf[at : at + nf], at + nf
        predicted, at = buf[at : at + c], at + c
        Jz, at = buf[at : at + mp * c].reshape((mp, c)), at + mp * c  # J_p E_p at the previous sample
        P = tangents[at_tangent : at_tangent + nf * part_na[k]].reshape((nf, part_na[k]))
        at_tangent += nf * part_na[k]
        for i in range(nq):
            s = 0.0
            for h in range(held_off[k], held_off[k + 1]):
                s += E[i, held[h]] * z[held[h]]
            e0k[i] = e0[i] + s
        for j in range(c):
            local[j] = z[cols[c0 + j]]
        for j in range(part_na[k]):
            target[j] = q_a[cols[c0 + j]]
        Ek = e_flat[e_off[k] : e_off[k + 1]].reshape((nq, c))
        stepped = False
        if follow:
            for j in range(nf):
                col = cols[c0 + part_na[k] + j]
                curvature[j] = 2.0 * last[col] - before[col] if known[k] == 2 else last[col] if known[k] == 1 else 0.0
            for i in range(mp):
                for j in range(c):
                    v = 0.0
                    for l in range(nq):
                        v += J[rows[r0 + i], l] * Ek[l, j]
                    Jz[i, j] = v
            rk, Jk = (r, J) if whole else (np.empty(mp), np.empty((mp, nq)))
            reuse = whole and known[k] > 0  # a variable: a condition inside a call this long is not numba's bytecode
            stepped = next_point(
                parent,
                code,
                origin,
                axes,
                qidx,
                on,
                kind[a:b],
                lpar[a:b],
                lchi[a:b],
                Fp[a:b],
                Fc[a:b],
                laxes[a:b],
                cos0[a:b],
                Ek,
                e0k,
                part_na[k],
                sph[sph_off[k] : sph_off[k + 1]],
                local,
                target,
                Jz,
                tol,
                max_iter,
                max(rcond_ref[k], 1e-300),
                min_factor * rcond_ref[k],
                rk,
                Jk,
                curvature,
                predicted,
                work,
                buf[at:],
                P,
                rhos[k : k + 1],
                reuse,
            )
            fresh = whole and stepped
            if stepped:
                for j in range(part_na[k], c):
                    before[cols[c0 + j]] = last[cols[c0 + j]]
                    last[cols[c0 + j]] = local[j] - predicted[j] + curvature[j - part_na[k]]  # from the tangent's point
        known[k] = min(known[k] + 1, 2) if stepped else 0
        if not stepped:
            status, norm = newton_kernel(
                parent,
                code,
                origin,
                axes,
                qidx,
                on,
                kind[a:b],
                lpar[a:b],
                lchi[a:b],
                Fp[a:b],
                Fc[a:b],
                laxes[a:b],
                cos0[a:b],
                Ek,
                e0k,
                part_na[k],
                sph[sph_off[k] : sph_off[k + 1]],
                local,
                target,
                tol,
                max_iter,
                max(rcond_ref[k], 1e-300),
                min_factor * rcond_ref[k],
            )
            if status:
                return status, k, norm, False
        for j in range(c):
            z[cols[c0 + j]] = local[j]
    for j in range(na):
        z[j] = q_a[j]
    return 0, -1, 0.0, fresh


@njit(cache=True)
def _inverses(E, na, packed, J, G, conds, pinvs, work):
    """The projection of :meth:`pga_dyn.loops.system.Constraints.project` at a configuration whose
    loops' Jacobian is J (m, nq): G = E_a - sum_p E_f J_f^+ J_p E_a (nq, n_a) and cond(J_f) of
    each part into ``conds`` (parts,) (inf where singular), J_f^+ from the SVD with the singular
    values at or below SINGULAR_S max(s_0, 1) left out (:meth:`Part.inverse`), each part's J_f^+
    (nf, m_p) into ``pinvs``, one after the other, flattened (what :func:`_motion` reads). No
    allocation: ``pinvs`` and ``work`` (1-D) as :func:`_inverse_work` makes them."""
    cols_off, cols, part_na = packed[8], packed[9], packed[10]
    rows_off, rows = packed[17], packed[18]
    nq = E.shape[0]
    parts = part_na.shape[0]
    for i in range(nq):
        for j in range(na):
            G[i, j] = E[i, j]
    at = 0
    for k in range(parts):
        r0, mp = rows_off[k], rows_off[k + 1] - rows_off[k]
        f0, nf = cols_off[k] + part_na[k], cols_off[k + 1] - cols_off[k] - part_na[k]
        ks = min(mp, nf)
        Jf = work[: mp * nf].reshape((mp, nf))
        JEa = work[mp * nf : mp * (nf + na)].reshape((mp, na))
        X = work[mp * (nf + na) : mp * (nf + na) + nf * na].reshape((nf, na))  # J_f^+ J_p E_a
        w0 = mp * (nf + na) + nf * na
        u = work[w0 : w0 + mp * ks].reshape((mp, ks))
        sv = work[w0 + mp * ks : w0 + mp * ks + ks]
        vt = work[w0 + mp * ks + ks : w0 + mp * ks + ks + ks * nf].reshape((ks, nf))
        for i in range(mp):
            for a in range(nf):
                s = 0.0
                for l in range(nq):
                    s += J[rows[r0 + i], l] * E[l, cols[f0 + a]]
                Jf[i, a] = s
        svd_into(Jf, u, sv, vt, work[w0 + mp * ks + ks + ks * nf :])
        cut = SINGULAR_S * max(sv[0], 1.0)
        conds[k] = np.inf if ks < nf or sv[ks - 1] <= cut else sv[0] / sv[ks - 1]
        pinv = pinvs[at : at + nf * mp].reshape((nf, mp))
        at += nf * mp
        for a in range(nf):
            for i in range(mp):
                s = 0.0
                for c in range(ks):
                    if sv[c] > cut:
                        s += vt[c, a] / sv[c] * u[i, c]
                pinv[a, i] = s
        for i in range(mp):
            for j in range(na):
                s = 0.0
                for l in range(nq):
                    s += J[rows[r0 + i], l] * E[l, j]
                JEa[i, j] = s
        for a in range(nf):
            for j in range(na):
                v = 0.0
                for i in range(mp):
                    v += pinv[a, i] * JEa[i, j]
                X[a, j] = v
        for i in range(nq):
            for a in range(nf):
                e = E[i, cols[f0 + a]]
                if e != 0.0:
                    for j in range(na):
                        G[i, j] -= e * X[a, j]


@njit(cache=True)
def _inverse_work(packed, na):
    """The arrays of :func:`_inverses` for the parts ``packed`` (:func:`pack_parts`) and n_a
    actuated coordinates: ``pinvs`` (the parts' J_f^+ (nf, m_p) one after the other) and a 1-D
    work array long enough for any part's J_f, J_p E_a, J_f^+ J_p E_a, SVD and its work."""
    cols_off, part_na, rows_off = packed[8], packed[10], packed[17]
    pinvs, size = 0, 0
    for k in range(part_na.shape[0]):
        mp, nf = rows_off[k + 1] - rows_off[k], cols_off[k + 1] - cols_off[k] - part_na[k]
        ks = min(mp, nf)
        pinvs += nf * mp
        size = max(size, mp * (nf + na) + nf * na + mp * ks + ks + ks * nf + svd_work(mp, nf))
    return np.empty(pinvs), np.empty(size)


@njit(cache=True)
def _work(args, nq):
    """The work arrays of :func:`_loops_at` for a robot with kernel arrays ``args`` and nq tree
    coordinates: T (n + 1, 4, 4), S (nq, 6), V, A (n + 1, 6) of :func:`pga_dyn.kinematics.forward`,
    its zero base acceleration (6,), zero qdd (nq,) and the work array of
    :func:`pga_dyn.loops.closure.loop_kernel` (:func:`pga_dyn.loops.closure.loop_work`)."""
    n = args[0].shape[0] - 1
    return (
        np.empty((n + 1, 4, 4)),
        np.zeros((nq, 6)),
        np.empty((n + 1, 6)),
        np.empty((n + 1, 6)),
        np.zeros(6),
        np.zeros(nq),
        loop_work(),
    )


@njit(cache=True)
def _step_work(packed, nq):
    """The work arrays of :func:`_assemble_state` for the parts ``packed`` (:func:`pack_parts`) and nq
    tree coordinates: a 1-D buffer long enough for any part's arrays and those of
    :func:`pga_dyn.loops.newton.next_point`, each part's -J_f^+ J_a (nf, n_a) flattened one after
    the other, and their reciprocal condition estimates (parts,)."""
    cols_off, part_na, rows_off = packed[8], packed[10], packed[17]
    size, tangents = 0, 0
    for k in range(part_na.shape[0]):
        c, mp, na = cols_off[k + 1] - cols_off[k], rows_off[k + 1] - rows_off[k], part_na[k]
        nf = c - na
        own = nq + 3 * c + nf + mp * c  # e0, local, target (na <= c), curvature, predicted, Jz
        step = (mp + nf) * (nf + 1 + na) + nf * (mp + 2) + mp * c + na + c + nq
        size = max(size, own + step)
        tangents += nf * na
    return np.empty(size), np.empty(tangents), np.empty(part_na.shape[0])


@njit(cache=True)
def _loops_at(args, q, qd, work, r, J, bias):
    """:func:`pga_dyn.loops.closure.motion_kernel` into given arrays: the loops' residual r (m,),
    Jacobian J (m, nq) and, when ``bias`` has m rows (not 0), the bias Jd qd at (q, qd) (nq,),
    the forward kinematics in the work arrays ``work`` (:func:`_work`): no arrays allocated per
    state."""
    parent, code, origin, axes, qidx, on, kind, lpar, lchi, Fp, Fc, laxes, cos0 = args
    T, S, V, A, seed, zero, scratch = work
    forward(parent, code, origin, axes, qidx, seed, q, qd, zero, T, S, V, A)
    loop_kernel(T, S, V, A, on, kind, lpar, lchi, Fp, Fc, laxes, cos0, bias.shape[0] > 0, r, J, bias, scratch)


@njit(cache=True)
def _motion(args, E, packed, G, pinvs, qd_a, qdd_a, qd, qdd, work, r, J, bias):
    """The velocities of :meth:`pga_dyn.loops.system.Constraints.project` at an assembled q
    with G (nq, n_a) and the parts' J_f^+ ``pinvs`` there (:func:`_inverses`): qd = G qd_a and
    qdd = G qdd_a - sum_p E_f J_f^+ (Jd qd)_p (nq,) for the actuated qd_a, qdd_a (n_a,); the bias
    by :func:`pga_dyn.loops.closure.loop_kernel` on the poses and Jacobian lines that ``work``
    holds (T, S: the loops' last evaluation, at q) with the twists of qd
    (:func:`pga_dyn.kinematics.twists`: no poses computed again), into r (m,), J (m, nq), bias (m,)
    (overwritten)."""
    cols_off, cols, part_na = packed[8], packed[9], packed[10]
    rows_off, rows = packed[17], packed[18]
    nq, na = G.shape
    for i in range(nq):
        s, s2 = 0.0, 0.0
        for j in range(na):
            s += G[i, j] * qd_a[j]
            s2 += G[i, j] * qdd_a[j]
        qd[i], qdd[i] = s, s2
    T, S, V, A, seed, zero, scratch = work
    twists(args[0], args[1], args[4], seed, qd, zero, S, V, A)
    loop_kernel(T, S, V, A, *args[5:], bias.shape[0] > 0, r, J, bias, scratch)
    at = 0
    for k in range(part_na.shape[0]):
        r0, mp = rows_off[k], rows_off[k + 1] - rows_off[k]
        f0, nf = cols_off[k] + part_na[k], cols_off[k + 1] - cols_off[k] - part_na[k]
        pinv = pinvs[at : at + nf * mp].reshape((nf, mp))
        at += nf * mp
        for a in range(nf):
            y = 0.0
            for i in range(mp):
                y += pinv[a, i] * bias[rows[r0 + i]]
            for l in range(nq):
                qdd[l] -= E[l, cols[f0 + a]] * y


@njit(cache=True)
def _record(inputs, outputs, scratch, owner):
    """:func:`record_kernel`'s loop on its arrays borrowed (:func:`pga_dyn.borrowed.borrowed`): its
    arguments (``inputs`` in its order, ``outputs`` = (Q, QD, QDD, G, cond)), and ``scratch``, the
    work arrays it allocates, which ``owner`` (the same, not borrowed) holds until this returns."""
    args, E, e0, z_index, na, loop_rows, n_loops, packed, rcond_ref, z_ref, first, q_a, qd_a, qdd_a = inputs[:14]
    tol, max_iter, min_factor, limit = inputs[14:]  # the order of record_kernel's arguments
    Q, QD, QDD, G, cond = outputs
    ns, nq, nz = q_a.shape[0], E.shape[0], E.shape[1]
    z, zero, conds, r, J, work, none, rb, Jb, bias, last, before, known, buf, tangents, rhos, pinvs, inverse_work = (
        scratch
    )
    for s in range(ns):
        for j in range(nz):
            z[j] = z_ref[j] if first[s] else Q[s - 1, z_index[j]]
        status, k, norm, fresh = _assemble_state(
            args,
            E,
            e0,
            na,
            packed,
            rcond_ref,
            z,
            q_a[s],
            tol,
            max_iter,
            min_factor,
            not first[s],
            r,
            J,
            last,
            before,
            known,
            work,
            buf,
            tangents,
            rhos,
        )
        if status:
            return s, status, k, norm
        q = Q[s]
        for i in range(nq):
            v = 0.0
            for j in range(nz):
                v += E[i, j] * z[j]
            q[i] = v + e0[i]
        if not fresh:  # the loops' residual and Jacobian at q
            _loops_at(args, q, zero, work, r, J, none)
        for l in range(n_loops):
            v = 0.0
            for i in range(loop_rows[l], loop_rows[l + 1]):
                v += r[i] * r[i]
            if np.sqrt(v) > CLOSURE_TOL:
                return s, 3, l, np.sqrt(v)
        _inverses(E, na, packed, J, G[s], conds, pinvs, inverse_work)
        _motion(args, E, packed, G[s], pinvs, qd_a[s], qdd_a[s], QD[s], QDD[s], work, rb, Jb, bias)
        cond[s] = conds.max()
        if cond[s] == np.inf:
            return s, 4, -1, cond[s]
        if cond[s] >= limit:
            return s, 5, -1, cond[s]
    return ns, 0, -1, 0.0


@njit(cache=True)
def record_kernel(
    args,
    E,
    e0,
    z_index,
    na,
    loop_rows,
    n_loops,
    packed,
    rcond_ref,
    z_ref,
    first,
    q_a,
    qd_a,
    qdd_a,
    tol,
    max_iter,
    min_factor,
    limit,
    Q,
    QD,
    QDD,
    G,
    cond,
):
    """Assemble a record of actuated states q_a, qd_a, qdd_a (ns, n_a) sample by sample, each from
    the previous sample's free coordinates z = q[z_index] (or from ``z_ref`` (nz,) where ``first``
    (ns,) is set): every part by Newton along the straight path in q_a (:func:`_assemble_state`,
    the tangent predictor and the branch watch of :func:`pga_dyn.loops.newton.newton_kernel`; from
    the previous sample, its one step from that sample's Jacobian, :func:`pga_dyn.loops.newton.next_point`,
    with the second-order term of the last corrections),
    q = E z + e0, the first ``n_loops`` loop joints checked closed (residual norm of each
    over its rows ``loop_rows`` at most CLOSURE_TOL), then projected (:func:`_inverses`, :func:`_motion`):
    Q, QD, QDD (ns, nq), G (ns, nq, n_a), cond (ns,) = cond(J_p), the largest cond(J_f) of the
    parts, filled up to the sample returned. The compiled twin of
    :meth:`pga_dyn.loops.system.Constraints.complete` applied in turn.

    Returns (sample, status, which, value): (ns, 0, -1, 0) when every sample assembles below
    ``limit``; else the first sample refused, status 1 or 2 with the part and its residual
    (:func:`_assemble_state`), 3 with the open loop joint and its residual norm, 4 (J_p
    singular) or 5 (cond(J_p) >= ``limit``, in cond[sample])."""
    nq, nz, m = E.shape[0], E.shape[1], loop_rows[-1]
    parts = packed[10].shape[0]
    buf, tangents, rhos = _step_work(packed, nq)
    pinvs, inverse_work = _inverse_work(packed, na)
    scratch = (
        np.empty(nz),  # z
        np.zeros(nq),  # zero qd
        np.empty(parts),  # conds
        np.empty(m),  # r, J: the loops' at the last sample
        np.empty((m, nq)),
        _work(args, nq),
        np.empty(0),  # none: no bias
        np.empty(m),  # rb, Jb, bias: for the bias
        np.empty((m, nq)),
        np.empty(m),
        np.zeros(nz),  # last, before, known: the corrections
        np.zeros(nz),
        np.zeros(parts, dtype=np.int64),
        buf,
        tangents,
        rhos,
        pinvs,
        inverse_work,
    )
    # every array lent without reference counts (about 800 a sample otherwise,
    # pga_dyn.borrowed): the caller holds the arguments, and passing the work arrays as they are
    # too holds them
    inputs = (args, E, e0, z_index, na, loop_rows, n_loops, packed, rcond_ref, z_ref, first, q_a, qd_a, qdd_a)
    options = (tol, max_iter, min_factor, limit)
    return _record(borrowed((*inputs, *options)), borrowed((Q, QD, QDD, G, cond)), borrowed(scratch), scratch)


@njit(cache=True)
def _project(args, E, na, packed, Q, qd_a, qdd_a, QD, QDD, G, cond, scratch, owner):
    """:func:`project_kernel`'s loop on its arrays borrowed (:func:`pga_dyn.borrowed.borrowed`): its
    arguments, and ``scratch``, the work arrays it allocates, which ``owner`` (the same, not
    borrowed) holds until this returns."""
    conds, work, none, r, J, rb, Jb, bias, pinvs, inverse_work = scratch
    for s in range(Q.shape[0]):
        _loops_at(args, Q[s], work[5], work, r, J, none)
        _inverses(E, na, packed, J, G[s], conds, pinvs, inverse_work)
        cond[s] = conds.max()
        for k in range(qd_a.shape[0]):
            _motion(args, E, packed, G[s], pinvs, qd_a[k, s], qdd_a[k, s], QD[k, s], QDD[k, s], work, rb, Jb, bias)


@njit(cache=True)
def project_kernel(args, E, na, packed, Q, qd_a, qdd_a, QD, QDD, G, cond):
    """The projection at each tree configuration Q (ns, nq), not assembled (:func:`_inverses`: G
    (ns, nq, n_a) and cond (ns,) = cond(J_p), inf where a part is singular), and for each of k
    sets of actuated velocities and accelerations qd_a, qdd_a (k, ns, n_a) the tree's QD, QDD
    (k, ns, nq) there (:func:`_motion`; the sets at one configuration share its G and J_f^+);
    the compiled twin of :meth:`pga_dyn.loops.system.Constraints.project` applied to each sample
    and set."""
    nq = Q.shape[1]
    m = residual_rows(args[6])
    pinvs, inverse_work = _inverse_work(packed, na)
    scratch = (
        np.empty(packed[10].shape[0]),  # conds
        _work(args, nq),
        np.empty(0),  # none: no bias
        np.empty(m),  # r, J: the loops' at Q[s]
        np.empty((m, nq)),
        np.empty(m),  # rb, Jb, bias: for the bias
        np.empty((m, nq)),
        np.empty(m),
        pinvs,
        inverse_work,
    )
    # as in record_kernel: every array lent without reference counts
    return _project(*borrowed((args, E, na, packed, Q, qd_a, qdd_a, QD, QDD, G, cond, scratch)), scratch)
