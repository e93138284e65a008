"""Bad robot files: every problem raises PgaDynError naming the file and the element; mutated
valid files either load or raise PgaDynError, never anything else."""

import copy
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robots
from pga_dyn.errors import PgaDynError
from pga_dyn.model import Robot
from robots.urdf import load_urdf, parse_urdf

WHERE = "bad.urdf"

# A small valid URDF+ file using every element the reader knows.
FIXTURE = """<?xml version="1.0"?>
<robot name="fixture">
  <link name="base"/>
  <link name="l1">
    <inertial>
      <origin xyz="0.1 0 0" rpy="0 0.2 0"/>
      <mass value="1.5"/>
      <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.03"/>
    </inertial>
  </link>
  <link name="l2">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>
  </link>
  <link name="l3">
    <inertial><origin xyz="0 0 0.05"/><mass value="0.5"/><inertia ixx="0.002" iyy="0.002" izz="0.001"/></inertial>
  </link>
  <link name="tool">
    <inertial><mass value="0.2"/><inertia ixx="0.0001" iyy="0.0001" izz="0.0001"/></inertial>
  </link>
  <link name="l4">
    <inertial><origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/><mass value="2"/><inertia ixx="0.02" iyy="0.03" izz="0.04"/></inertial>
  </link>
  <link name="l5">
    <inertial><mass value="0.7"/><inertia ixx="0.001" iyy="0.001" izz="0.001"/></inertial>
  </link>
  <joint name="j1" type="revolute" independent="true">
    <parent link="base"/>
    <child link="l1"/>
    <origin xyz="0 0 0.3" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <joint name="j2" type="prismatic" independent="false">
    <parent link="l1"/>
    <child link="l2"/>
    <origin xyz="0.2 0 0" rpy="0 1.5707963267948966 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="0.5" effort="10" velocity="1"/>
  </joint>
  <joint name="j3" type="universal">
    <parent link="l2"/>
    <child link="l3"/>
    <origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/>
    <axis2 xyz="0 1 0"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="l3"/>
    <child link="tool"/>
    <origin xyz="0 0 0.1"/>
  </joint>
  <joint name="j4" type="continuous">
    <parent link="base"/>
    <child link="l4"/>
    <origin xyz="0.5 0 0"/>
    <axis xyz="0 1 0"/>
    <mimic joint="j1" multiplier="2" offset="0.1"/>
  </joint>
  <joint name="j5" type="spherical">
    <parent link="l4"/>
    <child link="l5"/>
    <origin xyz="0 0 0.2"/>
  </joint>
  <loop name="loop1" type="revolute">
    <predecessor link="tool"><origin xyz="0 0 0.1"/></predecessor>
    <successor link="l5"><origin xyz="0.1 0 0"/></successor>
    <axis xyz="0 0 1"/>
  </loop>
  <coupling name="c1" type="rolling">
    <predecessor link="l1"/>
    <successor link="l2"/>
    <ratio value="6.0"/>
  </coupling>
</robot>
"""

with open(robots.data_path("puma560"), encoding="utf-8") as _handle:
    PUMA = _handle.read()
from paths import FIVE_BAR_SPHERICAL, FOUR_BAR, ROTOR_CHAIN_6  # noqa: E402

SOURCES = [FIXTURE, PUMA]
for _path in (FOUR_BAR, FIVE_BAR_SPHERICAL, ROTOR_CHAIN_6):  # URDF+ loops (R and S) and couplings
    with open(_path, encoding="utf-8") as _handle:
        SOURCES.append(_handle.read())


def expect(text, *fragments, floating_base=False):
    """parse_urdf(text) raises PgaDynError naming the file and each fragment."""
    with pytest.raises(PgaDynError) as err:
        parse_urdf(text, WHERE, floating_base=floating_base)
    message = str(err.value)
    assert message.startswith(WHERE), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def sub(old, new, text=FIXTURE, count=1):
    assert old in text, old
    return text.replace(old, new, count)


