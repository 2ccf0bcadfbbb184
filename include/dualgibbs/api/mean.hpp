#pragma once
/// \file mean.hpp
/// The posterior mean in a use case's result: how it is solved (MeanChoice, by name) and the record fields every
/// result with a mean carries (observed_nodes, mean_solver, mean_iterations, mean_relative_residual, mean_seconds,
/// posterior_mean_min / _max / _mean).

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <string>

namespace dualgibbs::api {

/// How Q mu = h is solved, by name.
struct MeanChoice {
  std::string solver = "cholesky";  ///< cholesky | cg
  double tolerance = 1e-10;         ///< relative residual of cg, in (0, 1)
};

/// posterior_mean() with a named solver.
/// \param model the model (with or without a mean)
/// \param choice the solver and its tolerance
/// \return mu and the solver's statistics
/// \throws std::invalid_argument for an unknown solver or a tolerance outside (0, 1); as posterior_mean().
DUALGIBBS_EXPORT PosteriorMean solve_posterior_mean(const Model& model, const MeanChoice& choice);

/// Adds the mean's fields to a record: observed_nodes, mean_solver, mean_iterations, mean_relative_residual,
/// mean_seconds, posterior_mean_min, posterior_mean_max, posterior_mean_mean (the full vector is the caller's).
/// \param record the record to extend
/// \param mean the solved mean (non-empty)
/// \param observed nodes with an observation
DUALGIBBS_EXPORT void add_posterior_mean_record(Record& record, const PosteriorMean& mean, Index observed);

/// The observed-node count of a record: `observed` when known (the loader's count of observation lines), else every
/// node of a model with a mean, else 0.
/// \param model the model
/// \param observed the known count, if any
/// \return the observed-node count
DUALGIBBS_EXPORT Index observed_nodes(const Model& model, const std::optional<Index>& observed) noexcept;

}  // namespace dualgibbs::api
