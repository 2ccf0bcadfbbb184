// The primal-vs-dual convergence measurement of every experiment, `dualgibbs converge` and the default run:
// the exact target, both samplers scored at every checkpoint, the paper's table (experiments.hpp).
#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/sampling/partition.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "experiments/experiment_support.hpp"
#include "experiments/seeds.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

Eigen::MatrixXd exact_target(const Model& model, Index max_full_nodes) {
  if (model.num_nodes() <= max_full_nodes) return covariance_primal(model);
  return Eigen::MatrixXd(marginal_variances(model, Domain::Primal));
}

namespace {

// How many checkpoints a member of `group` keeps before scoring them together (ConvergenceSettings::deferred_bytes):
// its largest share of the states (twice with the control variate's terms) per checkpoint, after what scoring holds
// at a time (CovarianceErrorTracker::observe_batch exchanges chunks of at most 24 MiB of sums: about 4 x 24 MiB with
// their copies and the jackknife's replicates). The same number on every member (it depends on the sizes only), at
// least 1, and a multiple of the members where it can be.
std::size_t deferred_batch(const ChainGroup& group, const std::vector<std::size_t>& cuts, Index dim,
                           bool control_variate, std::size_t bytes) {
  std::size_t share = 0;
  for (int r = 0; r < group.size(); ++r) {
    const auto [lo, hi] = member_share(cuts.size() - 1, r, group.size());
    share = std::max(share, cuts[hi] - cuts[lo]);
  }
  const double per_checkpoint = 8.0 * static_cast<double>(dim) * static_cast<double>(share) * (control_variate ? 2 : 1);
  const double scoring = 4.0 * (24 << 20);
  const double fits = (static_cast<double>(bytes) - scoring) / std::max(per_checkpoint, 1.0);
  if (!(fits >= 2.0)) return 1;
  // A multiple of the members where it can be: each then scores the same number of the batch's checkpoints.
  const auto k = static_cast<std::size_t>(group.size());
  const auto batch = static_cast<std::size_t>(fits);
  return batch >= k ? batch / k * k : batch;
}

// Whether the control variate's full sums are derived from the dual tracker's (GroupedMoments::mapped, with the dense
// map: 4 dim^3 flops per group of chains) rather than built from its terms (per chain the degree-k residual map, about
// 2 k nnz(Q) flops, then the rank-one update's dim^2): by the flops alone, though the sparse map's are the slower.
bool derive_cv_sums(const Model& model, MomentKind kind, std::size_t groups, std::size_t chains, int degree,
                    CvSums choice) {
  if (choice != CvSums::Auto) return choice == CvSums::Mapped;
  if (kind != MomentKind::Full) return false;
  const auto dim = static_cast<double>(model.num_nodes());
  const double nnz_q = dim + 2.0 * static_cast<double>(model.num_edges());
  const double derived = 4.0 * dim * dim * dim * static_cast<double>(groups);
  const double built = static_cast<double>(chains) * (2.0 * degree * nnz_q + dim * dim);
  return derived < built;
}

// The control variate tracker's target: target + D_s - E, E the flow energies (their diagonal for marginal variances).
Eigen::MatrixXd shifted_target(const FlowControlVariate& cv, const Eigen::MatrixXd& target, const Eigen::VectorXd& s2) {
  Eigen::MatrixXd shifted = target;
  if (target.cols() == 1)
    shifted.col(0) += s2 - cv.flow_energy();
  else
    shifted += Eigen::MatrixXd(s2.asDiagonal()) - cv.energy_matrix();
  return shifted;
}

// The control variate's terms w = D_s^-1 r_k(Q) D_s x~ as a dense map of the states x~: the terms of the identity.
Eigen::MatrixXd dense_terms_map(const FlowControlVariate& cv, Index nodes, unsigned threads) {
  Eigen::MatrixXd map;
  cv.scaled_dual_terms(Eigen::MatrixXd::Identity(nodes, nodes), map, threads);
  return map;
}

// The checks of measure_convergence(): enough chains for the split-half error, a sweep, a dual domain, a target of
// the model's size.
void check_convergence_input(const Model& model, const Eigen::MatrixXd& target, const ConvergenceSettings& settings) {
  if (settings.chains < kMinSplitHalfChains)
    throw std::invalid_argument("measure_convergence: need at least " + std::to_string(kMinSplitHalfChains) +
                                " chains (two halves of three), got " + std::to_string(settings.chains));
  if (settings.sweeps < 1) throw std::invalid_argument("measure_convergence: sweeps must be at least 1");
  if (model.num_edges() == 0)
    throw std::invalid_argument("measure_convergence: the graph has no edges (no dual domain)");
  if (settings.control_variate) model.require_dual("measure_convergence's flow control variate (of the dual sampler)");
  const Index n = model.num_nodes();
  if (settings.control_variate && settings.cv_sums == CvSums::Mapped && target.cols() == 1 && n > 1)
    throw std::invalid_argument(
        "measure_convergence: the control variate's sums can be mapped from the dual's only for a full covariance "
        "target (this one is of marginal variances): use CvSums::Built or Auto");
  if (target.rows() != n || (target.cols() != n && target.cols() != 1))
    throw std::invalid_argument("measure_convergence: target is " + std::to_string(target.rows()) + " x " +
                                std::to_string(target.cols()) + ", expected " + std::to_string(n) + " x " +
                                std::to_string(n) + " or " + std::to_string(n) + " x 1");
}

// The ensemble of one domain's run: the settings' chains, sweeps, scan and start, a seed of the domain's own.
EnsembleOptions ensemble_options(const ConvergenceSettings& settings, Domain domain) {
  EnsembleOptions o;
  o.chains = settings.chains;
  o.sweeps = settings.sweeps;
  o.scan = settings.scan;
  o.seed = detail::derive_seed(settings.seed, domain == Domain::Primal ? 1 : 2);
  o.threads = settings.threads;
  o.group = settings.split_graph ? nullptr : settings.group;  // a split graph: the sweeps' group is run_partitioned's
  o.checkpoint_every = settings.checkpoint_every;
  o.init = settings.init;
  o.init_value = settings.init_value;
  o.init_scale = settings.init_scale;
  if (settings.init == InitialState::Given)
    o.given_state = domain == Domain::Primal ? settings.given_primal : settings.given_dual;
  o.lockstep = 1;  // independent schedules: the split-half estimator needs independent chains
  return o;
}

// One domain's chains, in one process or over the group's chains, or with every chain's graph split over the group.
EnsembleStats run_chains(const Model& model, Domain domain, const EnsembleOptions& o, const Observer& observe,
                         const ConvergenceSettings& settings, bool split) {
  const SchemeOptions& scheme = domain == Domain::Primal ? settings.scheme_primal : settings.scheme_dual;
  return split ? run_partitioned(model, domain, o, observe, *settings.group, scheme, settings.partition)
               : run_ensemble(model, domain, o, observe, scheme);
}

}  // namespace

