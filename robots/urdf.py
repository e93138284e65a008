"""Reader of URDF and URDF+ files.

Plain URDF: ``<link>`` (with ``<inertial>``) and ``<joint>`` of types revolute, continuous
(both R), prismatic (P), fixed and floating (F). pga-dyn's extension adds two joint types that
URDF lacks:

* ``type="spherical"`` (S): a ball joint centred at the joint origin, no axis;
* ``type="universal"`` (U): two intersecting axes at the joint origin, given as
  ``<axis xyz="..."/>`` (first, fixed in the parent) and ``<axis2 xyz="..."/>`` (second,
  fixed in the child).

URDF+ (Chignoli et al. 2024): a tree joint may carry ``independent="true|false"``; loop
joints are ``<loop name type><predecessor link><origin/></predecessor><successor link>
<origin/></successor><axis/></loop>``; transmissions are ``<coupling name type>
<predecessor link/><successor link/><ratio value/></coupling>``. URDF ``<mimic joint
multiplier offset/>`` inside a joint is read too.

Every problem raises :class:`pga_dyn.errors.PgaDynError` naming the file and the element: a
malformed or non-UTF-8 file, a missing or malformed attribute, a number that is not finite or
larger than :data:`pga_dyn.model.MAX_VALUE` (joint limits of exactly -1e16 / 1e16, Gazebo's
"unbounded", excepted: read as -inf / +inf, :data:`UNBOUNDED_LIMIT`), a negative mass; an inertia that is not positive semidefinite
gets a :class:`pga_dyn.errors.PgaDynWarning`.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import DEFAULT_GRAVITY, JOINT_AXES, rpy_rotation
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.model import MAX_VALUE, CouplingSpec, Inertial, JointSpec, LinkSpec, LoopSpec, Robot

if TYPE_CHECKING:
    import numpy.typing as npt

#: Relative tolerance of the principal moments in :meth:`_Reader.check_inertia`.
INERTIA_RTOL = 1e-9

#: A joint limit of exactly this magnitude on the side it bounds (lower -1e16, upper 1e16) is
#: Gazebo's "unbounded" (SDFormat's default limits, written into URDF by its exporters, e.g.
#: example-robot-data's iris.urdf): read as -inf / +inf, not refused as out of range.
UNBOUNDED_LIMIT = 1e16

_JOINT_TYPES = {
    "revolute": "R",
    "continuous": "R",
    "prismatic": "P",
    "fixed": "fixed",
    "floating": "F",
    "spherical": "S",
    "universal": "U",
    "ball": "S",
}
_LOOP_TYPES = {"revolute": "R", "continuous": "R", "prismatic": "P", "spherical": "S", "universal": "U", "ball": "S"}


class _Reader:
    def __init__(self, where: str):
        self.where = where
        self.parents = {}

    def locate(self, element) -> str:
        """The file and the element, with its ancestors up to the nearest named one (e.g.
        ``robot.urdf: <joint name='j2'>/<axis>: ``)."""
        path = []
        while element is not None and (element in self.parents or not path):
            path.append(
                f"<{element.tag}" + (f" name='{element.get('name')}'" if element.get("name") is not None else "") + ">"
            )
            if element.get("name") is not None:
                break
            element = self.parents.get(element)
        tag = "/".join(reversed(path)) + ": " if path else ""
        return f"{self.where}: {tag}"

    def fail(self, element, message: str):
        """Raise PgaDynError naming the file and the element (:meth:`locate`)."""
        raise PgaDynError(self.locate(element) + message)

    def floats(self, element, attr: str, count: int, default=None, owner=None):
        text = element.get(attr) if element is not None else None
        if text is None:
            if default is None:
                self.fail(owner if element is None else element, f"missing attribute '{attr}'")
            return np.array(default, dtype=float)
        try:
            values = np.array([float(v) for v in text.split()], dtype=float)
        except ValueError:
            self.fail(element, f"attribute {attr}='{text}' is not a list of numbers")
        if values.shape != (count,):
            self.fail(element, f"attribute {attr}='{text}' must hold {count} number{'s' if count > 1 else ''}")
        if not np.all(np.isfinite(values)):
            self.fail(element, f"attribute {attr}='{text}' is not finite")
        if element.tag not in ("axis", "axis2") and np.any(np.abs(values) > MAX_VALUE):
            self.fail(
                element,
                f"attribute {attr}='{text}' is out of range: a robot's lengths, angles, masses, "
                f"inertias, ratios and limits are at most {MAX_VALUE:g} in magnitude (SI units)",
            )
        return values

    def origin(self, element) -> np.ndarray:
        """4x4 pose of an ``<origin xyz rpy>`` child (identity when absent); rpy as in
        :func:`pga_dyn.conventions.rpy_rotation`."""
        o = element.find("origin")
        xyz = self.floats(o, "xyz", 3, (0, 0, 0), element)
        rpy = self.floats(o, "rpy", 3, (0, 0, 0), element)
        t = np.eye(4)
        t[:3, :3] = rpy_rotation(rpy)
        t[:3, 3] = xyz
        return t

    def axes(self, element, joint_type: str) -> np.ndarray:
        """The axes (k, 3) a joint of ``joint_type`` takes (:data:`pga_dyn.conventions.JOINT_AXES`):
        ``<axis xyz>`` (default 1 0 0, as in URDF), then ``<axis2 xyz>`` (no default)."""
        axes = [
            self.floats(element.find(tag), "xyz", 3, default, element)
            for tag, default in (("axis", (1, 0, 0)), ("axis2", None))[: JOINT_AXES[joint_type]]
        ]
        for axis in axes:
            if np.max(np.abs(axis)) < 1e-12:
                self.fail(element, "axis is zero")
        return np.array(axes).reshape(-1, 3)

    def name(self, element) -> str:
        name = element.get("name")
        if not name:
            self.fail(element, "missing attribute 'name'")
        return name

    def child_link(self, element, tag: str) -> str:
        sub = element.find(tag)
        if sub is None:
            self.fail(element, f"missing <{tag}>")
        link = sub.get("link")
        if not link:
            self.fail(element, f"<{tag}> has no attribute 'link'")
        return link

    def inertial(self, link) -> Inertial:
        inertial = link.find("inertial")
        if inertial is None:
            return Inertial.zero()
        mass = inertial.find("mass")
        if mass is None:
            self.fail(link, "<inertial> has no <mass>")
        m = self.floats(mass, "value", 1)[0]
        if m < 0:
            self.fail(link, f"negative mass {m}")
        pose = self.origin(inertial)
        el = inertial.find("inertia")
        if el is None:
            self.fail(link, "<inertial> has no <inertia>")
        v = {k: self.floats(el, k, 1, (0.0,))[0] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        j = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
        self.check_inertia(link, j)
        rot = pose[:3, :3]
        inertia = rot @ j @ rot.T
        return Inertial(float(m), pose[:3, 3].copy(), inertia)

    def check_inertia(self, link, j: np.ndarray) -> None:
        """A PgaDynWarning naming the link when its rotational inertia ``j`` (3, 3) is not
        positive semidefinite (a principal moment below -INERTIA_RTOL times the largest): no
        body has it. The nullspace does not depend on the inertias; values computed from them
        (base parameters, forces) do. (The triangle inequality is not checked: published
        models such as the PUMA 560 of Armstrong et al. violate it within their accuracy.)"""
        moments = np.linalg.eigvalsh(j)
        if moments[0] < -INERTIA_RTOL * max(np.max(np.abs(moments)), np.finfo(float).tiny):
            warnings.warn(
                self.locate(link) + f"<inertia> is not positive semidefinite (principal moments "
                f"{np.array2string(moments, precision=4)}): no rigid body has it (the nullspace does not "
                "depend on it; the values of base parameters and forces do)",
                PgaDynWarning,
                stacklevel=5,
            )

    def bool(self, element, attr: str):
        text = element.get(attr)
        if text is None:
            return None
        if text.lower() not in ("true", "false", "1", "0"):
            self.fail(element, f"attribute {attr}='{text}' must be true or false")
        return text.lower() in ("true", "1")

    def joint(self, element) -> JointSpec:
        name = self.name(element)
        kind = element.get("type")
        if kind not in _JOINT_TYPES:
            self.fail(element, f"unknown joint type '{kind}'")
        jtype = _JOINT_TYPES[kind]
        if jtype == "U" and element.find("axis2") is None:
            self.fail(element, "a universal joint needs <axis2 xyz=.../>")
        axes = self.axes(element, jtype)
        mimic = element.find("mimic")
        if mimic is not None:
            leader = mimic.get("joint")
            if not leader:
                self.fail(element, "<mimic> has no attribute 'joint'")
            mimic = (leader, self.floats(mimic, "multiplier", 1, (1.0,))[0], self.floats(mimic, "offset", 1, (0.0,))[0])
        limits = None
        limit = element.find("limit")
        if (
            kind in ("revolute", "prismatic")
            and limit is not None
            and "lower" in limit.attrib
            and "upper" in limit.attrib
        ):
            lower, upper = self.bound(limit, "lower", -1.0), self.bound(limit, "upper", 1.0)
            if lower > upper:
                self.fail(limit, f"lower limit {lower} is above upper limit {upper}")
            limits = (float(lower), float(upper))
        rates = {"velocity": None, "effort": None}
        if kind in ("revolute", "prismatic", "continuous") and limit is not None:
            for attr in rates:
                if attr in limit.attrib:
                    value = self.floats(limit, attr, 1)[0]
                    if value < 0:
                        self.fail(limit, f"{attr} limit {value} is negative")
                    rates[attr] = float(value) if 0 < value < UNBOUNDED_LIMIT else None
        return JointSpec(
            name,
            jtype,
            self.child_link(element, "parent"),
            self.child_link(element, "child"),
            self.origin(element),
            axes,
            self.bool(element, "independent"),
            mimic,
            limits,
            **rates,
        )

    def bound(self, limit, attr: str, side: float) -> float:
        """Joint limit ``attr`` of ``<limit>``; ``side`` * value == :data:`UNBOUNDED_LIMIT`
        (Gazebo's "no limit") is ``side`` * inf, any other value is read by :meth:`floats`."""
        try:
            unbounded = side * float(limit.get(attr)) == UNBOUNDED_LIMIT
        except ValueError:
            unbounded = False  # floats() names the malformed attribute
        return side * np.inf if unbounded else float(self.floats(limit, attr, 1)[0])

    def loop(self, element) -> LoopSpec:
        name = self.name(element)
        kind = element.get("type")
        if kind not in _LOOP_TYPES:
            self.fail(element, f"unknown loop joint type '{kind}'")
        ends = [(self.child_link(element, tag), self.origin(element.find(tag))) for tag in ("predecessor", "successor")]
        ltype = _LOOP_TYPES[kind]
        return LoopSpec(name, ltype, ends[0][0], ends[1][0], ends[0][1], ends[1][1], self.axes(element, ltype))

    def coupling(self, element) -> CouplingSpec:
        ratio = element.find("ratio")
        return CouplingSpec(
            self.name(element),
            element.get("type", ""),
            self.child_link(element, "predecessor"),
            self.child_link(element, "successor"),
            self.floats(ratio, "value", 1, None, element)[0],
        )


def xml_root(text: str, where: str, tag: str) -> ET.Element:
    """The root element of XML ``text``, which must be ``<tag>``; PgaDynError naming ``where``
    for malformed XML or another root element."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise PgaDynError(f"{where}: malformed XML: {exc}") from None
    if root.tag != tag:
        raise PgaDynError(f"{where}: the root element is <{root.tag}>, not <{tag}>")
    return root


def urdf_specs(text: str, where: str = "<string>") -> dict:
    """The records of URDF or URDF+ text, before they form a robot: a dict with ``name`` and
    the lists ``links`` (LinkSpec), ``joints`` (JointSpec), ``loops`` (LoopSpec) and
    ``couplings`` (CouplingSpec), the keyword arguments of :class:`~pga_dyn.model.Robot`.
    Readers of formats built on URDF (``robots.extended``) edit them."""
    reader = _Reader(where)
    root = xml_root(text, where, "robot")
    reader.parents = {child: parent for parent in root.iter() for child in parent}
    links = [LinkSpec(reader.name(el), reader.inertial(el)) for el in root.findall("link")]
    joints = [reader.joint(el) for el in root.findall("joint")]
    loops = [reader.loop(el) for el in root.findall("loop")]
    couplings = [reader.coupling(el) for el in root.findall("coupling")]
    return dict(
        name=root.get("name") or os.path.basename(where), links=links, joints=joints, loops=loops, couplings=couplings
    )


def parse_urdf(
    text: str, where: str = "<string>", floating_base: bool = False, gravity: npt.ArrayLike = DEFAULT_GRAVITY
) -> Robot:
    """Build a :class:`~pga_dyn.model.Robot` from URDF or URDF+ text; ``where`` names it in errors."""
    return Robot(**urdf_specs(text, where), gravity=gravity, floating_base=floating_base, source=where)


def read_text(path: os.PathLike | str) -> str:
    """The UTF-8 text of the file at ``path``; PgaDynError naming it when it cannot be read."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise PgaDynError(f"{path}: cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PgaDynError(f"{path}: the file is not UTF-8 text") from None


def load_urdf(path: os.PathLike | str, floating_base: bool = False, gravity: npt.ArrayLike = DEFAULT_GRAVITY) -> Robot:
    """Read a URDF or URDF+ file into a :class:`~pga_dyn.model.Robot`.

    Parameters
    ----------
    path : str or os.PathLike
    floating_base : bool
        Add a floating (F) joint between the world and the root link.
    gravity : array_like (3,)
        The gravity vector in the world frame (m/s^2).
    """
    path = os.fspath(path)
    return parse_urdf(read_text(path), path, floating_base, gravity)
