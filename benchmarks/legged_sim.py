"""Logs of a legged robot that pga-dyn did not make: MuJoCo simulations of the Unitree Go2.

The data source of issue 27's benchmark (item 8), written in item 1's log format. MuJoCo
(the ``mjcf`` extra) integrates the Go2 of ``robots/data/go2.urdf`` (the project's own file:
its links, joints and inertials; rotors lumped as the file says) at 1 kHz on a floor, under
controllers of this module's own, tracking references computed with MuJoCo's kinematics:

* :func:`go2_mjcf` - the MJCF text: the trunk ``base`` on a free joint (or welded in the air,
  ``fixed_base``), the URDF's joints as hinges with motors (torque limits = the URDF's
  efforts), optional ``damping`` (viscous, N m s/rad) and ``frictionloss`` (dry, N m) on every
  joint, no armature, no joint limits, a floor plane, and a small sphere (``foot_radius``) at
  each foot frame ``FL_foot``, ``FR_foot``, ``RL_foot``, ``RR_foot`` (the URDF's foot links,
  kept as bodies with their 0.04 kg, on no joint: the same rigid-body model as pga-dyn's
  lumped calves). Only the feet touch the floor (no self-collision). ``imu`` is a site.
* four experiments, each a :class:`Record` (noise-free, 1 kHz):
  :func:`standing` - the standing wobble: the trunk's six channels (x, y, z, roll, pitch, yaw)
  as multisines with all four feet pinned on the floor, joints by inverse kinematics (Newton
  steps on ``mj_jacSite``); controller: joint PD + inverse-dynamics feedforward (MuJoCo's mass
  matrix and bias forces, contact forces of least norm that balance the trunk's six rows);
  :func:`hops` - pronking in place, hop after hop with flight phases (about a third of the
  time): after each landing the legs give, then extend quickly; attitude, heading and foot
  placement (Raibert) corrections; joint PD + gravity feedforward; :func:`trot` - a flying
  trot in place (diagonal pairs, the stance pair pushing: about 65 % of the time on two
  feet, 15 % on one, 18 % in flight), same controller; :func:`suspended` - the
  trunk welded in the air (no free joint), the legs swinging (joint multisines), PD + computed
  torque; the weld's wrench on the trunk is in the NPZ (``hold_*``).
* :func:`write_logs` - ``NAME.csv`` (noise-free) and ``NAME_noisy.csv``, each with the exact
  noise-free truth beside it in ``NAME.truth.npz`` and ``NAME_noisy.truth.npz`` (not
  ``NAME_noisy.npz``, which pga-dyn's log reader would take for the noisy log itself: these
  hold the noise-free columns), and ``NAME_exact.csv``, the noise-free log with the exact
  accelerations as columns; :func:`add_noise` - the sensor noise; :func:`check` - the
  equations the noise-free logs satisfy.

Log columns (CSV, a header line of names), all in SI units:

* ``t`` (s, starting at 0 after a settling phase that is not logged);
* ``base_x base_y base_z base_qx base_qy base_qz base_qw``: the trunk frame's pose in the world,
  quaternion in the order (x, y, z, w) (MuJoCo's ``qpos`` holds (w, x, y, z): reordered);
* ``base_vx base_vy base_vz``: the world velocity of the trunk frame's origin (MuJoCo's free
  joint ``qvel[0:3]``) and ``base_wx base_wy base_wz``: the WORLD angular velocity (MuJoCo's
  ``qvel[3:6]`` is in the trunk frame: rotated, omega = R omega_body);
* ``imu_gx imu_gy imu_gz imu_ax imu_ay imu_az``: an IMU at the trunk frame's origin, in the
  trunk frame: the gyro's angular velocity R^T omega (MuJoCo's ``qvel[3:6]``) and the
  accelerometer's specific force R^T (a - g), a the origin's world acceleration (the Go2's own
  IMU sits 5 cm away: this one is where pga-dyn's log reader expects it);
* ``q_J qd_J tau_J`` for the 12 joints J of the URDF (``FL_hip_joint`` ...); ``tau`` is the
  actuator's torque (``qfrc_actuator``, after the torque limit);
* per foot F: ``f_F_x f_F_y f_F_z``, the contact force ON THE ROBOT in the world frame, summed
  over the contacts of that foot's sphere, acting at the foot frame's origin together with
  ``m_F_x m_F_y m_F_z``, the moment of those contact forces about the foot frame's origin,
  m = sum (p_contact - p_F) x f (the contact point lies about one radius below the origin);
  the feet are spheres, not points: the force acts where the sphere touches (one radius plus
  half the penetration, 1-2 mm, below the origin), and the sphere rolls, so the origin moves a
  little in stance (about 8 mm/s RMS in the standing wobble with r = 20 mm; ``--foot-radius``
  makes r smaller). (f_F; m_F) is the exact wrench at the origin; a reader that takes a foot
  with moment columns for a flat foot (6 constraints: four feet would hold the robot still) or
  drops m (a point foot at the origin) models the contacts slightly wrong; ``--no-moments`` writes
  the CSVs without the m columns (the NPZs keep them);
  ``contact_F``, 1 while MuJoCo has a contact of the sphere with the floor (its force may be 0
  at the instant it separates). A suspended trunk logs its fixed pose, zero twist, no contact.

Sample k is the state before MuJoCo's k-th (semi-implicit Euler) step, with the forces and
accelerations of that state: without damping, v_{k+1} = v_k + dt a_k and p_{k+1} = p_k + dt
v_{k+1} hold exactly, for the joints and the trunk (world frame), so forward differences of
the logged velocities are the logged accelerations. Landings are impacts at the time step's
scale: joint accelerations reach thousands of rad/s^2 for a few samples in ``hops``.

The ``.truth.npz`` beside a CSV holds the noise-free value of every column under its name,
and the exact truth at each logged sample from MuJoCo's ``qacc`` of that state: ``base_ax
base_ay base_az`` (world acceleration of the trunk origin, = ``qacc[0:3]``), ``base_alphax base_alphay
base_alphaz`` (world angular acceleration, R ``qacc[3:6]``), ``qdd_J``, ``com_ax com_ay com_az``
(the whole robot's centre-of-mass acceleration, from ``mj_objectAcceleration`` of each body),
``tau_friction_J`` (the joint's damping and dry-friction torque, ``qfrc_passive`` + the
frictionloss constraint force, zero without them), ``gyro_bias`` (trunk frame, noisy log only),
``c_F_x c_F_y c_F_z`` (the contact point in the world, where MuJoCo applies the force: the
middle of the sphere's penetration; NaN without contact), ``v_F_x v_F_y v_F_z`` and ``a_F_x a_F_y a_F_z`` (the foot frame origin's world velocity and
acceleration: not zero in stance, the origin rolls with the sphere at omega_calf x (p_F -
p_contact)), ``accel_bias`` (noisy log only),
``hold_fx hold_fy hold_fz hold_mx hold_my hold_mz`` (suspended trunk only: the weld's force
on the trunk and its moment about the world origin), ``mass``, ``gravity``, ``columns``,
``noisy`` (0/1), ``experiment``, ``damping``, ``frictionloss`` and the noise options.

Equations the logs satisfy (noise-free, exactly up to MuJoCo's solver and float round-off): with
pga-dyn's floating coordinates (:mod:`pga_dyn.floating`), Y(q, qd, qdd) phi = S^T (tau +
tau_friction) + sum_F J_F^T (m_F; f_F), i.e. the six base rows are the contact wrench about
the world origin (sum p_F x f_F + m_F; sum f_F) and each joint row is tau + tau_friction + the
joint axis's moment of its leg's foot wrench; and mass (com_a - g) = sum_F f_F.
:func:`check` evaluates both. Joint damping and dry friction are not in pga-dyn's rigid-body
model: the torque that moves the links is tau + tau_friction (tau_friction = -damping qd - the
frictionloss force, which opposes the motion and sticks near qd = 0), so a log made with them
is the case of identification with friction; the exact case is made without (the default).

Noise (:class:`Noise`, the noisy log only; ``seed`` fixes it): white Gaussian noise on q
(``q_sigma`` rad: an encoder), on qd, tau, f and m (``relative``: 1 % of each column's RMS by
default), and the IMU: white noise ``gyro_sigma`` rad/s and a constant bias drawn with
``gyro_bias`` rad/s per axis on the gyro, ``accel_sigma`` and ``accel_bias`` m/s^2 on the
accelerometer, in the trunk frame; ``base_w*`` of the noisy log is the noisy gyro turned into the
world. ``delay`` (samples, 0 by default) delays q, qd, tau, f, m, the IMU and ``base_w*``
against t and the base pose. The pose, linear velocity and contact flags are logged without
noise.

Run as a script: ``python benchmarks/legged_sim.py OUTDIR [--duration 15] [--experiments
standing hops trot suspended] [--damping B --frictionloss C] [--check] [--force]`` writes
``OUTDIR/go2_EXPERIMENT.csv`` and ``OUTDIR/go2_EXPERIMENT_noisy.csv``, each with its ``.truth.npz``,
and ``OUTDIR/go2_EXPERIMENT_exact.csv``.
Nothing here is part of the installed package.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, os.pardir, "robots", "data", "go2.urdf")

LEGS = ("FL", "FR", "RL", "RR")
FEET = tuple(f"{leg}_foot" for leg in LEGS)
JOINTS = tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf"))
#: A standing posture (hip, thigh, calf) per leg, rad.
STANCE = (0.0, 0.8, -1.55)
TIMESTEP = 1e-3
GRAVITY = 9.81
BASE_COLUMNS = (
    "base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw",
    "base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz",
)  # fmt: skip


IMU_COLUMNS = ("imu_gx", "imu_gy", "imu_gz", "imu_ax", "imu_ay", "imu_az")


def columns(moments: bool = True) -> list:
    """The log's column names, in order (without ``m_FOOT_*`` unless ``moments``)."""
    names = ["t", *BASE_COLUMNS, *IMU_COLUMNS]
    for j in JOINTS:
        names += [f"q_{j}", f"qd_{j}", f"tau_{j}"]
    for foot in FEET:
        names += [f"f_{foot}_{a}" for a in "xyz"] + [f"m_{foot}_{a}" for a in "xyz" if moments] + [f"contact_{foot}"]
    return names


