"""Table 3 of the DRNG paper, measured for pga-dyn: nullspace dimension and run time of DRNG, RPNA
(trees) and the numerical baseline, in one run; then DRNG on serial chains of growing length.

Run: python benchmarks/table3.py [--samples N] [--repeat R]

DRNG is timed warm (after compilation), as the best of R calls of drng.nullspace(certify=False)
(the generalized principles, block output made dense: proven on the trees, without the
certificate that the PKMs get by default; on the PKMs it includes the pass that drops the loop
joints' repeated vectors) and of the compiled kernel of the rules alone
(drng.principles.drng_kernel, block form). The numerical baseline draws N valid
samples, stacks their regressors and takes the SVD (drng.numerical_nullspace, best of R/20 calls).

Peers side by side, on the numerical baseline's own valid states (the same draw), both with one
BLAS thread, best of R/20 calls: pga-dyn after the sampling (the stacked TP regressor, its
column-scaled rank, nullspace basis and base columns: what drng.numerical_nullspace does once
the states are drawn) against Pinocchio + pivoted QR (Pinocchio's joint-torque regressor of each
state, projected by dq/dq_a on the parallel machines, stacked, columns scaled to unit norm, a
LAPACK pivoted QR (scipy.linalg.qr, pivoting=True), the rank |R_kk| > 1e-10 |R_11| and the base
columns; no nullspace basis). ratio = pga-dyn / peer: below 1, pga-dyn is faster.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from timing import best

import drng
import robots
from drng.generator import kernel_arrays
from drng.principles import drng_kernel
from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")

#: The paper's Table 3: (numerical, RPNA, DRNG) dimension and time in seconds (MATLAB R2024a).
PAPER = {
    "puma560": ((24, 74.33e-3), (24, 54.47e-3), (24, 0.67e-3)),
    "go2": ((36, 144.10e-3), (36, 59.96e-3), (36, 1.52e-3)),
    "2rru_1rrs": ((43, 46.36), None, (45, 1.81e-3)),
    "2prs_1psr": ((47, 41.79), None, (47, 2.26e-3)),
}


def chain(n, seed=0, universal=False):
    """A serial chain of n bodies: revolute joints about random axes, random offsets and inertias
    (``universal``: every second joint a U joint about two random axes)."""
    rng = np.random.default_rng(seed)
    links = [LinkSpec("base")]
    joints = []
    for k in range(n):
        links.append(LinkSpec(f"l{k}", Inertial(1.0, rng.normal(size=3) * 0.1, np.eye(3) * 0.1)))
        origin = np.eye(4)
        origin[:3, 3] = rng.normal(size=3) * 0.2
        kind = "U" if universal and k % 2 else "R"
        axes = rng.normal(size=(2 if kind == "U" else 1, 3))
        joints.append(JointSpec(f"j{k}", kind, links[k].name, f"l{k}", origin, axes))
    return Robot(f"chain{n}", links, joints)


def pga_dyn_after_sampling(states):
    """What drng.numerical_nullspace does once the states are drawn: the stacked regressor, its
    rank, nullspace basis and base columns."""
    from drng.numerical import pivoted_qr_columns, sampled_nullspace

    Y = states.regressor().reshape(-1, 10 * states.robot.n)
    null, decision, _, reduced = sampled_nullspace(Y)
    pivoted_qr_columns(reduced, decision["rank"])
    return 10 * states.robot.n - decision["rank"]


def pinocchio_pivoted_qr(robot, states):
    """The peer pipeline on the same states: returns a function of no argument that stacks
    Pinocchio's regressors and reads the rank and base columns from a LAPACK pivoted QR, and
    returns the nullspace dimension."""
    import scipy.linalg

    from drng.numerical import SAMPLED_RTOL

    sys.path.insert(0, TESTS)
    from oracle import Oracle, TreeOracle

    oracle = Oracle(robot, robot.source) if robot.floating_base else TreeOracle(robot)

    def pipeline():
        Y = np.vstack(
            [states.G[s].T @ oracle.regressor(states.q[s], states.qd[s], states.qdd[s]) for s in range(len(states))]
        )
        norms = np.linalg.norm(Y, axis=0)
        zero = norms <= 1e-9 * norms.max()  # columns of round-off only (as pga-dyn)
        scaled = np.where(zero, 0.0, Y / np.where(zero, 1.0, norms))
        R, pivots = scipy.linalg.qr(scaled, mode="r", pivoting=True)
        diag = np.abs(np.diag(R))
        rank = int(np.sum(diag > SAMPLED_RTOL * diag[0]))
        np.sort(pivots[:rank])
        return 10 * robot.n - rank

    return pipeline


def peers(robot, samples, repeat):
    """(pga-dyn after sampling, Pinocchio + pivoted QR) best times and dimensions, same states."""
    from threadpoolctl import threadpool_limits

    from drng.numerical import stacked_regressor

    states = stacked_regressor(robot, samples, 0)[1]  # numerical_nullspace's draw
    peer = pinocchio_pivoted_qr(robot, states)
    with threadpool_limits(limits=1, user_api="blas"):
        ours, theirs = pga_dyn_after_sampling(states), peer()
        return (best(lambda: pga_dyn_after_sampling(states), repeat), ours, best(peer, repeat), theirs)


def fmt(seconds):
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"Table 3 (numerical baseline: {args.samples} valid samples; DRNG: best of {args.repeat} warm calls)")
    header = (
        "robot",
        "DRNG dim",
        "DRNG",
        "kernel",
        "RPNA dim",
        "RPNA",
        "numerical dim",
        "numerical",
        "num/DRNG",
        "RPNA/DRNG",
        "paper DRNG",
        "paper RPNA",
        "paper numerical",
    )
    rows = []
    for name in PAPER:
        try:
            robot = robots.load(name)
        except ValueError:
            continue
        result = drng.nullspace(robot, certify=False)
        t_drng = best(lambda: drng.nullspace(robot, certify=False), args.repeat)
        t_kernel = best(lambda: drng_kernel(*kernel_arrays(robot)), args.repeat)
        numeric = drng.numerical_nullspace(robot, samples=args.samples)
        t_num = best(lambda: drng.numerical_nullspace(robot, samples=args.samples), max(3, args.repeat // 20))
        rpna_dim, t_rpna = "-", None
        if not robot.constrained:
            rp = drng.rpna(robot)
            t_rpna = best(lambda: drng.rpna(robot), max(3, args.repeat // 20))
            rpna_dim = rp.dim
        paper_num, paper_rpna, paper_drng = PAPER[name]
        rows.append(
            (
                name,
                result.dim,
                fmt(t_drng),
                fmt(t_kernel),
                rpna_dim,
                fmt(t_rpna) if t_rpna else "-",
                numeric.dim,
                fmt(t_num),
                f"{t_num / t_drng:.0f}x",
                f"{t_rpna / t_drng:.0f}x" if t_rpna else "-",
                f"{paper_drng[0]} ({fmt(paper_drng[1])})",
                f"{paper_rpna[0]} ({fmt(paper_rpna[1])})" if paper_rpna else "-",
                f"{paper_num[0]} ({fmt(paper_num[1])})",
            )
        )
    _print(header, rows)

    print(f"\nPeers on the same {args.samples} valid states (one BLAS thread, best of {max(3, args.repeat // 20)})")
    rows = []
    for name in PAPER:
        robot = robots.load(name)
        ours, our_dim, theirs, their_dim = peers(robot, args.samples, max(3, args.repeat // 20))
        rows.append((name, our_dim, fmt(ours), their_dim, fmt(theirs), f"{ours / theirs:.2f}"))
    _print(("robot", "pga-dyn dim", "pga-dyn after sampling", "peer dim", "Pinocchio + pivoted QR", "ratio"), rows)

    print("\nDRNG on serial chains (revolute joints about random axes), compiled kernel, block output")
    rows = []
    for n in (10, 100, 1000, 10000):
        robot = chain(n)
        arrays = kernel_arrays(robot)
        drng_kernel(*arrays)
        t = best(lambda: drng_kernel(*arrays), max(3, args.repeat // (n // 10)))
        rows.append((n, fmt(t), f"{t / n * 1e9:.0f} ns"))
    _print(("bodies", "DRNG kernel", "per body"), rows)


def _print(header, rows):
    cells = [header] + [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    for k, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    main()
