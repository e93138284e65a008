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


def tendon_constraints(path: str) -> list:
    """The linear constraints of the tendon equalities of ``path``, each {joint name: weight}
    with sum weight q_joint = constant, read off MuJoCo's compiled model independently of
    pga-dyn's reader: the fixed tendons' joint coefficients (``wrap_prm``), tendon1 minus a1 times
    tendon2 (MuJoCo's L1 - L1_0 = a0 + a1 (L2 - L2_0)); the constant does not change the rank."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    out = []
    for eq in range(m.neq):
        if m.eq_type[eq] != mujoco.mjtEq.mjEQ_TENDON:
            continue
        row = {}
        for t, scale in ((m.eq_obj1id[eq], 1.0), (m.eq_obj2id[eq], -m.eq_data[eq, 1])):
            for k in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]) if t >= 0 else ():
                name = m.joint(int(m.wrap_objid[k])).name
                row[name] = row.get(name, 0.0) + scale * m.wrap_prm[k]
        out.append(row)
    return out


def pinocchio_rank(path: str, gravity, seed: int = 0, constraints=()):
    """(rank, singular gap) of Pinocchio's joint-torque regressor of its model of ``path``,
    stacked over random states (30 rows per body at least), with ``gravity``. ``constraints``
    ({joint name: weight} each, :func:`tendon_constraints`; those whose joints are all in the
    file): the states satisfy A v = 0, A a = 0 and A x = 0 on the joints' coordinates (v = N w,
    N a basis of A's nullspace) and the rows are N^T Y (the regressor of the independent
    velocities w). MuJoCo's dof order is Pinocchio's velocity order (both walk the bodies in
    the file's order; checked by the joint types)."""
    import mujoco
    import pinocchio as pin
    from oracle import numerical_rank

    model = unfolded(pin.buildModelFromMJCF(path))
    model.gravity.linear = np.asarray(gravity, dtype=float)
    data, rng = model.createData(), np.random.default_rng(seed)
    N, A, iq, dofs = np.eye(model.nv), None, None, None
    mjm = mujoco.MjModel.from_xml_path(path)
    names = {mjm.joint(j).name: j for j in range(mjm.njnt)}
    kept = [row for row in constraints if set(row) <= set(names)]
    if kept:
        assert mjm.nv == model.nv
        dofs = sorted({int(mjm.jnt_dofadr[names[name]]) for row in kept for name in row})
        A = np.zeros((len(kept), model.nv))
        for r, row in enumerate(kept):
            for name, weight in row.items():
                A[r, mjm.jnt_dofadr[names[name]]] += weight
        _, s, vt = np.linalg.svd(A)
        N = vt[int(np.count_nonzero(s > 1e-12 * s[0])) :].T
        by_v = {model.joints[i].idx_v: model.joints[i] for i in range(1, model.njoints)}
        assert all(by_v[d].nv == 1 and by_v[d].nq == 1 for d in dofs)  # 1-DoF joints, q and v alike
        iq = [by_v[d].idx_q for d in dofs]
    rows = []
    for _ in range(max(3, -(-30 * (model.njoints - 1) // max(N.shape[1], 1)))):
        q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        if A is not None:  # the coupled coordinates projected onto A x = 0
            x = q[iq]
            sub = A[:, dofs]
            q[iq] = x - np.linalg.pinv(sub) @ (sub @ x)
        w, alpha = rng.uniform(-2, 2, (2, N.shape[1]))
        Y = np.atleast_2d(pin.computeJointTorqueRegressor(model, data, q, N @ w, N @ alpha))  # (10 n,) when nv = 1
        rows.append(N.T @ Y)
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
