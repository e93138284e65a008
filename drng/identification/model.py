"""The model columns, a stage of the identification (:mod:`drng.identification` lists them in
order): the parameters an identification estimates (the base inertial parameters, joint
friction and rotor inertia, armature), with the identifiability of all of them decided
together, their regressor, and the pga-dyn states of a trajectory (:func:`states_of`) at which
it is evaluated.

The model of the generalized forces of the actuated coordinates is

    tau = Y_link(q, qd, qdd) phi + D(qd, qdd) x,

phi (10 n) the link-frame inertial parameters (:mod:`drng.regrouping`) and x (n_e) the
*extra* terms, per actuated coordinate j (``EXTRA_TERMS``, named with their prefix and the
coordinate, ``fv_joint``):

* ``viscous``  fv_j: tau_j += fv_j qd_j
* ``coulomb``  fc_j: tau_j += fc_j sign(qd_j)
* ``offset``   f0_j: tau_j += f0_j (a constant: a sensor offset, or an asymmetric Coulomb friction)
* ``armature`` Ia_j: tau_j += Ia_j qdd_j, the inertia of the rotor and gears reflected to the
  coordinate (a rotor of inertia I_r behind a gear of ratio r gives Ia = r^2 I_r). A rotor
  modelled as a body of its own (a URDF+ ``<coupling>`` with its ratio) is part of phi instead.

Only the coordinates of revolute, prismatic and universal joints get extra terms (not those of
a floating base or a spherical joint).

With theta = (phi, x) and the base parameters beta_b = K phi of :func:`drng.base_parameters`,
tau = Y_b beta_b + D x. An extra column may be a combination of the base regressor's columns
(the armature of a joint whose first body turns about a fixed axis: Ia_1 moves with Izz1 of a
vertical first joint) or of the other extras; then it is regrouped, by the same elimination as
the base parameters (:func:`drng.regrouping.regroup`), the extras offered first:

    tau = W(q, qd, qdd) beta,   beta = K theta (p),   W = [Y_link, D][:, leading].

Identifiability of the extras is read from the stacked [Y_b, D] of random valid states
(:func:`pga_dyn.sample_states`; qd in (-1, 1), so every sign occurs): its rank at the largest
singular gap of the column-scaled matrix (:func:`drng.numerical.sampled_nullspace`), trusted
only when the gap is clean (:data:`drng.numerical.GAP_MIN`), else PgaDynError.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pga_dyn.errors import PgaDynError

from ..result import one_blas_thread

#: The extra terms per actuated coordinate and the prefixes of their names.
EXTRA_TERMS = {"viscous": "fv", "coulomb": "fc", "offset": "f0", "armature": "Ia"}
#: Friction terms of ``--friction`` without arguments and of ``friction=True``.
DEFAULT_FRICTION = ("viscous", "coulomb")
#: Joint types whose actuated coordinates get the extra terms (not the exponential coordinates
#: of a floating base or a spherical joint).
JOINTS_WITH_EXTRAS = ("R", "P", "U")
#: The stiction zone of a coordinate with a Coulomb term: speeds below this fraction of its
#: largest speed in the data, where sign(qd) does not describe dry friction (sticking, the
#: smooth zone of a drive's friction, velocity noise around zero); their rows are left out.
STICTION_ZONE = 0.05
#: Extra terms that cannot be negative in a physical model (the consistent estimate bounds them).
NONNEGATIVE = ("viscous", "coulomb", "armature")


def joint_kinds(robot) -> tuple:
    """The type (R, P, U, S, F) of the joint of each actuated coordinate of ``robot``."""
    return tuple(robot.joint_type[int(np.searchsorted(robot.q_index, k, side="right") - 1)] for k in robot.actuated)


def friction_terms(friction) -> tuple:
    """The friction terms of ``friction``: True (:data:`DEFAULT_FRICTION`), False or None (none),
    or a sequence of names among viscous, coulomb, offset."""
    if friction is True:
        return DEFAULT_FRICTION
    if friction is None or friction is False:
        return ()
    if isinstance(friction, str):
        friction = (friction,)
    terms = tuple(friction)
    bad = [t for t in terms if t not in EXTRA_TERMS or t == "armature"]
    if bad or len(set(terms)) != len(terms):
        raise PgaDynError(f"friction: expected distinct terms among viscous, coulomb, offset, got {list(terms)}")
    return tuple(t for t in EXTRA_TERMS if t in terms)


def states_of(robot, data):
    """pga-dyn states (:class:`pga_dyn.States`) of a :class:`~drng.identification.data.Trajectory`
    ``data`` of ``robot``'s actuated coordinates. Closed loops are assembled along the record
    (:func:`pga_dyn.sampling.record_states`): its first sample from q0 along a regular path, each
    next one from the previous one, every sample in the model's assembly mode with cond(J_p)
    below the sampling limit, and the passive coordinates the data measured (``data.passive``)
    where the model puts them. PgaDynError naming ``data.source`` (and the time, for a record
    that leaves the assembly mode) when its coordinates are not the robot's or a sample does not
    assemble."""
    from pga_dyn.sampling import record_states

    if tuple(data.names) != tuple(robot.actuated_names):
        raise PgaDynError(f"{data.source}: its coordinates {list(data.names)} are not the actuated coordinates "
                          f"of '{robot.name}' {list(robot.actuated_names)}")
    return record_states(robot, data.t, data.q, data.qd, data.qdd, passive=data.passive, source=data.source)


@dataclass(frozen=True, eq=False)
class IdentificationModel:
    """The parameters of an identification of ``robot`` (see the module docstring).

    ``base``: the :class:`drng.regrouping.BaseParameters` of the inertial parameters;
    ``extras``: the extra terms as (term, actuated index) pairs, in theta order after phi;
    ``K`` (p, 10 n + n_e) with beta = K theta; ``leading`` (p,): the column of theta each
    parameter is named after (K[:, leading] = identity); ``decision``: the rank decision on
    the sampled [Y_b, D] (rank, gap, clean, ...; empty without extras)."""

    robot: object
    base: object
    extras: tuple
    K: np.ndarray
    leading: np.ndarray
    decision: dict

    @property
    def num_parameters(self) -> int:
        """p, the number of identifiable parameters."""
        return self.K.shape[0]

    @cached_property
    def parameter_names(self) -> tuple:
        """Names of theta: the link-frame parameters (``m1``, ..., ``Izz6``), then the extras
        (``fv_joint``, ...)."""
        joints = self.robot.actuated_names
        return self.base.parameter_names + tuple(f"{EXTRA_TERMS[term]}_{joints[j]}" for term, j in self.extras)

    @cached_property
    def names(self) -> tuple:
        """Names of beta: the leading parameter, with the suffix R when others are regrouped into it."""
        names = self.parameter_names
        return tuple(names[k] + ("R" if np.count_nonzero(row) > 1 else "") for k, row in zip(self.leading, self.K))

    @cached_property
    def expressions(self) -> tuple:
        """``name = leading + c*other + ...`` for each parameter of beta."""
        from drng.regrouping import expression

        return tuple(expression(name, row, k, self.parameter_names)
                     for name, row, k in zip(self.names, self.K, self.leading))

    @cached_property
    def is_extra(self) -> np.ndarray:
        """(p,) bool: whether parameter k is led by an extra term (friction, armature)."""
        return self.leading >= self.base.K.shape[1]

    def extra_columns(self, qd, qdd) -> np.ndarray:
        """D (ns, n_a, n_e): the columns of the extra terms at velocities ``qd`` and accelerations
        ``qdd`` (ns, n_a)."""
        ns, na = qd.shape
        D = np.zeros((ns, na, len(self.extras)))
        for k, (term, j) in enumerate(self.extras):
            D[:, j, k] = extra_column(term, qd[:, j], qdd[:, j])
        return D

    def full_regressor(self, states) -> np.ndarray:
        """[Y_link, D] (ns, n_a, 10 n + n_e) at pga-dyn ``states`` (:class:`pga_dyn.States`):
        the regressor of theta."""
        Y = states.regressor() @ self.base.link_map
        return np.concatenate([Y, self.extra_columns(states.qd_a, states.qdd_a)], axis=2)

    def regressor(self, states) -> np.ndarray:
        """W (ns, n_a, p), the regressor of beta at ``states``: tau = W beta."""
        return self.full_regressor(states)[..., self.leading]

    def values(self, theta) -> np.ndarray:
        """beta = K theta (p,) of full parameters ``theta`` (10 n + n_e,)."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.K.shape[1],):
            raise PgaDynError(f"theta must have shape ({self.K.shape[1]},): {len(self.base.parameter_names)} "
                              f"link-frame parameters and {len(self.extras)} extra terms, got {theta.shape}")
        return self.K @ theta

    def theta(self, phi, extras=None) -> np.ndarray:
        """theta (10 n + n_e,) from link-frame parameters ``phi`` ((10 n,) or (n, 10)) and the
        extra terms ``extras``: {term: value or (n_a,) values} (missing terms: 0)."""
        phi = np.asarray(phi, dtype=float).reshape(-1)
        if phi.shape != (self.base.K.shape[1],):
            raise PgaDynError(f"phi must have {self.base.K.shape[1]} link-frame parameters, got {phi.size}")
        x = extra_values(self.robot, extras or {})
        return np.concatenate([phi, [x[term][j] for term, j in self.extras]])


