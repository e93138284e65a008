"""The recursive parameter nullspace algorithm (RPNA; Wensing, Niemeyer and Slotine 2024).

Algorithms 1 and 2 of the RPNA paper for kinematic trees, written here in spatial-vector
algebra (Featherstone's conventions):

* motion vectors v = (omega; v) in body coordinates, v the velocity of the body-frame origin;
* ``iX_p(0)``, the transform of motion vectors from the parent frame to the joint frame at
  q = 0, is ``[[E, 0], [-E S(r), E]]`` for the joint frame at position r with rotation E^T in
  the parent (the journal's eq. 66 prints +E S(r): a typo);
* the spatial inertia of a body about its frame origin is
  ``I(phi) = [[Ibar, S(h)], [S(h)^T, m 1]]`` with phi = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz,
  Iyz, Izz] the classical parameters in the body frame (``pga_dyn.tp_regressor.LINK_PARAM_NAMES``,
  Pinocchio's order; the RPNA text and code use other orders, which only permute the rows).

For body i with joint free modes Phi_i (6 x n_d, constant in the body frame):

    V_{i-1+} = iX_p(0) V_p,          V_{i-} = Ctrb({(phi_ik x)}, V_{i-1+}),   V_i = [V_{i-}  Phi_i]
    K_{i-1+} = B_i^T K_p,            K_{i-} = Ctrb({A(phi_ik)^T}, K_{i-1+}),  K_i = [K_{i-}  M(V_i, Phi_i)]
    N_i = [M(V_i, Phi_i)^T ; K_{i-}^T A(phi_i1) ; ... ; K_{i-}^T A(phi_in)]

with B_i = B(iX_p(0)) (Algorithm 2 line 4 prints B_{i-}: it is B_i), the switched controllable
subspace Ctrb (smallest subspace containing the seed and invariant under every matrix), the
seed V_0 = the spatial gravity acceleration (0; -g) of ``pga_dyn.conventions.gravity_seed``
in the base frame (empty without gravity: the base does not move) and K_0 = 0. The transfer subspace of
joint i is T_i = Null(N_i): a change
r in body i's parameters with -B_i r moved onto its parent. The nullspace is the direct sum of
the T_i (Theorem 2, Appendix G): the columns of R with R_ii = basis of Null(N_i) and
R_{p(i), i} = -B_i R_ii. The system descriptor N (rows spanning the identifiable subspace,
Appendix G) has block row i equal to N_i times the composite transfer B_{i<-j} for every
descendant j of i, the transfer being pushed to the descendants (the text's "j < i" is a
typo): a change dphi is in the nullspace iff N_i r_i = 0 for every i, where
r_i = sum_{j in subtree(i)} B_{i<-j} dphi_j is what the transfers carry across joint i.

Joint types: R (Phi = (a; 0)), P ((0; a)), S ((1; 0), 6 x 3, the child-frame relative angular
velocity), F (the 6 x 6 identity: a floating base, whose body has T = {0}; gravity then adds
nothing). A universal joint has no constant free modes in the child frame; it is split into two
R joints through a massless virtual body, and the nullspace of the real bodies is the part of
the augmented nullspace with zero change on the virtual bodies (exact: the virtual columns of
the regressor are simply dropped). Only the columns of the virtual body v and of its child i
touch v, so that part is Null([R_v, -B_i R_i]) joint by joint: each vector stays on i and on v's
parent, and the basis keeps its block form. The per-body figures of a body behind a U joint are those
of the augmented chain.

The result's basis is in the parameter coordinates of ``pga_dyn.inertial_parameters`` (the
spatial assignment, DRNG eq. 97): the link-frame basis is mapped by the linear
``from_link_parameters`` (N_world = T0 N_link T0^T).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import gravity_seed, link_inertia
from pga_dyn.errors import PgaDynError
from pga_dyn.pga import skew
from pga_dyn.tp_regressor import link_blocks

from .result import NullspaceResult

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from pga_dyn.model import Robot

#: Relative tolerance of the rank decisions: singular values above RTOL times the largest count
#: (no rescaling of rows or columns, see :func:`span`). On 1500 random trees (tests/random_trees.py)
#: the kept values were >= 9.7e-5 and the dropped ones <= 7.4e-13 of the largest; with unit-norm
#: columns, round-off rescaled to 1.9e-9 had been kept (a nullspace of 28 for 30).
RTOL = 1e-9


# -- spatial algebra ------------------------------------------------------------------------


def crm(v: np.ndarray) -> np.ndarray:
    """The spatial cross product (v x) of a motion vector v = (omega; v): [[S(w), 0], [S(v), S(w)]]."""
    out = np.zeros((6, 6))
    w = skew(v[:3])
    out[:3, :3] = w
    out[3:, 3:] = w
    out[3:, :3] = skew(v[3:])
    return out


def xform(pose: npt.ArrayLike) -> np.ndarray:
    """The motion-vector transform from a parent frame to a frame with 4x4 ``pose`` in it:
    [[E, 0], [-E S(r), E]] with E = R^T, r = the frame's origin in the parent (Featherstone)."""
    pose = np.asarray(pose, dtype=float)
    E = pose[:3, :3].T
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ skew(pose[:3, 3])
    return X


