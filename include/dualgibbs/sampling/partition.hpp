#pragma once
/// \file partition.hpp
/// One chain's graph split over the members of a chain group (core/chain_group.hpp, e.g. MPI ranks): each member
/// holds its own coordinates and a ghost layer, and the colour-ordered sweep (ColoredSweep, accelerated.hpp) runs
/// class by class with one halo exchange per class. The draws are bitwise those of one process running ColoredSweep
/// with the same seed, for any number of members and any partition (docs/mpi.md, "One graph over ranks").
///
/// - partition_graph(): the coordinates cut into parts by METIS's multilevel k-way partitioning (fewest cut
///   neighbour pairs, parts of equal size within 3%), the same partition on every member.
/// - GraphShare: what one part holds: the principal submatrix of the precision on its own coordinates and their
///   neighbours (the ghosts), each owned row exactly the precision's row; per colour class its own sites with their
///   places in the class (which key their deviates), and the sites it sends to and receives from each neighbour part.
/// - make_dual_share(): the dual domain's share: a part's nodes own the edges whose head they are; the part holds every
///   edge at its nodes (for the tallies x~ = B y~ of its nodes) and the tallies at their other ends.
/// - PartitionedColoredSweep: the sweep scheme of one member (sampler.hpp's scheme concept).
/// - run_partitioned(): an ensemble whose every chain is split over the group.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus3(40, 40, 40), 1.0, 0.1);
/// dualgibbs::EnsembleOptions opt;
/// opt.chains = 8; opt.sweeps = 100;
/// // group: a dualgibbs::mpi::Group over MPI_COMM_WORLD (sampling/mpi.hpp); every rank makes this call.
/// dualgibbs::run_partitioned(model, dualgibbs::Domain::Primal, opt, observe, group);
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/sampler.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dualgibbs {

class ChainGroup;

/// The coordinates of a symmetric sparsity pattern (i and j neighbours when pattern(i, j) != 0, i != j) cut into
/// `parts` parts by METIS_PartGraphKway (edge-cut objective, contiguous parts where the graph allows, a fixed seed:
/// the same partition on every call). parts = 1 puts everything in part 0.
/// \param pattern the n x n symmetric pattern (a precision)
/// \param parts the number of parts, 1 <= parts <= n
/// \return the part of each coordinate, in [0, parts)
/// \throws std::invalid_argument for a non-square pattern or parts outside [1, n]; std::runtime_error if METIS fails.
DUALGIBBS_EXPORT std::vector<int> partition_graph(const SparseMatrix& pattern, int parts);

/// The coordinates cut into `parts` contiguous ranges of nearly equal size (member_share(), core/chain_group.hpp):
/// slabs of a lattice in its natural order. Each colour class then falls into contiguous runs of places per part, so a
/// part draws few deviates it does not use (PartitionedColoredSweep draws whole blocks of ColoredSweep::kBlock places
/// up to its last place in a block), where a METIS partition cuts every block and each part draws nearly all of them.
/// \param n the number of coordinates
/// \param parts the number of parts, 1 <= parts <= n
/// \return the part of each coordinate, in [0, parts)
/// \throws std::invalid_argument for parts outside [1, n].
DUALGIBBS_EXPORT std::vector<int> partition_ranges(Index n, int parts);

/// The neighbour pairs of a pattern that cross parts, over all neighbour pairs (the edge cut as a fraction).
/// \param pattern the symmetric pattern
/// \param part the part of each coordinate
/// \return cut pairs / pairs (0 for a pattern without off-diagonal entries)
DUALGIBBS_EXPORT double cut_fraction(const SparseMatrix& pattern, const std::vector<int>& part);

/// What one part holds of a partitioned precision. Local coordinates are the part's own ones and its ghosts (the
/// other parts' neighbours of its own), numbered in increasing global order, so every owned row keeps the order of
/// its entries and a kernel on the local matrix computes an owned site's update with the bits of the global one.
///
/// A dual share (make_dual_share(), `nodes` not empty) holds edges as its coordinates (the sites y~_e) and no
/// precision: its kernel is DualIncidenceKernel(whole, global, nodes). Its halo lists then name local nodes, whose
/// tallies x~ are exchanged: an edge update changes the tallies at both its ends, and the edges of one colour class
/// share no node, so after each class the one part that updated a node's tally sends it to every part holding it.
struct DUALGIBBS_EXPORT GraphShare {
  int part = 0;                ///< this part
  int parts = 1;               ///< the number of parts
  Index global_dimension = 0;  ///< n, the coordinates of the whole precision
  std::vector<Index> global;   ///< the global coordinate of each local one, increasing
  std::vector<Index> owned;    ///< the local indices of the part's own coordinates, increasing
  SparseMatrix precision;      ///< M[global, global]: the owned rows are M's rows, the ghost rows M's restricted
  Eigen::VectorXd rhs;         ///< h[global] (empty when the precision has no right-hand side)
  std::vector<int> neighbors;  ///< the parts that hold a ghost of an owned coordinate, increasing (symmetric)
  /// Per colour class: the owned sites (local indices) in the order of the class.
  std::vector<std::vector<Index>> class_sites;
  /// Per colour class: the place of each owned site in the class (class order, from 0); ColoredSweep keys the
  /// deviates of place p by block p / kBlock.
  std::vector<std::vector<std::size_t>> class_places;
  /// Per colour class: the owned sites of the class that are ghosts of each neighbour (local indices), neighbour by
  /// neighbour in `neighbors` order, each group in increasing global order.
  std::vector<std::vector<Index>> send_sites;
  /// Per colour class: how many of send_sites go to each neighbour.
  std::vector<std::vector<std::size_t>> send_counts;
  /// Per colour class: the ghosts of the class, grouped by their owner in `neighbors` order, increasing global order
  /// within a group (the order in which the owner sends them).
  std::vector<std::vector<Index>> recv_sites;
  /// Per colour class: how many of recv_sites come from each neighbour.
  std::vector<std::vector<std::size_t>> recv_counts;

  /// Dual share: the global node of each local node (tally entry), increasing: the part's own nodes and their
  /// neighbours. Empty for a primal share.
  std::vector<Index> nodes;
  /// Dual share: the local indices of the part's own nodes, increasing.
  std::vector<Index> owned_nodes;
  /// Dual share: the owner (part) of every edge of the whole graph, the part of its head.
  std::vector<int> edge_owner;
  /// Dual share, once after a state is set: the own nodes' tallies (complete: every edge at an own node is local)
  /// sent to each neighbour holding them (local node indices, grouped by neighbour, increasing within a group).
  std::vector<Index> start_send_sites;
  /// Dual share, once after a state is set: the other local nodes' tallies received from their owners.
  std::vector<Index> start_recv_sites;
  std::vector<std::size_t> start_send_counts;  ///< how many of start_send_sites go to each neighbour
  std::vector<std::size_t> start_recv_counts;  ///< how many of start_recv_sites come from each neighbour
  /// Dual share, for the Chebyshev-SSOR combination (which rebuilds the tallies from the edges): the own edges that
  /// are ghosts of each neighbour (their tails' owners), local edge indices grouped by neighbour, increasing.
  std::vector<Index> edge_send_sites;
  /// Dual share, for the Chebyshev-SSOR combination: the ghost edges, received from their heads' owners.
  std::vector<Index> edge_recv_sites;
  std::vector<std::size_t> edge_send_counts;  ///< how many of edge_send_sites go to each neighbour
  std::vector<std::size_t> edge_recv_counts;  ///< how many of edge_recv_sites come from each neighbour

  /// Ghost coordinates (local minus owned).
  /// \return the number of ghosts
  std::size_t ghosts() const noexcept { return global.size() - owned.size(); }
};

/// Part `me`'s share of a precision cut by `part` into `parts` parts, with the colour classes `classes` of the whole
/// precision (greedy_coloring: independent sets).
/// \param precision the n x n precision M (CSR, full symmetric storage)
/// \param rhs its right-hand side h (n entries), or empty
/// \param classes the colour classes, a partition of 0..n-1 into independent sets of M
/// \param part the part of each coordinate, in [0, parts)
/// \param me the part to build, in [0, parts)
/// \param parts the number of parts
/// \return the share
/// \throws std::invalid_argument for sizes that do not match or parts out of range.
DUALGIBBS_EXPORT GraphShare make_share(const SparseMatrix& precision, const Eigen::VectorXd& rhs,
                                       const std::vector<std::vector<Index>>& classes, const std::vector<int>& part,
                                       int me, int parts);

/// Part `me`'s share of a model's dual domain, its nodes cut by `part` into `parts` parts, with the colour classes of
/// the edges (greedy_edge_coloring: no two edges of a class share a node). The part owns the edges whose head it owns
/// and holds every edge at an own node (the others are ghosts, never updated: they complete its own nodes' initial
/// tallies) and the tallies of the nodes at their ends.
/// \param graph the model's graph
/// \param classes the edges' colour classes, a partition of 0..m-1 into matchings
/// \param part the part of each node, in [0, parts)
/// \param me the part to build, in [0, parts)
/// \param parts the number of parts
/// \return the share
/// \throws std::invalid_argument for sizes that do not match, parts out of range, or a class with two edges at a node.
DUALGIBBS_EXPORT GraphShare make_dual_share(const Graph& graph, const std::vector<std::vector<Index>>& classes,
                                            const std::vector<int>& part, int me, int parts);

/// A lattice model given by its shape: what `path:`, `cycle:`, `grid:`, `torus:` and `torus3:` load with one `s` and
/// one `sigma` (Model(make_torus3(...), s, sigma) and the like), without building its graph.
struct DUALGIBBS_EXPORT LatticeShape {
  std::vector<Index> sides;  ///< 1 to 3 sides; node ids row-major, the last side fastest (as the generators number)
  bool periodic = true;      ///< wrap around (cycle, torus, torus3; sides >= 3) or not (path, grid)
  double s = 1.0;            ///< every node's standard deviation
  double sigma = 0.1;        ///< every edge's standard deviation
};

/// Part `me`'s share of a lattice cut into contiguous id ranges (partition_ranges()), built from the shape alone: the
/// same share as make_share() of the lattice's Model (its Q, greedy_coloring(Q)) gives, bit for bit, in memory of one
/// byte per node (each node's colour, for the places of the part's sites in their classes) plus the part's rows.
/// \param shape the lattice
/// \param me the part, in [0, parts)
/// \param parts the number of parts, 1 to the number of nodes
/// \return the share
/// \throws std::invalid_argument for no or more than 3 sides, a side below 1 (3 when periodic), more nodes than a
///         32-bit index, s or sigma not finite and non-zero, or a part out of range.
DUALGIBBS_EXPORT GraphShare lattice_share(const LatticeShape& shape, int me, int parts);

/// Part `me`'s dual share of a periodic lattice (cycle, torus, torus3) cut into contiguous node ranges, built from the
/// shape alone: the share make_dual_share() gives from the lattice's graph (greedy_edge_coloring, partition_ranges),
/// except edge_owner, which stays empty (the edges of part r are the d-edge ranges of its nodes). Memory: one byte
/// per edge and two per node for the greedy edge colours, plus the part's edges and nodes.
/// \param shape the lattice, periodic
/// \param me the part, in [0, parts)
/// \param parts the number of parts, 1 to the number of nodes
/// \return the share
/// \throws std::invalid_argument as lattice_share(), for a lattice that is not periodic, or more than 2^31 edges.
DUALGIBBS_EXPORT GraphShare lattice_dual_share(const LatticeShape& shape, int me, int parts);

/// The colour-ordered Gibbs sweep of one part (a scheme, sampler.hpp) on the kernel of its local precision: class by
/// class, the part's own sites of the class with the deviates ColoredSweep gives them in one process (block
/// p / kBlock of the class, place p % kBlock within it: the block's lane streams are drawn up to the last owned
/// place), then one halo exchange of the class's values with the neighbour parts (ChainGroup::halo_exchange), so
/// every ghost holds its owner's new value before the next class reads it. All members must sweep the same blocks
/// in the same order (the exchange is collective). The sweep cannot fail: the exchange is settled by the caller.
class DUALGIBBS_EXPORT PartitionedColoredSweep {
 public:
  /// \param share this part's share (kept by pointer: it must outlive the scheme and its copies)
  /// \param group the members holding the other parts (must outlive the scheme)
  PartitionedColoredSweep(const GraphShare& share, ChainGroup& group);

  /// Allocates the deviate and exchange buffers. \throws std::invalid_argument unless n is the local dimension.
  /// \param n the number of local coordinates
  /// \param width the lanes W
  void prepare(Index n, int width);
  /// A state was set: a dual share's first sweep begins with the exchange of the start tallies.
  void reset() noexcept { m_fresh = true; }
  /// The owned sites updated per sweep.
  /// \return the part's own coordinates
  std::size_t site_updates(Index) const noexcept { return m_share->owned.size(); }

  /// One sweep of every lane.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) {
    const GraphShare& s = *m_share;
    // A dual share exchanges tallies, a primal one the sites' values.
    double* halo = s.nodes.empty() ? ctx.z : ctx.tally;
    if (m_fresh && !s.nodes.empty())
      exchange(s.start_send_sites, s.start_send_counts, s.start_recv_sites, s.start_recv_counts, halo, W);
    m_fresh = false;
    for (std::size_t k = 0; k < s.class_sites.size(); ++k) {
      update_class<Kernel, W>(ctx, k);
      exchange(s.send_sites[k], s.send_counts[k], s.recv_sites[k], s.recv_counts[k], halo, W);
    }
  }

 private:
  template <class Kernel, int W>
  void update_class(SweepContext<Kernel, W>& ctx, std::size_t k) {
    const std::vector<Index>& sites = m_share->class_sites[k];
    const std::vector<std::size_t>& places = m_share->class_places[k];
    constexpr std::size_t kBlock = ColoredSweep::kBlock;
    double* block_eps = m_block_eps.data();
    double* eps = m_eps.data();
    for (std::size_t t = 0; t < sites.size();) {
      // The owned sites t..end of one deviate block.
      const std::size_t block = places[t] / kBlock;
      std::size_t end = t;
      while (end < sites.size() && places[end] / kBlock == block) ++end;
      const std::size_t base = block * kBlock, drawn = places[end - 1] - base + 1;
      if (ctx.noise) {
        const std::uint64_t key = ColoredSweep::block_seed(ctx.seed, ctx.sweep, k, block);
        m_streams.clear();
        for (int c = 0; c < W; ++c) m_streams.emplace_back(key, ctx.first_chain + static_cast<std::uint64_t>(c));
        NormalStream::fill_lanes(m_streams.data(), W, drawn, block_eps);
        for (std::size_t s = t; s < end; ++s)
          for (int c = 0; c < W; ++c) eps[(s - t) * W + c] = block_eps[(places[s] - base) * W + c];
      } else {
        std::fill(eps, eps + (end - t) * W, 0.0);
      }
      for (std::size_t off = t; off < end; off += ctx.kChunk)
        ctx.run_updates(sites.data() + off, std::min(ctx.kChunk, end - off), eps + (off - t) * W);
      t = end;
    }
  }
  void exchange(const std::vector<Index>& send, const std::vector<std::size_t>& send_counts,
                const std::vector<Index>& recv, const std::vector<std::size_t>& recv_counts, double* data, int width);

  const GraphShare* m_share;
  ChainGroup* m_group;
  std::vector<double> m_block_eps;  // kBlock x W deviates of one block
  std::vector<double> m_eps;        // the owned sites' deviates of one block
  std::vector<NormalStream> m_streams;
  std::vector<double> m_send, m_recv;  // the exchange's buffers
  bool m_fresh = true;                 // no sweep since the state was set
};

