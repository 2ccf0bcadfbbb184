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

// Boost's ziggurat for a 64-bit engine draws one word u and uses bucket = u & 0xff (sign = bit 0, layer i = bits
// 1..7) and r = double((u & ~2^11) >> 8) 2^-56; it returns x = r * X[i], with its sign, when x < X[i + 1] (the
// common branch, 97.2% of draws: the top layer never takes it), and otherwise continues with wedge and tail tests
// that draw more words. A NormalStream takes that first word of deviate t from sub-stream t mod 8 and, when it
// misses the common branch, draws everything after it from the chain's tail stream (see NormalStream), so the
// eight sub-streams advance by exactly one word per deviate and the vector paths below never wait for a rare draw:
// they evaluate the common branch eight sub-streams at a time and queue the misses, which are finished afterwards,
// in deviate order, by the scalar code of finish_from_tail() (2.8% of draws).
constexpr int kWays = NormalStream::kWays;
using StreamState = std::uint64_t (*)[kWays];

// Boost's table_x scaled by 2^-56: r X[i] = (v 2^-56) X[i] = v (X[i] 2^-56) as real numbers, and both products
// round that same real number once (no subnormals arise), so the scaled table saves a multiplication, exactly.
struct ScaledTableX {
  alignas(64) double x[129];
  ScaledTableX() noexcept {
    for (int i = 0; i < 129; ++i) x[i] = boost::random::detail::normal_table<double>::table_x[i] * 0x1.0p-56;
  }
};
const ScaledTableX scaled_table_x;

// One 64-bit word per layer i < 128 for the AVX-512 common branch, which then gathers once per eight words instead of
// twice (gathers are slow on AMD Zen 4): bits 0..51 hold the mantissa of X[i] 2^-56 and bits 52..53 its exponent
// above exponent_base, so (word & kScaleMask) + exponent_base is X[i] 2^-56 exactly; bits 54..63 hold c_i = T_i /
// 2^46 (rounded down), where T_i is the least 56-bit integer v whose x = v (X[i] 2^-56) is not below X[i + 1] (x is
// nondecreasing in v). A word is a candidate miss when v / 2^46 >= c_i: every miss is one (v >= T_i), and a
// candidate with v < T_i (about one word in a thousand) takes the common branch in finish_from_tail(), so the
// deviates are those of the two-table test, bit for bit. `ok` is false if Boost's table ever spanned more than four
// exponents; the AVX-512 path is then not used.
struct PackedLayers {
  static constexpr std::uint64_t kScaleMask = (std::uint64_t{1} << 54) - 1;
  static constexpr int kThresholdShift = 54;
  static constexpr int kCoarseShift = 46;  // v < 2^56: v >> 46 has the threshold's 10 bits
  alignas(64) std::uint64_t word[128];
  std::uint64_t exponent_base = 0;
  bool ok = true;

  PackedLayers() noexcept {
    const double* table_x = boost::random::detail::normal_table<double>::table_x;
    std::uint64_t bits[128];
    std::uint64_t low = ~std::uint64_t{0};
    for (int i = 0; i < 128; ++i) {
      std::memcpy(&bits[i], &scaled_table_x.x[i], sizeof(double));
      low = std::min(low, bits[i] >> 52);
    }
    exponent_base = low << 52;
    for (int i = 0; i < 128; ++i) {
      ok = ok && (bits[i] >> 52) - low <= 3 && scaled_table_x.x[i] > 0;
      // T_i by bisection over [0, 2^56]: the least v with v (X[i] 2^-56) >= X[i + 1] (2^56 stands for none).
      std::uint64_t lo = 0, hi = std::uint64_t{1} << 56;
      while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (static_cast<double>(mid) * scaled_table_x.x[i] >= table_x[i + 1])
          hi = mid;
        else
          lo = mid + 1;
      }
      const std::uint64_t coarse = std::min<std::uint64_t>(lo >> kCoarseShift, 1023);
      word[i] = (bits[i] - exponent_base) | (coarse << kThresholdShift);
    }
  }
};
const PackedLayers packed_layers;

