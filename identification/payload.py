"""Payloads and drive gains, a stage of the identification (:mod:`identification` lists them
in order): the parameters of a load rigidly attached to a link, and the scale of the drives
that turn motor currents into forces.

**The load regressor.** A payload of link-frame parameters phi_P (10,) (:data:`pga_dyn.conventions.LINK_PARAM_NAMES`
order, in the frame of link L) rigidly attached to L adds its pseudo-inertia, moved to the frame
of the body b that carries L (T the pose of L in that frame, :meth:`pga_dyn.model.Robot.link_pose`),
N_b += T N_P T^T, to that body: phi_b += X_L phi_P with X_L (10, 10) linear. The forces of the
loaded robot are then

    tau_loaded = W(q, qd, qdd) beta + Y_P(q, qd, qdd) phi_P,   Y_P = Y_link[:, :, b] X_L   (ns, n_a, 10),

W beta the unloaded robot (:mod:`identification.model`, friction and armature included) and
Y_link[:, :, b] the ten columns of body b in the link-frame regressor. :func:`identify_payload`
estimates phi_P from a loaded experiment either given the unloaded robot's identified beta (the
rows tau_loaded - W beta = Y_P phi_P) or, ``together``, with beta from an unloaded and a loaded
experiment at once: ``[[W_u, 0], [W_l, Y_P]] [beta; phi_P] = [tau_u; tau_l]``.

**Drive gains.** A drive j whose force is g_j times its measured current i_j (g_j in N m / A,
the torque constant times the gear ratio) gives g_j i_j = W beta (+ Y_P phi_P loaded). Scaling
g, beta and phi_P by one factor leaves this true: the scale of the currents-to-forces map is
unobservable from one robot alone. A payload of known mass m_P fixes it (:func:`drive_gains`):
with phi_P = (m_P, phi_P'), the unknowns (beta, phi_P', g) solve the linear least squares

    W_u beta                - I_u g = 0
    W_l beta + Y_P' phi_P'  - I_l g = -Y_P[:, :, 0] m_P,      g_j > 0,

I the currents of coordinate j in column j, gains bounded below by 0 (:func:`scipy.optimize.lsq_linear`
when the unconstrained solution leaves the bounds; a gain that ends on its bound is an error).
That solution is only the start: the currents, which carry the noise, are in the matrix, and
least squares is biased towards small gains (errors in variables; on a joint whose force is
mostly friction, fc_j sign(qd_j) g_j^-1 is all of i_j that the robot's shared parameters do not
see, and 1 % current noise took the Puma's sixth gain from 5 to 0.015). So the fit is refined
with the currents as the measurements,

    min_{g > 0, x} sum_rows ((i_j - (B x + c) / g_j) / sigma_j)^2,   B x + c the right-hand side above,

by variable projection (Golub, Pereyra): x is the linear least squares at given g, and
log g (so that g > 0) is found by Levenberg-Marquardt (:func:`scipy.optimize.least_squares`);
sigma_j, the noise of the currents of coordinate j, is re-estimated once from the residuals.
The gains' covariance is s^2 (J^T J)^-1 of the projected residual's Jacobian J (in log g).

Every fit here weighs the rows of each coordinate by 1 / sigma_j, its noise standard deviation
estimated from the residuals of an unweighted fit (at least NOISE_FLOOR times the RMS of the
terms of its rows, as for the estimates: noise-free data are fitted to round-off), on the column-scaled matrix, leaves out the rows in the
stiction zones of the model's Coulomb terms (:func:`~identification.model.sliding`), and
reports Cov = s^2 (A_w^T A_w)^-1 with s^2 the weighted residual variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.conventions import LINK_PARAM_NAMES, link_to_pseudo, pseudo_to_link
from pga_dyn.errors import PgaDynError, optional

from .estimation import MIN_RCOND, NOISE_FLOOR
from .model import sliding, states_of
from .physics import mass_properties, violations

if TYPE_CHECKING:
    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .data import Trajectory
    from .estimation import Estimate, FullEstimate
    from .model import IdentificationModel


def payload_map(robot: Robot, link: str) -> tuple:
    """(b, X_L): the index b (0..n-1) of the body carrying ``link`` and X_L (10, 10) with the
    body's link-frame parameters phi_b += X_L phi_P for a payload phi_P in ``link``'s frame
    (module docstring)."""
    try:
        b = robot.body_index(link)
    except PgaDynError:
        raise PgaDynError(
            f"payload: '{robot.source or robot.name}' has no link named '{link}' (bodies: "
            f"{', '.join(robot.body_names)})"
        ) from None
    if b == 0:
        raise PgaDynError(f"payload: link '{link}' is fixed to the base: a payload on it exerts no joint force")
    T = robot.link_pose(link)
    X = np.stack([pseudo_to_link(T @ link_to_pseudo(e) @ T.T) for e in np.eye(10)], axis=1)
    return b - 1, X


def load_regressor(model: IdentificationModel, link: str, states: States) -> np.ndarray:
    """Y_P (ns, n_a, 10): the regressor of a payload's parameters in ``link``'s frame at pga-dyn
    ``states`` of ``model``'s robot (module docstring)."""
    b, X = payload_map(model.robot, link)
    Y = states.regressor() @ model.base.link_map
    return Y[:, :, 10 * b : 10 * b + 10] @ X


