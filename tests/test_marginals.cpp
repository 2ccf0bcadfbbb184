// Tests of marginals.hpp: every method against the dense truth, the stopping rule's honesty, reproducibility over
// thread counts, the default-method rule and bad input.
#define BOOST_TEST_MODULE marginals
#include <boost/test/unit_test.hpp>

#include "sampler_oracles.hpp"
#include "test_support.hpp"

#include <dualgibbs/estimation/probing.hpp>
#include <dualgibbs/experiments/marginals.hpp>
#include <dualgibbs/model/generators.hpp>

#include <boost/math/distributions/students_t.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

using namespace dualgibbs;
using Eigen::VectorXd;

namespace {

VectorXd exact_variances(const Model& m) { return Eigen::MatrixXd(m.primal_precision()).inverse().diagonal(); }

// Two-sided Student-t threshold for `tests` z-scores whose standard errors come from `chains` independent chains,
// Bonferroni over the tests: all pass with probability >= 1 - alpha when the estimates are unbiased and normal.
double t_threshold(double alpha, double tests, std::size_t chains) {
  const boost::math::students_t t(static_cast<double>(chains - 1));
  return boost::math::quantile(boost::math::complement(t, alpha / (2.0 * tests)));
}

// The achieved relative RMSE of `runs` independent runs of `o` with seeds first_seed, first_seed + 1, ...: the RMS
// over the runs of the RMS over nodes of (estimate - V) / V against the truth v. Every run must reach its target;
// `each` (may be empty) checks each run's result further.
double achieved_rel_rmse(const Model& m, MarginalOptions o, const VectorXd& v, int runs, std::uint64_t first_seed,
                         const std::function<void(const MarginalResult&)>& each = {}) {
  double sum_sq = 0;
  for (int k = 0; k < runs; ++k) {
    o.seed = first_seed + static_cast<std::uint64_t>(k);
    const MarginalResult r = estimate_marginal_variances(m, o);
    BOOST_TEST_REQUIRE(r.reached_target);
    if (each) each(r);
    sum_sq += ((r.estimate - v).array() / v.array()).square().mean();
  }
  return std::sqrt(sum_sq / runs);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_method_agrees_with_the_dense_truth) {
  // The heterogeneous 6-node oracle model: each sampling method to a 3% target, every node's estimate within a
  // Student-t Bonferroni bound of the truth (false-failure probability <= 1e-6 for the whole case, seven methods
  // x six nodes); the exact method to 1e-10.
  const Model m = oracle::small_model();
  const VectorXd v = exact_variances(m);
  // Standard errors from kAutoChains = 16 chains (15 degrees of freedom; the 100 draws per batch of cholesky and
  // rbmc have more, for which this threshold is conservative).
  const double z_max = t_threshold(1e-6, 7 * 6, kAutoChains);
  for (MarginalMethod method :
       {MarginalMethod::Primal, MarginalMethod::Dual, MarginalMethod::DualCv, MarginalMethod::PrimalCv,
        MarginalMethod::Cholesky, MarginalMethod::Rbmc, MarginalMethod::RbmcGibbs}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.03;
    o.seed = 7;
    const MarginalResult r = estimate_marginal_variances(m, o);
    const bool exact_draws = method == MarginalMethod::Cholesky || method == MarginalMethod::Rbmc;
    BOOST_TEST(r.chains == (exact_draws ? kAutoCholeskyBatch : kAutoChains));
    BOOST_TEST(r.reached_target, to_string(method));
    BOOST_TEST(r.rel_se_rms <= 0.03);
    BOOST_TEST(r.samples >= 2 * o.chains);
    for (Index i = 0; i < m.num_nodes(); ++i) {
      const double z = (r.estimate[i] - v[i]) / r.std_error[i];
      BOOST_TEST(std::abs(z) < z_max, to_string(method)
                                          << ", node " << i << ": " << r.estimate[i] << " vs " << v[i] << ", z " << z);
    }
    const bool bracket = method == MarginalMethod::DualCv || method == MarginalMethod::PrimalCv;
    const bool rbmc = method == MarginalMethod::Rbmc || method == MarginalMethod::RbmcGibbs;
    BOOST_TEST((r.lower.size() == m.num_nodes()) == (bracket || rbmc));
    if (bracket) {
      BOOST_TEST((v - r.lower).minCoeff() >= -1e-12);
      BOOST_TEST((r.upper - v).minCoeff() >= -1e-12);
    }
    if (rbmc) {  // the lower bound 1/Q_vv, no upper bound
      const VectorXd inv_diag = Eigen::MatrixXd(m.primal_precision()).diagonal().cwiseInverse();
      BOOST_TEST((r.lower - inv_diag).cwiseAbs().maxCoeff() == 0.0);
      BOOST_TEST((v - r.lower).minCoeff() > 0.0);
      BOOST_TEST(r.upper.array().isNaN().all());
    }
  }
  MarginalOptions o;
  o.method = MarginalMethod::Exact;
  const MarginalResult r = estimate_marginal_variances(m, o);
  BOOST_TEST((r.estimate - v).cwiseAbs().maxCoeff() <= 1e-10 * v.maxCoeff());
  BOOST_TEST(r.std_error.cwiseAbs().maxCoeff() == 0.0);
}

BOOST_AUTO_TEST_CASE(dual_cv_target_is_honest) {
  // torus:10, sigma 0.1 (s/sigma = 10, where the primal is slow): 30 independent runs of dual-cv to a 2% target.
  // The measured relative RMSE (RMS over nodes of (estimate - V) / V, against the dense truth), RMS over the runs,
  // must be at most 1.5 x the target: the method's own error estimate is the thing under test.
  // Both with 20 chains and with the automatic number (kAutoChains, in lock-step blocks of 8).
  const Model m(make_torus(10, 10), 1.0, 0.1);
  const VectorXd v = exact_variances(m);
  for (std::size_t chains : {std::size_t{20}, std::size_t{0}}) {
    MarginalOptions o;
    o.method = MarginalMethod::DualCv;
    o.rel_rmse = 0.02;
    o.chains = chains;
    const double achieved = achieved_rel_rmse(m, o, v, 30, 100);
    BOOST_TEST_MESSAGE("dual-cv, target 0.02, chains " << chains << ": achieved relative RMSE " << achieved);
    BOOST_TEST(achieved <= 1.5 * 0.02, "chains " << chains << ": " << achieved);
  }
}

// Rao-Blackwellized Monte Carlo's reported error is honest, from exact draws and from Gibbs draws: torus:10 at
// sigma 0.25, 30 independent runs of each to a 2% target; the achieved relative RMSE against the dense truth, RMS
// over the runs, is at most 1.5 x the target (as dual_cv_target_is_honest). And it is the best degree-1 Dirichlet
// variate: on a torus with s_v and sigma_e spread over a factor 4 (Q_vv varies, so no one Chebyshev scalar fits
// every node) its lower bound 1/Q_vv is at least the degree-1 primal control variate's l_v on every node
// (deterministic), and its sampled gap ratio is smaller.
BOOST_AUTO_TEST_CASE(rbmc_target_is_honest_and_beats_the_degree_one_variate) {
  const Model m(make_torus(10, 10), 1.0, 0.25);
  const VectorXd v = exact_variances(m);
  for (MarginalMethod method : {MarginalMethod::Rbmc, MarginalMethod::RbmcGibbs}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.02;
    const double achieved = achieved_rel_rmse(m, o, v, 30, 300);
    BOOST_TEST_MESSAGE(to_string(method) << ", target 0.02: achieved relative RMSE " << achieved);
    BOOST_TEST(achieved <= 1.5 * 0.02, to_string(method) << ": " << achieved);
  }
  const Graph g = make_torus(10, 10);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0.5 + 1.5 * std::abs(std::sin(1.7 * static_cast<double>(i)));
  for (std::size_t e = 0; e < sigma.size(); ++e)
    sigma[e] = 0.1 + 0.3 * std::abs(std::cos(0.9 * static_cast<double>(e)));
  const Model spread(g, s, sigma);
  MarginalOptions o;
  o.rel_rmse = 0.02;
  o.seed = 5;
  o.method = MarginalMethod::PrimalCv;
  o.degree = 1;
  const MarginalResult cv = estimate_marginal_variances(spread, o);
  o.method = MarginalMethod::RbmcGibbs;
  const MarginalResult rb = estimate_marginal_variances(spread, o);
  BOOST_TEST((rb.lower - cv.lower).minCoeff() >= 0.0);
  BOOST_TEST_MESSAGE("gap ratio: rbmc " << rb.gap_ratio_rms << ", primal-cv degree 1 " << cv.gap_ratio_rms);
  BOOST_TEST(rb.gap_ratio_rms < cv.gap_ratio_rms, rb.gap_ratio_rms << " vs " << cv.gap_ratio_rms);
}

// Probing's reported error is honest: a random 4-regular graph of 1000 nodes at sigma 0.25, 20 independent runs to a
// 3% target (each with its own sign sets and its own search over k); the achieved relative RMSE against the dense
// truth, RMS over the runs, is at most 1.5 x the target. On a graph whose diameter the search reaches, one sign set
// is exact and the standard error zero.
BOOST_AUTO_TEST_CASE(probing_target_is_honest) {
  const Model m(make_random_regular(1000, 4, 17), 1.0, 0.25);
  const VectorXd v = exact_variances(m);
  MarginalOptions probing;
  probing.method = MarginalMethod::Probing;
  probing.rel_rmse = 0.03;
  const double achieved = achieved_rel_rmse(m, probing, v, 20, 500, [](const MarginalResult& r) {
    BOOST_TEST(r.degree >= 1);
    BOOST_TEST(r.chains >= 2);  // sign sets
  });
  BOOST_TEST_MESSAGE("probing, target 0.03: achieved relative RMSE " << achieved);
  BOOST_TEST(achieved <= 1.5 * 0.03, achieved);
  const Model small(make_torus(5, 5), 1.0, 0.5);  // diameter 4
  MarginalOptions o;
  o.method = MarginalMethod::Probing;
  o.rel_rmse = 1e-4;
  const MarginalResult r = estimate_marginal_variances(small, o);
  BOOST_TEST(r.reached_target);
  BOOST_TEST(r.std_error.cwiseAbs().maxCoeff() == 0.0);
  BOOST_TEST(((r.estimate - exact_variances(small)).array() / exact_variances(small).array()).abs().maxCoeff() < 1e-5);
}

// Probing keeps a time budget within a sign set: on a 16-regular graph of 20000 nodes the distance-1 colouring has
// about 10 colours and the distance-2 one about 350, so a set at distance 2 costs about 17 sets at distance 1. With a
// budget of 6 distance-1 sets (timed here, so the test scales with the build and the machine's load) the search
// finishes distance 1, starts distance 2 and is cut within a solve of it, keeping the complete sets. A budget that
// ends before the first two sets is an error naming it.
BOOST_AUTO_TEST_CASE(probing_keeps_its_time_budget) {
  const Model m(make_random_regular(20000, 16, 3), 1.0, 0.25);
  const SparseMatrix q = m.primal_precision();
  const DistanceColoring one = distance_coloring(q, 1);
  const auto start = std::chrono::steady_clock::now();
  probe_diagonal(q, one, 1, 1e-5, 1);  // probing_marginals' tolerance for a 1% target
  const double set_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MarginalOptions o;
  o.method = MarginalMethod::Probing;
  o.rel_rmse = 0;
  o.seconds = 6 * set_seconds;
  o.threads = 1;
  const MarginalResult r = estimate_marginal_variances(m, o);
  BOOST_TEST_MESSAGE("probing under a budget of " << o.seconds << " s: k " << r.degree << ", sets " << r.chains
                                                  << ", solves " << r.samples << ", " << r.seconds << " s");
  BOOST_TEST(r.seconds >= o.seconds);                              // the budget, not the search, ended it
  BOOST_TEST(r.seconds < o.seconds + 4 * set_seconds, r.seconds);  // not after a whole set at distance 2
  BOOST_TEST(r.chains >= 2u);                                      // the complete sets of the best distance
  BOOST_TEST(r.estimate.allFinite());
  BOOST_TEST(r.std_error.allFinite());
  o.seconds = 1e-9;
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, o), std::invalid_argument,
                        testing::message_has({"time budget ran out", "probing"}));
}

