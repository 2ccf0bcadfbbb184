#include "truth/spectral_cholesky.hpp"

#include "core/blas_threads.hpp"

#include <dualgibbs/truth/spectral.hpp>

#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>
#include <vector>

namespace dualgibbs::detail {

using ColMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

struct NodePatternCholesky::Impl {
  // One OpenBLAS thread for the factor's whole life: on shared cores OpenBLAS's spinning threads make the
  // supernodal factorization slower, not faster (docs/exact.md, docs/spectral.md). Set once, not per call:
  // switching the thread count around every solve costs system time of its own.
  ScopedBlasThreads one_blas_thread{1};
  ColMatrix lower;            // lower triangle of K, columns sorted, diagonal first
  std::vector<int> diag_pos;  // value index of K_vv
  std::vector<int> edge_pos;  // value index of the (max(u,v), min(u,v)) entry of edge e
  std::vector<Edge> edges;    // copy of the graph's edges (the graph may not outlive us)
  Eigen::CholmodSupernodalLLT<ColMatrix, Eigen::Lower> llt;
  bool analyzed = false;
  bool factorized = false;
  double lnz = std::numeric_limits<double>::infinity();
  double flops = std::numeric_limits<double>::infinity();
};

NodePatternCholesky::NodePatternCholesky(const Graph& g) : m_impl(std::make_unique<Impl>()) {
  Impl& im = *m_impl;
  const Index n = g.num_nodes(), m = g.num_edges();
  im.edges = g.edges();
  // Column j of the lower triangle: the diagonal, then every neighbour i > j in increasing order.
  std::vector<int> count(static_cast<std::size_t>(n), 1);
  for (const Edge& e : im.edges) ++count[std::min(e.head, e.tail)];
  const std::int64_t nnz = static_cast<std::int64_t>(n) + m;
  assert(nnz <= std::numeric_limits<int>::max());  // Graph caps |V| + 2|E| at the Index range
  im.lower.resize(n, n);
  im.lower.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  int* outer = im.lower.outerIndexPtr();
  int* inner = im.lower.innerIndexPtr();
  outer[0] = 0;
  for (Index j = 0; j < n; ++j) outer[j + 1] = outer[j] + count[j];
  std::vector<int> next(outer, outer + n);
  im.diag_pos.resize(static_cast<std::size_t>(n));
  for (Index j = 0; j < n; ++j) {
    im.diag_pos[j] = next[j];
    inner[next[j]++] = j;
  }
  // Edges sorted by (column, row) so that each column's rows come out increasing.
  std::vector<Index> order(static_cast<std::size_t>(m));
  for (Index e = 0; e < m; ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](Index a, Index b) {
    const Edge& x = im.edges[a];
    const Edge& y = im.edges[b];
    const Index cx = std::min(x.head, x.tail), cy = std::min(y.head, y.tail);
    return cx != cy ? cx < cy : std::max(x.head, x.tail) < std::max(y.head, y.tail);
  });
  im.edge_pos.resize(static_cast<std::size_t>(m));
  for (Index e : order) {
    const Index col = std::min(im.edges[e].head, im.edges[e].tail);
    im.edge_pos[e] = next[col];
    inner[next[col]++] = std::max(im.edges[e].head, im.edges[e].tail);
  }
  std::fill(im.lower.valuePtr(), im.lower.valuePtr() + nnz, 0.0);
  for (Index j = 0; j < n; ++j) im.lower.valuePtr()[im.diag_pos[j]] = 1.0;

  cholmod_common& c = im.llt.cholmod();
  c.nmethods = 1;  // AMD only: METIS costs seconds on 10^6 nodes for ~20% less fill
  c.method[0].ordering = CHOLMOD_AMD;
  c.postorder = 1;
  c.print = 0;  // failures are reported through analyzed(), not printed
  im.llt.analyzePattern(im.lower);
  im.analyzed = c.status >= CHOLMOD_OK;
  if (im.analyzed) {
    im.lnz = c.lnz;
    im.flops = c.fl;
  }
}

NodePatternCholesky::~NodePatternCholesky() = default;

bool NodePatternCholesky::analyzed() const noexcept { return m_impl->analyzed; }
double NodePatternCholesky::factor_nonzeros() const noexcept { return m_impl->lnz; }
double NodePatternCholesky::factor_flops() const noexcept { return m_impl->flops; }
Index NodePatternCholesky::size() const noexcept { return static_cast<Index>(m_impl->lower.rows()); }

void NodePatternCholesky::factorize(const Eigen::VectorXd& d, const Eigen::VectorXd& w) {
  Impl& im = *m_impl;
  const Index n = size(), m = static_cast<Index>(im.edges.size());
  assert(d.size() == n && w.size() == m);
  im.factorized = false;
  if (!im.analyzed)
    throw EigensolverError("shift-invert: CHOLMOD could not analyze the " + std::to_string(n) +
                               "-node pattern (factor too large); use the Lanczos method",
                           EigensolverError::Status::NumericalIssue, SpectralMethod::ShiftInvert, 0, 0);
  double* val = im.lower.valuePtr();
  for (Index v = 0; v < n; ++v) val[im.diag_pos[v]] = d[v];
  for (Index e = 0; e < m; ++e) {
    val[im.diag_pos[im.edges[e].head]] += w[e];
    val[im.diag_pos[im.edges[e].tail]] += w[e];
    val[im.edge_pos[e]] = -w[e];
  }
  im.llt.factorize(im.lower);
  // Eigen reports NumericalIssue unless CHOLMOD's `minor` reached n, which also catches the indefinite
  // matrices cholmod_factorize accepts with a true return value.
  if (im.llt.info() != Eigen::Success || im.llt.cholmod().status < CHOLMOD_OK)
    throw EigensolverError("shift-invert: CHOLMOD found the shifted " + std::to_string(n) + " x " + std::to_string(n) +
                               " matrix not positive definite (status " + std::to_string(im.llt.cholmod().status) + ")",
                           EigensolverError::Status::NumericalIssue, SpectralMethod::ShiftInvert, 0, 0);
  im.factorized = true;
}

void NodePatternCholesky::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
  assert(m_impl->factorized);
  x = m_impl->llt.solve(b);
}

}  // namespace dualgibbs::detail