# --------------------------------------------------------------------------------------------
# the model


def _quat_rpy(rpy) -> np.ndarray:
    """Quaternion (w, x, y, z) of URDF's roll-pitch-yaw (R = Rz(y) Ry(p) Rx(r))."""
    r, p, y = (0.5 * float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ]
    )


def _rot_wxyz(q) -> np.ndarray:
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def _origin(element):
    o = element.find("origin")
    xyz = [0.0, 0.0, 0.0] if o is None else [float(v) for v in o.get("xyz", "0 0 0").split()]
    rpy = [0.0, 0.0, 0.0] if o is None else [float(v) for v in o.get("rpy", "0 0 0").split()]
    return xyz, rpy


def _inertial(link, body) -> None:
    e = link.find("inertial")
    mass = float(e.find("mass").get("value"))
    xyz, rpy = _origin(e)
    i = e.find("inertia")
    c = {k: float(i.get(k, 0.0)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
    inertia = np.array([[c["ixx"], c["ixy"], c["ixz"]], [c["ixy"], c["iyy"], c["iyz"]], [c["ixz"], c["iyz"], c["izz"]]])
    R = _rot_wxyz(_quat_rpy(rpy))
    inertia = R @ inertia @ R.T  # about the centre of mass, in the link frame
    full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2])
    ET.SubElement(body, "inertial", pos=_fmt(xyz), mass=repr(mass), fullinertia=_fmt(full))


