"""Time to draw valid states of the parallel kinematic machines and to evaluate their regressors.

Run: python benchmarks/sampling.py [--samples N]

For each built-in PKM: draw N valid states (q_a uniform in the default bounds, assembled by
Newton's method, cond(J_p) < 30; DRNG paper section 6.3), then evaluate the regressors of all
of them (N x 3 rows, 70 columns). The paper's MATLAB figures for its whole numerical check
(sampling, regressors and QR) were 46.36 s (2RRU-1RRS) and 41.79 s (2PRS-1PSR).
"""

from __future__ import annotations

import argparse
import time

import robots
from pga_dyn.interpreted import compiled_calls
from pga_dyn.sampling import sample_states

PAPER = {"2rru_1rrs": 46.36, "2prs_1psr": 41.79}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    print(f"{'robot':<10} {'valid':>6} {'drawn':>6} {'sampling':>10} {'regressors':>11} {'total':>8} {'paper':>8}")
    for name, paper in PAPER.items():
        robot = robots.load(name)
        with compiled_calls():  # compiled (a first call would run the kernels' Python source)
            sample_states(robot, 2, seed=0).regressor()  # compile / load the cache
        t0 = time.perf_counter()
        states = sample_states(robot, args.samples, seed=1)
        t1 = time.perf_counter()
        states.regressor()
        t2 = time.perf_counter()
        print(
            f"{name:<10} {len(states):>6} {states.drawn:>6} {t1 - t0:>9.2f}s {t2 - t1:>10.3f}s "
            f"{t2 - t0:>7.2f}s {paper:>7.2f}s"
        )


if __name__ == "__main__":
    main()
