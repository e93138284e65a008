"""MJCF through MuJoCo's compiler (robots.from_mujoco): pga-dyn's forces against MuJoCo's own
inverse dynamics, welds and connects closed at qpos0, free joints, gravity, the refusals, the
missing extra; write_mjcf round trips (MuJoCo's compiled parameters and pga-dyn's reading of the
written file equal the parameters written)."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest
from format_fixtures import HERE

import drng
import pga_dyn
import pga_dyn.sampling
import robots
from pga_dyn.conventions import pseudo_inertia, pseudo_to_link
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.kinematics import initial_poses

mujoco = pytest.importorskip("mujoco")

#: Slides and hinges with a ref, three joints in one body at their own positions, rotated
#: bodies, an inertia from geoms, armature (left out of pga-dyn's robot) and damping.
ARM = """<mujoco model="arm"><compiler angle="radian"/><option gravity="0.5 -1 -9.81"/>
<default><joint armature="0.1" damping="0.3"/></default>
<worldbody><body name="carriage" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2">
 <inertial pos="0.05 0.02 -0.1" mass="2" fullinertia="0.03 0.025 0.02 0.001 0.002 0.003"/>
 <joint name="slide" type="slide" axis="1 0 0" ref="0.4"/>
 <body name="hip" pos="0 0 -0.2" euler="0.1 0.2 0.3">
  <inertial pos="0.05 0.02 -0.2" mass="2" fullinertia="0.03 0.025 0.02 0.001 0.002 0.003"/>
  <joint name="hx" axis="1 0 0" pos="0.01 0 0" ref="0.3"/><joint name="hy" axis="0 1 0" pos="0 0.02 0"/>
  <joint name="hz" axis="0 0 1" pos="0 0 0.03"/>
  <body name="shin" pos="0 0 -0.4" xyaxes="0 1 0 -1 0 0"><geom type="capsule" fromto="0 0 0 0.1 0 -0.3" size="0.04"/>
   <joint name="knee" axis="0 1 0" pos="0.0 0.01 0.02"/></body></body></body></worldbody>
