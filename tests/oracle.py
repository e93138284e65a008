"""Pinocchio as an independent oracle: build its model of a robot file, map states and
generalized forces between Pinocchio's conventions and pga-dyn's.

pga-dyn's floating base (paper eqs. 102-104): q = exponential coordinates xi = (omega, v) of
the base pose, T = exp(xi^); qd, qdd = spatial twist (omega_s; v_s) and its derivative.
Pinocchio's free flyer: q = (position, quaternion); v, a = body-frame twist (v_b, omega_b)
and its derivative. The maps: T = pin.exp6(xi); V_b = Ad(T)^-1 V_s (and the same for the
accelerations, since d/dt Ad(T) V_b = ad(V_s) V_s = 0); generalized forces by power
invariance, tau_pga = B^T tau_pin where v_pin = B qd_pga.
"""

from __future__ import annotations

import importlib.metadata
import os

import numpy as np
import pinocchio as pin  # noqa: E402  (the test extra installs it: a missing oracle is a failure)
import pytest


def erd_path(relative: str) -> str:
    """Path of a file of the example-robot-data package (installed by the test extra)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("example-robot-data is not installed (the test extra installs it)")
    path = str(dist.locate_file(os.path.join("cmeel.prefix", "share", "example-robot-data", "robots", relative)))
    if not os.path.exists(path):  # a missing file fails: the test extra pins a version that has it
        pytest.fail(f"{relative} is not in this example-robot-data")
    return path


class Oracle:
    """Pinocchio's model of the same file as ``robot`` (a pga-dyn Robot), or the Pinocchio
    ``model`` given, whose joints carry the names of the robot's tree joints (the floating base
    excepted: joint 1)."""

    def __init__(self, robot, path: str | None = None, model=None):
        self.robot = robot
        if model is not None:
            self.model = model
        elif robot.floating_base:
            self.model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromUrdf(path)
        self.model.gravity.linear = robot.gravity
        self.data = self.model.createData()
        self.floating = robot.floating_base
        self.offset = 6 if self.floating else 0
        # 1-DoF joints: coordinate k of q[offset:] at qi[k] (continuous joints are unbounded revolute
        # joints in Pinocchio: q = (cos, sin)); spherical joints: q a quaternion. v index vi[k].
        self.qi, self.unbounded, self.vi, self.spherical = [], [], [], []
        for i in range(1 + self.floating, robot.n + 1):
            jid = self.model.getJointId(robot.joint_names[i])
            assert jid < self.model.njoints, "joint names differ"
            joint, sl = self.model.joints[jid], robot.coordinates(i)
            self.vi += range(joint.idx_v, joint.idx_v + joint.nv)
            if robot.joint_type[i] == "S":
                self.spherical.append((slice(sl.start - self.offset, sl.stop - self.offset), joint.idx_q))
            else:
                self.qi.append(joint.idx_q)
                self.unbounded.append(joint.nq == 2)
        self.qi, self.vi = np.array(self.qi, dtype=int), np.array(self.vi, dtype=int)
        self.unbounded = np.array(self.unbounded, dtype=bool)
        spherical = np.zeros(robot.nq - self.offset, dtype=bool)
        for sl, _ in self.spherical:
            spherical[sl] = True
        self.one_dof = np.flatnonzero(~spherical)

    def to_pinocchio(self, q, qd, qdd):
        """Pinocchio's (q, v, a) and the matrix B with v_pin = B qd."""
        m, o = self.model, self.offset
        qp, vp, ap = np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)
        B = np.zeros((m.nv, self.robot.nq))
        qp[self.qi], vp[self.vi], ap[self.vi] = q[o:][self.one_dof], qd[o:], qdd[o:]
        angles = q[o:][self.one_dof][self.unbounded]
        qp[self.qi[self.unbounded]], qp[self.qi[self.unbounded] + 1] = np.cos(angles), np.sin(angles)
        for sl, k in self.spherical:  # v: the child's angular velocity in the child frame, as pga-dyn's
            qp[k : k + 4] = pin.Quaternion(pin.exp3(np.asarray(q[o:][sl], dtype=float))).coeffs()
        B[self.vi, np.arange(o, self.robot.nq)] = 1.0
        if self.floating:
            T = pin.exp6(pin.Motion(q[3:6], q[0:3]))
            qp[:7] = pin.SE3ToXYZQUAT(T)
            ad_inv = T.inverse().action  # spatial (lin, ang) -> body (lin, ang)
            swap = np.zeros((6, 6))  # pga (omega, v) -> pinocchio (v, omega)
            swap[0:3, 3:6] = swap[3:6, 0:3] = np.eye(3)
            B[:6, :6] = ad_inv @ swap
            vp[:6] = B[:6, :6] @ qd[:6]
            ap[:6] = B[:6, :6] @ qdd[:6]
        return qp, vp, ap, B

    def rnea(self, q, qd, qdd):
        """Generalized forces in pga-dyn's coordinates."""
        qp, vp, ap, B = self.to_pinocchio(q, qd, qdd)
        return B.T @ pin.rnea(self.model, self.data, qp, vp, ap)

    def regressor(self, q, qd, qdd):
        """Pinocchio's joint-torque regressor in pga-dyn's coordinates, columns in the order of
        ``robot.body_names`` with Pinocchio's per-body parameters [m, mc, I (origin)]."""
        qp, vp, ap, B = self.to_pinocchio(q, qd, qdd)
        Y = np.reshape(pin.computeJointTorqueRegressor(self.model, self.data, qp, vp, ap), (self.model.nv, -1))
        cols = []
        for name in self.robot.body_names:
            jid = self.body_joint(name)
            cols.extend(range(10 * (jid - 1), 10 * jid))
        return B.T @ Y[:, cols]

    def body_joint(self, body_name: str) -> int:
        robot = self.robot
        i = robot.body_names.index(body_name) + 1
        if self.floating and i == 1:
            return 1
        return self.model.getJointId(robot.joint_names[i])

    def link_parameters(self):
        """Pinocchio's per-body dynamic parameters (n, 10), in ``robot.body_names`` order."""
        return np.array(
            [self.model.inertias[self.body_joint(name)].toDynamicParameters() for name in self.robot.body_names]
        )


