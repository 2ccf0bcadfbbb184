#include "observations.hpp"

namespace dualgibbs::cli {

void add_mean_options(CLI::App& app, MeanCliOptions& opt) {
  app.add_option("--mean-solver", opt.solver,
                 "with --obs-file: how the posterior mean mu = Q^-1 D_s^-1 z is solved: cholesky (CHOLMOD) or cg\n"
                 "(Jacobi-preconditioned conjugate gradients, for graphs whose factor does not fit)")
      ->capture_default_str();
  app.add_option("--mean-tolerance", opt.tolerance,
                 "cg stops when ||h - Q mu|| <= TOL ||h|| (in (0, 1); error <= cond(Q) TOL, docs/observations.md)")
      ->capture_default_str();
}

PosteriorMean solve_posterior_mean(const Model& model, const MeanCliOptions& opt) {
  PosteriorMeanOptions o;
  o.solver = parse_mean_solver(opt.solver);
  o.tolerance = opt.tolerance;
  return posterior_mean(model, o);
}

void record_posterior_mean(nlohmann::json& j, const PosteriorMean& pm, Index observed) {
  j["observed_nodes"] = observed;
  j["mean_solver"] = to_string(pm.solver);
  j["mean_iterations"] = pm.iterations;
  j["mean_relative_residual"] = pm.relative_residual;
  j["mean_seconds"] = pm.seconds;
  j["posterior_mean_min"] = pm.mean.minCoeff();
  j["posterior_mean_max"] = pm.mean.maxCoeff();
  j["posterior_mean_mean"] = pm.mean.mean();
}

}  // namespace dualgibbs::cli