// The magnitude x = r X[i] of a first word u (one rounding of the 56-bit integer, one of the product).
inline double first_magnitude(std::uint64_t u) noexcept {
  const std::uint64_t v = (u & ~(std::uint64_t{1} << 11)) >> 8;
  return static_cast<double>(v) * scaled_table_x.x[(u & 0xff) >> 1];
}
// x with Boost's sign of u (+ when bit 0 is set), exactly.
inline double with_sign(double x, std::uint64_t u) noexcept { return (u & 1) ? x : -x; }

// Boost's ziggurat after a first draw (layer i, magnitude x = r X[i], sign +-1) that missed the common branch: the
// tail for the base layer, otherwise one uniform y01 and the wedge test between the chord and tangent bounds, with
// exp only between them; a rejection starts over with a full draw. The same operations in the same order as
// boost::random::detail::unit_normal_distribution (Boost 1.74 to 1.83).
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

// The deviate of a first word u that missed the common branch, finished from the tail stream `tail` (its four
// state words, advanced).
// The vector path's candidates include a few words that take the common branch after all (PackedLayers): for
// those the deviate is the common branch's, and the tail stream is not touched.
__attribute__((noinline)) double finish_from_tail(std::uint64_t* tail, std::uint64_t u) noexcept {
  const auto i = static_cast<int>((u & 0xff) >> 1);
  if (first_magnitude(u) < boost::random::detail::normal_table<double>::table_x[i + 1])
    return with_sign(first_magnitude(u), u);
  ChainEngine e({tail[0], tail[1], tail[2], tail[3]});
  const double sign = (u & 1) ? 1.0 : -1.0;
  const double x = i == 0 ? continue_tail(e, sign) : continue_wedge(e, i, first_magnitude(u), sign);
  for (int w = 0; w < 4; ++w) tail[w] = e.state()[static_cast<std::size_t>(w)];
  return x;
}

// One deviate from sub-stream k of `state` (one word) and, if it misses the common branch, the tail stream.
inline double draw_scalar(StreamState state, int k, std::uint64_t* tail) noexcept {
  ChainEngine e({state[0][k], state[1][k], state[2][k], state[3][k]});
  const std::uint64_t u = e();
  for (int w = 0; w < 4; ++w) state[w][k] = e.state()[static_cast<std::size_t>(w)];
  const double x = first_magnitude(u);
  if (x < boost::random::detail::normal_table<double>::table_x[((u & 0xff) >> 1) + 1]) return with_sign(x, u);
  return finish_from_tail(tail, u);
}

// Portable path: the deviates one after the other.
void fill_groups_scalar(StreamState state, std::uint64_t* tail, std::size_t groups, double* out,
                        std::size_t stride) noexcept {
  for (std::size_t d = 0; d < groups * kWays; ++d)
    out[d * stride] = draw_scalar(state, static_cast<int>(d % kWays), tail);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DUALGIBBS_HAVE_SIMD_PATHS 1

// ---- AVX2: the eight sub-streams as two halves of four lanes ----
// The 56-bit integer is converted exactly rounded as hi 2^24 + lo, with hi, lo < 2^32 converted exactly by the 2^52
// trick: a single correctly rounded addition, hence equal to the direct conversion. Then x = (that 2^-56) X[i]: the
// scaling by 2^-56 is exact, so this is the scalar path's one rounding of v X[i] 2^-56.
struct Avx2Half {
  __m256i s0, s1, s2, s3;
};

__attribute__((target("avx2"))) inline __m256i rotl256(__m256i x, int k) noexcept {
  return _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - k));
}

