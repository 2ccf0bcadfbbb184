// Spectra and convergence rates. The three eigenvalue problems and the three methods are described in
// include/dualgibbs/truth/spectral.hpp; docs/spectral.md has the derivations and measurements.
#include <dualgibbs/truth/spectral.hpp>

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/truth/closed_forms.hpp>

#include "truth/cholmod_factor.hpp"
#include "truth/spectral_cholesky.hpp"

#include <Spectra/SymEigsSolver.h>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dualgibbs {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr Index kDenseMaxDimension = 600;
constexpr Index kDenseHardLimit = 8000;       // a forced Dense run beyond this would need > 0.5 GB and minutes
constexpr double kMaxFactorNonzeros = 2.5e8;  // Auto's caps for ShiftInvert
constexpr double kMaxFactorFlops = 2e11;
constexpr double kHardMaxFactorNonzeros = 1.5e9;  // a forced ShiftInvert beyond this would need > 12 GB
// Relative margin of the shift below the certified lower bound of lambda_min: (S - tau I) stays safely
// positive definite, and when the bound is exact the target is 1/margin times further from the shift than
// the rest of the spectrum is.
constexpr double kShiftMargin = 1e-3;
constexpr int kShiftInvertKrylov = 10;
constexpr int kLanczosKrylov = 32;

