"""pga-dyn: rigid-body dynamics in projective geometric algebra and the identifiability of
inertial parameters.

The public API (imported lazily, so that ``import pga_dyn`` stays cheap):

* :class:`Robot` (``pga_dyn.model``), loaded with :func:`robots.load` or :func:`robots.load_urdf`;
* :func:`regressor`, :func:`regressor_tensor`, :func:`inertial_parameters`,
  :func:`from_link_parameters`, :func:`to_link_parameters` (``pga_dyn.tp_regressor``: the TP model);
* :class:`Kinematics`, :func:`table2` (``pga_dyn.kinematics``);
* :func:`sample_states` (``pga_dyn.sampling``): valid states, assembled for closed loops
  (``pga_dyn.loops``);
* :mod:`pga_dyn.pga`: the PGA operations on kingdon multivectors;
* :class:`PgaDynError`: the exception raised for every bad input.
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
    "table2": "kinematics",
    "sample_states": "sampling",
    "States": "sampling",
}

__all__ = ["PgaDynError", "ModelError", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY)
