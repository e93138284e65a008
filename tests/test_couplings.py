"""Couplings solved in closed form, at realistic gear ratios, against Pinocchio.

A 2R arm with a rotor on each joint (rotor i turns ``ratio`` times as fast as link i, URDF+
<coupling>). The oracle is Pinocchio's regressor of the spanning tree (tests/oracle.py
TreeOracle) projected onto the actuated coordinates with a G written here from the gear
ratios: q = G q_a, Y_a = G^T Y_tree. Then the certified nullspace against the rank of that
projected regressor, and the models that must be refused.
"""

import time

import numpy as np
import pytest
from oracle import TreeOracle, numerical_rank

import drng
import robots
from pga_dyn import PgaDynError
from pga_dyn import tp_regressor as tp
from pga_dyn.sampling import sample_states


def inertial(mass, com, diag):
    off = 0.05 * min(diag)  # small products of inertia: a full, positive-definite tensor
    return (
        f'<inertial><mass value="{mass}"/><origin xyz="{com}" rpy="0.2 -0.1 0.3"/><inertia ixx="{diag[0]}" '
        f'ixy="{off}" ixz="{-off}" iyy="{diag[1]}" iyz="{0.5 * off}" izz="{diag[2]}"/></inertial>'
    )


def rotor_chain(ratio, rotor_drives=False, link_flag=""):
    """Links l1, l2 on R joints j1, j2 (axes z, then y); rotor ri on joint jri sits on the parent
    of link i, coaxial with ji. ``rotor_drives``: the rotors are the independent coordinates and
    the links follow them (URDF+ independent flags)."""
    rotor = ' independent="true"' if rotor_drives else ""
    link = ' independent="false"' if rotor_drives else link_flag
    return f"""<robot name="rotor_chain_{ratio:g}">
  <link name="base"/>
  <link name="l1">{inertial(2.0, "0.2 0.02 0.05", (0.02, 0.05, 0.04))}</link>
  <link name="l2">{inertial(1.2, "0.25 -0.01 0.02", (0.01, 0.03, 0.025))}</link>
  <link name="r1">{inertial(0.3, "0 0 0.01", (0.0004, 0.0004, 0.0007))}</link>
  <link name="r2">{inertial(0.2, "0 0.01 0", (0.0003, 0.0005, 0.0003))}</link>
  <joint name="j1" type="continuous"{link}><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
  <joint name="jr1" type="continuous"{rotor}><parent link="base"/><child link="r1"/><origin xyz="0 0 0.05"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"{link}><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0.1"/><axis xyz="0 1 0"/></joint>
  <joint name="jr2" type="continuous"{rotor}><parent link="l1"/><child link="r2"/><origin xyz="0.45 0 0.1"/><axis xyz="0 1 0"/></joint>
  <coupling name="gear1" type="rolling"><predecessor link="l1"/><successor link="r1"/><ratio value="{ratio}"/></coupling>
  <coupling name="gear2" type="rolling"><predecessor link="l2"/><successor link="r2"/><ratio value="{ratio}"/></coupling>
</robot>"""


def gear_projection(robot, ratio, rotor_drives=False):
    """G (4 x 2) with q = G q_a, written from the gear ratios (rows in the robot's tree order)."""
    per_link = {"j": 1.0 / ratio, "jr": 1.0} if rotor_drives else {"j": 1.0, "jr": ratio}
    driver = "jr" if rotor_drives else "j"
    G = np.zeros((4, 2))
    for row, name in enumerate(robot.coordinate_names):
        kind, joint = name[:-1], name[-1]
        G[row, robot.actuated_names.index(driver + joint)] = per_link[kind]
    return G


@pytest.mark.parametrize("ratio", [6.0, 50.0])
def test_rotor_chain_regressor_over_the_full_range(ratio):
    robot = robots.parse_urdf(rotor_chain(ratio), where="rotor_chain.urdf", gravity=(0.5, -1.0, -9.81))
    assert sorted(robot.actuated_names) == ["j1", "j2"]
    G = gear_projection(robot, ratio)
    oracle = TreeOracle(robot)
    C = oracle.parameter_map()
    rng = np.random.default_rng(5)
    q_a = rng.uniform(-np.pi, np.pi, (20, 2))
    q_a[0] = (np.pi, -np.pi)  # the ends of the range: the rotors at +-50 pi
    qd_a, qdd_a = rng.uniform(-1, 1, (2, 20, 2))
    Y = tp.regressor(robot, q_a, qd_a, qdd_a)
    for s in range(20):
        q, qd, qdd = G @ q_a[s], G @ qd_a[s], G @ qdd_a[s]
        expected = G.T @ oracle.regressor(q, qd, qdd)
        assert np.linalg.norm(Y[s] @ C - expected) <= 1e-10 * np.linalg.norm(expected)


