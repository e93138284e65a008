"""Results a robot can use (identification: export, consistency, payload): the written
robot files read back by Pinocchio and MuJoCo, the parameters the data do not determine marked
so, a failed consistency check that still prints the estimate, the bounds on mass and extent
(checked with Pinocchio's inertias and by hand), a payload and drive gains recovered from
Pinocchio's forces of the loaded robot."""

import json
import os
import warnings

import numpy as np
import pytest
from oracle import Oracle, erd_path, numerical_rank, pin

import pga_dyn
import robots
from identification import (
    body_bounds,
    consistent_estimate,
    drive_gains,
    export_plan,
    identifiability,
    identification_model,
    identify_log,
    identify_payload,
    map_estimate,
    random_excitation,
    read_trajectory,
    report,
    report_text,
    simulate,
    write_model,
)
from identification.consistency import EXTENT_FACTOR, MASS_BOUNDS
from identification.estimation import estimate
from identification.physics import ellipsoid_margin, inertia_ellipsoid
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError, PgaDynWarning
from pga_dyn.sampling import sample_states

UR5 = "ur_description/urdf/ur5_robot.urdf"
FRICTION = {"viscous": np.array([1.0, 1.5, 0.8, 0.3, 0.2, 0.25]), "coulomb": np.array([2.0, 3.0, 1.5, 0.6, 0.5, 0.4])}
#: a payload in the frame of UR5's tool0 (merged into wrist_3_link by fixed joints)
PAYLOAD = dict(mass=2.805, lever=np.array([0.01, -0.02, 0.06]), inertia=np.diag([0.004, 0.005, 0.003]))
#: a three-joint MJCF arm with a vertical first joint (its armature regroups into Izz1R)
ARM = """<mujoco model="arm3"><compiler angle="radian"/>
<worldbody><body name="l1" pos="0 0 0.1"><joint name="j1" axis="0 0 1"/>
 <inertial pos="0.01 0 0.05" mass="2" diaginertia="0.02 0.02 0.01"/>
 <body name="l2" pos="0 0 0.1"><joint name="j2" axis="0 1 0"/>
  <inertial pos="0.15 0 0" mass="1.5" diaginertia="0.002 0.015 0.015"/>
  <body name="l3" pos="0.3 0 0"><joint name="j3" axis="0 1 0" damping="0.05"/>
   <inertial pos="0.1 0.01 0" mass="1" diaginertia="0.001 0.008 0.008"/></body></body></body></worldbody>
<actuator><motor joint="j1"/><motor joint="j2"/><motor joint="j3"/></actuator></mujoco>"""


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def ur5():
    path = erd_path(UR5)
    return robots.load_urdf(path), path


def pin_forces(oracle, traj, extras=None):
    """Pinocchio's joint forces along ``traj`` (serial robot), with viscous and Coulomb friction."""
    tau = np.array([oracle.rnea(q, qd, qdd) for q, qd, qdd in zip(traj.q, traj.qd, traj.qdd)])
    extras = extras or {}
    return tau + extras.get("viscous", 0.0) * traj.qd + extras.get("coulomb", 0.0) * np.sign(traj.qd)


def with_payload(robot, path, link, payload):
    """An Oracle of the robot file with ``payload`` added to the Pinocchio inertia of the joint that
    carries frame ``link`` (moved by the frame's placement: Pinocchio's, not pga-dyn's)."""
    oracle = Oracle(robot, path)
    model = oracle.model
    frame = model.frames[model.getFrameId(link)]
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(
        pin.Inertia(payload["mass"], payload["lever"], payload["inertia"])
    )
    return oracle


def payload_phi(payload):
    """The payload's link-frame parameters in its own frame, from Pinocchio."""
    return pin.Inertia(payload["mass"], payload["lever"], payload["inertia"]).toDynamicParameters()


