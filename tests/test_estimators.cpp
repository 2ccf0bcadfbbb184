#define BOOST_TEST_MODULE estimators
#include <boost/test/unit_test.hpp>

#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/random.hpp>
#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>

#include "test_support.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>

#include <Eigen/Dense>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace dualgibbs;

namespace {

// ---- oracles written in the test: dense matrices, dense Cholesky draws, naive sample moments ----------

Eigen::MatrixXd dense(const SparseMatrix& m) { return Eigen::MatrixXd(m); }

Eigen::MatrixXd exact_cov_x(const Model& m) {
  const Eigen::MatrixXd q = dense(m.primal_precision());
  return q.llt().solve(Eigen::MatrixXd::Identity(q.rows(), q.cols()));
}

/// Cov(x~) = B R^-1 B^T from dense matrices.
Eigen::MatrixXd exact_cov_x_tilde(const Model& m) {
  const Eigen::MatrixXd r = dense(m.dual_precision());
  const Eigen::MatrixXd b = dense(m.incidence());
  return b * r.llt().solve(b.transpose());
}

/// count exact draws of N(0, M^-1) by a dense Cholesky M = L L^T: z = L^-T eps.
Eigen::MatrixXd draws_from_precision(const Eigen::MatrixXd& precision, std::size_t count,
                                     boost::random::mt19937_64& rng) {
  boost::random::normal_distribution<double> normal;
  const Eigen::LLT<Eigen::MatrixXd> llt(precision);
  Eigen::MatrixXd eps(precision.rows(), static_cast<Eigen::Index>(count));
  for (Eigen::Index j = 0; j < eps.cols(); ++j)
    for (Eigen::Index i = 0; i < eps.rows(); ++i) eps(i, j) = normal(rng);
  return llt.matrixU().solve(eps);
}

Eigen::MatrixXd naive_covariance(const Eigen::MatrixXd& x) {
  const Eigen::VectorXd mean = x.rowwise().mean();
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(x.rows(), x.rows());
  for (Eigen::Index k = 0; k < x.cols(); ++k) {
    const Eigen::VectorXd d = x.col(k) - mean;
    c += d * d.transpose();
  }
  return c / static_cast<double>(x.cols() - 1);
}

Model heterogeneous_ws(std::uint64_t seed) {
  Graph g = make_watts_strogatz(12, 4, 0.3, seed);
  std::mt19937_64 rng(seed);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (auto& v : s) v = 0.8 + 0.4 * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  for (auto& v : sigma) v = 0.2 + 0.1 * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return Model(std::move(g), std::move(s), std::move(sigma));
}

struct Summary {
  double mean = 0, sd = 0;
};
Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return s;
}

// Two-sided z threshold with P(|Z| > 5.2) = 2.0e-7 per test (<= 1e-6 even with a few tests per case and
// some departure from normality of a mean of 400 replicates).
constexpr double kZ = 5.2;

}  // namespace

BOOST_AUTO_TEST_SUITE(woodbury)

