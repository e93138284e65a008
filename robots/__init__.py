"""Robot descriptions for pga-dyn: the built-in models and the readers of robot files.

* :func:`load` builds a built-in robot by name (see :func:`available`);
* :func:`load_file` reads any robot file, by its root element: URDF / URDF+, Extended URDF +
  YAML (a YAML given, or beside the URDF), MJCF;
* :func:`load_urdf` reads a URDF or URDF+ file, :func:`parse_urdf` reads URDF text;
* :func:`load_extended_urdf` reads a tree URDF with the YAML of its closed loops
  (Gepetto's example-parallel-robots);
* :func:`load_mjcf` reads an MJCF file (MuJoCo), :func:`parse_mjcf` reads MJCF text,
  :func:`from_mujoco` a compiled ``mujoco.MjModel`` (all three through MuJoCo's compiler, the
  ``mjcf`` extra), :func:`mjcf_armature` its joints' armature (rotor inertia);
  :func:`write_mjcf` writes identified parameters into a copy of an MJCF file.

The built-in models are URDF files in ``robots/data`` written by the project (see
``docs/robots.md``): ``puma560`` (Corke and Armstrong-Helouvry 1994, standard DH),
``go2`` (Unitree Go2, generated from the public description by ``tests/make_go2.py``, a
maintainer's script that is not installed; its licence text is ``robots/data/go2.LICENSE``), and
the parallel kinematic machines of the DRNG paper, URDF+ files with loop joints:
``2rru_1rrs`` (after Xu, Chai and Ding 2023) and ``2prs_1psr`` (after Shi, Zhang and Ding 2023).
Importing this package compiles nothing.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from pga_dyn.errors import PgaDynError
from pga_dyn.conventions import DEFAULT_GRAVITY

from .extended import load_extended_urdf, yaml_beside
from .mjcf import from_mujoco, load_mjcf, mjcf_armature, parse_mjcf, write_mjcf
from .urdf import load_urdf, parse_urdf, read_text

__all__ = ["load", "available", "data_path", "load_file", "load_urdf", "parse_urdf", "load_extended_urdf",
           "load_mjcf", "parse_mjcf", "from_mujoco", "mjcf_armature", "write_mjcf"]

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

#: Built-in models: name -> (file in robots/data, floating base by default).
_BUILTIN = {
    "puma560": ("puma560.urdf", False),
    "go2": ("go2.urdf", True),
    "2rru_1rrs": ("2rru_1rrs.urdf", False),
    "2prs_1psr": ("2prs_1psr.urdf", False),
}


def available() -> list:
    """Sorted names of the built-in robots."""
    return sorted(_BUILTIN)


def _entry(name):
    key = str(name).lower()
    if key not in _BUILTIN:
        raise PgaDynError(f"unknown robot '{name}'; the built-in robots are: {', '.join(available())}")
    return _BUILTIN[key]


def data_path(name: str) -> str:
    """Path of the URDF file of built-in robot ``name``."""
    return os.path.join(_DATA, _entry(name)[0])


def load(name: str, floating_base: bool | None = None, gravity=DEFAULT_GRAVITY):
    """Build the built-in robot ``name`` as a :class:`~pga_dyn.model.Robot`.

    Parameters
    ----------
    name : str
        One of :func:`available` (case-insensitive); another name raises
        :class:`~pga_dyn.errors.PgaDynError` listing them.
    floating_base : bool or None
        None takes the model's default: floating for ``go2``, fixed for the others.
    gravity : array_like (3,)
        The gravity vector in the world frame (m/s^2).
    """
    filename, floating_default = _entry(name)
    floating = floating_default if floating_base is None else bool(floating_base)
    return load_urdf(os.path.join(_DATA, filename), floating_base=floating, gravity=gravity)


def load_file(path, yaml=None, floating_base: bool | None = None, gravity=None):
    """Read the robot file at ``path`` into a :class:`~pga_dyn.model.Robot`, by its root element.

    ``<mujoco>``: MJCF (:func:`load_mjcf`; ``floating_base`` None follows a free joint,
    ``gravity`` None is the file's ``<option gravity>``). ``<robot>``: with a ``yaml`` given, or
    a YAML beside the file (:func:`yaml_beside`) and no URDF+ ``<loop>`` in it, Extended URDF +
    YAML (:func:`load_extended_urdf`); otherwise URDF / URDF+ (:func:`load_urdf`). For URDF,
    ``floating_base`` None is False and ``gravity`` None is (0, 0, -9.81).
    """
    path = os.fspath(path)
    try:
        root = ET.fromstring(read_text(path))
    except ET.ParseError:
        root = None  # the URDF reader says what is wrong, naming the file
    if root is not None and root.tag == "mujoco":
        return load_mjcf(path, floating_base=floating_base, gravity=gravity)
    floating = bool(floating_base)
    gravity = DEFAULT_GRAVITY if gravity is None else gravity
    if yaml is None and root is not None and root.find("loop") is None and root.find("coupling") is None:
        yaml = yaml_beside(path)
    if yaml is not None:
        return load_extended_urdf(path, yaml, floating_base=floating, gravity=gravity)
    return load_urdf(path, floating_base=floating, gravity=gravity)
