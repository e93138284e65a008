"""Data as robots log them (identification.data; docs/identification.md, "Data as robots log
it"): column maps, ignored columns, forces from motor currents, several experiments, a time
window, trimming, decimation and ROS bags, on files the tests write with headers as loggers
write them. The oracles: the values written (read back exactly), sines and their analytic
derivatives, and forces from Pinocchio's RNEA (the base parameters they give back)."""

import csv
import json
from dataclasses import replace

import numpy as np
import pytest
from oracle import Oracle

import robots
from identification import combine, identification_model, random_excitation, read_trajectory, trajectory
from identification.estimation import estimate
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError

PUMA = robots.load("puma560")
NAMES = PUMA.actuated_names
#: drive gains of the test logs (N m/A): torque constant x gear ratio
GAINS = np.array([9.0, 9.0, 9.0, 2.2, 2.2, 2.2])
#: one sine per coordinate, 0.2 to 1.2 Hz
W = 2 * np.pi * 0.2 * np.arange(1, 7)


def sines(t):
    """q, qd, qdd (ns, 6) of the sines W."""
    s, c = np.sin(np.outer(t, W)), np.cos(np.outer(t, W))
    return s, W * c, -(W**2) * s


def write(path, columns: dict):
    """A CSV file of ``columns`` ({header: (ns,) values}), floats with every digit (read back exactly)."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(
            zip(*[[v if isinstance(v, str) else repr(v) for v in np.asarray(x).tolist()] for x in columns.values()])
        )
    return path


def block(prefix, x):
    """{PREFIX1: x[:, 0], ...}: a logger's channels, numbered from 1."""
    return {f"{prefix}{j + 1}": x[:, j] for j in range(x.shape[1])}


def logger_file(path, ns=400, rate=200.0, t0=0.0, seed=0):
    """A log as a robot's logger writes it: time, pos_j*, vel_j*, acc_j*, eff_j*, current_j*,
    temperature_j1 and a text column; returns (path, t, q, qd, qdd, tau, current)."""
    rng = np.random.default_rng(seed)
    t = t0 + np.arange(ns) / rate
    q, qd, qdd = sines(t)
    tau = rng.standard_normal((ns, 6))
    current = rng.standard_normal((ns, 6))
    write(
        path,
        {
            "time": t,
            **block("pos_j", q),
            **block("vel_j", qd),
            **block("acc_j", qdd),
            **block("eff_j", tau),
            **block("current_j", current),
            "temperature_j1": 40 + rng.random(ns),
            "mode": ["RUNNING"] * ns,
        },
    )
    return path, t, q, qd, qdd, tau, current


MAP = {
    "t": "time",
    "q_{name}": "pos_j{index}",
    "qd_{name}": "vel_j{index}",
    "qdd_{name}": "acc_j{index}",
    "tau_{name}": "eff_j{index}",
}


# -- column map and ignored columns --------------------------------------------------------------------------
def test_column_map_reads_the_values_written_and_names_the_ignored_columns(tmp_path):
    path, t, q, qd, qdd, tau, _ = logger_file(tmp_path / "log.csv")
    data = read_trajectory(PUMA, path, require_tau=True, columns=MAP)
    for mine, written in ((data.t, t), (data.q, q), (data.qd, qd), (data.qdd, qdd), (data.tau, tau)):
        assert np.array_equal(mine, written)
    ignored = [f"current_j{j}" for j in range(1, 7)] + ["temperature_j1", "mode"]
    assert f"ignored columns: {ignored}" in data.notes  # the text column is not parsed
    strings = read_trajectory(PUMA, path, require_tau=True, columns=[f"{k}={v}" for k, v in MAP.items()])
    assert np.array_equal(strings.q, q) and strings.notes == data.notes
    over = {**MAP, "q_joint2": "temperature_j1"}  # one column over the template
    one = read_trajectory(PUMA, path, require_tau=True, columns=over)
    assert np.all((40 <= one.q[:, 1]) & (one.q[:, 1] <= 41)) and np.array_equal(one.q[:, 2], q[:, 2])
    assert f"ignored columns: {[c if c != 'temperature_j1' else 'pos_j2' for c in ignored]}" not in one.notes
    assert f"ignored columns: {['pos_j2'] + ignored[:-2] + ['mode']}" in one.notes


