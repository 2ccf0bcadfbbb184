#pragma once
/// \file estimators.hpp
/// Estimators of the paper's Section VII: moments across many independent chains at one checkpoint,
/// split into two independent halves; the Woodbury reconstruction of the primal covariance from dual
/// samples [eq:cov_woodbury3]; the biased error ||S^ - S||_F^2 and the unbiased split-half error
/// trace((S^1 - S)^T (S^2 - S)) [eq:unbiased_error]; marginal-variance errors; jackknife standard errors;
/// the bootstrap; normalisation to sweep 0; and a robust (Theil–Sen) fit of a geometric decay rate.
///
/// Everything here works on plain matrices of draws (dimension x count, one column per draw), so it does
/// not depend on how the draws were produced. The experiments module feeds it the checkpoints of
/// run_ensemble(); tests feed it exact draws.
///
/// Bias and Monte-Carlo variance are reported separately for every error estimate:
///  - `Eb` is biased upwards by the Monte-Carlo variance of S^; its estimated floor `Eb_floor` is reported
///    next to it (so `Eb - Eb_floor` is an estimate of the true error);
///  - `Eu` is unbiased; its standard error `Eu_se` is reported next to it (group jackknife with the
///    degenerate term removed: unbiased away from convergence, conservative near it, where the true
///    variance is bounded below by tr(C1 C2) and the estimate is floored there). The dual's
///    Woodbury estimate D_s - D_s Cov^(x~) D_s can carry far more Monte-Carlo variance than the primal's
///    sample covariance (the weights s_v^2 multiply the noise of Cov^(x~)); `Eu_se` and `Eb_floor` make
///    that visible.
///
/// \code
/// // states: |V| x L matrix of x~ = B y~ from L independent dual chains at one sweep
/// dualgibbs::CovarianceErrorTracker track(dualgibbs::Domain::Dual, model.node_variances(), exact_cov_x);
/// dualgibbs::ErrorEstimate e = track.observe(sweep, seconds, states);
/// std::cout << e.Eu << " +- " << e.Eu_se << "\n";
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dualgibbs {

/// How much of the second moment to accumulate: the full covariance (small graphs; O(dim^2) memory and
/// O(dim^2) work per draw) or only its diagonal, the marginal variances (any size; O(dim)).
enum class MomentKind { Full, Diagonal };

/// "full" or "diagonal".
DUALGIBBS_EXPORT const char* to_string(MomentKind kind) noexcept;

/// Sample moments of a set of draws.
struct SampleMoments {
  double count = 0;            ///< number of draws (with bootstrap multiplicities)
  Eigen::VectorXd mean;        ///< length dim
  Eigen::MatrixXd covariance;  ///< dim x dim, divisor count - 1 (unbiased); empty for MomentKind::Diagonal
  Eigen::VectorXd variance;    ///< length dim, divisor count - 1: the diagonal of the covariance
};

/// Sums of draws about a centre c: count n, s = sum (x - c), and the scatter P = sum (x - c)(x - c)^T
/// (stored column-major as a dim*dim vector) or its diagonal (a dim vector). Sums about the same centre
/// add and subtract, which is how groups are combined and deleted.
/// Adding or subtracting sums of different shapes throws std::invalid_argument.
struct DUALGIBBS_EXPORT MomentSums {
  double count = 0;         ///< n, the number of draws summed
  Eigen::VectorXd sum;      ///< s = sum (x - c), length dim
  Eigen::VectorXd scatter;  ///< P = sum (x - c)(x - c)^T column-major (dim*dim), or its diagonal (dim)
  /// Adds the sums of other draws about the same centre (joins two groups).
  MomentSums& operator+=(const MomentSums& other);
  /// Subtracts the sums of draws about the same centre (deletes a group, for the jackknife).
  MomentSums& operator-=(const MomentSums& other);
};

/// Sufficient statistics of draws cut into groups, for the split-half, jackknife and bootstrap estimators.
///
/// The draws are the columns of a dim x n matrix. Every group keeps its MomentSums about one common
/// centre, the mean of all draws (two-pass algorithm: no cancellation). Combining groups is then a sum. The centre
/// is the sum of the groups' column sums (each over its columns in order), added in group order, divided by n: so
/// the members of a chain group can build it from their own groups (with one group, the plain column mean).
/// Building costs one symmetric rank-n update, O(n dim^2) (Full: one single-threaded BLAS dsyrk per group,
/// the groups spread over the hardware threads, so that the bits depend on no thread count, the BLAS's
/// included) or O(n dim) (Diagonal). Not to be called concurrently with other BLAS users of the process: it
/// sets OpenBLAS to one thread for its duration.
class DUALGIBBS_EXPORT GroupedMoments {
 public:
  /// Groups are the column ranges [offsets[g], offsets[g+1]); offsets must start at 0, end at the number
  /// of columns and increase strictly.
  /// \throws std::invalid_argument for bad offsets, an empty matrix or non-finite draws.
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets,
                 MomentKind kind);
  /// `groups` contiguous groups of near-equal size (1 <= groups <= number of columns).
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t groups, MomentKind kind);
  /// From some of the draws: `draws` holds draws [first, first + draws.cols()) of the offsets.back() draws cut at
  /// `offsets`. In one process they must be all of them (first = 0), and this is the constructor above. In a chain
  /// group (chain_group.hpp) each member may hold only its share of the groups, member_share(groups, rank, size) (the
  /// chains run_ensemble shows it with EnsembleOptions::local_cuts = offsets): each member then reduces its groups
  /// to sums (a column sum for the centre, then the sums about it) and only the sums are gathered, in group order, so
  /// every member gets bitwise the object one process builds from all draws. Collective in a group.
  /// \throws std::invalid_argument for bad offsets, draws outside them, a share that lacks one of this member's
  /// groups, or non-finite draws (on any member).
  GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t first,
                 const std::vector<std::size_t>& offsets, MomentKind kind);
  /// From group sums accumulated elsewhere (a streaming pass over draws that never sit in memory together), all
  /// about the same `center`, which need not be the mean of the draws: moments() subtracts n delta delta^T, exact
  /// in exact arithmetic for any centre, and accurate in floating point when the centre is within a few standard
  /// deviations of the mean (e.g. the mean of the first few draws).
  /// \throws std::invalid_argument if there is no group, a group has a count below 1, the sums have another length
  /// than `center` (the scatter: dim*dim for Full, dim for Diagonal) or a value is not finite.
  GroupedMoments(MomentKind kind, Eigen::VectorXd center, std::vector<MomentSums> groups);

  /// Several sets of draws cut the same way at once (e.g. one member's share at many checkpoints of one ensemble):
  /// element b is bitwise GroupedMoments(draws[b], first, offsets, kind), but in a chain group the members exchange
  /// the sums of all sets together, two exchanges per call instead of two per set (every draws[b] must hold the same
  /// draws of the offsets, this member's share). Collective in a group.
  /// \throws std::invalid_argument if `draws` is empty or the sets differ in shape, and as the constructor above.
  static std::vector<GroupedMoments> batch(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                           std::size_t first, const std::vector<std::size_t>& offsets, MomentKind kind);

  /// This member's share of batch(draws, first, offsets, kind): its elements b in member_share(draws.size(), rank,
  /// size), bitwise the same objects, in order (without a chain group: all of them, as batch()). The members compute
  /// their groups' sums of every set as batch() does, but each receives only the sums of the sets it keeps (an
  /// all-to-all instead of an all-gather), so it moves and unpacks the sums of about 1/K of the sets. A member may
  /// keep no set (fewer sets than members). Collective in a group.
  /// \throws std::invalid_argument as batch().
  static std::vector<GroupedMoments> batch_share(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                 std::size_t first, const std::vector<std::size_t>& offsets,
                                                 MomentKind kind);

  /// Full covariance or diagonal only, as constructed.
  MomentKind kind() const noexcept { return m_kind; }
  /// dim, the length of one draw (the number of rows of the draws).
  Index dimension() const noexcept { return static_cast<Index>(m_center.size()); }
  /// The number of groups.
  std::size_t num_groups() const noexcept { return m_groups.size(); }
  /// Total number of draws.
  double count() const noexcept { return m_total.count; }
  /// The common centre (the mean of all draws).
  const Eigen::VectorXd& center() const noexcept { return m_center; }

  /// Sums of group g. \throws std::invalid_argument if g >= num_groups().
  const MomentSums& group(std::size_t g) const;
  /// Sums of all draws.
  const MomentSums& total() const noexcept { return m_total; }
  /// Sums of groups [first, last).
  MomentSums range(std::size_t first, std::size_t last) const;
  /// Moments from sums about this object's centre. \throws std::invalid_argument if sums.count <= 1 or the
  /// sums have another shape than this object's.
  SampleMoments moments(const MomentSums& sums) const;
  /// Moments of all draws.
  SampleMoments moments() const { return moments(m_total); }
  /// Moments with group g counted weights[g] times (weights.size() == num_groups(), non-negative).
  SampleMoments moments_weighted(const std::vector<double>& weights) const;

  /// Bootstrap: `replicates` resamples, each drawing num_groups() groups with replacement (multinomial
  /// multiplicities drawn with uniform_below from make_stream(seed, 0, StreamPurpose::Bootstrap)), evaluated by
  /// `statistic`. With one draw per group this is the ordinary nonparametric bootstrap; with groups of m i.i.d. draws
  /// it resamples blocks, num_groups() times cheaper but not the same: the resampled covariance then moves only in
  /// the span of num_groups() block scatters, so when num_groups() is not much larger than dim^2 a nonlinear
  /// statistic's spread is overstated (fig5: 1000 blocks of 100 draws, dim = 64, gave a bootstrap sd 1.25x that of
  /// single draws). For single draws of a full covariance use bootstrap_draws(). Work:
  /// O(replicates num_groups dim^2), done as one matrix product per batch of replicates.
  std::vector<double> bootstrap(std::size_t replicates, std::uint64_t seed,
                                const std::function<double(const SampleMoments&)>& statistic) const;

 private:
  explicit GroupedMoments(MomentKind kind) : m_kind(kind) {}
  void build(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets);
  // Builds out[b] from draws[b] for every b (all cut at `offsets`, all holding draws [first, first + cols)); with
  // `owners_only` in a chain group, out holds only this member's share of the sets (member_share(sets, ...)).
  static void build_all(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws, std::size_t first,
                        const std::vector<std::size_t>& offsets, MomentKind kind, std::vector<GroupedMoments*>& out,
                        bool owners_only = false);

  MomentKind m_kind;
  Eigen::VectorXd m_center;
  std::vector<MomentSums> m_groups;
  MomentSums m_total;
};

