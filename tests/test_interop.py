"""robots.from_pinocchio and robots.to_pinocchio against Pinocchio itself: the models that its URDF
and MJCF readers give (example-robot-data's Talos, UR5, Panda, Solo12, Go1; MJCF bodies with a free
joint, several joints and a ball joint) and models built joint by joint (planar, translation,
ZYX-spherical, universal, unbounded and unaligned joints). Oracles: Pinocchio's parameters,
placements, RNEA and joint-torque regressor (tests/oracle.py maps the states), pga-dyn's own URDF
reader on the same file, and the nullspace of that robot."""

import sys

import numpy as np
import pinocchio as pin
import pytest
from oracle import Oracle, erd_path, random_states

import drng
import robots
from pga_dyn import tp_regressor as tp
from pga_dyn.errors import PgaDynError

TALOS = "talos_data/robots/talos_reduced.urdf"
#: (file, floating base) of the other models.
MODELS = [
    ("ur_description/urdf/ur5_robot.urdf", False),
    ("panda_description/urdf/panda.urdf", False),
    ("solo_description/robots/solo12.urdf", True),
    ("go1_description/urdf/go1.urdf", True),
]


def pinocchio_model(path: str, floating: bool, **options):
    if floating:
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), **options)
    return pin.buildModelFromUrdf(path, **options)


def by_name(robot, values, names) -> np.ndarray:
    """The rows of ``values`` ((n, ...), ``robot.body_names`` order) in the order of ``names``."""
    return np.array([values[robot.body_names.index(name)] for name in names])


def check_round_trip(model, robot, samples=4):
    """from_pinocchio(model) = robot: its link-frame parameters are Pinocchio's; to_pinocchio(robot)
    has Pinocchio's parameters and placements (1e-12); pga-dyn's forces (regressor times
    parameters) and both models' RNEA agree on random states; the regressor in link-frame
    parameters, Y F (F = link_map), is Pinocchio's joint-torque regressor."""
    original = Oracle(robot, model=model)
    back = robots.to_pinocchio(robot)
    copy = Oracle(robot, model=back)
    phi = original.link_parameters()
    assert np.allclose(tp.to_link_parameters(robot, tp.inertial_parameters(robot)), phi, rtol=0, atol=1e-12)
    assert np.allclose(copy.link_parameters(), phi, rtol=0, atol=1e-12)
    for i in range(1 + robot.floating_base, robot.n + 1):
        a, b = model.getJointId(robot.joint_names[i]), back.getJointId(robot.joint_names[i])
        assert np.allclose(
            back.jointPlacements[b].homogeneous, model.jointPlacements[a].homogeneous, rtol=0, atol=1e-12
        )
    pi, F = tp.inertial_parameters(robot), tp.link_map(robot)
    Q, QD, QDD = random_states(robot, samples, seed=11)
    Y = tp.regressor(robot, Q, QD, QDD)
    for s in range(samples):
        tau = original.rnea(Q[s], QD[s], QDD[s])
        scale = np.linalg.norm(tau)
        assert np.linalg.norm(Y[s] @ pi - tau) < 1e-9 * scale
        assert np.linalg.norm(copy.rnea(Q[s], QD[s], QDD[s]) - tau) < 1e-9 * scale
        Y_pin = original.regressor(Q[s], QD[s], QDD[s])
        assert np.allclose(Y[s] @ F, Y_pin, rtol=0, atol=1e-9 * np.abs(Y_pin).max())


@pytest.mark.parametrize("floating", [True, False], ids=["free-flyer", "fixed"])
def test_talos(floating):
    """Talos: Pinocchio's model -> from_pinocchio -> to_pinocchio, against Pinocchio, against
    pga-dyn's URDF reader on the same file (bodies, merged links and their poses, parameters) and
    with the same nullspace."""
    path = erd_path(TALOS)
    model = pinocchio_model(path, floating)
    robot = robots.from_pinocchio(model)
    assert robot.floating_base == floating and robot.n == model.njoints - 1 and robot.nq == model.nv
    check_round_trip(model, robot)
    direct = robots.load_urdf(path, floating_base=floating)
    assert sorted(robot.body_names) == sorted(direct.body_names)
    names = direct.body_names
    assert np.allclose(
        by_name(robot, tp.inertial_parameters(robot).reshape(-1, 10), names),
        tp.inertial_parameters(direct).reshape(-1, 10),
        rtol=0,
        atol=1e-12,
    )
    for body in names:
        links = direct.graph.nodes[body]["links"]
        assert sorted(robot.graph.nodes[body]["links"]) == sorted(links)
        for link in links:
            assert np.allclose(robot.link_pose(link), direct.link_pose(link), rtol=0, atol=1e-12)
    assert drng.nullspace(robot).dim == drng.nullspace(direct).dim


