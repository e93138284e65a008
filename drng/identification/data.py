"""Measurements in and out, a stage of the identification (:mod:`drng.identification` lists
them in order): a :class:`Trajectory` from arrays or from a CSV or NPZ file, checked value by
value, and written back to a file.

A :class:`Trajectory` holds, for ``ns`` samples of the actuated coordinates q_a of a robot
(``robot.actuated_names``, in that order), the times ``t`` (ns,), the positions ``q``, the
velocity and acceleration coordinates ``qd``, ``qdd`` (ns, n_a) and, for measurements, the
generalized forces ``tau`` (ns, n_a) of the actuated coordinates (joint torques, actuator
forces).

File layout. CSV: one header row, then one row per sample; the columns are ``t`` and, per
actuated coordinate ``NAME``, ``q_NAME`` and optionally ``qd_NAME``, ``qdd_NAME``,
``tau_NAME`` (all of a kind or none). NPZ: arrays ``t`` (ns,), ``q`` and optionally ``qd``,
``qdd``, ``tau`` (ns, n_a), and optionally ``names`` (the actuated coordinate names, checked
against the robot's). Both may hold measured passive coordinates of a closed-loop machine
(passive encoders): a column or array ``q_NAME`` (ns,) for a passive tree coordinate ``NAME``
(``robot.passive``), kept in ``Trajectory.passive`` and checked against the model's assembly
(:func:`pga_dyn.sampling.record_states`). Anything else in a file is an error: nothing is
silently dropped.

Derivatives. When ``qdd`` is not given, the checked signals are handed to
:mod:`drng.identification.signals`: put on a uniform grid when the sample times are irregular
(:func:`~drng.identification.signals.resample`), then q (or the measured ``qd``, when it is the
quieter signal) smoothed and differentiated with a cutoff chosen from the spectrum of q
(:func:`~drng.identification.signals.differentiate`). tau is used as measured.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field, replace

import numpy as np

from pga_dyn.errors import PgaDynError
from pga_dyn.kinematics import float_array
from pga_dyn.sampling import passive_measurements

from .signals import advance, differentiate, is_uniform, resample

#: Quantities per actuated coordinate, in file column order.
QUANTITIES = ("q", "qd", "qdd", "tau")


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Samples of the actuated coordinates ``names`` over time: ``t`` (ns,), ``q``, ``qd``,
    ``qdd`` (ns, n_a), ``tau`` (ns, n_a) or None; ``source`` names where they came from (a
    file, or ``arrays``) and ``derivatives`` how qd and qdd were obtained; ``passive``: measured
    passive tree coordinates {name: (ns,) values} (passive encoders of a closed-loop machine;
    empty when none)."""

    names: tuple
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None = None
    source: str = "arrays"
    derivatives: str = "given"
    passive: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return self.t.shape[0]

    def with_tau(self, tau, source: str | None = None) -> "Trajectory":
        """The same motion with the generalized forces ``tau`` (ns, n_a)."""
        tau = _samples(self.source, "tau", tau, len(self), self.names)
        return replace(self, tau=tau, source=self.source if source is None else source)

    def aligned(self, delay: float) -> "Trajectory":
        """The trajectory with its forces advanced by ``delay`` s (a force channel that lags the
        positions by ``delay``, :func:`~drng.identification.estimation.force_delay`), on the
        samples where the advanced forces are inside the record (linear interpolation)."""
        if self.tau is None:
            raise PgaDynError(f"{self.source}: no measured tau to align")
        if not (isinstance(delay, (int, float)) and np.isfinite(delay) and abs(delay) < self.t[-1] - self.t[0]):
            raise PgaDynError(f"{self.source}: the delay must be a finite number of seconds shorter than the record, "
                              f"got {delay!r}")
        tau, inside = advance(self.t, self.tau, delay)
        return Trajectory(self.names, self.t[inside], self.q[inside], self.qd[inside], self.qdd[inside], tau,
                          self.source, f"{self.derivatives}; forces advanced by {1e3 * delay:.3g} ms",
                          {name: x[inside] for name, x in self.passive.items()})

    def columns(self) -> dict:
        """{column name: (ns,) array} in file order: t, then q, qd, qdd (and tau) per coordinate."""
        out = {"t": self.t}
        for quantity in QUANTITIES:
            values = getattr(self, quantity)
            if values is not None:
                out.update({f"{quantity}_{name}": values[:, j] for j, name in enumerate(self.names)})
        out.update({f"q_{name}": x for name, x in self.passive.items()})
        return out

    def write(self, path) -> None:
        """Write the trajectory to ``path``: CSV (``.csv``, every float with the digits that read
        back the same number) or NPZ (``.npz``)."""
        path = os.fspath(path)
        kind = _kind(path)
        if kind == "npz":
            arrays = {"t": self.t, "q": self.q, "qd": self.qd, "qdd": self.qdd, "names": np.array(self.names)}
            if self.tau is not None:
                arrays["tau"] = self.tau
            arrays.update({f"q_{name}": x for name, x in self.passive.items()})
            with open(path, "wb") as handle:
                np.savez(handle, **arrays)
            return
        columns = self.columns()
        table = np.column_stack(list(columns.values()))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows([[repr(float(x)) for x in row] for row in table])


