"""Random kinematic trees as users build robots, and Pinocchio's count of their unidentifiable
parameters (the independent oracle of the generalized principles).

A tree is drawn by :func:`random_tree` from a ``pick(options)`` function that returns one of
its options: ``hypothesis`` passes ``lambda o: draw(st.sampled_from(o))``, the benchmark
``benchmarks/principle_gaps.py`` a numpy generator. Every choice is discrete, so that axes are
often parallel, perpendicular, coaxial or meet, and offsets vanish: the special geometries
where fixed points and lines appear. Joints R, P, U (two distinct axes of the list), S; a
floating base one time in seven; gravity none, along z or skew.

:func:`pinocchio_nullspace` builds Pinocchio's model of a tree joint by joint (Pinocchio's
URDF reader knows neither U nor S joints), stacks its joint-torque regressor at random states
of Pinocchio's own configuration space and returns the rank, the singular gap and the
stacked regressor mapped to pga-dyn's parameters (eq. 97): nothing of pga-dyn's kinematics
or regressor is used, only the Robot's joint list and the linear map of the inertial
parameters between Pinocchio's link frames and the spatial assignment.
"""

from __future__ import annotations

import numpy as np

from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot

#: Joint axes: the frame axes and two skew directions (unit vectors).
AXES = ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.6, 0.0, 0.8), (0.48, -0.6, 0.64))
#: Joint origins in the parent frame: zero (axes meet), along z (coaxial), off-axis.
OFFSETS = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.4), (0.3, 0.0, 0.0), (0.0, 0.2, 0.1), (0.1, -0.2, 0.3))
#: Joint frame orientations (roll, pitch, yaw).
TURNS = ((0.0, 0.0, 0.0), (np.pi / 2, 0.0, 0.0), (0.0, np.pi / 2, 0.0), (0.3, 0.2, -0.4))
#: Gravity: none, along z, skew.
GRAVITIES = ((0.0, 0.0, 0.0), (0.0, 0.0, -9.81), (3.0, -4.0, -8.0))
TYPES = ("R", "R", "P", "U", "S")


def _rpy(roll, pitch, yaw) -> np.ndarray:
    def rot(axis, angle):
        c, s = np.cos(angle), np.sin(angle)
        i, j = [k for k in range(3) if k != axis]
        r = np.eye(3)
        r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
        return r

    return rot(2, yaw) @ rot(1, pitch) @ rot(0, roll)


def tree(joints, gravity=(0.0, 0.0, -9.81), floating: bool = False, name: str = "tree") -> Robot:
    """A tree robot from ``joints``: (parent index, type, axes, offset, (roll, pitch, yaw)) per
    body 1..n (parent 0 is the root link ``l0``: the fixed base, or the floating body)."""
    rng = np.random.default_rng(len(joints))
    links = [LinkSpec("l0", Inertial(2.0, np.array([0.1, 0.0, 0.05]), np.diag([0.2, 0.3, 0.4])))]
    specs = []
    for k, (parent, kind, axes, offset, turn) in enumerate(joints, start=1):
        origin = np.eye(4)
        origin[:3, :3] = _rpy(*turn)
        origin[:3, 3] = offset
        links.append(LinkSpec(f"l{k}", Inertial(1.0 + k, rng.uniform(-0.1, 0.1, 3), np.diag(rng.uniform(0.2, 0.5, 3)))))
        specs.append(
            JointSpec(f"j{k}", kind, f"l{parent}", f"l{k}", origin, np.array(axes, dtype=float).reshape(-1, 3))
        )
    return Robot(name, links, specs, gravity=gravity, floating_base=floating)


def random_tree(pick, max_bodies: int = 6, name: str = "random") -> Robot:
    """A random tree robot; ``pick(options)`` returns one of ``options`` (a tuple)."""
    n = pick(tuple(range(1, max_bodies + 1)))
    floating = pick((False,) * 6 + (True,))
    gravity = pick(GRAVITIES)
    joints = []
    for k in range(1, n + 1):
        parent = k - 1 if pick((True, True, False)) else pick(tuple(range(k)))
        kind = pick(TYPES)
        turn, offset = pick(TURNS), pick(OFFSETS)
        if kind in ("R", "P"):
            axes = [pick(AXES)]
        elif kind == "U":
            first = pick(AXES)
            axes = [first, pick(tuple(a for a in AXES if a != first))]
        else:
            axes = []
        joints.append((parent, kind, axes, offset, turn))
    return tree(joints, gravity, floating, name)