# -- identifiable or not ------------------------------------------------------------------------------------
def test_identifiability_against_the_sampled_regressor():
    """theta_k is identifiable on its own exactly when e_k is in the row space of the stacked full
    regressor [Y_link, D] of random states (read off its SVD at the rank of the certificate's
    gap, not off K); the armature of the Puma's joints 1 and 2 is regrouped, that of joint 3 is not."""
    robot = robots.load("puma560")
    model = identification_model(robot, friction=("viscous",), armature=True)
    states = sample_states(robot, 40, seed=3)
    Y = model.full_regressor(states).reshape(-1, model.K.shape[1])
    norms = np.linalg.norm(Y, axis=0)
    live = norms > 1e-9 * norms.max()
    rank, gap = numerical_rank(Y)
    assert rank == model.num_parameters and gap > 1e6
    V = np.zeros((Y.shape[1], rank))
    V[live] = np.linalg.svd(Y[:, live] / norms[live], full_matrices=False)[2][:rank].T
    notes = identifiability(model)
    for k, note in enumerate(notes):
        alone = bool(live[k]) and np.linalg.norm(V[k]) > 1 - 1e-10
        assert alone == (note == ""), (model.parameter_names[k], note)
    named = dict(zip(model.parameter_names, notes))
    assert named["Ia_joint1"] == "not identifiable separately: regrouped into Izz1R"
    assert named["Ia_joint2"].startswith("not identifiable separately: regrouped into Izz2")
    assert named["Ia_joint3"] == "" and named["fv_joint1"] == ""
    assert named["m1"] == "not identifiable: no effect on the forces"


def test_reports_mark_regrouped_terms():
    """The consistent estimate's report and text do not show a regrouped armature as identified."""
    robot = robots.load("puma560")
    model = identification_model(robot, friction=("viscous",), armature=True)
    traj = random_excitation(robot, model=model, duration=6, rate=50, period=6, seed=0).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": 0.5, "armature": 0.1}, noise=0.01, seed=0)
    est = estimate(model, data)
    full = consistent_estimate(est)
    result = report(est, full)
    rows = {p["name"]: p for p in result["full"]["parameters"]}
    assert rows["Ia_joint1"]["note"] == "not identifiable separately: regrouped into Izz1R"
    assert "note" not in rows["Ia_joint3"] and "note" not in rows["fv_joint2"]
    line = next(line for line in report_text(result) if line.split()[:1] == ["Ia_joint1"])
    assert line.rstrip().endswith("not identifiable separately: regrouped into Izz1R")


# -- bounds on mass and extent -------------------------------------------------------------------------------
def test_inertia_ellipsoid_and_margin_by_hand():
    """The ellipsoid of a uniform solid ellipsoid's inertia (Pinocchio's FromEllipsoid) is that
    ellipsoid; a point mass's margin is m (1 - |p - c|_P^2), by hand."""
    axes = np.array([0.3, 0.1, 0.2])
    phi = pin.Inertia.FromEllipsoid(2.0, *axes).toDynamicParameters()
    e = inertia_ellipsoid(phi, 1.0)
    np.testing.assert_allclose(np.sort(e.axes), np.sort(axes), rtol=1e-12)
    np.testing.assert_allclose(np.abs(e.rotation), np.eye(3)[:, np.argsort(axes)], atol=1e-12)
    scaled = inertia_ellipsoid(phi, 2.0)
    np.testing.assert_allclose(scaled.axes, 2 * e.axes, rtol=1e-12)
    point = pin.Inertia(3.0, np.array([0.1, 0.05, -0.1]), np.zeros((3, 3))).toDynamicParameters()
    d = np.array([0.1, 0.05, -0.1]) - scaled.center
    by_hand = 3.0 * (1 - np.sum((scaled.rotation.T @ d) ** 2 / scaled.axes**2))
    assert abs(ellipsoid_margin(point, scaled.matrix()) - by_hand) < 1e-12
    flat = pin.Inertia.FromBox(1.0, 1.0, 0.5, 0.0).toDynamicParameters()  # a plate: the floor raises its thin axis
    assert np.isclose(inertia_ellipsoid(flat, 1.0).axes.min(), 0.1 * inertia_ellipsoid(flat, 1.0).axes.max())
    assert inertia_ellipsoid(np.zeros(10), 1.0) is None


