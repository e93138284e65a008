"""pga-dyn on the robot files users have, against the Pinocchio oracle: the corpus table of
docs/drng.md.

Run: python benchmarks/corpus.py --grbda DIR [--gepetto DIR] [--out DIR] [FILE ...]

DIR of --grbda: a checkout of github.com/ROAM-Lab-ND/generalized_rbda (its robot-models/ and
Benchmarking/urdfs/ URDF+ files); of --gepetto: a checkout of
github.com/Gepetto/example-parallel-robots, whose robots (robot.urdf + robot.yaml) are converted
to URDF+ into --out (default: a temporary directory; the checkouts are only read) as
:func:`convert` says. FILE: files relative to the grbda checkout (default: the list below).

For each file: ``pga-dyn analyze FILE`` (the default: certified; a floating base where the file
has a floating joint) run as a command and timed (its exit status, dimension, status), and the
oracle of tests/fixture_oracle.py (``file_nullity``: Pinocchio's regressor of the spanning tree
projected onto the independent coordinates at rest states closed by Pinocchio's kinematics,
couplings read from the file) in the reference configuration's assembly mode ("q0") and over
all modes ("any"), two seeds each. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

import robots  # noqa: E402
from pga_dyn.errors import PgaDynError  # noqa: E402

GRBDA = [
    "robot-models/mini_cheetah.urdf",
    "robot-models/mit_humanoid.urdf",
    "robot-models/mit_humanoid_leg.urdf",
    "robot-models/tello_humanoid.urdf",
    "robot-models/tello_legs.urdf",
    "robot-models/jvrc1_humanoid.urdf",
    "robot-models/revolute_rotor_chain.urdf",
    "robot-models/four_bar.urdf",
    "robot-models/six_bar.urdf",
    "robot-models/planar_leg_linkage.urdf",
    "robot-models/double_pendulum.urdf",
    "Benchmarking/urdfs/variable_four_bar_urdf/four_bar_branch_1_1.urdf",
    "Benchmarking/urdfs/variable_four_bar_urdf/four_bar_branch_2_2.urdf",
    "Benchmarking/urdfs/variable_four_bar_urdf/four_bar_branch_2_4.urdf",
    "Benchmarking/urdfs/variable_revolute_pair_urdf/revolute_rotor_pair_branch_2_2.urdf",
    "Benchmarking/urdfs/parallel_chains/Implicit/depth5/loop_size3.urdf",
    "Benchmarking/urdfs/parallel_chains/Implicit/depth5/loop_size5.urdf",
    "Benchmarking/urdfs/parallel_chains/Implicit/depth5/loop_size11.urdf",
    "Benchmarking/urdfs/parallel_chains/Implicit/depth10/loop_size3.urdf",
    "Benchmarking/urdfs/parallel_chains/Implicit/depth10/loop_size13.urdf",
    "Benchmarking/urdfs/parallel_chains/Explicit/depth5/loop_size4.urdf",
    "Benchmarking/urdfs/parallel_chains/Explicit/depth10/loop_size8.urdf",
]
GEPETTO = ["5bar_linkage_iso3d", "5bar_linkage_iso6d", "cassie_like", "digit_like", "disney_like"]


# -- Gepetto's example-parallel-robots to URDF+ --------------------------------------------------
def _yaml(path):
    """The lists of a Gepetto robot.yaml (flow-style lists, possibly over several lines)."""
    with open(path, encoding="utf-8") as handle:
        text = re.sub(r"#.*", "", handle.read())
    return {
        key: ast.literal_eval(" ".join(value.split()))
        for key, value in re.findall(r"^(\w+):(.*?)(?=^\w+:|\Z)", text, flags=re.S | re.M)
    }


def _pose(element):
    """4x4 pose of an element's <origin xyz rpy> (URDF: R = Rz Ry Rx)."""
    origin = element.find("origin")
    xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
    r, p, y = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    T = np.eye(4)
    T[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    T[:3, 3] = xyz
    return T


def _set_pose(element, T):
    origin = element.find("origin")
    if origin is None:
        origin = ET.SubElement(element, "origin")
    R = T[:3, :3]
    p = -np.arcsin(np.clip(R[2, 0], -1.0, 1.0))
    r, y = (
        (np.arctan2(R[2, 1], R[2, 2]), np.arctan2(R[1, 0], R[0, 0]))
        if abs(np.cos(p)) > 1e-9
        else (np.arctan2(-R[1, 2], R[1, 1]), 0.0)
    )
    origin.set("xyz", " ".join(repr(float(v)) for v in T[:3, 3]))
    origin.set("rpy", " ".join(repr(float(v)) for v in (r, p, y)))


def convert(folder: str, out: str) -> list:
    """Write folder's robot.urdf + robot.yaml as URDF+ to ``out``; returns the joints marked
    independent beyond the motors.

    A '3d' closure (frames A and B share their origin) becomes a spherical <loop> between the two
    frame links. A '6d' closure (A and B coincide) cuts the moving joint j above B: the body under
    j is fixed to A's link where A and B coincide, and j becomes a <loop> of its type between its
    parent link and that body: the same mechanism. Motors (name_mot) are independent="true", the
    other moving joints independent="false"; passive joints that no loop moves, and those the
    loops leave free at q0 (the spin of a rod between two ball joints: columns of J_p outside a
    pivoted-QR basis at q0, by Pinocchio), are marked independent too."""
    tree = ET.parse(os.path.join(folder, "robot.urdf"))
    root = tree.getroot()
    for parent in list(root.iter()):
        for child in [c for c in parent if c.tag in ("visual", "collision")]:
            parent.remove(child)
    spec = _yaml(os.path.join(folder, "robot.yaml"))
    parent_joint = {j.find("child").get("link"): j for j in root.findall("joint")}

    def ancestors(link):
        out_ = []
        while link in parent_joint:
            link = parent_joint[link].find("parent").get("link")
            out_.append(link)
        return out_

    def moving_above(link):
        T = np.eye(4)
        while parent_joint[link].get("type") == "fixed":
            T = _pose(parent_joint[link]) @ T
            link = parent_joint[link].find("parent").get("link")
        return link, parent_joint[link], T

    for k, ((a, b), kind) in enumerate(zip(spec["closed_loop"], spec["type"]), start=1):
        if kind == "3d":
            loop = ET.SubElement(root, "loop", name=f"closure{k}", type="spherical")
            ET.SubElement(loop, "predecessor", link=a)
            ET.SubElement(loop, "successor", link=b)
            continue
        if moving_above(b)[0] in ancestors(a):
            a, b = b, a
        body, joint, body_to_b = moving_above(b)
        loop = ET.SubElement(
            root,
            "loop",
            name=f"closure{k}_{joint.get('name')}",
            type={"continuous": "revolute"}.get(joint.get("type"), joint.get("type")),
        )
        _set_pose(ET.SubElement(loop, "predecessor", link=joint.find("parent").get("link")), _pose(joint))
        ET.SubElement(loop, "successor", link=body)
        axis = joint.find("axis")
        ET.SubElement(loop, "axis", xyz=axis.get("xyz") if axis is not None else "1 0 0")
        joint.attrib = {"name": f"weld{k}", "type": "fixed"}
        for child in list(joint):
            joint.remove(child)
        ET.SubElement(joint, "parent", link=a)
        ET.SubElement(joint, "child", link=body)
        _set_pose(joint, np.linalg.inv(body_to_b))
        parent_joint[body] = joint
    for joint in root.findall("joint"):
        if joint.get("type") != "fixed":
            joint.set("independent", "true" if joint.get("name") in set(spec["name_mot"]) else "false")
    marked = _free_joints(root, out)
    ET.indent(tree)
    tree.write(out)
    return marked


def _free_joints(root, where) -> list:
    import pinocchio as pin
    from fixture_oracle import TreeOracle, constraint_jacobian, newton, passive_velocities
    from scipy.linalg import qr

    marked = []
    for _ in range(50):
        text = ET.tostring(root, encoding="unicode")
        try:
            robot = robots.parse_urdf(text, where=where)
        except PgaDynError as exc:  # passive joints that no loop moves
            names = re.findall(r"'([^']+)'", str(exc).split(" marked ")[0])
            if " marked independent" not in str(exc) or not names:
                raise
        else:
            oracle = TreeOracle(robot, text)
            free = passive_velocities(oracle, text)
            qp = newton(oracle, pin.neutral(oracle.model), free)
            if qp is None:  # a flat q0 with open loops: start a little off it
                kick = np.zeros(oracle.model.nv)
                kick[free] = np.random.default_rng(0).uniform(-1e-2, 1e-2, len(free))
                qp = newton(oracle, pin.integrate(oracle.model, pin.neutral(oracle.model), kick), free)
            _, R, piv = qr(constraint_jacobian(oracle, qp)[:, free], pivoting=True)
            d = np.abs(np.diag(R))
            rank = int(np.sum(d > 1e-8 * d[0]))
            if rank == len(free):
                return marked
            by_v = {oracle.model.joints[i].idx_v: oracle.model.names[i] for i in range(1, oracle.model.njoints)}
            names = [by_v[free[p]] for p in piv[rank:]]
        for joint in root.findall("joint"):
            if joint.get("name") in names:
                joint.set("independent", "true")
        marked += names
    raise RuntimeError(f"{where}: could not make the passive joints determined")


# -- one file ---------------------------------------------------------------------------------------
def analyze(path: str):
    """(exit status, seconds, JSON output or None, last stderr line) of ``pga-dyn analyze path``."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pga_dyn.cli", "analyze", path, "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
        timeout=900,
    )
    seconds = time.perf_counter() - start
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        out = None
    lines = done.stderr.strip().splitlines()
    return done.returncode, seconds, out, lines[-1] if lines else ""


def oracle(path: str) -> dict:
    """The oracle's nullspace dimensions and gaps per mode and seed, or the loader's error. A robot
    without loop joints has one mode: its "any" figures are its "q0" figures."""
    from fixture_oracle import file_nullity

    try:
        robot = robots.load_urdf(path)
    except PgaDynError as exc:
        return {"error": str(exc)}
    with open(path, encoding="utf-8") as handle:
        text = handle.read()

    def run(mode):
        try:
            return [file_nullity(robot, text, seed=seed, mode=mode)[:2] for seed in (0, 1)]
        except AssertionError as exc:  # too few states closed
            return f"failed: {exc}"

    figures = {"q0": run("q0")}
    figures["any"] = run("any") if robot.loop_joints else figures["q0"]  # couplings alone: one mode
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grbda", required=True)
    parser.add_argument("--gepetto")
    parser.add_argument("--out")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="pga-dyn-corpus-")
    os.makedirs(out, exist_ok=True)
    entries = [(f"generalized_rbda `{f}`", os.path.join(args.grbda, f)) for f in (args.files or GRBDA)]
    if args.gepetto:
        for name in GEPETTO:
            path = os.path.join(out, f"{name}.urdf")
            marked = convert(os.path.join(args.gepetto, "robots", name), path)
            note = f" (also independent: {', '.join(marked)})" if marked else ""
            entries.append((f"Gepetto `{name}`, converted{note}", path))
    print("| file | bodies | pga-dyn analyze | dimension | seconds | oracle, q0's mode | oracle, all modes |")
    print("|---|---|---|---|---|---|---|")
    for label, path in entries:
        code, seconds, result, last = analyze(path)
        figures = oracle(path)
        if result is None:
            answer, dim, bodies = f"exit {code}: {last}", "-", "-"
        else:
            answer, dim, bodies = f"exit {code}, {result['status']}", result["nullspace_dimension"], result["bodies"]
        if "error" in figures:
            mode = both = "refused too (undetermined)" if "marked independent" in figures["error"] else figures["error"]
        else:
            mode, both = (
                figures[m] if isinstance(figures[m], str) else ", ".join(f"{d} (gap {g:.0e})" for d, g in figures[m])
                for m in ("q0", "any")
            )
        print(f"| {label} | {bodies} | {answer} | {dim} | {seconds:.1f} | {mode} | {both} |", flush=True)


if __name__ == "__main__":
    main()
