// Model::from_precision: a user's sparse precision matrix as edge factors (the factor-width-2 decomposition,
// docs/general-precision.md).
#include <dualgibbs/model/model.hpp>

#include <dualgibbs/core/number_text.hpp>

#include "model/parameter_check.hpp"

#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

namespace {

using ColMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

std::string entry_text(Index i, Index j) { return "(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

// Q without explicit zeros, checked (square, finite, positive diagonal) and symmetrized: pairs equal within the
// tolerance are averaged (kept as they are when equal), others are an error.
SparseMatrix symmetrized(const SparseMatrix& given, double tolerance) {
  if (given.rows() != given.cols())
    throw std::invalid_argument("Model::from_precision: the matrix is " + std::to_string(given.rows()) + " x " +
                                std::to_string(given.cols()) + ", not square");
  if (given.rows() < 1) throw std::invalid_argument("Model::from_precision: the matrix is empty");
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("Model::from_precision: symmetry tolerance " + number_text(tolerance) +
                                " must be finite and non-negative");
  SparseMatrix q = given;
  q.makeCompressed();
  for (Index i = 0; i < q.rows(); ++i)
    for (SparseMatrix::InnerIterator it(q, i); it; ++it)
      if (!std::isfinite(it.value()))
        throw std::invalid_argument("Model::from_precision: entry " + entry_text(i, it.col()) + " = " +
                                    number_text(it.value()) + " is not finite");
  q.prune([](Index, Index, double v) { return v != 0.0; });
  const SparseMatrix qt = q.transpose();
  for (Index i = 0; i < q.rows(); ++i) {
    SparseMatrix::InnerIterator a(q, i), b(qt, i);
    for (; a && b; ++a, ++b) {
      if (a.col() != b.col()) break;
      const double x = a.value(), y = b.value();
      if (x == y) continue;
      if (std::abs(x - y) > tolerance * std::max(std::abs(x), std::abs(y)))
        throw std::invalid_argument("Model::from_precision: the matrix is not symmetric: entry " +
                                    entry_text(i, a.col()) + " = " + number_text(x, 17) + " but " +
                                    entry_text(a.col(), i) + " = " + number_text(y, 17));
      a.valueRef() = 0.5 * x + 0.5 * y;
    }
    if (a || b) {
      const Index j = a ? a.col() : b.col();
      const bool in_q = a && (!b || a.col() < b.col());
      throw std::invalid_argument("Model::from_precision: the matrix is not symmetric: entry " +
                                  entry_text(in_q ? i : j, in_q ? j : i) + " is non-zero but its mirror " +
                                  entry_text(in_q ? j : i, in_q ? i : j) + " is zero");
    }
  }
  for (Index i = 0; i < q.rows(); ++i) {
    const double d = q.coeff(i, i);
    if (!(d > 0.0))
      throw std::invalid_argument("Model::from_precision: diagonal entry Q_" + std::to_string(i) + std::to_string(i) +
                                  " (row " + std::to_string(i) + ") = " + number_text(d) +
                                  " is not positive: a precision matrix has a positive diagonal");
  }
  return q;
}

// The first non-positive pivot of an LDL^T factorization of m, as a row of m (-1 if there is none): Eigen's
// SimplicialLDLT factors P m P^T with the AMD ordering P.
Index failing_pivot_row(const ColMatrix& m) {
  Eigen::SimplicialLDLT<ColMatrix> ldlt(m);
  const Eigen::VectorXd pivots = ldlt.info() == Eigen::Success ? Eigen::VectorXd(ldlt.vectorD()) : Eigen::VectorXd();
  const auto inverse = ldlt.permutationPinv();
  for (Index k = 0; k < pivots.size(); ++k)
    if (!(pivots[k] > 0.0)) return inverse.indices()[k];
  if (ldlt.info() != Eigen::Success) {  // a zero pivot stopped it: report the first row it could not reach
    const Eigen::VectorXd partial = ldlt.vectorD();
    for (Index k = 0; k < partial.size(); ++k)
      if (!(partial[k] > 0.0)) return inverse.indices()[k];
    return inverse.indices()[0];
  }
  return -1;
}

// M(Q): |Q_uu| on the diagonal, -|Q_uv| off it.
ColMatrix comparison_matrix(const SparseMatrix& q) {
  ColMatrix m = q;
  for (Index j = 0; j < m.outerSize(); ++j)
    for (ColMatrix::InnerIterator it(m, j); it; ++it)
      it.valueRef() = it.row() == it.col() ? std::abs(it.value()) : -std::abs(it.value());
  return m;
}

// d with every row's remainder Q_uu - sum_v |Q_uv| d_v / d_u positive, or an empty vector (the report then says
// why). d = 1 for a strictly diagonally dominant Q, else d = M(Q)^-1 1 (positive when M(Q) is a non-singular
// M-matrix, i.e. positive definite; Boman, Chen, Parekh and Toledo 2005).
Eigen::VectorXd scaling(const SparseMatrix& q, const PrecisionOptions& options, FactorWidthReport& report) {
  const Index n = q.rows();
  Eigen::VectorXd slack(n);
  for (Index u = 0; u < n; ++u) {
    double off = 0.0, diag = 0.0;
    for (SparseMatrix::InnerIterator it(q, u); it; ++it) (it.col() == u ? diag : off) += std::abs(it.value());
    slack[u] = diag - off;
  }
  report.diagonally_dominant = (slack.array() > 0.0).all();
  if (report.diagonally_dominant && !options.always_scale) return Eigen::VectorXd::Ones(n);
  const ColMatrix m = comparison_matrix(q);
  const Index bad = failing_pivot_row(m);
  if (bad >= 0) {
    report.failing_row = bad;
    report.reason = "the comparison matrix M(Q) is not positive definite (first failing pivot at row " +
                    std::to_string(bad) + "), so Q is not of factor width 2 and has no dual form";
    return {};
  }
  Eigen::SimplicialLDLT<ColMatrix> ldlt(m);
  const Eigen::VectorXd d = ldlt.solve(Eigen::VectorXd::Ones(n));
  for (Index u = 0; u < n; ++u)
    if (!(d[u] > 0.0) || !std::isfinite(d[u])) {
      report.failing_row = u;
      report.reason = "the scaling d = M(Q)^-1 1 is not finite and positive at row " + std::to_string(u) +
                      " (M(Q) is numerically singular), so no dual form was found";
      return {};
    }
  report.d_min = d.minCoeff();
  report.d_max = d.maxCoeff();
  return d;
}

}  // namespace

Model Model::primal_only(Graph graph, SparseMatrix q, FactorWidthReport report) {
  // Not factor width 2: the primal needs Q to be positive definite, which the H-matrix test did not show.
  const Index bad = failing_pivot_row(q);
  if (bad >= 0)
    throw std::invalid_argument(
        "Model::from_precision: the matrix is not positive definite: the Cholesky factorization fails at the pivot "
        "of row " +
        std::to_string(bad));
  report.factor_width_two = false;
  report.diagonally_dominant = false;
  report.d_min = report.d_max = std::numeric_limits<double>::quiet_NaN();
  Model model(std::move(graph), 1.0, 1.0);
  report.positive_couplings = 0;
  for (Index e = 0; e < model.num_edges(); ++e) {
    const Edge& ed = model.m_graph.edge(e);
    report.positive_couplings += q.coeff(ed.head, ed.tail) > 0.0;
  }
  model.m_s.clear();
  model.m_sigma.clear();
  model.m_s2.resize(0);
  model.m_sigma2.resize(0);
  model.m_homogeneous = false;
  model.m_given_q = std::move(q);
  model.m_report = std::move(report);
  return model;
}

Model Model::from_precision(const SparseMatrix& given, const PrecisionOptions& options) {
  SparseMatrix q = symmetrized(given, options.symmetry_tolerance);
  const Index n = static_cast<Index>(q.rows());
  std::vector<Edge> edges;
  for (Index u = 0; u < n; ++u)
    for (SparseMatrix::InnerIterator it(q, u); it; ++it)
      if (it.col() > u) edges.push_back({u, static_cast<Index>(it.col())});
  Graph graph(n, std::move(edges));

  FactorWidthReport report;
  report.given_precision = true;
  const Eigen::VectorXd d = scaling(q, options, report);
  if (d.size() == 0) return primal_only(std::move(graph), std::move(q), std::move(report));

  // The paper's Future Work (second item): each edge factor |q| (b_u x_u + b_v x_v)^2 with b_u b_v = sign(q), the rest
  // on the diagonal.
  const Index m = graph.num_edges();
  std::vector<double> s(static_cast<std::size_t>(n)), sigma(static_cast<std::size_t>(m));
  std::vector<double> head(static_cast<std::size_t>(m)), tail(static_cast<std::size_t>(m));
  std::vector<double> remainder(static_cast<std::size_t>(n));
  for (Index u = 0; u < n; ++u) remainder[u] = q.coeff(u, u);
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = graph.edge(e);
    const Index u = ed.head, v = ed.tail;
    const double value = q.coeff(u, v), w = std::abs(value);
    sigma[e] = 1.0 / std::sqrt(w);
    if (!detail::is_valid_standard_deviation(sigma[e]))
      throw std::invalid_argument("Model::from_precision: entry " + entry_text(u, v) + " = " + number_text(value) +
                                  " is too small or too large for an edge factor in double precision");
    head[e] = std::sqrt(d[v] / d[u]);
    tail[e] = (value > 0.0 ? 1.0 : -1.0) * std::sqrt(d[u] / d[v]);
    report.positive_couplings += value > 0.0;
    remainder[u] -= w * d[v] / d[u];
    remainder[v] -= w * d[u] / d[v];
  }
  for (Index u = 0; u < n; ++u) {
    s[u] = 1.0 / std::sqrt(remainder[u]);
    if (!(remainder[u] > 0.0) || !detail::is_valid_standard_deviation(s[u])) {
      report.failing_row = u;
      report.reason = "row " + std::to_string(u) + " keeps a node precision of " + number_text(remainder[u]) +
                      " after its edge factors (M(Q) is numerically singular there), so no dual form was found";
      return primal_only(std::move(graph), std::move(q), std::move(report));
    }
  }
  Model model(std::move(graph), std::move(s), std::move(sigma), std::move(head), std::move(tail));
  model.m_given_q = std::move(q);
  model.m_report = std::move(report);
  return model;
}

}  // namespace dualgibbs
