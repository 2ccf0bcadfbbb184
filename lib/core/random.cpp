// The random module: streams per (seed, chain, purpose), Boost's ziggurat (scalar, AVX2 and AVX-512 paths that give
// the same bits), uniform indices and permutations.
#include <dualgibbs/core/random.hpp>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdexcept>
#include <string>

namespace dualgibbs {

// ---- random streams --------------------------------------------------------------------------------------

ChainEngine make_stream(std::uint64_t seed, std::uint64_t chain, StreamPurpose purpose,
                        std::uint64_t substream) noexcept {
  std::array<std::uint64_t, 4> s{};
  for (std::uint64_t k = 0; k < 4; ++k) {
    const std::uint64_t a = mix64(seed + (k + 1) * 0x9e3779b97f4a7c15ULL);
    const std::uint64_t b = mix64(a ^ chain);  // bijective in chain for a fixed seed and word
    const std::uint64_t c = mix64(b + static_cast<std::uint64_t>(purpose) * 0xd1b54a32d192ed03ULL);
    s[k] = substream == 0 ? c : mix64(c + substream * 0x8cb92ba72f3d8dd7ULL);
  }
  if ((s[0] | s[1] | s[2] | s[3]) == 0) s[0] = 1;  // the one forbidden state; never seen in practice
  return ChainEngine(s);
}

namespace {

// boost::random::normal_distribution<double>()(rng), i.e. the unit ziggurat deviate * 1 + 0.
inline double boost_normal(ChainEngine& rng) noexcept {
  boost::random::normal_distribution<double> normal;
  return normal(rng);
}

}  // namespace

double standard_normal(ChainEngine& rng) noexcept { return boost_normal(rng); }

// ---- NormalStream ----------------------------------------------------------------------------------------

namespace {

// Boost's ziggurat for a 64-bit engine draws one word u and uses bucket = u & 0xff (sign = bit 0, layer = bits
// 1..7) and r = double((u & ~2^11) >> 8) 2^-56; it returns x = r * X[layer], with its sign, when x < X[layer + 1]
// (the common branch, 97.2% of draws: the top layer never takes it), and otherwise continues with wedge and tail
// tests that draw more words. The functions below evaluate the common branch for the eight sub-streams of a
// NormalStream at once; a word that fails the test is given back (its sub-stream is reset to the state before the
// draw) and Boost redraws that deviate, so the output is bitwise Boost's.
constexpr int kWays = NormalStream::kWays;
using StreamState = std::uint64_t (*)[kWays];

// The deviate of one sub-stream from a state {s0, s1, s2, s3} through Boost (the rare branch).
inline double redraw(std::uint64_t (&q)[4]) noexcept {
  ChainEngine e({q[0], q[1], q[2], q[3]});
  const double x = boost_normal(e);
  for (int w = 0; w < 4; ++w) q[w] = e.state()[static_cast<std::size_t>(w)];
  return x;
}

// Boost's ziggurat after a first draw (layer i, magnitude x = r X[i], sign +-1) that missed the common branch: the
// tail for the base layer, otherwise one uniform y01 and the wedge test between the chord and tangent bounds, with
// exp only between them; a rejection starts over with a full draw. The same operations in the same order as
// boost::random::detail::unit_normal_distribution (Boost 1.74 to 1.83), so the bits are Boost's; the tests compare
// millions of deviates with Boost's own.
double continue_tail(ChainEngine& e, double sign) noexcept {
  return boost::random::detail::unit_normal_distribution<double>().generate_tail(e) * sign;
}
// True when the wedge point (x, y) is under the density, given the signed distances to the upper and lower bounds.
inline bool wedge_accepts(double x, double y, double y_above_ubound, double y_above_lbound) noexcept {
  return y_above_ubound < 0 && (y_above_lbound < 0 || y < std::exp(-(x * x / 2)));
}
double continue_wedge(ChainEngine& e, int i, double x, double sign) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  const double* table_y = boost::random::detail::normal_table<double>::table_y;
  const double y01 = boost::random::uniform_01<double>()(e);
  const double y = table_y[i] + y01 * (table_y[i + 1] - table_y[i]);
  const double chord = (table_x[i] - table_x[i + 1]) * y01 - (table_x[i] - x);
  const double tangent = y - (table_y[i] + (table_x[i] - x) * table_y[i] * table_x[i]);
  const bool convex = table_x[i] >= 1;
  if (wedge_accepts(x, y, convex ? chord : tangent, convex ? tangent : chord)) return x * sign;
  return boost_normal(e);
}

// Portable path: the sub-streams one after the other (Boost itself on each).
void fill_groups_scalar(StreamState state, std::size_t groups, double* out, std::size_t stride) noexcept {
  for (int k = 0; k < kWays; ++k) {
    ChainEngine e({state[0][k], state[1][k], state[2][k], state[3][k]});
    boost::random::normal_distribution<double> normal;
    double* o = out + static_cast<std::size_t>(k) * stride;
    for (std::size_t g = 0; g < groups; ++g) o[kWays * g * stride] = normal(e);
    for (int w = 0; w < 4; ++w) state[w][k] = e.state()[static_cast<std::size_t>(w)];
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DUALGIBBS_HAVE_SIMD_PATHS 1

// ---- AVX2: the eight sub-streams as two halves of four lanes ----
// The 56-bit integer is converted exactly rounded as hi 2^24 + lo, with hi, lo < 2^32 converted exactly by the 2^52
// trick: a single correctly rounded addition, hence equal to the direct conversion Boost does.
struct Avx2Half {
  __m256i s0, s1, s2, s3;
};

__attribute__((target("avx2"))) inline __m256i rotl256(__m256i x, int k) noexcept {
  return _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - k));
}

// One draw of four sub-streams: returns the candidate deviates, sets `accept` (bit k: lane k took the common
// branch) and leaves the pre-draw state in `before`.
__attribute__((target("avx2"))) inline __m256d avx2_draw(Avx2Half& h, Avx2Half& before, int& accept,
                                                         const double* table_x) noexcept {
  before = h;
  const __m256i u = _mm256_add_epi64(rotl256(_mm256_add_epi64(h.s0, h.s3), 23), h.s0);  // xoshiro256++
  const __m256i t = _mm256_slli_epi64(h.s1, 17);
  h.s2 = _mm256_xor_si256(h.s2, h.s0);
  h.s3 = _mm256_xor_si256(h.s3, h.s1);
  h.s1 = _mm256_xor_si256(h.s1, h.s2);
  h.s0 = _mm256_xor_si256(h.s0, h.s3);
  h.s2 = _mm256_xor_si256(h.s2, t);
  h.s3 = rotl256(h.s3, 45);
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
  const __m256d two52 = _mm256_set1_pd(0x1.0p52);
  const __m256i v = _mm256_srli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(1LL << 11), u), 8);
  const __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(v, 24), magic)), two52);
  const __m256d lo = _mm256_sub_pd(
      _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi64x(0xffffff)), magic)), two52);
  const __m256d r =
      _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(0x1.0p24)), lo), _mm256_set1_pd(0x1.0p-56));
  alignas(32) std::uint64_t li[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(li),
                     _mm256_srli_epi64(_mm256_and_si256(u, _mm256_set1_epi64x(0xff)), 1));
  const __m256d x0 = _mm256_setr_pd(table_x[li[0]], table_x[li[1]], table_x[li[2]], table_x[li[3]]);
  const __m256d x1 = _mm256_setr_pd(table_x[li[0] + 1], table_x[li[1] + 1], table_x[li[2] + 1], table_x[li[3] + 1]);
  const __m256d x = _mm256_mul_pd(r, x0);
  accept = _mm256_movemask_pd(_mm256_cmp_pd(x, x1, _CMP_LT_OQ));
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256i flip = _mm256_slli_epi64(_mm256_xor_si256(_mm256_and_si256(u, one), one), 63);  // bit 0 clear: -
  return _mm256_xor_pd(x, _mm256_castsi256_pd(flip));  // x * sign, exactly (x >= 0)
}

