"""Free motions of the loops: passive motions that no actuator drives (J_f rank-deficient
everywhere, not only at a singular configuration), recognised as free spins and locked
(docs/drng.md, "Free spins").

A rod between two ball joints (the forearms of a Delta, the legs of a 6-SPS hexapod), or a body
between two coaxial revolute joints, can turn about the line through the two joint centres
with every actuated coordinate held: the loops leave that spin free. Let psi be the spin angle
and u the line's direction, fixed in the body. The joints transmit no torque about the line,
and when the body's mass is symmetric about it (centre of mass on the line, u a principal axis
of the inertia about the centre of mass, equal moments about every axis normal to u) neither
its kinetic energy (the moment about u enters only as (1/2) I_u (w . u)^2) nor its potential
energy depends on psi: psi is cyclic and the body's spin rate w . u keeps its value. The
classical rule, used here, is a spin rate of zero: the lock (w_b . u) = 0 (a spin lock of
:mod:`pga_dyn.loops.closure`, relative to the world) is added to the constraints, which
determine the velocities again; the actuated dynamics are those of the machine. The spin
angle the lock leaves depends on the path (a rod whose direction goes round a loop comes back
turned by the solid angle it enclosed), and the regressor's columns of the body's parameters
depend on it; every spin angle is reached by some path, so the configuration takes the one of
the smallest rotation from the reference: the body's orientation is its orientation there
turned by the smallest rotation that takes the line's direction there to its direction now
(the lock's position form). Two rods that stay parallel (a Delta's parallelogram) then keep
equal spin angles exactly, as they do on every path (equal angular velocities), and not up to
the errors of a numerical integration, which would reveal differences of their parameters that
no motion reveals. The body's
inertia about the line, the parameter direction dI = u u^T (in the pseudo-inertia of eq. 97:
dSigma = (1/2) 1 - u u^T, no mass, no first moment), enters nothing the actuators feel: it is
unidentifiable (:func:`spin_vector`; ``drng.nullspace`` states it as the rule "free spin").

A body whose mass is **not** symmetric about its spin line (a centre of mass ``offset`` off the
line, an inertia ``asymmetry`` about it: CAD rods) is locked the same way by default, but then
the lock is an approximation: gravity and the motion exert a torque about the line that the
joints cannot transmit, so the real body spins, and the lock holds it with a torque lambda about
the line (the lock row's multiplier). :func:`~pga_dyn.sampling.spin_lock_bounds` measures it at
sampled states against the actuated forces; :class:`FreeSpin` records the offset and the
asymmetry, its :meth:`FreeSpin.describe` says so, and a PgaDynWarning is given when such a spin
is locked. The exact treatment, :func:`pga_dyn.loops.exact_spins`, makes the spin a coordinate of
its own instead (docs/drng.md, "Free spins and redundant closures").

A free motion is locked exactly when every body with mass that it moves turns about one line
fixed in it (a twist of zero pitch, the same line for every direction of the free motions
that moves it) with its mass symmetric about it; a body with mass that it turns otherwise (on
a screw: CAD ball joints whose axes miss each other by micrometres) makes the lock an
approximation too, stated as above. A free motion that moves a body with mass without turning
it (a slide) is refused by :func:`find_spins`, naming it.

The free motions are read at a closed configuration from the nullspace of each part's J_f
(the rank decision of :func:`pga_dyn.loops.parts.closure_rank`); the rows of the locks are
picked greedily (bodies with mass first, then the massless links a spin turns too, such as the
links inside a ball joint made of three revolute joints; in each group the body the free
motions turn most, of what the rows chosen before leave) until they fix every free direction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conventions import pseudo_to_vector
from ..kinematics import forward, initial_poses
from .parts import closure_rank

#: Relative tolerance of the symmetry of a spinning body: the distance of its centre of mass to
#: the line over the robot's size, the inertia's asymmetry over its largest moment, the pitch of
#: the spin over the robot's size, and the second singular value of a body's twists over the
#: first.
SPIN_RTOL = 1e-6


@dataclass(frozen=True)
class FreeSpin:
    """A free spin, locked: body ``body`` (its name ``name``) turns about the line through
    ``point`` (3,) along ``axis`` (3,, unit), both in its body frame, and its spin rate about that
    line is held at zero. ``bodies``: every body the spin turns (the massless links of a ball
    joint made of revolute joints among them); ``joints``: the passive coordinates it moves;
    ``mass``: whether ``body`` has mass (its inertia about the line is then unidentifiable);
    ``rotation`` (3, 3): the body's orientation in the world at the reference configuration,
    where the spin angle is zero (the lock's position form, :mod:`pga_dyn.loops.closure`).
    ``symmetric``: every body with mass that the spin turns turns about one line (pitch 0) with
    its mass symmetric about it (within SPIN_RTOL; of the robot's size for lengths), the lock
    then exact (module docstring), else an approximation and ``coupled`` names the bodies that
    are not: ``offset`` (m), the largest distance of their centres of mass to their lines,
    ``asymmetry``, the largest relative asymmetry of their inertias about them (the larger of
    |I u - (u.I u) u| and the spread of the moments about the normals, over the largest moment),
    ``pitch`` (m), the largest pitch of their screws (inf: a body turned about several lines)."""

    body: int
    name: str
    axis: np.ndarray
    point: np.ndarray
    bodies: tuple
    joints: tuple
    mass: bool
    rotation: np.ndarray
    offset: float = 0.0
    asymmetry: float = 0.0
    symmetric: bool = True
    coupled: tuple = ()
    pitch: float = 0.0

    def describe(self) -> str:
        """One line for a report: the body, its line and the rule (and, for a body not symmetric
        about its line, that the lock is an approximation)."""
        p, u = ((np.round(v, 6) + 0.0).tolist() for v in (self.point, self.axis))
        return (
            f"body '{self.name}' spins freely about the line through {p} along {u} (its frame; joints "
            f"{', '.join(repr(j) for j in self.joints[:6])}{' ...' if len(self.joints) > 6 else ''}): "
            "locked at zero spin rate"
            + ("; its inertia about that line is unidentifiable" if self.mass else "")
            + ("" if self.symmetric else f"; {self.approximation()}")
        )

    def coupling(self) -> str:
        """Why the spin couples to the motion, in words ('' for a body symmetric about its line)."""
        if self.symmetric:
            return ""
        screw = f", screw pitch {self.pitch:.2g} m" if self.pitch else ""
        return (
            f"the mass of {', '.join(repr(c) for c in self.coupled)} is not symmetric about the line it turns about "
            f"(centre of mass up to {self.offset:.3g} m off it, inertia asymmetry {self.asymmetry:.2g}{screw})"
        )

    def approximation(self) -> str:
        """What the lock of a body not symmetric about its line neglects, in words ('' when it is)."""
        if self.symmetric:
            return ""
        return (
            f"AN APPROXIMATION: {self.coupling()}, so the spin couples to the motion and the lock holds a torque "
            "about the line that the joints do not transmit (pga_dyn.sampling.spin_lock_bounds bounds it; "
            "--spins exact makes the spin a coordinate)"
        )


def spin_vector(robot, spin: FreeSpin) -> np.ndarray:
    """The parameter direction (10,) of the spinning body (eq. 97: its pseudo-inertia at q0 in world
    coordinates, :func:`pga_dyn.tp_regressor.inertial_parameters`) that only the spin would
    reveal: the inertia about the spin line, dI = u u^T with u the line's direction at q0, i.e.
    dSigma = (1/2) 1 - u u^T, no mass, no first moment (a rotational inertia without mass does
    not depend on the point of the line)."""
    u = initial_poses(robot)[spin.body, :3, :3] @ spin.axis
    N = np.zeros((4, 4))
    N[:3, :3] = 0.5 * np.eye(3) - np.outer(u, u)
    return pseudo_to_vector(N)


def free_directions(con, J) -> tuple:
    """(D (nz, d), ranks): the free motions at a configuration with constraint Jacobian J (rows
    of the loops and locks, then of the couplings): an orthonormal basis, per part, of the
    nullspace of J_f (the singular vectors beyond its rank, :func:`pga_dyn.loops.parts.closure_rank`),
    as directions of the free coordinates z; and the rank decision of each part."""
    blocks, ranks = [], []
    for part in con.parts:
        Jf = part.free_jacobian(J)
        decision = closure_rank(Jf)
        ranks.append(decision)
        if decision.rank < part.nf:
            vt = np.linalg.svd(Jf)[2]
            block = np.zeros((con.E.shape[1], part.nf - decision.rank))
            block[part.columns[part.na :]] = vt[decision.rank :].T
            blocks.append(block)
    D = np.hstack(blocks) if blocks else np.zeros((con.E.shape[1], 0))
    return D, ranks


def _is_massive(inertial) -> bool:
    return inertial.mass > 0.0 or bool(np.any(inertial.inertia != 0.0))


def find_spins(con, z, J) -> tuple:
    """(spins, problem): the free motions at the closed configuration z (nz,) (J its constraint
    Jacobian) as locked :class:`FreeSpin` s (those of bodies not symmetric about their lines
    marked so: ``symmetric`` False, with their ``offset`` and ``asymmetry``), and None; or (),
    and a sentence naming the free motion that is no spin and why (the module docstring)."""
    robot = con.robot
    D = free_directions(con, J)[0]
    d = D.shape[1]
    if not d:
        return (), None
    q = con.E @ z + con.e0
    parent, code, origin, axes, qidx, on = con.args[:6]
    n, nq = robot.n, robot.nq
    T, S = np.empty((n + 1, 4, 4)), np.zeros((nq, 6))
    V, A = np.empty((n + 1, 6)), np.empty((n + 1, 6))
    zero = np.zeros(nq)
    forward(parent, code, origin, axes, qidx, np.zeros(6), np.ascontiguousarray(q), zero, zero, T, S, V, A)
    dq = con.E @ D  # (nq, d)
    size = max(1.0, float(np.abs(T[1:, :3, 3]).max(initial=0.0)))
    passive = set(robot.coordinate_names[k] for k in robot.passive)
    joints = tuple(
        robot.coordinate_names[k]
        for k in range(nq)
        if np.abs(dq[k]).max() > SPIN_RTOL * np.abs(dq).max() and robot.coordinate_names[k] in passive
    )
    motion = f"the free motion of joints {', '.join(repr(j) for j in joints[:6])}"
    W = np.einsum("bk,kr,kd->brd", on[1:].astype(float), S, dq)  # (n, 6, d): twists of the bodies
    scale = np.abs(W).max()
    moving = [b for b in range(1, n + 1) if np.abs(W[b - 1]).max() > SPIN_RTOL * scale]
    lines = {}
    for b in moving:
        u_, s, vt = np.linalg.svd(W[b - 1])
        twist, name = u_[:, 0], robot.body_names[b - 1]
        w, v0 = twist[:3], twist[3:]
        inertial = robot.inertial(b)
        massive = _is_massive(inertial)
        turning = np.linalg.norm(w) > SPIN_RTOL * np.linalg.norm(twist)
        if not turning:
            if massive:
                return (
                    (),
                    f"{motion} moves body '{name}' without turning it (a translation): it changes the actuated dynamics",
                )
            continue
        u = w / np.linalg.norm(w)
        pitch = (u @ v0) / np.linalg.norm(w)
        point = np.cross(w, v0) / (w @ w)
        if massive:
            R, p0 = T[b, :3, :3], T[b, :3, 3]
            com = R @ inertial.com + p0
            off = np.linalg.norm(np.cross(com - point, u))
            Ic = R @ inertial.inertia @ R.T
            big = max(np.abs(Ic).max(), 1e-300)
            P = np.eye(3) - np.outer(u, u)
            transverse = P @ Ic @ P
            asym = (
                max(
                    np.linalg.norm(Ic @ u - (u @ Ic @ u) * u),
                    np.linalg.norm(transverse - 0.5 * np.trace(transverse) * P),
                )
                / big
            )
            several = len(s) > 1 and s[1] > SPIN_RTOL * s[0]
            screw = several or abs(pitch) > SPIN_RTOL * size
            exact = off <= SPIN_RTOL * size and asym <= SPIN_RTOL and not screw
            lines[b] = (u, point, massive, off, asym, exact, np.inf if several else abs(pitch) if screw else 0.0)
            continue
        lines[b] = (u, point, massive, 0.0, 0.0, True, 0.0)
    # the locks: the spin rates of the bodies the free motions turn most (bodies with mass first),
    # picked greedily, each the largest part of its row that the rows chosen before leave
    rows, chosen = np.zeros((0, d)), []
    for group in ([b for b in lines if lines[b][2]], [b for b in lines if not lines[b][2]]):
        candidates = {b: lines[b][0] @ W[b - 1, :3] for b in group}  # (d,): b's spin rate along each free direction
        while len(rows) < d and candidates:
            left = {
                b: row - rows.T @ np.linalg.lstsq(rows.T, row, rcond=None)[0] if len(rows) else row
                for b, row in candidates.items()
            }
            b = max(left, key=lambda c: (np.linalg.norm(left[c]), -c))
            if np.linalg.norm(left[b]) <= SPIN_RTOL * scale:
                break
            rows = np.vstack([rows, candidates.pop(b)])
            chosen.append(b)
    if len(rows) < d:
        return (), f"{motion} turns no body about a line that a lock of its spin rate could hold: it is not a free spin"
    spins = []
    directions = np.linalg.solve(rows, np.eye(d)) if d else rows  # column j: the spin of chosen[j] alone
    for j, b in enumerate(chosen):
        u, point, massive = lines[b][:3]
        R, p0 = T[b, :3, :3], T[b, :3, 3]
        own, turn = dq @ directions[:, j], W @ directions[:, j]
        turned = [c for c in moving if np.abs(turn[c - 1]).max() > SPIN_RTOL * np.abs(turn).max()]
        bodies = tuple(robot.body_names[c - 1] for c in turned)
        names = tuple(
            robot.coordinate_names[k]
            for k in range(nq)
            if abs(own[k]) > SPIN_RTOL * np.abs(own).max() and robot.coordinate_names[k] in passive
        )
        coupled = [c for c in turned if c in lines and lines[c][2] and not lines[c][5]]  # mass not symmetric
        off = max((lines[c][3] for c in coupled), default=lines[b][3])
        asym = max((lines[c][4] for c in coupled), default=lines[b][4])
        pitch = max((lines[c][6] for c in coupled), default=0.0)
        axis, local, rotation = R.T @ u, R.T @ (point - p0), R.copy()
        for array in (axis, local, rotation):
            array.flags.writeable = False  # a frozen model's derived value
        spins.append(
            FreeSpin(
                b,
                robot.body_names[b - 1],
                axis,
                local,
                bodies,
                names,
                massive,
                rotation,
                float(off),
                float(asym),
                not coupled,
                tuple(robot.body_names[c - 1] for c in coupled),
                float(pitch),
            )
        )
    return tuple(spins), None
