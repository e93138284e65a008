"""Model selection, a stage of the identification (:mod:`identification` lists them in
order): which model terms and which estimate predict forces best, decided by cross-validation
on the identification record alone (never on the test data).

The record is cut into F blocks: its experiments when it has several (leave one experiment
out), else :data:`FOLDS` blocks of equal time. Each candidate is fitted F times, each time on
all blocks but one, and predicts the block it did not see; its cross-validated relative
residual error per coordinate j is

    CV-RRE_j = 100 sqrt(sum_k ||tau_kj - W_kj beta_(-k)||^2 / sum_k ||tau_kj||^2)   (%),

k over the blocks, beta_(-k) the estimate without block k; the candidates are ranked by the
mean of CV-RRE over the coordinates (:attr:`Candidate.score`), the same figure the report gives on
held-out data. Two stages, each a table in the report:

1. **Terms** (when the caller leaves them open): the friction models (none; viscous and
   Coulomb; viscous, Coulomb and an offset) each without and with armature, fitted by WLS. The
   regressor is evaluated once, for the largest model; every block's statistics
   G_kj = W_kj^T W_kj, g_kj = W_kj^T tau_kj, s_kj = ||tau_kj||^2 over its columns are formed
   once, and a candidate's fold fit is the weighted normal equations
   sum_{b != k} sum_j G_bj[C, C] beta / sigma_j^2 = sum_{b != k} sum_j g_bj[C] / sigma_j^2 over its
   columns C (scaled to unit diagonal, solved by least squares), the WLS weights iterated from
   the training blocks' residual sums s - 2 beta^T g + beta^T G beta; the prediction error of
   block k is that same quadratic form on block k. The rows a Coulomb term leaves out (the
   stiction zones, :func:`~identification.model.sliding`) are left out of the fit and kept
   in the prediction error.
2. **Estimate**: for the chosen terms, WLS, OLS, MAP with the default prior
   (:func:`~identification.estimation.map_estimate`) and the physically consistent
   estimate (:func:`~identification.consistency.consistent_estimate`, when Clarabel is
   installed), each fitted per fold the same way (MAP and consistent from the fold's WLS).

The smallest score wins; a candidate within :data:`TIE` (or :data:`TIE_POINTS`) of the best and simpler (fewer
parameters; among estimates, the order WLS, MAP, consistent, OLS) is preferred, so that a
term is added only when it predicts better by more than the folds' own scatter.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .estimation import WLS_ITERATIONS, WLS_RTOL, map_estimate, wls_weights
from .model import identification_model, sign_speeds, sliding, states_of

if TYPE_CHECKING:
    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .data import Trajectory
    from .model import IdentificationModel

#: The number of blocks of time of a record with one experiment.
FOLDS = 5
#: A candidate within this relative margin of the best score counts as tied (the simpler wins).
TIE = 0.01
#: ... or within this many points of RRE (%): on data a model fits to round-off, every score is
#: tiny and a relative margin would let terms fit the numerical error.
TIE_POINTS = 0.05
#: The friction models of the term stage, without and with armature (``friction=None``).
FRICTION_CANDIDATES = ((), ("viscous", "coulomb"), ("viscous", "coulomb", "offset"))
#: The estimates of the estimate stage, in the order of preference at a tie.
ESTIMATES = ("wls", "map", "consistent", "ols")


@dataclass(frozen=True)
class Candidate:
    """One candidate of a selection stage: its ``label``, its ``friction`` models and
    ``armature``, its ``estimate`` (wls, ols, map, consistent), the number of ``parameters``, the
    cross-validated RRE per coordinate ``cv_rre`` (n_a,) (%) and per fold ``fold_rre`` (F, n_a)
    (%), its ``score`` (the mean of ``cv_rre``), and a ``note`` (why it was not evaluated: then
    the figures are None)."""

    label: str
    friction: tuple
    armature: bool
    estimate: str
    parameters: int
    cv_rre: np.ndarray | None
    fold_rre: np.ndarray | None
    note: str = ""

    @property
    def score(self) -> float:
        """The mean cross-validated RRE over the coordinates (inf when not evaluated)."""
        return float("inf") if self.cv_rre is None else float(np.mean(self.cv_rre))

    def report(self) -> dict:
        """The candidate as a JSON-ready dict (its figures None when it was not evaluated)."""
        return {
            "label": self.label,
            "friction": list(self.friction),
            "armature": self.armature,
            "estimate": self.estimate,
            "parameters": self.parameters,
            "cv_rre_%": None if self.cv_rre is None else self.cv_rre.tolist(),
            "score_%": None if self.cv_rre is None else self.score,
            "note": self.note,
        }


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`select`: ``terms`` and ``estimates`` (the candidates of the two
    stages, in evaluation order; ``terms`` empty when the caller fixed them), the ``chosen``
    candidate, ``folds`` (the blocks' (start, stop) sample indices), ``by`` ("experiments" or
    "time") and ``why``, a sentence on the choice."""

    terms: tuple
    estimates: tuple
    chosen: Candidate
    folds: tuple
    by: str
    why: str

    def report(self) -> dict:
        """The selection as a JSON-ready dict: the folds, both stages' candidates, the choice and why."""
        return {
            "folds": len(self.folds),
            "by": self.by,
            "terms": [c.report() for c in self.terms],
            "estimates": [c.report() for c in self.estimates],
            "chosen": self.chosen.report(),
            "why": self.why,
        }


