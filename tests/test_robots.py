"""The built-in robots: Puma560 against its standard-DH table, Go2 against the public description."""

import importlib.util
import os

import numpy as np
import pinocchio as pin  # noqa: E402  (the test extra installs it: a missing oracle is a failure)
import pytest

import robots
from pga_dyn.errors import PgaDynError

# Corke and Armstrong-Helouvry (1994), standard DH (their consensus table; docs/robots.md):
# d, a, alpha, mass, COM in DH frame {i}, principal inertias about the COM.
PUMA = [
    (0.6718, 0.0, np.pi / 2, 0.0, (0, 0, 0), (0, 0.35, 0)),
    (0.0, 0.4318, 0.0, 17.4, (-0.3638, 0.006, 0.2275), (0.13, 0.524, 0.539)),
    (0.15005, 0.0203, -np.pi / 2, 4.8, (-0.0203, -0.0141, 0.070), (0.066, 0.086, 0.0125)),
    (0.4318, 0.0, np.pi / 2, 0.82, (0, 0.019, 0), (1.8e-3, 1.3e-3, 1.8e-3)),
    (0.0, 0.0, -np.pi / 2, 0.34, (0, 0, 0), (0.3e-3, 0.4e-3, 0.3e-3)),
    (0.0, 0.0, 0.0, 0.09, (0, 0, 0.032), (0.15e-3, 0.15e-3, 0.04e-3)),
]


def rz(t):
    c, s = np.cos(t), np.sin(t)
    m = np.eye(4)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def rx(t):
    c, s = np.cos(t), np.sin(t)
    m = np.eye(4)
    m[1:3, 1:3] = [[c, -s], [s, c]]
    return m


def trans(x, y, z):
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def dh_link(d, a, alpha):
    """Tz(d) Tx(a) Rx(alpha): the constant part of the standard-DH transform."""
    return trans(0, 0, d) @ trans(a, 0, 0) @ rx(alpha)


def dh_frames(q):
    """Poses of DH frames {1}..{6} in frame {0}: T_i = Rz(q_i) Tz(d_i) Tx(a_i) Rx(alpha_i)."""
    t, frames = np.eye(4), []
    for qi, (d, a, alpha, *_) in zip(q, PUMA):
        t = t @ rz(qi) @ dh_link(d, a, alpha)
        frames.append(t)
    return frames


def se3(m):
    return m.homogeneous if hasattr(m, "homogeneous") else np.asarray(m)


def go2_source():
    """The public Go2 description of example-robot-data, which tests/make_go2.py converts."""
    from oracle import erd_path

    return erd_path("go2_description/urdf/go2.urdf")


# -- loading --------------------------------------------------------------------------------


def test_available():
    assert robots.available() == [
        "2prs_1psr",
        "2rru_1rrs",
        "3prs",
        "3rrr",
        "3ups_1up",
        "6sps",
        "6ups",
        "delta",
        "five_bar",
        "go2",
        "parallelogram",
        "puma560",
        "quadruped_fourbar",
    ]
    for name in robots.available():
        assert os.path.exists(robots.data_path(name))


def test_unknown_name():
    with pytest.raises(PgaDynError, match="go2, parallelogram, puma560") as err:
        robots.load("puma561")
    assert "puma561" in str(err.value)


def test_puma560_loads():
    robot = robots.load("puma560")
    assert robot.n == 6 and robot.num_parameters == 60 and robot.nq == 6
    assert robot.coordinate_names == tuple(f"joint{i}" for i in range(1, 7))
    assert not robot.floating_base
    assert set(robot.joint_type[1:]) == {"R"}
    np.testing.assert_array_equal(robot.gravity, (0, 0, -9.81))
    # Joint 1 turns about the base z axis, so default gravity is along it.
    np.testing.assert_allclose(robot.origin[1], np.eye(4))
    np.testing.assert_allclose(robot.axes[1, 0], (0, 0, 1))
    assert robots.load("PUMA560", gravity=(9.81, 0, 0)).gravity[0] == 9.81


