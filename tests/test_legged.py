"""Legged robots (identification.legged): records of a floating base with contacts, the rows of
the sensing cases, their identifiability per contact mode, and the estimates.

Oracles: the model file's own parameters (the simulated records are made from them, the estimate
must give them back), DRNG's proven nullspace of the floating robot, physical identities (a
robot in flight has zero base rows at its own parameters, so a base-rows-only record of flights
cannot fix their scale), and the derivatives of an analytic motion."""

import numpy as np
import pytest

import drng
import pga_dyn
import robots
from identification.legged import (
    case_nullspace,
    identify_legged,
    legged_forces,
    legged_record,
    mode_states,
    read_legged,
    sensing_rows,
)
from pga_dyn.contacts import contact_frames
from pga_dyn.errors import PgaDynError
from pga_dyn.floating import trunk_state
from pga_dyn.kinematics import initial_poses

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@pytest.fixture(scope="module")
def go2():
    return robots.load("go2")


def simulated(robot, modes, n=120, seed=0, noise=0.0):
    """A record of random states of each contact mode (the feet in contact pinned), with the
    joint torques and contact forces of the model file's parameters (legged_forces), and the
    arrays it was made from."""
    frames = contact_frames(robot, list(FEET))
    parts = []
    for k, mode in enumerate(modes):
        st = mode_states(robot, frames, mode, n, seed + k)
        contact = np.tile([f in mode for f in FEET], (n, 1))
        tau, w = legged_forces(robot, frames, st.q, st.qd, st.qdd, contact)
        parts.append((st.q, st.qd, st.qdd, contact, tau, w))
    q, qd, qdd, contact, tau, w = (np.concatenate(x) for x in zip(*parts))
    p, quat, v, omega = trunk_state(q[:, :6], qd[:, :6], initial_poses(robot)[1])
    alpha = qdd[:, :3]
    a = qdd[:, 3:6] + np.cross(alpha, p) + np.cross(omega, v)
    if noise:
        rng = np.random.default_rng(seed + 100)
        tau = tau + noise * rng.normal(size=tau.shape) * np.sqrt(np.mean(tau**2, axis=0))
        w = w + noise * rng.normal(size=w.shape) * np.sqrt(np.mean(w**2, axis=0))
    arrays = dict(
        t=np.arange(len(q)) * 1e-3,
        position=p,
        quaternion=quat,
        q=q[:, 6:],
        linear=v,
        angular=omega,
        linear_acceleration=a,
        angular_acceleration=alpha,
        qd=qd[:, 6:],
        qdd=qdd[:, 6:],
        tau=tau,
        forces=w[:, :, :3],
        contact=contact,
    )
    record = legged_record(
        robot,
        arrays["t"],
        p,
        quat,
        q[:, 6:],
        FEET,
        **{k: arrays[k] for k in arrays if k not in ("t", "position", "quaternion", "q")},
    )
    return record, arrays, (q, qd, qdd)


def true_beta(robot, estimate):
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    return estimate.model.K[:, : phi.size] @ phi


def test_the_record_holds_the_states_and_the_equations_of_motion(go2):
    """The floating coordinates read back from the trunk's pose and twist are the states the
    record was made from, and Y pi = S^T tau + J_c^T w holds on the record (the rows of case A)."""
    record, _, (q, qd, qdd) = simulated(go2, [FEET, ()], n=20)
    np.testing.assert_allclose(record.motion.qd, qd, atol=1e-12)
    np.testing.assert_allclose(record.motion.qdd, qdd, atol=1e-10)
    np.testing.assert_allclose(
        pga_dyn.regressor(go2, record.motion.q, qd, qdd), pga_dyn.regressor(go2, q, qd, qdd), atol=1e-9
    )
    pi = pga_dyn.inertial_parameters(go2)
    import identification

    model = identification.identification_model(go2)
    W, y = sensing_rows(model, record, "A")
    Y = pga_dyn.regressor(go2, record.motion.q, record.motion.qd, record.motion.qdd)
    np.testing.assert_allclose(Y @ pi, y, atol=1e-9 * np.abs(y).max())
    assert record.modes() == {FEET: 20, (): 20}


