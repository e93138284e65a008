"""Results of an identification out: a JSON-ready report, a new URDF file with the identified
inertials, and a plot of measured against predicted forces.

The URDF (:func:`write_urdf`) is the robot's own file with the ``<inertial>`` of each moving
body replaced: the identified parameters of the body (the lumped parameters of the links
merged into it by fixed joints) go to its own link (the child link of its moving joint, whose
frame is the body frame), with the centre of mass as ``<origin xyz>``, ``rpy="0 0 0"`` and the
inertia about the centre of mass; the ``<inertial>`` of the links merged into it are removed.
Links fixed to the base keep theirs. The input file is never written to.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from pga_dyn.display import save_figure
from pga_dyn.errors import PgaDynError

from .consistency import mass_properties, violations


def _inertial_element(phi_b) -> ET.Element:
    """An URDF ``<inertial>`` of one body's link-frame parameters (mass > 0: centre of mass and
    inertia about it; mass 0: the inertia about the frame origin)."""
    m, c, Ic = mass_properties(phi_b)
    element = ET.Element("inertial")
    ET.SubElement(element, "origin", xyz=" ".join(repr(float(v)) for v in c), rpy="0 0 0")
    ET.SubElement(element, "mass", value=repr(m))
    ET.SubElement(element, "inertia", ixx=repr(float(Ic[0, 0])), ixy=repr(float(Ic[0, 1])), ixz=repr(float(Ic[0, 2])),
                  iyy=repr(float(Ic[1, 1])), iyz=repr(float(Ic[1, 2])), izz=repr(float(Ic[2, 2])))
    return element


def write_urdf(robot, phi, path) -> str:
    """Write ``robot``'s URDF / URDF+ file (``robot.source``) with the link-frame parameters
    ``phi`` ((n, 10) or (10 n,)) as the inertials of its moving bodies to the new file
    ``path`` (module docstring). Raises PgaDynError when ``phi`` is not physically consistent
    (:func:`~drng.identification.consistency.violations`), the robot has no source file, or
    ``path`` is that file. Returns ``path``."""
    source = robot.source
    if not source or not os.path.isfile(source):
        raise PgaDynError(f"{robot.name}: the robot has no source file to write identified inertials into")
    path = os.fspath(path)
    if os.path.abspath(path) == os.path.abspath(source) or (os.path.exists(path) and os.path.samefile(path, source)):
        raise PgaDynError(f"{path}: this is the robot's own file; write the identified model to a new file")
    phi = np.asarray(phi, dtype=float).reshape(-1, 10)
    if phi.shape[0] != robot.n:
        raise PgaDynError(f"phi has parameters of {phi.shape[0]} bodies, '{robot.name}' has {robot.n}")
    bad = violations(robot.body_names, phi)
    if bad:
        raise PgaDynError("the parameters are not physically consistent, a URDF file would not be a model of a "
                          "robot: " + "; ".join(str(v) for v in bad))
    tree = ET.parse(source, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    links = {link.get("name"): link for link in tree.getroot().iter("link")}
    for name, phi_b in zip(robot.body_names, phi):
        for member in robot.graph.nodes[name]["links"]:
            for old in links[member].findall("inertial"):
                links[member].remove(old)
        links[name].insert(0, _inertial_element(phi_b))
    ET.indent(tree)
    tree.write(path, encoding="unicode", xml_declaration=False)
    return path


def report(est, full=None, test=None) -> dict:
    """A JSON-ready dict of an identification: the model, the data, the estimate ``est`` (beta,
    std, relative std, expressions, the model file's values), the noise and residuals per
    coordinate, the held-out ``test`` data's residual RMS, and the full parameters of ``full``
    (a MAP or consistent estimate) with their pseudo-inertias' smallest eigenvalues."""
    import pga_dyn

    model, data, robot = est.model, est.data, est.model.robot
    phi0 = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot)).reshape(-1)
    model_beta = model.K[:, :phi0.size] @ phi0
    out = {
        "robot": robot.name, "data": data.source, "samples": len(data), "coordinates": list(data.names),
        "derivatives": data.derivatives, "method": est.method, "parameters": model.num_parameters,
        "extras": [f"{term} {robot.actuated_names[j]}" for term, j in model.extras],
        "condition_number": est.cond, "max_cond_jp": est.max_cond_jp, "variance_factor": est.scale,
        "noise_std": est.sigma.tolist(), "residual_rms": est.rms().tolist(),
        "base": [{"name": name, "value": float(b), "std": float(s), "relative_std": float(r),
                  "model_value": float(v), "expression": e}
                 for name, b, s, r, v, e in zip(model.names, est.beta, est.std, est.relative_std, model_beta,
                                                model.expressions)],
    }
    if test is not None:
        out["held_out"] = {"data": test.source, "samples": len(test), "residual_rms": est.rms(test).tolist()}
    if full is not None:
        names = model.parameter_names
        out["full"] = {
            "method": full.method, "solver": full.solver,
            "min_pseudo_inertia_eigenvalue": dict(zip(robot.body_names, full.min_eigenvalues.tolist())),
            "violations": [str(v) for v in violations(robot.body_names, full.phi)],
            "parameters": [{"name": n, "value": float(v)} | ({} if full.std is None else {"std": float(s)})
                           for n, v, s in zip(names, full.theta,
                                              full.std if full.std is not None else np.zeros(len(names)))],
            "base_values": full.beta.tolist(),
        }
        if test is not None:
            out["full"]["held_out_residual_rms"] = np.sqrt(np.mean((test.tau - full.predict(test)) ** 2,
                                                                   axis=0)).tolist()
    return out


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
