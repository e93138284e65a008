"""A design sweep: the certified nullspace of 10,000 variants of the 2RRU-1RRS parallel machine.

    python benchmarks/sweep.py [--variants 10000] [--jobs 2] [--serial 10000]

Each variant has its own six link lengths, drawn uniformly (seed 0): the crank a_i = |A_i B_i| of
each limb in [0.10, 0.30] m and its rod b_i = |B_i U_i| in [0.35, 0.60] m (the file's machine:
a_i = 0.20, b_i = 0.474-0.505). The base joints A_i and the platform joints U_i stay where they
are; the elbow B_i is where the two circles of radii a_i about A_i and b_i about U_i meet in the
limb's plane, on the outer side as in the file (``pga_dyn.variants.move_joints`` moves it, so the
loops still close at q0). Designs whose circles do not meet cannot be built: they are counted and
drawn again until there are ``--variants`` variants. Every variant goes to ``drng.nullspaces`` (certified, the default), built in the
workers from its offsets, first on the default process pool of ``--jobs`` workers, then in one
process (``jobs=1``) on the first ``--serial`` variants: wall time, time per variant, the
speed-up, and the distribution of the answers (dimensions, refusals with their reasons, warnings);
before them, what one variant costs to send (pickles) and what a worker costs to start.
"""

import argparse
import collections
import functools
import multiprocessing
import os
import pickle
import re
import resource
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import drng
import robots
from drng.batch import Failure, cores
from drng.generator import load_kernels
from pga_dyn.interpreted import compiled_calls
from pga_dyn.progress import reporting
from pga_dyn.variants import move_joints

#: Per limb: the elbow joint moved, the base joint A, the platform joint U (world, at q0, from
#: robots/data/2rru_1rrs.urdf) and the outward direction of the crank in the limb's plane.
LIMBS = (
    ("limb1_R2", (0.0, 0.25, 0.0), (0.0, 0.30, 0.45), (0.0, 1.0, 0.0)),
    ("limb2_R2", (0.0, -0.25, 0.0), (0.0, -0.30, 0.45), (0.0, -1.0, 0.0)),
    ("limb3_R2", (-0.35, 0.0, 0.0), (-0.32, 0.0, 0.45), (-1.0, 0.0, 0.0)),
)
UP = np.array([0.0, 0.0, 1.0])
CRANK, ROD = (0.10, 0.30), (0.35, 0.60)


def elbow(a, b, A, U, out):
    """The elbow B (3,) with |B - A| = a and |U - B| = b in the plane of A, ``out`` and z, on the
    outer side of the line AU; None when the two circles do not meet."""
    A, U, out = np.asarray(A), np.asarray(U), np.asarray(out)
    u = np.array([(U - A) @ out, (U - A) @ UP])  # U in the plane's coordinates (out, up) about A
    d = np.linalg.norm(u)
    if not abs(a - b) < d < a + b:
        return None
    along = (a * a - b * b + d * d) / (2 * d)  # circle intersection: distance from A along AU
    across = np.sqrt(a * a - along * along)
    e = u / d
    p = along * e + across * np.array([e[1], -e[0]])  # the side away from the platform (outer)
    return A + p[0] * out + p[1] * UP


def designs(seed=0):
    """Random link-length designs, without end: (a (3,), b (3,), the offsets of the elbows or None)."""
    rng = np.random.default_rng(seed)
    while True:
        a, b = rng.uniform(*CRANK, 3), rng.uniform(*ROD, 3)
        offsets = {}
        for k, (joint, A, U, out) in enumerate(LIMBS):
            B = elbow(a[k], b[k], A, U, out)
            if B is None:
                offsets = None
                break
            offsets[joint] = B - (np.asarray(A) + 0.20 * np.asarray(out))  # the file's elbow: 0.20 m out
        yield a, b, offsets


def reason(failure: Failure) -> str:
    """The reason of a refusal, without the variant's name and figures."""
    text = failure.message.split(": ", 1)[-1]
    return re.sub(r"[-+]?\d[\d.e+-]*", "#", text)[:110]


def summary(out, title):
    dims = collections.Counter((r.dim, r.status) for r in out if not isinstance(r, Failure))
    refusals = collections.Counter(f"{f.error}: {reason(f)}" for f in out if isinstance(f, Failure))
    print(f"  {title}: {len(out)} variants")
    for (dim, status), count in sorted(dims.items()):
        print(f"    dim {dim:3d} {status:22s} {count:6d}")
    for text, count in refusals.most_common():
        print(f"    refused {count:6d}  {text}")


