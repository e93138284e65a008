"""DRNG on a robot model (Algorithm 4): the compiled generalized principles applied to the robot's
Table 2, proven on trees, certified by sampling on loops and couplings."""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import JOINT_CODE
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.interpreted import SMALL_BODIES, runner
from pga_dyn.kinematics import initial_poses
from pga_dyn.model import check_robot

from .numerical import BUDGET, MEMORY, Budget
from .principles import DEPENDENT_RTOL, FREE_SPIN, drng_kernel, independent_loop_vectors
from .result import NullspaceResult, check_memory

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot


#: The most assembly branches at a singular reference whose dimensions :func:`nullspace` reports
#: (each is certified: independent loops each flat at q0 multiply their branches).
BRANCHES_REPORTED = 4


def kernel_arrays(robot: Robot) -> tuple[np.ndarray, ...]:
    """The DRNG kernel's inputs from the robot's Table 2 (computed once: ``robot.derived``):
    joint types, parents, body frames at q0, the joint axes in them (n + 1, 2, 3), gravity, and
    the loop joints' types, bodies, frames at q0 on both sides and first axes."""
    return robot.derived(_kernel_arrays)


def _kernel_arrays(robot):
    T0 = initial_poses(robot)
    kind = np.array([-1] + [JOINT_CODE[t] for t in robot.joint_type[1:]], dtype=np.int64)
    loops = robot.loop_joints
    lkind = np.array([JOINT_CODE[lp.type] for lp in loops], dtype=np.int64)
    lparent = np.array([lp.parent for lp in loops], dtype=np.int64)
    lchild = np.array([lp.child for lp in loops], dtype=np.int64)
    lframe_p = np.array([T0[lp.parent] @ lp.parent_frame for lp in loops]).reshape(-1, 4, 4)
    lframe_c = np.array([T0[lp.child] @ lp.child_frame for lp in loops]).reshape(-1, 4, 4)
    z = np.array([0.0, 0.0, 1.0])  # the frame axis of joints that have none (S, F)
    laxis = np.array([lp.axes[0] if len(lp.axes) else z for lp in loops]).reshape(-1, 3)
    axes = np.array(robot.axes, dtype=float)
    axes[~np.any(axes[:, 0] != 0.0, axis=1), 0] = z
    return (kind, robot.parent, T0, axes, robot.gravity, lkind, lparent, lchild, lframe_p, lframe_c, laxis)


