"""The floating base in Pinocchio's and MuJoCo's conventions (docs/conventions.md, "Floating
base"), and export parity: an identified floating robot written as URDF and MJCF and read back
by pga-dyn, Pinocchio and MuJoCo gives the same joint torques and base wrench.

Oracles: Pinocchio's ``rnea`` (on ``robots.to_pinocchio`` and on its own URDF and MJCF readers)
and MuJoCo's ``mj_inverse`` (on the MJCF file ``robots.write_mjcf`` writes), each after the
conversion of the states and forces under test; the base's velocity as each tool reports it
(Pinocchio's ``getFrameVelocity``, MuJoCo's ``mj_objectVelocity``) against the logged twist."""

import os

import numpy as np
import pytest

import pga_dyn
import robots
from identification.estimation import FullEstimate
from identification.export import write_model, write_urdf
from identification.model import identification_model
from pga_dyn.conventions import inertia_of_pseudo, link_to_pseudo, pseudo_inertia, pseudo_to_link
from pga_dyn.errors import PgaDynError
from pga_dyn.floating import base_coordinates, rotation_matrices, spatial_twist, trunk_state
from robots.interop import from_pinocchio_forces, from_pinocchio_state, pinocchio_forces, pinocchio_state
from robots.mjcf import from_mujoco_forces, from_mujoco_state, mujoco_forces, mujoco_state

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

#: Relative agreement of generalized forces (joint torques and base wrench) between the tools.
RTOL = 1e-9


@pytest.fixture(scope="module")
def go2():
    return robots.load("go2")


def random_states(robot, samples, seed):
    """(q, qd, qdd) (samples, nq): the base anywhere (|omega| < pi), the joints inside their limits
    (so that MuJoCo's limit constraints stay inactive)."""
    rng = np.random.default_rng(seed)
    limits = np.array([joint.limits for joint in robot.tree_joints[1:]])
    q = np.concatenate([rng.uniform(-1.5, 1.5, (samples, 6)), rng.uniform(*limits.T, (samples, len(limits)))], 1)
    return q, rng.uniform(-2, 2, (samples, robot.nq)), rng.uniform(-3, 3, (samples, robot.nq))


def relative(a, b):
    return np.abs(np.asarray(a) - b).max() / np.abs(b).max()


def pga_forces(robot, q, qd, qdd, pi=None):
    pi = pga_dyn.inertial_parameters(robot) if pi is None else pi
    return np.einsum("nij,j->ni", pga_dyn.regressor(robot, q, qd, qdd), pi)


def pinocchio_rnea(robot, model, q, qd, qdd):
    """Pinocchio's rnea of pga-dyn's states, back in pga-dyn's coordinates (n, nq)."""
    data = model.createData()
    qp, vp, ap = pinocchio_state(robot, model, q, qd, qdd)
    tau = np.array([pin.rnea(model, data, *x) for x in zip(qp, vp, ap)])
    return from_pinocchio_forces(robot, model, q, tau)


def mujoco_inverse(robot, model, q, qd, qdd):
    """MuJoCo's mj_inverse of pga-dyn's states, back in pga-dyn's coordinates (n, nq)."""
    data = mujoco.MjData(model)
    qfrc = []
    for x in zip(*mujoco_state(robot, model, q, qd, qdd)):
        data.qpos[:], data.qvel[:], data.qacc[:] = x
        mujoco.mj_inverse(model, data)
        qfrc.append(data.qfrc_inverse.copy())
    return from_mujoco_forces(robot, model, q, np.array(qfrc))