ConvergenceCurves measure_convergence(const Model& model_in, const Eigen::MatrixXd& target,
                                      const ConvergenceSettings& settings, const ProgressFn& progress,
                                      const std::string& label) {
  // The trackers' and the control variate's work: the settings' threads, over the settings' group (collective there).
  // With the graph split over the group every member scores all chains itself: the group is the sweeps' alone.
  const bool split = settings.split_graph && settings.group && settings.group->size() > 1;
  const Execution execution{settings.threads, split ? nullptr : settings.group};
  // The covariance errors are of zero-mean draws: a model's mean is dropped (it does not change Q).
  std::optional<Model> zero_mean;
  if (model_in.has_mean()) zero_mean = model_in.without_mean();
  const Model& model = zero_mean ? *zero_mean : model_in;
  check_convergence_input(model, target, settings);
  ErrorTrackerOptions topt;
  topt.jackknife_groups = settings.jackknife_groups;
  ConvergenceCurves out;
  const detail::Stopwatch clock;
  // The control variate's estimates E - S_u (S_u the sample second moments of u = r_k(Q) D_s x~) are scored by
  // the dual tracker's own Woodbury reconstruction D_s - D_s S_w D_s of w = D_s^-1 u against the shifted target
  // target + D_s - E: the errors (estimate - target) are the same numbers, so Eb and Eu keep their meaning.
  std::optional<FlowControlVariate> cv;
  std::optional<CovarianceErrorTracker> cv_tracker;
  // A model without a dual (a given Q of factor width above 2) runs the primal alone; its tracker reads no D_s.
  const bool with_dual = model.has_dual();
  const Eigen::VectorXd s2 = with_dual ? model.node_variances() : Eigen::VectorXd::Ones(model.num_nodes());
  if (settings.control_variate) {
    cv.emplace(model, FlowCvOptions(), execution);  // the nodes split over the threads and a group's members
    out.cv_degree = cv->degree();
    cv_tracker.emplace(Domain::Dual, s2, shifted_target(*cv, target, s2), topt);
  }
  for (Domain domain : {Domain::Primal, Domain::Dual}) {
    if (domain == Domain::Dual && !with_dual) break;
    EnsembleOptions o = ensemble_options(settings, domain);
    CovarianceErrorTracker tracker(domain, s2, target, topt);
    // Over the members of a chain group (MPI ranks), each member's observer sees only its share of the trackers'
    // groups of chains and reduces it to the groups' sums (docs/mpi.md section 5); alone, it sees every chain.
    o.local_cuts = tracker.group_offsets(o.chains);
    const std::size_t chains = o.chains;
    const std::string stage = (label.empty() ? std::string() : label + " ") + to_string(domain);
    const double lo = domain == Domain::Primal ? 0.0 : 0.5;
    const auto sweeps = static_cast<double>(settings.sweeps);
    const bool with_cv = cv_tracker && domain == Domain::Dual;
    // The control variate's terms u are linear in the states, D_s^-1 r_k(Q) D_s x~: with full sums their sums can be
    // mapped from the dual tracker's, as the dense map applied to the identity gives it.
    const bool derive = with_cv && derive_cv_sums(model, tracker.kind(), o.local_cuts.size() - 1, chains, cv->degree(),
                                                  settings.cv_sums);
    out.cv_sums_mapped = out.cv_sums_mapped || derive;
    const Eigen::MatrixXd map =
        derive ? dense_terms_map(*cv, model.num_nodes(), execution.thread_budget()) : Eigen::MatrixXd();
    std::optional<CovarianceErrorTracker::Mapped> mapped;
    if (derive) mapped.emplace(CovarianceErrorTracker::Mapped{*cv_tracker, map});
    // Deferred scoring over the members of a chain group (docs/mpi.md section 5): the checkpoints are fixed in
    // advance and nothing here steers the run, so a member keeps its share of `batch` checkpoints and scores them
    // together, making the group's exchanges once per batch instead of at every checkpoint. Alone (or with a batch
    // of 1) every checkpoint is scored as it comes. Either way the same numbers in the same order.
    const ChainGroup* group = execution.shared();
    const std::size_t batch =
        group ? deferred_batch(*group, o.local_cuts, model.num_nodes(), with_cv && !derive, settings.deferred_bytes)
              : 0;
    out.checkpoints_per_exchange = batch;
    // The kept matrices are reused from batch to batch (assigned in place): only the first touches new memory.
    std::vector<std::size_t> kept_sweeps;
    std::vector<double> kept_seconds;
    std::vector<Eigen::MatrixXd> kept_states, kept_terms;
    Eigen::MatrixXd w;
    std::size_t kept_first = 0;
    // The next kept matrix of `kept` (reused, or a new one).
    auto next_kept = [&](std::vector<Eigen::MatrixXd>& kept) -> Eigen::MatrixXd& {
      if (kept_sweeps.size() == kept.size()) kept.emplace_back();
      return kept[kept_sweeps.size()];
    };
    // The ensemble gathers a checkpoint's states straight into the next kept matrix (no copy of them here).
    if (batch > 1) o.states_buffer = [&](std::size_t) { return &next_kept(kept_states); };
    auto score_kept = [&] {
      if (kept_sweeps.empty()) return;
      auto refs = [&](const std::vector<Eigen::MatrixXd>& m) {
        return std::vector<Eigen::Ref<const Eigen::MatrixXd>>(
            m.begin(), m.begin() + static_cast<std::ptrdiff_t>(kept_sweeps.size()));
      };
      if (mapped)
        tracker.observe_batch(kept_sweeps, kept_seconds, refs(kept_states), kept_first, chains, execution, *mapped);
      else
        tracker.observe_batch(kept_sweeps, kept_seconds, refs(kept_states), kept_first, chains, execution);
      if (with_cv && !derive)
        cv_tracker->observe_batch(kept_sweeps, kept_seconds, refs(kept_terms), kept_first, chains, execution);
      kept_sweeps.clear();
      kept_seconds.clear();
    };
    const Observer observe = [&](const Checkpoint& cp) {
      // The control variate's terms, into the next kept matrix when deferring, else into w (kept: its memory is
      // reused from checkpoint to checkpoint).
      Eigen::MatrixXd& terms = with_cv && !derive && batch > 1 ? next_kept(kept_terms) : w;
      if (with_cv && !derive)  // the terms of this member's chains, column by column, here alone
        cv->scaled_dual_terms(cp.states, terms, execution.thread_budget());
      if (batch > 1) {
        if (cp.states.data() != kept_states[kept_sweeps.size()].data())
          throw std::logic_error("measure_convergence: the states were not gathered into the kept matrix");
        kept_sweeps.push_back(cp.sweep);
        kept_seconds.push_back(cp.seconds);
        kept_first = cp.first_chain;
      } else if (mapped) {
        tracker.observe_batch({cp.sweep}, {cp.seconds}, {cp.states}, cp.first_chain, chains, execution, *mapped);
      } else {
        tracker.observe(cp.sweep, cp.seconds, cp.states, cp.first_chain, chains, execution);
        if (with_cv) cv_tracker->observe(cp.sweep, cp.seconds, w, cp.first_chain, chains, execution);
      }
      if (progress) progress(stage, lo + 0.5 * static_cast<double>(cp.sweep) / sweeps);  // this member's sweeps
      if (kept_sweeps.size() == batch) score_kept();
    };
    const EnsembleStats stats = run_chains(model, domain, o, observe, settings, split);
    score_kept();  // the last batch: collective, after every member's sweeps
    (domain == Domain::Primal ? out.primal : out.dual) = tracker.history();
    (domain == Domain::Primal ? out.primal_stats : out.dual_stats) = stats;
    out.kind = tracker.kind();
  }
  if (cv_tracker) out.dual_cv = cv_tracker->history();
  out.seconds = clock.seconds();
  return out;
}

