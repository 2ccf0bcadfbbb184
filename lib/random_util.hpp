#pragma once
// Portable random helpers for the generators, the estimators' bootstrap and the samplers' scan indices: the
// same seed gives the same numbers with any standard library (std distributions are implementation-defined,
// so they are not used).
#include <cstdint>
#include <random>

namespace dualgibbs::detail {

__extension__ using u128 = unsigned __int128;

/// Uniform integer in [0, n), n > 0, by Lemire's multiply-shift with rejection (unbiased): Lemire, "Fast
/// random integer generation in an interval" (2019), rejecting the (2^64 mod n) low products that would bias
/// the result. `Engine` yields uniform 64-bit words (std::mt19937_64, dualgibbs::ChainEngine).
template <class Engine>
inline std::uint64_t uniform_below(Engine& rng, std::uint64_t n) noexcept(noexcept(rng())) {
  u128 m = static_cast<u128>(rng()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(rng()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// Uniform double in [0, 1) with 53 random bits.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace dualgibbs::detail
