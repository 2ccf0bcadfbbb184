#include <dualgibbs/model/model.hpp>

#include <dualgibbs/core/number_text.hpp>

#include "model/parameter_check.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dualgibbs {

void check_standard_deviation(double sd, const std::string& what) {
  if (detail::is_valid_standard_deviation(sd)) return;
  if (!std::isfinite(sd) || !(sd > 0.0))
    throw std::invalid_argument("Model: " + what + " = " + number_text(sd) +
                                " must be a finite positive standard deviation");
  throw std::invalid_argument("Model: " + what + " = " + number_text(sd) +
                              " gives a variance that overflows or underflows double precision");
}

const char* to_string(Domain d) noexcept { return d == Domain::Primal ? "primal" : "dual"; }

Domain parse_domain(const std::string& name) {
  if (name == "primal") return Domain::Primal;
  if (name == "dual") return Domain::Dual;
  throw std::invalid_argument("unknown domain '" + name + "' (expected 'primal' or 'dual')");
}

Model::Model(Graph graph, double s, double sigma)
    : m_graph(std::move(graph)),
      m_s(static_cast<std::size_t>(m_graph.num_nodes()), s),
      m_sigma(static_cast<std::size_t>(m_graph.num_edges()), sigma) {
  check_standard_deviation(s, "s");
  check_standard_deviation(sigma, "sigma");
  validate_and_square();
  m_common_sigma = sigma;  // kept even when the graph has no edges
}

Model::Model(Graph graph, std::vector<double> s, std::vector<double> sigma)
    : m_graph(std::move(graph)), m_s(std::move(s)), m_sigma(std::move(sigma)) {
  check_sizes();
  validate_and_square();
}

Model::Model(Graph graph, std::vector<double> s, std::vector<double> sigma, std::vector<double> head_weight,
             std::vector<double> tail_weight)
    : m_graph(std::move(graph)),
      m_s(std::move(s)),
      m_sigma(std::move(sigma)),
      m_head_weight(std::move(head_weight)),
      m_tail_weight(std::move(tail_weight)) {
  check_sizes();
  check_weights();
  validate_and_square();
}

void Model::check_sizes() const {
  if (m_s.size() != static_cast<std::size_t>(m_graph.num_nodes()))
    throw std::invalid_argument("Model: " + std::to_string(m_s.size()) + " node standard deviations given for " +
                                std::to_string(m_graph.num_nodes()) + " nodes");
  if (m_sigma.size() != static_cast<std::size_t>(m_graph.num_edges()))
    throw std::invalid_argument("Model: " + std::to_string(m_sigma.size()) + " edge standard deviations given for " +
                                std::to_string(m_graph.num_edges()) + " edges");
}

void Model::check_weights() {
  const std::size_t m = static_cast<std::size_t>(m_graph.num_edges());
  if (m_head_weight.size() != m || m_tail_weight.size() != m)
    throw std::invalid_argument("Model: " + std::to_string(m_head_weight.size()) + " head and " +
                                std::to_string(m_tail_weight.size()) + " tail incidence weights given for " +
                                std::to_string(m) + " edges");
  bool unit = true;
  for (std::size_t e = 0; e < m; ++e) {
    for (const double b : {m_head_weight[e], m_tail_weight[e]})
      if (!std::isfinite(b) || b == 0.0 || !std::isfinite(b * b) || b * b == 0.0)
        throw std::invalid_argument("Model: incidence weight " + number_text(b) + " of edge " + std::to_string(e) +
                                    " must be finite and non-zero, with a finite non-zero square");
    unit = unit && m_head_weight[e] == 1.0 && m_tail_weight[e] == -1.0;
  }
  if (unit) {  // the thin membrane's incidence: keep the compact form
    m_head_weight.clear();
    m_tail_weight.clear();
  }
}

void Model::throw_no_dual(const char* who) const {
  throw std::invalid_argument(std::string(who) + ": the model has no dual domain: " + m_report.reason);
}

