#pragma once
/// \file sampler.hpp
/// One Gauss–Seidel Gibbs sweep engine over a *site kernel*, the two shipped kernels, scan orders and the
/// per-chain random streams.
///
/// For a Gaussian with precision M the Gibbs update of coordinate i is [eqn:sampling_general]
///
///   z_i <- mu_i + M_ii^{-1/2} eps,   mu_i = -M_ii^{-1} sum_{j != i} M_ij z_j,   eps ~ N(0, 1);
///
/// with eps = 0 it is a Gauss–Seidel step. `GibbsSampler<Kernel, Width>` does the bookkeeping (scan order,
/// random streams, chunked drawing of indices and deviates, prefetching) and asks the kernel for the update
/// of one site. Two kernels ship with the library, both explicitly instantiated in libdualgibbs:
///
/// - `CsrKernel`: any symmetric positive-definite precision in CSR form (the primal Q, an explicit dual R, ...),
///   O(row length) per update;
/// - `DualIncidenceKernel`: the dual precision R = D_sigma + B^T D_s B [eqn:QPNHDual] without forming R, O(1) per
///   edge update with the running tally x~ = B y~ [eqn:sampling_simplified].
///
/// **Lock-step lanes.** A sampler of `Width` W > 1 advances W chains ("lanes") that share one scan schedule (the
/// same site sequence) but draw their own deviates; the state is stored interleaved (coordinate i of lane c at
/// `z[i * W + c]`), so one site update is a short vector operation across lanes. Lanes of one block are *not*
/// independent: see ensemble.hpp (EnsembleOptions::lockstep) for what that does to ensemble statistics. W = 1 is
/// one ordinary chain.
///
/// **Randomness.** Every stream is a xoshiro256++ generator (`ChainEngine`) whose state is derived from
/// (seed, chain index, purpose) by `make_stream`; normal deviates come from Boost.Random's ziggurat
/// `normal_distribution` (`NormalStream`: eight interleaved sub-streams per chain, evaluated eight at a time),
/// uniform indices from Lemire's unbiased multiply-shift. Nothing depends on the standard library's
/// implementation, so a seed gives the same chain everywhere.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::DualIncidenceKernel kernel(model);
/// dualgibbs::GibbsSampler<dualgibbs::DualIncidenceKernel> chain(kernel, dualgibbs::ScanOrder::Random, 42);
/// chain.set_constant_state(1.0);
/// chain.sweep(100);                                  // 100 random sweeps of |E| updates each
/// Eigen::VectorXd y = chain.state(0), x = chain.tally(0);  // y~ and x~ = B y~
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model.hpp>

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

// ---- random streams --------------------------------------------------------------------------------------

/// xoshiro256++ (Blackman and Vigna): a 256-bit-state generator whose every output bit, the low ones included,
/// is strong, as Boost's ziggurat needs (it takes layer and sign from the low 8 bits). Satisfies the standard
/// UniformRandomBitGenerator requirements. Construct it with make_stream().
class ChainEngine {
public:
  using result_type = std::uint64_t;  ///< 64-bit output words
  /// Smallest output, 0.
  static constexpr result_type min() noexcept { return 0; }
  /// Largest output, 2^64 - 1.
  static constexpr result_type max() noexcept { return ~result_type(0); }

  /// \throws std::invalid_argument for the all-zero state (the generator's one fixed point).
  explicit ChainEngine(const std::array<std::uint64_t, 4>& state) : m_s(state) {
    if ((state[0] | state[1] | state[2] | state[3]) == 0)
      throw std::invalid_argument("ChainEngine: the all-zero state is not allowed");
  }

  /// The next output word; advances the state.
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
  const std::array<std::uint64_t, 4>& state() const noexcept { return m_s; }
  /// Same state.
  friend bool operator==(const ChainEngine& a, const ChainEngine& b) noexcept { return a.m_s == b.m_s; }
  /// Different state.
  friend bool operator!=(const ChainEngine& a, const ChainEngine& b) noexcept { return !(a == b); }

private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> m_s;
};

