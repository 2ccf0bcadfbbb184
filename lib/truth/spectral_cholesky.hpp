#pragma once
// Private to lib/: the one sparse factorization the spectral module needs. Not installed.

#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <memory>

namespace dualgibbs::detail {

/// Sparse Cholesky factorization of |V| x |V| matrices with a graph's Laplacian pattern,
///
///   K = diag(d) + B diag(w) B^T:   K_vv = d_v + sum_{e at v} w_e,   K_uv = -w_e for every edge e = (u, v).
///
/// Every matrix the shift-invert methods factor has this form (the grounded Laplacian, Q - tau D, and the
/// Woodbury core D_s^-1 + B W^-1 B^T of R - tau D), so one symbolic analysis serves them all and each
/// factorize() only redoes the numeric part (a refactorization). CHOLMOD supernodal LL^T, AMD ordering, through
/// the library's one CHOLMOD wrapper (truth/cholmod_factor.hpp). A matrix equal to the factorized one up to a
/// positive factor is not factorized again: for a homogeneous model on a regular graph the primal Q - tau D and
/// the dual's Woodbury core are the same matrix up to a factor (docs/spectral.md).
class NodePatternCholesky {
 public:
  /// Symbolic analysis of g's pattern. Never throws for a large graph: analyzed() says whether it worked.
  explicit NodePatternCholesky(const Graph& g);
  ~NodePatternCholesky();
  NodePatternCholesky(const NodePatternCholesky&) = delete;
  NodePatternCholesky& operator=(const NodePatternCholesky&) = delete;

  /// False if CHOLMOD could not analyze the pattern (factor too large for its indices or for memory).
  bool analyzed() const noexcept;
  /// Predicted non-zeros and flops of the factor (infinite if not analyzed).
  double factor_nonzeros() const noexcept;
  double factor_flops() const noexcept;
  Index size() const noexcept;

  /// Numeric factorization of diag(d) + B diag(w) B^T (d: |V|, w: |E|); none if (d, w) is a positive multiple
  /// of the factorized values (to 1e-11 relative): then solve() scales. Returns whether it factorized.
  /// \throws EigensolverError (NumericalIssue) if the matrix is not positive definite or not analyzed.
  /// With `weights` (a model with a weighted incidence), B is that model's incidence: K_uv = b_u b_v w_e and
  /// K_uu = d_u + sum b_u^2 w_e; without, the unit incidence (K_uv = -w_e).
  bool factorize(const Eigen::VectorXd& d, const Eigen::VectorXd& w, const Model* weights = nullptr);
  /// x = K^-1 b. Requires a successful factorize().
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const;

  /// alpha > 0 with (d, w) = alpha x (the values last factorized) to 1e-11 relative, else 0 (also before any
  /// factorization). K(d, w)^-1 is then (the factor's K)^-1 / alpha.
  double proportion(const Eigen::VectorXd& d, const Eigen::VectorXd& w, const Model* weights = nullptr) const;
  /// X = K0^-1 B for the factorized K0 itself (not scaled by a later proportional factorize()), every column in
  /// one pass over the factor. Requires a successful factorize().
  void solve_factorized(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dualgibbs::detail
