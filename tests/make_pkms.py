"""Generate the URDF+ files of the classic parallel machines in ``robots/data`` (docs/parallel_machines.md).

    python tests/make_pkms.py robots/data

A maintainer's tool beside the files it makes, not part of the installed package (like
``tests/make_go2.py``); ``tests/test_parallel_machines.py`` checks that the files are current.

Every number of the files comes from here: the joint centres and axes of each machine at q = 0
(stated in its header) and the inertials of uniform shapes of a stated material (density x
shape: :func:`box`, :func:`tube`), lumped per link (total mass, combined centre of mass, inertia
about it by the parallel-axis theorem). Every link frame is parallel to the world frame at
q = 0 and sits at the centre of the joint that carries it, so a joint's ``<origin xyz>`` is the
difference of two joint centres and every ``rpy`` is 0; an inertia tensor is written in that
frame, with the products of inertia of the shape's orientation.
"""

from __future__ import annotations

import os
import sys

import numpy as np

ALUMINIUM = 2700.0  # kg/m^3
STEEL = 7850.0  # kg/m^3
Z = np.array([0.0, 0.0, 1.0])


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def frame(axis, hint=Z):
    """Rotation (3, 3) whose first column is ``axis`` and second is orthogonal to it and to ``hint``."""
    u = unit(axis)
    v = np.cross(hint, u)
    if np.linalg.norm(v) < 1e-9:
        v = np.cross([1.0, 0.0, 0.0], u)
    v = unit(v)
    return np.column_stack([u, v, np.cross(u, v)])


def box(centre, axis, size, density, hint=Z):
    """A uniform box of ``size`` = (length along ``axis``, width, height): (mass, centre, inertia
    about the centre (3, 3), world-parallel axes). Principal moments m (b^2 + c^2) / 12, ..."""
    a, b, c = size
    m = density * a * b * c
    R = frame(axis, hint)
    return (
        m,
        np.asarray(centre, float),
        R @ np.diag([m * (b * b + c * c), m * (a * a + c * c), m * (a * a + b * b)]) / 12 @ R.T,
    )


def tube(centre, axis, length, r_out, r_in, density):
    """A uniform cylinder (r_in = 0) or tube along ``axis``: axial moment m (ro^2 + ri^2) / 2,
    transverse m (3 (ro^2 + ri^2) + L^2) / 12."""
    s = r_out**2 + r_in**2
    m = density * np.pi * (r_out**2 - r_in**2) * length
    R = frame(axis)
    return (
        m,
        np.asarray(centre, float),
        R @ np.diag([m * s / 2, m * (3 * s + length**2) / 12, m * (3 * s + length**2) / 12]) @ R.T,
    )


def lump(shapes):
    """(mass, centre of mass, inertia about it) of rigidly joined shapes."""
    mass = sum(m for m, _, _ in shapes)
    com = sum(m * c for m, c, _ in shapes) / mass
    inertia = sum(I + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, I in shapes)
    return mass, com, inertia


def fmt(values) -> str:
    """15 significant digits (the loops close to about 1e-15 m), rounding noise below 1e-14 to 0."""
    return " ".join(f"{(0.0 if abs(v) < 1e-14 else float(v)):.15g}" for v in np.atleast_1d(values))


