// ChainGroup without MPI: member shares, and the whole protocol (gathers in rank order, error settlement,
// deferred failures, nested collectives) over an in-process group whose members are threads. The same code paths
// as under mpirun (tests/mpi_ensemble.cpp), here in every build, the sanitizer build included.
#define BOOST_TEST_MODULE chain_group
#include <boost/test/unit_test.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "support/thread_group.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using dualgibbs::ChainGroup;
using dualgibbs::testing::on_members;
using dualgibbs::testing::ThreadMember;

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

struct Record {
  std::vector<Eigen::MatrixXd> states, cv_terms;
  std::vector<double> eu, eu_se;
};

// `group`: the members sharing the run and the estimators (null: one process).
Record observe_run(const dualgibbs::Model& model, dualgibbs::Domain domain, dualgibbs::EnsembleOptions o,
                   dualgibbs::ChainGroup* group = nullptr) {
  using namespace dualgibbs;
  const FlowControlVariate cv(model);
  CovarianceErrorTracker tracker(domain, model.node_variances(), covariance_primal(model));
  Record rec;
  o.group = group;
  const Execution shared{0, group};
  run_ensemble(model, domain, o, [&](const Checkpoint& cp) {
    rec.states.emplace_back(cp.states);
    if (domain == Domain::Dual) rec.cv_terms.push_back(cv.dual_terms(cp.states, shared));
    const ErrorEstimate e = tracker.observe(cp.sweep, 0.0, cp.states, shared);
    rec.eu.push_back(e.Eu);
    rec.eu_se.push_back(e.Eu_se);
  });
  return rec;
}

// Local observation (EnsembleOptions::local_cuts): the trackers of one kind fed each member's share only.
struct LocalRecord {
  std::vector<std::size_t> first, shown;
  std::vector<double> eu, eb, eu_se, eb_se, mean_norm, cv_eu;
  std::vector<Eigen::MatrixXd> estimate, cv_terms;
};

// With `local`, the members see their shares (local_cuts = the tracker's groups) and the trackers exchange sums; else
// the observer sees every chain (one process, or the gathered states) and the trackers use observe(states).
LocalRecord observe_shares(const dualgibbs::Model& model, dualgibbs::Domain domain, dualgibbs::EnsembleOptions o,
                           bool full, bool local, dualgibbs::ChainGroup* group = nullptr) {
  using namespace dualgibbs;
  const FlowControlVariate cv(model);
  const Eigen::MatrixXd cov = covariance_primal(model);
  const Eigen::MatrixXd target = full ? cov : Eigen::MatrixXd(cov.diagonal());
  const Eigen::VectorXd s2 = model.node_variances();
  ErrorTrackerOptions topt;
  topt.jackknife_groups = 3;
  CovarianceErrorTracker tracker(domain, s2, target, topt), cv_tracker(Domain::Dual, s2, target, topt);
  if (local) o.local_cuts = tracker.group_offsets(o.chains);
  o.group = group;
  const Execution shared{0, group};
  LocalRecord rec;
  run_ensemble(model, domain, o, [&](const Checkpoint& cp) {
    rec.first.push_back(cp.first_chain);
    rec.shown.push_back(static_cast<std::size_t>(cp.states.cols()));
    const ErrorEstimate e = local ? tracker.observe(cp.sweep, 0.0, cp.states, cp.first_chain, o.chains, shared)
                                  : tracker.observe(cp.sweep, 0.0, cp.states, shared);
    rec.eu.push_back(e.Eu);
    rec.eb.push_back(e.Eb);
    rec.eu_se.push_back(e.Eu_se);
    rec.eb_se.push_back(e.Eb_se);
    rec.mean_norm.push_back(e.mean_norm);
    rec.estimate.push_back(tracker.last_estimate());
    if (domain != Domain::Dual) return;
    const Eigen::MatrixXd w = cv.dual_terms(cp.states);  // this member's chains, here alone
    rec.cv_terms.push_back(w);
    rec.cv_eu.push_back(local ? cv_tracker.observe(cp.sweep, 0.0, w, cp.first_chain, o.chains, shared).Eu
                              : cv_tracker.observe(cp.sweep, 0.0, w, shared).Eu);
  });
  return rec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chain_group)

