"""Measurements in and out, a stage of the identification (:mod:`identification` lists
them in order): a :class:`Trajectory` from arrays, from a CSV or NPZ file or from a ROS bag,
checked value by value, experiments combined, and written back to a file.

A :class:`Trajectory` holds, for ``ns`` samples of the actuated coordinates q_a of a robot
(``robot.actuated_names``, in that order), the times ``t`` (ns,), the positions ``q``, the
velocity and acceleration coordinates ``qd``, ``qdd`` (ns, n_a) and, for measurements, the
generalized forces ``tau`` (ns, n_a) of the actuated coordinates (joint torques, actuator
forces).

File layout. CSV: one header row, then one row per sample; the columns are ``t`` and, per
actuated coordinate ``NAME``, ``q_NAME`` and optionally ``qd_NAME``, ``qdd_NAME``,
``tau_NAME`` or ``current_NAME`` (all of a kind or none). NPZ: arrays ``t`` (ns,), ``q`` and
optionally ``qd``, ``qdd``, ``tau``, ``current`` (ns, n_a), and optionally ``names`` (the
actuated coordinate names, checked against the robot's). ROS bags (ROS 1 ``.bag``, ROS 2
``.db3``, ``.mcap`` or a rosbag2 folder; the optional extra ``logs``, the ``rosbags``
package): the ``sensor_msgs/JointState`` messages of one topic read as the columns ``t``
(seconds after the first header stamp), ``position_JOINT``, ``velocity_JOINT`` and
``effort_JOINT`` for the joint names JOINT of the messages, mapped by :data:`BAG_COLUMNS`.
Any of them may hold measured passive coordinates of a closed-loop machine (passive
encoders): a column or array ``q_NAME`` (ns,) for a passive tree coordinate ``NAME``
(``robot.passive``), kept in ``Trajectory.passive`` and checked against the model's assembly
(:func:`pga_dyn.sampling.record_states`).

Logs as robots write them. A column map (``columns``) names the file's own columns:
``{"q_{name}": "pos_{name}"}`` for every coordinate (``{name}`` the coordinate's name,
``{index}`` its number from 1), ``{"q_joint1": "POS1"}`` for one, ``{"t": "time"}``; for NPZ,
whole arrays (``{"q": "position"}``). Columns the map and the layout do not use are ignored and
named in :attr:`Trajectory.notes` (``ignored columns: [...]``); they are not parsed, so they may
hold text. A required column that is missing is an error naming the file's closest column
names (``difflib``). ``time_scale``: seconds per unit of the time column (1e-9 for nanosecond
stamps). Motor currents with drive ``gains`` (one per coordinate, or {name: gain}; gain =
torque constant x gear ratio, the joint's force per ampere) give the forces, tau_j = gain_j
current_j. ``window`` (t0, t1): the samples between t0 and t1 seconds after the first; ``trim``:
seconds dropped at both ends after the derivatives (the robot's start and stop, and the
filter's ends); ``decimate``: every N-th sample after an anti-aliasing filter
(:func:`~identification.signals.decimate`). Several files (experiments) are read one by
one and joined by :func:`combine`, which keeps their boundaries (:attr:`Trajectory.breaks`).

Derivatives. When ``qdd`` is not given, the checked signals are handed to
:mod:`identification.signals`: put on a uniform grid when the sample times are irregular
(:func:`~identification.signals.resample`), then q (or the measured ``qd``, when it is the
quieter signal) smoothed and differentiated with a cutoff chosen from the spectrum of q
(:func:`~identification.signals.differentiate`). tau is used as measured. Decimation
comes after the derivatives: the differentiator then averages the noise over every sample
(the same window in seconds holds N times as many), and the anti-aliasing filter is applied to
q, qd, qdd and tau alike, so that both sides of tau = Y(q, qd, qdd) beta see the same filter
(the motion lies in its passband, where its gain is 1 to 1e-4; the noise of tau and what the
Savitzky-Golay filter's sidelobes leave in qdd above the new Nyquist frequency is removed
instead of folded onto the motion's band).
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.errors import PgaDynError, optional
from pga_dyn.kinematics import float_array
from pga_dyn.sampling import passive_measurements

from .signals import advance, differentiate, is_uniform, resample
from .signals import decimate as decimated

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy.typing as npt

    from pga_dyn.model import Robot

#: Quantities per actuated coordinate, in file column order.
QUANTITIES = ("q", "qd", "qdd", "tau")
#: Motor currents (A), per actuated coordinate: forces once multiplied by the drive gains.
CURRENT = "current"
#: What a file may hold per actuated coordinate.
KINDS = QUANTITIES + (CURRENT,)
#: Files read as ROS bags (ROS 1, ROS 2 SQLite, MCAP); a folder with a metadata.yaml is a rosbag2 too.
BAG_SUFFIXES = (".bag", ".db3", ".mcap")
#: The message type read from a bag (rosbags' name; ROS 1's sensor_msgs/JointState reads as it too).
JOINT_STATE = "sensor_msgs/msg/JointState"
#: The column map of a bag's JointState columns; a user's map is applied over it.
BAG_COLUMNS = {"q_{name}": "position_{name}", "qd_{name}": "velocity_{name}", "tau_{name}": "effort_{name}"}


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Samples of the actuated coordinates ``names`` over time: ``t`` (ns,), ``q``, ``qd``,
    ``qdd`` (ns, n_a), ``tau`` (ns, n_a) or None; ``source`` names where they came from (a
    file, files joined by " + ", or ``arrays``), ``derivatives`` how qd and qdd were obtained,
    ``breaks`` the sample index where each experiment after the first begins (:func:`combine`)
    and ``notes`` how the samples were read and selected (column map, ignored columns, forces
    from currents, window, decimation, trimming); ``passive``: measured passive tree
    coordinates {name: (ns,) values} (passive encoders of a closed-loop machine; empty when
    none); ``qd_noise`` (n_a,): the standard deviation of the noise the velocities keep, when
    pga-dyn derived or smoothed them (:func:`~identification.signals.differentiate`; None for
    velocities given as they are)."""

    names: tuple
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None = None
    source: str = "arrays"
    derivatives: str = "given"
    breaks: tuple = ()
    notes: tuple = ()
    passive: dict = dataclasses.field(default_factory=dict)
    qd_noise: np.ndarray | None = None

    def __len__(self) -> int:
        return self.t.shape[0]

    def with_tau(self, tau: npt.ArrayLike, source: str | None = None) -> Trajectory:
        """The same motion with the generalized forces ``tau`` (ns, n_a)."""
        tau = _samples(self.source, "tau", tau, len(self), self.names)
        return replace(self, tau=tau, source=self.source if source is None else source)

    def part(self, start: int, stop: int, source: str | None = None) -> Trajectory:
        """The samples ``start`` to ``stop`` (indices, stop excluded) as a Trajectory of their own,
        the experiments' boundaries and the passive coordinates with them; ``source``: default
        this one's."""
        return Trajectory(
            self.names,
            self.t[start:stop],
            self.q[start:stop],
            self.qd[start:stop],
            self.qdd[start:stop],
            None if self.tau is None else self.tau[start:stop],
            self.source if source is None else source,
            self.derivatives,
            tuple(b - start for b in self.breaks if start < b < stop),
            self.notes,
            {name: x[start:stop] for name, x in self.passive.items()},
            self.qd_noise,
        )

    def segments(self) -> list:
        """The experiments of the trajectory (one, or those :func:`combine` joined), each a
        Trajectory of its own samples, in order."""
        edges = (0, *self.breaks, len(self))
        return [self.part(a, b) for a, b in zip(edges[:-1], edges[1:])]

    def aligned(self, delay: float) -> Trajectory:
        """The trajectory with its forces advanced by ``delay`` s (a force channel that lags the
        positions by ``delay``, :func:`~identification.estimation.force_delay`), on the
        samples where the advanced forces are inside the record (linear interpolation), each
        experiment on its own."""
        return self.aligned_rows(delay)[0]

    def aligned_rows(self, delay: float) -> tuple:
        """(:meth:`aligned` by ``delay``, the rows (m,) of this trajectory it keeps, in order): its
        positions, velocities and accelerations are those rows of this one's, and so are their
        states (:func:`~identification.model.state_rows`)."""
        if self.tau is None:
            raise PgaDynError(f"{self.source}: no measured tau to align")
        parts = self.segments()
        shortest = min(p.t[-1] - p.t[0] for p in parts)
        if not (isinstance(delay, (int, float)) and np.isfinite(delay) and abs(delay) < shortest):
            raise PgaDynError(
                f"{self.source}: the delay must be a finite number of seconds shorter than the record"
                f"{' (each experiment)' if len(parts) > 1 else ''}, got {delay!r}"
            )
        moved, rows = [], []
        for first, p in zip((0, *self.breaks), parts):
            tau, inside = advance(p.t, p.tau, delay)
            rows.append(first + np.flatnonzero(inside))
            moved.append(
                Trajectory(
                    self.names,
                    p.t[inside],
                    p.q[inside],
                    p.qd[inside],
                    p.qdd[inside],
                    tau,
                    passive={name: x[inside] for name, x in p.passive.items()},
                )
            )
        joined = _joined(moved, self.source, f"{self.derivatives}; forces advanced by {1e3 * delay:.3g} ms", self.notes)
        return replace(joined, qd_noise=self.qd_noise), np.concatenate(rows)

    def columns(self) -> dict:
        """{column name: (ns,) array} in file order: t, then q, qd, qdd (and tau) per coordinate."""
        out = {"t": self.t}
        for quantity in QUANTITIES:
            values = getattr(self, quantity)
            if values is not None:
                out.update({f"{quantity}_{name}": values[:, j] for j, name in enumerate(self.names)})
        out.update({f"q_{name}": x for name, x in self.passive.items()})
        return out

    def write(self, path: os.PathLike | str) -> None:
        """Write the trajectory to ``path``: CSV (``.csv``, every float with the digits that read
        back the same number) or NPZ (``.npz``). The samples are written; the boundaries of
        combined experiments are not (the file holds qd and qdd)."""
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
        if kind != "csv":
            raise PgaDynError(f"{path}: trajectories are written as .csv or .npz files")
        columns = self.columns()
        table = np.column_stack(list(columns.values()))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows([[repr(float(x)) for x in row] for row in table])


