#pragma once
/// \file random.hpp
/// The library's one source of random numbers: per-chain xoshiro256++ streams keyed by (seed, chain, purpose),
/// normal deviates by Boost's ziggurat tables (vectorised), unbiased uniform integers and permutations.
///
/// Every stream is a xoshiro256++ generator (`ChainEngine`) whose state is derived from (seed, chain index,
/// purpose) by `make_stream` (SplitMix64 mixing, `mix64`); normal deviates come from Boost.Random's ziggurat
/// (`standard_normal`: Boost's `normal_distribution` itself; `NormalStream`: eight interleaved sub-streams per chain
/// evaluated eight at a time, with the rare continuation on a tail stream of its own),
/// uniform indices from Lemire's unbiased multiply-shift (`uniform_below`). Nothing depends on the standard
/// library's implementation, so a seed gives the same numbers everywhere. docs/sampler.md lists which stream
/// every part of the library draws from.
///
/// \code
/// dualgibbs::ChainEngine rng = dualgibbs::make_stream(42, /*chain=*/0, dualgibbs::StreamPurpose::Initial);
/// double z = dualgibbs::standard_normal(rng);
/// std::uint64_t k = dualgibbs::uniform_below(rng, 10);   // uniform in 0..9
/// \endcode

#include <dualgibbs/core/index.hpp>
#include <dualgibbs/export.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dualgibbs {

/// The SplitMix64 finalizer (Steele, Lea and Flood 2014): a bijection of 64-bit words with full avalanche. The one
/// seed mixer of the library: make_stream() builds stream states from it and the experiments derive sub-run seeds
/// with it.
/// \param z the word to mix
/// \return the mixed word
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// ---- random streams --------------------------------------------------------------------------------------

/// xoshiro256++ (Blackman and Vigna): a 256-bit-state generator whose every output bit, the low ones included,
/// is strong, as Boost's ziggurat needs (it takes layer and sign from the low 8 bits). Satisfies the standard
/// UniformRandomBitGenerator requirements. Construct it with make_stream().
class ChainEngine {
 public:
  using result_type = std::uint64_t;  ///< 64-bit output words
  /// Smallest output, 0.
  /// \return 0
  static constexpr result_type min() noexcept { return 0; }
  /// Largest output, 2^64 - 1.
  /// \return 2^64 - 1
  static constexpr result_type max() noexcept { return ~result_type(0); }

  /// \param state the 256-bit state (s0, s1, s2, s3), not all zero
  /// \throws std::invalid_argument for the all-zero state (the generator's one fixed point).
  explicit ChainEngine(const std::array<std::uint64_t, 4>& state) : m_s(state) {
    if ((state[0] | state[1] | state[2] | state[3]) == 0)
      throw std::invalid_argument("ChainEngine: the all-zero state is not allowed");
  }

  /// The next output word; advances the state.
  /// \return the next 64-bit word
  result_type operator()() noexcept {
    const std::uint64_t result = rotl(m_s[0] + m_s[3], 23) + m_s[0];
    const std::uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
  }

