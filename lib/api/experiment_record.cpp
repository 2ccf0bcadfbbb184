// The record of an experiment's result (api/experiment_record.hpp).
#include <dualgibbs/api/experiment_record.hpp>
#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/version.hpp>

#include <string>
#include <thread>
#include <utility>
#include <vector>

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

}  // namespace dualgibbs::api