BOOST_AUTO_TEST_CASE(same_result_for_any_thread_count) {
  const Model m(make_torus(6, 5), 1.0, 0.3);
  for (MarginalMethod method : {MarginalMethod::DualCv, MarginalMethod::Primal}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.05;
    o.chains = 12;
    o.threads = 1;
    const MarginalResult a = estimate_marginal_variances(m, o);
    o.threads = 2;
    const MarginalResult b = estimate_marginal_variances(m, o);
    BOOST_TEST((a.estimate.array() == b.estimate.array()).all(), to_string(method));
    BOOST_TEST(a.sweeps == b.sweeps);
  }
}

// The automatic degree is chosen from counted costs, not timings: the same seed gives the same degree and bits
// (run twice), its pilot's gap ratio is reported, and a given degree skips the pilot.
BOOST_AUTO_TEST_CASE(automatic_degree_is_reproducible_and_reported) {
  const Model m(make_random_regular(64, 4, 3), 1.0, 0.25);
  for (MarginalMethod method : {MarginalMethod::DualCv, MarginalMethod::PrimalCv}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.02;
    o.seed = 11;
    const MarginalResult a = estimate_marginal_variances(m, o);
    const MarginalResult b = estimate_marginal_variances(m, o);
    BOOST_TEST(a.degree == b.degree);
    BOOST_TEST(a.degree >= 1);
    BOOST_TEST((a.estimate.array() == b.estimate.array()).all(), to_string(method));
    BOOST_TEST(a.pilot_gap_ratio > 0.0);
    BOOST_TEST(a.gap_ratio_rms > 0.0);
    o.degree = 3;
    const MarginalResult c = estimate_marginal_variances(m, o);
    BOOST_TEST(c.degree == 3);
    BOOST_TEST(c.pilot_gap_ratio == 0.0);
  }
}

