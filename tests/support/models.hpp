#pragma once
// Model builders shared by the tests and the benchmarks (header-only, public headers only; tests/support/README.md).

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace dualgibbs::testing {

/// The n x n torus with node standard deviations s_v ~ U(0.5, 2) and edge standard deviations sigma_e ~ U(0.1, 1),
/// i.i.d. from std::mt19937_64(seed) (nodes first, then edges): a heterogeneous model with no closed form, for
/// checks against independent solves.
inline Model heterogeneous_torus(Index n, std::uint64_t seed) {
  Graph g = make_torus(n, n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> us(0.5, 2.0), usig(0.1, 1.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = us(rng);
  for (double& x : sigma) x = usig(rng);
  return Model(std::move(g), std::move(s), std::move(sigma));
}

}  // namespace dualgibbs::testing
