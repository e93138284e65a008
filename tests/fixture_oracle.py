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
    rows += [a for _, a, _ in oracle.couplings]
    for body, axis in getattr(oracle, "locks", ()):  # a spin locked at zero rate: w_body . (R_body axis) = 0
        J = pin.getJointJacobian(model, data, body, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        rows.append((data.oMi[body].rotation @ axis) @ J[3:])
    return np.vstack([np.reshape(r, (-1, model.nv)) for r in rows])


def bias(oracle: TreeOracle, qp, v) -> np.ndarray:
    """J-dot v of the rows of :func:`constraint_jacobian` at (qp, v), exactly, from Pinocchio's
    forward kinematics with qdd = 0 (classical accelerations, no finite differences): a loop
    joint's shared point gives the difference of the classical accelerations of its two frame
    origins; a direction u fixed in a body (angular velocity w, angular acceleration alpha at
    qdd = 0) has u'' = alpha x u + w x (w x u), so an R loop's rows R_b u - R_a u give u_b'' -
    u_a'' and a U loop's row (R_a u1) . (R_b u2) gives u_a'' . u_b + 2 u_a' . u_b' + u_a . u_b''
    (u' = w x u); a coupling's row is linear in q (bias 0); a spin lock's d/dt (w_b . u_b) =
    alpha_b . u_b (u_b turns with the body, w_b . (w_b x u_b) = 0)."""
    model, data, robot = oracle.model, oracle.data, oracle.robot
    pin.forwardKinematics(model, data, qp, v, np.zeros_like(v))

    def frame(body, local):
        """(classical acceleration of the frame origin, its rotation, w, alpha), world coordinates."""
        if body == 0:
            return np.zeros(3), local[:3, :3], np.zeros(3), np.zeros(3)
        R, motion, acc = data.oMi[body].rotation, data.v[body], data.a[body]
        w, r = motion.angular, local[:3, 3]
        a0 = acc.linear + np.cross(w, motion.linear)  # the body origin's classical acceleration (local)
        point = R @ (a0 + np.cross(acc.angular, r) + np.cross(w, np.cross(w, r)))
        return point, R @ local[:3, :3], R @ w, R @ acc.angular

    def turning(u, w, alpha):
        """(u', u'') of a direction u fixed in a body."""
        return np.cross(w, u), np.cross(alpha, u) + np.cross(w, np.cross(w, u))

    rows = []
    for lp in robot.loop_joints:
        if lp.type not in ("S", "U", "R"):
            raise NotImplementedError(f"loop joint type {lp.type}")
        pa, Ra, wa, ala = frame(lp.parent, lp.parent_frame)
        pb, Rb, wb, alb = frame(lp.child, lp.child_frame)
        rows.append(pb - pa)
        if lp.type == "R":
            rows.append(turning(Rb @ lp.axes[0], wb, alb)[1] - turning(Ra @ lp.axes[0], wa, ala)[1])
        elif lp.type == "U":
            ua, ub = Ra @ lp.axes[0], Rb @ lp.axes[1]
            (ua1, ua2), (ub1, ub2) = turning(ua, wa, ala), turning(ub, wb, alb)
            rows.append([ua2 @ ub + 2.0 * ua1 @ ub1 + ua @ ub2])
    rows += [[0.0] for _ in oracle.couplings]
    for body, axis in getattr(oracle, "locks", ()):
        R = data.oMi[body].rotation
        rows.append([(R @ data.a[body].angular) @ (R @ axis)])
    return np.concatenate([np.ravel(r) for r in rows]) if rows else np.zeros(0)


def closure_residual(oracle: TreeOracle, qp) -> np.ndarray:
    """The oracle's residual, with a zero for each spin lock of ``oracle.locks`` (a velocity
    constraint: no position form), so that it matches the rows of :func:`constraint_jacobian`."""
    return np.concatenate([oracle.residual(qp), np.zeros(len(getattr(oracle, "locks", ())))])


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
                    oracle.residual(oracle.configuration(q)),
                    rcond=None,
                )[0]
            N = np.linalg.svd(constraint_jacobian(oracle, oracle.configuration(q)))[2][robot.nq - na :].T
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


