"""Identified parameters out, the last stage of the identification (:mod:`identification`
lists them in order): a new robot file with every identified term its format can hold.

The URDF (:func:`write_urdf`) is the robot's own file with the ``<inertial>`` of each moving
body replaced: the identified parameters of the body (the lumped parameters of the links
merged into it by fixed joints) go to its own link (the child link of its moving joint, whose
frame is the body frame), with the centre of mass as ``<origin xyz>``, ``rpy="0 0 0"`` and the
inertia about the centre of mass; the ``<inertial>`` of the links merged into it are removed.
Links fixed to the base keep theirs. The input file is never written to.

The friction and armature terms (:mod:`identification.model`) go to joint attributes
(:func:`export_plan`, :data:`ATTRIBUTES`): in URDF ``<dynamics damping="fv" friction="fc"/>``
(tau = fv qd + fc sign(qd), as Pinocchio reads them); in MJCF (``robots.write_mjcf``) the joint's
``damping``, ``frictionloss`` and ``armature``. URDF has no rotor inertia (armature), and neither
format has a constant joint force (the offset f0) or direction-dependent terms: those are listed
as not written. A joint with several coordinates (universal) has one attribute for all of them
and gets none. A term regrouped with inertial parameters (the armature of a first joint in
Izz1R) is written with the split of the full estimate, which only the sum is identified in.
Terms the identification did not estimate keep the file's values.

Beside the file, its sidecar ``FILE.pga-dyn.json`` (:func:`write_sidecar`) holds what no robot
file holds and a prediction needs: the model's terms and their speed scales (the smooth sign's,
Stribeck's), the chosen estimate's base parameters beta, the force channel's delay and the
drive gains. :func:`saved_model` reads the two files back, so that ``pga-dyn predict FILE LOG``
predicts a new log's forces from them alone, with the figures ``pga-dyn identify --test`` gives.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pga_dyn.errors import PgaDynError
from pga_dyn.model import rewritten_source

from .consistency import identifiability
from .diagnostics import rre
from .model import PASSIVE_TERMS
from .physics import mass_properties, violations

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .data import Trajectory
    from .estimation import FullEstimate
    from .model import IdentificationModel

#: The joint attribute of each identified extra term, per file format.
ATTRIBUTES = {
    "urdf": {"viscous": "damping", "coulomb": "friction"},
    "mjcf": {"viscous": "damping", "coulomb": "frictionloss", "armature": "armature"},
}
#: Why a format cannot hold a term (other terms: no joint attribute of the format holds it).
NOT_HELD = {
    "armature": "URDF has no rotor inertia (armature) attribute",
    "offset": "no joint attribute holds a constant force (a sensor offset or an asymmetric friction)",
}


class ExportPlan(NamedTuple):
    """What :func:`export_plan` writes: the file ``format`` (``urdf``, ``mjcf``), ``attributes``
    {attribute: {joint: value}} for the writer, ``written`` ((parameter, attribute, joint), ...),
    ``not_written`` ((parameters, reason), ...) and ``notes`` (lines on regrouped terms)."""

    format: str
    attributes: dict
    written: tuple
    not_written: tuple
    notes: tuple

    def report(self, path: os.PathLike | str, bodies: int) -> dict:
        """A JSON-ready dict of the written file ``path`` with the inertials of ``bodies`` bodies."""
        return {
            "file": os.fspath(path),
            "format": self.format,
            "inertials": bodies,
            "written": [{"parameter": p, "attribute": a, "joint": j} for p, a, j in self.written],
            "not_written": [{"parameters": list(p), "reason": r} for p, r in self.not_written],
            "notes": list(self.notes),
        }


def export_text(report: dict) -> list:
    """The lines ``pga-dyn identify -o`` prints of an :meth:`ExportPlan.report`."""
    by_attribute = {}
    for w in report["written"]:
        by_attribute.setdefault(w["attribute"], []).append(w["parameter"])
    lines = [
        f"written:          {report['file']} ({report['format'].upper()}): inertials of {report['inertials']} "
        "bodies" + "".join(f"; {a}: {', '.join(p)}" for a, p in by_attribute.items())
    ]
    lines += [f"  not written:    {', '.join(n['parameters'])}: {n['reason']}" for n in report["not_written"]]
    lines += [f"  note:           {note}" for note in report["notes"]]
    if "sidecar" in report:
        lines.append(
            f"written:          {report['sidecar']} (the terms, the chosen estimate, the delay and the drive gains: "
            "pga-dyn predict reads it with the robot file)"
        )
    return lines


def file_format(robot: Robot) -> str:
    """``urdf`` or ``mjcf``: the format of ``robot``'s source file (by its root element)."""
    source = robot.source
    if not source or not os.path.isfile(source):
        raise PgaDynError(f"{robot.name}: the robot has no source file to write an identified model into")
    try:
        tag = ET.parse(source).getroot().tag
    except ET.ParseError as exc:
        raise PgaDynError(f"{source}: not an XML robot file: {exc}") from None
    if tag not in ("robot", "mujoco"):
        raise PgaDynError(f"{source}: root element <{tag}> is neither URDF <robot> nor MJCF <mujoco>")
    return "urdf" if tag == "robot" else "mjcf"


