"""One mechanism, three robot formats: URDF+, Extended URDF + YAML and MJCF
(tests/format_fixtures.py writes the files) give the same robot and the same certified
nullspace, whose dimension is Pinocchio's (tests/fixture_oracle.py); the MJCF reader agrees with
Pinocchio's own MJCF parser; unsupported elements are refused by name."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixture_oracle import GRAVITIES  # noqa: E402
from format_fixtures import HERE, MECHANISMS, files  # noqa: E402
from oracle import pin  # noqa: E402

import drng  # noqa: E402
import pga_dyn  # noqa: E402
import pga_dyn.loops  # noqa: E402
import pga_dyn.sampling  # noqa: E402
import robots  # noqa: E402
from pga_dyn.cli import main  # noqa: E402
from pga_dyn.errors import PgaDynError, PgaDynWarning  # noqa: E402
from pga_dyn.kinematics import initial_poses  # noqa: E402

# Pinocchio's nullspace dimensions (of 10 n parameters), printed by
#     cd tests && PYTHONPATH=.. python -c "import robots; from fixture_oracle import nullity, GRAVITIES; \
#     [print(n, g, nullity(robots.load_file(f'fixtures/formats/{n}_plus.urdf', gravity=v), spread=0.5)[0]) \
#     for n in ('five_bar', 'four_bar', 'slider_crank') for g, v in GRAVITIES.items()]"
ORACLE_NULLITY = {
    ("five_bar", "z"): 33,
    ("five_bar", "y"): 29,
    ("four_bar", "z"): 26,
    ("four_bar", "y"): 22,
    ("slider_crank", "z"): 26,
    ("slider_crank", "y"): 24,
}


def paths(name):
    return [os.path.join(HERE, f) for f in (f"{name}_plus.urdf", f"{name}/robot.urdf", f"{name}.xml")]


def test_fixture_files_are_current():
    for relative, text in files().items():
        with open(os.path.join(HERE, relative), encoding="utf-8") as handle:
            assert handle.read() == text, relative


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_three_formats_give_the_same_robot(name):
    plus, extended, mjcf = [robots.load_file(p) for p in paths(name)]
    for other in (extended, mjcf):
        assert other.body_names == plus.body_names
        assert other.actuated_names == plus.actuated_names
        assert np.allclose(pga_dyn.inertial_parameters(other), pga_dyn.inertial_parameters(plus), atol=1e-15)
        assert [(lp.type, lp.parent, lp.child) for lp in other.loop_joints] == [
            (lp.type, lp.parent, lp.child) for lp in plus.loop_joints
        ]
        for mine, theirs in zip(other.loop_joints, plus.loop_joints):  # the same ball centre at q0
            for robot, lp in ((other, mine), (plus, theirs)):
                T = initial_poses(robot)
                centre = (T[lp.parent] @ lp.parent_frame)[:3, 3]
                assert np.allclose(centre, (T[lp.child] @ lp.child_frame)[:3, 3], atol=1e-12)
            assert np.allclose(
                (initial_poses(other)[mine.parent] @ mine.parent_frame)[:3, 3],
                (initial_poses(plus)[theirs.parent] @ theirs.parent_frame)[:3, 3],
                atol=1e-12,
            )
    actuated = [j[0] for j in MECHANISMS[name]["joints"] if j[6]]
    assert list(plus.actuated_names) == actuated


@pytest.mark.parametrize("name,gravity", sorted(ORACLE_NULLITY))
def test_three_formats_give_pinocchios_certified_nullspace(name, gravity):
    results = [drng.nullspace(robots.load_file(p, gravity=GRAVITIES[gravity])) for p in paths(name)]
    for result in results:
        assert result.certified and result.dim == ORACLE_NULLITY[name, gravity]
    spans = [result.nullspace for result in results]
    for other in spans[1:]:  # the same subspace: projections leave each basis unchanged
        assert np.allclose(spans[0] @ (spans[0].T @ other), other, atol=1e-8)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_mjcf_reader_agrees_with_pinocchios(name):
    """Pinocchio's MJCF parser on the same file: each body's inertia and its pose at q0."""
    path = paths(name)[2]
    robot, model = robots.load_mjcf(path), pin.buildModelFromMJCF(path)
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    poses = initial_poses(robot)
    for i in range(1, robot.n + 1):
        j = model.getJointId(robot.joint_names[i])
        mine, theirs = robot.inertial(i), model.inertias[j]
        assert np.isclose(mine.mass, theirs.mass) and np.allclose(mine.com, theirs.lever, atol=1e-15)
        assert np.allclose(mine.inertia, theirs.inertia, atol=1e-15)
        assert np.allclose(poses[i], data.oMi[j].homogeneous, atol=1e-15)


MJCF = """<mujoco model="m"><compiler angle="degree"/><worldbody>
  <body name="a" pos="0 0 0.1" euler="0 0 90"><inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
    <joint name="ja" type="hinge" axis="0 0 1" range="-90 90" {extra}/>
    <body name="b" pos="0.3 0 0"><inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
      <joint name="jb" type="hinge" axis="0 1 0" pos="0.05 0 0"/></body></body>
