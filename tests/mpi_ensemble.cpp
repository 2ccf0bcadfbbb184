// dualgibbs::mpi under mpirun (any number of ranks; tests/CMakeLists.txt runs 1, 2 and 3): the group run gives
// bitwise the checkpoints and estimator outputs of a one-process run computed on the same rank, and an error
// raised on one rank only ends the call on every rank with that rank's message (a hang fails by ctest's timeout).
#define BOOST_TEST_MODULE mpi_ensemble
#include <boost/test/unit_test.hpp>

#include <dualgibbs/dualgibbs.hpp>
#include <dualgibbs/sampling/mpi.hpp>

#include <Eigen/Core>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct MpiSetup {
  MpiSetup() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  ~MpiSetup() { MPI_Finalize(); }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiSetup);

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

// What an observer records at every checkpoint: the states, and the estimators fed with them.
struct Record {
  std::vector<Eigen::MatrixXd> states;
  std::vector<Eigen::MatrixXd> cv_terms;
  std::vector<double> eu, eb, eu_se;
};

Record observe_run(const dualgibbs::Model& model, dualgibbs::Domain domain, const dualgibbs::EnsembleOptions& o,
                   bool over_ranks) {
  using namespace dualgibbs;
  const FlowControlVariate cv(model);
  const Eigen::MatrixXd target = covariance_primal(model);
  CovarianceErrorTracker tracker(domain, model.node_variances(), target);
  Record rec;
  // Over the ranks: the ensemble and the estimators are given the group explicitly.
  std::optional<mpi::Group> group;
  if (over_ranks) group.emplace(MPI_COMM_WORLD);
  const Execution shared{0, group ? &*group : nullptr};
  EnsembleOptions options = o;
  options.group = shared.group;
  run_ensemble(model, domain, options, [&](const Checkpoint& cp) {
    rec.states.emplace_back(cp.states);
    if (domain == Domain::Dual) rec.cv_terms.push_back(cv.dual_terms(cp.states, shared));
    const ErrorEstimate e = tracker.observe(cp.sweep, 0.0, cp.states, shared);
    rec.eu.push_back(e.Eu);
    rec.eb.push_back(e.Eb);
    rec.eu_se.push_back(e.Eu_se);
  });
  return rec;
}

// Local observation (EnsembleOptions::local_cuts): the trackers fed this rank's share of the chains only, or, for
// the reference, every chain in one process.
struct LocalRecord {
  std::vector<std::size_t> first, shown;
  std::vector<double> eu, eb, eu_se, eb_se, mean_norm, cv_eu;
};

LocalRecord observe_shares(const dualgibbs::Model& model, dualgibbs::Domain domain, dualgibbs::EnsembleOptions o,
                           bool full, bool over_ranks) {
  using namespace dualgibbs;
  const FlowControlVariate cv(model);
  const Eigen::MatrixXd cov = covariance_primal(model);
  const Eigen::MatrixXd target = full ? cov : Eigen::MatrixXd(cov.diagonal());
  const Eigen::VectorXd s2 = model.node_variances();
  CovarianceErrorTracker tracker(domain, s2, target, ErrorTrackerOptions{4}),
      cv_tracker(Domain::Dual, s2, target, ErrorTrackerOptions{4});
  LocalRecord rec;
  std::optional<mpi::Group> group;
  if (over_ranks) group.emplace(MPI_COMM_WORLD);
  const Execution shared{0, group ? &*group : nullptr};
  const Observer observe = [&](const Checkpoint& cp) {
    rec.first.push_back(cp.first_chain);
    rec.shown.push_back(static_cast<std::size_t>(cp.states.cols()));
    const ErrorEstimate e = tracker.observe(cp.sweep, 0.0, cp.states, cp.first_chain, o.chains, shared);
    rec.eu.push_back(e.Eu);
    rec.eb.push_back(e.Eb);
    rec.eu_se.push_back(e.Eu_se);
    rec.eb_se.push_back(e.Eb_se);
    rec.mean_norm.push_back(e.mean_norm);
    if (domain != Domain::Dual) return;
    const Eigen::MatrixXd w = cv.dual_terms(cp.states);  // this rank's chains, here alone
    rec.cv_eu.push_back(cv_tracker.observe(cp.sweep, 0.0, w, cp.first_chain, o.chains, shared).Eu);
  };
  if (over_ranks) {
    o.local_cuts = tracker.group_offsets(o.chains);
    o.group = shared.group;
    run_ensemble(model, domain, o, observe);
  } else {
    run_ensemble(model, domain, o, observe);
  }
  return rec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mpi_ensemble)

