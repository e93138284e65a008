"""The certificate's linear algebra: the rank at the largest singular gap, the base columns,
robots with no joint or no moving body."""

import numpy as np
import pytest
from oracle import Oracle, numerical_rank, random_states

import drng
import robots
from drng.numerical import GAP_MIN, SAMPLED_RTOL, rank_at_gap
from pga_dyn.errors import PgaDynError
from robots.urdf import load_urdf

LINK = (
    '<link name="{}"><inertial><origin xyz="0.01 0.02 0.03"/><mass value="1.5"/>'
    '<inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>'
)


def one_link_urdf(tmp_path):
    path = tmp_path / "one_link.urdf"
    path.write_text(f'<robot name="one_link">{LINK.format("body")}</robot>')
    return str(path)


def spectrum_matrix(s, rows, seed=0):
    """A (rows, len(s)) matrix with singular values ``s``: U diag(s) V^T, U and V random orthonormal."""
    rng = np.random.default_rng(seed)
    u = np.linalg.qr(rng.normal(size=(rows, len(s))))[0]
    v = np.linalg.qr(rng.normal(size=(len(s), len(s))))[0]
    return (u * s) @ v.T


@pytest.mark.parametrize(
    "s,rank,clean",
    [
        ([1, 0.3, 1e-5, 1e-15, 1e-16], 3, True),  # the romeo case: a small kept value, a clean gap
        ([1, 0.3, 1e-5, 5e-10, 1e-16], 4, False),  # gap 5e6 but kept within a decade of the 1e-10 threshold
        ([1, 1e-7, 1e-16], 2, True),  # two gaps >= 1e6: the threshold is in the larger one
        ([1, 0.3, 1e-3, 1e-8, 1e-12], 3, False),  # largest gap 1e5 < 1e6
        ([1, 0.5, 0.2], 3, True),  # full rank: the gap to round-off
        ([1, 1e-4, 1e-8, 1e-12, 1e-16], None, False),  # equal gaps of 1e4: no clean cut, any rank
    ],
)
def test_rank_at_the_largest_gap(s, rank, clean):
    A = spectrum_matrix(np.array(s, dtype=float), 40)
    decision = rank_at_gap(np.linalg.svd(A, compute_uv=False), A.shape)
    assert decision["clean"] is clean
    if rank is None:
        return
    assert decision["rank"] == rank
    assert decision["threshold"] == SAMPLED_RTOL
    assert decision["smallest_kept"] == pytest.approx(s[rank - 1], rel=1e-6)
    if clean:
        assert decision["gap"] >= GAP_MIN


def test_zero_matrix_has_rank_zero():
    assert rank_at_gap(np.zeros(4), (8, 4))["rank"] == 0


def test_base_columns_are_independent():
    """The base columns of the numerical baseline: rank(Y) columns of the sampled regressor,
    independent (oracle: the SVD rank of those columns)."""
    from drng.numerical import stacked_regressor

    robot = robots.load("puma560")
    numeric = drng.numerical_nullspace(robot, samples=40)
    cols = numeric.certificate["base_columns"]
    Y = stacked_regressor(robot, 40, seed=7)[0]
    assert len(cols) == numeric.certificate["rank"] == numerical_rank(Y)[0]
    assert numerical_rank(Y[:, cols])[0] == len(cols)


def test_pivoted_qr_chooses_lapacks_columns():
    """The compiled pivoted QR picks the columns LAPACK's xGEQP3 picks (scipy, an independent
    implementation), on rank-deficient matrices with columns of very different norms, and
    tall, wide and square ones."""
    import scipy.linalg

    from drng.numerical import pivoted_qr_columns

    rng = np.random.default_rng(3)
    for _ in range(100):
        m, c = rng.integers(3, 50, 2)
        r = int(rng.integers(1, min(m, c) + 1))
        A = rng.standard_normal((m, r)) @ rng.standard_normal((r, c)) * 10.0 ** rng.uniform(-3, 3, c)
        _, order = scipy.linalg.qr(A, pivoting=True, mode="r")
        assert np.array_equal(pivoted_qr_columns(A, r), np.sort(order[:r]))
        assert numerical_rank(A[:, pivoted_qr_columns(A, r)])[0] == r


