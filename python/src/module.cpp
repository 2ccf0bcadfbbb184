// dualgibbs._core: the pybind11 bindings of the public library (docs/design.md: python/ is a thin layer over the
// library, like apps/). The Python-side conveniences (graphs from networkx and scipy.sparse, matrices as
// scipy.sparse.csr_matrix, docs) are in python/dualgibbs/__init__.py; docs/python.md is the user's page.
//
// Copies, stated once: results come back without copies (Eigen vectors and matrices are moved into numpy arrays
// that own them, sparse matrices are moved into a capsule that owns their three CSR arrays, sample() writes the
// draws straight into the numpy array it returns). Inputs are copied only where the library owns its data: edge
// arrays become the Graph's edge vector, s and sigma arrays the Model's vectors, a CSR matrix handed to
// CholeskyFactor the Eigen matrix it factorizes, draws handed to validate_draws its Eigen matrices. A CSR adjacency
// (Graph.from_adjacency) is read in place when its index arrays are int32 or int64 and C-contiguous.
//
// Errors: std::invalid_argument arrives as ValueError (pybind11's own translation, message unchanged); the library's
// numerical failures (NotPositiveDefinite, FactorizationError, EigensolverError, SolverNotConverged) and a sampler
// that reached a non-finite value arrive as dualgibbs.NumericalError or its subclasses, message unchanged.
#include "experiments.hpp"
#include "record.hpp"

#include <dualgibbs/dualgibbs.hpp>
#include <dualgibbs/paper/figures.hpp>

