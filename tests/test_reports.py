"""The CLI prints the library's reports: ``--json`` is the result object's ``report()`` and the
text its ``text()`` (analyze, base, info), so the Python API, the notebooks and the command
give the same figures from one place. The figures themselves are checked against oracles in
test_cli.py, test_base_parameters.py and test_drng.py; here, that the command adds nothing."""

import json
import os

import numpy as np
import pytest
from paths import FOUR_BAR

import drng
import pga_dyn
import pga_dyn.info
import robots
from drng.analysis import batch_report, batch_text
from drng.regrouping import BaseParameters
from pga_dyn.cli import main
from pga_dyn.display import number

WEAK_MIMIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "weak_mimic.urdf")
#: The fields of an analysis that are times, different on every run.
TIMES = ("seconds", "drng_seconds")


def cli(capsys, *argv):
    code = main([*argv, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def untimed(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in TIMES}


def untimed_text(text: str) -> list:
    return [line for line in text.splitlines() if not line.startswith("time:")]


@pytest.mark.parametrize(
    "argv, options",
    [
        (["puma560", "--certify", "--per-parameter"], {"certify": True, "per_parameter": True}),
        (["2rru_1rrs"], {}),
        (["2rru_1rrs", "--no-certify", "--per-parameter"], {"certify": False, "per_parameter": True}),
        ([WEAK_MIMIC, "--gravity", "3", "-4", "-8"], {"gravity": (3, -4, -8)}),
    ],
    ids=["tree-certified", "loops", "loops-unchecked", "not-certified"],
)
def test_analyze_prints_the_report_of_drng_analyze(capsys, argv, options):
    gravity = options.pop("gravity", None)
    robot = robots.load_file(argv[0], gravity=gravity) if gravity else robots.load(argv[0])
    analysis = drng.analyze(robot, **options)
    report = analysis.report()
    code, out, _ = cli(capsys, "analyze", *argv, "--json")
    assert code == (1 if report["certified"] is False else 0)
    assert untimed(json.loads(out)) == untimed(report)
    assert all(report[k] > 0 for k in TIMES)
    code, out, _ = cli(capsys, "analyze", *argv)
    assert untimed_text(out) == untimed_text(analysis.text())
    # the report carries the result's own figures, and the notebook shows the same text
    result = analysis.result
    assert report["nullspace_dimension"] == result.dim and report["base_parameters"] == 10 * robot.n - result.dim
    assert report["status"] == result.status
    assert sum(report["vectors_per_principle"].values()) == result.num_vectors
    assert untimed_text(analysis.text())[0] in analysis._repr_html_()
    if options.get("per_parameter"):
        assert report["per_parameter"] == drng.classify(robot, result).report()
        assert report["regrouped_into"] == drng.base_parameters(robot, result).regrouped_into()


def test_analyze_of_several_robots_prints_the_batch_report(capsys, tmp_path):
    targets = ["puma560", "2rru_1rrs", str(tmp_path / "missing.urdf")]
    code, out, _ = cli(capsys, "analyze", *targets, "--jobs", "1", "--json")
    rows = json.loads(out)
    load = lambda name: robots.load(name) if name in robots.available() else robots.load_file(name)  # noqa: E731
    results = drng.nullspaces(targets, load, jobs=1, errors="collect")
    assert code == 2 and rows == batch_report(targets, results)
    assert rows[0] == {
        "robot": "puma560",
        "name": "puma560",
        **drng.nullspace(robots.load("puma560")).summary(),
        "reason": None,
    }
    assert rows[2] == {"robot": targets[2], "error": f"{targets[2]}: cannot read the file: No such file or directory"}
    code, out, _ = cli(capsys, "analyze", *targets, "--jobs", "1")
    assert out.rstrip("\n") == batch_text(rows)


@pytest.mark.parametrize(
    "argv",
    [["puma560"], ["puma560", "--keep", "m6", "Izz2"], ["2rru_1rrs"], [WEAK_MIMIC, "--gravity", "3", "-4", "-8"]],
    ids=["tree", "keep", "loops", "not-certified"],
)
def test_base_prints_the_report_of_base_parameters(capsys, argv):
    keep = tuple(argv[argv.index("--keep") + 1 :]) if "--keep" in argv else ()
    robot = robots.load_file(argv[0], gravity=(3, -4, -8)) if argv[0] == WEAK_MIMIC else robots.load(argv[0])
    bp = drng.base_parameters(robot, keep=keep)
    code, out, _ = cli(capsys, "base", *argv, "--json")
    report = json.loads(out)
    assert code == (0 if bp.trusted else 1)
    assert report == bp.report()
    code, out, _ = cli(capsys, "base", *argv)
    assert out.rstrip("\n") == bp.text()
    # the values are beta = K phi of the model's own inertias, computed here from the model
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    assert np.array_equal(report["values"], bp.K @ phi)
    assert report["certified"] == drng.nullspace(robot).certified
    # the notebook's table shows the rows of the text
    html, frame_rows = bp._repr_html_(), bp._table()[1]
    assert all(f"<td>{number(value)}</td>" in html for _, _, value, _ in frame_rows)


def test_regrouped_into_follows_k():
    """A parameter is regrouped into the base parameters whose row of K has a nonzero entry in its
    column: read off K here (the Puma560's Iyy6 enters Ixx5R, Izz5R and Ixx6R)."""
    bp = drng.base_parameters(robots.load("puma560"))
    regrouped = bp.regrouped_into()
    leading = {int(k) for k in bp.leading}
    for c, name in enumerate(bp.parameter_names):
        rows = np.flatnonzero(bp.K[:, c])
        if c in leading or not rows.size:
            assert name not in regrouped
        else:
            assert regrouped[name] == [bp.names[j] for j in rows]
    assert regrouped["Iyy6"] == ["Ixx5R", "Izz5R", "Ixx6R"]


def test_base_parameters_without_the_model_say_so():
    bp = drng.base_parameters(robots.load("puma560"))
    bare = BaseParameters(bp.robot_name, bp.body_names, bp.K, bp.leading, bp.link_map)
    with pytest.raises(pga_dyn.PgaDynError, match="phi_model"):
        bare.report()
    assert "<td>-</td>" in bare._repr_html_()


@pytest.mark.parametrize("target", ["puma560", "go2", FOUR_BAR, "2rru_1rrs", WEAK_MIMIC])
def test_info_prints_the_report_of_pga_dyn_info(capsys, target):
    robot = robots.load(target) if target in robots.available() else robots.load_file(target)
    report = pga_dyn.info.report(robot)
    code, out, _ = cli(capsys, "info", target, "--json")
    assert code == 0 and json.loads(out) == report
    code, out, _ = cli(capsys, "info", target)
    assert out.rstrip("\n") == pga_dyn.info.text(robot)
    # the report's figures are the robot's
    assert len(report["bodies"]) == robot.n + 1 and len(report["tree_joints"]) == robot.n
    assert report["parameters"] == 10 * robot.n and len(report["coordinates"]) == robot.nq
    assert sum(b["mass"] for b in report["bodies"][1:]) == pytest.approx(
        sum(robot.inertial(i).mass for i in range(1, robot.n + 1)), rel=1e-15
    )
    assert ("closure" in report) == robot.constrained
    assert len(report["couplings"]) == len(robot.couplings)


def test_info_of_open_loops_names_them():
    """A four-bar (closed at q0) whose rocker joint is moved by 5 cm across its axis does not close
    there: the report names the loop joint and its residual, the 5 cm gap between the ends of the
    revolute loop joint's axis lines, instead of a conditioning."""
    from dataclasses import replace

    robot = robots.load_file(FOUR_BAR)
    description = robot.description
    joints = list(description.joints)
    k = next(i for i, j in enumerate(joints) if j.name == "rocker_joint")
    origin = joints[k].origin.copy()
    origin[0, 3] += 0.05  # the axes are z: a shift along x opens the loop by 5 cm
    joints[k] = replace(joints[k], origin=origin)
    moved = replace(description, joints=tuple(joints)).build()
    closure = pga_dyn.info.report(moved)["closure"]
    assert closure["cond_jp"] is None and [o["joint"] for o in closure["open"]] == ["coupler_rocker"]
    assert closure["open"][0]["residual"] == pytest.approx(0.05, rel=1e-12)
    assert pga_dyn.info.report(robot)["closure"]["open"] == []
    assert "the loops are open: 'coupler_rocker' (residual" in pga_dyn.info.text(moved)