def _kind(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".csv", ".npz"):
        raise PgaDynError(f"{path}: a trajectory file must end in .csv or .npz")
    return ext[1:]


def _samples(where: str, name: str, value, ns: int, names) -> np.ndarray:
    """A finite (ns, n_a) array (a 1-D array for one coordinate), or a PgaDynError naming the
    array, the sample and the coordinate at fault."""
    x = float_array(f"{where}: {name}", value)
    if x.ndim == 1 and len(names) == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != len(names):
        raise PgaDynError(f"{where}: {name} must have one column per actuated coordinate {list(names)}, "
                          f"got shape {x.shape}")
    if x.shape[0] != ns:
        raise PgaDynError(f"{where}: unequal lengths: t has {ns} samples, {name} has {x.shape[0]}")
    bad = np.argwhere(~np.isfinite(x))
    if bad.size:
        s, j = bad[0]
        raise PgaDynError(f"{where}: {name} of '{names[j]}' is {x[s, j]} at sample {s} (t index {s}); "
                          f"{len(bad)} non-finite value{'s' if len(bad) > 1 else ''} in all")
    return x




def trajectory(robot, t, q, qd=None, qdd=None, tau=None, cutoff=None, source: str = "arrays",
               passive=None) -> Trajectory:
    """A validated :class:`Trajectory` of ``robot``'s actuated coordinates from arrays: ``t``
    (ns,) strictly increasing, ``q`` (ns, n_a), optionally ``qd``, ``qdd``, ``tau`` (ns, n_a).
    A missing ``qdd`` is derived (:func:`~drng.identification.signals.differentiate`, ``cutoff`` in Hz, None: from the
    spectrum of q): from the measured ``qd`` when given, else from q; at irregular sample times
    every signal is first resampled onto a uniform grid (:func:`~drng.identification.signals.resample`).
    Raises PgaDynError for arrays of unequal lengths or shapes, non-finite values or times that
    do not increase; the message names ``source``, the array, the sample and the coordinate.
    ``passive``: measured passive coordinates {name: (ns,) values}
    (:func:`pga_dyn.sampling.passive_measurements`), resampled with q."""
    names = tuple(robot.actuated_names)
    t = float_array(f"{source}: t", t)
    if t.ndim != 1 or t.size == 0:
        raise PgaDynError(f"{source}: t must be a non-empty 1-D array of times, got shape {t.shape}")
    ns = t.shape[0]
    if not np.all(np.isfinite(t)):
        raise PgaDynError(f"{source}: t is {t[~np.isfinite(t)][0]} at sample {int(np.flatnonzero(~np.isfinite(t))[0])}")
    if np.any(np.diff(t) <= 0):
        s = int(np.flatnonzero(np.diff(t) <= 0)[0])
        raise PgaDynError(f"{source}: t must increase, but t[{s + 1}] = {t[s + 1]} follows t[{s}] = {t[s]}")
    q = _samples(source, "q", q, ns, names)
    qd, qdd = (None if value is None else _samples(source, name, value, ns, names)
               for name, value in (("qd", qd), ("qdd", qdd)))
    tau = None if tau is None else _samples(source, "tau", tau, ns, names)
    passive = passive_measurements(robot, passive, ns, source)
    if qdd is not None and qd is not None:
        return Trajectory(names, t, q, qd, qdd, tau, source, "given", passive)
    steps = []
    if not is_uniform(t):
        smooth = {"q": q} if qd is None else {"q": q, "qd": qd}
        smooth.update({f"q_{name}": x[:, None] for name, x in passive.items()})
        t, smooth, noisy, how = resample(t, smooth, {"tau": tau, "qdd": qdd}, source)
        q, qd, tau, qdd = smooth["q"], smooth.get("qd"), noisy["tau"], noisy["qdd"]
        passive = {name: smooth[f"q_{name}"][:, 0] for name in passive}
        steps.append(how)
    given = qdd
    q, qd, qdd, how = differentiate(t, q, cutoff, source, qd)
    if given is not None:
        qdd, how = given, f"qdd given, {how}"
    steps.append(how)
    return Trajectory(names, t, q, qd, qdd, tau, source, "; ".join(steps), passive)