def random_states(robot, samples: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    shape = (samples, robot.nq)
    return rng.uniform(-1.5, 1.5, shape), rng.uniform(-2, 2, shape), rng.uniform(-3, 3, shape)


def numerical_rank(stacked: np.ndarray, rtol: float = 1e-9):
    """Rank of a stacked regressor by SVD (nonzero columns scaled to unit norm) and the singular
    gap (smallest kept over largest dropped)."""
    norms = np.linalg.norm(stacked, axis=0)
    keep = norms > rtol * norms.max()  # columns that are zero up to round-off stay out
    scaled = stacked[:, keep] / norms[keep]
    s = np.linalg.svd(scaled, compute_uv=False)
    rank = int(np.sum(s > rtol * s[0]))
    gap = s[rank - 1] / s[rank] if rank < len(s) else np.inf
    return rank, gap


# -- Pinocchio model of a pga-dyn Robot's spanning tree, built joint by joint --------------------
# (Pinocchio's URDF reader knows neither URDF+ <loop> nor pga-dyn's spherical and universal
# joints, so the tree is built from the Robot's own joint list.)


def _perpendiculars(u: np.ndarray) -> np.ndarray:
    """Two unit vectors (rows) orthogonal to the unit vector u and to each other."""
    return np.linalg.svd(u.reshape(1, 3))[2][1:]


def _inertia(inertial) -> pin.Inertia:
    """Pinocchio's inertia of a pga-dyn Inertial; a tensor that pin.Inertia(m, c, I) refuses (the
    degenerate ones of real files, e.g. a planar link's diag(0, 0, izz)) is given by its dynamic
    parameters [m, m c, I about the origin]."""
    m, c = float(inertial.mass), np.asarray(inertial.com, dtype=float)
    I = np.asarray(inertial.inertia, dtype=float)
    if m == 0.0 or np.linalg.eigvalsh(I).min() > 0.0:
        return pin.Inertia(m, c, I)
    J = I + m * (c @ c * np.eye(3) - np.outer(c, c))
    return pin.Inertia.FromDynamicParameters(
        np.array([m, *(m * c), J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]])
    )