def test_go2_loads():
    robot = robots.load("go2")
    assert robot.floating_base
    assert robot.n == 13 and robot.num_parameters == 130 and robot.nq == 18
    assert robot.joint_type[1] == "F" and robot.joint_type[2:].count("R") == 12
    assert robot.coordinate_names[6:9] == ("FL_hip_joint", "FL_thigh_joint", "FL_calf_joint")
    fixed = robots.load("go2", floating_base=False)
    assert fixed.n == 12 and fixed.nq == 12 and fixed.num_parameters == 120
    # The rotors are merged: none of the generated file's links is a rotor.
    links = [link for body in robot.graph.nodes for link in robot.graph.nodes[body]["links"]]
    assert not any(link.endswith("_rotor") for link in links)


def test_puma560_load_accepts_floating():
    robot = robots.load("puma560", floating_base=True)
    assert robot.n == 7 and robot.nq == 12


# -- Puma560 against the DH table and Pinocchio -------------------------------------------


@pytest.fixture(scope="module")
def puma_pin():
    model = pin.buildModelFromUrdf(robots.data_path("puma560"))
    return model, model.createData()


def test_puma560_kinematics_equal_dh(puma_pin):
    model, data = puma_pin
    assert [model.names[i] for i in range(1, model.njoints)] == [f"joint{i}" for i in range(1, 7)]
    rng = np.random.default_rng(3)
    for q in [np.zeros(6), *rng.uniform(-np.pi, np.pi, (20, 6))]:
        pin.framesForwardKinematics(model, data, q)
        frames = dh_frames(q)
        for i in range(1, 7):
            link = se3(data.oMf[model.getFrameId(f"link{i}")])
            # DH frame {i} = link_i composed with Tz(d_i) Tx(a_i) Rx(alpha_i).
            np.testing.assert_allclose(link @ dh_link(*PUMA[i - 1][:3]), frames[i - 1], atol=1e-12)
        # The end effector (DH frame {6}) is link6 itself for the Puma (d6 = a6 = alpha6 = 0).
        np.testing.assert_allclose(se3(data.oMf[model.getFrameId("link6")]), frames[5], atol=1e-12)


def test_puma560_inertials_equal_table(puma_pin):
    model, _ = puma_pin
    robot = robots.load("puma560")
    for i, (d, a, alpha, mass, com, principal) in enumerate(PUMA, start=1):
        a_i = dh_link(d, a, alpha)
        rot = a_i[:3, :3]
        # Pinocchio's reading of the file.
        inertia = model.inertias[i]
        assert inertia.mass == pytest.approx(mass, abs=1e-15)
        if mass > 0:
            np.testing.assert_allclose(np.linalg.solve(a_i, [*inertia.lever, 1])[:3], com, atol=1e-12)
        np.testing.assert_allclose(rot.T @ inertia.inertia @ rot, np.diag(principal), atol=1e-12)
        # pga-dyn's reading of the file (the body frame is the link frame).
        body = robot.inertial(i)
        assert body.mass == pytest.approx(mass, abs=1e-15)
        if mass > 0:
            np.testing.assert_allclose(np.linalg.solve(a_i, [*body.com, 1])[:3], com, atol=1e-12)
        np.testing.assert_allclose(rot.T @ body.inertia @ rot, np.diag(principal), atol=1e-12)


def test_puma560_link1_massless_inertia_kept(puma_pin):
    """Link 1 has mass 0 and Iyy = 0.35 about the joint-1 axis; both readers keep it."""
    model, _ = puma_pin
    np.testing.assert_allclose(model.inertias[1].inertia, np.diag([0, 0, 0.35]), atol=1e-15)
    np.testing.assert_allclose(robots.load("puma560").inertial(1).inertia, np.diag([0, 0, 0.35]), atol=1e-15)


@pytest.mark.parametrize("gravity", [(0.0, 0.0, -9.81), (9.81, 0.0, 0.0)])
def test_puma560_regressor_equals_pinocchio(gravity):
    from oracle import Oracle, random_states

    from pga_dyn import tp_regressor as tp

    robot = robots.load("puma560", gravity=gravity)
    oracle = Oracle(robot, robots.data_path("puma560"))
    Q, QD, QDD = random_states(robot, 3, seed=5)
    Y = tp.regressor(robot, Q, QD, QDD)
    pi = tp.inertial_parameters(robot)
    for s in range(3):
        tau = oracle.rnea(Q[s], QD[s], QDD[s])
        assert np.linalg.norm(Y[s] @ pi - tau) <= 1e-9 * np.linalg.norm(tau)


# -- Go2: generated file against the public description ----------------------------------


