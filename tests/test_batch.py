"""Variants of a robot (pga_dyn.variants, Robot.description) and DRNG over many robots (drng.nullspaces):
the batch equals the robots one by one, in order, on a process pool too; failures name the robot."""

import concurrent.futures
import dataclasses
import functools
import multiprocessing
import pickle

import numpy as np
import pytest

import drng
import robots
from drng.batch import Failure
from pga_dyn.errors import ModelError, PgaDynError, PgaDynWarning
from pga_dyn.kinematics import initial_poses
from pga_dyn.loops import constraints
from pga_dyn.model import Description
from pga_dyn.progress import reporting
from pga_dyn.variants import move_joints

BASE = robots.load("2rru_1rrs")
#: The direction of each crank of 2RRU-1RRS at q0, from its base joint A to its elbow B (robots/data/2rru_1rrs.urdf).
CRANKS = {
    "limb1_R2": np.array([0.0, 1.0, 0.0]),
    "limb2_R2": np.array([0.0, -1.0, 0.0]),
    "limb3_R2": np.array([-1.0, 0.0, 0.0]),
}
#: An elbow moved onto its rod's far end (B1 = U1): the rod has no length, a passive motion no actuator drives.
DEGENERATE = {"limb1_R2": (0.0, -0.15, 0.45)}


def cranks(lengths):
    """The offsets that give the three cranks these lengths (0.20 m each in the file)."""
    return {joint: (length - 0.2) * direction for (joint, direction), length in zip(CRANKS.items(), lengths)}


def world(robot, link):
    return initial_poses(robot)[robot.body_index(link)] @ robot.link_pose(link)


def compiled_in_a_worker(offsets):
    """(signatures numba compiled, signatures it loaded from its cache) in this process after one variant."""
    import sys

    from numba.core.dispatcher import Dispatcher

    drng.nullspace(move_joints(BASE, offsets))
    stats = [
        d.stats
        for name in list(sys.modules)
        if name.split(".")[0] in ("pga_dyn", "drng")
        for d in vars(sys.modules[name]).values()
        if isinstance(d, Dispatcher)
    ]
    return sum(sum(s.cache_misses.values()) for s in stats), sum(sum(s.cache_hits.values()) for s in stats)


def broken_build(item):
    """A build function with a bug (not bad input)."""
    raise ZeroDivisionError("a bug in the user's build function")


# -- Robot.description and move_joints -------------------------------------------------------------


def test_description_builds_the_same_robot_and_pickles():
    again = BASE.description.build()
    for attribute in ("origin", "axes", "parent", "actuated", "gravity"):
        np.testing.assert_array_equal(getattr(again, attribute), getattr(BASE, attribute))
    assert again.body_names == BASE.body_names and again.source == BASE.source
    assert all(np.array_equal(a.parent_frame, b.parent_frame) for a, b in zip(again.loop_joints, BASE.loop_joints))
    copy = pickle.loads(pickle.dumps(BASE.description))
    assert isinstance(copy, Description) and len(pickle.dumps(BASE.description)) < 20_000
    np.testing.assert_array_equal(copy.build().origin, BASE.origin)


def test_a_robot_built_by_hand_keeps_a_frozen_copy_of_its_records():
    spec = BASE.description
    joints = list(spec.joints)
    origin = np.array(joints[0].origin)
    joints[0] = dataclasses.replace(joints[0], origin=origin)
    robot = Description(spec.name, spec.links, tuple(joints), spec.loops).build()
    origin[0, 3] = 99.0  # the caller's array changes; the robot's record does not
    assert robot.description.joints[0].origin[0, 3] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        robot.description.joints[0].origin[0, 3] = 1.0


def test_moving_elbows_changes_the_crank_lengths_and_keeps_the_rest_in_place():
    lengths = (0.12, 0.27, 0.3)
    variant = move_joints(BASE, cranks(lengths), name="cranks")
    assert variant.name == "cranks" and variant.source is None
    for (joint, direction), length in zip(CRANKS.items(), lengths):
        spec = next(j for j in BASE.description.joints if j.name == joint)
        a, b = world(variant, spec.parent)[:3, 3], world(variant, spec.child)[:3, 3]
        assert np.linalg.norm(b - a) == pytest.approx(length, abs=1e-12)
        np.testing.assert_allclose(b, world(BASE, spec.child)[:3, 3] + (length - 0.2) * direction, atol=1e-12)

        # the centre of mass of the link after the elbow stays where it was in the world
        def com(robot, spec=spec):
            link = next(link for link in robot.description.links if link.name == spec.child)
            return world(robot, spec.child)[:3, :3] @ link.inertial.com

        np.testing.assert_allclose(
            com(variant) + world(variant, spec.child)[:3, 3], com(BASE) + world(BASE, spec.child)[:3, 3], atol=1e-12
        )
    # every frame that was not moved is where it was: the platform, the base joints, the loop ends
    for link in ("base_link", "limb1_link1", "limb2_link1", "limb3_link1", "platform"):
        np.testing.assert_allclose(world(variant, link), world(BASE, link), atol=1e-12)
    for new, old in zip(variant.loop_joints, BASE.loop_joints):
        np.testing.assert_allclose(
            initial_poses(variant)[new.parent] @ new.parent_frame,
            initial_poses(BASE)[old.parent] @ old.parent_frame,
            atol=1e-12,
        )
    assert all(res < 1e-12 for _, res in constraints(variant).residuals(variant.q0))  # still closed at q0