Table convergence_table(const ConvergenceCurves& c) {
  // The domains that ran (a model without a dual: the primal alone), with their Eu normalised to the first point.
  struct Run {
    const char* name;
    const std::vector<ErrorEstimate>& history;
    std::vector<double> eu_norm;
  };
  std::vector<Run> runs{{"primal", c.primal, {}}};
  if (!c.dual.empty()) runs.push_back({"dual", c.dual, {}});
  std::size_t rows = c.primal.size();
  for (Run& run : runs) {
    std::vector<double> eu;
    for (const auto& e : run.history) eu.push_back(e.Eu);
    run.eu_norm = normalise_to_first(eu);
    rows = std::min(rows, run.history.size());
  }
  // The column groups in the table's order, each group's columns for every domain in turn (Eb_primal, Eu_primal,
  // Eb_dual, Eu_dual, time_primal, time_dual, ...), then Eu_norm per domain and the control variate's columns.
  using Field = double ErrorEstimate::*;
  const std::vector<std::vector<std::pair<const char*, Field>>> groups{
      {{"Eb", &ErrorEstimate::Eb}, {"Eu", &ErrorEstimate::Eu}},
      {{"time", &ErrorEstimate::seconds}},
      {{"Eb_floor", &ErrorEstimate::Eb_floor}},
      {{"Eb_se", &ErrorEstimate::Eb_se}},
      {{"Eu_se", &ErrorEstimate::Eu_se}},
      {{"mean", &ErrorEstimate::mean_norm}},
      {{"mean_floor", &ErrorEstimate::mean_floor}}};
  const std::pair<const char*, Field> cv_fields[] = {{"Eb_dual_cv", &ErrorEstimate::Eb},
                                                     {"Eu_dual_cv", &ErrorEstimate::Eu},
                                                     {"Eb_se_dual_cv", &ErrorEstimate::Eb_se},
                                                     {"Eu_se_dual_cv", &ErrorEstimate::Eu_se}};
  const bool with_cv = !c.dual_cv.empty();
  std::vector<std::string> columns{"sweep"};
  for (const auto& group : groups)
    for (const Run& run : runs)
      for (const auto& [name, field] : group) columns.push_back(std::string(name) + "_" + run.name);
  for (const Run& run : runs) columns.push_back(std::string("Eu_norm_") + run.name);
  if (with_cv)
    for (const auto& [name, field] : cv_fields) columns.emplace_back(name);
  Table t(columns);
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<double> row{static_cast<double>(c.primal[i].sweep)};
    for (const auto& group : groups)
      for (const Run& run : runs)
        for (const auto& [name, field] : group) row.push_back(run.history[i].*field);
    for (const Run& run : runs) row.push_back(run.eu_norm[i]);
    if (with_cv)
      for (const auto& [name, field] : cv_fields) row.push_back(c.dual_cv[i].*field);
    t.add_row(row);
  }
  return t;
}

