// The posterior mean in a use case's result (api/mean.hpp).
#include <dualgibbs/api/mean.hpp>

namespace dualgibbs::api {

PosteriorMean solve_posterior_mean(const Model& model, const MeanChoice& choice) {
  PosteriorMeanOptions o;
  o.solver = parse_mean_solver(choice.solver);
  o.tolerance = choice.tolerance;
  return posterior_mean(model, o);
}

void add_posterior_mean_record(Record& j, const PosteriorMean& pm, Index observed) {
  j["observed_nodes"] = observed;
  j["mean_solver"] = to_string(pm.solver);
  j["mean_iterations"] = pm.iterations;
  j["mean_relative_residual"] = pm.relative_residual;
  j["mean_seconds"] = pm.seconds;
  j["posterior_mean_min"] = pm.mean.minCoeff();
  j["posterior_mean_max"] = pm.mean.maxCoeff();
  j["posterior_mean_mean"] = pm.mean.mean();
}

Index observed_nodes(const Model& model, const std::optional<Index>& observed) noexcept {
  if (observed) return *observed;
  return model.has_mean() ? model.num_nodes() : 0;
}

}  // namespace dualgibbs::api