def go2_mjcf(
    fixed_base: bool = False,
    base_height: float = 0.33,
    damping: float = 0.0,
    frictionloss: float = 0.0,
    foot_radius: float = 0.02,
    friction: float = 0.9,
    solref: float = 0.005,
    timestep: float = TIMESTEP,
    urdf: str = URDF,
) -> str:
    """MJCF text of the Go2 of ``urdf`` (module docstring): free trunk at ``base_height`` (or
    welded there when ``fixed_base``), motors on the 12 joints, ``damping`` and ``frictionloss``
    on every joint, sphere feet of ``foot_radius`` with Coulomb ``friction`` on a floor, their
    contact's time constant ``solref`` s (MuJoCo's soft contact: the feet sink a few mm)."""
    robot = ET.parse(urdf).getroot()
    links = {link.get("name"): link for link in robot.iter("link")}
    children: dict = {}
    for joint in robot.iter("joint"):
        children.setdefault(joint.find("parent").get("link"), []).append(joint)

    mj = ET.Element("mujoco", model="go2_legsim")
    ET.SubElement(mj, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(
        mj,
        "option",
        timestep=repr(timestep),
        gravity=f"0 0 {-GRAVITY!r}",
        integrator="Euler",
        cone="elliptic",
        tolerance="1e-14",
        iterations="200",
        ls_tolerance="1e-10",
        ls_iterations="100",
    )
    world = ET.SubElement(mj, "worldbody")
    ET.SubElement(
        world, "geom", name="floor", type="plane", size="20 20 0.1", contype="1", conaffinity="2",
        friction=f"{friction!r} 0.005 0.0001", condim="3",
    )  # fmt: skip
    actuators = ET.SubElement(mj, "actuator")

    def build(link_name, body):
        _inertial(links[link_name], body)
        for joint in children.get(link_name, ()):
            child = joint.find("child").get("link")
            xyz, rpy = _origin(joint)
            kind = joint.get("type")
            if kind == "fixed" and child in ("imu", "radar"):
                if child == "imu":
                    ET.SubElement(body, "site", name="imu", pos=_fmt(xyz), quat=_fmt(_quat_rpy(rpy)))
                continue
            sub = ET.SubElement(body, "body", name=child, pos=_fmt(xyz), quat=_fmt(_quat_rpy(rpy)))
            if kind == "revolute":
                name = joint.get("name")
                ET.SubElement(
                    sub, "joint", name=name, type="hinge", axis=joint.find("axis").get("xyz"),
                    damping=repr(damping), frictionloss=repr(frictionloss), armature="0", limited="false",
                )  # fmt: skip
                effort = float(joint.find("limit").get("effort"))
                ET.SubElement(actuators, "motor", name=name, joint=name, gear="1", ctrlrange=f"{-effort!r} {effort!r}")
            elif kind != "fixed":
                raise ValueError(f"{joint.get('name')}: joint type {kind} not handled")
            if child in FEET:
                ET.SubElement(
                    sub, "geom", name=child, type="sphere", size=repr(foot_radius), contype="2", conaffinity="1",
                    condim="3", friction=f"{friction!r} 0.005 0.0001", solref=f"{solref!r} 1",
                )  # fmt: skip
                ET.SubElement(sub, "site", name=child)
            build(child, sub)

    base = ET.SubElement(world, "body", name="base", pos=f"0 0 {base_height!r}")
    if not fixed_base:
        ET.SubElement(base, "freejoint", name="base_free")
    build("base", base)
    return ET.tostring(mj, encoding="unicode")


class Go2:
    """A compiled Go2 (:func:`go2_mjcf`'s options), its MjData, a second MjData for
    kinematics, and the addresses the controllers and the logger use."""

    def __init__(self, **options):
        import mujoco

        self.mj = mujoco
        self.options = options
        self.fixed_base = options.get("fixed_base", False)
        self.model = m = mujoco.MjModel.from_xml_string(go2_mjcf(**options))
        self.data = mujoco.MjData(m)
        self.kin = mujoco.MjData(m)
        self.qadr = np.array([m.jnt_qposadr[m.joint(j).id] for j in JOINTS])
        self.dadr = np.array([m.jnt_dofadr[m.joint(j).id] for j in JOINTS])
        self.act = np.array([m.actuator(j).id for j in JOINTS])
        self.site = np.array([m.site(f).id for f in FEET])
        self.geom = np.array([m.geom(f).id for f in FEET])
        self.base = m.body("base").id
        self.mass = float(m.body_subtreemass[self.base])
        self.leg_dofs = self.dadr.reshape(4, 3)
        self.effort = m.actuator_ctrlrange[self.act, 1].copy()
        self._jacp = np.zeros((3, m.nv))
        self._jacr = np.zeros((3, m.nv))

    # kinematics --------------------------------------------------------------------------------
    def set_pose(self, d, p, quat_wxyz, q) -> None:
        if not self.fixed_base:
            d.qpos[0:3], d.qpos[3:7] = p, quat_wxyz
        d.qpos[self.qadr] = q

    def feet(self, d) -> np.ndarray:
        """Foot frame origins (4, 3) in the world (positions computed)."""
        return d.site_xpos[self.site].copy()

    def foot_jacobian(self, d, i, rotation=False):
        self.mj.mj_jacSite(self.model, d, self._jacp, self._jacr if rotation else None, self.site[i])
        return (self._jacp.copy(), self._jacr.copy()) if rotation else self._jacp.copy()

    def ik(self, p, quat_wxyz, targets, q_guess, tol=1e-12, iterations=20, strict=True) -> np.ndarray:
        """Joint angles (12) that put the feet at ``targets`` (4, 3, world) with the trunk at
        (p, quat): Newton steps on the foot Jacobians (``mj_jacSite``), from ``q_guess``;
        RuntimeError if they do not converge, unless not ``strict`` (then damped steps, and the
        last iterate: the nearest the legs reach)."""
        m, d = self.model, self.kin
        q = np.array(q_guess, dtype=float)
        for _ in range(iterations):
            self.set_pose(d, p, quat_wxyz, q)
            self.mj.mj_kinematics(m, d)
            self.mj.mj_comPos(m, d)
            err = targets - self.feet(d)
            if np.abs(err).max() < tol:
                return q
            for i in range(4):
                J = self.foot_jacobian(d, i)[:, self.leg_dofs[i]]
                if strict:
                    q[3 * i : 3 * i + 3] += np.linalg.solve(J, err[i])
                else:
                    q[3 * i : 3 * i + 3] += J.T @ np.linalg.solve(J @ J.T + 1e-4 * np.eye(3), err[i])
        if not strict:
            return q
        raise RuntimeError(f"inverse kinematics did not converge (error {np.abs(err).max():.3g} m)")

    def ik_feet(self, q) -> np.ndarray:
        """Foot frame origins (4, 3) in the trunk frame at joints ``q``."""
        d = self.kin
        self.set_pose(d, np.zeros(3), np.array([1.0, 0, 0, 0]), q)
        self.mj.mj_kinematics(self.model, d)
        return self.feet(d) - d.xpos[self.base]

    def stance_feet(self, q=None, height=0.0):
        """The trunk height that puts the spheres on the floor with the joints at ``q`` (default
        :data:`STANCE`) and the trunk level, and the foot frame origins (4, 3) there."""
        q = np.tile(STANCE, 4) if q is None else np.asarray(q, dtype=float)
        d = self.kin
        self.set_pose(d, np.zeros(3), np.array([1.0, 0, 0, 0]), q)
        self.mj.mj_kinematics(self.model, d)
        feet = self.feet(d)
        z = self.model.geom_size[self.geom[0], 0] - feet[:, 2].min() + height
        return z, feet + np.array([0.0, 0.0, z])

    # the logged sample ---------------------------------------------------------------------------
    def sample(self) -> dict:
        """The log's columns and the truth at the current state; needs the forward dynamics of
        this state done (accelerations and constraint forces)."""
        mj, m, d = self.mj, self.model, self.data
        out: dict = {}
        R = d.xmat[self.base].reshape(3, 3).copy()
        if self.fixed_base:
            p, quat = d.xpos[self.base].copy(), d.xquat[self.base].copy()
            v = w = a = alpha = np.zeros(3)
        else:
            p, quat = d.qpos[0:3].copy(), d.qpos[3:7].copy()
            v, w = d.qvel[0:3].copy(), R @ d.qvel[3:6]
            a, alpha = d.qacc[0:3].copy(), R @ d.qacc[3:6]
        values = [*p, quat[1], quat[2], quat[3], quat[0], *v, *w]
        out.update(zip(BASE_COLUMNS, values))
        # an IMU at the trunk frame's origin, in the trunk frame: gyro, accelerometer R^T (a - g)
        out.update(zip(IMU_COLUMNS, [*(R.T @ w), *(R.T @ (a - m.opt.gravity))]))
        out.update(zip(("base_ax", "base_ay", "base_az"), a))
        out.update(zip(("base_alphax", "base_alphay", "base_alphaz"), alpha))
        friction = d.qfrc_passive.copy()
        for i in range(d.nefc):
            if d.efc_type[i] == mj.mjtConstraint.mjCNSTR_FRICTION_DOF:
                friction[d.efc_id[i]] += d.efc_force[i]
        for j, qa, da in zip(JOINTS, self.qadr, self.dadr):
            out[f"q_{j}"], out[f"qd_{j}"], out[f"tau_{j}"] = d.qpos[qa], d.qvel[da], d.qfrc_actuator[da]
            out[f"qdd_{j}"], out[f"tau_friction_{j}"] = d.qacc[da], friction[da]
        force = np.zeros((4, 3))
        moment = np.zeros((4, 3))
        touch = np.zeros(4)
        point = np.full((4, 3), np.nan)
        origin = self.feet(d)
        f6 = np.zeros(6)
        for c in range(d.ncon):
            con = d.contact[c]
            for i, g in enumerate(self.geom):
                if g in (con.geom1, con.geom2):
                    mj.mj_contactForce(m, d, c, f6)
                    frame = con.frame.reshape(3, 3)  # rows: normal (geom1 -> geom2), tangents
                    sign = 1.0 if con.geom2 == g else -1.0  # the force on geom2 is +frame^T f6
                    fw, tw = sign * frame.T @ f6[:3], sign * frame.T @ f6[3:]
                    force[i] += fw
                    moment[i] += np.cross(con.pos - origin[i], fw) + tw
                    point[i] = con.pos
                    touch[i] = 1.0
        for i, foot in enumerate(FEET):
            out.update(zip((f"f_{foot}_{x}" for x in "xyz"), force[i]))
            out.update(zip((f"m_{foot}_{x}" for x in "xyz"), moment[i]))
            out[f"contact_{foot}"] = touch[i]
            out.update(zip((f"c_{foot}_{x}" for x in "xyz"), point[i]))
        # the centre of mass's acceleration (MuJoCo's own: cacc holds - gravity, added back)
        mj.mj_rnePostConstraint(m, d)
        acc = np.zeros(6)
        total = np.zeros(3)
        for b in range(1, m.nbody):
            mj.mj_objectAcceleration(m, d, mj.mjtObj.mjOBJ_BODY, b, acc, 0)
            total += m.body_mass[b] * acc[3:]
        com = total / self.mass + m.opt.gravity
        out.update(zip(("com_ax", "com_ay", "com_az"), com))
        for i, foot in enumerate(FEET):  # the foot frame origin's motion (it rolls with the sphere)
            mj.mj_objectVelocity(m, d, mj.mjtObj.mjOBJ_SITE, self.site[i], acc, 0)
            out.update(zip((f"v_{foot}_{x}" for x in "xyz"), acc[3:]))
            mj.mj_objectAcceleration(m, d, mj.mjtObj.mjOBJ_SITE, self.site[i], acc, 0)
            out.update(zip((f"a_{foot}_{x}" for x in "xyz"), acc[3:] + m.opt.gravity))
        if self.fixed_base:  # the weld's wrench on the trunk, about the world origin (world frame)
            cf, c = d.cfrc_int[self.base], d.subtree_com[self.base]
            out.update(zip(("hold_fx", "hold_fy", "hold_fz"), cf[3:]))
            out.update(zip(("hold_mx", "hold_my", "hold_mz"), cf[:3] + np.cross(c, cf[3:])))
        return out

    def run(self, controller, duration: float, settle: float = 0.5) -> Record:
        """Step ``settle`` + ``duration`` s, the control torques ``controller(k)`` at step k
        (read from ``self.data`` after MuJoCo's position and velocity stages); logs the steps
        after ``settle`` (t from 0)."""
        mj, m, d = self.mj, self.model, self.data
        n0, n = round(settle / m.opt.timestep), round(duration / m.opt.timestep)
        rows = []
        for k in range(n0 + n):
            mj.mj_step1(m, d)
            d.ctrl[self.act] = controller(k)
            mj.mj_forwardSkip(m, d, mj.mjtStage.mjSTAGE_VEL, 0)
            if k >= n0:
                row = self.sample()
                row["t"] = (k - n0) * m.opt.timestep
                rows.append(row)
            mj.mj_Euler(m, d)
            if not self.fixed_base and d.qpos[2] < 0.12:
                raise RuntimeError(f"the Go2 fell at t = {(k - n0) * m.opt.timestep:.3f} s")
        data = {key: np.array([r[key] for r in rows]) for key in rows[0]}
        return Record(data, self.mass, np.array(m.opt.gravity), self.options)


@dataclasses.dataclass
class Record:
    """A noise-free record: ``data`` maps each column name (and truth name) to its (ns,) array."""

    data: dict
    mass: float
    gravity: np.ndarray
    options: dict
    experiment: str = ""

    def __len__(self) -> int:
        return len(self.data["t"])


# --------------------------------------------------------------------------------------------
# references and controllers


def multisine(t, frequencies, amplitude, seed) -> np.ndarray:
    """A sum of sines at ``frequencies`` (Hz) with Schroeder-like random phases, scaled to the
    peak ``amplitude`` over ``t``, faded in over the first second (zero value and slope at 0)."""
    rng = np.random.default_rng(seed)
    phases = rng.uniform(0, 2 * np.pi, len(frequencies))
    x = sum(np.sin(2 * np.pi * f * t + ph) - np.sin(ph) for f, ph in zip(frequencies, phases))
    x = x / max(np.abs(x).max(), 1e-12) * amplitude
    s = np.clip(t, 0.0, 1.0)
    return x * (s * s * (3 - 2 * s)) * (t > 0)


def _channel_frequencies(channel: int, channels: int, base: float = 0.1, top: float = 2.0) -> list:
    """Interleaved harmonics of ``base`` Hz up to ``top``: channel c takes harmonics k = c+1 mod n."""
    return [k * base for k in range(channel + 1, int(top / base) + 1, channels)]


def _rpy_matrix(r, p, y) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _wxyz(R) -> np.ndarray:
    import mujoco

    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).ravel())
    return q