class Urdf:
    """Links at joint centres, world-parallel at q = 0 (module docstring)."""

    def __init__(self, name, header):
        self.name, self.header, self.at, self.lines = name, header, {"base_link": np.zeros(3)}, []

    def link(self, name, point, shapes=()):
        """Link ``name`` whose frame sits at world ``point`` at q = 0, with the lumped ``shapes``."""
        self.at[name] = np.asarray(point, float)
        if not shapes:
            self.lines.append(f'  <link name="{name}"/>')
            return
        m, c, I = lump(shapes)
        self.lines += [
            f'  <link name="{name}">',
            "    <inertial>",
            f'      <origin xyz="{fmt(c - self.at[name])}" rpy="0 0 0"/>',
            f'      <mass value="{m:.9g}"/>',
            f'      <inertia ixx="{I[0, 0]:.9g}" ixy="{I[0, 1]:.9g}" ixz="{I[0, 2]:.9g}" '
            f'iyy="{I[1, 1]:.9g}" iyz="{I[1, 2]:.9g}" izz="{I[2, 2]:.9g}"/>',
            "    </inertial>",
            "  </link>",
        ]

    def joint(self, name, kind, parent, child, axes=(), limit=None, independent=None):
        attrs = f' independent="{"true" if independent else "false"}"' if independent is not None else ""
        self.lines += [
            f'  <joint name="{name}" type="{kind}"{attrs}>',
            f'    <parent link="{parent}"/>',
            f'    <child link="{child}"/>',
            f'    <origin xyz="{fmt(self.at[child] - self.at[parent])}" rpy="0 0 0"/>',
        ]
        self.lines += [f'    <{tag} xyz="{fmt(unit(a))}"/>' for tag, a in zip(("axis", "axis2"), axes)]
        if limit is not None:
            self.lines.append(f'    <limit lower="{-limit:g}" upper="{limit:g}" effort="1000" velocity="2"/>')
        self.lines.append("  </joint>")

    def loop(self, name, kind, predecessor, successor, point, axes=()):
        self.lines += [f'  <loop name="{name}" type="{kind}">']
        for tag, link in (("predecessor", predecessor), ("successor", successor)):
            self.lines.append(
                f'    <{tag} link="{link}"><origin xyz="{fmt(point - self.at[link])}" rpy="0 0 0"/></{tag}>'
            )
        self.lines += [f'    <{tag} xyz="{fmt(unit(a))}"/>' for tag, a in zip(("axis", "axis2"), axes)]
        self.lines.append("  </loop>")

    def comment(self, text):
        self.lines += ["", f"  <!-- {text} -->"]

    def text(self) -> str:
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n<!--\n' + self.header.rstrip() + "\n\n"
            "  GENERATED FILE - do not edit: made by tests/make_pkms.py (every number is computed there\n"
            "  from the joint centres above and the density x shape of each link).\n-->\n"
            f'<robot name="{self.name}">\n  <link name="base_link"/>\n' + "\n".join(self.lines) + "\n</robot>\n"
        )


def planar_elbow(a, c, l1, l2, side):
    """The elbow B with |B - a| = l1, |c - B| = l2, in the plane z = a_z, on ``side`` (+1: B to the
    left of a -> c, turning counterclockwise about z)."""
    d = np.linalg.norm(c - a)
    beta = np.arccos((l1 * l1 + d * d - l2 * l2) / (2 * l1 * d))
    u = unit(c - a)
    rot = np.array([[np.cos(beta), -side * np.sin(beta), 0], [side * np.sin(beta), np.cos(beta), 0], [0, 0, 1]])
    return a + l1 * rot @ u


def u_axes(d):
    """The axes of a base U joint carrying a leg along ``d``: the first horizontal and orthogonal
    to the leg, the second orthogonal to both (the U far from its gimbal lock; the leg cannot
    spin about its own line)."""
    a1 = unit(np.cross(Z, d))
    return a1, unit(np.cross(d, a1))


def circle(radius, degrees, z=0.0):
    t = np.radians(degrees)
    return np.array([radius * np.cos(t), radius * np.sin(t), z])


