#pragma once
/// \file spectral.hpp
/// Spectra of the graph and of the Gibbs iteration matrices, the random-sweep convergence rates, and the
/// paper's closed forms next to them (paper, Sections IV-A and VI, Table I, Appendix A).
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
DUALGIBBS_EXPORT const char* to_string(SpectralMethod m) noexcept;
/// Parses the names of to_string(SpectralMethod). \throws std::invalid_argument otherwise.
DUALGIBBS_EXPORT SpectralMethod parse_spectral_method(const std::string& name);

/// Solver settings. The defaults give about 1e-10 relative accuracy or better.
struct SpectralOptions {
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
  EigensolverError(const std::string& what, Status status, SpectralMethod method, long restarts, long operations);
  Status status() const noexcept { return m_status; }
  SpectralMethod method() const noexcept { return m_method; }
  /// Restarts (Spectra's num_iterations()) done before giving up.
  long restarts() const noexcept { return m_restarts; }
  /// Operator applications (matrix-vector products or solves) done before giving up.
  long operations() const noexcept { return m_operations; }

 private:
  Status m_status;
  SpectralMethod m_method;
  long m_restarts;
  long m_operations;
};

/// "NotComputed", "NotConverging" or "NumericalIssue".
DUALGIBBS_EXPORT const char* to_string(EigensolverError::Status s) noexcept;

/// Auto uses the dense solver for problems of at most this many coordinates (600).
DUALGIBBS_EXPORT Index dense_max_dimension() noexcept;
/// Auto's cap on the predicted Cholesky factor size for ShiftInvert (2.5e8 entries, about 2 GB).
DUALGIBBS_EXPORT double shift_invert_max_factor_nonzeros() noexcept;
/// Auto's cap on the predicted factorization work for ShiftInvert (2e11 flops, under a minute here).
DUALGIBBS_EXPORT double shift_invert_max_factor_flops() noexcept;

/// What Auto chooses for a problem of `dimension` coordinates on graph g: Dense if dimension <=
/// dense_max_dimension() (or <= 2), else ShiftInvert or Lanczos after a symbolic Cholesky analysis of g's
/// Laplacian pattern (O(|V| + |E|) memory; a second or so on 10^6 nodes).
DUALGIBBS_EXPORT SpectralMethod choose_spectral_method(const Graph& g, Index dimension);

/// lambda_2(L), the algebraic connectivity: the smallest non-zero eigenvalue of the Laplacian of a connected
/// graph (paper, Section VI, Table I).
/// \throws std::invalid_argument if the graph is disconnected (lambda_2 = 0 there; use
///         algebraic_connectivity_per_component) or has a single node (no second eigenvalue).
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT double algebraic_connectivity(const Graph& g, SpectralMethod method = SpectralMethod::Auto);
/// As above with full solver settings.
DUALGIBBS_EXPORT double algebraic_connectivity(const Graph& g, const SpectralOptions& options);

/// lambda_2 of the Laplacian of each connected component, in the order of Graph::component_labels()
/// (component c holds the nodes labelled c). A single-node component has no second eigenvalue: NaN.
/// Auto chooses the method per component by its size. \throws EigensolverError as above.
DUALGIBBS_EXPORT std::vector<double> algebraic_connectivity_per_component(const Graph& g,
                                                                          SpectralMethod method = SpectralMethod::Auto);
DUALGIBBS_EXPORT std::vector<double> algebraic_connectivity_per_component(const Graph& g,
                                                                          const SpectralOptions& options);

/// lambda_max(A) of the Gibbs iteration matrix A = I - diag(M)^-1 M of a domain (M = Q primal, M = R dual),
/// computed as 1 - lambda_min(D^-1/2 M D^-1/2) [eqn:AGen, eqn:AD]. In [0, 1): a computed value outside [0, 1]
/// is rounding (e.g. lambda_min(S) ~ 1e-601 at s / sigma = 1e150) and is clamped to it.
/// \throws std::invalid_argument for the dual of a graph without edges (no coordinates).
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT double lambda_max_A(const Model& model, Domain domain);
DUALGIBBS_EXPORT double lambda_max_A(const Model& model, Domain domain, const SpectralOptions& options);

