"""The conventions of pga-dyn, each written down once (docs/conventions.md explains them).

Every other module imports what it needs from here; none restates an order, a code or a sign.

* **Joint types** (DRNG paper section 5.1): R revolute, P prismatic, U universal, S spherical,
  F floating (6 DoF), and ``fixed`` (merged away by the model). Their number of coordinates
  (:data:`JOINT_DOF`), of axes (:data:`JOINT_AXES`), the names of their coordinates
  (:func:`coordinate_names`) and their integer codes in the compiled kernels (:data:`JOINT_CODE`,
  and the constants ``CODE_R`` ... ``CODE_F`` that the kernels compare with).
* **Gravity**: a vector in the world frame, default :data:`DEFAULT_GRAVITY`; it enters the
  dynamics as the seed G = (0; -g) of the spatial accelerations (eq. 70, :func:`gravity_seed`):
  the base accelerates *upwards*.
* **Inertial parameters**: the 10-vector of eq. (97) (:data:`PARAM_INDEX`, :data:`PARAM_NAMES`),
  the classical link-frame parameters in Pinocchio's order (:data:`LINK_PARAM_NAMES`), and the
  conversions between inertia, pseudo-inertia (eq. 44) and both parameter vectors.
* **URDF rotations**: ``rpy`` is R = Rz(yaw) Ry(pitch) Rx(roll) (:func:`rpy_rotation`).

The PGA bases and signs of the paper (points on e032, e013, e021, e123; lines on e23, e31, e12,
e01, e02, e03; motors) are the other convention; they live in :mod:`pga_dyn.pga`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

# -- joints ------------------------------------------------------------------------------------

#: Number of coordinates of each joint type.
JOINT_DOF = {"R": 1, "P": 1, "U": 2, "S": 3, "F": 6, "fixed": 0}
#: Number of axes each joint type is given (R, P: the axis; U: the first axis, fixed in the
#: parent, and the second, fixed in the child; S, F, fixed: none).
JOINT_AXES = {"R": 1, "P": 1, "U": 2, "S": 0, "F": 0, "fixed": 0}
#: The types a loop joint (URDF+ ``<loop>``) can have.
LOOP_JOINT_TYPES = ("R", "P", "U", "S")
#: Integer codes of the joint types in the compiled kernels (tree and loop joints alike).
CODE_R, CODE_P, CODE_U, CODE_S, CODE_F = 0, 1, 2, 3, 4
#: Joint type -> its code in the compiled kernels (``CODE_R`` ... ``CODE_F``).
JOINT_CODE = {"R": CODE_R, "P": CODE_P, "U": CODE_U, "S": CODE_S, "F": CODE_F}
#: Code of a spin lock in the loop kernels: not a joint but one constraint row, the spin rate of
#: a body about a line fixed in it held at zero (:mod:`pga_dyn.loops.spins`).
CODE_SPIN = 5
#: Suffixes of the coordinate names of multi-DoF joints: U its two angles; S the rotation
#: vector; F the exponential coordinates (omega, v) of eq. (102).
_COORDINATE_SUFFIX = {
    "U": (".1", ".2"),
    "S": (".rx", ".ry", ".rz"),
    "F": (".rx", ".ry", ".rz", ".tx", ".ty", ".tz"),
}


def coordinate_names(joint: str, joint_type: str) -> tuple:
    """The names of the coordinates of ``joint``: its name for a 1-DoF joint, else the name with
    the suffixes ``.1 .2`` (U), ``.rx .ry .rz`` (S) or ``.rx .ry .rz .tx .ty .tz`` (F)."""
    if JOINT_DOF[joint_type] == 1:
        return (joint,)
    return tuple(joint + suffix for suffix in _COORDINATE_SUFFIX.get(joint_type, ()))


# -- gravity -----------------------------------------------------------------------------------

#: Default gravity vector (m/s^2) in the world frame; pga-dyn always takes gravity as a vector.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


def gravity_seed(gravity: npt.ArrayLike) -> np.ndarray:
    """The spatial acceleration G = (0; -g) (6,) given to the base (eq. 70): with A = dV/dt + G, a
    point of a body accelerates as p'' - g, so the joints carry the weight."""
    seed = np.zeros(6)
    seed[3:] = -np.asarray(gravity, dtype=float)
    return seed


# -- inertial parameters -----------------------------------------------------------------------

#: Row, column of the pseudo-inertia N for each entry of the 10-vector of eq. (97) (0-based).
PARAM_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2), (0, 3), (1, 3), (2, 3), (3, 3))
#: The rows and the columns of PARAM_INDEX as arrays (10,), for the compiled kernels.
PARAM_ROW = np.array([r for r, _ in PARAM_INDEX], dtype=np.int64)
PARAM_COL = np.array([c for _, c in PARAM_INDEX], dtype=np.int64)
#: Names of the entries of eq. (97): N = [[Sigma, h], [h^T, m]] with Sigma = int p p^T dm, h = m c.
PARAM_NAMES = ("Sxx", "Sxy", "Sxz", "Syy", "Syz", "Szz", "hx", "hy", "hz", "m")
#: Names of the classical parameters of a body in its own (link) frame, Pinocchio's order; the
#: inertia is about the frame origin.
LINK_PARAM_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def pseudo_inertia(mass: float, com: npt.ArrayLike, inertia: npt.ArrayLike) -> np.ndarray:
    """The pseudo-inertia N (4, 4) of eq. (44), N = [[Sigma, h], [h^T, m]] with h = m c and
    Sigma = 1/2 tr(J) 1 - J, J = ``inertia`` (3, 3, about the centre of mass ``com``) moved to
    the frame origin by the parallel-axis theorem."""
    c = np.asarray(com, dtype=float)
    j_origin = np.asarray(inertia, dtype=float) + mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    n = np.empty((4, 4))
    n[:3, :3] = 0.5 * np.trace(j_origin) * np.eye(3) - j_origin
    n[:3, 3] = n[3, :3] = mass * c
    n[3, 3] = mass
    return n


def inertia_of_pseudo(N: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com (3,), inertia about the com (3, 3)) of a pseudo-inertia N (4, 4), the inverse of
    :func:`pseudo_inertia`. A massless N may still carry rotational inertia (e.g. Puma560's link
    1): it is the same about every point, so it is kept with the centre of mass at the origin."""
    m = N[3, 3]
    if m <= 0.0:
        sigma = N[:3, :3]
        return 0.0, np.zeros(3), np.trace(sigma) * np.eye(3) - sigma
    c = N[:3, 3] / m
    sigma_c = N[:3, :3] - m * np.outer(c, c)
    return float(m), c, np.trace(sigma_c) * np.eye(3) - sigma_c


