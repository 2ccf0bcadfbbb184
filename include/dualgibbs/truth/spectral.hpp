#pragma once
/// \file spectral.hpp
/// Spectra of the graph and of the Gibbs iteration matrices and the random-sweep convergence rates (paper,
/// Sections IV-A and VI); the paper's closed forms for them are in closed_forms.hpp.
///
/// Three eigenvalue problems, each solved by one of three methods (SpectralMethod):
///
///   lambda_2(L)                    algebraic connectivity of a connected graph (per component otherwise)
///   lambda_min(D^-1/2 Q D^-1/2)    primal, lambda_max(A) = 1 - lambda_min   [eqn:AGen]
///   lambda_min(D^-1/2 R D^-1/2)    dual,   lambda_max(A) = 1 - lambda_min   [eqn:AD]
///
/// where D = diag(M) for the precision M in {Q, R}: A = I - D^-1 M is similar to I - D^-1/2 M D^-1/2, so the
/// symmetric form has the same spectrum and symmetric eigensolvers apply.
///
///  - Dense: Eigen's SelfAdjointEigenSolver on the dense matrix (small problems; the reference).
///  - ShiftInvert: Lanczos (Spectra) on the inverse of a shifted matrix, applied with one sparse Cholesky
///    factorization (CHOLMOD, AMD ordering) of a |V| x |V| matrix with the Laplacian's pattern. lambda_2 uses
///    the Laplacian grounded at one node, which applies the pseudo-inverse L^+ exactly on the complement of
///    the constant vector; the primal factors Q - tau D; the dual applies (R - tau D)^-1 through the Woodbury
///    identity with the same |V| x |V| pattern, so R is never formed. tau is a certified lower bound of
///    lambda_min (R >= D_sigma, Q >= D_s^-1), exact for homogeneous graphs with cycles (dual) and regular graphs
///    (primal), which makes the shifted operator converge in a few steps. Best for lattice-like graphs.
///  - Lanczos: Spectra's implicitly restarted Lanczos on the operator itself, matrix-free (the dual uses
///    Model::dual_operator()); lambda_2 on L + c 11^T / n, which moves the constant vector to the top of the
///    spectrum (deflation). Best for expander-like graphs, whose Cholesky factors fill in.
///  - Auto: Dense when the problem has at most dense_max_dimension() coordinates; otherwise ShiftInvert when a
///    symbolic Cholesky analysis (AMD) of the Laplacian pattern predicts a factor of at most
///    shift_invert_max_factor_nonzeros() entries and shift_invert_max_factor_flops() flops, else Lanczos.
///    choose_spectral_method() reports that choice.
///
/// Iterative solves that do not converge throw EigensolverError carrying Spectra's status; they never
/// return an unconverged number. Problems of dimension 1 or 2 are always solved densely.
///
/// \code
/// dualgibbs::Model m(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// double l2 = dualgibbs::algebraic_connectivity(m.graph());   // 4 sin^2(pi/10) (Table I)
/// dualgibbs::Rates r = dualgibbs::convergence_rates(m);       // r.rate_dual == prop4_dual_rate(1, 0.1, 200)
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/model.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

/// How an eigenvalue is computed; see the file documentation.
enum class SpectralMethod { Auto, Dense, ShiftInvert, Lanczos };

/// "auto", "dense", "shift-invert" or "lanczos".
/// \param m the method
/// \return its name
DUALGIBBS_EXPORT const char* to_string(SpectralMethod m) noexcept;
/// Parses the names of to_string(SpectralMethod). \throws std::invalid_argument otherwise.
/// \param name the method's name
/// \return the method
DUALGIBBS_EXPORT SpectralMethod parse_spectral_method(const std::string& name);

/// Solver settings. The defaults give about 1e-10 relative accuracy or better.
struct SpectralOptions {
  /// The solver; Auto chooses by size and predicted Cholesky fill (choose_spectral_method()).
  SpectralMethod method = SpectralMethod::Auto;
  /// Spectra's convergence test: residual norm <= tolerance * |Ritz value| (a relative bound on the error).
  double tolerance = 1e-10;
  /// Spectra's restart limit (its `maxit`); reaching it throws EigensolverError.
  int max_restarts = 1000;
  /// Krylov subspace dimension (Spectra's `ncv`); 0 lets the method choose (10 shift-invert, 32 Lanczos).
  int krylov_dimension = 0;
};