#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dualgibbs::python {
namespace {

/// A numerical failure found by a use case itself (api/common.hpp): NumericalError.
using api::NumericalFailure;

// ---- sparse matrices out: the three CSR arrays of an Eigen matrix, owned by a capsule (no copy) ------------------

py::tuple csr_parts(SparseMatrix m) {
  m.makeCompressed();
  auto* heap = new SparseMatrix(std::move(m));
  const py::capsule owner(heap, [](void* p) { delete static_cast<SparseMatrix*>(p); });
  const py::ssize_t nnz = heap->nonZeros();
  const py::ssize_t rows = heap->rows();
  py::array_t<double> data({nnz}, {static_cast<py::ssize_t>(sizeof(double))}, heap->valuePtr(), owner);
  py::array_t<int> indices({nnz}, {static_cast<py::ssize_t>(sizeof(int))}, heap->innerIndexPtr(), owner);
  py::array_t<int> indptr({rows + 1}, {static_cast<py::ssize_t>(sizeof(int))}, heap->outerIndexPtr(), owner);
  return py::make_tuple(data, indices, indptr, py::make_tuple(rows, heap->cols()));
}

// ---- sparse matrices in: scipy CSR arrays (the matrix is copied into an Eigen matrix the library owns) -------------

SparseMatrix csr_from_parts(py::ssize_t rows, py::ssize_t cols,
                            const py::array_t<int, py::array::c_style | py::array::forcecast>& indptr,
                            const py::array_t<int, py::array::c_style | py::array::forcecast>& indices,
                            const py::array_t<double, py::array::c_style | py::array::forcecast>& data) {
  if (rows < 0 || cols < 0 || rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max())
    throw std::invalid_argument("csr matrix: shape out of the 32-bit index range");
  if (indptr.ndim() != 1 || indices.ndim() != 1 || data.ndim() != 1)
    throw std::invalid_argument("csr matrix: indptr, indices and data must be one-dimensional");
  if (indptr.size() != rows + 1)
    throw std::invalid_argument("csr matrix: indptr has " + std::to_string(indptr.size()) + " entries, expected " +
                                std::to_string(rows + 1));
  const int* p = indptr.data();
  const py::ssize_t nnz = indices.size();
  if (data.size() != nnz) throw std::invalid_argument("csr matrix: indices and data differ in length");
  if (p[0] != 0 || p[rows] != nnz)
    throw std::invalid_argument("csr matrix: indptr must start at 0 and end at the number of stored entries");
  for (py::ssize_t r = 0; r < rows; ++r)
    if (p[r + 1] < p[r]) throw std::invalid_argument("csr matrix: indptr decreases at row " + std::to_string(r));
  for (py::ssize_t k = 0; k < nnz; ++k)
    if (indices.data()[k] < 0 || indices.data()[k] >= cols)
      throw std::invalid_argument("csr matrix: column index " + std::to_string(indices.data()[k]) + " out of range");
  const Eigen::Map<const SparseMatrix> view(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                                            static_cast<Eigen::Index>(nnz), p, indices.data(), data.data());
  SparseMatrix m(view);  // Eigen sorts nothing here: scipy's canonical format (sorted, no duplicates) is expected
  m.makeCompressed();
  return m;
}

// ---- graphs ----------------------------------------------------------------------------------------------------

/// The graph of a symmetric sparsity pattern in CSR form, read in place: one edge (i, j), i < j, per stored
/// off-diagonal pair, in row order; the diagonal is ignored, duplicates are merged, an asymmetric pattern is refused.
template <class I>
Graph graph_from_csr(std::int64_t n, const py::array_t<I, py::array::c_style>& indptr,
                     const py::array_t<I, py::array::c_style>& indices) {
  if (n < 1) throw std::invalid_argument("adjacency: the matrix is empty (" + std::to_string(n) + " rows)");
  if (n > std::numeric_limits<Index>::max())
    throw std::invalid_argument("adjacency: " + std::to_string(n) + " rows overflow the 32-bit node index");
  if (indptr.ndim() != 1 || indices.ndim() != 1)
    throw std::invalid_argument("adjacency: indptr and indices must be one-dimensional");
  if (indptr.size() != n + 1)
    throw std::invalid_argument("adjacency: indptr has " + std::to_string(indptr.size()) + " entries for " +
                                std::to_string(n) + " rows");
  const I* p = indptr.data();
  const I* idx = indices.data();
  const auto nnz = static_cast<std::int64_t>(indices.size());
  if (p[0] != 0 || static_cast<std::int64_t>(p[n]) != nnz)
    throw std::invalid_argument("adjacency: indptr must start at 0 and end at the number of stored entries");
  // indptr first, whole: once it starts at 0, ends at nnz and never decreases, every row's range is inside indices.
  for (std::int64_t r = 0; r < n; ++r)
    if (p[r + 1] < p[r]) throw std::invalid_argument("adjacency: indptr decreases at row " + std::to_string(r));
  std::vector<std::pair<Index, Index>> upper, lower;
  for (std::int64_t r = 0; r < n; ++r) {
    for (auto k = static_cast<std::int64_t>(p[r]); k < static_cast<std::int64_t>(p[r + 1]); ++k) {
      const auto c = static_cast<std::int64_t>(idx[k]);
      if (c < 0 || c >= n)
        throw std::invalid_argument("adjacency: column index " + std::to_string(c) + " in row " + std::to_string(r) +
                                    " is outside 0.." + std::to_string(n - 1));
      if (c > r) upper.emplace_back(static_cast<Index>(r), static_cast<Index>(c));
      if (c < r) lower.emplace_back(static_cast<Index>(c), static_cast<Index>(r));
    }
  }
  std::sort(upper.begin(), upper.end());
  upper.erase(std::unique(upper.begin(), upper.end()), upper.end());
  std::sort(lower.begin(), lower.end());
  lower.erase(std::unique(lower.begin(), lower.end()), lower.end());
  if (upper != lower) {
    const auto miss = std::mismatch(upper.begin(), upper.end(), lower.begin(), lower.end());
    const auto e = miss.first != upper.end() && (miss.second == lower.end() || *miss.first < *miss.second)
                       ? *miss.first
                       : std::make_pair(miss.second->second, miss.second->first);
    throw std::invalid_argument("adjacency: the pattern is not symmetric: entry (" + std::to_string(e.first) + ", " +
                                std::to_string(e.second) + ") has no (" + std::to_string(e.second) + ", " +
                                std::to_string(e.first) + ")");
  }
  std::vector<Edge> edges;
  edges.reserve(upper.size());
  for (const auto& e : upper) edges.push_back({e.first, e.second});
  return Graph(static_cast<Index>(n), std::move(edges));
}

// Refuses a value that numpy would convert with a loss before the library sees it: booleans and complex numbers
// anywhere (True is not 1.0 here; an imaginary part is never dropped), and non-integers where node ids are expected
// (an edge (0.5, 1.9) is not (0, 1)). TypeError names `what` and the dtype.
void check_numeric(const py::handle& value, bool integers, const std::string& what) {
  if (py::isinstance<py::bool_>(value)) throw py::type_error(what + " must be a number, not a bool");
  const py::array a = py::array::ensure(value);
  if (!a) return;  // not array-like: the caster's own error follows
  const char kind = a.dtype().kind();
  const bool ok = kind == 'i' || kind == 'u' || (!integers && kind == 'f') || (integers && a.size() == 0);
  if (!ok)
    throw py::type_error(what + " must be " + (integers ? "integers" : "real numbers") + ", not an array of dtype " +
                         py::str(a.dtype()).cast<std::string>());
}

// CholeskyFactor.solve: M^-1 b (a vector) or M^-1 B (a matrix), the right-hand side real and finite.
py::object solve_with(const CholeskyFactor& f, const py::object& rhs) {
  check_numeric(rhs, false, "CholeskyFactor.solve: the right-hand side");
  const auto b = rhs.cast<py::array_t<double, py::array::f_style | py::array::forcecast>>();
  if (b.ndim() != 1 && b.ndim() != 2)
    throw std::invalid_argument("CholeskyFactor.solve: the right-hand side must be a vector or a matrix, not " +
                                std::to_string(b.ndim()) + "-D");
  const Eigen::Index rows = b.shape(0), cols = b.ndim() == 2 ? b.shape(1) : 1;
  const Eigen::Map<const Eigen::MatrixXd> m(b.data(), rows, cols);
  if (!m.allFinite()) throw std::invalid_argument("CholeskyFactor.solve: the right-hand side is not finite");
  const py::gil_scoped_release unlocked;
  if (b.ndim() == 1) {
    Eigen::VectorXd x = f.solve(Eigen::VectorXd(m.col(0)));
    const py::gil_scoped_acquire locked;
    return py::cast(std::move(x));
  }
  Eigen::MatrixXd x = f.solve(Eigen::MatrixXd(m));
  const py::gil_scoped_acquire locked;
  return py::cast(std::move(x));
}

Graph graph_from_edges(std::int64_t n, const py::object& edge_array) {
  check_numeric(edge_array, true, "Graph: edges");
  const auto a = edge_array.cast<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>>();
  if (n < 0 || n > std::numeric_limits<Index>::max())
    throw std::invalid_argument("Graph: " + std::to_string(n) + " nodes is outside 0.." +
                                std::to_string(std::numeric_limits<Index>::max()));
  const bool empty = a.size() == 0;
  if (!empty && (a.ndim() != 2 || a.shape(1) != 2))
    throw std::invalid_argument("Graph: edges must be an array of shape (m, 2) (one row head, tail per edge)");
  std::vector<Edge> edges;
  const py::ssize_t m = empty ? 0 : a.shape(0);
  edges.reserve(static_cast<std::size_t>(m));
  const std::int64_t* e = a.data();
  for (py::ssize_t k = 0; k < m; ++k) {
    for (int j = 0; j < 2; ++j)
      if (e[2 * k + j] < 0 || e[2 * k + j] >= n)
        throw std::invalid_argument("Graph: edge " + std::to_string(k) + " (" + std::to_string(e[2 * k]) + ", " +
                                    std::to_string(e[2 * k + 1]) + ") has a node id outside 0.." +
                                    std::to_string(n - 1));
    edges.push_back({static_cast<Index>(e[2 * k]), static_cast<Index>(e[2 * k + 1])});
  }
  return Graph(static_cast<Index>(n), std::move(edges));
}

// s or sigma: a number (every node / edge) or one value per node / edge (copied: the model owns its parameters).
std::vector<double> parameter_vector(const py::object& value, Index count) {
  check_numeric(value, false, "Model: s and sigma");
  if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value))
    return std::vector<double>(static_cast<std::size_t>(count), value.cast<double>());
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a) throw py::type_error("Model: s and sigma must be numbers or sequences of numbers");
  if (a.ndim() > 1) throw std::invalid_argument("Model: s and sigma must be numbers or one-dimensional arrays");
  return std::vector<double>(a.data(), a.data() + a.size());
}

bool is_number(const py::object& value) {
  return !py::isinstance<py::bool_>(value) && (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value));
}

Model make_model(const Graph& graph, const py::object& s, const py::object& sigma) {
  if (is_number(s) && is_number(sigma)) return Model(graph, s.cast<double>(), sigma.cast<double>());
  return Model(graph, parameter_vector(s, graph.num_nodes()), parameter_vector(sigma, graph.num_edges()));
}

