#pragma once
// Private: seeds for the sub-runs of an experiment, derived from its master seed, and the random inputs drawn
// from them (graphs redrawn until connected, uniform parameters, normal start vectors), all portable. Exported for
// dualgibbs::paper (the paper's figures), which is built with the library; the header is not installed.
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <vector>

namespace dualgibbs::detail {

/// A seed for sub-run (a, b) of an experiment with master seed `seed` (splitmix64 of a mix): distinct
/// sub-runs get unrelated streams, and the whole experiment is a function of the master seed.
DUALGIBBS_EXPORT std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);

/// Draws graphs from `make(seed)` with seeds derive_seed(seed, salt, attempt) until one is connected
/// (at most 100 attempts). `attempts` receives the number of draws. \throws std::runtime_error if none is.
DUALGIBBS_EXPORT Graph connected_graph(const std::function<Graph(std::uint64_t)>& make, std::uint64_t seed,
                                       std::uint64_t salt, int* attempts = nullptr);

/// Uniform double in [lo, hi) from a portable generator.
DUALGIBBS_EXPORT std::vector<double> uniform_vector(std::size_t n, double lo, double hi, std::uint64_t seed);

/// A standard normal vector (Box–Muller on a portable generator; reproducible across platforms).
DUALGIBBS_EXPORT Eigen::VectorXd normal_vector(Eigen::Index n, std::uint64_t seed);

}  // namespace dualgibbs::detail