// The automatic degree's pilot starts after a shorter burn-in (the decay to 1e-5 instead of 1e-4: a control variate's
// bias from the transient is its gap ratio times the transient), which stands only when the pilot measures a gap
// ratio of at most 0.1; otherwise its evaluations are dropped and the run burns in as with a given degree. torus:10,
// sigma 0.1 has both: dual-cv's ratio is about 0.09, primal-cv's about 0.8.
BOOST_AUTO_TEST_CASE(pilot_burn_in_stands_only_for_a_small_gap_ratio) {
  const Model m(make_torus(10, 10), 1.0, 0.1);
  for (MarginalMethod method : {MarginalMethod::DualCv, MarginalMethod::PrimalCv}) {
    BOOST_TEST_CONTEXT(to_string(method)) {
      MarginalOptions o;
      o.method = method;
      o.rel_rmse = 0.05;
      o.seed = 5;
      const MarginalResult a = estimate_marginal_variances(m, o);
      o.degree = a.degree;
      const MarginalResult fixed = estimate_marginal_variances(m, o);
      if (method == MarginalMethod::DualCv) {
        BOOST_TEST_REQUIRE(a.pilot_gap_ratio <= 0.1);
        BOOST_TEST(a.burn_in < fixed.burn_in);
        BOOST_TEST(a.burn_in >= 4u);
      } else {
        BOOST_TEST_REQUIRE(a.pilot_gap_ratio > 0.1);
        BOOST_TEST(a.burn_in == fixed.burn_in);
      }
    }
  }
}

