"""dualgibbs: Gibbs sampling and exact inference for thin-membrane Gaussian graphical models.

The Python face of the C++ library libdualgibbs (Khodabandeh and Molkaraie, "Accelerated Random-Sweep Gibbs
Sampling for Gaussian Graphical Models via Dual Normal Factor Graphs"). A graph G = (V, E) with a standard
deviation s_v per node and sigma_e per edge defines

    Q = D_s^-1 + B D_sigma^-1 B^T   the primal precision over nodes   (x ~ N(0, Q^-1))
    R = D_sigma + B^T D_s B         the dual precision over edges     (y~ ~ N(0, R^-1), x~ = B y~)

with B the oriented incidence, L = B B^T the Laplacian, D_s = diag(s_v^2), D_sigma = diag(sigma_e^2).

Graphs and models
    Graph(n, edges), Graph.from_spec('torus:10'), Graph.from_networkx(G), Graph.from_adjacency(A),
    as_graph(x) (any of these); Model(graph, s=1.0, sigma=0.1, observations=None) with numbers or per-node /
    per-edge arrays, Model.from_spec('torus:10', s, sigma, node_file=None, seed=1, obs_file=None) (the command's
    --graph/--s/--sigma/--node-file/--obs-file). With observations z the model is the posterior N(mu, Q^-1),
    Q mu = D_s^-1 z: posterior_mean(model) (CHOLMOD or conjugate gradients).
    model.Q, model.R, model.B, model.L: scipy.sparse.csr_matrix.
Sampling
    sample(model, domain='dual', chains=10, sweeps=100, seed=1, threads=0, scan='random', ...) -> ndarray
    (chains x coordinates), bitwise what `dualgibbs sample` writes for the same arguments; the GIL is released.
Exact inference
    exact(model) (the whole report of `dualgibbs exact`: its JSON fields plus the arrays), log_det,
    marginal_variances (selected inversion), dual_node_variances, covariance, entropy, CholeskyFactor,
    torus_marginal_variance; spectra and rates: algebraic_connectivity, lambda_max_A, convergence_rates,
    closed_forms (the paper's propositions and Table I); info(model, spec) (`dualgibbs info --json`).
Experiments and estimators
    figures(), run_experiment('fig6', quick=True) (`dualgibbs reproduce`), run_convergence(model) (`dualgibbs
    converge`); marginals(model, method=..., rel_rmse=...) (the accuracy estimator of `dualgibbs marginals`);
    bench(model) (`dualgibbs bench`). Each returns the record the command prints with --json (the same keys and
    defaults), plus its arrays and tables.
    validate_draws(model, draws, kind=...) (`dualgibbs validate`).
Errors
    Bad input raises ValueError with the library's message; numerical failures raise NumericalError (subclasses
    NotPositiveDefiniteError, FactorizationError, EigensolverError, SolverNotConvergedError).

docs/python.md in the source tree has examples; help(dualgibbs.sample) and friends document each function.
"""

import numpy as _np
import scipy.sparse as _sp

from ._core import (  # noqa: F401  (re-exported)
    CholeskyFactor,
    EigensolverError,
    FactorizationError,
    Graph,
    Model,
    NotPositiveDefiniteError,
    NumericalError,
    SolverNotConvergedError,
    __version__,
    algebraic_connectivity,
    bench,
    closed_forms,
    convergence_rates,
    covariance,
    dual_node_variances,
    entropy,
    exact,
    figures,
    info,
    lambda_max_A,
    log_det,
    marginal_variances,
    marginals,
    posterior_mean,
    run_convergence,
    run_experiment,
    sample,
    torus_marginal_variance,
)

__all__ = [
    "CholeskyFactor", "EigensolverError", "FactorizationError", "Graph", "Model", "NotPositiveDefiniteError",
    "NumericalError", "SolverNotConvergedError", "algebraic_connectivity", "as_graph", "bench", "closed_forms",
    "convergence_rates", "covariance", "dual_node_variances", "entropy", "exact", "figures", "info", "lambda_max_A", "log_det",
    "marginal_variances", "marginals", "posterior_mean", "run_convergence", "run_experiment", "sample",
    "torus_marginal_variance", "validate_draws",
]


def _csr(parts):
    """scipy.sparse.csr_matrix over the C++ matrix's own arrays (no copy: they are owned by a capsule)."""
    data, indices, indptr, shape = parts
    return _sp.csr_matrix((data, indices, indptr), shape=shape, copy=False)


# ---- Graph constructors that need Python packages ------------------------------------------------------------------

