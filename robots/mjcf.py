"""MJCF, MuJoCo's XML format, read through MuJoCo's own compiler (the ``mjcf`` extra).

MuJoCo compiles the file (``<include>``, ``<default>`` classes, ``<frame>``, orientations,
inertia from geoms and meshes, ``inertiafromgeom``, ``fusestatic``, ...) into a
``mujoco.MjModel``; :func:`from_mujoco` reads that compiled model:

* bodies (``body_pos``, ``body_quat`` relative to the parent) and their inertia: mass,
  ``body_ipos``, and the principal inertia ``body_inertia`` turned by ``body_iquat``,
  I = R diag(body_inertia) R^T about the centre of mass;
* joints: ``hinge`` (R), ``slide`` (P), ``ball`` (S) at ``jnt_pos`` along ``jnt_axis``;
  several joints in one body act in turn, as a chain of massless links ``<body>__<joint>``; a
  body without a joint is welded to its parent. A hinge or slide coordinate is measured from
  its ``ref`` (q_pga-dyn = qpos - qpos0: zero at the pose of the file), its ``range`` (when
  limited) gives the sampling bounds of actuated joints;
* ``free`` joints: one body of the world with a free joint (and no other moving body of the
  world) is a floating base (pga-dyn's F joint, the body at the origin at q = 0, as Pinocchio
  reads it); free joints beside other moving bodies of the world are F tree joints of the
  world at the body's pose of the file;
* ``<equality>``: ``connect`` (bodies and anchor, or sites) is a spherical loop joint;
  ``weld`` (bodies with relpose and anchor, or sites) is the loop joint it cuts
  (:func:`robots.extended.weld_as_loop`); ``joint`` with a linear ``polycoef`` is a coupling
  (p1 = a0 + a1 p2 on the coordinates measured from ``ref``, MuJoCo's rule); ``tendon`` on fixed
  tendons (``<tendon><fixed>`` of ``<joint coef>``, length L = sum coef_j qpos_j) is a coupling
  too: MuJoCo holds L1 - L1_0 = a0 (one tendon) or L1 - L1_0 = a0 + a1 (L2 - L2_0) (two), i.e.
  sum_j t_j q_j = a0 with t = coef1 - a1 coef2 on pga-dyn's coordinates, solved for the last
  joint with t_j != 0 that no joint actuator drives (the constant a0 is the coupling's offset);
* actuators on joints: a joint that no actuator drives is passive when a loop moves it (it lies
  on the cycle of a connect or weld), otherwise it stays an independent coordinate (an
  unactuated joint of a tree: its generalized force is zero). An actuator on a fixed tendon
  drives a combination of its joints: read when no loop moves them, refused otherwise. Without
  actuators every joint is independent (a warning says so when the model has equalities);
* gravity: ``opt.gravity`` (zero under ``<flag gravity="disable"/>``).

A body's link frame is its body frame moved to its (last) joint's ``pos`` (URDF's convention:
the joint at the child's origin). ``armature`` (rotor inertia) is not a rigid-body parameter:
a :class:`~pga_dyn.errors.PgaDynWarning` names the joints that have one and
:func:`mjcf_armature` gives the values. Geoms, sites, cameras, contacts, sensors, tendons that
no equality uses, damping, friction and springs do not change the rigid-body model. What does
and pga-dyn lacks raises :class:`~pga_dyn.errors.PgaDynError` naming it: flex equalities,
tendon equalities on spatial tendons (sites, geoms), an inactive or disabled equality, a
nonlinear polycoef (a joint equality's, or a two-tendon equality's a2, a3, a4: pga-dyn's
couplings are linear), a locked joint (a joint equality without joint2, or a tendon equality
that leaves one joint), flexes, gravity compensation, an actuator neither on a joint nor on a
fixed tendon in a model with equalities (then the actuated joints decide the passive ones), an
actuator on a fixed tendon whose joints a loop moves.

:func:`write_mjcf` writes identified parameters into a copy of the file, or a new MJCF file of a
robot read from another format (URDF: a legged robot's floating base as a ``freejoint``).
:func:`mujoco_state`, :func:`from_mujoco_state`, :func:`mujoco_forces` and
:func:`from_mujoco_forces` map pga-dyn's states and generalized forces to MuJoCo's ``qpos``,
``qvel``, ``qacc`` and ``qfrc_*`` and back: hinge and slide q + qpos0, ball the quaternion (w, x,
y, z), free joint (p, w x y z), (v_p world; omega body), (f world; moment about the body origin in
the body frame) (:func:`pga_dyn.floating.free_joint_coordinates`; docs/conventions.md,
"Floating base").
"""

from __future__ import annotations

import dataclasses
import os
import warnings
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import inertia_of_pseudo, link_to_pseudo, pseudo_to_link
from pga_dyn.errors import PgaDynError, PgaDynWarning, optional
from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot, check_robot, rewritten_source

from .extended import weld_as_loop
from .urdf import read_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    import mujoco
    import numpy.typing as npt

__all__ = [
    "load_mjcf",
    "parse_mjcf",
    "from_mujoco",
    "mjcf_armature",
    "write_mjcf",
    "mujoco_state",
    "from_mujoco_state",
    "mujoco_forces",
    "from_mujoco_forces",
]

#: Attributes of a joint that :func:`write_mjcf` writes from its ``extras``.
JOINT_EXTRAS = ("damping", "frictionloss", "armature")


def _mujoco():
    return optional("mujoco", "reading MJCF (MuJoCo's compiler)", "mjcf")


def _compile(load, where: str):
    """MuJoCo's compiled model of ``load()``; its compiler's error as a PgaDynError naming ``where``."""
    try:
        return load()
    except ValueError as error:
        raise PgaDynError(f"{where}: MuJoCo's compiler: {error}") from None


def _pose(pos, quat) -> np.ndarray:
    """The pose (4, 4) of a MuJoCo position (3,) and unit quaternion (w, x, y, z)."""
    rot, quat = np.zeros(9), np.asarray(quat, dtype=float)
    _mujoco().mju_quat2Mat(rot, quat / np.linalg.norm(quat))
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rot.reshape(3, 3), pos
    return pose


def _translation(p) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = p
    return pose


