"""The physically consistent estimate, a stage of the identification
(:mod:`identification` lists them in order): an LMI.

A body's parameters are physical exactly when its pseudo-inertia N_b is positive semidefinite
(:mod:`identification.physics`). The consistent estimate (:func:`consistent_estimate`) is
the MAP estimate of :mod:`identification.estimation` under the constraints N_b >= 0 for
every body, bounds on each body's mass and extent (:func:`body_bounds`), and the viscous and
Coulomb friction and the armature >= 0:

    min_theta (K theta - beta_hat)^T A (K theta - beta_hat) + ||(theta - theta_0) / sigma_0||^2
    s.t.      N_b(phi) >= PSD_MARGIN 1,  tr(Q_b N_b(phi)) >= PSD_MARGIN,
              m_lo,b <= m_b <= m_hi,b   (b = 1..n),   fv, fc, Ia >= 0,

a semidefinite program (linear matrix inequalities, since N_b is linear in phi), solved by
Clarabel (:class:`ConsistentProblem`): the optional extra ``identify``. Its base values K theta
fit the data as well as the constraints allow; the directions the data do not see stay closest
to the prior.

The extent bound tr(Q_b N_b) >= 0 (Wensing, Kim, Slotine 2018) says that the body's density lies
inside the ellipsoid E_b of Q_b (:func:`~identification.physics.ellipsoid_matrix`): by
default the ellipsoid of the model file's inertia of the body scaled by :data:`EXTENT_FACTOR`
(:func:`~identification.physics.inertia_ellipsoid`; the file has no geometry pga-dyn reads),
or one given per link. Without it a body the data do not pin down can end on the PSD boundary
with its mass on a line reaching far out of the link. The mass bounds are :data:`MASS_BOUNDS`
times the model file's masses. A body of mass 0 in the file gets neither bound, and says so.

A full estimate splits the identifiable combinations K theta into single parameters by the
prior; :func:`identifiability` says which single parameters the data determine: theta_k is
identifiable exactly when e_k is in the row space of K. The others (e.g. the armature of a
first joint, regrouped into Izz1R) carry the prior's split and are marked so in the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError, optional

from .estimation import FullEstimate, check_prior, default_prior
from .model import NONNEGATIVE
from .physics import (
    PSEUDO_BASIS,
    Ellipsoid,
    ellipsoid_margin,
    ellipsoid_matrix,
    inertia_ellipsoid,
    pseudo_inertia,
    pseudo_inertia_eigenvalues,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .estimation import Estimate
    from .model import IdentificationModel

#: The consistent estimate asks N_b - PSD_MARGIN 1 >= 0: a body on the boundary of the cone (a flat
#: or massless body) then passes :func:`~identification.physics.violations` despite the
#: solver's round-off. That round-off is usually about 1e-12 but reached 2.5e-9 on a Puma energy
#: estimate (Clarabel's feasibility tolerance is 1e-8 relative), so the margin is 1e-8.
PSD_MARGIN = 1e-8
#: The consistent estimate is accepted when every pseudo-inertia's smallest eigenvalue is at
#: least -ACCEPT_TOL (kg m^2); the solver's answer is checked, never repaired.
ACCEPT_TOL = 1e-9
#: Default mass bounds of each body, relative to its mass in the model file.
MASS_BOUNDS = (0.5, 2.0)
#: Default extent bound: the ellipsoid of the model file's inertia of each body
#: (:func:`~identification.physics.inertia_ellipsoid`) with its semi-axes scaled by this.
EXTENT_FACTOR = 2.0
#: Identifiability of a single parameter: |e_k projected on the row space of K| >= 1 - RANGE_TOL.
RANGE_TOL = 1e-9


def row_scale(a: np.ndarray, sigma: np.ndarray) -> float:
    """The scale of a body's extent row tr(Q N) >= margin in the solver's variables z (phi = theta_0
    + sigma_0 z): max(1, max_k |a_k sigma_0k|), a = tr(Q B_k) (10,). The solver meets the row to its
    feasibility tolerance relative to this scale, so the row's margin and its acceptance are
    PSD_MARGIN and ACCEPT_TOL times it (kg): a small body with a small ellipsoid has large a_k
    (1 / semi-axis^2), and its answer missed an absolute 1e-8 kg by 2.6e-8 kg."""
    return float(max(1.0, np.abs(a * sigma).max()))


@dataclass(frozen=True, eq=False)
class BodyBounds:
    """The bounds of the consistent estimate on each body (``names``, the robot's bodies): ``mass``
    (n, 2) lower and upper mass (kg; -inf, inf: none), ``ellipsoids`` (n,) of
    :class:`~identification.physics.Ellipsoid` (None: no extent bound) in the body frames,
    ``sources`` (n,) where each body's bounds come from (or why it has none)."""

    names: tuple
    mass: np.ndarray
    ellipsoids: tuple
    sources: tuple

    def report(self, phi: np.ndarray | None = None) -> list:
        """One JSON-ready dict per body: the mass bounds, the ellipsoid's centre, semi-axes and axes
        (rows), the source; with link-frame parameters ``phi`` (n, 10), the mass, the extent margin
        tr(Q N) (kg, :func:`~identification.physics.ellipsoid_margin`) and which bounds are
        active (within 1e-6 relative)."""
        out = []
        for b, name in enumerate(self.names):
            lo, hi = self.mass[b]
            e = self.ellipsoids[b]
            row = {
                "body": name,
                "mass_bounds": [float(v) if np.isfinite(v) else None for v in (lo, hi)],
                "ellipsoid": None
                if e is None
                else {"center": e.center.tolist(), "semi_axes": e.axes.tolist(), "axes": e.rotation.T.tolist()},
                "source": self.sources[b],
            }
            if phi is not None:
                m = float(phi[b][0])
                active = [
                    k
                    for k, v in (("mass lower", lo), ("mass upper", hi))
                    if np.isfinite(v) and abs(m - v) <= 1e-6 * max(abs(v), 1e-12)
                ]
                if e is not None:
                    row["extent_margin"] = ellipsoid_margin(phi[b], e.matrix())
                    if row["extent_margin"] <= 1e-6 * max(m, 1e-12):
                        active.append("extent")
                row |= {"mass": m, "active": active}
            out.append(row)
        return out


def body_bounds(
    robot: Robot,
    mass_bounds: tuple[float, float] | None = MASS_BOUNDS,
    extent: float | None = EXTENT_FACTOR,
    ellipsoids: dict | None = None,
) -> BodyBounds:
    """The :class:`BodyBounds` of ``robot``'s bodies: masses within ``mass_bounds`` (lower, upper)
    times the model file's (None: no mass bound); the ellipsoid of the file's inertia scaled by
    ``extent`` (None: no extent bound), except for the links of ``ellipsoids``, {link: (centre (3,),
    semi-axes (3,)) or (centre, semi-axes, rotation (3, 3))} in the link's frame (a link merged into
    a body by fixed joints is moved to the body frame)."""
    import pga_dyn

    n = robot.n
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(n, 10)
    mass = np.tile([-np.inf, np.inf], (n, 1))
    mass_source, extent_source = [""] * n, [""] * n
    if mass_bounds is not None:
        lo, hi = (float(v) for v in mass_bounds)
        if not 0 <= lo <= 1 <= hi:
            raise PgaDynError(
                f"mass bounds are factors of the model's masses with 0 <= lower <= 1 <= upper, got {mass_bounds}"
            )
        for b in range(n):
            if phi0[b, 0] > 0:
                mass[b] = lo * phi0[b, 0], hi * phi0[b, 0]
                mass_source[b] = f"mass {lo:g}-{hi:g} x model"
            else:
                mass_source[b] = "no mass bound: the model's mass is 0"
    if extent is not None and not (isinstance(extent, (int, float)) and extent > 0):
        raise PgaDynError(f"extent: the factor of the model inertia's ellipsoid must be positive, got {extent!r}")
    found = [None if extent is None else inertia_ellipsoid(p, float(extent)) for p in phi0]
    if extent is not None:
        for b in range(n):
            extent_source[b] = (
                f"ellipsoid of the model inertia x {extent:g}"
                if found[b] is not None
                else "no extent bound: the model's body is massless or a point mass"
            )
    for link, given in (ellipsoids or {}).items():
        b = robot.body_index(link)
        if b == 0:
            raise PgaDynError(f"ellipsoids: link '{link}' is fixed to the base: nothing to bound")
        if len(given) not in (2, 3):
            raise PgaDynError(f"ellipsoids['{link}']: expected (centre, semi-axes) or (centre, semi-axes, rotation)")
        T = robot.link_pose(link)
        c, a = np.asarray(given[0], dtype=float), np.asarray(given[1], dtype=float)
        R = np.eye(3) if len(given) == 2 else np.asarray(given[2], dtype=float)
        ellipsoid_matrix(c, a, R)  # checks the shapes and the semi-axes
        found[b - 1] = Ellipsoid(T[:3, :3] @ c + T[:3, 3], a, T[:3, :3] @ R)
        extent_source[b - 1] = f"ellipsoid given on {link}"
    sources = tuple("; ".join(s for s in pair if s) for pair in zip(mass_source, extent_source))
    return BodyBounds(tuple(robot.body_names), mass, tuple(found), sources)


@dataclass(frozen=True, eq=False)
class ConsistentEstimate(FullEstimate):
    """A :class:`~identification.estimation.FullEstimate` with the :class:`BodyBounds` it
    was found under (``bounds``)."""

    bounds: BodyBounds | None = None


def identifiability(model: IdentificationModel) -> tuple:
    """For each full parameter theta_k of ``model`` (an
    :class:`~identification.model.IdentificationModel`), "" when the data determine it on
    its own (e_k in the row space of K), else a note: "not identifiable separately: regrouped into
    Izz1R, ..." (the identifiable parameters it is part of) or "not identifiable: no effect on the
    forces" (a zero column of K)."""
    Q = np.linalg.qr(model.K.T)[0]
    inside = np.sum(Q**2, axis=1)
    notes = []
    for k in range(model.K.shape[1]):
        rows = np.flatnonzero(model.K[:, k])
        if inside[k] >= 1 - RANGE_TOL:
            notes.append("")
        elif rows.size:
            notes.append("not identifiable separately: regrouped into " + ", ".join(model.names[r] for r in rows))
        else:
            notes.append("not identifiable: no effect on the forces")
    return tuple(notes)


#: The rows (i, j) of a 4 x 4 symmetric matrix in Clarabel's PSD triangle cone: its upper
#: triangle column by column, the off-diagonal entries times sqrt(2) (so that the cone's inner
#: product is the matrices' trace inner product).
TRIANGLE = tuple((i, j) for j in range(4) for i in range(j + 1))
TRIANGLE_SCALE = np.array([1.0 if i == j else np.sqrt(2.0) for i, j in TRIANGLE])


def triangle(N: np.ndarray) -> np.ndarray:
    """The scaled upper triangle (10,) of a symmetric 4 x 4 matrix ``N`` (:data:`TRIANGLE`)."""
    return np.array([N[i, j] for i, j in TRIANGLE]) * TRIANGLE_SCALE


class ConsistentProblem:
    """The semidefinite program of :func:`consistent_estimate` for one ``model``, ``prior``
    (theta_0, sigma_0) and bounds, its constraints built once and solved for any estimate of beta
    and its information (:meth:`solve`): the cross-validation of the model selection solves it
    once per fold. With theta = theta_0 + sigma_0 z and the data term through the Cholesky factor
    L of the information A (L^T L = A), the objective is ||M z - d||^2 + ||z||^2 with
    M = L K diag(sigma_0), d = L (beta - K theta_0), minimised as its square root t over (z, t)
    with (t, M z - d, z) in a second-order cone (the same minimiser; a quadratic objective's large
    constant d^T d would drown the objective in the solver's relative duality gap). Clarabel (the optional extra
    ``identify``) takes it as it is: the constraints A z + s = b with s in the cone of
    non-negative numbers (the mass bounds, the extents tr(Q_b N_b) >= PSD_MARGIN, the friction and
    armature terms >= 0) and in one PSD triangle cone per body (N_b(theta_0 + sigma_0 z) -
    PSD_MARGIN 1, linear in z: N_b = N_b(theta_0) + sum_k sigma_0k z_k B_k, B_k =
    :data:`~.physics.PSEUDO_BASIS`). A solution the solver calls almost solved (its reduced
    tolerances met) is accepted when it passes the checks of :meth:`solve`, and said so
    (its ``status``)."""

    def __init__(
        self,
        model: IdentificationModel,
        prior: tuple[npt.ArrayLike, npt.ArrayLike],
        solver: str = "CLARABEL",
        mass_bounds: tuple[float, float] | None = MASS_BOUNDS,
        extent: float | None = EXTENT_FACTOR,
        ellipsoids: dict | None = None,
    ) -> None:
        if solver.upper() != "CLARABEL":
            raise PgaDynError(f"the consistent estimate is solved by Clarabel, got solver {solver!r}")
        self.clarabel = optional("clarabel", "the physically consistent estimate")
        self.sparse = optional("scipy.sparse", "the physically consistent estimate")
        self.model, self.solver, self.status = model, "CLARABEL", ""
        self.theta0, self.sigma0 = theta0, sigma0 = check_prior(model, prior)
        self.bounds = body_bounds(model.robot, mass_bounds, extent, ellipsoids)
        nphi, size = model.base.K.shape[1], theta0.size
        rows, rhs, psd_rows, psd_rhs = [], [], [], []

        def row(columns, values, bound):  # b - a^T z >= 0 with a nonzero at columns
            r = np.zeros(size)
            r[columns] = values
            rows.append(-r)
            rhs.append(bound)

        for b in range(nphi // 10):
            cols = np.arange(10 * b, 10 * b + 10)
            e = self.bounds.ellipsoids[b]
            if e is not None:  # tr(Q N) is linear in phi_b: its coefficients are tr(Q B_k)
                a = np.einsum("ij,kji->k", e.matrix(), PSEUDO_BASIS)
                row(cols, a * sigma0[cols], a @ theta0[cols] - PSD_MARGIN * row_scale(a, sigma0[cols]))
            lo, hi = self.bounds.mass[b]
            if np.isfinite(lo):
                row([10 * b], [sigma0[10 * b]], theta0[10 * b] - lo)
                row([10 * b], [-sigma0[10 * b]], hi - theta0[10 * b])
            block = np.zeros((len(TRIANGLE), size))
            block[:, cols] = -np.array([triangle(sigma0[10 * b + k] * PSEUDO_BASIS[k]) for k in range(10)]).T
            psd_rows.append(block)
            psd_rhs.append(triangle(pseudo_inertia(theta0[cols]) - PSD_MARGIN * np.eye(4)))
        for k, (term, _) in enumerate(model.extras):
            if term in NONNEGATIVE:
                row([nphi + k], [sigma0[nphi + k]], theta0[nphi + k])
        self.A = self.sparse.csc_matrix(np.vstack([np.reshape(rows, (-1, size)), *psd_rows]))
        self.b = np.concatenate([np.asarray(rhs, dtype=float), *psd_rhs])
        self.cones = ([self.clarabel.NonnegativeConeT(len(rows))] if rows else []) + [
            self.clarabel.PSDTriangleConeT(4) for _ in psd_rows
        ]

    def solve(self, beta: np.ndarray, information: np.ndarray) -> np.ndarray:
        """theta (10 n + n_e,) of the estimate ``beta`` (p,) with ``information`` (p, p), checked:
        PgaDynError when the solver fails, or its answer has a pseudo-inertia eigenvalue below
        -ACCEPT_TOL or leaves a bound by more than ACCEPT_TOL (relative for the masses)."""
        model, solver, K = self.model, self.solver, self.model.K
        L = np.linalg.cholesky(information).T
        M, d = L @ (K * self.sigma0), L @ (beta - K @ self.theta0)
        # minimise t over (z, t) with (t, M z - d, z) in a second-order cone: t = sqrt of the objective
        n, sp = M.shape[1], self.sparse
        cone = sp.vstack(
            [
                sp.csc_matrix(([-1.0], ([0], [n])), shape=(1, n + 1)),
                sp.hstack([sp.csc_matrix(-M), sp.csc_matrix((len(d), 1))]),
                sp.hstack([-sp.identity(n), sp.csc_matrix((n, 1))]),
            ]
        )
        A = sp.vstack([sp.hstack([self.A, sp.csc_matrix((self.A.shape[0], 1))]), cone], format="csc")
        b = np.concatenate([self.b, [0.0], -d, np.zeros(n)])
        q = np.zeros(n + 1)
        q[n] = 1.0
        settings = self.clarabel.DefaultSettings()
        settings.verbose = False
        cones = [*self.cones, self.clarabel.SecondOrderConeT(1 + len(d) + n)]
        try:
            found = self.clarabel.DefaultSolver(sp.csc_matrix((n + 1, n + 1)), q, A, b, cones, settings).solve()
        except Exception as exc:  # noqa: BLE001 - the solver's own errors, named in the message
            raise PgaDynError(f"the consistent estimate: solver {solver} failed: {exc}") from None
        status = str(found.status)
        if status not in ("Solved", "AlmostSolved"):
            raise PgaDynError(f"the consistent estimate: solver {solver} ended with status '{status}'")
        self.status = status
        theta_hat = self.theta0 + self.sigma0 * np.asarray(found.x)[:-1]
        nphi = model.base.K.shape[1]
        eig = pseudo_inertia_eigenvalues(theta_hat[:nphi])
        if eig.min() < -ACCEPT_TOL:
            worst = int(np.argmin(eig))
            raise PgaDynError(
                f"the consistent estimate: solver {solver} returned a pseudo-inertia of body "
                f"'{model.robot.body_names[worst]}' with eigenvalue {eig[worst]:.3g} < -{ACCEPT_TOL:g}"
            )
        phi = theta_hat[:nphi].reshape(-1, 10)
        sigmas = self.sigma0[:nphi].reshape(-1, 10)
        for name, p, (lo, hi), e, sigma in zip(
            self.bounds.names, phi, self.bounds.mass, self.bounds.ellipsoids, sigmas
        ):
            if not lo * (1 - ACCEPT_TOL) - ACCEPT_TOL <= p[0] <= hi * (1 + ACCEPT_TOL) + ACCEPT_TOL:
                raise PgaDynError(
                    f"the consistent estimate: solver {solver} returned a mass {p[0]:.6g} kg of body "
                    f"'{name}' outside its bounds [{lo:.6g}, {hi:.6g}]"
                )
            scale = None if e is None else row_scale(np.einsum("ij,kji->k", e.matrix(), PSEUDO_BASIS), sigma)
            if e is not None and ellipsoid_margin(p, e.matrix()) < -ACCEPT_TOL * scale:
                raise PgaDynError(
                    f"the consistent estimate: solver {solver} returned body '{name}' outside its "
                    f"bounding ellipsoid (margin {ellipsoid_margin(p, e.matrix()):.3g} kg)"
                )
        return theta_hat


@one_blas_thread
def consistent_estimate(
    est: Estimate,
    prior: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    solver: str = "CLARABEL",
    mass_bounds: tuple[float, float] | None = MASS_BOUNDS,
    extent: float | None = EXTENT_FACTOR,
    ellipsoids: dict | None = None,
) -> ConsistentEstimate:
    """The physically consistent estimate (module docstring) from ``est`` (an
    :class:`~identification.estimation.Estimate`) and a Gaussian ``prior`` (theta_0, sigma_0)
    (default :func:`~identification.estimation.default_prior`), with the bounds of
    :func:`body_bounds` (``mass_bounds``, ``extent``, ``ellipsoids``; None: that bound off), by a
    :class:`ConsistentProblem`. Returns a :class:`ConsistentEstimate`; PgaDynError when Clarabel
    is not installed, the solver fails (an infeasible prior and bounds included), or its answer has a
    pseudo-inertia eigenvalue below -ACCEPT_TOL or leaves a bound by more than ACCEPT_TOL
    (relative for the masses)."""
    model = est.model
    problem = ConsistentProblem(
        model, default_prior(model, est.data) if prior is None else prior, solver, mass_bounds, extent, ellipsoids
    )
    theta_hat = problem.solve(est.beta, est.information())
    nphi = model.base.K.shape[1]
    eig = pseudo_inertia_eigenvalues(theta_hat[:nphi])
    solver = problem.solver + (", almost solved: its reduced tolerances" if problem.status == "AlmostSolved" else "")
    return ConsistentEstimate(model, theta_hat, model.K @ theta_hat, None, "consistent", eig, solver, problem.bounds)