// Redraws the rejected lanes through Boost and merges state and deviates back in registers (no store forwarding).
__attribute__((target("avx2"))) __attribute__((noinline)) void avx2_fix(Avx2Half& h, const Avx2Half& before, int accept,
                                                                        __m256d& res) noexcept {
  alignas(32) std::uint64_t b[4][4];
  alignas(32) double rv[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(b[0]), before.s0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(b[1]), before.s1);
  _mm256_store_si256(reinterpret_cast<__m256i*>(b[2]), before.s2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(b[3]), before.s3);
  _mm256_store_pd(rv, res);
  alignas(32) std::uint64_t n[4][4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(n[0]), h.s0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(n[1]), h.s1);
  _mm256_store_si256(reinterpret_cast<__m256i*>(n[2]), h.s2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(n[3]), h.s3);
  for (int k = 0; k < 4; ++k) {
    if (accept & (1 << k)) continue;
    std::uint64_t q[4] = {b[0][k], b[1][k], b[2][k], b[3][k]};
    rv[k] = redraw(q);
    for (int w = 0; w < 4; ++w) n[w][k] = q[w];
  }
  // Here the reloads follow scalar stores (a store-forwarding stall), but only on this rare path.
  h.s0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n[0]));
  h.s1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n[1]));
  h.s2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n[2]));
  h.s3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n[3]));
  res = _mm256_load_pd(rv);
}