class _Compiled:
    """Names, joints and link-frame offsets of a compiled ``mujoco.MjModel``."""

    def __init__(self, model, where: str):
        mj = _mujoco()
        self.mj, self.model, self.where = mj, model, where
        self.free, self.types = (
            int(mj.mjtJoint.mjJNT_FREE),
            {int(mj.mjtJoint.mjJNT_HINGE): "R", int(mj.mjtJoint.mjJNT_SLIDE): "P", int(mj.mjtJoint.mjJNT_BALL): "S"},
        )
        # unnamed bodies and joints get MuJoCo's id: body<id>, joint<id>
        self.bodies = [mj.mj_id2name(model, int(mj.mjtObj.mjOBJ_BODY), b) or f"body{b}" for b in range(model.nbody)]
        self.joints = [mj.mj_id2name(model, int(mj.mjtObj.mjOBJ_JOINT), j) or f"joint{j}" for j in range(model.njnt)]
        self.ref = model.qpos0[model.jnt_qposadr]  # the hinge and slide coordinates at the pose of the file

    def body_joints(self, b) -> range:
        return range(self.model.body_jntadr[b], self.model.body_jntadr[b] + self.model.body_jntnum[b])

    def offset(self, b) -> np.ndarray:
        """The link frame's origin in body ``b``'s frame: its last joint's position (0 without a
        joint or with a free joint)."""
        own = [j for j in self.body_joints(b) if self.model.jnt_type[j] != self.free]
        return self.model.jnt_pos[own[-1]].copy() if own else np.zeros(3)

    def inertial(self, b) -> Inertial:
        """Body ``b``'s inertial in its link frame: I = R diag(body_inertia) R^T about the centre of mass."""
        m = self.model
        rot = _pose(np.zeros(3), m.body_iquat[b])[:3, :3]
        return Inertial(
            float(m.body_mass[b]), m.body_ipos[b] - self.offset(b), rot @ np.diag(m.body_inertia[b]) @ rot.T
        )

    def fail(self, message):
        raise PgaDynError(f"{self.where}: {message}")


def from_mujoco(
    model: mujoco.MjModel,
    floating_base: bool | None = None,
    gravity: npt.ArrayLike | None = None,
    source: str | None = None,
) -> Robot:
    """Build a :class:`~pga_dyn.model.Robot` from a compiled ``mujoco.MjModel`` (module docstring).

    ``floating_base`` None: a body of the world with a free joint floats; False: free joints are
    welded at the pose of the file; True: the model must have a floating base (one body of the
    world, with a free joint). ``gravity`` None: ``opt.gravity``. ``source`` names the MJCF file
    the model was compiled from (in errors, and for :func:`write_mjcf`). A joint ``armature`` is
    named in a :class:`~pga_dyn.errors.PgaDynWarning` (:func:`mjcf_armature` gives the values).
    """
    compiled = _Compiled(model, source or _model_name(model))
    robot = _read(compiled, floating_base, gravity, source)
    armature = _armature(compiled)
    if armature:
        warnings.warn(
            f"{compiled.where}: joints {', '.join(armature)} have an armature (rotor inertia), which is not a "
            "rigid-body parameter: pga-dyn leaves it out of the robot (robots.mjcf_armature gives the "
            "values, e.g. for identification's extras; identify it with --armature)",
            PgaDynWarning,
            stacklevel=2,
        )
    return robot


def parse_mjcf(
    text: str, where: str = "<string>", floating_base: bool | None = None, gravity: npt.ArrayLike | None = None
) -> Robot:
    """Build a :class:`~pga_dyn.model.Robot` from MJCF text (:func:`from_mujoco` on MuJoCo's
    compiled model; ``<include>`` files are found from the working folder); ``where`` names it
    in errors."""
    model = _compile(lambda: _mujoco().MjModel.from_xml_string(text), where)
    return from_mujoco(model, floating_base, gravity, None if where == "<string>" else where)


def load_mjcf(
    path: os.PathLike | str, floating_base: bool | None = None, gravity: npt.ArrayLike | None = None
) -> Robot:
    """Read an MJCF file into a :class:`~pga_dyn.model.Robot` (:func:`from_mujoco` on MuJoCo's
    compiled model; ``<include>`` and mesh files are found from the file's folder)."""
    path = os.fspath(path)
    read_text(path)  # a missing or unreadable file is named as for the other formats
    model = _compile(lambda: _mujoco().MjModel.from_xml_path(path), path)
    return from_mujoco(model, floating_base, gravity, path)


def mjcf_armature(text: str, where: str = "<string>") -> dict:
    """{joint name: armature} of the joints of MJCF text with a nonzero ``armature`` (kg m^2 or
    kg, as MuJoCo compiled it, ``<default>`` classes applied), e.g. ``extras={"armature":
    [values.get(name, 0.0) for name in robot.actuated_names]}`` of
    :func:`identification.simulate`."""
    model = _compile(lambda: _mujoco().MjModel.from_xml_string(text), where)
    return _armature(_Compiled(model, where))


def _model_name(model) -> str:
    return bytes(model.names[: bytes(model.names).index(b"\0")]).decode()


def _armature(c: _Compiled) -> dict:
    m = c.model
    return {
        c.joints[j]: float(m.dof_armature[m.jnt_dofadr[j]])
        for j in range(m.njnt)
        if m.jnt_type[j] != c.free and m.dof_armature[m.jnt_dofadr[j]] != 0
    }


def _read(c: _Compiled, floating_base, gravity, source) -> Robot:
    m, mj, names = c.model, c.mj, c.bodies
    for b in range(m.nbody):
        if m.body_gravcomp[b] != 0:
            c.fail(
                f"body '{names[b]}' has gravcomp={m.body_gravcomp[b]:g}: gravity compensation is not supported "
                "(it changes the weight of the body)"
            )
    if m.nflex:
        c.fail("flexes (deformable bodies) are not supported")
    _check_equalities(c)
    independent = _independence(c)
    data = mj.MjData(m)
    mj.mj_kinematics(m, data)  # body frames at qpos0
    moving_roots = sorted({int(m.body_rootid[m.jnt_bodyid[j]]) for j in range(m.njnt)})
    free = [b for b in range(1, m.nbody) if any(m.jnt_type[j] == c.free for j in c.body_joints(b))]
    floating = len(moving_roots) == 1 and moving_roots == free and floating_base is not False
    if floating_base and not floating:
        c.fail(
            "floating_base=True needs one moving body of the world, with a free joint (this model has "
            f"{len(moving_roots)} moving bodies of the world, {len(free)} with a free joint)"
        )

    links, joints = [] if floating else [LinkSpec("world")], []
    for b in range(1, m.nbody):
        if floating and m.body_rootid[b] != moving_roots[0]:
            continue  # fixed to the world, which a floating base is not part of
        name, parent = names[b], names[m.body_parentid[b]]
        links += _body_joints(c, b, name, parent, independent, floating, floating_base, joints)
    for eq in range(m.neq):
        if m.eq_type[eq] == int(mj.mjtEq.mjEQ_JOINT):
            joints = _coupling(c, eq, joints)
        elif m.eq_type[eq] == int(mj.mjtEq.mjEQ_TENDON):
            joints = _tendon_coupling(c, eq, joints)
    loops = []
    for eq in range(m.neq):
        if m.eq_type[eq] == int(mj.mjtEq.mjEQ_CONNECT):
            loops.append(_connect(c, eq, data, len(loops)))
        elif m.eq_type[eq] == int(mj.mjtEq.mjEQ_WELD):
            joints, loop, ends = _weld(c, eq, joints, len(loops))
            links += ends
            loops.append(loop)
    if gravity is None:
        gravity = np.zeros(3) if m.opt.disableflags & int(mj.mjtDisableBit.mjDSBL_GRAVITY) else m.opt.gravity.copy()
    name = _model_name(m) or os.path.basename(c.where)
    return Robot(name, links, joints, loops, (), gravity=gravity, floating_base=floating, source=source)


