#include <dualgibbs/truth/exact.hpp>

#include "truth/cholmod_handle.hpp"
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

// Rejects what CHOLMOD would silently misread: it sees only the upper triangle, so an asymmetric matrix
// would be factorized as a different (symmetric) one.
void validate_symmetric(const SparseMatrix& m) {
  if (m.rows() != m.cols())
    throw std::invalid_argument("CholeskyFactor: matrix is " + std::to_string(m.rows()) + " x " +
                                std::to_string(m.cols()) + ", not square");
  if (m.rows() == 0) throw std::invalid_argument("CholeskyFactor: matrix is empty");
  for (Eigen::Index k = 0; k < m.nonZeros(); ++k)
    if (!std::isfinite(m.valuePtr()[k])) throw std::invalid_argument("CholeskyFactor: matrix has a non-finite entry");
  const SparseMatrix t = m.transpose();
  for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
    SparseMatrix::InnerIterator a(m, r), b(t, r);
    while (a || b) {
      double va = 0, vb = 0;
      Eigen::Index col;
      if (a && (!b || a.col() <= b.col())) {
        col = a.col();
        va = a.value();
        if (b && b.col() == col) {
          vb = b.value();
          ++b;
        }
        ++a;
      } else {
        col = b.col();
        vb = b.value();
        ++b;
      }
      if (std::abs(va - vb) > 8 * std::numeric_limits<double>::epsilon() * std::max(std::abs(va), std::abs(vb)))
        throw std::invalid_argument("CholeskyFactor: matrix is not symmetric: entry (" + std::to_string(r) + ", " +
                                    std::to_string(col) + ") differs from its transpose");
    }
  }
}

// A factorization can run to the end on a matrix that is positive definite in exact arithmetic but numerically
// singular in double precision (Q = I/s^2 + L/sigma^2 with s/sigma = 1e150 has cond ~ 1e600): its last pivots are
// then rounding noise, and every result computed from the factor is wrong by orders of magnitude (measured: a
// marginal variance of 3e-286 where the truth is 6e298). The computed pivot d_k = L_kk^2 = M_kk - sum_j L_kj^2
// carries a rounding error of about n u M_kk (u the unit roundoff; (|L| |L^T|)_kk = M_kk for a Cholesky factor,
// Higham, Accuracy and Stability, Thm. 10.3). A pivot below kPivotDigits n u M_kk has fewer than 4 trustworthy
// digits: the factor is rejected as not (numerically) positive definite. On tori the resulting relative error of
// the marginal variances is about 0.15 n u M_kk / d_k (measured from 16 to 40000 nodes), so accepted factors give
// them to 5e-5 or better (measured).
constexpr double kPivotDigits = 1e4;

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

void check_pivots(const SparseMatrix& spd, const detail::SupernodalFactor& v, const std::int64_t* perm) {
  const double tol = kPivotDigits * static_cast<double>(v.n) * std::numeric_limits<double>::epsilon() / 2;
  for (std::int64_t J = 0; J < v.nsuper; ++J) {
    const std::int64_t k1 = v.super[J], nc = v.super[J + 1] - k1, nrows = v.pi[J + 1] - v.pi[J];
    const double* lb = v.x + v.px[J];
    for (std::int64_t k = 0; k < nc; ++k) {
      const double l = lb[k * nrows + k];
      const auto col = static_cast<Eigen::Index>(perm ? perm[k1 + k] : k1 + k);
      const double diag = spd.coeff(col, col);
      if (l * l <= tol * diag)
        throw NotPositiveDefinite(
            "CholeskyFactor: matrix is numerically singular (not positive definite in double precision): the pivot "
            "of column " + std::to_string(col) + " is " + short_number(l * l / diag) +
                " times its diagonal entry, below the rounding level " + short_number(tol) +
                " (condition number too large; for a model, s / sigma is too large for the graph)",
            static_cast<Index>(col));
    }
  }
}

}  // namespace

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
  detail::CholmodCommon common;  // declared first: destroyed after the factor
  detail::FactorPtr factor{nullptr, detail::FactorDeleter{nullptr}};
  FactorStats stats;
  Index n = 0;

  detail::SupernodalFactor view() const {
    const cholmod_factor* L = factor.get();
    detail::SupernodalFactor v;
    v.n = static_cast<std::int64_t>(L->n);
    v.nsuper = static_cast<std::int64_t>(L->nsuper);
    v.xsize = static_cast<std::int64_t>(L->xsize);
    v.super = static_cast<const std::int64_t*>(L->super);
    v.pi = static_cast<const std::int64_t*>(L->pi);
    v.px = static_cast<const std::int64_t*>(L->px);
    v.s = static_cast<const std::int64_t*>(L->s);
    v.x = static_cast<const double*>(L->x);
    return v;
  }

  // Solves with CHOLMOD's system `sys` (CHOLMOD_A, CHOLMOD_Lt, CHOLMOD_Pt, ...).
  Eigen::MatrixXd solve(int sys, const Eigen::MatrixXd& b) {
    cholmod_dense bv = detail::dense_view(b);
    detail::DensePtr x(cholmod_l_solve(sys, factor.get(), &bv, common.get()), detail::DenseDeleter{common.get()});
    common.check("solve");
    if (!x) throw FactorizationError("CHOLMOD solve: no result");
    Eigen::MatrixXd out(b.rows(), b.cols());
    const double* xs = static_cast<const double*>(x->x);
    for (Eigen::Index j = 0; j < b.cols(); ++j)
      std::copy(xs + j * static_cast<Eigen::Index>(x->d), xs + j * static_cast<Eigen::Index>(x->d) + b.rows(),
                out.col(j).data());
    return out;
  }
};

