"""pga-dyn: rigid-body dynamics in projective geometric algebra and the identifiability of
inertial parameters.

The public API (imported lazily, so that ``import pga_dyn`` stays cheap):

* :class:`Robot` (``pga_dyn.model``, frozen), loaded with :func:`robots.load` or
  :func:`robots.load_urdf`;
* :func:`regressor`, :func:`regressor_tensor`, :func:`inertial_parameters`,
  :func:`from_link_parameters`, :func:`to_link_parameters` (``pga_dyn.tp_regressor``: the TP model);
* :class:`Kinematics` (``pga_dyn.kinematics``);
* :func:`sample_states` and the :class:`States` it returns (``pga_dyn.sampling``): valid states,
  assembled for closed loops (``pga_dyn.loops``);
* :mod:`pga_dyn.pga`: the PGA operations on kingdon multivectors; :mod:`pga_dyn.conventions`:
  parameter orders, joint codes, gravity;
* :class:`PgaDynError`: the exception raised for every bad input.

docs/architecture.md draws the layers: ``pga_dyn`` <- ``drng``, ``robots``; the CLI
(the package ``pga_dyn.cli``, one module per command) is the only code that imports all three.
:mod:`pga_dyn.info` gives the report of ``pga-dyn info``.
"""

from .errors import ModelError, PgaDynError
from .lazy import lazy_getattr

__version__ = "0.1.0"

_LAZY = {
    "Robot": "model",
    "regressor": "tp_regressor",
    "regressor_tensor": "tp_regressor",
    "inertial_parameters": "tp_regressor",
    "from_link_parameters": "tp_regressor",
    "to_link_parameters": "tp_regressor",
    "Kinematics": "kinematics",
    "sample_states": "sampling",
    "States": "sampling",
}

__all__ = ["PgaDynError", "ModelError", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY)
