"""Identification with the CLI's defaults on logs that MuJoCo made (issue: identification from
real robot logs).

Run: python benchmarks/identify_logs.py [--case NAME ...] [--keep DIR]

Each UR5 case writes the UR5 of example-robot-data as MJCF with armature, viscous damping and
(unless said) dry friction on every joint (``benchmarks/mujoco_logs.py``), designs an exciting
trajectory with ``pga-dyn excite`` on that file, lets MuJoCo track it and a random Fourier
validation trajectory (computed-torque + PD, RK4 at 4 kHz, control at 1 kHz), logs them as a
robot does (18-bit encoder + 1e-5 rad noise, 1 % torque noise, and per case: dry friction,
more position noise, a delayed torque channel, 100 Hz with 8-13 ms jitter, measured velocity,
motor currents), and runs

    pga-dyn identify ur5.xml data.csv --friction viscous coulomb --armature --test test.csv --json

(the options a user states about the model, and for "currents" the drive gains, ``--gains 9 9 9
2.2 2.2 2.2``; no tuning option), and the same without the model options (the defaults: terms
and estimate chosen by cross-validation). The five-bar cases write a
planar five-bar (``mujoco_logs.five_bar_mjcf``: closed by a ``connect`` equality, PD-driven at
its two base joints, no joint friction), excite it with the machine's limits (``--period 2
--velocity 3 --acceleration 30``), log its elbow encoders too (columns q_p1, q_p2) and run
``pga-dyn identify five_bar.xml data.csv --no-friction --no-armature --test test.csv --json``; "passive-damping" adds
unmodelled damping at the passive elbows, "passive-friction" the same damping modelled
(``--passive-friction viscous``), "other-mode" runs the machine in the assembly mode the
model does not describe (refused, naming the time), "other-mode-unlogged" too, without the elbow
encoders (nothing tells the modes apart), "mode-change" leaves its mode early in the record
(refused, naming the time). Printed per case: the relative
error of the base parameters against MuJoCo's (the model file's inertias, MuJoCo's damping,
frictionloss and armature, through pga-dyn's base-parameter map), the median |error| / std
(honest standard deviations: about 0.67), the share of parameters more than 3 std off, and the
relative residual error per joint on the validation trajectory, 100 ||tau - tau_hat|| / ||tau||
(RRE). A case the CLI refuses prints the CLI's message.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests"), HERE]

import mujoco_logs as ml  # noqa: E402

#: name -> (robot, dry friction on the arm's joints, keyword arguments of mujoco_logs.log); the
#: five-bar cases log the passive elbow angles too (encoders on the elbows), except
#: "other-mode-unlogged": "passive-damping" has ELBOW_DAMPING of unmodelled damping at the elbows,
#: "passive-friction" the same damping, modelled (the identification's --passive-friction viscous),
#: "other-mode" and "other-mode-unlogged" run in the assembly mode that the model does not
#: describe (the tip mirrored); "mode-change" is excited as before issue 22 (slowly, cond(J_p) up
#: to 30): the tracked machine sags through the singular configuration in its first 0.35 s.
CASES = {
    "viscous": ("ur5", False, {}),
    "dry": ("ur5", True, {}),
    "noise1e-4": ("ur5", False, {"q_noise": 1e-4}),
    "delay5ms": ("ur5", False, {"delay": 5}),
    "100Hz-jitter": ("ur5", True, {"every": 10, "jitter": 2.5e-3, "velocity": True}),
    "jitter-delay": ("ur5", True, {"every": 10, "jitter": 2.5e-3, "velocity": True, "delay": 5}),
    "currents": ("ur5", True, {"gains": (9.0, 9.0, 9.0, 2.2, 2.2, 2.2), "velocity": True}),
    "five-bar": ("five_bar", False, {}),
    "passive-damping": ("five_bar", False, {}),
    "passive-friction": ("five_bar", False, {}),
    "other-mode": ("five_bar", False, {}),
    "other-mode-unlogged": ("five_bar", False, {}),
    "mode-change": ("five_bar", False, {}),
}

#: The damping of the five-bar's passive elbows in the "passive-" cases (N m s/rad).
ELBOW_DAMPING = 0.02


def cli(*args) -> tuple:
    """(exit status, stdout, stderr) of ``pga-dyn ARGS``."""
    from pga_dyn.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def truth(xml_path: str, report: dict, dry: bool) -> np.ndarray:
    """The base parameters of the simulated arm, in the order of the report's parameters."""
    import pga_dyn
    import robots
    from identification import identification_model

    robot = robots.load_file(xml_path)
    terms = [t for t in ("viscous", "coulomb", "offset") if any(e.startswith(t + " ") for e in report["extras"])]
    passive = any(e.startswith("passive-viscous ") for e in report["extras"])
    model = identification_model(
        robot,
        friction=terms,
        armature=any(e.startswith("armature") for e in report["extras"]),
        passive_friction=("viscous",) if passive else (),
    )
    assert list(model.names) == [b["name"] for b in report["base"]], "the report's parameters are not the model's"
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))
    if not terms:  # the five-bar: rigid bodies, and the damping of its elbows when it is modelled
        return model.values(model.theta(phi, {"passive-viscous": ELBOW_DAMPING} if passive else {}))
    extras = {"viscous": ml.DAMPING, "coulomb": ml.FRICTIONLOSS if dry else 0.0, "armature": ml.ARMATURE}
    return model.values(model.theta(phi, {k: v for k, v in extras.items() if k in terms or k == "armature"}))


