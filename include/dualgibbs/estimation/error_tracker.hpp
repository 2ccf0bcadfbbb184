#pragma once
/// \file error_tracker.hpp
/// The error tracker: scores the checkpoints of an ensemble against the exact primal covariance (or marginal
/// variances) with the biased and the unbiased split-half errors and their jackknife standard errors.

#include <dualgibbs/estimation/grouped_moments.hpp>
#include <dualgibbs/estimation/moments.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace dualgibbs {

/// Options of CovarianceErrorTracker.
struct ErrorTrackerOptions {
  /// Groups per half for the jackknife standard errors (>= 2). 16 gives the standard errors to about
  /// +-18% (relative sd sqrt(2/(2*16-1)) for the pooled jackknife) at a tiny fraction of the accumulation cost.
  std::size_t jackknife_groups = 16;
};

/// Fewest chains a split-half error with jackknife standard errors needs: two halves of three, so that a
/// delete-one-group replicate still has two chains for a covariance (with halves of two, Eu_se and Eb_se
/// would be 0/0).
inline constexpr std::size_t kMinSplitHalfChains = 6;

/// Errors of one checkpoint (all chains at one sweep). Values are in the primal metric (target Cov(X)).
struct ErrorEstimate {
  std::size_t sweep = 0;     ///< the checkpoint's sweep
  double seconds = 0;        ///< sampling wall-clock time at this checkpoint
  double Eb = 0;             ///< ||S^ - S||_F^2 from all chains (biased)
  double Eb_floor = 0;       ///< estimated Monte-Carlo bias of Eb: ||S^1 - S^2||_F^2 / 4
  double Eb_se = 0;          ///< standard error of Eb (group jackknife, degenerate term removed)
  double Eu = 0;             ///< trace((S^1 - S)^T (S^2 - S)) [eq:unbiased_error] (unbiased)
  double Eu_se = 0;          ///< standard error of Eu: A2'C1A2 + A1'C2A1 - tr(C1C2), C_h by group jackknife
  double mean_norm = 0;      ///< ||mean over all chains||_2 of the observed state (x, or x~ for the dual)
  double mean_floor = 0;     ///< ||m^1 - m^2||_2 / 2, the Monte-Carlo noise level of mean_norm
  double max_abs_error = 0;  ///< max_ij |S^ - S|_ij (all chains)
};

/// Scores checkpoints of an ensemble against the exact primal covariance (or marginal variances).
///
/// Chains [0, L/2) form half 1 and [L/2, L) half 2 (the ensemble never lets a lock-step block straddle
/// them); each half is cut into `jackknife_groups` groups. Primal states are x; dual states are
/// x~ = B y~, scored through the Woodbury reconstruction, so both domains meet the same target.
/// Per checkpoint: O(L dim^2) (Full) or O(L dim) (Diagonal), plus O(groups dim^2) for the jackknife.
class DUALGIBBS_EXPORT CovarianceErrorTracker {
 public:
  /// Full covariance target (dim x dim, symmetric, finite) or marginal-variance target (a dim x 1 matrix
  /// or vector): the kind follows the target's shape. node_variances are s_v^2 (length dim), used by the
  /// dual's reconstruction.
  /// \param observed the domain of the observed states
  /// \param node_variances s_v^2 per node
  /// \param target the exact Cov(X) (dim x dim) or marginal variances (dim x 1)
  /// \param options the jackknife's grouping
  /// \throws std::invalid_argument on size mismatches or non-finite values.
  CovarianceErrorTracker(Domain observed, Eigen::VectorXd node_variances, Eigen::MatrixXd target,
                         ErrorTrackerOptions options = {});

  /// Full covariance or marginal variances only: follows the target's shape.
  /// \return the kind of moments scored
  MomentKind kind() const noexcept { return m_kind; }
  /// \return the domain of the observed states (primal x or dual x~ = B y~)
  Domain domain() const noexcept { return m_domain; }

