#define BOOST_TEST_MODULE graph
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/model/graph.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;
namespace bdata = boost::unit_test::data;

namespace {

// Oracle for the components: union-find over the edge list, then labels in order of each component's
// smallest node (the order Graph promises).
std::vector<Index> component_oracle(Index n, const std::vector<Edge>& edges) {
  std::vector<Index> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](Index v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const Edge& e : edges) {
    const Index a = find(e.head), b = find(e.tail);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  std::map<Index, Index> label_of_root;
  std::vector<Index> label(static_cast<std::size_t>(n));
  for (Index v = 0; v < n; ++v) {
    const Index r = find(v);
    const auto it = label_of_root.emplace(r, static_cast<Index>(label_of_root.size())).first;
    label[v] = it->second;
  }
  return label;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(graph)

BOOST_AUTO_TEST_CASE(triangle_basic_queries) {
  const Graph g(3, {{0, 1}, {1, 2}, {2, 0}});
  BOOST_TEST(g.num_nodes() == 3);
  BOOST_TEST(g.num_edges() == 3);
  BOOST_TEST(g.edge(2).head == 2);
  BOOST_TEST(g.edge(2).tail == 0);
  BOOST_TEST(g.degree(0) == 2);
  BOOST_TEST(g.min_degree() == 2);
  BOOST_TEST(g.max_degree() == 2);
  BOOST_TEST(g.num_components() == 1);
  BOOST_TEST(g.has_cycles());
  BOOST_TEST(g.sum_squared_degrees() == 12);
  BOOST_TEST(g.num_isolated() == 0);
  BOOST_TEST(g.summary() == "graph with 3 nodes, 3 edges, degree 2..2, 1 component");
}

BOOST_AUTO_TEST_CASE(single_node_without_edges_is_a_valid_graph) {
  const Graph g(1, {});
  BOOST_TEST(g.num_edges() == 0);
  BOOST_TEST(g.num_components() == 1);
  BOOST_TEST(g.num_isolated() == 1);
  BOOST_TEST(!g.has_cycles());
  BOOST_TEST(g.incidence_offsets() == std::vector<Index>({0, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(isolated_nodes_and_components_are_reported) {
  // 0-1-2 a path, 3 isolated, 4-5 an edge, 6 isolated: four components.
  const Graph g(7, {{0, 1}, {2, 1}, {4, 5}});
  BOOST_TEST(g.num_components() == 4);
  BOOST_TEST(g.num_isolated() == 2);
  BOOST_TEST(g.component_labels() == std::vector<Index>({0, 0, 0, 1, 2, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(g.component_sizes() == std::vector<Index>({3, 1, 2, 1}), boost::test_tools::per_element());
  BOOST_TEST(!g.has_cycles());  // a forest: |E| = |V| - #components
  BOOST_TEST(g.min_degree() == 0);
  BOOST_TEST(g.summary() == "graph with 7 nodes, 3 edges, degree 0..2, 4 components (2 isolated nodes)");
}

BOOST_AUTO_TEST_CASE(has_cycles_counts_independent_cycles) {
  BOOST_TEST(!Graph(4, {{0, 1}, {1, 2}, {2, 3}}).has_cycles());
  BOOST_TEST(Graph(4, {{0, 1}, {1, 2}, {2, 0}}).has_cycles());  // triangle plus an isolated node
  BOOST_TEST(!Graph(5, {{0, 1}, {2, 3}, {3, 4}}).has_cycles());
}

// The CSR incidence lists exactly the edges at each node, in increasing edge id, with the other end and the
// sign B[v, e] (+1 at the head, -1 at the tail); the oracle is read straight off the edge list.
BOOST_DATA_TEST_CASE(csr_incidence_matches_edge_list, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const Index n = g.num_nodes();
  std::vector<std::vector<std::tuple<Index, Index, int>>> expected(static_cast<std::size_t>(n));
  for (Index e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edges()[e];
    expected[ed.head].emplace_back(e, ed.tail, +1);
    expected[ed.tail].emplace_back(e, ed.head, -1);
  }
  const auto& off = g.incidence_offsets();
  BOOST_TEST_REQUIRE(off.size() == static_cast<std::size_t>(n) + 1);
  BOOST_TEST(off.front() == 0);
  BOOST_TEST(off.back() == 2 * g.num_edges());
  BOOST_TEST(g.incidence_edges().size() == 2 * static_cast<std::size_t>(g.num_edges()));
  BOOST_TEST(g.incidence_neighbors().size() == 2 * static_cast<std::size_t>(g.num_edges()));
  BOOST_TEST(g.incidence_signs().size() == 2 * static_cast<std::size_t>(g.num_edges()));
  std::int64_t sum_sq = 0;
  for (Index v = 0; v < n; ++v) {
    std::vector<std::tuple<Index, Index, int>> got;
    for (Index p = off[v]; p < off[v + 1]; ++p)
      got.emplace_back(g.incidence_edges()[p], g.incidence_neighbors()[p], g.incidence_signs()[p]);
    BOOST_TEST((got == expected[v]), "incidence of node " << v);
    BOOST_TEST(g.degree(v) == static_cast<Index>(expected[v].size()));
    sum_sq += static_cast<std::int64_t>(expected[v].size()) * static_cast<std::int64_t>(expected[v].size());
  }
  BOOST_TEST(g.sum_squared_degrees() == sum_sq);
  std::size_t lo = expected[0].size(), hi = lo, isolated = 0;
  for (const auto& x : expected) {
    lo = std::min(lo, x.size());
    hi = std::max(hi, x.size());
    isolated += x.empty();
  }
  BOOST_TEST(g.min_degree() == static_cast<Index>(lo));
  BOOST_TEST(g.max_degree() == static_cast<Index>(hi));
  BOOST_TEST(g.num_isolated() == static_cast<Index>(isolated));
}

BOOST_DATA_TEST_CASE(components_match_union_find, bdata::make(dualgibbs::testing::family_names()), name) {
  const Graph g = dualgibbs::testing::make_family(name);
  const std::vector<Index> labels = component_oracle(g.num_nodes(), g.edges());
  BOOST_TEST(g.component_labels() == labels, boost::test_tools::per_element());
  const Index count = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
  BOOST_TEST(g.num_components() == count);
  const auto sizes = g.component_sizes();
  BOOST_TEST(std::accumulate(sizes.begin(), sizes.end(), Index{0}) == g.num_nodes());
  BOOST_TEST(g.has_cycles() == (g.num_edges() > g.num_nodes() - count));
}

BOOST_AUTO_TEST_CASE(rejects_empty_graph) {
  BOOST_CHECK_EXCEPTION(Graph(0, {}), std::invalid_argument, message_has({"Graph", "empty", "0 nodes"}));
  BOOST_CHECK_EXCEPTION(Graph(-3, {}), std::invalid_argument, message_has({"Graph", "-3 nodes"}));
}

BOOST_AUTO_TEST_CASE(rejects_self_loop) {
  BOOST_CHECK_EXCEPTION((Graph(3, {{0, 1}, {2, 2}})), std::invalid_argument,
                        message_has({"edge 1 (2, 2)", "self-loop"}));
}

BOOST_AUTO_TEST_CASE(rejects_duplicate_edge_in_either_orientation) {
  BOOST_CHECK_EXCEPTION((Graph(3, {{0, 1}, {1, 2}, {0, 1}})), std::invalid_argument,
                        message_has({"edge 2 (0, 1) duplicates edge 0 (0, 1)"}));
  BOOST_CHECK_EXCEPTION((Graph(3, {{0, 1}, {1, 2}, {2, 1}})), std::invalid_argument,
                        message_has({"edge 2 (2, 1) duplicates edge 1 (1, 2)"}));
}

BOOST_AUTO_TEST_CASE(rejects_node_ids_out_of_range) {
  BOOST_CHECK_EXCEPTION((Graph(3, {{0, 3}})), std::invalid_argument, message_has({"edge 0 (0, 3)", "outside 0..2"}));
  BOOST_CHECK_EXCEPTION((Graph(3, {{-1, 2}})), std::invalid_argument, message_has({"edge 0 (-1, 2)", "outside 0..2"}));
  BOOST_CHECK_EXCEPTION((Graph(3, {{0, 1}, {1, 2147483647}})), std::invalid_argument,
                        message_has({"edge 1", "outside 0..2"}));
}

BOOST_AUTO_TEST_SUITE_END()
