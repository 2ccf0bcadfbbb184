// The run without a subcommand. Until the experiments land it states what the model is and which parts
// of dualgibbs are still pending: it never prints a result it has not computed.
#include "cli.hpp"

#include <iostream>

namespace dualgibbs::cli {

int run_default(const CommonOptions& common) {
  const Model m = common.model();
  std::cout << "dualgibbs: " << m.summary() << "\n"
            << "  primal precision Q: " << m.num_nodes() << " x " << m.num_nodes() << ", "
            << (m.num_nodes() + 2 * static_cast<long long>(m.num_edges())) << " non-zeros\n"
            << "  dual precision R:   " << m.num_edges() << " x " << m.num_edges() << ", " << m.dual_precision_nonzeros()
            << " non-zeros\n"
            << "pending (not yet built): the headline demo (primal vs dual convergence), samplers, exact ground truth,\n"
            << "spectra and rates. Available now: 'dualgibbs info'. See 'dualgibbs --help'.\n";
  return 0;
}

}  // namespace dualgibbs::cli