// time_to_accuracy: the table's shape, the truth row, and the achieved error of a run that reached its target.
// The achieved relative RMSE (RMS over 3 replicates) of an honest 5% stopping rule exceeds 3 x 5% with a
// probability far below 1e-6 (it would need the standard-error estimate to be off by 3x on every replicate).
// The primal methods with the cheby-ssor and ssor schemes: the same z-score check against the dense truth
// (false-failure probability <= 1e-6 for the whole case: three runs x six nodes, Bonferroni), a burn-in from the
// scheme's rate, and the scheme refused for the other methods.
BOOST_AUTO_TEST_CASE(primal_methods_with_accelerated_schemes) {
  const Model m = oracle::small_model();
  const VectorXd v = exact_variances(m);
  const double z_max = t_threshold(1e-6, 3 * 6, 100);
  SchemeOptions cheby;
  cheby.kind = SchemeKind::ChebyshevSsor;
  cheby.spectrum = optimal_ssor_spectrum(m.primal_precision());
  cheby.omega = cheby.spectrum.omega;
  SchemeOptions ssor;
  ssor.kind = SchemeKind::Ssor;
  ssor.omega = 1.3;
  for (const auto& [method, scheme] :
       {std::pair{MarginalMethod::Primal, cheby}, std::pair{MarginalMethod::PrimalCv, cheby},
        std::pair{MarginalMethod::Primal, ssor}}) {
    BOOST_TEST_CONTEXT(to_string(method) << " with " << to_string(scheme.kind)) {
      MarginalOptions o;
      o.method = method;
      o.rel_rmse = 0.03;
      o.seed = 9;
      o.scheme = scheme;
      const MarginalResult r = estimate_marginal_variances(m, o);
      BOOST_TEST(r.reached_target);
      for (Index i = 0; i < m.num_nodes(); ++i) {
        const double z = (r.estimate[i] - v[i]) / r.std_error[i];
        BOOST_TEST(std::abs(z) < z_max, "node " << i << ": " << r.estimate[i] << " vs " << v[i] << ", z " << z);
      }
      if (scheme.kind == SchemeKind::ChebyshevSsor) {
        // 4 r^(2t) <= 1e-4 at the predicted Chebyshev rate r, at least 4 iterations.
        const double rate = chebyshev_ssor_rate(scheme.spectrum);
        const double t = std::max(4.0, std::ceil(std::log(4e4) / (2 * -std::log(rate))));
        BOOST_TEST(static_cast<double>(r.burn_in) == t);
      }
    }
  }
  for (MarginalMethod method : {MarginalMethod::Dual, MarginalMethod::DualCv, MarginalMethod::Cholesky,
                                MarginalMethod::Exact, MarginalMethod::Auto}) {
    MarginalOptions o;
    o.method = method;
    o.scheme = cheby;
    BOOST_CHECK_EXCEPTION(
        estimate_marginal_variances(m, o), std::invalid_argument,
        testing::message_has({"cheby-ssor", "applies to the primal sampling methods", to_string(method)}));
  }
  MarginalOptions o;
  o.method = MarginalMethod::Primal;
  o.scheme.kind = SchemeKind::ChebyshevSsor;  // no spectrum
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, o), std::invalid_argument, testing::message_has({"cheby-ssor"}));
}

