"""DRNG against independent oracles: Pinocchio's regressor, the numerical rank, the papers' tables."""

import os
import tempfile

import numpy as np
import pytest
from fixture_oracle import fixture  # noqa: E402
from fixture_oracle import nullity as pinocchio_nullity  # noqa: E402
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import Oracle, numerical_rank, random_states

import drng
import robots
from pga_dyn import tp_regressor as tp
from robots.urdf import load_urdf


def pinocchio_residual(robot, basis, path, samples=40):
    """||Y B||_F / ||Y||_F with Y Pinocchio's stacked regressor mapped to pga-dyn's parameters
    (Y_pga = Y_pin C^-1, C the link-to-eq.(97) parameter map)."""
    oracle = Oracle(robot, path)
    C = np.column_stack([tp.from_link_parameters(robot, e) for e in np.eye(10 * robot.n)])
    Q, QD, QDD = random_states(robot, samples, seed=21)
    Y = np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(samples)]) @ np.linalg.inv(C)
    return np.linalg.norm(Y @ basis) / np.linalg.norm(Y), numerical_rank(Y)[0]


@pytest.mark.parametrize(
    "name,gravity,expected",
    [
        ("puma560", (0.0, 0.0, -9.81), 24),  # DRNG paper Table 3, gravity along the joint-1 axis
        ("puma560", (-9.81, 0.0, 0.0), 22),  # gravity not along joint 1 (paper section 6.1)
        ("go2", (0.0, 0.0, -9.81), 36),  # floating base, Table 3
    ],
)
def test_table3_tree_robots(name, gravity, expected):
    robot = robots.load(name, gravity=gravity)
    result = drng.nullspace(robot, certify=True)
    assert result.dim == expected and result.certified and result.geometric
    residual, rank = pinocchio_residual(robot, result.basis, robots.data_path(name))
    assert residual < 1e-10
    assert rank + result.dim == 10 * robot.n  # Pinocchio's identifiable rank completes it


def test_puma560_counts_per_principle():
    """Section 6.1: 18 shared-point vectors, 4 fixed-point and 2 planar-rotation vectors on link 1."""
    result = drng.nullspace(robots.load("puma560"))
    assert result.counts() == {1: 18, 2: 4, 3: 2}
    assert result.counts("joint")["joint1"] == 3 + 4 + 2


def test_go2_only_shared_points():
    """Section 6.2: a floating base has neither fixed points nor planar rotations: 12 R joints x 3."""
    result = drng.nullspace(robots.load("go2"))
    assert result.counts() == {1: 36} and result.dim == 36


def test_gravity_free_puma_is_proven_with_link2s_fixed_point():
    """Remark 5: without gravity the fixed point of link 2 (where the axes of joints 1 and 2
    meet) adds 2 unidentifiable directions, which the paper's principles miss (24) and the
    generalized rule "fixed point on the axis" gives: 26, proven, equal to Pinocchio's."""
    robot = robots.load("puma560", gravity=(0.0, 0.0, 0.0))
    result = drng.nullspace(robot)
    assert result.proven and result.certified is None and result.dim == 26
    assert result.counts("rule")["fixed point on the axis"] == 2
    assert {e["joint"] for e in result.provenance if e["principle"] == "generalized"} == {"joint2"}
    residual, rank = pinocchio_residual(robot, result.basis, robots.data_path("puma560"))
    assert residual < 1e-10 and rank == 34


# Pinocchio's figures for the URDF+ fixtures of tests/fixtures/, printed by
#     PYTHONPATH=. python tests/fixture_oracle.py
# (rest states closed by Pinocchio's kinematics, rank of Pinocchio's projected regressor); the
# test computes them again before comparing with DRNG's certified dimension.
@pytest.mark.parametrize(
    "name,gravity,expected",
    [
        ("four_bar", (0.0, 0.0, -9.81), 26),
        ("six_bar", (0.0, 0.0, -9.81), 43),
        ("four_bar", (0.0, -9.81, 0.0), 22),
        ("six_bar", (0.0, -9.81, 0.0), 37),
        ("leg_linkage", (0.0, 0.0, -9.81), 29),
        ("leg_linkage", (0.0, -9.81, 0.0), 33),
    ],
)
def test_urdf_plus_fixtures(name, gravity, expected):
    robot = load_urdf(fixture(name), gravity=gravity)
    dim, gap, _ = pinocchio_nullity(robot)
    assert dim == expected and gap > 1e6, (dim, gap)
    result = drng.nullspace(robot, certify=True)
    assert result.dim == expected and result.certified and result.geometric
    assert drng.verify(robot, result.basis)["ok"]