</worldbody>{tail}</mujoco>"""


def test_mjcf_joint_equality_is_a_coupling_and_degrees_are_read():
    robot = robots.parse_mjcf(
        MJCF.format(
            extra="",
            tail='<equality><joint joint1="jb" joint2="ja" '
            'polycoef="0 -2 0 0 0"/></equality>'
            '<actuator><motor joint="ja"/></actuator>',
        )
    )
    (coupling,) = robot.couplings
    assert robot.coordinate_names[coupling.follower] == "jb" and coupling.ratio == -2.0
    assert robot.actuated_names == ("ja",)
    assert np.allclose(
        robot.graph.edges["world", "a", "ja"]["origin"][:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15
    )  # euler 90 degrees about z
    assert np.allclose(pga_dyn.sampling.default_bounds(robot), [[-np.pi / 2, np.pi / 2]])  # range in degrees


def test_mjcf_armature_is_named_in_a_warning_and_kept_apart():
    text = MJCF.format(extra='armature="0.01"', tail="").replace(
        '<compiler angle="degree"/>', '<compiler angle="degree"/><default><joint armature="0.25"/></default>'
    )
    with pytest.warns(PgaDynWarning, match="joints ja, jb have an armature"):
        robots.parse_mjcf(text)
    assert robots.mjcf_armature(text) == {"ja": 0.01, "jb": 0.25}  # its own, then the default class's


TENDON = '<tendon><fixed name="t"><joint joint="ja" coef="1"/><joint joint="jb" coef="1"/></fixed></tendon>'


@pytest.mark.parametrize(
    "tail,match",
    [
        (
            TENDON.replace('coef="1"/></fixed>', 'coef="0"/></fixed>') + '<equality><tendon tendon1="t"/></equality>',
            "the tendon equality holds joint 'ja' alone \\(a locked joint",
        ),
        (
            TENDON + '<tendon><fixed name="u"><joint joint="jb" coef="1"/></fixed></tendon>'
            '<equality><tendon tendon1="t" tendon2="u" polycoef="0 1 0.5 0 0"/></equality>',
            "polycoef .* is not linear: MuJoCo holds L1 - L1_0 = a0 \\+ a1",
        ),
        (
            '<tendon><spatial name="s"><site site="sa"/><site site="sb"/></spatial></tendon>'
            '<equality><tendon tendon1="s"/></equality>',
            "tendon 's' is a spatial tendon",
        ),
        ('<equality><weld body1="a" body2="b"/></equality>', "a 6D closure needs.*would lock"),
        ('<equality><joint joint1="jb" joint2="ja" polycoef="0 1 0.5 0 0"/></equality>', "is not linear"),
        ('<equality><joint joint1="jb"/></equality>', "a locked joint is not supported"),
        ('<equality><joint joint1="jb" joint2="ja" active="false"/></equality>', "inactive or disabled equality"),
        (
            '<tendon><spatial name="s"><site site="sa"/><site site="sb"/></spatial></tendon>'
            '<equality><joint joint1="jb" joint2="ja"/></equality><actuator><motor name="m" tendon="s"/></actuator>',
            "actuator 'm' is neither on a joint .* nor on a fixed tendon",
        ),
        ('<include file="no_such_file.xml"/>', "m.xml: MuJoCo's compiler: .*no_such_file.xml"),
    ],
)
@pytest.mark.filterwarnings("ignore::pga_dyn.errors.PgaDynWarning")  # no <actuator>
def test_mjcf_unsupported_elements_are_refused_by_name(tail, match):
    text = (
        MJCF.format(extra="", tail=tail)
        .replace('<joint name="jb"', '<site name="sb" pos="0.2 0 0"/><joint name="jb"')
        .replace('<joint name="ja"', '<site name="sa" pos="0.1 0 0"/><joint name="ja"')
    )
    with pytest.raises(PgaDynError, match=match):
        robots.parse_mjcf(text, "m.xml")


def test_mjcf_tendon_actuator_on_a_loop_is_refused():
    """An actuator on a fixed tendon of joints that a loop moves: which of them is actuated is not
    stated, refused by name; on a fixed tendon of joints that no loop moves, it changes nothing."""
    text = files()["four_bar.xml"]
    looped = text.replace(
        "<actuator>",
        '<tendon><fixed name="t"><joint joint="crank_joint" coef="1"/><joint joint="rocker_joint" coef="1"/>'
        '</fixed></tendon><actuator><motor name="m" tendon="t"/>',
    )
    with pytest.raises(
        PgaDynError,
        match=r"four_bar.xml: actuator 'm' drives a fixed tendon whose joints \['crank_joint', 'rocker_joint'\] a loop moves",
    ):
        robots.parse_mjcf(looped, "four_bar.xml")


@pytest.mark.parametrize(
    "equality,ratio,offset",
    [
        ('<equality><tendon tendon1="t"/></equality>', -1.0, 0.0),  # ja + jb = 0
        ('<equality><tendon tendon1="t" polycoef="0.3 0 0 0 0"/></equality>', -1.0, 0.3),  # ja + jb = 0.3
        # 2 ja + 3 jb - 0.5 (2 ja) = a0 = 0.2: jb = 0.2 / 3 - ja / 3
        (
            '<tendon><fixed name="u"><joint joint="ja" coef="2"/></fixed></tendon>'
            '<equality><tendon tendon1="t" tendon2="u" polycoef="0.2 0.5 0 0 0"/></equality>',
            -1.0 / 3,
            0.2 / 3,
        ),
    ],
)
def test_mjcf_fixed_tendon_equality_is_a_coupling(equality, ratio, offset):
    """L1 - L1_0 = a0 + a1 (L2 - L2_0) on fixed tendons (MuJoCo's rule) as the coupling of its last
    joint that no joint actuator drives: jb = (a0 - t_a ja) / t_b with t = coef1 - a1 coef2."""
    mujoco = pytest.importorskip("mujoco")
    tendon = (
        TENDON
        if "tendon2" not in equality
        else TENDON.replace('joint="ja" coef="1"', 'joint="ja" coef="2"').replace(
            'joint="jb" coef="1"', 'joint="jb" coef="3"'
        )
    )
    robot = robots.parse_mjcf(
        MJCF.format(extra="", tail=tendon + equality + '<actuator><motor joint="ja"/></actuator>'), "m.xml"
    )
    (coupling,) = robot.couplings
    assert robot.coordinate_names[coupling.follower] == "jb" and robot.actuated_names == ("ja",)
    assert np.isclose(coupling.ratio, ratio, atol=1e-15) and np.isclose(coupling.offset, offset)
    model = mujoco.MjModel.from_xml_string(
        MJCF.format(extra="", tail=tendon + equality + '<actuator><motor joint="ja"/></actuator>')
    )
    data = mujoco.MjData(model)  # MuJoCo's own residual of the equality is zero on the coupling
    for qa in (-0.4, 0.0, 0.7):
        data.qpos[:] = [qa, ratio * qa + offset]
        mujoco.mj_forward(model, data)
        assert np.allclose(data.efc_pos[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY], 0.0, atol=1e-12)


def test_mjcf_without_equalities_reads_tendons_and_tendon_actuators_as_the_tree():
    """A tendon and an actuator on it change no rigid-body parameter of a tree, whose
    coordinates are all independent: the same robot as without them."""
    plain = robots.parse_mjcf(MJCF.format(extra="", tail=""))
    robot = robots.parse_mjcf(MJCF.format(extra="", tail=TENDON + '<actuator><motor tendon="t"/></actuator>'))
    assert robot.actuated_names == plain.actuated_names == ("ja", "jb")
    assert np.array_equal(pga_dyn.inertial_parameters(robot), pga_dyn.inertial_parameters(plain))


def test_mjcf_inertia_from_geoms_is_mujocos():
    """No <inertial>: MuJoCo's compiler takes the inertia of the geoms (density 1000): a sphere
    of radius r has m = 4/3 pi r^3 rho and I = 2/5 m r^2 about its centre (analytic)."""
    text = (
        '<mujoco><worldbody><body name="a"><joint name="j"/><geom type="sphere" size="0.1" pos="0.2 0 0"/>'
        "</body></worldbody></mujoco>"
    )
    (inertial,) = [robots.parse_mjcf(text, "m.xml").inertial(1)]
    mass = 4 / 3 * np.pi * 0.1**3 * 1000
    assert np.isclose(inertial.mass, mass, rtol=1e-12) and np.allclose(inertial.com, [0.2, 0, 0], atol=1e-15)
    assert np.allclose(inertial.inertia, 0.4 * mass * 0.01 * np.eye(3), rtol=1e-12, atol=1e-15)


def test_mjcf_includes_are_mujocos(tmp_path):
    """<include> is read by MuJoCo's compiler, from the file's folder: the same robot."""
    text = MJCF.format(extra="", tail="")
    body = text[text.index("<worldbody>") + len("<worldbody>") : text.index("</worldbody>")]
    write(tmp_path, "arm.xml", f"<mujoco>{body}</mujoco>")
    path = write(tmp_path, "main.xml", text.replace(body, '<include file="arm.xml"/>'))
    included = robots.load_mjcf(path)
    plain = robots.parse_mjcf(text)
    assert included.body_names == plain.body_names
    assert np.array_equal(pga_dyn.inertial_parameters(included), pga_dyn.inertial_parameters(plain))


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


@pytest.mark.parametrize(
    "yaml,match",
    [
        ("closed_loop: [['pin_A', 'pin_B']]\ntype: ['4d']\nname_mot: ['crank_joint']\n", "constraint type '4d'"),
        (
            "closed_loop: [['pin_A', 'pin_B']]\ntype: ['6d']\nname_mot: ['crank_joint', 'coupler_joint', 'rocker_joint']\n",
            "a 6D closure needs, on one side, a passive R, P, U or S joint",
        ),
        ("closed_loop: [['pin_A', 'nowhere']]\ntype: ['3d']\nname_mot: ['crank_joint']\n", "named 'nowhere'"),
        ("closed_loop: [['pin_A', 'pin_B']]\ntype: ['3d']\nname_mot: ['crank']\n", "no joint named 'crank'"),
        (
            "closed_loop: [['pin_A', 'pin_B']]\ntype: ['3d']\nname_mot: ['crank_joint']\nextra: 1\n",
            "unsupported key.*extra",
        ),
    ],
)
def test_extended_urdf_errors_name_the_problem(tmp_path, yaml, match):
    urdf = write(tmp_path, "robot.urdf", files()["four_bar/robot.urdf"])
    write(tmp_path, "robot.yaml", yaml)
    with pytest.raises(PgaDynError, match=match):
        robots.load_file(urdf)


def test_extended_urdf_joint_types_and_an_explicit_yaml(tmp_path):
    urdf = write(tmp_path, "four.urdf", files()["four_bar/robot.urdf"])
    yaml = write(
        tmp_path,
        "loops.yml",
        "closed_loop: [['pin_A', 'pin_B']]\ntype: ['3D']\nname_mot: ['crank_joint']\n"
        "joint_name: ['rocker_joint']\njoint_type: ['UJOINT_ZX']\n",
    )
    assert robots.load_file(urdf).loop_joints == ()  # no YAML beside: a plain URDF tree
    robot = robots.load_file(urdf, yaml=yaml)
    assert robot.joint_type[robot.body_index("rocker")] == "U"
    assert np.allclose(robot.axes[robot.body_index("rocker")], [[0, 0, 1], [1, 0, 0]])
    assert robot.actuated_names == ("crank_joint",)


def test_cli_analyzes_every_format(tmp_path, capsys):
    """The command (in this process: tests/test_cli.py runs ``python -m pga_dyn.cli`` itself)."""
    for path in paths("four_bar"):
        code = main(["analyze", path])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "26" in out and "certified" in out.lower()
    urdf = write(tmp_path, "tree.urdf", files()["four_bar/robot.urdf"])
    yaml = write(tmp_path, "other.yaml", files()["four_bar/robot.yaml"])
    code = main(["info", urdf, "--yaml", yaml])
    out, err = capsys.readouterr()
    assert code == 0 and "pin_A__pin_B" in out, err
    code = main(["info", urdf, "--yaml", "missing.yaml"])
    err = capsys.readouterr().err
    assert code == 2 and "missing.yaml" in err and "Traceback" not in err


def test_fixtures_load_without_warnings():
    """The fixtures load without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in MECHANISMS:
            for path in paths(name):
                robots.load_file(path)


def test_extended_urdf_loop_that_cannot_close_is_named(tmp_path):
    """A loop between the wrong frames: it closes only away from q0 (the crank moved too), and
    there it leaves the rocker free: refused, naming the loop."""
    urdf = write(tmp_path, "robot.urdf", files()["four_bar/robot.urdf"])
    write(tmp_path, "robot.yaml", "closed_loop: [['pin_A', 'rocker']]\ntype: ['3d']\nname_mot: ['crank_joint']\n")
    with pytest.raises(PgaDynError, match="nearest to q0.*'pin_A__rocker'"):
        pga_dyn.loops.constraints(robots.load_file(urdf))


def test_a_6d_closure_is_the_joint_it_cuts(tmp_path):
    """The four-bar closed by a weld in the middle of its coupler (Gepetto's 6D closure): the
    coupler's far half hangs from the rocker by a fixed joint; welding it to the near half turns
    the coupler's far joint into a revolute loop joint. The same mechanism as the URDF+ four-bar
    with a revolute loop at C (tests/fixtures/formats/four_bar_plus.urdf has a spherical one,
    which is equivalent for this planar linkage): the same certified nullspace dimension."""
    text = files()["four_bar/robot.urdf"]
    # coupler_far: a massless half of the coupler, on a revolute joint at C on the rocker,
    # welded at the coupler's middle M = B + (C - B) / 2 = (0.325, 0.325) in the world
    extra = (
        '  <link name="coupler_far"/>\n'
        '  <joint name="far_joint" type="revolute"><parent link="rocker"/><child link="coupler_far"/>'
        '<origin xyz="-0.05 0.4 0"/><axis xyz="0 0 1"/></joint>\n'
        '  <link name="M_A"/><joint name="M_A_frame" type="fixed"><parent link="coupler"/><child link="M_A"/>'
        '<origin xyz="0.225 0.075 0"/></joint>\n'
        '  <link name="M_B"/><joint name="M_B_frame" type="fixed"><parent link="coupler_far"/>'
        '<child link="M_B"/><origin xyz="-0.225 -0.075 0"/></joint>\n</robot>'
    )
    urdf = write(tmp_path, "robot.urdf", text.replace("</robot>", extra))
    write(tmp_path, "robot.yaml", "closed_loop: [['M_A', 'M_B']]\ntype: ['6d']\nname_mot: ['crank_joint']\n")
    robot = robots.load_file(urdf)
    (loop,) = robot.loop_joints
    assert loop.name == "far_joint" and loop.type == "R"
    assert robot.body_names == ("crank", "coupler", "rocker")  # coupler_far merged into the coupler
    result = drng.nullspace(robot)
    assert result.certified and result.dim == ORACLE_NULLITY["four_bar", "z"]


def test_an_mjcf_weld_is_the_joint_it_cuts():
    """The MJCF four-bar with its coupler in two halves, the far one on a hinge at C on the
    rocker, welded at the coupler's middle (relpose: as at qpos0): the four-bar's nullspace."""
    rocker = '<body name="rocker" pos="0.6 0 0">'  # MuJoCo needs a mass on a moving body
    text = files()["four_bar.xml"].replace(
        rocker,
        rocker + '<body name="coupler_far" pos="-0.05 0.4 0">'
        '<inertial pos="0.1 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>'
        '<joint name="far_joint" type="hinge" axis="0 0 1"/></body>',
    )
    text = text.replace(
        '<connect name="pin" body1="coupler" body2="rocker" anchor="0.45 0.15 0"/>',
        '<weld name="middle" body1="coupler" body2="coupler_far"/>',
    )
    assert "coupler_far" in text and "<weld" in text
    robot = robots.parse_mjcf(text, "four_bar_weld.xml")
    (loop,) = robot.loop_joints
    assert loop.name == "far_joint" and loop.type == "R"
    assert robot.body_names == ("crank", "coupler", "rocker")
    result = drng.nullspace(robot)
    assert result.certified and result.dim == ORACLE_NULLITY["four_bar", "z"]


HIP = """<mujoco model="hip"><compiler angle="radian"/><worldbody><body name="base">
 <body name="thigh" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2">
  <inertial pos="0.05 0.02 -0.2" mass="2" fullinertia="0.03 0.025 0.02 0.001 0.002 0.003"/>
  <joint name="hx" axis="1 0 0" pos="0.01 0 0"/><joint name="hy" axis="0 1 0" pos="0 0.02 0"/>
  <joint name="hz" axis="0 0 1" pos="0 0 0.03"/>
  <body name="shin" pos="0 0 -0.4" euler="0.1 0.2 0.3"><inertial pos="0 0 -0.2" mass="1" diaginertia="0.02 0.02 0.001"/>
   <joint name="knee" axis="0 1 0" pos="0.0 0.01 0.02"/></body></body></body></worldbody></mujoco>"""


def test_mjcf_joints_of_one_body_act_in_turn_as_pinocchio_reads_them(tmp_path):
    """Three joints in one body (Pinocchio: a composite joint), each at its own position, and a
    rotated child: pga-dyn's forces (its regressor times its parameters) equal Pinocchio's RNEA
    on the model Pinocchio's MJCF parser reads from the same file."""
    path = write(tmp_path, "hip.xml", HIP)
    robot, model = robots.load_mjcf(path), pin.buildModelFromMJCF(path)
    assert robot.body_names == ("thigh__hx", "thigh__hy", "thigh", "shin")
    assert robot.coordinate_names == ("hx", "hy", "hz", "knee") and model.nv == 4
    data, rng = model.createData(), np.random.default_rng(0)
    pi = pga_dyn.inertial_parameters(robot)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, 4))
        tau = pga_dyn.regressor(robot, q, qd, qdd) @ pi
        assert np.allclose(tau, pin.rnea(model, data, q, qd, qdd), atol=1e-12)


