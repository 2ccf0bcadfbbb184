#pragma once
/// \file mpi.hpp
/// Ensembles over MPI ranks with the same bits as one process (installed only in builds with DUALGIBBS_WITH_MPI;
/// link `dualgibbs::mpi`). Not included by dualgibbs.hpp, so programs that do not use MPI never see `mpi.h`.
///
/// Every rank runs the same program on the same input. mpi::run_ensemble() gives each rank a contiguous share of the
/// lock-step blocks of chains and runs it with the rank's threads as run_ensemble() does; at every checkpoint the
/// states are gathered in chain order, so the observer, called on *every* rank, sees exactly the matrix of a
/// one-process run with the same seed, for any number of ranks and threads. To share the estimators' work too
/// (GroupedMoments, CovarianceErrorTracker, FlowControlVariate: their per-group and per-chain work split over the
/// ranks, chain_group.hpp), or a whole program section of several calls, create an mpi::Group and pass it
/// explicitly: EnsembleOptions::group to run_ensemble(), an Execution (core/execution.hpp) to the estimators.
///
/// All ranks must make the same calls in the same order (they are collective). An exception on one rank ends the
/// call on every rank (ChainGroup::settle()); nothing hangs.
///
/// \code
/// MPI_Init(&argc, &argv);
/// {
///   dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
///   dualgibbs::EnsembleOptions opt;
///   opt.chains = 1000; opt.sweeps = 50; opt.threads = 1;
///   dualgibbs::mpi::run_ensemble(MPI_COMM_WORLD, model, dualgibbs::Domain::Dual, opt,
///                                [](const dualgibbs::Checkpoint& cp) { /* cp.states: all 1000 chains */ });
/// }
/// MPI_Finalize();
/// \endcode

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include <mpi.h>

#include <string>
#include <vector>

namespace dualgibbs::mpi {

/// A ChainGroup over the ranks of an MPI communicator (a duplicate of it, so the library's messages never mix
/// with the caller's). MPI must be initialized before and finalized after the object's lifetime; the library
/// calls MPI only from the thread that made the collective call (MPI_THREAD_FUNNELED suffices).
class Group final : public ChainGroup {
 public:
  /// Duplicates `comm` (collective over comm). \throws std::runtime_error if MPI is not initialized or fails.
  /// \param comm the communicator whose ranks form the group
  explicit Group(MPI_Comm comm);
  ~Group() override;
  int rank() const noexcept override { return m_rank; }
  int size() const noexcept override { return m_size; }
  int local_size() const noexcept override { return m_local_size; }

 protected:
  int lowest_failure(bool failed) override;
  void broadcast(int root, int& code, std::string& text) override;
  void gather_items(const double* mine, double* all, const std::vector<std::size_t>& counts, std::size_t unit) override;
  void exchange_items(const double* send, double* recv, const std::vector<std::size_t>& counts,
                      std::size_t unit) override;
  /// An MPI distributed-graph communicator over the halo neighbours (MPI_Dist_graph_create_adjacent, no reordering).
  /// \param neighbors the neighbour ranks, increasing
  void declare_halo(const std::vector<int>& neighbors) override;
  /// One MPI_Ineighbor_alltoallv on the halo communicator: only the neighbours' items move.
  /// \param send the items to send, grouped by neighbour
  /// \param send_counts the items for each neighbour
  /// \param recv where the received items go, grouped by neighbour
  /// \param recv_counts the items from each neighbour
  /// \param unit doubles per item
  void exchange_halo(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                     const std::vector<std::size_t>& recv_counts, std::size_t unit) override;

 private:
  MPI_Comm m_comm = MPI_COMM_NULL;
  MPI_Comm m_halo_comm = MPI_COMM_NULL;  // the halo neighbours' topology (declare_halo)
  int m_rank = 0;
  int m_size = 1;
  int m_local_size = 1;
};

/// run_ensemble(model, domain, options, observe, scheme) over the ranks of `comm` (collective; options.group is
/// replaced by a Group over `comm`): the observer is called on every rank with the states of all chains in chain
/// order, and the checkpoints and the statistics are bitwise identical to a one-process run. The observer's estimator
/// calls run on each rank alone (the same numbers); to share them, use a Group of your own (above).
/// EnsembleOptions::threads is per rank. EnsembleStats: seconds is the slowest rank's, cpu_seconds the sum over
/// ranks, updates those of all chains. \throws what run_ensemble() throws, on every rank (ChainGroup::settle()).
/// \param comm the communicator whose ranks share the chains
/// \param model the model
/// \param domain the domain to sample
/// \param options chains, sweeps, seed, threads per rank, checkpoints, start
/// \param observe called on every rank at every checkpoint (may be empty)
/// \param scheme the sweep scheme (default: the Gibbs scan options.scan)
/// \return the run's totals over all ranks
EnsembleStats run_ensemble(MPI_Comm comm, const Model& model, Domain domain, const EnsembleOptions& options,
                           const Observer& observe, const SchemeOptions& scheme = SchemeOptions());

/// run_partitioned(model, domain, options, observe, group) over the ranks of `comm` (collective): every chain's graph
/// cut by METIS over the ranks (rank r holds part r and its ghost layer), the colour-ordered sweep with one
/// neighbourhood all-to-all per colour class (MPI_Ineighbor_alltoallv on a distributed-graph communicator), and the
/// observer called on every rank with the states of a one-process colour-ordered run, bitwise, for any partition
/// (sampling/partition.hpp).
/// \param comm the communicator whose ranks share the graph
/// \param model the model (held whole by every rank)
/// \param domain the domain to sample (primal or dual)
/// \param options chains, sweeps, seed, checkpoints, start (constant or given), noise, lockstep
/// \param observe called on every rank at every checkpoint (may be empty)
/// \param partition the rank of every node, the same on every rank (empty: partition_graph())
/// \param share if not null, receives this rank's share
/// \return the run's totals over all ranks
/// \throws what run_partitioned() throws, on every rank.
EnsembleStats run_partitioned(MPI_Comm comm, const Model& model, Domain domain, const EnsembleOptions& options,
                              const Observer& observe, const std::vector<int>& partition = {},
                              GraphShare* share = nullptr);

}  // namespace dualgibbs::mpi
