// The service layer's shared pieces (api/common.hpp): loading a model from its description, and the digest that
// MPI ranks compare before they share anything.
#define BOOST_TEST_MODULE api_common
#include <boost/test/unit_test.hpp>

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/model/generators.hpp>

#include <Eigen/Core>

BOOST_AUTO_TEST_SUITE(model_digest_tests)

BOOST_AUTO_TEST_CASE(equal_models_have_equal_digests_and_any_change_shows) {
  using dualgibbs::Model;
  const Model a(dualgibbs::make_torus(5, 5), 1.0, 0.3), b(dualgibbs::make_torus(5, 5), 1.0, 0.3);
  BOOST_TEST(dualgibbs::api::model_digest(a) == dualgibbs::api::model_digest(b));
  BOOST_TEST(dualgibbs::api::model_digest(a) !=
             dualgibbs::api::model_digest(Model(dualgibbs::make_torus(5, 5), 1.0, 0.31)));
  BOOST_TEST(dualgibbs::api::model_digest(a) !=
             dualgibbs::api::model_digest(Model(dualgibbs::make_torus(5, 5), 1.1, 0.3)));
  BOOST_TEST(dualgibbs::api::model_digest(a) !=
             dualgibbs::api::model_digest(Model(dualgibbs::make_grid(5, 5), 1.0, 0.3)));
  Model c(dualgibbs::make_torus(5, 5), 1.0, 0.3);
  c.set_observations(Eigen::VectorXd::Constant(25, 0.5));  // the mean's data is part of the model
  BOOST_TEST(dualgibbs::api::model_digest(a) != dualgibbs::api::model_digest(c));
  dualgibbs::api::agree_on_model(a, nullptr);  // one process: nothing to agree on
}

BOOST_AUTO_TEST_CASE(load_model_reads_the_description) {
  dualgibbs::api::ModelSource source;
  source.graph = "cycle:7";
  source.s = 2.0;
  source.sigma = 0.5;
  const dualgibbs::api::LoadedModel m = dualgibbs::api::load_model(source);
  BOOST_TEST(m.model.num_nodes() == 7);
  BOOST_TEST(m.model.num_edges() == 7);
  BOOST_TEST(m.model.node_variances()[0] == 4.0);
  BOOST_TEST(!m.model.has_mean());
  source.sigma = -1;
  BOOST_CHECK_THROW(dualgibbs::api::load_model(source), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
