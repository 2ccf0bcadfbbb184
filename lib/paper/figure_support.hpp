#pragma once
// Private: what the figures share beyond the convergence measurement (experiments/experiment_support.hpp): option
// checks and progress scaling, the prologue of a figure, the parameters every figure records, and the mean-decay run
// of fig10 and the rate benchmark.
#include <dualgibbs/paper/figures.hpp>

#include "experiments/experiment_support.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs::detail {

/// Checks the options every experiment shares. \throws std::invalid_argument naming `name` for a chain
/// count override below kMinSplitHalfChains, a given-state init, a non-finite init_value or an init_scale
/// that is not finite and positive.
void check_options(const std::string& name, const ExperimentOptions& options);

/// Sets the start of a figure's convergence chains: the preset's `init`, `value` (constant) and `scale` (random),
/// each replaced by the options' override when given. \throws std::invalid_argument for an init_scale override
/// when the start is not random.
void apply_start(ConvergenceSettings& cs, const ExperimentOptions& opt, InitialState init, double value = 1.0,
                 double scale = 1.0);

/// Scales a progress callback into [lo, hi) of a larger task and prefixes its stage.
ProgressFn sub_progress(const ProgressFn& parent, double lo, double hi, const std::string& prefix = "");

/// The figure's default count, or the option's override when it is non-zero.
std::size_t pick(std::size_t override_value, bool quick, std::size_t quick_value, std::size_t full_value);

/// Records the options every figure shares (quick, seed, threads, lockstep).
void add_common_parameters(ExperimentResult& r, const ExperimentOptions& opt);
/// Records the graph and the homogeneous parameters s, sigma of a figure's model.
void add_model_parameters(ExperimentResult& r, const std::string& graph, double s, double sigma);
/// Settings of a figure's convergence run: these counts and seed, the options' threads.
ConvergenceSettings settings_for(const ExperimentOptions& opt, std::size_t chains, std::size_t sweeps,
                                 std::uint64_t seed);

/// The prologue of every figure: its options checked before any work, its name and title set, the parameters
/// every figure shares recorded. The figure starts its own clock first and ends with finish().
ExperimentResult start_figure(const std::string& name, std::string title, const ExperimentOptions& opt);

/// The homogeneous model of a figure: a graph (its load_model() spec, also the recorded `graph` parameter) with the
/// same s on every node and sigma on every edge.
struct FigureModel {
  std::string graph;
  double s = 1.0;
  double sigma = 1.0;
};

/// A count of a figure in its two sizes: the quick run's (`--quick`) and the full run's.
struct FigureSize {
  std::size_t quick = 0;
  std::size_t full = 0;
};

/// How a figure's convergence chains run. They start from the paper's text's constant 1, or under the as-published
/// preset from `published` (random starts of scale `scale`); the options' overrides replace either (apply_start()).
struct FigureChains {
  InitialState published = InitialState::Random;  ///< the start of the authors' code and result files
  double scale = 1.0;                             ///< the preset's scale K of a random start N(0, K^2 diag(M)^-1)
  bool control_variate = false;                   ///< also score the dual chains through the flow control variate
  std::uint64_t seed_salt = 0;                    ///< the seed derive_seed(seed, seed_salt); 0: each run sets its own
};

/// A figure as a specification: what the driver run_figure() needs for the prologue every figure shares.
struct FigureSpec {
  std::string name;                         ///< "fig6"
  std::string title;                        ///< one line: what the figure shows
  std::optional<FigureModel> model;         ///< its one homogeneous model, if it has one (recorded, then built)
  FigureSize chains;                        ///< chains (fig5: samples; rates: the mean fits'), else --chains
  FigureSize sweeps;                        ///< sweeps (fig5: the burn-in), else --sweeps
  std::optional<FigureChains> convergence;  ///< its convergence runs' settings, if it has them
  /// Parameters recorded after the model's and before the convergence settings.
  std::vector<std::pair<std::string, std::string>> parameters;

  FigureSpec(std::string name_, std::string title_, std::optional<FigureModel> model_, FigureSize chains_,
             FigureSize sweeps_, std::optional<FigureChains> convergence_ = std::nullopt,
             std::vector<std::pair<std::string, std::string>> parameters_ = {})
      : name(std::move(name_)),
        title(std::move(title_)),
        model(std::move(model_)),
        chains(chains_),
        sweeps(sweeps_),
        convergence(convergence_),
        parameters(std::move(parameters_)) {}
};

/// What a figure's own computation works with: the options, the result it fills and what the driver made of the spec.
struct FigureRun {
  const ExperimentOptions& opt;    ///< the options
  ExperimentResult& res;           ///< the result, its prologue done
  std::size_t chains = 0;          ///< the spec's chains for this size, or the override
  std::size_t sweeps = 0;          ///< the spec's sweeps for this size, or the override
  std::optional<Model> model;      ///< the spec's model, if it has one
  ConvergenceSettings settings{};  ///< the spec's convergence settings (chains, sweeps, start, seed), if it has them

  /// measure_convergence() of `model` against `target` with the settings, run `i` of `n` of the figure: its progress
  /// takes [i/n, (i + span)/n) of the figure's, its messages prefixed with `label`.
  ConvergenceCurves measure(const Model& model, const Eigen::MatrixXd& target, std::size_t i, std::size_t n,
                            const std::string& label, double span = 1.0) const;
};

/// A figure's own computation: it fills the result of the run.
using FigureBody = std::function<void(FigureRun& run)>;

/// Runs a figure: starts its clock and its result (start_figure()), records the model's parameters (graph, s, sigma)
/// and builds the model, records the spec's parameters, sets and records the convergence settings, runs `body`, and
/// ends with finish(). \throws std::invalid_argument for bad options (check_options(), apply_start()) and whatever
/// `body` throws.
ExperimentResult run_figure(const FigureSpec& spec, const ExperimentOptions& opt, const FigureBody& body);

/// A column of a figure over several convergence runs: its name (`prefix`, then the run's name) and its value at a
/// checkpoint: a field of the primal or the dual chains' error, or that field divided by its value at sweep 0.
struct CurveColumn {
  const char* prefix;
  double ErrorEstimate::*field;
  bool dual = false;
  bool normalised = false;
};

/// The table of a figure over several convergence runs (fig8, fig9): one row per checkpoint, the sweep, then every
/// column of every run, named with the run's name in `names`.
Table curves_table(const std::vector<ConvergenceCurves>& curves, const std::vector<std::string>& names,
                   const std::vector<CurveColumn>& columns);

/// Mean and standard deviation (divisor n - 1; 0 for one value) of the values.
void mean_and_sd(const std::vector<double>& v, double& mean, double& sd);

/// Keeps only the rows fitted from `from`.
std::vector<RateComparison> only(const std::vector<RateComparison>& rows, const std::string& from);

/// Mean-decay run: `chains` chains from a large random initial vector (the same for every chain), the
/// norm of the ensemble mean and its split-half noise at every sweep, fitted with fit_mean(). The
/// big start gives a long clean geometric window; the mean decays exactly as the expected Gibbs operator.
/// For the dual the observer sees y~; `x_tilde_fit` receives the fit of x~ = B y~; `seconds` (if given) is
/// increased by the sampling time.
RateFit mean_decay(const Model& m, Domain domain, std::size_t chains, std::size_t sweeps, std::uint64_t seed,
                   unsigned threads, ChainGroup* group, RateFit* x_tilde_fit = nullptr, double* seconds = nullptr);

}  // namespace dualgibbs::detail
