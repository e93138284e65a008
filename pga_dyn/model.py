"""The robot model: bodies and joints on a networkx graph, and the arrays of the DRNG paper's Table 2.

A robot description (from :mod:`robots`, or built by hand from :class:`LinkSpec`,
:class:`JointSpec` and :class:`LoopSpec`) becomes a :class:`Robot`:

* fixed joints are merged and the inertias of the merged links lumped into the
  moving body they hang from (links fixed to the base are merged into the base);
* bodies are numbered depth-first from the base (base = 0, URDF order among
  siblings); the tree joint that carries body ``i`` has index ``i`` (paper section 5.1);
* a floating base is a tree joint of type ``F`` between the world (body 0) and the
  root link (body 1);
* loop joints (URDF+ ``<loop>``) are kept, with their parent and child bodies.

Joint types are the paper's: ``R`` (revolute, URDF ``revolute``/``continuous``),
``P`` (prismatic), ``U`` (universal: two intersecting axes, the first fixed in the
parent, the second in the child), ``S`` (spherical), ``F`` (floating, 6 DoF).

Coordinates of each joint, in the joint frame (the child link frame at q = 0):

* R, P: the angle or the displacement along ``axis``;
* U: the two angles, ``T = Rot(a1, q1) Rot(a2, q2)``;
* S: the rotation vector ``r`` (``T = exp(r^)``); its velocity coordinates are the
  child's angular velocity relative to the parent, expressed in the child frame;
* F: exponential coordinates ``xi = (omega, v)`` of the base displacement from its
  initial pose in the spatial frame, ``T = exp(xi^) T0`` (paper eq. 102); velocity
  and acceleration coordinates are the spatial twist and its derivative (eqs. 103, 104).

For S and F the velocity coordinates are not the time derivatives of the position
coordinates; everywhere in pga-dyn ``qd`` and ``qdd`` mean the velocity and
acceleration coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from .errors import ModelError

#: Number of coordinates of each joint type.
JOINT_DOF = {"R": 1, "P": 1, "U": 2, "S": 3, "F": 6, "fixed": 0}
#: Integer codes of the joint types in the compiled kernels.
JOINT_CODE = {"R": 0, "P": 1, "U": 2, "S": 3, "F": 4}
#: Suffixes of the coordinate names of multi-DoF joints.
_COORD_SUFFIX = {
    "U": (".1", ".2"),
    "S": (".rx", ".ry", ".rz"),
    "F": (".rx", ".ry", ".rz", ".tx", ".ty", ".tz"),
}
#: Default gravity vector (m/s^2); pga-dyn always takes gravity as a vector.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class Inertial:
    """Mass properties of a link in its own frame: mass, centre of mass, and the
    rotational inertia about the centre of mass (3x3, symmetric)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    @staticmethod
    def zero() -> "Inertial":
        return Inertial(0.0, np.zeros(3), np.zeros((3, 3)))

    def pseudo_inertia(self) -> np.ndarray:
        """The 4x4 pseudo-inertia N = [[Sigma, h], [h^T, m]] in the link frame (paper eq. 44),
        with h = m c and Sigma = int p p^T dm = 1/2 tr(J) 1 - J for J the inertia about the
        link origin."""
        m, c = self.mass, self.com
        j_origin = self.inertia + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        n = np.empty((4, 4))
        n[:3, :3] = 0.5 * np.trace(j_origin) * np.eye(3) - j_origin
        n[:3, 3] = n[3, :3] = m * c
        n[3, 3] = m
        return n


@dataclass(frozen=True)
class LinkSpec:
    """A link of a robot description."""

    name: str
    inertial: Inertial = field(default_factory=Inertial.zero)


