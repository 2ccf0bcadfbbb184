// Tests of sampler.hpp: kernels against dense formulas, the CSR and dual kernels running the same chain, scan
// orders, random streams, Gauss–Seidel, and bad input. Statistical checks state their false-failure probability.
#define BOOST_TEST_MODULE sampler
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/sampling/sampler.hpp>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/random/normal_distribution.hpp>

#include "sampler_oracles.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <type_traits>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

VectorXd random_vector(Index n, std::uint64_t seed) {
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Initial);
  VectorXd v(n);
  for (Index i = 0; i < n; ++i) v[i] = standard_normal(rng);
  return v;
}

// Interleaved copy of W lanes: lane c of coordinate i at out[i * W + c].
template <int W>
std::vector<double> interleave(const std::vector<VectorXd>& lanes) {
  std::vector<double> out(static_cast<std::size_t>(lanes[0].size()) * W);
  for (int c = 0; c < W; ++c)
    for (Index i = 0; i < lanes[0].size(); ++i) out[static_cast<std::size_t>(i) * W + c] = lanes[c][i];
  return out;
}

// Relative maximum difference.
double rel_diff(const VectorXd& a, const VectorXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scan_and_streams)

BOOST_AUTO_TEST_CASE(parses_scan_orders_and_rejects_unknown) {
  BOOST_TEST((parse_scan_order("random") == ScanOrder::Random));
  BOOST_TEST((parse_scan_order("permutation") == ScanOrder::Permutation));
  BOOST_TEST((parse_scan_order("fixed") == ScanOrder::Fixed));
  for (ScanOrder s : {ScanOrder::Random, ScanOrder::Permutation, ScanOrder::Fixed})
    BOOST_TEST((parse_scan_order(to_string(s)) == s));
  BOOST_CHECK_THROW(parse_scan_order("systematic"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_scan_order(""), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(streams_are_reproducible_and_distinct) {
  BOOST_TEST((make_stream(7, 3, StreamPurpose::Noise) == make_stream(7, 3, StreamPurpose::Noise)));
  std::set<std::array<std::uint64_t, 4>> states;
  for (std::uint64_t seed : {0ULL, 1ULL, 2ULL, ~0ULL})
    for (std::uint64_t chain = 0; chain < 200; ++chain)
      for (auto p : {StreamPurpose::Schedule, StreamPurpose::Noise, StreamPurpose::Initial})
        for (std::uint64_t sub = 0; sub < 4; ++sub) states.insert(make_stream(seed, chain, p, sub).state());
  BOOST_TEST(states.size() == 4u * 200u * 3u * 4u);
  BOOST_CHECK_THROW(ChainEngine({0, 0, 0, 0}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(xoshiro256plusplus_matches_its_definition) {
  // Recomputes xoshiro256++ from its published definition (Blackman and Vigna 2019) with plain arithmetic.
  std::uint64_t s[4] = {1, 2, 3, 4};
  ChainEngine e({1, 2, 3, 4});
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  for (int t = 0; t < 1000; ++t) {
    const std::uint64_t expect = rotl(s[0] + s[3], 23) + s[0];
    const std::uint64_t u = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= u, s[3] = rotl(s[3], 45);
    BOOST_REQUIRE_EQUAL(e(), expect);
  }
  // The first output from {1, 2, 3, 4} is rotl(1 + 4, 23) + 1 = 41943041.
  ChainEngine f({1, 2, 3, 4});
  BOOST_TEST(f() == 41943041u);
}

BOOST_AUTO_TEST_CASE(standard_normal_is_boost_ziggurat_on_the_stream) {
  ChainEngine a = make_stream(5, 0, StreamPurpose::Noise), b = a;
  boost::random::normal_distribution<double> boost_normal;
  for (int t = 0; t < 1000; ++t) BOOST_REQUIRE_EQUAL(standard_normal(a), boost_normal(b));
  BOOST_TEST((a == b));
}

// An engine that yields the word `first` once and then the words of `tail`: Boost's normal_distribution on it is the
// reference for a NormalStream deviate (Boost's first step on the sub-stream's word, everything after it on the
// chain's tail stream).
struct SplicedEngine {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  std::uint64_t first;
  ChainEngine* tail;
  bool used = false;
  result_type operator()() {
    if (used) return (*tail)();
    used = true;
    return first;
  }
};

// Deviate t of a NormalStream by its definition, from Boost itself: sub-streams ref[0..8) and tail stream `tail`.
double reference_deviate(std::vector<ChainEngine>& ref, ChainEngine& tail, std::size_t t) {
  SplicedEngine e{ref[t % 8](), &tail};
  boost::random::normal_distribution<double> boost_normal;
  return boost_normal(e);
}

BOOST_AUTO_TEST_CASE(normal_stream_is_boost_ziggurat_with_a_tail_stream) {
  // Deviate t of NormalStream(seed, chain) must be, bit for bit, Boost's normal_distribution on an engine that yields
  // one word of sub-stream t mod 8 = make_stream(seed, chain, Noise, t mod 8) and then the words of the tail stream
  // make_stream(seed, chain, Noise, 8), whether drawn one by one or by fill() with any count and stride, on every
  // implementation this CPU supports (scalar, AVX2, AVX-512). 3 x 2e6 draws per path exercise the vectorized common
  // branch and, about 5.6e4 times each, the continuation (wedge, exp, base-layer tail, restarts). Deterministic.
  int paths = 0;
  for (const char* path : {"scalar", "avx2", "avx512", "auto"}) {
    if (!detail::select_normal_path(path)) continue;  // not supported by this CPU
    ++paths;
    BOOST_TEST_MESSAGE("NormalStream path " << path);
    for (std::uint64_t chain : {0u, 1u, 977u}) {
      NormalStream ns(42, chain);
      std::vector<ChainEngine> ref;
      for (int k = 0; k < 8; ++k)
        ref.push_back(make_stream(42, chain, StreamPurpose::Noise, static_cast<std::uint64_t>(k)));
      ChainEngine tail = make_stream(42, chain, StreamPurpose::Noise, 8);
      std::vector<double> buf(3 * 4099);
      std::size_t t = 0, mismatches = 0;
      const std::size_t counts[] = {1, 4099, 7, 1024, 3, 2048, 5, 4096};
      std::size_t step = 0;
      while (t < 2000000) {
        const std::size_t count = counts[step % 8], stride = 1 + step % 3;
        ++step;
        if (count == 1) {
          buf[0] = ns();
        } else {
          ns.fill(count, buf.data(), stride);
        }
        for (std::size_t i = 0; i < count; ++i, ++t)
          if (buf[i * (count == 1 ? 1 : stride)] != reference_deviate(ref, tail, t)) ++mismatches;
      }
      BOOST_TEST(mismatches == 0u);
      for (int k = 0; k < 8; ++k) BOOST_TEST((ns.substream(k) == ref[static_cast<std::size_t>(k)]));
      BOOST_TEST((ns.tail_stream() == tail));
      BOOST_TEST(ns.next_way() == static_cast<int>(t % 8));
    }
  }
  BOOST_TEST(paths >= 2);
  BOOST_TEST(detail::select_normal_path("none") == nullptr);
  BOOST_TEST(detail::select_normal_path("auto") != nullptr);
}

BOOST_AUTO_TEST_CASE(normal_stream_deviates_are_standard_normal) {
  // 4e6 deviates of one NormalStream (the automatic path; the test above shows every path gives the same bits):
  // mean and variance within 5.7 standard errors (each two-sided, false-failure probability 1.2e-8; the variance's
  // standard error is sqrt(2 / N)), and a chi-square test on 24 bins that resolve the tails, edges 0, +-0.25, ...,
  // +-2.5, +-3, +-3.5 (expected 1850 deviates beyond +-3.5, the base layer's tail starts at 3.44), false-failure
  // probability 1e-7. Together below 1.3e-7. The continuation (2.8% of draws) lands mostly in the outer bins, so a
  // wrong wedge or tail would show there.
  NormalStream ns(2026, 5);
  const std::size_t n = 4000000;
  std::vector<double> z(n);
  ns.fill(n, z.data(), 1);
  double sum = 0, sum2 = 0;
  for (double v : z) {
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / static_cast<double>(n), var = sum2 / static_cast<double>(n) - mean * mean;
  BOOST_TEST(std::abs(mean) < 5.7 / std::sqrt(static_cast<double>(n)));
  BOOST_TEST(std::abs(var - 1.0) < 5.7 * std::sqrt(2.0 / static_cast<double>(n)));
  std::vector<double> edges;
  for (double e : {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5}) edges.push_back(e);
  std::vector<double> cuts;  // increasing: -3.5 ... -0.25, 0, 0.25 ... 3.5
  for (auto it = edges.rbegin(); it != edges.rend(); ++it) cuts.push_back(-*it);
  cuts.push_back(0.0);
  cuts.insert(cuts.end(), edges.begin(), edges.end());
  std::vector<double> count(cuts.size() + 1, 0.0);
  for (double v : z) count[static_cast<std::size_t>(std::upper_bound(cuts.begin(), cuts.end(), v) - cuts.begin())] += 1;
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  double chi2 = 0;
  for (std::size_t b = 0; b < count.size(); ++b) {
    const double lo = b == 0 ? 0.0 : phi(cuts[b - 1]), hi = b == cuts.size() ? 1.0 : phi(cuts[b]);
    const double expect = static_cast<double>(n) * (hi - lo);
    chi2 += (count[b] - expect) * (count[b] - expect) / expect;
  }
  BOOST_TEST(count.size() == 26u);
  BOOST_TEST(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(25), 1e-7)));
}

BOOST_AUTO_TEST_CASE(fill_lanes_equals_one_fill_per_lane) {
  // NormalStream::fill_lanes(streams, W, count, out) must put, bit for bit, streams[c].fill(count, out + c, W) at
  // lane c: for odd and even lane counts, counts that are not multiples of 8, streams whose next sub-stream differs
  // (some advanced by a few draws first), on every path this CPU has. Deterministic.
  for (const char* path : {"scalar", "avx2", "avx512"}) {
    if (!detail::select_normal_path(path)) continue;
    for (int lanes : {1, 2, 3, 8, 16}) {
      for (int skew : {0, 1}) {
        std::vector<NormalStream> a, b;
        for (int c = 0; c < lanes; ++c) {
          a.emplace_back(9, static_cast<std::uint64_t>(c));
          b.emplace_back(9, static_cast<std::uint64_t>(c));
          for (int d = 0; d < skew * (c % 3); ++d) {
            a.back()();
            b.back()();
          }
        }
        for (std::size_t count : {std::size_t{1}, std::size_t{13}, std::size_t{128}, std::size_t{1001}}) {
          std::vector<double> got(count * static_cast<std::size_t>(lanes)), want(got.size());
          NormalStream::fill_lanes(a.data(), lanes, count, got.data());
          for (int c = 0; c < lanes; ++c)
            b[static_cast<std::size_t>(c)].fill(count, want.data() + c, static_cast<std::size_t>(lanes));
          BOOST_TEST((got == want), path << ": lanes " << lanes << " skew " << skew << " count " << count);
        }
        for (int c = 0; c < lanes; ++c)
          for (int k = 0; k < NormalStream::kWays; ++k)
            BOOST_TEST((a[static_cast<std::size_t>(c)].substream(k) == b[static_cast<std::size_t>(c)].substream(k)));
        for (int c = 0; c < lanes; ++c)
          BOOST_TEST((a[static_cast<std::size_t>(c)].tail_stream() == b[static_cast<std::size_t>(c)].tail_stream()));
      }
    }
  }
  BOOST_REQUIRE(detail::select_normal_path("auto") != nullptr);
}

BOOST_AUTO_TEST_CASE(fill_lanes_finishes_many_misses_as_one_fill_per_lane) {
  // Eight and sixteen lanes of 250000 deviates: about 56000 (resp. 112000) draws miss the ziggurat's common branch, of
  // which thousands are wedge rejections that start over and hundreds fall in the base layer's tail. On AVX-512,
  // fill_lanes draws eight lanes at once (transposed) and queues their misses lane by lane; it must give, bit for bit,
  // what one fill() per lane gives (checked against Boost above), and leave the same tail streams. Run on every path
  // this CPU has. Deterministic.
  for (const char* path : {"scalar", "avx2", "avx512"}) {
    if (!detail::select_normal_path(path)) continue;
    for (int lanes : {8, 16}) {
      std::vector<NormalStream> a, b;
      for (int c = 0; c < lanes; ++c) {
        a.emplace_back(2024, static_cast<std::uint64_t>(c));
        b.emplace_back(2024, static_cast<std::uint64_t>(c));
      }
      const std::size_t count = 250000;
      std::vector<double> got(count * static_cast<std::size_t>(lanes)), want(got.size());
      NormalStream::fill_lanes(a.data(), lanes, count, got.data());
      for (int c = 0; c < lanes; ++c)
        b[static_cast<std::size_t>(c)].fill(count, want.data() + c, static_cast<std::size_t>(lanes));
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0) ++mismatches;
      BOOST_TEST(mismatches == 0u, path << ": lanes " << lanes);
      for (int c = 0; c < lanes; ++c)
        BOOST_TEST((a[static_cast<std::size_t>(c)].tail_stream() == b[static_cast<std::size_t>(c)].tail_stream()));
    }
  }
  BOOST_REQUIRE(detail::select_normal_path("auto") != nullptr);
}

BOOST_AUTO_TEST_CASE(uniform_indices_are_uniform) {
  // Chi-square goodness of fit, n = 7 (2^32 mod 7 != 0, so the multiply-shift alone would be biased) with 700000
  // draws.
  // False-failure probability: 1e-7 (the chi-square(6) upper quantile used as the threshold).
  ChainEngine rng = make_stream(11, 0, StreamPurpose::Schedule);
  const int n = 7;
  std::vector<Index> idx(700000);
  detail::fill_uniform_indices(rng, n, idx.size(), idx.data());
  std::vector<double> count(n, 0.0);
  for (Index i : idx) {
    BOOST_REQUIRE(i >= 0 && i < n);
    count[static_cast<std::size_t>(i)] += 1;
  }
  double chi2 = 0;
  const double expect = static_cast<double>(idx.size()) / n;
  for (double c : count) chi2 += (c - expect) * (c - expect) / expect;
  const double threshold = boost::math::quantile(boost::math::complement(boost::math::chi_squared(n - 1), 1e-7));
  BOOST_TEST(chi2 < threshold);
  BOOST_TEST(uniform_below(rng, 1) == 0u);
}

// fill_uniform_indices by its definition (random.hpp), written out one index at a time.
std::vector<Index> reference_indices(ChainEngine& rng, std::uint32_t n, std::size_t count) {
  std::vector<Index> out;
  if (count == 0) return out;
  std::vector<ChainEngine> sub;
  for (int k = 0; k < 8; ++k) {
    std::array<std::uint64_t, 4> s{};
    for (auto& w : s) w = mix64(rng());
    sub.emplace_back(s);
  }
  std::uint64_t words[8] = {};
  for (std::size_t t = 0; t < count; ++t) {
    const std::size_t j = t % 16;
    if (j == 0)
      for (int k = 0; k < 8; ++k) words[k] = sub[static_cast<std::size_t>(k)]();
    std::uint64_t value = j < 8 ? (words[j] & 0xffffffffu) : (words[j - 8] >> 32);
    while (true) {  // Lemire: reject when the low 32 bits of value * n fall below 2^32 mod n
      const std::uint64_t m = value * n;
      if ((m & 0xffffffffu) >= (std::uint64_t{1} << 32) % n) {
        out.push_back(static_cast<Index>(m >> 32));
        break;
      }
      value = rng() >> 32;
    }
  }
  return out;
}

BOOST_AUTO_TEST_CASE(uniform_indices_follow_their_definition_on_every_path) {
  // Bit for bit the definition, on every path this CPU has, for counts of at most 16 (one word of each used
  // sub-stream), counts that are not multiples of 16, and for n whose rejection is frequent (n = 3 2^30 + 1: a quarter
  // of the 32-bit values are redrawn) or never needed. Deterministic.
  for (const char* path : {"scalar", "avx2", "avx512"}) {
    if (!detail::select_normal_path(path)) continue;
    for (std::uint32_t n : {1u, 7u, 10000u, 2000000u, 3u * (1u << 30) + 1u}) {
      ChainEngine a = make_stream(3, n, StreamPurpose::Schedule), b = a;
      for (std::size_t count :
           {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{8}, std::size_t{9}, std::size_t{10},
            std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{2048}, std::size_t{1001}}) {
        std::vector<Index> got(count);
        detail::fill_uniform_indices(a, n, count, got.data());
        BOOST_TEST((got == reference_indices(b, n, count)), path << ": n " << n << " count " << count);
        BOOST_TEST((a == b));
      }
    }
  }
  BOOST_REQUIRE(detail::select_normal_path("auto") != nullptr);
}

BOOST_AUTO_TEST_CASE(uniform_indices_are_uniform_when_rejection_is_frequent) {
  // n = 3 2^30 + 1 (a quarter of the values rejected): the indices in 3 equal thirds of [0, n) (sizes differ by at
  // most 1 in 1.07e9, negligible at 600000 draws) and by parity, chi-square over the 6 cells with 5 degrees of
  // freedom; false-failure probability 1e-7.
  ChainEngine rng = make_stream(13, 0, StreamPurpose::Schedule);
  const std::uint32_t n = 3u * (1u << 30) + 1u;
  std::vector<Index> idx(600000);
  for (std::size_t start = 0; start < idx.size(); start += 2048)
    detail::fill_uniform_indices(rng, n, std::min<std::size_t>(2048, idx.size() - start), idx.data() + start);
  std::vector<double> count(6, 0.0);
  for (Index i : idx) {
    const auto u = static_cast<std::uint32_t>(i);
    BOOST_REQUIRE(u < n);
    count[std::min<std::size_t>(2, u / (n / 3)) * 2 + (u & 1)] += 1;
  }
  double chi2 = 0;
  const double expect = static_cast<double>(idx.size()) / 6;
  for (double c : count) chi2 += (c - expect) * (c - expect) / expect;
  BOOST_TEST(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(5), 1e-7)));
}

BOOST_AUTO_TEST_CASE(permutations_are_permutations_and_uniform) {
  // Every ordering of 4 elements should appear with frequency 1/24: chi-square over 24 cells with 240000 draws.
  // False-failure probability: 1e-7.
  ChainEngine rng = make_stream(12, 0, StreamPurpose::Schedule);
  std::map<std::vector<Index>, double> freq;
  std::vector<Index> p(4);
  const int draws = 240000;
  for (int t = 0; t < draws; ++t) {
    detail::fill_permutation(rng, 4, p.data());
    freq[p] += 1;
  }
  BOOST_TEST(freq.size() == 24u);
  double chi2 = 0;
  for (auto& [perm, c] : freq) {
    std::vector<Index> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    BOOST_TEST((sorted == std::vector<Index>{0, 1, 2, 3}));
    chi2 += (c - draws / 24.0) * (c - draws / 24.0) / (draws / 24.0);
  }
  BOOST_TEST(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(23), 1e-7)));
}

