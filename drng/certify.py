"""The verification criteria (101) and the completeness certificate of a nullspace basis."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.errors import PgaDynError
from pga_dyn.model import check_robot

from .numerical import BUDGET, LARGEST_ENTRY, MEMORY, SAMPLED_RTOL, Budget, rank_at_gap
from .result import NullspaceResult, check_memory, complement, one_blas_thread, orthonormal, rank

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

#: Relative residual ||Y B||_F / ||Y||_F below which a basis is in the nullspace.
RESIDUAL_TOL = 1e-10


def _matrix(name: str, value, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    """A finite 2-D float array with the given number of rows or columns, or a PgaDynError."""
    from pga_dyn.kinematics import float_array

    x = float_array(name, value)
    if x.ndim != 2 or (rows is not None and x.shape[0] != rows) or (cols is not None and x.shape[1] != cols):
        want = f"({rows if rows is not None else 'k'}, {cols if cols is not None else 'k'})"
        raise PgaDynError(f"{name} must be a matrix of shape {want}, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise PgaDynError(f"{name} contains non-finite values")
    return x


@one_blas_thread
def verify(
    robot: Robot,
    basis: NullspaceResult | npt.ArrayLike,
    samples: int = 200,
    seed: int | None = 0,
    Y: npt.ArrayLike | None = None,
) -> dict:
    """The paper's criteria (101) on a nullspace basis.

    Parameters
    ----------
    robot : Robot
    basis : NullspaceResult or array_like (10 n, k)
        B_null, in the parameters of ``pga_dyn.inertial_parameters``.
    samples, seed :
        The valid states of the stacked regressor Y (unless ``Y`` is given).
    Y : array_like (rows, 10 n), optional

    Returns
    -------
    dict
        ``residual`` ||Y B_null||_F / ||Y||_F, ``rank_base`` rank(B) and ``rank_YB`` rank(Y B)
        for B the complement of span(B_null), and ``ok``: residual < RESIDUAL_TOL and the ranks
        agree.
    """
    from .numerical import stacked_regressor

    nparam = 10 * check_robot(robot).n
    basis = _matrix("basis", basis.basis if isinstance(basis, NullspaceResult) else basis, rows=nparam)
    Y = stacked_regressor(robot, samples, seed)[0] if Y is None else _matrix("Y", Y, cols=nparam)
    if not np.any(Y):
        raise PgaDynError("Y is zero: no regressor rows to verify against")
    residual = np.linalg.norm(Y @ basis) / np.linalg.norm(Y) if basis.size else 0.0
    base = complement(basis, nparam)
    rank_base = rank(base)[0]
    rank_yb = rank(Y @ base)[0] if base.size else 0
    return {
        "residual": float(residual),
        "rank_base": rank_base,
        "rank_YB": rank_yb,
        "ok": bool(residual < RESIDUAL_TOL and rank_yb == rank_base),
    }


def default_samples(robot: Robot) -> int:
    """Samples of a certificate when none is given: enough for 3 regressor rows per parameter,
    ceil(30 n / n_a) (a tree with n_a = n: 30)."""
    return max(1, -(-30 * robot.n // max(len(robot.actuated), 1)))


@one_blas_thread
def certificate(
    robot: Robot,
    result: NullspaceResult,
    samples: int | None = None,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    budget: float | None = BUDGET,
    memory: float = MEMORY,
) -> NullspaceResult:
    """Certify ``result`` (a basis inside the nullspace gives a lower bound on its dimension;
    the sampled regressor a lower bound on the identifiable rank): when both add up to 10 n
    they are exact.

    Y (samples n_a, 10 n) is the stacked regressor of ``samples`` valid states (default
    :func:`default_samples`; at least 2 rows per parameter). On a tree whose result is in block
    form the rank is bounded blockwise without forming Y (:func:`tree_certificate`, O(n) time
    and memory); when that bound falls short of 10 n - dim, and on every other robot, Y is
    formed: its rank r is read at the largest singular gap of the column-scaled Y
    (:func:`drng.numerical.rank_at_gap`) and trusted only when clean (gap >= GAP_MIN with the
    threshold inside it). The basis B is checked on an independent Y':
    ||Y' B||_F / ||Y'||_F < RESIDUAL_TOL. When rank(B) + r < 10 n, B is completed with the
    directions of Null(Y) not in span(B), localised on the fewest bodies a greedy pass finds
    (:func:`_remainder`), which ``certificate["short"]`` names. Certified when the (completed)
    basis passes the residual test and rank(B) + r = 10 n with a clean gap. ``certificate``
    holds rank, rank_drng, rank_numerical, gap, threshold, smallest_kept, largest_dropped,
    clean, residual, samples, short and structure ("block-triangular" or "dense").
    ``bounds``: the sampling box of the actuated coordinates
    (:func:`pga_dyn.sampling.bounds_array`). A proven result stays proven unless the
    completion adds vectors (the proof would then be contradicted: ``proven`` False, and the
    status says what the sampling found).

    ``budget`` (seconds, None: no limit) bounds the sampling and the factorisations, ``memory``
    (bytes) the matrices: a PgaDynError says what could not be done when they would not fit
    (:class:`drng.numerical.Budget`, :func:`drng.numerical.check_memory`)."""
    from pga_dyn.sampling import count

    nparam = 10 * check_robot(robot).n
    where = robot.source or robot.name
    if nparam == 0:
        raise PgaDynError(f"{where}: {robot.name} has no moving body: there are no inertial parameters to certify")
    na = len(robot.actuated)
    samples = default_samples(robot) if samples is None else count("samples", samples)
    if samples * na < 2 * nparam:
        raise PgaDynError(
            f"samples={samples} gives {samples * na} regressor rows for {nparam} "
            f"parameters: a certificate needs at least {-(-2 * nparam // max(na, 1))} samples"
        )
    clock = Budget(budget, f"{where}: the certificate")
    if not robot.constrained and result.blocks is not None:
        info = tree_certificate(robot, result, samples, seed, bounds, clock, memory)
        if info is not None:
            return _certified(result, result.blocks, result.codes, result.geometric, info)
    return _dense_certificate(robot, result, samples, seed, bounds, clock, memory)


def _certified(result: NullspaceResult, basis, codes, geometric: bool, info: dict) -> NullspaceResult:
    """``result`` with the certificate ``info`` (and ``basis``: a dense array, or blocks)."""
    nparam = result.num_parameters
    certified = bool(
        info["clean"] and info["residual"] < RESIDUAL_TOL and info["rank"] + info["rank_numerical"] == nparam
    )
    info["reason"] = (
        None
        if certified
        else "the sampled regressor has no clean singular gap (at least GAP_MIN with the threshold inside)"
        if not info["clean"]
        else f"the basis is not in the nullspace of the sampled regressor (residual {info['residual']:.1e})"
        if info["residual"] >= RESIDUAL_TOL
        else f"the ranks do not add up: {info['rank']} + {info['rank_numerical']} of {nparam} parameters"
    )
    method = result.method if geometric or result.method.endswith("numerical") else result.method + "+numerical"
    dense, blocks = (None, basis) if isinstance(basis, tuple) else (basis, None)
    return NullspaceResult(
        result.robot_name,
        method,
        dense,
        codes,
        result.joint_names,
        certified,
        info,
        geometric,
        result.seconds,
        result.proven and geometric,
        blocks,
    )


def _dense_certificate(robot, result, samples, seed, bounds, clock, memory) -> NullspaceResult:
    """The certificate on the stacked regressor Y formed densely (see :func:`certificate`)."""
    from .numerical import sampled_nullspace, stacked_regressor

    nparam = 10 * robot.n
    Y, states = stacked_regressor(robot, samples, seed, bounds=bounds, budget=clock, memory=memory)
    clock.check(Y.shape, "the QR and SVD of the sampled regressor")
    null, decision, _, _ = sampled_nullspace(Y)
    check_Y = stacked_regressor(
        robot, samples, None if seed is None else seed + 1, bounds=bounds, budget=clock, memory=memory
    )[0]  # independent
    rank_num = decision["rank"]
    basis = result.basis
    residual = np.linalg.norm(check_Y @ basis) / np.linalg.norm(check_Y) if basis.size else 0.0
    dim = result.dim
    info = {
        "rank_drng": dim,
        "rank_numerical": rank_num,
        "gap": decision["gap"],
        "threshold": decision["threshold"],
        "smallest_kept": decision["smallest_kept"],
        "largest_dropped": decision["largest_dropped"],
        "clean": decision["clean"],
        "residual": float(residual),
        "samples": len(states),
        "short": (),
        "structure": "dense",
    }
    codes = result.codes if result.codes is not None else np.full((basis.shape[1], 2), -1)
    geometric = result.geometric
    if decision["clean"] and residual < RESIDUAL_TOL and dim + rank_num < nparam:
        short, remainder = _remainder(robot, basis, null, nparam - rank_num - dim)
        info["short"] = tuple(robot.body_names[b] for b in short)
        basis = np.hstack([basis, remainder])
        codes = np.vstack([codes, np.full((remainder.shape[1], 2), -1)])
        geometric = False
        residual = np.linalg.norm(check_Y @ basis) / np.linalg.norm(check_Y)
        info["residual"] = float(residual)
        dim = rank(basis)[0]
    info["rank"] = dim
    return _certified(result, basis, codes, geometric, info)


#: Whether each of the four tetrahedral points (x, y, z, O) is Euclidean (O) or ideal.
EUCLIDEAN = np.array([0.0, 0.0, 0.0, 1.0])
#: Bodies (of all samples) whose lines :func:`body_lines` computes at once (bounds its memory).
CHUNK = 1 << 15


def body_lines(robot: Robot, states: States) -> tuple[np.ndarray, np.ndarray]:
    """The TP regressor of a tree factored through lines: Y[k, body i] = S_k^T H_i (eq. 49 with
    the join E_m v Edd_n of each body taken first).

    ``S`` (samples, nq, 6) are the world Jacobian lines (d; m) of the coordinates
    (:func:`pga_dyn.kinematics.tree_state`); ``H`` (samples, n, 6, 10) holds, for each body i and
    each parameter p of eq. (97), the line bar_p(l) of the lines l_mn = (e_m x a_n; w_m a_n), the
    join of the tetrahedral point E_m = (e_m, w_m) with the acceleration a_n of E_n (eq. 35 with
    gravity), paired with a Jacobian line L = (d; m) as d . (e_m x a_n) + w_m m . a_n = u_m . a_n
    (the coefficient R[m, n] of :mod:`pga_dyn.tp_regressor`). Row k of Y is nonzero on body i
    only when the joint of k supports i. O(samples n) time and memory, where Y is O(samples n^2).
    """
    from pga_dyn.kinematics import inverse_initial_poses, tree_state
    from pga_dyn.tp_regressor import bar

    m, n = len(states), robot.n
    S, T, V, A = np.empty((m, robot.nq, 6)), np.empty((m, n, 4, 4)), np.empty((m, n, 6)), np.empty((m, n, 6))
    inverse = inverse_initial_poses(robot)[1:]
    for s in range(m):
        poses, S[s], twists, accelerations = tree_state(robot, states.q[s], states.qd[s], states.qdd[s])
        T[s], V[s], A[s] = poses[1:] @ inverse, twists[1:], accelerations[1:]
    T, V, A = T.reshape(-1, 4, 4), V.reshape(-1, 1, 6), A.reshape(-1, 1, 6)
    H = np.empty((m * n, 6, 10))
    w = EUCLIDEAN[:, None]
    for c in range(0, m * n, CHUNK):  # bodies of all samples at once, CHUNK at a time
        part = slice(c, c + CHUNK)
        e = np.swapaxes(T[part, :3, :], 1, 2)  # (bodies, 4, 3): the points at q
        vel = np.cross(V[part, :, :3], e) + w * V[part, :, 3:]
        acc = np.cross(A[part, :, :3], e) + w * A[part, :, 3:] + np.cross(V[part, :, :3], vel)
        line = np.concatenate(
            [
                np.cross(e[:, :, None, :], acc[:, None, :, :]),
                np.broadcast_to(w[:, None] * acc[:, None, :, :], (e.shape[0], 4, 4, 3)),
            ],
            axis=-1,
        )
        H[part] = bar(np.moveaxis(line, -1, 1))
    return S, H.reshape(m, n, 6, 10)


def _support_factors(robot, S):
    """R (samples, n + 1, 6, 6) with R_i^T R_i = sum of S_k S_k^T over the coordinates k of the
    joints supporting body i (R_0 = 0): ||R_i w|| is the norm of the torques a wrench w on body
    i exerts on those coordinates, as a sum of squares of entries of size |S_k . w|."""
    R = np.zeros((S.shape[0], robot.n + 1, 6, 6))
    for i in range(1, robot.n + 1):
        R[:, i] = np.linalg.qr(np.concatenate([R[:, robot.parent[i]], S[:, robot.coordinates(i)]], axis=1), mode="r")
    return R


def tree_certificate(
    robot: Robot,
    result: NullspaceResult,
    samples: int,
    seed: int | None,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None,
    clock: Budget,
    memory: float = MEMORY,
) -> dict | None:
    """The certificate of a tree's basis in block form, from the structure of its regressor:
    O(n) time and memory, the dense Y is never formed (docs/drng.md, "The certificate of a tree").

    Bodies are numbered from the base (parent < child), so the rows of joint j are nonzero only
    on bodies j and after: Y is block upper triangular with diagonal blocks Y_jj (samples dof_j,
    10). Each basis vector has a block on body j and at most one on parent(j); V_j (10, k_j)
    holds the j-blocks of the vectors on j, C_j an orthonormal basis of their complement.

    * rank(B) >= sum rank(V_j) (block triangular), each rank as :func:`drng.result.rank`;
    * rank(Y) >= rank(Y C) >= sum rank(Y_jj C_j) for C = diag(C_j) (block triangular again),
      each rank at the largest gap of the column-scaled block, trusted when clean
      (:func:`drng.numerical.rank_at_gap`);
    * ||Y' B||_F / ||Y'||_F on independent samples, with Y' B and ||Y'|| summed body by body
      through the lines of :func:`body_lines` (:func:`_support_factors`).

    Returns the certificate's dict when both bounds add up to 10 n with every block clean, else
    None (a vector with blocks on two bodies that are not parent and child, dependent blocks,
    or a block rank short or unclean): the dense certificate then decides."""
    from pga_dyn.sampling import sample_states

    n, nq = robot.n, robot.nq
    _, bodies, vals = result.blocks
    owner = bodies.max(axis=1)
    lower = bodies.min(axis=1)
    if np.any((lower > 0) & (lower != robot.parent[owner])):
        return None
    k = len(owner)
    check_memory(
        f"{robot.source or robot.name}: the sampling (dq/dq_a, {nq} x {nq}) and the body lines of {samples} states",
        8.0 * (samples * (2 * 132 * n + 12 * nq) + nq * nq + 200 * (n + k)),
        memory,
    )
    slot = (bodies[:, 1] == owner).astype(int)  # the slot of each vector's own block
    own = vals[np.arange(k), slot]
    low = np.where((lower > 0)[:, None], vals[np.arange(k), 1 - slot], 0.0)
    order = np.argsort(owner, kind="stable")
    starts = np.searchsorted(owner[order], np.arange(1, n + 2))
    dim, C = 0, []
    for j in range(1, n + 1):
        V = own[order[starts[j - 1] : starts[j]]].T
        Cj = complement(V, 10)  # its size gives rank(V) (the same SVD and rule as drng.result.rank)
        r = 10 - Cj.shape[1]
        if r < V.shape[1]:
            return None  # dependent vectors: the dense certificate counts them
        dim += r
        C.append(Cj)
    clock.left()
    Y_states = sample_states(robot, samples, seed=seed, bounds=bounds)
    S, H = body_lines(robot, Y_states)
    del Y_states
    if not _representable(S, H):
        return None
    clock.left()
    decisions = []
    for j in range(1, n + 1):
        if C[j - 1].shape[1] == 0:
            continue
        block = (S[:, robot.coordinates(j)] @ H[:, j - 1] @ C[j - 1]).reshape(-1, C[j - 1].shape[1])
        decisions.append(_block_rank(block))
        if not decisions[-1]["clean"] or decisions[-1]["rank"] < block.shape[1]:
            return None
    clock.left()
    check_states = sample_states(robot, samples, seed=None if seed is None else seed + 1, bounds=bounds)
    S, H = body_lines(robot, check_states)  # independent
    if not _representable(S, H):
        return None
    R = _support_factors(robot, S)
    numerator = denominator = 0.0
    dof = np.diff(robot.q_index)[1:]
    pad = np.zeros((samples, n, 6, 6))  # each body's own coordinates' lines, padded with zero rows
    for j in range(1, n + 1):
        pad[:, j - 1, : dof[j - 1]] = S[:, robot.coordinates(j)]
    up = robot.parent[owner]
    for s in range(samples):
        denominator += np.sum((R[s, 1:] @ H[s]) ** 2)
        w_own = np.einsum("kcp,kp->kc", H[s, owner - 1], own)
        w_low = np.einsum("kcp,kp->kc", H[s, np.maximum(lower, 1) - 1], low)
        numerator += np.sum(np.einsum("krc,kc->kr", pad[s, owner - 1], w_own) ** 2)
        numerator += np.sum(np.einsum("krc,kc->kr", R[s, up], w_own + w_low) ** 2)
    if not denominator > 0:
        return None  # a zero regressor: the dense certificate says so
    residual = float(np.sqrt(numerator / denominator))
    return {
        "rank_drng": dim,
        "rank": dim,
        "rank_numerical": sum(d["rank"] for d in decisions),
        "gap": min((d["gap"] for d in decisions), default=np.inf),
        "threshold": SAMPLED_RTOL,
        "smallest_kept": min((d["smallest_kept"] for d in decisions), default=0.0),
        "largest_dropped": max((d["largest_dropped"] for d in decisions), default=0.0),
        "clean": True,
        "residual": residual,
        "samples": samples,
        "short": (),
        "structure": "block-triangular",
    }


def _representable(S, H) -> bool:
    """Whether the lines are finite and small enough for the sums of squares of the torques
    (else the dense certificate raises the error of :func:`drng.numerical.stacked_regressor`)."""
    return all(np.all(np.isfinite(x)) and np.max(np.abs(x), initial=0.0) < np.sqrt(LARGEST_ENTRY) for x in (S, H))


def _block_rank(block: np.ndarray) -> dict:
    """The rank of one diagonal block at the largest gap of its column-scaled singular values."""
    norms = np.linalg.norm(block, axis=0)
    if not np.all(norms > 0):
        return {"rank": 0, "clean": False}
    return rank_at_gap(np.linalg.svd(block / norms, compute_uv=False), block.shape)


#: Tolerance of the localisation in :func:`_remainder`, on orthonormal bases (entries <= 1).
LOCAL_TOL = 1e-8


def _remainder(robot, basis: np.ndarray, null: np.ndarray, missing: int):
    """The bodies whose parameters the principles miss, and nullspace vectors supported on them.

    ``basis`` (10 n, k) spans a subspace of Null(Y), ``null`` (10 n, d) is an orthonormal basis
    of Null(Y) and ``missing`` = d - rank(basis) > 0. With Q an orthonormal basis of
    span(basis), M (10 n, missing) spans the part of Null(Y) orthogonal to Q (the leading left
    singular vectors of (I - Q Q^T) null). A set S of bodies can carry the missing directions
    when M = Q beta + E with E supported on S, i.e. when M_T = Q_T beta on the rows T of the
    other bodies. Greedy, in body order: a body joins T when the system stays consistent;
    the solutions beta = beta_0 + K z (K an orthonormal basis of Null(Q_T)) are updated with
    the 10 rows of each body, so the pass costs O(n k^2). The completion is E = M - Q beta
    on the rows of S, beta the least-squares solution on T. Returns (S, an orthonormal basis
    (10 n, missing) of span(E)); raises PgaDynError when the completion does not vanish on T
    or does not have rank ``missing``."""
    q = orthonormal(basis) if basis.size else np.zeros((basis.shape[0], 0))
    u, s, _ = np.linalg.svd(null - q @ (q.T @ null), full_matrices=False)
    m = u[:, :missing]
    beta, K = np.zeros((q.shape[1], missing)), np.eye(q.shape[1])
    short = []
    for b in range(robot.n):
        rows = slice(10 * b, 10 * b + 10)
        A, rhs = q[rows] @ K, m[rows] - q[rows] @ beta
        ua, sa, vta = np.linalg.svd(A, full_matrices=True)
        r = int(np.sum(sa > LOCAL_TOL))
        z = vta[:r].T @ ((ua[:, :r].T @ rhs) / sa[:r, None])
        if np.linalg.norm(rhs - A @ z) <= LOCAL_TOL:  # the body's rows follow: it is not needed
            beta, K = beta + K @ z, K @ vta[r:].T
        else:
            short.append(b)
    on_short = np.zeros(q.shape[0], dtype=bool)
    for b in short:
        on_short[10 * b : 10 * b + 10] = True
    if q.shape[1] and (~on_short).any():
        beta = np.linalg.lstsq(q[~on_short], m[~on_short], rcond=None)[0]
    E = m - q @ beta
    off = np.linalg.norm(E[~on_short])
    E[~on_short] = 0.0
    remainder = orthonormal(E)
    if off > np.sqrt(LOCAL_TOL) or remainder.shape[1] != missing:
        raise PgaDynError(
            f"{robot.name}: the numerical completion of the nullspace could not be localised on "
            f"bodies {[robot.body_names[b] for b in short]} (residual {off:.1e} on the other "
            f"bodies, rank {remainder.shape[1]} of {missing}); the sampled rank may be wrong"
        )
    return short, remainder
