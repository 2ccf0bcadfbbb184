// Tests of paper/reproduce.hpp (api::reproduce): the figures a name chooses, the options' checks, a figure's record
// against its result and the recorded command line.
#define BOOST_TEST_MODULE api_reproduce
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/paper/reproduce.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

BOOST_AUTO_TEST_CASE(all_names_every_figure_in_order) {
  BOOST_TEST(api::reproduce_figures("all", {}) == experiment_names());
  BOOST_TEST(api::reproduce_figures("fig6", {}) == std::vector<std::string>{"fig6"});
  BOOST_CHECK_EXCEPTION(api::reproduce_figures("fig99", {}), std::invalid_argument, message_has({"fig99"}));
}

BOOST_AUTO_TEST_CASE(rejects_what_the_command_rejects) {
  api::ReproduceOptions o;
  o.init = "given";
  BOOST_CHECK_EXCEPTION(api::reproduce_figures("fig6", o), std::invalid_argument,
                        message_has({"--init must be constant or random"}));
  o = {};
  o.init_value = 2;
  BOOST_CHECK_EXCEPTION(api::reproduce("fig6", o), std::invalid_argument,
                        message_has({"--init-value applies only with --init constant"}));
  o = {};
  o.init = "constant";
  o.init_scale = 2;
  BOOST_CHECK_EXCEPTION(api::reproduce_figures("fig6", o), std::invalid_argument,
                        message_has({"--init-scale applies only with --init random"}));
  o = {};
  o.chains = 5;
  BOOST_CHECK_EXCEPTION(api::reproduce_figures("fig6", o), std::invalid_argument,
                        message_has({"--chains must be at least 6", "got 5"}));
  BOOST_CHECK_EXCEPTION(api::reproduce("all", {}), std::invalid_argument, message_has({"one at a time"}));
}

BOOST_AUTO_TEST_CASE(record_of_a_quick_figure_holds_its_result) {
  api::ReproduceOptions o;
  o.quick = true;
  o.seed = 3;
  o.init = "random";
  o.init_scale = 2;
  o.out = "figs";
  const api::ExperimentRun run = api::reproduce("fig10", o, api::Execution{1, nullptr, {}});
  const api::Record& j = run.record;
  BOOST_TEST(j["figure"].get<std::string>() == "fig10");
  BOOST_TEST(j["title"].get<std::string>() == run.result.title);
  BOOST_TEST(j["seed"].get<int>() == 3);
  BOOST_TEST(j["command"].get<std::string>() ==
             "dualgibbs reproduce fig10 --quick --out figs --seed 3 --threads 1 --init random --init-scale 2");
  BOOST_TEST((j["threads"]["requested"].get<int>() == 1 && j["threads"]["used"].get<int>() == 1));
  BOOST_TEST(j["mpi_ranks"].get<int>() == 1);
  BOOST_TEST(j["wall_seconds"].get<double>() == run.wall_seconds);
  BOOST_REQUIRE(j["rates"].size() == run.result.rates.size());
  for (std::size_t k = 0; k < run.result.rates.size(); ++k) {
    const RateComparison& c = run.result.rates[k];
    BOOST_TEST(j["rates"][k]["label"].get<std::string>() == c.label);
    if (std::isfinite(c.predicted))
      BOOST_TEST(j["rates"][k]["predicted_neg_log_rate"].get<double>() == c.predicted);
    else
      BOOST_TEST(j["rates"][k]["predicted_neg_log_rate"].is_null());  // non-finite numbers are null
  }
  BOOST_TEST(j["summary"].size() == run.result.summary.size());
  BOOST_TEST(j["columns"].size() ==
             run.result.table.columns().size() + (run.result.table.label_column().empty() ? 0 : 1));
  BOOST_TEST(j["parameters"].size() > 0u);
}

BOOST_AUTO_TEST_CASE(experiment_record_writes_non_finite_numbers_as_null) {
  ExperimentResult r;
  r.name = "demo";
  r.title = "a title";
  r.summary = {{"finite", 1.5}, {"missing", std::nan("")}};
  r.parameters = {{"seed", "7"}};
  const api::Record j = api::experiment_record(r, 2.0, "dualgibbs", {});
  BOOST_TEST(j["summary"]["finite"].get<double>() == 1.5);
  BOOST_TEST(j["summary"]["missing"].is_null());
  BOOST_TEST(j["seed"].get<int>() == 7);
  BOOST_TEST(j["threads"]["requested"].get<int>() == 0);
  BOOST_TEST(j["rates"].is_array());
}
