#pragma once
// clang-format off (the example below keeps its lines)
/// \file validate.hpp
/// Validating anyone's sampler against the exact truth: validate_draws() compares draws of the
/// primal x (nodes), the dual y~ (edges) or x~ = B y~ (nodes) with the exact marginal variances (and, on node
/// domains, the exact covariances across every edge), checkpoint by checkpoint, and returns z-scores, the
/// split-half error Eu with its standard error, and a verdict at a stated false-alarm probability for the
/// whole report.
///
/// The truth is an input (ExactTruth): this layer does not factorize. Compute it with truth/exact.hpp, e.g.
/// `CholeskyFactor(model.primal_precision()).selected_inverse(Q)` gives diag(Q^-1) and Cov(X_u, X_v) of
/// every edge; marginal_variances(model, Domain::Dual) gives Var(y~_e); marginal_variances_dual_nodes() gives
/// Var(x~_v). docs/validate.md states the statistics, the false-alarm probability and the measured power.
///
/// The tests (per checkpoint, per coordinate; every p-value exact under the null for independent Gaussian
/// draws, the only kind a correct Gibbs sampler on this model produces):
///  - mean: z = (mean^ - mu) / sqrt(var / n), N(0, 1);
///  - marginal variance: (n - 1) S^2 / var ~ chi^2_{n-1}, two-sided;
///  - edge covariance (node domains, when the truth has it): the variance of c_head - c_tail,
///    Var = var_u + var_v - 2 Cov(u, v), tested the same way (chi^2_{n-1}); the covariance error
///    Cov^(u, v) - Cov(u, v) is reported next to it.
///  - global (one per checkpoint): g = mean over draws and coordinates of (c_v - mu_v)^2 / var_v, minus 1, which
///    is 0 under the null whatever the correlations. Its draws are cut into up to 64 groups (at least 16 draws
///    each); the second half's mean is tested against the scale estimated from the first half (independent of it),
///    after Wilson–Hilferty's cube root (Satterthwaite's chi^2_nu / nu), with Student t. It sees a defect spread
///    thinly over every coordinate (an unconverged sampler's too-small variances) long after every single
///    coordinate looks fine. Approximate: its calibration is measured (docs/validate.md).
/// Draws that are successive states of chains (DrawCheckpoint::chain_offsets) are not independent: there the
/// same statistics are tested by batch means (contiguous batches inside each chain, Student t with B - 1
/// degrees of freedom), and the effective sample size per coordinate is reported.
/// Every p-value is reported as the equivalent two-sided normal score z (|z| large = suspicious), and the
/// verdict is Bonferroni over all tests of all checkpoints: "not consistent" iff some p < alpha / tests, so
/// a correct sampler is called inconsistent with probability at most alpha (exactly so for the per-coordinate
/// tests of independent draws; the global test and batch means are approximations, calibrated by measurement).
///
/// \code
/// dualgibbs::Model m(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::CholeskyFactor f(m.primal_precision());
/// dualgibbs::ExactTruth truth =
///     dualgibbs::node_truth_from_selected_inverse(m, f.selected_inverse(m.primal_precision()));
/// dualgibbs::Draws draws{dualgibbs::DrawKind::Primal, {{100.0, samples, {}}}};  // samples: 100 x n
/// dualgibbs::ValidationReport r = dualgibbs::validate_draws(m, draws, truth);
/// std::cout << (r.consistent ? "consistent" : "not consistent") << "\n";
/// \endcode
// clang-format on

#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace dualgibbs {

/// What the draws are: the primal x (|V|), the dual y~ (|E|) or the dual's x~ = B y~ (|V|).
enum class DrawKind { Primal, DualEdges, DualNodes };

/// The name of a draw kind.
/// \param kind the kind
/// \return "primal", "dual-y" or "dual-x"
DUALGIBBS_EXPORT const char* to_string(DrawKind kind) noexcept;
/// Parses "primal" | "dual-y" | "dual-x".
/// \param name the kind's name
/// \return the kind
/// \throws std::invalid_argument otherwise.
DUALGIBBS_EXPORT DrawKind parse_draw_kind(const std::string& name);
/// Coordinates per draw: |V| for Primal and DualNodes, |E| for DualEdges.
/// \param model the model
/// \param kind what the draws are
/// \return the number of coordinates
DUALGIBBS_EXPORT Index draw_dimension(const Model& model, DrawKind kind) noexcept;
/// \param kind what the draws are
/// \return true for the kinds over nodes (Primal, DualNodes), whose edge covariances can be tested
inline bool is_node_kind(DrawKind kind) noexcept { return kind != DrawKind::DualEdges; }

