"""The constraints of a robot (DRNG paper section 5.1, eqs. 91-92): :class:`Constraints`, built
once per robot by :func:`constraints` (``robot.derived``), ties the equations, the parts, the
assembly and the reference together, and projects tree states onto the actuated coordinates.

A constrained robot is a spanning tree plus loop joints and couplings. Its configuration is
fixed by the actuated coordinates q_a; the passive ones follow from the constraints:

    C(q) = 0 (eq. 91),   J_a qd_a + J_p qd_p = 0 (eq. 92),   J qdd + Jd qd = 0.

* the equations, r = C(q) (m,), J (m, nq), Jd qd (m,), and the couplings' affine map q = E z +
  e0 (E (nq, nz), z = (q_a, q_f)): :mod:`pga_dyn.loops.closure`;
* assembly of a state from q_a (:meth:`Constraints.assemble`, :meth:`Constraints.complete`):
  part by part (:mod:`pga_dyn.loops.parts`), each by :mod:`pga_dyn.loops.newton` along a path
  from the reference configuration (:mod:`pga_dyn.loops.reference`), the state then checked
  closed as a whole (:meth:`Constraints.open_loops`);
* the projection (:meth:`Constraints.project`): with G = dq/dq_a (nq, n_a) = E_a - sum over the
  parts of E_f J_f^+ J E_a, the regressor with respect to q_a is L_j^i = sum_k L_k dq_k/dq_j
  (eq. 52), Y_a = G^T Y_tree. A robot with couplings and no loops has q_f empty: q = E q_a + e0
  and G = E_a is constant, exact at any ratio and over any range.

Batches: :meth:`Constraints.complete_all` (samples, n_a) -> (samples, nq), G (samples, nq, n_a),
each from the reference; compiled: :meth:`Constraints.record` (a record, each sample from the
previous one: :func:`pga_dyn.loops.parts.record_kernel`) and :meth:`Constraints.project_all`
(:func:`pga_dyn.loops.parts.project_kernel`), whose readable twins are :meth:`Constraints.complete`
and :meth:`Constraints.project` applied sample by sample.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ..errors import PgaDynError
from ..interpreted import SMALL_BODIES, first_calls
from ..model import Robot
from .closure import CLOSURE_TOL, LOCK_ROWS, LOOP_ROWS, coupling_map, kernel_arrays, motion_kernel
from .newton import ASSEMBLY_TOL, PATH_LIMIT
from .parts import condition_number, independent_parts, pack_parts, project_kernel, record_kernel
from .reference import close_at_q0, listing, reference_configuration, reference_ranks
from .spins import SPIN_RTOL, free_directions


def _motion(args, q, qd) -> tuple:
    """:func:`pga_dyn.loops.closure.motion_kernel` at (q, qd) for the calls from Python: on a
    process's first calls on a small robot its source run by Python when the compiled kernel is
    neither loaded nor in numba's cache (:func:`pga_dyn.interpreted.first_calls`: the same
    results; a first call from an empty cache compiles nothing, docs/performance.md)."""
    return first_calls(motion_kernel, args[0].shape[0] <= SMALL_BODIES + 1)(*args, q, qd)


class Constraints:
    """The loop and coupling constraints of a robot: assembly and projection onto q_a."""

    def __init__(self, robot: Robot):
        self.robot = robot
        where = robot.source or robot.name
        self.E, self.e0, self.z_index = coupling_map(robot)
        self.na = len(robot.actuated)
        self.nf = self.E.shape[1] - self.na
        spherical = []
        column = {k: j for j, k in enumerate(self.z_index)}
        for i in range(1, robot.n + 1):
            first = robot.coordinates(i).start
            if first in column and column[first] >= self.na and robot.joint_type[i] in ("S", "F"):
                if robot.joint_type[i] == "F":
                    raise PgaDynError(f"{where}: the floating base '{robot.joint_names[i]}' cannot be passive")
                spherical.append(column[first])
        self.spherical = np.array(spherical, dtype=np.int64)
        for array in (self.E, self.e0, self.z_index, self.spherical):
            array.flags.writeable = False  # read-only from the start: one compiled signature per kernel
        #: The free spins locked at the reference (:mod:`pga_dyn.loops.spins`; set by :meth:`close_reference`).
        self.spins = ()
        #: The rank decision of each part's J_f at the reference (:func:`pga_dyn.loops.parts.closure_rank`).
        self.ranks = ()
        #: The reference given (tree configuration (nq,); None: q0), set by :meth:`close_reference`.
        self.start = None
        #: How far the reference moved from q0 to close (:class:`pga_dyn.loops.closest.Closest`), or None.
        self.closest = None
        self._constrain(())

    def _constrain(self, locks) -> None:
        """The kernel arrays of the loop joints and of the spin ``locks`` ((body, u, R_ref) each:
        :func:`pga_dyn.loops.closure.kernel_arrays`), the residual rows and the independent parts."""
        robot = self.robot
        #: The arguments of the kernels before the state (:func:`pga_dyn.loops.closure.kernel_arrays`).
        self.args = kernel_arrays(robot, locks)
        rows = [LOOP_ROWS[lp.type] for lp in robot.loop_joints] + [LOCK_ROWS] * len(locks)
        #: Rows of the loops' residual (the loop joints', then one per spin lock).
        self.m = sum(rows)
        #: First residual row of each loop joint and spin lock, and the number of rows (loops + locks + 1,).
        self.loop_rows = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        #: The names of the loop joints and of the spin locks ("spin of '<body>'"), in row order.
        self.names = tuple(lp.name for lp in robot.loop_joints) + tuple(
            f"spin of '{robot.body_names[lock[0] - 1]}'" for lock in locks
        )
        #: The independent parts of the loops (:class:`pga_dyn.loops.parts.Part`).
        self.parts = independent_parts(self.args, self.E, self.na, self.spherical, self.loop_rows) if self.nf else ()
        #: The parts' arrays concatenated for the compiled batches (:func:`pga_dyn.loops.parts.pack_parts`).
        self.packed = pack_parts(self.parts) if self.parts else ()

    def lock(self, spins) -> None:
        """Lock the free spins ``spins`` (:class:`pga_dyn.loops.spins.FreeSpin`): one spin-rate
        row each, appended to the loops' rows (the parts are formed again)."""
        self.spins = tuple(spins)
        self._constrain([(spin.body, spin.axis, spin.rotation) for spin in self.spins])

    def report(self) -> list:
        """Lines for ``pga-dyn info``: the rank decision of each part at the reference (the
        redundant equations it drops, the passive motions it leaves free), the locked spins and the
        number of assembly branches at a singular reference, after the reference given (``start``)
        and how far the reference moved when its loops do not close there (``closest``)."""
        lines = []
        if self.start is not None:
            named = [
                f"{self.robot.coordinate_names[k]}={value:g}" for k, value in enumerate(self.start) if value != 0.0
            ]
            lines.append(f"closed from the reference given: {', '.join(named) or 'all coordinates zero'}")
        lines += self.closest.describe() if self.closest is not None else []
        for part, rank in zip(self.parts, self.ranks):
            loops = listing([self.names[l] for l in part.loops])
            lines.append(
                f"loops {loops}: J_f has rank {rank.rank} ({rank.rows} equations, {rank.columns} "
                f"passive coordinates; {rank.redundant} redundant equation"
                f"{'s' if rank.redundant != 1 else ''} dropped; gap {rank.gap:.2g}, "
                f"{'clean' if rank.clean else 'not clean'})"
            )
        lines += [f"free spin: {spin.describe()}" for spin in self.spins]
        if self.branches > 1:
            where = self.robot.source or self.robot.name
            lines.append(
                f"the reference is singular: {self.branches} assembly branches meet there, branch {self.branch} "
                f"followed (from the regular configuration cond(J_p) = {self.cond_ref:.3g} beside it); "
                f"pga-dyn analyze {where} --branch K answers for branch K (docs/drng.md, assembly modes)"
            )
        return lines

    # -- geometry of one state ----------------------------------------------------------------
    def evaluate(self, q, qd=None):
        """Loop residual r (m,), Jacobian J (m, nq) and the bias Jd qd (m,) (None without qd),
        followed by one row per coupling, q_f - r q_l - c (bias 0)."""
        robot = self.robot
        q = np.array(q, dtype=float)  # writable and C-contiguous: the kernels' one signature
        r, J, bias = _motion(self.args, q, np.zeros(robot.nq) if qd is None else np.array(qd, dtype=float))
        rows_r, rows_J = [r], [J]
        for c in robot.couplings:
            row = np.zeros(robot.nq)
            row[c.follower] += 1.0
            for leader, weight in ((c.leader, c.ratio), *c.others):
                row[leader] -= weight
            rows_r.append([row @ q - c.offset])
            rows_J.append(row[None])
        r, J = np.concatenate(rows_r), np.vstack(rows_J)
        return r, J, (np.concatenate([bias, np.zeros(len(robot.couplings))]) if qd is not None else None)

    def loop_jacobian(self, q):
        """Residual r (m,) and Jacobian J (m, nq) of the loops (no coupling rows) at tree
        configuration q (nq,): :func:`pga_dyn.loops.closure.motion_kernel` at rest."""
        r, J, _ = _motion(self.args, np.array(q, dtype=float), np.zeros(self.robot.nq))
        return r, J

    def residuals(self, q, r=None) -> list:
        """(loop name, residual norm) of each loop joint at tree configuration q (or of the loop
        residual r (m,) at q, when given)."""
        r = self.loop_jacobian(q)[0] if r is None else r
        if not len(r):
            return []
        norms = np.sqrt(np.add.reduceat(r * r, self.loop_rows[:-1]))
        return [(lp.name, float(norm)) for lp, norm in zip(self.robot.loop_joints, norms)]

    def close_reference(self, branch=0, start=None) -> None:
        """Assemble the reference configuration (:mod:`pga_dyn.loops.reference`): q0 with its
        passive coordinates solved by Newton (q0 itself when its loops close, as DRNG's Table 2
        assumes); every assembly path starts there. When they cannot be closed at the actuated
        position of q0, the reference is the closed configuration nearest to q0 found with all
        coordinates free (``closest``, a :class:`pga_dyn.loops.closest.Closest` saying how far each
        coordinate moved; None when q0 closed), and a ModelError names the loops and the smallest
        residual reached when none is found. ``z_ref`` (nz,) holds its free
        coordinates, ``cond_ref`` cond(J_p) there (the largest over the parts); a singular q0 is
        left for a regular neighbour (``moved``), with a warning
        (:func:`pga_dyn.loops.reference.leave_singular_reference`); free spins are locked there
        (``spins``, :mod:`pga_dyn.loops.spins`), and ``ranks`` holds the rank decision of each
        part's J_f (:func:`pga_dyn.loops.parts.closure_rank`). ``rcond_ref`` (parts,) holds
        the reciprocal condition estimate of each part's J_f there, which its assembly paths
        watch. ``branch`` and ``start`` (q (nq,), its passive coordinates closed from there: another
        reference configuration) as in :func:`on_branch`; ``branches`` holds the number of
        assembly branches that meet at the reference (1 at a regular one), ``branch`` the one followed,
        ``start`` the reference given (None: q0)."""
        self.branch, self.start = branch, start
        self.z_ref, self.cond_ref, self.moved, self.rcond_ref, self.branches, self.closest = reference_configuration(
            self, branch, start
        )
        self.ranks = reference_ranks(self)

    def conditions(self, J, parts=None) -> np.ndarray:
        """cond(J_f) of each part (:class:`pga_dyn.loops.parts.Part`; or of the parts numbered ``parts``) for the
        constraint Jacobian J (rows of the loops, then of the couplings) in the tree coordinates;
        inf where J_f has fewer independent rows than columns. Shape (parts,)."""
        chosen = self.parts if parts is None else [self.parts[k] for k in parts]
        return np.array([condition_number(part.free_jacobian(J)) for part in chosen])

    def condition(self, J) -> float:
        """cond(J_p): the largest cond(J_f) of the parts (1 without passive coordinates), the
        figure sampling holds below its limit part by part."""
        return float(self.conditions(J).max()) if self.parts else 1.0

    # -- assembly -----------------------------------------------------------------------------
    def free(self, q) -> np.ndarray:
        """The free coordinates z of a tree configuration that satisfies the couplings."""
        return np.asarray(q, dtype=float)[self.z_index].copy()

    def assemble_parts(self, q_a, z, parts, regular=False, tol=ASSEMBLY_TOL, max_iter=30, start=None) -> list:
        """Assemble the parts numbered ``parts`` (indices of :attr:`parts`) at actuated position
        q_a, each along a path from ``start`` (free coordinates (nz,); default the reference
        configuration's), the other parts held as they are in z (nz,), which is updated in place
        (its actuated coordinates become q_a). ``regular`` as in :meth:`assemble`. Returns
        [(part number, status, residual)] of the parts that did not assemble (status 1: the path
        leaves the workspace, 2: it meets a singularity). The loops that no part solves are not
        checked here (:meth:`open_loops`)."""
        begin = self.z_ref if start is None else start
        failed = []
        for k in parts:
            part, rcond = self.parts[k], self.rcond_ref[k]
            z[part.columns] = begin[part.columns]
            status, norm = part.assemble(
                self.E,
                self.e0,
                z,
                q_a[part.actuated],
                tol,
                max_iter,
                max(rcond, 1e-300),
                PATH_LIMIT * rcond if regular else 0.0,
            )
            if status:
                failed.append((k, status, norm))
        z[: self.na] = q_a
        return failed

    def assemble(self, q_a, start=None, tol=ASSEMBLY_TOL, max_iter=30, regular=False):
        """Solve the constraints for the passive coordinates at actuated position q_a, following
        a path from ``start`` (an assembled tree configuration; default: the reference
        configuration, q0 closed; see :meth:`close_reference`), part by part (:class:`pga_dyn.loops.parts.Part`).
        ``regular``: the path must stay away from singular configurations (reciprocal condition
        estimate of each part's J_f above PATH_LIMIT times the reference's), so that the state is
        on the reference's assembly branch.

        Returns (q, z): the tree configuration and its free coordinates. Raises PgaDynError when
        a path leaves the workspace or meets a singularity, or when a loop is left open."""
        q, z, _ = self._assemble(q_a, start, tol, max_iter, regular)
        return q, z

    def _assemble(self, q_a, start, tol, max_iter, regular):
        """:meth:`assemble`, and the loops' Jacobian at q (m, nq) that its closure check computed."""
        q_a = np.ascontiguousarray(q_a, dtype=float)
        z = self.z_ref.copy() if start is None else self.free(start)
        failed = self.assemble_parts(q_a, z, range(len(self.parts)), regular, tol, max_iter, start=z.copy())
        if failed:
            k, status, norm = failed[0]
            raise self.refusal(q_a, status, k, norm)
        q = self.E @ z + self.e0
        r, J = self.loop_jacobian(q)
        self._check_closed(q, q_a, r)
        return q, z, J

    def _check_closed(self, q, q_a, r=None) -> None:
        """PgaDynError naming the first loop joint open at q (:meth:`open_loops`; r as there)."""
        open_ = self.open_loops(q, r)
        if open_:
            names = [lp.name for lp in self.robot.loop_joints]
            raise self.refusal(q_a, 3, names.index(open_[0][0]), open_[0][1])

    def refusal(self, q_a, status: int, which: int, value: float) -> PgaDynError:
        """The error of a state at actuated position q_a (n_a,) that does not assemble: ``status`` 1
        (the path leaves the workspace of part ``which``, residual ``value``), 2 (it meets a singular
        configuration of part ``which``), 3 (loop joint number ``which`` open, residual norm ``value``)
        or 4 (J_p singular); the codes of :func:`pga_dyn.loops.parts.record_kernel`."""
        where, at = self.robot.source or self.robot.name, np.round(q_a, 6).tolist()
        if status in (1, 2):
            loops = listing([self.names[l] for l in self.parts[which].loops])
            if status == 2:
                return PgaDynError(
                    f"{where}: the assembly path from the start to q_a = {at} meets a singular configuration of the "
                    f"loops {loops}"
                )
            return PgaDynError(
                f"{where}: the loops do not close at q_a = {at}: the assembly path from the start leaves the "
                f"workspace of the loops {loops} (residual {value:.2e})"
            )
        if status == 3:
            return PgaDynError(
                f"{where}: the loop joint '{self.robot.loop_joints[which].name}' does not close at q_a = {at} "
                f"(residual {value:.2e})"
            )
        return PgaDynError(f"{where}: J_p is singular at q_a = {at}")

    def open_loops(self, q, r=None) -> list:
        """(loop name, residual norm) of the loop joints open at tree configuration q (residual
        above CLOSURE_TOL; r as in :meth:`residuals`): the check of every assembled state, also
        of the loops no part solves."""
        if not self.robot.loop_joints:
            return []
        r = self.loop_jacobian(q)[0] if r is None else r
        if np.abs(r).max() * np.sqrt(max(LOOP_ROWS.values())) <= CLOSURE_TOL:
            return []  # no loop's norm can exceed the tolerance (the common case, one reduction)
        return [(name, res) for name, res in self.residuals(q, r) if res > CLOSURE_TOL]

    def project(self, q, qd_a, qdd_a, J=None):
        """At an assembled configuration q (nq,): the velocity and acceleration of the tree (nq,),
        the projection G = dq/dq_a (nq, n_a), G = E_a - sum over the parts of E_f J_f^+ J_a
        (eq. 92, part by part), and cond(J_f) of each part (parts,); inf where a part is singular
        (its G columns are then not valid). J: the loops' Jacobian at q (:meth:`loop_jacobian`),
        when it is at hand."""
        Ea = self.E[:, : self.na]
        if not self.nf:
            return Ea @ qd_a, Ea @ qdd_a, Ea.copy(), np.ones(0)
        J = self.loop_jacobian(q)[1] if J is None else J
        G, pinvs, conds = Ea.copy(), [], np.empty(len(self.parts))
        whole = len(self.parts) == 1 and self.parts[0].rows.size == J.shape[0]  # one part: no row copies
        for k, part in enumerate(self.parts):
            Jp = J if whole else J[part.rows]
            pinv, conds[k] = part.inverse(Jp)
            G -= part.Ef @ (pinv @ (Jp @ Ea))
            pinvs.append(pinv)
        qd = G @ qd_a
        _, _, bias = _motion(self.args, np.array(q, dtype=float), qd)
        qdd = G @ qdd_a
        for part, pinv in zip(self.parts, pinvs):
            qdd -= part.Ef @ (pinv @ (bias if whole else bias[part.rows]))
        return qd, qdd, G, conds

    def complete(self, q_a, qd_a, qdd_a, start=None, regular=False):
        """Full tree state (q, qd, qdd), the projection G = dq/dq_a (nq x n_a) and cond(J_p) (the
        largest of the parts'); ``regular`` as in :meth:`assemble`."""
        q, _, J = self._assemble(q_a, start, ASSEMBLY_TOL, 30, regular)
        qd, qdd, G, conds = self.project(q, qd_a, qdd_a, J)
        cond = float(conds.max()) if len(conds) else 1.0
        if cond == np.inf:
            raise self.refusal(q_a, 4, -1, cond)
        return q, qd, qdd, G, cond

    def record(self, q_a, qd_a, qdd_a, first, limit: float):
        """:meth:`complete` with ``regular=True`` for each actuated state of a record (q_a, qd_a, qdd_a
        (ns, n_a)), each from the previous sample's configuration or, where ``first`` (ns,) is set,
        from the reference, compiled (:func:`pga_dyn.loops.parts.record_kernel`; the robot has
        passive coordinates). Returns (Q, QD, QDD (ns, nq), G (ns, nq, n_a), cond (ns,), refused):
        refused is None when every sample assembles with cond(J_p) below ``limit``, else (sample,
        error): the first sample refused and the :meth:`refusal` of its assembly, or None as the error
        when its cond(J_p) (cond[sample]) reaches ``limit``; the arrays hold the samples before it."""
        ns, nq, na = q_a.shape[0], self.robot.nq, self.na
        Q, QD, QDD = np.empty((ns, nq)), np.empty((ns, nq)), np.empty((ns, nq))
        G, cond = np.empty((ns, nq, na)), np.empty(ns)
        s, status, which, value = record_kernel(
            self.args,
            self.E,
            self.e0,
            self.z_index,
            self.na,
            self.loop_rows,
            len(self.robot.loop_joints),
            self.packed,
            np.array(self.rcond_ref, dtype=float),
            np.array(self.z_ref, dtype=float),
            np.array(first, dtype=bool),
            *(np.array(x, dtype=float, order="C") for x in (q_a, qd_a, qdd_a)),
            ASSEMBLY_TOL,
            30,
            PATH_LIMIT,
            float(limit),
            Q,
            QD,
            QDD,
            G,
            cond,
        )
        if not status:
            return Q, QD, QDD, G, cond, None
        return Q, QD, QDD, G, cond, (int(s), None if status == 5 else self.refusal(q_a[s], status, which, value))

    def project_all(self, q, qd_a, qdd_a):
        """:meth:`project` at each tree configuration q (ns, nq) with the actuated velocities and
        accelerations qd_a, qdd_a (ns, n_a), or k sets of them (k, ns, n_a) that share each
        configuration's projection, compiled (:func:`pga_dyn.loops.parts.project_kernel`; the robot
        has passive coordinates): QD, QDD (ns, nq), or (k, ns, nq) for k sets, G (ns, nq, n_a),
        cond(J_p) (ns,), inf where a part is singular."""
        sets = np.ndim(qd_a) == 3
        qd3, qdd3 = (np.array(x, dtype=float, order="C", ndmin=3) for x in (qd_a, qdd_a))
        k, ns, na = qd3.shape
        nq = self.robot.nq
        QD, QDD, G, cond = np.empty((k, ns, nq)), np.empty((k, ns, nq)), np.empty((ns, nq, na)), np.empty(ns)
        project_kernel(
            self.args, self.E, self.na, self.packed, np.array(q, dtype=float, order="C"), qd3, qdd3, QD, QDD, G, cond
        )
        return (QD, QDD, G, cond) if sets else (QD[0], QDD[0], G, cond)

    def complete_all(self, q_a, qd_a, qdd_a, start=None):
        """:meth:`complete` for a batch: actuated states (samples, n_a) in, the tree states Q, QD,
        QDD (samples, nq), the projections G (samples, nq, n_a) and cond(J_f) (samples,) out.
        Couplings alone are solved in closed form, q = E q_a + e0."""
        ns, nq, na = q_a.shape[0], self.robot.nq, self.na
        if not self.nf:
            Ea = self.E[:, :na]
            Q = q_a @ Ea.T + self.e0
            for s in range(ns if self.robot.loop_joints else 0):  # loops that the actuated joints alone move
                self._check_closed(Q[s], q_a[s])
            return Q, qd_a @ Ea.T, qdd_a @ Ea.T, np.repeat(Ea[None], ns, axis=0), np.ones(ns)
        Q, QD, QDD = np.empty((ns, nq)), np.empty((ns, nq)), np.empty((ns, nq))
        G, cond = np.empty((ns, nq, na)), np.empty(ns)
        for s in range(ns):
            Q[s], QD[s], QDD[s], G[s], cond[s] = self.complete(q_a[s], qd_a[s], qdd_a[s], start)
        return Q, QD, QDD, G, cond


