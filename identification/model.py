"""The model columns, a stage of the identification (:mod:`identification` lists them in
order): the parameters an identification estimates (the base inertial parameters, joint
friction and rotor inertia, armature), with the identifiability of all of them decided
together, their regressor, and the pga-dyn states of a trajectory (:func:`states_of`) at which
it is evaluated.

The model of the generalized forces of the actuated coordinates is

    tau = Y_link(q, qd, qdd) phi + D(q, qd, qdd) x,

phi (10 n) the link-frame inertial parameters (:mod:`drng.regrouping`) and x (n_e) the
*extra* terms (``EXTRA_TERMS``, named with their prefix and the coordinate, ``fv_joint``). Per
actuated coordinate j, with s = sign(qd_j) and the ``friction`` models of
:func:`friction_terms` (docs/identification.md, "Friction"):

* ``viscous``  fv_j: tau_j += fv_j qd_j
* ``coulomb``  fc_j: tau_j += fc_j s (its rows inside a stiction zone are left out, :func:`sliding`),
  with s the *smooth* sign tanh(qd_j / v_0,j), v_0 the velocity's noise scale (:func:`sign_speeds`):
  sign(qd_j) to 1e-20 outside the stiction zone, where the fit looks, and a continuous ramp
  through 0 inside it, so that a prediction never flips the Coulomb force on the noise of a
  standing joint's velocity (docs/identification.md, "Friction where arms stop")
* ``offset``   f0_j: tau_j += f0_j (a constant: a sensor offset, or an asymmetric Coulomb friction)
* ``armature`` Ia_j: tau_j += Ia_j qdd_j, the inertia of the rotor and gears reflected to the
  coordinate (a rotor of inertia I_r behind a gear of ratio r gives Ia = r^2 I_r). A rotor
  modelled as a body of its own (a URDF+ ``<coupling>`` with its ratio) is part of phi instead.
* ``coulomb-tanh`` fc_j: tau_j += fc_j tanh(qd_j / v_c), the Coulomb force with a smooth sign
  of a stated speed scale v_c (``coulomb_speed``; every row is kept);
* ``stribeck`` fc_j, fs_j: tau_j += (fc_j + (fs_j - fc_j) exp(-(qd_j / v_s)^2)) s, i.e. the
  columns s (1 - e) of fc_j and s e of fs_j, e = exp(-(qd_j / v_s)^2): linear in fc, fs for a
  given Stribeck speed v_s (``stribeck_speed``), which
  :func:`identification.estimation.stribeck_estimate` fits (nonlinear);
* ``viscous+-`` fv+_j, fv-_j: tau_j += fv+_j max(qd_j, 0) + fv-_j min(qd_j, 0), and
  ``coulomb+-`` fc+_j, fc-_j: tau_j += fc+_j max(s, 0) + fc-_j min(s, 0): per direction (s smooth
  as for ``coulomb``).

At most one Coulomb shape (coulomb, coulomb-tanh, stribeck) is chosen. Only the coordinates of
revolute, prismatic and universal joints get extra terms (not those of a floating base or a
spherical joint).

Friction at the *passive* coordinates k of a closed loop or a coupling (``passive_friction``:
``viscous`` fv_k, ``coulomb`` fc_k, named after the passive coordinate) acts on the tree
coordinates, F_k(qd_k) = fv_k qd_k or fc_k sign(qd_k), and reaches the actuated ones through the
projection of the loops, tau_a += G^T F (eq. 52, G = dq/dq_a of :class:`pga_dyn.States`): the
column of fv_k is G[k, :]^T qd_k. Its power is the friction's, qd_a^T G^T F = qd^T F.

With theta = (phi, x) and the base parameters beta_b = K phi of :func:`drng.base_parameters`,
tau = Y_b beta_b + D x. An extra column may be a combination of the base regressor's columns
(the armature of a joint whose first body turns about a fixed axis: Ia_1 moves with Izz1 of a
vertical first joint) or of the other extras (an offset with per-direction Coulomb terms:
1 = max(s, 0) - min(s, 0)); then it is regrouped, by the same elimination as the base
parameters (:func:`drng.regrouping.regroup`), the extras offered first, the last term first:

    tau = W(q, qd, qdd) beta,   beta = K theta (p),   W = [Y_link, D][:, leading].

Identifiability of the extras is read from the stacked [Y_b, D] of random valid states
(:func:`pga_dyn.sample_states`; qd in (-1, 1), so every sign occurs): its rank at the largest
singular gap of the column-scaled matrix (:func:`drng.numerical.sampled_nullspace`), trusted
only when the gap is clean (:data:`drng.numerical.GAP_MIN`), else PgaDynError. The speed
scales enter the columns, not their dependencies: the Stribeck columns are decided at the
model's ``stribeck_speed`` (default :data:`STRIBECK_SPEED`) and keep their regrouping when it
is fitted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .signals import white_noise

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from drng.regrouping import BaseParameters
    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

    from .data import Trajectory

#: The extra terms (the columns of D) and the prefixes of their names (module docstring): the
#: terms of one actuated coordinate, then those of one passive coordinate (``passive-``). Names
#: stay distinct: the three Coulomb shapes, which share ``fc``, exclude each other, and a passive
#: coordinate's name is not an actuated one's.
EXTRA_TERMS = {
    "viscous": "fv",
    "coulomb": "fc",
    "offset": "f0",
    "armature": "Ia",
    "coulomb-tanh": "fc",
    "stribeck-coulomb": "fc",
    "stribeck-static": "fs",
    "viscous+": "fv+",
    "viscous-": "fv-",
    "coulomb+": "fc+",
    "coulomb-": "fc-",
    "passive-viscous": "fv",
    "passive-coulomb": "fc",
}
#: The friction models of ``friction=`` (``--friction``) and the terms each one adds.
FRICTION_MODELS = {
    "viscous": ("viscous",),
    "coulomb": ("coulomb",),
    "offset": ("offset",),
    "coulomb-tanh": ("coulomb-tanh",),
    "stribeck": ("stribeck-coulomb", "stribeck-static"),
    "viscous+-": ("viscous+", "viscous-"),
    "coulomb+-": ("coulomb+", "coulomb-"),
}
#: The shapes of the Coulomb force, of which a model takes at most one.
COULOMB_SHAPES = ("coulomb", "coulomb-tanh", "stribeck")
#: The friction models of the passive coordinates (``passive_friction=``, ``--passive-friction``).
PASSIVE_FRICTION = {"viscous": "passive-viscous", "coulomb": "passive-coulomb"}
#: The terms of passive coordinates.
PASSIVE_TERMS = tuple(PASSIVE_FRICTION.values())
#: The terms whose column is a step at qd = 0 (sign(qd)): their rows inside a stiction zone are
#: left out (:func:`sliding`). The smooth Coulomb and the Stribeck curve model that zone instead.
STEP_TERMS = ("coulomb", "coulomb+", "coulomb-", "passive-coulomb")
#: The terms of the Stribeck curve, nonlinear in its speed v_s.
STRIBECK_TERMS = ("stribeck-coulomb", "stribeck-static")
#: The Stribeck speed v_s (rad/s or m/s) of a model before it is fitted: its columns decide the
#: identifiability (which does not depend on v_s) and condition ``excite``'s trajectories.
STRIBECK_SPEED = 0.1
#: Friction terms of ``--friction`` without arguments and of ``friction=True``.
DEFAULT_FRICTION = ("viscous", "coulomb")
#: Joint types whose actuated coordinates get the extra terms (not the exponential coordinates
#: of a floating base or a spherical joint).
JOINTS_WITH_EXTRAS = ("R", "P", "U")
#: The stiction zone of a coordinate with a Coulomb term: speeds below this fraction of its
#: largest speed in the data, where sign(qd) does not describe dry friction (sticking, the
#: smooth zone of a drive's friction, velocity noise around zero); their rows are left out.
STICTION_ZONE = 0.05
#: The smooth sign of the step terms of the actuated coordinates, tanh(qd_j / v_0,j): v_0,j is
#: SIGN_NOISE times the standard deviation of the noise of qd_j (a standing joint's velocity
#: noise moves the Coulomb force by at most tanh(1 / SIGN_NOISE) = 10 % of fc) ...
SIGN_NOISE = 10.0
#: ... at least SIGN_FLOOR times its largest speed in the data (noise-free data) ...
SIGN_FLOOR = 1e-5
#: ... and, for velocities given as they are (their noise read off them), at most SIGN_CEILING
#: times it, far inside the stiction zone (STICTION_ZONE = 25 SIGN_CEILING: tanh(25) = 1 - 4e-22),
#: so that where the fit looks it sees the sign function (random states are no signal to read a
#: noise off).
SIGN_CEILING = 2e-3
#: Extra terms that cannot be negative in a physical model (the consistent estimate bounds them).
NONNEGATIVE = (
    "viscous",
    "coulomb",
    "armature",
    "coulomb-tanh",
    "stribeck-coulomb",
    "stribeck-static",
    "viscous+",
    "viscous-",
    "coulomb+",
    "coulomb-",
    "passive-viscous",
    "passive-coulomb",
)


def coordinate_kinds(robot: Robot, coordinates: Iterable[int]) -> tuple:
    """The type (R, P, U, S, F) of the joint of each tree coordinate in ``coordinates``."""
    return tuple(robot.joint_type[int(np.searchsorted(robot.q_index, k, side="right") - 1)] for k in coordinates)


def joint_kinds(robot: Robot) -> tuple:
    """The type (R, P, U, S, F) of the joint of each actuated coordinate of ``robot``."""
    return coordinate_kinds(robot, robot.actuated)


def passive_coordinates(robot: Robot) -> tuple:
    """The tree coordinates (indices into q) of ``robot``'s passive revolute, prismatic and
    universal joints: those that passive friction acts on."""
    return tuple(
        int(k) for k, kind in zip(robot.passive, coordinate_kinds(robot, robot.passive)) if kind in JOINTS_WITH_EXTRAS
    )


def chosen_models(value: bool | str | Iterable[str] | None, default: tuple, table: dict, what: str) -> tuple:
    """The model names of ``value``: True (``default``), False or None (none), a name or a
    sequence of distinct names among ``table``'s keys; PgaDynError naming ``what`` otherwise."""
    if value is True:
        value = default
    if value is None or value is False:
        return ()
    models = (value,) if isinstance(value, str) else tuple(value)
    if any(m not in table for m in models) or len(set(models)) != len(models):
        raise PgaDynError(f"{what}: expected distinct models among {', '.join(table)}, got {list(models)}")
    return models


