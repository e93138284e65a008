"""Diagnostics, a stage of the identification (:mod:`drng.identification` lists them in order):
the report of an identification, as a JSON-ready dict (:func:`report`) and as text
(:func:`report_text`), and a plot of measured against predicted forces (:func:`plot`).
"""

from __future__ import annotations

import os

import numpy as np

from pga_dyn.display import number, save_figure, text_table

from .consistency import ConsistentEstimate, identifiability
from .physics import violations


def report(est, full=None, test=None) -> dict:
    """A JSON-ready dict of an identification: the model, the data, the estimate ``est`` (beta,
    std, relative std, expressions, the model file's values), the noise and residuals per
    coordinate, the held-out ``test`` data's residual RMS, and the full parameters of ``full``
    (a MAP or consistent estimate) with their pseudo-inertias' smallest eigenvalues, a ``note`` on
    each full parameter the data do not determine on its own
    (:func:`~drng.identification.consistency.identifiability`) and, for a consistent estimate, its
    bounds per body (:meth:`~drng.identification.consistency.BodyBounds.report`)."""
    import pga_dyn

    model, data, robot = est.model, est.data, est.model.robot
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    model_beta = model.K[:, :phi0.size] @ phi0
    out = {
        "robot": robot.name, "data": data.source, "samples": len(data), "coordinates": list(data.names),
        "derivatives": data.derivatives, "method": est.method, "parameters": model.num_parameters,
        "extras": list(model.extra_labels),
        "condition_number": est.cond, "max_cond_jp": est.max_cond_jp, "variance_factor": est.scale,
        "noise_std": est.sigma.tolist(), "residual_rms": est.rms().tolist(),
        "base": [{"name": name, "value": float(b), "std": float(s), "relative_std": float(r),
                  "model_value": float(v), "expression": e}
                 for name, b, s, r, v, e in zip(model.names, est.beta, est.std, est.relative_std, model_beta,
                                                model.expressions)],
    }
    if model.coulomb_speed is not None:
        out["coulomb_speed"] = model.coulomb_speed.tolist()
    if est.stribeck_speed_std is not None:
        out["stribeck_speed"] = [{"coordinate": n, "value": float(v), "std": float(s)} for n, v, s in
                                 zip(robot.actuated_names, model.stribeck_speed, est.stribeck_speed_std)
                                 if np.isfinite(s)]
    if test is not None:
        out["held_out"] = {"data": test.source, "samples": len(test), "residual_rms": est.rms(test).tolist()}
    if full is not None:
        names = model.parameter_names
        out["full"] = {
            "method": full.method, "solver": full.solver,
            "min_pseudo_inertia_eigenvalue": dict(zip(robot.body_names, full.min_eigenvalues.tolist())),
            "violations": [str(v) for v in violations(robot.body_names, full.phi)],
            "parameters": [{"name": n, "value": float(v)} | ({} if full.std is None else {"std": float(s)})
                           | ({"note": note} if note else {})
                           for n, v, s, note in zip(names, full.theta,
                                                    full.std if full.std is not None else np.zeros(len(names)),
                                                    identifiability(model))],
            "base_values": full.beta.tolist(),
        }
        if isinstance(full, ConsistentEstimate) and full.bounds is not None:
            out["full"]["bounds"] = full.bounds.report(full.phi)
        if test is not None:
            out["full"]["held_out_residual_rms"] = np.sqrt(np.mean((test.tau - full.predict(test)) ** 2,
                                                                   axis=0)).tolist()
    return out

