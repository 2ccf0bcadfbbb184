#pragma once
/// \file kernels.hpp
/// Site kernels: what one Gibbs update of one coordinate is, for W lock-step lanes.
///
/// For a Gaussian with precision M the Gibbs update of coordinate i is [eqn:sampling_general]
///
///   z_i <- mu_i + M_ii^{-1/2} eps,   mu_i = -M_ii^{-1} sum_{j != i} M_ij z_j,   eps ~ N(0, 1);
///
/// with eps = 0 it is a Gauss–Seidel step. A kernel knows one site's update; the order of the updates and the
/// arithmetic of a sweep belong to the scheme (sampler.hpp). Two kernels ship with the library, both explicitly
/// instantiated in libdualgibbs:
///
/// - `CsrKernel`: any symmetric positive-definite precision in CSR form (the primal Q, an explicit dual R, ...),
///   O(row length) per update;
/// - `DualIncidenceKernel`: the dual precision R = D_sigma + B^T D_s B [eqn:QPNHDual] without forming R, O(1) per
///   edge update with the running tally x~ = B y~ [eqn:sampling_simplified].
///
/// `DUALGIBBS_SHIPPED_KERNELS(X)` is the one list of shipped kernels (X(CsrKernel) X(DualIncidenceKernel)), and
/// `DUALGIBBS_SHIPPED_WIDTHS(X, K)` the lane widths each is compiled for.

#include <dualgibbs/core/memory.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dualgibbs {

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
// Optional: the commit hook that schemes with their own arithmetic (SymmetricSweep with omega != 1) need:
//
//   template <int W> void set_site(Index i, double* z, double* tally, const double* value) const;
//                                              // z_i <- value[c] for every lane c; tally kept
//
// Optional: the batched form of update(), which GibbsSampler then calls once per chunk of sites instead of
// looping over update() itself (detail::run_updates_generic, with software prefetching). It must give the same
// bits as the loop:
//
//   template <int W> void run_updates(const Index* sites, std::size_t count, double* z, double* tally,
//                                     const double* eps) const;   // update(sites[t], ..., eps + t * W), t in order
//
// Optional: the batched relaxed update of schemes with relaxation (detail::relaxed_updates), same bits as its loop
// over conditional_mean and set_site:
//
//   template <int W> void run_relaxed_updates(const Index* sites, std::size_t count, double* z, double* tally,
//                                             const double* eps, double omega, double noise_scale) const;
//                       // z_i <- ((1 - omega) z_i + omega mu_i) + (noise_scale M_ii^{-1/2}) eps, sites in order
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

/// True when Kernel has the batched member run_relaxed_updates<W>.
template <class Kernel, int W, class = void>
struct HasRunRelaxedUpdates : std::false_type {};
template <class Kernel, int W>
struct HasRunRelaxedUpdates<Kernel, W,
                            std::void_t<decltype(std::declval<const Kernel&>().template run_relaxed_updates<W>(
                                static_cast<const Index*>(nullptr), std::size_t{0}, static_cast<double*>(nullptr),
                                static_cast<double*>(nullptr), static_cast<const double*>(nullptr), 1.0, 1.0))>>
    : std::true_type {};

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

/// Lets the shipped CSR loops use the compact layouts of a homogeneous kernel (CsrKernel::uniform_coefficients(),
/// the default) or forces them onto the general per-entry arrays (false; for tests and benchmarks, both give the same
/// bits). Returns the previous setting. Not thread-safe.
DUALGIBBS_EXPORT bool set_compact_csr(bool enabled) noexcept;
}  // namespace detail

/// How much of the positive-definiteness of a matrix CsrKernel verifies.
enum class SpdCheck {
  Auto,     ///< the cheap checks, plus a dense Cholesky factorization when n <= CsrKernel::kDenseCheckMaxSize
  Cheap,    ///< only the O(nnz log d) checks (finite, symmetric, positive diagonal, 2x2 principal minors)
  Cholesky  ///< the cheap checks plus a sparse Cholesky factorization (Eigen, AMD ordering) at any size
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