def test_moving_a_loop_joint_moves_both_ends():
    d = np.array([0.04, 0.0, -0.02])
    variant = move_joints(BASE, {"limb3_S": d})
    (old,), (new,) = ([lp for lp in r.loop_joints if lp.name == "limb3_S"] for r in (BASE, variant))
    for side in ("parent", "child"):
        before = initial_poses(BASE)[getattr(old, side)] @ getattr(old, f"{side}_frame")
        after = initial_poses(variant)[getattr(new, side)] @ getattr(new, f"{side}_frame")
        np.testing.assert_allclose(after[:3, 3], before[:3, 3] + d, atol=1e-12)
    np.testing.assert_array_equal(variant.origin, BASE.origin)
    assert all(res < 1e-12 for _, res in constraints(variant).residuals(variant.q0))


def test_a_floating_base_with_fixed_joints():
    """Go2: the calf moves, the foot fixed to it stays, and so does the mass of the calf's body (calf and foot lumped)."""
    go2 = robots.load("go2")
    d = np.array([0.01, 0.02, -0.03])
    variant = move_joints(go2, {"FL_calf_joint": d})
    np.testing.assert_allclose(world(variant, "FL_calf")[:3, 3], world(go2, "FL_calf")[:3, 3] + d, atol=1e-12)
    for link in ("base", "FL_thigh", "FL_foot", "FR_calf"):
        np.testing.assert_allclose(world(variant, link), world(go2, link), atol=1e-12)
    body = go2.body_index("FL_calf")

    def in_world(robot):  # pseudo-inertia (eq. 44) in the world frame
        return initial_poses(robot)[body] @ robot.inertial(body).pseudo_inertia() @ initial_poses(robot)[body].T

    np.testing.assert_allclose(in_world(variant), in_world(go2), atol=1e-12)
    assert variant.floating_base


def test_no_move_is_the_same_robot():
    same = move_joints(BASE, cranks((0.2, 0.2, 0.2)))
    np.testing.assert_allclose(same.origin, BASE.origin, atol=1e-15)
    for i in range(1, BASE.n + 1):
        np.testing.assert_allclose(same.inertial(i).com, BASE.inertial(i).com, atol=1e-15)


def test_move_joints_refuses_bad_arguments():
    with pytest.raises(ModelError, match="no joint or loop joint named 'elbow'.*limb1_R2"):
        move_joints(BASE, {"elbow": (0, 0, 0)})
    with pytest.raises(ModelError, match="offset of 'limb1_R2' must be 3 finite numbers"):
        move_joints(BASE, {"limb1_R2": (0, np.nan, 0)})
    with pytest.raises(ModelError, match="offset of 'limb1_R2'"):
        move_joints(BASE, {"limb1_R2": (0, 1)})


def test_a_crank_variant_is_certified_and_agrees_with_the_numerical_baseline():
    variant = move_joints(BASE, cranks((0.1, 0.25, 0.3)))
    result = drng.nullspace(variant)
    assert result.certified and result.dim == drng.numerical_nullspace(variant).dim == 45


# -- drng.nullspaces -------------------------------------------------------------------------------

VARIANTS = [cranks(lengths) for lengths in ((0.2, 0.2, 0.2), (0.1, 0.25, 0.3), (0.3, 0.12, 0.15), (0.35, 0.3, 0.05))]
BUILD = functools.partial(move_joints, BASE)


@functools.cache
def one_by_one():
    return [drng.nullspace(BUILD(offsets)) for offsets in VARIANTS]


def same(batch, single):
    assert len(batch) == len(single)
    for a, b in zip(batch, single):
        assert (a.robot_name, a.dim, a.status, a.method) == (b.robot_name, b.dim, b.status, b.method)
        np.testing.assert_allclose(a.basis, b.basis, atol=1e-12)


def test_in_this_process_equals_one_by_one():
    same(drng.nullspaces(VARIANTS, BUILD, jobs=1, chunksize=2), one_by_one())
    same(drng.nullspaces([BUILD(v) for v in VARIANTS], jobs=1), one_by_one())  # Robots
    same(drng.nullspaces([BUILD(v).description for v in VARIANTS], jobs=1), one_by_one())  # Descriptions