/// Nonparametric bootstrap of single draws for a statistic of the full sample moments: `replicates` resamples of
/// the n columns of `draws` (dim x n) with replacement, replicate r drawing its n column indices with
/// uniform_below(rng, n) from make_stream(seed, r, StreamPurpose::Bootstrap), each evaluated by `statistic` on the
/// resample's SampleMoments (count n, mean, covariance with divisor n - 1).
///
/// The multiplicities w turn a replicate into weighted sums: about the mean c of all draws, the resample's scatter
/// is sum_k (x_k - c)(x_k - c)^T + sum_k (w_k - 1)(x_k - c)(x_k - c)^T, and the second sum for a batch of replicates
/// is one matrix product of the draws' dim (dim + 3) / 2 products and means (lower triangle and the draw itself)
/// with the integer weights w - 1, in single precision (exact weights; the products rounded to 2^-24 relative, an
/// error below 1e-6 of the statistic's bootstrap spread in fig5), accumulated in double over chunks of draws. Work:
/// replicates x n x dim (dim + 3) / 2 multiply-adds (fig5: 10^4 x 10^5 x 2144 = 2.1e12), spread over the hardware
/// threads in fixed blocks, so the numbers do not depend on the thread count (the replicate count, which sets the
/// products' blocking, moves them by about 1e-10 relative).
/// \throws std::invalid_argument for fewer than 2 draws, non-finite draws, no statistic or zero replicates.
DUALGIBBS_EXPORT std::vector<double> bootstrap_draws(const Eigen::Ref<const Eigen::MatrixXd>& draws,
                                                     std::size_t replicates, std::uint64_t seed,
                                                     const std::function<double(const SampleMoments&)>& statistic);

