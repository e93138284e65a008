"""The kernels a process runs as Python source on its first calls (pga_dyn.interpreted) give the
compiled kernels' results to the bit: DRNG's kernel, the loop vectors' independence and the dense
basis, on random trees and on every built-in robot (loops, couplings, floating bases); the tree
kinematics on random trees of every joint type, the loops' motion, the assembly's paths and the
sampled regressor on the closed loops (spin locks, spherical passive joints, a singular
reference). ``runner`` picks the Python source only on small inputs, while the kernel is not
loaded, for the first PYTHON_CALLS calls; ``first_calls`` the compiled kernel whenever it is
loaded or in numba's cache, else Python within its budget, and a call past the budget is made
again by the compiled kernel from the same arguments."""

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


CLOSED = ["2rru_1rrs", "five_bar", "3prs", "6sps", "delta", "parallelogram", "quadruped_fourbar"]


@pytest.mark.parametrize("name", CLOSED)
def test_motion_kernel_as_python_is_the_compiled_kernel(name):
    """The loops' residual, Jacobian and bias (motion_kernel: forward and loop_kernel, spin locks
    on the 6-SPS and the Delta), Python and compiled, to the bit; and Constraints.evaluate gives
    the same (whichever it ran)."""
    from pga_dyn.loops import closure, constraints

    robot = robots.load(name)
    con = constraints(robot)
    python = interpreted.python_version(closure.motion_kernel)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd = rng.uniform(-1.0, 1.0, robot.nq), rng.normal(size=robot.nq)
        compiled = closure.motion_kernel(*con.args, q, qd)
        assert all(same(a, b) for a, b in zip(python(*con.args, q, qd), compiled))
        r, J, bias = con.evaluate(q, qd)
        assert same(r[: con.m], compiled[0]) and same(J[: con.m], compiled[1]) and same(bias[: con.m], compiled[2])


def test_forward_as_python_is_the_compiled_kernel_on_random_trees():
    """forward's Python source (math's cosine and sine, so3_exp, se3_exp of floating bases) gives
    the compiled poses, lines, twists and accelerations to the bit, also at rotations so small
    that so3_exp and se3_exp take their series."""
    from random_trees import random_tree

    from pga_dyn import kinematics as kin

    python = interpreted.python_version(kin.forward)
    rng = np.random.default_rng(5)
    for k in range(30):
        robot = random_tree(lambda options: options[rng.integers(len(options))], name=f"tree{k}")
        arrays = kin.robot_arrays(robot)
        seed = arrays.seed.copy()
        scales = (1.0, 1.0, 1e-3, 1e-9, 1e-15)
        for scale in scales:
            q, qd, qdd = (scale * rng.normal(size=robot.nq) for _ in range(3))
            outs = []
            for run in (python, kin.forward):
                T, S = np.empty((robot.n + 1, 4, 4)), np.zeros((robot.nq, 6))
                V, A = np.empty((robot.n + 1, 6)), np.empty((robot.n + 1, 6))
                run(*arrays[:5], seed, q, qd, qdd, T, S, V, A)
                outs.append((T, S, V, A))
            assert all(same(a, b) for a, b in zip(*outs)), (robot.name, scale)


def _recorded_calls(monkeypatch, module, kernel, run):
    """The arguments of the calls ``run()`` makes of ``kernel`` through ``module.first_calls``
    (copies, taken before each call), each call made by the compiled kernel."""
    calls = []

    def record(k, small):
        def call(*args):
            if k is kernel:
                calls.append(_copies(args))
            return k(*args)

        return call

    monkeypatch.setattr(module, "first_calls", record)
    run()
    return calls


def _copies(args):
    """Copies of the arrays of ``args``, read-only where they are (the compiled kernel's one signature)."""
    copies = []
    for a in args:
        if isinstance(a, np.ndarray):
            copy = a.copy()
            copy.flags.writeable = a.flags.writeable
            a = copy
        copies.append(a)
    return copies