// Observations z or a canonical vector h: one value per node, a one-dimensional array (copied into the model; the
// library checks the length and finiteness). A 2-D image is refused rather than raveled in a guessed order.
Eigen::VectorXd node_vector(const py::object& value, const char* what) {
  if (value.is_none()) throw py::type_error(std::string("Model: ") + what + " must be an array of numbers, not None");
  check_numeric(value, false, std::string("Model: ") + what);
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a) throw py::type_error(std::string("Model: ") + what + " must be a sequence of numbers");
  if (a.ndim() != 1)
    throw std::invalid_argument(std::string("Model: ") + what + " must be one-dimensional (one value per node), not " +
                                std::to_string(a.ndim()) + "-D (ravel an image in the graph's node order)");
  return Eigen::Map<const Eigen::VectorXd>(a.data(), a.size());
}

// The mean of Model(..., observations=z) or Model(..., canonical_vector=h): at most one of them.
void set_mean(Model& model, const py::object& observations, const py::object& canonical_vector) {
  if (!observations.is_none() && !canonical_vector.is_none())
    throw std::invalid_argument("Model: give observations or canonical_vector, not both");
  if (!observations.is_none()) model.set_observations(node_vector(observations, "observations"));
  if (!canonical_vector.is_none()) model.set_canonical_vector(node_vector(canonical_vector, "canonical_vector"));
}

py::object optional_vector(const Eigen::VectorXd& v) { return v.size() == 0 ? py::object(py::none()) : py::cast(v); }

// ---- sampling ----------------------------------------------------------------------------------------------------

/// The draws of dualgibbs.sample, written straight into the numpy array it returns: checkpoints x chains x
/// coordinates in C order (column c of a checkpoint, chain c, is row c of its block). The array is allocated when the
/// run starts, with the GIL taken for that moment only.
class ArraySink final : public api::DrawsSink {
 public:
  void begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) override {
    if (chains > 0 && static_cast<double>(checkpoints) * static_cast<double>(chains) * static_cast<double>(dim) >
                          static_cast<double>(std::numeric_limits<py::ssize_t>::max() / 8))
      throw std::invalid_argument("sample: checkpoints x chains x coordinates overflows the array size");
    m_block = static_cast<std::size_t>(chains) * static_cast<std::size_t>(dim);
    const py::gil_scoped_acquire locked;
    py::array_t<double> out(
        {static_cast<py::ssize_t>(checkpoints), static_cast<py::ssize_t>(chains), static_cast<py::ssize_t>(dim)});
    m_data = out.mutable_data();
    array = std::move(out);
  }
  void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) override {
    double* block = m_data + sweeps.size() * m_block;
    const auto dim = static_cast<std::size_t>(states.rows());
    for (Eigen::Index c = 0; c < states.cols(); ++c)
      std::memcpy(block + static_cast<std::size_t>(c) * dim, states.col(c).data(), sizeof(double) * dim);
    sweeps.push_back(sweep);
  }
  py::object array;                   ///< the draws (set by begin())
  std::vector<std::uint64_t> sweeps;  ///< the sweep of every checkpoint written

 private:
  double* m_data = nullptr;
  std::size_t m_block = 0;
};

/// dualgibbs.sample: api::sample() (the options, checks and checkpoints of `dualgibbs sample`), so the draws are the
/// command's bits for the same seed.
py::object sample(const Model& model, const api::SampleOptions& options, unsigned threads, bool return_stats) {
  ArraySink sink;
  api::SampleResult r;
  {
    const py::gil_scoped_release unlocked;  // the run touches no Python object; the draws go to the array directly
    api::Execution execution;
    execution.threads = threads;
    r = api::sample(model, options, sink, execution);
  }
  py::object result = sink.array;
  if (options.every == 0) result = sink.array[py::int_(0)];
  if (!return_stats) return result;
  py::dict stats("seconds"_a = r.stats.seconds, "updates"_a = r.stats.updates,
                 "ns_per_update"_a = r.stats.ns_per_update, "cpu_seconds"_a = r.stats.cpu_seconds,
                 "sweeps"_a = sink.sweeps, "record"_a = to_python(r.record));
  if (model.has_mean()) stats["mean"] = py::cast(std::move(r.mean.mean));  // as the command's --mean-output
  return py::make_tuple(result, stats);
}

// ---- results as dictionaries ---------------------------------------------------------------------------------------

py::dict rates_dict(const Rates& r) {
  return py::dict(
      "lambda2_L"_a = r.lambda2_L, "lambda_max_A_primal"_a = r.lambda_max_A_primal,
      "lambda_max_A_dual"_a = r.lambda_max_A_dual, "rate_primal"_a = r.rate_primal, "rate_dual"_a = r.rate_dual,
      "rate_dual_effective"_a = r.rate_dual_effective, "rate_primal_asymptotic"_a = r.rate_primal_asymptotic,
      "rate_dual_asymptotic"_a = r.rate_dual_asymptotic,
      "rate_dual_effective_asymptotic"_a = r.rate_dual_effective_asymptotic, "components"_a = r.components,
      "lambda2_L_per_component"_a = r.lambda2_L_per_component, "lambda_min_nonzero_L"_a = r.lambda_min_nonzero_L,
      "method_lambda2"_a = to_string(r.method_lambda2), "method_primal"_a = to_string(r.method_primal),
      "method_dual"_a = to_string(r.method_dual), "seconds_lambda2"_a = r.seconds_lambda2,
      "seconds_primal"_a = r.seconds_primal, "seconds_dual"_a = r.seconds_dual);
}

// validate_draws' dict: the command's JSON report (api::validate()'s record), plus the kind and, per checkpoint, what
// the command writes to its per-coordinate and per-edge files: mean_z_values, variance_z_values, variance_ratio,
// edge_z_values and edge_covariance_error (arrays), and max_abs_mean_z, max_abs_variance_z, max_abs_edge_z.
py::dict validation_dict(const api::ValidationResult& v) {
  py::dict d = to_python(v.record).cast<py::dict>();
  d["kind"] = to_string(v.report.kind);
  const py::list checkpoints = d["checkpoints"].cast<py::list>();
  for (std::size_t k = 0; k < v.report.checkpoints.size(); ++k) {
    const CheckpointValidation& c = v.report.checkpoints[k];
    py::dict x = checkpoints[k].cast<py::dict>();
    x["mean_z_values"] = c.mean_z;
    x["variance_z_values"] = c.variance_z;
    x["variance_ratio"] = c.variance_ratio;
    x["edge_z_values"] = c.edge_z;
    x["edge_covariance_error"] = c.edge_covariance_error;
    x["max_abs_mean_z"] = c.mean.max_abs;
    x["max_abs_variance_z"] = c.variance.max_abs;
    x["max_abs_edge_z"] = c.edge.max_abs;
  }
  return d;
}

