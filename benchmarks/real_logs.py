"""pga-dyn's defaults against a standard pipeline on a real arm's public logs (issue: real arms).

Run: python benchmarks/real_logs.py PATH [--estimate NAME ...] [--validate NAME ...]
     python benchmarks/real_logs.py --panda PATH

PATH is a checkout of the dynamic_calibration repository (Mamedov et al.: a UR10e's logs; it has
no licence, so pga-dyn ships none of its files: fetch it yourself). Its CSV logs have no header:
t, q (6), qd (6), motor currents (6), desired currents (6), desired torques (6); 100 Hz with
8-13 ms of jitter. The forces are the currents times the drive gains of its UR10E_parameters.txt.
The benchmark writes each log it uses with a header row into a temporary folder (the logger's
values as they are) and identifies the UR10e of the checkout's URe/urdf/ur10e.urdf from each
estimation log, then predicts every validation log (p1-p10: ten poses held still; ptp: a
point-to-point motion with standstills) two ways, side by side:

* pga-dyn: ``identification.identify_log`` with the CLI's defaults (what ``pga-dyn identify
  ur10e.urdf LOG --columns ... --gains ...`` runs): terms and estimate chosen by
  cross-validation; and with the terms stated, ``--friction viscous coulomb offset --armature``.
* the standard pipeline, written here: a zero-phase Butterworth low-pass of q (order 4, 7.5 Hz,
  the cutoff of the dataset's own scripts), velocities and accelerations by differences on the
  logged times, Pinocchio's joint-torque regressor with per-joint viscous, Coulomb (sign(qd))
  and offset columns and an armature column (qdd), ordinary least squares (numpy lstsq).

Both are scored at the logged samples against the logged forces (pga-dyn's predictions on its
uniform grid interpolated back to the logged times): RRE_j = 100 ||tau_j - tau_hat_j|| /
||tau_j|| per joint, and the mean over the joints; printed per validation log (p1-p10 as one
record of ten held poses), with pga-dyn's mean over the standard pipeline's mean (the ratio).

``--panda PATH``: a checkout of the FrankaEmikaPandaDynModel repository (Gaz et al. 2019), whose
matlab/data/Exciting_Traj/Trajectory_1/rbt_log holds a Franka Emika Panda's log (about 1 kHz
with 0.7-8.8 ms steps, joint torque sensors, 21 s): its first 70 % identify the Panda of
example-robot-data (the fingers fixed: a 7-joint arm), its last 30 % are predicted, the same
two ways (the standard pipeline with Pinocchio's model of the same file).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

#: The columns of the logs (the dataset's utils/data_processing/parseURData.m).
COLUMNS = ["t"] + [f"{kind}_{j}" for kind in ("q", "qd", "current", "i_des", "tau_des") for j in range(1, 7)]
#: The drive gains of UR10E_parameters.txt (N m/A).
GAINS = (10.0, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232)
#: The estimation logs (12-harmonic and 10-harmonic excitations) and the validation logs.
ESTIMATION = ("20_02_10-30sec_12harm", "20_02_12-40sec_12harm", "20_02_05-20sec_12harm", "20_02_06-20sec_10harm")
VALIDATION = ("20_01_17-ptp_10_points", "p1-p10")
#: The standard pipeline's filter: order and cutoff (Hz).
BUTTER = (4, 7.5)
#: The options that map the logs' columns for pga-dyn.
MAP = ["q_{name}=q_{index}", "qd_{name}=qd_{index}", "current_{name}=current_{index}"]


def log_path(checkout: str, name: str) -> str:
    folder = "validation_data" if name.startswith("20_01_17") else "identification_data"
    return os.path.join(checkout, "dataset_ur10e", folder, f"ur-{name}.csv")


def raw(checkout: str, name: str) -> list:
    """The values (ns, 31) of the log ``name``, a list of one; "p1-p10": of the ten pose logs."""
    if name == "p1-p10":
        return [raw(checkout, f"20_01_17-p{k}")[0] for k in range(1, 11)]
    return [np.loadtxt(log_path(checkout, name), delimiter=",")]


def with_header(values: np.ndarray, folder: str, name: str) -> str:
    """The log ``values`` written with a header row into ``folder``."""
    path = os.path.join(folder, f"{name}.csv")
    np.savetxt(path, values, delimiter=",", header=",".join(COLUMNS), comments="", fmt="%.6f")
    return path


class Standard:
    """The standard pipeline (module docstring), Pinocchio's regressor."""

    def __init__(self, urdf: str):
        import pinocchio as pin

        self.pin = pin
        self.model = pin.buildModelFromUrdf(urdf)
        self.data = self.model.createData()

    def states(self, t: np.ndarray, q: np.ndarray) -> tuple:
        from scipy import signal

        rate = 1.0 / float(np.median(np.diff(t)))
        b, a = signal.butter(BUTTER[0], BUTTER[1] / (rate / 2))
        q = signal.filtfilt(b, a, q, axis=0)
        qd = np.gradient(q, t, axis=0)
        return q, qd, np.gradient(qd, t, axis=0)

    def regressor(self, t: np.ndarray, q: np.ndarray) -> np.ndarray:
        rows = []
        for qk, vk, ak in zip(*self.states(t, q)):
            Y = self.pin.computeJointTorqueRegressor(self.model, self.data, qk, vk, ak)
            rows.append(np.hstack([Y, np.diag(vk), np.diag(np.sign(vk)), np.eye(len(vk)), np.diag(ak)]))
        return np.array(rows)

    def fit(self, t: np.ndarray, q: np.ndarray, tau: np.ndarray) -> Standard:
        W = self.regressor(t, q)
        self.beta = np.linalg.lstsq(W.reshape(-1, W.shape[2]), tau.reshape(-1), rcond=None)[0]
        return self

    def predict(self, t: np.ndarray, q: np.ndarray) -> np.ndarray:
        return self.regressor(t, q) @ self.beta


