"""The structures of real URDF+ files that pga-dyn once got wrong, each in a fixture of
tests/fixtures/ written for these tests, against Pinocchio (tests/fixture_oracle.py
``file_nullity``: the spanning tree's regressor projected onto the independent coordinates at
states closed by Pinocchio's kinematics, couplings and passive joints read from the file's
text, nothing of pga-dyn's loops, couplings or regressor).

- couplings whose links do not share their parent (an ankle rotor on the thigh, driven through
  the knee; a coupling across two branches of the tree): generalized_rbda's URDF+ semantics;
- a loop of three bodies whose q0 is a regular configuration of one of two assembly modes (a
  parallel chain on a parallelogram) and a parallelogram flat at q0 (singular): the answer is
  the assembly mode of the reference configuration, at a singular one the branch chosen (both
  reported) (docs/drng.md, assembly modes);
- a differential that no element of the file states: refused, every passive joint named;
- joint limits of 0/0 (example-robot-data's double pendulum) from the command line.
"""

import re
import warnings

import numpy as np
import pytest
from fixture_oracle import TreeOracle, file_nullity, fixture, passive_velocities  # noqa: E402
from oracle import Oracle, erd_path, numerical_rank, random_states  # noqa: E402

import drng
import robots
from pga_dyn import PgaDynError
from pga_dyn import tp_regressor as tp
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynWarning
from pga_dyn.sampling import sample_states


def read(name):
    path = fixture(name)
    with open(path, encoding="utf-8") as handle:
        return path, handle.read()


def file_projection(robot, text):
    """G (nq, n_a) with q = G q_a from the couplings as the file states them (the oracle's
    reading, :func:`fixture_oracle.file_couplings`): the passive coordinates solve A q = 0."""
    oracle = TreeOracle(robot, text)
    A = np.array([a for _, a, _ in oracle.couplings])
    passive = passive_velocities(oracle, text)
    actuated = np.setdiff1d(np.arange(robot.nq), passive)
    G = np.zeros((robot.nq, len(actuated)))
    G[actuated, np.arange(len(actuated))] = 1.0
    G[passive] = -np.linalg.solve(A[:, passive], A[:, actuated])
    return oracle, G, actuated


@pytest.mark.parametrize(
    "name,others",
    [
        ("knee_ankle_rotors", {"ankle_gear": {"knee_joint": 9.0}}),
        ("explicit_chains", {"parallel_tips": {"joint_a1": 1.0, "joint_b1": -1.0}}),
    ],
)
def test_couplings_along_paths_against_pinocchio(name, others):
    """A coupling sums the joints from the links' nearest common ancestor: the regressor over the
    full range equals Pinocchio's projected with the file's G, and the certified dimension the
    oracle's."""
    path, text = read(name)
    robot = robots.load_urdf(path, gravity=(0.3, -0.8, -9.81))
    names = robot.coordinate_names
    assert {c.name: {names[k]: w for k, w in c.others} for c in robot.couplings if c.others} == others
    oracle, G, actuated = file_projection(robot, text)
    assert tuple(names[k] for k in actuated) == robot.actuated_names
    C = oracle.parameter_map()
    rng = np.random.default_rng(3)
    q_a = rng.uniform(-np.pi, np.pi, (12, len(actuated)))
    qd_a, qdd_a = rng.uniform(-1, 1, (2, 12, len(actuated)))
    Y = tp.regressor(robot, q_a, qd_a, qdd_a)
    for s in range(12):
        expected = G.T @ oracle.regressor(G @ q_a[s], G @ qd_a[s], G @ qdd_a[s])
        assert np.linalg.norm(Y[s] @ C - expected) <= 1e-10 * np.linalg.norm(expected), s
    dim, gap, _, _ = file_nullity(robot, text)
    assert gap > 1e8
    result = drng.nullspace(robot)
    assert result.certified and result.dim == dim


def parallelogram_states(robot, states, first, second):
    """Whether each sampled state is on the parallelogram branch: the body after joints ``first``
    and ``second`` keeps its orientation (the sum of their angles is 0 modulo 2 pi)."""
    i, j = robot.coordinate_names.index(first), robot.coordinate_names.index(second)
    return np.abs(np.angle(np.exp(1j * (states.q[:, i] + states.q[:, j])))) < 1e-9