__attribute__((target("avx2"))) inline void store4(double* o, std::size_t stride, __m256d v) noexcept {
  if (stride == 1) {
    _mm256_storeu_pd(o, v);
  } else {
    const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    _mm_storel_pd(o, lo);
    _mm_storeh_pd(o + stride, lo);
    _mm_storel_pd(o + 2 * stride, hi);
    _mm_storeh_pd(o + 3 * stride, hi);
  }
}

__attribute__((target("avx2"))) void fill_groups_avx2(StreamState state, std::size_t groups, double* out,
                                                      std::size_t stride) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  Avx2Half a, b, pa, pb;
  a.s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[0]));
  a.s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[1]));
  a.s2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[2]));
  a.s3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[3]));
  b.s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[0] + 4));
  b.s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[1] + 4));
  b.s2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[2] + 4));
  b.s3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[3] + 4));
  for (std::size_t g = 0; g < groups; ++g) {
    int acc_a, acc_b;
    __m256d ra = avx2_draw(a, pa, acc_a, table_x);
    __m256d rb = avx2_draw(b, pb, acc_b, table_x);
    if (__builtin_expect((acc_a & acc_b) != 0xf, 0)) {
      if (acc_a != 0xf) avx2_fix(a, pa, acc_a, ra);
      if (acc_b != 0xf) avx2_fix(b, pb, acc_b, rb);
    }
    double* o = out + kWays * g * stride;
    store4(o, stride, ra);
    store4(o + 4 * stride, stride, rb);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[0]), a.s0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[1]), a.s1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[2]), a.s2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[3]), a.s3);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[0] + 4), b.s0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[1] + 4), b.s1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[2] + 4), b.s2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[3] + 4), b.s3);
}

// ---- AVX-512 (F + DQ): the eight sub-streams in one register per state word ----
// GCC 12's avx512fintrin.h builds unmasked shifts from an "undefined" register and then warns about it.
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define DUALGIBBS_AVX512 __attribute__((target("avx512f,avx512dq")))

struct Zig512 {
  __m512i s[4];  // state word w of the eight sub-streams
};

// One xoshiro256++ output per sub-stream; only the sub-streams in `m` advance.
DUALGIBBS_AVX512 inline __m512i xoshiro512(Zig512& z, __mmask8 m) noexcept {
  const __m512i s0 = z.s[0], s1 = z.s[1], s2 = z.s[2], s3 = z.s[3];
  const __m512i u = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(s0, s3), 23), s0);
  const __m512i t = _mm512_slli_epi64(s1, 17);
  const __m512i n2 = _mm512_xor_si512(s2, s0);
  const __m512i n3 = _mm512_xor_si512(s3, s1);
  const __m512i n1 = _mm512_xor_si512(s1, n2);
  const __m512i n0 = _mm512_xor_si512(s0, n3);
  if (m == 0xff) {
    z.s[0] = n0;
    z.s[1] = n1;
    z.s[2] = _mm512_xor_si512(n2, t);
    z.s[3] = _mm512_rol_epi64(n3, 45);
  } else {
    z.s[0] = _mm512_mask_mov_epi64(s0, m, n0);
    z.s[1] = _mm512_mask_mov_epi64(s1, m, n1);
    z.s[2] = _mm512_mask_mov_epi64(s2, m, _mm512_xor_si512(n2, t));
    z.s[3] = _mm512_mask_mov_epi64(s3, m, _mm512_rol_epi64(n3, 45));
  }
  return u;
}

