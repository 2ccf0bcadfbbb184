#pragma once
/// \file machine.hpp
/// What CPU a timing was taken on, how busy the machine was, and how many threads the library may start. Speed claims
/// name the CPU: machines of one kind differ (an Intel core and an AMD Zen 4 run the same AVX-512 code at different
/// speeds), so the benchmarks and `dualgibbs bench --json` print it.
///
/// \code
/// std::printf("# CPU: %s\n", dualgibbs::cpu_description().c_str());
/// // "AMD EPYC (AuthenticAMD, family 25 model 17, avx512f)"
/// \endcode

#include <dualgibbs/export.hpp>

#include <string>

namespace dualgibbs {

class ChainGroup;

/// "model name (vendor, family F model M, widest vector ISA)" from /proc/cpuinfo's first processor: a virtual
/// machine's model name can be as vague as "AMD EPYC", and family/model tell Zen 4 (25/17) from its neighbours.
/// The ISA is "avx512f", "avx2" or "baseline" as the CPU reports it. "unknown" where /proc/cpuinfo is not readable.
/// \return the description, or "unknown"
DUALGIBBS_EXPORT std::string cpu_description();

/// The 1, 5 and 15 minute load averages, "0.52 1.13 1.38" (/proc/loadavg's first three fields), or "" where it is
/// not readable. A timing means something only on an idle machine: the benchmarks print it beside their numbers.
/// \return the three load averages, or ""
DUALGIBBS_EXPORT std::string load_average();

/// The threads `threads = 0` stands for throughout the library and the command: the CPUs the calling thread may
/// run on (its affinity mask, so an MPI rank that Open MPI bound to one core gets 1), at most the machine's hardware
/// threads divided by `group`'s members on this machine when the work is shared over a group of two or more members
/// (chain_group.hpp: unbound ranks share the cores), and at least 1. std::thread::hardware_concurrency() alone would
/// give every rank all the machine's threads. The threads a call may use are passed to it explicitly
/// (Execution::threads, EnsembleOptions::threads; execution.hpp): the library keeps no cap of its own.
/// \param group the members sharing the work, or null for this process alone
/// \return the number of threads, >= 1
DUALGIBBS_EXPORT unsigned available_threads(const ChainGroup* group = nullptr) noexcept;

}  // namespace dualgibbs
