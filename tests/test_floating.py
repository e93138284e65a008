"""The floating base's coordinates from logged trunk poses and twists (pga_dyn.floating), checked
against the exponential of the kinematics kernel and finite differences of the poses."""

import numpy as np
import pytest

from pga_dyn.errors import PgaDynError
from pga_dyn.floating import (
    base_coordinates,
    free_joint_coordinates,
    free_joint_wrench,
    from_free_joint_coordinates,
    from_free_joint_wrench,
    from_local_coordinates,
    from_local_wrench,
    local_coordinates,
    local_wrench,
    rotation_matrices,
    spatial_acceleration,
    spatial_twist,
    trunk_motion,
    trunk_state,
)
from pga_dyn.kinematics import se3_exp


def random_poses(rng, n):
    q = rng.normal(size=(n, 4))
    return rng.normal(size=(n, 3)), q / np.linalg.norm(q, axis=1)[:, None]


@pytest.mark.parametrize("seed", range(3))
def test_base_coordinates_give_the_logged_pose(seed):
    rng = np.random.default_rng(seed)
    p, quat = random_poses(rng, 20)
    T0 = se3_exp(rng.normal(size=6)) if seed else None
    xi = base_coordinates(p, quat, T0)
    for k in range(20):
        T = se3_exp(xi[k]) @ (np.eye(4) if T0 is None else T0)
        np.testing.assert_allclose(T[:3, :3], rotation_matrices(quat[k]), atol=1e-12)
        np.testing.assert_allclose(T[:3, 3], p[k], atol=1e-12)
    back = trunk_state(xi, np.zeros((20, 6)), T0)
    np.testing.assert_allclose(back[0], p, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(back[1] * quat, axis=1)), 1.0, atol=1e-12)


def test_twist_and_acceleration_are_derivatives_of_the_pose():
    """qd is the spatial twist of the posed trunk and qdd its derivative: d/dt T T^-1 = [omega^ v_o;
    0 0], by central differences of an analytic motion."""

    def motion(t):
        p = np.array([0.3 * np.sin(2 * t), 0.1 * t**2, 0.4 + 0.05 * np.cos(3 * t)])
        angle = 0.7 * np.sin(t)
        axis = np.array([1.0, 2.0, 2.0]) / 3.0
        quat = np.concatenate([np.sin(angle / 2) * axis, [np.cos(angle / 2)]])
        return p, quat

    def twist(t, h=1e-5):
        (p0, q0), (p1, q1) = motion(t - h), motion(t + h)
        T0, T1 = (se3_exp(base_coordinates(p[None], q[None])[0]) for p, q in ((p0, q0), (p1, q1)))
        dT = (T1 - T0) / (2 * h) @ np.linalg.inv(se3_exp(base_coordinates(*(x[None] for x in motion(t)))[0]))
        return np.array([dT[2, 1], dT[0, 2], dT[1, 0], *dT[:3, 3]])

    t, h = 0.8, 1e-4
    p, _ = motion(t)
    v = (motion(t + h)[0] - motion(t - h)[0]) / (2 * h)
    a = (motion(t + h)[0] - 2 * p + motion(t - h)[0]) / h**2
    w = twist(t)[:3]
    alpha = (twist(t + h)[:3] - twist(t - h)[:3]) / (2 * h)
    np.testing.assert_allclose(spatial_twist(p[None], v[None], w[None])[0], twist(t), atol=1e-7)
    qdd = spatial_acceleration(p[None], v[None], w[None], a[None], alpha[None])[0]
    np.testing.assert_allclose(qdd, (twist(t + h) - twist(t - h)) / (2 * h), atol=1e-5)


def test_a_quaternion_that_is_not_unit_is_refused():
    with pytest.raises(PgaDynError, match="norm 2"):
        base_coordinates(np.zeros((1, 3)), [[0.0, 0.0, 0.0, 2.0]])


@pytest.mark.parametrize("seed", range(2))
def test_other_conventions_round_trip_and_keep_the_power(seed):
    """Pinocchio's (local) and MuJoCo's (free joint) coordinates and forces of the floating joint:
    each pair of maps inverts the other, the power tau . qd is the same in every convention, and
    the logged quantities of trunk_motion give back qd and qdd (with a reference pose T0 != I)."""
    rng = np.random.default_rng(seed)
    T0 = se3_exp(rng.normal(size=6)) if seed else None
    q = rng.uniform(-1.5, 1.5, (10, 6))
    qd, qdd, tau = rng.normal(size=(3, 10, 6))
    for to, back in (
        (local_coordinates, from_local_coordinates),
        (free_joint_coordinates, from_free_joint_coordinates),
    ):
        for a, b in zip(back(*to(q, qd, qdd, T0), T0), (q, qd, qdd)):
            np.testing.assert_allclose(a, b, atol=1e-12)
    for to, back, velocity in (
        (local_wrench, from_local_wrench, local_coordinates),
        (free_joint_wrench, from_free_joint_wrench, free_joint_coordinates),
    ):
        np.testing.assert_allclose(back(q, to(q, tau, T0), T0), tau, atol=1e-12)
        power = np.sum(to(q, tau, T0) * velocity(q, qd, None, T0)[1], axis=1)
        np.testing.assert_allclose(power, np.sum(tau * qd, axis=1), atol=1e-12)
    p, quat, R, v, w, a, alpha = trunk_motion(q, qd, qdd, T0)
    np.testing.assert_allclose(R, rotation_matrices(quat), atol=1e-15)
    np.testing.assert_allclose(spatial_twist(p, v, w), qd, atol=1e-12)
    np.testing.assert_allclose(spatial_acceleration(p, v, w, a, alpha), qdd, atol=1e-12)
    single = local_coordinates(q[0], qd[0], qdd[0], T0)
    assert [x.shape for x in single] == [(7,), (6,), (6,)]


def test_rotation_vectors_and_quaternions():
    """A spherical joint's rotation vector r and its quaternion: the rotation matrices agree with
    so3_exp, and the principal rotation vector comes back."""
    from pga_dyn.floating import quaternion_rotation_vectors, rotation_vector_quaternions
    from pga_dyn.kinematics import so3_exp

    rng = np.random.default_rng(5)
    r = rng.normal(size=(20, 3))
    r *= (rng.uniform(0, np.pi, 20) / np.linalg.norm(r, axis=1))[:, None]
    r[0] = 0.0
    quat = rotation_vector_quaternions(r)
    for k in range(20):
        np.testing.assert_allclose(rotation_matrices(quat[k]), so3_exp(r[k]), atol=1e-12)
    np.testing.assert_allclose(quaternion_rotation_vectors(quat), r, atol=1e-12)