def test_csv_files_read_alike_whatever_their_quotes_and_line_ends(tmp_path):
    """The same values from a plain file (its columns parsed in one pass) and from the same file
    with LF, CR or CRLF line ends, spaces around the numbers, or text holding commas and line breaks
    in a quoted column that is ignored (read by the csv module); a bad value or a field the csv
    module refuses is named by its line (the row's number) and column in each."""
    path, t, q, qd, qdd, tau, _ = logger_file(tmp_path / "log.csv", ns=50)
    crlf = path.read_bytes().decode()
    assert "\r\n" in crlf and '"' not in crlf
    rows = list(csv.reader(crlf.splitlines()))
    quoted = tmp_path / "quoted.csv"
    with open(quoted, "w", newline="") as handle:
        csv.writer(handle).writerows(
            [rows[0]] + [row[:-1] + [f"RUNNING, step {k}\nok"] for k, row in enumerate(rows[1:])]
        )
    files = {
        "lf.csv": crlf.replace("\r\n", "\n"),
        "cr.csv": crlf.replace("\r\n", "\r"),
        "spaces.csv": crlf.replace(",", " , "),
        "quoted.csv": quoted.read_bytes().decode(),
    }
    for name, text in {"log.csv": crlf, **files}.items():
        (tmp_path / name).write_bytes(text.encode())
        data = read_trajectory(PUMA, tmp_path / name, require_tau=True, columns=MAP)
        for mine, written in ((data.t, t), (data.q, q), (data.qd, qd), (data.qdd, qdd), (data.tau, tau)):
            assert np.array_equal(mine, written), name
        assert data.notes == (
            "column map: " + ", ".join(f"{k}={v}" for k, v in MAP.items()),
            f"ignored columns: {[f'current_j{j}' for j in range(1, 7)] + ['temperature_j1', 'mode']}",
        ), name
        bad = text.replace(repr(float(tau[4, 2])), "x").replace(repr(float(tau[7, 4])), "inf")
        (tmp_path / name).write_bytes(bad.encode())
        with pytest.raises(PgaDynError, match=rf"{name}: line 6, column 'eff_j3': ' ?x ?' is not a number"):
            read_trajectory(PUMA, tmp_path / name, require_tau=True, columns=MAP)
        (tmp_path / name).write_bytes(bad.replace("x", repr(float(tau[4, 2]))).encode())
        with pytest.raises(PgaDynError, match=rf"{name}: line 9, column 'eff_j5' is inf"):
            read_trajectory(PUMA, tmp_path / name, require_tau=True, columns=MAP)
    (tmp_path / "huge.csv").write_text(crlf.replace("RUNNING", f'"{"x" * 200_000}"', 1))
    with pytest.raises(PgaDynError, match=r"huge.csv: line 2: field larger than field limit"):
        read_trajectory(PUMA, tmp_path / "huge.csv", require_tau=True, columns=MAP)


@pytest.mark.parametrize(
    "columns, header, message",
    [
        (
            {k: v for k, v in MAP.items() if k != "t"},
            {"time": "tme"},
            r"missing t .*closest columns in the file: \['tme'\]",
        ),
        (
            MAP,
            {"time": "Time"},
            r"the column map gives 'time' for t, and the file has no such column; closest columns in "
            r"the file: \['Time'\]",
        ),
        (
            MAP,
            {"eff_j6": "eff_jj6"},
            r"missing columns \['eff_j6'\] \(the other tau_ columns are there\); closest "
            r"columns in the file: \['eff_jj6'\]",
        ),
        (
            {**MAP, "q_joint1": "POS1"},
            {"pos_j1": "POS_1"},
            r"the column map gives 'POS1' for q_joint1, and the file has no such column; closest columns in the file: "
            r"\['POS_1'\]",
        ),
        (
            {**MAP, "q_{name}": "position_{name}"},
            {},
            r"q_\{name\}=position_\{name\} matches no column \(looked for "
            r"\['position_joint1'",
        ),
        ({**MAP, "pos": "x"}, {}, r"the column map's 'pos' is none of t, KIND_\{name\} or KIND_NAME"),
        ({**MAP, "q_{name}": "pos_{joint}"}, {}, r"only \{name\} and \{index\} may stand in braces"),
        ({**MAP, "qd_{name}": "pos_j{index}"}, {}, r"column 'pos_j1' is mapped to both q_joint1 and qd_joint1"),
        (
            {**MAP, "qd_{name}": "vel_j"},
            {"vel_j2": "vel_j"},
            r"column 'vel_j' is mapped to both qd_joint1 and qd_joint2",
        ),
        (["t=time", "q_{name}"], {}, r"the column map item 'q_\{name\}' is not KEY=VALUE"),
        (MAP, {"vel_j1": "time"}, r"column 'time' appears more than once"),
        (
            {"t": "time"},
            {f"pos_j{k}": f"Q_joint{k}" for k in range(1, 7)},
            r"missing q .*closest columns in the file: "
            r"\['Q_joint1'",
        ),
    ],
)
def test_column_errors_name_the_file_the_column_and_the_near_matches(tmp_path, columns, header, message):
    path, t, q, qd, qdd, tau, current = logger_file(tmp_path / "log.csv", ns=40)
    lines = path.read_text().splitlines()
    lines[0] = ",".join(header.get(n, n) for n in lines[0].split(","))  # the header as the logger spelt it
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(PgaDynError, match=message) as info:
        read_trajectory(PUMA, path, require_tau=True, columns=columns)
    assert str(path) in str(info.value)