// ---- the use cases of the service layer (api/) ----------------------------------------------------------------------

void def_sample(py::module_& m) {
  m.def(
      "sample",
      [](const Model& model, const std::string& domain, std::size_t chains, std::size_t sweeps, std::uint64_t seed,
         unsigned threads, const std::string& scan, std::size_t every, std::size_t lockstep, const std::string& init,
         double init_value, double init_scale, const std::optional<Eigen::VectorXd>& initial_state, bool noise,
         const std::string& draws, const std::string& scheme, const std::optional<double>& omega,
         const std::optional<double>& lambda_min, const std::optional<double>& lambda_max,
         const std::string& mean_solver, double mean_tolerance, bool return_stats) {
        api::SampleOptions o;
        o.domain = domain;
        o.chains = chains;
        o.sweeps = sweeps;
        o.seed = seed;
        o.every = every;
        o.lockstep = lockstep;
        o.init = init;
        o.init_value = init_value;
        o.init_scale = init_scale;
        o.initial_state = initial_state;
        o.noise = noise;
        o.draws = draws;
        o.scheme = {scheme, scan, omega, lambda_min, lambda_max};
        o.mean = {mean_solver, mean_tolerance};
        return sample(model, o, threads, return_stats);
      },
      "model"_a, py::kw_only(), "domain"_a = "dual", "chains"_a = 10, "sweeps"_a = 100, "seed"_a = 1, "threads"_a = 0,
      "scan"_a = "random", "every"_a = 0, "lockstep"_a = 1, "init"_a = "constant", "init_value"_a = 1.0,
      "init_scale"_a = 1.0, "initial_state"_a = py::none(), "noise"_a = true, "draws"_a = "x", "scheme"_a = "gibbs",
      "omega"_a = py::none(), "lambda_min"_a = py::none(), "lambda_max"_a = py::none(), "mean_solver"_a = "cholesky",
      "mean_tolerance"_a = 1e-10, "return_stats"_a = false, R"doc(
Run Gibbs chains and return their draws, chains x coordinates (the bits `dualgibbs sample` writes for the same
arguments and seed; the defaults are the command's).

domain: 'primal' (x over nodes, precision Q) or 'dual' (y~ over edges, precision R, the O(1) edge update).
draws: for the dual, 'x' returns x~ = B y~ over nodes, 'y' the edge variables y~.
scan: 'random' (the paper's random sweep), 'permutation', 'fixed' or 'colored' (greedy colour classes in order, each
class updated by `threads` threads of one chain). scheme: 'gibbs' (the scan), 'ssor' (forward + backward sweep with
relaxation omega) or 'cheby-ssor' (Chebyshev-accelerated SSOR with the spectrum bounds lambda_min, lambda_max of the
SSOR-preconditioned precision; computed when not given), as the command's --scheme, --omega, --lambda-min and
--lambda-max (omega defaults to the optimum of the SSOR spectrum up to 5000 coordinates, else 1). lockstep: 1, 2, 4, 8 or 16 chains per shared
schedule block (faster, chains of a block dependent; docs/sampler.md). init: 'constant' (every coordinate
init_value), 'random' (N(0, init_scale^2 diag(M)^-1)) or 'given' (initial_state, one state of the domain).
noise=False runs plain Gauss-Seidel. threads: 0 = all cores; the draws do not depend on it.
every=0 returns the draws after the last sweep as an array (chains, dim); every=k > 0 returns (checkpoints, chains,
dim) at sweeps k, 2k, ... and the last. return_stats=True returns (draws, stats) with the sampling time, the
checkpoints' sweeps and 'record', the run's fields of the command's sidecar.
For a model with a mean (observations): the primal chains sample the posterior N(mu, Q^-1) itself; the dual chains
sample the zero-mean fluctuation exactly as without a mean (the dual has no data term), as the command does; with
return_stats=True, stats['mean'] is mu (the command's --mean-output), solved by mean_solver ('cholesky' or 'cg',
stopping at the relative residual mean_tolerance; the command's --mean-solver and --mean-tolerance).
The GIL is released while the chains run. Bad options raise ValueError; a chain that reaches a non-finite value
raises NumericalError.)doc");
}

void def_exact(py::module_& m) {
  m.def(
      "exact",
      [](const Model& model, const std::string& ordering, bool edge_variances, const std::optional<std::string>& spec) {
        api::ExactOptions o;
        o.ordering = ordering;
        o.edge_variances = edge_variances;
        const std::optional<GraphSpec> graph_spec =
            spec ? std::optional<GraphSpec>(parse_graph_spec(*spec)) : std::nullopt;
        api::ExactResult r;
        {
          const py::gil_scoped_release unlocked;
          r = api::exact(model, o, graph_spec ? &*graph_spec : nullptr);
        }
        py::dict d = to_python(r.record).cast<py::dict>();
        d["variance"] = std::move(r.variance);
        if (model.has_mean()) d["mean"] = std::move(r.mean.mean);
        if (edge_variances) {
          d["variance_Y"] = std::move(r.edge_variance_Y);
          d["variance_dual"] = std::move(r.edge_variance_dual);
        }
        return d;
      },
      "model"_a, py::kw_only(), "ordering"_a = "amd", "edge_variances"_a = false, "spec"_a = py::none(), R"doc(
The exact ground truth as `dualgibbs exact --json` reports it, from one sparse Cholesky factorization of Q: a dict with
the command's fields (logdet_Q, marginal_variance_mean/_min/_max, trace_cov, the entropies and their bounds, nnz_L,
timings; with a mean the posterior mean's fields; for a torus `spec` such as 'torus:10' the closed form
torus_marginal_variance and torus_max_abs_error; with edge_variances=True dual_marginal_variance_mean/_min/_max and
edge_variance_Y_mean) plus the arrays 'variance' (Var(X_v)), 'mean' (mu, models with a mean) and with
edge_variances=True 'variance_Y' (Var(X_u - X_v) per edge) and 'variance_dual' (Var(y~_e)), the command's --marginals
and --edge-marginals columns. ordering: amd, metis, nesdis, auto or natural. A numerically singular Q or R raises
NumericalError. The GIL is released.)doc");
}

void def_validate_draws(py::module_& m) {
  m.def(
      "_validate_draws",
      [](const Model& model, const std::vector<Eigen::MatrixXd>& checkpoints, const std::vector<double>& sweeps,
         const std::string& kind, double alpha, std::size_t batches, std::size_t worst) {
        api::ValidationOptions o;
        o.domain = kind;
        o.alpha = alpha;
        o.batches = batches;
        o.worst = worst;
        api::ValidationResult r;
        {
          const py::gil_scoped_release unlocked;
          r = api::validate(model, checkpoints, sweeps, o);
        }
        return validation_dict(r);
      },
      "model"_a, "checkpoints"_a, "sweeps"_a, "kind"_a, "alpha"_a, "batches"_a, "worst"_a);
}

// the exceptions: NumericalError and its subclasses (std::invalid_argument is pybind11's ValueError)
void def_exceptions(py::module_& m) {
  static py::exception<NumericalFailure> numerical(m, "NumericalError", PyExc_RuntimeError);
  numerical.doc() =
      "A numerical failure: a matrix that is not (numerically) positive definite, a failed factorization or "
      "eigensolve, a sampler that reached a non-finite value. Bad input raises ValueError instead.";
  static py::exception<NotPositiveDefinite> npd(m, "NotPositiveDefiniteError", numerical.ptr());
  static py::exception<FactorizationError> fact(m, "FactorizationError", numerical.ptr());
  static py::exception<EigensolverError> eig(m, "EigensolverError", numerical.ptr());
  static py::exception<SolverNotConverged> cg(m, "SolverNotConvergedError", numerical.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const NumericalFailure& e) {
      numerical(e.what());
    } catch (const NotPositiveDefinite& e) {
      npd(e.what());
    } catch (const FactorizationError& e) {
      fact(e.what());
    } catch (const EigensolverError& e) {
      eig(e.what());
    } catch (const SolverNotConverged& e) {
      cg(e.what());
    }
  });
}