/// run_ensemble(model, domain, options, observe, colored scheme) with every chain's coordinates split over the
/// members of `group` (collective: every member calls it with the same arguments). The precision is cut by
/// partition_graph() into group.size() parts; each member samples its part of every chain with
/// PartitionedColoredSweep, the lock-step blocks one after another. At every checkpoint the members' coordinates
/// are gathered, so the observer, called on every member, sees the states of a one-process run_ensemble with
/// SchemeOptions kind Colored and the same seed, bitwise. EnsembleOptions::threads and group are ignored (one thread
/// per member); EnsembleStats: seconds is the slowest member's, updates those of the whole chains.
///
/// The primal domain: CsrKernel on Q (with the canonical vector of a model with a mean), its nodes cut by `partition`.
/// The dual domain: DualIncidenceKernel(whole, ...) on each part's edges (make_dual_share(), the nodes cut by
/// `partition` and each edge owned by its head's part), the zero-mean chain as in one process; the observer sees the
/// tallies x~ of all nodes, or the edges' y~ with observe_edges. Any start: Random gives each local coordinate the
/// deviate of its place in the whole chain (EnsembleOptions::random_places).
/// An error on any member (bad options, a failed allocation) ends the call on every member with that member's message
/// (ChainGroup::settle).
/// \param model the model (held whole by every member)
/// \param domain the domain to sample
/// \param options chains, sweeps, seed, checkpoints, start, noise, lockstep
/// \param observe called on every member at every checkpoint (may be empty)
/// \param group the members sharing the graph
/// \param partition the part (member) of every node, the same on every member; empty (the default):
///        partition_graph(Q, group.size())
/// \param share if not null, receives this member's share (e.g. to report its ghost layer)
/// \return the run's totals
/// \throws std::invalid_argument for a partition of another length or with parts outside the group,
///         the dual domain of a model without one, or what run_ensemble() throws for the options.
DUALGIBBS_EXPORT EnsembleStats run_partitioned(const Model& model, Domain domain, const EnsembleOptions& options,
                                               const Observer& observe, ChainGroup& group,
                                               const std::vector<int>& partition = {}, GraphShare* share = nullptr);