def _joined(parts: list, source: str, derivatives: str, notes: tuple) -> Trajectory:
    """The samples of ``parts`` (Trajectories of the same coordinates, times already increasing
    across them) one after the other, their boundaries kept in ``breaks``."""

    def cat(name):
        return None if parts[0].tau is None and name == "tau" else np.concatenate([getattr(p, name) for p in parts])

    breaks = [0]
    for p in parts:
        breaks += [breaks[-1] + b for b in p.breaks] + [breaks[-1] + len(p)]
    measured = set.intersection(*(set(p.passive) for p in parts))
    passive = {name: np.concatenate([p.passive[name] for p in parts]) for name in sorted(measured)}
    noises = [p.qd_noise for p in parts]
    return Trajectory(
        parts[0].names,
        cat("t"),
        cat("q"),
        cat("qd"),
        cat("qdd"),
        cat("tau"),
        source,
        derivatives,
        tuple(int(b) for b in breaks[1:-1]),
        tuple(notes),
        passive,
        None if any(n is None for n in noises) else np.max(noises, axis=0),
    )


def combine(trajectories: Iterable[Trajectory], source: str | None = None) -> Trajectory:
    """One :class:`Trajectory` of several experiments of the same actuated coordinates (files
    read one by one, each differentiated on its own), for one estimate: their samples one after
    the other, each experiment's times shifted to begin one of its own (median) sample steps
    after the previous one ends, so that t keeps increasing, and the index where each begins in
    ``breaks``, so that nothing that needs continuity crosses a boundary
    (:meth:`Trajectory.segments`, :meth:`Trajectory.aligned`). tau must be in all or in none.
    ``source``: default the sources joined by " + ". One trajectory is returned as it is.
    PgaDynError naming the experiment at fault."""
    parts = list(trajectories)
    if not parts or not all(isinstance(p, Trajectory) for p in parts):
        raise PgaDynError(f"combine takes one or more Trajectory objects, got {[type(p).__name__ for p in parts]}")
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    for p in parts[1:]:
        if p.names != first.names:
            raise PgaDynError(
                f"{p.source}: its coordinates {list(p.names)} are not those of {first.source} "
                f"{list(first.names)}: experiments of one robot only"
            )
        if (p.tau is None) != (first.tau is None):
            lacking = p if p.tau is None else first
            raise PgaDynError(
                f"{lacking.source}: no measured tau, while the other experiments have it: "
                "give forces for all or for none"
            )
    moved, notes, end = [], [], None
    for k, p in enumerate(parts):
        if len(p) < 2:
            raise PgaDynError(f"{p.source}: {len(p)} sample: an experiment needs at least 2 to be combined")
        shift = 0.0 if end is None else end + float(np.median(np.diff(p.t))) - p.t[0]
        moved.append(replace(p, t=p.t + shift))
        end = moved[-1].t[-1]
        notes += [f"{p.source}: {note}" for note in p.notes]
        if shift:
            notes.append(f"{p.source}: experiment {k + 1}, times shifted by {shift:+.6g} s to follow experiment {k}")
    derivatives = {p.derivatives for p in parts}
    derivatives = (
        first.derivatives if len(derivatives) == 1 else "; ".join(f"{p.source}: {p.derivatives}" for p in parts)
    )
    return _joined(moved, " + ".join(p.source for p in parts) if source is None else source, derivatives, notes)


