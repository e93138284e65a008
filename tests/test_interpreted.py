"""The kernels a process runs as Python source on its first calls (pga_dyn.interpreted) give the
compiled kernels' results to the bit: DRNG's kernel, the loop vectors' independence and the dense
basis, on random trees and on every built-in robot (loops, couplings, floating bases); and
``runner`` picks the Python source only on small inputs, while the kernel is not loaded, for the
first PYTHON_CALLS calls."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit
from random_trees import random_tree

import robots
from drng import principles as pr
from drng.generator import kernel_arrays
from pga_dyn import interpreted

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def same(a, b) -> bool:
    """The same arrays to the bit (shape, dtype and every value)."""
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def check_drng(robot) -> None:
    args = kernel_arrays(robot)
    compiled = pr.drng_kernel(*args)
    python = interpreted.python_version(pr.drng_kernel)(*args)
    assert all(same(a, b) for a, b in zip(python, compiled)), robot.name
    bodies, vals, prov = compiled
    if robot.loop_joints:
        keep = pr.independent_loop_vectors(robot.parent, bodies, vals, prov, pr.DEPENDENT_RTOL)
        again = interpreted.python_version(pr.independent_loop_vectors)(
            robot.parent, bodies, vals, prov, pr.DEPENDENT_RTOL
        )
        assert same(again, keep), robot.name
    B = pr.dense_basis(robot.n, bodies, vals)
    assert same(interpreted.python_version(pr.dense_basis)(robot.n, bodies, vals), B), robot.name


@st.composite
def trees(draw):
    return random_tree(lambda options: draw(st.sampled_from(options)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_drng_as_python_is_the_compiled_kernel_on_random_trees(robot):
    check_drng(robot)


@pytest.mark.parametrize("name", sorted(robots.available()))
def test_drng_as_python_is_the_compiled_kernel_on_the_built_in_robots(name):
    check_drng(robots.load(name))


@njit
def _twice(x):
    return 2.0 * x


@njit
def _kernel(x):
    return _twice(x) + 1.0


def test_python_version_calls_python_all_the_way_down():
    python = interpreted.python_version(_kernel)
    assert not hasattr(python, "signatures") and not hasattr(python.__wrapped__.__globals__["_twice"], "signatures")
    assert python(3.0) == 7.0 and not _kernel.signatures and not _twice.signatures  # nothing compiled
    assert interpreted.python_version(_kernel) is python


@njit
def _ratio(a, b):
    return a / b


@njit
def _big(a):
    return a * a


def test_python_version_fails_where_the_kernel_fails():
    """A float division by zero raises (numba's error model), an overflow gives inf silently."""
    with pytest.raises(ZeroDivisionError):
        _ratio(1.0, 0.0)
    with pytest.raises(FloatingPointError):
        interpreted.python_version(_ratio)(np.float64(1.0), np.float64(0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert interpreted.python_version(_big)(np.float64(1e200)) == _big(1e200) == np.inf


def test_runner_takes_python_on_the_first_small_calls_only():
    assert interpreted.runner(_kernel, False) is _kernel  # not small: compiled
    calls = [interpreted.runner(_kernel, True) for _ in range(interpreted.PYTHON_CALLS + 2)]
    assert calls[: interpreted.PYTHON_CALLS] == [interpreted.python_version(_kernel)] * interpreted.PYTHON_CALLS
    assert calls[interpreted.PYTHON_CALLS :] == [_kernel, _kernel]  # then the compiled kernel


def test_runner_takes_the_compiled_kernel_once_it_is_loaded():
    @njit
    def kernel(x):
        return x + 1.0

    assert interpreted.runner(kernel, True) is not kernel
    kernel(1.0)
    assert interpreted.runner(kernel, True) is kernel


ANALYZE = """
import json, sys
import drng, robots
from drng import principles
robot = robots.load(sys.argv[1])
first = drng.analyze(robot)
principles.drng_kernel(*drng.generator.kernel_arrays(robot))  # loads the compiled kernel
second = drng.analyze(robot)
print(json.dumps([first.drng_compiled, second.drng_compiled, first.result.basis.tobytes().hex(),
                  second.result.basis.tobytes().hex(), "Python source" in first.text(), "Python" in second.text()]))
"""


@pytest.mark.parametrize("name", ["puma560", "2rru_1rrs"])
def test_a_first_analysis_runs_python_says_so_and_answers_as_compiled(name):
    """In a new process: the first analysis runs DRNG's Python source (its time line says so),
    the same basis to the bit as the compiled kernel's once it is loaded."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", ANALYZE, name], capture_output=True, text=True, env=env, check=True)
    first, second, basis1, basis2, says, said = json.loads(out.stdout.strip().splitlines()[-1])
    assert (first, second) == (False, True)
    assert basis1 == basis2
    assert says and not said
