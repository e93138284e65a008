"""The robot model: depth-first numbering, merged fixed joints, coordinate names, Table 2."""

import numpy as np
import pytest
from paths import FOUR_BAR  # noqa: E402

import pga_dyn
from pga_dyn import pga
from pga_dyn.errors import PgaDynError
from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot
from robots.urdf import load_urdf, parse_urdf


def chain(types, axes):
    links = [LinkSpec("base")] + [LinkSpec(f"l{k}", Inertial(1.0, np.zeros(3), np.eye(3))) for k in range(len(types))]
    joints = []
    for k, (t, a) in enumerate(zip(types, axes)):
        origin = np.eye(4)
        origin[0, 3] = 0.3
        joints.append(JointSpec(f"j{k}", t, links[k].name, f"l{k}", origin, np.array(a, float).reshape(-1, 3)))
    return links, joints


def test_depth_first_numbering_and_tree_arrays():
    text = """<robot name="tree">
      <link name="b"/><link name="a1"/><link name="a2"/><link name="c1"/><link name="f"/>
      <joint name="ja1" type="revolute"><parent link="b"/><child link="a1"/><axis xyz="0 0 1"/></joint>
      <joint name="jc1" type="prismatic"><parent link="b"/><child link="c1"/><axis xyz="1 0 0"/></joint>
      <joint name="ja2" type="universal"><parent link="a1"/><child link="a2"/><axis xyz="0 0 1"/><axis2 xyz="0 1 0"/></joint>
      <joint name="jf" type="fixed"><parent link="a2"/><child link="f"/><origin xyz="0 0 1"/></joint>
    </robot>"""
    robot = parse_urdf(text, "tree.urdf")
    assert robot.body_names == ("a1", "a2", "c1")  # depth first, URDF sibling order, f merged into a2
    assert list(robot.parent) == [-1, 0, 1, 0]
    assert robot.joint_type == ("base", "R", "U", "P")
    assert robot.coordinate_names == ("ja1", "ja2.1", "ja2.2", "jc1")
    assert robot.body_index("f") == 2 and np.allclose(robot.link_pose("f")[:3, 3], [0, 0, 1])
    assert all(robot.parent[i] < i for i in range(1, robot.n + 1))
    assert set(robot.graph.nodes) == {"b", "a1", "a2", "c1"}
    assert robot.graph.edges["a1", "a2", "ja2"]["type"] == "U"
    assert [robot.graph.nodes[name]["index"] for name in ("b", "a1", "a2", "c1")] == [0, 1, 2, 3]


def test_lumped_inertia_of_merged_links_is_the_sum():
    """Two unit point masses, one merged through a fixed joint: mass 2, COM midway, inertia of the pair."""
    point = Inertial(1.0, np.zeros(3), np.zeros((3, 3)))
    links = [LinkSpec("base"), LinkSpec("a", point), LinkSpec("b", point)]
    shift = np.eye(4)
    shift[:3, 3] = [0, 0, 2]
    joints = [
        JointSpec("j", "R", "base", "a", np.eye(4), np.array([[1.0, 0, 0]])),
        JointSpec("k", "fixed", "a", "b", shift),
    ]
    body = Robot("pair", links, joints).inertial(1)
    assert body.mass == 2.0
    assert np.allclose(body.com, [0, 0, 1])
    assert np.allclose(body.inertia, np.diag([2.0, 2.0, 0.0]))  # two masses at distance 1 from the COM


def test_reference_configuration_of_the_four_bar():
    """The robot attributes of the DRNG paper's Table 2 for the four-bar: parents, the motors of the
    body frames at q0, the joint lines at q0, the gravity seed, the loop joint's bodies."""
    from pga_dyn.conventions import gravity_seed
    from pga_dyn.kinematics import Kinematics, initial_poses

    robot = load_urdf(FOUR_BAR)
    assert robot.n == 3 and len(robot.loop_joints) == 1 and robot.loop_joints[0].type == "R"
    assert list(robot.parent) == [-1, 0, 1, 0]
    # rocker_joint turns about z through D = (0.8, 0, 0) (tests/fixtures/four_bar.urdf): the
    # line (0, 0, 1; p x s) = (0, 0, 1; 0, -0.8, 0)
    assert np.allclose(Kinematics(robot, robot.q0).S[robot.q_index[3]], [0, 0, 1, 0, -0.8, 0])
    assert np.allclose(gravity_seed(robot.gravity), [0, 0, 0, 0, 0, 9.81])
    T0 = initial_poses(robot)
    for i in range(robot.n + 1):  # link frames at the pivots A, A, B, D, parallel to the world
        expected = np.eye(4)
        expected[:3, 3] = {0: (0, 0, 0), 1: (0, 0, 0), 2: (0.1, 0.2, 0), 3: (0.8, 0, 0)}[i]
        assert np.allclose(pga.matrix_from_motor(pga.motor_from_matrix(T0[i])), expected)
    assert robot.loop_joints[0].parent > 0 and robot.loop_joints[0].child > 0


