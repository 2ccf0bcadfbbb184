#pragma once
/// \file execution.hpp
/// How a library call runs: on which processes (a chain group) and with how many threads. The caller passes it
/// explicitly, in the options of the call (EnsembleOptions::group, the experiments' `group` and `threads`) or as a
/// parameter (the estimators' collective steps); the library keeps no execution state of its own, per thread or
/// per process.
///
/// The default, Execution{}, is this process alone (a group of one) with the threads it may use: plain C++ programs
/// and tests never mention MPI. With a group of two or more members, a call that takes an Execution is collective:
/// every member makes it, in the same order (chain_group.hpp), and its results are bitwise those of one process.
///
/// \code
/// dualgibbs::GroupedMoments alone(draws, 8, dualgibbs::MomentKind::Full);  // this process, its threads
/// dualgibbs::Execution one_thread;
/// one_thread.threads = 1;
/// dualgibbs::GroupedMoments on_one_core(draws, 8, dualgibbs::MomentKind::Full, one_thread);
/// \endcode

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/machine.hpp>

namespace dualgibbs {

/// The processes and threads of one call. Cheap to copy; it refers to the group, which must outlive the calls.
struct Execution {
  /// Threads the call may run on, counting the calling thread (the estimators' helper threads; the samplers'
  /// threads are EnsembleOptions::threads). 0 = available_threads(group). The numbers never depend on it.
  unsigned threads = 0;
  /// The processes sharing the work (MPI ranks), or null for this process alone. A group of one member is the
  /// same as null.
  ChainGroup* group = nullptr;

  /// The group if it has two or more members (the call is then collective), else null.
  /// \return the shared group, or nullptr
  ChainGroup* shared() const noexcept { return group && group->size() > 1 ? group : nullptr; }
  /// The threads a call may start, counting itself: available_threads(shared()), at most `threads` when set.
  /// \return the thread budget, >= 1
  unsigned thread_budget() const noexcept {
    const unsigned available = available_threads(shared());
    return threads > 0 && threads < available ? threads : available;
  }
  /// This execution in this process alone: for a member's own work on its own data (e.g. the chains a local
  /// observer is shown, EnsembleOptions::local_cuts), computed as in one process, making no collective.
  /// \return the same threads, without the group
  Execution alone() const noexcept { return Execution{threads, nullptr}; }
};

}  // namespace dualgibbs