def margin_pinocchio(phi_b, e):
    """The extent margin from Pinocchio's mass, lever and inertia about the centre of mass:
    m - tr(P (Sigma_c + m (c - c_E)(c - c_E)^T)), Sigma_c = 1/2 tr(I_c) 1 - I_c."""
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(phi_b, dtype=float))
    m, c, Ic = inertia.mass, inertia.lever, inertia.inertia
    P = e.rotation @ np.diag(e.axes**-2.0) @ e.rotation.T
    sigma = 0.5 * np.trace(Ic) * np.eye(3) - Ic + m * np.outer(c - e.center, c - e.center)
    return m - np.trace(P @ sigma)


def test_extent_keeps_a_body_inside(ur5):
    """UR5 whose forearm has its mass on a line (a rod three times as long as the model's ellipsoid):
    without bounds the consistent estimate puts the forearm on the PSD boundary and outside the
    ellipsoid of the model's inertia x 2; with the default bounds it stays inside (margin checked
    from Pinocchio's inertia), every mass within its bounds, the fit as good within 1.5x."""
    robot, path = ur5
    oracle = Oracle(robot, path)
    phi = oracle.link_parameters()
    e = inertia_ellipsoid(phi[2], EXTENT_FACTOR)
    m, c = phi[2, 0], phi[2, 1:4] / phi[2, 0]
    axis, length = e.rotation[:, np.argmax(e.axes)], 3 * e.axes.max()
    joint = oracle.body_joint("forearm_link")
    oracle.model.inertias[joint] = pin.Inertia(m, c, m * length**2 / 12 * (np.eye(3) - np.outer(axis, axis)))
    rod = oracle.model.inertias[joint].toDynamicParameters()
    assert np.linalg.eigvalsh(pin.Inertia.FromDynamicParameters(rod).inertia)[0] < 1e-12  # on a line
    model = identification_model(robot)
    traj = random_excitation(robot, model=model, duration=10, rate=100, seed=0).trajectory
    tau = pin_forces(oracle, traj)
    tau += 0.01 * np.sqrt(np.mean(tau**2, axis=0)) * np.random.default_rng(0).standard_normal(tau.shape)
    est = estimate(model, traj.with_tau(tau))
    free = consistent_estimate(est, mass_bounds=None, extent=None)
    assert free.min_eigenvalues[2] < 2e-8 and margin_pinocchio(free.phi[2], e) < -0.5
    bounded = consistent_estimate(est)
    assert margin_pinocchio(bounded.phi[2], e) >= -1e-8
    rows = bounded.bounds.report(bounded.phi)
    assert (
        rows[2]["active"] == ["extent"] and abs(rows[2]["extent_margin"] - margin_pinocchio(bounded.phi[2], e)) < 1e-9
    )
    for row, phi_b, phi0 in zip(rows, bounded.phi, phi):
        assert MASS_BOUNDS[0] * phi0[0] - 1e-9 <= phi_b[0] <= MASS_BOUNDS[1] * phi0[0] + 1e-9, row
    phi[2] = rod
    truth = model.values(model.theta(phi))
    assert np.linalg.norm(bounded.beta - truth) < 1.5 * np.linalg.norm(free.beta - truth)