@pytest.mark.parametrize("relative,floating", MODELS, ids=[m[0].split("/")[-1] for m in MODELS])
def test_other_models(relative, floating):
    model = pinocchio_model(erd_path(relative), floating)
    robot = robots.from_pinocchio(model)
    assert robot.floating_base == floating
    check_round_trip(model, robot, samples=3)
    again = robots.from_pinocchio(robots.to_pinocchio(robot))  # pga-dyn -> Pinocchio -> pga-dyn
    assert again.body_names == robot.body_names and again.coordinate_names == robot.coordinate_names
    assert np.allclose(tp.inertial_parameters(again), tp.inertial_parameters(robot), rtol=0, atol=1e-12)
    for body in robot.body_names:
        assert again.graph.nodes[body]["links"] == robot.graph.nodes[body]["links"]


def test_built_in_robots_round_trip():
    """pga-dyn -> Pinocchio -> pga-dyn: the Go2's merged feet, the Puma's massless link 1 with its
    rotational inertia, the joint limits."""
    for name in ("go2", "puma560"):
        robot = robots.load(name)
        model = robots.to_pinocchio(robot)
        again = robots.from_pinocchio(model)
        assert again.body_names == robot.body_names and again.joint_type == robot.joint_type
        assert np.allclose(tp.inertial_parameters(again), tp.inertial_parameters(robot), rtol=0, atol=1e-12)
        assert np.allclose(again.origin, robot.origin, rtol=0, atol=1e-12)
        for body in robot.body_names:
            assert again.graph.nodes[body]["links"] == robot.graph.nodes[body]["links"]
        limits = [joint.limits for joint in robot.tree_joints]
        assert [joint.limits for joint in again.tree_joints] == limits
    assert robot.inertial(1).mass == 0.0 and model.inertias[1].inertia[2, 2] == 0.35


MJCF_COMPOSITE = """<mujoco model="composite">
  <worldbody><body name="arm" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2">
    <inertial pos="0.1 0.05 0" mass="1.2" diaginertia="0.01 0.02 0.03"/>
    <joint name="a1" type="hinge" axis="0 0 1" pos="0.05 0 0"/>
    <joint name="a2" type="hinge" axis="0 1 1"/>
    <joint name="a3" type="slide" axis="1 0 0"/>
    <body name="hand" pos="0.3 0 0" euler="0.1 0.2 0.3">
      <inertial pos="0.1 0 0.02" mass="0.5" fullinertia="0.01 0.02 0.03 0.001 0.002 0.003"/>
      <joint name="b" type="hinge" axis="1 0 0"/></body>
  </body></worldbody></mujoco>"""

MJCF_FREE_BALL = """<mujoco model="free_ball">
  <worldbody><body name="torso" pos="0 0 1"><freejoint name="root"/>
    <inertial pos="0.02 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
    <body name="upper" pos="0.2 0 0"><inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
      <joint name="shoulder" type="ball"/>
      <body name="lower" pos="0.3 0 0"><inertial pos="0.1 0.01 0" mass="0.5" diaginertia="0.01 0.02 0.02"/>
        <joint name="elbow" type="hinge" axis="0 1 0"/></body></body>
  </body></worldbody></mujoco>"""


def mjcf_model(tmp_path, text):
    path = tmp_path / "model.xml"
    path.write_text(text)
    return pin.buildModelFromMJCF(str(path))