// One xoshiro256++ step of four sub-streams: returns their output words.
__attribute__((target("avx2"))) inline __m256i avx2_step(Avx2Half& h) noexcept {
  const __m256i u = _mm256_add_epi64(rotl256(_mm256_add_epi64(h.s0, h.s3), 23), h.s0);
  const __m256i t = _mm256_slli_epi64(h.s1, 17);
  h.s2 = _mm256_xor_si256(h.s2, h.s0);
  h.s3 = _mm256_xor_si256(h.s3, h.s1);
  h.s1 = _mm256_xor_si256(h.s1, h.s2);
  h.s0 = _mm256_xor_si256(h.s0, h.s3);
  h.s2 = _mm256_xor_si256(h.s2, t);
  h.s3 = rotl256(h.s3, 45);
  return u;
}

// One draw of four sub-streams: returns the candidate deviates, sets `accept` (bit k: lane k took the common
// branch) and leaves the words drawn in `u`.
__attribute__((target("avx2"))) inline __m256d avx2_draw(Avx2Half& h, __m256i& u, int& accept,
                                                         const double* table_x) noexcept {
  u = avx2_step(h);
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

// Replaces the deviates of the lanes not in `accept` (out[k * stride], k < 4) by their finish from the tail stream.
__attribute__((target("avx2"))) __attribute__((noinline)) void avx2_fix(__m256i u, int accept, std::uint64_t* tail,
                                                                        double* out, std::size_t stride) noexcept {
  alignas(32) std::uint64_t us[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(us), u);
  for (int k = 0; k < 4; ++k)
    if (!(accept & (1 << k))) out[static_cast<std::size_t>(k) * stride] = finish_from_tail(tail, us[k]);
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

__attribute__((target("avx2"))) void fill_groups_avx2(StreamState state, std::uint64_t* tail, std::size_t groups,
                                                      double* out, std::size_t stride) noexcept {
  const double* table_x = boost::random::detail::normal_table<double>::table_x;
  Avx2Half a, b;
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
    __m256i ua, ub;
    const __m256d ra = avx2_draw(a, ua, acc_a, table_x);
    const __m256d rb = avx2_draw(b, ub, acc_b, table_x);
    double* o = out + kWays * g * stride;
    store4(o, stride, ra);
    store4(o + 4 * stride, stride, rb);
    if (__builtin_expect((acc_a & acc_b) != 0xf, 0)) {  // in deviate order: lanes 0..3, then 4..7
      if (acc_a != 0xf) avx2_fix(ua, acc_a, tail, o, stride);
      if (acc_b != 0xf) avx2_fix(ub, acc_b, tail, o + 4 * stride, stride);
    }
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

// One xoshiro256++ output per sub-stream.
DUALGIBBS_AVX512 inline __m512i xoshiro512(Zig512& z) noexcept {
  const __m512i s0 = z.s[0], s1 = z.s[1], s2 = z.s[2], s3 = z.s[3];
  const __m512i u = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(s0, s3), 23), s0);
  const __m512i t = _mm512_slli_epi64(s1, 17);
  const __m512i n2 = _mm512_xor_si512(s2, s0);
  const __m512i n3 = _mm512_xor_si512(s3, s1);
  z.s[1] = _mm512_xor_si512(s1, n2);
  z.s[0] = _mm512_xor_si512(s0, n3);
  z.s[2] = _mm512_xor_si512(n2, t);
  z.s[3] = _mm512_rol_epi64(n3, 45);
  return u;
}

// The common branch on eight words u: x = v (X[i] 2^-56) (vcvtuqq2pd rounds once, as the scalar conversion), the
// signed deviate, and the mask of the candidate misses (PackedLayers: every miss, x >= X[i + 1], and about one word
// in a thousand that finish_from_tail() finds to take the common branch after all). One gather per eight words, of
// packed_layers.word[i] at byte offset (u & 0xfe) * 4.
DUALGIBBS_AVX512 inline __m512d draw_common(Zig512& z, __m512i& u, __mmask8& miss) noexcept {
  u = xoshiro512(z);
  const __m512i v = _mm512_srli_epi64(_mm512_and_si512(u, _mm512_set1_epi64(~(1LL << 11))), 8);
  const __m512i packed = _mm512_i64gather_epi64(_mm512_and_si512(u, _mm512_set1_epi64(0xfe)), packed_layers.word, 4);
  const __m512i scale_bits =
      _mm512_add_epi64(_mm512_and_si512(packed, _mm512_set1_epi64(static_cast<long long>(PackedLayers::kScaleMask))),
                       _mm512_set1_epi64(static_cast<long long>(packed_layers.exponent_base)));
  const __m512d x = _mm512_mul_pd(_mm512_cvtepu64_pd(v), _mm512_castsi512_pd(scale_bits));
  miss = _mm512_cmpge_epu64_mask(_mm512_srli_epi64(v, PackedLayers::kCoarseShift),
                                 _mm512_srli_epi64(packed, PackedLayers::kThresholdShift));
  // x ^ (u << 63) ^ (1 << 63): x with the sign of bit 0 of u, as one three-way exclusive or.
  return _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(x), _mm512_slli_epi64(u, 63),
                                                       _mm512_set1_epi64(static_cast<long long>(1ULL << 63)), 0x96));
}

