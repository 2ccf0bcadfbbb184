#pragma once
/// \file marginals.hpp
/// Marginal variances V_v = Var(X_v) of every node to a requested accuracy, by any of nine methods: the primal or
/// dual Gibbs sampler with plain estimators, the same with the flow control variates (estimation/flow_cv.hpp),
/// Monte Carlo with exact CHOLMOD draws, Rao-Blackwellized Monte Carlo from exact or Gibbs draws, probing with
/// conjugate gradients (estimation/probing.hpp), or selected inversion (exact); or by the one of them that a cheap
/// prediction says is fastest (MarginalMethod::Auto). The function behind `dualgibbs marginals`.
///
/// The sampling methods run independent chains (run_ensemble, random scan, random start N(0, diag(M)^-1)), discard
/// a burn-in, then evaluate every `every` sweeps and stop when the estimated relative standard error, RMS over
/// nodes, is below `rel_rmse`, or when `seconds` have passed. Standard errors come from the spread over the
/// independent chains (evaluations of one chain are averaged first), so they are honest for correlated
/// evaluations. The same seed gives the same result for any thread count when the run stops on its target (a
/// time budget stops wherever the clock says).
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::MarginalOptions o;
/// o.method = dualgibbs::MarginalMethod::DualCv;
/// o.rel_rmse = 0.01;
/// dualgibbs::MarginalResult r = dualgibbs::estimate_marginal_variances(model, o);   // r.estimate, r.std_error
/// \endcode

#include <dualgibbs/experiments/experiments.hpp>
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

/// How the marginal variances are estimated.
enum class MarginalMethod {
  Primal,    ///< primal Gibbs, sample variance mean(x_v^2)
  Dual,      ///< dual Gibbs, Woodbury plug-in s_v^2 - s_v^4 mean(x~_v^2)
  DualCv,    ///< dual Gibbs with the Chebyshev potential-flow control variate (certified bracket)
  PrimalCv,  ///< primal Gibbs with the Dirichlet control variate (certified bracket)
  Cholesky,  ///< Monte Carlo with exact draws from the CHOLMOD factor of Q (the standard sampling baseline)
  Exact,     ///< selected inversion of the CHOLMOD factor (no sampling error)
  /// Rao-Blackwellized Monte Carlo (Siden, Lindgren, Bolin and Villani 2018) from exact CHOLMOD draws:
  /// V_v = 1/Q_vv + mean(mu_v^2), mu_v = E[x_v | x_-v] = x_v - (Q x)_v / Q_vv; 1/Q_vv is a certified lower bound
  Rbmc,
  RbmcGibbs,  ///< the same estimator from primal Gibbs draws (the scheme of the primal methods)
  /// probing (estimation/probing.hpp): distance-k colourings, random signs per colour, Jacobi-preconditioned
  /// conjugate gradients; k chosen from two sign sets per k, then sign sets until the target
  Probing,
  /// the method predicted fastest for this model and target, from counts that do not depend on the machine's load:
  /// exact (the symbolic analysis's flops and factor non-zeros), probing (complete graphs, where one sign set at
  /// distance 1 is exact: a pilot solve's iterations), or the flow control variates (dual-cv, primal-cv without a
  /// dual: their burn-in, then their pilot's prediction, after which the run may still turn to exact).
  /// MarginalResult::choice says what was predicted; docs/accuracy.md, "The automatic method", gives the rule.
  Auto
};

/// "primal", "dual", "dual-cv", "primal-cv", "cholesky", "exact", "rbmc", "rbmc-gibbs", "probing" or "auto".
/// \throws std::invalid_argument otherwise.
/// \param name the method's name
/// \return the method
DUALGIBBS_EXPORT MarginalMethod parse_marginal_method(const std::string& name);
/// The name parse_marginal_method() accepts.
/// \param method the method
/// \return its name
DUALGIBBS_EXPORT const char* to_string(MarginalMethod method) noexcept;
/// Chains of the sampling methods when MarginalOptions::chains is 0.
inline constexpr std::size_t kAutoChains = 16;
/// Exact draws per batch of the cholesky and rbmc methods when MarginalOptions::chains is 0.
inline constexpr std::size_t kAutoCholeskyBatch = 100;

