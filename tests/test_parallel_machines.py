"""The classic parallel machines built in (docs/parallel_machines.md): five_bar, 3rrr, 3prs, 6ups,
3ups_1up, delta, 6sps (the last two with rods spinning freely between ball joints, locked). Each is checked against Pinocchio (tests/oracle.py, tests/fixture_oracle.py), which uses
only the model's tree joints and loop joints, none of pga-dyn's kinematics, closure or regressor:

* the files are what tests/make_pkms.py makes of the stated geometry;
* the loops close at q = 0 (Pinocchio's forward kinematics) and the constraint Jacobian leaves
  exactly the actuated degrees of freedom;
* the certified nullspace dimension equals Pinocchio's (stacked, projected regressor of closed
  rest states: fixture_oracle.file_nullity) and drng's numerical method; the planar ones equal
  the hand counts of docs/parallel_machines.md, with gravity along the axes and in the plane;
* identification: random exciting trajectory, forces by identification.simulate (checked
  against Pinocchio's RNEA projected onto the actuated coordinates), the base parameters
  recovered to 1e-6 relative, no noise.
"""

import os

import numpy as np
import pytest
from fixture_oracle import constraint_jacobian, file_nullity
from make_pkms import texts
from oracle import TreeOracle, pin

import drng
import robots
from identification import identification_model, identify, random_excitation, simulate
from pga_dyn.loops import constraints
from pga_dyn.sampling import complete_states

#: name: (bodies, tree coordinates, actuated joints, loop joints (name, type), nullspace dimension,
#: actuated limit: the oracle's spread). The dimensions are asserted equal to Pinocchio's below.
MACHINES = {
    "five_bar": (4, 4, ("A1", "A2"), (("C", "R"),), 33, 0.3),
    "3rrr": (7, 7, ("A1", "A2", "A3"), (("C2", "R"), ("C3", "R")), 57, 0.3),
    "3prs": (7, 9, ("P1", "P2", "P3"), (("S2", "S"), ("S3", "S")), 51, 0.08),
    "6ups": (13, 21, tuple(f"P{k}" for k in range(1, 7)), tuple((f"S{k}", "S") for k in range(2, 7)), 48, 0.05),
    "3ups_1up": (8, 12, ("P1", "P2", "P3"), (("S1", "S"), ("S2", "S"), ("S3", "S")), 31, 0.08),
    "delta": (
        10,
        24,
        ("A1", "A2", "A3"),
        tuple((f"S{k}_platform", "S") for k in ("1b", "2a", "2b", "3a", "3b")),
        69,
        0.4,
    ),
    "6sps": (
        13,
        27,
        tuple(f"P{k}" for k in range(1, 7)),
        tuple((f"S{k}_platform", "S") for k in range(2, 7)),
        54,
        0.05,
    ),
}
each = pytest.mark.parametrize("name", sorted(MACHINES))
#: The machines whose rods spin freely between two ball joints (pga-dyn locks the spins).
SPINNING = ("delta", "6sps")


def spin_lines(robot, oracle):
    """(body, unit direction in its frame) of each rod between two ball joints, from Pinocchio's
    placements at q = 0, not from pga-dyn's spin detection: a body on a spherical joint (its
    centre, the body origin), followed through prismatic joints to the body that carries the
    other ball (a spherical child joint, or a spherical loop joint): the line through the two
    centres. The oracle holds each one's spin rate at zero (tests/fixture_oracle.py, locks)."""
    model, data = oracle.model, oracle.data
    pin.forwardKinematics(model, data, pin.neutral(model))
    children = {i: [j for j in range(1, robot.n + 1) if robot.parent[j] == i] for i in range(robot.n + 1)}
    lines = []
    for b in range(1, robot.n + 1):
        if robot.joint_type[b] != "S":
            continue
        end = b
        while any(robot.joint_type[c] == "P" for c in children[end]):
            end = next(c for c in children[end] if robot.joint_type[c] == "P")
        far = [data.oMi[c].translation for c in children[end] if robot.joint_type[c] == "S"]
        far += [
            (data.oMi[end].homogeneous @ (lp.parent_frame if lp.parent == end else lp.child_frame))[:3, 3]
            for lp in robot.loop_joints
            if lp.type == "S" and end in (lp.parent, lp.child)
        ]
        if len(far) == 1:
            d = far[0] - data.oMi[b].translation
            lines.append((b, data.oMi[b].rotation.T @ d / np.linalg.norm(d)))
    return lines