def test_pinocchio_rnea_equals_the_regressor(go2):
    """On to_pinocchio's model and on Pinocchio's own reading of go2.urdf with a free flyer."""
    q, qd, qdd = random_states(go2, 20, 0)
    tau = pga_forces(go2, q, qd, qdd)
    for model in (robots.to_pinocchio(go2), pin.buildModelFromUrdf(robots.data_path("go2"), pin.JointModelFreeFlyer())):
        model.gravity.linear = np.array(go2.gravity)
        assert relative(pinocchio_rnea(go2, model, q, qd, qdd), tau) < RTOL
        data = model.createData()
        qp, vp, ap = pinocchio_state(go2, model, q, qd, qdd)
        pin_tau = np.array([pin.rnea(model, data, *x) for x in zip(qp, vp, ap)])
        assert relative(pinocchio_forces(go2, model, q, tau), pin_tau) < RTOL
        back = from_pinocchio_state(go2, model, qp, vp, ap)
        for a, b in zip(back, (q, qd, qdd)):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_mujoco_inverse_equals_the_regressor(go2, tmp_path):
    """mj_inverse on the MJCF file write_mjcf writes (a free joint): the free joint's force is
    world force and body-frame torque about the trunk's origin."""
    phi = pga_dyn.to_link_parameters(go2, pga_dyn.inertial_parameters(go2))
    model = mujoco.MjModel.from_xml_path(robots.write_mjcf(go2, phi, tmp_path / "go2.xml"))
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and model.nv == go2.nq
    q, qd, qdd = random_states(go2, 20, 1)
    tau = pga_forces(go2, q, qd, qdd)
    assert relative(mujoco_inverse(go2, model, q, qd, qdd), tau) < RTOL
    qfrc = mujoco_forces(go2, model, q, tau)
    # the torque rows are in the trunk frame, not the world's (the check distinguishes them)
    p, quat, _, _ = trunk_state(q[:, :6], qd[:, :6])
    world = tau[:, :3] - np.cross(p, tau[:, 3:6])
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotation_matrices(quat), qfrc[:, 3:6]), world, atol=1e-9)
    assert np.abs(qfrc[:, 3:6] - world).max() > 1e-2 * np.abs(world).max()
    back = from_mujoco_state(go2, model, *mujoco_state(go2, model, q, qd, qdd))
    for a, b in zip(back, (q, qd, qdd)):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_logged_trunk_state_is_each_tools_base_state(go2, tmp_path):
    """The log format of issue 27 (p, quaternion x y z w, world v_p and omega of the trunk frame's
    origin) through pga-dyn's coordinates: Pinocchio's q[:7] is (p, x y z w) and its base velocity
    in LOCAL_WORLD_ALIGNED is (v_p; omega); MuJoCo's qpos[:7] is (p, w x y z) and
    mj_objectVelocity of the trunk is (omega; v_p + omega x (c - p)), at its centre of mass c."""
    rng = np.random.default_rng(2)
    p, quat = rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    v, w = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    q, qd = np.zeros((5, go2.nq)), np.zeros((5, go2.nq))
    q[:, :6], qd[:, :6] = base_coordinates(p, quat), spatial_twist(p, v, w)
    q[:, 6:] = 0.3
    qd[:, 6:] = rng.normal(size=(5, 12))
    sign = np.sign(quat[:, 3:])  # pga-dyn's quaternions have w >= 0
    model = robots.to_pinocchio(go2)
    data = model.createData()
    qp, vp, _ = pinocchio_state(go2, model, q, qd)
    np.testing.assert_allclose(qp[:, :3], p, atol=1e-12)
    np.testing.assert_allclose(qp[:, 3:7], sign * quat, atol=1e-12)
    for k in range(5):
        pin.forwardKinematics(model, data, qp[k], vp[k])
        twist = pin.getVelocity(model, data, 1, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(np.concatenate([twist.linear, twist.angular]), [*v[k], *w[k]], atol=1e-12)
    phi = pga_dyn.to_link_parameters(go2, pga_dyn.inertial_parameters(go2))
    mj = mujoco.MjModel.from_xml_path(robots.write_mjcf(go2, phi, tmp_path / "go2.xml"))
    mjdata = mujoco.MjData(mj)
    qpos, qvel, _ = mujoco_state(go2, mj, q, qd)
    np.testing.assert_allclose(qpos[:, :3], p, atol=1e-12)
    np.testing.assert_allclose(qpos[:, 3:7], sign * quat[:, [3, 0, 1, 2]], atol=1e-12)
    out = np.zeros(6)
    for k in range(5):
        mjdata.qpos[:], mjdata.qvel[:] = qpos[k], qvel[k]
        mujoco.mj_forward(mj, mjdata)
        mujoco.mj_objectVelocity(mj, mjdata, mujoco.mjtObj.mjOBJ_BODY, 1, out, 0)
        at_com = v[k] + np.cross(w[k], mjdata.xipos[1] - mjdata.xpos[1])  # MuJoCo's body velocity is its com's
        np.testing.assert_allclose(mjdata.xpos[1], p[k], atol=1e-12)
        np.testing.assert_allclose(out, [*w[k], *at_com], atol=1e-12)


def test_single_states_and_batches_agree(go2):
    q, qd, qdd = random_states(go2, 3, 3)
    model = robots.to_pinocchio(go2)
    batch = pinocchio_state(go2, model, q, qd, qdd)
    for k in range(3):
        for a, b in zip(pinocchio_state(go2, model, q[k], qd[k], qdd[k]), batch):
            np.testing.assert_array_equal(a, b[k])
    qp, vp, ap = pinocchio_state(go2, model, q[0])
    assert qp.shape == (model.nq,) and vp is None and ap is None


def perturbed(robot, seed):
    """Link-frame parameters (n, 10) of ``robot``'s bodies, perturbed and physically consistent:
    mass and inertia scaled by up to 20 %, the centre of mass moved by 1 cm, the principal axes
    turned by about 0.2 rad (an identified model)."""
    rng = np.random.default_rng(seed)
    phi = []
    for phi_b in pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1, 10):
        m, c, inertia = inertia_of_pseudo(link_to_pseudo(phi_b))
        turn = pin.exp3(0.2 * rng.normal(size=3))
        scale = 1 + 0.2 * rng.uniform(-1, 1, 2)
        phi.append(
            pseudo_to_link(
                pseudo_inertia(m * scale[0], c + 0.01 * rng.normal(size=3), scale[1] * turn @ inertia @ turn.T)
            )
        )
    return np.array(phi)