  /// Scores the states (dim x L, L >= kMinSplitHalfChains) of one checkpoint and appends the result to
  /// history(). Half 1 is chains [0, L/2), half 2 [L/2, L) (an odd L gives half 2 one chain more; Eu stays
  /// unbiased). Each half is cut into min(jackknife_groups, L/2) groups, more if needed so that deleting
  /// a group leaves at least two chains.
  /// \param sweep the checkpoint's sweep
  /// \param seconds sampling wall-clock time at the checkpoint
  /// \param states the states, dim x L, one column per chain
  /// \param execution the threads, and the members sharing the work (collective over a group of two or more, every
  /// member holding all L states)
  /// \return the checkpoint's errors
  /// \throws std::invalid_argument on a wrong dimension, fewer than kMinSplitHalfChains chains, non-finite states or
  /// non-finite `seconds`.
  ErrorEstimate observe(std::size_t sweep, double seconds, const Eigen::Ref<const Eigen::MatrixXd>& states,
                        const Execution& execution = Execution());
  /// The same from some of the L = `chains` states: `states` holds chains [first, first + states.cols()). In one
  /// process that must be all of them (first = 0). Over a chain group (`execution`'s) each member may hold only its
  /// share of the groups of group_offsets(L) (what run_ensemble shows a member with EnsembleOptions::local_cuts =
  /// group_offsets(L)): the members exchange the groups' sums only (GroupedMoments over a share), and every member's
  /// estimate is bitwise that of one process. Collective over a group of two or more.
  /// \param sweep the checkpoint's sweep
  /// \param seconds sampling wall-clock time at the checkpoint
  /// \param states the states this process holds, one column per chain
  /// \param first the chain index of the first column of `states`
  /// \param chains L, the number of chains in all
  /// \param execution the threads, and the members sharing the work
  /// \return the checkpoint's errors
  /// \throws std::invalid_argument as observe(states), and for states outside [0, L) or a share that is not this
  /// member's.
  ErrorEstimate observe(std::size_t sweep, double seconds, const Eigen::Ref<const Eigen::MatrixXd>& states,
                        std::size_t first, std::size_t chains, const Execution& execution = Execution());
  /// The same from the states' group sums: `groups` must be cut at group_offsets(L) for L = groups.count() states
  /// (what observe(states) builds internally), so that a caller streaming the states can accumulate the sums itself.
  /// Over a group of two or more (`execution`'s, every member holding the same sums) the members split the
  /// jackknife's replicates and gather them: collective.
  /// \param sweep the checkpoint's sweep
  /// \param seconds sampling wall-clock time at the checkpoint
  /// \param groups the states' group sums
  /// \param execution the members sharing the work (null group: this process alone)
  /// \return the checkpoint's errors
  /// \throws std::invalid_argument if the kind, the dimension or the number of groups does not match, or
  /// L < kMinSplitHalfChains, or `seconds` is not finite.
  ErrorEstimate observe(std::size_t sweep, double seconds, const GroupedMoments& groups,
                        const Execution& execution = Execution());
  /// Several checkpoints at once: bitwise the same estimates, appended to history() in order (and the same
  /// last_estimate()), as observe(sweeps[b], seconds[b], states[b], first, chains, execution) for b = 0, 1, .... Over
  /// a chain group the members exchange the groups' sums of many checkpoints together (chunks of at most 24 MiB of
  /// sums: four exchanges per chunk instead of three per checkpoint), then each member scores its share of the
  /// checkpoints alone and the estimates are gathered, so a member can run its chains through many checkpoints
  /// without waiting for the others and score them after. Memory: the states, plus about four times a chunk's sums.
  /// Collective over a group of two or more.
  /// \param sweeps the checkpoints' sweeps
  /// \param seconds sampling wall-clock time at every checkpoint
  /// \param states every checkpoint's states this process holds, one column per chain
  /// \param first the chain index of the first column of the states
  /// \param chains L, the number of chains in all
  /// \param execution the threads, and the members sharing the work (collective over a group of two or more)
  /// \return the checkpoints' errors, in order
  /// \throws std::invalid_argument as observe(states, first, chains) for any checkpoint (before any is scored), if
  /// the three lists differ in length or are empty, or the states differ in shape.
  std::vector<ErrorEstimate> observe_batch(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                           const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states,
                                           std::size_t first, std::size_t chains,
                                           const Execution& execution = Execution());
  /// A second tracker that scores the same checkpoints from the states' image under a linear map (e.g. a control
  /// variate's terms D_s^-1 r_k(Q) D_s x~, flow_cv.hpp), see observe_batch(..., mapped).
  struct Mapped {
    CovarianceErrorTracker& tracker;  ///< the second tracker: full kind, this tracker's dimension and jackknife groups
    const Eigen::MatrixXd& map;       ///< the map, dim x dim
  };
  /// observe_batch(), and `mapped.tracker` scores the same checkpoints, appending to its own history, from the sums
  /// of the mapped states derived from this tracker's sums (GroupedMoments::mapped) instead of built from the mapped
  /// states: the same numbers as mapped.tracker.observe_batch() of the states `map` x in exact arithmetic, within
  /// rounding in floating point, and bitwise the same for any thread count and over any chain group. Cheaper when
  /// 4 dim^3 per group costs less than building the sums from the L mapped states (about L dim^2 plus the map).
  /// Collective over a group of two or more.
  /// \param sweeps the checkpoints' sweeps
  /// \param seconds sampling wall-clock time at every checkpoint
  /// \param states every checkpoint's states this process holds, one column per chain
  /// \param first the chain index of the first column of the states
  /// \param chains L, the number of chains in all
  /// \param execution the threads, and the members sharing the work (collective over a group of two or more)
  /// \param mapped the second tracker and the map
  /// \return this tracker's estimates of the checkpoints, in order
  /// \throws std::invalid_argument as observe_batch(), and if either tracker is not of the full kind, the dimensions
  /// or the group offsets of L states differ, or the map is not dim x dim and finite.
  std::vector<ErrorEstimate> observe_batch(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                           const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states,
                                           std::size_t first, std::size_t chains, const Execution& execution,
                                           const Mapped& mapped);
  /// The group boundaries observe() uses for L states: offsets[0] = 0 < ... < offsets.back() = L, the first half
  /// of the groups covering states [0, L/2).
  /// \param states L, the number of states
  /// \return the group boundaries
  /// \throws std::invalid_argument if L < kMinSplitHalfChains.
  std::vector<std::size_t> group_offsets(std::size_t states) const;