def _closed_constraints(robot: Robot) -> Constraints:
    """The :class:`Constraints` of ``robot`` with their reference configuration closed."""
    con = Constraints(robot)
    con.close_reference()
    return con


def named_configuration(robot: Robot, values: Mapping) -> np.ndarray:
    """The tree configuration (nq,) with the coordinates named in ``values`` ({coordinate name:
    value}, rad or m; ``robot.coordinate_names``) set and the others zero (as in q0). A
    PgaDynError names an unknown coordinate or a value that is not a finite number."""
    q = np.zeros(robot.nq)
    index = {name: k for k, name in enumerate(robot.coordinate_names)}
    for name, value in values.items():
        if name not in index:
            raise PgaDynError(
                f"{robot.source or robot.name}: reference: no coordinate named '{name}' "
                f"(coordinates: {', '.join(robot.coordinate_names)})"
            )
        try:
            q[index[name]] = float(value)
        except (TypeError, ValueError):
            raise PgaDynError(
                f"{robot.source or robot.name}: reference: '{name}' = {value!r} is not a number"
            ) from None
        if not np.isfinite(q[index[name]]):
            raise PgaDynError(f"{robot.source or robot.name}: reference: '{name}' = {value!r} is not finite")
    return q


def on_branch(robot: Robot, branch: int = 0, reference=None) -> Robot:
    """A copy of ``robot`` whose constraints (:func:`constraints`) start at ``reference`` (a tree
    configuration (nq,), or {coordinate name: value} with the others zero: :func:`named_configuration`;
    its passive coordinates closed by Newton from there, or the closed configuration nearest to it
    when they cannot be: :mod:`pga_dyn.loops.closest`; default q0) and,
    when that reference is singular, follow its assembly branch number ``branch`` (0: the one
    taken by default; :func:`pga_dyn.loops.reference.branches`): the answer, the certificate and
    the sampling of the copy follow that branch (docs/drng.md, assembly modes)."""
    variant = robot.description.build()
    if isinstance(reference, Mapping):
        reference = named_configuration(robot, reference)
    if reference is not None:
        reference = np.asarray(reference, dtype=float)
        if reference.shape != (robot.nq,) or not np.all(np.isfinite(reference)):
            raise PgaDynError(
                f"{robot.source or robot.name}: reference must be {robot.nq} finite tree coordinates, "
                f"got shape {reference.shape}"
            )
    con = Constraints(variant)
    con.close_reference(int(branch), reference)
    variant.derived(_closed_constraints, con)
    if spin_coordinates(robot):  # the exact treatment of free spins carries over
        variant.derived(_spin_coordinates, spin_coordinates(robot))
    return variant