/// Mean of the columns [first, first + count) of m (count >= 1), accumulated column by column (contiguous
/// memory: much faster than a row-wise reduction of a column-major matrix).
/// \throws std::invalid_argument if the range is empty or outside m.
DUALGIBBS_EXPORT Eigen::VectorXd column_mean(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index first,
                                             Eigen::Index count);

/// Woodbury reconstruction of the primal covariance from the dual auxiliary variables x~ = B y~
/// [eq:cov_woodbury3]: Cov(X) = D_s - D_s Cov(x~) D_s, with D_s = diag(node_variances) (s_v^2).
/// \throws std::invalid_argument if the sizes do not match, the input is empty, a node variance is not
/// finite and positive, or Cov(x~) has a NaN or infinite entry.
DUALGIBBS_EXPORT Eigen::MatrixXd woodbury_primal_covariance(const Eigen::VectorXd& node_variances,
                                                            const Eigen::MatrixXd& cov_x_tilde);
/// Diagonal of [eq:cov_woodbury3] ([eq:cov_woodbury5]): Var(X_v) = s_v^2 - s_v^4 Var(x~_v).
/// \throws std::invalid_argument as woodbury_primal_covariance().
DUALGIBBS_EXPORT Eigen::VectorXd woodbury_primal_variances(const Eigen::VectorXd& node_variances,
                                                           const Eigen::VectorXd& var_x_tilde);