def test_npz_map_of_whole_arrays(tmp_path):
    t = np.arange(100) / 100.0
    q, qd, qdd = sines(t)
    tau = np.cos(np.outer(t, W))
    np.savez(tmp_path / "log.npz", t=t, position=q, qd=qd, qdd=qdd, effort=tau, temperature=np.ones(100))
    data = read_trajectory(PUMA, tmp_path / "log.npz", columns={"q": "position", "tau": "effort"})
    assert np.array_equal(data.q, q) and np.array_equal(data.tau, tau)
    assert "ignored arrays: ['temperature']" in data.notes
    with pytest.raises(PgaDynError, match=r"log.npz: the column map's 'q_\{name\}': an NPZ file's map names whole "):
        read_trajectory(PUMA, tmp_path / "log.npz", columns={"q_{name}": "position"})
    with pytest.raises(PgaDynError, match=r"log.npz: the column map gives 'pos' for q, and the file has no such array"):
        read_trajectory(PUMA, tmp_path / "log.npz", columns={"q": "pos"})
    with pytest.raises(PgaDynError, match=r"log.npz: the column map uses one array for several quantities"):
        read_trajectory(PUMA, tmp_path / "log.npz", columns={"q": "position", "qd": "position"})


# -- forces from motor currents ------------------------------------------------------------------------------
def test_currents_times_drive_gains(tmp_path):
    path, t, q, qd, qdd, tau, current = logger_file(tmp_path / "log.csv")
    columns = {**MAP, "current_{name}": "current_j{index}"}
    columns.pop("tau_{name}")
    for gains in (
        GAINS,
        list(GAINS),
        {n: g for n, g in zip(NAMES, GAINS)},
        [f"{n}={g}" for n, g in zip(NAMES, GAINS)],
        [str(g) for g in GAINS],
    ):
        data = read_trajectory(PUMA, path, require_tau=True, columns=columns, gains=gains)
        assert np.array_equal(data.tau, current * GAINS)
        assert (
            "forces = current x drive gain (joint1 9, joint2 9, joint3 9, joint4 2.2, joint5 2.2, joint6 2.2)"
            in data.notes
        )
    both = read_trajectory(PUMA, path, require_tau=True, columns={**columns, "tau_{name}": "eff_j{index}"}, gains=GAINS)
    assert np.array_equal(both.tau, current * GAINS) and "tau columns not used" in " ".join(both.notes)
    unused = read_trajectory(PUMA, path, columns=columns)  # a trajectory, no forces wanted: currents not used
    assert unused.tau is None and "currents not used (no drive gains)" in unused.notes


@pytest.mark.parametrize(
    "gains, message",
    [
        (None, r"motor currents \(current_NAME\) but no drive gains: give one gain per actuated coordinate"),
        (GAINS[:5], r"5 gains for 6 actuated coordinates"),
        ({**dict(zip(NAMES, GAINS)), "joint7": 1.0}, r"gains for \['joint7'\]: no such actuated coordinate"),
        (dict(zip(NAMES[:5], GAINS)), r"gains for \['joint6'\]: missing"),
        ([9, 9, 9, 2.2, 2.2, 0], r"the gain of 'joint6' must be a finite non-zero number"),
        ([9, 9, 9, 2.2, 2.2, "x"], r"the gain of 'joint6' is 'x', not a number"),
        (["joint1=9", "9"], r"the gains item '9' is not KEY=VALUE"),
    ],
)
def test_current_errors(tmp_path, gains, message):
    path = logger_file(tmp_path / "log.csv", ns=40)[0]
    columns = {k: v for k, v in MAP.items() if k != "tau_{name}"} | {"current_{name}": "current_j{index}"}
    with pytest.raises(PgaDynError, match=message) as info:
        read_trajectory(PUMA, path, require_tau=True, columns=columns, gains=gains)
    assert str(path) in str(info.value)