void check_options(const SpectralOptions& o) {
  if (!std::isfinite(o.tolerance) || !(o.tolerance > 0.0) || o.tolerance >= 1.0)
    throw std::invalid_argument("SpectralOptions: tolerance = " + number_text(o.tolerance) + " must be in (0, 1)");
  if (o.max_restarts < 1)
    throw std::invalid_argument("SpectralOptions: max_restarts = " + std::to_string(o.max_restarts) +
                                " must be at least 1");
  if (o.krylov_dimension != 0 && o.krylov_dimension < 2)
    throw std::invalid_argument("SpectralOptions: krylov_dimension = " + std::to_string(o.krylov_dimension) +
                                " must be 0 (automatic) or at least 2");
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- method choice ---------------------------------------------------------------------------------

// A fast path of Auto that skips the symbolic analysis (AMD costs seconds on large expanders): a large graph
// without hubs (max degree <= 4 x mean degree) where one breadth-first level holds a quarter of the nodes
// expands like a random regular graph, so every balanced separator, and the Cholesky factor, is huge. Lattices
// have levels of O(|V|^(1-1/d)) nodes; graphs with hubs (stars, lattice plus hub) go to the analysis.
bool obviously_expanding(const Graph& g) {
  constexpr Index kMinNodes = 2000;
  const Index n = g.num_nodes();
  if (n < kMinNodes || g.num_edges() == 0) return false;
  if (g.max_degree() > 4.0 * (2.0 * g.num_edges() / n)) return false;
  const auto& off = g.incidence_offsets();
  const auto& nb = g.incidence_neighbors();
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  std::vector<Index> level, next;
  std::size_t largest = 0;
  for (Index root = 0; root < n; ++root) {
    if (seen[root]) continue;
    seen[root] = 1;
    level.assign(1, root);
    while (!level.empty()) {
      largest = std::max(largest, level.size());
      next.clear();
      for (Index v : level)
        for (Index p = off[v]; p < off[v + 1]; ++p)
          if (!seen[nb[p]]) {
            seen[nb[p]] = 1;
            next.push_back(nb[p]);
          }
      level.swap(next);
    }
  }
  return 4 * largest >= static_cast<std::size_t>(n);
}

// Resolves Auto for the problems of one graph, running the symbolic analysis at most once and keeping it
// for the shift-invert factorizations (all of them have the graph's Laplacian pattern).
class Plan {
 public:
  explicit Plan(const Graph& g) : m_graph(g) {}

  SpectralMethod resolve(SpectralMethod requested, Index dimension) {
    if (dimension <= 2) return SpectralMethod::Dense;  // Spectra needs nev < ncv <= n; 2 x 2 is exact anyway
    if (requested != SpectralMethod::Auto) return requested;
    if (dimension <= kDenseMaxDimension) return SpectralMethod::Dense;
    if (!m_cholesky) {
      if (!m_expanding) m_expanding = obviously_expanding(m_graph);
      if (*m_expanding) return SpectralMethod::Lanczos;
    }
    const detail::NodePatternCholesky& c = cholesky();
    return c.analyzed() && c.factor_nonzeros() <= kMaxFactorNonzeros && c.factor_flops() <= kMaxFactorFlops
               ? SpectralMethod::ShiftInvert
               : SpectralMethod::Lanczos;
  }

  detail::NodePatternCholesky& cholesky() {
    if (!m_cholesky) m_cholesky = std::make_unique<detail::NodePatternCholesky>(m_graph);
    return *m_cholesky;
  }

  // The factorization for a forced or chosen ShiftInvert, refusing factors that cannot fit in memory.
  detail::NodePatternCholesky& cholesky_for_shift_invert(const char* problem) {
    detail::NodePatternCholesky& c = cholesky();
    if (!c.analyzed() || c.factor_nonzeros() > kHardMaxFactorNonzeros)
      throw EigensolverError(std::string(problem) + " by shift-invert: the Cholesky factor of the " +
                                 std::to_string(m_graph.num_nodes()) + "-node Laplacian pattern would have " +
                                 (c.analyzed() ? number_text(c.factor_nonzeros()) : std::string("more than 2^31")) +
                                 " non-zeros; use the Lanczos method for this graph",
                             EigensolverError::Status::NotComputed, SpectralMethod::ShiftInvert, 0, 0);
    return c;
  }

 private:
  const Graph& m_graph;
  std::optional<bool> m_expanding;
  std::unique_ptr<detail::NodePatternCholesky> m_cholesky;
};

void check_dense_size(Index dimension, const char* problem) {
  if (dimension > kDenseHardLimit)
    throw std::invalid_argument(std::string(problem) + ": the dense method is limited to " +
                                std::to_string(kDenseHardLimit) + " coordinates, this problem has " +
                                std::to_string(dimension) + "; use shift-invert, lanczos or auto");
}

// ---- Spectra ----------------------------------------------------------------------------------------

struct Outcome {
  double value;
  SpectralMethod method;
};

// The single extreme eigenvalue of a symmetric operator selected by `rule`, or EigensolverError.
template <class Op>
double run_spectra(Op& op, Spectra::SortRule rule, const SpectralOptions& o, int default_krylov, SpectralMethod method,
                   const char* problem, Eigen::VectorXd* ritz_vector = nullptr) {
  const Eigen::Index n = op.rows();
  const Eigen::Index ncv = std::min<Eigen::Index>(o.krylov_dimension > 0 ? o.krylov_dimension : default_krylov, n);
  Spectra::SymEigsSolver<Op> solver(op, 1, ncv);
  solver.init();  // Spectra's fixed-seed random start: results are reproducible
  solver.compute(rule, o.max_restarts, o.tolerance, rule);
  if (solver.info() != Spectra::CompInfo::Successful) {
    const auto status = solver.info() == Spectra::CompInfo::NumericalIssue ? EigensolverError::Status::NumericalIssue
                        : solver.info() == Spectra::CompInfo::NotComputed  ? EigensolverError::Status::NotComputed
                                                                           : EigensolverError::Status::NotConverging;
    throw EigensolverError(std::string(problem) + " by " + to_string(method) + ": Spectra status " + to_string(status) +
                               " after " + std::to_string(solver.num_iterations()) + " restarts and " +
                               std::to_string(solver.num_operations()) + " operator applications (tolerance " +
                               number_text(o.tolerance) + ", Krylov dimension " + std::to_string(ncv) + ")",
                           status, method, static_cast<long>(solver.num_iterations()),
                           static_cast<long>(solver.num_operations()));
  }
  if (ritz_vector) *ritz_vector = solver.eigenvectors(1).col(0);
  return solver.eigenvalues()[0];
}

// Spectra operator concept: Scalar, rows(), cols(), perform_op(in, out).
struct OperatorBase {
  using Scalar = double;
  Eigen::Index n;
  Eigen::Index rows() const { return n; }
  Eigen::Index cols() const { return n; }
};

// ---- solves with the shared factor -------------------------------------------------------------------

// x = K^-1 b for the |V| x |V| matrix K of a shift-invert operator (K = diag(d) + B diag(w) B^T).
using KSolve = std::function<void(const Eigen::VectorXd&, Eigen::VectorXd&)>;

KSolve direct_solve(const detail::NodePatternCholesky& chol) {
  return [&chol](const Eigen::VectorXd& b, Eigen::VectorXd& x) { chol.solve(b, x); };
}

// Lock-step solves for several Lanczos runs (one thread each) whose matrices are one factorized K0 up to a
// positive factor each (K_p = scale_p K0): a participant posts its right-hand side and waits; the last active
// participant to post solves every posted column in one pass over the factor (three columns cost about 1.8x
// one on the 1000 x 1000 torus) and wakes the others. Which runs share a pass depends only on their operation
// counts, never on timing, so the results are reproducible.
class SolveBatch {
 public:
  SolveBatch(const detail::NodePatternCholesky& chol, std::vector<double> scales)
      : m_chol(chol),
        m_scales(std::move(scales)),
        m_b(m_scales.size(), nullptr),
        m_x(m_scales.size(), nullptr),
        m_active(m_scales.size()) {}

  KSolve solver(std::size_t p) {
    return [this, p](const Eigen::VectorXd& b, Eigen::VectorXd& x) { solve(p, b, x); };
  }

  // Participant p does no more solves (call it also when p fails, or the others wait forever).
  void leave(std::size_t) {
    std::lock_guard<std::mutex> lock(m_mutex);
    --m_active;
    if (m_posted > 0 && m_posted == m_active) run_locked();
  }

 private:
  void solve(std::size_t p, const Eigen::VectorXd& b, Eigen::VectorXd& x) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_b[p] = &b;
    m_x[p] = &x;
    const long round = m_round;
    if (++m_posted == m_active)
      run_locked();
    else
      m_cv.wait(lock, [&] { return m_round != round; });
    if (m_error) std::rethrow_exception(m_error);
  }

  void run_locked() {
    std::vector<std::size_t> who;
    for (std::size_t p = 0; p < m_b.size(); ++p)
      if (m_b[p]) who.push_back(p);
    try {
      Eigen::MatrixXd b(m_chol.size(), static_cast<Eigen::Index>(who.size())), x;
      for (std::size_t j = 0; j < who.size(); ++j) b.col(static_cast<Eigen::Index>(j)) = *m_b[who[j]];
      m_chol.solve_factorized(b, x);
      for (std::size_t j = 0; j < who.size(); ++j)
        *m_x[who[j]] = x.col(static_cast<Eigen::Index>(j)) / m_scales[who[j]];
    } catch (...) {
      m_error = std::current_exception();
    }
    for (std::size_t p : who) m_b[p] = m_x[p] = nullptr;
    m_posted = 0;
    ++m_round;
    m_cv.notify_all();
  }

  const detail::NodePatternCholesky& m_chol;
  std::vector<double> m_scales;
  std::vector<const Eigen::VectorXd*> m_b;
  std::vector<Eigen::VectorXd*> m_x;
  std::size_t m_active;
  std::size_t m_posted = 0;
  long m_round = 0;
  std::exception_ptr m_error;
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

// ---- lambda_2(L) -------------------------------------------------------------------------------------

// P L^+ P with P = I - 11^T/n: eigenvalues 1/lambda_i(L) for i >= 2 and 0. The Laplacian grounded at node g
// (row and column g replaced by e_g) is positive definite on a connected graph, and for b orthogonal to 1
// the solution of L x = b with x_g = 0 is a solution of the full system; projecting it gives L^+ b.
struct GroundedLaplacianInverse : OperatorBase {
  KSolve solve_k;
  Index ground;
  mutable Eigen::VectorXd b, x;
  void perform_op(const double* in, double* out) const {
    Eigen::Map<const Eigen::VectorXd> xin(in, n);
    b = xin.array() - xin.mean();
    b[ground] = 0.0;
    solve_k(b, x);
    Eigen::Map<Eigen::VectorXd>(out, n) = x.array() - x.mean();
  }
};

// P K^-1 P with K = d I + w L (d, w > 0) and P = I - 11^T/n: K commutes with P, so the eigenvalues are
// 1/(d + w lambda_i) for i >= 2 and 0; the largest gives lambda_2 = (1/theta - d)/w.
struct ShiftedLaplacianInverse : OperatorBase {
  KSolve solve_k;
  mutable Eigen::VectorXd b, x;
  void perform_op(const double* in, double* out) const {
    Eigen::Map<const Eigen::VectorXd> xin(in, n);
    b = xin.array() - xin.mean();
    solve_k(b, x);
    Eigen::Map<Eigen::VectorXd>(out, n) = x.array() - x.mean();
  }
};

// L + (c/n) 11^T with c above lambda_max(L): the constant vector moves from eigenvalue 0 to c, so the
// smallest eigenvalue is lambda_2. Matrix-free on the graph's adjacency.
struct DeflatedLaplacian : OperatorBase {
  const Graph* g;
  double c;
  void perform_op(const double* in, double* out) const {
    const auto& off = g->incidence_offsets();
    const auto& nb = g->incidence_neighbors();
    double sum = 0.0;
    for (Eigen::Index v = 0; v < n; ++v) sum += in[v];
    const double shift = c * sum / static_cast<double>(n);
    for (Index v = 0; v < static_cast<Index>(n); ++v) {
      double acc = static_cast<double>(off[v + 1] - off[v]) * in[v];
      for (Index p = off[v]; p < off[v + 1]; ++p) acc -= in[nb[p]];
      out[v] = acc + shift;
    }
  }
};

// Every eigenvalue of the graph Laplacian, ascending, by a dense solve (the caller checks the size); `problem` names
// the quantity in the error.
Eigen::VectorXd laplacian_eigenvalues_dense(const Graph& g, const std::string& problem) {
  const Index n = g.num_nodes();
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(n, n);
  for (const Edge& e : g.edges()) {
    L(e.head, e.head) += 1.0;
    L(e.tail, e.tail) += 1.0;
    L(e.head, e.tail) -= 1.0;
    L(e.tail, e.head) -= 1.0;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(L, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success)
    throw EigensolverError(problem + " by dense: Eigen's SelfAdjointEigenSolver did not converge",
                           EigensolverError::Status::NotConverging, SpectralMethod::Dense, 0, 0);
  return es.eigenvalues();
}

double lambda2_dense(const Graph& g) { return laplacian_eigenvalues_dense(g, "lambda_2(L)")[1]; }

// lambda_2 from the largest eigenvalue theta of P K^-1 P, K = d I + w L, when the dual factors K anyway (a
// homogeneous model: its Woodbury core). The shift c = d/w moves the spectrum: the top eigenvalue's separation is
// (lambda_3 + c)/(lambda_2 + c), slow when c >> lambda_2, and 1/theta - d cancels about log10(1 + c/lambda_2)
// digits. So: a few restarts only, and the result kept only if c <= 10 lambda_2; otherwise nothing, and the caller
// uses the grounded Laplacian (measured on the 1000 x 1000 torus, s = 1, sigma = 0.25: c = 1.6 lambda_2, 16
// solves, one factorization fewer).
std::optional<double> lambda2_shifted(Index n, double d, double w, KSolve solve, const SpectralOptions& o) {
  ShiftedLaplacianInverse op;
  op.n = n;
  op.solve_k = std::move(solve);
  SpectralOptions quick = o;
  quick.max_restarts = std::min(o.max_restarts, 6);
  try {
    const double theta = run_spectra(op, Spectra::SortRule::LargestAlge, quick, kShiftInvertKrylov,
                                     SpectralMethod::ShiftInvert, "lambda_2(L)");
    const double l2 = (1.0 / theta - d) / w;
    if (l2 > 0 && d / w <= 10 * l2) return l2;
  } catch (const EigensolverError&) {
    // not converged in a few restarts: the grounded Laplacian converges faster
  }
  return std::nullopt;
}

// lambda_2 = 1/theta, theta the largest eigenvalue of the grounded Laplacian's inverse (factorized here).
double lambda2_grounded(const Graph& g, detail::NodePatternCholesky& chol, const SpectralOptions& o) {
  const Index n = g.num_nodes();
  Index ground = 0;
  for (Index v = 1; v < n; ++v)
    if (g.degree(v) > g.degree(ground)) ground = v;
  Eigen::VectorXd d = Eigen::VectorXd::Zero(n), w = Eigen::VectorXd::Ones(g.num_edges());
  d[ground] = 1.0;
  for (Index e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edge(e);
    if (ed.head == ground || ed.tail == ground) {
      w[e] = 0.0;  // the edge leaves the pattern's values but keeps its neighbour's degree
      d[ed.head == ground ? ed.tail : ed.head] += 1.0;
    }
  }
  chol.factorize(d, w);
  GroundedLaplacianInverse op;
  op.n = n;
  op.solve_k = direct_solve(chol);
  op.ground = ground;
  return 1.0 / run_spectra(op, Spectra::SortRule::LargestAlge, o, kShiftInvertKrylov, SpectralMethod::ShiftInvert,
                           "lambda_2(L)");
}

// lambda_2 of a connected graph with at least 2 nodes.
Outcome lambda2_connected(const Graph& g, Plan& plan, const SpectralOptions& o) {
  const Index n = g.num_nodes();
  const SpectralMethod method = plan.resolve(o.method, n);
  constexpr const char* problem = "lambda_2(L)";
  switch (method) {
    case SpectralMethod::Dense:
      check_dense_size(n, problem);
      return {lambda2_dense(g), method};
    case SpectralMethod::ShiftInvert:
      return {lambda2_grounded(g, plan.cholesky_for_shift_invert(problem), o), method};
    case SpectralMethod::Lanczos: {
      DeflatedLaplacian op;
      op.n = n;
      op.g = &g;
      op.c = 2.0 * g.max_degree() + 1.0;  // lambda_max(L) <= 2 max degree
      return {run_spectra(op, Spectra::SortRule::SmallestAlge, o, kLanczosKrylov, method, problem), method};
    }
    case SpectralMethod::Auto:
      break;
  }
  throw std::logic_error("lambda2_connected: unresolved method");
}

// Both ends of a connected graph's Laplacian spectrum. Lanczos: one run of Spectra's BothEnds (the two Ritz values
// converge together: on kregular:10000,4 at tolerance 5e-2, 56 operator applications with a Krylov dimension of 16
// against 49 for lambda_2 alone with 32, and about 25 more for a separate lambda_max run) on L + (c/n) 11^T with c =
// n delta_min / (n - 1): Fiedler's bound lambda_2 <= c and c <= delta_min + 1 <= Delta + 1 <= lambda_max (a graph
// with an edge) put the constant vector's eigenvalue c inside [lambda_2, lambda_max], so the operator's extreme
// eigenvalues are exactly lambda_2 and lambda_max (K_n: all three equal n).
constexpr int kBothEndsKrylov = 16;

// ||A x - theta x|| / (|theta| ||x||): Spectra's convergence measure of a Ritz pair, for the caller to judge.
template <class Op>
double relative_residual(const Op& op, const Eigen::VectorXd& x, double theta) {
  Eigen::VectorXd ax(x.size());
  op.perform_op(x.data(), ax.data());
  return (ax - theta * x).norm() / (std::abs(theta) * x.norm());
}

DeflatedLaplacian both_ends_operator(const Graph& g) {
  DeflatedLaplacian op;
  op.n = g.num_nodes();
  op.g = &g;
  Index min_degree = g.degree(0);
  for (Index v = 1; v < g.num_nodes(); ++v) min_degree = std::min(min_degree, g.degree(v));
  op.c = static_cast<double>(op.n) * static_cast<double>(min_degree) / static_cast<double>(op.n - 1);
  return op;
}

LaplacianEnds laplacian_ends_connected(const Graph& g, Plan& plan, const SpectralOptions& o) {
  const Index n = g.num_nodes();
  const SpectralMethod method = plan.resolve(o.method, n);
  constexpr const char* problem = "lambda_2(L) and lambda_max(L)";
  LaplacianEnds out;
  out.method = method;
  switch (method) {
    case SpectralMethod::Dense: {
      check_dense_size(n, problem);
      const Eigen::VectorXd eigenvalues = laplacian_eigenvalues_dense(g, problem);
      out.lambda2 = eigenvalues[1];
      out.lambda_max = eigenvalues[n - 1];
      return out;
    }
    case SpectralMethod::ShiftInvert: {
      // lambda_2 by shift-invert as algebraic_connectivity; the top by Lanczos on the operator below.
      out.lambda2 = lambda2_grounded(g, plan.cholesky_for_shift_invert(problem), o);
      DeflatedLaplacian op = both_ends_operator(g);
      Eigen::VectorXd x;
      out.lambda_max = run_spectra(op, Spectra::SortRule::LargestAlge, o, kLanczosKrylov, method, problem, &x);
      out.lambda_max_residual = relative_residual(op, x, out.lambda_max);
      return out;
    }
    case SpectralMethod::Lanczos: {
      DeflatedLaplacian op = both_ends_operator(g);
      const Eigen::Index ncv = std::min<Eigen::Index>(o.krylov_dimension > 0 ? o.krylov_dimension : kBothEndsKrylov, n);
      Spectra::SymEigsSolver<DeflatedLaplacian> solver(op, 2, ncv);
      solver.init();  // Spectra's fixed-seed random start: results are reproducible
      solver.compute(Spectra::SortRule::BothEnds, o.max_restarts, o.tolerance, Spectra::SortRule::SmallestAlge);
      if (solver.info() != Spectra::CompInfo::Successful)
        throw EigensolverError(
            std::string(problem) + " by lanczos: Spectra did not converge after " +
                std::to_string(solver.num_iterations()) + " restarts and " + std::to_string(solver.num_operations()) +
                " operator applications (tolerance " + number_text(o.tolerance) + ", Krylov dimension " +
                std::to_string(ncv) + ")",
            solver.info() == Spectra::CompInfo::NumericalIssue ? EigensolverError::Status::NumericalIssue
                                                               : EigensolverError::Status::NotConverging,
            method, static_cast<long>(solver.num_iterations()), static_cast<long>(solver.num_operations()));
      out.lambda2 = solver.eigenvalues()[0];
      out.lambda_max = solver.eigenvalues()[1];
      out.lambda_max_residual = relative_residual(op, solver.eigenvectors(2).col(1), out.lambda_max);
      return out;
    }
    case SpectralMethod::Auto:
      break;
  }
  throw std::logic_error("laplacian_ends_connected: unresolved method");
}

// The connected components as graphs of their own, nodes renumbered in increasing order.
std::vector<Graph> component_graphs(const Graph& g) {
  const Index k = g.num_components();
  const auto& label = g.component_labels();
  std::vector<Index> local(static_cast<std::size_t>(g.num_nodes()));
  std::vector<Index> size(static_cast<std::size_t>(k), 0);
  for (Index v = 0; v < g.num_nodes(); ++v) local[v] = size[label[v]]++;
  std::vector<std::vector<Edge>> edges(static_cast<std::size_t>(k));
  for (const Edge& e : g.edges()) edges[label[e.head]].push_back({local[e.head], local[e.tail]});
  std::vector<Graph> out;
  out.reserve(static_cast<std::size_t>(k));
  for (Index c = 0; c < k; ++c) out.emplace_back(size[c], std::move(edges[c]));
  return out;
}

std::vector<Outcome> lambda2_components(const Graph& g, Plan& plan, const SpectralOptions& o) {
  if (g.num_components() == 1) {
    if (g.num_nodes() == 1) return {{kNaN, SpectralMethod::Dense}};
    return {lambda2_connected(g, plan, o)};
  }
  std::vector<Outcome> out;
  for (const Graph& c : component_graphs(g)) {
    if (c.num_nodes() == 1) {
      out.push_back({kNaN, SpectralMethod::Dense});
      continue;
    }
    Plan own(c);
    out.push_back(lambda2_connected(c, own, o));
  }
  return out;
}

// ---- lambda_min(D^-1/2 M D^-1/2) ----------------------------------------------------------------------

// Primal shift-invert: D^1/2 (Q - tau D)^-1 D^1/2 = (S - tau I)^-1.
struct PrimalShiftInvert : OperatorBase {
  KSolve solve_k;
  Eigen::VectorXd sqrt_d;
  mutable Eigen::VectorXd b, x;
  void perform_op(const double* in, double* out) const {
    b = sqrt_d.cwiseProduct(Eigen::Map<const Eigen::VectorXd>(in, n));
    solve_k(b, x);
    Eigen::Map<Eigen::VectorXd>(out, n) = sqrt_d.cwiseProduct(x);
  }
};

// Dual shift-invert: D^1/2 M^-1 D^1/2 with M = R - tau D = W + B^T D_s B, W = D_sigma - tau D diagonal and
// positive, applied by Woodbury: M^-1 f = W^-1 (f - B^T z) with K z = B W^-1 f, K = D_s^-1 + B W^-1 B^T
// (|V| x |V|, the Laplacian pattern), so R is never formed. On cycle-space vectors (B f = 0) this is exact; on
// cut-space vectors the subtraction cancels about log10(max R_ee / W_e) digits. That is harmless for Lanczos
// (the operator is still accurate to ~1e-12 relative), and the final value is recomputed with a refined solve.
struct DualShiftInvert : OperatorBase {
  KSolve solve_k;
  const Graph* g;
  const Model* model;  // B's weights: b_u = head_weight(e), b_v = tail_weight(e) (+1 and -1 for a unit incidence)
  Eigen::VectorXd sqrt_d, w_inv;
  mutable Eigen::VectorXd a, b, z, y;

  // out = M^-1 in by Woodbury.
  void solve(const Eigen::VectorXd& in, Eigen::VectorXd& out) const {
    a = w_inv.cwiseProduct(in);
    b.setZero(g->num_nodes());
    const auto& edges = g->edges();
    if (model->unit_incidence()) {
      for (Eigen::Index e = 0; e < n; ++e) {
        b[edges[e].head] += a[e];
        b[edges[e].tail] -= a[e];
      }
    } else {
      for (Eigen::Index e = 0; e < n; ++e) {
        b[edges[e].head] += model->head_weight(e) * a[e];
        b[edges[e].tail] += model->tail_weight(e) * a[e];
      }
    }
    solve_k(b, z);
    out.resize(n);
    if (model->unit_incidence()) {
      for (Eigen::Index e = 0; e < n; ++e) out[e] = a[e] - w_inv[e] * (z[edges[e].head] - z[edges[e].tail]);
      return;
    }
    for (Eigen::Index e = 0; e < n; ++e)
      out[e] = a[e] - w_inv[e] * (model->head_weight(e) * z[edges[e].head] + model->tail_weight(e) * z[edges[e].tail]);
  }

  void perform_op(const double* in, double* out) const {
    solve(sqrt_d.cwiseProduct(Eigen::Map<const Eigen::VectorXd>(in, n)), y);
    Eigen::Map<Eigen::VectorXd>(out, n) = sqrt_d.cwiseProduct(y);
  }

  // v^T D^1/2 M^-1 D^1/2 v / v^T v with M^-1 applied by Woodbury plus iterative refinement against the exact
  // matrix-free M = R - tau D (until the correction is at rounding level, at most 4 steps): the Rayleigh
  // quotient of the shift-inverted operator at the Ritz vector, free of the cancellation, with an error
  // quadratic in the Ritz vector's. A few solves, once.
  double refined_rayleigh_quotient(const Eigen::VectorXd& v, const DualPrecisionOperator& r, double tau,
                                   const Eigen::VectorXd& d) const {
    const Eigen::VectorXd f = sqrt_d.cwiseProduct(v);
    Eigen::VectorXd x, dx, res(n);
    solve(f, x);
    for (int k = 0; k < 4; ++k) {
      r.perform_op(x.data(), res.data());
      res = f - res + tau * d.cwiseProduct(x);  // f - (R - tau D) x
      solve(res, dx);
      x += dx;
      if (dx.norm() <= 4 * std::numeric_limits<double>::epsilon() * x.norm()) break;
    }
    return f.dot(x) / v.squaredNorm();
  }
};

// Primal Lanczos: D^-1/2 Q D^-1/2 with Q explicit (|V| + 2|E| non-zeros).
struct ScaledPrimal : OperatorBase {
  SparseMatrix q;
  Eigen::VectorXd inv_sqrt_d;
  mutable Eigen::VectorXd b, x;
  void perform_op(const double* in, double* out) const {
    b = inv_sqrt_d.cwiseProduct(Eigen::Map<const Eigen::VectorXd>(in, n));
    x.noalias() = q * b;
    Eigen::Map<Eigen::VectorXd>(out, n) = inv_sqrt_d.cwiseProduct(x);
  }
};

// Dual Lanczos: D^-1/2 R D^-1/2, matrix-free through Model::dual_operator().
struct ScaledDual : OperatorBase {
  DualPrecisionOperator r;
  Eigen::VectorXd inv_sqrt_d;
  mutable Eigen::VectorXd b, x;
  explicit ScaledDual(const Model& m) : OperatorBase{m.num_edges()}, r(m.dual_operator()) {}
  void perform_op(const double* in, double* out) const {
    b = inv_sqrt_d.cwiseProduct(Eigen::Map<const Eigen::VectorXd>(in, n));
    x.resize(n);
    r.perform_op(b.data(), x.data());
    Eigen::Map<Eigen::VectorXd>(out, n) = inv_sqrt_d.cwiseProduct(x);
  }
};

double lambda_min_dense(const Model& model, Domain domain) {
  const Eigen::VectorXd inv_sqrt_d =
      (domain == Domain::Primal ? model.primal_diagonal() : model.dual_diagonal()).cwiseSqrt().cwiseInverse();
  Eigen::MatrixXd s = Eigen::MatrixXd(model.precision(domain));
  s = inv_sqrt_d.asDiagonal() * s * inv_sqrt_d.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success)
    throw EigensolverError("lambda_max(A) by dense: Eigen's SelfAdjointEigenSolver did not converge",
                           EigensolverError::Status::NotConverging, SpectralMethod::Dense, 0, 0);
  return es.eigenvalues()[0];
}

// lambda_max(A) = 1 - lambda_min(S). S = D^-1/2 M D^-1/2 is positive definite with a unit diagonal, so lambda_min(S)
// lies in (0, 1] and lambda_max(A) in [0, 1); a computed value outside [0, 1] is rounding (with s / sigma = 1e150 the
// true lambda_min(S) ~ 1e-601 underflows and the solver returns -7e-16), which would make random_sweep_rate refuse a
// valid model. NaN is passed through.
double lambda_max_from(double scaled_lambda_min) {
  const double l = 1.0 - scaled_lambda_min;
  if (std::isnan(l)) return l;
  return std::min(1.0, std::max(0.0, l));
}

// The shift tau of the shift-invert methods, kShiftMargin below the certified lower bound min_i F_ii / M_ii of
// lambda_min (see scaled_lambda_min).
double certified_shift(const Eigen::VectorXd& floor_diag, const Eigen::VectorXd& diag) {
  return (1.0 - kShiftMargin) * floor_diag.cwiseQuotient(diag).minCoeff();
}

// The |V| x |V| matrix K = diag(d) + B diag(w) B^T a domain's shift-invert method solves with, at the shift tau.
// A certified lower bound of lambda_min(S): Q >= D_s^-1 and R >= D_sigma (the rest is a PSD Laplacian term), so
// lambda_min(S) >= min_i F_ii / M_ii with F = D_s^-1 or D_sigma; tau sits kShiftMargin below it. Equality for
// homogeneous regular graphs (primal) and homogeneous graphs with cycles (dual, Prop. 4).
struct ShiftedMatrix {
  double tau;
  Eigen::VectorXd d, w;  // the dual's w is W^-1, W = D_sigma - tau D (the Woodbury core's edge weights)
  Eigen::VectorXd diag;  // D = diag(M)
};

ShiftedMatrix shifted_matrix(const Model& model, Domain domain) {
  ShiftedMatrix k;
  k.diag = domain == Domain::Primal ? model.primal_diagonal() : model.dual_diagonal();
  const Eigen::VectorXd floor_diag =
      domain == Domain::Primal ? model.node_variances().cwiseInverse() : model.edge_variances();
  k.tau = certified_shift(floor_diag, k.diag);
  if (domain == Domain::Primal) {
    // Q - tau D = (D_s^-1 - tau D) + B D_sigma^-1 B^T, diagonal part >= margin * D_s^-1 > 0. A direct
    // factorization: 1/theta = lambda_min - tau is accurate, and tau carries the leading digits.
    k.d = floor_diag - k.tau * k.diag;
    k.w = model.edge_variances().cwiseInverse();
  } else {
    // The Woodbury core D_s^-1 + B W^-1 B^T of R - tau D, W = D_sigma - tau D >= margin * D_sigma > 0.
    k.d = model.node_variances().cwiseInverse();
    k.w = (floor_diag - k.tau * k.diag).cwiseInverse();
  }
  return k;
}

// lambda_min(S) by shift-invert: tau + 1/theta, theta the largest eigenvalue of D^1/2 (M - tau D)^-1 D^1/2, with
// `solve` solving with k (the dual's final value from a refined Rayleigh quotient, see DualShiftInvert).
double shift_invert_lambda_min(const Model& model, Domain domain, const ShiftedMatrix& k, KSolve solve,
                               const SpectralOptions& o) {
  constexpr SpectralMethod method = SpectralMethod::ShiftInvert;
  if (domain == Domain::Primal) {
    PrimalShiftInvert op;
    op.n = model.num_nodes();
    op.solve_k = std::move(solve);
    op.sqrt_d = k.diag.cwiseSqrt();
    return k.tau +
           1.0 / run_spectra(op, Spectra::SortRule::LargestAlge, o, kShiftInvertKrylov, method, "lambda_max(A) primal");
  }
  DualShiftInvert op;
  op.n = model.num_edges();
  op.g = &model.graph();
  op.model = &model;
  op.w_inv = k.w;
  op.sqrt_d = k.diag.cwiseSqrt();
  op.solve_k = std::move(solve);
  Eigen::VectorXd v;
  run_spectra(op, Spectra::SortRule::LargestAlge, o, kShiftInvertKrylov, method, "lambda_max(A) dual", &v);
  return k.tau + 1.0 / op.refined_rayleigh_quotient(v, model.dual_operator(), k.tau, k.diag);
}

// The primal lambda_min(S) of a model without a dual (a given Q that is not of factor width 2): no D_s to shift by,
// so the shift is 0 and Q itself is factorized (CHOLMOD, AMD), with the pattern's analysis as the size check.
double factor_shift_invert_lambda_min(const Model& model, const detail::NodePatternCholesky& pattern,
                                      const SpectralOptions& o) {
  (void)pattern;  // analyzed and within the size limits (cholesky_for_shift_invert)
  const SparseMatrix q = model.primal_precision();
  auto factor = std::make_shared<detail::CholmodFactor>(Ordering::Amd, 0);
  factor->analyze(q);
  factor->factorize(q);
  PrimalShiftInvert op;
  op.n = model.num_nodes();
  op.solve_k = [factor](const Eigen::VectorXd& b, Eigen::VectorXd& x) { factor->solve(b, x); };
  op.sqrt_d = model.primal_diagonal().cwiseSqrt();
  return 1.0 / run_spectra(op, Spectra::SortRule::LargestAlge, o, kShiftInvertKrylov, SpectralMethod::ShiftInvert,
                           "lambda_max(A) primal");
}

// lambda_min(D^-1/2 M D^-1/2), the quantity 1 - lambda_max(A) that the rates need.
Outcome scaled_lambda_min(const Model& model, Domain domain, Plan& plan, const SpectralOptions& o) {
  const Index dim = model.dimension(domain);
  const char* problem = domain == Domain::Primal ? "lambda_max(A) primal" : "lambda_max(A) dual";
  const SpectralMethod method = plan.resolve(o.method, dim);
  const Eigen::VectorXd diag = domain == Domain::Primal ? model.primal_diagonal() : model.dual_diagonal();
  switch (method) {
    case SpectralMethod::Dense:
      check_dense_size(dim, problem);
      return {lambda_min_dense(model, domain), method};
    case SpectralMethod::ShiftInvert: {
      detail::NodePatternCholesky& chol = plan.cholesky_for_shift_invert(problem);
      if (!model.has_dual()) return {factor_shift_invert_lambda_min(model, chol, o), method};
      const ShiftedMatrix k = shifted_matrix(model, domain);
      chol.factorize(k.d, k.w, &model);
      return {shift_invert_lambda_min(model, domain, k, direct_solve(chol), o), method};
    }
    case SpectralMethod::Lanczos: {
      if (domain == Domain::Primal) {
        ScaledPrimal op;
        op.n = dim;
        op.q = model.primal_precision();
        op.inv_sqrt_d = diag.cwiseSqrt().cwiseInverse();
        return {run_spectra(op, Spectra::SortRule::SmallestAlge, o, kLanczosKrylov, method, problem), method};
      }
      ScaledDual op(model);
      op.inv_sqrt_d = diag.cwiseSqrt().cwiseInverse();
      return {run_spectra(op, Spectra::SortRule::SmallestAlge, o, kLanczosKrylov, method, problem), method};
    }
    case SpectralMethod::Auto:
      break;
  }
  throw std::logic_error("scaled_lambda_min: unresolved method");
}

// The three problems' outcomes and wall-clock seconds.
struct Spectra3 {
  std::vector<Outcome> lambda2;
  Outcome primal{kNaN, SpectralMethod::Auto};
  std::optional<Outcome> dual;  // none without edges
  double seconds_lambda2 = 0, seconds_primal = 0, seconds_dual = 0;
};

Spectra3 sequential_spectra(const Model& model, Plan& plan, const SpectralOptions& o) {
  Spectra3 sp;
  auto t0 = Clock::now();
  sp.lambda2 = lambda2_components(model.graph(), plan, o);
  sp.seconds_lambda2 = seconds_since(t0);
  t0 = Clock::now();
  sp.primal = scaled_lambda_min(model, Domain::Primal, plan, o);
  sp.seconds_primal = seconds_since(t0);
  if (model.num_edges() > 0 && model.has_dual()) {
    t0 = Clock::now();
    sp.dual = scaled_lambda_min(model, Domain::Dual, plan, o);
    sp.seconds_dual = seconds_since(t0);
  }
  return sp;
}

// A connected homogeneous model whose three problems all run shift-invert. The dual's Woodbury core
// D_s^-1 + B W^-1 B^T is then (1/s^2) I + (1/W) L (W = D_sigma - tau D constant): one factorization serves the
// dual and lambda_2 (lambda2_shifted), and on a regular graph the primal's Q - tau D as well (a multiple of it).
// Their Lanczos runs go in lock-step, one thread each, their solves batched into one pass over the factor
// (SolveBatch): on the 1000 x 1000 torus 16 passes of up to three columns instead of 48 single solves. The
// seconds of each problem are its own wall time from the shared start (the factorization counts to lambda_2's).
Spectra3 batched_spectra(const Model& model, Plan& plan, const SpectralOptions& o) {
  const Graph& g = model.graph();
  const Index n = g.num_nodes();
  Spectra3 sp;
  const auto t0 = Clock::now();
  detail::NodePatternCholesky& chol = plan.cholesky_for_shift_invert("lambda_2(L)");
  const ShiftedMatrix kd = shifted_matrix(model, Domain::Dual), kp = shifted_matrix(model, Domain::Primal);
  chol.factorize(kd.d, kd.w);
  const double factor_seconds = seconds_since(t0);
  const double primal_scale = chol.proportion(kp.d, kp.w);  // > 0 on regular graphs

  enum : std::size_t { kLambda2, kDual, kPrimal };
  std::vector<double> scales{1.0, 1.0};
  if (primal_scale > 0) scales.push_back(primal_scale);
  SolveBatch batch(chol, scales);
  std::optional<double> l2;
  double dual_value = kNaN, primal_value = kNaN;
  std::vector<double> seconds(scales.size(), 0.0);
  std::vector<std::exception_ptr> errors(scales.size());
  const auto start = Clock::now();
  auto body = [&](std::size_t p) {
    try {
      if (p == kLambda2)
        l2 = lambda2_shifted(n, kd.d[0], kd.w[0], batch.solver(p), o);
      else if (p == kDual)
        dual_value = shift_invert_lambda_min(model, Domain::Dual, kd, batch.solver(p), o);
      else
        primal_value = shift_invert_lambda_min(model, Domain::Primal, kp, batch.solver(p), o);
    } catch (...) {
      errors[p] = std::current_exception();
    }
    batch.leave(p);
    seconds[p] = seconds_since(start);
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t p = 1; p < scales.size(); ++p) threads.emplace_back(body, p);
  } catch (...) {  // no thread: the participants not started must not be waited for
    for (std::size_t p = threads.size() + 1; p < scales.size(); ++p) batch.leave(p);
    batch.leave(kLambda2);
    for (std::thread& t : threads) t.join();
    throw;
  }
  body(kLambda2);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  constexpr SpectralMethod si = SpectralMethod::ShiftInvert;
  sp.seconds_lambda2 = factor_seconds + seconds[kLambda2];
  sp.seconds_dual = seconds[kDual];
  sp.dual = Outcome{dual_value, si};
  if (!l2) {  // the shift was too large for an accurate lambda_2: the grounded Laplacian (a new factorization)
    const auto t = Clock::now();
    l2 = lambda2_grounded(g, chol, o);
    sp.seconds_lambda2 += seconds_since(t);
  }
  sp.lambda2 = {Outcome{*l2, si}};
  if (primal_scale > 0) {
    sp.primal = Outcome{primal_value, si};
    sp.seconds_primal = seconds[kPrimal];
  } else {
    const auto t = Clock::now();
    chol.factorize(kp.d, kp.w);
    sp.primal = Outcome{shift_invert_lambda_min(model, Domain::Primal, kp, direct_solve(chol), o), si};
    sp.seconds_primal = seconds_since(t);
  }
  return sp;
}