def _body_joints(c: _Compiled, b, name, parent, independent, floating, floating_base, joints) -> list:
    """The links of MuJoCo body ``b`` (its own, after the massless links of a chain of joints);
    appends its joints to ``joints``. Several joints act in turn, each at its position in the
    body frame as turned by the previous ones: a chain of massless links ``<body>__<joint>``,
    each link frame at its joint's position."""
    m = c.model
    placement = _translation(-c.offset(m.body_parentid[b])) @ _pose(m.body_pos[b], m.body_quat[b])
    own = list(c.body_joints(b))
    if own and m.jnt_type[own[0]] == c.free:
        if not floating:  # a free joint beside other moving bodies of the world, or welded
            joints.append(
                JointSpec(c.joints[own[0]], "fixed" if floating_base is False else "F", parent, name, placement)
            )
        return [LinkSpec(name, c.inertial(b))]
    if not own:
        joints.append(JointSpec(f"{name}_weld", "fixed", parent, name, placement))
        return [LinkSpec(name, c.inertial(b))]
    links, previous, at = [], parent, np.zeros(3)
    for k, j in enumerate(own):
        kind = c.types[int(m.jnt_type[j])]
        child = name if k == len(own) - 1 else f"{name}__{c.joints[j]}"
        origin = placement @ _translation(m.jnt_pos[j]) if k == 0 else _translation(m.jnt_pos[j] - at)
        axes = m.jnt_axis[j].reshape(1, 3).copy() if kind in ("R", "P") else np.zeros((0, 3))
        limits = None
        if kind in ("R", "P") and m.jnt_limited[j]:
            limits = tuple(float(v) for v in m.jnt_range[j] - c.ref[j])
        joints.append(JointSpec(c.joints[j], kind, previous, child, origin, axes, independent(j), None, limits))
        if k < len(own) - 1:
            links.append(LinkSpec(child))
        previous, at = child, m.jnt_pos[j]
    return links + [LinkSpec(name, c.inertial(b))]


def _check_equalities(c: _Compiled) -> None:
    """Each equality is one pga-dyn reads: an active connect, weld, or linear joint coupling."""
    m, mj = c.model, c.mj
    disabled = m.opt.disableflags & (int(mj.mjtDisableBit.mjDSBL_EQUALITY) | int(mj.mjtDisableBit.mjDSBL_CONSTRAINT))
    kinds = {
        int(mj.mjtEq.mjEQ_CONNECT): "connect",
        int(mj.mjtEq.mjEQ_WELD): "weld",
        int(mj.mjtEq.mjEQ_JOINT): "joint",
        int(mj.mjtEq.mjEQ_TENDON): "tendon",
    }
    for eq in range(m.neq):
        name = mj.mj_id2name(m, int(mj.mjtObj.mjOBJ_EQUALITY), eq)
        what = f"<equality> {eq}" + (f" '{name}'" if name else "")
        kind = int(m.eq_type[eq])
        if kind not in kinds:
            c.fail(
                f"{what}: a {mj.mjtEq(kind).name[5:].lower()} equality is not supported (connect, weld, joint and "
                "tendon on fixed tendons are)"
            )
        if not m.eq_active0[eq] or disabled:
            c.fail(f"{what}: an inactive or disabled equality is not supported (remove it or make it active)")
        if kind == int(mj.mjtEq.mjEQ_JOINT):
            if m.eq_obj2id[eq] < 0:
                c.fail(f"{what}: needs joint1 and joint2 (a locked joint is not supported)")
            if np.any(m.eq_data[eq, 2:5] != 0):
                c.fail(
                    f"{what}: polycoef {m.eq_data[eq, :5].tolist()} is not linear (nonlinear couplings are not "
                    "supported)"
                )
        if kind == int(mj.mjtEq.mjEQ_TENDON):
            for t in (m.eq_obj1id[eq], m.eq_obj2id[eq]):
                if t >= 0:
                    _fixed_tendon(c, int(t), what)
            if m.eq_obj2id[eq] >= 0 and np.any(m.eq_data[eq, 2:5] != 0):
                c.fail(
                    f"{what}: polycoef {m.eq_data[eq, :5].tolist()} is not linear: MuJoCo holds L1 - L1_0 = a0 + a1 "
                    "(L2 - L2_0) + a2 (L2 - L2_0)^2 + a3 (...)^3 + a4 (...)^4, and pga-dyn's couplings are linear "
                    "(a2 = a3 = a4 = 0; the constant a0 is read as the coupling's offset)"
                )


def _fixed_tendon(c: _Compiled, t: int, what: str = "") -> dict:
    """{joint id: coefficient} of fixed tendon ``t``, whose length is L = sum coef_j qpos_j
    (MuJoCo's ``<tendon><fixed>``: every wrap a ``<joint coef>``, each a hinge or slide);
    L - L_0 = sum coef_j q_j on pga-dyn's coordinates (q = qpos - qpos0). A spatial tendon (sites,
    geoms, pulleys) fails, naming ``what`` uses it."""
    m, mj = c.model, c.mj
    name = mj.mj_id2name(m, int(mj.mjtObj.mjOBJ_TENDON), t) or str(t)
    terms = {}
    for k in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
        if int(m.wrap_type[k]) != int(mj.mjtWrap.mjWRAP_JOINT):
            c.fail(
                f"{what + ': ' if what else ''}tendon '{name}' is a spatial tendon (it wraps sites or geoms): "
                "pga-dyn reads fixed tendons of joints only (<tendon><fixed> with <joint coef>)"
            )
        j = int(m.wrap_objid[k])
        terms[j] = terms.get(j, 0.0) + float(m.wrap_prm[k])
    return terms