def test_mjcf_composite_joint(tmp_path):
    """An MJCF body with three joints is one composite joint in Pinocchio and a chain of three
    joints with two massless links in pga-dyn, whose coordinates are the composite's q."""
    model = mjcf_model(tmp_path, MJCF_COMPOSITE)
    assert model.joints[1].shortname() == "JointModelComposite"
    robot = robots.from_pinocchio(model)
    composite = model.names[1]
    assert robot.joint_type == ("base", "R", "R", "P", "R")
    assert robot.joint_names[1:] == (f"{composite}.1", f"{composite}.2", f"{composite}.3", "b")
    assert robot.body_names == ("arm.1", "arm.2", "arm", "hand")
    assert [robot.inertial(i).mass for i in (1, 2)] == [0.0, 0.0]
    data = model.createData()
    pi, F = tp.inertial_parameters(robot), tp.link_map(robot)
    real = [c for b in (3, 4) for c in range(10 * (b - 1), 10 * b)]
    Q, QD, QDD = random_states(robot, 3, seed=2)
    for q, qd, qdd in zip(Q, QD, QDD):
        tau = pin.rnea(model, data, q, qd, qdd)
        Y = tp.regressor(robot, q, qd, qdd)
        assert np.allclose(Y @ pi, tau, rtol=0, atol=1e-10 * np.abs(tau).max())
        Y_pin = pin.computeJointTorqueRegressor(model, data, q, qd, qdd)
        assert np.allclose((Y @ F)[:, real], Y_pin, rtol=0, atol=1e-10 * np.abs(Y_pin).max())


def test_mjcf_free_and_ball_joints(tmp_path):
    model = mjcf_model(tmp_path, MJCF_FREE_BALL)
    robot = robots.from_pinocchio(model)
    assert robot.floating_base and robot.joint_type == ("base", "F", "S", "R")
    assert robot.body_names == ("torso", "upper", "lower")
    check_round_trip(model, robot, samples=3)


TWO_BODIES = """<robot name="two_bodies">
  <link name="world"/>
  <link name="box"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
    <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
  <link name="ball"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial></link>
  <joint name="box_free" type="floating"><parent link="world"/><child link="box"/>
    <origin xyz="1 0 0" rpy="0 0 0.5"/></joint>
  <joint name="ball_free" type="floating"><parent link="world"/><child link="ball"/><origin xyz="0 1 0"/></joint>
</robot>"""


def test_free_flyers_that_are_not_a_floating_base(tmp_path):
    """Two free flyers on the world (URDF floating joints, placed) are F joints of their names on
    a fixed root, as pga-dyn's URDF reader reads the same file."""
    path = tmp_path / "two.urdf"
    path.write_text(TWO_BODIES)
    robot = robots.from_pinocchio(pin.buildModelFromUrdf(str(path)))
    direct = robots.load_urdf(path)
    assert not robot.floating_base and robot.graph_name(0) == "world"
    assert sorted(robot.joint_names) == sorted(direct.joint_names) == ["", "ball_free", "box_free"]
    assert robot.joint_type == direct.joint_type == ("base", "F", "F")
    names = direct.body_names  # Pinocchio's reader orders the two bodies by name
    assert np.allclose(by_name(robot, robot.origin[1:], names), direct.origin[1:], rtol=0, atol=1e-12)
    assert np.allclose(
        by_name(robot, tp.inertial_parameters(robot).reshape(-1, 10), names),
        tp.inertial_parameters(direct).reshape(-1, 10),
        rtol=0,
        atol=1e-12,
    )


def pinocchio_chain():
    """A hand-built model with Pinocchio's planar, translation, ZYX-spherical, universal, unbounded
    and unaligned joints."""
    model = pin.Model()
    rng = np.random.default_rng(4)
    joints = [
        ("planar", pin.JointModelPlanar()),
        ("zyx", pin.JointModelSphericalZYX()),
        ("slide3", pin.JointModelTranslation()),
        ("spin", pin.JointModelRUBY()),
        ("tilt", pin.JointModelRevoluteUnaligned(np.array([0.6, 0.0, 0.8]))),
        ("push", pin.JointModelPrismaticUnaligned(np.array([0.0, 0.8, -0.6]))),
        ("cross", pin.JointModelUniversal(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.8]))),
    ]
    for k, (name, joint) in enumerate(joints):
        jid = model.addJoint(k, joint, pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.2), name)
        model.appendBodyToJoint(
            jid,
            pin.Inertia(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.1, np.diag(rng.uniform(0.01, 0.05, 3))),
            pin.SE3.Identity(),
        )
    return model


