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
/// \param name the order's name
/// \return the order
DUALGIBBS_EXPORT ScanOrder parse_scan_order(const std::string& name);
/// The name parse_scan_order() accepts.
/// \param scan the order
/// \return its name
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
  /// \param n the number of coordinates
  /// \param width the lanes W
  void reserve(Index n, int width) {
    const std::size_t chunk = kChunkValues / static_cast<std::size_t>(width);
    if (m_indices.size() < std::max<std::size_t>(chunk, static_cast<std::size_t>(n)))
      m_indices.resize(std::max<std::size_t>(chunk, static_cast<std::size_t>(n)));
    if (m_normals.size() < kChunkValues) m_normals.resize(kChunkValues);
  }
  /// Buffer of site indices (a chunk, or a whole permutation).
  /// \return the index buffer
  Index* indices() noexcept { return m_indices.data(); }
  /// Buffer of deviates of one chunk (kChunkValues).
  /// \return the deviate buffer
  double* normals() noexcept { return m_normals.data(); }

 private:
  std::vector<Index> m_indices;
  std::vector<double> m_normals;
};

// ---- sweep schemes ---------------------------------------------------------------------------------------
//
// A site kernel (kernels.hpp) says what one update of one coordinate is; a *scheme* says which sites a sweep
// visits, in which order, and with what arithmetic. GibbsSampler<Kernel, W, Scheme> owns the state and the random
// streams and hands the scheme a SweepContext once per sweep. A scheme S has these members:
//
//   void prepare(Index n, int width);         // once, at the sampler's construction: allocate per-sampler state
//   void reset() noexcept;                    // the state was set from outside: drop any history (multi-step)
//   std::size_t site_updates(Index n) const;  // site updates one sweep performs (n for a scan, 2n for SSOR)
//   template <class Kernel, int W> void sweep(SweepContext<Kernel, W>& ctx);   // one sweep, no allocation
//
// Optional: `template <class Kernel, int W> void check_kernel(const Kernel&) const`, called by GibbsSampler's
// constructor, throws std::invalid_argument when the scheme is not defined for that kernel (e.g. relaxed updates on
// a kernel without set_site).
//
// The context gives the scheme the kernel, the interleaved state and tally, the block's schedule stream and the
// lanes' deviates, and two building blocks: ctx.gibbs(sites, count) runs plain Gibbs updates of a list of sites
// (deviates drawn chunk by chunk, the kernel's vectorized run_updates), and ctx.draw_deviates(count, eps) for a
// scheme that does its own arithmetic (with the kernel's conditional_mean and set_site). Shipped schemes:
// ScanSweep (random, permutation and fixed scans: the paper's samplers) and SymmetricSweep (a forward then a
// backward sweep with relaxation omega, the SSOR sampler's half-steps). docs/sampler.md section 2 shows how a new
// scheme plugs in (colour-ordered sweeps, Chebyshev acceleration with its previous states).

/// One sweep's view of a sampler: what a scheme works on (see the scheme concept above). Valid during the sweep.
template <class Kernel, int W>
struct SweepContext {
  const Kernel& kernel;           ///< the site kernel
  double* z;                      ///< state, interleaved: coordinate i of lane c at z[i * W + c]
  double* tally;                  ///< the kernel's tally, interleaved the same way
  ChainEngine& schedule;          ///< the block's schedule stream (site picks, permutations)
  NormalStream* lanes;            ///< the W lanes' deviate streams
  bool noise;                     ///< false: plain Gauss–Seidel (all deviates 0)
  SweepWorkspace& ws;             ///< scratch: indices() has room for max(n, chunk) sites, normals() for one chunk
  std::uint64_t seed = 0;         ///< the sampler's seed (for schemes that key their own deviate streams)
  std::uint64_t first_chain = 0;  ///< the chain index of lane 0 (lane c is chain first_chain + c)
  std::uint64_t sweep = 0;        ///< sweeps the sampler has run before this one