@pytest.mark.parametrize("case", ["A", "B", "C"])
def test_noise_free_records_give_the_model_files_parameters(go2, case):
    """Exact accelerations, no noise: the base parameters of the model file to 1e-9 in the cases
    A, B and C (the goal is 1e-6), on a record of two stance modes with three feet down."""
    record, _, _ = simulated(go2, [FEET[:3], FEET[1:]], n=150)
    est = identify_legged(go2, record, case, weighted=False)
    beta = true_beta(go2, est)
    assert np.abs(est.beta - beta).max() <= 1e-9 * np.abs(beta).max()
    mass = est.total_mass()
    total = sum(go2.inertial(i).mass for i in range(1, go2.n + 1))
    if case == "C":
        assert mass is None  # joint torques with the feet's forces projected out do not weigh the robot
    else:
        assert mass[0] == pytest.approx(total, rel=1e-12)


def test_identifiability_per_case_and_mode(go2):
    """Contact forces with the base rows identify what all rows do (Ayusawa et al. 2014) in stance;
    flights alone leave their scale (pi, whose base rows vanish in flight); joint torques alone
    with all four feet pinned lose four directions, the total mass among them, and flights give
    them back."""
    frames = contact_frames(go2, list(FEET))
    proven = drng.nullspace(go2)
    stance = case_nullspace(go2, frames, "B", [FEET])
    assert stance.certified and stance.certificate["equals_drng"] and stance.basis.shape[1] == proven.dim
    flights = case_nullspace(go2, frames, "B", [()])
    assert flights.certified and flights.basis.shape[1] == proven.dim + 1
    pi = pga_dyn.inertial_parameters(go2)
    N = flights.nullspace
    assert np.linalg.norm(pi - N @ (N.T @ pi)) <= 1e-8 * np.linalg.norm(pi)
    torques = case_nullspace(go2, frames, "C", [FEET])
    assert torques.certified and torques.basis.shape[1] == proven.dim + 4
    mass = np.zeros(10 * go2.n)
    mass[9::10] = 1.0
    assert np.linalg.norm(torques.nullspace.T @ mass) > 0.1  # the total mass is not seen
    both = case_nullspace(go2, frames, "C", [FEET, ()])
    assert both.certificate["equals_drng"]


def test_noisy_records_and_held_out_checks(go2):
    """1 % noise on joint torques and contact forces: the total mass within 1 % (cases A and B),
    and held-out contact forces predicted within 5 % of the weight."""
    record, _, _ = simulated(go2, [FEET, FEET[:3], FEET[1:]], n=300, noise=0.01)
    test, _, _ = simulated(go2, [FEET, FEET[:3]], n=100, seed=7, noise=0.01)
    total = sum(go2.inertial(i).mass for i in range(1, go2.n + 1))
    for case in "AB":
        est = identify_legged(go2, record, case)
        assert est.total_mass()[0] == pytest.approx(total, rel=0.01)
        held = est.check(test)
        assert held["force_share"] < 0.05
    est = identify_legged(go2, record, "A")
    assert np.all(est.check(test)["tau_rms"] < 3 * np.sqrt(np.mean(record.motion.tau[:, 6:] ** 2, axis=0)))


def test_a_log_file_reads_back(go2, tmp_path):
    record, arrays, (q, qd, qdd) = simulated(go2, [FEET, ()], n=30)
    path = write_log(tmp_path / "log.csv", go2, arrays)
    with open(path) as handle:  # a column the reader does not know
        lines = handle.read().splitlines()
    path.write_text("\n".join([lines[0] + ",battery"] + [line + ",1.0" for line in lines[1:]]) + "\n")
    read = read_legged(go2, path, FEET)
    np.testing.assert_allclose(read.motion.q, record.motion.q, atol=1e-12)
    np.testing.assert_allclose(read.motion.qdd, record.motion.qdd, atol=1e-10)
    np.testing.assert_allclose(read.wrenches, record.wrenches)
    assert "ignored columns: ['battery']" in read.notes[0]
    lacking = tmp_path / "lacking.csv"
    text = path.read_text().splitlines()
    header = text[0].split(",")
    drop = header.index("f_RR_foot_z")
    lacking.write_text("\n".join(",".join(x for k, x in enumerate(line.split(",")) if k != drop) for line in text))
    with pytest.raises(PgaDynError, match=r"lacking.csv: missing columns \['f_RR_foot_z'\]"):
        read_legged(go2, lacking, FEET)
    with pytest.raises(PgaDynError, match="no link named 'hand'"):
        read_legged(go2, lacking, ["FL_foot", "hand"])