BOOST_AUTO_TEST_CASE(local_observation_over_members_matches_one_process) {
  // Each member sees only its share of the tracker's groups of chains and the trackers exchange group sums; every
  // member's estimates must be bitwise those of one process observing all chains at once (observe(states)).
  using namespace dualgibbs;
  const Model model(make_torus(5, 4), 1.0, 0.3);
  for (Domain domain : {Domain::Primal, Domain::Dual})
    for (bool full : {true, false})
      for (int k : {2, 3, 7}) {  // 7 members: more than the 6 groups (3 per half), so one member has no chains
        EnsembleOptions o;
        o.chains = 31;
        o.sweeps = 5;
        o.checkpoint_every = 2;
        o.seed = 9;
        o.threads = 2;
        o.init = InitialState::Random;
        const LocalRecord one = observe_shares(model, domain, o, full, false);
        const std::vector<std::size_t> cuts =
            CovarianceErrorTracker(domain, model.node_variances(), covariance_primal(model), ErrorTrackerOptions{3})
                .group_offsets(o.chains);
        std::vector<LocalRecord> got(static_cast<std::size_t>(k));
        on_members(k, [&](ThreadMember& m) {
          got[static_cast<std::size_t>(m.rank())] = observe_shares(model, domain, o, full, true, &m);
        });
        for (int r = 0; r < k; ++r) {
          const LocalRecord& rec = got[static_cast<std::size_t>(r)];
          const auto [g_lo, g_hi] = member_share(cuts.size() - 1, r, k);
          BOOST_TEST_CONTEXT(to_string(domain) << (full ? ", full" : ", diagonal") << ", member " << r << " of " << k) {
            BOOST_REQUIRE_EQUAL(rec.eu.size(), one.eu.size());
            for (std::size_t c = 0; c < one.eu.size(); ++c) {
              BOOST_CHECK_EQUAL(rec.first[c], cuts[g_lo]);  // its share of the groups, and only that
              BOOST_CHECK_EQUAL(rec.shown[c], cuts[g_hi] - cuts[g_lo]);
              BOOST_CHECK(rec.eu[c] == one.eu[c]);  // exact: the same bits
              BOOST_CHECK(rec.eb[c] == one.eb[c]);
              BOOST_CHECK(rec.eu_se[c] == one.eu_se[c]);
              BOOST_CHECK(rec.eb_se[c] == one.eb_se[c]);
              BOOST_CHECK(rec.mean_norm[c] == one.mean_norm[c]);
              BOOST_CHECK(same_bits(rec.estimate[c], one.estimate[c]));
              if (domain != Domain::Dual) continue;
              BOOST_CHECK(rec.cv_eu[c] == one.cv_eu[c]);
              const Eigen::MatrixXd mine = one.cv_terms[c].middleCols(static_cast<Eigen::Index>(rec.first[c]),
                                                                      static_cast<Eigen::Index>(rec.shown[c]));
              BOOST_CHECK(same_bits(rec.cv_terms[c], mine));
            }
          }
        }
      }
}