/// run_partitioned() with the scheme `scheme`: SchemeKind::Colored (or Gibbs: the colour-ordered Gibbs sweep,
/// PartitionedColoredSweep), or Ssor / ChebyshevSsor with colored_order (ColoredSsorSweep over each part, with one
/// exchange per class and half-sweep and, for Chebyshev-SSOR, the exchanges its tally rebuild needs in the dual),
/// bitwise run_ensemble(model, domain, options, observe, scheme) in one process. The spectrum must be that of the
/// colour-ordered precision (api::make_scheme with scan "colored" computes it).
/// \param model the model (held whole by every member)
/// \param domain the domain to sample
/// \param options chains, sweeps, seed, checkpoints, start, noise, lockstep
/// \param observe called on every member at every checkpoint (may be empty)
/// \param group the members sharing the graph
/// \param scheme the sweep scheme
/// \param partition the part of every node (empty: partition_graph(Q, group.size()))
/// \param share if not null, receives this member's share
/// \return the run's totals
/// \throws std::invalid_argument as run_partitioned() above, and for ssor or cheby-ssor without colored_order.
DUALGIBBS_EXPORT EnsembleStats run_partitioned(const Model& model, Domain domain, const EnsembleOptions& options,
                                               const Observer& observe, ChainGroup& group, const SchemeOptions& scheme,
                                               const std::vector<int>& partition = {}, GraphShare* share = nullptr);