// The candidate misses of up to kBatch vector draws: the words of the missing lanes (a masked store) and one mask
// per draw, finished after the batch by finish_from_tail() in the order drawn (draw by draw, lane by lane).
struct MissQueue {
  static constexpr std::size_t kBatch = 64;  // vector draws between two finishes
  alignas(64) std::uint64_t u[kBatch][kWays];
  std::uint8_t mask[kBatch];
  std::uint64_t drawn_with_miss = 0;  // bit t: draw t has a candidate

  DUALGIBBS_AVX512 void push(std::size_t t, __m512i words, __mmask8 miss) noexcept {
    _mm512_mask_storeu_epi64(u[t], miss, words);
    mask[t] = static_cast<std::uint8_t>(miss);
    drawn_with_miss |= static_cast<std::uint64_t>(miss != 0) << t;
  }
  // out[offset(t, k)] = the finished deviate of lane k of draw t, from the tail stream tail(t, k).
  template <class Offset, class Tail>
  void finish(double* out, Offset offset, Tail tail) noexcept {
    for (std::uint64_t draws = drawn_with_miss; draws != 0; draws &= draws - 1) {
      const auto t = static_cast<std::size_t>(__builtin_ctzll(draws));
      for (unsigned lanes = mask[t]; lanes != 0; lanes &= lanes - 1) {
        const auto k = static_cast<std::size_t>(__builtin_ctz(lanes));
        out[offset(t, k)] = finish_from_tail(tail(t, k), u[t][k]);
      }
    }
    drawn_with_miss = 0;
  }
};

DUALGIBBS_AVX512 void fill_groups_avx512(StreamState state, std::uint64_t* tail, std::size_t groups, double* out,
                                         std::size_t stride) noexcept {
  Zig512 z;
  for (int w = 0; w < 4; ++w) z.s[w] = _mm512_loadu_si512(state[w]);
  const __m512i index =
      _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(static_cast<long long>(stride)));
  MissQueue queue;
  for (std::size_t g0 = 0; g0 < groups; g0 += MissQueue::kBatch) {
    const std::size_t g1 = std::min(groups, g0 + MissQueue::kBatch);
    double* base = out + kWays * g0 * stride;
    for (std::size_t g = g0; g < g1; ++g) {
      __m512i u;
      __mmask8 miss;
      const __m512d res = draw_common(z, u, miss);
      const std::size_t first = kWays * (g - g0) * stride;  // offset of this group's first deviate from base
      if (stride == 1)
        _mm512_storeu_pd(base + first, res);
      else
        _mm512_i64scatter_pd(base + first, index, res, 8);
      queue.push(g - g0, u, miss);
    }
    queue.finish(
        base, [&](std::size_t t, std::size_t k) { return (kWays * t + k) * stride; },
        [&](std::size_t, std::size_t) { return tail; });
  }
  for (int w = 0; w < 4; ++w) _mm512_storeu_si512(state[w], z.s[w]);
}

