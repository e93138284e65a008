"""Legged robots with closed loops in their legs (identification.legged on the built-in
quadruped_fourbar, whose knees are driven through four-bar linkages).

Oracles: the four-bar's closed form (the knee and rod angles of a crank angle, from the circle
intersection in the leg's plane, and their derivatives: the rows of G = dq/dq_a), Pinocchio's
RNEA and frame Jacobians of the file's spanning tree (the equations of motion in the actuated
coordinates, G^T (tau_tree - J_c^T w) = S^T tau), the model file's own parameters (the simulated
records are made from them, the estimate must give them back), DRNG's certified nullspace of the
floating robot, and a model of the same robot without its loops (the knee a directly actuated
revolute joint, the crank and the rod dropped), which must fail where the loop model holds."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from make_quadruped import ALPHA, CRANK, LEVER, THIGH, text
from oracle import Oracle, pin

import drng
import pga_dyn
import robots
from identification.legged import (
    case_nullspace,
    estimate_report,
    identify_legged,
    legged_forces,
    legged_record,
    mode_states,
)
from pga_dyn.contacts import contact_frames
from pga_dyn.floating import trunk_state
from pga_dyn.kinematics import initial_poses

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
LEGS = ("FL", "FR", "RL", "RR")


@pytest.fixture(scope="module")
def quadruped():
    return robots.load("quadruped_fourbar")


def rigid_knee():
    """The quadruped without its loops: the crank, the rod and the loop joints removed, the knee
    (the calf joint) a directly actuated revolute joint; read from the same file."""
    root = ET.parse(robots.data_path("quadruped_fourbar")).getroot()
    for element in list(root):
        name = element.get("name", "")
        if element.tag == "loop" or name.endswith(("_crank", "_rod", "_crank_joint", "_rod_joint")):
            root.remove(element)
        elif element.tag == "joint" and name.endswith("_calf_joint"):
            element.set("independent", "true")
            element.find("limit").attrib.update(lower="-0.7", upper="0.7")
    return robots.parse_urdf(ET.tostring(root, encoding="unicode"), "quadruped_fourbar, rigid knee", True)


def four_bar(theta):
    """The knee angle phi and the rod's joint angle psi of the crank angle theta (arrays), in
    closed form: in the thigh's frame (x forward, z up in the leg's plane, rotations about +y
    turning (x, z) by -angle), the crank pin C = R(theta) r1 n and the lever's end
    D = K + R(phi) r2 n (n perpendicular to the thigh, forward) stay a rod's length L apart."""
    theta = np.asarray(theta, dtype=float)

    def rot(angle, v):
        c, s = np.cos(angle), np.sin(angle)
        return np.stack([c * v[0] + s * v[1], -s * v[0] + c * v[1]])

    n = np.array([np.cos(ALPHA), -np.sin(ALPHA)])
    knee = THIGH * np.array([-np.sin(ALPHA), -np.cos(ALPHA)])
    d0 = knee + (LEVER - CRANK) * n  # the rod at q = 0
    length = np.linalg.norm(d0)
    pin_ = rot(theta, CRANK * n[:, None] * np.ones_like(theta))
    P = knee[:, None] - pin_
    distance = np.linalg.norm(P, axis=0)
    k = (length**2 - distance**2 - LEVER**2) / (2 * LEVER * distance)
    beta0, gamma = np.arctan2(n[1], n[0]), np.arctan2(P[1], P[0])
    phi = beta0 - gamma - np.arccos(k)  # the branch of q = 0 (checked below: phi(0) = 0)
    rod = knee[:, None] + rot(phi, LEVER * n[:, None] * np.ones_like(theta)) - pin_
    psi = np.arctan2(d0[1], d0[0]) - np.arctan2(rod[1], rod[0]) - theta
    return phi, (psi + np.pi) % (2 * np.pi) - np.pi


def analytic_G(robot, q):
    """G = dq/dq_a (ns, nq, n_a) of the four-bar closed form: the actuated coordinates' own rows
    the identity, the knee's and the rod's rows d phi / d theta and d psi / d theta (central
    differences of :func:`four_bar`) in the crank's column; nothing else moves the linkage."""
    names = robot.coordinate_names
    G = np.zeros((len(q), robot.nq, len(robot.actuated)))
    for j, k in enumerate(robot.actuated):
        G[:, k, j] = 1.0
    h = 1e-6
    for leg in LEGS:
        crank = names.index(f"{leg}_crank_joint")
        j = list(robot.actuated).index(crank)
        up, down = four_bar(q[:, crank] + h), four_bar(q[:, crank] - h)
        G[:, names.index(f"{leg}_calf_joint"), j] = (up[0] - down[0]) / (2 * h)
        G[:, names.index(f"{leg}_rod_joint"), j] = (up[1] - down[1]) / (2 * h)
    return G


