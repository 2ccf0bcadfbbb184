// The authors' fig7 inputs and torus regenerated (paper/published.hpp) against networkx 2.8 and numpy output
// (tests/data/published_fig7.txt and published_torus_edges.txt, written by tests/data/make_published_fixtures.py:
// the oracle is networkx and numpy as their code calls them).
#define BOOST_TEST_MODULE published
#include <boost/test/unit_test.hpp>

#include <dualgibbs/paper/published.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

struct Realisation {
  unsigned seed = 0;
  std::vector<Edge> edges;
  std::vector<double> s, sigma;
};

std::vector<Realisation> read_fixture() {
  std::ifstream in(std::string(DUALGIBBS_SOURCE_DIR) + "/tests/data/published_fig7.txt");
  if (!in) throw std::runtime_error("cannot open tests/data/published_fig7.txt");
  std::vector<Realisation> out;
  std::string word;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
    } else if (word == "graph") {
      Realisation r;
      std::size_t m = 0;
      in >> r.seed >> m;
      r.edges.resize(m);
      for (auto& e : r.edges) in >> e.head >> e.tail;
      out.push_back(r);
    } else if (word == "s" || word == "sigma") {
      std::size_t m = 0;
      in >> m;
      auto& v = word == "s" ? out.back().s : out.back().sigma;
      v.resize(m);
      for (auto& x : v) in >> x;
    }
  }
  return out;
}

struct TorusEdges {
  Index rows = 0, cols = 0;
  std::vector<Edge> edges;
};

std::vector<TorusEdges> read_torus_fixture() {
  std::ifstream in(std::string(DUALGIBBS_SOURCE_DIR) + "/tests/data/published_torus_edges.txt");
  if (!in) throw std::runtime_error("cannot open tests/data/published_torus_edges.txt");
  std::vector<TorusEdges> out;
  std::string word;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
    } else if (word == "torus") {
      TorusEdges t;
      std::size_t m = 0;
      in >> t.rows >> t.cols >> m;
      t.edges.resize(m);
      for (auto& e : t.edges) in >> e.head >> e.tail;
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(published)

BOOST_AUTO_TEST_CASE(torus_edges_in_networkx_order) {
  const std::vector<TorusEdges> fixture = read_torus_fixture();
  BOOST_TEST_REQUIRE(fixture.size() == 3u);
  for (const TorusEdges& t : fixture) {
    const Graph g = networkx_torus(t.rows, t.cols);
    BOOST_TEST_REQUIRE(g.num_nodes() == t.rows * t.cols);
    BOOST_TEST_REQUIRE(g.num_edges() == static_cast<Index>(t.edges.size()), t.rows << "x" << t.cols);
    for (std::size_t e = 0; e < t.edges.size(); ++e) {
      BOOST_TEST(g.edges()[e].head == t.edges[e].head, t.rows << "x" << t.cols << " edge " << e);
      BOOST_TEST(g.edges()[e].tail == t.edges[e].tail, t.rows << "x" << t.cols << " edge " << e);
    }
  }
  BOOST_CHECK_THROW(networkx_torus(2, 10), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_torus(10, 2), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_torus(2000, 2000), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(watts_strogatz_graphs_and_parameters_equal_networkx_and_numpy) {
  const std::vector<Realisation> fixture = read_fixture();
  BOOST_TEST_REQUIRE(fixture.size() == 4u);
  for (const Realisation& r : fixture) {
    const Graph g = networkx_watts_strogatz(64, 4, 0.3, r.seed);
    BOOST_TEST_REQUIRE(g.num_edges() == static_cast<Index>(r.edges.size()), "seed " << r.seed);
    for (std::size_t e = 0; e < r.edges.size(); ++e) {
      BOOST_TEST(g.edges()[e].head == r.edges[e].head, "seed " << r.seed << " edge " << e);
      BOOST_TEST(g.edges()[e].tail == r.edges[e].tail, "seed " << r.seed << " edge " << e);
    }
    NumpyLegacyRandom rng(1000 + r.seed);
    const std::vector<double> s = rng.beta11(64, 0.75, 1.5);
    const std::vector<double> sigma = rng.beta11(r.edges.size(), 0.25, 0.5);
    BOOST_TEST(s == r.s, boost::test_tools::per_element());
    BOOST_TEST(sigma == r.sigma, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(k5_file_fit_recovers_a_geometric_rate_from_sweep_0) {
  // An exactly geometric Eu = 5 r^(2t), -ln r = 1.1: the window is sweeps 0 to 3 (Eu above 10^-2 x 5 up to
  // sweep 2, then the 4-point minimum), every pairwise line is the same line, and the rate is 1.1 up to the
  // shift 1e-12 of the logarithms (relative 1.5e-10 at sweep 3).
  std::vector<double> t, eu;
  for (int i = 0; i <= 100; ++i) {
    t.push_back(i);
    eu.push_back(5.0 * std::exp(-2.2 * i));
  }
  BOOST_TEST(authors_decay_rate(t, eu, 2.0) == 1.1, boost::test_tools::tolerance(1e-8));
  BOOST_TEST(authors_decay_rate(t, eu, 1.0) == 2.2, boost::test_tools::tolerance(1e-8));  // as a mean's decay
  // One outlier (sweep 1, 10x) among the 4 points: half of the 6 pairwise lines are still the true line, so their
  // spatial median is that line (to the iteration's tolerance 1e-3 in the slope); a least-squares line would give
  // 1.215.
  eu[1] *= 10.0;
  BOOST_TEST(std::abs(authors_decay_rate(t, eu, 2.0) - 1.1) < 1e-3);
  // Fewer than 4 positive values in the window: no fit.
  std::vector<double> short_curve{1.0, 0.5, -0.1, -0.2};
  std::vector<double> ts{0, 1, 2, 3};
  for (int i = 4; i <= 20; ++i) {
    ts.push_back(i);
    short_curve.push_back(i % 2 ? 1e-3 : -1e-3);
  }
  BOOST_TEST(std::isnan(authors_decay_rate(ts, short_curve, 2.0)));
  BOOST_CHECK_THROW(authors_decay_rate({0, 1}, {1.0}, 2.0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(rejects_bad_parameters) {
  BOOST_CHECK_THROW(networkx_watts_strogatz(2, 2, 0.3, 0), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_watts_strogatz(64, 3, 0.3, 0), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_watts_strogatz(4, 4, 0.3, 0), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_watts_strogatz(64, 4, 1.5, 0), std::invalid_argument);
  BOOST_CHECK_THROW(networkx_watts_strogatz(64, 4, std::nan(""), 0), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
