"""Identification of a robot's dynamics from data: from an exciting trajectory to identified
parameters, for serial arms and parallel kinematic machines (docs/identification.md).

* :func:`excite`, :func:`random_excitation` - Fourier trajectories inside position, velocity
  and acceleration limits, optimised for the condition number of the regressor
  (:mod:`.excitation`);
* :func:`simulate` - the forces of the model along a trajectory, with friction and noise
  (:mod:`.simulation`);
* :func:`trajectory`, :func:`read_trajectory`, :class:`Trajectory` - measurements from arrays,
  CSV or NPZ files, derivatives by zero-phase filtering (:mod:`.data`);
* :func:`identification_model` - base inertial parameters with friction and armature, their
  identifiability decided together (:mod:`.model`);
* :func:`identify`, :func:`map_estimate` - OLS / WLS with standard deviations, MAP with a
  prior (:mod:`.estimation`);
* :func:`violations`, :func:`consistent_estimate` - physical consistency: the check, and the
  estimate with positive semidefinite pseudo-inertias (an LMI; :mod:`.consistency`);
* :func:`write_urdf`, :func:`report` - results out (:mod:`.results`).
"""

from pga_dyn.lazy import lazy_getattr

_LAZY = {
    "excite": "excitation",
    "random_excitation": "excitation",
    "limits": "excitation",
    "simulate": "simulation",
    "trajectory": "data",
    "read_trajectory": "data",
    "Trajectory": "data",
    "identification_model": "model",
    "identify": "estimation",
    "map_estimate": "estimation",
    "default_prior": "estimation",
    "violations": "consistency",
    "model_violations": "consistency",
    "consistent_estimate": "consistency",
    "write_urdf": "results",
    "report": "results",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr(__name__, _LAZY)
