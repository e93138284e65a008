"""The TP regressor against Pinocchio's RNEA and joint-torque regressor (independent oracle)."""

import numpy as np
import pytest
from oracle import Oracle, erd_path, random_states

from pga_dyn import tp_regressor as tp
from pga_dyn.conventions import vector_to_pseudo
from robots.urdf import load_urdf

FIXED = [
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "z1_description/urdf/z1.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "so_arm_description/urdf/so100.urdf",
    "double_pendulum_description/urdf/double_pendulum.urdf",
    "kinova_description/robots/kinova.urdf",
]
FLOATING = [
    "solo_description/robots/solo12.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "a1_description/urdf/a1.urdf",
]
GRAVITIES = [(0.0, 0.0, -9.81), (9.81, 0.0, 0.0), (1.2, -3.4, -8.5)]


def check_rnea(robot, oracle, samples=4, seed=1):
    """Y @ pi equals Pinocchio's inverse dynamics. With mimic joints (the Panda's second
    finger), Pinocchio's tree forces are projected on the independent coordinates by the
    constant G of the mimic (q_follower = q_leader), written here from the URDF."""
    Q, QD, QDD = random_states(robot, samples, seed)
    pi = tp.inertial_parameters(robot)
    G = np.eye(robot.nq)
    for c in robot.couplings:
        assert c.ratio == 1.0 and c.offset == 0.0  # <mimic joint="..."/> with the defaults
        G[c.follower, c.leader] = 1.0
    G = G[:, robot.actuated]
    Y = tp.regressor(robot, Q @ G, QD @ G, QDD @ G)
    for s in range(samples):
        tau = G.T @ oracle.rnea(G @ (Q[s] @ G), G @ (QD[s] @ G), G @ (QDD[s] @ G))
        err = np.linalg.norm(Y[s] @ pi - tau) / np.linalg.norm(tau)
        assert err < 1e-9, (robot.name, s, err)


@pytest.mark.parametrize("relative", FIXED)
@pytest.mark.parametrize("gravity", GRAVITIES[:2])
def test_fixed_base_rnea(relative, gravity):
    path = erd_path(relative)
    robot = load_urdf(path, gravity=gravity)
    check_rnea(robot, Oracle(robot, path))


@pytest.mark.parametrize("relative", FLOATING)
def test_floating_base_rnea(relative):
    path = erd_path(relative)
    robot = load_urdf(path, floating_base=True, gravity=GRAVITIES[2])
    check_rnea(robot, Oracle(robot, path))


@pytest.mark.parametrize("relative,floating", [(FIXED[1], False), (FLOATING[0], True)])
def test_regressor_equals_pinocchio_in_link_parameters(relative, floating):
    """Y_pga C = Y_pin, where C maps Pinocchio's per-link parameters to the 10-vectors of eq. (97):
    the whole regressor agrees, not only its product with one parameter vector."""
    path = erd_path(relative)
    robot = load_urdf(path, floating_base=floating, gravity=GRAVITIES[2])
    oracle = Oracle(robot, path)
    C = np.column_stack([tp.from_link_parameters(robot, e) for e in np.eye(10 * robot.n)])
    Q, QD, QDD = random_states(robot, 3, seed=7)
    for s in range(3):
        Y_pin = oracle.regressor(Q[s], QD[s], QDD[s])
        Y = tp.tree_regressor(robot, Q[s : s + 1], QD[s : s + 1], QDD[s : s + 1])[0]
        assert np.allclose(Y @ C, Y_pin, rtol=0, atol=1e-9 * np.abs(Y_pin).max())


def test_link_parameters_match_pinocchio_and_round_trip():
    path = erd_path(FLOATING[1])
    robot = load_urdf(path, floating_base=True)
    phi = Oracle(robot, path).link_parameters()
    pi = tp.inertial_parameters(robot)
    assert np.allclose(tp.from_link_parameters(robot, phi), pi, atol=1e-12)
    assert np.allclose(tp.to_link_parameters(robot, pi), phi, atol=1e-12)


