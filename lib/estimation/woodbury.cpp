// The Woodbury reconstruction of Cov(X) from dual samples [eq:cov_woodbury3]. See woodbury.hpp.

#include <dualgibbs/estimation/woodbury.hpp>

#include "estimation/estimator_checks.hpp"

#include <string>

namespace dualgibbs {

using detail::check_finite_matrix;
using detail::check_node_variances;
using detail::fail;

Eigen::MatrixXd woodbury_primal_covariance(const Eigen::VectorXd& node_variances, const Eigen::MatrixXd& cov_x_tilde) {
  check_node_variances("woodbury_primal_covariance", node_variances);
  const Eigen::Index n = node_variances.size();
  if (cov_x_tilde.rows() != n || cov_x_tilde.cols() != n)
    fail("woodbury_primal_covariance", "Cov(x~) is " + std::to_string(cov_x_tilde.rows()) + " x " +
                                           std::to_string(cov_x_tilde.cols()) + ", expected " + std::to_string(n) +
                                           " x " + std::to_string(n));
  check_finite_matrix("woodbury_primal_covariance", "Cov(x~)", cov_x_tilde);
  // [eq:cov_woodbury3] Cov(X) = D_s - D_s Cov(x~) D_s
  Eigen::MatrixXd out = -(node_variances.asDiagonal() * cov_x_tilde * node_variances.asDiagonal());
  out.diagonal() += node_variances;
  return out;
}

Eigen::VectorXd woodbury_primal_variances(const Eigen::VectorXd& node_variances, const Eigen::VectorXd& var_x_tilde) {
  check_node_variances("woodbury_primal_variances", node_variances);
  if (var_x_tilde.size() != node_variances.size())
    fail("woodbury_primal_variances", "Var(x~) has length " + std::to_string(var_x_tilde.size()) + ", expected " +
                                          std::to_string(node_variances.size()));
  check_finite_matrix("woodbury_primal_variances", "Var(x~)", var_x_tilde);
  // [eq:cov_woodbury5] Var(X_v) = s_v^2 - s_v^4 Var(x~_v)
  return node_variances - node_variances.cwiseProduct(node_variances).cwiseProduct(var_x_tilde);
}

Eigen::MatrixXd primal_covariance_estimate(Domain observed, const Eigen::VectorXd& node_variances,
                                           const SampleMoments& moments) {
  const bool full = moments.covariance.size() > 0;
  const Eigen::Index dim = moments.variance.size();
  if (dim == 0) fail("primal_covariance_estimate", "the moments are empty");
  if (node_variances.size() != dim || (full && (moments.covariance.rows() != dim || moments.covariance.cols() != dim)))
    fail("primal_covariance_estimate", "moments of dimension " + std::to_string(dim) + " (covariance " +
                                           std::to_string(moments.covariance.rows()) + " x " +
                                           std::to_string(moments.covariance.cols()) + ") for " +
                                           std::to_string(node_variances.size()) + " node variances");
  if (observed == Domain::Primal) return full ? moments.covariance : Eigen::MatrixXd(moments.variance);
  return full ? woodbury_primal_covariance(node_variances, moments.covariance)
              : Eigen::MatrixXd(woodbury_primal_variances(node_variances, moments.variance));
}

}  // namespace dualgibbs
