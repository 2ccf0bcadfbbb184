// validate_draws(): exact draws pass, defects are flagged and named, successive states use batch means, bad input
// is refused. Every statistical check states its false-failure probability (docs/design.md).
#define BOOST_TEST_MODULE validate
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"
#include "validate_support.hpp"

#include <dualgibbs/core/random.hpp>
#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <cmath>
#include <limits>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

using validate_support::one_checkpoint;
using validate_support::primal_truth;
using validate_support::touches;

// Checks at alpha = 1e-6 fail on exact draws with probability at most 1e-6 (the report's Bonferroni bound).
ValidateOptions strict() {
  ValidateOptions o;
  o.alpha = 1e-6;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(validate_exact_draws)

// False-failure probability <= 1e-6 (alpha); a fixed seed.
BOOST_AUTO_TEST_CASE(exact_primal_draws_pass) {
  const Model m(make_torus(10, 10), 1.0, 0.1);
  const ExactTruth t = primal_truth(m);
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(20000, 11);
  const ValidationReport r = validate_draws(m, one_checkpoint(DrawKind::Primal, x), t, strict());
  BOOST_TEST(r.consistent);
  BOOST_TEST(r.tests == 100u + 100u + 200u + 1u);  // mean and variance per node, one per edge, the global test
  BOOST_TEST(r.p_threshold == 1e-6 / 401, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.checkpoints.at(0).edge_z.size() == 200);
  BOOST_TEST(r.checkpoints[0].mean.max_abs < r.z_threshold);
  // Eu of exact draws is noise: within 6 standard errors of 0 (normal tail 2e-9, the jackknife se floored).
  BOOST_TEST(std::abs(r.checkpoints[0].error.Eu) < 6 * r.checkpoints[0].error.Eu_se);
  BOOST_TEST(!r.method.empty());
}

// False-failure probability <= 1e-6 each.
BOOST_AUTO_TEST_CASE(exact_dual_draws_pass_for_y_and_x_tilde) {
  const Model m(make_torus(6, 7), 1.3, 0.4);
  const Eigen::MatrixXd y = CholeskyFactor(m.dual_precision()).sample(20000, 5);
  ExactTruth ty;
  ty.variance = marginal_variances(m, Domain::Dual);
  const ValidationReport ry = validate_draws(m, one_checkpoint(DrawKind::DualEdges, y), ty, strict());
  BOOST_TEST(ry.consistent);
  BOOST_TEST(ry.tests == 2u * 84u + 1u);
  const Eigen::MatrixXd xt = Eigen::MatrixXd(m.incidence()) * y;  // x~ = B y~
  const ExactTruth tx = dual_node_truth_from_primal(m, primal_truth(m));
  BOOST_TEST((tx.variance - marginal_variances_dual_nodes(m)).cwiseAbs().maxCoeff() < 1e-12);
  const ValidationReport rx = validate_draws(m, one_checkpoint(DrawKind::DualNodes, xt), tx, strict());
  BOOST_TEST(rx.consistent);
  BOOST_TEST(rx.tests == 42u + 42u + 84u + 1u);
}

// One long chain: successive states are tested by batch means, with an effective sample size below n.
// False-failure probability <= 1e-6 (alpha), given batches much longer than the autocorrelation time (checked:
// no short-batch note).
BOOST_AUTO_TEST_CASE(one_long_chain_is_tested_by_batch_means) {
  const Model m(make_torus(4, 4), 1.0, 1.0);
  EnsembleOptions o;
  o.chains = 1;
  o.sweeps = 40100;
  o.seed = 3;
  Eigen::MatrixXd x(16, 40000);
  run_ensemble(m, Domain::Primal, o, [&](const Checkpoint& cp) {
    if (cp.sweep > 100) x.col(static_cast<Eigen::Index>(cp.sweep - 101)) = cp.states.col(0);
  });
  Draws d = one_checkpoint(DrawKind::Primal, x);
  d.checkpoints[0].chain_offsets = {0, 40000};
  const ValidationReport r = validate_draws(m, d, primal_truth(m), strict());
  const CheckpointValidation& c = r.checkpoints.at(0);
  BOOST_TEST(r.consistent);
  BOOST_TEST(c.sequential);
  BOOST_TEST(c.batches == 200u);  // floor(sqrt(40000))
  BOOST_TEST(c.chains == 1u);
  BOOST_TEST(c.ess_min < 40000.0);
  BOOST_TEST(c.ess_min > 1000.0);
  BOOST_TEST(r.notes.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(validate_defects)

// Cov + 0.12 Var(X_v) e_v e_v^T on one node of 1000 (independent noise added to x_v), 20000 draws: the variance
// z-score of x_v is about 0.12 / sqrt(2 / 20000) = 12 against the threshold |z| > 5.2 (4000 tests at alpha 1e-3),
// so the miss probability is below 1e-11. (10^5 draws against a 3% inflation: test_validate_long.)
BOOST_AUTO_TEST_CASE(inflated_node_is_flagged_and_named) {
  const Model m(make_torus(25, 40), 1.0, 0.1);
  const ExactTruth t = primal_truth(m);

  const Index v = 517;
  const Eigen::MatrixXd x = validate_support::inflated_draws(m, t, v, 0.12, 20000, 17, 99);
  const ValidationReport r = validate_draws(m, one_checkpoint(DrawKind::Primal, x), t);
  BOOST_TEST(!r.consistent);
  BOOST_TEST_REQUIRE(!r.worst.empty());
  const ValidationOffender& w = r.worst.front();
  BOOST_TEST(w.p < r.p_threshold);
  BOOST_TEST(touches(m, w, v));
  // Every offender beyond the threshold touches v.
  for (const auto& o : r.worst)
    if (o.p < r.p_threshold) BOOST_TEST(touches(m, o, v));
}

// The dual Gibbs sampler on the 10x10 torus (s = 1, sigma = 0.1, the paper's constant start) stopped at sweep 5
// instead of 10, 10^5 chains: its x~ variances are about 1% too small overall. Measured with this seed: global
// z = -9.0 against the threshold |z| > 4.7 (the per-node variance z-scores alone reach 4.7). A miss would need the
// global test's scale (from 32 groups) overestimated 1.9-fold: probability below 1e-9. The same sampler at sweep
// 300 passes (test_validate_long).
BOOST_AUTO_TEST_CASE(gibbs_stopped_five_sweeps_early_is_flagged) {
  const Model m(make_torus(10, 10), 1.0, 0.1);
  const ExactTruth t = dual_node_truth_from_primal(m, primal_truth(m));
  EnsembleOptions o;
  o.chains = 100000;
  o.sweeps = 5;
  o.checkpoint_every = 5;
  o.seed = 7;
  ValidationReport r;
  run_ensemble(m, Domain::Dual, o, [&](const Checkpoint& cp) {
    if (cp.sweep == 5) r = validate_draws(m, one_checkpoint(DrawKind::DualNodes, cp.states, 5), t);
  });
  BOOST_TEST_REQUIRE(r.checkpoints.size() == 1u);
  BOOST_TEST(!r.consistent);
  BOOST_CHECK(r.worst.front().test == ValidationTest::Global);
  BOOST_TEST_MESSAGE("sweep 5: global z " << r.checkpoints[0].global_z << ", threshold " << r.z_threshold);
  BOOST_TEST(r.checkpoints[0].global_z < -r.z_threshold);
  BOOST_TEST(r.checkpoints[0].global_statistic < 0);  // too little variance: not yet converged
  BOOST_TEST(r.checkpoints[0].error.Eu > 5 * r.checkpoints[0].error.Eu_se);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(validate_bad_input)

BOOST_AUTO_TEST_CASE(rejects_bad_draws_truth_and_options) {
  const Model m(make_torus(3, 3), 1.0, 0.5);
  const ExactTruth t = primal_truth(m);
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(10, 1);
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x.topRows(8)), t), std::invalid_argument,
                        message_has({"8 coordinates, expected 9"}));
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::DualEdges, x), ExactTruth{}), std::invalid_argument,
                        message_has({"9 coordinates, expected 18", "one per edge"}));
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x.leftCols(5)), t), std::invalid_argument,
                        message_has({"5 draws, need at least 6"}));
  Eigen::MatrixXd bad = x;
  bad(4, 7) = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, bad), t), std::invalid_argument,
                        message_has({"draw 7, coordinate 4", "not finite"}));
  Draws d = one_checkpoint(DrawKind::Primal, x);
  d.checkpoints[0].chain_offsets = {0, 5, 5, 10};
  BOOST_CHECK_EXCEPTION(validate_draws(m, d, t), std::invalid_argument, message_has({"increase strictly"}));
  d.checkpoints[0].chain_offsets = {0, 9};
  BOOST_CHECK_EXCEPTION(validate_draws(m, d, t), std::invalid_argument, message_has({"end at the number of draws"}));
  BOOST_CHECK_EXCEPTION(validate_draws(m, Draws{}, t), std::invalid_argument, message_has({"no checkpoint"}));
  ExactTruth short_truth = t;
  short_truth.variance.conservativeResize(8);
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x), short_truth), std::invalid_argument,
                        message_has({"length 8, expected 9"}));
  ExactTruth negative = t;
  negative.variance[2] = -1;
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x), negative), std::invalid_argument,
                        message_has({"coordinate 2 is -1"}));
  ExactTruth bad_cov = t;
  bad_cov.edge_covariance[3] = 10;
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x), bad_cov), std::invalid_argument,
                        message_has({"edge 3", "must be positive"}));
  ExactTruth ty;
  ty.variance = Eigen::VectorXd::Ones(18);
  ty.edge_covariance = Eigen::VectorXd::Zero(18);
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::DualEdges, Eigen::MatrixXd::Zero(18, 10)), ty),
                        std::invalid_argument, message_has({"edge covariances apply to draws over nodes"}));
  ValidateOptions o;
  o.alpha = 1.5;
  BOOST_CHECK_EXCEPTION(validate_draws(m, one_checkpoint(DrawKind::Primal, x), t, o), std::invalid_argument,
                        message_has({"alpha must be in (0, 1)"}));
  BOOST_CHECK_EXCEPTION(parse_draw_kind("dual"), std::invalid_argument, message_has({"unknown draw domain 'dual'"}));
  BOOST_CHECK(parse_draw_kind("dual-x") == DrawKind::DualNodes);
}