@pytest.mark.parametrize("name", CLOSED)
def test_assembly_paths_as_python_are_the_compiled_kernel(name, monkeypatch):
    """newton_kernel's Python source (the tangent predictor, Levenberg-Marquardt corrector, the
    branch watch with its Jacobi singular values, so3_log's atan2 for spherical passive joints)
    and the compiled kernel on the paths an analysis and regular assemblies take: the same status,
    residual and coordinates to the bit. The paths of 200 steps to 1e-12 that close a reference
    (seconds as Python on the 6-SPS) are left to the compiled kernel here, as first_calls does
    past its budget."""
    from pga_dyn.loops import constraints, newton, parts

    robot = robots.load(name)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            con = constraints(robot)
            na = len(robot.actuated)
            rng = np.random.default_rng(2)
            for _ in range(4):
                try:
                    con.assemble(con.z_ref[:na] + 0.1 * rng.standard_normal(na), regular=True)
                except Exception:  # a path that leaves the workspace or meets a singularity: its status is compared
                    pass

    calls = [args for args in _recorded_calls(monkeypatch, parts, newton.newton_kernel, run) if args[-3] == 30]
    assert len(calls) >= 4 and any(args[-1] > 0.0 for args in calls)  # regular paths: the branch watch
    python = interpreted.python_version(newton.newton_kernel)
    for args in calls[:12]:
        a, b = _copies(args), _copies(args)
        assert python(*a) == newton.newton_kernel(*b)
        assert all(same(x, y) for x, y in zip(a, b) if isinstance(x, np.ndarray))


@pytest.mark.parametrize("kernel", ["_tp_batch", "projected_batch"])
@pytest.mark.parametrize("name", ["2rru_1rrs", "five_bar", "6sps", "3prs"])
def test_the_sampled_regressor_as_python_is_the_compiled_kernel(name, kernel, monkeypatch):
    """_tp_batch's and projected_batch's Python source and the compiled kernels on the batches a
    first call computes (the tree's regressor on sampled states, as the spin locks' bound takes it;
    the actuated one G^T Y_tree that a certificate samples): the same regressor to the bit."""
    import drng
    from pga_dyn import sample_states, tp_regressor

    robot = robots.load(name)
    batch = getattr(tp_regressor, kernel)
    if kernel == "projected_batch":
        run = lambda: drng.nullspace(robot, certify=True)  # noqa: E731
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            states = sample_states(robot, 30, seed=1)
        run = lambda: tp_regressor.tree_regressor(robot, states.q, states.qd, states.qdd)  # noqa: E731
    calls = _recorded_calls(monkeypatch, tp_regressor, batch, run)
    assert calls
    python = interpreted.python_version(batch)
    for args in calls:
        a, b = _copies(args), _copies(args)
        assert python(*a) == batch(*b)
        assert same(a[-1], b[-1]) and np.isfinite(a[-1]).all()


def test_jacobi_singular_values_as_python_are_the_compiled_ones():
    """The branch watch's singular values (newton.small_svd), Python and compiled, to the bit,
    and numpy's to round-off."""
    from pga_dyn.loops import newton

    python = interpreted.python_version(newton.small_svd)
    rng = np.random.default_rng(7)
    for m, n in [(6, 3), (12, 5), (5, 5), (9, 2)]:
        A = rng.normal(size=(m, n))
        A[:, -1] = A[:, 0] if n > 2 else A[:, -1]  # a rank-deficient one too
        assert all(same(x, y) for x, y in zip(python(A), newton.small_svd(A)))
        np.testing.assert_allclose(newton.small_svd(A)[1], np.linalg.svd(A, compute_uv=False), atol=1e-13)


@njit
def _fill(out, helper_calls):
    """out[0] += 1 on each of ``helper_calls`` calls of a compiled helper: a kernel whose result
    depends on its array argument's values when it starts."""
    for _ in range(helper_calls):
        _add_one(out)
    return out[0]


@njit
def _add_one(out):
    out[0] += 1.0


def test_first_calls_runs_python_within_its_budget_then_the_compiled_kernel(monkeypatch):
    monkeypatch.setattr(interpreted, "PYTHON_SECONDS", 0.05)
    assert interpreted.first_calls(_fill, False) is _fill  # not small: compiled
    with interpreted.compiled_calls():
        assert interpreted.first_calls(_fill, True) is _fill
    first = interpreted.first_calls(_fill, True)
    assert first is not _fill and not _fill.signatures  # Python (no cache: cache=False)
    out = np.zeros(1)
    assert first(out, 10) == 10.0 and not _fill.signatures
    while interpreted.first_calls(_fill, True) is not _fill:  # Python until the budget is spent
        assert interpreted.first_calls(_fill, True)(np.zeros(1), 10) == 10.0
    assert interpreted.python_seconds()[f"{__name__}._fill"] >= interpreted.PYTHON_SECONDS
    assert interpreted.first_calls(_fill, True)(np.zeros(1), 10) == 10.0 and _fill.signatures  # compiled


