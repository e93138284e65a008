"""Closed loops and couplings: constraints C(q) = 0, assembly, and the projection onto q_a.

A constrained robot is a spanning tree plus loop joints and couplings (DRNG paper section 5.1,
URDF+). Its configuration is fixed by the actuated coordinates q_a; the passive ones q_p
follow from the constraints (eq. 91)

    C(q) = 0,   J_a qd_a + J_p qd_p = 0 (eq. 92),   J qdd + Jd qd = 0.

Each loop joint between a parent body a and a child body b, with joint frames F_a and F_b
(origins p_a, p_b), states geometrically that the two bodies share points and lines:

* S: the centre is shared, p_b - p_a = 0;
* U: the centre is shared and the two axes meet there at a right angle: p_b - p_a = 0 and
  (R_a u1) . (R_b u2) = 0 (u1 fixed in a, u2 fixed in b);
* R: the centre and the axis are shared: p_b - p_a = 0, R_b u - R_a u = 0 (the directions,
  not only the lines: a cross product would also vanish for a body turned over);
* P: the orientation is shared and the offset lies along the axis: R_b e_k - R_a e_k = 0
  (k = 1, 2, 3) and (p_b - p_a) x (R_a u) = 0.

A coupling (URDF ``<mimic>``, URDF+ ``<coupling>``) is q_f - r q_l - c = 0.

Velocities of the points and directions come from the Jacobian lines of the tree (a point p
on a body moves with dp/dq_k = m_k + d_k x p for every line L_k = (d_k; m_k) on the body's
path, a direction u with d_k x u), so the constraint Jacobian is exact, and Newton's method
on q_p converges quadratically. The R and P residuals have 6 and 12 rows of rank 5, and planar
loops are over-constrained in space: least squares handles both.

The regressor with respect to q_a is the projection of the tree regressor: with
G = dq/dq_a = [I; -J_p^+ J_a] (rows in tree order), L_j^i = sum_k L_k dq_k/dq_j (eq. 52)
and Y_a = G^T Y_tree.
"""

from __future__ import annotations

import numpy as np

from .errors import PgaDynError
from .kinematics import so3_exp, state
from .model import Robot
from .pga import se3_log


