"""Joint limits of -1e16 / 1e16, Gazebo's "unbounded" (SDFormat's default limits, written into URDF
by its exporters, as in example-robot-data's iris.urdf): read as -inf / +inf, sampled over a window
of the default range's width, and named by `pga-dyn info`. The fixture is written by the test."""

import numpy as np
import pytest

import drng
import robots
from pga_dyn.cli import main
from pga_dyn.errors import PgaDynError
from pga_dyn.sampling import default_bounds

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.2" izz="0.3"/></inertial>'


def urdf(limits):
    """A chain base - R (about z) - P (along x) - P (along y) - R (about x), limits[k] the <limit>
    attributes of joint k (None: no <limit>)."""
    joints = [("revolute", "0 0 1"), ("prismatic", "1 0 0"), ("prismatic", "0 1 0"), ("revolute", "1 0 0")]
    text = ['<robot name="unbounded">', '<link name="l0"/>']
    for k, ((kind, axis), limit) in enumerate(zip(joints, limits), start=1):
        element = "" if limit is None else f'<limit lower="{limit[0]}" upper="{limit[1]}" effort="1" velocity="1"/>'
        text += [
            f'<link name="l{k}">{INERTIAL}</link>',
            f'<joint name="j{k}" type="{kind}"><parent link="l{k - 1}"/><child link="l{k}"/>'
            f'<origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="{axis}"/>{element}</joint>',
        ]
    return "\n".join(text + ["</robot>"])


GAZEBO = [("-1e+16", "1e+16"), ("-0.2", "1e16"), ("-1e16", "1e16"), ("-10000000000000000", "-0.5")]


@pytest.fixture
def fixture(tmp_path):
    path = tmp_path / "unbounded.urdf"
    path.write_text(urdf(GAZEBO), encoding="utf-8")
    return path


def test_read_as_infinite(fixture):
    robot = robots.load_urdf(fixture)
    got = [joint.limits for joint in robot.tree_joints]
    assert got == [(-np.inf, np.inf), (-0.2, np.inf), (-np.inf, np.inf), (-np.inf, -0.5)]


def test_sampling_box():
    """The stated rule, by hand: a window as wide as the default range ((-pi, pi) for R, (-1, 1) m
    for P) holding it where the limits allow, else ending at the finite side."""
    robot = robots.parse_urdf(urdf(GAZEBO), "unbounded.urdf")
    expected = [(-np.pi, np.pi), (-0.2, 1.8), (-1.0, 1.0), (-0.5 - 2 * np.pi, -0.5)]
    np.testing.assert_allclose(default_bounds(robot), expected, rtol=0, atol=1e-15)


def test_same_answer_as_without_limits():
    """The limits change no structure: the proven nullspace and the sampled certificate equal those
    of the same chain without <limit>."""
    unbounded = drng.nullspace(robots.parse_urdf(urdf(GAZEBO), "unbounded.urdf"), certify=True)
    free = drng.nullspace(robots.parse_urdf(urdf([None] * 4), "free.urdf"), certify=True)
    assert unbounded.certified and free.certified
    assert unbounded.dim == free.dim


@pytest.mark.parametrize(
    "lower,upper,bad",
    [
        ("1e16", "2e16", "lower='1e16'"),
        ("-1e15", "1", "lower='-1e15'"),
        ("0", "-1e16", "upper='-1e16'"),
        ("-1e17", "0", "lower='-1e17'"),
    ],
)
def test_other_huge_values_still_refused(lower, upper, bad):
    """Only -1e16 as a lower limit and 1e16 as an upper limit mean "unbounded"."""
    with pytest.raises(PgaDynError, match=rf"bad.urdf: <joint name='j1'>/<limit>: attribute {bad} is out of range"):
        robots.parse_urdf(urdf([(lower, upper), None, None, None]), "bad.urdf")


def test_info_says_unbounded(fixture, capsys):
    assert main(["info", str(fixture)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    line = next(line for line in out.splitlines() if line.startswith("unbounded joint limits"))
    assert line.endswith("j1 [-inf, inf], j2 [-0.2, inf], j3 [-inf, inf], j4 [-inf, -0.5]")
    assert "Gazebo" in line
    assert main(["info", "puma560"]) == 0
    assert "unbounded" not in capsys.readouterr().out
