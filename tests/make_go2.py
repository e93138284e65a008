"""Generate pga-dyn's Go2 model, ``robots/data/go2.urdf``, from the public Unitree Go2 description.

    python tests/make_go2.py <example-robot-data>/robots/go2_description/urdf/go2.urdf robots/data/go2.urdf

A maintainer's tool beside the file it makes: it is not part of the installed package (only
``robots/data/*.urdf`` and the licence text ``go2.LICENSE`` are package data).

The public file (Unitree Go2, as distributed in example-robot-data) hangs one rotor link on a
fixed joint next to each leg joint. This script

* merges every rotor link (a link named ``*_rotor`` that is the child of a fixed joint and has
  no children) into its parent link: the two inertials are lumped into one (total mass,
  combined centre of mass, inertia about the new centre of mass by the parallel-axis theorem);
* drops visuals, collisions and meshes;
* keeps the names, the order, the joint origins, axes and limits, and the other inertials
  (with their original number strings) unchanged, as well as the remaining fixed links (feet,
  imu, radar), which any reader merges into their bodies anyway.

The rigid-body dynamics are unchanged: a link on a fixed joint moves with its parent.
"""

from __future__ import annotations

import argparse
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np

from pga_dyn.conventions import rpy_rotation
from pga_dyn.model import Inertial, lump

HEADER = """\
  Unitree Go2 quadruped: links, joints and inertial parameters, for pga-dyn.

  Source: the Unitree Go2 description (go2_description, Unitree Robotics, BSD per its package.xml
  in unitreerobotics/unitree_ros; example-robot-data's go2_description/README.md
  gives its licence as MPL-2.0), as distributed in the example-robot-data package
  (robots/go2_description/urdf/go2.urdf), from unitreerobotics/unitree_ros.

  Licence: BSD-3-Clause, Unitree Robotics; its text is robots/data/go2.LICENSE.

  GENERATED FILE - do not edit. Made by tests/make_go2.py from {source}:
  the rotor links on fixed joints are merged into their parent links (inertials lumped:
  total mass, combined centre of mass, inertia about it); visuals, collisions and meshes are
  dropped; names, joint origins, axes, limits and the other inertials are kept.
  Merged:
    {merged}.
"""

_JOINT_KEEP = ("limit", "dynamics", "mimic")


class GenerateError(Exception):
    """The input is not the expected Go2 description."""


def _fmt(x: float) -> str:
    """15 significant digits: exact to double precision, without the last-bit noise of sums."""
    s = f"{float(x):.15g}"
    return "0" if s == "-0" else s


def _floats(element, attr, default):
    if element is None or element.get(attr) is None:
        return np.array(default, dtype=float)
    return np.array([float(v) for v in element.get(attr).split()], dtype=float)


def _pose(element) -> np.ndarray:
    """The pose (4, 4) of the <origin> child of ``element`` (identity when absent)."""
    origin = element.find("origin")
    pose = np.eye(4)
    pose[:3, :3] = rpy_rotation(_floats(origin, "rpy", (0, 0, 0)))
    pose[:3, 3] = _floats(origin, "xyz", (0, 0, 0))
    return pose


