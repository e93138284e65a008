"""Pinocchio models in and out of pga-dyn: :func:`from_pinocchio` and :func:`to_pinocchio`.

Both need the optional extra ``pinocchio`` (``pip install '.[pinocchio]'``); without it they
raise a :class:`~pga_dyn.errors.PgaDynError` that says so. Importing this module imports neither
Pinocchio nor the compiled kernels.

A ``pinocchio.Model`` is a tree of joints, joint ``j`` carrying the inertia ``model.inertias[j]``
(mass, centre of mass and rotational inertia about it) in its frame, placed by
``model.jointPlacements[j]`` in the frame of its parent joint. pga-dyn's bodies are the same: body
frame = joint frame (docs/conventions.md), so a body's link-frame parameters (Pinocchio's order,
:data:`pga_dyn.conventions.LINK_PARAM_NAMES`) are ``model.inertias[j].toDynamicParameters()``
and the parameters of eq. (97) are their image by :func:`pga_dyn.tp_regressor.link_map`.

Joints, Pinocchio -> pga-dyn (:func:`from_pinocchio`):

* 1-DoF joints (``JointModelRX/RY/RZ``, ``RevoluteUnaligned``, the unbounded ``RUBX/RUBY/RUBZ``
  and ``RevoluteUnboundedUnaligned``, ``PX/PY/PZ``, ``PrismaticUnaligned``, the helical
  ``HX/HY/HZ`` and ``HelicalUnaligned``) by their motion subspace S (6, 1), constant, Pinocchio's
  (linear; angular) order, in the joint frame: S = (0; a) is a revolute joint R about the axis a
  through the joint origin, S = (a; 0) a prismatic joint P along a; a helical joint of nonzero
  pitch is refused (pga-dyn has no screw joint). An unbounded revolute joint's q = (cos, sin)
  becomes the angle.
* ``JointModelMimic`` (Pinocchio's URDF reader with ``mimic=True``): the joint it wraps (its S is
  scaling x the unit S) following its leader as q = scaling q_leader + offset, a URDF mimic
  (:class:`pga_dyn.model.Coupling`).
* ``JointModelSpherical`` and ``JointModelSphericalZYX``: a spherical joint S (pga-dyn's
  coordinates: the rotation vector, not the quaternion nor the ZYX angles).
* ``JointModelUniversal(axis1, axis2)``: U, T = Rot(axis1, q1) Rot(axis2, q2).
* ``JointModelFreeFlyer`` on the universe: the floating joint F. When it is the one joint on the
  universe, at the identity, and no body frame sits on the universe, it is pga-dyn's floating base
  (``robot.floating_base``, named ``<root link>_floating``); otherwise an F joint of its name.
* Joints of several degrees of freedom that are chains of these: ``JointModelPlanar`` (T = Trans(x,
  y, 0) Rz(theta): P along x, P along y, R about z), ``JointModelTranslation`` (P along x, y, z) and
  ``JointModelComposite`` (its joints in turn, each after its placement; e.g. an MJCF body with
  several joints). Sub-joint k (1-based) of joint ``name`` is ``name.k``; between two sub-joints
  hangs a massless link ``<link>.k`` (10 unidentifiable parameters each), the last carries the
  body. Their coordinates are the sub-joints' (for the planar joint x, y, theta and their
  derivatives in the parent frame, not Pinocchio's (x, y, cos, sin) and body-frame velocity).

Others (``JointModelEllipsoid``, a free flyer below another joint) are refused with
a :class:`~pga_dyn.errors.PgaDynError` naming the joint and its type.

Links. The link of joint j is named after the first ``BODY`` frame of joint j at the identity
(Pinocchio's URDF and MJCF readers add it: the child link, the MJCF body), else after the joint.
Every other ``BODY`` frame (links on fixed joints, which Pinocchio merges into their joint) becomes
a massless link on a fixed joint at the frame's placement, named after the frame's fixed joint
(its ``FIXED_JOINT`` parent frame) or ``<link>_fixed``: pga-dyn merges them back, so
``robot.graph.nodes[body]["links"]`` lists them and ``robot.link_pose(link)`` is their placement.
The root link is the first ``BODY`` frame of the universe at the identity, else ``universe``.
Limits of 1-DoF joints with nq = 1 are kept (the default sampling box, :mod:`pga_dyn.sampling`);
Pinocchio's "no limit" (an infinite or the largest float bound) is none. Gravity is
``model.gravity.linear`` (its angular part must be zero).

pga-dyn -> Pinocchio (:func:`to_pinocchio`): body i on joint i (``robot.parent[i]`` its parent,
``robot.origin[i]`` its placement), R and P about a coordinate axis as ``JointModelRX`` ...
``PZ``, about another axis as ``RevoluteUnaligned`` / ``PrismaticUnaligned`` (bounded: q is the
angle, also for URDF ``continuous`` joints), U as ``Universal``, S as ``Spherical`` (q the
quaternion; velocity coordinates the same as pga-dyn's), F as ``FreeFlyer``; a ``JOINT`` frame per
joint and a ``BODY`` frame per link at ``robot.link_pose(link)``. Loop joints and couplings are
refused: a ``pinocchio.Model`` is a tree.

States and generalized forces (:func:`pinocchio_state`, :func:`from_pinocchio_state`,
:func:`pinocchio_forces`, :func:`from_pinocchio_forces`) map pga-dyn's coordinates to
Pinocchio's and back, joint by joint (found by name in the model, the floating base also as
joint 1): R, P, U the same numbers (q = (cos, sin) for an unbounded revolute joint), S the
quaternion of the rotation vector, F the free flyer's pose, local twist and local wrench
(:func:`pga_dyn.floating.local_coordinates`, :func:`pga_dyn.floating.local_wrench`;
docs/conventions.md, "Floating base").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import link_inertia, pseudo_to_link
from pga_dyn.errors import PgaDynError, optional
from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot, check_robot, frozen_array

if TYPE_CHECKING:
    import numpy.typing as npt
    import pinocchio

__all__ = [
    "from_pinocchio",
    "to_pinocchio",
    "pinocchio_state",
    "from_pinocchio_state",
    "pinocchio_forces",
    "from_pinocchio_forces",
]

#: The 1-DoF joints of Pinocchio read by their (constant) motion subspace.
ONE_DOF = {
    "JointModelRX",
    "JointModelRY",
    "JointModelRZ",
    "JointModelRevoluteUnaligned",
    "JointModelRUBX",
    "JointModelRUBY",
    "JointModelRUBZ",
    "JointModelRevoluteUnboundedUnaligned",
    "JointModelPX",
    "JointModelPY",
    "JointModelPZ",
    "JointModelPrismaticUnaligned",
    "JointModelHX",
    "JointModelHY",
    "JointModelHZ",
    "JointModelHelicalUnaligned",
    "JointModelMimic",
}
#: Pinocchio's multi-DoF joints that are chains of pga-dyn joints: (type, axis) of each link.
CHAINS = {
    "JointModelPlanar": (("P", (1.0, 0.0, 0.0)), ("P", (0.0, 1.0, 0.0)), ("R", (0.0, 0.0, 1.0))),
    "JointModelTranslation": (("P", (1.0, 0.0, 0.0)), ("P", (0.0, 1.0, 0.0)), ("P", (0.0, 0.0, 1.0))),
}
#: Pinocchio's aligned 1-DoF joints, by pga-dyn type and axis.
ALIGNED = {
    ("R", 0): "JointModelRX",
    ("R", 1): "JointModelRY",
    ("R", 2): "JointModelRZ",
    ("P", 0): "JointModelPX",
    ("P", 1): "JointModelPY",
    ("P", 2): "JointModelPZ",
}
#: Tolerance of a frame placement that is the identity, or of a motion subspace entry that is zero.
TOLERANCE = 1e-12


def _pinocchio(what: str):
    return optional("pinocchio", what, "pinocchio")


class _Reader:
    """The links and joints of a pga-dyn description from a ``pinocchio.Model``."""

    def __init__(self, pin, model):
        self.pin, self.model = pin, model
        self.where = f"Pinocchio model '{model.name}'" if model.name else "Pinocchio model"
        self.neutral = pin.neutral(model)
        self.links, self.joints = [], []
        self.root = None  # the link of the universe (fixed base)

    def fail(self, name: str, joint, message: str):
        raise PgaDynError(f"{self.where}: joint '{name}' ({joint.shortname()}) {message}")

    def body_frames(self, j: int) -> tuple:
        """(name of the link of joint j, the other BODY frames of joint j)."""
        frames = [f for f in self.model.frames if f.type == self.pin.FrameType.BODY and f.parentJoint == j]
        own = next((f for f in frames if np.allclose(f.placement.homogeneous, np.eye(4), rtol=0, atol=TOLERANCE)), None)
        name = own.name if own is not None else ("universe" if j == 0 else self.model.names[j])
        return name, [f for f in frames if f is not own]

    def fixed_links(self, link: str, frames) -> None:
        """The other BODY frames of a joint as massless links on fixed joints below ``link``."""
        for frame in frames:
            parent = self.model.frames[frame.parentFrame]
            joint = (
                parent.name
                if (
                    parent.type == self.pin.FrameType.FIXED_JOINT
                    and frame.parentFrame > 0
                    and parent.parentJoint == frame.parentJoint
                )
                else f"{frame.name}_fixed"
            )
            self.links.append(LinkSpec(frame.name))
            self.joints.append(JointSpec(joint, "fixed", link, frame.name, frame.placement.homogeneous.copy()))

    def one_dof(self, j: int, joint, name: str) -> tuple:
        """(type, axis, mimic) of a 1-DoF joint ``joint`` (the model's joint j or a part of it),
        named ``name``, from its motion subspace S (6, 1) at the neutral q."""
        data = joint.createData()
        joint.calc(data, self.neutral)
        S = np.array(data.S).reshape(6)
        mimic = None
        if joint.shortname() == "JointModelMimic":
            scaling = joint.extract().scaling
            if scaling == 0.0:
                self.fail(name, joint, "mimics its leader with scaling 0: it does not move")
            S = S / scaling
            leader = dict(zip(self.model.mimicking_joints, self.model.mimicked_joints))[j]
            mimic = (self.model.names[leader], float(scaling), float(joint.extract().offset))
        linear, angular = S[:3], S[3:]
        if np.abs(linear).max() <= TOLERANCE:
            return "R", angular, mimic
        if np.abs(angular).max() <= TOLERANCE:
            return "P", linear, mimic
        self.fail(name, joint, f"moves along the screw S = {S.tolist()}: pga-dyn has no helical joint")

    def limits(self, joint) -> tuple | None:
        """(lower, upper) of a 1-coordinate joint; None for Pinocchio's no limit."""
        if joint.nq != 1:
            return None
        lower, upper = self.model.lowerPositionLimit[joint.idx_q], self.model.upperPositionLimit[joint.idx_q]
        big = np.finfo(float).max
        return None if max(abs(lower), abs(upper)) >= big else (float(lower), float(upper))

    def joint_specs(self, j: int, joint, name: str, parent: str, child: str, origin: np.ndarray) -> None:
        """The JointSpecs (and massless links) of Pinocchio joint ``joint`` (of the model's joint
        j), named ``name``, from link ``parent`` to link ``child`` at ``origin`` (4, 4)."""
        kind = joint.shortname()
        if kind in ONE_DOF:
            jtype, axis, mimic = self.one_dof(j, joint, name)
            self.joints.append(
                JointSpec(
                    name,
                    jtype,
                    parent,
                    child,
                    origin,
                    np.reshape(axis, (1, 3)),
                    mimic=mimic,
                    limits=None if mimic else self.limits(joint),
                )
            )
        elif kind in ("JointModelSpherical", "JointModelSphericalZYX"):
            self.joints.append(JointSpec(name, "S", parent, child, origin))
        elif kind == "JointModelUniversal":
            universal = joint.extract()
            axes = np.array([universal.axis1, universal.axis2])
            self.joints.append(JointSpec(name, "U", parent, child, origin, axes))
        elif kind in CHAINS or kind == "JointModelComposite":
            parts = (
                [(None, self.pin.SE3.Identity())] * 3
                if kind in CHAINS
                else list(zip(joint.extract().joints, joint.extract().jointPlacements))
            )
            last = len(parts)
            for k, (part, placement) in enumerate(parts, 1):
                link = child if k == last else f"{child}.{k}"
                if k < last:
                    self.links.append(LinkSpec(link))
                pose = origin @ placement.homogeneous if k == 1 else placement.homogeneous
                if part is None:
                    jtype, axis = CHAINS[kind][k - 1]
                    self.joints.append(JointSpec(f"{name}.{k}", jtype, parent, link, pose, np.array([axis])))
                else:
                    self.joint_specs(j, part, f"{name}.{k}", parent, link, pose)
                parent = link
        elif kind == "JointModelFreeFlyer":
            if parent != self.root:
                self.fail(name, joint, f"hangs from link '{parent}': pga-dyn's floating joint hangs from the world")
            self.joints.append(JointSpec(name, "F", parent, child, origin))
        else:
            self.fail(
                name,
                joint,
                "has no pga-dyn counterpart (pga-dyn takes revolute, prismatic, spherical, "
                "universal, free-flyer, planar, translation and composite joints of these)",
            )

    def floating(self) -> bool:
        """Whether the model is a floating-base robot in pga-dyn's sense (module docstring)."""
        model = self.model
        on_universe = [j for j in range(1, model.njoints) if model.parents[j] == 0]
        return (
            on_universe == [1]
            and model.joints[1].shortname() == "JointModelFreeFlyer"
            and np.allclose(model.jointPlacements[1].homogeneous, np.eye(4), rtol=0, atol=0)
            and not any(f.type == self.pin.FrameType.BODY and f.parentJoint == 0 for f in model.frames)
        )

    def read(self) -> tuple:
        """(links, joints, floating base)."""
        model, floating = self.model, self.floating()
        link = {}
        first = 1 if floating else 0
        for j in range(first, model.njoints):
            link[j], frames = self.body_frames(j)
            if j == 0:
                self.root = link[0]
            inertia = model.inertias[j]
            self.links.append(
                LinkSpec(
                    link[j],
                    Inertial(float(inertia.mass), frozen_array(inertia.lever), frozen_array(inertia.inertia))
                    if j > 0
                    else Inertial.zero(),
                )
            )
            self.fixed_links(link[j], frames)
        for j in range(first + 1, model.njoints):
            self.joint_specs(
                j,
                model.joints[j],
                model.names[j],
                link[model.parents[j]],
                link[j],
                model.jointPlacements[j].homogeneous.copy(),
            )
        return self.links, self.joints, floating


def from_pinocchio(model: pinocchio.Model, name: str | None = None) -> Robot:
    """The pga-dyn :class:`~pga_dyn.model.Robot` of a ``pinocchio.Model`` (from Pinocchio's URDF,
    SDF or MJCF reader, or built by hand): its joints, placements, inertias and gravity (module
    docstring for the joint types; body i's link-frame parameters are Pinocchio's dynamic
    parameters of its joint, ``model.inertias[j].toDynamicParameters()``, and the parameters of
    eq. (97) follow by ``pga_dyn.tp_regressor.link_map``).

    Parameters
    ----------
    model : pinocchio.Model
    name : str, optional
        The robot's name; default ``model.name`` (``pinocchio`` when it is empty).

    Returns
    -------
    Robot
        Bodies numbered depth-first (``robot.body_names``), as pga-dyn numbers any tree; a mimic
        joint is a coupling, its follower passive.
    """
    pin = _pinocchio("robots.from_pinocchio")
    if not isinstance(model, pin.Model):
        raise PgaDynError(f"robots.from_pinocchio takes a pinocchio.Model, got {type(model).__name__}")
    reader = _Reader(pin, model)
    gravity = model.gravity
    if np.any(np.asarray(gravity.angular) != 0.0):
        raise PgaDynError(
            f"{reader.where}: gravity has an angular part {np.asarray(gravity.angular).tolist()}; "
            "pga-dyn's gravity is a vector"
        )
    links, joints, floating = reader.read()
    return Robot(
        name or model.name or "pinocchio", links, joints, gravity=np.array(gravity.linear), floating_base=floating
    )


def _inertia(pin, robot: Robot, i: int, phi_b: np.ndarray):
    """Pinocchio's Inertia of body ``i`` with link-frame parameters ``phi_b`` (10,): its own
    ``Inertia.FromDynamicParameters``; a massless body keeps its rotational inertia (about every
    point the same); a massless body with a first moment m c != 0 has no Inertia."""
    if phi_b[0] != 0.0:
        return pin.Inertia.FromDynamicParameters(np.array(phi_b, dtype=float))
    if np.any(phi_b[1:4] != 0.0):
        raise PgaDynError(
            f"{robot.name}: body '{robot.body_names[i - 1]}' has mass 0 and first moment "
            f"{phi_b[1:4].tolist()}: Pinocchio's inertia (mass, centre of mass, inertia) cannot hold it"
        )
    inertia = pin.Inertia.Zero()
    inertia.inertia = link_inertia(phi_b)
    return inertia


def _joint_model(pin, robot: Robot, i: int):
    kind, axes = robot.joint_type[i], robot.axes[i]
    if kind in ("R", "P"):
        axis = axes[0]
        aligned = [k for k in range(3) if np.array_equal(axis, np.eye(3)[k])]
        if aligned:
            return getattr(pin, ALIGNED[kind, aligned[0]])()
        return (pin.JointModelRevoluteUnaligned if kind == "R" else pin.JointModelPrismaticUnaligned)(axis.copy())
    if kind == "U":
        return pin.JointModelUniversal(axes[0].copy(), axes[1].copy())
    return pin.JointModelSpherical() if kind == "S" else pin.JointModelFreeFlyer()


def to_pinocchio(robot: Robot, phi: npt.ArrayLike | None = None) -> pinocchio.Model:
    """A ``pinocchio.Model`` of the tree ``robot``, with its own inertias or the parameters ``phi``.

    Parameters
    ----------
    robot : Robot
        A tree (no loop joint, no coupling: a ``pinocchio.Model`` is a tree; a PgaDynError names
        them).
    phi : array_like (n, 10) or (10 n,), optional
        Link-frame parameters of the bodies (``robot.body_names`` order; per body [m, mcx, mcy,
        mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], the inertia about the body frame origin:
        :func:`pga_dyn.to_link_parameters`, identified parameters); None: the robot's own.

    Returns
    -------
    pinocchio.Model
        Body i on joint i (module docstring for the joint types), named as pga-dyn names them,
        with the robot's gravity; ``model.inertias[i].toDynamicParameters()`` is phi[i - 1].
    """
    pin = _pinocchio("robots.to_pinocchio")
    robot = check_robot(robot)
    if robot.constrained:
        ties = [f"loop joint '{lp.name}'" for lp in robot.loop_joints] + [
            f"coupling '{c.name}'" for c in robot.couplings
        ]
        raise PgaDynError(
            f"{robot.source or robot.name}: {', '.join(ties)}: a pinocchio.Model is a tree (no loop joint, no coupling)"
        )
    from pga_dyn.tp_regressor import per_body

    if phi is None:
        phi = np.array([pseudo_to_link(robot.inertial(i).pseudo_inertia()) for i in range(1, robot.n + 1)])
    phi = per_body(robot, phi, "phi")
    model = pin.Model()
    model.name = robot.name
    model.gravity.linear = np.array(robot.gravity)
    lower, upper = [], []
    for link in robot.graph.nodes[robot.graph_name(0)]["links"]:
        model.addBodyFrame(link, 0, pin.SE3(robot.link_pose(link).copy()), 0)
    for i in range(1, robot.n + 1):
        joint = model.addJoint(
            int(robot.parent[i]), _joint_model(pin, robot, i), pin.SE3(robot.origin[i].copy()), robot.joint_names[i]
        )
        limits = robot.tree_joints[i - 1].limits
        if limits is not None:
            lower.append((model.joints[joint].idx_q, limits[0]))
            upper.append((model.joints[joint].idx_q, limits[1]))
        model.appendBodyToJoint(joint, _inertia(pin, robot, i, phi[i - 1]), pin.SE3.Identity())
        frame = model.addJointFrame(joint, -1)
        for link in robot.graph.nodes[robot.body_names[i - 1]]["links"]:
            model.addBodyFrame(link, joint, pin.SE3(robot.link_pose(link).copy()), frame)
    model.lowerPositionLimit = _bounds(model.lowerPositionLimit, lower)
    model.upperPositionLimit = _bounds(model.upperPositionLimit, upper)
    return model


def _bounds(vector, values) -> np.ndarray:
    """``vector`` with the entries ``values`` ((index, value) pairs) set."""
    bounds = np.array(vector, dtype=float)
    for k, value in values:
        bounds[k] = value
    return bounds


# -- states and generalized forces, pga-dyn <-> Pinocchio ----------------------------------------


def _joint_ids(pin, robot: Robot, model) -> list:
    """[(tree joint i, Pinocchio joint id)] of ``robot``'s tree joints in ``model``: by name, the
    floating base also as Pinocchio's joint 1 when that is a free flyer (``root_joint`` of
    ``buildModelFromUrdf(path, JointModelFreeFlyer())``); each checked to have the coordinates
    pga-dyn's joint maps to (module docstring of :func:`pinocchio_state`)."""
    if robot.constrained:
        raise PgaDynError(f"{robot.source or robot.name}: a pinocchio.Model is a tree (no loop joint, no coupling)")
    expected = {"R": ((1, 1), (2, 1)), "P": ((1, 1),), "U": ((2, 2),), "S": ((4, 3),), "F": ((7, 6),)}
    names = list(model.names)
    pairs = []
    for i in range(1, robot.n + 1):
        name = robot.joint_names[i]
        if name in names:
            jid = names.index(name)
        elif (
            i == 1
            and robot.floating_base
            and model.njoints > 1
            and model.joints[1].shortname() == "JointModelFreeFlyer"
        ):
            jid = 1
        else:
            raise PgaDynError(f"the Pinocchio model '{model.name}' has no joint '{name}' of {robot.name}")
        joint, kind = model.joints[jid], robot.joint_type[i]
        if (joint.nq, joint.nv) not in expected[kind] or (kind == "S" and joint.shortname() != "JointModelSpherical"):
            raise PgaDynError(
                f"Pinocchio's joint '{model.names[jid]}' ({joint.shortname()}, nq={joint.nq}, nv={joint.nv}) is "
                f"not a counterpart of pga-dyn's {kind} joint '{name}'"
            )
        pairs.append((i, jid))
    if model.nv != robot.nq:
        raise PgaDynError(f"the Pinocchio model has nv={model.nv}, {robot.name} has {robot.nq} coordinates")
    return pairs


def _placed(placement: np.ndarray, x: np.ndarray, inverse: bool) -> np.ndarray:
    """Poses (ns, 7) (p, x y z w) composed with ``placement`` (4, 4): P^-1 X (``inverse``) or P X."""
    from pga_dyn.floating import quaternion_conjugate, quaternion_product
    from pga_dyn.pga import rotation_quaternion

    if np.allclose(placement, np.eye(4), rtol=0, atol=0):
        return x
    R, t = placement[:3, :3], placement[:3, 3]
    quat = rotation_quaternion(R)[[1, 2, 3, 0]]
    if inverse:
        quat = quaternion_conjugate(quat)
        return np.concatenate(
            [(x[:, :3] - t) @ R, quaternion_product(np.broadcast_to(quat, x[:, 3:].shape), x[:, 3:])], 1
        )
    return np.concatenate([x[:, :3] @ R.T + t, quaternion_product(np.broadcast_to(quat, x[:, 3:].shape), x[:, 3:])], 1)


def pinocchio_state(
    robot: Robot,
    model: pinocchio.Model,
    q: npt.ArrayLike,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
) -> tuple:
    """Pinocchio's (q, v, a) of pga-dyn's coordinates ``q``, ``qd``, ``qdd`` of ``robot``.

    Parameters
    ----------
    robot : Robot
        A tree (no loop joint, no coupling).
    model : pinocchio.Model
        ``to_pinocchio(robot)``, or Pinocchio's model of the same file
        (``buildModelFromUrdf(path, JointModelFreeFlyer())`` for a floating robot): its joints are
        found by name (the floating base also as joint 1, a free flyer).
    q, qd, qdd : array_like (robot.nq,) or (ns, robot.nq)
        pga-dyn's coordinates (docs/conventions.md); qd, qdd optional.

    Returns
    -------
    tuple
        (q (model.nq,), v (model.nv,), a (model.nv,)), or (ns, ...) for a batch; v, a None when
        qd, qdd are. R, P, U: the same numbers (a continuous joint that Pinocchio holds unbounded
        takes q = (cos, sin)); S: the quaternion (x, y, z, w) of exp(r^), the velocity the same;
        F: :func:`pga_dyn.floating.local_coordinates` (q the pose relative to the joint's placement).
    """
    pin = _pinocchio("robots.pinocchio_state")
    from pga_dyn.floating import batch, local_coordinates, rotation_vector_quaternions, unbatched

    robot = check_robot(robot)
    single, (q, qd, qdd) = batch(q, qd, qdd)
    ns = len(q)
    qp = np.tile(pin.neutral(model), (ns, 1))
    vp = None if qd is None else np.zeros((ns, model.nv))
    ap = None if qdd is None else np.zeros((ns, model.nv))
    for i, jid in _joint_ids(pin, robot, model):
        joint, sl, kind = model.joints[jid], robot.coordinates(i), robot.joint_type[i]
        iq, iv = slice(joint.idx_q, joint.idx_q + joint.nq), slice(joint.idx_v, joint.idx_v + joint.nv)
        if kind == "F":
            x, v, a = local_coordinates(
                q[:, sl],
                np.zeros((ns, 6)) if qd is None else qd[:, sl],
                None if qdd is None else qdd[:, sl],
                robot.origin[i],
            )
            qp[:, iq] = _placed(model.jointPlacements[jid].homogeneous, x, inverse=True)
            if vp is not None:
                vp[:, iv] = v
            if ap is not None:
                ap[:, iv] = a
            continue
        if kind == "S":
            qp[:, iq] = rotation_vector_quaternions(q[:, sl])
        elif joint.nq == 2 and joint.nv == 1:  # unbounded revolute
            qp[:, iq] = np.concatenate([np.cos(q[:, sl]), np.sin(q[:, sl])], 1)
        else:
            qp[:, iq] = q[:, sl]
        for out, src in ((vp, qd), (ap, qdd)):
            if out is not None:
                out[:, iv] = src[:, sl]
    return unbatched(single, qp, vp, ap)


def from_pinocchio_state(
    robot: Robot,
    model: pinocchio.Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike | None = None,
    a: npt.ArrayLike | None = None,
) -> tuple:
    """The inverse of :func:`pinocchio_state`: pga-dyn's (q, qd, qdd) ((robot.nq,) or (ns, robot.nq);
    qd, qdd None when ``v``, ``a`` are) of Pinocchio's ``q`` (model.nq,), ``v``, ``a`` (model.nv,)
    (or (ns, ...)). Rotations come back as principal rotation vectors and exponential coordinates
    (|omega| <= pi)."""
    pin = _pinocchio("robots.from_pinocchio_state")
    from pga_dyn.floating import batch, from_local_coordinates, quaternion_rotation_vectors, unbatched

    robot = check_robot(robot)
    single, (qp, vp, ap) = batch(q, v, a)
    ns = len(qp)
    q = np.zeros((ns, robot.nq))
    qd = None if vp is None else np.zeros((ns, robot.nq))
    qdd = None if ap is None else np.zeros((ns, robot.nq))
    for i, jid in _joint_ids(pin, robot, model):
        joint, sl, kind = model.joints[jid], robot.coordinates(i), robot.joint_type[i]
        iq, iv = slice(joint.idx_q, joint.idx_q + joint.nq), slice(joint.idx_v, joint.idx_v + joint.nv)
        if kind == "F":
            x = _placed(model.jointPlacements[jid].homogeneous, qp[:, iq], inverse=False)
            xi, twist, acc = from_local_coordinates(
                x, np.zeros((ns, 6)) if vp is None else vp[:, iv], None if ap is None else ap[:, iv], robot.origin[i]
            )
            q[:, sl] = xi
            if qd is not None:
                qd[:, sl] = twist
            if qdd is not None:
                qdd[:, sl] = acc
            continue
        if kind == "S":
            quat = qp[:, iq] / np.linalg.norm(qp[:, iq], axis=1, keepdims=True)
            q[:, sl] = quaternion_rotation_vectors(quat)
        elif joint.nq == 2 and joint.nv == 1:
            q[:, sl] = np.arctan2(qp[:, iq][:, 1:], qp[:, iq][:, :1])
        else:
            q[:, sl] = qp[:, iq]
        for out, src in ((qd, vp), (qdd, ap)):
            if out is not None:
                out[:, sl] = src[:, iv]
    return unbatched(single, q, qd, qdd)


def pinocchio_forces(robot: Robot, model: pinocchio.Model, q: npt.ArrayLike, tau: npt.ArrayLike) -> np.ndarray:
    """Pinocchio's generalized forces (model.nv,) (or (ns, model.nv)) of pga-dyn's ``tau``
    (robot.nq,) (or (ns, robot.nq)) at pga-dyn's coordinates ``q``: the same numbers, but for the
    floating joint's world wrench about the origin (n_o; f), which becomes the trunk's local wrench
    (R^T f; R^T (n_o - p x f)) (:func:`pga_dyn.floating.local_wrench`)."""
    pin = _pinocchio("robots.pinocchio_forces")
    from pga_dyn.floating import batch, local_wrench, unbatched

    robot = check_robot(robot)
    single, (tau, q) = batch(tau, q)
    out = np.zeros((len(tau), model.nv))
    for i, jid in _joint_ids(pin, robot, model):
        joint, sl = model.joints[jid], robot.coordinates(i)
        iv = slice(joint.idx_v, joint.idx_v + joint.nv)
        out[:, iv] = local_wrench(q[:, sl], tau[:, sl], robot.origin[i]) if robot.joint_type[i] == "F" else tau[:, sl]
    return unbatched(single, out)[0]


def from_pinocchio_forces(robot: Robot, model: pinocchio.Model, q: npt.ArrayLike, tau: npt.ArrayLike) -> np.ndarray:
    """The inverse of :func:`pinocchio_forces`: pga-dyn's generalized forces (robot.nq,) (or (ns,
    robot.nq)) of Pinocchio's ``tau`` (model.nv,) (e.g. ``pinocchio.rnea``) at pga-dyn's
    coordinates ``q`` (:func:`pga_dyn.floating.from_local_wrench` for the floating joint)."""
    pin = _pinocchio("robots.from_pinocchio_forces")
    from pga_dyn.floating import batch, from_local_wrench, unbatched

    robot = check_robot(robot)
    single, (tau, q) = batch(tau, q)
    out = np.zeros((len(tau), robot.nq))
    for i, jid in _joint_ids(pin, robot, model):
        joint, sl = model.joints[jid], robot.coordinates(i)
        iv = slice(joint.idx_v, joint.idx_v + joint.nv)
        out[:, sl] = (
            from_local_wrench(q[:, sl], tau[:, iv], robot.origin[i]) if robot.joint_type[i] == "F" else tau[:, iv]
        )
    return unbatched(single, out)[0]
