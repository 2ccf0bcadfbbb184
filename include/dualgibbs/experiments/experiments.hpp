#pragma once
/// \file experiments.hpp
/// The primal-vs-dual convergence measurement of the paper's Section VII and the result type of an experiment: the
/// building blocks of `dualgibbs converge` (run_convergence()) and of the paper's figures, which are a library of
/// their own (dualgibbs::paper, paper/figures.hpp). A result carries its main table (CSV columns named like the
/// paper's own result files: `sweep, Eb_primal, Eu_primal, Eb_dual, Eu_dual, time_primal, time_dual, ...`), any
/// further tables, the predicted-versus-fitted rate table, every parameter and the timings.
///
/// Conventions of every convergence experiment (documented once here):
///  - chains run with run_ensemble(), independent schedules (lockstep = 1: the split-half estimator needs
///    independent chains), the random sweep unless the figure is about scan orders, and the paper's
///    constant initial vector (init_value 1) unless stated;
///  - primal chains are observed as x, dual chains as x~ = B y~; both are scored against the same exact
///    Cov(X) (the dual through Woodbury [eq:cov_woodbury3]) with CovarianceErrorTracker;
///  - times are the sampler's wall-clock time (the observers' accumulation excluded);
///  - decay rates are fitted by fit_decay_rate() (Theil–Sen, window from sweep 1 to the noise floor
///    3 x Eu_se), as -ln r per sweep with the paper's convention E ~ r^(2t); predictions are
///    convergence_rates() from the spectra, next to the paper's closed forms where they apply.
///
/// \code
/// const dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::ConvergenceSettings cs;
/// cs.chains = 1000;
/// cs.sweeps = 40;
/// dualgibbs::ExperimentResult r = dualgibbs::run_convergence(model, "torus10", "torus:10x10", cs);
/// r.table.write_csv(std::cout);
/// for (const auto& row : r.rates) std::cout << row.label << " " << row.predicted << " " << row.fit.neg_log_rate <<
/// "\n"; \endcode

#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

/// A table of numbers: named columns, one row per point, optionally led by one text column (a label per
/// row, e.g. the graph of a row of the rate benchmark).
class DUALGIBBS_EXPORT Table {
 public:
  Table() = default;
  /// Numeric columns only. \throws std::invalid_argument for an empty or repeated column name.
  /// \param columns the numeric columns' names
  explicit Table(std::vector<std::string> columns);
  /// A text column named `label_column` (non-empty) first, then the numeric columns.
  /// \param label_column the text column's name
  /// \param columns the numeric columns' names
  Table(std::string label_column, std::vector<std::string> columns);

  /// The numeric columns' names.
  /// \return the names
  const std::vector<std::string>& columns() const noexcept { return m_columns; }
  /// The text column's name ("" if none).
  /// \return the name, or ""
  const std::string& label_column() const noexcept { return m_label_column; }
  /// The number of rows.
  /// \return the rows
  std::size_t num_rows() const noexcept { return m_rows.size(); }
  /// The numeric values, row by row (each row as long as columns()).
  /// \return the rows' values
  const std::vector<std::vector<double>>& rows() const noexcept { return m_rows; }
  /// The text column's value of each row (empty if the table has no label column).
  /// \return the labels
  const std::vector<std::string>& labels() const noexcept { return m_labels; }
  /// Appends a row. \throws std::invalid_argument if its length differs from the number of columns.
  /// \param row one value per numeric column
  void add_row(std::vector<double> row);
  /// Appends a labelled row (tables with a label column).
  /// \param label the row's text
  /// \param row one value per numeric column
  void add_row(std::string label, std::vector<double> row);
  /// Index of a numeric column. \throws std::invalid_argument if there is no such column.
  /// \param name the column's name
  /// \return its index in columns()
  std::size_t column_index(const std::string& name) const;
  /// True if there is a numeric column called `name`.
  /// \param name the column's name
  /// \return true if it exists
  bool has_column(const std::string& name) const noexcept;
  /// All values of a numeric column.
  /// \param name the column's name
  /// \return its values, one per row
  std::vector<double> column(const std::string& name) const;
  /// CSV: a header line of column names, then one line per row, values with 10 significant digits
  /// (NaN written as `nan`; labels quoted if they contain a comma or a quote).
  /// \param out where the CSV goes
  void write_csv(std::ostream& out) const;