// Graph
void def_graph(py::module_& m) {
  py::class_<Graph>(m, "Graph", R"doc(
A finite simple graph with nodes 0..n-1 and oriented edges 0..m-1 (edge e = (head, tail): B[head, e] = +1,
B[tail, e] = -1).

Graph(num_nodes, edges): edges is an integer array of shape (m, 2), one row (head, tail) per edge (copied).
Also: Graph.from_spec('torus:10'), Graph.from_networkx(G), Graph.from_adjacency(A), dualgibbs.as_graph(x).
Self-loops, duplicate edges (either orientation), ids out of range and an empty graph raise ValueError.
Isolated nodes and several components are valid.)doc")
      .def(py::init(&graph_from_edges), "num_nodes"_a, "edges"_a)
      .def_static(
          "from_spec", [](const std::string& spec, std::uint64_t seed) { return load_graph(spec, seed).graph; },
          "spec"_a, "seed"_a = 1,
          "The graph of a spec as the command's --graph reads it: 'torus:N', 'torus:NxM', 'grid:NxM', 'path:N', "
          "'cycle:N', 'complete:N', 'bipartite:N1,N2', 'star:N', 'kregular:N,K[,SEED]', 'ws:N,K,P[,SEED]', "
          "'er:N,P[,SEED]', 'ba:N,M[,SEED]', 'hypercube:D', 'torus3:N', 'file:PATH'. `seed` is used by random "
          "families given without one (the command passes --seed). Per-edge sigmas of an edge list are not kept: use "
          "Model.from_spec for them.")
      .def_static("_from_csr", &graph_from_csr<std::int32_t>, "n"_a, "indptr"_a, "indices"_a)
      .def_static("_from_csr", &graph_from_csr<std::int64_t>, "n"_a, "indptr"_a, "indices"_a)
      .def_property_readonly("num_nodes", &Graph::num_nodes, "|V|")
      .def_property_readonly("num_edges", &Graph::num_edges, "|E|")
      .def_property_readonly(
          "edges",
          [](py::object self) {
            const auto& g = self.cast<const Graph&>();
            const auto m = static_cast<py::ssize_t>(g.num_edges());
            static_assert(sizeof(Edge) == 2 * sizeof(Index), "Edge is two packed indices");
            // A read-only view of the graph's own edge vector (kept alive by the graph object).
            py::array_t<Index> a({m, py::ssize_t{2}},
                                 {static_cast<py::ssize_t>(sizeof(Edge)), static_cast<py::ssize_t>(sizeof(Index))},
                                 m == 0 ? nullptr : &g.edges()[0].head, self);
            py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
            return a;
          },
          "The oriented edges as an (m, 2) int32 array of (head, tail) rows (a read-only view, no copy).")
      .def_property_readonly(
          "degrees",
          [](const Graph& g) {
            Eigen::VectorXi d(g.num_nodes());
            for (Index v = 0; v < g.num_nodes(); ++v) d[v] = g.degree(v);
            return d;
          },
          "d_v of every node.")
      .def_property_readonly("num_components", &Graph::num_components, "Number of connected components.")
      .def_property_readonly(
          "component_labels",
          [](const Graph& g) {
            return Eigen::VectorXi(Eigen::Map<const Eigen::VectorXi>(g.component_labels().data(), g.num_nodes()));
          },
          "Component label of every node (components numbered by their smallest node).")
      .def_property_readonly("has_cycles", &Graph::has_cycles, "True if |E| > |V| - components.")
      .def("summary", &Graph::summary, "A one-line description.")
      .def("__repr__", [](const Graph& g) { return "<dualgibbs.Graph: " + g.summary() + ">"; });
}