def _gains(go2):
    kp = np.tile([60.0, 60.0, 90.0], 4)
    kd = np.tile([1.5, 1.5, 2.0], 4)
    return kp, kd


def standing(
    duration: float = 15.0,
    amplitude=(0.025, 0.02, 0.025, 0.08, 0.1, 0.1),
    top: float = 1.5,
    seed: int = 0,
    settle: float = 0.5,
    **options,
) -> Record:
    """The standing wobble: the trunk's x, y, z (m) and roll, pitch, yaw (rad) as multisines of
    peak ``amplitude`` (interleaved harmonics of 0.1 Hz up to ``top`` Hz), the four feet pinned where
    the stance puts them, joints by inverse kinematics; joint PD + inverse-dynamics feedforward."""
    go2 = Go2(**options)
    dt = go2.model.opt.timestep
    z0, feet = go2.stance_feet()
    n0 = round(settle / dt)
    n = n0 + round(duration / dt) + 2
    t = (np.arange(n) - n0) * dt
    ch = np.stack([multisine(t, _channel_frequencies(c, 6, top=top), amplitude[c], seed + c) for c in range(6)], axis=1)
    p_ref = ch[:, :3] + np.array([0.0, 0.0, z0])
    R_ref = np.stack([_rpy_matrix(*x) for x in ch[:, 3:]])
    quat_ref = np.stack([_wxyz(R) for R in R_ref])
    q_ref = np.empty((n, 12))
    q = np.tile(STANCE, 4)
    for k in range(n):
        q = q_ref[k] = go2.ik(p_ref[k], quat_ref[k], feet, q)
    qd_ref = np.gradient(q_ref, dt, axis=0)
    qdd_ref = np.gradient(qd_ref, dt, axis=0)
    v_ref = np.gradient(p_ref, dt, axis=0)
    a_ref = np.gradient(v_ref, dt, axis=0)
    Rdot = np.gradient(R_ref, dt, axis=0)
    W = np.einsum("nji,njk->nik", R_ref, Rdot)  # R^T Rdot = [omega_body]x
    w_body = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
    dw_body = np.gradient(w_body, dt, axis=0)
    qdd_des = np.concatenate([a_ref, dw_body, qdd_ref], axis=1)  # MuJoCo's free-joint order

    m, d = go2.model, go2.data
    go2.set_pose(d, p_ref[0], quat_ref[0], q_ref[0])
    kp, kd = _gains(go2)
    M = np.zeros((m.nv, m.nv))
    Jc = np.zeros((12, m.nv))

    def control(k):
        go2.mj.mj_fullM(m, d, M)
        rhs = M @ qdd_des[k] + d.qfrc_bias
        for i in range(4):
            Jc[3 * i : 3 * i + 3] = go2.foot_jacobian(d, i)
        f = np.linalg.lstsq(Jc[:, :6].T, rhs[:6], rcond=None)[0]
        ff = rhs[go2.dadr] - Jc[:, go2.dadr].T @ f
        return ff + kp * (q_ref[k] - d.qpos[go2.qadr]) + kd * (qd_ref[k] - d.qvel[go2.dadr])

    record = go2.run(control, duration, settle)
    record.experiment = "standing"
    return record


