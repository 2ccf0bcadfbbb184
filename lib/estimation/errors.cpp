// The biased and the unbiased split-half errors [eq:unbiased_error]. See errors.hpp.

#include <dualgibbs/estimation/errors.hpp>

#include "estimation/estimator_checks.hpp"

#include <string>

namespace dualgibbs {

using detail::check_finite_matrix;
using detail::fail;

namespace {
void check_same_shape(const char* where, const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    fail(where, "shapes differ: " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " and " +
                    std::to_string(b.rows()) + " x " + std::to_string(b.cols()));
  check_finite_matrix(where, "the first matrix", a);
  check_finite_matrix(where, "the second matrix", b);
}
}  // namespace

double biased_error(const Eigen::MatrixXd& estimate, const Eigen::MatrixXd& target) {
  check_same_shape("biased_error", estimate, target);
  return (estimate - target).squaredNorm();
}

double unbiased_error(const Eigen::MatrixXd& half1, const Eigen::MatrixXd& half2, const Eigen::MatrixXd& target) {
  check_same_shape("unbiased_error", half1, target);
  check_same_shape("unbiased_error", half2, target);
  // [eq:unbiased_error] trace((S1 - S)^T (S2 - S)) = <S1 - S, S2 - S>_F
  return ((half1 - target).array() * (half2 - target).array()).sum();
}

}  // namespace dualgibbs
