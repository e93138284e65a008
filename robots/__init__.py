"""Robot descriptions for pga-dyn: the built-in models and the URDF / URDF+ reader.

* :func:`load` builds a built-in robot by name (see :func:`available`);
* :func:`load_urdf` reads any URDF or URDF+ file, :func:`parse_urdf` reads URDF text.

The built-in models are URDF files in ``robots/data`` written by the project (see
``docs/robots.md``): ``puma560`` (Corke and Armstrong-Helouvry 1994, standard DH),
``go2`` (Unitree Go2, generated from the public description by ``robots/data/make_go2.py``, a
maintainer's script that is not installed; its licence text is ``robots/data/go2.LICENSE``), and
the parallel kinematic machines of the DRNG paper, URDF+ files with loop joints:
``2rru_1rrs`` (after Xu, Chai and Ding 2023) and ``2prs_1psr`` (after Shi, Zhang and Ding 2023).
Importing this package compiles nothing.
"""

from __future__ import annotations

import os

from pga_dyn.errors import PgaDynError
from pga_dyn.conventions import DEFAULT_GRAVITY

from .urdf import load_urdf, parse_urdf

__all__ = ["load", "available", "data_path", "load_urdf", "parse_urdf"]

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
