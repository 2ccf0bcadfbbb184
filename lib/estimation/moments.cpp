// Sample moments and the sums they come from. See moments.hpp.

#include <dualgibbs/estimation/moments.hpp>

#include "estimation/estimator_checks.hpp"

#include <string>

namespace dualgibbs {

using detail::check_same_sizes;
using detail::fail;

Eigen::VectorXd column_mean(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index first, Eigen::Index count) {
  if (count < 1 || first < 0 || first > m.cols() - count)
    fail("column_mean", "columns [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                            std::to_string(count) + ") are empty or outside the " + std::to_string(m.cols()) +
                            " columns");
  Eigen::VectorXd acc = Eigen::VectorXd::Zero(m.rows());
  for (Eigen::Index k = first; k < first + count; ++k) acc += m.col(k);
  return acc / static_cast<double>(count);
}

const char* to_string(MomentKind kind) noexcept { return kind == MomentKind::Full ? "full" : "diagonal"; }

// ---- MomentSums ---------------------------------------------------------------------------------

MomentSums& MomentSums::operator+=(const MomentSums& other) {
  check_same_sizes("MomentSums::operator+=", *this, other);
  count += other.count;
  sum += other.sum;
  scatter += other.scatter;
  return *this;
}

MomentSums& MomentSums::operator-=(const MomentSums& other) {
  check_same_sizes("MomentSums::operator-=", *this, other);
  count -= other.count;
  sum -= other.sum;
  scatter -= other.scatter;
  return *this;
}

}  // namespace dualgibbs