def _fit(A, rhs, coordinate, names, where, lower=None):
    """Weighted least squares of the module docstring: x (m,), Cov (m, m), sigma (n_a,), the
    condition number, the residuals. ``coordinate`` (rows,) the coordinate of each row;
    ``lower`` (m,) lower bounds (-inf: none), solved by scipy's lsq_linear."""
    na = int(coordinate.max()) + 1
    norms = np.linalg.norm(A, axis=0)
    if np.any(norms == 0):
        raise PgaDynError(f"{where}: no signal at all for {', '.join(n for n, v in zip(names, norms) if v == 0)}")
    count = np.maximum(np.bincount(coordinate, None, na), 1)

    def solve(w):
        Aw, bw = A * w[coordinate, None], rhs * w[coordinate]
        norms = np.linalg.norm(Aw, axis=0)
        U, s, Vt = np.linalg.svd(Aw / norms, full_matrices=False)
        if s[-1] <= MIN_RCOND * s[0]:
            top = np.argsort(-np.abs(Vt[-1]))[:4]
            raise PgaDynError(
                f"{where}: the data do not determine every unknown (condition number "
                f"{s[0] / s[-1]:.2e}); least excited: " + " ".join(f"{Vt[-1, k]:+.2f}*{names[k]}" for k in top)
            )
        y = Vt.T @ ((U.T @ bw) / s)
        if lower is not None and np.any(y < lower * norms):  # a bound is active: the bounded problem
            scipy_optimize = optional("scipy.optimize", "the drive gains")
            y = scipy_optimize.lsq_linear(Aw / norms, bw, bounds=(lower * norms, np.inf), method="bvls").x
        cov = (Vt.T / s**2) @ Vt / np.outer(norms, norms)
        return y / norms, cov, float(s[0] / s[-1])

    def deviations(x, size):
        e = rhs - A @ x
        dof = np.maximum(count - A.shape[1] / na, 1.0)
        return e, np.maximum(np.sqrt(np.bincount(coordinate, e**2, na) / dof), NOISE_FLOOR * size)

    x, _, _ = solve(np.ones(na))
    size = np.sqrt(np.bincount(coordinate, np.sum((A * x) ** 2, axis=1), na) / count)  # the terms' RMS
    _, sigma = deviations(x, size)
    x, inverse, cond = solve(1.0 / sigma)
    e, sigma = deviations(x, size)
    scale = float(np.sum((e / sigma[coordinate]) ** 2) / max(len(rhs) - A.shape[1], 1))
    return x, scale * inverse, sigma, cond, e


def _rows(model, data, what):
    """The states of ``data``, its rows outside the stiction zones (mask (ns, n_a)) and their
    coordinates."""
    if data.tau is None:
        raise PgaDynError(f"{data.source}: no measured {what} (columns tau_NAME)")
    states = states_of(model.robot, data)
    keep = sliding(model, states.qd_a)
    return states, keep, np.nonzero(keep)[1]


