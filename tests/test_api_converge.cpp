// Tests of api/converge.hpp: the same table as the library's run_convergence with the command's defaults, the
// record and its command line, both domains' schemes, and the checks.
#define BOOST_TEST_MODULE api_converge
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/converge.hpp>

#include <stdexcept>
#include <string>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

api::ModelSource source() {
  api::ModelSource s;
  s.graph = "torus:5";
  s.sigma = 0.3;
  s.seed = 4;
  return s;
}

api::ConvergeOptions small() {
  api::ConvergeOptions o;
  o.chains = 40;
  o.sweeps = 6;
  o.every = 2;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(runs_the_library_experiment_with_the_commands_settings) {
  const api::ExperimentRun run = api::converge(source(), small(), api::Execution{1, nullptr, {}});
  ConvergenceSettings cs;
  cs.chains = 40;
  cs.sweeps = 6;
  cs.checkpoint_every = 2;
  cs.seed = 4;
  cs.threads = 1;
  const ExperimentResult ref = run_convergence(api::load_model(source()).model, "converge", "torus:5", cs, 2000);
  BOOST_TEST(run.result.table.columns() == ref.table.columns());
  for (const std::string col : {"Eu_primal", "Eu_dual", "Eb_dual"}) {
    BOOST_TEST_INFO(col);
    BOOST_TEST(run.result.table.column(col) == ref.table.column(col));  // bitwise: the same run
  }
  BOOST_TEST(run.record["figure"].get<std::string>() == "converge");
  BOOST_TEST(run.record["seed"].get<int>() == 4);
  BOOST_TEST(run.record["threads"]["requested"].get<int>() == 1);
  BOOST_TEST(run.record["command"].get<std::string>() ==
             "dualgibbs converge --graph torus:5 --s 1 --sigma 0.3 --seed 4 --chains 40 --sweeps 6 --every 2 "
             "--scan random --init constant");
  BOOST_TEST(run.record["columns"].size() == run.result.table.columns().size());
  BOOST_TEST(run.wall_seconds > 0);
}

BOOST_AUTO_TEST_CASE(a_scheme_applies_to_both_domains_and_a_given_command_line_is_kept) {
  api::ConvergeOptions o = small();
  o.scheme.scheme = "ssor";
  o.scheme.omega = 1.2;
  o.command_line = "dualgibbs --graph torus:5";
  const api::ExperimentRun run = api::converge(source(), o, api::Execution{1, nullptr, {}});
  BOOST_TEST(run.record["command"].get<std::string>() == "dualgibbs --graph torus:5");
  BOOST_TEST(run.record["parameters"].dump().find("ssor") != std::string::npos);
  for (const auto& row : run.result.rates)
    if (row.fitted_from == "mean") BOOST_TEST(row.predicted_by == "ssor");
}

BOOST_AUTO_TEST_CASE(rejects_what_the_command_rejects) {
  api::ConvergeOptions o = small();
  o.init = "given";
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument, message_has({"--init must be constant"}));
  o = small();
  o.init_scale = 2;
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument,
                        message_has({"--init-scale applies only with --init random"}));
  o = small();
  o.every = 0;
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument, message_has({"--every must be at least 1"}));
  o = small();
  o.full_max = 0;
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument, message_has({"--full-max"}));
  o = small();
  o.scheme.scheme = "cheby-ssor";
  o.scheme.omega = 1.2;
  o.scheme.lambda_min = 0.1;
  o.scheme.lambda_max = 1.0;
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument,
                        message_has({"would apply to both domains"}));
  o = small();
  o.scheme.omega = 1.2;  // with gibbs
  BOOST_CHECK_EXCEPTION(api::converge(source(), o), std::invalid_argument, message_has({"not gibbs"}));
  api::ModelSource s = source();
  s.obs_file = "never-read.txt";
  BOOST_CHECK_EXCEPTION(api::converge(s, small()), std::invalid_argument,
                        message_has({"converge: --obs-file does not apply"}));
}
