"""Records of a parallel machine (pga_dyn.sampling.record_states, identification states_of):
assembled along the record in the model's assembly mode, refused with the time where they leave it.

The oracle is the planar five-bar's closed-form inverse kinematics, written here from the joint
centres of robots/data/five_bar.urdf (A1, A2 at (-+0.1, 0); elbows B1, B2 at A_i + R(q_Ai) b_i;
the tool point C at distance 0.25 m from both elbows, on one side of the line B1 B2 or the other:
the two assembly modes), and its transmission angle: delta, the angle between the distal links'
lines (0 where they are collinear, the singular configuration where the two modes meet).
"""

import numpy as np
import pytest

import robots
from identification import read_trajectory, trajectory
from identification.excitation import MIN_TRANSMISSION, default_max_cond, random_excitation
from identification.model import states_of
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.sampling import PASSIVE_TOL, complete_states, record_states

#: Joint centres of robots/data/five_bar.urdf at q = 0 (m): base joints, elbows relative to them,
#: the tool point C; distal links 0.25 m.
A = np.array([[-0.1, 0.0], [0.1, 0.0]])
B = np.array([[-0.101658353500986, 0.172236985469058], [0.101658353500986, 0.172236985469058]])
C0 = np.array([0.0, 0.32])
L2 = 0.25


