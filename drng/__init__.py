"""Nullspace of the dynamics regressor: DRNG (Sun, Ding, Zhu 2025), the numerical baseline and
the completeness certificate.

* :func:`nullspace` - the generalized principles (``drng/principles.py``): proven on trees,
  certified on loops and couplings;
* :func:`numerical_nullspace` - random valid samples + SVD (Gautier 1991);
* :func:`verify` - the paper's criteria (101) on any basis;
* :func:`rpna` - RPNA (Wensing, Niemeyer, Slotine 2024), the peer method for trees;
* :func:`base_parameters` - the base parameters: names, expressions, K, the base regressor;
* :func:`classify` - per-parameter classification (alone, in combination, unidentifiable);
* :func:`compare` - DRNG, RPNA and the numerical baseline side by side;
* :func:`analyze` - the report of ``pga-dyn analyze``: the nullspace, timed, with its figures
  (:class:`Analysis`: ``.report()`` a JSON-ready dict, ``.text()`` the lines the CLI prints);
* :func:`nullspaces` - :func:`nullspace` of many robots (a design sweep) on a process pool or a
  Dask cluster, in order; :class:`Failure` - a robot of it that failed;
* :class:`NullspaceResult` - what every method returns.
"""

from pga_dyn.lazy import lazy_getattr

_LAZY = {
    "nullspace": "generator",
    "verify": "certify",
    "numerical_nullspace": "numerical",
    "NullspaceResult": "result",
    "rpna": "rpna_algorithms",
    "classify": "classification",
    "base_parameters": "regrouping",
    "compare": "comparison",
    "analyze": "analysis",
    "Analysis": "analysis",
    "nullspaces": "batch",
    "Failure": "batch",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr(__name__, _LAZY)