BOOST_AUTO_TEST_CASE(local_observation_matches_one_process) {
  // Each rank sees only its share of the trackers' groups and the ranks exchange group sums: every rank's estimates
  // are bitwise those of one process that sees every chain.
  using namespace dualgibbs;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Model model(make_torus(6, 5), 1.0, 0.3);
  for (Domain domain : {Domain::Primal, Domain::Dual})
    for (bool full : {true, false})
      for (unsigned threads : {1u, 2u}) {
        EnsembleOptions o;
        o.chains = 37;
        o.sweeps = 7;
        o.checkpoint_every = 3;
        o.seed = 12;
        o.threads = threads;
        o.init = InitialState::Random;
        const LocalRecord one = observe_shares(model, domain, o, full, false);
        const LocalRecord all = observe_shares(model, domain, o, full, true);
        const std::vector<std::size_t> cuts =
            CovarianceErrorTracker(domain, model.node_variances(), covariance_primal(model), ErrorTrackerOptions{4})
                .group_offsets(o.chains);
        const auto [g_lo, g_hi] = member_share(cuts.size() - 1, world_rank(), size);
        BOOST_TEST_CONTEXT(to_string(domain) << (full ? ", full" : ", diagonal") << ", threads " << threads) {
          BOOST_REQUIRE_EQUAL(all.eu.size(), one.eu.size());
          for (std::size_t k = 0; k < one.eu.size(); ++k) {
            BOOST_CHECK_EQUAL(all.first[k], cuts[g_lo]);  // this rank's share of the groups only
            BOOST_CHECK_EQUAL(all.shown[k], cuts[g_hi] - cuts[g_lo]);
            BOOST_CHECK(all.eu[k] == one.eu[k]);  // exact: the same bits
            BOOST_CHECK(all.eb[k] == one.eb[k]);
            BOOST_CHECK(all.eu_se[k] == one.eu_se[k]);
            BOOST_CHECK(all.eb_se[k] == one.eb_se[k]);
            BOOST_CHECK(all.mean_norm[k] == one.mean_norm[k]);
            if (domain == Domain::Dual) BOOST_CHECK(all.cv_eu[k] == one.cv_eu[k]);
          }
        }
      }
}