@pytest.mark.parametrize("ratio,rotor_drives", [(6.0, False), (50.0, False), (50.0, True)])
def test_rotor_chain_is_certified_as_the_oracle(ratio, rotor_drives):
    robot = robots.parse_urdf(rotor_chain(ratio, rotor_drives), where="rotor_chain.urdf")
    expected_names = ("jr1", "jr2") if rotor_drives else ("j1", "j2")
    assert sorted(robot.actuated_names) == sorted(expected_names)
    G = gear_projection(robot, ratio, rotor_drives)
    oracle = TreeOracle(robot)
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(150):
        q_a = rng.uniform(-np.pi, np.pi, 2) * (ratio if rotor_drives else 1.0)
        qd_a, qdd_a = rng.uniform(-1, 1, (2, 2))
        rows.append(G.T @ oracle.regressor(G @ q_a, G @ qd_a, G @ qdd_a))
    rank, gap = numerical_rank(np.vstack(rows))
    assert gap > 1e6
    start = time.perf_counter()
    result = drng.nullspace(robot)
    seconds = time.perf_counter() - start
    assert result.certified is True
    assert result.dim == 10 * robot.n - rank
    assert seconds < 10.0, seconds
    # sampling draws the independent coordinates: no draw is rejected
    states = sample_states(robot, 50, seed=0)
    assert states.rejected == 0 and states.drawn == 50
    assert np.allclose(states.q, states.q_a @ G.T)


def test_a_passive_joint_that_only_drives_a_rotor_is_refused():
    """j1 and j2 marked independent="false" while their rotors follow them: nothing determines
    them (the model is under-determined), and the error names the joint and the coupling."""
    text = rotor_chain(6.0).replace(
        '<joint name="j1" type="continuous"', '<joint name="j1" type="continuous" independent="false"'
    )
    with pytest.raises(PgaDynError, match="rotor_chain.urdf: joint 'j1' is marked independent=\"false\".*'gear1'"):
        robots.parse_urdf(text, where="rotor_chain.urdf")


def test_a_cycle_of_couplings_is_refused():
    text = rotor_chain(6.0).replace(
        "</robot>",
        '<coupling name="back" type="rolling"><predecessor link="r1"/>'
        '<successor link="l1"/><ratio value="2"/></coupling></robot>',
    )
    with pytest.raises(PgaDynError, match="cycle|already follows"):
        robots.parse_urdf(text, where="rotor_chain.urdf")


def test_zero_ratio_is_refused():
    with pytest.raises(PgaDynError, match="coupling 'gear1'.*ratio"):
        robots.parse_urdf(rotor_chain(0.0), where="rotor_chain.urdf")


# -- limits that are no sampling box ---------------------------------------------------------------
@pytest.mark.parametrize("limits", ["0 0", "-1e-9 1e-9", "0 1e-12"])
def test_degenerate_limits_fall_back_with_a_warning(limits):
    """0/0 limits (a CAD-export artefact) or a range of 1e-9 would sample the joint as frozen and
    certify another robot: the default range is used, with a warning naming the joint."""
    from pga_dyn.errors import PgaDynWarning

    text = (
        rotor_chain(6.0)
        .replace('<joint name="j2" type="continuous"', '<joint name="j2" type="revolute"')
        .replace(
            '<axis xyz="0 1 0"/></joint>\n  <joint name="jr2"',
            f'<axis xyz="0 1 0"/><limit lower="{limits.split()[0]}" upper="{limits.split()[1]}"/></joint>\n'
            '  <joint name="jr2"',
            1,
        )
    )
    robot = robots.parse_urdf(text, where="limits.urdf")
    reference = robots.parse_urdf(rotor_chain(6.0), where="reference.urdf")
    with pytest.warns(PgaDynWarning, match="limits.urdf.*'j2'"):
        result = drng.nullspace(robot)
    assert result.certified and result.dim == drng.nullspace(reference).dim
