"""Find the robots where the three principles of DRNG fall short, and by how much.

Run: python benchmarks/principle_gaps.py [--trials N] [--seed S]

Random serial chains (1-4 joints, R or P, axes along x, y, z or a skew direction, offsets of
0 or 0.3 m, gravity (0, 0, -9.81) or none, fixed or floating base) are analysed with
drng.nullspace(certify=True). Every chain whose certified basis needed numerical completion is
printed once per structure: the chain (joint type + axis: x, y, z, d = skew), gravity (g or
g0), base, the rank of the principles' basis, the certified dimension and the bodies the
missing directions live on. docs/drng.md lists the cases.
"""

from __future__ import annotations

import argparse

import numpy as np

import drng
from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot

AXES = {"z": (0, 0, 1), "x": (1, 0, 0), "y": (0, 1, 0), "d": (0.6, 0, 0.8)}


def random_chain(rng):
    n = int(rng.integers(1, 5))
    links, joints, name = [LinkSpec("base")], [], []
    for k in range(n):
        kind = str(rng.choice(["R", "R", "P"]))
        axis = str(rng.choice(list(AXES)))
        links.append(LinkSpec(f"l{k}", Inertial(1.0 + k, rng.normal(size=3) * 0.1, np.diag([0.3, 0.4, 0.5]))))
        origin = np.eye(4)
        origin[:3, 3] = rng.choice([0.0, 0.3], size=3)
        joints.append(JointSpec(f"j{k}", kind, links[k].name, f"l{k}", origin, np.array([AXES[axis]], float)))
        name.append(kind + axis)
    gravity = [(0.0, 0.0, -9.81), (0.0, 0.0, 0.0)][int(rng.integers(0, 2))]
    floating = bool(rng.integers(0, 2))
    robot = Robot("-".join(name), links, joints, gravity=gravity, floating_base=floating)
    return robot, ("-".join(name), "g" if any(gravity) else "g0", "floating" if floating else "fixed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    found = {}
    for _ in range(args.trials):
        robot, key = random_chain(rng)
        result = drng.nullspace(robot, certify=True, samples=60)
        if not result.certified:
            print("NOT CERTIFIED", key, result.certificate)
        elif not result.geometric and key not in found:
            found[key] = (result.certificate["rank_drng"], result.dim, ", ".join(result.certificate["short"]))
    print(f"{len(found)} structures of {args.trials} random chains need numerical completion:")
    print(f"{'chain':<16} {'gravity':<7} {'base':<8} {'principles':>10} {'certified':>9}  short bodies")
    for (chain, gravity, base), (principles, certified, short) in sorted(found.items()):
        print(f"{chain:<16} {gravity:<7} {base:<8} {principles:>10} {certified:>9}  {short}")


if __name__ == "__main__":
    main()
