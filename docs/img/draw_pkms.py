"""Draw the built-in parallel kinematic machines at q = 0 (docs/img/2rru_1rrs.png, 2prs_1psr.png).

Run from the repository root: PYTHONPATH=. python docs/img/draw_pkms.py

Everything is read from the models (robots.load): bodies are drawn as segments between their
joints (the platform as a triangle), tree joints and loop joints are marked by type and
labelled, actuated joints are red, the axes of R, P and U joints are short segments, the slide
strokes of P joints are the actuated limits. The world frame and the gravity vector are shown.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import robots  # noqa: E402
from pga_dyn.kinematics import initial_poses  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MARKERS = {"R": "o", "P": "s", "U": "D", "S": "o"}
TITLES = {"2rru_1rrs": "2RRU-1RRS at q = 0 (DRNG section 6.3)", "2prs_1psr": "2PRS-1PSR at q = 0 (DRNG section 6.4)"}


def joints(robot):
    """(name, type, world point, world axes, actuated, loop?) of every tree and loop joint."""
    T = initial_poses(robot)
    actuated = set(robot.actuated_names)
    out = []
    for i in range(1, robot.n + 1):
        kind = robot.joint_type[i]
        axes = [T[i][:3, :3] @ a for a in robot.axes[i, : {"R": 1, "P": 1, "U": 2}.get(kind, 0)]]
        out.append((robot.joint_names[i], kind, T[i][:3, 3], axes, robot.joint_names[i] in actuated, False))
    for loop in robot.loop_specs:
        pred = T[robot.body_index(loop.predecessor)] @ robot.link_pose(loop.predecessor) @ loop.predecessor_origin
        succ = T[robot.body_index(loop.successor)] @ robot.link_pose(loop.successor) @ loop.successor_origin
        axes = [pred[:3, :3] @ loop.axes[0]] if len(loop.axes) else []
        if loop.type == "U":
            axes.append(succ[:3, :3] @ loop.axes[1])
        out.append((loop.name, loop.type, pred[:3, 3], axes, False, True))
    return out


def body_points(robot):
    """World points of each moving body: its joint, its children's joints, its loop-joint ends."""
    T = initial_poses(robot)
    points = {i: [T[i][:3, 3]] for i in range(1, robot.n + 1)}
    for i in range(1, robot.n + 1):
        if robot.parent[i] > 0:
            points[robot.parent[i]].append(T[i][:3, 3])
    for loop in robot.loop_specs:
        for link, origin in ((loop.predecessor, loop.predecessor_origin), (loop.successor, loop.successor_origin)):
            b = robot.body_index(link)
            if b > 0:
                points[b].append((T[b] @ robot.link_pose(link) @ origin)[:3, 3])
    return points


def draw(name, path):
    robot = robots.load(name)
    fig = plt.figure(figsize=(7.5, 6.5))
    ax = fig.add_subplot(projection="3d")
    for i, pts in body_points(robot).items():
        pts = np.array(pts)
        body = robot.body_names[i - 1]
        if len(pts) > 2:  # the platform: a closed polygon through its joints
            ring = np.vstack([pts, pts[:1]])
            ax.plot(*ring.T, color="tab:blue", lw=2.5)
            centre = pts.mean(axis=0)
            ax.text(*(centre + [0, 0, 0.03]), body, color="tab:blue", fontsize=10, ha="center")
        else:
            ax.plot(*pts.T, color="0.35" if "slider" in body else "tab:gray", lw=4 if "slider" in body else 3)
    T = initial_poses(robot)
    base = [T[i][:3, 3] for i in range(1, robot.n + 1) if robot.parent[i] == 0]
    for jname, kind, p, axes, act, loop in joints(robot):
        colour = "tab:red" if act else ("tab:purple" if loop else "k")
        ax.scatter(
            *p,
            marker=MARKERS[kind],
            s=60 if kind == "S" else 40,
            color=colour,
            facecolors="none" if loop else colour,
            depthshade=False,
            zorder=5,
        )
        for a in axes:
            ends = np.array([p - 0.05 * a, p + 0.05 * a])
            ax.plot(*ends.T, color=colour, lw=1.2)
        if kind == "P" and act:
            lo, hi = dict((j.name, j.limits) for j in robot.tree_joints)[jname]
            guide = np.array([p + lo * axes[0], p + hi * axes[0]])
            ax.plot(*guide.T, color="tab:red", lw=6, alpha=0.25)
        label = f"{jname} ({kind}{', actuated' if act else ''}{', loop' if loop else ''})"
        ax.text(*(p + [0.015, 0.015, -0.035 if act else 0.015]), label, fontsize=8.5, color=colour)
    if base:  # the fixed base: a plate through the base joints
        ring = np.array(base + base[:1])
        ax.plot(*ring.T, color="0.6", lw=1, ls="--")
    for k, c in enumerate(("tab:red", "tab:green", "tab:blue")):  # world frame
        e = np.eye(3)[k] * 0.12
        ax.quiver(0, 0, 0, *e, color=c, arrow_length_ratio=0.2, lw=1.5)
        ax.text(*(1.15 * e), "xyz"[k], color=c, fontsize=10)
    g = robot.gravity / np.linalg.norm(robot.gravity) * 0.15
    start = np.array([-0.55, 0.45, 0.6])
    ax.quiver(*start, *g, color="tab:orange", arrow_length_ratio=0.25, lw=2)
    ax.text(
        *(start + [0.03, 0, -0.1]), f"g = {tuple(float(v) for v in robot.gravity)}", color="tab:orange", fontsize=9.5
    )
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    ax.set_xlim(-0.6, 0.4)
    ax.set_ylim(-0.5, 0.5)
    ax.set_zlim(-0.05, 0.6)
    ax.set_box_aspect((1.0, 1.0, 0.65))
    ax.view_init(elev=22, azim=-58)
    ax.set_title(TITLES[name] + "\nred: actuated, hollow purple: loop joints; o R/S, s P, D U", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    for name in TITLES:
        out = os.path.join(HERE, f"{name}.png")
        draw(name, out)
        print("wrote", out)
