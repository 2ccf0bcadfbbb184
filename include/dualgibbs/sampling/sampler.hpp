#pragma once
/// \file sampler.hpp
/// One Gauss–Seidel Gibbs sweep engine over a *site kernel* (kernels.hpp): scan orders, per-chain random
/// streams (random.hpp), chunked drawing of indices and deviates, prefetching.
///
/// **Lock-step lanes.** A sampler of `Width` W > 1 advances W chains ("lanes") that share one scan schedule (the
/// same site sequence) but draw their own deviates; the state is stored interleaved (coordinate i of lane c at
/// `z[i * W + c]`), so one site update is a short vector operation across lanes. Lanes of one block are *not*
/// independent: see ensemble.hpp (EnsembleOptions::lockstep) for what that does to ensemble statistics. W = 1 is
/// one ordinary chain.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::DualIncidenceKernel kernel(model);
/// dualgibbs::GibbsSampler<dualgibbs::DualIncidenceKernel> chain(kernel, dualgibbs::ScanOrder::Random, 42);
/// chain.set_constant_state(1.0);
/// chain.sweep(100);                                  // 100 random sweeps of |E| updates each
/// Eigen::VectorXd y = chain.state(0), x = chain.tally(0);  // y~ and x~ = B y~
/// \endcode

#include <dualgibbs/core/memory.hpp>
#include <dualgibbs/core/random.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/sampling/kernels.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dualgibbs {

// ---- scan orders -----------------------------------------------------------------------------------------

/// Order in which a sweep visits the n coordinates.
enum class ScanOrder {
  Random,       ///< n i.i.d. uniform picks per sweep: the paper's random sweep (Sections IV and VI)
  Permutation,  ///< a fresh uniformly random permutation of 0..n-1 every sweep
  Fixed         ///< 0, 1, ..., n-1 every sweep (deterministic scan)
};

/// "random", "permutation" or "fixed". \throws std::invalid_argument for anything else.
DUALGIBBS_EXPORT ScanOrder parse_scan_order(const std::string& name);
/// The name parse_scan_order() accepts.
DUALGIBBS_EXPORT const char* to_string(ScanOrder scan) noexcept;

// ---- the sweep engine ------------------------------------------------------------------------------------

/// Scratch buffers of a sweep (drawn indices, deviates, a permutation). One per thread; reusable across
/// samplers of any kernel and width. Holding it outside the sampler keeps an ensemble's memory at
/// O(chains x (|V| + |E|)) plus O(threads x n).
class SweepWorkspace {
public:
  /// Sites per chunk: indices and deviates are drawn a chunk at a time (kChunkValues / W sites).
  static constexpr std::size_t kChunkValues = 2048;

  /// Makes the buffers large enough for n coordinates and `width` lanes.
  void reserve(Index n, int width) {
    const std::size_t chunk = kChunkValues / static_cast<std::size_t>(width);
    if (m_indices.size() < std::max<std::size_t>(chunk, static_cast<std::size_t>(n)))
      m_indices.resize(std::max<std::size_t>(chunk, static_cast<std::size_t>(n)));
    if (m_normals.size() < kChunkValues) m_normals.resize(kChunkValues);
  }
  /// Buffer of site indices (a chunk, or a whole permutation).
  Index* indices() noexcept { return m_indices.data(); }
  /// Buffer of deviates of one chunk (kChunkValues).
  double* normals() noexcept { return m_normals.data(); }

private:
  std::vector<Index> m_indices;
  std::vector<double> m_normals;
};

/// Gibbs sampler for W = Width lock-step lanes over a site kernel (see the kernel concept above).
///
/// The sampler owns the lanes' state (interleaved, `dimension() * W` values plus the tally) and their random
/// streams: the schedule stream `make_stream(seed, first_chain, Schedule)` and, for lane c, the deviates
/// `NormalStream(seed, first_chain + c)`. A sweep of n updates draws its n site indices (random scan) and
/// W x n deviates chunk by chunk, then runs the updates with software prefetching. The kernel must outlive the
/// sampler. Shipped instantiations: `CsrKernel` and `DualIncidenceKernel` for W in {1, 2, 4, 8, 16}.
template <class Kernel, int Width = 1>
class GibbsSampler {
  static_assert(Width >= 1 && Width <= 64, "GibbsSampler: Width must be in 1..64");

public:
  static constexpr int width = Width;  ///< lanes advanced in lock-step

