"""Reader of Extended URDF + YAML: the closed-loop format of Gepetto's example-parallel-robots
(read by its ``toolbox-parallel-robots``).

A plain URDF holds the spanning tree; a YAML file beside it (``robot.yaml``) completes it:

* ``closed_loop``: a list of frame pairs ``[A, B]``, each the name of a link (or of a joint,
  whose frame is its child link's) that coincide when the loop is closed, at the configuration
  of the file (q = 0);
* ``type``: for each pair, ``3D`` (the frames' origins coincide: a ball joint, pga-dyn's
  spherical loop joint S) or ``6D`` (the frames coincide: a weld, which pga-dyn's loop joints
  (R, P, U, S) cannot express: refused by name). Absent, the format's default is 6D;
* ``name_mot``: the actuated joints, the independent coordinates; every other moving joint is
  passive;
* ``joint_name`` / ``joint_type`` (optional): tree joints retyped, ``SPHERICAL`` (S),
  ``FIXED``, or ``UJOINT_ab`` (a universal joint about the axes a then b of the joint frame,
  a, b in X, Y, Z).

Any other key raises :class:`~pga_dyn.errors.PgaDynError` naming it. Reading YAML needs PyYAML
(the ``yaml`` extra).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import DEFAULT_GRAVITY, LOOP_JOINT_TYPES
from pga_dyn.errors import PgaDynError
from pga_dyn.model import LoopSpec, Robot

from .urdf import read_text, urdf_specs

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

__all__ = ["load_extended_urdf", "yaml_beside", "weld_as_loop"]

_KEYS = ("closed_loop", "type", "name_mot", "joint_name", "joint_type")
_AXIS = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def yaml_beside(urdf_path: os.PathLike | str) -> str | None:
    """The YAML file that completes the URDF at ``urdf_path``: ``<stem>.yaml`` or ``robot.yaml``
    in the same folder, if one exists (the convention of example-parallel-robots)."""
    urdf_path = os.fspath(urdf_path)
    folder, stem = os.path.dirname(urdf_path), os.path.splitext(os.path.basename(urdf_path))[0]
    for name in (stem + ".yaml", stem + ".yml", "robot.yaml"):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def _read_yaml(path: str) -> dict:
    try:
        import yaml
    except ImportError:
        raise PgaDynError(f"{path}: reading YAML needs PyYAML: pip install '.[yaml]' in pga-dyn's checkout") from None
    try:
        content = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        raise PgaDynError(f"{path}: malformed YAML: {exc}") from None
    if not isinstance(content, dict):
        raise PgaDynError(f"{path}: expected a mapping with the keys {', '.join(_KEYS)}")
    unknown = sorted(set(content) - set(_KEYS))
    if unknown:
        raise PgaDynError(f"{path}: unsupported key(s) {', '.join(unknown)} (read: {', '.join(_KEYS)})")
    return content


def _names(content, key, where):
    value = content.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PgaDynError(f"{where}: '{key}' must be a list of names, got {value!r}")
    return value


def _retype(joint, kind: str, where: str):
    """A tree joint retyped by the YAML's joint_type."""
    kind = kind.upper()
    if kind == "SPHERICAL":
        return dataclasses.replace(joint, type="S", axes=np.zeros((0, 3)), limits=None)
    if kind == "FIXED":
        return dataclasses.replace(joint, type="fixed", axes=np.zeros((0, 3)), limits=None)
    if kind.startswith("UJOINT_") and len(kind) == 9 and set(kind[7:]) <= set(_AXIS) and kind[7] != kind[8]:
        return dataclasses.replace(joint, type="U", axes=np.array([_AXIS[kind[7]], _AXIS[kind[8]]]), limits=None)
    raise PgaDynError(
        f"{where}: joint '{joint.name}': unsupported joint_type '{kind}' "
        "(read: SPHERICAL, FIXED, UJOINT_ab with a, b in X, Y, Z)"
    )


