#pragma once
/// \file machine.hpp
/// What CPU a timing was taken on, and how busy the machine was. Speed claims name the CPU: machines of one kind differ
/// (an Intel core and an AMD Zen 4 run the same AVX-512 code at different speeds), so the benchmarks and `dualgibbs
/// bench --json` print it.
///
/// \code
/// std::printf("# CPU: %s\n", dualgibbs::cpu_description().c_str());
/// // "AMD EPYC (AuthenticAMD, family 25 model 17, avx512f)"
/// \endcode

#include <dualgibbs/export.hpp>

#include <string>

namespace dualgibbs {

/// "model name (vendor, family F model M, widest vector ISA)" from /proc/cpuinfo's first processor: a virtual
/// machine's model name can be as vague as "AMD EPYC", and family/model tell Zen 4 (25/17) from its neighbours.
/// The ISA is "avx512f", "avx2" or "baseline" as the CPU reports it. "unknown" where /proc/cpuinfo is not readable.
DUALGIBBS_EXPORT std::string cpu_description();

/// The 1, 5 and 15 minute load averages, "0.52 1.13 1.38" (/proc/loadavg's first three fields), or "" where it is
/// not readable. A timing means something only on an idle machine: the benchmarks print it beside their numbers.
DUALGIBBS_EXPORT std::string load_average();

}  // namespace dualgibbs
