// The converge use case (api/converge.hpp).
#include <dualgibbs/api/converge.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include "api/distribution.hpp"

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {
namespace {

// The settings that do not depend on the model, checked in the command's order.
ConvergenceSettings settings(const ConvergeOptions& o, std::uint64_t seed, const Execution& execution) {
  ConvergenceSettings cs;
  cs.chains = o.chains;
  cs.sweeps = o.sweeps;
  cs.checkpoint_every = o.every;
  cs.scan = scan_order(o.scheme.scan);
  cs.init = parse_initial_state(o.init);
  if (cs.init == InitialState::Given)
    throw std::invalid_argument("converge: --init must be constant or random (given states are for the library)");
  cs.init_value = o.init_value;
  if (o.init_scale != 1.0 && cs.init != InitialState::Random)
    throw std::invalid_argument("converge: --init-scale applies only with --init random");
  cs.init_scale = o.init_scale;
  cs.seed = seed;
  cs.threads = execution.threads;
  cs.group = execution.group;
  cs.control_variate = o.control_variate;
  detail::check_distribution("converge", o.distribute, o.partition);
  if (o.distribute == "graph") {
    if (o.scheme.scan != "colored")
      throw std::invalid_argument(
          "converge: --distribute graph runs the colour-ordered sweep of gibbs, ssor or cheby-ssor (add --scan "
          "colored)");
    cs.split_graph = true;
  }
  if (o.every < 1) throw std::invalid_argument("converge: --every must be at least 1");
  if (o.full_max < 1) throw std::invalid_argument("converge: --full-max must be at least 1");
  return cs;
}

// Both domains' schemes: one choice, each domain's own spectrum.
void set_schemes(ConvergenceSettings& cs, const ConvergeOptions& o, const Model& model, unsigned threads) {
  const SchemeChoice& s = o.scheme;
  if (parse_scheme_kind(s.scheme) != SchemeKind::Gibbs || s.scan == "colored") {
    if (s.lambda_min || s.lambda_max)
      throw std::invalid_argument(
          "converge: --lambda-min and --lambda-max would apply to both domains; converge computes each domain's "
          "spectrum itself");
    cs.scheme_primal = make_scheme(s, threads, model, Domain::Primal, "converge");
    if (model.has_dual()) cs.scheme_dual = make_scheme(s, threads, model, Domain::Dual, "converge");
  } else {
    make_scheme(s, model, Domain::Primal, "converge");  // refuses omega with gibbs
  }
}

// The `dualgibbs converge` line of the same run (the record's `command`).
std::string command_line(const ConvergeOptions& o, const ConvergenceSettings& cs, const ModelSource& source) {
  std::ostringstream cmd;
  cmd << "dualgibbs converge " << model_arguments(source) << " --seed " << source.seed << " --chains " << o.chains
      << " --sweeps " << o.sweeps << " --every " << o.every << " --scan " << o.scheme.scan << " --init " << o.init;
  if (cs.scheme_primal.kind != SchemeKind::Gibbs && cs.scheme_primal.kind != SchemeKind::Colored) {
    cmd << " --scheme " << o.scheme.scheme;
    if (o.scheme.omega) cmd << " --omega " << *o.scheme.omega;
  }
  if (o.distribute == "graph") cmd << " --distribute graph --partition " << o.partition;
  return cmd.str();
}

}  // namespace

ExperimentRun converge(const Model& model, const ConvergeOptions& options, const ModelSource& source,
                       const Execution& execution) {
  ConvergenceSettings cs = settings(options, source.seed, execution);
  set_schemes(cs, options, model, resolved_threads(execution));
  if (cs.split_graph && execution.group && options.partition == "ranges")
    cs.partition = partition_ranges(model.num_nodes(), execution.group->size());
  ExperimentRun run;
  const auto t0 = std::chrono::steady_clock::now();
  run.result = run_convergence(model, options.name, source_label(source), cs, options.full_max, execution.progress);
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string line = options.command_line.empty() ? command_line(options, cs, source) : options.command_line;
  run.record = experiment_record(run.result, run.wall_seconds, line, execution);
  return run;
}

ExperimentRun converge(const ModelSource& source, const ConvergeOptions& options, const Execution& execution) {
  (void)settings(options, source.seed, execution);  // the options are checked before the model is read
  if (source.obs_file)
    throw std::invalid_argument(
        "converge: --obs-file does not apply: the error curves are of covariances, which the mean does not change "
        "(sample and validate test draws of the posterior)");
  return converge(load_model(source, false, execution.group).model, options, source, execution);
}

}  // namespace dualgibbs::api
