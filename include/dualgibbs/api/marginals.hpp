#pragma once
/// \file marginals.hpp
/// The `marginals` use case: the marginal variances of every node to a relative-RMSE target or within a time
/// budget (estimate_marginal_variances(), experiments/marginals.hpp), with the method's default, the sweep scheme of
/// the primal methods and, for a model with a mean, the posterior mean beside them.
///
/// \code
/// dualgibbs::api::ModelSource source;
/// source.graph = "kregular:1000,4";
/// dualgibbs::api::MarginalsOptions o;
/// o.method = "dual-cv";
/// const dualgibbs::api::MarginalsResult r = dualgibbs::api::marginals(source, o);
/// // r.estimate.estimate, r.estimate.std_error; r.record["rel_se_rms"]
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/mean.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/experiments/marginals.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace dualgibbs::api {

/// The options of `marginals`, with the command's defaults.
struct MarginalsOptions {
  /// How a group of processes shares the work: "chains" (each member a share of the chains) or "graph" (every chain's
  /// graph cut over the members, each estimating alone: MarginalOptions::split_graph; the sampling methods only, and
  /// every one of them then sweeps in colour order, gibbs as the colored scan, ssor and cheby-ssor in colour order).
  /// With "graph" the estimates are bitwise the same for any number of members, one included.
  std::string distribute = "chains";
  /// distribute "graph": "ranges" (contiguous node ids) or "metis" (METIS's cut); the estimates do not depend on it.
  std::string partition = "ranges";
  /// primal, dual, dual-cv, primal-cv, cholesky, rbmc, rbmc-gibbs, probing, exact or auto; empty: auto (the method
  /// predicted fastest, MarginalMethod::Auto).
  std::optional<std::string> method;
  /// Stop at this RMS relative standard error (> 0); empty: 0.01, or no target when `seconds` is given.
  std::optional<double> rel_rmse;
  std::optional<double> seconds;  ///< stop after this wall time (> 0; empty: no budget)
  std::size_t chains = 0;   ///< chains (sampling) or draws per batch (cholesky); 0: kAutoChains, kAutoCholeskyBatch
  std::size_t every = 2;    ///< sweeps (iterations of the scheme) between evaluations
  std::size_t burn_in = 0;  ///< sweeps discarded first; 0: from the predicted convergence rate
  std::size_t max_sweeps = 1000000;  ///< the sampling methods stop here whatever the target
  int degree = -1;                   ///< Chebyshev degree of the control variates (-1: automatic)
  std::size_t lockstep = 8;          ///< chains per shared-schedule block of the sampler: 1, 2, 4, 8 or 16
  SchemeChoice scheme;               ///< the sweep scheme of the primal methods (its scan is not used)
  MeanChoice mean;                   ///< a model with a mean: how mu is solved (cholesky or cg, tolerance)
};

/// What marginals found.
struct MarginalsResult {
  MarginalOptions options;            ///< the options that ran (defaults resolved)
  MarginalResult estimate;            ///< the per-node estimates, standard errors and brackets
  std::optional<PosteriorMean> mean;  ///< the posterior mean of a model with a mean
  /// provenance() of "marginals", then method, the scheme's fields (add_scheme_record()), nodes, edges,
  /// estimate_mean, rel_se_rms, target_rel_rmse, budget_seconds, reached_target, seconds, sweeps, burn_in, chains,
  /// lockstep, samples, degree, gap_ratio_rms, pilot_gap_ratio, bracket_rel_width_rms (null without a bracket),
  /// with the automatic method auto_reason, auto_exact_seconds, auto_probing_seconds and auto_sampling_seconds (its
  /// predictions, MethodChoice; null where none was made) and, with a mean, observed_nodes, mean_solver,
  /// mean_iterations, mean_relative_residual, mean_seconds, posterior_mean_min, posterior_mean_max,
  /// posterior_mean_mean.
  Record record;
  /// Whether the run succeeded: it reached its target, or it had none (a budget alone).
  /// \return true if the run succeeded
  bool succeeded() const noexcept { return estimate.reached_target || options.rel_rmse == 0; }
};

/// The marginal variances of `model` (the variances of its Q; a mean does not change them).
/// \param model the model
/// \param options the options
/// \param source the model's description for the record; its seed seeds the samplers
/// \param execution threads, chain group and progress (stage "marginals")
/// \param observed nodes observed, for the record of a model with a mean
/// \return the estimates, the options that ran and the record
/// \throws std::invalid_argument for an unknown method or mean solver, a target or budget <= 0, a budget under a
///         chain group of several members (their clocks would stop them at different sweeps), scheme options with a
///         dual, cholesky or exact method, and as make_scheme(), posterior_mean() and estimate_marginal_variances();
///         their numerical failures.
DUALGIBBS_EXPORT MarginalsResult marginals(const Model& model, const MarginalsOptions& options,
                                           const ModelSource& source, const Execution& execution = {},
                                           Index observed = 0);

/// The marginal variances of the model `source` describes, its observations read (load_model()).
/// \param source the model's description; its seed seeds the samplers
/// \param options the options
/// \param execution threads, chain group and progress
/// \return the estimates, the options that ran and the record
/// \throws as load_model() and marginals() above.
DUALGIBBS_EXPORT MarginalsResult marginals(const ModelSource& source, const MarginalsOptions& options,
                                           const Execution& execution = {});

}  // namespace dualgibbs::api