/// Rate of the random-sweep Gibbs sampler with n coordinates: ((n - 1 + lambda) / n)^n
/// [eqn:primalrate, eqn:dualrate], computed as exp(n log1p((lambda - 1) / n)) so that it stays accurate when
/// n is large and lambda close to 1.
/// \throws std::invalid_argument unless n >= 1 is finite and 1 - n <= lambda <= 1.
DUALGIBBS_EXPORT double random_sweep_rate(double lambda_max_A, double n);
/// The limit of random_sweep_rate as n -> infinity: exp(lambda - 1).
/// \throws std::invalid_argument unless lambda is finite and <= 1.
DUALGIBBS_EXPORT double random_sweep_rate_asymptotic(double lambda_max_A);

/// Spectra and rates of a model, as printed by `dualgibbs info`.
struct Rates {
  static constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();
  /// lambda_2(L); 0 for a disconnected graph, NaN for a single node. See lambda2_L_per_component.
  double lambda2_L = kNotComputed, lambda_max_A_primal = kNotComputed, lambda_max_A_dual = kNotComputed;
  /// Finite-size rates [eqn:primalrate, eqn:dualrate]. rate_dual_effective [eqn:effectiverate1] is NaN
  /// unless the model is homogeneous and the graph has cycles; it uses lambda_min_nonzero_L, which is
  /// lambda_2(L) for a connected graph. Everything about the dual is NaN for a graph without edges.
  double rate_primal = kNotComputed, rate_dual = kNotComputed, rate_dual_effective = kNotComputed;
  /// Limits as the number of coordinates grows: exp(-(1 - lambda_max_A)) [eqn:primalrate3, eqn:dualrate3]
  /// and exp(-(sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2)) [eq:r_eff_final].
  double rate_primal_asymptotic = kNotComputed, rate_dual_asymptotic = kNotComputed,
         rate_dual_effective_asymptotic = kNotComputed;

  /// Number of connected components and lambda_2 of each (NaN for single nodes).
  Index components = 1;
  std::vector<double> lambda2_L_per_component;
  /// The smallest non-zero eigenvalue of L: the minimum over components of their lambda_2 (NaN if no edges).
  double lambda_min_nonzero_L = 0.0;
  /// The method that actually ran for each problem (Auto resolved).
  SpectralMethod method_lambda2 = SpectralMethod::Auto, method_primal = SpectralMethod::Auto,
                 method_dual = SpectralMethod::Auto;
  /// Wall-clock time of each problem, seconds.
  double seconds_lambda2 = 0.0, seconds_primal = 0.0, seconds_dual = 0.0;
};

/// All of Rates for a model. The three problems share one symbolic analysis.
/// \throws EigensolverError if an iterative solve does not converge.
DUALGIBBS_EXPORT Rates convergence_rates(const Model& model);
DUALGIBBS_EXPORT Rates convergence_rates(const Model& model, const SpectralOptions& options);

/// \name Closed forms of the paper for homogeneous models (s, sigma: standard deviations)
/// Each throws std::invalid_argument for a non-finite or non-positive s or sigma, a count below 1, a degree
/// below 0, or a negative lambda_2 (lambda_2 = 0, a disconnected graph, reduces Prop. 5 to Prop. 4).
/// @{

