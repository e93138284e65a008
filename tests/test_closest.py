"""Assembly from the file's configuration: where q0's loops do not close at its actuated position,
the reference is the closed configuration nearest to q0 with every coordinate free
(:mod:`pga_dyn.loops.closest`), checked against the four-bar's closed set solved by hand on a
grid of crank angles (the triangle of coupler and rocker), and the nullspace there against
Pinocchio's sampled rank (tests/fixture_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_oracle import file_nullity
from test_loops import RSUR, SHORT_FOUR_BAR, joint, link, loop, robot_xml

import drng
import robots
from drng.analysis import analyze, lines
from pga_dyn import PgaDynError, info
from pga_dyn.loops import constraints, on_branch

# A planar four-bar whose crank points away from the rocker's pivot at q0: crank 0.2 (its tip at
# (-0.2, 0) at q0), coupler 0.3, rocker 0.3, pivots 0.6 apart. The tip is 0.8 from the rocker's
# pivot at q0, more than coupler and rocker reach (0.6): the loop closes only with the crank turned
# (by more than 2 rad either way).
OPEN_FOUR_BAR = robot_xml(
    "open_four_bar",
    link("base"),
    link("a", 1.0, (-0.1, 0, 0)),
    link("b", 1.0, (0.15, 0, 0)),
    link("c", 1.0, (0.15, 0.01, 0)),
    joint("ja", "revolute", "base", "a", "0 0 0", "0 0 1"),
    joint("jb", "revolute", "a", "b", "-0.2 0 0", "0 0 1", attrs='independent="false"'),
    joint("jc", "revolute", "base", "c", "0.6 0 0", "0 0 1", attrs='independent="false"'),
    loop("close", "revolute", "b", "0.3 0 0", "c", "0.3 0 0", "0 0 1"),
)


def wrap(angle):
    return (angle + np.pi) % (2 * np.pi) - np.pi


def closed_set(thetas):
    """(theta, phi_b, phi_c) of every closed configuration at the crank angles ``thetas``: the
    coupler's far end P on the two circles of radius 0.3 about the crank's tip and the pivot."""
    out = []
    for theta in thetas:
        tip = -0.2 * np.array([np.cos(theta), np.sin(theta)])
        d = np.array([0.6, 0.0]) - tip
        dist = np.linalg.norm(d)
        if dist > 0.6:
            continue
        alpha, half = np.arctan2(d[1], d[0]), np.arccos(dist / 0.6)
        for beta in (alpha + half, alpha - half):
            point = tip + 0.3 * np.array([np.cos(beta), np.sin(beta)])
            phi_c = np.arctan2(point[1], point[0] - 0.6)
            # the crank's frame turns by theta; b's x axis points along beta: phi_b = beta - theta
            out.append((theta, wrap(beta - theta), wrap(phi_c)))
    return np.array(out)


def test_reference_is_the_nearest_closed_configuration():
    robot = robots.parse_urdf(OPEN_FOUR_BAR, where="open_four_bar")
    con = constraints(robot)
    closest = con.closest
    assert closest is not None and closest.given == "q0"
    assert closest.residual <= 1e-9 and dict(con.residuals(con.E @ con.z_ref + con.e0))["close"] <= 1e-9
    assert {name for name, _ in closest.moved} == {"ja", "jb", "jc"}
    q = con.E @ con.z_ref + con.e0
    grid = closed_set(np.linspace(-np.pi, np.pi, 200001))
    distances = np.linalg.norm(grid, axis=1)
    assert abs(closest.distance - np.linalg.norm(q)) < 1e-12
    assert abs(closest.distance - distances.min()) < 1e-4  # the nearest of the hand-solved closed set
    assert abs(abs(q[0]) - abs(grid[distances.argmin(), 0])) < 1e-3
    report = info.report(robot)
    assert report["reference"][0].startswith("the loops do not close at the actuated position of q0")
    assert "  ja: " in "\n".join(report["reference"])
    assert report["closest"]["moved"]["ja"] == pytest.approx(q[0], abs=1e-12)
    assert report["closest"]["residual"] <= 1e-9 and report["closest"]["open"] == [["close", pytest.approx(0.8)]]


def test_nullspace_at_the_nearest_closed_configuration_matches_pinocchio():
    robot = robots.parse_urdf(OPEN_FOUR_BAR, where="open_four_bar")
    result = drng.nullspace(robot)
    grid = closed_set(np.linspace(-np.pi, np.pi, 20001))
    theta, phi_b, phi_c = grid[np.linalg.norm(grid, axis=1).argmin()]
    dim, gap, _, _ = file_nullity(robot, OPEN_FOUR_BAR, start={"ja": theta, "jb": phi_b, "jc": phi_c})
    assert result.certified and result.dim == dim and gap > 1e3


def test_a_reference_given_that_does_not_close_is_moved_too():
    robot = robots.parse_urdf(OPEN_FOUR_BAR, where="open_four_bar")
    variant = on_branch(robot, 0, [0.3, 0.0, 0.0])
    closest = constraints(variant).closest
    assert closest is not None and closest.given == "the reference given" and closest.residual <= 1e-9


def test_a_loop_that_never_closes_names_the_smallest_residual():
    robot = robots.parse_urdf(SHORT_FOUR_BAR, where="short_four_bar")
    with pytest.raises(PgaDynError, match=r"short_four_bar: the loop joint 'close' cannot be closed .* 'close' \(0\.2"):
        constraints(robot)


# The spatial R-S-U-R four-bar with a crank 1.5 m long pointing away from the rocker: at q0 the
# crank's tip is 2.5 m from the rocker's pivot, more than the coupler (1.06 m) and the rocker
# (0.6 m) reach, so the crank must turn; the coupler hangs on a spherical tree joint (its
# rotation composed, not added, by the search).
OPEN_RSUR = RSUR.replace('name="rsur"', 'name="open_rsur"').replace(
    '"coupler_joint" type="spherical" independent="false"><parent link="crank"/><child link="coupler"/>'
    '<origin xyz="0.3 0 0"',
    '"coupler_joint" type="spherical" independent="false"><parent link="crank"/><child link="coupler"/>'
    '<origin xyz="-1.5 0 0"',
)


def test_a_spatial_loop_with_a_ball_joint_closes_near_q0():
    """The reference of OPEN_RSUR closes by Pinocchio's kinematics (its own residual, not
    pga-dyn's), and the nullspace there is Pinocchio's sampled rank on that branch."""
    from oracle import TreeOracle

    assert OPEN_RSUR != RSUR.replace('name="rsur"', 'name="open_rsur"')
    robot = robots.parse_urdf(OPEN_RSUR, where="open_rsur")
    con = constraints(robot)
    assert con.closest is not None and con.closest.residual <= 1e-9 and con.closest.open[0][1] > 0.1
    q = con.E @ con.z_ref + con.e0
    oracle = TreeOracle(robot)
    assert np.abs(oracle.residual(oracle.configuration(q))).max() < 1e-9
    assert abs(q[0]) > 1.0  # the crank turned
    result = drng.nullspace(robot)
    start = {name: value for name, value in zip(robot.coordinate_names, q) if "coupler_joint" not in name}
    dim, gap, _, _ = file_nullity(robot, OPEN_RSUR, spread=0.3, start=start)  # the oracle closes the ball joint
    assert result.certified and result.dim == dim and gap > 1e6


def test_a_reference_outside_the_joint_limits_widens_the_sampling_box(tmp_path, capsys):
    """The crank of OPEN_FOUR_BAR closes only when turned (1.76 rad at the reference): with limits of
    +-1 rad on it, every sample assembled from the reference would cross into the box (Gepetto's
    true_talos_2_legs). The box is widened to hold the reference, said once by the command, and
    the answer is the one without the limits: Pinocchio's sampled rank at that reference."""
    from pga_dyn.cli import main
    from pga_dyn.errors import PgaDynWarning

    limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>'
    free = joint("ja", "revolute", "base", "a", "0 0 0", "0 0 1")
    limited = OPEN_FOUR_BAR.replace(free, joint("ja", "revolute", "base", "a", "0 0 0", "0 0 1", extra=limit))
    assert limited != OPEN_FOUR_BAR
    robot = robots.parse_urdf(limited, where="limited_four_bar")
    q = constraints(robot).E @ constraints(robot).z_ref + constraints(robot).e0
    assert abs(q[0]) > 1.5  # the reference lies outside the limits
    with pytest.warns(
        PgaDynWarning, match=r"outside the sampling box: 'ja' at .* \(box \[-1, 1\]\); the box is widened"
    ):
        result = drng.nullspace(robot)
    dim, gap, _, _ = file_nullity(robot, limited, start=dict(zip(robot.coordinate_names, q)))
    assert result.certified and result.dim == dim and gap > 1e3
    path = tmp_path / "limited_four_bar.urdf"
    path.write_text(limited)
    assert main(["analyze", str(path)]) == 0
    assert capsys.readouterr().err.count("outside the sampling box") == 1


