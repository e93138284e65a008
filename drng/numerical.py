"""The numerical baseline (Gautier 1991, the DRNG paper's validation method, section 6).

Stack the regressors of valid random samples (``pga_dyn.sampling.sample_states``), scale each
column to unit norm, and read the rank from the singular values at their largest gap
(:func:`rank_at_gap`). Scaling matters: the inertial parameters mix kg, kg m and kg m^2, and
an unscaled stacked regressor of a PKM spreads its nonzero singular values over many decades,
so that a fixed threshold (or the R-diagonal of an unpivoted QR) cuts in the wrong place; see
docs/drng.md. The base parameters (a maximal independent set of parameter columns) are chosen
by QR with column pivoting.
"""

from __future__ import annotations

import time
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from pga_dyn.errors import PgaDynError

from .result import MEMORY, RANK_RTOL, NullspaceResult, check_memory, one_blas_thread, orthonormal

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

#: Smallest singular gap (smallest kept over largest dropped singular value) at which the rank
#: of a sampled regressor is trusted.
GAP_MIN = 1e6
#: Relative threshold of the sampled rank: it must lie inside the gap, at least THRESHOLD_MARGIN
#: from both of its ends, for the rank to be clean. Round-off sits near 1e-16 (relative) and the
#: smallest nonzero singular value of the column-scaled regressors of the example-robot-data
#: files is above 1e-8 (romeo with a floating base: 4e-8 to 1e-7; docs/drng.md).
SAMPLED_RTOL = 1e-10
THRESHOLD_MARGIN = 10.0
#: Default time budget (s) of the sampled certificate and of the numerical baseline: the sampling,
#: then the dense linear algebra, whose time is estimated from its size before it starts
#: (:func:`Budget.check`). With it ``pga-dyn analyze`` answers within a minute on any robot.
BUDGET = 45.0
#: Floating-point operations per second assumed by the estimate of the linear algebra's time: a
#: fifth of the single-thread rate of QR and SVD measured on the project's machine (25-50e9).
FLOP_RATE = 5e9
#: Largest entry of a sampled regressor: beyond it the sums of squares of its columns (norms,
#: column scaling, residuals) overflow.
LARGEST_ENTRY = 1e150


class Budget:
    """The time budget of a sampled computation: ``seconds`` from its creation (None: no limit).
    :meth:`left` is what remains for the sampling; :meth:`check` refuses a dense factorisation
    whose estimated time (at FLOP_RATE) is over what remains, with a PgaDynError saying what
    could not be done."""

    def __init__(self, seconds: float | None, what: str) -> None:
        if seconds is not None and not (isinstance(seconds, Real) and seconds > 0):
            raise PgaDynError(f"budget must be a positive number of seconds or None, got {seconds!r}")
        self.seconds, self.what = seconds, what
        self.start = time.perf_counter()

    def left(self) -> float | None:
        """Seconds left (None: no limit); a PgaDynError when none are."""
        if self.seconds is None:
            return None
        left = self.seconds - (time.perf_counter() - self.start)
        if left <= 0:
            raise PgaDynError(
                f"{self.what}: out of its time budget of {self.seconds:g} s (the budget= argument; pga-dyn analyze --budget SECONDS)"
            )
        return left

    def check(self, shape: tuple[int, int], task: str) -> None:
        """Refuse the QR and SVD of a (rows, cols) matrix, about 2 rows cols^2 + 22 cols^3
        operations, when they would not fit in the time left."""
        left = self.left()
        rows, cols = shape
        seconds = (2.0 * rows * cols**2 + 22.0 * cols**3) / FLOP_RATE
        if left is not None and seconds > left:
            raise PgaDynError(
                f"{self.what}: {task} of a {rows} x {cols} matrix would take about {seconds:.3g} s, "
                f"more than the {left:.3g} s left of its time budget of {self.seconds:g} s (the budget= argument; pga-dyn analyze --budget SECONDS)"
            )


def regressor_bytes(robot: Robot, samples: int) -> float:
    """Estimated peak memory (bytes) of a sampled rank of ``samples`` states: the stacked
    regressor Y (samples n_a, 10 n), its column-scaled copy and a check Y', the tree regressor
    (samples, nq, 10 n) of a constrained robot, and four (10 n, 10 n) factors."""
    cols = 10 * robot.n
    rows = samples * len(robot.actuated)
    tree = samples * robot.nq * cols if robot.constrained else 0
    return 8.0 * (3.0 * rows * cols + tree + 4.0 * cols * cols)


