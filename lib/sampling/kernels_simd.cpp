// The hot loops of the shipped site kernels: run_updates<W> of CsrKernel and DualIncidenceKernel, with the W
// lock-step lanes of a site held in one GCC vector (vector_size(8 W)). Each loop is compiled three times, for the
// build's baseline instruction set, for AVX2 and for AVX-512F (function-level target attributes, so the library
// stays portable), and the widest the CPU supports is chosen at run time.
//
// Same bits on every path: the vector code performs, lane by lane, exactly the IEEE operations of the scalar
// update() in the header, in the same order, and the library is compiled with -ffp-contract=off, so no path fuses
// a multiply and an add. test_sampler checks every available path against update() bit for bit.
#include <dualgibbs/sampling/sampler.hpp>

#include <cmath>
#include <string>

namespace dualgibbs {

namespace {

// ---- W lanes as one vector -------------------------------------------------------------------------------

template <int W>
struct LaneVector;
template <>
struct LaneVector<1> {
  using type = double;
};
template <>
struct LaneVector<2> {
  typedef double type __attribute__((vector_size(2 * sizeof(double))));
};
template <>
struct LaneVector<4> {
  typedef double type __attribute__((vector_size(4 * sizeof(double))));
};
template <>
struct LaneVector<8> {
  typedef double type __attribute__((vector_size(8 * sizeof(double))));
};
template <>
struct LaneVector<16> {
  typedef double type __attribute__((vector_size(16 * sizeof(double))));
};

// Cache lines spanned by one row of W doubles (rows are W-aligned within 64-byte aligned arrays).
template <int W>
constexpr std::size_t kLines = W * sizeof(double) > 64 ? W * sizeof(double) / 64 : 1;

template <int W>
[[gnu::always_inline]] inline void prefetch_row_w(const double* p) noexcept {
  for (std::size_t l = 0; l < kLines<W>; ++l) detail::prefetch_write(p + 8 * l);
}

// Narrowest W whose loop prefetches the state rows of the site kStatePrefetch updates ahead (the kernel's own data of
// the site kRowPrefetch ahead is prefetched at every W). Measured on AMD EPYC Zen 4 (docs/sampler.md section 8b,
// 100x100 torus, random scan, CPU time of the same run): below these widths the state of a block is a few hundred KB,
// mostly in L2, the hardware finds the rows in time, and the prefetch loop's instructions (one load and prefetch per
// row entry) cost more than they save: without it the CSR loop ran 1.18x (W = 1), 1.20x (2), 1.12x (4) and 1.06x (8)
// faster, the dual loop 1.07x (W = 1, both with compact edges), about even at W = 4, 0.95x at W = 8; at W = 16 both
// were even.
constexpr int kDualStatePrefetchFrom = 8;
constexpr int kCsrStatePrefetchFrom = 16;
// The dual loop prefetches the state rows at every width when the block's state (y and x) exceeds this many bytes:
// a random edge's three rows are then mostly cache misses, whose latency the prefetch hides. Measured on the same
// CPU (docs/sampler.md section 8b), 1000x1000 torus (24 MB of state per chain), random scan: 1.16x at W = 1, 1.18x at
// W = 4. The CSR loop's general layout keeps its width rule: its state prefetch is a loop over the row, and on the
// same torus (8 MB) it was 0.95x at W = 1 and W = 4. Its compact layouts (CompactRows, a homogeneous model) follow the
// dual's rule: with the row's column indices the only kernel data, the prefetch ran 1.2x faster at W = 4 and about
// 1.1x at W = 2 and 8, even at W = 1 (same torus, CPU time, loaded machine; docs/sampler.md section 8b).
constexpr std::size_t kLargeStateBytes = std::size_t{4} << 20;
template <int W>
bool large_state(std::size_t values) noexcept {
  return values * W * sizeof(double) > kLargeStateBytes;
}

// ---- the dual kernel [eqn:sampling_simplified] ----
// Where the loop finds an edge's ends and coefficients: PerEdge reads both from one 32-byte record per edge;
// Uniform (a homogeneous model) reads 8-byte ends and one coefficient record shared by every edge. A signed unit
// incidence reads the 32-byte record with the signs of b_u, b_v in those of alpha and -beta; a weighted incidence
// reads one 64-byte record per edge with gamma and the weights b_u, b_v.
enum class Incidence { Unit, Signed, Weighted };
template <class Coef, Incidence I = Incidence::Unit>
struct PerEdge {
  static constexpr Incidence kIncidence = I;
  const Coef* edges;
  const Coef& ends(Index e) const noexcept { return edges[e]; }
  const Coef& coef(const Coef& record) const noexcept { return record; }  // the record ends() returned
};
template <class Ends, class Coef>
struct Uniform {
  static constexpr Incidence kIncidence = Incidence::Unit;
  const Ends* edges;
  Coef common;  // a copy: the loop's own, kept in registers (the stores to y and x cannot alias it)
  const Ends& ends(Index e) const noexcept { return edges[e]; }
  const Coef& coef(const Ends&) const noexcept { return common; }
};

// For edge e = (u, v): y_e <- ((beta x_v - alpha x_u) + (alpha + beta) y_e) + sd eps, x_u += d, x_v -= d with d the
// change of y_e, exactly as DualIncidenceKernel::update.
template <int W, bool PrefetchState, class Edges>
[[gnu::always_inline]] inline void dual_loop(const Edges& edges_in, const Index* sites, std::size_t count, double* y,
                                             double* x, const double* eps) noexcept {
  using V = typename LaneVector<W>::type;
  const Edges edges = edges_in;  // a local copy, so that Uniform's coefficients are loaded once, not per update
  auto prefetch_state = [&](Index e) {
    const auto& k = edges.ends(e);
    prefetch_row_w<W>(y + static_cast<std::size_t>(e) * W);
    prefetch_row_w<W>(x + static_cast<std::size_t>(k.head) * W);
    prefetch_row_w<W>(x + static_cast<std::size_t>(k.tail) * W);
  };
  auto update = [&](std::size_t t) {
    const Index e = sites[t];
    const auto& ends = edges.ends(e);
    const auto& k = edges.coef(ends);
    double* py = y + static_cast<std::size_t>(e) * W;
    double* pu = x + static_cast<std::size_t>(ends.head) * W;
    double* pv = x + static_cast<std::size_t>(ends.tail) * W;
    V old, xu, xv, ep;
    std::memcpy(&old, py, sizeof(V));
    std::memcpy(&xu, pu, sizeof(V));
    std::memcpy(&xv, pv, sizeof(V));
    std::memcpy(&ep, eps + t * W, sizeof(V));
    if constexpr (Edges::kIncidence == Incidence::Weighted) {  // x~_u += b_u d, x~_v += b_v d, as update()
      const V fresh = (k.beta * xv - k.alpha * xu + k.gamma * old) + k.sd * ep;
      const V d = fresh - old;
      xu += k.head_weight * d;
      xv += k.tail_weight * d;
      std::memcpy(py, &fresh, sizeof(V));
    } else if constexpr (Edges::kIncidence == Incidence::Signed) {  // b_u, b_v = +-1 and gamma, as update()
      const double gamma = std::fabs(k.alpha) + std::fabs(k.beta);
      const double bu = std::copysign(1.0, k.alpha), bv = -std::copysign(1.0, k.beta);
      const V fresh = (k.beta * xv - k.alpha * xu + gamma * old) + k.sd * ep;
      const V d = fresh - old;
      xu += bu * d;
      xv += bv * d;
      std::memcpy(py, &fresh, sizeof(V));
    } else {
      const double gamma = k.alpha + k.beta;
      const V fresh = (k.beta * xv - k.alpha * xu + gamma * old) + k.sd * ep;
      const V d = fresh - old;
      xu += d;
      xv -= d;
      std::memcpy(py, &fresh, sizeof(V));
    }
    std::memcpy(pu, &xu, sizeof(V));
    std::memcpy(pv, &xv, sizeof(V));
  };
  for (std::size_t t = 0; t < std::min(count, detail::kRowPrefetch); ++t) detail::prefetch_read(&edges.ends(sites[t]));
  if constexpr (PrefetchState)
    for (std::size_t t = 0; t < std::min(count, detail::kStatePrefetch); ++t) prefetch_state(sites[t]);
  // The bulk without the bounds tests of the prefetches (kRowPrefetch >= kStatePrefetch), then the last updates.
  static_assert(detail::kRowPrefetch >= detail::kStatePrefetch, "the row prefetch runs ahead of the state prefetch");
  const std::size_t bulk = count > detail::kRowPrefetch ? count - detail::kRowPrefetch : 0;
  std::size_t t = 0;
  for (; t < bulk; ++t) {
    detail::prefetch_read(&edges.ends(sites[t + detail::kRowPrefetch]));
    if constexpr (PrefetchState) prefetch_state(sites[t + detail::kStatePrefetch]);
    update(t);
  }
  for (; t < count; ++t) {
    if (PrefetchState && t + detail::kStatePrefetch < count) prefetch_state(sites[t + detail::kStatePrefetch]);
    update(t);
  }
}

// ---- the CSR kernel [eqn:sampling_general] ----
// Where the CSR loops find row i's entries, its coefficients and sd_i. GeneralRows reads the per-entry arrays of any
// kernel. CompactRows serves a kernel whose coefficients are all one number (CsrKernel::uniform_coefficients()): it
// multiplies every term by that constant, the number the general loop would read, so the sum has the same bits; sd_i
// is one constant too when every sd is (a runtime flag, predicted perfectly), and with Regular (every row d entries,
// CsrKernel::row_length()) row i starts at i * d without the offsets. For the homogeneous torus that leaves the
// column indices (16 bytes a site) of the 60 bytes a site the general loop streams.
struct GeneralRows {
  const Index* offsets;
  const Index* cols;
  const double* coef;
  const double* sd;
  std::size_t begin(Index i) const noexcept { return static_cast<std::size_t>(offsets[i]); }
  std::size_t end(Index i, std::size_t) const noexcept { return static_cast<std::size_t>(offsets[i + 1]); }
  double coef_at(std::size_t p) const noexcept { return coef[p]; }
  double sd_of(Index i) const noexcept { return sd[i]; }
  void prefetch(Index i) const noexcept {
    const std::size_t p = begin(i);
    detail::prefetch_read(cols + p);
    detail::prefetch_read(coef + p);
  }
};
// Fixed > 0 is a row length known at compile time (4: the 2-D torus, 4-regular graphs), so that the row loop is
// unrolled: measured 1.23x on the colored sweep of torus:1000 and 1.14x at lockstep 1 on torus:100 against the
// runtime length (primal, CPU time, loaded machine, docs/sampler.md section 8b).
template <bool Regular, std::size_t Fixed = 0>
struct CompactRows {
  const Index* offsets;  // unused when Regular
  const Index* cols;
  std::size_t runtime_length;  // d when Regular
  std::size_t length() const noexcept { return Fixed ? Fixed : runtime_length; }
  double coef;
  const double* sd;  // per site, read unless uniform_sd
  bool uniform_sd;
  double common_sd;  // sd[0], every site's sd when uniform_sd
  std::size_t begin(Index i) const noexcept {
    return Regular ? static_cast<std::size_t>(i) * length() : static_cast<std::size_t>(offsets[i]);
  }
  std::size_t end(Index i, std::size_t first) const noexcept {
    return Regular ? first + length() : static_cast<std::size_t>(offsets[i + 1]);
  }
  double coef_at(std::size_t) const noexcept { return coef; }
  double sd_of(Index i) const noexcept { return uniform_sd ? common_sd : sd[i]; }
  void prefetch(Index i) const noexcept { detail::prefetch_read(cols + begin(i)); }
};

// mu_i of W lanes: (shift_i with a right-hand side, else 0) + sum_p coef_p z_{col_p} in row order, exactly as
// CsrKernel::conditional_mean. The zero-mean form (Shifted = false) is compiled without the shift. The result is
// written through a reference (a vector return value would change the ABI between the instruction-set paths).
template <int W, bool Shifted, class Rows>
[[gnu::always_inline]] inline void row_mean(const Rows& rows, const double* shift, Index i, const double* z,
                                            typename LaneVector<W>::type& mean) noexcept {
  using V = typename LaneVector<W>::type;
  mean = V{};
  if constexpr (Shifted) mean += shift[i];
  const std::size_t first = rows.begin(i), end = rows.end(i, first);
  for (std::size_t p = first; p < end; ++p) {
    V zj;
    std::memcpy(&zj, z + static_cast<std::size_t>(rows.cols[p]) * W, sizeof(V));
    mean += rows.coef_at(p) * zj;
  }
}

// z_i <- mu_i + sd_i eps, exactly as CsrKernel::update. PrefetchState: prefetch the state rows of the site
// kStatePrefetch updates ahead (csr_<path> chooses it: W >= kCsrStatePrefetchFrom, or a compact layout's zero-mean
// loop on a state beyond kLargeStateBytes; the loop with a right-hand side keeps the width rule).
template <int W, bool Shifted, bool PrefetchState, class Rows>
[[gnu::always_inline]] inline void csr_loop(const Rows& rows, const double* shift, const Index* sites,
                                            std::size_t count, double* z, const double* eps) noexcept {
  using V = typename LaneVector<W>::type;
  auto prefetch_state = [&](Index i) {
    const std::size_t first = rows.begin(i), end = rows.end(i, first);
    for (std::size_t p = first; p < end; ++p)
      for (std::size_t l = 0; l < kLines<W>; ++l)
        detail::prefetch_read(z + static_cast<std::size_t>(rows.cols[p]) * W + 8 * l);
    prefetch_row_w<W>(z + static_cast<std::size_t>(i) * W);
  };
  for (std::size_t t = 0; t < std::min(count, detail::kRowPrefetch); ++t) rows.prefetch(sites[t]);
  if constexpr (PrefetchState)
    for (std::size_t t = 0; t < std::min(count, detail::kStatePrefetch); ++t) prefetch_state(sites[t]);
  for (std::size_t t = 0; t < count; ++t) {
    if (t + detail::kRowPrefetch < count) rows.prefetch(sites[t + detail::kRowPrefetch]);
    if (PrefetchState && t + detail::kStatePrefetch < count) prefetch_state(sites[t + detail::kStatePrefetch]);
    const Index i = sites[t];
    V mean, ep;
    row_mean<W, Shifted>(rows, shift, i, z, mean);
    std::memcpy(&ep, eps + t * W, sizeof(V));
    const V fresh = mean + rows.sd_of(i) * ep;
    std::memcpy(z + static_cast<std::size_t>(i) * W, &fresh, sizeof(V));
  }
}

// ---- the CSR kernel's relaxed update (SSOR schemes, detail::relaxed_updates) ----
// z_i <- ((1 - omega) z_i + omega mu_i) + (noise_scale sd_i) eps with mu_i as in csr_loop, exactly as the loop over
// CsrKernel::conditional_mean and set_site. The SSOR schemes visit the sites in index order (forward, backward), so
// the hardware prefetcher finds the rows and no software prefetch is issued.
template <int W, bool Shifted, class Rows>
[[gnu::always_inline]] inline void csr_relaxed_loop(const Rows& rows, const double* shift, const Index* sites,
                                                    std::size_t count, double* z, const double* eps, double omega,
                                                    double noise_scale) noexcept {
  using V = typename LaneVector<W>::type;
  const double keep = 1.0 - omega;
  for (std::size_t t = 0; t < count; ++t) {
    const Index i = sites[t];
    V mean, zi, ep;
    row_mean<W, Shifted>(rows, shift, i, z, mean);
    double* row = z + static_cast<std::size_t>(i) * W;
    std::memcpy(&zi, row, sizeof(V));
    std::memcpy(&ep, eps + t * W, sizeof(V));
    const double scale = noise_scale * rows.sd_of(i);
    const V fresh = keep * zi + omega * mean + scale * ep;
    std::memcpy(row, &fresh, sizeof(V));
  }
}

// ---- one instantiation per instruction set ----

enum class Path { Scalar, Avx2, Avx512 };

#define DUALGIBBS_KERNEL_PATH(SUFFIX, ATTRIBUTE)                                                                       \
  template <int W, class Edges>                                                                                        \
  ATTRIBUTE void dual_##SUFFIX(const Edges& edges, const Index* sites, std::size_t count, double* y, double* x,        \
                               const double* eps, bool large) noexcept {                                               \
    if (large)                                                                                                         \
      dual_loop<W, true>(edges, sites, count, y, x, eps);                                                              \
    else                                                                                                               \
      dual_loop<W, (W >= kDualStatePrefetchFrom)>(edges, sites, count, y, x, eps);                                     \
  }                                                                                                                    \
  template <int W, class Rows>                                                                                         \
  ATTRIBUTE void csr_##SUFFIX(const Rows& rows, const double* shift, const Index* sites, std::size_t count, double* z, \
                              const double* eps, bool large) noexcept {                                                \
    if (shift)                                                                                                         \
      csr_loop<W, true, (W >= kCsrStatePrefetchFrom)>(rows, shift, sites, count, z, eps);                              \
    else if (large && W < kCsrStatePrefetchFrom)                                                                       \
      csr_loop<W, false, true>(rows, shift, sites, count, z, eps);                                                     \
    else                                                                                                               \
      csr_loop<W, false, (W >= kCsrStatePrefetchFrom)>(rows, shift, sites, count, z, eps);                             \
  }                                                                                                                    \
  template <int W, class Rows>                                                                                         \
  ATTRIBUTE void csr_relaxed_##SUFFIX(const Rows& rows, const double* shift, const Index* sites, std::size_t count,    \
                                      double* z, const double* eps, double omega, double noise_scale) noexcept {       \
    if (shift)                                                                                                         \
      csr_relaxed_loop<W, true>(rows, shift, sites, count, z, eps, omega, noise_scale);                                \
    else                                                                                                               \
      csr_relaxed_loop<W, false>(rows, shift, sites, count, z, eps, omega, noise_scale);                               \
  }