def estimate(robot, phi):
    """A consistent full estimate with the parameters ``phi`` (what ``identify --consistent`` gives)."""
    model = identification_model(robot)
    theta = model.theta(phi.reshape(-1))
    eig = np.array([np.linalg.eigvalsh(link_to_pseudo(p)).min() for p in phi])
    return FullEstimate(model, theta, model.values(theta), None, "consistent", eig)


def test_export_parity_of_a_floating_robot(go2, tmp_path):
    """Identified go2 written as URDF (write_model, write_urdf) and MJCF (write_mjcf: a new file;
    write_model on the MJCF robot: a copy of that file), read back by pga-dyn, Pinocchio (its URDF
    reader with a free flyer, its MJCF reader) and MuJoCo: the same joint torques and base wrench
    as the identified parameters in pga-dyn's own model, to 1e-9."""
    phi = perturbed(go2, 4)
    assert all(np.linalg.eigvalsh(link_to_pseudo(p)).min() > 0 for p in phi)
    urdf = write_model(estimate(go2, phi), tmp_path / "go2_identified.urdf")["file"]
    assert write_urdf(go2, phi, tmp_path / "direct.urdf") and open(urdf).read() == open(tmp_path / "direct.urdf").read()
    mjcf = robots.write_mjcf(go2, phi, tmp_path / "go2_identified.xml")
    from_mjcf = robots.load_mjcf(mjcf)
    copy = write_model(estimate(from_mjcf, phi), tmp_path / "copy.xml", write_mjcf=robots.write_mjcf)["file"]
    assert "<freejoint" in open(mjcf).read() and "floating" not in open(urdf).read()

    q, qd, qdd = random_states(go2, 10, 5)
    reference = pga_forces(go2, q, qd, qdd, pga_dyn.from_link_parameters(go2, phi.reshape(-1)))
    got = {}
    for name, path in (("urdf", urdf), ("mjcf", mjcf), ("mjcf copy", copy)):
        robot = robots.load_file(path, floating_base=True)
        assert (
            robot.floating_base
            and robot.body_names == go2.body_names
            and robot.coordinate_names == go2.coordinate_names
        )
        got[f"pga-dyn {name}"] = pga_forces(robot, q, qd, qdd)
        model = (
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if name == "urdf" else pin.buildModelFromMJCF(path)
        )
        model.gravity.linear = np.array(go2.gravity)
        got[f"Pinocchio {name}"] = pinocchio_rnea(go2, model, q, qd, qdd)
        if name != "urdf":
            got[f"MuJoCo {name}"] = mujoco_inverse(go2, mujoco.MjModel.from_xml_path(path), q, qd, qdd)
    errors = {name: relative(tau, reference) for name, tau in got.items()}
    assert max(errors.values()) < RTOL, errors
    # the identified model is not the file's: the check sees parameters
    assert relative(pga_forces(go2, q, qd, qdd), reference) > 1e-3


