"""The one timing helper of the benchmarks."""

import time


def best(fn, repeat: int) -> float:
    """The best wall time in seconds of ``repeat`` calls of ``fn()``."""
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
