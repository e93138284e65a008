"""Robot files for the fuzz suite: valid URDF / URDF+ texts and their mutations, and the run of
one file through every public entry point.

A case is drawn by :func:`random_case` from a ``pick(options)`` function that returns one of its
options (``hypothesis`` passes ``lambda o: draw(st.sampled_from(o))``, ``benchmarks/fuzz.py`` a
numpy generator), as in ``tests/random_trees.py``:

* a valid file: a random tree written as URDF (:func:`tree_urdf`: 0-5 moving bodies; revolute,
  continuous, prismatic, fixed, spherical, universal joints; limits, mimics, skew axes and
  rotated inertias), or one of the project's own URDF+ files (the PKMs and linkages of
  ``robots/data`` and ``tests/fixtures``);
* a gravity vector (:data:`GRAVITIES`: mostly the default, some huge or not finite);
* then up to three mutations (:data:`MUTATIONS`): deleted, duplicated and swapped elements;
  NaN, inf, huge, tiny, negative and malformed numbers; non-PSD inertias; cycles; unknown links;
  changed joint types; every joint passive; no joints; truncated or broken XML; an empty file;
  binary bytes.

:func:`run_case` writes the file, loads it and runs ``drng.nullspace``, ``pga_dyn.regressor``,
``sample_states``, ``drng.numerical_nullspace``, ``drng.rpna``, ``drng.base_parameters``,
``drng.classify`` and the CLI's ``analyze`` on it, and returns the outcome: "answered" (every
step gave a finite answer or a clear refusal after the robot loaded), "refused" (the file or
model was refused with a PgaDynError), "escaped" (another exception), "nan" (a non-finite value in
a result) or "over budget" (slower than the limit).
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import os
import time
import traceback
import xml.etree.ElementTree as ET

import numpy as np
from paths import FIXTURES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The project's own robot files: the built-in models and the URDF+ fixtures (loops, couplings).
SEED_FILES = tuple(
    os.path.join(ROOT, "robots", "data", name)
    for name in ("puma560.urdf", "go2.urdf", "2rru_1rrs.urdf", "2prs_1psr.urdf")
) + tuple(
    str(FIXTURES / name)
    for name in (
        "four_bar.urdf",
        "six_bar.urdf",
        "leg_linkage.urdf",
        "five_bar_spherical.urdf",
        "rotor_chain_6.urdf",
        "rotor_chain_50.urdf",
    )
)

AXES = ("0 0 1", "1 0 0", "0 1 0", "0.6 0 0.8", "0.48 -0.6 0.64")
XYZ = ("0 0 0", "0 0 0.4", "0.3 0 0", "0 0.2 0.1", "0.1 -0.2 0.3")
RPY = ("0 0 0", "1.5707963 0 0", "0 1.5707963 0", "0.3 0.2 -0.4")
MASSES = ("0", "0.5", "1.5", "4")
INERTIAS = (
    ("0.1", "0", "0", "0.2", "0", "0.3"),
    ("0.02", "0.001", "-0.002", "0.03", "0.001", "0.04"),
    ("0", "0", "0", "0", "0", "0"),
    ("0.1", "0", "0", "0.1", "0", "0.1"),
)
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "spherical", "universal")
#: Gravity vectors: the default, none, skew, and bad ones (huge, not finite).
GRAVITIES = ((0.0, 0.0, -9.81),) * 6 + (
    (0.0, 0.0, 0.0),
    (3.0, -4.0, -8.0),
    (1e300, 0.0, 0.0),
    (0.0, float("nan"), 0.0),
    (0.0, 0.0, -1e12),
)
#: Separator of the errors of one run.
SEPARATOR = "\n=====\n"
#: Values that replace a number: non-finite, huge, tiny, negative, zero, malformed.
BAD_NUMBERS = (
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "1e-320",
    "-1",
    "-1e6",
    "0",
    "1e6",
    "abc",
    "",
    "1 2",
    "0x10",
    "1e400",
)


def tree_urdf(pick, max_bodies: int = 5) -> str:
    """A valid URDF text of a random tree: links l0..ln, joint j_k carries l_k."""
    n = pick(tuple(range(0, max_bodies + 1)))
    lines = ['<?xml version="1.0"?>', '<robot name="fuzz">']
    for k in range(n + 1):
        if pick((True, True, True, False)):
            ixx, ixy, ixz, iyy, iyz, izz = pick(INERTIAS)
            lines.append(
                f'  <link name="l{k}"><inertial><origin xyz="{pick(XYZ)}" rpy="{pick(RPY)}"/>'
                f'<mass value="{pick(MASSES)}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" '
                f'iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial></link>'
            )
        else:
            lines.append(f'  <link name="l{k}"/>')
    movable = []
    for k in range(1, n + 1):
        parent = k - 1 if pick((True, True, False)) else pick(tuple(range(k)))
        kind = pick(JOINT_TYPES)
        body = [
            f'<parent link="l{parent}"/>',
            f'<child link="l{k}"/>',
            f'<origin xyz="{pick(XYZ)}" rpy="{pick(RPY)}"/>',
        ]
        if kind in ("revolute", "continuous", "prismatic", "universal"):
            first = pick(AXES)
            body.append(f'<axis xyz="{first}"/>')
            if kind == "universal":
                body.append(f'<axis2 xyz="{pick(tuple(a for a in AXES if a != first))}"/>')
        if kind in ("revolute", "prismatic") and pick((True, False)):
            body.append(
                f'<limit lower="{pick(("-1", "-0.5", "0"))}" upper="{pick(("0", "0.5", "2"))}" '
                'effort="1" velocity="1"/>'
            )
        if kind in ("revolute", "continuous", "prismatic") and movable and pick((False,) * 5 + (True,)):
            body.append(f'<mimic joint="{pick(tuple(movable))}" multiplier="{pick(("1", "-2", "0.5"))}"/>')
        elif kind in ("revolute", "continuous", "prismatic"):
            movable.append(f"j{k}")
        lines.append(f'  <joint name="j{k}" type="{kind}">' + "".join(body) + "</joint>")
    lines.append("</robot>")
    return "\n".join(lines)


def valid_text(pick) -> str:
    """A valid robot file: a random tree (three times in four) or one of :data:`SEED_FILES`."""
    if pick((True, True, True, False)):
        return tree_urdf(pick)
    with open(pick(SEED_FILES), encoding="utf-8") as handle:
        return handle.read()


# -- mutations: each takes (root element, pick) and changes the tree in place ----------------------
def _elements(root, tag=None):
    return [el for el in root.iter(tag) if el is not root]


def _parents(root):
    return {child: parent for parent in root.iter() for child in parent}


def delete(root, pick):
    elements = _elements(root)
    if elements:
        el = pick(tuple(elements))
        _parents(root)[el].remove(el)


def duplicate(root, pick):
    elements = _elements(root)
    if elements:
        el = pick(tuple(elements))
        _parents(root)[el].append(copy.deepcopy(el))


def swap(root, pick):
    """Swap two elements of the same tag (their contents and attributes), or a joint's parent and child."""
    if pick((True, False)):
        joints = [j for j in _elements(root, "joint") if j.find("parent") is not None and j.find("child") is not None]
        if joints:
            j = pick(tuple(joints))
            a, b = j.find("parent"), j.find("child")
            a.attrib, b.attrib = b.attrib, a.attrib
        return
    elements = _elements(root)
    if len(elements) > 1:
        a = pick(tuple(elements))
        same = [el for el in elements if el.tag == a.tag and el is not a]
        if same:
            b = pick(tuple(same))
            a.attrib, b.attrib = dict(b.attrib), dict(a.attrib)


