"""The models of the RPNA paper's examples (Wensing, Niemeyer, Slotine 2024), built as pga-dyn robots.

Kinematics of the RPNA paper's examples: Craig's modified DH (alpha_{i-1}, a_{i-1}, d_i),
every joint about z of its frame, and the joint frame placed in its parent by
X_tree = xlt([0,0,d]) * xlt([a,0,0]) * rotx(alpha), i.e. the pose Rx(alpha) Tx(a) Tz(d).
The inertial parameters are random but physically valid (positive mass, positive definite
rotational inertia obeying the triangle inequalities), drawn with a fixed seed: the
identifiability of a model does not depend on them, but generic values keep numerical
checks honest.
"""

from __future__ import annotations

import numpy as np

from pga_dyn.model import Inertial, JointSpec, LinkSpec, Robot

NO_GRAVITY = (0.0, 0.0, 0.0)

#: (alpha_{i-1}, a_{i-1}, d_i) of each model, and the joint types.
PUMA_DH = [
    (0.0, 0.0, 0.0),
    (-np.pi / 2, 0.0, 0.0),
    (0.0, 0.2, 0.4),
    (-np.pi / 2, 0.153, 0.839),
    (np.pi / 2, 0.0, 0.0),
    (-np.pi / 2, 0.0, 0.0),
]
SCARA_DH = [(0.0, 0.0, 0.0), (0.0, 0.1, 0.0), (0.0, 0.2, 0.0), (0.0, 0.0, 0.0)]
CHEETAH_LEG_DH = [(0.0, 0.0, 0.0), (np.pi / 2, 0.0, 0.044), (0.0, 0.342, 0.0)]


def dh_origin(alpha: float, a: float, d: float) -> np.ndarray:
    """The joint frame in its parent: Rx(alpha) Tx(a) Tz(d) (modified DH at q = 0)."""
    c, s = np.cos(alpha), np.sin(alpha)
    rx = np.array([[1.0, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])
    tx = np.eye(4)
    tx[0, 3] = a
    tz = np.eye(4)
    tz[2, 3] = d
    return rx @ tx @ tz


def random_inertial(rng: np.random.Generator) -> Inertial:
    """A physically valid random inertial: mass in [1, 5] kg, centre of mass within 0.2 m of the
    frame origin, rotational inertia of a random mass distribution (principal second moments
    s_k > 0, I = R diag(s2 + s3, s1 + s3, s1 + s2) R^T)."""
    mass = rng.uniform(1.0, 5.0)
    com = rng.uniform(-0.2, 0.2, 3)
    s = rng.uniform(0.005, 0.05, 3)
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    inertia = q @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ q.T
    return Inertial(mass, com, 0.5 * (inertia + inertia.T))


def dh_robot(name: str, dh, types, gravity, seed: int = 0, floating_torso: bool = False) -> Robot:
    """A serial robot from modified-DH rows, joints about z of their frames, random inertials.

    With ``floating_torso`` the base link (the DH frame 0) is a moving torso on a floating base,
    with its own random inertial; otherwise it is fixed."""
    rng = np.random.default_rng(seed)
    base = LinkSpec("torso" if floating_torso else "base", random_inertial(rng) if floating_torso else Inertial.zero())
    links, joints = [base], []
    parent = base.name
    for k, ((alpha, a, d), kind) in enumerate(zip(dh, types), start=1):
        link = LinkSpec(f"link{k}", random_inertial(rng))
        links.append(link)
        joints.append(
            JointSpec(f"joint{k}", kind, parent, link.name, dh_origin(alpha, a, d), np.array([[0.0, 0.0, 1.0]]))
        )
        parent = link.name
    return Robot(name, links, joints, gravity=gravity, floating_base=floating_torso)


def puma(gravity=(0.0, 0.0, -9.81), seed: int = 1) -> Robot:
    """The RPNA paper's PUMA 560 (its own DH rows), gravity along the joint-1 axis by default."""
    return dh_robot("rpna_puma", PUMA_DH, "RRRRRR", gravity, seed)


def scara(seed: int = 2) -> Robot:
    """The RPNA paper's SCARA (RRPR), gravity along -z (all joint axes)."""
    return dh_robot("rpna_scara", SCARA_DH, "RRPR", (0.0, 0.0, -9.81), seed)


def cheetah_leg(floating: bool = False, seed: int = 3, gravity=(9.81, 0.0, 0.0)) -> Robot:
    """A Cheetah 3 leg, gravity [9.81, 0, 0] by default: on a fixed torso, or on a floating torso
    (4 bodies: the torso then the three leg bodies)."""
    return dh_robot(
        "rpna_cheetah_leg" + ("_floating" if floating else ""),
        CHEETAH_LEG_DH,
        "RRR",
        gravity,
        seed,
        floating_torso=floating,
    )


def planar_2r(length: float = 0.5, seed: int = 4) -> Robot:
    """Two revolute joints with parallel axes a distance ``length`` apart, no gravity."""
    return dh_robot("rpna_2r_parallel", [(0.0, 0.0, 0.0), (0.0, length, 0.0)], "RR", NO_GRAVITY, seed)


def perpendicular_2r(length: float = 0.5, seed: int = 5) -> Robot:
    """Two revolute joints with perpendicular axes, the second offset by ``length`` along x1, no gravity."""
    return dh_robot("rpna_2r_perpendicular", [(0.0, 0.0, 0.0), (-np.pi / 2, length, 0.0)], "RR", NO_GRAVITY, seed)


def pendulum(gravity=(0.0, -9.81, 0.0), seed: int = 6) -> Robot:
    """One link about the fixed z axis (the base frame's), gravity (by default) perpendicular to it."""
    return dh_robot("pendulum", [(0.0, 0.0, 0.0)], "R", gravity, seed)