# -- the machines ------------------------------------------------------------------------------
FIVE_BAR = """\
  Planar five-bar (2-RR, "5R"), a URDF+ model written for pga-dyn (the project wrote this file).

  Machine type: the planar five-bar parallel robot, two actuated base revolute joints driving two
  proximal and two distal links joined at the tool point C (e.g. the DexTAR of Campos, Bourbonnais,
  Bonev and Bigras 2010; Liu and Wang, Design of Parallel Manipulators, 2014). All axes vertical
  (along z, the gravity direction): a horizontal machine like DexTAR.
  Geometry: the project's choice, of DexTAR's size (links of about 0.2 m). At q = 0:
    A1 (-0.10, 0, 0), A2 (0.10, 0, 0)  actuated base R joints (distance 0.20 m)
    proximal links 0.20 m, distal links 0.25 m, C (0, 0.32, 0); elbows B1, B2 outward.
  Inertials (density x shape, centred on the link's joint line): proximal links aluminium bars
  0.20 x 0.03 x 0.015 m; distal links aluminium bars 0.25 x 0.025 x 0.01 m; the tool, a steel
  cylinder r 0.015 m, 0.04 m high centred on C, is a link on a fixed joint of distal link 1.
  Spanning tree: proximal1 - distal1 (+ tool), proximal2 - distal2; the revolute loop joint C
  closes distal2 on distal1. Actuated limits: +-0.3 rad about q = 0.
"""


def five_bar() -> Urdf:
    u = Urdf("five_bar", FIVE_BAR)
    a = {1: np.array([-0.10, 0, 0]), 2: np.array([0.10, 0, 0])}
    c = np.array([0.0, 0.32, 0.0])
    for k, side in ((1, 1), (2, -1)):
        b = planar_elbow(a[k], c, 0.20, 0.25, side)
        u.comment(f"leg {k}")
        u.link(f"proximal{k}", a[k], [box((a[k] + b) / 2, b - a[k], (0.20, 0.03, 0.015), ALUMINIUM)])
        u.link(f"distal{k}", b, [box((b + c) / 2, c - b, (0.25, 0.025, 0.01), ALUMINIUM)])
        u.joint(f"A{k}", "revolute", "base_link", f"proximal{k}", [Z], 0.3, True)
        u.joint(f"B{k}", "revolute", f"proximal{k}", f"distal{k}", [Z], independent=False)
        if k == 1:
            u.link("tool", c, [tube(c, Z, 0.04, 0.015, 0.0, STEEL)])
            u.joint("tool_mount", "fixed", "distal1", "tool")
    u.comment("loop joint: the tool point C")
    u.loop("C", "revolute", "distal2", "distal1", c, [Z])
    return u


THREE_RRR = """\
  Planar 3-RRR parallel manipulator, a URDF+ model written for pga-dyn (the project wrote this file).

  Machine type: the symmetric planar 3-RRR (Gosselin and Angeles 1989; Bonev, Zlatanov and Gosselin
  2003): three R-R-R legs from an equilateral base to an equilateral platform, the three base
  joints actuated, all axes vertical (z, along gravity).
  Geometry: the project's choice. At q = 0, leg k (k = 1, 2, 3) at the angle phi_k = 90, 210,
  330 degrees about z:
    A_k = 0.30 (cos phi_k, sin phi_k, 0)  actuated base R joint
    C_k = 0.08 (cos phi_k, sin phi_k, 0)  platform R joint (platform centred at the origin)
    proximal A_k B_k 0.20 m, distal B_k C_k 0.20 m, elbow B_k counterclockwise of A_k C_k.
  Inertials (density x shape, centred on the link's joint line): proximal links aluminium bars
  0.20 x 0.03 x 0.015 m, distal links aluminium bars 0.20 x 0.025 x 0.01 m, the platform an
  aluminium disc r 0.10 m, 0.01 m thick, centred at the origin.
  Spanning tree: the platform hangs from leg 1 (R C1); the revolute loop joints C2, C3 close
  legs 2 and 3 on it. Actuated limits: +-0.3 rad about q = 0.
"""