/// What a stream is used for; streams of different purposes never share state.
enum class StreamPurpose : std::uint64_t {
  Schedule = 1,  ///< the scan order of a block (random picks or permutations)
  Noise = 2,     ///< the normal deviates eps of one chain
  Initial = 3    ///< the random initial state of one chain
};

/// The stream of chain `chain` for `purpose` under `seed` (and sub-stream `substream`, see NormalStream). Each of
/// the four state words is a different bijective 64-bit mix of (seed, chain, purpose, substream), so for one seed,
/// purpose and sub-stream distinct chains get distinct states; the streams are then non-overlapping for any
/// practical length (period 2^256 - 1).
DUALGIBBS_EXPORT ChainEngine make_stream(std::uint64_t seed, std::uint64_t chain, StreamPurpose purpose,
                                         std::uint64_t substream = 0) noexcept;

/// Uniform integer in [0, n), n >= 1, by Lemire's multiply-shift with rejection (exactly unbiased).
DUALGIBBS_EXPORT std::uint64_t uniform_below(ChainEngine& rng, std::uint64_t n) noexcept;
/// One N(0, 1) deviate: Boost.Random's ziggurat normal_distribution driven by `rng`.
DUALGIBBS_EXPORT double standard_normal(ChainEngine& rng) noexcept;

/// The N(0, 1) deviates of one chain: kWays = 8 interleaved xoshiro256++ sub-streams, deviate t (counted from
/// construction) being Boost.Random's ziggurat `normal_distribution` drawn on sub-stream t mod 8, where sub-stream
/// k is `make_stream(seed, chain, Noise, k)`. The interleaving lets fill() advance the eight sub-streams and
/// evaluate the ziggurat's common branch (97.2% of draws) as a few vector operations (AVX-512 or AVX2, chosen at
/// run time; a portable scalar path otherwise); a draw that leaves the
/// common branch is redone by Boost itself from the sub-stream's state before the draw, so every deviate is
/// bitwise the one Boost's normal_distribution gives (a test checks this over millions of draws).
class DUALGIBBS_EXPORT NormalStream {
public:
  static constexpr int kWays = 8;  ///< number of interleaved sub-streams

  /// The deviates of chain `chain` under `seed`.
  NormalStream(std::uint64_t seed, std::uint64_t chain) noexcept;
  /// The next deviate.
  double operator()() noexcept;
  /// out[t * stride] = the next `count` deviates, in order.
  void fill(std::size_t count, double* out, std::size_t stride) noexcept;
  /// The deviates of W = `lanes` streams interleaved: out[t * lanes + c] = the next deviate of streams[c], for
  /// t < count. The same bits as streams[c].fill(count, out + c, lanes) for every c, faster: on AVX-512 eight
  /// streams at the same sub-stream are drawn as one vector (deviate t of all eight is one contiguous store, where
  /// fill() with a stride needs a scatter), and the remaining streams two at a time.
  static void fill_lanes(NormalStream* streams, int lanes, std::size_t count, double* out) noexcept;
  /// The current state of sub-stream k, as an engine.
  ChainEngine substream(int k) const;
  /// Sub-stream of the next deviate.
  int next_way() const noexcept { return static_cast<int>(m_next); }

private:
  alignas(64) std::uint64_t m_s[4][kWays];  // state word w of sub-stream k at m_s[w][k]
  unsigned m_next = 0;
};