def test_parallel_chain_is_answered_in_the_assembly_mode_of_q0():
    """q0 is a regular configuration of the parallelogram mode: every sample stays in it (the rod
    keeps its orientation), and the certified dimension is the oracle's for that mode, one more
    than the oracle's over both modes (the crossed mode turns the rod)."""
    path, text = read("parallel_chain")
    robot = robots.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PgaDynWarning)  # a regular q0: no warning
        result = drng.nullspace(robot)
        states = sample_states(robot, 200, seed=4)
    assert parallelogram_states(robot, states, "joint_a1", "rod_joint").all()
    mode, gap, _, _ = file_nullity(robot, text, mode="q0")
    both, gap_both, _, _ = file_nullity(robot, text, mode="any")
    assert min(gap, gap_both) > 1e8
    assert result.certified and result.dim == mode == 57
    assert both == mode - 1


def flat_parallelogram_branch(t, crossed):
    """{joint: angle} of the flat parallelogram (crank 0.3 at the origin, coupler 0.8, rocker 0.3
    pivoted at (0.8, 0): tests/fixtures/flat_parallelogram.urdf) closed at crank angle t, solved
    here: the rocker tip P = (0.8, 0) + 0.3 u(phi) is at 0.8 from the crank tip A = 0.3 u(t), so
    with d = (0.8, 0) - A, |d|^2 + 0.09 + 0.6 d.u(phi) = 0.64: phi = angle(d) +- acos(c / |d|),
    c = (0.55 - |d|^2) / 0.6. One root is t (the parallelogram, the coupler keeps its
    orientation), the other the crossed branch; the coupler's joint angle is angle(P - A) - t."""
    A = 0.3 * np.array([np.cos(t), np.sin(t)])
    d = np.array([0.8, 0.0]) - A
    roots = np.arctan2(d[1], d[0]) + np.array([1.0, -1.0]) * np.arccos((0.55 - d @ d) / (0.6 * np.linalg.norm(d)))
    phi = roots[np.argmax(np.abs(np.angle(np.exp(1j * (roots - t)))))] if crossed else t
    P = np.array([0.8 + 0.3 * np.cos(phi), 0.3 * np.sin(phi)])
    return {"crank_joint": t, "coupler_joint": np.arctan2(P[1] - A[1], P[0] - A[0]) - t, "rocker_joint": phi}


@pytest.fixture(scope="module")
def flat_parallelogram_oracle():
    """Pinocchio's dimension on each branch of the flat parallelogram (gravity along -z, normal to
    its plane), sampled from a configuration of that branch at crank angle 0.5 solved by the
    test (:func:`flat_parallelogram_branch`): 29 on the parallelogram, 26 on the crossed one."""
    path, text = read("flat_parallelogram")
    robot = robots.load_urdf(path)
    dims = []
    for crossed in (False, True):
        dim, gap, _, _ = file_nullity(robot, text, start=flat_parallelogram_branch(0.5, crossed))
        assert gap > 1e8
        dims.append(dim)
    return dims


def test_flat_parallelogram_warns_and_reports_both_branches(flat_parallelogram_oracle):
    """q0 is flat: both modes meet there. pga-dyn says so, naming the loop and the joints, and
    answers branch 0, the branch of the best-conditioned configuration on q_a = q0 + t: the
    parallelogram (29 of 30, constant inertia with gravity normal to the plane), as the oracle
    sampled on that branch; the report lists the certified dimension on both branches, the
    oracle's on each (the crossed one 26); over both modes the oracle also gives 26."""
    path, text = read("flat_parallelogram")
    robot = robots.load_urdf(path)
    with pytest.warns(
        PgaDynWarning,
        match=r"flat_parallelogram.urdf: the reference configuration .* singular at "
        r"loop joint 'coupler_rocker' .*'coupler_joint', 'rocker_joint'.*"
        r"on branch 0 of the 2 that meet there",
    ):
        result = drng.nullspace(robot)
    states = sample_states(robot, 200, seed=2)
    assert parallelogram_states(robot, states, "crank_joint", "coupler_joint").all()
    mode, gap, _, _ = file_nullity(robot, text, mode="q0")
    both, gap_both, _, _ = file_nullity(robot, text, mode="any")
    assert min(gap, gap_both) > 1e8
    assert flat_parallelogram_oracle == [29, 26]
    assert result.certified and result.dim == mode == 29
    assert both == 26
    assert result.certificate["branches"] == [
        {"branch": k, "dimension": dim, "certified": True} for k, dim in enumerate(flat_parallelogram_oracle)
    ]


@pytest.mark.parametrize("branch", [0, 1])
def test_flat_parallelogram_branch_is_selectable(branch, flat_parallelogram_oracle):
    """branch= chooses the branch: the answer, its certificate and the samples follow it (on the
    crossed branch the coupler turns), and the dimension is the oracle's on that branch."""
    from pga_dyn.loops import on_branch

    path, _ = read("flat_parallelogram")
    robot = robots.load_urdf(path)
    with pytest.warns(PgaDynWarning, match=rf"on branch {branch} of the 2"):
        result = drng.nullspace(robot, branch=branch)
        chosen = on_branch(robot, branch)
    assert result.certified and result.dim == flat_parallelogram_oracle[branch]
    assert [b["dimension"] for b in result.certificate["branches"]] == flat_parallelogram_oracle
    on = parallelogram_states(chosen, sample_states(chosen, 100, seed=5), "crank_joint", "coupler_joint")
    assert on.all() if branch == 0 else not on.any()