// Boost's table_x scaled by 2^-56: r X[i] = (v 2^-56) X[i] = v (X[i] 2^-56) as real numbers, and both products
// round that same real number once (no subnormals arise), so the scaled table saves a multiplication, exactly.
struct ScaledTableX {
  alignas(64) double x[129];
  ScaledTableX() noexcept {
    for (int i = 0; i < 129; ++i) x[i] = boost::random::detail::normal_table<double>::table_x[i] * 0x1.0p-56;
  }
};
const ScaledTableX scaled_table_x;

// The first step of Boost's ziggurat on the words u: layer i = (u & 0xff) >> 1, magnitude x = r X[i] with
// r = ((u & ~2^11) >> 8) 2^-56 (vcvtuqq2pd rounds once, as Boost's conversion), and the common-branch test
// x < X[i + 1], returned as a mask. The gathers index bytes as (u & 0xfe) * 4 = 8 i.
DUALGIBBS_AVX512 inline __mmask8 ziggurat_first(__m512i u, __m512d& x, const double* table_x) noexcept {
  const __m512i v = _mm512_srli_epi64(_mm512_and_si512(u, _mm512_set1_epi64(~(1LL << 11))), 8);
  const __m512i byte_index = _mm512_and_si512(u, _mm512_set1_epi64(0xfe));
  x = _mm512_mul_pd(_mm512_cvtepu64_pd(v), _mm512_i64gather_pd(byte_index, scaled_table_x.x, 4));
  return _mm512_cmp_pd_mask(x, _mm512_i64gather_pd(byte_index, table_x + 1, 4), _CMP_LT_OQ);
}

// x times Boost's sign (+1 when bit 0 of u is set, -1 otherwise), exactly: a sign flip of the non-negative x,
// x ^ (u << 63) ^ (1 << 63) as one three-way exclusive or.
DUALGIBBS_AVX512 inline __m512d signed_deviate(__m512d x, __m512i u) noexcept {
  return _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(x), _mm512_slli_epi64(u, 63),
                                                       _mm512_set1_epi64(static_cast<long long>(1ULL << 63)), 0x96));
}