// lambda_max(A) and the rates depend on s and sigma only through their ratios: scaling every s_v and sigma_e by one
// power of two leaves D^-1/2 M D^-1/2 exactly as it is. A model whose standard deviations are all below 2^-60 or all
// above 2^60 is therefore scaled towards 1 before its spectra are computed, so that the
// eigensolvers' products of variances neither underflow nor overflow (a star with s = sigma = 1e-100 made Lanczos
// fail). Every other model is used as it is (nullopt), with its bits.
std::optional<Model> rescaled_for_spectra(const Model& m) {
  if (!m.unit_incidence() || m.given_precision()) return std::nullopt;  // used as given
  const auto& s = m.node_sd();
  const auto& sigma = m.edge_sd();
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const std::vector<double>* v : {&s, &sigma})
    for (double x : *v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  // Only the scale can be moved, not the ratios: the scaled values straddle 1 (the exponent is the mean of the
  // smallest's and the largest's), so the call on the scaled model returns here.
  if (!(lo > 0) || (hi >= std::ldexp(1.0, -60) && lo <= std::ldexp(1.0, 60))) return std::nullopt;
  int e_lo = 0, e_hi = 0;
  std::frexp(lo, &e_lo);
  std::frexp(hi, &e_hi);
  const int e = (e_lo + e_hi) / 2;
  if (m.is_homogeneous()) return Model(m.graph(), std::ldexp(m.s(), -e), std::ldexp(m.sigma(), -e));
  auto scale = [e](std::vector<double> v) {
    for (double& x : v) x = std::ldexp(x, -e);
    return v;
  };
  return Model(m.graph(), scale(s), scale(sigma));
}

}  // namespace