# -- any robot: floating bases, every joint type, couplings read from the file -------------------
def passive_velocities(oracle: TreeOracle, urdf: str) -> np.ndarray:
    """Velocity indices (Pinocchio's) of the coordinates the constraints determine, from the
    file's text: the joints marked ``independent="false"``, the ``<mimic>`` joints, and the
    parent joint of a coupling's successor link when neither end is marked (the file's design,
    read here, not pga-dyn's ``robot.passive``)."""
    import xml.etree.ElementTree as ET

    model = oracle.model
    root = ET.fromstring(urdf)
    flags = {el.get("name"): el.get("independent", "").lower() for el in root.iter("joint")}
    names = set()
    for el in root.iter("joint"):
        if el.get("type") != "fixed" and (flags[el.get("name")] in ("false", "0") or el.find("mimic") is not None):
            names.add(el.get("name"))
    parent_joint = {el.find("child").get("link"): el.get("name") for el in root.iter("joint")}
    for el in root.iter("coupling"):
        ends = [parent_joint[el.find(tag).get("link")] for tag in ("predecessor", "successor")]
        if not any(flags[e] in ("false", "0") for e in ends):
            names.add(ends[1])
    out = []
    for name in sorted(names, key=model.getJointId):
        joint = model.joints[model.getJointId(name)]
        out.extend(range(joint.idx_v, joint.idx_v + joint.nv))
    return np.array(out, dtype=int)


def random_configuration(oracle: TreeOracle, rng, spread: float) -> np.ndarray:
    """Pinocchio configuration: 1-DoF and universal joints uniform in (-spread, spread); spherical
    joints exp of a rotation vector uniform in (-1, 1)^3; a free flyer at a position uniform in
    (-1, 1)^3 with such a rotation."""
    model = oracle.model
    qp = pin.neutral(model)
    for joint in model.joints[1:]:
        k, kind = joint.idx_q, joint.shortname()
        if kind == "JointModelFreeFlyer":
            qp[k : k + 3] = rng.uniform(-1.0, 1.0, 3)
            qp[k + 3 : k + 7] = pin.Quaternion(pin.exp3(rng.uniform(-1.0, 1.0, 3))).coeffs()
        elif kind == "JointModelSpherical":
            qp[k : k + 4] = pin.Quaternion(pin.exp3(rng.uniform(-1.0, 1.0, 3))).coeffs()
        else:
            qp[k : k + joint.nq] = rng.uniform(-spread, spread, joint.nq)
    return qp


def newton(oracle: TreeOracle, qp, free, tol=1e-12, iterations=100):
    """Close the constraints by Levenberg-Marquardt on the velocity indices ``free``: the step
    minimises |J_p dx + r|^2 + |r|^2 |dx|^2 (J_p: Pinocchio's constraint Jacobian), applied with
    pin.integrate, at most 0.3 long; the closed configuration, or None."""
    v = np.zeros(oracle.model.nv)
    for _ in range(iterations):
        r = closure_residual(oracle, qp)
        if np.abs(r).max() < tol:
            return qp
        J = constraint_jacobian(oracle, qp)[:, free]
        damped = np.vstack([J, np.linalg.norm(r) * np.eye(len(free))])
        step = np.linalg.lstsq(damped, np.concatenate([-r, np.zeros(len(free))]), rcond=None)[0]
        v[:] = 0.0
        v[free] = step * min(1.0, 0.3 / max(np.abs(step).max(), 1e-300))
        qp = pin.integrate(oracle.model, qp, v)
    return None


def regular_nullspace(oracle: TreeOracle, qp, free, max_cond: float):
    """N (nv, nv - len(free)), an orthonormal basis of the nullspace of the constraint Jacobian J
    at a closed qp, when the passive columns J_p have full column rank with cond below
    ``max_cond`` (a regular state); else None. J's rank must be len(free): a gap of 1e8 below it."""
    J = constraint_jacobian(oracle, qp)
    nv, k = oracle.model.nv, len(free)
    if k == 0:
        return np.eye(nv)
    s = np.linalg.svd(J[:, free], compute_uv=False)
    if len(s) < k or s[k - 1] < s[0] / max_cond:
        return None
    _, s, vt = np.linalg.svd(J)
    assert len(s) == k or s[k] < 1e-8 * s[k - 1], ("the constraints have more rank than the passive coordinates", s)
    return vt[k:].T


