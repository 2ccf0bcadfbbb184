#pragma once
/// \file moments.hpp
/// Sample moments of draws (one column per draw): the kind of second moment kept (full covariance or
/// marginal variances only), the moments themselves, and the sums about a common centre from which groups of
/// draws are joined and deleted. Part of the estimators of the paper's Section VII (estimators.hpp).

#include <dualgibbs/export.hpp>

#include <Eigen/Core>

namespace dualgibbs {

/// How much of the second moment to accumulate: the full covariance (small graphs; O(dim^2) memory and
/// O(dim^2) work per draw) or only its diagonal, the marginal variances (any size; O(dim)).
enum class MomentKind { Full, Diagonal };

/// The name of a moment kind.
/// \param kind the kind
/// \return "full" or "diagonal"
DUALGIBBS_EXPORT const char* to_string(MomentKind kind) noexcept;

/// Sample moments of a set of draws.
struct SampleMoments {
  double count = 0;            ///< number of draws (with bootstrap multiplicities)
  Eigen::VectorXd mean;        ///< length dim
  Eigen::MatrixXd covariance;  ///< dim x dim, divisor count - 1 (unbiased); empty for MomentKind::Diagonal
  Eigen::VectorXd variance;    ///< length dim, divisor count - 1: the diagonal of the covariance
};

/// Sums of draws about a centre c: count n, s = sum (x - c), and the scatter P = sum (x - c)(x - c)^T
/// (stored column-major as a dim*dim vector) or its diagonal (a dim vector). Sums about the same centre
/// add and subtract, which is how groups are combined and deleted.
/// Adding or subtracting sums of different shapes throws std::invalid_argument.
struct DUALGIBBS_EXPORT MomentSums {
  double count = 0;         ///< n, the number of draws summed
  Eigen::VectorXd sum;      ///< s = sum (x - c), length dim
  Eigen::VectorXd scatter;  ///< P = sum (x - c)(x - c)^T column-major (dim*dim), or its diagonal (dim)
  /// Adds the sums of other draws about the same centre (joins two groups).
  /// \param other the sums added
  /// \return these sums
  MomentSums& operator+=(const MomentSums& other);
  /// Subtracts the sums of draws about the same centre (deletes a group, for the jackknife).
  /// \param other the sums subtracted
  /// \return these sums
  MomentSums& operator-=(const MomentSums& other);
};

/// Mean of the columns [first, first + count) of m (count >= 1), accumulated column by column (contiguous
/// memory: much faster than a row-wise reduction of a column-major matrix).
/// \param m the matrix
/// \param first the first column
/// \param count the number of columns
/// \return the mean column, length m.rows()
/// \throws std::invalid_argument if the range is empty or outside m.
DUALGIBBS_EXPORT Eigen::VectorXd column_mean(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index first,
                                             Eigen::Index count);

}  // namespace dualgibbs