def three_rrr() -> Urdf:
    u = Urdf("3rrr", THREE_RRR)
    centre = np.zeros(3)
    for k, phi in enumerate((90, 210, 330), start=1):
        a, c = circle(0.30, phi), circle(0.08, phi)
        b = planar_elbow(a, c, 0.20, 0.20, 1)
        u.comment(f"leg {k} at {phi} degrees")
        u.link(f"proximal{k}", a, [box((a + b) / 2, b - a, (0.20, 0.03, 0.015), ALUMINIUM)])
        u.link(f"distal{k}", b, [box((b + c) / 2, c - b, (0.20, 0.025, 0.01), ALUMINIUM)])
        u.joint(f"A{k}", "revolute", "base_link", f"proximal{k}", [Z], 0.3, True)
        u.joint(f"B{k}", "revolute", f"proximal{k}", f"distal{k}", [Z], independent=False)
        if k == 1:
            u.link("platform", c, [tube(centre, Z, 0.01, 0.10, 0.0, ALUMINIUM)])
            u.joint("C1", "revolute", "distal1", "platform", [Z], independent=False)
        else:
            u.loop(f"C{k}", "revolute", f"distal{k}", "platform", c, [Z])
    return u


THREE_PRS = """\
  3-PRS parallel head, a URDF+ model written for pga-dyn (the project wrote this file).

  Machine type: the 3-PRS with vertical actuated slides and revolute axes tangent to the base
  circle (Carretero, Podhorodeski, Nahon and Gosselin 2000; the layout of the Sprint Z3 head of
  DS Technologie): 3 DoF, translation along z and two tilts (with parasitic motions).
  Geometry: the project's choice, of a machining head's size. At q = 0, leg k at the angle
  phi_k = 90, 210, 330 degrees about z:
    slide k (P along z, actuated) and R joint at 0.30 (cos phi_k, sin phi_k, 0), R axis tangent
      (-sin phi_k, cos phi_k, 0)
    S joint at 0.12 (cos phi_k, sin phi_k, 0.40): rods 0.4386 m, inclined inward.
  Inertials (density x shape): carriages steel boxes 0.08 x 0.06 x 0.04 m centred 0.03 m radially
  outside the R axis; rods aluminium tubes r 0.015 / 0.012 m along R-S; the platform an aluminium
  disc r 0.16 m, 0.02 m thick centred at (0, 0, 0.40), carrying the spindle, a steel cylinder
  r 0.04 m, 0.20 m long centred at (0, 0, 0.30) (a link on a fixed joint).
  Spanning tree: the platform hangs from leg 1 through its S joint; the spherical loop joints S2,
  S3 close legs 2 and 3. Actuated limits: +-0.08 m on each slide.
"""


def three_prs() -> Urdf:
    u = Urdf("3prs", THREE_PRS)
    centre = np.array([0.0, 0.0, 0.40])
    for k, phi in enumerate((90, 210, 330), start=1):
        a, s = circle(0.30, phi), circle(0.12, phi, 0.40)
        radial, tangent = circle(1.0, phi), circle(1.0, phi + 90)
        u.comment(f"leg {k} at {phi} degrees")
        u.link(f"carriage{k}", a, [box(a + 0.03 * radial, radial, (0.08, 0.06, 0.04), STEEL)])
        u.link(f"rod{k}", a, [tube((a + s) / 2, s - a, np.linalg.norm(s - a), 0.015, 0.012, ALUMINIUM)])
        u.joint(f"P{k}", "prismatic", "base_link", f"carriage{k}", [Z], 0.08, True)
        u.joint(f"R{k}", "revolute", f"carriage{k}", f"rod{k}", [tangent], independent=False)
        if k == 1:
            u.link("platform", s, [tube(centre, Z, 0.02, 0.16, 0.0, ALUMINIUM)])
            u.joint("S1", "spherical", "rod1", "platform", independent=False)
            u.link("spindle", centre, [tube(centre - 0.10 * Z, Z, 0.20, 0.04, 0.0, STEEL)])
            u.joint("spindle_mount", "fixed", "platform", "spindle")
        else:
            u.loop(f"S{k}", "spherical", f"rod{k}", "platform", s)
    return u


def hexapod_points():
    """Base and platform joint centres of the 6-UPS, legs 1..6 (see SIX_UPS)."""
    base = [circle(0.50, t) for t in (-8, 8, 112, 128, 232, 248)]
    top = [circle(0.30, t, 0.55) for t in (-52, 52, 68, 172, 188, 292)]
    return base, top