def stacked_regressor(
    robot: Robot,
    samples: int = 200,
    seed: int | None = 0,
    max_cond: float = 30.0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    budget: Budget | None = None,
    memory: float = MEMORY,
) -> tuple[np.ndarray, States]:
    """The regressors of ``samples`` valid states stacked into (samples * n_a, 10 n), and the
    states. Raises PgaDynError for a robot with no moving body or no actuated coordinate (its
    regressor has no columns or no rows), when the matrices would need more than ``memory``
    bytes (:func:`regressor_bytes`), when the sampling runs out of ``budget``, and when the
    regressor is not finite (a model too large for floating point)."""
    from pga_dyn.sampling import sample_states

    where = robot.source or robot.name
    if robot.n == 0:
        raise PgaDynError(f"{where}: {robot.name} has no moving body: it has no inertial parameters to sample")
    if len(robot.actuated) == 0:
        raise PgaDynError(f"{where}: {robot.name} has no actuated coordinate: its regressor has no rows")
    check_memory(
        f"{where}: the sampled regressor of {samples} states ({samples * len(robot.actuated)} x {10 * robot.n})",
        regressor_bytes(robot, samples),
        memory,
    )
    seconds = None if budget is None else budget.left()
    states = sample_states(robot, samples, seed=seed, max_cond=max_cond, bounds=bounds, seconds=seconds)
    Y = states.regressor().reshape(-1, 10 * robot.n)
    if not (np.all(np.isfinite(Y)) and np.max(np.abs(Y), initial=0.0) < LARGEST_ENTRY):
        raise PgaDynError(
            f"{where}: the regressor of {robot.name} is not finite at the sampled states, or so large "
            "that its norms overflow: the model's numbers (lengths, gravity, coupling ratios) are too "
            "large for floating point"
        )
    return Y, states


def pivoted_qr_columns(matrix: np.ndarray, rank: int) -> np.ndarray:
    """Indices (sorted) of ``rank`` independent columns of ``matrix`` (m, c), chosen by Householder
    QR with column pivoting (Businger and Golub 1965; :func:`pivoted_qr_kernel`). A tall matrix can
    be replaced by the triangular factor of its unpivoted QR: same column dependencies, a square
    problem."""
    columns = np.array(np.asarray(matrix, dtype=np.float64).T, order="C")  # a column per row: contiguous
    return np.sort(pivoted_qr_kernel(columns, np.int64(rank))[:rank])