// P NormalStreams at once (P < stride lanes of a sampler, interleaved with that stride): their common branches
// overlap in the out-of-order core.
template <int P>
DUALGIBBS_AVX512 void fill_groups_avx512_multi(StreamState* states, std::uint64_t* const* tails, std::size_t groups,
                                               double* out, std::size_t stride) noexcept {
  Zig512 z[P];
  for (int p = 0; p < P; ++p)
    for (int w = 0; w < 4; ++w) z[p].s[w] = _mm512_loadu_si512(states[p][w]);
  const __m512i index =
      _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(static_cast<long long>(stride)));
  MissQueue queue;
  for (std::size_t g0 = 0; g0 < groups; g0 += MissQueue::kBatch / P) {
    const std::size_t g1 = std::min(groups, g0 + MissQueue::kBatch / P);
    double* base = out + kWays * g0 * stride;
    for (std::size_t g = g0; g < g1; ++g) {
      for (int p = 0; p < P; ++p) {
        __m512i u;
        __mmask8 miss;
        const __m512d res = draw_common(z[p], u, miss);
        const std::size_t first = kWays * (g - g0) * stride + static_cast<std::size_t>(p);
        _mm512_i64scatter_pd(base + first, index, res, 8);
        queue.push((g - g0) * P + static_cast<std::size_t>(p), u, miss);
      }
    }
    queue.finish(
        base, [&](std::size_t t, std::size_t k) { return (kWays * (t / P) + k) * stride + t % P; },
        [&](std::size_t t, std::size_t) { return tails[t % P]; });
  }
  for (int p = 0; p < P; ++p)
    for (int w = 0; w < 4; ++w) _mm512_storeu_si512(states[p][w], z[p].s[w]);
}
// Eight lanes of a sampler at once, transposed: vector lane l holds chain c + l. Deviate t of all eight chains
// comes from their sub-stream t mod 8, so it is one contiguous store at out + t * stride instead of a scatter per
// lane (a scatter of eight doubles costs about as much as drawing them). The eight NormalStreams' states (word w of
// sub-stream k of lane l at first_state + l * object_words + 8 w + k) are gathered into st[k] here and scattered
// back at the end; `rounds` rounds of eight deviates per lane; lane l's misses are finished from tails[l].
DUALGIBBS_AVX512 void fill_rounds_avx512_octet(std::uint64_t* first_state, std::size_t object_words,
                                               std::uint64_t* const* tails, std::size_t rounds, double* out,
                                               std::size_t stride) noexcept {
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i offsets = _mm512_mullo_epi64(iota, _mm512_set1_epi64(static_cast<long long>(object_words)));
  Zig512 st[kWays];
  for (int k = 0; k < kWays; ++k)
    for (int w = 0; w < 4; ++w) st[k].s[w] = _mm512_i64gather_epi64(offsets, first_state + 8 * w + k, 8);
  MissQueue queue;
  const std::size_t draws = rounds * kWays;
  for (std::size_t t0 = 0; t0 < draws; t0 += MissQueue::kBatch) {
    const std::size_t t1 = std::min(draws, t0 + MissQueue::kBatch);
    double* base = out + t0 * stride;
    for (std::size_t t = t0; t < t1; ++t) {
      __m512i u;
      __mmask8 miss;
      const std::size_t first = (t - t0) * stride;
      _mm512_storeu_pd(base + first, draw_common(st[t % kWays], u, miss));
      queue.push(t - t0, u, miss);
    }
    queue.finish(
        base, [&](std::size_t t, std::size_t k) { return t * stride + k; },
        [&](std::size_t, std::size_t k) { return tails[k]; });
  }
  for (int k = 0; k < kWays; ++k)
    for (int w = 0; w < 4; ++w) _mm512_i64scatter_epi64(first_state + 8 * w + k, offsets, st[k].s[w], 8);
}

#undef DUALGIBBS_AVX512
#pragma GCC diagnostic pop
#endif

