"""The numerical baseline (Gautier 1991, the DRNG paper's validation method, section 6).

Stack the regressors of valid random samples (``pga_dyn.sampling.sample_states``), scale each
column to unit norm, and read the rank from the singular values, with the gap between the
last kept and the first dropped one reported. Scaling matters: the inertial parameters mix
kg, kg m and kg m^2, and an unscaled stacked regressor of a PKM spreads its nonzero singular
values over many decades, so that a fixed threshold (or the R-diagonal of an unpivoted QR)
cuts in the wrong place; see docs/drng.md. The base parameters (a maximal independent set of
parameter columns) are chosen by QR with column pivoting.
"""

from __future__ import annotations

import time

import numpy as np

from .result import RANK_RTOL, NullspaceResult, complement


def stacked_regressor(robot, samples: int = 200, seed=0, max_cond: float = 30.0, bounds=None):
    """The regressors of ``samples`` valid states (actuated positions in ``bounds``) stacked into
    (samples * n_a, 10 n), and the states."""
    from pga_dyn.sampling import sample_states

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


def numerical_nullspace(robot, samples: int = 200, seed=0, max_cond: float = 30.0,
                        rtol: float = 1e-8, bounds=None) -> NullspaceResult:
    """Null(Y) from the stacked regressor of valid samples: SVD of the column-scaled matrix,
    rank = singular values above ``rtol`` times the largest. The certificate holds the rank,
    the singular gap, the singular values and the base-parameter columns (pivoted QR)."""
    from pga_dyn.sampling import count

    start = time.perf_counter()
    Y, states = stacked_regressor(robot, count("samples", samples), seed, max_cond, bounds)
    nparam = 10 * robot.n
    norms = np.linalg.norm(Y, axis=0)
    zero = norms <= RANK_RTOL * max(norms.max(), 1e-300)
    scale = np.where(zero, 1.0, norms)
    scaled = np.where(zero, 0.0, Y / scale)
    # the triangular factor of a QR has the singular values and right vectors of the tall matrix
    reduced = np.linalg.qr(scaled, mode="r") if scaled.shape[0] > scaled.shape[1] else scaled
    _, s, vt = np.linalg.svd(reduced, full_matrices=True)
    r = int(np.sum(s > rtol * s[0]))
    gap = s[r - 1] / s[r] if r < len(s) and s[r] > 0 else np.inf
    # Y = scaled D with D = diag(scale): the row space of Y is spanned by D v_k (k < r), and
    # Null(Y) is its orthogonal complement
    null = complement(vt[:r].T * scale[:, None], nparam) if r else np.eye(nparam)
    seconds = time.perf_counter() - start
    certificate = {"rank": r, "gap": float(gap), "singular_values": s, "samples": len(states),
                   "rows": Y.shape[0], "rejected": states.rejected,
                   "base_columns": pivoted_qr_columns(reduced, r)}
    return NullspaceResult(robot.name, "numerical", null, None, (), None, certificate, False, seconds)
