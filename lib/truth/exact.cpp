#include <dualgibbs/truth/exact.hpp>

#include "core/blas_threads.hpp"
#include "truth/cholmod_factor.hpp"
#include "truth/selected_inversion.hpp"

#include <dualgibbs/core/random.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace dualgibbs {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CHOLMOD and the checks read the compressed arrays: `compressed` (model.hpp) makes a copy where needed.

}  // namespace

std::string blas_library() { return detail::blas_library(); }

Ordering parse_ordering(const std::string& name) {
  if (name == "amd") return Ordering::Amd;
  if (name == "metis") return Ordering::Metis;
  if (name == "nesdis") return Ordering::Nesdis;
  if (name == "natural") return Ordering::Natural;
  if (name == "auto") return Ordering::Auto;
  throw std::invalid_argument("unknown ordering '" + name + "' (expected auto, amd, metis, nesdis or natural)");
}

const char* to_string(Ordering o) noexcept {
  switch (o) {
    case Ordering::Amd:
      return "amd";
    case Ordering::Metis:
      return "metis";
    case Ordering::Nesdis:
      return "nesdis";
    case Ordering::Natural:
      return "natural";
    case Ordering::Auto:
      return "auto";
  }
  return "?";
}

struct CholeskyFactor::Impl {
  explicit Impl(Ordering ordering) : factor(ordering) {}
  detail::CholmodFactor factor;
  mutable FactorStats stats;  // the wrapper's, plus the time of the last selected inversion

  // factorize() on a compressed matrix already checked for symmetry and finite entries.
  void factorize_checked(const SparseMatrix& m) {
    factor.factorize(m);
    const double analyze_seconds = stats.analyze_seconds;
    stats = factor.stats();
    stats.analyze_seconds = analyze_seconds;
  }

  const detail::CholmodFactor& ready(const char* what) const {
    if (!factor.factorized())
      throw std::logic_error(std::string("CholeskyFactor::") + what + ": no factor (call factorize() first)");
    return factor;
  }
};

CholeskyFactor::CholeskyFactor(Ordering ordering) : m_impl(std::make_unique<Impl>(ordering)) {}

CholeskyFactor::CholeskyFactor(const SparseMatrix& spd, Ordering ordering) : CholeskyFactor(ordering) {
  SparseMatrix copy;
  const SparseMatrix& m = compressed(spd, copy);
  detail::check_symmetric(m, "CholeskyFactor");  // before the analysis: a bad matrix is rejected at once
  analyze(m);
  m_impl->factorize_checked(m);
}

CholeskyFactor::~CholeskyFactor() = default;
CholeskyFactor::CholeskyFactor(CholeskyFactor&&) noexcept = default;
CholeskyFactor& CholeskyFactor::operator=(CholeskyFactor&&) noexcept = default;

void CholeskyFactor::analyze(const SparseMatrix& pattern) {
  if (pattern.rows() != pattern.cols())
    throw std::invalid_argument("CholeskyFactor: matrix is " + std::to_string(pattern.rows()) + " x " +
                                std::to_string(pattern.cols()) + ", not square");
  if (pattern.rows() == 0) throw std::invalid_argument("CholeskyFactor: matrix is empty");
  SparseMatrix copy;
  m_impl->factor.analyze(compressed(pattern, copy));
  m_impl->stats = m_impl->factor.stats();
}

void CholeskyFactor::factorize(const SparseMatrix& spd) {
  SparseMatrix copy;
  const SparseMatrix& m = compressed(spd, copy);
  detail::check_symmetric(m, "CholeskyFactor");
  m_impl->factorize_checked(m);
}

void CholeskyFactor::plan_selected_inversion(bool planned) noexcept { m_impl->factor.plan_selected_inversion(planned); }

void CholeskyFactor::set_blas_threads(int threads) {
  if (threads < 0)
    throw std::invalid_argument("CholeskyFactor::set_blas_threads: " + std::to_string(threads) + " threads");
  m_impl->factor.set_blas_threads(threads);
}