def _spin_coordinates(robot: Robot) -> tuple:
    """() (a robot that :func:`exact_spins` did not make; it keeps its own names instead)."""
    return ()


def spin_coordinates(robot: Robot) -> tuple:
    """The names of the coordinates that :func:`exact_spins` made independent to treat free spins
    exactly (``robot.derived``; () for every robot it did not make)."""
    return robot.derived(_spin_coordinates)


def exact_spins(robot: Robot) -> Robot:
    """A copy of ``robot`` whose free spins (:attr:`Constraints.spins`, locked by default) are
    coordinates of their own: for each spin a passive revolute coordinate that it turns is made
    independent (an unactuated independent coordinate, as a floating base's), and no lock is
    added. The copy's regressor has a row for each of them (``robot.actuated`` holds them: the
    rows of generalized forces that are zero on the real machine, which join the others as the
    floating base's unactuated rows do), so its nullspace is that of the machine's full dynamics,
    certified like any other answer (docs/drng.md, "Free spins and redundant closures").

    The coordinates are picked greedily at the reference configuration of ``robot`` (its loops
    closed, spins locked: where the copy's reference starts, so the two answer at the same
    reference): among the passive revolute coordinates that no coupling determines, the one that
    the free motions move most, then the one that moves most of what the chosen ones leave, until
    they fix every free direction (D (nz, d) of :func:`pga_dyn.loops.spins.free_directions`).
    ``spin_coordinates`` of the copy names them. ``robot`` itself when it has no free spin; a
    PgaDynError when the spins turn no such coordinate (a ball joint written as one spherical
    joint: its three coordinates are one joint, which cannot be half independent; write it as
    three revolute joints). Records (identification) cannot use the copy: a log does not measure
    the spin angle (:func:`refuse_exact_spins`)."""
    where = robot.source or robot.name
    unlocked = Constraints(robot)
    try:
        con = constraints(robot)
    except PgaDynError:  # a spin whose lock cannot be followed (reference.settle_free_motions): the closure at q0
        con, z = None, unlocked.free(robot.q0)
        close_at_q0(unlocked, z)
        q_ref = unlocked.E @ z + unlocked.e0
    else:
        if not con.spins:
            return robot
        q_ref = con.E @ con.z_ref + con.e0
    D = free_directions(unlocked, unlocked.evaluate(q_ref)[1])[0]
    dq = unlocked.E @ D  # (nq, d): the free motions in the tree coordinates
    followers = {c.follower for c in robot.couplings}
    candidates = [
        robot.coordinates(i).start
        for i in range(1, robot.n + 1)
        if robot.joint_type[i] == "R"
        and robot.coordinates(i).start in set(robot.passive)
        and robot.coordinates(i).start not in followers
    ]
    scale, chosen, basis = np.abs(dq).max(), [], np.zeros((0, dq.shape[1]))
    for _ in range(dq.shape[1]):
        left = {k: dq[k] - basis.T @ (basis @ dq[k]) for k in candidates if k not in chosen}
        best = max(left, key=lambda k: np.linalg.norm(left[k]), default=None)
        if best is None or np.linalg.norm(left[best]) <= 1e3 * SPIN_RTOL * scale:
            turned = sorted(
                {robot.coordinate_names[k] for k in np.flatnonzero(np.abs(dq).max(axis=1) > SPIN_RTOL * scale)}
            )
            raise PgaDynError(
                f"{where}: exact_spins (--spins exact): the free spins "
                f"{listing([spin.name for spin in con.spins]) if con else ''} turn no passive revolute coordinate that could be "
                f"made independent (they move {listing(turned)}): a spherical joint's three coordinates are one "
                "joint; write the ball joint as three revolute joints, or keep the default (the spins locked)"
            )
        chosen.append(best)
        basis = np.vstack([basis, left[best] / np.linalg.norm(left[best])])
    names = tuple(robot.coordinate_names[k] for k in sorted(chosen))
    spec = robot.description
    variant = dataclasses.replace(
        spec,
        name=f"{robot.name} (spins exact)",
        joints=tuple(dataclasses.replace(j, independent=True) if j.name in names else j for j in spec.joints),
    ).build()
    exact = Constraints(variant)
    at_q0 = con is None or con.start is None and con.closest is None and np.abs(q_ref - robot.q0).max() <= CLOSURE_TOL
    exact.close_reference(0, None if at_q0 else q_ref)
    if exact.spins:
        raise PgaDynError(
            f"{where}: exact_spins: with {listing(names)} independent the loops still leave spins free "
            f"({listing([spin.name for spin in exact.spins])})"
        )
    variant.derived(_closed_constraints, exact)
    variant.derived(_spin_coordinates, names)
    return variant


