#pragma once
// Private: what every experiment's result shares, in libdualgibbs (run_convergence) and in the paper's figures
// (dualgibbs::paper, lib/paper/): the stopwatch, the recorded settings and timings of a convergence run, the notes of
// missing fits, the single-model convergence figure and the epilogue. The functions are exported for dualgibbs::paper,
// which is built with the library; their header is not installed.
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/export.hpp>

#include <chrono>
#include <string>

namespace dualgibbs::detail {

/// Wall-clock stopwatch.
class Stopwatch {
 public:
  Stopwatch() : m_start(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(); }

 private:
  std::chrono::steady_clock::time_point m_start;
};

/// Records a convergence run's settings.
DUALGIBBS_EXPORT void add_settings_parameters(ExperimentResult& r, const ConvergenceSettings& cs);
/// Records a run's sampling times and ns per update, names prefixed with `prefix`.
DUALGIBBS_EXPORT void add_run_timings(ExperimentResult& r, const ConvergenceCurves& c, const std::string& prefix = "");

/// The epilogue of every experiment: its total wall time.
DUALGIBBS_EXPORT ExperimentResult finish(ExperimentResult res, const Stopwatch& total);

/// A note for every rate row without a fit.
DUALGIBBS_EXPORT void note_missing_fits(ExperimentResult& r);

/// Both domains' single-model convergence figure (fig6, fig11, run_convergence): table, rates, timings, summary.
/// Progress messages are prefixed with the result's name.
DUALGIBBS_EXPORT void single_model_convergence(ExperimentResult& res, const Model& model, const Eigen::MatrixXd& target,
                                               const ConvergenceSettings& cs, const ProgressFn& progress);

}  // namespace dualgibbs::detail
