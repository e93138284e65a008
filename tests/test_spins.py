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
import warnings

import numpy as np
import pytest
from fixture_oracle import constraint_jacobian, file_nullity, nullity
from oracle import TreeOracle, pin
from test_loops import joint, link, loop, robot_xml

import drng
import robots
from identification.model import identification_model
from pga_dyn import PgaDynError
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynWarning
from pga_dyn.loops import constraints, exact_spins, spin_coordinates, spin_vector
from pga_dyn.sampling import lock_torques, record_states, sample_states, spin_lock_bounds
from pga_dyn.tp_regressor import inertial_parameters

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
    return (
        f'<inertial><mass value="{mass}"/><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="{rpy_of(u)}"/>'
        f'<inertia ixx="{transverse}" ixy="0" ixz="0" iyy="{transverse}" iyz="0" izz="{axial}"/></inertial>'
    )


def rssr(com_offset=0.0, ixy=0.0):
    """The RSSR linkage: crank (actuated, about z at the origin), rod (ball joint at A, its frame at
    A), rocker (about x at C = (0.6, 0.3, 0)), the rod's far end B on the rocker by a ball loop."""
    com = (B - A) / 2 + np.array([0.0, 0.0, com_offset])
    rod = (
        f'<link name="rod">{axial_inertial(0.8, com, U)}</link>'
        if not ixy
        else f'<link name="rod"><inertial><mass value="0.8"/><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
        f'<inertia ixx="0.004" ixy="{ixy}" ixz="0" iyy="0.003" iyz="0" izz="0.002"/></inertial></link>'
    )
    return robot_xml(
        "rssr",
        link("base"),
        link("crank", 1.0, (0.1, 0.01, 0.0)),
        rod,
        link("rocker", 0.9, (0.0, 0.02, 0.12)),
        joint(
            "crank_joint",
            "revolute",
            "base",
            "crank",
            "0 0 0",
            "0 0 1",
            extra='<limit lower="-0.5" upper="0.5" effort="1" velocity="1"/>',
        ),
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
    vector[10 * (rod - 1) : 10 * rod] = spin_vector(robot, constraints(robot).spins[0])
    basis = result.basis
    assert np.linalg.norm(vector - basis @ np.linalg.lstsq(basis, vector, rcond=None)[0]) < 1e-9
    assert any(p["rule"] == "free spin" for p in result.provenance)


OFF = 0.05 * np.linalg.norm(np.cross([0.0, 0.0, 1.0], U))  # the distance of a centre of mass moved 0.05 along z


@pytest.mark.parametrize(
    "text,why",
    [
        (rssr(com_offset=0.05), rf"centre of mass up to {OFF:.3g} m off it"),
        (rssr(ixy=0.001), r"inertia asymmetry 0\.\d"),
    ],
)
def test_a_rod_not_symmetric_about_its_line_is_locked_with_a_warning(text, why):
    robot = robots.parse_urdf(text, where="rssr")
    with pytest.warns(PgaDynWarning, match=rf"free spin of body 'rod' is locked, AN APPROXIMATION: .*{why}"):
        con = constraints(robot)
    (spin,) = con.spins
    assert not spin.symmetric and spin.coupled == ("rod",)
    assert any("AN APPROXIMATION" in line for line in con.report())


# -- Extended URDF + YAML fixtures (the layouts of Gepetto's example-parallel-robots) ----------
def ext_link(name, mass=None, com=(0.0, 0.0, 0.0), u=None):
    """A link: massless, or of ``mass`` with an inertia symmetric about u (default z) at ``com``."""
    if not mass:
        return f'<link name="{name}"/>'
    return f'<link name="{name}">{axial_inertial(mass, com, np.array(u if u is not None else (0.0, 0.0, 1.0)))}</link>'


def ext_joint(name, kind, parent, child, xyz=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), rpy=(0.0, 0.0, 0.0)):
    ax = "" if kind == "fixed" else f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>'
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>{ax}</joint>'
    )


