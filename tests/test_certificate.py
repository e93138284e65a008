"""The certificate's linear algebra: the rank at the largest singular gap, the base columns,
robots with no joint or no moving body."""

import numpy as np
import pytest

import drng
import robots
from drng.numerical import GAP_MIN, SAMPLED_RTOL, rank_at_gap
from oracle import Oracle, numerical_rank, random_states
from pga_dyn.errors import PgaDynError
from robots.urdf import load_urdf

LINK = ('<link name="{}"><inertial><origin xyz="0.01 0.02 0.03"/><mass value="1.5"/>'
        '<inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>')


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


@pytest.mark.parametrize("s,rank,clean", [
    ([1, 0.3, 1e-5, 1e-15, 1e-16], 3, True),  # the romeo case: a small kept value, a clean gap
    ([1, 0.3, 1e-5, 5e-10, 1e-16], 4, False),  # gap 5e6 but kept within a decade of the 1e-10 threshold
    ([1, 1e-7, 1e-16], 2, True),  # two gaps >= 1e6: the threshold is in the larger one
    ([1, 0.3, 1e-3, 1e-8, 1e-12], 3, False),  # largest gap 1e5 < 1e6
    ([1, 0.5, 0.2], 3, True),  # full rank: the gap to round-off
    ([1, 1e-4, 1e-8, 1e-12, 1e-16], None, False),  # equal gaps of 1e4: no clean cut, any rank
])
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