def _tendon_coupling(c: _Compiled, eq, joints) -> list:
    """A tendon equality on fixed tendons, L1 - L1_0 = a0 + a1 (L2 - L2_0) (MuJoCo's rule; a0
    alone without tendon2), as a coupling: sum_j t_j q_j = a0 with t = coef1 - a1 coef2 over
    the joints, solved for one joint f (the last in MuJoCo's order with t_f != 0 that no joint
    actuator drives and that follows nothing yet): q_f = a0 / t_f - sum_{j != f} (t_j / t_f) q_j,
    a mimic with others (:class:`pga_dyn.model.JointSpec`). An equality whose terms cancel, or
    that holds a single joint (a locked joint), fails."""
    m, mj = c.model, c.mj
    name = mj.mj_id2name(m, int(mj.mjtObj.mjOBJ_EQUALITY), eq)
    what = f"<equality> {eq}" + (f" '{name}'" if name else "")
    terms = _fixed_tendon(c, int(m.eq_obj1id[eq]), what)
    a0 = float(m.eq_data[eq, 0])
    if m.eq_obj2id[eq] >= 0:
        a1 = float(m.eq_data[eq, 1])
        for j, coef in _fixed_tendon(c, int(m.eq_obj2id[eq]), what).items():
            terms[j] = terms.get(j, 0.0) - a1 * coef
    terms = {j: t for j, t in terms.items() if t != 0.0}
    if len(terms) < 2:
        c.fail(
            f"{what}: the tendon equality's joint terms cancel: it constrains no joint"
            if not terms
            else f"{what}: the tendon equality holds joint '{c.joints[next(iter(terms))]}' alone (a locked joint is "
            "not supported)"
        )
    driven = {
        int(m.actuator_trnid[a, 0])
        for a in range(m.nu)
        if int(m.actuator_trntype[a]) in (int(mj.mjtTrn.mjTRN_JOINT), int(mj.mjtTrn.mjTRN_JOINTINPARENT))
    }
    following = {j.name for j in joints if j.mimic is not None}
    free = [j for j in sorted(terms) if j not in driven and c.joints[j] not in following]
    loose = [j for j in sorted(terms) if c.joints[j] not in following]
    if not loose:
        c.fail(f"{what}: every joint of the tendon equality follows another coupling already")
    f = (free or loose)[-1]
    others = [(c.joints[j], -t / terms[f]) for j, t in terms.items() if j != f]
    mimic = (others[0][0], others[0][1], a0 / terms[f], tuple(others[1:]))
    return [j if j.name != c.joints[f] else dataclasses.replace(j, mimic=mimic) for j in joints]


def _loop_bodies(c: _Compiled, eq) -> tuple:
    """The MuJoCo bodies (b1, b2) of a connect or weld equality (of its sites, when on sites)."""
    m = c.model
    ids = (m.eq_obj1id[eq], m.eq_obj2id[eq])
    if m.eq_objtype[eq] == int(c.mj.mjtObj.mjOBJ_SITE):
        return tuple(int(m.site_bodyid[s]) for s in ids)
    return tuple(int(i) for i in ids)


def _independence(c: _Compiled):
    """independent(j) of joint j: None without actuators, else whether an actuator drives it or
    no loop moves it (its body is not on the tree path between the two bodies of a connect or
    weld, below their nearest common ancestor). An actuator on a fixed tendon drives a
    combination of its joints: it changes nothing when no loop moves them (they are independent
    anyway, and a tendon equality's coupling decides its own follower), and fails when one is on
    a loop's cycle (which of them is actuated is then not stated)."""
    m, mj = c.model, c.mj
    loops = [eq for eq in range(m.neq) if int(m.eq_type[eq]) in (int(mj.mjtEq.mjEQ_CONNECT), int(mj.mjtEq.mjEQ_WELD))]
    if m.nu == 0:
        if m.neq:
            warnings.warn(
                f"{c.where}: no <actuator>: every joint is taken as actuated (independent)", PgaDynWarning, stacklevel=4
            )
        return lambda j: None
    moved = set()
    for eq in loops:
        up1, up2 = (_ancestors(m, b) for b in _loop_bodies(c, eq))
        moved |= set(up1).symmetric_difference(up2)
    on_joints = (int(mj.mjtTrn.mjTRN_JOINT), int(mj.mjtTrn.mjTRN_JOINTINPARENT))
    driven = set()
    for a in range(m.nu):
        name = mj.mj_id2name(m, int(mj.mjtObj.mjOBJ_ACTUATOR), a) or str(a)
        kind, target = int(m.actuator_trntype[a]), int(m.actuator_trnid[a, 0])
        if kind in on_joints:
            driven.add(target)
        elif kind == int(mj.mjtTrn.mjTRN_TENDON) and _is_fixed(c, target):
            looped = [c.joints[j] for j in _fixed_tendon(c, target) if int(m.jnt_bodyid[j]) in moved]
            if looped:
                c.fail(
                    f"actuator '{name}' drives a fixed tendon whose joints {looped} a loop moves: which of "
                    "them is actuated is not stated (put the actuators on joints)"
                )
        elif m.neq:
            c.fail(
                f"actuator '{name}' is neither on a joint (joint=...) nor on a fixed tendon: with equalities, the "
                "actuated joints decide which are passive, and pga-dyn reads actuators on joints and fixed tendons"
            )
    return lambda j: j in driven or int(m.jnt_bodyid[j]) not in moved


def _is_fixed(c: _Compiled, t: int) -> bool:
    """Whether tendon ``t`` is fixed (every wrap a joint)."""
    m = c.model
    return all(
        int(m.wrap_type[k]) == int(c.mj.mjtWrap.mjWRAP_JOINT)
        for k in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])
    )


def _ancestors(model, b) -> list:
    """Body ``b`` and its ancestors up to the world (0)."""
    chain = [b]
    while chain[-1]:
        chain.append(int(model.body_parentid[chain[-1]]))
    return chain


def _coupling(c: _Compiled, eq, joints) -> list:
    """joint1 = a0 + a1 joint2 (coordinates from their ref) as URDF's mimic on joint1."""
    m = c.model
    j1, j2 = c.joints[m.eq_obj1id[eq]], c.joints[m.eq_obj2id[eq]]
    a0, a1 = (float(v) for v in m.eq_data[eq, :2])
    return [j if j.name != j1 else dataclasses.replace(j, mimic=(j2, a1, a0)) for j in joints]


