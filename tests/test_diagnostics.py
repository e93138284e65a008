"""The checks of an identification that can fail (identification.diagnostics): each on data
whose answer is known without the code under test. The forces are the model's own (simulate)
with noise drawn here, the true parameters Pinocchio's reading of the model file; the noise
floor is held to the noise drawn, the standard deviations to the normal law (the median of
|error| / std of an honest estimate is 0.674, the median of |N(0, 1)|), the HAC sum and the
autocorrelation to their definitions written out here, and the unexplained joints and the delay
to what was put into the data."""

import json

import numpy as np
import pytest
from oracle import Oracle
from scipy import stats

import robots
from identification import (
    identification_model,
    identify_log,
    random_excitation,
    read_trajectory,
    report_text,
    simulate,
)
from identification.diagnostics import EXPLAINED, compensate, diagnose, hold_out, noise_floor
from identification.estimation import autocorrelation, estimate, force_delay, hac_scores
from identification.model import states_of
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError

#: The median of |z| for z ~ N(0, 1): what median |error| / std is for honest standard deviations.
HONEST = stats.norm.ppf(0.75)
FRICTION = {"viscous": np.array([2.0, 3.0, 1.5, 0.4, 0.3, 0.3]), "coulomb": np.array([3.0, 4.0, 2.0, 0.5, 0.4, 0.4])}


@pytest.fixture(scope="module")
def puma():
    """Puma560, a random 20 s trajectory at 200 Hz, its noise-free forces with viscous friction
    (simulate), and the true beta from Pinocchio's inertias."""
    robot = robots.load("puma560")
    model = identification_model(robot, friction=("viscous",))
    traj = random_excitation(robot, model=model, seed=0).trajectory
    clean, _ = simulate(robot, traj, extras={"viscous": 0.5})
    phi = Oracle(robot, robots.data_path("puma560")).link_parameters()
    return robot, model, clean, model.values(model.theta(phi, {"viscous": 0.5}))


def noisy(clean, sigma, seed, smooth=1):
    """``clean`` with white Gaussian noise of standard deviation ``sigma`` (n_a,), or that noise
    averaged over ``smooth`` consecutive samples (correlated, of the same long-run variance)."""
    e = np.random.default_rng(seed).standard_normal((len(clean) + smooth - 1, clean.tau.shape[1]))
    e = np.cumsum(np.vstack([np.zeros((1, e.shape[1])), e]), axis=0)
    e = (e[smooth:] - e[:-smooth]) / smooth
    return clean.with_tau(clean.tau + sigma * e)


def test_autocorrelation_and_hac_sum_against_their_definitions():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 3)).cumsum(axis=0)
    y = x - x.mean(axis=0)
    direct = np.array([[y[: len(y) - k, j] @ y[k:, j] / (y[:, j] @ y[:, j]) for j in range(3)] for k in range(11)])
    assert np.allclose(autocorrelation(x, 10), direct, atol=1e-12)
    g = rng.standard_normal((200, 4))
    for L in (0, 1, 7, 50):
        S = sum(
            (1 - abs(lag) / (L + 1)) * sum(np.outer(g[t], g[t - lag]) for t in range(max(lag, 0), 200 + min(lag, 0)))
            for lag in range(-L, L + 1)
        )
        assert np.allclose(hac_scores(g, L), S, atol=1e-10)


def test_white_noise_model_right(puma):
    """1 % white noise: the floor is the noise drawn (to 10 %), the held-out residual is at the
    floor, the residuals are white, the verdict is OK, no delay."""
    robot, model, clean, _ = puma
    sigma = 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0))
    data = noisy(clean, sigma, 0)
    floor = noise_floor(data)[0]
    assert np.all(np.abs(floor / sigma - 1) < 0.1), floor / sigma
    fit, test = hold_out(data)
    est = estimate(model, fit)
    checks = diagnose(est, test)
    assert checks["verdict"].startswith("OK: the estimate is trusted"), checks["verdict"]
    assert checks["held_out"] and len(test) == np.sum(data.t >= data.t[0] + 0.8 * (data.t[-1] - data.t[0]))
    ratio = np.array(checks["residual_to_floor"])
    assert np.all((ratio > 0.85) & (ratio < 1.15)), ratio
    assert all(checks["whiteness"]["white"]) and checks["std"]["reliable"]
    assert abs(checks["delay"]["seconds"]) < checks["delay"]["step"] and not checks["delay"]["found"]
    # the RRE is the definition's, on the held-out segment
    predicted = est.predict(test)
    rre = [
        100 * np.sqrt(np.sum((test.tau[:, j] - predicted[:, j]) ** 2) / np.sum(test.tau[:, j] ** 2)) for j in range(6)
    ]
    assert np.allclose(checks["rre_%"], rre)