  /// \param precision the precision M, CSR with full symmetric storage
  /// \param check how much of positive definiteness to verify
  /// \throws std::invalid_argument if `precision` fails the checks above.
  explicit CsrKernel(const SparseMatrix& precision, SpdCheck check = SpdCheck::Auto);
  /// A kernel for N(mu, M^-1) with M mu = rhs (the canonical vector h of Model::canonical_vector()): the
  /// conditional mean gains the data term, mu_i = (h_i - sum_{j != i} M_ij z_j) / M_ii. Noise-free sweeps are then
  /// Gauss–Seidel for M z = h. \throws std::invalid_argument as above, or unless rhs has n finite entries.
  /// \param precision the precision M, CSR with full symmetric storage
  /// \param rhs the right-hand side h, length n
  /// \param check how much of positive definiteness to verify
  CsrKernel(const SparseMatrix& precision, const Eigen::VectorXd& rhs, SpdCheck check = SpdCheck::Auto);

  /// n, the number of coordinates.
  /// \return n
  Index dimension() const noexcept { return m_n; }
  /// 0: the CSR kernel keeps no tally.
  /// \return 0
  Index tally_dimension() const noexcept { return 0; }
  /// M_ii^{-1/2}.
  /// \param i the site
  /// \return M_ii^{-1/2}
  double conditional_sd(Index i) const noexcept { return m_sd[static_cast<std::size_t>(i)]; }
  /// M_ii.
  /// \param i the site
  /// \return M_ii
  double diagonal(Index i) const noexcept { return m_diag[static_cast<std::size_t>(i)]; }
  /// True if the kernel was given a right-hand side h (a non-zero-mean target).
  /// \return true with a right-hand side
  bool has_rhs() const noexcept { return !m_shift.empty(); }
  /// True when every stored off-diagonal coefficient -M_ij / M_ii is the same number (exact equality; vacuously
  /// without off-diagonal entries), as in a homogeneous model (one s, one sigma) on a regular graph: the shipped loops
  /// (run_updates, run_relaxed_updates) then multiply by that one constant instead of reading a coefficient per entry,
  /// with the same bits.
  /// \return true for one common coefficient
  bool uniform_coefficients() const noexcept { return m_uniform_coef; }
  /// True when every M_ii^{-1/2} is the same number: the compact loops then read no per-site sd either.
  /// \return true for one common M_ii^{-1/2}
  bool uniform_sd() const noexcept { return m_uniform_sd; }
  /// d when every row has d stored off-diagonal entries (a regular graph's Q), else -1: the compact loops then find
  /// row i's entries at i * d without the row offsets.
  /// \return d, or -1
  Index row_length() const noexcept { return m_row_length; }