def test_fixture_is_valid():
    robot = parse_urdf(FIXTURE, "fixture.urdf")
    assert robot.n == 5 and robot.nq == 1 + 1 + 2 + 1 + 3
    assert robot.joint_type[1:] == ("R", "P", "U", "R", "S")
    assert len(robot.loop_specs) == 1 and len(robot.couplings) == 2  # the <mimic> of j4 and <coupling> c1
    assert parse_urdf(FIXTURE, "fixture.urdf", floating_base=True).nq == robot.nq + 6


# -- one test per kind of error -----------------------------------------------------------


def test_malformed_xml():
    expect(FIXTURE[:200], "malformed XML", "line")
    expect("<robot name='x'><link name='a'></robot>", "malformed XML")
    expect("", "malformed XML")


def test_root_not_robot():
    expect("<model name='x'/>", "<model>")


def test_missing_link_in_joint():
    expect(sub('<child link="l2"/>', '<child link="nowhere"/>'), "'j2'", "'nowhere'")
    expect(sub('<parent link="l1"/>', '<parent link="ghost"/>'), "'j2'", "'ghost'")
    expect(sub('<child link="l2"/>', ""), "'j2'", "<child>")
    expect(sub('<parent link="l1"/>', "<parent/>"), "'j2'", "<parent>")


def test_unknown_joint_type():
    expect(sub('name="j2" type="prismatic"', 'name="j2" type="hinge"'), "'j2'", "'hinge'")
    expect(sub('name="j2" type="prismatic"', 'name="j2"'), "'j2'", "joint type")
    expect(sub('name="loop1" type="revolute"', 'name="loop1" type="weld"'), "'loop1'", "'weld'")


def test_cycle_outside_loop():
    cyclic = sub(
        "  <loop ",
        """  <link name="c1"/><link name="c2"/>
  <joint name="cj1" type="revolute"><parent link="c1"/><child link="c2"/><axis xyz="0 0 1"/></joint>
  <joint name="cj2" type="revolute"><parent link="c2"/><child link="c1"/><axis xyz="0 0 1"/></joint>
  <loop """,
    )
    expect(cyclic, "cycle", "'c1'", "'c2'", "<loop>")


def test_two_parents():
    two = sub(
        "  <loop ",
        """  <joint name="extra" type="revolute"><parent link="l4"/><child link="l2"/>
    <axis xyz="0 0 1"/></joint>
  <loop """,
    )
    expect(two, "'extra'", "'l2'", "already has parent joint 'j2'")


def test_separate_trees():
    expect(sub('<link name="base"/>', '<link name="base"/><link name="island"/>'), "2 separate trees", "'island'")


def test_zero_axis():
    expect(sub('<axis xyz="1 0 0"/>', '<axis xyz="0 0 0"/>'), "'j2'", "axis is zero")
    expect(sub('<axis2 xyz="0 1 0"/>', '<axis2 xyz="0 0 0"/>'), "'j3'", "axis is zero")
    loop_zero = sub('<axis xyz="0 0 1"/>\n  </loop>', '<axis xyz="0 0 0"/>\n  </loop>')
    expect(loop_zero, "'loop1'", "axis is zero")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "NaN", "1e400"])
def test_non_finite_axis(bad):
    expect(sub('<axis xyz="1 0 0"/>', f'<axis xyz="1 {bad} 0"/>'), "'j2'", "<axis>", "not finite")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e999"])
def test_non_finite_origin(bad):
    expect(sub('<origin xyz="0.2 0 0"', f'<origin xyz="0.2 {bad} 0"'), "'j2'", "<origin>", "not finite")
    expect(sub('rpy="0 1.5707963267948966 0"', f'rpy="0 {bad} 0"'), "'j2'", "<origin>", "not finite")
    expect(sub('<origin xyz="0.1 0 0" rpy="0 0.2 0"/>', f'<origin xyz="{bad} 0 0"/>'), "'l1'", "<origin>", "not finite")
    expect(
        sub('<successor link="l5"><origin xyz="0.1 0 0"/>', f'<successor link="l5"><origin xyz="{bad} 0 0"/>'),
        "'loop1'",
        "not finite",
    )


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_mass_and_inertia(bad):
    expect(sub('<mass value="1.5"/>', f'<mass value="{bad}"/>'), "'l1'", "<mass>", "not finite")
    expect(sub('ixx="0.01" ixy="0.001"', f'ixx="{bad}" ixy="0.001"'), "'l1'", "<inertia>", "not finite")