namespace detail {
/// Selects the implementation of NormalStream::fill (for tests and benchmarks; all give the same bits): "auto" (the
/// best the CPU supports, the default), "scalar", "avx2" or "avx512". Returns the name of the path now in use, or
/// nullptr (and changes nothing) if `name` is unknown or unsupported here. Not thread-safe.
DUALGIBBS_EXPORT const char* select_normal_path(const std::string& name);
/// Storage for the sampler's large arrays (states, tallies, kernel coefficients): blocks of at least 2 MiB are
/// 2 MiB-aligned and, on Linux, marked for transparent huge pages, because updates at random sites of arrays of
/// hundreds of MB otherwise miss the TLB on nearly every access. Smaller blocks come from operator new, 64-byte
/// aligned (a lane row of W <= 8 doubles then never straddles two cache lines).
/// \throws std::bad_alloc when memory runs out.
DUALGIBBS_EXPORT void* allocate_large(std::size_t bytes);
/// Releases a block from allocate_large() of the same size.
DUALGIBBS_EXPORT void deallocate_large(void* p, std::size_t bytes) noexcept;

/// Standard allocator over allocate_large().
template <class T>
struct LargeAllocator {
  using value_type = T;  ///< element type
  LargeAllocator() noexcept = default;
  /// Rebinding copy.
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) noexcept {}
  /// Storage for n elements.
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  /// Releases storage of n elements.
  void deallocate(T* p, std::size_t n) noexcept { deallocate_large(p, n * sizeof(T)); }
  /// All instances are interchangeable.
  friend bool operator==(const LargeAllocator&, const LargeAllocator&) noexcept { return true; }
  /// All instances are interchangeable.
  friend bool operator!=(const LargeAllocator&, const LargeAllocator&) noexcept { return false; }
};
/// A std::vector over LargeAllocator.
template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

/// out[t] = uniform_below(rng, n) for t in [0, count), n >= 1.
DUALGIBBS_EXPORT void fill_uniform_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept;
/// out[0..n) = a uniformly random permutation of 0..n-1 (Fisher–Yates with uniform_below; does not read out).
DUALGIBBS_EXPORT void fill_permutation(ChainEngine& rng, Index n, Index* out) noexcept;

#if defined(__GNUC__) || defined(__clang__)
/// Hint: the line at p will be written soon.
inline void prefetch_write(const void* p) noexcept { __builtin_prefetch(p, 1, 3); }
/// Hint: the line at p will be read soon.
inline void prefetch_read(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }
#else
/// Hint: the line at p will be written soon (no-op on this compiler).
inline void prefetch_write(const void*) noexcept {}
/// Hint: the line at p will be read soon (no-op on this compiler).
inline void prefetch_read(const void*) noexcept {}
#endif
}  // namespace detail

// ---- site kernels ----------------------------------------------------------------------------------------
//
// A site kernel K tells GibbsSampler how to update one coordinate of W interleaved lanes. Required members
// (W is a compile-time lane count; z has dimension() * W entries, tally has tally_dimension() * W):
//
//   Index  dimension() const;                  // n, the number of coordinates
//   Index  tally_dimension() const;            // length of the per-lane auxiliary state (0 if none)
//   double conditional_sd(Index i) const;      // M_ii^{-1/2}
//   template <int W> void conditional_mean(Index i, const double* z, const double* tally, double* mean) const;
//                                              // mean[c] = mu_i of lane c
//   template <int W> void update(Index i, double* z, double* tally, const double* eps) const;
//                                              // z_i <- mu_i + M_ii^{-1/2} eps[c] for every lane c; tally kept
//   template <int W> void prefetch(Index i, const double* z, const double* tally) const;   // cache hint only
//   void prefetch_row(Index i) const;          // cache hint for the kernel's own data of site i
//   template <int W> void rebuild_tally(const double* z, double* tally) const;             // tally from z
//
// Optional: the batched form of update(), which GibbsSampler then calls once per chunk of sites instead of
// looping over update() itself (detail::run_updates_generic, with software prefetching). It must give the same
// bits as the loop:
//
//   template <int W> void run_updates(const Index* sites, std::size_t count, double* z, double* tally,
//                                     const double* eps) const;   // update(sites[t], ..., eps + t * W), t in order
//
// Kernels hold their own copy of the numbers they need (not a reference to the model or matrix).