def velocity_map(model, robot, qp) -> tuple:
    """(pga-dyn's q, C) at Pinocchio's configuration qp, with pga-dyn's velocity coordinates C v
    for Pinocchio's v: planar (x, y, cos, sin) -> (x, y, theta) with (vx, vy) turned from the child
    frame to the parent's; ZYX angles -> the rotation vector, whose velocity coordinates are the
    child's angular velocity in the child frame, S_angular(q) v; unbounded (cos, sin) -> the angle;
    the others q and v unchanged."""
    q, C = np.zeros(robot.nq), np.zeros((robot.nq, model.nv))
    k = 0
    for joint in model.joints[1:]:
        iq, iv, kind = joint.idx_q, joint.idx_v, joint.shortname()
        if kind == "JointModelPlanar":
            theta = np.arctan2(qp[iq + 3], qp[iq + 2])
            q[k : k + 3] = qp[iq], qp[iq + 1], theta
            C[k : k + 2, iv : iv + 2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
            C[k + 2, iv + 2] = 1.0
        elif kind == "JointModelSphericalZYX":
            data = joint.createData()
            joint.calc(data, qp)
            q[k : k + 3] = pin.log3(data.M.rotation)
            C[k : k + 3, iv : iv + 3] = np.array(data.S)[3:]
        elif kind == "JointModelRUBY":
            q[k] = np.arctan2(qp[iq + 1], qp[iq])
            C[k, iv] = 1.0
        else:
            q[k : k + joint.nq] = qp[iq : iq + joint.nq]
            C[k : k + joint.nv, iv : iv + joint.nv] = np.eye(joint.nv)
        k += joint.nv
    return q, C


def test_planar_translation_zyx_universal_unbounded_unaligned():
    """Pinocchio's inverse dynamics at rest with random accelerations (the mass matrix and gravity)
    equal pga-dyn's through the change of velocity coordinates v_pga = C v_pin: tau_pin = C^T tau_pga."""
    model = pinocchio_chain()
    robot = robots.from_pinocchio(model)
    assert robot.joint_type[1:] == ("P", "P", "R", "S", "P", "P", "P", "R", "R", "P", "U")
    assert robot.body_names[:3] == ("planar.1", "planar.2", "planar")
    data, pi = model.createData(), tp.inertial_parameters(robot)
    rng = np.random.default_rng(5)
    for _ in range(3):
        qp = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        q, C = velocity_map(model, robot, qp)
        a = rng.uniform(-2, 2, model.nv)
        tau = pin.rnea(model, data, qp, np.zeros(model.nv), a)
        forces = tp.regressor(robot, q, np.zeros(robot.nq), C @ a) @ pi
        assert np.allclose(C.T @ forces, tau, rtol=0, atol=1e-10 * np.abs(tau).max())
    assert [j.shortname() for j in robots.to_pinocchio(robot).joints[1:4]] == [
        "JointModelPX",
        "JointModelPY",
        "JointModelRZ",
    ]


MIMIC = """<robot name="mimic">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><origin xyz="0 0.1 0"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="b"><inertial><mass value="0.7"/><origin xyz="0.1 0 0.05"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/><mimic joint="j1" multiplier="-1.5" offset="0.1"/></joint>
</robot>"""


def test_mimic_joints_are_couplings(tmp_path):
    """A Pinocchio mimic joint (its URDF reader with mimic=True) is a pga-dyn coupling: the
    forces of the actuated coordinate are Pinocchio's RNEA of the mimic model; to_pinocchio
    refuses the coupling. The Panda's finger mimic too."""
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC)
    model = pin.buildModelFromUrdf(str(path), mimic=True)
    robot = robots.from_pinocchio(model)
    (coupling,) = robot.couplings
    assert (coupling.ratio, coupling.offset) == (-1.5, 0.1) and robot.actuated_names == ("j1",)
    data, pi = model.createData(), tp.inertial_parameters(robot)
    for q, qd, qdd in zip(*random_states(robot, 3, seed=3)):
        tau = pin.rnea(model, data, q[:1], qd[:1], qdd[:1])
        assert np.allclose(tp.regressor(robot, q[:1], qd[:1], qdd[:1]) @ pi, tau, rtol=1e-10, atol=0)
    with pytest.raises(PgaDynError, match="coupling 'j2'.*tree"):
        robots.to_pinocchio(robot)
    panda = robots.from_pinocchio(pinocchio_model(erd_path(MODELS[1][0]), False, mimic=True))
    assert [(c.name, c.ratio) for c in panda.couplings] == [("panda_finger_joint2", 1.0)]