BOOST_AUTO_TEST_CASE(deferred_convergence_matches_one_process) {
  // measure_convergence over the ranks keeps each rank's share of a batch of checkpoints and scores them together
  // (ConvergenceSettings::deferred_bytes): with the default memory (all 9 checkpoints of a domain in one batch) and
  // with the per-checkpoint fallback (0), every rank's curves are bitwise those of one process on the same rank.
  using namespace dualgibbs;
  const Model model(make_torus(6, 5), 1.0, 0.3);
  const Eigen::MatrixXd target = covariance_primal(model);
  for (unsigned threads : {1u, 2u}) {
    ConvergenceSettings cs;
    cs.chains = 43;
    cs.sweeps = 8;
    cs.seed = 21;
    cs.threads = threads;
    cs.jackknife_groups = 4;
    cs.init = InitialState::Random;
    cs.control_variate = true;
    const ConvergenceCurves one = measure_convergence(model, target, cs);
    for (std::size_t memory : {cs.deferred_bytes, std::size_t{0}}) {
      cs.deferred_bytes = memory;
      ConvergenceCurves all;
      {
        mpi::Group group(MPI_COMM_WORLD);
        ConvergenceSettings shared = cs;
        shared.group = &group;
        all = measure_convergence(model, target, shared);
      }
      int size = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      BOOST_TEST_CONTEXT("threads " << threads << ", memory " << memory) {
        if (size == 1)
          BOOST_CHECK_EQUAL(all.checkpoints_per_exchange, 0u);  // one rank: no group, nothing deferred
        else if (memory == 0)
          BOOST_CHECK_EQUAL(all.checkpoints_per_exchange, 1u);
        else
          BOOST_CHECK_GE(all.checkpoints_per_exchange, 9u);
        const std::vector<ErrorEstimate>* curves[][2] = {
            {&all.primal, &one.primal}, {&all.dual, &one.dual}, {&all.dual_cv, &one.dual_cv}};
        for (const auto& pair : curves) {
          const std::vector<ErrorEstimate>& got = *pair[0];
          const std::vector<ErrorEstimate>& want = *pair[1];
          BOOST_REQUIRE_EQUAL(got.size(), want.size());
          for (std::size_t k = 0; k < want.size(); ++k) {
            BOOST_CHECK(got[k].Eu == want[k].Eu);  // exact: the same bits
            BOOST_CHECK(got[k].Eb == want[k].Eb);
            BOOST_CHECK(got[k].Eu_se == want[k].Eu_se);
            BOOST_CHECK(got[k].Eb_se == want[k].Eb_se);
            BOOST_CHECK(got[k].Eb_floor == want[k].Eb_floor);
            BOOST_CHECK(got[k].mean_norm == want[k].mean_norm);
            BOOST_CHECK(got[k].mean_floor == want[k].mean_floor);
            BOOST_CHECK(got[k].max_abs_error == want[k].max_abs_error);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(checkpoints_and_estimators_match_one_process) {
  using namespace dualgibbs;
  const Model model(make_torus(6, 5), 1.0, 0.3);
  for (Domain domain : {Domain::Primal, Domain::Dual})
    for (std::size_t lockstep : {1u, 4u})
      for (unsigned threads : {1u, 2u}) {
        EnsembleOptions o;
        o.chains = 37;  // odd, and not a multiple of the lock-step width or of 2 or 3 ranks
        o.sweeps = 7;
        o.checkpoint_every = 3;
        o.seed = 11;
        o.threads = threads;
        o.lockstep = lockstep;
        o.init = InitialState::Random;
        const Record one = observe_run(model, domain, o, false);
        const Record all = observe_run(model, domain, o, true);
        BOOST_TEST_CONTEXT(to_string(domain) << ", lockstep " << lockstep << ", threads " << threads) {
          BOOST_REQUIRE_EQUAL(all.states.size(), one.states.size());
          for (std::size_t k = 0; k < one.states.size(); ++k) {
            BOOST_CHECK(same_bits(all.states[k], one.states[k]));
            if (domain == Domain::Dual) BOOST_CHECK(same_bits(all.cv_terms[k], one.cv_terms[k]));
            BOOST_CHECK(all.eu[k] == one.eu[k]);  // exact: the same bits
            BOOST_CHECK(all.eb[k] == one.eb[k]);
            BOOST_CHECK(all.eu_se[k] == one.eu_se[k]);
          }
        }
      }
}

BOOST_AUTO_TEST_CASE(all_to_all_over_ranks) {
  // mpi::Group's own all-to-all (MPI_Ialltoallv of items): with uneven counts, some zero, every rank must receive
  // from every rank, in rank order, exactly the items addressed to it; then a failure settled inside it (one rank
  // passes an error) ends every rank with that message.
  using namespace dualgibbs;
  mpi::Group group(MPI_COMM_WORLD);
  const int k = group.size(), me = group.rank();
  const auto ku = static_cast<std::size_t>(k);
  auto value = [](int from, int to, std::size_t i, std::size_t c) {
    return 1000000.0 * from + 10000.0 * to + 10.0 * static_cast<double>(i) + static_cast<double>(c);
  };
  std::vector<std::size_t> counts(ku * ku);
  for (std::size_t r = 0; r < ku; ++r)
    for (std::size_t t = 0; t < ku; ++t) counts[r * ku + t] = (r + 2 * t + 1) % 3;
  constexpr std::size_t unit = 4;
  std::vector<double> send, expected;
  for (int t = 0; t < k; ++t)
    for (std::size_t i = 0; i < counts[static_cast<std::size_t>(me) * ku + static_cast<std::size_t>(t)]; ++i)
      for (std::size_t c = 0; c < unit; ++c) send.push_back(value(me, t, i, c));
  for (int r = 0; r < k; ++r)
    for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r) * ku + static_cast<std::size_t>(me)]; ++i)
      for (std::size_t c = 0; c < unit; ++c) expected.push_back(value(r, me, i, c));
  std::vector<double> recv(expected.size() + 1, -1.0);
  expected.push_back(-1.0);  // the guard past the end stays
  send.push_back(0.0);       // never empty, so data() is valid
  group.all_to_all(nullptr, send.data(), recv.data(), counts, unit);
  BOOST_TEST(recv == expected, boost::test_tools::per_element());
  const int culprit = k > 1 ? 1 : 0;
  std::exception_ptr error;
  if (me == culprit) error = std::make_exception_ptr(std::invalid_argument("planted before the all-to-all"));
  try {
    group.all_to_all(error, send.data(), recv.data(), counts, unit);
    BOOST_ERROR("no exception on rank " << me);
  } catch (const std::invalid_argument& e) {
    BOOST_CHECK(std::string(e.what()).find("planted before the all-to-all") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(error_on_one_rank_ends_every_rank) {
  using namespace dualgibbs;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int culprit = size > 1 ? 1 : 0;
  const Model model(make_torus(4, 4), 1.0, 0.3);
  EnsembleOptions o;
  o.chains = 24;
  o.sweeps = 6;
  o.threads = 1;
  // The culprit throws at sweep 2 before its estimator; the others are inside theirs (GroupedMoments gathers
  // over the ranks, the group given to it) when they learn of it.
  mpi::Group group(MPI_COMM_WORLD);
  const Observer observe = [&](const Checkpoint& cp) {
    if (cp.sweep == 2 && world_rank() == culprit) throw std::invalid_argument("planted on one rank");
    const GroupedMoments gm(cp.states, 4, MomentKind::Full, Execution{0, &group});
    BOOST_CHECK_EQUAL(gm.count(), 24.0);
  };
  try {
    EnsembleOptions shared = o;
    shared.group = &group;
    run_ensemble(model, Domain::Dual, shared, observe);
    BOOST_ERROR("no exception on rank " << world_rank());
  } catch (const std::invalid_argument& e) {
    BOOST_CHECK(std::string(e.what()).find("planted on one rank") != std::string::npos);
  }
  // The ranks stay in step: a run after the failure works.
  o.sweeps = 2;
  std::size_t seen = 0;
  mpi::run_ensemble(MPI_COMM_WORLD, model, Domain::Dual, o, [&](const Checkpoint&) { ++seen; });
  BOOST_CHECK_EQUAL(seen, 3u);
}

BOOST_AUTO_TEST_CASE(failure_kinds_keep_their_exit_class) {
  // A numerical or other failure (not std::invalid_argument) arrives on the other ranks as std::runtime_error.
  using namespace dualgibbs;
  const Model model(make_torus(4, 4), 1.0, 0.3);
  EnsembleOptions o;
  o.chains = 12;
  o.sweeps = 3;
  o.threads = 1;
  const Observer observe = [&](const Checkpoint& cp) {
    if (cp.sweep == 1 && world_rank() == 0) throw std::logic_error("failure on rank 0");
  };
  try {
    mpi::run_ensemble(MPI_COMM_WORLD, model, Domain::Primal, o, observe);
    BOOST_ERROR("no exception on rank " << world_rank());
  } catch (const std::logic_error& e) {
    BOOST_CHECK_EQUAL(world_rank(), 0);  // the failed rank keeps its own exception
  } catch (const std::runtime_error& e) {
    BOOST_CHECK_NE(world_rank(), 0);
    BOOST_CHECK_EQUAL(std::string(e.what()), "failure on rank 0 (on rank 0)");
  }
}

BOOST_AUTO_TEST_CASE(split_graph_matches_one_process_colored) {
  // Every chain's graph cut over the ranks (MPI_Ineighbor_alltoallv per colour class): the checkpoints of one
  // process's colour-ordered sweep, bitwise, on a lattice, a 3-D lattice, an expander and a posterior, in the primal
  // domain (the nodes' values exchanged) and the dual (the tallies at the edges' ends).
  using namespace dualgibbs;
  EnsembleOptions o;
  o.chains = 3;
  o.sweeps = 5;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  Model posterior(make_torus(7, 9), 0.8, 0.4);
  posterior.set_observations(Eigen::VectorXd::LinSpaced(63, -1.0, 2.0));
  const Model models[] = {Model(make_torus(110, 12), 1.0, 0.1), Model(make_torus3(6, 5, 4), 1.0, 0.3),
                          Model(make_random_regular(200, 5, 3), 1.0, 0.5), posterior};
  for (const Domain domain : {Domain::Primal, Domain::Dual})
    for (const Model& model : models) {
      BOOST_TEST_INFO((domain == Domain::Dual ? "dual, " : "primal, ") << model.num_nodes() << " nodes");
      std::vector<Eigen::MatrixXd> reference, split;
      SchemeOptions colored;
      colored.kind = SchemeKind::Colored;
      run_ensemble(
          model, domain, o, [&](const Checkpoint& cp) { reference.emplace_back(cp.states); }, colored);
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      GraphShare share;
      mpi::run_partitioned(
          MPI_COMM_WORLD, model, domain, o, [&](const Checkpoint& cp) { split.emplace_back(cp.states); }, {}, &share);
      BOOST_TEST_REQUIRE(split.size() == reference.size());
      for (std::size_t c = 0; c < split.size(); ++c) BOOST_TEST(same_bits(split[c], reference[c]));
      split.clear();  // contiguous ranges instead of METIS's cut
      mpi::run_partitioned(
          MPI_COMM_WORLD, model, domain, o, [&](const Checkpoint& cp) { split.emplace_back(cp.states); },
          partition_ranges(model.num_nodes(), ranks));
      BOOST_TEST_REQUIRE(split.size() == reference.size());
      for (std::size_t c = 0; c < split.size(); ++c) BOOST_TEST(same_bits(split[c], reference[c]));
      BOOST_TEST(share.parts == ranks);
      BOOST_TEST(share.neighbors.size() <= static_cast<std::size_t>(ranks - 1));
    }
}

BOOST_AUTO_TEST_SUITE_END()