def _cross(a, b):
    """Cross product over the last axis, with broadcasting (numpy's np.cross is slow on
    small arrays, and the Newton loop calls it thousands of times)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _rows(kind: str) -> int:
    return {"S": 3, "U": 4, "R": 6, "P": 12}[kind]


class Constraints:
    """The loop and coupling constraints of a robot, evaluated at tree states."""

    def __init__(self, robot: Robot):
        self.robot = robot
        n, nq = robot.n, robot.nq
        # on_path[b, k]: tree coordinate k moves body b
        self.on_path = np.zeros((n + 1, nq), dtype=bool)
        for b in range(1, n + 1):
            k = b
            while k > 0:
                self.on_path[b, robot.coordinates(k)] = True
                k = robot.parent[k]
        self.loops = robot.loop_joints
        self.couplings = robot.couplings
        self.m = sum(_rows(lp.type) for lp in self.loops) + len(self.couplings)
        self.act, self.pas = robot.actuated, robot.passive
        # passive spherical joints: (slice of q, slice of the passive coordinates)
        self.spherical = []
        position = {k: j for j, k in enumerate(self.pas)}
        for i in range(1, n + 1):
            sl = robot.coordinates(i)
            if sl.start in position and robot.joint_type[i] == "S":
                self.spherical.append((sl, slice(position[sl.start], position[sl.start] + 3)))
            if sl.start in position and robot.joint_type[i] == "F":
                raise PgaDynError(f"{robot.name}: the floating base '{robot.joint_names[i]}' cannot be passive")
        self._zero_gravity = np.zeros(3)

    # -- geometry of one state ----------------------------------------------------------------
    def _kinematics(self, q, qd=None):
        """The tree state at q, qd with qdd = 0 and no gravity (the constraints' bias terms)."""
        return state(self.robot, q, qd, gravity=self._zero_gravity)

    def _point(self, b, p, S):
        """d p / d q (nq x 3) for a point p on body b."""
        J = S[:, 3:] + _cross(S[:, :3], p)
        J[~self.on_path[b]] = 0.0
        return J

    def _direction(self, b, u, S):
        J = _cross(S[:, :3], u)
        J[~self.on_path[b]] = 0.0
        return J

    def evaluate(self, q, qd=None):
        """Residual r (m,), Jacobian J (m, nq) and, when qd is given, the bias Jd qd (m,)."""
        nq = self.robot.nq
        T, S, V, A = self._kinematics(q, qd)
        r = np.empty(self.m)
        J = np.empty((self.m, nq))
        bias = np.empty(self.m) if qd is not None else None
        row = 0
        for lp in self.loops:
            Fa, Fb = T[lp.parent] @ lp.parent_frame, T[lp.child] @ lp.child_frame
            pa, pb = Fa[:3, 3], Fb[:3, 3]
            motion = _Motion(V, A, lp.parent, lp.child) if qd is not None else None
            if lp.type in ("S", "U", "R"):
                r[row:row + 3] = pb - pa
                J[row:row + 3] = (self._point(lp.child, pb, S) - self._point(lp.parent, pa, S)).T
                if motion:
                    bias[row:row + 3] = motion.point_acc(1, pb) - motion.point_acc(0, pa)
                row += 3
            if lp.type == "U":
                ua, ub = Fa[:3, :3] @ lp.axes[0], Fb[:3, :3] @ lp.axes[1]
                r[row] = ua @ ub
                J[row] = self._direction(lp.parent, ua, S) @ ub + self._direction(lp.child, ub, S) @ ua
                if motion:
                    bias[row] = motion.dot_acc(ua, ub)
                row += 1
            elif lp.type == "R":  # the axis directions coincide (not only their lines)
                ua, ub = Fa[:3, :3] @ lp.axes[0], Fb[:3, :3] @ lp.axes[0]
                r[row:row + 3] = ub - ua
                J[row:row + 3] = (self._direction(lp.child, ub, S) - self._direction(lp.parent, ua, S)).T
                if motion:
                    bias[row:row + 3] = motion.dir_acc(1, ub) - motion.dir_acc(0, ua)
                row += 3
            elif lp.type == "P":  # the frames have the same orientation, offset along the axis
                for k in range(3):
                    ea, eb = Fa[:3, k], Fb[:3, k]
                    r[row:row + 3] = eb - ea
                    J[row:row + 3] = (self._direction(lp.child, eb, S) - self._direction(lp.parent, ea, S)).T
                    if motion:
                        bias[row:row + 3] = motion.dir_acc(1, eb) - motion.dir_acc(0, ea)
                    row += 3
                u = Fa[:3, :3] @ lp.axes[0]
                d = pb - pa
                r[row:row + 3] = _cross(d, u)
                J[row:row + 3] = (_cross(self._point(lp.child, pb, S) - self._point(lp.parent, pa, S), u)
                                  + _cross(d, self._direction(lp.parent, u, S))).T
                if motion:
                    dd = motion.point_vel(1, pb) - motion.point_vel(0, pa)
                    ddd = motion.point_acc(1, pb) - motion.point_acc(0, pa)
                    du, ddu = motion.dir_vel(0, u), motion.dir_acc(0, u)
                    bias[row:row + 3] = _cross(ddd, u) + 2 * _cross(dd, du) + _cross(d, ddu)
                row += 3
        for c in self.couplings:
            r[row] = q[c.follower] - c.ratio * q[c.leader] - c.offset
            J[row] = 0.0
            J[row, c.follower] = 1.0
            J[row, c.leader] -= c.ratio
            if bias is not None:
                bias[row] = 0.0
            row += 1
        return r, J, bias

    # -- assembly -----------------------------------------------------------------------------
    def _step(self, q, dx):
        """q with the passive coordinates moved by dx (velocity coordinates): added, except for
        a spherical joint, whose rotation is composed, exp(r'^) = exp(r^) exp(dw^) (dw is an
        angular velocity in the child frame)."""
        moved = q.copy()
        moved[self.pas] += dx
        for qs, ds in self.spherical:
            rotation = np.eye(4)
            rotation[:3, :3] = so3_exp(q[qs]) @ so3_exp(dx[ds])
            moved[qs] = se3_log(rotation)[:3]
        return moved

    def assemble(self, q_a, start=None, tol=1e-12, max_iter=50):
        """Solve C(q) = 0 for the passive coordinates by Newton's method (least squares on the
        exact constraint Jacobian), from ``start`` (default: the reference configuration q0).

        Returns (q, cond, J) with cond = cond(J_p), the distance to a singularity, and J the
        constraint Jacobian at q. Raises
        PgaDynError when q_a is outside the workspace (no convergence) or J_p is singular.
        """
        robot = self.robot
        q = robot.q0.copy() if start is None else np.array(start, dtype=float)
        q[self.act] = q_a
        for _ in range(max_iter):
            r, J, _ = self.evaluate(q)
            norm = np.linalg.norm(r)
            if norm < tol:
                break
            dx = np.linalg.lstsq(J[:, self.pas], -r, rcond=None)[0]
            big = np.abs(dx).max()
            if big > 0.5:  # damp long steps: keep Newton on the branch of the start
                dx *= 0.5 / big
            q = self._step(q, dx)
        else:
            raise PgaDynError(f"{robot.name}: the loops do not close at q_a = {np.round(q_a, 6).tolist()} "
                              f"(residual {norm:.2e} after {max_iter} Newton steps): outside the workspace")
        return q, self.condition(J), J

    def condition(self, J):
        s = np.linalg.svd(J[:, self.pas], compute_uv=False) if len(self.pas) else np.ones(1)
        return np.inf if s[-1] <= 1e-12 * max(s[0], 1.0) else s[0] / s[-1]

    def complete(self, q_a, qd_a, qdd_a, start=None):
        """Full tree state (q, qd, qdd), the projection G = dq/dq_a (nq x n_a) and cond(J_p)."""
        q, cond, J = self.assemble(q_a, start)
        if not np.isfinite(cond):
            raise PgaDynError(f"{self.robot.name}: J_p is singular at q_a = {np.round(q_a, 6).tolist()}")
        Jp_pinv = np.linalg.pinv(J[:, self.pas])
        G = np.zeros((self.robot.nq, len(self.act)))
        G[self.act] = np.eye(len(self.act))
        G[self.pas] = -Jp_pinv @ J[:, self.act]
        qd = G @ qd_a
        _, _, bias = self.evaluate(q, qd)
        qdd = G @ qdd_a
        qdd[self.pas] -= Jp_pinv @ bias
        return q, qd, qdd, G, cond


class _Motion:
    """Velocities and accelerations (with qdd = 0, no gravity) of points and directions of two
    bodies: the bias terms Jd qd of the constraints."""

    def __init__(self, V, A, a, b):
        self.V, self.A = (V[a], V[b]), (A[a], A[b])

    def point_vel(self, side, p):
        V = self.V[side]
        return V[3:] + _cross(V[:3], p)

    def point_acc(self, side, p):
        V, A = self.V[side], self.A[side]
        return A[3:] + _cross(A[:3], p) + _cross(V[:3], self.point_vel(side, p))

    def dir_vel(self, side, u):
        return _cross(self.V[side][:3], u)

    def dir_acc(self, side, u):
        V, A = self.V[side], self.A[side]
        return _cross(A[:3], u) + _cross(V[:3], _cross(V[:3], u))

    def dot_acc(self, ua, ub):
        return (self.dir_acc(0, ua) @ ub + 2 * self.dir_vel(0, ua) @ self.dir_vel(1, ub)
                + ua @ self.dir_acc(1, ub))


def constraints(robot: Robot) -> Constraints:
    """The (cached) constraints of a robot."""
    cache = getattr(robot, "_constraints", None)
    if cache is None:
        cache = robot._constraints = Constraints(robot)
    return cache
