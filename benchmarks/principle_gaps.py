"""Look for trees where DRNG's generalized principles fall short; count those where the paper's
three principles would have.

Run: python benchmarks/principle_gaps.py [--trials N] [--seed S]

Random trees as users build them (tests/random_trees.py: 1-6 bodies, serial or branched; R, P,
U, S joints with axes along x, y, z or skew, parallel, perpendicular, meeting or coaxial; a
floating base one time in seven; gravity none, along z or skew) are analysed three ways: the
principles alone (``drng.nullspace(robot)``, proven, no sampling), DRNG's certificate
(``certify=True``: pga-dyn's sampled regressor; it completes the basis when the principles fall
short) and Pinocchio's count (10 n minus the rank of its joint-torque regressor stacked over
random states). Every tree where they disagree, the certificate fails or completes the basis,
or the output is not a basis, is printed: none is expected. The summary counts the trees per
joint type and the trees that needed a rule the paper does not have (the vectors whose rule
coincides with none of the paper's equations: the paper's three principles miss them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from random_trees import describe, pinocchio_nullspace, random_tree  # noqa: E402

import drng  # noqa: E402
from drng.principles import RULES  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    short, types, new_rules, families = [], Counter(), 0, Counter()
    for trial in range(args.trials):
        robot = random_tree(lambda options: options[rng.integers(len(options))])
        types.update(set(robot.joint_type[1:]))
        truth, gap, _ = pinocchio_nullspace(robot, seed=trial)
        proven = drng.nullspace(robot)
        certified = drng.nullspace(robot, certify=True, seed=trial)
        problems = []
        if gap < 1e6:
            problems.append(f"Pinocchio's singular gap {gap:.1e}")
        if proven.dim != truth:
            problems.append(f"principles {proven.dim}, Pinocchio {truth}")
        if proven.basis.shape[1] != proven.dim:
            problems.append(f"{proven.basis.shape[1]} vectors of rank {proven.dim}")
        if not certified.certified or not certified.geometric or certified.dim != proven.dim:
            problems.append(
                f"certificate: {certified.status}, dim {certified.dim}, short {certified.certificate['short']}"
            )
        if problems:
            short.append((trial, "; ".join(problems), describe(robot)))
        new = Counter(RULES[code].name for _, code in proven.codes if RULES[code].equation is None)
        new_rules += bool(new)
        families.update(new)
    seconds = time.perf_counter() - start
    print(
        f"{args.trials} random trees (seed {args.seed}) in {seconds:.0f} s; trees with a joint of type: "
        + ", ".join(f"{t} {types[t]}" for t in "RPUSF")
    )
    print(f"principles short of Pinocchio or of the certificate, or not a basis: {len(short)}")
    for trial, problem, tree in short:
        print(f"  tree {trial}: {problem}: {tree}")
    print(
        f"trees that needed a rule the paper does not have: {new_rules} ({100 * new_rules / args.trials:.1f} %); "
        "vectors by rule: " + ", ".join(f"{name} {k}" for name, k in families.most_common())
    )


if __name__ == "__main__":
    main()
