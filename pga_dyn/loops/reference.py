"""The reference configuration of a constrained robot, where every assembly path starts, and
the assembly branch it selects (DRNG paper section 5.1 and Table 2; docs/drng.md, "Assembly
modes").

C(q) = 0 (eq. 91) has several solutions q_p for one q_a: the assembly modes, branches of the
constraint manifold that meet only at singular configurations, where J_f (m, nf) is
rank-deficient. pga-dyn follows one branch, the reference's: q0 with its passive coordinates
closed by Newton from q0 (:func:`close_at_q0`; q0 itself when its loops close), and every
state is assembled along a path from there that does not cross a singularity
(:mod:`pga_dyn.loops.newton`). :func:`reference_configuration` returns it as the free
coordinates z_ref (nz,), with cond(J_p) there (the largest cond(J_f) of the parts) and the
reciprocal condition estimate of each part's J_f (parts,) that its paths watch.

Free motions (J_f rank-deficient at the reference and at its neighbour q_a = q0 +
REFERENCE_STEP (1, ..., 1): passive motions no actuator drives) are locked when they are free
spins (:func:`settle_free_motions`; bodies not symmetric about their lines with a warning:
:mod:`pga_dyn.loops.spins`); the rank of each part's J_f there is decided and reported
(:func:`reference_ranks`). A singular reference (branches of different identifiability can
meet there) is left for the best-conditioned of q_a = q0 + t (1, ..., 1), t = REFERENCE_STEP,
..., REFERENCE_STEPS REFERENCE_STEP, with a warning naming the loops and the passive joints the
loops leave free to first order (:func:`leave_singular_reference`, :func:`singular_motion`);
when all of these are singular, the loops leave a passive motion no actuator drives that is not
a free spin, and a ModelError names it and why it changes the actuated dynamics. The branches
that meet at a singular reference are told apart at its first neighbour (:func:`branches`) and
numbered, 0 the one taken by default; ``branch`` chooses another, ``start`` (q (nq,)) another
reference configuration (:func:`pga_dyn.loops.system.on_branch`).

The functions take ``con``, the :class:`pga_dyn.loops.system.Constraints` being built, and read
its public attributes (robot, E (nq, nz), e0 (nq,), na, nf, m, z_index, parts) and methods
(evaluate, residuals, condition).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..errors import ModelError, PgaDynWarning
from .closest import CLOSEST_TOL, MOVED_TOL, RESTART_SCALES, RESTARTS, Closest, PartProblem, closest_closed
from .closure import CLOSURE_TOL, LOOP_ROWS
from .newton import SINGULAR_RCOND
from .parts import closure_rank, rcond_estimate
from .spins import find_spins, free_directions

#: Steps (rad or m, every actuated coordinate) from a singular reference configuration towards
#: the regular one the samples start from (:func:`leave_singular_reference`).
REFERENCE_STEP = 0.1
REFERENCE_STEPS = 10
#: A closed configuration found nearest to q0 with cond(J_p) above INWARD_COND (and regular) lies
#: at the edge of the workspace; the reference walks inside to cond(J_p) <= INWARD_TARGET, in at
#: most INWARD_WALK steps (:func:`into_workspace`).
INWARD_COND = 1e3
INWARD_TARGET = 100.0
INWARD_WALK = 40
#: The walk's first step (rad or m along a direction of q_a; doubled after a step taken, up to
#: REFERENCE_STEP, halved where none is, down to INWARD_STEP / 64), and the largest change of a
#: free coordinate in one step (a larger one is a path that wandered: turns of a passive joint).
INWARD_STEP = REFERENCE_STEP / 16
INWARD_JUMP = 0.5


def reference_configuration(con, branch=0, start=None) -> tuple:
    """(z_ref (nz,), cond_ref, moved, rcond_ref (parts,), count, closest): the free coordinates of the
    reference configuration (:func:`close_at_q0`, from ``start`` (nq,) when given, else q0, moved
    to the nearest closed configuration found when it does not close there: ``closest``, a
    :class:`~pga_dyn.loops.closest.Closest` or None; a
    singular one left for a regular neighbour on assembly branch ``branch``, ``moved``, with a
    warning: :func:`leave_singular_reference`), cond(J_p) there (the largest over the parts; 1
    without passive coordinates), the reciprocal condition estimate of each part's J_f there
    (:func:`pga_dyn.loops.parts.rcond_estimate`), which its assembly paths watch, and the number
    of branches that meet at the reference (1 at a regular one)."""
    z = np.zeros(con.E.shape[1]) if start is None else con.free(start)
    z0 = z.copy()
    if not con.nf:
        return z, 1.0, False, np.ones(len(con.parts)), 1, None
    closest = con.closest = close_at_q0(con, z, "q0" if start is None else "the reference given")
    J = con.evaluate(con.E @ z + con.e0)[1]
    problem = settle_free_motions(con, z, J)
    J = con.evaluate(con.E @ z + con.e0)[1]
    cond, moved, count = con.condition(J), False, 1
    if closest is not None and INWARD_COND < cond < 1.0 / SINGULAR_RCOND:
        z, closest = into_workspace(con, z, cond, closest, z0)
        con.closest = closest
        J = con.evaluate(con.E @ z + con.e0)[1]
        cond = con.condition(J)
    if cond >= 1.0 / SINGULAR_RCOND:
        z, cond, count = leave_singular_reference(con, z, J, problem, branch)
        moved = True
        J = con.evaluate(con.E @ z + con.e0)[1]
    elif branch:
        raise ModelError(
            f"{con.robot.source or con.robot.name}: branch={branch}: the reference configuration is "
            "regular, one assembly branch passes there (branch 0)"
        )
    return z, cond, moved, np.array([rcond_estimate(p.free_jacobian(J)) for p in con.parts]), count, closest


def into_workspace(con, z, cond, closest, z0) -> tuple:
    """(z, closest): the reference moved inside the workspace from the closed configuration
    nearest to q0, z (nz,), when that is regular but ill-conditioned (cond(J_p) ``cond`` above
    INWARD_COND; :func:`reference_configuration`).

    The configuration nearest to a q0 whose loops are far from closed lies at the edge of the
    workspace (Gepetto's ``wl16_like``: a hexapod leg whose nearest closed configuration has
    cond(J_p) = 3.4e4, legs about to leave the workspace in most directions of q_a). Samples
    assembled from there start ill-conditioned, and the sampled rank is decided with a poor gap.
    The walk takes, from z, the best-conditioned of the steps of length h along +-e_i and
    +-(1, ..., 1)/sqrt(n_a) in q_a that assemble (the assembly's path from the step's start)
    without a free coordinate changing by more than INWARD_JUMP, while that lowers cond(J_p).
    Branches meet at the edge, so the branch is the one this walk reaches (the reference's:
    every sample starts from it, and ``branch=`` does not apply). h starts at
    INWARD_STEP, doubles after a step (up to REFERENCE_STEP) and halves where no step is taken
    (down to INWARD_STEP / 64): near the edge a passive coordinate moves like the square root
    of the step. It stops at cond(J_p) <= INWARD_TARGET or after INWARD_WALK steps.
    ``closest`` (:class:`~pga_dyn.loops.closest.Closest`) is returned with the moves counted
    from the configuration given, z0 (nz,), and the condition numbers before and after the walk."""
    na = con.na
    ones = np.ones(na) / np.sqrt(na)
    directions = np.vstack([np.eye(na), -np.eye(na), ones, -ones])
    nearest, h = cond, INWARD_STEP
    for _ in range(INWARD_WALK):
        if cond <= INWARD_TARGET:
            break
        J = con.evaluate(con.E @ z + con.e0)[1]
        rconds = [rcond_estimate(part.free_jacobian(J)) for part in con.parts]
        best = None
        for d in directions:
            trial, target = z.copy(), z[:na] + h * d
            if any(
                part.assemble(con.E, con.e0, trial, target[part.actuated], 1e-12, 200, max(r, 1e-300), 0.0)[0]
                for part, r in zip(con.parts, rconds)
            ):
                continue
            trial[:na] = target
            if np.abs(trial - z).max() > INWARD_JUMP:  # a path that wandered (turns of a passive joint)
                continue
            c = con.condition(con.evaluate(con.E @ trial + con.e0)[1])
            if c < cond and (best is None or c < best[1]):
                best = (trial, c)
        if best is None:
            h /= 2
            if h < INWARD_STEP / 64:
                break
            continue
        z, cond, h = best[0], best[1], min(2 * h, REFERENCE_STEP)
    return z, moved_from(con, z, z0, closest, nearest_cond=nearest, cond=cond)


def moved_from(con, z, z0, closest, **fields) -> Closest:
    """``closest`` with its moves (coordinates that changed by more than MOVED_TOL) and distance
    counted from z0 (nz,), the configuration given, to z (nz,), and ``fields`` replaced."""
    change = z - z0
    moved = tuple(
        (con.robot.coordinate_names[con.z_index[k]], float(change[k]))
        for k in range(len(z))
        if abs(change[k]) > MOVED_TOL
    )
    return dataclasses.replace(closest, moved=moved, distance=float(np.linalg.norm(change)), **fields)


def close_at_q0(con, z, given="q0") -> Closest | None:
    """Close the loops at the actuated position of q0: the free coordinates z (nz,), zero on
    entry (or those of a chosen start, ``given`` names it), get each part's passive coordinates
    solved by Newton from there. A part that does not close there is closed at the configuration
    nearest to z found with every free coordinate of the part free, actuated ones included
    (:func:`pga_dyn.loops.closest.closest_closed`); the :class:`~pga_dyn.loops.closest.Closest`
    returned says how far each coordinate moved (None when z closed as given). Raise a ModelError
    naming the loops and the smallest residual reached on each when no closed configuration is
    found."""
    robot = con.robot
    z0 = z.copy()
    opened = [(name, res) for name, res in con.residuals(con.E @ z + con.e0) if res > CLOSURE_TOL]
    failed = [
        part
        for part in con.parts
        if part.assemble(con.E, con.e0, z, z[part.actuated].copy(), 1e-12, 200, 1e-300, 0.0)[0]
    ]
    unclosed = []
    for part in failed:
        problem = PartProblem(con, part, z)
        x, res = closest_closed(problem, z[part.columns].copy())
        if res > CLOSEST_TOL:
            names = {con.names[k] for k in part.loops}
            unclosed += [(name, value) for name, value in con.residuals(problem.q(x)) if name in names]
            continue
        z[part.columns] = x
        part.assemble(con.E, con.e0, z, z[part.actuated].copy(), 1e-12, 200, 1e-300, 0.0)
    if unclosed:
        raise ModelError(
            f"{robot.source or robot.name}: the loop joint{'s' if len(unclosed) > 1 else ''} "
            f"{listing([name for name, _ in unclosed])} cannot be closed at the actuated position of {given}"
            + (" (q0: all tree coordinates zero)" if given == "q0" else "")
            + ", and no closed configuration was found with every coordinate "
            f"free either (Levenberg-Marquardt from there and from {len(RESTART_SCALES) * RESTARTS} random "
            "starts around it; docs/parallel_machines.md, assembly from the file's configuration); the smallest "
            "residual reached on each loop: " + ", ".join(f"'{name}' ({value:.3g})" for name, value in unclosed)
        )
    closed = con.residuals(con.E @ z + con.e0)
    if any(res > CLOSURE_TOL for _, res in closed):
        listed = ", ".join(f"'{name}' (residual {res:.3g})" for name, res in closed if res > CLOSURE_TOL)
        raise ModelError(
            f"{robot.source or robot.name}: the loop joints {listed} cannot be closed at {given}: no "
            "passive coordinate moves them (they close or not with the actuated coordinates alone)"
        )
    if not failed:
        return None
    found = Closest((), 0.0, max((res for _, res in closed), default=0.0), tuple(opened), given)
    return moved_from(con, z, z0, found)


def settle_free_motions(con, z, J):
    """Lock the free spins of the closed reference z (nz,) (J its constraint Jacobian) with
    :meth:`pga_dyn.loops.system.Constraints.lock` when every free motion there is one
    (:func:`pga_dyn.loops.spins.find_spins`) and stays free at the neighbour q_a + REFERENCE_STEP
    (1, ..., 1) (else the reference is singular, not the loops free: nothing is locked); a
    PgaDynWarning names the spins of bodies not symmetric about their lines, whose lock is an
    approximation (:meth:`pga_dyn.loops.spins.FreeSpin.approximation`). Returns
    None, or the sentence of :func:`~pga_dyn.loops.spins.find_spins` naming a free motion that
    is no spin (for the refusal, when no neighbour is regular either)."""
    if not free_directions(con, J)[0].shape[1]:
        return None
    spins, problem = find_spins(con, z, J)
    if problem:
        return problem
    near = z.copy()
    target = z[: con.na] + REFERENCE_STEP
    if not any(
        part.assemble(con.E, con.e0, near, target[part.actuated], 1e-12, 200, 1e-300, 0.0)[0] for part in con.parts
    ):
        near[: con.na] = target
        if free_directions(con, con.evaluate(con.E @ near + con.e0)[1])[0].shape[1] < len(spins):
            return None  # the motion is free at the reference only: a singular configuration
    con.lock(spins)
    rough = [spin for spin in spins if not spin.symmetric]
    if rough and any(  # a lock that is an approximation must hold along a path: to the same neighbour
        part.assemble(con.E, con.e0, z.copy(), target[part.actuated], 1e-12, 200, 1e-300, 0.0)[0] for part in con.parts
    ):
        con.lock(())
        return (
            "; ".join(f"the free spin of body '{spin.name}' couples to the motion: {spin.coupling()}" for spin in rough)
            + f"; locked, the assembly does not reach q_a + {REFERENCE_STEP:g} (--spins exact makes the spin a "
            "coordinate)"
        )
    if rough:
        warnings.warn(
            f"{con.robot.source or con.robot.name}: "
            + "; ".join(f"the free spin of body '{spin.name}' is locked, {spin.approximation()}" for spin in rough)
            + " (docs/drng.md, free spins)",
            PgaDynWarning,
            stacklevel=5,
        )
    return None


def reference_ranks(con) -> tuple:
    """The rank decision of each part's J_f at the reference (:func:`pga_dyn.loops.parts.closure_rank`),
    the spin locks' rows included."""
    J = con.evaluate(con.E @ con.z_ref + con.e0)[1]
    return tuple(closure_rank(part.free_jacobian(J)) for part in con.parts)


