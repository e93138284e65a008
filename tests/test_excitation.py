"""The optimisation of exciting trajectories (identification.excitation): the analytic
gradient of its cost checked against central finite differences of the cost itself, the
states it differentiates without assembling checked against states assembled again, and the
five-bar, whose optimisation used to stop at its random start."""

import numpy as np
import pytest

import robots
from identification import excite, identification_model
from identification.excitation import (
    BARRIER_START,
    barrier,
    excitation_cost,
    fit,
    random_excitation,
    scaled_condition,
)
from pga_dyn.sampling import projected_states, record_states

FREQUENCY = 0.1


@pytest.fixture(autouse=True)
def one_blas_thread():
    """excite runs with one BLAS thread (drng.result.one_blas_thread); the cost called alone here too."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def start(robot, model, seed, points=40):
    """A valid random start x (n_a, 10) of a 5-harmonic series, its limits and the optimisation times."""
    excitation = random_excitation(robot, model=model, seed=seed, duration=10, rate=10)
    f = excitation.fourier
    scale = np.abs(np.concatenate([f.a, f.b], axis=1)).max(axis=1)  # any positive rescaling fits the same series
    x = np.concatenate([f.a, f.b], axis=1) / scale[:, None]
    return x, excitation.limits, np.arange(points) / (points * FREQUENCY), excitation


def finite_differences(model, x, box, t, max_cond, h=1e-6):
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[idx] = (
            excitation_cost(model, x + e, box, FREQUENCY, t, max_cond)[0]
            - excitation_cost(model, x - e, box, FREQUENCY, t, max_cond)[0]
        ) / (2 * h)
    return out


def test_gradient_of_a_serial_arm_with_friction_and_armature():
    robot = robots.load("puma560")
    model = identification_model(robot, friction=("viscous", "coulomb", "offset"), armature=True)
    x, box, t, _ = start(robot, model, 0)
    cost, grad = excitation_cost(model, x, box, FREQUENCY, t, 10.0)
    states = record_states(robot, t, *_series(x, box, t))
    assert cost == pytest.approx(
        np.log(scaled_condition(model.regressor(states).reshape(-1, model.num_parameters))), rel=1e-12
    )  # a tree: no barrier
    fd = finite_differences(model, x, box, t, 10.0)
    assert np.abs(grad - fd).max() <= 1e-6 * np.abs(fd).max()


def test_gradient_of_the_five_bar_near_its_cond_jp_limit():
    """With the limit just above the start's largest cond(J_p), the barrier is active: its
    gradient (cond(J_p) differenced along G) is part of the one checked."""
    robot = robots.load("five_bar")
    model = identification_model(robot, friction=True)
    x, box, t, _ = start(robot, model, 1)
    states = record_states(robot, t, *_series(x, box, t))
    max_cond = states.cond.max() / 0.95
    cost, grad = excitation_cost(model, x, box, FREQUENCY, t, max_cond)
    value = barrier(states.cond / max_cond)[0]
    assert value.sum() > 0
    assert cost == pytest.approx(
        np.log(scaled_condition(model.regressor(states).reshape(-1, model.num_parameters))) + value.sum(), rel=1e-12
    )
    fd = finite_differences(model, x, box, t, max_cond)
    assert np.abs(grad - fd).max() <= 1e-5 * np.abs(fd).max()


def test_barrier():
    r = np.array([0.0, 0.5, BARRIER_START, 0.93, 0.97, 0.99])
    value, slope = barrier(r)
    assert np.all(value[:3] == 0) and np.all(slope[:3] == 0) and np.all(np.diff(value[2:]) > 0)
    h = 1e-7
    assert slope == pytest.approx(
        (barrier(r + h)[0] - barrier(r - h)[0]) / (2 * h), rel=1e-6, abs=1e-5
    )  # C1 at r_0: a difference there is O(h)


@pytest.mark.parametrize("name", ["2rru_1rrs", "five_bar"])
def test_projected_states_differentiate_along_the_assembly(name):
    """The regressor at q +- h G_j (projected, not assembled) differences to the same derivative as
    the regressor of the states assembled again at q_a +- h e_j."""
    robot = robots.load(name)
    model = identification_model(robot)
    x, box, t, _ = start(robot, model, 2, points=20)
    q, qd, qdd = _series(x, box, t)
    states = record_states(robot, t, q, qd, qdd)
    assert np.all(states.cond > 1)
    same = projected_states(robot, states.q, q, qd, qdd)
    for a, b in ((same.qd, states.qd), (same.qdd, states.qdd), (same.G, states.G), (same.cond, states.cond)):
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(b).max(), 1.0)
    h = 1e-5
    for j in range(len(robot.actuated)):
        e = np.zeros(len(robot.actuated))
        e[j] = h
        along = [
            model.regressor(projected_states(robot, states.q + s * h * states.G[:, :, j], q + s * e, qd, qdd))
            for s in (1, -1)
        ]
        again = [model.regressor(record_states(robot, t, q + s * e, qd, qdd)) for s in (1, -1)]
        d_along, d_again = (along[0] - along[1]) / (2 * h), (again[0] - again[1]) / (2 * h)
        assert np.abs(d_along - d_again).max() <= 1e-6 * np.abs(d_again).max()


def test_five_bar_optimises_from_its_random_start():
    """The optimiser used to stop at the random start of the five-bar (its finite-difference steps
    met the penalty of the cond(J_p) limit); the barrier holds it inside the limit."""
    robot = robots.load("five_bar")
    excitation = excite(robot, seed=0, iterations=20, duration=10, rate=50)
    assert excitation.iterations >= 10
    assert excitation.cond <= 0.75 * excitation.cond_start
    # inside the limit, as the barrier holds it (zero below BARRIER_START of the limit, unbounded at
    # it): where in [BARRIER_START, 1) the optimiser ends depends on the regressor's last bits
    # (0.856 of the limit, 0.904 with Y from the joined lines of pga_dyn.tp_regressor)
    assert excitation.max_cond_jp < excitation.max_cond


def _series(x, box, t):
    return fit(x, box, FREQUENCY).evaluate(t)