def hops(
    duration: float = 12.0,
    stroke: float = 0.035,
    push: float = 0.08,
    placement: float = 0.15,
    attitude=(1.0, 0.05),
    heading=(1.0, 0.1),
    homing: float = 0.0,
    settle: float = 0.5,
    **options,
) -> Record:
    """Pronking in place, a hop after another: after each landing the legs give (joint PD) until
    the trunk stops sinking, then extend by ``stroke`` m in ``push`` s (a smoothstep of the four
    feet's height in the trunk frame), which throws the trunk into a flight phase; in flight
    they shorten back to the stance. The feet's centroid is under the centre of mass; in stance
    the leg lengths are corrected against the trunk's roll and pitch, in flight the feet are
    placed along the trunk's horizontal velocity (``placement`` s, Raibert's rule), both through
    a 20 ms low-pass; joint PD + gravity feedforward (the weight shared by the feet in
    contact). References by inverse kinematics in the trunk frame (``mj_jacSite``)."""
    go2 = Go2(**options)
    m, d = go2.model, go2.data
    dt = m.opt.timestep
    z0, feet_world = go2.stance_feet()
    feet_trunk = feet_world - np.array([0.0, 0.0, z0])  # the foot origins in the trunk frame
    identity = np.array([1.0, 0, 0, 0])
    go2.set_pose(go2.kin, np.zeros(3), identity, np.tile(STANCE, 4))
    go2.mj.mj_kinematics(m, go2.kin)
    go2.mj.mj_comPos(m, go2.kin)
    feet_trunk[:, :2] += go2.kin.subtree_com[go2.base, :2] - feet_trunk[:, :2].mean(axis=0)
    q0 = go2.ik(np.zeros(3), identity, feet_trunk, np.tile(STANCE, 4))
    go2.set_pose(d, np.array([0.0, 0.0, z0]), identity, q0)
    kp, kd = _gains(go2)
    sign_x = np.array([1.0, 1.0, -1.0, -1.0])  # front, rear
    sign_y = np.array([1.0, -1.0, 1.0, -1.0])  # left, right
    n0 = round(settle / dt)
    state = {"q": q0, "offset": np.zeros((4, 3)), "step": np.zeros(2), "phase": "stance", "since": 0, "extend": 0.0}
    smooth = dt / 0.02

    def control(k):
        R = d.xmat[go2.base].reshape(3, 3)
        roll, pitch = np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(np.clip(R[2, 0], -1, 1))
        wb = d.qvel[3:6]
        touching = [i for i in range(4) if any(go2.geom[i] in (c.geom1, c.geom2) for c in d.contact[: d.ncon])]
        # the hopping cycle: stance (giving) -> push -> flight -> stance
        phase, since = state["phase"], k - state["since"]
        if phase == "stance" and k > n0 and d.qvel[2] >= 0.0 and since > 20:
            phase = "push"
        elif phase == "push" and not touching:
            phase = "flight"
        elif phase == "push" and since * dt > push + 0.1:
            phase = "stance"  # the push did not lift off: give again
        elif phase == "flight" and touching:
            phase = "stance"
        if phase != state["phase"]:
            state["phase"], state["since"], since = phase, k, 0
        if phase == "push":
            x = min(since * dt / push, 1.0)
            extend = stroke * x * x * (3 - 2 * x)
        else:
            extend = state["extend"] * (1 - dt / 0.03)
        state["extend"] = extend
        offset = np.zeros((4, 3))
        # extend the legs on the side that sinks (a PD on roll and pitch; P only in flight)
        offset[:, 2] = -attitude[0] * (pitch * sign_x * 0.19 - roll * sign_y * 0.14)
        if touching:
            offset[:, 2] -= attitude[1] * (wb[1] * sign_x * 0.19 - wb[0] * sign_y * 0.14)
        else:  # step along the trunk's horizontal velocity
            state["step"] = (R.T @ (placement * d.qvel[0:3] + homing * np.array([*d.qpos[0:2], 0.0])))[:2]
        offset[:, :2] = state["step"]
        if touching:  # turn the feet about the trunk against its yaw (a PD on the heading)
            yaw = np.arctan2(R[1, 0], R[0, 0])
            offset[:, :2] += (
                heading[0] * (yaw + heading[1] * (R @ wb)[2]) * np.stack([-feet_trunk[:, 1], feet_trunk[:, 0]], 1)
            )
        state["offset"] += smooth * (offset - state["offset"])
        targets = feet_trunk + state["offset"]
        targets[:, 2] -= extend
        q_ref = go2.ik(np.zeros(3), identity, targets, state["q"], tol=1e-9, strict=False)
        qd_ref = (q_ref - state["q"]) / dt if k else np.zeros(12)
        state["q"] = q_ref
        ff = d.qfrc_bias[go2.dadr].copy()
        if touching:  # the feet in contact carry the weight
            share = go2.mass * GRAVITY / len(touching)
            for i in touching:
                J = go2.foot_jacobian(d, i)[:, go2.leg_dofs[i]]
                ff[3 * i : 3 * i + 3] -= J.T @ np.array([0.0, 0.0, share])
        return ff + kp * (q_ref - d.qpos[go2.qadr]) + kd * (qd_ref - d.qvel[go2.dadr])

    record = go2.run(control, duration, settle)
    record.experiment = "hops"
    return record


