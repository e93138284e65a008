"""The pga-dyn command line."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from pga_dyn.cli import build_parser, main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from paths import FOUR_BAR  # noqa: E402


def run_main(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_module(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "pga_dyn.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def field(out, name):
    match = re.search(rf"^{name}:\s+(\d+)", out, flags=re.M)
    assert match, (name, out)
    return int(match.group(1))


def test_info_puma560(capsys):
    code, out, err = run_main(["info", "puma560"], capsys)
    assert code == 0 and err == ""
    assert field(out, "bodies") == 6
    assert field(out, "parameters") == 60
    assert "base:        fixed" in out
    for i in range(1, 7):
        assert re.search(rf"^\s+{i}\s+joint{i}\s+R\s+{i - 1} ", out, flags=re.M), out
    assert re.search(r"^\s+2\s+link2\s+17\.4\s+link2$", out, flags=re.M), out
    assert "(0, 0, -9.81)" in out


def test_info_go2_floating_and_fixed(capsys):
    code, out, _ = run_main(["info", "go2"], capsys)
    assert code == 0
    assert "floating" in out and field(out, "bodies") == 13 and field(out, "parameters") == 130
    assert "18 tree coordinates" in out and "q[0:6]" in out
    assert re.search(r"^\s+4\s+FL_calf\s+\S+\s+FL_calf FL_foot$", out, flags=re.M), out
    code, out, _ = run_main(["info", "go2", "--fixed", "--gravity", "0", "-9.81", "0"], capsys)
    assert code == 0 and field(out, "bodies") == 12 and "(0, -9.81, 0)" in out


def test_info_urdf_path_floating(capsys):
    import robots

    code, out, _ = run_main(["info", robots.data_path("puma560"), "--floating"], capsys)
    assert code == 0 and field(out, "bodies") == 7 and field(out, "parameters") == 70
    assert "base_link_floating" in out


def test_info_four_bar_lists_loop(capsys):
    code, out, _ = run_main(["info", FOUR_BAR], capsys)
    assert code == 0
    assert field(out, "loop joints") == 1 and field(out, "bodies") == 3 and field(out, "parameters") == 30
    loops = out.split("Loop joints", 1)[1]
    assert re.search(r"coupler_rocker\s+R\s+2 coupler\s+3 rocker", loops), out
    assert "actuated coordinates: crank_joint" in out and "passive coordinates:  coupler_joint rocker_joint" in out
    # URDF+ independent flags of the tree joints.
    assert re.search(r"crank_joint\s+R\s.*\byes$", out, flags=re.M)
    assert re.search(r"coupler_joint\s+R\s.*\bno$", out, flags=re.M)
    # q = 0 of the fixture four-bar is closed and regular: cond(J_p) as Pinocchio's constraint
    # Jacobian gives it (tests/fixture_oracle.py)
    import pinocchio  # noqa: F401  (the oracle, in the test extra)
    from fixture_oracle import TreeOracle, constraint_jacobian

    import robots

    robot = robots.load_urdf(FOUR_BAR)
    oracle = TreeOracle(robot)
    s = np.linalg.svd(
        constraint_jacobian(oracle, oracle.configuration(robot.q0))[:, list(robot.passive)], compute_uv=False
    )
    match = re.search(r"the loops close; cond\(J_p\) = (\S+)$", out, flags=re.M)
    assert match, out
    assert float(match.group(1)) == pytest.approx(s[0] / s[-1], rel=1e-4)


def test_errors_in_process(capsys, tmp_path):
    code, out, err = run_main(["info", "no_such_robot"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("pga-dyn: error: ") and "puma560" in err and err.count("\n") == 1
    bad = tmp_path / "bad.urdf"
    bad.write_text(
        "<robot name='x'><link name='a'/><joint name='j' type='hinge'>"
        "<parent link='a'/><child link='b'/></joint></robot>"
    )
    code, _, err = run_main(["info", str(bad)], capsys)
    assert code == 2 and "bad.urdf" in err and "'hinge'" in err and err.count("\n") == 1
    code, _, err = run_main(["info", "puma560", "--gravity", "0", "nan", "0"], capsys)
    assert code == 2 and "gravity" in err


@pytest.mark.parametrize("content", [None, "<robot name='x'><link name='a'></robot>"], ids=["missing", "malformed"])
def test_bad_file_subprocess(tmp_path, content):
    path = tmp_path / "robot.urdf"
    if content is not None:
        path.write_text(content)
    result = run_module("info", str(path))
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pga-dyn: error: ") and "robot.urdf" in lines[0]
    assert "Traceback" not in result.stderr


def test_usage_errors():
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["info", "puma560", "--gravity", "1", "2"])
    assert exc.value.code == 2


def test_parser_has_subcommands():
    parser = build_parser()
    args = parser.parse_args(["info", "go2", "--floating"])
    assert args.command == "info" and args.floating and callable(args.func)


def test_analyze_puma560_json(capsys):
    """The DRNG paper's Table 3: 24 unidentifiable directions of the Puma560 with gravity along joint 1."""
    import json

    code, out, _ = run_main(["analyze", "puma560", "--certify", "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["nullspace_dimension"] == 24 and report["base_parameters"] == 36
    assert report["certified"] is True and report["certificate"]["rank_numerical"] == 36
    assert report["vectors_per_principle"] == {"1": 18, "2": 4, "3": 2}
    assert report["vectors_per_joint"]["joint1"] == {"1": 3, "2": 4, "3": 2}


def test_analyze_certify_adds_the_check_to_a_proven_answer(capsys):
    """Puma560 without gravity: the paper's principles give 24, the generalized rules 26 (the RPNA
    paper's figure); --certify checks it against the sampled regressor (34 of 60)."""
    code, out, _ = run_main(["analyze", "puma560", "--gravity", "0", "0", "0", "--certify"], capsys)
    assert code == 0
    assert re.search(r"nullspace dimension:\s+26", out)
    assert "status:               proven and certified" in out
    assert "certified: nullspace rank 26 + sampled regressor rank 34 = 60 of 60" in out
    assert "miss directions" not in out
    assert re.search(r"joint2\s+3\s+0\s+0\s+2", out)  # 3 shared points, 2 by a generalized rule
    assert "vectors per principle: shared points 18, fixed points 4, planar rotations 2, generalized rules 2" in out


def test_analyze_bad_input_exits_2(capsys):
    code, _, err = run_main(["analyze", "no_such_robot"], capsys)
    assert code == 2 and err.startswith("pga-dyn: error:") and "Traceback" not in err


def test_analyze_per_parameter(capsys):
    """Link 1 of the Puma560 turns about the fixed joint-1 axis: only its inertia about that axis
    (Izz in its frame, whose z is the axis) acts, and only together with other parameters."""
    import json

    code, out, _ = run_main(["analyze", "puma560", "--per-parameter", "--json"], capsys)
    rows = json.loads(out)["per_parameter"]
    link1 = {row["parameter"]: row["class"] for row in rows if row["body"] == "link1"}
    assert code == 0 and len(rows) == 60
    assert link1.pop("Izz") == "identifiable in combination"
    assert set(link1.values()) == {"unidentifiable"}
    code, out, _ = run_main(["analyze", "puma560", "--per-parameter"], capsys)
    assert re.search(r"Izz\s+o\s", out) and "x unidentifiable" in out


def test_info_parallel_machine_shows_loops_and_conditioning(capsys):
    """cond(J_p) at q0 as printed equals the figure of the independent check in
    tests/test_pkm_models.py (its own residual and finite differences): 6.27."""
    code, out, _ = run_main(["info", "2rru_1rrs"], capsys)
    assert code == 0
    assert re.search(r"limb2_U\s+U\s+3 platform\s+5 limb2_link2", out)  # parent < child: ends swapped
    assert re.search(r"limb3_S\s+S\s+3 platform\s+7 limb3_link2", out)
    assert "actuated coordinates: limb1_R1 limb2_R1 limb3_R1" in out
    cond = float(re.search(r"cond\(J_p\) = ([0-9.]+)", out).group(1))
    assert abs(cond - 6.27) < 0.01


def test_analyze_proves_a_tree_and_certifies_a_loop_by_default(capsys):
    """No flag: a tree's answer is proven without sampling (Puma560 without gravity: 26, the
    RPNA paper's figure); a closed loop's is certified against the sampled regressor."""
    code, out, err = run_main(["analyze", "puma560", "--gravity", "0", "0", "0"], capsys)
    assert code == 0, err
    assert field(out, "nullspace dimension") == 26
    assert "status:               proven: the generalized principles are complete on a tree" in out
    assert "certificate:" not in out and "with the certificate" not in out
    code, out, err = run_main(["analyze", "puma560", "--gravity", "0", "0", "0", "--json"], capsys)
    report = json.loads(out)
    assert report["status"] == "proven" and report["proven"] and report["certified"] is None
    assert "certificate" not in report
    code, out, err = run_main(["analyze", "2rru_1rrs"], capsys)
    assert code == 0, err
    assert field(out, "nullspace dimension") == 45
    assert "certificate:          certified" in out and "status:" not in out


def test_no_certify_is_labelled_loudly(capsys):
    code, out, _ = run_main(["analyze", "2rru_1rrs", "--no-certify", "--per-parameter"], capsys)
    assert code == 0
    assert field(out, "nullspace dimension") == 45
    assert "NOT CERTIFIED (--no-certify)" in out and "this table can be wrong" in out
    assert "with the certificate" not in out
    code, out, _ = run_main(["analyze", "2rru_1rrs", "--no-certify", "--json"], capsys)
    report = json.loads(out)
    assert report["certified"] is None and report["status"] == "not certified" and not report["proven"]
    code, out, _ = run_main(["analyze", "puma560", "--no-certify", "--per-parameter"], capsys)  # a tree: proven
    assert "NOT CERTIFIED" not in out and "can be wrong" not in out and "status:               proven" in out


def test_bounds_option(capsys):
    code, out, err = run_main(["analyze", "puma560", "--bounds", "joint2", "-0.5", "0.5", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["certified"] is True
    code, _, err = run_main(["analyze", "puma560", "--bounds", "nojoint", "-0.5", "0.5"], capsys)
    assert code == 2 and "'nojoint' is not an actuated coordinate" in err and "Traceback" not in err
    code, _, err = run_main(["analyze", "puma560", "--bounds", "joint2", "a", "0.5"], capsys)
    assert code == 2 and "must be numbers" in err


def test_analyze_budget(capsys):
    """--budget bounds the certificate's time: too small a budget is a clear error (exit 2, no
    traceback) saying what ran out; a non-positive budget is refused naming the option."""
    assert main(["analyze", str(FOUR_BAR), "--budget", "1e-4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pga-dyn: error:") and "Traceback" not in err
    assert re.search(r"(sampling stopped after|out of its time budget)", err)
    assert main(["analyze", str(FOUR_BAR), "--budget", "0"]) == 2
    assert "--budget must be a positive number of seconds" in capsys.readouterr().err
    assert main(["analyze", str(FOUR_BAR), "--budget", "60"]) == 0


def test_outputs_never_overwrite_inputs_and_unwritable_outputs_are_clear(tmp_path, capsys):
    """-o/--csv naming the input file is refused; a folder that does not exist and a format
    matplotlib cannot write are errors naming the file, with no traceback (exit 2)."""
    robot_file = tmp_path / "four_bar.urdf"
    robot_file.write_text(open(FOUR_BAR).read())
    before = robot_file.read_text()
    assert main(["base", str(robot_file), "--csv", str(robot_file)]) == 2
    assert "this is an input file" in capsys.readouterr().err and robot_file.read_text() == before
    missing = str(tmp_path / "no_such_folder" / "base.csv")
    assert main(["base", "puma560", "--csv", missing]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pga-dyn: error:") and "no_such_folder" in err and "Traceback" not in err
    assert main(["plot", "puma560", "-o", str(tmp_path / "puma.foo")]) == 2
    err = capsys.readouterr().err
    assert "puma.foo" in err and "not supported" in err and "Traceback" not in err


def test_an_answer_that_cannot_be_certified_exits_1_with_the_reason(capsys):
    """A model whose sampled regressor has no clean singular gap (tests/fixtures/weak_mimic.urdf):
    the table says NOT certified, stderr gives the reason, exit status 1 (it raised a KeyError)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "weak_mimic.urdf")
    assert main(["analyze", path, "--gravity", "3", "-4", "-8", "--quiet"]) == 1
    captured = capsys.readouterr()
    assert "NOT certified" in captured.out
    assert "pga-dyn: the answer could not be certified: the sampled regressor has no clean singular gap" in captured.err
    assert main(["analyze", path, "--gravity", "3", "-4", "-8", "--quiet", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["certified"] is False and report["certificate"]["reason"].startswith("the sampled regressor")


def test_analyze_several_robots_one_line_each(capsys, tmp_path):
    """`pga-dyn analyze A B C`: one line per robot with the DRNG paper's Table 3 dimensions (Puma560
    24, 2RRU-1RRS 45, 2PRS-1PSR 47), in the order given; a file that cannot be read is a line of
    its own, the others still answered, exit status 2 with the reason naming the file."""
    missing = str(tmp_path / "missing.urdf")
    assert main(["analyze", "2prs_1psr", "puma560", missing, "2rru_1rrs", "--jobs", "2", "--quiet"]) == 2
    captured = capsys.readouterr()
    lines = [line.split() for line in captured.out.splitlines()[2:]]
    assert [line[:4] for line in lines if "refused:" not in line] == [
        ["2prs_1psr", "70", "47", "23"],
        ["puma560", "60", "24", "36"],
        ["2rru_1rrs", "70", "45", "25"],
    ]
    assert lines[2][0] == missing and "refused:" in lines[2]
    assert (
        captured.err.strip().splitlines()[-1] == f"pga-dyn: error: {missing}: cannot read the file: No such file or "
        "directory"
    )
    assert main(["analyze", "puma560", "2rru_1rrs", "--json", "--jobs", "1", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["robot"], r["nullspace_dimension"], r["status"]) for r in rows] == [
        ("puma560", 24, "proven"),
        ("2rru_1rrs", 45, "certified"),
    ]


def test_analyze_several_robots_bad_arguments(capsys):
    assert main(["analyze", "puma560", "go2", "--per-parameter", "--quiet"]) == 2
    assert "--per-parameter takes one robot" in capsys.readouterr().err
    assert main(["analyze", "puma560", "--jobs", "0", "--quiet"]) == 2
    assert "--jobs must be a positive number" in capsys.readouterr().err


def test_an_output_file_that_exists_is_refused_without_force(tmp_path, capsys):
    """Every output option (-o, --csv, --coefficients, the file of --controller-rate, --plot) refuses
    a file that exists, naming it and --force, before any work (no other output is written) and
    leaves it as it was; --force overwrites it; an input file is refused even with --force."""
    import robots
    from identification import random_excitation

    traj, data = tmp_path / "traj.csv", tmp_path / "data.csv"
    random_excitation(robots.load("puma560"), duration=1, rate=50, period=1, seed=0).trajectory.write(traj)
    assert main(["simulate", "puma560", str(traj), "-o", str(data), "--viscous", "0.5"]) == 0
    capsys.readouterr()
    taken, fresh = tmp_path / "taken.json", tmp_path / "fresh.csv"
    taken.write_text("mine")
    excite = ["excite", "puma560", "--duration", "1", "--rate", "50", "--period", "1", "--iterations", "1"]
    refused = [
        ["plot", "puma560", "-o", taken],
        ["base", "puma560", "--csv", taken],
        [*excite, "-o", taken],
        [*excite, "-o", fresh, "--coefficients", taken],
        ["simulate", "puma560", traj, "-o", taken],
        ["identify", "puma560", data, "--consistent", "-o", taken],
        ["identify", "puma560", data, "--plot", taken],
    ]
    for argv in refused:
        assert main([str(a) for a in argv]) == 2, argv
        err = capsys.readouterr().err
        assert err == f"pga-dyn: error: {taken}: the file exists; give --force to overwrite it\n", (argv, err)
        assert taken.read_text() == "mine" and not fresh.exists(), argv
    controller = tmp_path / "fresh_25Hz.csv"
    controller.write_text("mine")
    assert main([*excite, "-o", str(fresh), "--controller-rate", "25"]) == 2
    assert f"{controller}: the file exists; give --force" in capsys.readouterr().err and not fresh.exists()

    assert main(["base", "puma560", "--csv", str(taken), "--force"]) == 0
    assert taken.read_text().startswith("name,leading,body,value,expression")
    assert main([*excite, "-o", str(fresh), "--controller-rate", "25", "--coefficients", str(taken), "--force"]) == 0
    assert json.loads(taken.read_text()) and len(controller.read_text().splitlines()) == 1 + 25
    assert main(["simulate", "puma560", str(traj), "-o", str(data), "--viscous", "0.5", "--force"]) == 0
    assert main(["simulate", "puma560", str(traj), "-o", str(traj), "--force"]) == 2
    assert "this is an input file" in capsys.readouterr().err


def test_a_built_in_model_warns_in_one_short_line_a_users_file_in_full(tmp_path, capsys):
    """The built-in puma560 is not physically consistent as published (its header: link 1 has
    mass 0 and an inertia; link 3's principal moments 0.0125 + 0.066 < 0.086): simulate and
    identify say so once, in at most two 80-column lines naming the bodies and the publication.
    A user's copy of the same file is warned about in full, every violation and the file named;
    a consistent built-in (five_bar) is not warned about."""
    import robots
    from identification import random_excitation

    header = open(robots.data_path("puma560"), encoding="utf-8").read().split("-->")[0]
    assert "Corke and B. Armstrong-Helouvry" in header and "ICRA 1994" in header
    assert 0.0125 + 0.066 < 0.086
    traj, data = tmp_path / "traj.csv", tmp_path / "data.csv"
    random_excitation(robots.load("puma560"), duration=1, rate=50, period=1, seed=0).trajectory.write(traj)
    for argv in (["simulate", "puma560", str(traj), "-o", str(data)], ["identify", "puma560", str(data)]):
        assert main(argv) == 0, argv
        err = capsys.readouterr().err
        (line,) = [line for line in err.splitlines() if "warning" in line]
        assert line.startswith("pga-dyn: warning: puma560: not physically consistent in its source ("), line
        assert line.endswith("): link1, link3; used as given") and len(line) <= 160, line
        assert "Corke and Armstrong-Helouvry" in line and "1994" in line, line

    copy = tmp_path / "my_puma.urdf"
    copy.write_text(open(robots.data_path("puma560"), encoding="utf-8").read())
    assert main(["simulate", str(copy), str(traj), "-o", str(tmp_path / "mine.csv")]) == 0
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert line.startswith(f"pga-dyn: warning: {copy}: the model's inertial parameters are not physically consistent")
    assert "link1: mass 0 kg is not positive" in line and "0.0125 + 0.066 < 0.086" in line and "Corke" not in line

    random_excitation(robots.load("five_bar"), duration=1, rate=50, period=1, seed=0).trajectory.write(traj)
    assert main(["simulate", "five_bar", str(traj), "-o", str(tmp_path / "five_bar.csv")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_reference_option(capsys, tmp_path):
    """--reference NAME=VALUE,... or a file of such lines: the loops are closed from there (a
    regular configuration of the parallelogram: one branch, no warning), said by info; a name that
    is not a coordinate, or an entry that is not NAME=VALUE, is refused by name; a file whose q0
    does not close gets the nearest closed configuration, reported by info and analyze."""
    from test_closest import OPEN_FOUR_BAR

    code, out, err = run_main(["info", "parallelogram", "--reference", "crank_joint=0.5"], capsys)
    assert code == 0 and "closed from the reference given: crank_joint=0.5" in out
    assert "assembly branches meet" not in out and "warning" not in err
    spec = tmp_path / "reference.txt"
    spec.write_text("# the crank only\ncrank_joint: 0.5\n", encoding="utf-8")
    code, out, _ = run_main(["info", "parallelogram", "--reference", str(spec), "--json"], capsys)
    assert code == 0 and "closed from the reference given: crank_joint=0.5" in json.loads(out)["reference"]
    code, _, err = run_main(["info", "parallelogram", "--reference", "crank=0.5"], capsys)
    assert code == 2 and "reference: no coordinate named 'crank' (coordinates: crank_joint" in err
    code, _, err = run_main(["info", "parallelogram", "--reference", "crank_joint=half"], capsys)
    assert code == 2 and "--reference: 'crank_joint=half': 'half' is not a number" in err
    path = tmp_path / "open_four_bar.urdf"
    path.write_text(OPEN_FOUR_BAR, encoding="utf-8")
    code, out, _ = run_main(["info", str(path)], capsys)
    assert code == 0 and "the loops do not close at the actuated position of q0" in out and "    ja: " in out
    code, out, _ = run_main(["analyze", str(path), "--quiet"], capsys)
    assert code == 0 and re.search(r"^reference: +the loops do not close at q0: .* moves ja by", out, flags=re.M)
    code, out, _ = run_main(["analyze", str(path), "--reference", "ja=2.5", "--quiet", "--json"], capsys)
    assert code == 0 and "reference" not in json.loads(out)  # it closes there


def test_the_program_freezes_its_objects_before_it_exits(monkeypatch, capsys):
    """Run as the program (no argv: the process's own command line, which ends next), main freezes
    the objects left, so that the interpreter's last garbage collection does not walk them; called
    with arguments (a library call, as here), it leaves the collector alone."""
    import gc

    assert main(["info", "puma560"]) == 0 and gc.get_freeze_count() == 0
    monkeypatch.setattr(sys, "argv", ["pga-dyn", "info", "puma560"])
    try:
        assert main() == 0 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "puma560" in capsys.readouterr().out
