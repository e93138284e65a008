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
import pytest

pin = pytest.importorskip("pinocchio")


def erd_path(relative: str) -> str:
    """Path of a file of the example-robot-data package (installed by the test extra)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    path = str(dist.locate_file(os.path.join("cmeel.prefix", "share", "example-robot-data", "robots", relative)))
    if not os.path.exists(path):
        pytest.skip(f"{relative} is not in this example-robot-data")
    return path


class Oracle:
    """Pinocchio's model of the same file as ``robot`` (a pga-dyn Robot)."""

    def __init__(self, robot, path: str):
        self.robot = robot
        if robot.floating_base:
            self.model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromUrdf(path)
        self.model.gravity.linear = robot.gravity
        self.data = self.model.createData()
        self.floating = robot.floating_base
        names = robot.coordinate_names[6:] if self.floating else robot.coordinate_names
        ids = [self.model.getJointId(name) for name in names]
        assert all(i < self.model.njoints for i in ids), "joint names differ"
        self.qi = np.array([self.model.joints[i].idx_q for i in ids], dtype=int)
        # continuous joints are unbounded revolute joints in Pinocchio: q = (cos, sin)
        self.unbounded = np.array([self.model.joints[i].nq == 2 for i in ids], dtype=bool)
        self.vi = np.array([self.model.joints[i].idx_v for i in ids], dtype=int)
        self.offset = 6 if self.floating else 0

    def to_pinocchio(self, q, qd, qdd):
        """Pinocchio's (q, v, a) and the matrix B with v_pin = B qd."""
        m, o = self.model, self.offset
        qp, vp, ap = np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)
        B = np.zeros((m.nv, self.robot.nq))
        qp[self.qi], vp[self.vi], ap[self.vi] = q[o:], qd[o:], qdd[o:]
        angles = q[o:][self.unbounded]
        qp[self.qi[self.unbounded]], qp[self.qi[self.unbounded] + 1] = np.cos(angles), np.sin(angles)
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
        Y = pin.computeJointTorqueRegressor(self.model, self.data, qp, vp, ap)
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
        return np.array([self.model.inertias[self.body_joint(name)].toDynamicParameters()
                         for name in self.robot.body_names])


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
