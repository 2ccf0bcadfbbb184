#pragma once
/// \file figures.hpp
/// The paper's Section VII as a library of its own, dualgibbs::paper (CMake target `dualgibbs::paper`, on top of
/// `dualgibbs::dualgibbs`): every figure (fig5 ... fig11), the time-to-accuracy study (`accuracy`), the
/// spectral-rate benchmark (`rates`) and the accelerated samplers (`accel`) run here and return an
/// ExperimentResult (experiments/experiments.hpp, whose conventions every convergence figure follows), so the
/// command line (`dualgibbs reproduce`), the Python module, the tests and users share one implementation. Each figure
/// is a short specification (its model, quick and full sizes, start and recorded parameters) run by one driver that
/// does what every figure shares (the option checks, the common parameters, the convergence settings, the timing), with
/// the figure's own computation beside it.
///
/// \code
/// dualgibbs::ExperimentOptions opt;
/// opt.quick = true;
/// dualgibbs::ExperimentResult r = dualgibbs::run_experiment("fig6", opt);
/// r.table.write_csv(std::cout);
/// for (const auto& row : r.rates) std::cout << row.label << " " << row.predicted << " " << row.fit.neg_log_rate <<
/// "\n"; \endcode

#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/paper/export.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs {

/// Options shared by every experiment.
struct ExperimentOptions {
  bool quick = false;      ///< a reduced run (fewer chains, sweeps, graphs) for tests and previews
  std::uint64_t seed = 1;  ///< master seed: every ensemble, random graph and parameter draw derives from it
  unsigned threads = 0;    ///< threads of the samplers and the estimators; 0 = available_threads() (core/machine.hpp)
  /// The processes sharing the figure's chains and estimators (chain_group.hpp; e.g. MPI ranks), or null for this
  /// process alone. With a group of two or more the run is collective and its results bitwise those of one process.
  ChainGroup* group = nullptr;
  /// Override the figure's number of chains (fig5: samples; rates: the mean fits' chains); 0 = the figure's
  /// default, else at least kMinSplitHalfChains (std::invalid_argument otherwise).
  std::size_t chains = 0;
  std::size_t sweeps = 0;  ///< override the figure's number of sweeps (0 = the figure's default)
  /// Run the figure with the settings of the authors' published code and result files (Theborna/dual_gibbs:
  /// starts, parameter ranges, sigma, fig7's graphs and parameter draws, fig8's edge order of the torus;
  /// docs/reproducing.md lists them per figure) instead of the paper's text. The sidecar's `preset` parameter says
  /// which ran.
  bool as_published = false;
  /// Override the start of the figure's chains (fig5's dual samplers and every convergence run;
  /// InitialState::Constant or InitialState::Random; unset = the preset's start). The mean-decay runs of fig10
  /// and rates keep their large given start.
  std::optional<InitialState> init;
  std::optional<double> init_value;  ///< override the constant of InitialState::Constant (unset = the preset's)
  /// Override the scale K of InitialState::Random, N(0, K^2 diag(M)^-1) (unset = the preset's).
  std::optional<double> init_scale;
  ProgressFn progress;  ///< may be empty
};

/// One entry of the figure table: a name, one line saying what it reproduces, and the function that runs it.
struct Figure {
  std::string name;                                                     ///< "fig6"
  std::string description;                                              ///< one line: what it reproduces
  ExperimentResult (*run)(const ExperimentOptions& options) = nullptr;  ///< runs the figure (run_fig6, ...)
};

/// The figure table, in the paper's order (fig5, fig6, fig7, fig8, fig9, fig10, fig11, then accuracy, rates, accel):
/// the one list from which experiment_names(), experiment_description(), run_experiment() and `dualgibbs reproduce`
/// (its list, help and dispatch) come. Adding a figure means adding its run function and one entry here.
/// \return the figure table
DUALGIBBS_PAPER_EXPORT const std::vector<Figure>& figures();
/// The entry named `name`. \throws std::invalid_argument for an unknown name, listing the known ones.
/// \param name the figure's name
/// \return its entry
DUALGIBBS_PAPER_EXPORT const Figure& find_figure(const std::string& name);

/// The names of figures(), in its order.
/// \return the names
DUALGIBBS_PAPER_EXPORT std::vector<std::string> experiment_names();
/// find_figure(name).description. \throws std::invalid_argument for an unknown name.
/// \param name the figure's name
/// \return its one-line description
DUALGIBBS_PAPER_EXPORT std::string experiment_description(const std::string& name);
/// Runs the named experiment. \throws std::invalid_argument for an unknown name (listing the known ones)
/// or bad options (every run_figN() checks its options the same way).
/// \param name the figure's name
/// \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_experiment(const std::string& name, const ExperimentOptions& options);