def test_robot_without_moving_body(tmp_path):
    """A URDF with one link and a fixed base: nothing moves, no parameter. DRNG answers an empty
    nullspace; everything that samples the regressor raises the project error."""
    robot = load_urdf(one_link_urdf(tmp_path))
    assert robot.n == 0
    assert drng.nullspace(robot, certify=False).dim == 0
    with pytest.raises(PgaDynError, match="no moving body"):
        drng.nullspace(robot, certify=True)
    with pytest.raises(PgaDynError, match="no moving body"):
        drng.numerical_nullspace(robot)
    with pytest.raises(PgaDynError, match="no moving body"):
        drng.verify(robot, np.zeros((0, 0)))


def test_single_floating_body(tmp_path):
    """A single free rigid body (a quadrotor without joints) under gravity: its 10 parameters
    are all identifiable (oracle: Pinocchio's stacked regressor has rank 10)."""
    path = one_link_urdf(tmp_path)
    robot = load_urdf(path, floating_base=True)
    result = drng.nullspace(robot, certify=True)
    oracle = Oracle(robot, path)
    Q, QD, QDD = random_states(robot, 10, seed=2)
    rank = numerical_rank(np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(10)]))[0]
    assert result.certified and result.dim == 10 - rank == 0
    assert result.certificate["rank_numerical"] == 10


def test_a_failed_certificate_says_why_and_a_proven_one_that_fails_is_not_trusted(monkeypatch):
    """The certificate records its reason; a proof contradicted by the sampled check is not
    trusted and says so (forced here by a tolerance no residual meets)."""
    import drng.certify

    ok = drng.nullspace(robots.load("2rru_1rrs"))
    assert ok.certified and ok.certificate["reason"] is None
    monkeypatch.setattr(drng.certify, "RESIDUAL_TOL", 0.0)
    result = drng.nullspace(robots.load("puma560"), certify=True)
    assert result.certified is False and result.proven and not result.trusted
    assert result.status == "proven, but its sampled check FAILED"
    assert result.certificate["reason"].startswith("the basis is not in the nullspace of the sampled regressor")


# -- the certificate of a tree, from the block-triangular structure of its regressor -----------


def _trees():
    """Trees with every joint type, a floating base and branches (tests/random_trees.py's builder)."""
    from random_trees import AXES, tree

    z, x, skew = AXES[0], AXES[1], AXES[4]
    return [
        tree(
            [
                (0, "R", [z], (0, 0, 0.3), (0, 0, 0)),
                (1, "U", [x, skew], (0.2, 0, 0), (0.3, 0.2, -0.4)),
                (2, "P", [skew], (0, 0.1, 0), (0, 0, 0)),
                (1, "S", [], (0.1, -0.2, 0.3), (0, 0, 0)),
                (4, "R", [x], (0.3, 0, 0), (0, 1.5707963267948966, 0)),
            ],
            name="R-U-P, S-R",
        ),
        tree(
            [
                (0, "P", [z], (0, 0, 0), (0, 0, 0)),
                (1, "R", [z], (0, 0, 0.4), (0, 0, 0)),
                (2, "R", [x], (0.3, 0, 0), (0, 0, 0)),
                (2, "U", [z, x], (0, 0.2, 0.1), (0, 0, 0)),
            ],
            gravity=(3.0, -4.0, -8.0),
            name="P-R-R, U",
        ),
        tree(
            [
                (0, "R", [skew], (0.1, -0.2, 0.3), (0, 0, 0)),
                (1, "S", [], (0, 0, 0.4), (0, 0, 0)),
                (0, "U", [x, z], (0.3, 0, 0), (0.3, 0.2, -0.4)),
            ],
            gravity=(0.0, 0.0, 0.0),
            floating=True,
            name="floating R-S, U",
        ),
    ]


@pytest.mark.parametrize("robot", _trees(), ids=lambda r: r.name)
def test_body_lines_factor_the_regressor(robot):
    """Y[k, body i] = S_k^T H_i on the joints k supporting i, zero elsewhere (oracle: the TP
    regressor's compiled kernel, itself equal to Pinocchio's in test_regressor.py)."""
    from drng.certify import body_lines
    from pga_dyn.sampling import sample_states

    states = sample_states(robot, 3, seed=5)
    Y = states.regressor()
    S, H = body_lines(robot, states)
    for i in range(1, robot.n + 1):
        rows = np.zeros(robot.nq, dtype=bool)
        for k in robot.support(i):
            rows[robot.coordinates(k)] = True
        block = Y[:, :, 10 * (i - 1) : 10 * i]
        np.testing.assert_allclose(
            np.einsum("skc,scp->skp", S[:, rows], H[:, i - 1]), block[:, rows], rtol=0, atol=1e-12 * np.abs(Y).max()
        )
        assert not block[:, ~rows].any()