// Finishes the sub-streams whose first draw missed the common branch (mask ~accept; 20% of groups), in registers:
// the wedge step of continue_wedge() for all of them at once, a fresh first draw for those it rejects, until every
// sub-stream has its deviate. The base-layer tail, a y01 that rounds to 1 and the exp() between the bounds (0.3% of
// draws together) are done per sub-stream by the scalar functions above.
DUALGIBBS_AVX512 inline void finish512(Zig512& z, __m512i u, __m512d x, __mmask8 accept, __m512d& res) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  const double* table_y = boost::random::detail::normal_table<double>::table_y;
  __m512i layer = _mm512_srli_epi64(_mm512_and_si512(u, _mm512_set1_epi64(0xff)), 1);
  __mmask8 pending = static_cast<__mmask8>(~accept);
  while (pending) {
    const __mmask8 tail = pending & _mm512_cmpeq_epi64_mask(layer, _mm512_setzero_si512());
    const __mmask8 wedge = pending & static_cast<__mmask8>(~tail);
    const __m512d y01 = _mm512_mul_pd(_mm512_cvtepu64_pd(xoshiro512(z, wedge)), _mm512_set1_pd(0x1.0p-64));
    const __mmask8 vec = _mm512_mask_cmp_pd_mask(wedge, y01, _mm512_set1_pd(1.0), _CMP_LT_OQ);
    const __mmask8 redo01 = wedge & static_cast<__mmask8>(~vec);  // uniform_01 draws again
    const __m512i layer1 = _mm512_add_epi64(layer, _mm512_set1_epi64(1));
    const __m512d xi = _mm512_mask_i64gather_pd(_mm512_set1_pd(2.0), vec, layer, table_x, 8);
    const __m512d xi1 = _mm512_mask_i64gather_pd(_mm512_set1_pd(1.0), vec, layer1, table_x, 8);
    const __m512d yi = _mm512_mask_i64gather_pd(_mm512_set1_pd(0.0), vec, layer, table_y, 8);
    const __m512d yi1 = _mm512_mask_i64gather_pd(_mm512_set1_pd(0.0), vec, layer1, table_y, 8);
    const __m512d y = _mm512_add_pd(yi, _mm512_mul_pd(y01, _mm512_sub_pd(yi1, yi)));
    const __m512d chord = _mm512_sub_pd(_mm512_mul_pd(_mm512_sub_pd(xi, xi1), y01), _mm512_sub_pd(xi, x));
    const __m512d tangent =
        _mm512_sub_pd(y, _mm512_add_pd(yi, _mm512_mul_pd(_mm512_mul_pd(_mm512_sub_pd(xi, x), yi), xi)));
    const __mmask8 convex = _mm512_cmp_pd_mask(xi, _mm512_set1_pd(1.0), _CMP_GE_OQ);
    const __m512d ubound = _mm512_mask_blend_pd(convex, tangent, chord);  // convex: chord; concave: tangent
    const __m512d lbound = _mm512_mask_blend_pd(convex, chord, tangent);
    const __mmask8 below_u = _mm512_mask_cmp_pd_mask(vec, ubound, _mm512_setzero_pd(), _CMP_LT_OQ);
    __mmask8 done = _mm512_mask_cmp_pd_mask(below_u, lbound, _mm512_setzero_pd(), _CMP_LT_OQ);
    const __mmask8 between = below_u & static_cast<__mmask8>(~done);
    if (between) {
      alignas(64) double xs[8], ys[8];
      _mm512_store_pd(xs, x);
      _mm512_store_pd(ys, y);
      for (int k = 0; k < 8; ++k)
        if ((between >> k) & 1 && ys[k] < std::exp(-(xs[k] * xs[k] / 2))) done |= static_cast<__mmask8>(1u << k);
    }
    res = _mm512_mask_mov_pd(res, done, signed_deviate(x, u));
    if (const __mmask8 scalar = tail | redo01) {
      alignas(64) std::uint64_t q[4][8], us[8], ls[8];
      alignas(64) double xs[8], rs[8];
      for (int w = 0; w < 4; ++w) _mm512_store_si512(q[w], z.s[w]);
      _mm512_store_si512(us, u);
      _mm512_store_si512(ls, layer);
      _mm512_store_pd(xs, x);
      for (int k = 0; k < 8; ++k) {
        if (!((scalar >> k) & 1)) continue;
        ChainEngine e({q[0][k], q[1][k], q[2][k], q[3][k]});
        const double sign = (us[k] & 1) ? 1.0 : -1.0;
        rs[k] = (tail >> k) & 1 ? continue_tail(e, sign) : continue_wedge(e, static_cast<int>(ls[k]), xs[k], sign);
        const __mmask8 m = static_cast<__mmask8>(1u << k);
        for (int w = 0; w < 4; ++w)
          z.s[w] = _mm512_mask_set1_epi64(z.s[w], m, static_cast<long long>(e.state()[static_cast<std::size_t>(w)]));
        res = _mm512_mask_broadcastsd_pd(res, m, _mm_set_sd(rs[k]));
      }
    }
    // Rejected in the wedge: Boost starts over with a full draw. Done whether or not any sub-stream needs it (a
    // no-op for none), because a branch here would be mispredicted often and resolve late.
    const __mmask8 again = vec & static_cast<__mmask8>(~done);
    __m512d x_new;
    const __m512i u_new = xoshiro512(z, again);
    const __mmask8 hit = again & ziggurat_first(u_new, x_new, table_x);
    const __m512i layer_new = _mm512_srli_epi64(_mm512_and_si512(u_new, _mm512_set1_epi64(0xff)), 1);
    res = _mm512_mask_mov_pd(res, hit, signed_deviate(x_new, u_new));
    u = _mm512_mask_mov_epi64(u, again, u_new);
    layer = _mm512_mask_mov_epi64(layer, again, layer_new);
    x = _mm512_mask_mov_pd(x, again, x_new);
    pending = again & static_cast<__mmask8>(~hit);
  }
}

// The next eight deviates of the eight sub-streams in z: Boost's ziggurat, common branch inline, the rest in
// finish512().
DUALGIBBS_AVX512 inline __m512d draw_group(Zig512& z, const double* table_x) noexcept {
  const __m512i u = xoshiro512(z, 0xff);
  __m512d x;
  const __mmask8 accept = ziggurat_first(u, x, table_x);
  __m512d res = signed_deviate(x, u);
  if (__builtin_expect(accept != 0xff, 0)) finish512(z, u, x, accept, res);
  return res;
}