def _kind(path: str) -> str:
    """csv, npz or bag (a ROS bag: :data:`BAG_SUFFIXES`, or a rosbag2 folder)."""
    ext = os.path.splitext(path)[1].lower()
    if ext in BAG_SUFFIXES or os.path.isfile(os.path.join(path, "metadata.yaml")):
        return "bag"
    if ext not in (".csv", ".npz"):
        raise PgaDynError(
            f"{path}: a trajectory file must end in .csv or .npz, or be a ROS bag "
            f"({', '.join(BAG_SUFFIXES)} or a rosbag2 folder)"
        )
    return ext[1:]


def _samples(where: str, name: str, value, ns: int, names) -> np.ndarray:
    """A finite (ns, n_a) array (a 1-D array for one coordinate), or a PgaDynError naming the
    array, the sample and the coordinate at fault."""
    x = float_array(f"{where}: {name}", value)
    if x.ndim == 1 and len(names) == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != len(names):
        raise PgaDynError(
            f"{where}: {name} must have one column per actuated coordinate {list(names)}, got shape {x.shape}"
        )
    if x.shape[0] != ns:
        raise PgaDynError(f"{where}: unequal lengths: t has {ns} samples, {name} has {x.shape[0]}")
    bad = np.argwhere(~np.isfinite(x))
    if bad.size:
        s, j = bad[0]
        raise PgaDynError(
            f"{where}: {name} of '{names[j]}' is {x[s, j]} at sample {s} (t index {s}); "
            f"{len(bad)} non-finite value{'s' if len(bad) > 1 else ''} in all"
        )
    return x