def test_files_are_current():
    data = os.path.dirname(robots.data_path("five_bar"))
    for filename, text in texts().items():
        with open(os.path.join(data, filename), encoding="utf-8") as handle:
            assert handle.read() == text, f"{filename}: run python tests/make_pkms.py robots/data"


@each
def test_structure(name):
    bodies, nq, actuated, loops, _, _ = MACHINES[name]
    robot = robots.load(name)
    assert name in robots.available() and not robot.floating_base
    assert robot.n == bodies and robot.nq == nq and robot.num_parameters == 10 * bodies
    assert robot.actuated_names == actuated
    assert tuple((lp.name, lp.type) for lp in robot.loop_specs) == loops
    np.testing.assert_array_equal(robot.gravity, (0, 0, -9.81))


@each
def test_closed_at_q0_with_the_actuated_mobility(name):
    """Pinocchio's closure residual vanishes at q = 0, and its constraint Jacobian has rank
    nq - n_a with the passive columns regular (cond < 30): the machine has exactly its actuated
    degrees of freedom there."""
    robot = robots.load(name)
    oracle = TreeOracle(robot)
    oracle.locks = spin_lines(robot, oracle)  # a rod's spin, free between its balls, held at zero rate
    assert len(oracle.locks) == (6 if name in SPINNING else 0)
    qp = pin.neutral(oracle.model)
    assert np.abs(oracle.residual(qp)).max() < 1e-12
    J = constraint_jacobian(oracle, qp)
    s = np.linalg.svd(J, compute_uv=False)
    k = robot.nq - len(robot.actuated)
    assert s[k - 1] > 1e-6 * s[0] and (len(s) == k or s[k] < 1e-10 * s[0])
    sp = np.linalg.svd(J[:, list(robot.passive)], compute_uv=False)
    assert sp[0] / sp[-1] < 30


@pytest.mark.parametrize(
    "name", [pytest.param(m, marks=pytest.mark.slow) if m == "delta" else m for m in sorted(MACHINES)]
)  # the Delta: the longest (6sps has locked spins too)
def test_nullspace_against_pinocchio(name):
    """Certified DRNG = drng's numerical method = Pinocchio's sampled rank (clean gaps)."""
    dim, spread = MACHINES[name][4], MACHINES[name][5]
    robot = robots.load(name)
    result = drng.nullspace(robot)
    assert result.certified and result.status == "certified" and result.dim == dim
    assert drng.numerical_nullspace(robot).dim == dim
    locks = spin_lines(robot, TreeOracle(robot))
    if locks:  # pga-dyn finds the spins the geometry says, each rod's line (its frame)
        found = {spin.body: spin.axis for spin in constraints(robot).spins}
        assert sorted(found) == sorted(b for b, _ in locks)
        for b, u in locks:
            assert abs(abs(found[b] @ u) - 1.0) < 1e-9
    with open(robots.data_path(name), encoding="utf-8") as handle:
        oracle_dim, gap, _, _ = file_nullity(robot, handle.read(), spread=spread, locks=locks, hops=1 if locks else 0)
    assert oracle_dim == dim and gap > 1e8


@pytest.mark.parametrize(
    "name,gravity,dim",
    [
        ("five_bar", (0, 0, -9.81), 33),
        ("five_bar", (0, -9.81, 0), 29),
        ("five_bar", (0, 0, 0), 33),
        ("3rrr", (0, 0, -9.81), 57),
        ("3rrr", (0, -9.81, 0), 51),
    ],
)
def test_planar_hand_counts(name, gravity, dim):
    """docs/parallel_machines.md: a planar chain of k links about parallel axes identifies 3k - 2
    parameters with gravity along the axes (or none), 3k with gravity in the plane; every loop
    joint shares one point: one mass transfer. Five-bar: 2 x 4 - 1 = 7 identifiable (33 of 40), in the
    plane 2 x 6 - 1 = 11 (29); 3-RRR: 7 + 4 + 4 - 2 = 13 (57 of 70), in the plane 9 + 6 + 6 - 2 = 19
    (51). Pinocchio agrees."""
    robot = robots.load(name, gravity=gravity)
    assert drng.nullspace(robot).dim == dim
    with open(robots.data_path(name), encoding="utf-8") as handle:
        assert file_nullity(robot, handle.read(), spread=0.3)[0] == dim