def friction_terms(friction: bool | str | Iterable[str] | None) -> tuple:
    """The extra terms of the friction models ``friction``: True (:data:`DEFAULT_FRICTION`),
    False or None (none), or a sequence of names of :data:`FRICTION_MODELS` with at most one of
    :data:`COULOMB_SHAPES`; in :data:`EXTRA_TERMS` order."""
    models = chosen_models(friction, DEFAULT_FRICTION, FRICTION_MODELS, "friction")
    shapes = [m for m in models if m in COULOMB_SHAPES]
    if len(shapes) > 1:
        raise PgaDynError(f"friction: {' and '.join(shapes)} are two shapes of the same Coulomb force: choose one")
    terms = {t for m in models for t in FRICTION_MODELS[m]}
    return tuple(t for t in EXTRA_TERMS if t in terms)


def passive_terms(passive_friction: bool | str | Iterable[str] | None) -> tuple:
    """The extra terms of the passive friction models ``passive_friction``: True (viscous),
    False or None (none), or a sequence of names of :data:`PASSIVE_FRICTION`."""
    models = chosen_models(passive_friction, ("viscous",), PASSIVE_FRICTION, "passive friction")
    return tuple(t for t in EXTRA_TERMS if t in {PASSIVE_FRICTION[m] for m in models})