def rre(tau: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    return 100 * np.linalg.norm(tau - predicted, axis=0) / np.linalg.norm(tau, axis=0)


def panda(checkout: str) -> None:
    """The Panda's log (module docstring): pga-dyn's defaults against the standard pipeline."""
    import re

    import robots
    from identification import identify_log, read_trajectory

    folder = tempfile.mkdtemp()
    source = os.path.join(
        os.path.dirname(__import__("pinocchio").__file__), *[".."] * 4, "share", "example-robot-data", "robots"
    )
    with open(os.path.join(source, "panda_description", "urdf", "panda.urdf")) as f:
        text = re.sub(r'(<joint name="panda_finger_joint[12]" type=")prismatic', r"\1fixed", f.read())
    urdf = os.path.join(folder, "panda7.urdf")
    with open(urdf, "w") as f:
        f.write(re.sub(r"<mimic[^>]*/>", "", text))
    log = os.path.join(checkout, "matlab", "data", "Exciting_Traj", "Trajectory_1", "rbt_log")
    t = np.loadtxt(os.path.join(log, "exciting_traj_time.txt"))
    q, qd, tau = (
        np.loadtxt(os.path.join(log, f"exciting_traj_{k}.txt")).reshape(-1, 7)
        for k in ("positions", "velocity", "torques")
    )
    names = [f"panda_joint{k}" for k in range(1, 8)]
    header = ["t", *(f"{kind}_{n}" for kind in ("q", "qd", "tau") for n in names)]
    cut = int(0.7 * len(t))
    paths = []
    for label, rows in (("est", slice(0, cut)), ("val", slice(cut, None))):
        paths.append(os.path.join(folder, f"{label}.csv"))
        table = np.column_stack([t[rows], q[rows], qd[rows], tau[rows]])
        np.savetxt(paths[-1], table, delimiter=",", header=",".join(header), comments="", fmt="%.9g")
    robot = robots.load_file(urdf)
    data, test = (read_trajectory(robot, p, require_tau=True) for p in paths)
    job = identify_log(robot, data, test)
    ours = rre(tau[cut:], np.column_stack([np.interp(t[cut:], test.t, p) for p in job.predict(test).T]))
    standard = Standard(urdf)
    standard.fit(t[:cut], q[:cut], tau[:cut])
    base = rre(tau[cut:], standard.predict(t[cut:], q[cut:]))
    print(f"Panda, last 30 % held out; pga-dyn chose {job.selection.chosen.label}; delay: {job.delay_note}")
    print(f"  standard  {'  '.join(f'{x:6.1f}' for x in base)}   mean {base.mean():6.1f}")
    print(
        f"  defaults  {'  '.join(f'{x:6.1f}' for x in ours)}   mean {ours.mean():6.1f}   ratio {ours.mean() / base.mean():.2f}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", help="a checkout of the dynamic_calibration repository")
    parser.add_argument("--estimate", nargs="+", default=ESTIMATION)
    parser.add_argument("--validate", nargs="+", default=VALIDATION)
    parser.add_argument("--panda", metavar="PATH", help="a checkout of FrankaEmikaPandaDynModel instead")
    args = parser.parse_args(argv)
    if args.panda:
        return panda(args.panda)
    if not args.checkout:
        parser.error("give a checkout of the dynamic_calibration repository (or --panda PATH)")
    import robots
    from identification import identify_log, read_trajectory

    urdf = os.path.join(args.checkout, "URe", "urdf", "ur10e.urdf")
    robot = robots.load_file(urdf)
    folder = tempfile.mkdtemp()
    standard = Standard(urdf)
    options = {"columns": MAP, "gains": list(GAINS), "require_tau": True}
    validation = {}
    for name in args.validate:
        logs = raw(args.checkout, name)
        paths = [with_header(v, folder, f"{name}-{k}") for k, v in enumerate(logs)]
        validation[name] = (logs, [read_trajectory(robot, p, **options) for p in paths])
    ratios = {"defaults": [], "stated": []}
    for name in args.estimate:
        (values,) = raw(args.checkout, name)
        data = read_trajectory(robot, with_header(values, folder, name), **options)
        standard.fit(values[:, 0], values[:, 1:7], values[:, 13:19] * GAINS)
        started = time.perf_counter()
        jobs = {
            "defaults": identify_log(robot, data, hold_out_share=0),
            "stated": identify_log(
                robot, data, hold_out_share=0, friction=("viscous", "coulomb", "offset"), armature=True
            ),
        }
        seconds = time.perf_counter() - started
        print(f"estimation log {name}: {len(data)} samples; both pga-dyn jobs {seconds:.2f} s")
        for label, job in jobs.items():
            print(f"  pga-dyn {label}: chose {job.selection.chosen.label} ({job.selection.chosen.score:.3g} % CV)")
        for val, (logs, trajs) in validation.items():
            tau = np.vstack([v[:, 13:19] for v in logs]) * GAINS
            reference = np.vstack([standard.predict(v[:, 0], v[:, 1:7]) for v in logs])
            base = rre(tau, reference)
            print(f"    {val:24s} standard  {'  '.join(f'{x:6.1f}' for x in base)}   mean {base.mean():6.1f}")
            for label, job in jobs.items():
                predicted = np.vstack(
                    [
                        np.column_stack([np.interp(v[:, 0], tr.t, p[:, j]) for j in range(6)])
                        for v, tr, p in zip(logs, trajs, (job.predict(tr) for tr in trajs))
                    ]
                )
                ours = rre(tau, predicted)
                ratio = ours.mean() / base.mean()
                ratios[label].append(ratio)
                print(
                    f"    {'':24s} {label:9s} {'  '.join(f'{x:6.1f}' for x in ours)}   mean {ours.mean():6.1f}"
                    f"   ratio {ratio:.2f}"
                )
    for label, r in ratios.items():
        print(
            f"pga-dyn {label} / standard pipeline, mean ratio over every pair: {np.mean(r):.2f} (max {np.max(r):.2f})"
        )


if __name__ == "__main__":
    sys.exit(main())
