#pragma once
/// \file scheme.hpp
/// The sweep scheme of a use case that samples, as the user names it (scheme, scan, omega, spectrum bounds), and
/// the one place that turns it into SchemeOptions with its defaults: the relaxation omega (the spectral optimum up
/// to kOptimalOmegaMaxDimension coordinates, else 1) and, for cheby-ssor, the SSOR spectrum bounds.

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/sampling/accelerated.hpp>

#include <optional>
#include <string>

namespace dualgibbs::api {

/// A sweep scheme by name, before its defaults are resolved.
struct SchemeChoice {
  /// "gibbs" (the scan of `scan`), "ssor" (forward + backward sweep with relaxation omega) or "cheby-ssor"
  /// (Chebyshev-accelerated SSOR).
  std::string scheme = "gibbs";
  /// "random", "permutation", "fixed" or "colored" (greedy colour classes in order: gibbs with each class updated by
  /// the execution's threads; ssor and cheby-ssor in colour order, SchemeOptions::colored_order).
  std::string scan = "random";
  std::optional<double> omega;       ///< relaxation of ssor and cheby-ssor, in (0, 2); default: see make_scheme()
  std::optional<double> lambda_min;  ///< cheby-ssor: smallest eigenvalue of the SSOR-preconditioned precision
  std::optional<double> lambda_max;  ///< cheby-ssor: largest eigenvalue of the SSOR-preconditioned precision
};

/// The scheme `choice` names for `domain` of `model`, its defaults resolved: omega the optimum of the SSOR spectrum
/// (default_ssor_spectrum()) up to kOptimalOmegaMaxDimension coordinates and for every cheby-ssor, else 1; the
/// cheby-ssor bounds given or computed (ssor_spectrum()). The scan itself is not part of the result except for
/// "colored" (SchemeKind::Colored with `threads` threads per chain, 0 = available_threads()): see scan_order().
/// \param choice the scheme as named
/// \param threads the execution's threads (used by the colored scan)
/// \param model the model sampled
/// \param domain the domain sampled
/// \param command the use case's name, for messages
/// \return the scheme, its defaults resolved
/// \throws std::invalid_argument for an unknown scheme or scan, omega or bounds with gibbs, bounds with ssor, only
///         one of the two bounds, bounds without omega, omega outside (0, 2), a scan other than random or colored with
///         ssor or cheby-ssor, or an empty dual domain.
DUALGIBBS_EXPORT SchemeOptions make_scheme(const SchemeChoice& choice, unsigned threads, const Model& model,
                                           Domain domain, const std::string& command);

/// make_scheme() without the scan: checks and resolves the scheme alone (the scan is the caller's).
/// \param choice the scheme as named
/// \param model the model sampled
/// \param domain the domain sampled
/// \param command the use case's name, for messages
/// \return the scheme, its defaults resolved
/// \throws std::invalid_argument as make_scheme().
DUALGIBBS_EXPORT SchemeOptions make_scheme(const SchemeChoice& choice, const Model& model, Domain domain,
                                           const std::string& command);

/// The scan order of a scan name, with "colored" read as the (unused) random scan: the scheme then says how a sweep
/// runs.
/// \param scan the scan's name
/// \return the scan order
/// \throws std::invalid_argument for an unknown name.
DUALGIBBS_EXPORT ScanOrder scan_order(const std::string& scan);

/// Adds the scheme's fields to a record: scheme, omega and (cheby-ssor) lambda_min, lambda_max, rate_cheby_ssor,
/// (ssor with a computed spectrum) rate_ssor; for the colored scan scan and threads_per_chain; nothing for gibbs.
/// \param record the record to extend
/// \param scheme the resolved scheme
DUALGIBBS_EXPORT void add_scheme_record(Record& record, const SchemeOptions& scheme);

}  // namespace dualgibbs::api
