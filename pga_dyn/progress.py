"""Progress of long steps, reported to whoever listens: a context-local callback.

The library stays silent; a front end (the ``pga-dyn`` command, a notebook) listens with
:func:`reporting`, and long loops call :func:`report` (``pga_dyn.sampling.sample_states`` after
each valid state: the sampling of the certificate and of the numerical baseline).
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["reporting", "report"]

_LISTENER: contextvars.ContextVar[Callable[[str, int, int], object] | None] = contextvars.ContextVar(
    "pga_dyn_progress", default=None
)


@contextlib.contextmanager
def reporting(listener: Callable[[str, int, int], object] | None) -> Iterator[None]:
    """Within the block, :func:`report` calls ``listener(step, done, total)`` (None: nobody)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(step: str, done: int, total: int) -> None:
    """``done`` of ``total`` units of ``step`` are finished."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(step, done, total)