def simulated(robot, modes, n=120, seed=0, noise=0.0):
    """A record of random assembled states of each contact mode (the feet in contact pinned), with
    the actuated joint torques and contact forces of the model file's parameters (legged_forces),
    and the tree states it was made from; ``noise`` a share of each channel's RMS."""
    frames = contact_frames(robot, list(FEET))
    parts = []
    for k, mode in enumerate(modes):
        st = mode_states(robot, frames, mode, n, seed + k)
        contact = np.tile([f in mode for f in FEET], (n, 1))
        tau, w = legged_forces(robot, frames, st.q, st.qd, st.qdd, contact, G=st.G)
        parts.append((st.q, st.qd, st.qdd, st.q_a, st.qd_a, st.qdd_a, contact, tau, w))
    q, qd, qdd, qa, qda, qdda, contact, tau, w = (np.concatenate(x) for x in zip(*parts))
    if noise:
        rng = np.random.default_rng(seed + 100)
        tau = tau + noise * rng.normal(size=tau.shape) * np.sqrt(np.mean(tau**2, axis=0))
        w = w + noise * rng.normal(size=w.shape) * np.sqrt(np.mean(w**2, axis=0))
    p, quat, v, omega = trunk_state(qa[:, :6], qda[:, :6], initial_poses(robot)[1])
    alpha = qdda[:, :3]
    a = qdda[:, 3:6] + np.cross(alpha, p) + np.cross(omega, v)
    common = dict(
        linear=v,
        angular=omega,
        linear_acceleration=a,
        angular_acceleration=alpha,
        tau=tau,
        forces=w[:, :, :3],
        contact=contact,
    )
    t = np.arange(len(q)) * 1e-3
    record = legged_record(robot, t, p, quat, qa[:, 6:], FEET, qd=qda[:, 6:], qdd=qdda[:, 6:], **common)
    return record, (q, qd, qdd, tau, w), (t, p, quat, common)


def rigid_record(rigid, robot, tree, arrays):
    """The same experiment as the rigid-knee model sees it: the hip, hip flexion and knee angles
    (a knee encoder), the knee motor's torque taken as the knee's, the same trunk and feet."""
    q, qd, qdd = tree[:3]
    t, p, quat, common = arrays
    names = robot.coordinate_names
    joints = [names.index(name) for name in rigid.actuated_names[6:]]
    return legged_record(rigid, t, p, quat, q[:, joints], FEET, qd=qd[:, joints], qdd=qdd[:, joints], **common)


def true_beta(robot, estimate):
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    return estimate.model.K[:, : phi.size] @ phi


def test_the_file_is_current_and_loads(quadruped):
    with open(robots.data_path("quadruped_fourbar"), encoding="utf-8") as handle:
        assert handle.read() == text(), "run python tests/make_quadruped.py robots/data"
    assert quadruped.floating_base and quadruped.n == 21 and quadruped.nq == 26
    assert len(quadruped.actuated_names) == 18 and len(quadruped.loop_joints) == 4
    assert quadruped.actuated_names[6:9] == ("FL_hip_joint", "FL_thigh_joint", "FL_crank_joint")
    masses = [quadruped.inertial(i).mass for i in range(1, 22)]
    assert sum(masses) == pytest.approx(47.6) and min(masses) > 0
    for i in range(1, 22):  # every body physical: a positive definite pseudo-inertia
        inertial = quadruped.inertial(i)
        c = inertial.com
        second = np.trace(inertial.inertia) / 2 * np.eye(3) - inertial.inertia
        J = np.block(
            [[second + inertial.mass * np.outer(c, c), inertial.mass * c[:, None]], [inertial.mass * c, inertial.mass]]
        )
        assert np.linalg.eigvalsh(J).min() > 0, quadruped.body_names[i - 1]