/// Prop. 1: lambda_max(A) of the primal of a k-regular model, k s^2 / (sigma^2 + k s^2) [eqn:primalrateHomogen].
DUALGIBBS_EXPORT double prop1_primal_lambda_max_A(Index k, double s, double sigma);
/// Prop. 1: r_p = (1 - sigma^2 / (sigma^2 + k s^2) / |V|)^|V|.
DUALGIBBS_EXPORT double prop1_primal_rate(Index k, double s, double sigma, double num_nodes);
/// Prop. 1: exp(-sigma^2 / (sigma^2 + k s^2)) [eqn:primalrate3].
DUALGIBBS_EXPORT double prop1_primal_rate_asymptotic(Index k, double s, double sigma);
/// Prop. 4: lambda_max(A) of the dual of a model with cycles, 2 s^2 / (sigma^2 + 2 s^2) [eqn:primalrateHomogenD].
DUALGIBBS_EXPORT double prop4_dual_lambda_max_A(double s, double sigma);
/// Prop. 4: r_d = (1 - sigma^2 / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:dualrate2].
DUALGIBBS_EXPORT double prop4_dual_rate(double s, double sigma, double num_edges);
/// Prop. 4: exp(-sigma^2 / (sigma^2 + 2 s^2)) [eqn:dualrate3].
DUALGIBBS_EXPORT double prop4_dual_rate_asymptotic(double s, double sigma);
/// Prop. 5: mu_2 = s^2 (2 - lambda_2) / (sigma^2 + 2 s^2), the largest eigenvalue of the dual A on the cut space.
DUALGIBBS_EXPORT double prop5_cut_space_lambda_max_A(double lambda2, double s, double sigma);
/// Prop. 5: r_d^eff = (1 - (sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:effectiverate1].
DUALGIBBS_EXPORT double prop5_effective_dual_rate(double lambda2, double s, double sigma, double num_edges);
/// Prop. 5: exp(-(sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2)) [eq:r_eff_final].
DUALGIBBS_EXPORT double prop5_effective_dual_rate_asymptotic(double lambda2, double s, double sigma);
/// Appendix A, star with |E| leaves: primal lambda_max(A) = s^2 sqrt(|E| / ((sigma^2 + s^2)(sigma^2 + |E| s^2))).
DUALGIBBS_EXPORT double star_primal_lambda_max_A(Index num_edges, double s, double sigma);
/// Appendix A: the primal rate of the star, random_sweep_rate(star_primal_lambda_max_A, |E| + 1).
DUALGIBBS_EXPORT double star_primal_rate(Index num_edges, double s, double sigma);
/// Appendix A: exp(s / sqrt(sigma^2 + s^2) - 1) [eqn:starrateAsy].
DUALGIBBS_EXPORT double star_primal_rate_asymptotic(double s, double sigma);
/// Appendix A: dual lambda_max(A) of the star with |E| >= 2 leaves, s^2 / (sigma^2 + 2 s^2). (For |E| = 1 the
/// dual has one coordinate and A = 0, which the appendix's eigenvalue count excludes: this throws.)
DUALGIBBS_EXPORT double star_dual_lambda_max_A(Index num_edges, double s, double sigma);
/// Appendix A: r_d = (1 - (sigma^2 + s^2) / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:dualrate5], |E| >= 2.
DUALGIBBS_EXPORT double star_dual_rate(double s, double sigma, double num_edges);
/// Appendix A: exp(-(sigma^2 + s^2) / (sigma^2 + 2 s^2)) [eqn:dualrate6].
DUALGIBBS_EXPORT double star_dual_rate_asymptotic(double s, double sigma);
/// @}

/// \name lambda_2(L) of graph families (Table I and the standard spectra of the other generators)
/// Each throws std::invalid_argument for sizes outside the family (as the generators do).
/// @{
/// Complete graph K_n (n >= 2): n.
DUALGIBBS_EXPORT double lambda2_complete(Index n);
/// Complete bipartite K_{n1,n2} (n1, n2 >= 1): min(n1, n2), or 2 for K_{1,1}; Table I: K_{n,n} gives n.
DUALGIBBS_EXPORT double lambda2_complete_bipartite(Index n1, Index n2);
/// rows x cols torus (sides >= 3): 4 sin^2(pi / max(rows, cols)); Table I: 4 sin^2(pi / n) for n x n.
DUALGIBBS_EXPORT double lambda2_torus(Index rows, Index cols);
/// Random k-regular graph, |V| -> infinity (Friedman): k - 2 sqrt(k - 1), k >= 3. Asymptotic only.
DUALGIBBS_EXPORT double lambda2_random_regular_asymptotic(Index k);
/// Star S_n with n nodes in all (n >= 2): 1, or 2 for the single edge S_2.
DUALGIBBS_EXPORT double lambda2_star(Index n);
/// Path of n >= 2 nodes: 4 sin^2(pi / (2 n)).
DUALGIBBS_EXPORT double lambda2_path(Index n);
/// Cycle of n >= 3 nodes: 4 sin^2(pi / n).
DUALGIBBS_EXPORT double lambda2_cycle(Index n);
/// rows x cols open grid with at least 2 nodes: 4 sin^2(pi / (2 max(rows, cols))).
DUALGIBBS_EXPORT double lambda2_grid(Index rows, Index cols);
/// d-dimensional hypercube, d >= 1: 2.
DUALGIBBS_EXPORT double lambda2_hypercube(int d);
/// @}

}  // namespace dualgibbs
