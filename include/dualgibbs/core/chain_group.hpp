#pragma once
/// \file chain_group.hpp
/// Processes that share the chains of one ensemble (MPI ranks), behind an interface free of MPI.
///
/// A ChainGroup is the set of K processes ("members", numbered 0..K-1) that run one program together, each the
/// same code on the same input (SPMD). The library never finds a group by itself: a call shares its work over a
/// group only when the caller passes one (EnsembleOptions::group, an Execution given to an estimator, the
/// experiments' `group` option; execution.hpp). Given a group of two or more members,
///  - run_ensemble() gives every member a contiguous share of the lock-step blocks (the same blocks as in one
///    process, lockstep_blocks()), and at every checkpoint gathers the chain states in chain order, so every
///    member's observer sees exactly the matrix a single process would see (or, with EnsembleOptions::local_cuts,
///    shows each member only its share, which the estimators reduce to sums: GroupedMoments over a share);
///  - the estimators' per-group and per-chain work (GroupedMoments' group sums, FlowControlVariate's per-chain
///    terms) is split over the members the same way and gathered in group (chain) order. Each item is computed by
///    the same code on one member and then copied, and every combination of items runs in a fixed order on every
///    member, so the results are bitwise identical to a one-process run for any K and any thread count (on
///    members of one CPU type: the BLAS picks its kernels per CPU). Sums are never formed by the transport's own
///    reductions, whose order is unspecified.
///
/// Every call that moves data is *collective*: all members must make it, in the same order. Errors: each
/// collective first settles whether a member failed (settle()): a member that threw rethrows its own exception, the
/// others throw the first failing member's message (as std::invalid_argument if that was one, else
/// std::runtime_error), so an error on one member ends every member, with one message, and never a hang.
///
/// The MPI implementation is dualgibbs::mpi::Group (dualgibbs/sampling/mpi.hpp, in builds with
/// DUALGIBBS_WITH_MPI); this header and the rest of the library do not include MPI.

#include <dualgibbs/export.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

/// The members sharing an ensemble's chains: rank, size and the collectives the library needs.
class DUALGIBBS_EXPORT ChainGroup {
 public:
  ChainGroup() = default;
  virtual ~ChainGroup();
  ChainGroup(const ChainGroup&) = delete;
  ChainGroup& operator=(const ChainGroup&) = delete;

  /// This member's number, 0 <= rank() < size().
  /// \return this member's rank
  virtual int rank() const noexcept = 0;
  /// Number of members K >= 1.
  /// \return the group's size K
  virtual int size() const noexcept = 0;
  /// Number of members on this machine (they share its cores: the estimators' helper threads are the hardware
  /// threads divided by it). Default 1.
  /// \return the members on this machine, >= 1
  virtual int local_size() const noexcept { return 1; }

  /// Collective: every member contributes counts[rank()] items of `unit` doubles at `mine`; on return `all` holds
  /// every member's items in rank order (sum of counts times `unit` doubles). `mine` may point at this member's own
  /// place inside `all`. Settles errors first (see settle()).
  /// \param mine this member's counts[rank()] items
  /// \param all where every member's items go, in rank order
  /// \param counts the number of items of each member (size() entries)
  /// \param unit doubles per item
  /// \throws std::invalid_argument if counts.size() != size(); whatever settle() throws.
  void all_gather(const double* mine, double* all, const std::vector<std::size_t>& counts, std::size_t unit);
  /// The same, settling this member's outcome `error` first (one settlement instead of settle() + all_gather()).
  /// \param error this member's outcome (null = success)
  /// \param mine this member's counts[rank()] items
  /// \param all where every member's items go, in rank order
  /// \param counts the number of items of each member (size() entries)
  /// \param unit doubles per item
  void all_gather(const std::exception_ptr& error, const double* mine, double* all,
                  const std::vector<std::size_t>& counts, std::size_t unit);

  /// Collective: every member sends blocks of items of `unit` doubles to every member (an all-to-all).
  /// counts[r * size() + s] is the number of items member r sends to member s (the same matrix on every member).
  /// `send` holds this member's items for member 0, then for member 1, ...; on return `recv` holds the items sent
  /// to this member by member 0, then by member 1, ... (the sum of column rank() of counts, times `unit` doubles).
  /// Copies only. Settles this member's outcome `error` first, as all_gather() does.
  /// \param error this member's outcome (null = success)
  /// \param send this member's items, grouped by destination member
  /// \param recv where the items sent to this member go, grouped by source member
  /// \param counts the size() x size() item counts, row = sender, column = receiver
  /// \param unit doubles per item
  /// \throws std::invalid_argument if counts.size() != size() * size(); whatever settle() throws.
  void all_to_all(const std::exception_ptr& error, const double* send, double* recv,
                  const std::vector<std::size_t>& counts, std::size_t unit);
  /// Collective: declares the members this one exchanges halos with (halo_exchange()), in increasing rank order,
  /// each different from rank(). The relation must be symmetric (s lists r iff r lists s). A transport may build a
  /// communicator of its own for it (dualgibbs::mpi::Group: an MPI distributed-graph topology). Empty by default.
  /// \param neighbors the neighbour members, increasing
  /// \throws std::invalid_argument for a list that is not increasing, names this member or a rank out of range.
  void set_halo_neighbors(const std::vector<int>& neighbors);
  /// The members given to set_halo_neighbors().
  /// \return the neighbour members, increasing
  const std::vector<int>& halo_neighbors() const noexcept { return m_halo; }
  /// Collective over all members: each sends send_counts[j] items of `unit` doubles to halo_neighbors()[j] (from
  /// `send`, neighbour by neighbour) and receives recv_counts[j] items from it (into `recv`, likewise): a partitioned
  /// graph's ghost update (sampling/partition.hpp). Every member must call it, with or without neighbours, and the
  /// counts of a pair must agree (what r sends s is what s receives from r). No settlement: the caller settles.
  /// \param send the items to send, grouped by neighbour
  /// \param send_counts the items for each neighbour (halo_neighbors().size() entries)
  /// \param recv where the received items go, grouped by neighbour
  /// \param recv_counts the items from each neighbour
  /// \param unit doubles per item
  /// \throws std::invalid_argument for count lists of another length than the neighbours.
  void halo_exchange(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                     const std::vector<std::size_t>& recv_counts, std::size_t unit);
  /// Collective: `error` is this member's outcome (null = success). Returns if no member failed. Otherwise a
  /// failed member rethrows its own exception and every other member throws the message of the lowest-numbered
  /// failed member, as std::invalid_argument if that member's exception was one, else as std::runtime_error.
  /// \param error this member's outcome (null = success)
  void settle(const std::exception_ptr& error);

