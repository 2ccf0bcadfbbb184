// The authors' published inputs, regenerated (published.hpp): networkx 2.8's Watts–Strogatz generator
// under CPython's random.Random, numpy's legacy Beta(1, 1) draws, and networkx's edge order of the torus.
#include <dualgibbs/paper/published.hpp>

#include <dualgibbs/core/number_text.hpp>

#include <algorithm>
#include <array>
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
