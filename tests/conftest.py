"""What every test module shares: tests/ on the path (its helpers: oracle.py, paths.py, ...), and
BLAS on one thread for the whole run and the processes it starts. OpenBLAS's threads spin while
they wait: on the 2-core machine, shared with other work, its default 2 threads made a run of
tests/test_rpna.py, test_regressor.py, test_drng.py and test_base_parameters.py take 23.6 s
instead of 5 s (docs/performance.md, "The test suite"); the library limits only its certificate
(drng.result).

A checkout's first run loads the kernels that ``pip install .`` compiled from the same files
(:func:`pga_dyn.kernel_cache.reuse_in_checkout`) instead of compiling them again (about 80 s of
the first run on the 2-core machine, docs/performance.md, "The test suite")."""

import os
import sys

from threadpoolctl import threadpool_limits

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the command lines, pools and builds the tests start
threadpool_limits(limits=1, user_api="blas")
sys.path.insert(0, os.path.dirname(__file__))


def pytest_configure(config):
    from pga_dyn.kernel_cache import packages_root, reuse_in_checkout

    config.pga_dyn_reused = reuse_in_checkout(packages_root())


def pytest_report_header(config):
    entry = config.pga_dyn_reused
    return f"pga-dyn: numba's cache of this checkout filled from the build cache {entry}" if entry else None