/// The estimate of Cov(X) (Full) or of the marginal variances (Diagonal) that a domain's samples give:
/// primal draws x give their sample covariance; dual draws x~ give the Woodbury reconstruction.
/// Returns a dim x dim matrix (Full) or a dim x 1 matrix (Diagonal).
/// \throws std::invalid_argument for empty moments or node_variances of another dimension.
DUALGIBBS_EXPORT Eigen::MatrixXd primal_covariance_estimate(Domain observed, const Eigen::VectorXd& node_variances,
                                                            const SampleMoments& moments);

/// Biased squared error ||S^ - S||_F^2.
/// \throws std::invalid_argument if the shapes differ, a matrix is empty or has a NaN or infinite entry
/// (the same for unbiased_error()).
DUALGIBBS_EXPORT double biased_error(const Eigen::MatrixXd& estimate, const Eigen::MatrixXd& target);
/// Unbiased split-half error [eq:unbiased_error]: trace((S1 - S)^T (S2 - S)) = sum_ij (S1-S)_ij (S2-S)_ij,
/// for estimates S1, S2 from two independent halves. Its expectation is ||Sigma_t - S||_F^2; it can be
/// negative. Works on full matrices and on diagonals (dim x 1).
DUALGIBBS_EXPORT double unbiased_error(const Eigen::MatrixXd& half1, const Eigen::MatrixXd& half2,
                                       const Eigen::MatrixXd& target);

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
  /// dual's reconstruction. \throws std::invalid_argument on size mismatches or non-finite values.
  CovarianceErrorTracker(Domain observed, Eigen::VectorXd node_variances, Eigen::MatrixXd target,
                         ErrorTrackerOptions options = {});

  /// Full covariance or marginal variances only: follows the target's shape.
  MomentKind kind() const noexcept { return m_kind; }
  /// The domain of the observed states (primal x or dual x~ = B y~).
  Domain domain() const noexcept { return m_domain; }

  /// Scores the states (dim x L, L >= kMinSplitHalfChains) of one checkpoint and appends the result to
  /// history(). Half 1 is chains [0, L/2), half 2 [L/2, L) (an odd L gives half 2 one chain more; Eu stays
  /// unbiased). Each half is cut into min(jackknife_groups, L/2) groups, more if needed so that deleting
  /// a group leaves at least two chains. \throws std::invalid_argument on a wrong dimension, fewer than
  /// kMinSplitHalfChains chains, non-finite states or non-finite `seconds`.
  ErrorEstimate observe(std::size_t sweep, double seconds, const Eigen::Ref<const Eigen::MatrixXd>& states);
  /// The same from some of the L = `chains` states: `states` holds chains [first, first + states.cols()). In one
  /// process that must be all of them (first = 0). In a chain group each member may hold only its share of the groups
  /// of group_offsets(L) (what run_ensemble shows a member with EnsembleOptions::local_cuts = group_offsets(L)): the
  /// members exchange the groups' sums only (GroupedMoments over a share), and every member's estimate is bitwise
  /// that of one process. Collective in a group. \throws std::invalid_argument as observe(states), and for states
  /// outside [0, L) or a share that is not this member's.
  ErrorEstimate observe(std::size_t sweep, double seconds, const Eigen::Ref<const Eigen::MatrixXd>& states,
                        std::size_t first, std::size_t chains);
  /// The same from the states' group sums: `groups` must be cut at group_offsets(L) for L = groups.count() states
  /// (what observe(states) builds internally), so that a caller streaming the states can accumulate the sums itself.
  /// \throws std::invalid_argument if the kind, the dimension or the number of groups does not match, or
  /// L < kMinSplitHalfChains, or `seconds` is not finite.
  ErrorEstimate observe(std::size_t sweep, double seconds, const GroupedMoments& groups);
  /// Several checkpoints at once: bitwise the same estimates, appended to history() in order (and the same
  /// last_estimate()), as observe(sweeps[b], seconds[b], states[b], first, chains) for b = 0, 1, .... In a chain group
  /// the members exchange the groups' sums of many checkpoints together (chunks of at most 24 MiB of sums: four
  /// exchanges per chunk instead of three per checkpoint), then each member scores its share of the checkpoints alone
  /// and the estimates are gathered, so a member can run its chains through many checkpoints without waiting for the
  /// others and score them after. Memory: the states, plus about four times a chunk's sums. Collective in a group.
  /// \throws std::invalid_argument as observe(states, first, chains) for any checkpoint (before any is scored), if
  /// the three lists differ in length or are empty, or the states differ in shape.
  std::vector<ErrorEstimate> observe_batch(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                           const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states,
                                           std::size_t first, std::size_t chains);
  /// The group boundaries observe() uses for L states: offsets[0] = 0 < ... < offsets.back() = L, the first half
  /// of the groups covering states [0, L/2). \throws std::invalid_argument if L < kMinSplitHalfChains.
  std::vector<std::size_t> group_offsets(std::size_t states) const;

  /// Every checkpoint's estimate so far, in the order observed.
  const std::vector<ErrorEstimate>& history() const noexcept { return m_history; }

  /// The last checkpoint's estimate of Cov(X) from all chains (dim x dim, or dim x 1 for Diagonal).
  const Eigen::MatrixXd& last_estimate() const noexcept { return m_estimate; }

 private:
  Domain m_domain;
  MomentKind m_kind;
  Eigen::VectorXd m_node_variances;
  Eigen::MatrixXd m_target;
  ErrorTrackerOptions m_options;
  std::vector<ErrorEstimate> m_history;
  Eigen::MatrixXd m_estimate;
  // Scores gms[b] as checkpoint (sweeps[b], seconds[b]), the jackknife replicates of all of them in one exchange.
  void score(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
             const std::vector<const GroupedMoments*>& gms);

  Eigen::MatrixXd m_jack, m_jb;  // jackknife deviations and scratch, reused between checkpoints
};

