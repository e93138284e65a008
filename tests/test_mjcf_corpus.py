"""The MJCF models of gymnasium and dm_control (tests/mjcf_corpus.py) through MuJoCo's compiler:
each tree loads and its nullspace has Pinocchio's dimension (10 n minus Pinocchio's sampled rank
on the same file), or the file is refused by a message naming what pga-dyn lacks."""

from __future__ import annotations

import os
import warnings

import pytest
from mjcf_corpus import corpus, pinocchio_rank, split, tendon_constraints

import drng
import robots
from pga_dyn.errors import PgaDynError

#: Files that need what pga-dyn lacks, and the words of the message that says so (none left:
#: the tendon equalities of manipulator.xml, stacker.xml and quadruped.xml are couplings).
REFUSED = {}
#: Files whose tendon equalities are couplings: their answers are certified, not proven.
COUPLED = {"manipulator.xml": 1, "quadruped.xml": 4, "stacker.xml": 1}
#: A template whose bodies dm_control's Python adds: no moving body, nothing for Pinocchio to read.
EMPTY = {"lqr.xml"}
#: The largest model (75 bodies, about 2 s): slow (python -m pytest -m slow).
SLOW = {"dog.xml"}


def params(package):
    """The package's files, or one placeholder that the test skips when it is not installed."""
    return [
        pytest.param(path, id=name, marks=[pytest.mark.slow] if name in SLOW else [])
        for path, name in ((path, os.path.basename(path)) for path in corpus(package))
    ] or [pytest.param(None, id="not-installed")]


def check(path, tmp_path):
    name = os.path.basename(path)
    if name in REFUSED:
        with pytest.raises(PgaDynError, match=REFUSED[name]):
            robots.load_mjcf(path)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # armature
        robot = robots.load_mjcf(path)
    result = drng.nullspace(robot)
    assert len(robot.couplings) == COUPLED.get(name, 0)
    assert result.proven if name not in COUPLED else result.certified
    if name in EMPTY:
        assert robot.n == 0 and result.dim == 0
        return
    constraints = tendon_constraints(path)
    rank = sum(pinocchio_rank(part, robot.gravity, constraints=constraints)[0] for part in split(path, str(tmp_path)))
    assert result.dim == 10 * robot.n - rank


@pytest.mark.parametrize("path", params("gymnasium"))
def test_gymnasium_models(path, tmp_path):
    pytest.importorskip("gymnasium")
    check(path, tmp_path)


@pytest.mark.parametrize("path", params("dm_control"))
def test_dm_control_models(path, tmp_path):
    pytest.importorskip("dm_control")
    check(path, tmp_path)
