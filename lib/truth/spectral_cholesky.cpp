#include "truth/spectral_cholesky.hpp"

#include "core/blas_threads.hpp"
#include "truth/cholmod_factor.hpp"

#include <dualgibbs/truth/spectral.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace dualgibbs::detail {

namespace {
// Two value sets closer than this (relative, entrywise) after scaling count as the same matrix. The shifted
// matrices are computed as differences such as D_s^-1 - tau D whose leading digits cancel (tau sits 1e-3 below
// the bound), so the same matrix reached by two formulas agrees only to about 1e-13; 1e-11 accepts that and
// nothing else (distinct parameter sets differ in the leading digits).
constexpr double kSameMatrix = 1e-11;
}  // namespace

struct NodePatternCholesky::Impl {
  // One OpenBLAS thread for the factor's whole life: on shared cores OpenBLAS's spinning threads make the
  // supernodal factorization slower, not faster (docs/exact.md, docs/spectral.md). Set once, not per call:
  // switching the thread count around every solve costs system time of its own.
  ScopedBlasThreads one_blas_thread{1};
  CholmodFactor factor{Ordering::Amd, 0};  // AMD only: METIS costs seconds on 10^6 nodes for ~20% less fill
  SparseMatrix k;                          // K, full symmetric storage (CSR)
  std::vector<int> diag_pos;               // value index of K_vv
  std::vector<int> upper_pos, lower_pos;   // value indices of K_uv and K_vu of edge e
  std::vector<Edge> edges;                 // copy of the graph's edges (the graph may not outlive us)
  Eigen::VectorXd d, w;                    // the values of the current factor
  const Model* weights = nullptr;          // the incidence weights of the current factor (nullptr: +1/-1)
  double scale = 1;                        // K of the last factorize() = scale * (the factorized K)
  bool analyzed = false;
  bool factorized = false;
};

NodePatternCholesky::NodePatternCholesky(const Graph& g) : m_impl(std::make_unique<Impl>()) {
  Impl& im = *m_impl;
  const Index n = g.num_nodes(), m = g.num_edges();
  im.edges = g.edges();
  // Row v: the diagonal and every neighbour, columns increasing.
  std::vector<int> count(static_cast<std::size_t>(n), 1);
  for (const Edge& e : im.edges) {
    ++count[e.head];
    ++count[e.tail];
  }
  const std::int64_t nnz = static_cast<std::int64_t>(n) + 2 * static_cast<std::int64_t>(m);
  assert(nnz <= std::numeric_limits<int>::max());  // Graph caps |V| + 2|E| at the Index range
  im.k.resize(n, n);
  im.k.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  int* outer = im.k.outerIndexPtr();
  int* inner = im.k.innerIndexPtr();
  outer[0] = 0;
  for (Index v = 0; v < n; ++v) outer[v + 1] = outer[v] + count[v];
  // Entries (row, col, slot): the diagonal as edge -1; sorted by row and column they give the CSR order.
  struct Entry {
    Index row, col, edge;
  };
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(nnz));
  for (Index v = 0; v < n; ++v) entries.push_back({v, v, -1});
  for (Index e = 0; e < m; ++e) {
    entries.push_back({im.edges[e].head, im.edges[e].tail, e});
    entries.push_back({im.edges[e].tail, im.edges[e].head, e});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  im.diag_pos.resize(static_cast<std::size_t>(n));
  im.upper_pos.resize(static_cast<std::size_t>(m));
  im.lower_pos.resize(static_cast<std::size_t>(m));
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const Entry& x = entries[p];
    inner[p] = x.col;
    if (x.edge < 0)
      im.diag_pos[x.row] = static_cast<int>(p);
    else if (x.row < x.col)
      im.upper_pos[x.edge] = static_cast<int>(p);
    else
      im.lower_pos[x.edge] = static_cast<int>(p);
  }
  std::fill(im.k.valuePtr(), im.k.valuePtr() + nnz, 0.0);
  try {
    im.factor.analyze(im.k);
    im.analyzed = true;
  } catch (const FactorizationError&) {
    im.analyzed = false;  // reported through analyzed(), as the methods' caps need
  }
}

NodePatternCholesky::~NodePatternCholesky() = default;

bool NodePatternCholesky::analyzed() const noexcept { return m_impl->analyzed; }
double NodePatternCholesky::factor_nonzeros() const noexcept {
  return m_impl->analyzed ? m_impl->factor.predicted_nonzeros() : std::numeric_limits<double>::infinity();
}
double NodePatternCholesky::factor_flops() const noexcept {
  return m_impl->analyzed ? m_impl->factor.predicted_flops() : std::numeric_limits<double>::infinity();
}
Index NodePatternCholesky::size() const noexcept { return static_cast<Index>(m_impl->k.rows()); }

