// The info use case (api/info.hpp).
#include <dualgibbs/api/info.hpp>
#include <dualgibbs/sampling/accelerated.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {
namespace {

Record model_record(const Model& m) {
  const Graph& g = m.graph();
  Record j;
  j["nodes"] = g.num_nodes();
  j["edges"] = g.num_edges();
  j["min_degree"] = g.min_degree();
  j["max_degree"] = g.max_degree();
  j["mean_degree"] = 2.0 * g.num_edges() / g.num_nodes();
  j["components"] = g.num_components();
  j["isolated_nodes"] = g.num_isolated();
  j["has_cycles"] = g.has_cycles();
  j["homogeneous"] = m.is_homogeneous();
  if (m.is_homogeneous()) {
    j["s"] = m.s();
    j["sigma"] = m.sigma();
  }
  j["nnz_Q"] = static_cast<std::int64_t>(g.num_nodes()) + 2 * static_cast<std::int64_t>(g.num_edges());
  j["nnz_R"] = m.dual_precision_nonzeros();
  if (m.given_precision()) {  // how the given Q splits into edge factors (Model::from_precision)
    const FactorWidthReport& f = m.factor_width();
    Record p;
    p["has_dual"] = m.has_dual();
    p["factor_width"] = f.factor_width_two ? "2" : "more than 2";
    p["diagonally_dominant"] = f.diagonally_dominant;
    p["d_min"] = number(f.d_min);
    p["d_max"] = number(f.d_max);
    p["positive_couplings"] = f.positive_couplings;
    if (f.factor_width_two) p["unit_incidence"] = m.unit_incidence();
    if (!f.factor_width_two) {
      p["failing_row"] = f.failing_row;
      p["reason"] = f.reason;
    }
    j["precision"] = p;
  }
  return j;
}

Record closed_forms_record(const ClosedForms& t) {
  Record cf = Record::object();
  const auto put = [&](const char* key, const std::optional<ClosedForm>& c) {
    if (c) cf[key] = {{"value", number(c->value)}, {"source", c->source}};
  };
  put("lambda2_L", t.lambda2_L);
  put("lambda_max_A_primal", t.lambda_max_A_primal);
  put("lambda_max_A_dual", t.lambda_max_A_dual);
  put("rate_primal", t.rate_primal);
  put("rate_dual", t.rate_dual);
  put("rate_dual_effective", t.rate_dual_effective);
  put("rate_primal_asymptotic", t.rate_primal_asymptotic);
  put("rate_dual_asymptotic", t.rate_dual_asymptotic);
  put("rate_dual_effective_asymptotic", t.rate_dual_effective_asymptotic);
  return cf;
}

void add_spectra(Record& j, const Rates& r, const ClosedForms& t) {
  j["lambda2_L"] = number(r.lambda2_L);
  j["lambda_max_A_primal"] = number(r.lambda_max_A_primal);
  j["lambda_max_A_dual"] = number(r.lambda_max_A_dual);
  j["rate_primal"] = number(r.rate_primal);
  j["rate_dual"] = number(r.rate_dual);
  j["rate_dual_effective"] = number(r.rate_dual_effective);
  j["rate_primal_asymptotic"] = number(r.rate_primal_asymptotic);
  j["rate_dual_asymptotic"] = number(r.rate_dual_asymptotic);
  j["rate_dual_effective_asymptotic"] = number(r.rate_dual_effective_asymptotic);
  j["lambda_min_nonzero_L"] = number(r.lambda_min_nonzero_L);
  if (r.components > 1 && r.components <= 1000) {
    Record per = Record::array();
    for (double x : r.lambda2_L_per_component) per.push_back(number(x));
    j["lambda2_L_per_component"] = per;
  }
  j["spectral"] = {{"method_lambda2", to_string(r.method_lambda2)},
                   {"method_primal", to_string(r.method_primal)},
                   {"method_dual", to_string(r.method_dual)},
                   {"seconds_lambda2", r.seconds_lambda2},
                   {"seconds_primal", r.seconds_primal},
                   {"seconds_dual", r.seconds_dual}};
  j["closed_forms"] = closed_forms_record(t);
}

// rate_ssor_D, rate_cheby_ssor_D, omega_D, lambda_min_ssor_D, lambda_max_ssor_D for D = primal, dual (null when
// skipped or undefined): the default spectrum of each domain's precision (default_ssor_spectrum()).
void add_accel_rates(Record& j, const Model& m, Index max_dimension) {
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const std::string suffix = std::string("_") + to_string(d);
    const Index n = m.dimension(d);
    double omega = NAN, rate_ssor = NAN, rate_cheby = NAN, lo = NAN, hi = NAN;
    if (n >= 1 && n <= max_dimension && (d == Domain::Primal || m.has_dual())) {
      const SsorSpectrum s = default_ssor_spectrum(m.precision(d));
      omega = s.omega;
      lo = s.lambda_min;
      hi = s.lambda_max;
      rate_ssor = ssor_rate(s);
      rate_cheby = chebyshev_ssor_rate(s);
    }
    j["omega" + suffix] = number(omega);
    j["lambda_min_ssor" + suffix] = number(lo);
    j["lambda_max_ssor" + suffix] = number(hi);
    j["rate_ssor" + suffix] = number(rate_ssor);
    j["rate_cheby_ssor" + suffix] = number(rate_cheby);
  }
}

SpectralOptions spectral_options(const InfoOptions& options) {
  SpectralOptions so;
  so.method = parse_spectral_method(options.method);
  so.tolerance = options.tolerance;
  return so;
}

}  // namespace

InfoResult info(const Model& model, const GraphSpec* spec, const InfoOptions& options) {
  const SpectralOptions so = spectral_options(options);
  InfoResult r;
  r.record = model_record(model);
  r.summary = model.summary();
  r.accel_max_dimension = options.accel ? kInfoAccelMaxDimension : kInfoAccelDefaultMaxDimension;
  if (!options.spectra) return r;
  r.rates = convergence_rates(model, so);
  r.closed_forms = spec ? closed_forms(*spec, model) : closed_forms(model);
  add_spectra(r.record, *r.rates, r.closed_forms);
  add_accel_rates(r.record, model, r.accel_max_dimension);
  return r;
}

InfoResult info(const ModelSource& source, const InfoOptions& options) {
  (void)spectral_options(options);  // an unknown method is named before the model is read
  if (source.obs_file)
    throw std::invalid_argument(
        "info: --obs-file does not apply: sizes, spectra and rates do not depend on the mean (exact --obs-file gives "
        "the posterior mean)");
  const LoadedModel loaded = load_model(source, false);
  return info(loaded.model, &loaded.spec, options);
}

}  // namespace dualgibbs::api
