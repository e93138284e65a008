"""Robot logs made by an independent simulator, MuJoCo, for the identification benchmarks.

pga-dyn's own ``simulate`` computes forces from pga-dyn's model, so an identification judged on
them is judged on its own assumptions. This module makes data the way a robot does: MuJoCo
(``pip install mujoco``) integrates the arm under a tracking controller, with rotor armature,
viscous damping and dry friction (MuJoCo's ``frictionloss``: a soft constraint with stick
phases, not sign(qd)), and the log holds what the drives report: encoder positions (quantised
to ``bits`` per turn, plus white noise), the torque the controller commanded (plus noise),
optionally velocities (a first difference of the encoder, as drives compute them), motor
currents (torque / gain) and a channel delay. Sample times may jitter and drop, as a logger on a
non-real-time computer writes them.

* :func:`ur5_mjcf` - the UR5 of example-robot-data (its URDF compiled by MuJoCo's URDF reader,
  visuals and collisions dropped) with armature, damping and frictionloss on every joint: the
  robot file handed to pga-dyn, and the truth;
* :func:`fourier` - a random band-limited joint trajectory (finite Fourier series), inside the
  joint limits, for validation trajectories;
* :func:`track` - MuJoCo following a reference (t, q, qd, qdd at the control rate) with a
  computed-torque + PD controller on MuJoCo's own model, sub-stepped;
* :func:`log` - the tracked record turned into what a robot logs (quantisation, noise,
  jitter, decimation, currents, delay), as a dict of columns; :func:`write_csv` writes it.

Used by ``benchmarks/identify_logs.py``; nothing here is part of the installed package.
"""

from __future__ import annotations

import csv
import os
import xml.etree.ElementTree as ET

import numpy as np


#: Joint properties of the simulated arm: rotor inertia (kg m^2), viscous damping (N m s/rad),
#: dry friction (N m) per joint, of the size a UR5's drives have (the wrists' friction is a large
#: share of their torque, as on real arms).
ARMATURE = (0.25, 0.25, 0.12, 0.04, 0.04, 0.04)
DAMPING = (1.5, 1.2, 0.8, 0.25, 0.25, 0.2)
FRICTIONLOSS = (3.0, 2.5, 1.5, 0.6, 0.5, 0.4)


def ur5_mjcf(armature=ARMATURE, damping=DAMPING, frictionloss=FRICTIONLOSS, timestep=2.5e-4) -> str:
    """MJCF text of the UR5 of example-robot-data: its URDF compiled by MuJoCo (visual and
    collision meshes dropped: the inertials are the URDF's), saved by ``mj_saveLastXML``, with
    ``armature``, ``damping`` and ``frictionloss`` (one per joint, or None) on the joints and the
    RK4 integrator at ``timestep`` s."""
    import mujoco

    from oracle import erd_path

    root = ET.parse(erd_path("ur_description/urdf/ur5_robot.urdf")).getroot()
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    model = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    with _scratch() as path:
        mujoco.mj_saveLastXML(path, model)
        mjcf = ET.parse(path).getroot()
    ET.SubElement(mjcf, "option", timestep=repr(timestep), integrator="RK4")
    for parent in list(mjcf.iter()):  # the URDF's empty fixed end frames: nothing for the dynamics
        for frame in parent.findall("frame"):
            parent.remove(frame)
    for k, joint in enumerate(mjcf.iter("joint")):
        joint.attrib.pop("actuatorfrcrange", None)
        for name, values in (("armature", armature), ("damping", damping), ("frictionloss", frictionloss)):
            if values is not None and values[k]:
                joint.set(name, repr(float(values[k])))
    ET.indent(mjcf)
    return ET.tostring(mjcf, encoding="unicode")


class _scratch:
    """A temporary file path, removed on exit."""

    def __enter__(self):
        import tempfile

        fd, self.path = tempfile.mkstemp(suffix=".xml")
        os.close(fd)
        return self.path

    def __exit__(self, *exc):
        os.remove(self.path)


def limits(xml: str) -> tuple:
    """(lower, upper) joint ranges (n,) of an MJCF text, as MuJoCo compiled them."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    return model.jnt_range[:, 0].copy(), model.jnt_range[:, 1].copy()


def fourier(n: int, duration: float, rate: float, seed: int, period: float = 10.0, harmonics: int = 5,
            amplitude=1.0, velocity=2.0, centre=None) -> tuple:
    """A random finite Fourier series per joint (Swevers et al. 1997), q_j(t) = c_j + sum_l
    (a_jl sin(l w t) - b_jl cos(l w t)) / (l w) (offset so that q_j(0) = c_j), sampled at
    ``rate`` Hz for ``duration`` s, scaled so that |q - c| <= ``amplitude`` (rad, scalar or (n,))
    and |qd| <= ``velocity``. Returns t (ns,), q, qd, qdd (ns, n)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration * rate)) + 1) / rate
    w = 2 * np.pi / period
    l = np.arange(1, harmonics + 1)
    a, b = rng.standard_normal((2, n, harmonics)) / l
    s, c = np.sin(np.outer(t, l * w)), np.cos(np.outer(t, l * w))  # (ns, L)
    q = (s @ (a / (l * w)).T - c @ (b / (l * w)).T) + (b / (l * w)).sum(axis=1)
    qd = c @ a.T + s @ b.T
    qdd = (-s * (l * w)) @ a.T + (c * (l * w)) @ b.T
    scale = np.minimum(np.asarray(amplitude, float) / np.abs(q).max(axis=0), np.asarray(velocity, float) / np.abs(qd).max(axis=0))
    centre = np.zeros(n) if centre is None else np.asarray(centre, float)
    return t, centre + q * scale, qd * scale, qdd * scale