SIX_UPS = """\
  Stewart-Gough hexapod in 6-UPS form, a URDF+ model written for pga-dyn (the project wrote this file).

  Machine type: the Gough-Stewart platform (Gough 1956; Stewart 1965), six legs from base U joints
  to platform S joints, each an actuated prismatic joint (cylinder and piston); the "6-6"
  semi-regular hexagon layout of Merlet, Parallel Robots (2006): joint centres in pairs on two
  circles, each base pair's legs going to two different platform pairs.
  Geometry: the project's choice, of a machine-tool hexapod's size. At q = 0:
    base U centres  B_k = 0.50 (cos t, sin t, 0),    t = -8, 8, 112, 128, 232, 248 degrees
    platform S centres P_k = 0.30 (cos t, sin t, 0.55), t = -52, 52, 68, 172, 188, 292 degrees
    (leg k from B_k to P_k, about 0.70 m). U axes: the first horizontal and orthogonal to the
    leg, the second orthogonal to the leg and the first (the cylinder cannot spin about its line).
  Inertials (density x shape, on the leg's line): cylinders steel tubes r 0.025 / 0.020 m, 0.35 m
  long from B_k; pistons steel rods r 0.012 m, 0.35 m long ending at P_k; the platform an
  aluminium disc r 0.35 m, 0.02 m thick centred at (0, 0, 0.55).
  Spanning tree: the platform hangs from leg 1 (U1, P1, S1); the spherical loop joints S2..S6
  close legs 2 to 6. Actuated limits: +-0.05 m on each leg.
"""


def six_ups() -> Urdf:
    u = Urdf("6ups", SIX_UPS)
    base, top = hexapod_points()
    for k, (b, p) in enumerate(zip(base, top), start=1):
        d = unit(p - b)
        u.comment(f"leg {k}")
        u.link(f"cylinder{k}", b, [tube(b + 0.175 * d, d, 0.35, 0.025, 0.020, STEEL)])
        u.link(f"piston{k}", p, [tube(p - 0.175 * d, d, 0.35, 0.012, 0.0, STEEL)])
        u.joint(f"U{k}", "universal", "base_link", f"cylinder{k}", u_axes(d), independent=False)
        u.joint(f"P{k}", "prismatic", f"cylinder{k}", f"piston{k}", [d], 0.05, True)
        if k == 1:
            u.link("platform", p, [tube([0, 0, 0.55], Z, 0.02, 0.35, 0.0, ALUMINIUM)])
            u.joint("S1", "spherical", "piston1", "platform", independent=False)
        else:
            u.loop(f"S{k}", "spherical", f"piston{k}", "platform", p)
    return u


TRICEPT = """\
  Tricept-like 3-UPS + 1-UP parallel machine, a URDF+ model written for pga-dyn (the project wrote
  this file).

  Machine type: the Tricept (Neumann 1988; Siciliano 1999): three actuated U-P-S legs and a
  passive central U-P leg whose piston is fixed to the platform, so that the platform keeps 3 DoF
  (two turns about the central U centre and the extension of the central leg). No wrist.
  Geometry: the project's choice, of a Tricept's size. At q = 0:
    central U centre O (0, 0, 0), axes x then y; platform centre (0, 0, 0.90) on the central leg
    leg k (k = 1, 2, 3) at phi_k = 90, 210, 330 degrees: base U at 0.50 (cos, sin, 0), platform S
      at (0, 0, 0.90) + 0.20 (cos, sin, 0) (legs about 0.98 m); U axes as in the 6-UPS.
  Inertials (density x shape): central tube a steel tube r 0.040 / 0.034 m, 0.80 m long from O;
  the platform body is the central piston (steel rod r 0.03 m, 0.80 m long ending at the platform
  centre), an aluminium disc r 0.20 m, 0.03 m thick at the platform centre and the spindle (a
  steel cylinder r 0.04 m, 0.20 m long hanging 0.10 m below it, a link on a fixed joint); leg
  cylinders steel tubes r 0.035 / 0.028 m, 0.50 m long from the base U; pistons steel rods r
  0.02 m, 0.50 m long ending at the S centre.
  Spanning tree: base - U0 - central tube - P0 (passive) - platform; leg k: base - U_k - cylinder
  - P_k (actuated) - piston, closed by the spherical loop joint S_k on the platform. Actuated
  limits: +-0.08 m on each leg.
"""


