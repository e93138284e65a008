"""Lazy public names of a package: imported from their module on first use, so that importing
the package compiles nothing and loads no heavy dependency."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def lazy_getattr(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``names[name]`` (a submodule) on first
    access of ``name`` and caches the value in the package."""

    def __getattr__(name):
        if name in names:
            module = importlib.import_module(f".{names[name]}", package)
            value = getattr(module, name)
            setattr(importlib.import_module(package), name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