def test_assembly_and_G_follow_the_four_bars_closed_form(quadruped):
    """The assembled knee and rod angles are the closed form's, and G = dq/dq_a its derivative."""
    phi, psi = four_bar(np.zeros(1))
    assert abs(phi[0]) < 1e-12 and abs(psi[0]) < 1e-12
    st = pga_dyn.sample_states(quadruped, 30, seed=3)
    names = quadruped.coordinate_names
    for leg in LEGS:
        phi, psi = four_bar(st.q[:, names.index(f"{leg}_crank_joint")])
        np.testing.assert_allclose(st.q[:, names.index(f"{leg}_calf_joint")], phi, atol=1e-10)
        np.testing.assert_allclose(st.q[:, names.index(f"{leg}_rod_joint")], psi, atol=1e-10)
    np.testing.assert_allclose(st.G, analytic_G(quadruped, st.q), atol=1e-7)
    ratio = analytic_G(quadruped, np.zeros((1, 26)))[0, names.index("FL_calf_joint"), 8]
    assert ratio == pytest.approx(CRANK / LEVER, rel=0.05)  # the knee turns about r1 / r2 times the crank


def test_legged_forces_satisfy_pinocchios_equations_in_the_actuated_coordinates(quadruped):
    """The simulated torques and wrenches of a stance on three feet: G^T (tau_tree - J_c^T w) =
    (0; tau) with Pinocchio's RNEA and frame Jacobians of the tree and the closed-form G, and the
    feet in contact neither move nor accelerate (Pinocchio's frame velocities and classical
    accelerations of the assembled states of mode_states)."""
    record, (q, qd, qdd, tau, w), _ = simulated(quadruped, [FEET[:3]], n=8)
    oracle = Oracle(quadruped, robots.data_path("quadruped_fourbar"))
    G = analytic_G(quadruped, q)
    for s in range(len(q)):
        qp, vp, ap, B = oracle.to_pinocchio(q[s], qd[s], qdd[s])
        generalized = B.T @ pin.rnea(oracle.model, oracle.data, qp, vp, ap)
        pin.computeJointJacobians(oracle.model, oracle.data, qp)
        pin.updateFramePlacements(oracle.model, oracle.data)
        for c, foot in enumerate(FEET):
            J = pin.getFrameJacobian(oracle.model, oracle.data, oracle.model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED)[
                :3
            ]
            generalized -= B.T @ (J.T @ w[s, c, :3])
            if c < 3:  # a foot in contact neither moves nor accelerates
                assert np.abs(J @ vp).max() < 1e-10
                pin.forwardKinematics(oracle.model, oracle.data, qp, vp, ap)
                acc = pin.getFrameClassicalAcceleration(
                    oracle.model, oracle.data, oracle.model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED
                )
                assert np.abs(acc.linear).max() < 1e-9
        expected = np.concatenate([np.zeros(6), tau[s]])
        np.testing.assert_allclose(G[s].T @ generalized, expected, atol=1e-6 * np.abs(tau).max())
    assert np.abs(w[:, 3]).max() == 0.0  # the foot in the air carries nothing


@pytest.mark.parametrize("case", ["A", "B", "C"])
def test_noise_free_records_give_the_model_files_parameters(quadruped, case):
    """Exact accelerations, no noise: the base parameters of the model file to 1e-9 in cases A,
    B and C, on a record of two stance modes with three feet down; the total mass (47.6 kg) from
    A and B."""
    record, _, _ = simulated(quadruped, [FEET[:3], FEET[1:]], n=150)
    est = identify_legged(quadruped, record, case, weighted=False)
    beta = true_beta(quadruped, est)
    assert np.abs(est.beta - beta).max() <= 1e-9 * np.abs(beta).max()
    mass = est.total_mass()
    if case == "C":
        assert mass is None
    else:
        assert mass[0] == pytest.approx(47.6, rel=1e-12)


def test_flight_phases_give_the_parameters_in_case_D(quadruped):
    """Flights (the base accelerating as the robot falls, with loops assembled) and a three-foot
    stance: case D (the flights' joint torques alone) and case A give the model file's base
    parameters to 1e-9; in flight the feet carry nothing; legged_forces projects G at q itself
    when not given."""
    record, (q, qd, qdd, tau, w), _ = simulated(quadruped, [(), FEET[:3]], n=120)
    assert np.abs(w[:120]).max() == 0.0
    for case in "DA":
        est = identify_legged(quadruped, record, case, weighted=False)
        beta = true_beta(quadruped, est)
        assert np.abs(est.beta - beta).max() <= 1e-9 * np.abs(beta).max()
    frames = contact_frames(quadruped, list(FEET))
    again, _ = legged_forces(quadruped, frames, q[120:130], qd[120:130], qdd[120:130], record.contact[120:130])
    np.testing.assert_allclose(again, tau[120:130], atol=1e-9 * np.abs(tau).max())