  /// \param noise false gives plain Gauss–Seidel (eps = 0): deterministic, converges to the zero mean.
  /// \throws std::invalid_argument if the kernel has no coordinates.
  GibbsSampler(const Kernel& kernel, ScanOrder scan = ScanOrder::Random, std::uint64_t seed = 1,
               std::uint64_t first_chain = 0, bool noise = true)
      : m_kernel(&kernel),
        m_scan(scan),
        m_noise(noise),
        m_z(static_cast<std::size_t>(kernel.dimension()) * Width, 0.0),
        m_tally(static_cast<std::size_t>(kernel.tally_dimension()) * Width, 0.0),
        m_schedule(make_stream(seed, first_chain, StreamPurpose::Schedule)),
        m_rng(make_lane_streams(seed, first_chain)),
        m_seed(seed),
        m_first_chain(first_chain) {
    if (kernel.dimension() < 1) throw std::invalid_argument("GibbsSampler: the kernel has no coordinates");
  }

  /// The site kernel.
  const Kernel& kernel() const noexcept { return *m_kernel; }
  /// The scan order.
  ScanOrder scan() const noexcept { return m_scan; }
  /// False for plain Gauss–Seidel.
  bool noise() const noexcept { return m_noise; }
  /// Number of coordinates n.
  Index dimension() const noexcept { return m_kernel->dimension(); }
  /// Number of sweeps run so far.
  std::uint64_t sweeps_done() const noexcept { return m_sweeps; }

  /// Sets lane `lane` to z (length dimension()) and rebuilds the tally.
  /// \throws std::invalid_argument for a bad lane or length, or a non-finite value.
  void set_state(int lane, const Eigen::Ref<const Eigen::VectorXd>& z) {
    check_lane(lane);
    if (z.size() != dimension())
      throw std::invalid_argument("GibbsSampler::set_state: state of length " + std::to_string(z.size()) +
                                  " for " + std::to_string(dimension()) + " coordinates");
    if (!z.allFinite()) throw std::invalid_argument("GibbsSampler::set_state: the state has a non-finite value");
    for (Index i = 0; i < dimension(); ++i) m_z[static_cast<std::size_t>(i) * Width + lane] = z[i];
    refresh_tally();
  }
  /// Sets every coordinate of every lane to `value` (the paper's constant initial vector).
  void set_constant_state(double value) {
    if (!std::isfinite(value)) throw std::invalid_argument("GibbsSampler::set_constant_state: value is not finite");
    std::fill(m_z.begin(), m_z.end(), value);
    refresh_tally();
  }
  /// Draws every lane from N(0, diag(M)^-1), i.e. z_i = M_ii^{-1/2} eps_i, lane c from the stream
  /// make_stream(seed, first_chain + c, Initial), coordinates in order 0..n-1.
  void set_random_state() {
    for (int c = 0; c < Width; ++c) {
      ChainEngine rng = make_stream(m_seed, m_first_chain + static_cast<std::uint64_t>(c), StreamPurpose::Initial);
      for (Index i = 0; i < dimension(); ++i)
        m_z[static_cast<std::size_t>(i) * Width + c] = m_kernel->conditional_sd(i) * standard_normal(rng);
    }
    refresh_tally();
  }
  /// Recomputes the tally exactly from the state (removes the rounding drift of incremental updates).
  void refresh_tally() noexcept { m_kernel->template rebuild_tally<Width>(m_z.data(), m_tally.data()); }

  /// The state of one lane (length dimension()).
  Eigen::VectorXd state(int lane) const {
    check_lane(lane);
    Eigen::VectorXd out(dimension());
    for (Index i = 0; i < dimension(); ++i) out[i] = m_z[static_cast<std::size_t>(i) * Width + lane];
    return out;
  }
  /// The tally of one lane (length tally_dimension(); x~ = B y~ for the dual kernel).
  Eigen::VectorXd tally(int lane) const {
    check_lane(lane);
    const Index m = m_kernel->tally_dimension();
    Eigen::VectorXd out(m);
    for (Index i = 0; i < m; ++i) out[i] = m_tally[static_cast<std::size_t>(i) * Width + lane];
    return out;
  }
  /// Interleaved storage: coordinate i of lane c at state_data()[i * W + c].
  const double* state_data() const noexcept { return m_z.data(); }
  /// Interleaved tally: entry k of lane c at tally_data()[k * W + c].
  const double* tally_data() const noexcept { return m_tally.data(); }

