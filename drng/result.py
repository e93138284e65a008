"""The answer of every nullspace method: a basis of Null(Y) and what it means."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, wraps

import numpy as np

#: Relative tolerance of the rank of a basis (columns scaled to unit norm).
RANK_RTOL = 1e-9


def rank(matrix: np.ndarray, rtol: float = RANK_RTOL):
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
    return np.linalg.qr(q, mode="complete")[0][:, q.shape[1]:]


def one_blas_thread(func):
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
    """

    robot_name: str
    method: str
    basis: np.ndarray
    codes: np.ndarray = None
    joint_names: tuple = ()
    certified: bool | None = None
    certificate: dict = field(default_factory=dict)
    geometric: bool = True
    seconds: float = 0.0
    proven: bool = False

    @property
    def num_parameters(self) -> int:
        return self.basis.shape[0]

    @cached_property
    def provenance(self) -> tuple:
        """For each basis vector: {"joint", "rule", "principle", "equation"}."""
        from .principles import RULES

        codes = np.full((self.basis.shape[1], 2), -1) if self.codes is None else self.codes
        return tuple({"joint": self.joint_names[j], "rule": RULES[e].name, "principle": RULES[e].principle,
                      "equation": RULES[e].equation} if e >= 0 else
                     {"joint": None, "rule": "numerical completion", "principle": "numerical", "equation": "SVD"}
                     for j, e in codes)

    @cached_property
    def dim(self) -> int:
        """Dimension of the nullspace spanned by ``basis`` (a rank, not a count of vectors)."""
        return rank(self.basis)[0]

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

    def counts(self, key: str = "principle") -> Counter:
        """Number of basis vectors per ``principle``, ``joint`` or ``equation`` (vectors, not rank)."""
        return Counter(entry[key] for entry in self.provenance)

    @property
    def trusted(self) -> bool:
        """True when the answer is proven or certified and no sampled check contradicts it."""
        return self.certified is True or (self.proven and self.certified is None)

    @property
    def status(self) -> str:
        """"proven" (complete by proof, no sampling), "proven and certified", "certified",
        "not certified" (neither proven nor checked) or "NOT certified" (the check failed)."""
        if self.certified is None:
            return "proven" if self.proven else "not certified"
        if self.certified:
            return "proven and certified" if self.proven else "certified"
        return "NOT certified"

    def __repr__(self) -> str:
        return (f"NullspaceResult({self.robot_name!r}, method={self.method!r}, dim={self.dim}, "
                f"parameters={self.num_parameters}, {self.status})")

    # -- notebooks (pga_dyn.display) ----------------------------------------------------------
    def _table(self):
        return ("vector", "joint", "rule", "principle", "equation"), [
            (k, e["joint"], e["rule"], e["principle"], e["equation"] or "") for k, e in enumerate(self.provenance)]

    def _repr_html_(self) -> str:
        from pga_dyn.display import html_table
        counts = {}
        for entry in self.provenance:
            counts[entry["joint"], entry["principle"]] = counts.get((entry["joint"], entry["principle"]), 0) + 1
        rows = [(joint, principle, count) for (joint, principle), count in counts.items()]
        return html_table(f"{self!r}: {self.num_base_parameters} base parameters; vectors by joint and principle",
                          ("joint", "principle", "vectors"), rows)

    def to_frame(self):
        """One row per basis vector: its joint, rule, principle and the paper's equation
        (pandas DataFrame)."""
        from pga_dyn.display import data_frame
        return data_frame(*self._table())
