"""Estimation, a stage of the identification (:mod:`identification` lists them in order):
least-squares and Bayesian estimates of the identifiable parameters beta = K theta
(:mod:`identification.model`) from measured generalized forces, and the priors.

Stack the samples: W (ns n_a, p) the regressor of beta, tau (ns n_a). Then

* **OLS**: beta = argmin ||W beta - tau||^2, by QR of the column-scaled W. The rows of each
  actuated coordinate j are first reduced once to the triangular factor of their QR,
  [W_j, tau_j] = Q_j [R_j, z_j] (:func:`reduced_rows`): ||W_j beta - tau_j||^2 =
  ||R_j beta - z_j||^2 + const and W_j^T W_j = R_j^T R_j, so every least-squares fit below,
  with any weight per coordinate, is solved on the n_a (p + 1) rows [w_j R_j] instead of the
  ns n_a rows of W (the same solution, column norms and singular values).
* **WLS** (Gautier 1997): the noise variance of each actuated coordinate j from
  the OLS residuals, sigma_j^2 = ||e_j||^2 / (ns - p / n_a); the rows of coordinate j divided
  by sigma_j, taken at most :data:`WEIGHT_CEILING` times the coordinate's RMS force (a
  coordinate the model misfits is not traded away, :func:`wls_weights`); least squares again,
  sigma_j re-estimated from these residuals until it settles (:data:`WLS_RTOL`).
* **Standard deviations**: with W_w the weighted regressor and s^2 = ||e_w||^2 / (ns n_a - p)
  (the variance factor, about 1 when the weights are right), Cov(beta) = s^2 (W_w^T W_w)^-1 if
  the residuals are white and independent. They are not when qd, qdd come from filtered
  positions (the filter's error is low-pass) or the model misses a smooth effect: then that
  formula is too small (7 times on MuJoCo logs). The covariance is therefore the
  heteroskedasticity and autocorrelation consistent (HAC) one of Newey and West (1987),

      Cov(beta) = (W_w^T W_w)^-1 S (W_w^T W_w)^-1 * rows / (rows - p),
      S = sum_{|l| <= L} (1 - |l| / (L + 1)) sum_t g_t g_{t-l}^T,   g_t = sum_j w_tj e_tj (p,),

  w_tj the weighted regressor row of coordinate j at sample t and e_tj its weighted residual
  (0 for the rows left out): the Bartlett kernel's sum equals sum_t M_t M_t^T / (L + 1) over
  the zero-padded moving sums M_t = g_t + ... + g_{t+L}, one pass (:func:`hac_scores`). White
  residuals give S ~ s^2 W_w^T W_w, the former formula. The bandwidth L is
  :data:`LAG_MULTIPLE` times the residuals' correlation length (:func:`correlation_length`: the
  first lag at which the autocorrelation of every coordinate's weighted residuals is inside the
  white-noise band +-2 / sqrt(ns)), at most ns / :data:`MIN_BLOCKS`. The relative standard
  deviation of beta_k is sigma_k / |beta_k|.
* **MAP** with a Gaussian prior theta ~ N(theta_0, diag(sigma_0^2)) on the full parameters
  theta = (phi, x) (Bayesian identification; Martinez, Tonneau, Mastalli): the data enter
  through beta only, and the likelihood of beta is N(beta_hat, Cov(beta)), so with the
  information A = Cov(beta)^-1

      theta_MAP = argmin (K theta - beta_hat)^T A (K theta - beta_hat) + ||(theta - theta_0) / sigma_0||^2
                = (K^T A K + P_0)^-1 (K^T A beta_hat + P_0 theta_0),   P_0 = diag(sigma_0^-2),

  with posterior covariance (K^T A K + P_0)^-1. The data decide the identifiable
  combinations; the prior, the directions the data do not see. In A the noise standard
  deviation of each coordinate is at least :data:`NOISE_FLOOR` times its RMS force (active for
  noise-free simulated data only).
* **Physically consistent** (:mod:`identification.consistency`): the same objective with
  every pseudo-inertia positive semidefinite.

The default prior (:func:`default_prior`) is the model file's parameters with standard
deviation ``relative`` times max(|theta_0|, a floor per kind of parameter) for the inertial
parameters, and for an extra term the value that alone would give ten times the measured RMS
force of its coordinate (a weak prior around 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .model import (
    STICTION_ZONE,
    STRIBECK_TERMS,
    IdentificationModel,
    extra_column,
    identification_model,
    sign_speeds,
    sliding,
    state_rows,
    states_of,
)
from .physics import pseudo_inertia_eigenvalues
from .signals import advance

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .data import Trajectory

#: Reciprocal condition (smallest over largest singular value of the column-scaled stacked
#: regressor) below which the data do not determine beta.
MIN_RCOND = 1e-10
#: The weights of WLS are re-estimated from its own residuals until they change by less than
#: WLS_RTOL (at most WLS_ITERATIONS fits): the OLS residuals of a coordinate with little noise
#: carry some of the noise of the others.
WLS_ITERATIONS = 10
WLS_RTOL = 1e-3
#: The WLS weight of a coordinate is at least 1 / (WEIGHT_CEILING x its RMS force) (:func:`wls_weights`).
WEIGHT_CEILING = 0.5
#: At most RAISES doublings of the weight of a coordinate that WLS fits worse than zero.
RAISES = 20
#: The MAP and consistent estimates weigh the data with noise standard deviations of at least
#: NOISE_FLOOR times the RMS force of each coordinate: a closer fit (noise-free simulated data)
#: is round-off, and an information 1e20 times the prior's would leave the prior nothing to
#: decide in floating point (and the convex solver nothing it can solve).
NOISE_FLOOR = 1e-6
#: The force channel's delay behind the positions is searched within +-MAX_DELAY s.
MAX_DELAY = 0.05
#: The Stribeck speed of a coordinate is searched within these fractions of its largest speed in
#: the data (:func:`stribeck_estimate`), first on a log grid of STRIBECK_GRID common fractions.
STRIBECK_RANGE = (1e-3, 1.0)
STRIBECK_GRID = 31
#: The delay is fitted on at most this many samples, evenly spread over the record (the lags
#: stay on the full record's grid; the regressor is the cost): on 20,000 samples of a 6-axis arm
#: at 1 kHz, 0.3 s instead of 2 s, and the same delay to 0.1 ms (MuJoCo logs).
DELAY_SAMPLES = 5000
#: The HAC bandwidth is this multiple of the residuals' correlation length: the Bartlett kernel
#: weighs lag l by 1 - l / (L + 1), so L must reach well past the correlated lags (on MuJoCo logs
#: of a UR5, L from 2 to 8 times the correlation length give median |error| / std within 10 %).
LAG_MULTIPLE = 4
#: ... and at most the number of samples over MIN_BLOCKS (a longer window has too few
#: independent blocks to estimate S: the sum of the residual scores is 0 for least squares).
MIN_BLOCKS = 10
#: Kinds of link-frame parameters that share a prior floor: masses, first moments, inertias.
KIND_OF = (0, 1, 1, 1, 2, 2, 2, 2, 2, 2)
#: The prior floor of a kind: this fraction of the largest |theta_0| of that kind in the robot.
PRIOR_FLOOR = 0.1


@dataclass(frozen=True, eq=False)
class Estimate:
    """An estimate of beta from one trajectory of measurements.

    ``beta``, ``std`` (p,), ``covariance`` (p, p); ``gram`` (n_a, p, p) the Gram matrices
    W_j^T W_j of the rows of each actuated coordinate and ``variances`` (n_a,) the noise
    variances they are weighted with, Cov(beta)^-1 = sum_j W_j^T W_j / variances_j (``ols`` or ``wls``);
    ``sigma`` (n_a,) the noise standard deviation of each actuated coordinate estimated from
    the residuals; ``residuals`` (ns, n_a) = tau - W beta; ``cond`` the condition number of
    the column-scaled stacked W; ``scale`` the residual variance factor s^2 (1 for
    well-chosen weights); ``used`` (ns, n_a) bool: the rows in the fit (outside the stiction
    zones); ``stribeck_speed_std`` (n_a,): the standard deviations of the Stribeck speeds
    ``model.stribeck_speed`` fitted by :func:`stribeck_estimate` (NaN for a coordinate without
    them; None for a linear model); ``lags`` the HAC bandwidth L of the covariance (0: white residuals assumed) and
    ``white_std`` (p,) the standard deviations that white residuals would give, sqrt(diag(s^2
    (W_w^T W_w)^-1)) (None: ``std`` are those); ``targets`` (ns, m): the right-hand side fitted
    when it is not ``data.tau`` (the rows of a sensing case of a legged robot,
    :func:`identification.legged.sensing_rows`; ``gram``, ``variances``, ``sigma``, ``residuals``
    and ``used`` are then per row of it); all three keyword-only."""

    model: IdentificationModel
    data: object
    beta: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    gram: np.ndarray
    variances: np.ndarray
    method: str
    sigma: np.ndarray
    residuals: np.ndarray
    cond: float
    scale: float
    max_cond_jp: float = field(default=1.0)
    used: np.ndarray | None = None
    stribeck_speed_std: np.ndarray | None = None
    lags: int = field(default=0, kw_only=True)
    white_std: np.ndarray | None = field(default=None, kw_only=True)
    targets: np.ndarray | None = field(default=None, kw_only=True)

    @property
    def fitted(self) -> np.ndarray:
        """The right-hand side (ns, m) the estimate fitted: ``targets``, or the measured ``data.tau``."""
        return self.data.tau if self.targets is None else self.targets

    @property
    def names(self) -> tuple:
        return self.model.names

    def information(self, floor: float = NOISE_FLOOR) -> np.ndarray:
        """A = sum_j W_j^T W_j / v_j (p, p), the information of beta, with each coordinate's noise
        variance v_j taken at least (``floor`` times the RMS of its forces)^2 (module docstring)."""
        rms2 = np.mean(self.fitted**2, axis=0)
        v = np.maximum(self.variances, floor**2 * rms2)
        return np.einsum("jkl,j->kl", self.gram, 1.0 / v)

    @property
    def relative_std(self) -> np.ndarray:
        """sigma_k / |beta_k| (inf for beta_k = 0)."""
        with np.errstate(divide="ignore"):
            return np.where(self.beta != 0, self.std / np.abs(self.beta), np.inf)

    def predict(self, data: Trajectory, regressor: np.ndarray | None = None) -> np.ndarray:
        """The forces W beta (ns, n_a) predicted along ``data`` (a Trajectory of the same robot;
        ``regressor`` its W (ns, n_a, p) when the caller has it); along the identification data,
        tau - residuals (their regressor is not computed again)."""
        if data is self.data and self.targets is None:
            return data.tau - self.residuals
        if self.targets is not None:
            raise PgaDynError(
                "the estimate fitted the rows of a sensing case: predict with identification.legged.predict_record"
            )
        return predict(self.model, self.beta, data, regressor)

    def rms(self, data: Trajectory | None = None, regressor: np.ndarray | None = None) -> np.ndarray:
        """RMS (n_a,) of tau - W beta on ``data`` (default: the identification data; ``regressor``
        as in :meth:`predict`)."""
        if data is None:
            return np.sqrt(np.mean(self.residuals**2, axis=0))
        if data.tau is None:
            raise PgaDynError(f"{data.source}: no measured tau to compare with")
        return np.sqrt(np.mean((data.tau - self.predict(data, regressor)) ** 2, axis=0))


def predict(
    model: IdentificationModel, beta: npt.ArrayLike, data: Trajectory, regressor: np.ndarray | None = None
) -> np.ndarray:
    """W beta (ns, n_a) along ``data``; ``regressor``: its W (ns, n_a, p) when the caller has it
    (else from the states of ``data``, :func:`~.model.states_of`)."""
    W = model.regressor(states_of(model.robot, data)) if regressor is None else regressor
    return W @ np.asarray(beta, dtype=float)


def wls_weights(sigma: np.ndarray, rms: np.ndarray) -> np.ndarray:
    """The WLS weights 1 / sigma_j (n_a,) of the coordinates' residual standard deviations
    ``sigma``, each sigma_j at most :data:`WEIGHT_CEILING` times the RMS force ``rms`` of its
    coordinate: a coordinate the model fits badly keeps a weight that stops the fit from trading
    it away (its RRE past 100 %, worse than predicting zero)."""
    return 1.0 / np.minimum(sigma, WEIGHT_CEILING * rms)


def scaled_least_squares(W: np.ndarray, tau: np.ndarray) -> tuple:
    """Least squares on the column-scaled W (rows, p): beta (p,), (W^T W)^-1 (p, p) and the
    condition number of the column-scaled W; (None, None, cond) when it is rank-deficient
    (reciprocal condition below :data:`MIN_RCOND`)."""
    norms = np.linalg.norm(W, axis=0)
    if np.any(norms == 0):
        return None, None, np.inf
    Q, R = np.linalg.qr(W / norms)
    s = np.linalg.svd(R, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else np.inf
    if s[-1] <= MIN_RCOND * s[0]:
        return None, None, cond
    Rinv = np.linalg.inv(R)
    beta = (Rinv @ (Q.T @ tau)) / norms
    inverse = (Rinv @ Rinv.T) / np.outer(norms, norms)
    return beta, inverse, cond


def reduced_rows(W: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each coordinate reduced to the triangular factor of their QR (module
    docstring): W (rows, p) and tau (rows,) of one coordinate in, R (k, p) and z (k,) out, with
    k = min(rows, p + 1), [W, tau] = Q [R, z], Q^T Q = I: R^T R = W^T W, R^T z = W^T tau."""
    Rz = np.linalg.qr(np.column_stack([W, tau]), mode="r")
    return Rz[:, :-1], Rz[:, -1]