// ---- uniform site indices --------------------------------------------------------------------------------
// fill_uniform_indices() draws its indices from eight sub-streams seeded from the caller's stream, two 32-bit
// indices per 64-bit word, so that the AVX-512 and AVX2 paths draw 16 of them with one vector xoshiro256++ step and
// two 32 x 32-bit multiplications. Index t = 16 g + 8 h + k is Lemire's multiply-shift on half h (0: low, 1: high)
// of word g of sub-stream k; the rare value that Lemire's test must look at again (low product below n, probability
// n / 2^32 per index) is redone by lemire32() in order, its redraws coming from the caller's stream.

// floor(value n / 2^32) for a uniform 32-bit value, with Lemire's rejection: exactly uniform on [0, n).
inline std::uint32_t lemire32(std::uint32_t value, std::uint32_t n, ChainEngine& rng) noexcept {
  std::uint64_t m = std::uint64_t{value} * n;
  if (static_cast<std::uint32_t>(m) < n) {
    const std::uint32_t threshold = (0u - n) % n;
    while (static_cast<std::uint32_t>(m) < threshold) m = (rng() >> 32) * n;
  }
  return static_cast<std::uint32_t>(m >> 32);
}

// The eight sub-streams of one call: state word w of sub-stream k = mix64 of output 4 k + w of the caller's stream.
inline void seed_index_substreams(ChainEngine& rng, std::uint64_t (&s)[4][kWays]) noexcept {
  for (int k = 0; k < kWays; ++k) {
    for (int w = 0; w < 4; ++w) s[w][k] = mix64(rng());
    if ((s[0][k] | s[1][k] | s[2][k] | s[3][k]) == 0) s[0][k] = 1;  // the forbidden state; never seen in practice
  }
}

// Indices 16 g .. 16 g + 15 (those below count) from the eight words of group g.
inline void indices_from_words(const std::uint64_t* words, std::uint32_t n, ChainEngine& rng, std::size_t first,
                               std::size_t count, Index* out) noexcept {
  for (std::size_t j = 0; j < 2 * kWays && first + j < count; ++j) {
    const std::uint64_t word = words[j % kWays];
    const auto value = static_cast<std::uint32_t>(j < kWays ? word : word >> 32);
    out[first + j] = static_cast<Index>(lemire32(value, n, rng));
  }
}

// At most 16 indices, on every path: they take the first word of sub-streams 0 .. min(count, 8) - 1, and xoshiro256++'s
// first word rotl(s0 + s3, 23) + s0 reads only state words 0 and 3, so only those two words of the used sub-streams
// are mixed (10 of the 32 mix64 when a chain of 5 sites draws its 5 indices); the caller's stream still gives its 32
// seeding words. The same words, hence the same indices, as seeding all eight sub-streams.
void fill_few_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept {
  const auto used = static_cast<int>(std::min<std::size_t>(count, kWays));
  std::uint64_t words[kWays] = {};
  ChainEngine e = rng;  // a copy whose address does not escape, so that its state stays in registers
  for (int k = 0; k < kWays; ++k) {
    if (k >= used) {  // an unused sub-stream's four seeding words: the stream advances, the outputs are not needed
      for (int w = 0; w < 4; ++w) e();
      continue;
    }
    const std::uint64_t w0 = e(), w1 = e(), w2 = e(), w3 = e();
    std::uint64_t s0 = mix64(w0);
    const std::uint64_t s3 = mix64(w3);
    if ((s0 | s3) == 0 && (mix64(w1) | mix64(w2)) == 0) s0 = 1;  // the forbidden state, as seed_index_substreams
    const std::uint64_t sum = s0 + s3;
    words[k] = ((sum << 23) | (sum >> 41)) + s0;
  }
  rng = e;
  indices_from_words(words, n, rng, 0, count, out);
}