class TreeOracle:
    """Pinocchio's model of the spanning tree of ``robot`` (fixed base), body i on joint i.

    R, P: JointModelRevoluteUnaligned / JointModelPrismaticUnaligned(axis); U:
    JointModelUniversal(axis1, axis2), whose placement is Rot(a1, q1) Rot(a2, q2) and whose
    velocity is (q1', q2') as pga-dyn's; S: JointModelSpherical, q = quaternion of exp(r^),
    v = the child's angular velocity in the child frame as pga-dyn's. The velocity
    coordinates of both models are therefore the same vector. F: JointModelFreeFlyer, whose
    coordinates are not pga-dyn's (exponential coordinates, spatial twist): a floating robot's
    states are drawn in Pinocchio's own coordinates (tests/fixture_oracle.py), and
    :meth:`configuration` refuses it.

    ``urdf`` (the file's text): the couplings are read from its ``<coupling>`` and ``<mimic>``
    elements here (:func:`file_couplings`), not taken from pga-dyn's ``robot.couplings``."""

    def __init__(self, robot, urdf: str | None = None):
        self.robot = robot
        model = pin.Model()
        model.gravity.linear = np.asarray(robot.gravity, dtype=float)
        for i in range(1, robot.n + 1):
            kind, axes = robot.joint_type[i], robot.axes[i]
            if kind == "R":
                joint = pin.JointModelRevoluteUnaligned(axes[0].copy())
            elif kind == "P":
                joint = pin.JointModelPrismaticUnaligned(axes[0].copy())
            elif kind == "U":
                joint = pin.JointModelUniversal(axes[0].copy(), axes[1].copy())
            elif kind == "S":
                joint = pin.JointModelSpherical()
            elif kind == "F":
                joint = pin.JointModelFreeFlyer()
            else:
                raise NotImplementedError(f"joint type {kind}")
            origin = robot.origin[i]
            jid = model.addJoint(
                int(robot.parent[i]), joint, pin.SE3(origin[:3, :3].copy(), origin[:3, 3].copy()), robot.joint_names[i]
            )
            assert jid == i
            assert model.joints[jid].idx_v == robot.q_index[i]
            model.appendBodyToJoint(jid, _inertia(robot.inertial(i)), pin.SE3.Identity())
        assert model.nv == robot.nq
        self.model, self.data = model, model.createData()
        eye = np.eye(robot.nq)
        self.couplings = (
            file_couplings(self, urdf)
            if urdf is not None
            else [
                (c.name, eye[c.follower] - sum(w * eye[k] for k, w in ((c.leader, c.ratio), *c.others)), c.offset)
                for c in robot.couplings
            ]
        )
        # a universal loop joint keeps the angle between its axes that it has at q0
        pin.forwardKinematics(model, self.data, pin.neutral(model))
        self.cos0 = [self._axes(lp)[0] @ self._axes(lp)[1] if lp.type == "U" else 0.0 for lp in robot.loop_joints]

    def _axes(self, lp):
        """The two axes of a U loop joint in the world, from Pinocchio's current kinematics."""
        Ra = self.data.oMi[lp.parent].homogeneous[:3, :3] @ lp.parent_frame[:3, :3]
        Rb = self.data.oMi[lp.child].homogeneous[:3, :3] @ lp.child_frame[:3, :3]
        return Ra @ lp.axes[0], Rb @ lp.axes[1]

    def configuration(self, q) -> np.ndarray:
        """Pinocchio's q of pga-dyn's tree coordinates q (velocities need no conversion)."""
        robot, qp = self.robot, np.zeros(self.model.nq)
        if "F" in robot.joint_type:
            raise NotImplementedError("pga-dyn's floating-base coordinates are not mapped to Pinocchio's")
        for i in range(1, robot.n + 1):
            sl, k = robot.coordinates(i), self.model.joints[i].idx_q
            if robot.joint_type[i] == "S":
                qp[k : k + 4] = pin.Quaternion(pin.exp3(np.asarray(q[sl], dtype=float))).coeffs()
            else:
                qp[k : k + sl.stop - sl.start] = q[sl]
        return qp

    def rnea(self, q, qd, qdd) -> np.ndarray:
        return pin.rnea(
            self.model, self.data, self.configuration(q), np.asarray(qd, float), np.asarray(qdd, float)
        ).copy()

    def regressor(self, q, qd, qdd) -> np.ndarray:
        """Joint-torque regressor (nq, 10 n); columns of body i: Pinocchio's dynamic parameters
        [m, mc, I about the body origin] in the body frame."""
        return pin.computeJointTorqueRegressor(
            self.model, self.data, self.configuration(q), np.asarray(qd, float), np.asarray(qdd, float)
        ).copy()

    def link_parameters(self) -> np.ndarray:
        return np.array([self.model.inertias[i].toDynamicParameters() for i in range(1, self.robot.n + 1)])

    def parameter_map(self) -> np.ndarray:
        """C (10 n x 10 n) with pi = C phi: pga-dyn's from_link_parameters as a matrix, so that
        Y_pin = Y_pga C."""
        from pga_dyn.tp_regressor import from_link_parameters

        size = 10 * self.robot.n
        return np.column_stack([from_link_parameters(self.robot, e) for e in np.eye(size)])

    # -- loop constraints from Pinocchio's kinematics -------------------------------------------
    def residual(self, qp) -> np.ndarray:
        """Closure residual at Pinocchio configuration qp, written independently of pga-dyn's:
        S: p_b - p_a; U: p_b - p_a and (R_a u1).(R_b u2) - (the same at q0); R: p_b - p_a and R_b u - R_a u (6 rows
        of rank 5; zero only when the axes point the same way: a revolute joint cannot flip its
        axis); P: log(R_a^T R_b) and p_b - p_a projected on two normals of R_a u (5 rows, zero
        only for the same orientation). Couplings: a . q - c for each row (a, c) of
        ``self.couplings``, q the coordinates of the 1-DoF joints (zero elsewhere)."""
        pin.forwardKinematics(self.model, self.data, qp)
        rows = []
        for lp, cos0 in zip(self.robot.loop_joints, self.cos0):
            Fa = self.data.oMi[lp.parent].homogeneous @ lp.parent_frame
            Fb = self.data.oMi[lp.child].homogeneous @ lp.child_frame
            Ra, Rb, d = Fa[:3, :3], Fb[:3, :3], Fb[:3, 3] - Fa[:3, 3]
            if lp.type in ("S", "U", "R"):
                rows.append(d)
            if lp.type == "U":
                rows.append([(Ra @ lp.axes[0]) @ (Rb @ lp.axes[1]) - cos0])
            elif lp.type == "R":
                rows.append(Rb @ lp.axes[0] - Ra @ lp.axes[0])  # the same direction, not just parallel
            elif lp.type == "P":
                rows.append(pin.log3(Ra.T @ Rb))
                rows.append((Ra @ _perpendiculars(lp.axes[0]).T).T @ d)
        if self.couplings:
            q1 = np.zeros(self.model.nv)
            for joint in self.model.joints[1:]:
                if joint.nq == 1:
                    q1[joint.idx_v] = qp[joint.idx_q]
            rows += [[a @ q1 - c] for _, a, c in self.couplings]
        return np.concatenate([np.ravel(r) for r in rows]) if rows else np.zeros(0)

    def jacobian(self, qp, h: float = 1e-6) -> np.ndarray:
        """d residual / d v by central differences, the increments applied with pin.integrate."""
        cols = []
        for e in np.eye(self.model.nv):
            plus = self.residual(pin.integrate(self.model, qp, h * e))
            minus = self.residual(pin.integrate(self.model, qp, -h * e))
            cols.append((plus - minus) / (2 * h))
        return np.column_stack(cols)

    def second_derivative(self, qp, v, a, h: float = 1e-4) -> np.ndarray:
        """d^2/dt^2 of the residual along q(t) = integrate(qp, t v + t^2/2 a) at t = 0, whose
        velocity and acceleration at t = 0 are v and a."""
        r = [self.residual(pin.integrate(self.model, qp, t * v + 0.5 * t * t * a)) for t in (-h, 0.0, h)]
        return (r[0] - 2 * r[1] + r[2]) / (h * h)