def speed_scales(
    robot: Robot, terms: tuple, coulomb_speed: npt.ArrayLike | None = None, stribeck_speed: npt.ArrayLike | None = None
) -> tuple:
    """(v_c, v_s): the speed scales (n_a,) of the Coulomb tanh and of the Stribeck curve of
    every actuated coordinate, from a positive number or (n_a,) positive numbers each, or None
    when ``terms`` have no such term. PgaDynError when a speed is missing, not positive, or
    given for a model without its term."""
    out = []
    for value, needed, what, option in (
        (coulomb_speed, "coulomb-tanh" in terms, "coulomb-tanh", "coulomb_speed"),
        (stribeck_speed, bool(set(STRIBECK_TERMS) & set(terms)), "stribeck", "stribeck_speed"),
    ):
        if value is None and needed:
            raise PgaDynError(f"{what}: give its speed scale ({option}, rad/s or m/s)")
        if value is not None and not needed:
            raise PgaDynError(f"{option} is the speed scale of {what}, which is not among the terms {list(terms)}")
        if value is None:
            out.append(None)
            continue
        na = len(robot.actuated)
        v = np.asarray(value, dtype=float)
        v = np.full(na, float(v)) if v.ndim == 0 else v.copy()
        if v.shape != (na,) or not np.all(np.isfinite(v) & (v > 0)):
            raise PgaDynError(
                f"{option}: expected a positive number or {na} positive numbers (one per actuated "
                f"coordinate {list(robot.actuated_names)}), got {value!r}"
            )
        v.setflags(write=False)
        out.append(v)
    return tuple(out)