@dataclass(frozen=True)
class JointSpec:
    """A tree joint of a robot description.

    ``type`` is one of R, P, U, S, F, fixed. ``origin`` is the 4x4 pose of the joint
    frame (= the child link frame at q = 0) in the parent link frame. ``axes`` holds
    the unit axes in the joint frame: one row for R and P, two for U, none otherwise.
    ``independent`` is the URDF+ attribute (None when absent). ``mimic`` is
    ``(leader joint, multiplier, offset)`` or None. ``limits`` is ``(lower, upper)`` of a
    1-DoF joint (URDF ``<limit>``) or None.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    axes: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    independent: bool | None = None
    mimic: tuple | None = None
    limits: tuple | None = None


@dataclass(frozen=True)
class LoopSpec:
    """A loop joint (URDF+ ``<loop>``): it cuts a closed chain between the frame
    ``predecessor_origin`` on link ``predecessor`` and ``successor_origin`` on link
    ``successor``; both frames coincide when the loop is closed."""

    name: str
    type: str
    predecessor: str
    successor: str
    predecessor_origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    successor_origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    axes: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))


@dataclass(frozen=True)
class CouplingSpec:
    """A URDF+ ``<coupling>`` between two links: ``ratio`` times the sum of the coordinates of the
    joints from the links' nearest common ancestor to ``predecessor`` equals the sum of those
    from the ancestor to ``successor`` (a rotor on the parent of its link turns ``ratio``
    times as fast as the link)."""

    name: str
    type: str
    predecessor: str
    successor: str
    ratio: float


@dataclass(frozen=True)
class LoopJoint:
    """A loop joint between two bodies, oriented so that ``parent < child`` (paper section 5.1).

    ``parent_frame`` and ``child_frame`` are the poses (4x4) of the joint frame in the parent
    and child body frames; the loop is closed when both coincide as the type requires (R: the
    axis lines coincide; P: same orientation, offset along the axis; U: ``axes[0]`` fixed in
    the parent and ``axes[1]`` fixed in the child meet at the origin; S: the origins coincide).
    """

    name: str
    type: str
    parent: int
    child: int
    parent_frame: np.ndarray
    child_frame: np.ndarray
    axes: np.ndarray


@dataclass(frozen=True)
class Coupling:
    """A linear constraint between tree coordinates (URDF ``<mimic>``, URDF+ ``<coupling>``):
    q[follower] = ratio q[leader] + sum(c q[k] for k, c in others) + offset. ``others`` holds
    the other joints on the paths of a URDF+ coupling whose links do not share their parent
    (e.g. an ankle rotor on the hip: q_rotor = r (q_knee + q_ankle)); empty for a mimic."""

    name: str
    follower: int
    leader: int
    ratio: float
    offset: float
    others: tuple = ()

    @property
    def leaders(self) -> tuple:
        """The coordinates the follower depends on, ``leader`` first."""
        return (self.leader, *(k for k, _ in self.others))


@dataclass(frozen=True)
class Table2:
    """The robot attributes of the DRNG paper's Table 2 (0-based body indices; body 0 is the
    fixed base, so ``parent[0]`` is -1 and the per-body arrays have n + 1 rows, row 0 unused).

    Motors are 8-vectors in the paper's order (eq. 24); lines are 6-vectors (d; m) in the
    paper's order e23, e31, e12, e01, e02, e03; ``g`` is the spatial gravity twist
    G = (0, 0, 0, -g) whose linear part is the upward acceleration the base is given
    (paper eq. 70)."""

    n: int
    type: tuple
    parent: np.ndarray
    q0: np.ndarray
    M0: np.ndarray
    L0: np.ndarray
    g: np.ndarray
    nl: int
    ltype: tuple
    lparent: np.ndarray
    lchild: np.ndarray
    Ml: np.ndarray


def _check_finite(values, what: str, where: str) -> None:
    if not np.all(np.isfinite(np.asarray(values, dtype=float))):
        raise ModelError(f"{where}: {what} is not finite")


def _unit(axis, where: str) -> np.ndarray:
    a = np.asarray(axis, dtype=float)
    _check_finite(a, "axis", where)
    scale = np.max(np.abs(a)) if a.size else 0.0
    b = a / scale if scale > 0 else a  # scaled first: no overflow for huge components
    if np.linalg.norm(b) * scale < 1e-12:
        raise ModelError(f"{where}: axis is zero")
    return b / np.linalg.norm(b)


def _rigid(origin, where: str) -> np.ndarray:
    t = np.asarray(origin, dtype=float)
    if t.shape != (4, 4):
        raise ModelError(f"{where}: origin must be a 4x4 homogeneous matrix")
    _check_finite(t, "origin", where)
    if not np.allclose(t[:3, :3] @ t[:3, :3].T, np.eye(3), atol=1e-8) or np.linalg.det(t[:3, :3]) < 0:
        raise ModelError(f"{where}: origin rotation is not a rotation matrix")
    return t


def _lump(inertials) -> Inertial:
    """Sum of link inertials (mass, com, inertia about com), each given with its pose in the body frame."""
    total = np.zeros((4, 4))
    for inertial, pose in inertials:
        total += pose @ inertial.pseudo_inertia() @ pose.T
    m = total[3, 3]
    if m <= 0.0:
        # Massless links may still carry rotational inertia (e.g. Puma560 link 1); it is the
        # same about every point, so keep it with the centre of mass at the body origin.
        sigma = total[:3, :3]
        return Inertial(0.0, np.zeros(3), np.trace(sigma) * np.eye(3) - sigma)
    c = total[:3, 3] / m
    sigma_c = total[:3, :3] - m * np.outer(c, c)
    return Inertial(m, c, np.trace(sigma_c) * np.eye(3) - sigma_c)


class Robot:
    """A rigid multibody system: a spanning tree of bodies and joints, plus loop joints.

    Build it from link and joint specifications (the loaders in :mod:`robots` do) and read:

    * ``graph``: a :class:`networkx.DiGraph` whose nodes are the bodies (by name, with
      attributes ``index``, ``inertial``, ``links``) and whose edges are the tree joints
      (attributes ``name``, ``type``, ``axes``, ``origin``, ``index``);
    * ``body_names`` (parameter order), ``coordinate_names`` (the entries of q),
      ``n`` bodies (the base excluded), ``nq`` coordinates;
    * ``table2()``: the arrays of the DRNG paper's Table 2.
    """

    def __init__(self, name, links, joints, loops=(), couplings=(), gravity=DEFAULT_GRAVITY,
                 floating_base=False, source=None):
        self.name = str(name)
        self.source = source
        where = source or self.name
        try:
            g = np.array(gravity, dtype=float)
        except (TypeError, ValueError):
            g = None
        if g is None or g.shape != (3,):
            raise ModelError(f"{where}: gravity must be a vector of 3 numbers, got {gravity!r}")
        _check_finite(g, "gravity", where)
        self._gravity = g
        self.floating_base = bool(floating_base)
        links = list(links)
        joints = list(joints)
        self._check_links(links, where)
        by_name = {link.name: link for link in links}
        children = self._check_tree(by_name, joints, where)
        root = self._root(by_name, joints, where)
        with np.errstate(over="ignore", invalid="ignore"):  # overflows are checked in _build
            self._build(root, by_name, joints, children, where)
        self.loops = tuple(self._check_loop(loop, where) for loop in loops)
        self.loop_joints = tuple(self._loop_joint(loop, where) for loop in self.loops)
        self.couplings = tuple(self._couplings(joints, couplings, where))
        self._actuation(where)
        # The model is immutable: the kernels' inputs and every cache derived from them (poses
        # at q0, constraints, DRNG arrays) stay valid. Load the robot again to change it.
        for array in (self._gravity, self.parent, self.origin, self.axes, self.q_index, self.actuated, self.passive):
            array.flags.writeable = False

    @property
    def gravity(self) -> np.ndarray:
        """The gravity vector in the world frame (m/s^2), read-only: load the robot with another
        ``gravity`` to change it."""
        return self._gravity

    # -- validation -----------------------------------------------------------------------
    @staticmethod
    def _check_links(links, where):
        seen = set()
        for link in links:
            if link.name in seen:
                raise ModelError(f"{where}: link '{link.name}' is defined twice")
            seen.add(link.name)
            inertial = link.inertial
            what = f"{where}: link '{link.name}' inertial"
            _check_finite([inertial.mass], "mass", what)
            _check_finite(inertial.com, "centre of mass (origin)", what)
            _check_finite(inertial.inertia, "inertia", what)
            if inertial.mass < 0:
                raise ModelError(f"{what}: negative mass {inertial.mass}")
        if not links:
            raise ModelError(f"{where}: the robot has no links")

    @staticmethod
    def _check_tree(by_name, joints, where):
        parent_of = {}
        children = {name: [] for name in by_name}
        seen = set()
        for joint in joints:
            at = f"{where}: joint '{joint.name}'"
            if joint.name in seen:
                raise ModelError(f"{at} is defined twice")
            seen.add(joint.name)
            if joint.type not in JOINT_DOF:
                raise ModelError(f"{at}: unknown joint type '{joint.type}'")
            for role, link in (("parent", joint.parent), ("child", joint.child)):
                if link not in by_name:
                    raise ModelError(f"{at}: {role} link '{link}' is not defined")
            if joint.child in parent_of:
                raise ModelError(
                    f"{at}: link '{joint.child}' already has parent joint '{parent_of[joint.child]}'"
                    " (a link has one parent; close loops with <loop>)")
            if joint.parent == joint.child:
                raise ModelError(f"{at}: parent and child are the same link '{joint.child}'")
            parent_of[joint.child] = joint.name
            children[joint.parent].append(joint)
        return children

    @staticmethod
    def _root(by_name, joints, where):
        graph = nx.DiGraph()
        graph.add_nodes_from(by_name)
        graph.add_edges_from((j.parent, j.child) for j in joints)
        if not nx.is_directed_acyclic_graph(graph):
            cycle = nx.find_cycle(graph)
            raise ModelError(f"{where}: the joints form a cycle through links "
                             f"{[edge[0] for edge in cycle]} (declare one joint of a loop as <loop>)")
        roots = [name for name in by_name if graph.in_degree(name) == 0]
        if len(roots) != 1:
            raise ModelError(f"{where}: the links form {len(roots)} separate trees (roots {roots}); "
                             "a robot has one root link")
        return roots[0]

    def _check_loop(self, loop, where):
        at = f"{where}: loop '{loop.name}'"
        if loop.type not in ("R", "P", "U", "S"):
            raise ModelError(f"{at}: unknown loop joint type '{loop.type}'")
        for role, link in (("predecessor", loop.predecessor), ("successor", loop.successor)):
            if link not in self._link_body:
                raise ModelError(f"{at}: {role} link '{link}' is not defined")
        _rigid(loop.predecessor_origin, at + " predecessor")
        _rigid(loop.successor_origin, at + " successor")
        need = {"R": 1, "P": 1, "U": 2, "S": 0}[loop.type]
        if len(loop.axes) != need:
            raise ModelError(f"{at}: a loop joint of type {loop.type} takes {need} axes, got {len(loop.axes)}")
        for axis in loop.axes:
            _unit(axis, at)
        return loop

    def _loop_joint(self, loop, where) -> LoopJoint:
        """The loop between the bodies carrying its links, oriented parent < child."""
        a, b = self.body_index(loop.predecessor), self.body_index(loop.successor)
        if a == b:
            raise ModelError(f"{where}: loop '{loop.name}' joins links of the same body (body {a})")
        fa = self._link_pose[loop.predecessor] @ loop.predecessor_origin
        fb = self._link_pose[loop.successor] @ loop.successor_origin
        axes = np.array([_unit(axis, where) for axis in loop.axes]).reshape(-1, 3)
        if a > b:  # renumber the ends: the child is the end with the larger index
            a, b, fa, fb, axes = b, a, fb, fa, axes[::-1].copy()
        return LoopJoint(loop.name, loop.type, a, b, fa, fb, axes)

    def _couplings(self, joints, couplings, where):
        """Mimic joints and URDF+ couplings as linear constraints (:class:`Coupling`).

        A ``<mimic>`` joint follows its leader. A URDF+ coupling with ratio r between links p and
        s says r sum(q_P) = sum(q_S), P and S the joints from the links' nearest common ancestor
        down to p and to s (the semantics of generalized_rbda's URDF+ reader,
        ``ClusterTreeModel::explicitRollingConstraint``; a link that is the ancestor stands for
        its own joint, :meth:`_paths_from_common_ancestor`): for a rotor on the parent of its link,
        q_s = r q_p; for an ankle rotor on the hip, q_rotor = r (q_knee + q_ankle). The joint
        that follows is s's, unless it is marked ``independent="true"`` and one joint of P or S
        is marked ``independent="false"``: then that one (a rotor that drives its link)."""
        index = {name: k for k, name in enumerate(self.joint_names) if k > 0}
        flag = {joint.name: joint.independent for joint in joints}

        def coordinate(joint_name, at):
            k = index.get(joint_name)
            if k is None or self.joint_type[k] not in ("R", "P"):
                raise ModelError(f"{at}: joint '{joint_name}' is not a revolute or prismatic tree joint")
            return int(self.q_index[k])

        for joint in joints:
            if joint.mimic is not None and joint.type != "fixed":  # a fixed joint has nothing to follow with
                at = f"{where}: joint '{joint.name}' <mimic>"
                leader, ratio, offset = joint.mimic
                yield Coupling(joint.name, coordinate(joint.name, at), coordinate(leader, at), float(ratio), float(offset))
        for c in couplings:
            at = f"{where}: coupling '{c.name}'"
            for link in (c.predecessor, c.successor):
                if link not in self._link_body:
                    raise ModelError(f"{at}: names unknown link '{link}'")
            if not np.isfinite(c.ratio) or c.ratio == 0.0:
                raise ModelError(f"{at}: the ratio must be a finite nonzero number, got {c.ratio}")
            paths = self._paths_from_common_ancestor(c.predecessor, c.successor, at)
            terms = {}  # coordinate -> coefficient in r sum(q_P) - sum(q_S) = 0
            for weight, path in zip((float(c.ratio), -1.0), paths):
                for i in path:
                    terms[coordinate(self.joint_names[i], at)] = weight
            ends = [coordinate(self.joint_names[path[-1]], at) for path in paths]
            dependent = [k for i in paths[0] + paths[1] if flag.get(self.joint_names[i]) is False
                         for k in [coordinate(self.joint_names[i], at)]]
            follower = ends[1]
            if flag.get(self.joint_names[paths[1][-1]]) is True and dependent:
                if len(dependent) > 1:
                    raise ModelError(f"{at}: joints {[self.coordinate_names[k] for k in dependent]} on its paths are "
                                     "all marked independent=\"false\": a coupling determines one of them")
                follower = dependent[0]
            scale = -1.0 / terms.pop(follower)  # q_f = sum(-(a_k / a_f) q_k)
            leader = ends[0] if follower == ends[1] else ends[1]
            yield Coupling(c.name, follower, leader, scale * terms.pop(leader), 0.0,
                           tuple((k, scale * a) for k, a in sorted(terms.items())))

    def _paths_from_common_ancestor(self, link_a, link_b, at):
        """The tree joints (body indices, top down) from the nearest common ancestor of the bodies
        of two links down to each of them. When one link's body is that ancestor (a slider
        driven by its parent's rotation, a lead screw), its path is its own joint: the common
        ancestor's path would be empty and the coupling would hold the other path still."""
        up = []
        for link in (link_a, link_b):
            body, path = self._body_index[self._link_body[link]], []
            while body > 0:
                path.append(body)
                body = int(self.parent[body])
            up.append(path)
        common = set(up[0]) & set(up[1])
        paths = [[i for i in reversed(path) if i not in common] or path[:1] for path in up]
        if not paths[0] or not paths[1] or paths[0] == paths[1]:
            raise ModelError(f"{at}: its links must be carried by two different joints of the tree")
        return paths

    def _actuation(self, where):
        """Actuated (independent) coordinates: all of a tree, else those of joints marked
        ``independent`` (absent = true), less the followers of couplings. A passive coordinate
        that no coupling determines must be moved by a loop (it lies on the path of one of
        its bodies); the loops decide the rest (:mod:`pga_dyn.loops`)."""
        independent = np.ones(self.nq, dtype=bool)
        followed = {}
        for coupling in self.couplings:
            if coupling.follower in followed:
                raise ModelError(f"{where}: coupling '{coupling.name}': joint "
                                 f"'{self.coordinate_names[coupling.follower]}' already follows "
                                 f"'{followed[coupling.follower]}'")
            followed[coupling.follower] = coupling.name
        chain = nx.DiGraph((k, c.follower) for c in self.couplings for k in c.leaders)
        if not nx.is_directed_acyclic_graph(chain):
            cycle = [self.coordinate_names[edge[0]] for edge in nx.find_cycle(chain)]
            raise ModelError(f"{where}: the couplings form a cycle through joints {cycle}")
        for i in range(1, self.n + 1):
            if self.tree_joints[i - 1].independent is False:
                independent[self.coordinates(i)] = False
        for coupling in self.couplings:
            independent[coupling.follower] = False
        if self.constrained and not independent.any():
            raise ModelError(f"{where}: no independent coordinate: mark the actuated joints independent=\"true\"")
        self.actuated = np.flatnonzero(independent)
        self.passive = np.flatnonzero(~independent)
        self._check_determined(followed, where)

    def _check_determined(self, followed, where):
        """Every passive coordinate is determined: by a coupling, or by a loop whose end bodies it
        moves. A passive joint that nothing moves would leave the model under-determined (and
        its configuration, velocity and acceleration arbitrary)."""
        moved = set()
        for lp in self.loop_joints:
            for body in (lp.parent, lp.child):
                while body > 0:
                    moved.update(range(*self.coordinates(body).indices(self.nq)))
                    body = int(self.parent[body])
        loose = [k for k in self.passive if k not in followed and k not in moved]
        if not loose:
            return
        names = [self.coordinate_names[k] for k in loose]
        ties = [c.name for c in self.couplings if set(c.leaders) & set(loose)]
        tie = (f"; coupling{'s' if len(ties) > 1 else ''} {', '.join(repr(t) for t in ties)} "
               f"make{'' if len(ties) > 1 else 's'} other joints follow {'it' if len(loose) == 1 else 'them'}, "
               "but nothing determines " + ("it" if len(loose) == 1 else "them")) if ties else ""
        what = (f"joint '{names[0]}' is" if len(names) == 1 else
                f"joints {', '.join(repr(n) for n in names)} are")
        it = "it" if len(names) == 1 else "them"
        raise ModelError(f"{where}: {what} marked independent=\"false\" but no loop joint moves {it} and no "
                         f"coupling determines {it}{tie} (mark {it} independent, or add the <loop> or <coupling> "
                         f"that drives {it}; a transmission that no element of the file states, such as a "
                         "differential between two rotors and two joints, is not supported: URDF+ has no "
                         "element for it)")

    # -- construction ---------------------------------------------------------------------
    def _build(self, root, by_name, joints, children, where):
        """Merge fixed joints, number bodies depth-first and fill the graph."""
        # Body of each link and the link's pose in its body frame.
        link_body, link_pose = {root: root}, {root: np.eye(4)}
        stack = [root]
        while stack:
            link = stack.pop()
            for joint in reversed(children[link]):
                at = f"{where}: joint '{joint.name}'"
                origin = _rigid(joint.origin, at)
                if joint.type == "fixed":
                    link_body[joint.child] = link_body[link]
                    link_pose[joint.child] = link_pose[link] @ origin
                else:
                    link_body[joint.child] = joint.child
                    link_pose[joint.child] = np.eye(4)
                stack.append(joint.child)
        order = self._dfs(root, children)
        self._link_body = link_body
        self._link_pose = link_pose

        graph = nx.DiGraph()
        world = "world" if self.floating_base else root
        self._world = world
        bodies = [world]
        graph.add_node(world, index=0, inertial=Inertial.zero(), links=())
        if self.floating_base:
            bodies.append(root)
        moving_joints = []
        if self.floating_base:
            moving_joints.append(JointSpec(f"{root}_floating", "F", world, root))
        parent_joint = {joint.child: joint for joint in joints}
        for link in order[1:]:
            joint = parent_joint[link]
            if joint.type != "fixed":
                moving_joints.append(joint)
                bodies.append(link)
        index = {name: k for k, name in enumerate(bodies)}
        if self.floating_base and "world" in by_name:
            raise ModelError(f"{where}: a floating base cannot be added to a robot that has a link "
                             "named 'world' (it is fixed to the world already)")
        members = {body: [] for body in bodies}
        for link, body in link_body.items():
            members[body].append(link)
        for body in bodies[1:]:
            inertial = _lump((by_name[link].inertial, link_pose[link]) for link in members[body])
            if not all(np.all(np.isfinite(v)) for v in (inertial.mass, inertial.com, inertial.inertia)):
                raise ModelError(f"{where}: the lumped inertial of body '{body}' (links {members[body]}) "
                                 "is not finite: a mass, centre of mass or inertia is too large")
            graph.add_node(body, index=index[body], inertial=inertial, links=tuple(members[body]))
        if not self.floating_base:
            graph.nodes[world]["links"] = tuple(members[world])

        self.parent = np.full(len(bodies), -1, dtype=np.int64)
        self.joint_type = ["base"]
        self.joint_names = [""]
        self.origin = np.zeros((len(bodies), 4, 4))
        self.origin[0] = np.eye(4)
        self.axes = np.zeros((len(bodies), 2, 3))
        self.q_index = np.zeros(len(bodies) + 1, dtype=np.int64)
        coordinate_names = []
        for joint in moving_joints:
            i = index[joint.child]
            at = f"{where}: joint '{joint.name}'"
            parent_body = link_body[joint.parent] if joint.type != "F" else world
            self.parent[i] = index[parent_body]
            pose = link_pose.get(joint.parent, np.eye(4)) if joint.type != "F" else np.eye(4)
            self.origin[i] = pose @ _rigid(joint.origin, at)
            _check_finite(self.origin[i], "origin composed with the fixed joints before it", at)
            need = {"R": 1, "P": 1, "U": 2}.get(joint.type, 0)
            axes = np.asarray(joint.axes, dtype=float).reshape(-1, 3)
            if axes.shape[0] != need:
                raise ModelError(f"{at}: a joint of type {joint.type} takes {need} axes, got {axes.shape[0]}")
            for k in range(need):
                self.axes[i, k] = _unit(axes[k], at)
            if joint.type == "U" and abs(self.axes[i, 0] @ self.axes[i, 1]) > 1 - 1e-9:
                raise ModelError(f"{at}: the two axes of a universal joint are parallel")
            self.joint_type.append(joint.type)
            self.joint_names.append(joint.name)
            dof = JOINT_DOF[joint.type]
            self.q_index[i + 1] = self.q_index[i] + dof
            coordinate_names += [joint.name] if dof == 1 else [joint.name + s for s in _COORD_SUFFIX[joint.type]]
            graph.add_edge(bodies[self.parent[i]], joint.child, name=joint.name, type=joint.type,
                           axes=self.axes[i, :need].copy(), origin=self.origin[i].copy(), index=i,
                           independent=joint.independent, mimic=joint.mimic)
        self.joint_type = tuple(self.joint_type)
        self.joint_names = tuple(self.joint_names)
        self.tree_joints = tuple(moving_joints)
        self.graph = graph
        self.body_names = tuple(bodies[1:])
        self.coordinate_names = tuple(coordinate_names)
        self._body_index = index

    @staticmethod
    def _dfs(root, children):
        order, stack = [], [root]
        while stack:
            link = stack.pop()
            order.append(link)
            stack.extend(j.child for j in reversed(children[link]))
        return order

    # -- queries --------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of moving bodies (the fixed base is body 0 and is not counted)."""
        return len(self.body_names)

    @property
    def nq(self) -> int:
        """Number of tree coordinates."""
        return int(self.q_index[self.n + 1])

    @property
    def constrained(self) -> bool:
        """True when loop joints or couplings tie the tree coordinates together."""
        return bool(self.loop_joints or self.couplings)

    @property
    def actuated_names(self) -> tuple:
        """Names of the actuated (independent) coordinates q_a, in order."""
        return tuple(self.coordinate_names[k] for k in self.actuated)

    @property
    def num_parameters(self) -> int:
        return 10 * self.n

    def body_index(self, link: str) -> int:
        """Index of the body that carries URDF link ``link`` (0 for links fixed to the base)."""
        try:
            return self._body_index[self._link_body[link]] if not (
                self.floating_base and link == "world") else 0
        except KeyError:
            raise ModelError(f"{self.source or self.name}: no link named '{link}'") from None

    def link_pose(self, link: str) -> np.ndarray:
        """Pose (4x4) of URDF link ``link`` in the frame of the body that carries it."""
        return self._link_pose[link]

    def inertial(self, i: int) -> Inertial:
        """Lumped inertial of body ``i`` (1..n) in its body frame (the frame of its tree joint)."""
        return self.graph.nodes[self.body_names[i - 1]]["inertial"]

    def coordinates(self, i: int) -> slice:
        """Slice of the coordinates of tree joint ``i`` in q."""
        return slice(int(self.q_index[i]), int(self.q_index[i + 1]))

    @property
    def q0(self) -> np.ndarray:
        """Initial configuration (paper Table 2): all tree coordinates zero."""
        return np.zeros(self.nq)

    def __repr__(self) -> str:
        return (f"Robot({self.name!r}, bodies={self.n}, coordinates={self.nq}, "
                f"loops={len(self.loops)}, floating_base={self.floating_base})")


def check_robot(robot) -> Robot:
    """``robot`` if it is a Robot, else a PgaDynError that says how to get one."""
    if not isinstance(robot, Robot):
        raise ModelError(f"expected a pga_dyn Robot (robots.load or robots.load_urdf), got {type(robot).__name__}")
    return robot
