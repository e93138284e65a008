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

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numba
import numpy as np
from numba import njit

from .conventions import (
    PARAM_COL,
    PARAM_INDEX,
    PARAM_ROW,
    link_to_pseudo,
    pseudo_to_link,
    pseudo_to_vector,
    vector_to_pseudo,
)
from .errors import PgaDynError
from .interpreted import SMALL_BODIES, SMALL_STATES, first_calls
from .kinematics import (
    first_nonfinite,
    float_array,
    forward,
    initial_poses,
    inverse_initial_poses,
    mul_rigid,
    raise_nonfinite,
    robot_arrays,
    state_arrays,
)
from .loops import constraints
from .model import Robot

if TYPE_CHECKING:
    import numpy.typing as npt

    from .kinematics import RobotArrays


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
def _point_accelerations(D, V, A, i, E, acc):
    """E (3, 4): point coordinates e_m (columns of D); acc (3, 4): their accelerations
    a = E x A + (E x V) x V (eq. 35 with gravity: A = dV/dt + G) for the twist V[i] and the
    acceleration A[i] of body i (V, A (n + 1, 6): the kernel passes the arrays, not the rows,
    as a row's view costs numba two atomic reference counts); twin: ``pga.acceleration`` of the
    world frame points moved by D (as in :func:`tp_tensor_pga`)."""
    w, v, alpha, a = V[i, :3], V[i, 3:], A[i, :3], A[i, 3:]
    for m in range(4):
        for r in range(3):
            E[r, m] = D[r, m]
    for m in range(4):
        e = E[:, m]
        vel0, vel1, vel2 = _velocity(w, v, e, m == 3)
        a0, a1, a2 = _velocity(alpha, a, e, m == 3)
        acc[0, m] = a0 + w[1] * vel2 - w[2] * vel1
        acc[1, m] = a1 + w[2] * vel0 - w[0] * vel2
        acc[2, m] = a2 + w[0] * vel1 - w[1] * vel0


@njit(cache=True)
def _block(L, E, acc, R):
    """R[m, n] = L ^ (E_m v Edd_n) = u_m . a_n (eq. 49) for one Jacobian line L, with u_m the
    velocity that L gives to E_m; twin: ``pga.power(pga.join(E_m, Edd_n), L)``."""
    for m in range(4):
        u0, u1, u2 = _velocity(L[:3], L[3:], E[:, m], m == 3)
        for k in range(4):
            R[m, k] = u0 * acc[0, k] + u1 * acc[1, k] + u2 * acc[2, k]


@njit(cache=True)
def _joined_lines(E, acc, J):
    """J[p] (10, 6): the lines E_r v Edd_c + E_c v Edd_r (r != c) and E_r v Edd_r, (r, c) =
    PARAM_INDEX[p], so that Y[j, p] = L_j ^ J[p]: the bar operator of eq. (100) taken before the
    pairing with L_j in eq. (49), which is linear. The join E_m v Edd_n is the line
    (w_m a_n ; e_m x a_n) (eq. 18): its direction part is zero but for the Euclidean point O
    (m = 3). E, acc (3, 4) as in :func:`_point_accelerations`; twin:
    ``pga.join(E_r, Edd_c) + pga.join(E_c, Edd_r)``."""
    for p in range(10):
        r, c = PARAM_ROW[p], PARAM_COL[p]
        J[p, 3] = E[1, r] * acc[2, c] - E[2, r] * acc[1, c]
        J[p, 4] = E[2, r] * acc[0, c] - E[0, r] * acc[2, c]
        J[p, 5] = E[0, r] * acc[1, c] - E[1, r] * acc[0, c]
        if r != c:
            J[p, 3] += E[1, c] * acc[2, r] - E[2, c] * acc[1, r]
            J[p, 4] += E[2, c] * acc[0, r] - E[0, c] * acc[2, r]
            J[p, 5] += E[0, c] * acc[1, r] - E[1, c] * acc[0, r]
        for k in range(3):  # w_c a_r: only O (c = 3) is Euclidean
            J[p, k] = acc[k, r] if c == 3 else 0.0


