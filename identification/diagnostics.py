"""Diagnostics, a stage of the identification (:mod:`identification` lists them in order):
the report of an identification, as a JSON-ready dict (:func:`report`) and as text
(:func:`report_text`), with checks that can fail, and a plot of measured against predicted
forces (:func:`plot`).

The checks (:func:`diagnose`; docs/identification.md, "Diagnostics"):

* **Held-out error**: the relative residual error of each actuated coordinate j,
  RRE_j = 100 ||tau_j - tau_hat_j|| / ||tau_j|| (%), on data the estimate did not see: a test
  record, or the last :data:`HOLD_OUT` of a single record (:func:`hold_out`).
* **Noise floor without the model**: the white level of each coordinate's measured forces,
  read off their content above the motion (:func:`noise_floor`): their k-th difference
  (k = :data:`FLOOR_ORDER`), a high-pass filter of gain |2 sin(pi f / f_s)|^k (white noise of
  variance sigma^2 comes out with variance C(2k, k) sigma^2; a motion at f_s / 20 is damped to
  3 %), and its robust RMS, 1.4826 times its median absolute deviation, so sigma_j =
  1.4826 MAD / sqrt(C(2k, k)) (von Neumann's and Rice's difference-based variance, made robust).
  The filter is 4 samples long: the steps of Coulomb friction at the sign changes of qd, which
  a model explains, fill a few samples each and the median ignores them; a spectral density
  averaged above f_s / 4 (Welch) counts their high-frequency content as noise (2 to 10 times
  the noise on a Puma's wrists with 1 N m of Coulomb friction).
  The motion's bandwidth (:func:`.signals.bandwidth` of q) must lie below f_s / (4
  :data:`~identification.signals.MARGIN`), or the floor is not measured. A
  coordinate is **explained** when its residual RMS is at most :data:`EXPLAINED` times its floor
  (on the held-out data when there are some); otherwise the model misses an effect there (or
  noise in the derived qd, qdd reaches the prediction), and the standard deviations, which
  cover noise and not bias, are unreliable.
* **Whiteness** of the fit's weighted residuals: the share of the first :data:`WHITENESS_LAGS`
  lags of each coordinate's autocorrelation outside the white-noise band +-2 / sqrt(ns) (about
  5 % for white residuals); white when at most :data:`WHITE_SHARE`. Correlated residuals are
  covered by the HAC covariance of :mod:`.estimation` (bandwidth from their correlation
  length); the standard deviations are unreliable when the correlation outlasts ns /
  :data:`~identification.estimation.MIN_BLOCKS` lags (no covariance estimate covers it).
* **Delay** of the force channel behind the positions (:func:`.estimation.force_delay`), found
  when it exceeds one sample step; compensated on request (:func:`compensate`).

The verdict judges the estimate that heads the report (the one model selection chose,
:mod:`.selection`, or the one asked for) and keeps two questions apart, naming the check behind
each word:

* **Can the estimate be trusted?** It *generalises* when, on every coordinate, its
  cross-validated RRE (:mod:`.selection`) is at most :data:`STABLE` times the RRE of its fit
  plus 1 point (an estimate that leans on the samples it was fitted to predicts the blocks it
  did not see much worse), it *transfers* when its held-out RRE is at most :data:`TRANSFER`
  times the larger of the two plus 2 points, and no coordinate is predicted worse than by zero
  (RRE >= 100 %, in the fit or held out). Otherwise the verdict FAILS.
* **Where does the model misfit?** A coordinate whose held-out residual exceeds
  :data:`EXPLAINED` times its noise floor is not explained; the report says in which regime
  the residual is largest (:func:`regimes`: standstill, reversal, high speed, against the
  rest). A trusted estimate of a model that misfits is ``MISFIT``; trusted and explained: ``OK``.

The delay and the standard deviations are reported beside it, not in it: the job
(:mod:`.job`) compensates a delay only when that lowers the cross-validated error, and says so.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.display import number, save_figure, text_table
from pga_dyn.errors import PgaDynError

from .consistency import ConsistentEstimate, identifiability
from .estimation import MIN_BLOCKS, WEIGHT_CEILING, autocorrelation, force_delay
from .model import SIGN_FLOOR, SIGN_NOISE, states_of
from .physics import violations
from .selection import Selection
from .signals import FLOOR_ORDER, MARGIN, PREFILTER, bandwidth, prefiltered, white_noise

if TYPE_CHECKING:
    from .data import Trajectory
    from .estimation import Estimate, FullEstimate
    from .model import IdentificationModel

#: The share of a single record held out, at its end, to test the estimate on.
HOLD_OUT = 0.2
#: A coordinate's forces are explained when its residual RMS is at most EXPLAINED times its
#: noise floor (white residuals of the right size give 1; 2 leaves room for the estimate's own
#: error and the filtered derivatives' noise, 1.0-1.7 on MuJoCo logs of a UR5 whose model fits).
EXPLAINED = 2.0
#: The estimate generalises when its cross-validated RRE is at most STABLE times its fit's RRE
#: plus 1 point on every coordinate (5 folds of a record of a model that fits: 1.0-1.2).
STABLE = 1.5
#: ... and transfers when its held-out RRE is at most TRANSFER times the larger of the two plus
#: 2 points (another trajectory of the same robot excites the model differently: up to 1.6 on
#: MuJoCo logs and the UR10e's).
TRANSFER = 2.0
#: The regimes of :func:`regimes`: standstill below STANDSTILL times a coordinate's top speed,
#: reversal within REVERSAL seconds of a change of direction, high speed above FAST times it.
STANDSTILL = 0.05
REVERSAL = 0.05
FAST = 0.7
#: Whiteness: the first WHITENESS_LAGS lags of the residuals' autocorrelation ...
WHITENESS_LAGS = 20
#: ... of which at most this share may lie outside +-2 / sqrt(ns) (5 % expected for white
#: residuals; 5 or more of 20 happens with probability 0.016).
WHITE_SHARE = 0.2


def hold_out(data: Trajectory, test: Trajectory | None = None, fraction: float = HOLD_OUT) -> tuple:
    """(fit, test): ``data`` and ``test`` when a test record is given; else, with ``fraction`` >
    0, the samples of ``data`` before and from t_0 + (1 - ``fraction``) (t_end - t_0), the
    latter the held-out segment (their ``source`` says so); ``fraction`` 0: (data, None)."""
    if test is not None:
        return data, test
    if not (isinstance(fraction, (int, float)) and 0 <= fraction < 1):
        raise PgaDynError(f"hold-out: the held-out share of the record is in [0, 1), got {fraction!r}")
    if fraction == 0:
        return data, None
    cut = int(np.searchsorted(data.t, data.t[0] + (1 - fraction) * (data.t[-1] - data.t[0])))

    return (
        data.part(0, cut, f"{data.source} (first {100 * (1 - fraction):.3g} %, t < {data.t[cut]:.6g} s)"),
        data.part(cut, len(data), f"{data.source} (last {100 * fraction:.3g} % held out, t >= {data.t[cut]:.6g} s)"),
    )


def compensate(
    data: Trajectory,
    test: Trajectory | None = None,
    delay: float | str = "auto",
    model: IdentificationModel | None = None,
) -> tuple:
    """(data, test, d): the records with their forces advanced by the delay d (s) of the force
    channel (:meth:`~identification.data.Trajectory.aligned`), ``delay`` seconds or
    ``"auto"``: estimated on ``data`` with ``model`` (:func:`.estimation.force_delay`) and rounded
    to whole sample steps (the residual delay is at most half a step, below the one step at which
    a delay is reported). A shift by a fraction a of a step interpolates the forces linearly,
    which averages neighbouring samples: their white noise keeps 1 - 2a(1 - a) of its variance
    and its third difference, the noise floor's measure, only 1 - 3.5a(1 - a) (1/8 at a = 1/2), so
    the floor of the shifted forces is measured low. The test record, logged by the same
    channel, is aligned by the same d."""
    if isinstance(delay, str):
        if delay != "auto":
            raise PgaDynError(f"delay: 'auto' or a number of seconds, got {delay!r}")
        if model is None:
            raise PgaDynError("delay 'auto' is estimated with the identification model: give model")
        step = float(np.median(np.diff(data.t)))
        delay = step * round(force_delay(model, data)[0] / step)
    return data.aligned(delay), None if test is None else test.aligned(delay), float(delay)


def noise_floor(data: Trajectory) -> tuple:
    """The noise floor of the measured forces of ``data`` (module docstring): (sigma (n_a,), or
    None when it cannot be measured; the sample rate f_s (Hz); the motion's bandwidth (Hz), the
    largest over the coordinates; why it is not measured, or ""). Not measured: when the motion's
    bandwidth is not below f_s / (4 MARGIN), or when the forces were low-passed before they were
    logged (:func:`.signals.prefiltered`: their spectrum keeps falling over the top quarter of the
    band, where white noise is flat), which takes the noise the floor is read from: a floor
    of such forces would be the filter's leftovers (1e-5 N m for a 7-axis arm's torques)."""
    rate = 1.0 / float(np.median(np.diff(data.t)))
    motion = float(np.max(bandwidth(data.q, rate)[1]))
    if MARGIN * motion >= rate / 4:
        why = (
            f"the motion reaches {motion:.3g} Hz: more than {rate / (4 * MARGIN):.3g} Hz, a {MARGIN * 4:g}th of the "
            "sample rate"
        )
        return None, rate, motion, why
    slope = prefiltered(data.tau, rate)
    if np.any(slope < PREFILTER):
        names = [n for n, d in zip(data.names, slope) if d < PREFILTER]
        why = (
            f"the forces of {', '.join(names)} were low-passed before they were logged (their spectrum falls with "
            f"a log-log slope down to {slope.min():.3g} over the top quarter of the band, white noise: 0): their "
            "noise is unknown"
        )
        return None, rate, motion, why
    return white_noise(data.tau), rate, motion, ""


def rre(tau: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """RRE_j = 100 ||tau_j - predicted_j|| / ||tau_j|| (%) per coordinate, (ns, n_a) in, (n_a,) out."""
    return 100 * np.linalg.norm(tau - predicted, axis=0) / np.linalg.norm(tau, axis=0)


def regimes(data: Trajectory, residual: np.ndarray) -> list:
    """Per coordinate of ``data``, the RMS of ``residual`` (ns, n_a) in each regime of the motion
    with at least 1 % of the samples (module docstring): [{"standstill": rms, "reversal": rms,
    "high speed": rms, "rest": rms}, ...] (a regime with too few samples is left out)."""
    out = []
    step = float(np.median(np.diff(data.t)))
    for j in range(residual.shape[1]):
        speed = np.abs(data.qd[:, j])
        top = speed.max()
        still = speed < STANDSTILL * top
        moving = np.flatnonzero(~still)
        flips = moving[1:][np.diff(np.sign(data.qd[moving, j])) != 0]
        near = np.zeros(len(speed), dtype=bool)
        width = int(np.ceil(REVERSAL / step))
        for f in flips:
            near[max(f - width, 0) : f + width + 1] = True
        reversal = near & ~still
        fast = (speed > FAST * top) & ~reversal
        rest = ~(still | reversal | fast)
        masks = {"standstill": still, "reversal": reversal, "high speed": fast, "rest": rest}
        out.append(
            {
                name: float(np.sqrt(np.mean(residual[mask, j] ** 2)))
                for name, mask in masks.items()
                if mask.mean() >= 0.01
            }
        )
    return out


def worst_regime(rms: dict) -> str:
    """ "worst at NAME (x times the rest)" for the regime of largest RMS in ``rms`` (of :func:`regimes`)."""
    if not rms:
        return ""
    name = max(rms, key=rms.get)
    others = [v for k, v in rms.items() if k != name]
    ratio = rms[name] / max(np.sqrt(np.mean(np.square(others))), np.finfo(float).tiny) if others else 1.0
    return f"worst at {name}, {ratio:.2g}x the RMS elsewhere"


def diagnose(
    est: Estimate,
    test: Trajectory | None = None,
    delay: float = 0.0,
    predictor: Estimate | FullEstimate | None = None,
    cv_rre: np.ndarray | None = None,
    *,
    fitted: np.ndarray | None = None,
    found: float | str | None = None,
    held: np.ndarray | None = None,
) -> dict:
    """The checks of the module docstring on the estimate ``predictor`` (default ``est``, the
    least-squares estimate whose residuals and covariance are checked), with the held-out record
    ``test`` (None: the identification data, in sample), the ``delay`` (s) the forces were
    advanced by before the estimate, and the cross-validated RRE ``cv_rre`` (n_a,) (%) of the
    model selection (None: not cross-validated): a JSON-ready dict with the ``verdict``. When the
    caller has them: ``fitted`` (ns, n_a) the predictor's forces along the identification data,
    ``found`` the force delay (s) found on them, or why none was (the search's message),
    ``held`` the regressor (ns', n_a, p) along ``test``."""
    predictor = est if predictor is None else predictor
    data, names = est.data, list(est.data.names)
    check = data if test is None else test
    predicted = predictor.predict(check, None if test is None else held)
    fitted = predictor.predict(data) if fitted is None else fitted
    floor, rate, motion, unmeasured = noise_floor(check)
    ratio = None if floor is None else np.sqrt(np.mean((check.tau - predicted) ** 2, axis=0)) / floor
    explained = None if ratio is None else (ratio <= EXPLAINED).tolist()
    r = autocorrelation(est.residuals if est.used is None else np.where(est.used, est.residuals, 0.0), WHITENESS_LAGS)[
        1:
    ]
    outside = np.mean(np.abs(r) > 2 / np.sqrt(len(data)), axis=0)
    white = (outside <= WHITE_SHARE).tolist()
    step = float(np.median(np.diff(data.t)))
    try:
        if isinstance(found, str):
            raise PgaDynError(found)
        found = force_delay(est.model, data)[0] if found is None else found
        delay_out = {"seconds": found, "step": step, "found": bool(abs(found) > step), "note": ""}
    except PgaDynError as exc:
        delay_out = {"seconds": None, "step": step, "found": True, "note": str(exc)}
    delay_out["compensated"] = float(delay)
    capped = est.lags >= len(data) // MIN_BLOCKS
    unexplained = [n for n, ok in zip(names, explained or []) if not ok]
    reliable = not unexplained and not capped and explained is not None
    fit_rre = rre(data.tau, fitted)
    held_rre = rre(check.tau, predicted) if test is not None else None
    by_regime = regimes(check, check.tau - predicted)
    trust = []
    worse = [n for j, n in enumerate(names) if fit_rre[j] >= 100 or (held_rre is not None and held_rre[j] >= 100)]
    if worse:
        trust.append(f"predicted worse than by zero (RRE >= 100 %): {', '.join(worse)}")
    if cv_rre is not None:
        loose = [
            f"{n} (cross-validated {cv_rre[j]:.3g} % against the fit's {fit_rre[j]:.3g} %)"
            for j, n in enumerate(names)
            if cv_rre[j] > STABLE * fit_rre[j] + 1
        ]
        if loose:
            trust.append("does not generalise across the record: " + "; ".join(loose))
    if held_rre is not None:
        known = fit_rre if cv_rre is None else np.maximum(cv_rre, fit_rre)
        far = [
            f"{n} ({held_rre[j]:.3g} % held out against {known[j]:.3g} %)"
            for j, n in enumerate(names)
            if held_rre[j] > TRANSFER * known[j] + 2
        ]
        if far:
            trust.append("does not transfer to the held-out data: " + "; ".join(far))
    misfit = [
        f"{n} (residual {ratio[j]:.3g}x the noise floor; {worst_regime(by_regime[j])})"
        for j, n in enumerate(names)
        if explained is not None and not explained[j]
    ]
    trusted = (
        "the estimate is trusted: "
        + ("cross-validated RRE within " + f"{STABLE:g}x the fit's" if cv_rre is not None else "not cross-validated")
        + (f", held-out RRE within {TRANSFER:g}x" if held_rre is not None else ", no held-out data")
        + ", no coordinate predicted worse than by zero"
    )
    fits = (
        f"the noise floor is not measured ({unmeasured}): whether the model explains the forces is not checked"
        if explained is None
        else f"the model explains every coordinate (residual at most {EXPLAINED:g}x the noise floor)"
        if not misfit
        else "the model does not explain " + "; ".join(misfit)
    )
    verdict = (
        "FAILS: the estimate " + "; it ".join(trust) + "; " + fits
        if trust
        else ("MISFIT: " if misfit else "OK: ") + trusted + "; " + fits
    )
    why = (
        "the model does not explain every coordinate"
        if unexplained
        else "the residuals stay correlated beyond the HAC bandwidth's limit"
        if capped
        else "the noise floor is not measured"
        if explained is None
        else ""
    )
    if delay_out["seconds"] is not None:
        delay_out["note"] = f"{1e3 * delay_out['seconds']:+.3g} ms (step {1e3 * step:.3g} ms): " + (
            "FOUND" if delay_out["found"] else "none"
        )
    return {
        "verdict": verdict,
        "coordinates": names,
        "checked_on": check.source if test is not None else f"{data.source} (in sample: no held-out data)",
        "held_out": test is not None,
        "rre_%": rre(check.tau, predicted).tolist(),
        "rre_fit_%": fit_rre.tolist(),
        "rre_cv_%": None if cv_rre is None else np.asarray(cv_rre).tolist(),
        "regimes": by_regime,
        "noise_floor": None if floor is None else floor.tolist(),
        "residual_to_floor": None if ratio is None else ratio.tolist(),
        "explained": explained,
        "rule": f"explained when the residual RMS is at most {EXPLAINED:g} times the noise floor (robust RMS of the "
        f"difference of order {FLOOR_ORDER} of tau, a high-pass; the motion below {motion:.3g} Hz at "
        f"{rate:.4g} Hz)",
        "noise_floor_unmeasured": unmeasured,
        "whiteness": {
            "lags": WHITENESS_LAGS,
            "outside_share": outside.tolist(),
            "white": white,
            "rule": f"white when at most {100 * WHITE_SHARE:g} % of the first {WHITENESS_LAGS} lags of "
            "the autocorrelation lie outside +-2/sqrt(n)",
        },
        "std": {
            "reliable": reliable,
            "reason": why,
            "covariance": f"HAC (Newey-West, Bartlett kernel, {est.lags} lags)" if est.lags else "white residuals",
            "lags": est.lags,
            "to_white": 1.0 if est.white_std is None else float(np.median(est.std / est.white_std)),
        },
        "delay": delay_out,
    }


def report(
    est: Estimate,
    full: FullEstimate | None = None,
    test: Trajectory | None = None,
    delay: float = 0.0,
    *,
    chosen: str | None = None,
    selection: Selection | None = None,
    fitted: np.ndarray | None = None,
    found: float | str | None = None,
) -> dict:
    """A JSON-ready dict of an identification: the ``verdict`` and the checks of
    :func:`diagnose` on the estimate ``chosen`` (``est``'s method, or ``full``'s: the one that
    heads the report and that a model file gets; default ``full``'s when given, else ``est``'s),
    with the cross-validated RRE of the model ``selection`` (:class:`.selection.Selection`, its
    tables under ``selection``), ``delay`` the seconds the forces were advanced by before the
    estimate (``fitted`` and ``found`` as in :func:`diagnose`); the model, the data, the
    estimate ``est`` (beta, std, relative std,
    expressions, the model file's values), the noise and residuals per coordinate, the held-out
    ``test`` data's residual RMS and RRE, and the full parameters of ``full`` (a MAP or
    consistent estimate) with their pseudo-inertias' smallest eigenvalues, a ``note`` on each
    full parameter the data do not determine on its own
    (:func:`~identification.consistency.identifiability`) and, for a consistent estimate,
    its bounds per body (:meth:`~identification.consistency.BodyBounds.report`)."""
    import pga_dyn

    model, data, robot = est.model, est.data, est.model.robot
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    model_beta = model.K[:, : phi0.size] @ phi0
    chosen = (full.method if full is not None else est.method) if chosen is None else chosen
    if chosen not in (est.method, None if full is None else full.method):
        raise PgaDynError(f"report: the chosen estimate '{chosen}' is neither {est.method} nor the full estimate")
    predictor = est if chosen == est.method else full
    cv = None if selection is None else selection.chosen.cv_rre
    # the held-out record's states assembled once, for every prediction along it
    held = None if test is None or est.targets is not None else model.regressor(states_of(robot, test))
    diagnostics = diagnose(est, test, delay, predictor, cv, fitted=fitted, found=found, held=held)
    out = {
        "verdict": diagnostics.pop("verdict"),
        "chosen": chosen,
        "robot": robot.name,
        "data": data.source,
        "samples": len(data),
        "coordinates": list(data.names),
        "derivatives": data.derivatives,
        "method": est.method,
        "parameters": model.num_parameters,
        "extras": list(model.extra_labels),
        "condition_number": est.cond,
        "max_cond_jp": est.max_cond_jp,
        "variance_factor": est.scale,
        "noise_std": est.sigma.tolist(),
        "weights": weights_report(est),
        "residual_rms": est.rms().tolist(),
        "base": [
            {
                "name": name,
                "value": float(b),
                "std": float(s),
                "relative_std": float(r),
                "model_value": float(v),
                "expression": e,
            }
            for name, b, s, r, v, e in zip(
                model.names, est.beta, est.std, est.relative_std, model_beta, model.expressions
            )
        ],
        "diagnostics": diagnostics,
    }
    if selection is not None:
        out["selection"] = selection.report()
    if model.sign_speed is not None:
        out["sign_speed"] = model.sign_speed.tolist()
    if model.coulomb_speed is not None:
        out["coulomb_speed"] = model.coulomb_speed.tolist()
    if est.stribeck_speed_std is not None:
        out["stribeck_speed"] = [
            {"coordinate": n, "value": float(v), "std": float(s)}
            for n, v, s in zip(robot.actuated_names, model.stribeck_speed, est.stribeck_speed_std)
            if np.isfinite(s)
        ]
    if test is not None:
        out["held_out"] = {
            "data": test.source,
            "samples": len(test),
            "residual_rms": est.rms(test, held).tolist(),
            "rre_%": diagnostics["rre_%"],
        }
    if full is not None:
        names = model.parameter_names
        out["full"] = {
            "method": full.method,
            "solver": full.solver,
            "min_pseudo_inertia_eigenvalue": dict(zip(robot.body_names, full.min_eigenvalues.tolist())),
            "violations": [str(v) for v in violations(robot.body_names, full.phi)],
            "parameters": [
                {"name": n, "value": float(v)}
                | ({} if full.std is None else {"std": float(s)})
                | ({"note": note} if note else {})
                for n, v, s, note in zip(
                    names,
                    full.theta,
                    full.std if full.std is not None else np.zeros(len(names)),
                    identifiability(model),
                )
            ],
            "base_values": full.beta.tolist(),
        }
        if isinstance(full, ConsistentEstimate) and full.bounds is not None:
            out["full"]["bounds"] = full.bounds.report(full.phi)
        if test is not None:
            out["full"]["held_out_residual_rms"] = np.sqrt(
                np.mean((test.tau - full.predict(test, held)) ** 2, axis=0)
            ).tolist()
    return out


def weights_report(est: Estimate) -> dict:
    """How the estimate weighed its coordinates: the relative weights (n_a,) (the largest 1) and a
    sentence naming the coordinates whose weight the cap of :func:`.estimation.wls_weights` or the
    no-worse-than-zero rule raised."""
    w = 1.0 / np.sqrt(est.variances)
    relative = w / w.max()
    if est.method != "wls":
        return {"relative": relative.tolist(), "note": f"{est.method.upper()}: the coordinates weigh alike"}
    used = np.ones(est.data.tau.shape, dtype=bool) if est.used is None else est.used
    rms = np.sqrt(np.sum(np.where(used, est.data.tau, 0.0) ** 2, axis=0) / np.maximum(used.sum(axis=0), 1))
    raised = [n for n, s, r in zip(est.data.names, est.sigma, rms) if s > WEIGHT_CEILING * r]
    note = "1 / sigma of each coordinate's residual, iterated" + (
        f"; raised above it (sigma capped at {WEIGHT_CEILING:g}x the RMS force, or the fit worse than zero): "
        + ", ".join(raised)
        if raised
        else ""
    )
    return {"relative": relative.tolist(), "note": note}


def report_text(report: dict) -> list:
    """The lines of text of a :func:`report` (what ``pga-dyn identify`` prints): the data, the
    estimate, noise and residual RMS per coordinate, a table of the identified parameters and,
    with full parameters, the pseudo-inertias' smallest eigenvalues, the violations and a table
    of the full parameters."""
    lines = [
        f"verdict:          {report['verdict']}",
        f"robot:            {report['robot']}",
        f"data:             {report['data']}: {report['samples']} samples; "
        + ("qd, qdd given" if report["derivatives"] == "given" else report["derivatives"]),
        f"estimate:         {report['method'].upper()} of {report['parameters']} parameters (base inertial"
        f"{' + ' + str(len(report['extras'])) + ' friction/armature' if report['extras'] else ''}); condition "
        f"number {report['condition_number']:.4g}; variance factor {report['variance_factor']:.3g}",
        "chosen:           "
        + (report["selection"]["why"] if "selection" in report else f"{report['chosen'].upper()} (as asked)"),
        "noise std:        " + ", ".join(f"{s:.4g}" for s in report["noise_std"]),
        "weights:          "
        + ", ".join(f"{s:.3g}" for s in report["weights"]["relative"])
        + f" (relative; {report['weights']['note']})",
        "residual RMS:     " + ", ".join(f"{s:.4g}" for s in report["residual_rms"]),
    ]
    if "sign_speed" in report:
        lines.append(
            "Coulomb smooth:   "
            + ", ".join(f"{v:.3g}" for v in report["sign_speed"])
            + f" (v_0 of tanh(qd / v_0): {SIGN_NOISE:g}x the velocity's noise, at least {SIGN_FLOOR:g} of the top speed)"
        )
    if "coulomb_speed" in report:
        lines.append(
            "Coulomb speed:    " + ", ".join(f"{v:.4g}" for v in report["coulomb_speed"]) + " (fc tanh(qd / v), stated)"
        )
    if "stribeck_speed" in report:
        lines.append(
            "Stribeck speed:   "
            + ", ".join(f"{s['coordinate']} {s['value']:.4g} +- {s['std']:.2g}" for s in report["stribeck_speed"])
            + " (fitted)"
        )
    if "held_out" in report:
        lines.append(
            "held-out RMS:     "
            + ", ".join(f"{s:.4g}" for s in report["held_out"]["residual_rms"])
            + f" ({report['held_out']['data']})"
        )
    lines += diagnostics_text(report["diagnostics"])
    if "selection" in report:
        lines += selection_text(report["selection"], report["coordinates"])
    rows = [
        (p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}", f"{100 * p['relative_std']:.3g}", number(p["model_value"]))
        for p in report["base"]
    ]
    lines += ["", "Identified parameters (std: standard deviation; model: the model file's value, friction 0)"]
    lines += text_table(("parameter", "estimate", "std", "std %", "model"), rows)
    full = report.get("full")
    if full:
        label = {
            "consistent": "physically consistent estimate (LMI, solver " + full["solver"] + ")",
            "map": "MAP estimate",
        }[full["method"]]
        lines += [
            "",
            f"Full parameters: {label}; pseudo-inertia smallest eigenvalue per body: "
            + ", ".join(f"{b} {e:.3g}" for b, e in full["min_pseudo_inertia_eigenvalue"].items()),
        ]
        if full["violations"]:
            lines.append("  NOT physically consistent: " + "; ".join(full["violations"]))
        if "held_out_residual_rms" in full:
            lines.append("  held-out RMS: " + ", ".join(f"{s:.4g}" for s in full["held_out_residual_rms"]))
        for b in full.get("bounds", ()):
            lo, hi = (f"{v:.4g}" if v is not None else "-" for v in b["mass_bounds"])
            extent = (
                ""
                if b["ellipsoid"] is None
                else (
                    ", ellipsoid semi-axes "
                    + " ".join(f"{a:.3g}" for a in b["ellipsoid"]["semi_axes"])
                    + f" m, margin {b['extent_margin']:.3g} kg"
                )
            )
            lines.append(
                f"  {b['body']}: mass {b['mass']:.4g} kg in [{lo}, {hi}]{extent} ({b['source']})"
                + (f"; ACTIVE: {', '.join(b['active'])}" if b["active"] else "")
            )
        rows = [
            (p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}" if "std" in p else "-", p.get("note", ""))
            for p in full["parameters"]
        ]
        lines += ["  (note: a parameter the data do not determine on its own has the prior's share of its sums)"]
        lines += text_table(("parameter", "value", "std", "note"), rows)
    return lines


def selection_text(selection: dict, names: list) -> list:
    """The lines of text of a :meth:`.selection.Selection.report`: its candidates' cross-validated
    RRE side by side."""
    lines = ["", f"Model selection: cross-validated RRE % ({selection['folds']} folds by {selection['by']})"]
    rows = [
        (
            c["label"],
            str(c["parameters"]),
            "-" if c["score_%"] is None else f"{c['score_%']:.3g}",
            c["note"] or ", ".join(f"{v:.3g}" for v in c["cv_rre_%"]),
        )
        for c in selection["terms"] + selection["estimates"]
    ]
    lines += [
        "  " + line for line in text_table(("candidate", "p", "mean", "per coordinate: " + ", ".join(names)), rows)
    ]
    lines.append(f"  chosen: {selection['why']}")
    return lines


def diagnostics_text(checks: dict) -> list:
    """The lines of text of the checks of :func:`diagnose` (part of :func:`report_text`)."""

    def values(xs, fmt="{:.3g}"):
        return ", ".join(fmt.format(x) for x in xs)

    where = "held-out" if checks["held_out"] else "in sample"
    lines = [
        "",
        "Diagnostics (docs/identification.md)",
        f"  checked on:     {checks['checked_on']}",
        f"  RRE % ({where}): "
        + values(checks["rre_%"], "{:.3g}")
        + "   (fit: "
        + values(checks["rre_fit_%"], "{:.3g}")
        + ("" if checks["rre_cv_%"] is None else "; cross-validated: " + values(checks["rre_cv_%"], "{:.3g}"))
        + ")",
    ]
    if checks["noise_floor"] is None:
        lines.append(f"  noise floor:    not measured: {checks['noise_floor_unmeasured']}")
    else:
        lines += [
            "  noise floor:    " + values(checks["noise_floor"], "{:.4g}"),
            "  residual/floor: " + values(checks["residual_to_floor"]) + f"   ({checks['rule']})",
        ]
    white = checks["whiteness"]
    correlated = [n for n, w in zip(checks["coordinates"], white["white"]) if not w]
    lines.append(
        "  whiteness:      "
        + values(white["outside_share"], "{:.2f}")
        + f"   ({white['rule']}: "
        + ("correlated: " + ", ".join(correlated) if correlated else "all white")
        + ")"
    )
    std = checks["std"]
    lines.append(
        f"  std:            {std['covariance']}; median {std['to_white']:.3g}x the white-residual std; "
        + ("reliable" if std["reliable"] else f"UNRELIABLE: {std['reason']}")
    )
    delay = checks["delay"]
    found = (
        delay["note"]
        if delay["seconds"] is None
        else f"{1e3 * delay['seconds']:+.3g} ms (step {1e3 * delay['step']:.3g} ms): "
        + ("FOUND" if delay["found"] else "none")
    )
    lines.append(
        f"  force delay:    {found}"
        + (f"; the forces were advanced by {1e3 * delay['compensated']:.3g} ms" if delay["compensated"] else "")
        + (f" ({delay['decision']})" if "compensated" in delay.get("decision", "") else "")
    )
    return lines


def plot(est: Estimate, path: os.PathLike | str, data: Trajectory | None = None) -> str:
    """Measured and predicted forces of every actuated coordinate against time on ``data``
    (default the identification data), saved to ``path`` (PNG, SVG or PDF by its extension).
    Needs matplotlib (the optional extra ``plot``)."""
    from pga_dyn.errors import optional

    optional("matplotlib", "the plot", "plot").use("Agg")
    plt = optional("matplotlib.pyplot", "the plot", "plot")
    data = est.data if data is None else data
    predicted = est.predict(data)
    na = len(data.names)
    fig, axes = plt.subplots(na, 1, figsize=(8, 1.6 * na + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(data.t, data.tau[:, j], lw=2.5, color="0.75", label="measured")
        ax.plot(data.t, predicted[:, j], lw=0.8, color="C0", label="predicted")
        ax.plot(data.t, data.tau[:, j] - predicted[:, j], lw=0.6, color="C3", label="residual")
        ax.set_ylabel(data.names[j], fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    fig.suptitle(
        f"{est.model.robot.name}: measured and predicted forces on {os.path.basename(data.source)}", fontsize=9
    )
    fig.tight_layout()
    save_figure(fig, path, 120)
    plt.close(fig)
    return os.fspath(path)