def test_state_shape_errors_name_the_argument():
    robot = Robot("c", *chain("RR", [[0, 0, 1], [0, 1, 0]]))
    with pytest.raises(PgaDynError, match="qd must have shape"):
        pga_dyn.regressor(robot, np.zeros(2), np.zeros(3), np.zeros(2))
    with pytest.raises(PgaDynError, match="non-finite"):
        pga_dyn.regressor(robot, np.array([np.nan, 0]), np.zeros(2), np.zeros(2))
    with pytest.raises(PgaDynError, match="out must be"):
        pga_dyn.regressor(robot, np.zeros(2), np.zeros(2), np.zeros(2), out=np.zeros((2, 10)))


def test_state_values_checked_by_argument_and_inputs_any_kind_of_array():
    robot = Robot("c", *chain("RR", [[0, 0, 1], [0, 1, 0]]))
    state = np.array([0.3, -0.2])
    for k, name in enumerate(("q", "qd", "qdd")):
        for bad in (np.inf, -np.inf, np.nan):
            args = [state, state, state]
            args[k] = np.array([0.1, bad])
            with pytest.raises(PgaDynError, match=f"^{name} contains non-finite values"):
                pga_dyn.regressor(robot, *args)
            with pytest.raises(PgaDynError, match=f"^{name} contains non-finite values"):
                pga_dyn.regressor(robot, *(np.vstack([a, a]) for a in args))
    big = np.array([1e300, -1e300])  # finite angles, though their squares overflow
    assert np.all(np.isfinite(pga_dyn.regressor(robot, big, state, state)))
    # read-only, strided, integer and list inputs give the regressor of the same values
    frozen = state.copy()
    frozen.flags.writeable = False
    strided = np.array([0.3, 9.0, -0.2])[::2]
    expected = pga_dyn.regressor(robot, state, state, state)
    for q in (frozen, strided, [0.3, -0.2]):
        np.testing.assert_array_equal(pga_dyn.regressor(robot, q, q, q), expected)
    assert np.array_equal(
        pga_dyn.regressor(robot, [1, 2], [0, 0], [0, 0]),
        pga_dyn.regressor(robot, np.array([1.0, 2.0]), np.zeros(2), np.zeros(2)),
    )


def test_loop_with_no_independent_coordinate_is_an_error():
    text = """<robot name="locked">
      <link name="b"/><link name="a"/><link name="c"/>
      <joint name="ja" type="revolute" independent="false"><parent link="b"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <joint name="jc" type="revolute" independent="false"><parent link="a"/><child link="c"/>
        <origin xyz="1 0 0"/><axis xyz="0 0 1"/></joint>
      <loop name="l" type="revolute"><predecessor link="c"><origin xyz="1 0 0"/></predecessor>
        <successor link="b"><origin xyz="2 0 0"/></successor><axis xyz="0 0 1"/></loop>
    </robot>"""
    with pytest.raises(PgaDynError, match="locked.urdf.*no independent coordinate"):
        parse_urdf(text, "locked.urdf")


def test_loop_ends_are_renumbered_parent_first():
    """A loop whose predecessor has the larger index is stored with its ends swapped (section 5.1)."""
    robot = load_urdf(FOUR_BAR)
    (lp,) = robot.loop_joints
    assert (lp.parent, lp.child) == (2, 3)
    text = open(FOUR_BAR).read()
    assert text.count('<predecessor link="coupler">') == text.count('<successor link="rocker">') == 1
    text = (
        text.replace('<predecessor link="coupler">', '<predecessor link="TMP">')
        .replace('<successor link="rocker">', '<successor link="coupler">')
        .replace('<predecessor link="TMP">', '<predecessor link="rocker">')
    )
    swapped = parse_urdf(text, "swapped.urdf").loop_joints[0]
    assert (swapped.parent, swapped.child) == (2, 3)
    assert np.allclose(swapped.parent_frame, lp.child_frame) and np.allclose(swapped.child_frame, lp.parent_frame)


def test_mimic_on_a_fixed_joint_is_ignored():
    """Reduced models fix joints but keep their <mimic> tags (example-robot-data's Talos)."""
    text = """<robot name="reduced">
      <link name="b"/><link name="a"/><link name="c"/>
      <joint name="ja" type="revolute"><parent link="b"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <joint name="jc" type="fixed"><parent link="a"/><child link="c"/><mimic joint="ja"/></joint>
    </robot>"""
    robot = parse_urdf(text, "reduced.urdf")
    assert robot.couplings == () and not robot.constrained and robot.actuated_names == ("ja",)