def test_write_mjcf_of_a_fixed_robot_reads_back(tmp_path):
    """A fixed-base robot from URDF written as a new MJCF file: its bodies, joints and forces."""
    arm = robots.load("go2", floating_base=False)  # the trunk held: four legs of three joints
    phi = perturbed(arm, 6)
    path = robots.write_mjcf(arm, phi, tmp_path / "legs.xml")
    back = robots.load_mjcf(path)
    assert back.body_names == arm.body_names and back.coordinate_names == arm.coordinate_names
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-1, 1, (5, arm.nq)) for _ in range(3))
    reference = pga_forces(arm, q, qd, qdd, pga_dyn.from_link_parameters(arm, phi.reshape(-1)))
    assert relative(pga_forces(back, q, qd, qdd), reference) < RTOL
    model = mujoco.MjModel.from_xml_path(path)
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)  # states beyond the limits
    assert relative(mujoco_inverse(arm, model, q, qd, qdd), reference) < RTOL


def test_what_cannot_be_written_or_mapped_is_refused(go2, tmp_path):
    five_bar = robots.load("five_bar")
    with pytest.raises(PgaDynError, match="loop joints and couplings"):
        robots.write_mjcf(five_bar, np.zeros((five_bar.n, 10)), tmp_path / "five_bar.xml")
    with pytest.raises(PgaDynError, match="own file"):
        robots.write_mjcf(go2, perturbed(go2, 0), robots.data_path("go2"))
    assert not os.path.exists(tmp_path / "five_bar.xml")
    fixed = pin.buildModelFromUrdf(robots.data_path("go2"))  # no free flyer
    with pytest.raises(PgaDynError, match="no joint 'base_floating'"):
        pinocchio_state(go2, fixed, go2.q0)