def _connect(c: _Compiled, eq, data, index) -> LoopSpec:
    """A connect equality as a spherical loop joint: its point on body1 (anchor or site1) and on
    body2 (the point that coincides with it at qpos0, as MuJoCo's compiler computed it, or site2)."""
    m = c.model
    b1, b2 = _loop_bodies(c, eq)
    if m.eq_objtype[eq] == int(c.mj.mjtObj.mjOBJ_SITE):
        points = m.site_pos[m.eq_obj1id[eq]], m.site_pos[m.eq_obj2id[eq]]
    else:
        points = m.eq_data[eq, 0:3], m.eq_data[eq, 3:6]
    turn = data.xmat[b2].reshape(3, 3).T @ data.xmat[b1].reshape(3, 3)  # body1's axes in body2 at qpos0
    frames = []
    for body, point, rot in ((b1, points[0], np.eye(3)), (b2, points[1], turn)):
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = rot, point - c.offset(body)
        frames.append(frame)
    name = c.mj.mj_id2name(m, int(c.mj.mjtObj.mjOBJ_EQUALITY), eq) or f"connect{index}"
    return LoopSpec(name, "S", c.bodies[b1], c.bodies[b2], frames[0], frames[1])


def _weld(c: _Compiled, eq, joints, index):
    """A weld equality as the loop joint it cuts (:func:`robots.extended.weld_as_loop`): a
    massless link ``<name>_A`` on body1 at its frame F1 and ``<name>_B`` on body2 at F2 are
    welded, T1 F1 = T2 F2. Bodies: F1 = (relpose quaternion, relpose position), F2 = (1,
    anchor), so that body2's point anchor sits at relpose's position in body1 with body2 turned
    by relpose's quaternion (MuJoCo's compiler computed relpose at qpos0 when it was not given);
    sites: F1, F2 are the sites' frames."""
    m, mj = c.model, c.mj
    b1, b2 = _loop_bodies(c, eq)
    if m.eq_objtype[eq] == int(mj.mjtObj.mjOBJ_SITE):
        s1, s2 = m.eq_obj1id[eq], m.eq_obj2id[eq]
        f1, f2 = _pose(m.site_pos[s1], m.site_quat[s1]), _pose(m.site_pos[s2], m.site_quat[s2])
    else:
        f1, f2 = _pose(m.eq_data[eq, 3:6], m.eq_data[eq, 6:10]), _translation(m.eq_data[eq, 0:3])
    name = mj.mj_id2name(m, int(mj.mjtObj.mjOBJ_EQUALITY), eq) or f"weld{index}"
    ends = (f"{name}_A", f"{name}_B")
    by_name = {j.name: j for j in joints}
    for end, body, frame in ((ends[0], b1, f1), (ends[1], b2, f2)):
        by_name[f"{end}_frame"] = JointSpec(
            f"{end}_frame", "fixed", c.bodies[body], end, _translation(-c.offset(body)) @ frame
        )
    loop = weld_as_loop(by_name, ends, f"{c.where}: <weld name='{name}'>")
    return list(by_name.values()), loop, [LinkSpec(ends[0]), LinkSpec(ends[1])]


# -- writer --------------------------------------------------------------------------------------


def write_mjcf(
    source: Robot | os.PathLike | str,
    phi: npt.ArrayLike,
    path: os.PathLike | str,
    extras: Mapping[str, Mapping[str, float] | npt.ArrayLike] | None = None,
) -> str:
    """Write identified parameters into a copy of an MJCF file; returns ``path``.

    ``source`` is a Robot read from an MJCF file (:func:`load_mjcf`) or the path of that file; a
    Robot read from another format (URDF, a built-in robot, :func:`robots.from_pinocchio`) is
    written as a new MJCF file of its tree instead (each body at its joint's placement, R
    ``hinge``, P ``slide``, S ``ball``, F ``freejoint``, merged links as ``<site>``, gravity,
    every number to its last digit; loop joints, couplings and universal joints refused);
    ``phi`` (n, 10) or (10 n,) are the link-frame parameters of its bodies
    (``robot.body_names`` order, ``conventions.LINK_PARAM_NAMES``: m, m c, the inertia about
    the link frame's origin), e.g. an identification's ``full.phi``. Each body's ``<inertial>``
    is replaced (or added) by ``pos`` (the centre of mass in the body frame), ``mass`` and
    ``fullinertia`` (about the centre of mass; ``diaginertia`` when it is diagonal); the bodies merged into it (welded, without a
    joint) get a zero inertial, as their mass is the body's. ``extras`` {attribute: {joint:
    value} or values of ``robot.actuated_names``, 0 for the coordinates of a joint of several: a
    floating base, a ball} for the attributes ``damping``,
    ``frictionloss`` and ``armature`` (the identification's viscous, Coulomb and armature terms)
    sets those joint attributes. So that the inertials are the model's, ``inertiafromgeom="true"``
    becomes ``"auto"`` and the compiler's ``settotalmass``, ``boundmass``, ``boundinertia`` and
    ``balanceinertia`` are removed. Everything else in the file is kept; ``path`` must be a new
    file (the input is never written to), and relative ``file`` paths in it (includes, meshes)
    resolve from ``path``'s folder. MuJoCo compiles the written file and its parameters are
    checked against ``phi``: a body that MuJoCo would read differently (a massless moving
    body, an inertia off the triangle inequality, an ``<include>`` that sets the compiler)
    raises :class:`~pga_dyn.errors.PgaDynError` naming it, and the file is removed."""
    robot = source if isinstance(source, Robot) else load_mjcf(source)
    if not _is_mjcf(robot.source):
        return _write_generated(robot, phi, path, extras)
    file, path, phi = rewritten_source(robot, phi, path, "MJCF")
    mj = _mujoco()
    compiled = _Compiled(_compile(lambda: mj.MjModel.from_xml_path(file), file), file)
    tree = ET.parse(file, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    root = tree.getroot()
    elements = _body_elements(compiled, root)
    for name, phi_b in zip(robot.body_names, phi):
        members = [link for link in robot.graph.nodes[name]["links"] if link in compiled.bodies]
        if name not in compiled.bodies:  # a massless link of a chain of joints in one body
            if np.any(phi_b != 0):
                raise PgaDynError(
                    f"{file}: body '{name}' (between joints of one MJCF body) has parameters, but "
                    "MJCF has no body for it: its parameters must be zero"
                )
            continue
        for member in members:
            b = compiled.bodies.index(member)
            if b not in elements:
                raise PgaDynError(
                    f"{file}: body '{member}' is not an element of this file (an <include>, "
                    "<replicate> or <attach> makes it): its inertial cannot be written"
                )
            mass, com, inertia = _mass_properties(phi_b if member == name else np.zeros(10))
            _set_inertial(elements[b], mass, com + compiled.offset(b), inertia)
    if extras:
        _set_joint_extras(robot, root, extras, file)
    _neutralize_compiler(root)
    ET.indent(tree)
    tree.write(path, encoding="unicode", xml_declaration=False)
    floating = True if robot.floating_base else (None if "F" in robot.joint_type else False)
    _check_written(robot, phi, path, floating)
    return path


def _is_mjcf(source) -> bool:
    """Whether ``source`` is an MJCF file (its root element ``<mujoco>``)."""
    if not source or not os.path.isfile(source):
        return False
    try:
        return ET.parse(source).getroot().tag == "mujoco"
    except ET.ParseError:
        return False


def _numbers(values) -> str:
    """Numbers as MJCF writes them, to the last digit (``repr``)."""
    return " ".join(repr(float(v)) for v in values)


def _write_generated(robot: Robot, phi, path, extras) -> str:
    """:func:`write_mjcf` of a robot that was not read from MJCF: a new MJCF file of its tree
    (:func:`_generated`), MuJoCo's reading checked against ``phi``."""
    path = os.fspath(path)
    if robot.source and os.path.exists(path) and os.path.samefile(path, robot.source):
        raise PgaDynError(f"{path}: this is the robot's own file; write the identified model to a new file")
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    if phi.shape[0] != robot.n:
        raise PgaDynError(f"phi has parameters of {phi.shape[0]} bodies, '{robot.name}' has {robot.n}")
    root = _generated(robot, phi)
    if extras:
        _set_joint_extras(robot, root, extras, path)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="unicode", xml_declaration=False)
    floating = True if robot.floating_base else (None if "F" in robot.joint_type else False)
    _check_written(robot, phi, path, floating)
    return path