@each
def test_identified_from_actuator_forces(name):
    """random_excitation -> simulate (noise-free) -> identify: the base parameters to 1e-6; the
    simulated forces are Pinocchio's RNEA of the tree projected onto the actuated coordinates."""
    robot = robots.load(name)
    model = identification_model(robot)
    traj = random_excitation(robot, duration=4, rate=50, period=4, model=model, seed=1).trajectory
    data, _ = simulate(robot, traj)
    oracle = TreeOracle(robot)
    states = complete_states(robot, traj.q, traj.qd, traj.qdd)
    tau = np.array([G.T @ oracle.rnea(q, qd, qdd) for q, qd, qdd, G in zip(states.q, states.qd, states.qdd, states.G)])
    assert np.abs(data.tau - tau).max() < 1e-9 * np.abs(tau).max()
    est = identify(robot, data, model=model)
    truth = model.values(model.theta(oracle.link_parameters().reshape(-1)))
    assert len(truth) == 10 * robot.n - MACHINES[name][4]
    assert np.linalg.norm(est.beta - truth) <= 1e-6 * np.linalg.norm(truth), est.cond


@pytest.mark.filterwarnings("ignore::pga_dyn.errors.PgaDynWarning")  # the singular reference, said once
def test_the_built_in_parallelogram_has_two_branches(capsys):
    """robots/data/parallelogram.urdf (the geometry of tests/fixtures/flat_parallelogram.urdf, with
    the inertials of tests/make_pkms.py) is singular at q0: both branches are answered and each
    equals Pinocchio's sampled rank from a configuration of that branch solved by the test
    (test_real_structures.flat_parallelogram_branch); ``pga-dyn analyze parallelogram --branch 1``
    answers the crossed one."""
    from test_real_structures import flat_parallelogram_branch

    from pga_dyn.cli import main

    robot = robots.load("parallelogram")
    result = drng.nullspace(robot)
    with open(robots.data_path("parallelogram"), encoding="utf-8") as handle:
        text = handle.read()
    oracle = []
    for crossed in (False, True):
        dim, gap, _, _ = file_nullity(robot, text, start=flat_parallelogram_branch(0.5, crossed))
        assert gap > 1e8
        oracle.append(dim)
    assert oracle == [29, 26] and result.certified and result.dim == 29
    assert [b["dimension"] for b in result.certificate["branches"]] == oracle
    assert drng.nullspace(robot, branch=1).dim == 26
    capsys.readouterr()
    assert main(["analyze", "parallelogram", "--branch", "1", "--quiet"]) == 0
    assert "nullspace dimension:  26" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore::pga_dyn.errors.PgaDynWarning")
def test_more_branches_than_listed_are_counted_with_the_command(monkeypatch):
    """When more branches meet than drng lists (BRANCHES_REPORTED), the certificate holds their
    number and the one followed, and the text says the command that answers each."""
    import drng.generator

    monkeypatch.setattr(drng.generator, "BRANCHES_REPORTED", 1)
    analysis = drng.analyze(robots.load("parallelogram"))
    report = analysis.report()
    assert report["certificate"]["branch_count"] == 2 and report["certificate"]["branch"] == 0
    assert "branches" not in report["certificate"]
    assert (
        f"2 branches meet there; this is branch 0: pga-dyn analyze {robots.data_path('parallelogram')} --branch K"
        in (analysis.text())
    )


@pytest.mark.parametrize("name", SPINNING)
def test_info_gives_cond_jp_at_q0_with_the_spins_locked(name):
    """pga-dyn info's cond(J_p) at q0 is that of the constraints with the free spins locked (their
    rows make J_f square): the reference's figure, q0 being regular, not inf."""
    from pga_dyn import info

    robot = robots.load(name)
    cond = info.report(robot)["closure"]["cond_jp"]
    assert cond is not None and np.isclose(cond, constraints(robot).cond_ref, rtol=1e-9)
    assert f"cond(J_p) = {cond:.6g}"[:18] in info.text(robot)


@pytest.mark.filterwarnings("ignore::pga_dyn.errors.PgaDynWarning")
def test_info_counts_the_branches_of_a_singular_reference():
    from pga_dyn import info

    lines = info.report(robots.load("parallelogram"))["reference"]
    assert any(
        line.startswith("the reference is singular: 2 assembly branches meet there, branch 0 followed")
        for line in lines
    )
    assert any("--branch K" in line for line in lines)