def autocorrelation(x: np.ndarray, lags: int) -> np.ndarray:
    """The sample autocorrelation r_k = sum_t y_t y_{t+k} / sum_t y_t^2 of each column of ``x``
    (ns, n) about its mean, y = x - mean, for k = 0 .. ``lags`` (by FFT): (lags + 1, n). A
    column of zeros has r = 0."""
    y = x - x.mean(axis=0)
    ns = len(y)
    size = 1 << int(np.ceil(np.log2(2 * ns)))
    F = np.fft.rfft(y, size, axis=0)
    r = np.fft.irfft(F * np.conj(F), size, axis=0)[: lags + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r[:1] > 0, r / r[:1], 0.0)


def correlation_length(e: np.ndarray) -> np.ndarray:
    """Per column of ``e`` (ns, n), the first lag k >= 1 at which the autocorrelation
    (:func:`autocorrelation`) lies inside the white-noise band +-2 / sqrt(ns) (1 for white
    residuals), searched up to ns / :data:`MIN_BLOCKS`: (n,) int."""
    ns = len(e)
    most = max(ns // MIN_BLOCKS, 1)
    inside = np.abs(autocorrelation(e, most)[1:]) <= 2 / np.sqrt(ns)
    return np.where(inside.any(axis=0), np.argmax(inside, axis=0) + 1, most)


def hac_scores(g: np.ndarray, lags: int) -> np.ndarray:
    """S (p, p) of the module docstring from the scores ``g`` (ns, p) with Bartlett bandwidth
    ``lags`` = L: sum_t M_t M_t^T / (L + 1), M_t the sum of g over samples t .. t + L of the
    zero-padded record (t from -L to ns - 1)."""
    c = np.vstack([np.zeros((lags + 1, g.shape[1])), np.cumsum(g, axis=0)])
    c = np.vstack([c, np.repeat(c[-1:], lags, axis=0)])
    M = c[lags + 1 :] - c[: -lags - 1]
    return M.T @ M / (lags + 1)


@one_blas_thread
def estimate(
    model: IdentificationModel,
    data: Trajectory,
    weighted: bool = True,
    stiction: float = STICTION_ZONE,
    lags: int | None = None,
    *,
    states: States | None = None,
    regressor: np.ndarray | None = None,
    targets: np.ndarray | None = None,
) -> Estimate:
    """OLS or (``weighted``) WLS estimate of beta from ``data``, a Trajectory with measured tau
    (see the module docstring). The rows of a coordinate with a Coulomb term at speeds inside
    its stiction zone (below ``stiction`` times its largest speed in the data,
    :func:`~identification.model.sliding`) are left out. The covariance is the HAC one with
    bandwidth ``lags`` (None: from the residuals' correlation length; 0: white residuals, s^2
    (W_w^T W_w)^-1). ``states`` (:class:`pga_dyn.States` of ``data``) and ``regressor`` (W
    (ns, n_a, p) at them), when the caller has them; ``targets`` (ns, m): the right-hand side of
    ``regressor`` (ns, m, p) when its rows are not the actuated coordinates' forces ``data.tau``
    (a legged robot's sensing case, :func:`identification.legged.sensing_rows`: rows of another
    number m leave no row out). PgaDynError when the data have fewer rows
    than parameters, or do not excite
    every parameter (the column-scaled stacked regressor is rank-deficient: the parameters it
    cannot tell apart are named)."""
    if data.tau is None and targets is None:
        raise PgaDynError(f"{data.source}: no measured tau (columns tau_NAME): nothing to identify from")
    tau = data.tau if targets is None else targets
    if targets is not None and regressor is None:
        raise PgaDynError("targets are the right-hand side of a regressor: give both")
    robot, p = model.robot, model.num_parameters
    ns, na = tau.shape
    model = sign_speeds(model, data)
    states = states_of(robot, data) if states is None else states
    keep = sliding(model, states.qd_a, stiction, states.qd)
    if keep.shape != tau.shape:
        keep = np.ones(tau.shape, dtype=bool)
    rows = keep.sum(axis=0)
    if rows.sum() <= p:
        outside = "" if rows.sum() == ns * na else " outside the stiction zones"
        raise PgaDynError(
            f"{data.source}: {ns} samples of {na} forces give {rows.sum()} equations{outside} for {p} "
            "parameters: too few samples"
        )
    Wt = model.regressor(states) if regressor is None else regressor
    blocks = [reduced_rows(Wt[keep[:, j], j], tau[keep[:, j], j]) for j in range(na)]
    R = np.concatenate([b[0] for b in blocks])
    z = np.concatenate([b[1] for b in blocks])
    jk = np.concatenate([np.full(len(b[1]), j) for j, b in enumerate(blocks)])

    def solve(weights):
        w = weights[jk]
        beta, inverse, cond = scaled_least_squares(R * w[:, None], z * w)
        if beta is None:
            raise PgaDynError(
                f"{data.source}: the data do not excite every parameter (condition number of the "
                f"column-scaled regressor {cond:.2e}); {unexcited(model, R * w[:, None])}: use an "
                f"exciting trajectory (pga-dyn excite)"
            )
        return beta, inverse, cond

    def deviations(beta):
        e = np.where(keep, tau - Wt @ beta, 0.0)
        return e, np.sqrt(np.sum(e**2, axis=0) / np.maximum(rows - p / na, 1.0))

    rms = np.sqrt(np.sum(np.where(keep, tau, 0.0) ** 2, axis=0) / np.maximum(rows, 1))
    beta, inverse, cond = solve(np.ones(na))
    residuals, sigma = deviations(beta)
    method, weights = "ols", np.ones(na)
    for _ in range(WLS_ITERATIONS if weighted else 0):
        if np.any(sigma == 0):
            raise PgaDynError(
                f"{data.source}: the forces of {[data.names[j] for j in np.flatnonzero(sigma == 0)]} "
                "are fitted exactly: the noise cannot be weighted (use ordinary least squares)"
            )
        method, weights = "wls", wls_weights(sigma, rms)
        beta, inverse, cond = solve(weights)
        previous = sigma
        residuals, sigma = deviations(beta)
        if np.max(np.abs(sigma - previous) / previous) < WLS_RTOL:
            break
    # a coordinate fitted worse than by zero gets its weight doubled until it is not: with its
    # weight dominant the fit tends to its own least squares, whose residual is below ||tau_j||
    for _ in range(RAISES if weighted else 0):
        worse = np.sum(residuals**2, axis=0) >= np.sum(np.where(keep, tau, 0.0) ** 2, axis=0)
        if not worse.any():
            break
        weights = np.where(worse, 2 * weights, weights)
        beta, inverse, cond = solve(weights)
        residuals, sigma = deviations(beta)
    scale = float(np.sum((residuals * weights) ** 2) / (rows.sum() - p))
    gram = np.stack([b[0].T @ b[0] for b in blocks])
    white = scale * inverse
    if lags is None:
        lags = LAG_MULTIPLE * int(correlation_length(residuals * weights).max())
    if not (isinstance(lags, (int, np.integer)) and lags >= 0):
        raise PgaDynError(f"lags: the HAC bandwidth is a non-negative number of samples, got {lags!r}")
    lags = int(min(lags, ns // MIN_BLOCKS))
    covariance = white
    if lags:
        g = np.einsum("tjp,tj->tp", Wt, residuals * weights**2)  # residuals are 0 on the rows left out
        covariance = inverse @ hac_scores(g, lags) @ inverse * (rows.sum() / (rows.sum() - p))
        covariance = 0.5 * (covariance + covariance.T)
    return Estimate(
        model,
        data,
        beta,
        np.sqrt(np.diag(covariance)),
        covariance,
        gram,
        scale / weights**2,
        method,
        sigma,
        tau - Wt @ beta,
        cond,
        scale,
        float(states.cond.max()),
        keep,
        lags=lags,
        white_std=np.sqrt(np.diag(white)),
        targets=targets,
    )


@one_blas_thread
def force_delay(
    model: IdentificationModel,
    data: Trajectory,
    max_delay: float = MAX_DELAY,
    stiction: float = STICTION_ZONE,
    samples: int = DELAY_SAMPLES,
    states: States | None = None,
) -> tuple:
    """The delay d (s) of the force channel behind the positions, tau_measured(t) = tau(t - d),
    that fits ``data`` best: for d on the grid of the median sample step in [-``max_delay``,
    ``max_delay``], the forces advanced by d (:func:`.signals.advance`) are fitted by least
    squares (each coordinate's rows scaled by its RMS force, outside the stiction zones as in
    :func:`estimate`) on the samples that every shift keeps (at most ``samples`` of them, evenly
    spread: the regressor is the cost), and the minimum of the residual sum of squares is refined
    by the parabola through it and its two neighbours; ``states`` the states of ``data`` when the
    caller has them (those samples' rows are used, :func:`~.model.state_rows`). Returns (d,
    delays (k,), residual sums (k,)). PgaDynError when the minimum lies at the end of the range."""
    if data.tau is None:
        raise PgaDynError(f"{data.source}: no measured tau: no delay to estimate")
    step = float(np.median(np.diff(data.t)))
    most = max(int(np.floor(max_delay / step + 1e-9)), 1)  # never beyond the range: a reported delay lies inside it
    lags = np.arange(-most, most + 1)
    inner = (data.t - lags[0] * step <= data.t[-1]) & (data.t + lags[0] * step >= data.t[0])
    rows = np.flatnonzero(inner)
    rows = rows[:: int(np.ceil(len(rows) / samples))]
    sample = replace(
        data,
        t=data.t[rows],
        q=data.q[rows],
        qd=data.qd[rows],
        qdd=data.qdd[rows],
        tau=data.tau[rows],
        breaks=(),
        passive={name: x[rows] for name, x in data.passive.items()},
    )
    states = states_of(model.robot, sample) if states is None else state_rows(states, rows)
    scale = (1.0 / np.sqrt(np.mean(data.tau**2, axis=0))) * sliding(model, states.qd_a, stiction, states.qd)
    A = (model.regressor(states) * scale[:, :, None]).reshape(-1, model.num_parameters)
    Q, _ = np.linalg.qr(A)
    ssr = np.empty(len(lags))
    for k, lag in enumerate(lags):
        shifted, inside = advance(data.t, data.tau, lag * step)
        b = (shifted[(np.cumsum(inside) - 1)[rows]] * scale).reshape(-1)
        ssr[k] = b @ b - np.sum((Q.T @ b) ** 2)
    best = int(np.argmin(ssr))
    if best in (0, len(lags) - 1):
        raise PgaDynError(
            f"{data.source}: the forces fit best at a delay of {lags[best] * step:+.4g} s, the end of the "
            f"searched range +-{max_delay:g} s: the force and position channels are not aligned "
            "within it (widen max_delay, or check the data)"
        )
    a, b0, c = ssr[best - 1 : best + 2]
    offset = 0.5 * (a - c) / (a - 2 * b0 + c) if a - 2 * b0 + c > 0 else 0.0
    return float((lags[best] + offset) * step), lags * step, ssr


@one_blas_thread
def stribeck_estimate(
    model: IdentificationModel, data: Trajectory, weighted: bool = True, stiction: float = STICTION_ZONE
) -> Estimate:
    """The estimate of beta and of the Stribeck speeds v_s of ``model`` (one per actuated
    coordinate with the Stribeck terms, docs/identification.md "Friction") from ``data``: a
    *nonlinear* least-squares problem, since v_s enters the columns s (1 - e), s e with
    e = exp(-(qd / v_s)^2). Solved by variable projection (Golub and Pereyra 1973): for given
    v_s the model is linear, so beta is eliminated and the residual r(v_s) = (1 - P(v_s)) tau_w
    (P the projector onto the columns of W(v_s), the rows of :func:`estimate` scaled by each
    coordinate's RMS force, as in :func:`force_delay`: weights from a fit at other speeds would
    carry its misfit) is minimised over log v_s within
    :data:`STRIBECK_RANGE` times each coordinate's largest speed in the data: from the best
    common fraction on a log grid (:data:`STRIBECK_GRID`), by
    ``scipy.optimize.least_squares`` (trust-region reflective). The estimate is then
    :func:`estimate` at the fitted speeds (``est.model.stribeck_speed``), its covariance that of
    (beta, v_s) together: Cov = s^2 (J^T J)^-1 with J = [W_w, d(W_w beta)/dv_s] the Jacobian of
    the weighted residual at the solution and s^2 = ||e_w||^2 / (rows - p - m), m the number of
    speeds, so ``std`` of beta includes the uncertainty of v_s and ``stribeck_speed_std`` is that
    of v_s. PgaDynError when the model has no Stribeck term, or a fitted speed lies at an end of
    its range (the data do not determine it)."""
    from dataclasses import replace

    from scipy.optimize import least_squares

    nphi, p = model.base.K.shape[1], model.num_parameters
    cols = [
        (c, *model.extras[k - nphi])
        for c, k in enumerate(model.leading)
        if k >= nphi and model.extras[k - nphi][0] in STRIBECK_TERMS
    ]
    if not cols:
        raise PgaDynError(f"{model.robot.name}: the model has no Stribeck term to fit (friction=('stribeck', ...))")
    coords = sorted({j for _, _, j in cols})
    if data.tau is None:
        raise PgaDynError(f"{data.source}: no measured tau (columns tau_NAME): nothing to identify from")
    states = states_of(model.robot, data)
    sample, row = np.nonzero(sliding(model, states.qd_a, stiction, states.qd))
    qd = states.qd_a[sample]

    def weighted_rows(model, weights):
        w = weights[row]
        return w, model.regressor(states)[sample, row] * w[:, None], data.tau[sample, row] * w

    w, W, tau = weighted_rows(model, 1.0 / np.sqrt(np.mean(data.tau**2, axis=0)))
    Q = np.linalg.qr(W[:, [c for c in range(p) if c not in {c for c, _, _ in cols}]])[0]
    r0 = tau - Q @ (Q.T @ tau)

    def residual(x):
        speed = dict(zip(coords, np.exp(x)))
        B = np.stack(
            [np.where(row == j, extra_column(term, qd[:, j], None, speed[j]), 0.0) * w for _, term, j in cols], axis=1
        )
        B -= Q @ (Q.T @ B)
        return r0 - B @ np.linalg.lstsq(B, r0, rcond=None)[0]

    top = np.abs(states.qd_a[:, coords]).max(axis=0)
    lower, upper = np.log(STRIBECK_RANGE[0] * top), np.log(STRIBECK_RANGE[1] * top)
    grid = np.log(np.geomspace(*STRIBECK_RANGE, STRIBECK_GRID))
    start = np.log(top) + grid[int(np.argmin([np.sum(residual(np.log(top) + g) ** 2) for g in grid]))]
    fit = least_squares(
        residual,
        np.clip(start, lower + 1e-9, upper - 1e-9),
        bounds=(lower, upper),
        method="trf",
        jac="3-point",
        xtol=1e-12,
        ftol=1e-12,
        gtol=1e-12,
    )
    ends = [
        model.robot.actuated_names[j] for j, x, a, b in zip(coords, fit.x, lower, upper) if min(x - a, b - x) < 1e-3
    ]
    if ends:
        raise PgaDynError(
            f"{data.source}: the Stribeck speed of {ends} fits best at an end of its range "
            f"{STRIBECK_RANGE[0]:g}-{STRIBECK_RANGE[1]:g} times the largest speed: the data do not "
            "determine it (more samples at low speed, or another friction model)"
        )
    speeds = np.array(model.stribeck_speed, dtype=float)
    speeds[coords] = np.exp(fit.x)
    speeds.setflags(write=False)
    est = estimate(replace(model, stribeck_speed=speeds), data, weighted, stiction)
    w, W, tau = weighted_rows(est.model, np.sqrt(est.scale / est.variances))
    # d(W beta)/dv_s of coordinate j: the Stribeck columns' derivatives, de/dv_s = 2 qd^2 / v_s^3 e
    J = np.zeros((len(row), len(coords)))
    for c, term, j in cols:
        v, e = speeds[j], np.exp(-((qd[:, j] / speeds[j]) ** 2))
        de = np.where(row == j, np.sign(qd[:, j]) * 2 * qd[:, j] ** 2 / v**3 * e, 0.0)
        J[:, coords.index(j)] += est.beta[c] * (de if term == "stribeck-static" else -de) * w
    J = np.concatenate([W, J], axis=1)
    e_w = tau - W @ est.beta
    scale = float(e_w @ e_w / (len(row) - p - len(coords)))
    norms = np.linalg.norm(J, axis=0)
    Rinv = np.linalg.inv(np.linalg.qr(J / norms, mode="r"))
    cov = scale * (Rinv @ Rinv.T) / np.outer(norms, norms)
    speed_std = np.full(len(model.robot.actuated), np.nan)
    speed_std[coords] = np.sqrt(np.diag(cov)[p:])
    return replace(est, std=np.sqrt(np.diag(cov)[:p]), covariance=cov[:p, :p], stribeck_speed_std=speed_std)


def unexcited(model: IdentificationModel, W: np.ndarray) -> str:
    """The parameters along the least excited direction of the column-scaled W."""
    norms = np.linalg.norm(W, axis=0)
    zero = [model.names[k] for k in np.flatnonzero(norms == 0)]
    if zero:
        return f"no signal at all for {', '.join(zero)}"
    v = np.linalg.svd(W / norms, full_matrices=False)[2][-1]
    top = np.argsort(-np.abs(v))[:4]
    return "least excited: " + " ".join(f"{v[k]:+.2f}*{model.names[k]}" for k in top)


def identify(
    robot: Robot,
    data: Trajectory,
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    weighted: bool = True,
    model: IdentificationModel | None = None,
    stiction: float = STICTION_ZONE,
    passive_friction: bool | str | Iterable[str] | None = (),
    coulomb_speed: npt.ArrayLike | None = None,
) -> Estimate:
    """Identify ``robot`` from ``data`` (a :class:`~identification.data.Trajectory`
    with measured tau): the identifiable parameters beta of its base inertial parameters and,
    optionally, ``friction`` models, ``armature`` and ``passive_friction``
    (:func:`identification_model`, with ``coulomb_speed``; or give ``model``), by WLS
    (``weighted``, the default) or OLS. With the Stribeck model, :func:`stribeck_estimate` (its
    speeds fitted too). Returns an :class:`Estimate`."""
    if model is None:
        model = identification_model(
            robot, friction, armature, passive_friction=passive_friction, coulomb_speed=coulomb_speed
        )
    if any(term in STRIBECK_TERMS for term, _ in model.extras):
        return stribeck_estimate(model, data, weighted, stiction)
    return estimate(model, data, weighted, stiction)


# -- prior and MAP -----------------------------------------------------------------------------------
def default_prior(
    model: IdentificationModel, data: Trajectory | None = None, relative: float = 0.5, *, states: States | None = None
) -> tuple:
    """(theta_0, sigma_0) of the default prior (module docstring): the model file's link-frame
    parameters and zero extra terms. ``data`` (with tau) scales the extra terms' deviations;
    without it they are 1e3 (a flat prior in practice). ``states``: the pga-dyn states of
    ``data`` when the caller has them."""
    import pga_dyn

    if not relative > 0:
        raise PgaDynError(f"relative prior deviation must be positive, got {relative!r}")
    robot = model.robot
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    kinds = np.tile(KIND_OF, robot.n)
    floor = np.array([PRIOR_FLOOR * max(np.abs(phi0[kinds == k]).max(), 1e-12) for k in range(3)])
    sigma_phi = relative * np.maximum(np.abs(phi0), floor[kinds])
    sigma_x = np.full(len(model.extras), 1e3)
    if data is not None and data.tau is not None and model.extras:
        states = states_of(robot, data) if states is None else states
        D = model.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)
        rms_tau = np.sqrt(np.mean(data.tau**2, axis=0))
        for k in range(len(model.extras)):  # the coordinate the term moves most (passive terms: through G)
            rms_cols = np.sqrt(np.mean(D[:, :, k] ** 2, axis=0))
            j = int(np.argmax(rms_cols))
            sigma_x[k] = 10 * rms_tau[j] / rms_cols[j] if rms_cols[j] > 0 else 1e3
    return np.concatenate([phi0, np.zeros(len(model.extras))]), np.concatenate([sigma_phi, sigma_x])


def check_prior(model: IdentificationModel, prior: tuple[npt.ArrayLike, npt.ArrayLike]) -> tuple:
    """(theta_0, sigma_0) as finite arrays of the size of theta, sigma_0 > 0."""
    size = model.K.shape[1]
    try:
        theta0, sigma0 = (np.asarray(x, dtype=float) for x in prior)
    except (TypeError, ValueError):
        raise PgaDynError("prior must be a pair (theta_0, sigma_0) of arrays") from None
    if theta0.shape != (size,) or sigma0.shape != (size,):
        raise PgaDynError(
            f"prior: theta_0 and sigma_0 must have shape ({size},) ({len(model.base.parameter_names)} "
            f"link-frame parameters, {len(model.extras)} extra terms), got {theta0.shape}, {sigma0.shape}"
        )
    if not (np.all(np.isfinite(theta0)) and np.all(np.isfinite(sigma0)) and np.all(sigma0 > 0)):
        raise PgaDynError("prior: theta_0 must be finite and sigma_0 finite and positive")
    return theta0, sigma0


@dataclass(frozen=True, eq=False)
class FullEstimate:
    """Full parameters theta = (phi, x) (10 n + n_e,) of a MAP or consistent estimate, with
    ``beta`` = K theta, ``std`` (posterior standard deviations, MAP; None for the consistent
    estimate), ``method`` (``map`` or ``consistent``) and ``min_eigenvalues`` (n,) of the
    bodies' pseudo-inertias."""

    model: IdentificationModel
    theta: np.ndarray
    beta: np.ndarray
    std: np.ndarray | None
    method: str
    min_eigenvalues: np.ndarray
    solver: str = ""

    @property
    def phi(self) -> np.ndarray:
        """The link-frame inertial parameters (n, 10)."""
        return self.theta[: self.model.base.K.shape[1]].reshape(-1, 10)

    @property
    def extras(self) -> np.ndarray:
        return self.theta[self.model.base.K.shape[1] :]

    def predict(self, data: Trajectory, regressor: np.ndarray | None = None) -> np.ndarray:
        """The forces W beta (ns, n_a) predicted along ``data`` (a Trajectory of the same robot;
        ``regressor`` its W (ns, n_a, p) when the caller has it)."""
        return predict(self.model, self.beta, data, regressor)


@one_blas_thread
def map_estimate(est: Estimate, prior: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> FullEstimate:
    """The MAP estimate of theta from ``est`` and a Gaussian ``prior`` (theta_0, sigma_0)
    (default :func:`default_prior` of the identification data); see the module docstring."""
    model = est.model
    theta0, sigma0 = check_prior(model, default_prior(model, est.data) if prior is None else prior)
    K, A = model.K, est.information()
    P = K.T @ A @ K + np.diag(sigma0**-2)
    cov = np.linalg.inv(P)
    cov = 0.5 * (cov + cov.T)
    theta = np.linalg.solve(P, K.T @ A @ est.beta + theta0 / sigma0**2)
    phi = theta[: model.base.K.shape[1]]
    return FullEstimate(model, theta, K @ theta, np.sqrt(np.diag(cov)), "map", pseudo_inertia_eigenvalues(phi))
