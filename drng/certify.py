"""The verification criteria (101) and the completeness certificate of a nullspace basis."""

from __future__ import annotations

import numpy as np

from pga_dyn.errors import PgaDynError
from pga_dyn.model import check_robot

from .numerical import BUDGET, MEMORY, Budget
from .result import NullspaceResult, complement, one_blas_thread, orthonormal, rank

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
def verify(robot, basis, samples: int = 200, seed=0, Y=None) -> dict:
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
    return {"residual": float(residual), "rank_base": rank_base, "rank_YB": rank_yb,
            "ok": bool(residual < RESIDUAL_TOL and rank_yb == rank_base)}


def default_samples(robot) -> int:
    """Samples of a certificate when none is given: enough for 3 regressor rows per parameter,
    ceil(30 n / n_a) (a tree with n_a = n: 30)."""
    return max(1, -(-30 * robot.n // max(len(robot.actuated), 1)))


@one_blas_thread
def certificate(robot, result: NullspaceResult, samples: int | None = None, seed=0, bounds=None,
                budget: float | None = BUDGET, memory: float = MEMORY) -> NullspaceResult:
    """Certify ``result`` (a basis inside the nullspace gives a lower bound on its dimension;
    the sampled regressor a lower bound on the identifiable rank): when both add up to 10 n
    they are exact.

    Y (samples n_a, 10 n) is the stacked regressor of ``samples`` valid states (default
    :func:`default_samples`; at least 2 rows per parameter); its rank r is read at the largest
    singular gap of the column-scaled Y (:func:`drng.numerical.rank_at_gap`) and trusted only
    when clean (gap >= GAP_MIN with the threshold inside it). The basis B is checked on an
    independent Y': ||Y' B||_F / ||Y'||_F < RESIDUAL_TOL. When rank(B) + r < 10 n, B is
    completed with the directions of Null(Y) not in span(B), localised on the fewest bodies a
    greedy pass finds (:func:`_remainder`), which ``certificate["short"]`` names. Certified when
    the (completed) basis passes the residual test and rank(B) + r = 10 n with a clean gap.
    ``certificate`` holds rank, rank_drng, rank_numerical, gap, threshold, smallest_kept,
    largest_dropped, clean, residual, samples, short. ``bounds``: the sampling box of the
    actuated coordinates (:func:`pga_dyn.sampling.bounds_array`). A proven result stays proven
    unless the completion adds vectors (the proof would then be contradicted: ``proven`` False,
    and the status says what the sampling found).

    ``budget`` (seconds, None: no limit) bounds the sampling and the factorisations, ``memory``
    (bytes) the dense matrices: a PgaDynError says what could not be done when they would not
    fit (:class:`drng.numerical.Budget`, :func:`drng.numerical.check_memory`)."""
    from pga_dyn.sampling import count

    from .numerical import sampled_nullspace, stacked_regressor

    nparam = 10 * check_robot(robot).n
    where = robot.source or robot.name
    if nparam == 0:
        raise PgaDynError(f"{where}: {robot.name} has no moving body: there are no inertial parameters to certify")
    na = len(robot.actuated)
    samples = default_samples(robot) if samples is None else count("samples", samples)
    if samples * na < 2 * nparam:
        raise PgaDynError(f"samples={samples} gives {samples * na} regressor rows for {nparam} "
                          f"parameters: a certificate needs at least {-(-2 * nparam // max(na, 1))} samples")
    clock = Budget(budget, f"{where}: the certificate")
    Y, states = stacked_regressor(robot, samples, seed, bounds=bounds, budget=clock, memory=memory)
    clock.check(Y.shape, "the QR and SVD of the sampled regressor")
    null, decision, _, _ = sampled_nullspace(Y)
    check_Y = stacked_regressor(robot, samples, None if seed is None else seed + 1, bounds=bounds,
                                budget=clock, memory=memory)[0]  # independent
    rank_num = decision["rank"]
    basis = result.basis
    residual = np.linalg.norm(check_Y @ basis) / np.linalg.norm(check_Y) if basis.size else 0.0
    dim = result.dim
    info = {"rank_drng": dim, "rank_numerical": rank_num, "gap": decision["gap"],
            "threshold": decision["threshold"], "smallest_kept": decision["smallest_kept"],
            "largest_dropped": decision["largest_dropped"], "clean": decision["clean"],
            "residual": float(residual), "samples": len(states), "short": ()}
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
    certified = bool(decision["clean"] and residual < RESIDUAL_TOL and dim + rank_num == nparam)
    info["reason"] = (None if certified else
                      "the sampled regressor has no clean singular gap (at least GAP_MIN with the threshold inside)"
                      if not decision["clean"] else
                      f"the basis is not in the nullspace of the sampled regressor (residual {residual:.1e})"
                      if residual >= RESIDUAL_TOL else
                      f"the ranks do not add up: {dim} + {rank_num} of {nparam} parameters")
    method = result.method if geometric or result.method.endswith("numerical") else result.method + "+numerical"
    return NullspaceResult(result.robot_name, method, basis, codes, result.joint_names, certified, info,
                           geometric, result.seconds, result.proven and geometric)


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
        on_short[10 * b:10 * b + 10] = True
    if q.shape[1] and (~on_short).any():
        beta = np.linalg.lstsq(q[~on_short], m[~on_short], rcond=None)[0]
    E = m - q @ beta
    off = np.linalg.norm(E[~on_short])
    E[~on_short] = 0.0
    remainder = orthonormal(E)
    if off > np.sqrt(LOCAL_TOL) or remainder.shape[1] != missing:
        raise PgaDynError(f"{robot.name}: the numerical completion of the nullspace could not be localised on "
                          f"bodies {[robot.body_names[b] for b in short]} (residual {off:.1e} on the other "
                          f"bodies, rank {remainder.shape[1]} of {missing}); the sampled rank may be wrong")
    return short, remainder
