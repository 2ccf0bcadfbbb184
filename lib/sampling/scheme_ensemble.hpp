#pragma once
// The library's own: run_ensemble(model, ...) with a scheme other than Gibbs (accelerated.cpp), which ensemble.cpp's
// entry point hands such schemes to.
#include <dualgibbs/sampling/ensemble.hpp>

namespace dualgibbs::detail {

// run_ensemble(model, domain, options, observe, scheme) for scheme.kind != SchemeKind::Gibbs: its checks (omega,
// the Chebyshev bounds), the domain's kernel and the scheme's sweep.
EnsembleStats run_scheme_ensemble(const Model& model, Domain domain, const EnsembleOptions& options,
                                  const Observer& observe, const SchemeOptions& scheme);

}  // namespace dualgibbs::detail