namespace detail {
/// Prefetch distances of the update loop: state rows `kStatePrefetch` updates ahead, the kernel's own
/// coefficients of a site `kRowPrefetch` updates ahead (they are needed to find the state rows).
constexpr std::size_t kStatePrefetch = 8;
constexpr std::size_t kRowPrefetch = 16;

/// The update loop over any site kernel: update(sites[t]) for t = 0..count-1 with software prefetching.
template <int W, class Kernel>
void run_updates_generic(const Kernel& k, const Index* sites, std::size_t count, double* z, double* tally,
                         const double* eps) noexcept {
  for (std::size_t t = 0; t < std::min(count, kRowPrefetch); ++t) k.prefetch_row(sites[t]);
  for (std::size_t t = 0; t < std::min(count, kStatePrefetch); ++t) k.template prefetch<W>(sites[t], z, tally);
  std::size_t t = 0;
  const std::size_t steady = count > kRowPrefetch ? count - kRowPrefetch : 0;
  for (; t < steady; ++t) {
    k.prefetch_row(sites[t + kRowPrefetch]);
    k.template prefetch<W>(sites[t + kStatePrefetch], z, tally);
    k.template update<W>(sites[t], z, tally, eps + t * W);
  }
  for (; t < count; ++t) {
    if (t + kStatePrefetch < count) k.template prefetch<W>(sites[t + kStatePrefetch], z, tally);
    k.template update<W>(sites[t], z, tally, eps + t * W);
  }
}

/// True when Kernel has the batched member run_updates<W>.
template <class Kernel, int W, class = void>
struct HasRunUpdates : std::false_type {};
template <class Kernel, int W>
struct HasRunUpdates<Kernel, W,
                     std::void_t<decltype(std::declval<const Kernel&>().template run_updates<W>(
                         static_cast<const Index*>(nullptr), std::size_t{0}, static_cast<double*>(nullptr),
                         static_cast<double*>(nullptr), static_cast<const double*>(nullptr)))>> : std::true_type {};

/// Selects the implementation of the shipped kernels' run_updates (for tests and benchmarks; all give the same
/// bits): "auto" (the widest vectors the CPU supports, the default), "scalar" (the baseline instruction set of the
/// build), "avx2" or "avx512". Returns the name of the path now in use, or nullptr (and changes nothing) if `name` is
/// unknown or unsupported here. Not thread-safe.
DUALGIBBS_EXPORT const char* select_update_path(const std::string& name);
}  // namespace detail

/// How much of the positive-definiteness of a matrix CsrKernel verifies.
enum class SpdCheck {
  Auto,      ///< the cheap checks, plus a dense Cholesky factorization when n <= CsrKernel::kDenseCheckMaxSize
  Cheap,     ///< only the O(nnz log d) checks (finite, symmetric, positive diagonal, 2x2 principal minors)
  Cholesky   ///< the cheap checks plus a sparse Cholesky factorization (Eigen, AMD ordering) at any size
};

/// Site kernel for any symmetric positive-definite precision M given in CSR form (full symmetric storage):
/// the primal Q, an explicit dual R, or a user matrix. O(row length) per update, no allocation.
///
/// What is checked at construction (each failure is a std::invalid_argument naming the entry):
/// square and non-empty; every value finite; every diagonal entry present and positive; the pattern and values
/// symmetric (|M_ij - M_ji| <= 1e-12 max(|M_ij|, |M_ji|)); every 2x2 principal minor positive
/// (M_ij^2 < M_ii M_jj). These are necessary for positive definiteness, not sufficient: a full check needs a
/// factorization, done densely when n <= kDenseCheckMaxSize under SpdCheck::Auto, sparsely at any size under
/// SpdCheck::Cholesky, and skipped under SpdCheck::Cheap (a matrix that passes only the cheap checks but is
/// indefinite gives a chain that diverges; it cannot give wrong numbers silently for long).
class DUALGIBBS_EXPORT CsrKernel {
public:
  /// Largest n for which SpdCheck::Auto runs a dense Cholesky check (O(n^3 / 3) flops).
  static constexpr Index kDenseCheckMaxSize = 1000;