def timed(label, items, build, jobs, seen):
    shown = [0]

    def listener(step, done, total):  # a line on stderr every tenth of the variants
        if done * 10 // total > shown[0]:
            shown[0] = done * 10 // total
            print(f"    {label}: {done}/{total} after {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

    def cpu():  # this process and its workers (children are counted once the pool has joined them)
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    start, cpu0 = time.perf_counter(), cpu()
    with warnings.catch_warnings(record=True) as caught, reporting(listener):
        warnings.simplefilter("always")
        out = drng.nullspaces(items, build, jobs=jobs, errors="collect")
    wall, used = time.perf_counter() - start, cpu() - cpu0
    seen[label] = collections.Counter(re.sub(r"^robot \d+: [^:]*: ", "", str(w.message))[:90] for w in caught)
    print(
        f"  {label}: {wall:.1f} s wall, {wall / len(items) * 1e3:.2f} ms per variant; CPU {used:.1f} s "
        f"({used / len(items) * 1e3:.2f} ms per variant, workers included)"
    )
    return out, wall, used


def first_call():
    """In a fresh worker: seconds to import pga-dyn and certify one variant (numba's kernels
    loaded from the on-disk cache that the caller filled)."""
    start = time.perf_counter()
    import drng as fresh  # noqa: F401 (timed)

    fresh.nullspace(robots.load("2rru_1rrs"))
    return time.perf_counter() - start


def costs(variant):
    """What a variant costs to send: pickled sizes and times, and a spawned worker's first call."""
    result = drng.nullspace(variant)
    for label, value in (
        ("Robot", robots.load("2rru_1rrs")),
        ("Robot, analysed", variant),
        ("Description", variant.description),
        ("NullspaceResult", result),
    ):
        start = time.perf_counter()
        data = pickle.dumps(value)
        middle = time.perf_counter()
        pickle.loads(data)
        print(
            f"  pickle of a {label}: {len(data) / 1024:.1f} KiB, {(middle - start) * 1e3:.2f} ms to pickle, "
            f"{(time.perf_counter() - middle) * 1e3:.2f} ms to unpickle"
        )
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        print(
            f"  a spawned worker: import and first certified variant {pool.submit(first_call).result():.2f} s "
            "(numba kernels from the on-disk cache)"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=cores())
    parser.add_argument("--serial", type=int, default=None, help="variants run in one process (default: all)")
    args = parser.parse_args()
    base = robots.load("2rru_1rrs")
    build = functools.partial(move_joints, base)
    items, drawn = [], 0
    for _, _, offsets in designs():
        drawn += 1
        if offsets is not None:
            items.append(offsets)
            if len(items) == args.variants:
                break
    print(
        f"2RRU-1RRS, {len(items)} variants: {drawn} link-length designs drawn (seed 0), of which {drawn - len(items)} "
        f"cannot be built (the crank and rod of a limb cannot reach its platform joint); "
        f"{cores()} cores, load average {os.getloadavg()[0]:.2f} at the start"
    )

    load_kernels(build(items[0]))  # DRNG compiled from the first variant on
    with compiled_calls():  # the loops' kernels compiled, not their Python source
        drng.nullspace(build(items[0]))  # compiles, or loads the on-disk cache: not timed
    sample = items[:200]
    t0 = time.perf_counter()
    variants = [build(x) for x in sample]
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in variants:
            drng.nullspace(v)
    t2 = time.perf_counter()
    print(
        f"  one variant in this process: build {(t1 - t0) / len(sample) * 1e3:.2f} ms + certified nullspace "
        f"{(t2 - t1) / len(sample) * 1e3:.2f} ms (mean of {len(sample)})"
    )

    costs(variants[0])

    seen = {}
    pool, pool_s, pool_cpu = timed(f"process pool, jobs={args.jobs}", items, build, args.jobs, seen)
    serial_items = items[: args.serial] if args.serial else items
    serial, serial_s, serial_cpu = timed("one process, jobs=1", serial_items, build, 1, seen)
    per_pool, per_serial = pool_s / len(items), serial_s / len(serial_items)
    print(
        f"  speed-up over one process: {per_serial / per_pool:.2f} (wall time per variant, same run); "
        f"CPU per variant, pool / one process: {pool_cpu / len(items) / (serial_cpu / len(serial_items)):.2f}"
    )
    agree = all(
        (type(p), getattr(p, "dim", None), getattr(p, "status", None))
        == (type(s), getattr(s, "dim", None), getattr(s, "status", None))
        for p, s in zip(pool, serial)
    )
    print(f"  pool and one process agree on every variant both ran: {agree}")
    summary(pool, "answers")
    for label, counts in seen.items():
        print(f"  warnings ({label}): {sum(counts.values())}")
        for text, count in counts.most_common(4):
            print(f"    {count:6d}  {text}")
    print(f"  load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
