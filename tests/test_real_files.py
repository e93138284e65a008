"""The certificate on example-robot-data tree files against Pinocchio: the certified nullspace
dimension is 10 n minus the rank of Pinocchio's joint-torque regressor stacked over random
states, and the certified basis is in the nullspace of Pinocchio's regressor."""

import numpy as np
import pytest
from oracle import Oracle, erd_path, numerical_rank, random_states

import drng
from pga_dyn import tp_regressor as tp
from robots.urdf import load_urdf

# file, floating base (the paper's three principles alone fell short on tiago_no_hand, 58 of 62,
# and romeo_small, 115 of 117; the generalized principles do not)
FILES = [
    ("ur_description/urdf/ur5_robot.urdf", False),
    ("kinova_description/robots/kinova.urdf", False),
    ("solo_description/robots/solo12.urdf", True),
    ("anymal_b_simple_description/robots/anymal.urdf", True),
    ("tiago_description/robots/tiago_no_hand.urdf", False),
    ("romeo_description/urdf/romeo_small.urdf", False),
    ("talos_data/robots/talos_reduced.urdf", False),
]


def pinocchio_figures(robot, path, basis):
    """Rank and gap of Pinocchio's stacked regressor (3 rows per parameter) and the relative
    residual ||Y B||_F / ||Y||_F of ``basis`` in pga-dyn's parameters (Y_pga = Y_pin C^-1,
    C the link-to-eq.(97) parameter map)."""
    oracle = Oracle(robot, path)
    samples = -(-30 * robot.n // robot.nq)
    Q, QD, QDD = random_states(robot, samples, seed=5)
    Y = np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(samples)])
    C = np.column_stack([tp.from_link_parameters(robot, e) for e in np.eye(10 * robot.n)])
    rank, gap = numerical_rank(Y)
    Y_pga = np.linalg.solve(C.T, Y.T).T
    return rank, gap, np.linalg.norm(Y_pga @ basis) / np.linalg.norm(Y_pga)


@pytest.mark.parametrize("relative,floating", FILES, ids=[f[0].split("/")[-1] for f in FILES])
def test_proven_and_certified_dimension_equals_pinocchio(relative, floating):
    path = erd_path(relative)
    robot = load_urdf(path, floating_base=floating)
    assert not robot.couplings
    proven = drng.nullspace(robot)
    assert proven.status == "proven" and proven.basis.shape[1] == proven.dim
    result = drng.nullspace(robot, certify=True)
    c = result.certificate
    assert result.certified and c["clean"] and c["gap"] >= 1e6
    assert c["largest_dropped"] < c["threshold"] < c["smallest_kept"]
    rank, gap, residual = pinocchio_figures(robot, path, proven.basis)
    assert gap > 1e6
    assert proven.dim == result.dim == 10 * robot.n - rank
    assert residual < 1e-10
    assert result.geometric and result.proven and not c["short"]
