"""A compiled kernel's own source run by Python, for the first calls of a process on small inputs.

Compiling a kernel from an empty numba cache (an editable install, a new numba) takes seconds;
loading it from the cache tens of milliseconds. On a small robot, Python runs the same source
in well under a millisecond: :func:`python_version` gives a kernel's Python function
(``py_func``) in which every compiled function it calls is its Python function too, so nothing
is compiled or loaded. Python evaluates the same floating-point operations in the same order as
the compiled code (numba compiles without fast-math: no reassociation, no fused multiply-add),
so the results are the same bits; the tests compare them exactly for every kernel run so
(tests/test_interpreted.py). That holds for kernels of arithmetic, comparisons, ``np.sqrt`` and
``math``'s functions (the C library's in both: ``math.cos``, ``math.sin``, ``math.atan2``); a
kernel that calls LAPACK or numpy's transcendental functions (numpy's own loops, which may
round differently) is not run so. The errors are numba's too: a float division by zero raises
(numba's default error model; here numpy's FloatingPointError), an overflow or an invalid
operation gives inf or NaN without a warning.

Two rules decide, both on what a user sees, never on the numbers (they are the same bits):

* :func:`runner` (DRNG's kernels: under a millisecond as Python, where loading the compiled
  kernel from numba's cache takes 0.3 s): the Python source for the first PYTHON_CALLS calls of
  a process while the compiled kernel is not loaded in it (a first ``pga-dyn analyze``; a long
  job then loads the compiled kernel once, and runs at its speed), and only on inputs the
  caller calls small (a bound on the number of bodies: Python takes about 50 us per body where
  the compiled kernel takes under 1 us).
* :func:`first_calls` (the loops' assembly and motion, the sampled regressor: milliseconds as
  Python, seconds to compile): the compiled kernel whenever it is in the process or numba's
  on-disk cache holds it for the call's argument types (it is loaded then, as a plain call
  would: a warm cache or an installed wheel runs compiled from the first call); else, on small
  inputs, the Python source, until it has taken PYTHON_SECONDS of the calling thread's CPU time
  in this process (``time.thread_time``), and then the compiled kernel (compiled once); a call
  that reaches the budget is stopped there and made again by the compiled kernel. A first
  ``pga-dyn analyze`` of a closed loop compiles nothing (about 1 s of Python where compiling took
  about 18 s); a long job (a record, an identification) pays at most PYTHON_SECONDS of Python per
  kernel before it compiles, less than that kernel's compilation. Inside :func:`compiled_calls`
  (``pga-dyn compile``, the build step of ``pip install .``) the compiled kernel is always called.
  The only private attributes of numba that pga-dyn reads are read in :func:`load_cached`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import types
from collections.abc import Callable, Iterator

import numpy as np
from numba.core.registry import CPUDispatcher

#: Calls of a kernel's Python source in one process, at most, before the compiled kernel is used.
PYTHON_CALLS = 16
#: The most bodies of a robot whose kernels' Python source may run (``small`` of :func:`runner` and
#: :func:`first_calls`).
SMALL_BODIES = 32
#: The most states of a batch whose kernel's Python source may run (with SMALL_BODIES: :func:`first_calls`'s
#: ``small`` for the sampled regressor, about 80 us per body and state as Python).
SMALL_STATES = 256
#: CPU seconds of one kernel's Python source in one process, at most, before :func:`first_calls`
#: compiles it (a closed loop's first ``pga-dyn analyze`` takes 0.1-0.7 s per kernel; compiling
#: one takes 2-11 s).
PYTHON_SECONDS = 2.0

_python: dict = {}
_sources: dict = {}
_calls: dict = {}
_spent: dict = {}  # first_calls: CPU seconds of each kernel's Python source so far
_uncached: set = set()  # first_calls: kernels whose compiled version numba's cache did not hold
_first: dict = {}  # first_calls: the function that runs each kernel's Python source and times it
_compiled_only = [0]  # depth of compiled_calls()


class _OverBudget(Exception):
    """A kernel's Python source run by :func:`first_calls` has reached the kernel's budget."""


def python_version(kernel: CPUDispatcher) -> Callable:
    """The Python function of the numba ``kernel`` (a dispatcher of ``numba.njit``) with every
    compiled function it reaches through its module's names replaced by its own Python version:
    the kernel's source, run by Python (the same results to the bit for a kernel of arithmetic and
    ``np.sqrt``, and the same errors; module docstring)."""
    if kernel not in _python:
        _python[kernel] = _numba_errors(_source(kernel))
    return _python[kernel]


def _numba_errors(source: Callable) -> Callable:
    """``source`` run with numba's floating-point errors: a division by zero raises, an overflow or
    an invalid operation gives inf or NaN silently."""

    @functools.wraps(source)
    def run(*args):
        with np.errstate(divide="raise", over="ignore", under="ignore", invalid="ignore"):
            return source(*args)

    return run


def _source(kernel: CPUDispatcher) -> Callable:
    """The kernel's Python function calling the Python functions of the kernels it calls."""
    if kernel in _sources:
        return _sources[kernel]
    source = kernel.py_func
    names = dict(source.__globals__)
    function = types.FunctionType(source.__code__, names, source.__name__, source.__defaults__, source.__closure__)
    _sources[kernel] = function
    for name, value in source.__globals__.items():
        if isinstance(value, CPUDispatcher):
            names[name] = _source(value)
    return function


