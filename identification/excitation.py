"""Exciting trajectories, a stage of the identification (:mod:`identification` lists them
in order): finite Fourier series per actuated coordinate (Swevers, Ganseman, Tukel, De Schutter,
Van Brussel 1997), optimised for the condition number of the regressor, with their report
(:meth:`Excitation.report`, :meth:`Excitation.report_text`).

Each actuated coordinate follows

    q_j(t) = c_j + sum_{l=1..L} a_jl sin(2 pi l f t) + b_jl cos(2 pi l f t),

periodic with period 1/f in q, qd and qdd (so a trajectory of whole periods can be repeated
and averaged), with qd and qdd in closed form. c_j is the middle of the coordinate's position
box. A vector x of raw coefficients (n_a, 2 L) becomes a trajectory inside the limits by
scaling each coordinate's coefficients by the largest factor that keeps |q_j - c_j|, |qd_j|
and |qdd_j| within (1 - MARGIN) of the half-width of the box, the velocity and the
acceleration limit on a grid of GRID_PER_HARMONIC points per period of the highest harmonic
(a trigonometric polynomial of degree L exceeds its maximum on such a grid by at most a
factor 1 / cos(pi / GRID_PER_HARMONIC), well inside the margin).

The optimisation (``scipy.optimize.minimize``, L-BFGS-B with the gradient of
:func:`excitation_cost`: analytic through the singular values, the column scaling, the
scaling into the limits and the Fourier basis, with the regressor's derivatives in q, qd and
qdd of every sample from one batch of states) minimises log cond of the column-scaled stacked
regressor W of the identification model (:mod:`identification.model`: base inertial
parameters, and the friction and armature columns asked for) over one period sampled at
``points`` instants. For a robot with closed loops the states are assembled along the
trajectory as the identification assembles a record (:func:`pga_dyn.sampling.record_states`:
the first from q0, each next one from the one before, in the model's assembly mode); a smooth
barrier (:func:`barrier`) holds cond(J_p) of the samples away from ``max_cond`` (from
BARRIER_START of it), a trajectory with a state that does not assemble or has cond(J_p) >=
``max_cond`` costs a penalty, and the final trajectory is checked sample by sample. The start is a random x (coefficients ~ N(0, 1/l)): its trajectory is
:func:`random_excitation`, the peer an optimised trajectory is measured against. When
``tries`` random starts all fail, the position box is halved around the reference
configuration (q0 closed), with a warning, down to MIN_SCALE of its size.

The default ``max_cond`` (:func:`default_max_cond`) keeps a tracked machine in its assembly
mode. The two modes of a loop meet where its passive links line up (a five-bar's distal links
collinear, a four-bar's coupler and rocker: the transmission angle at a dead point). For a loop
whose passive columns of J_p are two rates of equal size at an angle (the five-bar's distal
links of equal length, seen from the tip), J_p^T J_p has the eigenvalues l^2 (1 +- cos delta),
delta the angle between the links' lines, so cond(J_p) = cot(delta / 2): the limit
cot(MIN_TRANSMISSION / 2) = 2.75 keeps the links MIN_TRANSMISSION = 40 degrees from a dead
point, the transmission angle inside [40, 140] degrees of mechanism design (Alt 1932), with
room for the tracking error of a real controller (the test checks the five-bar's angle against
its closed-form inverse kinematics). cond(J_p) is not free of units in general (rows of
rotations and translations, columns of angles and lengths): a machine whose reference is
already above 2.75 is held within REFERENCE_MARGIN = 1.5 times cond(J_p) at its reference, so
that the relative distance to a singular J_p (1 / cond) stays at least 2/3 of the reference's.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.display import number, text_table
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.progress import report

from .data import Trajectory
from .model import identification_model, joint_kinds

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .model import IdentificationModel

#: Limits are kept within this fraction.
MARGIN = 0.01
#: Grid points per period of the highest harmonic on which the limits are enforced.
GRID_PER_HARMONIC = 64
#: Default velocity and acceleration limits of a coordinate: rotations (rad/s, rad/s^2),
#: translations (m/s, m/s^2).
DEFAULT_VELOCITY = {"rotation": 1.0, "translation": 0.25}
DEFAULT_ACCELERATION = {"rotation": 5.0, "translation": 1.0}
#: log cond charged for a trajectory that leaves the workspace or nears a singularity.
PENALTY = 100.0
#: Optimisation instants per harmonic of the period (the default ``points`` of :func:`excite`).
#: The optimised trajectory's condition number is that of every sample: on Puma560 and UR5 (20 s
#: at 200 Hz, 5 harmonics, seeds 0 and 1) 40 instants gave the same as 100 (within 1 %, either
#: way), at 2 to 2.5 times less cost (docs/performance.md).
POINTS_PER_HARMONIC = 8
#: Instants per harmonic at which a random start is checked (each state valid) when ``points`` is
#: not given.
CHECK_PER_HARMONIC = 20
#: The barrier of :func:`barrier` starts at this fraction of the cond(J_p) limit.
BARRIER_START = 0.9
#: Difference steps of the regressor's derivatives in :func:`excitation_cost`: fractions of the
#: half-width of the position box, of the velocity and of the acceleration limit.
STEP_Q = 1e-5
STEP_QD = 1e-6
STEP_QDD = 0.1
#: The smallest angle (degrees) between a loop's passive links and a dead point (links lined up,
#: where two assembly modes meet) on a default exciting trajectory, and the cond(J_p) limit it
#: gives, cot(MIN_TRANSMISSION / 2) (module docstring).
MIN_TRANSMISSION = 40.0
TRANSMISSION_COND = float(1 / np.tan(np.radians(MIN_TRANSMISSION) / 2))
#: A machine whose reference configuration is above TRANSMISSION_COND is held within this factor
#: of its cond(J_p) there.
REFERENCE_MARGIN = 1.5
#: Random starts drawn before the position box is halved around the reference, and the smallest
#: share of the box that is tried.
TRIES = 50
MIN_SCALE = 1.0 / 16


def default_max_cond(robot: Robot) -> float:
    """The default cond(J_p) limit of an exciting trajectory of ``robot``: TRANSMISSION_COND, or
    REFERENCE_MARGIN times cond(J_p) at the reference configuration when that is larger (module
    docstring)."""
    from pga_dyn.loops import constraints

    if not robot.constrained or not constraints(robot).nf:
        return TRANSMISSION_COND
    return float(max(TRANSMISSION_COND, REFERENCE_MARGIN * constraints(robot).cond_ref))


@dataclass(frozen=True, eq=False)
class Fourier:
    """q_j(t) = offset_j + sum_l a[j, l-1] sin(2 pi l f t) + b[j, l-1] cos(2 pi l f t)."""

    frequency: float
    offset: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def evaluate(self, t: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, qdd (ns, n_a) at times ``t`` (ns,)."""
        B, Bd, Bdd = basis(t, self.frequency, self.a.shape[1])
        c = np.concatenate([self.a, self.b], axis=1)  # (n_a, 2 L)
        return self.offset + B @ c.T, Bd @ c.T, Bdd @ c.T


