// api/validate.hpp: the truth of primal draws of a model with observations has its posterior mean; a draws file and
// the same draws in memory give the same report; bad options are refused. Statistical checks run at alpha = 1e-6:
// exact draws fail with probability at most 1e-6 (the report's Bonferroni bound); the seeds are fixed.
#define BOOST_TEST_MODULE api_validate
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/validate.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

Model posterior() {
  Model m(make_grid(5, 6), 0.5, 0.3);
  Eigen::VectorXd z(30);
  for (Index v = 0; v < 30; ++v) z[v] = std::sin(1.7 * v) + 0.5;
  m.set_observations(z);
  return m;
}

api::ValidationOptions primal() {
  api::ValidationOptions o;
  o.domain = "primal";
  o.alpha = 1e-6;
  return o;
}

// The record without its timings.
api::Record untimed(api::Record r) {
  for (const char* k :
       {"truth_seconds", "read_seconds", "read_cpu_seconds", "validate_seconds", "validate_cpu_seconds"})
    r.erase(k);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(primal_draws_of_a_posterior_are_tested_against_its_mean) {
  const Model m = posterior();
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(1000, 5);  // 30 x 1000, N(0, Q^-1)
  const Eigen::VectorXd mu = posterior_mean(m).mean;
  const api::ValidationResult ok = api::validate(m, {x.colwise() + mu}, {}, primal());
  BOOST_TEST(ok.report.consistent);
  BOOST_TEST(api::validation_truth(m, DrawKind::Primal).mean.size() == 30);
  // Without mu the draws are off by tens of standard errors: the mean tests must see it.
  const api::ValidationResult bad = api::validate(m, {x}, {}, primal());
  BOOST_TEST(!bad.report.consistent);
  BOOST_TEST(bad.record["consistent"] == false);
  BOOST_TEST(bad.record["format"] == "array");
}

BOOST_AUTO_TEST_CASE(a_file_and_the_same_draws_in_memory_give_the_same_report) {
  const Model m = posterior();
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(200, 9);
  const Eigen::MatrixXd draws = x.colwise() + posterior_mean(m).mean;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("dg_api_validate_" + std::to_string(::getpid()) + ".bin")).string();
  {
    std::ofstream out(path, std::ios::binary);
    api::BinaryDrawsWriter w(out);
    w.begin(30, 200, 1);
    w.write(50, draws);
  }
  api::DrawsFile file = api::open_draws_file(path);
  api::Record from_file = untimed(api::validate(m, file, path, primal()).record);
  std::filesystem::remove(path);
  BOOST_TEST(from_file["draws_file"] == path);
  BOOST_TEST(from_file["format"] == "binary");
  api::Record in_memory = untimed(api::validate(m, {draws}, {50.0}, primal()).record);
  from_file.erase("draws_file");
  from_file.erase("format");
  in_memory.erase("format");
  BOOST_TEST(from_file.dump() == in_memory.dump());
}

BOOST_AUTO_TEST_CASE(rejects_bad_options) {
  const Model m(make_cycle(5), 1.0, 0.3);
  const Eigen::MatrixXd draws = Eigen::MatrixXd::Zero(5, 10);
  api::ValidationOptions o;
  BOOST_CHECK_EXCEPTION(api::validate(m, {draws}, {}, o), std::invalid_argument, message_has({"--domain"}));
  o.domain = "primal";
  o.alpha = 1;
  BOOST_CHECK_EXCEPTION(api::validate(m, {draws}, {}, o), std::invalid_argument, message_has({"--alpha"}));
  o.alpha = 1e-3;
  o.layout = "rows";
  BOOST_CHECK_EXCEPTION(api::validate(m, {draws}, {}, o), std::invalid_argument, message_has({"--layout"}));
  o.layout = "auto";
  BOOST_CHECK_EXCEPTION(api::validate(m, {draws}, {1.0, 2.0}, o), std::invalid_argument, message_has({"2 sweeps"}));
}