BOOST_AUTO_TEST_CASE(time_to_accuracy_table) {
  AccuracySettings s;
  s.graphs = {{"torus:6", 1.0, 0.3}};
  s.methods = {MarginalMethod::Exact, MarginalMethod::DualCv, MarginalMethod::Cholesky};
  s.cheby_ssor = {MarginalMethod::Primal};
  s.targets = {0.05};
  s.replicates = 3;
  s.budget_seconds = 60;
  std::vector<std::string> notes;
  const Table t = time_to_accuracy(s, notes);
  BOOST_TEST_REQUIRE(t.num_rows() == 1u);
  BOOST_TEST(t.labels()[0] == "torus:6");
  const std::vector<double>& row = t.rows()[0];
  BOOST_TEST(row[t.column_index("nodes")] == 36.0);
  BOOST_TEST(row[t.column_index("exact_reached")] == 1.0);
  BOOST_TEST(row[t.column_index("exact_achieved_rel_rmse")] == 0.0);
  for (const char* m : {"dual_cv", "cholesky", "primal_cheby_ssor"}) {
    BOOST_TEST_CONTEXT(m) {
      BOOST_TEST(row[t.column_index(std::string(m) + "_reached")] == 1.0);
      const double achieved = row[t.column_index(std::string(m) + "_achieved_rel_rmse")];
      BOOST_TEST(achieved > 0.0);
      BOOST_TEST(achieved <= 3 * 0.05);
      BOOST_TEST(row[t.column_index(std::string(m) + "_estimated_rel_se")] <= 0.05);
    }
  }
  BOOST_TEST(notes.empty());
  AccuracySettings bad = s;
  bad.replicates = 1;
  BOOST_CHECK_EXCEPTION(time_to_accuracy(bad, notes), std::invalid_argument, testing::message_has({"replicates = 1"}));
  bad = s;
  bad.targets = {1.5};
  BOOST_CHECK_EXCEPTION(time_to_accuracy(bad, notes), std::invalid_argument, testing::message_has({"target"}));
  bad = s;
  bad.cheby_ssor = {MarginalMethod::DualCv};
  BOOST_CHECK_EXCEPTION(time_to_accuracy(bad, notes), std::invalid_argument,
                        testing::message_has({"cheby-ssor", "dual-cv"}));
  bad = s;
  bad.graphs.clear();
  BOOST_CHECK_EXCEPTION(time_to_accuracy(bad, notes), std::invalid_argument, testing::message_has({"no graphs"}));
}