void fill_indices_scalar(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept {
  std::uint64_t s[4][kWays];
  seed_index_substreams(rng, s);
  for (std::size_t first = 0; first < count; first += 2 * kWays) {
    std::uint64_t words[kWays];
    for (int k = 0; k < kWays; ++k) {
      ChainEngine e({s[0][k], s[1][k], s[2][k], s[3][k]});
      words[k] = e();
      for (int w = 0; w < 4; ++w) s[w][k] = e.state()[static_cast<std::size_t>(w)];
    }
    indices_from_words(words, n, rng, first, count, out);
  }
}

#ifdef DUALGIBBS_HAVE_SIMD_PATHS
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
__attribute__((target("avx512f,avx512dq"))) void fill_indices_avx512(ChainEngine& rng, std::uint32_t n,
                                                                     std::size_t count, Index* out) noexcept {
  std::uint64_t s[4][kWays];
  seed_index_substreams(rng, s);
  Zig512 z;
  for (int w = 0; w < 4; ++w) z.s[w] = _mm512_loadu_si512(s[w]);
  const __m512i nv = _mm512_set1_epi64(static_cast<long long>(n));
  const __m512i low32 = _mm512_set1_epi64(0xffffffffLL);
  std::size_t first = 0;
  for (; first + 2 * kWays <= count; first += 2 * kWays) {
    const __m512i u = xoshiro512(z);
    const __m512i mlo = _mm512_mul_epu32(u, nv);
    const __m512i mhi = _mm512_mul_epu32(_mm512_srli_epi64(u, 32), nv);
    const __mmask8 recheck = _mm512_cmplt_epu64_mask(_mm512_and_si512(mlo, low32), nv) |
                             _mm512_cmplt_epu64_mask(_mm512_and_si512(mhi, low32), nv);
    if (__builtin_expect(recheck != 0, 0)) {
      alignas(64) std::uint64_t words[kWays];
      _mm512_store_si512(words, u);
      indices_from_words(words, n, rng, first, count, out);
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + first), _mm512_cvtepi64_epi32(_mm512_srli_epi64(mlo, 32)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + first + kWays),
                        _mm512_cvtepi64_epi32(_mm512_srli_epi64(mhi, 32)));
  }
  if (first < count) {
    alignas(64) std::uint64_t words[kWays];
    _mm512_store_si512(words, xoshiro512(z));
    indices_from_words(words, n, rng, first, count, out);
  }
}
#pragma GCC diagnostic pop

__attribute__((target("avx2"))) void fill_indices_avx2(ChainEngine& rng, std::uint32_t n, std::size_t count,
                                                       Index* out) noexcept {
  std::uint64_t s[4][kWays];
  seed_index_substreams(rng, s);
  Avx2Half half[2];
  for (int q = 0; q < 2; ++q) {
    half[q].s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[0] + 4 * q));
    half[q].s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[1] + 4 * q));
    half[q].s2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[2] + 4 * q));
    half[q].s3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[3] + 4 * q));
  }
  const __m256i nv = _mm256_set1_epi64x(static_cast<long long>(n));
  const __m256i low32 = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i even = _mm256_setr_epi32(1, 3, 5, 7, 0, 0, 0, 0);  // the high halves of four 64-bit products
  for (std::size_t first = 0; first < count; first += 2 * kWays) {
    const __m256i u[2] = {avx2_step(half[0]), avx2_step(half[1])};
    __m256i m[2][2];  // m[h][q]: half h of the words of sub-streams 4 q .. 4 q + 3, times n
    int recheck = 0;
    for (int q = 0; q < 2; ++q) {
      m[0][q] = _mm256_mul_epu32(u[q], nv);
      m[1][q] = _mm256_mul_epu32(_mm256_srli_epi64(u[q], 32), nv);
      for (int h = 0; h < 2; ++h)  // the low products are below 2^32, so a signed comparison is exact
        recheck |= _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(nv, _mm256_and_si256(m[h][q], low32))));
    }
    if (__builtin_expect(recheck != 0 || first + 2 * kWays > count, 0)) {
      alignas(32) std::uint64_t words[kWays];
      _mm256_store_si256(reinterpret_cast<__m256i*>(words), u[0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(words + 4), u[1]);
      indices_from_words(words, n, rng, first, count, out);
      continue;
    }
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 2; ++q)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + first + kWays * h + 4 * q),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(m[h][q], even)));
  }
}
#endif

