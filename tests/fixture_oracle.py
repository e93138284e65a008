"""Pinocchio's count of the unidentifiable parameters of a closed-loop or coupled robot: the
oracle of the nullspace dimensions of the URDF+ fixtures (tests/fixtures/).

Nothing here uses pga-dyn's kinematics, loop closure or regressor; only the Robot read from the
file (its tree joints, loop joints and couplings), which TreeOracle turns into a Pinocchio
model. For each sample:

1. the actuated coordinates are drawn, the passive ones solved by Newton's method on the
   closure residual written from Pinocchio's forward kinematics (TreeOracle.residual) with the
   constraint Jacobian written from Pinocchio's joint Jacobians (``constraint_jacobian``);
2. the motion is a rest state, qd = 0, with an acceleration qdd = N w in the nullspace N of
   the constraint Jacobian (at rest the acceleration constraint is J qdd = 0, no bias term);
3. the rows N^T Y_pin(q, 0, qdd) are stacked (Y_pin: Pinocchio's joint-torque regressor).

Rest states suffice: the projected equations of motion are those of a Lagrangian system in the
independent coordinates, whose Coriolis terms are built from its mass matrix, so a parameter
direction that leaves the mass matrix and gravity unchanged everywhere leaves them unchanged too.
The nullspace dimension is 10 n minus the numerical rank of the stack.

Run ``PYTHONPATH=. python tests/fixture_oracle.py`` (from the repository root) to print the
figures hard-coded in the tests.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import TreeOracle, numerical_rank, pin  # noqa: E402
from paths import FIXTURES  # noqa: E402


def fixture(name: str) -> str:
    """Path of tests/fixtures/<name>.urdf."""
    return os.path.join(FIXTURES, f"{name}.urdf")


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def constraint_jacobian(oracle: TreeOracle, qp) -> np.ndarray:
    """d(closure)/dv at Pinocchio configuration qp from Pinocchio's joint Jacobians: for each
    loop joint the relative velocity of its two frame origins (3 rows) and, for a revolute
    loop, the rate of R_b u - R_a u (3 rows, as TreeOracle.residual); a universal loop adds the
    rate of (R_a u1).(R_b u2); each coupling adds the row e_follower - ratio e_leader."""
    model, data, robot = oracle.model, oracle.data, oracle.robot
    pin.computeJointJacobians(model, data, qp)
    pin.updateFramePlacements(model, data)

    def frame(body, local):
        """World pose of a loop frame and the (6, nv) Jacobian (linear at its origin; angular)."""
        if body == 0:
            return local, np.zeros((6, model.nv))
        pose = data.oMi[body].homogeneous @ local
        J = pin.getJointJacobian(model, data, body, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        lever = pose[:3, 3] - data.oMi[body].translation
        linear = J[:3] - _skew(lever) @ J[3:]
        return pose, np.vstack([linear, J[3:]])

    rows = []
    for lp in robot.loop_joints:
        Fa, Ja = frame(lp.parent, lp.parent_frame)
        Fb, Jb = frame(lp.child, lp.child_frame)
        if lp.type not in ("S", "U", "R"):
            raise NotImplementedError(f"loop joint type {lp.type}")
        rows.append(Jb[:3] - Ja[:3])
        if lp.type == "R":  # d/dt (R_b u - R_a u), u turning with each body
            ua, ub = Fa[:3, :3] @ lp.axes[0], Fb[:3, :3] @ lp.axes[0]
            rows.append(_skew(ua) @ Ja[3:] - _skew(ub) @ Jb[3:])
        elif lp.type == "U":
            ua, ub = Fa[:3, :3] @ lp.axes[0], Fb[:3, :3] @ lp.axes[1]
            rows.append(np.cross(ua, ub) @ (Ja[3:] - Jb[3:]))
    for c in robot.couplings:
        row = np.zeros(model.nv)
        row[c.follower] += 1.0
        row[c.leader] -= c.ratio
        rows.append(row)
    return np.vstack([np.reshape(r, (-1, model.nv)) for r in rows])


def close(oracle: TreeOracle, q_a, max_cond=1e3):
    """Tree coordinates q (pga-dyn's order, revolute and prismatic joints only) with q[actuated] = q_a that
    close the loops by Pinocchio's residual, Newton from q = 0 (the fixtures close there), and
    the nullspace basis N (nv, n_a) of the constraint Jacobian; None when Newton fails or the
    state is near a singularity."""
    robot = oracle.robot
    if not set(robot.joint_type[1:]) <= {"R", "P"}:
        raise NotImplementedError("fixture_oracle handles revolute and prismatic trees (q = Pinocchio's q)")
    act, pas = list(robot.actuated), list(robot.passive)
    q = np.zeros(robot.nq)
    q[act] = q_a
    for _ in range(60):
        r = oracle.residual(oracle.configuration(q))
        if np.abs(r).max() < 1e-13:
            break
        J = constraint_jacobian(oracle, oracle.configuration(q))
        step = np.linalg.lstsq(J[:, pas], -r, rcond=None)[0]
        big = np.abs(step).max()
        q[pas] += step * min(1.0, 0.3 / big) if big > 0 else 0.0
    else:
        return None
    J = constraint_jacobian(oracle, oracle.configuration(q))
    rank = robot.nq - len(act)
    sp = np.linalg.svd(J[:, pas], compute_uv=False)
    if sp[rank - 1] < sp[0] / max_cond:
        return None
    _, s, vt = np.linalg.svd(J)
    assert len(s) <= rank or s[rank] < 1e-10 * s[0], ("constraint rank", s)
    return q, vt[rank:].T


def nullity(robot, samples: int = 80, seed: int = 0, spread: float = 1.0):
    """(nullspace dimension, singular gap, the stacked rows) by Pinocchio, from ``samples`` rest
    states with the actuated coordinates uniform in (-spread, spread)."""
    oracle = TreeOracle(robot)
    rng = np.random.default_rng(seed)
    na, rows, draws = len(robot.actuated), [], 0
    while len(rows) < samples:
        draws += 1
        assert draws < 20 * samples, "too few states close"
        closed = close(oracle, rng.uniform(-spread, spread, na)) if robot.loop_joints else None
        if robot.loop_joints and closed is None:
            continue
        if closed is None:  # couplings only: linear constraints
            q = np.zeros(robot.nq)
            q[list(robot.actuated)] = rng.uniform(-spread, spread, na)
            for _ in range(3):
                q[list(robot.passive)] -= np.linalg.lstsq(
                    constraint_jacobian(oracle, oracle.configuration(q))[:, list(robot.passive)],
                    oracle.residual(oracle.configuration(q)), rcond=None)[0]
            N = np.linalg.svd(constraint_jacobian(oracle, oracle.configuration(q)))[2][robot.nq - na:].T
        else:
            q, N = closed
        qdd = N @ rng.uniform(-1.0, 1.0, na)
        rows.append(N.T @ oracle.regressor(q, np.zeros(robot.nq), qdd))
    stacked = np.vstack(rows)
    rank, gap = numerical_rank(stacked)
    return 10 * robot.n - rank, gap, stacked


PLANAR = ("four_bar", "six_bar", "leg_linkage", "five_bar_spherical")
GRAVITIES = {"z": (0.0, 0.0, -9.81), "y": (0.0, -9.81, 0.0)}

if __name__ == "__main__":
    import robots

    for name in (*PLANAR, "rotor_chain_6", "rotor_chain_50"):
        for label, gravity in GRAVITIES.items():
            robot = robots.load_urdf(fixture(name), gravity=gravity)
            dim, gap, _ = nullity(robot)
            print(f"{name:20s} gravity {gravity}: nullspace dim {dim:3d} of {10 * robot.n} (gap {gap:.1e})")