def _numeric(root):
    out = []
    for el in _elements(root):
        for key, value in el.attrib.items():
            try:
                [float(v) for v in value.split()]
            except ValueError:
                continue
            if value.strip():
                out.append((el, key))
    return out


def bad_number(root, pick):
    found = _numeric(root)
    if found:
        el, key = pick(tuple(found))
        values = el.get(key).split()
        values[pick(tuple(range(len(values))))] = pick(BAD_NUMBERS)
        el.set(key, " ".join(values))


def huge_scale(root, pick):
    """Multiply every number of one attribute by a huge or tiny factor (a model in the wrong units)."""
    found = _numeric(root)
    if found:
        el, key = pick(tuple(found))
        factor = pick((1e150, 1e300, 1e-300, -1e10))
        el.set(key, " ".join(repr(float(v) * factor) for v in el.get(key).split()))


def non_psd(root, pick):
    inertias = _elements(root, "inertia")
    if inertias:
        el = pick(tuple(inertias))
        key, value = pick((("ixx", "-1"), ("ixy", "10"), ("izz", "1e-9"), ("iyz", "-5"), ("ixx", "100")))
        el.set(key, value)


def cycle(root, pick):
    """A joint whose child is the root link, or another joint's parent."""
    joints = [j for j in _elements(root, "joint") if j.find("child") is not None]
    links = [el.get("name") for el in _elements(root, "link") if el.get("name")]
    if joints and links:
        pick(tuple(joints)).find("child").set("link", pick(tuple(links)))