static_assert(sizeof(detail::CholmodInt) == sizeof(std::int64_t), "CHOLMOD long interface is 64-bit");

CholeskyFactor::CholeskyFactor(const SparseMatrix& spd, Ordering ordering) : m_impl(std::make_unique<Impl>()) {
  // CHOLMOD and the checks below read the compressed arrays: compress a copy if needed (Eigen's insert()
  // leaves a matrix uncompressed, with gaps in its arrays).
  SparseMatrix compressed;
  if (!spd.isCompressed()) {
    compressed = spd;
    compressed.makeCompressed();
  }
  const SparseMatrix& m = spd.isCompressed() ? spd : compressed;
  validate_symmetric(m);
  Impl& im = *m_impl;
  im.n = static_cast<Index>(m.rows());
  cholmod_common* c = im.common.get();
  detail::SymmetricView a(m);
  detail::set_ordering(c, ordering);

  auto t0 = Clock::now();
  im.factor = detail::FactorPtr(cholmod_l_analyze(a.get(), c), detail::FactorDeleter{c});
  im.common.check("analyze");
  if (!im.factor) throw FactorizationError("CHOLMOD analyze: no factor returned");
  im.stats.analyze_seconds = seconds_since(t0);
  im.stats.flops = c->fl;
  im.stats.nnz_L = c->lnz;

  t0 = Clock::now();
  {
    const detail::ScopedBlasThreads single_threaded(1);
    cholmod_l_factorize(a.get(), im.factor.get(), c);
  }
  im.stats.factorize_seconds = seconds_since(t0);
  cholmod_factor* L = im.factor.get();
  // cholmod_factorize returns TRUE on an indefinite matrix: the verdict is in status and L->minor.
  if (c->status == CHOLMOD_NOT_POSDEF || L->minor < L->n) {
    const auto step = static_cast<std::int64_t>(L->minor);
    const Index column = step < static_cast<std::int64_t>(L->n)
                             ? static_cast<Index>(static_cast<const std::int64_t*>(L->Perm)[step])
                             : -1;
    throw NotPositiveDefinite(
        "CholeskyFactor: matrix is not positive definite (the factorization broke down at "
        "column " +
            std::to_string(column) + ", elimination step " + std::to_string(step) + " of " + std::to_string(L->n) + ")",
        column);
  }
  im.common.check("factorize");
  if (!L->is_ll || !L->is_super) throw FactorizationError("CHOLMOD factorize: expected a supernodal LL^T factor");
  check_pivots(spd, im.view(), static_cast<const std::int64_t*>(L->Perm));
  im.stats.supernodes = static_cast<std::int64_t>(L->nsuper);
  im.stats.stored_L = static_cast<std::int64_t>(L->xsize);
  im.stats.ordering = detail::ordering_of(L);
}

CholeskyFactor::~CholeskyFactor() = default;
CholeskyFactor::CholeskyFactor(CholeskyFactor&&) noexcept = default;
CholeskyFactor& CholeskyFactor::operator=(CholeskyFactor&&) noexcept = default;

Index CholeskyFactor::size() const noexcept { return m_impl->n; }
const FactorStats& CholeskyFactor::stats() const noexcept { return m_impl->stats; }

double CholeskyFactor::log_determinant() const {
  const detail::SupernodalFactor v = m_impl->view();
  double sum = 0;
  for (std::int64_t J = 0; J < v.nsuper; ++J) {
    const std::int64_t nc = v.super[J + 1] - v.super[J], nrows = v.pi[J + 1] - v.pi[J];
    const double* lb = v.x + v.px[J];
    for (std::int64_t k = 0; k < nc; ++k) sum += std::log(lb[k * nrows + k]);
  }
  return 2 * sum;
}

Eigen::VectorXd CholeskyFactor::solve(const Eigen::VectorXd& b) const {
  if (b.size() != m_impl->n)
    throw std::invalid_argument("CholeskyFactor::solve: right-hand side has length " + std::to_string(b.size()) +
                                ", expected " + std::to_string(m_impl->n));
  Eigen::MatrixXd bm = b;
  return m_impl->solve(CHOLMOD_A, bm).col(0);
}