  /// Sites per chunk of deviates.
  static constexpr std::size_t kChunk = SweepWorkspace::kChunkValues / W;

  /// n, the number of coordinates.
  /// \return n
  Index dimension() const noexcept { return kernel.dimension(); }

  /// eps[t * W + c] = the next deviate of lane c, for t < count <= kChunk (zeros without noise).
  /// \param count the sites, count <= kChunk
  /// \param eps where the count x W deviates go
  void draw_deviates(std::size_t count, double* eps) const noexcept {
    if (noise)
      NormalStream::fill_lanes(lanes, W, count, eps);
    else
      std::fill(eps, eps + count * W, 0.0);
  }

  /// Plain Gibbs updates of sites[0..count), count <= kChunk, with deviates eps (the kernel's run_updates where it
  /// has one, else the generic loop).
  /// \param sites the sites to update, in order
  /// \param count the number of sites, count <= kChunk
  /// \param eps the count x W deviates, eps[t * W + c] for site t of lane c
  void run_updates(const Index* sites, std::size_t count, const double* eps) const noexcept {
    if constexpr (detail::HasRunUpdates<Kernel, W>::value)
      kernel.template run_updates<W>(sites, count, z, tally, eps);
    else
      detail::run_updates_generic<W>(kernel, sites, count, z, tally, eps);
  }

  /// Plain Gibbs updates of the sites produced by `next_chunk(start, len, buffer)` for start = 0, kChunk, ... <
  /// count: the callback returns a pointer to the len sites of that chunk (written into buffer, or elsewhere).
  /// \param count the number of site updates
  /// \param next_chunk gives the sites of each chunk
  template <class NextChunk>
  void gibbs(std::size_t count, NextChunk&& next_chunk) const {
    Index* buffer = ws.indices();
    double* eps = ws.normals();
    for (std::size_t start = 0; start < count; start += kChunk) {
      const std::size_t len = std::min(kChunk, count - start);
      const Index* sites = next_chunk(start, len, buffer);
      draw_deviates(len, eps);
      run_updates(sites, len, eps);
    }
  }
};

namespace detail {
/// True when Kernel has the optional commit hook set_site<W> (kernels.hpp).
template <class Kernel, int W, class = void>
struct HasSetSite : std::false_type {};
template <class Kernel, int W>
struct HasSetSite<
    Kernel, W,
    std::void_t<decltype(std::declval<const Kernel&>().template set_site<W>(
        Index{0}, static_cast<double*>(nullptr), static_cast<double*>(nullptr), static_cast<const double*>(nullptr)))>>
    : std::true_type {};

/// True when Scheme has the optional member `template <class K, int W> void check_kernel(const K&) const`.
template <class Scheme, class Kernel, int W, class = void>
struct HasCheckKernel : std::false_type {};
template <class Scheme, class Kernel, int W>
struct HasCheckKernel<Scheme, Kernel, W,
                      std::void_t<decltype(std::declval<const Scheme&>().template check_kernel<Kernel, W>(
                          std::declval<const Kernel&>()))>> : std::true_type {};

/// Relaxed updates of sites[0..count), count <= SweepContext::kChunk, with the deviates eps (eps[t * W + c]):
///
///   z_i <- (1 - omega) z_i + omega mu_i + noise_scale M_ii^{-1/2} eps,
///
/// through the kernel's batched run_relaxed_updates where it has one (the same bits), else its conditional_mean and
/// set_site (check_kernel refuses a kernel without set_site before a sweep can get here).
template <class Kernel, int W>
void relaxed_chunk(SweepContext<Kernel, W>& ctx, const Index* sites, std::size_t count, const double* eps, double omega,
                   double noise_scale) {
  if constexpr (HasRunRelaxedUpdates<Kernel, W>::value) {
    ctx.kernel.template run_relaxed_updates<W>(sites, count, ctx.z, ctx.tally, eps, omega, noise_scale);
  } else if constexpr (HasSetSite<Kernel, W>::value) {
    const double keep = 1.0 - omega;
    for (std::size_t t = 0; t < count; ++t) {
      const Index i = sites[t];
      const double* zi = ctx.z + static_cast<std::size_t>(i) * W;
      const double sd = noise_scale * ctx.kernel.conditional_sd(i);
      double fresh[W];
      ctx.kernel.template conditional_mean<W>(i, ctx.z, ctx.tally, fresh);
      for (int c = 0; c < W; ++c) fresh[c] = keep * zi[c] + omega * fresh[c] + sd * eps[t * W + c];
      ctx.kernel.template set_site<W>(i, ctx.z, ctx.tally, fresh);
    }
  } else {
    throw std::logic_error("relaxed_updates: the site kernel has no set_site");
  }
}

/// Relaxed updates (relaxed_chunk) of the sites produced by next_chunk (as SweepContext::gibbs), count sites in all,
/// with the lanes' next deviates (SymmetricSweep with noise_scale = sqrt(omega (2 - omega)), ChebyshevSsorSweep with
/// that times its per-iteration factor).
template <class Kernel, int W, class NextChunk>
void relaxed_updates(SweepContext<Kernel, W>& ctx, std::size_t count, const NextChunk& next_chunk, double omega,
                     double noise_scale) {
  double* eps = ctx.ws.normals();
  for (std::size_t start = 0; start < count; start += ctx.kChunk) {
    const std::size_t len = std::min(ctx.kChunk, count - start);
    const Index* sites = next_chunk(start, len, ctx.ws.indices());
    ctx.draw_deviates(len, eps);
    relaxed_chunk(ctx, sites, len, eps, omega, noise_scale);
  }
}

}  // namespace detail

