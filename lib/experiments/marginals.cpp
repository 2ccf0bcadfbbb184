// estimate_marginal_variances: the six methods of `dualgibbs marginals` behind one stopping rule.
#include <dualgibbs/experiments/marginals.hpp>

#include <dualgibbs/core/random.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "core/enum_names.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dualgibbs {

namespace {

using Clock = std::chrono::steady_clock;

constexpr detail::EnumName<MarginalMethod> kMethods[] = {
    {MarginalMethod::Primal, "primal"},     {MarginalMethod::Dual, "dual"},
    {MarginalMethod::DualCv, "dual-cv"},    {MarginalMethod::PrimalCv, "primal-cv"},
    {MarginalMethod::Cholesky, "cholesky"}, {MarginalMethod::Exact, "exact"}};

// Thrown by the observer to end a run that reached its target or budget.
struct StopSampling {};

double rms_relative(const Eigen::VectorXd& se, const Eigen::VectorXd& est) {
  return std::sqrt((se.array() / est.array().abs()).square().mean());
}

void check_options(const MarginalOptions& o) {
  if (!std::isfinite(o.rel_rmse) || o.rel_rmse < 0)
    throw std::invalid_argument("marginals: the target relative RMSE " + std::to_string(o.rel_rmse) +
                                " must be a finite number > 0");
  if (!std::isfinite(o.seconds) || o.seconds < 0)
    throw std::invalid_argument("marginals: the time budget " + std::to_string(o.seconds) +
                                " s must be a finite number > 0");
  if (o.rel_rmse == 0 && o.seconds == 0)
    throw std::invalid_argument("marginals: give a target relative RMSE (> 0) or a time budget (> 0 seconds)");
  if (o.chains < 2)
    throw std::invalid_argument("marginals: chains = " + std::to_string(o.chains) +
                                "; at least 2 independent chains are needed for a standard error");
  if (o.every == 0) throw std::invalid_argument("marginals: every = 0; evaluations need at least 1 sweep between them");
  if (o.degree < -1 || o.degree > 1000)
    throw std::invalid_argument("marginals: degree = " + std::to_string(o.degree) +
                                " (expected -1 for automatic or 0..1000)");
}

// Sweeps until the second moments' initial error has decayed by 1e-4 at rate r per sweep (at least 4).
std::size_t burn_in_for(const Model& m, Domain domain, std::size_t max_sweeps) {
  const Rates r = convergence_rates(m);
  double rate = domain == Domain::Primal ? r.rate_primal : r.rate_dual_effective;
  if (!std::isfinite(rate)) rate = domain == Domain::Primal ? r.rate_primal : r.rate_dual;
  if (!(rate > 0 && rate < 1)) return 4;
  const double t = std::ceil(std::log(1e4) / (2 * -std::log(rate)));
  return static_cast<std::size_t>(std::clamp(t, 4.0, static_cast<double>(std::max<std::size_t>(4, max_sweeps / 2))));
}

// The stopping rule shared by the sampling and the Cholesky methods.
struct Stopper {
  const MarginalOptions& o;
  Clock::time_point start;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
  // True when the accumulator (>= 2 evaluations) has reached the target or the budget is spent.
  bool done(const MarginalVarianceCv& acc, double& rel) const {
    const bool enough = acc.evaluations() >= 2;
    if (enough) rel = rms_relative(acc.std_error(), acc.estimate());
    double fraction = 0;
    if (o.rel_rmse > 0 && enough) fraction = std::min(1.0, std::pow(o.rel_rmse / rel, 2));
    if (o.seconds > 0) fraction = std::max(fraction, std::min(1.0, elapsed() / o.seconds));
    if (o.progress) o.progress(fraction);
    if (enough && o.rel_rmse > 0 && rel <= o.rel_rmse) return true;
    return o.seconds > 0 && elapsed() >= o.seconds;
  }
};

void fill_from(const MarginalVarianceCv& acc, const FlowControlVariate& cv, bool bracket, MarginalResult& r,
               double target) {
  if (acc.evaluations() < 2)
    throw std::invalid_argument("marginals: the time budget ran out after " + std::to_string(acc.evaluations()) +
                                " evaluation(s); at least 2 are needed for an estimate with a standard error "
                                "(give more seconds)");
  r.estimate = acc.estimate();
  r.std_error = acc.std_error();
  r.rel_se_rms = rms_relative(r.std_error, r.estimate);
  r.reached_target = target > 0 && r.rel_se_rms <= target;
  if (bracket) {
    r.lower = cv.lower_bound();
    r.upper = cv.flow_energy();
  }
}

}  // namespace

