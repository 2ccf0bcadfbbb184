#define BOOST_TEST_MODULE model
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;
namespace bdata = boost::unit_test::data;

namespace {

// ---- dense oracles, written from the definitions (paper Section II and V), not from the library ----------

Eigen::MatrixXd dense_incidence(const Graph& g) {
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(g.num_nodes(), g.num_edges());
  for (Index e = 0; e < g.num_edges(); ++e) {
    B(g.edges()[e].head, e) = 1.0;   // B[u, e] = +1 at the head
    B(g.edges()[e].tail, e) = -1.0;  // B[v, e] = -1 at the tail
  }
  return B;
}

struct DenseModel {
  Eigen::MatrixXd B, L, Q, R;
};

// L = B B^T, Q = D_s^-1 + B D_sigma^-1 B^T [eqn:QPNH], R = D_sigma + B^T D_s B [eqn:QPNHDual],
// with D_s = diag(s_v^2), D_sigma = diag(sigma_e^2): s and sigma are standard deviations.
DenseModel dense_model(const Graph& g, const std::vector<double>& s, const std::vector<double>& sigma) {
  DenseModel d;
  d.B = dense_incidence(g);
  Eigen::VectorXd s2(g.num_nodes()), sigma2(g.num_edges());
  for (Index v = 0; v < g.num_nodes(); ++v) s2[v] = s[v] * s[v];
  for (Index e = 0; e < g.num_edges(); ++e) sigma2[e] = sigma[e] * sigma[e];
  d.L = d.B * d.B.transpose();
  d.Q = Eigen::MatrixXd(s2.cwiseInverse().asDiagonal()) + d.B * sigma2.cwiseInverse().asDiagonal() * d.B.transpose();
  d.R = Eigen::MatrixXd(sigma2.asDiagonal()) + d.B.transpose() * s2.asDiagonal() * d.B;
  return d;
}

double max_abs_diff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return std::numeric_limits<double>::infinity();
  return a.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

double scale(const Eigen::MatrixXd& a) { return a.size() == 0 ? 1.0 : std::max(1.0, a.cwiseAbs().maxCoeff()); }

// The CSR promises of model.hpp: compressed row-major storage, sorted columns, every stored entry of the
// symmetric matrix present in both triangles (full symmetric storage), no entry outside the oracle's pattern.
void check_csr_symmetric(const SparseMatrix& M, const Eigen::MatrixXd& dense, const std::string& what) {
  BOOST_TEST(M.isCompressed(), what);
  for (Eigen::Index r = 0; r < M.outerSize(); ++r)
    for (int p = M.outerIndexPtr()[r] + 1; p < M.outerIndexPtr()[r + 1]; ++p)
      BOOST_TEST_REQUIRE(M.innerIndexPtr()[p - 1] < M.innerIndexPtr()[p], what << ": columns sorted in row " << r);
  const SparseMatrix Mt = SparseMatrix(M.transpose());
  BOOST_TEST(M.nonZeros() == Mt.nonZeros(), what);
  for (Eigen::Index r = 0; r < M.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(M, r); it; ++it) {
      BOOST_TEST_REQUIRE(Mt.coeff(it.row(), it.col()) == it.value(), what << ": symmetric storage at " << r);
      BOOST_TEST_REQUIRE(dense(it.row(), it.col()) != 0.0, what << ": stored entry outside the pattern");
    }
}

Eigen::Index dense_nonzeros(const Eigen::MatrixXd& M) { return (M.array() != 0.0).count(); }

// All matrices of one model against the dense oracle.
void check_against_dense(const Model& m, const std::vector<double>& s, const std::vector<double>& sigma) {
  const Graph& g = m.graph();
  const DenseModel d = dense_model(g, s, sigma);
  const double tol = 1e-13;

  const SparseMatrix B = m.incidence();
  BOOST_TEST(B.rows() == g.num_nodes());
  BOOST_TEST(B.cols() == g.num_edges());
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(B), d.B) == 0.0);  // integers: exact
  BOOST_TEST(B.nonZeros() == 2 * g.num_edges());

  const SparseMatrix L = m.laplacian();
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(L), d.L) == 0.0);
  check_csr_symmetric(L, d.L + Eigen::MatrixXd::Identity(g.num_nodes(), g.num_nodes()), "L");

  const SparseMatrix Q = m.primal_precision();
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(Q), d.Q) <= tol * scale(d.Q));
  check_csr_symmetric(Q, d.Q, "Q");
  BOOST_TEST(Q.nonZeros() == dense_nonzeros(d.Q));
  BOOST_TEST(Q.nonZeros() == g.num_nodes() + 2 * g.num_edges());
  BOOST_TEST((m.primal_diagonal() - d.Q.diagonal()).cwiseAbs().maxCoeff() <= tol * scale(d.Q));

  const SparseMatrix R = m.dual_precision();
  BOOST_TEST(R.rows() == g.num_edges());
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(R), d.R) <= tol * scale(d.R));
  check_csr_symmetric(R, d.R, "R");
  BOOST_TEST(R.nonZeros() == dense_nonzeros(d.R));
  BOOST_TEST(m.dual_precision_nonzeros() == dense_nonzeros(d.R));
  if (g.num_edges() > 0) BOOST_TEST((m.dual_diagonal() - d.R.diagonal()).cwiseAbs().maxCoeff() <= tol * scale(d.R));

  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(m.precision(Domain::Primal)), d.Q) <= tol * scale(d.Q));
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(m.precision(Domain::Dual)), d.R) <= tol * scale(d.R));

  // Q stays positive definite on any graph (isolated nodes and several components included).
  BOOST_TEST((Eigen::LLT<Eigen::MatrixXd>(d.Q).info() == Eigen::Success));
}