def run(name: str, folder: str, seed: int = 0) -> dict:
    import robots
    from identification import read_trajectory

    kind, dry, options = CASES[name]
    arm = kind == "ur5"
    if arm:
        xml = ml.ur5_mjcf(frictionloss=ml.FRICTIONLOSS if dry else None)
        terms, gains = ["--friction", "--armature"], {"kp": 400.0, "kd": 40.0}
        shape = {"amplitude": 0.8}
    else:
        xml = ml.five_bar_mjcf(elbow_damping=ELBOW_DAMPING if name.startswith("passive-") else 0.0)
        # the machine's limits, stated as a user states them: a light linkage moves briskly (period
        # 2 s, 3 rad/s, 30 rad/s^2), which separates its inertias from gravity (docs/identification.md)
        terms, gains = ["--period", 2, "--velocity", 3, "--acceleration", 30], {"kp": 30.0, "kd": 1.5}
        if name == "mode-change":
            terms = ["--max-cond", 30]
        shape = {"amplitude": 0.3, "velocity": 1.5}
    xml_path = os.path.join(folder, f"{kind}.xml")
    with open(xml_path, "w") as f:
        f.write(xml)
    robot = robots.load_file(xml_path)
    names = robot.actuated_names
    traj = os.path.join(folder, "excitation.csv")
    status, out, err = cli(
        "excite",
        xml_path,
        "-o",
        traj,
        *terms,
        "--rate",
        1000,
        "--duration",
        20,
        "--iterations",
        10,
        "--seed",
        seed,
        "--quiet",
    )
    if status:
        return {"case": name, "refused": (err.strip() or out.strip()).splitlines()[-1]}
    ref = read_trajectory(robot, traj)
    files, logs = [], []
    for label, (t, q, qd, qdd) in (
        ("data", (ref.t, ref.q, ref.qd, ref.qdd)),
        ("test", ml.fourier(len(names), 20, 1000, seed=seed + 1, **shape)),
    ):
        qpos0 = None if arm else ml.assembled(xml, q[0], mirror=name.startswith("other-mode"))
        record = ml.track(xml, t, q, qd, qdd, qpos0=qpos0, **gains)
        passive = None if arm or name == "other-mode-unlogged" else ml.passive_joints(xml)
        columns = ml.log(record, seed=seed + len(files), passive=passive, **options)
        logs.append(columns)
        files.append(ml.write_csv(os.path.join(folder, f"{label}.csv"), columns, names))
    friction = (
        ["--friction", "viscous", "coulomb", "--armature"]
        if arm
        else ["--no-friction", "--no-armature", "--passive-friction", "viscous"]
        if name == "passive-friction"
        else ["--no-friction", "--no-armature"]
    )
    drives = ["--gains", *options["gains"]] if "gains" in options else []  # currents: the gains, as a user gives them
    runs = {"stated": friction, "defaults": []} if arm else {"stated": friction}
    return {label: result(name, xml_path, files, logs, terms, drives, dry, options) for label, terms in runs.items()}


def result(name, xml_path, files, logs, friction, drives, dry, options) -> dict:
    """The figures of one ``pga-dyn identify`` of the case ``name`` with the model options ``friction``."""
    status, out, err = cli("identify", xml_path, files[0], *friction, *drives, "--test", files[1], "--json", "--quiet")
    if status:
        return {"case": name, "refused": (err.strip() or out.strip()).splitlines()[-1]}
    report = json.loads(out)
    beta = np.array([b["value"] for b in report["base"]])
    std = np.array([b["std"] for b in report["base"]])
    true = truth(xml_path, report, dry)
    error = np.abs(beta - true)
    test = logs[1]
    tau = test["tau"] if "tau" in test else test["current"] * np.asarray(options["gains"])
    rms_tau = np.sqrt(np.mean(tau**2, axis=0))
    rre = 100 * np.array(report["held_out"]["residual_rms"]) / rms_tau
    return {
        "case": name,
        "base_error_%": 100 * np.linalg.norm(beta - true) / np.linalg.norm(true),
        "median_err/std": float(np.median(error / std)),
        "beyond_3std": int(np.sum(error > 3 * std)),
        "parameters": len(beta),
        "rre_%": np.round(rre, 1).tolist(),
        "variance_factor": report.get("variance_factor"),
        "verdict": report["verdict"],
        "chosen": report["selection"]["chosen"]["label"] if "selection" in report else report["chosen"],
        "delay": report["diagnostics"]["delay"].get("decision", ""),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--keep", help="write the files into this folder (kept)")
    args = parser.parse_args(argv)
    for name in args.case:
        with tempfile.TemporaryDirectory() as scratch:
            folder = args.keep or scratch
            os.makedirs(folder, exist_ok=True)
            results = run(name, folder)
        for label, result in results.items() if "case" not in results else (("", results),):
            title = f"{name} {label}".strip()
            if "refused" in result:
                print(f"{title:23s} refused: {result['refused']}")
                continue
            print(
                f"{title:23s} base error {result['base_error_%']:6.2f} %  median |err|/std "
                f"{result['median_err/std']:6.2f}  >3 std: {result['beyond_3std']:2d}/{result['parameters']}  "
                f"RRE % {result['rre_%']}  variance factor {result['variance_factor']:.3g}"
            )
            print(f"{'':23s} chosen: {result['chosen']}; delay: {result['delay']}")
            print(f"{'':23s} verdict: {result['verdict'][:200]}")


if __name__ == "__main__":
    main()
