"""Progress bars: drawn on a terminal's stderr for the sampling of a certificate, never with
--quiet, never on a pipe, and nothing extra in --json output."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from pga_dyn.progress import report, reporting

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)


def run_with_terminal_stderr(*args):
    """(stdout, what the terminal on stderr received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pga_dyn.cli", *args], stdout=subprocess.PIPE, stderr=slave, env=ENV)
    os.close(slave)
    stdout = proc.stdout.read()
    proc.wait()
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.returncode == 0
    return stdout.decode(), b"".join(chunks).decode()


def test_bar_on_a_terminal_and_clean_json():
    stdout, terminal = run_with_terminal_stderr("analyze", "2rru_1rrs", "--json")
    assert "sampling valid states [" in terminal and "70/70" in terminal
    assert json.loads(stdout)["nullspace_dimension"] == 45


def test_quiet_and_pipes_are_silent():
    _, terminal = run_with_terminal_stderr("analyze", "2rru_1rrs", "--quiet")
    assert "sampling" not in terminal
    run = subprocess.run(
        [sys.executable, "-m", "pga_dyn.cli", "analyze", "2rru_1rrs"], capture_output=True, text=True, env=ENV
    )
    assert run.returncode == 0 and run.stderr == ""


def test_reporting_is_scoped():
    seen = []
    with reporting(lambda *a: seen.append(a)):
        report("step", 1, 2)
    report("step", 2, 2)  # nobody listens any more
    assert seen == [("step", 1, 2)]


def test_excite_reports_its_iterations_and_finishes_the_step():
    """The excitation optimiser reports through pga_dyn.progress; its step always ends at
    done == total, so the bar's line is closed even when the optimiser stops early."""
    import robots
    from identification import excite
    from identification.excitation import STEP

    seen = []
    with reporting(lambda step, done, total: seen.append((step, done, total))):
        excite(robots.load("puma560"), duration=1.0, rate=50.0, period=1.0, harmonics=1, iterations=3, seed=0)
    assert seen and all(step == STEP and total == 3 for step, _, total in seen)
    assert seen[-1][1] == 3 and [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
