// dualgibbs info: sizes, degrees, components and parameters of the model, then its spectra and the
// random-sweep convergence rates, computed (spectral.hpp) and, where the paper has one, in closed form beside
// them (Prop. 1, 4, 5, Appendix A, Table I).
#include "cli.hpp"

#include <dualgibbs/api/info.hpp>

#include <dualgibbs/core/number_text.hpp>
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

std::string fmt(double x) { return std::isnan(x) ? "-" : number_text(x, 15); }

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
              max_dimension < api::kInfoAccelMaxDimension ? ", --accel: 50000" : "");
}

void print_row(const char* name, double computed, const std::optional<ClosedForm>& c) {
  std::printf("  %-28s %-22s", name, fmt(computed).c_str());
  if (c) std::printf(" %-22s %s", fmt(c->value).c_str(), c->source.c_str());
  std::printf("\n");
}

void print_spectra(const Rates& r, const ClosedForms& t, bool edges, bool cycles) {
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
  if (std::isnan(r.rate_dual_effective) && edges)
    std::printf("  (effective rate: Prop. 5 needs a homogeneous model on a graph with cycles%s)\n",
                cycles ? "" : "; without cycles it equals r_d");
}

struct InfoCliOptions {
  bool json = false;
  bool no_spectra = false;
  api::InfoOptions info;
};

void print_text(const api::InfoResult& r) {
  const nlohmann::json& j = r.record;
  const bool cycles = j["has_cycles"].get<bool>();
  std::cout << "model: " << r.summary << "\n";
  std::cout << "  nodes |V|            " << j["nodes"] << "\n"
            << "  edges |E|            " << j["edges"] << "\n"
            << "  degree min/mean/max  " << j["min_degree"] << " / " << j["mean_degree"] << " / " << j["max_degree"]
            << "\n"
            << "  components           " << j["components"]
            << (j["components"].get<Index>() > 1 ? "  (disconnected: spectra are per component)" : "") << "\n"
            << "  isolated nodes       " << j["isolated_nodes"] << "\n"
            << "  cycles               " << (cycles ? "yes" : "no (a forest: the dual has no cycle space)") << "\n"
            << "  nnz(Q), nnz(R)       " << j["nnz_Q"] << ", " << j["nnz_R"] << std::endl;
  if (r.rates) {
    print_spectra(*r.rates, r.closed_forms, j["edges"].get<Index>() > 0, cycles);
    print_accel(j, r.accel_max_dimension);
  }
  std::fflush(stdout);
}

std::function<int()> setup_info(CLI::App& app, CommonOptions& common) {
  app.description("sizes, components, spectra and convergence rates of the model, with the paper's closed forms");
  static InfoCliOptions opt;
  app.add_flag("--json", opt.json, "machine-readable output on stdout");
  app.add_flag("--no-spectra", opt.no_spectra, "sizes only: skip the eigenvalue computations");
  app.add_flag("--accel", opt.info.accel,
               "SSOR / Chebyshev-SSOR rates up to 50000 coordinates per domain (optimum omega up to 5000, omega = 1\n"
               "above): many Lanczos runs, seconds to minutes; without it only up to 1000 coordinates");
  app.add_option("--method", opt.info.method,
                 "eigensolver: auto | dense | shift-invert | lanczos (auto: dense for small problems, shift-invert\n"
                 "when the Cholesky factor of the Laplacian pattern is small, matrix-free Lanczos otherwise)")
      ->capture_default_str();
  app.add_option("--tolerance", opt.info.tolerance, "relative residual tolerance of the iterative eigensolvers")
      ->capture_default_str();
  return [&common]() {
    opt.info.spectra = !opt.no_spectra;
    const api::InfoResult r = api::info(common, opt.info);
    if (opt.json) {
      print_json(r.record);
      return 0;
    }
    print_text(r);
    return 0;
  };
}

const Registration reg{{"info", setup_info}};

}  // namespace
}  // namespace dualgibbs::cli