def pseudo_to_vector(N: np.ndarray) -> np.ndarray:
    """The 10-vector (10,) of eq. (97) of a pseudo-inertia N (4, 4)."""
    return np.array([N[r, c] for r, c in PARAM_INDEX])


def vector_to_pseudo(x: Iterable[float]) -> np.ndarray:
    """The pseudo-inertia N (4, 4) of a 10-vector of eq. (97) (inverse of :func:`pseudo_to_vector`)."""
    N = np.empty((4, 4))
    for value, (r, c) in zip(x, PARAM_INDEX):
        N[r, c] = N[c, r] = value
    return N


def link_inertia(phi: np.ndarray) -> np.ndarray:
    """The rotational inertia J (3, 3) about the frame origin in link parameters ``phi`` (10,),
    ``LINK_PARAM_NAMES`` order."""
    return np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]], [phi[7], phi[8], phi[9]]])


def link_to_pseudo(phi: np.ndarray) -> np.ndarray:
    """The pseudo-inertia N (4, 4) (eq. 44) in the link frame of the link parameters ``phi`` (10,)."""
    J = link_inertia(phi)
    N = np.empty((4, 4))
    N[:3, :3] = 0.5 * np.trace(J) * np.eye(3) - J
    N[:3, 3] = N[3, :3] = phi[1:4]
    N[3, 3] = phi[0]
    return N


def pseudo_to_link(N: np.ndarray) -> np.ndarray:
    """The link parameters (10,) of a pseudo-inertia N (4, 4) (inverse of :func:`link_to_pseudo`)."""
    sigma = N[:3, :3]
    J = np.trace(sigma) * np.eye(3) - sigma
    return np.array([N[3, 3], N[0, 3], N[1, 3], N[2, 3], J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]])


# -- URDF --------------------------------------------------------------------------------------


def rpy_rotation(rpy: Iterable[float]) -> np.ndarray:
    """The rotation matrix (3, 3) of URDF's ``rpy`` = (roll, pitch, yaw): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )
