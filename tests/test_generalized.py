"""The generalized principles (drng/principles.py) against independent oracles.

* Random trees as users build them (tests/random_trees.py: R, P, U, S joints, floating bases,
  parallel, perpendicular, intersecting, skew and coaxial axes, gravity none, along z or skew):
  the rules alone give exactly Pinocchio's count of unidentifiable parameters (10 n minus the
  rank of its joint-torque regressor stacked over random states), as a basis (count = rank) in
  the nullspace of Pinocchio's regressor (criteria 101), and RPNA's transfer-space dimension
  at every joint. ``PGA_DYN_EXAMPLES`` sets the number of trees (default 40; the full run of
  docs/drng.md used 1000).
* The readable twin (drng/rules.py, fixed points and invariant lines from the velocity spans)
  gives the same vectors rule by rule.
* The smallest examples of the five families that the paper's principles miss, the gravity-free
  Puma560 and a gantry, each against Pinocchio; two trees on which RPNA's former tolerance failed.
* Status: trees proven without sampling, loops and couplings certified; the parallelogram
  four-bar (whose closure keeps bodies parallel: fixed elements no local rule sees) certified
  through the sampled completion, against the analytic parallelogram branch in Pinocchio.
"""

import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import TreeOracle, numerical_rank
from random_trees import describe, pinocchio_nullspace, random_tree, tree

import drng
import robots
from drng import principles as pr
from drng.generator import drng_blocks
from drng.rules import rule_vectors
from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot

EXAMPLES = int(os.environ.get("PGA_DYN_EXAMPLES", "40"))


@st.composite
def trees(draw):
    return random_tree(lambda options: draw(st.sampled_from(options)))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(0, 2**16))
def test_rules_alone_equal_pinocchio_and_rpna(robot, seed):
    null, gap, Y = pinocchio_nullspace(robot, seed)
    assert gap > 1e6, describe(robot)
    result = drng.nullspace(robot)
    assert result.status == "proven" and result.certified is None and not result.certificate
    assert result.basis.shape[1] == result.dim == null, describe(robot)  # a basis of the whole nullspace
    report = drng.verify(robot, result.basis, Y=Y)  # criteria (101) with Pinocchio's regressor
    assert report["ok"], (report, describe(robot))
    rp = drng.rpna(robot)
    per_joint = Counter(int(j) for j, _ in result.codes)
    assert rp.dim == null and rp.joint_dim_T == tuple(per_joint[i] for i in range(1, robot.n + 1)), describe(robot)


@settings(max_examples=3 * EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_kernel_equals_its_readable_twin_rule_by_rule(robot):
    """For every (joint, rule code): the kernel's vectors (child blocks; the parent block is
    their negative) span the twin's."""
    bodies, vals, prov = drng_blocks(robot)
    kernel, twin = {}, {}
    for k, (joint, code) in enumerate(prov):
        slot = 0 if bodies[k, 0] == joint else 1
        assert bodies[k, 1 - slot] == robot.parent[joint]
        assert np.allclose(vals[k, 1 - slot], -vals[k, slot]) or robot.parent[joint] == 0
        kernel.setdefault((joint, code), []).append(vals[k, slot])
    for joint, code, child, parent, v in rule_vectors(robot):
        twin.setdefault((joint, code), []).append(v)
    assert set(kernel) == set(twin), describe(robot)
    for key, vectors in kernel.items():
        A, B = np.array(vectors).T, np.array(twin[key]).T
        assert np.linalg.matrix_rank(np.hstack([A, B]), tol=1e-8) == A.shape[1] == B.shape[1], (key, describe(robot))


# -- regression: the families the paper's principles miss -----------------------------------------
X, Y_, Z, D = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.6, 0.0, 0.8)
O3, FLAT = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
NONE, ALONG_Z = (0.0, 0.0, 0.0), (0.0, 0.0, -9.81)

# name, joints (parent, type, axes, offset, turn), gravity, the paper's principles, the truth, rule codes
FAMILIES = [
    (
        "F1 Rx-Ry, axes meet, g = 0",
        [(0, "R", [X], O3, FLAT), (1, "R", [Y_], O3, FLAT)],
        NONE,
        12,
        14,
        {pr.AXIS_POINT: 1, pr.AXIS_POINT + 1: 1},
    ),
    (
        "F2 Px-Py",
        [(0, "P", [X], O3, FLAT), (1, "P", [Y_], (0.2, 0.1, 0.0), FLAT)],
        ALONG_Z,
        15,
        18,
        {pr.TRANSLATING: 1, pr.TRANSLATING + 1: 1, pr.TRANSLATING + 2: 1},
    ),
    (
        "F3 Pz-Rz, g along z",
        [(0, "P", [Z], O3, FLAT), (1, "R", [Z], (0.3, 0.0, 0.0), FLAT)],
        ALONG_Z,
        16,
        18,
        {pr.AXIS_LINE: 1, pr.AXIS_LINE + 1: 1},
    ),
    (
        "F3 coaxial Rz-Rz, g = 0",
        [(0, "R", [Z], O3, FLAT), (1, "R", [Z], (0.0, 0.0, 0.4), FLAT)],
        NONE,
        16,
        18,
        {pr.AXIS_LINE: 1, pr.AXIS_LINE + 1: 1},
    ),
    ("F4 U(z, x) on the base, g along z", [(0, "U", [Z, X], (0.1, 0.2, 0.0), FLAT)], ALONG_Z, 1, 2, {pr.FIRST_AXIS: 1}),
    (
        "F5 Rz, S on the axis, g = 0",
        [(0, "R", [Z], O3, FLAT), (1, "S", [], (0.0, 0.0, 0.4), FLAT)],
        NONE,
        10,
        13,
        {pr.CENTRE + k: 1 for k in range(3)},
    ),
    (
        "gantry PPP-R",
        [
            (0, "P", [X], O3, FLAT),
            (1, "P", [Y_], O3, FLAT),
            (2, "P", [Z], O3, FLAT),
            (3, "R", [D], (0.1, 0.0, 0.2), FLAT),
        ],
        ALONG_Z,
        28,
        34,
        {pr.TRANSLATING + k: 2 for k in range(3)},
    ),
]