def _from_networkx(G):
    """The graph of a networkx graph: node i is the i-th node of G.nodes(), edge e the e-th edge of G.edges() with
    its orientation (head, tail) as networkx lists it. Directed graphs and multigraphs raise ValueError."""
    if G.is_directed():
        raise ValueError("Graph.from_networkx: a directed graph (pass G.to_undirected())")
    if G.is_multigraph():
        raise ValueError("Graph.from_networkx: a multigraph (parallel edges are not a simple graph)")
    index = {v: i for i, v in enumerate(G.nodes())}
    edges = _np.array([(index[u], index[v]) for u, v in G.edges()], dtype=_np.int64).reshape(-1, 2)
    return Graph(len(index), edges)


def _from_adjacency(A):
    """The graph of a symmetric sparsity pattern (scipy.sparse matrix or array, or a dense numpy array): an edge
    (i, j), i < j, for every stored off-diagonal pair, in row order; the diagonal is ignored. The pattern is what is
    stored: explicit zeros are edges (call A.eliminate_zeros() first to drop them). A CSR matrix with int32 or int64
    indices is read in place; other formats are converted to CSR first (a copy)."""
    if not _sp.issparse(A):
        A = _sp.csr_matrix(_np.asarray(A))
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"Graph.from_adjacency: the matrix is {A.shape[0]} x {A.shape[1]}, not square")
    if A.format != "csr":
        A = A.tocsr()
    return Graph._from_csr(A.shape[0], A.indptr, A.indices)


def as_graph(x, seed=1):
    """A Graph from anything that describes one: a Graph (returned as is), a spec string ('torus:10',
    'file:edges.txt', ...; `seed` for random families without their own), an integer array of shape (m, 2) of edges
    (n = largest id + 1), a networkx graph, or a scipy.sparse adjacency matrix."""
    if isinstance(x, Graph):
        return x
    if isinstance(x, str):
        return Graph.from_spec(x, seed)
    if _sp.issparse(x):
        return _from_adjacency(x)
    if hasattr(x, "nodes") and hasattr(x, "edges") and hasattr(x, "is_directed"):
        return _from_networkx(x)
    edges = _np.asarray(x)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError("as_graph: expected a Graph, a spec string, an (m, 2) edge array, a networkx graph or a "
                         "scipy.sparse adjacency")
    if not _np.issubdtype(edges.dtype, _np.integer):
        raise ValueError(f"as_graph: edge ids must be integers, not {edges.dtype}")
    return Graph(int(edges.max()) + 1 if edges.size else 1, edges)


def _model_from_precision(Q, canonical_vector=None, symmetry_tolerance=1e-12, always_scale=False):
    """The model of your own sparse symmetric positive definite precision matrix Q (scipy.sparse, or a dense array):
    its off-diagonal non-zeros are the edges. When Q has factor width 2 (a symmetric H-matrix, e.g. diagonally
    dominant) it is split into edge factors Q = D_s^-1 + B D_sigma^-1 B^T with a weighted, signed incidence B, and the
    dual samplers apply (model.has_dual); otherwise only the primal ones. canonical_vector h gives the mean Q^-1 h.
    Pairs (i, j), (j, i) may differ by symmetry_tolerance relative (they are averaged); always_scale uses the
    comparison-matrix scaling even for a diagonally dominant Q. Raises ValueError for a matrix that is not square,
    not finite, not symmetric or not positive definite (naming the row)."""
    if not _sp.issparse(Q):
        Q = _sp.csr_matrix(_np.asarray(Q, dtype=float))
    Q = _sp.csr_matrix(Q, dtype=float, copy=True)
    Q.sum_duplicates()
    Q.sort_indices()
    return Model._from_precision_csr(Q.shape[0], Q.shape[1], Q.indptr, Q.indices, Q.data, symmetry_tolerance,
                                     always_scale, canonical_vector)


Model.from_precision = staticmethod(_model_from_precision)
Graph.from_networkx = staticmethod(_from_networkx)
Graph.from_adjacency = staticmethod(_from_adjacency)


# ---- Model matrices as scipy.sparse ---------------------------------------------------------------------------------

Model.Q = property(lambda self: _csr(self._primal_precision()),
                   doc="Primal precision Q = D_s^-1 + B D_sigma^-1 B^T (|V| x |V|), scipy.sparse.csr_matrix.")
Model.R = property(lambda self: _csr(self._dual_precision()),
                   doc="Dual precision R = D_sigma + B^T D_s B (|E| x |E|), scipy.sparse.csr_matrix; it has "
                       "sum_v d_v^2 - |E| non-zeros (ValueError if that overflows the 32-bit index).")
