// Tests of accelerated.hpp: the spectrum of the SSOR-preconditioned operator against a dense generalized eigensolver,
// noise-free Chebyshev-SSOR against the dense Chebyshev iteration (written here from the three-term recurrence of
// the Chebyshev polynomials, not from the scheme's alpha weights), invariance of N(0, A^-1) from exact draws, the
// exact moments of an ensemble from a constant start, and the errors on bad input.
#define BOOST_TEST_MODULE accelerated
#include <boost/test/unit_test.hpp>

#include "sampler_oracles.hpp"
#include "test_support.hpp"

#include <dualgibbs/core/random.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/sampling/accelerated.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The dense SSOR preconditioner M = omega / (2 - omega) (D / omega + L) D^-1 (D / omega + L)^T of A.
MatrixXd dense_ssor(const MatrixXd& A, double omega) {
  const MatrixXd L = A.triangularView<Eigen::StrictlyLower>();
  const VectorXd d = A.diagonal();
  const MatrixXd F = MatrixXd(d.asDiagonal()) / omega + L;
  return omega / (2.0 - omega) * F * d.cwiseInverse().asDiagonal() * F.transpose();
}

// Eigenvalues of M^-1 A from the pencil A v = lambda M v (Eigen's generalized solver), ascending.
VectorXd pencil_eigenvalues(const MatrixXd& A, double omega) {
  const Eigen::GeneralizedSelfAdjointEigenSolver<MatrixXd> es(A, dense_ssor(A, omega), Eigen::EigenvaluesOnly);
  return es.eigenvalues();
}

// The Chebyshev error polynomial on [lo, hi]: P_k(H) = T_k((theta - H) / delta) / T_k(theta / delta) with
// theta = (hi + lo) / 2, delta = (hi - lo) / 2, from T_{j+1}(X) = 2 X T_j(X) - T_{j-1}(X).
MatrixXd chebyshev_polynomial(const MatrixXd& H, double lo, double hi, int k) {
  const Eigen::Index n = H.rows();
  const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo);
  const MatrixXd X = (theta * MatrixXd::Identity(n, n) - H) / delta;
  const double x0 = theta / delta;
  MatrixXd t_prev = MatrixXd::Identity(n, n), t = X;
  double s_prev = 1.0, s = x0;
  if (k == 0) return t_prev;
  for (int j = 1; j < k; ++j) {
    MatrixXd next = 2.0 * X * t - t_prev;
    const double s_next = 2.0 * x0 * s - s_prev;
    t_prev = std::move(t);
    t = std::move(next);
    s_prev = s;
    s = s_next;
  }
  return t / s;
}

// The model and its dense precision of one domain.
struct Domained {
  Domain domain;
  MatrixXd A;
};