def spatial_inertia(phi: np.ndarray) -> np.ndarray:
    """I(phi) about the frame origin for phi = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]."""
    m, h = phi[0], np.asarray(phi[1:4], dtype=float)
    out = np.empty((6, 6))
    out[:3, :3] = link_inertia(phi)
    out[:3, 3:] = skew(h)
    out[3:, :3] = skew(h).T
    out[3:, 3:] = m * np.eye(3)
    return out


def vee(I: np.ndarray) -> np.ndarray:
    """The parameters phi of a spatial inertia (inverse of :func:`spatial_inertia`)."""
    return np.array([I[3, 3], I[2, 4], I[0, 5], I[1, 3], I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


#: I(e_k) for the 10 unit parameter vectors.
_BASIS = np.array([spatial_inertia(e) for e in np.eye(10)])
_VEE_ROW = np.array([3, 2, 0, 1, 0, 0, 1, 0, 1, 2])
_VEE_COL = np.array([3, 4, 5, 3, 0, 1, 1, 2, 2, 2])


def _vee_all(stack) -> np.ndarray:
    """vee of each 6x6 matrix in ``stack`` (k, 6, 6), as the columns of a (10, k) matrix."""
    return stack[:, _VEE_ROW, _VEE_COL].T


def B_matrix(X: np.ndarray) -> np.ndarray:
    """B(X) = d/dphi [X^T I(phi) X]^vee (RPNA eq. 39), 10 x 10."""
    return _vee_all(np.einsum("ai,kab,bj->kij", X, _BASIS, X))


def A_matrix(phi_mode: np.ndarray) -> np.ndarray:
    """A(phi) = d/dphi [(phi x)^T I + I (phi x)]^vee (RPNA eq. 40), 10 x 10."""
    c = crm(phi_mode)
    prod = _BASIS @ c
    return _vee_all(prod + prod.transpose(0, 2, 1))


def M_matrix(V: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """M(V, Phi) = [d/dphi vec(V^T I(phi) Phi)]^T (RPNA eq. 52), 10 x (cols(V) cols(Phi))."""
    return np.einsum("al,kab,bj->klj", V, _BASIS, Phi).reshape(10, -1)


# -- subspaces ------------------------------------------------------------------------------


def _rank(s: np.ndarray, rtol: float) -> int:
    """The number of singular values ``s`` (descending) above ``rtol`` times the largest."""
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def span(matrix: np.ndarray, rtol: float = RTOL) -> np.ndarray:
    """An orthonormal basis of the column space: the left singular vectors whose singular values
    exceed ``rtol`` times the largest. The columns are not rescaled first: RPNA's matrices are
    products of orthonormal bases, unit modes and the 10 x 10 maps A, B of the geometry, so
    their scale is the geometry's, and rescaling a column that is zero up to round-off would
    turn the round-off into a direction."""
    if matrix.size == 0:
        return np.zeros((matrix.shape[0], 0))
    u, s, _ = np.linalg.svd(matrix, full_matrices=False)
    return u[:, : _rank(s, rtol)]


def null_rows(matrix: np.ndarray, cols: int, rtol: float = RTOL) -> np.ndarray:
    """An orthonormal basis (cols x k) of Null(matrix): the right singular vectors beyond its
    rank (singular values above ``rtol`` times the largest; rows not rescaled, see :func:`span`)."""
    if matrix.size == 0:
        return np.eye(cols)
    _, s, vt = np.linalg.svd(matrix, full_matrices=True)
    return vt[_rank(s, rtol) :].T


def controllable(matrices: Iterable[np.ndarray], seed: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the switched controllable subspace of the pairs (A_k, seed): the
    smallest subspace containing Range(seed) and invariant under every A_k (for one matrix, the
    range of the controllability matrix [seed, A seed, A^2 seed, ...])."""
    Q = span(seed)
    while 0 < Q.shape[1] < Q.shape[0]:
        grown = span(np.hstack([Q] + [A @ Q for A in matrices]))
        if grown.shape[1] == Q.shape[1]:
            break
        Q = grown
    return Q


# -- the algorithm ---------------------------------------------------------------------------


def _free_modes(kind: str, axis) -> np.ndarray:
    if kind == "R":
        return np.concatenate([axis, np.zeros(3)])[:, None]
    if kind == "P":
        return np.concatenate([np.zeros(3), axis])[:, None]
    if kind == "S":
        return np.vstack([np.eye(3), np.zeros((3, 3))])
    if kind == "F":
        return np.eye(6)
    raise PgaDynError(f"RPNA: joint type {kind!r} has no constant free modes")


@dataclass
class _Body:
    """A body of the (augmented) chain that RPNA runs on."""

    name: str
    parent: int  # index in the augmented list, -1 for the base
    X: np.ndarray  # iX_p(0)
    Phi: np.ndarray  # 6 x n_d
    real: int  # index of the robot body (1..n), 0 for a virtual body


def _chain(robot) -> list:
    """The bodies in order, with U joints split into two R joints through a virtual body."""
    bodies, where = [], {0: -1}
    for i in range(1, robot.n + 1):
        kind = robot.joint_type[i]
        p = where[int(robot.parent[i])]
        name = robot.body_names[i - 1]
        X = xform(robot.origin[i])
        if kind == "U":
            bodies.append(_Body(name + "#U1", p, X, _free_modes("R", robot.axes[i, 0]), 0))
            bodies.append(_Body(name, len(bodies) - 1, np.eye(6), _free_modes("R", robot.axes[i, 1]), i))
        else:
            bodies.append(_Body(name, p, X, _free_modes(kind, robot.axes[i, 0]), i))
        where[i] = len(bodies) - 1
    return bodies


@dataclass(repr=False)
class RpnaResult(NullspaceResult):
    """The RPNA answer: a :class:`NullspaceResult` (basis in the coordinates of
    ``pga_dyn.inertial_parameters``) plus the RPNA's own quantities, per body of the chain
    (``bodies``; a U joint adds a virtual body ``name#U1`` before its child):

    * ``dim_V``, ``dim_K``, ``dim_T``: dimensions of the velocity span V_i (with the gravity
      seed), of the identifiable-coefficient span K_i and of the transfer subspace
      T_i = Null(N_i) (the per-body figures of the RPNA tables);
    * ``rank_N``: rank of the descriptor N_i (= 10 - dim T_i, the identifiable combinations
      the body adds);
    * ``joint_dim_T``: per robot joint 1..n, the dimension of its transfer space, dim T_i, or
      for a U joint dim(T_v ∩ T_i) = 10 - rank [N_v; N_i] (a transfer across both R joints of
      the split, v the virtual body: the transfers are direct, so a transfer across the U joint
      is one across each);
    * ``V``, ``K``, ``N``: orthonormal bases of V_i, K_i and the descriptors N_i (rows);
    * ``link_basis``: the nullspace basis in link-frame parameters (10 n, dim), body-major,
      [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] per body; like ``basis``, kept in block
      form (``link_blocks``, at most two bodies per column) and built on first access (behind a
      U joint too: the projection that clears its virtual body combines the columns of that body
      and of its child only);
    * ``descriptor``: the system nullspace descriptor N of Appendix G in link-frame parameters:
      its rows span the identifiable subspace (the row space of the regressor), Null = nullspace.
      Built on first access (a dense matrix with a block per body and descendant: O(n^2) on a
      chain; the rest of the result is O(n) per body).

    The figures are also in ``certificate`` (lists, for code that reads any result).
    """

    bodies: tuple = ()
    dim_V: tuple = ()
    dim_K: tuple = ()
    dim_T: tuple = ()
    rank_N: tuple = ()
    V: tuple = ()
    K: tuple = ()
    N: tuple = ()
    # a factory, not a default: no class attribute, so a link_basis in block form is looked up by
    # NullspaceResult.__getattr__ (BLOCK_FORM)
    link_basis: np.ndarray = field(default_factory=lambda: None)
    link_blocks: tuple | None = field(default=None, repr=False)
    transfers: tuple = field(default=(), repr=False)  # B_i per body of the chain
    parents: tuple = field(default=(), repr=False)  # parent per body of the chain (-1: the base)
    real: tuple = field(default=(), repr=False)  # the bodies of the chain that are the robot's
    transfer_joint: np.ndarray | None = field(default=None, repr=False)
    joint_dim_T: tuple = ()

    @cached_property
    def provenance(self) -> tuple:
        """For each basis vector: the joint it transfers across, "rpna", "T_i (Theorem 2)"."""
        return tuple(
            {"joint": self.joint_names[j] if j >= 0 else None, "principle": "rpna", "equation": "T_i (Theorem 2)"}
            for j in self.transfer_joint
        )

    BLOCK_FORM = {"basis": "blocks", "link_basis": "link_blocks"}

    @cached_property
    def dim(self) -> int:
        """The number of basis vectors: the T_i are a direct sum (Theorem 2) and each T_i's basis
        is orthonormal, so the columns are independent (no SVD: linear in n)."""
        return self.num_vectors

    @cached_property
    def descriptor(self) -> np.ndarray:
        """The system descriptor (Appendix G): block row i is N_i B_{i<-j} in the columns of every
        descendant j of i (B_{i<-j} the composite transfer), the virtual bodies' columns dropped."""
        nb = len(self.parents)
        row_off = np.cumsum([0] + [N.shape[0] for N in self.N])
        D = np.zeros((row_off[-1], 10 * nb))
        for i in range(nb):
            carried = {i: self.N[i]}  # N_i B_{i<-j}, pushed down the subtree of i (bodies are in order)
            for j in range(i + 1, nb):
                if self.parents[j] in carried:
                    carried[j] = carried[self.parents[j]] @ self.transfers[j]
            for j, block in carried.items():
                D[row_off[i] : row_off[i + 1], 10 * j : 10 * j + 10] = block
        return D[:, np.concatenate([np.arange(10 * b, 10 * b + 10) for b in self.real])] if self.real else D[:, :0]

    def __repr__(self) -> str:
        return f"RpnaResult({self.robot_name!r}, dim={self.dim}, parameters={self.num_parameters}, dim_T={self.dim_T})"

    def table(self) -> str:
        """The per-body figures as a small text table."""
        width = max(8, *(len(b) for b in self.bodies)) if self.bodies else 8
        lines = [f"{'body':<{width}}  dim V  dim K  dim T  rank N"]
        for row in zip(self.bodies, self.dim_V, self.dim_K, self.dim_T, self.rank_N):
            lines.append(f"{row[0]:<{width}}  {row[1]:5d}  {row[2]:5d}  {row[3]:5d}  {row[4]:6d}")
        lines.append(f"nullspace {self.dim} of {self.num_parameters}, identifiable {self.num_base_parameters}")
        return "\n".join(lines)


def _check_tree(robot):
    if robot.loop_joints or robot.couplings:
        what = "loop joints" if robot.loop_joints else "coupled coordinates"
        raise PgaDynError(f"RPNA handles kinematic trees only; robot '{robot.name}' has {what} (use drng.nullspace)")


def rpna(robot: Robot) -> RpnaResult:
    """The regressor nullspace of a tree robot by the RPNA (Algorithms 1 and 2 of Wensing,
    Niemeyer and Slotine 2024), gravity as the seed V_0, floating bases as 6-DoF joints.

    Raises :class:`PgaDynError` for a robot with loop joints or couplings.
    """
    _check_tree(robot)
    start = time.perf_counter()
    chain = _chain(robot)
    nb = len(chain)
    V0 = gravity_seed(robot.gravity)[:, None] if np.any(robot.gravity) else np.zeros((6, 0))
    K0 = np.zeros((10, 0))
    Vs, Ks, Ns, Bs, Rs = [], [], [], [], []
    for body in chain:
        Vp = V0 if body.parent < 0 else Vs[body.parent]
        Kp = K0 if body.parent < 0 else Ks[body.parent]
        B = B_matrix(body.X)
        modes = [body.Phi[:, k] for k in range(body.Phi.shape[1])]
        cross = [crm(mode) for mode in modes]
        As = [A_matrix(mode) for mode in modes]
        # transfer across the link, then across the joint
        V_minus = controllable(cross, body.X @ Vp)
        K_minus = controllable([A.T for A in As], B.T @ Kp)
        # the joint's own effect
        V = span(np.hstack([V_minus, body.Phi]))
        M = M_matrix(V, body.Phi)
        K = span(np.hstack([K_minus, M]))
        N = np.vstack([M.T] + [K_minus.T @ A for A in As])
        Vs.append(V)
        Ks.append(K)
        Ns.append(N)
        Bs.append(B)
        Rs.append(null_rows(N, 10))
    dims_T = [R.shape[1] for R in Rs]
    joint_dim_T = tuple(
        null_rows(np.vstack([Ns[b - 1], Ns[b]]), 10).shape[1] if b and not chain[b - 1].real else dims_T[b]
        for b, body in enumerate(chain)
        if body.real
    )

    # nullspace basis (Appendix G) in block form: the columns of body b are Null(N_b) on b and
    # -B_b Null(N_b) on its parent, in link-frame parameters (lvals) and mapped by the block
    # diagonal F into those of eq. (97) (vals; a virtual body's blocks unmapped)
    F = link_blocks(robot)
    columns = []  # per body of the chain: (bodies (t, 2) in chain numbering + 1, lvals, vals (t, 2, 10))
    for b, body in enumerate(chain):
        t = dims_T[b]
        bodies, lvals, vals = np.zeros((t, 2), dtype=np.int64), np.zeros((t, 2, 10)), np.zeros((t, 2, 10))
        for slot, k, block in ((0, b, Rs[b]), (1, body.parent, -Bs[b] @ Rs[b])):
            if k >= 0:
                bodies[:, slot] = k + 1
                lvals[:, slot] = block.T
                vals[:, slot] = (F[chain[k].real - 1] @ block if chain[k].real else block).T
        columns.append((bodies, lvals, vals))
    # a U joint's virtual body v: keep the part of the span of the columns of v and of its child i
    # with no change on v (no other column touches v): Null([R_v, -B_i R_i]) combines them into
    # vectors on i and on v's parent, still at most two blocks each
    kept = []
    for b, body in enumerate(chain):
        if not body.real:
            continue
        if b and not chain[b - 1].real:  # i = b behind its virtual body v = b - 1
            (_, vl, vv), (_, il, iv) = columns[b - 1], columns[b]
            tv = vl.shape[0]
            Z = null_rows(np.hstack([vl[:, 0].T, il[:, 1].T]), tv + il.shape[0])
            za, zb = Z[:tv], Z[tv:]
            t = Z.shape[1]
            bodies = np.column_stack([np.full(t, b + 1), np.full(t, chain[b - 1].parent + 1)])
            lvals = np.stack([(il[:, 0].T @ zb).T, (vl[:, 1].T @ za).T], axis=1)
            vals = np.stack([(iv[:, 0].T @ zb).T, (vv[:, 1].T @ za).T], axis=1)
            kept.append((bodies, lvals, vals))
        else:
            kept.append(columns[b])
    real = [b for b, body in enumerate(chain) if body.real]
    renumber = np.zeros(nb + 1, dtype=np.int64)  # chain body + 1 -> robot body (0: the base)
    renumber[1:] = [body.real for body in chain]
    empty = (np.zeros((0, 2), dtype=np.int64), np.zeros((0, 2, 10)), np.zeros((0, 2, 10)))  # a robot with no body
    bodies = renumber[np.concatenate([empty[0]] + [c[0] for c in kept])]
    lvals, vals = (np.concatenate([empty[k]] + [c[k] for c in kept]) for k in (1, 2))
    transfer = np.concatenate(
        [np.zeros(0, dtype=np.int64)]
        + [np.full(c[0].shape[0], chain[b].real, dtype=np.int64) for b, c in zip(real, kept)]
    )
    blocks, link = (robot.n, bodies, vals), (robot.n, bodies, lvals)
    seconds = time.perf_counter() - start

    names = tuple(body.name for body in chain)
    figures = {
        "bodies": names,
        "dim_V": [V.shape[1] for V in Vs],
        "dim_K": [K.shape[1] for K in Ks],
        "dim_T": dims_T,
        "rank_N": [10 - t for t in dims_T],
        "gravity_seed": bool(V0.shape[1]),
    }
    return RpnaResult(
        robot.name,
        "rpna",
        None,
        None,
        robot.joint_names,
        None,
        figures,
        True,
        seconds,
        bodies=names,
        dim_V=tuple(figures["dim_V"]),
        dim_K=tuple(figures["dim_K"]),
        dim_T=tuple(dims_T),
        rank_N=tuple(figures["rank_N"]),
        V=tuple(Vs),
        K=tuple(Ks),
        N=tuple(Ns),
        link_basis=None,
        link_blocks=link,
        blocks=blocks,
        transfers=tuple(Bs),
        parents=tuple(body.parent for body in chain),
        real=tuple(real),
        transfer_joint=transfer,
        joint_dim_T=joint_dim_T,
    )
