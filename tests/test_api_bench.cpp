// Tests of api/bench.hpp: the command's defaults for chains and sweeps, the record's counts, and the checks.
#define BOOST_TEST_MODULE api_bench
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/bench.hpp>

#include <stdexcept>
#include <string>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

api::ModelSource source(const std::string& graph) {
  api::ModelSource s;
  s.graph = graph;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_give_two_full_blocks_per_thread_and_about_5e7_updates) {
  // torus:50 dual: 5000 edges, 2 x 16 x 2 = 64 chains, 5e7 / (64 x 5000) = 156 sweeps.
  api::BenchOptions o;
  o.repeat = 1;
  o.sweeps = 2;  // the default's formula is checked on a short run below
  const api::BenchResult r = api::bench(source("torus:50"), o, api::Execution{2, nullptr, {}});
  BOOST_TEST(r.record["chains"].get<std::size_t>() == 64u);
  BOOST_TEST(r.record["threads"].get<unsigned>() == 2u);
  BOOST_TEST(r.record["widest_block"].get<int>() == 16);
  BOOST_TEST(r.record["site_updates_per_iteration"].get<std::size_t>() == 5000u);
  BOOST_TEST(r.record["updates"].get<std::size_t>() == 64u * 2u * 5000u);
  BOOST_TEST(r.record["graph"].get<std::string>() == "torus:50");
  BOOST_TEST(r.record["domain"].get<std::string>() == "dual");
  BOOST_TEST(r.record["ns_per_update"].get<double>() > 0);
  o.sweeps = 0;
  o.chains = 4;
  o.lockstep = 1;
  const api::BenchResult d = api::bench(source("path:2"), o, api::Execution{1, nullptr, {}});
  BOOST_TEST(d.ensemble.sweeps == static_cast<std::size_t>(5e7) / (4 * 1));  // one edge, four chains
}

BOOST_AUTO_TEST_CASE(ssor_sweeps_twice_the_coordinates_and_records_omega) {
  api::BenchOptions o;
  o.repeat = 2;
  o.sweeps = 1;
  o.domain = "primal";
  o.scheme.scheme = "ssor";
  o.scheme.omega = 1.5;
  const api::BenchResult r = api::bench(source("torus:6"), o, api::Execution{1, nullptr, {}});
  BOOST_TEST(r.record["site_updates_per_iteration"].get<std::size_t>() == 72u);
  BOOST_TEST(r.record["omega"].get<double>() == 1.5);
  BOOST_TEST(r.record["scheme"].get<std::string>() == "ssor");
  BOOST_TEST(r.record["repeat"].get<int>() == 2);
}

BOOST_AUTO_TEST_CASE(rejects_what_the_command_rejects) {
  api::BenchOptions o;
  o.repeat = 0;
  BOOST_CHECK_EXCEPTION(api::bench(source("torus:5"), o, {}), std::invalid_argument,
                        message_has({"--repeat must be at least 1"}));
  o = {};
  o.domain = "diag";
  BOOST_CHECK_THROW(api::bench(source("torus:5"), o, {}), std::invalid_argument);
  BOOST_CHECK_EXCEPTION(api::bench(source("path:1"), {}, {}), std::invalid_argument,
                        message_has({"the dual domain has no coordinates"}));
  o = {};
  o.chains = 1000000000000;  // refused by run_ensemble for its memory, before anything of that size is allocated
  o.sweeps = 1;
  BOOST_CHECK_EXCEPTION(api::bench(source("torus:3"), o, {}), std::invalid_argument,
                        message_has({"1000000000000 chains", "memory"}));
  api::ModelSource s = source("torus:5");
  s.obs_file = "never-read.txt";
  BOOST_CHECK_EXCEPTION(api::bench(s, {}, {}), std::invalid_argument,
                        message_has({"bench: --obs-file does not apply"}));
}
