// The --scheme, --omega, --lambda-min and --lambda-max options shared by sample, converge, bench and marginals
// (cli.hpp).
#include "cli.hpp"

#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs::cli {

void add_scheme_options(CLI::App& app, SchemeCli& target) {
  app.add_option("--scheme", target.scheme,
                 "sweep scheme: gibbs (the scan of --scan), ssor (forward + backward sweep with relaxation --omega,\n"
                 "2n updates) or cheby-ssor (Chebyshev-accelerated SSOR, Fox and Parker 2017; 2n updates per\n"
                 "iteration). A sweep of ssor / cheby-ssor is one iteration.")
      ->capture_default_str();
  app.add_option("--omega", target.omega,
                 "relaxation of ssor and cheby-ssor, in (0, 2) (default: the optimum of the SSOR spectrum for up to\n"
                 "5000 coordinates, else 1)");
  app.add_option("--lambda-min", target.lambda_min,
                 "cheby-ssor: smallest eigenvalue of the SSOR-preconditioned precision at --omega (default: computed)");
  app.add_option("--lambda-max", target.lambda_max,
                 "cheby-ssor: largest eigenvalue of the SSOR-preconditioned precision at --omega (default: computed)");
}

SchemeOptions resolve_scheme(const SchemeCli& cli, const Model& model, Domain domain, const std::string& command) {
  SchemeOptions s;
  s.kind = parse_scheme_kind(cli.scheme);
  const bool bounds = cli.lambda_min || cli.lambda_max;
  if (s.kind == SchemeKind::Gibbs) {
    if (cli.omega || bounds)
      throw std::invalid_argument(command + ": --omega, --lambda-min and --lambda-max apply to --scheme ssor and " +
                                  "cheby-ssor, not gibbs");
    return s;
  }
  if (s.kind == SchemeKind::Ssor && bounds)
    throw std::invalid_argument(command + ": --lambda-min and --lambda-max apply to --scheme cheby-ssor only");
  if (bounds && !(cli.lambda_min && cli.lambda_max))
    throw std::invalid_argument(command + ": give both --lambda-min and --lambda-max, or neither (then computed)");
  if (bounds && !cli.omega)
    throw std::invalid_argument(command + ": --lambda-min and --lambda-max belong to one relaxation: give --omega too");
  if (cli.omega && !(*cli.omega > 0.0 && *cli.omega < 2.0))
    throw std::invalid_argument(command + ": --omega " + number_text(*cli.omega) + " is not in (0, 2)");
  const Index n = model.dimension(domain);
  if (domain == Domain::Dual && n < 1)
    throw std::invalid_argument(command + ": the graph has no edges, so the dual domain is empty");
  if (cli.omega) {
    s.omega = *cli.omega;
    if (s.kind == SchemeKind::ChebyshevSsor)
      s.spectrum =
          bounds ? SsorSpectrum{s.omega, *cli.lambda_min, *cli.lambda_max} : ssor_spectrum(model, domain, s.omega);
  } else if (n <= kOptimalOmegaMaxDimension || s.kind == SchemeKind::ChebyshevSsor) {
    s.spectrum = default_ssor_spectrum(model.precision(domain));
    s.omega = s.spectrum.omega;
  } else {
    s.omega = 1.0;  // ssor above kOptimalOmegaMaxDimension: no spectrum needed
  }
  if (s.kind == SchemeKind::ChebyshevSsor) (void)ChebyshevSsorSweep(s.spectrum);  // checks the bounds now
  return s;
}

SchemeOptions resolve_scheme(const SchemeCli& cli, const std::string& scan, unsigned threads, const Model& model,
                             Domain domain, const std::string& command) {
  SchemeOptions s = resolve_scheme(cli, model, domain, command);
  if (s.kind != SchemeKind::Gibbs && scan != "random")
    throw std::invalid_argument(command + ": --scan " + scan +
                                " applies to --scheme gibbs (ssor and cheby-ssor sweep 0..n-1, n-1..0)");
  if (scan == "colored") {
    s.kind = SchemeKind::Colored;
    s.threads = threads ? threads : available_threads();
  }
  return s;
}

ScanOrder parse_scan(const std::string& scan) { return parse_scan_order(scan == "colored" ? "random" : scan); }

void add_scheme_json(nlohmann::json& j, const SchemeOptions& s) {
  if (s.kind == SchemeKind::Gibbs) return;
  if (s.kind == SchemeKind::Colored) {
    j["scan"] = "colored";
    j["threads_per_chain"] = s.threads;
    return;
  }
  j["scheme"] = to_string(s.kind);
  j["omega"] = s.omega;
  if (s.kind == SchemeKind::ChebyshevSsor) {
    j["lambda_min"] = s.spectrum.lambda_min;
    j["lambda_max"] = s.spectrum.lambda_max;
    j["rate_cheby_ssor"] = chebyshev_ssor_rate(s.spectrum);
  } else if (std::isfinite(s.spectrum.lambda_min)) {
    j["rate_ssor"] = ssor_rate(s.spectrum);
  }
}

}  // namespace dualgibbs::cli