def _generated(robot: Robot, phi: np.ndarray):
    """The ``<mujoco>`` element of ``robot``'s tree with the link-frame parameters ``phi`` (n, 10):
    body i named ``robot.body_names[i - 1]`` in its parent's at ``robot.origin[i]`` (pos, quat w x
    y z), its joint at the body frame's origin (R ``hinge``, P ``slide`` along the axis, with the
    joint's limits as ``range``; S ``ball``; F ``freejoint``), its ``<inertial>``; the links merged
    into a body (fixed joints) as ``<site>`` elements at their poses (e.g. the feet, contact
    frames); gravity as ``<option gravity>``; angles in radians. Loop joints, couplings and
    universal joints are refused (a universal joint is two MJCF joints of one body, which read
    back as two bodies)."""
    from pga_dyn.pga import rotation_quaternion

    where = robot.source or robot.name
    if robot.constrained:
        raise PgaDynError(
            f"{where}: write_mjcf writes loop joints and couplings only into a copy of an MJCF file (this robot is "
            "not from one)"
        )
    if "U" in robot.joint_type:
        joint = robot.joint_names[robot.joint_type.index("U")]
        raise PgaDynError(f"{where}: universal joint '{joint}': write_mjcf writes a new file of R, P, S and F joints")
    root = ET.Element("mujoco", {"model": robot.name})
    ET.SubElement(root, "compiler", {"angle": "radian", "autolimits": "true"})
    ET.SubElement(root, "option", {"gravity": _numbers(robot.gravity)})
    elements = [ET.SubElement(root, "worldbody")]

    def sites(element, body: str) -> None:
        for link in robot.graph.nodes[body]["links"]:
            if link != body:
                pose = robot.link_pose(link)
                attributes = {"name": link, "pos": _numbers(pose[:3, 3])}
                attributes["quat"] = _numbers(rotation_quaternion(pose[:3, :3]))
                ET.SubElement(element, "site", attributes)

    if not robot.floating_base:
        sites(elements[0], robot.graph_name(0))
    for i in range(1, robot.n + 1):
        name, origin, kind = robot.body_names[i - 1], robot.origin[i], robot.joint_type[i]
        attributes = {"name": name, "pos": _numbers(origin[:3, 3])}
        attributes["quat"] = _numbers(rotation_quaternion(origin[:3, :3]))
        body = ET.SubElement(elements[int(robot.parent[i])], "body", attributes)
        elements.append(body)
        if kind == "F":
            ET.SubElement(body, "freejoint", {"name": robot.joint_names[i]})
        else:
            joint = {"name": robot.joint_names[i], "type": {"R": "hinge", "P": "slide", "S": "ball"}[kind]}
            if kind in ("R", "P"):
                joint["axis"] = _numbers(robot.axes[i][0])
                limits = robot.tree_joints[i - 1].limits
                if limits is not None:
                    joint["range"] = _numbers(limits)
            ET.SubElement(body, "joint", joint)
        mass, com, inertia = _mass_properties(phi[i - 1])
        _set_inertial(body, mass, com, inertia)
        sites(body, name)
    return root


def _mass_properties(phi_b):
    """(mass, centre of mass, inertia about it) of link parameters phi_b (10,)."""
    return inertia_of_pseudo(link_to_pseudo(phi_b))


def _body_elements(c: _Compiled, root) -> dict:
    """{MuJoCo body id: its <body> element in this file}: by document order when the file's
    bodies are the model's (no include, replicate or attach adds any), else by name."""
    found = list(root.iter("body"))
    worldbody = [e for e in root.iter("worldbody")]
    if (
        len(worldbody) == 1
        and len(found) == c.model.nbody - 1
        and all(e.get("name") in (None, c.bodies[b]) for b, e in enumerate(found, 1))
    ):
        return dict(enumerate(found, 1))
    return {c.bodies.index(e.get("name")): e for e in found if e.get("name") in c.bodies}


def _set_inertial(body, mass, com, inertia) -> None:
    """Replace (or add, first) the ``<inertial>`` of a ``<body>`` element: ``fullinertia``, or
    ``diaginertia`` when the products of inertia are zero (MuJoCo refuses a ``fullinertia``
    that is not positive definite, e.g. the zero inertia of a merged body)."""
    for old in body.findall("inertial"):
        body.remove(old)
    products = (inertia[0, 1], inertia[0, 2], inertia[1, 2])
    key, values = (
        ("diaginertia", np.diag(inertia))
        if not any(products)
        else ("fullinertia", (inertia[0, 0], inertia[1, 1], inertia[2, 2], *products))
    )
    element = ET.Element(
        "inertial",
        {
            "pos": " ".join(repr(float(v)) for v in com),
            "mass": repr(float(mass)),
            key: " ".join(repr(float(v)) for v in values),
        },
    )
    body.insert(0, element)