def test_gains_without_currents(tmp_path):
    path = logger_file(tmp_path / "log.csv", ns=40)[0]
    with pytest.raises(PgaDynError, match=r"log.csv: drive gains given, but no motor currents"):
        read_trajectory(PUMA, path, require_tau=True, columns=MAP, gains=GAINS)


# -- time unit, window, trimming -----------------------------------------------------------------------------
def test_nanosecond_stamps_and_window(tmp_path):
    stamps = 1_700_000_000_000_000_000 + 5_000_000 * np.arange(600)  # 200 Hz, ns since the epoch
    t = (stamps - stamps[0]) * 1e-9
    q, qd, qdd = sines(t)
    path = write(
        tmp_path / "log.csv", {"stamp": stamps, **block("pos_j", q), **block("vel_j", qd), **block("acc_j", qdd)}
    )
    columns = {"t": "stamp", "q_{name}": "pos_j{index}", "qd_{name}": "vel_j{index}", "qdd_{name}": "acc_j{index}"}
    data = read_trajectory(PUMA, path, columns=columns, time_scale=1e-9)
    assert np.allclose(np.diff(data.t), 5e-3, rtol=1e-4, atol=0) and "times in units of 1e-09 s" in data.notes
    part = read_trajectory(PUMA, path, columns=columns, time_scale=1e-9, window=(1.0, 2.0))
    assert len(part) == 201 and np.array_equal(part.q, q[200:401])  # 1.000 to 2.000 s after the first sample
    assert "window 1 to 2 s after the first sample: 201 of 600 samples" in part.notes
    with pytest.raises(PgaDynError, match=r"log.csv: the column map's q_\{name\}=5 matches no column"):
        read_trajectory(PUMA, path, columns={**columns, "q_{name}": 5})
    for window, message in (
        ((2.0, 1.0), r"t0 < t1"),
        (("a", 1), r"two times \(t0, t1\)"),
        (5.0, "two times"),
        ((10.0, 11.0), r"the window 10 to 11 s holds 0 samples \(the record spans 0 to 2.995"),
    ):
        with pytest.raises(PgaDynError, match=message) as info:
            read_trajectory(PUMA, path, columns=columns, time_scale=1e-9, window=window)
        assert str(path) in str(info.value)
    for scale in (0, -1.0, float("nan")):
        with pytest.raises(PgaDynError, match=r"log.csv: the time scale must be a positive number"):
            read_trajectory(PUMA, path, columns=columns, time_scale=scale)


def test_trim_after_the_derivatives():
    """The trimmed trajectory is the untrimmed one's inner samples: its derivatives were taken on the
    whole record, so the filter's ends fall in the part trimmed off."""
    t = np.arange(1000) / 200.0
    q = sines(t)[0]
    whole = trajectory(PUMA, t, q)
    trimmed = trajectory(PUMA, t, q, trim=0.5)
    inner = (t >= 0.5) & (t <= t[-1] - 0.5)
    for name in ("t", "q", "qd", "qdd"):
        assert np.array_equal(getattr(trimmed, name), getattr(whole, name)[inner]), name
    assert trimmed.notes == (f"trimmed 0.5 s at each end: {inner.sum()} of 1000 samples kept",)
    for trim, message in (
        (2.5, r"trimming 2.5 s at each end of a 4.995 s record leaves 0 samples"),
        (-1.0, "trim must be a non-negative number"),
    ):
        with pytest.raises(PgaDynError, match=message):
            trajectory(PUMA, t, q, trim=trim, source="log.csv")