DUALGIBBS_KERNEL_PATH(scalar, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DUALGIBBS_HAVE_VECTOR_PATHS 1
DUALGIBBS_KERNEL_PATH(avx2, __attribute__((target("avx2"))))
DUALGIBBS_KERNEL_PATH(avx512, __attribute__((target("avx512f"))))
#endif
#undef DUALGIBBS_KERNEL_PATH

Path best_path() noexcept {
#ifdef DUALGIBBS_HAVE_VECTOR_PATHS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Path::Avx512;
  if (__builtin_cpu_supports("avx2")) return Path::Avx2;
#endif
  return Path::Scalar;
}

Path g_path = best_path();
bool g_auto = true;  // the path is the automatic choice (not forced by select_update_path)
bool g_compact = true;
// the CSR loops may use the compact layouts (detail::set_compact_csr)

// The path one kernel and width runs on. W = 1 gains nothing from wider registers: the scalar path. Under the
// automatic choice, the CSR kernel's AVX2 loop is skipped for W >= 8: measured on AMD EPYC Zen 4 (bench_sampler
// --paths, 100x100 torus, random scan), it ran 2.3x (W = 8) and 1.25x (W = 16) slower than the baseline loop,
// where the dual kernel's AVX2 loop is faster than its baseline; docs/sampler.md section 8 has the table.
Path path_for(bool csr, int width) noexcept {
  if (width == 1) return Path::Scalar;
  if (csr && g_auto && g_path == Path::Avx2 && width >= 8) return Path::Scalar;
  return g_path;
}

}  // namespace