def test_loops_are_refused():
    with pytest.raises(PgaDynError, match="loop joint 'limb2_U', loop joint 'limb3_S': a pinocchio.Model is a tree"):
        robots.to_pinocchio(robots.load("2rru_1rrs"))


def test_parameters_given():
    """phi (n, 10) or (10 n,) becomes the model's inertias; a wrong shape, a non-finite value and
    a massless body with a first moment are refused with their names."""
    robot = robots.load("puma560")
    phi = np.random.default_rng(0).uniform(0.1, 1.0, (robot.n, 10))
    for given in (phi, phi.reshape(-1)):
        model = robots.to_pinocchio(robot, given)
        assert np.allclose(
            [model.inertias[i].toDynamicParameters() for i in range(1, robot.n + 1)], phi, rtol=1e-14, atol=0
        )
    with pytest.raises(PgaDynError, match=r"phi must have shape \(60,\) or \(6, 10\)"):
        robots.to_pinocchio(robot, phi[:3])
    with pytest.raises(PgaDynError, match="phi contains non-finite values"):
        robots.to_pinocchio(robot, np.full((6, 10), np.nan))
    phi[2, 0] = 0.0
    with pytest.raises(PgaDynError, match="body 'link3' has mass 0 and first moment"):
        robots.to_pinocchio(robot, phi)


def test_refused_models():
    helical = pin.Model()
    helical.addJoint(0, pin.JointModelHelicalUnaligned(np.array([0.0, 0.0, 1.0]), 0.01), pin.SE3.Identity(), "screw")
    with pytest.raises(
        PgaDynError,
        match=r"joint 'screw' \(JointModelHelicalUnaligned\) moves along the screw "
        r"S = \[0.0, 0.0, 0.01, 0.0, 0.0, 1.0\]: pga-dyn has no helical joint",
    ):
        robots.from_pinocchio(helical)
    flat = pin.Model()  # a helical joint of pitch 0 is a revolute joint
    flat.addJoint(0, pin.JointModelHZ(0.0), pin.SE3.Identity(), "turn")
    assert robots.from_pinocchio(flat).joint_type == ("base", "R")
    ellipsoid = pin.Model()
    ellipsoid.addJoint(0, pin.JointModelEllipsoid(0.1, 0.2, 0.3), pin.SE3.Identity(), "knee")
    with pytest.raises(PgaDynError, match=r"joint 'knee' \(JointModelEllipsoid\) has no pga-dyn counterpart"):
        robots.from_pinocchio(ellipsoid)
    free = pin.Model()
    free.addJoint(
        free.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "hinge"),
        pin.JointModelFreeFlyer(),
        pin.SE3.Identity(),
        "loose",
    )
    with pytest.raises(PgaDynError, match=r"joint 'loose' \(JointModelFreeFlyer\) hangs from link 'hinge'"):
        robots.from_pinocchio(free)
    composite = pin.JointModelComposite(pin.JointModelRX())
    composite.addJoint(pin.JointModelHX(0.02), pin.SE3.Identity())
    screwed = pin.Model()
    screwed.name = "screwed"
    screwed.addJoint(0, composite, pin.SE3.Identity(), "wrist")
    with pytest.raises(PgaDynError, match=r"Pinocchio model 'screwed': joint 'wrist.2' \(JointModelHX\) moves along"):
        robots.from_pinocchio(screwed)
    spinning = pin.Model()
    spinning.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.array([0.0, 0.0, 1.0]))
    with pytest.raises(PgaDynError, match="gravity has an angular part"):
        robots.from_pinocchio(spinning)
    with pytest.raises(PgaDynError, match="takes a pinocchio.Model, got str"):
        robots.from_pinocchio("talos.urdf")


def test_without_pinocchio_the_error_names_the_extra(monkeypatch):
    robot = robots.load("puma560")
    monkeypatch.setitem(sys.modules, "pinocchio", None)  # import pinocchio raises ImportError
    with pytest.raises(
        PgaDynError, match=r"robots.to_pinocchio needs pinocchio: pip install '\.\[pinocchio\]' in pga-dyn's checkout"
    ):
        robots.to_pinocchio(robot)
    with pytest.raises(PgaDynError, match=r"robots.from_pinocchio needs pinocchio"):
        robots.from_pinocchio(None)
