"""The options of ``pga-dyn identify`` that choose the model and the estimate: the model terms
left to the model selection, the consistent estimate's bounds, the force delay
(``identification.identify_log``'s keyword arguments)."""

from __future__ import annotations

import argparse

from ..errors import PgaDynError


def ellipsoids(given) -> dict:
    """{link: (centre, semi-axes)} of the --ellipsoid arguments."""
    out = {}
    for link, *numbers in given or ():
        try:
            values = [float(v) for v in numbers]
        except ValueError:
            raise PgaDynError(f"--ellipsoid {link}: centre and semi-axes must be numbers, got {numbers}") from None
        out[link] = (values[:3], values[3:])
    return out


def bounds(args) -> dict:
    """The bounds of the consistent estimate given on the command line (the library's defaults for
    the others)."""
    given = {"ellipsoids": ellipsoids(args.ellipsoid)}
    if args.mass_bounds is not None:
        given["mass_bounds"] = tuple(args.mass_bounds)
    if args.extent is not None:
        given["extent"] = args.extent or None
    return given


def delay(text: str):
    """``auto`` or a number of seconds (argparse type of --delay)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number of seconds, got {text!r}") from None


def terms(args) -> dict:
    """The model options of the identify job from the command line: friction and armature as
    given, None where left to the model selection."""
    from identification.model import DEFAULT_FRICTION

    friction = () if args.no_friction else None if args.friction is None else (tuple(args.friction) or DEFAULT_FRICTION)
    armature = True if args.armature else False if args.no_armature else None
    return {
        "friction": friction,
        "armature": armature,
        "coulomb_speed": args.coulomb_speed,
        "passive_friction": tuple(args.passive_friction or ()),
    }