bool CholeskyFactor::analyzed() const noexcept { return m_impl->factor.analyzed(); }
bool CholeskyFactor::factorized() const noexcept { return m_impl->factor.factorized(); }
Index CholeskyFactor::size() const noexcept { return m_impl->factor.size(); }
const FactorStats& CholeskyFactor::stats() const noexcept { return m_impl->stats; }

double CholeskyFactor::log_determinant() const { return m_impl->ready("log_determinant").log_determinant(); }

Eigen::VectorXd CholeskyFactor::solve(const Eigen::VectorXd& b) const {
  const detail::CholmodFactor& f = m_impl->ready("solve");
  if (b.size() != f.size())
    throw std::invalid_argument("CholeskyFactor::solve: right-hand side has length " + std::to_string(b.size()) +
                                ", expected " + std::to_string(f.size()));
  Eigen::MatrixXd bm = b;
  return f.solve(CHOLMOD_A, bm).col(0);
}

Eigen::MatrixXd CholeskyFactor::solve(const Eigen::MatrixXd& b) const {
  const detail::CholmodFactor& f = m_impl->ready("solve");
  if (b.rows() != f.size())
    throw std::invalid_argument("CholeskyFactor::solve: right-hand side has " + std::to_string(b.rows()) +
                                " rows, expected " + std::to_string(f.size()));
  if (b.cols() == 0) return Eigen::MatrixXd(b.rows(), 0);
  return f.solve(CHOLMOD_A, b);
}

Eigen::MatrixXd CholeskyFactor::sample(std::size_t count, std::uint64_t seed) const {
  const detail::CholmodFactor& f = m_impl->ready("sample");
  Eigen::MatrixXd z(f.size(), static_cast<Eigen::Index>(count));
  if (count == 0) return z;
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::ExactDraws);
  for (Eigen::Index k = 0; k < z.size(); ++k) z.data()[k] = standard_normal(rng);
  // P M P^T = L L^T, so x = P^T L^-T z has covariance P^T L^-T L^-1 P = M^-1.
  return f.solve(CHOLMOD_Pt, f.solve(CHOLMOD_Lt, z));
}

Eigen::VectorXd CholeskyFactor::marginal_variances() const {
  const detail::CholmodFactor& f = m_impl->ready("marginal_variances");
  const auto t0 = Clock::now();
  const detail::SupernodalFactor v = f.view();
  const std::vector<double> z = detail::selected_inverse(v);
  const Eigen::VectorXd d = detail::selected_inverse_diagonal(v, z);
  const std::int64_t* perm = f.permutation();
  m_impl->stats.selected_inversion_seconds = seconds_since(t0);
  Eigen::VectorXd out(d.size());
  for (Eigen::Index k = 0; k < d.size(); ++k) out[perm[k]] = d[k];  // row k of P M P^T is row Perm[k] of M
  return out;
}