// x~ of an isolated node is exactly 0: not z-tested, but draws that are not 0 there are flagged.
BOOST_AUTO_TEST_CASE(isolated_node_of_x_tilde_is_checked_exactly) {
  const Model m(Graph(4, {{0, 1}, {1, 2}}), 1.0, 0.5);  // node 3 is isolated
  const ExactTruth t = dual_node_truth_from_primal(m, primal_truth(m));
  BOOST_TEST(t.variance[3] == 0.0);
  Eigen::MatrixXd xt = Eigen::MatrixXd(m.incidence()) * CholeskyFactor(m.dual_precision()).sample(2000, 2);
  ValidationReport r = validate_draws(m, one_checkpoint(DrawKind::DualNodes, xt), t, strict());
  BOOST_TEST(r.consistent);  // false-failure probability <= 1e-6
  BOOST_TEST(r.checkpoints[0].degenerate == 1u);
  BOOST_TEST(r.notes.size() == 1u);
  xt(3, 5) = 1e-3;
  r = validate_draws(m, one_checkpoint(DrawKind::DualNodes, xt), t, strict());
  BOOST_TEST(!r.consistent);
  BOOST_TEST(r.worst.front().index == 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(validate_streaming)

// DrawValidator fed in blocks of any size gives validate_draws()'s report (the whole checkpoint in one block): the
// sums are taken about the first block's mean instead of the checkpoint's mean, a rounding-level difference. Both
// layouts: independent draws (several checkpoints) and successive states of chains (batch means).
BOOST_AUTO_TEST_CASE(blocks_give_the_whole_checkpoint_report) {
  const Model m(make_torus(6, 7), 1.0, 0.3);
  const ExactTruth t = primal_truth(m);
  const CholeskyFactor f(m.primal_precision());
  Draws d;
  d.kind = DrawKind::Primal;
  d.checkpoints.push_back({10.0, f.sample(1000, 5), {}});
  d.checkpoints.push_back({20.0, f.sample(777, 6), {0, 300, 777}});
  const ValidationReport whole = validate_draws(m, d, t);
  for (std::size_t block : {1u, 7u, 64u, 500u}) {
    DrawValidator v(m, DrawKind::Primal, t);
    for (const DrawCheckpoint& cp : d.checkpoints) {
      const auto n = static_cast<std::size_t>(cp.draws.cols());
      v.begin_checkpoint(n, cp.sweep, cp.chain_offsets);
      for (std::size_t k = 0; k < n; k += block)
        v.add(cp.draws.middleCols(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(std::min(block, n - k))));
      v.end_checkpoint();
    }
    const ValidationReport r = v.finish();
    BOOST_TEST_CONTEXT("blocks of " << block) {
      BOOST_TEST(r.tests == whole.tests);
      BOOST_TEST(r.consistent == whole.consistent);
      BOOST_REQUIRE(r.checkpoints.size() == whole.checkpoints.size());
      for (std::size_t c = 0; c < r.checkpoints.size(); ++c) {
        const CheckpointValidation &a = r.checkpoints[c], &b = whole.checkpoints[c];
        BOOST_TEST((a.variance_z - b.variance_z).cwiseAbs().maxCoeff() < 1e-9);
        BOOST_TEST((a.mean_z - b.mean_z).cwiseAbs().maxCoeff() < 1e-9);
        BOOST_TEST((a.edge_z - b.edge_z).cwiseAbs().maxCoeff() < 1e-9);
        BOOST_TEST(std::abs(a.global_z - b.global_z) < 1e-9);
        BOOST_TEST(std::abs(a.error.Eu - b.error.Eu) < 1e-12);
        BOOST_TEST(std::abs(a.error.Eu_se - b.error.Eu_se) < 1e-12);
        BOOST_TEST(a.batches == b.batches);
      }
      BOOST_REQUIRE(r.worst.size() == whole.worst.size());
      for (std::size_t k = 0; k < r.worst.size(); ++k) BOOST_TEST(r.worst[k].index == whole.worst[k].index);
    }
  }
}

BOOST_AUTO_TEST_CASE(misuse_is_refused) {
  const Model m(make_torus(3, 3), 1.0, 0.5);
  const ExactTruth t = primal_truth(m);
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(10, 1);
  {
    DrawValidator v(m, DrawKind::Primal, t);
    BOOST_CHECK_EXCEPTION(v.add(x), std::invalid_argument, message_has({"no checkpoint is open"}));
    BOOST_CHECK_EXCEPTION(v.finish(), std::invalid_argument, message_has({"no checkpoint"}));
    v.begin_checkpoint(10);
    BOOST_CHECK_EXCEPTION(v.begin_checkpoint(10), std::invalid_argument, message_has({"still open"}));
    v.add(x.leftCols(4));
    BOOST_CHECK_EXCEPTION(v.finish(), std::invalid_argument, message_has({"still open"}));
    BOOST_CHECK_EXCEPTION(v.add(x), std::invalid_argument, message_has({"more draws than the 10 announced"}));
    BOOST_CHECK_EXCEPTION(v.end_checkpoint(), std::invalid_argument, message_has({"spent"}));
  }
  {
    DrawValidator v(m, DrawKind::Primal, t);
    v.begin_checkpoint(10);
    v.add(x.leftCols(9));
    BOOST_CHECK_EXCEPTION(v.end_checkpoint(), std::invalid_argument, message_has({"9 draws added, 10 announced"}));
  }
  {
    DrawValidator v(m, DrawKind::Primal, t);
    BOOST_CHECK_EXCEPTION(v.begin_checkpoint(5), std::invalid_argument, message_has({"5 draws, need at least 6"}));
    v.begin_checkpoint(10);
    Eigen::MatrixXd huge = x;
    huge(2, 8) = 1e200;  // finite, but its square overflows
    v.add(huge.leftCols(8));
    BOOST_CHECK_EXCEPTION(v.add(huge.rightCols(2)), std::invalid_argument, message_has({"draws 8 to", "overflow"}));
  }
  {
    DrawValidator v(m, DrawKind::Primal, t);
    v.begin_checkpoint(10);
    Eigen::MatrixXd bad = x;
    bad(4, 7) = std::numeric_limits<double>::infinity();
    v.add(bad.leftCols(3));
    BOOST_CHECK_EXCEPTION(v.add(bad.rightCols(7)), std::invalid_argument,
                          message_has({"checkpoint 0: draw 7, coordinate 4 is inf"}));
  }
  {
    DrawValidator v(m, DrawKind::Primal, t);
    v.begin_checkpoint(10);
    BOOST_CHECK_EXCEPTION(v.add(x.topRows(8)), std::invalid_argument, message_has({"8 coordinates, expected 9"}));
  }
  ValidateOptions o;
  o.batches = 1;
  BOOST_CHECK_EXCEPTION(DrawValidator(m, DrawKind::Primal, t, o), std::invalid_argument,
                        message_has({"batches must be 0"}));
  // The sums-based entry points the streaming validator uses.
  MomentSums g{10.0, Eigen::VectorXd::Zero(9), Eigen::VectorXd::Zero(8)};
  BOOST_CHECK_EXCEPTION(GroupedMoments(MomentKind::Diagonal, Eigen::VectorXd::Zero(9), {g}), std::invalid_argument,
                        message_has({"sums of the wrong shape"}));
  g.scatter = Eigen::VectorXd::Constant(9, std::numeric_limits<double>::quiet_NaN());
  BOOST_CHECK_EXCEPTION(GroupedMoments(MomentKind::Diagonal, Eigen::VectorXd::Zero(9), {g}), std::invalid_argument,
                        message_has({"NaN or infinite"}));
  g.scatter.setOnes();
  CovarianceErrorTracker tracker(Domain::Primal, m.node_variances(), t.variance);
  BOOST_CHECK_EXCEPTION(tracker.observe(0, 0.0, GroupedMoments(MomentKind::Diagonal, Eigen::VectorXd::Zero(9), {g})),
                        std::invalid_argument, message_has({"not cut at group_offsets(10)"}));
}

BOOST_AUTO_TEST_SUITE_END()