/// Options of estimate_marginal_variances().
struct MarginalOptions {
  MarginalMethod method = MarginalMethod::DualCv;  ///< the method
  double rel_rmse = 0.01;  ///< stop when the RMS over nodes of std_error / estimate is at most this (0: no target)
  double seconds = 0;      ///< stop after this much wall time (0: no budget); at least one of the two is set
  /// Independent chains (sampling methods) or draws per batch (cholesky, rbmc): 0 (automatic) or >= 2. Automatic is
  /// kAutoChains chains and kAutoCholeskyBatch draws per batch. Why 16: docs/accuracy.md, "`dualgibbs marginals`".
  std::size_t chains = 0;
  /// Sweeps between evaluations (sampling methods); >= 1. Why 2: docs/accuracy.md, "Lock-step blocks and `--every`".
  std::size_t every = 2;
  std::size_t burn_in = 0;           ///< sweeps discarded first; 0 = from the model's convergence rate (see below)
  std::size_t max_sweeps = 1000000;  ///< the sampling methods stop here whatever the target
  /// Chebyshev degree of the control variates; -1 (automatic) chooses it from a pilot of two evaluations after the
  /// burn-in: the degree with the least predicted time to the target, weighing the precomputation (timed on the
  /// tuning nodes, probe_flow_degree) against the sampled gap ratio (docs/accuracy.md, "The degree").
  int degree = -1;
  /// Chains per shared-schedule block of the sampler (EnsembleOptions::lockstep: 1, 2, 4, 8 or 16; 1 = every chain
  /// its own scan schedule). Blocks run one site update as a vector operation over their chains. The estimates and
  /// their standard errors (from the spread over all chains) stay honest with blocks after the burn-in. Blocks never
  /// straddle chain L/2 (lockstep_blocks). Why 8, and why it is honest: docs/accuracy.md, "Lock-step blocks and
  /// `--every`".
  std::size_t lockstep = 8;
  std::uint64_t seed = 1;  ///< determines every random number
  unsigned threads = 0;    ///< threads of the samplers and the estimators (0 = available_threads(), core/machine.hpp)
  /// The processes sharing the chains and the control variate's terms (chain_group.hpp), or null for this process
  /// alone. With a group of two or more the call is collective (bitwise one process's results) and needs a target
  /// relative RMSE: a time budget is refused (the members' clocks would stop them at different sweeps).
  ChainGroup* group = nullptr;
  /// The sweep scheme of the primal methods (primal, primal-cv, rbmc-gibbs; accelerated.hpp): Gibbs with the random
  /// scan (the default), ssor, cheby-ssor (its spectrum required, as run_ensemble) or colored. A sweep of ssor and
  /// cheby-ssor is one iteration of 2n site updates: `every`, `burn_in` and `max_sweeps` count iterations. The dual
  /// methods run Gibbs only (std::invalid_argument otherwise).
  SchemeOptions scheme;
  /// With a group of two or more: every chain's graph cut over the members instead of the chains (run_partitioned(),
  /// sampling/partition.hpp), for the sampling methods (primal, dual, dual-cv, primal-cv, rbmc-gibbs); the scheme
  /// must be colour-ordered (SchemeKind::Colored, or ssor / cheby-ssor with colored_order). Every member sees every
  /// chain and estimates alone, so the result is bitwise one process's with the same scheme.
  bool split_graph = false;
  /// split_graph: the member of every node (empty: METIS's cut, partition_graph()).
  std::vector<int> partition;
  /// Called after every evaluation with the fraction done (towards the target or the budget); may be empty.
  std::function<void(double)> progress;
};

