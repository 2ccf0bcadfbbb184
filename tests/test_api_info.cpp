// Tests of api/info.hpp: the record's fields against the library's own spectra and closed forms, the SSOR rates'
// dimension limit, sizes only, and the checks.
#define BOOST_TEST_MODULE api_info
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/info.hpp>
#include <dualgibbs/model/io.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

api::ModelSource source(const std::string& graph, double sigma = 0.25) {
  api::ModelSource s;
  s.graph = graph;
  s.sigma = sigma;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(record_holds_the_sizes_spectra_and_closed_forms_of_the_model) {
  const api::InfoResult r = api::info(source("torus:8"), {});
  const Model m = api::load_model(source("torus:8")).model;
  const Rates rates = convergence_rates(m);
  BOOST_TEST(r.record["nodes"].get<int>() == 64);
  BOOST_TEST(r.record["edges"].get<int>() == 128);
  BOOST_TEST(r.record["nnz_Q"].get<int>() == 64 + 2 * 128);
  BOOST_TEST(r.record["homogeneous"].get<bool>());
  BOOST_TEST(r.record["sigma"].get<double>() == 0.25);
  BOOST_TEST(r.summary == m.summary());
  // The same computation as the library's, so the same numbers to the last bit.
  BOOST_TEST(r.record["rate_dual_effective"].get<double>() == rates.rate_dual_effective);
  BOOST_TEST(r.record["lambda2_L"].get<double>() == rates.lambda2_L);
  BOOST_REQUIRE(r.rates.has_value());
  BOOST_TEST(r.rates->rate_primal == rates.rate_primal);
  // Table I: lambda_2 of the 8x8 torus is 4 sin^2(pi / 8).
  const double table1 = 4 * std::pow(std::sin(std::acos(-1.0) / 8), 2);
  BOOST_TEST(r.record["closed_forms"]["lambda2_L"]["value"].get<double>() == table1,
             boost::test_tools::tolerance(1e-14));
  BOOST_TEST(r.record["closed_forms"]["rate_dual"]["source"].get<std::string>().find("Prop. 4") != std::string::npos);
  // 64 and 128 coordinates are below the default limit: every SSOR field is a number in (0, 1) for the rates.
  for (const char* key : {"rate_ssor_primal", "rate_ssor_dual", "rate_cheby_ssor_primal", "rate_cheby_ssor_dual"}) {
    BOOST_TEST_INFO(key);
    BOOST_TEST((r.record[key].is_number() && r.record[key].get<double>() > 0 && r.record[key].get<double>() < 1));
  }
  BOOST_TEST(r.accel_max_dimension == api::kInfoAccelDefaultMaxDimension);
}

BOOST_AUTO_TEST_CASE(without_a_spec_the_family_closed_forms_are_absent) {
  const Model m = api::load_model(source("torus:8")).model;
  const GraphSpec spec = parse_graph_spec("torus:8");
  BOOST_TEST(api::info(m, &spec, {}).record["closed_forms"].contains("lambda2_L"));
  BOOST_TEST(!api::info(m, nullptr, {}).record["closed_forms"].contains("lambda2_L"));
}

BOOST_AUTO_TEST_CASE(ssor_rates_stop_at_the_dimension_limit_unless_accel) {
  // complete:47: 47 primal and 1081 dual coordinates, the dual above the default limit of 1000 (about 3 s with accel).
  api::InfoOptions o;
  const api::InfoResult plain = api::info(source("complete:47"), o);
  BOOST_TEST(plain.record["rate_ssor_primal"].is_number());
  BOOST_TEST(plain.record["rate_ssor_dual"].is_null());
  BOOST_TEST(plain.record["omega_dual"].is_null());
  o.accel = true;
  const api::InfoResult accel = api::info(source("complete:47"), o);
  BOOST_TEST(accel.accel_max_dimension == api::kInfoAccelMaxDimension);
  BOOST_TEST(accel.record["rate_ssor_primal"] == plain.record["rate_ssor_primal"]);
  BOOST_TEST(accel.record["rate_ssor_dual"].is_number());
  BOOST_TEST(accel.record["omega_dual"].is_number());
}

BOOST_AUTO_TEST_CASE(sizes_only_without_spectra) {
  api::InfoOptions o;
  o.spectra = false;
  o.tolerance = 0;  // not used without spectra
  const api::InfoResult r = api::info(source("torus:5"), o);
  BOOST_TEST(r.record["nodes"].get<int>() == 25);
  BOOST_TEST(!r.record.contains("lambda2_L"));
  BOOST_TEST(!r.record.contains("closed_forms"));
  BOOST_TEST(!r.rates.has_value());
}

BOOST_AUTO_TEST_CASE(rejects_bad_options_and_observations) {
  api::InfoOptions o;
  o.method = "qr";
  BOOST_CHECK_EXCEPTION(api::info(source("torus:5"), o), std::invalid_argument,
                        message_has({"unknown spectral method 'qr'"}));
  o.method = "auto";
  o.tolerance = 0;
  BOOST_CHECK_EXCEPTION(api::info(source("torus:5"), o), std::invalid_argument, message_has({"tolerance = 0"}));
  api::ModelSource s = source("torus:5");
  s.obs_file = "never-read.txt";  // refused before any file is read
  BOOST_CHECK_EXCEPTION(api::info(s, {}), std::invalid_argument, message_has({"info: --obs-file does not apply"}));
}