@pytest.mark.parametrize("robot", _trees(), ids=lambda r: r.name)
def test_tree_certificate_agrees_with_pinocchio(robot):
    """The blockwise certificate of a tree: its rank bound is Pinocchio's identifiable rank (an
    independent stacked regressor and SVD), and the residual it sums body by body is
    ||Y' B||_F / ||Y'||_F of the dense sampled regressor, also for a basis off the nullspace."""
    from random_trees import pinocchio_nullspace

    from drng.certify import tree_certificate
    from drng.numerical import Budget, stacked_regressor
    from drng.principles import dense_basis
    from drng.result import NullspaceResult

    result = drng.nullspace(robot, certify=True)
    nullity, gap, _ = pinocchio_nullspace(robot)
    assert gap > 1e6
    assert result.certificate["structure"] == "block-triangular" and result.status == "proven and certified"
    assert result.certificate["rank_numerical"] == 10 * robot.n - nullity == 10 * robot.n - result.dim
    assert "basis" not in vars(result)  # the certificate kept the block form
    n, bodies, vals = drng.nullspace(robot).blocks
    vals = vals + np.random.default_rng(3).normal(scale=1e-3, size=vals.shape) * (bodies[:, :, None] > 0)
    off = NullspaceResult(robot.name, "perturbed", None, blocks=(n, bodies, vals))
    info = tree_certificate(robot, off, 30, 0, None, Budget(None, "test"))
    Y = stacked_regressor(robot, 30, seed=1)[0]  # the certificate's independent samples: seed + 1
    assert info["residual"] == pytest.approx(
        np.linalg.norm(Y @ dense_basis(n, bodies, vals)) / np.linalg.norm(Y), rel=1e-9
    )
    assert info["residual"] > 1e-6


def test_an_incomplete_tree_basis_is_completed_by_the_dense_certificate():
    """When the blockwise bound falls short (here: vectors left out of a tree's basis), the dense
    certificate decides and completes the basis (oracle: Pinocchio's identifiable rank); a vector
    whose two blocks are not on a parent and its child goes to the dense certificate too."""
    from random_trees import pinocchio_nullspace

    from drng.certify import certificate
    from drng.result import NullspaceResult

    robot = _trees()[1]
    nullity = pinocchio_nullspace(robot)[0]
    full = drng.nullspace(robot)
    n, bodies, vals = full.blocks
    keep = np.arange(len(bodies)) % 4 != 0
    partial = NullspaceResult(
        robot.name, "drng", None, full.codes[keep], full.joint_names, blocks=(n, bodies[keep], vals[keep])
    )
    completed = certificate(robot, partial)
    assert completed.certificate["structure"] == "dense" and completed.certified and not completed.geometric
    assert completed.dim == nullity and completed.certificate["rank_drng"] == keep.sum()
    skipping = bodies.copy()
    j = int(np.nonzero((bodies[:, 1] > 0) & (robot.parent[bodies[:, 1]] > 0))[0][0])  # a parent off the base
    skipping[j, 1] = robot.parent[skipping[j, 1]]  # the vector's second block moved to its grandparent
    moved = NullspaceResult(robot.name, "drng", None, full.codes, full.joint_names, blocks=(n, skipping, vals))
    checked = certificate(robot, moved)
    assert checked.certificate["structure"] == "dense" and checked.certified is False


def test_tree_samples_share_one_identity():
    """dq/dq_a of a tree is the identity: the samples hold one read-only copy, not one per sample
    (the block certificate of a long chain would need samples x n^2 floats)."""
    from pga_dyn.sampling import sample_states

    states = sample_states(robots.load("puma560"), 50, seed=0)
    assert states.G.shape == (50, 6, 6) and np.array_equal(states.G[7], np.eye(6))
    assert states.G.strides[0] == 0 and not states.G.flags.writeable