// ---- names, errors, constants -------------------------------------------------------------------------

const char* to_string(SpectralMethod m) noexcept {
  switch (m) {
    case SpectralMethod::Auto:
      return "auto";
    case SpectralMethod::Dense:
      return "dense";
    case SpectralMethod::ShiftInvert:
      return "shift-invert";
    case SpectralMethod::Lanczos:
      return "lanczos";
  }
  return "?";
}

SpectralMethod parse_spectral_method(const std::string& name) {
  for (SpectralMethod m :
       {SpectralMethod::Auto, SpectralMethod::Dense, SpectralMethod::ShiftInvert, SpectralMethod::Lanczos})
    if (name == to_string(m)) return m;
  throw std::invalid_argument("unknown spectral method '" + name +
                              "' (expected 'auto', 'dense', 'shift-invert' or 'lanczos')");
}

const char* to_string(EigensolverError::Status s) noexcept {
  switch (s) {
    case EigensolverError::Status::NotComputed:
      return "NotComputed";
    case EigensolverError::Status::NotConverging:
      return "NotConverging";
    case EigensolverError::Status::NumericalIssue:
      return "NumericalIssue";
  }
  return "?";
}

EigensolverError::EigensolverError(const std::string& what, Status status, SpectralMethod method, long restarts,
                                   long operations)
    : std::runtime_error(what), m_status(status), m_method(method), m_restarts(restarts), m_operations(operations) {}