def reference(oracle: TreeOracle, free, step: float = 0.1, steps: int = 10):
    """The start of the assembly paths: q0 (neutral) with the passive coordinates closed; when
    J_p is singular there, the best-conditioned of the configurations with every actuated
    coordinate moved by step, 2 step, ..., steps step (rad or m), each closed by Newton from
    the previous one (docs/drng.md, assembly modes). Also the cond(J_p) limit of the samples:
    30, or 3 cond(J_p) at a regular q0 when that is larger (as pga-dyn's sampling states it)."""
    model = oracle.model
    start = newton(oracle, pin.neutral(model), free, iterations=400)  # loops far open at q0 take long steps
    if start is None:  # a flat q0 with open loops: Newton cannot leave it, start a little off it
        kick = np.zeros(model.nv)
        kick[free] = np.random.default_rng(0).uniform(-1e-2, 1e-2, len(free))
        start = newton(oracle, pin.integrate(model, pin.neutral(model), kick), free)
    assert start is not None, "the reference configuration does not close"

    def cond(qp):
        s = np.linalg.svd(constraint_jacobian(oracle, qp)[:, free], compute_uv=False)
        return np.inf if len(s) < len(free) or s[len(free) - 1] < 1e-8 * s[0] else s[0] / s[len(free) - 1]

    if len(free) and cond(start) == np.inf:
        move = np.full(model.nv, step)
        move[free] = 0.0
        qp, best = start, (np.inf, None)
        for _ in range(steps):
            qp = newton(oracle, pin.integrate(model, qp, move), free)
            if qp is None:
                break
            best = min(best, (cond(qp), qp), key=lambda pair: pair[0])
        return best[1], 30.0
    return start, max(30.0, 3.0 * cond(start)) if len(free) else 30.0


def closed_state(oracle: TreeOracle, rng, free, spread=1.0, mode="q0", max_cond=1e3, step=0.02, start=None, hops=0):
    """A closed, regular configuration and its nullspace basis N, or None (draw rejected).

    ``mode="q0"``: from the reference configuration ``start`` (:func:`reference`) the actuated
    coordinates move by random amounts in (-spread, spread) along a straight path in steps of
    ``step`` (rad), the passive ones predicted along the tangent and closed by Newton at every
    step; a draw whose path meets a state with cond(J_p) >= ``max_cond``, or steps over a
    singular one (det(U^T J_p) changes sign, U an orthonormal basis of the previous J_p's
    columns), or whose Newton steps move the passive coordinates more than half the step from
    the prediction, or whose tangent turns by more than 25 degrees in a step (Newton has landed
    on another branch: past a bifurcation, such as a flat parallelogram, the determinant keeps
    its sign), is rejected: every state is in the regular region of
    the reference's assembly branch (``hops``: through as many random waypoints first, so that a
    locked spin, whose angle depends on the path, takes varied values). ``mode="any"``: random coordinates, passive ones
    included, closed by Newton: any mode."""
    model = oracle.model
    if mode == "any":
        qp = newton(oracle, random_configuration(oracle, rng, spread), free)
        return None if qp is None else (qp, regular_nullspace(oracle, qp, free, max_cond))
    act = np.setdiff1d(np.arange(model.nv), free)
    qp = start
    J = constraint_jacobian(oracle, qp)
    U, R = np.linalg.qr(J[:, free])
    offset = np.zeros(len(act))
    for _ in range(1 + hops):  # to a random target; with ``hops``, through random waypoints first
        dv = np.zeros(model.nv)
        target = rng.uniform(-spread, spread, len(act))
        dv[act], offset = target - offset, target
        steps = max(1, int(np.ceil(np.abs(dv).max() / step)))
        for _ in range(steps):
            move = dv / steps  # the passive coordinates predicted along the tangent: J move = 0
            move[free] = -np.linalg.lstsq(J[:, free], J[:, act] @ move[act], rcond=None)[0]
            predicted = pin.integrate(model, qp, move)
            qp = newton(oracle, predicted, free)
            if qp is None or regular_nullspace(oracle, qp, free, max_cond) is None:
                return None
            if np.abs(pin.difference(model, predicted, qp)).max() > 0.5 * np.abs(move).max():
                return None  # Newton left the branch of the path: it landed on another one
            J = constraint_jacobian(oracle, qp)
            after = dv / steps
            after[free] = -np.linalg.lstsq(J[:, free], J[:, act] @ after[act], rcond=None)[0]
            if after @ move < 0.9 * np.linalg.norm(after) * np.linalg.norm(move):
                return None  # the tangent jumped: another branch crosses the path's (a bifurcation)
            Jp = J[:, free]
            if np.linalg.det(U.T @ Jp) * np.prod(np.sign(np.diag(R))) <= 0:  # det(U^T J_prev) = det(R)
                return None
            U, R = np.linalg.qr(Jp)
    return qp, regular_nullspace(oracle, qp, free, max_cond)