// The automatic method: each of its four ways to a choice (exact before any sampling, the sampling method, exact
// after the sampling method's pilot, probing on a complete graph), and in each the chosen method's own result, bit
// for bit, as if it had been asked for. The choices come from counts, so they are the same for any thread count.
BOOST_AUTO_TEST_CASE(auto_runs_the_method_it_predicts_fastest) {
  MarginalOptions o;
  o.method = MarginalMethod::Auto;
  o.rel_rmse = 0.01;
  o.seed = 5;
  const auto same_bits = [](const MarginalResult& a, const MarginalResult& b) {
    return a.estimate == b.estimate && a.std_error == b.std_error && a.method == b.method;
  };
  const auto asked = [&](const Model& m, MarginalMethod method) {
    MarginalOptions e = o;
    e.method = method;
    return estimate_marginal_variances(m, e);
  };

  // A lattice: its factor is cheap and the dual's burn-in long, even from the upper bound on lambda_2.
  const Model lattice(make_torus(30, 30), 1.0, 0.25);
  const MarginalResult exact = estimate_marginal_variances(lattice, o);
  BOOST_TEST(to_string(exact.method) == std::string("exact"));
  BOOST_TEST(exact.choice.automatic);
  BOOST_TEST(exact.sweeps == 0u);  // no pilot ran
  BOOST_TEST(exact.choice.exact_seconds < exact.choice.sampling_seconds);
  BOOST_TEST(exact.choice.reason.rfind("exact: predicted", 0) == 0, exact.choice.reason);
  BOOST_TEST(same_bits(exact, asked(lattice, MarginalMethod::Exact)));

  // An expander: the factor fills in; dual-cv, whatever the thread count.
  const Model expander(make_random_regular(3000, 4, 1), 1.0, 0.25);
  for (const unsigned threads : {1u, 2u}) {
    o.threads = threads;
    const MarginalResult dual = estimate_marginal_variances(expander, o);
    BOOST_TEST(to_string(dual.method) == std::string("dual-cv"));
    BOOST_TEST(dual.choice.sampling_seconds < dual.choice.exact_seconds);
    BOOST_TEST(dual.choice.reason.rfind("dual-cv: predicted", 0) == 0, dual.choice.reason);
    BOOST_TEST(same_bits(dual, asked(expander, MarginalMethod::DualCv)));
  }
  o.threads = 0;

  // The same expander to 0.1%: the burn-in and two evaluations still cost less than the factor, but the pilot
  // predicts a hundred times the evaluations, and the run turns to exact.
  MarginalOptions tight = o;
  tight.rel_rmse = 0.001;
  const MarginalResult turned = estimate_marginal_variances(expander, tight);
  BOOST_TEST(to_string(turned.method) == std::string("exact"));
  BOOST_TEST(turned.choice.reason.find("turned away after its pilot") != std::string::npos, turned.choice.reason);
  BOOST_TEST(turned.choice.exact_seconds < turned.choice.sampling_seconds);
  BOOST_TEST(turned.sweeps == 0u);
  BOOST_TEST(same_bits(turned, asked(expander, MarginalMethod::Exact)));

  // A complete graph: one probing set of |V| colours is exact, and cheaper than the dense factor.
  const Model complete(make_complete(50), 1.0, 0.1);
  const MarginalResult probed = estimate_marginal_variances(complete, o);
  BOOST_TEST(to_string(probed.method) == std::string("probing"));
  BOOST_TEST(probed.choice.probing_seconds < probed.choice.exact_seconds);
  BOOST_TEST(probed.std_error.maxCoeff() == 0.0);
  const VectorXd truth = exact_variances(complete);
  BOOST_TEST(((probed.estimate - truth).array() / truth.array()).abs().maxCoeff() < 1e-6);
  BOOST_TEST(same_bits(probed, asked(complete, MarginalMethod::Probing)));

  // No edges: Q is diagonal.
  const MarginalResult isolated = estimate_marginal_variances(Model(Graph(5, {}), 2.0, 1.0), o);
  BOOST_TEST(to_string(isolated.method) == std::string("exact"));
  BOOST_TEST((isolated.estimate.array() - 4.0).abs().maxCoeff() < 1e-12);

  for (const char* name :
       {"primal", "dual", "dual-cv", "primal-cv", "cholesky", "exact", "rbmc", "rbmc-gibbs", "probing", "auto"})
    BOOST_TEST(to_string(parse_marginal_method(name)) == std::string(name));
}

