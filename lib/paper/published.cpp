// The authors' published inputs, regenerated (published.hpp): networkx 2.8's Watts–Strogatz generator
// under CPython's random.Random, numpy's legacy Beta(1, 1) draws, networkx's edge order of the torus, and the
// decay-rate fit of the K5 result files.
#include <dualgibbs/paper/published.hpp>

#include <dualgibbs/core/number_text.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

namespace {

// CPython's random.Random(seed) for a non-negative integer seed: MT19937's init_by_array with the seed's
// 32-bit words, least significant first (one word, 0, for seed 0). The reference algorithm's state is then
// loaded into std::mt19937 through its text form (the 624 state words, standard-defined).
std::mt19937 python_random(std::uint32_t seed) {
  constexpr int kN = 624;
  std::array<std::uint32_t, kN> mt{};
  mt[0] = 19650218U;
  for (int i = 1; i < kN; ++i) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  const std::array<std::uint32_t, 1> key{seed};
  int i = 1, j = 0;
  for (int k = std::max<int>(kN, static_cast<int>(key.size())); k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[static_cast<std::size_t>(j)] +
            static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
    if (j >= static_cast<int>(key.size())) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000U;
  std::stringstream state;
  for (int k = 0; k < kN; ++k) state << mt[k] << ' ';
  state << kN;  // the position: the next call regenerates the block, as CPython's mti = N does
  std::mt19937 engine;
  state >> engine;
  return engine;
}

// random(): 53 bits from two words, as CPython's random_random (and numpy's legacy double).
double random53(std::mt19937& e) {
  const std::uint32_t a = e() >> 5, b = e() >> 6;
  return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0);
}

// choice(range(n)): _randbelow_with_getrandbits(n), k = n.bit_length() (n < 2^32 here).
Index randbelow(std::mt19937& e, Index n) {
  int k = 0;
  while ((static_cast<std::uint64_t>(n) >> k) != 0) ++k;
  for (;;) {
    const std::uint32_t r = e() >> (32 - k);
    if (static_cast<Index>(r) < n) return static_cast<Index>(r);
  }
}

}  // namespace

Graph networkx_watts_strogatz(Index n, Index k, double p, std::uint32_t seed) {
  if (n < 3 || k < 2 || k % 2 != 0 || k >= n || !(p >= 0.0 && p <= 1.0))
    throw std::invalid_argument(
        "networkx_watts_strogatz: need n >= 3, an even k with 2 <= k < n and p in [0, 1], got n = " +
        std::to_string(n) + ", k = " + std::to_string(k) + ", p = " + number_text(p));
  // networkx's adjacency: per node, its neighbours in insertion order (a Python dict).
  std::vector<std::vector<Index>> adj(static_cast<std::size_t>(n));
  auto has_edge = [&](Index u, Index v) {
    const auto& a = adj[static_cast<std::size_t>(u)];
    return std::find(a.begin(), a.end(), v) != a.end();
  };
  auto add_edge = [&](Index u, Index v) {
    if (has_edge(u, v)) return;
    adj[static_cast<std::size_t>(u)].push_back(v);
    adj[static_cast<std::size_t>(v)].push_back(u);
  };
  auto remove_edge = [&](Index u, Index v) {
    auto& a = adj[static_cast<std::size_t>(u)];
    a.erase(std::find(a.begin(), a.end(), v));
    auto& b = adj[static_cast<std::size_t>(v)];
    b.erase(std::find(b.begin(), b.end(), u));
  };
  for (Index j = 1; j <= k / 2; ++j)
    for (Index u = 0; u < n; ++u) add_edge(u, (u + j) % n);
  std::mt19937 rng = python_random(seed);
  for (Index j = 1; j <= k / 2; ++j) {
    for (Index u = 0; u < n; ++u) {
      const Index v = (u + j) % n;
      if (!(random53(rng) < p)) continue;
      Index w = randbelow(rng, n);
      bool skip = false;
      while (w == u || has_edge(u, w)) {
        w = randbelow(rng, n);
        if (static_cast<Index>(adj[static_cast<std::size_t>(u)].size()) >= n - 1) {
          skip = true;  // networkx: "skip this rewiring" (the while's else branch is not run)
          break;
        }
      }
      if (skip) continue;
      remove_edge(u, v);
      add_edge(u, w);
    }
  }
  // G.edges(): nodes in order 0 .. n-1 (their first appearance), each edge at its first end.
  std::vector<Edge> edges;
  for (Index u = 0; u < n; ++u)
    for (Index v : adj[static_cast<std::size_t>(u)])
      if (v > u) edges.push_back(Edge{u, v});
  return Graph(n, std::move(edges));
}

