#pragma once
/// \file posterior_mean.hpp
/// The posterior mean mu = Q^-1 h of a model with a mean (Model::set_observations: h = D_s^-1 z, so
/// mu = Q^-1 D_s^-1 z, the MAP estimate of the paper's Bayesian image model, Section IX), by a sparse Cholesky
/// solve (CHOLMOD) or, for graphs whose factor does not fit in memory, by Jacobi-preconditioned conjugate
/// gradients (Eigen's ConjugateGradient) to a stated relative residual.
///
/// \code
/// dualgibbs::Model m(dualgibbs::make_grid(512, 512), 0.1, 0.05);
/// m.set_observations(z);                                        // z: the noisy image, one value per pixel
/// dualgibbs::PosteriorMean pm = dualgibbs::posterior_mean(m);  // Cholesky by default
/// // pm.mean is the denoised image; pm.relative_residual = ||h - Q mu|| / ||h||
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace dualgibbs {

/// Thrown when conjugate gradients stop at their iteration limit above the requested tolerance.
class DUALGIBBS_EXPORT SolverNotConverged : public std::runtime_error {
 public:
  /// `iterations` run and the relative residual reached.
  /// \param what the message
  /// \param iterations the iterations run
  /// \param relative_residual the relative residual reached
  SolverNotConverged(const std::string& what, std::size_t iterations, double relative_residual)
      : std::runtime_error(what), m_iterations(iterations), m_residual(relative_residual) {}
  /// Iterations run.
  /// \return the iterations run
  std::size_t iterations() const noexcept { return m_iterations; }
  /// ||h - Q x|| / ||h|| when the solver stopped.
  /// \return the relative residual
  double relative_residual() const noexcept { return m_residual; }

 private:
  std::size_t m_iterations;
  double m_residual;
};

/// How posterior_mean() solves Q mu = h.
enum class MeanSolver {
  Cholesky,          ///< CHOLMOD factorization of Q, one solve (exact to rounding)
  ConjugateGradient  ///< Jacobi-preconditioned conjugate gradients, O(|V| + |E|) memory
};

/// "cholesky" or "cg". \throws std::invalid_argument otherwise.
/// \param name the solver's name
/// \return the solver
DUALGIBBS_EXPORT MeanSolver parse_mean_solver(const std::string& name);
/// The name parse_mean_solver() accepts.
/// \param solver the solver
/// \return its name
DUALGIBBS_EXPORT const char* to_string(MeanSolver solver) noexcept;

/// Options of posterior_mean().
struct PosteriorMeanOptions {
  MeanSolver solver = MeanSolver::Cholesky;  ///< the method
  /// Conjugate gradients stop when ||h - Q mu||_2 <= tolerance ||h||_2. The error then satisfies
  /// ||mu_cg - mu|| / ||mu|| <= cond(Q) tolerance, with cond(Q) <= max_v Q_vv s_max^2 (Gershgorin:
  /// lambda_max(Q) <= 2 max_v Q_vv, lambda_min(Q) >= 1 / s_max^2). In (0, 1).
  double tolerance = 1e-10;
  /// Conjugate-gradient iteration limit; 0 = 10 |V| + 100 (CG converges in at most |V| steps in exact arithmetic).
  std::size_t max_iterations = 0;
  Ordering ordering = Ordering::Amd;  ///< fill-reducing ordering of the Cholesky solver
};

/// What posterior_mean() computed.
struct PosteriorMean {
  Eigen::VectorXd mean;                      ///< mu = Q^-1 h, length |V|
  MeanSolver solver = MeanSolver::Cholesky;  ///< the method used
  std::size_t iterations = 0;                ///< conjugate-gradient iterations (0 for Cholesky)
  double relative_residual = 0;              ///< ||h - Q mu||_2 / ||h||_2 (0 when h = 0), computed afresh
  double seconds = 0;                        ///< wall time of the solve (factorization included)
};

/// mu = Q^-1 h [eqn:QPNH] for a model with a mean; the zero vector for a model without one.
/// \param model the model
/// \param options the solver and its tolerances
/// \return mu and how it was computed
/// \throws std::invalid_argument for a tolerance outside (0, 1); NotPositiveDefinite and FactorizationError from
///         CHOLMOD (Cholesky); SolverNotConverged if conjugate gradients reach max_iterations above the tolerance.
DUALGIBBS_EXPORT PosteriorMean posterior_mean(const Model& model, const PosteriorMeanOptions& options = {});

/// mu = Q^-1 h with a factorization of Q the caller already has (e.g. the one that gave the marginal variances).
/// \param model the model
/// \param factor_of_Q a factorization of the model's Q
/// \return mu
/// \throws std::invalid_argument unless `factor_of_Q` is factorized and of dimension |V|.
DUALGIBBS_EXPORT Eigen::VectorXd posterior_mean(const Model& model, const CholeskyFactor& factor_of_Q);

}  // namespace dualgibbs