<actuator><motor joint="slide"/><motor joint="hx"/><motor joint="hy"/><motor joint="hz"/><motor joint="knee"/></actuator>
</mujoco>"""


def compiled(text):
    return mujoco.MjModel.from_xml_string(text)


def test_forces_equal_mujocos_inverse_dynamics():
    """pga-dyn's regressor times its parameters is MuJoCo's M(q) qdd + bias(q, qd) (armature taken
    out of M: it is not a rigid-body parameter), at q = qpos - ref."""
    model = compiled(ARM)
    with pytest.warns(PgaDynWarning, match="joints slide, hx, hy, hz, knee have an armature"):
        robot = robots.from_mujoco(model)
    assert robot.coordinate_names == ("slide", "hx", "hy", "hz", "knee")
    data, rng, pi = mujoco.MjData(model), np.random.default_rng(0), pga_dyn.inertial_parameters(robot)
    M = np.zeros((model.nv, model.nv))
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, 5))
        data.qpos[:], data.qvel[:] = q + model.qpos0, qd
        mujoco.mj_forward(model, data)
        mujoco.mj_fullM(model, data, M)
        tau = (M - np.diag(model.dof_armature)) @ qdd + data.qfrc_bias
        assert np.allclose(pga_dyn.regressor(robot, q, qd, qdd) @ pi, tau, atol=1e-12)


def test_from_mujoco_is_load_mjcf(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        one, two = robots.from_mujoco(compiled(ARM)), robots.load_file(path)
    assert one.name == two.name == "arm" and two.source == str(path) and one.source is None
    assert np.array_equal(pga_dyn.inertial_parameters(one), pga_dyn.inertial_parameters(two))
    assert np.allclose(two.gravity, [0.5, -1, -9.81])
    assert robots.mjcf_armature(ARM) == {name: 0.1 for name in ("slide", "hx", "hy", "hz", "knee")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        limited = robots.parse_mjcf(ARM.replace('ref="0.4"', 'ref="0.4" range="-1 2"'))
    assert np.allclose(limited.tree_joints[0].limits, (-1.4, 1.6))  # from the ref, as q


FOUR_BAR = open(os.path.join(HERE, "four_bar.xml"), encoding="utf-8").read()


def site_at(model, site, body) -> str:
    """A <site> element on ``body`` whose frame is that of ``site`` at qpos0 (MuJoCo's kinematics)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    b, k = model.body(body).id, model.site(site).id
    rot = data.xmat[b].reshape(3, 3)
    pos, quat = rot.T @ (data.site_xpos[k] - data.xpos[b]), np.zeros(4)
    mujoco.mju_mat2Quat(quat, (rot.T @ data.site_xmat[k].reshape(3, 3)).flatten())
    return f'<site name="on_far" pos="{" ".join(repr(float(v)) for v in pos)}" quat="{" ".join(repr(float(v)) for v in quat)}"/>'


@pytest.mark.parametrize(
    "equality",
    [
        '<weld name="w" body1="coupler" body2="coupler_far"/>',
        '<weld name="w" body1="coupler" body2="coupler_far" anchor="0.1 -0.05 0.02"/>',
        '<weld name="w" body1="coupler_far" body2="coupler" anchor="0.1 -0.05 0.02"/>',
        '<weld name="w" site1="on_coupler" site2="on_far"/>',
    ],
)
def test_welds_close_at_qpos0(equality):
    """The four-bar's coupler in two halves, the far one on a turned hinge at C on the rocker,
    welded (relpose computed by MuJoCo at qpos0, with or without an anchor, either way round, or
    between two sites whose frames coincide at qpos0): a passive hinge of the loop (the far one,
    or the coupler's when the coupler is body2) is pga-dyn's loop joint, its two frames coincide
    at q0, and the nullspace is the four-bar's (tests/test_formats.py)."""
    rocker = '<body name="rocker" pos="0.6 0 0">'
    text = FOUR_BAR.replace(
        rocker,
        rocker + '<body name="coupler_far" pos="-0.05 0.4 0" euler="0 0 0.5">'
        '<inertial pos="0.1 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>'
        '<joint name="far_joint" type="hinge" axis="0 0 1"/></body>',
    )
    text = text.replace(
        '<joint name="coupler_joint"',
        '<site name="on_coupler" pos="0.25 0.05 0.05" euler="0.1 0.2 0.3"/><joint name="coupler_joint"',
    )
    text = text.replace(
        '<joint name="far_joint"', site_at(compiled(text), "on_coupler", "coupler_far") + '<joint name="far_joint"'
    )
    text = text.replace('<connect name="pin" body1="coupler" body2="rocker" anchor="0.45 0.15 0"/>', equality)
    robot = robots.from_mujoco(compiled(text))
    (loop,) = robot.loop_joints
    assert loop.name == ("coupler_joint" if 'body2="coupler"' in equality else "far_joint") and loop.type == "R"
    poses = initial_poses(robot)
    assert np.allclose(poses[loop.parent] @ loop.parent_frame, poses[loop.child] @ loop.child_frame, atol=1e-12)
    assert drng.nullspace(robot).dim == 26


def test_a_site_connect_is_the_anchor_connect():
    """connect site1 site2 (sites at the same point at qpos0) and connect body1 anchor: the same
    spherical loop joint."""
    text = FOUR_BAR.replace(
        '<joint name="coupler_joint"', '<site name="a" pos="0.45 0.15 0"/><joint name="coupler_joint"'
    )
    text = text.replace('<joint name="rocker_joint"', '<site name="b" pos="-0.05 0.4 0"/><joint name="rocker_joint"')
    sites = robots.from_mujoco(
        compiled(text.replace('body1="coupler" body2="rocker" anchor="0.45 0.15 0"', 'site1="a" site2="b"'))
    )
    anchor = robots.from_mujoco(compiled(text))
    for one, two in zip(sites.loop_joints, anchor.loop_joints):
        assert (one.parent, one.child) == (two.parent, two.child)
        assert np.allclose(one.parent_frame, two.parent_frame, atol=1e-15)
        assert np.allclose(one.child_frame, two.child_frame, atol=1e-15)


FREE = """<mujoco><worldbody>{bodies}</worldbody></mujoco>"""
BODY = """<body name="{name}" pos="{x} 0 1"><freejoint name="{name}_free"/><geom size="0.1"/>
  <body name="{name}_arm" pos="0.2 0 0"><joint name="{name}_j"/><geom size="0.05"/></body></body>"""


def test_free_joints():
    """One free body of the world is a floating base (pga-dyn's F joint, at the origin), welded
    with floating_base=False; free bodies beside other moving bodies of the world are F joints of
    the world at their pose; floating_base=True then asks for one."""
    one = FREE.format(bodies=BODY.format(name="a", x=0) + '<body name="static"><geom size="1"/></body>')
    robot = robots.from_mujoco(compiled(one))
    assert robot.floating_base and robot.body_names == ("a", "a_arm") and robot.joint_type[1:] == ("F", "R")
    welded = robots.from_mujoco(compiled(one), floating_base=False)
    assert not welded.floating_base and welded.body_names == ("a_arm",)
    two = robots.from_mujoco(compiled(FREE.format(bodies=BODY.format(name="a", x=0) + BODY.format(name="b", x=2))))
    assert not two.floating_base and two.joint_type[1:] == ("F", "R", "F", "R")
    assert np.allclose(initial_poses(two)[3][:3, 3], [2, 0, 1])
    with pytest.raises(PgaDynError, match="floating_base=True needs one moving body of the world"):
        robots.from_mujoco(
            compiled(FREE.format(bodies=BODY.format(name="a", x=0) + BODY.format(name="b", x=2))), floating_base=True
        )


def test_gravity_and_refusals():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        off = robots.from_mujoco(
            compiled(
                ARM.replace(
                    '<option gravity="0.5 -1 -9.81"/>',
                    '<option gravity="0.5 -1 -9.81"><flag gravity="disable"/></option>',
                )
            )
        )
        assert np.array_equal(off.gravity, np.zeros(3))
        with pytest.raises(PgaDynError, match="body 'hip' has gravcomp=1: gravity compensation is not supported"):
            robots.from_mujoco(compiled(ARM.replace('<body name="hip"', '<body name="hip" gravcomp="1"')))


def test_a_missing_mujoco_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(PgaDynError, match=r"needs mujoco: pip install '\.\[mjcf\]' in pga-dyn's checkout"):
        robots.parse_mjcf(ARM)


# -- write_mjcf ----------------------------------------------------------------------------------


def random_phi(robot, seed=0):
    """Physically consistent link parameters (n, 10): a mass, a centre of mass and a principal
    inertia turned at random (triangle inequality kept), zero on the massless links of a chain
    of joints in one MJCF body (no MJCF body of their own)."""
    rng = np.random.default_rng(seed)
    phi = np.zeros((robot.n, 10))
    for k, name in enumerate(robot.body_names):
        if "__" in name:
            continue
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        principal = rng.uniform(0.5, 1.0, 3) * 0.01
        phi[k] = pseudo_to_link(
            pseudo_inertia(rng.uniform(0.5, 2), rng.uniform(-0.2, 0.2, 3), rot @ np.diag(principal) @ rot.T)
        )
    return phi


def mujoco_phi(model, robot):
    """The link parameters (n, 10) of MuJoCo's compiled bodies (mass, body_ipos, body_iquat,
    body_inertia), in the bodies' link frames (moved to their last joint's pos)."""
    out = np.zeros((robot.n, 10))
    for k, name in enumerate(robot.body_names):
        if "__" in name:
            continue
        try:
            b = model.body(name).id
        except KeyError:  # an unnamed body: pga-dyn names it body<id>
            b = int(name.removeprefix("body"))
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.body_iquat[b])
        rot = rot.reshape(3, 3)
        joints = [
            j
            for j in range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b])
            if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE
        ]
        offset = model.jnt_pos[joints[-1]] if joints else np.zeros(3)
        out[k] = pseudo_to_link(
            pseudo_inertia(
                model.body_mass[b], model.body_ipos[b] - offset, rot @ np.diag(model.body_inertia[b]) @ rot.T
            )
        )
    return out