Index dense_max_dimension() noexcept { return kDenseMaxDimension; }
double shift_invert_max_factor_nonzeros() noexcept { return kMaxFactorNonzeros; }
double shift_invert_max_factor_flops() noexcept { return kMaxFactorFlops; }

SpectralMethod choose_spectral_method(const Graph& g, Index dimension) {
  Plan plan(g);
  return plan.resolve(SpectralMethod::Auto, dimension);
}

// ---- lambda_2 -----------------------------------------------------------------------------------------

double algebraic_connectivity(const Graph& g, SpectralMethod method) {
  SpectralOptions o;
  o.method = method;
  return algebraic_connectivity(g, o);
}

double algebraic_connectivity(const Graph& g, const SpectralOptions& options) {
  check_options(options);
  if (g.num_nodes() == 1)
    throw std::invalid_argument(
        "algebraic_connectivity: a graph with a single node has no second Laplacian eigenvalue");
  if (g.num_components() > 1)
    throw std::invalid_argument("algebraic_connectivity: the graph has " + std::to_string(g.num_components()) +
                                " connected components, so lambda_2(L) = 0; use "
                                "algebraic_connectivity_per_component for the spectrum of each component");
  Plan plan(g);
  return lambda2_connected(g, plan, options).value;
}

std::vector<double> algebraic_connectivity_per_component(const Graph& g, SpectralMethod method) {
  SpectralOptions o;
  o.method = method;
  return algebraic_connectivity_per_component(g, o);
}

