"""Reader of MJCF, MuJoCo's XML format (the format of mujoco-menagerie).

Read, after the ``<default>`` classes are applied (``class`` / ``childclass``):

* ``<compiler angle eulerseq>`` (angles in degrees unless ``angle="radian"``);
* ``<option gravity>`` (the gravity of the robot unless one is given);
* ``<worldbody>``: nested ``<body name pos quat|euler|axisangle>`` with ``<inertial pos
  quat|euler|axisangle mass diaginertia|fullinertia>`` and ``<joint>`` elements of type
  ``hinge`` (R), ``slide`` (P), ``ball`` (S) or ``free`` (the floating base, on a body of the
  world only), with ``pos``, ``axis`` and ``range`` (the sampling bounds of actuated joints);
  several joints in one body act in turn, as a chain of massless links ``<body>__<joint>``;
  a body without a joint is welded to its parent; ``<site name pos>``;
* ``<equality>``: ``connect`` (body1 body2 anchor, or site1 site2) is a spherical loop joint
  (the point ``anchor`` of body1 and the point of body2 that coincides with it at qpos0);
  ``weld`` (body1 body2 relpose; without relpose: as at qpos0) is the loop joint it cuts
  (:func:`robots.extended.weld_as_loop`); ``joint`` (joint1 joint2 polycoef) with a linear
  polynomial is a coupling q1 = a0 + a1 q2;
* ``<actuator>``: the joints its elements drive (``joint=``) are the actuated (independent)
  coordinates, the other joints passive.

A body's link frame is its body frame moved to its joint's ``pos`` (URDF's convention: the
joint at the child's origin). ``armature`` (rotor inertia) is not a rigid-body parameter: a
:class:`~pga_dyn.errors.PgaDynWarning` names the joints that have one, :func:`mjcf_armature`
gives the values (identify it with ``pga-dyn identify --armature``). ``geom``, ``camera``, ``light``, ``<asset>``,
``<sensor>``, ``<visual>``, ``<contact>`` and ``<statistic>`` do not change the rigid-body
model and are skipped. Everything else that does (``tendon`` and other equalities,
``<tendon>``, inertia inferred from geoms, ``<include>``, an actuator
not on a joint,
``<frame>``, a joint ``ref``) raises :class:`~pga_dyn.errors.PgaDynError` naming it.
"""

from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np

from pga_dyn.conventions import DEFAULT_GRAVITY
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot
from pga_dyn.pga import skew

from .extended import weld_as_loop
from .urdf import read_text, xml_root

__all__ = ["load_mjcf", "parse_mjcf", "mjcf_armature"]

_JOINT_TYPES = {"hinge": "R", "slide": "P", "ball": "S"}
_SKIPPED = {"asset", "sensor", "visual", "contact", "statistic", "size", "extension", "keyframe",
            "custom", "default", "compiler", "option", "worldbody", "equality", "actuator"}
_BODY_SKIPPED = {"geom", "camera", "light", "inertial", "joint", "body", "site", "freejoint"}


