#pragma once
/// \file woodbury.hpp
/// The Woodbury reconstruction of the primal covariance from the dual's auxiliary variables x~ = B y~
/// [eq:cov_woodbury3], and the estimate of Cov(X) that either domain's sample moments give.

#include <dualgibbs/estimation/moments.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

namespace dualgibbs {

/// Woodbury reconstruction of the primal covariance from the dual auxiliary variables x~ = B y~
/// [eq:cov_woodbury3]: Cov(X) = D_s - D_s Cov(x~) D_s, with D_s = diag(node_variances) (s_v^2).
/// \param node_variances s_v^2 per node
/// \param cov_x_tilde Cov(x~), |V| x |V|
/// \return Cov(X), |V| x |V|
/// \throws std::invalid_argument if the sizes do not match, the input is empty, a node variance is not
/// finite and positive, or Cov(x~) has a NaN or infinite entry.
DUALGIBBS_EXPORT Eigen::MatrixXd woodbury_primal_covariance(const Eigen::VectorXd& node_variances,
                                                            const Eigen::MatrixXd& cov_x_tilde);
/// Diagonal of [eq:cov_woodbury3] ([eq:cov_woodbury5]): Var(X_v) = s_v^2 - s_v^4 Var(x~_v).
/// \param node_variances s_v^2 per node
/// \param var_x_tilde Var(x~_v) per node
/// \return Var(X_v) per node
/// \throws std::invalid_argument as woodbury_primal_covariance().
DUALGIBBS_EXPORT Eigen::VectorXd woodbury_primal_variances(const Eigen::VectorXd& node_variances,
                                                           const Eigen::VectorXd& var_x_tilde);

/// The estimate of Cov(X) (Full) or of the marginal variances (Diagonal) that a domain's samples give:
/// primal draws x give their sample covariance; dual draws x~ give the Woodbury reconstruction.
/// \param observed the domain of the draws: primal x or dual x~
/// \param node_variances s_v^2 per node
/// \param moments the draws' sample moments
/// \return a dim x dim matrix (Full) or a dim x 1 matrix (Diagonal)
/// \throws std::invalid_argument for empty moments or node_variances of another dimension.
DUALGIBBS_EXPORT Eigen::MatrixXd primal_covariance_estimate(Domain observed, const Eigen::VectorXd& node_variances,
                                                            const SampleMoments& moments);

}  // namespace dualgibbs
