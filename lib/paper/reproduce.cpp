// The reproduce use case (paper/reproduce.hpp).
#include <dualgibbs/paper/reproduce.hpp>

#include <dualgibbs/core/number_text.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::api {
namespace {

std::optional<InitialState> initial_state(const ReproduceOptions& o) {
  std::optional<InitialState> init;
  if (o.init) {
    init = parse_initial_state(*o.init);  // throws std::invalid_argument naming the known starts
    if (*init == InitialState::Given)
      throw std::invalid_argument("reproduce: --init must be constant or random (given states are for the library)");
  }
  if (o.init_value && init != InitialState::Constant)
    throw std::invalid_argument("reproduce: --init-value applies only with --init constant");
  if (o.init_scale && init != InitialState::Random)
    throw std::invalid_argument("reproduce: --init-scale applies only with --init random");
  return init;
}

// The command line that runs the same figure (the record's `command`).
std::string command_line(const std::string& figure, const ReproduceOptions& o, unsigned threads) {
  std::string cmd = "dualgibbs reproduce " + figure + (o.quick ? " --quick" : "");
  if (!o.out.empty()) cmd += " --out " + o.out;
  cmd += " --seed " + std::to_string(o.seed);
  if (o.chains) cmd += " --chains " + std::to_string(o.chains);
  if (o.sweeps) cmd += " --sweeps " + std::to_string(o.sweeps);
  if (threads) cmd += " --threads " + std::to_string(threads);
  if (o.as_published) cmd += " --as-published";
  if (o.init) cmd += " --init " + *o.init;
  if (o.init_value) cmd += " --init-value " + number_text(*o.init_value);
  if (o.init_scale) cmd += " --init-scale " + number_text(*o.init_scale);
  return cmd;
}

}  // namespace

std::vector<std::string> reproduce_figures(const std::string& figure, const ReproduceOptions& options) {
  (void)initial_state(options);
  std::vector<std::string> chosen;
  if (figure == "all") {
    for (const Figure& f : figures()) chosen.push_back(f.name);
  } else {
    chosen = {find_figure(figure).name};  // throws std::invalid_argument naming the known figures
  }
  if (options.chains > 0 && options.chains < kMinSplitHalfChains)
    throw std::invalid_argument("reproduce: --chains must be at least " + std::to_string(kMinSplitHalfChains) +
                                " (two halves of three chains), got " + std::to_string(options.chains));
  return chosen;
}

ExperimentRun reproduce(const std::string& figure, const ReproduceOptions& options, const Execution& execution) {
  if (figure == "all") throw std::invalid_argument("reproduce: run the figures of 'all' one at a time");
  (void)reproduce_figures(figure, options);
  ExperimentOptions eo;
  eo.quick = options.quick;
  eo.seed = options.seed;
  eo.threads = execution.threads;
  eo.group = execution.group;
  eo.chains = options.chains;
  eo.sweeps = options.sweeps;
  eo.as_published = options.as_published;
  eo.init = initial_state(options);
  eo.init_value = options.init_value;
  eo.init_scale = options.init_scale;
  eo.progress = execution.progress;
  ExperimentRun run;
  const auto t0 = std::chrono::steady_clock::now();
  run.result = find_figure(figure).run(eo);
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.record =
      experiment_record(run.result, run.wall_seconds, command_line(figure, options, execution.threads), execution);
  return run;
}

}  // namespace dualgibbs::api
