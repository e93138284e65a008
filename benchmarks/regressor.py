"""Time per sample of the batched TP regressor against Pinocchio's computeJointTorqueRegressor.

Run: python benchmarks/regressor.py [--samples N] [--repeat R]

Both are measured in the same run on the same random states. pga-dyn evaluates the batch in
one compiled call, once into a fresh array and once into a reused buffer (``out=``), and one
state per call ("single": ``pga_dyn.regressor(robot, q, qd, qdd)`` in a Python loop, what a
user calling it per state pays, validation included); Pinocchio is called once per sample from
Python (its usual use), on its own model of the same robot file. The single-state loops of
pga-dyn and Pinocchio (at most 500 states) alternate in each repeat, so that the load of the
machine weighs on both alike. Compilation is excluded (one warm-up call). The figure is the
best of R repeats.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from oracle import Oracle, random_states  # noqa: E402
from timing import best  # noqa: E402

import pga_dyn  # noqa: E402
import robots  # noqa: E402
from pga_dyn.interpreted import compiled_calls  # noqa: E402


def measure(name, samples, repeat):
    import pinocchio as pin

    robot = robots.load(name)
    path = os.path.join(os.path.dirname(robots.__file__), "data", f"{name}.urdf")
    oracle = Oracle(robot, path)
    Q, QD, QDD = random_states(robot, samples, seed=0)
    with compiled_calls():  # compiled (a first small batch would run the kernel's Python source)
        pga_dyn.regressor(robot, Q[:2], QD[:2], QDD[:2])  # compile / load the cache
    pga_dyn.regressor(robot, Q[0], QD[0], QDD[0])
    out = np.empty((samples, robot.nq, 10 * robot.n))
    fresh = best(lambda: pga_dyn.regressor(robot, Q, QD, QDD), repeat) / samples
    reused = best(lambda: pga_dyn.regressor(robot, Q, QD, QDD, out=out), repeat) / samples
    model, data = oracle.model, oracle.data
    states = [oracle.to_pinocchio(Q[s], QD[s], QDD[s])[:3] for s in range(samples)]
    ours = [(Q[s], QD[s], QDD[s]) for s in range(min(samples, 500))]
    regressor = pga_dyn.regressor

    def run_pin(count):
        for q, v, a in states[:count]:
            pin.computeJointTorqueRegressor(model, data, q, v, a)

    def run_single():
        for q, qd, qdd in ours:
            regressor(robot, q, qd, qdd)

    pinocchio = best(lambda: run_pin(samples), repeat) / samples
    single = pin_single = np.inf
    for _ in range(max(1, repeat)):  # alternate the two single-state loops
        single = min(single, best(run_single, 1) / len(ours))
        pin_single = min(pin_single, best(lambda: run_pin(len(ours)), 1) / len(ours))
    return robot, fresh, reused, pinocchio, single, pin_single


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"samples per batch: {args.samples}, best of {args.repeat}")
    print(
        f"{'robot':<10} {'n_a x 10n':>10} {'TP fresh':>10} {'TP out=':>10} {'Pinocchio':>10} "
        f"{'ratio fresh':>12} {'ratio out=':>11} {'TP single':>10} {'Pin single':>11} {'ratio single':>12}"
    )
    for name in ("puma560", "go2"):
        robot, fresh, reused, pinocchio, single, pin_single = measure(name, args.samples, args.repeat)
        print(
            f"{name:<10} {f'{robot.nq}x{10 * robot.n}':>10} {fresh * 1e6:>8.2f}us {reused * 1e6:>8.2f}us "
            f"{pinocchio * 1e6:>8.2f}us {fresh / pinocchio:>12.2f} {reused / pinocchio:>11.2f} "
            f"{single * 1e6:>8.2f}us {pin_single * 1e6:>9.2f}us {single / pin_single:>12.2f}"
        )


if __name__ == "__main__":
    main()