def extra_column(term: str, qd_j, qdd_j) -> np.ndarray:
    """The force per unit of the extra ``term`` on coordinate j at its velocities ``qd_j`` and
    accelerations ``qdd_j`` (ns,): qd_j, sign(qd_j), 1 or qdd_j."""
    return {"viscous": qd_j, "coulomb": np.sign(qd_j), "offset": np.ones_like(qd_j), "armature": qdd_j}[term]


def sliding(model: IdentificationModel, qd, zone: float = STICTION_ZONE) -> np.ndarray:
    """(ns, n_a) bool: the rows outside the stiction zones, |qd_j| >= ``zone`` max_s |qd_j| for
    each coordinate j with a Coulomb term (all rows of the others; ``zone`` 0: every row)."""
    if not (isinstance(zone, (int, float)) and 0 <= zone < 1):
        raise PgaDynError(f"stiction: the zone is a fraction of each coordinate's largest speed in [0, 1), got {zone!r}")
    keep = np.ones(qd.shape, dtype=bool)
    for term, j in model.extras:
        if term == "coulomb" and zone > 0:
            speed = np.abs(qd[:, j])
            keep[:, j] = speed >= zone * speed.max()
    return keep


def extra_values(robot, extras: dict) -> dict:
    """{term: (n_a,) array} from {term: scalar or (n_a,) values}; terms not given are zero."""
    na = len(robot.actuated)
    out = {term: np.zeros(na) for term in EXTRA_TERMS}
    for term, value in extras.items():
        if term not in EXTRA_TERMS:
            raise PgaDynError(f"unknown extra term '{term}'; the terms are {', '.join(EXTRA_TERMS)}")
        v = np.broadcast_to(np.asarray(value, dtype=float), (na,)) if np.ndim(value) == 0 else np.asarray(value, float)
        if v.shape != (na,) or not np.all(np.isfinite(v)):
            raise PgaDynError(f"{term}: expected a finite number or {na} numbers (one per actuated coordinate "
                              f"{list(robot.actuated_names)}), got {value!r}")
        out[term] = v.copy()
    return out


