"""The pictures of drng.plot: what they draw is checked against independent figures (the
sampled rank of an SVD computed here, the classification counts, the nullspace provenance),
and the files they write are images."""

from __future__ import annotations

import os
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import drng  # noqa: E402
import robots  # noqa: E402
from drng import plot as pictures  # noqa: E402
from drng.numerical import stacked_regressor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["puma560", "2rru_1rrs"])
def test_spectrum_is_the_sampled_regressors(name):
    """The spectrum's rank at the gap is 10 n minus the nullspace dimension, and its values are
    the singular values of the column-scaled regressor of the same samples, computed here."""
    robot = robots.load(name)
    s, decision = pictures.spectrum(robot, samples=40, seed=3)
    Y, _ = stacked_regressor(robot, 40, 3)
    norms = np.linalg.norm(Y, axis=0)
    mine = np.linalg.svd(Y / np.where(norms > 0, norms, 1.0), compute_uv=False)
    assert np.allclose(s[: decision["rank"]], mine[: decision["rank"]] / mine[0], rtol=1e-8)
    assert decision["clean"] and decision["rank"] == 10 * robot.n - drng.nullspace(robot).dim


def test_panels_show_the_counts(tmp_path):
    robot = robots.load("2rru_1rrs")
    result = drng.nullspace(robot)
    fig = pictures.plot(robot, tmp_path / "pkm.png", result=result)
    with open(tmp_path / "pkm.png", "rb") as handle:
        assert handle.read(8) == PNG
    robot_ax, spectrum_ax, classes_ax = fig.axes[:3]
    legend = [t.get_text() for t in classes_ax.get_legend().get_texts()]
    counts = {}
    for row in drng.classify(robot, result):
        counts[row.cls] = counts.get(row.cls, 0) + 1
    assert legend == [
        f"{cls} ({counts.get(cls, 0)})"
        for cls in ("identifiable alone", "identifiable in combination", "unidentifiable")
    ]
    labels = [t.get_text() for t in spectrum_ax.get_legend().get_texts()]
    assert f"kept: rank {70 - result.dim}" in labels and f"dropped: nullspace {result.dim}" in labels
    principles = {entry["principle"] for entry in result.provenance}
    drawn = {t.get_text() for t in robot_ax.get_legend().get_texts()}
    assert {pictures.PRINCIPLE_STYLE[p][2] for p in principles if p in pictures.PRINCIPLE_STYLE} <= drawn
    assert "certified" in fig.texts[0].get_text() and f"{result.dim} of 70" in fig.texts[0].get_text()


def test_cli_plot_writes_the_picture(tmp_path):
    out = tmp_path / "puma.png"
    run = subprocess.run(
        [sys.executable, "-m", "pga_dyn.cli", "plot", "puma560", "-o", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT, MPLBACKEND="Agg"),
    )
    assert run.returncode == 0, run.stderr
    assert "nullspace dimension 24 of 60 (proven)" in run.stdout
    with open(out, "rb") as handle:
        assert handle.read(8) == PNG