def test_independent_false_without_constraint_is_an_error():
    text = """<robot name="tree"><link name="b"/><link name="a"/>
      <joint name="ja" type="revolute" independent="false"><parent link="b"/><child link="a"/><axis xyz="0 0 1"/></joint>
    </robot>"""
    with pytest.raises(PgaDynError, match="tree.urdf.*'ja'.*no loop joint moves it and no coupling"):
        parse_urdf(text, "tree.urdf")


def test_continuous_joint_limits_are_not_sampling_bounds():
    text = """<robot name="c"><link name="b"/><link name="a"/>
      <joint name="ja" type="continuous"><parent link="b"/><child link="a"/><axis xyz="0 0 1"/>
        <limit lower="0" upper="0" effort="1" velocity="1"/></joint>
    </robot>"""
    from pga_dyn.sampling import default_bounds

    assert np.allclose(default_bounds(parse_urdf(text, "c.urdf")), [[-np.pi, np.pi]])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda r: pga_dyn.regressor(r, "abc", np.zeros(6), np.zeros(6)), "q must be an array of numbers"),
        (lambda r: pga_dyn.regressor(r, np.zeros(6) + 1j, np.zeros(6), np.zeros(6)), "q must be real"),
        (lambda r: pga_dyn.regressor(r, [[0, 1], [2]], np.zeros(6), np.zeros(6)), "q must be an array of numbers"),
        (lambda r: pga_dyn.sample_states(r, 2.5), "n must be a positive whole number"),
        (lambda r: pga_dyn.sample_states(r, 3, bounds=[[0, 0]] * 6), "lower < upper"),
        (lambda r: pga_dyn.sample_states(r, 3, max_cond=float("nan")), "max_cond"),
        (lambda r: pga_dyn.sample_states(r, 3, seed="x"), "seed"),
        (lambda r: pga_dyn.Kinematics(r, np.zeros(6)).jacobian(7), "body index"),
        (lambda r: pga_dyn.from_link_parameters(r, np.full(60, np.nan)), "non-finite"),
    ],
)
def test_bad_arguments_name_the_argument(call, message):
    import robots

    with pytest.raises(PgaDynError, match=message):
        call(robots.load("puma560"))


def test_gravity_must_be_three_numbers():
    import robots

    with pytest.raises(PgaDynError, match="gravity must be a vector of 3 numbers"):
        robots.load("puma560", gravity="abc")


TRUNK = """<robot name="trunk">
  <link name="base"/><link name="trunk"/><link name="a"/><link name="b"/><link name="c"/>
  <joint name="jt" type="revolute" independent="{trunk}"><parent link="base"/><child link="trunk"/><axis xyz="0 0 1"/></joint>
  <joint name="ja" type="revolute"><parent link="trunk"/><child link="a"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="jb" type="revolute" independent="false"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="jc" type="revolute" independent="false"><parent link="trunk"/><child link="c"/><origin xyz="0 1 0"/>
    <axis xyz="0 0 1"/></joint>
  <loop name="close" type="revolute"><predecessor link="b"><origin xyz="1 0 0"/></predecessor>
    <successor link="c"><origin xyz="2 -1 0"/></successor><axis xyz="0 0 1"/></loop>
</robot>"""


def test_loop_clusters_are_the_cycles_of_the_loops():
    """A loop between b (on trunk-a-b) and c (on trunk-c) ties a, b and c together: the trunk
    moves both ends alike, so it is outside the cluster (networkx components of the cycles)."""
    robot = parse_urdf(TRUNK.format(trunk="true"), "trunk.urdf")
    assert robot.body_names == ("trunk", "a", "b", "c")
    assert robot.loop_clusters == ((2, 3, 4),)
    assert robot.graph.edges["b", "c", "close"]["kind"] == "loop"
    assert load_urdf(FOUR_BAR).loop_clusters == ((1, 2, 3),)
    assert (
        parse_urdf(
            TRUNK.format(trunk="true")
            .replace("<loop", "<!--")
            .replace("</loop>", "-->")
            .replace('independent="false"', ""),
            "tree.urdf",
        ).loop_clusters
        == ()
    )


def test_a_passive_joint_outside_every_loop_cluster_is_an_error():
    """A passive trunk joint moves both ends of the loop alike: the loop cannot determine it."""
    with pytest.raises(PgaDynError, match="trunk.urdf.*'jt'.*no loop joint moves it"):
        parse_urdf(TRUNK.format(trunk="false"), "trunk.urdf")