namespace detail {

const char* select_update_path(const std::string& name) {
  Path p;
  if (name == "auto") {
    p = best_path();
  } else if (name == "scalar") {
    p = Path::Scalar;
#ifdef DUALGIBBS_HAVE_VECTOR_PATHS
  } else if (name == "avx2" && __builtin_cpu_supports("avx2")) {
    p = Path::Avx2;
  } else if (name == "avx512" && __builtin_cpu_supports("avx512f")) {
    p = Path::Avx512;
#endif
  } else {
    return nullptr;
  }
  g_path = p;
  g_auto = name == "auto";
  switch (p) {
    case Path::Avx512:
      return "avx512";
    case Path::Avx2:
      return "avx2";
    case Path::Scalar:
      break;
  }
  return "scalar";
}

bool set_compact_csr(bool enabled) noexcept {
  const bool previous = g_compact;
  g_compact = enabled;
  return previous;
}

}  // namespace detail

#ifdef DUALGIBBS_HAVE_VECTOR_PATHS
#define DUALGIBBS_DISPATCH(NAME, CSR, W, ...) \
  switch (path_for(CSR, W)) {                 \
    case Path::Avx512:                        \
      NAME##_avx512<W>(__VA_ARGS__);          \
      return;                                 \
    case Path::Avx2:                          \
      NAME##_avx2<W>(__VA_ARGS__);            \
      return;                                 \
    case Path::Scalar:                        \
      NAME##_scalar<W>(__VA_ARGS__);          \
      return;                                 \
  }
