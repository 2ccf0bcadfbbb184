// dualgibbs info: sizes, degrees, components and parameters of the model, then its spectra and the
// random-sweep convergence rates, computed (spectral.hpp) and, where the paper has one, in closed form beside
// them (Prop. 1, 4, 5, Appendix A, Table I).
#include "cli.hpp"

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs::cli {
namespace {

nlohmann::json model_info(const Model& m) {
  const Graph& g = m.graph();
  nlohmann::json j;
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
  return j;
}

// ---- output -------------------------------------------------------------------------------------------

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

void add_spectra(nlohmann::json& j, const Rates& r, const ClosedForms& t) {
  j["lambda2_L"] = number_or_null(r.lambda2_L);
  j["lambda_max_A_primal"] = number_or_null(r.lambda_max_A_primal);
  j["lambda_max_A_dual"] = number_or_null(r.lambda_max_A_dual);
  j["rate_primal"] = number_or_null(r.rate_primal);
  j["rate_dual"] = number_or_null(r.rate_dual);
  j["rate_dual_effective"] = number_or_null(r.rate_dual_effective);
  j["rate_primal_asymptotic"] = number_or_null(r.rate_primal_asymptotic);
  j["rate_dual_asymptotic"] = number_or_null(r.rate_dual_asymptotic);
  j["rate_dual_effective_asymptotic"] = number_or_null(r.rate_dual_effective_asymptotic);
  j["lambda_min_nonzero_L"] = number_or_null(r.lambda_min_nonzero_L);
  if (r.components > 1 && r.components <= 1000) {
    nlohmann::json per = nlohmann::json::array();
    for (double x : r.lambda2_L_per_component) per.push_back(number_or_null(x));
    j["lambda2_L_per_component"] = per;
  }
  j["spectral"] = {{"method_lambda2", to_string(r.method_lambda2)},
                   {"method_primal", to_string(r.method_primal)},
                   {"method_dual", to_string(r.method_dual)},
                   {"seconds_lambda2", r.seconds_lambda2},
                   {"seconds_primal", r.seconds_primal},
                   {"seconds_dual", r.seconds_dual}};
  nlohmann::json cf = nlohmann::json::object();
  const auto put = [&](const char* key, const std::optional<ClosedForm>& c) {
    if (c) cf[key] = {{"value", number_or_null(c->value)}, {"source", c->source}};
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
  j["closed_forms"] = cf;
}

std::string fmt(double x) { return std::isnan(x) ? "-" : number_text(x, 15); }

// Largest dimension for which info computes the SSOR spectrum at all (at omega = 1 above
// kOptimalOmegaMaxDimension): the smallest eigenvalue of a large lattice needs many Lanczos steps. By default only
// up to kAccelDefaultMaxDimension (a fraction of a second: torus:20 0.4 s; torus:30 0.9 s, torus:100 20 s CPU), with
// --accel up to kAccelMaxDimension.
constexpr Index kAccelDefaultMaxDimension = 1000;
constexpr Index kAccelMaxDimension = 50000;

// rate_ssor_D, rate_cheby_ssor_D, omega_D, lambda_min_ssor_D, lambda_max_ssor_D for D = primal, dual (null when
// skipped or undefined).
void add_accel_rates(nlohmann::json& j, const Model& m, Index max_dimension) {
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const std::string suffix = std::string("_") + to_string(d);
    const Index n = m.dimension(d);
    double omega = NAN, rate_ssor = NAN, rate_cheby = NAN, lo = NAN, hi = NAN;
    if (n >= 1 && n <= max_dimension) {
      const SparseMatrix A = m.precision(d);
      const SsorSpectrum s = default_ssor_spectrum(A);
      omega = s.omega;
      lo = s.lambda_min;
      hi = s.lambda_max;
      rate_ssor = ssor_rate(s);
      rate_cheby = chebyshev_ssor_rate(s);
    }
    j["omega" + suffix] = number_or_null(omega);
    j["lambda_min_ssor" + suffix] = number_or_null(lo);
    j["lambda_max_ssor" + suffix] = number_or_null(hi);
    j["rate_ssor" + suffix] = number_or_null(rate_ssor);
    j["rate_cheby_ssor" + suffix] = number_or_null(rate_cheby);
  }
}

void print_accel(const nlohmann::json& j, Index max_dimension) {
  std::printf("accelerated samplers: convergence factor of the mean per iteration (2n site updates)\n");
  for (const char* d : {"primal", "dual"}) {
    const std::string suffix = std::string("_") + d;
    auto get = [&](const std::string& key) {
      return j[key + suffix].is_null() ? std::nan("") : j[key + suffix].get<double>();
    };
    std::printf("  %-6s omega %-8s  SSOR %-20s  Chebyshev-SSOR %-20s\n", d, fmt(get("omega")).c_str(),
                fmt(get("rate_ssor")).c_str(), fmt(get("rate_cheby_ssor")).c_str());
  }
  std::printf("  (omega: the optimum up to %ld coordinates, 1 above; not computed above %ld%s)\n",
              static_cast<long>(kOptimalOmegaMaxDimension), static_cast<long>(max_dimension),
              max_dimension < kAccelMaxDimension ? ", --accel: 50000" : "");
}

void print_row(const char* name, double computed, const std::optional<ClosedForm>& c) {
  std::printf("  %-28s %-22s", name, fmt(computed).c_str());
  if (c) std::printf(" %-22s %s", fmt(c->value).c_str(), c->source.c_str());
  std::printf("\n");
}

void print_spectra(const Model& m, const Rates& r, const ClosedForms& t) {
  const Graph& g = m.graph();
  std::printf("spectra (lambda_2: %s, primal: %s, dual: %s; %.3g s)\n", to_string(r.method_lambda2),
              to_string(r.method_primal), to_string(r.method_dual),
              r.seconds_lambda2 + r.seconds_primal + r.seconds_dual);
  std::printf("  %-28s %-22s %-22s %s\n", "", "computed", "closed form", "source");
  print_row("lambda_2(L)", r.lambda2_L, t.lambda2_L);
  if (r.components > 1) {
    std::printf("  %-28s", "  per component");
    const std::size_t shown = std::min<std::size_t>(r.lambda2_L_per_component.size(), 8);
    for (std::size_t c = 0; c < shown; ++c) std::printf(" %s", fmt(r.lambda2_L_per_component[c]).c_str());
    if (shown < r.lambda2_L_per_component.size()) std::printf(" ... (%zu in all)", r.lambda2_L_per_component.size());
    std::printf("\n");
    print_row("smallest non-zero of L", r.lambda_min_nonzero_L, std::nullopt);
  }
  print_row("lambda_max(A) primal", r.lambda_max_A_primal, t.lambda_max_A_primal);
  print_row("lambda_max(A) dual", r.lambda_max_A_dual, t.lambda_max_A_dual);
  std::printf("random-sweep convergence rates per sweep (asymptotic: limit of many coordinates)\n");
  print_row("r_p  primal", r.rate_primal, t.rate_primal);
  print_row("r_p  asymptotic", r.rate_primal_asymptotic, t.rate_primal_asymptotic);
  print_row("r_d  dual", r.rate_dual, t.rate_dual);
  print_row("r_d  asymptotic", r.rate_dual_asymptotic, t.rate_dual_asymptotic);
  print_row("r_d  effective (x~ = B y~)", r.rate_dual_effective, t.rate_dual_effective);
  print_row("r_d  effective asymptotic", r.rate_dual_effective_asymptotic, t.rate_dual_effective_asymptotic);
  if (std::isnan(r.rate_dual_effective) && g.num_edges() > 0)
    std::printf("  (effective rate: Prop. 5 needs a homogeneous model on a graph with cycles%s)\n",
                g.has_cycles() ? "" : "; without cycles it equals r_d");
}

struct InfoOptions {
  bool json = false;
  bool no_spectra = false;
  bool accel = false;
  std::string method = "auto";
  double tolerance = SpectralOptions{}.tolerance;
};

std::function<int()> setup_info(CLI::App& app, CommonOptions& common) {
  app.description("sizes, components, spectra and convergence rates of the model, with the paper's closed forms");
  static InfoOptions opt;
  app.add_flag("--json", opt.json, "machine-readable output on stdout");
  app.add_flag("--no-spectra", opt.no_spectra, "sizes only: skip the eigenvalue computations");
  app.add_flag("--accel", opt.accel,
               "SSOR / Chebyshev-SSOR rates up to 50000 coordinates per domain (optimum omega up to 5000, omega = 1\n"
               "above): many Lanczos runs, seconds to minutes; without it only up to 1000 coordinates");
  app.add_option("--method", opt.method,
                 "eigensolver: auto | dense | shift-invert | lanczos (auto: dense for small problems, shift-invert\n"
                 "when the Cholesky factor of the Laplacian pattern is small, matrix-free Lanczos otherwise)")
      ->capture_default_str();
  app.add_option("--tolerance", opt.tolerance, "relative residual tolerance of the iterative eigensolvers")
      ->capture_default_str();
  return [&common]() {
    SpectralOptions so;
    so.method = parse_spectral_method(opt.method);
    so.tolerance = opt.tolerance;
    common.refuse_obs_file(
        "info", "sizes, spectra and rates do not depend on the mean (exact --obs-file gives the posterior mean)");
    const Model m = common.model();
    nlohmann::json j = model_info(m);
    const Index accel_max = opt.accel ? kAccelMaxDimension : kAccelDefaultMaxDimension;
    std::optional<Rates> rates;
    ClosedForms theory;
    if (!opt.no_spectra) {
      rates = convergence_rates(m, so);
      theory = closed_forms(common.spec(), m);
      add_spectra(j, *rates, theory);
      add_accel_rates(j, m, accel_max);
    }
    if (opt.json) {
      print_json(j);
      return 0;
    }
    std::cout << "model: " << m.summary() << "\n";
    std::cout << "  nodes |V|            " << j["nodes"] << "\n"
              << "  edges |E|            " << j["edges"] << "\n"
              << "  degree min/mean/max  " << j["min_degree"] << " / " << j["mean_degree"] << " / " << j["max_degree"]
              << "\n"
              << "  components           " << j["components"]
              << (m.graph().num_components() > 1 ? "  (disconnected: spectra are per component)" : "") << "\n"
              << "  isolated nodes       " << j["isolated_nodes"] << "\n"
              << "  cycles               "
              << (m.graph().has_cycles() ? "yes" : "no (a forest: the dual has no cycle space)") << "\n"
              << "  nnz(Q), nnz(R)       " << j["nnz_Q"] << ", " << j["nnz_R"] << std::endl;
    if (rates) {
      print_spectra(m, *rates, theory);
      print_accel(j, accel_max);
    }
    std::fflush(stdout);
    return 0;
  };
}

const Registration reg{{"info", setup_info}};

}  // namespace
}  // namespace dualgibbs::cli