def test_flat_parallelogram_reference_chooses_the_branch(flat_parallelogram_oracle):
    """reference= (a tree configuration): a regular configuration of the crossed branch, solved by
    the test, is a reference on that branch alone: no warning, one branch, the oracle's 26; a
    branch number other than 0 there is refused, naming the robot."""
    path, _ = read("flat_parallelogram")
    robot = robots.load_urdf(path)
    angles = flat_parallelogram_branch(0.5, crossed=True)
    q = np.array([angles[name] for name in robot.coordinate_names])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PgaDynWarning)
        result = drng.nullspace(robot, reference=q)
    assert result.certified and result.dim == flat_parallelogram_oracle[1] == 26
    assert "branches" not in result.certificate
    with pytest.raises(
        PgaDynError,
        match=r"flat_parallelogram.urdf: branch=1: the reference configuration is "
        r"regular",
    ):
        drng.nullspace(robot, branch=1, reference=q)


def test_flat_parallelogram_branch_from_the_command_line(capsys, flat_parallelogram_oracle):
    """pga-dyn analyze --branch 1: the crossed branch's dimension, and both branches listed."""
    path, _ = read("flat_parallelogram")
    code = main(["analyze", path, "--branch", "1"])
    out, err = capsys.readouterr()
    assert code == 0
    assert int(re.search(r"^nullspace dimension:\s+(\d+)", out, flags=re.M).group(1)) == flat_parallelogram_oracle[1]
    assert re.search(r"^assembly branches: .* dimension 29 on branch 0, 26 on branch 1 ", out, flags=re.M), out
    assert "on branch 1 of the 2" in err
    code = main(["analyze", path, "--branch", "2"])
    assert code != 0
    assert re.search(r"branch=2: 2 assembly branches meet at the singular reference", capsys.readouterr().err)


def test_differential_that_the_file_does_not_state_is_refused():
    path, _ = read("hip_differential")
    with pytest.raises(
        PgaDynError,
        match=r"hip_differential.urdf: joints 'gimbal_joint', 'thigh_joint' are marked "
        r"independent=\"false\" but no loop joint moves them.*differential",
    ):
        robots.load_urdf(path)


def test_cli_double_pendulum_with_zero_limits(capsys):
    """example-robot-data's double pendulum has limits 0/0 on both joints. With no flag the
    answer is proven (a tree: no sampling, the limits play no part); with --certify it is also
    certified, sampled in the default range with a warning naming both joints. Both print
    Pinocchio's dimension and exit 0."""
    path = erd_path("double_pendulum_description/urdf/double_pendulum.urdf")
    robot = robots.load_urdf(path)
    oracle = Oracle(robot, path)
    Q, QD, QDD = random_states(robot, 30, seed=1)
    rank, gap = numerical_rank(np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(30)]))
    assert gap > 1e8 and 10 * robot.n - rank == 14
    for flags, status in (([], "proven"), (["--certify"], "proven and certified")):
        code = main(["analyze", path, *flags])
        out, err = capsys.readouterr()
        assert code == 0
        assert re.search(rf"^status:\s+{status}:", out, flags=re.M), out
        assert int(re.search(r"^nullspace dimension:\s+(\d+)", out, flags=re.M).group(1)) == 14
        warned = re.search(
            r"warning: .*double_pendulum.urdf: joint limits .* 'joint1' \[0.0, 0.0\], "
            r"'joint2' \[0.0, 0.0\]",
            err,
        )
        assert bool(warned) is bool(flags), err
    assert re.search(r"^certificate:\s+certified:", out, flags=re.M)


def test_short_lever_is_sampled_with_a_limit_relative_to_its_reference():
    """cond(J_p) is 50 at q0, a regular configuration (an 8 mm lever against a 0.4 m rod): the
    samples are held to 3 x 50 instead of 30, which every state here exceeds, and the certified
    dimension is the oracle's."""
    path, text = read("short_lever")
    robot = robots.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PgaDynWarning)
        states = sample_states(robot, 60, seed=1)
        result = drng.nullspace(robot)
    assert states.max_cond == pytest.approx(150.0, rel=1e-6)
    assert states.cond.min() > 30.0
    dim, gap, _, _ = file_nullity(robot, text, spread=0.06)  # the crank's limits
    assert gap > 1e8
    assert result.certified and result.dim == dim == 18