/// What MarginalMethod::Auto predicted, and what it chose. The predictions are CPU seconds of one thread, computed
/// from counts (flops, non-zeros, sweeps, solver iterations) with per-operation constants measured on one machine,
/// so that the choice, and the result of a seed, depends neither on the machine's load nor on the thread count.
struct MethodChoice {
  bool automatic = false;  ///< true when MarginalMethod::Auto chose the method
  /// exact: selected inversion, from the symbolic analysis (infinity where it failed, e.g. out of memory)
  double exact_seconds = std::numeric_limits<double>::infinity();
  /// probing: on a complete graph one sign set at distance 1 (one solve per node, from a pilot solve's iterations)
  /// is exact; infinity on other graphs (its stochastic form was not faster than the other methods on any graph
  /// measured)
  double probing_seconds = std::numeric_limits<double>::infinity();
  /// the sampling method (dual-cv, or primal-cv without a dual): before its pilot a lower bound (the burn-in and two
  /// evaluations), after it the pilot's prediction of the whole run
  double sampling_seconds = std::numeric_limits<double>::infinity();
  std::string reason;  ///< the choice in words, with the predictions that made it
};

/// What estimate_marginal_variances() found.
struct MarginalResult {
  MarginalMethod method = MarginalMethod::Exact;  ///< the method that ran
  Eigen::VectorXd estimate;                       ///< V_v
  Eigen::VectorXd std_error;                      ///< standard errors (0 for exact)
  /// certified lower bound l_v (control variates, exact, and 1/Q_vv for rbmc; empty otherwise)
  Eigen::VectorXd lower;
  /// certified upper bound E_v (control variates and exact; NaN for primal-cv without a dual and for rbmc; empty
  /// otherwise)
  Eigen::VectorXd upper;
  double rel_se_rms = 0;    ///< RMS over nodes of std_error / estimate
  double seconds = 0;       ///< wall time of the whole estimate (precomputation included)
  std::size_t sweeps = 0;   ///< sweeps per chain (sampling methods)
  std::size_t burn_in = 0;  ///< sweeps discarded (sampling methods)
  std::size_t chains = 0;   ///< chains (sampling), draws per batch (cholesky, rbmc) or sign sets (probing)
  std::size_t samples = 0;  ///< evaluations x chains (sampling), draws (cholesky, rbmc) or solves (probing)
  int degree = 0;           ///< Chebyshev degree of the control variate (0 without); probing: the distance k
  /// RMS over nodes of gap_v / estimate_v, the sampled gap (MarginalVarianceCv::gap) over the estimate: the
  /// method's standard-error ratio against the plain primal sample variance (1 for primal, about (s_v^2 - V_v) / V_v
  /// for the dual plug-in; its own quality, no truth used).
  double gap_ratio_rms = 0;
  /// The same ratio on the tuning nodes from the pilot that chose an automatic degree (0 when the degree was given).
  double pilot_gap_ratio = 0;
  bool reached_target = false;  ///< rel_se_rms <= rel_rmse when the run stopped (always true for exact)
  MethodChoice choice;          ///< with MarginalMethod::Auto: its predictions and reason (`method` is the one chosen)
};

/// Marginal variances of every node by `options.method`. The burn-in, when not given, is the number of sweeps
/// after which the second moments' initial error has decayed by 1e-4 at the predicted random-sweep rate r of the
/// domain (t = ln(1e4) / (2 (-ln r)), at least 4): r_p for the primal methods, the effective dual rate (r_d on a
/// tree) for the dual ones [eqn:primalrate, eq:r_eff_final]; with cheby-ssor the iterations after which the
/// Chebyshev envelope 2 r^t (r = chebyshev_ssor_rate) of the covariance error's factor is 1e-4, with ssor
/// t = ln(1e4) / (2 (-ln ssor_rate)) when its spectrum is given (else r_p, per iteration).
/// \param model the model
/// \param options the method, the target or budget, and the sampler's settings
/// \return the estimates, their errors and what the run did
/// \throws std::invalid_argument for a non-finite or negative target or budget, neither of them set, chains = 1,
///         every = 0, a degree below -1, a lockstep other than 1, 2, 4, 8 or 16, a scheme other than Gibbs for a dual
///         method, a scheme that run_ensemble refuses, or a budget too short for two evaluations; NotPositiveDefinite
///         and FactorizationError from CHOLMOD (cholesky, exact).
DUALGIBBS_EXPORT MarginalResult estimate_marginal_variances(const Model& model, const MarginalOptions& options);

