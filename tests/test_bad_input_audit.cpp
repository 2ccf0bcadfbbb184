// Bad-input audit (the table is docs/bad_input.md): the rows of the table that no module's own
// suite covered. Each case feeds one public entry point one bad input of docs/bad_input.md and checks the
// documented exception and a fragment of its message.
#define BOOST_TEST_MODULE bad_input_audit
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "test_support.hpp"

#include <Eigen/Core>

#include <array>

#include <cmath>
#include <istream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

// An endless stream: `head` once, then `fill` forever, never a newline. Counts the bytes handed out, so a test
// can check that a reader gave up after a bounded amount.
class EndlessBuf : public std::streambuf {
 public:
  EndlessBuf(std::string head, char fill) : m_head(std::move(head)), m_block(4096, fill) { next(); }
  std::size_t served() const noexcept { return m_served; }

 protected:
  int_type underflow() override {
    next();
    return traits_type::to_int_type(*gptr());
  }

 private:
  void next() {
    std::string& s = (!m_head_done && !m_head.empty()) ? m_head : m_block;
    m_head_done = true;
    setg(&s[0], &s[0], &s[0] + s.size());
    m_served += s.size();
  }
  std::string m_head, m_block;
  std::size_t m_served = 0;
  bool m_head_done = false;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(readers)

BOOST_AUTO_TEST_CASE(an_endless_line_is_rejected_after_about_a_mebibyte) {
  // A file of many gigabytes without a newline must not be read into memory first.
  {
    EndlessBuf buf("0 1\n", '7');
    std::istream in(&buf);
    BOOST_CHECK_EXCEPTION(read_edge_list(in, "endless"), std::invalid_argument,
                          message_has({"endless:2: line longer than 1 MiB"}));
    BOOST_TEST(buf.served() < (std::size_t{1} << 20) + 3 * 4096);
  }
  {
    EndlessBuf buf("", ' ');
    std::istream in(&buf);
    BOOST_CHECK_EXCEPTION(read_node_file(in, 10, "nodes"), std::invalid_argument,
                          message_has({"nodes:1: line longer than 1 MiB"}));
  }
  {
    EndlessBuf buf("%%MatrixMarket matrix coordinate pattern symmetric\n%", 'x');
    std::istream in(&buf);
    BOOST_CHECK_EXCEPTION(read_matrix_market(in, "mm"), std::invalid_argument,
                          message_has({"mm:2: line longer than 1 MiB"}));
  }
}

BOOST_AUTO_TEST_CASE(a_line_of_exactly_one_mebibyte_is_still_read) {
  // The limit is on the line, not the file: 2^20 characters of comment after an edge are accepted.
  std::string text = "0 1 #" + std::string((std::size_t{1} << 20) - 5, 'c') + "\n1 2\n";
  std::istringstream in(text);
  const LoadedGraph g = read_edge_list(in, "long");
  BOOST_TEST(g.graph.num_edges() == 2);
}

BOOST_AUTO_TEST_CASE(node_file_for_an_impossible_node_count) {
  std::istringstream in("0 1\n");
  BOOST_CHECK_EXCEPTION(read_node_file(in, 0, "nodes"), std::invalid_argument, message_has({"nodes:1", "node id 0"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(model)

BOOST_AUTO_TEST_CASE(homogeneous_accessors_refuse_a_heterogeneous_model) {
  const Model m(make_path(3), std::vector<double>{1.0, 2.0, 1.0}, std::vector<double>{1.0, 1.0});
  BOOST_CHECK_EXCEPTION(m.s(), std::logic_error, message_has({"Model::s()", "heterogeneous"}));
  const Model m2(make_path(3), std::vector<double>{1.0, 1.0, 1.0}, std::vector<double>{1.0, 3.0});
  BOOST_CHECK_EXCEPTION(m2.sigma(), std::logic_error, message_has({"Model::sigma()", "heterogeneous"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sampler)

BOOST_AUTO_TEST_CASE(all_zero_generator_state_is_refused) {
  BOOST_CHECK_EXCEPTION(ChainEngine(std::array<std::uint64_t, 4>{0, 0, 0, 0}), std::invalid_argument,
                        message_has({"all-zero state"}));
}

BOOST_AUTO_TEST_CASE(ensemble_refuses_a_state_matrix_larger_than_memory) {
  // 10^12 chains of a 9-node torus would need 72 TB for the states: refused before anything is allocated.
  const Model m(make_torus(3, 3), 1.0, 0.5);
  EnsembleOptions o;
  o.chains = 1'000'000'000'000;
  o.sweeps = 1;
  for (Domain d : {Domain::Primal, Domain::Dual})
    BOOST_CHECK_EXCEPTION(run_ensemble(m, d, o, Observer()), std::invalid_argument,
                          message_has({"run_ensemble", "1000000000000 chains", "memory"}));
  // The largest count representable: the byte count must not wrap around.
  o.chains = std::numeric_limits<std::size_t>::max();
  BOOST_CHECK_EXCEPTION(run_ensemble(m, Domain::Dual, o, Observer()), std::invalid_argument,
                        message_has({"run_ensemble", "memory"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(exact)

BOOST_AUTO_TEST_CASE(model_level_exact_functions_on_a_graph_without_edges) {
  // Isolated nodes only: the primal is valid (Q = D_s^-1), the dual domain is empty.
  const Model m(Graph(3, {}), 2.0, 1.0);
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  BOOST_TEST(var.size() == 3);
  BOOST_TEST(var[1] == 4.0);
  BOOST_CHECK_THROW(marginal_variances(m, Domain::Dual), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_dual(m), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_primal_edges(m), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