def round_trip(source, tmp_path, extras=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        robot = robots.load_mjcf(source)
        before = open(source, encoding="utf-8").read()
        phi = random_phi(robot)
        path = robots.write_mjcf(robot, phi, tmp_path / "identified.xml", extras=extras)
        assert open(source, encoding="utf-8").read() == before  # the input is never written to
        model = mujoco.MjModel.from_xml_path(path)
        written = robots.load_mjcf(path)
    scale = np.abs(phi).max()
    assert np.allclose(mujoco_phi(model, robot), phi, rtol=1e-12, atol=1e-12 * scale)  # MuJoCo's compiler
    mine = pga_dyn.to_link_parameters(written, pga_dyn.inertial_parameters(written)).reshape(-1, 10)
    assert np.allclose(mine, phi, rtol=1e-12, atol=1e-12 * scale)  # pga-dyn's reader
    original = mujoco.MjModel.from_xml_path(os.fspath(source))
    for field in ("nbody", "njnt", "ngeom", "nu", "nsite", "neq"):  # everything else kept
        assert getattr(model, field) == getattr(original, field)
    assert np.array_equal(model.body_pos, original.body_pos) and np.array_equal(model.geom_size, original.geom_size)
    return model, robot


def test_write_mjcf_round_trips(tmp_path):
    """The four-bar (loops), and ARM (chains of joints in one body, an inertia from geoms,
    default classes) with damping, frictionloss and armature written on its joints."""
    round_trip(os.path.join(HERE, "four_bar.xml"), tmp_path)
    arm = tmp_path / "arm.xml"
    arm.write_text(ARM)
    extras = {"damping": [0.1, 0.2, 0.3, 0.4, 0.5], "frictionloss": {"knee": 0.7}, "armature": {"hx": 0.02}}
    model, robot = round_trip(arm, tmp_path, extras)
    dof = {name: model.joint(name).dofadr[0] for name in robot.coordinate_names}
    assert np.allclose([model.dof_damping[dof[n]] for n in robot.coordinate_names], extras["damping"])
    assert model.dof_frictionloss[dof["knee"]] == 0.7 and model.dof_frictionloss[dof["hx"]] == 0
    assert model.dof_armature[dof["hx"]] == 0.02 and model.dof_armature[dof["hy"]] == 0.1  # the class's kept


def test_write_mjcf_gymnasium_ant(tmp_path):
    """gymnasium's ant: inertia from geoms (inertiafromgeom="true", which becomes "auto"),
    unnamed bodies, a floating base."""
    pytest.importorskip("gymnasium")
    from mjcf_corpus import corpus

    (ant,) = [p for p in corpus("gymnasium") if p.endswith("ant.xml")]
    round_trip(ant, tmp_path)


def test_write_mjcf_refusals(tmp_path):
    arm = tmp_path / "arm.xml"
    arm.write_text(ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        robot = robots.load_mjcf(arm)
        phi = random_phi(robot)
        with pytest.raises(PgaDynError, match="own file"):
            robots.write_mjcf(robot, phi, arm)
        chain = phi.copy()
        chain[robot.body_names.index("hip__hx"), 0] = 1.0
        with pytest.raises(PgaDynError, match="body 'hip__hx' .* must be zero"):
            robots.write_mjcf(arm, chain, tmp_path / "out.xml")
        light = phi.copy()
        light[robot.body_names.index("shin")] = 0.0  # a massless moving body: MuJoCo refuses it
        with pytest.raises(PgaDynError, match="mass and inertia of moving bodies"):
            robots.write_mjcf(robot, light, tmp_path / "out.xml")
        assert not os.path.exists(tmp_path / "out.xml")
        with pytest.raises(PgaDynError, match="unknown joint attribute 'stiffness'"):
            robots.write_mjcf(robot, phi, tmp_path / "out.xml", extras={"stiffness": {"knee": 1.0}})