def test_overflowing_values():
    """Finite but huge numbers, whose products overflow, are refused naming the element."""
    huge = sub('ixx="0.01" ixy="0.001"', 'ixx="1e308" ixy="0.001"').replace('iyy="0.02"', 'iyy="1e308"')
    expect(huge, "'l1'", "<inertia>", "out of range")
    expect(sub('<origin xyz="0.1 0 0" rpy="0 0.2 0"/>', '<origin xyz="1e200 0 0"/>'), "'l1'", "out of range")
    expect(
        sub('<origin xyz="0.1 0 0" rpy="0 0.2 0"/>', '<origin xyz="0.1 0 0" rpy="0 1e10 0"/>'),
        "'l1'",
        "rpy",
        "out of range",
    )
    # A huge axis is a direction like any other.
    robot = parse_urdf(sub('<axis xyz="1 0 0"/>', '<axis xyz="1e200 0 0"/>'), WHERE)
    np.testing.assert_allclose(robot.axes[2, 0], (1, 0, 0))


def test_negative_mass():
    expect(sub('<mass value="1.5"/>', '<mass value="-1.5"/>'), "'l1'", "negative mass")


def test_loop_names_unknown_link():
    expect(sub('<successor link="l5">', '<successor link="l9">'), "'loop1'", "'l9'")
    expect(sub('<predecessor link="tool">', "<predecessor>"), "'loop1'", "<predecessor>")


def test_coupling_names_unknown_link():
    expect(sub('<successor link="l2"/>', '<successor link="l8"/>'), "'c1'", "'l8'")


def test_coordinate_following_two_couplings():
    expect(sub('<successor link="l2"/>', '<successor link="l4"/>'), "'c1'", "'j4'", "already follows")


@pytest.mark.parametrize(
    "old,new,fragments",
    [
        ('<origin xyz="0.2 0 0"', '<origin xyz="0.2 zero 0"', ("'j2'", "<origin>", "not a list of numbers")),
        ('<axis xyz="1 0 0"/>', '<axis xyz="1 0"/>', ("'j2'", "<axis>", "3 numbers")),
        ('<mass value="1.5"/>', '<mass value="heavy"/>', ("'l1'", "<mass>", "heavy")),
        ('<mass value="1.5"/>', "<mass/>", ("'l1'", "<mass>", "'value'")),
        ('izz="0.03"', 'izz="0.03 0"', ("'l1'", "<inertia>", "izz")),
        ('<ratio value="6.0"/>', '<ratio value="six"/>', ("'c1'", "<ratio>", "six")),
        ('independent="true"', 'independent="maybe"', ("'j1'", "independent", "maybe")),
        ('multiplier="2"', 'multiplier="two"', ("'j4'", "<mimic>", "two")),
    ],
)
def test_non_numeric_attribute(old, new, fragments):
    expect(sub(old, new), *fragments)


def test_duplicate_names():
    expect(sub('<link name="l5">', '<link name="l4">'), "'l4'", "defined twice")
    expect(sub('name="j5"', 'name="j4"'), "'j4'", "defined twice")


def test_missing_names():
    expect(sub('<link name="l5">', "<link>"), "<link>", "'name'")


def test_universal_needs_axis2():
    expect(sub('<axis2 xyz="0 1 0"/>', ""), "'j3'", "axis2")
    expect(sub('<axis2 xyz="0 1 0"/>', '<axis2 xyz="2 0 0"/>'), "'j3'", "parallel")


def test_bad_gravity():
    for gravity in [(0, 0), (0, np.nan, 0), (np.inf, 0, 0)]:
        with pytest.raises(PgaDynError, match="gravity"):
            parse_urdf(FIXTURE, WHERE, gravity=gravity)


