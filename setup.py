"""Build step of pga-dyn: everything else is in pyproject.toml.

``pip install .`` builds a wheel; after copying the packages into the build folder, this
compiles every numba kernel there (``python -m pga_dyn.cli compile``), so numba's cache files
(``__pycache__/*.nbi``, ``*.nbc``) travel in the wheel and the installed package does not compile
on its first call. numba keys its cache by the source's content, the numba version and the CPU:
on another numba version or CPU the kernels compile on first use, as without this step. Editable
installs (``pip install -e .``) skip it. A failure stops the build, saying why; set
``PGA_DYN_NO_PRECOMPILE=1`` to build without the compiled kernels.

The compile step reuses what an earlier build of the same files compiled (``pga-dyn compile
--reuse``): the build cache, ``$XDG_CACHE_HOME/pga-dyn/kernels`` or ``~/.cache/pga-dyn/kernels``,
keeps numba's cache files per key (the contents of the packages' files, the versions of numba,
llvmlite, numpy and Python, and the CPU numba compiles for); the step copies an entry's files into
the build and compiles only what they do not cover (numba checks each against its source's
content). If the step fails with the cache's files, it compiles once more without them. Set
``PGA_DYN_NO_BUILD_CACHE=1`` to compile everything, neither reading nor writing that cache.
"""

import logging
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyCompiled(build_py):
    """build_py, then ``pga-dyn compile`` on the built packages (their own __pycache__)."""

    def run(self):
        super().run()
        if self.editable_mode or os.environ.get("PGA_DYN_NO_PRECOMPILE"):
            return
        env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
        # The built packages first; the builder's PYTHONPATH after them: pip's isolated build
        # environment can reach its packages (numpy, numba) only through it (a sitecustomize).
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(self.build_lib)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # numba's cache files go in the wheel, not .pyc files
        command = [sys.executable, "-m", "pga_dyn.cli", "compile", "--quiet"]
        reuse = not os.environ.get("PGA_DYN_NO_BUILD_CACHE")
        first = command + ["--reuse"] if reuse else command
        done = subprocess.run(first, env=env, cwd=self.build_lib, capture_output=True, text=True)
        if done.returncode != 0 and reuse:
            # The build cache's files may be at fault (e.g. written by a numba that its index does not
            # name): compile everything without them.
            self.announce(
                f"pga-dyn: compiling with the build cache failed, compiling without it:\n{done.stderr}",
                level=logging.WARNING,
            )
            self._remove_numba_cache()
            done = subprocess.run(command, env=env, cwd=self.build_lib, capture_output=True, text=True)
        if done.returncode != 0:
            # Loud, not a warning that pip hides: a wheel without its kernels would only show as a
            # slow first call. The package works without them: PGA_DYN_NO_PRECOMPILE=1 skips this.
            raise SystemExit(
                "pga-dyn: compiling the kernels into the build failed (set PGA_DYN_NO_PRECOMPILE=1 to "
                f"build without them; they then compile on first use):\n{done.stderr}"
            )
        self.announce(f"pga-dyn: {done.stdout.strip()}", level=logging.INFO)

    def _remove_numba_cache(self):
        """Delete numba's cache files (``__pycache__/*.nbi``, ``*.nbc``) from the build folder."""
        for folder, _, names in os.walk(self.build_lib):
            if os.path.basename(folder) == "__pycache__":
                for name in names:
                    if name.endswith((".nbi", ".nbc")):
                        os.remove(os.path.join(folder, name))


setup(cmdclass={"build_py": BuildPyCompiled})
