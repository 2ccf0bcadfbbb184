#define BOOST_TEST_MODULE graph
#include <boost/test/unit_test.hpp>

#include <dualgibbs/generators.hpp>
#include <dualgibbs/graph.hpp>

#include <stdexcept>

using namespace dualgibbs;

BOOST_AUTO_TEST_SUITE(graph)

BOOST_AUTO_TEST_CASE(torus_has_twice_as_many_edges_as_nodes) {
  const Graph g = make_torus(10, 10);
  BOOST_TEST(g.num_nodes() == 100);
  BOOST_TEST(g.num_edges() == 200);
  BOOST_TEST(g.min_degree() == 4);
  BOOST_TEST(g.max_degree() == 4);
  BOOST_TEST(g.num_components() == 1);
}

BOOST_AUTO_TEST_CASE(rejects_self_loop_and_duplicate) {
  BOOST_CHECK_THROW(Graph(3, {{0, 0}}), std::invalid_argument);
  BOOST_CHECK_THROW(Graph(3, {{0, 1}, {1, 0}}), std::invalid_argument);
  BOOST_CHECK_THROW(Graph(0, {}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