 private:
  std::string m_label_column;
  std::vector<std::string> m_columns;
  std::vector<std::vector<double>> m_rows;
  std::vector<std::string> m_labels;
};

/// One line of a predicted-versus-fitted rate table; rates are -ln r per sweep.
struct RateComparison {
  std::string label;         ///< what was measured, e.g. "primal", "dual x~ (effective)", "k=8 dual"
  std::string fitted_from;   ///< "Eu" (split-half covariance error) or "mean" (norm of the ensemble mean)
  std::string predicted_by;  ///< "r_p", "r_d" or "r_d^eff": the spectral rate it is compared with
  double predicted = std::numeric_limits<double>::quiet_NaN();    ///< -ln r from convergence_rates()
  double closed_form = std::numeric_limits<double>::quiet_NaN();  ///< -ln r from Prop. 1/4/5 (NaN if none applies)
  RateFit fit;                                                    ///< the measurement
  /// fitted / predicted - 1 (NaN without both).
  /// \return fitted / predicted - 1
  double relative_disagreement() const noexcept { return fit.neg_log_rate / predicted - 1.0; }
};

/// Everything one experiment produced.
struct ExperimentResult {
  std::string name;   ///< "fig6"
  std::string title;  ///< one line: what the figure shows
  Table table;        ///< the main table (FIG.csv)
  /// Further tables, written as FIG_<suffix>.csv (fig5's matrices, fig9's theory lines, ...).
  std::vector<std::pair<std::string, Table>> extra_tables;
  std::vector<RateComparison> rates;  ///< predicted vs fitted
  /// Headline numbers with their names (fig5's mean residual, ...).
  std::vector<std::pair<std::string, double>> summary;
  /// Every parameter of the run as text (for the JSON sidecar).
  std::vector<std::pair<std::string, std::string>> parameters;
  /// Named timings in seconds (sampling, exact truth, spectra, total).
  std::vector<std::pair<std::string, double>> timings;
  /// Remarks a reader must see (e.g. a graph re-drawn to be connected, a rate without a clean window).
  std::vector<std::string> notes;
};

/// Progress callback: a short stage description and the fraction done in [0, 1]. Called from the
/// calling thread.
using ProgressFn = std::function<void(const std::string& stage, double fraction)>;

// ---- the convergence measurement (`dualgibbs converge` and the paper's figures) ---------------------------

/// How measure_convergence() makes the control variate's sums (ConvergenceSettings::cv_sums).
enum class CvSums {
  Auto,   ///< Mapped for a full covariance target when it costs fewer flops, else Built
  Built,  ///< from the control variate's terms at every checkpoint
  Mapped  ///< mapped from the dual tracker's full sums (full covariance targets only)
};