SparseMatrix CholeskyFactor::selected_inverse(const SparseMatrix& pattern) const {
  const detail::CholmodFactor& f = m_impl->ready("selected_inverse");
  const Index n = f.size();
  if (pattern.rows() != n || pattern.cols() != n)
    throw std::invalid_argument("CholeskyFactor::selected_inverse: pattern is " + std::to_string(pattern.rows()) +
                                " x " + std::to_string(pattern.cols()) + ", expected " + std::to_string(n) + " x " +
                                std::to_string(n));
  const auto t0 = Clock::now();
  const detail::SupernodalFactor v = f.view();
  const std::vector<double> z = detail::selected_inverse(v);
  const std::int64_t* perm = f.permutation();
  std::vector<std::int64_t> iperm(static_cast<std::size_t>(n)), owner(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) iperm[perm[k]] = k;
  for (std::int64_t J = 0; J < v.nsuper; ++J)
    for (std::int64_t c = v.super[J]; c < v.super[J + 1]; ++c) owner[c] = J;
  SparseMatrix out = pattern;
  out.makeCompressed();
  for (Eigen::Index r = 0; r < out.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(out, r); it; ++it) {
      const std::int64_t a = iperm[it.row()], b = iperm[it.col()];
      const std::int64_t row = std::max(a, b), col = std::min(a, b);
      const std::int64_t K = owner[col], k1 = v.super[K], k2 = v.super[K + 1];
      const std::int64_t* rows = v.s + v.pi[K];
      const std::int64_t nrows = v.pi[K + 1] - v.pi[K];
      std::int64_t p = row - k1;
      if (row >= k2) {
        p = std::lower_bound(rows + (k2 - k1), rows + nrows, row) - rows;
        if (p == nrows || rows[p] != row)
          throw std::invalid_argument("CholeskyFactor::selected_inverse: entry (" + std::to_string(it.row()) + ", " +
                                      std::to_string(it.col()) + ") is outside the pattern of the factor");
      }
      it.valueRef() = z[static_cast<std::size_t>(v.px[K] + (col - k1) * nrows + p)];
    }
  m_impl->stats.selected_inversion_seconds = seconds_since(t0);
  return out;
}

Eigen::MatrixXd CholeskyFactor::inverse() const {
  const Index n = m_impl->ready("inverse").size();
  if (n > kMaxDenseDimension)
    throw std::invalid_argument("CholeskyFactor::inverse: dimension " + std::to_string(n) +
                                " exceeds the dense limit " + std::to_string(kMaxDenseDimension));
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  Eigen::MatrixXd inv = solve(identity);
  return (0.5 * (inv + inv.transpose())).eval();
}

// ---- model-level ground truth -------------------------------------------------------------------

namespace {

void check_dense(Index dim, const char* what, const char* name) {
  if (dim > kMaxDenseDimension)
    throw std::invalid_argument(std::string(what) + ": " + name + " = " + std::to_string(dim) +
                                " exceeds the dense limit " + std::to_string(kMaxDenseDimension) +
                                " (use marginal_variances for large graphs)");
}

void check_has_edges(const Model& m, const char* what) {
  if (m.num_edges() == 0)
    throw std::invalid_argument(std::string(what) + ": the graph has no edges, the dual domain is empty");
}

// A factor of `m` for a selected inversion: its memory is checked with the inverse's before the numeric
// factorization (CholeskyFactor::plan_selected_inversion).
CholeskyFactor factor_to_invert(const SparseMatrix& matrix, Ordering ordering) {
  SparseMatrix copy;
  const SparseMatrix& m = compressed(matrix, copy);
  detail::check_symmetric(m, "CholeskyFactor");  // before the analysis, as the factorizing constructor does
  CholeskyFactor f(ordering);
  f.plan_selected_inversion();
  f.analyze(m);
  f.factorize(m);
  return f;
}

}  // namespace

Eigen::MatrixXd covariance_primal(const Model& model) {
  check_dense(model.num_nodes(), "covariance_primal", "|V|");
  return CholeskyFactor(model.primal_precision()).inverse();  // [eqn:QPNH]
}

Eigen::MatrixXd covariance_dual(const Model& model) {
  check_has_edges(model, "covariance_dual");
  check_dense(model.num_edges(), "covariance_dual", "|E|");
  return CholeskyFactor(model.dual_precision()).inverse();  // [eqn:QPNHDual]
}

Eigen::MatrixXd covariance_dual_nodes(const Model& model) {
  const Index n = model.num_nodes();
  check_dense(n, "covariance_dual_nodes", "|V|");
  if (model.num_edges() == 0) return Eigen::MatrixXd::Zero(n, n);
  check_dense(model.num_edges(), "covariance_dual_nodes", "|E|");
  const SparseMatrix b = model.incidence();
  const Eigen::MatrixXd x = CholeskyFactor(model.dual_precision()).solve(Eigen::MatrixXd(b.transpose()));
  const Eigen::MatrixXd c = b * x;  // B R^-1 B^T [eqn:XfromY]
  return (0.5 * (c + c.transpose())).eval();
}