def trot(
    duration: float = 12.0,
    period: float = 0.4,
    clearance: float = 0.06,
    push: float = 0.03,
    placement: float = 0.12,
    attitude=(1.0, 0.05),
    heading=(1.0, 0.1),
    settle: float = 0.5,
    **options,
) -> Record:
    """A flying trot in place: the diagonal pairs (FL, RR) and (FR, RL) swing in turn, each
    for half a ``period`` s, their feet lifted ``clearance`` m (a half sine) and placed along
    the trunk's horizontal velocity (``placement`` s, Raibert's rule), while the stance pair
    extends by ``push`` m (a half sine), which throws the trunk into short flights (``push``
    0: a walking trot, two feet always down); the stance legs corrected against the trunk's
    roll, pitch and heading as in :func:`hops`; joint PD + gravity feedforward on the feet in
    contact; the gait fades in over the first second. With the defaults: about 65 % of the
    time on two diagonal feet, 15 % on one, 18 % in flight."""
    go2 = Go2(**options)
    m, d = go2.model, go2.data
    dt = m.opt.timestep
    z0, feet_world = go2.stance_feet()
    feet_trunk = feet_world - np.array([0.0, 0.0, z0])
    identity = np.array([1.0, 0, 0, 0])
    go2.set_pose(go2.kin, np.zeros(3), identity, np.tile(STANCE, 4))
    go2.mj.mj_kinematics(m, go2.kin)
    go2.mj.mj_comPos(m, go2.kin)
    feet_trunk[:, :2] += go2.kin.subtree_com[go2.base, :2] - feet_trunk[:, :2].mean(axis=0)
    q0 = go2.ik(np.zeros(3), identity, feet_trunk, np.tile(STANCE, 4))
    go2.set_pose(d, np.array([0.0, 0.0, z0]), identity, q0)
    kp, kd = _gains(go2)
    sign_x = np.array([1.0, 1.0, -1.0, -1.0])
    sign_y = np.array([1.0, -1.0, 1.0, -1.0])
    pair = np.array([0, 1, 1, 0])  # FL, RR swing first
    n0 = round(settle / dt)
    state = {"q": q0, "offset": np.zeros((4, 3)), "step": np.zeros((4, 2))}
    smooth = dt / 0.02

    def control(k):
        R = d.xmat[go2.base].reshape(3, 3)
        roll, pitch = np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(np.clip(R[2, 0], -1, 1))
        wb = d.qvel[3:6]
        touching = [i for i in range(4) if any(go2.geom[i] in (c.geom1, c.geom2) for c in d.contact[: d.ncon])]
        t = (k - n0) * dt
        ramp = float(np.clip(t, 0.0, 1.0))  # the gait fades in over a second
        phase = (t / period) % 1.0 if t > 0 else 0.0
        swinging = (pair == int(phase >= 0.5)) & (t > 0)
        s_swing = (phase % 0.5) / 0.5
        offset = np.zeros((4, 3))
        offset[:, 2] = -attitude[0] * (pitch * sign_x * 0.19 - roll * sign_y * 0.14) - attitude[1] * (
            wb[1] * sign_x * 0.19 - wb[0] * sign_y * 0.14
        )
        yaw = np.arctan2(R[1, 0], R[0, 0])
        turn = heading[0] * (yaw + heading[1] * (R @ wb)[2]) * np.stack([-feet_trunk[:, 1], feet_trunk[:, 0]], 1)
        v = (R.T @ d.qvel[0:3])[:2]
        for i in range(4):
            if swinging[i]:
                state["step"][i] = placement * v
                offset[i, 2] = ramp * clearance * np.sin(np.pi * s_swing)
            else:
                offset[i, :2] += turn[i]
                offset[i, 2] -= ramp * push * np.sin(np.pi * s_swing) * (t > 0)
        offset[:, :2] += state["step"]
        state["offset"] += smooth * (offset - state["offset"])
        state["offset"][swinging, 2] = offset[swinging, 2]  # the swing height as planned
        targets = feet_trunk + state["offset"]
        q_ref = go2.ik(np.zeros(3), identity, targets, state["q"], tol=1e-9, strict=False)
        qd_ref = (q_ref - state["q"]) / dt if k else np.zeros(12)
        state["q"] = q_ref
        ff = d.qfrc_bias[go2.dadr].copy()
        if touching:
            share = go2.mass * GRAVITY / len(touching)
            for i in touching:
                J = go2.foot_jacobian(d, i)[:, go2.leg_dofs[i]]
                ff[3 * i : 3 * i + 3] -= J.T @ np.array([0.0, 0.0, share])
        return ff + kp * (q_ref - d.qpos[go2.qadr]) + kd * (qd_ref - d.qvel[go2.dadr])

    record = go2.run(control, duration, settle)
    record.experiment = "trot"
    return record


def suspended(
    duration: float = 12.0,
    amplitude=(0.3, 0.5, 0.5),
    height: float = 0.8,
    seed: int = 10,
    settle: float = 0.5,
    **options,
) -> Record:
    """The trunk welded at ``height`` m (no free joint), the legs swinging: each joint a
    multisine of peak ``amplitude`` (hip, thigh, calf; rad) about the stance (interleaved
    harmonics of 0.1 Hz up to 2 Hz); PD + computed torque (MuJoCo's mass matrix and bias)."""
    go2 = Go2(fixed_base=True, base_height=height, **options)
    m, d = go2.model, go2.data
    dt = m.opt.timestep
    n0 = round(settle / dt)
    n = n0 + round(duration / dt) + 2
    t = (np.arange(n) - n0) * dt
    q_ref = np.tile(STANCE, 4) + np.stack(
        [multisine(t, _channel_frequencies(c, 12), amplitude[c % 3], seed + c) for c in range(12)], axis=1
    )
    qd_ref = np.gradient(q_ref, dt, axis=0)
    qdd_ref = np.gradient(qd_ref, dt, axis=0)
    go2.set_pose(d, None, None, q_ref[0])
    kp, kd = _gains(go2)
    M = np.zeros((m.nv, m.nv))

    def control(k):
        go2.mj.mj_fullM(m, d, M)
        ff = M[np.ix_(go2.dadr, go2.dadr)] @ qdd_ref[k] + d.qfrc_bias[go2.dadr]
        return ff + kp * (q_ref[k] - d.qpos[go2.qadr]) + kd * (qd_ref[k] - d.qvel[go2.dadr])

    record = go2.run(control, duration, settle)
    record.experiment = "suspended"
    return record


EXPERIMENTS = {"standing": standing, "hops": hops, "trot": trot, "suspended": suspended}


# --------------------------------------------------------------------------------------------
# noise and files


@dataclasses.dataclass
class Noise:
    """Sensor noise of the noisy log (module docstring). ``relative``: the standard deviation of
    the noise on qd, tau, f and m as a share of each column's RMS; ``q_sigma`` rad (encoder);
    ``gyro_sigma`` rad/s white noise and ``gyro_bias`` rad/s (the standard deviation of the
    constant bias drawn per axis) of the IMU's gyro, ``accel_sigma`` and ``accel_bias`` m/s^2
    of its accelerometer, in the trunk frame; ``delay`` samples."""

    relative: float = 0.01
    q_sigma: float = 1e-4
    gyro_sigma: float = 5e-3
    gyro_bias: float = 1e-2
    accel_sigma: float = 0.03
    accel_bias: float = 0.05
    delay: int = 0
    seed: int = 0


