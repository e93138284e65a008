"""Hardened against bad input: mutated robot files through every public entry point
(tests/fuzz_cases.py), and one regression test per exception the fuzzing found.

Only PgaDynError may escape ``robots.load_urdf``, ``drng.nullspace``, ``pga_dyn.regressor``,
``sample_states``, ``drng.numerical_nullspace``, ``drng.rpna``, ``drng.base_parameters``,
``drng.classify`` and ``pga-dyn analyze`` (which exits non-zero with a one-line message), and no
NaN or inf reaches a result. ``benchmarks/fuzz.py`` runs 5,000 cases (docs/robots.md).
"""

import warnings

import numpy as np
import pytest
from fuzz_cases import random_case, run_case, tree_urdf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import FOUR_BAR
from random_trees import random_tree

import drng
import robots
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot
from pga_dyn.sampling import sample_states

CHAIN = """<robot name="chain">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/>
  </inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0.02 0"/><mass value="2"/>
  <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>
  <axis xyz="0 1 0"/><mimic joint="j1" multiplier="RATIO"/></joint>
</robot>"""


FUZZ = {"deadline": None, "derandomize": True, "suppress_health_check": list(HealthCheck)}


@settings(max_examples=50, **FUZZ)
@given(data=st.data())
def test_fuzz_only_pga_dyn_errors_and_finite_results(data, tmp_path_factory):
    """Valid files and their mutations: every entry point answers with finite numbers or
    refuses with a PgaDynError; the CLI prints one message, no traceback."""
    fuzz(data, tmp_path_factory)


@pytest.mark.slow
@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_fuzz_300_cases(data, tmp_path_factory):
    """The same on 300 cases."""
    fuzz(data, tmp_path_factory)


