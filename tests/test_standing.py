"""The standing excitation of a legged robot (identification.standing): the feet stay where they
stand, the rates are the derivatives of the motion, the forces are those of the robot's momentum,
the limits hold, and the written reference identifies the model file's parameters through the CLI.
The oracles: finite differences of the motion (evaluated again at nearby instants), the centre of
mass of the bodies from the readable kinematics (pga_dyn.kinematics.Kinematics), the URDF's text,
the identification of pga-dyn identify."""

import io
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import pga_dyn
import robots
from identification.legged import read_legged
from identification.model import identification_model
from identification.standing import (
    envelope,
    standing_excitation,
    standing_motion,
    standing_pose,
)
from pga_dyn.cli import main
from pga_dyn.contacts import contact_frames, contact_terms
from pga_dyn.errors import PgaDynError
from pga_dyn.kinematics import Kinematics

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@pytest.fixture(scope="module")
def go2():
    return robots.load("go2")


@pytest.fixture(scope="module")
def standing(go2):
    return standing_excitation(go2, FEET, duration=4.0, rate=100.0, period=2.0, iterations=15, seed=1)


def test_the_urdf_limits_of_speed_and_effort_are_read(go2):
    """JointSpec.velocity and .effort are the URDF's <limit velocity effort> (the file's text)."""
    root = ET.parse(robots.data_path("go2")).getroot()
    limits = {j.get("name"): j.find("limit") for j in root.iter("joint") if j.find("limit") is not None}
    for joint in go2.tree_joints[1:]:
        assert joint.velocity == float(limits[joint.name].get("velocity"))
        assert joint.effort == float(limits[joint.name].get("effort"))


def test_the_default_standing_pose_bends_the_legs_on_a_flat_floor(go2):
    """The feet on z = 0 below where they are at q0, the knees bent inside their limits, the trunk
    level; the same joints given back give the same pose, and uneven feet are refused."""
    frames = contact_frames(go2, list(FEET))
    pose = standing_pose(go2, frames)
    q = np.concatenate([np.zeros(6), pose.joints])
    feet_q0 = contact_terms(go2, frames, go2.q0[None])[0][0]
    P = contact_terms(go2, frames, q[None])[0][0]
    np.testing.assert_allclose(pose.feet[:, :2], feet_q0[:, :2], atol=1e-9)
    np.testing.assert_allclose(P[:, 2] + pose.position[2], 0.0, atol=1e-9)
    assert 0.2 < pose.position[2] < -feet_q0[0, 2]  # lower than the straight legs' reach
    calves = pose.joints[2::3]
    assert np.all((calves > -2.7227) & (calves < -0.83776))
    np.testing.assert_allclose(pose.quaternion, [0, 0, 0, 1], atol=1e-15)
    again = standing_pose(go2, frames, {n: v for n, v in zip(go2.actuated_names[6:], pose.joints)})
    np.testing.assert_allclose(again.position, pose.position, atol=1e-9)
    uneven = pose.joints.copy()
    uneven[2] -= 0.3
    with pytest.raises(PgaDynError, match="foot FL_foot stands .* above the lowest"):
        standing_pose(go2, frames, uneven)


def test_the_envelope_starts_and_ends_at_rest():
    """e, de/dt, d2e/dt2 vanish at both ends, e = 1 between the ramps; its rates are the finite
    differences of e."""
    t = np.linspace(0, 5, 5001)
    e, ed, edd = envelope(t, 5.0, 1.0)
    for x in (e, ed, edd):
        assert abs(x[0]) < 1e-12 and abs(x[-1]) < 1e-12
    np.testing.assert_allclose(e[(t > 1) & (t < 4)], 1.0)
    h = t[1] - t[0]
    np.testing.assert_allclose(ed[1:-1], (e[2:] - e[:-2]) / (2 * h), atol=1e-5)
    second = (e[2:] - 2 * e[1:-1] + e[:-2]) / h**2  # off by h s''' / 6 where s''' jumps (t = 1, 4)
    np.testing.assert_allclose(edd[1:-1], second, atol=0.02)


def test_the_feet_stay_where_they_stand(go2, standing):
    """At every sample the feet are at their places on the floor and do not move (J_c qd = 0); the
    trajectory starts and ends in the standing pose at rest."""
    m = standing.motion
    P, J, _ = contact_terms(go2, standing.frames, m.q)
    np.testing.assert_allclose(P, np.broadcast_to(standing.pose.feet, P.shape), atol=1e-10)
    np.testing.assert_allclose(np.einsum("sri,si->sr", J, m.qd), 0.0, atol=1e-10)
    for s in (0, -1):
        np.testing.assert_allclose(m.q[s, 6:], standing.pose.joints, atol=1e-10)
        np.testing.assert_allclose(m.position[s], standing.pose.position, atol=1e-12)
        np.testing.assert_allclose(m.qd[s], 0.0, atol=1e-12)
        np.testing.assert_allclose(m.qdd[s], 0.0, atol=1e-9)