@one_blas_thread
def identification_model(robot, friction=(), armature: bool = False, base=None, samples: int | None = None,
                         seed=0) -> IdentificationModel:
    """The parameters to identify for ``robot``: its base inertial parameters (``base``, default
    ``drng.base_parameters(robot)`` on the certified nullspace), the ``friction`` terms of every
    actuated coordinate (:func:`friction_terms`) and, with ``armature``, its rotor inertia.

    The extras' identifiability is decided on ``samples`` random valid states (default: 4 rows
    per parameter), see the module docstring; PgaDynError when the sampled rank is not clean."""
    import drng
    from pga_dyn.sampling import count, sample_states

    if base is None:
        base = drng.base_parameters(robot)
        if not base.trusted:
            raise PgaDynError(f"{robot.source or robot.name}: the nullspace behind the base parameters is "
                              f"{base.status} (pga-dyn analyze says why): an identification on it could be wrong; "
                              "pass base= built from a result you trust")
    from ..regrouping import regroup
    from ..numerical import GAP_MIN, sampled_nullspace

    terms = friction_terms(friction) + (("armature",) if armature else ())
    na, nphi = len(robot.actuated), base.K.shape[1]
    kinds = joint_kinds(robot)
    extras = tuple((term, j) for term in terms for j in range(na) if kinds[j] in JOINTS_WITH_EXTRAS)
    r, ne = base.num_base_parameters, len(extras)
    if not ne:
        return IdentificationModel(robot, base, (), base.K, base.leading, {})
    rows_needed = 4 * (r + ne)
    samples = -(-rows_needed // na) if samples is None else count("samples", samples)
    states = sample_states(robot, samples, seed=seed)
    model = IdentificationModel(robot, base, extras, np.zeros((0, nphi + ne)), np.zeros(0, np.int64), {})
    S = np.concatenate([base.regressor(states), model.extra_columns(states.qd_a, states.qdd_a)], axis=2)
    null, decision, _, _ = sampled_nullspace(S.reshape(-1, r + ne))
    if not decision["clean"]:
        raise PgaDynError(f"{robot.name}: whether the friction and armature terms are identifiable cannot be "
                          f"decided: the sampled regressor [Y_b, D] has no clean singular gap (largest gap "
                          f"{decision['gap']:.1e}, needs {GAP_MIN:.0e})")
    # the extras are offered for elimination first, the last coordinate's first; then the base parameters
    order = [r + k for k in range(ne - 1, -1, -1)] + list(range(r - 1, -1, -1))
    Ke, kept, _ = regroup(null, order)
    lift = np.zeros((r + ne, nphi + ne))
    lift[:r, :nphi] = base.K
    lift[r:, nphi:] = np.eye(ne)
    leading = np.array([base.leading[k] if k < r else nphi + k - r for k in kept], dtype=np.int64)
    return IdentificationModel(robot, base, extras, Ke @ lift, leading, decision)
