// libFuzzer target: the --graph spec parser and the generators behind it (file: specs are skipped: the
// fuzzer must not open arbitrary paths).
#include "fuzz_common.hpp"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64) return 0;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  if (spec.rfind("file", 0) == 0) return 0;
  try {
    const dualgibbs::LoadedGraph lg = dualgibbs::load_graph(spec, 1, dualgibbs::fuzz::limits());
    dualgibbs::fuzz::check_graph(lg.graph);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
