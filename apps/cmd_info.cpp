// dualgibbs info: sizes, degrees, components and parameters of the model.
#include "cli.hpp"

#include <dualgibbs/model.hpp>

#include <iostream>

namespace dualgibbs::cli {
namespace {

nlohmann::json model_info(const Model& m) {
  const Graph& g = m.graph();
  nlohmann::json j;
  j["nodes"] = g.num_nodes();
  j["edges"] = g.num_edges();
  j["min_degree"] = g.min_degree();
  j["max_degree"] = g.max_degree();
  j["mean_degree"] = 2.0 * g.num_edges() / g.num_nodes();
  j["components"] = g.num_components();
  j["isolated_nodes"] = g.num_isolated();
  j["has_cycles"] = g.has_cycles();
  j["homogeneous"] = m.is_homogeneous();
  if (m.is_homogeneous()) {
    j["s"] = m.s();
    j["sigma"] = m.sigma();
  }
  j["nnz_Q"] = static_cast<std::int64_t>(g.num_nodes()) + 2 * static_cast<std::int64_t>(g.num_edges());
  j["nnz_R"] = m.dual_precision_nonzeros();
  return j;
}

std::function<int()> setup_info(CLI::App& app, CommonOptions& common) {
  app.description("sizes, degrees and components of the model");
  static bool json = false;
  app.add_flag("--json", json, "machine-readable output on stdout");
  return [&common]() {
    const Model m = common.model();
    const nlohmann::json j = model_info(m);
    if (json) {
      print_json(j);
      return 0;
    }
    std::cout << "model: " << m.summary() << "\n";
    std::cout << "  nodes |V|            " << j["nodes"] << "\n"
              << "  edges |E|            " << j["edges"] << "\n"
              << "  degree min/mean/max  " << j["min_degree"] << " / " << j["mean_degree"] << " / " << j["max_degree"] << "\n"
              << "  components           " << j["components"] << (m.graph().num_components() > 1 ? "  (disconnected: spectra are per component)" : "") << "\n"
              << "  isolated nodes       " << j["isolated_nodes"] << "\n"
              << "  cycles               " << (m.graph().has_cycles() ? "yes" : "no (a forest: the dual has no cycle space)") << "\n"
              << "  nnz(Q), nnz(R)       " << j["nnz_Q"] << ", " << j["nnz_R"] << "\n";
    return 0;
  };
}

const Registration reg{{"info", setup_info}};

}  // namespace
}  // namespace dualgibbs::cli