/// Settings of a primal-vs-dual convergence measurement.
struct ConvergenceSettings {
  std::size_t chains = 10000;                  ///< chains per domain (at least kMinSplitHalfChains)
  std::size_t sweeps = 200;                    ///< sweeps per chain
  std::size_t checkpoint_every = 1;            ///< errors are scored every this many sweeps (and at the last)
  ScanOrder scan = ScanOrder::Random;          ///< scan order of both samplers
  InitialState init = InitialState::Constant;  ///< initial state of every chain
  double init_value = 1.0;                     ///< InitialState::Constant: every coordinate's value
  double init_scale = 1.0;                     ///< InitialState::Random: N(0, init_scale^2 diag(M)^-1)
  Eigen::VectorXd given_primal;                ///< InitialState::Given: the primal chains' state x (length |V|)
  Eigen::VectorXd given_dual;                  ///< InitialState::Given: the dual chains' state y~ (length |E|)
  std::uint64_t seed = 1;                      ///< the ensembles' seed (the results do not depend on the thread count)
  unsigned threads = 0;                        ///< threads (0 = available_threads(), core/machine.hpp)
  /// The processes sharing the chains and the scoring (chain_group.hpp), or null for this process alone; with a
  /// group of two or more measure_convergence() is collective (see deferred_bytes).
  ChainGroup* group = nullptr;
  std::size_t jackknife_groups = 16;  ///< jackknife groups per half, for the standard errors
  /// Also score the dual chains through the Chebyshev potential-flow control variate (estimation/flow_cv.hpp):
  /// ConvergenceCurves::dual_cv and the table columns Eb_dual_cv, Eu_dual_cv, Eb_se_dual_cv, Eu_se_dual_cv. A full
  /// covariance target needs the dense energy matrix (at most 5000 nodes).
  bool control_variate = false;
  /// How the control variate's sums are made for a full covariance target: from its terms u = r_k(Q) D_s x~ at every
  /// checkpoint (Built: the sparse map per chain, then the rank-one updates), or mapped from the dual tracker's sums
  /// by the dense map (Mapped: CovarianceErrorTracker::observe_batch's Mapped, 4 |V|^3 flops per group of chains);
  /// Auto takes the one of fewer flops. The two agree within rounding, not bitwise; each is bitwise the same for any
  /// thread count and over any chain group. Marginal variances are always Built (Mapped is then refused).
  CvSums cv_sums = CvSums::Auto;
  /// The primal chains' sweep scheme (accelerated.hpp; default: Gibbs with `scan`). A sweep of ssor or cheby-ssor
  /// is one iteration (2n site updates); the rate table then predicts from ssor_rate / chebyshev_ssor_rate.
  SchemeOptions scheme_primal;
  /// The dual chains' sweep scheme (its spectrum is that of R).
  SchemeOptions scheme_dual;
  /// Over the members of a chain group (MPI ranks): memory, in bytes per member, for deferred scoring. A member
  /// keeps its share of the states (and control-variate terms) of as many checkpoints as fit after about 96 MiB for
  /// the scoring itself, then scores them together (CovarianceErrorTracker::observe_batch), so the members sweep
  /// without waiting for each other at every checkpoint. The checkpoints are fixed in advance and nothing steers the
  /// run, so the results are bitwise those of scoring each checkpoint at once. If fewer than two checkpoints fit (or
  /// 0), every checkpoint is exchanged as it comes. Unused in one process.
  std::size_t deferred_bytes = std::size_t{256} << 20;
  /// With a group of two or more: every chain's graph cut over the members instead of the chains
  /// (run_partitioned(), sampling/partition.hpp; the schemes must be colour-ordered: SchemeKind::Colored, or ssor /
  /// cheby-ssor with colored_order). Every member then sees every chain's states and scores them alone, so the
  /// curves are bitwise those of one process with the same schemes.
  bool split_graph = false;
  /// split_graph: the member of every node (empty: METIS's cut, partition_graph()).
  std::vector<int> partition;
};

/// Both domains' error curves on one model.
struct ConvergenceCurves {
  std::vector<ErrorEstimate> primal;   ///< the primal sampler's errors, one per checkpoint
  std::vector<ErrorEstimate> dual;     ///< the dual sampler's errors (through Woodbury), one per checkpoint
  std::vector<ErrorEstimate> dual_cv;  ///< the dual chains through the flow control variate (if requested)
  int cv_degree = 0;                   ///< its Chebyshev degree
  bool cv_sums_mapped = false;         ///< its sums were mapped from the dual's (ConvergenceSettings::cv_sums)
  EnsembleStats primal_stats{};        ///< timing of the primal ensemble
  EnsembleStats dual_stats{};          ///< timing of the dual ensemble
  MomentKind kind = MomentKind::Full;  ///< full covariance or marginal variances, as the target
  double seconds = 0;                  ///< wall time of both runs including the accumulation
  /// Over the members of a chain group: the checkpoints scored per exchange of the trackers' sums
  /// (ConvergenceSettings::deferred_bytes; 1 = every checkpoint as it comes). 0 in one process.
  std::size_t checkpoints_per_exchange = 0;
};