std::vector<double> constant(Index count, double x) { return std::vector<double>(static_cast<std::size_t>(count), x); }

}  // namespace

// ---- every family, homogeneous and heterogeneous --------------------------------------------------------

BOOST_AUTO_TEST_SUITE(matrices)

BOOST_DATA_TEST_CASE(homogeneous_matrices_match_dense_formulas, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const double s = 1.3, sigma = 0.4;
  const Model m(g, s, sigma);
  BOOST_TEST(m.is_homogeneous());
  check_against_dense(m, constant(g.num_nodes(), s), constant(g.num_edges(), sigma));
}

BOOST_DATA_TEST_CASE(heterogeneous_matrices_match_dense_formulas, bdata::make(dualgibbs::testing::family_names()),
                     name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const auto s = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_nodes()), 0.3, 3.0, 21);
  const auto sigma = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_edges()), 0.05, 2.0, 22);
  const Model m(g, s, sigma);
  BOOST_TEST(m.is_homogeneous() == (g.num_nodes() == 1));
  BOOST_TEST(m.node_sd() == s, boost::test_tools::per_element());
  BOOST_TEST(m.edge_sd() == sigma, boost::test_tools::per_element());
  for (Index v = 0; v < g.num_nodes(); ++v) BOOST_TEST(m.node_variances()[v] == s[v] * s[v]);
  for (Index e = 0; e < g.num_edges(); ++e) BOOST_TEST(m.edge_variances()[e] == sigma[e] * sigma[e]);
  check_against_dense(m, s, sigma);
}