def tricept() -> Urdf:
    u = Urdf("3ups_1up", TRICEPT)
    centre = np.array([0.0, 0.0, 0.90])
    u.comment("central passive U-P leg")
    u.link("central_tube", np.zeros(3), [tube(0.40 * Z, Z, 0.80, 0.040, 0.034, STEEL)])
    u.link(
        "platform",
        centre,
        [tube(centre - 0.40 * Z, Z, 0.80, 0.03, 0.0, STEEL), tube(centre, Z, 0.03, 0.20, 0.0, ALUMINIUM)],
    )
    u.link("spindle", centre, [tube(centre - 0.20 * Z, Z, 0.20, 0.04, 0.0, STEEL)])
    u.joint("U0", "universal", "base_link", "central_tube", [[1, 0, 0], [0, 1, 0]], independent=False)
    u.joint("P0", "prismatic", "central_tube", "platform", [Z], independent=False)
    u.joint("spindle_mount", "fixed", "platform", "spindle")
    for k, phi in enumerate((90, 210, 330), start=1):
        b, p = circle(0.50, phi), centre + circle(0.20, phi)
        d = unit(p - b)
        u.comment(f"leg {k} at {phi} degrees")
        u.link(f"cylinder{k}", b, [tube(b + 0.25 * d, d, 0.50, 0.035, 0.028, STEEL)])
        u.link(f"piston{k}", p, [tube(p - 0.25 * d, d, 0.50, 0.02, 0.0, STEEL)])
        u.joint(f"U{k}", "universal", "base_link", f"cylinder{k}", u_axes(d), independent=False)
        u.joint(f"P{k}", "prismatic", f"cylinder{k}", f"piston{k}", [d], 0.08, True)
        u.loop(f"S{k}", "spherical", f"piston{k}", "platform", p)
    return u


DELTA = """\
  Delta robot (3-RR(SS)2, Clavel's Delta), a URDF+ model written for pga-dyn (the project wrote this
  file).

  Machine type: the Delta of Clavel (1988; ABB's FlexPicker, the IRB 360): three actuated base
  revolute joints turning cranks, each crank carrying a parallelogram forearm of two parallel rods
  with ball joints at both ends to the travelling platform, which translates (3 DoF). Each rod
  spins freely about the line of its two ball centres: pga-dyn locks that spin (docs/drng.md, free
  spins). Gravity along -z.
  Geometry: the project's choice, of a pick-and-place Delta's size. At q = 0, leg k at the angle
  phi_k = 90, 210, 330 degrees about z, radial e_k = (cos phi_k, sin phi_k, 0), tangent t_k:
    actuated R joint at 0.20 e_k, axis t_k; crank 0.25 m horizontal along e_k
    rods: ball centres at 0.45 e_k +- 0.08 t_k (crank) and (0, 0, -0.4723) + 0.08 e_k +- 0.08 t_k
      (platform): rods 0.60 m, parallel in pairs 0.16 m apart.
  Inertials (density x shape): cranks aluminium bars 0.25 x 0.03 x 0.02 m along e_k with an
  aluminium cross bar 0.16 x 0.02 x 0.02 m along t_k at the tip; rods aluminium tubes r 0.008 /
  0.006 m, 0.60 m long between their ball centres (their mass symmetric about their line); the
  platform an aluminium disc r 0.12 m, 0.012 m thick centred at (0, 0, -0.4723).
  Spanning tree: crank k carries rods ka, kb by spherical joints; the platform hangs from rod 1a
  by a spherical joint; the spherical loop joints close rods 1b, 2a, 2b, 3a, 3b on the platform.
  Actuated limits: +-0.4 rad about q = 0.
"""


