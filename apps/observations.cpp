#include "observations.hpp"

namespace dualgibbs::cli {

void add_mean_options(CLI::App& app, MeanCliOptions& opt) {
  app.add_option("--mean-solver", opt.solver,
                 "with --obs-file: how the posterior mean mu = Q^-1 D_s^-1 z is solved: cholesky (CHOLMOD) or cg\n"
                 "(Jacobi-preconditioned conjugate gradients, for graphs whose factor does not fit)")
      ->capture_default_str();
  app.add_option("--mean-tolerance", opt.tolerance,
                 "cg stops when ||h - Q mu|| <= TOL ||h|| (in (0, 1); error <= cond(Q) TOL, docs/observations.md)")
      ->capture_default_str();
}

}  // namespace dualgibbs::cli
