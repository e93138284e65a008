"""The numerical baseline (Gautier 1991, the DRNG paper's validation method, section 6).

Stack the regressors of valid random samples (``pga_dyn.sampling.sample_states``), scale each
column to unit norm, and read the rank from the singular values at their largest gap
(:func:`sampled_rank`). Scaling matters: the inertial parameters mix kg, kg m and kg m^2, and
an unscaled stacked regressor of a PKM spreads its nonzero singular values over many decades,
so that a fixed threshold (or the R-diagonal of an unpivoted QR) cuts in the wrong place; see
docs/drng.md. The base parameters (a maximal independent set of parameter columns) are chosen
by QR with column pivoting.
"""

from __future__ import annotations

import time

import numpy as np

from pga_dyn.errors import PgaDynError

from .result import RANK_RTOL, NullspaceResult, one_blas_thread, orthonormal

#: Smallest singular gap (smallest kept over largest dropped singular value) at which the rank
#: of a sampled regressor is trusted.
GAP_MIN = 1e6
#: Relative threshold of the sampled rank: it must lie inside the gap, at least THRESHOLD_MARGIN
#: from both of its ends, for the rank to be clean. Round-off sits near 1e-16 (relative) and the
#: smallest nonzero singular value of the column-scaled regressors of the example-robot-data
#: files is above 1e-8 (romeo with a floating base: 4e-8 to 1e-7; docs/drng.md).
SAMPLED_RTOL = 1e-10
THRESHOLD_MARGIN = 10.0


def stacked_regressor(robot, samples: int = 200, seed=0, max_cond: float = 30.0, bounds=None):
    """The regressors of ``samples`` valid states stacked into (samples * n_a, 10 n), and the
    states. Raises PgaDynError for a robot with no moving body or no actuated coordinate (its
    regressor has no columns or no rows)."""
    from pga_dyn.sampling import sample_states

    if robot.n == 0:
        raise PgaDynError(f"{robot.name} has no moving body: it has no inertial parameters to sample")
    if len(robot.actuated) == 0:
        raise PgaDynError(f"{robot.name} has no actuated coordinate: its regressor has no rows")
    states = sample_states(robot, samples, seed=seed, max_cond=max_cond, bounds=bounds)
    return states.regressor().reshape(-1, 10 * robot.n), states


def pivoted_qr_columns(matrix: np.ndarray, rank: int) -> np.ndarray:
    """Indices of ``rank`` independent columns chosen by Householder QR with column pivoting
    (Businger-Golub). A tall matrix can be replaced by the triangular factor of its unpivoted
    QR: same column dependencies, a square problem."""
    a = np.array(matrix, dtype=float)
    m, n = a.shape
    perm = np.arange(n)
    norms = np.sum(a * a, axis=0)
    for k in range(min(rank, m, n)):
        j = k + int(np.argmax(norms[k:]))
        a[:, [k, j]], norms[[k, j]], perm[[k, j]] = a[:, [j, k]], norms[[j, k]], perm[[j, k]]
        x = a[k:, k]
        alpha = -np.copysign(np.linalg.norm(x), x[0] if x[0] != 0 else 1.0)
        v = x.copy()
        v[0] -= alpha
        vnorm = np.linalg.norm(v)
        if vnorm > 0:
            v /= vnorm
            a[k:, k:] -= 2.0 * np.outer(v, v @ a[k:, k:])
        norms[k + 1:] = np.sum(a[k + 1:, k + 1:] ** 2, axis=0)
    return np.sort(perm[:rank])


