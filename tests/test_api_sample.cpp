// api/sample.hpp: the checkpoints a run hands to its sink, the sidecar's record, the posterior mean, and the checks
// of every option (one place for the command and Python).
#define BOOST_TEST_MODULE api_sample
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/sample.hpp>
#include <dualgibbs/model/generators.hpp>

#include <sstream>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

// Keeps what it is given.
struct Collect final : api::DrawsSink {
  Eigen::Index dim = -1;
  std::size_t chains = 0;
  std::uint64_t announced = 0;
  std::vector<std::uint64_t> sweeps;
  std::vector<Eigen::MatrixXd> states;
  bool ended = false;
  void begin(Eigen::Index d, std::size_t c, std::uint64_t k) override {
    dim = d;
    chains = c;
    announced = k;
  }
  void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& s) override {
    sweeps.push_back(sweep);
    states.emplace_back(s);
  }
  void end() override { ended = true; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(writes_every_kth_sweep_and_the_last) {
  const Model m(make_torus(4, 4), 1.0, 0.3);
  api::SampleOptions o;
  o.chains = 3;
  o.sweeps = 10;
  o.every = 4;
  Collect sink;
  const api::SampleResult r = api::sample(m, o, sink, {});
  BOOST_TEST(sink.announced == 3u);
  BOOST_TEST(api::sample_checkpoints(o) == 3u);
  BOOST_TEST(sink.sweeps == (std::vector<std::uint64_t>{4, 8, 10}), boost::test_tools::per_element());
  BOOST_TEST(sink.dim == 16);
  BOOST_TEST(sink.chains == 3u);
  BOOST_TEST(sink.ended);
  BOOST_TEST(r.checkpoints == 3u);
  BOOST_TEST(r.record["draws"] == "x_tilde");
  BOOST_TEST(r.record["checkpoints"] == 3);
  BOOST_TEST(r.record["every"] == 4);
  BOOST_TEST(!r.record.contains("draws_mean"));
  o.every = 0;  // the last sweep alone
  Collect last;
  (void)api::sample(m, o, last, {});
  BOOST_REQUIRE(last.sweeps.size() == 1u);
  BOOST_TEST(last.sweeps[0] == 10u);
  // The draws do not depend on the threads, and the last sweep's states are those of the run with every = 4.
  BOOST_TEST((last.states[0] == sink.states[2]));
}

BOOST_AUTO_TEST_CASE(solves_the_posterior_mean_and_records_it) {
  Model m(make_grid(4, 5), 1.0, 0.5);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(20);
  z[3] = 1.5;
  m.set_observations(z);
  api::SampleOptions o;
  o.domain = "primal";
  o.chains = 2;
  o.sweeps = 3;
  o.observed_nodes = 1;
  Collect sink;
  const api::SampleResult r = api::sample(m, o, sink, {});
  BOOST_TEST(r.mean.mean.size() == 20);
  BOOST_TEST(r.record["draws_mean"] == "posterior");
  BOOST_TEST(r.record["observed_nodes"] == 1);
  BOOST_TEST(r.record["posterior_mean_max"].get<double>() == r.mean.mean.maxCoeff());
}

BOOST_AUTO_TEST_CASE(rejects_bad_options_before_the_run) {
  const Model m(make_cycle(6), 1.0, 0.3);
  auto refused = [&](void (*change)(api::SampleOptions&), const char* says) {
    api::SampleOptions o;
    change(o);
    Collect sink;
    BOOST_CHECK_EXCEPTION(api::sample(m, o, sink, {}), std::invalid_argument, message_has({says}));
    BOOST_TEST(sink.announced == 0u);  // nothing began
  };
  refused([](api::SampleOptions& o) { o.draws = "z"; }, "unknown --draws 'z'");
  refused(
      [](api::SampleOptions& o) {
        o.domain = "primal";
        o.draws = "y";
      },
      "dual domain only");
  refused([](api::SampleOptions& o) { o.init_scale = 2; }, "--init-scale applies only with --init random");
  refused([](api::SampleOptions& o) { o.init = "given"; }, "go together");
  refused([](api::SampleOptions& o) { o.domain = "both"; }, "both");
  refused(
      [](api::SampleOptions& o) {
        o.scheme.scheme = "ssor";
        o.scheme.scan = "fixed";
      },
      "--scan fixed");
}