def test_tensor_contracts_to_regressor():
    """tau_j = sum R[j,i,m,n] N_i[m,n] (eq. 50) and the bar operator (eq. 100)."""
    path = erd_path(FIXED[0])
    robot = load_urdf(path)
    Q, QD, QDD = random_states(robot, 2, seed=3)
    R = tp.regressor_tensor(robot, Q, QD, QDD)
    Y = tp.regressor(robot, Q, QD, QDD)
    assert R.shape == (2, robot.nq, robot.n, 4, 4)
    N = np.array([vector_to_pseudo(x) for x in tp.inertial_parameters(robot).reshape(-1, 10)])
    assert np.allclose(np.einsum("sjimn,imn->sj", R, N), Y @ tp.inertial_parameters(robot))
    assert np.allclose(tp.regressor_tensor(robot, Q[1], QD[1], QDD[1]), R[1])
    bar = R[..., [0, 0, 0, 1, 1, 2, 0, 1, 2, 3], [0, 1, 2, 1, 2, 2, 3, 3, 3, 3]] + np.where(
        np.array([0, 1, 1, 0, 1, 0, 1, 1, 1, 0], bool),
        R[..., [0, 1, 2, 1, 2, 2, 3, 3, 3, 3], [0, 0, 0, 1, 1, 2, 0, 1, 2, 3]],
        0.0,
    )
    assert np.allclose(bar.reshape(2, robot.nq, -1), Y)


def test_batch_equals_single_samples():
    path = erd_path(FLOATING[0])
    robot = load_urdf(path, floating_base=True)
    Q, QD, QDD = random_states(robot, 3, seed=5)
    Y = tp.regressor(robot, Q, QD, QDD)
    for s in range(3):
        assert np.array_equal(Y[s], tp.regressor(robot, Q[s], QD[s], QDD[s]))


def builtin(name, **kwargs):
    import os

    import robots

    robot = robots.load(name, **kwargs)
    return robot, Oracle(robot, os.path.join(os.path.dirname(robots.__file__), "data", f"{name}.urdf"))


@pytest.mark.parametrize("gravity", GRAVITIES)
def test_builtin_puma560_rnea(gravity):
    check_rnea(*builtin("puma560", gravity=gravity))


def test_builtin_go2_floating_rnea():
    robot, oracle = builtin("go2")
    assert robot.floating_base
    check_rnea(robot, oracle)


@pytest.mark.parametrize(
    "name,gravity,expected",
    [
        ("puma560", (0.0, 0.0, -9.81), 36),  # gravity along the joint-1 axis (RPNA paper, DRNG Table 3)
        ("puma560", (-9.81, 0.0, 0.0), 38),  # gravity perpendicular to joint 1
        ("go2", (0.0, 0.0, -9.81), 94),  # floating base, 130 parameters
    ],
)
def test_rank_of_stacked_regressor_equals_pinocchio(name, gravity, expected):
    from oracle import numerical_rank

    robot, oracle = builtin(name, gravity=gravity)
    Q, QD, QDD = random_states(robot, 60, seed=11)
    ours = tp.regressor(robot, Q, QD, QDD).reshape(-1, 10 * robot.n)
    theirs = np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(60)])
    rank, gap = numerical_rank(ours)
    assert gap > 1e4, gap
    assert rank == numerical_rank(theirs)[0] == expected


