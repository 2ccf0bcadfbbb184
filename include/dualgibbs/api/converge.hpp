#pragma once
/// \file converge.hpp
/// The `converge` use case: primal against dual Gibbs on any model, both scored every few sweeps against the exact
/// Cov(X) (small graphs) or the exact marginal variances (large graphs) with the split-half error
/// [eq:unbiased_error] (run_convergence(), experiments/experiments.hpp), with the command's defaults and checks.
///
/// \code
/// dualgibbs::api::ModelSource source;
/// source.graph = "torus:6";
/// dualgibbs::api::ConvergeOptions o;
/// o.chains = 400;
/// const dualgibbs::api::ExperimentRun run = dualgibbs::api::converge(source, o);
/// // run.result.table: sweep, Eb_primal, Eu_primal, Eb_dual, Eu_dual, ...; run.record: its JSON sidecar
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/experiment_record.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/export.hpp>

#include <cstddef>
#include <string>

namespace dualgibbs::api {

/// The options of `converge`, with the command's defaults.
struct ConvergeOptions {
  std::size_t chains = 2000;  ///< independent chains per domain (split into two halves)
  std::size_t sweeps = 100;   ///< sweeps per chain
  std::size_t every = 1;      ///< checkpoint every this many sweeps (>= 1)
  /// The sweep scheme of both domains and its scan (random, permutation, fixed or colored); each domain's spectrum
  /// is its own, so lambda_min and lambda_max are refused.
  SchemeChoice scheme;
  std::string init = "constant";  ///< initial state: constant or random
  double init_value = 1.0;        ///< the constant of init constant
  double init_scale = 1.0;        ///< init random starts from N(0, K^2 diag(M)^-1)
  Index full_max = 2000;          ///< full covariance up to this many nodes, marginal variances above (>= 1)
  /// Also score the dual chains through the flow control variate (ConvergenceSettings::control_variate).
  bool control_variate = false;
  /// How a group of processes shares the work: "chains" (each member a share of the chains and of the scoring) or
  /// "graph" (every chain's graph cut over the members, each scoring all chains: the colored scan;
  /// ConvergenceSettings::split_graph). The curves are the same bits either way as one process's with the same scan.
  std::string distribute = "chains";
  /// distribute "graph": "ranges" (contiguous node ids) or "metis" (METIS's cut); the curves do not depend on it.
  std::string partition = "ranges";
  std::string name = "converge";  ///< the result's name (its files are NAME.csv, NAME.json)
  /// How the run is recorded; empty: the equivalent `dualgibbs converge` command line.
  std::string command_line;
};

/// Primal against dual convergence on `model`.
/// \param model the model
/// \param options the options
/// \param source the model's description (graph spec and parameters for the record); its seed seeds the samplers
/// \param execution threads, chain group and progress
/// \return the error table per sweep and its record
/// \throws std::invalid_argument for init given or unknown, init_scale without init random, every or full_max < 1,
///         lambda_min or lambda_max, and as make_scheme() and run_convergence(); their numerical failures.
DUALGIBBS_EXPORT ExperimentRun converge(const Model& model, const ConvergeOptions& options, const ModelSource& source,
                                        const Execution& execution = {});

/// Primal against dual convergence on the prior model `source` describes.
/// \param source the model's description; its seed seeds the samplers
/// \param options the options
/// \param execution threads, chain group and progress
/// \return the error table per sweep and its record
/// \throws std::invalid_argument for an obs_file (the covariances do not depend on the mean), as load_model() and as
///         converge() above.
DUALGIBBS_EXPORT ExperimentRun converge(const ModelSource& source, const ConvergeOptions& options,
                                        const Execution& execution = {});

}  // namespace dualgibbs::api