Model.B = property(lambda self: _csr(self._incidence()),
                   doc="Oriented incidence B (|V| x |E|): B[head, e] = +1, B[tail, e] = -1; scipy.sparse.csr_matrix.")
Model.L = property(lambda self: _csr(self._laplacian()),
                   doc="Laplacian L = B B^T (|V| x |V|), scipy.sparse.csr_matrix.")


def _factor_init(self, matrix, ordering="amd"):
    """Factorize `matrix` (a scipy.sparse matrix, or a dense array, with full symmetric storage; copied into the
    factorization's storage) with the fill-reducing `ordering`: 'amd' (default), 'auto', 'metis', 'nesdis' or
    'natural'. ValueError for a matrix that is not square, not symmetric or not finite; NotPositiveDefiniteError
    when it is not numerically positive definite."""
    A = matrix if _sp.issparse(matrix) else _sp.csr_matrix(_np.asarray(matrix))
    if A.dtype.kind not in "fiu":
        raise TypeError(f"CholeskyFactor: the matrix must be real, not of dtype {A.dtype}")
    A = A.tocsr()
    A.sort_indices()
    if A.has_canonical_format is False:
        A.sum_duplicates()
    CholeskyFactor._init(self, A.shape[0], A.shape[1], A.indptr, A.indices, A.data, ordering)


def _selected_inverse(self, pattern):
    """M^-1 at the non-zeros of `pattern` (e.g. M itself: the diagonal and every edge's covariance), from the same
    selected inversion as marginal_variances(); scipy.sparse.csr_matrix."""
    P = pattern.tocsr()
    return _csr(self._selected_inverse(P.shape[0], P.shape[1], P.indptr, P.indices, P.data))


def _factor_sample(self, count, seed=1):
    """`count` exact independent draws from N(0, M^-1) as a count x n array (x = P^T L^-T z, z from the seed's
    stream: the same draws on every platform)."""
    return self._sample(count, seed).T  # n x count in column order: its transpose is a C-order view, no copy


CholeskyFactor._init = CholeskyFactor.__init__
CholeskyFactor.__init__ = _factor_init
CholeskyFactor.selected_inverse = _selected_inverse
CholeskyFactor.sample = _factor_sample


# ---- validation -----------------------------------------------------------------------------------------------------

def validate_draws(model, draws, kind="primal", *, sweeps=None, alpha=1e-3, batches=0, worst=10):
    """Check draws of a sampler against the exact truth, as `dualgibbs validate` does (docs/validate.md).

    draws: (n, dim) for one checkpoint (n independent draws, one per chain) or (checkpoints, n, dim).
    kind: 'primal' (x, dim = |V|), 'dual-y' (y~, dim = |E|) or 'dual-x' (x~ = B y~, dim = |V|).
    sweeps: the sweep of each checkpoint (for the report). The truth is the command's: selected inversion, and for
    primal draws of a model with a mean (observations) the posterior mean mu (the draws are then of N(mu, Q^-1)).
    Returns the report `dualgibbs validate --json` prints, as a dict: 'consistent' (no test below alpha / tests,
    Bonferroni), 'tests', 'p_threshold', 'z_threshold', 'domain' (also as 'kind'), 'format' ('array'), 'layout',
    'checkpoints' (per checkpoint the z summaries 'mean_z', 'variance_z', 'edge_z' ({max_abs, rms, argmax}), the
    global test, the split-half error Eu, ...; and the per-coordinate arrays 'mean_z_values', 'variance_z_values',
    'variance_ratio', per edge 'edge_z_values', 'edge_covariance_error'), 'worst', 'notes', 'method', timings.
    The draws are copied once into the library's matrices."""
    a = _np.asarray(draws)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"validate_draws: draws must be real numbers, not an array of dtype {a.dtype}")
    a = a.astype(_np.float64, copy=False)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3:
        raise ValueError(f"validate_draws: draws must be (n, dim) or (checkpoints, n, dim), not {a.ndim}-D")
    sw = [] if sweeps is None else [float(s) for s in _np.atleast_1d(sweeps)]
    if sw and len(sw) != a.shape[0]:
        raise ValueError(f"validate_draws: {len(sw)} sweeps given for {a.shape[0]} checkpoints")
    # (n, dim) in C order is the (dim, n) column-major matrix the library wants: .T is a view, one copy in C++.
    return _core_validate(model, [c.T for c in a], sw, kind, alpha, batches, worst)


from ._core import _validate_draws as _core_validate  # noqa: E402