  /// The 256-bit state (s0, s1, s2, s3).
  /// \return the state words (s0, s1, s2, s3)
  const std::array<std::uint64_t, 4>& state() const noexcept { return m_s; }
  /// Same state.
  /// \param a one engine
  /// \param b another engine
  /// \return true if a and b have the same state
  friend bool operator==(const ChainEngine& a, const ChainEngine& b) noexcept { return a.m_s == b.m_s; }
  /// Different state.
  /// \param a one engine
  /// \param b another engine
  /// \return true if a and b have different states
  friend bool operator!=(const ChainEngine& a, const ChainEngine& b) noexcept { return !(a == b); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> m_s;
};

/// What a stream is used for; streams of different purposes never share state.
enum class StreamPurpose : std::uint64_t {
  Schedule = 1,    ///< the scan order of a block (random picks or permutations)
  Noise = 2,       ///< the normal deviates eps of one chain
  Initial = 3,     ///< the random initial state of one chain
  Graph = 4,       ///< random graph generators (stream chain 0 of the graph's seed)
  Parameters = 5,  ///< the experiments' random parameter and start vectors (stream chain 0 of a derived seed)
  Bootstrap = 6,   ///< bootstrap resampling (GroupedMoments: chain 0 of the seed; bootstrap_draws: chain = replicate)
  ExactDraws = 7   ///< the standard normals of exact draws from a Cholesky factor (stream chain 0 of the seed)
};

/// The stream of chain `chain` for `purpose` under `seed` (and sub-stream `substream`, see NormalStream). Each of
/// the four state words is a different bijective 64-bit mix of (seed, chain, purpose, substream), so for one seed,
/// purpose and sub-stream distinct chains get distinct states; the streams are then non-overlapping for any
/// practical length (period 2^256 - 1).
/// \param seed the run's seed
/// \param chain the chain index
/// \param purpose what the stream is used for
/// \param substream the sub-stream (0 unless a NormalStream way, 0..8)
/// \return the stream's engine
DUALGIBBS_EXPORT ChainEngine make_stream(std::uint64_t seed, std::uint64_t chain, StreamPurpose purpose,
                                         std::uint64_t substream = 0) noexcept;

/// Uniform integer in [0, n), n >= 1, by Lemire's multiply-shift with rejection (exactly unbiased): Lemire, "Fast
/// random integer generation in an interval" (2019), rejecting the (2^64 mod n) low products that would bias the
/// result. `Engine` yields uniform 64-bit words (ChainEngine, or any UniformRandomBitGenerator of 64-bit words).
/// \param rng the generator to draw from
/// \param n the bound, n >= 1
/// \return a uniform integer in [0, n)
template <class Engine>
inline std::uint64_t uniform_below(Engine& rng, std::uint64_t n) noexcept(noexcept(rng())) {
  __extension__ using u128 = unsigned __int128;
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
/// Uniform double in [0, 1) with 53 random bits (the top 53 bits of one word).
/// \param rng the generator to draw from (one word)
/// \return a uniform double in [0, 1)
template <class Engine>
inline double uniform01(Engine& rng) noexcept(noexcept(rng())) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
/// One N(0, 1) deviate: Boost.Random's ziggurat normal_distribution driven by `rng`.
/// \param rng the generator to draw from
/// \return an N(0, 1) deviate
DUALGIBBS_EXPORT double standard_normal(ChainEngine& rng) noexcept;

/// The N(0, 1) deviates of one chain: Boost.Random's ziggurat (its tables and its first step) on kWays = 8
/// interleaved xoshiro256++ sub-streams plus a tail stream. Deviate t (counted from construction) takes one word
/// u from sub-stream t mod 8 (`make_stream(seed, chain, Noise, t mod 8)`); when u takes the ziggurat's common
/// branch (97.2% of draws) the deviate is Boost's for that word, otherwise Boost's continuation (the wedge test
/// with its exp, the base-layer tail, a restart on rejection) draws all further words from the chain's tail stream
/// (`make_stream(seed, chain, Noise, 8)`), deviate after deviate in order. Each deviate is exactly N(0, 1) and the
/// deviates are independent, as with Boost's own loop. fill() evaluates the common branch eight words at a time
/// (AVX-512 or AVX2, chosen at run time; a portable scalar path otherwise) and finishes the misses afterwards; every
/// path gives the same bits. Why this is exact and how it vectorizes: docs/sampler.md, section 3.
class DUALGIBBS_EXPORT NormalStream {
 public:
  static constexpr int kWays = 8;  ///< number of interleaved sub-streams

  /// The deviates of chain `chain` under `seed`.
  /// \param seed the run's seed
  /// \param chain the chain index
  NormalStream(std::uint64_t seed, std::uint64_t chain) noexcept;
  /// The next deviate.
  /// \return the next N(0, 1) deviate
  double operator()() noexcept;
  /// out[t * stride] = the next `count` deviates, in order.
  /// \param count number of deviates to draw
  /// \param out where deviate t goes, at out[t * stride]
  /// \param stride distance between consecutive deviates in out
  void fill(std::size_t count, double* out, std::size_t stride) noexcept;
  /// The deviates of W = `lanes` streams interleaved: out[t * lanes + c] = the next deviate of streams[c], for
  /// t < count. The same bits as streams[c].fill(count, out + c, lanes) for every c, faster: on AVX-512 eight
  /// streams at the same sub-stream are drawn as one vector (deviate t of all eight is one contiguous store, where
  /// fill() with a stride needs a scatter), and the remaining streams two at a time.
  /// \param streams the `lanes` streams to draw from
  /// \param lanes number of streams W
  /// \param count number of deviates per stream
  /// \param out count x lanes doubles, deviate t of stream c at out[t * lanes + c]
  static void fill_lanes(NormalStream* streams, int lanes, std::size_t count, double* out) noexcept;
  /// The current state of sub-stream k, as an engine.
  /// \param k the sub-stream, 0 <= k < kWays
  /// \return sub-stream k's engine
  ChainEngine substream(int k) const;
  /// The current state of the tail stream (the continuation of draws that miss the common branch), as an engine.
  /// \return the tail stream's engine
  ChainEngine tail_stream() const;
  /// Sub-stream of the next deviate.
  /// \return the sub-stream index, 0 <= next_way() < kWays
  int next_way() const noexcept { return static_cast<int>(m_next); }

 private:
  alignas(64) std::uint64_t m_s[4][kWays];  // state word w of sub-stream k at m_s[w][k]
  std::uint64_t m_tail[4];                  // the tail stream's state
  unsigned m_next = 0;
};

namespace detail {
/// Selects the implementation of NormalStream::fill and fill_uniform_indices (for tests and benchmarks; all give the
/// same bits): "auto" (the best the CPU supports, the default), "scalar", "avx2" or "avx512". Returns the name of the
/// path now in use, or nullptr (and changes nothing) if `name` is unknown or unsupported here. Not thread-safe.
DUALGIBBS_EXPORT const char* select_normal_path(const std::string& name);

/// out[t] uniform in [0, n) for t in [0, count), n >= 1, independent (a random scan's site picks). The indices come
/// from eight xoshiro256++ sub-streams seeded by 32 words of `rng` (state word w of sub-stream k = mix64 of the
/// (4 k + w)-th): index t = 16 g + 8 h + k is Lemire's multiply-shift with rejection on the low (h = 0) or high
/// (h = 1) 32 bits of word g of sub-stream k, so exactly uniform; a value the rejection test must redo (probability
/// below n / 2^32) is redrawn from the top 32 bits of `rng`'s next word. A vector path draws 16 indices per step;
/// every path gives the same indices. count = 0 draws nothing.
DUALGIBBS_EXPORT void fill_uniform_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept;
/// out[0..n) = a uniformly random permutation of 0..n-1 (Fisher–Yates with uniform_below; does not read out).
DUALGIBBS_EXPORT void fill_permutation(ChainEngine& rng, Index n, Index* out) noexcept;
}  // namespace detail

}  // namespace dualgibbs