def _quat_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _axis_rotation(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = skew(axis)
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


class _Reader:
    def __init__(self, where: str, root):
        self.where = where
        compiler = root.find("compiler")
        compiler = {} if compiler is None else compiler.attrib
        self.degrees = compiler.get("angle", "degree") == "degree"
        self.eulerseq = compiler.get("eulerseq", "xyz")
        if compiler.get("inertiafromgeom") == "true":
            self.fail(root.find("compiler"), "inertiafromgeom='true' (inertia from geoms) is not supported")
        self.defaults = {}
        for top in root.findall("default"):
            self._defaults(top, "main", {})

    def fail(self, element, message):
        name = element.get("name") if element is not None else None
        tag = f"<{element.tag}" + (f" name='{name}'" if name else "") + ">: " if element is not None else ""
        raise PgaDynError(f"{self.where}: {tag}{message}")

    def _defaults(self, element, name, inherited):
        """Default attributes per element tag of class ``name``, inherited from the parent class."""
        own = {tag: dict(values) for tag, values in inherited.items()}
        for child in element:
            if child.tag != "default":
                own.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[name] = own
        for child in element.findall("default"):
            self._defaults(child, child.get("class") or self.fail(child, "a nested <default> needs a class"), own)

    def attributes(self, element, childclass) -> dict:
        """The element's attributes over the defaults of its class."""
        cls = element.get("class") or childclass or "main"
        if cls not in self.defaults and cls != "main":
            self.fail(element, f"unknown class '{cls}'")
        return {**self.defaults.get(cls, {}).get(element.tag, {}), **element.attrib}

    def floats(self, attrs, key, count, default, element):
        text = attrs.get(key)
        if text is None:
            return None if default is None else np.array(default, dtype=float)
        try:
            values = np.array([float(v) for v in text.split()], dtype=float)
        except ValueError:
            self.fail(element, f"attribute {key}='{text}' is not a list of numbers")
        if values.shape != (count,) or not np.all(np.isfinite(values)):
            self.fail(element, f"attribute {key}='{text}' must hold {count} finite numbers")
        return values

    def angle(self, value):
        return np.deg2rad(value) if self.degrees else value

    def rotation(self, attrs, element) -> np.ndarray:
        """The orientation of a body or inertial frame: quat (w x y z), euler or axisangle."""
        given = [key for key in ("quat", "euler", "axisangle", "xyaxes", "zaxis") if key in attrs]
        if len(given) > 1:
            self.fail(element, f"several orientations given: {', '.join(given)}")
        if not given:
            return np.eye(3)
        if given[0] == "quat":
            return _quat_matrix(self.floats(attrs, "quat", 4, None, element))
        if given[0] == "axisangle":
            v = self.floats(attrs, "axisangle", 4, None, element)
            return _axis_rotation(v[:3], self.angle(v[3]))
        if given[0] == "euler":
            angles = self.angle(self.floats(attrs, "euler", 3, None, element))
            rot = np.eye(3)
            for axis, angle in zip(self.eulerseq, angles):
                step = _axis_rotation(np.eye(3)["xyz".index(axis.lower())], angle)
                rot = rot @ step if axis.islower() else step @ rot  # lower case: moving axes
            return rot
        self.fail(element, f"orientation '{given[0]}' is not supported (give quat, euler or axisangle)")

    def pose(self, attrs, element) -> np.ndarray:
        t = np.eye(4)
        t[:3, :3] = self.rotation(attrs, element)
        t[:3, 3] = self.floats(attrs, "pos", 3, (0, 0, 0), element)
        return t

    def inertial(self, body, childclass, offset) -> Inertial:
        """The body's inertial in its link frame (the body frame moved by ``offset``)."""
        element = body.find("inertial")
        if element is None:
            if body.find("geom") is not None:
                self.fail(body, "no <inertial> (MuJoCo would infer it from the geoms; pga-dyn needs <inertial>)")
            return Inertial.zero()
        attrs = self.attributes(element, childclass)
        mass = self.floats(attrs, "mass", 1, None, element)
        if mass is None or mass[0] < 0:
            self.fail(element, "needs a mass >= 0")
        if "diaginertia" in attrs:
            inertia = np.diag(self.floats(attrs, "diaginertia", 3, None, element))
        elif "fullinertia" in attrs:
            xx, yy, zz, xy, xz, yz = self.floats(attrs, "fullinertia", 6, None, element)
            inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        else:
            self.fail(element, "needs diaginertia or fullinertia")
        pose = self.pose(attrs, element)
        rot = pose[:3, :3]
        return Inertial(float(mass[0]), pose[:3, 3] - offset, rot @ inertia @ rot.T)


def parse_mjcf(text: str, where: str = "<string>", floating_base: bool | None = None, gravity=None) -> Robot:
    """Build a :class:`~pga_dyn.model.Robot` from MJCF text; ``where`` names it in errors.

    ``floating_base`` None: floating when the body of the world has a free joint; ``gravity``
    None: ``<option gravity>`` (MuJoCo's default (0, 0, -9.81)). A joint ``armature`` is named
    in a :class:`~pga_dyn.errors.PgaDynWarning` (:func:`mjcf_armature` gives the values).
    """
    robot, armature = _read(text, where, floating_base, gravity)
    if armature:
        warnings.warn(f"{where}: joints {', '.join(armature)} have an armature (rotor inertia), which is not a "
                      "rigid-body parameter: pga-dyn leaves it out of the robot (robots.mjcf_armature gives the "
                      "values, e.g. for drng.identification's extras; identify it with --armature)",
                      PgaDynWarning, stacklevel=2)
    return robot


def mjcf_armature(text: str, where: str = "<string>") -> dict:
    """{joint name: armature} of the joints of MJCF text with a nonzero ``armature`` (kg m^2 or
    kg, after the ``<default>`` classes), e.g. ``extras={"armature": [values.get(name, 0.0) for
    name in robot.actuated_names]}`` of :func:`drng.identification.simulate`."""
    return _read(text, where, None, None)[1]


def _read(text, where, floating_base, gravity):
    """(robot, {joint: armature})."""
    root = xml_root(text, where, "mujoco")
    reader = _Reader(where, root)
    for element in root:
        if element.tag not in _SKIPPED:
            reader.fail(element, "not supported (it changes the model; pga-dyn reads bodies, joints, inertials "
                                 "and connect/joint equalities)")
    option = root.find("option")
    if gravity is None:
        gravity = reader.floats({} if option is None else option.attrib, "gravity", 3, DEFAULT_GRAVITY, option)
    worldbody = root.find("worldbody")
    if worldbody is None:
        reader.fail(root, "no <worldbody>")

    links, joints, armature = [LinkSpec("world")], [], {}
    offsets, world_poses, sites = {"world": np.zeros(3)}, {"world": np.eye(4)}, {}
    free = []

    def joint(jel, body, childclass):
        """(name, type, axes, position in the body frame, limits) of a <joint>; None: free."""
        jattrs = {"type": "free"} if jel.tag == "freejoint" else reader.attributes(jel, childclass)
        jtype = jattrs.get("type", "hinge")
        jname = jattrs.get("name") or reader.fail(jel, f"in <body name='{body}'>: a joint needs a name")
        if jtype == "free":
            return None
        if jtype not in _JOINT_TYPES:
            reader.fail(jel, f"joint type '{jtype}' is not supported")
        kind, axes, limits = _JOINT_TYPES[jtype], np.zeros((0, 3)), None
        if float(jattrs.get("ref", 0)) != 0:
            reader.fail(jel, "a nonzero ref is not supported")
        if kind in ("R", "P"):
            axes = reader.floats(jattrs, "axis", 3, (0, 0, 1), jel).reshape(1, 3)
            if jattrs.get("limited", "auto") != "false" and "range" in jattrs:
                lo, hi = reader.floats(jattrs, "range", 2, None, jel)
                if kind == "R":
                    lo, hi = reader.angle(lo), reader.angle(hi)
                limits = (float(lo), float(hi))
        if float(jattrs.get("armature", 0)) != 0:
            armature[jname] = float(jattrs["armature"])
        return jname, kind, axes, reader.floats(jattrs, "pos", 3, (0, 0, 0), jel), limits

    def visit(body, parent, childclass):
        name = body.get("name") or reader.fail(body, "a body needs a name")
        childclass = body.get("childclass") or childclass
        for child in body:
            if child.tag not in _BODY_SKIPPED:
                reader.fail(child, f"in <body name='{name}'>: not supported")
        attrs = reader.attributes(body, childclass)
        placement = reader.pose(attrs, body)
        found = [joint(j, name, childclass) for j in body if j.tag in ("joint", "freejoint")]
        if None in found:
            if parent != "world" or len(found) > 1:
                reader.fail(body, "a free joint must be the only joint of a body of the world")
            free.append(name)
            found = []
        if not found:
            found = [(f"{name}_weld", "fixed", np.zeros((0, 3)), np.zeros(3), None)]
        # Several joints act in turn, each at its position in the body frame as turned by the
        # previous ones: a chain of massless links <body>__<joint>, each at its joint's position.
        # A link frame is the body frame moved to its joint's position.
        origin = placement.copy()
        origin[:3, 3] = placement[:3, 3] + placement[:3, :3] @ found[0][3] - offsets[parent]
        pose, previous, at = world_poses[parent] @ origin, parent, found[0][3]
        for k, (jname, kind, axes, position, limits) in enumerate(found):
            child = name if k == len(found) - 1 else f"{name}__{jname}"
            if k:
                origin = np.eye(4)
                origin[:3, 3] = position - at
                pose, at = pose @ origin, position
                links.append(LinkSpec(previous))
            if name not in free:  # the free body hangs from pga-dyn's own floating joint
                joints.append(JointSpec(jname, kind, previous, child, origin, axes, None, None, limits))
            previous = child
        offsets[name], world_poses[name] = at, pose
        links.append(LinkSpec(name, reader.inertial(body, childclass, at)))
        for site in body.findall("site"):
            if site.get("name"):
                sattrs = reader.attributes(site, childclass)
                sites[site.get("name")] = (name, reader.floats(sattrs, "pos", 3, (0, 0, 0), site) - at)
        for child in body.findall("body"):
            visit(child, name, childclass)

    for child in worldbody:
        if child.tag not in ("body", "geom", "light", "camera", "site"):
            reader.fail(child, "in <worldbody>: not supported")
    for body in worldbody.findall("body"):
        visit(body, "world", None)
    if free and (len(free) > 1 or len(worldbody.findall("body")) > 1):
        reader.fail(worldbody, "a free body must be the only body of the world")
    joints = _actuated(reader, root, joints)
    loops = []
    equality = root.find("equality")
    for element in [] if equality is None else list(equality):
        attrs = reader.attributes(element, None)
        if attrs.get("active", "true") == "false":
            reader.fail(element, "an inactive equality is not supported (remove it or make it active)")
        if element.tag == "connect":
            loops.append(_connect(reader, element, attrs, sites, offsets, world_poses, len(loops)))
        elif element.tag == "joint":
            joints = _joint_equality(reader, element, attrs, joints)
        elif element.tag == "weld":
            joints, loop = _weld_equality(reader, element, attrs, links, joints, offsets, world_poses, len(loops))
            loops.append(loop)
        else:
            reader.fail(element, f"<{element.tag}> equality is not supported (connect, weld and joint are)")
    if floating_base is None:
        floating_base = bool(free)
    if free:  # the free body is the root link
        links = links[1:]
    return Robot(root.get("model") or os.path.basename(where), links, joints, loops, (), gravity=gravity,
                 floating_base=floating_base, source=where), armature


def _connect(reader, element, attrs, sites, offsets, world_poses, index) -> LoopSpec:
    """A connect equality as a spherical loop joint: the anchor on body1 and the point of body2
    that coincides with it at qpos0."""
    if "site1" in attrs:
        ends = []
        for key in ("site1", "site2"):
            if attrs.get(key) not in sites:
                reader.fail(element, f"no site named '{attrs.get(key)}'")
            ends.append(sites[attrs[key]])
        (b1, p1), (b2, p2) = ends
    else:
        b1, b2 = attrs.get("body1"), attrs.get("body2", "world")
        for body in (b1, b2):
            if body not in offsets:
                reader.fail(element, f"no body named '{body}'")
        p1 = reader.floats(attrs, "anchor", 3, None, element)
        if p1 is None:
            reader.fail(element, "needs an anchor (or site1 and site2)")
        p1 = p1 - offsets[b1]
        point = world_poses[b1] @ np.append(p1, 1.0)
        p2 = (np.linalg.inv(world_poses[b2]) @ point)[:3]
    frames = []
    for body, point in ((b1, p1), (b2, p2)):
        frame = np.eye(4)
        frame[:3, :3] = (np.linalg.inv(world_poses[body]) @ world_poses[b1])[:3, :3]
        frame[:3, 3] = point
        frames.append(frame)
    return LoopSpec(element.get("name") or f"connect{index}", "S", b1, b2, frames[0], frames[1])


def _actuated(reader, root, joints):
    """The joints driven by an ``<actuator>`` (through ``joint=``) are independent, the other
    moving joints passive; without ``<actuator>`` every joint is independent (a warning says so
    when the robot has loops or couplings)."""
    actuator = root.find("actuator")
    if actuator is None:
        if root.find("equality") is not None:
            warnings.warn(f"{reader.where}: no <actuator>: every joint is taken as actuated (independent)",
                          PgaDynWarning, stacklevel=4)
        return joints
    driven = set()
    for element in actuator:
        if "joint" not in element.attrib:
            reader.fail(element, "an actuator that is not on a joint (joint=...) is not supported")
        driven.add(element.get("joint"))
    names = {j.name for j in joints}
    for name in sorted(driven - names):
        reader.fail(actuator, f"no joint named '{name}'")
    return [j if j.type == "fixed" else dataclasses.replace(j, independent=j.name in driven) for j in joints]


def _weld_equality(reader, element, attrs, links, joints, offsets, world_poses, index):
    """A weld equality as the loop joint it cuts (:func:`robots.extended.weld_as_loop`): massless
    links ``<name>_A`` on body1 (at its body frame) and ``<name>_B`` on body2 (where body1's
    frame is when body2 sits at ``relpose`` from body1; without relpose, at qpos0) are welded."""
    b1, b2 = attrs.get("body1"), attrs.get("body2", "world")
    for body in (b1, b2):
        if body not in offsets:
            reader.fail(element, f"no body named '{body}'")
    body_pose = {b: world_poses[b] @ _translation(-offsets[b]) for b in (b1, b2)}
    relpose = reader.floats(attrs, "relpose", 7, (0, 1, 0, 0, 0, 0, 0), element)
    if np.any(relpose[3:] != 0):
        rel = _translation(relpose[:3])
        rel[:3, :3] = _quat_matrix(relpose[3:])
    else:  # the relative pose at qpos0
        rel = np.linalg.inv(body_pose[b1]) @ body_pose[b2]
    name = element.get("name") or f"weld{index}"
    ends = (f"{name}_A", f"{name}_B")
    links += [LinkSpec(ends[0]), LinkSpec(ends[1])]
    by_name = {j.name: j for j in joints}
    for end, body, frame in ((ends[0], b1, _translation(-offsets[b1])),
                             (ends[1], b2, _translation(-offsets[b2]) @ np.linalg.inv(rel))):
        by_name[f"{end}_frame"] = JointSpec(f"{end}_frame", "fixed", body, end, frame)
    loop = weld_as_loop(by_name, ends, f"{reader.where}: <weld name='{name}'>")
    return list(by_name.values()), loop


def _translation(p) -> np.ndarray:
    t = np.eye(4)
    t[:3, 3] = p
    return t


def _joint_equality(reader, element, attrs, joints):
    """joint1 = a0 + a1 joint2 (polycoef a0 a1 0 0 0) as URDF's mimic on joint1."""
    by_name = {j.name: j for j in joints}
    j1, j2 = attrs.get("joint1"), attrs.get("joint2")
    for name in (j1, j2):
        if name not in by_name:
            reader.fail(element, f"no joint named '{name}'" if name else "needs joint1 and joint2 (a locked "
                                                                         "joint is not supported)")
    coef = reader.floats(attrs, "polycoef", 5, (0, 1, 0, 0, 0), element)
    if np.any(coef[2:] != 0):
        reader.fail(element, f"polycoef='{attrs['polycoef']}' is not linear (nonlinear couplings are not supported)")
    return [j if j.name != j1 else dataclasses.replace(j, mimic=(j2, float(coef[1]), float(coef[0]))) for j in joints]


def load_mjcf(path, floating_base: bool | None = None, gravity=None) -> Robot:
    """Read an MJCF file into a :class:`~pga_dyn.model.Robot` (see :func:`parse_mjcf`)."""
    path = os.fspath(path)
    return parse_mjcf(read_text(path), path, floating_base, gravity)
