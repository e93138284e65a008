"""Generate robots/data/quadruped_fourbar.urdf, the built-in quadruped with four-bar knees
(docs/robots.md, docs/identification.md "Closed-loop legs").

    python tests/make_quadruped.py robots/data

A maintainer's tool beside the file it makes, not part of the installed package (like
``tests/make_pkms.py``, whose shapes and URDF writer it uses); ``tests/test_legged_loops.py``
checks that the file is current. Every number of the file comes from here: the joint centres
at q = 0 (stated in the file's header) and the inertials of uniform shapes (mass x shape), lumped
per link. Link frames are parallel to the world frame at q = 0 and sit at the centres of the
joints that carry them (make_pkms.Urdf), so every rpy is 0.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from make_pkms import Urdf, box, tube

NAME = "quadruped_fourbar"
X, Y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
HIP_X, HIP_Y = 0.33, 0.09  # hip abduction axes in the trunk frame
HIP_OFFSET = 0.10  # from the abduction axis out to the leg's plane
THIGH, CALF = 0.35, 0.35  # hip to knee, knee to foot
ALPHA = 0.7  # the thigh's angle from the vertical at q = 0 (the knee behind the hip)
CRANK, LEVER = 0.06, 0.045  # crank at the hip, lever on the calf above the knee (not a parallelogram)
LINKAGE_Y = 0.04  # the linkage's plane, inboard of the leg's
LIMITS = {"hip": 0.5, "thigh": 0.6, "crank": 0.5}
PASSIVE_LIMIT = 3.0  # the passive joints' limits: wide (the loops decide), written for URDF readers that want one

HEADER = f"""\
  Quadruped with four-bar knees, a URDF+ model written for pga-dyn (the project wrote this file):
  the built-in closed-loop legged robot of docs/identification.md ("Closed-loop legs").

  Machine type: a trunk and four legs; each leg has an actuated hip abduction joint (R about x),
  an actuated hip flexion joint (R about y) and a knee driven through a four-bar linkage: a crank
  turned by the knee motor at the hip (R about y, coaxial with the hip flexion joint, on the
  thigh), a coupler rod from the crank to a lever on the calf above the knee, the knee itself
  passive. The rod's far end is the URDF+ loop joint ("_rod_end") that closes the leg. Point feet
  are links on fixed joints (FL_foot, FR_foot, RL_foot, RR_foot).
  Size and masses: of a Unitree B1's class (about 50 kg, thigh and calf 0.35 m; the B1 of the
  Bayesian identification paper of Martinez, Tonneau and Mastalli has such a four-bar knee); the
  geometry and every mass are the project's own choice, not Unitree's figures.
  Geometry at q = 0 (a standing pose; trunk frame at the trunk's centre, x forward, z up; s = +1
  for the left legs FL, RL and -1 for the right legs FR, RR; f = +1 front, -1 rear):
    hip abduction axis (x) at (f {HIP_X:g}, s {HIP_Y:g}, 0); hip flexion axis (y) {HIP_OFFSET:g} m further out;
    thigh {THIGH:g} m from the hip to the knee, {ALPHA:g} rad from the vertical (the knee behind and below
    the hip), calf {CALF:g} m from the knee to the foot, which is right below the hip at z = -{2 * THIGH * np.cos(ALPHA):.4f};
    crank {CRANK:g} m and lever {LEVER:g} m, both forward, perpendicular to the thigh; rod from the crank
    pin to the lever's end ({np.hypot(THIGH, CRANK - LEVER):.6f} m), in a plane {LINKAGE_Y:g} m inboard of the leg.
  Knee transmission: about crank / lever = {CRANK / LEVER:.3g} at q = 0, varying along the motion.
  Inertials (mass x uniform shape): trunk 24 kg box 0.65 x 0.30 x 0.15 m and 2 kg of electronics
  (box 0.20 x 0.15 x 0.05 m, 0.04 m forward, 0.05 m up); per leg: hip 1.6 kg (the hip flexion
  motor, a cylinder r 0.05 m, 0.08 m long, on the flexion axis), thigh 1.2 kg bar (0.05 x 0.03 m
  section) and the knee motor 1.6 kg (cylinder r 0.05 m, 0.06 m long, on the flexion axis,
  inboard), crank 0.1 kg (bar 0.02 x 0.01 m section), rod 0.2 kg (cylinder r 0.008 m), calf
  0.5 kg bar (0.03 x 0.02 m section) and its lever 0.08 kg, foot 0.12 kg (a sphere r 0.03 m,
  written as its inertia). Total {0:g} kg (computed below the header). Actuated limits: hip
  +-{LIMITS["hip"]:g} rad, hip flexion +-{LIMITS["thigh"]:g} rad, knee motor +-{LIMITS["crank"]:g} rad about q = 0."""


def solid(mass, shape):
    """``shape`` (mass, centre, inertia) of a density-1 builder scaled to ``mass``."""
    m, c, inertia = shape
    return mass, c, inertia * (mass / m)


def sphere(mass, centre, radius):
    return mass, np.asarray(centre, float), 0.4 * mass * radius**2 * np.eye(3)


def legs():
    """Per leg: (name, f, s)."""
    return (("FL", 1, 1), ("FR", 1, -1), ("RL", -1, 1), ("RR", -1, -1))


def quadruped() -> Urdf:
    thigh_dir = np.array([-np.sin(ALPHA), 0.0, -np.cos(ALPHA)])
    forward = np.array([np.cos(ALPHA), 0.0, -np.sin(ALPHA)])  # perpendicular to the thigh, forward
    calf_dir = np.array([np.sin(ALPHA), 0.0, -np.cos(ALPHA)])
    u = Urdf(NAME, HEADER)
    u.at = {}
    u.lines = []
    origin = np.zeros(3)
    u.link(
        "trunk",
        origin,
        [
            solid(24.0, box(origin, X, (0.65, 0.30, 0.15), 1.0)),
            solid(2.0, box([0.04, 0.0, 0.05], X, (0.20, 0.15, 0.05), 1.0)),
        ],
    )
    for leg, f, s in legs():
        hip = np.array([f * HIP_X, s * HIP_Y, 0.0])
        top = hip + np.array([0.0, s * HIP_OFFSET, 0.0])  # the hip flexion axis in the leg's plane
        knee = top + THIGH * thigh_dir
        foot = knee + CALF * calf_dir
        shift = np.array([0.0, -s * LINKAGE_Y, 0.0])  # the linkage's plane
        pin = top + shift + CRANK * forward
        lever = knee + shift + LEVER * forward
        u.comment(f"leg {leg}")
        u.link(f"{leg}_hip", hip, [solid(1.6, tube(hip + np.array([0, s * 0.05, 0]), Y, 0.08, 0.05, 0.0, 1.0))])
        u.link(
            f"{leg}_thigh",
            top,
            [
                solid(1.2, box((top + knee) / 2, thigh_dir, (THIGH, 0.03, 0.05), 1.0, Y)),
                solid(1.6, tube(top - np.array([0, s * 0.03, 0]), Y, 0.06, 0.05, 0.0, 1.0)),
            ],
        )
        u.link(
            f"{leg}_calf",
            knee,
            [
                solid(0.5, box((knee + foot) / 2, calf_dir, (CALF, 0.02, 0.03), 1.0, Y)),
                solid(0.08, box((knee + lever) / 2, forward, (LEVER + 0.02, 0.015, 0.01), 1.0, Y)),
            ],
        )
        u.link(
            f"{leg}_crank",
            top + shift,
            [solid(0.1, box(top + shift + CRANK / 2 * forward, forward, (CRANK + 0.02, 0.01, 0.02), 1.0, Y))],
        )
        u.link(
            f"{leg}_rod",
            pin,
            [solid(0.2, tube((pin + lever) / 2, lever - pin, np.linalg.norm(lever - pin), 0.008, 0.0, 1.0))],
        )
        u.link(f"{leg}_foot", foot, [sphere(0.12, foot, 0.03)])
        u.joint(f"{leg}_hip_joint", "revolute", "trunk", f"{leg}_hip", [X], LIMITS["hip"], True)
        u.joint(f"{leg}_thigh_joint", "revolute", f"{leg}_hip", f"{leg}_thigh", [Y], LIMITS["thigh"], True)
        u.joint(f"{leg}_calf_joint", "revolute", f"{leg}_thigh", f"{leg}_calf", [Y], PASSIVE_LIMIT, False)
        u.joint(f"{leg}_foot_fixed", "fixed", f"{leg}_calf", f"{leg}_foot")
        u.joint(f"{leg}_crank_joint", "revolute", f"{leg}_thigh", f"{leg}_crank", [Y], LIMITS["crank"], True)
        u.joint(f"{leg}_rod_joint", "revolute", f"{leg}_crank", f"{leg}_rod", [Y], PASSIVE_LIMIT, False)
        u.loop(f"{leg}_rod_end", "revolute", f"{leg}_rod", f"{leg}_calf", lever, [Y])
    return u


def text() -> str:
    """The URDF+ text of the quadruped."""
    body = quadruped().text()
    total = sum(float(line.split('"')[1]) for line in body.splitlines() if "<mass value=" in line)
    body = body.replace("Total 0 kg", f"Total {total:.6g} kg")
    body = body.replace("made by tests/make_pkms.py", "made by tests/make_quadruped.py")
    body = body.replace("the density x shape of each link", "the mass x shape of each link")
    return body.replace('  <link name="base_link"/>\n', "")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(os.path.join(argv[0], f"{NAME}.urdf"), "w", encoding="utf-8") as handle:
        handle.write(text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
