"""What the commands share: the robot arguments and loading, argument helpers, output files,
progress bars, warnings and errors on stderr."""

from __future__ import annotations

import functools
import json
import os
import sys
import warnings

from ..conventions import DEFAULT_GRAVITY
from ..errors import PgaDynError, PgaDynWarning

PROG = "pga-dyn"


def load(target: str, floating, gravity, yaml=None, spins="lock"):
    """A built-in robot (by name, before any file of that name) or a robot file (URDF, URDF+,
    Extended URDF + YAML, MJCF: robots.load_file), as a Robot, its free spins as ``spins`` says."""
    import robots

    if target.lower() in robots.available():
        return robots.load(target, floating, DEFAULT_GRAVITY if gravity is None else gravity, spins)
    if os.path.exists(target) or target.lower().endswith((".urdf", ".xml")) or os.sep in target or "/" in target:
        return robots.load_file(target, yaml=yaml, floating_base=floating, gravity=gravity, spins=spins)
    raise PgaDynError(f"'{target}' is neither a file nor a built-in robot (built-in: {', '.join(robots.available())})")


def robot(args, target=None):
    """The robot of a command's ROBOT_OR_PATH (or ``target``), --floating/--fixed, --gravity,
    --yaml and --spins, its loops closed from --reference when given (:func:`reference`)."""
    loaded, values = loader(args)(args.robot if target is None else target), reference(args)
    if values is None:
        return loaded
    from ..loops import on_branch

    return on_branch(loaded, 0, values)


def reference(args) -> dict | None:
    """The --reference of a command, {coordinate name: value} (None without it): NAME=VALUE
    entries separated by commas or new lines, given on the command line or in a file (the
    argument is a path when such a file exists); each entry NAME=VALUE, NAME: VALUE or NAME
    VALUE, '#' starts a comment. Coordinates not named are zero, as in q0."""
    spec = getattr(args, "reference", None)
    if spec is None:
        return None
    where = "--reference"
    if os.path.isfile(spec):
        where = f"--reference {spec}"
        with open(spec, encoding="utf-8") as handle:
            spec = handle.read()
    values = {}
    for line in spec.splitlines():
        for entry in line.split("#", 1)[0].split(","):
            entry = entry.strip()
            if not entry:
                continue
            parts = entry.replace("=", " ").replace(":", " ").split()
            if len(parts) != 2:
                raise PgaDynError(f"{where}: '{entry}' is not NAME=VALUE")
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                raise PgaDynError(f"{where}: '{entry}': '{parts[1]}' is not a number") from None
    if not values:
        raise PgaDynError(f"{where}: no NAME=VALUE entry")
    return values


def loader(args):
    """``load(ROBOT_OR_PATH) -> Robot`` with the command's --floating/--fixed, --gravity, --yaml,
    --spins: a partial of :func:`load`, so that it pickles (``drng.nullspaces`` runs it in its workers)."""
    floating = True if args.floating else (False if args.fixed else None)
    gravity = None if args.gravity is None else tuple(args.gravity)
    return functools.partial(load, floating=floating, gravity=gravity, yaml=args.yaml, spins=args.spins)


def robot_arguments(parser, many: bool = False) -> None:
    """ROBOT_OR_PATH (several with ``many``), --quiet, --yaml, --reference, --spins, --floating/--fixed, --gravity."""
    parser.add_argument(
        "robot",
        metavar="ROBOT_OR_PATH",
        nargs="+" if many else None,
        help="a built-in robot name or a robot file: URDF, URDF+, Extended URDF (+ YAML), MJCF"
        + ("; several: one line each, analysed in parallel (--jobs)" if many else ""),
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bars (they are drawn on stderr only when it is a terminal)"
    )
    parser.add_argument(
        "--yaml",
        metavar="PATH",
        default=None,
        help="the YAML of an Extended URDF's closed loops (default: robot.yaml or <stem>.yaml "
        "beside the URDF, if there is one)",
    )
    parser.add_argument(
        "--reference",
        metavar="NAME=VALUE,...|PATH",
        default=None,
        help="the configuration the loops are closed from (the reference every assembly starts at; "
        "default q0, all tree coordinates zero): coordinate values, rad or m, NAME=VALUE separated by "
        "commas, or a file of such lines; coordinates not named are zero; when the loops do not close "
        "there, the nearest closed configuration found is used and reported",
    )
    spins = "free spins: 'lock' at zero rate (default; stated and bounded where approximate), 'exact' coordinates"
    parser.add_argument("--spins", choices=("lock", "exact"), default="lock", help=spins + " (docs/drng.md)")
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--floating", action="store_true", help="add a floating base (default: fixed; go2: floating)")
    base.add_argument("--fixed", action="store_true", help="fix the base even for a robot that floats by default")
    parser.add_argument(
        "--gravity",
        nargs=3,
        type=float,
        metavar=("GX", "GY", "GZ"),
        default=None,
        help="gravity vector in the world frame, m/s^2 (default: an MJCF file's <option gravity>, else {})".format(
            " ".join(f"{g:g}" for g in DEFAULT_GRAVITY)
        ),
    )