// Model
void def_model(py::module_& m) {
  py::class_<Model>(m, "Model", R"doc(
The thin-membrane model: a graph, a standard deviation s_v per node and sigma_e per edge.
Q = D_s^-1 + B D_sigma^-1 B^T (primal, nodes), R = D_sigma + B^T D_s B (dual, edges), D_s = diag(s_v^2).

Model(graph, s=1.0, sigma=0.1, observations=None, canonical_vector=None): graph is a Graph or anything
dualgibbs.as_graph accepts (a spec string, an (m, 2) edge array, a networkx graph, a scipy.sparse adjacency); s and
sigma are numbers or one value per node / edge (copied). Model.from_spec(spec, s, sigma, node_file=None, seed=1,
obs_file=None) reads as the command's --graph, --s, --sigma, --node-file, --seed and --obs-file do (edge lists may
carry their own sigma_e).
Observations z (one per node, 1-D): the node factors become exp(-(x_v - z_v)^2 / 2 s_v^2) and the model is the
posterior N(mu, Q^-1) with Q mu = h = D_s^-1 z (posterior_mean(model)); or give h itself as canonical_vector.
Without either the model is the zero-mean prior. Q, and so every variance, does not depend on the mean.
Matrices (scipy.sparse.csr_matrix): model.Q, model.R, model.B, model.L.)doc")
      .def(py::init([](const py::object& graph, const py::object& s, const py::object& sigma,
                       const py::object& observations, const py::object& canonical_vector) {
             Model model =
                 py::isinstance<Graph>(graph)
                     ? make_model(graph.cast<const Graph&>(), s, sigma)
                     : make_model(py::module_::import("dualgibbs").attr("as_graph")(graph).cast<const Graph&>(), s,
                                  sigma);
             set_mean(model, observations, canonical_vector);
             return model;
           }),
           "graph"_a, "s"_a = 1.0, "sigma"_a = 0.1, py::kw_only(), "observations"_a = py::none(),
           "canonical_vector"_a = py::none())
      .def_static(
          "from_spec",
          [](const std::string& spec, double s, double sigma, const std::optional<std::string>& node_file,
             std::uint64_t seed, const std::optional<std::string>& obs_file) {
            check_standard_deviation(s, "s");  // as the command checks them, before the spec
            check_standard_deviation(sigma, "sigma");
            Model model = load_model(spec, s, sigma, node_file, seed);
            if (obs_file) model.set_observations(read_observations(*obs_file, model.num_nodes()).z);
            return model;
          },
          "spec"_a, "s"_a = 1.0, "sigma"_a = 0.1, "node_file"_a = py::none(), "seed"_a = 1, "obs_file"_a = py::none(),
          "The model `dualgibbs --graph SPEC --s S --sigma SIGMA [--node-file F] [--seed SEED] [--obs-file Z]` builds "
          "(obs_file: `v z_v` lines, nodes without a line observe 0).")
      .def_property_readonly(
          "graph", [](const Model& model) { return model.graph(); }, "The graph (a copy).")
      .def_property_readonly("num_nodes", &Model::num_nodes, "|V|")
      .def_property_readonly("num_edges", &Model::num_edges, "|E|")
      .def_property_readonly(
          "s",
          [](const Model& model) {
            return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(model.node_sd().data(), model.num_nodes()));
          },
          "s_v of every node (standard deviations).")
      .def_property_readonly(
          "sigma",
          [](const Model& model) {
            return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(model.edge_sd().data(), model.num_edges()));
          },
          "sigma_e of every edge (standard deviations).")
      .def_property_readonly("is_homogeneous", &Model::is_homogeneous, "All s_v equal and all sigma_e equal.")
      .def(
          "dimension", [](const Model& model, const std::string& d) { return model.dimension(parse_domain(d)); },
          "domain"_a, "|V| for 'primal', |E| for 'dual'.")
      .def_property_readonly(
          "primal_diagonal", [](const Model& model) { return model.primal_diagonal(); }, "The diagonal of Q.")
      .def_property_readonly(
          "dual_diagonal", [](const Model& model) { return model.dual_diagonal(); }, "The diagonal of R.")
      .def("_incidence", [](const Model& model) { return csr_parts(model.incidence()); })
      .def("_laplacian", [](const Model& model) { return csr_parts(model.laplacian()); })
      .def("_primal_precision", [](const Model& model) { return csr_parts(model.primal_precision()); })
      .def("_dual_precision", [](const Model& model) { return csr_parts(model.dual_precision()); })
      .def_property_readonly("has_mean", &Model::has_mean,
                             "True if observations or a canonical vector were given (the model is N(mu, Q^-1)).")
      .def_property_readonly(
          "observations", [](const Model& model) { return optional_vector(model.observations()); },
          "The observations z (a copy), or None.")
      .def_property_readonly(
          "canonical_vector", [](const Model& model) { return optional_vector(model.canonical_vector()); },
          "h with Q mu = h (D_s^-1 z for observations; a copy), or None for a zero-mean model.")
      // No setters: a Model is immutable from Python, so a call that runs without the GIL (sample, marginals, ...)
      // never sees it change under it; with_* return a new model.
      .def(
          "with_observations",
          [](const Model& model, const py::object& z) {
            Model copy = model;
            copy.set_observations(node_vector(z, "observations"));
            return copy;
          },
          "z"_a, "A copy of the model with observations z (one per node; replacing any mean).")
      .def(
          "with_canonical_vector",
          [](const Model& model, const py::object& h) {
            Model copy = model;
            copy.set_canonical_vector(node_vector(h, "canonical_vector"));
            return copy;
          },
          "h"_a, "A copy of the model with the canonical vector h (Q mu = h; replacing any mean).")
      .def("without_mean", &Model::without_mean, "The same model without its mean (a copy).")
      .def("summary", &Model::summary, "A one-line description.")
      .def("__repr__", [](const Model& model) { return "<dualgibbs.Model: " + model.summary() + ">"; });
}

// CholeskyFactor
// Model.from_precision and what it reports (Model::from_precision: the factor-width-2 split of a user's Q).
void def_model_precision(py::module_& m) {
  auto model = py::reinterpret_borrow<py::class_<Model>>(m.attr("Model"));
  model
      .def_static(
          "_from_precision_csr",
          [](py::ssize_t rows, py::ssize_t cols,
             const py::array_t<int, py::array::c_style | py::array::forcecast>& indptr,
             const py::array_t<int, py::array::c_style | py::array::forcecast>& indices,
             const py::array_t<double, py::array::c_style | py::array::forcecast>& data, double symmetry_tolerance,
             bool always_scale, const py::object& canonical_vector) {
            PrecisionOptions o;
            o.symmetry_tolerance = symmetry_tolerance;
            o.always_scale = always_scale;
            Model built = Model::from_precision(csr_from_parts(rows, cols, indptr, indices, data), o);
            set_mean(built, py::none(), canonical_vector);
            return built;
          },
          "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a, "symmetry_tolerance"_a, "always_scale"_a,
          "canonical_vector"_a)
      .def_property_readonly("has_dual", &Model::has_dual,
                             "True if Q = D_s^-1 + B D_sigma^-1 B^T with positive s and sigma: the dual exists.")
      .def_property_readonly("unit_incidence", &Model::unit_incidence,
                             "True for the thin membrane's incidence (+1 at the head, -1 at the tail of every edge).")
      .def_property_readonly("given_precision", &Model::given_precision, "True for a model made by from_precision.")
      .def_property_readonly(
          "incidence_weights",
          [](const Model& model) {
            Eigen::MatrixXd w(model.num_edges(), 2);
            for (Index e = 0; e < model.num_edges(); ++e) w.row(e) << model.head_weight(e), model.tail_weight(e);
            return w;
          },
          "(|E|, 2) array: B[head(e), e] and B[tail(e), e] per edge (1 and -1 for the thin membrane).")
      .def_property_readonly(
          "factor_width",
          [](const Model& model) {
            const FactorWidthReport& f = model.factor_width();
            py::dict d;
            d["given_precision"] = f.given_precision;
            d["factor_width_two"] = f.factor_width_two;
            d["diagonally_dominant"] = f.diagonally_dominant;
            d["d_min"] = f.d_min;
            d["d_max"] = f.d_max;
            d["positive_couplings"] = f.positive_couplings;
            d["failing_row"] = f.failing_row;
            d["reason"] = f.reason;
            return d;
          },
          "How a given precision split into edge factors: factor_width_two (the dual exists), diagonally_dominant "
          "(no scaling), d_min and d_max (the scaling d = M(Q)^-1 1), positive_couplings, and without a dual the "
          "failing_row of the comparison matrix and the reason.");
}

