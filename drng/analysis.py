"""The analysis of a robot's identifiability as a report: what ``pga-dyn analyze`` prints.

:func:`analyze` runs :func:`drng.nullspace` (with the certificate as asked), times it, and
optionally classifies every link-frame parameter (:func:`drng.classify`) and points each
regrouped one to its base parameters (:meth:`BaseParameters.regrouped_into`). The
:class:`Analysis` it returns gives the figures as a JSON-ready dict (:meth:`Analysis.report`)
and as the lines of text the CLI prints (:meth:`Analysis.text`, made from that dict: one place
for both). :func:`batch_report` and :func:`batch_text` do the same for the results of
:func:`drng.nullspaces` over several robots (``pga-dyn analyze A B ...``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pga_dyn.display import text_table

from .batch import Failure
from .classification import SYMBOL, Classification, classify
from .generator import nullspace
from .numerical import GAP_MIN
from .principles import PRINCIPLE_NAMES, drng_kernel
from .regrouping import BaseParameters, base_parameters
from .result import NullspaceResult

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from pga_dyn.model import Robot

__all__ = ["Analysis", "analyze", "batch_report", "batch_text"]


@dataclass(frozen=True, eq=False)
class Analysis:
    """A robot's nullspace ``result`` with the robot's figures (``robot_name``, ``source``,
    ``gravity`` (3,) list, ``floating_base``, ``bodies``: n), the time of the whole analysis
    (``seconds``: with the certificate and the loading of the compiled kernels) and of DRNG
    alone (``drng_seconds``, kernels loaded, no certificate; ``drng_compiled`` False when that
    ran the kernel's Python source, a first call of the process on a small robot:
    :func:`pga_dyn.interpreted.runner`), and, for a per-parameter analysis, the
    ``classification`` and the ``base`` parameters of the result."""

    robot_name: str
    source: str | None
    gravity: list
    floating_base: bool
    bodies: int
    result: NullspaceResult
    seconds: float
    drng_seconds: float
    classification: Classification | None = None
    base: BaseParameters | None = None
    drng_compiled: bool = True

    def report(self) -> dict:
        """The figures of ``pga-dyn analyze --json``: ``robot``, ``source``, ``gravity``,
        ``floating_base``, ``bodies``, then :meth:`NullspaceResult.report` (the answer, the
        vectors per principle and joint, the method, ``seconds``, ``drng_seconds``,
        ``drng_compiled`` and the certificate, when there is one); for a per-parameter analysis
        ``per_parameter`` (:meth:`Classification.report`) and ``regrouped_into``
        (:meth:`BaseParameters.regrouped_into`)."""
        answer = self.result.report()
        certificate = answer.pop("certificate", None)
        out = {
            "robot": self.robot_name,
            "source": self.source,
            "gravity": self.gravity,
            "floating_base": self.floating_base,
            "bodies": self.bodies,
            **answer,
            "seconds": self.seconds,
            "drng_seconds": self.drng_seconds,
            "drng_compiled": self.drng_compiled,
        }
        if certificate is not None:
            out["certificate"] = certificate
        if self.classification is not None:
            out["per_parameter"] = self.classification.report()
            out["regrouped_into"] = self.base.regrouped_into()
        return out

    def text(self) -> str:
        """What ``pga-dyn analyze`` prints: the lines of :func:`lines` for :meth:`report`."""
        return "\n".join(lines(self.report()))

    def __repr__(self) -> str:
        return f"Analysis({self.robot_name!r}, {self.result!r})"

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.text())}</pre>"


def analyze(
    robot: Robot,
    certify: bool | None = None,
    per_parameter: bool = False,
    bounds: npt.ArrayLike | dict[str, tuple[float, float]] | None = None,
    budget: float | None = None,
    branch: int | None = None,
    reference: npt.ArrayLike | dict[str, float] | None = None,
) -> Analysis:
    """The :class:`Analysis` of ``robot``: :func:`drng.nullspace` with ``certify``, ``bounds`` and
    ``budget`` as there (``certify`` None samples only an answer that is not proven; ``budget``
    None: the library's default time budget), timed, then DRNG alone timed again with its kernels
    loaded; ``per_parameter``: the classification of every link-frame parameter and the base
    parameters (regrouped parameters -> base parameters) of the same result. ``branch``: the
    assembly branch at a singular reference, ``reference`` the configuration the loops are closed
    from (a tree configuration (nq,) or {coordinate name: value}; :func:`pga_dyn.loops.on_branch`)."""
    if branch is not None or reference is not None:
        from pga_dyn.loops import on_branch

        robot = on_branch(robot, branch or 0, reference)
    start = time.perf_counter()
    kwargs = {} if budget is None else {"budget": budget}
    result = nullspace(robot, certify=certify, bounds=bounds, **kwargs)
    seconds = time.perf_counter() - start  # with the certificate and the loading of the kernels
    warm = nullspace(robot, certify=False).seconds  # DRNG alone, compiled kernels loaded
    compiled = bool(drng_kernel.signatures)  # else that ran the kernel's Python source
    classification = base = None
    if per_parameter:
        classification = classify(robot, result)
        base = base_parameters(robot, result)
    return Analysis(
        robot.name,
        robot.source,
        robot.gravity.tolist(),
        robot.floating_base,
        robot.n,
        result,
        seconds,
        warm,
        classification,
        base,
        compiled,
    )


def lines(report: dict) -> list:
    """The lines of an :meth:`Analysis.report`: the counts, the status and certificate, the time,
    the vectors per joint and, for a per-parameter analysis, the class of every parameter and the
    base parameters each regrouped parameter enters."""
    names = {str(k): v for k, v in PRINCIPLE_NAMES.items()}  # the report's keys are strings (JSON)
    out = [
        f"robot:                {report['robot']}",
        f"parameters:           {report['parameters']} (10 per body, {report['bodies']} bodies)",
        f"nullspace dimension:  {report['nullspace_dimension']} (unidentifiable directions)",
        f"base parameters:      {report['base_parameters']} (identifiable combinations)",
        "vectors per principle: "
        + ", ".join(f"{names.get(k, k)} {v}" for k, v in report["vectors_per_principle"].items()),
    ]
    if report["bodies"] == 0:
        out.append("no moving body:       every link is fixed to the base: no inertial parameter to identify")
    if report["proven"] and report["certified"] is False:
        out.append(
            f"status:               {report['status']}: the principles are complete on a tree, yet the "
            "sampled regressor disagrees (numerical trouble, or a defect: please report it); not trusted"
        )
    elif report["proven"]:
        out.append(
            f"status:               {report['status']}: the generalized principles are complete on a "
            "tree (docs/drng.md)" + ("" if report["certified"] is not None else ", no sampling")
        )
    if report["certified"] is None and not report["proven"]:
        out.append(
            "certificate:          NOT CERTIFIED (--no-certify): the principles alone, which can "
            "miss directions on loops and couplings (docs/drng.md)"
        )
    elif report["certified"] is not None:
        out += certificate_lines(report)
    if "reference" in report:
        ref = report["reference"]
        out.append(
            f"reference:            the loops do not close at {ref['given']}: the closed configuration found "
            f"nearest to it (distance {ref['distance']:.4g}, loop residual {ref['residual']:.2g}) moves "
            + ", ".join(f"{name} by {change:+.6g}" for name, change in ref["moved"].items())
        )
    drng = f"time:                 DRNG {report['drng_seconds'] * 1e3:.3f} ms" + (
        "" if report["drng_compiled"] else " (its Python source: the compiled kernel is not loaded in this process)"
    )
    if report["certified"] is None:
        out.append(drng)
    else:
        out.append(
            f"{drng}; in all {report['seconds'] * 1e3:.1f} ms (with the certificate and loading the compiled kernels)"
        )
    rows = [
        (joint, *(counts.get(k, 0) for k in names), counts.get("numerical", ""))
        for joint, counts in report["vectors_per_joint"].items()
    ]
    out += ["", "Vectors per joint"]
    out += text_table(("joint", *names.values(), "numerical"), rows)
    if "per_parameter" in report:
        out += per_parameter_lines(report)
    return out


def certificate_lines(report: dict) -> list:
    """The lines of the certificate of an :meth:`Analysis.report` (docs/drng.md)."""
    c = report["certificate"]
    verdict = "certified" if report["certified"] else "NOT certified"
    out = [
        f"certificate:          {verdict}: nullspace rank {c['rank']} + sampled regressor rank "
        f"{c['rank_numerical']} = {c['rank'] + c['rank_numerical']} of {report['parameters']} "
        f"(singular gap {c['singular_gap']:.1e}, residual {c['residual']:.1e}, {c['samples']} samples)"
    ]
    where = (
        "the diagonal blocks (one per body) of the block-triangular sampled regressor, column-scaled, "
        "each relative to its own largest singular value, the worst over the blocks (a dropped value of "
        "0: every block has full rank)"
        if c["structure"] == "block-triangular"
        else "column-scaled sampled regressor, relative to its largest singular value"
    )
    out.append(
        f"                      {where}: "
        f"smallest kept {c['smallest_kept']:.1e}, largest dropped {c['largest_dropped']:.1e}, "
        f"threshold {c['threshold']:.0e}: "
        + ("a clean gap" if c["clean_gap"] else f"NOT a clean gap (needs >= {GAP_MIN:.0e} with the threshold inside)")
    )
    if not report["geometric"]:
        out.append(
            f"                      the principles give rank {c['rank_drng']} and miss directions "
            f"on bodies {', '.join(c['short_bodies'])}: completed numerically"
        )
    if "branches" in c:
        out.append(
            "assembly branches:    the reference is singular: nullspace dimension "
            + ", ".join(
                f"{b['dimension']} on branch {b['branch']}" + ("" if b["certified"] else " (NOT certified)")
                if b["dimension"] is not None
                else f"no answer on branch {b['branch']} ({b['reason']})"
                for b in c["branches"]
            )
            + " (--branch, branch= chooses; docs/drng.md, assembly modes)"
        )
    if "branch_count" in c:
        out.append(
            f"assembly branches:    the reference is singular: {c['branch_count']} branches meet there; this is "
            f"branch {c['branch']}: pga-dyn analyze {report.get('source') or report['robot']} --branch K "
            f"answers for branch K, 0 <= K < "
            f"{c['branch_count']} (branch= in Python; docs/drng.md, assembly modes)"
        )
    return out


def per_parameter_lines(report: dict) -> list:
    """The per-parameter lines of an :meth:`Analysis.report`: the body x parameter table of the
    classes (* alone, o in combination, x unidentifiable), then each regrouped parameter with the
    base parameters it enters."""
    bodies = list(dict.fromkeys(row["body"] for row in report["per_parameter"]))
    names = list(dict.fromkeys(row["parameter"] for row in report["per_parameter"]))
    cls = {(row["body"], row["parameter"]): SYMBOL[row["class"]] for row in report["per_parameter"]}
    out = [
        "",
        "Parameters in the link frames: * identifiable alone, o only in combination, "
        "x unidentifiable" + ("" if report["trusted"] else f" ({report['status'].upper()}: this table can be wrong)"),
    ]
    out += text_table(("parameter", *bodies), [(p, *(cls[(b, p)] for b in bodies)) for p in names])
    rows = [(name, ", ".join(base)) for name, base in report["regrouped_into"].items()]
    out += ["", "Regrouped parameters (name + body number; see pga-dyn base)"]
    out += text_table(("parameter", "regrouped into"), rows)
    return out


def batch_report(targets: Iterable[str], results: Iterable[NullspaceResult | Failure]) -> list:
    """One JSON-ready row per robot of :func:`drng.nullspaces` (``results``, in the order of
    ``targets``, the names or files given): ``robot`` (the target), ``name``, the
    :meth:`NullspaceResult.summary` and the ``reason`` of a failed certificate (None otherwise);
    or, for a refused input (a :class:`Failure` with ``input_error``), ``robot`` and ``error``
    (the message, naming the robot). A Failure that is not an input error is a bug: its
    exception is raised, with the worker's traceback."""
    rows = []
    for target, result in zip(targets, results):
        if isinstance(result, Failure):
            if not result.input_error:
                raise result.exception()
            rows.append({"robot": target, "error": result.message})
        else:
            rows.append(
                {
                    "robot": target,
                    "name": result.robot_name,
                    **result.summary(),
                    "reason": (result.certificate or {}).get("reason"),
                }
            )
    return rows


def batch_text(rows: list) -> str:
    """The table of ``pga-dyn analyze`` over several robots: one line per row of
    :func:`batch_report` (a refused robot: its status says why)."""
    table = [
        (
            row["robot"],
            str(row.get("parameters", "-")),
            str(row.get("nullspace_dimension", "-")),
            str(row.get("base_parameters", "-")),
            row.get("status") or f"refused: {row['error']}",
        )
        for row in rows
    ]
    return "\n".join(text_table(["robot", "parameters", "nullspace", "base parameters", "status"], table))
