// The marginals use case (api/marginals.hpp).
#include <dualgibbs/api/marginals.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include "api/distribution.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace dualgibbs::api {
namespace {

// The library's options from the use case's: the method's default, a 1% target unless only a budget is given, and
// the scheme of the primal methods.
MarginalOptions resolve(const Model& model, const MarginalsOptions& c, const ModelSource& source,
                        const Execution& execution) {
  MarginalOptions o;
  o.method = c.method ? parse_marginal_method(*c.method) : MarginalMethod::Auto;
  o.rel_rmse = c.rel_rmse.value_or(c.seconds ? 0.0 : 0.01);
  o.seconds = c.seconds.value_or(0.0);
  if (c.rel_rmse && !(*c.rel_rmse > 0))
    throw std::invalid_argument("marginals: --rel-rmse " + std::to_string(*c.rel_rmse) + " must be > 0");
  if (c.seconds && !(*c.seconds > 0))
    throw std::invalid_argument("marginals: --seconds " + std::to_string(*c.seconds) + " must be > 0");
  if (c.seconds && execution.group && execution.group->size() > 1)
    throw std::invalid_argument(
        "marginals: --seconds is not available under mpirun with more than one rank (the ranks' clocks would "
        "stop them at different sweeps); give --rel-rmse and --max-sweeps");
  o.chains = c.chains;
  o.every = c.every;
  o.burn_in = c.burn_in;
  o.max_sweeps = c.max_sweeps;
  o.degree = c.degree;
  o.lockstep = c.lockstep;
  o.seed = source.seed;
  o.threads = resolved_threads(execution);
  o.group = execution.group;
  detail::check_distribution("marginals", c.distribute, c.partition);
  o.split_graph = c.distribute == "graph";
  if (o.split_graph && execution.group && execution.group->size() > 1 && c.partition == "ranges")
    o.partition = partition_ranges(model.num_nodes(), execution.group->size());
  SchemeChoice s = c.scheme;
  if (o.split_graph) s.scan = "colored";  // a split graph sweeps in colour order
  if (o.method == MarginalMethod::Primal || o.method == MarginalMethod::PrimalCv ||
      o.method == MarginalMethod::RbmcGibbs)
    o.scheme = make_scheme(s, model, Domain::Primal, "marginals");
  else if (s.scheme != "gibbs" || s.omega || s.lambda_min || s.lambda_max)
    throw std::invalid_argument(std::string("marginals: --scheme, --omega, --lambda-min and --lambda-max apply to ") +
                                "--method primal, primal-cv and rbmc-gibbs, not " + to_string(o.method));
  if (o.split_graph && o.scheme.kind == SchemeKind::Gibbs) {
    o.scheme.kind = SchemeKind::Colored;
    o.scheme.threads = o.threads;
  }
  if (execution.progress) {
    const auto progress = execution.progress;
    o.progress = [progress](double f) { progress("marginals", f); };
  }
  return o;
}

Record marginals_record(const Model& model, const MarginalsResult& res, const ModelSource& source,
                        const Execution& execution, Index observed) {
  const MarginalResult& r = res.estimate;
  const MarginalOptions& o = res.options;
  const bool bracket = r.lower.size() == r.estimate.size();
  Record j = provenance("marginals", source, execution);
  j["method"] = to_string(r.method);
  add_scheme_record(j, o.scheme);
  j["nodes"] = model.num_nodes();
  j["edges"] = model.num_edges();
  j["estimate_mean"] = r.estimate.mean();
  j["rel_se_rms"] = r.rel_se_rms;
  j["target_rel_rmse"] = o.rel_rmse;
  j["budget_seconds"] = o.seconds;
  j["reached_target"] = r.reached_target;
  j["seconds"] = r.seconds;
  j["sweeps"] = r.sweeps;
  j["burn_in"] = r.burn_in;
  j["chains"] = r.chains;
  j["lockstep"] = o.lockstep;
  j["samples"] = r.samples;
  j["degree"] = r.degree;
  j["gap_ratio_rms"] = r.gap_ratio_rms;
  j["pilot_gap_ratio"] = r.pilot_gap_ratio;
  j["bracket_rel_width_rms"] =
      bracket && r.upper.allFinite()
          ? Record(std::sqrt(((r.upper - r.lower).array() / r.estimate.array()).square().mean()))
          : Record(nullptr);
  if (r.choice.automatic) {  // the automatic method's predictions (CPU seconds of one thread; null: none made)
    j["auto_reason"] = r.choice.reason;
    j["auto_exact_seconds"] = number(r.choice.exact_seconds);
    j["auto_probing_seconds"] = number(r.choice.probing_seconds);
    j["auto_sampling_seconds"] = number(r.choice.sampling_seconds);
  }
  if (res.mean) add_posterior_mean_record(j, *res.mean, observed);
  return j;
}

}  // namespace

MarginalsResult marginals(const Model& model, const MarginalsOptions& options, const ModelSource& source,
                          const Execution& execution, Index observed) {
  MarginalsResult res;
  res.options = resolve(model, options, source, execution);
  if (model.has_mean()) res.mean = solve_posterior_mean(model, options.mean);
  res.estimate = estimate_marginal_variances(model, res.options);
  res.record = marginals_record(model, res, source, execution, observed);
  return res;
}

MarginalsResult marginals(const ModelSource& source, const MarginalsOptions& options, const Execution& execution) {
  // With observations the variances are still those of the prior's Q (the mean does not change them); the
  // posterior mean is solved beside them.
  const LoadedModel loaded = load_model(source, true, execution.group);
  return marginals(loaded.model, options, source, execution, loaded.observed);
}

}  // namespace dualgibbs::api