def write_pair(folder, name, urdf, yaml):
    path = os.path.join(folder, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "robot.urdf"), "w") as handle:
        handle.write(urdf)
    with open(os.path.join(path, "robot.yaml"), "w") as handle:
        handle.write(yaml)
    return os.path.join(path, "robot.urdf"), urdf


def delta(folder):
    """A Delta with ball joints: three cranks (actuated, about the tangent at radius 0.2), each
    with two parallel rods (0.5 long, 0.08 apart) on ball joints at both ends, a platform of
    radius 0.05 hung from the first rod by a ball joint and closed on the five others (3D). The
    parallelograms keep the platform's orientation; each rod spins freely about its own line."""
    R, L, r, l, w = 0.2, 0.2, 0.05, 0.5, 0.04
    h = np.sqrt(l**2 - (R + L - r) ** 2)
    corner = r * np.array([1.0, 0.0, 0.0]) + w * np.array([0.0, 1.0, 0.0])  # rod 1a's attachment: the platform's frame
    parts, joints, loops, spherical, lines = (
        [ext_link("base"), ext_link("platform", 0.3, (-corner[0], -corner[1], -0.01))],
        [],
        [],
        [],
        {},
    )
    for i, theta in enumerate(np.radians([0.0, 120.0, 240.0]), start=1):
        e, t = np.array([np.cos(theta), np.sin(theta), 0.0]), np.array([-np.sin(theta), np.cos(theta), 0.0])
        parts.append(ext_link(f"crank{i}", 0.4, (L / 2, 0.0, 0.0)))
        joints.append(ext_joint(f"mot{i}", "revolute", "base", f"crank{i}", R * e, (0.0, 1.0, 0.0), (0.0, 0.0, theta)))
        rod = (r - R - L) * e + np.array([0.0, 0.0, -h])
        u = rod / np.linalg.norm(rod)
        for side, sign in (("a", 1.0), ("b", -1.0)):
            name = f"rod{i}{side}"
            lines[name] = u
            parts += [ext_link(name, 0.05, rod / 2, u), ext_link(f"end{i}{side}"), ext_link(f"att{i}{side}")]
            joints += [
                ext_joint(f"ball{i}{side}", "revolute", f"crank{i}", name, (L, sign * w, 0.0), rpy=(0.0, 0.0, -theta)),
                ext_joint(f"end{i}{side}_frame", "fixed", name, f"end{i}{side}", rod),
                ext_joint(f"att{i}{side}_frame", "fixed", "platform", f"att{i}{side}", r * e + sign * w * t - corner),
            ]
            spherical.append(f"ball{i}{side}")
            if name != "rod1a":
                loops.append(f"['end{i}{side}', 'att{i}{side}']")
    # the platform hangs from rod 1a's far end by a ball joint there (the platform's frame, world-aligned)
    joints.append(
        ext_joint(
            "ball_platform",
            "revolute",
            "rod1a",
            "platform",
            (r - R - L) * np.array([1.0, 0.0, 0.0]) + np.array([0.0, 0.0, -h]),
        )
    )
    spherical.append("ball_platform")
    urdf = f'<robot name="delta">{"".join(parts)}{"".join(joints)}</robot>'
    yaml = (
        f"closed_loop: [{', '.join(loops)}]\ntype: [{', '.join(['3D'] * len(loops))}]\n"
        f"name_mot: ['mot1', 'mot2', 'mot3']\njoint_name: {spherical}\njoint_type: {['SPHERICAL'] * len(spherical)}\n"
    )
    return (*write_pair(folder, "delta", urdf, yaml), lines)


def oracle_free(robot, motors):
    """Pinocchio's velocity indices of every joint not named in the YAML's name_mot."""
    model = TreeOracle(robot).model
    return [
        k
        for joint, name in zip(model.joints[1:], model.names[1:])
        if name not in motors
        for k in range(joint.idx_v, joint.idx_v + joint.nv)
    ]