// The paper's s and sigma are standard deviations: with s = 2 and sigma = 3 the diagonal of Q on a path's
// end node is 1/4 + 1/9, not 1/2 + 1/3.
BOOST_AUTO_TEST_CASE(parameters_are_standard_deviations) {
  const Model m(make_path(3), 2.0, 3.0);
  BOOST_TEST(m.primal_diagonal()[0] == 1.0 / 4 + 1.0 / 9, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(m.dual_diagonal()[0] == 9.0 + 4 + 4, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(m.s() == 2.0);
  BOOST_TEST(m.sigma() == 3.0);
}

// [eqn:QP2] the Laplacian does not depend on the orientation; flipping edge e negates column e of B and
// conjugates R by diag(+-1).
BOOST_DATA_TEST_CASE(laplacian_is_independent_of_orientation, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const auto flip = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_edges()), 0.0, 1.0, 5);
  std::vector<Edge> flipped = g.edges();
  Eigen::VectorXd sign = Eigen::VectorXd::Ones(g.num_edges());
  for (Index e = 0; e < g.num_edges(); ++e)
    if (flip[e] < 0.5) {
      std::swap(flipped[e].head, flipped[e].tail);
      sign[e] = -1.0;
    }
  const Graph h(g.num_nodes(), flipped);
  const auto s = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_nodes()), 0.3, 3.0, 6);
  const auto sigma = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_edges()), 0.05, 2.0, 7);
  const Model a(g, s, sigma), b(h, s, sigma);
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(a.laplacian()), Eigen::MatrixXd(b.laplacian())) == 0.0);
  BOOST_TEST(max_abs_diff(Eigen::MatrixXd(a.primal_precision()), Eigen::MatrixXd(b.primal_precision())) == 0.0);
  const Eigen::MatrixXd Ba(a.incidence()), Bb(b.incidence());
  BOOST_TEST(max_abs_diff(Ba * sign.asDiagonal(), Bb) == 0.0);
  const Eigen::MatrixXd Ra(a.dual_precision()), Rb(b.dual_precision());
  // Same entries up to the order of summation on the diagonal (sigma_e^2 + s_head^2 + s_tail^2).
  BOOST_TEST(max_abs_diff(sign.asDiagonal() * Ra * sign.asDiagonal(), Rb) <= 1e-15 * scale(Ra));
}

// R applied matrix-free equals R explicit (and the dense oracle) on random vectors.
BOOST_DATA_TEST_CASE(dual_operator_matches_explicit_R, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const auto s = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_nodes()), 0.3, 3.0, 31);
  const auto sigma = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_edges()), 0.05, 2.0, 32);
  const Model m(g, s, sigma);
  const SparseMatrix R = m.dual_precision();
  const Eigen::MatrixXd Rd = dense_model(g, s, sigma).R;
  const DualPrecisionOperator op = m.dual_operator();
  BOOST_TEST(op.rows() == g.num_edges());
  BOOST_TEST(op.cols() == g.num_edges());
  if (g.num_edges() == 0) return;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto y = dualgibbs::testing::random_values(static_cast<std::size_t>(g.num_edges()), -1.0, 1.0, seed);
    const Eigen::VectorXd yv = Eigen::Map<const Eigen::VectorXd>(y.data(), g.num_edges());
    const Eigen::VectorXd explicit_Ry = R * yv, dense_Ry = Rd * yv, free_Ry = op.apply(yv);
    const double sc = std::max(1.0, dense_Ry.size() ? dense_Ry.cwiseAbs().maxCoeff() : 0.0);
    BOOST_TEST((free_Ry - explicit_Ry).cwiseAbs().maxCoeff() <= 1e-13 * sc);
    BOOST_TEST((free_Ry - dense_Ry).cwiseAbs().maxCoeff() <= 1e-13 * sc);
    Eigen::VectorXd out = Eigen::VectorXd::Constant(g.num_edges(), std::nan(""));  // perform_op overwrites
    op.perform_op(yv.data(), out.data());
    BOOST_TEST((out - free_Ry).cwiseAbs().maxCoeff() == 0.0);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the paper's examples ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(paper_examples)