def describe(robot) -> str:
    """A one-line description of a tree: joints (type, parent, axes), gravity, base."""
    parts = []
    for i in range(1, robot.n + 1):
        kind = robot.joint_type[i]
        axes = robot.axes[i, : {"R": 1, "P": 1, "U": 2}.get(kind, 0)]
        axis = "/".join("(" + ",".join(f"{c:.2g}" for c in a) + ")" for a in axes)
        parts.append(f"{kind}{axis}<-{robot.parent[i]}@{','.join(f'{c:.2g}' for c in robot.origin[i][:3, 3])}")
    return f"{' '.join(parts)} g={tuple(float(c) for c in robot.gravity)}"


def pinocchio_model(robot):
    """Pinocchio's model of a tree robot, joint i on body i: R, P (unaligned axes), U
    (JointModelUniversal: Rot(a1, q1) Rot(a2, q2), as pga-dyn), S (spherical), F (free flyer)."""
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = np.asarray(robot.gravity, dtype=float)
    for i in range(1, robot.n + 1):
        kind, axes = robot.joint_type[i], robot.axes[i]
        joint = {
            "R": lambda: pin.JointModelRevoluteUnaligned(axes[0].copy()),
            "P": lambda: pin.JointModelPrismaticUnaligned(axes[0].copy()),
            "U": lambda: pin.JointModelUniversal(axes[0].copy(), axes[1].copy()),
            "S": pin.JointModelSpherical,
            "F": pin.JointModelFreeFlyer,
        }[kind]()
        origin = robot.origin[i]
        jid = model.addJoint(
            int(robot.parent[i]), joint, pin.SE3(origin[:3, :3].copy(), origin[:3, 3].copy()), f"joint{i}"
        )
        inertial = robot.inertial(i)
        model.appendBodyToJoint(
            jid,
            pin.Inertia(
                float(inertial.mass), np.asarray(inertial.com, dtype=float), np.asarray(inertial.inertia, dtype=float)
            ),
            pin.SE3.Identity(),
        )
    return model


def pinocchio_nullspace(robot, seed: int = 0, rows_per_parameter: int = 3, rtol: float = 1e-9):
    """Pinocchio's stacked joint-torque regressor of a tree at random states: returns
    (nullity = 10 n - rank, singular gap, Y) with Y (rows, 10 n) in pga-dyn's parameters
    (Y_pin C^-1, C the link-frame -> eq. (97) map: Y_pga pi = Y_pin phi for pi = C phi).
    States: q = integrate(neutral, u) with u uniform in [-pi, pi] per velocity coordinate,
    v and a standard normal. The rank is read on the column-scaled matrix at ``rtol``."""
    import pinocchio as pin

    from pga_dyn.tp_regressor import from_link_parameters

    model = pinocchio_model(robot)
    data = model.createData()
    rng = np.random.default_rng(seed)
    size = 10 * robot.n
    samples = -(-rows_per_parameter * size // model.nv) + 2
    blocks = []
    for _ in range(samples):
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-np.pi, np.pi, model.nv))
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        blocks.append(pin.computeJointTorqueRegressor(model, data, q, v, a).copy())
    C = np.column_stack([from_link_parameters(robot, e) for e in np.eye(size)])
    Y = np.linalg.solve(C.T, np.vstack(blocks).T).T
    norms = np.linalg.norm(Y, axis=0)
    keep = norms > rtol * norms.max()
    s = np.linalg.svd(Y[:, keep] / norms[keep], compute_uv=False)
    rank = int(np.sum(s > rtol * s[0]))
    gap = s[rank - 1] / s[rank] if rank < len(s) else np.inf
    return size - rank, gap, Y