  /// Runs `count` sweeps of n updates each, using `ws` for scratch. No allocation once `ws` is large enough.
  void sweep(std::size_t count, SweepWorkspace& ws) {
    const Index n = dimension();
    ws.reserve(n, Width);
    for (std::size_t s = 0; s < count; ++s) {
      run_one_sweep(n, ws);
      ++m_sweeps;
    }
  }
  /// Runs `count` sweeps with a workspace owned by the sampler.
  void sweep(std::size_t count = 1) {
    if (!m_ws) m_ws = std::make_unique<SweepWorkspace>();
    sweep(count, *m_ws);
  }

private:
  static constexpr std::size_t kChunk = SweepWorkspace::kChunkValues / Width;

  static std::array<NormalStream, Width> make_lane_streams(std::uint64_t seed, std::uint64_t first) {
    return make_lane_streams(seed, first, std::make_integer_sequence<int, Width>{});
  }
  template <int... C>
  static std::array<NormalStream, Width> make_lane_streams(std::uint64_t seed, std::uint64_t first,
                                                           std::integer_sequence<int, C...>) {
    return {{NormalStream(seed, first + static_cast<std::uint64_t>(C))...}};
  }

  void check_lane(int lane) const {
    if (lane < 0 || lane >= Width)
      throw std::invalid_argument("GibbsSampler: lane " + std::to_string(lane) + " out of range 0.." +
                                  std::to_string(Width - 1));
  }

  void run_one_sweep(Index n, SweepWorkspace& ws) {
    Index* idx = ws.indices();
    if (m_scan == ScanOrder::Permutation) detail::fill_permutation(m_schedule, n, idx);
    for (std::size_t start = 0; start < static_cast<std::size_t>(n); start += kChunk) {
      const std::size_t len = std::min(kChunk, static_cast<std::size_t>(n) - start);
      const Index* sites = idx;
      if (m_scan == ScanOrder::Random) {
        detail::fill_uniform_indices(m_schedule, static_cast<std::uint32_t>(n), len, idx);
      } else if (m_scan == ScanOrder::Permutation) {
        sites = idx + start;
      } else {
        for (std::size_t t = 0; t < len; ++t) idx[t] = static_cast<Index>(start + t);
      }
      double* eps = ws.normals();
      if (m_noise) {
        NormalStream::fill_lanes(m_rng.data(), Width, len, eps);
      } else {
        std::fill(eps, eps + len * Width, 0.0);
      }
      run_chunk(sites, len, eps);
    }
  }

  void run_chunk(const Index* sites, std::size_t len, const double* eps) noexcept {
    if constexpr (detail::HasRunUpdates<Kernel, Width>::value)
      m_kernel->template run_updates<Width>(sites, len, m_z.data(), m_tally.data(), eps);
    else
      detail::run_updates_generic<Width>(*m_kernel, sites, len, m_z.data(), m_tally.data(), eps);
  }

  const Kernel* m_kernel;
  ScanOrder m_scan;
  bool m_noise;
  detail::LargeVector<double> m_z;
  detail::LargeVector<double> m_tally;
  ChainEngine m_schedule;
  std::array<NormalStream, Width> m_rng;
  std::uint64_t m_seed;
  std::uint64_t m_first_chain;
  std::uint64_t m_sweeps = 0;
  std::unique_ptr<SweepWorkspace> m_ws;
};

/// \cond INTERNAL
// The shipped kernels are compiled into libdualgibbs (lib/sampling/sampler.cpp).
#define DUALGIBBS_SAMPLER_EXTERN(K, W) extern template class DUALGIBBS_EXPORT GibbsSampler<K, W>;
#define DUALGIBBS_SAMPLER_EXTERN_ALL(K) DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_SAMPLER_EXTERN, K)
DUALGIBBS_SHIPPED_KERNELS(DUALGIBBS_SAMPLER_EXTERN_ALL)
#undef DUALGIBBS_SAMPLER_EXTERN_ALL
#undef DUALGIBBS_SAMPLER_EXTERN
/// \endcond

}  // namespace dualgibbs
