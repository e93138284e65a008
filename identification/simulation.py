"""Simulated measurements, a stage of the identification (:mod:`identification` lists them
in order): the generalized forces of a robot model along a trajectory, with friction, armature
and noise, for an identification without a robot.

    tau = Y(q, qd, qdd) pi + D(q, qd, qdd) x + noise,

Y pi the rigid-body forces of pga-dyn's TP model (:func:`pga_dyn.regressor`; for closed loops
the forces of the actuated coordinates, each state assembled along a path from q0), D x the
extra terms (fv qd + fc sign(qd) + f0 + Ia qdd, the other friction models and the friction of
passive coordinates, G^T F) with the columns of :func:`identification.model.extra_forces`,
the same as the identification's, and Gaussian noise of
standard deviation ``noise`` times the RMS of each coordinate's noise-free force (``noise=0.01``:
1 % noise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from drng.result import one_blas_thread
from pga_dyn.errors import PgaDynError

from .model import extra_forces, extra_values, speed_scales, states_of

if TYPE_CHECKING:
    import numpy.typing as npt

    from pga_dyn.model import Robot

    from .data import Trajectory


@one_blas_thread
def simulate(
    robot: Robot,
    trajectory: Trajectory,
    phi: npt.ArrayLike | None = None,
    extras: dict | None = None,
    noise: float = 0.0,
    seed: int | None = None,
    coulomb_speed: npt.ArrayLike | None = None,
    stribeck_speed: npt.ArrayLike | None = None,
) -> tuple:
    """The ``trajectory`` with the forces tau (module docstring) of ``robot`` with link-frame
    parameters ``phi`` ((n, 10) or (10 n,); default the model file's) and ``extras``
    ({term: value or values}, terms of :data:`~identification.model.EXTRA_TERMS`, as in
    :func:`~identification.model.extra_values`: ``{"stribeck-coulomb": fc,
    "stribeck-static": fs}`` is a Stribeck curve, ``{"passive-viscous": 0.02}`` damping at every
    passive joint); ``coulomb_speed`` v_c of ``coulomb-tanh`` and ``stribeck_speed`` v_s of the
    Stribeck curve (a number or one per actuated coordinate; required with those terms).
    Returns (trajectory with tau, the noise standard deviations (n_a,))."""
    import pga_dyn

    if not (isinstance(noise, (int, float)) and np.isfinite(noise) and noise >= 0):
        raise PgaDynError(f"noise must be a non-negative number (a fraction of each force's RMS), got {noise!r}")
    values = extra_values(robot, extras or {})
    terms = tuple(term for term, v in values.items() if np.any(v))
    pairs = tuple((term, int(j)) for term in terms for j in np.flatnonzero(values[term]))
    speeds = speed_scales(robot, terms, coulomb_speed, stribeck_speed)
    states = states_of(robot, trajectory)
    pi = pga_dyn.inertial_parameters(robot) if phi is None else pga_dyn.from_link_parameters(robot, phi)
    tau = states.regressor() @ pi
    D = extra_forces(pairs, states.qd_a, states.qdd_a, states.qd, states.G, *speeds)
    tau += D @ np.array([values[term][j] for term, j in pairs])
    sigma = noise * np.sqrt(np.mean(tau**2, axis=0))
    if noise:
        tau = tau + sigma * np.random.default_rng(seed).standard_normal(tau.shape)
    return trajectory.with_tau(tau, source=f"simulation of {robot.name}"), sigma
