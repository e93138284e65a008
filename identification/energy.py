"""Energy-based identification, a stage of the identification (:mod:`identification`
lists them in order): the identifiable parameters beta of :mod:`identification.model` from
the work of the actuators over windows of time, without accelerations (Gautier 1997, the energy
model; the energy observations of Martinez, Tonneau and Mastalli, eqs. 62-69).

**Energy of a body.** In the spatial assignment (docs/conventions.md) body i's pseudo-inertia
N_i (eq. 44) is its mass distribution at q0 in world coordinates; at q a material point x0
(homogeneous, at q0) is at D_i x0, D_i = T_i(q) T_i(q0)^-1, whose columns are the body's
tetrahedral points E_m = (e_m, w_m) (x, y, z ideal, O Euclidean). With the spatial twist
V_i = (omega; v) the point moves with u = omega x (D x0) + w v (eq. 34), so the tetrahedral points
move with u_m = omega x e_m + w_m v and, the velocity being linear in x0,

    K_i = 1/2 int |u|^2 dm = 1/2 sum_mn (u_m . u_n) N_i[m, n],
    P_i = -int g . (D x0) dm = -sum_m (g . e_m) N_i[m, 4]      (4: the point O; g the gravity vector).

So K_i + P_i = sum_mn B_i[m, n] N_i[m, n] with the symmetric B_i = 1/2 U^T U - 1/2 (c e_4^T + e_4 c^T),
U = [u_1 .. u_4] (3, 4), c_m = g . e_m, and by the bar operator of eq. (100) the energy of the
robot is linear in pi: E(q, qd) = sum_i bar(B_i) pi_i = h(q, qd) pi (:func:`energy_regressor`,
tree coordinates; Pinocchio's computeKineticEnergy + computePotentialEnergy in the tests).

**Work and energy.** Along a motion d/dt E = qd^T tau_rb (the rigid-body forces of the tree
coordinates); for closed loops qd = G qd_a and the constraint forces do no work, so
qd^T tau_rb = qd_a^T G^T tau_rb = qd_a^T tau_a. The extra terms of :mod:`.model` do the work
fv qd^2, fc |qd| (= sign(qd) qd), f0 qd and Ia qd qdd = d/dt (Ia qd^2 / 2). Over a window
[t_k, t_{k+1}]:

    int qd_a^T tau_a dt = H(t_{k+1}) theta - H(t_k) theta,
    H(t) = [h(q, qd) F,  int_0^t qd_j^2,  int_0^t |qd_j|,  int_0^t qd_j,  qd_j^2 / 2]   (the extras per j),

F the link map (pi = F phi, :func:`pga_dyn.tp_regressor.link_map`), theta = (phi, x). Each column
of H is the work of the force of the same column of [Y_link, D] (its time integral against qd_a),
so every linear relation between the columns of [Y_link, D] holds between those of H: beta =
K theta carries over, and the window rows are W_E = Delta H[:, leading], work = W_E beta.
Conversely a combination delta of zero work over every window has H delta constant, so
qd^T (Y delta) = 0 for every (q, qd, qdd): its qdd term makes the mass matrix of delta zero
(armature included), hence its velocity-product forces, and the rest, qd^T (g_delta + fv o qd +
fc o sign(qd) + f0) = 0 for every qd, makes each term zero. The energy model identifies exactly
the base parameters of the dynamic model (the tests recover the dynamic model's beta from the
work alone).

**Integration.** The windows are consecutive, ``window`` s each (:data:`WINDOW`), sharing their
end samples, as many as fit in the record; h at the window ends, and the work int qd_a^T tau dt
and the integrals of qd^2, |qd| and qd by the composite Simpson rule on the samples
(``rule="trapezoid"``: the trapezoid rule), the same rule on both sides, so that a friction
force is integrated alike in the data and in the model. qd is the trajectory's (smoothed,
:mod:`.signals`); qdd is not used. On the tests' brisk closed-loop motions at 200 Hz the
trapezoid rule errs by 3e-4 of the largest window's work, Simpson's by 3e-7; the condition
number of the window rows (thousands and more) multiplies that error in beta. The windows of a
periodic motion repeat from one period to the next: a period must hold more windows than
parameters.

**Weights and standard deviations.** White noise of standard deviation sigma_j on tau_j enters
the work of window k through the integration weight a_s times qd_sj of each sample:

    var(work_k) = sum_j sigma_j^2 c_kj,   c_kj = sum_s (a_s qd_sj)^2.

sigma_j is measured without the model (:func:`force_noise`), at least
:data:`~identification.estimation.NOISE_FLOOR` times its RMS force; WLS divides each window
by sqrt(var(work_k)) and Cov(beta) = s^2 (W_w^T W_w)^-1 with s^2 = ||e_w||^2 / (m - p), as in
:mod:`.estimation`. Position noise reaches the work through qd and h; the variance factor s^2
takes it up. Neighbouring windows share an end sample, whose noise is a small share of either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .estimation import NOISE_FLOOR, Estimate, scaled_least_squares, unexcited
from .model import identification_model, states_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .data import Trajectory
    from .model import IdentificationModel

#: Default length of the windows (s): long enough that the energy changes over a window stand out
#: from the position noise at its two ends, short enough for many windows per parameter
#: (docs/identification.md, the noise sweep).
WINDOW = 0.1
#: The standard deviation of normal samples over their median absolute deviation.
MAD_TO_STD = 1.4826
#: The rules that integrate the work over a window (:func:`windows`).
RULES = ("simpson", "trapezoid")


def energy_regressor(robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike) -> np.ndarray:
    """h (ns, 10 n) with E = h @ pi the kinetic plus potential energy of ``robot`` (pi of eq. 97,
    :func:`pga_dyn.inertial_parameters`) at tree states ``q``, ``qd`` (ns, nq) (module
    docstring)."""
    from pga_dyn.kinematics import check_states, inverse_initial_poses, tree_state
    from pga_dyn.tp_regressor import bar

    q, qd, _, batch = check_states(robot, q, qd, np.zeros_like(np.asarray(qd, dtype=float)))
    if not batch:
        q, qd = q[None], qd[None]
    n = robot.n
    poses, twists = np.empty((len(q), n + 1, 4, 4)), np.empty((len(q), n + 1, 6))
    for s in range(len(q)):
        poses[s], _, twists[s], _ = tree_state(robot, q[s], qd[s])
    D = poses[:, 1:] @ inverse_initial_poses(robot)[1:]  # (ns, n, 4, 4): the tetrahedral points
    omega, v = twists[:, 1:, None, :3], twists[:, 1:, 3:]
    U = np.cross(omega, np.swapaxes(D[..., :3, :], -1, -2))  # (ns, n, 4, 3): u_m = omega x e_m ...
    U[:, :, 3] += v  # ... + w_m v (w = 1 for O only)
    B = 0.5 * U @ np.swapaxes(U, -1, -2)
    c = np.einsum("r,snrm->snm", np.asarray(robot.gravity, dtype=float), D[..., :3, :])
    B[..., :, 3] -= 0.5 * c
    B[..., 3, :] -= 0.5 * c
    h = bar(B).reshape(len(q), 10 * n)
    return h if batch else h[0]


def windows(t: np.ndarray, window: float, rule: str = "simpson", where: str = "arrays") -> tuple:
    """Consecutive windows of ``window`` s over uniformly sampled times ``t`` (ns,), each starting
    where the one before ends, as many as fit in the record: their first samples (m,) and the
    weights (L + 1,) of the samples of a window in the integral int f dt ~ sum_i a_i f_i by
    ``rule``: ``simpson`` (composite Simpson, L even: a = step / 3 (1, 4, 2, 4, ..., 4, 1)) or
    ``trapezoid`` (a = step (1/2, 1, ..., 1, 1/2)). L is the multiple of the step (even for
    Simpson) nearest ``window``."""
    from .signals import is_uniform

    if not (isinstance(window, (int, float)) and np.isfinite(window) and window > 0):
        raise PgaDynError(f"{where}: the energy window must be a positive number of seconds, got {window!r}")
    if rule not in RULES:
        raise PgaDynError(f"{where}: the integration rule must be one of {', '.join(RULES)}, got {rule!r}")
    if not is_uniform(t):
        raise PgaDynError(
            f"{where}: the energy windows need uniformly sampled times; give the data without qdd, "
            "so that it is resampled onto a uniform grid (identification.trajectory)"
        )
    step = (t[-1] - t[0]) / (len(t) - 1)
    if rule == "simpson":
        length = 2 * max(1, int(round(window / step / 2)))
        weights = np.tile([2.0, 4.0], length // 2 + 1)[: length + 1] * step / 3
        weights[0] = weights[-1] = step / 3
    else:
        length = max(1, int(round(window / step)))
        weights = np.full(length + 1, step)
        weights[0] = weights[-1] = step / 2
    if len(t) <= length:
        raise PgaDynError(f"{where}: {len(t)} samples are fewer than one window of {window:g} s ({length + 1} samples)")
    return np.arange(0, len(t) - length, length), weights


@dataclass(frozen=True, eq=False)
class EnergyEquations:
    """The window equations work = W_E beta of a trajectory (module docstring): ``starts`` (m,)
    the first sample of each window, ``weights`` (L + 1,) the integration weights of its samples
    (:func:`windows`), ``work`` (m,) the measured work of the actuators int qd_a^T tau dt,
    ``rows`` (m, p) = W_E, ``noise`` (m, n_a) the coefficients c_kj of the variance of each
    window's work per unit of force noise variance, ``states`` the pga-dyn states of every
    sample."""

    starts: np.ndarray
    weights: np.ndarray
    work: np.ndarray
    rows: np.ndarray
    noise: np.ndarray
    states: object


def energy_equations(
    model: IdentificationModel, data: Trajectory, window: float = WINDOW, rule: str = "simpson"
) -> EnergyEquations:
    """The :class:`EnergyEquations` of ``data`` (a Trajectory with measured tau) for ``model``
    (:class:`~identification.model.IdentificationModel`) on consecutive windows of
    ``window`` s integrated by ``rule`` (:func:`windows`)."""
    if data.tau is None:
        raise PgaDynError(f"{data.source}: no measured tau (columns tau_NAME): no work to identify from")
    states = states_of(model.robot, data)
    qd = data.qd
    starts, weights = windows(data.t, window, rule, data.source)
    samples = starts[:, None] + np.arange(len(weights))  # (m, L + 1)
    at = np.append(starts, samples[-1, -1])  # the window ends
    nphi = model.base.K.shape[1]
    ends = np.empty((len(at), model.K.shape[1]))  # H at the window ends (the integrals: below)
    ends[:, :nphi] = energy_regressor(model.robot, states.q[at], states.qd[at]) @ model.base.link_map
    rows = np.diff(ends, axis=0)
    integrand = {"viscous": qd**2, "coulomb": np.abs(qd), "offset": qd}
    for k, (term, j) in enumerate(model.extras):
        rows[:, nphi + k] = (
            np.diff(0.5 * qd[at, j] ** 2) if term == "armature" else integrand[term][samples, j] @ weights
        )
    work = np.sum(qd * data.tau, axis=1)[samples] @ weights
    noise = np.einsum("i,mij->mj", weights**2, qd[samples] ** 2)
    return EnergyEquations(starts, weights, work, rows[:, model.leading], noise, states)


def force_noise(tau: np.ndarray) -> np.ndarray:
    """The standard deviation (n,) of white noise on uniformly sampled forces ``tau`` (ns, n),
    without a model: the second difference d_s = tau_{s+1} - 2 tau_s + tau_{s-1} of white noise
    sigma has standard deviation sqrt(6) sigma, and that of a smooth force is (2 pi f step)^2 times
    its amplitude (4e-3 at 2 Hz and 200 Hz); sigma = 1.4826 median |d - median d| / sqrt(6), the
    median absolute deviation, so that the steps of Coulomb friction at the reversals (a few
    samples) do not count."""
    d = np.diff(tau, n=2, axis=0)
    return MAD_TO_STD * np.median(np.abs(d - np.median(d, axis=0)), axis=0) / np.sqrt(6.0)


@dataclass(frozen=True, eq=False)
class EnergyEstimate(Estimate):
    """An :class:`~identification.estimation.Estimate` of beta from the work over windows
    (module docstring). The windows are one channel: ``gram`` (1, p, p) is W_w^T W_w of the
    weighted window rows and ``variances`` (1,) the variance factor s^2, so that
    Cov(beta)^-1 = gram[0] / variances[0]; ``sigma`` (n_a,) the force noise of each coordinate
    that the weights and s^2 imply; ``residuals`` (ns, n_a) the force residuals tau - W beta
    with the trajectory's qdd (a diagnostic: the fit does not use them); ``equations`` the
    :class:`EnergyEquations`, ``work_residuals`` (m,) work - W_E beta, ``window`` (s)."""

    equations: EnergyEquations | None = None
    work_residuals: np.ndarray | None = None
    window: float = WINDOW

    def information(self, floor: float = NOISE_FLOOR) -> np.ndarray:
        """A = W_E^T diag(1 / var_k) W_E (p, p) with each coordinate's force noise s sigma_j
        taken at least ``floor`` times its RMS force (as
        :meth:`~identification.estimation.Estimate.information`)."""
        rms2 = np.mean(self.data.tau**2, axis=0)
        variances = self.equations.noise @ np.maximum(self.sigma**2, floor**2 * rms2)
        rows = self.equations.rows
        return rows.T @ (rows / variances[:, None])


@one_blas_thread
def energy_estimate(
    model: IdentificationModel, data: Trajectory, window: float = WINDOW, rule: str = "simpson"
) -> EnergyEstimate:
    """The WLS estimate of beta from the work of ``data``'s forces over windows of ``window`` s
    (module docstring). PgaDynError when there are fewer windows than parameters or they do not
    excite every parameter (the least excited combination named)."""
    eq = energy_equations(model, data, window, rule)
    m, p = eq.rows.shape
    if m <= p:
        raise PgaDynError(
            f"{data.source}: {m} windows of {window:g} s give {m} equations for {p} parameters: "
            f"too few (a longer record or shorter windows)"
        )
    sigma = np.maximum(force_noise(data.tau), NOISE_FLOOR * np.sqrt(np.mean(data.tau**2, axis=0)))
    std = np.sqrt(eq.noise @ sigma**2)
    if np.any(std == 0):
        still = data.t[eq.starts[np.argmin(std)]]
        raise PgaDynError(
            f"{data.source}: the robot stands still over the window from t = {still:g} s: no work to "
            "weigh (crop the record to the motion)"
        )
    Ww = eq.rows / std[:, None]
    beta, inverse, cond = scaled_least_squares(Ww, eq.work / std)
    if beta is None:
        raise PgaDynError(
            f"{data.source}: the windows' work does not excite every parameter (condition number of the "
            f"column-scaled regressor {cond:.2e}); {unexcited(model, Ww)}: use an exciting "
            "trajectory (pga-dyn excite)"
        )
    residual = eq.work - eq.rows @ beta
    scale = float(np.sum((residual / std) ** 2) / (m - p))
    W = model.regressor(eq.states)
    return EnergyEstimate(
        model,
        data,
        beta,
        np.sqrt(np.diag(scale * inverse)),
        scale * inverse,
        (Ww.T @ Ww)[None],
        np.array([scale]),
        "energy",
        np.sqrt(scale) * sigma,
        data.tau - W @ beta,
        cond,
        scale,
        float(eq.states.cond.max()),
        np.ones(data.tau.shape, dtype=bool),
        equations=eq,
        work_residuals=residual,
        window=float(window),
    )


def identify_energy(
    robot: Robot,
    data: Trajectory,
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    window: float = WINDOW,
    model: IdentificationModel | None = None,
    rule: str = "simpson",
) -> EnergyEstimate:
    """Identify ``robot`` from the work of ``data``'s forces (:func:`energy_estimate`): the
    parameters of :func:`~identification.model.identification_model` (``friction``,
    ``armature``; or give ``model``), without accelerations."""
    model = identification_model(robot, friction, armature) if model is None else model
    return energy_estimate(model, data, window, rule)