def blocks(data: Trajectory, folds: int = FOLDS) -> tuple:
    """((start, stop), ...) sample ranges of the folds of ``data`` and how they were cut: its
    experiments when it has several, else ``folds`` blocks of equal time."""
    if data.breaks:
        edges = (0, *data.breaks, len(data))
        return tuple(zip(edges[:-1], edges[1:])), "experiments"
    cuts = np.searchsorted(data.t, data.t[0] + (data.t[-1] - data.t[0]) * np.arange(1, folds) / folds)
    edges = (0, *(int(c) for c in cuts), len(data))
    return tuple(zip(edges[:-1], edges[1:])), "time"


def statistics(W: np.ndarray, tau: np.ndarray, rows: np.ndarray | None, folds: tuple) -> tuple:
    """Per fold k and coordinate j the sums over the rows ``rows`` (ns, n_a) bool of the fold
    (None: every row): G (F, n_a, P, P) = W^T W, g (F, n_a, P) = W^T tau, s (F, n_a) = tau^T tau,
    n (F, n_a) the row count; ``W`` (ns, n_a, P), ``tau`` (ns, n_a)."""
    F, na, P = len(folds), W.shape[1], W.shape[2]
    G, g, s, n = np.zeros((F, na, P, P)), np.zeros((F, na, P)), np.zeros((F, na)), np.zeros((F, na))
    for j in range(na):
        Wj, tj = np.ascontiguousarray(W[:, j]), tau[:, j]
        for k, (a, b) in enumerate(folds):
            Wk, tk = Wj[a:b], tj[a:b]
            if rows is not None:
                Wk, tk = Wk[rows[a:b, j]], tk[rows[a:b, j]]
            G[k, j], g[k, j], s[k, j], n[k, j] = Wk.T @ Wk, Wk.T @ tk, tk @ tk, len(tk)
    return G, g, s, n


