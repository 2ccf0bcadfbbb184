// The hot loops of the shipped site kernels: run_updates<W> of CsrKernel and DualIncidenceKernel, with the W
// lock-step lanes of a site held in one GCC vector (vector_size(8 W)). Each loop is compiled three times, for the
// build's baseline instruction set, for AVX2 and for AVX-512F (function-level target attributes, so the library
// stays portable), and the widest the CPU supports is chosen at run time.
//
// Same bits on every path: the vector code performs, lane by lane, exactly the IEEE operations of the scalar
// update() in the header, in the same order, and the library is compiled with -ffp-contract=off, so no path fuses
// a multiply and an add. test_sampler checks every available path against update() bit for bit.
#include <dualgibbs/sampling/sampler.hpp>

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
// W = 4. The CSR loop keeps its width rule: its state prefetch is a loop over the row, and on the same torus (8 MB)
// it was 0.95x at W = 1 and W = 4.
constexpr std::size_t kLargeStateBytes = std::size_t{4} << 20;
template <int W>
bool large_state(std::size_t values) noexcept {
  return values * W * sizeof(double) > kLargeStateBytes;
}

// ---- the dual kernel [eqn:sampling_simplified] ----
// Where the loop finds an edge's ends and coefficients: PerEdge reads both from one 32-byte record per edge;
// Uniform (a homogeneous model) reads 8-byte ends and one coefficient record shared by every edge.
template <class Coef>
struct PerEdge {
  const Coef* edges;
  const Coef& ends(Index e) const noexcept { return edges[e]; }
  const Coef& coef(const Coef& record) const noexcept { return record; }  // the record ends() returned
};
template <class Ends, class Coef>
struct Uniform {
  const Ends* edges;
  const Coef& common;
  const Ends& ends(Index e) const noexcept { return edges[e]; }
  const Coef& coef(const Ends&) const noexcept { return common; }
};

// For edge e = (u, v): y_e <- ((beta x_v - alpha x_u) + (alpha + beta) y_e) + sd eps, x_u += d, x_v -= d with d the
// change of y_e, exactly as DualIncidenceKernel::update.
template <int W, bool PrefetchState, class Edges>
[[gnu::always_inline]] inline void dual_loop(const Edges& edges, const Index* sites, std::size_t count, double* y,
                                             double* x, const double* eps) noexcept {
  using V = typename LaneVector<W>::type;
  auto prefetch_state = [&](Index e) {
    const auto& k = edges.ends(e);
    prefetch_row_w<W>(y + static_cast<std::size_t>(e) * W);
    prefetch_row_w<W>(x + static_cast<std::size_t>(k.head) * W);
    prefetch_row_w<W>(x + static_cast<std::size_t>(k.tail) * W);
  };
  for (std::size_t t = 0; t < std::min(count, detail::kRowPrefetch); ++t) detail::prefetch_read(&edges.ends(sites[t]));
  if constexpr (PrefetchState)
    for (std::size_t t = 0; t < std::min(count, detail::kStatePrefetch); ++t) prefetch_state(sites[t]);
  for (std::size_t t = 0; t < count; ++t) {
    if (t + detail::kRowPrefetch < count) detail::prefetch_read(&edges.ends(sites[t + detail::kRowPrefetch]));
    if (PrefetchState && t + detail::kStatePrefetch < count) prefetch_state(sites[t + detail::kStatePrefetch]);
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
    const double gamma = k.alpha + k.beta;
    const V fresh = (k.beta * xv - k.alpha * xu + gamma * old) + k.sd * ep;
    const V d = fresh - old;
    xu += d;
    xv -= d;
    std::memcpy(py, &fresh, sizeof(V));
    std::memcpy(pu, &xu, sizeof(V));
    std::memcpy(pv, &xv, sizeof(V));
  }
}

// ---- the CSR kernel [eqn:sampling_general] ----
// z_i <- (sum_p coef_p z_{col_p}, from 0 in row order) + sd_i eps, exactly as CsrKernel::update. With a right-hand
// side (Shifted) the sum starts from shift_i = h_i / M_ii instead of 0; the zero-mean loop is compiled without it.
template <int W, bool Shifted>
[[gnu::always_inline]] inline void csr_loop(const Index* offsets, const Index* cols, const double* coef,
                                            const double* sd, const double* shift, const Index* sites,
                                            std::size_t count, double* z, const double* eps) noexcept {
  using V = typename LaneVector<W>::type;
  auto prefetch_row = [&](Index i) {
    const auto p = static_cast<std::size_t>(offsets[i]);
    detail::prefetch_read(cols + p);
    detail::prefetch_read(coef + p);
  };
  auto prefetch_state = [&](Index i) {
    const auto end = static_cast<std::size_t>(offsets[i + 1]);
    for (auto p = static_cast<std::size_t>(offsets[i]); p < end; ++p)
      for (std::size_t l = 0; l < kLines<W>; ++l)
        detail::prefetch_read(z + static_cast<std::size_t>(cols[p]) * W + 8 * l);
    prefetch_row_w<W>(z + static_cast<std::size_t>(i) * W);
  };
  for (std::size_t t = 0; t < std::min(count, detail::kRowPrefetch); ++t) prefetch_row(sites[t]);
  constexpr bool kPrefetchState = W >= kCsrStatePrefetchFrom;
  if constexpr (kPrefetchState)
    for (std::size_t t = 0; t < std::min(count, detail::kStatePrefetch); ++t) prefetch_state(sites[t]);
  for (std::size_t t = 0; t < count; ++t) {
    if (t + detail::kRowPrefetch < count) prefetch_row(sites[t + detail::kRowPrefetch]);
    if (kPrefetchState && t + detail::kStatePrefetch < count) prefetch_state(sites[t + detail::kStatePrefetch]);
    const Index i = sites[t];
    V mean{};
    if constexpr (Shifted) mean += shift[i];
    const auto end = static_cast<std::size_t>(offsets[i + 1]);
    for (auto p = static_cast<std::size_t>(offsets[i]); p < end; ++p) {
      V zj;
      std::memcpy(&zj, z + static_cast<std::size_t>(cols[p]) * W, sizeof(V));
      mean += coef[p] * zj;
    }
    V ep;
    std::memcpy(&ep, eps + t * W, sizeof(V));
    const V fresh = mean + sd[i] * ep;
    std::memcpy(z + static_cast<std::size_t>(i) * W, &fresh, sizeof(V));
  }
}

