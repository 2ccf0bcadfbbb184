// The reproduce use case and the record of an experiment (api/reproduce.hpp).
#include <dualgibbs/api/reproduce.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/version.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs::api {
namespace {

Record rates_record(const std::vector<RateComparison>& rates) {
  Record out = Record::array();
  for (const auto& c : rates) {
    Record x;
    x["label"] = c.label;
    x["fitted_from"] = c.fitted_from;
    x["predicted_by"] = c.predicted_by;
    x["predicted_neg_log_rate"] = number(c.predicted);
    x["closed_form_neg_log_rate"] = number(c.closed_form);
    x["fitted_neg_log_rate"] = number(c.fit.neg_log_rate);
    x["window_first_sweep"] = number(c.fit.first_sweep);
    x["window_last_sweep"] = number(c.fit.last_sweep);
    x["window_points"] = c.fit.points;
    x["relative_disagreement"] = number(c.relative_disagreement());
    if (!c.fit.note.empty()) x["note"] = c.fit.note;
    out.push_back(x);
  }
  return out;
}

Record numbers_record(const std::vector<std::pair<std::string, double>>& values) {
  Record out = Record::object();
  for (const auto& [k, v] : values) out[k] = number(v);
  return out;
}

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

Record experiment_record(const ExperimentResult& r, double wall_seconds, const std::string& command_line,
                         const Execution& execution) {
  Record j;
  j["figure"] = r.name;
  j["title"] = r.title;
  j["version"] = DUALGIBBS_VERSION_STRING;
  j["command"] = command_line;
  Record params = Record::object();
  for (const auto& [k, v] : r.parameters) params[k] = v;
  j["parameters"] = params;
  for (const auto& [k, v] : r.parameters)
    if (k == "seed") j["seed"] = std::stoull(v);
  j["threads"] = {{"requested", execution.threads},
                  {"used", resolved_threads(execution)},
                  {"hardware", std::thread::hardware_concurrency()}};
  j["mpi_ranks"] = execution.group ? execution.group->size() : 1;  // threads are per rank
  j["timings_seconds"] = numbers_record(r.timings);
  j["wall_seconds"] = wall_seconds;
  j["summary"] = numbers_record(r.summary);
  j["rates"] = rates_record(r.rates);
  j["notes"] = r.notes;
  Record cols = r.table.columns();
  if (!r.table.label_column().empty()) cols.insert(cols.begin(), r.table.label_column());
  j["columns"] = cols;
  return j;
}

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