def test_mass_bounds_and_given_ellipsoids(ur5):
    """A mass bound that excludes the truth is active; an ellipsoid given on tool0 (merged into
    wrist_3_link) is moved into the body frame; wrong bounds are refused."""
    robot, path = ur5
    model = identification_model(robot)
    traj = random_excitation(robot, model=model, duration=6, rate=50, period=6, seed=1).trajectory
    tau = pin_forces(Oracle(robot, path), traj)
    est = estimate(model, traj.with_tau(tau * (1 + 1e-3 * np.random.default_rng(1).standard_normal(tau.shape))))
    full = consistent_estimate(est, mass_bounds=(0.9, 1.0), extent=None)
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1, 10)
    assert np.all(full.phi[:, 0] <= phi0[:, 0] * (1 + 1e-9)) and np.all(full.phi[:, 0] >= 0.9 * phi0[:, 0] - 1e-9)
    bounds = body_bounds(robot, None, None, {"tool0": ([0, 0, 0.01], [0.05, 0.06, 0.07])})
    pose = robot.link_pose("tool0")
    assert bounds.ellipsoids[5] is not None and bounds.ellipsoids[0] is None
    np.testing.assert_allclose(bounds.ellipsoids[5].center, pose[:3, :3] @ [0, 0, 0.01] + pose[:3, 3], atol=1e-15)
    assert bounds.sources[5] == "ellipsoid given on tool0"
    with pytest.raises(PgaDynError, match="0 <= lower <= 1 <= upper"):
        body_bounds(robot, (1.5, 2.0))
    with pytest.raises(PgaDynError, match="three positive semi-axes"):
        body_bounds(robot, ellipsoids={"tool0": ([0, 0, 0], [0.1, 0, 0.1])})


# -- files out ----------------------------------------------------------------------------------------------
def test_urdf_out_with_friction(tmp_path, ur5):
    """UR5 with viscous, Coulomb, offset and armature: the URDF written has the inertials (pga-dyn
    and Pinocchio read them back to 1e-12) and <dynamics damping friction> (Pinocchio's damping and
    friction equal fv, fc to 1e-12); the armature and offsets are listed as not written."""
    robot, path = ur5
    model = identification_model(robot, friction=("viscous", "coulomb", "offset"), armature=True)
    traj = random_excitation(robot, model=model, duration=8, rate=100, seed=2).trajectory
    truth = FRICTION | {"offset": 0.2, "armature": 0.05}
    data, _ = simulate(robot, traj, extras=truth, noise=0.005, seed=0)
    full = consistent_estimate(estimate(model, data))
    written = write_model(full, tmp_path / "ur5_identified.urdf")
    back = robots.load_urdf(written["file"])
    scale = np.abs(full.phi).max()
    np.testing.assert_allclose(
        pga_dyn.to_link_parameters(back, pga_dyn.inertial_parameters(back)).reshape(-1, 10),
        full.phi,
        rtol=1e-12,
        atol=1e-12 * scale,
    )
    oracle = Oracle(back, written["file"])
    np.testing.assert_allclose(oracle.link_parameters(), full.phi, rtol=1e-12, atol=1e-12 * scale)
    extras = dict(zip(model.parameter_names[60:], full.extras))
    names = robot.actuated_names
    np.testing.assert_allclose(oracle.model.damping[oracle.vi], [extras[f"fv_{n}"] for n in names], rtol=1e-12)
    np.testing.assert_allclose(oracle.model.friction[oracle.vi], [extras[f"fc_{n}"] for n in names], rtol=1e-12)
    assert written["format"] == "urdf" and len(written["written"]) == 12
    reasons = {r["reason"]: r["parameters"] for r in written["not_written"]}
    ia = [n for n in model.parameter_names if n.startswith("Ia_")]
    assert reasons["URDF has no rotor inertia (armature) attribute"] == ia
    assert [p for r, p in reasons.items() if "constant force" in r] == [[f"f0_{n}" for n in names]]


