"""Per-parameter identifiability classes, as in the tables of the RPNA paper (Wensing, Niemeyer,
Slotine 2024, Table 3), from any regressor nullspace.

The classical parameters of each body in its own (link) frame,
phi = [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about the frame origin), are
related to the parameters pi of ``pga_dyn.inertial_parameters`` by the invertible linear map
pi = F phi of ``from_link_parameters``. The regressor in link parameters is Y F, so its
nullspace is F^-1 Null(Y) (``to_link_parameters`` applied to the basis vectors) and its row
space, the identifiable subspace, is F^T Range(Y^T) (rows transform by the inverse transpose
of the map phi <- pi). A parameter phi_k (unit vector e_k) is

* **unidentifiable** ("x") when it has no effect on the dynamics: its column of Y F is zero,
  i.e. e_k lies in the nullspace (equivalently e_k is orthogonal to the identifiable subspace);
* **identifiable alone** ("*", "identifiable individually") when its value is a linear function
  of the measured forces: e_k lies in the identifiable subspace, i.e. every nullspace vector has
  a zero k-th entry;
* **identifiable in combination** (the RPNA tables' filled and open circles) otherwise: it moves
  the dynamics, but only together with other parameters.

(The RPNA tables further mark one parameter of each combination as a base parameter; that
choice is a convention and is not made here.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pga_dyn.conventions import LINK_PARAM_NAMES
from pga_dyn.errors import PgaDynError

from .result import NullspaceResult, orthonormal

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas

    from pga_dyn.model import Robot

#: The three classes of a parameter (the RPNA paper's): identifiable alone, in combination, or not.
ALONE = "identifiable alone"
COMBINATION = "identifiable in combination"
UNIDENTIFIABLE = "unidentifiable"
#: Symbols of the RPNA paper's tables (ASCII stand-ins).
SYMBOL = {ALONE: "*", COMBINATION: "o", UNIDENTIFIABLE: "x"}
#: Row order of the RPNA paper's tables (and of its code): m, mc, Ixx, Iyy, Izz, Iyz, Ixz, Ixy.
RPNA_TABLE_ORDER = ("m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Iyz", "Ixz", "Ixy")
#: Tolerance on the distance of a unit parameter vector to the nullspace (unidentifiable) and
#: on the length of its projection onto it (identifiable alone).
TOL = 1e-7


class Row(NamedTuple):
    """One parameter of one body and its class (ALONE, COMBINATION or UNIDENTIFIABLE)."""

    body: str
    parameter: str
    cls: str


class Classification(list):
    """The :class:`Row` list :func:`classify` returns, shown in notebooks as the body x
    parameter table of :func:`table` (* alone, o in combination, x unidentifiable)."""

    def _repr_html_(self) -> str:
        from pga_dyn.display import html_table

        bodies, grid = symbol_grid(self, LINK_PARAM_NAMES)
        return html_table("identifiability: * alone, o in combination, x unidentifiable", ("", *bodies), grid)

    def report(self) -> list:
        """One dict per parameter, JSON-ready: ``body``, ``parameter``, ``class`` (the
        ``per_parameter`` list of ``pga-dyn analyze --per-parameter --json``)."""
        return [{"body": row.body, "parameter": row.parameter, "class": row.cls} for row in self]

    def to_frame(self) -> pandas.DataFrame:
        """One row per parameter: body, parameter, class (pandas DataFrame)."""
        from pga_dyn.display import data_frame

        return data_frame(("body", "parameter", "class"), self)


def link_nullspace(robot: Robot, result: NullspaceResult) -> np.ndarray:
    """An orthonormal basis (10 n, dim) of the nullspace in link-frame parameters, F^-1 Null(Y)."""
    from pga_dyn.tp_regressor import to_link_parameters

    basis = result.basis
    n = robot.n
    if basis.shape[0] != 10 * n:
        raise PgaDynError(f"the result has {basis.shape[0]} parameters, robot '{robot.name}' has {10 * n}")
    link = (
        np.column_stack([to_link_parameters(robot, basis[:, c]).reshape(-1) for c in range(basis.shape[1])])
        if basis.shape[1]
        else np.zeros((10 * n, 0))
    )
    return orthonormal(link)


def classify(robot: Robot, result: NullspaceResult | None = None, tol: float = TOL) -> Classification:
    """The class of every link-frame parameter of every body, as :class:`Row` tuples (a
    :class:`Classification`, a list)
    (body, parameter, class), bodies in ``robot.body_names`` order, parameters in
    ``LINK_PARAM_NAMES`` order. ``result`` is any nullspace of the robot (RPNA, DRNG,
    numerical); by default ``drng.nullspace(robot)``: proven on a tree, certified otherwise."""
    if result is None:
        from .generator import nullspace

        result = nullspace(robot)
    Q = link_nullspace(robot, result)
    weight = np.sum(Q * Q, axis=1)  # squared length of the projection of e_k onto the nullspace
    rows = []
    for b, body in enumerate(robot.body_names):
        for k, name in enumerate(LINK_PARAM_NAMES):
            w = weight[10 * b + k]
            if np.sqrt(max(1.0 - w, 0.0)) < tol:
                cls = UNIDENTIFIABLE
            elif np.sqrt(w) < tol:
                cls = ALONE
            else:
                cls = COMBINATION
            rows.append(Row(body, name, cls))
    return Classification(rows)


def symbol_grid(rows: Sequence[Row], order: Sequence[str]) -> tuple[list[str], list[tuple[str, ...]]]:
    """(bodies, grid): the bodies of the :class:`Row` list in their order, and one row per
    parameter of ``order``, (parameter, symbol of each body) (* alone, o in combination, x
    unidentifiable)."""
    by = {(r.body, r.parameter): SYMBOL[r.cls] for r in rows}
    bodies = list(dict.fromkeys(r.body for r in rows))
    return bodies, [(p, *(by[b, p] for b in bodies)) for p in order]


def table(robot: Robot, rows: Sequence[Row], order: Sequence[str] = RPNA_TABLE_ORDER) -> str:
    """The classes as a text table like the RPNA paper's (rows: parameters in ``order``,
    columns: bodies; * alone, o in combination, x unidentifiable)."""
    bodies, grid = symbol_grid(rows, order)
    width = max(3, *(len(b) for b in bodies))
    lines = ["     " + " ".join(f"{b:>{width}}" for b in bodies)]
    for p, *symbols in grid:
        lines.append(f"{p:<5}" + " ".join(f"{symbol:>{width}}" for symbol in symbols))
    return "\n".join(lines)
