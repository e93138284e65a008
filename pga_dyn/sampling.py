"""Valid states of a robot: assembled, away from singularities (DRNG paper section 6.3).

:func:`sample_states` draws actuated positions uniformly in a box and actuated velocities and
accelerations uniformly in (-1, 1), assembles every draw (:mod:`pga_dyn.loops`), and keeps
those that close and have cond(J_p) below a limit. The result holds the full tree states and
the projections G = dq/dq_a, so that the regressor of all samples is one compiled call.
:func:`complete_states` assembles given actuated states, each from the reference;
:func:`record_states` a time-ordered record, each sample from the one before (continuation),
refusing with the time where it leaves the model's assembly mode; :func:`projected_states`
the states at given tree configurations, without assembling. :func:`lock_torques` and
:func:`spin_lock_bounds`: what the locks of free spins hold at sampled states (the bound of a
lock that is an approximation: :mod:`pga_dyn.loops.spins`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np

from .errors import PgaDynError, PgaDynWarning
from .kinematics import float_array
from .loops import constraints, refuse_exact_spins
from .model import Robot, check_robot
from .progress import report
from .tp_regressor import actuated_regressor, inertial_parameters, tree_regressor

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass
class States:
    """Samples of a robot's state (what :func:`sample_states` returns).

    Attributes
    ----------
    robot : Robot
    q, qd, qdd : ndarray (samples, nq)
        Tree coordinates.
    q_a, qd_a, qdd_a : ndarray (samples, n_a)
        Actuated coordinates.
    G : ndarray (samples, nq, n_a)
        dq/dq_a of each sample (for a tree: a read-only view of one identity matrix).
    cond : ndarray (samples,)
        cond(J_p) of each sample: the largest cond(J_f) of the independent parts of its loops
        (:class:`pga_dyn.loops.parts.Part`; 1 for a tree).
    drawn, rejected : int
        Vectors of actuated coordinates drawn, and the draws that did not end a state (a part
        out of the workspace or too close to a singularity; such a part is drawn again).
    max_cond : float
        The cond(J_f) limit each part of the samples was held to (:func:`sample_states`).
    """

    robot: Robot
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    q_a: np.ndarray
    qd_a: np.ndarray
    qdd_a: np.ndarray
    G: np.ndarray
    cond: np.ndarray
    drawn: int = 0
    rejected: int = 0
    max_cond: float = np.inf

    def __len__(self) -> int:
        return self.q.shape[0]

    def regressor(self, out: np.ndarray | None = None) -> np.ndarray:
        """The regressor of every sample, (samples, n_a, 10 n), without assembling again
        (:func:`pga_dyn.tp_regressor.actuated_regressor`); ``out`` as in :func:`pga_dyn.regressor`."""
        return actuated_regressor(self.robot, self.q, self.qd, self.qdd, self.G, out=out)


def complete_states(
    robot: Robot, q_a: np.ndarray, qd_a: np.ndarray, qdd_a: np.ndarray, start: np.ndarray | None = None
) -> States:
    """Assemble each actuated state (rows of 2-D arrays) into a full tree state, each along a
    path from ``start`` (default q0; see :mod:`pga_dyn.loops`). Raises PgaDynError for a state
    outside the workspace or at a singularity."""
    Q, QD, QDD, G, cond = constraints(robot).complete_all(q_a, qd_a, qdd_a, start)
    return States(robot, Q, QD, QDD, q_a, qd_a, qdd_a, G, cond, q_a.shape[0], 0)


def projected_states(robot: Robot, q: np.ndarray, q_a: np.ndarray, qd_a: np.ndarray, qdd_a: np.ndarray) -> States:
    """States at given tree configurations ``q`` (samples, nq), without assembling them: the
    actuated coordinates ``q_a`` and the actuated velocities and accelerations ``qd_a``,
    ``qdd_a`` (samples, n_a) as given, the tree's velocities and accelerations and G = dq/dq_a
    projected at each q (eq. 92, :meth:`pga_dyn.loops.system.Constraints.project`), cond(J_p)
    of each (inf where a part is singular). The loops are not checked: q is an assembled state
    or one near it (a difference step of an assembled state along G, whose projection
    differentiates the state along the assembly; a smooth function of q near the assembled
    configurations). ``qd_a``, ``qdd_a`` may hold k sets (k, samples, n_a) at each
    configuration, which share its projection (G and the parts' J_f^+, computed once): the
    states are then k samples, set after set, q and G repeated."""
    con = constraints(robot)
    k, ns, na = np.shape(qd_a) if np.ndim(qd_a) == 3 else (1, *np.shape(qd_a))
    qd3, qdd3 = np.reshape(qd_a, (k, ns, na)), np.reshape(qdd_a, (k, ns, na))
    if not con.nf:
        Ea = con.E[:, :na]
        QD, QDD, G, cond = qd3 @ Ea.T, qdd3 @ Ea.T, np.repeat(Ea[None], ns, axis=0), np.ones(ns)
    else:
        QD, QDD, G, cond = con.project_all(q, qd3, qdd3)

    def repeated(x):
        return x if k == 1 else np.concatenate([x] * k)

    rows = k * ns
    return States(
        robot,
        repeated(q),
        QD.reshape(rows, -1),
        QDD.reshape(rows, -1),
        repeated(q_a),
        qd3.reshape(rows, na),
        qdd3.reshape(rows, na),
        repeated(G),
        repeated(cond),
        rows,
        0,
    )


#: A state is kept when cond(J_p) < max(max_cond, REFERENCE_FACTOR cond(J_p at the reference)).
REFERENCE_FACTOR = 3.0
#: cond(J_p) limit of a record (:func:`record_states`): the default ``max_cond`` of
#: :func:`sample_states`, so that a record is held to the limit of the random states on which the
#: identifiability of its parameters is decided.
RECORD_MAX_COND = 30.0
#: Largest difference (rad, or m for a translation) between a measured passive coordinate and the
#: model's assembly of it (:func:`record_states`). Below the difference between the two assembly
#: modes of a five-bar at cond(J_p) = 30 (distal links 3.8 degrees = 0.066 rad from collinear, where
#: the modes' passive angles differ by as much), far above encoder noise.
PASSIVE_TOL = 0.02


def state_limit(robot: Robot, max_cond: float) -> float:
    """The cond(J_p) limit that states of ``robot`` are held to: ``max_cond``, or REFERENCE_FACTOR
    times cond(J_p) at the reference configuration when that is larger and the reference is q0
    closed (a mechanism whose regular reference is already above ``max_cond``, e.g. millimetre
    rods measured in metres against radians; a reference moved off a singular q0 is
    ill-conditioned by its closeness to it and keeps ``max_cond``)."""
    con = constraints(robot)
    return float(max_cond if con.moved else max(max_cond, REFERENCE_FACTOR * con.cond_ref))


def record_states(
    robot: Robot,
    t: npt.ArrayLike,
    q_a: npt.ArrayLike,
    qd_a: npt.ArrayLike,
    qdd_a: npt.ArrayLike,
    passive: dict[str, npt.ArrayLike] | None = None,
    max_cond: float | None = None,
    passive_tol: float = PASSIVE_TOL,
    source: str | None = None,
) -> States:
    """Assemble a record, time-ordered actuated states (rows of (ns, n_a) arrays at the times
    ``t`` (ns,)), along the record: the first sample from the reference configuration along a
    regular path (``regular=True`` of :meth:`pga_dyn.loops.system.Constraints.assemble`: the
    reference's assembly mode), each next sample from the previous one (continuation along the
    straight path between them in q_a, which may not meet a singular configuration either). A
    sample where ``t`` does not increase starts a new record (several experiments one after the
    other), assembled from the reference again. Every sample must have cond(J_p) below
    ``max_cond`` (default: :func:`state_limit` of RECORD_MAX_COND, the limit of the random states
    that decide identifiability): near a singular configuration the assembly modes meet and a
    record cannot tell which one the machine runs in.

    ``passive``: measured tree coordinates that are not actuated, {coordinate name: (ns,)
    values} (passive encoders); each assembled passive coordinate must agree with its
    measurement within ``passive_tol`` (rad, or m for a translation; angles compared modulo one
    turn), which tells the model's assembly mode from another one.

    Refused (PgaDynError, naming ``source`` or the robot and the time ``t = ... s``): a sample
    that the assembly does not reach (the record leaves the workspace of the model's assembly
    mode or meets a singular configuration), cond(J_p) at or above the limit, or a measured passive
    coordinate that differs from the model's (the record runs in another assembly mode), and a
    robot that treats its free spins exactly (:func:`pga_dyn.loops.refuse_exact_spins`: a record
    does not measure a spin angle). Trees and couplings alone (no assembly mode) are
    :func:`complete_states`, their passive measurements checked alike.

    Returns
    -------
    States
        (ns, ...) as :func:`complete_states`; ``max_cond`` the limit applied.
    """
    check_robot(robot)
    refuse_exact_spins(robot, "a record")
    where = source or robot.source or robot.name
    t = float_array(f"{where}: t", t)
    ns = q_a.shape[0]
    if t.shape != (ns,):
        raise PgaDynError(f"{where}: t must have one time per sample ({ns}), got shape {t.shape}")
    names = robot.coordinate_names
    measured = {names.index(name): x for name, x in passive_measurements(robot, passive, ns, where).items()}
    if not robot.constrained or not constraints(robot).nf:
        states = complete_states(robot, q_a, qd_a, qdd_a)
    else:
        if max_cond is None:
            max_cond = state_limit(robot, RECORD_MAX_COND)
        elif not (isinstance(max_cond, Real) and max_cond > 1):
            raise PgaDynError(f"max_cond must be a number above 1, got {max_cond!r}")
        states = _along_record(robot, t, q_a, qd_a, qdd_a, float(max_cond), where)
    _check_passive(robot, states.q, measured, t, passive_tol, where)
    return states


def passive_measurements(
    robot: Robot, passive: dict[str, npt.ArrayLike] | None, ns: int, where: str = "arrays"
) -> dict:
    """{name: (ns,) finite values} of measured passive coordinates ``passive`` ({name: values},
    None: none), each a passive tree coordinate of ``robot`` (``robot.passive``); PgaDynError
    naming ``where`` and the coordinate otherwise."""
    names = robot.coordinate_names
    free = [names[k] for k in robot.passive]
    out = {}
    for name, values in (passive or {}).items():
        if name not in free:
            raise PgaDynError(
                f"{where}: q_{name}: '{name}' is not a passive coordinate of '{robot.name}' (passive: {free})"
            )
        x = float_array(f"{where}: q_{name}", values)
        if x.shape != (ns,):
            raise PgaDynError(f"{where}: q_{name} must hold one value per sample ({ns}), got shape {x.shape}")
        bad = np.flatnonzero(~np.isfinite(x))
        if bad.size:
            raise PgaDynError(f"{where}: q_{name} is {x[bad[0]]} at sample {bad[0]}")
        out[name] = x
    return out


def _along_record(robot: Robot, t, q_a, qd_a, qdd_a, limit: float, where: str) -> States:
    """The states of :func:`record_states` for a robot with loop joints, assembled by continuation
    (compiled: :meth:`pga_dyn.loops.system.Constraints.record`, each sample as
    :meth:`~pga_dyn.loops.system.Constraints.complete` with ``regular=True`` from the previous one,
    or from the reference where t does not increase)."""
    con = constraints(robot)
    first = np.ones(len(t), dtype=bool)
    first[1:] = t[1:] <= t[:-1]
    Q, QD, QDD, G, cond, refused = con.record(q_a, qd_a, qdd_a, first, limit)
    if refused is not None:
        s, exc = refused
        if exc is None:
            raise PgaDynError(
                f"{where}: t = {t[s]:.6g} s (sample {s}): cond(J_p) = {cond[s]:.3g} reaches the limit "
                f"{limit:.3g}: the record comes so close to a singular configuration that it cannot "
                "tell the model's assembly mode from another"
            )
        leg = (
            "from the reference configuration along a regular path"
            if first[s]
            else f"from the previous sample (t = {t[s - 1]:.6g} s) in the model's assembly mode"
        )
        raise PgaDynError(
            f"{where}: t = {t[s]:.6g} s (sample {s}): the record leaves the assembly mode of the "
            f"model: this sample is not reached {leg}: {exc}"
        )
    return States(robot, Q, QD, QDD, q_a, qd_a, qdd_a, G, cond, len(t), 0, limit)


def _check_passive(robot: Robot, q, measured: dict, t, tol: float, where: str) -> None:
    """PgaDynError at the first sample where an assembled passive coordinate of the tree states q
    (ns, nq) differs from its measurement (:func:`_passive`) by more than ``tol``."""
    if not measured:
        return
    if not (isinstance(tol, Real) and tol > 0):
        raise PgaDynError(f"passive_tol must be a positive number, got {tol!r}")
    names = robot.coordinate_names
    columns = sorted(measured)
    diff = q[:, columns] - np.column_stack([measured[k] for k in columns])
    for c, k in enumerate(columns):
        if _is_angle(robot, k):
            diff[:, c] = np.angle(np.exp(1j * diff[:, c]))  # modulo one turn
    bad = np.abs(diff) > tol
    if bad.any():
        s = int(np.flatnonzero(bad.any(axis=1))[0])
        c = int(np.flatnonzero(bad[s])[0])
        k = columns[c]
        raise PgaDynError(
            f"{where}: the record runs in another assembly mode from t = {t[s]:.6g} s (sample {s}): "
            f"the measured {names[k]} = {measured[k][s]:.6g} differs from the model's assembly "
            f"{q[s, k]:.6g} by {abs(diff[s, c]):.3g} (tolerance {tol:g}); give a model whose q0 is "
            "in the machine's assembly mode"
        )


def _is_angle(robot: Robot, k: int) -> bool:
    """Whether tree coordinate k is an angle (of a revolute, universal or spherical joint)."""
    i = int(np.searchsorted(robot.q_index, k, side="right") - 1)
    return robot.joint_type[i] in ("R", "U", "S")


#: When fewer than MIN_YIELD of STAGE_DRAWS n draws are kept, the sampling box is halved around
#: the reference configuration, down to MIN_SCALE of its size (:func:`sample_states`).
STAGE_DRAWS = 2
MIN_YIELD = 0.1
MIN_SCALE = 1.0 / 64

#: Default sampling range of a coordinate without limits: rotations (rad), translations (m).
DEFAULT_RANGE = {"rotation": (-np.pi, np.pi), "translation": (-1.0, 1.0)}
#: Joint limits narrower than this (rad or m) are not a sampling box: they would sample the
#: joint as frozen, and the sampled rank would be that of another robot.
MIN_RANGE = 1e-3


def default_bounds(robot: Robot) -> np.ndarray:
    """Sampling box of the actuated coordinates (n_a, 2): the joint limits of the model file
    when they are usable, else (-pi, pi) for rotations and (-1, 1) (m) for translations;
    exponential coordinates of spherical and floating joints in (-1, 1).

    Limits with lower >= upper - MIN_RANGE (e.g. the 0/0 limits of CAD exports) are replaced by
    the default range with a warning that names the joints (:class:`PgaDynWarning`): the rank
    of the regressor is structural (the same on any open set of configurations), so the box
    only has to be a wide enough part of the workspace. Limits of a revolute joint wider than
    one turn are narrowed to one turn (the one holding (-pi, pi) where they allow): the same
    configurations, and the assembly paths of a robot with loops (steps of PATH_STEP from q0)
    stay short. An unbounded side (-inf / +inf: Gazebo's -1e16 / 1e16 in a URDF) is narrowed
    the same way, for a prismatic joint too: a window as wide as the default range, holding it
    where the limits allow."""
    bounds = np.empty((robot.nq, 2))
    bad = []
    for i in range(1, robot.n + 1):
        sl = robot.coordinates(i)
        joint = robot.tree_joints[i - 1]
        default = DEFAULT_RANGE["rotation" if joint.type in ("R", "U") else "translation"]
        if joint.limits is not None and joint.limits[1] - joint.limits[0] >= MIN_RANGE:
            lower, upper = joint.limits
            width = default[1] - default[0]  # one turn for R: the same configurations
            if upper - lower > width and (joint.type == "R" or np.isinf(upper - lower)):
                lower = min(max(default[0], lower), upper - width)
                upper = lower + width
            bounds[sl] = (lower, upper)
        else:
            bounds[sl] = default
            if joint.limits is not None and sl.start in set(robot.actuated):
                bad.append(f"'{joint.name}' {list(joint.limits)}")
    if bad:
        warnings.warn(
            f"{robot.source or robot.name}: joint limits narrower than {MIN_RANGE} ignored for sampling, "
            f"the default range used instead: {', '.join(bad)}",
            PgaDynWarning,
            stacklevel=3,
        )
    return bounds[robot.actuated]


def bounds_array(robot: Robot, bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None) -> np.ndarray:
    """The sampling box (n_a, 2) from ``bounds``: None (:func:`default_bounds`), an array (n_a, 2),
    or a dict {actuated coordinate name: (lower, upper)} that overrides the default box."""
    na = len(robot.actuated)
    if bounds is None:
        return default_bounds(robot)
    if isinstance(bounds, dict):
        box = default_bounds(robot).copy()
        names = list(robot.actuated_names)
        for name, pair in bounds.items():
            if name not in names:
                raise PgaDynError(
                    f"bounds: '{name}' is not an actuated coordinate of '{robot.name}' (actuated: {names})"
                )
            pair = float_array(f"bounds['{name}']", pair)
            if pair.shape != (2,):
                raise PgaDynError(f"bounds['{name}'] must be a (lower, upper) pair, got shape {pair.shape}")
            box[names.index(name)] = pair
    else:
        box = float_array("bounds", bounds)
    if box.shape != (na, 2) or not np.all(np.isfinite(box)) or np.any(box[:, 0] >= box[:, 1]):
        raise PgaDynError(
            f"bounds must be finite (lower, upper) pairs, lower < upper, of shape ({na}, 2) for the "
            f"actuated coordinates {list(robot.actuated_names)}, got {box.tolist()}"
        )
    return box


def count(name: str, value: object) -> int:
    """A positive whole number, or a PgaDynError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise PgaDynError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)


def sample_states(
    robot: Robot,
    n: int,
    seed: int | np.random.Generator | None = None,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    max_cond: float = 30.0,
    max_draws: int | None = None,
    seconds: float | None = None,
) -> States:
    """``n`` valid states: q_a uniform in a box, qd_a and qdd_a uniform in (-1, 1).

    A robot with couplings only is solved in closed form: no draw is rejected. With loop
    joints, each draw is assembled along the straight path from the reference configuration in
    q_a (as :func:`pga_dyn.regressor` does, so that a state is a function of q_a); a path that
    meets a singular configuration is rejected (``regular=True`` of
    :meth:`pga_dyn.loops.system.Constraints.assemble`), which keeps every sample in the regular region
    of the reference's assembly branch; a draw is kept when it closes and cond(J_p) is below the
    limit: ``max_cond``, or REFERENCE_FACTOR times cond(J_p) at the reference configuration when
    that is larger (a mechanism whose regular reference is already above ``max_cond``, e.g.
    millimetre rods measured in metres against radians; a reference moved off a singular q0
    keeps ``max_cond``). The loops are sampled part by part (:class:`pga_dyn.loops.parts.Part`: loops
    that share no coordinate moving one of their bodies relative to the other): a part that
    fails (its path, or its cond(J_f)) is drawn again while the parts that passed keep their
    actuated coordinates, so sixty independent four-bars cost about what one does, and each
    part's coordinates are still uniform on its valid region (rejection part by part: the parts
    are independent). A draw is one vector of the box. While fewer than MIN_YIELD of the parts
    drawn pass, the box is halved around the reference's actuated coordinates every STAGE_DRAWS
    n draws of each part (a branch whose regular region is a small part of the box, e.g. eight
    parallelograms that flatten at 0 and pi in a box of +-10 rad), with a warning.

    Parameters
    ----------
    robot : Robot
    n : int
        Number of states.
    seed : int or None
        Seed of numpy's random generator.
    bounds : None, array_like (n_a, 2) or dict
        The box of q_a (:func:`bounds_array`; default :func:`default_bounds`).
    max_cond : float
        Largest accepted cond(J_p) (raised to REFERENCE_FACTOR cond(J_p) at a regular reference
        configuration when that is larger).
    max_draws : int, optional
        Draws allowed (default 100 n); PgaDynError when fewer than ``n`` valid states are found.
    seconds : float, optional
        Time allowed for the draws of a robot with loops (default: no limit); PgaDynError when
        it runs out before ``n`` valid states are found.

    Returns
    -------
    States
        ``n`` samples: tree states (n, nq), actuated states (n, n_a), G (n, nq, n_a).
    """
    check_robot(robot)
    n = count("n", n)
    box = bounds_array(robot, bounds)
    max_draws, rng = _checked_options(n, max_cond, max_draws, seconds, seed)
    if not robot.constrained or not constraints(robot).nf:
        return _closed_form_states(robot, n, box, rng)
    return _sample_parts(robot, n, box, rng, max_cond, max_draws, seconds)


def _checked_options(n: int, max_cond, max_draws, seconds, seed):
    """(max_draws, numpy random generator) of :func:`sample_states`, its options checked
    (PgaDynError naming the argument)."""
    if not (isinstance(max_cond, Real) and max_cond > 1):
        raise PgaDynError(f"max_cond must be a number above 1, got {max_cond!r}")
    max_draws = 100 * n if max_draws is None else count("max_draws", max_draws)
    if seconds is not None and not (isinstance(seconds, Real) and seconds > 0):
        raise PgaDynError(f"seconds must be a positive number or None, got {seconds!r}")
    try:
        return max_draws, np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise PgaDynError(f"seed must be None or a non-negative integer: {exc}") from None


def _closed_form_states(robot: Robot, n: int, box, rng) -> States:
    """:func:`sample_states` of a tree, or of a robot whose couplings alone fix every passive
    coordinate (q = E q_a + e0: no draw is rejected); ``box`` (n_a, 2)."""
    na = len(robot.actuated)
    q_a = rng.uniform(box[:, 0], box[:, 1], (n, na))
    qd_a, qdd_a = rng.uniform(-1, 1, (2, n, na))
    if not robot.constrained:
        G = np.broadcast_to(
            np.eye(robot.nq), (n, robot.nq, robot.nq)
        )  # one identity, read-only: O(nq^2), not O(n nq^2)
        return States(robot, q_a, qd_a, qdd_a, q_a.copy(), qd_a.copy(), qdd_a.copy(), G, np.ones(n), n, 0)
    return complete_states(robot, q_a, qd_a, qdd_a)


def _sample_parts(robot: Robot, n: int, box, rng, max_cond, max_draws: int, seconds) -> States:
    """:func:`sample_states` of a robot with loop joints: rejection sampling part by part, the box
    (n_a, 2) halved around the reference while too few draws pass."""
    con = constraints(robot)
    na = len(robot.actuated)
    max_cond = state_limit(robot, max_cond)
    box, centre = _holding_reference(robot, box, con.z_ref[:na])
    kept, drawn, scale, stage, stage_kept = [], 0, 1.0, 0, 0
    parts = range(len(con.parts))
    todo, z, q_a = list(parts), con.z_ref.copy(), None  # the parts of the next state still to draw
    deadline = np.inf if seconds is None else time.perf_counter() + seconds
    while len(kept) < n and drawn < max_draws:
        if time.perf_counter() > deadline:
            raise PgaDynError(
                f"{robot.source or robot.name}: sampling stopped after {seconds:.3g} s: {len(kept)} of "
                f"{n} valid states in {drawn} draws (assembled, cond(J_p) < {max_cond:.4g}); allow more "
                "time or change bounds"
            )
        drawn += 1
        q_a, qd_a, qdd_a = _draw(
            rng, con, centre + scale * (box[:, 0] - centre), centre + scale * (box[:, 1] - centre), q_a, todo
        )
        good, state = _assemble_draw(con, q_a, qd_a, qdd_a, z, todo, max_cond)
        stage += len(todo)
        stage_kept += len(good)
        todo = [k for k in todo if k not in good]
        if not todo:  # every part passed: a state, unless a loop no part solves is open (then all again)
            if state is not None:
                kept.append(state)
                report("sampling valid states", len(kept), n)
            todo, z, q_a = list(parts), con.z_ref.copy(), None
        if stage >= STAGE_DRAWS * n * len(parts) and stage_kept < MIN_YIELD * stage and scale > MIN_SCALE:
            scale, stage, stage_kept = scale / 2, 0, 0  # the reference's regular region is a small part of the box
    if scale < 1.0 and len(kept) >= n:
        warnings.warn(
            f"{robot.source or robot.name}: fewer than {MIN_YIELD:.0%} of the draws from the sampling box "
            "reached their actuated position on the reference's assembly branch without meeting a singular "
            f"configuration: the box was shrunk {1 / scale:g} times around the reference, "
            f"q_a = {np.round(centre, 3).tolist()} (the rank is structural: any open part of the branch "
            "gives it)",
            PgaDynWarning,
            stacklevel=3,
        )
    if len(kept) < n:
        raise PgaDynError(
            f"{robot.source or robot.name}: only {len(kept)} of {drawn} draws were valid (assembled, "
            f"cond(J_p) < {max_cond:.4g}); widen max_draws or change bounds"
        )
    cols = [np.array(c) for c in zip(*kept)]
    return States(robot, *cols, drawn=drawn, rejected=drawn - n, max_cond=float(max_cond))


def _holding_reference(robot: Robot, box: np.ndarray, reference: np.ndarray) -> tuple:
    """(box, centre): the sampling box (n_a, 2) widened to hold the reference's actuated
    coordinates ``reference`` (n_a,), with a warning naming the coordinates outside it; the centre
    of the box's shrinking is the reference.

    Every sample is assembled along a path from the reference, so a reference outside the box
    (joint limits that the closed configuration nearest to a file's q0 violates: Gepetto's
    ``true_talos_2_legs`` puts its shins at -1.64 rad, limits [0, 2.62]) sends every path across
    the region between them, where it may meet a singular configuration, and a shrunk box about
    the box's nearest point does not hold the reference either. The rank is structural (the same
    on any open part of the reference's branch), so the samples may leave the joint limits."""
    outside = (reference < box[:, 0]) | (reference > box[:, 1])
    if outside.any():
        names = [
            f"'{robot.actuated_names[k]}' at {reference[k]:.4g} (box [{box[k, 0]:.4g}, {box[k, 1]:.4g}])"
            for k in np.flatnonzero(outside)
        ]
        warnings.warn(
            f"{robot.source or robot.name}: the reference configuration lies outside the sampling box: "
            f"{', '.join(names)}; the box is widened to hold it (every sample is assembled from the "
            "reference; the rank is structural: any open part of the branch gives it)",
            PgaDynWarning,
            stacklevel=4,
        )
        box = np.column_stack([np.minimum(box[:, 0], reference), np.maximum(box[:, 1], reference)])
    return box, reference.copy()


def _draw(rng, con, lower, upper, q_a, todo):
    """One draw (q_a, qd_a, qdd_a), each (n_a,): q_a uniform in the box [lower, upper] (n_a,),
    except that the parts of ``con`` not in ``todo`` keep their actuated coordinates of the last
    draw ``q_a`` (None: a new state, every part drawn); qd_a and qdd_a uniform in (-1, 1)."""
    fresh = rng.uniform(lower, upper)
    qd_a, qdd_a = rng.uniform(-1, 1, (2, len(lower)))
    for k in range(len(con.parts)) if q_a is not None else ():
        if k not in todo:
            fresh[con.parts[k].actuated] = q_a[con.parts[k].actuated]
    return fresh, qd_a, qdd_a


def _assemble_draw(con, q_a, qd_a, qdd_a, z, todo, max_cond):
    """Assemble the parts ``todo`` of ``con`` at q_a (the others held in the free coordinates z
    (nz,), updated in place) and keep those that reach it with cond(J_f) < ``max_cond``. Returns
    (the parts kept, state): state is (q, qd, qdd, q_a, qd_a, qdd_a, G, cond(J_p)) when every part
    of ``todo`` is kept and every loop is closed, else None."""
    failed = {k for k, _, _ in con.assemble_parts(q_a, z, todo, regular=True)}
    q = con.E @ z + con.e0
    r, J = con.loop_jacobian(q)
    if failed:  # cond(J_f) of the parts that assembled
        assembled = [k for k in todo if k not in failed]
        conds = con.conditions(J, assembled)
    else:  # all of them: the whole state, which is kept if every part passes
        assembled = todo
        qd, qdd, G, every = con.project(q, qd_a, qdd_a, J)
        conds = every[todo]
    good = [k for k, c in zip(assembled, conds) if c < max_cond]
    if len(good) < len(todo) or con.open_loops(q, r):
        return good, None
    return good, (q, qd, qdd, q_a, qd_a, qdd_a, G, float(every.max()))


#: States :func:`spin_lock_bounds` samples by default, and the seconds it allows for them.
SPIN_BOUND_SAMPLES = 30
SPIN_BOUND_SECONDS = 20.0


def lock_torques(states: States) -> tuple[np.ndarray, np.ndarray]:
    """(lam (samples, spins), tau_a (samples, n_a)): at each state of ``states`` (a robot whose
    loops lock free spins, :attr:`pga_dyn.loops.Constraints.spins`), the torque about each spin's
    line that its lock holds (N m; the lock row's multiplier) and the actuated forces, with the
    robot's own parameters (:func:`pga_dyn.inertial_parameters`).

    The tree's equations of motion with the constraint forces, tau = Y_tree(q, qd, qdd) pi =
    B tau_a + J^T lambda (tau (nq,): the generalized forces of the tree coordinates, B (nq, n_a)
    the actuated coordinates' columns of the identity, J (rows, nq) the rows of the loops, the
    spin locks and the couplings: :meth:`pga_dyn.loops.Constraints.evaluate`), are solved for
    (tau_a, lambda) in the least-squares sense (the loops' redundant rows share their
    multipliers; a lock's row is independent of the others, so its multiplier is unique). A lock
    row is w_b . u, so its multiplier is the torque about the line that the lock applies to the
    body: zero (to rounding) for a body symmetric about its line, whose spin is cyclic; otherwise
    the torque the real joints would not transmit, by which the locked model is an approximation.
    tau_a equals the projected forces G^T tau."""
    robot = states.robot
    con = constraints(robot)
    locks = con.loop_rows[len(robot.loop_joints) : len(robot.loop_joints) + len(con.spins)]
    ns, na = len(states), len(robot.actuated)
    tau = tree_regressor(robot, states.q, states.qd, states.qdd) @ inertial_parameters(robot)  # (ns, nq)
    B = np.zeros((robot.nq, na))
    B[robot.actuated, np.arange(na)] = 1.0
    lam, tau_a = np.zeros((ns, len(con.spins))), np.zeros((ns, na))
    for s in range(ns):
        J = con.evaluate(states.q[s])[1]
        x = np.linalg.lstsq(np.hstack([B, J.T]), tau[s], rcond=None)[0]
        tau_a[s], lam[s] = x[:na], x[na + locks]
    return lam, tau_a


def spin_lock_bounds(
    robot: Robot,
    samples: int = SPIN_BOUND_SAMPLES,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
) -> list[dict]:
    """What the lock of each free spin of ``robot`` neglects (:mod:`pga_dyn.loops.spins`), at
    ``samples`` states of :func:`sample_states` (seed ``seed``, box ``bounds``), JSON-ready, one dict per locked
    spin: ``body``, ``coupled``, ``offset`` (m), ``asymmetry`` and ``pitch`` (:class:`pga_dyn.loops.FreeSpin`),
    ``symmetric``, ``torque``: the largest torque about the line that the lock holds there (N m,
    :func:`lock_torques`), ``actuated``: the largest actuated force there (N m or N), and
    ``ratio`` = torque / actuated: the bound (all three None, and ``reason`` the PgaDynError's
    message, when no ``samples`` states are found within SPIN_BOUND_SECONDS). The lock replaces the free spin's equation of
    motion, lambda = 0, by the spin rate w . u = 0; a lock holding torques of that relative size
    is the error of the locked model (a real rod spins under them; ``--spins exact``,
    :func:`pga_dyn.loops.exact_spins`, keeps its equation instead). [] without spins."""
    check_robot(robot)
    if not robot.loop_joints or not constraints(robot).spins:
        return []
    try:
        states = sample_states(robot, samples, seed=seed, bounds=bounds, seconds=SPIN_BOUND_SECONDS)
    except PgaDynError as exc:  # no states in the box: said, not a number
        lam, actuated, reason = None, None, str(exc)
    else:
        lam, tau_a = lock_torques(states)
        actuated, reason = float(np.abs(tau_a).max()), None
    out = []
    for k, spin in enumerate(constraints(robot).spins):
        torque = None if lam is None else float(np.abs(lam[:, k]).max())
        out.append(
            {
                "body": spin.name,
                "coupled": list(spin.coupled),
                "offset": spin.offset,
                "pitch": spin.pitch,
                "asymmetry": spin.asymmetry,
                "symmetric": spin.symmetric,
                "torque": torque,
                "actuated": actuated,
                "ratio": None if lam is None else torque / actuated if actuated > 0 else float("inf"),
                "samples": samples,
                "reason": reason,
            }
        )
    return out


def bound_lines(bounds: list[dict]) -> list[str]:
    """One line per spin lock that is an approximation (:func:`spin_lock_bounds`), for reports."""
    out = []
    for b in bounds:
        if b["symmetric"]:
            continue
        screw = f", screw pitch {b['pitch']:.2g} m" if b["pitch"] else ""
        held = (
            f"the lock holds up to {b['torque']:.3g} N m about the line, {b['ratio']:.2g} of the largest actuated "
            f"force ({b['actuated']:.3g}) at {b['samples']} sampled states"
            if b["torque"] is not None
            else f"its bound was not computed: {b['reason']}"
        )
        out.append(
            f"spin of '{b['body']}' LOCKED APPROXIMATELY (the mass of {', '.join(repr(c) for c in b['coupled'])} "
            f"is not symmetric about its line: centre of mass up to {b['offset']:.3g} m off it, inertia asymmetry "
            f"{b['asymmetry']:.2g}{screw}): {held}; --spins exact treats the spin as a coordinate"
        )
    return out