void def_cholesky_factor(py::module_& m) {
  py::class_<CholeskyFactor>(m, "CholeskyFactor", R"doc(
Sparse Cholesky factorization (CHOLMOD, supernodal, fill-reducing ordering) of a symmetric positive definite matrix.
CholeskyFactor(matrix, ordering='amd'): matrix is a scipy.sparse matrix with full symmetric storage (copied into
the factorization's own storage). Raises ValueError for a non-symmetric or non-finite matrix, NotPositiveDefiniteError
(a NumericalError) for one that is not numerically positive definite.)doc")
      .def(py::init([](py::ssize_t rows, py::ssize_t cols,
                       const py::array_t<int, py::array::c_style | py::array::forcecast>& indptr,
                       const py::array_t<int, py::array::c_style | py::array::forcecast>& indices,
                       const py::array_t<double, py::array::c_style | py::array::forcecast>& data,
                       const std::string& ordering) {
             const SparseMatrix a = csr_from_parts(rows, cols, indptr, indices, data);
             const py::gil_scoped_release unlocked;
             return std::make_unique<CholeskyFactor>(a, parse_ordering(ordering));
           }),
           "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a, "ordering"_a = "amd")
      .def_property_readonly("size", &CholeskyFactor::size, "n")
      .def("log_determinant", &CholeskyFactor::log_determinant, "log det M.")
      .def("solve", &solve_with, "b"_a,
           "M^-1 b for a vector b (length n), or M^-1 B for a matrix B (n x k), column by column. ValueError for a "
           "right-hand side that is not finite, TypeError for one that is not real (bool, complex).")
      .def(
          "_sample",
          [](const CholeskyFactor& f, std::size_t count, std::uint64_t seed) { return f.sample(count, seed); },
          "count"_a, "seed"_a, py::call_guard<py::gil_scoped_release>())
      .def("marginal_variances", &CholeskyFactor::marginal_variances,
           "diag(M^-1) by selected inversion (Takahashi recursion).", py::call_guard<py::gil_scoped_release>())
      .def("_selected_inverse",
           [](const CholeskyFactor& f, py::ssize_t rows, py::ssize_t cols,
              const py::array_t<int, py::array::c_style | py::array::forcecast>& indptr,
              const py::array_t<int, py::array::c_style | py::array::forcecast>& indices,
              const py::array_t<double, py::array::c_style | py::array::forcecast>& data) {
             const SparseMatrix pattern = csr_from_parts(rows, cols, indptr, indices, data);
             SparseMatrix z;
             {
               const py::gil_scoped_release unlocked;
               z = f.selected_inverse(pattern);
             }
             return csr_parts(std::move(z));
           })
      .def("inverse", &CholeskyFactor::inverse, "Dense M^-1 (n <= 20000).", py::call_guard<py::gil_scoped_release>())
      .def_property_readonly(
          "stats",
          [](const CholeskyFactor& f) {
            const FactorStats& s = f.stats();
            return py::dict("analyze_seconds"_a = s.analyze_seconds, "factorize_seconds"_a = s.factorize_seconds,
                            "nnz_L"_a = s.nnz_L, "flops"_a = s.flops, "supernodes"_a = s.supernodes,
                            "ordering"_a = to_string(s.ordering),
                            "selected_inversion_seconds"_a = s.selected_inversion_seconds);
          },
          "Timings and sizes of the factorization.");
}

// the exact functions: log-determinant, posterior mean, marginal variances, covariances, entropy, closed forms
void def_exact_functions(py::module_& m) {
  m.def(
      "log_det",
      [](const Model& model, const std::string& domain) {
        const Domain d = parse_domain(domain);
        const py::gil_scoped_release unlocked;
        const double logdet_q = CholeskyFactor(model.primal_precision()).log_determinant();
        return d == Domain::Primal ? logdet_q : entropy(model, logdet_q).logdet_R;
      },
      "model"_a, "domain"_a = "primal",
      "log det Q ('primal', CHOLMOD) or log det R ('dual', = log det D_sigma + log det D_s + log det Q by "
      "Sylvester's identity: R is never factorized).");
  m.def(
      "posterior_mean",
      [](const Model& model, const std::string& solver, double tolerance, std::size_t max_iterations,
         const std::string& ordering, bool return_info) -> py::object {
        PosteriorMeanOptions o;
        o.solver = parse_mean_solver(solver);
        o.tolerance = tolerance;
        o.max_iterations = max_iterations;
        o.ordering = parse_ordering(ordering);
        PosteriorMean r;
        {
          const py::gil_scoped_release unlocked;
          r = posterior_mean(model, o);
        }
        if (!return_info) return py::cast(std::move(r.mean));
        py::dict info("solver"_a = to_string(r.solver), "iterations"_a = r.iterations,
                      "relative_residual"_a = r.relative_residual, "seconds"_a = r.seconds);
        return py::make_tuple(std::move(r.mean), info);
      },
      "model"_a, py::kw_only(), "solver"_a = "cholesky", "tolerance"_a = 1e-10, "max_iterations"_a = 0,
      "ordering"_a = "amd", "return_info"_a = false, R"doc(
The posterior mean mu = Q^-1 h (h = D_s^-1 z for observations z) of a model with a mean; zeros for a zero-mean model.
solver: 'cholesky' (CHOLMOD, exact to rounding; `ordering` as CholeskyFactor) or 'cg' (Jacobi-preconditioned
conjugate gradients in O(|V| + |E|) memory, stopping when ||h - Q mu|| <= tolerance ||h||; the relative error is
then at most cond(Q) tolerance; max_iterations 0 = 10 |V| + 100). return_info=True returns (mu, info) with
'solver', 'iterations', 'relative_residual' (computed afresh) and 'seconds'. A tolerance outside (0, 1) or an unknown
solver raises ValueError; conjugate gradients stopped above the tolerance raise SolverNotConvergedError (a
NumericalError). The GIL is released.)doc");
  m.def(
      "marginal_variances",
      [](const Model& model, const std::string& domain, const std::string& ordering) {
        const Domain d = parse_domain(domain);
        const Ordering o = parse_ordering(ordering);
        const py::gil_scoped_release unlocked;
        return marginal_variances(model, d, o);
      },
      "model"_a, "domain"_a = "primal", "ordering"_a = "amd",
      "Exact marginal variances by selected inversion: diag(Q^-1) over nodes ('primal') or diag(R^-1) over edges "
      "('dual').");
  m.def(
      "dual_node_variances",
      [](const Model& model) {
        const py::gil_scoped_release unlocked;
        return marginal_variances_dual_nodes(model);
      },
      "model"_a,
      "Var(x~_v) of x~ = B y~ (what sample(domain='dual', draws='x') draws), exact, from R's selected inverse.");
  m.def(
      "covariance",
      [](const Model& model, const std::string& domain) {
        const Domain d = parse_domain(domain);
        const py::gil_scoped_release unlocked;
        return d == Domain::Primal ? covariance_primal(model) : covariance_dual(model);
      },
      "model"_a, "domain"_a = "primal", "Dense Q^-1 ('primal') or R^-1 ('dual'), at most 20000 coordinates.");
  m.def(
      "entropy",
      [](const Model& model) {
        Entropy e;
        {
          const py::gil_scoped_release unlocked;
          e = entropy(model);
        }
        return py::dict("logdet_Q"_a = e.logdet_Q, "logdet_R"_a = e.logdet_R, "primal"_a = e.primal,
                        "primal_lower"_a = e.primal_lower, "primal_upper"_a = e.primal_upper, "dual"_a = e.dual,
                        "dual_lower"_a = e.dual_lower, "dual_upper"_a = e.dual_upper);
      },
      "model"_a, "Differential entropies H(X), H(y~) (nats) with the bounds of the paper's appendix B.");
  def_exact(m);
  m.def("torus_marginal_variance", &torus_marginal_variance, "rows"_a, "cols"_a, "s"_a, "sigma"_a,
        "The torus' marginal variance in closed form [eq:torus_true_var].");

  m.def(
      "closed_forms",
      [](const Model& model, const std::optional<std::string>& spec, double lambda2_L) {
        const ClosedForms c =
            spec ? closed_forms(parse_graph_spec(*spec), model, lambda2_L) : closed_forms(model, lambda2_L);
        py::dict d;
        const std::pair<const char*, const std::optional<ClosedForm>*> entries[] = {
            {"lambda2_L", &c.lambda2_L},
            {"lambda_max_A_primal", &c.lambda_max_A_primal},
            {"lambda_max_A_dual", &c.lambda_max_A_dual},
            {"rate_primal", &c.rate_primal},
            {"rate_dual", &c.rate_dual},
            {"rate_dual_effective", &c.rate_dual_effective},
            {"rate_primal_asymptotic", &c.rate_primal_asymptotic},
            {"rate_dual_asymptotic", &c.rate_dual_asymptotic},
            {"rate_dual_effective_asymptotic", &c.rate_dual_effective_asymptotic},
            {"marginal_variance", &c.marginal_variance}};
        for (const auto& [key, form] : entries)
          if (*form) d[key] = py::make_tuple((*form)->value, (*form)->source);
        return d;
      },
      "model"_a, "spec"_a = py::none(), "lambda2_L"_a = std::numeric_limits<double>::quiet_NaN(),
      "The paper's closed forms that apply to a model, as `dualgibbs info` prints them: {name: (value, source)} with "
      "the names of convergence_rates() (and 'marginal_variance' for a homogeneous torus). Homogeneous models with "
      "edges "
      "only; `spec` (the model's graph spec, e.g. 'torus:10') adds the family's lambda_2 (Table I) and the torus "
      "variance; `lambda2_L` (e.g. the computed one) feeds Prop. 5.");
}

// spectra and rates
void def_spectra(py::module_& m) {
  m.def(
      "algebraic_connectivity",
      [](const Graph& g, const std::string& method) {
        const SpectralMethod sm = parse_spectral_method(method);
        const py::gil_scoped_release unlocked;
        return algebraic_connectivity(g, sm);
      },
      "graph"_a, "method"_a = "auto",
      "lambda_2(L) of a connected graph (method 'auto', 'dense', 'shift-invert' or 'lanczos').");
  m.def(
      "lambda_max_A",
      [](const Model& model, const std::string& domain, const std::string& method) {
        const Domain d = parse_domain(domain);
        SpectralOptions o;
        o.method = parse_spectral_method(method);
        const py::gil_scoped_release unlocked;
        return lambda_max_A(model, d, o);
      },
      "model"_a, "domain"_a = "primal", "method"_a = "auto",
      "lambda_max of the Gibbs iteration matrix A = I - diag(M)^-1 M (M = Q or R) [eqn:AGen].");
  m.def(
      "convergence_rates",
      [](const Model& model, const std::string& method) {
        SpectralOptions o;
        o.method = parse_spectral_method(method);
        Rates r;
        {
          const py::gil_scoped_release unlocked;
          r = convergence_rates(model, o);
        }
        return rates_dict(r);
      },
      "model"_a, "method"_a = "auto",
      "Spectra and the random-sweep rates of both domains, as `dualgibbs info` prints them (a dict).");
}

}  // namespace
}  // namespace dualgibbs::python

PYBIND11_MODULE(_core, m) {
  using namespace dualgibbs;
  using namespace dualgibbs::python;
  m.doc() = "The compiled part of dualgibbs (pybind11 bindings of libdualgibbs); use the package `dualgibbs`.";

  def_exceptions(m);
  m.attr("__version__") = DUALGIBBS_VERSION_STRING;
  def_graph(m);
  def_model(m);
  def_model_precision(m);
  def_sample(m);
  def_cholesky_factor(m);
  def_exact_functions(m);
  def_spectra(m);
  m.def(
      "figures",
      []() {
        py::dict d;
        for (const Figure& f : figures()) d[py::str(f.name)] = f.description;
        return d;
      },
      "The paper's experiments run_experiment() knows: {name: description}, in the paper's order.");
  // info, marginals, run_convergence, bench, run_experiment: the service layer's use cases (experiments.cpp)
  register_experiments(m);
  def_validate_draws(m);
}
