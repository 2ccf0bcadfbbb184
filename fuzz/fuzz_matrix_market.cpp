// libFuzzer target: the Matrix Market reader.
#include "fuzz_common.hpp"

#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const dualgibbs::LoadedGraph lg = dualgibbs::read_matrix_market(in, "fuzz", dualgibbs::fuzz::limits());
    dualgibbs::fuzz::check_graph(lg.graph);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