  /// \return every checkpoint's estimate so far, in the order observed
  const std::vector<ErrorEstimate>& history() const noexcept { return m_history; }

  /// \return the last checkpoint's estimate of Cov(X) from all chains (dim x dim, or dim x 1 for Diagonal)
  const Eigen::MatrixXd& last_estimate() const noexcept { return m_estimate; }

 private:
  Domain m_domain;
  MomentKind m_kind;
  Eigen::VectorXd m_node_variances;
  Eigen::MatrixXd m_target;
  ErrorTrackerOptions m_options;
  std::vector<ErrorEstimate> m_history;
  Eigen::MatrixXd m_estimate;
  // Scores gms[b] as checkpoint (sweeps[b], seconds[b]), the jackknife replicates of all of them in one exchange
  // over `group` (null: here), a member's replicates over at most `threads` threads.
  void score(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
             const std::vector<const GroupedMoments*>& gms, ChainGroup* group, unsigned threads);
  // Scores a chunk of checkpoints whose sums `gms` are all of them (`split` false) or, over `group`, this member's
  // share of them (`split` true: each member scores its share alone and the estimates are gathered).
  void score_chunk(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                   const std::vector<const GroupedMoments*>& gms, ChainGroup* group, bool split, unsigned threads);
  std::vector<ErrorEstimate> observe_chunks(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                            const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states,
                                            std::size_t first, std::size_t chains, const Execution& execution,
                                            const Mapped* mapped);

  Eigen::MatrixXd m_jack;  // jackknife deviations, reused between checkpoints
};

}  // namespace dualgibbs