  /// mean[c] = mu_i = M_ii^-1 (h_i - sum_{j != i} M_ij z_j) of lane c, for W interleaved lanes
  /// [eqn:sampling_general] (h = 0 without a right-hand side). The sum starts from h_i / M_ii (from 0 without a
  /// right-hand side, the zero-mean bits) and adds the terms in row order for every W, so a lane of a block
  /// reproduces a single chain bit for bit.
  /// \param i the site
  /// \param z the interleaved state
  /// \param mean where the W conditional means go
  template <int W>
  void conditional_mean(Index i, const double* z, const double*, double* mean) const noexcept {
    for (int c = 0; c < W; ++c) mean[c] = 0.0;
    if (!m_shift.empty()) {
      const double start = m_shift[static_cast<std::size_t>(i)];  // 0 + start, as the vectorized loop computes it
      for (int c = 0; c < W; ++c) mean[c] += start;
    }
    const std::size_t end = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i) + 1]);
    for (std::size_t p = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i)]); p < end; ++p) {
      const double a = m_coef[p];
      const double* zj = z + static_cast<std::size_t>(m_cols[p]) * W;
      for (int c = 0; c < W; ++c) mean[c] += a * zj[c];
    }
  }

  /// z_i <- mu_i + M_ii^{-1/2} eps[c] in every lane c.
  /// \param i the site
  /// \param z the interleaved state
  /// \param tally the interleaved tally (none for this kernel)
  /// \param eps the W deviates
  template <int W>
  void update(Index i, double* z, double* tally, const double* eps) const noexcept {
    double mean[W];
    conditional_mean<W>(i, z, tally, mean);
    const double sd = m_sd[static_cast<std::size_t>(i)];
    double* zi = z + static_cast<std::size_t>(i) * W;
    for (int c = 0; c < W; ++c) zi[c] = mean[c] + sd * eps[c];
  }

  /// z_i <- value[c] in every lane c (no tally).
  /// \param i the site
  /// \param z the interleaved state
  /// \param value the W new values
  template <int W>
  void set_site(Index i, double* z, double*, const double* value) const noexcept {
    double* zi = z + static_cast<std::size_t>(i) * W;
    for (int c = 0; c < W; ++c) zi[c] = value[c];
  }

  /// Cache hint for the state rows update(i) touches.
  /// \param i the site
  /// \param z the interleaved state
  template <int W>
  void prefetch(Index i, const double* z, const double*) const noexcept {
    // A row of W doubles spans W / 8 cache lines (W <= 8: one).
    constexpr std::size_t kLines = W * sizeof(double) > 64 ? W * sizeof(double) / 64 : 1;
    const std::size_t end = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i) + 1]);
    for (std::size_t p = static_cast<std::size_t>(m_offsets[static_cast<std::size_t>(i)]); p < end; ++p)
      for (std::size_t l = 0; l < kLines; ++l)
        detail::prefetch_read(z + static_cast<std::size_t>(m_cols[p]) * W + 8 * l);
    for (std::size_t l = 0; l < kLines; ++l) detail::prefetch_write(z + static_cast<std::size_t>(i) * W + 8 * l);
  }
  /// Hint for the index arrays of row i (issued further ahead than prefetch()).
  /// \param i the site
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
  /// \param sites the sites to update, in order
  /// \param count the number of sites
  /// \param z the interleaved state
  /// \param tally the interleaved tally (none for this kernel)
  /// \param eps the count x W deviates, eps[t * W + c] for site t of lane c
  template <int W>
  void run_updates(const Index* sites, std::size_t count, double* z, double* tally, const double* eps) const noexcept {
    detail::run_updates_generic<W>(*this, sites, count, z, tally, eps);
  }

  /// Relaxed updates of sites[0..count) in order (the SSOR schemes' half-sweeps, detail::relaxed_updates):
  /// z_i <- ((1 - omega) z_i + omega mu_i) + (noise_scale M_ii^{-1/2}) eps[t * W + c] in every lane c, bitwise as
  /// the loop over conditional_mean and set_site. For W in {1, 2, 4, 8, 16} it runs the library's vector code
  /// (the paths of run_updates), other widths the loop here.
  /// \param sites the sites to update, in order
  /// \param count the number of sites
  /// \param z the interleaved state
  /// \param tally the interleaved tally (none for this kernel)
  /// \param eps the count x W deviates, eps[t * W + c] for site t of lane c
  /// \param omega the relaxation, in (0, 2)
  /// \param noise_scale the factor of the deviates
  template <int W>
  void run_relaxed_updates(const Index* sites, std::size_t count, double* z, double* tally, const double* eps,
                           double omega, double noise_scale) const noexcept {
    const double keep = 1.0 - omega;
    for (std::size_t t = 0; t < count; ++t) {
      const Index i = sites[t];
      double* zi = z + static_cast<std::size_t>(i) * W;
      const double sd = noise_scale * conditional_sd(i);
      double fresh[W];
      conditional_mean<W>(i, z, tally, fresh);
      for (int c = 0; c < W; ++c) fresh[c] = keep * zi[c] + omega * fresh[c] + sd * eps[t * W + c];
      set_site<W>(i, z, tally, fresh);
    }
  }

 private:
  void find_compact_layout();

  Index m_n = 0;
  detail::LargeVector<Index> m_offsets;  // CSR of the off-diagonal part
  detail::LargeVector<Index> m_cols;
  detail::LargeVector<double> m_coef;  // -M_ij / M_ii, so that mu_i = sum_j coef_ij z_j
  std::vector<double> m_diag;
  detail::LargeVector<double> m_sd;
  detail::LargeVector<double> m_shift;  // h_i / M_ii; empty without a right-hand side (the zero-mean loop)
  // The compact layout of a homogeneous kernel, found once at construction by exact equality (the general arrays
  // above stay, for the header's loops and for detail::set_compact_csr(false)).
  bool m_uniform_coef = false;  // every m_coef entry equals m_common_coef
  bool m_uniform_sd = false;    // every m_sd entry equals m_sd[0]
  double m_common_coef = 0.0;
  Index m_row_length = -1;  // d when m_offsets[i] == i * d for every i, else -1
};

