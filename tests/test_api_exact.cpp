// api/exact.hpp: the record and vectors of the exact use case against the library's own exact functions, the torus
// closed form for a torus spec only, and the posterior mean from the same factor.
#define BOOST_TEST_MODULE api_exact
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/exact.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

BOOST_AUTO_TEST_CASE(agrees_with_the_exact_functions) {
  const Model m(make_torus(6, 6), 1.0, 0.3);
  api::ExactOptions o;
  o.edge_variances = true;
  const GraphSpec spec = parse_graph_spec("torus:6");
  const api::ExactResult r = api::exact(m, o, &spec);
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  BOOST_TEST((r.variance - var).cwiseAbs().maxCoeff() <= 1e-13);
  BOOST_TEST((r.edge_variance_dual - marginal_variances(m, Domain::Dual)).cwiseAbs().maxCoeff() <= 1e-12);
  BOOST_CHECK_CLOSE(r.record["logdet_Q"].get<double>(), CholeskyFactor(m.primal_precision()).log_determinant(), 1e-10);
  BOOST_CHECK_CLOSE(r.record["trace_cov"].get<double>(), var.sum(), 1e-10);
  BOOST_TEST(r.record["torus_max_abs_error"].get<double>() <= 1e-12);  // [eq:torus_true_var]
  BOOST_TEST(r.record.contains("dual_marginal_variance_mean"));
  BOOST_TEST(!api::exact(m, {}, nullptr).record.contains("torus_marginal_variance"));  // no spec, no family
  BOOST_TEST(!r.record.contains("observed_nodes"));
}

BOOST_AUTO_TEST_CASE(solves_the_posterior_mean_from_the_same_factor) {
  Model m(make_grid(4, 4), 1.0, 0.5);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(16);
  z[5] = 2.0;
  m.set_observations(z);
  const api::ExactResult r = api::exact(m, {}, nullptr);
  BOOST_REQUIRE(r.mean.mean.size() == 16);
  const Eigen::VectorXd residual = m.canonical_vector() - m.primal_precision() * r.mean.mean;
  BOOST_TEST(residual.norm() <= 1e-12 * m.canonical_vector().norm());
  BOOST_TEST(r.record["observed_nodes"] == 16);  // every node, without the loader's count
  BOOST_TEST(r.record["mean_solver"] == "cholesky");
}

BOOST_AUTO_TEST_CASE(rejects_an_unknown_ordering) {
  const Model m(make_cycle(5), 1.0, 0.3);
  api::ExactOptions o;
  o.ordering = "random";
  BOOST_CHECK_EXCEPTION(api::exact(m, o, nullptr), std::invalid_argument, message_has({"random"}));
}