def test_velocities_and_accelerations_derived_from_the_pose(go2):
    """A smooth motion logged as poses only: the derived spatial twist and its derivative agree
    with the analytic ones inside the record (the filter's ends left out)."""
    t = np.arange(0, 4, 1e-3)
    angle = 0.3 * np.sin(2 * np.pi * 0.5 * t)
    axis = np.array([0.0, 0.6, 0.8])
    quat = np.column_stack([np.sin(angle / 2)[:, None] * axis, np.cos(angle / 2)])
    p = np.column_stack([0.1 * np.sin(2 * np.pi * 0.7 * t), 0.05 * np.cos(2 * np.pi * 0.4 * t), 0.3 + 0 * t])
    q = 0.2 * np.sin(2 * np.pi * 0.6 * t)[:, None] * np.ones(12)
    tau = np.random.default_rng(0).normal(size=(len(t), 12))
    record = legged_record(go2, t, p, quat, q, FEET, contact=np.ones((len(t), 4)), cutoff=5.0, tau=tau)
    # both sides through the same filter: tau smoothed by the derivatives' smoother, kept as logged
    from identification.signals import filter_window, savgol

    assert record.smoothing == filter_window(5.0, 1000.0) and record.transitions >= 30
    np.testing.assert_array_equal(record.raw_tau[:, 6:], tau)
    np.testing.assert_allclose(record.motion.tau[:, 6:], savgol(tau, record.smoothing, 0, 1e-3), atol=1e-12)
    rate = 2 * np.pi * 0.5 * 0.3 * np.cos(2 * np.pi * 0.5 * t)
    omega = rate[:, None] * axis
    v = np.column_stack(
        [
            0.1 * 2 * np.pi * 0.7 * np.cos(2 * np.pi * 0.7 * t),
            -0.05 * 2 * np.pi * 0.4 * np.sin(2 * np.pi * 0.4 * t),
            0 * t,
        ]
    )
    inside = slice(200, -200)  # the Savitzky-Golay filter's passband error: 1e-4 of the motion
    np.testing.assert_allclose(record.motion.qd[inside, :3], omega[inside], atol=1e-3 * np.abs(omega).max())
    np.testing.assert_allclose(
        record.motion.qd[inside, 3:6], (v - np.cross(omega, p))[inside], atol=1e-3 * np.abs(v).max()
    )


def test_cases_refuse_what_the_record_lacks(go2):
    record, _, _ = simulated(go2, [FEET], n=20)
    with pytest.raises(PgaDynError, match="case D needs flight phases"):
        identify_legged(go2, record, "D")
    with pytest.raises(PgaDynError, match="sensing case 'F'"):
        identify_legged(go2, record, "F")
    with pytest.raises(PgaDynError, match="case B has no joint torques"):
        identify_legged(go2, record, "B", friction=True)
    with pytest.raises(PgaDynError, match="needs a floating base"):
        legged_record(
            robots.load("go2", floating_base=False),
            [0, 1],
            np.zeros((2, 3)),
            [[0, 0, 0, 1]] * 2,
            np.zeros((2, 12)),
            FEET,
            contact=np.ones((2, 4)),
        )


def write_log(path, robot, arrays):
    """The arrays of simulated() as a log in the format of docs/identification.md."""
    columns = {"t": arrays["t"]}
    for k, c in enumerate(("base_x", "base_y", "base_z")):
        columns[c] = arrays["position"][:, k]
    for k, c in enumerate(("base_qx", "base_qy", "base_qz", "base_qw")):
        columns[c] = arrays["quaternion"][:, k]
    for k, x in enumerate("xyz"):
        columns[f"base_v{x}"] = arrays["linear"][:, k]
        columns[f"base_w{x}"] = arrays["angular"][:, k]
        columns[f"base_a{x}"] = arrays["linear_acceleration"][:, k]
        columns[f"base_alpha{x}"] = arrays["angular_acceleration"][:, k]
    for j, name in enumerate(robot.actuated_names[6:]):
        for kind in ("q", "qd", "qdd", "tau"):
            columns[f"{kind}_{name}"] = arrays[kind][:, j]
    for c, foot in enumerate(FEET):
        for k, x in enumerate("xyz"):
            columns[f"f_{foot}_{x}"] = arrays["forces"][:, c, k]
        columns[f"contact_{foot}"] = arrays["contact"][:, c].astype(float)
    with open(path, "w") as handle:
        handle.write(",".join(columns) + "\n")
        for row in np.column_stack(list(columns.values())):
            handle.write(",".join(repr(float(x)) for x in row) + "\n")
    return path


