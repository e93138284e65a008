"""DRNG on a robot model (Algorithm 4): the compiled principles applied to the robot's Table 2."""

from __future__ import annotations

import time

import numpy as np

from pga_dyn.conventions import JOINT_CODE
from pga_dyn.kinematics import initial_poses
from pga_dyn.model import check_robot

from .principles import dense_basis, drng_kernel
from .result import NullspaceResult


def kernel_arrays(robot):
    """The DRNG kernel's inputs from the robot's Table 2 (computed once: ``robot.derived``)."""
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
    axis = np.array([a if np.any(a) else z for a in robot.axes[:, 0]])
    return (kind, robot.parent, T0, axis, robot.gravity, lkind, lparent, lchild, lframe_p, lframe_c, laxis)


def drng_blocks(robot):
    """The raw output of the compiled DRNG in block form: ``bodies`` (K, 2), ``vals`` (K, 2, 10)
    and the provenance codes (K, 2) (see :func:`drng.principles.drng_kernel`). Memory O(n):
    use it for very large robots, whose dense basis would not fit."""
    return drng_kernel(*kernel_arrays(robot))


def nullspace(robot, certify: bool = True, samples: int | None = None, seed=0, bounds=None) -> "NullspaceResult":
    """The regressor nullspace of ``robot`` by the three principles (DRNG, Algorithm 4),
    certified by default.

    The certificate (see :func:`drng.certify.certificate`) checks the basis against the stacked
    regressor of ``samples`` valid states (default 3 rows per parameter; actuated positions in
    ``bounds``, see :func:`pga_dyn.sampling.bounds_array`): certified when rank(DRNG) +
    numerical rank = 10 n with a clean singular gap; when the principles fall short (no
    gravity, pure translations, fixed axes away from the base, couplings: docs/drng.md), the
    basis is completed by the numerical remainder (``geometric`` is then False and
    ``certificate['short']`` names the bodies involved). ``certify=False`` returns the
    principles' basis alone, in microseconds, marked ``certified=None`` ("not certified" in
    every output): it can miss directions.
    """
    check_robot(robot)
    if robot.loop_joints:
        from pga_dyn.loops import constraints

        constraints(robot)  # the loops must close at q0's actuated position: a clear error if not
    start = time.perf_counter()
    bodies, vals, prov = drng_blocks(robot)
    B = dense_basis(robot.n, bodies, vals)
    names = robot.joint_names + tuple(lp.name for lp in robot.loop_joints)
    result = NullspaceResult(robot.name, "drng", B, prov, names, seconds=time.perf_counter() - start)
    if not certify:
        return result
    from .certify import certificate

    return certificate(robot, result, samples, seed, bounds)