def states_of(robot: Robot, data: Trajectory) -> States:
    """pga-dyn states (:class:`pga_dyn.States`) of a :class:`~identification.data.Trajectory`
    ``data`` of ``robot``'s actuated coordinates. Closed loops are assembled along the record
    (:func:`pga_dyn.sampling.record_states`): its first sample from q0 along a regular path, each
    next one from the previous one, every sample in the model's assembly mode with cond(J_p)
    below the sampling limit, and the passive coordinates the data measured (``data.passive``)
    where the model puts them. PgaDynError naming ``data.source`` (and the time, for a record
    that leaves the assembly mode) when its coordinates are not the robot's or a sample does not
    assemble."""
    from pga_dyn.sampling import record_states

    if tuple(data.names) != tuple(robot.actuated_names):
        raise PgaDynError(
            f"{data.source}: its coordinates {list(data.names)} are not the actuated coordinates "
            f"of '{robot.name}' {list(robot.actuated_names)}"
        )
    return record_states(robot, data.t, data.q, data.qd, data.qdd, passive=data.passive, source=data.source)


def state_rows(states: States, rows: np.ndarray) -> States:
    """The states of the samples ``rows`` (k,) of a record whose states (:func:`states_of`) are
    ``states``: a record made of some of another's samples (its forces aligned by a delay,
    :meth:`~identification.data.Trajectory.aligned_rows`; an evenly spread subset) has their
    states, the configurations of that record's assembly mode, without assembling again."""
    keep = {k: getattr(states, k)[rows] for k in ("q", "qd", "qdd", "q_a", "qd_a", "qdd_a", "G", "cond")}
    return replace(states, **keep, drawn=len(rows), rejected=0)


