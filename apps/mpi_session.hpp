#pragma once
// The command under mpirun (docs/mpi.md): MPI set up when the process was started by an MPI launcher, the ranks'
// chain group made for the whole run (passed by main to every subcommand: CommonOptions::group), output on rank 0
// only, and one exit code agreed by all ranks. Without MPI (a build without DUALGIBBS_WITH_MPI, or a plain start)
// there is one rank and nothing changes.
#include <dualgibbs/core/chain_group.hpp>

#include <exception>
#include <functional>
#include <memory>

namespace dualgibbs::cli {

class MpiSession {
 public:
  /// Initializes MPI if the process was started by an MPI launcher (mpirun, srun); on ranks other than 0, standard
  /// output and standard error are silenced (rank 0 alone prints and writes files).
  MpiSession(int& argc, char**& argv);
  /// Finalizes MPI if this session initialized it.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  /// The ranks' chain group when two or more ranks run, else null (one process, or mpirun -np 1).
  ChainGroup* group() const noexcept;

  /// The exit code every rank returns: `code` and `error` are this rank's outcome; if another rank failed, its
  /// message is printed on rank 0 and its code (2 bad input, 1 failure) returned. Collective.
  int finish(int code, const std::exception_ptr& error);

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

/// True on rank 0 (and when there is one process).
bool is_root() noexcept;

/// Runs `work` (writing files) on rank 0 only; every rank learns if it failed (collective over `group`, the
/// session's group, when it is not null).
void on_root(ChainGroup* group, const std::function<void()>& work);

}  // namespace dualgibbs::cli
