"""Physical consistency of inertial parameters: the check of any parameter vector, and the
physically consistent estimate (an LMI).

A body's link-frame parameters phi_b = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
(inertia J about the frame origin) are those of a real mass distribution exactly when its
pseudo-inertia (DRNG paper eq. 44; Wensing, Kim, Slotine 2018)

    N_b = [[Sigma, h], [h^T, m]],   Sigma = 1/2 tr(J) 1 - J = integral of p p^T dm,   h = m c,

is positive semidefinite. With m > 0 this is the same as the *triangle inequalities* of the
principal moments I_1, I_2, I_3 of the inertia about the centre of mass, I_i + I_j >= I_k
(which imply I_k >= 0); with m = 0 it forces h = 0 and J = 0. :func:`violations` names every
body and condition that fails (mass not positive, a triangle inequality, a pseudo-inertia with
a negative eigenvalue).

The consistent estimate (:func:`consistent_estimate`) is the MAP estimate of
:mod:`drng.identification.estimation` under the constraints N_b >= 0 for every body, the
viscous and Coulomb friction and the armature >= 0:

    min_theta (K theta - beta_hat)^T A (K theta - beta_hat) + ||(theta - theta_0) / sigma_0||^2
    s.t.      N_b(phi) >= PSD_MARGIN 1 (b = 1..n),  fv, fc, Ia >= 0,

a semidefinite program (linear matrix inequalities, since N_b is linear in phi), solved with
cvxpy (Clarabel): the optional extra ``pga-dyn[identify]``. Its base values K theta fit the data
as well as the constraints allow; the directions the data do not see stay closest to the prior.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pga_dyn.conventions import link_inertia, link_to_pseudo
from pga_dyn.errors import PgaDynError

from ..result import one_blas_thread

from .model import NONNEGATIVE

#: Eigenvalues of a pseudo-inertia above -PSD_TOL times its largest |eigenvalue| count as >= 0
#: in :func:`violations` (round-off of the conversions).
PSD_TOL = 1e-12
#: The consistent estimate asks N_b - PSD_MARGIN 1 >= 0: a body on the boundary of the cone (a flat
#: or massless body) then passes :func:`violations` despite the solver's round-off (about 1e-12).
PSD_MARGIN = 1e-9
#: The consistent estimate is accepted when every pseudo-inertia's smallest eigenvalue is at
#: least -ACCEPT_TOL (kg m^2); the solver's answer is checked, never repaired.
ACCEPT_TOL = 1e-9


def mass_properties(phi_b):
    """(m, c, I_c) of one body's link-frame parameters phi_b (10,): the mass, the centre of mass
    c = h / m and the inertia (3, 3) about it; for m <= 0, c = 0 and the inertia about the origin."""
    m, J = float(phi_b[0]), link_inertia(phi_b)
    c = np.asarray(phi_b[1:4], dtype=float) / m if m > 0 else np.zeros(3)
    return m, c, J - m * (c @ c * np.eye(3) - np.outer(c, c))


def pseudo_inertia(phi_b) -> np.ndarray:
    """The pseudo-inertia N (4, 4) of one body's link-frame parameters phi_b (10,) (eq. 44)."""
    return link_to_pseudo(np.asarray(phi_b, dtype=float))


#: N = sum_k phi_b[k] PSEUDO_BASIS[k]: the pseudo-inertia is linear in phi_b.
PSEUDO_BASIS = np.array([pseudo_inertia(e) for e in np.eye(10)])


def pseudo_inertia_eigenvalues(phi) -> np.ndarray:
    """The smallest eigenvalue (n,) of each body's pseudo-inertia, phi (10 n,) or (n, 10)."""
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    return np.array([np.linalg.eigvalsh(pseudo_inertia(p))[0] for p in phi])


class Violation(NamedTuple):
    """A body whose parameters are not physical: its ``body`` name, the ``condition`` that
    fails (``mass``, ``triangle inequality``, ``pseudo-inertia``) and a ``detail`` sentence."""

    body: str
    condition: str
    detail: str

    def __str__(self) -> str:
        return f"{self.body}: {self.detail}"


def violations(body_names, phi) -> list:
    """The :class:`Violation` of every body (``body_names``) whose link-frame parameters ``phi``
    ((10 n,) or (n, 10)) are not physical: mass not positive, principal moments about the
    centre of mass that break a triangle inequality, a pseudo-inertia with a negative
    eigenvalue. Empty when all are consistent."""
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    if len(body_names) != phi.shape[0]:
        raise PgaDynError(f"phi has parameters of {phi.shape[0]} bodies, there are {len(body_names)} body names")
    out = []
    for name, p in zip(body_names, phi):
        m = p[0]
        if m <= 0:
            out.append(Violation(name, "mass", f"mass {m:.6g} kg is not positive"))
        else:
            moments = np.linalg.eigvalsh(mass_properties(p)[2])
            tol = PSD_TOL * max(np.abs(moments).max(), 1e-300)
            a, b, k = moments
            if a + b < k - tol:
                out.append(Violation(name, "triangle inequality",
                                     f"principal moments of inertia about the centre of mass {a:.6g}, {b:.6g}, {k:.6g} "
                                     f"kg m^2 break the triangle inequality: {a:.6g} + {b:.6g} < {k:.6g}"))
        eig = np.linalg.eigvalsh(pseudo_inertia(p))
        if eig[0] < -PSD_TOL * max(np.abs(eig).max(), 1e-300):
            out.append(Violation(name, "pseudo-inertia", f"pseudo-inertia not positive semidefinite (smallest "
                                                          f"eigenvalue {eig[0]:.6g}): no mass distribution has "
                                                          f"these parameters"))
    return out


def model_violations(robot) -> list:
    """:func:`violations` of the inertial parameters in ``robot``'s model file (e.g. the built-in
    ``puma560``: link1 has mass 0 and a rotational inertia, link3 breaks a triangle inequality)."""
    import pga_dyn

    return violations(robot.body_names, pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)))


@one_blas_thread
def consistent_estimate(est, prior=None, solver: str = "CLARABEL"):
    """The physically consistent estimate (module docstring) from ``est`` (an
    :class:`~drng.identification.estimation.Estimate`) and a Gaussian ``prior`` (theta_0, sigma_0)
    (default :func:`~drng.identification.estimation.default_prior`). Returns a
    :class:`~drng.identification.estimation.FullEstimate`; PgaDynError when cvxpy is not
    installed, the solver fails, or its answer has a pseudo-inertia eigenvalue below
    -ACCEPT_TOL."""
    from .estimation import FullEstimate, check_prior, default_prior

    from pga_dyn.errors import optional

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