/// The paper's samplers: one sweep is n Gibbs updates in a scan order (ScanOrder). Implicitly constructible from
/// a ScanOrder, so GibbsSampler<K>(kernel, ScanOrder::Fixed, ...) reads as before.
struct ScanSweep {
  ScanOrder order = ScanOrder::Random;  ///< which sites, in which order

  /// A sweep in scan order `o`.
  /// \param o the scan order
  ScanSweep(ScanOrder o = ScanOrder::Random) noexcept : order(o) {}  // NOLINT: implicit by design
  /// Nothing to allocate.
  void prepare(Index, int) noexcept {}
  /// No history.
  void reset() noexcept {}
  /// n updates per sweep.
  /// \param n the number of coordinates
  /// \return n
  std::size_t site_updates(Index n) const noexcept { return static_cast<std::size_t>(n); }

  /// Random scan: n uniform picks from the schedule stream, drawn a chunk at a time; permutation: one fresh
  /// permutation of 0..n-1 per sweep (Fisher–Yates); fixed: 0, 1, ..., n-1.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) const {
    const Index n = ctx.dimension();
    const auto count = static_cast<std::size_t>(n);
    switch (order) {
      case ScanOrder::Random:
        ctx.gibbs(count, [&](std::size_t, std::size_t len, Index* buf) {
          detail::fill_uniform_indices(ctx.schedule, static_cast<std::uint32_t>(n), len, buf);
          return static_cast<const Index*>(buf);
        });
        break;
      case ScanOrder::Permutation: {
        Index* perm = ctx.ws.indices();
        detail::fill_permutation(ctx.schedule, n, perm);
        ctx.gibbs(count,
                  [&](std::size_t start, std::size_t, Index*) { return static_cast<const Index*>(perm + start); });
        break;
      }
      case ScanOrder::Fixed:
        ctx.gibbs(count, [](std::size_t start, std::size_t len, Index* buf) {
          for (std::size_t t = 0; t < len; ++t) buf[t] = static_cast<Index>(start + t);
          return static_cast<const Index*>(buf);
        });
        break;
    }
  }
};