ExperimentResult run_convergence(const Model& model, const std::string& name, const std::string& graph,
                                 const ConvergenceSettings& settings, Index max_full_nodes,
                                 const ProgressFn& progress) {
  const detail::Stopwatch total;
  ExperimentResult res;
  res.name = name;
  res.title = (model.has_dual() ? "Primal vs dual convergence on " : "Primal convergence on ") + model.summary();
  res.parameters.emplace_back("graph", graph);
  res.parameters.emplace_back("model", model.summary());
  if (model.is_homogeneous()) {
    res.parameters.emplace_back("s", number_text(model.s(), 10));
    res.parameters.emplace_back("sigma", number_text(model.sigma(), 10));
  }
  res.parameters.emplace_back("seed", std::to_string(settings.seed));
  res.parameters.emplace_back("threads_requested", std::to_string(settings.threads));
  res.parameters.emplace_back("lockstep", "1");
  detail::add_settings_parameters(res, settings);
  const detail::Stopwatch exact_clock;
  const Eigen::MatrixXd target = exact_target(model, max_full_nodes);
  res.timings.emplace_back("exact", exact_clock.seconds());
  detail::single_model_convergence(res, model, target, settings, progress);
  return detail::finish(std::move(res), total);
}

}  // namespace dualgibbs