@njit(cache=True, inline="always")
def _joined_row(L, J, row, c):
    """row[c : c + 10] <- the regressor entries of a Jacobian line L (6,) = (d, m) against the
    joined lines J (10, 6) of :func:`_joined_lines`: Y[p] = L ^ J[p] = d . J_m + m . J_d (J_d = 0
    for p < 6; eq. 100)."""
    d0, d1, d2, m0, m1, m2 = L[0], L[1], L[2], L[3], L[4], L[5]
    for p in range(10):
        y = d0 * J[p, 3] + d1 * J[p, 4] + d2 * J[p, 5]
        if p >= 6:
            y += m0 * J[p, 0] + m1 * J[p, 1] + m2 * J[p, 2]
        row[c + p] = y


def _kernel_arrays(robot: Robot) -> tuple:
    """The robot's arrays of :func:`_tp_batch`, three where the kinematics take seven (each array
    argument of a compiled call costs about 30 ns to unbox, docs/performance.md): ``index``
    (3 n + 4,) the ``parent``, ``code`` and ``q_index`` of :func:`pga_dyn.kinematics.robot_arrays`
    one after the other; ``poses`` (2 n + 2, 4, 4) its ``origin``, then the inverse poses at q0;
    ``axes`` (n + 2, 2, 3) its ``axes``, then the gravity ``seed`` as two rows (angular; linear)."""
    arrays = robot_arrays(robot)
    index = np.concatenate([arrays.parent, arrays.code, arrays.q_index]).astype(np.int64)
    poses = np.concatenate([arrays.origin, inverse_initial_poses(robot)])
    axes = np.concatenate([arrays.axes, arrays.seed.reshape(1, 2, 3)])
    return index, poses, axes


#: What :func:`_tp_batch` returns for states it does not read as they are (a length other than
#: out's rows, strides other than 8 bytes, or an address not a multiple of 8): the caller converts them.
NOT_READY = 3


@njit(cache=True, inline="always")
def _ready(x, size):
    """Whether the 1-D float64 array ``x`` has ``size`` elements one after the other (strides of 8
    bytes) from an address that is a multiple of 8: how :func:`_tp_batch` reads its states."""
    return x.shape[0] == size and (size <= 1 or x.strides[0] == 8) and x.ctypes.data % 8 == 0