Eigen::MatrixXd CholeskyFactor::solve(const Eigen::MatrixXd& b) const {
  if (b.rows() != m_impl->n)
    throw std::invalid_argument("CholeskyFactor::solve: right-hand side has " + std::to_string(b.rows()) +
                                " rows, expected " + std::to_string(m_impl->n));
  if (b.cols() == 0) return Eigen::MatrixXd(b.rows(), 0);
  return m_impl->solve(CHOLMOD_A, b);
}

Eigen::MatrixXd CholeskyFactor::sample(std::size_t count, std::uint64_t seed) const {
  Eigen::MatrixXd z(m_impl->n, static_cast<Eigen::Index>(count));
  if (count == 0) return z;
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::ExactDraws);
  for (Eigen::Index k = 0; k < z.size(); ++k) z.data()[k] = standard_normal(rng);
  // P M P^T = L L^T, so x = P^T L^-T z has covariance P^T L^-T L^-1 P = M^-1.
  return m_impl->solve(CHOLMOD_Pt, m_impl->solve(CHOLMOD_Lt, z));
}

Eigen::VectorXd CholeskyFactor::marginal_variances() const {
  const detail::SupernodalFactor v = m_impl->view();
  const std::vector<double> z = detail::selected_inverse(v);
  const Eigen::VectorXd d = detail::selected_inverse_diagonal(v, z);
  const auto* perm = static_cast<const std::int64_t*>(m_impl->factor->Perm);
  Eigen::VectorXd out(d.size());
  for (Eigen::Index k = 0; k < d.size(); ++k) out[perm[k]] = d[k];  // row k of P M P^T is row Perm[k] of M
  return out;
}

SparseMatrix CholeskyFactor::selected_inverse(const SparseMatrix& pattern) const {
  const Index n = m_impl->n;
  if (pattern.rows() != n || pattern.cols() != n)
    throw std::invalid_argument("CholeskyFactor::selected_inverse: pattern is " + std::to_string(pattern.rows()) +
                                " x " + std::to_string(pattern.cols()) + ", expected " + std::to_string(n) + " x " +
                                std::to_string(n));
  const detail::SupernodalFactor v = m_impl->view();
  const std::vector<double> z = detail::selected_inverse(v);
  const auto* perm = static_cast<const std::int64_t*>(m_impl->factor->Perm);
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
  return out;
}

Eigen::MatrixXd CholeskyFactor::inverse() const {
  if (m_impl->n > kMaxDenseDimension)
    throw std::invalid_argument("CholeskyFactor::inverse: dimension " + std::to_string(m_impl->n) +
                                " exceeds the dense limit " + std::to_string(kMaxDenseDimension));
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(m_impl->n, m_impl->n);
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
    return CholeskyFactor(model.dual_precision(), ordering).marginal_variances();
  }
  return CholeskyFactor(model.primal_precision(), ordering).marginal_variances();
}

Eigen::VectorXd marginal_variances_primal_edges(const Model& model, Ordering ordering) {
  const SparseMatrix q = model.primal_precision();
  const SparseMatrix z = CholeskyFactor(q, ordering).selected_inverse(q);
  const Index n = model.num_nodes();
  Eigen::VectorXd diag(n);
  for (Index v = 0; v < n; ++v) diag[v] = z.coeff(v, v);
  Eigen::VectorXd out(model.num_edges());
  for (Index e = 0; e < model.num_edges(); ++e) {
    const Edge& ed = model.graph().edge(e);  // Var(X_u - X_v) = Z_uu + Z_vv - 2 Z_uv
    out[e] = diag[ed.head] + diag[ed.tail] - 2 * z.coeff(ed.head, ed.tail);
  }
  return out;
}

Eigen::VectorXd marginal_variances_dual_nodes(const Model& model, Ordering ordering) {
  const Graph& g = model.graph();
  Eigen::VectorXd out = Eigen::VectorXd::Zero(model.num_nodes());
  if (model.num_edges() == 0) return out;
  const SparseMatrix r = model.dual_precision();
  const SparseMatrix z = CholeskyFactor(r, ordering).selected_inverse(r);
  const auto& off = g.incidence_offsets();
  const auto& edges = g.incidence_edges();
  const auto& signs = g.incidence_signs();
  for (Index v = 0; v < model.num_nodes(); ++v) {  // Var(x~_v) = sum_{e,f at v} B_ve B_vf Cov(y~_e, y~_f)
    double sum = 0;
    for (Index a = off[v]; a < off[v + 1]; ++a)
      for (Index b = off[v]; b < off[v + 1]; ++b) sum += signs[a] * signs[b] * z.coeff(edges[a], edges[b]);
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
  for (Index v = 0; v < n; ++v) {
    h.primal_lower += 0.5 * (log_2pie - std::log(qd[v]));
    h.primal_upper += 0.5 * (log_2pie + std::log(model.node_variances()[v]));
  }
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