TWO_FREE_BODIES = """<mujoco model="two">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0.3 -0.2 0.5" quat="0.9 0.1 -0.3 0.2">
      <freejoint name="a_free"/>
      <inertial pos="0.01 0.02 -0.03" mass="2.0" fullinertia="0.05 0.06 0.07 0.001 -0.002 0.003"/>
      <body name="a_leg" pos="0.1 0.0 -0.1" quat="0.8 0.0 0.6 0.0">
        <joint name="a_knee" type="hinge" axis="0 1 0" ref="0.2"/>
        <inertial pos="0.0 0.0 -0.1" mass="0.5" diaginertia="0.002 0.003 0.004"/>
      </body>
    </body>
    <body name="b" pos="-0.4 0.1 0.2">
      <freejoint/>
      <inertial pos="0.0 0.0 0.0" mass="1.0" diaginertia="0.01 0.02 0.03"/>
      <body name="b_arm" pos="0.0 0.2 0.0">
        <joint name="b_ball" type="ball"/>
        <inertial pos="0.05 0.0 0.0" mass="0.3" diaginertia="0.001 0.002 0.002"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_free_joints_placed_away_from_the_origin(tmp_path):
    """Free joints beside other moving bodies of the world are F joints at the bodies' poses (T0
    != I), one body's free joint unnamed, a hinge with a ref and a ball joint: MuJoCo's mj_inverse
    on the file and Pinocchio's rnea on to_pinocchio's model (free flyers placed at T0) equal
    pga-dyn's forces, and the states round trip."""
    path = tmp_path / "two.xml"
    path.write_text(TWO_FREE_BODIES)
    robot = robots.load_mjcf(path)
    assert not robot.floating_base and robot.joint_type[1:] == ("F", "R", "F", "S")
    assert not np.allclose(robot.origin[1], np.eye(4))
    rng = np.random.default_rng(8)
    q, qd, qdd = (rng.uniform(-1, 1, (6, robot.nq)) for _ in range(3))
    tau = pga_forces(robot, q, qd, qdd)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert relative(mujoco_inverse(robot, model, q, qd, qdd), tau) < RTOL
    for a, b in zip(from_mujoco_state(robot, model, *mujoco_state(robot, model, q, qd, qdd)), (q, qd, qdd)):
        np.testing.assert_allclose(a, b, atol=1e-12)
    model = robots.to_pinocchio(robot)
    assert relative(pinocchio_rnea(robot, model, q, qd, qdd), tau) < RTOL
    for a, b in zip(from_pinocchio_state(robot, model, *pinocchio_state(robot, model, q, qd, qdd)), (q, qd, qdd)):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_joint_friction_of_a_floating_robot_is_written_to_its_joints(go2, tmp_path):
    """write_model with viscous and Coulomb terms: URDF <dynamics> and MJCF joint attributes on
    the 12 joints, none on the floating base; write_mjcf's per-coordinate extras take 0 for the
    base's coordinates and refuse another value. MuJoCo's mj_inverse adds the damping."""
    phi = perturbed(go2, 4)
    model = identification_model(go2, friction=True)
    theta = model.theta(phi.reshape(-1), {"viscous": 0.5, "coulomb": 1.0})
    eig = np.array([np.linalg.eigvalsh(link_to_pseudo(p)).min() for p in phi])
    full = FullEstimate(model, theta, model.values(theta), None, "consistent", eig)
    report = write_model(full, tmp_path / "f.urdf")
    assert {w["joint"] for w in report["written"]} == set(go2.actuated_names[6:])
    text = open(report["file"]).read()
    assert text.count('damping="0.5"') == 12 and text.count('friction="1.0"') == 12
    report = write_model(full, tmp_path / "f_model.xml", write_mjcf=robots.write_mjcf, fmt="mjcf")  # from the URDF
    mj = mujoco.MjModel.from_xml_path(report["file"])
    assert mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and report["format"] == "mjcf"
    np.testing.assert_array_equal(mj.dof_frictionloss, np.r_[np.zeros(6), np.ones(12)])
    with pytest.raises(PgaDynError, match="this is MJCF"):
        from_mjcf = robots.load_mjcf(report["file"])
        write_model(estimate(from_mjcf, phi), tmp_path / "g.urdf", fmt="urdf")
    damping = np.r_[np.zeros(6), np.full(12, 0.5)]
    path = robots.write_mjcf(go2, phi, tmp_path / "f.xml", extras={"damping": damping})
    mj = mujoco.MjModel.from_xml_path(path)
    np.testing.assert_array_equal(mj.dof_damping, damping)
    q, qd, qdd = random_states(go2, 3, 9)
    rigid = pga_forces(go2, q, qd, qdd, pga_dyn.from_link_parameters(go2, phi.reshape(-1)))
    assert relative(mujoco_inverse(go2, mj, q, qd, qdd), rigid + damping * qd) < RTOL
    with pytest.raises(PgaDynError, match="not joints of one coordinate"):
        robots.write_mjcf(go2, phi, tmp_path / "g.xml", extras={"damping": np.full(18, 0.5)})


def test_continuous_joints_are_unbounded_in_pinocchio():
    """Pinocchio's URDF reader holds a continuous joint as q = (cos, sin): pinocchio_state and
    from_pinocchio_state convert, and rnea equals pga-dyn's forces on a floating two-link robot."""
    text = """<robot name="wheel">
  <link name="body"><inertial><origin xyz="0.1 0 0"/><mass value="3"/>
    <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
  <link name="wheel"><inertial><origin xyz="0 0.02 0"/><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <joint name="axle" type="continuous"><parent link="body"/><child link="wheel"/>
    <origin xyz="0.2 0.1 0" rpy="0.3 0 0"/><axis xyz="0 1 0"/></joint>
</robot>"""
    robot = robots.parse_urdf(text, floating_base=True)
    model = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    assert model.joints[2].nq == 2
    rng = np.random.default_rng(10)
    q, qd, qdd = (rng.uniform(-2, 2, (4, robot.nq)) for _ in range(3))
    assert relative(pinocchio_rnea(robot, model, q, qd, qdd), pga_forces(robot, q, qd, qdd)) < RTOL
    back = from_pinocchio_state(robot, model, *pinocchio_state(robot, model, q, qd, qdd))
    np.testing.assert_allclose(back[0][:, 6], q[:, 6], atol=1e-12)