def identification_terms(parser) -> None:
    """--friction [MODEL ...], --coulomb-speed, --passive-friction and --armature (excite, identify):
    the options of ``identification.identification_model`` (:func:`model_options`)."""
    from identification.model import FRICTION_MODELS, PASSIVE_FRICTION

    parser.add_argument(
        "--friction",
        nargs="*",
        choices=tuple(FRICTION_MODELS),
        metavar="MODEL",
        help="friction per actuated coordinate: "
        + ", ".join(FRICTION_MODELS)
        + " (bare --friction: viscous coulomb; at most one of coulomb, coulomb-tanh, stribeck; "
        "+-: per direction; stribeck: nonlinear, its speed fitted)",
    )
    parser.add_argument(
        "--coulomb-speed", type=float, metavar="V", help="speed scale of coulomb-tanh, fc tanh(qd / V) (rad/s or m/s)"
    )
    parser.add_argument(
        "--passive-friction",
        nargs="+",
        choices=tuple(PASSIVE_FRICTION),
        metavar="MODEL",
        help="friction at the passive joints of closed loops (viscous, coulomb), mapped to the "
        "actuated coordinates by G^T",
    )
    parser.add_argument("--armature", action="store_true", help="a rotor inertia column per actuated coordinate")


def model_options(args) -> dict:
    """The keyword arguments of ``identification_model`` from :func:`identification_terms`' options."""
    return {
        "friction": friction(args.friction),
        "armature": args.armature,
        "coulomb_speed": args.coulomb_speed,
        "passive_friction": tuple(args.passive_friction or ()),
    }


def bounds(triples):
    """{joint: (lower, upper)} from the --bounds triples, or None."""
    if not triples:
        return None
    out = {}
    for name, lower, upper in triples:
        try:
            out[name] = (float(lower), float(upper))
        except ValueError:
            raise PgaDynError(f"--bounds {name} {lower} {upper}: LOWER and UPPER must be numbers") from None
    return out


def friction(values):
    """The friction terms of --friction: None when absent, DEFAULT_FRICTION when bare."""
    from identification.model import DEFAULT_FRICTION

    if values is None:
        return ()
    return tuple(values) or DEFAULT_FRICTION


def force_argument(parser) -> None:
    """--force: the commands that write files overwrite an existing output file only with it."""
    parser.add_argument("--force", action="store_true", help="overwrite output files that exist (never an input file)")


def new_file(path: str, *inputs: str, force: bool = False) -> str:
    """``path``, refused when it is an input file (never overwritten) or, without --force, a file that exists."""
    for source in inputs:
        if source and os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise PgaDynError(f"{path}: this is an input file; write the output to a new file")
    if os.path.exists(path) and not force:
        raise PgaDynError(f"{path}: the file exists; give --force to overwrite it")
    return path


def warn_model(robot) -> None:
    """A warning of the model's non-physical inertial parameters: one line for a built-in robot, all for a file."""
    import robots
    from identification import model_violations

    bad, source = model_violations(robot), robots.builtin_source(robot.source)
    if bad and source:  # data the user did not write, used as given: its bodies and where it comes from
        bodies = ", ".join(dict.fromkeys(v.body for v in bad))
        message = f"{robot.name}: not physically consistent in its source ({source}): {bodies}; used as given"
    elif bad:
        message = f"{robot.source or robot.name}: the model's inertial parameters are not physically consistent: "
        message += "; ".join(str(v) for v in bad)
    if bad:
        warnings.warn(message, PgaDynWarning, stacklevel=2)


def print_json(report, out) -> None:
    """``report`` as indented JSON on ``out``, ended by a newline."""
    json.dump(report, out, indent=2)
    out.write("\n")


def error(message: str) -> None:
    """``pga-dyn: error: <message>`` on stderr, the message on one line."""
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)


def draw(label: str, done: int, total: int) -> None:
    """One progress bar on stderr, redrawn in place."""
    filled = int(30 * min(done, total) / max(total, 1))
    print(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)


def bars(quiet: bool):
    """The listener of pga_dyn.progress for the command: a bar per step on stderr, its line ended
    when the step is done; None (silent) with --quiet or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(step, done, total):
        draw(step, done, total)
        if done >= total:
            print(file=sys.stderr)

    return show
