// The constructors of the shipped site kernels (their vectorized update loops are in kernels_simd.cpp).
#include <dualgibbs/sampling/kernels.hpp>

#include <dualgibbs/core/number_text.hpp>

#include <Eigen/Cholesky>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

// ---- CsrKernel -------------------------------------------------------------------------------------------

namespace {

std::string entry(Index i, Index j) { return "M(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

}  // namespace

CsrKernel::CsrKernel(const SparseMatrix& precision_in, SpdCheck check) {
  if (precision_in.rows() != precision_in.cols())
    throw std::invalid_argument("CsrKernel: the precision is " + std::to_string(precision_in.rows()) + " x " +
                                std::to_string(precision_in.cols()) + ", not square");
  if (precision_in.rows() < 1) throw std::invalid_argument("CsrKernel: the precision is empty (0 x 0)");
  SparseMatrix copy;
  const SparseMatrix& M = compressed(precision_in, copy);
  m_n = static_cast<Index>(M.rows());
  const auto n = static_cast<std::size_t>(m_n);
  m_diag.assign(n, 0.0);
  std::vector<char> has_diag(n, 0);

  // Pass 1: finite values, diagonal present and positive.
  for (Index i = 0; i < m_n; ++i) {
    for (SparseMatrix::InnerIterator it(M, i); it; ++it) {
      const Index j = static_cast<Index>(it.col());
      if (!std::isfinite(it.value()))
        throw std::invalid_argument("CsrKernel: " + entry(i, j) + " = " + number_text(it.value(), 17) +
                                    " is not finite");
      if (j == i) {
        m_diag[static_cast<std::size_t>(i)] = it.value();
        has_diag[static_cast<std::size_t>(i)] = 1;
      }
    }
    if (!has_diag[static_cast<std::size_t>(i)])
      throw std::invalid_argument("CsrKernel: diagonal entry " + entry(i, i) +
                                  " is missing (zero): the precision is not positive definite");
    if (!(m_diag[static_cast<std::size_t>(i)] > 0.0))
      throw std::invalid_argument("CsrKernel: diagonal entry " + entry(i, i) + " = " +
                                  number_text(m_diag[static_cast<std::size_t>(i)], 17) +
                                  " is not positive: the precision is not positive definite");
  }

  // Pass 2: symmetry and positive 2x2 principal minors; build the scaled off-diagonal CSR.
  m_offsets.assign(n + 1, 0);
  m_cols.reserve(static_cast<std::size_t>(M.nonZeros()));
  m_coef.reserve(static_cast<std::size_t>(M.nonZeros()));
  for (Index i = 0; i < m_n; ++i) {
    const double dii = m_diag[static_cast<std::size_t>(i)];
    for (SparseMatrix::InnerIterator it(M, i); it; ++it) {
      const Index j = static_cast<Index>(it.col());
      if (j == i) continue;
      const double a = it.value(), b = M.coeff(j, i);
      if (std::abs(a - b) > 1e-12 * std::max(std::abs(a), std::abs(b)))
        throw std::invalid_argument("CsrKernel: " + entry(i, j) + " = " + number_text(a, 17) + " but " + entry(j, i) +
                                    " = " + number_text(b, 17) + ": the precision must be symmetric");
      if (a == 0.0) continue;
      const double djj = m_diag[static_cast<std::size_t>(j)];
      // |M_ij| < sqrt(M_ii M_jj), in a form that cannot overflow (M_ij^2 is infinite for |M_ij| > 1e154, which
      // valid models reach: Q of s = 1e-150 has entries of 1e300).
      if (!(std::abs(a) < std::sqrt(dii) * std::sqrt(djj)))
        throw std::invalid_argument(
            "CsrKernel: " + entry(i, j) + " = " + number_text(a, 17) + " with diagonal " + number_text(dii, 17) +
            " and " + number_text(djj, 17) +
            ": a 2x2 principal minor is not positive, so the precision is not positive definite");
      m_cols.push_back(j);
      m_coef.push_back(-a / dii);
    }
    m_offsets[static_cast<std::size_t>(i) + 1] = static_cast<Index>(m_cols.size());
  }
  m_sd.resize(n);
  for (std::size_t i = 0; i < n; ++i) m_sd[i] = 1.0 / std::sqrt(m_diag[i]);
  find_compact_layout();

  // Optional factorization: the only complete test of positive definiteness.
  const bool dense = check == SpdCheck::Auto && m_n <= kDenseCheckMaxSize;
  if (dense) {
    const Eigen::MatrixXd D = Eigen::MatrixXd(M);
    Eigen::LLT<Eigen::MatrixXd> llt(D);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("CsrKernel: the precision (" + std::to_string(m_n) + " x " + std::to_string(m_n) +
                                  ") is not positive definite (dense Cholesky factorization failed)");
  } else if (check == SpdCheck::Cholesky) {
    Eigen::SparseMatrix<double, Eigen::ColMajor, int> C(M);
    Eigen::SimplicialLLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int>, Eigen::Lower, Eigen::AMDOrdering<int>> llt(
        C);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("CsrKernel: the precision (" + std::to_string(m_n) + " x " + std::to_string(m_n) +
                                  ") is not positive definite (sparse Cholesky factorization failed)");
  }
}

void CsrKernel::find_compact_layout() {
  // Exact equality only: a coefficient or sd that differs in the last bit keeps the general loop, so the compact
  // loops multiply by the very numbers the general one reads (same bits).
  m_common_coef = m_coef.empty() ? 0.0 : m_coef.front();
  m_uniform_coef = std::all_of(m_coef.begin(), m_coef.end(), [&](double a) { return a == m_common_coef; });
  m_uniform_sd = std::all_of(m_sd.begin(), m_sd.end(), [&](double v) { return v == m_sd.front(); });
  const Index d = m_offsets[1] - m_offsets[0];
  bool regular = true;
  for (std::size_t i = 0; i < m_offsets.size() && regular; ++i)
    regular = static_cast<std::size_t>(m_offsets[i]) == i * static_cast<std::size_t>(d);
  m_row_length = regular ? d : -1;
}

CsrKernel::CsrKernel(const SparseMatrix& precision, const Eigen::VectorXd& rhs, SpdCheck check)
    : CsrKernel(precision, check) {
  if (rhs.size() != m_n)
    throw std::invalid_argument("CsrKernel: right-hand side of length " + std::to_string(rhs.size()) + " for " +
                                std::to_string(m_n) + " coordinates");
  m_shift.resize(static_cast<std::size_t>(m_n));
  for (Index i = 0; i < m_n; ++i) {
    if (!std::isfinite(rhs[i]))
      throw std::invalid_argument("CsrKernel: right-hand side entry " + std::to_string(i) + " = " +
                                  number_text(rhs[i], 17) + " is not finite");
    m_shift[static_cast<std::size_t>(i)] = rhs[i] / m_diag[static_cast<std::size_t>(i)];
  }
}

// ---- DualIncidenceKernel ---------------------------------------------------------------------------------

DualIncidenceKernel::DualIncidenceKernel(const Model& model) : m_num_nodes(model.num_nodes()) {
  const Index m = model.num_edges();
  if (m < 1) throw std::invalid_argument("DualIncidenceKernel: the model has no edges, so the dual domain is empty");
  model.require_dual("DualIncidenceKernel");
  const Eigen::VectorXd& s2 = model.node_variances();
  const Eigen::VectorXd& sig2 = model.edge_variances();
  m_edges.resize(static_cast<std::size_t>(m));
  bool unit_weights = true;  // every |b| = 1, with alpha and beta non-zero: the signed unit incidence's record
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = model.graph().edge(e);
    EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    k.head = ed.head;
    k.tail = ed.tail;
    if (model.unit_incidence()) {
      const double r = sig2[e] + s2[ed.head] + s2[ed.tail];  // R_ee [eqn:QPNHDual]
      k.alpha = s2[ed.head] / r;
      k.beta = s2[ed.tail] / r;
      k.sd = 1.0 / std::sqrt(r);
      continue;
    }
    const double bu = model.head_weight(e), bv = model.tail_weight(e);
    const double su = bu * bu * s2[ed.head], sv = bv * bv * s2[ed.tail];
    const double r = sig2[e] + su + sv;  // R_ee = sigma_e^2 + b_u^2 s_u^2 + b_v^2 s_v^2 [eqn:QPNHDual]
    k.alpha = bu * s2[ed.head] / r;
    k.beta = -bv * s2[ed.tail] / r;
    k.sd = 1.0 / std::sqrt(r);
    unit_weights = unit_weights && std::fabs(bu) == 1.0 && std::fabs(bv) == 1.0 && k.alpha != 0.0 && k.beta != 0.0;
  }
  if (!model.unit_incidence() && unit_weights) {
    m_signed = true;
    return;
  }
  if (!model.unit_incidence()) {
    m_weighted.resize(static_cast<std::size_t>(m));
    for (Index e = 0; e < m; ++e) {
      const Edge& ed = model.graph().edge(e);
      const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
      const double bu = model.head_weight(e), bv = model.tail_weight(e);
      const double su = bu * bu * s2[ed.head], sv = bv * bv * s2[ed.tail];
      const double r = sig2[e] + su + sv;
      m_weighted[static_cast<std::size_t>(e)] = {ed.head, ed.tail, k.alpha, k.beta, (su + sv) / r, k.sd, bu, bv};
    }
    return;
  }
  const EdgeCoef& first = m_edges.front();
  const bool uniform = std::all_of(m_edges.begin(), m_edges.end(), [&](const EdgeCoef& k) {
    return k.alpha == first.alpha && k.beta == first.beta && k.sd == first.sd;
  });
  if (uniform) {
    m_ends.resize(m_edges.size());
    for (std::size_t e = 0; e < m_edges.size(); ++e) m_ends[e] = {m_edges[e].head, m_edges[e].tail};
  }
}