def load_extended_urdf(
    urdf_path: os.PathLike | str,
    yaml_path: os.PathLike | str | None = None,
    floating_base: bool = False,
    gravity: npt.ArrayLike = DEFAULT_GRAVITY,
) -> Robot:
    """Read a tree URDF and the YAML of its closed loops into a :class:`~pga_dyn.model.Robot`.

    Each 3D closure becomes a spherical loop joint named ``<A>__<B>`` between the links of
    its frames, centred at their common origin; the joints of ``name_mot`` are marked
    independent, the other moving joints dependent. A 6D closure becomes the loop joint it
    cuts (see ``weld_as_loop``). The file need not be assembled at q = 0: like any robot with loops,
    its passive coordinates are solved at the actuated position of q = 0
    (:meth:`pga_dyn.loops.Constraints.close_reference`), which names the loops that cannot close.

    Parameters
    ----------
    urdf_path : str or os.PathLike
    yaml_path : str or os.PathLike, optional
        Default: :func:`yaml_beside` (PgaDynError when there is none).
    floating_base : bool
        Add a floating (F) joint between the world and the root link.
    gravity : array_like (3,)
        The gravity vector in the world frame (m/s^2).
    """
    urdf_path = os.fspath(urdf_path)
    yaml_path = yaml_beside(urdf_path) if yaml_path is None else os.fspath(yaml_path)
    if yaml_path is None:
        raise PgaDynError(f"{urdf_path}: no YAML beside it (robot.yaml or the URDF's stem with .yaml)")
    content = _read_yaml(yaml_path)
    specs = urdf_specs(read_text(urdf_path), urdf_path)
    if specs["loops"] or specs["couplings"]:
        raise PgaDynError(f"{urdf_path}: has URDF+ <loop>/<coupling> elements and a YAML {yaml_path}; give one")
    joints = {j.name: j for j in specs["joints"]}

    retyped_names, retyped_types = _names(content, "joint_name", yaml_path), _names(content, "joint_type", yaml_path)
    retyped = dict(zip(retyped_names, retyped_types))
    if len(retyped) != len(retyped_names) or len(retyped_names) != len(retyped_types):
        raise PgaDynError(f"{yaml_path}: 'joint_name' and 'joint_type' must be lists of the same length")
    motors = _names(content, "name_mot", yaml_path)
    for name in [*retyped, *motors]:
        if name not in joints:
            raise PgaDynError(f"{yaml_path}: no joint named '{name}' in {urdf_path}")
    for name, kind in retyped.items():
        joints[name] = _retype(joints[name], kind, yaml_path)
    for name, joint in joints.items():
        if joint.type != "fixed":
            joints[name] = dataclasses.replace(joint, independent=name in motors)

    pairs = content.get("closed_loop") or []
    kinds = content.get("type", ["6D"] * len(pairs))
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise PgaDynError(f"{yaml_path}: 'closed_loop' must be a list of frame pairs [A, B]")
    if not isinstance(kinds, list) or len(kinds) != len(pairs):
        raise PgaDynError(f"{yaml_path}: 'type' must give one constraint type per closed loop")
    child_of = {j.name: j.child for j in joints.values()}
    links = {link.name for link in specs["links"]}
    loops = []
    for (a, b), kind in zip(pairs, kinds):
        if str(kind).upper() not in ("3D", "6D"):
            raise PgaDynError(f"{yaml_path}: closed loop [{a}, {b}]: unknown constraint type '{kind}' (3D or 6D)")
        ends = []
        for frame in (a, b):
            link = frame if frame in links else child_of.get(frame)
            if link is None:
                raise PgaDynError(f"{yaml_path}: closed loop [{a}, {b}]: no link or joint named '{frame}'")
            ends.append(link)
        if str(kind).upper() == "3D":
            loops.append(LoopSpec(f"{a}__{b}", "S", ends[0], ends[1]))
        else:
            loops.append(weld_as_loop(joints, ends, f"{yaml_path}: closed loop [{a}, {b}]"))
    return Robot(
        specs["name"],
        specs["links"],
        list(joints.values()),
        loops,
        (),
        gravity=gravity,
        floating_base=floating_base,
        source=urdf_path,
    )


def weld_as_loop(joints: dict, ends: Sequence[str], where: str) -> LoopSpec:
    """A 6D closure (frames A and B welded) as a loop joint, by re-hanging B's rigid group.

    From B, up the fixed joints, to the link b of the first moving joint J (p -> b, of type R,
    P, U or S, not actuated): the fixed joints on that path are reversed (parent and child
    swapped, origin inverted), B hangs from A by a fixed joint (identity: the frames coincide),
    and J becomes a loop joint of its own type between p (at J's origin) and b. Link frames and
    inertials are unchanged; the closure becomes exactly the joint it cut. The sides are tried
    in both orders (B must not be an ancestor of A)."""
    parent_joint = {j.child: j for j in joints.values()}

    def rigid_root(link):
        """The fixed joints from ``link`` up to the first link on a moving joint (or the root)."""
        path = []
        while link in parent_joint and parent_joint[link].type == "fixed":
            path.append(parent_joint[link])
            link = parent_joint[link].parent
        return path, link

    for a, b in (ends, ends[::-1]):
        path, link = rigid_root(b)
        cut = parent_joint.get(link)
        ancestors, up = set(), a
        while up in parent_joint:
            ancestors.add(up)
            up = parent_joint[up].parent
        if (
            cut is None
            or cut.type not in LOOP_JOINT_TYPES
            or cut.independent
            or link in ancestors
            or rigid_root(cut.parent)[1] == rigid_root(a)[1]
        ):  # a weld of a body to its parent locks J
            continue
        for joint in path:
            joints[joint.name] = dataclasses.replace(
                joint, parent=joint.child, child=joint.parent, origin=np.linalg.inv(joint.origin)
            )
        del joints[cut.name]
        name = f"{a}__{b}_weld"
        joints[name] = dataclasses.replace(
            cut,
            name=name,
            type="fixed",
            parent=a,
            child=b,
            origin=np.eye(4),
            axes=np.zeros((0, 3)),
            independent=None,
            mimic=None,
            limits=None,
        )
        return LoopSpec(cut.name, cut.type, cut.parent, link, cut.origin, np.eye(4), cut.axes)
    raise PgaDynError(
        f"{where}: a 6D closure needs, on one side, a passive R, P, U or S joint to cut "
        "(the first moving joint above its frame), not an ancestor of the other frame and not "
        "a joint that the weld would lock (a body welded to its parent)"
    )
