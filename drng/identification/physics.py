"""Physical consistency of inertial parameters, a stage of the identification
(:mod:`drng.identification` lists them in order): the pseudo-inertia of a body's parameters,
its mass properties, and the check of any parameter vector, used by the estimates
(:mod:`~drng.identification.estimation`, :mod:`~drng.identification.consistency`), the reports
(:mod:`~drng.identification.diagnostics`) and the files written
(:mod:`~drng.identification.export`).

A body's link-frame parameters phi_b = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
(inertia J about the frame origin) are those of a real mass distribution exactly when its
pseudo-inertia (DRNG paper eq. 44; Wensing, Kim, Slotine 2018)

    N_b = [[Sigma, h], [h^T, m]],   Sigma = 1/2 tr(J) 1 - J = integral of p p^T dm,   h = m c,

is positive semidefinite. With m > 0 this is the same as the *triangle inequalities* of the
principal moments I_1, I_2, I_3 of the inertia about the centre of mass, I_i + I_j >= I_k
(which imply I_k >= 0); with m = 0 it forces h = 0 and J = 0. :func:`violations` names every
body and condition that fails (mass not positive, a triangle inequality, a pseudo-inertia with
a negative eigenvalue).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pga_dyn.conventions import link_inertia, link_to_pseudo
from pga_dyn.errors import PgaDynError

#: Eigenvalues of a pseudo-inertia above -PSD_TOL times its largest |eigenvalue| count as >= 0
#: in :func:`violations` (round-off of the conversions).
PSD_TOL = 1e-12


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
