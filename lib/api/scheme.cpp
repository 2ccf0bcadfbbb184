// The sweep scheme of a use case and its defaults (api/scheme.hpp).
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {

SchemeOptions make_scheme(const SchemeChoice& cli, const Model& model, Domain domain, const std::string& command) {
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
  // The colour-ordered sweep is the SSOR of the colour-ordered precision: its spectrum is that matrix's.
  s.colored_order = cli.scan == "colored";
  const auto precision = [&] {
    return s.colored_order ? color_permuted(model.precision(domain), domain_coloring(model, domain))
                           : model.precision(domain);
  };
  if (cli.omega) {
    s.omega = *cli.omega;
    if (s.kind == SchemeKind::ChebyshevSsor)
      s.spectrum =
          bounds ? SsorSpectrum{s.omega, *cli.lambda_min, *cli.lambda_max} : ssor_spectrum(precision(), s.omega);
  } else if (n <= kOptimalOmegaMaxDimension || s.kind == SchemeKind::ChebyshevSsor) {
    s.spectrum = default_ssor_spectrum(precision());
    s.omega = s.spectrum.omega;
  } else {
    s.omega = 1.0;  // ssor above kOptimalOmegaMaxDimension: no spectrum needed
  }
  if (s.kind == SchemeKind::ChebyshevSsor) (void)ChebyshevSsorSweep(s.spectrum);  // checks the bounds now
  return s;
}

SchemeOptions make_scheme(const SchemeChoice& cli, unsigned threads, const Model& model, Domain domain,
                          const std::string& command) {
  const std::string& scan = cli.scan;
  (void)scan_order(scan);  // an unknown scan is refused before any spectrum is computed
  SchemeOptions s = make_scheme(cli, model, domain, command);
  if (s.kind != SchemeKind::Gibbs && scan != "random" && scan != "colored")
    throw std::invalid_argument(command + ": --scan " + scan +
                                " applies to --scheme gibbs (ssor and cheby-ssor sweep 0..n-1, n-1..0, or the colour "
                                "classes in order with --scan colored)");
  if (scan == "colored" && s.kind == SchemeKind::Gibbs) {
    s.kind = SchemeKind::Colored;
    s.threads = threads ? threads : available_threads();
  }
  return s;
}

ScanOrder scan_order(const std::string& scan) { return parse_scan_order(scan == "colored" ? "random" : scan); }

void add_scheme_record(Record& j, const SchemeOptions& s) {
  if (s.kind == SchemeKind::Gibbs) return;
  if (s.kind == SchemeKind::Colored) {
    j["scan"] = "colored";
    j["threads_per_chain"] = s.threads;
    return;
  }
  j["scheme"] = to_string(s.kind);
  if (s.colored_order) j["scan"] = "colored";
  j["omega"] = s.omega;
  if (s.kind == SchemeKind::ChebyshevSsor) {
    j["lambda_min"] = s.spectrum.lambda_min;
    j["lambda_max"] = s.spectrum.lambda_max;
    j["rate_cheby_ssor"] = chebyshev_ssor_rate(s.spectrum);
  } else if (std::isfinite(s.spectrum.lambda_min)) {
    j["rate_ssor"] = ssor_rate(s.spectrum);
  }
}

}  // namespace dualgibbs::api
