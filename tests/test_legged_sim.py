"""benchmarks/legged_sim.py: MuJoCo logs of the Go2 in issue 27's log format, checked on short
records: the written columns, their conventions (quaternion order, world angular velocity,
contact force on the robot) and the equations the noise-free logs satisfy (Newton's balance of
the whole robot; pga-dyn's regressor against the logged torques and contact wrenches)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "benchmarks"))

import legged_sim  # noqa: E402


def _read_csv(path):
    table = np.genfromtxt(path, delimiter=",", names=True)
    return {name: table[name] for name in table.dtype.names}


def _rotations(d):
    quat = np.stack([d[c] for c in ("base_qx", "base_qy", "base_qz", "base_qw")], axis=1)
    return np.stack([legged_sim._rot_wxyz(q) for q in quat[:, [3, 0, 1, 2]]])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("legsim")
    records = {
        "standing": legged_sim.standing(duration=0.3, settle=0.2),
        "hops": legged_sim.hops(duration=0.5, settle=0.2),
        "trot": legged_sim.trot(duration=0.4, settle=0.1),
        "suspended": legged_sim.suspended(duration=0.2, settle=0.1),
    }
    paths = {name: legged_sim.write_logs(r, str(folder)) for name, r in records.items()}
    return records, paths


def test_files_and_columns(logs):
    records, paths = logs
    for name, (csv, truth, noisy_csv, noisy_truth, exact_csv) in paths.items():
        assert os.path.basename(csv) == f"go2_{name}.csv" and truth.endswith(f"go2_{name}.truth.npz")
        d, n = _read_csv(csv), _read_csv(noisy_csv)
        assert list(d) == legged_sim.columns() == list(n)
        assert len(d["t"]) == len(records[name]) and np.allclose(np.diff(d["t"]), 1e-3)
        exact = np.load(truth)
        for c in legged_sim.columns():  # the CSV keeps 12 digits of the truth
            assert np.allclose(d[c], exact[c], rtol=1e-10, atol=1e-10), c
        e = _read_csv(exact_csv)
        assert list(e) == legged_sim.columns() + list(legged_sim.EXACT_COLUMNS)
        for c in e:
            assert np.allclose(e[c], exact[c], rtol=1e-10, atol=1e-10), c
        assert np.load(noisy_truth)["noisy"] == 1 and np.array_equal(
            np.load(noisy_truth)["tau_FL_hip_joint"], exact["tau_FL_hip_joint"]
        )


def test_conventions(logs):
    records, _ = logs
    d = records["standing"].data
    R = _rotations(d)
    assert abs(d["base_qw"][0] - 1) < 1e-3  # (x, y, z, w): the trunk starts level
    # MuJoCo's Euler step: p' = p + dt v', R' = R exp(dt [omega_body']): the logged world
    # velocities are exactly the differences of the logged poses
    p = np.stack([d[f"base_{a}"] for a in "xyz"], axis=1)
    v = np.stack([d[f"base_v{a}"] for a in "xyz"], axis=1)
    w = np.stack([d[f"base_w{a}"] for a in "xyz"], axis=1)
    assert np.abs((p[1:] - p[:-1]) / 1e-3 - v[1:]).max() < 1e-8
    dR = np.einsum("nij,nkj->nik", R[1:], R[:-1])  # R' R^T = exp(dt [omega_world])
    angle = np.arccos(np.clip((np.trace(dR, axis1=1, axis2=2) - 1) / 2, -1, 1))
    axis = np.stack([dR[:, 2, 1] - dR[:, 1, 2], dR[:, 0, 2] - dR[:, 2, 0], dR[:, 1, 0] - dR[:, 0, 1]], axis=1)
    omega = axis * (angle / (2 * np.sin(np.maximum(angle, 1e-300))) / 1e-3)[:, None]
    # the IMU in the trunk frame: the gyro R^T omega, the accelerometer R^T (a - g)
    gyro = np.stack([d[f"imu_g{a}"] for a in "xyz"], axis=1)
    accel = np.stack([d[f"imu_a{a}"] for a in "xyz"], axis=1)
    assert np.abs(np.einsum("nij,nj->ni", R, gyro) - w).max() < 1e-12
    a = np.einsum("nij,nj->ni", R, accel) + records["standing"].gravity
    assert np.abs((v[1:] - v[:-1]) / 1e-3 - a[:-1]).max() < 1e-8
    moving = np.linalg.norm(w[1:], axis=1) > 1e-3
    assert moving.any() and np.abs(omega - w[1:])[moving].max() < 1e-6 * np.abs(w).max() + 1e-9
    # the contact forces push the robot up, and their moment about the foot frame's origin is
    # that of a point below it (m . f = 0)
    mass = records["standing"].mass
    fz = sum(d[f"f_{foot}_z"] for foot in legged_sim.FEET)
    assert abs(fz.mean() / (mass * legged_sim.GRAVITY) - 1) < 0.05
    for foot in legged_sim.FEET:
        f = np.stack([d[f"f_{foot}_{a}"] for a in "xyz"], axis=1)
        m = np.stack([d[f"m_{foot}_{a}"] for a in "xyz"], axis=1)
        assert np.all(d[f"contact_{foot}"] == 1) and np.abs(np.sum(m * f, axis=1)).max() < 1e-9 * np.abs(f).max() ** 2
    h = records["hops"].data
    touch = np.stack([h[f"contact_{foot}"] for foot in legged_sim.FEET], axis=1)
    assert (touch.sum(axis=1) == 0).any() and (touch.sum(axis=1) == 4).any()  # flight and stance
    assert all(np.abs(h[f"f_{foot}_z"][touch[:, i] == 0]).max() == 0 for i, foot in enumerate(legged_sim.FEET))


def test_equations_hold(logs):
    _, paths = logs
    for name, files in paths.items():
        res = legged_sim.check(dict(np.load(files[1])))
        assert set(res) == {"newton", "base", "joints"}
        assert max(res.values()) < 1e-6, (name, res)


def test_noise(logs):
    records, paths = logs
    d = records["standing"].data
    n = _read_csv(paths["standing"][2])
    rel = np.std(n["tau_FL_calf_joint"] - d["tau_FL_calf_joint"]) / np.sqrt(np.mean(d["tau_FL_calf_joint"] ** 2))
    assert 0.007 < rel < 0.013
    assert 5e-5 < np.std(n["q_RR_thigh_joint"] - d["q_RR_thigh_joint"]) < 1.5e-4
    truth = np.load(paths["standing"][3])
    R = _rotations(d)
    err = np.einsum("nji,nj->ni", R, np.stack([n[f"base_w{a}"] - d[f"base_w{a}"] for a in "xyz"], axis=1))
    assert np.allclose(err.mean(axis=0), truth["gyro_bias"], atol=2e-3)  # the gyro's bias, in the trunk frame
    gyro = np.stack([n[f"imu_g{a}"] for a in "xyz"], axis=1)
    assert np.allclose(np.einsum("nij,nj->ni", R, gyro), np.stack([n[f"base_w{a}"] for a in "xyz"], axis=1))
    accel = np.stack([n[f"imu_a{a}"] - d[f"imu_a{a}"] for a in "xyz"], axis=1)
    assert np.allclose(accel.mean(axis=0), truth["accel_bias"], atol=1e-2)
    assert np.allclose(n["base_x"], d["base_x"], rtol=1e-10, atol=1e-12)  # the pose is logged as it is
    assert np.array_equal(n["contact_FL_foot"], d["contact_FL_foot"])


def test_friction_is_logged_apart():
    r = legged_sim.suspended(duration=0.1, settle=0.05, damping=0.1, frictionloss=0.3)
    friction = np.stack([r.data[f"tau_friction_{j}"] for j in legged_sim.JOINTS])
    assert np.abs(friction).max() > 0.05
    assert max(legged_sim.check(r.data, damping=0.1, frictionloss=0.3).values()) < 1e-6


def test_delay(logs):
    records, _ = logs
    r = records["hops"]
    quiet = {"relative": 0, "q_sigma": 0, "gyro_sigma": 0, "gyro_bias": 0, "accel_sigma": 0, "accel_bias": 0}
    plain, _ = legged_sim.add_noise(r, legged_sim.Noise(**quiet, delay=0))
    late, _ = legged_sim.add_noise(r, legged_sim.Noise(**quiet, delay=3))
    for c in ("q_FL_calf_joint", "tau_RR_hip_joint", "f_FL_foot_z", "imu_ax", "imu_gz"):
        assert np.array_equal(late[c][3:], plain[c][:-3]) and np.array_equal(plain[c], r.data[c]), c
    assert np.allclose(late["base_wy"][3:], r.data["base_wy"][:-3], rtol=1e-12, atol=1e-14)
    assert np.array_equal(late["base_z"], r.data["base_z"]) and np.array_equal(late["t"], r.data["t"])


def test_without_moments(logs, tmp_path):
    records, _ = logs
    paths = legged_sim.write_logs(records["trot"], str(tmp_path), "trot", moments=False)
    for csv in (paths[0], paths[2], paths[4]):
        names = list(_read_csv(csv))
        assert not [c for c in names if c.startswith("m_")] and "f_RR_foot_z" in names
    assert "m_RR_foot_z" in np.load(paths[1])