@pytest.mark.slow  # a 10-body Delta against Pinocchio; the rods' spins are checked fast on the RSSR and the leg
def test_delta_with_ball_joints_locks_six_spins_and_equals_pinocchio(tmp_path):
    path, text, lines = delta(str(tmp_path))
    robot = robots.load_file(path)
    con = constraints(robot)
    assert sorted(spin.name for spin in con.spins) == sorted(lines)
    assert con.ranks[0].clean and con.ranks[0].free == 0
    result = drng.nullspace(robot)
    assert result.certified, result.certificate
    locks = [(robot.body_index(name), u) for name, u in lines.items()]  # rod frames are world-aligned at q0
    dim, gap, _, _ = file_nullity(
        robot, text, locks=locks, free=oracle_free(robot, ("mot1", "mot2", "mot3")), spread=0.3, hops=2
    )
    assert gap > 1e6
    assert result.dim == dim


def five_bar_6d(folder):
    """A planar five-bar (cranks 0.3 along y at x = -+0.2, distal links 0.5 meeting above the middle
    at q0, axes along z) closed by a 6D weld of a pin on the left distal link's tip to the right
    distal link's tip frame."""
    parts = [
        ext_link("base"),
        ext_link("crank1", 0.5, (0.0, 0.15, 0.0)),
        ext_link("crank2", 0.5, (0.0, 0.15, 0.0)),
        ext_link("distal1", 0.4, (0.1, 0.1, 0.0)),
        ext_link("distal2", 0.4, (-0.1, 0.1, 0.0)),
        ext_link("pin", 0.1, (0.0, 0.0, 0.0)),
        ext_link("tip2"),
    ]
    d1, d2 = np.array([0.2, np.sqrt(0.5**2 - 0.2**2), 0.0]), np.array([-0.2, np.sqrt(0.5**2 - 0.2**2), 0.0])
    joints = [
        ext_joint("mot1", "revolute", "base", "crank1", (-0.2, 0.0, 0.0)),
        ext_joint("mot2", "revolute", "base", "crank2", (0.2, 0.0, 0.0)),
        ext_joint("free1", "revolute", "crank1", "distal1", (0.0, 0.3, 0.0)),
        ext_joint("free2", "revolute", "crank2", "distal2", (0.0, 0.3, 0.0)),
        ext_joint("pin_joint", "revolute", "distal1", "pin", d1),
        ext_joint("tip2_frame", "fixed", "distal2", "tip2", d2),
    ]
    urdf = f'<robot name="five_bar_6d">{"".join(parts)}{"".join(joints)}</robot>'
    yaml = "closed_loop: [['pin', 'tip2']]\ntype: ['6d']\nname_mot: ['mot1', 'mot2']\n"
    return write_pair(folder, "five_bar_6d", urdf, yaml)


def test_a_planar_five_bar_closed_by_a_6d_weld_drops_its_redundant_equations(tmp_path):
    path, text = five_bar_6d(str(tmp_path))
    robot = robots.load_file(path)
    con = constraints(robot)
    (rank,) = con.ranks  # the cut revolute loop: 6 rows, 2 independent in the plane
    assert (rank.rows, rank.columns, rank.rank, rank.redundant, rank.free) == (6, 2, 2, 4, 0)
    assert rank.clean and rank.gap > 1e12 and not con.spins
    assert any("4 redundant equations dropped" in line for line in con.report())
    result = drng.nullspace(robot)
    assert result.certified
    assert result.dim == nullity(robot)[0]


