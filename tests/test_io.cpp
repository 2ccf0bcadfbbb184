#define BOOST_TEST_MODULE io
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

const std::string kData = DUALGIBBS_SOURCE_DIR "/tests/data/";

LoadedGraph edges_from(const std::string& text, const ReadLimits& limits = {}) {
  std::istringstream in(text);
  return read_edge_list(in, "g.txt", limits);
}

std::vector<double> nodes_from(const std::string& text, Index n) {
  std::istringstream in(text);
  return read_node_file(in, n, "n.txt");
}

LoadedGraph mtx_from(const std::string& text, const ReadLimits& limits = {}) {
  std::istringstream in(text);
  return read_matrix_market(in, "m.mtx", limits);
}

std::vector<std::pair<Index, Index>> oriented(const Graph& g) {
  std::vector<std::pair<Index, Index>> v;
  for (const Edge& e : g.edges()) v.emplace_back(e.head, e.tail);
  return v;
}

bool same_edges(const Graph& a, const Graph& b) { return a.num_nodes() == b.num_nodes() && oriented(a) == oriented(b); }

using P = std::vector<std::pair<Index, Index>>;

}  // namespace

BOOST_AUTO_TEST_SUITE(edge_list)

BOOST_AUTO_TEST_CASE(reads_edges_sigmas_comments_and_blank_lines) {
  const auto lg = edges_from("# header comment\n\n0 1 0.5\r\n  1\t2   # no sigma here\n+2 4 1e-1\n");
  BOOST_TEST(lg.graph.num_nodes() == 5);  // 1 + the largest id; node 3 is isolated
  BOOST_TEST((oriented(lg.graph) == P{{0, 1}, {1, 2}, {2, 4}}));
  BOOST_TEST_REQUIRE(lg.edge_sigma.size() == 3u);
  BOOST_TEST(lg.edge_sigma[0] == 0.5);
  BOOST_TEST(std::isnan(lg.edge_sigma[1]));
  BOOST_TEST(lg.edge_sigma[2] == 0.1);
  BOOST_TEST(lg.graph.num_isolated() == 1);
  BOOST_TEST(lg.graph.num_components() == 2);
}

BOOST_AUTO_TEST_CASE(byte_order_mark_is_skipped) {
  BOOST_TEST((oriented(edges_from("\xEF\xBB\xBF"
                                  "0 1\n1 2\n")
                           .graph) == P{{0, 1}, {1, 2}}));
}

BOOST_AUTO_TEST_CASE(last_line_without_newline) { BOOST_TEST(edges_from("0 1\n1 2").graph.num_edges() == 2); }

BOOST_AUTO_TEST_CASE(rejects_empty_input) {
  BOOST_CHECK_EXCEPTION(edges_from(""), std::invalid_argument, message_has({"g.txt", "no edges (empty graph)"}));
  BOOST_CHECK_EXCEPTION(edges_from("# only a comment\n\n   \n"), std::invalid_argument,
                        message_has({"g.txt", "empty graph"}));
}

BOOST_AUTO_TEST_CASE(rejects_self_loop_with_line_number) {
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2\n2 2\n"), std::invalid_argument,
                        message_has({"g.txt:3: self-loop at node 2"}));
}