namespace {

// Every field of two error curves but the wall-clock seconds, bit for bit.
// measure_convergence over k members (threads), sharing `cs`: every member's curves, in rank order.
std::vector<dualgibbs::ConvergenceCurves> curves_over_members(int k, const dualgibbs::Model& model,
                                                              const Eigen::MatrixXd& target,
                                                              const dualgibbs::ConvergenceSettings& cs) {
  std::vector<dualgibbs::ConvergenceCurves> got(static_cast<std::size_t>(k));
  on_members(k, [&](ThreadMember& m) {
    dualgibbs::ConvergenceSettings shared = cs;
    shared.group = &m;
    got[static_cast<std::size_t>(m.rank())] = dualgibbs::measure_convergence(model, target, shared);
  });
  return got;
}

void check_same_curve(const std::vector<dualgibbs::ErrorEstimate>& got,
                      const std::vector<dualgibbs::ErrorEstimate>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t c = 0; c < want.size(); ++c) {
    BOOST_TEST_CONTEXT("checkpoint " << c) {
      BOOST_CHECK_EQUAL(got[c].sweep, want[c].sweep);
      BOOST_CHECK(got[c].Eb == want[c].Eb);
      BOOST_CHECK(got[c].Eb_floor == want[c].Eb_floor);
      BOOST_CHECK(got[c].Eb_se == want[c].Eb_se);
      BOOST_CHECK(got[c].Eu == want[c].Eu);
      BOOST_CHECK(got[c].Eu_se == want[c].Eu_se);
      BOOST_CHECK(got[c].mean_norm == want[c].mean_norm);
      BOOST_CHECK(got[c].mean_floor == want[c].mean_floor);
      BOOST_CHECK(got[c].max_abs_error == want[c].max_abs_error);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(deferred_convergence_over_members_matches_one_process) {
  // measure_convergence over 1 (no group), 2 and 3 members: each member keeps its share of a batch of checkpoints
  // and scores them together (ConvergenceSettings::deferred_bytes). All the checkpoints of a domain in one batch
  // (the default memory), batches of 2 of the 11 checkpoints (a short last batch), and the fallback of a
  // memory too small for one checkpoint (every checkpoint exchanged as it comes) must all give one process's bits,
  // with the control variate's curve, for the full covariance and the marginal variances.
  using namespace dualgibbs;
  const Model model(make_torus(5, 4), 1.0, 0.3);
  const Eigen::MatrixXd cov = covariance_primal(model);
  for (bool full : {true, false}) {
    const Eigen::MatrixXd target = full ? cov : Eigen::MatrixXd(cov.diagonal());
    ConvergenceSettings cs;
    cs.chains = 40;
    cs.sweeps = 10;  // checkpoints at sweeps 0..10: 11 per domain
    cs.seed = 12;
    cs.threads = 1;
    cs.jackknife_groups = 3;
    cs.init = InitialState::Random;
    cs.control_variate = true;
    const ConvergenceCurves one = measure_convergence(model, target, cs);
    BOOST_CHECK_EQUAL(one.checkpoints_per_exchange, 0u);
    for (int k : {2, 3}) {
      auto batch_of = [&](std::size_t memory) {  // the batch the members choose for `memory`
        ConvergenceSettings probe = cs;
        probe.sweeps = 1;
        probe.deferred_bytes = memory;
        return curves_over_members(k, model, target, probe).front().checkpoints_per_exchange;
      };
      // The smallest memory that holds two checkpoints (bisection): batches of 2, the last of 1.
      std::size_t lo = 0, hi = std::size_t{1} << 40;
      BOOST_REQUIRE_GE(batch_of(hi), 11u);
      while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (batch_of(mid) >= 2 ? hi : lo) = mid;
      }
      const std::size_t middle = hi, small_batch = batch_of(middle);
      BOOST_REQUIRE_EQUAL(small_batch, 2u);
      const std::size_t memories[] = {cs.deferred_bytes, middle, 0};
      for (const std::size_t memory : memories) {
        cs.deferred_bytes = memory;
        const std::vector<ConvergenceCurves> got = curves_over_members(k, model, target, cs);
        for (int r = 0; r < k; ++r) {
          const ConvergenceCurves& c = got[static_cast<std::size_t>(r)];
          BOOST_TEST_CONTEXT((full ? "full" : "diagonal") << ", member " << r << " of " << k << ", memory " << memory) {
            if (memory == middle)
              BOOST_CHECK_EQUAL(c.checkpoints_per_exchange, small_batch);
            else if (memory == 0)
              BOOST_CHECK_EQUAL(c.checkpoints_per_exchange, 1u);
            else
              BOOST_CHECK_GE(c.checkpoints_per_exchange, 11u);
            check_same_curve(c.primal, one.primal);
            check_same_curve(c.dual, one.dual);
            check_same_curve(c.dual_cv, one.dual_cv);
          }
        }
      }
      cs.deferred_bytes = ConvergenceSettings{}.deferred_bytes;
    }
  }
}

BOOST_AUTO_TEST_CASE(mapped_control_variate_sums_match_built_and_one_process) {
  // The control variate's sums mapped from the dual tracker's (ConvergenceSettings::cv_sums): Auto picks them on a
  // small graph with many chains; they give the built sums' curve within rounding; over 2 and 3 members (every
  // checkpoint deferred, and each exchanged as it comes) bitwise one process's, for 1 and 2 threads.
  using namespace dualgibbs;
  const Model model(make_torus(4, 3), 1.0, 0.3);
  const Eigen::MatrixXd target = covariance_primal(model);
  ConvergenceSettings cs;
  cs.chains = 200;
  cs.sweeps = 5;
  cs.seed = 31;
  cs.jackknife_groups = 3;
  cs.init = InitialState::Random;
  cs.control_variate = true;
  for (unsigned threads : {1u, 2u}) {
    cs.threads = threads;
    cs.cv_sums = CvSums::Auto;
    const ConvergenceCurves one = measure_convergence(model, target, cs);
    BOOST_TEST(one.cv_sums_mapped);
    cs.cv_sums = CvSums::Built;
    const ConvergenceCurves built = measure_convergence(model, target, cs);
    BOOST_TEST(!built.cv_sums_mapped);
    check_same_curve(built.dual, one.dual);  // the dual's own curve does not change
    BOOST_REQUIRE_EQUAL(built.dual_cv.size(), one.dual_cv.size());
    for (std::size_t c = 0; c < one.dual_cv.size(); ++c) {
      const ErrorEstimate &a = one.dual_cv[c], &b = built.dual_cv[c];
      BOOST_TEST_CONTEXT("threads " << threads << ", checkpoint " << c) {
        BOOST_TEST(std::abs(a.Eu - b.Eu) < 1e-9 * b.Eb);
        BOOST_TEST(std::abs(a.Eb - b.Eb) < 1e-9 * b.Eb);
        BOOST_TEST(std::abs(a.Eu_se - b.Eu_se) < 1e-7 * b.Eu_se);
      }
    }
    cs.cv_sums = CvSums::Mapped;
    for (int k : {2, 3})
      for (std::size_t memory : {ConvergenceSettings{}.deferred_bytes, std::size_t{0}}) {
        cs.deferred_bytes = memory;
        const std::vector<ConvergenceCurves> got = curves_over_members(k, model, target, cs);
        for (int r = 0; r < k; ++r)
          BOOST_TEST_CONTEXT("threads " << threads << ", member " << r << " of " << k << ", memory " << memory) {
            check_same_curve(got[static_cast<std::size_t>(r)].dual_cv, one.dual_cv);
          }
      }
    cs.deferred_bytes = ConvergenceSettings{}.deferred_bytes;
  }
  // Mapped needs the full covariance target.
  cs.cv_sums = CvSums::Mapped;
  BOOST_CHECK_THROW(measure_convergence(model, Eigen::MatrixXd(target.diagonal()), cs), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_batch_scored_over_members_matches_one_process) {
  // CovarianceErrorTracker::observe_batch over 2, 3 and 7 members (7: more members than the 5 checkpoints, and one
  // without chains), each holding its share of the chains: every member's history and last estimate must be
  // bitwise one process's, checkpoint by checkpoint. On the 21 x 20 torus a checkpoint's full sums are 8.5 MB, so
  // observe_batch exchanges them in chunks of 2 checkpoints (2 + 2 + 1).
  using namespace dualgibbs;
  ErrorTrackerOptions topt;
  topt.jackknife_groups = 3;
  for (int side : {4, 20})
    for (bool full : {true, false}) {
      if (side == 20 && !full) continue;
      const Model model(make_torus(side + 1, side), 1.0, 0.3);
      const Eigen::MatrixXd cov = covariance_primal(model);
      const Eigen::MatrixXd target = full ? cov : Eigen::MatrixXd(cov.diagonal());
      EnsembleOptions o;
      o.chains = 31;
      o.sweeps = 4;
      o.seed = 5;
      o.threads = 1;
      o.init = InitialState::Random;
      CovarianceErrorTracker one(Domain::Dual, model.node_variances(), target, topt);
      run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) { one.observe(cp.sweep, 0.5, cp.states); });
      o.local_cuts = one.group_offsets(o.chains);
      for (int k : {2, 3, 7}) {
        std::vector<CovarianceErrorTracker> got(static_cast<std::size_t>(k), one);
        on_members(k, [&](ThreadMember& m) {
          CovarianceErrorTracker& t = got[static_cast<std::size_t>(m.rank())];
          t = CovarianceErrorTracker(Domain::Dual, model.node_variances(), target, topt);
          std::vector<std::size_t> sweeps;
          std::vector<Eigen::MatrixXd> states;
          std::size_t first = 0;
          EnsembleOptions mine = o;
          mine.group = &m;
          run_ensemble(model, Domain::Dual, mine, [&](const Checkpoint& cp) {
            sweeps.push_back(cp.sweep);
            states.emplace_back(cp.states);
            first = cp.first_chain;
          });
          t.observe_batch(sweeps, std::vector<double>(sweeps.size(), 0.5),
                          std::vector<Eigen::Ref<const Eigen::MatrixXd>>(states.begin(), states.end()), first, o.chains,
                          Execution{0, &m});
        });
        for (int r = 0; r < k; ++r) {
          const CovarianceErrorTracker& t = got[static_cast<std::size_t>(r)];
          BOOST_TEST_CONTEXT((full ? "full" : "diagonal") << ", member " << r << " of " << k) {
            check_same_curve(t.history(), one.history());
            BOOST_CHECK(same_bits(t.last_estimate(), one.last_estimate()));
          }
        }
      }
    }
}

// The value of component c of item i that member `from` sends to member `to` (exact in double).
double a2a_value(int from, int to, std::size_t i, std::size_t c) {
  return 1000000.0 * from + 10000.0 * to + 10.0 * static_cast<double>(i) + static_cast<double>(c);
}

BOOST_AUTO_TEST_CASE(all_to_all_delivers_each_members_blocks) {
  // ChainGroup::all_to_all through its default transport (every send buffer gathered, the blocks for this member
  // kept): over 1 to 4 members with uneven counts, some zero, member `to` must receive from every member, in rank
  // order, exactly the items that member addressed to it.
  for (int k = 1; k <= 4; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    std::vector<std::size_t> counts(ku * ku);
    for (std::size_t r = 0; r < ku; ++r)
      for (std::size_t t = 0; t < ku; ++t) counts[r * ku + t] = (r + 2 * t) % 3;  // 0, 1 or 2 items
    constexpr std::size_t unit = 3;
    std::vector<std::vector<double>> got(ku);
    std::vector<std::string> errors(ku);
    on_members(k, [&](ThreadMember& m) {
      const int me = m.rank();
      std::vector<double> send;
      for (int t = 0; t < k; ++t)
        for (std::size_t i = 0; i < counts[static_cast<std::size_t>(me) * ku + static_cast<std::size_t>(t)]; ++i)
          for (std::size_t c = 0; c < unit; ++c) send.push_back(a2a_value(me, t, i, c));
      std::size_t incoming = 0;
      for (std::size_t r = 0; r < ku; ++r) incoming += counts[r * ku + static_cast<std::size_t>(me)];
      std::vector<double> recv(incoming * unit + 1, -1.0);  // one guard value past the end
      try {
        m.all_to_all(nullptr, send.data(), recv.data(), counts, unit);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(me)] = e.what();
      }
      got[static_cast<std::size_t>(me)] = recv;
    });
    for (int t = 0; t < k; ++t) {
      BOOST_TEST_CONTEXT("member " << t << " of " << k) {
        BOOST_TEST(errors[static_cast<std::size_t>(t)].empty());
        std::vector<double> expected;
        for (int r = 0; r < k; ++r)
          for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r) * ku + static_cast<std::size_t>(t)]; ++i)
            for (std::size_t c = 0; c < unit; ++c) expected.push_back(a2a_value(r, t, i, c));
        expected.push_back(-1.0);
        BOOST_TEST(got[static_cast<std::size_t>(t)] == expected, boost::test_tools::per_element());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(all_to_all_rejects_a_wrong_count_matrix) {
  on_members(2, [&](ThreadMember& m) {
    double x = 0;
    BOOST_CHECK_THROW(m.all_to_all(nullptr, &x, &x, {1, 1, 1}, 1), std::invalid_argument);
  });
}

BOOST_AUTO_TEST_CASE(batch_share_is_each_members_part_of_batch) {
  // GroupedMoments::batch_share over 1, 2, 3 and 5 members (5: more members than the 4 sets, one keeps none), each
  // holding its share of 7 groups of 40 draws: member r's objects must be bitwise elements member_share(4, r, k)
  // of batch() over all draws in one process (centre, every group's sums, the total), both kinds. Without a group,
  // batch_share is batch.
  using namespace dualgibbs;
  const std::vector<std::size_t> offsets{0, 5, 11, 17, 20, 28, 33, 40};
  const std::size_t groups = offsets.size() - 1;
  std::vector<Eigen::MatrixXd> all;
  for (int b = 0; b < 4; ++b)
    all.push_back(Eigen::MatrixXd::Random(6, 40) * (b + 1.0) + Eigen::MatrixXd::Constant(6, 40, b));
  const std::vector<Eigen::Ref<const Eigen::MatrixXd>> all_refs(all.begin(), all.end());
  auto same = [](const GroupedMoments& a, const GroupedMoments& b) {
    bool ok = a.num_groups() == b.num_groups() && same_bits(a.center(), b.center()) && a.count() == b.count() &&
              same_bits(a.total().sum, b.total().sum) && same_bits(a.total().scatter, b.total().scatter);
    for (std::size_t g = 0; ok && g < a.num_groups(); ++g)
      ok = a.group(g).count == b.group(g).count && same_bits(a.group(g).sum, b.group(g).sum) &&
           same_bits(a.group(g).scatter, b.group(g).scatter);
    return ok;
  };
  // Bad input, as batch(): no sets, sets of different shapes.
  BOOST_CHECK_THROW(GroupedMoments::batch_share({}, 0, offsets, MomentKind::Full), std::invalid_argument);
  const Eigen::MatrixXd narrow = Eigen::MatrixXd::Ones(6, 39);
  BOOST_CHECK_THROW(GroupedMoments::batch_share({all[0], narrow}, 0, offsets, MomentKind::Full), std::invalid_argument);
  for (MomentKind kind : {MomentKind::Full, MomentKind::Diagonal}) {
    const std::vector<GroupedMoments> one = GroupedMoments::batch(all_refs, 0, offsets, kind);
    const std::vector<GroupedMoments> alone = GroupedMoments::batch_share(all_refs, 0, offsets, kind);
    BOOST_REQUIRE_EQUAL(alone.size(), one.size());
    for (std::size_t b = 0; b < one.size(); ++b) BOOST_CHECK(same(alone[b], one[b]));
    for (int k : {1, 2, 3, 5}) {
      std::vector<std::vector<GroupedMoments>> got(static_cast<std::size_t>(k));
      std::vector<std::string> errors(static_cast<std::size_t>(k));
      on_members(k, [&](ThreadMember& m) {
        const auto [g_lo, g_hi] = member_share(groups, m.rank(), k);
        std::vector<Eigen::Ref<const Eigen::MatrixXd>> mine;
        for (const auto& d : all)
          mine.emplace_back(d.middleCols(static_cast<Eigen::Index>(offsets[g_lo]),
                                         static_cast<Eigen::Index>(offsets[g_hi] - offsets[g_lo])));
        try {
          got[static_cast<std::size_t>(m.rank())] =
              GroupedMoments::batch_share(mine, offsets[g_lo], offsets, kind, Execution{0, &m});
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(m.rank())] = e.what();
        }
      });
      for (int r = 0; r < k; ++r) BOOST_TEST_CONTEXT(to_string(kind) << ", member " << r << " of " << k) {
          BOOST_TEST(errors[static_cast<std::size_t>(r)].empty());
          const auto [lo, hi] = member_share(one.size(), r, k);
          const std::vector<GroupedMoments>& mine = got[static_cast<std::size_t>(r)];
          BOOST_REQUIRE_EQUAL(mine.size(), hi - lo);
          for (std::size_t b = lo; b < hi; ++b) BOOST_CHECK(same(mine[b - lo], one[b]));
        }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_error_on_one_member_ends_local_observation_everywhere) {
  // Member 1 throws at sweep 2 before its tracker; the others are inside theirs (the group sums' exchange) when
  // they learn of it. A share that is not the member's own is refused on every member.
  using namespace dualgibbs;
  const Model model(make_torus(4, 4), 1.0, 0.3);
  const Eigen::MatrixXd target = covariance_primal(model);
  const int k = 3;
  std::vector<std::string> caught(k), wrong(k);
  std::vector<int> after(k, 0);
  on_members(k, [&](ThreadMember& m) {
    const auto r = static_cast<std::size_t>(m.rank());
    CovarianceErrorTracker tracker(Domain::Dual, model.node_variances(), target);
    EnsembleOptions o;
    o.chains = 24;
    o.sweeps = 6;
    o.threads = 1;
    o.group = &m;
    o.local_cuts = tracker.group_offsets(o.chains);
    const Execution shared{1, &m};
    try {
      run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) {
        if (cp.sweep == 2 && m.rank() == 1) throw std::invalid_argument("planted on member 1");
        tracker.observe(cp.sweep, 0.0, cp.states, cp.first_chain, o.chains, shared);
      });
    } catch (const std::invalid_argument& e) {
      caught[r] = e.what();
    }
    try {  // every member passes member 0's share as its own
      run_ensemble(model, Domain::Dual, o,
                   [&](const Checkpoint& cp) { tracker.observe(cp.sweep, 0.0, cp.states, 0, o.chains, shared); });
    } catch (const std::invalid_argument& e) {
      wrong[r] = e.what();
    }
    o.sweeps = 1;  // still in step: the next run works on every member
    run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) {
      tracker.observe(cp.sweep, 0.0, cp.states, cp.first_chain, o.chains, shared);
      ++after[r];
    });
  });
  BOOST_CHECK_EQUAL(caught[1], "planted on member 1");
  for (int r : {0, 2}) BOOST_CHECK_EQUAL(caught[static_cast<std::size_t>(r)], "planted on member 1 (on rank 1)");
  for (int r = 0; r < k; ++r) {
    BOOST_CHECK(wrong[static_cast<std::size_t>(r)].find("is not among the draws held here") != std::string::npos);
    BOOST_CHECK_EQUAL(after[static_cast<std::size_t>(r)], 2);
  }
}