def test_the_rates_are_the_derivatives_of_the_motion(go2, standing):
    """The motion evaluated again at t - h, t, t + h: the joint rates and the trunk's velocities
    are the central differences of the positions (the angular velocity of the quaternions, omega =
    2 vec(dq/dt q*)), the accelerations those of the rates (the floating joint's qdd is the time
    derivative of its spatial twist); with J_c qd = 0 at every instant, the feet's accelerations
    J_c qdd + dJ_c/dt qd vanish too."""
    h = 1e-4
    for t in (0.7, 1.9, 3.1):
        m = standing_motion(go2, standing.frames, standing.pose, standing.multisine, [t - h, t, t + h])
        diff = (m.q[2, 6:] - m.q[0, 6:]) / (2 * h)
        np.testing.assert_allclose(m.qd[1, 6:], diff, atol=1e-6)
        np.testing.assert_allclose(m.qdd[1], (m.qd[2] - m.qd[0]) / (2 * h), atol=2e-5)
        np.testing.assert_allclose(m.linear[1], (m.position[2] - m.position[0]) / (2 * h), atol=1e-7)
        dq = (m.quaternion[2] - m.quaternion[0]) / (2 * h)
        qc = m.quaternion[1] * np.array([-1, -1, -1, 1.0])
        omega = 2 * (dq[3] * qc[:3] + qc[3] * dq[:3] + np.cross(dq[:3], qc[:3]))
        np.testing.assert_allclose(m.angular[1], omega, atol=1e-6)
        np.testing.assert_allclose(m.angular_acceleration[1], (m.angular[2] - m.angular[0]) / (2 * h), atol=1e-5)
        _, J, _ = contact_terms(go2, standing.frames, m.q)
        np.testing.assert_allclose(np.einsum("sri,si->sr", J, m.qd), 0.0, atol=1e-10)


def test_the_contact_forces_carry_the_robot(go2, standing):
    """The sum of the feet's forces is the rate of the robot's linear momentum minus its weight:
    M (d2c/dt2 - g), c the centre of mass of the bodies (readable kinematics, at t - h, t, t + h)."""
    h = 1e-3
    masses = np.array([go2.inertial(i).mass for i in range(1, go2.n + 1)])
    coms = np.array([go2.inertial(i).com for i in range(1, go2.n + 1)])
    for t in (1.3, 2.6):
        m = standing_motion(go2, standing.frames, standing.pose, standing.multisine, [t - h, t, t + h])
        c = []
        for q in m.q:
            kin = Kinematics(go2, q)
            c.append(
                sum(
                    mi * (kin.T[i + 1][:3, :3] @ ci + kin.T[i + 1][:3, 3])
                    for i, (mi, ci) in enumerate(zip(masses, coms))
                )
            )
        c = np.array(c) / masses.sum()
        expected = masses.sum() * ((c[2] - 2 * c[1] + c[0]) / h**2 - go2.gravity)
        np.testing.assert_allclose(m.forces[1].sum(axis=0), expected, atol=1e-3 * masses.sum())


def test_the_limits_hold_at_every_sample(go2, standing):
    """Each foot pushes on the floor above the floor force, inside the friction cone with its
    margin; the joints stay inside the file's position, speed and effort limits; the optimiser did
    not worsen case A's condition number."""
    m, lim = standing.motion, standing.limits
    fn = m.forces[:, :, 2]
    assert fn.min() >= lim.min_normal
    assert np.all(np.linalg.norm(m.forces[:, :, :2], axis=2) <= 0.6 * (1 - 0.2) * fn)
    for j, joint in enumerate(go2.tree_joints[1:]):
        assert joint.limits[0] <= m.q[:, 6 + j].min() and m.q[:, 6 + j].max() <= joint.limits[1]
        assert np.abs(m.qd[:, 6 + j]).max() <= joint.velocity
        assert np.abs(m.tau[:, j]).max() <= joint.effort
    assert standing.cond["A"] <= standing.cond_start["A"]
    assert standing.rank["A"] == (94, 94) and standing.rank["C"] == (90, 90)
    text = "\n".join(standing.report_text())
    assert "case A" in text and "mu (1 - margin) = 0.6 x (1 - 0.2) = 0.48" in text