namespace {

// The adjacency of a networkx Graph on nodes 0 .. n-1 (added in that order) after add_edges_from(added): per node,
// its neighbours in insertion order (a Python dict; an edge added twice keeps its first place).
std::vector<std::vector<Index>> networkx_adjacency(Index n, const std::vector<Edge>& added) {
  std::vector<std::vector<Index>> adj(static_cast<std::size_t>(n));
  for (const Edge& e : added) {
    auto& a = adj[static_cast<std::size_t>(e.head)];
    if (std::find(a.begin(), a.end(), e.tail) != a.end()) continue;
    a.push_back(e.tail);
    adj[static_cast<std::size_t>(e.tail)].push_back(e.head);
  }
  return adj;
}

// Its G.edges(): nodes in order 0 .. n-1, each edge once, at its first end, in that end's adjacency order.
std::vector<Edge> networkx_edge_list(const std::vector<std::vector<Index>>& adj) {
  std::vector<Edge> edges;
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (Index v : adj[u])
      if (v > static_cast<Index>(u)) edges.push_back(Edge{static_cast<Index>(u), v});
  return edges;
}

// The spatial-median Theil–Sen slope of scikit-learn's TheilSenRegressor, which the authors' K5 fit calls with its
// defaults (written anew from the estimator's definition): the lines through every pair of points, as (intercept,
// slope), and their spatial median by the modified Weiszfeld iteration (Vardi and Zhang), started at the mean,
// stopped when a step moves less than 1e-3 or after 300 steps. Needs at least 2 distinct x.
double spatial_median_slope(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<Eigen::Vector2d> lines;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double slope = (y[j] - y[i]) / (x[j] - x[i]);
      lines.emplace_back(y[i] - slope * x[i], slope);
    }
  Eigen::Vector2d m = Eigen::Vector2d::Zero();
  for (const auto& p : lines) m += p;
  m /= static_cast<double>(lines.size());
  const double eps = std::numeric_limits<double>::epsilon();
  for (int iter = 0; iter < 300; ++iter) {
    Eigen::Vector2d quotient = Eigen::Vector2d::Zero(), weighted = Eigen::Vector2d::Zero();
    double inverse_sum = 0.0;
    int at_m = 0;
    for (const auto& p : lines) {
      const double d = (p - m).norm();
      if (d < eps) {
        ++at_m;
        continue;
      }
      quotient += (p - m) / d;
      weighted += p / d;
      inverse_sum += 1.0 / d;
    }
    double qn = quotient.norm();
    Eigen::Vector2d direction = weighted / inverse_sum;
    if (!(qn > eps)) {
      direction = Eigen::Vector2d::Ones();
      qn = 1.0;
    }
    const double w = (at_m > 0 ? 1.0 : 0.0) / qn;
    const Eigen::Vector2d next = std::max(0.0, 1.0 - w) * direction + std::min(1.0, w) * m;
    const bool done = (next - m).squaredNorm() < 1e-6;
    m = next;
    if (done) break;
  }
  return m(1);
}

}  // namespace

Graph networkx_torus(Index rows, Index cols) {
  if (rows < 3 || cols < 3 || rows > 1000000 || cols > 1000000 / rows)
    throw std::invalid_argument("networkx_torus: need 3 <= rows, 3 <= cols and rows x cols <= 10^6, got " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  auto id = [cols](Index i, Index j) { return i * cols + j; };
  // grid_2d_graph(rows, cols, periodic=True)'s add_edges_from calls, in order, node (i, j) as i * cols + j.
  std::vector<Edge> added;
  for (Index i = 1; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) added.push_back(Edge{id(i, j), id(i - 1, j)});
  for (Index i = 0; i < rows; ++i)
    for (Index j = 1; j < cols; ++j) added.push_back(Edge{id(i, j), id(i, j - 1)});
  for (Index j = 0; j < cols; ++j) added.push_back(Edge{id(0, j), id(rows - 1, j)});
  for (Index i = 0; i < rows; ++i) added.push_back(Edge{id(i, 0), id(i, cols - 1)});
  const Index n = rows * cols;
  // relabel_nodes copies the graph: the same nodes in the same order, the edges added in G.edges() order. Its
  // own adjacency, and so its G.edges(), follows that order.
  const std::vector<Edge> grid_edges = networkx_edge_list(networkx_adjacency(n, added));
  return Graph(n, networkx_edge_list(networkx_adjacency(n, grid_edges)));
}

double authors_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& eu, double divisor) {
  if (sweeps.size() != eu.size())
    throw std::invalid_argument("authors_decay_rate: " + std::to_string(sweeps.size()) + " sweeps but " +
                                std::to_string(eu.size()) + " values");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = eu.size();
  std::vector<double> tail;
  for (std::size_t i = n - std::min(n, std::max<std::size_t>(3, n / 5)); i < n; ++i) tail.push_back(std::abs(eu[i]));
  if (tail.empty()) return nan;
  const auto mid = tail.begin() + static_cast<std::ptrdiff_t>(tail.size() / 2);
  std::nth_element(tail.begin(), mid, tail.end());
  const double floor = tail.size() % 2 ? *mid : 0.5 * (*mid + *std::max_element(tail.begin(), mid));
  const double shift = std::max(3.0 * floor, 1e-12);
  const auto first = std::find_if(eu.begin(), eu.end(), [](double v) { return v > 0; });
  if (first == eu.end()) return nan;
  const double thresh = std::max(*first * 1e-2, 3.0 * floor);
  std::size_t end = 0;
  while (end < n && eu[end] > thresh) ++end;
  end = std::min(n, std::max<std::size_t>(4, end));
  std::vector<double> x, y;
  for (std::size_t i = 0; i < end; ++i)
    if (eu[i] > 0) {
      x.push_back(sweeps[i]);
      y.push_back(std::log(eu[i] + shift));
    }
  if (x.size() < 4) return nan;
  return -spatial_median_slope(x, y) / divisor;
}

double NumpyLegacyRandom::uniform() { return random53(m_engine); }

std::vector<double> NumpyLegacyRandom::beta11(std::size_t count, double lo, double hi) {
  std::vector<double> out;
  out.reserve(count);
  while (out.size() < count) {
    const double u = uniform(), v = uniform();
    if (u + v <= 1.0 && u + v > 0.0) out.push_back(lo + (hi - lo) * (u / (u + v)));
  }
  return out;
}

}  // namespace dualgibbs
