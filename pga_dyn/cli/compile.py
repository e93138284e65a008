"""``pga-dyn compile``: every numba kernel into numba's on-disk cache (``pip install .`` runs it).

With ``--reuse`` (what the build step of ``pip install .`` runs, setup.py) it first copies the
cache files an earlier build of the same packages compiled from the build cache
(:mod:`pga_dyn.kernel_cache`), and afterwards stores what it compiled there: the second ``pip
install`` of the same sources on the same machine loads the kernels instead of compiling them.
"""

from __future__ import annotations

import os
import sys

from ..errors import PgaDynError
from ..kernel_cache import (
    PACKAGES,
    build_cache_folder,
    build_cache_key,
    packages_root,
    prune_entries,
    restore_kernels,
    store_kernels,
)


def register(sub) -> None:
    parser = sub.add_parser(
        "compile",
        help="compile every kernel into numba's on-disk cache (pip install . does it)",
        description="Compile every numba kernel of pga-dyn into numba's on-disk cache, so that no later command "
        "compiles. `pip install .` runs it; run it after installing a wheel built on another machine, "
        "or when building a container image.",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="first copy the kernels an earlier run compiled for the same files of pga-dyn, numba, numpy, "
        "Python and CPU from the build cache ($XDG_CACHE_HOME/pga-dyn/kernels or ~/.cache/pga-dyn/kernels), "
        "then store the compiled kernels there (the build step of `pip install .` does this); needs numba's "
        "cache beside the sources (NUMBA_CACHE_DIR unset, the packages' folders writable)",
    )
    parser.set_defaults(func=run)


def compile_kernels() -> list:
    """Compile every numba kernel of pga-dyn into numba's on-disk cache and return their names.

    Runs the paths that reach each kernel on built-in robots, inside
    :func:`pga_dyn.interpreted.compiled_calls` (a process's first calls may run a kernel as Python):
    the DRNG kernels (2rru_1rrs, called directly: :func:`pga_dyn.interpreted.runner`), the
    tree kinematics and the sampled regressor, the certificate and the numerical baseline's pivoted
    QR (puma560), the loop
    closure (2rru_1rrs: assembly, a record assembled along itself and projected, with the loop
    Jacobians and their motion into work arrays), a single-state regressor.
    Each kernel has one signature (docs/performance.md), so what is compiled here is what every
    later call loads. The cache is numba's: ``__pycache__`` beside the sources when it is
    writable, else ``NUMBA_CACHE_DIR`` or the user's cache folder. ``pip install .`` runs this
    on the files it installs (setup.py), so the installed package carries its compiled kernels
    for the machine it was installed on. Returns the qualified names of the kernels this process
    compiled or loaded from the cache (the helpers inside a kernel are named only when compiled).
    """
    import numpy as np
    from numba.core.registry import CPUDispatcher

    import drng
    import robots
    from drng.generator import load_kernels

    from .. import regressor
    from ..contacts import contact_frames, contact_terms
    from ..interpreted import compiled_calls
    from ..loops import constraints
    from ..sampling import projected_states, record_states

    with compiled_calls():  # the loops' and the regressor's kernels compiled, not run as Python on first calls
        tree = robots.load("puma560")
        drng.nullspace(tree, certify=True)
        drng.numerical_nullspace(tree, samples=20)
        q = np.zeros(tree.nq)
        regressor(tree, q, q, q)
        legged = robots.load("go2")
        contact_terms(legged, contact_frames(legged, ["FL_foot"]), np.zeros((1, legged.nq)), np.zeros((1, 1, 3)))
        pkm = robots.load("2rru_1rrs")
        drng.nullspace(pkm)
        load_kernels(pkm)  # a process's first calls run DRNG's kernels as Python (pga_dyn.interpreted)
        q_a = np.tile(constraints(pkm).z_ref[: len(pkm.actuated)], (2, 1))  # a record: from the reference, then on
        record = record_states(pkm, [0.0, 1.0], q_a, 0 * q_a, 0 * q_a)
        projected_states(pkm, record.q, q_a, 0 * q_a, 0 * q_a)
    names = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in PACKAGES:
            names += [
                f"{name}.{attr}"
                for attr, value in vars(module).items()
                if isinstance(value, CPUDispatcher) and value.__module__ == name and value.signatures
            ]
    return sorted(names)


class _CompileCounter:
    """Counts numba's compile events (nested ones included) while it is registered."""

    def __init__(self):
        from numba.core import event

        class Listener(event.Listener):
            def on_start(inner, ev):
                pass

            def on_end(inner, ev):
                self.count += 1

        self.count = 0
        self.listener = Listener()
        event.register("numba:compile", self.listener)

    def close(self):
        from numba.core import event

        event.unregister("numba:compile", self.listener)


def run(args, out) -> int:
    import time

    start = time.perf_counter()
    root, entry, restored = packages_root(), None, False
    if args.reuse:
        if os.environ.get("NUMBA_CACHE_DIR"):
            raise PgaDynError(
                "pga-dyn compile --reuse copies numba's cache files beside the sources: unset NUMBA_CACHE_DIR"
            )
        entry = os.path.join(build_cache_folder(), build_cache_key(root))
        restored = restore_kernels(root, entry)
    counter = _CompileCounter()
    try:
        names = compile_kernels()
    finally:
        counter.close()
    source = f"; from the build cache {entry}" if restored else ""
    print(
        f"{len(names)} kernels compiled or loaded from numba's cache in {time.perf_counter() - start:.1f} s "
        f"({counter.count} compiled{source})",
        file=out,
    )
    if entry is not None and (counter.count or not restored):
        try:
            stored = store_kernels(root, entry)
        except OSError as exc:  # a read-only or full cache folder: the build itself is done
            print(f"could not store the kernels in the build cache {entry}: {exc}", file=out)
        else:
            print(f"{stored} cache files stored in the build cache {entry}", file=out)
            prune_entries(os.path.dirname(entry))
    return 0