// Example 1: on a 2D torus Q_ii = 1/s^2 + 4/sigma^2, Q_ij = -1/sigma^2 for neighbours, 0 otherwise. The
// neighbours come from the coordinates here, not from the graph's edge list.
BOOST_AUTO_TEST_CASE(example1_torus_primal_precision) {
  const Index r = 5, c = 6;
  const double s = 1.0, sigma = 0.1;
  const Model m(make_torus(r, c), s, sigma);
  const Eigen::MatrixXd Q(m.primal_precision());
  auto id = [=](Index i, Index j) { return i * c + j; };
  for (Index i = 0; i < r; ++i)
    for (Index j = 0; j < c; ++j)
      for (Index k = 0; k < r; ++k)
        for (Index l = 0; l < c; ++l) {
          const bool same = i == k && j == l;
          const bool neighbour =
              (i == k && ((j + 1) % c == l || (l + 1) % c == j)) || (j == l && ((i + 1) % r == k || (k + 1) % r == i));
          const double expected = same ? 1 / (s * s) + 4 / (sigma * sigma) : neighbour ? -1 / (sigma * sigma) : 0.0;
          BOOST_TEST_REQUIRE(Q(id(i, j), id(k, l)) == expected, boost::test_tools::tolerance(1e-14));
        }
  BOOST_TEST(m.num_edges() == 2 * m.num_nodes());  // |E| = 2|V|
}

// Example 2 ([eqn:Star1], [eqn:Star2]): Q of a homogeneous star is an arrowhead matrix with first row
// (1/s^2 + |E|/sigma^2, -1/sigma^2, ..., -1/sigma^2) and diagonal (1/s^2 + |E|/sigma^2, 1/s^2 + 1/sigma^2, ...).
BOOST_AUTO_TEST_CASE(example2_star_arrowhead) {
  const Index n = 7;
  const double s = 0.7, sigma = 1.9;
  const Model m(make_star(n), s, sigma);
  const double E = n - 1;
  const Eigen::MatrixXd Q(m.primal_precision());
  const auto tol = boost::test_tools::tolerance(1e-14);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      double expected = 0.0;
      if (i == 0 && j == 0)
        expected = 1 / (s * s) + E / (sigma * sigma);
      else if (i == j)
        expected = 1 / (s * s) + 1 / (sigma * sigma);
      else if (i == 0 || j == 0)
        expected = -1 / (sigma * sigma);
      BOOST_TEST(Q(i, j) == expected, tol);
    }
}

// Example 3: on the torus every diagonal entry of R is sigma^2 + 2 s^2; an edge interacts with the 6 edges
// sharing one of its ends, so R has 7 non-zeros a row.
BOOST_AUTO_TEST_CASE(example3_torus_dual_diagonal) {
  const double s = 1.0, sigma = 0.1;
  const Model m(make_torus(4, 7), s, sigma);
  const SparseMatrix R = m.dual_precision();
  for (Index e = 0; e < m.num_edges(); ++e) {
    BOOST_TEST(R.coeff(e, e) == sigma * sigma + 2 * s * s, boost::test_tools::tolerance(1e-15));
    BOOST_TEST(R.outerIndexPtr()[e + 1] - R.outerIndexPtr()[e] == 7);
    BOOST_TEST(m.dual_diagonal()[e] == sigma * sigma + 2 * s * s, boost::test_tools::tolerance(1e-15));
  }
}