#else
#define DUALGIBBS_DISPATCH(NAME, CSR, W, ...) NAME##_scalar<W>(__VA_ARGS__);
#endif

// Runs NAME (csr or csr_relaxed) of a CsrKernel at width W on the rows of its layout: compact when its coefficients
// are uniform (and regular when its rows are), else general. The arguments after the rows follow the shift.
#define DUALGIBBS_CSR_DISPATCH(NAME, W, ...)                                                                       \
  const double* shift = m_shift.empty() ? nullptr : m_shift.data();                                                \
  if (g_compact && m_uniform_coef && m_row_length == 4) {                                                          \
    const CompactRows<true, 4> rows{nullptr, m_cols.data(), 4, m_common_coef, m_sd.data(), m_uniform_sd, m_sd[0]}; \
    DUALGIBBS_DISPATCH(NAME, true, W, rows, shift, __VA_ARGS__)                                                    \
    return;                                                                                                        \
  }                                                                                                                \
  if (g_compact && m_uniform_coef && m_row_length >= 0) {                                                          \
    const CompactRows<true> rows{nullptr,       m_cols.data(), static_cast<std::size_t>(m_row_length),             \
                                 m_common_coef, m_sd.data(),   m_uniform_sd,                                       \
                                 m_sd[0]};                                                                         \
    DUALGIBBS_DISPATCH(NAME, true, W, rows, shift, __VA_ARGS__)                                                    \
    return;                                                                                                        \
  }                                                                                                                \
  if (g_compact && m_uniform_coef) {                                                                               \
    const CompactRows<false> rows{m_offsets.data(), m_cols.data(), 0,      m_common_coef,                          \
                                  m_sd.data(),      m_uniform_sd,  m_sd[0]};                                       \
    DUALGIBBS_DISPATCH(NAME, true, W, rows, shift, __VA_ARGS__)                                                    \
    return;                                                                                                        \
  }                                                                                                                \
  const GeneralRows rows{m_offsets.data(), m_cols.data(), m_coef.data(), m_sd.data()};                             \
  DUALGIBBS_DISPATCH(NAME, true, W, rows, shift, __VA_ARGS__)