  /// Collective: runs `work` and settles its outcome. An exception that a collective inside `work` already settled
  /// passes through without a second settlement (so nested sections stay matched across members).
  /// \param work the section to run on every member
  void run(const std::function<void()>& work);

  /// True if the last collective settled a failure (every member is then unwinding the same error): a caller that
  /// catches it must not settle it again.
  /// \return true while a settled failure propagates
  bool failure_settled() const noexcept { return m_unwinding; }
  /// Forgets a settled failure that the caller caught and handled (a section starts afresh).
  void clear_settled() noexcept { m_unwinding = false; }

 protected:
  /// Collective: the lowest rank of a member that passed failed = true, or size() if none did.
  /// \param failed whether this member failed
  /// \return the lowest failed rank, or size()
  virtual int lowest_failure(bool failed) = 0;
  /// Collective: member `root`'s `code` and `text` are copied to every member.
  /// \param root the rank whose values are sent
  /// \param code the code: sent from `root`, received on every other member
  /// \param text the text: sent from `root`, received on every other member
  virtual void broadcast(int root, int& code, std::string& text) = 0;
  /// Collective: as all_gather(), without the settlement.
  /// \param mine this member's counts[rank()] items
  /// \param all where every member's items go, in rank order
  /// \param counts the number of items of each member (size() entries)
  /// \param unit doubles per item
  virtual void gather_items(const double* mine, double* all, const std::vector<std::size_t>& counts,
                            std::size_t unit) = 0;
  /// Collective: as all_to_all(), without the settlement. The default gathers every member's whole send buffer to
  /// every member (gather_items()) and keeps the blocks sent here: correct for any transport, but it moves size()
  /// times the data; a transport with an all-to-all of its own overrides it (dualgibbs::mpi::Group).
  /// \param send this member's items, grouped by destination member
  /// \param recv where the items sent to this member go, grouped by source member
  /// \param counts the size() x size() item counts, row = sender, column = receiver
  /// \param unit doubles per item
  virtual void exchange_items(const double* send, double* recv, const std::vector<std::size_t>& counts,
                              std::size_t unit);
  /// Collective: set_halo_neighbors() after its checks. The default keeps nothing more.
  /// \param neighbors the neighbour members, increasing
  virtual void declare_halo(const std::vector<int>& neighbors);
  /// Collective: halo_exchange() after its checks. The default gathers every member's send counts and runs
  /// exchange_items() with the whole count matrix (correct for any transport); dualgibbs::mpi::Group overrides it
  /// with a neighbourhood all-to-all that moves the halo only.
  /// \param send the items to send, grouped by neighbour
  /// \param send_counts the items for each neighbour
  /// \param recv where the received items go, grouped by neighbour
  /// \param recv_counts the items from each neighbour
  /// \param unit doubles per item
  virtual void exchange_halo(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                             const std::vector<std::size_t>& recv_counts, std::size_t unit);

 private:
  bool m_unwinding = false;  // an exception settled by the last collective is propagating
  std::vector<int> m_halo;   // the halo neighbours (set_halo_neighbors)
};

/// Member `rank`'s contiguous share [first, last) of `count` items split over `size` members, as evenly as
/// possible (the first count % size members get one more). \throws std::invalid_argument unless
/// 0 <= rank < size.
/// \param count the number of items
/// \param rank the member, 0 <= rank < size
/// \param size the number of members
/// \return the share's first and one-past-last item
DUALGIBBS_EXPORT std::pair<std::size_t, std::size_t> member_share(std::size_t count, int rank, int size);

/// Computes items [0, count) of `unit` doubles each into `out` (count x unit doubles, item-major): over a group of
/// two or more members each member computes its member_share() by `compute(first, last)` and the shares are gathered
/// (collective); with `group` null or of one member, `compute(0, count)` runs here.
/// \param group the members sharing the items, or null for this process alone
/// \param count the number of items
/// \param unit doubles per item
/// \param out count x unit doubles, item-major: the items
/// \param compute writes items [first, last) to out + first * unit
DUALGIBBS_EXPORT void shared_items(ChainGroup* group, std::size_t count, std::size_t unit, double* out,
                                   const std::function<void(std::size_t first, std::size_t last)>& compute);

}  // namespace dualgibbs
