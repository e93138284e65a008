"""Three closed-loop mechanisms written in three robot formats: URDF+, Extended URDF + YAML
(Gepetto's example-parallel-robots) and MJCF (MuJoCo). Each is planar (joint axes along z) and
closed by a ball joint: URDF+ ``<loop type="spherical">``, a YAML ``3D`` closure, an MJCF
``<equality><connect>``.

* ``five_bar``: ground joints at A = (0, 0, 0) and E = (0.4, 0, 0) (actuated), elbows at
  B = (-0.05, 0.25, 0) and D = (0.5, 0.25, 0), the ball at C = (0.25, 0.55, 0): 2 DoF;
* ``four_bar``: crank at A = (0, 0, 0) (actuated), coupler from B = (0.1, 0.25, 0) to the ball at
  C = (0.55, 0.4, 0), rocker from D = (0.6, 0, 0): 1 DoF;
* ``slider_crank``: crank at A = (0, 0, 0) (actuated), rod from B = (0.15, 0.1, 0) to the ball at
  C = (0.5, 0, 0) on a slider that moves from C along (cos 0.3, sin 0.3, 0) (its joint frame is
  turned by 0.3 rad about z): 1 DoF.

At q = 0 every loop is closed and far from singular. The files in tests/fixtures/formats/ are
written by ``PYTHONPATH=. python tests/format_fixtures.py``; tests/test_formats.py checks they are
current and that the three formats give the same robot.
"""

from __future__ import annotations

import math
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "formats")

#: (name, parent, child, origin xyz in the parent's frame, yaw of the joint frame, type, actuated)
#: per tree joint; link frames sit at their joint.
MECHANISMS = {
    "five_bar": dict(
        joints=[
            ("left_joint", "base", "left_proximal", (0, 0, 0), 0.0, "R", True),
            ("left_elbow", "left_proximal", "left_distal", (-0.05, 0.25, 0), 0.0, "R", False),
            ("right_joint", "base", "right_proximal", (0.4, 0, 0), 0.0, "R", True),
            ("right_elbow", "right_proximal", "right_distal", (0.1, 0.25, 0), 0.0, "R", False),
        ],
        loop=("tip", "left_distal", (0.3, 0.3, 0), "right_distal", (-0.25, 0.3, 0)),
    ),
    "four_bar": dict(
        joints=[
            ("crank_joint", "base", "crank", (0, 0, 0), 0.0, "R", True),
            ("coupler_joint", "crank", "coupler", (0.1, 0.25, 0), 0.0, "R", False),
            ("rocker_joint", "base", "rocker", (0.6, 0, 0), 0.0, "R", False),
        ],
        loop=("pin", "coupler", (0.45, 0.15, 0), "rocker", (-0.05, 0.4, 0)),
    ),
    "slider_crank": dict(
        joints=[
            ("crank_joint", "base", "crank", (0, 0, 0), 0.0, "R", True),
            ("rod_joint", "crank", "rod", (0.15, 0.1, 0), 0.0, "R", False),
            ("slider_joint", "base", "slider", (0.5, 0, 0), 0.3, "P", False),
        ],
        loop=("wrist", "rod", (0.35, -0.1, 0), "slider", (0, 0, 0)),
    ),
}

#: Inertials by link, in order: mass, centre of mass, (ixx, iyy, izz, ixy, ixz, iyz) about it.
INERTIALS = [
    (0.7, (-0.02, 0.12, 0.01), (0.0041, 0.0008, 0.0045, 0.0002, -0.0001, 0.0002)),
    (0.6, (0.14, 0.16, -0.01), (0.0011, 0.0093, 0.0098, -0.0002, 0.0001, 0.0001)),
    (0.75, (0.06, 0.13, -0.012), (0.0046, 0.0009, 0.0050, -0.0003, 0.0002, -0.0001)),
    (0.55, (-0.11, 0.14, 0.008), (0.0009, 0.0072, 0.0076, 0.0001, -0.0002, 0.0002)),
]
LIMIT = 0.5


def _inertial_urdf(k):
    m, c, (xx, yy, zz, xy, xz, yz) = INERTIALS[k]
    return (
        f'    <inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/><mass value="{m}"/>'
        f'<inertia ixx="{xx}" ixy="{xy}" ixz="{xz}" iyy="{yy}" iyz="{yz}" izz="{zz}"/></inertial>'
    )


def _links(spec):
    return [j[2] for j in spec["joints"]]


def _joint_urdf(joint, plus):
    name, parent, child, xyz, yaw, kind, actuated = joint
    independent = f' independent="{str(actuated).lower()}"' if plus else ""
    return (
        f'  <joint name="{name}" type="{"revolute" if kind == "R" else "prismatic"}"{independent}>'
        f'<parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="0 0 {yaw}"/>'
        f'<axis xyz="{"0 0 1" if kind == "R" else "1 0 0"}"/>'
        f'<limit lower="{-LIMIT}" upper="{LIMIT}" effort="10" velocity="10"/></joint>'
    )


