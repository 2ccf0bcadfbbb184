// Tests of ensemble.hpp: exact moments of the Gibbs chain after k sweeps (fixed, permutation and random scan),
// stationarity from exact draws, the random-sweep decay rate, lock-step blocks, bitwise reproducibility across
// thread counts, checkpoints, and bad input.
//
// Every statistical check is a set of z-scores compared with a two-sided Bonferroni threshold for the whole test
// case at false-failure probability 1e-6 (normal approximation: the sample sizes are >= 20000 chains).
#define BOOST_TEST_MODULE ensemble
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>

#include "sampler_oracles.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double kAlpha = 1e-6;  // false-failure probability of each statistical test case

using oracle::collect;

}  // namespace

BOOST_AUTO_TEST_SUITE(blocks_and_reproducibility)

BOOST_AUTO_TEST_CASE(lockstep_blocks_never_straddle_the_halves) {
  for (std::size_t L : {1, 2, 3, 7, 16, 17, 33, 100, 1001})
    for (std::size_t B : {1, 2, 4, 8, 16}) {
      const auto blocks = lockstep_blocks(L, B);
      std::size_t next = 0;
      for (const auto& [first, width] : blocks) {
        BOOST_TEST(first == next);
        BOOST_TEST((width >= 1 && static_cast<std::size_t>(width) <= B && (width & (width - 1)) == 0));
        const bool in_first_half = first + width <= L / 2, in_second_half = first >= L / 2;
        BOOST_TEST((in_first_half || in_second_half), "block at " << first << " of width " << width << ", L = " << L);
        next = first + static_cast<std::size_t>(width);
      }
      BOOST_TEST(next == L);
    }
  BOOST_CHECK_THROW(lockstep_blocks(0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lockstep_blocks(10, 3), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(same_seed_gives_bitwise_identical_checkpoints_for_1_2_and_7_threads) {
  const Model model(make_random_regular(30, 4, 2), 1.0, 0.3);
  for (Domain d : {Domain::Primal, Domain::Dual})
    for (std::size_t lockstep : {1, 4})
      for (ScanOrder scan : {ScanOrder::Random, ScanOrder::Permutation}) {
        EnsembleOptions o;
        o.chains = 13;
        o.sweeps = 10;
        o.checkpoint_every = 3;
        o.scan = scan;
        o.seed = 77;
        o.lockstep = lockstep;
        o.init = InitialState::Random;
        o.threads = 1;
        const auto one = collect(model, d, o);
        BOOST_TEST(one.size() == 5u);  // sweeps 0, 3, 6, 9 and the last, 10
        BOOST_TEST(one.count(10) == 1u);
        for (unsigned threads : {2u, 7u}) {
          o.threads = threads;
          const auto other = collect(model, d, o);
          BOOST_REQUIRE_EQUAL(other.size(), one.size());
          for (const auto& [sweep, m] : one) {
            const MatrixXd& m2 = other.at(sweep);
            BOOST_REQUIRE(m.rows() == m2.rows() && m.cols() == m2.cols());
            BOOST_TEST(std::memcmp(m.data(), m2.data(), sizeof(double) * static_cast<std::size_t>(m.size())) == 0,
                       to_string(d) << " lockstep " << lockstep << " threads " << threads << " sweep " << sweep);
          }
        }
        // A different seed gives a different run.
        o.seed = 78;
        BOOST_TEST((collect(model, d, o).at(10) != one.at(10)));
      }
}

BOOST_AUTO_TEST_CASE(states_buffer_receives_the_same_states) {
  // EnsembleOptions::states_buffer: at the sweeps where it returns a caller's matrix (of the wrong shape at first),
  // the observer's states are that matrix, filled with bitwise the states of a run without it; where it returns
  // nullptr, the run's own matrix. Both domains, 2 threads.
  const Model model(make_torus(5, 4), 1.0, 0.3);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    EnsembleOptions o;
    o.chains = 9;
    o.sweeps = 6;
    o.seed = 3;
    o.threads = 2;
    o.init = InitialState::Random;
    const auto plain = collect(model, d, o);
    std::vector<MatrixXd> mine(3, MatrixXd(2, 2));
    auto given = [&](std::size_t sweep) { return sweep % 2 == 0 && sweep / 2 < mine.size(); };  // 0, 2, 4
    o.states_buffer = [&](std::size_t sweep) -> MatrixXd* { return given(sweep) ? &mine[sweep / 2] : nullptr; };
    std::size_t seen = 0;
    run_ensemble(model, d, o, [&](const Checkpoint& cp) {
      ++seen;
      const MatrixXd& want = plain.at(cp.sweep);
      BOOST_TEST_CONTEXT(to_string(d) << " sweep " << cp.sweep) {
        bool in_mine = false;
        for (const MatrixXd& m : mine) in_mine = in_mine || cp.states.data() == m.data();
        BOOST_TEST(in_mine == given(cp.sweep));
        if (given(cp.sweep)) BOOST_TEST(cp.states.data() == mine[cp.sweep / 2].data());
        BOOST_REQUIRE(cp.states.rows() == want.rows() && cp.states.cols() == want.cols());
        BOOST_TEST((MatrixXd(cp.states).array() == want.array()).all());
      }
    });
    BOOST_TEST(seen == 7u);
  }
}

BOOST_AUTO_TEST_CASE(dual_observer_sees_x_equal_B_y_and_stats_count_updates) {
  const Model model = oracle::small_model();
  EnsembleOptions o;
  o.chains = 9;
  o.sweeps = 5;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  o.threads = 2;
  const auto x = collect(model, Domain::Dual, o);
  o.observe_edges = true;
  std::vector<std::size_t> sweeps;
  std::vector<double> seconds;
  const EnsembleStats st = run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) {
    sweeps.push_back(cp.sweep);
    seconds.push_back(cp.seconds);
    BOOST_TEST(cp.states.rows() == 8);
    BOOST_TEST(cp.states.cols() == 9);
    const MatrixXd Bm = oracle::incidence(model);
    BOOST_TEST((Bm * cp.states - x.at(cp.sweep)).cwiseAbs().maxCoeff() <= 1e-12);
  });
  BOOST_TEST((sweeps == std::vector<std::size_t>{0, 2, 4, 5}));
  BOOST_TEST(seconds.front() == 0.0);
  BOOST_TEST(std::is_sorted(seconds.begin(), seconds.end()));
  BOOST_TEST(st.updates == 9u * 5u * 8u);
  BOOST_TEST(st.seconds >= seconds.back());
  BOOST_TEST(st.ns_per_update > 0.0);
  // Zero sweeps: one checkpoint, the initial state (the paper's constant vector).
  o.sweeps = 0;
  o.observe_edges = false;
  const auto init = collect(model, Domain::Primal, o);
  BOOST_TEST(init.size() == 1u);
  BOOST_TEST((init.at(0).array() == 1.0).all());
}

