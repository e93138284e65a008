"""DRNG, RPNA and the numerical baseline side by side on one robot.

Each method gives a basis of the regressor nullspace in the parameters of
``pga_dyn.inertial_parameters``. The comparison reports their dimensions and run times and the
largest principal angle between every pair of nullspaces (pi/2 when the dimensions differ);
the methods agree when all dimensions are equal and every largest angle is below 1e-8 rad.

DRNG is run with its certificate (``drng.nullspace(robot, certify=True)``): its basis is the
principles' basis, completed by numerical vectors when the principles fall short (the
comparison then says so); its time is that of the principles alone. RPNA is run on trees only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .result import orthonormal

if TYPE_CHECKING:
    from pga_dyn.model import Robot

#: Largest principal angle (rad) under which two nullspaces are the same.
ANGLE_TOL = 1e-8


def largest_angle(A: np.ndarray, B: np.ndarray) -> float:
    """The largest principal angle (rad) between span(A) and span(B); pi/2 when the dimensions
    differ. Computed from sines (accurate for small angles): sin = ||(1 - P_A) Q_B||_2."""
    qa, qb = orthonormal(A), orthonormal(B)
    if qa.shape[1] != qb.shape[1]:
        return float(np.pi / 2)
    if qa.shape[1] == 0:
        return 0.0
    residual = qb - qa @ (qa.T @ qb)
    return float(np.arcsin(min(1.0, np.linalg.norm(residual, 2))))


@dataclass
class Comparison:
    """The outcome of :func:`compare`: per method (``drng``, ``rpna``, ``numerical``) the
    nullspace dimension and seconds, the largest principal angle of each pair, and the verdict."""

    robot_name: str
    num_parameters: int
    dims: dict
    seconds: dict
    angles: dict
    agree: bool
    notes: list = field(default_factory=list)
    results: dict = field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        lines = [f"{self.robot_name}: {self.num_parameters} parameters"]
        for name, dim in self.dims.items():
            lines.append(
                f"  {name:<10} nullspace {dim:4d}  identifiable {self.num_parameters - dim:4d}"
                f"  {1000 * self.seconds[name]:9.2f} ms"
            )
        for (a, b), angle in self.angles.items():
            lines.append(f"  largest angle {a} / {b}: {angle:.2e} rad")
        lines += [f"  note: {note}" for note in self.notes]
        lines.append("  agree" if self.agree else "  DISAGREE")
        return "\n".join(lines)


def compare(robot: Robot, samples: int = 200, seed: int | None = 0) -> Comparison:
    """Run DRNG (certified), RPNA (trees only) and the numerical baseline on ``robot``, with
    ``samples`` random valid states for the numerical parts."""
    from .generator import nullspace
    from .numerical import numerical_nullspace

    results, seconds, notes = {}, {}, []
    drng = nullspace(robot, certify=True, samples=samples, seed=seed)
    results["drng"], seconds["drng"] = drng, drng.seconds
    if not drng.geometric:
        notes.append(
            f"DRNG's principles fell short; its basis was completed numerically "
            f"(bodies {', '.join(drng.certificate.get('short', ())) or '?'})"
        )
    if not (robot.loop_joints or robot.couplings):
        from .rpna_algorithms import rpna

        results["rpna"] = rpna(robot)
        seconds["rpna"] = results["rpna"].seconds
    else:
        notes.append("RPNA skipped: the robot has closed loops or couplings")
    start = time.perf_counter()
    results["numerical"] = numerical_nullspace(robot, samples, seed)
    seconds["numerical"] = time.perf_counter() - start
    dims = {name: r.dim for name, r in results.items()}
    names = list(results)
    angles = {
        (a, b): largest_angle(results[a].basis, results[b].basis) for k, a in enumerate(names) for b in names[k + 1 :]
    }
    agree = len(set(dims.values())) == 1 and all(angle < ANGLE_TOL for angle in angles.values())
    return Comparison(robot.name, 10 * robot.n, dims, seconds, angles, agree, notes, results)