namespace {
// alpha with (d, w) = alpha (d0, w0) entrywise to kSameMatrix, or 0 if there is none.
double proportion(const Eigen::VectorXd& d, const Eigen::VectorXd& w, const Eigen::VectorXd& d0,
                  const Eigen::VectorXd& w0) {
  if (d.size() != d0.size() || w.size() != w0.size()) return 0;
  const double num = d.dot(d0) + w.dot(w0), den = d0.squaredNorm() + w0.squaredNorm();
  if (!(den > 0)) return 0;
  const double alpha = num / den;
  if (!(alpha > 0) || !std::isfinite(alpha)) return 0;
  const auto close = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    for (Eigen::Index i = 0; i < a.size(); ++i)
      if (std::abs(a[i] - alpha * b[i]) > kSameMatrix * std::max(std::abs(a[i]), alpha * std::abs(b[i]))) return false;
    return true;
  };
  return close(d, d0) && close(w, w0) ? alpha : 0;
}
}  // namespace

bool NodePatternCholesky::factorize(const Eigen::VectorXd& d, const Eigen::VectorXd& w, const Model* weights) {
  if (weights && weights->unit_incidence()) weights = nullptr;
  Impl& im = *m_impl;
  const Index n = size(), m = static_cast<Index>(im.edges.size());
  assert(d.size() == n && w.size() == m);
  if (!im.analyzed)
    throw EigensolverError("shift-invert: CHOLMOD could not analyze the " + std::to_string(n) +
                               "-node pattern (factor too large); use the Lanczos method",
                           EigensolverError::Status::NumericalIssue, SpectralMethod::ShiftInvert, 0, 0);
  if (im.factorized && im.weights == weights) {
    const double alpha = dualgibbs::detail::proportion(d, w, im.d, im.w);
    if (alpha > 0) {  // the same matrix up to a factor: K^-1 = (factorized K)^-1 / alpha, no new factorization
      im.scale = alpha;
      return false;
    }
  }
  im.factorized = false;
  double* val = im.k.valuePtr();
  for (Index v = 0; v < n; ++v) val[im.diag_pos[v]] = d[v];
  for (Index e = 0; e < m; ++e) {
    if (weights) {
      const double bu = weights->head_weight(e), bv = weights->tail_weight(e);
      val[im.diag_pos[im.edges[e].head]] += bu * bu * w[e];
      val[im.diag_pos[im.edges[e].tail]] += bv * bv * w[e];
      val[im.upper_pos[e]] = val[im.lower_pos[e]] = bu * bv * w[e];
      continue;
    }
    val[im.diag_pos[im.edges[e].head]] += w[e];
    val[im.diag_pos[im.edges[e].tail]] += w[e];
    val[im.upper_pos[e]] = -w[e];
    val[im.lower_pos[e]] = -w[e];
  }
  try {
    im.factor.factorize(im.k, false);
  } catch (const std::exception& e) {  // NotPositiveDefinite, FactorizationError
    throw EigensolverError(std::string("shift-invert: the shifted ") + std::to_string(n) + " x " + std::to_string(n) +
                               " matrix could not be factorized: " + e.what(),
                           EigensolverError::Status::NumericalIssue, SpectralMethod::ShiftInvert, 0, 0);
  }
  im.d = d;
  im.w = w;
  im.weights = weights;
  im.scale = 1;
  im.factorized = true;
  return true;
}

void NodePatternCholesky::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
  assert(m_impl->factorized);
  m_impl->factor.solve(b, x);
  if (m_impl->scale != 1) x /= m_impl->scale;
}

double NodePatternCholesky::proportion(const Eigen::VectorXd& d, const Eigen::VectorXd& w, const Model* weights) const {
  if (weights && weights->unit_incidence()) weights = nullptr;
  return m_impl->factorized && m_impl->weights == weights ? dualgibbs::detail::proportion(d, w, m_impl->d, m_impl->w)
                                                          : 0.0;
}

void NodePatternCholesky::solve_factorized(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const {
  assert(m_impl->factorized);
  if (b.cols() == 1) {  // the workspace-reusing path
    Eigen::VectorXd xv;
    m_impl->factor.solve(Eigen::VectorXd(b.col(0)), xv);
    x = xv;
    return;
  }
  x = m_impl->factor.solve(CHOLMOD_A, b);
}

}  // namespace dualgibbs::detail
