"""The floating base across pga-dyn, Pinocchio and MuJoCo, and export parity (issue 27, items 1
and 7), measured on more states than the tests (tests/test_floating_interop.py) use.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/export_parity.py [--states 200]

Prints, for the Unitree Go2 (floating) at random states (base anywhere, joints inside their
limits), the largest relative difference of the joint torques (12 rows) and of the base wrench
(6 rows) to pga-dyn's ``regressor @ inertial_parameters``, each divided by the largest entry of
its kind:

* conventions: Pinocchio's rnea on ``robots.to_pinocchio`` and on its own URDF reader with a
  free flyer, MuJoCo's mj_inverse on the MJCF file ``robots.write_mjcf`` writes;
* export parity: an identified model (perturbed, physically consistent parameters) written as
  URDF (``identification.export.write_model``), as a new MJCF file (``robots.write_mjcf``) and
  as a copy of that MJCF file (``write_model`` on the robot read from it), each read back by
  pga-dyn, Pinocchio (URDF with a free flyer; MJCF) and MuJoCo (MJCF), against the identified
  parameters in pga-dyn's own model.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from test_floating_interop import (  # noqa: E402
    estimate,
    mujoco_inverse,
    perturbed,
    pga_forces,
    pinocchio_rnea,
    random_states,
)

import pga_dyn  # noqa: E402
import robots  # noqa: E402
from identification.export import write_model  # noqa: E402


def errors(tau, reference) -> tuple:
    """(joint torques, base wrench): max |difference| / max |reference| over the states."""
    return tuple(
        float(np.abs(tau[:, rows] - reference[:, rows]).max() / np.abs(reference[:, rows]).max())
        for rows in (slice(6, None), slice(0, 6))
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    go2 = robots.load("go2")
    q, qd, qdd = random_states(go2, args.states, args.seed)
    rows = []
    tau = pga_forces(go2, q, qd, qdd)
    with tempfile.TemporaryDirectory() as folder:
        for name, model in (
            ("Pinocchio, robots.to_pinocchio", robots.to_pinocchio(go2)),
            (
                "Pinocchio, go2.urdf + free flyer",
                pin.buildModelFromUrdf(robots.data_path("go2"), pin.JointModelFreeFlyer()),
            ),
        ):
            model.gravity.linear = np.array(go2.gravity)
            rows.append(("conventions", name, *errors(pinocchio_rnea(go2, model, q, qd, qdd), tau)))
        phi = pga_dyn.to_link_parameters(go2, pga_dyn.inertial_parameters(go2))
        model = mujoco.MjModel.from_xml_path(robots.write_mjcf(go2, phi, os.path.join(folder, "go2.xml")))
        rows.append(("conventions", "MuJoCo, write_mjcf", *errors(mujoco_inverse(go2, model, q, qd, qdd), tau)))

        phi = perturbed(go2, args.seed + 1)
        reference = pga_forces(go2, q, qd, qdd, pga_dyn.from_link_parameters(go2, phi.reshape(-1)))
        files = {"URDF": write_model(estimate(go2, phi), os.path.join(folder, "identified.urdf"))["file"]}
        files["MJCF"] = robots.write_mjcf(go2, phi, os.path.join(folder, "identified.xml"))
        from_mjcf = robots.load_mjcf(files["MJCF"])
        files["MJCF copy"] = write_model(
            estimate(from_mjcf, phi), os.path.join(folder, "copy.xml"), write_mjcf=robots.write_mjcf
        )["file"]
        for kind, path in files.items():
            robot = robots.load_file(path, floating_base=True)
            rows.append(("export", f"pga-dyn, {kind}", *errors(pga_forces(robot, q, qd, qdd), reference)))
            model = (
                pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
                if kind == "URDF"
                else pin.buildModelFromMJCF(path)
            )
            model.gravity.linear = np.array(go2.gravity)
            rows.append(("export", f"Pinocchio, {kind}", *errors(pinocchio_rnea(go2, model, q, qd, qdd), reference)))
            if kind != "URDF":
                model = mujoco.MjModel.from_xml_path(path)
                rows.append(("export", f"MuJoCo, {kind}", *errors(mujoco_inverse(go2, model, q, qd, qdd), reference)))
    print(f"go2, {args.states} random states (seed {args.seed}): max relative error")
    print("| check | tool, file | joint torques | base wrench |\n|---|---|---|---|")
    for check, name, joints, base in rows:
        print(f"| {check} | {name} | {joints:.1e} | {base:.1e} |")
    worst = max(max(r[2], r[3]) for r in rows)
    print(f"worst: {worst:.1e} ({'within' if worst < 1e-9 else 'ABOVE'} 1e-9)")


if __name__ == "__main__":
    main()
