#pragma once
/// \file grouped_moments.hpp
/// The group reduction: sufficient statistics of draws cut into groups (one MomentSums per group about the mean
/// of all draws), from which the split halves, the jackknife's delete-one-group replicates and the block
/// bootstrap are sums; over a chain group passed to it (Execution, core/execution.hpp) the members reduce their own
/// groups and exchange only the sums.

#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/index.hpp>
#include <dualgibbs/estimation/moments.hpp>
#include <dualgibbs/export.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace dualgibbs {

/// Sufficient statistics of draws cut into groups, for the split-half, jackknife and bootstrap estimators.
///
/// The draws are the columns of a dim x n matrix. Every group keeps its MomentSums about one common
/// centre, the mean of all draws (two-pass algorithm: no cancellation). Combining groups is then a sum. The centre
/// is the sum of the groups' column sums (each over its columns in order), added in group order, divided by n: so
/// the members of a chain group can build it from their own groups (with one group, the plain column mean).
/// Building costs one symmetric rank-n update, O(n dim^2) (Full: one single-threaded BLAS dsyrk per group,
/// the groups spread over the execution's threads, so that the bits depend on no thread count, the BLAS's
/// included) or O(n dim) (Diagonal). Not to be called concurrently with other BLAS users of the process: it
/// sets OpenBLAS to one thread for its duration. A constructor given an Execution with a group of two or more
/// members is collective (chain_group.hpp): every member makes the same call, and the members split the groups'
/// sums and gather them in group order, so every member gets bitwise the object one process builds. Without one
/// (the default) it runs in this process alone.
class DUALGIBBS_EXPORT GroupedMoments {
 public:
  /// Groups are the column ranges [offsets[g], offsets[g+1]); offsets must start at 0, end at the number
  /// of columns and increase strictly.
  /// \param draws the draws, dim x n, one per column
  /// \param offsets the group boundaries
  /// \param kind full covariance or diagonal only
  /// \param execution the threads, and the members sharing the work (collective over two or more)
  /// \throws std::invalid_argument for bad offsets, an empty matrix or non-finite draws.
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets,
                 MomentKind kind, const Execution& execution = Execution());
  /// `groups` contiguous groups of near-equal size (1 <= groups <= number of columns).
  /// \param draws the draws, dim x n, one per column
  /// \param groups the number of groups
  /// \param kind full covariance or diagonal only
  /// \param execution the threads, and the members sharing the work (collective over two or more)
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t groups, MomentKind kind,
                 const Execution& execution = Execution());
  /// From some of the draws: `draws` holds draws [first, first + draws.cols()) of the offsets.back() draws cut at
  /// `offsets`. In one process they must be all of them (first = 0), and this is the constructor above. Over a chain
  /// group (`execution`'s, chain_group.hpp) each member may hold only its share of the groups, member_share(groups,
  /// rank, size) (the chains run_ensemble shows it with EnsembleOptions::local_cuts = offsets): each member then
  /// reduces its groups to sums (a column sum for the centre, then the sums about it) and only the sums are gathered,
  /// in group order, so every member gets bitwise the object one process builds from all draws. Collective over a
  /// group of two or more.
  /// \param draws the draws this process holds, one per column
  /// \param first the index of the first column of `draws` among all draws
  /// \param offsets the group boundaries of all draws
  /// \param kind full covariance or diagonal only
  /// \param execution the threads, and the members sharing the work (collective over two or more)
  /// \throws std::invalid_argument for bad offsets, draws outside them, a share that lacks one of this member's
  /// groups, or non-finite draws (on any member).
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t first,
                 const std::vector<std::size_t>& offsets, MomentKind kind, const Execution& execution = Execution());
  /// From group sums accumulated elsewhere (a streaming pass over draws that never sit in memory together), all
  /// about the same `center`, which need not be the mean of the draws: moments() subtracts n delta delta^T, exact
  /// in exact arithmetic for any centre, and accurate in floating point when the centre is within a few standard
  /// deviations of the mean (e.g. the mean of the first few draws).
  /// \param kind full covariance or diagonal only
  /// \param center the common centre of the sums
  /// \param groups every group's sums about `center`, in group order
  /// \throws std::invalid_argument if there is no group, a group has a count below 1, the sums have another length
  /// than `center` (the scatter: dim*dim for Full, dim for Diagonal) or a value is not finite.
  GroupedMoments(MomentKind kind, Eigen::VectorXd center, std::vector<MomentSums> groups);

  /// Several sets of draws cut the same way at once (e.g. one member's share at many checkpoints of one ensemble):
  /// element b is bitwise GroupedMoments(draws[b], first, offsets, kind, execution), but over a chain group the
  /// members exchange the sums of all sets together, two exchanges per call instead of two per set (every draws[b]
  /// must hold the same draws of the offsets, this member's share). Collective over a group of two or more.
  /// \param draws the sets of draws this process holds, one per column
  /// \param first the index of the first column of every set among all draws
  /// \param offsets the group boundaries of all draws
  /// \param kind full covariance or diagonal only
  /// \param execution the threads, and the members sharing the work
  /// \return one object per set, in order
  /// \throws std::invalid_argument if `draws` is empty or the sets differ in shape, and as the constructor above.
  static std::vector<GroupedMoments> batch(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                           std::size_t first, const std::vector<std::size_t>& offsets, MomentKind kind,
                                           const Execution& execution = Execution());

  /// This member's share of batch(draws, first, offsets, kind, execution): its elements b in
  /// member_share(draws.size(), rank, size) of `execution`'s group, bitwise the same objects, in order (without a
  /// group of two or more: all of them, as batch()). The members compute their groups' sums of every set as batch()
  /// does, but each receives only the sums of the sets it keeps (an all-to-all instead of an all-gather), so it moves
  /// and unpacks the sums of about 1/K of the sets. A member may keep no set (fewer sets than members). Collective
  /// over a group of two or more.
  /// \param draws the sets of draws this process holds, one per column
  /// \param first the index of the first column of every set among all draws
  /// \param offsets the group boundaries of all draws
  /// \param kind full covariance or diagonal only
  /// \param execution the threads, and the members sharing the work
  /// \return this member's objects, in set order
  /// \throws std::invalid_argument as batch().
  static std::vector<GroupedMoments> batch_share(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                 std::size_t first, const std::vector<std::size_t>& offsets,
                                                 MomentKind kind, const Execution& execution = Execution());

  /// The sums of the draws `map` x (x a draw) from these: the centre `map` c, every group's sum `map` s and scatter
  /// `map` P `map`^T (the lower triangle mirrored, so the scatter stays exactly symmetric), the same numbers in exact
  /// arithmetic as the sums built from the mapped draws, in floating point to within rounding (not bitwise). Work:
  /// 4 dim^3 per group against n dim^2 for building from n mapped draws (plus the map's own cost), so it is the
  /// cheaper way when the groups are few against n / dim. Each group is one task of single-threaded BLAS calls over
  /// the execution's threads (the bits depend on no thread count); local to this process (no exchange).
  /// \param map the linear map, dim x dim
  /// \param execution the threads (its group is not used)
  /// \param alongside other work that shares the threads as one more task (run first; none if empty): it must not call
  /// the BLAS
  /// \return the mapped object, of the same kind, groups and counts
  /// \throws std::invalid_argument if the kind is not Full, `map` is not dim x dim or has a non-finite entry; what
  /// `alongside` throws.
  GroupedMoments mapped(const Eigen::MatrixXd& map, const Execution& execution = Execution(),
                        const std::function<void()>& alongside = {}) const;

  /// Full covariance or diagonal only, as constructed.
  /// \return the kind of moments kept
  MomentKind kind() const noexcept { return m_kind; }
  /// \return dim, the length of one draw (the number of rows of the draws)
  Index dimension() const noexcept { return static_cast<Index>(m_center.size()); }
  /// \return the number of groups
  std::size_t num_groups() const noexcept { return m_groups.size(); }
  /// \return the total number of draws
  double count() const noexcept { return m_total.count; }
  /// \return the common centre (the mean of all draws)
  const Eigen::VectorXd& center() const noexcept { return m_center; }

  /// Sums of group g.
  /// \param g the group
  /// \return its sums about center()
  /// \throws std::invalid_argument if g >= num_groups().
  const MomentSums& group(std::size_t g) const;
  /// \return the sums of all draws
  const MomentSums& total() const noexcept { return m_total; }
  /// Sums of groups [first, last).
  /// \param first the first group
  /// \param last one past the last group
  /// \return their sums about center()
  MomentSums range(std::size_t first, std::size_t last) const;
  /// Moments from sums about this object's centre.
  /// \param sums the sums, about center()
  /// \return count, mean and covariance (or variances)
  /// \throws std::invalid_argument if sums.count <= 1 or the sums have another shape than this object's.
  SampleMoments moments(const MomentSums& sums) const;
  /// \return the moments of all draws
  SampleMoments moments() const { return moments(m_total); }
  /// Moments with group g counted weights[g] times (weights.size() == num_groups(), non-negative).
  /// \param weights the multiplicity of every group
  /// \return the weighted moments
  SampleMoments moments_weighted(const std::vector<double>& weights) const;

  /// Bootstrap: `replicates` resamples, each drawing num_groups() groups with replacement (multinomial
  /// multiplicities drawn with uniform_below from make_stream(seed, 0, StreamPurpose::Bootstrap)), evaluated by
  /// `statistic`. With one draw per group this is the ordinary nonparametric bootstrap; with groups of m i.i.d. draws
  /// it resamples blocks, num_groups() times cheaper but not the same: the resampled covariance then moves only in
  /// the span of num_groups() block scatters, so when num_groups() is not much larger than dim^2 a nonlinear
  /// statistic's spread is overstated (fig5: 1000 blocks of 100 draws, dim = 64, gave a bootstrap sd 1.25x that of
  /// single draws). For single draws of a full covariance use bootstrap_draws(). Work:
  /// O(replicates num_groups dim^2), done as one matrix product per batch of replicates, over at most `threads`
  /// threads (0: available_threads(); the numbers do not depend on it).
  /// \param replicates the number of resamples
  /// \param seed the seed of the multiplicities' stream
  /// \param statistic the statistic of a resample's moments
  /// \param threads the threads it may use, counting the caller (0: available_threads())
  /// \return the statistic of every replicate, in replicate order
  std::vector<double> bootstrap(std::size_t replicates, std::uint64_t seed,
                                const std::function<double(const SampleMoments&)>& statistic,
                                unsigned threads = 0) const;

 private:
  explicit GroupedMoments(MomentKind kind) : m_kind(kind) {}
  void build(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets,
             const Execution& execution);
  // Builds out[b] from draws[b] for every b (all cut at `offsets`, all holding draws [first, first + cols)); with
  // `owners_only` over a chain group, out holds only this member's share of the sets (member_share(sets, ...)).
  static void build_all(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws, std::size_t first,
                        const std::vector<std::size_t>& offsets, MomentKind kind, std::vector<GroupedMoments*>& out,
                        const Execution& execution, bool owners_only = false);

  MomentKind m_kind;
  Eigen::VectorXd m_center;
  std::vector<MomentSums> m_groups;
  MomentSums m_total;
};

}  // namespace dualgibbs
