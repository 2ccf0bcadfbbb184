// Tests of the sweep schemes of sampler.hpp (ScanSweep, SymmetricSweep) and of run_ensemble over any kernel and
// scheme (ensemble.hpp): noise-free symmetric sweeps against the dense SSOR iteration, exact moments of the noisy
// symmetric sweep, and a kernel written here (outside the library) running ensembles over threads.
#define BOOST_TEST_MODULE sweep_schemes
#include <boost/test/unit_test.hpp>

#include "sampler_oracles.hpp"
#include "test_support.hpp"

#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/sampler.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The relaxed site update z <- T z + sqrt(omega (2 - omega) / M_ii) eps e_i, T = I - omega e_i (D^-1 M)_{i,:}:
// z_i becomes (1 - omega) z_i + omega mu_i plus noise (the oracle of SymmetricSweep, written from its formula).
void apply_relaxed_site(const MatrixXd& M, Index i, double omega, oracle::Moments& mo, bool noise) {
  MatrixXd T = MatrixXd::Identity(M.rows(), M.cols());
  T.row(i) -= omega * M.row(i) / M(i, i);
  mo.mean = T * mo.mean;
  mo.second = T * mo.second * T.transpose();
  if (noise) mo.second(i, i) += omega * (2.0 - omega) / M(i, i);
}

// One symmetric sweep: sites 0..n-1, then n-1..0.
oracle::Moments exact_symmetric_sweep(const MatrixXd& M, double omega, oracle::Moments mo, bool noise) {
  const auto n = static_cast<Index>(M.rows());
  for (Index i = 0; i < n; ++i) apply_relaxed_site(M, i, omega, mo, noise);
  for (Index i = n - 1; i >= 0; --i) apply_relaxed_site(M, i, omega, mo, noise);
  return mo;
}

// The two shipped kernels on the oracle's heterogeneous 6-node model, with their dense precisions.
struct Case {
  const char* name;
  MatrixXd M;
};