  /// \throws std::invalid_argument if `precision` fails the checks above.
  explicit CsrKernel(const SparseMatrix& precision, SpdCheck check = SpdCheck::Auto);

  /// n, the number of coordinates.
  Index dimension() const noexcept { return m_n; }
  /// 0: the CSR kernel keeps no tally.
  Index tally_dimension() const noexcept { return 0; }
  /// M_ii^{-1/2}.
  double conditional_sd(Index i) const noexcept { return m_sd[static_cast<std::size_t>(i)]; }
  /// M_ii.
  double diagonal(Index i) const noexcept { return m_diag[static_cast<std::size_t>(i)]; }

  /// mean[c] = mu_i = -M_ii^-1 sum_{j != i} M_ij z_j of lane c, for W interleaved lanes [eqn:sampling_general].
  /// The terms are added in row order for every W, so a lane of a block reproduces a single chain bit for bit.
  template <int W>
  void conditional_mean(Index i, const double* z, const double*, double* mean) const noexcept {
    for (int c = 0; c < W; ++c) mean[c] = 0.0;
    const std::size_t end = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i) + 1]);
    for (std::size_t p = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i)]); p < end; ++p) {
      const double a = m_coef[p];
      const double* zj = z + static_cast<std::size_t>(m_cols[p]) * W;
      for (int c = 0; c < W; ++c) mean[c] += a * zj[c];
    }
  }

  /// z_i <- mu_i + M_ii^{-1/2} eps[c] in every lane c.
  template <int W>
  void update(Index i, double* z, double* tally, const double* eps) const noexcept {
    double mean[W];
    conditional_mean<W>(i, z, tally, mean);
    const double sd = m_sd[static_cast<std::size_t>(i)];
    double* zi = z + static_cast<std::size_t>(i) * W;
    for (int c = 0; c < W; ++c) zi[c] = mean[c] + sd * eps[c];
  }

  /// Cache hint for the state rows update(i) touches.
  template <int W>
  void prefetch(Index i, const double* z, const double*) const noexcept {
    // A row of W doubles spans W / 8 cache lines (W <= 8: one).
    constexpr std::size_t kLines = W * sizeof(double) > 64 ? W * sizeof(double) / 64 : 1;
    const std::size_t end = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i) + 1]);
    for (std::size_t p = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i)]); p < end; ++p)
      for (std::size_t l = 0; l < kLines; ++l) detail::prefetch_read(z + static_cast<std::size_t>(m_cols[p]) * W + 8 * l);
    for (std::size_t l = 0; l < kLines; ++l) detail::prefetch_write(z + static_cast<std::size_t>(i) * W + 8 * l);
  }
  /// Hint for the index arrays of row i (issued further ahead than prefetch()).
  void prefetch_row(Index i) const noexcept {
    const std::size_t p = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i)]);
    detail::prefetch_read(m_cols.data() + p);
    detail::prefetch_read(m_coef.data() + p);
  }

  /// Nothing to rebuild.
  template <int W>
  void rebuild_tally(const double*, double*) const noexcept {}

  /// update(sites[t]) for t = 0..count-1, bitwise as the loop over update(). For W in {1, 2, 4, 8, 16} it runs
  /// compiled code of the library that works on the W lanes as one vector (AVX-512, AVX2 or the baseline, chosen
  /// at run time; see detail::select_update_path); other widths use the generic loop.
  template <int W>
  void run_updates(const Index* sites, std::size_t count, double* z, double* tally, const double* eps) const noexcept {
    detail::run_updates_generic<W>(*this, sites, count, z, tally, eps);
  }