def test_a_process_pool_equals_one_by_one_in_order():
    """Two spawned workers, one robot per task, the input reversed: the results come back in its order."""
    items = VARIANTS[::-1]
    batch = drng.nullspaces(items, BUILD, jobs=2, chunksize=1)
    same(batch, one_by_one()[::-1])
    assert [r.certified for r in batch] == [True] * len(items)


def test_options_reach_every_robot():
    batch = drng.nullspaces(VARIANTS[:2], BUILD, jobs=1, certify=False)
    assert [r.status for r in batch] == ["not certified", "not certified"]
    assert [r.dim for r in batch] == [r.dim for r in one_by_one()[:2]]


def test_a_failure_names_the_robot_or_is_collected():
    items = [VARIANTS[0], VARIANTS[1], DEGENERATE, VARIANTS[2]]
    with pytest.raises(
        PgaDynError, match=r"robot 2 \('2rru_1rrs with limb1_R2 moved'\): ModelError: .*J_p is rank-deficient"
    ):
        drng.nullspaces(items, BUILD, jobs=1)
    out = drng.nullspaces(items, BUILD, jobs=1, errors="collect")
    assert isinstance(out[2], Failure) and out[2].index == 2 and out[2].input_error and out[2].error == "ModelError"
    assert "rank-deficient" in out[2].message and out[2].source is None
    same([out[k] for k in (0, 1, 3)], [one_by_one()[k] for k in (0, 1, 2)])


def test_a_failure_of_the_build_names_the_item():
    out = drng.nullspaces([{"limb1_R2": (0, 1)}], BUILD, jobs=1, errors="collect")
    assert out[0].robot == "{'limb1_R2': (0, 1)}" and "must be 3 finite numbers" in out[0].message
    with pytest.raises(RuntimeError, match=r"(?s)robot 0 .*ZeroDivisionError: a bug.*Traceback in the worker"):
        drng.nullspaces(["a.urdf"], broken_build, jobs=1)
    assert not drng.nullspaces(["a.urdf"], broken_build, jobs=1, errors="collect")[0].input_error


def test_warnings_are_reissued_with_the_index():
    singular = {"limb3_R2": (-0.03, 0.0, 0.45)}  # the reference configuration is singular: a warning, then certified
    with pytest.warns(PgaDynWarning, match=r"^robot 1: .*reference configuration .* is singular"):
        out = drng.nullspaces([VARIANTS[0], singular], BUILD, jobs=1)
    assert out[1].certified


def test_progress_counts_robots():
    seen = []
    with reporting(lambda *step: seen.append(step)):
        drng.nullspaces(VARIANTS[:3], BUILD, jobs=1, chunksize=1)
    assert seen == [("nullspaces", 1, 3), ("nullspaces", 2, 3), ("nullspaces", 3, 3)]


def test_an_executor_of_the_callers():
    """Any concurrent.futures executor; a task that fails as a whole names its robots."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as executor:
        same(drng.nullspaces(VARIANTS, BUILD, executor=executor, chunksize=2), one_by_one())
        compiled, loaded = executor.submit(compiled_in_a_worker, VARIANTS[1]).result()
        assert compiled == 0 and loaded > 5  # the worker loads numba's cache (filled by this process), compiles nothing
        with pytest.raises(RuntimeError, match=r"the task of robots 1 to 1 failed in the executor: .*pickle"):
            drng.nullspaces(
                [VARIANTS[0], lambda: None],
                lambda item: BUILD(item) if isinstance(item, dict) else BUILD(VARIANTS[0]),
                executor=executor,
            )


def test_bad_arguments():
    assert drng.nullspaces([]) == []
    for kwargs, match in (
        ({"sample": 3}, r"unknown option sample \(drng.nullspace takes certify, samples"),
        ({"errors": "skip"}, "errors must be one of"),
        ({"jobs": 0}, "jobs must be a positive"),
        ({"chunksize": 1.5}, "chunksize must be a positive"),
        ({"jobs": 2, "executor": concurrent.futures.ThreadPoolExecutor(1)}, "not both"),
    ):
        with pytest.raises(PgaDynError, match=match):
            drng.nullspaces(VARIANTS, BUILD, **kwargs)
    with pytest.raises(PgaDynError, match=r"robot 0 \('3'\): PgaDynError: expected a Robot"):
        drng.nullspaces([3], jobs=1)


def test_on_a_dask_cluster():
    """The optional extra (pip install ".[dask]", in the test extra too: a missing dask is a
    failure, not a skip): a local cluster of one worker process."""
    import distributed

    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        same(drng.nullspaces(VARIANTS, BUILD, executor=client, chunksize=2), one_by_one())
        out = drng.nullspaces([VARIANTS[0], DEGENERATE], BUILD, executor=client, errors="collect")
        assert isinstance(out[1], Failure) and out[1].index == 1