// Noise-free symmetric sweeps of kernel k (W lanes) from a random start equal the dense iteration to 1e-12.
template <int W, class Kernel>
void check_noise_free(const Kernel& k, const MatrixXd& M, double omega) {
  GibbsSampler<Kernel, W, SymmetricSweep> g(k, SymmetricSweep(omega), 7, 0, /*noise=*/false);
  g.set_random_state();
  std::vector<oracle::Moments> exact;
  for (int c = 0; c < W; ++c) {
    const VectorXd z0 = g.state(c);
    exact.push_back({z0, z0 * z0.transpose()});
  }
  for (int s = 0; s < 3; ++s) {
    g.sweep();
    for (int c = 0; c < W; ++c) {
      exact[static_cast<std::size_t>(c)] = exact_symmetric_sweep(M, omega, exact[static_cast<std::size_t>(c)], false);
      const VectorXd want = exact[static_cast<std::size_t>(c)].mean;
      const double err = (g.state(c) - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff();
      BOOST_TEST(err < 1e-12, "omega " << omega << ", W " << W << ", lane " << c << ", sweep " << s + 1
                                       << ": relative difference " << err);
    }
  }
}

// Every checkpoint of a run, in order.
std::vector<MatrixXd> checkpoints(const std::function<void(const Observer&)>& run) {
  std::vector<MatrixXd> out;
  run([&](const Checkpoint& cp) { out.push_back(cp.states); });
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(symmetric_sweep)

BOOST_AUTO_TEST_CASE(noise_free_equals_dense_ssor_for_both_kernels) {
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  const DualIncidenceKernel dual(model);
  const MatrixXd Q = oracle::primal_precision(model), R = oracle::dual_precision(model);
  for (double omega : {1.0, 0.6, 1.5, 1.9}) {
    check_noise_free<1>(csr, Q, omega);
    check_noise_free<4>(csr, Q, omega);
    check_noise_free<1>(dual, R, omega);
    check_noise_free<8>(dual, R, omega);
  }
}

BOOST_AUTO_TEST_CASE(dual_tally_stays_B_times_y) {
  // set_site keeps x~ = B y~ through relaxed updates (up to the rounding of incremental sums).
  const Model model = oracle::small_model();
  const DualIncidenceKernel dual(model);
  GibbsSampler<DualIncidenceKernel, 2, SymmetricSweep> g(dual, SymmetricSweep(1.3), 3);
  g.set_random_state();
  g.sweep(20);
  const MatrixXd B = oracle::incidence(model);
  for (int c = 0; c < 2; ++c) {
    const double err = (g.tally(c) - B * g.state(c)).cwiseAbs().maxCoeff();
    BOOST_TEST(err < 1e-12, "lane " << c << ": |x~ - B y~| = " << err);
  }
}

BOOST_AUTO_TEST_CASE(exact_covariance_is_invariant) {
  // The oracle's algebra: N(0, M^-1) pushed through a noisy symmetric sweep stays N(0, M^-1) for omega in (0, 2).
  const Model model = oracle::small_model();
  for (const MatrixXd& M : {oracle::primal_precision(model), oracle::dual_precision(model)}) {
    const MatrixXd S = M.inverse();
    for (double omega : {0.5, 1.0, 1.7}) {
      const oracle::Moments out = exact_symmetric_sweep(M, omega, {VectorXd::Zero(M.rows()), S}, true);
      BOOST_TEST((out.second - S).cwiseAbs().maxCoeff() < 1e-12 * S.cwiseAbs().maxCoeff());
    }
  }
}

BOOST_AUTO_TEST_CASE(ensemble_moments_match_the_exact_recursion) {
  // 2e5 chains from the constant start 1, two symmetric sweeps with omega = 1.5, through run_ensemble with the
  // scheme: sample means and second moments against the exact recursion. Each z-score is N(0, 1) up to the
  // CLT; the Bonferroni threshold makes the false-failure probability of the whole case at most 1e-6. A noise
  // scale off by 3% (sqrt(omega) instead of sqrt(omega (2 - omega)) is off by 100%) moves the second moments by
  // more than 10 standard errors at this size.
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  const DualIncidenceKernel dual(model);
  const double omega = 1.5;
  const std::size_t chains = 200000, sweeps = 2;
  EnsembleOptions o;
  o.chains = chains;
  o.sweeps = sweeps;
  o.checkpoint_every = sweeps;
  o.seed = 2026;
  o.threads = 2;
  o.observe_edges = true;  // dual: y~
  const double z_max = oracle::bonferroni_z(1e-6, 2 * oracle::moment_tests(8));
  auto check = [&](const auto& kernel, const MatrixXd& M, const char* what) {
    EnsembleOptions oo = o;
    if (kernel.tally_dimension() == 0) oo.observe_edges = false;
    MatrixXd last;
    run_ensemble(
        kernel, oo, [&](const Checkpoint& cp) { last = cp.states; }, SymmetricSweep(omega));
    const auto n = static_cast<Index>(M.rows());
    oracle::Moments exact{VectorXd::Ones(n), MatrixXd::Ones(n, n)};
    for (std::size_t s = 0; s < sweeps; ++s) exact = exact_symmetric_sweep(M, omega, exact, true);
    oracle::check_moments(last, exact, z_max, what);
  };
  check(csr, oracle::primal_precision(model), "primal, symmetric sweep");
  check(dual, oracle::dual_precision(model), "dual, symmetric sweep");
}

BOOST_AUTO_TEST_CASE(rejects_omega_outside_0_2) {
  for (double bad :
       {0.0, 2.0, -0.5, 3.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    BOOST_CHECK_EXCEPTION(SymmetricSweep{bad}, std::invalid_argument, testing::message_has({"omega", "(0, 2)"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(user_kernel_ensembles)

BOOST_AUTO_TEST_CASE(user_kernel_runs_ensembles_with_threads_and_gives_the_csr_chains) {
  const Model model(make_torus(5, 4), 1.0, 0.3);
  const CsrKernel csr(model.primal_precision());
  const oracle::UserKernel user(csr);
  for (std::size_t lockstep : {1u, 4u}) {
    EnsembleOptions o;
    o.chains = 37;
    o.sweeps = 6;
    o.checkpoint_every = 2;
    o.seed = 99;
    o.lockstep = lockstep;
    o.init = InitialState::Random;
    o.threads = 1;
    const auto reference = checkpoints([&](const Observer& ob) { run_ensemble(csr, o, ob); });
    for (unsigned threads : {1u, 2u, 3u}) {
      o.threads = threads;
      const auto got = checkpoints([&](const Observer& ob) { run_ensemble(user, o, ob); });
      BOOST_TEST_REQUIRE(got.size() == reference.size());
      for (std::size_t k = 0; k < got.size(); ++k)
        BOOST_TEST((got[k].array() == reference[k].array()).all(),
                   "lockstep " << lockstep << ", threads " << threads << ", checkpoint " << k);
    }
  }
}

BOOST_AUTO_TEST_CASE(scan_sweep_scheme_is_the_scan_order) {
  // run_ensemble(kernel, options, observer) is run_ensemble(kernel, options, observer, ScanSweep(options.scan)).
  const Model model(make_cycle(9), 1.0, 0.5);
  const DualIncidenceKernel dual(model);
  EnsembleOptions o;
  o.chains = 12;
  o.sweeps = 4;
  o.scan = ScanOrder::Permutation;
  const auto a = checkpoints([&](const Observer& ob) { run_ensemble(dual, o, ob); });
  const auto b = checkpoints([&](const Observer& ob) { run_ensemble(dual, o, ob, ScanSweep(ScanOrder::Permutation)); });
  const auto c = checkpoints([&](const Observer& ob) { run_ensemble(dual, o, ob, ScanSweep(ScanOrder::Fixed)); });
  BOOST_TEST_REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) BOOST_TEST((a[k].array() == b[k].array()).all());
  BOOST_TEST(!(a.back().array() == c.back().array()).all());
}

BOOST_AUTO_TEST_CASE(init_scale_scales_the_random_start_exactly) {
  // --init random --init-scale K: N(0, K^2 diag(M)^-1) from the same stream, so K = 2 doubles every start bit for
  // bit and K = 1 is the unscaled start; a bad scale is refused.
  const Model model(make_torus(4, 3), 1.0, 0.4);
  EnsembleOptions o;
  o.chains = 10;
  o.sweeps = 0;
  o.init = InitialState::Random;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    o.observe_edges = d == Domain::Dual;
    MatrixXd one, two;
    run_ensemble(model, d, o, [&](const Checkpoint& cp) { one = cp.states; });
    o.init_scale = 2.0;
    run_ensemble(model, d, o, [&](const Checkpoint& cp) { two = cp.states; });
    o.init_scale = 1.0;
    BOOST_TEST(((2.0 * one).array() == two.array()).all());
  }
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    o.init_scale = bad;
    BOOST_CHECK_EXCEPTION(run_ensemble(model, Domain::Primal, o, Observer{}), std::invalid_argument,
                          testing::message_has({"init_scale"}));
  }
}

BOOST_AUTO_TEST_CASE(observe_edges_needs_a_kernel_with_a_tally) {
  const Model model(make_cycle(6), 1.0, 0.5);
  const CsrKernel csr(model.primal_precision());
  const oracle::UserKernel user(csr);
  EnsembleOptions o;
  o.chains = 6;
  o.sweeps = 1;
  o.observe_edges = true;
  BOOST_CHECK_EXCEPTION(run_ensemble(user, o, Observer{}), std::invalid_argument,
                        testing::message_has({"observe_edges", "dual"}));
}

BOOST_AUTO_TEST_SUITE_END()