/// Site kernel for the dual precision R = D_sigma + B^T D_s B [eqn:QPNHDual] of a (possibly heterogeneous)
/// model, without forming R. The tally x~ = B y~ [eqn:XfromY] (one value per node) is kept up to date, so the
/// update of edge e = (u, v) (u the head, v the tail) is O(1) [eqn:sampling_simplified]:
///
///   sum_{e' != e} R_ee' y_e' = s_u^2 (x~_u - y_e) - s_v^2 (x~_v + y_e),   R_ee = sigma_e^2 + s_u^2 + s_v^2,
///   y_e <- mu_e + R_ee^{-1/2} eps,   then x~_u += d, x~_v -= d with d the change of y_e.
///
/// With a weighted, signed incidence (Model::unit_incidence() false: b_u = B[u,e], b_v = B[v,e]) the same
/// update reads
///
///   sum_{e' != e} R_ee' y_e' = b_u s_u^2 (x~_u - b_u y_e) + b_v s_v^2 (x~_v - b_v y_e),
///   R_ee = sigma_e^2 + b_u^2 s_u^2 + b_v^2 s_v^2,   then x~_u += b_u d, x~_v += b_v d,
///
/// still O(1); a unit incidence keeps the loop above and its bits. A signed unit incidence (every |b| = 1, as
/// from a diagonally dominant precision matrix, d = 1) keeps the unit incidence's 32-byte record: the signs of
/// b_u and b_v are those of alpha and -beta, and gamma = |alpha| + |beta| (the unit incidence's alpha + beta).
///
/// The tally is maintained incrementally, so it carries rounding drift of order sqrt(updates per node) times
/// the unit roundoff relative to |x~|; GibbsSampler rebuilds it exactly whenever a state is set.
class DUALGIBBS_EXPORT DualIncidenceKernel {
 public:
  /// \param model the model; the kernel copies what it needs
  /// \throws std::invalid_argument if the model has no edges (the dual domain is then empty).
  explicit DualIncidenceKernel(const Model& model);
  /// The kernel of some of `whole`'s edges over some of its nodes (one part of a graph split over a chain group,
  /// partition.hpp): local edge t is whole's edge edges[t], local node l whole's node nodes[l]. Each edge keeps
  /// whole's coefficients and the kernel whole's update path (unit, signed, weighted, homogeneous), so an update reads
  /// and writes the same numbers with the same arithmetic as whole's update of that edge.
  /// \param whole the kernel of the whole model
  /// \param edges whole's edges, increasing
  /// \param nodes whole's nodes, increasing; both ends of every edge in `edges` among them
  /// \throws std::invalid_argument for an empty or unsorted list, an id outside whole, or an end missing from `nodes`.
  DualIncidenceKernel(const DualIncidenceKernel& whole, const std::vector<Index>& edges,
                      const std::vector<Index>& nodes);

