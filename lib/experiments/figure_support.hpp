#pragma once
// Private: what the figures share beyond the convergence measurement: the stopwatch, option checks and
// progress scaling, the prologue and epilogue of a figure, the parameters every figure records, and the
// mean-decay run of fig10 and the rate benchmark.
#include <dualgibbs/experiments/experiments.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dualgibbs::detail {

/// Wall-clock stopwatch.
class Stopwatch {
 public:
  Stopwatch() : m_start(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(); }

 private:
  std::chrono::steady_clock::time_point m_start;
};

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
/// Records a convergence run's settings.
void add_settings_parameters(ExperimentResult& r, const ConvergenceSettings& cs);
/// Settings of a figure's convergence run: these counts and seed, the options' threads.
ConvergenceSettings settings_for(const ExperimentOptions& opt, std::size_t chains, std::size_t sweeps,
                                 std::uint64_t seed);
/// Records a run's sampling times and ns per update, names prefixed with `prefix`.
void add_run_timings(ExperimentResult& r, const ConvergenceCurves& c, const std::string& prefix = "");

/// The prologue of every figure: its options checked before any work, its name and title set, the parameters
/// every figure shares recorded. The figure starts its own clock first and ends with finish().
ExperimentResult start_figure(const std::string& name, std::string title, const ExperimentOptions& opt);
/// The epilogue of every experiment: its total wall time.
ExperimentResult finish(ExperimentResult res, const Stopwatch& total);

/// Keeps only the rows fitted from `from`.
std::vector<RateComparison> only(const std::vector<RateComparison>& rows, const std::string& from);
/// A note for every rate row without a fit.
void note_missing_fits(ExperimentResult& r);

/// Both domains' single-model convergence figure (fig6, fig11, run_convergence): table, rates, timings, summary.
void single_model_convergence(ExperimentResult& res, const Model& model, const Eigen::MatrixXd& target,
                              const ConvergenceSettings& cs, const ExperimentOptions& opt);

/// Mean-decay run: `chains` chains from a large random initial vector (the same for every chain), the
/// norm of the ensemble mean and its split-half noise at every sweep, fitted with fit_mean(). The
/// big start gives a long clean geometric window; the mean decays exactly as the expected Gibbs operator.
/// For the dual the observer sees y~; `x_tilde_fit` receives the fit of x~ = B y~; `seconds` (if given) is
/// increased by the sampling time.
RateFit mean_decay(const Model& m, Domain domain, std::size_t chains, std::size_t sweeps, std::uint64_t seed,
                   unsigned threads, ChainGroup* group, RateFit* x_tilde_fit = nullptr, double* seconds = nullptr);

}  // namespace dualgibbs::detail