def fuzz(data, tmp_path_factory):
    content, floating, gravity, what = random_case(lambda options: data.draw(st.sampled_from(options)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PgaDynWarning)
        run = run_case(content, floating, gravity, str(tmp_path_factory.mktemp("fuzz")), limit=30.0)
    assert run["outcome"] in ("answered", "refused"), (what, run["steps"], run["error"], content[:2000])


def test_generated_files_are_valid(tmp_path):
    """The generator's unmutated files load (the fuzz suite starts from valid robots)."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        text = tree_urdf(lambda options: options[int(rng.integers(len(options)))])
        robots.parse_urdf(text, "generated.urdf")


# -- regression tests: each escape the fuzzing found ------------------------------------------------
def test_robot_without_moving_body_gets_answers(tmp_path, capsys):
    """One link, no joint: an empty nullspace from DRNG, RPNA and the base parameters (they raised
    ValueError: need at least one array to concatenate), and `pga-dyn analyze` answers 0."""
    path = tmp_path / "lonely.urdf"
    path.write_text('<robot name="lonely"><link name="l0"/></robot>')
    robot = robots.load_urdf(path)
    result = drng.nullspace(robot)
    assert robot.n == 0 and result.basis.shape == (0, 0) and result.proven
    assert drng.rpna(robot).basis.shape == (0, 0)
    assert drng.base_parameters(robot, result).num_base_parameters == 0
    assert drng.classify(robot, result) == []
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nullspace dimension:  0" in out and "no moving body:       every link is fixed to the base" in out


def test_huge_coupling_ratio_is_refused_at_load():
    """A mimic multiplier of 6e300 made the regressor infinite and the SVD fail (LinAlgError)."""
    with pytest.raises(
        PgaDynError,
        match=r"chain.urdf: <joint name='j2'>/<mimic>: attribute multiplier='6e300' "
        "is out of range",
    ):
        robots.parse_urdf(CHAIN.replace("RATIO", "6e300"), "chain.urdf")


def test_huge_hand_built_model_is_refused_by_the_numerics():
    """A Robot built by hand (no reader to check the magnitudes) whose lengths overflow the
    regressor: the certificate and the numerical baseline refuse it instead of a LinAlgError."""
    origin = np.eye(4)
    origin[:3, 3] = (1e160, 0, 0)
    body = Inertial(1.0, np.array([0.1, 0, 0]), np.eye(3))
    robot = Robot(
        "huge",
        [LinkSpec("l0"), LinkSpec("l1", body), LinkSpec("l2", body)],
        [
            JointSpec("j1", "R", "l0", "l1", np.eye(4), np.array([[0, 0, 1.0]])),
            JointSpec("j2", "R", "l1", "l2", origin, np.array([[0, 1.0, 0]])),
        ],
    )
    for call in (lambda: drng.numerical_nullspace(robot, samples=10), lambda: drng.nullspace(robot, certify=True)):
        with pytest.raises(PgaDynError, match="not finite"):
            call()


def test_huge_gravity_is_refused(capsys):
    """--gravity 1e300 0 0 gave a certificate with a NaN residual and NaN, Infinity in the JSON
    (the regressor was finite but its column norms overflowed)."""
    assert main(["analyze", "2rru_1rrs", "--gravity", "1e300", "0", "0", "--json"]) == 2
    err = capsys.readouterr().err
    assert "2rru_1rrs.urdf: gravity [1e+300, 0.0, 0.0] is out of range" in err and "Traceback" not in err
    robot = robots.load("2rru_1rrs")
    links = [LinkSpec("l0"), LinkSpec("l1", robot.inertial(1))]
    with pytest.raises(PgaDynError, match=r"huge_gravity: gravity \[1e\+300, 0.0, 0.0\] is out of range"):
        Robot(
            "huge_gravity",
            links,
            [JointSpec("j1", "R", "l0", "l1", np.eye(4), np.array([[0, 1.0, 0]]))],
            gravity=(1e300, 0, 0),
        )  # the model refuses it, whatever reader built it
    lever = np.eye(4)
    lever[0, 3] = 1e160  # a model built by hand, past the readers' bounds: the backstop still holds
    huge = Robot("huge_lever", links, [JointSpec("j1", "R", "l0", "l1", lever, np.array([[0, 1.0, 0]]))])
    with pytest.raises(
        PgaDynError,
        match="huge_lever: the regressor of huge_lever is not finite at the sampled "
        "states, or so large that its norms overflow",
    ):
        drng.numerical_nullspace(huge, samples=20)


def test_non_psd_inertia_is_warned_naming_the_link(capsys, tmp_path):
    text = CHAIN.replace("RATIO", "1").replace('ixx="0.1"', 'ixx="-0.1"', 1)
    with pytest.warns(PgaDynWarning, match=r"chain.urdf: <link name='a'>: <inertia> is not positive semidefinite"):
        robots.parse_urdf(text, "chain.urdf")
    path = tmp_path / "chain.urdf"
    path.write_text(text)
    assert main(["analyze", str(path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("pga-dyn: warning:") and "<link name='a'>" in err


def test_all_passive_robots_are_refused_clearly(tmp_path, capsys):
    """Every joint independent="false": a tree (nothing determines its joints) and a four-bar
    (no independent coordinate) are refused naming the file, in the library and the CLI."""
    tree = CHAIN.replace(' type="revolute">', ' type="revolute" independent="false">').replace(
        '<mimic joint="j1" multiplier="RATIO"/>', ""
    )
    with pytest.raises(PgaDynError, match="chain.urdf: joints 'j1', 'j2' are marked independent=\"false\" but no loop"):
        robots.parse_urdf(tree, "chain.urdf")
    with open(FOUR_BAR) as handle:
        four_bar = handle.read().replace('independent="true"', 'independent="false"')
    path = tmp_path / "passive_four_bar.urdf"
    path.write_text(four_bar)
    with pytest.raises(PgaDynError, match="passive_four_bar.urdf: no independent coordinate"):
        robots.load_urdf(path)
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pga-dyn: error:") and "passive_four_bar.urdf" in err and "Traceback" not in err


# -- bounded work -------------------------------------------------------------------------------------
def test_certificate_time_budget():
    """A budget too small for the sampling of a four-bar: a PgaDynError saying what ran out."""
    robot = robots.load_urdf(FOUR_BAR)
    with pytest.raises(
        PgaDynError,
        match=r"four_bar.urdf: (the certificate: out of its time budget|"
        r"sampling stopped after)",
    ):
        drng.nullspace(robot, certify=True, budget=1e-4)
    with pytest.raises(
        PgaDynError, match="four_bar.urdf: (the numerical nullspace: out of its time budget|sampling stopped after)"
    ):
        drng.numerical_nullspace(robot, budget=1e-4)
    with pytest.raises(PgaDynError, match=r"four_bar.urdf: sampling stopped after 1e-06 s: \d+ of 50 valid states"):
        sample_states(robot, 50, seconds=1e-6)
    assert drng.nullspace(robot, budget=30.0).certified  # the same robot within a normal budget


def test_factorisation_over_budget_is_refused_before_it_starts():
    """The QR and SVD are estimated from the matrix size: a tree of 40 bodies sampled 600 times
    (24,000 x 400) cannot be factored in 0.05 s."""
    from drng.numerical import Budget

    with pytest.raises(PgaDynError, match=r"the QR and SVD of a 24000 x 400 matrix would take about .* s, more than"):
        Budget(0.05, "test").check((24000, 400), "the QR and SVD")


@pytest.mark.parametrize("bad", [0, -1.0, "1", float("nan")])
def test_budget_and_memory_arguments_are_checked(bad):
    robot = robots.load_urdf(FOUR_BAR)
    with pytest.raises(PgaDynError, match="budget must be a positive number"):
        drng.numerical_nullspace(robot, budget=bad)
    with pytest.raises(PgaDynError, match="memory must be a positive number"):
        drng.nullspace(robot, memory=bad)


def test_memory_estimate_refuses_with_the_figure():
    """The matrices are estimated before they are allocated: small limits refuse the certificate
    of a random 6-body tree with the memory it would need (no MemoryError), blockwise (the
    sampling's dq/dq_a and the body lines) and dense (a basis given as a matrix)."""
    from drng.certify import certificate
    from drng.result import NullspaceResult

    robot = random_tree(lambda options: options[-1], max_bodies=6)
    proven = drng.nullspace(robot, memory=100)  # a proven answer is kept in blocks: nothing dense
    assert proven.proven and proven.dim == proven.num_vectors
    n, nq, k = robot.n, robot.nq, proven.num_vectors
    lines = 8.0 * (30 * (2 * 132 * n + 12 * nq) + nq * nq + 200 * (n + k))  # two samples' lines, one dq/dq_a, blocks
    with pytest.raises(
        PgaDynError,
        match=rf"the sampling \(dq/dq_a, {nq} x {nq}\) and the body lines of 30 "
        rf"states would need about {lines / 1024**3:.3g} GiB of memory, more than "
        r"the limit of 9.54e-07 GiB",
    ):
        drng.nullspace(robot, certify=True, samples=30, memory=2**10)
    rows, cols = 30 * nq, 10 * n  # a tree: n_a = nq
    need = 8.0 * (3 * rows * cols + 4 * cols * cols)  # Y, its scaled copy, Y'; four (10 n, 10 n) factors
    dense = NullspaceResult(robot.name, "drng", proven.basis, proven.codes, proven.joint_names, proven=True)
    with pytest.raises(
        PgaDynError,
        match=rf"the sampled regressor of 30 states \({rows} x {cols}\) would need "
        rf"about {need / 1024**3:.3g} GiB of memory, more than the limit of "
        r"0.000977 GiB",
    ):
        certificate(robot, dense, samples=30, memory=2**20)


def test_dense_basis_is_estimated_before_it_is_built(monkeypatch):
    """The dense basis of a result kept in blocks is built on first access, after a memory check."""
    import drng.result

    robot = random_tree(lambda options: options[-1], max_bodies=6)
    result = drng.nullspace(robot)
    monkeypatch.setattr(drng.result, "MEMORY", 100)
    with pytest.raises(
        PgaDynError,
        match=rf"the dense nullspace basis \({10 * robot.n} x {result.num_vectors}\) "
        r"would need about",
    ):
        result.basis


def test_library_code_has_no_assert():
    """Checks that input can break raise PgaDynError: no `assert` in pga_dyn, drng, robots (an
    assert vanishes under python -O and escapes as AssertionError otherwise)."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for package in ("pga_dyn", "drng", "robots", "identification")
        for path in sorted((root / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert found == []


def test_huge_limit_is_refused_at_load():
    """lower="-8e298" on a prismatic joint of the 2PRS-1PSR: the sampled positions overflowed the
    assembly path (ZeroDivisionError in the Newton kernel)."""
    with open(robots.data_path("2prs_1psr")) as handle:
        text = handle.read()
    text = text.replace('lower="', 'lower="-8e298" was="', 1)
    with pytest.raises(
        PgaDynError,
        match=r"2prs_1psr.urdf: <joint name='\w+'>/<limit>: attribute lower='-8e298' "
        "is out of range",
    ):
        robots.parse_urdf(text, "2prs_1psr.urdf")


@pytest.mark.parametrize(
    "lower,upper,box",
    [(-1e6, 1e6, (-np.pi, np.pi)), (5.0, 1e6, (5.0, 5.0 + 2 * np.pi)), (-1e6, -5.0, (-5.0 - 2 * np.pi, -5.0))],
)
def test_revolute_limits_wider_than_a_turn_sample_one_turn(lower, upper, box):
    """A four-bar crank limited to +-1e6 rad: each draw's assembly path (steps of 0.2 rad from q0)
    would take millions of Newton steps; one turn holds the same configurations. The box is one
    turn inside the limits, and the certificate answers as with the default box."""
    from pga_dyn.sampling import default_bounds

    with open(FOUR_BAR) as handle:
        text = handle.read()
    wide = text.replace(
        '<joint name="crank_joint" type="continuous" independent="true">',
        f'<joint name="crank_joint" type="revolute" independent="true"><limit lower="{lower}" '
        f'upper="{upper}" effort="1" velocity="1"/>',
    )
    robot = robots.parse_urdf(wide, "wide.urdf")
    np.testing.assert_allclose(default_bounds(robot), [box])
    reference = drng.nullspace(robots.load_urdf(FOUR_BAR))
    result = drng.nullspace(robot, budget=30.0)
    assert result.certified and result.dim == reference.dim


def test_budget_and_memory_are_checked_on_the_proven_path():
    """A proven tree samples nothing, yet a bad budget= or memory= is still refused by name."""
    puma = robots.load("puma560")
    with pytest.raises(PgaDynError, match="budget must be a positive number"):
        drng.nullspace(puma, budget=-1)
    with pytest.raises(PgaDynError, match="memory must be a positive number"):
        drng.nullspace(puma, memory=-5)