  /// |E|, the number of coordinates y~_e.
  /// \return |E|
  Index dimension() const noexcept { return static_cast<Index>(m_edges.size()); }
  /// |V|: the tally x~ = B y~.
  /// \return |V|
  Index tally_dimension() const noexcept { return m_num_nodes; }
  /// R_ee^{-1/2}.
  /// \param e the edge
  /// \return R_ee^{-1/2}
  double conditional_sd(Index e) const noexcept { return m_edges[static_cast<std::size_t>(e)].sd; }
  /// True when every edge has the same coefficients alpha_e, beta_e and R_ee^{-1/2} (a homogeneous model: one s and
  /// one sigma): run_updates then reads 8 bytes per edge (its ends) instead of 32, with the same bits.
  /// \return true for one common set of coefficients
  bool uniform_coefficients() const noexcept { return !m_ends.empty(); }
  /// True for a weighted incidence with some |b| != 1 (the general form of a factor-width-2 precision): the loops
  /// read one 64-byte record per edge.
  /// \return true for the 64-byte weighted records
  bool weighted() const noexcept { return !m_weighted.empty(); }
  /// True for a signed unit incidence, not the unit one: every |B[u,e]| = 1 with some edge's signs other than +1 at
  /// the head and -1 at the tail. The loops read the unit incidence's 32-byte record per edge.
  /// \return true for a signed unit incidence
  bool signed_unit() const noexcept { return m_signed; }

  /// mean[c] = mu_e of lane c from the tally x~ (which must equal B y~) [eqn:sampling_simplified].
  /// \param e the edge
  /// \param y the interleaved state y~
  /// \param x the interleaved tally x~
  /// \param mean where the W conditional means go
  template <int W>
  void conditional_mean(Index e, const double* y, const double* x, double* mean) const noexcept {
    // mu_e = -(s_u^2 (x_u - y_e) - s_v^2 (x_v + y_e)) / R_ee = -alpha x_u + beta x_v + (alpha + beta) y_e.
    // Weighted: alpha = b_u s_u^2 / R_ee, beta = -b_v s_v^2 / R_ee, gamma = (b_u^2 s_u^2 + b_v^2 s_v^2) / R_ee.
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    const double* ye = y + static_cast<std::size_t>(e) * W;
    const double* xu = x + static_cast<std::size_t>(k.head) * W;
    const double* xv = x + static_cast<std::size_t>(k.tail) * W;
    const double gamma = !m_weighted.empty() ? m_weighted[static_cast<std::size_t>(e)].gamma
                         : m_signed          ? signed_gamma(k)
                                             : k.alpha + k.beta;
    for (int c = 0; c < W; ++c) mean[c] = k.beta * xv[c] - k.alpha * xu[c] + gamma * ye[c];
  }