def _set_joint_extras(robot, root, extras, file) -> None:
    joints = {e.get("name"): e for e in root.iter("joint") if e.get("name")}
    for attribute, values in extras.items():
        if attribute not in JOINT_EXTRAS:
            raise PgaDynError(
                f"extras: unknown joint attribute '{attribute}'; write_mjcf writes {', '.join(JOINT_EXTRAS)}"
            )
        if not isinstance(values, dict):
            values = np.asarray(values, dtype=float).reshape(-1)
            if values.shape != (len(robot.actuated_names),):
                raise PgaDynError(
                    f"extras['{attribute}']: expected {len(robot.actuated_names)} values, one per "
                    f"actuated coordinate {list(robot.actuated_names)}, or a {{joint: value}} dict"
                )
            several = [c for c, v in zip(robot.actuated_names, values) if c not in joints and v != 0]
            if several:
                raise PgaDynError(
                    f"extras['{attribute}']: coordinates {several} are not joints of one coordinate (a "
                    "floating base, a ball joint): an MJCF joint attribute cannot hold their values (give 0)"
                )
            values = {c: v for c, v in zip(robot.actuated_names, values) if c in joints}
        for joint, value in values.items():
            if joint not in joints:
                raise PgaDynError(f"{file}: extras['{attribute}']: no <joint name='{joint}'> in this file")
            if not np.isfinite(value) or value < 0:
                raise PgaDynError(f"extras['{attribute}']['{joint}'] = {value}: must be a finite number >= 0")
            joints[joint].set(attribute, repr(float(value)))


def _neutralize_compiler(root) -> None:
    """The written inertials are the model's: no inertia from geoms over them, no rescaling."""
    for compiler in root.iter("compiler"):
        if compiler.get("inertiafromgeom") == "true":
            compiler.set("inertiafromgeom", "auto")
        for key in ("settotalmass", "boundmass", "boundinertia", "balanceinertia"):
            compiler.attrib.pop(key, None)


