"""RPNA (drng.rpna), the per-parameter classes (drng.classify) and the comparison (drng.compare).

Reference numbers: the RPNA paper's examples (Wensing, Niemeyer, Slotine 2024) and its figures.
Each model is checked three ways: the RPNA's figures against the paper, the RPNA subspace
against the numerical nullspace (random samples + SVD) and against the certified DRNG subspace.
"""

import numpy as np
import pytest
import rpna_models as rm

import drng
import drng.rpna_algorithms as rpna_module  # noqa: E402
import robots
from drng.classification import ALONE, COMBINATION, UNIDENTIFIABLE, Row
from drng.comparison import ANGLE_TOL, largest_angle
from pga_dyn.conventions import LINK_PARAM_NAMES
from pga_dyn.errors import PgaDynError
from pga_dyn.model import Inertial, JointSpec, LinkSpec, LoopSpec, Robot
from pga_dyn.tp_regressor import from_link_parameters, link_map

# name -> (builder, identifiable, nullspace)
MODELS = {
    "2r_parallel": (rm.planar_2r, 4, 16),
    "2r_perpendicular": (rm.perpendicular_2r, 8, 12),
    "puma": (rm.puma, 36, 24),
    "puma_no_gravity": (lambda: rm.puma(rm.NO_GRAVITY), 34, 26),
    "puma_gravity_x": (lambda: rm.puma((9.81, 0.0, 0.0)), 38, 22),
    "scara": (rm.scara, 8, 32),
    "cheetah_leg_fixed": (rm.cheetah_leg, 17, 13),
    "cheetah_leg_floating": (lambda: rm.cheetah_leg(True), 31, 9),  # torso + leg; 21 for the leg bodies
    "puma560_gravity_z": (lambda: robots.load("puma560"), 36, 24),
    "puma560_gravity_x": (lambda: robots.load("puma560", gravity=(9.81, 0.0, 0.0)), 38, 22),
    "go2": (lambda: robots.load("go2"), 94, 36),
}

_cache = {}


def build(name):
    if name not in _cache:
        _cache[name] = MODELS[name][0]()
    return _cache[name]


def rpna_of(name):
    key = ("rpna", name)
    if key not in _cache:
        _cache[key] = drng.rpna(build(name))
    return _cache[key]


def numerical_of(name):
    key = ("numerical", name)
    if key not in _cache:
        _cache[key] = drng.numerical_nullspace(build(name))
    return _cache[key]


# -- dimensions and per-body figures ------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_dimensions(name):
    _, identifiable, null = MODELS[name]
    result = rpna_of(name)
    assert result.method == "rpna"
    assert result.basis.shape == (10 * build(name).n, null)
    assert (result.dim, result.num_base_parameters) == (null, identifiable)
    # the nullspace is the direct sum of the transfer subspaces: dim = sum of dim T_i
    assert sum(result.dim_T) == null
    assert result.certificate["dim_T"] == list(result.dim_T)


def test_cheetah_floating_leg_bodies():
    """The paper's 21 for the floating Cheetah leg counts the leg bodies: the identifiable
    combinations each body adds, rank N_i = 10 - dim T_i, summed over the three leg bodies.
    The torso (body 1, floating joint) has T_1 = {0}: all its 10 parameters are identifiable."""
    result = rpna_of("cheetah_leg_floating")
    assert result.bodies == ("torso", "link1", "link2", "link3")
    assert result.dim_T == (0, 3, 3, 3)
    assert result.rank_N[0] == 10
    assert sum(result.rank_N[1:]) == 21
    assert result.num_base_parameters == 31


def test_floating_base_gains_nothing_from_gravity():
    """RPNA Remark 9: on a floating base the nullspace is the same with and without gravity."""
    with_g = rpna_of("cheetah_leg_floating")
    without = drng.rpna(rm.cheetah_leg(True, gravity=rm.NO_GRAVITY))
    assert without.dim == with_g.dim == 9
    assert largest_angle(without.basis, with_g.basis) < ANGLE_TOL
    fixed_without = drng.rpna(rm.cheetah_leg(gravity=rm.NO_GRAVITY))
    assert fixed_without.dim > rpna_of("cheetah_leg_fixed").dim  # a fixed base does gain