std::vector<double> algebraic_connectivity_per_component(const Graph& g, const SpectralOptions& options) {
  check_options(options);
  Plan plan(g);
  std::vector<double> out;
  for (const Outcome& r : lambda2_components(g, plan, options)) out.push_back(r.value);
  return out;
}

LaplacianEnds laplacian_spectrum_ends(const Graph& g, const SpectralOptions& options) {
  check_options(options);
  if (g.num_nodes() < 2 || g.num_components() != 1)
    throw std::invalid_argument("laplacian_spectrum_ends: the graph has " + std::to_string(g.num_nodes()) +
                                " node(s) and " + std::to_string(g.num_components()) +
                                " connected component(s); a connected graph of at least 2 nodes is needed");
  Plan plan(g);
  return laplacian_ends_connected(g, plan, options);
}

// ---- lambda_max(A) and rates ----------------------------------------------------------------------------

double lambda_max_A(const Model& model, Domain domain) { return lambda_max_A(model, domain, SpectralOptions{}); }

double lambda_max_A(const Model& model, Domain domain, const SpectralOptions& options) {
  check_options(options);
  if (domain == Domain::Dual && model.num_edges() == 0)
    throw std::invalid_argument("lambda_max_A: the dual of a graph without edges has no coordinates");
  if (const std::optional<Model> scaled = rescaled_for_spectra(model)) return lambda_max_A(*scaled, domain, options);
  Plan plan(model.graph());
  return lambda_max_from(scaled_lambda_min(model, domain, plan, options).value);
}