@njit
def _fill_again(out, helper_calls):
    for _ in range(helper_calls):
        _add_one(out)
    return out[0]


def test_a_call_past_the_budget_is_made_again_by_the_compiled_kernel(monkeypatch):
    """A Python run that reaches the budget stops, its array arguments get their values back, and
    the compiled kernel answers from them: 10**6 additions from zero, not from where Python was."""
    monkeypatch.setattr(interpreted, "PYTHON_SECONDS", 0.02)
    out = np.zeros(1)
    assert interpreted.first_calls(_fill_again, True)(out, 10**6) == 1e6 and out[0] == 1e6
    assert _fill_again.signatures and interpreted.first_calls(_fill_again, True) is _fill_again


CACHED = """
from numba import njit


@njit(cache=True)
def kernel(x):
    return 2.0 * x + 1.0
"""


def _module(path, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_load_cached_loads_a_cached_kernel_and_first_calls_then_runs_it_compiled(tmp_path):
    """load_cached (the one use of numba's internals): False and nothing compiled when numba's cache
    does not hold the kernel; once a process has compiled it (into the cache beside its file), a
    new dispatcher of the same source is loaded from the cache (no compile event) and first_calls
    gives the compiled kernel from its first call."""
    from numba.core import event

    path = tmp_path / "cached_kernel.py"
    path.write_text(CACHED)
    first = _module(path, "cached_kernel_a").kernel
    assert not interpreted.load_cached(first, (1.0,)) and not first.signatures
    assert interpreted.first_calls(first, True)(1.0) == 3.0 and not first.signatures  # Python
    first(1.0)  # compiled, and saved in numba's cache
    assert interpreted.load_cached(first, (1.0,))  # loaded already
    compiled = []
    listener = type(
        "L", (event.Listener,), {"on_start": lambda self, ev: None, "on_end": lambda self, ev: compiled.append(ev)}
    )()
    event.register("numba:compile", listener)
    try:
        again = _module(path, "cached_kernel_b").kernel  # a new process would see the same
        assert not again.signatures
        assert interpreted.first_calls(again, True)(2.0) == 5.0
        assert again.signatures and again.stats.cache_hits and not compiled  # loaded, not compiled
        assert interpreted.first_calls(again, True) is again
        other = _module(path, "cached_kernel_c").kernel
        assert not interpreted.load_cached(other, (np.int32(1),)) and not other.signatures  # another signature
    finally:
        event.unregister("numba:compile", listener)


FIRST_ANALYSIS = """
import json, sys
from numba.core import event
compiled = []
listener = type("L", (event.Listener,), {"on_start": lambda self, ev: None, "on_end": lambda self, ev: compiled.append(1)})()
event.register("numba:compile", listener)
import drng, robots
from pga_dyn import interpreted
from pga_dyn.loops import newton
robot = robots.load(sys.argv[1])
if sys.argv[2] == "fill":
    with interpreted.compiled_calls():
        drng.analyze(robot)
else:
    drng.analyze(robot)
print(json.dumps([len(compiled), sorted(interpreted.python_seconds()), bool(newton.newton_kernel.signatures)]))
"""


def _first_analysis(name, cache, what):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", FIRST_ANALYSIS, name, what], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


LOOP_KERNELS = [
    "pga_dyn.loops.closure.motion_kernel",
    "pga_dyn.loops.newton.newton_kernel",
    "pga_dyn.tp_regressor.projected_batch",  # the certificate's actuated regressor (no tree regressor)
]


def test_a_first_closed_loop_analysis_from_an_empty_cache_compiles_nothing(tmp_path):
    """A new process with an empty numba cache analyses the five-bar (assembly, certificate) with
    the loops' kernels' Python source: no compile event."""
    compiles, python, loaded = _first_analysis("five_bar", tmp_path, "first")
    assert (compiles, python, loaded) == (0, LOOP_KERNELS, False)


@pytest.mark.slow
def test_a_first_closed_loop_analysis_on_a_filled_cache_runs_the_compiled_kernels(tmp_path):
    """Once a process has compiled the loops' kernels into numba's cache (as pga-dyn compile does),
    a new process's first analysis loads and runs them: no Python source, no compile event."""
    assert _first_analysis("five_bar", tmp_path, "fill")[0] > 0
    assert _first_analysis("five_bar", tmp_path, "first") == [0, [], True]
