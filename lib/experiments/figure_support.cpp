// Private machinery shared by the figures (figure_support.hpp).
#include "experiments/figure_support.hpp"

#include <dualgibbs/core/number_text.hpp>

#include "experiments/fits.hpp"
#include "experiments/seeds.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::detail {

void check_options(const std::string& name, const ExperimentOptions& options) {
  if (options.chains > 0 && options.chains < kMinSplitHalfChains)
    throw std::invalid_argument(name + ": chains = " + std::to_string(options.chains) + " must be 0 (the figure's " +
                                "default) or at least " + std::to_string(kMinSplitHalfChains) +
                                " (two halves of three)");
  if (options.init && *options.init == InitialState::Given)
    throw std::invalid_argument(name + ": init must be constant or random (given states are for the library)");
  if (options.init_value && !std::isfinite(*options.init_value))
    throw std::invalid_argument(name + ": init_value = " + number_text(*options.init_value) + " is not finite");
  if (options.init_scale && !(std::isfinite(*options.init_scale) && *options.init_scale > 0))
    throw std::invalid_argument(name + ": init_scale = " + number_text(*options.init_scale) +
                                " must be finite and positive");
}

void apply_start(ConvergenceSettings& cs, const ExperimentOptions& opt, InitialState init, double value, double scale) {
  cs.init = opt.init.value_or(init);
  cs.init_value = opt.init_value.value_or(value);
  cs.init_scale = opt.init_scale.value_or(scale);
  if (opt.init_scale && cs.init != InitialState::Random)
    throw std::invalid_argument("init_scale applies only to a random start (init random), the start here is " +
                                std::string(to_string(cs.init)));
}

ProgressFn sub_progress(const ProgressFn& parent, double lo, double hi, const std::string& prefix) {
  if (!parent) return {};
  return [parent, lo, hi, prefix](const std::string& stage, double f) {
    parent(prefix.empty() ? stage : (stage.empty() ? prefix : prefix + ": " + stage), lo + (hi - lo) * f);
  };
}

std::size_t pick(std::size_t override_value, bool quick, std::size_t quick_value, std::size_t full_value) {
  if (override_value > 0) return override_value;
  return quick ? quick_value : full_value;
}

void add_common_parameters(ExperimentResult& r, const ExperimentOptions& opt) {
  r.parameters.emplace_back("preset", opt.as_published ? "as-published" : "paper-text");
  r.parameters.emplace_back("quick", opt.quick ? "true" : "false");
  r.parameters.emplace_back("seed", std::to_string(opt.seed));
  r.parameters.emplace_back("threads_requested", std::to_string(opt.threads));
  r.parameters.emplace_back("lockstep", "1");
}

void add_model_parameters(ExperimentResult& r, const std::string& graph, double s, double sigma) {
  r.parameters.emplace_back("graph", graph);
  r.parameters.emplace_back("s", number_text(s, 10));
  r.parameters.emplace_back("sigma", number_text(sigma, 10));
}

void add_settings_parameters(ExperimentResult& r, const ConvergenceSettings& cs) {
  r.parameters.emplace_back("chains", std::to_string(cs.chains));
  r.parameters.emplace_back("sweeps", std::to_string(cs.sweeps));
  r.parameters.emplace_back("checkpoint_every", std::to_string(cs.checkpoint_every));
  r.parameters.emplace_back("scan", to_string(cs.scan));
  r.parameters.emplace_back("init", to_string(cs.init));
  r.parameters.emplace_back("init_value", number_text(cs.init_value, 10));
  if (cs.init == InitialState::Random) r.parameters.emplace_back("init_scale", number_text(cs.init_scale, 10));
  r.parameters.emplace_back("jackknife_groups_per_half", std::to_string(cs.jackknife_groups));
  // Accelerated schemes only: the default run's parameters are unchanged.
  for (const auto& [domain, s] : {std::pair<const char*, const SchemeOptions&>{"primal", cs.scheme_primal},
                                  std::pair<const char*, const SchemeOptions&>{"dual", cs.scheme_dual}}) {
    if (s.kind == SchemeKind::Gibbs) continue;
    r.parameters.emplace_back(std::string("scheme_") + domain, to_string(s.kind));
    if (s.kind == SchemeKind::Colored) {
      r.parameters.emplace_back(std::string("threads_per_chain_") + domain, std::to_string(s.threads));
      continue;
    }
    r.parameters.emplace_back(std::string("omega_") + domain, number_text(s.omega, 10));
    if (s.kind == SchemeKind::ChebyshevSsor) {
      r.parameters.emplace_back(std::string("lambda_min_") + domain, number_text(s.spectrum.lambda_min, 10));
      r.parameters.emplace_back(std::string("lambda_max_") + domain, number_text(s.spectrum.lambda_max, 10));
    }
  }
}

ConvergenceSettings settings_for(const ExperimentOptions& opt, std::size_t chains, std::size_t sweeps,
                                 std::uint64_t seed) {
  ConvergenceSettings cs;
  cs.chains = chains;
  cs.sweeps = sweeps;
  cs.seed = seed;
  cs.threads = opt.threads;
  cs.group = opt.group;
  return cs;
}

