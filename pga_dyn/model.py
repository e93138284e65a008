"""The robot model: bodies and joints on a networkx graph, frozen once built.

A robot description (from :mod:`robots`, or built by hand from :class:`LinkSpec`,
:class:`JointSpec`, :class:`LoopSpec` and :class:`CouplingSpec`) becomes a :class:`Robot`:

* the links and joints of the file form a directed tree (networkx), checked for cycles and a
  single root;
* a depth-first traversal of that tree (``networkx.dfs_edges``, siblings in file order) numbers
  the bodies from the base (base = 0) and merges every link on a fixed joint into the moving body
  it hangs from, its inertia lumped (links fixed to the base are merged into the base); the tree
  joint that carries body ``i`` has index ``i`` (DRNG paper section 5.1);
* a floating base is a tree joint of type ``F`` between the world (body 0) and the root link
  (body 1);
* loop joints (URDF+ ``<loop>``) are kept, on the bodies that carry their links, with the
  smaller index first.

:attr:`Robot.graph` is that model: a :class:`networkx.MultiDiGraph` whose nodes are the bodies
and whose edges are the tree joints (parent -> child) and the loop joints (parent -> child), each
edge keyed by its joint's name. The arrays the kernels take (``parent``, ``origin``, ``axes``,
``q_index``) are filled edge by edge in the same traversal that builds it. Loop clusters (the
bodies that loops tie together) are the connected components of the loops' cycles.

A Robot is **frozen**: setting an attribute raises, arrays are read-only, the graph and its
attribute dicts refuse changes, and every record it holds is a frozen dataclass. Everything
computed from it (kernel arrays, poses at q0, constraints, DRNG arrays, the link-parameter map)
is cached by :meth:`Robot.derived`, keyed by the function that computes it: a derived value
cannot go stale. Load the robot again to change it.

Joint types and their coordinates are the conventions of :mod:`pga_dyn.conventions`; in the
joint frame (the child link frame at q = 0):

* R, P: the angle or the displacement along ``axis``;
* U: the two angles, ``T = Rot(a1, q1) Rot(a2, q2)``;
* S: the rotation vector ``r`` (``T = exp(r^)``); its velocity coordinates are the child's
  angular velocity relative to the parent, expressed in the child frame;
* F: exponential coordinates ``xi = (omega, v)`` of the base displacement from its initial pose
  in the spatial frame, ``T = exp(xi^) T0`` (paper eq. 102); velocity and acceleration
  coordinates are the spatial twist and its derivative (eqs. 103, 104).

For S and F the velocity coordinates are not the time derivatives of the position coordinates;
everywhere in pga-dyn ``qd`` and ``qdd`` mean the velocity and acceleration coordinates.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from .conventions import (
    DEFAULT_GRAVITY,
    JOINT_AXES,
    JOINT_DOF,
    LOOP_JOINT_TYPES,
    coordinate_names,
    inertia_of_pseudo,
    pseudo_inertia,
)
from .errors import ModelError, PgaDynError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    import numpy.typing as npt
    import pandas
    from _typeshed import DataclassInstance

    _T = TypeVar("_T")
    _Record = TypeVar("_Record", bound=DataclassInstance)


def frozen_array(value: npt.ArrayLike, dtype: npt.DTypeLike = float) -> np.ndarray:
    """A read-only copy of ``value`` as an array (the caller's array is left writeable)."""
    array = np.array(value, dtype=dtype)
    array.flags.writeable = False
    return array


#: Largest magnitude of a number of a model (SI units; directions excepted): larger values
#: overflow the kinematics and the regressor (squares and products of lengths, masses, ratios,
#: gravity and sampled positions). The readers refuse them in files, the model in gravity.
MAX_VALUE = 1e9


@dataclass(frozen=True)
class Inertial:
    """Mass properties of a link in its own frame: ``mass``, centre of mass ``com`` (3,) and the
    rotational inertia ``inertia`` (3, 3, symmetric) about the centre of mass."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    @staticmethod
    def zero() -> Inertial:
        """No mass: m = 0, c = 0, I = 0 (a massless link)."""
        return Inertial(0.0, frozen_array(np.zeros(3)), frozen_array(np.zeros((3, 3))))

    def pseudo_inertia(self) -> np.ndarray:
        """The pseudo-inertia N (4, 4) in the link frame (eq. 44, :func:`pga_dyn.conventions.pseudo_inertia`)."""
        return pseudo_inertia(self.mass, self.com, self.inertia)


@dataclass(frozen=True)
class LinkSpec:
    """A link of a robot description."""

    name: str
    inertial: Inertial = field(default_factory=Inertial.zero)


@dataclass(frozen=True)
class JointSpec:
    """A tree joint of a robot description.

    ``type`` is one of R, P, U, S, F, fixed. ``origin`` is the pose (4, 4) of the joint frame
    (= the child link frame at q = 0) in the parent link frame. ``axes`` (k, 3) holds the unit
    axes in the joint frame: one row for R and P, two for U, none otherwise. ``independent`` is
    the URDF+ attribute (None when absent). ``mimic`` is ``(leader joint, multiplier, offset)``
    (q = multiplier q_leader + offset), ``(leader joint, multiplier, offset, others)`` with
    ``others`` ((joint, weight), ...) adding weight q_joint each (MJCF's fixed-tendon equalities),
    or None. ``limits`` is ``(lower, upper)`` of a 1-DoF joint (URDF ``<limit>``) or None; a side
    may be -inf / +inf (unbounded: Gazebo's -1e16 / 1e16 in a URDF). ``velocity`` and ``effort``
    are the largest speed (rad/s or m/s) and force (N m or N) of a 1-DoF joint (URDF ``<limit
    velocity effort>``), None when the file does not give them (or gives 0).
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
    velocity: float | None = None
    effort: float | None = None


@dataclass(frozen=True)
class LoopSpec:
    """A loop joint (URDF+ ``<loop>``): it cuts a closed chain between the frame
    ``predecessor_origin`` (4, 4) on link ``predecessor`` and ``successor_origin`` (4, 4) on link
    ``successor``; both frames coincide when the loop is closed. ``axes`` (k, 3) as for a
    :class:`JointSpec`."""

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

    ``parent_frame`` and ``child_frame`` (4, 4) are the poses of the joint frame in the parent
    and child body frames; the loop is closed when both coincide as the type requires (R: the
    axis lines coincide; P: same orientation, offset along the axis; U: ``axes[0]`` fixed in the
    parent and ``axes[1]`` fixed in the child meet at the origin; S: the origins coincide).
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


def _read_only(value) -> None:
    """Make ``value``, an array or a tuple of them (nested), read-only; other values are left alone."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, tuple):
        for item in value:
            _read_only(item)


def lump(inertials: Iterable[tuple[Inertial, np.ndarray]]) -> Inertial:
    """The Inertial of rigidly joined links: the sum of their pseudo-inertias (eq. 44), each
    ``(inertial, pose)`` with ``pose`` (4, 4) the link frame in the body frame."""
    total = np.zeros((4, 4))
    for inertial, pose in inertials:
        total += pose @ inertial.pseudo_inertia() @ pose.T
    mass, com, inertia = inertia_of_pseudo(total)
    return Inertial(mass, frozen_array(com), frozen_array(inertia))


def frozen_spec(spec: _Record) -> _Record:
    """A copy of a description record (LinkSpec, JointSpec, LoopSpec, CouplingSpec, Inertial) whose
    arrays, and those of the records it holds, are read-only copies."""

    def frozen(value):
        if isinstance(value, (np.ndarray, list)):
            return frozen_array(value, np.asarray(value).dtype)
        return frozen_spec(value) if dataclasses.is_dataclass(value) else value

    return dataclasses.replace(spec, **{f.name: frozen(getattr(spec, f.name)) for f in dataclasses.fields(spec)})


@dataclass(frozen=True)
class Description:
    """What a :class:`Robot` is built from: the arguments of ``Robot(...)``, the records as given
    (before fixed joints are merged and loops oriented), frozen (:attr:`Robot.description`).

    ``build()`` makes the Robot; a variant is ``dataclasses.replace(description, joints=...)``
    then ``build()`` (records are frozen dataclasses: ``dataclasses.replace`` them too), or
    :func:`pga_dyn.variants.move_joints`. A description pickles in a few kilobytes: send it to
    the workers of a sweep and build there (:func:`drng.nullspaces`)."""

    name: str
    links: tuple
    joints: tuple
    loops: tuple = ()
    couplings: tuple = ()
    gravity: np.ndarray | tuple[float, float, float] = DEFAULT_GRAVITY
    floating_base: bool = False
    source: str | None = None

    def build(self) -> Robot:
        """The Robot of this description (validated as any robot is: a ModelError if it is not one)."""
        return Robot(
            self.name,
            self.links,
            self.joints,
            self.loops,
            self.couplings,
            self.gravity,
            self.floating_base,
            self.source,
        )


class ModelGraph(nx.MultiDiGraph):
    """The graph of a :class:`Robot`: a networkx MultiDiGraph whose node, edge and graph attribute
    dicts refuse every change once :meth:`freeze` has run (networkx's own ``nx.freeze`` only stops
    adding and removing nodes and edges)."""

    class Attributes(dict):
        """An attribute dict of a frozen ModelGraph: read-only once locked."""

        locked = False

        def _check(self):
            if self.locked:
                raise TypeError("the graph of a Robot is frozen: load the robot again to change it")

        def __setitem__(self, key, value):
            self._check()
            super().__setitem__(key, value)

        def __delitem__(self, key):
            self._check()
            super().__delitem__(key)

        def __ior__(self, other):
            self._check()
            return super().__ior__(other)

        def update(self, *args: Any, **kwargs: Any) -> None:
            """``dict.update``; a TypeError once the graph is locked."""
            self._check()
            super().update(*args, **kwargs)

        def setdefault(self, key: Any, default: Any = None) -> Any:
            """``dict.setdefault``; a TypeError once the graph is locked."""
            self._check()
            return super().setdefault(key, default)

        def pop(self, *args: Any) -> Any:
            """``dict.pop``; a TypeError once the graph is locked."""
            self._check()
            return super().pop(*args)

        def popitem(self) -> tuple[Any, Any]:
            """``dict.popitem``; a TypeError once the graph is locked."""
            self._check()
            return super().popitem()

        def clear(self) -> None:
            """``dict.clear``; a TypeError once the graph is locked."""
            self._check()
            super().clear()

    node_attr_dict_factory = Attributes
    edge_attr_dict_factory = Attributes
    graph_attr_dict_factory = Attributes

    def freeze(self) -> ModelGraph:
        """Freeze the structure (``networkx.freeze``) and lock every attribute dict."""
        for data in (
            self.graph,
            *(d for _, d in self.nodes(data=True)),
            *(d for *_, d in self.edges(keys=True, data=True)),
        ):
            data.locked = True
        return nx.freeze(self)


class Robot:
    """A rigid multibody system: a spanning tree of bodies and joints, plus loop joints and
    couplings. Frozen once built (see the module docstring).

    Attributes
    ----------
    name, source : str
        The robot's name and the file it was read from (None when built by hand).
    graph : ModelGraph
        The model: bodies as nodes (by name; attributes ``index``, ``inertial``, ``links``),
        tree joints and loop joints as edges keyed by joint name (attributes ``kind`` ("tree" or
        "loop"), ``name``, ``type``, ``index``, ``axes``, and ``origin``, ``independent``,
        ``mimic`` for tree joints, ``parent_frame``, ``child_frame`` for loop joints).
    n, nq : int
        Number of moving bodies (the base excluded) and of tree coordinates.
    body_names : tuple of str (n,)
        The bodies 1..n, in parameter order.
    coordinate_names : tuple of str (nq,)
        The entries of q.
    parent : ndarray (n + 1,)
        Parent body of each body (-1 for the base).
    joint_type, joint_names : tuple of str (n + 1,)
        Type and name of the tree joint of each body ("base" and "" for body 0).
    origin : ndarray (n + 1, 4, 4)
        Pose of each tree joint frame in its parent body frame.
    axes : ndarray (n + 1, 2, 3)
        Unit axes of each tree joint in its frame (zero rows where the type has none).
    q_index : ndarray (n + 2,)
        Coordinates of body i are ``q[q_index[i]:q_index[i + 1]]``.
    tree_joints : tuple of JointSpec (n,)
        The moving tree joints as given (origin and axes validated and frozen).
    loop_specs : tuple of LoopSpec
        The loop joints as given in the file (links and frames on them).
    loop_joints : tuple of LoopJoint
        The loop joints on the bodies that carry their links, parent < child.
    couplings : tuple of Coupling
        Mimics and couplings as q[follower] = ratio q[leader] + offset.
    actuated, passive : ndarray
        Indices of the actuated (independent) and passive coordinates in q.
    gravity : ndarray (3,)
        The gravity vector in the world frame (m/s^2).
    floating_base : bool
        Whether body 1 is carried by a floating (F) joint.
    description : Description
        What the robot was built from (its links, joints, loops and couplings as given, frozen):
        ``description.build()`` builds it again, ``dataclasses.replace`` on it builds a variant
        (:mod:`pga_dyn.variants`).
    """

    def __init__(
        self,
        name: str,
        links: Iterable[LinkSpec],
        joints: Iterable[JointSpec],
        loops: Iterable[LoopSpec] = (),
        couplings: Iterable[CouplingSpec] = (),
        gravity: npt.ArrayLike = DEFAULT_GRAVITY,
        floating_base: bool = False,
        source: str | None = None,
    ) -> None:
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
        if np.any(np.abs(g) > MAX_VALUE):
            raise ModelError(
                f"{where}: gravity {g.tolist()} is out of range: at most {MAX_VALUE:g} m/s^2 per component"
            )
        self.gravity = frozen_array(g)
        self.floating_base = bool(floating_base)
        links, joints, loops, couplings = list(links), list(joints), list(loops), list(couplings)
        self._check_links(links, where)
        by_name = {link.name: link for link in links}
        tree = self._link_tree(by_name, joints, where)
        with np.errstate(over="ignore", invalid="ignore"):  # overflows are checked in _build
            self._build(tree, by_name, where)
        self.loop_specs = tuple(self._check_loop(loop, where) for loop in loops)
        self.loop_joints = tuple(self._loop_joint(loop, where) for loop in self.loop_specs)
        for index, lp in enumerate(self.loop_joints):
            self.graph.add_edge(
                self.graph_name(lp.parent),
                self.graph_name(lp.child),
                key=lp.name,
                kind="loop",
                name=lp.name,
                type=lp.type,
                index=index,
                axes=lp.axes,
                parent_frame=lp.parent_frame,
                child_frame=lp.child_frame,
            )
        self.couplings = tuple(self._couplings(tree, couplings, where))
        self._actuation(where)
        self.graph = self.graph.freeze()
        self.description = Description(
            self.name,
            *(tuple(frozen_spec(spec) for spec in specs) for specs in (links, joints, loops, couplings)),
            self.gravity,
            self.floating_base,
            source,
        )
        self._derived = {}
        self._frozen = True

    # -- frozen ---------------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(
                f"a Robot is frozen: '{name}' cannot be set; load the robot again "
                "(e.g. robots.load(name, gravity=...)) to change it"
            )
        super().__setattr__(name, value)

    def __delattr__(self, name):
        raise AttributeError(f"a Robot is frozen: '{name}' cannot be deleted")

    def derived(self, build: Callable[[Robot], _T], value: _T | None = None) -> _T:
        """``build(self)``, computed on the first call and kept: the one cache of everything
        derived from the model (kernel arrays, poses at q0, constraints, DRNG arrays, the
        link-parameter map), keyed by the function that computes it. The robot is frozen, so a
        derived value cannot go stale; its arrays (the value, in tuples, or attributes of the
        object returned) are made read-only, so no caller can change it either. ``value``, on a
        first call: kept instead of ``build(self)`` (a choice the model leaves open, such as the
        assembly branch of :func:`pga_dyn.loops.on_branch`)."""
        try:
            return self._derived[build]
        except KeyError:
            value = build(self) if value is None else value
            _read_only(value)
            for attribute in getattr(value, "__dict__", {}).values():
                _read_only(attribute)
            self._derived[build] = value
            return value

    # -- validation -----------------------------------------------------------------------------
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
    def _link_tree(by_name, joints, where) -> nx.DiGraph:
        """The links (nodes) and joints (edges parent -> child, attribute ``joint``, in file
        order) of the description, checked to form one tree; its root is ``graph['root']``."""
        tree = nx.DiGraph()
        tree.add_nodes_from(by_name)
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
            if tree.in_degree(joint.child):
                ((_, _, other),) = tree.in_edges(joint.child, data="joint")
                raise ModelError(
                    f"{at}: link '{joint.child}' already has parent joint '{other.name}'"
                    " (a link has one parent; close loops with <loop>)"
                )
            if joint.parent == joint.child:
                raise ModelError(f"{at}: parent and child are the same link '{joint.child}'")
            tree.add_edge(joint.parent, joint.child, joint=joint)
        if not nx.is_directed_acyclic_graph(tree):
            cycle = nx.find_cycle(tree)
            raise ModelError(
                f"{where}: the joints form a cycle through links "
                f"{[edge[0] for edge in cycle]} (declare one joint of a loop as <loop>)"
            )
        roots = [name for name in by_name if tree.in_degree(name) == 0]
        if len(roots) != 1:
            raise ModelError(
                f"{where}: the links form {len(roots)} separate trees (roots {roots}); a robot has one root link"
            )
        tree.graph["root"] = roots[0]
        return tree

    def _check_loop(self, loop, where) -> LoopSpec:
        at = f"{where}: loop '{loop.name}'"
        if loop.type not in LOOP_JOINT_TYPES:
            raise ModelError(f"{at}: unknown loop joint type '{loop.type}'")
        for role, link in (("predecessor", loop.predecessor), ("successor", loop.successor)):
            if link not in self._link_body:
                raise ModelError(f"{at}: {role} link '{link}' is not defined")
        origins = [
            _rigid(loop.predecessor_origin, at + " predecessor"),
            _rigid(loop.successor_origin, at + " successor"),
        ]
        need = JOINT_AXES[loop.type]
        if len(loop.axes) != need:
            raise ModelError(f"{at}: a loop joint of type {loop.type} takes {need} axes, got {len(loop.axes)}")
        for axis in loop.axes:
            _unit(axis, at)
        return dataclasses.replace(
            loop,
            predecessor_origin=frozen_array(origins[0]),
            successor_origin=frozen_array(origins[1]),
            axes=frozen_array(np.asarray(loop.axes, dtype=float).reshape(-1, 3)),
        )

    def _loop_joint(self, loop, where) -> LoopJoint:
        """The loop between the bodies carrying its links, oriented parent < child."""
        a, b = self.body_index(loop.predecessor), self.body_index(loop.successor)
        if a == b:
            raise ModelError(f"{where}: loop '{loop.name}' joins links of the same body (body {a})")
        fa = self._link_pose[loop.predecessor] @ loop.predecessor_origin
        fb = self._link_pose[loop.successor] @ loop.successor_origin
        axes = np.array([_unit(axis, where) for axis in loop.axes]).reshape(-1, 3)
        if a > b:  # renumber the ends: the child is the end with the larger index
            a, b, fa, fb, axes = b, a, fb, fa, axes[::-1]
        return LoopJoint(loop.name, loop.type, a, b, frozen_array(fa), frozen_array(fb), frozen_array(axes))

    def _couplings(self, tree, couplings, where):
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
        joints = [joint for _, _, joint in tree.edges(data="joint")]
        flag = {joint.name: joint.independent for joint in joints}

        def coordinate(joint_name, at):
            k = index.get(joint_name)
            if k is None or self.joint_type[k] not in ("R", "P"):
                raise ModelError(f"{at}: joint '{joint_name}' is not a revolute or prismatic tree joint")
            return int(self.q_index[k])

        for joint in joints:
            if joint.mimic is not None and joint.type != "fixed":  # a fixed joint has nothing to follow with
                at = f"{where}: joint '{joint.name}' <mimic>"
                leader, ratio, offset, *rest = joint.mimic
                others = tuple((coordinate(name, at), float(weight)) for name, weight in (rest[0] if rest else ()))
                yield Coupling(
                    joint.name,
                    coordinate(joint.name, at),
                    coordinate(leader, at),
                    float(ratio),
                    float(offset),
                    others,
                )
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
            dependent = [
                k
                for i in paths[0] + paths[1]
                if flag.get(self.joint_names[i]) is False
                for k in [coordinate(self.joint_names[i], at)]
            ]
            follower = ends[1]
            if flag.get(self.joint_names[paths[1][-1]]) is True and dependent:
                if len(dependent) > 1:
                    raise ModelError(
                        f"{at}: joints {[self.coordinate_names[k] for k in dependent]} on its paths are "
                        'all marked independent="false": a coupling determines one of them'
                    )
                follower = dependent[0]
            scale = -1.0 / terms.pop(follower)  # q_f = sum(-(a_k / a_f) q_k)
            leader = ends[0] if follower == ends[1] else ends[1]
            yield Coupling(
                c.name,
                follower,
                leader,
                scale * terms.pop(leader),
                0.0,
                tuple((k, scale * a) for k, a in sorted(terms.items())),
            )

    def _paths_from_common_ancestor(self, link_a, link_b, at):
        """The tree joints (body indices, top down) from the nearest common ancestor of the bodies
        of two links down to each of them. When one link's body is that ancestor (a slider
        driven by its parent's rotation, a lead screw), its path is its own joint: the common
        ancestor's path would be empty and the coupling would hold the other path still."""
        up = [list(self.support(self._body_index[self._link_body[link]])) for link in (link_a, link_b)]
        common = set(up[0]) & set(up[1])
        paths = [[i for i in reversed(path) if i not in common] or path[:1] for path in up]
        if not paths[0] or not paths[1] or paths[0] == paths[1]:
            raise ModelError(f"{at}: its links must be carried by two different joints of the tree")
        return paths

    def _actuation(self, where):
        """Actuated (independent) coordinates: all of a tree, else those of joints marked
        ``independent`` (absent = true), less the followers of couplings. A passive coordinate
        that no coupling determines must be moved by a loop (its joint lies in a loop cluster);
        the loops decide the rest (:mod:`pga_dyn.loops`)."""
        independent = np.ones(self.nq, dtype=bool)
        followed = {}
        for coupling in self.couplings:
            if coupling.follower in followed:
                raise ModelError(
                    f"{where}: coupling '{coupling.name}': joint "
                    f"'{self.coordinate_names[coupling.follower]}' already follows "
                    f"'{followed[coupling.follower]}'"
                )
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
            raise ModelError(f'{where}: no independent coordinate: mark the actuated joints independent="true"')
        self.actuated = frozen_array(np.flatnonzero(independent), np.int64)
        self.passive = frozen_array(np.flatnonzero(~independent), np.int64)
        self._check_determined(followed, where)

    def _check_determined(self, followed, where):
        """Every passive coordinate is determined: by a coupling, or by a loop that it moves, i.e.
        one whose cycle (a loop cluster) holds its joint: a joint below the branching of a loop's
        two ends moves one end relative to the other. A passive joint that nothing moves would leave the model under-determined (and
        its configuration, velocity and acceleration arbitrary)."""
        moved = {
            k
            for cluster in self.loop_clusters
            for body in cluster
            for k in range(*self.coordinates(body).indices(self.nq))
        }
        loose = [k for k in self.passive if k not in followed and k not in moved]
        if not loose:
            return
        names = [self.coordinate_names[k] for k in loose]
        ties = [c.name for c in self.couplings if set(c.leaders) & set(loose)]
        tie = (
            (
                f"; coupling{'s' if len(ties) > 1 else ''} {', '.join(repr(t) for t in ties)} "
                f"make{'' if len(ties) > 1 else 's'} other joints follow {'it' if len(loose) == 1 else 'them'}, "
                "but nothing determines " + ("it" if len(loose) == 1 else "them")
            )
            if ties
            else ""
        )
        what = f"joint '{names[0]}' is" if len(names) == 1 else f"joints {', '.join(repr(n) for n in names)} are"
        it = "it" if len(names) == 1 else "them"
        raise ModelError(
            f'{where}: {what} marked independent="false" but no loop joint moves {it} and no '
            f"coupling determines {it}{tie} (mark {it} independent, or add the <loop> or <coupling> "
            f"that drives {it}; a transmission that no element of the file states, such as a "
            "differential between two rotors and two joints, is not supported: URDF+ has no "
            "element for it)"
        )

    # -- construction ---------------------------------------------------------------------------
    def _build(self, tree, by_name, where):
        """Number the bodies depth-first from the root, merge the links on fixed joints into their
        bodies, and fill the graph and the arrays of the tree joints."""
        root = tree.graph["root"]
        if self.floating_base and "world" in by_name:
            raise ModelError(
                f"{where}: a floating base cannot be added to a robot that has a link "
                "named 'world' (it is fixed to the world already)"
            )
        world = "world" if self.floating_base else root
        link_body, link_pose = {root: root}, {root: np.eye(4)}
        moving = [JointSpec(f"{root}_floating", "F", world, root)] if self.floating_base else []
        for parent_link, link in nx.dfs_edges(tree, root):  # preorder, siblings in file order
            joint = tree.edges[parent_link, link]["joint"]
            origin = _rigid(joint.origin, f"{where}: joint '{joint.name}'")
            if joint.type == "fixed":
                link_body[link] = link_body[parent_link]
                link_pose[link] = link_pose[parent_link] @ origin
            else:
                link_body[link] = link
                link_pose[link] = np.eye(4)
                moving.append(joint)
        bodies = [world] + [joint.child for joint in moving]
        index = {body: k for k, body in enumerate(bodies)}
        members = {body: [] for body in bodies}
        for link, body in link_body.items():
            members[body].append(link)

        graph = ModelGraph()
        graph.add_node(world, index=0, inertial=Inertial.zero(), links=tuple(members[world]))
        for body in bodies[1:]:
            inertial = lump((by_name[link].inertial, link_pose[link]) for link in members[body])
            if not all(np.all(np.isfinite(v)) for v in (inertial.mass, inertial.com, inertial.inertia)):
                raise ModelError(
                    f"{where}: the lumped inertial of body '{body}' (links {members[body]}) "
                    "is not finite: a mass, centre of mass or inertia is too large"
                )
            graph.add_node(body, index=index[body], inertial=inertial, links=tuple(members[body]))

        nb = len(bodies)
        parent, origin = np.full(nb, -1, dtype=np.int64), np.zeros((nb, 4, 4))
        axes, q_index = np.zeros((nb, 2, 3)), np.zeros(nb + 1, dtype=np.int64)
        origin[0] = np.eye(4)
        tree_joints, names = [], []
        for i, joint in enumerate(moving, 1):
            at = f"{where}: joint '{joint.name}'"
            parent_link = joint.parent if joint.type != "F" else world
            parent[i] = index[link_body.get(parent_link, world)]
            origin[i] = link_pose.get(parent_link, np.eye(4)) @ _rigid(joint.origin, at)
            _check_finite(origin[i], "origin composed with the fixed joints before it", at)
            need = JOINT_AXES[joint.type]
            given = np.asarray(joint.axes, dtype=float).reshape(-1, 3)
            if given.shape[0] != need:
                raise ModelError(f"{at}: a joint of type {joint.type} takes {need} axes, got {given.shape[0]}")
            for k in range(need):
                axes[i, k] = _unit(given[k], at)
            if joint.type == "U" and abs(axes[i, 0] @ axes[i, 1]) > 1 - 1e-9:
                raise ModelError(f"{at}: the two axes of a universal joint are parallel")
            q_index[i + 1] = q_index[i] + JOINT_DOF[joint.type]
            names += coordinate_names(joint.name, joint.type)
            joint = dataclasses.replace(joint, origin=frozen_array(_rigid(joint.origin, at)), axes=frozen_array(given))
            tree_joints.append(joint)
            graph.add_edge(
                bodies[parent[i]],
                joint.child,
                key=joint.name,
                kind="tree",
                name=joint.name,
                type=joint.type,
                index=i,
                axes=frozen_array(axes[i, :need]),
                origin=frozen_array(origin[i]),
                independent=joint.independent,
                mimic=joint.mimic,
            )
        self.parent, self.origin = frozen_array(parent, np.int64), frozen_array(origin)
        self.axes, self.q_index = frozen_array(axes), frozen_array(q_index, np.int64)
        self.joint_type = ("base", *(joint.type for joint in moving))
        self.joint_names = ("", *(joint.name for joint in moving))
        self.tree_joints = tuple(tree_joints)
        self.body_names = tuple(bodies[1:])
        self.coordinate_names = tuple(names)
        self.graph = graph
        self._link_body = link_body
        self._link_pose = {link: frozen_array(pose) for link, pose in link_pose.items()}
        self._body_index = index
        self._node_names = tuple(bodies)

    # -- queries --------------------------------------------------------------------------------
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
        """Number of inertial parameters, 10 per moving body."""
        return 10 * self.n

    @property
    def q0(self) -> np.ndarray:
        """Initial configuration (paper Table 2): all tree coordinates zero, shape (nq,)."""
        return np.zeros(self.nq)

    def graph_name(self, i: int) -> str:
        """The graph node of body ``i`` (0..n): ``body_names[i - 1]``, and for the base the world
        (floating base) or the root link."""
        return self._node_names[i]

    def body_index(self, link: str) -> int:
        """Index of the body that carries URDF link ``link`` (0 for links fixed to the base)."""
        try:
            return self._body_index[self._link_body[link]] if not (self.floating_base and link == "world") else 0
        except KeyError:
            raise ModelError(f"{self.source or self.name}: no link named '{link}'") from None

    def link_pose(self, link: str) -> np.ndarray:
        """Pose (4, 4) of URDF link ``link`` in the frame of the body that carries it."""
        return self._link_pose[link]

    def inertial(self, i: int) -> Inertial:
        """Lumped inertial of body ``i`` (1..n) in its body frame (the frame of its tree joint)."""
        return self.graph.nodes[self.body_names[i - 1]]["inertial"]

    def coordinates(self, i: int) -> slice:
        """Slice of the coordinates of tree joint ``i`` in q."""
        return slice(int(self.q_index[i]), int(self.q_index[i + 1]))

    def support(self, i: int) -> tuple:
        """The bodies from ``i`` down to the base, ``i`` first and the base (0) left out: the tree
        joints whose coordinates move body ``i`` (its path in the graph's tree edges)."""
        path = [i]
        while path[-1] > 0:
            path.append(int(self.parent[path[-1]]))
        return tuple(path[:-1])

    @property
    def loop_clusters(self) -> tuple:
        """The bodies that loops tie together, one sorted tuple per cluster: the connected
        components (networkx) of the tree paths between the ends of every loop joint, where the
        two ends' supports differ. Their tree joints are the coordinates the loops constrain."""
        cycles = nx.Graph()
        for lp in self.loop_joints:
            cycle = set(self.support(lp.parent)) ^ set(self.support(lp.child))
            cycles.add_nodes_from(cycle)
            cycles.add_edges_from((b, int(self.parent[b])) for b in cycle if self.parent[b] in cycle)
            if lp.parent in cycle:  # else the parent is the branching body: the cycle hangs from it
                cycles.add_edge(lp.parent, lp.child)
        return tuple(tuple(sorted(c)) for c in sorted(nx.connected_components(cycles), key=min))

    def __repr__(self) -> str:
        return (
            f"Robot({self.name!r}, bodies={self.n}, coordinates={self.nq}, "
            f"loops={len(self.loop_joints)}, floating_base={self.floating_base})"
        )

    # -- notebooks (pga_dyn.display) ----------------------------------------------------------
    def _table(self):
        from .display import number  # masses as pga_dyn.info's report prints them

        headers = ("body", "name", "joint", "type", "parent", "coordinates", "mass (kg)", "links merged")
        rows = [
            (
                i,
                self.body_names[i - 1],
                self.joint_names[i],
                self.joint_type[i],
                self.graph_name(int(self.parent[i])),
                ", ".join(
                    self.coordinate_names[k] + ("" if k in set(self.actuated) else " (passive)")
                    for k in range(self.coordinates(i).start, self.coordinates(i).stop)
                ),
                number(self.inertial(i).mass),
                ", ".join(self.graph.nodes[self.body_names[i - 1]]["links"]),
            )
            for i in range(1, self.n + 1)
        ]
        rows += [
            (
                "loop",
                lp.name,
                lp.name,
                lp.type,
                f"{self.graph_name(lp.parent)} - {self.graph_name(lp.child)}",
                "",
                "",
                "",
            )
            for lp in self.loop_joints
        ]
        return headers, rows

    def _repr_html_(self) -> str:
        from .display import html_table

        return html_table(
            f"{self!r}: {self.num_parameters} inertial parameters, actuated {', '.join(self.actuated_names)}",
            *self._table(),
        )

    def to_frame(self) -> pandas.DataFrame:
        """The bodies (and loop joints) as a pandas DataFrame, the table shown in notebooks."""
        from .display import data_frame

        return data_frame(*self._table())


def rewritten_source(robot: Robot, phi: npt.ArrayLike, path: os.PathLike | str, kind: str = "source") -> tuple:
    """(source file, output path, phi (n, 10)) for writing ``robot``'s model file with the
    link-frame parameters ``phi`` ((n, 10) or (10 n,)) into the new file ``path``: PgaDynError
    when the robot has no ``kind`` file, ``path`` is that file (a user's input is never written
    to), or ``phi`` has parameters of another number of bodies."""
    import os

    source = robot.source
    if not source or not os.path.isfile(source):
        raise PgaDynError(f"{robot.name}: the robot has no {kind} file to write identified inertials into")
    path = os.fspath(path)
    if os.path.abspath(path) == os.path.abspath(source) or (os.path.exists(path) and os.path.samefile(path, source)):
        raise PgaDynError(f"{path}: this is the robot's own file; write the identified model to a new file")
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    if phi.shape[0] != robot.n:
        raise PgaDynError(f"phi has parameters of {phi.shape[0]} bodies, '{robot.name}' has {robot.n}")
    return source, path, phi


def check_robot(robot: object) -> Robot:
    """``robot`` if it is a Robot, else a PgaDynError that says how to get one."""
    if not isinstance(robot, Robot):
        raise ModelError(f"expected a pga_dyn Robot (robots.load or robots.load_urdf), got {type(robot).__name__}")
    return robot
