#pragma once
/// \file info.hpp
/// The `info` use case: sizes, degrees and components of a model, its spectra and random-sweep convergence rates
/// (computed, spectral.hpp) with the paper's closed forms beside them (Prop. 1, 4, 5, appendix A, Table I), and the
/// SSOR / Chebyshev-SSOR rates of both domains.
///
/// \code
/// dualgibbs::api::ModelSource source;
/// source.graph = "torus:10";
/// const dualgibbs::api::InfoResult r = dualgibbs::api::info(source, {});
/// std::cout << r.record["rate_dual_effective"] << "\n";
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <optional>
#include <string>

namespace dualgibbs::api {

/// The largest dimension per domain for which info computes the SSOR spectrum by default: the smallest eigenvalue
/// of a large lattice needs many Lanczos steps (torus:20 0.4 s, torus:30 0.9 s, torus:100 20 s of CPU).
constexpr Index kInfoAccelDefaultMaxDimension = 1000;
/// The largest dimension per domain with InfoOptions::accel.
constexpr Index kInfoAccelMaxDimension = 50000;

/// What info computes beyond the sizes.
struct InfoOptions {
  bool spectra = true;  ///< spectra, rates, closed forms and SSOR rates (false: sizes only)
  /// SSOR / Chebyshev-SSOR rates up to kInfoAccelMaxDimension coordinates per domain instead of
  /// kInfoAccelDefaultMaxDimension (optimum omega up to kOptimalOmegaMaxDimension, omega = 1 above).
  bool accel = false;
  std::string method = "auto";                     ///< eigensolver: auto, dense, shift-invert or lanczos
  double tolerance = SpectralOptions{}.tolerance;  ///< relative residual tolerance of the iterative eigensolvers
};

/// What info found: the record of `info --json` and the typed values its text report prints.
struct InfoResult {
  /// nodes, edges, min_degree, max_degree, mean_degree, components, isolated_nodes, has_cycles, homogeneous,
  /// s and sigma (homogeneous models), nnz_Q, nnz_R; with spectra also lambda2_L, lambda_max_A_primal,
  /// lambda_max_A_dual, rate_primal, rate_dual, rate_dual_effective and their _asymptotic values,
  /// lambda_min_nonzero_L, lambda2_L_per_component (2 to 1000 components), spectral (methods and seconds),
  /// closed_forms ({name: {value, source}}), and omega_D, lambda_min_ssor_D, lambda_max_ssor_D, rate_ssor_D,
  /// rate_cheby_ssor_D for D = primal, dual (null where not computed or undefined).
  Record record;
  std::string summary;                                        ///< Model::summary(): the model in one line
  std::optional<Rates> rates;                                 ///< the spectra and rates (empty without spectra)
  ClosedForms closed_forms;                                   ///< the closed forms that apply (empty without spectra)
  Index accel_max_dimension = kInfoAccelDefaultMaxDimension;  ///< the SSOR rates' dimension limit that applied
};

/// The info of `model`.
/// \param model the model
/// \param spec its graph spec (the family's closed forms, Table I), or null for a graph of unknown family
/// \param options what to compute
/// \return the record and the typed values
/// \throws std::invalid_argument for an unknown method or a tolerance outside (0, 1) (with spectra);
///         EigensolverError if an eigensolve fails.
DUALGIBBS_EXPORT InfoResult info(const Model& model, const GraphSpec* spec, const InfoOptions& options);

/// The info of the prior model `source` describes.
/// \param source the model's description
/// \param options what to compute
/// \return the record and the typed values
/// \throws std::invalid_argument for an obs_file (sizes, spectra and rates do not depend on the mean), a bad
///         source and as info() above; EigensolverError as info() above.
DUALGIBBS_EXPORT InfoResult info(const ModelSource& source, const InfoOptions& options);

}  // namespace dualgibbs::api