// ---- time to accuracy --------------------------------------------------------------------------------------

/// One graph of the time-to-accuracy benchmark: a graph spec (io.hpp) and homogeneous s, sigma.
struct AccuracyCase {
  std::string spec;     ///< e.g. "kregular:10000,4"
  double s = 1;         ///< node standard deviation
  double sigma = 0.25;  ///< edge standard deviation
};

/// What time_to_accuracy() runs.
struct AccuracySettings {
  std::vector<AccuracyCase> graphs;     ///< the graphs, in order
  std::vector<MarginalMethod> methods;  ///< the methods compared (Exact always runs first: it is the truth)
  /// Primal methods (primal, primal-cv) that also run with the cheby-ssor scheme, as methods of their own (columns
  /// `M_cheby_ssor_*`, after those of `methods`), evaluated every iteration (MarginalOptions::every = 1): the spectrum
  /// default_ssor_spectrum(Q) is computed once per graph and its CPU time is added to every run's (it is part of the
  /// method's cost, as the factorization is of cholesky's). \throws std::invalid_argument (time_to_accuracy) for
  /// another method.
  std::vector<MarginalMethod> cheby_ssor;
  std::vector<double> targets = {0.01};  ///< relative RMSE targets (each in (0, 1))
  int replicates = 5;                    ///< independent runs per (graph, method, target), >= 2
  double budget_seconds = 60;            ///< wall budget of one run; a run that ends short of its target says so
  std::uint64_t seed = 1;                ///< replicate r of every cell runs with seed derived from (seed, r)
  /// The processes the runs are given (MarginalOptions::group), or null for this process alone. Over two or more
  /// members every run fails (its time budget is refused) and the table says so: run it in one process.
  ChainGroup* group = nullptr;
};

/// For each graph, method and target: the CPU time (one thread) of estimate_marginal_variances() to reach the
/// target, median over replicates, the achieved relative RMSE measured against selected inversion (RMS over
/// nodes of (estimate - V) / V, RMS over the replicates) beside the method's own estimate (rel_se_rms), and the
/// exact solve's CPU time as the baseline of the same run. The replicates of a cell stop at the first run that
/// does not reach its target within the budget (one is enough to say so). A graph whose exact solve fails (out of
/// memory on an expander) still runs the sampling methods, without a measured error.
/// Table (label column `graph`): `nodes, edges, s, sigma, target, truth_cpu_seconds` (the selected inversion that gives
/// the truth) and per method M (its to_string with '-' as '_', `_cheby_ssor` appended for the runs of
/// AccuracySettings::cheby_ssor): `M_cpu_seconds, M_reached, M_achieved_rel_rmse, M_estimated_rel_se, M_degree`
/// (`M_reached` the fraction of replicates that reached the target; NaN where a method did not run). `notes`
/// names every cell that failed or did not reach its target.
/// \param settings the graphs, methods, targets, replicates and budget
/// \param notes where the failed and short cells are named
/// \param progress called with progress (may be empty)
/// \return the table
/// \throws std::invalid_argument for no graphs or methods, a target outside (0, 1), replicates < 2 or a budget
/// <= 0; a graph spec that does not parse.
DUALGIBBS_EXPORT Table time_to_accuracy(const AccuracySettings& settings, std::vector<std::string>& notes,
                                        const ProgressFn& progress = {});

}  // namespace dualgibbs
