// Private machinery every experiment's result shares (experiment_support.hpp).
#include "experiments/experiment_support.hpp"

#include <dualgibbs/core/number_text.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dualgibbs::detail {

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

void add_run_timings(ExperimentResult& r, const ConvergenceCurves& c, const std::string& prefix) {
  const bool dual = !c.dual.empty();  // a model without a dual ran the primal alone
  r.timings.emplace_back(prefix + "sampling_primal", c.primal_stats.seconds);
  if (dual) r.timings.emplace_back(prefix + "sampling_dual", c.dual_stats.seconds);
  r.timings.emplace_back(prefix + (dual ? "primal_and_dual_with_accumulation" : "primal_with_accumulation"), c.seconds);
  r.summary.emplace_back(prefix + "ns_per_update_primal", c.primal_stats.ns_per_update);
  if (dual) r.summary.emplace_back(prefix + "ns_per_update_dual", c.dual_stats.ns_per_update);
}

ExperimentResult finish(ExperimentResult res, const Stopwatch& total) {
  res.timings.emplace_back("total", total.seconds());
  return res;
}

void note_missing_fits(ExperimentResult& r) {
  for (const auto& row : r.rates)
    if (!row.fit.ok()) r.notes.push_back("no " + row.fitted_from + " fit for '" + row.label + "': " + row.fit.note);
}

void single_model_convergence(ExperimentResult& res, const Model& model, const Eigen::MatrixXd& target,
                              const ConvergenceSettings& cs, const ProgressFn& progress) {
  const ConvergenceCurves curves = measure_convergence(model, target, cs, progress, res.name);
  res.table = convergence_table(curves);
  const Stopwatch spectra;
  res.rates = compare_rates(model, curves);
  predict_scheme_rates(res.rates, cs.scheme_primal, cs.scheme_dual);
  res.timings.emplace_back("spectra", spectra.seconds());
  add_run_timings(res, curves);
  res.parameters.emplace_back("moments", to_string(curves.kind));
  const ErrorEstimate& p = curves.primal.back();
  if (curves.dual.empty()) {  // a model without a dual: the primal alone
    res.summary.emplace_back("final_Eu_primal", p.Eu);
    res.summary.emplace_back("final_Eu_se_primal", p.Eu_se);
    res.summary.emplace_back("initial_Eu_primal", curves.primal.front().Eu);
    res.notes.push_back("the model has no dual (its precision is not of factor width 2): the primal sampler alone");
    note_missing_fits(res);
    return;
  }
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

}  // namespace dualgibbs::detail
