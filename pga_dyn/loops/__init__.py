"""Closed loops and couplings: constraints C(q) = 0, assembly, and the projection onto q_a
(DRNG paper section 5.1, eqs. 91-92 and 52).

A constrained robot is a spanning tree plus loop joints and couplings (URDF+). Its
configuration is fixed by the actuated coordinates q_a; the passive ones follow from the
constraints, C(q) = 0 (eq. 91), J_a qd_a + J_p qd_p = 0 (eq. 92), J qdd + Jd qd = 0. The
modules, lowest first (each imports only those above it):

* :mod:`pga_dyn.loops.closure`: the equations: the loop joints' residual, Jacobian and bias
  (compiled kernels beside their readable PGA twins), the arrays they read, and the couplings'
  closed form q = E z + e0. New kinds of loop joint go here.
* :mod:`pga_dyn.loops.newton`: assembly, compiled: Newton (Levenberg-Marquardt) steps on the
  passive coordinates along a path of actuated positions, watched for singularities.
* :mod:`pga_dyn.loops.parts`: the independent parts of the loops, each assembled, conditioned
  and projected on its own; the rank decision of a part's J_f (redundant closures: its rank
  below its rows); compiled batches of all parts: a record assembled sample after sample
  (``record_kernel``) and many states projected (``project_kernel``).
* :mod:`pga_dyn.loops.closest`: the closed configuration nearest to a given one with every
  coordinate free (Levenberg-Marquardt, continuation and restarts): the reference of a model
  whose q0 does not close at its actuated position.
* :mod:`pga_dyn.loops.spins`: free motions (J_f's rank below its columns), recognised as free
  spins and locked at zero spin rate (an approximation, stated, for a body not symmetric about
  its line).
* :mod:`pga_dyn.loops.reference`: the reference configuration (q0 closed) where every path
  starts, the assembly branch it selects, and a singular reference left for a regular one.
  Free spins are locked there (or a free motion that changes the dynamics refused); choosing
  other branches goes here.
* :mod:`pga_dyn.loops.system`: :class:`Constraints`, built once per robot by
  :func:`constraints`: assembles states and projects them, G = dq/dq_a (nq, n_a), Y_a = G^T
  Y_tree; the copies of a robot on another branch (:func:`on_branch`) or with its free spins
  as coordinates of their own (:func:`exact_spins`).

Every public name of these modules is importable from ``pga_dyn.loops``.
"""

from .closest import CLOSEST_TOL, Closest, closest_closed
from .closure import (
    CLOSURE_TOL,
    LOCK_ROWS,
    LOOP_ROWS,
    ROWS_BY_CODE,
    coupling_map,
    kernel_arrays,
    loop_kernel,
    loop_pga,
    motion_kernel,
    residual_rows,
)
from .newton import (
    ASSEMBLY_TOL,
    FLOOR_TOL,
    PATH_LIMIT,
    PATH_SLOW,
    PATH_STEP,
    SINGULAR_RCOND,
    newton_kernel,
    next_point,
    qr_solve,
    small_svd,
    so3_log,
)
from .parts import (
    RANK_GAP,
    RANK_MARGIN,
    SINGULAR_S,
    ClosureRank,
    Part,
    closure_rank,
    condition_number,
    independent_parts,
    pack_parts,
    project_kernel,
    rcond_estimate,
    record_kernel,
)
from .reference import (
    REFERENCE_STEP,
    REFERENCE_STEPS,
    branches,
    close_at_q0,
    leave_singular_reference,
    listing,
    reference_configuration,
    reference_ranks,
    regular_neighbour,
    settle_free_motions,
    singular_motion,
)
from .spins import SPIN_RTOL, FreeSpin, find_spins, free_directions, spin_vector
from .system import (
    Constraints,
    constraints,
    exact_spins,
    named_configuration,
    on_branch,
    refuse_exact_spins,
    spin_coordinates,
    with_spins,
)

__all__ = [
    "ASSEMBLY_TOL",
    "CLOSEST_TOL",
    "CLOSURE_TOL",
    "Closest",
    "closest_closed",
    "FLOOR_TOL",
    "LOCK_ROWS",
    "LOOP_ROWS",
    "RANK_GAP",
    "RANK_MARGIN",
    "SPIN_RTOL",
    "ClosureRank",
    "FreeSpin",
    "closure_rank",
    "find_spins",
    "free_directions",
    "reference_ranks",
    "settle_free_motions",
    "spin_vector",
    "PATH_LIMIT",
    "PATH_SLOW",
    "PATH_STEP",
    "REFERENCE_STEP",
    "REFERENCE_STEPS",
    "ROWS_BY_CODE",
    "SINGULAR_RCOND",
    "SINGULAR_S",
    "Constraints",
    "Part",
    "branches",
    "close_at_q0",
    "condition_number",
    "constraints",
    "coupling_map",
    "independent_parts",
    "kernel_arrays",
    "leave_singular_reference",
    "listing",
    "loop_kernel",
    "loop_pga",
    "motion_kernel",
    "newton_kernel",
    "next_point",
    "pack_parts",
    "project_kernel",
    "record_kernel",
    "small_svd",
    "named_configuration",
    "on_branch",
    "exact_spins",
    "refuse_exact_spins",
    "spin_coordinates",
    "with_spins",
    "qr_solve",
    "rcond_estimate",
    "reference_configuration",
    "regular_neighbour",
    "residual_rows",
    "singular_motion",
    "so3_log",
]
