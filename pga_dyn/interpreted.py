"""A compiled kernel's own source run by Python, for the first calls of a process on small inputs.

Compiling a kernel from an empty numba cache (an editable install, a new numba) takes seconds;
loading it from the cache tens of milliseconds. On a small robot, Python runs the same source
in well under a millisecond: :func:`python_version` gives a kernel's Python function
(``py_func``) in which every compiled function it calls is its Python function too, so nothing
is compiled or loaded. Python evaluates the same floating-point operations in the same order as
the compiled code (numba compiles without fast-math: no reassociation, no fused multiply-add),
so the results are the same bits; the tests compare them exactly for every kernel run so
(tests/test_interpreted.py). That holds for kernels of arithmetic, comparisons and ``np.sqrt``;
a kernel that calls LAPACK or a transcendental function is not run so. The errors are numba's
too: a float division by zero raises (numba's default error model; here numpy's
FloatingPointError), an overflow or an invalid operation gives inf or NaN without a warning.

:func:`runner` decides, on what a user sees: the Python source for the first PYTHON_CALLS calls
of a process while the compiled kernel is not loaded in it (a first ``pga-dyn analyze``; a long
job then loads the compiled kernel once, and runs at its speed), and only on inputs the caller
calls small (a bound on the number of bodies: Python takes about 50 us per body where the
compiled kernel takes under 1 us).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import numpy as np
from numba.core.registry import CPUDispatcher

#: Calls of a kernel's Python source in one process, at most, before the compiled kernel is used.
PYTHON_CALLS = 16
#: The most bodies of a robot whose kernels' Python source may run (:func:`runner`'s ``small``).
SMALL_BODIES = 32

_python: dict = {}
_sources: dict = {}
_calls: dict = {}


def python_version(kernel: CPUDispatcher) -> Callable:
    """The Python function of the numba ``kernel`` (a dispatcher of ``numba.njit``) with every
    compiled function it reaches through its module's names replaced by its own Python version:
    the kernel's source, run by Python (the same results to the bit for a kernel of arithmetic and
    ``np.sqrt``, and the same errors; module docstring)."""
    if kernel not in _python:
        source = _source(kernel)

        @functools.wraps(source)
        def run(*args):
            with np.errstate(divide="raise", over="ignore", under="ignore", invalid="ignore"):
                return source(*args)

        _python[kernel] = run
    return _python[kernel]


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