/// The exact truth the draws are compared with, for the coordinates of one DrawKind.
struct ExactTruth {
  /// Exact marginal variance of every coordinate (length draw_dimension()): diag(Q^-1) for Primal,
  /// diag(R^-1) for DualEdges, Var(x~_v) = (B R^-1 B^T)_vv for DualNodes. Zero is allowed (x~ of an isolated
  /// node): such a coordinate is not tested but must then be constant in the draws.
  Eigen::VectorXd variance;
  /// Exact mean (length draw_dimension()); empty means zero (a model without observations).
  Eigen::VectorXd mean;
  /// Node kinds only: Cov(c_head(e), c_tail(e)) for every edge e (length |E|); empty if not available.
  Eigen::VectorXd edge_covariance;
};

/// The truth for a node kind from Q^-1 (Primal) or Cov(x~) (DualNodes) known on the pattern of Q (the
/// diagonal and every edge), e.g. CholeskyFactor::selected_inverse(Q).
/// \param model the model
/// \param inverse_on_pattern Q^-1 or Cov(x~), known on the pattern of Q
/// \return the variances and edge covariances (mean empty)
/// \throws std::invalid_argument unless `inverse_on_pattern` is |V| x |V|.
DUALGIBBS_EXPORT ExactTruth node_truth_from_selected_inverse(const Model& model,
                                                             const SparseMatrix& inverse_on_pattern);

/// The truth for x~ = B y~ (DualNodes) from the primal truth (Primal) by Woodbury [eq:cov_woodbury3]:
/// Cov(x~) = D_s^-1 - D_s^-1 Cov(X) D_s^-1, so Var(x~_v) = 1/s_v^2 - Var(X_v)/s_v^4 and
/// Cov(x~_u, x~_v) = -Cov(X_u, X_v) / (s_u^2 s_v^2). Zero-mean models only (the mean is left empty).
/// \param model the model
/// \param primal the truth for Primal
/// \return the truth for DualNodes
/// \throws std::invalid_argument if the primal truth has the wrong lengths or a mean.
DUALGIBBS_EXPORT ExactTruth dual_node_truth_from_primal(const Model& model, const ExactTruth& primal);

/// The draws of one checkpoint (sweep).
struct DrawCheckpoint {
  /// The sweep the draws were taken at (NaN if unknown).
  double sweep = std::numeric_limits<double>::quiet_NaN();
  /// dim x n, one draw per column.
  Eigen::MatrixXd draws;
  /// Empty: the columns are independent draws (one per chain, as at a checkpoint of an ensemble). Otherwise
  /// the columns are successive states of chains: chain k is columns [chain_offsets[k], chain_offsets[k+1]),
  /// the offsets starting at 0, increasing strictly and ending at n. Then batch means are used.
  std::vector<std::size_t> chain_offsets;
};

/// Draws to validate: their kind and one or more checkpoints.
struct Draws {
  DrawKind kind = DrawKind::Primal;         ///< what the draws are (x, y~ or x~)
  std::vector<DrawCheckpoint> checkpoints;  ///< one or more checkpoints, in sweep order
};

/// Options of validate_draws().
struct ValidateOptions {
  /// False-alarm probability of the whole report (0 < alpha < 1): a correct sampler's draws are called
  /// inconsistent with probability at most alpha (Bonferroni over every test of every checkpoint).
  double alpha = 1e-3;
  /// Batch count for successive states of chains; 0 = automatic: floor(sqrt(n)) clamped to [6, 1000]
  /// (and at most n). More batches give more power, longer batches more robustness to autocorrelation.
  std::size_t batches = 0;
  /// How many of the worst tests the report names.
  std::size_t worst = 10;
  /// Jackknife groups per half for the standard error of Eu (CovarianceErrorTracker).
  std::size_t jackknife_groups = 16;
  /// Threads the validator may use, counting the caller (0: available_threads(), core/machine.hpp). The numbers do
  /// not depend on it.
  unsigned threads = 0;
};

/// Fewest draws per checkpoint: a split-half error needs two halves of three.
inline constexpr std::size_t kMinValidationDraws = kMinSplitHalfChains;

/// Which statistic a test is about.
enum class ValidationTest { Mean, Variance, EdgeDifference, Global };
/// The name of a test.
/// \param test the test
/// \return "mean", "variance", "edge" or "global"
DUALGIBBS_EXPORT const char* to_string(ValidationTest test) noexcept;