def _window(where: str, t: np.ndarray, window):
    """The mask (ns,) of the times ``t`` between ``window`` = (t0, t1) seconds after the first
    sample, and a sentence for the notes."""
    try:
        t0, t1 = (float(x) for x in window)
    except (TypeError, ValueError):
        raise PgaDynError(f"{where}: the window must be two times (t0, t1) in seconds, got {window!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t0 < t1):
        raise PgaDynError(f"{where}: the window (t0, t1) must be finite with t0 < t1, got {window!r}")
    after = t - t[0]
    keep = (after >= t0) & (after <= t1)
    if keep.sum() < 2:
        raise PgaDynError(
            f"{where}: the window {t0:g} to {t1:g} s holds {int(keep.sum())} samples (the record spans "
            f"0 to {after[-1]:.6g} s after its first sample)"
        )
    return keep, f"window {t0:g} to {t1:g} s after the first sample: {int(keep.sum())} of {len(t)} samples"


def _trim(where: str, t: np.ndarray, trim):
    """The mask (ns,) of the times ``t`` at least ``trim`` seconds from both ends, and a sentence."""
    if not (isinstance(trim, (int, float, np.floating)) and np.isfinite(trim) and trim >= 0):
        raise PgaDynError(f"{where}: trim must be a non-negative number of seconds, got {trim!r}")
    keep = (t >= t[0] + trim) & (t <= t[-1] - trim)
    if keep.sum() < 2:
        raise PgaDynError(
            f"{where}: trimming {trim:g} s at each end of a {t[-1] - t[0]:.6g} s record leaves "
            f"{int(keep.sum())} samples"
        )
    return keep, f"trimmed {trim:g} s at each end: {int(keep.sum())} of {len(t)} samples kept"


def trajectory(
    robot: Robot,
    t: npt.ArrayLike,
    q: npt.ArrayLike,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    tau: npt.ArrayLike | None = None,
    cutoff: float | None = None,
    source: str = "arrays",
    *,
    window: Sequence[float] | None = None,
    trim: float = 0.0,
    decimate: int = 1,
    notes: Iterable[str] = (),
    passive: dict | None = None,
) -> Trajectory:
    """A validated :class:`Trajectory` of ``robot``'s actuated coordinates from arrays: ``t``
    (ns,) strictly increasing, ``q`` (ns, n_a), optionally ``qd``, ``qdd``, ``tau`` (ns, n_a).
    ``window`` (t0, t1): only the samples between t0 and t1 seconds after the first. A missing
    ``qdd`` is derived (:func:`~identification.signals.differentiate`, ``cutoff`` in Hz,
    None: from the spectrum of q): from the measured ``qd`` when given, else from q; at
    irregular sample times every signal is first resampled onto a uniform grid
    (:func:`~identification.signals.resample`). Then ``decimate`` > 1 keeps every N-th
    sample after an anti-aliasing filter on every signal alike
    (:func:`~identification.signals.decimate`), and ``trim`` drops that many seconds at
    both ends. ``notes``: sentences on how the arrays were read, kept in the Trajectory with
    those of these steps. ``passive``: measured passive coordinates {name: (ns,) values}
    (:func:`pga_dyn.sampling.passive_measurements`), selected, resampled and decimated with q.
    Raises PgaDynError for arrays of unequal lengths or shapes, non-finite values, times that do
    not increase or options that leave too few samples; the message names ``source``, the array,
    the sample and the coordinate."""
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
    qd, qdd = (
        None if value is None else _samples(source, name, value, ns, names)
        for name, value in (("qd", qd), ("qdd", qdd))
    )
    tau = None if tau is None else _samples(source, "tau", tau, ns, names)
    passive = passive_measurements(robot, passive, ns, source)
    notes = list(notes)
    if window is not None:
        keep, how = _window(source, t, window)
        t, q, qd, qdd, tau = (None if x is None else x[keep] for x in (t, q, qd, qdd, tau))
        passive = {name: x[keep] for name, x in passive.items()}
        notes.append(how)
    steps, noise = [], None
    if qdd is None or qd is None:
        if not is_uniform(t):
            smooth = {"q": q} if qd is None else {"q": q, "qd": qd}
            smooth.update({f"q_{name}": x[:, None] for name, x in passive.items()})
            t, smooth, noisy, how = resample(t, smooth, {"tau": tau, "qdd": qdd}, source)
            q, qd, tau, qdd = smooth["q"], smooth.get("qd"), noisy["tau"], noisy["qdd"]
            passive = {name: smooth[f"q_{name}"][:, 0] for name in passive}
            steps.append(how)
        given = qdd
        q, qd, qdd, noise, how = differentiate(t, q, cutoff, source, qd)
        if given is not None:
            qdd, how = given, f"qdd given, {how}"
        steps.append(how)
    signals = {"q": q, "qd": qd, "qdd": qdd, "tau": tau, **{f"q_{name}": x[:, None] for name, x in passive.items()}}
    if decimate != 1:
        t, signals, how = decimated(t, signals, decimate, source)
        notes.append(how)
    if trim:
        keep, how = _trim(source, t, trim)
        t = t[keep]
        signals = {k: None if v is None else v[keep] for k, v in signals.items()}
        notes.append(how)
    passive = {name: signals[f"q_{name}"][:, 0] for name in passive}
    return Trajectory(
        names,
        t,
        signals["q"],
        signals["qd"],
        signals["qdd"],
        signals["tau"],
        source,
        "; ".join(steps) or "given",
        (),
        tuple(notes),
        passive,
        noise,
    )


def read_trajectory(
    robot: Robot,
    path: os.PathLike | str,
    cutoff: float | None = None,
    require_tau: bool = False,
    *,
    columns: dict | Iterable[str] | None = None,
    time_scale: float = 1.0,
    gains: npt.ArrayLike | dict | Iterable[str] | None = None,
    window: Sequence[float] | None = None,
    trim: float = 0.0,
    decimate: int = 1,
    topic: str | None = None,
) -> Trajectory:
    """The :class:`Trajectory` in a CSV or NPZ file or a ROS bag (layout and options in the
    module docstring) of ``robot``'s actuated coordinates; ``require_tau``: the file must hold
    tau or currents (measurements). ``columns``: the column map, a dict {our column: the file's}
    or strings "OURS=THEIRS"; ``time_scale``: seconds per unit of the time column; ``gains``: the
    drive gains of currents, (n_a,) numbers, {name: gain} or strings "NAME=GAIN"; ``window``,
    ``trim``, ``decimate``: as in :func:`trajectory`; ``topic``: the JointState topic of a bag
    (needed when it has several). Raises PgaDynError naming the file and the column, row or
    array at fault."""
    path = os.fspath(path)
    kind = _kind(path)
    names = tuple(robot.actuated_names)
    mapping = _pairs(path, "column map", columns)
    if not (isinstance(time_scale, (int, float)) and np.isfinite(time_scale) and time_scale > 0):
        raise PgaDynError(f"{path}: the time scale must be a positive number of seconds per unit, got {time_scale!r}")
    if kind == "bag" and time_scale != 1:
        raise PgaDynError(f"{path}: a ROS bag's times are read in seconds; the time scale is for CSV and NPZ files")
    if kind != "bag" and topic is not None:
        raise PgaDynError(f"{path}: a topic is read from ROS bags only")
    notes = []
    passive = tuple(robot.coordinate_names[k] for k in robot.passive)
    try:
        if kind == "npz":
            arrays, ignored = _npz_arrays(path, names, mapping, robot.name, passive)
            what = "arrays"
        else:
            if kind == "csv":
                header, rows = _read_csv(path)
            else:
                header, rows, how = _read_bag(path, topic)
                notes.append(how)
                mapping = {**BAG_COLUMNS, **mapping}
            arrays, ignored = _table_arrays(path, header, rows, names, mapping, passive)
            what = "columns"
    except OSError as exc:
        raise PgaDynError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if mapping:
        notes.append("column map: " + ", ".join(f"{k}={v}" for k, v in mapping.items()))
    if ignored:
        notes.append(f"ignored {what}: {ignored}")
    missing = [c for c in ("t", "q") if c not in arrays]
    if missing:
        near = _near(
            ignored,
            (["t", "time", "stamp", "timestamp"] if "t" in missing else [])
            + ([f"q_{n}" for n in names] if "q" in missing else []),
        )
        raise PgaDynError(
            f"{path}: missing {' and '.join(missing)} (columns t and q_NAME for every actuated "
            f"coordinate NAME in {list(names)}, or a column map for yours){near}"
        )
    if gains is not None:
        if CURRENT not in arrays:
            raise PgaDynError(
                f"{path}: drive gains given, but no motor currents (columns current_NAME for "
                f"{list(names)}, or a column map for yours)"
            )
        g = gain_values(path, gains, names)
        if "tau" in arrays:
            notes.append("tau columns not used: the forces are the currents times the gains")
        arrays["tau"] = arrays.pop(CURRENT) * g
        notes.append("forces = current x drive gain (" + ", ".join(f"{n} {v:g}" for n, v in zip(names, g)) + ")")
    elif CURRENT in arrays:
        if "tau" not in arrays and require_tau:
            raise PgaDynError(
                f"{path}: motor currents (current_NAME) but no drive gains: give one gain per actuated "
                f"coordinate {list(names)} (torque constant x gear ratio; CLI: --gains)"
            )
        arrays.pop(CURRENT)
        notes.append("currents not used (no drive gains)")
    if require_tau and "tau" not in arrays:
        raise PgaDynError(
            f"{path}: no measured forces: columns tau_NAME (or current_NAME with drive gains) for the "
            f"actuated coordinates {list(names)} are missing"
            f"{_near(ignored, [f'tau_{n}' for n in names] + [f'current_{n}' for n in names])}"
        )
    if time_scale != 1:
        notes.append(f"times in units of {time_scale:g} s")
    return trajectory(
        robot,
        arrays["t"] * time_scale,
        arrays["q"],
        arrays.get("qd"),
        arrays.get("qdd"),
        arrays.get("tau"),
        cutoff,
        path,
        window=window,
        trim=trim,
        decimate=decimate,
        notes=notes,
        passive=arrays.get("passive"),
    )


def read_columns(path: os.PathLike | str, wanted: Iterable[str]) -> tuple[dict, list]:
    """({column: (ns,) values} of the columns ``wanted`` that a CSV file (a header row, then one row
    per sample) or an NPZ file (one array (ns,) per column) holds, the names of its other columns
    (not parsed: they may hold text)). PgaDynError naming the file, the line and the column of a
    value that is not a finite number, and for an NPZ array that is not (ns,)."""
    path = os.fspath(path)
    kind = _kind(path)
    wanted = list(dict.fromkeys(wanted))
    try:
        if kind == "npz":
            data = _read_npz(path)
            found = {name: np.asarray(data[name], dtype=float) for name in wanted if name in data}
            lengths = {name: x.shape for name, x in found.items()}
            first = next(iter(found.values()), np.zeros(0))
            bad = [name for name, shape in lengths.items() if shape != (first.shape[0],) or first.ndim != 1]
            if bad:
                raise PgaDynError(f"{path}: arrays {bad} are not one value per sample, shape (ns,): {lengths}")
            for name, x in found.items():
                if not np.all(np.isfinite(x)):
                    raise PgaDynError(
                        f"{path}: array '{name}' is {x[~np.isfinite(x)][0]} at sample "
                        f"{int(np.flatnonzero(~np.isfinite(x))[0])}"
                    )
            return found, sorted(set(data) - set(found))
        if kind != "csv":
            raise PgaDynError(f"{path}: a legged robot's log is read from .csv or .npz files")
        header, body = _read_csv(path)
    except OSError as exc:
        raise PgaDynError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    duplicated = sorted({c for c in header if header.count(c) > 1 and c in wanted})
    if duplicated:
        raise PgaDynError(f"{path}: columns {duplicated} appear more than once")
    used = [header.index(name) for name in wanted if name in header]
    numbers = _csv_numbers(path, header, body, used)
    return {header[c]: numbers[c] for c in used}, [c for c in header if c not in wanted]


def _near(candidates, words) -> str:
    """ "; closest: [...]" naming the ``candidates`` (file columns) closest to ``words``
    (difflib), or ""."""
    found = []
    for word in words:
        for match in difflib.get_close_matches(word, candidates, n=3, cutoff=0.6):
            if match not in found:
                found.append(match)
    return f"; closest columns in the file: {found}" if found else ""


def _pairs(where: str, what: str, items) -> dict:
    """{key: value} of a dict, or of strings "KEY=VALUE" (the command line's), or {} for None."""
    if items is None:
        return {}
    if isinstance(items, dict):
        return {str(k): str(v) for k, v in items.items()}
    if isinstance(items, str):
        items = [items]
    out = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip() or not value.strip():
            raise PgaDynError(f"{where}: the {what} item '{item}' is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def gain_values(where: str, gains: npt.ArrayLike | dict | Iterable[str], names: tuple) -> np.ndarray:
    """The drive gains (n_a,) from numbers in coordinate order, {name: gain} or "NAME=GAIN"
    strings; PgaDynError naming the gain at fault."""
    if isinstance(gains, (str, dict)) or (
        not np.isscalar(gains) and any(isinstance(g, str) and "=" in g for g in gains)
    ):
        by_name = _pairs(where, "gains", gains)
        unknown = sorted(set(by_name) - set(names))
        lacking = [n for n in names if n not in by_name]
        if unknown or lacking:
            raise PgaDynError(
                f"{where}: gains for {unknown or lacking}: "
                f"{'no such actuated coordinate' if unknown else 'missing'}; give NAME=GAIN for each "
                f"of {list(names)}"
            )
        values = [by_name[n] for n in names]
    else:
        values = list(np.atleast_1d(gains))
        if len(values) != len(names):
            raise PgaDynError(
                f"{where}: {len(values)} gains for {len(names)} actuated coordinates {list(names)}: "
                "give one per coordinate, in that order, or NAME=GAIN"
            )
    out = np.empty(len(names))
    for j, value in enumerate(values):
        try:
            out[j] = float(value)
        except (TypeError, ValueError):
            raise PgaDynError(f"{where}: the gain of '{names[j]}' is '{value}', not a number") from None
        if not np.isfinite(out[j]) or out[j] == 0:
            raise PgaDynError(f"{where}: the gain of '{names[j]}' must be a finite non-zero number, got {value!r}")
    return out


def _read_npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except ValueError as exc:
        raise PgaDynError(f"{path}: not a readable NPZ file of arrays: {exc}") from None


def _npz_arrays(path: str, names: tuple, mapping: dict, robot_name: str, passive: tuple = ()):
    """({t, kind: array, "passive": {name: (ns,)}} of an NPZ file with the column map ``mapping``
    of whole arrays and the arrays q_NAME of the ``passive`` coordinates, the names of the arrays
    not used)."""
    data = _read_npz(path)
    if "names" in data and tuple(str(x) for x in np.atleast_1d(data.pop("names"))) != names:
        raise PgaDynError(f"{path}: its names do not match the actuated coordinates of '{robot_name}' {list(names)}")
    wanted = {k: k for k in ("t", *KINDS)}
    for key, value in mapping.items():
        if key not in wanted:
            raise PgaDynError(
                f"{path}: the column map's '{key}': an NPZ file's map names whole arrays, "
                f"t and {', '.join(KINDS)} (e.g. q=position)"
            )
        if value not in data:
            raise PgaDynError(
                f"{path}: the column map gives '{value}' for {key}, and the file has no such array "
                f"(arrays: {sorted(data)})"
            )
        wanted[key] = value
    chosen = {k: v for k, v in wanted.items() if v in data}
    if len(set(chosen.values())) < len(chosen):
        raise PgaDynError(f"{path}: the column map uses one array for several quantities: {chosen}")
    measured = {name: data[f"q_{name}"] for name in passive if f"q_{name}" in data}
    used = set(chosen.values()) | {f"q_{name}" for name in measured}
    return {**{k: data[v] for k, v in chosen.items()}, "passive": measured}, sorted(set(data) - used)


def _read_csv(path: str):
    """The header (stripped names) and the samples of a CSV file: its lines after the header (a
    str) when the file is plain (no quoted field, lines ending in LF or CRLF), so that the columns
    used are parsed in one pass (:func:`_csv_numbers`), else its rows (lists of fields, read by
    the csv module: quoted fields may hold commas and line breaks). PgaDynError for an empty file,
    no samples or a row whose number of fields is not the header's, naming the line."""
    with open(path, newline="", encoding="utf-8") as handle:
        text = handle.read()
    if not text:
        raise PgaDynError(f"{path}: the file is empty (expected a header row t, q_NAME, ...)")
    plain = text.replace("\r\n", "\n")
    if '"' not in plain and "\r" not in plain:
        lines = plain.split("\n")
        if lines[-1] == "":
            lines.pop()
        header, body = [cell.strip() for cell in lines[0].split(",")], "\n".join(lines[1:])
        widths = [line.count(",") + 1 if line else 0 for line in lines[1:]]
    else:
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            rows = list(reader)
        except csv.Error as exc:
            raise PgaDynError(f"{path}: line {reader.line_num}: {exc}") from None
        header, body = [cell.strip() for cell in rows[0]], rows[1:]
        widths = [len(row) for row in body]
    if not widths:
        raise PgaDynError(f"{path}: no samples after the header row")
    for k, width in enumerate(widths):
        if width != len(header):
            raise PgaDynError(f"{path}: line {k + 2} has {width} fields, the header has {len(header)}")
    return header, body


def _csv_numbers(path: str, header: list, body, used: list) -> dict:
    """{column index: (ns,) values} of the columns ``used`` of a CSV file's samples ``body``
    (:func:`_read_csv`): a plain file's in one pass (numpy's parser), the others, and a plain
    file with a value that is not a finite number, value by value, which raises a PgaDynError
    naming the line, the column and the value (the first in the order of ``used``, then of the
    lines). The other columns are not parsed (they may hold text)."""
    if isinstance(body, str):
        try:
            table = np.loadtxt(io.StringIO(body), delimiter=",", usecols=used, comments=None, ndmin=2)
        except ValueError:
            table = None
        if table is not None and np.all(np.isfinite(table)):
            return {c: table[:, k] for k, c in enumerate(used)}
        body = [line.split(",") for line in body.split("\n")]
    out = {}
    for c in used:
        x = out[c] = np.empty(len(body))
        for k, row in enumerate(body):
            try:
                x[k] = float(row[c])
            except ValueError:
                raise PgaDynError(f"{path}: line {k + 2}, column '{header[c]}': '{row[c]}' is not a number") from None
            if not np.isfinite(x[k]):
                raise PgaDynError(f"{path}: line {k + 2}, column '{header[c]}' is {row[c].strip()}")
    return out


def _read_bag(path: str, topic):
    """The columns of the ``sensor_msgs/JointState`` messages of ``topic`` (or the bag's only
    JointState topic) in a ROS bag: the header ``t``, ``position_JOINT``, ``velocity_JOINT``,
    ``effort_JOINT`` (the fields that the messages fill), the values (ns, k) and a sentence."""
    highlevel = optional("rosbags.highlevel", "reading ROS bags", "logs")
    typesys = optional("rosbags.typesys", "reading ROS bags", "logs")
    import pathlib

    try:
        with highlevel.AnyReader(
            [pathlib.Path(path)], default_typestore=typesys.get_typestore(typesys.Stores.ROS2_HUMBLE)
        ) as reader:
            states = [c for c in reader.connections if c.msgtype == JOINT_STATE]
            topics = sorted({c.topic for c in states})
            if topic is None and len(topics) != 1 or topic is not None and topic not in topics:
                every = sorted({f"{c.topic} ({c.msgtype})" for c in reader.connections})
                if topic is not None:
                    problem = f"no sensor_msgs/JointState topic '{topic}' (JointState topics: {topics})"
                elif topics:
                    problem = f"several sensor_msgs/JointState topics {topics}: choose one (topic, CLI --topic)"
                else:
                    problem = f"no sensor_msgs/JointState topic (topics: {every})"
                raise PgaDynError(f"{path}: {problem}")
            topic = topic or topics[0]
            messages = [
                (logged, reader.deserialize(raw, c.msgtype))
                for c, logged, raw in reader.messages(connections=[c for c in states if c.topic == topic])
            ]
    except highlevel.AnyReaderError as exc:
        raise PgaDynError(f"{path}: not a readable ROS bag: {exc}") from None
    if not messages:
        raise PgaDynError(f"{path}: no messages on {topic}")
    joints = list(messages[0][1].name)
    fields = {"position": [], "velocity": [], "effort": []}
    stamps, logged = [], []
    for k, (received, msg) in enumerate(messages):
        if sorted(msg.name) != sorted(joints):
            raise PgaDynError(
                f"{path}: message {k} on {topic} names the joints {list(msg.name)}, the first one "
                f"{joints}: one set of joints per topic"
            )
        order = [list(msg.name).index(j) for j in joints]
        for field, values in fields.items():
            x = np.asarray(getattr(msg, field), dtype=float)
            if x.size not in (0, len(joints)):
                raise PgaDynError(
                    f"{path}: message {k} on {topic} has {x.size} {field} values for {len(joints)} joints"
                )
            values.append(x[order] if x.size else None)
        stamps.append(int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec))
        logged.append(int(received))
    header, blocks = ["t"], []
    for field, values in fields.items():
        filled = [v is not None for v in values]
        if any(filled) and not all(filled):
            raise PgaDynError(
                f"{path}: {field} is empty in message {filled.index(False)} on {topic} and not in "
                f"message {filled.index(True)}"
            )
        if all(filled):
            header += [f"{field}_{j}" for j in joints]
            blocks.append(np.array(values))
    clock = "header stamp"
    if not any(stamps):
        stamps, clock = logged, "time the bag logged (the header stamps are 0)"
    ns = np.array(stamps, dtype=np.int64)
    t = (ns - ns[0]) * 1e-9
    how = (
        f"ROS bag: {len(messages)} sensor_msgs/JointState messages on {topic}, joints {joints}; t in seconds "
        f"after the first {clock}"
    )
    return header, np.column_stack([t, *blocks]), how


def _resolve(where: str, header: list, names: tuple, mapping: dict):
    """Which column of ``header`` holds each of our columns (t, KIND_NAME) under the column map
    ``mapping`` (keys t, KIND_NAME or the template KIND_{name}; values the file's columns,
    templates with {name} and {index}); returns ({ours: index}, {ours: the file column looked
    for}, the file's columns not used)."""
    ours = {f"{kind}_{n}" for kind in KINDS for n in names} | {"t"}
    templates, specific = {}, {}
    for key, value in mapping.items():
        kind = key[: -len("_{name}")]
        if key in ours:
            specific[key] = value
        elif key.endswith("_{name}") and kind in KINDS:
            templates[kind] = value
        else:
            raise PgaDynError(
                f"{where}: the column map's '{key}' is none of t, KIND_{{name}} or KIND_NAME (KIND one "
                f"of {', '.join(KINDS)}; NAME one of {list(names)})"
            )
    wanted = {"t": "t"}
    for kind in KINDS:
        pattern = templates.get(kind, kind + "_{name}")
        for j, n in enumerate(names):
            try:
                wanted[f"{kind}_{n}"] = pattern.format(name=n, index=j + 1)
            except (KeyError, IndexError, ValueError):
                raise PgaDynError(
                    f"{where}: the column map's '{kind}_{{name}}={pattern}': only {{name}} and {{index}} "
                    "may stand in braces"
                ) from None
    wanted.update(specific)
    position = {}
    for c, column in enumerate(header):
        position.setdefault(column, []).append(c)
    chosen = {}
    for mine, column in wanted.items():
        if column in position:
            if len(position[column]) > 1:
                raise PgaDynError(f"{where}: column '{column}' appears more than once")
            chosen[mine] = position[column][0]
        elif mine in specific:
            raise PgaDynError(
                f"{where}: the column map gives '{column}' for {mine}, and the file has no such column"
                f"{_near(header, [column])}"
            )
    for kind, pattern in templates.items():
        if not any(f"{kind}_{n}" in chosen for n in names):
            looked = [wanted[f"{kind}_{n}"] for n in names]
            raise PgaDynError(
                f"{where}: the column map's {kind}_{{name}}={pattern} matches no column (looked for "
                f"{looked}){_near(header, looked)}"
            )
    owner = {}
    for mine, c in chosen.items():
        if c in owner:
            raise PgaDynError(f"{where}: column '{header[c]}' is mapped to both {owner[c]} and {mine}")
        owner[c] = mine
    return chosen, wanted, [column for c, column in enumerate(header) if c not in owner]


def _table_arrays(path: str, header: list, rows, names: tuple, mapping: dict, passive: tuple = ()):
    """({t: (ns,), kind: (ns, n_a), "passive": {name: (ns,)}}, ignored column names) of a table:
    a CSV file's samples (:func:`_read_csv`; only the columns used are parsed, :func:`_csv_numbers`)
    or a bag's values (ns, k); the columns q_NAME of the ``passive`` coordinates are measured
    passive coordinates."""
    chosen, wanted, ignored = _resolve(path, header, names, mapping)
    kinds = []
    for kind in KINDS:
        present = [n for n in names if f"{kind}_{n}" in chosen]
        if present and len(present) < len(names):
            missing = [wanted[f"{kind}_{n}"] for n in names if n not in present]
            raise PgaDynError(
                f"{path}: missing columns {missing} (the other {kind}_ columns are there){_near(ignored, missing)}"
            )
        kinds += [kind] if present else []
    measured = {name: header.index(f"q_{name}") for name in passive if f"q_{name}" in ignored}
    used = ([chosen["t"]] if "t" in chosen else []) + [chosen[f"{kind}_{n}"] for kind in kinds for n in names]
    used += list(measured.values())
    if isinstance(rows, np.ndarray):
        for c in used:
            bad = np.flatnonzero(~np.isfinite(rows[:, c]))
            if bad.size:
                raise PgaDynError(f"{path}: message {bad[0]}, column '{header[c]}' is {rows[bad[0], c]}")
        column = {c: rows[:, c] for c in used}
    else:
        column = _csv_numbers(path, header, rows, used)
    arrays = {"t": column[chosen["t"]]} if "t" in chosen else {}
    for kind in kinds:
        arrays[kind] = np.column_stack([column[chosen[f"{kind}_{n}"]] for n in names])
    arrays["passive"] = {name: column[c] for name, c in measured.items()}
    return arrays, [c for c in ignored if c[2:] not in arrays["passive"] or not c.startswith("q_")]