def full_mass_matrix(model, data, out) -> None:
    """MuJoCo's joint-space mass matrix (armature included) into ``out`` (nv, nv): mj_fullM,
    whose arguments changed in MuJoCo 4 (the data instead of its sparse qM)."""
    import mujoco

    if hasattr(data, "qM"):
        mujoco.mj_fullM(model, out, data.qM)
    else:
        mujoco.mj_fullM(model, data, out)


def track(xml: str, t, q_ref, qd_ref, qdd_ref, kp=400.0, kd=40.0) -> dict:
    """MuJoCo following the reference (t (ns,) uniform at the control rate; q_ref, qd_ref,
    qdd_ref (ns, n)) from q_ref[0] at rest velocity qd_ref[0]: at each control instant the
    command tau = M(q) (qdd_ref + kp e + kd ed) + c(q, qd) (MuJoCo's mass matrix, armature
    included, and bias forces; friction not compensated) is held for the control period while
    MuJoCo integrates at its own timestep. Returns t, q, qd (the true state at each control
    instant) and tau (the command held from it), each (ns, n) but t (ns,)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    dt = float(t[1] - t[0])
    substeps = int(round(dt / model.opt.timestep))
    if abs(substeps * model.opt.timestep - dt) > 1e-12:
        raise ValueError(f"the control period {dt} is not a multiple of the timestep {model.opt.timestep}")
    n, ns = model.nv, len(t)
    data.qpos[:] = q_ref[0]
    data.qvel[:] = qd_ref[0]
    q, qd, tau = np.empty((ns, n)), np.empty((ns, n)), np.empty((ns, n))
    M = np.empty((n, n))
    for k in range(ns):
        mujoco.mj_forward(model, data)
        full_mass_matrix(model, data, M)
        q[k], qd[k] = data.qpos, data.qvel
        acc = qdd_ref[k] + kp * (q_ref[k] - data.qpos) + kd * (qd_ref[k] - data.qvel)
        tau[k] = M @ acc + data.qfrc_bias
        data.qfrc_applied[:] = tau[k]
        for _ in range(substeps):
            mujoco.mj_step(model, data)
    return {"t": np.asarray(t, float).copy(), "q": q, "qd": qd, "tau": tau}


def log(record: dict, seed: int, bits: int = 18, q_noise: float = 1e-5, tau_noise: float = 0.01, every: int = 1,
        jitter: float = 0.0, drop: float = 0.0, velocity: bool = False, gains=None, delay: int = 0) -> dict:
    """What a robot logs of a tracked ``record`` (:func:`track`): positions quantised to
    2 pi / 2^``bits`` with white noise of ``q_noise`` rad; torques with white noise of
    ``tau_noise`` times each joint's RMS torque, ``delay`` control periods late (the torque
    channel lags the positions); every ``every``-th control instant, each kept sample's time
    stamp moved by a uniform jitter of +-``jitter`` s (the logger's clock) and a share ``drop``
    of the samples lost; ``velocity``: the drives' velocity, the backward difference of the
    quantised encoder over one control period; ``gains`` (n,): currents (A) = torque / gain
    instead of torques. Returns columns {"t", "q" (ns, n), "tau" or "current", and "qd"}."""
    rng = np.random.default_rng(seed)
    t, q, tau = record["t"], record["q"], record["tau"]
    step = 2 * np.pi / 2 ** bits
    encoder = np.round(q / step) * step
    measured = encoder + q_noise * rng.standard_normal(q.shape)
    dt = t[1] - t[0]
    qd = np.vstack([np.zeros((1, q.shape[1])), np.diff(encoder, axis=0) / dt])
    torque = tau + tau_noise * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.standard_normal(tau.shape)
    if delay:
        torque = np.vstack([np.repeat(torque[:1], delay, axis=0), torque[:-delay]])
    keep = np.arange(0, len(t), every)
    if drop:
        keep = keep[rng.random(len(keep)) >= drop]
    out = {"t": t[keep] + (rng.uniform(-jitter, jitter, len(keep)) if jitter else 0.0), "q": measured[keep]}
    if velocity:
        out["qd"] = qd[keep]
    if gains is None:
        out["tau"] = torque[keep]
    else:
        out["current"] = torque[keep] / np.asarray(gains, float)
    return out


def write_csv(path: str, columns: dict, names, prefixes=None) -> str:
    """A CSV file of ``columns`` (:func:`log`): a header ``t`` then ``PREFIX_NAME`` per joint
    ``NAME`` of ``names`` for each array column ("q" -> "q_NAME" unless ``prefixes`` maps it to
    another prefix, as a robot's logger names its channels)."""
    prefixes = prefixes or {}
    header, blocks = ["t"], [columns["t"][:, None]]
    for key, value in columns.items():
        if key != "t":
            header += [f"{prefixes.get(key, key)}_{name}" for name in names]
            blocks.append(value)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(np.hstack(blocks).tolist())
    return path