def solve(G: np.ndarray, g: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """beta of the weighted normal equations sum_j w_j^2 G_j beta = sum_j w_j^2 g_j (G (n_a, p, p),
    g (n_a, p), ``weights`` (n_a,)), on columns scaled to unit diagonal, by least squares."""
    A = np.einsum("jkl,j->kl", G, weights**2)
    b = np.einsum("jk,j->k", g, weights**2)
    d = np.sqrt(np.maximum(np.diag(A), np.finfo(float).tiny))
    return np.linalg.lstsq(A / np.outer(d, d), b / d, rcond=1e-12)[0] / d


def quad(G: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """beta^T G beta over the last two axes of G."""
    return np.einsum("k,...kl,l->...", beta, G, beta)


def fold_fits(fit: tuple, columns: np.ndarray, weighted: bool, p_per: float) -> list:
    """Per fold k: (beta, weights) fitted on every fold but k from the fit statistics ``fit``
    (:func:`statistics`) over the ``columns``: OLS, or WLS with each coordinate's weight 1 /
    sigma_j from the training rows' residuals, iterated (:data:`~.estimation.WLS_ITERATIONS`,
    :data:`~.estimation.WLS_RTOL`); ``p_per`` the parameters per coordinate (p / n_a), the
    degrees of freedom each coordinate's residual loses."""
    G, g, s, n = fit
    G, g = G[:, :, columns][:, :, :, columns], g[:, :, columns]
    out = []
    for k in range(len(G)):
        train = np.arange(len(G)) != k
        Gt, gt, st, nt = G[train].sum(0), g[train].sum(0), s[train].sum(0), n[train].sum(0)
        weights = np.ones(len(st))
        beta = solve(Gt, gt, weights)
        for _ in range(WLS_ITERATIONS if weighted else 0):
            sigma = np.sqrt(np.maximum(st - 2 * gt @ beta + quad(Gt, beta), 0.0) / np.maximum(nt - p_per, 1.0))
            if np.any(sigma <= 0):
                break
            previous, weights = weights, wls_weights(sigma, np.sqrt(st / np.maximum(nt, 1.0)))
            beta = solve(Gt, gt, weights)
            if np.max(np.abs(weights - previous) / previous) < WLS_RTOL:
                break
        out.append((beta, weights))
    return out


def cv_rre(every: tuple, columns: np.ndarray, betas: list) -> tuple:
    """(CV-RRE (n_a,), per-fold RRE (F, n_a)) in % of the fold estimates ``betas`` (one per fold)
    over the ``columns``, from the statistics ``every`` of all rows (:func:`statistics`)."""
    G, g, s, _ = every
    G, g = G[:, :, columns][:, :, :, columns], g[:, :, columns]
    errors = np.array([np.maximum(s[k] - 2 * g[k] @ b + quad(G[k], b), 0.0) for k, b in enumerate(betas)])
    signal = np.maximum(s, np.finfo(float).tiny)
    return 100 * np.sqrt(errors.sum(0) / signal.sum(0)), 100 * np.sqrt(errors / signal)


def label(friction: tuple, armature: bool) -> str:
    """The name of a term candidate: its friction models and armature, or "no friction"."""
    words = " ".join(friction) if friction else "no friction"
    return words + (" + armature" if armature else "")


def columns_in(model: IdentificationModel, union: IdentificationModel) -> np.ndarray:
    """The columns of ``union``'s full regressor [Y_link, D] that are ``model``'s columns of beta
    (``model``'s extras are among ``union``'s)."""
    nphi = model.base.K.shape[1]
    return np.array(
        [k if k < nphi else nphi + union.extras.index(model.extras[k - nphi]) for k in model.leading], dtype=np.int64
    )


def preferred(candidates: list, order: tuple | None = None) -> Candidate:
    """The candidate with the smallest score, or a simpler one within :data:`TIE` (relative) or
    :data:`TIE_POINTS` (absolute) of it: fewer
    parameters, then earlier in ``order`` (estimate names)."""
    best = min(c.score for c in candidates)
    if not np.isfinite(best):
        raise PgaDynError("model selection: no candidate could be evaluated: " + "; ".join(c.note for c in candidates))
    tied = [c for c in candidates if c.score <= best * (1 + TIE) + TIE_POINTS]
    rank = (lambda c: order.index(c.estimate)) if order else (lambda c: 0)
    return min(tied, key=lambda c: (c.parameters, rank(c), c.score))


@one_blas_thread
def select(
    robot: Robot,
    data: Trajectory,
    *,
    friction: tuple | None = None,
    armature: bool | None = None,
    estimates: tuple = ESTIMATES,
    folds: int = FOLDS,
    passive_friction: tuple = (),
    coulomb_speed: float | None = None,
    base: object | None = None,
    prior: tuple | None = None,
    prior_std: float = 0.5,
    bounds: dict | None = None,
    states: States | None = None,
) -> tuple:
    """The model terms and the estimate of ``robot`` that predict the forces of ``data`` best in
    cross-validation (module docstring): ``friction`` (models of
    :func:`~identification.model.friction_terms`) and ``armature`` as given, or chosen when
    None; ``estimates`` the estimates compared (:data:`ESTIMATES`); ``prior`` (theta_0, sigma_0)
    (default: :func:`~.estimation.default_prior` with ``prior_std``)
    and ``bounds`` (keyword arguments of
    :func:`~identification.consistency.consistent_estimate`) for MAP and the consistent
    estimate; ``states`` the pga-dyn states of ``data`` when the caller has them. Returns
    (:class:`Selection`, the chosen :class:`~identification.model.IdentificationModel` with
    its smooth sign's speeds set from ``data``, its regressor W (ns, n_a, p) along ``data``, the
    states of ``data``)."""
    from .consistency import ConsistentProblem
    from .estimation import default_prior, estimate

    if data.tau is None:
        raise PgaDynError(f"{data.source}: no measured tau: nothing to select a model on")
    unknown = [e for e in estimates if e not in ESTIMATES]
    if unknown or not estimates:
        raise PgaDynError(f"model selection: estimates among {', '.join(ESTIMATES)}, got {list(estimates)}")
    frictions = FRICTION_CANDIDATES if friction is None else (tuple(friction),)
    armatures = (False, True) if armature is None else (bool(armature),)
    pairs = [(f, a) for f in frictions for a in armatures]
    common = {"passive_friction": passive_friction, "coulomb_speed": coulomb_speed}
    union_friction = tuple(dict.fromkeys(m for f in frictions for m in f))
    union = identification_model(robot, union_friction, any(armatures), base=base, **common)
    union = sign_speeds(union, data)
    models = {
        pair: replace(identification_model(robot, *pair, base=union.base, **common), sign_speed=union.sign_speed)
        for pair in pairs
    }
    folds_, by = blocks(data, folds)
    if len(folds_) < 2:
        raise PgaDynError(f"{data.source}: model selection needs at least 2 blocks of the record")
    states = states_of(robot, data) if states is None else states
    # the columns of [Y_link, D] some candidate uses, once
    used = np.unique(np.concatenate([columns_in(m, union) for m in models.values()]))
    W = union.full_regressor(states)[:, :, used]
    position = {int(c): k for k, c in enumerate(used)}
    every = statistics(W, data.tau, None, folds_)
    stepped = every
    if union.has_steps:  # the stiction zones' rows left out of the fit: every row's sums less theirs
        zone = statistics(W, data.tau, ~sliding(union, states.qd_a, qd_tree=states.qd), folds_)
        stepped = tuple(a - b for a, b in zip(every, zone))
    na = data.tau.shape[1]

    def linear(pair, weighted):
        model = models[pair]
        cols = np.array([position[int(c)] for c in columns_in(model, union)], dtype=np.int64)
        fits = fold_fits(stepped if model.has_steps else every, cols, weighted, model.num_parameters / na)
        cv, per_fold = cv_rre(every, cols, [b for b, _ in fits])
        return cv, per_fold, fits, cols

    term_candidates = []
    for pair in pairs:
        cv, per_fold, _, _ = linear(pair, True)
        term_candidates.append(Candidate(label(*pair), *pair, "wls", models[pair].num_parameters, cv, per_fold))
    chosen_terms = preferred(term_candidates) if len(pairs) > 1 else term_candidates[0]
    pair = (chosen_terms.friction, chosen_terms.armature)
    model = models[pair]
    cv, per_fold, wls_fits, cols = linear(pair, True)
    estimate_candidates = []
    full = None
    for name in estimates:
        tag = f"{chosen_terms.label}, {name.upper()}"
        if name in ("wls", "ols"):
            cv, per_fold, _, _ = linear(pair, name == "wls")
            estimate_candidates.append(Candidate(tag, *pair, name, model.num_parameters, cv, per_fold))
            continue
        if full is None:
            full = estimate(model, data, states=states, regressor=W[:, :, cols])
            theta_prior = default_prior(full.model, data, relative=prior_std, states=states) if prior is None else prior
        G, *_ = stepped if model.has_steps else every
        betas, note = [], ""
        try:
            problem = ConsistentProblem(model, theta_prior, **(bounds or {})) if name == "consistent" else None
            for k, (beta, weights) in enumerate(wls_fits):
                train = np.arange(len(folds_)) != k
                gram = G[train].sum(0)[:, cols][:, :, cols]
                fold = replace(full, beta=beta, gram=gram, variances=1.0 / weights**2)
                betas.append(
                    map_estimate(fold, theta_prior).beta
                    if problem is None
                    else model.K @ problem.solve(beta, fold.information())
                )
        except PgaDynError as exc:
            note = f"not evaluated: {exc}"
        if note:
            estimate_candidates.append(Candidate(tag, *pair, name, model.num_parameters, None, None, note))
            continue
        cv, per_fold = cv_rre(every, cols, betas)
        estimate_candidates.append(Candidate(tag, *pair, name, model.num_parameters, cv, per_fold))
    chosen = preferred(estimate_candidates, ESTIMATES)
    ranked = sorted((c for c in estimate_candidates if c.cv_rre is not None), key=lambda c: c.score)
    why = (
        f"{chosen.label}: the smallest cross-validated RRE ({chosen.score:.3g} % mean over the coordinates, "
        f"{len(folds_)} folds by {by})"
        if chosen is ranked[0]
        else f"{chosen.label}: within {100 * TIE:g} % of the smallest cross-validated RRE ({ranked[0].score:.3g} %, "
        f"{ranked[0].label}) and simpler"
    )
    if len(pairs) > 1:
        why += f"; terms: {chosen_terms.label} ({chosen_terms.score:.3g} % with WLS)"
    return (
        Selection(
            tuple(term_candidates) if len(pairs) > 1 else (), tuple(estimate_candidates), chosen, folds_, by, why
        ),
        model,
        W[:, :, cols],
        states,
    )
