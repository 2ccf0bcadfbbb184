// The CPU description and load average of core/machine.hpp, from /proc/cpuinfo and /proc/loadavg; the threads.
#include <dualgibbs/core/machine.hpp>

#include <dualgibbs/core/chain_group.hpp>

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <thread>

namespace dualgibbs {

std::string cpu_description() {
  std::ifstream f("/proc/cpuinfo");
  if (!f) return "unknown";
  std::map<std::string, std::string> field;  // the first processor's block ends at the first empty line
  for (std::string line; std::getline(f, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    field[key] = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  if (field.empty()) return "unknown";
  const std::string flags = " " + field["flags"] + " ";
  const char* isa = flags.find(" avx512f ") != std::string::npos ? "avx512f"
                    : flags.find(" avx2 ") != std::string::npos  ? "avx2"
                                                                 : "baseline";
  return field["model name"] + " (" + field["vendor_id"] + ", family " + field["cpu family"] + " model " +
         field["model"] + ", " + isa + ")";
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  if (!(f >> a >> b >> c)) return "";
  return a + " " + b + " " + c;
}

unsigned available_threads(const ChainGroup* group) noexcept {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  unsigned cpus = hardware;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0)  // fails beyond 1024 CPUs: keep all
    cpus = static_cast<unsigned>(CPU_COUNT(&mask));
  if (group && group->size() > 1)
    cpus = std::min(cpus, hardware / static_cast<unsigned>(std::max(1, group->local_size())));
  return std::max(1u, cpus);
}

}  // namespace dualgibbs