def read_inertial(link):
    """The Inertial of a <link> in the link frame (None without <inertial>)."""
    inertial = link.find("inertial")
    if inertial is None:
        return None
    pose = _pose(inertial)
    mass = float(inertial.find("mass").get("value"))
    el = inertial.find("inertia")
    v = {k: float(el.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    j = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    return Inertial(mass, pose[:3, 3], pose[:3, :3] @ j @ pose[:3, :3].T)


def _inertial_element(inertial):
    mass, com, inertia = inertial.mass, inertial.com, inertial.inertia
    el = ET.Element("inertial")
    ET.SubElement(el, "origin", xyz=" ".join(_fmt(v) for v in com), rpy="0 0 0")
    ET.SubElement(el, "mass", value=_fmt(mass))
    ET.SubElement(
        el,
        "inertia",
        ixx=_fmt(inertia[0, 0]),
        ixy=_fmt(inertia[0, 1]),
        ixz=_fmt(inertia[0, 2]),
        iyy=_fmt(inertia[1, 1]),
        iyz=_fmt(inertia[1, 2]),
        izz=_fmt(inertia[2, 2]),
    )
    return el


def _copy_inertial(link):
    """The <inertial> of ``link`` with its attribute strings unchanged (None if absent)."""
    inertial = link.find("inertial")
    if inertial is None:
        return None
    el = ET.Element("inertial")
    for tag in ("origin", "mass", "inertia"):
        sub = inertial.find(tag)
        if sub is not None:
            ET.SubElement(el, tag, dict(sub.attrib))
    return el


def is_rotor(link_name, joint) -> bool:
    return link_name.endswith("_rotor") and joint.get("type") == "fixed"


def generate(text: str, source: str) -> str:
    """The compact Go2 URDF text made from the public description ``text``."""
    root = ET.fromstring(text)
    links = {el.get("name"): el for el in root.findall("link")}
    joints = root.findall("joint")
    parent_joint = {j.find("child").get("link"): j for j in joints}
    has_children = {j.find("parent").get("link") for j in joints}

    rotors = [name for name, joint in parent_joint.items() if is_rotor(name, joint)]
    for name in rotors:
        if name in has_children:
            raise GenerateError(f"{source}: rotor link '{name}' has children; cannot merge it")
    merged_into = {}
    for name in rotors:
        merged_into.setdefault(parent_joint[name].find("parent").get("link"), []).append(name)

    out = ET.Element("robot", name=root.get("name", "go2"))
    for element in root:
        if element.tag == "link":
            name = element.get("name")
            if name in rotors:
                continue
            link = ET.SubElement(out, "link", name=name)
            if name in merged_into:
                own = read_inertial(element)
                parts = [] if own is None else [(own, np.eye(4))]
                parts += [(read_inertial(links[rotor]), _pose(parent_joint[rotor])) for rotor in merged_into[name]]
                link.append(_inertial_element(lump(parts)))
            else:
                inertial = _copy_inertial(element)
                if inertial is not None:
                    link.append(inertial)
        elif element.tag == "joint":
            if element.find("child").get("link") in rotors:
                continue
            joint = ET.SubElement(out, "joint", name=element.get("name"), type=element.get("type"))
            origin = element.find("origin")
            if origin is not None:
                ET.SubElement(joint, "origin", xyz=origin.get("xyz", "0 0 0"), rpy=origin.get("rpy", "0 0 0"))
            ET.SubElement(joint, "parent", link=element.find("parent").get("link"))
            ET.SubElement(joint, "child", link=element.find("child").get("link"))
            axis = element.find("axis")
            if axis is not None and element.get("type") != "fixed":
                ET.SubElement(joint, "axis", xyz=axis.get("xyz"))
            for tag in _JOINT_KEEP:
                sub = element.find(tag)
                if sub is not None:
                    ET.SubElement(joint, tag, dict(sub.attrib))
    ET.indent(out, space="  ")
    merged = ";\n    ".join(f"{', '.join(r)} into {p}" for p, r in merged_into.items()) or "none"
    comment = HEADER.format(source=source, merged=merged)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!--\n'
        + comment
        + "-->\n"
        + ET.tostring(out, encoding="unicode")
        + "\n"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/make_go2.py", description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the public go2.urdf (example-robot-data)")
    parser.add_argument("output", help="the file to write, e.g. robots/data/go2.urdf")
    args = parser.parse_args(argv)
    try:
        with open(args.source, encoding="utf-8") as handle:
            text = handle.read()
        result = generate(text, os.path.basename(args.source))
    except (OSError, ET.ParseError, GenerateError, AttributeError, TypeError, ValueError) as exc:
        print(f"make_go2: error: {exc}", file=sys.stderr)
        return 2
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