/// fig5 (the published Fig. 5): variance conservation [eq:cov_woodbury] on an 8x8 torus, s = 1, sigma = 0.3, from 10^5
/// dual samples (independent chains after a burn-in), 10^4 bootstrap replicates of ||Delta||_F / sqrt(|V|). Main table:
/// `replicate, error`; extra table `matrices`: `i, j, primal, dual, residual`. \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig5(const ExperimentOptions& options);
/// fig6 (the published Figs. 6 and 7): primal vs dual error against sweeps and time, 10x10 torus, s = 1, sigma = 0.1,
/// 10^4 chains, 200 sweeps, full covariance every sweep. \param options the shared options \return the tables, rates,
/// parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig6(const ExperimentOptions& options);
/// fig7 (the published Fig. 8): 64 heterogeneous Watts–Strogatz graphs WS(64, 4, 0.3), s_v ~ U(0.8, 1.2), sigma_e ~
/// U(0.2, 0.3): mean and +-1 sd band of the normalised Eu. \param options the shared options \return the tables, rates,
/// parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig7(const ExperimentOptions& options);
/// fig8 (the published Fig. 9): scan orders (random, permutation, fixed) on the 10x10 torus, s = 1, sigma = 0.1.
/// \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig8(const ExperimentOptions& options);
/// fig9 (the published Fig. 10): random k-regular graphs, |V| = 64, s = 1, sigma = 0.25, k in {2, 4, 8, 16, 32}.
/// \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig9(const ExperimentOptions& options);
/// fig10 (the published Fig. 11): complete graph K5, -ln r against s/sigma (16 ratios from 0.01 to 100), primal and
/// dual, with the spectral and asymptotic theory and the limit lambda_2 / 2 = 2.5. \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig10(const ExperimentOptions& options);
/// fig11 (the published Fig. 12): 100x100 torus, s = 1, sigma = 0.25, 600 chains, 50 sweeps: marginal-variance error
/// against the closed form [eq:torus_true_var]. \param options the shared options \return the tables, rates, parameters
/// and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_fig11(const ExperimentOptions& options);
/// Spectral-rate benchmark: for each family of the paper at two or three sizes and several s/sigma, the
/// predicted r_p, r_d, r_d^eff beside the rates fitted from the samplers' mean and error decay.
/// \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_rates(const ExperimentOptions& options);
/// `reproduce accuracy`: time_to_accuracy() on `torus:10` sigma 0.1 (fig6's model), `kregular:64,4`, `torus:30`
/// sigma 0.25, `complete:50` sigma 0.1 (s/sigma = 10), `torus:100`, `kregular:10000,4` and `torus3:20` sigma 0.25,
/// every method and primal with cheby-ssor (`primal_cheby_ssor_*`), targets 1% and 0.1%, 5 replicates, 60 s budget
/// (quick: the first two graphs, 5%, 2 replicates, 2 s).
/// The full-size graphs of the time-to-accuracy benchmark (`torus:1000`, `kregular:100000,32`, `torus3:50`) are in
/// bench/bench_accuracy. Summary: `speedup_dual_cv_over_primal_GRAPH` at the first target where both reached it,
/// `dual_cv_worst_achieved_over_target`.
/// \param options the shared options
/// \return the table, summary, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_accuracy(const ExperimentOptions& options);
/// Accelerated samplers: on torus:100 (100 chains), torus:1000 (16 chains) and kregular:10000,4 (100
/// chains), s = 1, sigma = 0.25 (quick: torus:16 and kregular:256,4, 40 chains), omega = 1.5, random-scan Gibbs, SSOR
/// and Chebyshev-SSOR, primal x and dual x~ = B y~: the norm of the ensemble mean from a large fixed start and the
/// covariance error from 0, against iterations, sweep-equivalents (2 per SSOR iteration) and CPU seconds, with the
/// predicted mean decay beside it. Main table (label column `series`, "GRAPH SCHEME DOMAIN", e.g. "torus:100
/// cheby-ssor primal"): `iteration, sweep_equivalents, cpu_seconds, mean_error, mean_floor, predicted_error` (errors
/// relative to the start); extra table `rates`: predicted and fitted -ln r per iteration and per sweep-equivalent,
/// and the iterations, sweep-equivalents and CPU seconds to a mean error of 1e-6; `covariance`: `iteration,
/// sweep_equivalents, cpu_seconds, cov_error, cov_floor` with cov_error = 1 - sum_S var^ / sum_S Var over a fixed
/// subset S of min(|V|, 2000) evenly spaced nodes (the ensemble's sample variance against selected inversion);
/// `exact` (label `graph`): CHOLMOD's CPU seconds to factorize each domain's precision and per exact draw.
/// \param options the shared options
/// \return the tables, rates, parameters and timings
DUALGIBBS_PAPER_EXPORT ExperimentResult run_accel(const ExperimentOptions& options);

}  // namespace dualgibbs