@pytest.mark.parametrize("smooth", [1, 8], ids=["white", "correlated"])
def test_standard_deviations_are_honest_over_seeds(puma, smooth):
    """Over 20 noise draws, median |error| / std is the normal law's 0.674 with the HAC
    covariance, for white noise and for noise averaged over 8 samples (the Bartlett kernel
    underweighs the correlated lags: 10 % too small a std over 40 draws); with the latter the
    white-residual formula is about sqrt(8) times too small."""
    robot, model, clean, truth = puma
    sigma = 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0))
    z, z_white = [], []
    for seed in range(20):
        est = estimate(model, noisy(clean, sigma, seed, smooth))
        z.append(np.abs(est.beta - truth) / est.std)
        z_white.append(np.abs(est.beta - truth) / est.white_std)
    assert HONEST - 0.1 < np.median(z) < HONEST + 0.15, np.median(z)
    if smooth == 1:
        assert abs(np.median(z_white) - HONEST) < 0.1
    else:
        assert np.median(z_white) > 0.8 * np.sqrt(smooth) * HONEST


def test_white_covariance_without_lags(puma):
    """lags=0: Cov = s^2 (W_w^T W_w)^-1, here from the weighted least squares written out."""
    robot, model, clean, _ = puma
    sigma = 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0))
    est = estimate(model, noisy(clean, sigma, 3), lags=0)
    w = np.sqrt(est.scale / est.variances)  # the weights of the last fit
    W = (model.regressor(states_of(robot, est.data)) * w[None, :, None]).reshape(-1, model.num_parameters)
    e = (est.residuals * w).reshape(-1)
    s2 = e @ e / (len(e) - model.num_parameters)
    assert est.lags == 0 and np.allclose(est.std, np.sqrt(np.diag(s2 * np.linalg.inv(W.T @ W))), rtol=1e-6)
    assert np.array_equal(est.std, est.white_std)


def test_friction_left_out_is_not_explained(puma):
    """Forces with viscous and Coulomb friction, identified without friction: every joint whose
    friction force is above 10 times the noise (RMS of fv qd + fc sign(qd), computed here) is not
    explained, and the standard deviations are flagged."""
    robot, _, clean, _ = puma
    traj = clean
    friction = FRICTION["viscous"] * traj.qd + FRICTION["coulomb"] * np.sign(traj.qd)
    data, sigma = simulate(robot, traj, extras=FRICTION, noise=0.01, seed=1)
    fit, test = hold_out(data)
    checks = diagnose(estimate(identification_model(robot), fit), test)
    large = np.sqrt(np.mean(friction**2, axis=0)) > 10 * sigma
    assert large.sum() >= 3
    assert not any(np.array(checks["explained"])[large])
    assert all(np.array(checks["residual_to_floor"])[large] > EXPLAINED)
    assert checks["verdict"].startswith(("MISFIT: ", "FAILS: ")) and "the model does not explain" in checks["verdict"]
    assert all(f"{robot.actuated_names[j]} (residual" in checks["verdict"] for j in np.flatnonzero(large))
    assert not checks["std"]["reliable"] and "does not explain" in checks["std"]["reason"]


def test_delayed_channel_is_found_and_compensated(puma):
    """Forces logged 3 samples (15 ms) late: the report finds 15 ms (to 1 ms) and says so;
    compensated by the estimate ("auto") or by the 15 ms, the verdict is OK."""
    robot, model, clean, _ = puma
    sigma = 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0))
    data = noisy(clean, sigma, 4)
    step = data.t[1] - data.t[0]
    late = data.with_tau(np.vstack([np.repeat(data.tau[:1], 3, axis=0), data.tau[:-3]]))
    checks = diagnose(estimate(model, late))
    assert checks["delay"]["found"] and abs(checks["delay"]["seconds"] - 3 * step) < 1e-3
    assert checks["delay"]["note"].startswith("+15 ms") and checks["delay"]["note"].endswith("FOUND")
    for delay in ("auto", 3 * step):
        aligned, _, d = compensate(late, None, delay, model)
        checks = diagnose(estimate(model, aligned), None, d)
        assert checks["verdict"].startswith("OK") and abs(d - 3 * step) < 1e-3 and checks["delay"]["compensated"] == d
    with pytest.raises(PgaDynError, match="'auto' or a number"):
        compensate(late, None, "soon", model)