def test_mjcf_out_with_friction_and_armature(tmp_path):
    """An MJCF arm: damping, frictionloss and armature written (MuJoCo's compiled dof values equal the
    estimate to 1e-12; MuJoCo's body masses and pga-dyn's reading the inertials); the regrouped
    armature of joint 1 is written with a note that only its sum with Izz1 is identified."""
    mujoco = pytest.importorskip("mujoco")
    source = tmp_path / "arm3.xml"
    source.write_text(ARM)
    robot = robots.load_mjcf(source)
    model = identification_model(robot, friction=True, armature=True)
    traj = random_excitation(robot, model=model, duration=6, rate=100, seed=0).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": [0.3, 0.2, 0.1], "coulomb": 0.4, "armature": 0.02})
    full = consistent_estimate(estimate(model, data, weighted=False))
    written = write_model(full, tmp_path / "identified.xml", write_mjcf=robots.write_mjcf)
    compiled = mujoco.MjModel.from_xml_path(written["file"])
    extras = dict(zip(model.parameter_names[30:], full.extras))
    for attribute, prefix in (("dof_damping", "fv"), ("dof_frictionloss", "fc"), ("dof_armature", "Ia")):
        np.testing.assert_allclose(
            getattr(compiled, attribute), [extras[f"{prefix}_j{k}"] for k in (1, 2, 3)], rtol=1e-12, atol=1e-15
        )
    np.testing.assert_allclose(compiled.body_mass[1:], full.phi[:, 0], rtol=1e-12)
    with pytest.warns(PgaDynWarning, match="joints j1, j2, j3 have an armature"):
        back = robots.load_mjcf(written["file"])
    np.testing.assert_allclose(
        pga_dyn.to_link_parameters(back, pga_dyn.inertial_parameters(back)).reshape(-1, 10),
        full.phi,
        rtol=1e-12,
        atol=1e-12 * np.abs(full.phi).max(),
    )
    assert written["not_written"] == [] and "Ia_j1 regrouped into Izz1R" in written["notes"][0]
    with pytest.raises(PgaDynError, match="robots.write_mjcf"):
        write_model(full, tmp_path / "again.xml")


def test_cli_mjcf_out(tmp_path, capsys):
    """pga-dyn identify on an MJCF robot writes MJCF (robots.write_mjcf), armature included."""
    mujoco = pytest.importorskip("mujoco")
    source = tmp_path / "arm3.xml"
    source.write_text(ARM)
    robot = robots.load_mjcf(source)
    traj = random_excitation(robot, duration=6, rate=100, seed=1, friction=True, armature=True).trajectory
    simulate(robot, traj, extras={"viscous": 0.2, "coulomb": 0.3, "armature": 0.02}, noise=0.01, seed=0)[0].write(
        tmp_path / "data.csv"
    )
    out_file = tmp_path / "identified.xml"
    code, out, _ = run(
        [
            "identify",
            source,
            tmp_path / "data.csv",
            "--friction",
            "--armature",
            "--consistent",
            "-o",
            out_file,
            "--json",
        ],
        capsys,
    )
    assert code == 0
    written = json.loads(out)["written"]
    assert written["format"] == "mjcf" and written["not_written"] == []
    compiled = mujoco.MjModel.from_xml_path(str(out_file))
    values = {p["name"]: p["value"] for p in json.loads(out)["full"]["parameters"]}
    np.testing.assert_allclose(compiled.dof_armature, [values[f"Ia_j{k}"] for k in (1, 2, 3)], rtol=1e-12)
    np.testing.assert_allclose(compiled.dof_frictionloss, [values[f"fc_j{k}"] for k in (1, 2, 3)], rtol=1e-12)


def test_negative_terms_are_not_written(ur5):
    robot, _ = ur5
    model = identification_model(robot, friction=("viscous",))
    traj = random_excitation(robot, model=model, duration=4, rate=50, period=4, seed=0).trajectory
    data, _ = simulate(robot, traj, extras={"viscous": -0.5})
    full = map_estimate(estimate(model, data, weighted=False))
    with pytest.raises(PgaDynError, match=r"fv_shoulder_pan_joint = -0.5 < 0 is not a viscous term"):
        export_plan(full, "urdf")


# -- payload and drive gains ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def experiments(ur5):
    """UR5, noise-free forces from Pinocchio: unloaded, and loaded with PAYLOAD on tool0."""
    robot, path = ur5
    model = identification_model(robot, friction=True)
    unloaded = random_excitation(robot, model=model, duration=10, rate=100, seed=3).trajectory
    loaded = random_excitation(robot, model=model, duration=10, rate=100, seed=4).trajectory
    unloaded = unloaded.with_tau(pin_forces(Oracle(robot, path), unloaded, FRICTION))
    loaded = loaded.with_tau(pin_forces(with_payload(robot, path, "tool0", PAYLOAD), loaded, FRICTION))
    return model, unloaded, loaded