Rates convergence_rates(const Model& model) { return convergence_rates(model, SpectralOptions{}); }

Rates convergence_rates(const Model& model, const SpectralOptions& options) {
  check_options(options);
  if (const std::optional<Model> scaled = rescaled_for_spectra(model)) return convergence_rates(*scaled, options);
  const Graph& g = model.graph();
  Plan plan(g);
  Rates r;
  r.components = g.num_components();
  const Spectra3 sp = model.is_homogeneous() && g.num_edges() > 0 && g.num_components() == 1 &&
                              plan.resolve(options.method, g.num_nodes()) == SpectralMethod::ShiftInvert &&
                              plan.resolve(options.method, g.num_edges()) == SpectralMethod::ShiftInvert
                          ? batched_spectra(model, plan, options)
                          : sequential_spectra(model, plan, options);
  r.seconds_lambda2 = sp.seconds_lambda2;
  r.method_lambda2 = SpectralMethod::Dense;
  r.lambda_min_nonzero_L = kNaN;
  for (const Outcome& c : sp.lambda2) {
    r.lambda2_L_per_component.push_back(c.value);
    if (std::isnan(c.value)) continue;
    if (c.method != SpectralMethod::Dense) r.method_lambda2 = c.method;  // report the non-trivial method
    if (!(c.value >= r.lambda_min_nonzero_L)) r.lambda_min_nonzero_L = c.value;
  }
  r.lambda2_L = g.num_nodes() == 1 ? kNaN : g.num_components() > 1 ? 0.0 : sp.lambda2.front().value;

  // lambda_max(A) of each domain and its finite and asymptotic random-sweep rates [eqn:primalrate, eqn:dualrate].
  auto domain_rates = [&](Domain d, const Outcome& outcome, SpectralMethod& method, double& lambda_max, double& rate,
                          double& rate_asymptotic) {
    method = outcome.method;
    lambda_max = lambda_max_from(outcome.value);
    rate = random_sweep_rate(lambda_max, model.dimension(d));
    rate_asymptotic = random_sweep_rate_asymptotic(lambda_max);
  };
  r.seconds_primal = sp.seconds_primal;
  domain_rates(Domain::Primal, sp.primal, r.method_primal, r.lambda_max_A_primal, r.rate_primal,
               r.rate_primal_asymptotic);

  r.lambda_max_A_dual = r.rate_dual = r.rate_dual_asymptotic = kNaN;
  r.rate_dual_effective = r.rate_dual_effective_asymptotic = kNaN;
  if (sp.dual) {
    r.seconds_dual = sp.seconds_dual;
    domain_rates(Domain::Dual, *sp.dual, r.method_dual, r.lambda_max_A_dual, r.rate_dual, r.rate_dual_asymptotic);
    if (model.is_homogeneous() && g.has_cycles()) {
      // Prop. 5: x~ = B y~ sees only the cut space, where the largest eigenvalue of A is
      // s^2 (2 - lambda) / (sigma^2 + 2 s^2) with lambda the smallest non-zero eigenvalue of L.
      r.rate_dual_effective =
          prop5_effective_dual_rate(r.lambda_min_nonzero_L, model.s(), model.sigma(), g.num_edges());
      r.rate_dual_effective_asymptotic =
          prop5_effective_dual_rate_asymptotic(r.lambda_min_nonzero_L, model.s(), model.sigma());
    }
  }
  return r;
}

}  // namespace dualgibbs