// ---- the CSR kernel's relaxed update (SSOR schemes, detail::relaxed_updates) ----
// z_i <- ((1 - omega) z_i + omega mu_i) + (noise_scale sd_i) eps with mu_i as in csr_loop, exactly as the loop over
// CsrKernel::conditional_mean and set_site. The SSOR schemes visit the sites in index order (forward, backward), so
// the hardware prefetcher finds the rows and no software prefetch is issued.
template <int W, bool Shifted>
[[gnu::always_inline]] inline void csr_relaxed_loop(const Index* offsets, const Index* cols, const double* coef,
                                                    const double* sd, const double* shift, const Index* sites,
                                                    std::size_t count, double* z, const double* eps, double omega,
                                                    double noise_scale) noexcept {
  using V = typename LaneVector<W>::type;
  const double keep = 1.0 - omega;
  for (std::size_t t = 0; t < count; ++t) {
    const Index i = sites[t];
    V mean{};
    if constexpr (Shifted) mean += shift[i];
    const auto end = static_cast<std::size_t>(offsets[i + 1]);
    for (auto p = static_cast<std::size_t>(offsets[i]); p < end; ++p) {
      V zj;
      std::memcpy(&zj, z + static_cast<std::size_t>(cols[p]) * W, sizeof(V));
      mean += coef[p] * zj;
    }
    V zi, ep;
    double* row = z + static_cast<std::size_t>(i) * W;
    std::memcpy(&zi, row, sizeof(V));
    std::memcpy(&ep, eps + t * W, sizeof(V));
    const double scale = noise_scale * sd[i];
    const V fresh = keep * zi + omega * mean + scale * ep;
    std::memcpy(row, &fresh, sizeof(V));
  }
}

// ---- one instantiation per instruction set ----

enum class Path { Scalar, Avx2, Avx512 };

#define DUALGIBBS_KERNEL_PATH(SUFFIX, ATTRIBUTE)                                                                     \
  template <int W, class Edges>                                                                                      \
  ATTRIBUTE void dual_##SUFFIX(const Edges& edges, const Index* sites, std::size_t count, double* y, double* x,      \
                               const double* eps, bool large) noexcept {                                             \
    if (large)                                                                                                       \
      dual_loop<W, true>(edges, sites, count, y, x, eps);                                                            \
    else                                                                                                             \
      dual_loop<W, (W >= kDualStatePrefetchFrom)>(edges, sites, count, y, x, eps);                                   \
  }                                                                                                                  \
  template <int W>                                                                                                   \
  ATTRIBUTE void csr_##SUFFIX(const Index* offsets, const Index* cols, const double* coef, const double* sd,         \
                              const double* shift, const Index* sites, std::size_t count, double* z,                 \
                              const double* eps) noexcept {                                                          \
    if (shift)                                                                                                       \
      csr_loop<W, true>(offsets, cols, coef, sd, shift, sites, count, z, eps);                                       \
    else                                                                                                             \
      csr_loop<W, false>(offsets, cols, coef, sd, shift, sites, count, z, eps);                                      \
  }                                                                                                                  \
  template <int W>                                                                                                   \
  ATTRIBUTE void csr_relaxed_##SUFFIX(const Index* offsets, const Index* cols, const double* coef, const double* sd, \
                                      const double* shift, const Index* sites, std::size_t count, double* z,         \
                                      const double* eps, double omega, double noise_scale) noexcept {                \
    if (shift)                                                                                                       \
      csr_relaxed_loop<W, true>(offsets, cols, coef, sd, shift, sites, count, z, eps, omega, noise_scale);           \
    else                                                                                                             \
      csr_relaxed_loop<W, false>(offsets, cols, coef, sd, shift, sites, count, z, eps, omega, noise_scale);          \
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

#define DUALGIBBS_RUN_UPDATES(_, W)                                                                            \
  template <>                                                                                                  \
  void CsrKernel::run_updates<W>(const Index* sites, std::size_t count, double* z, double*, const double* eps) \
      const noexcept {                                                                                         \
    DUALGIBBS_DISPATCH(csr, true, W, m_offsets.data(), m_cols.data(), m_coef.data(), m_sd.data(),              \
                       m_shift.empty() ? nullptr : m_shift.data(), sites, count, z, eps)                       \
  }                                                                                                            \
  template <>                                                                                                  \
  void DualIncidenceKernel::run_updates<W>(const Index* sites, std::size_t count, double* y, double* x,        \
                                           const double* eps) const noexcept {                                 \
    const bool large = large_state<W>(m_edges.size() + static_cast<std::size_t>(m_num_nodes));                 \
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
    DUALGIBBS_DISPATCH(csr_relaxed, true, W, m_offsets.data(), m_cols.data(), m_coef.data(), m_sd.data(),              \
                       m_shift.empty() ? nullptr : m_shift.data(), sites, count, z, eps, omega, noise_scale)           \
  }
DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_RUN_RELAXED, _)
#undef DUALGIBBS_RUN_RELAXED
#undef DUALGIBBS_DISPATCH

}  // namespace dualgibbs
