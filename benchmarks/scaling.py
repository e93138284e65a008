"""Time of DRNG, RPNA and the numerical baseline against the number of bodies of a serial chain.

Run: python benchmarks/scaling.py [--out docs/img/scaling.png]

Chains of revolute joints about random axes (benchmarks/table3.py's ``chain``). DRNG is the
compiled kernel (block output) and drng.nullspace (dense basis), RPNA is drng.rpna, the
numerical baseline drng.numerical_nullspace with 20 samples (its stacked regressor has
20 n rows and 10 n columns: its SVD grows as n^3, so it stops at 200 bodies). Writes a log-log
plot of the figures.
"""

from __future__ import annotations

import argparse

import drng
from drng.generator import drng_blocks
from table3 import chain
from timing import best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img/scaling.png")
    args = parser.parse_args()
    sizes = [10, 20, 50, 100, 200, 500, 1000]
    rows = []
    print(f"{'bodies':>6} {'DRNG kernel':>12} {'DRNG dense':>11} {'RPNA':>10} {'numerical':>10}")
    for n in sizes:
        robot = chain(n)
        drng_blocks(robot)
        kernel = best(lambda: drng_blocks(robot), 20)
        dense = best(lambda: drng.nullspace(robot), 3)
        rpna = best(lambda: drng.rpna(robot), 2)
        numerical = drng.numerical_nullspace(robot, samples=20).seconds if n <= 200 else float("nan")
        rows.append((n, kernel, dense, rpna, numerical))
        print(f"{n:>6} {kernel * 1e3:>10.3f}ms {dense * 1e3:>9.3f}ms {rpna * 1e3:>8.1f}ms {numerical * 1e3:>8.1f}ms")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for k, label in enumerate(["DRNG (kernel, block output)", "DRNG (dense basis)", "RPNA", "numerical (20 samples)"], 1):
        ax.loglog([r[0] for r in rows], [r[k] for r in rows], "o-", label=label)
    ax.set_xlabel("bodies in the serial chain")
    ax.set_ylabel("time per call [s]")
    ax.set_title("pga-dyn: nullspace of the regressor, warm")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