def _check_written(robot, phi, path, floating) -> None:
    """MuJoCo compiles the written file; its bodies' link parameters must be ``phi``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PgaDynWarning)
            written = load_mjcf(path, floating_base=floating, gravity=robot.gravity)
        if written.body_names != robot.body_names:
            raise PgaDynError(f"{path}: the written file has bodies {written.body_names}, not {robot.body_names}")
        got = [pseudo_to_link(written.graph.nodes[name]["inertial"].pseudo_inertia()) for name in robot.body_names]
        scale = np.maximum(np.abs(phi).max(axis=1, keepdims=True), np.finfo(float).tiny)
        off = [name for name, a, b, s in zip(robot.body_names, got, phi, scale) if np.abs(a - b).max() > 1e-9 * s]
        if off:
            raise PgaDynError(
                f"{path}: MuJoCo reads other parameters for bodies {off} from the written file (its "
                "compiler settings, e.g. in an <include>, change the inertials)"
            )
    except PgaDynError:
        os.remove(path)
        raise


# -- states and generalized forces, pga-dyn <-> MuJoCo -------------------------------------------


def _mujoco_joints(robot: Robot, model) -> list:
    """[(tree joint i, MuJoCo joint id)] of ``robot``'s tree joints in ``model``: by name, the
    floating base as the free joint of the body named after it (its name need not be the joint's);
    each checked to be of pga-dyn's joint type (hinge R, slide P, ball S, free F)."""
    mj = _mujoco()
    robot = check_robot(robot)
    if robot.constrained or "U" in robot.joint_type:
        raise PgaDynError(
            f"{robot.source or robot.name}: mujoco_state maps trees of R, P, S and F joints (no loop joint, "
            "coupling or universal joint)"
        )
    kinds = {
        "R": int(mj.mjtJoint.mjJNT_HINGE),
        "P": int(mj.mjtJoint.mjJNT_SLIDE),
        "S": int(mj.mjtJoint.mjJNT_BALL),
        "F": int(mj.mjtJoint.mjJNT_FREE),
    }
    pairs = []
    for i in range(1, robot.n + 1):
        name, kind = robot.joint_names[i], robot.joint_type[i]
        j = mj.mj_name2id(model, int(mj.mjtObj.mjOBJ_JOINT), name)
        if j < 0 and kind == "F":
            b = mj.mj_name2id(model, int(mj.mjtObj.mjOBJ_BODY), robot.body_names[i - 1])
            free = [k for k in range(model.njnt) if model.jnt_bodyid[k] == b and model.jnt_type[k] == kinds["F"]]
            j = free[0] if b >= 0 and free else -1
        if j < 0:
            raise PgaDynError(f"the MuJoCo model has no joint '{name}' of {robot.name}")
        if int(model.jnt_type[j]) != kinds[kind]:
            raise PgaDynError(f"MuJoCo's joint '{name}' is of type {int(model.jnt_type[j])}, not pga-dyn's {kind}")
        pairs.append((i, j))
    return pairs


def _slices(model, j: int, width: int) -> tuple:
    """(qpos slice, dof slice) of MuJoCo joint ``j`` with ``width`` qpos entries."""
    qa, da = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    dofs = {7: 6, 4: 3, 1: 1}[width]
    return slice(qa, qa + width), slice(da, da + dofs)


def mujoco_state(
    robot: Robot,
    model: mujoco.MjModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
) -> tuple:
    """MuJoCo's (qpos, qvel, qacc) of pga-dyn's coordinates ``q``, ``qd``, ``qdd`` of ``robot``.

    Parameters
    ----------
    robot : Robot
        A tree of R, P, S and F joints.
    model : mujoco.MjModel
        MuJoCo's model of the robot (the file it was read from, or the one :func:`write_mjcf`
        wrote): joints found by name, the floating base as the free joint of its body.
    q, qd, qdd : array_like (robot.nq,) or (ns, robot.nq)
        pga-dyn's coordinates (docs/conventions.md); qd, qdd optional.

    Returns
    -------
    tuple
        (qpos (model.nq,), qvel (model.nv,), qacc (model.nv,)), or (ns, ...) for a batch; qvel,
        qacc None when qd, qdd are. Hinge and slide: qpos = q + qpos0 (pga-dyn measures from the
        file's ``ref``), velocities the same; ball: the quaternion (w, x, y, z) of exp(r^), the
        velocity (body frame) the same; free: :func:`pga_dyn.floating.free_joint_coordinates`
        (qpos the world pose (p, w x y z), qvel = (v_p world; omega in the body frame)). Joints of
        ``model`` that are not the robot's stay at qpos0 and rest.
    """
    from pga_dyn.floating import batch, free_joint_coordinates, rotation_vector_quaternions, unbatched

    single, (q, qd, qdd) = batch(q, qd, qdd)
    ns = len(q)
    qpos = np.tile(model.qpos0, (ns, 1))
    qvel = None if qd is None else np.zeros((ns, model.nv))
    qacc = None if qdd is None else np.zeros((ns, model.nv))
    for i, j in _mujoco_joints(robot, model):
        sl, kind = robot.coordinates(i), robot.joint_type[i]
        iq, iv = _slices(model, j, {"F": 7, "S": 4}.get(kind, 1))
        if kind == "F":
            zero = np.zeros((ns, 6))
            pos, vel, acc = free_joint_coordinates(
                q[:, sl], zero if qd is None else qd[:, sl], None if qdd is None else qdd[:, sl], robot.origin[i]
            )
            qpos[:, iq] = pos
            for out, value in ((qvel, vel), (qacc, acc)):
                if out is not None:
                    out[:, iv] = value
            continue
        if kind == "S":
            qpos[:, iq] = rotation_vector_quaternions(q[:, sl])[:, [3, 0, 1, 2]]  # MuJoCo's (w, x, y, z)
        else:
            qpos[:, iq] = q[:, sl] + model.qpos0[iq]
        for out, src in ((qvel, qd), (qacc, qdd)):
            if out is not None:
                out[:, iv] = src[:, sl]
    return unbatched(single, qpos, qvel, qacc)


def from_mujoco_state(
    robot: Robot,
    model: mujoco.MjModel,
    qpos: npt.ArrayLike,
    qvel: npt.ArrayLike | None = None,
    qacc: npt.ArrayLike | None = None,
) -> tuple:
    """The inverse of :func:`mujoco_state`: pga-dyn's (q, qd, qdd) ((robot.nq,) or (ns, robot.nq);
    qd, qdd None when ``qvel``, ``qacc`` are) of MuJoCo's ``qpos`` (model.nq,), ``qvel``, ``qacc``
    (model.nv,) (or (ns, ...)), e.g. ``data.qpos`` of a simulation. Rotations come back as
    principal rotation vectors and exponential coordinates (|omega| <= pi)."""
    from pga_dyn.floating import batch, from_free_joint_coordinates, quaternion_rotation_vectors, unbatched

    single, (qpos, qvel, qacc) = batch(qpos, qvel, qacc)
    ns = len(qpos)
    q = np.zeros((ns, robot.nq))
    qd = None if qvel is None else np.zeros((ns, robot.nq))
    qdd = None if qacc is None else np.zeros((ns, robot.nq))
    for i, j in _mujoco_joints(robot, model):
        sl, kind = robot.coordinates(i), robot.joint_type[i]
        iq, iv = _slices(model, j, {"F": 7, "S": 4}.get(kind, 1))
        if kind == "F":
            zero = np.zeros((ns, 6))
            xi, twist, acc = from_free_joint_coordinates(
                qpos[:, iq],
                zero if qvel is None else qvel[:, iv],
                None if qacc is None else qacc[:, iv],
                robot.origin[i],
            )
            q[:, sl] = xi
            for out, value in ((qd, twist), (qdd, acc)):
                if out is not None:
                    out[:, sl] = value
            continue
        if kind == "S":
            quat = qpos[:, iq] / np.linalg.norm(qpos[:, iq], axis=1, keepdims=True)
            q[:, sl] = quaternion_rotation_vectors(quat[:, [1, 2, 3, 0]])
        else:
            q[:, sl] = qpos[:, iq] - model.qpos0[iq]
        for out, src in ((qd, qvel), (qdd, qacc)):
            if out is not None:
                out[:, sl] = src[:, iv]
    return unbatched(single, q, qd, qdd)


def mujoco_forces(robot: Robot, model: mujoco.MjModel, q: npt.ArrayLike, tau: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's generalized forces (model.nv,) (or (ns, model.nv)), as ``qfrc_inverse`` and
    ``qfrc_applied`` hold them, of pga-dyn's ``tau`` (robot.nq,) (or (ns, robot.nq)) at pga-dyn's
    coordinates ``q``: the same numbers, but for the floating joint's world wrench about the
    origin (n_o; f), which becomes the free joint's (f; R^T (n_o - p x f)): the world force and the
    moment about the trunk's origin in the trunk frame (:func:`pga_dyn.floating.free_joint_wrench`)."""
    from pga_dyn.floating import batch, free_joint_wrench, unbatched

    single, (tau, q) = batch(tau, q)
    out = np.zeros((len(tau), model.nv))
    for i, j in _mujoco_joints(robot, model):
        sl, kind = robot.coordinates(i), robot.joint_type[i]
        iv = _slices(model, j, {"F": 7, "S": 4}.get(kind, 1))[1]
        out[:, iv] = free_joint_wrench(q[:, sl], tau[:, sl], robot.origin[i]) if kind == "F" else tau[:, sl]
    return unbatched(single, out)[0]


def from_mujoco_forces(robot: Robot, model: mujoco.MjModel, q: npt.ArrayLike, qfrc: npt.ArrayLike) -> np.ndarray:
    """The inverse of :func:`mujoco_forces`: pga-dyn's generalized forces (robot.nq,) (or (ns,
    robot.nq)) of MuJoCo's ``qfrc`` (model.nv,) (e.g. ``data.qfrc_inverse`` after ``mj_inverse``)
    at pga-dyn's coordinates ``q`` (:func:`pga_dyn.floating.from_free_joint_wrench`)."""
    from pga_dyn.floating import batch, from_free_joint_wrench, unbatched

    single, (qfrc, q) = batch(qfrc, q)
    out = np.zeros((len(qfrc), robot.nq))
    for i, j in _mujoco_joints(robot, model):
        sl, kind = robot.coordinates(i), robot.joint_type[i]
        iv = _slices(model, j, {"F": 7, "S": 4}.get(kind, 1))[1]
        out[:, sl] = from_free_joint_wrench(q[:, sl], qfrc[:, iv], robot.origin[i]) if kind == "F" else qfrc[:, iv]
    return unbatched(single, out)[0]
