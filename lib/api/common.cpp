// The service layer's shared pieces (api/common.hpp).
#include <dualgibbs/api/common.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/version.hpp>

#include "api/digest.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dualgibbs::api {

LoadedModel load_model(const ModelSource& source, bool observations, ChainGroup* group) {
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
  agree_on_model(loaded.model, group);
  return loaded;
}

unsigned resolved_threads(const Execution& execution) noexcept {
  return execution.threads > 0 ? execution.threads : available_threads(execution.group);
}

Record provenance(const std::string& command, const ModelSource& source, const Execution& execution) {
  Record j;
  j["command"] = command;
  j["version"] = DUALGIBBS_VERSION_STRING;
  j["seed"] = source.seed;
  j["threads"] = resolved_threads(execution);
  j["mpi_ranks"] = execution.group ? execution.group->size() : 1;  // threads are per rank
  j["hardware_threads"] = std::thread::hardware_concurrency();
  j["graph"] = source.graph;
  j["s"] = source.s;
  j["sigma"] = source.sigma;
  if (source.node_file) j["node_file"] = *source.node_file;
  if (source.obs_file) j["obs_file"] = *source.obs_file;
  return j;
}

std::uint64_t model_digest(const Model& model) noexcept {
  std::uint64_t h = detail::kFnv1aStart;
  auto bytes = [&h](const void* data, std::size_t n) { h = detail::fnv1a(h, data, n); };
  const Graph& g = model.graph();
  const std::int64_t sizes[3] = {g.num_nodes(), g.num_edges(), model.canonical_vector().size()};
  bytes(sizes, sizeof sizes);
  for (const Edge& e : g.edges()) bytes(&e, sizeof e);
  bytes(model.node_variances().data(), sizeof(double) * static_cast<std::size_t>(model.node_variances().size()));
  bytes(model.edge_variances().data(), sizeof(double) * static_cast<std::size_t>(model.edge_variances().size()));
  bytes(model.canonical_vector().data(), sizeof(double) * static_cast<std::size_t>(model.canonical_vector().size()));
  return h;
}

void agree_on_model(const Model& model, ChainGroup* group) {
  if (!group || group->size() < 2) return;
  // The digest travels as the bits of a double: the gather copies items, it never computes with them.
  const std::uint64_t mine = model_digest(model);
  double item = 0;
  std::memcpy(&item, &mine, sizeof item);
  std::vector<double> all(static_cast<std::size_t>(group->size()));
  group->all_gather(&item, all.data(), std::vector<std::size_t>(all.size(), 1), 1);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (std::memcmp(&all[r], &all[0], sizeof item) != 0)
      throw std::invalid_argument("the MPI ranks loaded different models (rank " + std::to_string(r) +
                                  "'s differs from rank 0's): every rank must read the same input files");
}

Record number(double v) { return std::isfinite(v) ? Record(v) : Record(nullptr); }

}  // namespace dualgibbs::api