BOOST_AUTO_TEST_SUITE_END()

// ---- exact moments ---------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(exact_moments)

BOOST_AUTO_TEST_CASE(fixed_scan_moments_match_the_product_of_site_updates) {
  oracle::check_exact_moments(ScanOrder::Fixed, InitialState::Constant);
}

BOOST_AUTO_TEST_CASE(random_scan_moments_match_the_averaged_update) {
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Constant);
}

BOOST_AUTO_TEST_CASE(random_scan_from_random_start_matches) {
  // Also checks the random initial state N(0, diag(M)^-1) at sweep 0.
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Random);
}

BOOST_AUTO_TEST_CASE(permutation_scan_moments_match_the_average_over_all_orders) {
  oracle::check_exact_moments(ScanOrder::Permutation, InitialState::Constant);
}

BOOST_AUTO_TEST_CASE(lockstep_chains_follow_the_exact_marginal_law) {
  // Chains in one block share their schedule, so they are dependent; the averages over one block are i.i.d.
  // across blocks with the exact per-chain moments as their mean. z-scores use the sample variance across blocks.
  const Model model = oracle::small_model();
  EnsembleOptions o;
  o.chains = 8 * 6000;
  o.sweeps = 2;
  o.lockstep = 8;
  o.seed = 5;
  o.threads = 2;
  const double tests = 2 * (oracle::moment_tests(6) + oracle::moment_tests(8));  // 2 sweeps, both domains
  const double z_max = oracle::bonferroni_z(kAlpha, tests);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    o.observe_edges = d == Domain::Dual;
    const MatrixXd M = oracle::precision(model, d);
    const auto states = collect(model, d, o);
    oracle::Moments mo = oracle::initial_moments(M, o);
    for (std::size_t k = 1; k <= 2; ++k) {
      mo = oracle::advance(M, mo, ScanOrder::Random, true);
      const MatrixXd& X = states.at(k);
      const Eigen::Index n = X.rows(), blocks = X.cols() / 8;
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = i - 1; j < n; ++j) {  // j = i - 1 stands for the mean of coordinate i
          Eigen::ArrayXd avg(blocks);
          for (Eigen::Index b = 0; b < blocks; ++b) {
            const auto xi = X.row(i).segment(8 * b, 8).array();
            avg[b] = j < i ? xi.mean() : (xi * X.row(j).segment(8 * b, 8).array()).mean();
          }
          const double expect = j < i ? mo.mean[i] : mo.second(i, j);
          const double m = avg.mean(), var = (avg - m).square().sum() / (blocks - 1);
          const double z = (m - expect) / std::sqrt(var / blocks);
          BOOST_TEST(std::abs(z) < z_max, to_string(d) << " sweep " << k << " (" << i << ", " << j << "): " << m
                                                       << " vs " << expect << ", z = " << z);
        }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- stationarity and rate -------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(stationarity_and_rate)

template <class Kernel>
MatrixXd run_from_exact_draws(const Kernel& kernel, const MatrixXd& M, ScanOrder scan, std::size_t chains,
                              std::size_t sweeps) {
  // Exact draws z = L eps with L L^T = M^-1 (dense Cholesky), eps from Boost's normal on mt19937_64.
  const MatrixXd cov = M.inverse();
  const MatrixXd L = cov.llt().matrixL();
  boost::random::mt19937_64 rng(4242);
  boost::random::normal_distribution<double> normal;
  MatrixXd out(M.rows(), static_cast<Eigen::Index>(chains));
  for (std::size_t c = 0; c < chains; ++c) {
    VectorXd eps(M.rows());
    for (Eigen::Index i = 0; i < M.rows(); ++i) eps[i] = normal(rng);
    GibbsSampler<Kernel> g(kernel, scan, 31, c);
    g.set_state(0, L * eps);
    g.sweep(sweeps);
    out.col(static_cast<Eigen::Index>(c)) = g.state(0);
  }
  return out;
}

BOOST_AUTO_TEST_CASE_TEMPLATE(chains_started_at_exact_draws_stay_stationary, Kernel, oracle::Kernels) {
  // Chains are independent (one sampler each); a z-score of 6 is a relative variance error of 6 sqrt(2 / L), 2.7%.
  const Model model = oracle::small_model();
  const std::size_t chains = 100000;
  const MatrixXd M = oracle::precision(model, oracle::KernelFor<Kernel>::domain);
  const double tests = 2 * oracle::moment_tests(M.rows());  // two scans
  const double z_max = oracle::bonferroni_z(kAlpha, tests);
  const Kernel k = oracle::KernelFor<Kernel>::make(model);
  for (ScanOrder scan : {ScanOrder::Random, ScanOrder::Fixed}) {
    const MatrixXd X = run_from_exact_draws(k, M, scan, chains, 3);
    oracle::check_moments(X, {VectorXd::Zero(M.rows()), M.inverse()}, z_max,
                          std::string(to_string(oracle::KernelFor<Kernel>::domain)) + " " + to_string(scan));
  }
}

BOOST_AUTO_TEST_CASE(mean_decays_at_the_random_sweep_rate) {
  // Start every chain at z0 = D^-1/2 u, u the eigenvector of the smallest eigenvalue of D^-1/2 M D^-1/2. Then the
  // expected random-scan update E[z'] = (I - D^-1 M / n) z multiplies z0 by (n - 1 + lambda_max(A)) / n, so after
  // k sweeps E[w^T z_k] / w^T z0 = r^k with w = D z0 and r = ((n - 1 + lambda_max(A)) / n)^n [eqn:primalrate,
  // eqn:dualrate]. Checked for k = 1..8 in both domains, noise-free and with noise.
  const Model model = oracle::small_model();
  const std::size_t K = 8;
  const double z_max = oracle::bonferroni_z(kAlpha, 2 * 2 * K);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const oracle::SlowestMode mode = oracle::slowest_mode(oracle::precision(model, d));
    for (bool noise : {false, true}) {
      EnsembleOptions o;
      o.chains = 40000;
      o.sweeps = K;
      o.seed = 99;
      o.threads = 2;
      o.noise = noise;
      oracle::check_slowest_mode_decay(model, d, mode, o, z_max,
                                       std::string(to_string(d)) + (noise ? " noisy" : " noise-free"));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- bad input -------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(rejects_bad_options) {
  const Model model = oracle::small_model();
  const Observer none;
  auto expect_throw = [&](EnsembleOptions o, Domain d, const std::string& needle) {
    try {
      run_ensemble(model, d, o, none);
      BOOST_ERROR("no exception for " << needle);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  EnsembleOptions o;
  o.chains = 4;
  o.sweeps = 1;
  EnsembleOptions bad = o;
  bad.chains = 0;
  expect_throw(bad, Domain::Primal, "chains = 0");
  bad = o;
  bad.checkpoint_every = 0;
  expect_throw(bad, Domain::Dual, "checkpoint_every");
  bad = o;
  bad.lockstep = 3;
  expect_throw(bad, Domain::Dual, "lockstep = 3");
  bad.lockstep = 32;
  expect_throw(bad, Domain::Dual, "lockstep = 32");
  bad = o;
  bad.init = InitialState::Given;
  bad.given_state = VectorXd::Zero(6);  // |V| given for the dual domain (|E| = 8)
  expect_throw(bad, Domain::Dual, "given_state has length 6");
  bad.given_state = VectorXd::Zero(8);
  expect_throw(bad, Domain::Primal, "given_state has length 8");
  bad.given_state = VectorXd::Constant(6, NAN);
  expect_throw(bad, Domain::Primal, "non-finite");
  bad = o;
  bad.init_value = INFINITY;
  expect_throw(bad, Domain::Primal, "init_value");
  bad = o;
  bad.observe_edges = true;
  expect_throw(bad, Domain::Primal, "observe_edges");
  bad = o;
  bad.local_cuts = {1, 4};
  expect_throw(bad, Domain::Dual, "local_cuts must start at 0");
  bad.local_cuts = {0, 2, 3};
  expect_throw(bad, Domain::Dual, "end at the number of chains 4");
  bad.local_cuts = {0, 2, 2, 4};
  expect_throw(bad, Domain::Primal, "increase strictly");
  bad.lockstep = 2;  // blocks [0, 2) and [2, 4)
  bad.local_cuts = {0, 1, 4};
  expect_throw(bad, Domain::Primal, "cut 1 falls inside a lock-step block");
  BOOST_CHECK_THROW(run_ensemble(Model(Graph(4, {}), 1.0, 1.0), Domain::Dual, o, none), std::invalid_argument);
  BOOST_CHECK_THROW(parse_initial_state("ones"), std::invalid_argument);
  BOOST_TEST((parse_initial_state("random") == InitialState::Random));
  BOOST_TEST((parse_initial_state(to_string(InitialState::Given)) == InitialState::Given));
  // A graph without edges is a valid primal model.
  BOOST_CHECK_NO_THROW(run_ensemble(Model(Graph(4, {}), 1.0, 1.0), Domain::Primal, o, none));
}

BOOST_AUTO_TEST_CASE(local_cuts_alone_show_every_chain) {
  // Without a chain group, local observation changes nothing: the observer sees all chains from chain 0, bitwise
  // the checkpoints of a run without cuts.
  const Model model = oracle::small_model();
  EnsembleOptions o;
  o.chains = 11;
  o.sweeps = 3;
  o.lockstep = 2;
  o.init = InitialState::Random;
  std::vector<MatrixXd> plain, cut;
  run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) { plain.emplace_back(cp.states); });
  o.local_cuts = {0, 2, 5, 9, 11};  // block starts: [0, 5) is cut 2 + 2 + 1, [5, 11) 2 + 2 + 2
  run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) {
    BOOST_CHECK_EQUAL(cp.first_chain, 0u);
    cut.emplace_back(cp.states);
  });
  BOOST_REQUIRE_EQUAL(cut.size(), plain.size());
  for (std::size_t k = 0; k < cut.size(); ++k) BOOST_CHECK((cut[k].array() == plain[k].array()).all());
}

BOOST_AUTO_TEST_CASE(observer_exceptions_propagate) {
  const Model model = oracle::small_model();
  EnsembleOptions o;
  o.chains = 4;
  o.sweeps = 3;
  o.threads = 2;
  BOOST_CHECK_THROW(run_ensemble(model, Domain::Dual, o,
                                 [](const Checkpoint& cp) {
                                   if (cp.sweep == 2) throw std::runtime_error("stop");
                                 }),
                    std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()