def singular_motion(con, J) -> tuple:
    """(loops, joints, free): the names of the loop joints and of the passive joints that move with
    the motions J_f (J: the constraint Jacobian (m + couplings, nq) at a singular configuration)
    leaves free to first order (singular values at or below SINGULAR_RCOND times the largest),
    and these motions (nf, k), orthonormal columns;
    when that motion moves no loop frame (a pin spinning about the closure point), the loops of
    the clusters of those joints."""
    robot = con.robot
    Jf = J[: con.m] @ con.E[:, con.na :]
    _, s, vt = np.linalg.svd(Jf)
    free = vt[np.concatenate([s, np.zeros(len(vt) - len(s))]) <= SINGULAR_RCOND * s[0]]
    moving = np.abs(free).max(axis=0) > 0.1 * np.abs(free).max()
    loops, row = [], 0
    for lp in robot.loop_joints:
        rows = Jf[row : row + LOOP_ROWS[lp.type]]
        if np.abs(rows[:, moving]).max() > 1e-9 * max(np.abs(Jf).max(), 1e-300):
            loops.append(lp.name)
        row += LOOP_ROWS[lp.type]
    joints = [robot.coordinate_names[k] for k in con.z_index[con.na :][moving]]
    if not loops:  # the free motion moves no loop frame (a pin spinning about the closure point):
        bodies = {
            b
            for b in range(1, robot.n + 1)  # name the loops of the clusters of its joints
            if set(range(*robot.coordinates(b).indices(robot.nq))) & set(con.z_index[con.na :][moving])
        }
        clusters = [set(c) for c in robot.loop_clusters if bodies & set(c)]
        loops = [lp.name for lp in robot.loop_joints if any({lp.parent, lp.child} & c for c in clusters)]
    return loops, joints, free.T


