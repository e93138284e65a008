"""Geometric variants of a robot: the same machine with some joints moved, for design sweeps.

A :class:`~pga_dyn.model.Robot` is frozen; a variant is a new Robot built from its
:attr:`~pga_dyn.model.Robot.description` with records replaced (``dataclasses.replace``).
:func:`move_joints` does that for the common case of a sweep over link lengths: it moves joints
by displacements given in the world frame at q0, and keeps every other frame, every loop end
and every centre of mass where it is at q0. A loop that closes at q0 therefore still closes at
q0 (the DRNG kernel reads the robot at q0, paper Table 2); whether the variant assembles over
its actuated range and away from singularities is the certificate's to say
(:func:`drng.nullspace`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .errors import ModelError
from .kinematics import initial_poses
from .model import Robot, check_robot


def move_joints(robot: Robot, offsets: dict, name: str | None = None) -> Robot:
    """``robot`` with the joints named in ``offsets`` moved by a displacement each.

    Parameters
    ----------
    robot : Robot
    offsets : dict
        Joint name -> displacement d (3,) in the world frame at q0 (m). A tree joint (moving or
        fixed) moves its child link's frame by d: with W_L the world pose of link L at q0 and R_L
        its rotation, the joint's origin gains R_P^T (d_C - d_P) (P its parent link, C its child,
        d_L the displacement of link L's frame, zero when its joint is not moved); the joints, loop
        ends and centre of mass carried by C are re-expressed so that they stay where they were
        (they gain -R_C^T d_C). A loop joint moves both of its ends by d: each end's origin on
        link L gains R_L^T (d - d_L). The lengths of the links on either side of a moved joint
        change; nothing else does (orientations, axes, masses and inertias about the centres of
        mass are kept).
    name : str, optional
        The variant's name (default: ``robot.name`` and the joints moved); it names the variant
        in every message. Its ``source`` is None: a variant is not the file it came from.

    Returns
    -------
    Robot
        The variant, validated as any robot is (a ModelError says what is wrong).
    """
    check_robot(robot)
    spec = robot.description
    where = robot.source or robot.name
    joints = {joint.name: joint for joint in spec.joints}
    loops = {loop.name: loop for loop in spec.loops}
    moves = {}
    for joint, offset in dict(offsets).items():
        if joint not in joints and joint not in loops:
            raise ModelError(
                f"{where}: move_joints: no joint or loop joint named {joint!r} (joints: "
                f"{', '.join(list(joints) + list(loops))})"
            )
        d = np.asarray(offset, dtype=float)
        if d.shape != (3,) or not np.all(np.isfinite(d)):
            raise ModelError(f"{where}: move_joints: the offset of {joint!r} must be 3 finite numbers, got {offset!r}")
        moves[joint] = d
    T0 = initial_poses(robot)

    def rotation(link):
        return (T0[robot.body_index(link)] @ robot.link_pose(link))[:3, :3]

    shift = {joints[j].child: d for j, d in moves.items() if j in joints}  # d_L of the links moved
    zero = np.zeros(3)

    def translated(origin, link, d):
        """``origin`` (4, 4) on ``link`` re-expressed after the link moved by d_link and its target by d."""
        moved = np.array(origin, dtype=float)
        moved[:3, 3] += rotation(link).T @ (d - shift.get(link, zero))
        return moved

    new_joints = [
        dataclasses.replace(j, origin=translated(j.origin, j.parent, shift.get(j.child, zero))) for j in spec.joints
    ]
    new_loops = [
        dataclasses.replace(
            lp,
            predecessor_origin=translated(lp.predecessor_origin, lp.predecessor, d),
            successor_origin=translated(lp.successor_origin, lp.successor, d),
        )
        for lp in spec.loops
        for d in [moves.get(lp.name, zero)]
    ]
    new_links = [
        dataclasses.replace(
            link,
            inertial=dataclasses.replace(
                link.inertial, com=link.inertial.com - rotation(link.name).T @ shift[link.name]
            ),
        )
        if link.name in shift
        else link
        for link in spec.links
    ]
    label = name if name is not None else f"{robot.name} with {', '.join(moves)} moved"
    return dataclasses.replace(
        spec, name=label, links=tuple(new_links), joints=tuple(new_joints), loops=tuple(new_loops), source=None
    ).build()