void Model::validate_and_square() {
  const Index n = m_graph.num_nodes(), m = m_graph.num_edges();
  m_s2.resize(n);
  m_sigma2.resize(m);
  // The message is built only on failure: no string per node on the valid path.
  for (Index v = 0; v < n; ++v) {
    if (!detail::is_valid_standard_deviation(m_s[v]))
      check_standard_deviation(m_s[v], "s_v of node " + std::to_string(v));
    m_s2[v] = m_s[v] * m_s[v];
  }
  for (Index e = 0; e < m; ++e) {
    if (!detail::is_valid_standard_deviation(m_sigma[e]))
      check_standard_deviation(m_sigma[e], "sigma_e of edge " + std::to_string(e));
    m_sigma2[e] = m_sigma[e] * m_sigma[e];
  }
  m_homogeneous = unit_incidence();
  for (Index v = 1; v < n && m_homogeneous; ++v) m_homogeneous = m_s[v] == m_s[0];
  for (Index e = 1; e < m && m_homogeneous; ++e) m_homogeneous = m_sigma[e] == m_sigma[0];
  m_common_sigma = m > 0 && m_homogeneous ? m_sigma[0] : std::numeric_limits<double>::quiet_NaN();
  // The diagonals of Q and R must stay finite (a node of huge degree with tiny sigma could overflow).
  if (!primal_diagonal().allFinite())
    throw std::invalid_argument("Model: the diagonal of the primal precision Q overflows double precision");
  if (!dual_diagonal().allFinite())
    throw std::invalid_argument("Model: the diagonal of the dual precision R overflows double precision");
}

double Model::s() const {
  if (!m_homogeneous)
    throw std::logic_error("Model::s(): the model is heterogeneous or has a weighted incidence; use node_sd()");
  return m_s[0];
}

double Model::sigma() const {
  if (!m_homogeneous)
    throw std::logic_error("Model::sigma(): the model is heterogeneous or has a weighted incidence; use edge_sd()");
  return m_common_sigma;
}

namespace {

// The matrices are assembled straight into compressed CSR arrays from the graph's incidence (no triplets:
// that would take 16 bytes per non-zero on top of the matrix, and a sort). Rows are written in order with
// sorted columns.
SparseMatrix empty_csr(Index rows, Index cols, std::int64_t nnz) {
  SparseMatrix M(rows, cols);
  M.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  return M;
}

// L or Q: diag[v] on the diagonal and offdiag[e] at (u, v) and (v, u) for every edge e = (u, v).
SparseMatrix node_matrix(const Graph& g, const Eigen::VectorXd& diag, const Eigen::VectorXd& offdiag) {
  const Index n = g.num_nodes();
  const auto& off = g.incidence_offsets();
  const auto& ie = g.incidence_edges();
  const auto& nb = g.incidence_neighbors();
  SparseMatrix M = empty_csr(n, n, static_cast<std::int64_t>(n) + 2 * static_cast<std::int64_t>(g.num_edges()));
  int* outer = M.outerIndexPtr();
  int* inner = M.innerIndexPtr();
  double* value = M.valuePtr();
  std::vector<std::pair<Index, double>> row;  // (column, value) of one row, sorted by column
  int p = 0;
  outer[0] = 0;
  for (Index v = 0; v < n; ++v) {
    row.clear();
    row.emplace_back(v, diag[v]);
    for (Index q = off[v]; q < off[v + 1]; ++q) row.emplace_back(nb[q], offdiag[ie[q]]);
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [col, val] : row) {
      inner[p] = col;
      value[p++] = val;
    }
    outer[v + 1] = p;
  }
  return M;
}

}  // namespace

SparseMatrix Model::incidence() const {
  // Column-oriented data in a row-major matrix: row v holds the edges at v, already in increasing edge id.
  require_dual("Model::incidence");
  const Index n = num_nodes();
  const auto& off = m_graph.incidence_offsets();
  SparseMatrix B = empty_csr(n, num_edges(), 2 * static_cast<std::int64_t>(num_edges()));
  std::copy(off.begin(), off.end(), B.outerIndexPtr());
  std::copy(m_graph.incidence_edges().begin(), m_graph.incidence_edges().end(), B.innerIndexPtr());
  const auto& sg = m_graph.incidence_signs();
  const auto& ie = m_graph.incidence_edges();
  for (std::size_t q = 0; q < sg.size(); ++q) B.valuePtr()[q] = sg[q] > 0 ? head_weight(ie[q]) : tail_weight(ie[q]);
  return B;
}

SparseMatrix Model::laplacian() const {
  Eigen::VectorXd deg(num_nodes());
  for (Index v = 0; v < num_nodes(); ++v) deg[v] = m_graph.degree(v);
  return node_matrix(m_graph, deg, -Eigen::VectorXd::Ones(num_edges()));
}

SparseMatrix Model::primal_precision() const {
  if (given_precision()) return m_given_q;
  // [eqn:QPNH] Q = D_s^-1 + B D_sigma^-1 B^T: Q_uv = B[u,e] B[v,e] / sigma_e^2 (-1/sigma_e^2 for a unit incidence;
  // the products with +-1 are exact, so both forms give the same bits there).
  Eigen::VectorXd offdiag(num_edges());
  for (Index e = 0; e < num_edges(); ++e) offdiag[e] = head_weight(e) * tail_weight(e) * (1.0 / m_sigma2[e]);
  return node_matrix(m_graph, primal_diagonal(), offdiag);
}