def add_noise(record: Record, noise: Noise) -> tuple:
    """The noisy columns (a dict of arrays, the log's columns only) of ``record`` and the IMU's
    biases drawn (gyro, accelerometer: 2 x 3, trunk frame)."""
    rng = np.random.default_rng(noise.seed)
    d = record.data
    out = {c: np.array(d[c], dtype=float) for c in columns()}
    ns = len(record)

    def white(x, sigma):
        return x + rng.normal(0.0, sigma, x.shape) if sigma > 0 else x

    def rms(x):
        return float(np.sqrt(np.mean(np.square(x))))

    for j in JOINTS:
        out[f"q_{j}"] = white(out[f"q_{j}"], noise.q_sigma)
        for c in (f"qd_{j}", f"tau_{j}"):
            out[c] = white(out[c], noise.relative * rms(out[c]))
    for foot in FEET:
        for a in "xyz":
            for c in (f"f_{foot}_{a}", f"m_{foot}_{a}"):
                out[c] = white(out[c], noise.relative * rms(out[c]))
    # the IMU: bias and white noise in the trunk frame; base_w* is the noisy gyro turned into the world
    quat = np.stack([d[c] for c in ("base_qx", "base_qy", "base_qz", "base_qw")], axis=1)
    R = np.stack([_rot_wxyz(q) for q in quat[:, [3, 0, 1, 2]]])
    biases = np.zeros((2, 3))
    for k, (sigma, bias) in enumerate(((noise.gyro_sigma, noise.gyro_bias), (noise.accel_sigma, noise.accel_bias))):
        biases[k] = rng.normal(0.0, bias, 3) if bias > 0 else 0.0
        err = biases[k] + (rng.normal(0.0, sigma, (ns, 3)) if sigma > 0 else np.zeros((ns, 3)))
        for i, c in enumerate(IMU_COLUMNS[3 * k : 3 * k + 3]):
            out[c] = out[c] + err[:, i]
    w = np.einsum("nij,nj->ni", R, np.stack([out[c] for c in IMU_COLUMNS[:3]], axis=1))
    for i, a in enumerate("xyz"):
        out[f"base_w{a}"] = w[:, i]
    if noise.delay:
        k = int(noise.delay)
        delayed = [c for c in out if c.split("_")[0] in ("q", "qd", "tau", "f", "m", "imu")]
        for c in [*delayed, "base_wx", "base_wy", "base_wz"]:
            out[c] = np.concatenate([np.full(k, out[c][0]), out[c][:-k]])
    return out, biases


#: The exact accelerations the ``_exact`` log adds to the columns (item 1's optional columns).
EXACT_COLUMNS = (
    "base_ax", "base_ay", "base_az", "base_alphax", "base_alphay", "base_alphaz", *(f"qdd_{j}" for j in JOINTS),
)  # fmt: skip


def _write_csv(path: str, values: dict, extra: tuple = (), moments: bool = True) -> None:
    names = columns(moments) + list(extra)
    table = np.stack([values[c] for c in names], axis=1)
    fmt = ["%.6f"] + ["%.12g"] * (len(names) - 1)
    np.savetxt(path, table, delimiter=",", header=",".join(names), comments="", fmt=fmt)


def write_logs(
    record: Record,
    folder: str,
    name: str | None = None,
    noise: Noise | None = None,
    exact: bool = True,
    moments: bool = True,
) -> list:
    """Write ``NAME.csv`` + ``NAME.truth.npz`` (noise-free) and ``NAME_noisy.csv`` + ``NAME_noisy.truth.npz``
    (``noise``, default :class:`Noise`) into ``folder``, and with ``exact`` ``NAME_exact.csv``: the
    noise-free log with the exact accelerations as columns (``base_ax .. base_alphaz``, ``qdd_J``:
    item 1's optional columns, read instead of derivatives); NAME defaults to ``go2_EXPERIMENT``.
    Without ``moments`` the CSVs have no ``m_FOOT_*`` columns (the NPZs keep them): pga-dyn's log
    reader takes a foot with moment columns for a flat foot (module docstring).
    Returns the paths written (CSV, NPZ, noisy CSV, noisy NPZ[, exact CSV])."""
    os.makedirs(folder, exist_ok=True)
    name = name or f"go2_{record.experiment}"
    noise = Noise() if noise is None else noise
    noisy, bias = add_noise(record, noise)
    truth = dict(record.data)
    common = {
        "mass": record.mass,
        "gravity": record.gravity,
        "columns": np.array(columns()),
        "experiment": record.experiment,
        "damping": record.options.get("damping", 0.0),
        "frictionloss": record.options.get("frictionloss", 0.0),
    }
    paths = []
    for suffix, values, extra in (
        ("", truth, {"noisy": 0}),
        (
            "_noisy",
            noisy,
            {
                "noisy": 1,
                "gyro_bias": bias[0],
                "accel_bias": bias[1],
                **{f"noise_{k}": v for k, v in dataclasses.asdict(noise).items()},
            },
        ),
    ):
        csv = os.path.join(folder, f"{name}{suffix}.csv")
        _write_csv(csv, values, moments=moments)
        npz = os.path.join(folder, f"{name}{suffix}.truth.npz")
        np.savez_compressed(npz, **truth, **common, **extra)
        paths += [csv, npz]
    if exact:
        paths.append(os.path.join(folder, f"{name}_exact.csv"))
        _write_csv(paths[-1], truth, EXACT_COLUMNS, moments)
    return paths


# --------------------------------------------------------------------------------------------
# the self-check


def _stack(d, names) -> np.ndarray:
    return np.stack([np.asarray(d[c], dtype=float) for c in names], axis=1)


