"""Identification of a robot's dynamics from data: from an exciting trajectory to identified
parameters, for serial arms and parallel kinematic machines (docs/identification.md).

A pipeline: one module per stage, in the order of the job; a module imports only the modules
above it in this list (tests/test_architecture.py checks it).

1. :mod:`.signals` - sampled signals: zero-phase smoothing and differentiation of positions
   (arrays in, arrays out);
2. :mod:`.data` - measurements in and out: :func:`trajectory`, :func:`read_trajectory`,
   :class:`Trajectory` from arrays, CSV or NPZ files or ROS bags, checked value by value (missing
   qd, qdd from :mod:`.signals`), experiments joined by :func:`combine`;
3. :mod:`.model` - the model columns: :func:`identification_model`, base inertial parameters
   with friction and armature, their identifiability decided together, and the states of a
   trajectory;
4. :mod:`.excitation` - :func:`excite`, :func:`random_excitation`, :func:`limits`: Fourier
   trajectories inside position, velocity and acceleration limits, optimised for the condition
   number of the model's regressor, with their report;
5. :mod:`.simulation` - :func:`simulate`: the forces of the model along a trajectory, with
   friction and noise (measurements without a robot);
6. :mod:`.physics` - physical consistency of inertial parameters: pseudo-inertias, mass
   properties, :func:`violations`, :func:`model_violations`;
7. :mod:`.estimation` - :func:`identify`, :func:`map_estimate`, :func:`default_prior`: OLS / WLS
   with standard deviations, MAP with a prior;
8. :mod:`.energy` - :func:`identify_energy`: the same parameters from the work of the forces
   over windows of time (kinetic plus potential energy and friction work), without accelerations;
9. :mod:`.payload` - :func:`identify_payload`, :func:`drive_gains`: the parameters of a load at a
   link (its regressor), and the drives' current-to-force gains from a known payload mass;
10. :mod:`.consistency` - :func:`consistent_estimate`: the estimate with positive semidefinite
   pseudo-inertias and bounded masses and extents (LMIs), and which full parameters the data
   determine on their own (:func:`identifiability`);
11. :mod:`.selection` - :func:`select`: the model terms and the estimate chosen by
    cross-validation over blocks of the record;
12. :mod:`.diagnostics` - :func:`report`, :func:`report_text`: the report of an identification as
    a dict and as text, with checks that can fail and a verdict (held-out relative residual
    error, noise floor, residual whiteness, force delay), and the plot of measured against
    predicted forces;
13. :mod:`.export` - :func:`write_model`, :func:`write_urdf`, :func:`export_plan`: the identified
    model written to a new robot file (inertials, joint friction and armature where the format
    holds them), :func:`write_sidecar` and :func:`saved_model`: what the file cannot hold beside
    it, and both read back for predictions;
14. :mod:`.legged` - legged robots: a floating base with contacts, :func:`read_legged` and
    :func:`legged_record` (the trunk's pose and twist, joint torques, contact forces),
    :func:`sensing_rows` of the sensing cases A-D, which parameters each case identifies over the
    record's contact modes (:func:`case_nullspace`, certified), :func:`identify_legged`, a
    :class:`LeggedEstimate` with its held-out check;
15. :mod:`.standing` - :func:`standing_excitation`: excitation a legged robot can run, the trunk's
    six channels as multisines with the feet pinned and the joints by inverse kinematics, inside
    the friction cone and the joint limits, optimised for the condition number, written as a
    legged log a controller tracks (:class:`StandingExcitation`);
16. :mod:`.job` - :func:`identify_log`: the whole job of ``pga-dyn identify`` in one call (hold-out,
    model selection, delay, estimate, report), an :class:`Identification`.
"""

from pga_dyn.lazy import lazy_getattr

_LAZY = {
    "trajectory": "data",
    "read_trajectory": "data",
    "Trajectory": "data",
    "combine": "data",
    "identification_model": "model",
    "excite": "excitation",
    "random_excitation": "excitation",
    "limits": "excitation",
    "simulate": "simulation",
    "violations": "physics",
    "model_violations": "physics",
    "identify": "estimation",
    "map_estimate": "estimation",
    "default_prior": "estimation",
    "identify_energy": "energy",
    "identify_payload": "payload",
    "drive_gains": "payload",
    "consistent_estimate": "consistency",
    "body_bounds": "consistency",
    "identifiability": "consistency",
    "report": "diagnostics",
    "report_text": "diagnostics",
    "write_urdf": "export",
    "export_plan": "export",
    "export_text": "export",
    "file_format": "export",
    "write_model": "export",
    "write_sidecar": "export",
    "saved_model": "export",
    "select": "selection",
    "read_legged": "legged",
    "legged_record": "legged",
    "LeggedRecord": "legged",
    "sensing_rows": "legged",
    "case_nullspace": "legged",
    "identify_legged": "legged",
    "LeggedEstimate": "legged",
    "legged_forces": "legged",
    "standing_excitation": "standing",
    "standing_pose": "standing",
    "StandingExcitation": "standing",
    "identify_log": "job",
    "Identification": "job",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr(__name__, _LAZY)