# -- decimation ----------------------------------------------------------------------------------------------
def test_decimation_keeps_the_motion_and_removes_the_noise_above_the_new_nyquist():
    """1 kHz, 20 s: q the sines W with 1e-5 rad of noise, tau a 0.5 Hz cosine with white noise of
    0.1. Decimated by 10 after the derivatives: q, qd, qdd are the sines' at the kept times and
    those of the undecimated trajectory (the ends no worse); the noise of tau is what an ideal
    low-pass at the filter's -6 dB point (45 Hz of 500) leaves, 0.1 sqrt(0.09) = 0.03, instead of
    0.1 folded onto the band."""
    rng = np.random.default_rng(0)
    t = np.arange(20001) / 1000.0
    q = sines(t)[0] + 1e-5 * rng.standard_normal((len(t), 6))
    clean = np.cos(2 * np.pi * 0.5 * np.outer(t, np.ones(6)))
    tau = clean + 0.1 * rng.standard_normal(clean.shape)
    data = trajectory(PUMA, t, q, tau=tau, decimate=10)
    whole = trajectory(PUMA, t, q, tau=tau)
    assert np.array_equal(data.t, t[::10]) and len(data) == 2001
    exact = sines(data.t)
    inner = slice(20, -20)  # 0.2 s from the ends, where the differentiator's own end effects are
    for name, true, tol in zip(("q", "qd", "qdd"), exact, (1e-4, 1e-3, 1e-3)):
        mine, before = getattr(data, name), getattr(whole, name)[::10]
        assert np.abs(mine - true).max() <= 1.01 * np.abs(before - true).max()  # the ends no worse
        assert np.abs(mine - true)[inner].max() < tol * np.abs(true).max(), name
        assert np.abs(mine - before)[inner].max() < 2e-4 * np.abs(true).max(), name  # the passband's gain: 1 to 1e-4
    noise = (data.tau - clean[::10]).std(axis=0)
    assert np.all((0.025 < noise) & (noise < 0.035)), noise
    assert "decimated by 10 to 100 Hz" in data.notes[0] and "on every signal alike" in data.notes[0]
    # the ends: scipy.signal.decimate pads with zeros and pulls a cosine's first samples towards 0;
    # the point reflection keeps them
    from scipy.signal import decimate as zero_padded

    from identification.signals import decimate

    mine = decimate(t, {"q": clean}, 10)[1]["q"]
    assert np.abs(mine - clean[::10]).max() < 1e-4
    assert np.abs(zero_padded(clean, 10, ftype="fir", zero_phase=True, axis=0) - clean[::10]).max() > 0.3


def test_decimation_errors():
    t = np.arange(2000) / 200.0
    with pytest.raises(PgaDynError, match="log.csv: the decimation factor must be a whole number >= 1, got 2.5"):
        trajectory(PUMA, t, sines(t)[0], decimate=2.5, source="log.csv")
    with pytest.raises(PgaDynError, match="log.csv: the decimation factor must be a whole number >= 1, got 0"):
        trajectory(PUMA, t, sines(t)[0], decimate=0, source="log.csv")
    fast = np.sin(2 * np.pi * 30 * np.outer(t, np.ones(6)))
    with pytest.raises(
        PgaDynError,
        match=r"decimating by 4 leaves a Nyquist frequency of 25 Hz, and the motion "
        r"reaches 3\d.* decimate less",
    ):
        trajectory(PUMA, t, fast, cutoff=40, decimate=4, source="log.csv")
    with pytest.raises(PgaDynError, match=r"100 samples are too few to decimate by 10 \(the anti-aliasing filter has"):
        trajectory(PUMA, t[:100], sines(t[:100])[0], cutoff=10, decimate=10, source="log.csv")
    jitter = t + np.random.default_rng(0).uniform(-1e-3, 1e-3, len(t))
    q, qd, qdd = sines(jitter)
    with pytest.raises(PgaDynError, match="decimation needs uniformly sampled times"):
        trajectory(PUMA, jitter, q, qd, qdd, decimate=2, source="log.csv")


# -- several experiments -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def experiments(tmp_path_factory):
    """Two 5 s Puma trajectories at 200 Hz with Pinocchio's noise-free forces, as files of t, q, tau
    whose times both start at 0; and the true base parameters."""
    folder = tmp_path_factory.mktemp("experiments")
    oracle = Oracle(PUMA, robots.data_path("puma560"))
    model = identification_model(PUMA)
    paths = []
    for seed in (0, 1):
        exact = random_excitation(PUMA, model=model, duration=5, seed=seed).trajectory
        tau = np.array([oracle.rnea(*state) for state in zip(exact.q, exact.qd, exact.qdd)])
        paths.append(
            write(
                folder / f"run{seed}.csv",
                {
                    "t": exact.t,
                    **{f"q_{n}": exact.q[:, j] for j, n in enumerate(NAMES)},
                    **{f"tau_{n}": tau[:, j] for j, n in enumerate(NAMES)},
                },
            )
        )
    return paths, model, model.values(model.theta(oracle.link_parameters()))


