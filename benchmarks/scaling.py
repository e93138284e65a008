"""Time of DRNG, RPNA and the numerical baseline against the number of bodies of a serial chain.

Run: python benchmarks/scaling.py [--sizes 10 100 1000 10000] [--out docs/img/scaling.png]

Chains of revolute joints about random axes (benchmarks/table3.py's ``chain``). DRNG is timed
three ways: the compiled kernel alone (block output, arrays ready), end to end on a robot whose
derived values are not computed yet (poses at q0, kernel arrays, the kernel, the proven
dimension; ``drng.generator.drng_blocks``, O(n) memory), and ``drng.nullspace(robot).dim`` on
a robot with its arrays computed (the result in block form; the dense 10 n x K basis is built
only when ``basis`` is read). RPNA is ``drng.rpna`` (its result in block form too), the numerical
baseline drng.numerical_nullspace with 20 samples (its stacked regressor has 20 n rows and 10 n
columns: its SVD grows as n^3, so it stops at 200 bodies), the certificate
``drng.nullspace(robot, certify=True)`` (default samples: 30 for a tree; up to ``--cert-max``
bodies: the sampling's dq/dq_a, samples x n^2, outgrows the memory limit beyond 2000). Then RPNA on
chains whose every second joint is universal (U joints split through virtual bodies), up to
``--u-max`` bodies. Writes a log-log plot of the figures.
"""

from __future__ import annotations

import argparse
import time

from table3 import chain
from timing import best

import drng
from drng.generator import drng_blocks, load_kernels

NAN = float("nan")


def end_to_end(n):
    """Best of two: DRNG on a fresh chain of n bodies (nothing cached), blocks and dimension."""
    times = []
    for seed in (1, 2):
        robot = chain(n, seed)
        start = time.perf_counter()
        bodies, vals, prov = drng_blocks(robot)
        dim = bodies.shape[0]  # proven on a tree: the vectors are a basis
        times.append(time.perf_counter() - start)
    return min(times), dim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000])
    parser.add_argument("--cert-max", type=int, default=1000, help="largest chain certified")
    parser.add_argument("--u-max", type=int, default=1000, help="largest R-U chain given to RPNA")
    parser.add_argument("--out", default="docs/img/scaling.png")
    args = parser.parse_args()
    load_kernels(chain(3))  # the compiled kernels (a first call would run their Python source)
    rows = []
    print(
        f"{'bodies':>6} {'dim':>6} {'DRNG kernel':>12} {'end to end':>11} {'nullspace':>11} {'RPNA dim':>9} "
        f"{'RPNA':>10} {'numerical':>10} {'certificate':>12}"
    )
    for n in args.sizes:
        robot = chain(n)
        drng_blocks(robot)
        kernel = best(lambda: drng_blocks(robot), 20)
        total, dim = end_to_end(n)
        dense = best(lambda: drng.nullspace(robot).dim, 3)
        rpna_result = drng.rpna(robot)
        rpna = best(lambda: drng.rpna(robot), 1)
        numerical = drng.numerical_nullspace(robot, samples=20).seconds if n <= 200 else NAN
        certificate = NAN
        if n <= args.cert_max:
            checked = drng.nullspace(robot, certify=True)
            assert checked.status == "proven and certified", checked.certificate
            certificate = best(lambda: drng.nullspace(robot, certify=True), 3 if n <= 200 else 1)
        rows.append((n, kernel, total, dense, rpna, numerical, certificate))
        print(
            f"{n:>6} {dim:>6} {kernel * 1e3:>10.3f}ms {total * 1e3:>9.3f}ms {dense * 1e3:>9.3f}ms "
            f"{rpna_result.dim:>9} {rpna * 1e3:>8.1f}ms {numerical * 1e3:>8.1f}ms {certificate * 1e3:>10.1f}ms"
        )
    print(f"\n{'bodies':>6} {'dim':>6} {'RPNA, R-U chain':>16}")
    for n in [n for n in args.sizes if n <= args.u_max]:
        robot = chain(n, universal=True)
        dim = drng.rpna(robot).dim
        assert dim == drng.nullspace(robot).dim
        print(f"{n:>6} {dim:>6} {best(lambda: drng.rpna(robot), 1) * 1e3:>14.1f}ms")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    labels = [
        "DRNG (kernel, block output)",
        "DRNG end to end",
        "drng.nullspace",
        "RPNA",
        "numerical (20 samples)",
        "certificate",
    ]
    for k, label in enumerate(labels, 1):
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