def file_nullity(
    robot,
    urdf: str,
    samples: int | None = None,
    seed: int = 0,
    spread: float = 1.0,
    mode: str = "q0",
    max_cond: float | None = None,
    locks=(),
    free=None,
    hops: int = 0,
    start=None,
):
    """(nullspace dimension, singular gap, stacked rows, draws) by Pinocchio for any robot read from
    ``urdf`` (its text): rest states closed as :func:`closed_state` says (cond(J_p) below
    ``max_cond``, default: :func:`reference`'s limit in mode "q0", 100 in mode "any"), the rows N^T Y_pin(q, 0,
    N w) stacked, 3 rows per parameter by default. Couplings and the passive coordinates are
    read from the text (:func:`file_couplings`, :func:`passive_velocities`). ``locks``: (body,
    axis in its frame) of each spin held at zero rate, given by the test from the file's geometry
    (the line through the two ball-joint centres), rows of the constraint Jacobian with no
    position form (the spin angle is wherever Newton leaves it: at rest the acceleration
    constraint is J qdd = 0 for them too). ``free``: the passive velocity indices, when the file
    does not mark them (Extended URDF: the test reads them off the YAML's name_mot); ``hops``:
    random waypoints of each path (:func:`closed_state`). ``start``: {joint name: angle} of a closed
    configuration of the branch to sample (the test's own solution of the loops, or pga-dyn's
    reference), instead of :func:`reference` (mode "q0"); the cond(J_p) limit is then 30, or 3
    cond(J_p) there when that is larger (the oracle's cond(J_p): of all its passive columns at
    once, the mimic joints' included)."""
    oracle = TreeOracle(robot, urdf)
    oracle.locks = tuple(locks)  # with locks, moving states (qd, and qdd with the bias J-dot qd)
    free = passive_velocities(oracle, urdf) if free is None else np.asarray(free, dtype=int)
    dof = oracle.model.nv - len(free)
    samples = samples or -(-30 * robot.n // dof) + 2
    rng = np.random.default_rng(seed)
    rows, draws = [], 0
    zero = np.zeros(oracle.model.nv)
    if start is not None:  # the branch the test solved for: closed again by Newton, the limit as reference()'s
        v = np.zeros(oracle.model.nv)
        for name, angle in start.items():
            v[oracle.model.joints[oracle.model.getJointId(name)].idx_v] = angle
        start = newton(oracle, pin.integrate(oracle.model, pin.neutral(oracle.model), v), free)
        assert start is not None, "the given start does not close"
        s = np.linalg.svd(constraint_jacobian(oracle, start)[:, free], compute_uv=False)
        limit = max(30.0, 3.0 * s[0] / s[len(free) - 1]) if len(free) else 30.0
    else:
        start, limit = reference(oracle, free) if len(free) and mode == "q0" else (None, 100.0)
    max_cond = limit if max_cond is None else max_cond
    while len(rows) < samples:
        draws += 1
        assert draws < 50 * samples, f"only {len(rows)} of {draws} draws closed"
        state = (
            closed_state(oracle, rng, free, spread, mode, max_cond, start=start, hops=hops)
            if len(free)
            else (random_configuration(oracle, rng, spread), np.eye(oracle.model.nv))
        )
        if state is None or state[1] is None:
            continue
        qp, N = state
        if oracle.locks:  # moving states: a spin lock is a velocity constraint, not a Lagrangian system's
            v = N @ rng.uniform(-1.0, 1.0, dof)
            J = constraint_jacobian(oracle, qp)  # its dependent rows (an R loop's 6 of rank 5) cut, not inverted
            a = N @ rng.uniform(-1.0, 1.0, dof) - np.linalg.pinv(J, rcond=1e-10) @ bias(oracle, qp, v)
            Y = pin.computeJointTorqueRegressor(oracle.model, oracle.data, qp, v, a)
        else:
            Y = pin.computeJointTorqueRegressor(oracle.model, oracle.data, qp, zero, N @ rng.uniform(-1.0, 1.0, dof))
        rows.append(N.T @ Y)
    stacked = np.vstack(rows)
    rank, gap = numerical_rank(stacked)
    return 10 * robot.n - rank, gap, stacked, draws