DualIncidenceKernel::DualIncidenceKernel(const DualIncidenceKernel& whole, const std::vector<Index>& edges,
                                         const std::vector<Index>& nodes)
    : m_num_nodes(static_cast<Index>(nodes.size())), m_signed(whole.m_signed) {
  const std::string where = "DualIncidenceKernel (a part of a kernel): ";
  const auto increasing = [](const std::vector<Index>& ids, Index bound) {
    for (std::size_t t = 0; t < ids.size(); ++t)
      if (ids[t] < 0 || ids[t] >= bound || (t > 0 && ids[t] <= ids[t - 1])) return false;
    return true;
  };
  if (edges.empty() || !increasing(edges, whole.dimension()))
    throw std::invalid_argument(where + "the edges must be increasing ids of the whole kernel's " +
                                std::to_string(whole.dimension()) + " edges, at least one");
  if (!increasing(nodes, whole.m_num_nodes))
    throw std::invalid_argument(where + "the nodes must be increasing ids of the whole kernel's " +
                                std::to_string(whole.m_num_nodes) + " nodes");
  const auto local = [&](Index v, Index e) {
    const auto it = std::lower_bound(nodes.begin(), nodes.end(), v);
    if (it == nodes.end() || *it != v)
      throw std::invalid_argument(where + "node " + std::to_string(v) + " of edge " + std::to_string(e) +
                                  " is not among the part's nodes");
    return static_cast<Index>(it - nodes.begin());
  };
  m_edges.resize(edges.size());
  if (!whole.m_weighted.empty()) m_weighted.resize(edges.size());
  if (!whole.m_ends.empty()) m_ends.resize(edges.size());
  for (std::size_t t = 0; t < edges.size(); ++t) {
    const auto e = static_cast<std::size_t>(edges[t]);
    EdgeCoef k = whole.m_edges[e];
    k.head = local(k.head, edges[t]);
    k.tail = local(k.tail, edges[t]);
    m_edges[t] = k;
    if (!m_weighted.empty()) {
      m_weighted[t] = whole.m_weighted[e];
      m_weighted[t].head = k.head;
      m_weighted[t].tail = k.tail;
    }
    if (!m_ends.empty()) m_ends[t] = {k.head, k.tail};
  }
}

}  // namespace dualgibbs