MarginalMethod parse_marginal_method(const std::string& name) {
  return detail::parse_enum(kMethods, name, "marginals method");
}

const char* to_string(MarginalMethod method) noexcept { return detail::enum_name(kMethods, method); }

MarginalMethod default_marginal_method(const Model& model) {
  const Graph& g = model.graph();
  const double mean_degree = g.num_nodes() ? 2.0 * g.num_edges() / g.num_nodes() : 0.0;
  const bool lattice_like = g.num_nodes() <= 3000000 && g.max_degree() <= 8 && mean_degree <= 6;
  return lattice_like || g.num_edges() == 0 ? MarginalMethod::Exact : MarginalMethod::DualCv;
}

MarginalResult estimate_marginal_variances(const Model& model, const MarginalOptions& o) {
  check_options(o);
  const Stopper stop{o, Clock::now()};
  MarginalResult r;
  r.method = o.method;

  if (o.method == MarginalMethod::Exact) {
    r.estimate = marginal_variances(model, Domain::Primal);
    r.std_error = Eigen::VectorXd::Zero(r.estimate.size());
    r.lower = r.upper = r.estimate;
    r.reached_target = true;
    r.seconds = stop.elapsed();
    return r;
  }

  const bool dual = o.method == MarginalMethod::Dual || o.method == MarginalMethod::DualCv;
  const bool with_cv = o.method == MarginalMethod::DualCv || o.method == MarginalMethod::PrimalCv;
  if (dual && model.num_edges() == 0)
    throw std::invalid_argument(std::string("marginals: the method '") + to_string(o.method) +
                                "' samples the dual domain, and this graph has no edges");
  FlowCvOptions fo;
  fo.degree = with_cv ? o.degree : 0;
  const FlowControlVariate cv(model, fo);
  r.degree = cv.degree();
  r.chains = o.chains;
  MarginalVarianceCv acc(cv, dual ? Domain::Dual : Domain::Primal, o.chains);
  double rel = 0;

  if (o.method == MarginalMethod::Cholesky) {
    const CholeskyFactor factor(model.primal_precision());
    for (std::uint64_t batch = 0;; ++batch) {
      acc.add(factor.sample(o.chains, mix64(o.seed + batch * 0x9e3779b97f4a7c15ULL)));
      r.samples += o.chains;
      if (stop.done(acc, rel)) break;
    }
    fill_from(acc, cv, false, r, o.rel_rmse);
    r.seconds = stop.elapsed();
    return r;
  }

  const Domain domain = dual ? Domain::Dual : Domain::Primal;
  r.burn_in = o.burn_in ? o.burn_in : burn_in_for(model, domain, o.max_sweeps);
  EnsembleOptions eo;
  eo.chains = o.chains;
  eo.sweeps = std::max(o.max_sweeps, r.burn_in + o.every);
  eo.checkpoint_every = o.every;
  eo.seed = o.seed;
  eo.threads = o.threads;
  eo.init = InitialState::Random;
  try {
    run_ensemble(model, domain, eo, [&](const Checkpoint& cp) {
      r.sweeps = cp.sweep;
      if (cp.sweep < r.burn_in) {
        if (o.seconds > 0 && stop.elapsed() >= o.seconds) throw StopSampling{};
        return;
      }
      acc.add(cp.states);
      r.samples += o.chains;
      if (stop.done(acc, rel)) throw StopSampling{};
    });
  } catch (const StopSampling&) {
  }
  fill_from(acc, cv, with_cv, r, o.rel_rmse);
  r.seconds = stop.elapsed();
  return r;
}

}  // namespace dualgibbs
