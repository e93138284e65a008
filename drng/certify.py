"""The verification criteria (101) and the completeness certificate of a nullspace basis."""

from __future__ import annotations

import numpy as np

from pga_dyn.errors import PgaDynError
from pga_dyn.model import check_robot

from .result import NullspaceResult, complement, orthonormal, rank

#: Relative residual ||Y B||_F / ||Y||_F below which a basis is in the nullspace.
RESIDUAL_TOL = 1e-10
#: Smallest singular gap of the sampled regressor at which its rank is trusted.
GAP_MIN = 1e6


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


def verify(robot, basis, samples: int = 200, seed=0, Y=None) -> dict:
    """The paper's criteria (101) on a nullspace basis: the relative residual
    ||Y B_null||_F / ||Y||_F and rank(Y B) = rank(B) for B the complement of span(B_null),
    with Y the stacked regressor of ``samples`` valid states (or the given ``Y``)."""
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


def certificate(robot, result: NullspaceResult, samples: int = 200, seed=0, bounds=None) -> NullspaceResult:
    """Certify ``result`` (a basis inside the nullspace gives a lower bound on its dimension;
    the sampled regressor a lower bound on the identifiable rank): when both add up to 10 n
    they are exact. Otherwise complete the basis with the numerical nullspace directions not
    in its span, and name the bodies those directions involve. The sampled rank is trusted only
    with a singular gap of at least GAP_MIN, and ``samples`` must give at least 2 rows per
    parameter. ``bounds``: the sampling box of the actuated coordinates
    (:func:`pga_dyn.sampling.bounds_array`)."""
    from pga_dyn.sampling import count

    from .numerical import numerical_nullspace, stacked_regressor

    nparam = 10 * check_robot(robot).n
    samples = count("samples", samples)
    if samples * len(robot.actuated) < 2 * nparam:
        raise PgaDynError(f"samples={samples} gives {samples * len(robot.actuated)} regressor rows for {nparam} "
                          f"parameters: a certificate needs at least {-(-2 * nparam // len(robot.actuated))} samples")
    numeric = numerical_nullspace(robot, samples, seed, bounds=bounds)
    check_Y = stacked_regressor(robot, samples, None if seed is None else seed + 1, bounds=bounds)[0]  # independent
    rank_num = numeric.certificate["rank"]
    basis = result.basis
    residual = np.linalg.norm(check_Y @ basis) / np.linalg.norm(check_Y) if basis.size else 0.0
    dim = result.dim
    info = {"rank_drng": dim, "rank_numerical": rank_num, "gap": numeric.certificate["gap"],
            "residual": float(residual), "samples": numeric.certificate["samples"], "short": ()}
    codes = result.codes if result.codes is not None else np.full((basis.shape[1], 2), -1)
    geometric = result.geometric
    clean = numeric.certificate["gap"] >= GAP_MIN  # the sampled rank is unambiguous
    if clean and residual < RESIDUAL_TOL and dim + rank_num < nparam:
        short, remainder = _remainder(robot, basis, numeric.basis)
        info["short"] = tuple(robot.body_names[b] for b in short)
        basis = np.hstack([basis, remainder])
        codes = np.vstack([codes, np.full((remainder.shape[1], 2), -1)])
        geometric = False
        residual = np.linalg.norm(check_Y @ basis) / np.linalg.norm(check_Y)
        info["residual"] = float(residual)
        dim = rank(basis)[0]
    info["rank"] = dim
    certified = bool(clean and residual < RESIDUAL_TOL and dim + rank_num == nparam)
    method = result.method if geometric or result.method.endswith("numerical") else result.method + "+numerical"
    return NullspaceResult(result.robot_name, method, basis, codes, result.joint_names, certified, info,
                           geometric, result.seconds)


def _blocks(robot, bodies) -> np.ndarray:
    """The parameter directions of the given bodies (columns of the identity)."""
    cols = [10 * b + k for b in bodies for k in range(10)]
    return np.eye(10 * robot.n)[:, cols]


def _remainder(robot, basis, null):
    """The bodies whose parameters the principles miss, and nullspace vectors supported on them.

    Greedy: drop a body when the numerical nullspace still lies in span(basis) plus the parameter
    directions of the remaining bodies. The remainder is then the part on those bodies of the
    vectors of that intersection (null vectors, independent of span(basis))."""
    target = rank(np.hstack([basis, null]))[0]
    short = list(range(robot.n))
    for b in range(robot.n):
        trial = [k for k in short if k != b]
        if rank(np.hstack([basis, _blocks(robot, trial)]))[0] == rank(np.hstack([basis, _blocks(robot, trial), null]))[0]:
            short = trial
    E = _blocks(robot, short)
    # null a = basis b + E e  ->  E e is a nullspace vector supported on the short bodies
    _, s, vt = np.linalg.svd(np.hstack([null, -basis, -E]))
    kernel = vt[int(np.sum(s > 1e-9 * s[0])):].T
    remainder = orthonormal(E @ kernel[null.shape[1] + basis.shape[1]:])
    q = orthonormal(basis)
    remainder = orthonormal(remainder - q @ (q.T @ remainder))
    assert rank(np.hstack([basis, remainder]))[0] == target
    return short, remainder
