"""Why a numerical rank can come out wrong on a PKM: the accuracy of the assembled samples.

Run: python benchmarks/assembly_accuracy.py

The DRNG paper's QR baseline found rank 27 on the 2RRU-1RRS (nullspace 43, not 45), with the
26th and 27th R-diagonal entries near 1e-6. This script takes valid samples of the built-in
2RRU-1RRS, assembled to 1e-12, then perturbs the passive coordinates by a relative error eps
(the accuracy of a looser assembly) and prints the singular values and R-diagonal entries
around the true rank (25), and the rank both give at a 1e-8 threshold.
"""

import numpy as np

import robots
from pga_dyn import tp_regressor as tp
from pga_dyn.sampling import sample_states


def main():
    robot = robots.load("2rru_1rrs")
    states = sample_states(robot, 831, seed=3)  # as many valid samples as the paper kept
    rng = np.random.default_rng(0)
    print("passive q error   scaled singular values 24-27 / s1     |R_kk| 24-27 (unpivoted QR)   rank SVD  rank QR")
    for eps in (0.0, 1e-9, 1e-7, 1e-6, 1e-5):
        q = states.q.copy()
        q[:, robot.passive] += eps * rng.normal(size=(len(states), len(robot.passive)))
        tree = tp.tree_regressor(robot, q, states.qd, states.qdd)
        Y = np.einsum("skj,skc->sjc", states.G, tree).reshape(-1, 10 * robot.n)
        norms = np.linalg.norm(Y, axis=0)
        keep = norms > 1e-12 * norms.max()
        s = np.linalg.svd(Y[:, keep] / norms[keep], compute_uv=False)
        r_kk = np.sort(np.abs(np.diag(np.linalg.qr(Y, mode="r"))))[::-1]
        print(
            f"{eps:>15g}   {np.array2string(s[23:27] / s[0], precision=1):<38} "
            f"{np.array2string(r_kk[23:27], precision=1):<30} {np.sum(s > 1e-8 * s[0]):>7} "
            f"{np.sum(r_kk > 1e-8 * r_kk[0]):>8}"
        )


if __name__ == "__main__":
    main()
