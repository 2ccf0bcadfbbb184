// The service layer's shared pieces (api/common.hpp).
#include <dualgibbs/api/common.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/version.hpp>

#include "api/digest.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dualgibbs::api {

GraphSpec source_spec(const ModelSource& source) {
  if (!source.precision_file) return parse_graph_spec(source.graph);
  GraphSpec spec;
  spec.family = GraphFamily::File;
  spec.path = *source.precision_file;
  spec.text = source_label(source);
  return spec;
}

std::string source_label(const ModelSource& source) {
  return source.precision_file ? "precision:" + *source.precision_file : source.graph;
}

std::string model_arguments(const ModelSource& source) {
  std::ostringstream os;
  if (source.precision_file)
    os << "--precision " << *source.precision_file;
  else
    os << "--graph " << source.graph << " --s " << source.s << " --sigma " << source.sigma;
  return os.str();
}

namespace {

Model model_of(const ModelSource& source, GraphSpec& spec) {
  if (source.precision_file) {
    if (source.node_file)
      throw std::invalid_argument("--node-file does not apply with --precision: the matrix defines the whole model");
    spec = source_spec(source);
    return Model::from_precision(read_precision_matrix(*source.precision_file));
  }
  check_standard_deviation(source.s, "s");  // the parameters before the spec, as load_model() checks them
  check_standard_deviation(source.sigma, "sigma");
  spec = parse_graph_spec(source.graph);
  return dualgibbs::load_model(spec, source.s, source.sigma, source.node_file, source.seed);
}

}  // namespace

LoadedModel load_model(const ModelSource& source, bool observations, ChainGroup* group) {
  if (source.obs_file && source.canonical_file)
    throw std::invalid_argument("--obs-file and --canonical both give the model's mean: give one of them");
  GraphSpec spec;
  Model model = model_of(source, spec);
  LoadedModel loaded{std::move(model), std::move(spec), 0};
  if (observations && source.obs_file) {
    if (loaded.model.given_precision())
      throw std::invalid_argument(
          "--obs-file does not apply with --precision: a precision matrix does not say which part of Q the "
          "observations' noise is; give the canonical vector h with --canonical");
    Observations obs = read_observations(*source.obs_file, loaded.model.num_nodes());
    loaded.observed = obs.observed;
    loaded.model.set_observations(std::move(obs.z));
  }
  if (observations && source.canonical_file)
    loaded.model.set_canonical_vector(read_canonical_vector(*source.canonical_file, loaded.model.num_nodes()));
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
  if (source.precision_file) {
    j["precision_file"] = *source.precision_file;
  } else {
    j["graph"] = source.graph;
    j["s"] = source.s;
    j["sigma"] = source.sigma;
  }
  if (source.node_file) j["node_file"] = *source.node_file;
  if (source.obs_file) j["obs_file"] = *source.obs_file;
  if (source.canonical_file) j["canonical_file"] = *source.canonical_file;
  return j;
}

std::uint64_t model_digest(const Model& model) noexcept {
  std::uint64_t h = detail::kFnv1aStart;
  auto bytes = [&h](const void* data, std::size_t n) { h = detail::fnv1a(h, data, n); };
  const Graph& g = model.graph();
  const std::int64_t sizes[3] = {g.num_nodes(), g.num_edges(), model.canonical_vector().size()};
  bytes(sizes, sizeof sizes);
  for (const Edge& e : g.edges()) bytes(&e, sizeof e);
  if (model.given_precision()) {  // the matrix itself (its values define the model; the split follows from them)
    const SparseMatrix q = model.primal_precision();
    bytes(q.outerIndexPtr(), sizeof(int) * static_cast<std::size_t>(q.outerSize() + 1));
    bytes(q.innerIndexPtr(), sizeof(int) * static_cast<std::size_t>(q.nonZeros()));
    bytes(q.valuePtr(), sizeof(double) * static_cast<std::size_t>(q.nonZeros()));
  } else {
    bytes(model.node_variances().data(), sizeof(double) * static_cast<std::size_t>(model.node_variances().size()));
    bytes(model.edge_variances().data(), sizeof(double) * static_cast<std::size_t>(model.edge_variances().size()));
    for (Index e = 0; e < g.num_edges() && !model.unit_incidence(); ++e) {
      const double w[2] = {model.head_weight(e), model.tail_weight(e)};
      bytes(w, sizeof w);
    }
  }
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
