#pragma once
// The posterior mean in the command's outputs: the --mean-solver / --mean-tolerance options of the subcommands
// that solve for mu themselves (sample, marginals), and the JSON keys every such output records
// (docs/observations.md lists them).
#include "cli.hpp"

#include <dualgibbs/truth/posterior_mean.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace dualgibbs::cli {

/// How a subcommand solves Q mu = h.
struct MeanCliOptions {
  std::string solver = "cholesky";  ///< cholesky | cg
  double tolerance = 1e-10;         ///< relative residual of cg
};

/// Adds --mean-solver and --mean-tolerance to `app`.
void add_mean_options(CLI::App& app, MeanCliOptions& opt);

/// posterior_mean() with these options. \throws as posterior_mean().
PosteriorMean solve_posterior_mean(const Model& model, const MeanCliOptions& opt);

/// Records the mean in `j`: observed_nodes, mean_solver, mean_iterations, mean_relative_residual,
/// mean_seconds, posterior_mean_min / _max / _mean (the full vector goes to the CSV outputs).
void record_posterior_mean(nlohmann::json& j, const PosteriorMean& pm, Index observed);

}  // namespace dualgibbs::cli