  /// y~_e <- mu_e + R_ee^{-1/2} eps[c] in every lane c, and the tally follows: x~_u += d, x~_v -= d.
  /// \param e the edge
  /// \param y the interleaved state y~
  /// \param x the interleaved tally x~
  /// \param eps the W deviates
  template <int W>
  void update(Index e, double* y, double* x, const double* eps) const noexcept {
    if (!m_weighted.empty()) {
      const WeightedCoef& k = m_weighted[static_cast<std::size_t>(e)];
      double* __restrict ye = y + static_cast<std::size_t>(e) * W;
      double* __restrict xu = x + static_cast<std::size_t>(k.head) * W;
      double* __restrict xv = x + static_cast<std::size_t>(k.tail) * W;
      for (int c = 0; c < W; ++c) {
        const double old = ye[c];
        const double fresh = (k.beta * xv[c] - k.alpha * xu[c] + k.gamma * old) + k.sd * eps[c];
        const double d = fresh - old;
        ye[c] = fresh;
        xu[c] += k.head_weight * d;
        xv[c] += k.tail_weight * d;
      }
      return;
    }
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    double* __restrict ye = y + static_cast<std::size_t>(e) * W;
    double* __restrict xu = x + static_cast<std::size_t>(k.head) * W;
    double* __restrict xv = x + static_cast<std::size_t>(k.tail) * W;
    if (m_signed) {
      const double gamma = signed_gamma(k), bu = head_sign(k), bv = tail_sign(k);
      for (int c = 0; c < W; ++c) {
        const double old = ye[c];
        const double fresh = (k.beta * xv[c] - k.alpha * xu[c] + gamma * old) + k.sd * eps[c];
        const double d = fresh - old;
        ye[c] = fresh;
        xu[c] += bu * d;
        xv[c] += bv * d;
      }
      return;
    }
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

  /// y~_e <- value[c] in every lane c, and the tally follows: x~_u += d, x~_v -= d with d = value - y~_e.
  /// \param e the edge
  /// \param y the interleaved state y~
  /// \param x the interleaved tally x~
  /// \param value the W new values
  template <int W>
  void set_site(Index e, double* y, double* x, const double* value) const noexcept {
    const EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    double* ye = y + static_cast<std::size_t>(e) * W;
    double* xu = x + static_cast<std::size_t>(k.head) * W;
    double* xv = x + static_cast<std::size_t>(k.tail) * W;
    if (!m_weighted.empty()) {
      const WeightedCoef& w = m_weighted[static_cast<std::size_t>(e)];
      for (int c = 0; c < W; ++c) {
        const double d = value[c] - ye[c];
        ye[c] = value[c];
        xu[c] += w.head_weight * d;
        xv[c] += w.tail_weight * d;
      }
      return;
    }
    if (m_signed) {
      const double bu = head_sign(k), bv = tail_sign(k);
      for (int c = 0; c < W; ++c) {
        const double d = value[c] - ye[c];
        ye[c] = value[c];
        xu[c] += bu * d;
        xv[c] += bv * d;
      }
      return;
    }
    for (int c = 0; c < W; ++c) {
      const double d = value[c] - ye[c];
      ye[c] = value[c];
      xu[c] += d;
      xv[c] -= d;
    }
  }

  /// Cache hint for the rows update(e) touches.
  /// \param e the edge
  /// \param y the interleaved state y~
  /// \param x the interleaved tally x~
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
  /// \param e the edge
  void prefetch_row(Index e) const noexcept { detail::prefetch_read(m_edges.data() + e); }

  /// update(sites[t]) for t = 0..count-1, bitwise as the loop over update(); vectorized for W in {1, 2, 4, 8, 16}
  /// as CsrKernel::run_updates.
  /// \param sites the edges to update, in order
  /// \param count the number of edges
  /// \param y the interleaved state y~
  /// \param x the interleaved tally x~
  /// \param eps the count x W deviates, eps[t * W + c] for site t of lane c
  template <int W>
  void run_updates(const Index* sites, std::size_t count, double* y, double* x, const double* eps) const noexcept {
    detail::run_updates_generic<W>(*this, sites, count, y, x, eps);
  }

  /// x~ = B y~ exactly, for W interleaved lanes.
  /// \param y the interleaved state y~
  /// \param x where the interleaved tally goes
  template <int W>
  void rebuild_tally(const double* y, double* x) const noexcept {
    for (std::size_t k = 0; k < static_cast<std::size_t>(m_num_nodes) * W; ++k) x[k] = 0.0;
    if (!m_weighted.empty()) {
      for (std::size_t e = 0; e < m_weighted.size(); ++e) {
        const WeightedCoef& k = m_weighted[e];
        for (int c = 0; c < W; ++c) {
          x[static_cast<std::size_t>(k.head) * W + c] += k.head_weight * y[e * W + c];
          x[static_cast<std::size_t>(k.tail) * W + c] += k.tail_weight * y[e * W + c];
        }
      }
      return;
    }
    if (m_signed) {
      for (std::size_t e = 0; e < m_edges.size(); ++e) {
        const EdgeCoef& k = m_edges[e];
        const double bu = head_sign(k), bv = tail_sign(k);
        for (int c = 0; c < W; ++c) {
          x[static_cast<std::size_t>(k.head) * W + c] += bu * y[e * W + c];
          x[static_cast<std::size_t>(k.tail) * W + c] += bv * y[e * W + c];
        }
      }
      return;
    }
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
    double alpha;  // s_u^2 / R_ee; b_u s_u^2 / R_ee for a signed or weighted incidence
    double beta;   // s_v^2 / R_ee; -b_v s_v^2 / R_ee for a signed or weighted incidence
    double sd;     // R_ee^{-1/2}
  };
  // A signed unit incidence's b_u, b_v and gamma = (s_u^2 + s_v^2) / R_ee, from its record (alpha and beta are
  // never zero there: the constructor checks).
  static double head_sign(const EdgeCoef& k) noexcept { return std::copysign(1.0, k.alpha); }
  static double tail_sign(const EdgeCoef& k) noexcept { return -std::copysign(1.0, k.beta); }
  static double signed_gamma(const EdgeCoef& k) noexcept { return std::fabs(k.alpha) + std::fabs(k.beta); }
  struct EdgeEnds {  // 8 bytes: eight per cache line
    Index head, tail;
  };
  struct alignas(64) WeightedCoef {  // one cache line per edge of a weighted incidence
    Index head, tail;
    double alpha;        // b_u s_u^2 / R_ee
    double beta;         // -b_v s_v^2 / R_ee
    double gamma;        // (b_u^2 s_u^2 + b_v^2 s_v^2) / R_ee
    double sd;           // R_ee^{-1/2}
    double head_weight;  // b_u = B[u,e]
    double tail_weight;  // b_v = B[v,e]
  };
  Index m_num_nodes = 0;
  detail::LargeVector<EdgeCoef> m_edges;
  // When every edge has the same alpha, beta and sd (a homogeneous model: one s and one sigma), run_updates reads
  // only the edges' ends, 8 instead of 32 bytes per edge, and the coefficients from m_edges[0]: the same numbers,
  // hence the same bits, with a quarter of the kernel's memory traffic. Empty otherwise.
  detail::LargeVector<EdgeEnds> m_ends;
  // A weighted incidence's coefficients, the form its loops read (m_edges then holds the same alpha, beta and sd).
  // Empty for a unit or signed unit incidence.
  detail::LargeVector<WeightedCoef> m_weighted;
  bool m_signed = false;  // a signed unit incidence: m_edges alone, with the signs in alpha and beta
};

/// The one list of shipped kernels: X(K) for every site kernel compiled into libdualgibbs. Used for the explicit
/// instantiations and specializations below, the sampler's and the ensemble's.
#define DUALGIBBS_SHIPPED_KERNELS(X) X(CsrKernel) X(DualIncidenceKernel)
/// The lock-step widths every shipped kernel is compiled for: X(K, W) for each.
#define DUALGIBBS_SHIPPED_WIDTHS(X, K) X(K, 1) X(K, 2) X(K, 4) X(K, 8) X(K, 16)

/// \cond INTERNAL
// The vectorized run_updates of the shipped kernels, compiled into libdualgibbs (lib/sampling/kernels_simd.cpp).
#define DUALGIBBS_RUN_UPDATES_SPECIALIZE(K, W) \
  template <>                                  \
  DUALGIBBS_EXPORT void K::run_updates<W>(const Index*, std::size_t, double*, double*, const double*) const noexcept;
#define DUALGIBBS_RUN_UPDATES_SPECIALIZE_ALL(K) DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_RUN_UPDATES_SPECIALIZE, K)
DUALGIBBS_SHIPPED_KERNELS(DUALGIBBS_RUN_UPDATES_SPECIALIZE_ALL)
#undef DUALGIBBS_RUN_UPDATES_SPECIALIZE_ALL
#undef DUALGIBBS_RUN_UPDATES_SPECIALIZE
// The vectorized run_relaxed_updates of the CSR kernel (lib/sampling/kernels_simd.cpp).
#define DUALGIBBS_RUN_RELAXED_SPECIALIZE(K, W)                                                                        \
  template <>                                                                                                         \
  DUALGIBBS_EXPORT void K::run_relaxed_updates<W>(const Index*, std::size_t, double*, double*, const double*, double, \
                                                  double) const noexcept;
DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_RUN_RELAXED_SPECIALIZE, CsrKernel)
#undef DUALGIBBS_RUN_RELAXED_SPECIALIZE
/// \endcond

}  // namespace dualgibbs