template <class Kernel, int W>
void check_noise_free(const Kernel& kernel, const MatrixXd& A, double omega, const char* what) {
  const VectorXd ev = pencil_eigenvalues(A, omega);
  const double lo = ev[0], hi = ev[ev.size() - 1];
  BOOST_TEST_REQUIRE(lo + hi >= 1.0);  // the interval is the spectrum itself (no widening)
  const MatrixXd H = dense_ssor(A, omega).llt().solve(A);
  GibbsSampler<Kernel, W, ChebyshevSsorSweep> g(kernel, ChebyshevSsorSweep(omega, lo, hi), 5, 0, /*noise=*/false);
  g.set_random_state();
  std::vector<VectorXd> start;
  for (int c = 0; c < W; ++c) start.push_back(g.state(c));
  for (int k = 1; k <= 12; ++k) {
    g.sweep();
    const MatrixXd P = chebyshev_polynomial(H, lo, hi, k);
    for (int c = 0; c < W; ++c) {
      const VectorXd want = P * start[static_cast<std::size_t>(c)];
      const double err =
          (g.state(c) - want).cwiseAbs().maxCoeff() / start[static_cast<std::size_t>(c)].cwiseAbs().maxCoeff();
      BOOST_TEST(err < 1e-12, what << ", omega " << omega << ", W " << W << ", lane " << c << ", iteration " << k
                                   << ": difference " << err);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ssor_spectrum_tests)

BOOST_AUTO_TEST_CASE(matches_the_dense_pencil_on_both_paths) {
  // Dense path (n <= 400): the 6-node model's Q and R; Lanczos path: a 24 x 24 torus (576 nodes) and its dual
  // (1152 edges), against Eigen's generalized eigensolver of (A, M).
  const Model small = oracle::small_model();
  const Model torus(make_torus(24, 24), 1.0, 0.25);
  for (const Model* m : {&small, &torus})
    for (Domain d : {Domain::Primal, Domain::Dual})
      for (double omega : {1.0, 1.5}) {
        const SparseMatrix A = m->precision(d);
        const VectorXd ev = pencil_eigenvalues(MatrixXd(A), omega);
        const SsorSpectrum s = ssor_spectrum(A, omega);
        BOOST_TEST(s.omega == omega);
        BOOST_TEST(std::abs(s.lambda_min - ev[0]) < 1e-8 * ev[0],
                   to_string(d) << " n " << A.rows() << ": " << s.lambda_min << " vs " << ev[0]);
        BOOST_TEST(std::abs(s.lambda_max - ev[ev.size() - 1]) < 1e-8, to_string(d) << " n " << A.rows());
        BOOST_TEST(ev[ev.size() - 1] <= 1.0 + 1e-12);  // SSOR: N = M - A is positive semidefinite
      }
}

// The dual of a small-world graph crowds eigenvalues of M^-1 A just below 1: at omega 1.2 Lanczos needs about 3700
// restarts for the largest (0.9999999999), so after its 200 the bound lambda_max <= 1 stands in, exactly 1 (a
// converged Ritz value would not be), within 1e-8 of the dense pencil's; the smallest still converges.
BOOST_AUTO_TEST_CASE(a_crowded_top_falls_back_to_the_ssor_bound) {
  const Model m(load_graph(std::string("ws:400,4,0.3")).graph, 1.0, 0.25);
  const SparseMatrix A = m.precision(Domain::Dual);  // 800 edges: the Lanczos path
  const VectorXd ev = pencil_eigenvalues(MatrixXd(A), 1.2);
  const SsorSpectrum s = ssor_spectrum(A, 1.2);
  BOOST_TEST(s.lambda_max == 1.0);
  BOOST_TEST(std::abs(s.lambda_max - ev[ev.size() - 1]) < 1e-8);
  BOOST_TEST(std::abs(s.lambda_min - ev[0]) < 1e-8 * ev[0], s.lambda_min << " vs " << ev[0]);
}

BOOST_AUTO_TEST_CASE(rates_follow_from_the_spectrum) {
  const SsorSpectrum s{1.2, 0.04, 0.99};
  BOOST_TEST(ssor_rate(s) == 0.96);
  const double k = std::sqrt(0.99 / 0.04);
  BOOST_TEST(std::abs(chebyshev_ssor_rate(s) - (k - 1) / (k + 1)) < 1e-15);
  // lambda_min + lambda_max < 1: the interval's top becomes 1.
  const SsorSpectrum w{0.3, 0.01, 0.6};
  BOOST_TEST(std::abs(chebyshev_ssor_rate(w) - (10.0 - 1) / (10.0 + 1)) < 1e-15);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(chebyshev_ssor)

BOOST_AUTO_TEST_CASE(noise_free_equals_the_dense_chebyshev_iteration) {
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  const DualIncidenceKernel dual(model);
  const MatrixXd Q = oracle::primal_precision(model), R = oracle::dual_precision(model);
  for (double omega : {1.0, 1.4}) {
    check_noise_free<CsrKernel, 1>(csr, Q, omega, "primal");
    check_noise_free<CsrKernel, 4>(csr, Q, omega, "primal");
    check_noise_free<DualIncidenceKernel, 1>(dual, R, omega, "dual");
    check_noise_free<DualIncidenceKernel, 8>(dual, R, omega, "dual");
  }
}

BOOST_AUTO_TEST_CASE(alpha_weights_are_golub_varga) {
  const ChebyshevSsorSweep c(1.0, 0.2, 1.0);
  const double rho = (1.0 - 0.2) / 1.2;
  BOOST_TEST(c.alpha(0) == 1.0);
  BOOST_TEST(std::abs(c.alpha(1) - 2.0 / (2.0 - rho * rho)) < 1e-15);
  double a = 2.0 / (2.0 - rho * rho);
  for (std::size_t k = 2; k < 30; ++k) a = 1.0 / (1.0 - rho * rho * a / 4.0);
  BOOST_TEST(std::abs(c.alpha(29) - a) < 1e-14);
  // The limit 2 / (1 + sqrt(1 - rho^2)).
  BOOST_TEST(std::abs(c.alpha(200) - 2.0 / (1.0 + std::sqrt(1.0 - rho * rho))) < 1e-12);
}

BOOST_AUTO_TEST_CASE(exact_draws_stay_exact) {
  // Invariance of N(0, A^-1): L = 200000 exact draws (dense Cholesky of A^-1, deviates from the ExactDraws stream)
  // pushed through k = 1..4 iterations (omega 1.3, the spectrum's own bounds) keep mean 0 and second moments A^-1.
  // Each z-score is N(0, 1) up to the CLT; the Bonferroni threshold over every z of the case (2 domains x 4
  // checkpoints) makes its false-failure probability at most 1e-6. At this size a relative error of 2.5% in a
  // variance is more than 7 standard errors (sqrt(2 / L) = 0.32%); the plain SSOR noise (no Chebyshev scaling)
  // makes the variances 3 to 9 times too large here (computed with the joint covariance of (x_{k-1}, x_k)).
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  const DualIncidenceKernel dual(model);
  const std::size_t chains = 200000;
  constexpr int W = 16;
  const int checkpoints = 4;
  const double z_max = oracle::bonferroni_z(1e-6, 2 * checkpoints * oracle::moment_tests(8));
  auto run = [&](const auto& kernel, const MatrixXd& A, const char* what) {
    using Kernel = std::decay_t<decltype(kernel)>;
    const MatrixXd S = A.inverse();
    const MatrixXd Lc = S.llt().matrixL();
    const SsorSpectrum sp = ssor_spectrum(SparseMatrix(A.sparseView()), 1.3);
    const auto n = static_cast<Index>(A.rows());
    std::vector<MatrixXd> out(checkpoints, MatrixXd(n, static_cast<Eigen::Index>(chains)));
    ChainEngine rng = make_stream(77, 0, StreamPurpose::ExactDraws);
    for (std::size_t first = 0; first < chains; first += W) {
      GibbsSampler<Kernel, W, ChebyshevSsorSweep> g(kernel, ChebyshevSsorSweep(sp), 2027, first);
      for (int c = 0; c < W; ++c) {
        VectorXd e(n);
        for (Index i = 0; i < n; ++i) e[i] = standard_normal(rng);
        g.set_state(c, Lc * e);
      }
      for (int k = 0; k < checkpoints; ++k) {
        g.sweep();
        for (int c = 0; c < W; ++c)
          out[static_cast<std::size_t>(k)].col(static_cast<Eigen::Index>(first) + c) = g.state(c);
      }
    }
    for (int k = 0; k < checkpoints; ++k)
      oracle::check_moments(out[static_cast<std::size_t>(k)], {VectorXd::Zero(n), S}, z_max,
                            std::string(what) + ", iteration " + std::to_string(k + 1));
  };
  run(csr, oracle::primal_precision(model), "primal");
  run(dual, oracle::dual_precision(model), "dual");
}

BOOST_AUTO_TEST_CASE(ensemble_moments_follow_the_chebyshev_polynomial) {
  // From the constant start 1 (covariance 0), after k iterations: mean P_k 1 and covariance A^-1 - P_k A^-1 P_k^T
  // (the covariance error P_k (S_0 - A^-1) P_k^T), P_k the Chebyshev polynomial of M^-1 A on the spectrum. Through
  // run_ensemble(model, domain, options, observer, scheme) with 2 threads; 200000 chains, z-scores with a
  // Bonferroni threshold: false-failure probability at most 1e-6 for the case.
  const Model model = oracle::small_model();
  const double omega = 1.6;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const MatrixXd A = oracle::precision(model, d), S = A.inverse();
    const MatrixXd H = dense_ssor(A, omega).llt().solve(A);
    EnsembleOptions o;
    o.chains = 200000;
    o.sweeps = 3;
    o.checkpoint_every = 1;
    o.seed = 31;
    o.threads = 2;
    o.observe_edges = d == Domain::Dual;
    SchemeOptions sc;
    sc.kind = SchemeKind::ChebyshevSsor;
    sc.omega = omega;
    sc.spectrum = ssor_spectrum(model, d, omega);
    const ChebyshevSsorSweep used(sc.spectrum);
    std::vector<MatrixXd> got;
    const EnsembleStats st = run_ensemble(
        model, d, o, [&](const Checkpoint& cp) { got.push_back(cp.states); }, sc);
    BOOST_TEST(st.updates == 2u * o.chains * o.sweeps * static_cast<std::uint64_t>(A.rows()));
    const double z_max = oracle::bonferroni_z(1e-6, 2 * 3 * oracle::moment_tests(8));
    for (int k = 1; k <= 3; ++k) {
      const MatrixXd P = chebyshev_polynomial(H, used.interval_min(), used.interval_max(), k);
      const VectorXd mean = P * VectorXd::Ones(A.rows());
      const MatrixXd cov = S - P * S * P.transpose();
      oracle::check_moments(got[static_cast<std::size_t>(k)], {mean, cov + mean * mean.transpose()}, z_max,
                            std::string(to_string(d)) + ", iteration " + std::to_string(k));
    }
  }
}

BOOST_AUTO_TEST_CASE(dual_tally_stays_B_times_y) {
  const Model model = oracle::small_model();
  const DualIncidenceKernel dual(model);
  GibbsSampler<DualIncidenceKernel, 2, ChebyshevSsorSweep> g(
      dual, ChebyshevSsorSweep(ssor_spectrum(model, Domain::Dual, 1.2)), 3);
  g.set_random_state();
  g.sweep(15);
  const MatrixXd B = oracle::incidence(model);
  for (int c = 0; c < 2; ++c) BOOST_TEST((g.tally(c) - B * g.state(c)).cwiseAbs().maxCoeff() < 1e-12);
}

// The SSOR schemes visit the sites in a fixed order and use no schedule randomness, so lane c of a lock-step block
// with first chain f is, bit for bit, the single chain f + c of the same seed: W chains sharing each pass over the
// matrix are W independent chains (what bench_accel's per-chain cost assumes). With noise, from a random start.
// Deterministic.
template <int W, class Kernel, class Scheme>
void check_scheme_lanes(const Kernel& k, const Scheme& scheme, const char* what) {
  GibbsSampler<Kernel, W, Scheme> block(k, scheme, 17, 40);
  block.set_random_state();
  block.sweep(6);
  for (int c = 0; c < W; ++c) {
    GibbsSampler<Kernel, 1, Scheme> one(k, scheme, 17, 40 + static_cast<std::uint64_t>(c));
    one.set_random_state();
    one.sweep(6);
    BOOST_TEST((block.state(c).array() == one.state(0).array()).all(), what << " W = " << W << " lane " << c);
    if (k.tally_dimension() > 0)
      BOOST_TEST((block.tally(c).array() == one.tally(0).array()).all(), what << " W = " << W << " lane " << c);
  }
}

template <class Kernel>
void check_scheme_lanes_all(const Kernel& k, const SsorSpectrum& sp, const char* what) {
  check_scheme_lanes<4>(k, ChebyshevSsorSweep(sp), what);
  check_scheme_lanes<8>(k, ChebyshevSsorSweep(sp), what);
  check_scheme_lanes<16>(k, ChebyshevSsorSweep(sp), what);
  check_scheme_lanes<8>(k, SymmetricSweep(sp.omega), what);
}

BOOST_AUTO_TEST_CASE(lanes_of_a_block_are_the_single_chains) {
  const Model model = oracle::small_model();
  check_scheme_lanes_all(CsrKernel(model.primal_precision()), ssor_spectrum(model, Domain::Primal, 1.4), "primal CSR");
  check_scheme_lanes_all(DualIncidenceKernel(model), ssor_spectrum(model, Domain::Dual, 1.3), "dual");
}

BOOST_AUTO_TEST_CASE(gibbs_scheme_option_is_the_plain_ensemble_bit_for_bit) {
  const Model model(make_torus(5, 4), 1.0, 0.3);
  EnsembleOptions o;
  o.chains = 20;
  o.sweeps = 5;
  o.checkpoint_every = 5;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    MatrixXd a, b;
    run_ensemble(model, d, o, [&](const Checkpoint& cp) { a = cp.states; });
    run_ensemble(
        model, d, o, [&](const Checkpoint& cp) { b = cp.states; }, SchemeOptions{});
    BOOST_TEST((a.array() == b.array()).all());
  }
}

BOOST_AUTO_TEST_CASE(ssor_scheme_option_is_the_symmetric_sweep) {
  const Model model(make_torus(5, 4), 1.0, 0.3);
  const CsrKernel csr(model.primal_precision(), SpdCheck::Cheap);
  EnsembleOptions o;
  o.chains = 20;
  o.sweeps = 5;
  o.checkpoint_every = 5;
  MatrixXd a, b;
  run_ensemble(
      csr, o, [&](const Checkpoint& cp) { a = cp.states; }, SymmetricSweep(1.4));
  SchemeOptions sc;
  sc.kind = SchemeKind::Ssor;
  sc.omega = 1.4;
  run_ensemble(
      model, Domain::Primal, o, [&](const Checkpoint& cp) { b = cp.states; }, sc);
  BOOST_TEST((a.array() == b.array()).all());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(rejects_omega_outside_0_2) {
  const Model model = oracle::small_model();
  for (double bad :
       {0.0, 2.0, -0.5, 3.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    BOOST_CHECK_EXCEPTION(ChebyshevSsorSweep(bad, 0.1, 0.9), std::invalid_argument,
                          testing::message_has({"omega", "(0, 2)"}));
    BOOST_CHECK_EXCEPTION(ssor_spectrum(model.primal_precision(), bad), std::invalid_argument,
                          testing::message_has({"omega", "(0, 2)"}));
    SchemeOptions sc;
    sc.kind = SchemeKind::Ssor;
    sc.omega = bad;
    BOOST_CHECK_EXCEPTION(run_ensemble(model, Domain::Primal, EnsembleOptions{}, Observer{}, sc), std::invalid_argument,
                          testing::message_has({"omega", "(0, 2)"}));
  }
}

BOOST_AUTO_TEST_CASE(cheby_ssor_needs_spectrum_bounds) {
  const Model model = oracle::small_model();
  SchemeOptions sc;
  sc.kind = SchemeKind::ChebyshevSsor;
  sc.omega = 1.2;
  sc.spectrum.omega = 1.2;
  BOOST_CHECK_EXCEPTION(run_ensemble(model, Domain::Dual, EnsembleOptions{}, Observer{}, sc), std::invalid_argument,
                        testing::message_has({"no spectrum bounds", "ssor_spectrum"}));
  BOOST_CHECK_EXCEPTION(ChebyshevSsorSweep(SsorSpectrum{}), std::invalid_argument,
                        testing::message_has({"no spectrum bounds"}));
  sc.spectrum = ssor_spectrum(model, Domain::Dual, 1.5);
  BOOST_CHECK_EXCEPTION(run_ensemble(model, Domain::Dual, EnsembleOptions{}, Observer{}, sc), std::invalid_argument,
                        testing::message_has({"computed at omega = 1.5", "omega = 1.2"}));
  for (auto bounds : {std::pair<double, double>{0.0, 0.9}, {0.5, 0.4}, {0.1, 1.5}, {-1.0, 0.5}})
    BOOST_CHECK_EXCEPTION(ChebyshevSsorSweep(1.0, bounds.first, bounds.second), std::invalid_argument,
                          testing::message_has({"lambda_min", "(0, 1]"}));
}

BOOST_AUTO_TEST_CASE(relaxed_schemes_refuse_a_kernel_without_set_site) {
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  const oracle::UserKernel k(csr);  // a kernel without set_site
  using Cheby = GibbsSampler<oracle::UserKernel, 1, ChebyshevSsorSweep>;
  using Sym = GibbsSampler<oracle::UserKernel, 1, SymmetricSweep>;
  BOOST_CHECK_EXCEPTION(Cheby(k, ChebyshevSsorSweep(1.0, 0.1, 1.0)), std::invalid_argument,
                        testing::message_has({"set_site", "cheby-ssor", "not defined"}));
  BOOST_CHECK_EXCEPTION(Sym(k, SymmetricSweep(1.3)), std::invalid_argument, testing::message_has({"set_site"}));
  Sym plain(k, SymmetricSweep(1.0));  // omega = 1 uses plain updates: defined for every kernel
  plain.sweep(2);
}

BOOST_AUTO_TEST_CASE(unknown_scheme_name) {
  BOOST_CHECK_EXCEPTION(parse_scheme_kind("chebyshev"), std::invalid_argument,
                        testing::message_has({"chebyshev", "gibbs", "cheby-ssor"}));
  BOOST_TEST((parse_scheme_kind("cheby-ssor") == SchemeKind::ChebyshevSsor));
  BOOST_TEST(std::string(to_string(SchemeKind::Ssor)) == "ssor");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(colored_sweep)

// Every class is an independent set of the pattern, and the classes partition 0..n-1.
void check_proper(const std::vector<std::vector<Index>>& classes, const MatrixXd& A) {
  std::vector<int> colour(static_cast<std::size_t>(A.rows()), -1);
  for (std::size_t c = 0; c < classes.size(); ++c)
    for (Index i : classes[c]) {
      BOOST_TEST_REQUIRE(colour[static_cast<std::size_t>(i)] == -1);
      colour[static_cast<std::size_t>(i)] = static_cast<int>(c);
    }
  for (Index i = 0; i < A.rows(); ++i) {
    BOOST_TEST_REQUIRE(colour[static_cast<std::size_t>(i)] >= 0);
    for (Index j = 0; j < A.cols(); ++j)
      if (i != j && A(i, j) != 0.0)
        BOOST_TEST(colour[static_cast<std::size_t>(i)] != colour[static_cast<std::size_t>(j)], i << " ~ " << j);
  }
}

BOOST_AUTO_TEST_CASE(colourings_are_proper_partitions) {
  for (const Model& m : {oracle::small_model(), Model(make_torus(7, 5), 1.0, 0.3)}) {
    check_proper(domain_coloring(m, Domain::Primal), oracle::primal_precision(m));
    check_proper(domain_coloring(m, Domain::Dual), oracle::dual_precision(m));
  }
  BOOST_TEST(domain_coloring(Model(make_torus(8, 8), 1.0, 0.3), Domain::Primal).size() == 2u);  // bipartite
}

// The sequential sweep in colour order, written here: site by site with update<W>, the deviates of lane c at the
// t-th site of class k in sweep s drawn in site order from NormalStream(block_seed(seed, s, k, t / kBlock), c), a
// fresh stream at every block.
template <class Kernel, int W>
void check_colored_is_sequential(const Kernel& kernel, const std::vector<std::vector<Index>>& classes) {
  const std::uint64_t seed = 42;
  const Index n = kernel.dimension(), m = kernel.tally_dimension();
  GibbsSampler<Kernel, W> start(kernel, ScanOrder::Fixed, seed);
  start.set_random_state();
  std::vector<double> z(start.state_data(), start.state_data() + n * W),
      t(start.tally_data(), start.tally_data() + m * W);
  const int sweeps = 3;
  for (int s = 0; s < sweeps; ++s)
    for (std::size_t k = 0; k < classes.size(); ++k) {
      std::vector<NormalStream> lanes;
      for (std::size_t pos = 0; pos < classes[k].size(); ++pos) {
        if (pos % ColoredSweep::kBlock == 0) {
          lanes.clear();
          for (int c = 0; c < W; ++c)
            lanes.emplace_back(
                ColoredSweep::block_seed(seed, static_cast<std::uint64_t>(s), k, pos / ColoredSweep::kBlock),
                static_cast<std::uint64_t>(c));
        }
        double eps[W];
        for (int c = 0; c < W; ++c) eps[c] = lanes[static_cast<std::size_t>(c)]();
        kernel.template update<W>(classes[k][pos], z.data(), t.data(), eps);
      }
    }
  for (unsigned threads : {1u, 2u, 3u}) {
    ColoredSweep scheme(classes, threads);
    GibbsSampler<Kernel, W, ColoredSweep> g(kernel, scheme, seed);
    g.set_random_state();
    g.sweep(sweeps);
    bool same = true;
    for (Index k = 0; k < n * W; ++k) same = same && g.state_data()[k] == z[static_cast<std::size_t>(k)];
    BOOST_TEST(same, "W " << W << ", threads " << threads);
  }
}

BOOST_AUTO_TEST_CASE(colored_equals_the_sequential_sweep_in_colour_order_for_any_thread_count) {
  // A 130 x 130 torus: the primal classes (8450 sites) and dual classes are above kMinParallelClass, so 2 and 3
  // threads really split them.
  const Model model(make_torus(130, 130), 1.0, 0.3);
  const CsrKernel csr(model.primal_precision(), SpdCheck::Cheap);
  const DualIncidenceKernel dual(model);
  const auto cp = domain_coloring(model, Domain::Primal), cd = domain_coloring(model, Domain::Dual);
  BOOST_TEST_REQUIRE(cp.front().size() >= ColoredSweep::kMinParallelClass);
  BOOST_TEST_REQUIRE(cd.front().size() >= ColoredSweep::kMinParallelClass);
  check_colored_is_sequential<CsrKernel, 1>(csr, cp);
  check_colored_is_sequential<CsrKernel, 4>(csr, cp);
  check_colored_is_sequential<DualIncidenceKernel, 1>(dual, cd);
  check_colored_is_sequential<DualIncidenceKernel, 2>(dual, cd);
}

// Three sweeps of scheme S at width W on the kernel, from the sampler's random start, on the current instruction path
// and CSR layout.
template <int W, class S>
std::vector<double> states_after(const CsrKernel& kernel, const S& scheme) {
  GibbsSampler<CsrKernel, W, S> g(kernel, scheme, 7);
  g.set_random_state();
  g.sweep(3);
  return std::vector<double>(g.state_data(), g.state_data() + kernel.dimension() * W);
}

// Every scheme on the CSR kernel of a homogeneous torus gives the same bits with the compact layout (one coefficient,
// one sd, rows at i * 4) as with the general arrays forced (detail::set_compact_csr(false)), on every instruction path
// this CPU has. Deterministic.
template <int W>
void check_compact_schemes(const CsrKernel& kernel, const SsorSpectrum& spectrum,
                           const std::vector<std::vector<Index>>& classes) {
  std::vector<std::vector<double>> reference;
  for (const char* path : {"scalar", "avx2", "avx512"}) {
    if (!detail::select_update_path(path)) continue;  // not supported by this CPU
    for (const bool compact : {true, false}) {
      detail::set_compact_csr(compact);
      const std::vector<std::vector<double>> got = {
          states_after<W>(kernel, ScanSweep(ScanOrder::Random)), states_after<W>(kernel, SymmetricSweep(1.3)),
          states_after<W>(kernel, ChebyshevSsorSweep(spectrum)), states_after<W>(kernel, ColoredSweep(classes, 1)),
          states_after<W>(kernel, ColoredSweep(classes, 2))};
      if (reference.empty()) reference = got;  // the first run: the scalar path, compact
      const char* names[] = {"random", "ssor", "cheby-ssor", "colored 1 thread", "colored 2 threads"};
      for (std::size_t k = 0; k < got.size(); ++k)
        BOOST_TEST((got[k] == reference[k]), names[k] << " W = " << W << " path " << path << " compact " << compact);
    }
  }
  detail::set_compact_csr(true);
  BOOST_REQUIRE(detail::select_update_path("auto") != nullptr);
}

BOOST_AUTO_TEST_CASE(compact_and_general_csr_layouts_give_the_same_bits_in_every_scheme) {
  // 130 x 130: the colour classes (8450 sites) are split between 2 threads.
  const Model model(make_torus(130, 130), 1.0, 0.25);
  const CsrKernel kernel(model.primal_precision(), SpdCheck::Cheap);
  BOOST_TEST_REQUIRE(kernel.uniform_coefficients());
  BOOST_TEST_REQUIRE(kernel.row_length() == 4);
  const SsorSpectrum spectrum{1.4, 0.02, 1.0};  // bounds need not be tight for a bitwise comparison
  const auto classes = domain_coloring(model, Domain::Primal);
  check_compact_schemes<1>(kernel, spectrum, classes);
  check_compact_schemes<4>(kernel, spectrum, classes);
  check_compact_schemes<16>(kernel, spectrum, classes);
  // A 26^3 torus: rows of 6, the compact loop whose row length is known only at run time; classes of 8788 sites.
  const Model model3(make_torus3(26, 26, 26), 1.0, 0.25);
  const CsrKernel kernel3(model3.primal_precision(), SpdCheck::Cheap);
  BOOST_TEST_REQUIRE(kernel3.row_length() == 6);
  check_compact_schemes<1>(kernel3, spectrum, domain_coloring(model3, Domain::Primal));
  check_compact_schemes<4>(kernel3, spectrum, domain_coloring(model3, Domain::Primal));
}

BOOST_AUTO_TEST_CASE(worker_team_runs_every_party_once_per_run) {
  // 200 runs with 1 to 4 parties (helpers started as needed and reused, some idle in a run), then the same on a copy
  // (a new team): every party index runs exactly once per run, and run() returns only after all have.
  detail::WorkerTeam team;
  for (int copy = 0; copy < 2; ++copy) {
    detail::WorkerTeam other(team);
    detail::WorkerTeam& t = copy == 0 ? team : other;
    for (std::size_t r = 0; r < 200; ++r) {
      const std::size_t parties = 1 + (r * 7) % 4;
      std::vector<int> calls(4, 0);  // each party writes only its own entry
      t.run(parties, [&](std::size_t p) { ++calls[p]; });
      for (std::size_t p = 0; p < 4; ++p) BOOST_TEST_REQUIRE(calls[p] == (p < parties ? 1 : 0), "run " << r);
    }
  }
}

BOOST_AUTO_TEST_CASE(colored_ensemble_is_independent_of_the_thread_count) {
  const Model model(make_torus(6, 5), 1.0, 0.3);
  EnsembleOptions o;
  o.chains = 8;
  o.sweeps = 4;
  o.checkpoint_every = 4;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    SchemeOptions sc;
    sc.kind = SchemeKind::Colored;
    MatrixXd a, b;
    sc.threads = 1;
    run_ensemble(
        model, d, o, [&](const Checkpoint& cp) { a = cp.states; }, sc);
    sc.threads = 3;
    run_ensemble(
        model, d, o, [&](const Checkpoint& cp) { b = cp.states; }, sc);
    BOOST_TEST((a.array() == b.array()).all());
  }
}

BOOST_AUTO_TEST_CASE(rejects_bad_classes_and_threads) {
  const Model model = oracle::small_model();
  const CsrKernel csr(model.primal_precision());
  using G = GibbsSampler<CsrKernel, 1, ColoredSweep>;
  BOOST_CHECK_EXCEPTION(ColoredSweep({{0, 1}}, 0), std::invalid_argument, testing::message_has({"threads = 0"}));
  BOOST_CHECK_EXCEPTION(ColoredSweep({}, 1), std::invalid_argument, testing::message_has({"no colour classes"}));
  BOOST_CHECK_EXCEPTION(G(csr, ColoredSweep({{0, 1, 2}, {3, 4}})), std::invalid_argument,
                        testing::message_has({"site 5", "no colour class"}));
  BOOST_CHECK_EXCEPTION(G(csr, ColoredSweep({{0, 1, 2}, {3, 4, 5, 1}})), std::invalid_argument,
                        testing::message_has({"site 1", "more than one"}));
  BOOST_CHECK_EXCEPTION(G(csr, ColoredSweep({{0, 1, 2}, {3, 4, 9}})), std::invalid_argument,
                        testing::message_has({"site 9", "outside"}));
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// The colour order of the classes as a dense permutation: (P x)[place of i] = x[i].
MatrixXd color_order(const std::vector<std::vector<Index>>& classes, Eigen::Index n) {
  MatrixXd P = MatrixXd::Zero(n, n);
  Eigen::Index place = 0;
  for (const auto& cls : classes)
    for (Index i : cls) P(place++, i) = 1.0;
  return P;
}

}  // namespace

BOOST_AUTO_TEST_CASE(colour_ordered_ssor_is_the_ssor_of_the_permuted_precision) {
  // Without noise, colour-ordered SSOR and Chebyshev-SSOR are the dense iterations of P A P^T (P the colour order),
  // mapped back: x_k = P^T H_k P x_0 with H_k = (I - M^-1 A_P)^k, or the Chebyshev polynomial of M^-1 A_P on its own
  // spectrum (pencil eigenvalues of the permuted matrix, not ssor_spectrum()). color_permuted() is P A P^T.
  // Deterministic.
  const Model model = oracle::small_model();
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const MatrixXd A = oracle::precision(model, d);
    const auto classes = domain_coloring(model, d);
    const MatrixXd P = color_order(classes, A.rows());
    const MatrixXd Ap = P * A * P.transpose();
    BOOST_TEST((MatrixXd(color_permuted(SparseMatrix(A.sparseView()), classes)) - Ap).cwiseAbs().maxCoeff() == 0.0);
    for (double omega : {1.0, 1.5}) {
      const MatrixXd H = dense_ssor(Ap, omega).llt().solve(Ap);
      const VectorXd ev = pencil_eigenvalues(Ap, omega);
      EnsembleOptions o;
      o.chains = 2;
      o.sweeps = 6;
      o.checkpoint_every = 1;
      o.noise = false;
      o.init_value = 0.7;
      o.observe_edges = d == Domain::Dual;
      SchemeOptions sc;
      sc.colored_order = true;
      sc.omega = omega;
      for (SchemeKind kind : {SchemeKind::Ssor, SchemeKind::ChebyshevSsor}) {
        sc.kind = kind;
        sc.spectrum = SsorSpectrum{omega, ev[0], ev[ev.size() - 1]};
        const ChebyshevSsorSweep used(sc.spectrum);
        std::vector<MatrixXd> got;
        run_ensemble(
            model, d, o, [&](const Checkpoint& cp) { got.push_back(cp.states); }, sc);
        const VectorXd start = VectorXd::Constant(A.rows(), 0.7);
        const MatrixXd one = MatrixXd::Identity(A.rows(), A.rows()) - H;  // one noise-free SSOR iteration
        MatrixXd power = MatrixXd::Identity(A.rows(), A.rows());
        for (int k = 1; k <= 6; ++k) {
          power = one * power;
          const MatrixXd step =
              kind == SchemeKind::Ssor ? power : chebyshev_polynomial(H, used.interval_min(), used.interval_max(), k);
          const VectorXd want = P.transpose() * step * P * start;
          const double err = (got[static_cast<std::size_t>(k)].col(1) - want).cwiseAbs().maxCoeff();
          BOOST_TEST(err < 1e-12, to_string(d) << ", " << to_string(kind) << ", omega " << omega << ", iteration " << k
                                               << ": difference " << err);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(colour_ordered_chebyshev_moments_follow_its_polynomial) {
  // From the constant start 1, colour-ordered Chebyshev-SSOR has mean P^T P_k 1 and covariance
  // A^-1 - P^T P_k (P A^-1 P^T) P_k^T P after k iterations (P the colour order, P_k the Chebyshev polynomial of the
  // permuted matrix's M^-1 A on the spectrum ssor_spectrum(color_permuted(A))): its noise keeps N(0, A^-1) invariant
  // in this order too. 200000 chains, z-scores with a Bonferroni threshold: false-failure probability at most 1e-6.
  const Model model = oracle::small_model();
  const double omega = 1.4;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const MatrixXd A = oracle::precision(model, d), S = A.inverse();
    const auto classes = domain_coloring(model, d);
    const MatrixXd P = color_order(classes, A.rows());
    const MatrixXd Ap = P * A * P.transpose();
    const MatrixXd H = dense_ssor(Ap, omega).llt().solve(Ap);
    EnsembleOptions o;
    o.chains = 200000;
    o.sweeps = 3;
    o.checkpoint_every = 1;
    o.seed = 41;
    o.threads = 2;
    o.lockstep = 8;
    o.observe_edges = d == Domain::Dual;
    SchemeOptions sc;
    sc.kind = SchemeKind::ChebyshevSsor;
    sc.colored_order = true;
    sc.omega = omega;
    sc.spectrum = ssor_spectrum(color_permuted(model.precision(d), classes), omega);
    const ChebyshevSsorSweep used(sc.spectrum);
    std::vector<MatrixXd> got;
    run_ensemble(
        model, d, o, [&](const Checkpoint& cp) { got.push_back(cp.states); }, sc);
    const double z_max = oracle::bonferroni_z(1e-6, 2 * 3 * oracle::moment_tests(8));
    for (int k = 1; k <= 3; ++k) {
      const MatrixXd Pk = P.transpose() * chebyshev_polynomial(H, used.interval_min(), used.interval_max(), k) * P;
      const VectorXd mean = Pk * VectorXd::Ones(A.rows());
      const MatrixXd cov = S - Pk * S * Pk.transpose();
      oracle::check_moments(got[static_cast<std::size_t>(k)], {mean, cov + mean * mean.transpose()}, z_max,
                            std::string(to_string(d)) + ", colour order, iteration " + std::to_string(k));
    }
  }
}