def export_plan(full: FullEstimate, fmt: str) -> ExportPlan:
    """The joint attributes of the extra terms of the full estimate ``full`` (MAP or consistent)
    in a file of format ``fmt`` (module docstring). PgaDynError when a term to write is negative
    (a damping, friction or armature below zero is not a model of a drive)."""
    if fmt not in ATTRIBUTES:
        raise PgaDynError(f"export: unknown format '{fmt}', expected one of {', '.join(ATTRIBUTES)}")
    model = full.model
    robot, held = model.robot, ATTRIBUTES[fmt]
    nphi = model.base.K.shape[1]
    names = model.parameter_names[nphi:]
    notes = identifiability(model)[nphi:]
    one_coordinate = {
        robot.joint_names[i]
        for i in range(1, robot.n + 1)
        if robot.coordinates(i).stop - robot.coordinates(i).start == 1
    }
    attributes, written, missing, regrouped = {}, [], {}, []
    for (term, j), name, value, note in zip(model.extras, names, full.extras, notes):
        joint = robot.actuated_names[j]
        if term not in held:
            reason = NOT_HELD.get(term, f"{fmt.upper()} has no joint attribute for the {term} term")
            missing.setdefault(reason, []).append(name)
        elif joint not in one_coordinate:
            missing.setdefault(f"joint of coordinate '{joint}' has several coordinates and one attribute", []).append(
                name
            )
        elif value < 0:
            raise PgaDynError(
                f"export: {name} = {value:.6g} < 0 is not a {term} term of a drive: the file would not "
                "be a model of the robot (the consistent estimate, --consistent, bounds it at 0)"
            )
        else:
            attributes.setdefault(held[term], {})[joint] = float(value)
            written.append((name, held[term], joint))
            if note:
                regrouped.append(f"{name} {note.split(': ', 1)[1]}")
    lines = (
        (f"written with the full estimate's split, only the sum is identified: {'; '.join(regrouped)}",)
        if regrouped
        else ()
    )
    return ExportPlan(fmt, attributes, tuple(written), tuple((tuple(v), k) for k, v in missing.items()), lines)


def _inertial_element(phi_b) -> ET.Element:
    """An URDF ``<inertial>`` of one body's link-frame parameters (mass > 0: centre of mass and
    inertia about it; mass 0: the inertia about the frame origin)."""
    m, c, Ic = mass_properties(phi_b)
    element = ET.Element("inertial")
    ET.SubElement(element, "origin", xyz=" ".join(repr(float(v)) for v in c), rpy="0 0 0")
    ET.SubElement(element, "mass", value=repr(m))
    ET.SubElement(
        element,
        "inertia",
        ixx=repr(float(Ic[0, 0])),
        ixy=repr(float(Ic[0, 1])),
        ixz=repr(float(Ic[0, 2])),
        iyy=repr(float(Ic[1, 1])),
        iyz=repr(float(Ic[1, 2])),
        izz=repr(float(Ic[2, 2])),
    )
    return element