// Example 4: on the star R_ii = sigma^2 + 2 s^2 and, every edge sharing the centre (the head of each edge),
// R_ee' = s^2 for e != e' (the paper's exponent -s^2 sum_{e<e'} y_e y_e').
BOOST_AUTO_TEST_CASE(example4_star_dual_precision) {
  const Index n = 6;
  const double s = 1.5, sigma = 0.3;
  const Model m(make_star(n), s, sigma);
  const Eigen::MatrixXd R(m.dual_precision());
  for (Index e = 0; e < n - 1; ++e)
    for (Index f = 0; f < n - 1; ++f)
      BOOST_TEST(R(e, f) == (e == f ? sigma * sigma + 2 * s * s : s * s), boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the model's own queries ---------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(queries)

BOOST_AUTO_TEST_CASE(domain_names) {
  BOOST_TEST(std::string(to_string(Domain::Primal)) == "primal");
  BOOST_TEST(std::string(to_string(Domain::Dual)) == "dual");
  BOOST_TEST((parse_domain("primal") == Domain::Primal));
  BOOST_TEST((parse_domain("dual") == Domain::Dual));
  BOOST_CHECK_EXCEPTION(parse_domain("Dual "), std::invalid_argument, message_has({"unknown domain 'Dual '"}));
}

BOOST_AUTO_TEST_CASE(dimensions_and_homogeneity) {
  const Model m(make_torus(3, 4), 1.0, 0.5);
  BOOST_TEST(m.dimension(Domain::Primal) == 12);
  BOOST_TEST(m.dimension(Domain::Dual) == 24);
  BOOST_TEST(m.summary() == "graph with 12 nodes, 24 edges, degree 4..4, 1 component; homogeneous, s = 1, sigma = 0.5");
  std::vector<double> s(12, 1.0), sigma(24, 0.5);
  BOOST_TEST(Model(make_torus(3, 4), s, sigma).is_homogeneous());
  sigma[5] = 0.25;
  const Model h(make_torus(3, 4), s, sigma);
  BOOST_TEST(!h.is_homogeneous());
  BOOST_CHECK_THROW(h.s(), std::logic_error);
  BOOST_CHECK_THROW(h.sigma(), std::logic_error);
  BOOST_TEST(h.summary().find("heterogeneous, s_v in [1, 1], sigma_e in [0.25, 0.5]") != std::string::npos,
             h.summary());
}

BOOST_AUTO_TEST_CASE(graph_without_edges_is_a_valid_model) {
  const Model m(Graph(4, {}), 2.0, 0.5);
  BOOST_TEST(m.num_edges() == 0);
  BOOST_TEST(m.dual_precision().rows() == 0);
  BOOST_TEST(m.dual_precision_nonzeros() == 0);
  const Eigen::MatrixXd Q(m.primal_precision());
  BOOST_TEST(max_abs_diff(Q, 0.25 * Eigen::MatrixXd::Identity(4, 4)) == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- bad input ----------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(rejects_non_positive_nan_and_infinite_homogeneous_parameters) {
  const Graph g = make_path(4);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(Model(g, 0.0, 1.0), std::invalid_argument,
                        message_has({"s = 0", "finite positive standard deviation"}));
  BOOST_CHECK_EXCEPTION(Model(g, -1.0, 1.0), std::invalid_argument, message_has({"s = -1", "finite positive"}));
  BOOST_CHECK_EXCEPTION(Model(g, nan, 1.0), std::invalid_argument, message_has({"s = nan"}));
  BOOST_CHECK_EXCEPTION(Model(g, inf, 1.0), std::invalid_argument, message_has({"s = inf"}));
  BOOST_CHECK_EXCEPTION(Model(g, 1.0, 0.0), std::invalid_argument, message_has({"sigma = 0", "finite positive"}));
  BOOST_CHECK_EXCEPTION(Model(g, 1.0, -0.5), std::invalid_argument, message_has({"sigma = -0.5"}));
  BOOST_CHECK_EXCEPTION(Model(g, 1.0, nan), std::invalid_argument, message_has({"sigma = nan"}));
  BOOST_CHECK_EXCEPTION(Model(g, 1.0, -inf), std::invalid_argument, message_has({"sigma = -inf"}));
  // Finite and positive, but the variance or its inverse is not representable.
  BOOST_CHECK_EXCEPTION(Model(g, 1e-200, 1.0), std::invalid_argument, message_has({"s = 1e-200", "underflows"}));
  BOOST_CHECK_EXCEPTION(Model(g, 1.0, 1e200), std::invalid_argument, message_has({"sigma = 1e+200", "overflows"}));
  BOOST_CHECK_EXCEPTION(check_standard_deviation(-2.0, "my parameter"), std::invalid_argument,
                        message_has({"my parameter = -2"}));
}

BOOST_AUTO_TEST_CASE(rejects_bad_entries_of_parameter_vectors_naming_the_item) {
  const Graph g = make_cycle(5);
  std::vector<double> s(5, 1.0), sigma(5, 1.0);
  s[3] = -1.0;
  BOOST_CHECK_EXCEPTION(Model(g, s, sigma), std::invalid_argument, message_has({"s_v of node 3 = -1 "}));
  s[3] = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_EXCEPTION(Model(g, s, sigma), std::invalid_argument, message_has({"s_v of node 3 = nan"}));
  s[3] = 1.0;
  sigma[4] = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(Model(g, s, sigma), std::invalid_argument, message_has({"sigma_e of edge 4 = inf"}));
  sigma[4] = 0.0;
  BOOST_CHECK_EXCEPTION(Model(g, s, sigma), std::invalid_argument, message_has({"sigma_e of edge 4 = 0"}));
}

BOOST_AUTO_TEST_CASE(rejects_parameter_vectors_of_the_wrong_length) {
  const Graph g = make_cycle(5);
  BOOST_CHECK_EXCEPTION(Model(g, std::vector<double>(4, 1.0), std::vector<double>(5, 1.0)), std::invalid_argument,
                        message_has({"4 node standard deviations given for 5 nodes"}));
  BOOST_CHECK_EXCEPTION(Model(g, std::vector<double>(5, 1.0), std::vector<double>(6, 1.0)), std::invalid_argument,
                        message_has({"6 edge standard deviations given for 5 edges"}));
  BOOST_CHECK_EXCEPTION(Model(g, std::vector<double>(), std::vector<double>()), std::invalid_argument,
                        message_has({"0 node standard deviations given for 5 nodes"}));
  const Model m(g, 1.0, 1.0);
  BOOST_CHECK_EXCEPTION(m.dual_operator().apply(Eigen::VectorXd::Ones(4)), std::invalid_argument,
                        message_has({"length 4", "5 edges"}));
}

BOOST_AUTO_TEST_CASE(rejects_a_precision_diagonal_that_overflows) {
  // sigma^2 = 1e-308 is representable and so is its inverse 1e308, but a node of degree 2 sums two of them.
  BOOST_CHECK_EXCEPTION(Model(make_path(3), 1.0, 1e-154), std::invalid_argument,
                        message_has({"diagonal", "Q", "overflows"}));
  BOOST_CHECK_EXCEPTION(Model(make_path(3), 1e154, 1.0), std::invalid_argument,
                        message_has({"diagonal", "R", "overflows"}));
}

BOOST_AUTO_TEST_CASE(rejects_a_dual_precision_over_the_32bit_index) {
  // A star with 50000 nodes: R is dense, 49999^2 ~ 2.5e9 non-zeros > 2^31 - 1. The matrix-free operator still works.
  const Model m(make_star(50000), 1.0, 1.0);
  BOOST_TEST(m.dual_precision_nonzeros() == std::int64_t{49999} * 49999);
  BOOST_CHECK_EXCEPTION(m.dual_precision(), std::invalid_argument,
                        message_has({"2499900001 non-zeros", "dual_operator"}));
  const Eigen::VectorXd y = Eigen::VectorXd::Ones(49999);
  const Eigen::VectorXd Ry = m.dual_operator().apply(y);
  // Row e of R: sigma^2 + 2 s^2 on the diagonal and s^2 for each of the other 49998 edges at the centre.
  BOOST_TEST(Ry[0] == 1.0 + 2.0 + 49998.0);
  BOOST_TEST(Ry[49998] == 1.0 + 2.0 + 49998.0);
}

BOOST_AUTO_TEST_SUITE_END()
