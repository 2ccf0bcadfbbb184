// Tests of probing.hpp: the distance-k colouring's defining property, probing's exactness when k reaches the
// diameter, the same bits for any thread count, unbiasedness over sign sets, and bad input.
#define BOOST_TEST_MODULE probing
#include <boost/test/unit_test.hpp>

#include <dualgibbs/estimation/probing.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;
using Eigen::VectorXd;

namespace {

// Hop distances from v in the graph of q (plain breadth-first search over a dense adjacency), -1 beyond reach.
std::vector<int> hops_from(const Eigen::MatrixXd& q, Index v) {
  std::vector<int> dist(static_cast<std::size_t>(q.rows()), -1);
  std::vector<Index> frontier{v};
  dist[static_cast<std::size_t>(v)] = 0;
  for (int h = 1; !frontier.empty(); ++h) {
    std::vector<Index> next;
    for (const Index u : frontier)
      for (Index w = 0; w < q.rows(); ++w)
        if (w != u && q(u, w) != 0 && dist[static_cast<std::size_t>(w)] < 0) {
          dist[static_cast<std::size_t>(w)] = h;
          next.push_back(w);
        }
    frontier.swap(next);
  }
  return dist;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nodes_within_k_hops_get_different_colours) {
  for (const Model& m : {Model(make_torus(7, 6), 1.0, 0.3), Model(make_random_regular(60, 4, 3), 1.0, 0.25)}) {
    const SparseMatrix q = m.primal_precision();
    const Eigen::MatrixXd dense(q);
    for (int k = 1; k <= 4; ++k) {
      const DistanceColoring c = distance_coloring(q, k);
      BOOST_TEST(c.distance == k);
      int clashes = 0;
      for (Index v = 0; v < q.rows(); ++v) {
        const std::vector<int> d = hops_from(dense, v);
        for (Index u = 0; u < q.rows(); ++u)
          if (u != v && d[static_cast<std::size_t>(u)] >= 0 && d[static_cast<std::size_t>(u)] <= k &&
              c.color[static_cast<std::size_t>(u)] == c.color[static_cast<std::size_t>(v)])
            ++clashes;
        BOOST_TEST(c.color[static_cast<std::size_t>(v)] >= 0);
        BOOST_TEST(c.color[static_cast<std::size_t>(v)] < c.colors);
      }
      BOOST_TEST(clashes == 0, "k = " << k);
    }
  }
}

// With k at least the diameter every node has a colour of its own, so one sign set gives diag(Q^-1) itself (to the
// solves' tolerance), whatever the signs.
BOOST_AUTO_TEST_CASE(probing_at_the_diameter_is_exact) {
  const Model m(make_torus(6, 6), 1.0, 0.3);  // diameter 6
  const SparseMatrix q = m.primal_precision();
  const VectorXd v = Eigen::MatrixXd(q).inverse().diagonal();
  const DistanceColoring c = distance_coloring(q, 6);
  BOOST_TEST(c.colors == q.rows());
  for (std::uint64_t seed : {1u, 2u}) {
    ProbeStats stats;
    const VectorXd d = probe_diagonal(q, c, seed, 1e-12, 1, &stats);
    BOOST_TEST(((d - v).array() / v.array()).abs().maxCoeff() < 1e-9);
    BOOST_TEST(stats.iterations > 0);
    BOOST_TEST(stats.max_residual <= 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(the_thread_count_changes_no_bit) {
  const Model m(make_random_regular(500, 4, 9), 1.0, 0.25);
  const SparseMatrix q = m.primal_precision();
  const DistanceColoring c = distance_coloring(q, 3);
  const VectorXd one = probe_diagonal(q, c, 5, 1e-8, 1);
  for (unsigned threads : {2u, 3u}) BOOST_TEST((probe_diagonal(q, c, 5, 1e-8, threads).array() == one.array()).all());
}

// The estimate is unbiased for any k below the diameter: the mean over 400 sign sets at k = 1 (every node's
// remainder sums its same-coloured nodes' entries of Q^-1 with random signs) agrees with the dense diagonal within
// |z| < 5 on every node of a 40-node model (z from the spread over the sets; a family-wise false-failure
// probability below 40 x 6e-7 = 2.4e-5 for normal means, and 400 sets make the means close to normal).
BOOST_AUTO_TEST_CASE(sign_sets_average_to_the_diagonal) {
  const Model m(make_torus(8, 5), 1.0, 0.5);
  const SparseMatrix q = m.primal_precision();
  const VectorXd v = Eigen::MatrixXd(q).inverse().diagonal();
  const DistanceColoring c = distance_coloring(q, 1);
  BOOST_TEST_REQUIRE(c.colors < q.rows());
  const int sets = 400;
  VectorXd sum = VectorXd::Zero(q.rows()), sum_sq = VectorXd::Zero(q.rows());
  for (int s = 0; s < sets; ++s) {
    const VectorXd d = probe_diagonal(q, c, 1000 + static_cast<std::uint64_t>(s), 1e-10);
    sum += d;
    sum_sq += d.cwiseAbs2();
  }
  const VectorXd mean = sum / sets;
  const VectorXd se = ((sum_sq / sets - mean.cwiseAbs2()) / (sets - 1)).cwiseSqrt();
  BOOST_TEST(se.minCoeff() > 0.0);  // k = 1 leaves a remainder: the sets differ
  BOOST_TEST(((mean - v).array() / se.array()).abs().maxCoeff() < 5.0);
}

BOOST_AUTO_TEST_CASE(bad_input_is_named) {
  const Model m(make_torus(4, 4), 1.0, 0.3);
  const SparseMatrix q = m.primal_precision();
  BOOST_CHECK_THROW(distance_coloring(q, 0), std::invalid_argument);
  BOOST_CHECK_THROW(distance_coloring(SparseMatrix(3, 4), 1), std::invalid_argument);
  const DistanceColoring c = distance_coloring(q, 1);
  BOOST_CHECK_THROW(probe_diagonal(q, c, 1, 0.0), std::invalid_argument);
  BOOST_CHECK_THROW(probe_diagonal(q, c, 1, 1.0), std::invalid_argument);
  DistanceColoring wrong = c;
  wrong.color.pop_back();
  BOOST_CHECK_THROW(probe_diagonal(q, wrong, 1, 1e-8), std::invalid_argument);
  // A diagonal entry that is not positive (the Jacobi preconditioner's, and any SPD matrix's, is), named.
  SparseMatrix bad = q;
  bad.coeffRef(3, 3) = -10.0;
  try {
    probe_diagonal(bad, c, 1, 1e-10);
    BOOST_TEST(false, "no error");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("Q[3,3] = -10") != std::string::npos, e.what());
  }
}