private:
  Index m_n = 0;
  detail::LargeVector<Index> m_offsets;  // CSR of the off-diagonal part
  detail::LargeVector<Index> m_cols;
  detail::LargeVector<double> m_coef;    // -M_ij / M_ii, so that mu_i = sum_j coef_ij z_j
  std::vector<double> m_diag;
  detail::LargeVector<double> m_sd;
};

/// Site kernel for the dual precision R = D_sigma + B^T D_s B [eqn:QPNHDual] of a (possibly heterogeneous)
/// model, without forming R. The tally x~ = B y~ [eqn:XfromY] (one value per node) is kept up to date, so the
/// update of edge e = (u, v) (u the head, v the tail) is O(1) [eqn:sampling_simplified]:
///
///   sum_{e' != e} R_ee' y_e' = s_u^2 (x~_u - y_e) - s_v^2 (x~_v + y_e),   R_ee = sigma_e^2 + s_u^2 + s_v^2,
///   y_e <- mu_e + R_ee^{-1/2} eps,   then x~_u += d, x~_v -= d with d the change of y_e.
///
/// The tally is maintained incrementally, so it carries rounding drift of order sqrt(updates per node) times
/// the unit roundoff relative to |x~|; GibbsSampler rebuilds it exactly whenever a state is set.
class DUALGIBBS_EXPORT DualIncidenceKernel {
public:
  /// \throws std::invalid_argument if the model has no edges (the dual domain is then empty).
  explicit DualIncidenceKernel(const Model& model);

  /// |E|, the number of coordinates y~_e.
  Index dimension() const noexcept { return static_cast<Index>(m_edges.size()); }
  /// |V|: the tally x~ = B y~.
  Index tally_dimension() const noexcept { return m_num_nodes; }
  /// R_ee^{-1/2}.
  double conditional_sd(Index e) const noexcept { return m_edges[static_cast<std::size_t>(e)].sd; }

  /// mean[c] = mu_e of lane c from the tally x~ (which must equal B y~) [eqn:sampling_simplified].
  template <int W>
  void conditional_mean(Index e, const double* y, const double* x, double* mean) const noexcept {
    // mu_e = -(s_u^2 (x_u - y_e) - s_v^2 (x_v + y_e)) / R_ee = -alpha x_u + beta x_v + (alpha + beta) y_e.
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    const double* ye = y + static_cast<std::size_t>(e) * W;
    const double* xu = x + static_cast<std::size_t>(k.head) * W;
    const double* xv = x + static_cast<std::size_t>(k.tail) * W;
    const double gamma = k.alpha + k.beta;
    for (int c = 0; c < W; ++c) mean[c] = k.beta * xv[c] - k.alpha * xu[c] + gamma * ye[c];
  }

  /// y~_e <- mu_e + R_ee^{-1/2} eps[c] in every lane c, and the tally follows: x~_u += d, x~_v -= d.
  template <int W>
  void update(Index e, double* y, double* x, const double* eps) const noexcept {
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    double* __restrict ye = y + static_cast<std::size_t>(e) * W;
    double* __restrict xu = x + static_cast<std::size_t>(k.head) * W;
    double* __restrict xv = x + static_cast<std::size_t>(k.tail) * W;
    const double gamma = k.alpha + k.beta;
    for (int c = 0; c < W; ++c) {
      const double old = ye[c];
      const double fresh = (k.beta * xv[c] - k.alpha * xu[c] + gamma * old) + k.sd * eps[c];
      const double d = fresh - old;
      ye[c] = fresh;
      xu[c] += d;
      xv[c] -= d;
    }
  }

