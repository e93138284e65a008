"""The closed configuration closest to a given one, over all free coordinates (actuated ones
included): the reference of a model whose q0 does not close (docs/parallel_machines.md,
"Assembly from the file's configuration").

Some files state q0 (all tree coordinates zero) where their loops are open (Gepetto's
``wl16_like``: residual 2.04); the loops then cannot be closed by moving the passive coordinates
alone at the actuated position of q0. :func:`closest_closed` finds, for one part of the loops
(:class:`pga_dyn.loops.parts.Part`, its free coordinates x = z[columns], actuated and passive),
a closed configuration near x0 (the free coordinates of q0, or of a reference given):

1. closure, globally convergent: Levenberg-Marquardt steps on min |r(x)|^2 + w |x - x0|^2 for
   w = PENALTIES (each from the previous minimum: a path of minima pulled towards x0), then on
   min |r(x)|^2 (r: the part's loop
   residual rows, J_x = J E[:, columns]): (J_x^T J_x + mu I) dx = -J_x^T r, accepted when the
   gain ratio rho = (|r|^2 - |r(x + dx)|^2) / (dx^T (mu dx - J_x^T r)) is positive, mu scaled by
   max(1/3, 1 - (2 rho - 1)^3) then, else doubled (Nielsen's rule). The iteration descends
   |r|^2 monotonically to a stationary point; a stationary point that is not closed (a local
   minimum of |r|^2) is left for a restart from x0 plus a seeded random offset (RESTARTS draws
   at each of the scales RESTART_SCALES, rad or m, in every coordinate of the part);
2. the nearest point, locally: from the closed x, steps along the tangent of C = 0 towards x0,
   t = N N^T (x0 - x) (N: an orthonormal basis of the nullspace of J_x), each followed by
   minimum-norm Gauss-Newton corrections back onto C = 0, kept when |x - x0| decreases (else
   halved); it stops where t vanishes (x - x0 normal to the constraint manifold, the first-order
   condition of the nearest point) or after PROJECTION_STEPS steps.

The distance is Euclidean in the free coordinates (radians and metres together; a spherical
joint's rotation vector counts as three coordinates, its steps composed as in the assembly:
exp(r'^) = exp(r^) exp(dx^)). The answer is a closed configuration near x0, not certified the
nearest of all: another branch of C = 0 can pass closer. :class:`Closest` records how far each
coordinate moved and the residual reached.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics import so3_exp
from .newton import so3_log

#: Residual norm of a closed part (the assembly then polishes it to ASSEMBLY_TOL).
CLOSEST_TOL = 1e-12
#: Levenberg-Marquardt iterations of one start.
LM_STEPS = 300
#: Random restarts per scale (rad or m, every coordinate of the part) when a start stalls open.
RESTARTS = 6
RESTART_SCALES = (0.1, 0.5, 1.5, 3.0)
#: Weights of |x - x0|^2 beside |r|^2 along the continuation from x0 (then 0).
PENALTIES = (1e-1, 1e-2, 1e-3, 1e-4)
#: Tangent steps towards x0 after closure.
PROJECTION_STEPS = 60
#: A coordinate counts as moved beyond this (rad or m).
MOVED_TOL = 1e-9


@dataclass(frozen=True)
class Closest:
    """How the reference was found when the loops did not close at the given configuration's
    actuated position: ``moved`` ((coordinate name, change), each coordinate that moved by more
    than MOVED_TOL), ``distance`` (Euclidean norm of the change of the free coordinates),
    ``residual`` (the largest loop residual norm at the reference), ``open`` ((loop name, residual
    norm) of the loops open at the configuration given) and ``given`` ("q0" or "the reference
    given"). When the nearest closed configuration was ill-conditioned and the reference walked
    inside the workspace from it (:func:`pga_dyn.loops.reference.into_workspace`): cond(J_p)
    there, ``nearest_cond``, and at the reference, ``cond`` (else None); ``moved`` and
    ``distance`` are then those of the reference."""

    moved: tuple
    distance: float
    residual: float
    open: tuple
    given: str
    nearest_cond: float | None = None
    cond: float | None = None

    def describe(self) -> list:
        """Lines for ``pga-dyn info`` and the reports."""
        opened = ", ".join(f"'{name}' ({res:.3g})" for name, res in self.open)
        lines = [
            f"the loops do not close at the actuated position of {self.given} (residuals {opened}); "
            f"the reference is the closed configuration nearest to {self.given} that was found, "
            f"all coordinates free (distance {self.distance:.4g}, largest loop residual {self.residual:.2g}); "
            "coordinates moved:"
        ]
        if self.nearest_cond is not None:
            lines[0] = lines[0].replace(
                "coordinates moved:",
                f"that configuration is at the edge of the workspace (cond(J_p) = {self.nearest_cond:.3g}), so the "
                f"reference walked inside on its branch to cond(J_p) = {self.cond:.3g}; coordinates moved:",
            )
        lines += [f"  {name}: {change:+.6g}" for name, change in self.moved]
        return lines

    def report(self) -> dict:
        """JSON-ready figures: ``given``, ``open`` ([loop, residual]), ``moved`` ({coordinate:
        change}), ``distance``, ``residual``; ``nearest_cond`` and ``cond`` after a walk inside the
        workspace."""
        return {
            "given": self.given,
            "open": [[name, float(res)] for name, res in self.open],
            "moved": {name: float(change) for name, change in self.moved},
            "distance": float(self.distance),
            "residual": float(self.residual),
        } | ({} if self.nearest_cond is None else {"nearest_cond": self.nearest_cond, "cond": self.cond})


def compose(x: np.ndarray, dx: np.ndarray, spherical: np.ndarray) -> np.ndarray:
    """x + dx, a spherical joint's rotation vector composed: exp(r'^) = exp(r^) exp(dr^)
    (``spherical``: positions in x of the first coordinate of each)."""
    out = x + dx
    for k in spherical:
        out[k : k + 3] = so3_log(
            so3_exp(np.ascontiguousarray(x[k : k + 3])) @ so3_exp(np.ascontiguousarray(dx[k : k + 3]))
        )
    return out


class PartProblem:
    """The residual r(x) and Jacobian J_x of one part in its free coordinates x = z[columns],
    the other free coordinates held at z."""

    def __init__(self, con, part, z: np.ndarray) -> None:
        self.con, self.part, self.z = con, part, z.copy()
        self.E = con.E[:, part.columns]
        self.spherical = np.array([i for i, k in enumerate(part.columns) if k in set(con.spherical.tolist())], int)

    def q(self, x: np.ndarray) -> np.ndarray:
        """The tree configuration (nq,) with the part's free coordinates x."""
        z = self.z.copy()
        z[self.part.columns] = x
        return self.con.E @ z + self.con.e0

    def __call__(self, x: np.ndarray) -> tuple:
        r, J = self.con.loop_jacobian(self.q(x))
        return r[self.part.rows], J[self.part.rows] @ self.E