def leg_3r(folder, com_shift=0.0):
    """The RSSR linkage in the layout of Gepetto's legs: the ball joint at A made of three revolute
    joints about x, y, z through massless links (ball_A_rev0..2), the one at B a 3D closure of the
    rod's end frame and the rocker's tip frame. ``com_shift``: the rod's centre of mass moved that
    far along z, off the line A -> B (its mass then not symmetric about the line)."""
    parts = [
        ext_link("base"),
        ext_link("crank", 1.0, (0.1, 0.01, 0.0)),
        ext_link("a1"),
        ext_link("a2"),
        ext_link("rod", 0.8, (B - A) / 2 + np.array([0.0, 0.0, com_shift]), U),
        ext_link("rocker", 0.9, (0.0, 0.02, 0.12)),
        ext_link("rod_end"),
        ext_link("rocker_tip"),
    ]
    joints = [
        ext_joint("crank_joint", "revolute", "base", "crank"),
        ext_joint("ball_A_rev0", "revolute", "crank", "a1", A, (1.0, 0.0, 0.0)),
        ext_joint("ball_A_rev1", "revolute", "a1", "a2", axis=(0.0, 1.0, 0.0)),
        ext_joint("ball_A_rev2", "revolute", "a2", "rod"),
        ext_joint("rocker_joint", "revolute", "base", "rocker", (0.6, 0.3, 0.0), (1.0, 0.0, 0.0)),
        ext_joint("rod_end_frame", "fixed", "rod", "rod_end", B - A),
        ext_joint("rocker_tip_frame", "fixed", "rocker", "rocker_tip", (0.0, 0.0, 0.25)),
    ]
    urdf = f'<robot name="leg_3r">{"".join(parts)}{"".join(joints)}</robot>'
    yaml = "closed_loop: [['rod_end', 'rocker_tip']]\ntype: ['3D']\nname_mot: ['crank_joint']\n"
    return write_pair(folder, f"leg_3r_{com_shift:g}", urdf, yaml)


def test_a_leg_whose_ball_joint_is_three_revolutes_locks_the_rod(tmp_path):
    path, text = leg_3r(str(tmp_path))
    robot = robots.load_file(path)
    (spin,) = constraints(robot).spins
    assert spin.name == "rod" and set(spin.joints) <= {"ball_A_rev0", "ball_A_rev1", "ball_A_rev2"}
    result = drng.nullspace(robot)
    assert result.certified
    dim, gap, _, _ = file_nullity(
        robot, text, locks=[(robot.body_index("rod"), U)], free=oracle_free(robot, ("crank_joint",)), spread=0.4
    )
    assert gap > 1e6 and result.dim == dim


# -- the lock's bound and the exact treatment (a rod with its centre of mass off its line) --------
SHIFT = 0.03  # the asymmetric rod's centre of mass, moved off its line along z


