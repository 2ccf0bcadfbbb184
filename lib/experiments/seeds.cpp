// Seeds derived from an experiment's master seed, and the random inputs drawn from them (seeds.hpp).
#include "experiments/seeds.hpp"

#include <dualgibbs/core/random.hpp>

#include <cmath>
#include <stdexcept>

namespace dualgibbs::detail {

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  auto mix = [](std::uint64_t z) { return mix64(z + 0x9e3779b97f4a7c15ULL); };  // a SplitMix64 step
  return mix(mix(mix(seed) ^ (a * 0x632be59bd9b4e019ULL)) ^ (b + 0x8cb92ba72f3d8dd7ULL));
}

Graph connected_graph(const std::function<Graph(std::uint64_t)>& make, std::uint64_t seed, std::uint64_t salt,
                      int* attempts) {
  for (int k = 0; k < 100; ++k) {
    Graph g = make(derive_seed(seed, salt, static_cast<std::uint64_t>(k)));
    if (g.num_components() == 1) {
      if (attempts) *attempts = k + 1;
      return g;
    }
  }
  throw std::runtime_error("experiments: no connected graph in 100 draws");
}

std::vector<double> uniform_vector(std::size_t n, double lo, double hi, std::uint64_t seed) {
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Parameters);
  std::vector<double> v(n);
  for (auto& x : v) x = lo + (hi - lo) * uniform01(rng);
  return v;
}

Eigen::VectorXd normal_vector(Eigen::Index n, std::uint64_t seed) {
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Parameters);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = standard_normal(rng);
  return v;
}

}  // namespace dualgibbs::detail
