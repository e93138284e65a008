"""``pga-dyn compile``: every numba kernel into numba's on-disk cache (``pip install .`` runs it).

With ``--reuse`` (what the build step of ``pip install .`` runs, setup.py) it first copies the
cache files an earlier build of the same packages compiled from the build cache, a folder per
key under the user's cache folder (:func:`build_cache_folder`), and afterwards stores what it
compiled there: the second ``pip install`` of the same sources on the same machine loads the
kernels instead of compiling them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import uuid

from ..errors import PgaDynError

#: The packages whose kernels ``compile_kernels`` compiles, and whose files the build cache's key covers.
PACKAGES = ("pga_dyn", "drng", "robots")

#: The files of numba's cache (an index per function and its compiled versions), in ``__pycache__``.
CACHE_SUFFIXES = (".nbi", ".nbc")

#: The build cache's manifest: written last into an entry, so an entry without one is partial.
MANIFEST = "manifest.json"

#: The entries the build cache keeps (about 5 MB each): the most recently stored or used.
KEEP_ENTRIES = 8


def register(sub) -> None:
    parser = sub.add_parser(
        "compile",
        help="compile every kernel into numba's on-disk cache (pip install . does it)",
        description="Compile every numba kernel of pga-dyn into numba's on-disk cache, so that no later command "
        "compiles. `pip install .` runs it; run it after installing a wheel built on another machine, "
        "or when building a container image.",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="first copy the kernels an earlier run compiled for the same files of pga-dyn, numba, numpy, "
        "Python and CPU from the build cache ($XDG_CACHE_HOME/pga-dyn/kernels or ~/.cache/pga-dyn/kernels), "
        "then store the compiled kernels there (the build step of `pip install .` does this); needs numba's "
        "cache beside the sources (NUMBA_CACHE_DIR unset, the packages' folders writable)",
    )
    parser.set_defaults(func=run)


def compile_kernels() -> list:
    """Compile every numba kernel of pga-dyn into numba's on-disk cache and return their names.

    Runs the paths that reach each kernel on built-in robots: the DRNG kernel and the poses at
    q0 (puma560), the sampled regressor, the certificate and the numerical baseline's pivoted
    QR (puma560), the loop
    closure (2rru_1rrs: assembly, loop Jacobians and their motion), a single-state regressor.
    Each kernel has one signature (docs/performance.md), so what is compiled here is what every
    later call loads. The cache is numba's: ``__pycache__`` beside the sources when it is
    writable, else ``NUMBA_CACHE_DIR`` or the user's cache folder. ``pip install .`` runs this
    on the files it installs (setup.py), so the installed package carries its compiled kernels
    for the machine it was installed on. Returns the qualified names of the kernels this process
    compiled or loaded from the cache (the helpers inside a kernel are named only when compiled).
    """
    import numpy as np
    from numba.core.registry import CPUDispatcher

    import drng
    import robots

    from .. import regressor

    tree = robots.load("puma560")
    drng.nullspace(tree, certify=True)
    drng.numerical_nullspace(tree, samples=20)
    q = np.zeros(tree.nq)
    regressor(tree, q, q, q)
    drng.nullspace(robots.load("2rru_1rrs"))
    names = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in PACKAGES:
            names += [
                f"{name}.{attr}"
                for attr, value in vars(module).items()
                if isinstance(value, CPUDispatcher) and value.__module__ == name and value.signatures
            ]
    return sorted(names)


def packages_root() -> str:
    """The folder holding the packages pga_dyn, drng and robots this process imports (site-packages,
    a checkout, or the build folder of ``pip install .``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    import time

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


class _CompileCounter:
    """Counts numba's compile events (nested ones included) while it is registered."""

    def __init__(self):
        from numba.core import event

        class Listener(event.Listener):
            def on_start(inner, ev):
                pass

            def on_end(inner, ev):
                self.count += 1

        self.count = 0
        self.listener = Listener()
        event.register("numba:compile", self.listener)

    def close(self):
        from numba.core import event

        event.unregister("numba:compile", self.listener)


def run(args, out) -> int:
    import time

    start = time.perf_counter()
    root, entry, restored = packages_root(), None, False
    if args.reuse:
        if os.environ.get("NUMBA_CACHE_DIR"):
            raise PgaDynError(
                "pga-dyn compile --reuse copies numba's cache files beside the sources: unset NUMBA_CACHE_DIR"
            )
        entry = os.path.join(build_cache_folder(), build_cache_key(root))
        restored = restore_kernels(root, entry)
    counter = _CompileCounter()
    try:
        names = compile_kernels()
    finally:
        counter.close()
    source = f"; from the build cache {entry}" if restored else ""
    print(
        f"{len(names)} kernels compiled or loaded from numba's cache in {time.perf_counter() - start:.1f} s "
        f"({counter.count} compiled{source})",
        file=out,
    )
    if entry is not None and (counter.count or not restored):
        try:
            stored = store_kernels(root, entry)
        except OSError as exc:  # a read-only or full cache folder: the build itself is done
            print(f"could not store the kernels in the build cache {entry}: {exc}", file=out)
        else:
            print(f"{stored} cache files stored in the build cache {entry}", file=out)
            prune_entries(os.path.dirname(entry))
    return 0