def test_experiments_combined_each_differentiated_on_its_own(experiments):
    paths, model, truth = experiments
    a, b = (read_trajectory(PUMA, p, require_tau=True) for p in paths)
    both = combine([a, b])
    assert both.breaks == (len(a),) and len(both) == len(a) + len(b) and both.source == f"{paths[0]} + {paths[1]}"
    assert np.array_equal(both.t[: len(a)], a.t) and np.isclose(both.t[len(a)], a.t[-1] + 0.005)
    second = both.segments()[1]
    for name in ("q", "qd", "qdd", "tau"):
        assert np.array_equal(second.__getattribute__(name), getattr(b, name))
    assert np.allclose(np.diff(second.t), 0.005)
    assert "experiment 2, times shifted by +5 s to follow experiment 1" in both.notes[-1]
    est = estimate(model, both)
    assert np.linalg.norm(est.beta - truth) < 1e-4 * np.linalg.norm(truth)
    # differentiated across the boundary (one file of both), the derivatives at the jump are wrong
    glued = trajectory(PUMA, both.t, both.q, tau=both.tau)
    assert np.linalg.norm(estimate(model, glued).beta - truth) > 100 * np.linalg.norm(est.beta - truth)
    # aligned experiment by experiment
    aligned = both.aligned(0.01)
    parts = [p.aligned(0.01) for p in (a, b)]
    assert aligned.breaks == (len(parts[0]),)
    assert np.allclose(aligned.tau, np.vstack([p.tau for p in parts]), rtol=1e-12, atol=1e-12)


def test_combine_errors(experiments):
    a = read_trajectory(PUMA, experiments[0][0], require_tau=True)
    assert combine([a]) is a
    with pytest.raises(PgaDynError, match=r"renamed: its coordinates \['j1'"):
        combine([a, replace(a, names=tuple(f"j{k}" for k in range(1, 7)), source="renamed")])
    with pytest.raises(PgaDynError, match=r"motion: no measured tau, while the other experiments have it"):
        combine([a, replace(a, tau=None, source="motion")])
    with pytest.raises(PgaDynError, match=r"short: 1 sample: an experiment needs at least 2"):
        combine([a, replace(a, t=a.t[:1], q=a.q[:1], qd=a.qd[:1], qdd=a.qdd[:1], tau=a.tau[:1], source="short")])
    with pytest.raises(PgaDynError, match=r"combine takes one or more Trajectory objects, got \[\]"):
        combine([])
    with pytest.raises(
        PgaDynError,
        match=r"the delay must be a finite number of seconds shorter than the record "
        r"\(each experiment\)",
    ):
        combine([a, a]).aligned(6.0)


# -- the command line ----------------------------------------------------------------------------------------
def run(argv, capsys):
    code = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_log_of_a_real_robot(tmp_path, capsys, experiments):
    """Two experiments logged as a robot's logger writes them (ns stamps, pos/vel/current channels
    numbered from 1, a temperature and a text column), forces from currents and drive gains:
    the CLI's estimate is Pinocchio's base parameters, and it says what it read."""
    _, model, truth = experiments
    oracle = Oracle(PUMA, robots.data_path("puma560"))
    files = []
    for seed in (0, 1):
        exact = random_excitation(PUMA, model=model, duration=5, seed=seed).trajectory
        tau = np.array([oracle.rnea(*state) for state in zip(exact.q, exact.qd, exact.qdd)])
        stamps = 1_700_000_000_000_000_000 + 5_000_000 * np.arange(len(exact))
        files.append(
            write(
                tmp_path / f"log{seed}.csv",
                {
                    "time_ns": stamps,
                    **block("pos_j", exact.q),
                    **block("vel_j", exact.qd),
                    **block("cur_j", tau / GAINS),
                    "temperature_j1": np.full(len(exact), 40.0),
                    "mode": ["RUNNING"] * len(exact),
                },
            )
        )
    options = [
        "--columns",
        "t=time_ns",
        "q_{name}=pos_j{index}",
        "qd_{name}=vel_j{index}",
        "current_{name}=cur_j{index}",
        "--time-scale",
        1e-9,
        "--gains",
        *GAINS,
        "--trim",
        0.1,
    ]
    code, out, err = run(
        [
            "identify",
            "puma560",
            *files,
            *options,
            "--no-friction",
            "--no-armature",
            "--json",
            "--quiet",
            "--no-hold-out",
        ],
        capsys,
    )
    assert code == 0, err
    result = json.loads(out)
    beta = np.array([p["value"] for p in result["base"]])
    assert np.linalg.norm(beta - truth) < 1e-4 * np.linalg.norm(truth)
    assert result["samples"] == 2 * (1000 - 2 * 20)  # 0.1 s trimmed at both ends of each
    assert f"data: {files[0]}: ignored columns: ['temperature_j1', 'mode']" in result["reading"]
    code, out, _ = run(
        ["identify", "puma560", *files, *options, "--test", files[1], "--decimate", 2, "--quiet"], capsys
    )
    assert code == 0 and "read:             data:" in out and "decimated by 2 to 100 Hz" in out
    assert "read:             held-out: forces = current x drive gain" in out
    code, _, err = run(["identify", "puma560", files[0], *options[:5]], capsys)
    assert code == 2 and "but no drive gains" in err and str(files[0]) in err
    code, _, err = run(["identify", "puma560", files[0], *options[:7], "--gains", 9, 9], capsys)
    assert code == 2 and "2 gains for 6 actuated coordinates" in err


