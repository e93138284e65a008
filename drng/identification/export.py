"""Identified parameters out, the last stage of the identification (:mod:`drng.identification`
lists them in order): a new URDF file with the identified inertials.

The URDF (:func:`write_urdf`) is the robot's own file with the ``<inertial>`` of each moving
body replaced: the identified parameters of the body (the lumped parameters of the links
merged into it by fixed joints) go to its own link (the child link of its moving joint, whose
frame is the body frame), with the centre of mass as ``<origin xyz>``, ``rpy="0 0 0"`` and the
inertia about the centre of mass; the ``<inertial>`` of the links merged into it are removed.
Links fixed to the base keep theirs. The input file is never written to.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from pga_dyn.errors import PgaDynError

from .physics import mass_properties, violations


def _inertial_element(phi_b) -> ET.Element:
    """An URDF ``<inertial>`` of one body's link-frame parameters (mass > 0: centre of mass and
    inertia about it; mass 0: the inertia about the frame origin)."""
    m, c, Ic = mass_properties(phi_b)
    element = ET.Element("inertial")
    ET.SubElement(element, "origin", xyz=" ".join(repr(float(v)) for v in c), rpy="0 0 0")
    ET.SubElement(element, "mass", value=repr(m))
    ET.SubElement(element, "inertia", ixx=repr(float(Ic[0, 0])), ixy=repr(float(Ic[0, 1])), ixz=repr(float(Ic[0, 2])),
                  iyy=repr(float(Ic[1, 1])), iyz=repr(float(Ic[1, 2])), izz=repr(float(Ic[2, 2])))
    return element


def write_urdf(robot, phi, path) -> str:
    """Write ``robot``'s URDF / URDF+ file (``robot.source``) with the link-frame parameters
    ``phi`` ((n, 10) or (10 n,)) as the inertials of its moving bodies to the new file
    ``path`` (module docstring). Raises PgaDynError when ``phi`` is not physically consistent
    (:func:`~drng.identification.physics.violations`), the robot has no source file, or
    ``path`` is that file. Returns ``path``."""
    source = robot.source
    if not source or not os.path.isfile(source):
        raise PgaDynError(f"{robot.name}: the robot has no source file to write identified inertials into")
    path = os.fspath(path)
    if os.path.abspath(path) == os.path.abspath(source) or (os.path.exists(path) and os.path.samefile(path, source)):
        raise PgaDynError(f"{path}: this is the robot's own file; write the identified model to a new file")
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    if phi.shape[0] != robot.n:
        raise PgaDynError(f"phi has parameters of {phi.shape[0]} bodies, '{robot.name}' has {robot.n}")
    bad = violations(robot.body_names, phi)
    if bad:
        raise PgaDynError("the parameters are not physically consistent, a URDF file would not be a model of a "
                          "robot: " + "; ".join(str(v) for v in bad))
    tree = ET.parse(source, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    links = {link.get("name"): link for link in tree.getroot().iter("link")}
    for name, phi_b in zip(robot.body_names, phi):
        for member in robot.graph.nodes[name]["links"]:
            for old in links[member].findall("inertial"):
                links[member].remove(old)
        links[name].insert(0, _inertial_element(phi_b))
    ET.indent(tree)
    tree.write(path, encoding="unicode", xml_declaration=False)
    return path