def regular_neighbour(con, z_ref, first=None) -> tuple:
    """(z (nz,) or None, cond, t): the best-conditioned of the configurations q_a = q0 + t (1, ...,
    1), t = REFERENCE_STEP, ..., REFERENCE_STEPS REFERENCE_STEP, each assembled from the previous
    one, starting at the free coordinates z_ref (nz,) (or at ``first``, the closed configuration
    at t = REFERENCE_STEP of a branch: :func:`branches`); the search stops where a part does not
    assemble. cond is inf (and z None) when none was assembled."""
    z, best, cond, step = (z_ref if first is None else first).copy(), None, np.inf, 0.0
    for k in range(1, REFERENCE_STEPS + 1):  # along q_a = q0 + t (1, ..., 1): the best-conditioned point
        target = z_ref[: con.na] + k * REFERENCE_STEP
        if (first is None or k > 1) and any(
            part.assemble(con.E, con.e0, z, target[part.actuated], 1e-12, 200, 1e-300, 0.0)[0] for part in con.parts
        ):
            break
        z[: con.na] = target
        c = con.condition(con.evaluate(con.E @ z + con.e0)[1])
        if c < cond:
            best, cond, step = z.copy(), c, k * REFERENCE_STEP
    return best, cond, step


def branches(con, z_ref, free) -> list:
    """The assembly branches that meet at a singular reference z_ref (nz,), told apart at its
    neighbour q_a = q0 + REFERENCE_STEP (1, ..., 1): the distinct closed configurations (nz,
    each) the assembly path reaches there from z_ref (as :func:`regular_neighbour`), and from
    z_ref with its passive coordinates moved by +-2 REFERENCE_STEP along each motion J_f leaves
    free (``free`` (nf, k), orthonormal columns). The first is the branch followed by default."""
    found = []
    for kick in [np.zeros(con.nf)] + [sign * 2 * REFERENCE_STEP * v for v in free.T for sign in (1, -1)]:
        z, target = z_ref.copy(), z_ref[: con.na] + REFERENCE_STEP
        z[con.na :] += kick
        if any(
            part.assemble(con.E, con.e0, z, target[part.actuated], 1e-12, 200, 1e-300, 0.0)[0] for part in con.parts
        ):
            continue
        z[: con.na] = target
        if all(np.abs(z - other).max() > 1e3 * CLOSURE_TOL for other in found):
            found.append(z)
    return found


