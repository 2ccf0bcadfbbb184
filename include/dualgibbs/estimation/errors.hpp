#pragma once
/// \file errors.hpp
/// The paper's two errors of a covariance estimate against the exact one: the biased ||S^ - S||_F^2 and the
/// unbiased split-half error [eq:unbiased_error].

#include <dualgibbs/export.hpp>

#include <Eigen/Core>

namespace dualgibbs {

/// Biased squared error ||S^ - S||_F^2.
/// \param estimate the estimate S^
/// \param target the exact covariance S
/// \return ||S^ - S||_F^2
/// \throws std::invalid_argument if the shapes differ, a matrix is empty or has a NaN or infinite entry
/// (the same for unbiased_error()).
DUALGIBBS_EXPORT double biased_error(const Eigen::MatrixXd& estimate, const Eigen::MatrixXd& target);
/// Unbiased split-half error [eq:unbiased_error]: trace((S1 - S)^T (S2 - S)) = sum_ij (S1-S)_ij (S2-S)_ij,
/// for estimates S1, S2 from two independent halves. Its expectation is ||Sigma_t - S||_F^2; it can be
/// negative. Works on full matrices and on diagonals (dim x 1).
/// \param half1 the estimate S1 from the first half
/// \param half2 the estimate S2 from the second half
/// \param target the exact covariance S
/// \return trace((S1 - S)^T (S2 - S))
DUALGIBBS_EXPORT double unbiased_error(const Eigen::MatrixXd& half1, const Eigen::MatrixXd& half2,
                                       const Eigen::MatrixXd& target);

}  // namespace dualgibbs
