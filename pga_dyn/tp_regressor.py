"""The tetrahedral-point (TP) dynamics regressor (DRNG paper sections 3.3 and 5.4).

Tetrahedral points in the spatial assignment (section 5.2): every body carries the four
points x, y, z (ideal) and O (Euclidean) that coincide with the world frame
e032, e013, e021, e123 when the robot is at its initial configuration q0. At q they are the
columns of D_i = T_i(q) T_i(q0)^-1. Their accelerations follow eq. (35) with gravity,
Edd = E x A_i + Ed x V_i, with A_i = dV_i/dt + G (docs/drng.md, corrections to the DRNG paper: the printed
Algorithm 5 line 8 is wrong).

The regressor coefficient of coordinate j, body i and points m, n is (eq. 49)

    R[j, i, m, n] = L_j^i ^ (E_m v Edd_n)

With E_m = (e_m, w_m) and Edd_n = (a_n, 0), the join is the line (w_m a_n ; e_m x a_n)
(eq. 18) and its pairing with L = (d; m) is d . (e_m x a_n) + w_m m . a_n = u_m . a_n, where
u_m = d x e_m + w_m m is the velocity that the Jacobian line L gives to the point E_m.

The 10-vector of inertial parameters of body i is (eq. 97)
N^ = [N11, N12, N13, N22, N23, N33, N14, N24, N34, N44] of its pseudo-inertia N_i (eq. 44)
in the spatial assignment, i.e. the mass distribution of the body at q0 in world coordinates:
[Sxx, Sxy, Sxz, Syy, Syz, Szz, hx, hy, hz, m]. The matrix regressor is the bar operator of
eq. (100), so that Y(q, qd, qdd) @ pi = tau (eq. 50).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .errors import PgaDynError
from .kinematics import float_array, mul_rigid, forward, initial_poses, inverse_initial_poses, robot_arrays, states
from .model import Robot

#: Row, column of N for each entry of the 10-vector of eq. (97) (0-based).
PARAM_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2), (0, 3), (1, 3), (2, 3), (3, 3))
#: Names of the classical parameters in a link frame, Pinocchio's order.
LINK_PARAM_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@njit(cache=True, inline="always")
def _velocity(d, m, e, euclidean):
    """The velocity d x e (+ m for a Euclidean point) that the twist or line (d; m) gives to the
    point with coordinates e (eq. 34, E x V)."""
    u0 = d[1] * e[2] - d[2] * e[1]
    u1 = d[2] * e[0] - d[0] * e[2]
    u2 = d[0] * e[1] - d[1] * e[0]
    if euclidean:
        u0 += m[0]
        u1 += m[1]
        u2 += m[2]
    return u0, u1, u2


@njit(cache=True)
def _point_accelerations(D, V, A, E, acc):
    """E (3, 4): point coordinates e_m (columns of D); acc (3, 4): their accelerations
    a = E x A + (E x V) x V (eq. 35 with gravity: A = dV/dt + G)."""
    w = V[:3]
    for m in range(4):
        for r in range(3):
            E[r, m] = D[r, m]
    for m in range(4):
        e = E[:, m]
        vel0, vel1, vel2 = _velocity(w, V[3:], e, m == 3)
        a0, a1, a2 = _velocity(A[:3], A[3:], e, m == 3)
        acc[0, m] = a0 + w[1] * vel2 - w[2] * vel1
        acc[1, m] = a1 + w[2] * vel0 - w[0] * vel2
        acc[2, m] = a2 + w[0] * vel1 - w[1] * vel0


@njit(cache=True)
def _block(L, E, acc, R):
    """R[m, n] = L ^ (E_m v Edd_n) = u_m . a_n (eq. 49) for one Jacobian line L, with u_m the
    velocity that L gives to E_m."""
    for m in range(4):
        u0, u1, u2 = _velocity(L[:3], L[3:], E[:, m], m == 3)
        for k in range(4):
            R[m, k] = u0 * acc[0, k] + u1 * acc[1, k] + u2 * acc[2, k]


@njit(cache=True)
def _tp_batch(parent, code, origin, axes, qidx, grav, T0inv, Q, QD, QDD, tensor, Y):
    """Fill Y[s] (nq, 10 n) for every sample s, and tensor[s] (nq, n, 4, 4) when it has samples."""
    n = parent.shape[0] - 1
    nq = Q.shape[1]
    want_tensor = tensor.shape[0] > 0
    T = np.empty((n + 1, 4, 4))
    S = np.zeros((nq, 6))
    V = np.empty((n + 1, 6))
    A = np.empty((n + 1, 6))
    D = np.empty((4, 4))
    E = np.empty((3, 4))
    acc = np.empty((3, 4))
    R = np.empty((4, 4))
    for s in range(Q.shape[0]):
        forward(parent, code, origin, axes, qidx, grav, Q[s], QD[s], QDD[s], T, S, V, A)
        Ys = Y[s]
        Ys[:, :] = 0.0
        for i in range(1, n + 1):
            mul_rigid(T[i], T0inv[i], D)
            _point_accelerations(D, V[i], A[i], E, acc)
            c = 10 * (i - 1)
            k = i
            while k > 0:
                for j in range(qidx[k], qidx[k + 1]):
                    _block(S[j], E, acc, R)
                    if want_tensor:
                        tensor[s, j, i - 1] = R
                    Ys[j, c + 0] = R[0, 0]
                    Ys[j, c + 1] = R[0, 1] + R[1, 0]
                    Ys[j, c + 2] = R[0, 2] + R[2, 0]
                    Ys[j, c + 3] = R[1, 1]
                    Ys[j, c + 4] = R[1, 2] + R[2, 1]
                    Ys[j, c + 5] = R[2, 2]
                    Ys[j, c + 6] = R[0, 3] + R[3, 0]
                    Ys[j, c + 7] = R[1, 3] + R[3, 1]
                    Ys[j, c + 8] = R[2, 3] + R[3, 2]
                    Ys[j, c + 9] = R[3, 3]
                k = parent[k]


def _output(shape, out):
    if out is None:
        return np.empty(shape)
    if (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float64
            or not out.flags.c_contiguous):
        raise PgaDynError(f"out must be a C-contiguous float64 array of shape {shape}")
    return out


def tree_regressor(robot: Robot, Q, QD, QDD, want_tensor=False, out=None):
    """The TP regressor of the spanning tree, rows = all tree coordinates, for validated 2-D
    batches of tree states: Y (samples, nq, 10 n), or the tensor (samples, nq, n, 4, 4)."""
    ns, n, nq = Q.shape[0], robot.n, robot.nq
    Y = _output((ns, nq, 10 * n), out)
    tensor = np.zeros((ns, nq, n, 4, 4)) if want_tensor else np.zeros((0, 0, 0, 4, 4))
    _tp_batch(*robot_arrays(robot), inverse_initial_poses(robot), Q, QD, QDD, tensor, Y)
    return tensor if want_tensor else Y


def _run(robot: Robot, q, qd, qdd, want_tensor: bool, out=None):
    """Regressor (or tensor) with respect to the actuated coordinates, one state or a batch."""
    q, qd, qdd, batch = states(robot, q, qd, qdd, actuated=True)
    if not batch:
        q, qd, qdd = q[None], qd[None], qdd[None]
    ns, n, na = q.shape[0], robot.n, len(robot.actuated)
    block = (n, 4, 4) if want_tensor else (10 * n,)
    result = _output((ns, na, *block) if batch else (na, *block), out)
    batched = result.reshape((ns, na, *block))
    if robot.constrained:  # L_j^i = sum_k L_k dq_k/dq_aj (eq. 52): Y_a = G^T Y_tree
        from .sampling import complete_states

        full = complete_states(robot, q, qd, qdd)
        tree = tree_regressor(robot, full.q, full.qd, full.qdd, want_tensor)
        np.einsum("skj,sk...->sj...", full.G, tree, out=batched)
    elif want_tensor:
        batched[...] = tree_regressor(robot, q, qd, qdd, True)
    else:
        tree_regressor(robot, q, qd, qdd, False, batched)
    return result


def regressor_tensor(robot: Robot, q, qd, qdd) -> np.ndarray:
    """The TP dynamics regressor R[j, i, m, n] = L_j^i ^ (E_m^i v Edd_n^i) (eq. 49, Algorithm 5).

    Shape (n_a, n, 4, 4) for one state, (samples, n_a, n, 4, 4) for 2-D inputs. Body i of the
    paper is index i - 1 here. tau_j = sum_{i,m,n} R[j, i, m, n] N_i[m, n] (eq. 50).
    For a robot with loops or couplings, q, qd, qdd are the actuated coordinates (see
    :func:`regressor`).
    """
    return _run(robot, q, qd, qdd, True)


def regressor(robot: Robot, q, qd, qdd, out=None) -> np.ndarray:
    """The matrix regressor Y (n_a, 10 n) with Y @ inertial_parameters(robot) = tau.

    Columns of body i are the bar operator of eq. (100) applied to R[:, i]. 2-D inputs
    (one row a sample) give a batch (samples, n_a, 10 n), computed in one compiled loop.
    ``out``, a C-contiguous float64 array of the result's shape, is filled and returned
    instead of a new array (reusing it saves the cost of fresh memory on large batches).

    For a robot with loop joints or couplings, q, qd, qdd are the actuated coordinates q_a
    (``robot.actuated_names``): each state is assembled (see :mod:`pga_dyn.loops`) and the
    rows are the generalized forces of q_a, Y_a = G^T Y_tree with G = dq/dq_a (eq. 52). A
    tree is the case without constraints, where q_a = q.
    """
    return _run(robot, q, qd, qdd, False, out)


def _pseudo_to_vector(N: np.ndarray) -> np.ndarray:
    return np.array([N[r, c] for r, c in PARAM_INDEX])


def _vector_to_pseudo(x: np.ndarray) -> np.ndarray:
    N = np.empty((4, 4))
    for value, (r, c) in zip(x, PARAM_INDEX):
        N[r, c] = N[c, r] = value
    return N


def _link_to_pseudo(phi: np.ndarray) -> np.ndarray:
    """Pseudo-inertia (eq. 7) from [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about
    the frame origin)."""
    m, h = phi[0], phi[1:4]
    J = np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]], [phi[7], phi[8], phi[9]]])
    N = np.empty((4, 4))
    N[:3, :3] = 0.5 * np.trace(J) * np.eye(3) - J
    N[:3, 3] = N[3, :3] = h
    N[3, 3] = m
    return N


def _pseudo_to_link(N: np.ndarray) -> np.ndarray:
    sigma = N[:3, :3]
    J = np.trace(sigma) * np.eye(3) - sigma
    return np.array([N[3, 3], N[0, 3], N[1, 3], N[2, 3], J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]])


def inertial_parameters(robot: Robot) -> np.ndarray:
    """The 10 n vector pi of eq. (97): for each body (in ``robot.body_names`` order) the entries
    [N11, N12, N13, N22, N23, N33, N14, N24, N34, N44] of its pseudo-inertia in the spatial
    assignment (the body at q0, in world coordinates)."""
    T0 = initial_poses(robot)
    return np.concatenate([
        _pseudo_to_vector(T0[i] @ robot.inertial(i).pseudo_inertia() @ T0[i].T)
        for i in range(1, robot.n + 1)]) if robot.n else np.zeros(0)


def _per_body(robot: Robot, x, name: str) -> np.ndarray:
    x = float_array(name, x)
    if x.shape not in ((10 * robot.n,), (robot.n, 10)):
        raise PgaDynError(f"{name} must have shape ({10 * robot.n},) or ({robot.n}, 10), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise PgaDynError(f"{name} contains non-finite values")
    return x.reshape(robot.n, 10)


def from_link_parameters(robot: Robot, phi) -> np.ndarray:
    """pi (10 n, eq. 97) from per-body classical parameters in the body (link) frames,
    phi (n, 10) = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] with the inertia about the
    frame origin (Pinocchio's dynamic-parameter order). N_world = T0 N_link T0^T."""
    phi = _per_body(robot, phi, "phi")
    T0 = initial_poses(robot)
    return np.concatenate([_pseudo_to_vector(T0[i + 1] @ _link_to_pseudo(p) @ T0[i + 1].T)
                           for i, p in enumerate(phi)])


def to_link_parameters(robot: Robot, pi) -> np.ndarray:
    """Inverse of :func:`from_link_parameters`: phi (n, 10) in the body frames from pi."""
    pi = _per_body(robot, pi, "pi")
    inv = inverse_initial_poses(robot)
    return np.array([_pseudo_to_link(inv[i + 1] @ _vector_to_pseudo(x) @ inv[i + 1].T)
                     for i, x in enumerate(pi)])
