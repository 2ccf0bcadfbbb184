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
/// threads divided by the chain group's members on this machine (chain_group.hpp: unbound ranks share the cores),
/// and at least 1. std::thread::hardware_concurrency() alone would give every rank all the machine's threads.
/// \return the number of threads, >= 1
DUALGIBBS_EXPORT unsigned available_threads() noexcept;

/// Caps the threads the library's estimators start on the calling thread (the helper threads of the moments'
/// rank-k updates, the Woodbury products and the validation's lanes: estimation/) for the scope's lifetime; the
/// previous cap is restored after. `threads` = 0 leaves the cap as it is; nested caps take the smaller. Without a
/// cap the estimators use available_threads(). The
/// numbers do not depend on it: every task is a fixed piece of work. The experiments install their `threads`
/// option this way, so `--threads 1` runs on one core (an MPI rank with `--threads 1` does not compete with its
/// neighbour for the second core). The samplers' own threads are EnsembleOptions::threads.
class DUALGIBBS_EXPORT ScopedThreadLimit {
 public:
  /// Caps the calling thread's helper threads at `threads` (0: no change).
  /// \param threads the cap, 0 for none
  explicit ScopedThreadLimit(unsigned threads) noexcept;
  ~ScopedThreadLimit();
  ScopedThreadLimit(const ScopedThreadLimit&) = delete;
  ScopedThreadLimit& operator=(const ScopedThreadLimit&) = delete;

 private:
  unsigned m_previous;
};

/// The calling thread's cap on the threads an estimator may use, counting itself (ScopedThreadLimit); 0 = no cap.
/// \return the cap, or 0 for none
DUALGIBBS_EXPORT unsigned thread_limit() noexcept;

}  // namespace dualgibbs