  /// Cache hint for the rows update(e) touches.
  template <int W>
  void prefetch(Index e, const double* y, const double* x) const noexcept {
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    constexpr std::size_t kLines = W * sizeof(double) > 64 ? W * sizeof(double) / 64 : 1;  // lines per row
    for (std::size_t l = 0; l < kLines; ++l) {
      detail::prefetch_write(y + static_cast<std::size_t>(e) * W + 8 * l);
      detail::prefetch_write(x + static_cast<std::size_t>(k.head) * W + 8 * l);
      detail::prefetch_write(x + static_cast<std::size_t>(k.tail) * W + 8 * l);
    }
  }
  /// Hint for the coefficients of edge e (issued further ahead than prefetch()).
  void prefetch_row(Index e) const noexcept { detail::prefetch_read(m_edges.data() + e); }

  /// update(sites[t]) for t = 0..count-1, bitwise as the loop over update(); vectorized for W in {1, 2, 4, 8, 16}
  /// as CsrKernel::run_updates.
  template <int W>
  void run_updates(const Index* sites, std::size_t count, double* y, double* x, const double* eps) const noexcept {
    detail::run_updates_generic<W>(*this, sites, count, y, x, eps);
  }

  /// x~ = B y~ exactly, for W interleaved lanes.
  template <int W>
  void rebuild_tally(const double* y, double* x) const noexcept {
    for (std::size_t k = 0; k < static_cast<std::size_t>(m_num_nodes) * W; ++k) x[k] = 0.0;
    for (std::size_t e = 0; e < m_edges.size(); ++e) {
      const EdgeCoef& k = m_edges[e];
      for (int c = 0; c < W; ++c) {
        x[static_cast<std::size_t>(k.head) * W + c] += y[e * W + c];
        x[static_cast<std::size_t>(k.tail) * W + c] -= y[e * W + c];
      }
    }
  }

private:
  struct EdgeCoef {  // 32 bytes: two per cache line (gamma = alpha + beta is recomputed, same bits)
    Index head, tail;
    double alpha;  // s_u^2 / R_ee
    double beta;   // s_v^2 / R_ee
    double sd;     // R_ee^{-1/2}
  };
  Index m_num_nodes = 0;
  detail::LargeVector<EdgeCoef> m_edges;
};

/// \cond INTERNAL
// The vectorized run_updates of the shipped kernels, compiled into libdualgibbs (lib/sampler_kernels.cpp).
#define DUALGIBBS_RUN_UPDATES_SPECIALIZE(K, W)                                                              \
  template <>                                                                                              \
  DUALGIBBS_EXPORT void K::run_updates<W>(const Index*, std::size_t, double*, double*, const double*) const noexcept;
DUALGIBBS_RUN_UPDATES_SPECIALIZE(CsrKernel, 1)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(CsrKernel, 2)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(CsrKernel, 4)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(CsrKernel, 8)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(CsrKernel, 16)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(DualIncidenceKernel, 1)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(DualIncidenceKernel, 2)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(DualIncidenceKernel, 4)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(DualIncidenceKernel, 8)
DUALGIBBS_RUN_UPDATES_SPECIALIZE(DualIncidenceKernel, 16)
#undef DUALGIBBS_RUN_UPDATES_SPECIALIZE
/// \endcond

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
// The shipped kernels are compiled into libdualgibbs (lib/sampler_instantiate.cpp).
#define DUALGIBBS_SAMPLER_EXTERN(K)                                   \
  extern template class DUALGIBBS_EXPORT GibbsSampler<K, 1>;          \
  extern template class DUALGIBBS_EXPORT GibbsSampler<K, 2>;          \
  extern template class DUALGIBBS_EXPORT GibbsSampler<K, 4>;          \
  extern template class DUALGIBBS_EXPORT GibbsSampler<K, 8>;          \
  extern template class DUALGIBBS_EXPORT GibbsSampler<K, 16>;
DUALGIBBS_SAMPLER_EXTERN(CsrKernel)
DUALGIBBS_SAMPLER_EXTERN(DualIncidenceKernel)
#undef DUALGIBBS_SAMPLER_EXTERN
/// \endcond

}  // namespace dualgibbs