DUALGIBBS_AVX512 void fill_groups_avx512(StreamState state, std::size_t groups, double* out,
                                         std::size_t stride) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  Zig512 z;
  for (int w = 0; w < 4; ++w) z.s[w] = _mm512_loadu_si512(state[w]);
  const __m512i index =
      _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(static_cast<long long>(stride)));
  for (std::size_t g = 0; g < groups; ++g) {
    const __m512d res = draw_group(z, table_x);
    double* o = out + kWays * g * stride;
    if (stride == 1)
      _mm512_storeu_pd(o, res);
    else
      _mm512_i64scatter_pd(o, index, res, 8);
  }
  for (int w = 0; w < 4; ++w) _mm512_storeu_si512(state[w], z.s[w]);
}
// P NormalStreams at once (P lanes of a sampler): the streams are independent, so while one of them is in the
// long dependency chain of finish512(), the out-of-order core works on the others' next groups.
template <int P>
DUALGIBBS_AVX512 void fill_groups_avx512_multi(StreamState* states, std::size_t groups, double* out,
                                               std::size_t stride) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  Zig512 z[P];
  for (int p = 0; p < P; ++p)
    for (int w = 0; w < 4; ++w) z[p].s[w] = _mm512_loadu_si512(states[p][w]);
  const __m512i index =
      _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(static_cast<long long>(stride)));
  for (std::size_t g = 0; g < groups; ++g) {
    for (int p = 0; p < P; ++p) _mm512_i64scatter_pd(out + p + kWays * g * stride, index, draw_group(z[p], table_x), 8);
  }
  for (int p = 0; p < P; ++p)
    for (int w = 0; w < 4; ++w) _mm512_storeu_si512(states[p][w], z[p].s[w]);
}
// Eight lanes of a sampler at once, transposed: vector lane l holds chain c + l. Deviate t of all eight chains
// comes from their sub-stream t mod 8, so it is one contiguous store at out + t * stride instead of a scatter per
// lane (a scatter of eight doubles costs about as much as drawing them). The eight NormalStreams' states (word w of
// sub-stream k of lane l at first_state + l * object_words + 8 w + k) are gathered into st[k] here and scattered
// back at the end; `rounds` rounds of eight deviates per lane.
DUALGIBBS_AVX512 void fill_rounds_avx512_octet(std::uint64_t* first_state, std::size_t object_words, std::size_t rounds,
                                               double* out, std::size_t stride) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  const __m512i offsets = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm512_set1_epi64(static_cast<long long>(object_words)));
  Zig512 st[kWays];
  for (int k = 0; k < kWays; ++k)
    for (int w = 0; w < 4; ++w) st[k].s[w] = _mm512_i64gather_epi64(offsets, first_state + 8 * w + k, 8);
  for (std::size_t t = 0; t < rounds * kWays; ++t) {
    _mm512_storeu_pd(out + t * stride, draw_group(st[t % kWays], table_x));
  }
  for (int k = 0; k < kWays; ++k)
    for (int w = 0; w < 4; ++w) _mm512_i64scatter_epi64(first_state + 8 * w + k, offsets, st[k].s[w], 8);
}

#undef DUALGIBBS_AVX512
#pragma GCC diagnostic pop
#endif

using FillGroups = void (*)(StreamState, std::size_t, double*, std::size_t) noexcept;

// Chosen once, by what the CPU running the library supports (the default build stays portable; every path gives
// the same bits).
FillGroups choose_fill_groups() noexcept {
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return fill_groups_avx512;
  if (__builtin_cpu_supports("avx2")) return fill_groups_avx2;
#endif
  return fill_groups_scalar;
}

FillGroups fill_groups = choose_fill_groups();

}  // namespace

namespace detail {

const char* select_normal_path(const std::string& name) {
  if (name == "auto") {
    fill_groups = choose_fill_groups();
  } else if (name == "scalar") {
    fill_groups = fill_groups_scalar;
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  } else if (name == "avx2") {
    if (!__builtin_cpu_supports("avx2")) return nullptr;
    fill_groups = fill_groups_avx2;
  } else if (name == "avx512") {
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) return nullptr;
    fill_groups = fill_groups_avx512;
#endif
  } else {
    return nullptr;
  }
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  if (fill_groups == fill_groups_avx512) return "avx512";
  if (fill_groups == fill_groups_avx2) return "avx2";
#endif
  return "scalar";
}

}  // namespace detail