BOOST_AUTO_TEST_CASE(member_shares_cover_the_items_in_order) {
  for (std::size_t count : {0u, 1u, 5u, 37u})
    for (int k : {1, 2, 3, 7}) {
      std::size_t next = 0, smallest = count, largest = 0;
      for (int r = 0; r < k; ++r) {
        const auto [first, last] = dualgibbs::member_share(count, r, k);
        BOOST_CHECK_EQUAL(first, next);
        smallest = std::min(smallest, last - first);
        largest = std::max(largest, last - first);
        next = last;
      }
      BOOST_CHECK_EQUAL(next, count);
      BOOST_CHECK_LE(largest - smallest, 1u);
    }
}

BOOST_AUTO_TEST_CASE(rejects_a_rank_outside_the_group) {
  BOOST_CHECK_THROW(dualgibbs::member_share(5, 2, 2), std::invalid_argument);
  BOOST_CHECK_THROW(dualgibbs::member_share(5, -1, 2), std::invalid_argument);
  BOOST_CHECK_THROW(dualgibbs::member_share(5, 0, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(calls_given_no_group_make_no_collective) {
  // Member 0 alone runs an ensemble and, in its observer, builds moments, scores a checkpoint and takes the control
  // variate's terms, never passing its group: were any of these collective, member 0 would wait for member 1
  // forever (the test's timeout). Then both members meet in one collective.
  using namespace dualgibbs;
  const Model model(make_torus(4, 4), 1.0, 0.3);
  const Eigen::MatrixXd target = covariance_primal(model);
  std::vector<int> done(2, 0);
  on_members(2, [&](ThreadMember& m) {
    if (m.rank() == 0) {
      EnsembleOptions o;
      o.chains = 24;
      o.sweeps = 2;
      o.threads = 1;
      const FlowControlVariate cv(model);
      CovarianceErrorTracker tracker(Domain::Dual, model.node_variances(), target);
      run_ensemble(model, Domain::Dual, o, [&](const Checkpoint& cp) {
        const GroupedMoments gm(cp.states, 4, MomentKind::Full);
        tracker.observe(cp.sweep, 0.0, cp.states);
        BOOST_CHECK_EQUAL(cv.dual_terms(cp.states).cols(), cp.states.cols());
      });
    }
    m.run([] {});
    done[static_cast<std::size_t>(m.rank())] = 1;
  });
  BOOST_CHECK(done[0] == 1 && done[1] == 1);
}

BOOST_AUTO_TEST_CASE(ensemble_and_estimators_over_members_match_one_process) {
  using namespace dualgibbs;
  const Model model(make_torus(5, 4), 1.0, 0.3);
  for (Domain domain : {Domain::Primal, Domain::Dual})
    for (int k : {2, 3}) {
      EnsembleOptions o;
      o.chains = 29;
      o.sweeps = 5;
      o.checkpoint_every = 2;
      o.seed = 4;
      o.threads = 2;
      o.lockstep = 2;
      o.init = InitialState::Random;
      const Record one = observe_run(model, domain, o);
      std::vector<Record> got(static_cast<std::size_t>(k));
      on_members(k,
                 [&](ThreadMember& m) { got[static_cast<std::size_t>(m.rank())] = observe_run(model, domain, o, &m); });
      for (int r = 0; r < k; ++r) {
        const Record& rec = got[static_cast<std::size_t>(r)];
        BOOST_TEST_CONTEXT(to_string(domain) << ", member " << r << " of " << k) {
          BOOST_REQUIRE_EQUAL(rec.states.size(), one.states.size());
          for (std::size_t c = 0; c < one.states.size(); ++c) {
            BOOST_CHECK(same_bits(rec.states[c], one.states[c]));
            if (domain == Domain::Dual) BOOST_CHECK(same_bits(rec.cv_terms[c], one.cv_terms[c]));
            BOOST_CHECK(rec.eu[c] == one.eu[c]);
            BOOST_CHECK(rec.eu_se[c] == one.eu_se[c]);
          }
        }
      }
    }
}

// The control variate's precomputation split over the members (each computes its share of the nodes, then all
// gather) gives every member the bits of one process: E_v, l_v and the searched kappa.
BOOST_AUTO_TEST_CASE(flow_precomputation_over_members_matches_one_process) {
  using namespace dualgibbs;
  const Model model(make_random_regular(301, 6, 9), 1.0, 0.25);
  FlowCvOptions o;
  o.degree = 3;
  const FlowControlVariate one(model, o);
  for (int k : {2, 3}) {
    std::vector<Eigen::VectorXd> energy(static_cast<std::size_t>(k)), lower(static_cast<std::size_t>(k));
    on_members(k, [&](ThreadMember& m) {
      const FlowControlVariate cv(model, o, Execution{1, &m});
      energy[static_cast<std::size_t>(m.rank())] = cv.flow_energy();
      lower[static_cast<std::size_t>(m.rank())] = cv.lower_bound();
    });
    for (int r = 0; r < k; ++r) BOOST_TEST_CONTEXT("member " << r << " of " << k) {
        BOOST_CHECK(same_bits(energy[static_cast<std::size_t>(r)], one.flow_energy()));
        BOOST_CHECK(same_bits(lower[static_cast<std::size_t>(r)], one.lower_bound()));
      }
  }
}

BOOST_AUTO_TEST_CASE(an_error_on_one_member_ends_every_member) {
  using namespace dualgibbs;
  const Model model(make_torus(4, 4), 1.0, 0.3);
  EnsembleOptions o;
  o.chains = 24;
  o.sweeps = 6;
  o.threads = 1;
  const int k = 3;
  std::vector<std::string> caught(k);
  std::vector<int> kind(k, 0), after(k, 0);
  on_members(k, [&](ThreadMember& m) {
    const auto r = static_cast<std::size_t>(m.rank());
    EnsembleOptions mine = o;  // each member's own copy
    mine.group = &m;
    try {
      // Member 1 throws before its estimator's gather; the others are inside theirs when they learn of it.
      run_ensemble(model, Domain::Dual, mine, [&](const Checkpoint& cp) {
        if (cp.sweep == 2 && m.rank() == 1) throw std::invalid_argument("planted on member 1");
        const GroupedMoments gm(cp.states, 4, MomentKind::Full, Execution{0, &m});
      });
    } catch (const std::invalid_argument& e) {
      caught[r] = e.what();
      kind[r] = 2;
    } catch (const std::exception& e) {
      caught[r] = e.what();
      kind[r] = 1;
    }
    // Still in step: the next run works on every member.
    mine.sweeps = 1;
    run_ensemble(model, Domain::Dual, mine, [&](const Checkpoint&) { ++after[r]; });
  });
  BOOST_CHECK_EQUAL(caught[1], "planted on member 1");  // its own exception
  for (int r : {0, 2}) BOOST_CHECK_EQUAL(caught[static_cast<std::size_t>(r)], "planted on member 1 (on rank 1)");
  for (int r = 0; r < k; ++r) {
    BOOST_CHECK_EQUAL(kind[static_cast<std::size_t>(r)], 2);  // std::invalid_argument everywhere (exit code 2)
    BOOST_CHECK_EQUAL(after[static_cast<std::size_t>(r)], 2);
  }
}

BOOST_AUTO_TEST_CASE(run_settles_a_failure_of_one_member) {
  // A failure that is not bad input keeps its type on the failed member and arrives as std::runtime_error on the
  // others (exit code 1 in the command).
  using namespace dualgibbs;
  const int k = 2;
  std::vector<std::string> caught(k);
  on_members(k, [&](ThreadMember& m) {
    try {
      m.run([&] {
        if (m.rank() == 0) throw std::logic_error("broken on member 0");
      });
    } catch (const std::runtime_error& e) {
      caught[static_cast<std::size_t>(m.rank())] = std::string("runtime_error: ") + e.what();
    } catch (const std::logic_error& e) {
      caught[static_cast<std::size_t>(m.rank())] = std::string("logic_error: ") + e.what();
    }
  });
  BOOST_CHECK_EQUAL(caught[0], "logic_error: broken on member 0");
  BOOST_CHECK_EQUAL(caught[1], "runtime_error: broken on member 0 (on rank 0)");
}

BOOST_AUTO_TEST_SUITE_END()
