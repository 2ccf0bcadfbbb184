#pragma once
// Private: the validity test for a standard deviation, shared by the Model and the readers so that a file
// value is rejected with its line number for exactly the reasons the Model would reject it.
#include <cmath>

namespace dualgibbs::detail {

/// True if sd is finite and positive and so are sd^2 and 1/sd^2 (D_s, D_sigma and their inverses must be
/// representable: sd = 1e-200 squares to 0, sd = 1e200 to infinity).
inline bool is_valid_standard_deviation(double sd) noexcept {
  if (!std::isfinite(sd) || !(sd > 0.0)) return false;
  const double var = sd * sd;
  return std::isfinite(var) && var > 0.0 && std::isfinite(1.0 / var);
}

}  // namespace dualgibbs::detail