def check(data: dict, pga: bool = True, **options) -> dict:
    """Residuals of the equations a noise-free log satisfies (module docstring), on ``data``
    (a :class:`Record`'s ``data``, or an NPZ's arrays: the noise-free columns and the truth):

    * ``newton``: max |mass (com_a - g) - sum_F f_F| / (mass g);
    * with ``pga``: ``base`` max |Y phi - (sum p_F x f_F + m_F; sum f_F)| over the six base rows
      and ``joints`` max |Y phi - (tau + tau_friction + sum_F J_F^T (m_F; f_F))| over the joint
      rows, each divided by the largest |Y phi| of those rows; Y = ``pga_dyn.regressor`` of
      ``robots.load("go2")`` at pga-dyn's floating coordinates of the logged pose and twist
      (:mod:`pga_dyn.floating`) and the NPZ's accelerations; the foot positions, joint axes and
      anchors from MuJoCo's kinematics at the logged state (a model of ``options``).
    """
    d = data
    mass = float(np.asarray(d.get("mass", 0.0))) or None
    if "hold_fx" in d:  # welded where the log says
        options = {**options, "fixed_base": True, "base_height": float(np.asarray(d["base_z"])[0])}
    go2 = Go2(**options)
    mass = mass or go2.mass
    gravity = np.asarray(go2.model.opt.gravity)
    F = sum(_stack(d, [f"f_{foot}_{a}" for a in "xyz"]) for foot in FEET)
    held = "hold_fx" in d
    if held:  # a trunk welded in the air: the weld's wrench acts too
        F = F + _stack(d, ["hold_fx", "hold_fy", "hold_fz"])
    com = _stack(d, ["com_ax", "com_ay", "com_az"])
    out = {"newton": float(np.abs(mass * (com - gravity) - F).max() / (mass * GRAVITY))}
    if not pga:
        return out
    import pga_dyn
    import robots
    from pga_dyn.floating import base_coordinates, spatial_acceleration, spatial_twist

    robot = robots.load("go2")
    p = _stack(d, ["base_x", "base_y", "base_z"])
    quat = _stack(d, ["base_qx", "base_qy", "base_qz", "base_qw"])
    v = _stack(d, ["base_vx", "base_vy", "base_vz"])
    w = _stack(d, ["base_wx", "base_wy", "base_wz"])
    a = _stack(d, ["base_ax", "base_ay", "base_az"])
    alpha = _stack(d, ["base_alphax", "base_alphay", "base_alphaz"])
    q = np.concatenate([base_coordinates(p, quat), _stack(d, [f"q_{j}" for j in JOINTS])], axis=1)
    qd = np.concatenate([spatial_twist(p, v, w), _stack(d, [f"qd_{j}" for j in JOINTS])], axis=1)
    qdd = np.concatenate([spatial_acceleration(p, v, w, a, alpha), _stack(d, [f"qdd_{j}" for j in JOINTS])], axis=1)
    order = [robot.coordinate_names.index(j) for j in JOINTS]
    Y = pga_dyn.regressor(robot, q, qd, qdd)
    lhs = Y @ pga_dyn.inertial_parameters(robot)
    # the right-hand side: the feet's wrenches, with MuJoCo's kinematics of the logged state
    m, kd = go2.model, go2.kin
    ns = len(p)
    rhs = np.zeros((ns, 18))
    rhs[:, order] = _stack(d, [f"tau_{j}" for j in JOINTS]) + _stack(d, [f"tau_friction_{j}" for j in JOINTS])
    f = np.stack([_stack(d, [f"f_{foot}_{x}" for x in "xyz"]) for foot in FEET], axis=1)  # (ns, 4, 3)
    mom = np.stack([_stack(d, [f"m_{foot}_{x}" for x in "xyz"]) for foot in FEET], axis=1)
    jid = [m.joint(j).id for j in JOINTS]
    qj = _stack(d, [f"q_{j}" for j in JOINTS])
    for k in range(ns):
        go2.set_pose(kd, p[k], quat[k, [3, 0, 1, 2]], qj[k])
        go2.mj.mj_kinematics(m, kd)
        feet = go2.feet(kd)
        rhs[k, :3] = np.sum(np.cross(feet, f[k]) + mom[k], axis=0)
        rhs[k, 3:6] = f[k].sum(axis=0)
        for i in range(4):
            for c in range(3):
                jj = jid[3 * i + c]
                axis, anchor = kd.xaxis[jj], kd.xanchor[jj]
                rhs[k, order[3 * i + c]] += axis @ (np.cross(feet[i] - anchor, f[k, i]) + mom[k, i])
    if held:
        rhs[:, :3] += _stack(d, ["hold_mx", "hold_my", "hold_mz"])
        rhs[:, 3:6] += _stack(d, ["hold_fx", "hold_fy", "hold_fz"])
    out["base"] = float(np.abs(lhs[:, :6] - rhs[:, :6]).max() / np.abs(lhs[:, :6]).max())
    out["joints"] = float(np.abs(lhs[:, 6:] - rhs[:, 6:]).max() / np.abs(lhs[:, 6:]).max())
    return out


# --------------------------------------------------------------------------------------------
# the script


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", help="where the logs go (made if missing)")
    parser.add_argument("--experiments", nargs="+", choices=sorted(EXPERIMENTS), default=list(EXPERIMENTS))
    parser.add_argument("--duration", type=float, default=15.0, help="logged seconds of each experiment")
    parser.add_argument("--damping", type=float, default=0.0, help="joint viscous damping, N m s/rad")
    parser.add_argument("--frictionloss", type=float, default=0.0, help="joint dry friction, N m")
    parser.add_argument("--noise", type=float, default=0.01, help="noise on qd, tau, f, m: share of each RMS")
    parser.add_argument("--q-sigma", type=float, default=1e-4, help="encoder noise, rad")
    parser.add_argument("--gyro-sigma", type=float, default=5e-3, help="gyro white noise, rad/s")
    parser.add_argument("--gyro-bias", type=float, default=1e-2, help="gyro bias (std per axis), rad/s")
    parser.add_argument("--accel-sigma", type=float, default=0.03, help="accelerometer white noise, m/s^2")
    parser.add_argument("--accel-bias", type=float, default=0.05, help="accelerometer bias (std per axis), m/s^2")
    parser.add_argument("--foot-radius", type=float, default=0.02, help="radius of the sphere feet, m")
    parser.add_argument("--solref", type=float, default=0.005, help="time constant of the foot contacts, s")
    parser.add_argument("--delay", type=int, default=0, help="sensor delay of the noisy log, samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prefix", default="go2_", help="file names: PREFIX + experiment")
    parser.add_argument("--check", action="store_true", help="check the noise-free logs' equations (pga-dyn)")
    parser.add_argument("--force", action="store_true", help="write over logs that exist")
    parser.add_argument("--no-moments", action="store_true", help="no m_FOOT_* columns in the CSVs (point feet)")
    args = parser.parse_args(argv)
    if not args.force:
        names = [f"{args.prefix}{e}{s}" for e in args.experiments for s in ("", "_noisy")]
        files = [p for n in names for p in (f"{n}.csv", f"{n}.truth.npz")]
        files += [f"{args.prefix}{e}_exact.csv" for e in args.experiments]
        there = [p for p in files if os.path.exists(os.path.join(args.folder, p))]
        if there:
            parser.error(f"{args.folder} has {', '.join(there)} already (--force writes over them)")
    noise = Noise(
        args.noise,
        args.q_sigma,
        args.gyro_sigma,
        args.gyro_bias,
        args.accel_sigma,
        args.accel_bias,
        args.delay,
        args.seed,
    )
    options = {
        "damping": args.damping,
        "frictionloss": args.frictionloss,
        "foot_radius": args.foot_radius,
        "solref": args.solref,
    }
    for name in args.experiments:
        record = EXPERIMENTS[name](duration=args.duration, **options)
        paths = write_logs(record, args.folder, f"{args.prefix}{name}", noise, moments=not args.no_moments)
        d = record.data
        touch = np.stack([d[f"contact_{f}"] for f in FEET], axis=1)
        line = (
            f"{name}: {len(record)} samples, {len(record) * TIMESTEP:.3f} s, no foot on the floor {np.mean(touch.sum(1) == 0):.0%}, "
            f"trunk z {d['base_z'].min():.3f}..{d['base_z'].max():.3f} m -> {', '.join(os.path.basename(p) for p in paths)}"
        )
        print(line, flush=True)
        if args.check:
            res = check(dict(np.load(paths[1])))
            print("  residuals: " + ", ".join(f"{k} {v:.2e}" for k, v in res.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