BOOST_AUTO_TEST_CASE(reconstructs_cov_x_from_exact_cov_x_tilde) {
  // [eq:cov_woodbury3] on exact dense matrices, homogeneous torus and heterogeneous Watts–Strogatz.
  for (const Model& m : {Model(make_torus(4, 5), 1.0, 0.3), heterogeneous_ws(7), Model(make_star(6), 0.7, 1.3)}) {
    const Eigen::MatrixXd cov_x = exact_cov_x(m);
    const Eigen::MatrixXd cov_xt = exact_cov_x_tilde(m);
    const Eigen::MatrixXd rec = woodbury_primal_covariance(m.node_variances(), cov_xt);
    BOOST_TEST((rec - cov_x).cwiseAbs().maxCoeff() < 1e-12);
    const Eigen::VectorXd var = woodbury_primal_variances(m.node_variances(), cov_xt.diagonal());
    BOOST_TEST((var - cov_x.diagonal()).cwiseAbs().maxCoeff() < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(rejects_mismatched_sizes) {
  BOOST_CHECK_THROW(woodbury_primal_covariance(Eigen::VectorXd::Ones(3), Eigen::MatrixXd::Zero(2, 2)),
                    std::invalid_argument);
  BOOST_CHECK_THROW(woodbury_primal_variances(Eigen::VectorXd::Ones(3), Eigen::VectorXd::Zero(4)),
                    std::invalid_argument);
  BOOST_CHECK_THROW(
      unbiased_error(Eigen::MatrixXd::Zero(2, 2), Eigen::MatrixXd::Zero(2, 2), Eigen::MatrixXd::Zero(3, 3)),
      std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(grouped_moments)

BOOST_AUTO_TEST_CASE(matches_naive_moments_for_every_grouping) {
  boost::random::mt19937_64 rng(11);
  Eigen::MatrixXd x = draws_from_precision(dense(Model(make_cycle(5), 1.0, 0.5).primal_precision()), 37, rng);
  x.array() += 3.0;  // an offset the two-pass centring must absorb
  const Eigen::MatrixXd cov = naive_covariance(x);
  for (std::size_t groups : {1u, 2u, 5u, 37u}) {
    const GroupedMoments gm(x, groups, MomentKind::Full);
    const SampleMoments m = gm.moments();
    BOOST_TEST(m.count == 37.0);
    BOOST_TEST((m.mean - x.rowwise().mean()).cwiseAbs().maxCoeff() < 1e-13);
    BOOST_TEST((m.covariance - cov).cwiseAbs().maxCoeff() < 1e-13);
    BOOST_TEST((m.covariance - m.covariance.transpose()).cwiseAbs().maxCoeff() == 0.0);
    const GroupedMoments gd(x, groups, MomentKind::Diagonal);
    BOOST_TEST((gd.moments().variance - cov.diagonal()).cwiseAbs().maxCoeff() < 1e-13);
    BOOST_TEST(gd.moments().covariance.size() == 0);
  }
  // Deleting a group and ranges of groups agree with moments of the remaining columns.
  const GroupedMoments gm(x, std::vector<std::size_t>{0, 10, 20, 37}, MomentKind::Full);
  MomentSums rest = gm.total();
  rest -= gm.group(1);
  Eigen::MatrixXd kept(x.rows(), 27);
  kept << x.leftCols(10), x.rightCols(17);
  BOOST_TEST((gm.moments(rest).covariance - naive_covariance(kept)).cwiseAbs().maxCoeff() < 1e-13);
  BOOST_TEST((gm.moments(gm.range(1, 3)).covariance - naive_covariance(x.rightCols(27))).cwiseAbs().maxCoeff() < 1e-13);
}

BOOST_AUTO_TEST_CASE(mapped_sums_are_those_of_the_mapped_draws) {
  // The sums of A x derived from those of x agree with the sums built from the draws A x to within rounding (the
  // same arithmetic in another order), keep their scatters exactly symmetric, and do not depend on the thread count.
  boost::random::mt19937_64 rng(17);
  Eigen::MatrixXd x = draws_from_precision(dense(Model(make_torus(3, 4), 1.0, 0.5).primal_precision()), 203, rng);
  x.array() += 2.0;  // an offset: the centres map too
  const Eigen::MatrixXd map = Eigen::MatrixXd::Identity(12, 12) + 0.3 * Eigen::MatrixXd::Random(12, 12);
  const std::vector<std::size_t> cuts{0, 40, 90, 150, 203};
  const GroupedMoments gm(x, cuts, MomentKind::Full);
  const GroupedMoments want(map * x, cuts, MomentKind::Full);
  const GroupedMoments got = gm.mapped(map, Execution{1});
  BOOST_REQUIRE_EQUAL(got.num_groups(), 4u);
  BOOST_TEST(got.count() == 203.0);
  const double scale = want.total().scatter.cwiseAbs().maxCoeff();
  for (std::size_t g = 0; g < 4; ++g) {
    // Another centre (A c against the mean of A x): compare the moments, which do not depend on it.
    const SampleMoments a = got.moments(got.group(g)), b = want.moments(want.group(g));
    BOOST_TEST(got.group(g).count == want.group(g).count);
    BOOST_TEST((a.mean - b.mean).cwiseAbs().maxCoeff() < 1e-12 * (1.0 + b.mean.cwiseAbs().maxCoeff()));
    BOOST_TEST((a.covariance - b.covariance).cwiseAbs().maxCoeff() < 1e-12 * scale);
    const Eigen::Map<const Eigen::MatrixXd> p(got.group(g).scatter.data(), 12, 12);
    BOOST_TEST((p - p.transpose()).cwiseAbs().maxCoeff() == 0.0);
  }
  const GroupedMoments threaded = gm.mapped(map, Execution{2});
  for (std::size_t g = 0; g < 4; ++g)
    BOOST_TEST((threaded.group(g).scatter.array() == got.group(g).scatter.array()).all());
  // Work alongside runs once; the marginal variances, a map of another size or with a NaN are refused.
  int runs = 0;
  (void)gm.mapped(map, Execution{2}, [&] { ++runs; });
  BOOST_TEST(runs == 1);
  BOOST_CHECK_THROW((void)GroupedMoments(x, cuts, MomentKind::Diagonal).mapped(map), std::invalid_argument);
  BOOST_CHECK_THROW((void)gm.mapped(Eigen::MatrixXd::Identity(11, 12)), std::invalid_argument);
  Eigen::MatrixXd bad = map;
  bad(3, 4) = std::nan("");
  BOOST_CHECK_THROW((void)gm.mapped(bad), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(weighted_moments_equal_moments_of_replicated_columns) {
  boost::random::mt19937_64 rng(3);
  const Eigen::MatrixXd x = draws_from_precision(Eigen::MatrixXd::Identity(3, 3) * 2.0, 6, rng);
  const GroupedMoments gm(x, 6, MomentKind::Full);
  const std::vector<double> w{2, 0, 1, 3, 0, 1};
  Eigen::MatrixXd rep(3, 7);
  Eigen::Index c = 0;
  for (Eigen::Index k = 0; k < 6; ++k)
    for (int r = 0; r < static_cast<int>(w[static_cast<std::size_t>(k)]); ++r) rep.col(c++) = x.col(k);
  BOOST_TEST((gm.moments_weighted(w).covariance - naive_covariance(rep)).cwiseAbs().maxCoeff() < 1e-13);
}

BOOST_AUTO_TEST_CASE(bootstrap_standard_error_of_a_mean_matches_theory) {
  // The bootstrap sd of the sample mean of n i.i.d. draws is s / sqrt(n) (s the plug-in sd) up to the
  // replicate noise: relative sd of a bootstrap variance from B = 4000 replicates is sqrt(2/B) = 2.2%, so a
  // 15% band on the sd (30% on the variance) is > 10 sd: false failure far below 1e-6.
  boost::random::mt19937_64 rng(5);
  const Eigen::MatrixXd x = draws_from_precision(Eigen::MatrixXd::Identity(2, 2), 500, rng);
  const GroupedMoments gm(x, 500, MomentKind::Full);
  const std::vector<double> boot = gm.bootstrap(4000, 99, [](const SampleMoments& m) { return m.mean(0); });
  BOOST_TEST(boot.size() == 4000u);
  const Summary s = summarize(boot);
  const double plugin_sd = std::sqrt(naive_covariance(x)(0, 0) * 499.0 / 500.0);
  BOOST_TEST(std::abs(s.sd / (plugin_sd / std::sqrt(500.0)) - 1.0) < 0.15);
  // Same seed, same replicates.
  BOOST_TEST(gm.bootstrap(10, 99, [](const SampleMoments& m) { return m.mean(0); })[3] == boot[3]);
}

BOOST_AUTO_TEST_CASE(single_draw_bootstrap_equals_naive_resampling) {
  // Oracle: the documented resampling (replicate r draws n indices with uniform_below from
  // make_stream(seed, r, Bootstrap)) done by copying columns and computing the sample covariance directly, in
  // double. bootstrap_draws forms the same resamples as weighted sums in single precision: the statistic must
  // agree to single-precision rounding of the products (the draws' offset of 3 must not cost accuracy: it works
  // about the mean). 1300 draws and 600 replicates cross its chunk (4096 draws: one chunk here) and batch (512)
  // boundaries; dimension 7 gives 35 feature rows.
  boost::random::mt19937_64 rng(17);
  Eigen::MatrixXd x = draws_from_precision(dense(Model(make_cycle(7), 1.0, 0.5).primal_precision()), 1300, rng);
  x.array() += 3.0;
  const Eigen::MatrixXd weight = Eigen::MatrixXd::Random(7, 7);
  auto statistic = [&](const SampleMoments& m) {
    return (m.covariance.cwiseProduct(weight)).norm() + 10.0 * m.mean.sum();
  };
  const std::size_t replicates = 600;
  const std::vector<double> fast = bootstrap_draws(x, replicates, 21, statistic);
  BOOST_TEST(fast.size() == replicates);
  double worst = 0;
  for (std::size_t r = 0; r < replicates; ++r) {
    ChainEngine e = make_stream(21, r, StreamPurpose::Bootstrap);
    Eigen::MatrixXd resample(x.rows(), x.cols());
    for (Eigen::Index k = 0; k < x.cols(); ++k)
      resample.col(k) = x.col(static_cast<Eigen::Index>(uniform_below(e, static_cast<std::uint64_t>(x.cols()))));
    SampleMoments m;
    m.count = static_cast<double>(x.cols());
    m.mean = resample.rowwise().mean();
    m.covariance = naive_covariance(resample);
    worst = std::max(worst, std::abs(fast[r] - statistic(m)) / std::abs(statistic(m)));
  }
  BOOST_TEST(worst < 1e-6);
  // A single-draw bootstrap, not a block one: the replicates differ (no replicate equals the full sample).
  const GroupedMoments all(x, 1, MomentKind::Full);
  BOOST_TEST(std::abs(fast[0] - statistic(all.moments())) > 0.0);
  // Same seed and count, same bits; another count changes only the products' single-precision blocking.
  BOOST_TEST(bootstrap_draws(x, replicates, 21, statistic)[2] == fast[2]);
  BOOST_TEST(std::abs(bootstrap_draws(x, 3, 21, statistic)[2] / fast[2] - 1.0) < 1e-8);
}

BOOST_AUTO_TEST_CASE(single_draw_bootstrap_rejects_bad_input) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(3, 10);
  auto stat = [](const SampleMoments& m) { return m.mean(0); };
  BOOST_CHECK_THROW(bootstrap_draws(x.leftCols(1), 5, 1, stat), std::invalid_argument);
  BOOST_CHECK_THROW(bootstrap_draws(x, 0, 1, stat), std::invalid_argument);
  BOOST_CHECK_THROW(bootstrap_draws(x, 5, 1, {}), std::invalid_argument);
  Eigen::MatrixXd bad = x;
  bad(1, 4) = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(bootstrap_draws(bad, 5, 1, stat), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(diagonal_moments_have_no_dimension_limit) {
  // 50000 coordinates: dim^2 overflows a 32-bit int, which only the full kind would need.
  Eigen::MatrixXd x(50000, 4);
  for (Eigen::Index k = 0; k < 4; ++k) x.col(k).setConstant(static_cast<double>(k));
  const GroupedMoments gd(x, 2, MomentKind::Diagonal);
  BOOST_TEST(gd.moments().variance(49999) == 5.0 / 3.0, boost::test_tools::tolerance(1e-14));
  BOOST_CHECK_THROW(GroupedMoments(x, 2, MomentKind::Full), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(rejects_bad_input) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 4);
  BOOST_CHECK_THROW(GroupedMoments(x, 0, MomentKind::Full), std::invalid_argument);
  BOOST_CHECK_THROW(GroupedMoments(x, 5, MomentKind::Full), std::invalid_argument);
  BOOST_CHECK_THROW(GroupedMoments(x, std::vector<std::size_t>{0, 2, 2, 4}, MomentKind::Full), std::invalid_argument);
  BOOST_CHECK_THROW(GroupedMoments(x, std::vector<std::size_t>{0, 3}, MomentKind::Full), std::invalid_argument);
  BOOST_CHECK_THROW(GroupedMoments(Eigen::MatrixXd(2, 0), 1, MomentKind::Full), std::invalid_argument);
  Eigen::MatrixXd bad = x;
  bad(1, 2) = std::nan("");
  BOOST_CHECK_THROW(GroupedMoments(bad, 2, MomentKind::Full), std::invalid_argument);
  const GroupedMoments gm(x, 4, MomentKind::Full);
  BOOST_CHECK_THROW(gm.moments(gm.group(0)), std::invalid_argument);  // one draw: no covariance
  BOOST_CHECK_THROW(gm.moments_weighted({1, 1}), std::invalid_argument);
  BOOST_CHECK_THROW(gm.moments_weighted({1, -1, 1, 1}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(split_half_error)

BOOST_AUTO_TEST_CASE(tracker_numbers_match_naive_formulas) {
  const Model m(make_torus(3, 4), 1.0, 0.4);
  const Eigen::MatrixXd target = exact_cov_x(m);
  boost::random::mt19937_64 rng(17);
  const Eigen::MatrixXd x = draws_from_precision(dense(m.primal_precision()), 41, rng);
  CovarianceErrorTracker track(Domain::Primal, m.node_variances(), target);
  const ErrorEstimate e = track.observe(3, 0.5, x);
  const Eigen::MatrixXd s = naive_covariance(x), s1 = naive_covariance(x.leftCols(20)),
                        s2 = naive_covariance(x.rightCols(21));
  BOOST_TEST(e.sweep == 3u);
  BOOST_TEST(e.Eb == (s - target).squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(e.Eu == ((s1 - target).array() * (s2 - target).array()).sum(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(e.Eb_floor == 0.25 * (s1 - s2).squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(e.mean_norm == x.rowwise().mean().norm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(e.mean_floor == 0.5 * (x.leftCols(20).rowwise().mean() - x.rightCols(21).rowwise().mean()).norm(),
             boost::test_tools::tolerance(1e-10));
  BOOST_TEST(e.Eu_se > 0);
  BOOST_TEST(track.history().size() == 1u);

  // Dual: states x~ scored through Woodbury.
  CovarianceErrorTracker dual(Domain::Dual, m.node_variances(), target);
  const ErrorEstimate ed = dual.observe(0, 0, x);
  const Eigen::MatrixXd w = woodbury_primal_covariance(m.node_variances(), s);
  const Eigen::MatrixXd w1 = woodbury_primal_covariance(m.node_variances(), s1);
  const Eigen::MatrixXd w2 = woodbury_primal_covariance(m.node_variances(), s2);
  BOOST_TEST(ed.Eb == (w - target).squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(ed.Eu == unbiased_error(w1, w2, target), boost::test_tools::tolerance(1e-10));

  // Diagonal tracker: the same numbers restricted to the diagonal.
  CovarianceErrorTracker diag(Domain::Primal, m.node_variances(), Eigen::MatrixXd(target.diagonal()));
  BOOST_TEST((diag.kind() == MomentKind::Diagonal));
  const ErrorEstimate eg = diag.observe(0, 0, x);
  BOOST_TEST(eg.Eb == (s.diagonal() - target.diagonal()).squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(eg.Eu == ((s1.diagonal() - target.diagonal()).array() * (s2.diagonal() - target.diagonal()).array()).sum(),
             boost::test_tools::tolerance(1e-10));
}

/// K independent ensembles of L exact draws, scored by a tracker against `target`.
std::vector<ErrorEstimate> exact_ensembles(Domain domain, const Model& m, const Eigen::MatrixXd& target, std::size_t K,
                                           std::size_t L, std::uint64_t seed) {
  boost::random::mt19937_64 rng(seed);
  const Eigen::MatrixXd b = dense(m.incidence());
  const Eigen::MatrixXd precision = dense(domain == Domain::Primal ? m.primal_precision() : m.dual_precision());
  CovarianceErrorTracker track(domain, m.node_variances(), target);
  for (std::size_t k = 0; k < K; ++k) {
    Eigen::MatrixXd z = draws_from_precision(precision, L, rng);
    if (domain == Domain::Dual) z = b * z;  // x~ = B y~
    track.observe(k, 0, z);
  }
  return track.history();
}

BOOST_AUTO_TEST_CASE(unbiased_error_of_exact_ensembles_has_mean_zero) {
  // Exact draws: Sigma_t = Sigma, so E[Eu] = 0 [eq:unbiased_error], in both domains (the dual through
  // Woodbury). z-test on the mean of K = 2000 ensembles, |z| < 5.2: false failure 2e-7 per domain.
  // Power: the same test with a wrong target must reject (next case), so it can fail.
  const Model m(make_torus(4, 4), 1.0, 0.5);
  const Eigen::MatrixXd target = exact_cov_x(m);
  for (Domain domain : {Domain::Primal, Domain::Dual}) {
    const auto hist = exact_ensembles(domain, m, target, 2000, 200, domain == Domain::Primal ? 1 : 2);
    std::vector<double> eu, eu_se2, eb, floor;
    for (const auto& e : hist) {
      eu.push_back(e.Eu);
      eu_se2.push_back(e.Eu_se * e.Eu_se);
      eb.push_back(e.Eb);
      floor.push_back(e.Eb_floor);
    }
    const Summary s = summarize(eu);
    const double z = s.mean / (s.sd / std::sqrt(static_cast<double>(eu.size())));
    BOOST_TEST_MESSAGE(to_string(domain) << ": mean Eu " << s.mean << " sd " << s.sd << " z " << z);
    BOOST_TEST(std::abs(z) < kZ);
    // Eu_se against the spread of Eu over ensembles. At convergence the estimate is conservative by
    // design (floored at tr(C1^ C2^), see estimators.cpp): measured 1.2x (dual) to 1.8x (primal) in
    // variance. The sample variance of 2000 replicates has relative sd <= sqrt(8 / 2000) = 6.3% (kurtosis
    // of a product of normals <= 9), so [0.7, 2.8] holds with > 5 sd to spare and still catches an error
    // bar off by a factor sqrt(2) the wrong way or by sqrt(groups).
    const double ratio = summarize(eu_se2).mean / (s.sd * s.sd);
    BOOST_TEST_MESSAGE("  Eu_se^2 / Var(Eu) = " << ratio);
    BOOST_TEST(ratio > 0.7);
    BOOST_TEST(ratio < 2.8);
    // Eb's floor estimates Eb's bias: at convergence E[Eb] = E[floor] up to O(1/L).
    BOOST_TEST(std::abs(summarize(eb).mean / summarize(floor).mean - 1.0) < 0.1);
  }
}

BOOST_AUTO_TEST_CASE(unbiased_error_detects_a_wrong_target) {
  // Target off by 10% (primal) or 50% (dual, whose Woodbury estimate is about 10x noisier here): E[Eu] =
  // ||Sigma - target||_F^2 > 0 and the same z-test rejects decisively (measured z ~ 17 and ~ 60).
  const Model m(make_torus(4, 4), 1.0, 0.5);
  const Eigen::MatrixXd target = exact_cov_x(m);
  for (Domain domain : {Domain::Primal, Domain::Dual}) {
    const double scale = domain == Domain::Primal ? 1.1 : 1.5;
    const auto hist = exact_ensembles(domain, m, scale * target, 2000, 200, 3);
    std::vector<double> eu, se2;
    for (const auto& e : hist) {
      eu.push_back(e.Eu);
      se2.push_back(e.Eu_se * e.Eu_se);
    }
    const Summary s = summarize(eu);
    const double sem = s.sd / std::sqrt(2000.0);
    BOOST_TEST(s.mean / sem > kZ);
    // The expectation is the squared distance itself (|z| < 5.2 again).
    const double truth = ((scale - 1.0) * target).squaredNorm();
    BOOST_TEST(std::abs(s.mean - truth) < kZ * sem);
    // Away from convergence the standard error is close to unbiased (measured 1.0x to 1.4x).
    const double ratio = summarize(se2).mean / (s.sd * s.sd);
    BOOST_TEST_MESSAGE(to_string(domain) << " off target: Eu_se^2 / Var(Eu) = " << ratio);
    BOOST_TEST(ratio > 0.7);
    BOOST_TEST(ratio < 1.9);
  }
}

BOOST_AUTO_TEST_CASE(dual_estimate_carries_more_variance_on_a_stiff_model) {
  // sigma << s: Cov(X) is small but D_s Cov(x~) D_s is close to D_s, so the Woodbury difference amplifies
  // the noise of Cov^(x~). The standard errors must show it (the user-visible point of Eu_se).
  const Model m(make_torus(4, 4), 1.0, 0.1);
  const Eigen::MatrixXd target = exact_cov_x(m);
  const auto p = exact_ensembles(Domain::Primal, m, target, 20, 400, 8);
  const auto d = exact_ensembles(Domain::Dual, m, target, 20, 400, 9);
  double sp = 0, sd = 0;
  for (std::size_t k = 0; k < 20; ++k) {
    sp += p[k].Eb_floor;
    sd += d[k].Eb_floor;
  }
  BOOST_TEST(sd > 10 * sp);
}

BOOST_AUTO_TEST_CASE(tracker_rejects_bad_input) {
  const Eigen::VectorXd ds = Eigen::VectorXd::Ones(3);
  BOOST_CHECK_THROW(CovarianceErrorTracker(Domain::Primal, ds, Eigen::MatrixXd::Identity(2, 2)), std::invalid_argument);
  BOOST_CHECK_THROW(CovarianceErrorTracker(Domain::Primal, Eigen::VectorXd(), Eigen::MatrixXd()),
                    std::invalid_argument);
  BOOST_CHECK_THROW(CovarianceErrorTracker(Domain::Primal, -ds, Eigen::MatrixXd::Identity(3, 3)),
                    std::invalid_argument);
  Eigen::MatrixXd nan_target = Eigen::MatrixXd::Identity(3, 3);
  nan_target(0, 1) = std::nan("");
  BOOST_CHECK_THROW(CovarianceErrorTracker(Domain::Primal, ds, nan_target), std::invalid_argument);
  ErrorTrackerOptions one_group;
  one_group.jackknife_groups = 1;
  BOOST_CHECK_THROW(CovarianceErrorTracker(Domain::Primal, ds, Eigen::MatrixXd::Identity(3, 3), one_group),
                    std::invalid_argument);
  CovarianceErrorTracker t(Domain::Primal, ds, Eigen::MatrixXd::Identity(3, 3));
  BOOST_CHECK_THROW(t.observe(0, 0, Eigen::MatrixXd::Zero(2, 10)), std::invalid_argument);  // wrong dimension
  BOOST_CHECK_THROW(t.observe(0, 0, Eigen::MatrixXd::Zero(3, 3)), std::invalid_argument);   // too few chains
  Eigen::MatrixXd inf_states = Eigen::MatrixXd::Zero(3, 8);
  inf_states(2, 5) = INFINITY;
  BOOST_CHECK_THROW(t.observe(0, 0, inf_states), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_mapped_tracker_scores_the_mapped_states) {
  // A second tracker fed through observe_batch's Mapped scores the checkpoints as it would from the mapped states
  // themselves, within rounding; the first tracker's own scores are bitwise those without it, for 1 and 2 threads.
  const Model m(make_torus(3, 4), 1.0, 0.4);
  const Eigen::MatrixXd cov = exact_cov_x(m);
  boost::random::mt19937_64 rng(29);
  std::vector<Eigen::MatrixXd> states, images;
  const Eigen::MatrixXd map = Eigen::MatrixXd::Identity(12, 12) + 0.2 * Eigen::MatrixXd::Random(12, 12);
  for (int c = 0; c < 3; ++c) {
    states.push_back(draws_from_precision(dense(m.primal_precision()), 61, rng));
    images.push_back(map * states.back());
  }
  const std::vector<Eigen::Ref<const Eigen::MatrixXd>> refs(states.begin(), states.end()),
      image_refs(images.begin(), images.end());
  const std::vector<std::size_t> sweeps{0, 1, 2};
  const std::vector<double> seconds{0.0, 0.5, 1.0};
  const Eigen::MatrixXd shifted = cov + 0.1 * Eigen::MatrixXd::Identity(12, 12);  // any target of the second
  CovarianceErrorTracker plain(Domain::Dual, m.node_variances(), cov);
  CovarianceErrorTracker direct(Domain::Dual, m.node_variances(), shifted);
  plain.observe_batch(sweeps, seconds, refs, 0, 61);
  direct.observe_batch(sweeps, seconds, image_refs, 0, 61);
  for (unsigned threads : {1u, 2u}) {
    CovarianceErrorTracker first(Domain::Dual, m.node_variances(), cov);
    CovarianceErrorTracker second(Domain::Dual, m.node_variances(), shifted);
    first.observe_batch(sweeps, seconds, refs, 0, 61, Execution{threads}, CovarianceErrorTracker::Mapped{second, map});
    BOOST_REQUIRE_EQUAL(second.history().size(), 3u);
    for (std::size_t c = 0; c < 3; ++c) {
      BOOST_TEST_CONTEXT("threads " << threads << ", checkpoint " << c) {
        BOOST_TEST(first.history()[c].Eu == plain.history()[c].Eu);
        BOOST_TEST(first.history()[c].Eu_se == plain.history()[c].Eu_se);
        const ErrorEstimate &a = second.history()[c], &b = direct.history()[c];
        const double tol = 1e-10 * b.Eb;  // every score is a sum of products of the deviations, whose size Eb is
        BOOST_TEST(std::abs(a.Eb - b.Eb) < tol);
        BOOST_TEST(std::abs(a.Eu - b.Eu) < tol);
        BOOST_TEST(std::abs(a.Eb_floor - b.Eb_floor) < tol);
        BOOST_TEST(std::abs(a.Eu_se - b.Eu_se) < 1e-8 * b.Eu_se);
        BOOST_TEST(std::abs(a.Eb_se - b.Eb_se) < 1e-8 * b.Eb_se);
        BOOST_TEST(std::abs(a.mean_norm - b.mean_norm) < 1e-12 * b.mean_norm);
        BOOST_TEST(a.sweep == b.sweep);
      }
    }
    BOOST_TEST((second.last_estimate() - direct.last_estimate()).cwiseAbs().maxCoeff() < 1e-12);
  }
  // Trackers that cannot share sums: marginal variances, other jackknife groups, a map of another size.
  CovarianceErrorTracker t(Domain::Dual, m.node_variances(), cov);
  CovarianceErrorTracker diagonal(Domain::Dual, m.node_variances(), Eigen::MatrixXd(cov.diagonal()));
  ErrorTrackerOptions fewer;
  fewer.jackknife_groups = 3;
  CovarianceErrorTracker other_groups(Domain::Dual, m.node_variances(), cov, fewer);
  BOOST_CHECK_THROW(t.observe_batch(sweeps, seconds, refs, 0, 61, Execution(), {diagonal, map}), std::invalid_argument);
  BOOST_CHECK_THROW(t.observe_batch(sweeps, seconds, refs, 0, 61, Execution(), {other_groups, map}),
                    std::invalid_argument);
  const Eigen::MatrixXd small = map.topLeftCorner(11, 11);
  BOOST_CHECK_THROW(t.observe_batch(sweeps, seconds, refs, 0, 61, Execution(), {direct, small}), std::invalid_argument);
  BOOST_CHECK_THROW(t.observe_batch(sweeps, seconds, refs, 0, 61, Execution(), {t, map}), std::invalid_argument);
  BOOST_TEST(t.history().empty());
}

BOOST_AUTO_TEST_CASE(a_batch_of_checkpoints_scores_as_one_at_a_time) {
  // observe_batch must append bitwise what observe gives checkpoint by checkpoint (full and diagonal, both domains),
  // and leave a tracker's state alone otherwise: the last estimate is the last checkpoint's.
  const Model m(make_torus(3, 4), 1.0, 0.4);
  const Eigen::MatrixXd cov = exact_cov_x(m);
  boost::random::mt19937_64 rng(23);
  std::vector<Eigen::MatrixXd> states;
  for (int c = 0; c < 4; ++c) states.push_back(draws_from_precision(dense(m.primal_precision()), 37, rng));
  const std::vector<Eigen::Ref<const Eigen::MatrixXd>> refs(states.begin(), states.end());
  for (Domain d : {Domain::Primal, Domain::Dual})
    for (bool full : {true, false}) {
      const Eigen::MatrixXd target = full ? cov : Eigen::MatrixXd(cov.diagonal());
      CovarianceErrorTracker one(d, m.node_variances(), target), all(d, m.node_variances(), target);
      for (int c = 0; c < 4; ++c) one.observe(static_cast<std::size_t>(c), 0.25 * c, states[c]);
      const std::vector<ErrorEstimate> got = all.observe_batch({0, 1, 2, 3}, {0, 0.25, 0.5, 0.75}, refs, 0, 37);
      BOOST_REQUIRE_EQUAL(got.size(), 4u);
      BOOST_REQUIRE_EQUAL(all.history().size(), 4u);
      for (std::size_t c = 0; c < 4; ++c) {
        const ErrorEstimate &a = all.history()[c], &b = one.history()[c];
        BOOST_TEST(got[c].Eu == a.Eu);
        BOOST_TEST(a.sweep == b.sweep);
        BOOST_TEST(a.seconds == b.seconds);
        BOOST_TEST(a.Eb == b.Eb);
        BOOST_TEST(a.Eu == b.Eu);
        BOOST_TEST(a.Eb_se == b.Eb_se);
        BOOST_TEST(a.Eu_se == b.Eu_se);
        BOOST_TEST(a.Eb_floor == b.Eb_floor);
        BOOST_TEST(a.mean_norm == b.mean_norm);
        BOOST_TEST(a.mean_floor == b.mean_floor);
        BOOST_TEST(a.max_abs_error == b.max_abs_error);
      }
      BOOST_TEST((all.last_estimate().array() == one.last_estimate().array()).all());
    }
  // Lists of different lengths, no checkpoint, states of different shapes, a non-finite time.
  CovarianceErrorTracker t(Domain::Primal, m.node_variances(), cov);
  BOOST_CHECK_THROW(t.observe_batch({0, 1}, {0.0}, refs, 0, 37), std::invalid_argument);
  BOOST_CHECK_THROW(t.observe_batch({}, {}, {}, 0, 37), std::invalid_argument);
  const Eigen::MatrixXd fewer = states[0].leftCols(36);
  BOOST_CHECK_THROW(t.observe_batch({0, 1}, {0.0, 0.0}, {states[0], fewer}, 0, 37), std::invalid_argument);
  BOOST_CHECK_THROW(t.observe_batch({0}, {std::nan("")}, {states[0]}, 0, 37), std::invalid_argument);
  BOOST_CHECK_THROW(GroupedMoments::batch({}, 0, {0, 37}, MomentKind::Full), std::invalid_argument);
  BOOST_TEST(t.history().empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rate_fit)

BOOST_AUTO_TEST_CASE(theil_sen_recovers_a_geometric_rate_despite_outliers) {
  // E_t = 5 r^(2t), r = 0.9, with 5 of 41 points corrupted by factors 10 and 1/10. More than half of the
  // pairwise slopes are exact, so the median slope is exact.
  const double r = 0.9;
  std::vector<double> t, e;
  for (int k = 0; k <= 40; ++k) {
    t.push_back(k);
    e.push_back(5.0 * std::pow(r, 2.0 * k));
  }
  for (int k : {3, 11, 20}) e[static_cast<std::size_t>(k)] *= 10.0;
  for (int k : {7, 31}) e[static_cast<std::size_t>(k)] /= 10.0;
  RateFitOptions opt;
  opt.exponent = 2.0;
  opt.first_sweep = 0;
  const RateFit fit = fit_decay_rate(t, e, std::vector<double>(t.size(), 0.0), opt);
  BOOST_TEST(fit.ok());
  BOOST_TEST(fit.points == 41u);
  BOOST_TEST(fit.neg_log_rate == -std::log(r), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(fit.rate == r, boost::test_tools::tolerance(1e-12));
  // Exponent 1 (a norm): the same sequence means twice the -ln r.
  opt.exponent = 1.0;
  BOOST_TEST(fit_decay_rate(t, e, {}, opt).neg_log_rate == -2.0 * std::log(r), boost::test_tools::tolerance(1e-12));
  // Plain line.
  const LineFit line = theil_sen({0, 1, 2, 3}, {1, 3, 5, 7});
  BOOST_TEST(line.slope == 2.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(line.intercept == 1.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(window_stops_at_the_noise_floor) {
  // E_t = r^(2t) + floor noise (amplitude 1e-6, alternating sign): the window must end before the floor
  // (snr 3) and the fit must recover -ln r to 1%.
  const double r = 0.7;
  std::vector<double> t, e, noise;
  for (int k = 0; k <= 60; ++k) {
    t.push_back(k);
    e.push_back(std::pow(r, 2.0 * k) + ((k % 2) ? 1e-6 : -1e-6));
    noise.push_back(1e-6);
  }
  const RateFit fit = fit_decay_rate(t, e, noise);
  BOOST_TEST(fit.ok());
  BOOST_TEST(fit.first_sweep == 1.0);
  // r^(2t) > 3e-6 + 1e-6 until t ~ 17.4
  BOOST_TEST(fit.last_sweep <= 18.0);
  BOOST_TEST(fit.last_sweep >= 15.0);
  BOOST_TEST(std::abs(fit.neg_log_rate / -std::log(r) - 1.0) < 0.01);
  // Tail-estimated noise (no noise vector) gives a similar window.
  const RateFit tail = fit_decay_rate(t, e, {});
  BOOST_TEST(tail.ok());
  BOOST_TEST(std::abs(tail.neg_log_rate / -std::log(r) - 1.0) < 0.02);
}

BOOST_AUTO_TEST_CASE(tail_fraction_fits_the_asymptotic_rate) {
  // Mean of two modes, 1e6 0.5^t (fast) + 0.9^t (slow): the fast one dominates the first 23 sweeps, so
  // the whole window (sweeps 1..80) mixes them; its last half (41..80) follows the slow mode (there the
  // fast one is below 4e-5 of it).
  std::vector<double> t, m;
  for (int k = 0; k <= 80; ++k) {
    t.push_back(k);
    m.push_back(1e6 * std::pow(0.5, k) + std::pow(0.9, k));
  }
  RateFitOptions opt;
  opt.exponent = 1;
  const RateFit all = fit_decay_rate(t, m, std::vector<double>(t.size(), 0.0), opt);
  opt.tail_fraction = 0.5;
  const RateFit tail = fit_decay_rate(t, m, std::vector<double>(t.size(), 0.0), opt);
  BOOST_TEST(all.neg_log_rate > 1.05 * -std::log(0.9));
  BOOST_TEST(tail.first_sweep == 41.0);
  BOOST_TEST(tail.neg_log_rate == -std::log(0.9), boost::test_tools::tolerance(1e-4));
  opt.tail_fraction = 0;
  BOOST_CHECK_THROW(fit_decay_rate(t, m, {}, opt), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(no_fit_without_a_clean_window) {
  const RateFit fit = fit_decay_rate({0, 1, 2, 3}, {1.0, 1e-9, -1e-9, 1e-9}, {0.1, 0.1, 0.1, 0.1});
  BOOST_TEST(!fit.ok());
  BOOST_TEST(!fit.note.empty());
  BOOST_TEST(std::isnan(fit.neg_log_rate));
  BOOST_CHECK_THROW(fit_decay_rate({0, 1}, {1.0}, {}), std::invalid_argument);
  BOOST_CHECK_THROW(fit_decay_rate({0, 1}, {1.0, 0.5}, {1.0}), std::invalid_argument);
  RateFitOptions bad;
  bad.exponent = 0;
  BOOST_CHECK_THROW(fit_decay_rate({0, 1}, {1.0, 0.5}, {}, bad), std::invalid_argument);
  BOOST_CHECK_THROW(theil_sen({1, 1}, {0, 1}), std::invalid_argument);
  BOOST_CHECK_THROW(theil_sen({1}, {0}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(normalisation_to_sweep_zero) {
  const auto n = normalise_to_first({4.0, 2.0, -1.0});
  BOOST_TEST(n[0] == 1.0);
  BOOST_TEST(n[1] == 0.5);
  BOOST_TEST(n[2] == -0.25);
  BOOST_TEST(std::isnan(normalise_to_first({0.0, 1.0})[1]));
  BOOST_TEST(normalise_to_first({}).empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the bad-input audit: every function of estimators.hpp that takes user data ---------------
BOOST_AUTO_TEST_SUITE(bad_input)

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

BOOST_AUTO_TEST_CASE(column_mean_rejects_empty_or_out_of_range_columns) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(3, 8);
  BOOST_CHECK_EXCEPTION(column_mean(x, 0, 0), std::invalid_argument,
                        testing::message_has({"column_mean: columns [0, 0 + 0)"}));
  BOOST_CHECK_EXCEPTION(column_mean(x, 6, 5), std::invalid_argument, testing::message_has({"outside the 8 columns"}));
  BOOST_CHECK_EXCEPTION(column_mean(x, -1, 2), std::invalid_argument, testing::message_has({"outside"}));
  BOOST_TEST(((column_mean(x, 2, 6) - x.middleCols(2, 6).rowwise().mean()).cwiseAbs().maxCoeff() < 1e-15));
}

BOOST_AUTO_TEST_CASE(sums_of_another_shape_are_rejected) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(3, 8);
  const GroupedMoments gm(x, 4, MomentKind::Full);
  MomentSums a = gm.group(0);
  MomentSums d;  // dimension 2, the other kind's scatter
  d.count = 5;
  d.sum = Eigen::VectorXd::Zero(2);
  d.scatter = Eigen::VectorXd::Zero(2);
  BOOST_CHECK_EXCEPTION(a += d, std::invalid_argument,
                        testing::message_has({"MomentSums::operator+=: sums of different shapes (dimension 3"}));
  BOOST_CHECK_EXCEPTION(a -= d, std::invalid_argument, testing::message_has({"MomentSums::operator-="}));
  MomentSums wrong_scatter = gm.group(1);
  wrong_scatter.scatter = Eigen::VectorXd::Zero(3);  // a diagonal scatter for a full object
  BOOST_CHECK_EXCEPTION(gm.moments(wrong_scatter), std::invalid_argument,
                        testing::message_has({"sums of the wrong shape"}));
  BOOST_CHECK_EXCEPTION(gm.group(4), std::invalid_argument,
                        testing::message_has({"GroupedMoments::group: group 4 of 4 groups"}));
  BOOST_CHECK_EXCEPTION(gm.range(3, 5), std::invalid_argument, testing::message_has({"GroupedMoments::range"}));
  // Zero bootstrap replicates: no statistic evaluated, an empty result (valid).
  BOOST_TEST(gm.bootstrap(0, 1, [](const SampleMoments&) { return 1.0; }).empty());
}

BOOST_AUTO_TEST_CASE(woodbury_rejects_empty_non_finite_and_non_positive_input) {
  const Eigen::VectorXd ds = Eigen::VectorXd::Ones(2);
  const Eigen::MatrixXd c = Eigen::MatrixXd::Identity(2, 2);
  BOOST_CHECK_EXCEPTION(woodbury_primal_covariance(Eigen::VectorXd(), Eigen::MatrixXd()), std::invalid_argument,
                        testing::message_has({"no node variances"}));
  Eigen::VectorXd bad = ds;
  for (double v : {std::nan(""), kInf, 0.0, -1.0}) {
    bad(1) = v;
    BOOST_CHECK_EXCEPTION(woodbury_primal_covariance(bad, c), std::invalid_argument,
                          testing::message_has({"node variance s_v^2 of node 1"}));
    BOOST_CHECK_EXCEPTION(woodbury_primal_variances(bad, ds), std::invalid_argument,
                          testing::message_has({"node variance s_v^2 of node 1"}));
  }
  Eigen::MatrixXd cn = c;
  cn(0, 1) = std::nan("");
  BOOST_CHECK_EXCEPTION(woodbury_primal_covariance(ds, cn), std::invalid_argument,
                        testing::message_has({"Cov(x~) contains NaN or infinite"}));
  Eigen::VectorXd vn = ds;
  vn(0) = -kInf;
  BOOST_CHECK_EXCEPTION(woodbury_primal_variances(ds, vn), std::invalid_argument,
                        testing::message_has({"Var(x~) contains NaN or infinite"}));
}

BOOST_AUTO_TEST_CASE(primal_covariance_estimate_rejects_empty_or_mismatched_moments) {
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    BOOST_CHECK_EXCEPTION(primal_covariance_estimate(d, Eigen::VectorXd::Ones(2), SampleMoments{}),
                          std::invalid_argument, testing::message_has({"the moments are empty"}));
    const GroupedMoments gm(Eigen::MatrixXd::Random(3, 6), 2, MomentKind::Full);
    BOOST_CHECK_EXCEPTION(primal_covariance_estimate(d, Eigen::VectorXd::Ones(2), gm.moments()), std::invalid_argument,
                          testing::message_has({"moments of dimension 3"}));
  }
}

BOOST_AUTO_TEST_CASE(errors_reject_empty_and_non_finite_matrices) {
  const Eigen::MatrixXd one = Eigen::MatrixXd::Ones(2, 2);
  BOOST_CHECK_EXCEPTION(biased_error(Eigen::MatrixXd(), Eigen::MatrixXd()), std::invalid_argument,
                        testing::message_has({"is empty"}));
  BOOST_CHECK_EXCEPTION(unbiased_error(Eigen::MatrixXd(), Eigen::MatrixXd(), Eigen::MatrixXd()), std::invalid_argument,
                        testing::message_has({"is empty"}));
  for (double v : {std::nan(""), kInf}) {
    Eigen::MatrixXd bad = one;
    bad(1, 0) = v;
    BOOST_CHECK_EXCEPTION(biased_error(bad, one), std::invalid_argument,
                          testing::message_has({"biased_error: the first matrix contains NaN"}));
    BOOST_CHECK_EXCEPTION(biased_error(one, bad), std::invalid_argument,
                          testing::message_has({"the second matrix contains NaN"}));
    BOOST_CHECK_EXCEPTION(unbiased_error(bad, one, one), std::invalid_argument,
                          testing::message_has({"unbiased_error"}));
    BOOST_CHECK_EXCEPTION(unbiased_error(one, bad, one), std::invalid_argument,
                          testing::message_has({"unbiased_error"}));
    BOOST_CHECK_EXCEPTION(unbiased_error(one, one, bad), std::invalid_argument,
                          testing::message_has({"unbiased_error"}));
  }
  BOOST_TEST(unbiased_error(one, 3 * one, 2 * one) == -4.0);  // (1-2)(3-2) summed over 4 entries
}

BOOST_AUTO_TEST_CASE(tracker_needs_six_chains_and_then_gives_finite_standard_errors) {
  // With halves of two chains a delete-one-group jackknife replicate keeps one chain: its covariance is
  // 0/0, and Eu_se was NaN for 4 and 5 chains. Now: fewer than kMinSplitHalfChains = 6 is refused, and from
  // 6 on every number is finite, also with jackknife_groups = 2 (halves of 3 would leave 1 chain after
  // deleting the group of 2: the group count is raised to 3).
  const Model m(make_cycle(5), 1.0, 0.5);
  const Eigen::MatrixXd target = exact_cov_x(m);
  boost::random::mt19937_64 rng(3);
  const Eigen::MatrixXd x = draws_from_precision(dense(m.primal_precision()), 9, rng);
  for (Domain d : {Domain::Primal, Domain::Dual})
    for (bool diagonal : {false, true})
      for (std::size_t groups : {2, 16}) {
        ErrorTrackerOptions o;
        o.jackknife_groups = groups;
        CovarianceErrorTracker t(d, m.node_variances(), diagonal ? Eigen::MatrixXd(target.diagonal()) : target, o);
        for (Eigen::Index L : {0, 1, 4, 5})
          BOOST_CHECK_EXCEPTION(t.observe(0, 0, x.leftCols(L)), std::invalid_argument,
                                testing::message_has({"need at least 6 chains"}));
        for (Eigen::Index L : {6, 7, 9}) {
          const ErrorEstimate e = t.observe(1, 0.5, x.leftCols(L));
          for (double v : {e.Eb, e.Eu, e.Eb_floor, e.Eb_se, e.Eu_se, e.mean_norm, e.mean_floor, e.max_abs_error})
            BOOST_TEST(std::isfinite(v), "L = " << L << " groups " << groups);
          BOOST_TEST(e.Eu_se > 0);
          BOOST_TEST(e.Eb_se > 0);
        }
      }
  CovarianceErrorTracker t(Domain::Primal, m.node_variances(), target);
  BOOST_CHECK_EXCEPTION(t.observe(0, std::nan(""), x), std::invalid_argument,
                        testing::message_has({"seconds = nan is not finite"}));
  BOOST_TEST(t.history().empty());
}

BOOST_AUTO_TEST_CASE(rate_fit_rejects_bad_options_sweeps_and_noise) {
  const std::vector<double> t{0, 1, 2, 3, 4}, v{1, 0.5, 0.25, 0.125, 0.0625};
  RateFitOptions o;
  o.snr = std::nan("");
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {}, o), std::invalid_argument,
                        testing::message_has({"snr must be finite and non-negative"}));
  o.snr = -1;
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {}, o), std::invalid_argument, testing::message_has({"snr"}));
  o = RateFitOptions{};
  o.first_sweep = std::nan("");
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {}, o), std::invalid_argument,
                        testing::message_has({"first_sweep is NaN"}));
  o = RateFitOptions{};
  o.exponent = kInf;
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {}, o), std::invalid_argument, testing::message_has({"exponent"}));
  o.exponent = 2;
  o.tail_fraction = std::nan("");
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {}, o), std::invalid_argument, testing::message_has({"tail_fraction"}));
  BOOST_CHECK_EXCEPTION(fit_decay_rate({0, 1, std::nan(""), 3, 4}, v, {}), std::invalid_argument,
                        testing::message_has({"sweep 2 is nan"}));
  BOOST_CHECK_EXCEPTION(fit_decay_rate({0, 1, 2, kInf, 4}, v, {}), std::invalid_argument,
                        testing::message_has({"sweep 3 is inf"}));
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {0, 0, std::nan(""), 0, 0}), std::invalid_argument,
                        testing::message_has({"noise level 2 = nan"}));
  BOOST_CHECK_EXCEPTION(fit_decay_rate(t, v, {0, 0, 0, -1, 0}), std::invalid_argument,
                        testing::message_has({"noise level 3 = -1"}));
  // Empty input and an infinite noise level: no fit, with a note (valid, documented).
  const RateFit empty = fit_decay_rate({}, {}, {});
  BOOST_TEST(!empty.ok());
  BOOST_TEST(!empty.note.empty());
  BOOST_TEST(!fit_decay_rate(t, v, std::vector<double>(5, kInf)).ok());
  // Non-finite values end the window (a documented stop, not an error).
  const RateFit cut = fit_decay_rate(t, {1, 0.5, 0.25, 0.125, std::nan("")}, std::vector<double>(5, 0.0));
  BOOST_TEST(cut.ok());
  BOOST_TEST(cut.last_sweep == 3.0);
  BOOST_TEST(cut.neg_log_rate == std::log(2.0) / 2,
             boost::test_tools::tolerance(1e-14));  // E ~ r^(2t), halved by 2 per sweep
}

BOOST_AUTO_TEST_SUITE_END()

// ---- BLAS threads: the estimators' BLAS calls give the same bits for any BLAS thread count ----------
BOOST_AUTO_TEST_SUITE(blas_threads)

namespace {
bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}
}  // namespace

namespace {
// The process's thread count, from /proc/self/status ("Threads:"); 0 where it cannot be read.
int process_threads() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return 0;
}

// The most threads the process had while `work` ran, polled by one extra thread (counted).
template <class Work>
int peak_threads_during(const Work& work) {
  std::atomic<bool> done{false};
  std::atomic<int> peak{0};
  std::thread poller([&] {
    while (!done.load()) peak = std::max(peak.load(), process_threads());
  });
  while (peak.load() == 0) std::this_thread::yield();  // the poller has read at least once
  work();
  done = true;
  poller.join();
  return peak.load();
}
}  // namespace

BOOST_AUTO_TEST_CASE(available_threads_follow_the_affinity_mask) {
  // threads = 0 means available_threads(): the CPUs the calling thread may run on (an MPI rank bound to one core gets
  // 1, not the machine's count), at least 1. Checked by binding this thread to one of its CPUs and back.
  cpu_set_t original;
  BOOST_REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof original, &original) == 0);
  const unsigned allowed = static_cast<unsigned>(CPU_COUNT(&original));
  BOOST_TEST(available_threads() == std::min(allowed, std::max(1u, std::thread::hardware_concurrency())));
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  BOOST_REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
  const unsigned bound = available_threads();
  BOOST_REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof original, &original) == 0);
  BOOST_TEST(bound == 1u);
  BOOST_TEST(available_threads() == std::min(allowed, std::max(1u, std::thread::hardware_concurrency())));
}

BOOST_AUTO_TEST_CASE(one_thread_keeps_the_estimators_on_the_calling_thread) {
  // GroupedMoments (Full) spreads its groups' rank-k updates over helper threads (run_tasks); given an Execution of
  // one thread the calling thread does them all. Observed from outside: the process's thread count, polled while it
  // builds. The cap must not change the bits.
  if (process_threads() == 0) {
    BOOST_TEST_MESSAGE("skipped: /proc/self/status is not readable");
    return;
  }
  boost::random::mt19937_64 rng(12);
  boost::random::normal_distribution<double> normal;
  Eigen::MatrixXd draws(300, 6000);  // 8 groups of 750 draws: 5.4e8 flops, far above run_tasks's 4e6
  for (Eigen::Index j = 0; j < draws.cols(); ++j)
    for (Eigen::Index i = 0; i < draws.rows(); ++i) draws(i, j) = normal(rng);
  Eigen::MatrixXd capped, free;
  const int before = process_threads() + 1;  // with the poller
  const int peak_capped = peak_threads_during(
      [&] { capped = GroupedMoments(draws, 8, MomentKind::Full, Execution{1}).moments().covariance; });
  BOOST_TEST(peak_capped == before);
  const int peak_free =
      peak_threads_during([&] { free = GroupedMoments(draws, 8, MomentKind::Full).moments().covariance; });
  // Without a cap helpers appear on a machine with several hardware threads (not asserted: a poll can miss
  // short-lived threads, and this shows only that the poller could have seen them).
  BOOST_TEST_MESSAGE("threads: " << before << " before, " << peak_capped << " capped, " << peak_free << " free ("
                                 << std::thread::hardware_concurrency() << " hardware threads)");
  BOOST_TEST(same_bits(capped, free));
}

BOOST_AUTO_TEST_CASE(grouped_moments_and_bootstrap_do_not_depend_on_the_openblas_thread_count) {
  // GroupedMoments (Full) forms each group's scatter with cblas_dsyrk and the bootstrap its replicates with
  // cblas_dgemm. OpenBLAS splits those over threads by blocks of the output, so every entry should be the same
  // sum in the same order whatever the thread count; this checks it bitwise. openblas_set_num_threads is looked
  // up at run time, so the test builds against any BLAS and is skipped (with a message) on another one.
  const dualgibbs::testing::OpenBlasThreads blas;
  if (!blas.available()) {
    BOOST_TEST_MESSAGE("skipped: the BLAS linked here is not OpenBLAS (no openblas_set_num_threads)");
    return;
  }
  // Sizes well above OpenBLAS's threading thresholds: dsyrk of 300 x 300 from groups of 750 draws, dgemm of
  // 90000 x 64 x 4 per bootstrap batch.
  boost::random::mt19937_64 rng(11);
  boost::random::normal_distribution<double> normal;
  Eigen::MatrixXd draws(300, 3000);
  for (Eigen::Index j = 0; j < draws.cols(); ++j)
    for (Eigen::Index i = 0; i < draws.rows(); ++i) draws(i, j) = normal(rng) + 0.01 * static_cast<double>(i);
  struct Result {
    std::vector<Eigen::MatrixXd> scatters;
    Eigen::MatrixXd covariance;
    std::vector<double> bootstrap;
  };
  auto compute = [&](int threads) {
    blas.set(threads);
    Result r;
    const GroupedMoments gm(draws, 4, MomentKind::Full);
    for (std::size_t g = 0; g < gm.num_groups(); ++g) r.scatters.push_back(gm.group(g).scatter);
    r.covariance = gm.moments().covariance;
    r.bootstrap = gm.bootstrap(128, 5, [](const SampleMoments& m) { return m.covariance.sum(); });
    return r;
  };
  const Result one = compute(1);
  for (int threads : {2, 3}) {
    const Result other = compute(threads);
    BOOST_TEST(blas.get() == threads);
    for (std::size_t g = 0; g < one.scatters.size(); ++g)
      BOOST_TEST(same_bits(one.scatters[g], other.scatters[g]), "dsyrk, group " << g << ", " << threads << " threads");
    BOOST_TEST(same_bits(one.covariance, other.covariance), threads << " threads");
    BOOST_TEST(one.bootstrap.size() == other.bootstrap.size());
    BOOST_TEST(std::memcmp(one.bootstrap.data(), other.bootstrap.data(), sizeof(double) * one.bootstrap.size()) == 0,
               "dgemm (bootstrap), " << threads << " threads");
  }
  // The data are not trivial: the covariance is not diagonal to the last bit, so a reordered sum would show.
  BOOST_TEST(one.covariance(0, 1) != 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
