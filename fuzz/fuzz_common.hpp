#pragma once
// Shared by the fuzz targets: small caps so that no input can ask for absurd memory, and the rule that
// a reader either returns a valid object or throws std::invalid_argument (anything else is a bug).
#include <dualgibbs/model/io.hpp>

#include <cstdlib>
#include <stdexcept>

namespace dualgibbs::fuzz {

inline ReadLimits limits() {
  ReadLimits l;
  l.max_nodes = 200'000;
  l.max_edges = 200'000;
  return l;
}

// Checks invariants every accepted graph must satisfy; aborts (a fuzzer finding) if one fails.
inline void check_graph(const Graph& g) {
  if (g.num_nodes() <= 0) std::abort();
  std::int64_t degree_sum = 0;
  for (Index v = 0; v < g.num_nodes(); ++v) degree_sum += g.degree(v);
  if (degree_sum != 2 * static_cast<std::int64_t>(g.num_edges())) std::abort();
  for (const Edge& e : g.edges())
    if (e.head == e.tail || e.head < 0 || e.tail < 0 || e.head >= g.num_nodes() || e.tail >= g.num_nodes())
      std::abort();
}

}  // namespace dualgibbs::fuzz
