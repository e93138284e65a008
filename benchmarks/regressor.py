"""Time per sample of the batched TP regressor against Pinocchio's computeJointTorqueRegressor.

Run: python benchmarks/regressor.py [--samples N] [--repeat R]

Both are measured in the same run on the same random states. pga-dyn evaluates the batch in
one compiled call, once into a fresh array and once into a reused buffer (``out=``), and one
state per call ("single": what a user calling it in a loop pays, validation included);
Pinocchio is called once per sample from Python (its usual use), on its own model of the same
robot file. Compilation is excluded (one warm-up call). The figure is the best of R repeats.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import pga_dyn  # noqa: E402
import robots  # noqa: E402
from oracle import Oracle, random_states  # noqa: E402
from timing import best  # noqa: E402


def measure(name, samples, repeat):
    robot = robots.load(name)
    path = os.path.join(os.path.dirname(robots.__file__), "data", f"{name}.urdf")
    oracle = Oracle(robot, path)
    Q, QD, QDD = random_states(robot, samples, seed=0)
    pga_dyn.regressor(robot, Q[:2], QD[:2], QDD[:2])  # compile / load the cache
    out = np.empty((samples, robot.nq, 10 * robot.n))
    fresh = best(lambda: pga_dyn.regressor(robot, Q, QD, QDD), repeat) / samples
    reused = best(lambda: pga_dyn.regressor(robot, Q, QD, QDD, out=out), repeat) / samples
    states = [oracle.to_pinocchio(Q[s], QD[s], QDD[s])[:3] for s in range(samples)]
    import pinocchio as pin

    model, data = oracle.model, oracle.data

    def run_pin():
        for q, v, a in states:
            pin.computeJointTorqueRegressor(model, data, q, v, a)

    pinocchio = best(run_pin, repeat) / samples
    # one state per call, from Python, argument validation included (the API overhead)
    calls = range(min(samples, 500))
    single = best(lambda: [pga_dyn.regressor(robot, Q[s], QD[s], QDD[s]) for s in calls], repeat) / len(calls)
    return robot, fresh, reused, pinocchio, single


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"samples per batch: {args.samples}, best of {args.repeat}")
    print(f"{'robot':<10} {'n_a x 10n':>10} {'TP fresh':>10} {'TP out=':>10} {'Pinocchio':>10} "
          f"{'ratio fresh':>12} {'ratio out=':>11} {'TP single':>10} {'ratio single':>12}")
    for name in ("puma560", "go2"):
        robot, fresh, reused, pinocchio, single = measure(name, args.samples, args.repeat)
        print(f"{name:<10} {f'{robot.nq}x{10 * robot.n}':>10} {fresh * 1e6:>8.2f}us {reused * 1e6:>8.2f}us "
              f"{pinocchio * 1e6:>8.2f}us {fresh / pinocchio:>12.2f} {reused / pinocchio:>11.2f} "
              f"{single * 1e6:>8.2f}us {single / pinocchio:>12.2f}")


if __name__ == "__main__":
    main()