/// An iterative eigensolver failed: Spectra did not converge, or a factorization hit a numerical problem.
/// Carries Spectra's status, the method and the work done.
class DUALGIBBS_EXPORT EigensolverError : public std::runtime_error {
 public:
  /// Spectra's CompInfo values that mean failure.
  enum class Status { NotComputed, NotConverging, NumericalIssue };
  /// The message `what`, the failure's status, the method that failed and the work it did.
  /// \param what the message
  /// \param status why Spectra stopped
  /// \param method the method that failed
  /// \param restarts the restarts done
  /// \param operations the operator applications done
  EigensolverError(const std::string& what, Status status, SpectralMethod method, long restarts, long operations);
  /// Why Spectra stopped.
  /// \return the status
  Status status() const noexcept { return m_status; }
  /// The method that failed (never Auto).
  /// \return the method
  SpectralMethod method() const noexcept { return m_method; }
  /// Restarts (Spectra's num_iterations()) done before giving up.
  /// \return the restarts
  long restarts() const noexcept { return m_restarts; }
  /// Operator applications (matrix-vector products or solves) done before giving up.
  /// \return the operator applications
  long operations() const noexcept { return m_operations; }

 private:
  Status m_status;
  SpectralMethod m_method;
  long m_restarts;
  long m_operations;
};

/// "NotComputed", "NotConverging" or "NumericalIssue".
/// \param s the status
/// \return its name
DUALGIBBS_EXPORT const char* to_string(EigensolverError::Status s) noexcept;

/// Auto uses the dense solver for problems of at most this many coordinates (600).
/// \return 600
DUALGIBBS_EXPORT Index dense_max_dimension() noexcept;
/// Auto's cap on the predicted Cholesky factor size for ShiftInvert (2.5e8 entries, about 2 GB).
/// \return 2.5e8
DUALGIBBS_EXPORT double shift_invert_max_factor_nonzeros() noexcept;
/// Auto's cap on the predicted factorization work for ShiftInvert (2e11 flops, under a minute here).
/// \return 2e11
DUALGIBBS_EXPORT double shift_invert_max_factor_flops() noexcept;

/// What Auto chooses for a problem of `dimension` coordinates on graph g: Dense if dimension <=
/// dense_max_dimension() (or <= 2), else ShiftInvert or Lanczos after a symbolic Cholesky analysis of g's
/// Laplacian pattern (O(|V| + |E|) memory; a second or so on 10^6 nodes).
/// \param g the graph
/// \param dimension the problem's number of coordinates
/// \return Dense, ShiftInvert or Lanczos
DUALGIBBS_EXPORT SpectralMethod choose_spectral_method(const Graph& g, Index dimension);

/// lambda_2(L), the algebraic connectivity: the smallest non-zero eigenvalue of the Laplacian of a connected
/// graph (paper, Section VI, Table I).
/// \param g the connected graph
/// \param method the solver
/// \return lambda_2(L)
/// \throws std::invalid_argument if the graph is disconnected (lambda_2 = 0 there; use
///         algebraic_connectivity_per_component) or has a single node (no second eigenvalue).
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT double algebraic_connectivity(const Graph& g, SpectralMethod method = SpectralMethod::Auto);
/// As above with full solver settings.
/// \param g the connected graph
/// \param options the solver settings
/// \return lambda_2(L)
DUALGIBBS_EXPORT double algebraic_connectivity(const Graph& g, const SpectralOptions& options);

/// lambda_2 of the Laplacian of each connected component, in the order of Graph::component_labels()
/// (component c holds the nodes labelled c). A single-node component has no second eigenvalue: NaN.
/// Auto chooses the method per component by its size. \throws EigensolverError as above.
/// \param g the graph
/// \param method the solver
/// \return lambda_2 per component
DUALGIBBS_EXPORT std::vector<double> algebraic_connectivity_per_component(const Graph& g,
                                                                          SpectralMethod method = SpectralMethod::Auto);
/// As above with full solver settings.
/// \param g the graph
/// \param options the solver settings
/// \return lambda_2 per component
DUALGIBBS_EXPORT std::vector<double> algebraic_connectivity_per_component(const Graph& g,
                                                                          const SpectralOptions& options);

/// Both ends of a connected graph's Laplacian spectrum (laplacian_spectrum_ends()).
struct LaplacianEnds {
  double lambda2 = 0;     ///< lambda_2(L), the algebraic connectivity
  double lambda_max = 0;  ///< lambda_max(L)
  /// ||L x - lambda_max x|| / (lambda_max ||x||) of the computed pair (0 when dense): Spectra stops when the slower
  /// end meets the tolerance, so the top is often far more accurate than asked, and a caller can check it here.
  double lambda_max_residual = 0;
  SpectralMethod method = SpectralMethod::Auto;  ///< the method that computed lambda_2 (Auto resolved)
};

