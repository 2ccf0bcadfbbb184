#define BOOST_TEST_MODULE generators
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/model/generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;
namespace bdata = boost::unit_test::data;

namespace {

using Pair = std::pair<Index, Index>;
using PairSet = std::set<Pair>;

Pair unordered(Index a, Index b) { return {std::min(a, b), std::max(a, b)}; }

// The undirected edge set, checking on the way that the graph is simple (independently of Graph's own checks).
PairSet edge_set(const Graph& g) {
  PairSet s;
  for (const Edge& e : g.edges()) {
    BOOST_TEST_REQUIRE(e.head != e.tail);
    BOOST_TEST_REQUIRE((e.head >= 0 && e.head < g.num_nodes() && e.tail >= 0 && e.tail < g.num_nodes()));
    BOOST_TEST_REQUIRE(s.insert(unordered(e.head, e.tail)).second);
  }
  return s;
}

std::vector<Index> degrees(const Graph& g) {
  std::vector<Index> d(static_cast<std::size_t>(g.num_nodes()), 0);
  for (const Edge& e : g.edges()) {
    ++d[e.head];
    ++d[e.tail];
  }
  return d;
}

bool same_edges(const Graph& a, const Graph& b) {
  if (a.num_nodes() != b.num_nodes() || a.num_edges() != b.num_edges()) return false;
  for (Index e = 0; e < a.num_edges(); ++e)
    if (a.edge(e).head != b.edge(e).head || a.edge(e).tail != b.edge(e).tail) return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(deterministic_families)

BOOST_AUTO_TEST_CASE(torus_matches_coordinates_and_orientation) {
  for (auto [r, c] : {std::pair<Index, Index>{3, 3}, {4, 5}, {6, 3}, {10, 10}}) {
    const Graph g = make_torus(r, c);
    BOOST_TEST(g.num_nodes() == r * c);
    BOOST_TEST(g.num_edges() == 2 * r * c);
    PairSet expected;
    std::set<std::pair<Index, Index>> oriented;
    for (Index i = 0; i < r; ++i)
      for (Index j = 0; j < c; ++j) {
        const Index v = i * c + j, right = i * c + (j + 1) % c, below = ((i + 1) % r) * c + j;
        expected.insert(unordered(v, right));
        expected.insert(unordered(v, below));
        oriented.insert({v, right});
        oriented.insert({v, below});
      }
    BOOST_TEST((edge_set(g) == expected));
    for (const Edge& e : g.edges()) BOOST_TEST(oriented.count({e.head, e.tail}) == 1u);  // head = the node itself
    const auto d = degrees(g);
    BOOST_TEST(std::all_of(d.begin(), d.end(), [](Index x) { return x == 4; }));
    BOOST_TEST(g.num_components() == 1);
  }
}

BOOST_AUTO_TEST_CASE(torus3_is_the_6_regular_3d_torus) {
  for (auto [a, b, c] : {std::tuple<Index, Index, Index>{3, 3, 3}, {3, 4, 5}, {5, 3, 4}}) {
    const Graph g = make_torus3(a, b, c);
    BOOST_TEST(g.num_nodes() == a * b * c);
    BOOST_TEST(g.num_edges() == 3 * a * b * c);
    // Every node's neighbours are exactly the six coordinate shifts (mod the sides); heads are the lower-listed end.
    std::vector<std::set<Index>> nb(static_cast<std::size_t>(g.num_nodes()));
    for (const Edge& e : g.edges()) {
      nb[static_cast<std::size_t>(e.head)].insert(e.tail);
      nb[static_cast<std::size_t>(e.tail)].insert(e.head);
    }
    for (Index i = 0; i < a; ++i)
      for (Index j = 0; j < b; ++j)
        for (Index k = 0; k < c; ++k) {
          auto id = [&](Index x, Index y, Index z) { return ((x + a) % a * b + (y + b) % b) * c + (z + c) % c; };
          const std::set<Index> want{id(i + 1, j, k), id(i - 1, j, k), id(i, j + 1, k),
                                     id(i, j - 1, k), id(i, j, k + 1), id(i, j, k - 1)};
          BOOST_TEST((nb[static_cast<std::size_t>(id(i, j, k))] == want), "node " << i << "," << j << "," << k);
        }
    BOOST_TEST(g.num_components() == 1);
  }
  BOOST_CHECK_EXCEPTION(make_torus3(3, 2, 4), std::invalid_argument, message_has({"torus3", "at least 3", "3x2x4"}));
  BOOST_CHECK_EXCEPTION(make_torus3(2000, 2000, 2000), std::invalid_argument, message_has({"torus3", "overflow"}));
}

BOOST_AUTO_TEST_CASE(grid_matches_coordinates) {
  for (auto [r, c] : {std::pair<Index, Index>{1, 1}, {1, 5}, {3, 4}, {7, 2}}) {
    const Graph g = make_grid(r, c);
    PairSet expected;
    for (Index i = 0; i < r; ++i)
      for (Index j = 0; j < c; ++j) {
        if (j + 1 < c) expected.insert(unordered(i * c + j, i * c + j + 1));
        if (i + 1 < r) expected.insert(unordered(i * c + j, (i + 1) * c + j));
      }
    BOOST_TEST(g.num_nodes() == r * c);
    BOOST_TEST(g.num_edges() == r * (c - 1) + c * (r - 1));
    BOOST_TEST((edge_set(g) == expected));
    BOOST_TEST(g.num_components() == 1);
  }
}

BOOST_AUTO_TEST_CASE(path_cycle_complete_star) {
  for (Index n : {1, 2, 5, 9}) {
    const Graph p = make_path(n);
    PairSet ep;
    for (Index v = 0; v + 1 < n; ++v) ep.insert({v, v + 1});
    BOOST_TEST((edge_set(p) == ep));
    BOOST_TEST(p.num_components() == 1);
    BOOST_TEST(!p.has_cycles());

    const Graph k = make_complete(n);
    BOOST_TEST(k.num_edges() == n * (n - 1) / 2);
    const auto dk = degrees(k);
    BOOST_TEST(std::all_of(dk.begin(), dk.end(), [n](Index x) { return x == n - 1; }));
    edge_set(k);
  }
  for (Index n : {3, 4, 8}) {
    const Graph c = make_cycle(n);
    PairSet ec;
    for (Index v = 0; v < n; ++v) ec.insert(unordered(v, (v + 1) % n));
    BOOST_TEST((edge_set(c) == ec));
    const auto dc = degrees(c);
    BOOST_TEST(std::all_of(dc.begin(), dc.end(), [](Index x) { return x == 2; }));
  }
  for (Index n : {2, 3, 7}) {
    const Graph s = make_star(n);
    BOOST_TEST(s.num_nodes() == n);  // N nodes in all, centre 0
    BOOST_TEST(s.num_edges() == n - 1);
    for (Index e = 0; e < s.num_edges(); ++e) {
      BOOST_TEST(s.edge(e).head == 0);
      BOOST_TEST(s.edge(e).tail == e + 1);
    }
    BOOST_TEST(s.degree(0) == n - 1);
    BOOST_TEST(!s.has_cycles());
  }
}

BOOST_AUTO_TEST_CASE(complete_bipartite_has_no_edge_inside_a_side) {
  for (auto [n1, n2] : {std::pair<Index, Index>{1, 1}, {3, 4}, {5, 2}}) {
    const Graph g = make_complete_bipartite(n1, n2);
    PairSet expected;
    for (Index u = 0; u < n1; ++u)
      for (Index v = n1; v < n1 + n2; ++v) expected.insert({u, v});
    BOOST_TEST(g.num_nodes() == n1 + n2);
    BOOST_TEST((edge_set(g) == expected));
    const auto d = degrees(g);
    for (Index v = 0; v < n1 + n2; ++v) BOOST_TEST(d[v] == (v < n1 ? n2 : n1));
  }
}

BOOST_AUTO_TEST_CASE(hypercube_joins_ids_one_bit_apart) {
  for (int dim : {0, 1, 3, 6}) {
    const Graph g = make_hypercube(dim);
    const Index n = Index{1} << dim;
    BOOST_TEST(g.num_nodes() == n);
    BOOST_TEST(g.num_edges() == dim * n / 2);
    PairSet expected;
    for (Index v = 0; v < n; ++v)
      for (Index w = v + 1; w < n; ++w)
        if (__builtin_popcount(static_cast<unsigned>(v ^ w)) == 1) expected.insert({v, w});
    BOOST_TEST((edge_set(g) == expected));
    const auto d = degrees(g);
    BOOST_TEST(std::all_of(d.begin(), d.end(), [dim](Index x) { return x == dim; }));
    BOOST_TEST(g.num_components() == 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(random_families)

BOOST_AUTO_TEST_CASE(random_regular_is_k_regular_and_simple) {
  for (auto [n, k] :
       {std::pair<Index, Index>{10, 0}, {12, 3}, {50, 4}, {101, 2}, {1000, 3}, {10, 9}, {12, 8}, {30, 25}}) {
    for (std::uint64_t seed : {1u, 2u, 99u}) {
      const Graph g = make_random_regular(n, k, seed);
      BOOST_TEST(g.num_nodes() == n);
      BOOST_TEST(g.num_edges() == n * k / 2);
      edge_set(g);
      const auto d = degrees(g);
      BOOST_TEST(std::all_of(d.begin(), d.end(), [k = k](Index x) { return x == k; }), "n=" << n << " k=" << k);
    }
  }
}

BOOST_AUTO_TEST_CASE(watts_strogatz_without_rewiring_is_the_ring_lattice) {
  const Index n = 20, k = 6;
  const Graph g = make_watts_strogatz(n, k, 0.0, 1);
  PairSet ring;
  for (Index u = 0; u < n; ++u)
    for (Index j = 1; j <= k / 2; ++j) ring.insert(unordered(u, (u + j) % n));
  BOOST_TEST((edge_set(g) == ring));
}

BOOST_AUTO_TEST_CASE(watts_strogatz_keeps_nk_over_2_simple_edges) {
  for (double p : {0.1, 0.5, 1.0})
    for (auto [n, k] : {std::pair<Index, Index>{5, 2}, {5, 4}, {30, 4}, {200, 10}}) {
      const Graph g = make_watts_strogatz(n, k, p, 3);
      BOOST_TEST(g.num_edges() == n * k / 2);
      edge_set(g);
    }
}

// Each lattice edge is rewired with probability p, independently: the number of edges outside the ring
// lattice is Binomial(nk/2, p) minus the rare rewirings that land on a lattice pair (probability <= k/n
// each). n = 2000, k = 4, p = 0.2: mean 800, sd 25.3; the band of 6 sd (false failure < 2e-9) leaves room
// for the <= 0.002 * 800 = 1.6 landings.
BOOST_AUTO_TEST_CASE(watts_strogatz_rewires_a_fraction_p) {
  const Index n = 2000, k = 4;
  const double p = 0.2;
  const Graph g = make_watts_strogatz(n, k, p, 17);
  PairSet ring;
  for (Index u = 0; u < n; ++u)
    for (Index j = 1; j <= k / 2; ++j) ring.insert(unordered(u, (u + j) % n));
  std::int64_t outside = 0;
  for (const auto& e : edge_set(g)) outside += ring.count(e) == 0;
  const double mean = p * n * k / 2, sd = std::sqrt(mean * (1 - p));
  BOOST_TEST(std::fabs(static_cast<double>(outside) - mean) < 6 * sd,
             "rewired " << outside << ", expected about " << mean);
}

BOOST_AUTO_TEST_CASE(erdos_renyi_extremes) {
  BOOST_TEST(make_erdos_renyi(10, 0.0, 1).num_edges() == 0);
  BOOST_TEST(make_erdos_renyi(1, 0.5, 1).num_edges() == 0);
  const Graph full = make_erdos_renyi(9, 1.0, 1);
  BOOST_TEST(full.num_edges() == 36);
  // Tiny p: the geometric skip exceeds every pair (it once overflowed the 64-bit conversion).
  BOOST_TEST(make_erdos_renyi(10, 1e-30, 1).num_edges() == 0);
  BOOST_TEST(make_erdos_renyi(100000, 1e-300, 1).num_edges() == 0);
}

// Every pair is an edge with probability p, independently. Over 2000 seeds of G(30, 0.2) each of the 435
// pair counts is Binomial(2000, 0.2): mean 400, sd 17.9 (skewness 0.03: the normal tail is accurate).
// Bonferroni over 435 pairs and the total at z = 6.1 (two-sided 1.1e-9 each): false failure < 1e-6.
// A per-pair bias of 30% or an off-by-one in the skipping (a pair never or always drawn) fails.
BOOST_AUTO_TEST_CASE(erdos_renyi_draws_every_pair_with_probability_p) {
  const Index n = 30;
  const double p = 0.2;
  const int seeds = 2000;
  std::vector<std::vector<int>> count(n, std::vector<int>(n, 0));
  std::int64_t total = 0;
  for (int s = 0; s < seeds; ++s) {
    const Graph g = make_erdos_renyi(n, p, static_cast<std::uint64_t>(s) + 1000);
    for (const auto& [a, b] : edge_set(g)) ++count[a][b];
    total += g.num_edges();
  }
  const double z = 6.1, mean = seeds * p, sd = std::sqrt(seeds * p * (1 - p));
  double worst = 0;
  for (Index a = 0; a < n; ++a)
    for (Index b = a + 1; b < n; ++b) worst = std::max(worst, std::fabs(count[a][b] - mean) / sd);
  BOOST_TEST(worst < z);
  const double pairs = n * (n - 1) / 2.0;
  BOOST_TEST(std::fabs(static_cast<double>(total) - seeds * pairs * p) < z * std::sqrt(seeds * pairs * p * (1 - p)));
}

// G(2000, 0.01): |E| ~ Binomial(1999000, 0.01), mean 19990, sd 140.7; 6 sd: false failure < 2e-9.
BOOST_AUTO_TEST_CASE(erdos_renyi_edge_count) {
  const Graph g = make_erdos_renyi(2000, 0.01, 5);
  edge_set(g);
  const double N = 2000.0 * 1999 / 2, mean = N * 0.01, sd = std::sqrt(N * 0.01 * 0.99);
  BOOST_TEST(std::fabs(g.num_edges() - mean) < 6 * sd, g.num_edges() << " edges");
}

BOOST_AUTO_TEST_CASE(barabasi_albert_invariants) {
  for (auto [n, m] : {std::pair<Index, Index>{2, 1}, {10, 3}, {500, 2}, {300, 5}}) {
    const Graph g = make_barabasi_albert(n, m, 4);
    BOOST_TEST(g.num_edges() == m * (n - m));  // a star on m + 1 nodes, then m edges per new node
    edge_set(g);
    const auto d = degrees(g);
    for (Index v = m + 1; v < n; ++v) BOOST_TEST_REQUIRE(d[v] >= m);
    BOOST_TEST(g.num_components() == 1);  // every new node attaches to the existing component
    // Every node's edges to older nodes: a node v > m joins exactly m older nodes.
    std::vector<Index> older(static_cast<std::size_t>(n), 0);
    for (const Edge& e : g.edges()) ++older[std::max(e.head, e.tail)];
    for (Index v = m + 1; v < n; ++v) BOOST_TEST_REQUIRE(older[v] == m);
  }
}

BOOST_AUTO_TEST_CASE(seeds_reproduce_and_different_seeds_differ) {
  BOOST_TEST(same_edges(make_random_regular(60, 3, 8), make_random_regular(60, 3, 8)));
  BOOST_TEST(same_edges(make_watts_strogatz(60, 4, 0.3, 8), make_watts_strogatz(60, 4, 0.3, 8)));
  BOOST_TEST(same_edges(make_erdos_renyi(60, 0.1, 8), make_erdos_renyi(60, 0.1, 8)));
  BOOST_TEST(same_edges(make_barabasi_albert(60, 2, 8), make_barabasi_albert(60, 2, 8)));
  // Different seeds: equal graphs would need a coincidence of probability far below 1e-6 at these sizes.
  BOOST_TEST((edge_set(make_random_regular(60, 3, 8)) != edge_set(make_random_regular(60, 3, 9))));
  BOOST_TEST((edge_set(make_watts_strogatz(60, 4, 0.3, 8)) != edge_set(make_watts_strogatz(60, 4, 0.3, 9))));
  BOOST_TEST((edge_set(make_erdos_renyi(60, 0.1, 8)) != edge_set(make_erdos_renyi(60, 0.1, 9))));
  BOOST_TEST((edge_set(make_barabasi_albert(60, 2, 8)) != edge_set(make_barabasi_albert(60, 2, 9))));
}

BOOST_AUTO_TEST_SUITE_END()

// Every family instance of the shared list is a simple graph (the oracle is edge_set's independent check).
BOOST_DATA_TEST_CASE(family_instances_are_simple, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  BOOST_TEST(edge_set(g).size() == static_cast<std::size_t>(g.num_edges()));
}

BOOST_AUTO_TEST_SUITE(bad_parameters)

BOOST_AUTO_TEST_CASE(rejects_sizes_that_make_no_simple_graph) {
  BOOST_CHECK_EXCEPTION(make_torus(2, 5), std::invalid_argument, message_has({"torus", "at least 3", "2x5"}));
  BOOST_CHECK_EXCEPTION(make_grid(0, 5), std::invalid_argument, message_has({"grid", "0x5"}));
  BOOST_CHECK_EXCEPTION(make_path(0), std::invalid_argument, message_has({"path", "got 0"}));
  BOOST_CHECK_EXCEPTION(make_cycle(2), std::invalid_argument, message_has({"cycle", "got 2"}));
  BOOST_CHECK_EXCEPTION(make_complete(-1), std::invalid_argument, message_has({"complete", "got -1"}));
  BOOST_CHECK_EXCEPTION(make_complete_bipartite(3, 0), std::invalid_argument, message_has({"bipartite", "3,0"}));
  BOOST_CHECK_EXCEPTION(make_star(1), std::invalid_argument, message_has({"star", "got 1"}));
  BOOST_CHECK_EXCEPTION(make_hypercube(-1), std::invalid_argument, message_has({"hypercube", "got -1"}));
  BOOST_CHECK_EXCEPTION(make_random_regular(5, 3, 1), std::invalid_argument,
                        message_has({"kregular", "even", "n=5, k=3"}));
  BOOST_CHECK_EXCEPTION(make_random_regular(5, 5, 1), std::invalid_argument, message_has({"kregular", "k < n", "k=5"}));
  BOOST_CHECK_EXCEPTION(make_random_regular(5, -2, 1), std::invalid_argument, message_has({"kregular", "k=-2"}));
  BOOST_CHECK_EXCEPTION(make_watts_strogatz(10, 3, 0.1, 1), std::invalid_argument,
                        message_has({"ws", "even k", "k=3"}));
  BOOST_CHECK_EXCEPTION(make_watts_strogatz(10, 10, 0.1, 1), std::invalid_argument,
                        message_has({"ws", "k < n", "k=10"}));
  BOOST_CHECK_EXCEPTION(make_watts_strogatz(10, 4, 1.5, 1), std::invalid_argument,
                        message_has({"ws", "probability", "[0, 1]"}));
  BOOST_CHECK_EXCEPTION(make_watts_strogatz(10, 4, std::nan(""), 1), std::invalid_argument, message_has({"ws", "nan"}));
  BOOST_CHECK_EXCEPTION(make_erdos_renyi(0, 0.5, 1), std::invalid_argument, message_has({"er", "got 0"}));
  BOOST_CHECK_EXCEPTION(make_erdos_renyi(10, -0.1, 1), std::invalid_argument, message_has({"er", "probability"}));
  BOOST_CHECK_EXCEPTION(make_erdos_renyi(10, std::numeric_limits<double>::infinity(), 1), std::invalid_argument,
                        message_has({"er", "inf"}));
  BOOST_CHECK_EXCEPTION(make_barabasi_albert(5, 5, 1), std::invalid_argument, message_has({"ba", "m < n", "m=5"}));
  BOOST_CHECK_EXCEPTION(make_barabasi_albert(5, 0, 1), std::invalid_argument, message_has({"ba", "m=0"}));
}

// Sizes whose node or edge count overflows the 32-bit index are refused before anything is allocated
// (the test would run out of memory otherwise).
BOOST_AUTO_TEST_CASE(rejects_sizes_that_overflow_the_index) {
  const Index big = std::numeric_limits<Index>::max();
  BOOST_CHECK_EXCEPTION(make_torus(50000, 50000), std::invalid_argument,
                        message_has({"torus", "2500000000 nodes", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_torus(30000, 30000), std::invalid_argument,
                        message_has({"torus", "1800000000 edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_grid(big, big), std::invalid_argument, message_has({"grid", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_grid(1, big), std::invalid_argument, message_has({"grid", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_path(big), std::invalid_argument, message_has({"path", "edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_cycle(big), std::invalid_argument, message_has({"cycle", "edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_star(big), std::invalid_argument, message_has({"star", "edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_complete(70000), std::invalid_argument, message_has({"complete", "edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_complete_bipartite(big, big), std::invalid_argument,
                        message_has({"bipartite", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_complete_bipartite(40000, 40000), std::invalid_argument,
                        message_has({"bipartite", "edges", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_hypercube(27), std::invalid_argument, message_has({"hypercube", "0..26", "got 27"}));
  BOOST_CHECK_EXCEPTION(make_random_regular(1 << 30, 4, 1), std::invalid_argument,
                        message_has({"kregular", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_watts_strogatz(1 << 30, 4, 0.1, 1), std::invalid_argument,
                        message_has({"ws", "overflow"}));
  BOOST_CHECK_EXCEPTION(make_erdos_renyi(100000, 1.0, 1), std::invalid_argument, message_has({"er", "32-bit index"}));
  BOOST_CHECK_EXCEPTION(make_barabasi_albert(1 << 30, 2, 1), std::invalid_argument, message_has({"ba", "overflow"}));
}

BOOST_AUTO_TEST_SUITE_END()