@dataclass(frozen=True, eq=False)
class Payload:
    """The identified parameters of a payload on ``link`` (carried by body ``body``): ``phi``
    (10,) in the link's frame (:data:`~pga_dyn.conventions.LINK_PARAM_NAMES`), ``std`` (10,),
    ``covariance`` (10, 10); ``beta`` (p,) the robot's parameters it was found with (``method``
    ``given``: the unloaded estimate's; ``together``: estimated with it), ``sigma`` (n_a,) the
    loaded forces' noise, ``residual_rms`` (n_a,) on the loaded data, ``cond`` the condition
    number of the column-scaled fit."""

    link: str
    body: str
    phi: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    beta: np.ndarray
    method: str
    sigma: np.ndarray
    residual_rms: np.ndarray
    cond: float
    data: str

    @property
    def mass(self) -> float:
        return float(self.phi[0])

    def report(self) -> dict:
        """A JSON-ready dict: the link, the method, the parameters with their standard deviations,
        the mass, centre of mass and inertia about it, the residual RMS, whether it is physical."""
        m, c, Ic = mass_properties(self.phi)
        return {
            "link": self.link,
            "body": self.body,
            "data": self.data,
            "method": self.method,
            "cond": self.cond,
            "parameters": [
                {"name": n, "value": float(v), "std": float(s)} for n, v, s in zip(LINK_PARAM_NAMES, self.phi, self.std)
            ],
            "mass": m,
            "center_of_mass": c.tolist(),
            "inertia_about_com": Ic.tolist(),
            "residual_rms": self.residual_rms.tolist(),
            "violations": [str(v) for v in violations([self.link], self.phi)],
        }

    def report_text(self) -> list:
        """The lines ``pga-dyn identify --payload`` prints."""
        r = self.report()
        lines = [
            f"Payload on {self.link} (body {self.body}) from {self.data}, {self.method} the robot's parameters; "
            f"condition number {self.cond:.4g}",
            f"  mass {r['mass']:.6g} +- {self.std[0]:.3g} kg, centre of mass "
            + " ".join(f"{v:.4g}" for v in r["center_of_mass"])
            + " m (link frame)",
            "  residual RMS: " + ", ".join(f"{v:.4g}" for v in self.residual_rms),
        ]
        lines += [
            "  inertia about the link frame's origin: "
            + ", ".join(f"{p['name']} {p['value']:.6g} +- {p['std']:.3g}" for p in r["parameters"][4:])
        ]
        if r["violations"]:
            lines.append("  NOT physically consistent: " + "; ".join(r["violations"]))
        return lines


@one_blas_thread
def identify_payload(
    est: Estimate | FullEstimate,
    loaded: Trajectory,
    link: str,
    unloaded: Trajectory | None = None,
    together: bool = False,
) -> Payload:
    """The parameters (10,) of a payload rigidly attached to ``link`` (module docstring) from the
    ``loaded`` experiment (a Trajectory with measured tau).

    Given the unloaded robot's identified parameters ``est`` (an
    :class:`~identification.estimation.Estimate` or a full estimate: its ``model`` and
    ``beta``), the payload is the least-squares fit of the forces the unloaded robot does not
    explain. With ``together``, beta is estimated again, from ``unloaded`` (default
    ``est.data``) and ``loaded`` at once. PgaDynError when the data do not determine the ten
    parameters (e.g. on a link that turns about a fixed axis, where only Izz has a signal)."""
    model = est.model
    b, _ = payload_map(model.robot, link)
    states, keep, j = _rows(model, loaded, "forces")
    Y = load_regressor(model, link, states)[keep]
    names = [f"{n}_payload" for n in LINK_PARAM_NAMES]
    where = f"payload on {link} from {loaded.source}"
    if not together:
        rhs = loaded.tau[keep] - model.regressor(states)[keep] @ est.beta
        x, cov, sigma, cond, e = _fit(Y, rhs, j, names, where)
        phi, beta = x, np.asarray(est.beta, dtype=float)
    else:
        unloaded = getattr(est, "data", None) if unloaded is None else unloaded
        if unloaded is None:
            raise PgaDynError("payload together with the robot's parameters: give the unloaded data (unloaded=)")
        su, ku, ju = _rows(model, unloaded, "forces")
        p = model.num_parameters
        A = np.block([[model.regressor(su)[ku], np.zeros((int(ku.sum()), 10))], [model.regressor(states)[keep], Y]])
        rhs = np.concatenate([unloaded.tau[ku], loaded.tau[keep]])
        x, cov, sigma, cond, e = _fit(A, rhs, np.concatenate([ju, j]), list(model.names) + names, where)
        phi, beta, cov, e = x[p:], x[:p], cov[p:, p:], e[int(ku.sum()) :]
    rms = np.sqrt(np.bincount(j, e**2, len(model.robot.actuated)) / np.maximum(np.bincount(j), 1))
    return Payload(
        link,
        model.robot.body_names[b],
        phi,
        np.sqrt(np.diag(cov)),
        cov,
        beta,
        "together with" if together else "given",
        sigma,
        rms,
        cond,
        loaded.source,
    )


@dataclass(frozen=True, eq=False)
class DriveGains:
    """Drive gains ``gains`` (n_a,) (force per unit of current) of the coordinates ``names`` with
    ``std`` (n_a,) and ``covariance`` (n_a, n_a), found with the robot's parameters ``beta`` (p,)
    (in force units) and the payload's ``payload`` (10,) (its mass the one given); ``start`` (n_a,)
    the gains of the linear least squares the fit starts from; ``sigma`` (n_a,) the currents'
    noise."""

    names: tuple
    gains: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    beta: np.ndarray
    payload: np.ndarray
    start: np.ndarray
    sigma: np.ndarray

    def report(self) -> dict:
        """A JSON-ready dict: the gains with their standard deviations, the payload, the start
        and the current noise."""
        return {
            "gains": [
                {"coordinate": n, "value": float(g), "std": float(s)}
                for n, g, s in zip(self.names, self.gains, self.std)
            ],
            "payload": dict(zip(LINK_PARAM_NAMES, self.payload.tolist())),
            "start": self.start.tolist(),
            "current_noise": self.sigma.tolist(),
        }


