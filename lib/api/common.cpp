// The service layer's shared pieces (api/common.hpp).
#include <dualgibbs/api/common.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/version.hpp>

#include <cmath>
#include <thread>
#include <utility>

namespace dualgibbs::api {

LoadedModel load_model(const ModelSource& source, bool observations) {
  check_standard_deviation(source.s, "s");  // the parameters before the spec, as load_model() checks them
  check_standard_deviation(source.sigma, "sigma");
  GraphSpec spec = parse_graph_spec(source.graph);
  Model model = dualgibbs::load_model(spec, source.s, source.sigma, source.node_file, source.seed);
  LoadedModel loaded{std::move(model), std::move(spec), 0};
  if (observations && source.obs_file) {
    Observations obs = read_observations(*source.obs_file, loaded.model.num_nodes());
    loaded.observed = obs.observed;
    loaded.model.set_observations(std::move(obs.z));
  }
  return loaded;
}

unsigned resolved_threads(unsigned threads) noexcept { return threads > 0 ? threads : available_threads(); }

Record provenance(const std::string& command, const ModelSource& source, const Execution& execution) {
  Record j;
  j["command"] = command;
  j["version"] = DUALGIBBS_VERSION_STRING;
  j["seed"] = source.seed;
  j["threads"] = resolved_threads(execution.threads);
  j["mpi_ranks"] = execution.group ? execution.group->size() : 1;  // threads are per rank
  j["hardware_threads"] = std::thread::hardware_concurrency();
  j["graph"] = source.graph;
  j["s"] = source.s;
  j["sigma"] = source.sigma;
  if (source.node_file) j["node_file"] = *source.node_file;
  if (source.obs_file) j["obs_file"] = *source.obs_file;
  return j;
}

Record number(double v) { return std::isfinite(v) ? Record(v) : Record(nullptr); }

}  // namespace dualgibbs::api