/// One test of the report (a coordinate's mean or variance, or an edge difference's variance).
struct ValidationOffender {
  std::size_t checkpoint = 0;                               ///< index in ValidationReport::checkpoints
  double sweep = std::numeric_limits<double>::quiet_NaN();  ///< the checkpoint's sweep (NaN if unknown)
  ValidationTest test = ValidationTest::Mean;               ///< which test
  Index index = 0;      ///< the coordinate (node or edge id), for EdgeDifference the edge, for Global -1
  double z = 0;         ///< equivalent two-sided normal score (signed: > 0 means too large)
  double p = 1;         ///< two-sided p-value of this single test
  double estimate = 0;  ///< the sample value (mean, variance, variance of the difference)
  double exact = 0;     ///< its exact value
};

/// Summary of a vector of z-scores.
struct ZSummary {
  double max_abs = 0;  ///< max |z|
  double rms = 0;      ///< sqrt(mean z^2)
  Index argmax = -1;   ///< coordinate of max |z| (-1 if none was tested)
};

/// The result for one checkpoint.
struct CheckpointValidation {
  double sweep = std::numeric_limits<double>::quiet_NaN();  ///< the checkpoint's sweep (NaN if unknown)
  std::size_t draws = 0;                                    ///< n
  std::size_t chains = 0;        ///< independent chains: n; successive states: the number of chains
  bool sequential = false;       ///< successive states of chains (batch means) rather than independent draws
  std::size_t batches = 0;       ///< sequential: the batch count B (the t tests have B - 1 degrees of freedom)
  std::size_t batch_length = 0;  ///< sequential: the shortest batch
  double ess_min = std::numeric_limits<double>::quiet_NaN();     ///< sequential: smallest effective sample size
  double ess_median = std::numeric_limits<double>::quiet_NaN();  ///< sequential: median effective sample size
  Index ess_min_index = -1;               ///< sequential: the coordinate with the smallest effective sample size
  Eigen::VectorXd mean_z;                 ///< per coordinate (0 where not tested)
  Eigen::VectorXd variance_z;             ///< per coordinate
  Eigen::VectorXd variance_ratio;         ///< S^2 / exact variance per coordinate (NaN where the exact variance is 0)
  Eigen::VectorXd edge_z;                 ///< per edge (empty unless edge covariances were given)
  Eigen::VectorXd edge_covariance_error;  ///< Cov^(u, v) - Cov(u, v) per edge (empty unless given)
  /// The global test: g = mean over draws and tested coordinates of (c_v - mu_v)^2 / var_v, minus 1 (0 under the
  /// null whatever the correlations; < 0 when the sampler's variances are too small overall, as before
  /// convergence from a fixed start), its batch-means standard error and its normal score.
  double global_statistic = 0;
  double global_se = 0;                  ///< standard error of global_statistic (batch means)
  double global_z = 0;                   ///< global_statistic / global_se
  ZSummary mean;                         ///< the mean z-scores
  ZSummary variance;                     ///< the marginal-variance z-scores
  ZSummary edge;                         ///< the edge-difference variance z-scores
  double edge_covariance_error_max = 0;  ///< max |Cov^ - Cov| over edges
  double edge_covariance_error_rms = 0;  ///< RMS of Cov^ - Cov over edges
  /// The split-half error of the marginal variances (CovarianceErrorTracker, Diagonal): Eu, Eu_se, Eb, ...
  /// Primal metric (Var(X), via Woodbury [eq:cov_woodbury5]) for Primal and DualNodes; Var(y~) for DualEdges.
  ErrorEstimate error;
  std::size_t tests = 0;       ///< tests made at this checkpoint
  std::size_t degenerate = 0;  ///< coordinates with exact variance 0 (not tested)
  double min_p = 1;            ///< smallest p-value at this checkpoint
  bool consistent = true;      ///< no test of this checkpoint below the report's threshold
};

/// The whole report.
struct ValidationReport {
  DrawKind kind = DrawKind::Primal;               ///< what was validated
  double alpha = 1e-3;                            ///< false-alarm probability of the whole report
  std::size_t tests = 0;                          ///< all tests of all checkpoints
  double p_threshold = 0;                         ///< alpha / tests (Bonferroni)
  double z_threshold = 0;                         ///< the |z| that p_threshold corresponds to
  bool consistent = true;                         ///< no p-value below p_threshold
  std::vector<CheckpointValidation> checkpoints;  ///< per checkpoint, in the draws' order
  std::vector<ValidationOffender> worst;          ///< the smallest p-values over all tests, smallest first
  std::vector<std::string> notes;  ///< warnings a reader must see (short batches, degenerate coordinates)
  std::string method;              ///< one paragraph: the tests and the verdict rule
};