def test_floating_base_with_world_link():
    expect(
        sub('<link name="base"/>', '<link name="world"/>', FIXTURE.replace('link="base"', 'link="world"')),
        "world",
        floating_base=True,
    )


def test_missing_file(tmp_path):
    missing = tmp_path / "nothere.urdf"
    with pytest.raises(PgaDynError, match="nothere.urdf") as err:
        load_urdf(missing)
    assert "cannot read" in str(err.value)
    with pytest.raises(PgaDynError, match="cannot read"):
        load_urdf(tmp_path)
    binary = tmp_path / "binary.urdf"
    binary.write_bytes(b"\xff\xfe\x00<robot/>")
    with pytest.raises(PgaDynError, match="binary.urdf"):
        load_urdf(binary)


def test_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_urdf("<robot", WHERE)


# -- mutation testing ---------------------------------------------------------------------

_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')

VALUES = st.one_of(
    st.sampled_from(
        [
            "nan",
            "inf",
            "-inf",
            "-1",
            "-0",
            "0",
            "1e308",
            "-1e308",
            "1e-320",
            "1e400",
            "",
            " ",
            "0 0",
            "1 2 3 4",
            "0 0 0",
            "nan 0 0",
            "0 inf 0",
            "1 1 1",
            "abc",
            "true",
            "false",
            "revolute",
            "fixed",
            "spherical",
            "universal",
            "floating",
            "prismatic",
            "base",
            "base_link",
            "link1",
            "l1",
            "world",
            "joint1",
            "&amp;",
            "<",
        ]
    ),
    st.floats().map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.lists(st.floats(), min_size=1, max_size=4).map(lambda v: " ".join(map(repr, v))),
    st.text(max_size=12),
)


def _delete(text, data):
    start = data.draw(st.integers(0, len(text)))
    length = data.draw(st.integers(1, 40))
    return text[:start] + text[start + length :]


def _attribute(text, data):
    spans = list(_ATTRIBUTE.finditer(text))
    if not spans:
        return text
    match = data.draw(st.sampled_from(spans))
    value = data.draw(VALUES)
    return text[: match.start(2)] + value + text[match.end(2) :]


def _elements(text):
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None, []
    parents = [(p, c) for p in root.iter() for c in p]
    return root, parents


def _remove(text, data):
    root, pairs = _elements(text)
    if not pairs:
        return text
    parent, child = data.draw(st.sampled_from(pairs))
    parent.remove(child)
    return ET.tostring(root, encoding="unicode")


def _duplicate(text, data):
    root, pairs = _elements(text)
    if not pairs:
        return text
    parent, child = data.draw(st.sampled_from(pairs))
    parent.insert(list(parent).index(child) + data.draw(st.integers(0, 1)), copy.deepcopy(child))
    return ET.tostring(root, encoding="unicode")


MUTATIONS = {"delete": _delete, "attribute": _attribute, "remove": _remove, "duplicate": _duplicate}


def check_loads_or_raises(text, floating_base):
    try:
        robot = parse_urdf(text, "mutant.urdf", floating_base=floating_base)
    except PgaDynError as exc:
        assert "mutant.urdf" in str(exc)
    else:
        assert isinstance(robot, Robot)
        assert robot.n == len(robot.body_names) and robot.num_parameters == 10 * robot.n
        assert np.all(np.isfinite(robot.origin)) and np.all(np.isfinite(robot.axes))
        for i in range(1, robot.n + 1):
            inertial = robot.inertial(i)
            assert np.isfinite(inertial.mass) and inertial.mass >= 0
            assert np.all(np.isfinite(inertial.com)) and np.all(np.isfinite(inertial.inertia))


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutation_loads_or_raises(kind, data):
    text = data.draw(st.sampled_from(SOURCES))
    text = MUTATIONS[kind](text, data)
    check_loads_or_raises(text, data.draw(st.booleans()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutations_combined_load_or_raise(data):
    text = data.draw(st.sampled_from(SOURCES))
    for kind in data.draw(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=2, max_size=5)):
        text = MUTATIONS[kind](text, data)
    check_loads_or_raises(text, data.draw(st.booleans()))