/// A symmetric sweep: sites 0, 1, ..., n-1 then n-1, ..., 0, each updated with relaxation omega in (0, 2):
///
///   z_i <- (1 - omega) z_i + omega mu_i + sqrt(omega (2 - omega)) M_ii^{-1/2} eps,
///
/// which leaves the conditional N(mu_i, M_ii^-1), hence N(0, M^-1), invariant for every omega in (0, 2) (an
/// over-relaxed Gibbs step, Adler 1981). Without noise it is one SSOR iteration of the linear solver; omega = 1 is
/// symmetric Gibbs (plain updates, the kernel's vectorized loop). omega != 1 needs the kernel's set_site (both
/// shipped kernels have it). 2n site updates per sweep; the schedule stream is not used.
struct SymmetricSweep {
  double omega = 1.0;  ///< relaxation, in (0, 2)

  /// \param w the relaxation omega
  /// \throws std::invalid_argument unless 0 < omega < 2.
  explicit SymmetricSweep(double w = 1.0) : omega(w) {
    if (!(w > 0.0 && w < 2.0))
      throw std::invalid_argument("SymmetricSweep: omega = " + std::to_string(w) + " is not in (0, 2)");
  }
  /// Nothing to allocate.
  void prepare(Index, int) noexcept {}
  /// No history.
  void reset() noexcept {}
  /// 2n updates per sweep.
  /// \param n the number of coordinates
  /// \return 2n
  std::size_t site_updates(Index n) const noexcept { return 2 * static_cast<std::size_t>(n); }

  /// The forward then the backward half-sweep.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) const {
    const auto n = static_cast<std::size_t>(ctx.dimension());
    const auto ascending = [](std::size_t start, std::size_t len, Index* buf) {
      for (std::size_t t = 0; t < len; ++t) buf[t] = static_cast<Index>(start + t);
      return static_cast<const Index*>(buf);
    };
    const auto descending = [n](std::size_t start, std::size_t len, Index* buf) {
      for (std::size_t t = 0; t < len; ++t) buf[t] = static_cast<Index>(n - 1 - start - t);
      return static_cast<const Index*>(buf);
    };
    if (omega == 1.0) {
      ctx.gibbs(n, ascending);
      ctx.gibbs(n, descending);
      return;
    }
    const double noise_scale = std::sqrt(omega * (2.0 - omega));
    detail::relaxed_updates(ctx, n, ascending, omega, noise_scale);
    detail::relaxed_updates(ctx, n, descending, omega, noise_scale);
  }

  /// \throws std::invalid_argument for omega != 1 on a kernel without set_site (GibbsSampler's constructor calls
  /// it).
  template <class Kernel, int W>
  void check_kernel(const Kernel&) const {
    if (omega != 1.0 && !detail::HasSetSite<Kernel, W>::value)
      throw std::invalid_argument("SymmetricSweep: omega = " + std::to_string(omega) +
                                  " needs a site kernel with set_site (the commit hook of relaxed updates); this "
                                  "kernel has none");
  }
};

/// Gibbs sampler for W = Width lock-step lanes over a site kernel (kernels.hpp) and a sweep scheme (above).
///
/// The sampler owns the lanes' state (interleaved, `dimension() * W` values plus the tally) and their random
/// streams: the schedule stream `make_stream(seed, first_chain, Schedule)` and, for lane c, the deviates
/// `NormalStream(seed, first_chain + c)`. Each sweep() hands them to the scheme. The kernel must outlive the
/// sampler. Shipped instantiations: `CsrKernel` and `DualIncidenceKernel` for W in {1, 2, 4, 8, 16} with ScanSweep.
template <class Kernel, int Width = 1, class Scheme = ScanSweep>
class GibbsSampler {
  static_assert(Width >= 1 && Width <= 64, "GibbsSampler: Width must be in 1..64");

 public:
  static constexpr int width = Width;  ///< lanes advanced in lock-step

