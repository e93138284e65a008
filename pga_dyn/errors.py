"""The one exception family of pga-dyn.

Every problem with the user's input (a robot file, a model, an argument) raises
:class:`PgaDynError` or a subclass. It derives from :class:`ValueError`, so code
that already catches ``ValueError`` keeps working. Messages name the file, the
element or the argument at fault.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


class PgaDynError(ValueError):
    """Bad input to pga-dyn: a malformed robot file, an invalid model or argument."""


class ModelError(PgaDynError):
    """A robot description that cannot form a valid multibody model."""


class PgaDynWarning(UserWarning):
    """An input pga-dyn can use, but not as given (e.g. joint limits replaced for sampling); the
    message names the file and the element."""


def optional(module: str, what: str, extra: str = "identify") -> ModuleType:
    """Import ``module`` (an optional dependency), or a PgaDynError saying that ``what`` needs it
    and which extra of pga-dyn installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise PgaDynError(
            f"{what} needs {module.split('.')[0]}: pip install '.[{extra}]' in pga-dyn's checkout"
        ) from None