def rank_at_gap(s: np.ndarray, shape: tuple, rtol: float = SAMPLED_RTOL) -> dict:
    """The rank of a matrix of ``shape`` (m, c) from its singular values ``s`` (descending, at
    most c of them; missing ones are zero), decided at the largest gap.

    Values below the round-off floor f = eps s_1 (the unit round-off of the largest) cannot be
    told from zero and are raised to f; with t_k = max(s_k, f) and t_{c+1} = f, the rank is the r maximising
    t_r / t_{r+1} (r = 0 when s_1 = 0). ``gap`` is that ratio, ``threshold`` = rtol s_1 the
    fixed cut, ``clean`` whether gap >= GAP_MIN and the fixed cut lies inside the gap at least
    THRESHOLD_MARGIN from both ends (then the fixed-threshold rank is the same r). Returns
    {rank, gap, threshold (relative to s_1), smallest_kept, largest_dropped (relative to s_1,
    the actual values), clean}."""
    cols = shape[1]
    s = np.concatenate([np.asarray(s, dtype=float), np.zeros(cols - len(s))])
    s1 = s[0] if cols else 0.0
    if s1 == 0.0:
        return {"rank": 0, "gap": np.inf, "threshold": rtol, "smallest_kept": np.nan,
                "largest_dropped": 0.0, "clean": True}
    floor = np.finfo(float).eps * s1
    t = np.append(np.maximum(s, floor), floor)
    ratios = t[:-1] / t[1:]
    r = int(np.argmax(ratios)) + 1
    gap = float(ratios[r - 1])
    kept, dropped = s[r - 1] / s1, (s[r] / s1 if r < cols else 0.0)
    clean = bool(gap >= GAP_MIN and kept >= THRESHOLD_MARGIN * rtol
                 and max(dropped, floor / s1) * THRESHOLD_MARGIN <= rtol)
    return {"rank": r, "gap": gap, "threshold": rtol, "smallest_kept": float(kept),
            "largest_dropped": float(dropped), "clean": clean}


def sampled_nullspace(Y: np.ndarray, rtol: float = SAMPLED_RTOL):
    """Null(Y) of a stacked regressor Y (rows, 10 n): the columns are scaled to unit norm
    (Y = S D, D = diag of the column norms; columns below RANK_RTOL of the largest count as
    zero), S is reduced to its triangular QR factor R (same singular values and right vectors),
    and the rank r is read at the largest singular gap (:func:`rank_at_gap`). Null(Y) =
    D^-1 Null(S), spanned by D^-1 v_k for the right singular vectors v_k, k > r. Returns an
    orthonormal basis (10 n, 10 n - r), the rank decision of :func:`rank_at_gap`, the singular
    values (descending) and R (the triangular factor, for the base columns)."""
    norms = np.linalg.norm(Y, axis=0)
    zero = norms <= RANK_RTOL * max(norms.max(), 1e-300)
    scale = np.where(zero, 1.0, norms)
    scaled = np.where(zero, 0.0, Y / scale)
    reduced = np.linalg.qr(scaled, mode="r") if scaled.shape[0] > scaled.shape[1] else scaled
    _, s, vt = np.linalg.svd(reduced, full_matrices=True)
    decision = rank_at_gap(s, Y.shape, rtol)
    null = orthonormal(vt[decision["rank"]:].T / scale[:, None], rtol=0.0)
    return null, decision, s, reduced


@one_blas_thread
def numerical_nullspace(robot, samples: int = 200, seed=0, max_cond: float = 30.0,
                        rtol: float = SAMPLED_RTOL, bounds=None) -> NullspaceResult:
    """Null(Y) from the stacked regressor Y (samples n_a, 10 n) of ``samples`` valid states
    (:func:`sampled_nullspace`): column-scaled SVD, rank at the largest singular gap.

    Returns
    -------
    NullspaceResult
        ``basis`` (10 n, 10 n - rank), orthonormal. Its ``certificate`` holds the rank, the gap,
        whether it is clean (gap >= GAP_MIN with ``rtol`` inside it), the threshold, the smallest
        kept and largest dropped singular values (relative to the largest), the singular values,
        the sample and row counts and the base-parameter columns (pivoted QR of R).
    """
    from pga_dyn.sampling import count

    start = time.perf_counter()
    Y, states = stacked_regressor(robot, count("samples", samples), seed, max_cond, bounds)
    null, decision, s, reduced = sampled_nullspace(Y, rtol)
    certificate = {**decision, "singular_values": s, "samples": len(states), "rows": Y.shape[0],
                   "rejected": states.rejected, "base_columns": pivoted_qr_columns(reduced, decision["rank"])}
    seconds = time.perf_counter() - start
    return NullspaceResult(robot.name, "numerical", null, None, (), None, certificate, False, seconds)