Eigen::VectorXd Model::primal_diagonal() const {
  if (given_precision()) return m_given_q.diagonal();
  Eigen::VectorXd d = m_s2.cwiseInverse();
  for (Index e = 0; e < num_edges(); ++e) {
    const double w = 1.0 / m_sigma2[e];
    const double bu = head_weight(e), bv = tail_weight(e);
    d[m_graph.edge(e).head] += bu * bu * w;
    d[m_graph.edge(e).tail] += bv * bv * w;
  }
  return d;
}

Eigen::VectorXd Model::dual_diagonal() const {
  require_dual("Model::dual_diagonal");
  Eigen::VectorXd d(num_edges());
  for (Index e = 0; e < num_edges(); ++e) {
    const double bu = head_weight(e), bv = tail_weight(e);
    d[e] = m_sigma2[e] + bu * bu * m_s2[m_graph.edge(e).head] + bv * bv * m_s2[m_graph.edge(e).tail];
  }
  return d;
}

std::int64_t Model::dual_precision_nonzeros() const noexcept {
  // Row e = (u, v) holds e itself and the other d_u - 1 + d_v - 1 edges at its ends.
  return m_graph.sum_squared_degrees() - static_cast<std::int64_t>(num_edges());
}

SparseMatrix Model::dual_precision() const {
  // [eqn:QPNHDual] R = D_sigma + B^T D_s B: R_ee = sigma_e^2 + s_u^2 + s_v^2 and, for f != e sharing node k,
  // R_ef = s_k^2 B[k,e] B[k,f]. Row e = (u, v) merges the edge lists of u and v (each sorted by edge id,
  // disjoint but for e itself: the graph has no parallel edges).
  require_dual("Model::dual_precision");
  const std::int64_t nnz = dual_precision_nonzeros();
  if (nnz > std::numeric_limits<int>::max())
    throw std::invalid_argument("Model::dual_precision: R would have " + std::to_string(nnz) +
                                " non-zeros, over the 32-bit index; use dual_operator()");
  const Index m = num_edges();
  const auto& off = m_graph.incidence_offsets();
  const auto& ie = m_graph.incidence_edges();
  const auto& is = m_graph.incidence_signs();
  // B[k, f] of incidence entry a (edge f = ie[a] at node k).
  auto weight = [&](Index a) { return is[a] > 0 ? head_weight(ie[a]) : tail_weight(ie[a]); };
  SparseMatrix R = empty_csr(m, m, nnz);
  int* outer = R.outerIndexPtr();
  int* inner = R.innerIndexPtr();
  double* value = R.valuePtr();
  int p = 0;
  outer[0] = 0;
  for (Index e = 0; e < m; ++e) {
    const Index u = m_graph.edge(e).head, v = m_graph.edge(e).tail;
    Index a = off[u], b = off[v];
    const Index a_end = off[u + 1], b_end = off[v + 1];
    const double su2 = m_s2[u], sv2 = m_s2[v];
    const double bu = head_weight(e), bv = tail_weight(e);  // B[u,e], B[v,e]: +1 and -1 for a unit incidence
    while (a < a_end || b < b_end) {
      const Index fa = a < a_end ? ie[a] : std::numeric_limits<Index>::max();
      const Index fb = b < b_end ? ie[b] : std::numeric_limits<Index>::max();
      if (fa == e && fb == e) {
        inner[p] = e;
        value[p++] = m_sigma2[e] + bu * bu * su2 + bv * bv * sv2;
        ++a;
        ++b;
      } else if (fa < fb) {
        inner[p] = fa;
        value[p++] = su2 * bu * weight(a++);
      } else {
        inner[p] = fb;
        value[p++] = sv2 * bv * weight(b++);
      }
    }
    outer[e + 1] = p;
  }
  assert(p == nnz);
  return R;
}