def leave_singular_reference(con, z_ref, J, problem=None, branch=0) -> tuple:
    """At a singular reference z_ref (nz,) (J: its constraint Jacobian; J_f rank-deficient:
    several assembly modes, branches of C(q) = 0, can meet there; :func:`branches` numbers them)
    move the reference to the regular neighbour (:func:`regular_neighbour`) on branch ``branch``:
    the samples then follow that branch. Returns (z, cond(J_p), number of branches). A
    PgaDynWarning names the loops, the passive joints the loops leave free to first order
    (:func:`singular_motion`), the branches and the reference used; a ModelError when no
    neighbour is regular (a free motion that is not a free spin: ``problem``, from
    :func:`settle_free_motions`, says why) or when there is no branch number ``branch``."""
    robot = con.robot
    loops, joints, free = singular_motion(con, J)
    found = branches(con, z_ref, free)
    if not 0 <= branch < max(len(found), 1):
        raise ModelError(
            f"{robot.source or robot.name}: branch={branch}: {len(found)} assembly branch"
            f"{'es meet' if len(found) != 1 else ' meets'} at the singular reference configuration "
            f"(numbered 0 to {len(found) - 1})"
        )
    best, cond, step = regular_neighbour(con, z_ref, found[branch] if found else None)
    base = "q0" if con.closest is None and con.start is None else "its q_a"
    if cond < 1.0 / SINGULAR_RCOND:
        used = (
            f"the samples start from the regular configuration q_a = {base} + {step:g} on every actuated "
            f"coordinate (the best-conditioned of {base} + {REFERENCE_STEP:g}, ..., "
            f"{REFERENCE_STEPS * REFERENCE_STEP:g}; cond(J_p) = {cond:.3g}), on branch {branch} of the "
            f"{len(found)} that meet there (branch= chooses)"
        )
    else:
        raise ModelError(
            f"{robot.source or robot.name}: J_p is rank-deficient at the reference configuration "
            f"({closed_where(con)}) and at {base} + {REFERENCE_STEP:g}, ..., "
            f"{REFERENCE_STEPS * REFERENCE_STEP:g} on every "
            f"actuated coordinate, along joints {listing(joints)} (loop joint{'s' if len(loops) > 1 else ''} "
            f"{listing(loops)}): the loops leave a passive motion that no actuator drives, so the actuated "
            "coordinates do not determine the configuration"
            + (f"; {problem}" if problem else "")
            + ". pga-dyn locks a free spin (a body turning about a line fixed in it, such as the line "
            "through two joint centres; docs/drng.md, free spins): "
            "otherwise actuate one of these joints, or use joints that remove the free motion"
        )
    warnings.warn(
        f"{robot.source or robot.name}: the reference configuration ({closed_where(con)}) is singular at "
        f"loop joint{'s' if len(loops) > 1 else ''} {listing(loops)} (J_p is "
        f"rank-deficient along joints {listing(joints)}): assembly modes of "
        f"different identifiability can meet there; {used} (docs/drng.md, assembly modes)",
        PgaDynWarning,
        stacklevel=4,
    )
    return best, cond, len(found)


def closed_where(con) -> str:
    """What the reference is, for the messages: q0 with its loops closed, or the closed
    configuration nearest to q0 (or to the reference given) when its loops did not close there."""
    if con.closest is None:
        return "q0, loops closed"
    given = con.closest.given
    return (
        f"the closed configuration found nearest to {given}: the loops do not close at the actuated position of {given}"
    )


def listing(names, most=6) -> str:
    """'a', 'b', 'c' (and 4 more): the first ``most`` of ``names`` for a message."""
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" (and {len(names) - most} more)" if len(names) > most else "")