/// Divides every value by the first one (the paper's normalisation to sweep 0). If the first value is 0
/// or not finite the values are returned as NaN (there is no scale to normalise to).
DUALGIBBS_EXPORT std::vector<double> normalise_to_first(const std::vector<double>& values);

/// Theil–Sen line fit: the slope is the median of the pairwise slopes (y_j - y_i)/(x_j - x_i), i < j,
/// x_i != x_j; the intercept is the median of y_i - slope x_i. Robust to up to 29% outliers. O(n^2 log n).
struct LineFit {
  double slope = std::numeric_limits<double>::quiet_NaN();      ///< median pairwise slope
  double intercept = std::numeric_limits<double>::quiet_NaN();  ///< median of y_i - slope x_i
};
/// \throws std::invalid_argument if sizes differ, fewer than 2 points, or no two distinct x.
DUALGIBBS_EXPORT LineFit theil_sen(const std::vector<double>& x, const std::vector<double>& y);

/// Options of fit_decay_rate().
struct RateFitOptions {
  /// The curve decays like r^(exponent * sweep): 2 for squared errors (Eb, Eu: the paper's convention,
  /// -ln r = -slope / 2), 1 for norms such as the ensemble mean.
  double exponent = 2.0;
  /// The window starts at the first point with sweep >= first_sweep (1 skips the initial state).
  double first_sweep = 1.0;
  /// The window ends just before the first point whose value is <= snr * noise (or <= 0): past it the
  /// curve is lost in Monte-Carlo noise and has stopped decaying geometrically.
  double snr = 3.0;
  /// Fewer points than this in the window: no fit (NaN).
  std::size_t min_points = 3;
  /// Fit only the last fraction of the clean window (in (0, 1]; 1 = all of it). Use 0.5 to measure the
  /// asymptotic rate of a curve whose early sweeps still carry faster modes (e.g. the mean from a random
  /// initial vector); the window keeps at least min_points points.
  double tail_fraction = 1.0;
};

