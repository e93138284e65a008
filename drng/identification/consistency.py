"""The physically consistent estimate, a stage of the identification
(:mod:`drng.identification` lists them in order): an LMI.

A body's parameters are physical exactly when its pseudo-inertia N_b is positive semidefinite
(:mod:`drng.identification.physics`). The consistent estimate (:func:`consistent_estimate`) is
the MAP estimate of :mod:`drng.identification.estimation` under the constraints N_b >= 0 for
every body, the viscous and Coulomb friction and the armature >= 0:

    min_theta (K theta - beta_hat)^T A (K theta - beta_hat) + ||(theta - theta_0) / sigma_0||^2
    s.t.      N_b(phi) >= PSD_MARGIN 1 (b = 1..n),  fv, fc, Ia >= 0,

a semidefinite program (linear matrix inequalities, since N_b is linear in phi), solved with
cvxpy (Clarabel): the optional extra ``pga-dyn[identify]``. Its base values K theta fit the data
as well as the constraints allow; the directions the data do not see stay closest to the prior.
"""

from __future__ import annotations

import numpy as np

from pga_dyn.errors import PgaDynError, optional

from ..result import one_blas_thread

from .estimation import FullEstimate, check_prior, default_prior
from .model import NONNEGATIVE
from .physics import PSEUDO_BASIS, pseudo_inertia, pseudo_inertia_eigenvalues

#: The consistent estimate asks N_b - PSD_MARGIN 1 >= 0: a body on the boundary of the cone (a flat
#: or massless body) then passes :func:`~drng.identification.physics.violations` despite the
#: solver's round-off (about 1e-12).
PSD_MARGIN = 1e-9
#: The consistent estimate is accepted when every pseudo-inertia's smallest eigenvalue is at
#: least -ACCEPT_TOL (kg m^2); the solver's answer is checked, never repaired.
ACCEPT_TOL = 1e-9


@one_blas_thread
def consistent_estimate(est, prior=None, solver: str = "CLARABEL"):
    """The physically consistent estimate (module docstring) from ``est`` (an
    :class:`~drng.identification.estimation.Estimate`) and a Gaussian ``prior`` (theta_0, sigma_0)
    (default :func:`~drng.identification.estimation.default_prior`). Returns a
    :class:`~drng.identification.estimation.FullEstimate`; PgaDynError when cvxpy is not
    installed, the solver fails, or its answer has a pseudo-inertia eigenvalue below
    -ACCEPT_TOL."""
    cp = optional("cvxpy", "the physically consistent estimate")
    model = est.model
    theta0, sigma0 = check_prior(model, default_prior(model, est.data) if prior is None else prior)
    nphi, K = model.base.K.shape[1], model.K
    # theta = theta_0 + sigma_0 z; the data term through the Cholesky factor of the information
    L = np.linalg.cholesky(est.information()).T
    M = L @ (K * sigma0)
    d = L @ (est.beta - K @ theta0)
    z = cp.Variable(theta0.size)
    theta = theta0 + cp.multiply(sigma0, z)
    constraints = []
    for b in range(nphi // 10):
        cols = slice(10 * b, 10 * b + 10)
        N = pseudo_inertia(theta0[cols]) + sum(sigma0[10 * b + k] * z[10 * b + k] * PSEUDO_BASIS[k]
                                               for k in range(10))
        constraints.append(N - PSD_MARGIN * np.eye(4) >> 0)
    for k, (term, _) in enumerate(model.extras):
        if term in NONNEGATIVE:
            constraints.append(theta[nphi + k] >= 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(M @ z - d) + cp.sum_squares(z)), constraints)
    try:
        problem.solve(solver=solver)
    except (cp.error.SolverError, ValueError) as exc:
        raise PgaDynError(f"the consistent estimate: solver {solver} failed: {exc}") from None
    if problem.status != cp.OPTIMAL or z.value is None:
        raise PgaDynError(f"the consistent estimate: solver {solver} ended with status '{problem.status}'")
    theta_hat = theta0 + sigma0 * z.value
    eig = pseudo_inertia_eigenvalues(theta_hat[:nphi])
    if eig.min() < -ACCEPT_TOL:
        worst = int(np.argmin(eig))
        raise PgaDynError(f"the consistent estimate: solver {solver} returned a pseudo-inertia of body "
                          f"'{model.robot.body_names[worst]}' with eigenvalue {eig[worst]:.3g} < -{ACCEPT_TOL:g}")
    return FullEstimate(model, theta_hat, K @ theta_hat, None, "consistent", eig, solver)