def delta() -> Urdf:
    u = Urdf("delta", DELTA)
    h = np.sqrt(0.60**2 - (0.20 + 0.25 - 0.08) ** 2)
    centre = np.array([0.0, 0.0, -h])
    for k, phi in enumerate((90, 210, 330), start=1):
        e, t = circle(1.0, phi), circle(1.0, phi + 90)
        a, tip = 0.20 * e, 0.45 * e
        u.comment(f"leg {k} at {phi} degrees")
        u.link(
            f"crank{k}",
            a,
            [box((a + tip) / 2, e, (0.25, 0.03, 0.02), ALUMINIUM), box(tip, t, (0.16, 0.02, 0.02), ALUMINIUM)],
        )
        u.joint(f"A{k}", "revolute", "base_link", f"crank{k}", [t], 0.4, True)
        for side, sign in (("a", 1.0), ("b", -1.0)):
            near, far = tip + sign * 0.08 * t, centre + 0.08 * e + sign * 0.08 * t
            rod = f"rod{k}{side}"
            u.link(rod, near, [tube((near + far) / 2, far - near, 0.60, 0.008, 0.006, ALUMINIUM)])
            u.joint(f"S{k}{side}_crank", "spherical", f"crank{k}", rod, independent=False)
            if (k, side) == (1, "a"):
                u.link("platform", far, [tube(centre, Z, 0.012, 0.12, 0.0, ALUMINIUM)])
                u.joint("S1a_platform", "spherical", rod, "platform", independent=False)
            else:
                u.loop(f"S{k}{side}_platform", "spherical", rod, "platform", far)
    return u


SIX_SPS = """\
  Stewart-Gough hexapod in 6-SPS form, a URDF+ model written for pga-dyn (the project wrote this file).

  Machine type: the Gough-Stewart platform (Gough 1956; Stewart 1965) with ball joints at both
  ends of each leg (Merlet, Parallel Robots, 2006): six actuated prismatic legs between base and
  platform spherical joints. Each leg (cylinder and piston, which turn together) spins freely
  about its own line: pga-dyn locks that spin (docs/drng.md, free spins).
  Geometry: the 6-UPS's (same joint centres, see 6ups.urdf): at q = 0
    base S centres  B_k = 0.50 (cos t, sin t, 0),    t = -8, 8, 112, 128, 232, 248 degrees
    platform S centres P_k = 0.30 (cos t, sin t, 0.55), t = -52, 52, 68, 172, 188, 292 degrees.
  Inertials (density x shape, on the leg's line, so their mass is symmetric about it): cylinders
  steel tubes r 0.025 / 0.020 m, 0.35 m long from B_k; pistons steel rods r 0.012 m, 0.35 m long
  ending at P_k; the platform an aluminium disc r 0.35 m, 0.02 m thick centred at (0, 0, 0.55).
  Spanning tree: the platform hangs from leg 1 (S1 base, P1, S1 platform); the spherical loop
  joints close legs 2 to 6. Actuated limits: +-0.05 m on each leg.
"""


def six_sps() -> Urdf:
    u = Urdf("6sps", SIX_SPS)
    base, top = hexapod_points()
    for k, (b, p) in enumerate(zip(base, top), start=1):
        d = unit(p - b)
        u.comment(f"leg {k}")
        u.link(f"cylinder{k}", b, [tube(b + 0.175 * d, d, 0.35, 0.025, 0.020, STEEL)])
        u.link(f"piston{k}", p, [tube(p - 0.175 * d, d, 0.35, 0.012, 0.0, STEEL)])
        u.joint(f"S{k}_base", "spherical", "base_link", f"cylinder{k}", independent=False)
        u.joint(f"P{k}", "prismatic", f"cylinder{k}", f"piston{k}", [d], 0.05, True)
        if k == 1:
            u.link("platform", p, [tube([0, 0, 0.55], Z, 0.02, 0.35, 0.0, ALUMINIUM)])
            u.joint("S1_platform", "spherical", "piston1", "platform", independent=False)
        else:
            u.loop(f"S{k}_platform", "spherical", f"piston{k}", "platform", p)
    return u


