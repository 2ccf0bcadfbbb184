// libFuzzer target: the node-file reader for a graph of 1000 nodes.
#include "fuzz_common.hpp"

#include <cmath>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto s = dualgibbs::read_node_file(in, 1000, "fuzz");
    if (s.size() != 1000) std::abort();
    for (double x : s)
      if (!std::isnan(x) && !(x > 0.0 && std::isfinite(x))) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
