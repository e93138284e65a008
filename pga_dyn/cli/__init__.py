"""The ``pga-dyn`` command line: the composition root, the only code that imports pga_dyn,
drng and robots (docs/architecture.md).

    pga-dyn info ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ] [--json]
    pga-dyn analyze ROBOT_OR_PATH [ROBOT_OR_PATH ...] [--floating | --fixed] [--gravity GX GY GZ]
                    [--certify | --no-certify] [--bounds JOINT LOWER UPPER ...] [--budget SECONDS]
                    [--per-parameter] [--json] [--jobs N]
    pga-dyn base ROBOT_OR_PATH [--floating | --fixed] [--gravity GX GY GZ] [--keep NAME ...]
                 [--json] [--csv FILE] [--force]
    pga-dyn excite ROBOT_OR_PATH -o TRAJECTORY [--duration S] [--rate HZ] [--period S] [--harmonics L]
                   [--velocity V] [--acceleration A] [--bounds JOINT LOWER UPPER ...] [--friction [TERM ...]]
                   [--armature] [--iterations N] [--seed N] [--json] [--force]
    pga-dyn simulate ROBOT_OR_PATH TRAJECTORY -o DATA [--noise FRACTION] [--viscous X] [--coulomb X]
                     [--offset X] [--armature X] [--seed N] [--force]
    pga-dyn plot ROBOT_OR_PATH -o FILE [--samples N] [--seed N] [--force]
    pga-dyn identify ROBOT_OR_PATH DATA [--friction [TERM ...]] [--armature] [--ols] [--consistent | --map]
                     [--prior-std REL] [--test DATA] [-o URDF] [--plot FILE] [--json] [--force]
    pga-dyn compile

``info`` prints what pga-dyn made of a robot (``pga_dyn.info``): its bodies (with the URDF links
merged into each), tree joints, loop joints, coordinates and the number of inertial parameters.
``analyze`` runs DRNG (``drng.analyze``): the dimension of the regressor nullspace, the number of
base parameters, the vectors per principle and per joint, and the status of the answer: proven (a
tree: the generalized principles are complete, no sampling), or certified against the sampled
regressor (loops and couplings; ``--certify`` adds the check to a proven answer; exit status 1
when the answer cannot be certified; ``--no-certify`` skips it and labels an answer that is not
proven NOT CERTIFIED; several robots: one line each, analysed by ``drng.nullspaces`` on
``--jobs`` worker processes). ``base`` prints the base parameters
(``drng.base_parameters``): each regrouped combination, its expression in the link-frame
parameters and its value for the model's own inertias. ``excite``, ``simulate`` and ``identify``
carry an identification from an exciting trajectory to identified parameters
(``identification``, docs/identification.md). ROBOT_OR_PATH is a built-in robot
(``robots.available()``) or a robot file read by ``robots.load_file``: URDF, URDF+, Extended
URDF + YAML (``--yaml FILE``, default a ``robot.yaml`` beside the URDF) or MJCF. ``plot``
draws the robot, the sampled regressor's spectrum and the identifiability of each parameter
(``drng.plot``). ``compile`` compiles every numba kernel into numba's on-disk cache
(:func:`compile_kernels`; ``pip install .`` runs it, so a new install does not compile on its
first call: docs/performance.md, "Cold start"; with ``--reuse``, as the build step runs it, it
takes what an earlier build of the same files compiled from the build cache). Every command takes ``--quiet`` (no progress bars;
bars are drawn on stderr only when it is a terminal) and ``--yaml FILE``; ``pga-dyn --version``
prints the version. A command writes a file (``-o``, ``--csv``, ``--coefficients``, ``--plot``)
only if it does not exist, or with ``--force`` (never over one of its input files). ``--json``
prints the report of the library's result object (``.report()``); the text is its ``.text()``:
the Python API and the command give the same figures.

Every problem with the input is reported as one line ``pga-dyn: error: <message>`` on
stderr, with exit status 2. A command is a module of this package with ``register(subparsers)``
(its argparse subparser, whose ``func`` is its ``run``) and ``run(args, out) -> exit status``,
listed in :data:`COMMANDS`; it parses its arguments and calls public library functions.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings

from .. import __version__
from ..errors import PgaDynError, PgaDynWarning
from ..progress import reporting
from . import analyze, base, common, excite, identify, info, plot, predict, simulate
from . import compile as compile_command
from .compile import compile_kernels

__all__ = ["main", "build_parser", "compile_kernels", "COMMANDS"]

#: The commands, in the order of ``pga-dyn --help``.
COMMANDS = (info, plot, analyze, base, excite, simulate, identify, predict, compile_command)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``pga-dyn``: --version and one subparser per module of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog=common.PROG,
        description="Rigid-body dynamics in projective geometric algebra: robot models "
        "and the identifiability of their inertial parameters.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``pga-dyn`` console script; returns the exit status. Run as the program
    (``argv`` None: the process's own command line; the process ends next), it then freezes the
    objects left (``gc.freeze``), so that the interpreter's last garbage collection at exit does
    not walk them: after ``pga-dyn identify`` that collection took 0.3-0.5 s (numba's objects
    mostly, docs/performance.md). Called with ``argv`` (a library call), it leaves the collector
    alone."""
    try:
        return execute(argv)
    finally:
        if argv is None:
            gc.freeze()


def _warning_printer():
    """The warnings.showwarning of a command: ``pga-dyn: warning: <message>`` on stderr, each
    message once (the sampling of one robot may warn of the same box at every call)."""
    shown = set()

    def show_warning(message, category, *args, **kwargs) -> None:
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            print(f"{common.PROG}: warning: {text}", file=sys.stderr)

    return show_warning


def execute(argv) -> int:
    """The command of ``argv`` (None: ``sys.argv[1:]``) run; the exit status, every problem with
    the input reported on stderr."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", PgaDynWarning)
            warnings.showwarning = _warning_printer()
            with reporting(common.bars(getattr(args, "quiet", False))):
                return args.func(args, sys.stdout)
    except PgaDynError as exc:
        common.error(exc)
        return 2
    except BrokenPipeError:
        # The reader of our output went away (e.g. `pga-dyn info go2 | head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output file that cannot be written (no such folder, no permission, disk full)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{common.PROG}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