  /// \param kernel the site kernel; it must outlive the sampler
  /// \param scheme the sweep scheme (a ScanOrder converts to a ScanSweep).
  /// \param seed the run's seed, keying the schedule and deviate streams
  /// \param first_chain the chain index of lane 0 (lane c is chain first_chain + c)
  /// \param noise false gives the noise-free iteration (Gauss–Seidel for ScanSweep, SSOR for SymmetricSweep).
  /// \throws std::invalid_argument if the kernel has no coordinates.
  GibbsSampler(const Kernel& kernel, Scheme scheme = Scheme(), std::uint64_t seed = 1, std::uint64_t first_chain = 0,
               bool noise = true)
      : m_kernel(&kernel),
        m_scheme(std::move(scheme)),
        m_noise(noise),
        m_z(static_cast<std::size_t>(kernel.dimension()) * Width, 0.0),
        m_tally(static_cast<std::size_t>(kernel.tally_dimension()) * Width, 0.0),
        m_schedule(make_stream(seed, first_chain, StreamPurpose::Schedule)),
        m_rng(make_lane_streams(seed, first_chain)),
        m_seed(seed),
        m_first_chain(first_chain) {
    if (kernel.dimension() < 1) throw std::invalid_argument("GibbsSampler: the kernel has no coordinates");
    if constexpr (detail::HasCheckKernel<Scheme, Kernel, Width>::value)
      m_scheme.template check_kernel<Kernel, Width>(kernel);
    m_scheme.prepare(kernel.dimension(), Width);
  }

  /// The site kernel.
  /// \return the kernel
  const Kernel& kernel() const noexcept { return *m_kernel; }
  /// The sweep scheme.
  /// \return the scheme
  const Scheme& scheme() const noexcept { return m_scheme; }
  /// False for the noise-free iteration.
  /// \return false for the noise-free iteration
  bool noise() const noexcept { return m_noise; }
  /// Number of coordinates n.
  /// \return n
  Index dimension() const noexcept { return m_kernel->dimension(); }
  /// Number of sweeps run so far.
  /// \return the sweeps run
  std::uint64_t sweeps_done() const noexcept { return m_sweeps; }

  /// Sets lane `lane` to z (length dimension()) and rebuilds the tally.
  /// \param lane the lane, 0 <= lane < W
  /// \param z the state, length dimension()
  /// \throws std::invalid_argument for a bad lane or length, or a non-finite value.
  void set_state(int lane, const Eigen::Ref<const Eigen::VectorXd>& z) {
    check_lane(lane);
    if (z.size() != dimension())
      throw std::invalid_argument("GibbsSampler::set_state: state of length " + std::to_string(z.size()) + " for " +
                                  std::to_string(dimension()) + " coordinates");
    if (!z.allFinite()) throw std::invalid_argument("GibbsSampler::set_state: the state has a non-finite value");
    for (Index i = 0; i < dimension(); ++i) m_z[static_cast<std::size_t>(i) * Width + lane] = z[i];
    refresh_tally();
    m_scheme.reset();
  }
  /// Sets every coordinate of every lane to `value` (the paper's constant initial vector).
  /// \param value the value, finite
  void set_constant_state(double value) {
    if (!std::isfinite(value)) throw std::invalid_argument("GibbsSampler::set_constant_state: value is not finite");
    std::fill(m_z.begin(), m_z.end(), value);
    refresh_tally();
    m_scheme.reset();
  }
  /// Draws every lane from N(0, scale^2 diag(M)^-1), i.e. z_i = scale (M_ii^{-1/2} eps_i), lane c from the stream
  /// make_stream(seed, first_chain + c, Initial), coordinates in order 0..n-1 (scale = 1: the same bits as
  /// before the scale existed; scale = 2 doubles them exactly). \throws std::invalid_argument unless scale is
  /// finite and positive.
  /// \param scale the factor of the deviates
  void set_random_state(double scale = 1.0) { set_random_state(scale, nullptr); }
  /// set_random_state() of the coordinates of a part of a larger state (a graph split over a chain group,
  /// partition.hpp): coordinate i takes the deviate at place positions[i] of the lane's stream (places increasing),
  /// so each is the value it has in the whole state. Null positions: place i.
  /// \param scale the factor of the deviates
  /// \param positions the place of each coordinate in the whole state, increasing (dimension() of them), or null
  void set_random_state(double scale, const std::vector<Index>* positions) {
    if (!(std::isfinite(scale) && scale > 0))
      throw std::invalid_argument("GibbsSampler::set_random_state: scale = " + std::to_string(scale) +
                                  " must be finite and positive");
    if (positions && positions->size() != static_cast<std::size_t>(dimension()))
      throw std::invalid_argument("GibbsSampler::set_random_state: " + std::to_string(positions->size()) +
                                  " positions for " + std::to_string(dimension()) + " coordinates");
    for (int c = 0; c < Width; ++c) {
      ChainEngine rng = make_stream(m_seed, m_first_chain + static_cast<std::uint64_t>(c), StreamPurpose::Initial);
      Index place = 0;
      for (Index i = 0; i < dimension(); ++i) {
        if (positions)  // the deviates of the places before this coordinate's belong to other parts
          for (const Index at = (*positions)[static_cast<std::size_t>(i)]; place < at; ++place)
            (void)standard_normal(rng);
        m_z[static_cast<std::size_t>(i) * Width + c] = scale * (m_kernel->conditional_sd(i) * standard_normal(rng));
        ++place;
      }
    }
    refresh_tally();
    m_scheme.reset();
  }
  /// Recomputes the tally exactly from the state (removes the rounding drift of incremental updates).
  void refresh_tally() noexcept { m_kernel->template rebuild_tally<Width>(m_z.data(), m_tally.data()); }