@njit(cache=True)
def _tp_batch(index, poses, axes, Q, QD, QDD, out):
    """The TP regressor of ``samples`` tree states, one compiled call. The robot's arrays
    (:func:`_kernel_arrays`); Q, QD, QDD (samples nq,): the states one after the other; ``out``
    filled, rows s nq + j: Y (samples nq, 10 n), or the tensor (samples nq, 16 n) (the blocks
    R[j, i] (4, 4) of the bodies one after the other) when it has 16 n columns. Returns -1; or,
    without computing anything, :data:`NOT_READY` for states that are not contiguous, aligned
    arrays of out's rows (the compiled code reads them so: it checks their strides and address
    itself, which lets the caller skip those tests), else the index (0, 1, 2) of the first of Q,
    QD, QDD that holds a NaN or an infinity (:func:`pga_dyn.kinematics.first_nonfinite`).
    Readable twin: :func:`tp_tensor_pga` (the tensor) and :func:`bar` (Y)."""
    n = (index.shape[0] - 4) // 3
    parent, code, qidx = index[: n + 1], index[n + 1 : 2 * n + 2], index[2 * n + 2 :]
    nq = qidx[n + 1]
    size, width = out.shape[0], out.shape[1]
    if width != 10 * n and width != 16 * n or nq > 0 and size % nq != 0:
        return NOT_READY
    if not (_ready(Q, size) and _ready(QD, size) and _ready(QDD, size)):
        return NOT_READY
    bad = first_nonfinite(Q, QD, QDD)
    if bad >= 0 or nq == 0:
        return bad
    want_tensor = width == 16 * n
    origin, T0inv = poses[: n + 1], poses[n + 1 :]
    # the scratch arrays in two allocations (each costs about 50 ns): T, D, R, E, acc, and
    # S, V, A, J and the gravity seed (writable, as the loop kernels' seed: one version of forward)
    blocks = np.empty((n + 5, 4, 4))
    T, D, R, E, acc = blocks[: n + 1], blocks[n + 1], blocks[n + 2], blocks[n + 3, :3], blocks[n + 4, :3]
    lines = np.empty((nq + 2 * n + 13, 6))  # all written before they are read
    S, V, A = lines[:nq], lines[nq : nq + n + 1], lines[nq + n + 1 : nq + 2 * n + 2]
    J, gravity = lines[nq + 2 * n + 2 : nq + 2 * n + 12], lines[nq + 2 * n + 12]
    for r in range(6):
        gravity[r] = axes[n + 1, r // 3, r % 3]
    for s in range(size // nq):
        rows = s * nq
        forward(
            parent,
            code,
            origin,
            axes,
            qidx,
            gravity,
            Q[rows : rows + nq],
            QD[rows : rows + nq],
            QDD[rows : rows + nq],
            T,
            S,
            V,
            A,
        )
        for j in range(nq):
            for c in range(width):
                out[rows + j, c] = 0.0
        for i in range(1, n + 1):
            mul_rigid(T[i], T0inv[i], D)
            _point_accelerations(D, V, A, i, E, acc)
            if not want_tensor:
                _joined_lines(E, acc, J)
            k = i
            while k > 0:  # the support of body i
                for j in range(qidx[k], qidx[k + 1]):
                    row = out[rows + j]
                    if want_tensor:
                        _block(S[j], E, acc, R)
                        c = 16 * (i - 1)
                        for r in range(4):  # loops, not a slice assignment (numba's shape checks compile for seconds)
                            for col in range(4):
                                row[c + 4 * r + col] = R[r, col]
                    else:
                        _joined_row(S[j], J, row, 10 * (i - 1))
                k = parent[k]
    return -1


@njit(cache=True)
def projected_batch(index, poses, axes, Q, QD, QDD, G, out):
    """The TP regressor of ``samples`` tree states projected on the actuated coordinates, Y_a =
    G^T Y_tree (eq. 52), without Y_tree: the robot's arrays (:func:`_kernel_arrays`); Q, QD, QDD
    (samples, nq) and G = dq/dq_a (samples, nq, n_a) C-contiguous; ``out`` (samples n_a, 10 n)
    filled, rows s n_a + a. Body i's columns for coordinate a pair the projected Jacobian line
    L_a^i = sum_j G[s, j, a] L_j^i (j: the coordinates that move body i, eq. 52; summed down the
    tree, L_a^i = L_a^parent + the joint's own lines) with the joined lines of
    :func:`_joined_lines` (the bar operator of eq. 100, as in :func:`_tp_batch`): n_a rows a
    sample where G^T Y_tree computes nq and a product. Returns the index (0, 1, 2) of the first of
    Q, QD, QDD that holds a NaN or an infinity (nothing computed), else -1. Readable twin: G^T
    (:func:`bar` of :func:`tp_tensor_pga`); tests compare it with G^T Y_tree of :func:`_tp_batch`."""
    bad = first_nonfinite(Q.reshape(-1), QD.reshape(-1), QDD.reshape(-1))
    if bad >= 0:
        return bad
    n = (index.shape[0] - 4) // 3
    parent, code, qidx = index[: n + 1], index[n + 1 : 2 * n + 2], index[2 * n + 2 :]
    nq, na = G.shape[1], G.shape[2]
    origin, T0inv = poses[: n + 1], poses[n + 1 :]
    # the scratch arrays in two allocations, as in _tp_batch: T, D, E, acc; S, V, A, J, the gravity
    # seed and L, the projected lines of each body (rows b n_a + a; the base's zero)
    blocks = np.empty((n + 4, 4, 4))
    T, D, E, acc = blocks[: n + 1], blocks[n + 1], blocks[n + 2, :3], blocks[n + 3, :3]
    lines = np.empty((nq + 2 * n + 13 + (n + 1) * na, 6))
    S, V, A = lines[:nq], lines[nq : nq + n + 1], lines[nq + n + 1 : nq + 2 * n + 2]
    J, gravity, L = lines[nq + 2 * n + 2 : nq + 2 * n + 12], lines[nq + 2 * n + 12], lines[nq + 2 * n + 13 :]
    for r in range(6):
        gravity[r] = axes[n + 1, r // 3, r % 3]
        for a in range(na):
            L[a, r] = 0.0
    for s in range(Q.shape[0]):
        forward(parent, code, origin, axes, qidx, gravity, Q[s], QD[s], QDD[s], T, S, V, A)
        for i in range(1, n + 1):
            mul_rigid(T[i], T0inv[i], D)
            _point_accelerations(D, V, A, i, E, acc)
            _joined_lines(E, acc, J)
            p = parent[i]
            for a in range(na):  # L_a^i = L_a^p + sum over the joint's coordinates j of G[s, j, a] L_j
                line = L[i * na + a]
                for r in range(6):
                    line[r] = L[p * na + a, r]
                for j in range(qidx[i], qidx[i + 1]):
                    g = G[s, j, a]
                    for r in range(6):
                        line[r] += g * S[j, r]
                _joined_row(line, J, out[s * na + a], 10 * (i - 1))
    return -1


def tp_tensor_pga(arrays: RobotArrays, T0inv: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """The readable twin of :func:`_tp_batch` for one state: R[j, i, m, n] = L_j^i ^ (E_m v Edd_n)
    (eq. 49, Algorithm 5) written with :mod:`pga_dyn.pga`, on the kinematics of
    :func:`pga_dyn.kinematics.forward_pga`. ``arrays`` are the kernels' arrays
    (:func:`pga_dyn.kinematics.robot_arrays`), ``T0inv`` (n+1, 4, 4) the inverse poses at q0;
    returns R (nq, n, 4, 4), body i of the paper at index i - 1. Slow; tests compare it with the
    kernel.

    The tetrahedral points E_m of body i are the world frame points (e032, e013, e021, e123) moved
    by the motor of D_i = T_i(q) T_i(q0)^-1 (spatial assignment, section 5.2); their accelerations
    are eq. (35) with gravity (:func:`pga_dyn.pga.acceleration`); L_j^i is the Jacobian line of
    coordinate j when its joint moves body i, else 0."""
    from . import pga
    from .kinematics import forward_pga

    parent, qidx = arrays.parent, arrays.q_index
    T, S, V, A = forward_pga(*arrays, q, qd, qdd)
    n = parent.shape[0] - 1
    frame = (
        pga.direction(1.0, 0.0, 0.0),
        pga.direction(0.0, 1.0, 0.0),
        pga.direction(0.0, 0.0, 1.0),
        pga.point(0.0, 0.0, 0.0),
    )
    R = np.zeros((q.shape[0], n, 4, 4))
    for i in range(1, n + 1):
        D = pga.motor_from_matrix(T[i] @ T0inv[i])
        E = [pga.sandwich(D, e) for e in frame]
        Vi, Ai = pga.line(V[i, :3], V[i, 3:]), pga.line(A[i, :3], A[i, 3:])
        Edd = [pga.acceleration(e, Vi, Ai) for e in E]
        k = i
        while k > 0:  # the joints that move body i
            for j in range(qidx[k], qidx[k + 1]):
                L = pga.line(S[j, :3], S[j, 3:])
                R[j, i - 1] = [[pga.power(pga.join(E[m], Edd[c]), L) for c in range(4)] for m in range(4)]
            k = parent[k]
    return R


def bar(R: np.ndarray) -> np.ndarray:
    """The bar operator of eq. (100): the regressor columns (..., 10) of a tensor block (..., 4, 4),
    so that sum_mn R_mn N_mn = bar(R) @ pi (N symmetric, pi its entries of eq. 97)."""
    return np.stack([R[..., r, c] + R[..., c, r] if r != c else R[..., r, r] for r, c in PARAM_INDEX], axis=-1)


def output_array(shape: tuple[int, ...], out: np.ndarray | None) -> np.ndarray:
    """``out`` checked to be a C-contiguous, aligned, writable float64 array of ``shape`` (a fresh
    one when None)."""
    if out is None:
        return np.empty(shape)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float64 or not out.flags.carray:
        raise PgaDynError(f"out must be a writable C-contiguous float64 array of shape {shape}")
    return out


_FLOAT64 = np.dtype(np.float64)


def tree_regressor(
    robot: Robot,
    Q: np.ndarray,
    QD: np.ndarray,
    QDD: np.ndarray,
    want_tensor: bool = False,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The TP regressor of the spanning tree, rows = all tree coordinates, for validated 2-D
    batches of tree states (samples, nq): Y (samples, nq, 10 n), or the tensor (samples, nq, n, 4, 4),
    into ``out`` when given; PgaDynError naming an argument that holds a NaN or an infinity, or
    for states that are not aligned C-contiguous float64 arrays of that shape."""
    ns, n, nq = Q.shape[0], robot.n, robot.nq
    result = output_array((ns, nq, n, 4, 4) if want_tensor else (ns, nq, 10 * n), out)
    width = 16 * n if want_tensor else 10 * n
    # a process's first small batches: the kernel's source run by Python when the compiled kernel is
    # neither loaded nor in numba's cache (pga_dyn.interpreted.first_calls; the same results)
    bad = first_calls(_tp_batch, n <= SMALL_BODIES and ns <= SMALL_STATES)(
        *robot.derived(_kernel_arrays), Q.reshape(-1), QD.reshape(-1), QDD.reshape(-1), result.reshape(ns * nq, width)
    )
    if bad == NOT_READY:
        raise PgaDynError(f"Q, QD and QDD must be aligned C-contiguous float64 arrays of shape ({ns}, {nq})")
    raise_nonfinite(bad)
    return result


def actuated_regressor(
    robot: Robot,
    Q: np.ndarray,
    QD: np.ndarray,
    QDD: np.ndarray,
    G: np.ndarray | None,
    want_tensor: bool = False,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The regressor (samples, n_a, 10 n), or tensor (samples, n_a, n, 4, 4), with respect to the
    actuated coordinates of assembled tree states Q, QD, QDD (samples, nq): the projection
    Y_a = G^T Y_tree with G = dq/dq_a (samples, nq, n_a), i.e. L_j^i = sum_k L_k dq_k/dq_aj
    (eq. 52): the regressor by :func:`projected_batch` (n_a rows a state, no Y_tree), the tensor
    as G^T times the tree's. For a robot without constraints q_a = q and ``G`` is not used."""
    ns, n, na = Q.shape[0], robot.n, len(robot.actuated)
    block = (n, 4, 4) if want_tensor else (10 * n,)
    if robot.constrained:  # the compiled kernel reads these shapes unchecked
        shapes = {"Q": (ns, robot.nq), "QD": (ns, robot.nq), "QDD": (ns, robot.nq), "G": (ns, robot.nq, na)}
        for name, x in zip(shapes, (Q, QD, QDD, G)):
            if np.shape(x) != shapes[name]:
                raise PgaDynError(f"{name} must have shape {shapes[name]} for robot '{robot.name}', got {np.shape(x)}")
    result = output_array((ns, na, *block), out)
    if robot.constrained and want_tensor:
        tree = tree_regressor(robot, Q, QD, QDD, want_tensor).reshape(ns, robot.nq, -1)
        np.matmul(G.transpose(0, 2, 1), tree, out=result.reshape(ns, na, -1))  # stacked G^T R (BLAS)
    elif robot.constrained:  # G^T Y_tree in one pass, without Y_tree
        states = (np.require(x, float, ("C", "W")) for x in (Q, QD, QDD, G))  # one signature: C, writable
        # a process's first small batches as Python, as in tree_regressor (pga_dyn.interpreted.first_calls)
        bad = first_calls(projected_batch, n <= SMALL_BODIES and ns <= SMALL_STATES)(
            *robot.derived(_kernel_arrays), *states, result.reshape(ns * na, 10 * n)
        )
        raise_nonfinite(bad)
    else:
        tree_regressor(robot, Q, QD, QDD, want_tensor, result)
    return result


class _OneState(NamedTuple):
    """What a tree's single state needs, bound once per robot (``robot.derived``)."""

    #: ``entry(index, poses, axes, q, qd, qdd, Y)``: :func:`_tp_batch`'s compiled entry point for
    #: its one signature (called with the fields below: a ``functools.partial`` costs 30 ns more).
    entry: Callable
    #: The robot's arrays of :func:`_kernel_arrays`.
    index: np.ndarray
    poses: np.ndarray
    axes: np.ndarray
    #: The shape (nq, 10 n) of Y.
    shape: tuple


def _one_state(robot: Robot) -> _OneState | None:
    """:class:`_OneState` of a tree, None for a robot with constraints. Calling the entry point
    skips numba's dispatcher (typing each argument and finding the version), so the caller passes
    the kinds of arrays of the signature: q, qd, qdd 1-D float64 (the kernel itself checks the
    rest: their length, strides and address, returning :data:`NOT_READY` otherwise; it reads
    them only, so a read-only array is read as it is) and Y a fresh C-contiguous float64
    (nq, 10 n). The kernel allocates its scratch arrays in each call: calls share no state and
    may run in any thread. ``_tp_batch.compile`` loads the version from numba's cache or
    compiles it, as a call through the dispatcher would: still one version of the kernel."""
    if robot.constrained:
        return None
    arrays = robot.derived(_kernel_arrays)
    if not hasattr(_tp_batch, "compile"):  # NUMBA_DISABLE_JIT=1: the Python function itself
        return _OneState(_tp_batch, *arrays, (robot.nq, 10 * robot.n))
    state, rows = np.zeros(0), np.zeros((0, 0))
    entry = _tp_batch.compile(tuple(numba.typeof(x) for x in (*arrays, state, state, state, rows)))
    return _OneState(entry, *arrays, (robot.nq, 10 * robot.n))


def _run(robot: Robot, q, qd, qdd, want_tensor: bool, out=None):
    """Regressor (or tensor) with respect to the actuated coordinates, one state or a batch."""
    q, qd, qdd, batch = state_arrays(robot, q, qd, qdd, actuated=True)
    if not (want_tensor or robot.constrained):  # a tree: the kernel fills the result in place
        if batch:
            return tree_regressor(robot, q, qd, qdd, False, out)
        one = robot.derived(_one_state)  # one state: the compiled entry point, no dispatch
        result = output_array(one.shape, out)
        raise_nonfinite(one.entry(one.index, one.poses, one.axes, q, qd, qdd, result))  # ready: not NOT_READY
        return result
    raise_nonfinite(first_nonfinite(q.reshape(-1), qd.reshape(-1), qdd.reshape(-1)))
    na, n = len(robot.actuated), robot.n
    ns = q.shape[0] if batch else 1
    block = (n, 4, 4) if want_tensor else (10 * n,)
    result = output_array((ns, na, *block) if batch else (na, *block), out)
    if not batch:
        q, qd, qdd = q.reshape(1, na), qd.reshape(1, na), qdd.reshape(1, na)
    G = None
    if robot.constrained:  # assemble each state (pga_dyn.loops)
        q, qd, qdd, G, _ = constraints(robot).complete_all(q, qd, qdd)
    actuated_regressor(robot, q, qd, qdd, G, want_tensor, result.reshape((ns, na, *block)))
    return result


def regressor_tensor(robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike) -> np.ndarray:
    """The TP dynamics regressor R[j, i, m, n] = L_j^i ^ (E_m^i v Edd_n^i) (eq. 49, Algorithm 5).

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (n_a,) or (samples, n_a)
        Positions, velocity and acceleration coordinates of the actuated coordinates
        (``robot.actuated_names``; all tree coordinates for a tree), one state or a batch.

    Returns
    -------
    ndarray (n_a, n, 4, 4), or (samples, n_a, n, 4, 4) for a batch
        Body i of the paper is index i - 1 here; tau_j = sum_{i,m,n} R[j, i, m, n] N_i[m, n]
        (eq. 50). Constrained robots as in :func:`regressor`.
    """
    return _run(robot, q, qd, qdd, True)


def regressor(
    robot: Robot, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike, out: np.ndarray | None = None
) -> np.ndarray:
    """The matrix regressor Y with Y @ inertial_parameters(robot) = tau (eq. 50).

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (n_a,) or (samples, n_a)
        The actuated coordinates q_a (``robot.actuated_names``) and their velocity and
        acceleration coordinates: one state, or a batch (one row a sample) computed in one
        compiled loop. For a tree, q_a = q.
    out : ndarray, optional
        A C-contiguous float64 array of the result's shape, filled and returned instead of a
        new array (reusing it saves the cost of fresh memory on large batches).

    Returns
    -------
    ndarray (n_a, 10 n), or (samples, n_a, 10 n) for a batch
        Columns of body i are the bar operator of eq. (100) applied to R[:, i]. For a robot with
        loop joints or couplings each state is assembled (:mod:`pga_dyn.loops`) and the rows are
        the generalized forces of q_a, Y_a = G^T Y_tree with G = dq/dq_a (eq. 52).
    """
    if (
        out is None
        and type(robot) is Robot
        and type(q) is type(qd) is type(qdd) is np.ndarray
        and q.dtype is qd.dtype is qdd.dtype is _FLOAT64
        and q.ndim == qd.ndim == qdd.ndim == 1
    ):
        # A tree's single state of 1-D float64 arrays: the entry point, bound once per robot,
        # checks the rest (length, strides, address); the arrays it does not take go to _run,
        # which converts them or names the argument at fault.
        one = robot.derived(_one_state)
        if one is not None:
            result = np.empty(one.shape)
            bad = one.entry(one.index, one.poses, one.axes, q, qd, qdd, result)
            if bad < 0:
                return result
            if bad != NOT_READY:
                raise_nonfinite(bad)
    return _run(robot, q, qd, qdd, False, out)


def inertial_parameters(robot: Robot) -> np.ndarray:
    """The inertial parameters pi of the model, eq. (97).

    Returns
    -------
    ndarray (10 n,)
        For each body (``robot.body_names`` order) the entries [N11, N12, N13, N22, N23, N33,
        N14, N24, N34, N44] of its pseudo-inertia in the spatial assignment (the body at q0, in
        world coordinates; :data:`pga_dyn.conventions.PARAM_INDEX`).
    """
    T0 = initial_poses(robot)
    return (
        np.concatenate(
            [pseudo_to_vector(T0[i] @ robot.inertial(i).pseudo_inertia() @ T0[i].T) for i in range(1, robot.n + 1)]
        )
        if robot.n
        else np.zeros(0)
    )


def per_body(robot: Robot, x: npt.ArrayLike, name: str) -> np.ndarray:
    """Per-body parameters ``x`` ((10 n,) or (n, 10), the argument ``name``) as a float array
    (n, 10), ``robot.body_names`` order; a PgaDynError naming ``name`` for another shape or a
    non-finite value."""
    x = float_array(name, x)
    if x.shape not in ((10 * robot.n,), (robot.n, 10)):
        raise PgaDynError(f"{name} must have shape ({10 * robot.n},) or ({robot.n}, 10), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise PgaDynError(f"{name} contains non-finite values")
    return x.reshape(robot.n, 10)


def from_link_parameters(robot: Robot, phi: npt.ArrayLike) -> np.ndarray:
    """pi of eq. (97) from classical parameters in the body (link) frames: N_world = T0 N_link T0^T.

    Parameters
    ----------
    robot : Robot
    phi : array_like (n, 10) or (10 n,)
        Per body [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], the inertia about the frame
        origin (Pinocchio's order, :data:`pga_dyn.conventions.LINK_PARAM_NAMES`).

    Returns
    -------
    ndarray (10 n,)
    """
    phi = per_body(robot, phi, "phi")
    T0 = initial_poses(robot)
    return np.concatenate(
        [np.zeros(0)] + [pseudo_to_vector(T0[i + 1] @ link_to_pseudo(p) @ T0[i + 1].T) for i, p in enumerate(phi)]
    )  # n = 0: no parameter


def to_link_parameters(robot: Robot, pi: npt.ArrayLike) -> np.ndarray:
    """The inverse of :func:`from_link_parameters`.

    Parameters
    ----------
    robot : Robot
    pi : array_like (10 n,) or (n, 10)
        Parameters of eq. (97).

    Returns
    -------
    ndarray (n, 10)
        phi in the body frames, Pinocchio's order.
    """
    pi = per_body(robot, pi, "pi")
    inv = inverse_initial_poses(robot)
    return np.array([pseudo_to_link(inv[i + 1] @ vector_to_pseudo(x) @ inv[i + 1].T) for i, x in enumerate(pi)])


def _link_blocks(robot: Robot) -> np.ndarray:
    n = robot.n
    blocks = np.zeros((n, 10, 10))
    for k in range(10):
        phi = np.zeros((n, 10))
        phi[:, k] = 1.0
        blocks[:, :, k] = from_link_parameters(robot, phi).reshape(n, 10)
    return blocks


def link_blocks(robot: Robot) -> np.ndarray:
    """The diagonal blocks (n, 10, 10) of :func:`link_map`: pi_b = F_b phi_b for body b (index
    b - 1), O(n) memory (read-only, computed once: ``robot.derived``)."""
    return robot.derived(_link_blocks)


def _link_map(robot: Robot) -> np.ndarray:
    n = robot.n
    F = np.zeros((10 * n, 10 * n))
    for b, block in enumerate(link_blocks(robot)):
        F[10 * b : 10 * b + 10, 10 * b : 10 * b + 10] = block
    return F


def link_map(robot: Robot) -> np.ndarray:
    """The matrix F (10 n, 10 n), block diagonal, with pi = F phi: :func:`from_link_parameters`
    applied to the unit link-parameter vectors (read-only, computed once: ``robot.derived``);
    its blocks alone are :func:`link_blocks`."""
    return robot.derived(_link_map)