def test_force_delay_uses_a_sample_of_the_rows(puma):
    """The delay from 1000 of the 4000 samples is that of all of them, to a tenth of a step."""
    robot, model, clean, _ = puma
    data = noisy(clean, 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0)), 5)
    step = data.t[1] - data.t[0]
    late = data.with_tau(np.vstack([np.repeat(data.tau[:1], 2, axis=0), data.tau[:-2]]))
    d_all = force_delay(model, late, samples=len(late))[0]
    d_some = force_delay(model, late, samples=1000)[0]
    assert abs(d_all - 2 * step) < 0.1 * step and abs(d_some - d_all) < 0.1 * step


def test_hold_out(puma):
    robot, _, clean, _ = puma
    fit, test = hold_out(clean, fraction=0.25)
    t_cut = clean.t[0] + 0.75 * (clean.t[-1] - clean.t[0])
    assert np.array_equal(fit.t, clean.t[clean.t < t_cut]) and np.array_equal(test.t, clean.t[clean.t >= t_cut])
    assert "last 25 % held out" in test.source and "first 75 %" in fit.source
    assert hold_out(clean, fraction=0) == (clean, None) and hold_out(clean, test)[1] is test
    for bad in (1.0, -0.1, "half"):
        with pytest.raises(PgaDynError, match="hold-out"):
            hold_out(clean, fraction=bad)


def run(capsys, *argv):
    code = main([str(a) for a in argv] + ["--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_hold_out_and_delay(tmp_path, capsys, puma):
    """``identify`` holds out the last 20 % by default (--hold-out, --no-hold-out, --test replace
    it), prints the verdict first, and writes the report of the library's job; a delay of the
    force channel is found and compensated because that lowers the cross-validated error;
    --delay compensates as asked."""
    robot, model, clean, _ = puma
    sigma = 0.01 * np.sqrt(np.mean(clean.tau**2, axis=0))
    path = tmp_path / "data.csv"
    late = noisy(clean, sigma, 6)
    late = late.with_tau(np.vstack([np.repeat(late.tau[:1], 2, axis=0), late.tau[:-2]]))
    late.write(path)
    argv = ["identify", "puma560", path, "--friction", "viscous"]
    code, out, _ = run(capsys, *argv, "--json")
    result = json.loads(out)
    delay = result["diagnostics"]["delay"]
    assert code == 0 and abs(delay["compensated"] - 0.01) < 1e-3 and "found and compensated" in delay["decision"]
    assert result["verdict"].startswith("OK"), result["verdict"]
    data = read_trajectory(robot, path, require_tau=True)
    job = identify_log(robot, data, friction=("viscous",))
    assert result == json.loads(json.dumps(job.report()))
    code, out, _ = run(capsys, *argv)
    assert out.splitlines()[0] == f"verdict:          {result['verdict']}"
    assert out.rstrip("\n").splitlines() == report_text(result)
    argv += ["--delay", "0"]
    code, out, _ = run(capsys, *argv, "--json")
    result = json.loads(out)
    n = len(late)
    assert code == 0 and result["held_out"]["samples"] + result["samples"] == n
    assert result["held_out"]["samples"] == np.sum(late.t >= late.t[0] + 0.8 * (late.t[-1] - late.t[0]))
    assert result["diagnostics"]["delay"]["found"] and abs(result["diagnostics"]["delay"]["seconds"] - 0.01) < 1e-3
    for option in (["--no-hold-out"], ["--hold-out", 0], ["--test", path]):
        code, out, _ = run(capsys, *argv, *option, "--json")
        assert json.loads(out)["samples"] == n and ("held_out" in json.loads(out)) == (option[0] == "--test")
    code, out, _ = run(capsys, *argv, "--hold-out", 0.5, "--json")
    assert json.loads(out)["held_out"]["samples"] == np.sum(late.t >= late.t[0] + 0.5 * (late.t[-1] - late.t[0]))
    argv = argv[:-2]
    for delay in ("auto", "0.01"):
        code, out, _ = run(capsys, *argv, "--delay", delay, "--json")
        result = json.loads(out)
        assert code == 0 and result["verdict"].startswith("OK"), result["verdict"]
        assert abs(result["diagnostics"]["delay"]["compensated"] - 0.01) < 1e-3
    with pytest.raises(SystemExit) as exc:
        run(capsys, *argv, "--delay", "soon")
    assert exc.value.code == 2 and "--delay: 'auto' or a number of seconds, got 'soon'" in capsys.readouterr().err
    code, _, err = run(capsys, *argv, "--hold-out", 1)
    assert code == 2 and "hold-out" in err