def report_text(report: dict) -> list:
    """The lines of text of a :func:`report` (what ``pga-dyn identify`` prints): the data, the
    estimate, noise and residual RMS per coordinate, a table of the identified parameters and,
    with full parameters, the pseudo-inertias' smallest eigenvalues, the violations and a table
    of the full parameters."""
    lines = [f"robot:            {report['robot']}",
             f"data:             {report['data']}: {report['samples']} samples; qd, qdd {report['derivatives']}",
             f"estimate:         {report['method'].upper()} of {report['parameters']} parameters (base inertial"
             f"{' + ' + str(len(report['extras'])) + ' friction/armature' if report['extras'] else ''}); condition "
             f"number {report['condition_number']:.4g}; variance factor {report['variance_factor']:.3g}",
             "noise std:        " + ", ".join(f"{s:.4g}" for s in report["noise_std"]),
             "residual RMS:     " + ", ".join(f"{s:.4g}" for s in report["residual_rms"])]
    if "coulomb_speed" in report:
        lines.append("Coulomb speed:    " + ", ".join(f"{v:.4g}" for v in report["coulomb_speed"])
                     + " (fc tanh(qd / v), stated)")
    if "stribeck_speed" in report:
        lines.append("Stribeck speed:   " + ", ".join(f"{s['coordinate']} {s['value']:.4g} +- {s['std']:.2g}"
                                                      for s in report["stribeck_speed"]) + " (fitted)")
    if "held_out" in report:
        lines.append("held-out RMS:     " + ", ".join(f"{s:.4g}" for s in report["held_out"]["residual_rms"])
                     + f" ({report['held_out']['data']})")
    rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}", f"{100 * p['relative_std']:.3g}",
             number(p["model_value"])) for p in report["base"]]
    lines += ["", "Identified parameters (std: standard deviation; model: the model file's value, friction 0)"]
    lines += text_table(("parameter", "estimate", "std", "std %", "model"), rows)
    full = report.get("full")
    if full:
        label = {"consistent": "physically consistent estimate (LMI, solver " + full["solver"] + ")",
                 "map": "MAP estimate"}[full["method"]]
        lines += ["", f"Full parameters: {label}; pseudo-inertia smallest eigenvalue per body: " +
                  ", ".join(f"{b} {e:.3g}" for b, e in full["min_pseudo_inertia_eigenvalue"].items())]
        if full["violations"]:
            lines.append("  NOT physically consistent: " + "; ".join(full["violations"]))
        if "held_out_residual_rms" in full:
            lines.append("  held-out RMS: " + ", ".join(f"{s:.4g}" for s in full["held_out_residual_rms"]))
        for b in full.get("bounds", ()):
            lo, hi = (f"{v:.4g}" if v is not None else "-" for v in b["mass_bounds"])
            extent = "" if b["ellipsoid"] is None else (
                ", ellipsoid semi-axes " + " ".join(f"{a:.3g}" for a in b["ellipsoid"]["semi_axes"])
                + f" m, margin {b['extent_margin']:.3g} kg")
            lines.append(f"  {b['body']}: mass {b['mass']:.4g} kg in [{lo}, {hi}]{extent} ({b['source']})"
                         + (f"; ACTIVE: {', '.join(b['active'])}" if b["active"] else ""))
        rows = [(p["name"], f"{p['value']:.6g}", f"{p['std']:.3g}" if "std" in p else "-", p.get("note", ""))
                for p in full["parameters"]]
        lines += ["  (note: a parameter the data do not determine on its own has the prior's share of its sums)"]
        lines += text_table(("parameter", "value", "std", "note"), rows)
    return lines


def plot(est, path, data=None) -> str:
    """Measured and predicted forces of every actuated coordinate against time on ``data``
    (default the identification data), saved to ``path`` (PNG, SVG or PDF by its extension).
    Needs matplotlib (the optional extra ``pga-dyn[plot]``)."""
    from pga_dyn.errors import optional

    optional("matplotlib", "the plot", "plot").use("Agg")
    plt = optional("matplotlib.pyplot", "the plot", "plot")
    data = est.data if data is None else data
    predicted = est.predict(data)
    na = len(data.names)
    fig, axes = plt.subplots(na, 1, figsize=(8, 1.6 * na + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(data.t, data.tau[:, j], lw=2.5, color="0.75", label="measured")
        ax.plot(data.t, predicted[:, j], lw=0.8, color="C0", label="predicted")
        ax.plot(data.t, data.tau[:, j] - predicted[:, j], lw=0.6, color="C3", label="residual")
        ax.set_ylabel(data.names[j], fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    fig.suptitle(f"{est.model.robot.name}: measured and predicted forces on {os.path.basename(data.source)}", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path, 120)
    plt.close(fig)
    return os.fspath(path)
