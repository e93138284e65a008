"""The build cache: numba's cache files of pga-dyn's kernels, kept per key between builds.

``pip install .`` compiles every kernel into the wheel (setup.py runs ``pga-dyn compile
--reuse``); each ``pip install`` builds anew, so a second install of the same sources would
compile them again. The build cache keeps what a build compiled in a folder per key under the
user's cache folder (:func:`build_cache_folder`), the key a hash of everything a compiled kernel
depends on (:func:`build_cache_key`); a later build with the same key copies the files instead
of compiling (:func:`restore_kernels`), checked against the SHA-256 sums of the entry's
manifest, and numba's own index then checks each against its source's content.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid

from .errors import PgaDynError

#: The packages whose kernels ``compile_kernels`` compiles, and whose files the build cache's key covers.
PACKAGES = ("pga_dyn", "drng", "robots")

#: The files of numba's cache (an index per function and its compiled versions), in ``__pycache__``.
CACHE_SUFFIXES = (".nbi", ".nbc")

#: The build cache's manifest: written last into an entry, so an entry without one is partial.
MANIFEST = "manifest.json"

#: The entries the build cache keeps (about 5 MB each): the most recently stored or used.
KEEP_ENTRIES = 8


def packages_root() -> str:
    """The folder holding the packages pga_dyn, drng and robots this process imports (site-packages,
    a checkout, or the build folder of ``pip install .``)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_cache_file(name: str) -> bool:
    return name.endswith(CACHE_SUFFIXES)


def _walk(root: str):
    """The files of the packages under ``root``, as sorted relative paths with '/' separators."""
    found = []
    for package in PACKAGES:
        for folder, dirs, names in os.walk(os.path.join(root, package)):
            dirs.sort()
            found += [os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/") for name in names]
    return sorted(found)


def build_cache_key(root: str) -> str:
    """The build cache's key of the packages under ``root``: a SHA-256 of the contents of every file of
    pga_dyn, drng and robots but numba's and Python's caches (so of every source a kernel depends on,
    and of the paths ``compile_kernels`` runs), of the versions of numba, llvmlite, numpy and Python,
    and of the target numba compiles for (triple, CPU name and features)."""
    import llvmlite
    import numba
    import numpy
    from numba.core.registry import cpu_target

    digest = hashlib.sha256()
    target = cpu_target.target_context.codegen().magic_tuple()
    for part in (numba.__version__, llvmlite.__version__, numpy.__version__, sys.version, *target):
        digest.update(f"{part}\0".encode())
    for relative in _walk(root):
        if "/__pycache__/" in relative or relative.endswith((".pyc", ".pyo")):
            continue
        with open(os.path.join(root, relative), "rb") as handle:
            digest.update(f"{relative}\0".encode() + hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def build_cache_folder() -> str:
    """The build cache: ``$XDG_CACHE_HOME/pga-dyn/kernels``, else ``~/.cache/pga-dyn/kernels``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pga-dyn", "kernels")


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def restore_kernels(root: str, entry: str) -> bool:
    """Copy the numba cache files of the build cache's ``entry`` into the packages under ``root``.

    Returns True when every file the entry's manifest lists was copied with the content the
    manifest records; False, copying nothing, when the entry is missing, partial (no manifest)
    or corrupt (a file missing, or differing from its recorded SHA-256): the caller then compiles.
    """
    try:
        with open(os.path.join(entry, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
        files = manifest["files"]
        if not files or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return False
        contents = {}
        for relative, digest in files.items():
            parts = relative.split("/")
            if parts[0] not in PACKAGES or ".." in parts or parts[-2] != "__pycache__" or not _is_cache_file(relative):
                return False
            with open(os.path.join(entry, "files", *parts), "rb") as handle:
                contents[relative] = handle.read()
            if hashlib.sha256(contents[relative]).hexdigest() != digest:
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return False
    for relative, data in contents.items():
        target = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
    try:
        os.utime(os.path.join(entry, MANIFEST))  # used now: kept by prune_entries
    except OSError:
        pass
    return True


def prune_entries(folder: str, keep: int = KEEP_ENTRIES) -> list:
    """Delete all but the ``keep`` entries of the build cache ``folder`` whose manifests were
    stored or used last (and entries without a manifest, left by a build that stopped while
    storing one, once they are an hour old); return the deleted entries' names. A build reading
    an entry deleted meanwhile finds it incomplete and compiles."""
    dated, deleted = [], []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            dated.append((os.stat(os.path.join(path, MANIFEST)).st_mtime, name))
        except OSError:
            try:
                if time.time() - os.stat(path).st_mtime > 3600:
                    deleted.append(name)
            except OSError:
                pass
    dated.sort(reverse=True)
    deleted += [name for _, name in dated[keep:]]
    for name in deleted:
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    return deleted


def reuse_in_checkout(root: str) -> str | None:
    """Fill numba's cache beside the packages under ``root`` (a checkout: the tests of ``python -m
    pytest`` import its sources, not the installed copy) with the kernels that ``pip install .`` of
    the same files compiled: the build cache's entry of their key (:func:`build_cache_key`), copied
    by :func:`restore_kernels`, when that cache holds no file yet and NUMBA_CACHE_DIR is unset.
    Returns the entry copied, or None (nothing done). numba's index then checks each kernel
    against its source (its modification time and size: pip's build keeps those of the checkout's
    files) and compiles what does not match, as without the copy."""
    if os.environ.get("NUMBA_CACHE_DIR") or any(
        "/__pycache__/" in relative and _is_cache_file(relative) for relative in _walk(root)
    ):
        return None
    entry = os.path.join(build_cache_folder(), build_cache_key(root))
    return entry if restore_kernels(root, entry) else None


def store_kernels(root: str, entry: str) -> int:
    """Store the numba cache files of the packages under ``root`` as the build cache's ``entry``
    (replacing it) and return their number. The entry is written under another name and renamed
    into place with its manifest, so a reader never sees a partial one."""
    files = [relative for relative in _walk(root) if "/__pycache__/" in relative and _is_cache_file(relative)]
    if not files:
        raise PgaDynError(f"no numba cache files in {root}'s packages to store (is NUMBA_CACHE_DIR set?)")
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    temporary = f"{entry}.tmp-{uuid.uuid4().hex[:16]}"
    try:
        manifest = {}
        for relative in files:
            target = os.path.join(temporary, "files", *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(root, *relative.split("/")), target)
            manifest[relative] = _sha256(target)
        with open(os.path.join(temporary, MANIFEST), "w", encoding="utf-8") as handle:
            json.dump({"files": manifest}, handle, indent=0, sort_keys=True)
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(temporary, entry)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return len(files)
