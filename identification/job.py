"""The whole job in one call, the last stage of the identification (:mod:`identification`
lists them in order): from a robot and its measured record to the estimate the report stands
behind, as ``pga-dyn identify`` runs it (:func:`identify_log`).

The steps, each reported:

1. **Hold-out**: the test record, or the last ``hold_out`` share of the record
   (:func:`.diagnostics.hold_out`), is set aside; nothing below looks at it.
2. **Selection** (:func:`.selection.select`): the model terms the caller leaves open (friction,
   armature) and the estimate (WLS, MAP, consistent, OLS; or the one asked for) chosen by
   cross-validation over blocks of the record.
3. **Delay**: ``delay`` seconds or ``"auto"`` (estimated) compensate the force channel's delay as
   asked; with ``delay=None`` the delay is estimated (:func:`.estimation.force_delay`) and,
   when it exceeds a sample step, compensated only if that lowers the chosen candidate's
   cross-validated error by more than :data:`.selection.TIE`; the report says which and why.
4. **Estimate**: the chosen model fitted on the whole record (:func:`.estimation.estimate`),
   and the full parameters when chosen (MAP, consistent) or needed for a model file (the
   consistent estimate: a robot file's parameters must be physical).
5. **Report** (:func:`.diagnostics.report`): the verdict on the chosen estimate, the candidates
   side by side.

Each record is assembled once (:func:`.model.states_of`: on a machine with loops, the costly step):
the identification data by the selection, whose states the estimate, the prior, the delay's
search and the delay's trial take (the samples a delay keeps, :meth:`.data.Trajectory.aligned_rows`,
and the search's subset have those rows' states, :func:`.model.state_rows`), and the held-out
record by the report, whose regressor every prediction along it shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .consistency import consistent_estimate
from .diagnostics import HOLD_OUT, compensate, hold_out, report, report_text
from .estimation import default_prior, estimate, force_delay, identify, map_estimate
from .export import write_model, write_sidecar
from .model import DEFAULT_FRICTION, STRIBECK_TERMS, friction_terms, identification_model, state_rows
from .selection import ESTIMATES, FOLDS, TIE, select

if TYPE_CHECKING:
    from collections.abc import Callable

    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .data import Trajectory
    from .estimation import Estimate, FullEstimate
    from .model import IdentificationModel
    from .selection import Selection


@dataclass(frozen=True, eq=False)
class Identification:
    """The outcome of :func:`identify_log`: ``estimate`` (the least-squares
    :class:`~.estimation.Estimate` of the chosen model), ``full`` (its MAP or consistent full
    parameters, or None), ``chosen`` (the estimate the report stands behind: wls, ols, map,
    consistent), ``selection`` (:class:`~.selection.Selection`, None when nothing was chosen),
    ``test`` (the held-out record, or None), ``delay`` (s, the forces were advanced by it),
    ``delay_note`` (how the delay was decided), and for the report ``fitted`` (ns, n_a) the
    chosen estimate's forces along the identification data and ``found`` the delay (s) left in
    them, or why none was found (None: not searched)."""

    estimate: Estimate
    full: FullEstimate | None
    chosen: str
    selection: Selection | None
    test: Trajectory | None
    delay: float
    delay_note: str
    fitted: np.ndarray | None = None
    found: float | str | None = None

    @property
    def model(self) -> IdentificationModel:
        """The chosen :class:`~.model.IdentificationModel` (its terms, their speeds)."""
        return self.estimate.model

    @property
    def beta(self) -> np.ndarray:
        """beta (p,) of the chosen estimate."""
        return self.estimate.beta if self.chosen == self.estimate.method else self.full.beta

    def predict(self, data: Trajectory) -> np.ndarray:
        """The forces (ns, n_a) the chosen estimate predicts along ``data``."""
        return (self.estimate if self.chosen == self.estimate.method else self.full).predict(data)

    def report(self) -> dict:
        """The JSON-ready report (:func:`.diagnostics.report`) of the chosen estimate, with the
        selection and the delay's decision."""
        out = report(
            self.estimate,
            self.full,
            self.test,
            self.delay,
            chosen=self.chosen,
            selection=self.selection,
            fitted=self.fitted,
            found=self.found,
        )
        out["diagnostics"]["delay"]["decision"] = self.delay_note
        return out

    def write(self, path: str, write_mjcf: Callable[..., str] | None = None, gains: np.ndarray | None = None) -> dict:
        """Write the identified model to the new robot file ``path`` (:func:`.export.write_model`:
        the full parameters, MAP or consistent) and its sidecar (:func:`.export.write_sidecar`:
        the terms, the chosen estimate's beta, the delay, the drive ``gains``). Returns the
        export's report with the sidecar's path."""
        if self.full is None:
            raise PgaDynError(
                "a model file needs full parameters: identify with full=True (or a MAP or consistent estimate)"
            )
        written = write_model(self.full, path, write_mjcf=write_mjcf)
        written["sidecar"] = write_sidecar(
            self.model, self.beta, self.chosen, path, theta=self.full.theta, delay=self.delay, gains=gains
        )
        return written

    def text(self) -> list:
        """The report as lines of text (what ``pga-dyn identify`` prints)."""
        return report_text(self.report())


