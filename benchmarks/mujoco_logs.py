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


def fourier(
    n: int,
    duration: float,
    rate: float,
    seed: int,
    period: float = 10.0,
    harmonics: int = 5,
    amplitude=1.0,
    velocity=2.0,
    centre=None,
) -> tuple:
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
    scale = np.minimum(
        np.asarray(amplitude, float) / np.abs(q).max(axis=0), np.asarray(velocity, float) / np.abs(qd).max(axis=0)
    )
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


def track(xml: str, t, q_ref, qd_ref, qdd_ref, kp=400.0, kd=40.0, qpos0=None) -> dict:
    """MuJoCo following the reference (t (ns,) uniform at the control rate; q_ref, qd_ref,
    qdd_ref (ns, n) of the driven joints) from q_ref[0] at velocity qd_ref[0]. A model without
    ``<actuator>`` (a serial arm) drives every joint by computed torque + PD on MuJoCo's own
    model, tau = M(q) (qdd_ref + kp e + kd ed) + c(q, qd) (armature included, friction not
    compensated); a model with motors on some joints (a parallel machine, its loops closed by
    equality constraints) drives those by PD alone, tau = kp e + kd ed. The command is held for
    the control period while MuJoCo integrates at its own timestep. ``qpos0``: the whole
    starting configuration (default: the model's, with the driven joints at q_ref[0]). Returns
    t (ns,), q, qd (ns, n: the true state of the driven joints at each control instant), tau
    (the command held from it), and q_all (ns, nq: every joint)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    dt = float(t[1] - t[0])
    substeps = int(round(dt / model.opt.timestep))
    if abs(substeps * model.opt.timestep - dt) > 1e-12:
        raise ValueError(f"the control period {dt} is not a multiple of the timestep {model.opt.timestep}")
    driven = model.jnt_dofadr[model.actuator_trnid[:, 0]] if model.nu else np.arange(model.nv)
    n, ns = len(driven), len(t)
    if qpos0 is not None:
        data.qpos[:] = qpos0
    data.qpos[driven] = q_ref[0]
    data.qvel[driven] = qd_ref[0]
    q, qd, tau, q_all = np.empty((ns, n)), np.empty((ns, n)), np.empty((ns, n)), np.empty((ns, model.nq))
    M = np.empty((model.nv, model.nv))
    for k in range(ns):
        mujoco.mj_forward(model, data)
        q[k], qd[k], q_all[k] = data.qpos[driven], data.qvel[driven], data.qpos
        feedback = kp * (q_ref[k] - q[k]) + kd * (qd_ref[k] - qd[k])
        if model.nu:
            tau[k] = feedback
            data.ctrl[:] = tau[k]
        else:
            full_mass_matrix(model, data, M)
            tau[k] = M @ (qdd_ref[k] + feedback) + data.qfrc_bias
            data.qfrc_applied[:] = tau[k]
        for _ in range(substeps):
            mujoco.mj_step(model, data)
    return {"t": np.asarray(t, float).copy(), "q": q, "qd": qd, "tau": tau, "q_all": q_all}


def log(
    record: dict,
    seed: int,
    bits: int = 18,
    q_noise: float = 1e-5,
    tau_noise: float = 0.01,
    every: int = 1,
    jitter: float = 0.0,
    drop: float = 0.0,
    velocity: bool = False,
    gains=None,
    delay: int = 0,
    passive=None,
) -> dict:
    """What a robot logs of a tracked ``record`` (:func:`track`): positions quantised to
    2 pi / 2^``bits`` with white noise of ``q_noise`` rad; torques with white noise of
    ``tau_noise`` times each joint's RMS torque, ``delay`` control periods late (the torque
    channel lags the positions); every ``every``-th control instant, each moved by a uniform
    jitter of up to +-``jitter`` s to another control instant (a logger that is not real-time
    samples at irregular times and stamps them with the controller's clock) and a share
    ``drop`` of the samples lost; ``velocity``: the drives' velocity, the backward difference of the
    quantised encoder over one control period; ``gains`` (n,): currents (A) = torque / gain
    instead of torques; ``passive``: {name: qpos index} of passive joints with encoders (a parallel
    machine's elbows), logged from ``record["q_all"]`` as the driven ones (quantised, noisy). Returns
    columns {"t", "q" (ns, n), "tau" or "current", "qd", and "passive" {name: (ns,)}}."""
    rng = np.random.default_rng(seed)
    t, q, tau = record["t"], record["q"], record["tau"]
    step = 2 * np.pi / 2**bits
    encoder = np.round(q / step) * step
    measured = encoder + q_noise * rng.standard_normal(q.shape)
    passive = {
        name: np.round(record["q_all"][:, k] / step) * step + q_noise * rng.standard_normal(len(t))
        for name, k in (passive or {}).items()
    }
    dt = t[1] - t[0]
    qd = np.vstack([np.zeros((1, q.shape[1])), np.diff(encoder, axis=0) / dt])
    torque = tau + tau_noise * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
    if delay:
        torque = np.vstack([np.repeat(torque[:1], delay, axis=0), torque[:-delay]])
    keep = np.arange(0, len(t), every)
    if jitter:
        moved = keep + np.round(rng.uniform(-jitter, jitter, len(keep)) / dt).astype(int)
        keep = np.unique(np.clip(moved, 0, len(t) - 1))
    if drop:
        keep = keep[rng.random(len(keep)) >= drop]
    out = {"t": t[keep], "q": measured[keep]}
    if passive:
        out["passive"] = {name: x[keep] for name, x in passive.items()}
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
    another prefix, as a robot's logger names its channels); "passive" {name: (ns,)} as q_name."""
    prefixes = prefixes or {}
    header, blocks = ["t"], [columns["t"][:, None]]
    for key, value in columns.items():
        if key == "passive":
            header += [f"q_{name}" for name in value]
            blocks.append(np.column_stack(list(value.values())))
        elif key != "t":
            header += [f"{prefixes.get(key, key)}_{name}" for name in names]
            blocks.append(value)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(np.hstack(blocks).tolist())
    return path


#: The planar five-bar: base joints at x = -+ FIVE_BAR[0], proximal links FIVE_BAR[1], distal
#: links FIVE_BAR[2] (m), closed at the tip point, which is at height FIVE_BAR[3] (m) at qpos0.
FIVE_BAR = (0.1, 0.2, 0.25, 0.3)


#: The tool at the tip, carried by distal link 1: a 0.3 kg aluminium disc of radius 3 cm.
TOOL = """<site name="tip" pos="%r 0 0"/>
        <body name="tool" pos="%r 0 0"><inertial pos="0 0 0" mass="0.3" diaginertia="6.75e-5 1.35e-4 6.75e-5"/></body>"""


def five_bar_mjcf(elbow_damping: float = 0.0, timestep: float = 2.5e-4) -> str:
    """MJCF text of a planar five-bar in the vertical x-z plane (joint axes along y, gravity in
    the plane): two actuated base joints ``a1``, ``a2``, two passive elbows ``p1``, ``p2``, the
    distal links closed at the tip by a ``connect`` equality. qpos0 is assembled with the tip
    at (0, 0, h) and both elbows pointing outwards (the assembly mode the model describes).
    Links are aluminium tubes (masses and inertias of slender rods, centre of mass mid-link).
    ``elbow_damping`` (N m s/rad) on the passive elbows. The connect constraint is made stiff
    (solref 1 ms, solimp 0.9999): MuJoCo's default leaves the loop open by about a millimetre
    under this machine's accelerations."""
    d, l1, l2, h = FIVE_BAR
    parts = []
    for side, sign in ((1, -1.0), (2, 1.0)):
        a = np.array([sign * d, 0.0, 0.0])
        tip = np.array([0.0, 0.0, h])
        # the elbow b: |b - a| = l1, |tip - b| = l2, the one further out (|b_x| larger)
        r = np.linalg.norm(tip - a)
        along = (l1**2 - l2**2 + r**2) / (2 * r)
        normal = np.array([-(tip - a)[2], 0.0, (tip - a)[0]]) / r  # in the plane, normal to a -> tip
        b = max(
            (a + along * (tip - a) / r + s * np.sqrt(l1**2 - along**2) * normal for s in (-1, 1)),
            key=lambda p: abs(p[0]),
        )
        angle1 = float(np.arctan2(-(b - a)[2], (b - a)[0]))  # rotation about y taking x to (b - a)
        angle2 = float(np.arctan2(-(tip - b)[2], (tip - b)[0])) - angle1
        m1, m2 = (float(2700 * np.pi * (0.012**2 - 0.010**2) * length) for length in (l1, l2))  # Al tubes
        i1, i2 = m1 * l1**2 / 12, m2 * l2**2 / 12
        damping = f' damping="{elbow_damping!r}"' if elbow_damping else ""
        parts.append(f"""
    <body name="proximal{side}" pos="{float(a[0])!r} 0 0" euler="0 {angle1!r} 0">
      <joint name="a{side}" type="hinge" axis="0 1 0"/>
      <inertial pos="{l1 / 2!r} 0 0" mass="{m1!r}" diaginertia="{1e-5!r} {i1!r} {i1!r}"/>
      <body name="distal{side}" pos="{l1!r} 0 0" euler="0 {angle2!r} 0">
        <joint name="p{side}" type="hinge" axis="0 1 0"{damping}/>
        <inertial pos="{l2 / 2!r} 0 0" mass="{m2!r}" diaginertia="{1e-5!r} {i2!r} {i2!r}"/>
        {TOOL % (l2, l2) if side == 1 else f'<site name="tip2" pos="{l2!r} 0 0"/>'}
      </body>
    </body>""")
    return f"""<mujoco model="five_bar">
  <compiler angle="radian"/>
  <option timestep="{timestep!r}" integrator="RK4"/>
  <worldbody>{"".join(parts)}
  </worldbody>
  <equality>
    <connect name="tip" site1="tip" site2="tip2" solref="0.001 1" solimp="0.9999 0.9999 0.001"/>
  </equality>
  <actuator>
    <motor name="m1" joint="a1"/>
    <motor name="m2" joint="a2"/>
  </actuator>
</mujoco>
"""


def passive_joints(xml: str) -> dict:
    """{name: qpos index} of the joints without a motor of an MJCF text (a parallel machine's
    passive joints)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    driven = set(model.actuator_trnid[:, 0].tolist())
    return {model.joint(j).name: int(model.jnt_qposadr[j]) for j in range(model.njnt) if j not in driven}


def assembled(xml: str, q_a, mirror: bool = False) -> np.ndarray:
    """qpos of the five-bar of ``xml`` at actuated angles ``q_a`` (a1, a2), its loop closed by
    Newton on the passive angles from qpos0 with MuJoCo's own kinematics (the assembly mode the
    model describes); ``mirror``: in the other assembly mode, the tip at the mirror image of that
    one across the line through the two elbows."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    a = [model.jnt_qposadr[model.joint(name).id] for name in ("a1", "a2")]
    p = [model.jnt_qposadr[model.joint(name).id] for name in ("p1", "p2")]
    data.qpos[a] = q_a
    for _ in range(200):  # close the loop in the model's mode by Newton on the passive angles
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        r = data.site("tip").xpos - data.site("tip2").xpos
        if np.linalg.norm(r) < 1e-13:
            break
        J1, J2 = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacSite(model, data, J1, None, model.site("tip").id)
        mujoco.mj_jacSite(model, data, J2, None, model.site("tip2").id)
        data.qpos[p] -= np.linalg.lstsq((J1 - J2)[:, p], r, rcond=None)[0]
    if not mirror:
        return data.qpos.copy()
    elbows = [data.xpos[model.body(f"distal{i}").id].copy() for i in (1, 2)]
    tip = data.site("tip").xpos.copy()
    u = (elbows[1] - elbows[0]) / np.linalg.norm(elbows[1] - elbows[0])
    w = tip - elbows[0]
    mirror = elbows[0] + 2 * (w @ u) * u - w
    qpos = data.qpos.copy()
    for i, (joint, elbow) in enumerate(zip(p, elbows)):
        now, new = tip - elbow, mirror - elbow
        qpos[joint] += np.arctan2(-new[2], new[0]) - np.arctan2(-now[2], now[0])
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    assert np.linalg.norm(data.site("tip").xpos - data.site("tip2").xpos) < 1e-9, "the mirror mode does not close"
    return qpos