def basis(t: npt.ArrayLike, frequency: float, harmonics: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B, Bd, Bdd (ns, 2 L) at times ``t`` (ns,): with the coefficients c_j = (a_j1..a_jL,
    b_j1..b_jL) of a coordinate, q_j - offset_j = B c_j, qd_j = Bd c_j, qdd_j = Bdd c_j, the
    columns sin(w_l t), cos(w_l t) (w_l = 2 pi l f) and their first and second derivatives."""
    w = 2 * np.pi * frequency * np.arange(1, harmonics + 1)  # (L,)
    s, c = np.sin(np.outer(np.asarray(t, dtype=float), w)), np.cos(np.outer(np.asarray(t, dtype=float), w))
    return np.hstack([s, c]), np.hstack([c * w, -s * w]), -np.hstack([s, c]) * np.tile(w**2, 2)


@dataclass(frozen=True)
class Limits:
    """Position box (n_a, 2), velocity and acceleration limits (n_a,) of the actuated coordinates."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    def check(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> list:
        """The limits that samples (ns, n_a) break, as sentences (empty when none)."""
        out = []
        for name, x, lo, hi in (
            ("position", q, self.position[:, 0], self.position[:, 1]),
            ("velocity", qd, -self.velocity, self.velocity),
            ("acceleration", qdd, -self.acceleration, self.acceleration),
        ):
            bad = np.flatnonzero(np.any((x < lo) | (x > hi), axis=0))
            out += [f"{name} of coordinate {j} outside [{lo[j]:.6g}, {hi[j]:.6g}]" for j in bad]
        return out


def _per_coordinate(robot, name: str, value, default: dict) -> np.ndarray:
    """(n_a,) positive limits from None (``default`` by joint kind), a number, (n_a,) numbers
    or {coordinate name: number}."""
    names = list(robot.actuated_names)
    kinds = joint_kinds(robot)
    for name, kind in zip(names, kinds):
        if kind not in ("R", "P", "U"):
            raise PgaDynError(
                f"{robot.name}: actuated coordinate '{name}' belongs to a joint of type {kind}; "
                "exciting trajectories are made for revolute, prismatic and universal joints (not "
                "floating bases or spherical joints)"
            )
    out = np.array([default["translation" if kind == "P" else "rotation"] for kind in kinds])
    if isinstance(value, dict):
        for key, v in value.items():
            if key not in names:
                raise PgaDynError(f"{name}: '{key}' is not an actuated coordinate of '{robot.name}' ({names})")
            out[names.index(key)] = v
    elif value is not None:
        out = (
            np.broadcast_to(np.asarray(value, dtype=float), out.shape).copy()
            if np.ndim(value) == 0
            else np.asarray(value, dtype=float)
        )
    if out.shape != (len(names),) or not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise PgaDynError(f"{name} must be positive and finite, one per actuated coordinate {names}, got {value!r}")
    return out


def limits(
    robot: Robot,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    velocity: float | npt.ArrayLike | dict[str, float] | None = None,
    acceleration: float | npt.ArrayLike | dict[str, float] | None = None,
) -> Limits:
    """The :class:`Limits` of ``robot``'s actuated coordinates: the position box of
    :func:`pga_dyn.sampling.bounds_array` (``bounds``; default the joint limits), velocity and
    acceleration limits (a number, one per coordinate, or a dict by coordinate name; default
    :data:`DEFAULT_VELOCITY`, :data:`DEFAULT_ACCELERATION`)."""
    from pga_dyn.sampling import bounds_array

    return Limits(
        bounds_array(robot, bounds),
        _per_coordinate(robot, "velocity", velocity, DEFAULT_VELOCITY),
        _per_coordinate(robot, "acceleration", acceleration, DEFAULT_ACCELERATION),
    )


def fit(x: np.ndarray, box: Limits, frequency: float) -> Fourier:
    """The Fourier series of raw coefficients ``x`` (n_a, 2 L), scaled per coordinate into the
    limits ``box`` (module docstring)."""
    L = x.shape[1] // 2
    scale = scales(x, box, frequency)[0]
    return Fourier(frequency, box.position.mean(axis=1), x[:, :L] * scale[:, None], x[:, L:] * scale[:, None])


def scales(x: np.ndarray, box: Limits, frequency: float) -> tuple[np.ndarray, np.ndarray]:
    """The factors s (n_a,) that :func:`fit` scales each coordinate's raw coefficients ``x``
    (n_a, 2 L) by, and their gradients ds_j/dx_j (n_a, 2 L). s_j = (1 - MARGIN) min(h_j / m_j,
    v_j / md_j, a_j / mdd_j), the limits over the largest |q_j - c_j|, |qd_j|, |qdd_j| on the
    grid, m_j = max_g |B_g x_j| (:func:`basis`); where the maximum is attained at one grid point
    g and one ratio is the smallest, ds_j/dx_j = -(s_j / m_j) sign(B_g x_j) B_g (everywhere
    but on a set of measure zero). A zero x_j gives s_j = 0 and a zero gradient."""
    na, L = x.shape[0], x.shape[1] // 2
    grid = np.arange(GRID_PER_HARMONIC * L) / (GRID_PER_HARMONIC * L * frequency)
    half = 0.5 * (box.position[:, 1] - box.position[:, 0])
    peaks, rows = [], []
    for B in basis(grid, frequency, L):
        v = B @ x.T  # (grid, n_a)
        g = np.abs(v).argmax(axis=0)
        peaks.append(np.abs(v[g, np.arange(na)]))
        rows.append(np.sign(v[g, np.arange(na)])[:, None] * B[g])  # d peak_j / d x_j (n_a, 2 L)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.array([half, box.velocity, box.acceleration]) / np.array(peaks)  # (3, n_a)
    k = ratios.argmin(axis=0)
    scale = (1 - MARGIN) * ratios[k, np.arange(na)]
    valid = np.isfinite(scale)
    scale = np.where(valid, scale, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = -(scale / np.array(peaks)[k, np.arange(na)])[:, None] * np.array(rows)[k, np.arange(na)]
    return scale, np.where(valid[:, None], grad, 0.0)


@dataclass(frozen=True, eq=False)
class Excitation:
    """An exciting trajectory: ``trajectory`` (its samples), ``fourier`` (the series),
    ``limits``; ``cond`` the condition number of the column-scaled stacked regressor of the
    identification model over all samples and ``cond_start`` that of the random start;
    ``max_cond_jp`` the largest cond(J_p) of the samples (1 for a tree) and ``max_cond`` the
    limit it was kept below; ``iterations`` of the optimiser (0: not optimised); ``model`` the
    :class:`~identification.model.IdentificationModel` whose regressor was conditioned."""

    trajectory: Trajectory
    fourier: Fourier
    limits: Limits
    cond: float
    cond_start: float
    max_cond_jp: float
    iterations: int
    model: object
    max_cond: float

    def coefficients(self) -> dict:
        """The Fourier series as a controller replays it, JSON-ready: ``formula``, ``frequency``
        (Hz), ``period`` (s), ``coordinates`` (n_a names), ``q0`` (n_a,: the offsets c_j), ``a``,
        ``b`` (n_a, L: the sine and cosine coefficients of harmonics 1..L), so that
        q_j(t) = q0_j + sum_l a_jl sin(2 pi l f t) + b_jl cos(2 pi l f t), and qd, qdd its
        derivatives (module docstring); t = 0 is the first sample of the trajectory."""
        f = self.fourier
        return {
            "formula": "q_j(t) = q0_j + sum_{l=1..L} a_jl sin(2 pi l f t) + b_jl cos(2 pi l f t)",
            "frequency": float(f.frequency),
            "period": float(1 / f.frequency),
            "harmonics": int(f.a.shape[1]),
            "coordinates": list(self.trajectory.names),
            "q0": f.offset.tolist(),
            "a": f.a.tolist(),
            "b": f.b.tolist(),
        }

    def write_coefficients(self, path: os.PathLike | str) -> None:
        """Write :meth:`coefficients` to ``path``: JSON (``.json``) or NPZ (``.npz``: arrays
        frequency, q0 (n_a,), a, b (n_a, L) and coordinates)."""
        import json

        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        c = self.coefficients()
        if ext == ".json":
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(c, handle, indent=2)
                handle.write("\n")
        elif ext == ".npz":
            with open(path, "wb") as handle:
                np.savez(
                    handle,
                    frequency=c["frequency"],
                    q0=self.fourier.offset,
                    a=self.fourier.a,
                    b=self.fourier.b,
                    coordinates=np.array(c["coordinates"]),
                )
        else:
            raise PgaDynError(f"{path}: a file of Fourier coefficients must end in .json or .npz")

    def at_rate(self, rate: float) -> Trajectory:
        """The trajectory sampled at ``rate`` Hz over the same duration (a controller's rate): the
        series is exact at any instant and inside the limits at every instant (:func:`fit`); its
        assembly was checked at the samples of :attr:`trajectory`."""
        if not (isinstance(rate, (int, float)) and np.isfinite(rate) and rate > 0):
            raise PgaDynError(f"rate must be a positive number, got {rate!r}")
        traj = self.trajectory
        duration = len(traj) * float(traj.t[1] - traj.t[0])
        t = np.arange(int(round(duration * rate))) / rate
        if len(t) < 2:
            raise PgaDynError(f"{duration:g} s at {rate:g} Hz gives {len(t)} samples")
        q, qd, qdd = self.fourier.evaluate(t)
        return Trajectory(traj.names, t, q, qd, qdd, None, f"excitation at {rate:g} Hz", "given")

    def report(self, file: os.PathLike | str | None = None) -> dict:
        """A JSON-ready dict of the excitation (what ``pga-dyn excite --json`` writes): robot,
        ``file`` (where the trajectory was written; None: not written), samples, duration (s),
        rate (Hz), period (s), harmonics, coordinates, the model's parameters, condition number
        (and that of the random start), iterations, max_cond_jp and the limits (position box
        (n_a, 2), velocity and acceleration (n_a,))."""
        box, traj = self.limits, self.trajectory
        rate = 1 / float(traj.t[1] - traj.t[0])
        return {
            "robot": self.model.robot.name,
            "file": None if file is None else os.fspath(file),
            "samples": len(traj),
            "duration": len(traj) / rate,
            "rate": rate,
            "period": float(1 / self.fourier.frequency),
            "harmonics": self.fourier.a.shape[1],
            "coordinates": list(traj.names),
            "parameters": list(self.model.names),
            "condition_number": self.cond,
            "condition_number_start": self.cond_start,
            "iterations": self.iterations,
            "max_cond_jp": self.max_cond_jp,
            "limits": {
                "position": box.position.tolist(),
                "velocity": box.velocity.tolist(),
                "acceleration": box.acceleration.tolist(),
            },
        }

    def report_text(self, file: os.PathLike | str | None = None) -> list:
        """The lines of text of :meth:`report` (what ``pga-dyn excite`` prints): the trajectory,
        the condition number, for closed loops the largest cond(J_p), and a table of the limits."""
        r = self.report(file)
        where = "" if file is None else f"{file}: "
        lines = [
            f"robot:            {r['robot']}",
            f"trajectory:       {where}{r['samples']} samples, {r['duration']:g} s at {r['rate']:g} Hz; "
            f"Fourier series, period {r['period']:g} s, {r['harmonics']} harmonics",
            f"condition number: {r['condition_number']:.4g} (column-scaled regressor of {len(r['parameters'])} "
            f"parameters; random start {r['condition_number_start']:.4g}, {r['iterations']} iterations)",
        ]
        if self.model.robot.constrained:
            lines.append(
                f"assembly:         every sample assembled, cond(J_p) <= {r['max_cond_jp']:.3g} "
                f"(limit {self.max_cond:g})"
            )
        rows = [
            (name, f"[{lo:.4g}, {hi:.4g}]", number(v), number(a))
            for name, (lo, hi), v, a in zip(
                r["coordinates"], r["limits"]["position"], r["limits"]["velocity"], r["limits"]["acceleration"]
            )
        ]
        return (
            lines
            + ["", "Limits (respected at every sample)"]
            + text_table(("coordinate", "position", "velocity", "acceleration"), rows)
        )


def scaled_condition(W: np.ndarray) -> float:
    """The condition number of W (rows, p) with its columns scaled to unit norm (inf when a
    column is zero or W is rank-deficient)."""
    norms = np.linalg.norm(W, axis=0)
    if np.any(norms == 0):
        return np.inf
    s = np.linalg.svd(W / norms, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


def _condition(model, fourier: Fourier, t, max_cond: float):
    """(cond of the column-scaled regressor, max cond(J_p)) along ``fourier`` at times ``t``
    (assembled along the trajectory, :func:`pga_dyn.sampling.record_states`); (inf, reason) when
    a state does not assemble or is too close to a singularity."""
    from pga_dyn.sampling import record_states

    q, qd, qdd = fourier.evaluate(t)
    try:
        states = record_states(model.robot, t, q, qd, qdd, max_cond=max_cond, source="the exciting trajectory")
    except PgaDynError as exc:
        return np.inf, str(exc)
    return scaled_condition(model.regressor(states).reshape(-1, model.num_parameters)), float(states.cond.max())


def excitation_cost(
    model: IdentificationModel, x: np.ndarray, box: Limits, frequency: float, t: np.ndarray, max_cond: float
) -> tuple[float, np.ndarray]:
    """The cost that :func:`excite` minimises and its gradient: c = log cond of the column-scaled
    stacked regressor W (ns n_a, p) along ``fit(x, box, frequency)`` at times ``t`` (ns,), plus
    the sum of :func:`barrier` over the samples' cond(J_p) / ``max_cond`` (zero for a tree), and
    dc/dx (n_a, 2 L); (PENALTY, zeros) when a state (or a state within the difference steps
    below) does not assemble or has cond(J_p) >= ``max_cond``.

    The gradient by the chain rule (module docstring): with A = W N^-1 (N the column norms
    n_k) = U S V^T, dc/dA = u_1 v_1^T / s_1 - u_p v_p^T / s_p (simple extreme singular values);
    through the column scaling dc/dW_k = (I - a_k a_k^T) (dc/dA)_k / n_k (a_k the unit column
    k of A); each block of W depends on the state of its own sample only, so dc/dq_j(t_i) =
    <dc/dW_i, dW_i/dq_j> (and alike for qd_j, qdd_j), with dW/dq_j, dW/dqd_j, dW/dqdd_j of every
    sample from states projected, for dW/dq_j, at q +- h G_j (:func:`pga_dyn.sampling.projected_states`:
    dq/dq_a = G, so the central difference along G is the derivative along the assembly up to
    O(h^2), without assembling again), for dW/dqd_j at the assembled configuration q, the copies
    sharing its projection (G and J_f^+ computed once per sample, the bias Jd qd for each copy's
    qd), and for dW/dqdd_j from the sample's own states (the projection's qdd = G qdd_a - E_f
    J_f^+ Jd qd is affine in qdd_a: the copy's qdd is qdd + h G_j): differences with steps STEP_Q times the half-width of the
    position box, STEP_QD times the velocity limit and STEP_QDD times the acceleration limit;
    forward in qdd, exact up to round-off (W is affine in qdd: the regressor is linear in the
    tree's accelerations, which are affine in qdd, eq. 92), central in qd, exact up to round-off
    (the inertial columns are quadratic in qd; the extra columns are functions of qd that a
    difference crosses only where a sample's |qd_j| is below the step) and central in q, with
    an error O(STEP_Q^2); q_j = c_j + B s_j
    x_j, qd_j = Bd s_j x_j, qdd_j = Bdd s_j x_j (:func:`basis`) with the scale s_j of
    :func:`scales`, so dc/dx_j = s_j g_j + (x_j . g_j) ds_j/dx_j, g_j = B^T dc/dq_j +
    Bd^T dc/dqd_j + Bdd^T dc/dqdd_j."""
    from pga_dyn.sampling import projected_states, record_states

    na, L, p, ns = x.shape[0], x.shape[1] // 2, model.num_parameters, len(t)
    scale, dscale = scales(x, box, frequency)
    B = basis(t, frequency, L)
    c = x * scale[:, None]
    none = (PENALTY, np.zeros_like(x))
    try:
        states = record_states(
            model.robot,
            t,
            box.position.mean(axis=1) + B[0] @ c.T,
            B[1] @ c.T,
            B[2] @ c.T,
            max_cond=max_cond,
            source="the exciting trajectory",
        )
    except PgaDynError:
        return none
    half = 0.5 * (box.position[:, 1] - box.position[:, 0])
    steps = np.array([STEP_Q * half, STEP_QD * box.velocity, STEP_QDD * box.acceleration])  # (3, n_a)
    # the copies, for each j: q_j +- h (the tree moved along G, projected there), then qd_j +- h and
    # qdd_j + h at the sample's configuration, sharing its projection
    e = np.eye(na)
    signed = [(j, sign) for j in range(na) for sign in (1.0, -1.0)]
    moved = projected_states(
        model.robot,
        np.concatenate([states.q + sign * steps[0, j] * states.G[:, :, j] for j, sign in signed]),
        np.concatenate([states.q_a + sign * steps[0, j] * e[j] for j, sign in signed]),
        np.concatenate([states.qd_a] * len(signed)),
        np.concatenate([states.qdd_a] * len(signed)),
    )
    if not np.all(moved.cond < max_cond):
        return none
    qd_sets = np.stack([states.qd_a + sign * steps[1, j] * e[j] for j, sign in signed])
    velocities = projected_states(model.robot, states.q, states.q_a, qd_sets, np.stack([states.qdd_a] * len(signed)))
    # qdd_j + h: the tree's qdd + h G_j, as the projection's qdd = G qdd_a - E_f J_f^+ Jd qd is affine in qdd_a
    accelerations = replace(
        states,
        **{name: np.concatenate([getattr(states, name)] * na) for name in ("q", "qd", "q_a", "qd_a", "G", "cond")},
        qdd=np.concatenate([states.qdd + steps[2, j] * states.G[:, :, j] for j in range(na)]),
        qdd_a=np.concatenate([states.qdd_a + steps[2, j] * e[j] for j in range(na)]),
    )
    shifted = [model.regressor(x) for x in (moved, velocities, accelerations)]
    W = np.concatenate([model.regressor(states)[None], np.concatenate(shifted).reshape(5 * na, ns, na, p)])
    norms = np.linalg.norm(W[0].reshape(-1, p), axis=0)
    if np.any(norms == 0):
        return none
    A = W[0].reshape(-1, p) / norms
    U, sv, Vt = np.linalg.svd(A, full_matrices=False)
    if not sv[-1] > 0:
        return none
    GA = np.outer(U[:, 0], Vt[0]) / sv[0] - np.outer(U[:, -1], Vt[-1]) / sv[-1]
    GW = ((GA - A * np.sum(A * GA, axis=0)) / norms).reshape(ns, na, p)
    central = W[1 : 1 + 4 * na]
    D = np.concatenate(
        [
            (central[0::2] - central[1::2]) / (2 * steps[:2].reshape(-1))[:, None, None, None],
            (W[1 + 4 * na :] - W[0]) / steps[2][:, None, None, None],
        ]
    )  # (3 n_a, ns, n_a, p)
    g = np.einsum("kirp,irp->ki", D, GW).reshape(3, na, ns)
    # the barrier on cond(J_p), a function of q only: its central differences from the q copies
    cond = moved.cond.reshape(len(signed), ns)
    value, slope = barrier(states.cond / max_cond)
    g[0] += slope / max_cond * (cond[0 : 2 * na : 2] - cond[1 : 2 * na : 2]) / (2 * steps[0][:, None])
    grad = np.einsum("kjn,knm->jm", g, np.stack(B))  # dc/dc_j (n_a, 2 L)
    cost = float(np.log(sv[0] / sv[-1]) + value.sum())
    return cost, scale[:, None] * grad + dscale * np.sum(x * grad, axis=1)[:, None]


def barrier(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The barrier b(r) (ns,) on the ratios r = cond(J_p) / max_cond (ns,) of the samples, and
    db/dr: zero up to BARRIER_START = r_0, then ((r - r_0) / (1 - r))^2, continuously
    differentiable, growing without bound as r -> 1 (the limit), so that the optimiser is held
    away from the limit smoothly instead of meeting the PENALTY of a trajectory that reaches it:
    db/dr = 2 (r - r_0) (1 - r_0) / (1 - r)^3."""
    r0 = BARRIER_START
    over = np.maximum(r - r0, 0.0)
    return (over / (1 - r)) ** 2, 2 * over * (1 - r0) / (1 - r) ** 3


def _setup(
    robot, duration, rate, period, harmonics, friction, armature, bounds, velocity, acceleration, model, max_cond
):
    """(harmonics, sample times (ns,), Limits, model, max_cond) of :func:`excite`, checked."""
    from pga_dyn.sampling import count

    harmonics = count("harmonics", harmonics)
    if max_cond is None:
        max_cond = default_max_cond(robot)
    elif not (isinstance(max_cond, (int, float)) and max_cond > 1):
        raise PgaDynError(f"max_cond must be a number above 1, got {max_cond!r}")
    for name, value in (("duration", duration), ("rate", rate), ("period", period)):
        if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
            raise PgaDynError(f"{name} must be a positive number, got {value!r}")
    ns = int(round(duration * rate))
    if ns < 2:
        raise PgaDynError(f"duration {duration} s at {rate} Hz gives {ns} samples")
    box = limits(robot, bounds, velocity, acceleration)
    model = identification_model(robot, friction, armature) if model is None else model
    return harmonics, np.arange(ns) / rate, box, model, float(max_cond)


def _finish(model, fourier, t, box, max_cond, cond_start, iterations) -> Excitation:
    q, qd, qdd = fourier.evaluate(t)
    broken = box.check(q, qd, qdd)
    if broken:  # cannot happen for a scaled series: a bug, not bad input
        raise RuntimeError(f"the exciting trajectory breaks its limits: {broken}")
    cond, info = _condition(model, fourier, t, max_cond)
    if not np.isfinite(cond):
        raise PgaDynError(
            f"{model.robot.name}: the exciting trajectory is not valid at every sample ({info}); "
            "narrow the position box (bounds)"
        )
    traj = Trajectory(tuple(model.robot.actuated_names), t, q, qd, qdd, None, "excitation", "given")
    return Excitation(
        traj, fourier, box, cond, cond if cond_start is None else cond_start, info, iterations, model, max_cond
    )


def _start(rng, na: int, harmonics: int, box: Limits, frequency: float, model, t_opt, max_cond):
    """(x, box): a random raw start x and the position box it was fitted into; a start whose
    trajectory is not valid at ``t_opt`` is drawn again, and after TRIES draws the box is halved
    around the reference configuration's actuated coordinates (with a warning), down to
    MIN_SCALE of it."""
    robot, scale = model.robot, 1.0
    centre = box.position.mean(axis=1)
    if robot.constrained:
        from pga_dyn.loops import constraints

        centre = np.clip(constraints(robot).z_ref[:na], box.position[:, 0], box.position[:, 1])
    while scale >= MIN_SCALE:
        narrowed = Limits(centre[:, None] + scale * (box.position - centre[:, None]), box.velocity, box.acceleration)
        for _ in range(TRIES):
            x = rng.standard_normal((na, 2 * harmonics)) / np.tile(np.arange(1, harmonics + 1), 2)
            if np.isfinite(_condition(model, fit(x, narrowed, frequency), t_opt, max_cond)[0]):
                if scale < 1.0:
                    warnings.warn(
                        f"{robot.source or robot.name}: no valid random trajectory in {TRIES} draws in the "
                        f"position box (each left the workspace or had cond(J_p) >= {max_cond:.3g}): the "
                        f"box was shrunk {1 / scale:g} times around the reference configuration, to "
                        f"{np.round(narrowed.position, 4).tolist()}",
                        PgaDynWarning,
                        stacklevel=4,
                    )
                return x, narrowed
        scale /= 2
    raise PgaDynError(
        f"{robot.name}: no valid random trajectory in {TRIES} draws, down to a box {1 / MIN_SCALE:g} "
        f"times narrower around the reference (every one leaves the workspace or has cond(J_p) >= "
        f"{max_cond:.3g}); narrow the position box (bounds) or raise max_cond"
    )


def _opt_times(model, harmonics, frequency, points, per_harmonic=CHECK_PER_HARMONIC):
    """``points`` instants of one period (default: ``per_harmonic`` per harmonic, at least 4 regressor
    rows per parameter)."""
    if points is None:
        points = max(per_harmonic * harmonics, -(-4 * model.num_parameters // len(model.robot.actuated)))
    return np.arange(points) / (points * frequency)


@one_blas_thread
def random_excitation(
    robot: Robot,
    duration: float = 20.0,
    rate: float = 200.0,
    period: float = 10.0,
    harmonics: int = 5,
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    velocity: float | npt.ArrayLike | dict[str, float] | None = None,
    acceleration: float | npt.ArrayLike | dict[str, float] | None = None,
    seed: int | None = None,
    max_cond: float | None = None,
    model: IdentificationModel | None = None,
) -> Excitation:
    """A random Fourier trajectory inside the limits (the start of :func:`excite`, not optimised);
    arguments as :func:`excite`."""
    harmonics, t, box, model, max_cond = _setup(
        robot, duration, rate, period, harmonics, friction, armature, bounds, velocity, acceleration, model, max_cond
    )
    rng = np.random.default_rng(seed)
    t_opt = _opt_times(model, harmonics, 1 / period, None)
    x, box = _start(rng, len(robot.actuated), harmonics, box, 1 / period, model, t_opt, max_cond)
    fourier = fit(x, box, 1 / period)
    return _finish(model, fourier, t, box, max_cond, None, 0)


#: The name under which :func:`excite` reports its iterations to :mod:`pga_dyn.progress`.
STEP = "optimising the excitation"


@one_blas_thread
def excite(
    robot: Robot,
    duration: float = 20.0,
    rate: float = 200.0,
    period: float = 10.0,
    harmonics: int = 5,
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    velocity: float | npt.ArrayLike | dict[str, float] | None = None,
    acceleration: float | npt.ArrayLike | dict[str, float] | None = None,
    seed: int | None = None,
    max_cond: float | None = None,
    iterations: int = 100,
    points: int | None = None,
    model: IdentificationModel | None = None,
) -> Excitation:
    """An exciting trajectory of ``duration`` s sampled at ``rate`` Hz: a Fourier series of
    ``harmonics`` harmonics of the base frequency 1 / ``period`` per actuated coordinate, inside
    the limits (:func:`limits`: ``bounds``, ``velocity``, ``acceleration``), optimised from a
    random start (``seed``) for at most ``iterations`` L-BFGS-B iterations to minimise the
    condition number of the identification model's regressor (``friction``, ``armature``, or
    ``model``) over one period at ``points`` instants (default: POINTS_PER_HARMONIC per harmonic, at least 4
    regressor rows per parameter). For closed loops every sample assembles along the trajectory
    with cond(J_p) < ``max_cond`` (default :func:`default_max_cond`). Each iteration is reported
    to :mod:`pga_dyn.progress` (step "optimising the excitation")."""
    from pga_dyn.errors import optional
    from pga_dyn.sampling import count

    minimize = optional("scipy.optimize", "the optimisation of an exciting trajectory").minimize

    iterations = count("iterations", iterations)
    harmonics, t, box, model, max_cond = _setup(
        robot, duration, rate, period, harmonics, friction, armature, bounds, velocity, acceleration, model, max_cond
    )
    frequency, na = 1 / period, len(robot.actuated)
    points = points if points is None else count("points", points)
    t_check = _opt_times(model, harmonics, frequency, points)
    x0, box = _start(np.random.default_rng(seed), na, harmonics, box, frequency, model, t_check, max_cond)
    t_opt = _opt_times(model, harmonics, frequency, points, POINTS_PER_HARMONIC)
    cond_start = _condition(model, fit(x0, box, frequency), t, max_cond)[0]

    def cost(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = excitation_cost(model, x.reshape(na, -1), box, frequency, t_opt, max_cond)
        return value, grad.ravel()

    done = [0]

    def step(intermediate_result: object) -> None:
        done[0] += 1
        report(STEP, done[0], iterations)

    result = minimize(cost, x0.ravel(), jac=True, method="L-BFGS-B", callback=step, options={"maxiter": iterations})
    if done[0] < iterations:  # the optimiser stopped early: the step is finished
        report(STEP, iterations, iterations)
    best = result.x if result.fun <= cost(x0.ravel())[0] else x0.ravel()
    return _finish(model, fit(best.reshape(na, -1), box, frequency), t, box, max_cond, cond_start, done[0])