def test_the_command_line(go2, tmp_path, capsys):
    """pga-dyn identify ROBOT LOG --contacts ... --case B --json: the total mass of the model file
    within 1 % with 1 % noise and a verdict; pga-dyn analyze --contacts prints the cases."""
    import json

    from pga_dyn.cli import main

    _, arrays, _ = simulated(go2, [FEET, FEET[:3], FEET[1:]], n=150, noise=0.01)
    log = write_log(tmp_path / "log.csv", go2, arrays)
    assert main(["identify", "go2", str(log), "--contacts", *FEET, "--case", "B", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    total = sum(go2.inertial(i).mass for i in range(1, go2.n + 1))
    assert report["total_mass"]["value"] == pytest.approx(total, rel=0.01)
    assert report["verdict"]["state"] == "OK" and report["identifiability"]["equals_drng"]
    assert main(["identify", "go2", str(log), "--contacts", *FEET]) == 0
    assert capsys.readouterr().out.startswith("verdict:          OK")
    assert main(["analyze", "go2", "--contacts", *FEET, "--json"]) == 0
    cases = json.loads(capsys.readouterr().out)["cases"]
    stance = cases["C"]["records"]["stance"]
    assert stance["lost"] == 4 and cases["E"]["base_parameters"] == 68
    # the ground carries the weight: the total mass and the horizontal first moment are among the lost
    assert stance["lost_quantities"][:3] == ["m", "hx", "hy"] and stance["unexplained"] == 0
    torques_only = tmp_path / "torques.csv"  # no force columns: case C by default
    lines = log.read_text().splitlines()
    header = lines[0].split(",")
    drop = {k for k, c in enumerate(header) if c.startswith("f_")}
    torques_only.write_text(
        "\n".join(",".join(x for k, x in enumerate(line.split(",")) if k not in drop) for line in lines) + "\n"
    )
    assert main(["identify", "go2", str(torques_only), "--contacts", *FEET, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["case"] == "C"
    assert main(["identify", "go2", "--fixed", str(log), "--contacts", *FEET]) == 2
    assert "has no floating base here" in capsys.readouterr().err


def test_an_imu_gives_the_trunk_rates(go2, tmp_path):
    """A log with an IMU at the trunk's origin (gyro and accelerometer in the trunk frame): the gyro
    stands in for the world angular velocity; the accelerometer for the world acceleration when no
    velocity is logged (a logged velocity's derivative comes first)."""
    from pga_dyn.floating import rotation_matrices

    record, arrays, _ = simulated(go2, [FEET, ()], n=30)
    R = rotation_matrices(arrays["quaternion"])
    gyro = np.einsum("sji,sj->si", R, arrays["angular"])  # R^T omega
    specific = np.einsum("sji,sj->si", R, arrays["linear_acceleration"] - go2.gravity)  # R^T (a - g)
    path = write_log(tmp_path / "imu.csv", go2, arrays)
    lines = path.read_text().splitlines()
    header = lines[0].split(",")

    def without(columns, name):
        drop = {header.index(c) for c in columns}
        extra = np.column_stack([gyro, specific])
        rows = [
            ",".join([x for k, x in enumerate(line.split(",")) if k not in drop] + [repr(float(v)) for v in extra[s]])
            for s, line in enumerate(lines[1:])
        ]
        kept = [c for k, c in enumerate(header) if k not in drop] + [
            f"imu_{k}" for k in ("gx", "gy", "gz", "ax", "ay", "az")
        ]
        out = tmp_path / name
        out.write_text("\n".join([",".join(kept), *rows]) + "\n")
        return read_legged(go2, out, FEET)

    read = without(["base_wx", "base_wy", "base_wz"], "gyro.csv")
    np.testing.assert_allclose(read.motion.qd, record.motion.qd, atol=1e-9)
    np.testing.assert_allclose(read.motion.qdd, record.motion.qdd, atol=1e-9)
    assert any("gyro" in note for note in read.notes) and not any("accelerometer" in note for note in read.notes)
    moving = [c for c in header if c.startswith(("base_v", "base_w")) or c in ("base_ax", "base_ay", "base_az")]
    read = without(moving, "accelerometer.csv")  # the velocities derived from the pose, a from the IMU
    assert any("accelerometer" in note for note in read.notes)
    p, (w, alpha) = arrays["position"], (read.motion.qd[:, :3], read.motion.qdd[:, :3])
    v = read.motion.qd[:, 3:6] + np.cross(w, p)  # v_p = v_o + omega x p
    a = read.motion.qdd[:, 3:6] + np.cross(alpha, p) + np.cross(w, v)
    np.testing.assert_allclose(a, arrays["linear_acceleration"], atol=1e-9)