def test_a_slippery_floor_scales_the_amplitudes_or_is_refused(go2):
    """A low friction coefficient scales the wobble down until the friction ratio fits, naming the
    foot that broke the cone first; a floor force the standing robot cannot give is refused,
    naming the foot; bad arguments name themselves."""
    slippery = standing_excitation(go2, FEET, duration=4.0, rate=50.0, iterations=2, friction_coefficient=0.05)
    assert slippery.scale < 1 and "friction ratio |f_t|/f_n of the foot" in slippery.scaled_by
    f = slippery.motion.forces
    assert np.all(np.linalg.norm(f[:, :, :2], axis=2) <= 0.05 * 0.8 * f[:, :, 2])
    with pytest.raises(PgaDynError, match="standing pose itself .* normal force of the foot FL_foot"):
        standing_excitation(go2, FEET, duration=3.0, rate=50.0, iterations=1, min_normal=100.0)
    with pytest.raises(PgaDynError, match="margin must be in"):
        standing_excitation(go2, FEET, margin=1.5)
    with pytest.raises(PgaDynError, match="amplitudes must be 6 peaks"):
        standing_excitation(go2, FEET, amplitudes=(0.1, 0.1))
    with pytest.raises(PgaDynError, match="needs a floating base"):
        standing_excitation(robots.load("go2", floating_base=False), FEET)


def test_the_written_reference_reads_back_and_identifies_the_model(go2, standing, tmp_path):
    """The reference written as a legged log reads back as the record it holds (NPZ and CSV), and
    pga-dyn identify on it, with its own expected torques and forces, gives the model file's base
    parameters (case A, DRNG's) to 1e-9."""
    path = tmp_path / "standing.csv"
    standing.write(path)
    standing.write(tmp_path / "standing.npz")
    for p in (path, tmp_path / "standing.npz"):
        record = read_legged(go2, p, FEET)
        np.testing.assert_allclose(record.motion.q, standing.motion.q, atol=1e-12)
        np.testing.assert_allclose(record.motion.qdd, standing.motion.qdd, atol=1e-9)
        np.testing.assert_allclose(record.wrenches[:, :, :3], standing.motion.forces, atol=0)
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        assert main(["identify", "go2", str(path), "--contacts", *FEET, "--json"]) == 0
    report = json.loads(out.getvalue())
    assert report["verdict"]["state"] == "OK"
    model = identification_model(go2)
    phi = pga_dyn.to_link_parameters(go2, pga_dyn.inertial_parameters(go2)).reshape(-1)
    truth = model.K[:, : phi.size] @ phi
    assert report["estimate"]["names"] == list(model.names)
    beta = np.array(report["estimate"]["beta"])
    assert np.abs(beta - truth).max() <= 1e-9 * np.abs(truth).max()


def test_the_command_writes_the_reference(tmp_path):
    """pga-dyn excite go2 --contacts ... writes the log and prints its report (JSON)."""
    out = io.StringIO()
    import contextlib

    path = tmp_path / "ref.csv"
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "excite",
                "go2",
                "--contacts",
                *FEET,
                "--duration",
                "3",
                "--rate",
                "50",
                "--iterations",
                "2",
                "-o",
                str(path),
                "--json",
            ]
        )
    assert code == 0 and path.exists()
    report = json.loads(out.getvalue())
    assert (
        report["feet"] == list(FEET) and report["samples"] == 151 and set(report["condition_number"]) == {"A", "B", "C"}
    )