def with_spins(robot: Robot, spins: str = "lock") -> Robot:
    """``robot`` with its free spins treated as ``spins`` says: "lock" (the robot itself: locked
    at zero spin rate, :mod:`pga_dyn.loops.spins`) or "exact" (:func:`exact_spins`; a robot
    without loops is itself); PgaDynError naming the argument for another value."""
    if spins not in ("lock", "exact"):
        raise PgaDynError(f"{robot.source or robot.name}: spins must be 'lock' or 'exact', got {spins!r}")
    return exact_spins(robot) if spins == "exact" and robot.loop_joints else robot


def refuse_exact_spins(robot: Robot, what: str) -> None:
    """A PgaDynError when ``robot`` treats free spins exactly (:func:`exact_spins`): ``what`` (a
    command or function working on records: excite, simulate, identify) needs the spin angles,
    which a log does not measure."""
    names = spin_coordinates(robot)
    if names:
        raise PgaDynError(
            f"{robot.source or robot.name}: {what} cannot use the exact treatment of free spins (--spins exact, "
            f"pga_dyn.loops.exact_spins: coordinates {listing(names)} made independent): a record does not "
            "measure the spin angles; use the default (--spins lock: the spins locked, with the bound of what "
            "the lock neglects, pga_dyn.sampling.spin_lock_bounds)"
        )


def constraints(robot: Robot) -> Constraints:
    """The constraints of a robot, computed once (``robot.derived``); its loops must close at the
    actuated position of q0."""
    return robot.derived(_closed_constraints)