/// Runs both samplers on `model` and scores every checkpoint against `target`: the exact Cov(X)
/// (|V| x |V|, full covariance errors) or the exact marginal variances (|V| x 1, diagonal errors).
/// `label` prefixes progress messages. \throws std::invalid_argument for bad settings (fewer than
/// kMinSplitHalfChains chains, zero sweeps, a target of the wrong size or with non-finite entries, a graph
/// without edges, and every check of run_ensemble() and CovarianceErrorTracker).
/// \param model the model
/// \param target the exact Cov(X) (|V| x |V|) or marginal variances (|V| x 1)
/// \param settings chains, sweeps, starts, schemes, seed, threads
/// \param progress called with progress (may be empty)
/// \param label prefix of the progress messages
/// \return both domains' error curves
DUALGIBBS_EXPORT ConvergenceCurves measure_convergence(const Model& model, const Eigen::MatrixXd& target,
                                                       const ConvergenceSettings& settings,
                                                       const ProgressFn& progress = {}, const std::string& label = "");

/// The exact target for a model: Cov(X) (dense) if |V| <= max_full_nodes, else diag(Q^-1) by selected
/// inversion (a |V| x 1 matrix); max_full_nodes <= 0 always gives the marginal variances.
/// \param model the model
/// \param max_full_nodes the largest |V| for a full covariance
/// \return Cov(X) or diag(Q^-1)
DUALGIBBS_EXPORT Eigen::MatrixXd exact_target(const Model& model, Index max_full_nodes = 2000);

/// The paper's convergence table of one model (with `Eb_dual_cv, Eu_dual_cv, Eb_se_dual_cv, Eu_se_dual_cv` after
/// the other columns when the curves have the control variate): `sweep, Eb_primal, Eu_primal, Eb_dual, Eu_dual,
/// time_primal, time_dual`, then the uncertainty and mean columns `Eb_floor_*`, `Eb_se_*`, `Eu_se_*`,
/// `mean_*`, `mean_floor_*` and the normalised `Eu_norm_*` (Eu divided by its sweep-0 value).
/// \param curves both domains' error curves
/// \return the table
DUALGIBBS_EXPORT Table convergence_table(const ConvergenceCurves& curves);

/// Predicted-vs-fitted rows for both domains of one model: fits of Eu (exponent 2) and of the mean
/// (exponent 1), compared with r_p (primal) and r_d^eff (dual x~; r_d where r_d^eff is undefined).
/// `prefix` is prepended to the labels.
/// \param model the model
/// \param curves both domains' error curves
/// \param prefix prepended to the labels
/// \return the rows
DUALGIBBS_EXPORT std::vector<RateComparison> compare_rates(const Model& model, const ConvergenceCurves& curves,
                                                           const std::string& prefix = "");

/// Replaces the predictions of the rows of compare_rates() whose domain runs an accelerated scheme by that scheme's
/// predicted factor per iteration (ssor_rate, chebyshev_ssor_rate; predicted_by "ssor" or "cheby-ssor", no closed
/// form; NaN for ssor without a computed spectrum). Rows of Gibbs domains are unchanged.
/// \param rows the rows of compare_rates(), updated in place
/// \param primal the primal chains' scheme
/// \param dual the dual chains' scheme
DUALGIBBS_EXPORT void predict_scheme_rates(std::vector<RateComparison>& rows, const SchemeOptions& primal,
                                           const SchemeOptions& dual);

/// A primal-vs-dual convergence experiment on any model (`dualgibbs converge`, the default run): the exact
/// target exact_target(model, max_full_nodes), measure_convergence(), convergence_table() and
/// compare_rates(), as an ExperimentResult named `name`. `graph` describes the graph for the record.
/// \param model the model
/// \param name the result's name
/// \param graph the graph's description, for the record
/// \param settings chains, sweeps, starts, schemes, seed, threads
/// \param max_full_nodes the largest |V| for a full covariance target
/// \param progress called with progress (may be empty)
/// \return the table, rates, parameters and timings
DUALGIBBS_EXPORT ExperimentResult run_convergence(const Model& model, const std::string& name, const std::string& graph,
                                                  const ConvergenceSettings& settings, Index max_full_nodes = 2000,
                                                  const ProgressFn& progress = {});

/// A fixed-width text table of rate comparisons (predicted, closed form, fitted, window, disagreement).
/// \param rates the rows
/// \return the text table
DUALGIBBS_EXPORT std::string format_rate_table(const std::vector<RateComparison>& rates);

}  // namespace dualgibbs
