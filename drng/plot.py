"""Pictures of a robot and of what DRNG finds on it (matplotlib: the extra ``plot``, ``pip install '.[plot]'``).

* :func:`plot_robot` - the robot at q0: bodies as segments between their joints, joint axes,
  loop joints, and the joints whose nullspace vectors come from each principle (the
  provenance of :class:`~drng.result.NullspaceResult`): shared points, fixed points,
  planar-rotation directions;
* :func:`plot_spectrum` - the singular values of the column-scaled sampled regressor (the Y of
  the certificate, same samples and seed), with the rank read at the largest gap and the
  fixed threshold (:func:`drng.numerical.rank_at_gap`);
* :func:`plot_identifiability` - each link-frame parameter of each body: identifiable alone,
  in combination, or not (:func:`drng.classify`);
* :func:`plot` - the three in one figure, saved to a file.

The figures are drawn for a page or a screen about 8 inches (800 px) wide: :data:`WIDTH`
inches with fonts of :data:`FONT` and :data:`TITLE` points, so that their text stays legible
where the page scales them down (the documentation's pictures are these figures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.conventions import LINK_PARAM_NAMES
from pga_dyn.display import save_figure

from .principles import PRINCIPLE_NAMES

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    import numpy.typing as npt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d import Axes3D

    from pga_dyn.model import Robot

    from .classification import Row
    from .result import NullspaceResult

__all__ = ["plot", "plot_robot", "plot_spectrum", "plot_identifiability"]

#: Marker, colour and label of each principle in :func:`plot_robot`.
PRINCIPLE_STYLE = {
    1: ("o", "tab:orange", f"{PRINCIPLE_NAMES[1]} (principle 1)"),
    2: ("s", "black", f"{PRINCIPLE_NAMES[2]} (principle 2)"),
    3: ("^", "tab:green", f"{PRINCIPLE_NAMES[3]} (principle 3)"),
    "generalized": ("D", "tab:purple", PRINCIPLE_NAMES["generalized"]),
}
CLASS_COLOURS = ("tab:green", "gold", "lightgray")
#: Width (inches) of the figure of :func:`plot`: a page's width, so that it is shown near its size.
WIDTH = 8.0
#: Font size (points) of the labels, ticks and legends.
FONT = 9
#: Font size (points) of the titles.
TITLE = 10.5
#: Resolution (dots per inch) of the files :func:`plot` saves.
DPI = 130


def _pyplot():
    from pga_dyn.errors import optional

    return optional("matplotlib.pyplot", "pictures", "plot")


def _joint_points(robot):
    """World position and world axes (k, 3) of each tree joint (by name) and loop joint at q0."""
    from pga_dyn.kinematics import initial_poses

    T = initial_poses(robot)
    points = {}
    for i in range(1, robot.n + 1):
        frame = T[i]  # the joint frame is the body frame at q0
        points[robot.joint_names[i]] = (frame[:3, 3], frame[:3, :3] @ np.asarray(robot.axes[i]).T)
    for lp in robot.loop_joints:
        frame = T[lp.parent] @ lp.parent_frame
        points[lp.name] = (frame[:3, 3], frame[:3, :3] @ np.asarray(lp.axes).T)
    return T, points


def plot_robot(robot: Robot, result: NullspaceResult | None = None, ax: Axes3D | None = None) -> Axes3D:
    """The robot at q0 on a 3D axes ``ax`` (a new figure when None); ``result`` (default
    :func:`drng.nullspace`) gives the principle markers. Returns the axes."""
    plt = _pyplot()
    if result is None:
        from .generator import nullspace

        result = nullspace(robot)
    if ax is None:
        ax = plt.figure(figsize=(WIDTH / 2, WIDTH / 2 + 1), layout="constrained").add_subplot(projection="3d")
    T, points = _joint_points(robot)
    origins = T[:, :3, 3]
    size = max(np.ptp(origins, axis=0).max(), 1e-3)
    for i in range(1, robot.n + 1):  # a body: from its joint to the joints of its children
        ends = [origins[i]] + [origins[c] for c in range(i + 1, robot.n + 1) if robot.parent[c] == i]
        ends += [points[lp.name][0] for lp in robot.loop_joints if i in (lp.parent, lp.child)]
        for end in ends[1:]:
            ax.plot(*np.transpose([origins[i], end]), color="tab:blue", lw=3, alpha=0.7, solid_capstyle="round")
        if robot.parent[i] == 0:
            ax.plot(*np.transpose([origins[0], origins[i]]), color="gray", lw=1, ls=":")
    actuated = {robot.coordinate_names[k].split(".")[0] for k in robot.actuated}
    for name, (point, axes) in points.items():
        for axis in axes.T:
            if np.linalg.norm(axis) < 1e-12:  # the unused axis slots of the kernel arrays
                continue
            tip = 0.12 * size * axis / np.linalg.norm(axis)
            ax.plot(*np.transpose([point - tip, point + tip]), color="dimgray", lw=1)
        loop = name in {lp.name for lp in robot.loop_joints}
        ax.scatter(
            *point,
            s=60,
            facecolors="none" if loop else ("red" if name in actuated else "white"),
            edgecolors="purple" if loop else "black",
            linewidths=1.5,
            zorder=5,
        )
    counts = {key: count for key, count in result.counts(("principle", "joint")).items() if key[1] in points}
    offsets = {1: (0.04, 0, 0), 2: (0, 0.04, 0), 3: (0, 0, 0.04), "generalized": (-0.04, 0, 0)}
    labelled = set()
    for (principle, joint), count in sorted(counts.items(), key=str):
        if principle not in PRINCIPLE_STYLE:
            continue
        marker, colour, label = PRINCIPLE_STYLE[principle]
        point = points[joint][0] + size * np.array(offsets[principle])
        ax.scatter(
            *point,
            marker=marker,
            s=40 + 8 * count,
            color=colour,
            zorder=6,
            label=None if principle in labelled else label,
        )
        labelled.add(principle)
    ax.scatter([], [], s=60, color="red", edgecolors="black", label="actuated joint")
    ax.scatter([], [], s=60, facecolors="none", edgecolors="purple", label="loop joint")
    lo, hi = origins.min(axis=0) - 0.15 * size, origins.max(axis=0) + 0.15 * size
    centre, half = (lo + hi) / 2, (hi - lo).max() / 2
    ax.set(
        xlim=(centre[0] - half, centre[0] + half),
        ylim=(centre[1] - half, centre[1] + half),
        zlim=(centre[2] - half, centre[2] + half),
        xlabel="x (m)",
        ylabel="y (m)",
        zlabel="z (m)",
    )
    ax.set_box_aspect((1, 1, 1))
    ax.tick_params(labelsize=FONT - 1, pad=0)
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.label.set_size(FONT)
        axis.labelpad = 0
    ax.set_title(f"{robot.name} at q0: nullspace vectors\nby joint and principle (marker size: count)", fontsize=TITLE)
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.04), ncol=2, fontsize=FONT - 1, framealpha=0.8, columnspacing=1
    )
    return ax


def spectrum(
    robot: Robot,
    samples: int | None = None,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
) -> tuple[np.ndarray, dict]:
    """(s, decision): the singular values of the column-scaled stacked regressor of ``samples``
    valid states (default: the certificate's, :func:`drng.certify.default_samples`) relative
    to the largest, and :func:`drng.numerical.rank_at_gap`'s decision on them."""
    from .certify import default_samples
    from .numerical import sampled_nullspace, stacked_regressor

    Y, _ = stacked_regressor(robot, default_samples(robot) if samples is None else samples, seed, bounds=bounds)
    _, decision, s, _ = sampled_nullspace(Y)
    s = np.concatenate([s, np.zeros(Y.shape[1] - len(s))])
    return s / s[0], decision


def plot_spectrum(
    robot: Robot,
    samples: int | None = None,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The singular-value spectrum of :func:`spectrum` on ``ax``, with the rank at the gap and
    the threshold. Returns the axes."""
    plt = _pyplot()
    if ax is None:
        ax = plt.figure(figsize=(WIDTH / 2, WIDTH / 2), layout="constrained").add_subplot()
    s, decision = spectrum(robot, samples, seed, bounds)
    floor = np.finfo(float).eps
    shown = np.maximum(s, floor)
    r = decision["rank"]
    index = np.arange(1, len(s) + 1)
    ax.semilogy(index[:r], shown[:r], "o", ms=4, color="tab:blue", label=f"kept: rank {r}")
    ax.semilogy(index[r:], shown[r:], "o", ms=4, color="tab:red", label=f"dropped: nullspace {len(s) - r}")
    ax.axhline(decision["threshold"], color="gray", ls="--", lw=1, label=f"threshold {decision['threshold']:.0e}")
    if 0 < r < len(s):
        ax.axvspan(
            r + 0.1,
            r + 0.9,
            color="gold",
            alpha=0.5,
            label=f"gap {decision['gap']:.1e} ({'clean' if decision['clean'] else 'NOT clean'})",
        )
    ax.set(ylim=(floor / 10, 10))
    ax.set_xlabel("index", fontsize=FONT)
    ax.set_ylabel("singular value / largest", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.set_title(f"singular values of the sampled\nregressor of {robot.name}", fontsize=TITLE)
    ax.legend(fontsize=FONT - 1, loc="best")
    return ax


def plot_identifiability(robot: Robot, rows: Sequence[Row] | None = None, ax: Axes | None = None) -> Axes:
    """Each link-frame parameter (columns) of each body (rows): identifiable alone, in
    combination, or not (``rows`` from :func:`drng.classify`, computed when None). Returns the
    axes."""
    plt = _pyplot()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    from .classification import ALONE, COMBINATION, UNIDENTIFIABLE, classify

    rows = classify(robot) if rows is None else rows
    if ax is None:
        ax = plt.figure(figsize=(WIDTH, 0.3 * robot.n + 1.6), layout="constrained").add_subplot()
    code = {ALONE: 0, COMBINATION: 1, UNIDENTIFIABLE: 2}
    grid = np.array([code[r.cls] for r in rows]).reshape(robot.n, len(LINK_PARAM_NAMES))
    ax.imshow(grid, cmap=ListedColormap(CLASS_COLOURS), vmin=0, vmax=2, aspect="auto")
    ax.xaxis.tick_top()  # the parameters head the columns, the legend is below
    ax.set_xticks(range(len(LINK_PARAM_NAMES)), LINK_PARAM_NAMES, fontsize=FONT)
    ax.set_yticks(range(robot.n), robot.body_names, fontsize=FONT)
    ax.set_xticks(np.arange(-0.5, len(LINK_PARAM_NAMES)), minor=True)
    ax.set_yticks(np.arange(-0.5, robot.n), minor=True)
    ax.grid(which="minor", color="white", lw=1)
    ax.tick_params(which="minor", length=0)
    ax.legend(
        handles=[
            Patch(color=c, label=f"{label} ({int(np.sum(grid == k))})")
            for k, (c, label) in enumerate(zip(CLASS_COLOURS, (ALONE, COMBINATION, UNIDENTIFIABLE)))
        ],
        fontsize=FONT,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.01),
        ncol=3,
    )
    ax.set_title("link-frame parameters by body", fontsize=TITLE)
    return ax


def plot(
    robot: Robot,
    path: os.PathLike | str | None = None,
    result: NullspaceResult | None = None,
    samples: int | None = None,
    seed: int | None = 0,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
) -> Figure:
    """The robot, the spectrum and the identifiability chart in one figure, saved to ``path``
    (any format matplotlib writes: png, pdf, svg; :data:`DPI`) when given. Returns the figure.

    The robot and the spectrum side by side above the chart, :data:`WIDTH` inches wide: legible
    on a page of that width (the chart's height grows with the number of bodies)."""
    plt = _pyplot()
    from .generator import nullspace

    result = nullspace(robot, bounds=bounds) if result is None else result
    chart = 0.3 * robot.n + 1.6
    fig = plt.figure(figsize=(WIDTH, WIDTH / 2 + 1.2 + chart), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=(WIDTH / 2 + 1.2, chart), width_ratios=(1.15, 1))
    fig.get_layout_engine().set(wspace=0.06)
    plot_robot(robot, result, fig.add_subplot(grid[0, 0], projection="3d"))
    plot_spectrum(robot, samples, seed, bounds, fig.add_subplot(grid[0, 1]))
    from .classification import classify

    plot_identifiability(robot, classify(robot, result), fig.add_subplot(grid[1, :]))
    fig.suptitle(
        f"{robot.name}: nullspace dimension {result.dim} of {10 * robot.n} ({result.status})", fontsize=TITLE + 1.5
    )
    if path is not None:
        save_figure(fig, path, DPI)
    return fig