class Penalized:
    """The residual of ``problem`` stacked on sqrt(weight) (x - x0): its least squares are
    min |r(x)|^2 + weight |x - x0|^2, a closed configuration pulled towards x0."""

    def __init__(self, problem, x0: np.ndarray, weight: float) -> None:
        self.problem, self.x0, self.root = problem, x0, np.sqrt(weight)
        self.spherical = problem.spherical

    def __call__(self, x: np.ndarray) -> tuple:
        r, J = self.problem(x)
        return np.concatenate([r, self.root * (x - self.x0)]), np.vstack([J, self.root * np.eye(len(x))])


def levenberg_marquardt(problem, x: np.ndarray, steps: int = LM_STEPS, tol: float = CLOSEST_TOL) -> tuple:
    """(x, |r|): Levenberg-Marquardt from x on min |r(x)|^2 (Nielsen's damping rule), until
    |r| <= tol, a stationary point or ``steps`` iterations."""
    r, J = problem(x)
    f = r @ r
    A, g = J.T @ J, J.T @ r
    mu, nu = 1e-3 * max(np.diag(A).max(initial=0.0), 1e-12), 2.0
    for _ in range(steps):
        if np.sqrt(f) <= tol or np.abs(g).max(initial=0.0) <= 1e-15 * max(1.0, np.sqrt(f)):
            break
        dx = np.linalg.solve(A + mu * np.eye(len(x)), -g)
        y = compose(x, dx, problem.spherical)
        ry, Jy = problem(y)
        fy = ry @ ry
        gain = dx @ (mu * dx - g)
        rho = (f - fy) / gain if gain > 0 else -1.0
        if rho > 0:
            x, r, J, f = y, ry, Jy, fy
            A, g = J.T @ J, J.T @ r
            mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
            nu = 2.0
        else:
            mu *= nu
            nu *= 2.0
            if mu > 1e20:
                break
    return x, float(np.sqrt(f))


def gauss_newton(problem, x: np.ndarray, steps: int = 30) -> tuple:
    """(x, |r|): minimum-norm Gauss-Newton steps dx = -J_x^+ r back onto C = 0."""
    r, J = problem(x)
    for _ in range(steps):
        if np.linalg.norm(r) <= CLOSEST_TOL:
            break
        dx = -np.linalg.lstsq(J, r, rcond=1e-10)[0]
        x = compose(x, dx, problem.spherical)
        r, J = problem(x)
    return x, float(np.linalg.norm(r))


def project_towards(problem, x: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Closed x moved along C = 0 towards x0 (step 2 of the module's method)."""
    for _ in range(PROJECTION_STEPS):
        _, J = problem(x)
        _, s, vt = np.linalg.svd(J)
        rank = int(np.count_nonzero(s > 1e-9 * max(s[0] if len(s) else 0.0, 1e-300)))
        N = vt[rank:].T
        t = N @ (N.T @ (x0 - x))
        d = np.linalg.norm(x - x0)
        if np.linalg.norm(t) <= 1e-10 * max(1.0, d):
            break
        alpha, moved = 1.0, False
        for _ in range(12):
            y, res = gauss_newton(problem, compose(x, alpha * t, problem.spherical))
            if res <= CLOSEST_TOL and np.linalg.norm(y - x0) < d - 1e-13:
                x, moved = y, True
                break
            alpha /= 2.0
        if not moved:
            break
    return x


def closest_closed(problem, x0: np.ndarray, seed: int = 0) -> tuple:
    """(x, residual): a closed configuration of one part near x0 (the module's method), or
    (the best x found, its residual norm above CLOSEST_TOL) when no start closed it."""
    rng = np.random.default_rng(seed)
    best, best_res = x0, np.inf
    starts = [np.zeros(len(x0))] + [
        scale * rng.uniform(-1.0, 1.0, len(x0)) for scale in RESTART_SCALES for _ in range(RESTARTS)
    ]
    for offset in starts:
        x = compose(x0, offset, problem.spherical)
        for weight in PENALTIES:  # continuation: pulled towards x0, less and less
            x, _ = levenberg_marquardt(Penalized(problem, x0, weight), x, tol=0.0)
        x, res = levenberg_marquardt(problem, x)
        if res > CLOSEST_TOL:
            x, res = gauss_newton(problem, x)
        if res <= CLOSEST_TOL:
            return project_towards(problem, x, x0), res
        if res < best_res:
            best, best_res = x, res
    return best, best_res
