// The --scheme, --omega, --lambda-min and --lambda-max options shared by sample, converge, bench and marginals
// (cli.hpp); their defaults and checks are api::make_scheme()'s.
#include "cli.hpp"

#include <string>

namespace dualgibbs::cli {

void add_scheme_options(CLI::App& app, SchemeCli& target) {
  app.add_option("--scheme", target.scheme,
                 "sweep scheme: gibbs (the scan of --scan), ssor (forward + backward sweep with relaxation --omega,\n"
                 "2n updates) or cheby-ssor (Chebyshev-accelerated SSOR, Fox and Parker 2017; 2n updates per\n"
                 "iteration). A sweep of ssor / cheby-ssor is one iteration; with --scan colored they sweep the\n"
                 "colour classes in order (forward, then backward), with that order's spectrum.")
      ->capture_default_str();
  app.add_option("--omega", target.omega,
                 "relaxation of ssor and cheby-ssor, in (0, 2) (default: the optimum of the SSOR spectrum for up to\n"
                 "5000 coordinates, else 1)");
  app.add_option("--lambda-min", target.lambda_min,
                 "cheby-ssor: smallest eigenvalue of the SSOR-preconditioned precision at --omega (default: computed)");
  app.add_option("--lambda-max", target.lambda_max,
                 "cheby-ssor: largest eigenvalue of the SSOR-preconditioned precision at --omega (default: computed)");
}

}  // namespace dualgibbs::cli