/// run_partitioned() of a lattice given by its shape (collective): member r builds only its share, lattice_share(shape,
/// r, group.size()) (contiguous id ranges), so no member holds the whole graph: the memory a member needs is about
/// 1/K of one process's plus its ghost layer and one byte per node. The checkpoints are gathered as run_partitioned()
/// gathers them (every member then holds one whole state per chain) and are bitwise those of one process's
/// colour-ordered run_ensemble() on Model(lattice, s, sigma) with the same seed.
/// \param shape the lattice
/// \param options chains, sweeps, seed, checkpoints, start, noise, lockstep
/// \param observe called on every member at every checkpoint (may be empty)
/// \param group the members sharing the graph
/// \param share if not null, receives this member's share
/// \return the run's totals
/// \throws what lattice_share() and run_partitioned() throw, on every member.
DUALGIBBS_EXPORT EnsembleStats run_partitioned(const LatticeShape& shape, const EnsembleOptions& options,
                                               const Observer& observe, ChainGroup& group, GraphShare* share = nullptr);

/// run_partitioned() of a lattice given by its shape in `domain`: the primal as above, the dual (periodic lattices)
/// from lattice_dual_share(), each member's kernel that of its own nodes and edges, never the whole graph. \param shape
/// the lattice \param domain the domain to sample \param options chains, sweeps, seed, checkpoints, start, noise,
/// lockstep \param observe called on every member at every checkpoint (may be empty) \param group the members sharing
/// the lattice \param share if not null, receives this member's share \return the run's totals \throws what
/// lattice_share(), lattice_dual_share() and run_partitioned() throw, on every member.
DUALGIBBS_EXPORT EnsembleStats run_partitioned(const LatticeShape& shape, Domain domain, const EnsembleOptions& options,
                                               const Observer& observe, ChainGroup& group, GraphShare* share = nullptr);

}  // namespace dualgibbs
