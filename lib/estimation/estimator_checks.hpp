#pragma once
// The input checks shared by the estimators' files (private header): every one throws std::invalid_argument
// naming the function and the item.

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/estimation/moments.hpp>

#include <Eigen/Core>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dualgibbs::detail {

[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

inline bool all_finite(const Eigen::Ref<const Eigen::MatrixXd>& m) { return m.allFinite(); }

/// Inputs of the error and reconstruction functions: non-empty and finite (a NaN in would be a NaN out).
inline void check_finite_matrix(const char* where, const char* what, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  if (m.size() == 0) fail(where, std::string(what) + " is empty");
  if (!m.allFinite()) fail(where, std::string(what) + " contains NaN or infinite values");
}

inline void check_node_variances(const char* where, const Eigen::VectorXd& v) {
  if (v.size() == 0) fail(where, "no node variances given");
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!(v(i) > 0) || !std::isfinite(v(i)))
      fail(where, "node variance s_v^2 of node " + std::to_string(i) + " = " + number_text(v(i)) +
                      " must be finite and positive");
}

inline void check_same_sizes(const char* where, const MomentSums& a, const MomentSums& b) {
  if (a.sum.size() != b.sum.size() || a.scatter.size() != b.scatter.size())
    fail(where, "sums of different shapes (dimension " + std::to_string(a.sum.size()) + ", scatter " +
                    std::to_string(a.scatter.size()) + " against dimension " + std::to_string(b.sum.size()) +
                    ", scatter " + std::to_string(b.scatter.size()) + ")");
}

}  // namespace dualgibbs::detail