BOOST_AUTO_TEST_CASE(rejects_bad_input) {
  const Model m(make_cycle(8), 1.0, 0.5);
  auto with = [](auto change) {
    MarginalOptions o;
    change(o);
    return o;
  };
  using testing::message_has;
  BOOST_CHECK_EXCEPTION(parse_marginal_method("gibbs"), std::invalid_argument, message_has({"gibbs", "dual-cv"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.rel_rmse = -0.1; })),
                        std::invalid_argument, message_has({"relative RMSE"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(
                            m, with([](MarginalOptions& o) { o.rel_rmse = std::numeric_limits<double>::quiet_NaN(); })),
                        std::invalid_argument, message_has({"relative RMSE"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.rel_rmse = 0; })),
                        std::invalid_argument, message_has({"target", "budget"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.seconds = -1; })),
                        std::invalid_argument, message_has({"budget"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.chains = 1; })),
                        std::invalid_argument, message_has({"chains = 1"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.every = 0; })),
                        std::invalid_argument, message_has({"every = 0"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.degree = -2; })),
                        std::invalid_argument, message_has({"degree = -2"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.lockstep = 3; })),
                        std::invalid_argument, message_has({"lockstep = 3"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(m, with([](MarginalOptions& o) { o.lockstep = 0; })),
                        std::invalid_argument, message_has({"lockstep = 0"}));
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(Model(Graph(3, {}), 1.0, 1.0),
                                                    with([](MarginalOptions& o) { o.method = MarginalMethod::Dual; })),
                        std::invalid_argument, message_has({"no edges"}));
  // A budget far too short for two evaluations (the burn-in alone is longer).
  BOOST_CHECK_EXCEPTION(estimate_marginal_variances(Model(make_torus(40, 40), 1.0, 0.05), with([](MarginalOptions& o) {
                                                      o.method = MarginalMethod::Primal;
                                                      o.rel_rmse = 0;
                                                      o.seconds = 1e-6;
                                                    })),
                        std::invalid_argument, message_has({"budget", "2"}));
}