@one_blas_thread
def identify_log(
    robot: Robot,
    data: Trajectory,
    test: Trajectory | None = None,
    *,
    friction: tuple | None = None,
    armature: bool | None = None,
    estimate_kind: str | None = None,
    passive_friction: tuple = (),
    coulomb_speed: float | None = None,
    hold_out_share: float = HOLD_OUT,
    delay: float | str | None = None,
    prior_std: float = 0.5,
    bounds: dict | None = None,
    full: bool = False,
    folds: int = FOLDS,
) -> Identification:
    """Identify ``robot`` from its record ``data`` (a :class:`~.data.Trajectory` with measured
    tau) as the module docstring says: ``test`` a held-out record (else the last
    ``hold_out_share`` of ``data``; 0: none); ``friction`` (models of
    :func:`~.model.friction_terms`) and ``armature`` as given, or chosen when None;
    ``estimate_kind`` one of wls, ols, map, consistent, or None (chosen); ``delay`` seconds,
    ``"auto"`` or None (checked, compensated when it helps); ``prior_std`` the default prior's
    relative deviation and ``bounds`` the consistent estimate's keyword arguments;
    ``full``: compute full parameters even when a least-squares estimate is chosen (for a model
    file: the consistent estimate, whose parameters are physical). Stribeck friction
    (nonlinear) is fitted as given, without selection."""
    if estimate_kind is not None and estimate_kind not in ESTIMATES:
        raise PgaDynError(f"estimate: one of {', '.join(ESTIMATES)}, got {estimate_kind!r}")
    if friction is True or friction is False:  # as identification_model takes them
        friction = DEFAULT_FRICTION if friction else ()
    data, test = hold_out(data, test, hold_out_share)
    common = {"passive_friction": passive_friction, "coulomb_speed": coulomb_speed}
    estimates = ESTIMATES if estimate_kind is None else (estimate_kind,)
    nonlinear = friction is not None and bool(set(friction_terms(friction)) & set(STRIBECK_TERMS))
    shift, note, found, W, states = 0.0, "not checked", None, None, None
    if delay is not None:
        model = identification_model(robot, friction or (), bool(armature), **common)
        data, test, shift = compensate(data, test, delay, model)
        note = f"advanced by {1e3 * shift:.3g} ms as asked"
    selection = None
    if not nonlinear:
        options = {"friction": friction, "armature": armature, "folds": folds, "bounds": bounds, **common}
        options["prior_std"] = prior_std
        selection, model, W, states = select(robot, data, estimates=estimates, **options)
        if delay is None:
            data, test, shift, note, selection, model, W, states, found = checked_delay(
                robot, data, test, selection, model, W, states, estimates, options
            )
        est = estimate(model, data, weighted=selection.chosen.estimate != "ols", states=states, regressor=W)
        chosen = selection.chosen.estimate
    else:
        est = identify(robot, data, friction, bool(armature), weighted=estimate_kind != "ols", **common)
        chosen = "ols" if estimate_kind == "ols" else "wls" if estimate_kind in (None, "wls") else estimate_kind
    solution = None
    if chosen in ("map", "consistent") or full:  # a model file's parameters must be physical: consistent
        prior = default_prior(est.model, data, relative=prior_std, states=states)
        solution = map_estimate(est, prior) if chosen == "map" else consistent_estimate(est, prior, **(bounds or {}))
    fitted = None if W is None else W @ (est.beta if solution is None or chosen == est.method else solution.beta)
    return Identification(est, solution, chosen, selection, test, shift, note, fitted, found)


def checked_delay(
    robot: Robot,
    data: Trajectory,
    test: Trajectory | None,
    selection: Selection,
    model: IdentificationModel,
    W: np.ndarray,
    states: States,
    estimates: tuple,
    options: dict,
) -> tuple:
    """The force delay found with the chosen ``model`` on ``data``, compensated when it exceeds a
    sample step and lowers the chosen candidate's cross-validated error by more than
    :data:`.selection.TIE`: (data, test, delay, note, selection, model, its regressor W, the
    states of the data, the delay left in them, or why none was found)."""
    step = float(np.median(np.diff(data.t)))
    try:
        found = force_delay(model, data, states=states)[0]
    except PgaDynError as exc:
        return data, test, 0.0, f"not compensated: {exc}", selection, model, W, states, str(exc)
    if abs(found) <= step:
        note = f"{1e3 * found:+.3g} ms found, within a sample step: none"
        return data, test, 0.0, note, selection, model, W, states, found
    shift = step * round(found / step)
    moved, kept = data.aligned_rows(shift)  # compensate(data, test, shift), with the rows of data it keeps
    moved_test = None if test is None else test.aligned(shift)
    chosen = selection.chosen
    fixed = {**options, "friction": chosen.friction, "armature": chosen.armature, "states": state_rows(states, kept)}
    trial, trial_model, trial_W, trial_states = select(robot, moved, estimates=(chosen.estimate,), **fixed)
    before, after = chosen.score, trial.chosen.score
    if after < before * (1 - TIE):
        trial = type(selection)(
            selection.terms, selection.estimates, trial.chosen, trial.folds, trial.by, selection.why
        )
        note = f"{1e3 * shift:+.3g} ms found and compensated: cross-validated RRE {before:.3g} % -> {after:.3g} %"
        return moved, moved_test, shift, note, trial, trial_model, trial_W, trial_states, found - shift
    note = (
        f"{1e3 * shift:+.3g} ms found, not compensated: it does not lower the cross-validated RRE "
        f"({before:.3g} % -> {after:.3g} %)"
    )
    return data, test, 0.0, note, selection, model, W, states, found