NormalStream::NormalStream(std::uint64_t seed, std::uint64_t chain) noexcept {
  for (int k = 0; k < kWays; ++k) {
    const ChainEngine e = make_stream(seed, chain, StreamPurpose::Noise, static_cast<std::uint64_t>(k));
    for (int w = 0; w < 4; ++w) m_s[w][k] = e.state()[static_cast<std::size_t>(w)];
  }
}

ChainEngine NormalStream::substream(int k) const {
  if (k < 0 || k >= kWays) throw std::invalid_argument("NormalStream::substream: k = " + std::to_string(k));
  return ChainEngine({m_s[0][k], m_s[1][k], m_s[2][k], m_s[3][k]});
}

double NormalStream::operator()() noexcept {
  const unsigned k = m_next;
  ChainEngine e({m_s[0][k], m_s[1][k], m_s[2][k], m_s[3][k]});
  const double x = boost_normal(e);
  for (int w = 0; w < 4; ++w) m_s[w][k] = e.state()[static_cast<std::size_t>(w)];
  m_next = (k + 1) % kWays;
  return x;
}

void NormalStream::fill(std::size_t count, double* out, std::size_t stride) noexcept {
  std::size_t t = 0;
  for (; t < count && m_next != 0; ++t) out[t * stride] = (*this)();
  const std::size_t groups = (count - t) / kWays;
  fill_groups(m_s, groups, out + t * stride, stride);
  t += groups * kWays;
  for (; t < count; ++t) out[t * stride] = (*this)();
}

void NormalStream::fill_lanes(NormalStream* streams, int lanes, std::size_t count, double* out) noexcept {
  const auto stride = static_cast<std::size_t>(lanes);
  int c = 0;
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  if (fill_groups == fill_groups_avx512) {
    // Blocks of eight lanes whose streams are at the same sub-stream (always so in a sampler): transposed.
    for (; c + kWays <= lanes; c += kWays) {
      NormalStream* block = streams + c;
      bool aligned = true;
      for (int l = 1; l < kWays; ++l) aligned = aligned && block[l].m_next == block[0].m_next;
      if (!aligned) break;
      double* o = out + c;
      std::size_t t = 0;
      for (; t < count && block[0].m_next != 0; ++t)
        for (int l = 0; l < kWays; ++l) o[t * stride + static_cast<std::size_t>(l)] = block[l]();
      const std::size_t rounds = (count - t) / kWays;
      static_assert(sizeof(NormalStream) % sizeof(std::uint64_t) == 0, "NormalStream: whole words");
      fill_rounds_avx512_octet(&block[0].m_s[0][0], sizeof(NormalStream) / sizeof(std::uint64_t), rounds,
                               o + t * stride, stride);
      for (t += rounds * kWays; t < count; ++t)
        for (int l = 0; l < kWays; ++l) o[t * stride + static_cast<std::size_t>(l)] = block[l]();
    }
    // The rest in pairs.
    constexpr int P = 2;  // 4 measured no faster
    for (; c + P <= lanes; c += P) {
      std::size_t t = 0;
      auto all_aligned = [&] {
        for (int p = 0; p < P; ++p)
          if (streams[c + p].m_next != 0) return false;
        return true;
      };
      for (; t < count && !all_aligned(); ++t)
        for (int p = 0; p < P; ++p) out[c + p + t * stride] = streams[c + p]();
      const std::size_t groups = (count - t) / kWays;
      StreamState states[P];
      for (int p = 0; p < P; ++p) states[p] = streams[c + p].m_s;
      fill_groups_avx512_multi<P>(states, groups, out + c + t * stride, stride);
      for (t += groups * kWays; t < count; ++t)
        for (int p = 0; p < P; ++p) out[c + p + t * stride] = streams[c + p]();
    }
  }
#endif
  for (; c < lanes; ++c) streams[c].fill(count, out + c, stride);
}

namespace detail {

void fill_uniform_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept {
  ChainEngine local = rng;
  for (std::size_t t = 0; t < count; ++t) out[t] = static_cast<Index>(uniform_below(local, n));
  rng = local;
}

void fill_permutation(ChainEngine& rng, Index n, Index* out) noexcept {
  for (Index i = 0; i < n; ++i) out[i] = i;
  ChainEngine local = rng;
  for (Index i = n - 1; i > 0; --i) {
    const auto j = static_cast<Index>(uniform_below(local, static_cast<std::uint64_t>(i) + 1));
    std::swap(out[i], out[j]);
  }
  rng = local;
}

}  // namespace detail

}  // namespace dualgibbs