def make_go2():
    """The generator of robots/data/go2.urdf (tests/make_go2.py: a maintainer's script, not installed)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_go2.py")
    spec = importlib.util.spec_from_file_location("make_go2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_go2_generated_file_is_current():
    """robots/data/go2.urdf is what tests/make_go2.py makes of the public file: the same text but
    for the last digit of lumped inertias (the parallel-axis sums round differently with other
    numpy builds), numbers equal to 1e-13."""
    import re

    generate = make_go2().generate
    number = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")
    with open(go2_source(), encoding="utf-8") as handle:
        text = generate(handle.read(), "go2.urdf")
    with open(robots.data_path("go2"), encoding="utf-8") as handle:
        shipped = handle.read()
    stale = "robots/data/go2.urdf is stale: rerun python tests/make_go2.py"
    assert number.sub("#", shipped) == number.sub("#", text), stale
    a, b = (np.array([float(x) for x in number.findall(t)]) for t in (shipped, text))
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=0, err_msg=stale)


def test_go2_rnea_equals_original():
    original = pin.buildModelFromUrdf(go2_source(), pin.JointModelFreeFlyer())
    generated = pin.buildModelFromUrdf(robots.data_path("go2"), pin.JointModelFreeFlyer())
    assert list(original.names) == list(generated.names)
    assert original.nq == generated.nq == 19 and generated.nv == 18
    assert sum(i.mass for i in generated.inertias) == pytest.approx(sum(i.mass for i in original.inertias))
    d_orig, d_gen = original.createData(), generated.createData()
    rng = np.random.default_rng(11)
    for gravity in [(0, 0, -9.81), (1.2, -3.4, -8.5)]:
        original.gravity.linear = generated.gravity.linear = np.array(gravity, dtype=float)
        for _ in range(5):
            q = pin.randomConfiguration(original, -np.ones(19), np.ones(19))
            v, a = rng.normal(size=(2, 18))
            tau_orig = pin.rnea(original, d_orig, q, v, a)
            tau_gen = pin.rnea(generated, d_gen, q, v, a)
            np.testing.assert_allclose(tau_gen, tau_orig, rtol=0, atol=1e-10 * np.linalg.norm(tau_orig))


def test_lump_is_the_parallel_axis_sum():
    """pga_dyn.model.lump (the pseudo-inertia sum that the model and the Go2 generator use) equals
    the textbook sum: total mass, mass-weighted centre, inertias moved by the parallel-axis theorem."""
    from pga_dyn.model import Inertial, lump

    rng = np.random.default_rng(2)
    parts, moved = [], []
    for _ in range(3):
        b = rng.normal(size=(3, 3))
        m, c, j = rng.uniform(0.1, 2), rng.normal(size=3), b @ b.T
        pose = np.eye(4)
        rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        pose[:3, :3] = rotation * np.sign(np.linalg.det(rotation))  # det +1
        pose[:3, 3] = rng.normal(size=3)
        parts.append((Inertial(m, c, j), pose))
        moved.append((m, pose[:3, :3] @ c + pose[:3, 3], pose[:3, :3] @ j @ pose[:3, :3].T))
    mass = sum(m for m, _, _ in moved)
    com = sum(m * c for m, c, _ in moved) / mass
    inertia = sum(j + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, j in moved)
    got = lump(parts)
    assert got.mass == pytest.approx(mass)
    np.testing.assert_allclose(got.com, com, atol=1e-12)
    np.testing.assert_allclose(got.inertia, inertia, atol=1e-12)


def test_builtin_source_names_where_a_built_in_robot_comes_from(tmp_path):
    """Every built-in robot's file has a source (the Puma's is the published table its header
    cites); a copy of that file, a robot without a file and any other file have none."""
    import shutil

    sources = {name: robots.builtin_source(robots.data_path(name)) for name in robots.available()}
    assert all(sources.values()), sources
    header = open(robots.data_path("puma560"), encoding="utf-8").read().split("-->")[0]
    assert "Armstrong-Helouvry" in header and "1994" in header
    assert "Corke and Armstrong-Helouvry" in sources["puma560"] and "1994" in sources["puma560"]
    copy = shutil.copy(robots.data_path("puma560"), tmp_path / "puma560.urdf")
    assert robots.builtin_source(copy) is None and robots.builtin_source(None) is None
    assert robots.builtin_source(robots.load("puma560").source) == sources["puma560"]