/// Streaming validation: the statistics of validate_draws() from draws fed block by block, so that draws that do
/// not fit in memory together (10^5 draws of a 10^4-node model are 8 GB) are validated in one pass over them, in
/// O((B + 32) (2 dim + |E|)) memory (B batches; 64 groups for independent draws). validate_draws() is this class fed
/// whole checkpoints.
///
/// Per checkpoint: begin_checkpoint() with the number of draws that will follow (it fixes the batches and the
/// split halves), add() the draws in order in blocks of any size, end_checkpoint(); then finish() for the report.
/// The sums are accumulated about a centre, the mean of the first block of the checkpoint, and moved to the
/// checkpoint's mean at the end (n delta delta^T subtracted): with the whole checkpoint in the first block this is
/// the two-pass algorithm; with a first block of k draws the centre is within about sd / sqrt(k) of the mean and
/// the rounding error is that of a two-pass sum (relative eps (1 + delta^2 / var)). The work of a block is spread
/// over the threads (ValidateOptions::threads) in fixed pieces (coordinates, edges, draws), so the numbers do not
/// depend on the thread count; they depend on the block sizes only through the centre (rounding level).
class DUALGIBBS_EXPORT DrawValidator {
 public:
  /// `model` must outlive the validator.
  /// \param model the model the draws should be of
  /// \param kind what the draws are
  /// \param truth the exact truth for `kind`
  /// \param options the false-alarm probability, batches and report size
  /// \throws std::invalid_argument for the truth and the options as validate_draws().
  DrawValidator(const Model& model, DrawKind kind, ExactTruth truth, const ValidateOptions& options = {});
  /// Frees the sums.
  ~DrawValidator();
  /// Moves the validator (the source is then spent).
  DrawValidator(DrawValidator&&) noexcept;
  /// Moves the validator (the source is then spent).
  /// \return this validator
  DrawValidator& operator=(DrawValidator&&) noexcept;

  /// Opens a checkpoint of `draws` draws taken at `sweep` (NaN if unknown); `chain_offsets` as in DrawCheckpoint
  /// (empty: independent draws; otherwise successive states of chains, batch means).
  /// \param draws the number of draws that will follow
  /// \param sweep the checkpoint's sweep
  /// \param chain_offsets the chains' column ranges, or empty
  /// \throws std::invalid_argument if a checkpoint is open, draws < kMinValidationDraws, the offsets are
  /// malformed or the sweep is infinite.
  void begin_checkpoint(std::size_t draws, double sweep = std::numeric_limits<double>::quiet_NaN(),
                        std::vector<std::size_t> chain_offsets = {});
  /// The next block.cols() draws of the open checkpoint (dim x k, one draw per column, in order).
  /// \param block the draws, one per column
  /// \throws std::invalid_argument if no checkpoint is open, the block has another dimension than
  /// draw_dimension(), more draws than announced arrive, or a value is NaN or infinite (naming the draw and the
  /// coordinate). After an exception the validator is spent.
  void add(const Eigen::Ref<const Eigen::MatrixXd>& block);
  /// Closes the open checkpoint and computes its tests. \throws std::invalid_argument if fewer draws than announced
  /// were added or no checkpoint is open.
  void end_checkpoint();
  /// The report over every closed checkpoint; the validator is spent.
  /// \return the report
  /// \throws std::invalid_argument if a checkpoint is open or none was closed.
  ValidationReport finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Validates draws against the exact truth (see the file comment for the tests and the verdict).
/// Work: O(n (dim + |E|)) per checkpoint plus the split-half error (O(n dim)); memory O(B dim) beyond the draws.
/// \throws std::invalid_argument if there is no checkpoint, a checkpoint has fewer than kMinValidationDraws
/// draws or another dimension than draw_dimension(model, kind), a draw is NaN or infinite, chain_offsets
/// are malformed, the truth has the wrong lengths or non-finite or negative variances, edge covariances are
/// given for DualEdges or make an edge difference's variance non-positive, or an option is out of range.
/// \param model the model the draws should be of
/// \param draws the draws' kind and checkpoints
/// \param truth the exact truth for the draws' kind
/// \param options the false-alarm probability, batches and report size
/// \return the tests per checkpoint and the verdict
DUALGIBBS_EXPORT ValidationReport validate_draws(const Model& model, const Draws& draws, const ExactTruth& truth,
                                                 const ValidateOptions& options = {});

}  // namespace dualgibbs