def test_cli_takes_the_gravity_of_an_mjcf_file_unless_told(tmp_path, capsys):
    text = files()["four_bar.xml"].replace(
        '<compiler angle="radian"/>', '<compiler angle="radian"/><option gravity="0 -9.81 0"/>'
    )
    path = write(tmp_path, "four_bar.xml", text)
    assert np.allclose(robots.load_file(path).gravity, (0, -9.81, 0))
    for extra, shown in (((), "(0, -9.81, 0)"), (("--gravity", "0", "0", "-9.81"), "(0, 0, -9.81)")):
        code = main(["info", path, *extra])
        out, err = capsys.readouterr()
        assert code == 0 and f"gravity:     {shown}" in out, (out, err)


def test_load_file_reads_the_root_element_not_the_text(tmp_path):
    """An MJCF whose comment mentions <robot> is still MJCF; a URDF+ <loop> only in a comment
    does not stop the YAML beside a URDF from being read."""
    mjcf_text = open(paths("four_bar")[2], encoding="utf-8").read()
    mjcf = write(tmp_path, "converted.xml", "<!-- converted from a <robot> URDF -->\n" + mjcf_text)
    assert len(robots.load_file(mjcf).loop_joints) == len(robots.load_file(paths("four_bar")[2]).loop_joints) == 1
    urdf_text = files()["four_bar/robot.urdf"]
    folder = tmp_path / "commented"
    folder.mkdir()
    urdf = write(folder, "robot.urdf", urdf_text.replace("<robot", "<!-- no <loop> here -->\n<robot", 1))
    write(folder, "robot.yaml", files()["four_bar/robot.yaml"])
    assert len(robots.load_file(urdf).loop_joints) == 1