def urdf(name, plus: bool) -> str:
    """URDF+ (``plus``) or the tree URDF of Extended URDF + YAML, whose closure frames are the
    links ``<loop>_A`` and ``<loop>_B`` on fixed joints."""
    spec = MECHANISMS[name]
    lines = [
        '<?xml version="1.0"?>',
        f"<!-- {name}: written by tests/format_fixtures.py -->",
        f'<robot name="{name}">',
        '  <link name="base"/>',
    ]
    for k, link in enumerate(_links(spec)):
        lines += [f'  <link name="{link}">', _inertial_urdf(k), "  </link>"]
    lines += [_joint_urdf(joint, plus) for joint in spec["joints"]]
    loop, a, pa, b, pb = spec["loop"]
    if plus:
        lines.append(
            f'  <loop name="{loop}" type="spherical">'
            f'<predecessor link="{a}"><origin xyz="{pa[0]} {pa[1]} {pa[2]}"/></predecessor>'
            f'<successor link="{b}"><origin xyz="{pb[0]} {pb[1]} {pb[2]}"/></successor></loop>'
        )
    else:
        for end, link, p in (("A", a, pa), ("B", b, pb)):
            lines += [
                f'  <link name="{loop}_{end}"/>',
                f'  <joint name="{loop}_{end}_frame" type="fixed"><parent link="{link}"/>'
                f'<child link="{loop}_{end}"/><origin xyz="{p[0]} {p[1]} {p[2]}"/></joint>',
            ]
    return "\n".join(lines + ["</robot>", ""])


def yaml(name) -> str:
    spec = MECHANISMS[name]
    loop = spec["loop"][0]
    motors = [j[0] for j in spec["joints"] if j[6]]
    return f"closed_loop: [['{loop}_A', '{loop}_B']]\ntype: ['3d']\nname_mot: [{', '.join(repr(m) for m in motors)}]\n"


def mjcf(name) -> str:
    spec = MECHANISMS[name]
    children = {}
    for k, joint in enumerate(spec["joints"]):
        children.setdefault(joint[1], []).append((k, joint))

    def body(k, joint, indent):
        jname, _, child, xyz, yaw, kind, _ = joint
        m, c, (xx, yy, zz, xy, xz, yz) = INERTIALS[k]
        pad = " " * indent
        quat = f' quat="{math.cos(yaw / 2)!r} 0 0 {math.sin(yaw / 2)!r}"' if yaw else ""
        out = [
            f'{pad}<body name="{child}" pos="{xyz[0]} {xyz[1]} {xyz[2]}"{quat}>',
            f'{pad}  <inertial pos="{c[0]} {c[1]} {c[2]}" mass="{m}" fullinertia="{xx} {yy} {zz} {xy} {xz} {yz}"/>',
            f'{pad}  <joint name="{jname}" type="{"hinge" if kind == "R" else "slide"}" '
            f'axis="{"0 0 1" if kind == "R" else "1 0 0"}" range="{-LIMIT} {LIMIT}"/>',
        ]
        for kk, jj in children.get(child, []):
            out += body(kk, jj, indent + 2)
        return out + [f"{pad}</body>"]

    lines = [
        f'<mujoco model="{name}">',
        f"  <!-- {name}: written by tests/format_fixtures.py -->",
        '  <compiler angle="radian"/>',
        "  <worldbody>",
        '    <body name="base">',
    ]
    for k, joint in children["base"]:
        lines += body(k, joint, 6)
    loop, a, pa, b, _ = spec["loop"]
    lines += [
        "    </body>",
        "  </worldbody>",
        "  <equality>",
        f'    <connect name="{loop}" body1="{a}" body2="{b}" anchor="{pa[0]} {pa[1]} {pa[2]}"/>',
        "  </equality>",
        "  <actuator>",
    ]
    lines += [f'    <motor joint="{j[0]}"/>' for j in spec["joints"] if j[6]]
    lines += ["  </actuator>", "</mujoco>", ""]
    return "\n".join(lines)


def files() -> dict:
    """File name in tests/fixtures/formats -> text."""
    out = {}
    for name in MECHANISMS:
        out[f"{name}_plus.urdf"] = urdf(name, True)
        out[f"{name}/robot.urdf"] = urdf(name, False)
        out[f"{name}/robot.yaml"] = yaml(name)
        out[f"{name}.xml"] = mjcf(name)
    return out


if __name__ == "__main__":
    for relative, text in files().items():
        path = os.path.join(HERE, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(path)
