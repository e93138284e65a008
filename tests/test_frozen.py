"""A Robot is frozen: every attribute, every array, record and graph entry reachable from it refuses
to change, and so do the values derived from it (Robot.derived), so that no result can go stale."""

import dataclasses
import inspect

import networkx as nx
import numpy as np
import pytest
from paths import FOUR_BAR, ROTOR_CHAIN_6

import drng
import pga_dyn
import robots
from drng.generator import kernel_arrays
from pga_dyn import kinematics
from pga_dyn.loops import constraints
from pga_dyn.model import ModelGraph, Robot
from pga_dyn.tp_regressor import link_map

MODELS = {
    "puma560": lambda: robots.load("puma560"),
    "go2": lambda: robots.load("go2"),
    "2rru_1rrs": lambda: robots.load("2rru_1rrs"),
    "four_bar": lambda: robots.load_urdf(FOUR_BAR),
    "rotor_chain_6": lambda: robots.load_urdf(ROTOR_CHAIN_6),
}
IMMUTABLE = (str, int, float, bool, type(None), np.integer, np.floating, np.bool_)


def refuses(change, errors=(AttributeError, TypeError, ValueError, nx.NetworkXError)):
    """Whether ``change()`` raises."""
    try:
        change()
    except errors:
        return True
    return False


def check_frozen(value, where, seen):
    """Try to change ``value`` and everything reachable from it; return the paths that changed."""
    if id(value) in seen or isinstance(value, IMMUTABLE):
        return []
    seen.add(id(value))
    failures = []
    if isinstance(value, np.ndarray):
        if value.size and not refuses(lambda: value.__setitem__((0,) * value.ndim, value.flat[0])):
            failures.append(where)
    elif isinstance(value, tuple):
        for k, item in enumerate(value):
            failures += check_frozen(item, f"{where}[{k}]", seen)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            if not refuses(lambda: setattr(value, f.name, getattr(value, f.name))):
                failures.append(f"{where}.{f.name} (set)")
            failures += check_frozen(getattr(value, f.name), f"{where}.{f.name}", seen)
    elif isinstance(value, ModelGraph):
        node, (u, v, key) = next(iter(value.nodes)), next(iter(value.edges(keys=True)))
        for name, change in (
            ("add_node", lambda: value.add_node("x")),
            ("add_edge", lambda: value.add_edge(u, "x")),
            ("remove_node", lambda: value.remove_node(node)),
            ("remove_edge", lambda: value.remove_edge(u, v, key)),
            ("graph attribute", lambda: value.graph.__setitem__("x", 1)),
        ):
            if not refuses(change):
                failures.append(f"{where}.{name}")
        for n, data in value.nodes(data=True):
            failures += check_frozen(data, f"{where}.nodes[{n!r}]", seen)
        for u, v, key, data in value.edges(keys=True, data=True):
            failures += check_frozen(data, f"{where}.edges[{u!r}, {v!r}, {key!r}]", seen)
    elif isinstance(value, dict):
        for key in list(value):
            item = value[key]  # each change puts the item back when it succeeds
            for name, change in (
                ("set", lambda: value.__setitem__(key, item)),
                ("update", lambda: value.update({key: item})),
                ("delete", lambda: (value.__delitem__(key), value.__setitem__(key, item))),
                ("pop", lambda: value.__setitem__(key, value.pop(key))),
            ):
                if not refuses(change):
                    failures.append(f"{where}[{key!r}] ({name})")
            failures += check_frozen(value[key], f"{where}[{key!r}]", seen)
    else:
        failures.append(f"{where}: a {type(value).__name__} that the test does not know")
    return failures


def public_attributes(robot):
    """Every public data attribute and property of a Robot (methods left out)."""
    return [name for name in dir(robot) if not name.startswith("_") and not inspect.ismethod(getattr(robot, name))]


@pytest.mark.parametrize("name", MODELS)
def test_every_attribute_refuses_to_change(name):
    robot = MODELS[name]()
    attributes = public_attributes(robot)
    assert {
        "graph",
        "origin",
        "axes",
        "parent",
        "gravity",
        "tree_joints",
        "loop_specs",
        "loop_joints",
        "couplings",
        "actuated",
        "passive",
        "q_index",
        "body_names",
    } <= set(attributes)
    failures = []
    for attribute in attributes:
        value = getattr(robot, attribute)
        if not refuses(lambda: setattr(robot, attribute, value), AttributeError):
            failures.append(f"robot.{attribute} (rebound)")
        if attribute != "q0":  # a fresh array on every read
            failures += check_frozen(value, f"robot.{attribute}", set())
    for i in range(robot.n + 1):
        for link in robot.graph.nodes[robot.graph_name(i)]["links"]:
            failures += check_frozen(robot.link_pose(link), f"link_pose({link!r})", set())
    assert refuses(lambda: delattr(robot, "origin"), AttributeError)
    assert not failures, failures


@pytest.mark.parametrize("name", MODELS)
def test_derived_values_refuse_to_change(name):
    robot = MODELS[name]()
    values = {
        "robot_arrays": kinematics.robot_arrays(robot),
        "initial_poses": kinematics.initial_poses(robot),
        "inverse_initial_poses": kinematics.inverse_initial_poses(robot),
        "link_map": link_map(robot),
        "drng kernel_arrays": kernel_arrays(robot),
    }
    if robot.constrained:
        con = constraints(robot)
        values.update({f"constraints.{k}": v for k, v in vars(con).items() if k != "robot"})
    failures = []
    for where, value in values.items():
        failures += check_frozen(value, where, set())
    assert not failures, failures


def test_q0_is_a_fresh_array():
    robot = MODELS["puma560"]()
    robot.q0[:] = 1.0
    assert not robot.q0.any()


def test_results_do_not_go_stale():
    """The review's case: rebinding robot.origin after a regressor call used to leave the next result
    unchanged; now neither rebinding nor writing in place is possible, and the cached arrays are
    the robot's own."""
    robot = MODELS["puma560"]()
    Y = pga_dyn.regressor(robot, np.ones(6), np.ones(6), np.ones(6))
    with pytest.raises(AttributeError, match="frozen"):
        robot.origin = robot.origin.copy()
    with pytest.raises(ValueError, match="read-only"):
        robot.origin[1, 0, 3] = 5.0
    with pytest.raises(TypeError, match="frozen"):
        robot.graph.nodes[robot.body_names[0]]["inertial"] = None
    assert kinematics.robot_arrays(robot).origin is robot.origin
    np.testing.assert_array_equal(pga_dyn.regressor(robot, np.ones(6), np.ones(6), np.ones(6)), Y)
    assert drng.nullspace(robot, certify=False).dim == 24


def test_the_check_sees_a_mutable_value():
    """check_frozen reports what can change: a writeable array, a plain dict, an unfrozen dataclass."""

    @dataclasses.dataclass
    class Loose:
        x: int

    assert check_frozen(np.zeros(2), "a", set()) == ["a"]
    assert check_frozen({"k": 1}, "d", set()) == ["d['k'] (set)", "d['k'] (update)", "d['k'] (delete)", "d['k'] (pop)"]
    assert check_frozen(Loose(1), "l", set()) == ["l.x (set)"]
    assert check_frozen([1], "list", set()) == ["list: a list that the test does not know"]
    assert isinstance(MODELS["four_bar"](), Robot)
