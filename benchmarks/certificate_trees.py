"""The certificate on the large example-robot-data files, against a Pinocchio peer.

Run: python benchmarks/certificate_trees.py

For each file (those of the list that the installed example-robot-data has): the time to load
it, DRNG alone (warm), the certificate (``drng.nullspace(robot, certify=True)``, warm: the
compiled kernels are loaded by a first call on UR5), the certified dimension, whether it is
certified, the singular gap with the smallest kept and largest dropped singular values of the
column-scaled sampled regressor (relative to the largest). The peer, in the same run, on the
same valid states as the certificate's rank: Pinocchio's joint-torque regressor of each state
(projected by dq/dq_a for the files with mimic joints), stacked, columns scaled to unit norm,
and its rank read from the diagonal of a LAPACK pivoted QR (scipy.linalg.qr, pivoting=True):
|R_kk| > 1e-10 |R_11|. Both run with one BLAS thread. ratio = certificate / peer.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from oracle import Oracle, erd_path  # noqa: E402

import drng  # noqa: E402
from drng.certify import default_samples  # noqa: E402
from drng.generator import load_kernels  # noqa: E402
from drng.numerical import SAMPLED_RTOL, stacked_regressor  # noqa: E402
from robots.urdf import load_urdf  # noqa: E402

FILES = [  # (file, floating base)
    ("romeo_description/urdf/romeo.urdf", True),
    ("talos_data/robots/talos_reduced.urdf", False),
    ("talos_data/robots/talos_full_v2.urdf", False),
    ("baxter_description/urdf/baxter.urdf", False),
    ("pr2_description/urdf/pr2.urdf", False),
    ("tiago_description/robots/tiago.urdf", False),
    ("tiago_description/robots/tiago_dual.urdf", False),
    ("jvrc_description/urdf/jvrc1.urdf", False),
]


def peer(robot, path, samples, seed=0):
    """Pinocchio's stacked regressor of the certificate's valid states (the same draw) and its
    rank by pivoted QR; returns (seconds without the sampling, 10 n - rank)."""
    import scipy.linalg
    from threadpoolctl import threadpool_limits

    states = stacked_regressor(robot, samples, seed)[1]  # the certificate's draw
    oracle = Oracle(robot, path)
    with threadpool_limits(limits=1, user_api="blas"):
        start = time.perf_counter()
        Y = np.vstack(
            [states.G[s].T @ oracle.regressor(states.q[s], states.qd[s], states.qdd[s]) for s in range(len(states))]
        )
        norms = np.linalg.norm(Y, axis=0)
        zero = norms <= 1e-9 * norms.max()  # columns of round-off only (as the certificate)
        scaled = np.where(zero, 0.0, Y / np.where(zero, 1.0, norms))
        R = scipy.linalg.qr(scaled, mode="r", pivoting=True)[0]
        diag = np.abs(np.diag(R))
        rank = int(np.sum(diag > SAMPLED_RTOL * diag[0]))
        seconds = time.perf_counter() - start
    return seconds, 10 * robot.n - rank


def main():
    ur5 = load_urdf(erd_path("ur_description/urdf/ur5_robot.urdf"))
    load_kernels(ur5)  # the compiled DRNG kernels (a first call would run their Python source)
    drng.nullspace(ur5, certify=True)  # load the kernels
    print(
        "| file | bodies | couplings | load | DRNG | certificate | dim (principles) | certified | gap | "
        "smallest kept / largest dropped | samples | Pinocchio + pivoted QR | peer dim | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for relative, floating in FILES:
        try:
            path = erd_path(relative)
        except BaseException:  # erd_path skips (pytest's Skipped) when the file is not installed
            continue
        start = time.perf_counter()
        robot = load_urdf(path, floating_base=floating)
        load = time.perf_counter() - start
        drng.nullspace(robot, certify=False)
        plain = drng.nullspace(robot, certify=False)  # the principles alone
        start = time.perf_counter()
        result = drng.nullspace(robot, certify=True)
        cert = time.perf_counter() - start
        c = result.certificate
        peer_seconds, peer_dim = peer(robot, path, default_samples(robot))
        name = relative.split("/")[-1] + (" --floating" if floating else "")
        print(
            f"| {name} | {robot.n} | {len(robot.couplings)} | {load:.2f} s | {plain.seconds * 1e3:.2f} ms | "
            f"{cert:.2f} s | {result.dim} ({plain.dim}) | {result.certified} | {c['gap']:.1e} | "
            f"{c['smallest_kept']:.1e} / {c['largest_dropped']:.1e} | {c['samples']} | {peer_seconds:.2f} s | "
            f"{peer_dim} | {cert / peer_seconds:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