def _watched(kernel: CPUDispatcher, deadline: threading.local) -> Callable:
    """:func:`python_version` of ``kernel`` whose every call of a compiled function (its Python
    version) first looks at the clock: past ``deadline.at`` (``time.thread_time``) it raises
    _OverBudget. Only the kernel's own calls look (a path step, a sample's kinematics: well under
    0.2 s each on a small robot), not those of the functions it calls. The thread's CPU clock is a
    system call (about 0.5 us, and a point where a loaded machine's scheduler switches to other
    work: 8,000 looks took 1.6 s of wall time in one cold ``analyze 2rru_1rrs`` at load 3); it is
    read only once the wall clock (``time.perf_counter``, no system call) has passed
    ``deadline.wall``, set as far from the start as ``deadline.at``: the thread's CPU time cannot
    pass its deadline before the wall time does."""
    source = kernel.py_func
    names = dict(source.__globals__)

    def watch(function):
        @functools.wraps(function)
        def call(*args):
            if time.perf_counter() > deadline.wall and time.thread_time() > deadline.at:
                raise _OverBudget
            return function(*args)

        return call

    for name, value in source.__globals__.items():
        if isinstance(value, CPUDispatcher):
            names[name] = watch(_source(value))
    return _numba_errors(
        types.FunctionType(source.__code__, names, source.__name__, source.__defaults__, source.__closure__)
    )


def runner(kernel: CPUDispatcher, small: bool) -> Callable:
    """What to call for ``kernel``: its Python version (:func:`python_version`) when the input is
    ``small`` and the compiled kernel is not loaded in this process, for the first PYTHON_CALLS
    such calls; else the compiled kernel (compiled or loaded from numba's cache on its first call)."""
    if not small or kernel.signatures:
        return kernel
    calls = _calls.get(kernel, 0)
    if calls >= PYTHON_CALLS:
        return kernel
    _calls[kernel] = calls + 1
    return python_version(kernel)


