"""Tables for notebooks and terminals: HTML for ``_repr_html_``, pandas DataFrames for
``to_frame()``, left-aligned text tables for the reports' ``text()`` (what the CLI prints);
figures saved to files (:func:`save_figure`).

Every displayable object (Robot, NullspaceResult, BaseParameters, the classification) states
its table once, as headers and rows; this module renders it.
"""

from __future__ import annotations

import html
import importlib
from typing import TYPE_CHECKING

from .errors import PgaDynError

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    import pandas
    from matplotlib.figure import Figure

__all__ = ["html_table", "data_frame", "text_table", "number", "save_figure"]


def html_table(caption: str, headers: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """An HTML table with a caption; cells are escaped text."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f"<table><caption style='text-align:left'><b>{html.escape(caption)}</b></caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def data_frame(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> pandas.DataFrame:
    """A pandas DataFrame of the rows (PgaDynError when pandas is not installed)."""
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        raise PgaDynError("to_frame needs pandas: pip install pandas") from None
    return pandas.DataFrame([list(row) for row in rows], columns=list(headers))


def text_table(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    """The lines of a left-aligned text table: a header, a rule of dashes, one line per row;
    every line indented by two spaces, columns two spaces apart."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[k]) for row in cells) for k in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return ["  " + line for line in lines]


def number(x: float) -> str:
    """A number in a text report: 6 significant digits (``%.6g``)."""
    return f"{float(x):.6g}"


def save_figure(fig: Figure, path: os.PathLike | str, dpi: int) -> None:
    """Save a matplotlib figure to ``path``; PgaDynError naming the file when matplotlib has no
    writer for its format (the suffix), OSError when it cannot be written."""
    try:
        fig.savefig(path, dpi=dpi)
    except ValueError as exc:  # matplotlib: "Format 'foo' is not supported (supported formats: ...)"
        raise PgaDynError(f"{path}: {exc}") from None