def unknown_link(root, pick):
    refs = [el for el in _elements(root) if "link" in el.attrib]
    if refs:
        pick(tuple(refs)).set("link", pick(("nowhere", "", "l99")))


def joint_type(root, pick):
    joints = _elements(root, "joint") + _elements(root, "loop")
    if joints:
        pick(tuple(joints)).set("type", pick(JOINT_TYPES + ("floating", "planar", "", "ball", "screw")))


def all_passive(root, pick):
    for j in _elements(root, "joint"):
        j.set("independent", "false")


def no_joints(root, pick):
    for tag in ("joint", "loop", "coupling"):
        for el in _elements(root, tag):
            _parents(root)[el].remove(el)


def flag(root, pick):
    joints = _elements(root, "joint")
    if joints:
        pick(tuple(joints)).set("independent", pick(("true", "false", "maybe")))


MUTATIONS = (
    delete,
    duplicate,
    swap,
    bad_number,
    huge_scale,
    non_psd,
    cycle,
    unknown_link,
    joint_type,
    all_passive,
    no_joints,
    flag,
)
#: Mutations of the text itself.
TEXT_MUTATIONS = ("truncate", "garbage", "empty", "binary", "root")


def mutate_text(text: str, kind: str, pick) -> bytes:
    if kind == "truncate":
        return text[: pick(tuple(range(0, len(text), max(1, len(text) // 40))))].encode()
    if kind == "garbage":
        at = pick(tuple(range(0, len(text), max(1, len(text) // 40))))
        return (text[:at] + pick(("<", "</robot>", "&bogus;", "<link name=", "\x00")) + text[at:]).encode()
    if kind == "empty":
        return b""
    if kind == "binary":
        return bytes(pick(tuple(range(256))) for _ in range(64))
    return text.replace("<robot", "<robott", 1).replace("</robot>", "</robott>").encode()


def random_case(pick) -> tuple:
    """(file contents as bytes, floating base, gravity, description of the mutations)."""
    text = valid_text(pick)
    done = []
    gravity = pick(GRAVITIES)
    if pick((False,) * 9 + (True,)):
        kind = pick(TEXT_MUTATIONS)
        return mutate_text(text, kind, pick), False, gravity, kind
    root = ET.fromstring(text)
    for _ in range(pick((0, 1, 1, 2, 3))):
        mutation = pick(MUTATIONS)
        mutation(root, pick)
        done.append(mutation.__name__)
    return ET.tostring(root), pick((False,) * 5 + (True,)), gravity, "+".join(done) or "valid"


# -- one run ----------------------------------------------------------------------------------------
def _finite(value) -> bool:
    """True when every number in ``value`` (arrays, dicts, lists, tuples, floats) is finite."""
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def run_case(data: bytes, floating: bool, gravity, directory: str, limit: float = 60.0, cli: bool = True) -> dict:
    """Run one file through the public entry points. Returns {"outcome", "steps": {step: what},
    "error": text of an escaped exception or of a non-finite result, "seconds"}."""
    import drng
    import pga_dyn
    import robots
    from pga_dyn.cli import main
    from pga_dyn.errors import PgaDynError
    from pga_dyn.sampling import sample_states

    path = os.path.join(directory, "fuzz.urdf")
    with open(path, "wb") as handle:
        handle.write(data)
    steps, bad, robot = {}, [], None
    start = time.perf_counter()

    def step(name, call, check=lambda value: value):
        try:
            value = call()
        except PgaDynError as exc:
            steps[name] = "refused"
            if path not in str(exc) and (robot is None or robot.name not in str(exc)):
                bad.append(f"{name}: message names neither the file nor the robot: {exc}")
            return None
        except Exception:  # noqa: BLE001 - the fuzz suite counts every other exception
            steps[name] = "escaped"
            bad.append(f"{name}: {traceback.format_exc()}")
            return None
        if not _finite(check(value)):
            steps[name] = "nan"
            bad.append(f"{name}: non-finite value in the result")
            return None
        steps[name] = "answered"
        return value

    robot = step("load", lambda: robots.load_urdf(path, floating_base=floating, gravity=gravity))
    if robot is not None:
        result = step("nullspace", lambda: drng.nullspace(robot), lambda r: (r.basis, r.certificate, r.base_basis))
        if robot.n and len(robot.actuated):
            rng = np.random.default_rng(0)
            q = rng.uniform(-0.1, 0.1, (3, len(robot.actuated)))
            step("regressor", lambda: pga_dyn.regressor(robot, q, q, q))
        step("sample_states", lambda: sample_states(robot, 3, seed=0), lambda s: (s.q, s.qd, s.qdd, s.G, s.cond))
        step("numerical", lambda: drng.numerical_nullspace(robot, samples=20), lambda r: (r.basis, r.certificate))
        if not robot.constrained:
            step("rpna", lambda: drng.rpna(robot), lambda r: r.basis)
        if result is not None:
            step("base_parameters", lambda: drng.base_parameters(robot, result), lambda b: (b.regrouped, b.to_dict()))
            step("classify", lambda: drng.classify(robot, result), lambda rows: [])
    if cli:
        err = io.StringIO()
        argv = ["analyze", path, "--json", "--gravity", *map(str, gravity)] + (["--floating"] if floating else [])
        try:
            with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(err):
                status = main(argv)
            if "NaN" in out.getvalue() or "Infinity" in out.getvalue():
                steps["cli"] = "nan"
                bad.append("cli: NaN or Infinity in the JSON output")
            elif status == 2 and (
                not (err.getvalue().splitlines() or [""])[-1].startswith("pga-dyn: error:")
                or "Traceback" in err.getvalue()
            ):
                steps["cli"] = "escaped"
                bad.append(f"cli: exit 2 without a message: {err.getvalue()!r}")
            else:
                steps["cli"] = "answered" if status in (0, 1) else "refused"
        except Exception:  # noqa: BLE001
            steps["cli"] = "escaped"
            bad.append(f"cli: {traceback.format_exc()}")
    seconds = time.perf_counter() - start
    outcomes = set(steps.values())
    if "escaped" in outcomes:
        outcome = "escaped"
    elif "nan" in outcomes:
        outcome = "nan"
    elif bad:
        outcome = "escaped"
    elif seconds > limit:
        outcome = "over budget"
    elif steps.get("load") == "refused":
        outcome = "refused"
    else:
        outcome = "answered"
    return {"outcome": outcome, "steps": steps, "error": SEPARATOR.join(bad), "seconds": seconds}