@one_blas_thread
def drive_gains(
    model: IdentificationModel, unloaded: Trajectory, loaded: Trajectory, link: str, payload_mass: float
) -> DriveGains:
    """The drive gains g (n_a,) of ``model``'s robot (an
    :class:`~identification.model.IdentificationModel`) from an ``unloaded`` and a
    ``loaded`` experiment whose ``tau`` holds the measured currents (Trajectories), the payload
    of known mass ``payload_mass`` (kg) rigidly attached to ``link`` (module docstring).
    PgaDynError when the data do not determine the unknowns or the linear start puts a gain at 0."""
    scipy_optimize = optional("scipy.optimize", "the drive gains")
    if not (isinstance(payload_mass, (int, float)) and np.isfinite(payload_mass) and payload_mass > 0):
        raise PgaDynError(f"drive gains: the payload mass must be a positive number of kg, got {payload_mass!r}")
    robot, p, na = model.robot, model.num_parameters, len(model.robot.actuated)
    su, ku, ju = _rows(model, unloaded, "currents")
    sl, kl, jl = _rows(model, loaded, "currents")
    Y = load_regressor(model, link, sl)[kl]
    # g_j i_j = B x + c, x = (beta, the payload without its mass)
    B = np.block([[model.regressor(su)[ku], np.zeros((len(ju), 9))], [model.regressor(sl)[kl], Y[:, 1:]]])
    c = np.concatenate([np.zeros(len(ju)), Y[:, 0] * payload_mass])
    current, j = np.concatenate([unloaded.tau[ku], loaded.tau[kl]]), np.concatenate([ju, jl])
    I = np.zeros((len(j), na))
    I[np.arange(len(j)), j] = current
    names = (
        list(model.names) + [f"{n}_payload" for n in LINK_PARAM_NAMES[1:]] + [f"g_{n}" for n in robot.actuated_names]
    )
    lower = np.concatenate([np.full(p + 9, -np.inf), np.zeros(na)])
    x, _, _, _, _ = _fit(np.hstack([B, -I]), -c, j, names, "drive gains", lower)
    start = x[p + 9 :]
    if np.any(start <= 0):
        zero = [n for n, g in zip(robot.actuated_names, start) if g <= 0]
        raise PgaDynError(
            f"drive gains: the linear least squares puts the gains of {zero} at their bound 0: the "
            "experiments do not determine them (does the payload change their forces?)"
        )
    count = np.bincount(j, None, na)
    floor = NOISE_FLOOR * np.sqrt(np.bincount(j, current**2, na) / count)
    norms = np.linalg.norm(B, axis=0)

    def inner(log_gains, sigma):
        """x and the weighted current residuals (i - (B x + c) / g_j) / sigma_j at the gains."""
        w = 1.0 / (np.exp(log_gains)[j] * sigma[j])
        Bw = B * (w[:, None] / norms)
        y = np.linalg.lstsq(Bw, current / sigma[j] - c * w, rcond=None)[0]
        return y / norms, current / sigma[j] - Bw @ y - c * w

    def noise(residual, sigma):
        return np.maximum(np.sqrt(np.bincount(j, (residual * sigma[j]) ** 2, na) / count), floor)

    sigma = noise((current - (B @ x[: p + 9] + c) / start[j]) / floor[j], floor)
    log_gains = np.log(start)
    for _ in range(2):  # the currents' noise re-estimated once from the fit's residuals
        solution = scipy_optimize.least_squares(
            lambda v: inner(v, sigma)[1], log_gains, method="lm", x_scale=1.0, xtol=1e-15, ftol=1e-15, gtol=1e-15
        )
        log_gains = solution.x
        x, residual = inner(log_gains, sigma)
        sigma = noise(residual, sigma)
    x, residual = inner(log_gains, sigma)
    scale = float(residual @ residual / max(len(j) - p - 9 - na, 1))
    gains = np.exp(log_gains)
    cov = scale * np.linalg.inv(solution.jac.T @ solution.jac) * np.outer(gains, gains)
    return DriveGains(
        tuple(robot.actuated_names),
        gains,
        np.sqrt(np.diag(cov)),
        cov,
        x[:p],
        np.concatenate([[payload_mass], x[p:]]),
        start,
        sigma,
    )
