// Scale runs of the exact module (label "long", skipped by the default suite: ctest -L long).
#define BOOST_TEST_MODULE exact_long
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "support/models.hpp"
#include "support/references.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace dualgibbs;

using testing::heterogeneous_torus;
using testing::worst_against_solves;

BOOST_AUTO_TEST_SUITE(exact_at_scale)

BOOST_AUTO_TEST_CASE(all_marginal_variances_of_the_1000x1000_torus_match_the_closed_form) {
  const Model m(make_torus(1000, 1000), 1.0, 0.25);
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  const double nu = torus_marginal_variance(1000, 1000, 1.0, 0.25);
  BOOST_TEST(var.size() == 1000000);
  BOOST_TEST((var.array() - nu).abs().maxCoeff() <= 1e-9);
  BOOST_TEST(std::abs(nu - 0.0308251569) < 1e-10);
}

BOOST_AUTO_TEST_CASE(heterogeneous_1000x1000_torus_matches_independent_solves) {
  const Model m = heterogeneous_torus(1000, 3);
  const SparseMatrix q = m.primal_precision();
  const Eigen::VectorXd var = CholeskyFactor(q).marginal_variances();
  BOOST_TEST(worst_against_solves(CholeskyFactor(q, Ordering::Metis), var, 30, 11) < 1e-10);
}

// Prop. 2 [eq:cov_woodbury5] and Prop. 3 [eq:cov_woodbury88] on the diagonals, at scale, from two independent
// factorizations (Q for Var(X_v), Var(Y_e); R for Var(x~_v), Var(y~_e)).
BOOST_AUTO_TEST_CASE(woodbury_diagonals_hold_on_a_heterogeneous_300x300_torus) {
  const Model m = heterogeneous_torus(300, 5);
  const Eigen::VectorXd var_x = marginal_variances(m, Domain::Primal);
  const Eigen::VectorXd var_xt = marginal_variances_dual_nodes(m);
  const Eigen::VectorXd var_y = marginal_variances_primal_edges(m);
  const Eigen::VectorXd var_yt = marginal_variances(m, Domain::Dual);
  double worst2 = 0, worst3 = 0;
  for (Index v = 0; v < m.num_nodes(); ++v) {
    const double s2 = m.node_variances()[v];
    worst2 = std::max(worst2, std::abs(var_x[v] / s2 + s2 * var_xt[v] - 1));
  }
  for (Index e = 0; e < m.num_edges(); ++e) {
    const double g2 = m.edge_variances()[e];
    worst3 = std::max(worst3, std::abs(var_y[e] / g2 + g2 * var_yt[e] - 1));
  }
  BOOST_TEST(worst2 < 1e-11);
  BOOST_TEST(worst3 < 1e-11);
  BOOST_TEST(worst_against_solves(CholeskyFactor(m.dual_precision(), Ordering::Metis), var_yt, 20, 13) < 1e-10);
}

// An expander's factor fills in: 200000 nodes of degree 32 need about 150 GiB of factor values, more than any
// test machine has. The factorization is refused after the analysis, with the size, before CHOLMOD allocates it
// (an allocation that Linux's overcommit may grant and then page the machine to a halt).
BOOST_AUTO_TEST_CASE(a_factor_larger_than_memory_is_refused_before_allocation) {
  const Model model(make_random_regular(200000, 32, 7), 1.0, 0.25);
  BOOST_CHECK_EXCEPTION(CholeskyFactor(model.primal_precision()), FactorizationError, [](const FactorizationError& e) {
    const std::string what = e.what();
    return what.find("GiB") != std::string::npos && what.find("out of memory") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()