BOOST_AUTO_TEST_SUITE_END()

// ---- kernels against dense formulas ----------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(kernels)

// The conditional mean mu_i = -M_ii^-1 sum_{j != i} M_ij z_j [eqn:sampling_general] and sd M_ii^-1/2 of every
// site, for lanes of width 2 and 4 (the dual kernel reads the tally x~ = B y~). Deterministic.
template <int W, class Kernel>
void check_conditionals(const Kernel& k, const MatrixXd& M, const MatrixXd& B) {
  const Index n = M.rows();
  std::vector<VectorXd> lanes, tallies;
  for (int c = 0; c < W; ++c) {
    lanes.push_back(random_vector(n, 1 + static_cast<std::uint64_t>(c)));
    if (k.tally_dimension() > 0) tallies.push_back(B * lanes.back());
  }
  const std::vector<double> z = interleave<W>(lanes);
  const std::vector<double> t = tallies.empty() ? std::vector<double>() : interleave<W>(tallies);
  for (Index i = 0; i < n; ++i) {
    BOOST_TEST(std::abs(k.conditional_sd(i) - 1.0 / std::sqrt(M(i, i))) <= 1e-12 / std::sqrt(M(i, i)));
    double mean[W];
    k.template conditional_mean<W>(i, z.data(), t.empty() ? nullptr : t.data(), mean);
    for (int c = 0; c < W; ++c) {
      double s = 0;
      for (Index j = 0; j < n; ++j)
        if (j != i) s += M(i, j) * lanes[c][j];
      const double expect = -s / M(i, i);
      BOOST_TEST(std::abs(mean[c] - expect) <= 1e-12 * std::max(1.0, std::abs(expect)), "site " << i << " lane " << c);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(conditional_mean_and_sd_match_dense_formulas, Kernel, oracle::Kernels) {
  const Model model = oracle::small_model();
  const MatrixXd M = oracle::precision(model, oracle::KernelFor<Kernel>::domain);
  const MatrixXd B = oracle::incidence(model);
  const Kernel k = oracle::KernelFor<Kernel>::make(model);
  BOOST_REQUIRE_EQUAL(k.dimension(), M.rows());
  BOOST_REQUIRE_EQUAL(k.tally_dimension(), (std::is_same<Kernel, DualIncidenceKernel>::value ? 6 : 0));
  check_conditionals<2>(k, M, B);
  check_conditionals<4>(k, M, B);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(update_adds_scaled_noise_and_keeps_the_tally, Kernel, oracle::Kernels) {
  // z_i <- mu_i + M_ii^-1/2 eps; the dual kernel's tally stays x~ = B y~. Deterministic.
  const Model model = oracle::small_model();
  const MatrixXd M = oracle::precision(model, oracle::KernelFor<Kernel>::domain);
  const MatrixXd B = oracle::incidence(model);
  const Kernel k = oracle::KernelFor<Kernel>::make(model);
  const bool tally = k.tally_dimension() > 0;
  VectorXd z = random_vector(M.rows(), 9);
  VectorXd x = tally ? VectorXd(B * z) : VectorXd();
  for (Index i = 0; i < M.rows(); ++i) {
    double mean;
    k.template conditional_mean<1>(i, z.data(), tally ? x.data() : nullptr, &mean);
    const double eps = 0.37 * static_cast<double>(i - 3);
    k.template update<1>(i, z.data(), tally ? x.data() : nullptr, &eps);
    BOOST_TEST(std::abs(z[i] - (mean + eps / std::sqrt(M(i, i)))) <= 1e-12, "site " << i);
    if (tally) BOOST_TEST(rel_diff(x, B * z) <= 1e-12, "site " << i);
  }
}

BOOST_AUTO_TEST_CASE(dual_kernel_matches_csr_on_explicit_R) {
  // Same seed, same scan: the chain of the O(1) dual kernel and that of the CSR kernel on the explicit R are the
  // same chain, up to rounding. Deterministic (no false failures).
  const Model models[] = {oracle::small_model(), Model(make_torus(5, 4), 1.0, 0.1),
                          Model(make_random_regular(12, 3, 4), 0.8, 1.7)};
  for (const Model& model : models) {
    const CsrKernel csr(model.dual_precision());
    const DualIncidenceKernel dual(model);
    for (ScanOrder scan : {ScanOrder::Random, ScanOrder::Permutation, ScanOrder::Fixed}) {
      GibbsSampler<CsrKernel, 4> a(csr, scan, 99, 10);
      GibbsSampler<DualIncidenceKernel, 4> b(dual, scan, 99, 10);
      a.set_random_state();
      b.set_random_state();
      a.sweep(60);
      b.sweep(60);
      const MatrixXd Bm = oracle::incidence(model);
      for (int c = 0; c < 4; ++c) {
        BOOST_TEST(rel_diff(a.state(c), b.state(c)) <= 1e-12, to_string(scan) << " lane " << c);
        BOOST_TEST(rel_diff(b.tally(c), Bm * b.state(c)) <= 1e-12);
      }
    }
  }
}

// Lane c of a width-W block with first chain f uses the noise stream of chain f + c and the schedule of chain f:
// with a fixed scan (no schedule randomness) it is exactly the width-1 chain f + c. Deterministic.
template <int W, class Kernel>
void check_lanes_equal_single_chains(const Kernel& k, std::uint64_t seed, std::uint64_t first, bool random_start) {
  GibbsSampler<Kernel, W> block(k, ScanOrder::Fixed, seed, first);
  random_start ? block.set_random_state() : block.set_constant_state(0.5);
  block.sweep(7);
  for (int c = 0; c < W; ++c) {
    GibbsSampler<Kernel, 1> one(k, ScanOrder::Fixed, seed, first + static_cast<std::uint64_t>(c));
    random_start ? one.set_random_state() : one.set_constant_state(0.5);
    one.sweep(7);
    BOOST_TEST(rel_diff(block.state(c), one.state(0)) == 0.0, "W = " << W << " lane " << c);
    if (k.tally_dimension() > 0)
      BOOST_TEST(rel_diff(block.tally(c), one.tally(0)) == 0.0, "W = " << W << " lane " << c);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lanes_of_a_block_equal_single_chains_with_the_block_schedule, Kernel, oracle::Kernels) {
  const Model model = oracle::small_model();
  const Kernel k = oracle::KernelFor<Kernel>::make(model);
  for (bool random_start : {false, true}) {
    check_lanes_equal_single_chains<4>(k, 5, 20, random_start);
    check_lanes_equal_single_chains<8>(k, 6, 3, random_start);
  }
}

namespace {

// 3000 uniform sites of 0..n-1 with every seventh repeated at once (the same site twice in a row).
std::vector<Index> random_sites(ChainEngine& rng, std::size_t n) {
  std::vector<Index> sites;
  for (std::size_t t = 0; t < 3000; ++t) {
    const Index i = static_cast<Index>(uniform_below(rng, n));
    sites.push_back(i);
    if (t % 7 == 0) sites.push_back(i);
  }
  return sites;
}

// Runs the batched run_updates<W> of `k` on every update path this CPU has, with the CSR kernel's compact layouts
// allowed and forced off (detail::set_compact_csr), and compares each with the loop over update<W>, bit for bit:
// random interleaved state, a site sequence with repeats and back-to-back sites sharing a node (the store-to-load
// hazards of the vector loop), random deviates. Deterministic.
template <int W, class Kernel>
void check_update_paths(const Kernel& k, const char* name) {
  const std::size_t n = static_cast<std::size_t>(k.dimension());
  const std::size_t m = static_cast<std::size_t>(k.tally_dimension());
  ChainEngine rng = make_stream(77, W, StreamPurpose::Initial);
  std::vector<double> z(n * W), eps;
  for (double& v : z) v = standard_normal(rng);
  const std::vector<Index> sites = random_sites(rng, n);
  for (std::size_t t = 0; t < sites.size() * W; ++t) eps.push_back(standard_normal(rng));
  std::vector<double> tally(m * W, 0.0);
  k.template rebuild_tally<W>(z.data(), tally.data());
  std::vector<double> want_z = z, want_tally = tally;
  for (std::size_t t = 0; t < sites.size(); ++t)
    k.template update<W>(sites[t], want_z.data(), want_tally.data(), eps.data() + t * W);
  for (const bool compact : {true, false}) {
    detail::set_compact_csr(compact);
    for (const char* path : {"scalar", "avx2", "avx512"}) {
      if (!detail::select_update_path(path)) continue;  // not supported by this CPU
      std::vector<double> got_z = z, got_tally = tally;
      k.template run_updates<W>(sites.data(), sites.size(), got_z.data(), got_tally.data(), eps.data());
      BOOST_TEST((got_z == want_z),
                 name << " W = " << W << " path " << path << " compact " << compact << ": state differs from update()");
      BOOST_TEST((got_tally == want_tally), name << " W = " << W << " path " << path << ": tally differs");
    }
  }
  detail::set_compact_csr(true);
  BOOST_REQUIRE(detail::select_update_path("auto") != nullptr);
}

template <class Kernel>
void check_update_paths_all_widths(const Kernel& k, const char* name) {
  check_update_paths<1>(k, name);
  check_update_paths<2>(k, name);
  check_update_paths<4>(k, name);
  check_update_paths<8>(k, name);
  check_update_paths<16>(k, name);
}

// The same for CsrKernel::run_relaxed_updates<W> (the SSOR schemes' half-sweeps, compact layouts allowed and not)
// against the loop written here over conditional_mean and set_site, z_i <- ((1 - omega) z_i + omega mu_i) + (scale
// M_ii^-1/2) eps, bit for bit, at an over- and an under-relaxation. Deterministic.
template <int W>
void check_relaxed_paths(const CsrKernel& k, const char* name) {
  const std::size_t n = static_cast<std::size_t>(k.dimension());
  ChainEngine rng = make_stream(78, W, StreamPurpose::Initial);
  std::vector<double> z(n * W), eps;
  for (double& v : z) v = standard_normal(rng);
  const std::vector<Index> sites = random_sites(rng, n);
  for (std::size_t t = 0; t < sites.size() * W; ++t) eps.push_back(standard_normal(rng));
  for (const double omega : {1.45, 0.7}) {
    const double scale = 0.83;
    std::vector<double> want = z;
    for (std::size_t t = 0; t < sites.size(); ++t) {
      const Index i = sites[t];
      double mean[W], fresh[W];
      k.conditional_mean<W>(i, want.data(), nullptr, mean);
      const double sd = scale * k.conditional_sd(i);
      for (int c = 0; c < W; ++c)
        fresh[c] = (1.0 - omega) * want[static_cast<std::size_t>(i) * W + static_cast<std::size_t>(c)] +
                   omega * mean[c] + sd * eps[t * W + static_cast<std::size_t>(c)];
      k.set_site<W>(i, want.data(), nullptr, fresh);
    }
    for (const bool compact : {true, false}) {
      detail::set_compact_csr(compact);
      for (const char* path : {"scalar", "avx2", "avx512"}) {
        if (!detail::select_update_path(path)) continue;  // not supported by this CPU
        std::vector<double> got = z;
        k.run_relaxed_updates<W>(sites.data(), sites.size(), got.data(), nullptr, eps.data(), omega, scale);
        BOOST_TEST((got == want), name << " W = " << W << " omega " << omega << " path " << path << " compact "
                                       << compact << ": relaxed state differs from the loop over conditional_mean");
      }
    }
  }
  detail::set_compact_csr(true);
  BOOST_REQUIRE(detail::select_update_path("auto") != nullptr);
}

// Precisions whose stored off-diagonal coefficients -M_ij / M_ii are all one number but which are not a homogeneous
// model on a regular graph, for CsrKernel's other compact layouts: `irregular` is 5 I - A of a path of 7 nodes (rows
// of 1 and 2 entries, uniform sd); `two_scales` is the 3 x 4 torus's 6 I - A beside 4 times it (every row 4 entries,
// coefficient 1/6 everywhere, two values of M_ii^{-1/2}).
SparseMatrix uniform_coefficient_matrix(bool irregular) {
  std::vector<Eigen::Triplet<double>> t;
  if (irregular) {
    for (Index i = 0; i < 7; ++i) {
      t.emplace_back(i, i, 5.0);
      if (i + 1 < 7) t.emplace_back(i, i + 1, -1.0), t.emplace_back(i + 1, i, -1.0);
    }
  } else {
    const Graph g = make_torus(3, 4);
    for (const double scale : {1.0, 4.0}) {
      const Index base = scale == 1.0 ? 0 : g.num_nodes();
      for (Index v = 0; v < g.num_nodes(); ++v) t.emplace_back(base + v, base + v, 6.0 * scale);
      for (Index e = 0; e < g.num_edges(); ++e) {
        const Edge& ed = g.edge(e);
        t.emplace_back(base + ed.head, base + ed.tail, -scale);
        t.emplace_back(base + ed.tail, base + ed.head, -scale);
      }
    }
  }
  const Index n = irregular ? 7 : 24;
  SparseMatrix M(n, n);
  M.setFromTriplets(t.begin(), t.end());
  return M;
}

}  // namespace

BOOST_AUTO_TEST_CASE(csr_kernel_finds_its_compact_layout) {
  // By exact equality, once at construction: the homogeneous torus has one coefficient, one sd and rows of 4
  // entries; a heterogeneous model none of these; the hand-made matrices one each of the other layouts.
  const Model homogeneous_torus(make_torus(6, 5), 1.3, 0.4);
  const CsrKernel h(homogeneous_torus.primal_precision());
  BOOST_TEST(h.uniform_coefficients());
  BOOST_TEST(h.uniform_sd());
  BOOST_TEST(h.row_length() == 4);
  const CsrKernel het(oracle::small_model().primal_precision());
  BOOST_TEST(!het.uniform_coefficients());
  BOOST_TEST(!het.uniform_sd());
  BOOST_TEST(het.row_length() == -1);
  const CsrKernel irregular(uniform_coefficient_matrix(true));
  BOOST_TEST(irregular.uniform_coefficients());
  BOOST_TEST(irregular.uniform_sd());
  BOOST_TEST(irregular.row_length() == -1);
  const CsrKernel two_scales(uniform_coefficient_matrix(false));
  BOOST_TEST(two_scales.uniform_coefficients());
  BOOST_TEST(!two_scales.uniform_sd());
  BOOST_TEST(two_scales.row_length() == 4);
  // A 1 x 1 precision has no off-diagonal entry: uniform vacuously, rows of length 0.
  SparseMatrix one(1, 1);
  one.insert(0, 0) = 2.0;
  const CsrKernel single(one);
  BOOST_TEST(single.uniform_coefficients());
  BOOST_TEST(single.row_length() == 0);
}

BOOST_AUTO_TEST_CASE(every_vector_path_gives_the_bits_of_update) {
  const Model het = oracle::small_model();
  std::vector<double> s(30), sigma;
  for (std::size_t v = 0; v < s.size(); ++v) s[v] = 0.5 + 0.05 * static_cast<double>(v);
  const Graph torus = make_torus(6, 5);
  for (Index e = 0; e < torus.num_edges(); ++e) sigma.push_back(0.2 + 0.03 * e);
  const Model torus_model(torus, s, sigma);
  // Homogeneous models (one s, one sigma): the dual kernel's loop over compact edges (ends only), on a regular and
  // an irregular graph.
  const Model homogeneous_torus(torus, 1.3, 0.4);
  const Model homogeneous_irregular(het.graph(), 0.7, 0.3);
  // The 3-D torus: rows of 6 entries, the compact loop with a row length known only at run time (4 is compiled in).
  const Model homogeneous_torus3(make_torus3(3, 4, 3), 0.9, 0.35);
  BOOST_TEST_REQUIRE(CsrKernel(homogeneous_torus3.primal_precision()).row_length() == 6);
  BOOST_TEST(!DualIncidenceKernel(het).uniform_coefficients());
  BOOST_TEST(!DualIncidenceKernel(torus_model).uniform_coefficients());
  BOOST_TEST(DualIncidenceKernel(homogeneous_torus).uniform_coefficients());
  BOOST_TEST(DualIncidenceKernel(homogeneous_irregular).uniform_coefficients());
  for (const Model* model : {&het, &torus_model, &homogeneous_torus, &homogeneous_irregular, &homogeneous_torus3}) {
    check_update_paths_all_widths(DualIncidenceKernel(*model), "dual");
    check_update_paths_all_widths(CsrKernel(model->primal_precision()), "primal CSR");
    Eigen::VectorXd h(model->num_nodes());  // a right-hand side (non-zero mean): the shifted loop
    for (Index v = 0; v < h.size(); ++v) h[v] = std::cos(0.9 * static_cast<double>(v)) - 0.25;
    check_update_paths_all_widths(CsrKernel(model->primal_precision(), h), "primal CSR with rhs");
    check_update_paths_all_widths(CsrKernel(model->dual_precision()), "dual CSR");
  }
  // The compact CSR layouts that a homogeneous model on a regular graph does not reach.
  check_update_paths_all_widths(CsrKernel(uniform_coefficient_matrix(true)), "irregular uniform-coefficient CSR");
  check_update_paths_all_widths(CsrKernel(uniform_coefficient_matrix(false)), "two-scale uniform-coefficient CSR");
  // A state above 4 MiB per block, where the compact loop also prefetches the state rows (W = 1 from 524288 sites).
  const CsrKernel large(Model(make_torus(730, 730), 1.0, 0.25).primal_precision(), SpdCheck::Cheap);
  BOOST_TEST_REQUIRE(large.row_length() == 4);
  check_update_paths<1>(large, "730x730 torus CSR");
  check_update_paths<4>(large, "730x730 torus CSR");
  BOOST_TEST(detail::select_update_path("none") == nullptr);
}

BOOST_AUTO_TEST_CASE(every_vector_path_gives_the_bits_of_the_relaxed_update) {
  const Model het = oracle::small_model();
  Eigen::VectorXd h(het.num_nodes());  // a right-hand side (non-zero mean): the shifted loop
  for (Index v = 0; v < h.size(); ++v) h[v] = std::sin(1.3 * static_cast<double>(v)) + 0.5;
  const Model homogeneous_torus(make_torus(6, 5), 1.3, 0.4);
  const Model homogeneous_torus3(make_torus3(3, 4, 3), 0.9, 0.35);
  Eigen::VectorXd ht(homogeneous_torus.num_nodes());
  for (Index v = 0; v < ht.size(); ++v) ht[v] = std::sin(0.7 * static_cast<double>(v)) - 0.1;
  const std::vector<std::pair<CsrKernel, const char*>> kernels = {
      {CsrKernel(het.primal_precision()), "primal"},
      {CsrKernel(het.primal_precision(), h), "primal CSR with rhs"},
      {CsrKernel(het.dual_precision()), "dual"},
      {CsrKernel(homogeneous_torus.primal_precision()), "homogeneous torus (compact, regular)"},
      {CsrKernel(homogeneous_torus.primal_precision(), ht), "homogeneous torus with rhs"},
      {CsrKernel(homogeneous_torus3.primal_precision()), "homogeneous 3-D torus (compact, rows of 6)"},
      {CsrKernel(uniform_coefficient_matrix(true)), "irregular uniform-coefficient CSR"},
      {CsrKernel(uniform_coefficient_matrix(false)), "two-scale uniform-coefficient CSR"}};
  for (const auto& [k, name] : kernels) {
    check_relaxed_paths<1>(k, name);
    check_relaxed_paths<2>(k, name);
    check_relaxed_paths<4>(k, name);
    check_relaxed_paths<8>(k, name);
    check_relaxed_paths<16>(k, name);
    check_relaxed_paths<3>(k, name);  // a width without vector code: the header's loop
  }
}

namespace {
// A user kernel without the batched run_updates: GibbsSampler must fall back to its own loop over update().
struct ForwardingKernel {
  const DualIncidenceKernel* k;
  Index dimension() const { return k->dimension(); }
  Index tally_dimension() const { return k->tally_dimension(); }
  double conditional_sd(Index i) const { return k->conditional_sd(i); }
  template <int W>
  void conditional_mean(Index i, const double* z, const double* t, double* mean) const {
    k->conditional_mean<W>(i, z, t, mean);
  }
  template <int W>
  void update(Index i, double* z, double* t, const double* eps) const {
    k->update<W>(i, z, t, eps);
  }
  template <int W>
  void prefetch(Index i, const double* z, const double* t) const {
    k->prefetch<W>(i, z, t);
  }
  void prefetch_row(Index i) const { k->prefetch_row(i); }
  template <int W>
  void rebuild_tally(const double* z, double* t) const {
    k->rebuild_tally<W>(z, t);
  }
};
static_assert(!detail::HasRunUpdates<ForwardingKernel, 4>::value, "the test kernel must lack run_updates");
static_assert(detail::HasRunUpdates<DualIncidenceKernel, 4>::value, "the shipped kernels have run_updates");
}  // namespace

BOOST_AUTO_TEST_CASE(user_kernels_without_run_updates_run_the_same_chain) {
  // Same seed and scan: the generic update loop over a forwarding kernel and the library's vectorized run_updates
  // give the same chain bit for bit. Deterministic.
  const Model model(make_torus(7, 6), 1.0, 0.3);
  const DualIncidenceKernel dual(model);
  const ForwardingKernel fwd{&dual};
  GibbsSampler<DualIncidenceKernel, 4> a(dual, ScanOrder::Random, 31, 2);
  GibbsSampler<ForwardingKernel, 4> b(fwd, ScanOrder::Random, 31, 2);
  a.set_random_state();
  b.set_random_state();
  a.sweep(40);
  b.sweep(40);
  for (int c = 0; c < 4; ++c) {
    BOOST_TEST(rel_diff(a.state(c), b.state(c)) == 0.0);
    BOOST_TEST(rel_diff(a.tally(c), b.tally(c)) == 0.0);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(noise_free_fixed_scan_is_dense_gauss_seidel, Kernel, oracle::Kernels) {
  // Deterministic: compare with Gauss–Seidel written against the dense precision.
  const Model model = oracle::small_model();
  const MatrixXd M = oracle::precision(model, oracle::KernelFor<Kernel>::domain);
  VectorXd z = VectorXd::Constant(M.rows(), 1.0);
  for (int s = 0; s < 5; ++s)
    for (Index i = 0; i < M.rows(); ++i) z[i] -= M.row(i).dot(z) / M(i, i);
  const Kernel k = oracle::KernelFor<Kernel>::make(model);
  GibbsSampler<Kernel> g(k, ScanOrder::Fixed, 1, 0, false);
  g.set_constant_state(1.0);
  g.sweep(5);
  BOOST_TEST(rel_diff(g.state(0), z) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(tally_stays_exact_over_many_sweeps) {
  // Rounding drift of the incremental tally x~ = B y~ after 2000 random sweeps of a 20x20 torus (1.6e6 updates).
  const Model model(make_torus(20, 20), 1.0, 0.1);
  const DualIncidenceKernel k(model);
  GibbsSampler<DualIncidenceKernel, 2> g(k, ScanOrder::Random, 3);
  g.set_random_state();
  g.sweep(2000);
  const MatrixXd B = oracle::incidence(model);
  for (int c = 0; c < 2; ++c) BOOST_TEST(rel_diff(g.tally(c), B * g.state(c)) <= 1e-12);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the engine over a user kernel: scan orders ----------------------------------------------------------

namespace {

// A kernel that only records the sites visited (identity update): exercises the concept with a user type.
struct RecordingKernel {
  Index n;
  mutable std::vector<Index> visits;
  Index dimension() const noexcept { return n; }
  Index tally_dimension() const noexcept { return 0; }
  double conditional_sd(Index) const noexcept { return 1.0; }
  template <int W>
  void conditional_mean(Index i, const double* z, const double*, double* mean) const noexcept {
    for (int c = 0; c < W; ++c) mean[c] = z[i * W + c];
  }
  template <int W>
  void update(Index i, double*, double*, const double*) const {
    visits.push_back(i);
  }
  template <int W>
  void prefetch(Index, const double*, const double*) const noexcept {}
  void prefetch_row(Index) const noexcept {}
  template <int W>
  void rebuild_tally(const double*, double*) const noexcept {}
};

}  // namespace

BOOST_AUTO_TEST_SUITE(scan_orders)

BOOST_AUTO_TEST_CASE(fixed_scan_visits_in_order) {
  RecordingKernel k{5000, {}};
  GibbsSampler<RecordingKernel, 2> g(k, ScanOrder::Fixed);
  g.sweep(2);
  BOOST_REQUIRE_EQUAL(k.visits.size(), 10000u);
  for (std::size_t t = 0; t < k.visits.size(); ++t) BOOST_REQUIRE_EQUAL(k.visits[t], static_cast<Index>(t % 5000));
}

BOOST_AUTO_TEST_CASE(permutation_scan_visits_every_site_once_per_sweep_in_fresh_orders) {
  RecordingKernel k{5000, {}};
  GibbsSampler<RecordingKernel, 1> g(k, ScanOrder::Permutation, 4);
  g.sweep(3);
  BOOST_REQUIRE_EQUAL(k.visits.size(), 15000u);
  std::vector<std::vector<Index>> sweeps;
  for (int s = 0; s < 3; ++s) {
    std::vector<Index> v(k.visits.begin() + s * 5000, k.visits.begin() + (s + 1) * 5000);
    sweeps.push_back(v);
    std::sort(v.begin(), v.end());
    for (Index i = 0; i < 5000; ++i) BOOST_REQUIRE_EQUAL(v[static_cast<std::size_t>(i)], i);
  }
  BOOST_TEST((sweeps[0] != sweeps[1]));
  BOOST_TEST((sweeps[1] != sweeps[2]));
}

BOOST_AUTO_TEST_CASE(random_scan_draws_n_uniform_picks_per_sweep) {
  // 200 sweeps of n = 50: 10000 picks; chi-square over 50 cells. False-failure probability: 1e-7.
  // Also: a random scan of a large graph must not repeat a sweep (indices are drawn afresh, not cycled).
  RecordingKernel k{50, {}};
  GibbsSampler<RecordingKernel, 1> g(k, ScanOrder::Random, 8);
  g.sweep(200);
  BOOST_REQUIRE_EQUAL(k.visits.size(), 10000u);
  std::vector<double> count(50, 0.0);
  for (Index i : k.visits) count[static_cast<std::size_t>(i)] += 1;
  double chi2 = 0;
  for (double c : count) chi2 += (c - 200.0) * (c - 200.0) / 200.0;
  BOOST_TEST(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(49), 1e-7)));

  RecordingKernel big{100000, {}};
  GibbsSampler<RecordingKernel, 1> h(big, ScanOrder::Random, 8);
  h.sweep(2);
  BOOST_TEST(!std::equal(big.visits.begin(), big.visits.begin() + 100000, big.visits.begin() + 100000));
}

BOOST_AUTO_TEST_SUITE_END()

// ---- bad input -------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(bad_input)

SparseMatrix from_dense(const MatrixXd& D) { return D.sparseView(); }

BOOST_AUTO_TEST_CASE(csr_kernel_rejects_non_spd_matrices) {
  MatrixXd M(3, 3);
  M << 2, -1, 0, -1, 2, -1, 0, -1, 2;
  BOOST_CHECK_NO_THROW(CsrKernel{from_dense(M)});

  MatrixXd neg = M;
  neg(1, 1) = -2;
  BOOST_CHECK_THROW(CsrKernel{from_dense(neg)}, std::invalid_argument);
  MatrixXd zero_diag = M;
  zero_diag(2, 2) = 0;
  BOOST_CHECK_THROW(CsrKernel{from_dense(zero_diag)}, std::invalid_argument);
  MatrixXd asym = M;
  asym(0, 1) = -0.5;
  BOOST_CHECK_THROW(CsrKernel{from_dense(asym)}, std::invalid_argument);
  MatrixXd asym_pattern = M;
  asym_pattern(0, 2) = 0.1;
  BOOST_CHECK_THROW(CsrKernel{from_dense(asym_pattern)}, std::invalid_argument);
  MatrixXd minor = M;
  minor(0, 1) = minor(1, 0) = -2.5;  // 2x2 minor 4 - 6.25 < 0
  BOOST_CHECK_THROW(CsrKernel(from_dense(minor), SpdCheck::Cheap), std::invalid_argument);
  MatrixXd nan = M;
  nan(1, 2) = nan(2, 1) = std::nan("");
  BOOST_CHECK_THROW(CsrKernel{from_dense(nan)}, std::invalid_argument);

  // Indefinite although every diagonal entry and every 2x2 minor is positive: caught by the factorization.
  MatrixXd indef(3, 3);
  indef << 1, -0.9, -0.9, -0.9, 1, -0.9, -0.9, -0.9, 1;  // eigenvalue 1 - 1.8 < 0
  BOOST_CHECK_NO_THROW(CsrKernel(from_dense(indef), SpdCheck::Cheap));
  BOOST_CHECK_THROW(CsrKernel{from_dense(indef)}, std::invalid_argument);
  BOOST_CHECK_THROW(CsrKernel(from_dense(indef), SpdCheck::Cholesky), std::invalid_argument);

  BOOST_CHECK_THROW(CsrKernel(SparseMatrix(3, 4)), std::invalid_argument);
  BOOST_CHECK_THROW(CsrKernel(SparseMatrix(0, 0)), std::invalid_argument);
  try {
    CsrKernel{from_dense(neg)};
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("M(1, 1)") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(sampler_rejects_bad_states_and_lanes) {
  const Model model = oracle::small_model();
  const DualIncidenceKernel k(model);
  GibbsSampler<DualIncidenceKernel, 2> g(k);
  BOOST_CHECK_THROW(g.set_state(0, VectorXd::Zero(6)), std::invalid_argument);  // |V| given, |E| expected
  BOOST_CHECK_THROW(g.set_state(2, VectorXd::Zero(8)), std::invalid_argument);
  BOOST_CHECK_THROW(g.set_state(-1, VectorXd::Zero(8)), std::invalid_argument);
  VectorXd bad = VectorXd::Zero(8);
  bad[3] = INFINITY;
  BOOST_CHECK_THROW(g.set_state(0, bad), std::invalid_argument);
  BOOST_CHECK_THROW(g.set_constant_state(NAN), std::invalid_argument);
  BOOST_CHECK_THROW(g.state(5), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(dual_kernel_rejects_a_graph_without_edges) {
  const Model model(Graph(3, {}), 1.0, 1.0);
  BOOST_CHECK_THROW(DualIncidenceKernel{model}, std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