def pinocchio_lock_torque(robot, text, states, spin_joint):
    """The torque about the rod's line that holds its spin at the locked states, by Pinocchio: with
    tau = RNEA(q, qd, qdd) (the tree's generalized forces) and v the motion that turns only the
    coordinate ``spin_joint`` (v_a = 0, J_loop v = 0: the loops' rows of Pinocchio's Jacobian, no
    lock), tau . v = lambda (u . w_rod(v)), since the loops' forces do no work along v."""
    oracle = TreeOracle(robot, text)
    model, data = oracle.model, oracle.data
    rod, s = robot.body_index("rod"), robot.coordinate_names.index(spin_joint)
    passive = [k for k in robot.passive if k != s]
    out = []
    for q, qd, qdd in zip(states.q, states.qd, states.qdd):
        qp = oracle.configuration(q)
        tau = pin.rnea(model, data, qp, qd, qdd)
        J = constraint_jacobian(oracle, qp)
        v = np.zeros(robot.nq)
        v[s] = 1.0
        v[passive] = -np.linalg.lstsq(J[:, passive], J[:, s], rcond=None)[0]
        pin.computeJointJacobians(model, data, qp)
        Jrod = pin.getJointJacobian(model, data, rod, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        u = data.oMi[rod].rotation @ U  # the rod's frame is the world's at q0
        out.append((tau @ v) / (u @ (Jrod[3:] @ v)))
    return np.array(out)


@pytest.mark.parametrize("shift", [0.0, SHIFT])
def test_the_lock_torque_equals_pinocchio(tmp_path, shift):
    path, text = leg_3r(str(tmp_path), shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        robot = robots.load_file(path)
        (spin,) = constraints(robot).spins
    assert spin.symmetric == (shift == 0.0)
    states = sample_states(robot, 6, seed=3)
    lam, tau_a = lock_torques(states)
    np.testing.assert_allclose(tau_a, states.regressor() @ inertial_parameters(robot), atol=1e-12)
    expected = pinocchio_lock_torque(robot, text, states, "ball_A_rev0") * np.sign(spin.axis @ U)  # the line's sense
    if shift:
        assert np.abs(expected).max() > 1e-3  # the lock holds a torque: the approximation is real
        np.testing.assert_allclose(lam[:, 0], expected, rtol=1e-8, atol=1e-12)
        (bound,) = spin_lock_bounds(robot, samples=6, seed=3)
        assert bound["torque"] == pytest.approx(np.abs(expected).max(), rel=1e-8)
        assert bound["ratio"] == pytest.approx(bound["torque"] / np.abs(tau_a).max(), rel=1e-8)
    else:  # symmetric: the spin is cyclic, the lock holds nothing
        assert np.abs(expected).max() < 1e-12 * np.abs(tau_a).max()
        assert np.abs(lam).max() < 1e-12 * np.abs(tau_a).max()


@pytest.mark.parametrize("shift", [0.0, SHIFT])
def test_exact_spins_equal_pinocchio_with_the_spin_a_coordinate(tmp_path, shift):
    path, text = leg_3r(str(tmp_path), shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        robot = robots.load_file(path)
        locked = drng.nullspace(robot)
    exact = exact_spins(robot)
    assert spin_coordinates(exact) == ("ball_A_rev0",) and exact.actuated_names == ("crank_joint", "ball_A_rev0")
    assert not constraints(exact).spins and constraints(exact).m == 3  # no lock row
    result = drng.nullspace(exact)
    assert locked.certified and result.certified and result.certificate["spin_coordinates"] == ["ball_A_rev0"]
    assert result.status == "certified, free spins exact"
    assert locked.status == ("certified, free spins locked APPROXIMATELY" if shift else "certified")
    assert ("spin_locks" in locked.certificate) == bool(shift)
    free = [k for k in oracle_free(robot, ("crank_joint",)) if k != robot.coordinate_names.index("ball_A_rev0")]
    dim, gap, _, _ = file_nullity(exact, text, free=free, spread=0.4)  # the spin's rows included
    assert gap > 1e6 and result.dim == dim == 26
    assert locked.dim == 29
    if (
        shift
    ):  # the symmetric rod's lock against Pinocchio: test_a_leg_whose_ball_joint_is_three_revolutes_locks_the_rod
        lock_dim, gap, _, _ = file_nullity(
            robot, text, locks=[(robot.body_index("rod"), U)], free=oracle_free(robot, ("crank_joint",)), spread=0.4
        )
        assert gap > 1e6 and lock_dim == 29
    # the rod's inertia about its line: unidentifiable with the spin locked, identifiable with it free
    rod = robot.body_index("rod")
    vector = np.zeros(10 * robot.n)
    vector[10 * (rod - 1) : 10 * rod] = spin_vector(robot, constraints(robot).spins[0])

    def distance(basis):
        return np.linalg.norm(vector - basis @ np.linalg.lstsq(basis, vector, rcond=None)[0]) / np.linalg.norm(vector)

    assert distance(locked.basis) < 1e-9 and distance(result.basis) > 1e-3


def test_exact_spins_need_a_revolute_coordinate_and_records_refuse_them(tmp_path):
    with pytest.raises(PgaDynError, match=r"rssr: exact_spins \(--spins exact\): .* three revolute joints"):
        exact_spins(robots.parse_urdf(rssr(), where="rssr"))
    path, _ = leg_3r(str(tmp_path))
    exact = exact_spins(robots.load_file(path))
    for call in (
        lambda: record_states(exact, [0.0, 0.1], np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2))),
        lambda: identification_model(exact),
    ):
        with pytest.raises(PgaDynError, match=r"cannot use the exact treatment of free spins \(--spins exact"):
            call()


def test_the_cli_names_the_approximation_and_refuses_exact_spins_for_excite(tmp_path, capsys):
    path, _ = leg_3r(str(tmp_path), SHIFT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        assert main(["info", path, "--quiet"]) == 0
    assert "LOCKED APPROXIMATELY (the mass of 'rod'" in capsys.readouterr().out
    assert main(["excite", path, "--spins", "exact", "-o", str(tmp_path / "x.csv"), "--quiet"]) == 2
    assert "--spins exact" in capsys.readouterr().err
