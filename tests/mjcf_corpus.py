"""The MJCF models shipped with gymnasium and dm_control, and Pinocchio's sampled rank on them
(used by tests/test_mjcf_corpus.py and benchmarks/mjcf_corpus.py).

Pinocchio's MJCF parser (``pin.buildModelFromMJCF``) reads several joints of one body as one
composite joint, without the links between them that pga-dyn's model has (a massless link per
joint, whose parameters move with the first joints only: a slide's carriage mass is
identifiable). :func:`unfolded` splits each composite joint of Pinocchio's model into its joints
(Pinocchio's own placements and axes), each carrying a body, so that both models have the same
bodies. The parser also reads the first body of the world and its subtree only. A file with several moving bodies of the world is therefore compared body of
the world by body of the world, on files that keep one of them (:func:`split`: MuJoCo's
``MjSpec`` deletes the other bodies, and the cameras, lights, sensors, actuators, tendons,
equalities, contact pairs, keyframes and height fields that could name them, none of which is
a rigid-body parameter). The regressor of independent subtrees is block-diagonal, so their
ranks add up to the rank of the whole file's.
"""

from __future__ import annotations

import glob
import importlib.util
import os

import numpy as np

#: The packages whose MJCF models are read, and the folder of their models.
PACKAGES = {"gymnasium": ("envs", "mujoco", "assets"), "dm_control": ("suite",)}


def corpus(package: str) -> list:
    """The MJCF files (sorted paths) shipped with ``package`` of :data:`PACKAGES` (none when it
    is not installed)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return []
    folder = os.path.join(os.path.dirname(spec.origin), *PACKAGES[package])
    return sorted(glob.glob(os.path.join(folder, "*.xml")))


def moving_roots(model) -> list:
    """Ids of the bodies of the world that carry a joint in their subtree (a compiled MjModel)."""
    return sorted({int(model.body_rootid[model.jnt_bodyid[j]]) for j in range(model.njnt)})


def split(path: str, folder: str) -> list:
    """Paths of MJCF files that each keep one moving body of the world of ``path`` (``[path]``
    itself when it has one), written into ``folder``."""
    import mujoco

    roots = moving_roots(mujoco.MjModel.from_xml_path(path))
    if len(roots) <= 1:
        return [path]
    out = []
    for keep in range(len(roots)):
        spec = mujoco.MjSpec.from_file(path)
        base = spec.modelfiledir
        spec.meshdir, spec.texturedir = (os.path.join(base, d) for d in (spec.meshdir, spec.texturedir))
        for group in (
            "cameras",
            "lights",
            "sensors",
            "actuators",
            "tendons",
            "equalities",
            "pairs",
            "excludes",
            "keys",
            "skins",
        ):
            for element in list(getattr(spec, group)):
                spec.delete(element)
        for geom in list(spec.geoms):
            if geom.type == mujoco.mjtGeom.mjGEOM_HFIELD:
                spec.delete(geom)
        for hfield in list(spec.hfields):
            spec.delete(hfield)
        model = spec.compile()
        names = [model.body(b).name for b in roots]
        for body in list(spec.worldbody.bodies):
            if body.name in names and body.name != names[keep]:
                spec.delete(body)
        name = os.path.join(folder, f"{os.path.splitext(os.path.basename(path))[0]}_{names[keep] or keep}.xml")
        with open(name, "w", encoding="utf-8") as handle:
            handle.write(spec.to_xml())
        out.append(name)
    return out


def pinocchio_rank(path: str, gravity, seed: int = 0):
    """(rank, singular gap) of Pinocchio's joint-torque regressor of its model of ``path``,
    stacked over random states (30 rows per body at least), with ``gravity``."""
    import pinocchio as pin
    from oracle import numerical_rank

    model = unfolded(pin.buildModelFromMJCF(path))
    model.gravity.linear = np.asarray(gravity, dtype=float)
    data, rng = model.createData(), np.random.default_rng(seed)
    rows = []
    for _ in range(max(3, -(-30 * (model.njoints - 1) // max(model.nv, 1)))):
        q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        v, a = rng.uniform(-2, 2, (2, model.nv))
        rows.append(pin.computeJointTorqueRegressor(model, data, q, v, a))
    return numerical_rank(np.vstack(rows))


def unfolded(model):
    """Pinocchio's ``model`` with each composite joint replaced by its joints in turn, the links
    between them massless bodies (the last joint carries the composite joint's body)."""
    import pinocchio as pin

    out, index = pin.Model(), {0: 0}
    for i in range(1, model.njoints):
        joint, parent, placement = model.joints[i], index[model.parents[i]], model.jointPlacements[i]
        parts = (
            [(joint, pin.SE3.Identity())]
            if joint.shortname() != "JointModelComposite"
            else list(zip(joint.extract().joints, joint.extract().jointPlacements))
        )
        for k, (part, inner) in enumerate(parts):
            name = model.names[i] if k == len(parts) - 1 else f"{model.names[i]}__{k}"
            parent = out.addJoint(parent, part, placement * inner, name)
            out.appendBodyToJoint(
                parent, model.inertias[i] if k == len(parts) - 1 else pin.Inertia.Zero(), pin.SE3.Identity()
            )
            placement = pin.SE3.Identity()
        index[i] = parent
    return out
