"""The answer of every nullspace method: a basis of Null(Y) and what it means."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, wraps
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np

from pga_dyn.errors import PgaDynError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ParamSpec, TypeVar

    import pandas

    _P = ParamSpec("_P")
    _R = TypeVar("_R")

#: Relative tolerance of the rank of a basis (columns scaled to unit norm).
RANK_RTOL = 1e-9

#: Default memory (bytes) the dense matrices of the certificate and of the numerical baseline may
#: take (:func:`check_memory`): 2 GiB.
MEMORY = 2 * 1024**3


def gib(nbytes: float) -> str:
    """A size in GiB, for messages."""
    return f"{nbytes / 1024**3:.3g} GiB"


def check_memory(what: str, nbytes: float, memory: float = MEMORY, knob: str = "the memory= argument") -> None:
    """A PgaDynError saying how much ``what`` would need when it is more than ``memory`` bytes,
    before anything is allocated (no MemoryError half-way); ``knob`` says how to change the limit."""
    if not (isinstance(memory, Real) and memory > 0):
        raise PgaDynError(f"memory must be a positive number of bytes, got {memory!r}")
    if nbytes > memory:
        raise PgaDynError(
            f"{what} would need about {gib(nbytes)} of memory, more than the limit of {gib(memory)} ({knob}, in bytes)"
        )


def rank(matrix: np.ndarray, rtol: float = RANK_RTOL) -> tuple[int, float]:
    """Rank of ``matrix`` by SVD with its nonzero columns scaled to unit norm, and the
    singular gap (smallest kept over largest dropped singular value; inf when none dropped)."""
    if matrix.size == 0:
        return 0, np.inf
    norms = np.linalg.norm(matrix, axis=0)
    keep = norms > rtol * max(norms.max(), 1e-300)
    if not keep.any():
        return 0, np.inf
    s = np.linalg.svd(matrix[:, keep] / norms[keep], compute_uv=False)
    r = int(np.sum(s > rtol * s[0]))
    return r, (s[r - 1] / s[r] if r < len(s) and s[r] > 0 else np.inf)


def orthonormal(matrix: np.ndarray, rtol: float = RANK_RTOL) -> np.ndarray:
    """An orthonormal basis of the column space of ``matrix``."""
    if matrix.size == 0:
        return np.zeros((matrix.shape[0], 0))
    norms = np.linalg.norm(matrix, axis=0)
    keep = norms > rtol * max(norms.max(), 1e-300)
    if not keep.any():
        return np.zeros((matrix.shape[0], 0))
    u, s, _ = np.linalg.svd(matrix[:, keep] / norms[keep], full_matrices=False)
    return u[:, : int(np.sum(s > rtol * s[0]))]


def complement(basis: np.ndarray, size: int, rtol: float = RANK_RTOL) -> np.ndarray:
    """An orthonormal basis (size, size - k) of the orthogonal complement of span(basis) in
    R^size (eq. 5), k = rank(basis): with Q (size, k) an orthonormal basis of span(basis), the
    last size - k columns of the complete QR factor of Q (Q has orthonormal columns, so its
    Householder QR is exact to round-off)."""
    q = orthonormal(basis, rtol) if basis.size else np.zeros((size, 0))
    if q.shape[1] == 0:
        return np.eye(size)
    return np.linalg.qr(q, mode="complete")[0][:, q.shape[1] :]


def one_blas_thread(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``func`` with BLAS limited to one thread. The matrices of the certificate are small
    (at most a few thousand rows); on the project's 2-core machine OpenBLAS's default 2 threads
    made a 1200 x 60 QR 14 times slower and a 3000 x 1000 QR 7 times slower than one thread
    (docs/performance.md). The previous limit is restored on return."""

    @wraps(func)
    def limited(*args, **kwargs):
        from threadpoolctl import threadpool_limits  # imported on first use (14 ms)

        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return limited