def write_urdf(robot: Robot, phi: npt.ArrayLike, path: os.PathLike | str, extras: dict | None = None) -> str:
    """Write ``robot``'s URDF / URDF+ file (``robot.source``) with the link-frame parameters
    ``phi`` ((n, 10) or (10 n,)) as the inertials of its moving bodies to the new file
    ``path`` (module docstring), and the joint attributes ``extras`` {``damping`` or
    ``friction``: {joint: value >= 0}} (:meth:`ExportPlan.attributes`) in each joint's
    ``<dynamics>``. Raises PgaDynError when ``phi`` is not physically consistent
    (:func:`~identification.physics.violations`), the robot has no source file, ``path``
    is that file, or an attribute or joint is unknown. Returns ``path``."""
    source, path, phi = rewritten_source(robot, phi, path)
    bad = violations(robot.body_names, phi)
    if bad:
        raise PgaDynError(
            "the parameters are not physically consistent, a URDF file would not be a model of a "
            "robot: " + "; ".join(str(v) for v in bad)
        )
    tree = ET.parse(source, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    links = {link.get("name"): link for link in tree.getroot().iter("link")}
    for name, phi_b in zip(robot.body_names, phi):
        for member in robot.graph.nodes[name]["links"]:
            for old in links[member].findall("inertial"):
                links[member].remove(old)
        links[name].insert(0, _inertial_element(phi_b))
    joints = {joint.get("name"): joint for joint in tree.getroot().findall("joint")}
    for attribute, values in (extras or {}).items():
        if attribute not in ATTRIBUTES["urdf"].values():
            raise PgaDynError(f"extras: URDF's <dynamics> has no attribute '{attribute}' (it has damping, friction)")
        for joint, value in values.items():
            if joint not in joints:
                raise PgaDynError(f"{source}: extras['{attribute}']: no <joint name='{joint}'> in this file")
            if not (np.isfinite(value) and value >= 0):
                raise PgaDynError(f"extras['{attribute}']['{joint}'] = {value}: must be a finite number >= 0")
            dynamics = joints[joint].find("dynamics")
            if dynamics is None:
                dynamics = ET.SubElement(joints[joint], "dynamics")
            dynamics.set(attribute, repr(float(value)))
    ET.indent(tree)
    tree.write(path, encoding="unicode", xml_declaration=False)
    return path


def write_model(
    full: FullEstimate,
    path: os.PathLike | str,
    write_mjcf: Callable[..., str] | None = None,
    fmt: str | None = None,
) -> dict:
    """Write the full estimate ``full`` (MAP or consistent) to the new file ``path`` in the format
    ``fmt`` (``urdf`` or ``mjcf``; None: the format of its robot's file, :func:`file_format`): its
    inertials and every extra term the format holds (:func:`export_plan`), by :func:`write_urdf`
    (a URDF robot's file) or, for MJCF, by ``write_mjcf`` (``robots.write_mjcf``, given by the
    caller: identification does not import robots; a copy of an MJCF robot's file, or a new MJCF
    file of a URDF robot, e.g. a legged robot with its floating base as a free joint). Returns
    the :meth:`ExportPlan.report`. PgaDynError, and no file, when the estimate is not physically
    consistent or has a negative term to write, or ``fmt`` is ``urdf`` for a robot not read from
    URDF."""
    robot = full.model.robot
    source_format = file_format(robot) if fmt != "mjcf" else None
    fmt = fmt or source_format
    if fmt == "urdf" and source_format != "urdf":
        raise PgaDynError(
            f"{robot.source}: a URDF file is written into a copy of the robot's URDF file, and this is MJCF"
        )
    bad = violations(robot.body_names, full.phi)
    if bad:
        raise PgaDynError(
            f"the {full.method} estimate is not physically consistent, no file written (a robot file "
            "of it would not be a model of a robot; --consistent gives one that is): " + "; ".join(str(v) for v in bad)
        )
    plan = export_plan(full, fmt)
    if fmt == "mjcf":
        if write_mjcf is None:
            raise PgaDynError(f"{robot.source}: an MJCF file is written by robots.write_mjcf: pass it as write_mjcf")
        write_mjcf(robot, full.phi, path, extras=plan.attributes)
    else:
        write_urdf(robot, full.phi, path, extras=plan.attributes)
    return plan.report(path, robot.n)


#: The file beside a written model that holds what the robot file cannot: FILE + SIDECAR_SUFFIX.
SIDECAR_SUFFIX = ".pga-dyn.json"
#: The format tag of that file (checked when it is read).
SIDECAR_FORMAT = "pga-dyn identified model 1"
#: The friction models of :func:`~.model.identification_model` that add each extra term.
MODEL_OF_TERM = {
    "viscous": "viscous",
    "coulomb": "coulomb",
    "offset": "offset",
    "coulomb-tanh": "coulomb-tanh",
    "stribeck-coulomb": "stribeck",
    "stribeck-static": "stribeck",
    "viscous+": "viscous+-",
    "viscous-": "viscous+-",
    "coulomb+": "coulomb+-",
    "coulomb-": "coulomb+-",
}


def sidecar_path(path: os.PathLike | str) -> str:
    """The sidecar of the model file ``path``: ``path`` + :data:`SIDECAR_SUFFIX`."""
    return os.fspath(path) + SIDECAR_SUFFIX


def write_sidecar(
    model: IdentificationModel,
    beta: npt.ArrayLike,
    estimate: str,
    path: os.PathLike | str,
    *,
    theta: npt.ArrayLike | None = None,
    delay: float = 0.0,
    gains: npt.ArrayLike | None = None,
) -> str:
    """Write, beside the model file ``path`` (:func:`sidecar_path`), what a robot file cannot hold
    and a prediction needs: the model's terms (friction per coordinate, per direction, Stribeck,
    offsets, armature, passive friction) and their speed scales, the chosen ``estimate``'s
    ``beta`` (p,) with the parameters' names, the full parameters ``theta`` written into the file
    (if any), the force channel's ``delay`` (s) and the drive ``gains`` (n_a,) the forces were
    read with. JSON; :func:`saved_model` reads it back. Returns the sidecar's path."""
    import json

    robot = model.robot
    content = {
        "format": SIDECAR_FORMAT,
        "robot_file": os.path.basename(os.fspath(path)),
        "robot": robot.name,
        "coordinates": list(robot.actuated_names),
        "extras": [[term, name] for (term, _), name in zip(model.extras, model.extra_coordinates)],
        "sign_speed": None if model.sign_speed is None else model.sign_speed.tolist(),
        "coulomb_speed": None if model.coulomb_speed is None else model.coulomb_speed.tolist(),
        "stribeck_speed": None if model.stribeck_speed is None else model.stribeck_speed.tolist(),
        "estimate": estimate,
        "names": list(model.names),
        "beta": np.asarray(beta, dtype=float).tolist(),
        "parameter_names": list(model.parameter_names),
        "theta": None if theta is None else np.asarray(theta, dtype=float).tolist(),
        "delay": float(delay),
        "gains": None if gains is None else np.asarray(gains, dtype=float).tolist(),
    }
    out = sidecar_path(path)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(content, handle, indent=1)
        handle.write("\n")
    return out


class SavedModel(NamedTuple):
    """An identified model read back by :func:`saved_model`: its ``model``
    (:class:`~.model.IdentificationModel` with the saved terms and speeds), ``beta`` (p,), the
    ``estimate`` it came from, the force ``delay`` (s), the drive ``gains`` (n_a,) or None, and
    ``source`` (the sidecar's path, or the robot file's for a file without one)."""

    model: IdentificationModel
    beta: np.ndarray
    estimate: str
    delay: float
    gains: np.ndarray | None
    source: str

    def predict(self, data: Trajectory) -> np.ndarray:
        """The forces (ns, n_a) predicted along ``data`` (already aligned by the delay)."""
        from .estimation import predict

        return predict(self.model, self.beta, data)

    def report(self, data: Trajectory) -> dict:
        """The check of the model on the record ``data`` (with measured tau): its forces advanced
        by the saved delay, as ``pga-dyn identify --test`` does; RRE (%) and residual RMS per
        coordinate."""
        if data.tau is None:
            raise PgaDynError(f"{data.source}: no measured forces to compare the predictions with")
        aligned = data.aligned(self.delay) if self.delay else data
        predicted = self.predict(aligned)
        return {
            "model": self.source,
            "estimate": self.estimate,
            "data": data.source,
            "samples": len(aligned),
            "coordinates": list(data.names),
            "delay": self.delay,
            "rre_%": rre(aligned.tau, predicted).tolist(),
            "residual_rms": np.sqrt(np.mean((aligned.tau - predicted) ** 2, axis=0)).tolist(),
        }


def saved_model(robot: Robot, path: os.PathLike | str) -> SavedModel:
    """The identified model of the model file ``robot`` was read from (``path``, the file): its
    sidecar (:func:`write_sidecar`) when there is one, else the robot file's own inertial
    parameters without extra terms (``estimate`` "file"). PgaDynError naming the sidecar when it
    is not one, or its coordinates, terms or parameters are not those of ``robot``."""
    import json

    import pga_dyn

    from .model import identification_model

    side = sidecar_path(path)
    if not os.path.exists(side):
        model = identification_model(robot)
        phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))
        return SavedModel(model, model.values(model.theta(phi)), "file", 0.0, None, os.fspath(path))
    try:
        with open(side, encoding="utf-8") as handle:
            content = json.load(handle)
    except (OSError, ValueError) as exc:
        raise PgaDynError(f"{side}: cannot be read as pga-dyn's sidecar: {exc}") from None
    if not isinstance(content, dict) or content.get("format") != SIDECAR_FORMAT:
        raise PgaDynError(f"{side}: not a sidecar of pga-dyn (format '{SIDECAR_FORMAT}')")
    if content["coordinates"] != list(robot.actuated_names):
        raise PgaDynError(
            f"{side}: its coordinates {content['coordinates']} are not those of {robot.source or robot.name} "
            f"{list(robot.actuated_names)}"
        )
    terms = [term for term, _ in content["extras"]]
    friction = tuple(dict.fromkeys(MODEL_OF_TERM[t] for t in terms if t in MODEL_OF_TERM))
    passive = tuple(dict.fromkeys(t.removeprefix("passive-") for t in terms if t in PASSIVE_TERMS))
    speeds = {k: content[k] for k in ("coulomb_speed", "stribeck_speed") if content[k] is not None}
    model = identification_model(robot, friction, "armature" in terms, passive_friction=passive, **speeds)
    if content["sign_speed"] is not None:
        model = replace(model, sign_speed=np.array(content["sign_speed"], dtype=float))
    if list(model.names) != content["names"]:
        raise PgaDynError(
            f"{side}: its parameters {content['names']} are not those pga-dyn makes of "
            f"{robot.source or robot.name} with these terms {list(model.names)}"
        )
    gains = None if content["gains"] is None else np.array(content["gains"], dtype=float)
    return SavedModel(
        model, np.array(content["beta"], dtype=float), content["estimate"], float(content["delay"]), gains, side
    )