  /// The state of one lane (length dimension()).
  /// \param lane the lane, 0 <= lane < W
  /// \return the lane's state
  Eigen::VectorXd state(int lane) const {
    check_lane(lane);
    Eigen::VectorXd out(dimension());
    for (Index i = 0; i < dimension(); ++i) out[i] = m_z[static_cast<std::size_t>(i) * Width + lane];
    return out;
  }
  /// The tally of one lane (length tally_dimension(); x~ = B y~ for the dual kernel).
  /// \param lane the lane, 0 <= lane < W
  /// \return the lane's tally
  Eigen::VectorXd tally(int lane) const {
    check_lane(lane);
    const Index m = m_kernel->tally_dimension();
    Eigen::VectorXd out(m);
    for (Index i = 0; i < m; ++i) out[i] = m_tally[static_cast<std::size_t>(i) * Width + lane];
    return out;
  }
  /// Interleaved storage: coordinate i of lane c at state_data()[i * W + c].
  /// \return the interleaved state
  const double* state_data() const noexcept { return m_z.data(); }
  /// Interleaved tally: entry k of lane c at tally_data()[k * W + c].
  /// \return the interleaved tally
  const double* tally_data() const noexcept { return m_tally.data(); }

  /// Runs `count` sweeps of the scheme, using `ws` for scratch. No allocation once `ws` is large enough.
  /// \param count the number of sweeps
  /// \param ws the scratch buffers
  void sweep(std::size_t count, SweepWorkspace& ws) {
    ws.reserve(dimension(), Width);
    SweepContext<Kernel, Width> ctx{*m_kernel, m_z.data(), m_tally.data(), m_schedule,   m_rng.data(),
                                    m_noise,   ws,         m_seed,         m_first_chain};
    for (std::size_t s = 0; s < count; ++s) {
      ctx.sweep = m_sweeps;
      m_scheme.template sweep<Kernel, Width>(ctx);
      ++m_sweeps;
    }
  }
  /// Runs `count` sweeps with a workspace owned by the sampler.
  /// \param count the number of sweeps
  void sweep(std::size_t count = 1) {
    if (!m_ws) m_ws = std::make_unique<SweepWorkspace>();
    sweep(count, *m_ws);
  }

 private:
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

  const Kernel* m_kernel;
  Scheme m_scheme;
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