def first_calls(kernel: CPUDispatcher, small: bool) -> Callable:
    """What to call for ``kernel`` (module docstring, the second rule): the compiled kernel when
    it is loaded in this process, the input is not ``small``, its Python source has taken
    PYTHON_SECONDS of CPU time in this process, or inside :func:`compiled_calls`; else a function
    that calls the compiled kernel when numba's cache holds it for the call's argument types
    (:func:`load_cached`), and otherwise runs the kernel's Python version (:func:`python_version`)
    and adds its CPU time to the kernel's. A call whose Python run reaches the budget is stopped
    there (each call the kernel's source makes of a compiled function looks at the clock first)
    and made again by the compiled kernel from the same arguments: the kernel writes only into
    its array arguments, whose values the run saved first and puts back (the compiled kernel's
    results are the Python run's bits anyway). The compilation then runs in a new thread
    (:func:`_compile_aside`)."""
    if not small or kernel.signatures or _compiled_only[0]:
        return kernel
    if kernel not in _first:
        deadline = threading.local()  # the deadline of this thread's run of the kernel's Python source
        python = _watched(kernel, deadline)

        def first(*args):
            if kernel not in _uncached:
                if load_cached(kernel, args):
                    return kernel(*args)
                _uncached.add(kernel)  # nor will it be, but by this process compiling it
            if _spent.get(kernel, 0.0) < PYTHON_SECONDS:
                saved = [(a, a.copy()) for a in args if isinstance(a, np.ndarray) and a.flags.writeable]
                start = time.thread_time()
                deadline.at = start + PYTHON_SECONDS - _spent.get(kernel, 0.0)
                deadline.wall = time.perf_counter() + PYTHON_SECONDS - _spent.get(kernel, 0.0)
                try:
                    return python(*args)
                except _OverBudget:
                    pass
                finally:
                    _spent[kernel] = _spent.get(kernel, 0.0) + time.thread_time() - start
                _spent[kernel] = max(_spent[kernel], PYTHON_SECONDS)  # reached: the compiled kernel from now on
                for array, values in saved:
                    np.copyto(array, values)
            _compile_aside(kernel, args)
            return kernel(*args)

        _first[kernel] = first
    return _first[kernel]


def _compile_aside(kernel: CPUDispatcher, args: tuple) -> None:
    """Compile ``kernel`` for the types of ``args`` in a new thread, which starts with an empty frame
    stack. Python 3.11 allocates its frames in chunks that it maps and unmaps as the call depth
    crosses their ends: a compilation started deep in a long job's calls can cross one in its
    inner loops millions of times (measured: 1.8 million page faults, 11 s of system time, in a
    first ``sample_states`` of 1000 states from an empty cache, against 0.3 million when the same
    compilation started near the top of the stack). A compilation that fails there fails again
    in the caller's thread, which then raises numba's error."""
    signature = tuple(kernel.typeof_pyval(a) for a in args)

    def compile_signature():
        try:
            kernel.compile(signature)
        except Exception:  # raised again, with numba's message, by the caller's call
            pass

    thread = threading.Thread(target=compile_signature, daemon=True)
    thread.start()
    thread.join()


def python_seconds() -> dict:
    """The CPU seconds each kernel's Python source has taken in this process under
    :func:`first_calls`, by the kernel's qualified name (``benchmarks/cold_start.py`` prints them)."""
    return {f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__}": spent for kernel, spent in _spent.items()}


def load_cached(kernel: CPUDispatcher, args: tuple) -> bool:
    """Whether ``kernel`` has a compiled version for the types of ``args`` in this process after
    this call: one compiled or loaded before, or one that numba's on-disk cache holds, loaded now
    (numba's own loading, ``kernel.compile``, as a plain call would; should the file the index
    names be gone, numba compiles); False, compiling nothing, when the cache does not hold it
    (none for this source, numba version and CPU).

    The one use of numba's internals in pga-dyn (numba 0.6x; tests/test_interpreted.py checks it):
    a ``cache=True`` dispatcher's cache (``kernel._cache``) computes the key of a signature in its
    index (``_index_key``, which covers the bytecode, the target CPU and the signature) and reads
    that index (``_cache_file._load_index``: empty when the index is missing or was written for
    another version of the source file or of numba). Any other cache (``cache=False``) holds
    nothing."""
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    if signature in kernel.overloads:
        return True
    cache = kernel._cache
    if not hasattr(cache, "_index_key") or not hasattr(cache, "_cache_file"):  # numba's NullCache
        return False
    key = cache._index_key(signature, kernel.targetctx.codegen())
    if key not in cache._cache_file._load_index():
        return False
    kernel.compile(signature)
    return bool(kernel.signatures)


@contextlib.contextmanager
def compiled_calls() -> Iterator[None]:
    """Inside, :func:`first_calls` gives the compiled kernel (compiled now when numba's cache does
    not hold it): ``pga-dyn compile`` fills the cache with every kernel so."""
    _compiled_only[0] += 1
    try:
        yield
    finally:
        _compiled_only[0] -= 1
