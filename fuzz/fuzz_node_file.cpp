// libFuzzer target: the per-node value readers for a graph of 1000 nodes: the node-file reader (`v s_v`) and the
// observation-file reader (`v z_v`, the same reader with another value check) on the same input.
#include "fuzz_common.hpp"

#include <cmath>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(text);
    const auto s = dualgibbs::read_node_file(in, 1000, "fuzz");
    if (s.size() != 1000) std::abort();
    for (double x : s)
      if (!std::isnan(x) && !(x > 0.0 && std::isfinite(x))) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    std::istringstream in(text);
    const auto z = dualgibbs::read_observation_file(in, 1000, "fuzz");
    if (z.size() != 1000) std::abort();
    for (double x : z)
      if (!std::isnan(x) && !std::isfinite(x)) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