BOOST_AUTO_TEST_CASE(rejects_duplicate_edge_with_both_line_numbers) {
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2\n# c\n0 1\n"), std::invalid_argument,
                        message_has({"g.txt:4: duplicate edge (0, 1), first given on line 1"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2\n2 1 0.5\n"), std::invalid_argument,
                        message_has({"g.txt:3: duplicate edge (2, 1), first given on line 2"}));
}

BOOST_AUTO_TEST_CASE(rejects_node_ids_negative_out_of_range_or_absurd) {
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n-1 2\n"), std::invalid_argument,
                        message_has({"g.txt:2: negative node id -1"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 1000000000000\n"), std::invalid_argument,
                        message_has({"g.txt:2: node id 1000000000000 exceeds the limit of 100000000 nodes"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 99999999999999999999\n"), std::invalid_argument,
                        message_has({"g.txt:1: node id '99999999999999999999' is too large"}));
  ReadLimits small;
  small.max_nodes = 1000;
  BOOST_CHECK_EXCEPTION(edges_from("0 999\n5 1000\n", small), std::invalid_argument,
                        message_has({"g.txt:2: node id 1000 exceeds the limit of 1000 nodes"}));
}

BOOST_AUTO_TEST_CASE(rejects_malformed_and_truncated_lines) {
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1.5 2\n"), std::invalid_argument,
                        message_has({"g.txt:2: node id '1.5' is not an integer"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 x\n"), std::invalid_argument,
                        message_has({"g.txt:1: node id 'x' is not an integer"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n2\n"), std::invalid_argument,
                        message_has({"g.txt:2: expected 'u v [sigma_e]', found 1 fields"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2 0.5 7\n"), std::invalid_argument,
                        message_has({"g.txt:2:", "found 4 fields"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2\n3"), std::invalid_argument, message_has({"g.txt:3:", "found 1 fields"}));
  // Binary junk is named without echoing control bytes.
  BOOST_CHECK_EXCEPTION(edges_from(std::string("0 1\n\x01\x02\x00z 3\n", 10)), std::invalid_argument,
                        message_has({"g.txt:2: node id '???z' is not an integer"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 " + std::string(2 << 20, '1') + "\n"), std::invalid_argument,
                        message_has({"g.txt:1: line longer than 1 MiB"}));
}

BOOST_AUTO_TEST_CASE(rejects_bad_edge_standard_deviations) {
  BOOST_CHECK_EXCEPTION(edges_from("0 1 0\n"), std::invalid_argument,
                        message_has({"g.txt:1: sigma_e '0' must be a finite positive standard deviation"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 1\n1 2 -0.5\n"), std::invalid_argument,
                        message_has({"g.txt:2: sigma_e '-0.5' must be"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 nan\n"), std::invalid_argument, message_has({"g.txt:1: sigma_e 'nan'"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 inf\n"), std::invalid_argument, message_has({"g.txt:1: sigma_e 'inf'"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 abc\n"), std::invalid_argument,
                        message_has({"g.txt:1: sigma_e 'abc' is not a number"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 1e-200\n"), std::invalid_argument,
                        message_has({"g.txt:1: sigma_e '1e-200'", "underflows"}));
  BOOST_CHECK_EXCEPTION(edges_from("0 1 1e999\n"), std::invalid_argument, message_has({"g.txt:1: sigma_e '1e999'"}));
}

BOOST_AUTO_TEST_CASE(rejects_more_edges_than_the_limit) {
  ReadLimits small;
  small.max_edges = 2;
  BOOST_CHECK_EXCEPTION(edges_from("0 1\n1 2\n2 3\n", small), std::invalid_argument,
                        message_has({"g.txt:3: more than 2 edges"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(node_file)

BOOST_AUTO_TEST_CASE(reads_per_node_standard_deviations) {
  const auto s = nodes_from("# v s_v\n3 0.5\n\n0 2 # comment\n", 5);
  BOOST_TEST_REQUIRE(s.size() == 5u);
  BOOST_TEST(s[0] == 2.0);
  BOOST_TEST(s[3] == 0.5);
  BOOST_TEST((std::isnan(s[1]) && std::isnan(s[2]) && std::isnan(s[4])));
  BOOST_TEST(nodes_from("", 3).size() == 3u);
}

BOOST_AUTO_TEST_CASE(rejects_bad_lines_with_line_numbers) {
  BOOST_CHECK_EXCEPTION(nodes_from("0 1\n5 1\n", 5), std::invalid_argument,
                        message_has({"n.txt:2: node id 5 is outside the graph's 0..4"}));
  BOOST_CHECK_EXCEPTION(nodes_from("-1 1\n", 5), std::invalid_argument,
                        message_has({"n.txt:1: node id -1 is outside"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 1\n1 1\n0 2\n", 5), std::invalid_argument,
                        message_has({"n.txt:3: node 0 given twice (first on line 1)"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 1\n1\n", 5), std::invalid_argument,
                        message_has({"n.txt:2: expected 'v s_v', found 1 fields"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 1 2\n", 5), std::invalid_argument, message_has({"n.txt:1:", "found 3 fields"}));
  BOOST_CHECK_EXCEPTION(nodes_from("a 1\n", 5), std::invalid_argument,
                        message_has({"n.txt:1: node id 'a' is not an integer"}));
  BOOST_CHECK_EXCEPTION(nodes_from("123456789012345678901 1\n", 5), std::invalid_argument,
                        message_has({"n.txt:1:", "is too large"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 -2\n", 5), std::invalid_argument,
                        message_has({"n.txt:1: s_v '-2' must be a finite positive"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 0\n", 5), std::invalid_argument, message_has({"n.txt:1: s_v '0'"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 NaN\n", 5), std::invalid_argument, message_has({"n.txt:1: s_v 'NaN'"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 -inf\n", 5), std::invalid_argument, message_has({"n.txt:1: s_v '-inf'"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 one\n", 5), std::invalid_argument,
                        message_has({"n.txt:1: s_v 'one' is not a number"}));
  BOOST_CHECK_EXCEPTION(nodes_from("0 1e200\n", 5), std::invalid_argument,
                        message_has({"n.txt:1: s_v '1e200'", "overflows"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(observation_file)

std::vector<double> obs_from(const std::string& text, Index n) {
  std::istringstream in(text);
  return read_observation_file(in, n, "z.txt");
}

BOOST_AUTO_TEST_CASE(reads_observations_of_any_sign) {
  const auto z = obs_from("# v z_v\n3 -0.5\n\n0 0 # zero is an observation\n1 1e3\n", 5);
  BOOST_TEST_REQUIRE(z.size() == 5u);
  BOOST_TEST(z[0] == 0.0);
  BOOST_TEST(z[1] == 1000.0);
  BOOST_TEST(z[3] == -0.5);
  BOOST_TEST((std::isnan(z[2]) && std::isnan(z[4])));
}

BOOST_AUTO_TEST_CASE(rejects_bad_lines_with_line_numbers) {
  BOOST_CHECK_EXCEPTION(obs_from("0 1\n5 1\n", 5), std::invalid_argument,
                        message_has({"z.txt:2: node id 5 is outside the graph's 0..4"}));
  BOOST_CHECK_EXCEPTION(obs_from("0 1\n0 2\n", 5), std::invalid_argument,
                        message_has({"z.txt:2: node 0 given twice (first on line 1)"}));
  BOOST_CHECK_EXCEPTION(obs_from("0\n", 5), std::invalid_argument,
                        message_has({"z.txt:1: expected 'v z_v', found 1 fields"}));
  BOOST_CHECK_EXCEPTION(obs_from("0 nan\n", 5), std::invalid_argument,
                        message_has({"z.txt:1: observation z_v 'nan' is not finite"}));
  BOOST_CHECK_EXCEPTION(obs_from("0 inf\n", 5), std::invalid_argument, message_has({"z.txt:1:", "not finite"}));
  BOOST_CHECK_EXCEPTION(obs_from("0 1e999\n", 5), std::invalid_argument, message_has({"z.txt:1:"}));
  BOOST_CHECK_EXCEPTION(obs_from("0 pixel\n", 5), std::invalid_argument,
                        message_has({"z.txt:1: z_v 'pixel' is not a number"}));
  BOOST_CHECK_EXCEPTION(obs_from("x 1\n", 5), std::invalid_argument,
                        message_has({"z.txt:1: node id 'x' is not an integer"}));
}

BOOST_AUTO_TEST_CASE(read_observations_fills_unobserved_nodes_with_zero) {
  const std::string path = DUALGIBBS_BINARY_DIR "/test_io_observations.txt";
  {
    std::ofstream out(path);
    out << "2 4.5\n0 -1\n";
  }
  const Observations obs = read_observations(path, 4);
  BOOST_TEST(obs.observed == 2);
  BOOST_TEST(obs.z[0] == -1.0);
  BOOST_TEST(obs.z[1] == 0.0);
  BOOST_TEST(obs.z[2] == 4.5);
  BOOST_TEST(obs.z[3] == 0.0);
  std::remove(path.c_str());
  BOOST_CHECK_EXCEPTION(read_observations(path, 4), std::invalid_argument,
                        message_has({"cannot open observation file"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(matrix_market)

BOOST_AUTO_TEST_CASE(pattern_symmetric_off_diagonal_pattern_is_the_graph) {
  const auto lg = mtx_from("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n\n4 4 4\n1 1\n2 1\n4 2\n3 3\n");
  BOOST_TEST(lg.graph.num_nodes() == 4);
  BOOST_TEST((oriented(lg.graph) == P{{0, 1}, {1, 3}}));  // (min, max), 0-based
  BOOST_TEST(lg.graph.num_components() == 2);             // node 2 only has a diagonal entry: isolated
  BOOST_TEST(lg.edge_sigma.size() == 2u);
}

BOOST_AUTO_TEST_CASE(general_matrix_takes_each_mirrored_pair_once) {
  const auto lg = mtx_from(
      "%%MatrixMarket Matrix Coordinate Real General\n3 3 6\n1 2 -1\n2 1 -1\n2 3 -1.5\n3 2 -1.5\n1 1 2\n3 3 1e0\n");
  BOOST_TEST((oriented(lg.graph) == P{{0, 1}, {1, 2}}));
  const auto li = mtx_from("%%MatrixMarket matrix coordinate integer symmetric\n3 3 1\n3 1 -4\n");
  BOOST_TEST((oriented(li.graph) == P{{0, 2}}));
}

BOOST_AUTO_TEST_CASE(rejects_bad_headers) {
  BOOST_CHECK_EXCEPTION(mtx_from(""), std::invalid_argument, message_has({"m.mtx", "empty file"}));
  BOOST_CHECK_EXCEPTION(mtx_from("0 1\n1 2\n"), std::invalid_argument,
                        message_has({"m.mtx:1: not a Matrix Market header"}));
  BOOST_CHECK_EXCEPTION(mtx_from("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"), std::invalid_argument,
                        message_has({"m.mtx:1:", "coordinate", "'array'"}));
  BOOST_CHECK_EXCEPTION(mtx_from("%%MatrixMarket matrix coordinate complex symmetric\n"), std::invalid_argument,
                        message_has({"m.mtx:1: field 'complex' is not supported"}));
  BOOST_CHECK_EXCEPTION(mtx_from("%%MatrixMarket matrix coordinate real hermitian\n"), std::invalid_argument,
                        message_has({"m.mtx:1: symmetry 'hermitian' is not supported"}));
}

BOOST_AUTO_TEST_CASE(rejects_bad_size_lines) {
  const std::string h = "%%MatrixMarket matrix coordinate pattern symmetric\n";
  BOOST_CHECK_EXCEPTION(mtx_from(h + "% only comments\n"), std::invalid_argument,
                        message_has({"m.mtx:2: truncated: no size line"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "3 3\n"), std::invalid_argument, message_has({"m.mtx:2: expected the size line"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "3 4 1\n1 2\n"), std::invalid_argument,
                        message_has({"m.mtx:2: the matrix is 3 x 4, not square"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "0 0 0\n"), std::invalid_argument,
                        message_has({"m.mtx:2: the matrix has no rows (empty graph)"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "3000000000 3000000000 1\n1 2\n"), std::invalid_argument,
                        message_has({"m.mtx:2: 3000000000 rows exceed the limit of 100000000 nodes"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "99999999999999999999 99999999999999999999 1\n"), std::invalid_argument,
                        message_has({"m.mtx:2: expected the size line"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "3 3 -1\n"), std::invalid_argument, message_has({"m.mtx:2: -1 entries"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "3 3 900000000000\n"), std::invalid_argument,
                        message_has({"m.mtx:2: 900000000000 entries exceed"}));
}

BOOST_AUTO_TEST_CASE(rejects_bad_entries_with_line_numbers) {
  const std::string h = "%%MatrixMarket matrix coordinate pattern symmetric\n";
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 5\n2 1\n3 2\n4 3\n"), std::invalid_argument,
                        message_has({"m.mtx: truncated: 5 entries declared, 3 found"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 2\n2 1\n5 1\n"), std::invalid_argument,
                        message_has({"m.mtx:4: index (5, 1) outside 1..4"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 2\n2 1\n0 1\n"), std::invalid_argument,
                        message_has({"m.mtx:4: index (0, 1) outside 1..4"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 2\n2 1\n3 2 1.0\n"), std::invalid_argument,
                        message_has({"m.mtx:4: expected 'i j', found 3 fields"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 2\n2 1\n3 x\n"), std::invalid_argument,
                        message_has({"m.mtx:4: column index 'x' is not an integer"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 2\n2 1\n3 2\n4 3\n"), std::invalid_argument,
                        message_has({"m.mtx:5: more entries than the 2 declared"}));
  BOOST_CHECK_EXCEPTION(mtx_from(h + "4 4 3\n2 1\n3 2\n2 1\n"), std::invalid_argument,
                        message_has({"m.mtx:5: duplicate entry (2, 1), first on line 3"}));
  BOOST_CHECK_EXCEPTION(
      mtx_from(h + "4 4 2\n2 1\n1 2\n"), std::invalid_argument,
      message_has({"m.mtx:4: duplicate entry (1, 2), first on line 3"}));  // both triangles of a symmetric file
  const std::string r = "%%MatrixMarket matrix coordinate real general\n";
  BOOST_CHECK_EXCEPTION(mtx_from(r + "3 3 1\n1 2 nan\n"), std::invalid_argument,
                        message_has({"m.mtx:3: value 'nan' is not a finite number"}));
  BOOST_CHECK_EXCEPTION(mtx_from(r + "3 3 1\n1 2\n"), std::invalid_argument,
                        message_has({"m.mtx:3: expected 'i j value', found 2 fields"}));
  BOOST_CHECK_EXCEPTION(mtx_from(r + "3 3 3\n1 2 1\n2 1 1\n2 3 1\n"), std::invalid_argument,
                        message_has({"m.mtx:5: general matrix without the mirror of this entry"}));
  BOOST_CHECK_EXCEPTION(mtx_from(r + "3 3 3\n1 2 1\n2 1 1\n1 2 1\n"), std::invalid_argument,
                        message_has({"m.mtx:5: duplicate entry (1, 2), first on line 3"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(specs)

BOOST_AUTO_TEST_CASE(every_family_spec_builds_the_generator_graph) {
  BOOST_TEST(same_edges(load_graph("torus:4").graph, make_torus(4, 4)));
  BOOST_TEST(same_edges(load_graph("torus:4x5").graph, make_torus(4, 5)));
  BOOST_TEST(same_edges(load_graph("grid:3x4").graph, make_grid(3, 4)));
  BOOST_TEST(same_edges(load_graph("grid:3").graph, make_grid(3, 3)));
  BOOST_TEST(same_edges(load_graph("path:5").graph, make_path(5)));
  BOOST_TEST(same_edges(load_graph("cycle:5").graph, make_cycle(5)));
  BOOST_TEST(same_edges(load_graph("complete:5").graph, make_complete(5)));
  BOOST_TEST(same_edges(load_graph("bipartite:2,3").graph, make_complete_bipartite(2, 3)));
  BOOST_TEST(same_edges(load_graph("star:5").graph, make_star(5)));
  BOOST_TEST(same_edges(load_graph("hypercube:3").graph, make_hypercube(3)));
  BOOST_TEST(same_edges(load_graph("torus3:4").graph, make_torus3(4, 4, 4)));
  BOOST_TEST(same_edges(load_graph("torus3:3x4x5").graph, make_torus3(3, 4, 5)));
  BOOST_TEST(same_edges(load_graph("kregular:10,3,7").graph, make_random_regular(10, 3, 7)));
  BOOST_TEST(same_edges(load_graph("ws:12,4,0.25,9").graph, make_watts_strogatz(12, 4, 0.25, 9)));
  BOOST_TEST(same_edges(load_graph("er:12,0.3,5").graph, make_erdos_renyi(12, 0.3, 5)));
  BOOST_TEST(same_edges(load_graph("ba:12,2,5").graph, make_barabasi_albert(12, 2, 5)));
  // Random families without a seed take the default seed.
  BOOST_TEST(same_edges(load_graph("kregular:10,3", 42).graph, make_random_regular(10, 3, 42)));
  BOOST_TEST(same_edges(load_graph("ws:12,4,0.25", 42).graph, make_watts_strogatz(12, 4, 0.25, 42)));
  BOOST_TEST(same_edges(load_graph("er:12,0.3", 42).graph, make_erdos_renyi(12, 0.3, 42)));
  BOOST_TEST(same_edges(load_graph("ba:12,2", 42).graph, make_barabasi_albert(12, 2, 42)));
  const auto lg = load_graph("torus:3");
  BOOST_TEST(lg.edge_sigma.size() == 18u);
  BOOST_TEST(std::isnan(lg.edge_sigma[0]));
}

BOOST_AUTO_TEST_CASE(file_specs_read_edge_lists_and_matrix_market) {
  const auto el = load_graph("file:" + kData + "hetero_edges.txt");
  BOOST_TEST((oriented(el.graph) == P{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {3, 4}}));
  const auto mm = load_graph("file:" + kData + "small_pattern.mtx");
  BOOST_TEST(mm.graph.num_nodes() == 5);
  BOOST_TEST((oriented(mm.graph) == P{{0, 1}, {1, 2}, {2, 3}}));
  BOOST_TEST(mm.graph.num_components() == 2);
  const auto gm = load_graph("file:" + kData + "small_general.mtx");
  BOOST_TEST((oriented(gm.graph) == P{{0, 1}, {0, 2}, {1, 2}}));
  // A Matrix Market file without the .mtx extension is recognised by its banner.
  const std::string renamed = DUALGIBBS_BINARY_DIR "/tests/test_io_pattern_mtx.txt";
  {
    std::ifstream src(kData + "small_pattern.mtx", std::ios::binary);
    std::ofstream dst(renamed, std::ios::binary);
    dst << src.rdbuf();
  }
  BOOST_TEST(same_edges(load_graph("file:" + renamed).graph, mm.graph));
  std::remove(renamed.c_str());
  const auto dc = load_graph("file:" + kData + "disconnected.txt");
  BOOST_TEST(dc.graph.num_components() == 3);
  BOOST_TEST(dc.graph.num_isolated() == 1);
}

BOOST_AUTO_TEST_CASE(rejects_unknown_and_malformed_specs) {
  BOOST_CHECK_EXCEPTION(load_graph("moebius:5"), std::invalid_argument,
                        message_has({"graph spec 'moebius:5'", "unknown graph family 'moebius'"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus"), std::invalid_argument, message_has({"graph spec 'torus'", "FAMILY:ARGS"}));
  BOOST_CHECK_EXCEPTION(load_graph(""), std::invalid_argument, message_has({"graph spec ''"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:"), std::invalid_argument, message_has({"side '' is not an integer"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:abc"), std::invalid_argument, message_has({"side 'abc' is not an integer"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:4x"), std::invalid_argument, message_has({"side '' is not an integer"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:4x5x6"), std::invalid_argument,
                        message_has({"expected torus:N or torus:NxM"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:2"), std::invalid_argument, message_has({"torus: sides must be at least 3"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:-4"), std::invalid_argument, message_has({"side = -4 is out of range"}));
  BOOST_CHECK_EXCEPTION(load_graph("path:5,6"), std::invalid_argument, message_has({"expected path:N"}));
  BOOST_CHECK_EXCEPTION(load_graph("bipartite:3"), std::invalid_argument, message_has({"expected bipartite:N1,N2"}));
  BOOST_CHECK_EXCEPTION(load_graph("kregular:10"), std::invalid_argument,
                        message_has({"expected kregular:N,K[,SEED]"}));
  BOOST_CHECK_EXCEPTION(load_graph("kregular:10,3,-1"), std::invalid_argument,
                        message_has({"seed '-1' is not a non-negative integer"}));
  BOOST_CHECK_EXCEPTION(load_graph("kregular:10,3,1,2"), std::invalid_argument, message_has({"expected kregular"}));
  BOOST_CHECK_EXCEPTION(load_graph("ws:10,4"), std::invalid_argument, message_has({"expected ws:N,K,P[,SEED]"}));
  BOOST_CHECK_EXCEPTION(load_graph("ws:10,4,x"), std::invalid_argument, message_has({"P 'x' is not a number"}));
  BOOST_CHECK_EXCEPTION(load_graph("er:10,1.5"), std::invalid_argument,
                        message_has({"probability P must be in [0, 1]"}));
  BOOST_CHECK_EXCEPTION(load_graph("er:10,nan"), std::invalid_argument,
                        message_has({"probability P must be in [0, 1]"}));
  BOOST_CHECK_EXCEPTION(load_graph("ba:10,10"), std::invalid_argument, message_has({"ba: need 1 <= m < n"}));
  BOOST_CHECK_EXCEPTION(load_graph("hypercube:40"), std::invalid_argument,
                        message_has({"dimension D = 40 is not in 0..26"}));
  BOOST_CHECK_EXCEPTION(load_graph("star:1.5"), std::invalid_argument, message_has({"N '1.5' is not an integer"}));
}

BOOST_AUTO_TEST_CASE(rejects_sizes_over_the_limits_before_allocating) {
  BOOST_CHECK_EXCEPTION(
      load_graph("torus:100000"), std::invalid_argument,
      message_has({"graph spec 'torus:100000': asks for 10000000000 nodes, over the limit of 100000000"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus:99999999999999x99999999999999"), std::invalid_argument,
                        message_has({"asks for 1e+28 nodes"}));
  BOOST_CHECK_EXCEPTION(load_graph("path:99999999999999999999"), std::invalid_argument,
                        message_has({"N '99999999999999999999' is not an integer"}));
  BOOST_CHECK_EXCEPTION(load_graph("path:2147483648"), std::invalid_argument,
                        message_has({"asks for 2147483648 nodes"}));
  BOOST_CHECK_EXCEPTION(load_graph("complete:100000"), std::invalid_argument,
                        message_has({"asks for about 4999950000 edges"}));
  BOOST_CHECK_EXCEPTION(load_graph("bipartite:-100000,-100000"), std::invalid_argument,
                        message_has({"edges, over the limit"}));
  BOOST_CHECK_EXCEPTION(load_graph("hypercube:26"), std::invalid_argument,
                        message_has({"edges, over the limit of 100000000"}));
  BOOST_CHECK_EXCEPTION(load_graph("kregular:1000000000,3"), std::invalid_argument, message_has({"over the limit"}));
  BOOST_CHECK_EXCEPTION(load_graph("er:1000000,0.5"), std::invalid_argument, message_has({"edges, over the limit"}));
  ReadLimits small;
  small.max_nodes = 100;
  small.max_edges = 1000;
  BOOST_CHECK_EXCEPTION(load_graph("torus:20", 1, small), std::invalid_argument,
                        message_has({"asks for 400 nodes, over the limit of 100"}));
  BOOST_CHECK_EXCEPTION(load_graph("complete:50", 1, small), std::invalid_argument,
                        message_has({"asks for about 1225 edges, over the limit of 1000"}));
}

// The parsed form of every family: parse_graph_spec() is the only reader of spec text; load_graph(GraphSpec)
// builds what load_graph(text) builds.
BOOST_AUTO_TEST_CASE(parse_graph_spec_gives_family_and_arguments) {
  const GraphSpec t = parse_graph_spec("torus:30");
  BOOST_TEST((t.family == GraphFamily::Torus));
  BOOST_TEST((t.sizes == std::vector<Index>{30, 30}));
  BOOST_TEST(t.text == "torus:30");
  BOOST_TEST(!t.seed.has_value());
  BOOST_TEST(std::isnan(t.probability));
  BOOST_TEST((parse_graph_spec("torus:4x5").sizes == std::vector<Index>{4, 5}));
  BOOST_TEST((parse_graph_spec("grid:3").sizes == std::vector<Index>{3, 3}));
  BOOST_TEST((parse_graph_spec("star:20").family == GraphFamily::Star));
  BOOST_TEST((parse_graph_spec("star:20").sizes == std::vector<Index>{20}));
  BOOST_TEST((parse_graph_spec("bipartite:3,5").sizes == std::vector<Index>{3, 5}));
  BOOST_TEST((parse_graph_spec("hypercube:4").sizes == std::vector<Index>{4}));
  BOOST_TEST((parse_graph_spec("torus3:50").family == GraphFamily::Torus3));
  BOOST_TEST((parse_graph_spec("torus3:50").sizes == std::vector<Index>{50, 50, 50}));
  BOOST_TEST((parse_graph_spec("torus3:3x4x5").sizes == std::vector<Index>{3, 4, 5}));
  for (const char* bad : {"torus3:4x5", "torus3:3x4x5x6", "torus3:", "torus3:4,4,4"})
    BOOST_CHECK_EXCEPTION(parse_graph_spec(bad), std::invalid_argument, message_has({"torus3"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus3:2"), std::invalid_argument, message_has({"torus3", "at least 3"}));
  BOOST_CHECK_EXCEPTION(load_graph("torus3:1000"), std::invalid_argument, message_has({"over the limit"}));
  const GraphSpec k = parse_graph_spec("kregular:40,4,7");
  BOOST_TEST((k.family == GraphFamily::KRegular));
  BOOST_TEST((k.sizes == std::vector<Index>{40, 4}));
  BOOST_TEST(k.seed.value() == 7u);
  BOOST_TEST(!parse_graph_spec("kregular:40,4").seed.has_value());
  const GraphSpec w = parse_graph_spec("ws:30,4,0.25");
  BOOST_TEST((w.family == GraphFamily::WattsStrogatz));
  BOOST_TEST((w.sizes == std::vector<Index>{30, 4}));
  BOOST_TEST(w.probability == 0.25);
  const GraphSpec e = parse_graph_spec("er:12,0.3,5");
  BOOST_TEST((e.sizes == std::vector<Index>{12}));
  BOOST_TEST(e.probability == 0.3);
  BOOST_TEST(e.seed.value() == 5u);
  BOOST_TEST((parse_graph_spec("ba:12,2").sizes == std::vector<Index>{12, 2}));
  const GraphSpec f = parse_graph_spec("file:/no/such/file.txt");  // parsing does not open the file
  BOOST_TEST((f.family == GraphFamily::File));
  BOOST_TEST(f.path == "/no/such/file.txt");
  BOOST_TEST(f.sizes.empty());
  // to_string(GraphFamily) gives the spec's own name back.
  for (const char* text :
       {"torus:4", "grid:3", "path:5", "cycle:5", "complete:5", "bipartite:2,3", "star:5", "kregular:10,3",
        "ws:12,4,0.25", "er:12,0.3", "ba:12,2", "hypercube:3", "torus3:3", "file:x"}) {
    const std::string t = text;
    BOOST_TEST(to_string(parse_graph_spec(t).family) == t.substr(0, t.find(':')));
  }
}

BOOST_AUTO_TEST_CASE(load_graph_builds_from_a_parsed_spec) {
  for (const char* text : {"torus:4x5", "grid:3x4", "path:5", "cycle:5", "complete:5", "bipartite:2,3", "star:5",
                           "hypercube:3", "kregular:10,3", "ws:12,4,0.25,9", "er:12,0.3", "ba:12,2,5"})
    BOOST_TEST(same_edges(load_graph(parse_graph_spec(text), 42).graph, load_graph(text, 42).graph), text);
  // A parsed spec's seed wins over the default; without one the default is used.
  BOOST_TEST(same_edges(load_graph(parse_graph_spec("kregular:10,3,7"), 42).graph, make_random_regular(10, 3, 7)));
  BOOST_TEST(same_edges(load_graph(parse_graph_spec("kregular:10,3"), 42).graph, make_random_regular(10, 3, 42)));
  // What the generator rejects is reported when building, as before.
  BOOST_CHECK_EXCEPTION(load_graph(parse_graph_spec("torus:2")), std::invalid_argument,
                        message_has({"torus: sides must be at least 3"}));
  // A hand-made spec with the wrong number of sizes.
  GraphSpec bad;
  bad.family = GraphFamily::Bipartite;
  bad.sizes = {3};
  BOOST_CHECK_EXCEPTION(load_graph(bad), std::invalid_argument,
                        message_has({"GraphSpec: bipartite takes 2 sizes, got 1"}));
  // The model from a parsed spec equals the model from its text.
  const Model a = load_model(parse_graph_spec("torus:4"), 1.5, 0.5), b = load_model("torus:4", 1.5, 0.5);
  BOOST_TEST(a.summary() == b.summary());
}

BOOST_AUTO_TEST_CASE(parse_graph_spec_rejects_what_load_graph_rejects) {
  BOOST_CHECK_EXCEPTION(parse_graph_spec("moebius:5"), std::invalid_argument,
                        message_has({"graph spec 'moebius:5'", "unknown graph family 'moebius'"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("torus"), std::invalid_argument, message_has({"FAMILY:ARGS"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("torus:4x5x6"), std::invalid_argument,
                        message_has({"expected torus:N or torus:NxM"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("torus:-4"), std::invalid_argument,
                        message_has({"side = -4 is out of range"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("kregular:10,3,-1"), std::invalid_argument,
                        message_has({"seed '-1' is not a non-negative integer"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("ws:10,4,x"), std::invalid_argument, message_has({"P 'x' is not a number"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("er:10,1.5"), std::invalid_argument,
                        message_has({"probability P must be in [0, 1]"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("hypercube:40"), std::invalid_argument, message_has({"not in 0..26"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("file:"), std::invalid_argument, message_has({"no path after 'file:'"}));
  BOOST_CHECK_EXCEPTION(parse_graph_spec("torus:100000"), std::invalid_argument,
                        message_has({"asks for 10000000000 nodes, over the limit of 100000000"}));
  ReadLimits small;
  small.max_nodes = 100;
  BOOST_CHECK_EXCEPTION(parse_graph_spec("torus:20", small), std::invalid_argument,
                        message_has({"asks for 400 nodes, over the limit of 100"}));
}

BOOST_AUTO_TEST_CASE(rejects_missing_files) {
  BOOST_CHECK_EXCEPTION(load_graph("file:"), std::invalid_argument, message_has({"no path after 'file:'"}));
  BOOST_CHECK_EXCEPTION(load_graph("file:/nonexistent/graph.txt"), std::invalid_argument,
                        message_has({"cannot open graph file '/nonexistent/graph.txt'"}));
  BOOST_CHECK_EXCEPTION(load_graph("file:" + kData), std::invalid_argument, message_has({"is a directory"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(models)

// hetero_edges.txt: edges (0,1) 0.5, (1,2) -, (2,3) 2.0, (3,0) 0.25, (3,4) 1.5; hetero_nodes.txt: s_0 = 2, s_4 = 0.5.
BOOST_AUTO_TEST_CASE(load_model_combines_files_and_defaults) {
  const Model m = load_model("file:" + kData + "hetero_edges.txt", 1.5, 0.75, kData + "hetero_nodes.txt");
  BOOST_TEST(!m.is_homogeneous());
  BOOST_TEST(m.node_sd() == std::vector<double>({2.0, 1.5, 1.5, 1.5, 0.5}), boost::test_tools::per_element());
  BOOST_TEST(m.edge_sd() == std::vector<double>({0.5, 0.75, 2.0, 0.25, 1.5}), boost::test_tools::per_element());
  // Q from the file's values by hand: diag 1/s_v^2 + sum 1/sigma_e^2 at v, off-diagonal -1/sigma_e^2.
  Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(5, 5);
  const double s[5] = {2.0, 1.5, 1.5, 1.5, 0.5};
  const int ends[5][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {3, 4}};
  const double sg[5] = {0.5, 0.75, 2.0, 0.25, 1.5};
  for (int v = 0; v < 5; ++v) Q(v, v) = 1 / (s[v] * s[v]);
  for (int e = 0; e < 5; ++e) {
    const int a = ends[e][0], b = ends[e][1];
    const double w = 1 / (sg[e] * sg[e]);
    Q(a, a) += w;
    Q(b, b) += w;
    Q(a, b) -= w;
    Q(b, a) -= w;
  }
  BOOST_TEST((Eigen::MatrixXd(m.primal_precision()) - Q).cwiseAbs().maxCoeff() <= 1e-14);
}

BOOST_AUTO_TEST_CASE(load_model_homogeneous_spec) {
  const Model m = load_model("torus:3x4", 2.0, 0.5);
  BOOST_TEST(m.is_homogeneous());
  BOOST_TEST(m.s() == 2.0);
  BOOST_TEST(m.sigma() == 0.5);
  BOOST_TEST(m.num_edges() == 24);
}

BOOST_AUTO_TEST_CASE(load_model_rejects_bad_parameters_and_node_files) {
  BOOST_CHECK_EXCEPTION(load_model("torus:3", -1.0, 0.5), std::invalid_argument, message_has({"s = -1"}));
  BOOST_CHECK_EXCEPTION(load_model("torus:3", 1.0, std::nan("")), std::invalid_argument, message_has({"sigma = nan"}));
  BOOST_CHECK_EXCEPTION(load_model("torus:3", 1.0, 0.5, std::string("/nonexistent/nodes.txt")), std::invalid_argument,
                        message_has({"cannot open node file '/nonexistent/nodes.txt'"}));
  // hetero_nodes.txt names node 4, and path:3 has nodes 0..2 only.
  BOOST_CHECK_EXCEPTION(load_model("path:3", 1.0, 0.5, kData + "hetero_nodes.txt"), std::invalid_argument,
                        message_has({"hetero_nodes.txt:3: node id 4 is outside the graph's 0..2"}));
}

BOOST_AUTO_TEST_SUITE_END()