def drng_blocks(robot: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The output of the compiled DRNG in block form, a basis: ``bodies`` (K, 2), ``vals``
    (K, 2, 10) and the provenance codes (K, 2) (see :func:`drng.principles.drng_kernel`), less
    the loop joints' vectors that repeat others (:func:`drng.principles.independent_loop_vectors`,
    run only when there are loop joints). Memory O(n): use it for very large robots, whose
    dense basis would not fit. The first calls of a process on a robot of at most SMALL_BODIES
    bodies run the kernels' Python source, the same bits without compiling them
    (:func:`pga_dyn.interpreted.runner`)."""
    small = robot.n <= SMALL_BODIES
    bodies, vals, prov = runner(drng_kernel, small)(*kernel_arrays(robot))
    if robot.loop_joints:
        keep = runner(independent_loop_vectors, small)(robot.parent, bodies, vals, prov, DEPENDENT_RTOL)
        if not keep.all():
            bodies, vals, prov = bodies[keep], vals[keep], prov[keep]
        bodies, vals, prov = _with_free_spins(robot, bodies, vals, prov)
    return bodies, vals, prov


def _with_free_spins(robot: Robot, bodies: np.ndarray, vals: np.ndarray, prov: np.ndarray) -> tuple:
    """The blocks with one vector per free spin that the loops lock on a body with mass
    (:func:`pga_dyn.loops.spin_vector`: its inertia about the spin line, which only the spin
    would reveal; rule FREE_SPIN, on the body's tree joint)."""
    from pga_dyn.loops import constraints, spin_vector

    spins = [spin for spin in constraints(robot).spins if spin.mass]
    if not spins:
        return bodies, vals, prov
    extra = np.zeros((len(spins), 2, 10))
    extra[:, 0] = [spin_vector(robot, spin) for spin in spins]
    return (
        np.vstack([bodies, [[spin.body, 0] for spin in spins]]),
        np.concatenate([vals, extra]),
        np.vstack([prov, [[spin.body, FREE_SPIN] for spin in spins]]),
    )


def nullspace(
    robot: Robot,
    certify: bool | None = None,
    samples: int | None = None,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    budget: float | None = BUDGET,
    memory: float = MEMORY,
    branch: int | None = None,
    reference: npt.ArrayLike | None = None,
) -> NullspaceResult:
    """The regressor nullspace of ``robot`` by the generalized principles (DRNG, Algorithm 4,
    with the rules of :mod:`drng.principles`).

    On a tree (no loop joints, no couplings) the rules are complete (docs/drng.md): the basis
    is *proven* (``proven`` True, no sampling, microseconds). On a robot with loops or
    couplings the rules give valid vectors that can miss directions, so the basis is checked
    against the sampled regressor and completed (:func:`drng.certify.certificate`): certified
    when rank(DRNG) + numerical rank = 10 n with a clean singular gap; ``geometric`` is False
    when numerical vectors complete the basis and ``certificate['short']`` names the bodies.

    ``certify``: None (default) samples only when the answer is not proven; True samples in
    every case (a proven answer is then also certified); False never samples (an answer that
    is not proven is then marked ``certified=None``, "not certified" in every output).
    ``samples`` (default 3 rows per parameter), ``seed`` and ``bounds`` (the sampling box of
    the actuated positions, see :func:`pga_dyn.sampling.bounds_array`) go to the certificate.

    The vectors are kept in the kernel's block form (O(n) memory); the dense ``basis``
    (10 n, k) is built on its first access (:class:`drng.result.NullspaceResult`), and a proven
    ``dim`` is the count of vectors, so a proven answer is linear in n end to end.
    ``budget`` (seconds, None: no limit) bounds the certificate's time and ``memory`` (bytes)
    the certificate's matrices: a PgaDynError says what would not fit
    (:func:`drng.certify.certificate`); the dense ``basis`` is checked against
    ``drng.result.MEMORY`` before it is built.

    ``branch`` and ``reference`` (a tree configuration (nq,)) choose the reference configuration
    of the loops and, at a singular one, the assembly branch the answer, certificate and sampling
    follow (:func:`pga_dyn.loops.on_branch`; docs/drng.md, assembly modes). When several branches
    meet at the reference (at most BRANCHES_REPORTED), a certified answer lists the certified
    dimension on each in ``certificate['branches']`` ([{"branch", "dimension", "certified"}]; a
    branch that cannot be answered has dimension None and its ``reason``); when more meet there,
    ``certificate['branch_count']`` holds their number (each answered by ``branch=``). When the
    loops do not close at q0's actuated position, ``certificate['reference']`` says how far the
    reference moved (:meth:`pga_dyn.loops.closest.Closest.report`).
    """
    check_robot(robot)
    if branch is not None or reference is not None:
        from pga_dyn.loops import on_branch

        robot = on_branch(robot, branch or 0, reference)
    result = _answer(robot, certify, samples, seed, bounds, budget, memory)
    if robot.loop_joints:
        from pga_dyn.loops import constraints

        con = constraints(robot)
        if con.closest is not None:
            result.certificate["reference"] = con.closest.report()
    if result.certified is not None and robot.loop_joints:
        from pga_dyn.loops import on_branch

        if con.branches > BRANCHES_REPORTED:
            result.certificate["branch_count"] = con.branches
            result.certificate["branch"] = con.branch
        if 1 < con.branches <= BRANCHES_REPORTED:
            listed = []
            for k in range(con.branches):
                if k == con.branch:
                    other = result
                else:
                    try:
                        with warnings.catch_warnings():  # the warning of the reference was given once
                            warnings.simplefilter("ignore", PgaDynWarning)
                            other = _answer(on_branch(robot, k, con.start), True, samples, seed, bounds, budget, memory)
                    except PgaDynError as error:  # that branch cannot be answered: said, this one stands
                        listed.append({"branch": k, "dimension": None, "certified": False, "reason": str(error)})
                        continue
                listed.append({"branch": k, "dimension": other.dim, "certified": other.certified})
            result.certificate["branches"] = listed
    return result


def _answer(robot: Robot, certify, samples, seed, bounds, budget, memory) -> NullspaceResult:
    """:func:`nullspace` on the reference configuration and branch of ``robot``'s constraints."""
    Budget(budget, "the certificate")  # the arguments are checked even when no sampling follows
    check_memory("nothing", 0.0, memory)
    if robot.loop_joints:
        from pga_dyn.loops import constraints

        constraints(robot)  # the loops must close at q0's actuated position: a clear error if not
    start = time.perf_counter()
    bodies, vals, prov = drng_blocks(robot)
    where = robot.source or robot.name
    if not np.all(np.isfinite(vals)):
        raise PgaDynError(
            f"{where}: the nullspace of {robot.name} is not finite: the model's numbers "
            "(lengths, axes) are too large for floating point"
        )
    names = robot.joint_names + tuple(lp.name for lp in robot.loop_joints)
    proven = not robot.constrained
    result = NullspaceResult(
        robot.name,
        "drng",
        None,
        prov,
        names,
        seconds=time.perf_counter() - start,
        proven=proven,
        blocks=(robot.n, bodies, vals),
    )
    if certify is False or (certify is None and proven):
        return result
    from .certify import certificate

    return certificate(robot, result, samples, seed, bounds, budget, memory)
