"""DRNG over many robots: a design sweep on a process pool, or on a Dask cluster.

:func:`nullspaces` is :func:`drng.nullspace` over a list of robots (or of anything a ``build``
function turns into one, in the worker), with the conventions of ``concurrent.futures`` and
joblib: results in the order of the input, work sent in chunks, a worker count, an executor of
the caller's (a Dask ``Client`` included), errors raised or collected. docs/sweeps.md shows a
sweep of a parallel machine's link lengths; docs/performance.md its figures.
"""

from __future__ import annotations

import inspect
import math
import multiprocessing
import os
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pga_dyn.errors import PgaDynError
from pga_dyn.model import Description, Robot
from pga_dyn.progress import report, reporting

from .generator import nullspace

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from concurrent.futures import Executor

    from distributed import Client

#: Most robots in one task (a chunk): with 32 certified parallel machines of tens of milliseconds
#: each, the pool spent the same CPU per robot as one process (docs/performance.md, "Sweeps over
#: many robots"); fewer would add tasks, more would balance the workers worse and report
#: progress less often.
MAX_CHUNK = 32
#: The options of :func:`drng.nullspace` that :func:`nullspaces` passes on.
OPTIONS = tuple(inspect.signature(nullspace).parameters)[1:]
ERRORS = ("raise", "collect")


@dataclass(frozen=True)
class Failure:
    """A robot of a batch that failed: its ``index`` in the input, its ``robot`` name (or, when
    it could not be built, the item it was built from), its ``source`` file (None when it has
    none), the exception's ``error`` type, ``message`` and the worker's ``traceback`` (text);
    ``input_error`` is True when the exception is a PgaDynError (bad input, e.g. a variant whose
    loops cannot close), False for anything else (a bug: report it)."""

    index: int
    robot: str
    source: str | None
    error: str
    message: str
    traceback: str
    input_error: bool

    def __str__(self) -> str:
        where = f"{self.robot!r}" + (f", {self.source}" if self.source else "")
        return f"robot {self.index} ({where}): {self.error}: {self.message}"

    def exception(self) -> Exception:
        """The exception :func:`nullspaces` raises for it: a PgaDynError naming the robot for bad
        input, else a RuntimeError with the worker's traceback."""
        if self.input_error:
            return PgaDynError(str(self))
        return RuntimeError(f"{self}\n\nTraceback in the worker:\n{self.traceback}")


def _label(item) -> tuple:
    """(name, source) of an item for messages, before or without building it."""
    if isinstance(item, (Robot, Description)):
        return item.name, item.source
    if isinstance(item, (str, os.PathLike)):
        return os.fspath(item), os.fspath(item)
    text = repr(item)
    return (text if len(text) <= 80 else text[:77] + "..."), None


def run_chunk(start: int, items: list, build: Callable[[Any], Robot] | None, options: dict) -> list:
    """What a worker does with one chunk: ``(result or Failure, warnings)`` per item, in order.
    ``warnings`` are the (category, message) pairs the item raised, for the caller to re-issue."""
    out = []
    for index, item in enumerate(items, start):
        name, source = _label(item)
        with warnings.catch_warnings(record=True) as caught, reporting(None):
            warnings.simplefilter("always")
            try:
                robot = build(item) if build is not None else item.build() if isinstance(item, Description) else item
                if not isinstance(robot, Robot):
                    raise PgaDynError(
                        f"expected a Robot, a Description or build= to make one, got {type(robot).__name__}"
                    )
                name, source = robot.name, robot.source
                value = nullspace(robot, **options)
            except Exception as error:  # recorded with its traceback; raised by the caller if asked
                value = Failure(
                    index,
                    name,
                    source,
                    type(error).__name__,
                    str(error),
                    traceback.format_exc(),
                    isinstance(error, PgaDynError),
                )
        out.append((value, [(w.category, str(w.message)) for w in caught]))
    return out