Eigen::MatrixXd covariance_primal_edges(const Model& model) {
  check_has_edges(model, "covariance_primal_edges");
  check_dense(model.num_edges(), "covariance_primal_edges", "|E|");
  check_dense(model.num_nodes(), "covariance_primal_edges", "|V|");
  const SparseMatrix b = model.incidence();
  const Eigen::MatrixXd x = CholeskyFactor(model.primal_precision()).solve(Eigen::MatrixXd(b));
  const Eigen::MatrixXd c = b.transpose() * x;  // B^T Q^-1 B [eqn:YfromX]
  return (0.5 * (c + c.transpose())).eval();
}

Eigen::VectorXd marginal_variances(const Model& model, Domain domain, Ordering ordering) {
  if (domain == Domain::Dual) {
    check_has_edges(model, "marginal_variances");
    return factor_to_invert(model.dual_precision(), ordering).marginal_variances();
  }
  return factor_to_invert(model.primal_precision(), ordering).marginal_variances();
}

Eigen::VectorXd marginal_variances_primal_edges(const Model& model, Ordering ordering) {
  const SparseMatrix q = model.primal_precision();
  const SparseMatrix z = factor_to_invert(q, ordering).selected_inverse(q);
  const Index n = model.num_nodes();
  Eigen::VectorXd diag(n);
  for (Index v = 0; v < n; ++v) diag[v] = z.coeff(v, v);
  Eigen::VectorXd out(model.num_edges());
  for (Index e = 0; e < model.num_edges(); ++e) {
    // Var(b_u X_u + b_v X_v) = b_u^2 Z_uu + b_v^2 Z_vv + 2 b_u b_v Z_uv (Z_uu + Z_vv - 2 Z_uv for a unit incidence,
    // with the same bits: the products with +-1 are exact).
    const Edge& ed = model.graph().edge(e);
    const double bu = model.head_weight(e), bv = model.tail_weight(e);
    out[e] = bu * bu * diag[ed.head] + bv * bv * diag[ed.tail] + 2 * bu * bv * z.coeff(ed.head, ed.tail);
  }
  return out;
}

Eigen::VectorXd marginal_variances_dual_from_primal(const Model& model, const SparseMatrix& primal_inverse,
                                                    Ordering ordering) {
  const Index n = model.num_nodes(), m = model.num_edges();
  if (primal_inverse.rows() != n || primal_inverse.cols() != n)
    throw std::invalid_argument("marginal_variances_dual_from_primal: the selected inverse is " +
                                std::to_string(primal_inverse.rows()) + " x " + std::to_string(primal_inverse.cols()) +
                                ", expected " + std::to_string(n) + " x " + std::to_string(n));
  // Rounding of Z (relative to its entries) times this factor is the relative error of the result; above it,
  // factorize R instead.
  constexpr double kMaxAmplification = 1e3;
  const Eigen::VectorXd& sigma2 = model.edge_variances();
  Eigen::VectorXd out(m);
  bool accurate = true;
  for (Index e = 0; e < m && accurate; ++e) {
    const Edge& ed = model.graph().edge(e);
    const double zuu = primal_inverse.coeff(ed.head, ed.head), zvv = primal_inverse.coeff(ed.tail, ed.tail);
    const double zuv = primal_inverse.coeff(ed.head, ed.tail);
    const double bu = model.head_weight(e), bv = model.tail_weight(e);
    const double var_y = bu * bu * zuu + bv * bv * zvv + 2 * bu * bv * zuv;  // Var(Y_e) = (B^T Q^-1 B)_ee
    out[e] = (sigma2[e] - var_y) / sigma2[e] / sigma2[e];
    const double scale =
        (sigma2[e] + bu * bu * zuu + bv * bv * zvv + 2 * std::abs(bu * bv * zuv)) / sigma2[e] / sigma2[e];
    accurate = out[e] > 0 && std::isfinite(out[e]) && scale <= kMaxAmplification * out[e];
  }
  if (!accurate) return marginal_variances(model, Domain::Dual, ordering);
  return out;
}

