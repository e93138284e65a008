"""Physical consistency of inertial parameters, a stage of the identification
(:mod:`identification` lists them in order): the pseudo-inertia of a body's parameters,
its mass properties, and the check of any parameter vector, used by the estimates
(:mod:`~identification.estimation`, :mod:`~identification.consistency`), the reports
(:mod:`~identification.diagnostics`) and the files written
(:mod:`~identification.export`).

A body's link-frame parameters phi_b = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
(inertia J about the frame origin) are those of a real mass distribution exactly when its
pseudo-inertia (DRNG paper eq. 44; Wensing, Kim, Slotine 2018)

    N_b = [[Sigma, h], [h^T, m]],   Sigma = 1/2 tr(J) 1 - J = integral of p p^T dm,   h = m c,

is positive semidefinite. With m > 0 this is the same as the *triangle inequalities* of the
principal moments I_1, I_2, I_3 of the inertia about the centre of mass, I_i + I_j >= I_k
(which imply I_k >= 0); with m = 0 it forces h = 0 and J = 0. :func:`violations` names every
body and condition that fails (mass not positive, a triangle inequality, a pseudo-inertia with
a negative eigenvalue).

PSD still allows degenerate bodies: a mass on a line or a plane, or far out of the link. A body
whose density lies inside an ellipsoid E = {p : (p - c)^T P (p - c) <= 1}, P = R diag(a)^-2 R^T
(centre c, semi-axes a, axes the columns of R), has (Wensing, Kim, Slotine 2018; with N >= 0
the condition is also sufficient: some density inside E has the parameters)

    tr(Q_E N) = integral of (1 - (p - c)^T P (p - c)) dm >= 0,   Q_E = [[-P, P c], [c^T P, 1 - c^T P c]],

linear in the parameters (:func:`ellipsoid_matrix`, :func:`ellipsoid_margin`). Without the link's
geometry, :func:`inertia_ellipsoid` takes the ellipsoid from a body's (model) inertia: the uniform
solid ellipsoid with its second moments about the centre of mass (Sigma_c = m/5 R diag(a^2) R^T),
its semi-axes raised to at least :data:`AXIS_FLOOR` times the largest and scaled by a factor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pga_dyn.conventions import link_inertia, link_to_pseudo
from pga_dyn.errors import PgaDynError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from pga_dyn.model import Robot

#: Eigenvalues of a pseudo-inertia above -PSD_TOL times its largest |eigenvalue| count as >= 0
#: in :func:`violations` (round-off of the conversions).
PSD_TOL = 1e-12


def mass_properties(phi_b: np.ndarray) -> tuple:
    """(m, c, I_c) of one body's link-frame parameters phi_b (10,): the mass, the centre of mass
    c = h / m and the inertia (3, 3) about it; for m <= 0, c = 0 and the inertia about the origin."""
    m, J = float(phi_b[0]), link_inertia(phi_b)
    c = np.asarray(phi_b[1:4], dtype=float) / m if m > 0 else np.zeros(3)
    return m, c, J - m * (c @ c * np.eye(3) - np.outer(c, c))


def pseudo_inertia(phi_b: npt.ArrayLike) -> np.ndarray:
    """The pseudo-inertia N (4, 4) of one body's link-frame parameters phi_b (10,) (eq. 44)."""
    return link_to_pseudo(np.asarray(phi_b, dtype=float))


#: N = sum_k phi_b[k] PSEUDO_BASIS[k]: the pseudo-inertia is linear in phi_b.
PSEUDO_BASIS = np.array([pseudo_inertia(e) for e in np.eye(10)])
#: The semi-axes of an ellipsoid from an inertia (:func:`inertia_ellipsoid`) are at least this
#: fraction of the largest: a flat or linear (or not physical) model inertia still gives a solid.
AXIS_FLOOR = 0.1