def rotate(angle, v):
    """v (2,) rotated by ``angle`` (ns,): (ns, 2)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * v[0] - s * v[1], s * v[0] + c * v[1]], axis=-1)


def angle_of(v):
    return np.arctan2(v[..., 1], v[..., 0])


def inverse_kinematics(q_a, mode=1):
    """Closed form: the passive angles (ns, 2) of actuated angles q_a (ns, 2) in assembly mode
    ``mode`` (+1: C on the left of B1 -> B2, the model's mode at q0; -1 the other), and delta (ns,)."""
    e1, e2 = A[0] + rotate(q_a[:, 0], B[0]), A[1] + rotate(q_a[:, 1], B[1])
    d = e2 - e1
    dist = np.linalg.norm(d, axis=1)
    h = np.sqrt(L2**2 - dist**2 / 4)
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / dist[:, None]
    c = (e1 + e2) / 2 + mode * h[:, None] * normal
    elbows = A + B
    qp = np.stack(
        [
            angle_of(c - e1) - angle_of(C0 - elbows[0]) - q_a[:, 0],
            angle_of(c - e2) - angle_of(C0 - elbows[1]) - q_a[:, 1],
        ],
        axis=1,
    )
    delta = 2 * np.arctan2(h, dist / 2)  # the distal links' lines: each at arctan(h / (dist / 2)) to B1 B2
    return np.angle(np.exp(1j * qp)), delta


@pytest.fixture(scope="module")
def five_bar():
    return robots.load("five_bar")


def wave(s_max, ns=801, duration=2.0):
    """A record out to q_a = (s_max, -s_max) and back (the elbows spread apart, towards the fold
    where the distal links line up): t (ns,), q_a, qd_a, qdd_a (ns, 2)."""
    t = np.linspace(0.0, duration, ns)
    w = np.pi / duration
    s, sd, sdd = s_max * np.sin(w * t), s_max * w * np.cos(w * t), -s_max * w * w * np.sin(w * t)
    return t, np.stack([s, -s], 1), np.stack([sd, -sd], 1), np.stack([sdd, -sdd], 1)


def fold():
    """s* where q_a = (s*, -s*) puts the elbows 2 L2 apart (the singular configuration), by bisection
    on the closed-form elbow distance."""
    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        e1, e2 = A[0] + rotate(np.array([mid]), B[0]), A[1] + rotate(np.array([-mid]), B[1])
        lo, hi = (mid, hi) if np.linalg.norm(e2 - e1) < 2 * L2 else (lo, mid)
    return lo


def test_record_in_the_model_mode_equals_the_closed_form(five_bar):
    """Along a record close to the fold (delta down to a few degrees): the passive angles of the
    model's mode, and cond(J_p) = cot(delta / 2) (the relation behind excite's default limit)."""
    t, q, qd, qdd = wave(0.97 * fold())
    states = record_states(five_bar, t, q, qd, qdd, max_cond=1e3)
    qp, delta = inverse_kinematics(q)
    assert np.abs(np.angle(np.exp(1j * (states.q[:, [1, 3]] - qp)))).max() < 1e-9
    assert np.degrees(delta.min()) < 25
    assert np.allclose(states.cond, 1 / np.tan(delta / 2), rtol=1e-9)
    # velocities: the closed form differentiated along the record
    dt = t[1] - t[0]
    rate = np.gradient(np.unwrap(qp, axis=0), dt, axis=0, edge_order=2)
    assert np.abs(states.qd[2:-2, [1, 3]] - rate[2:-2]).max() < 1e-4 * np.abs(rate).max()


def test_a_record_that_meets_the_fold_is_refused_at_its_time(five_bar):
    """Out to 0.05 % of the fold and back (the machine may leave its mode there): refused at the
    first sample where the closed form's cot(delta / 2) reaches the limit, 30 (3 x cond at q0 is lower)."""
    t, q, qd, qdd = wave(0.9995 * fold())
    _, delta = inverse_kinematics(q)
    first = int(np.flatnonzero(1 / np.tan(delta / 2) >= 30)[0])
    with pytest.raises(PgaDynError, match=rf"log.csv: t = {t[first]:.6g} s \(sample {first}\): cond\(J_p\) = "):
        record_states(five_bar, t, q, qd, qdd, source="log.csv")


def test_measured_passive_angles_tell_the_modes_apart(five_bar):
    """Passive encoders: the model's mode passes; the other mode is refused from t = 0; a record
    whose passive angles change mode at a time (a machine that flipped where the actuated angles
    do not tell) is refused from that time."""
    t, q, qd, qdd = wave(0.5 * fold())
    ours, _ = inverse_kinematics(q, +1)
    other, _ = inverse_kinematics(q, -1)
    noise = 1e-4 * np.random.default_rng(0).standard_normal(ours.shape)
    names = ("B1", "B2")
    states = record_states(five_bar, t, q, qd, qdd, passive=dict(zip(names, (ours + noise).T)))
    assert np.abs(states.q[:, [1, 3]] - ours).max() < 1e-9
    assert np.abs(ours - other).min() > 10 * PASSIVE_TOL
    with pytest.raises(PgaDynError, match=r"another assembly mode from t = 0 s \(sample 0\): the measured B1"):
        record_states(five_bar, t, q, qd, qdd, passive=dict(zip(names, other.T)))
    flipped = ours.copy()
    flipped[300:] = other[300:]
    with pytest.raises(PgaDynError, match=rf"another assembly mode from t = {t[300]:.6g} s \(sample 300\)"):
        record_states(five_bar, t, q, qd, qdd, passive={"B2": flipped[:, 1]})
    with pytest.raises(PgaDynError, match="'A1' is not a passive coordinate"):
        record_states(five_bar, t, q, qd, qdd, passive={"A1": q[:, 0]})


def test_several_records_restart_from_the_reference(five_bar):
    """Where t does not increase a new record starts: assembled from q0 again (equal to the closed
    form), not continued from the last sample of the one before."""
    t, q, qd, qdd = wave(0.5 * fold(), ns=101)
    both = [np.concatenate([x, x]) for x in (t, q, qd, qdd)]
    states = record_states(five_bar, *both)
    assert np.abs(states.q[:, [1, 3]] - np.concatenate([inverse_kinematics(q)[0]] * 2)).max() < 1e-9


def test_states_of_a_file_with_passive_columns(five_bar, tmp_path):
    """q_B1, q_B2 columns of a CSV (irregular times: resampled with q) and of an NPZ reach the
    check; a file in the other mode is refused naming the file and the time."""
    t, q, qd, qdd = wave(0.5 * fold(), ns=401)
    ours, _ = inverse_kinematics(q, +1)
    other, _ = inverse_kinematics(q, -1)
    keep = np.sort(np.random.default_rng(1).choice(len(t), 300, replace=False))
    for label, passive in (("ours", ours), ("other", other)):
        data = trajectory(
            five_bar,
            t[keep],
            q[keep],
            tau=np.zeros((len(keep), 2)),
            passive={"B1": passive[keep, 0], "B2": passive[keep, 1]},
        )
        assert "resampled" in data.derivatives and set(data.passive) == {"B1", "B2"}
        for ext in ("csv", "npz"):
            path = tmp_path / f"{label}.{ext}"
            data.write(path)
            back = read_trajectory(five_bar, path)
            assert np.array_equal(back.passive["B1"], data.passive["B1"])
            if label == "ours":
                states = states_of(five_bar, back)
                assert np.abs(states.q[:, 1] - back.passive["B1"]).max() < 1e-3
            else:
                with pytest.raises(
                    PgaDynError,
                    match=rf"{path.name}: the record runs in another assembly mode "
                    r"from t = 0\.\d* s",
                ):
                    states_of(five_bar, back)
    (tmp_path / "other.csv").write_text("t,q_A1,q_A2,q_A9,q_B1\n" + "".join(f"{0.01 * k},0,0,0,0\n" for k in range(40)))
    other = read_trajectory(five_bar, tmp_path / "other.csv", cutoff=10)  # not a coordinate: ignored and named
    assert set(other.passive) == {"B1"} and "ignored columns: ['q_A9']" in other.notes


def test_a_tree_record_is_its_complete_states():
    robot = robots.load("puma560")
    t, q, qd, qdd = wave(0.3)
    q, qd, qdd = (np.tile(x, 3) for x in (q, qd, qdd))
    a, b = record_states(robot, t, q, qd, qdd), complete_states(robot, q, qd, qdd)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.G, b.G)