/// A fitted geometric decay rate.
struct RateFit {
  double neg_log_rate = std::numeric_limits<double>::quiet_NaN();  ///< -ln r per sweep
  double rate = std::numeric_limits<double>::quiet_NaN();          ///< r = exp(-neg_log_rate)
  double first_sweep = std::numeric_limits<double>::quiet_NaN();   ///< window [first_sweep, last_sweep]
  double last_sweep = std::numeric_limits<double>::quiet_NaN();    ///< end of the window
  std::size_t points = 0;                                          ///< points in the window
  std::string note;                                                ///< why there is no fit, if there is none
  /// True if there is a fit (points in the window and a finite rate).
  bool ok() const noexcept { return points > 0 && neg_log_rate == neg_log_rate; }
};

/// Robust decay-rate fit: Theil–Sen slope of ln(value) against sweep over the clean geometric window,
/// returning -ln r = -slope / exponent.
///
/// Window rule (documented, not tuned per figure): start at the first sweep >= options.first_sweep; end
/// before the first point where the curve is no longer clearly above its Monte-Carlo noise, i.e.
/// value <= snr * noise (noise: the split-half standard error Eu_se, or mean_floor for the mean). If
/// `noise` is empty the noise level is estimated from the tail as the median |value| of the last fifth
/// of the points (at least 3). Points with value <= 0 end the window. With tail_fraction < 1 only the
/// last part of that window is fitted.
/// \throws std::invalid_argument if sizes differ, a sweep is not finite, a noise level is negative or NaN,
/// or an option is out of range (exponent not positive, tail_fraction outside (0, 1], snr negative or not
/// finite, first_sweep NaN). Empty input is no fit (a note, NaN rate).
DUALGIBBS_EXPORT RateFit fit_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& values,
                                        const std::vector<double>& noise, const RateFitOptions& options = {});

}  // namespace dualgibbs
