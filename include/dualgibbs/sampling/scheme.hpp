#pragma once
/// \file scheme.hpp
/// The sweep schemes an ensemble can choose at run time (run_ensemble(), ensemble.hpp): the paper's Gibbs scans, the
/// SSOR sampler, its Chebyshev acceleration (accelerated.hpp) and the coloured sweep, with the parameters each needs.

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <cstddef>
#include <limits>
#include <string>

namespace dualgibbs {

/// The extreme eigenvalues of M_omega^-1 A, A's SSOR preconditioner at relaxation omega (both in (0, 1]).
struct SsorSpectrum {
  double omega = 1.0;                                            ///< the relaxation they belong to
  double lambda_min = std::numeric_limits<double>::quiet_NaN();  ///< smallest eigenvalue of M_omega^-1 A
  double lambda_max = std::numeric_limits<double>::quiet_NaN();  ///< largest eigenvalue of M_omega^-1 A
};

/// The sweep schemes a run can choose by name.
enum class SchemeKind {
  Gibbs,          ///< ScanSweep(EnsembleOptions::scan): the paper's samplers (n site updates per sweep)
  Ssor,           ///< SymmetricSweep(omega): the SSOR sampler (2n site updates per sweep)
  ChebyshevSsor,  ///< ChebyshevSsorSweep: Chebyshev-accelerated SSOR (2n site updates per iteration)
  Colored         ///< ColoredSweep over domain_coloring(): one chain's classes on SchemeOptions::threads threads
};

/// "gibbs", "ssor", "cheby-ssor" or "colored". \throws std::invalid_argument for anything else, listing the names.
/// \param name the scheme's name
/// \return the scheme
DUALGIBBS_EXPORT SchemeKind parse_scheme_kind(const std::string& name);
/// The name parse_scheme_kind() accepts.
/// \param kind the scheme
/// \return its name
DUALGIBBS_EXPORT const char* to_string(SchemeKind kind) noexcept;

/// A scheme chosen at run time.
struct SchemeOptions {
  SchemeKind kind = SchemeKind::Gibbs;  ///< which scheme
  double omega = 1.0;                   ///< relaxation (ssor, cheby-ssor), in (0, 2)
  SsorSpectrum spectrum;                ///< cheby-ssor: the bounds at `omega` (ssor_spectrum()); required
  unsigned threads = 1;                 ///< colored: threads per chain (>= 1); the chains then run one at a time
  /// ssor, cheby-ssor: the sites in colour order (ColoredSsorSweep over domain_coloring(); the spectrum then that of
  /// the colour-ordered precision, color_permuted()), the order in which a graph split over ranks is swept.
  bool colored_order = false;
};

/// Site updates one sweep of the scheme performs on n coordinates (n for gibbs and colored, 2n otherwise).
/// \param scheme the scheme
/// \param n the number of coordinates
/// \return n or 2n
DUALGIBBS_EXPORT std::size_t site_updates_per_sweep(const SchemeOptions& scheme, Index n) noexcept;

}  // namespace dualgibbs