@pytest.mark.parametrize("together", [False, True])
def test_payload_from_pinocchio(experiments, together):
    """The payload on tool0 (frame moved by Pinocchio's placement) comes back to 1e-6, given the
    unloaded estimate or together with it."""
    model, unloaded, loaded = experiments
    est = estimate(model, unloaded)
    payload = identify_payload(est, loaded, "tool0", together=together)
    truth = payload_phi(PAYLOAD)
    np.testing.assert_allclose(payload.phi, truth, rtol=0, atol=1e-6 * np.abs(truth).max())
    assert abs(payload.mass - PAYLOAD["mass"]) < 1e-6 and payload.body == "wrist_3_link"
    assert payload.report()["violations"] == [] and np.allclose(payload.report()["center_of_mass"], PAYLOAD["lever"])
    with pytest.raises(PgaDynError, match="fixed to the base"):
        identify_payload(est, loaded, "base_link")
    with pytest.raises(PgaDynError, match="no link named 'gripper'"):
        identify_payload(est, loaded, "gripper")
    with pytest.raises(PgaDynError, match="no signal at all for m_payload, mcx_payload"):  # turns about a fixed axis
        identify_payload(est, loaded, "shoulder_link")


def test_drive_gains(experiments):
    """Currents = tau / gains in both experiments: the gains, the robot's parameters and the payload
    come back to 1e-6 from the payload's mass alone; without a positive mass, an error."""
    model, unloaded, loaded = experiments
    gains = np.array([12.0, 25.0, 9.0, 3.0, 2.5, 1.8])
    result = drive_gains(
        model, unloaded.with_tau(unloaded.tau / gains), loaded.with_tau(loaded.tau / gains), "tool0", PAYLOAD["mass"]
    )
    np.testing.assert_allclose(result.gains, gains, rtol=1e-6)
    truth = payload_phi(PAYLOAD)
    np.testing.assert_allclose(result.payload, truth, atol=1e-6 * np.abs(truth).max())
    np.testing.assert_allclose(result.beta, estimate(model, unloaded).beta, rtol=1e-6, atol=1e-9)
    assert [g["coordinate"] for g in result.report()["gains"]] == list(model.robot.actuated_names)
    rng = np.random.default_rng(5)  # 1 % noise on the currents: every gain within 4 standard deviations
    noisy = [
        data.with_tau(data.tau / gains * (1 + 0.01 * rng.standard_normal(data.tau.shape)))
        for data in (unloaded, loaded)
    ]
    result = drive_gains(model, *noisy, "tool0", PAYLOAD["mass"])
    assert np.all(np.abs(result.gains - gains) < 4 * result.std) and np.all(result.std < 0.05 * gains)
    with pytest.raises(PgaDynError, match="positive number of kg"):
        drive_gains(model, unloaded, loaded, "tool0", 0.0)


# -- the command line -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def puma_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("puma")
    robot = robots.load("puma560")
    model = identification_model(robot, friction=True, armature=True)
    extras = {"viscous": 0.5, "coulomb": 1.0, "armature": 0.1}
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1, 10)
    loaded = phi.copy()
    loaded[5] += payload_phi(PAYLOAD)
    files = {}
    for name, seed, parameters in (("data", 0, phi), ("loaded", 1, loaded)):
        traj = random_excitation(robot, model=model, duration=6, rate=100, period=6, seed=seed).trajectory
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PgaDynWarning)
            simulate(robot, traj, phi=parameters, extras=extras, noise=0.01, seed=seed)[0].write(folder / f"{name}.csv")
        files[name] = str(folder / f"{name}.csv")
    return robot, files