# -- ROS bags ------------------------------------------------------------------------------------------------
def write_bag(path, storage, messages, topics=("/joint_states",), extra_topic=True):
    """A ROS bag of sensor_msgs/JointState ``messages`` ((logged ns, stamp ns, names, position,
    velocity, effort)) on each of ``topics`` (and a std_msgs/String topic), written by rosbags."""
    from rosbags.typesys import Stores, get_typestore

    ros1 = storage == "ros1"
    store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
    state, header, time = (
        store.types[f"{p}/msg/{n}"]
        for p, n in (("sensor_msgs", "JointState"), ("std_msgs", "Header"), ("builtin_interfaces", "Time"))
    )
    serialize = store.serialize_ros1 if ros1 else store.serialize_cdr
    if ros1:
        from rosbags.rosbag1 import Writer

        writer = Writer(path)
    else:
        from rosbags.rosbag2 import StoragePlugin, Writer

        plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
        writer = Writer(path, version=9, storage_plugin=plugin)
    with writer:
        connections = [writer.add_connection(topic, state.__msgtype__, typestore=store) for topic in topics]
        if extra_topic:
            text = store.types["std_msgs/msg/String"]
            log = writer.add_connection("/log", text.__msgtype__, typestore=store)
            writer.write(log, messages[0][0], serialize(text(data="start"), text.__msgtype__))
        for logged, stamp, names, position, velocity, effort in messages:
            head = {"stamp": time(sec=stamp // 10**9, nanosec=stamp % 10**9), "frame_id": ""}
            msg = state(
                header=header(seq=0, **head) if ros1 else header(**head),
                name=list(names),
                **{
                    field: np.ascontiguousarray(values, dtype=float)
                    for field, values in (("position", position), ("velocity", velocity), ("effort", effort))
                },
            )
            for connection in connections:
                writer.write(connection, logged, serialize(msg, state.__msgtype__))
    return path


def joint_states(ns=600, zero_stamps=False):
    """JointState messages at 200 Hz of the Puma's joints and a gripper, the order of the names
    reversed in every other message; and t, q, qd, tau."""
    t = np.arange(ns) / 200.0
    q, qd, _ = sines(t)
    tau = np.cos(np.outer(t, W))
    names = [*NAMES, "gripper"]
    messages = []
    for k in range(ns):
        stamp = 1_700_000_000_000_000_000 + 5_000_000 * k
        values = [np.append(x[k], 0.01) for x in (q, qd, tau)]
        order = slice(None, None, -1 if k % 2 else 1)
        messages.append((stamp + 1000, 0 if zero_stamps else stamp, names[order], *(v[order] for v in values)))
    return messages, t, q, qd, tau


@pytest.mark.parametrize("storage", ["ros1", "mcap", "sqlite3"])
def test_ros_bag_joint_states(tmp_path, storage):
    pytest.importorskip("rosbags")
    messages, t, q, qd, tau = joint_states()
    path = write_bag(
        tmp_path / ("log.bag" if storage == "ros1" else "log"),
        storage,
        messages,
        topics=("/joint_states", "/arm/joint_states"),
    )
    data = read_trajectory(PUMA, path, require_tau=True, topic="/joint_states")
    assert np.allclose(data.t, t, rtol=0, atol=1e-9) and np.array_equal(data.tau, tau)
    assert np.abs(data.q - q).max() < 1e-5 and np.abs(data.qd - qd).max() < 1e-4
    assert "ignored columns: ['position_gripper', 'velocity_gripper', 'effort_gripper']" in data.notes
    assert "600 sensor_msgs/JointState messages on /joint_states" in data.notes[0]
    if storage != "ros1":  # the storage file inside the rosbag2 folder reads the same
        inner = next(p for p in path.iterdir() if p.suffix in (".mcap", ".db3"))
        assert np.array_equal(read_trajectory(PUMA, inner, require_tau=True, topic="/joint_states").tau, tau)
    with pytest.raises(
        PgaDynError,
        match=r"several sensor_msgs/JointState topics \['/arm/joint_states', "
        r"'/joint_states'\]: choose one",
    ):
        read_trajectory(PUMA, path)
    with pytest.raises(PgaDynError, match=r"no sensor_msgs/JointState topic '/nope' \(JointState topics"):
        read_trajectory(PUMA, path, topic="/nope")
    with pytest.raises(PgaDynError, match=r"a ROS bag's times are read in seconds"):
        read_trajectory(PUMA, path, time_scale=1e-9)


def test_ros_bag_details_and_errors(tmp_path):
    pytest.importorskip("rosbags")
    messages, t, q, qd, tau = joint_states(ns=300, zero_stamps=True)
    path = write_bag(tmp_path / "zero", "mcap", messages)
    data = read_trajectory(PUMA, path, require_tau=True)  # the only JointState topic; stamps 0: the logged times
    assert np.allclose(data.t, t, rtol=0, atol=1e-9)
    assert "after the first time the bag logged (the header stamps are 0)" in data.notes[0]
    none = write_bag(tmp_path / "none", "mcap", messages[:3], topics=())
    with pytest.raises(
        PgaDynError,
        match=r"none: no sensor_msgs/JointState topic \(topics: \['/log "
        r"\(std_msgs/msg/String\)'\]\)",
    ):
        read_trajectory(PUMA, none)
    changed = [messages[0], (*messages[1][:2], ["joint1"], [0.0], [0.0], [0.0])]
    with pytest.raises(PgaDynError, match=r"message 1 on /joint_states names the joints \['joint1'\]"):
        read_trajectory(PUMA, write_bag(tmp_path / "changed", "mcap", changed))
    ragged = [messages[0], (*messages[1][:5], [])]
    with pytest.raises(PgaDynError, match=r"effort is empty in message 1 on /joint_states and not in message 0"):
        read_trajectory(PUMA, write_bag(tmp_path / "ragged", "mcap", ragged))
    short = [messages[0], (*messages[1][:3], [0.0], *messages[1][4:])]
    with pytest.raises(PgaDynError, match=r"message 1 on /joint_states has 1 position values for 7 joints"):
        read_trajectory(PUMA, write_bag(tmp_path / "short", "mcap", short))
    nan = [messages[0], (*messages[1][:5], [np.nan] * 7), *messages[2:40]]
    with pytest.raises(PgaDynError, match=r"message 1, column 'effort_"):
        read_trajectory(PUMA, write_bag(tmp_path / "nan", "mcap", nan), require_tau=True)
    (tmp_path / "junk.bag").write_bytes(b"not a bag")
    with pytest.raises(PgaDynError, match=r"junk.bag: not a readable ROS bag"):
        read_trajectory(PUMA, tmp_path / "junk.bag")
    csv_path = logger_file(tmp_path / "log.csv", ns=40)[0]
    with pytest.raises(PgaDynError, match=r"log.csv: a topic is read from ROS bags only"):
        read_trajectory(PUMA, csv_path, columns=MAP, topic="/joint_states")


def test_ros_bag_without_rosbags_or_file(tmp_path, monkeypatch):
    pytest.importorskip("rosbags")
    with pytest.raises(PgaDynError, match=r"absent.bag: cannot be read"):
        read_trajectory(PUMA, tmp_path / "absent.bag")
    monkeypatch.setitem(__import__("sys").modules, "rosbags.highlevel", None)  # as if not installed
    with pytest.raises(
        PgaDynError, match=r"reading ROS bags needs rosbags: pip install '\.\[logs\]' in pga-dyn's checkout"
    ):
        read_trajectory(PUMA, tmp_path / "absent.bag")