Eigen::VectorXd marginal_variances_dual_nodes(const Model& model, Ordering ordering) {
  const Graph& g = model.graph();
  Eigen::VectorXd out = Eigen::VectorXd::Zero(model.num_nodes());
  if (model.num_edges() == 0) return out;
  const SparseMatrix r = model.dual_precision();
  const SparseMatrix z = factor_to_invert(r, ordering).selected_inverse(r);
  const auto& off = g.incidence_offsets();
  const auto& edges = g.incidence_edges();
  const auto& signs = g.incidence_signs();
  // B_ve of incidence entry a (edge edges[a] at its node): +-1, or the weights of the general form.
  auto weight = [&](Index a) { return signs[a] > 0 ? model.head_weight(edges[a]) : model.tail_weight(edges[a]); };
  for (Index v = 0; v < model.num_nodes(); ++v) {  // Var(x~_v) = sum_{e,f at v} B_ve B_vf Cov(y~_e, y~_f)
    double sum = 0;
    for (Index a = off[v]; a < off[v + 1]; ++a)
      for (Index b = off[v]; b < off[v + 1]; ++b) sum += weight(a) * weight(b) * z.coeff(edges[a], edges[b]);
    out[v] = sum;
  }
  return out;
}

Entropy entropy(const Model& model) {
  return entropy(model, CholeskyFactor(model.primal_precision()).log_determinant());
}

Entropy entropy(const Model& model, double logdet_Q) {
  const double log_2pie = std::log(2 * std::acos(-1.0) * std::exp(1.0));
  const Index n = model.num_nodes(), m = model.num_edges();
  Entropy h;
  h.logdet_Q = logdet_Q;
  // H(X) = |V|/2 ln(2 pi e) + 1/2 ln det Q^-1; Hadamard: prod 1/Q_vv <= det Q^-1 <= prod s_v^2 (appendix B).
  h.primal = 0.5 * (n * log_2pie - logdet_Q);
  const Eigen::VectorXd qd = model.primal_diagonal();
  for (Index v = 0; v < n; ++v) h.primal_lower += 0.5 * (log_2pie - std::log(qd[v]));
  if (!model.has_dual()) {  // no D_s, no R: only the primal entropy and its Hadamard bound
    const double nan = std::numeric_limits<double>::quiet_NaN();
    h.primal_upper = h.logdet_R = h.dual = h.dual_lower = h.dual_upper = nan;
    return h;
  }
  for (Index v = 0; v < n; ++v) h.primal_upper += 0.5 * (log_2pie + std::log(model.node_variances()[v]));
  // det R = det D_sigma det D_s det Q (Sylvester: det(I + A B) = det(I + B A)), so R is not factorized.
  double logdet_ds = 0, logdet_dsigma = 0;
  for (Index v = 0; v < n; ++v) logdet_ds += std::log(model.node_variances()[v]);
  for (Index e = 0; e < m; ++e) logdet_dsigma += std::log(model.edge_variances()[e]);
  if (m > 0) h.logdet_R = logdet_dsigma + logdet_ds + logdet_Q;
  h.dual = 0.5 * (m * log_2pie - h.logdet_R);
  const Eigen::VectorXd rd = model.dual_diagonal();
  for (Index e = 0; e < m; ++e) {
    h.dual_lower += 0.5 * (log_2pie - std::log(rd[e]));  // [eq:detinequality]
    h.dual_upper += 0.5 * (log_2pie - std::log(model.edge_variances()[e]));
  }
  return h;
}

}  // namespace dualgibbs