def test_the_forces_minimise_the_friction_ratios(go2, standing):
    """At a few samples the feet's forces meet the base rows (the six equations of the trunk,
    sum_c J_c^T f_c = F_b) with the least-norm normal forces and, those fixed, the least sum of
    squared friction ratios sum_c |f_t,c|^2 / f_n,c^2: SciPy's SLSQP from another start finds no
    lower value."""
    from scipy.optimize import minimize

    m = standing.motion
    pi = pga_dyn.inertial_parameters(go2)
    for s in (40, 120, 300):
        F = pga_dyn.regressor(go2, m.q[s : s + 1], m.qd[s : s + 1], m.qdd[s : s + 1])[0] @ pi
        _, J, _ = contact_terms(go2, standing.frames, m.q[s : s + 1])
        A = J[0][:, :6].T  # (6, 12)
        f = m.forces[s].reshape(-1)
        np.testing.assert_allclose(A @ f, F[:6], atol=1e-9 * np.abs(F).max())
        normal = np.arange(2, 12, 3)
        fn = f[normal]
        tangential = np.setdiff1d(np.arange(12), normal)

        def ratios(ft, fn=fn):
            return float(np.sum(ft.reshape(4, 2) ** 2 / fn[:, None] ** 2))

        # on the floor z = 0 the base rows split: (moment x, y; force z) of the normal forces,
        # (moment z; force x, y) of the tangential ones
        tilt, slide = [0, 1, 5], [2, 3, 4]
        assert np.abs(A[np.ix_(tilt, tangential)]).max() < 1e-12 and np.abs(A[np.ix_(slide, normal)]).max() < 1e-12
        rhs = F[slide]
        found = minimize(
            ratios,
            np.zeros(8),
            constraints={"type": "eq", "fun": lambda ft: A[np.ix_(slide, tangential)] @ ft - rhs},
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert found.success
        assert ratios(f[tangential]) <= found.fun * (1 + 1e-6) + 1e-12
        # the normal forces: the least-norm ones meeting the base rows that the tangential ones leave
        nz = minimize(
            lambda x: float(x @ x),
            np.full(4, fn.mean()),
            constraints={"type": "eq", "fun": lambda x: A[np.ix_(tilt, normal)] @ x - F[tilt]},
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        np.testing.assert_allclose(fn, nz.x, rtol=1e-5)


def test_the_torques_and_forces_are_pinocchios_dynamics(go2, standing):
    """Pinocchio's inverse dynamics (RNEA) of the Go2 on a free flyer, read from the URDF, with the
    feet's forces as external forces: zero on the free flyer (the feet carry the trunk) and the
    joint torques of the reference."""
    pin = pytest.importorskip("pinocchio")
    from pga_dyn.floating import rotation_matrices

    model = pin.buildModelFromUrdf(robots.data_path("go2"), pin.JointModelFreeFlyer())
    data = model.createData()
    joints = list(go2.actuated_names[6:])
    ids = [model.getJointId(name) for name in joints]
    m = standing.motion
    for s in (25, 150, 333):
        R = rotation_matrices(m.quaternion[s])
        q = np.zeros(model.nq)
        v, a = np.zeros(model.nv), np.zeros(model.nv)
        q[:3], q[3:7] = m.position[s], m.quaternion[s]
        v[:3], v[3:6] = R.T @ m.linear[s], R.T @ m.angular[s]  # Pinocchio's free-flyer velocity is local
        a[:3] = R.T @ m.linear_acceleration[s] - np.cross(v[3:6], v[:3])  # d/dt of the local velocity
        a[3:6] = R.T @ m.angular_acceleration[s]
        for j, i in enumerate(ids):
            q[model.idx_qs[i]], v[model.idx_vs[i]], a[model.idx_vs[i]] = m.q[s, 6 + j], m.qd[s, 6 + j], m.qdd[s, 6 + j]
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        for c, foot in enumerate(FEET):
            frame = model.frames[model.getFrameId(foot)]
            joint = data.oMi[frame.parentJoint]
            f = m.forces[s, c]
            arm = data.oMf[model.getFrameId(foot)].translation - joint.translation
            fext[frame.parentJoint] += pin.Force(joint.rotation.T @ f, joint.rotation.T @ np.cross(arm, f))
        tau = pin.rnea(model, data, q, v, a, fext)
        weight = sum(go2.inertial(i).mass for i in range(1, go2.n + 1)) * 9.81
        np.testing.assert_allclose(tau[:6], 0.0, atol=1e-9 * weight)
        np.testing.assert_allclose(tau[[model.idx_vs[i] for i in ids]], m.tau[s], atol=1e-9 * weight)


def test_the_command_takes_the_standing_joints(tmp_path, capsys):
    """--stand JOINT=ANGLE sets the standing pose (the others at q0, the feet level); an entry
    that is not JOINT=ANGLE, or a joint that is not the robot's, is named."""
    stand = [
        f"{leg}_{part}_joint={value}"
        for leg in ("FL", "FR", "RL", "RR")
        for part, value in (("thigh", 0.8), ("calf", -1.5))
    ]
    argv = ["excite", "go2", "--contacts", *FEET, "--duration", "3", "--rate", "50", "--iterations", "2"]
    assert main([*argv, "--stand", *stand, "-o", str(tmp_path / "a.csv")]) == 0
    out = capsys.readouterr().out
    assert "FL_thigh_joint  0.8 " in out and "FR_calf_joint   -1.5 " in out
    assert main([*argv, "--stand", "FL_thigh_joint:0.8", "-o", str(tmp_path / "b.csv")]) == 2
    assert "--stand: 'FL_thigh_joint:0.8' is not JOINT=ANGLE" in capsys.readouterr().err
    assert main([*argv, "--stand", "knee=0.8", "-o", str(tmp_path / "c.csv")]) == 2
    assert "joints: 'knee' is not a joint of" in capsys.readouterr().err