void add_run_timings(ExperimentResult& r, const ConvergenceCurves& c, const std::string& prefix) {
  r.timings.emplace_back(prefix + "sampling_primal", c.primal_stats.seconds);
  r.timings.emplace_back(prefix + "sampling_dual", c.dual_stats.seconds);
  r.timings.emplace_back(prefix + "primal_and_dual_with_accumulation", c.seconds);
  r.summary.emplace_back(prefix + "ns_per_update_primal", c.primal_stats.ns_per_update);
  r.summary.emplace_back(prefix + "ns_per_update_dual", c.dual_stats.ns_per_update);
}

ExperimentResult start_figure(const std::string& name, std::string title, const ExperimentOptions& opt) {
  check_options(name, opt);
  ExperimentResult res;
  res.name = name;
  res.title = std::move(title);
  add_common_parameters(res, opt);
  return res;
}

ExperimentResult finish(ExperimentResult res, const Stopwatch& total) {
  res.timings.emplace_back("total", total.seconds());
  return res;
}

std::vector<RateComparison> only(const std::vector<RateComparison>& rows, const std::string& from) {
  std::vector<RateComparison> out;
  for (const auto& r : rows)
    if (r.fitted_from == from) out.push_back(r);
  return out;
}

void note_missing_fits(ExperimentResult& r) {
  for (const auto& row : r.rates)
    if (!row.fit.ok()) r.notes.push_back("no " + row.fitted_from + " fit for '" + row.label + "': " + row.fit.note);
}

void single_model_convergence(ExperimentResult& res, const Model& model, const Eigen::MatrixXd& target,
                              const ConvergenceSettings& cs, const ExperimentOptions& opt) {
  const ConvergenceCurves curves = measure_convergence(model, target, cs, opt.progress, res.name);
  res.table = convergence_table(curves);
  const Stopwatch spectra;
  res.rates = compare_rates(model, curves);
  predict_scheme_rates(res.rates, cs.scheme_primal, cs.scheme_dual);
  res.timings.emplace_back("spectra", spectra.seconds());
  add_run_timings(res, curves);
  res.parameters.emplace_back("moments", to_string(curves.kind));
  const ErrorEstimate& p = curves.primal.back();
  const ErrorEstimate& d = curves.dual.back();
  res.summary.emplace_back("final_Eu_primal", p.Eu);
  res.summary.emplace_back("final_Eu_se_primal", p.Eu_se);
  res.summary.emplace_back("final_Eu_dual", d.Eu);
  res.summary.emplace_back("final_Eu_se_dual", d.Eu_se);
  res.summary.emplace_back("initial_Eu_primal", curves.primal.front().Eu);
  res.summary.emplace_back("initial_Eu_dual", curves.dual.front().Eu);
  if (!curves.dual_cv.empty()) {
    res.parameters.emplace_back("control_variate_degree", std::to_string(curves.cv_degree));
    res.summary.emplace_back("final_Eb_primal", p.Eb);
    res.summary.emplace_back("final_Eb_dual", d.Eb);
    res.summary.emplace_back("final_Eb_dual_cv", curves.dual_cv.back().Eb);
    res.summary.emplace_back("final_Eu_dual_cv", curves.dual_cv.back().Eu);
    res.summary.emplace_back("final_Eu_se_dual_cv", curves.dual_cv.back().Eu_se);
  }
  note_missing_fits(res);
}

RateFit mean_decay(const Model& m, Domain domain, std::size_t chains, std::size_t sweeps, std::uint64_t seed,
                   unsigned threads, ChainGroup* group, RateFit* x_tilde_fit, double* seconds) {
  EnsembleOptions o;
  o.chains = chains;
  o.sweeps = sweeps;
  o.seed = seed;
  o.threads = threads;
  o.group = group;
  o.init = InitialState::Given;
  // A large random start, so the mean stays far above its Monte Carlo floor while it decays. In the primal the
  // start is made positive: A = I - D^-1 Q has non-negative entries (Q's off-diagonal entries are -1/sigma_e^2), so
  // on a connected graph its slowest mode is a positive vector (Perron–Frobenius) and a positive start always
  // carries it with a sizeable weight; a signed random start can nearly miss it by chance, and the fit then
  // measures a faster mode (seen on ws:32,4,0.3 and kregular:32,4 for some seeds).
  Eigen::VectorXd start = 1e6 * normal_vector(m.dimension(domain), derive_seed(seed, 101));
  if (domain == Domain::Primal) start = start.cwiseAbs();
  o.given_state = start;
  o.observe_edges = domain == Domain::Dual;
  o.lockstep = 1;
  std::vector<double> t;
  std::vector<MeanPoint> a, b;
  const SparseMatrix B = m.incidence();
  const EnsembleStats st = run_ensemble(m, domain, o, [&](const Checkpoint& cp) {
    t.push_back(static_cast<double>(cp.sweep));
    a.push_back(mean_point(cp.states));
    if (domain == Domain::Dual) {
      const Eigen::MatrixXd xt = B * cp.states;
      b.push_back(mean_point(xt));
    }
  });
  if (seconds) *seconds += st.seconds;
  if (x_tilde_fit && domain == Domain::Dual) *x_tilde_fit = fit_mean(t, b);
  return fit_mean(t, a);
}

}  // namespace dualgibbs::detail
