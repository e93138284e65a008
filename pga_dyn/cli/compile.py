"""``pga-dyn compile``: every numba kernel into numba's on-disk cache (``pip install .`` runs it)."""

from __future__ import annotations

import sys


def register(sub) -> None:
    parser = sub.add_parser(
        "compile",
        help="compile every kernel into numba's on-disk cache (pip install . does it)",
        description="Compile every numba kernel of pga-dyn into numba's on-disk cache, so that no later command "
        "compiles. `pip install .` runs it; run it after installing a wheel built on another machine, "
        "or when building a container image.",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def compile_kernels() -> list:
    """Compile every numba kernel of pga-dyn into numba's on-disk cache and return their names.

    Runs the paths that reach each kernel on built-in robots: the DRNG kernel and the poses at
    q0 (puma560), the sampled regressor, the certificate and the numerical baseline's pivoted
    QR (puma560), the loop
    closure (2rru_1rrs: assembly, loop Jacobians and their motion, a record assembled along itself
    and projected), a single-state regressor.
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

    from .. import regressor
    from ..loops import constraints
    from ..sampling import projected_states, record_states

    tree = robots.load("puma560")
    drng.nullspace(tree, certify=True)
    drng.numerical_nullspace(tree, samples=20)
    q = np.zeros(tree.nq)
    regressor(tree, q, q, q)
    pkm = robots.load("2rru_1rrs")
    drng.nullspace(pkm)
    q_a = np.tile(constraints(pkm).z_ref[: len(pkm.actuated)], (2, 1))  # a record: from the reference, then on
    record = record_states(pkm, [0.0, 1.0], q_a, 0 * q_a, 0 * q_a)
    projected_states(pkm, record.q, q_a, 0 * q_a, 0 * q_a)
    names = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("pga_dyn", "drng", "robots"):
            names += [
                f"{name}.{attr}"
                for attr, value in vars(module).items()
                if isinstance(value, CPUDispatcher) and value.__module__ == name and value.signatures
            ]
    return sorted(names)


def run(args, out) -> int:
    import time

    start = time.perf_counter()
    names = compile_kernels()
    print(
        f"{len(names)} kernels compiled or loaded from numba's cache in {time.perf_counter() - start:.1f} s", file=out
    )
    return 0
