#pragma once
/// \file exact.hpp
/// The exact use case: the ground truth of a model from one sparse Cholesky factorization of Q: log det Q, the
/// marginal variances of every node by selected inversion, entropies with the bounds of appendix B, the torus
/// closed form [eq:torus_true_var] when the graph spec is a torus, the posterior mean mu = Q^-1 h from the same
/// factor for a model with a mean, and optionally the per-edge variances Var(X_u - X_v) and Var(y~_e), with the
/// record `dualgibbs exact --json` prints.
///
/// \code
/// const dualgibbs::api::ExactResult r = dualgibbs::api::exact(model, {}, nullptr);
/// // r.variance, r.record["logdet_Q"], ...
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <optional>
#include <string>

namespace dualgibbs::api {

/// The options of `dualgibbs exact` that are not about files, with its defaults.
struct ExactOptions {
  std::string ordering = "amd";         ///< fill-reducing ordering: amd, metis, nesdis, auto, natural
  bool edge_variances = false;          ///< also the per-edge variances (the selected inverse on Q's pattern)
  std::optional<Index> observed_nodes;  ///< for the record (default: observed_nodes())
};

/// The ground truth and its record.
struct ExactResult {
  FactorStats factor;                     ///< the factorization's statistics
  double log_determinant = 0;             ///< log det Q
  double selected_inversion_seconds = 0;  ///< wall time of the selected inversion
  double seconds = 0;                     ///< wall time of the factorization, inversion and mean
  Eigen::VectorXd variance;               ///< Var(X_v) of every node
  PosteriorMean mean;                     ///< mu (empty vector for a model without a mean)
  Entropy entropy;                        ///< H(X), H(y~) and their bounds
  Eigen::VectorXd edge_variance_Y;        ///< with edge_variances: Var(X_u - X_v) per edge
  Eigen::VectorXd edge_variance_dual;     ///< with edge_variances: Var(y~_e) = (R^-1)_ee per edge
  /// nodes, edges, ordering, nnz_L, analyze_seconds, factorize_seconds, selected_inversion_seconds, logdet_Q,
  /// marginal_variance_mean / _min / _max, trace_cov, entropy_primal (_lower, _upper), with edges logdet_R and
  /// entropy_dual (_lower, _upper), on a torus torus_marginal_variance and torus_max_abs_error, with a mean the
  /// fields of add_posterior_mean_record(), seconds, and with edge variances dual_seconds,
  /// dual_marginal_variance_mean / _min / _max and edge_variance_Y_mean.
  Record record;
};

/// The ground truth of `model`.
/// \param model the model (with or without a mean)
/// \param options the ordering and whether edge variances are computed
/// \param spec the model's graph spec (the torus closed form applies to torus specs), or null
/// \return the truth and its record
/// \throws std::invalid_argument for an unknown ordering or a selected inverse that would not fit in memory; the
///         factorization's exceptions (NotPositiveDefinite, FactorizationError); NumericalFailure when Q or R is
///         numerically singular although the factorization succeeded (a variance or the mean not finite).
DUALGIBBS_EXPORT ExactResult exact(const Model& model, const ExactOptions& options, const GraphSpec* spec);

}  // namespace dualgibbs::api