def test_cli_writes_what_the_format_holds(tmp_path, capsys, puma_files):
    robot, files = puma_files
    out_file = tmp_path / "puma_identified.urdf"
    code, out, _ = run(
        ["identify", "puma560", files["data"], "--friction", "--armature", "--consistent", "-o", out_file], capsys
    )
    assert code == 0 and os.path.exists(out_file)
    assert "written:          " + str(out_file) + " (URDF): inertials of 6 bodies; damping: fv_joint1" in out
    assert "friction: fc_joint1" in out
    assert (
        "  not written:    Ia_joint1, Ia_joint2, Ia_joint3, Ia_joint4, Ia_joint5, Ia_joint6: URDF has no rotor" in out
    )
    line = next(line for line in out.splitlines() if line.split()[:1] == ["Ia_joint1"])
    assert "not identifiable separately: regrouped into Izz1R" in line
    model = pin.buildModelFromUrdf(str(out_file))
    assert np.all(model.damping > 0.4) and np.all(model.friction > 0.8)


def test_cli_failed_check_prints_the_estimate(tmp_path, capsys, puma_files):
    """--map -o with a non-physical MAP estimate (the Puma's model file is not physical): the report
    is printed, nothing is written, exit status 2 with the reason."""
    _, files = puma_files
    out_file = tmp_path / "map.urdf"
    code, out, err = run(["identify", "puma560", files["data"], "--friction", "--map", "-o", out_file], capsys)
    assert code == 2 and not os.path.exists(out_file)
    assert "Identified parameters" in out and "Full parameters: MAP estimate" in out and "NOT physically" in out
    assert "-o " + str(out_file) + ": the map estimate is not physically consistent, no file written" in err
    code, out, err = run(
        ["identify", "puma560", files["data"], "--friction", "--map", "-o", out_file, "--json"], capsys
    )
    assert code == 2 and json.loads(out)["full"]["violations"] and "written" not in json.loads(out)


def test_cli_payload_and_bounds(capsys, puma_files):
    """--payload prints the library's payload report; --mass-bounds, --extent, --ellipsoid reach the
    consistent estimate (its report's bounds); the help states the library's defaults."""
    robot, files = puma_files
    code, out, _ = run(
        [
            "identify",
            "puma560",
            files["data"],
            "--friction",
            "--armature",
            "--no-hold-out",
            "--payload",
            "link6",
            files["loaded"],
            "--consistent",
            "--mass-bounds",
            0.8,
            1.5,
            "--extent",
            3,
            "--ellipsoid",
            "link6",
            0,
            0,
            0.03,
            0.1,
            0.1,
            0.1,
            "--json",
        ],
        capsys,
    )
    assert code == 0
    result = json.loads(out)
    data = read_trajectory(robot, files["data"], require_tau=True)
    est = identify_log(robot, data, friction=True, armature=True, hold_out_share=0, estimate_kind="wls").estimate
    expected = identify_payload(est, read_trajectory(robot, files["loaded"], require_tau=True), "link6").report()
    assert result["payload"] == json.loads(json.dumps(expected))
    assert abs(result["payload"]["mass"] - PAYLOAD["mass"]) < 0.05
    bounds = {b["body"]: b for b in result["full"]["bounds"]}
    assert bounds["link2"]["mass_bounds"] == [0.8 * 17.4, 1.5 * 17.4]
    assert bounds["link2"]["source"] == "mass 0.8-1.5 x model; ellipsoid of the model inertia x 3"
    assert bounds["link6"]["source"].endswith("ellipsoid given on link6")
    code, out, _ = run(
        [
            "identify",
            "puma560",
            files["data"],
            "--friction",
            "--armature",
            "--no-hold-out",
            "--payload",
            "link6",
            files["loaded"],
        ],
        capsys,
    )
    assert code == 0 and "Payload on link6 (body link6)" in out
    with pytest.raises(SystemExit):
        main(["identify", "--help"])
    help_text = capsys.readouterr().out
    assert f"(default {MASS_BOUNDS[0]:g} {MASS_BOUNDS[1]:g})" in " ".join(help_text.split())
    assert f"(default {EXTENT_FACTOR:g}; 0: no extent bound)" in " ".join(help_text.split())