def file_couplings(oracle: TreeOracle, text: str) -> list:
    """The linear constraints a . q = c (a: (nv,)) of the transmissions of a URDF+ file, read from
    its text, as generalized_rbda's URDF+ reader states them: a ``<coupling>`` with ratio r
    between a predecessor and a successor link says that r times the sum of the coordinates of
    the joints from their nearest common ancestor to the predecessor equals the sum of those
    from the ancestor to the successor (``ClusterTreeModel::explicitRollingConstraint``); a
    URDF ``<mimic joint multiplier offset/>`` says q = multiplier q_joint + offset. Bodies and
    paths are those of Pinocchio's model."""
    import xml.etree.ElementTree as ET

    model, robot = oracle.model, oracle.robot
    root = ET.fromstring(text)

    def path(body):
        out = []
        while body > 0:
            out.append(body)
            body = model.parents[body]
        return out

    rows = []
    for element in root.iter("coupling"):
        ends = [robot.body_index(element.find(tag).get("link")) for tag in ("predecessor", "successor")]
        up = [path(b) for b in ends]
        common = set(up[0]) & set(up[1])
        a = np.zeros(model.nv)
        for sign, chain in ((float(element.find("ratio").get("value")), up[0]), (-1.0, up[1])):
            for body in chain:
                if body not in common:
                    assert model.joints[body].nv == 1, "a coupling through a multi-DoF joint"
                    a[model.joints[body].idx_v] += sign
        rows.append((element.get("name"), a, 0.0))
    for element in root.iter("joint"):
        mimic = element.find("mimic")
        if mimic is None or element.get("type") == "fixed":
            continue
        a = np.zeros(model.nv)
        a[model.joints[model.getJointId(element.get("name"))].idx_v] += 1.0
        a[model.joints[model.getJointId(mimic.get("joint"))].idx_v] -= float(mimic.get("multiplier", 1.0))
        rows.append((element.get("name"), a, float(mimic.get("offset", 0.0))))
    return rows