@dataclass(frozen=True, eq=False)
class IdentificationModel:
    """The parameters of an identification of ``robot`` (see the module docstring).

    ``base``: the :class:`drng.regrouping.BaseParameters` of the inertial parameters;
    ``extras``: the extra terms as (term, coordinate) pairs, in theta order after phi: the
    coordinate an actuated index j (into q_a) for the terms of an actuated coordinate, a tree
    index k (into q) for passive friction; ``K`` (p, 10 n + n_e) with beta = K theta;
    ``leading`` (p,): the column of theta each parameter is named after (K[:, leading] =
    identity); ``decision``: the rank decision on the sampled [Y_b, D] (rank, gap, clean, ...;
    empty without extras); ``coulomb_speed``, ``stribeck_speed`` (n_a,): the speed scales v_c of
    the Coulomb tanh and v_s of the Stribeck curve (None without those terms); ``sign_speed``
    (n_a,): v_0 of the smooth sign of the step terms (:func:`sign_speeds`; None: not yet set from
    data, the sign function)."""

    robot: object
    base: object
    extras: tuple
    K: np.ndarray
    leading: np.ndarray
    decision: dict
    coulomb_speed: np.ndarray | None = None
    stribeck_speed: np.ndarray | None = None
    sign_speed: np.ndarray | None = None

    @property
    def num_parameters(self) -> int:
        """p, the number of identifiable parameters."""
        return self.K.shape[0]

    @cached_property
    def extra_coordinates(self) -> tuple:
        """The name of the coordinate of each extra term (actuated, or passive for passive friction)."""
        return tuple(
            (self.robot.coordinate_names if term in PASSIVE_TERMS else self.robot.actuated_names)[j]
            for term, j in self.extras
        )

    @cached_property
    def extra_labels(self) -> tuple:
        """``term coordinate`` of each extra term (``viscous joint1``, ``passive-viscous p1``)."""
        return tuple(f"{term} {name}" for (term, _), name in zip(self.extras, self.extra_coordinates))

    @cached_property
    def parameter_names(self) -> tuple:
        """Names of theta: the link-frame parameters (``m1``, ..., ``Izz6``), then the extras
        (``fv_joint``, ``fc+_joint``, ...)."""
        return self.base.parameter_names + tuple(
            f"{EXTRA_TERMS[term]}_{name}" for (term, _), name in zip(self.extras, self.extra_coordinates)
        )

    @cached_property
    def names(self) -> tuple:
        """Names of beta: the leading parameter, with the suffix R when others are regrouped into it."""
        names = self.parameter_names
        return tuple(names[k] + ("R" if np.count_nonzero(row) > 1 else "") for k, row in zip(self.leading, self.K))

    @cached_property
    def expressions(self) -> tuple:
        """``name = leading + c*other + ...`` for each parameter of beta."""
        from drng.regrouping import expression

        return tuple(
            expression(name, row, k, self.parameter_names) for name, row, k in zip(self.names, self.K, self.leading)
        )

    @cached_property
    def is_extra(self) -> np.ndarray:
        """(p,) bool: whether parameter k is led by an extra term (friction, armature)."""
        return self.leading >= self.base.K.shape[1]

    def extra_columns(
        self, qd: np.ndarray, qdd: np.ndarray, qd_tree: np.ndarray | None = None, G: np.ndarray | None = None
    ) -> np.ndarray:
        """D (ns, n_a, n_e): the columns of the extra terms at actuated velocities ``qd`` and
        accelerations ``qdd`` (ns, n_a); passive friction needs the tree velocities ``qd_tree``
        (ns, nq) and G = dq/dq_a (ns, nq, n_a) too (:func:`extra_forces`)."""
        return extra_forces(
            self.extras, qd, qdd, qd_tree, G, self.coulomb_speed, self.stribeck_speed, sign_speed=self.sign_speed
        )

    @property
    def has_steps(self) -> bool:
        """Whether the model has a step term of an actuated coordinate (coulomb, coulomb+-)."""
        return any(term in STEP_TERMS and term not in PASSIVE_TERMS for term, _ in self.extras)

    def full_regressor(self, states: States) -> np.ndarray:
        """[Y_link, D] (ns, n_a, 10 n + n_e) at pga-dyn ``states`` (:class:`pga_dyn.States`):
        the regressor of theta."""
        Y = states.regressor() @ self.base.link_map
        D = self.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)
        return np.concatenate([Y, D], axis=2)

    def regressor(self, states: States) -> np.ndarray:
        """W (ns, n_a, p), the regressor of beta at ``states``: tau = W beta. The columns of
        :meth:`full_regressor` at ``leading``, computed alone (Y_link of the leading link-frame
        parameters only)."""
        from pga_dyn.tp_regressor import link_blocks

        nphi = self.base.K.shape[1]
        inertial, extra = np.flatnonzero(self.leading < nphi), np.flatnonzero(self.leading >= nphi)
        Y = states.regressor()
        ns, rows, n = Y.shape[0], Y.shape[1], nphi // 10
        # Y_link = Y F with F block diagonal (link_blocks): body by body, (n, ns rows, 10) @ (n, 10, 10),
        # then the leading columns (a tenth of the dense product's work)
        blocks = np.matmul(Y.reshape(ns * rows, n, 10).transpose(1, 0, 2), link_blocks(self.robot))
        W = np.zeros((ns, rows, self.num_parameters))
        lead = self.leading[inertial]
        W[..., inertial] = blocks[lead // 10, :, lead % 10].T.reshape(ns, rows, -1)
        if self.extras:
            W[..., extra] = self.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)[
                ..., self.leading[extra] - nphi
            ]
        return W

    def values(self, theta: npt.ArrayLike) -> np.ndarray:
        """beta = K theta (p,) of full parameters ``theta`` (10 n + n_e,)."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.K.shape[1],):
            raise PgaDynError(
                f"theta must have shape ({self.K.shape[1]},): {len(self.base.parameter_names)} "
                f"link-frame parameters and {len(self.extras)} extra terms, got {theta.shape}"
            )
        return self.K @ theta

    def theta(self, phi: npt.ArrayLike, extras: dict | None = None) -> np.ndarray:
        """theta (10 n + n_e,) from link-frame parameters ``phi`` ((10 n,) or (n, 10)) and the
        extra terms ``extras``: {term: value or values} (:func:`extra_values`; missing terms: 0)."""
        phi = np.asarray(phi, dtype=float).reshape(-1)
        if phi.shape != (self.base.K.shape[1],):
            raise PgaDynError(f"phi must have {self.base.K.shape[1]} link-frame parameters, got {phi.size}")
        x = extra_values(self.robot, extras or {})
        return np.concatenate([phi, [x[term][j] for term, j in self.extras]])


def extra_column(term: str, qd_j: np.ndarray, qdd_j: np.ndarray, speed: float | None = None) -> np.ndarray:
    """The force per unit of the extra ``term`` on coordinate j at its velocities ``qd_j`` and
    accelerations ``qdd_j`` (ns,) (module docstring): qd, s, 1, qdd, tanh(qd / v_c),
    sign(qd) (1 - e) and sign(qd) e with e = exp(-(qd / v_s)^2), max(qd, 0), min(qd, 0), max(s, 0),
    min(s, 0); ``speed`` is v_c or v_s, or for the step terms v_0 of the smooth sign
    s = tanh(qd / v_0) (None: s = sign(qd)). Passive terms: qd, sign(qd) of the passive coordinate."""
    if term in ("viscous", "passive-viscous"):
        return qd_j
    if term in ("coulomb", "coulomb+", "coulomb-"):
        step = np.sign(qd_j) if speed is None else np.tanh(qd_j / speed)
        return step if term == "coulomb" else (np.maximum if term == "coulomb+" else np.minimum)(step, 0.0)
    if term == "passive-coulomb":
        return np.sign(qd_j)
    if term == "offset":
        return np.ones_like(qd_j)
    if term == "armature":
        return qdd_j
    if term == "coulomb-tanh":
        return np.tanh(qd_j / speed)
    if term in STRIBECK_TERMS:
        e = np.exp(-((qd_j / speed) ** 2))
        return np.sign(qd_j) * (e if term == "stribeck-static" else 1.0 - e)
    if term in ("viscous+", "viscous-"):
        return (np.maximum if term == "viscous+" else np.minimum)(qd_j, 0.0)
    raise PgaDynError(f"unknown extra term '{term}'; the terms are {', '.join(EXTRA_TERMS)}")


def extra_forces(
    extras: tuple,
    qd: np.ndarray,
    qdd: np.ndarray,
    qd_tree: np.ndarray | None = None,
    G: np.ndarray | None = None,
    coulomb_speed: np.ndarray | None = None,
    stribeck_speed: np.ndarray | None = None,
    *,
    sign_speed: np.ndarray | None = None,
) -> np.ndarray:
    """D (ns, n_a, len(extras)): the forces of the actuated coordinates per unit of each extra
    term (term, coordinate) of ``extras`` (:attr:`IdentificationModel.extras`): for a term of
    actuated coordinate j, :func:`extra_column` in row j; for friction at passive coordinate k,
    G[:, k, :] times its column at the tree velocity qd_tree[:, k] (the projection tau_a = G^T F,
    eq. 52). ``qd``, ``qdd`` (ns, n_a); ``qd_tree`` (ns, nq) and ``G`` (ns, nq, n_a) (for
    passive terms); the speed scales (n_a,) of the Coulomb tanh, of the Stribeck curve and of
    the smooth sign of the step terms (None: the sign function)."""
    ns, na = qd.shape
    D = np.zeros((ns, na, len(extras)))
    for k, (term, j) in enumerate(extras):
        if term in PASSIVE_TERMS:
            if qd_tree is None or G is None:
                raise PgaDynError(f"{term}: friction at passive coordinates needs the tree velocities and G = dq/dq_a")
            D[:, :, k] = G[:, j, :] * extra_column(term, qd_tree[:, j], None)[:, None]
        else:
            speed = (
                coulomb_speed
                if term == "coulomb-tanh"
                else stribeck_speed
                if term in STRIBECK_TERMS
                else sign_speed
                if term in STEP_TERMS
                else None
            )
            D[:, j, k] = extra_column(term, qd[:, j], qdd[:, j], None if speed is None else speed[j])
    return D


def sign_speeds(model: IdentificationModel, data: Trajectory) -> IdentificationModel:
    """``model`` with v_0 (n_a,) of the smooth sign of its step terms set from ``data``: per
    actuated coordinate, :data:`SIGN_NOISE` times the standard deviation of the noise of its
    velocity, at least :data:`SIGN_FLOOR` times its largest speed in ``data`` (1 for a coordinate
    that does not move). The noise: ``data.qd_noise`` where pga-dyn derived or smoothed the
    velocities; else the white noise of the velocities as given (:func:`~.signals.white_noise`),
    and v_0 at most :data:`SIGN_CEILING` times the largest speed. A model without step terms, or
    whose v_0 is set, is returned as it is."""
    if not model.has_steps or model.sign_speed is not None:
        return model
    top = np.abs(data.qd).max(axis=0)
    if data.qd_noise is None:
        speed = np.clip(SIGN_NOISE * white_noise(data.qd), SIGN_FLOOR * top, SIGN_CEILING * top)
    else:
        speed = np.maximum(SIGN_NOISE * data.qd_noise, SIGN_FLOOR * top)
    speed = np.where(speed > 0, speed, 1.0)
    speed.setflags(write=False)
    return replace(model, sign_speed=speed)


def sliding(
    model: IdentificationModel, qd: np.ndarray, zone: float = STICTION_ZONE, qd_tree: np.ndarray | None = None
) -> np.ndarray:
    """(ns, n_a) bool: the rows outside the stiction zones, |qd_j| >= ``zone`` max_s |qd_j| for
    each actuated coordinate j with a step term (:data:`STEP_TERMS`: sign(qd_j)), and the
    samples with |qd_k| >= ``zone`` max_s |qd_k| at every passive coordinate k with Coulomb
    friction (``qd_tree`` (ns, nq) needed then); all other rows (``zone`` 0: every row)."""
    if not (isinstance(zone, (int, float)) and 0 <= zone < 1):
        raise PgaDynError(
            f"stiction: the zone is a fraction of each coordinate's largest speed in [0, 1), got {zone!r}"
        )
    keep = np.ones(qd.shape, dtype=bool)
    for term, j in model.extras:
        if term not in STEP_TERMS or zone == 0:
            continue
        if term in PASSIVE_TERMS and qd_tree is None:
            raise PgaDynError(f"{term}: the stiction zone of a passive coordinate needs the tree velocities")
        speed = np.abs(qd_tree[:, j] if term in PASSIVE_TERMS else qd[:, j])
        inside = speed < zone * speed.max()
        if term in PASSIVE_TERMS:
            keep[inside] = False
        else:
            keep[inside, j] = False
    return keep


def extra_values(robot: Robot, extras: dict) -> dict:
    """{term: array} from {term: scalar or values}, for every term of :data:`EXTRA_TERMS`
    (terms not given are zero): (n_a,) over the actuated coordinates, from a number or n_a
    numbers; for passive friction (nq,) over the tree coordinates, from a number (every passive
    coordinate of :func:`passive_coordinates`) or one number per passive coordinate."""
    na = len(robot.actuated)
    passive = list(passive_coordinates(robot))
    out = {term: np.zeros(robot.nq if term in PASSIVE_TERMS else na) for term in EXTRA_TERMS}
    for term, value in extras.items():
        if term not in EXTRA_TERMS:
            raise PgaDynError(f"unknown extra term '{term}'; the terms are {', '.join(EXTRA_TERMS)}")
        if term in PASSIVE_TERMS and not passive and np.any(np.asarray(value) != 0):
            raise PgaDynError(f"{term}: '{robot.name}' has no passive revolute, prismatic or universal joint")
        size, where = (
            (len(passive), f"passive coordinate {[robot.coordinate_names[k] for k in passive]}")
            if term in PASSIVE_TERMS
            else (na, f"actuated coordinate {list(robot.actuated_names)}")
        )
        v = np.asarray(value, dtype=float)
        v = np.broadcast_to(v, (size,)) if v.ndim == 0 else v
        if v.shape != (size,) or not np.all(np.isfinite(v)):
            raise PgaDynError(f"{term}: expected a finite number or {size} numbers (one per {where}), got {value!r}")
        if term in PASSIVE_TERMS:
            out[term][passive] = v
        else:
            out[term] = v.copy()
    return out


@one_blas_thread
def identification_model(
    robot: Robot,
    friction: bool | str | Iterable[str] | None = (),
    armature: bool = False,
    base: BaseParameters | None = None,
    samples: int | None = None,
    seed: int | None = 0,
    passive_friction: bool | str | Iterable[str] | None = (),
    coulomb_speed: npt.ArrayLike | None = None,
    stribeck_speed: npt.ArrayLike | None = None,
) -> IdentificationModel:
    """The parameters to identify for ``robot``: its base inertial parameters (``base``, default
    ``drng.base_parameters(robot)`` on the certified nullspace), the ``friction`` models of every
    actuated coordinate (:func:`friction_terms`), with ``armature`` its rotor inertia, and the
    ``passive_friction`` models of its passive coordinates (:func:`passive_terms`).
    ``coulomb_speed`` (v_c of ``coulomb-tanh``, required with it) and ``stribeck_speed`` (v_s of
    ``stribeck``, default :data:`STRIBECK_SPEED`): a positive number or one per actuated
    coordinate (rad/s or m/s).

    The extras' identifiability is decided on ``samples`` random valid states (default: 4 rows
    per parameter), see the module docstring; PgaDynError when the sampled rank is not clean, and
    for a robot that treats its free spins exactly (:func:`pga_dyn.loops.refuse_exact_spins`)."""
    import drng
    from pga_dyn.loops import refuse_exact_spins
    from pga_dyn.sampling import count, sample_states

    refuse_exact_spins(robot, "identification (excite, simulate, identify)")
    terms = friction_terms(friction) + (("armature",) if armature else ())
    passive = passive_terms(passive_friction)
    if set(STRIBECK_TERMS) & set(terms) and stribeck_speed is None:
        stribeck_speed = STRIBECK_SPEED
    speeds = speed_scales(robot, terms, coulomb_speed, stribeck_speed)
    coordinates = passive_coordinates(robot)
    if passive and not coordinates:
        raise PgaDynError(
            f"{robot.source or robot.name}: passive friction: the robot has no passive revolute, "
            "prismatic or universal joint (its passive coordinates: "
            f"{[robot.coordinate_names[k] for k in robot.passive]})"
        )
    if base is None:
        base = drng.base_parameters(robot)
        if not base.trusted:
            raise PgaDynError(
                f"{robot.source or robot.name}: the nullspace behind the base parameters is "
                f"{base.status} (pga-dyn analyze says why): an identification on it could be wrong; "
                "pass base= built from a result you trust"
            )
    from drng.numerical import GAP_MIN, sampled_nullspace
    from drng.regrouping import regroup

    na, nphi = len(robot.actuated), base.K.shape[1]
    kinds = joint_kinds(robot)
    extras = tuple((term, j) for term in terms for j in range(na) if kinds[j] in JOINTS_WITH_EXTRAS)
    extras += tuple((term, k) for term in passive for k in coordinates)
    r, ne = base.num_base_parameters, len(extras)
    if not ne:
        return IdentificationModel(robot, base, (), base.K, base.leading, {})
    rows_needed = 4 * (r + ne)
    samples = -(-rows_needed // na) if samples is None else count("samples", samples)
    states = sample_states(robot, samples, seed=seed)
    model = IdentificationModel(robot, base, extras, np.zeros((0, nphi + ne)), np.zeros(0, np.int64), {}, *speeds)
    S = np.concatenate(
        [base.regressor(states), model.extra_columns(states.qd_a, states.qdd_a, states.qd, states.G)], axis=2
    )
    null, decision, _, _ = sampled_nullspace(S.reshape(-1, r + ne))
    if not decision["clean"]:
        raise PgaDynError(
            f"{robot.name}: whether the friction and armature terms are identifiable cannot be "
            f"decided: the sampled regressor [Y_b, D] has no clean singular gap (largest gap "
            f"{decision['gap']:.1e}, needs {GAP_MIN:.0e})"
        )
    # the extras are offered for elimination first, the last coordinate's first; then the base parameters
    order = [r + k for k in range(ne - 1, -1, -1)] + list(range(r - 1, -1, -1))
    Ke, kept, _ = regroup(null, order)
    lift = np.zeros((r + ne, nphi + ne))
    lift[:r, :nphi] = base.K
    lift[r:, nphi:] = np.eye(ne)
    leading = np.array([base.leading[k] if k < r else nphi + k - r for k in kept], dtype=np.int64)
    return IdentificationModel(robot, base, extras, Ke @ lift, leading, decision, *speeds)
