"""Build step of pga-dyn: everything else is in pyproject.toml.

``pip install .`` builds a wheel; after copying the packages into the build folder, this
compiles every numba kernel there (``python -m pga_dyn.cli compile``), so numba's cache files
(``__pycache__/*.nbi``, ``*.nbc``) travel in the wheel and the installed package does not compile
on its first call. numba keys its cache by the source's content, the numba version and the CPU:
on another numba version or CPU the kernels compile on first use, as without this step. Editable
installs (``pip install -e .``) skip it. A failure stops the build, saying why; set
``PGA_DYN_NO_PRECOMPILE=1`` to build without the compiled kernels.
"""

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
        env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(self.build_lib)]
                                            + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # numba's cache files go in the wheel, not .pyc files
        done = subprocess.run([sys.executable, "-m", "pga_dyn.cli", "compile", "--quiet"], env=env,
                              cwd=self.build_lib, capture_output=True, text=True)
        if done.returncode != 0:
            # Loud, not a warning that pip hides: a wheel without its kernels would only show as a
            # slow first call. The package works without them: PGA_DYN_NO_PRECOMPILE=1 skips this.
            raise SystemExit("pga-dyn: compiling the kernels into the build failed (set PGA_DYN_NO_PRECOMPILE=1 to "
                             f"build without them; they then compile on first use):\n{done.stderr}")
        self.announce(f"pga-dyn: {done.stdout.strip()}", level=2)


setup(cmdclass={"build_py": BuildPyCompiled})
