"""Contact frames, their Jacobians and the generalized forces of their wrenches
(pga_dyn.contacts): the compiled batch equals its readable twin, the Jacobians equal Pinocchio's
frame Jacobians and the time derivative of the frames' origins, and the generalized forces are
the wrenches' power on the coordinates."""

import numpy as np
import pytest

import robots
from pga_dyn.contacts import contact_frames, contact_terms, contact_terms_numpy
from pga_dyn.errors import PgaDynError
from pga_dyn.kinematics import se3_exp
from pga_dyn.pga import se3_log

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]


@pytest.fixture(scope="module")
def go2():
    return robots.load("go2")


def test_batch_equals_twin_and_power(go2):
    rng = np.random.default_rng(1)
    frames = contact_frames(go2, FEET, flat=[False, True, False, True])
    Q = rng.normal(size=(6, go2.nq)) * 0.5
    W = rng.normal(size=(6, 4, 6))
    W[:, [0, 2], 3:] = 0.0
    P, J, tau = contact_terms(go2, frames, Q, W)
    assert J.shape == (6, 18, go2.nq)
    for s in range(6):
        p, j, t = contact_terms_numpy(go2, frames, Q[s], W[s])
        np.testing.assert_allclose(P[s], p, atol=1e-13)
        np.testing.assert_allclose(J[s], j, atol=1e-13)
        np.testing.assert_allclose(tau[s], t, atol=1e-12)
        # tau_c is J_c^T w: its power on any qd is the wrenches' power on the frames' motion
        qd = rng.normal(size=go2.nq)
        w = np.concatenate(
            [np.concatenate([W[s, c, :3], W[s, c, 3:]] if frames.flat[c] else [W[s, c, :3]]) for c in range(4)]
        )
        assert tau[s] @ qd == pytest.approx(w @ (J[s] @ qd), rel=1e-12)


def test_jacobian_is_the_derivative_of_the_origins(go2):
    """J_c qd = dp/dt along a motion whose floating base moves with a constant spatial twist
    (T(t) = exp(t V^) T(0)) and whose joints move at qd."""
    rng = np.random.default_rng(2)
    frames = contact_frames(go2, FEET)
    q0, qd = rng.normal(size=go2.nq) * 0.5, rng.normal(size=go2.nq)

    def at(t):
        q = q0.copy()
        q[6:] += t * qd[6:]
        q[:6] = se3_log(se3_exp(t * qd[:6]) @ se3_exp(q0[:6]))
        return q

    h = 1e-6
    P = contact_terms(go2, frames, np.stack([at(h), at(-h)]), jacobians=False)[0]
    J = contact_terms(go2, frames, q0[None])[1][0]
    np.testing.assert_allclose(J @ qd, ((P[0] - P[1]) / (2 * h)).reshape(-1), atol=1e-8)


def test_jacobians_equal_pinocchios():
    pin = pytest.importorskip("pinocchio")
    arm = robots.load("go2", floating_base=False)
    model = pin.buildModelFromUrdf(robots.data_path("go2"))
    data = model.createData()
    frames = contact_frames(arm, FEET, flat=True)
    rng = np.random.default_rng(3)
    order = [model.getJointId(name) for name in arm.coordinate_names]
    for _ in range(4):
        q = rng.normal(size=arm.nq)
        q_pin = np.zeros(model.nq)
        q_pin[[model.idx_qs[j] for j in order]] = q
        pin.computeJointJacobians(model, data, q_pin)
        pin.updateFramePlacements(model, data)
        P, J, _ = contact_terms(arm, frames, q[None])
        for c, name in enumerate(FEET):
            fid = model.getFrameId(name)
            Jp = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, [model.idx_vs[j] for j in order]]
            np.testing.assert_allclose(P[0, c], data.oMf[fid].translation, atol=1e-12)
            np.testing.assert_allclose(J[0, 6 * c : 6 * c + 3], Jp[:3], atol=1e-12)
            np.testing.assert_allclose(J[0, 6 * c + 3 : 6 * c + 6], Jp[3:], atol=1e-12)


def test_a_point_contact_passes_its_moment_on(go2):
    """A sphere foot touches a radius below its frame's origin: the moment of its force about the
    origin is part of the wrench (its generalized force, as the twin's), while the contact holds
    the origin's position only (3 Jacobian rows)."""
    frames = contact_frames(go2, FEET)
    rng = np.random.default_rng(4)
    q, W = rng.normal(size=go2.nq), rng.normal(size=(4, 6))
    _, J, tau = contact_terms(go2, frames, q[None], W[None])
    assert J.shape == (1, 12, go2.nq)
    np.testing.assert_allclose(tau[0], contact_terms_numpy(go2, frames, q, W)[2], atol=1e-12)
    assert np.abs(tau[0] - contact_terms(go2, frames, q[None], W[None, :, :3])[2][0]).max() > 1e-3


def test_bad_frames_and_wrenches_are_named(go2):
    with pytest.raises(PgaDynError, match="no link named 'hand'"):
        contact_frames(go2, ["hand"])
    with pytest.raises(PgaDynError, match="given twice"):
        contact_frames(go2, ["FL_foot", "FL_foot"])
    frames = contact_frames(go2, FEET)
    with pytest.raises(PgaDynError, match=r"shape \(1, 4, 6\)"):
        contact_terms(go2, frames, np.zeros((1, go2.nq)), np.ones((1, 3, 3)))
