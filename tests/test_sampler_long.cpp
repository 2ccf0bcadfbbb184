// Long statistical runs of the sampler (ctest label "long"; the default suite skips them): the same exact oracles
// as test_ensemble.cpp with 10 to 25 times more chains, on larger and more irregular graphs, so that relative
// errors of a few tenths of a percent in a variance would be seen. Each test case has false-failure probability
// 1e-6 (Bonferroni over all its z-scores, normal approximation).
#define BOOST_TEST_MODULE sampler_long
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include "sampler_oracles.hpp"

#include <Eigen/Eigenvalues>

#include <cmath>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// A heterogeneous 3x4 torus with a pendant path: 14 nodes, 26 edges, degrees 1 to 5.
Model irregular_model() {
  std::vector<Edge> edges = make_torus(3, 4).edges();
  edges.push_back({0, 12});
  edges.push_back({12, 13});
  std::vector<double> s(14), sigma(edges.size());
  for (std::size_t v = 0; v < s.size(); ++v) s[v] = 0.6 + 0.1 * static_cast<double>(v % 7);
  for (std::size_t e = 0; e < sigma.size(); ++e) sigma[e] = 0.2 + 0.15 * static_cast<double>(e % 5);
  return Model(Graph(14, std::move(edges)), std::move(s), std::move(sigma));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(long_runs)

// A z-score of 6 with L = 4e6 chains is a relative variance error of about 6 sqrt(2 / L) = 0.4%.
BOOST_AUTO_TEST_CASE(random_scan_moments_on_an_irregular_model) {
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Constant, 4000000, 4, irregular_model());
}

BOOST_AUTO_TEST_CASE(fixed_scan_moments_on_an_irregular_model) {
  oracle::check_exact_moments(ScanOrder::Fixed, InitialState::Constant, 4000000, 4, irregular_model());
}

BOOST_AUTO_TEST_CASE(random_start_moments_on_the_small_model) {
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Random, 10000000, 3);
}

BOOST_AUTO_TEST_CASE(permutation_scan_moments_on_the_small_model) {
  oracle::check_exact_moments(ScanOrder::Permutation, InitialState::Constant, 10000000, 2);
}

BOOST_AUTO_TEST_CASE(lockstep_16_blocks_keep_the_marginal_law) {
  // Block averages over 16 lock-step chains are i.i.d. across blocks with the exact per-chain moments as mean.
  const Model model = irregular_model();
  EnsembleOptions o;
  o.chains = 16 * 200000;
  o.sweeps = 3;
  o.lockstep = 16;
  o.seed = 11;
  o.threads = 2;
  const double tests = 3 * (oracle::moment_tests(14) + oracle::moment_tests(26));
  const double z_max = oracle::bonferroni_z(1e-6, tests);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    o.observe_edges = d == Domain::Dual;
    const MatrixXd M = oracle::precision(model, d);
    std::vector<oracle::Moments> exact{oracle::initial_moments(M, o)};
    for (int k = 1; k <= 3; ++k) exact.push_back(oracle::advance(M, exact.back(), ScanOrder::Random, true));
    run_ensemble(model, d, o, [&](const Checkpoint& cp) {
      if (cp.sweep == 0) return;
      const Eigen::Index n = cp.states.rows(), blocks = cp.states.cols() / 16;
      const MatrixXd Xt = cp.states.transpose();
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = i - 1; j < n; ++j) {
          Eigen::ArrayXd avg(blocks);
          for (Eigen::Index b = 0; b < blocks; ++b) {
            const auto xi = Xt.col(i).segment(16 * b, 16).array();
            avg[b] = j < i ? xi.mean() : (xi * Xt.col(j).segment(16 * b, 16).array()).mean();
          }
          const double expect = j < i ? exact[cp.sweep].mean[i] : exact[cp.sweep].second(i, j);
          const double m = avg.mean(), var = (avg - m).square().sum() / static_cast<double>(blocks - 1);
          const double z = (m - expect) / std::sqrt(var / static_cast<double>(blocks));
          BOOST_TEST(std::abs(z) < z_max, to_string(d)
                                              << " sweep " << cp.sweep << " (" << i << ", " << j << "): z = " << z);
        }
    });
  }
}

BOOST_AUTO_TEST_CASE(mean_decay_rate_on_a_larger_torus) {
  // As in test_ensemble.cpp, on a homogeneous 6x6 torus (36 nodes, 72 edges) for 30 sweeps, where the dual rate
  // is the closed form of Prop. 4; 400000 noise-free chains. The fitted per-sweep factor must match r.
  const Model model(make_torus(6, 6), 1.0, 0.5);
  const std::size_t K = 30;
  const double z_max = oracle::bonferroni_z(1e-6, 2 * K);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const oracle::SlowestMode mode = oracle::slowest_mode(oracle::precision(model, d));
    if (d == Domain::Dual) {  // Prop. 4: r_d = (1 - sigma^2 / (sigma^2 + 2 s^2) / |E|)^|E|
      const double prop4 = std::pow(1.0 - 0.25 / (0.25 + 2.0) / 72.0, 72.0);
      BOOST_TEST(std::abs(mode.rate - prop4) < 1e-12);
    }
    EnsembleOptions o;
    o.chains = 400000;
    o.sweeps = K;
    o.seed = 3;
    o.threads = 2;
    o.noise = false;
    oracle::check_slowest_mode_decay(model, d, mode, o, z_max, to_string(d));
  }
}

BOOST_AUTO_TEST_SUITE_END()
