"""The structures of real URDF+ files that pga-dyn once got wrong, each in a fixture of
tests/fixtures/ written for these tests, against Pinocchio (tests/fixture_oracle.py
``file_nullity``: the spanning tree's regressor projected onto the independent coordinates at
states closed by Pinocchio's kinematics, couplings and passive joints read from the file's
text, nothing of pga-dyn's loops, couplings or regressor).

- couplings whose links do not share their parent (an ankle rotor on the thigh, driven through
  the knee; a coupling across two branches of the tree): generalized_rbda's URDF+ semantics;
- a loop of three bodies whose q0 is a regular configuration of one of two assembly modes (a
  parallel chain on a parallelogram) and a parallelogram flat at q0 (singular): the answer is
  the assembly mode of the reference configuration (docs/drng.md, assembly modes);
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


def test_flat_parallelogram_warns_and_answers_one_branch():
    """q0 is flat: both modes meet there. pga-dyn says so, naming the loop and the joints, and
    answers the branch of the best-conditioned configuration on q_a = q0 + t: the parallelogram
    (29 of 30, constant inertia with gravity normal to the plane), as the oracle started there
    does; over both modes the oracle gives 26."""
    path, text = read("flat_parallelogram")
    robot = robots.load_urdf(path)
    with pytest.warns(
        PgaDynWarning,
        match=r"flat_parallelogram.urdf: the reference configuration .* singular at "
        r"loop joint 'coupler_rocker' .*'coupler_joint', 'rocker_joint'",
    ):
        result = drng.nullspace(robot)
    states = sample_states(robot, 200, seed=2)
    assert parallelogram_states(robot, states, "crank_joint", "coupler_joint").all()
    mode, gap, _, _ = file_nullity(robot, text, mode="q0")
    both, gap_both, _, _ = file_nullity(robot, text, mode="any")
    assert min(gap, gap_both) > 1e8
    assert result.certified and result.dim == mode == 29
    assert both == 26


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
