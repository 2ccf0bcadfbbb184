// libFuzzer target: the edge-list reader, then the model built from what it accepted.
#include "fuzz_common.hpp"

#include <cmath>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    dualgibbs::LoadedGraph lg = dualgibbs::read_edge_list(in, "fuzz", dualgibbs::fuzz::limits());
    dualgibbs::fuzz::check_graph(lg.graph);
    if (lg.edge_sigma.size() != static_cast<std::size_t>(lg.graph.num_edges())) std::abort();
    for (double& s : lg.edge_sigma) {
      if (!std::isnan(s) && !(s > 0.0 && std::isfinite(s))) std::abort();
      if (std::isnan(s)) s = 1.0;
    }
    // The node count is read before the graph is moved into the model (argument order is unspecified).
    const auto num_nodes = static_cast<std::size_t>(lg.graph.num_nodes());
    try {
      dualgibbs::Model m(std::move(lg.graph), std::vector<double>(num_nodes, 1.0), std::move(lg.edge_sigma));
      (void)m.primal_precision();
    } catch (const std::invalid_argument&) {
      // a sigma_e whose square overflows is a legitimate rejection
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