using FillGroups = void (*)(StreamState, std::uint64_t*, std::size_t, double*, std::size_t) noexcept;

// Chosen once, by what the CPU running the library supports (the default build stays portable; every path gives
// the same bits).
FillGroups choose_fill_groups() noexcept {
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && packed_layers.ok)
    return fill_groups_avx512;
  if (__builtin_cpu_supports("avx2")) return fill_groups_avx2;
#endif
  return fill_groups_scalar;
}

FillGroups fill_groups = choose_fill_groups();

// The index path goes with the deviate path (one switch for tests and benchmarks; all give the same indices).
using FillIndices = void (*)(ChainEngine&, std::uint32_t, std::size_t, Index*) noexcept;
FillIndices indices_path_for(FillGroups deviates) noexcept {
#ifdef DUALGIBBS_HAVE_SIMD_PATHS
  if (deviates == fill_groups_avx512) return fill_indices_avx512;
  if (deviates == fill_groups_avx2) return fill_indices_avx2;
#endif
  return fill_indices_scalar;
}
FillIndices fill_indices = indices_path_for(fill_groups);

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
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") || !packed_layers.ok) return nullptr;
    fill_groups = fill_groups_avx512;
#endif
  } else {
    return nullptr;
  }
  fill_indices = indices_path_for(fill_groups);
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
  const ChainEngine tail = make_stream(seed, chain, StreamPurpose::Noise, kWays);
  for (int w = 0; w < 4; ++w) m_tail[w] = tail.state()[static_cast<std::size_t>(w)];
}

ChainEngine NormalStream::substream(int k) const {
  if (k < 0 || k >= kWays) throw std::invalid_argument("NormalStream::substream: k = " + std::to_string(k));
  return ChainEngine({m_s[0][k], m_s[1][k], m_s[2][k], m_s[3][k]});
}

ChainEngine NormalStream::tail_stream() const { return ChainEngine({m_tail[0], m_tail[1], m_tail[2], m_tail[3]}); }

double NormalStream::operator()() noexcept {
  const auto k = static_cast<int>(m_next);
  m_next = (m_next + 1) % kWays;
  return draw_scalar(m_s, k, m_tail);
}

void NormalStream::fill(std::size_t count, double* out, std::size_t stride) noexcept {
  std::size_t t = 0;
  for (; t < count && m_next != 0; ++t) out[t * stride] = (*this)();
  const std::size_t groups = (count - t) / kWays;
  fill_groups(m_s, m_tail, groups, out + t * stride, stride);
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
      std::uint64_t* tails[kWays];
      for (int l = 0; l < kWays; ++l) tails[l] = block[l].m_tail;
      fill_rounds_avx512_octet(&block[0].m_s[0][0], sizeof(NormalStream) / sizeof(std::uint64_t), tails, rounds,
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
      std::uint64_t* tails[P];
      for (int p = 0; p < P; ++p) {
        states[p] = streams[c + p].m_s;
        tails[p] = streams[c + p].m_tail;
      }
      fill_groups_avx512_multi<P>(states, tails, groups, out + c + t * stride, stride);
      for (t += groups * kWays; t < count; ++t)
        for (int p = 0; p < P; ++p) out[c + p + t * stride] = streams[c + p]();
    }
  }
#endif
  for (; c < lanes; ++c) streams[c].fill(count, out + c, stride);
}

namespace detail {

void fill_uniform_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept {
  if (count == 0) return;
  ChainEngine local = rng;
  if (count <= 2 * kWays)
    fill_few_indices(local, n, count, out);
  else
    fill_indices(local, n, count, out);
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