@dataclass
class NullspaceResult:
    """A basis of the regressor nullspace Null(Y) (eq. 4) in the parameter coordinates of
    ``pga_dyn.inertial_parameters`` (10 per body, eq. 97).

    ``basis`` (10 n, k) may hold dependent vectors (not DRNG's: a basis): ``dim`` is its rank.
    ``base_basis`` (10 n, 10 n - dim) is an orthonormal basis of the complement, the identifiable (base-parameter)
    directions (eq. 5); ``nullspace`` (10 n, dim) an orthonormal basis of span(basis).
    ``provenance`` gives, for each column, the joint, the rule, the
    principle (1, 2, 3, "generalized" or "numerical") and the paper's equation (None for a rule
    the paper does not have); it is built on first access from ``codes`` (k, 2): the index in
    ``joint_names`` and the index in ``drng.principles.RULES`` (-1: a numerical vector).
    ``proven`` is True when the basis is complete by proof (DRNG's rules on a tree, no
    sampling). ``certified`` is None when no certificate was asked, else whether rank(basis) +
    numerical rank = 10 n with the basis verified in the nullspace; the details are in
    ``certificate``. ``geometric`` is False when numerical vectors complete the basis.
    ``status`` says which of these holds, in words.

    A result may be given in block form instead (``basis`` None, ``blocks`` = (n, bodies, vals)
    of :func:`drng.principles.drng_kernel`, O(n) memory): ``basis`` is then built on first
    access (10 n x k, dense), and ``dim``, ``num_parameters``, ``provenance``, ``status`` never
    build it, so a proven answer on a 10,000-body chain costs milliseconds.
    """

    robot_name: str
    method: str
    basis: np.ndarray
    codes: np.ndarray | None = None
    joint_names: tuple = ()
    certified: bool | None = None
    certificate: dict = field(default_factory=dict)
    geometric: bool = True
    seconds: float = 0.0
    proven: bool = False
    blocks: tuple | None = field(default=None, repr=False)

    #: The attributes that can be given in block form, and the field that holds their blocks.
    BLOCK_FORM = {"basis": "blocks"}

    def __post_init__(self):
        if self.basis is None and self.blocks is None:
            raise ValueError("NullspaceResult needs a basis or its blocks")
        for name, blocks in self.BLOCK_FORM.items():
            if getattr(self, name) is None and getattr(self, blocks) is not None:
                delattr(self, name)  # built on first access, by __getattr__

    def __getattr__(self, name):
        """Only for an attribute given in block form (normal lookup failed): build it once."""
        blocks = self.__dict__.get(self.BLOCK_FORM.get(name, ""))
        if blocks is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        from pga_dyn.interpreted import SMALL_BODIES, runner

        from .principles import dense_basis

        n, bodies = blocks[0], blocks[1]
        check_memory(
            f"{self.robot_name}: the dense nullspace basis ({10 * n} x {len(bodies)})",
            8.0 * 10 * n * len(bodies),
            MEMORY,
            "drng.result.MEMORY",
        )
        value = runner(dense_basis, n <= SMALL_BODIES)(*blocks)  # a small robot's first calls: Python
        setattr(self, name, value)
        return value

    @property
    def num_parameters(self) -> int:
        return self.basis.shape[0] if "basis" in self.__dict__ else 10 * self.blocks[0]

    @property
    def num_vectors(self) -> int:
        """The number of vectors (columns of ``basis``, counted in its blocks while it is not built)."""
        return self.basis.shape[1] if "basis" in self.__dict__ else self.blocks[1].shape[0]

    @cached_property
    def provenance(self) -> tuple:
        """For each basis vector: {"joint", "rule", "principle", "equation"}."""
        from .principles import RULES

        codes = np.full((self.num_vectors, 2), -1) if self.codes is None else self.codes
        return tuple(
            {
                "joint": self.joint_names[j],
                "rule": RULES[e].name,
                "principle": RULES[e].principle,
                "equation": RULES[e].equation,
            }
            if e >= 0
            else {"joint": None, "rule": "numerical completion", "principle": "numerical", "equation": "SVD"}
            for j, e in codes
        )

    @cached_property
    def dim(self) -> int:
        """Dimension of the nullspace spanned by ``basis``: its rank (an SVD), or, for a proven
        answer, the number of its vectors (the generalized principles' vectors of a tree are
        independent by construction, docs/drng.md: no SVD, O(1) at any size)."""
        return self.num_vectors if self.proven else rank(self.basis)[0]

    @cached_property
    def nullspace(self) -> np.ndarray:
        """An orthonormal basis of span(basis)."""
        return orthonormal(self.basis)

    @cached_property
    def base_basis(self) -> np.ndarray:
        """An orthonormal basis of the identifiable directions, the complement of the nullspace."""
        return complement(self.basis, self.num_parameters)

    @property
    def num_base_parameters(self) -> int:
        return self.num_parameters - self.dim

    def counts(self, key: str | tuple[str, ...] = "principle") -> Counter:
        """Number of basis vectors per ``principle``, ``joint``, ``rule`` or ``equation`` (vectors,
        not rank); a tuple of these keys counts per combination (``("joint", "principle")``)."""
        if isinstance(key, tuple):
            return Counter(tuple(entry[k] for k in key) for entry in self.provenance)
        return Counter(entry[key] for entry in self.provenance)

    @property
    def trusted(self) -> bool:
        """True when the answer is proven or certified and no sampled check contradicts it."""
        return self.certified is True or (self.proven and self.certified is None)

    @property
    def status(self) -> str:
        """ "proven" (complete by proof, no sampling), "proven and certified", "certified",
        "not certified" (neither proven nor checked), "NOT certified" (the check failed) or
        "proven, but its sampled check FAILED" (proof and check disagree: not trusted)."""
        if self.certified is None:
            return "proven" if self.proven else "not certified"
        if self.certified:
            return "proven and certified" if self.proven else "certified"
        return "proven, but its sampled check FAILED" if self.proven else "NOT certified"

    def summary(self) -> dict:
        """The answer in figures, JSON-ready: ``parameters`` (10 n), ``nullspace_dimension``
        (dim), ``base_parameters`` (10 n - dim), ``status``, ``proven``, ``certified`` (the
        line of each robot of ``pga-dyn analyze A B ...``)."""
        return {
            "parameters": self.num_parameters,
            "nullspace_dimension": self.dim,
            "base_parameters": self.num_base_parameters,
            "status": self.status,
            "proven": self.proven,
            "certified": self.certified,
        }

    def report(self) -> dict:
        """The :meth:`summary` with the vectors and the certificate, JSON-ready:
        ``vectors_per_principle`` (principle -> vectors, principles as strings, sorted),
        ``vectors_per_joint`` (joint -> principle -> vectors; a numerical vector's joint is
        "numerical completion"), ``method``, ``geometric``, ``trusted`` and, when a certificate
        was computed, ``certificate``: the ranks of the basis (``rank``; ``rank_drng`` before any
        numerical completion) and of the sampled regressor (``rank_numerical``), the
        ``singular_gap``, the ``threshold`` with the ``smallest_kept`` and ``largest_dropped``
        singular values and whether the gap is clean (``clean_gap``), the ``residual`` of the
        basis in the sampled regressor, the ``samples``, the bodies the principles fall short on
        (``short_bodies``), the ``structure`` of the sampled regressor, the ``reason`` of a
        failed certificate and, at a singular reference, the dimension on each assembly branch
        that meets there (``branches``; :func:`drng.nullspace`), or their number and the one followed when more meet
        (``branch_count``, ``branch``) (docs/drng.md); ``reference``, when q0's loops do not close at its
        actuated position: how far the reference moved (:meth:`pga_dyn.loops.closest.Closest.report`)."""
        per_joint = {}
        for (joint, principle), count in self.counts(("joint", "principle")).items():
            per_joint.setdefault(joint or "numerical completion", {})[str(principle)] = count
        out = {
            **self.summary(),
            "vectors_per_principle": {
                str(k): v for k, v in sorted(self.counts().items(), key=lambda item: str(item[0]))
            },
            "vectors_per_joint": per_joint,
            "method": self.method,
            "geometric": self.geometric,
            "trusted": self.trusted,
        }
        if self.certified is not None:
            c = self.certificate
            out["certificate"] = {
                "rank": c["rank"],
                "rank_drng": c["rank_drng"],
                "rank_numerical": c["rank_numerical"],
                "singular_gap": c["gap"],
                "threshold": c["threshold"],
                "smallest_kept": c["smallest_kept"],
                "largest_dropped": c["largest_dropped"],
                "clean_gap": c["clean"],
                "residual": c["residual"],
                "samples": c["samples"],
                "short_bodies": list(c["short"]),
                "structure": c["structure"],
                "reason": c["reason"],
            }
            for key in ("branches", "branch_count", "branch"):
                if key in c:
                    out["certificate"][key] = c[key]
        if "reference" in self.certificate:
            out["reference"] = self.certificate["reference"]
        return out

    def __repr__(self) -> str:
        return (
            f"NullspaceResult({self.robot_name!r}, method={self.method!r}, dim={self.dim}, "
            f"parameters={self.num_parameters}, {self.status})"
        )

    # -- notebooks (pga_dyn.display) ----------------------------------------------------------
    def _table(self):
        return ("vector", "joint", "rule", "principle", "equation"), [
            (k, e["joint"], e["rule"], e["principle"], e["equation"] or "") for k, e in enumerate(self.provenance)
        ]

    def _repr_html_(self) -> str:
        from pga_dyn.display import html_table

        rows = [(joint, principle, count) for (joint, principle), count in self.counts(("joint", "principle")).items()]
        return html_table(
            f"{self!r}: {self.num_base_parameters} base parameters; vectors by joint and principle",
            ("joint", "principle", "vectors"),
            rows,
        )

    def to_frame(self) -> pandas.DataFrame:
        """One row per basis vector: its joint, rule, principle and the paper's equation
        (pandas DataFrame)."""
        from pga_dyn.display import data_frame

        return data_frame(*self._table())