class Ellipsoid(NamedTuple):
    """An ellipsoid in a body's frame: ``center`` (3,), ``axes`` (3,) the semi-axes (m) along the
    columns of ``rotation`` (3, 3)."""

    center: np.ndarray
    axes: np.ndarray
    rotation: np.ndarray

    def matrix(self) -> np.ndarray:
        """Q_E (4, 4) of the module docstring."""
        return ellipsoid_matrix(self.center, self.axes, self.rotation)


def ellipsoid_matrix(center: npt.ArrayLike, axes: npt.ArrayLike, rotation: npt.ArrayLike | None = None) -> np.ndarray:
    """Q_E (4, 4) of the ellipsoid of ``center`` (3,), semi-axes ``axes`` (3,, > 0) along the
    columns of ``rotation`` (3, 3; default the frame's axes): tr(Q_E N) >= 0 for the
    pseudo-inertia N of a density inside it (module docstring)."""
    c, a = np.asarray(center, dtype=float), np.asarray(axes, dtype=float)
    R = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
    if c.shape != (3,) or a.shape != (3,) or R.shape != (3, 3) or not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise PgaDynError(f"an ellipsoid needs a centre (3,) and three positive semi-axes, got {c}, {a}")
    P = R @ np.diag(a**-2.0) @ R.T
    Q = np.empty((4, 4))
    Q[:3, :3] = -P
    Q[:3, 3] = Q[3, :3] = P @ c
    Q[3, 3] = 1.0 - c @ P @ c
    return Q


def ellipsoid_margin(phi_b: npt.ArrayLike, Q: npt.ArrayLike) -> float:
    """tr(Q N(phi_b)) (kg): the mass-weighted margin of a body's density inside the ellipsoid of
    ``Q`` (:func:`ellipsoid_matrix`); >= 0 (with N >= 0) exactly when some density inside has
    these parameters."""
    return float(np.trace(np.asarray(Q) @ pseudo_inertia(phi_b)))


def inertia_ellipsoid(phi_b: np.ndarray, factor: float) -> Ellipsoid | None:
    """The :class:`Ellipsoid` of a body's link-frame parameters ``phi_b`` (10,) (module
    docstring): centred on the centre of mass, semi-axes sqrt(5 lambda_i / m) of the second
    moments about it (lambda_i < 0 of a non-physical inertia count as 0), at least
    :data:`AXIS_FLOOR` times the largest, times ``factor``. None when the mass is not positive
    or the body is a point mass (no extent to scale)."""
    m, c, Ic = mass_properties(phi_b)
    if m <= 0:
        return None
    lam, R = np.linalg.eigh(0.5 * np.trace(Ic) * np.eye(3) - Ic)
    axes = np.sqrt(5.0 * np.maximum(lam, 0.0) / m)
    if axes.max() <= 0:
        return None
    return Ellipsoid(c, factor * np.maximum(axes, AXIS_FLOOR * axes.max()), R)


def pseudo_inertia_eigenvalues(phi: npt.ArrayLike) -> np.ndarray:
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


def violations(body_names: Sequence[str], phi: npt.ArrayLike) -> list:
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
                out.append(
                    Violation(
                        name,
                        "triangle inequality",
                        f"principal moments of inertia about the centre of mass {a:.6g}, {b:.6g}, {k:.6g} "
                        f"kg m^2 break the triangle inequality: {a:.6g} + {b:.6g} < {k:.6g}",
                    )
                )
        eig = np.linalg.eigvalsh(pseudo_inertia(p))
        if eig[0] < -PSD_TOL * max(np.abs(eig).max(), 1e-300):
            out.append(
                Violation(
                    name,
                    "pseudo-inertia",
                    f"pseudo-inertia not positive semidefinite (smallest "
                    f"eigenvalue {eig[0]:.6g}): no mass distribution has "
                    f"these parameters",
                )
            )
    return out


def model_violations(robot: Robot) -> list:
    """:func:`violations` of the inertial parameters in ``robot``'s model file (e.g. the built-in
    ``puma560``: link1 has mass 0 and a rotational inertia, link3 breaks a triangle inequality)."""
    import pga_dyn

    return violations(robot.body_names, pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)))