def _one_blas_thread_per_worker():
    """Pool initializer: one BLAS thread per worker, so that ``jobs`` workers use ``jobs`` cores."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _positive(name, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise PgaDynError(f"{name} must be a positive integer or None, got {value!r}")


def nullspaces(
    items: Iterable[Any],
    build: Callable[[Any], Robot] | None = None,
    *,
    jobs: int | None = None,
    chunksize: int | None = None,
    errors: str = "raise",
    executor: Executor | Client | None = None,
    **options: Any,
) -> list:
    """:func:`drng.nullspace` of every robot of ``items``, in parallel, in the input's order.

    Parameters
    ----------
    items : iterable
        Robots, their :class:`~pga_dyn.model.Description` (built in the worker: a few kilobytes
        to send), or anything ``build`` turns into a Robot (file paths, design parameters).
    build : callable, optional
        ``build(item) -> Robot``, run in the worker; it must pickle (a module-level function, a
        ``functools.partial`` of one), e.g. ``robots.load_file`` for paths or
        ``functools.partial(pga_dyn.variants.move_joints, robot)`` for joint offsets.
    jobs : int, optional
        Worker processes of the default pool (default :func:`cores`); 1 runs every robot
        in this process, no pool. Not with ``executor`` (it has its own workers).
    chunksize : int, optional
        Robots per task (default ``min(MAX_CHUNK, ceil(N / (4 workers)))``, N the robots after
        the first).
    errors : {"raise", "collect"}
        "raise": the first robot (by index) that fails raises, naming it (index, name, file):
        a PgaDynError for bad input, a RuntimeError with the worker's traceback otherwise; the
        tasks not started are cancelled. "collect": its entry of the result is a
        :class:`Failure` instead, and the others go on.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chunks run; default a ``ProcessPoolExecutor`` of ``jobs`` workers started by
        "spawn" (the same on every platform; a fork of a process that runs threads, as BLAS and
        numba may, is unsafe: Python warns of it since 3.12), each limited to one BLAS thread. A Dask ``Client`` (``pip install
        ".[dask]"``) runs them on its cluster (``client.get_executor(pure=False)``). Workers should
        be processes of one thread each: threads gain nothing (the work holds the GIL) and mix up
        the robots' warnings (catching them is process-wide). A task that fails as a whole (a
        worker died, an item did not pickle) raises a RuntimeError naming its robots.
    **options
        :func:`drng.nullspace`'s keywords (certify, samples, seed, bounds, budget, memory), the
        same for every robot.

    Returns
    -------
    list
        One entry per item, in order: its :class:`~drng.result.NullspaceResult` (equal to
        ``drng.nullspace(robot, **options)`` in this process: the sampling is seeded), or a
        :class:`Failure` (``errors="collect"``). The warnings a robot raised are re-issued here,
        in order, prefixed with its index.

    Notes
    -----
    The first robot runs in this process before any worker starts: it fails fast, and it
    compiles the numba kernels into their on-disk cache if they are not there yet, so that the
    workers load them (about a second each) instead of each compiling them (tens of seconds;
    docs/performance.md). Robots that need other kernels (a tree among parallel machines)
    compile them in each worker on first use. Workers on other machines (a Dask cluster) fill
    their own cache on their first robot. Progress goes to :mod:`pga_dyn.progress` as step
    "nullspaces", counted in robots, after each chunk; the robots' own steps are not reported.
    """
    _check_arguments(build, jobs, chunksize, errors, executor, options)
    items = list(items)
    results = []

    def collect(chunk):
        for value, caught in chunk:
            index = len(results)
            for category, message in caught:
                warnings.warn(f"robot {index}: {message}", category, stacklevel=3)
            if isinstance(value, Failure) and errors == "raise":
                raise value.exception()
            results.append(value)
        report("nullspaces", len(results), len(items))

    if not items:
        return results
    collect(run_chunk(0, items[:1], build, options))  # fail fast; fills numba's cache for the workers
    workers = jobs if jobs is not None else cores()  # an executor's own: as many as here
    chunks = _chunks(items[1:], workers, chunksize)
    if not chunks:
        return results
    if executor is None and workers == 1:
        runs = (run_chunk(start, chunk, build, options) for start, chunk in chunks)
    else:
        runs = _pooled(executor, workers, chunks, build, options)
    with closing(runs):  # a robot that raises closes the pool (cancels the tasks not started)
        for done in runs:
            collect(done)
    return results


def _check_arguments(build, jobs, chunksize, errors, executor, options) -> None:
    """PgaDynError naming the argument of :func:`nullspaces` that is wrong."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise PgaDynError(
            f"nullspaces: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(drng.nullspace takes {', '.join(OPTIONS)})"
        )
    if errors not in ERRORS:
        raise PgaDynError(f"errors must be one of {ERRORS}, got {errors!r}")
    _positive("jobs", jobs)
    _positive("chunksize", chunksize)
    if executor is not None and jobs is not None:
        raise PgaDynError("jobs is the size of the default pool: give jobs or executor, not both")
    if build is not None and not callable(build):
        raise PgaDynError(f"build must be callable, got {type(build).__name__}")


def _chunks(rest: list, workers: int, chunksize: int | None) -> list:
    """(index of its first robot in the input, robots) of each chunk of ``rest``, the robots after
    the first: ``chunksize`` robots each (default ``min(MAX_CHUNK, ceil(N / (4 workers)))``)."""
    size = chunksize or max(1, min(MAX_CHUNK, math.ceil(len(rest) / (4 * workers))))
    return [(1 + k, rest[k : k + size]) for k in range(0, len(rest), size)]


def _pooled(executor, workers: int, chunks: list, build, options: dict):
    """The results of :func:`run_chunk` on each of ``chunks`` (from :func:`_chunks`), in order, run
    on ``executor`` (a concurrent.futures Executor or a dask.distributed Client), or on a pool of
    ``workers`` processes of its own when it is None. Closing the generator cancels the tasks
    not started (and shuts its own pool down)."""
    own = executor is None
    if own:
        executor = ProcessPoolExecutor(
            min(workers, len(chunks)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_one_blas_thread_per_worker,
        )
    elif hasattr(executor, "get_executor"):  # a dask.distributed Client
        executor = executor.get_executor(pure=False)
    futures = [executor.submit(run_chunk, start, chunk, build, options) for start, chunk in chunks]
    try:
        for (start, chunk), future in zip(chunks, futures):
            try:
                done = future.result()
            except Exception as error:  # the task itself failed: a worker died, the items did not pickle
                raise RuntimeError(
                    f"the task of robots {start} to {start + len(chunk) - 1} failed in the executor: "
                    f"{type(error).__name__}: {error}"
                ) from error
            yield done
    finally:
        for future in futures:
            future.cancel()
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
