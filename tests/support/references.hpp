#pragma once
// Independent references shared by the tests and the benchmarks (header-only, public headers only;
// tests/support/README.md).

#include <dualgibbs/truth/exact.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace dualgibbs::testing {

/// The largest relative difference between var and e_i^T M^-1 e_i computed by solves with `factor`, a factor of M
/// (an independent path: triangular solves, not the selected inversion), at `count` coordinates i drawn by
/// std::mt19937_64(seed). Pass a factor of another ordering than the one under test for another factor still.
inline double worst_against_solves(const CholeskyFactor& factor, const Eigen::VectorXd& var, int count,
                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  double worst = 0;
  for (int k = 0; k < count; ++k) {
    const Eigen::Index i = static_cast<Eigen::Index>(rng() % static_cast<std::uint64_t>(var.size()));
    Eigen::VectorXd e = Eigen::VectorXd::Zero(var.size());
    e[i] = 1;
    worst = std::max(worst, std::abs(factor.solve(e)[i] - var[i]) / var[i]);
  }
  return worst;
}

}  // namespace dualgibbs::testing