@pytest.mark.parametrize("name,expected", [("2rru_1rrs", 45), ("2prs_1psr", 47)])
def test_table3_parallel_machines(name, expected):
    robot = robots.load(name)
    result = drng.nullspace(robot, certify=True)
    assert result.certified and result.geometric
    assert result.dim == expected, result.certificate


def test_verify_rejects_a_wrong_basis():
    robot = robots.load("puma560")
    basis = drng.nullspace(robot).basis.copy()
    basis[:, 1] += np.eye(60)[:, 19]  # the mass of link 2 (in the spatial assignment) is identifiable
    report = drng.verify(robot, basis)
    assert not report["ok"] and report["residual"] > 1e-6


# -- property tests on random chains ------------------------------------------------------------


def _urdf(joints, gravity_free):
    """URDF text of a random chain or tree. ``joints``: (parent index, type, axis, xyz, rpy, mass props)."""
    links = ['<link name="l0"/>']
    parts = []
    for k, (parent, kind, axis, xyz, rpy, (m, c, d)) in enumerate(joints, start=1):
        links.append(
            f'<link name="l{k}"><inertial><mass value="{m}"/><origin xyz="{c[0]} {c[1]} {c[2]}"/>'
            f'<inertia ixx="{d[0]}" ixy="0.01" ixz="-0.02" iyy="{d[1]}" iyz="0.015" izz="{d[2]}"/></inertial></link>'
        )
        parts.append(
            f'<joint name="j{k}" type="{kind}"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
            f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        )
    return '<robot name="random">' + "".join(links + parts) + "</robot>"


AXES = [(0, 0, 1), (1, 0, 0), (0, 1, 0), (0.6, 0, 0.8), (0.3, -0.5, 0.81)]


@st.composite
def chains(draw):
    n = draw(st.integers(1, 5))
    joints = []
    for k in range(n):
        parent = draw(st.integers(0, k)) if draw(st.booleans()) else k  # serial most of the time
        kind = draw(st.sampled_from(["revolute", "revolute", "prismatic"]))
        axis = draw(st.sampled_from(AXES))
        xyz = draw(st.sampled_from([(0, 0, 0), (0.3, 0, 0), (0, 0.2, 0.1), (0.1, -0.2, 0.3)]))
        rpy = draw(
            st.sampled_from([(0, 0, 0), (1.5707963267948966, 0, 0), (0, 1.5707963267948966, 0), (0.3, 0.2, -0.4)])
        )
        mass = (1.0 + k, (0.05 * k, 0.02, -0.03), (0.3, 0.4, 0.5))
        joints.append((parent, kind, axis, xyz, rpy, mass))
    gravity = draw(st.sampled_from([(0.0, 0.0, -9.81), (0.0, 0.0, 0.0), (3.0, -4.0, -8.0)]))
    floating = draw(st.booleans())
    return joints, gravity, floating