#define DUALGIBBS_RUN_UPDATES(_, W)                                                                            \
  template <>                                                                                                  \
  void CsrKernel::run_updates<W>(const Index* sites, std::size_t count, double* z, double*, const double* eps) \
      const noexcept {                                                                                         \
    const bool large = g_compact && m_uniform_coef && large_state<W>(static_cast<std::size_t>(m_n));           \
    DUALGIBBS_CSR_DISPATCH(csr, W, sites, count, z, eps, large)                                                \
  }                                                                                                            \
  template <>                                                                                                  \
  void DualIncidenceKernel::run_updates<W>(const Index* sites, std::size_t count, double* y, double* x,        \
                                           const double* eps) const noexcept {                                 \
    const bool large = large_state<W>(m_edges.size() + static_cast<std::size_t>(m_num_nodes));                 \
    if (!m_weighted.empty()) {                                                                                 \
      const PerEdge<WeightedCoef, Incidence::Weighted> edges{m_weighted.data()};                               \
      DUALGIBBS_DISPATCH(dual, false, W, edges, sites, count, y, x, eps, large)                                \
      return;                                                                                                  \
    }                                                                                                          \
    if (m_signed) {                                                                                            \
      const PerEdge<EdgeCoef, Incidence::Signed> edges{m_edges.data()};                                        \
      DUALGIBBS_DISPATCH(dual, false, W, edges, sites, count, y, x, eps, large)                                \
      return;                                                                                                  \
    }                                                                                                          \
    if (!m_ends.empty()) {                                                                                     \
      const Uniform<EdgeEnds, EdgeCoef> edges{m_ends.data(), m_edges.front()};                                 \
      DUALGIBBS_DISPATCH(dual, false, W, edges, sites, count, y, x, eps, large)                                \
      return;                                                                                                  \
    }                                                                                                          \
    const PerEdge<EdgeCoef> edges{m_edges.data()};                                                             \
    DUALGIBBS_DISPATCH(dual, false, W, edges, sites, count, y, x, eps, large)                                  \
  }
DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_RUN_UPDATES, _)
#undef DUALGIBBS_RUN_UPDATES

#define DUALGIBBS_RUN_RELAXED(_, W)                                                                                    \
  template <>                                                                                                          \
  void CsrKernel::run_relaxed_updates<W>(const Index* sites, std::size_t count, double* z, double*, const double* eps, \
                                         double omega, double noise_scale) const noexcept {                            \
    DUALGIBBS_CSR_DISPATCH(csr_relaxed, W, sites, count, z, eps, omega, noise_scale)                                   \
  }
DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_RUN_RELAXED, _)
#undef DUALGIBBS_RUN_RELAXED
#undef DUALGIBBS_CSR_DISPATCH
#undef DUALGIBBS_DISPATCH

}  // namespace dualgibbs