PARALLELOGRAM = """\
  Flat parallelogram four-bar, a URDF+ model written for pga-dyn (the project wrote this file): the
  built-in machine whose reference configuration is singular (docs/parallel_machines.md, assembly
  branches: the branch option of pga-dyn analyze chooses one).

  Machine type: the planar parallelogram linkage (a crank and a rocker of equal length, a coupler
  as long as the frame), all axes vertical (along z, the gravity direction). At q = 0 it lies
  flat along x:
    O (0, 0, 0)     actuated crank R joint        A (0.3, 0, 0)   coupler R joint (crank - coupler)
    D (0.8, 0, 0)   rocker R joint (base - rocker) B (1.1, 0, 0)   loop joint (coupler - rocker)
  Opposite sides are equal, so two assembly branches meet at q = 0 (J_p is rank-deficient there):
  the parallelogram (the coupler translates, crank and rocker turn together) and the crossed
  linkage (antiparallelogram).
  Inertials (density x shape): the crank and the rocker aluminium bars 0.30 x 0.03 x 0.015 m, the
  coupler an aluminium bar 0.80 x 0.03 x 0.015 m, each centred on its link's line, and a steel
  block 0.04 x 0.03 x 0.02 m on each link off that line (crank at (0.2, 0.03, 0.01), coupler at
  (0.6, -0.03, 0.015), rocker at (0.95, 0.025, -0.01)): generic centres of mass.
  Spanning tree: crank - coupler, rocker; the revolute loop joint B closes the coupler on the
  rocker. Actuated limit: +-1 rad about q = 0.
"""


def parallelogram() -> Urdf:
    u = Urdf("parallelogram", PARALLELOGRAM)
    o, a, d, b = (np.array(p) for p in ([0.0, 0, 0], [0.3, 0, 0], [0.8, 0, 0], [1.1, 0, 0]))
    x = np.array([1.0, 0, 0])
    u.link(
        "crank",
        o,
        [box((o + a) / 2, x, (0.30, 0.03, 0.015), ALUMINIUM), box([0.2, 0.03, 0.01], x, (0.04, 0.03, 0.02), STEEL)],
    )
    u.link(
        "coupler",
        a,
        [box((a + b) / 2, x, (0.80, 0.03, 0.015), ALUMINIUM), box([0.6, -0.03, 0.015], x, (0.04, 0.03, 0.02), STEEL)],
    )
    u.link(
        "rocker",
        d,
        [box((d + b) / 2, x, (0.30, 0.03, 0.015), ALUMINIUM), box([0.95, 0.025, -0.01], x, (0.04, 0.03, 0.02), STEEL)],
    )
    u.joint("crank_joint", "revolute", "base_link", "crank", [Z], 1.0, True)
    u.joint("coupler_joint", "revolute", "crank", "coupler", [Z], independent=False)
    u.joint("rocker_joint", "revolute", "base_link", "rocker", [Z], independent=False)
    u.comment("loop joint: B, where the coupler meets the rocker")
    u.loop("B", "revolute", "coupler", "rocker", b, [Z])
    return u


MACHINES = {
    "five_bar": five_bar,
    "3rrr": three_rrr,
    "3prs": three_prs,
    "6ups": six_ups,
    "3ups_1up": tricept,
    "delta": delta,
    "6sps": six_sps,
    "parallelogram": parallelogram,
}


def texts() -> dict:
    """{file name: URDF text} of every machine."""
    return {f"{name}.urdf": make().text() for name, make in MACHINES.items()}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for filename, text in texts().items():
        with open(os.path.join(argv[0], filename), "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