def test_single_state_keeps_every_check():
    """The single-state path (the compiled entry point called without numba's dispatcher, from
    ``regressor`` itself once the robot's entry point is bound) checks what the batch path checks,
    and takes any kind of array as the same values."""
    import robots
    from pga_dyn.errors import PgaDynError
    from pga_dyn.kinematics import state_arrays
    from robots.urdf import parse_urdf

    robot = robots.load("puma560")
    Q, QD, QDD = random_states(robot, 2, seed=3)
    q, qd, qdd = Q[0], QD[0], QDD[0]
    expected = tp.regressor(robot, q, qd, qdd)
    for k, name in enumerate(("q", "qd", "qdd")):
        two_d = (
            f"^{name} must have shape \\(6,\\)" if k else "^qd must have shape \\('samples', 6\\)"
        )  # q sets the kind
        for bad, message in (
            (np.zeros(5), f"^{name} must have shape \\(6,\\) for robot 'puma560'"),
            (np.zeros((1, 6)), two_d),
            (np.zeros(6) + 1j, f"^{name} must be real"),
            (np.full(6, np.nan), f"^{name} contains non-finite values"),
            ("abc", f"^{name} must be an array of numbers"),
        ):
            args = [q, qd, qdd]
            args[k] = bad
            with pytest.raises(PgaDynError, match=message):
                tp.regressor(robot, *args)
    for out in (np.zeros((6, 60), dtype=np.float32), np.zeros((60, 6)).T, np.zeros((6, 61))[:, :60]):
        with pytest.raises(PgaDynError, match="out must be a writable C-contiguous float64 array of shape \\(6, 60\\)"):
            tp.regressor(robot, q, qd, qdd, out=out)
    frozen = np.zeros((6, 60))
    frozen.flags.writeable = False
    with pytest.raises(PgaDynError, match="out must be a writable"):
        tp.regressor(robot, q, qd, qdd, out=frozen)
    out = np.full((6, 60), np.nan)
    assert tp.regressor(robot, q, qd, qdd, out=out) is out and np.array_equal(out, expected)
    # unaligned, strided and list inputs are copied into arrays the kernel takes, read-only ones
    # read as they are (the kernel checks the strides and address of what it reads)
    unaligned = np.frombuffer(bytearray(6 * 8 + 1), dtype=np.float64, offset=1)
    unaligned[:] = q
    assert not unaligned.flags.aligned
    read_only = q.copy()
    read_only.flags.writeable = False
    for state in (unaligned, read_only, np.repeat(q, 2)[::2], list(q), q.astype(">f8"), np.asfortranarray(q)):
        assert np.array_equal(tp.regressor(robot, state, qd, qdd), expected)
    # what the entry point is handed: C-contiguous, aligned, writable float64 arrays
    assert all(
        x.flags.carray and x.dtype == np.float64
        for x in state_arrays(robot, unaligned, read_only, np.repeat(q, 2)[::2], actuated=True)[:3]
    )
    two = np.frombuffer(bytearray(Q.nbytes + 1), dtype=np.float64, offset=1).reshape(Q.shape)
    two[:] = Q
    with pytest.raises(
        PgaDynError, match="^Q, QD and QDD must be aligned C-contiguous float64 arrays of shape \\(2, 6\\)"
    ):
        tp.tree_regressor(robot, two, QD, QDD)  # the batch kernel's caller passes what it reads, else this
    empty = parse_urdf('<robot name="one"><link name="b"/></robot>', "one.urdf")  # no moving body
    assert tp.regressor(empty, np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0, 0)


def test_regressor_kernel_compiles_one_version():
    """Single states, batches, out=, the tensor and converted inputs all call one compiled version
    of the kernel (the single state binds its entry point for that version)."""
    import robots

    robot = robots.load("puma560")
    Q, QD, QDD = random_states(robot, 3, seed=4)
    tp.regressor(robot, Q[0], QD[0], QDD[0])
    tp.regressor(robot, Q, QD, QDD, out=np.empty((3, 6, 60)))
    tp.regressor(robot, Q[:0], QD[:0], QDD[:0])
    tp.regressor(robot, Q.T.copy().T, QD.astype(np.float32), QDD.tolist())
    unaligned = np.frombuffer(bytearray(Q.nbytes + 1), dtype=np.float64, offset=1).reshape(Q.shape)
    unaligned[:] = Q
    assert not unaligned.flags.aligned and unaligned.flags.writeable
    tp.regressor(robot, unaligned, QD, QDD)
    tp.regressor(robot, unaligned[0], QD[0], QDD[0])
    tp.regressor_tensor(robot, Q[0], QD[0], QDD[0])
    tp.tree_regressor(robot, Q, QD, QDD, want_tensor=True)
    assert len(tp._tp_batch.signatures) == 1


def test_single_states_from_threads_agree():
    """Calls share no scratch memory: states computed in four threads equal the serial results."""
    from concurrent.futures import ThreadPoolExecutor

    import robots

    robot = robots.load("go2")
    Q, QD, QDD = random_states(robot, 40, seed=6)
    serial = [tp.regressor(robot, Q[s], QD[s], QDD[s]) for s in range(40)]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda s: tp.regressor(robot, Q[s], QD[s], QDD[s]), range(40)))
    assert all(np.array_equal(a, b) for a, b in zip(serial, threaded))