def test_excite_keeps_the_transmission_angle(five_bar):
    """excite's default limit on the five-bar is cot(20 degrees) (its q0 is at cond 1.36): on a wide box
    (+-1.5 rad, where the machine reaches its fold) the random starts fail until the box is shrunk
    around q0 (a warning), and every sample keeps the distal links MIN_TRANSMISSION = 40 degrees
    from collinear, per the closed form; the largest cond(J_p) is cot(delta_min / 2)."""
    assert default_max_cond(five_bar) == pytest.approx(1 / np.tan(np.radians(20)))
    box = {"A1": (-1.5, 1.5), "A2": (-1.5, 1.5)}
    with pytest.warns(PgaDynWarning, match=r"cond\(J_p\) >= 2.75\): the box was shrunk 2 times"):
        excitation = random_excitation(five_bar, duration=10, rate=50, period=10, seed=0, bounds=box, velocity=3)
    _, delta = inverse_kinematics(excitation.trajectory.q)
    assert np.degrees(delta.min()) >= MIN_TRANSMISSION
    assert excitation.max_cond_jp == pytest.approx(1 / np.tan(delta.min() / 2), rel=1e-9)


def test_excite_writes_its_fourier_coefficients_and_the_controller_rate(tmp_path, capsys):
    """``pga-dyn excite --coefficients --controller-rate``: the series replayed from the JSON (and the
    NPZ) by the formula written here gives the trajectory file's samples and the controller file's,
    whose velocities and accelerations match central differences of its positions."""
    import json

    from pga_dyn.cli import main

    out = tmp_path / "traj.csv"
    argv = [
        "excite",
        "five_bar",
        "-o",
        str(out),
        "--duration",
        "2",
        "--rate",
        "50",
        "--period",
        "2",
        "--iterations",
        "2",
        "--controller-rate",
        "1000",
    ]
    assert main(argv + ["--coefficients", str(tmp_path / "c.json")]) == 0
    assert main(argv[:3] + [str(tmp_path / "t2.csv")] + argv[4:] + ["--coefficients", str(tmp_path / "c.npz")]) == 0
    text = capsys.readouterr().out
    assert f"controller rate:  {tmp_path / 'traj_1000Hz.csv'}: 2000 samples at 1000 Hz" in text
    robot = robots.load("five_bar")
    with open(tmp_path / "c.json", encoding="utf-8") as handle:
        c = json.load(handle)
    with np.load(tmp_path / "c.npz") as z:
        assert np.array_equal(z["a"], c["a"]) and np.array_equal(z["q0"], c["q0"]) and float(z["frequency"]) == 0.5
    assert c["coordinates"] == ["A1", "A2"] and c["harmonics"] == 5

    def replay(t):
        w = 2 * np.pi * c["frequency"] * np.arange(1, c["harmonics"] + 1)
        return (
            np.array(c["q0"])
            + np.sin(np.outer(t, w)) @ np.array(c["a"]).T
            + np.cos(np.outer(t, w)) @ np.array(c["b"]).T
        )

    for name, rate in (("traj.csv", 50), ("traj_1000Hz.csv", 1000)):
        data = read_trajectory(robot, tmp_path / name)
        assert len(data) == 2 * rate and np.allclose(data.t, np.arange(2 * rate) / rate, atol=1e-12)
        assert np.abs(data.q - replay(data.t)).max() < 1e-12
    fast = read_trajectory(robot, tmp_path / "traj_1000Hz.csv")
    dt = 1e-3
    assert np.abs(fast.qd[1:-1] - (fast.q[2:] - fast.q[:-2]) / (2 * dt)).max() < 1e-4 * np.abs(fast.qd).max()
    assert np.abs(fast.qdd[1:-1] - (fast.qd[2:] - fast.qd[:-2]) / (2 * dt)).max() < 1e-4 * np.abs(fast.qdd).max()
    with pytest.raises(PgaDynError, match="must end in .json or .npz"):
        random_excitation(robot, duration=1, rate=20, period=1, seed=0).write_coefficients(tmp_path / "c.txt")