void Model::set_observations(Eigen::VectorXd z) {
  if (given_precision())
    throw std::invalid_argument(
        "Model: a model given by its precision matrix takes a canonical vector h (Q mu = h), not observations: its "
        "split into node and edge factors is not unique");
  const Index n = num_nodes();
  if (z.size() != n)
    throw std::invalid_argument("Model: " + std::to_string(z.size()) + " observations given for " + std::to_string(n) +
                                " nodes");
  Eigen::VectorXd h(n);
  for (Index v = 0; v < n; ++v) {
    if (!std::isfinite(z[v]))
      throw std::invalid_argument("Model: observation z_v of node " + std::to_string(v) + " = " + number_text(z[v]) +
                                  " is not finite");
    h[v] = z[v] / m_s2[v];  // h = D_s^-1 z
    if (!std::isfinite(h[v]))
      throw std::invalid_argument("Model: observation z_v of node " + std::to_string(v) + " = " + number_text(z[v]) +
                                  " divided by s_v^2 = " + number_text(m_s2[v]) + " overflows double precision");
  }
  m_z = std::move(z);
  m_h = std::move(h);
}

void Model::set_canonical_vector(Eigen::VectorXd h) {
  const Index n = num_nodes();
  if (h.size() != n)
    throw std::invalid_argument("Model: canonical vector of length " + std::to_string(h.size()) + " given for " +
                                std::to_string(n) + " nodes");
  for (Index v = 0; v < n; ++v)
    if (!std::isfinite(h[v]))
      throw std::invalid_argument("Model: canonical vector entry h_v of node " + std::to_string(v) + " = " +
                                  number_text(h[v]) + " is not finite");
  m_z.resize(0);
  m_h = std::move(h);
}

void Model::clear_mean() noexcept {
  m_z.resize(0);
  m_h.resize(0);
}

Model Model::without_mean() const {
  Model copy = *this;
  copy.clear_mean();
  return copy;
}

DualPrecisionOperator Model::dual_operator() const {
  require_dual("Model::dual_operator");
  return DualPrecisionOperator(*this);
}

std::string Model::summary() const {
  std::ostringstream os;
  os << m_graph.summary() << "; ";
  if (given_precision()) {
    os << "given precision, " << (has_dual() ? "factor width 2" : "no dual (not factor width 2)");
    if (has_dual() && !m_report.diagonally_dominant)
      os << ", scaled by d in [" << m_report.d_min << ", " << m_report.d_max << "]";
  } else if (m_homogeneous) {
    os << "homogeneous, s = " << s() << ", sigma = " << sigma();
  } else {
    const auto [s_lo, s_hi] = std::minmax_element(m_s.begin(), m_s.end());
    os << "heterogeneous, s_v in [" << *s_lo << ", " << *s_hi << "]";
    if (num_edges() > 0) {
      const auto [g_lo, g_hi] = std::minmax_element(m_sigma.begin(), m_sigma.end());
      os << ", sigma_e in [" << *g_lo << ", " << *g_hi << "]";
    }
  }
  if (has_mean()) os << (m_z.size() > 0 ? "; with observations" : "; with a canonical vector h");
  return os.str();
}

void DualPrecisionOperator::perform_op(const double* x_in, double* y_out) const {
  const Model& md = *m_model;
  const Graph& g = md.graph();
  const Index n = g.num_nodes(), m = g.num_edges();
  thread_local std::vector<double> node;  // D_s B y, kept per thread so repeated calls do not allocate
  node.assign(static_cast<std::size_t>(n), 0.0);
  const auto& edges = g.edges();
  const bool unit = md.unit_incidence();  // decided once: the loops below run in every eigensolver iteration
  for (Index e = 0; e < m; ++e) {
    if (unit) {
      node[edges[e].head] += x_in[e];
      node[edges[e].tail] -= x_in[e];
    } else {  // B[u,e] x_e with the weights of the general form
      node[edges[e].head] += md.head_weight(e) * x_in[e];
      node[edges[e].tail] += md.tail_weight(e) * x_in[e];
    }
  }
  const Eigen::VectorXd& s2 = md.node_variances();
  for (Index v = 0; v < n; ++v) node[v] *= s2[v];
  const Eigen::VectorXd& sig2 = md.edge_variances();
  for (Index e = 0; e < m; ++e)
    y_out[e] =
        unit ? sig2[e] * x_in[e] + node[edges[e].head] - node[edges[e].tail]
             : sig2[e] * x_in[e] + md.head_weight(e) * node[edges[e].head] + md.tail_weight(e) * node[edges[e].tail];
}

Eigen::VectorXd DualPrecisionOperator::apply(const Eigen::VectorXd& y) const {
  if (y.size() != rows())
    throw std::invalid_argument("DualPrecisionOperator: vector of length " + std::to_string(y.size()) + " for " +
                                std::to_string(rows()) + " edges");
  Eigen::VectorXd out(rows());
  perform_op(y.data(), out.data());
  return out;
}

}  // namespace dualgibbs