def stretched_start(theta):
    """A configuration of OPEN_FOUR_BAR with the crank at ``theta`` and the coupler and rocker
    pointing at each other along the line from the crank's tip to the rocker's pivot (open when
    that line is longer than their 0.6 m)."""
    tip = -0.2 * np.array([np.cos(theta), np.sin(theta)])
    d = np.array([0.6, 0.0]) - tip
    return [theta, np.arctan2(d[1], d[0]) - theta, np.arctan2(-d[1], -d[0])]


def test_a_nearest_configuration_at_the_edge_of_the_workspace_walks_inside():
    """From a start 0.25 mm short of closing stretched, the nearest closed configuration has the
    coupler and rocker almost aligned (the four-bar's edge: cond(J_p) above 1e3, against the
    square root law of a fold). The reference walks inside: cond(J_p) below 100, loops closed,
    the passive joints moved continuously (no turn), the report says so, and the answer there is
    Pinocchio's sampled rank at that reference (gap above 1e6, where the edge's was not)."""
    from pga_dyn.loops.reference import INWARD_COND, INWARD_TARGET

    robot = robots.parse_urdf(OPEN_FOUR_BAR, where="open_four_bar")
    start = stretched_start(1.737)
    variant = on_branch(robot, 0, start)
    con = constraints(variant)
    closest = con.closest
    assert closest.nearest_cond > INWARD_COND and con.cond_ref <= INWARD_TARGET
    q = con.E @ con.z_ref + con.e0
    assert dict(con.residuals(q))["close"] <= 1e-9
    assert np.abs(q - start).max() < 0.1  # moved a little, no passive joint turned
    assert closest.distance == pytest.approx(np.linalg.norm(q - start), abs=1e-12)
    assert 0.6 > np.linalg.norm(np.array([0.6, 0.0]) + 0.2 * np.array([np.cos(q[0]), np.sin(q[0])]))  # inside
    report = info.report(variant)
    assert "at the edge of the workspace" in "\n".join(report["reference"])
    assert report["closest"]["nearest_cond"] == pytest.approx(closest.nearest_cond)
    result = drng.nullspace(variant)
    assert result.certificate["reference"]["cond"] == pytest.approx(con.cond_ref)
    text = "\n".join(lines(analyze(robot, reference=start).report()))
    assert "at the edge of the workspace (cond(J_p) = " in text
    dim, gap, _, _ = file_nullity(variant, OPEN_FOUR_BAR, start=dict(zip(variant.coordinate_names, q)))
    assert result.certified and result.dim == dim and gap > 1e6
