"""Tables for notebooks: HTML for ``_repr_html_`` and pandas DataFrames for ``to_frame()``;
figures saved to files (:func:`save_figure`).

Every displayable object (Robot, NullspaceResult, BaseParameters, the classification) states
its table once, as headers and rows; this module renders it.
"""

from __future__ import annotations

import html
import importlib

from .errors import PgaDynError

__all__ = ["html_table", "data_frame", "save_figure"]


def html_table(caption: str, headers, rows) -> str:
    """An HTML table with a caption; cells are escaped text."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return (f"<table><caption style='text-align:left'><b>{html.escape(caption)}</b></caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def data_frame(headers, rows):
    """A pandas DataFrame of the rows (PgaDynError when pandas is not installed)."""
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        raise PgaDynError("to_frame needs pandas: pip install pandas") from None
    return pandas.DataFrame([list(row) for row in rows], columns=list(headers))


def save_figure(fig, path, dpi: int) -> None:
    """Save a matplotlib figure to ``path``; PgaDynError naming the file when matplotlib has no
    writer for its format (the suffix), OSError when it cannot be written."""
    try:
        fig.savefig(path, dpi=dpi)
    except ValueError as exc:  # matplotlib: "Format 'foo' is not supported (supported formats: ...)"
        raise PgaDynError(f"{path}: {exc}") from None