@pytest.mark.parametrize("name,joints,gravity,paper,truth,new", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_families_the_paper_misses(name, joints, gravity, paper, truth, new):
    """``truth``: Pinocchio's count; ``new``: the vectors of the new rules, by code; the others
    coincide with the paper's equations and are as many as its three principles give (``paper``:
    the former kernel's figures, those of the design note)."""
    robot = tree(joints, gravity, name=name)
    null, gap, Y = pinocchio_nullspace(robot)
    assert gap > 1e6 and null == truth
    result = drng.nullspace(robot)
    assert result.dim == result.basis.shape[1] == truth and drng.verify(robot, result.basis, Y=Y)["ok"]
    assert Counter(int(code) for _, code in result.codes if pr.RULES[code].equation is None) == new
    assert sum(pr.RULES[code].equation is not None for _, code in result.codes) == paper


def test_puma560_without_gravity():
    robot = robots.load("puma560", gravity=NONE)
    null, gap, Y = pinocchio_nullspace(robot)
    result = drng.nullspace(robot)
    assert gap > 1e6 and null == result.dim == result.basis.shape[1] == 26 and result.status == "proven"
    assert drng.verify(robot, result.basis, Y=Y)["ok"]


# Two random trees on which RPNA's former rank decisions (unit-norm columns, then 1e-10) failed:
# descriptor singular values of 1.9e-9 and 5.1e-10 made of rescaled round-off (28 for 30, 40 for 41).
TURNED, PITCHED = (0.3, 0.2, -0.4), (0.0, np.pi / 2, 0.0)
RPNA_CASES = [
    (
        [
            (0, "R", [D], (0.0, 0.2, 0.1), PITCHED),
            (1, "P", [D], (0.0, 0.0, 0.4), PITCHED),
            (2, "P", [X], O3, TURNED),
            (3, "P", [Y_], (0.1, -0.2, 0.3), (np.pi / 2, 0.0, 0.0)),
        ],
        30,
    ),
    (
        [
            (0, "S", [], (0.1, -0.2, 0.3), PITCHED),
            (0, "P", [X], O3, TURNED),
            (2, "P", [(0.48, -0.6, 0.64)], O3, PITCHED),
            (3, "P", [D], O3, TURNED),
            (4, "P", [(0.48, -0.6, 0.64)], (0.3, 0.0, 0.0), FLAT),
            (5, "U", [(0.48, -0.6, 0.64), Z], (0.1, -0.2, 0.3), PITCHED),
        ],
        41,
    ),
]


@pytest.mark.parametrize("joints,truth", RPNA_CASES)
def test_rpna_relative_tolerance(joints, truth):
    robot = tree(joints, NONE)
    assert pinocchio_nullspace(robot)[0] == truth
    assert drng.rpna(robot).dim == drng.nullspace(robot).dim == truth


# -- status: proven, certified ------------------------------------------------------------------


def test_tree_is_proven_and_certified_on_request():
    robot = robots.load("puma560", gravity=NONE)
    proven = drng.nullspace(robot)
    assert proven.proven and proven.certified is None and proven.trusted and "proven" in repr(proven)
    checked = drng.nullspace(robot, certify=True, samples=40)
    assert checked.status == "proven and certified" and checked.certificate["rank_numerical"] == 34
    assert drng.nullspace(robot, certify=False).status == "proven"


def test_loops_and_couplings_are_certified():
    robot = robots.load("2rru_1rrs")
    assert drng.nullspace(robot).status == "certified"
    unchecked = drng.nullspace(robot, certify=False)
    assert unchecked.status == "not certified" and not unchecked.trusted and not unchecked.proven
    assert unchecked.dim == unchecked.basis.shape[1] == 45  # the loop joints' dependent vectors are dropped


def _shift(x):
    t = np.eye(4)
    t[0, 3] = x
    return t


def parallelogram(gravity):
    """A four-bar with crank 0.5, coupler 1, rocker 0.5, ground 1, flat at q0 (all pivots on the
    x axis), every joint about z; the crank is actuated."""
    z = np.array([[0.0, 0.0, 1.0]])
    rng = np.random.default_rng(3)
    links = [LinkSpec("ground")] + [
        LinkSpec(name, Inertial(1.0 + k, rng.uniform(-0.1, 0.1, 3), np.diag(rng.uniform(0.01, 0.05, 3))))
        for k, name in enumerate(("crank", "coupler", "rocker"))
    ]
    joints = [
        JointSpec("crank_joint", "R", "ground", "crank", _shift(0.0), z),
        JointSpec("coupler_joint", "R", "crank", "coupler", _shift(0.5), z, independent=False),
        JointSpec("rocker_joint", "R", "ground", "rocker", _shift(1.0), z, independent=False),
    ]
    loops = [LoopSpec("close", "R", "coupler", "rocker", _shift(1.0), _shift(0.5), z)]
    return Robot("parallelogram", links, joints, loops=loops, gravity=gravity)


def parallelogram_branch_nullity(robot, samples=40, seed=0):
    """Pinocchio's count on the parallelogram branch, written analytically: q = (t, -t, t)
    (the coupler keeps its orientation, the rocker turns with the crank), checked closed by the
    oracle's residual; rest states with qdd along the branch, N = (1, -1, 1) (see
    tests/fixture_oracle.py: rest states suffice)."""
    oracle = TreeOracle(robot)
    rng = np.random.default_rng(seed)
    N = np.array([1.0, -1.0, 1.0])
    rows = []
    for t in rng.uniform(-np.pi, np.pi, samples):
        q = np.array([t, -t, t])
        assert np.abs(oracle.residual(oracle.configuration(q))).max() < 1e-12
        rows.append(N @ oracle.regressor(q, np.zeros(3), N * rng.normal()))
    rank, gap = numerical_rank(np.vstack(rows))
    return 10 * robot.n - rank, gap


@pytest.mark.parametrize("gravity,truth", [(ALONG_Z, 29), ((0.0, -9.81, 0.0), 27), (NONE, 29)])
def test_parallelogram_four_bar_is_certified_through_the_completion(gravity, truth):
    """The closure keeps the coupler parallel to the ground and the crank parallel to the rocker:
    fixed elements that no local rule sees (the rules give 26 / 22 / 26, valid but short); the
    certificate completes them on the branch that the samples follow from the flat q0."""
    robot = parallelogram(gravity)
    dim, gap = parallelogram_branch_nullity(robot)
    assert gap > 1e6 and dim == truth
    rules = drng.nullspace(robot, certify=False)
    assert rules.dim == rules.basis.shape[1] == {29: 26, 27: 22}[truth]
    result = drng.nullspace(robot)
    assert result.certified and not result.geometric and result.dim == truth and result.status == "certified"


def test_rule_codes_name_their_rules():
    """The named codes of drng.principles point at the rules and equations they stand for."""
    expected = {
        pr.SHARED_SELF: ("shared points", "60"),
        pr.SHARED_PAIR: ("shared points", "62"),
        pr.CENTRE_BASE: ("fixed centre", "72a"),
        pr.SLIDER_BASE: ("fixed directions", "73a"),
        pr.AXIS_LINE_BASE: ("fixed axis line", "74a"),
        pr.AXIS_DIRECTION_BASE: ("fixed axis direction", "74c"),
        pr.PLANAR: ("planar rotation", "83a"),
        pr.AXIS_DIRECTION: ("fixed axis direction", "83c"),
        pr.SLIDER_TURNING: ("fixed directions", "84"),
        pr.AXIS_POINT: ("fixed point on the axis", None),
        pr.AXIS_LINE: ("fixed axis line", None),
        pr.TRANSLATING: ("translating parent", None),
        pr.CENTRE: ("fixed centre", None),
        pr.FIRST_AXIS: ("fixed first axis", None),
        pr.FREE_SPIN: ("free spin", None),
    }
    assert {code: (pr.RULES[code].name, pr.RULES[code].equation) for code in expected} == expected
    assert pr.RULES[pr.SLIDER_TURNING + 2].equation == "90" and len(pr.RULES) == pr.FREE_SPIN + 1
    assert all((rule.equation is None) == (rule.principle == "generalized") for rule in pr.RULES)


def test_loop_vectors_that_repeat_the_tree_are_dropped():
    """The fixture four-bar turns about parallel axes: its loop joint's sym(z) and sym(O, z)
    transfers are sums of the tree's (28 vectors of rank 26); the output keeps a basis."""
    from paths import FOUR_BAR

    from drng.generator import kernel_arrays
    from drng.principles import dense_basis, drng_kernel

    robot = robots.load_urdf(FOUR_BAR)
    bodies, vals, _ = drng_kernel(*kernel_arrays(robot))
    raw = dense_basis(robot.n, bodies, vals)
    assert raw.shape[1] == 28 and np.linalg.matrix_rank(raw, tol=1e-9 * np.abs(raw).max()) == 26
    result = drng.nullspace(robot, certify=False)
    assert result.basis.shape[1] == result.dim == 26
    assert np.linalg.matrix_rank(np.hstack([raw, result.basis]), tol=1e-9 * np.abs(raw).max()) == 26