/// lambda_2(L) and lambda_max(L) of a connected graph of at least 2 nodes, the method chosen as
/// algebraic_connectivity() does. Lanczos finds both in one run (Spectra's BothEnds on L + (c/n) 11^T with c = n
/// delta_min / (n - 1), which lies in [lambda_2, lambda_max]; Krylov dimension 16 unless options say); Dense from
/// one eigen-decomposition; ShiftInvert computes lambda_2 as algebraic_connectivity() and lambda_max by Lanczos on
/// the same shifted operator. Both values meet options.tolerance as Spectra tests it (residual <= tolerance x |Ritz
/// value|), and neither lies outside the spectrum (interlacing): lambda2 >= lambda_2(L) and lambda_max <= lambda_max(L)
/// up to rounding. \throws std::invalid_argument for a disconnected graph or one of fewer than 2 nodes. \throws
/// EigensolverError if an iterative solve does not converge.
/// \param g the connected graph
/// \param options the solver settings
/// \return both ends and how they were computed
DUALGIBBS_EXPORT LaplacianEnds laplacian_spectrum_ends(const Graph& g, const SpectralOptions& options = {});

/// lambda_max(A) of the Gibbs iteration matrix A = I - diag(M)^-1 M of a domain (M = Q primal, M = R dual),
/// computed as 1 - lambda_min(D^-1/2 M D^-1/2) [eqn:AGen, eqn:AD]. In [0, 1): a computed value outside [0, 1]
/// is rounding (e.g. lambda_min(S) ~ 1e-601 at s / sigma = 1e150) and is clamped to it.
/// \param model the model
/// \param domain the domain
/// \return lambda_max(A)
/// \throws std::invalid_argument for the dual of a graph without edges (no coordinates).
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT double lambda_max_A(const Model& model, Domain domain);
/// As above with full solver settings.
/// \param model the model
/// \param domain the domain
/// \param options the solver settings
/// \return lambda_max(A)
DUALGIBBS_EXPORT double lambda_max_A(const Model& model, Domain domain, const SpectralOptions& options);

/// Spectra and rates of a model, as printed by `dualgibbs info`.
struct Rates {
  /// The value of a quantity that was not computed (or does not exist for this model): NaN.
  static constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();
  /// lambda_2(L); 0 for a disconnected graph, NaN for a single node. See lambda2_L_per_component.
  double lambda2_L = kNotComputed;
  double lambda_max_A_primal = kNotComputed;  ///< lambda_max(A) of the primal (M = Q)
  double lambda_max_A_dual = kNotComputed;    ///< lambda_max(A) of the dual (M = R); NaN without edges
  /// Finite-size rates [eqn:primalrate, eqn:dualrate]. Everything about the dual is NaN for a graph without
  /// edges.
  double rate_primal = kNotComputed;
  double rate_dual = kNotComputed;  ///< the dual's finite-size rate [eqn:dualrate]
  /// [eqn:effectiverate1]: NaN unless the model is homogeneous and the graph has cycles; it uses
  /// lambda_min_nonzero_L, which is lambda_2(L) for a connected graph.
  double rate_dual_effective = kNotComputed;
  /// Limits as the number of coordinates grows: exp(-(1 - lambda_max_A)) [eqn:primalrate3, eqn:dualrate3]
  /// and exp(-(sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2)) [eq:r_eff_final].
  double rate_primal_asymptotic = kNotComputed;
  double rate_dual_asymptotic = kNotComputed;            ///< exp(-(1 - lambda_max_A_dual)) [eqn:dualrate3]
  double rate_dual_effective_asymptotic = kNotComputed;  ///< [eq:r_eff_final]; NaN as rate_dual_effective

  /// Number of connected components and lambda_2 of each (NaN for single nodes).
  Index components = 1;
  /// lambda_2 of each component, in the order of Graph::component_labels() (NaN for single nodes).
  std::vector<double> lambda2_L_per_component;
  /// The smallest non-zero eigenvalue of L: the minimum over components of their lambda_2 (NaN if no edges).
  double lambda_min_nonzero_L = 0.0;
  /// The method that actually ran for each problem (Auto resolved).
  SpectralMethod method_lambda2 = SpectralMethod::Auto;
  SpectralMethod method_primal = SpectralMethod::Auto;  ///< the method of lambda_max_A_primal
  SpectralMethod method_dual = SpectralMethod::Auto;    ///< the method of lambda_max_A_dual
  /// Wall-clock time of each problem, seconds.
  double seconds_lambda2 = 0.0;
  double seconds_primal = 0.0;  ///< seconds for lambda_max_A_primal
  double seconds_dual = 0.0;    ///< seconds for lambda_max_A_dual
};

/// All of Rates for a model. The three problems share one symbolic analysis.
/// \param model the model
/// \return the spectra and rates
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT Rates convergence_rates(const Model& model);
/// As above with full solver settings.
/// \param model the model
/// \param options the solver settings
/// \return the spectra and rates
DUALGIBBS_EXPORT Rates convergence_rates(const Model& model, const SpectralOptions& options);

}  // namespace dualgibbs