# (dim V_i with the gravity seed, dim K_i, dim T_i): the RPNA paper's Tables 2, 4, 5 (values in
# parentheses where gravity matters)
FIGURES = {
    "puma": ((2, 5, 6, 6, 6, 6), (1, 8, 10, 10, 10, 10), (9, 3, 3, 3, 3, 3)),
    "puma560_gravity_z": ((2, 5, 6, 6, 6, 6), (1, 8, 10, 10, 10, 10), (9, 3, 3, 3, 3, 3)),
    "puma_no_gravity": ((1, 3, 6, 6, 6, 6), (1, 6, 10, 10, 10, 10), (9, 5, 3, 3, 3, 3)),
    "scara": ((2, 4, 4, 4), (1, 4, 4, 4), (9, 7, 9, 7)),
    "cheetah_leg_fixed": ((3, 6, 6), (3, 9, 10), (7, 3, 3)),
    "cheetah_leg_floating": ((6, 6, 6, 6), (10, 10, 10, 10), (0, 3, 3, 3)),
    "2r_parallel": ((1, 3), (1, 4), (9, 7)),
    "2r_perpendicular": ((1, 4), (1, 8), (9, 3)),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_per_body_figures(name):
    result = rpna_of(name)
    assert (result.dim_V, result.dim_K, result.dim_T) == FIGURES[name]
    assert all(r == 10 - t for r, t in zip(result.rank_N, result.dim_T))
    assert all(np.linalg.matrix_rank(N, tol=1e-10 * np.abs(N).max()) == r for N, r in zip(result.N, result.rank_N))


# -- the subspaces --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_subspace_equals_numerical_and_drng(name):
    robot = build(name)
    result = rpna_of(name)
    numeric = numerical_of(name)
    assert numeric.dim == result.dim
    assert largest_angle(result.basis, numeric.basis) < ANGLE_TOL
    certified = drng.nullspace(robot, certify=True)
    assert certified.certified
    assert largest_angle(result.basis, certified.basis) < ANGLE_TOL


@pytest.mark.parametrize("name", ["puma", "scara", "cheetah_leg_floating", "go2"])
def test_descriptor_spans_the_identifiable_subspace(name):
    """Appendix G: Null(N) is the nullspace (in link parameters) and the rows of N span the row
    space of the regressor written in link parameters, Y F."""
    robot = build(name)
    result = rpna_of(name)
    D, L = result.descriptor, result.link_basis
    n10 = 10 * robot.n
    assert np.abs(D @ L).max() < 1e-10 * np.abs(D).max() * np.abs(L).max()
    assert np.linalg.matrix_rank(D) + result.dim == n10
    F = link_map(robot)
    assert np.allclose(F @ L, result.basis)
    from drng.numerical import stacked_regressor

    Y = stacked_regressor(robot, 60, seed=3)[0] @ F
    r = np.linalg.matrix_rank(Y, tol=1e-9 * np.abs(Y).max())
    assert r == n10 - result.dim
    both = np.vstack([Y / np.abs(Y).max(), D / np.abs(D).max()])
    assert np.linalg.matrix_rank(both, tol=1e-9) == r


def test_residual_on_fresh_samples():
    """Y B = 0 for the RPNA basis on samples the numerical method did not use."""
    from drng.numerical import stacked_regressor

    for name in ("puma560_gravity_x", "cheetah_leg_floating", "scara"):
        robot = build(name)
        Y = stacked_regressor(robot, 50, seed=11)[0]
        B = rpna_of(name).basis
        assert np.linalg.norm(Y @ B) / (np.linalg.norm(Y) * np.linalg.norm(B)) < 1e-12


def test_printed_transform_sign_is_detected():
    """The journal's eq. (66) prints +R S(p). With that sign the PUMA nullspace keeps its
    dimension (24) but is the wrong subspace: the angle test must catch it."""
    robot = rm.puma(seed=8)
    good = drng.rpna(robot)
    original = rpna_module.xform

    def printed(pose):
        X = original(pose)
        X[3:, :3] *= -1.0
        return X

    rpna_module.xform = printed
    try:
        bad = drng.rpna(robot)
    finally:
        rpna_module.xform = original
    assert bad.dim == good.dim == 24
    assert largest_angle(bad.basis, good.basis) > 0.1


def _mixed_tree(gravity):
    """A tree with every joint type RPNA takes on a fixed base: R, U (split through a virtual
    body), P, S, at generic placements."""
    from pga_dyn.kinematics import so3_exp

    def pose(axis, angle, p):
        t = np.eye(4)
        t[:3, :3] = so3_exp(angle * np.asarray(axis, float) / np.linalg.norm(axis))
        t[:3, 3] = p
        return t

    rng = np.random.default_rng(7)
    links = [LinkSpec("base")] + [LinkSpec(f"l{k}", rm.random_inertial(rng)) for k in range(1, 6)]
    joints = [
        JointSpec("j1", "R", "base", "l1", pose([1, 2, 3], 0.4, [0.1, 0.2, 0.3]), np.array([[0, 0, 1.0]])),
        JointSpec("j2", "U", "l1", "l2", pose([0, 1, 1], 0.7, [0.3, 0.0, 0.1]), np.array([[1, 0, 0.0], [0, 1, 0.0]])),
        JointSpec("j3", "P", "l2", "l3", pose([1, 0, 1], 0.2, [0.2, 0.1, 0.0]), np.array([[0, 1, 1.0]])),
        JointSpec("j4", "S", "l1", "l4", pose([1, 1, 0], 0.5, [0.0, 0.3, 0.1])),
        JointSpec("j5", "R", "l4", "l5", pose([0, 0, 1], 0.3, [0.2, 0.0, 0.0]), np.array([[1, 0, 0.0]])),
    ]
    return Robot("mixed", links, joints, gravity=gravity)


@pytest.mark.parametrize("gravity,null", [((0.0, 0.0, -9.81), 18), ((0.0, 0.0, 0.0), 20)])
def test_all_joint_types(gravity, null):
    """Behind the U joint too the basis is in block form, each vector on a body and its parent
    (the virtual body cleared joint by joint); it spans the numerical nullspace (oracle) and
    link_basis maps onto basis."""
    robot = _mixed_tree(gravity)
    result = drng.rpna(robot)
    assert result.bodies == ("l1", "l2#U1", "l2", "l3", "l4", "l5")
    _, bodies, _ = result.blocks
    assert "basis" not in vars(result) and np.all(bodies[:, 1] == robot.parent[bodies[:, 0]])
    numeric = drng.numerical_nullspace(robot)
    assert result.dim == numeric.dim == null
    assert largest_angle(result.basis, numeric.basis) < ANGLE_TOL
    np.testing.assert_allclose(link_map(robot) @ result.link_basis, result.basis, atol=1e-12)


def test_u_chain_is_blockwise_and_equals_drng():
    """A 40-body chain of alternating R and U joints: RPNA's block-form basis spans DRNG's (an
    independent method, proven on trees) and has Pinocchio's dimension."""
    from random_trees import AXES, pinocchio_nullspace, tree

    from drng.result import rank

    joints = [
        (
            k,
            "U" if k % 2 else "R",
            [AXES[k % 5], AXES[(k + 2) % 5]] if k % 2 else [AXES[(k + 3) % 5]],
            (0.1 * (k % 3), 0.2, 0.05 * (k % 4)),
            (0.3, 0.2 * (k % 2), -0.4),
        )
        for k in range(40)
    ]
    robot = tree(joints, name="RU chain")
    result, proven = drng.rpna(robot), drng.nullspace(robot)
    assert result.dim == proven.dim == pinocchio_nullspace(robot)[0]
    assert rank(np.hstack([result.basis, proven.basis]))[0] == result.dim


def test_rejects_loops_and_couplings():
    links = [LinkSpec(name, Inertial(1.0, np.zeros(3), np.eye(3) * 0.01)) for name in ("base", "a", "b", "c")]
    z = np.array([[0.0, 0.0, 1.0]])
    shift = np.eye(4)
    shift[0, 3] = 1.0
    joints = [
        JointSpec("ja", "R", "base", "a", np.eye(4), z),
        JointSpec("jb", "R", "a", "b", shift, z),
        JointSpec("jc", "R", "base", "c", shift, z),
    ]
    loop = Robot("four_bar_like", links, joints, loops=[LoopSpec("close", "R", "b", "c", shift, shift, z)])
    with pytest.raises(PgaDynError, match="four_bar_like"):
        drng.rpna(loop)
    mimic = [
        JointSpec("ja", "R", "base", "a", np.eye(4), z),
        JointSpec("jb", "R", "a", "b", shift, z, mimic=("ja", 2.0, 0.0)),
    ]
    coupled = Robot("mimic_pair", links[:3], mimic)
    with pytest.raises(PgaDynError, match="mimic_pair"):
        drng.rpna(coupled)


def test_functions_after_module_import():
    """drng.rpna / classify / compare stay functions when their modules are imported."""
    import drng.classification  # noqa: F401
    import drng.comparison  # noqa: F401
    import drng.rpna_algorithms  # noqa: F401

    robot = rm.pendulum()
    assert drng.rpna(robot).dim == 7
    assert len(drng.classify(robot)) == 10
    assert drng.compare(robot, samples=20).agree


# -- classification -----------------------------------------------------------------------------


def independent_classes(robot, result):
    """Classes computed here from a nullspace basis by rank tests, without drng.classify:
    the link-parameter nullspace is F^-1 Null(Y); e_k is unidentifiable when appending it
    keeps the rank, identifiable alone when row k of the basis is zero."""
    n = robot.n
    F = np.zeros((10 * n, 10 * n))
    for c in range(10 * n):
        e = np.zeros(10 * n)
        e[c] = 1.0
        F[:, c] = from_link_parameters(robot, e)
    L = np.linalg.solve(F, result.basis)
    L = L / np.linalg.norm(L, axis=0)
    r = np.linalg.matrix_rank(L, tol=1e-8)
    out = {}
    for b, body in enumerate(robot.body_names):
        for k, p in enumerate(LINK_PARAM_NAMES):
            c = 10 * b + k
            e = np.zeros((10 * n, 1))
            e[c] = 1.0
            if np.linalg.matrix_rank(np.hstack([L, e]), tol=1e-8) == r:
                out[(body, p)] = UNIDENTIFIABLE
            elif np.abs(L[c]).max() < 1e-8:
                out[(body, p)] = ALONE
            else:
                out[(body, p)] = COMBINATION
    return out


def as_dict(rows):
    return {(r.body, r.parameter): r.cls for r in rows}


@pytest.mark.parametrize(
    "name", ["2r_parallel", "2r_perpendicular", "puma", "puma_no_gravity", "cheetah_leg_floating", "puma560_gravity_x"]
)
def test_classify_matches_independent_numerical(name):
    robot = build(name)
    rows = drng.classify(robot)  # from the RPNA
    assert all(isinstance(r, Row) for r in rows) and len(rows) == 10 * robot.n
    expected = independent_classes(robot, numerical_of(name))
    assert as_dict(rows) == expected
    # classify works from any result: the numerical and the DRNG ones give the same classes
    assert as_dict(drng.classify(robot, numerical_of(name))) == expected
    assert as_dict(drng.classify(robot, drng.nullspace(robot, certify=True))) == expected


def test_classify_pendulum_by_hand():
    """One link about the fixed z axis through its frame origin. tau = Izz qdd + g-terms: with
    gravity along -y the torque is Izz qdd - g (mcx cos q - mcy sin q)-like, so Izz, mcx, mcy
    are each identifiable alone and the other 7 parameters never appear; with gravity along the
    axis only Izz remains."""
    rows = as_dict(drng.classify(rm.pendulum()))
    alone = {p for (_, p), c in rows.items() if c == ALONE}
    assert alone == {"mcx", "mcy", "Izz"}
    assert {p for (_, p), c in rows.items() if c == UNIDENTIFIABLE} == set(LINK_PARAM_NAMES) - alone
    rows = as_dict(drng.classify(rm.pendulum(gravity=(0.0, 0.0, -9.81))))
    assert {p for (_, p), c in rows.items() if c == ALONE} == {"Izz"}
    assert sum(c == UNIDENTIFIABLE for c in rows.values()) == 9


def test_classify_2r_parallel_by_hand():
    """RPNA paper section 4.5.1: the mass matrix holds Izz1 + m2 l^2, Izz2, hx2, hy2."""
    rows = as_dict(drng.classify(build("2r_parallel")))
    assert rows[("link1", "Izz")] == rows[("link2", "m")] == COMBINATION
    assert rows[("link2", "mcx")] == rows[("link2", "mcy")] == rows[("link2", "Izz")] == ALONE
    assert sum(c == UNIDENTIFIABLE for c in rows.values()) == 15


# The RPNA paper's tables (* alone, o in combination (its filled and open circles), x
# unidentifiable), rows in the paper's order m, mcx, mcy, mcz, Ixx, Iyy, Izz, Iyz, Ixz, Ixy.
PAPER_ORDER = ("m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Iyz", "Ixz", "Ixy")
PAPER_TABLES = {
    "puma": ["xxoooo", "xoo***", "x*ooo*", "xxoooo", "xooooo", "xooooo", "ooooo*", "x*****", "xo****", "x*o***"],
    "scara": ["xooo", "xoo*", "xoo*", "xxxx", "xxxx", "xxxx", "ooo*", "xxxx", "xxxx", "xxxx"],
    "cheetah_leg_fixed": ["xoo", "*o*", "o**", "xoo", "xoo", "xoo", "oo*", "x**", "xo*", "x**"],
    # Table 5, free case, leg bodies only
    "cheetah_leg_floating": ["ooo", "*o*", "o**", "ooo", "ooo", "ooo", "oo*", "***", "***", "***"],
}
SYMBOL = {"*": ALONE, "o": COMBINATION, "x": UNIDENTIFIABLE}


@pytest.mark.parametrize("name", list(PAPER_TABLES))
def test_classify_reproduces_paper_tables(name):
    robot = build(name)
    rows = as_dict(drng.classify(robot))
    bodies = [b for b in robot.body_names if b != "torso"]
    paper = {(b, p): SYMBOL[line[k]] for p, line in zip(PAPER_ORDER, PAPER_TABLES[name]) for k, b in enumerate(bodies)}
    differ = {key for key in paper if rows[key] != paper[key]}
    if name == "cheetah_leg_floating":
        # Table 5 marks the hip's Ixz as identifiable alone in the free case (and in combination
        # in the fixed case, with the same dim T_3 = 3 rod transfers across the knee). A rod along
        # the knee axis, offset 0.342 m along x2, carries Ixz2 = -0.342 hz: in combination. The
        # numerical classification agrees (test_classify_matches_independent_numerical).
        assert differ == {("link2", "Ixz")}
        assert rows[("link2", "Ixz")] == COMBINATION
    else:
        assert differ == set()


# -- compare ------------------------------------------------------------------------------------


def test_largest_angle():
    e = np.eye(4)
    theta = 1e-3
    rotated = np.column_stack([e[:, 0], np.cos(theta) * e[:, 1] + np.sin(theta) * e[:, 2]])
    assert largest_angle(e[:, :2], rotated) == pytest.approx(theta, rel=1e-9)
    assert largest_angle(e[:, :2], e[:, :3]) == pytest.approx(np.pi / 2)
    assert largest_angle(e[:, :2], e[:, [1, 0]] * 3.0) < 1e-15


def test_compare():
    comparison = drng.compare(build("puma"))
    assert comparison.dims == {"drng": 24, "rpna": 24, "numerical": 24}
    assert comparison.agree
    assert set(comparison.angles) == {("drng", "rpna"), ("drng", "numerical"), ("rpna", "numerical")}
    text = str(comparison)
    assert "agree" in text and "DISAGREE" not in text and "rpna" in text
    # without gravity the paper's principles miss two PUMA vectors (DRNG Remark 5); the
    # generalized rules do not: no numerical completion
    comparison = drng.compare(build("puma_no_gravity"))
    assert comparison.agree and comparison.dims == {"drng": 26, "rpna": 26, "numerical": 26}
    assert not comparison.notes
    # couplings: RPNA is skipped, the rules fall short and the certificate completes them, and says so
    text = (
        open(robots.data_path("puma560"))
        .read()
        .replace(
            '<joint name="joint3" type="revolute">', '<joint name="joint3" type="revolute"><mimic joint="joint2"/>'
        )
    )
    comparison = drng.compare(robots.parse_urdf(text, "coupled_puma.urdf"), samples=60)
    assert comparison.agree and "rpna" not in comparison.dims
    assert any("completed numerically" in note for note in comparison.notes)


def test_compare_detects_disagreement(monkeypatch):
    robot = build("2r_parallel")
    real = rpna_module.rpna

    def short(r):
        result = real(r)
        result.basis = result.basis[:, 1:]
        return result

    monkeypatch.setattr(rpna_module, "rpna", short)
    comparison = drng.compare(robot, samples=40)
    assert not comparison.agree
    assert comparison.dims["rpna"] == 15
    assert "DISAGREE" in str(comparison)