def read_trajectory(robot, path, cutoff=None, require_tau: bool = False) -> Trajectory:
    """The :class:`Trajectory` in a CSV or NPZ file (layout in the module docstring) of
    ``robot``'s actuated coordinates; ``require_tau``: the file must hold tau (measurements).
    Raises PgaDynError naming the file and the column, row or array at fault."""
    path = os.fspath(path)
    kind = _kind(path)
    try:
        columns = _read_npz(path) if kind == "npz" else _read_csv(path)
    except OSError as exc:
        raise PgaDynError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    names = tuple(robot.actuated_names)
    if kind == "npz":
        arrays = columns
        if "names" in arrays and tuple(str(x) for x in np.atleast_1d(arrays.pop("names"))) != names:
            raise PgaDynError(f"{path}: its names do not match the actuated coordinates of '{robot.name}' {list(names)}")
        passive = {f"q_{robot.coordinate_names[k]}": robot.coordinate_names[k] for k in robot.passive}
        arrays["passive"] = {passive[key]: arrays.pop(key) for key in sorted(set(arrays) & set(passive))}
        unknown = sorted(set(arrays) - {"t", "passive", *QUANTITIES})
        if unknown:
            raise PgaDynError(f"{path}: unknown arrays {unknown}; expected t, q, qd, qdd, tau, names and q_NAME of "
                              "passive coordinates")
    else:
        arrays = _csv_arrays(path, columns, names, tuple(robot.coordinate_names[k] for k in robot.passive))
    if "t" not in arrays or "q" not in arrays:
        missing = [c for c in ("t", "q") if c not in arrays]
        raise PgaDynError(f"{path}: missing {' and '.join(missing)} (columns t and q_NAME for every actuated "
                          f"coordinate NAME in {list(names)})")
    if require_tau and "tau" not in arrays:
        raise PgaDynError(f"{path}: no measured forces: columns tau_NAME for the actuated coordinates {list(names)} "
                          "are missing")
    return trajectory(robot, arrays["t"], arrays["q"], arrays.get("qd"), arrays.get("qdd"), arrays.get("tau"),
                      cutoff, path, arrays.get("passive"))


def _read_npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except ValueError as exc:
        raise PgaDynError(f"{path}: not a readable NPZ file of arrays: {exc}") from None


def _read_csv(path: str) -> list:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _csv_arrays(path: str, rows: list, names: tuple, passive: tuple = ()) -> dict:
    """{t: (ns,), quantity: (ns, n_a), passive: {name: (ns,)}} from the rows of a CSV file,
    checked cell by cell; ``passive``: the names of the passive coordinates (columns q_NAME)."""
    if not rows:
        raise PgaDynError(f"{path}: the file is empty (expected a header row t, q_NAME, ...)")
    header = [cell.strip() for cell in rows[0]]
    known = {"t": ("t", -1)}
    known.update({f"{quantity}_{name}": (quantity, j) for quantity in QUANTITIES for j, name in enumerate(names)})
    known.update({f"q_{name}": ("passive", name) for name in passive})
    duplicate = sorted({c for c in header if header.count(c) > 1})
    if duplicate:
        raise PgaDynError(f"{path}: columns {duplicate} appear more than once")
    unknown = [c for c in header if c not in known]
    if unknown:
        raise PgaDynError(f"{path}: unknown columns {unknown}; the columns are t and q_NAME, qd_NAME, qdd_NAME, "
                          f"tau_NAME for the actuated coordinates NAME in {list(names)} (and q_NAME for the passive "
                          f"ones {list(passive)})")
    body = rows[1:]
    if not body:
        raise PgaDynError(f"{path}: no samples after the header row")
    values = np.empty((len(body), len(header)))
    for k, row in enumerate(body):
        line = k + 2
        if len(row) != len(header):
            raise PgaDynError(f"{path}: line {line} has {len(row)} fields, the header has {len(header)}")
        for c, cell in enumerate(row):
            try:
                values[k, c] = float(cell)
            except ValueError:
                raise PgaDynError(f"{path}: line {line}, column '{header[c]}': '{cell}' is not a number") from None
            if not np.isfinite(values[k, c]):
                raise PgaDynError(f"{path}: line {line}, column '{header[c]}' is {cell.strip()}")
    arrays = {"passive": {}}
    present = {}
    for c, column in enumerate(header):
        quantity, j = known[column]
        if quantity == "t":
            arrays["t"] = values[:, c]
        elif quantity == "passive":
            arrays["passive"][j] = values[:, c]
        else:
            present.setdefault(quantity, {})[j] = values[:, c]
    for quantity, cols in present.items():
        missing = [f"{quantity}_{names[j]}" for j in range(len(names)) if j not in cols]
        if missing:
            raise PgaDynError(f"{path}: missing columns {missing} (the other {quantity}_ columns are there)")
        arrays[quantity] = np.column_stack([cols[j] for j in range(len(names))])
    return arrays