@njit(cache=True, fastmath=True)
def pivoted_qr_kernel(at, rank):
    """Column order of Householder QR with column pivoting on a (m, c), given as its transpose
    ``at`` (c, m), overwritten: at step k the remaining column of largest norm below row k comes
    first (the first such on a tie), for k < min(rank, m, c); returns the permutation (c,). The
    norms are downdated after each step, |a_j|^2 -= a_kj^2, and computed again when the downdate
    has cancelled most of a norm (below sqrt(eps) of the norm it was last computed at, as
    LAPACK's xGEQP3): the columns are the ones ``scipy.linalg.qr(pivoting=True)`` chooses
    (tests/test_certificate.py). 2 m c rank flops, no temporaries; ``fastmath`` lets the
    compiler reorder the dot products into vector instructions (3 times faster; the choice of a
    column does not hang on the last bits of a norm)."""
    c, m = at.shape
    perm = np.arange(c)
    norms, exact = np.zeros(c), np.zeros(c)
    for j in range(c):
        s = 0.0
        for i in range(m):
            s += at[j, i] * at[j, i]
        norms[j], exact[j] = s, s
    v = np.empty(m)
    for k in range(min(rank, m, c)):
        best = k
        for j in range(k + 1, c):
            if norms[j] > norms[best]:
                best = j
        if best != k:
            for i in range(m):
                at[k, i], at[best, i] = at[best, i], at[k, i]
            norms[k], norms[best] = norms[best], norms[k]
            exact[k], exact[best] = exact[best], exact[k]
            perm[k], perm[best] = perm[best], perm[k]
        x = 0.0
        for i in range(k, m):
            x += at[k, i] * at[k, i]
        x = np.sqrt(x)
        if x == 0.0:
            continue
        vnorm = 0.0
        for i in range(k, m):
            v[i] = at[k, i]
        v[k] -= -x if at[k, k] >= 0.0 else x
        for i in range(k, m):
            vnorm += v[i] * v[i]
        for j in range(k, c):  # a[k:, j] <- (I - 2 v v^T / v^T v) a[k:, j]
            s = 0.0
            for i in range(k, m):
                s += v[i] * at[j, i]
            s *= 2.0 / vnorm
            for i in range(k, m):
                at[j, i] -= s * v[i]
        for j in range(k + 1, c):  # the norms below row k
            norms[j] -= at[j, k] * at[j, k]
            if norms[j] <= 1.4901161193847656e-08 * exact[j]:  # sqrt(eps): computed again
                s = 0.0
                for i in range(k + 1, m):
                    s += at[j, i] * at[j, i]
                norms[j], exact[j] = s, s
    return perm


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
        return {
            "rank": 0,
            "gap": np.inf,
            "threshold": rtol,
            "smallest_kept": 0.0,  # nothing kept: no NaN
            "largest_dropped": 0.0,
            "clean": True,
        }
    floor = np.finfo(float).eps * s1
    t = np.append(np.maximum(s, floor), floor)
    ratios = t[:-1] / t[1:]
    r = int(np.argmax(ratios)) + 1
    gap = float(ratios[r - 1])
    kept, dropped = s[r - 1] / s1, (s[r] / s1 if r < cols else 0.0)
    clean = bool(
        gap >= GAP_MIN and kept >= THRESHOLD_MARGIN * rtol and max(dropped, floor / s1) * THRESHOLD_MARGIN <= rtol
    )
    return {
        "rank": r,
        "gap": gap,
        "threshold": rtol,
        "smallest_kept": float(kept),
        "largest_dropped": float(dropped),
        "clean": clean,
    }


def sampled_nullspace(Y: np.ndarray, rtol: float = SAMPLED_RTOL) -> tuple[np.ndarray, dict, np.ndarray, np.ndarray]:
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
    null = orthonormal(vt[decision["rank"] :].T / scale[:, None], rtol=0.0)
    return null, decision, s, reduced


@one_blas_thread
def numerical_nullspace(
    robot: Robot,
    samples: int = 200,
    seed: int | None = 0,
    max_cond: float = 30.0,
    rtol: float = SAMPLED_RTOL,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    budget: float | None = BUDGET,
    memory: float = MEMORY,
) -> NullspaceResult:
    """Null(Y) from the stacked regressor Y (samples n_a, 10 n) of ``samples`` valid states
    (:func:`sampled_nullspace`): column-scaled SVD, rank at the largest singular gap.

    ``budget`` (seconds, None: no limit) bounds the sampling and the factorisations, ``memory``
    (bytes) the dense matrices: PgaDynError saying what could not be done when they would not fit
    (:class:`Budget`, :func:`check_memory`).

    Returns
    -------
    NullspaceResult
        ``basis`` (10 n, 10 n - rank), orthonormal. Its ``certificate`` holds the rank, the gap,
        whether it is clean (gap >= GAP_MIN with ``rtol`` inside it), the threshold, the smallest
        kept and largest dropped singular values (relative to the largest), the singular values,
        the sample and row counts and the base-parameter columns (pivoted QR of R).
    """
    from pga_dyn.model import check_robot
    from pga_dyn.sampling import count

    start = time.perf_counter()
    clock = Budget(budget, f"{check_robot(robot).source or robot.name}: the numerical nullspace")
    Y, states = stacked_regressor(robot, count("samples", samples), seed, max_cond, bounds, clock, memory)
    clock.check(Y.shape, "the QR and SVD")
    null, decision, s, reduced = sampled_nullspace(Y, rtol)
    certificate = {
        **decision,
        "singular_values": s,
        "samples": len(states),
        "rows": Y.shape[0],
        "rejected": states.rejected,
        "base_columns": pivoted_qr_columns(reduced, decision["rank"]),
    }
    seconds = time.perf_counter() - start
    return NullspaceResult(robot.name, "numerical", null, None, (), None, certificate, False, seconds)
