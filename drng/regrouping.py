"""Base inertial parameters a person can read: the regrouped combinations beta = K phi, their
names and expressions, and the base regressor Y_b with Y phi = Y_b beta.

Coordinates. phi (10 n) are the classical parameters of every body in its own (link, joint)
frame, Pinocchio's order and ``robot.body_names`` order: per body
[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], the inertia about the frame origin
(``pga_dyn.conventions.LINK_PARAM_NAMES``). pga-dyn's own vector pi of eq. (97) (spatial
assignment) is pi = F phi with F = ``pga_dyn.tp_regressor.link_map(robot)``, so the link-frame
regressor is Y_link = Y F and its nullspace is F^-1 Null(Y) (``drng.classification.link_nullspace``).

Elimination. Let N (10 n x d) be an orthonormal basis of the link-frame nullspace. Choose d
*eliminated* parameters E whose rows N_E (d x d) are invertible; the others, I, are kept (the
*leading* parameters, one per base parameter). Since Y_link N = 0,
Y_E = -Y_I N_I N_E^-1, hence

    Y_link phi = Y_I (phi_I + C phi_E) = Y_b beta,   C = -N_I N_E^-1 (r x d),
    beta = K phi,   K[:, I] = identity (r x r),   K[:, E] = C,   Y_b = Y_link[:, I].

K does not depend on the basis N chosen for the nullspace, only on E. E is chosen greedily:
the parameters are scanned in a fixed order and one is eliminated when its row of N is
independent of the rows already eliminated, i.e. when the norm of its component orthogonal
to them exceeds ``tol`` (a Gram-Schmidt pivot; rows of N have norm <= 1). The order is the
classical regrouping (Khalil and Kleinfinger 1986; Gautier 1990; Lin 1994): bodies from the
last to the first (a child before its parent, so that a body's parameters are regrouped into
its parent's, and proximal parameters are kept), and within a body
:data:`ELIMINATION_ORDER` = m, mcz, Iyy, Ixx, Iyz, Ixz, Ixy, mcy, mcx, Izz. For a revolute
joint about z this eliminates m, mcz and Iyy and gives the textbook XX_jR = XX_j - YY_j,
ZZ_{j-1}R = ZZ_{j-1} + ..., MX_{j-1}R = MX_{j-1} + a_j M_j, ...; for a prismatic joint along z
it eliminates the six inertia entries. Parameters named in ``keep`` are scanned last, so they
are eliminated only if nothing else can be. Coefficients within 1e-12 of 0, 1 or -1 are set
to those values exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pga_dyn.conventions import LINK_PARAM_NAMES
from pga_dyn.errors import PgaDynError
from pga_dyn.tp_regressor import inertial_parameters, link_map, to_link_parameters

from .classification import ALONE, COMBINATION, UNIDENTIFIABLE, link_nullspace
from .result import NullspaceResult

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy.typing as npt
    import pandas

    from pga_dyn.model import Robot
    from pga_dyn.sampling import States

#: Order in which the parameters of one body are offered for elimination (first: eliminated
#: first). Bodies are scanned from the last to the first.
ELIMINATION_ORDER = ("m", "mcz", "Iyy", "Ixx", "Iyz", "Ixz", "Ixy", "mcy", "mcx", "Izz")
#: A parameter is eliminated when its row of the orthonormal nullspace basis has a component
#: of at least this norm orthogonal to the rows already eliminated.
PIVOT_TOL = 1e-8
#: Coefficients within this distance of 0, 1 or -1 are set to that value.
SNAP_TOL = 1e-12
#: Roles of a standard parameter in the base parameters.
LEADING = "leading"  # kept: a base parameter is named after it
REGROUPED = "regrouped"  # eliminated, its effect carried by base parameters
ABSENT = "unidentifiable"  # eliminated, no effect on the dynamics


class Parameter(NamedTuple):
    """One standard (link-frame) parameter: its name (``Izz1``), body, parameter
    (``LINK_PARAM_NAMES``), ``role`` (LEADING, REGROUPED or ABSENT), ``cls`` (the class of
    :func:`drng.classify`: ALONE, COMBINATION or UNIDENTIFIABLE) and ``base``, the names of the
    base parameters it enters (the one it leads, or those it is regrouped into)."""

    name: str
    body: str
    parameter: str
    role: str
    cls: str
    base: tuple


def parameter_names(n: int) -> tuple:
    """The names of the 10 n link-frame parameters: ``LINK_PARAM_NAMES`` followed by the body
    number 1..n (``robot.body_names`` order), e.g. m1, mcx1, ..., Izz1, m2, ..."""
    return tuple(f"{p}{b + 1}" for b in range(n) for p in LINK_PARAM_NAMES)


def _term(coefficient: float, name: str, first: bool) -> str:
    sign = "-" if coefficient < 0 else ("" if first else "+")
    magnitude = abs(coefficient)
    body = name if magnitude == 1.0 else f"{magnitude:.6g}*{name}"
    return f"{sign}{body}" if first else f" {sign} {body}"


def expression(name: str, row: np.ndarray, leading: int, names: tuple[str, ...]) -> str:
    """``name = leading + c*other + ...``: the row of K of one base parameter written out, the
    leading parameter first, then the other nonzero terms in parameter order, coefficients to
    6 significant digits."""
    terms = [names[leading]] + [_term(row[c], names[c], False) for c in np.flatnonzero(row) if c != leading]
    return f"{name} = " + "".join(terms)


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The base parameters beta = K phi of a robot (see the module docstring for the math).

    ``K`` (r, 10 n): rows are base parameters, columns the link-frame parameters named in
    ``parameter_names``. ``leading`` (r,): the index of the parameter each base parameter is
    named after (K[j, leading[j]] = 1 and K[:, leading] is the identity). ``link_map`` (10 n,
    10 n): F with pi = F phi, to take pga-dyn regressors to link-frame coordinates.
    ``status``, ``trusted`` and ``certified``: those of the nullspace result behind them
    (:attr:`drng.result.NullspaceResult.status`): base parameters are only as right as it.
    ``phi_model`` (10 n,): the robot's own link-frame parameters (its model file's inertias), whose
    base parameters K phi_model :meth:`report` and :meth:`text` give as the values (None: not known).

    :meth:`report` (JSON-ready dict) and :meth:`text` (lines of text) are what ``pga-dyn base``
    prints; the notebook table shows the same rows."""

    robot_name: str
    body_names: tuple
    K: np.ndarray
    leading: np.ndarray
    link_map: np.ndarray
    status: str = "not certified"
    trusted: bool = False
    certified: bool | None = None
    phi_model: np.ndarray | None = None

    @property
    def parameter_names(self) -> tuple:
        return parameter_names(len(self.body_names))

    @property
    def num_base_parameters(self) -> int:
        return self.K.shape[0]

    @cached_property
    def regrouped(self) -> np.ndarray:
        """(r,) bool: whether base parameter j has terms besides its leading parameter."""
        return np.count_nonzero(self.K, axis=1) > 1

    @cached_property
    def names(self) -> tuple:
        """The name of each base parameter: its leading parameter, with the suffix R when other
        parameters are regrouped into it (``Izz1R``)."""
        names = self.parameter_names
        return tuple(names[k] + ("R" if r else "") for k, r in zip(self.leading, self.regrouped))

    @cached_property
    def expressions(self) -> tuple:
        """``name = leading + c*other + ...`` for each base parameter, terms in parameter order
        after the leading one, coefficients to 6 significant digits (``K`` holds them exactly)."""
        return tuple(
            expression(name, row, k, self.parameter_names) for name, row, k in zip(self.names, self.K, self.leading)
        )

    @cached_property
    def parameters(self) -> tuple:
        """The role of every standard parameter, as :class:`Parameter` rows in
        ``parameter_names`` order."""
        names = self.parameter_names
        lead = {int(k): j for j, k in enumerate(self.leading)}
        rows = []
        for c, name in enumerate(names):
            body, parameter = self.body_names[c // 10], LINK_PARAM_NAMES[c % 10]
            if c in lead:
                j = lead[c]
                role, cls, base = LEADING, (COMBINATION if self.regrouped[j] else ALONE), (self.names[j],)
            else:
                into = np.flatnonzero(self.K[:, c])
                role = REGROUPED if into.size else ABSENT
                cls = COMBINATION if into.size else UNIDENTIFIABLE
                base = tuple(self.names[j] for j in into)
            rows.append(Parameter(name, body, parameter, role, cls, base))
        return tuple(rows)

    def regressor(self, states_or_Y: States | npt.ArrayLike) -> np.ndarray:
        """The base regressor Y_b (..., r) with Y_link phi = Y_b beta.

        ``states_or_Y`` is either a :class:`pga_dyn.States` of the robot (e.g.
        ``pga_dyn.sample_states(robot, 100)``), whose pga-dyn regressor Y (samples, n_a, 10 n)
        is taken to link-frame coordinates Y_link = Y F, or a regressor array (..., 10 n) that is
        already in **link-frame** coordinates (``parameter_names`` order, e.g. Pinocchio's
        joint-torque regressor with its columns in ``robot.body_names`` order). Y_b is the
        columns of Y_link of the leading parameters; Y_b K = Y_link holds for a regressor of
        this robot, whose columns of eliminated parameters are Y_I C."""
        from pga_dyn.sampling import States

        if isinstance(states_or_Y, States):
            if states_or_Y.robot.num_parameters != self.K.shape[1]:
                raise PgaDynError(
                    f"states_or_Y are states of robot '{states_or_Y.robot.name}' with "
                    f"{states_or_Y.robot.num_parameters} parameters, the base parameters are "
                    f"of '{self.robot_name}' with {self.K.shape[1]}"
                )
            Y = states_or_Y.regressor() @ self.link_map
        else:
            Y = np.asarray(states_or_Y, dtype=float)
            if Y.ndim == 0 or Y.shape[-1] != self.K.shape[1]:
                raise PgaDynError(
                    f"states_or_Y must be a pga_dyn.States or an array whose last axis has "
                    f"{self.K.shape[1]} link-frame parameters, got shape {Y.shape}"
                )
        return Y[..., self.leading]

    def values(self, phi: npt.ArrayLike) -> np.ndarray:
        """beta = K phi (r,) from link-frame parameters ``phi``, shape (10 n,) or (n, 10)
        (e.g. ``pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))``)."""
        phi = np.asarray(phi, dtype=float)
        n = len(self.body_names)
        if phi.shape not in ((10 * n,), (n, 10)):
            raise PgaDynError(f"phi must have shape ({10 * n},) or ({n}, 10), got {phi.shape}")
        return self.K @ phi.reshape(-1)

    def regrouped_into(self) -> dict:
        """Each regrouped link-frame parameter (``Iyy2``: name + body number) -> the names of the
        base parameters it enters (a list), in ``parameter_names`` order; unidentifiable and
        leading parameters are not in it."""
        return {p.name: list(p.base) for p in self.parameters if p.role == REGROUPED}

    def to_dict(self) -> dict:
        """A JSON-ready dict: robot, parameter names, names, expressions, leading (indices into
        ``parameter_names``) and K (rows of floats, exact: JSON keeps every bit of a float)."""
        return {
            "robot": self.robot_name,
            "bodies": list(self.body_names),
            "parameter_names": list(self.parameter_names),
            "names": list(self.names),
            "expressions": list(self.expressions),
            "leading": [int(k) for k in self.leading],
            "K": self.K.tolist(),
        }

    def model_values(self) -> np.ndarray:
        """beta = K phi_model (r,): the base parameters of the model's own inertias (PgaDynError
        when ``phi_model`` is not known)."""
        if self.phi_model is None:
            raise PgaDynError(
                f"the base parameters of '{self.robot_name}' were built without the model's "
                "parameters (phi_model): use values(phi)"
            )
        return self.values(self.phi_model)

    def report(self) -> dict:
        """What ``pga-dyn base --json`` prints, JSON-ready: :meth:`to_dict` (K, names, expressions,
        ...), ``certified``, ``status``, ``trusted`` of the nullspace behind them, the counts
        ``parameters`` (10 n) and ``base_parameters`` (r), and ``values``, beta = K phi_model
        (:meth:`model_values`)."""
        return {
            **self.to_dict(),
            "certified": self.certified,
            "status": self.status,
            "trusted": self.trusted,
            "parameters": self.K.shape[1],
            "base_parameters": self.num_base_parameters,
            "values": self.model_values().tolist(),
        }

    def text(self) -> str:
        """What ``pga-dyn base`` prints: the counts, the status, and the table of :meth:`report`
        (base parameter, the body of its leading parameter, its value K phi, its expression)."""
        from pga_dyn.display import number, text_table

        headers, rows = self._table()
        bodies = self.body_names
        lines = [
            f"robot:                {self.robot_name}",
            f"parameters:           {self.K.shape[1]} (10 per body, {len(bodies)} bodies: m, mcx, mcy, mcz, "
            f"Ixx, Ixy, Iyy, Ixz, Iyz, Izz in each body's frame, inertia about its origin; name + body number)",
            f"base parameters:      {self.num_base_parameters} (suffix R: other parameters regrouped into it; "
            f"value: for the model's own inertias)",
            f"status:               {self.status}" + ("" if self.trusted else " (the base parameters can be wrong)"),
            "",
        ]
        return "\n".join(
            lines + text_table(headers, [(n, b, "-" if v is None else number(v), e) for n, b, v, e in rows])
        )

    # -- the table of the text and of notebooks (pga_dyn.display) -----------------------------
    def _table(self):
        """Headers and rows (name, body of the leading parameter, value K phi_model (None when
        ``phi_model`` is not known), expression)."""
        values = [None] * self.num_base_parameters if self.phi_model is None else self.model_values()
        return ("base parameter", "body", "value", "expression"), [
            (name, self.body_names[k // 10], value, expression)
            for name, k, value, expression in zip(self.names, self.leading, values, self.expressions)
        ]

    def _repr_html_(self) -> str:
        from pga_dyn.display import html_table, number

        headers, rows = self._table()
        return html_table(
            f"{self.robot_name}: {self.num_base_parameters} base parameters of "
            f"{len(self.parameter_names)} ({self.status}; value: for the model's own inertias)",
            headers,
            [(n, b, "-" if v is None else number(v), e) for n, b, v, e in rows],
        )

    def to_frame(self) -> pandas.DataFrame:
        """The base parameters: name, body, value for the model's own inertias, expression in the
        link-frame parameters (pandas DataFrame)."""
        from pga_dyn.display import data_frame

        return data_frame(*self._table())


def _elimination_order(n: int, keep) -> list:
    """Indices of the link-frame parameters in the order they are offered for elimination:
    bodies from the last to the first, ELIMINATION_ORDER within a body, ``keep`` at the end."""
    names = parameter_names(n)
    index = {name: c for c, name in enumerate(names)}
    kept = []
    for name in keep:
        if name not in index:
            raise PgaDynError(
                f"keep: unknown parameter '{name}'; parameters are named like "
                f"{names[0]}, {names[9]} or {names[-1]} (name + body number 1..{n})"
            )
        kept.append(index[name])
    order = [10 * b + LINK_PARAM_NAMES.index(p) for b in range(n - 1, -1, -1) for p in ELIMINATION_ORDER]
    return [c for c in order if c not in kept] + kept


def base_parameters(
    robot: Robot, result: NullspaceResult | None = None, keep: Sequence[str] = (), tol: float = PIVOT_TOL
) -> BaseParameters:
    """The base parameters of ``robot`` from the nullspace ``result`` (any method: DRNG,
    certified, RPNA, numerical; default ``drng.nullspace(robot)``: proven on trees, certified on
    loops and couplings).

    ``keep``: names of link-frame parameters (``m6``, ``Izz2``, see :func:`parameter_names`) to
    keep as leading parameters; PgaDynError if one cannot be (it is unidentifiable, or its
    regressor column is a combination of those of the other kept parameters). ``tol``: the
    pivot tolerance of the elimination (see the module docstring)."""
    if isinstance(keep, str):
        raise PgaDynError(f"keep must be a sequence of parameter names, got the string '{keep}'")
    if not tol > 0:
        raise PgaDynError(f"tol must be positive, got {tol}")
    if result is None:
        from .generator import nullspace

        result = nullspace(robot)
    N = link_nullspace(robot, result)  # (10 n, d), orthonormal
    n = robot.n
    names = parameter_names(n)
    try:
        K, kept, eliminated = regroup(N, _elimination_order(n, keep), tol)
    except PgaDynError as exc:
        raise PgaDynError(f"{exc}: use a smaller tol") from None
    blocked = [names[c] for c in eliminated if names[c] in keep]
    if blocked:
        raise PgaDynError(
            f"keep: {', '.join(blocked)} cannot be kept: unidentifiable, or determined by the other kept parameters"
        )
    phi_model = to_link_parameters(robot, inertial_parameters(robot)).reshape(-1)
    return BaseParameters(
        robot.name,
        tuple(robot.body_names),
        K,
        kept,
        link_map(robot),
        result.status,
        result.trusted,
        certified=result.certified,
        phi_model=phi_model,
    )


def regroup(N: np.ndarray, order: Iterable[int], tol: float = PIVOT_TOL) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The elimination of the module docstring on any orthonormal nullspace basis ``N`` (p, d)
    of a regressor with p columns: the parameters are offered in ``order`` (indices 0..p-1, each
    at most once) and eliminated at a Gram-Schmidt pivot of norm above ``tol``.

    Returns (K (p - d, p), kept (p - d,) sorted indices, eliminated (d,) indices in elimination
    order) with K[:, kept] = identity, K[:, eliminated] = C = -N_I N_E^-1 (coefficients within
    SNAP_TOL of 0, 1, -1 set to them), so that Y theta = Y[:, kept] K theta for Y N = 0. Raises
    PgaDynError when ``order`` leaves directions of N without a pivot."""
    p, d = N.shape
    pivots = np.zeros((0, d))  # orthonormal basis of the rows eliminated so far
    eliminated = []
    for c in order:
        if len(eliminated) == d:
            break
        row = N[c]
        for _ in range(2):  # Gram-Schmidt twice: orthogonal to round-off
            row = row - pivots.T @ (pivots @ row)
        norm = np.linalg.norm(row)
        if norm > tol:
            eliminated.append(c)
            pivots = np.vstack([pivots, row / norm])
    if len(eliminated) < d:
        raise PgaDynError(f"tol={tol} leaves {d - len(eliminated)} of the {d} nullspace directions without a pivot")
    kept = np.array(sorted(set(range(p)) - set(eliminated)), dtype=np.int64)
    E = np.array(eliminated, dtype=np.int64)
    C = -np.linalg.solve(N[E].T, N[kept].T).T if d else np.zeros((kept.size, 0))
    for value in (0.0, 1.0, -1.0):
        C[np.abs(C - value) < SNAP_TOL] = value
    K = np.zeros((kept.size, p))
    K[np.arange(kept.size), kept] = 1.0
    K[:, E] = C
    return K, kept, eliminated