def test_identifiability_per_case_is_certified(quadruped):
    """Per case and contact mode, certified by the sampled rank: all rows and the base rows in
    stance see DRNG's 138 base parameters (certified on the loops), flights alone lose the scale
    (the own parameters pi: the base rows vanish in flight), joint torques alone with four feet
    pinned lose four directions, the total mass among them."""
    frames = contact_frames(quadruped, list(FEET))
    proven = drng.nullspace(quadruped)
    assert proven.certified and proven.dim == 72
    for case in "AB":
        stance = case_nullspace(quadruped, frames, case, [FEET])
        assert stance.certified and stance.certificate["equals_drng"]
    flights = case_nullspace(quadruped, frames, "B", [()])
    assert flights.certified and flights.basis.shape[1] == proven.dim + 1
    pi = pga_dyn.inertial_parameters(quadruped)
    N = flights.nullspace
    assert np.linalg.norm(pi - N @ (N.T @ pi)) <= 1e-8 * np.linalg.norm(pi)
    torques = case_nullspace(quadruped, frames, "C", [FEET])
    assert torques.certified and torques.basis.shape[1] == proven.dim + 4
    mass = np.zeros(10 * quadruped.n)
    mass[9::10] = 1.0
    assert np.linalg.norm(torques.nullspace.T @ mass) > 0.1
    three = case_nullspace(quadruped, frames, "C", [FEET[:3], FEET[1:]])
    assert three.certified and three.basis.shape[1] == proven.dim + 2


def test_ignoring_the_loop_fails_the_held_out_check(quadruped):
    """1 % noise on the joint torques and the contact forces. The loop model's held-out residual
    is at the noise floor; the rigid-knee model (knee angle from a knee encoder, the knee motor's
    torque as the knee's) fitted to the same record misses the held-out joint torques: a held-out
    residual RMS several times the loop model's in cases A and C, the knee torque off by about
    15 times. Contact forces and base motion alone (case B) cannot tell them apart: the crank and
    the rod weigh 0.3 kg of 47.6 per leg."""
    rigid = rigid_knee()
    fit, tree, arrays = simulated(quadruped, [FEET, FEET[:3], FEET[1:]], n=150, noise=0.01)
    test, tree_t, arrays_t = simulated(quadruped, [FEET, FEET[1:]], n=100, seed=7, noise=0.01)
    rigid_fit, rigid_test = (
        rigid_record(rigid, quadruped, tree, arrays),
        rigid_record(rigid, quadruped, tree_t, arrays_t),
    )
    figures = {}
    for case in "ABC":
        loop = estimate_report(identify_legged(quadruped, fit, case), test)
        knee = estimate_report(identify_legged(rigid, rigid_fit, case), rigid_test)
        figures[case] = (loop, knee)
        print(
            f"case {case}: held-out residual RMS loop {loop['held_out']['rms']:.4g} ({loop['verdict']['state']}), "
            f"rigid knee {knee['held_out']['rms']:.4g} ({knee['verdict']['state']}): "
            f"{knee['held_out']['rms'] / loop['held_out']['rms']:.3g}x; RRE {loop['held_out']['rre']:.3g} % "
            f"against {knee['held_out']['rre']:.3g} %"
        )
        if case != "C":
            print(
                f"        FL knee torque RMS error: loop {loop['held_out']['tau_rms']['FL_crank_joint']:.3g} N m, "
                f"rigid knee {knee['held_out']['tau_rms']['FL_calf_joint']:.3g} N m"
            )
    for case, factor in (("A", 3.0), ("C", 6.0)):
        loop, knee = figures[case]
        assert loop["verdict"]["state"] == "OK"
        assert knee["held_out"]["rms"] > factor * loop["held_out"]["rms"]
    loop, knee = figures["A"]
    assert knee["held_out"]["tau_rms"]["FL_calf_joint"] > 8 * loop["held_out"]["tau_rms"]["FL_crank_joint"]
    loop, knee = figures["B"]
    assert knee["held_out"]["rms"] == pytest.approx(loop["held_out"]["rms"], rel=0.1)


def test_the_consistent_estimate_of_the_loop_model_is_physical(quadruped):
    """The LMI estimate of a noisy record is accepted and physical, the cranks' small ellipsoids
    included (their extent rows are scaled: Clarabel's tolerance is relative to the row)."""
    from identification import consistent_estimate
    from identification.physics import violations

    record, _, _ = simulated(quadruped, [FEET, FEET[:3]], n=300, noise=0.01)
    full = consistent_estimate(identify_legged(quadruped, record, "A").estimate)
    assert violations(quadruped.body_names, full.phi) == []
    mass = sum(quadruped.inertial(i).mass for i in range(1, quadruped.n + 1))
    assert full.phi[:, 0].sum() == pytest.approx(mass, rel=0.01)