@settings(
    max_examples=int(os.environ.get("PGA_DYN_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(chains())
def test_certified_dimension_equals_pinocchio_rank(case):
    joints, gravity, floating = case
    text = _urdf(joints, gravity == (0.0, 0.0, 0.0))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.urdf")
        with open(path, "w") as handle:
            handle.write(text)
        robot = load_urdf(path, floating_base=floating, gravity=gravity)
        result = drng.nullspace(robot, certify=True, samples=60)
        residual, rank = pinocchio_residual(robot, result.basis, path, samples=60)
    assert result.certified, result.certificate
    assert result.dim + rank == 10 * robot.n, (result.dim, rank, result.certificate)
    assert residual < 1e-9


# -- the RPNA paper's examples through the certificate ---------------------------------------------


def _rpna_cases():
    import rpna_models as rm

    return [  # (model, nullspace dim from the RPNA paper)
        ("2R parallel, no gravity", rm.planar_2r, 16),
        ("2R perpendicular, no gravity", rm.perpendicular_2r, 12),
        ("PUMA 560, gravity along joint 1", rm.puma, 24),
        ("PUMA 560, no gravity", lambda: rm.puma(gravity=rm.NO_GRAVITY), 26),
        ("SCARA RRPR", rm.scara, 32),
        ("Cheetah 3 leg, fixed torso", rm.cheetah_leg, 13),
    ]


@pytest.mark.parametrize("label,build,expected", _rpna_cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_rpna_reference_cases_proven_and_certified(label, build, expected):
    """The RPNA paper's figures: proven by the rules alone, and certified on request."""
    robot = build()
    assert drng.nullspace(robot).dim == expected
    result = drng.nullspace(robot, certify=True)
    assert result.certified and result.proven and result.geometric and result.dim == expected
    assert result.status == "proven and certified"


# -- bad input ------------------------------------------------------------------------------------


def test_bad_arguments_raise_the_project_error():
    from pga_dyn.errors import PgaDynError

    robot = robots.load("puma560")
    with pytest.raises(PgaDynError, match="Robot"):
        drng.nullspace("puma560")
    with pytest.raises(PgaDynError, match="samples"):
        drng.nullspace(robot, certify=True, samples=0)
    with pytest.raises(PgaDynError, match="certificate needs at least 20 samples"):
        drng.nullspace(robot, certify=True, samples=3)  # 18 rows for 60 parameters
    with pytest.raises(PgaDynError, match="basis must be a matrix of shape"):
        drng.verify(robot, np.zeros((59, 3)))
    with pytest.raises(PgaDynError, match="non-finite"):
        drng.verify(robot, np.full((60, 1), np.nan))
    with pytest.raises(PgaDynError, match="samples"):
        drng.numerical_nullspace(robot, samples=2.5)


def test_couplings_are_certified_by_default():
    """The principles do not model couplings: drng.nullspace certifies (and completes) by default."""
    text = (
        open(robots.data_path("puma560"))
        .read()
        .replace(
            '<joint name="joint3" type="revolute">', '<joint name="joint3" type="revolute"><mimic joint="joint2"/>'
        )
    )
    robot = robots.parse_urdf(text, "coupled_puma.urdf")
    assert robot.couplings
    result = drng.nullspace(robot)
    assert result.certified is True and drng.verify(robot, result.basis)["ok"]


@pytest.mark.parametrize("gravity,expected", [((1e-10, 0.0, 0.0), 22), ((0.0, 0.0, -1e-10), 24)])
def test_tiny_gravity_is_gravity(gravity, expected):
    """DRNG and RPNA agree on what counts as gravity: any nonzero vector, its direction relative."""
    robot = robots.load("puma560", gravity=gravity)
    assert drng.nullspace(robot, certify=False).dim == drng.rpna(robot).dim == expected


def test_block_form_results_build_their_dense_basis_only_when_read():
    """drng.nullspace and drng.rpna keep their vectors in block form: dim (24, DRNG paper Table 3),
    status and provenance do not build the dense basis; read, it has that rank and is in the
    nullspace of the sampled regressor."""
    from drng.result import rank

    robot = robots.load("puma560")
    Y = np.vstack(tp.regressor(robot, *random_states(robot, 20, seed=4)))
    for result in (drng.nullspace(robot), drng.rpna(robot)):
        assert (result.dim, result.num_parameters, result.num_vectors) == (24, 60, 24)
        assert len(result.provenance) == 24 and "basis" not in vars(result)
        B = result.basis
        assert B.shape == (60, 24) and rank(B)[0] == 24 and "basis" in vars(result)
        assert np.abs(Y @ B).max() < 1e-10 * np.abs(Y).max() * np.abs(B).max()
    assert "link_basis" not in vars(result)
    np.testing.assert_allclose(tp.link_map(robot) @ result.link_basis, result.basis, atol=1e-12)


def test_counts_by_combination_agree_with_the_provenance():
    """result.counts(("joint", "principle")) counts each (joint, principle) pair of the
    provenance; summed over joints it gives counts("principle")."""
    from collections import Counter

    result = drng.nullspace(robots.load("2rru_1rrs"))
    pairs = result.counts(("joint", "principle"))
    assert pairs == Counter((e["joint"], e["principle"]) for e in result.provenance)
    by_principle = Counter()
    for (_, principle), count in pairs.items():
        by_principle[principle] += count
    assert by_principle == result.counts() and sum(pairs.values()) == len(result.provenance)
