#include <dualgibbs/model/generators.hpp>

#include <dualgibbs/core/random.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace dualgibbs {

namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<Index>::max();

// Checks a node or edge count computed in 64 bits before it is narrowed to Index.
Index checked_count(std::int64_t count, const char* what, const std::string& family) {
  if (count > kMaxIndex / 2)
    throw std::invalid_argument(family + ": " + std::to_string(count) + " " + what + " overflow the 32-bit index");
  return static_cast<Index>(count);
}

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::uint64_t edge_key(Index a, Index b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

void shuffle(std::vector<Index>& v, ChainEngine& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(rng, i)]);
}

void require_probability(double p, const std::string& family) {
  require(std::isfinite(p) && p >= 0.0 && p <= 1.0,
          family + ": probability p = " + std::to_string(p) + " is not in [0, 1]");
}

}  // namespace

Graph make_torus(Index rows, Index cols) {
  require(rows >= 3 && cols >= 3, "torus: sides must be at least 3 (got " + std::to_string(rows) + "x" +
                                      std::to_string(cols) + "); smaller sides give self-loops or duplicate edges");
  const Index n = checked_count(std::int64_t{rows} * cols, "nodes", "torus");
  checked_count(2 * std::int64_t{n}, "edges", "torus");
  std::vector<Edge> edges;
  edges.reserve(2 * static_cast<std::size_t>(n));
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) {
      const Index v = i * cols + j;
      edges.push_back({v, i * cols + (j + 1) % cols});
      edges.push_back({v, ((i + 1) % rows) * cols + j});
    }
  return Graph(n, std::move(edges));
}

Graph make_torus3(Index n0, Index n1, Index n2) {
  require(n0 >= 3 && n1 >= 3 && n2 >= 3, "torus3: sides must be at least 3 (got " + std::to_string(n0) + "x" +
                                             std::to_string(n1) + "x" + std::to_string(n2) +
                                             "); smaller sides give self-loops or duplicate edges");
  const Index n = checked_count(std::int64_t{n0} * n1 * n2, "nodes", "torus3");
  checked_count(3 * std::int64_t{n}, "edges", "torus3");
  std::vector<Edge> edges;
  edges.reserve(3 * static_cast<std::size_t>(n));
  auto id = [&](Index i, Index j, Index k) { return (i * n1 + j) * n2 + k; };
  for (Index i = 0; i < n0; ++i)
    for (Index j = 0; j < n1; ++j)
      for (Index k = 0; k < n2; ++k) {
        const Index v = id(i, j, k);
        edges.push_back({v, id(i, j, (k + 1) % n2)});
        edges.push_back({v, id(i, (j + 1) % n1, k)});
        edges.push_back({v, id((i + 1) % n0, j, k)});
      }
  return Graph(n, std::move(edges));
}

Graph make_grid(Index rows, Index cols) {
  require(rows >= 1 && cols >= 1,
          "grid: sides must be at least 1 (got " + std::to_string(rows) + "x" + std::to_string(cols) + ")");
  const Index n = checked_count(std::int64_t{rows} * cols, "nodes", "grid");
  checked_count(std::int64_t{rows} * (cols - 1) + std::int64_t{cols} * (rows - 1), "edges", "grid");
  std::vector<Edge> edges;
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) {
      const Index v = i * cols + j;
      if (j + 1 < cols) edges.push_back({v, v + 1});
      if (i + 1 < rows) edges.push_back({v, v + cols});
    }
  return Graph(n, std::move(edges));
}

Graph make_path(Index n) {
  require(n >= 1, "path: needs at least 1 node (got " + std::to_string(n) + ")");
  checked_count(std::int64_t{n} - 1, "edges", "path");  // before allocating: the Graph would reject it anyway
  std::vector<Edge> edges;
  for (Index v = 0; v + 1 < n; ++v) edges.push_back({v, v + 1});
  return Graph(n, std::move(edges));
}

Graph make_cycle(Index n) {
  require(n >= 3, "cycle: needs at least 3 nodes (got " + std::to_string(n) + ")");
  checked_count(n, "edges", "cycle");
  std::vector<Edge> edges;
  for (Index v = 0; v < n; ++v) edges.push_back({v, (v + 1) % n});
  return Graph(n, std::move(edges));
}

Graph make_complete(Index n) {
  require(n >= 1, "complete: needs at least 1 node (got " + std::to_string(n) + ")");
  checked_count(std::int64_t{n} * (n - 1) / 2, "edges", "complete");
  std::vector<Edge> edges;
  edges.reserve(static_cast<std::size_t>(n) * (n - 1) / 2);
  for (Index u = 0; u < n; ++u)
    for (Index v = u + 1; v < n; ++v) edges.push_back({u, v});
  return Graph(n, std::move(edges));
}

Graph make_complete_bipartite(Index n1, Index n2) {
  require(n1 >= 1 && n2 >= 1,
          "bipartite: both sides need at least 1 node (got " + std::to_string(n1) + "," + std::to_string(n2) + ")");
  const Index n = checked_count(std::int64_t{n1} + n2, "nodes", "bipartite");
  checked_count(std::int64_t{n1} * n2, "edges", "bipartite");
  std::vector<Edge> edges;
  edges.reserve(static_cast<std::size_t>(n1) * n2);
  for (Index u = 0; u < n1; ++u)
    for (Index v = 0; v < n2; ++v) edges.push_back({u, n1 + v});
  return Graph(n, std::move(edges));
}

Graph make_star(Index n) {
  require(n >= 2, "star: needs at least 2 nodes in all (got " + std::to_string(n) + ")");
  checked_count(std::int64_t{n} - 1, "edges", "star");
  std::vector<Edge> edges;
  for (Index v = 1; v < n; ++v) edges.push_back({0, v});
  return Graph(n, std::move(edges));
}

Graph make_hypercube(int d) {
  require(d >= 0 && d <= 26, "hypercube: dimension must be in 0..26 (got " + std::to_string(d) + ")");
  const Index n = Index{1} << d;
  std::vector<Edge> edges;
  for (Index v = 0; v < n; ++v)
    for (int b = 0; b < d; ++b) {
      const Index w = v ^ (Index{1} << b);
      if (v < w) edges.push_back({v, w});
    }
  return Graph(n, std::move(edges));
}

Graph make_random_regular(Index n, Index k, std::uint64_t seed) {
  require(n >= 1 && k >= 0 && k < n,
          "kregular: need 0 <= k < n (got n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  require((std::int64_t{n} * k) % 2 == 0,
          "kregular: n*k must be even (got n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  checked_count(std::int64_t{n} * k, "edge ends", "kregular");
  if (k > (n - 1) / 2 && k > 0) {
    // Dense case: pairing rarely completes, so draw the (n-1-k)-regular complement and take its complement
    // (n(n-1-k) has the parity of nk, so it is realisable); complementation is a bijection between the two
    // families, so the draw is exactly as uniform as the sparse one.
    const Graph h = make_random_regular(n, n - 1 - k, seed);
    std::unordered_set<std::uint64_t> in_h;
    in_h.reserve(static_cast<std::size_t>(h.num_edges()) * 2);
    for (const Edge& e : h.edges()) in_h.insert(edge_key(e.head, e.tail));
    std::vector<Edge> edges;
    edges.reserve(static_cast<std::size_t>(n) * k / 2);
    for (Index u = 0; u < n; ++u)
      for (Index v = u + 1; v < n; ++v)
        if (!in_h.count(edge_key(u, v))) edges.push_back({u, v});
    return Graph(n, std::move(edges));
  }
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Graph);
  // Pair random stubs in passes (the Steger–Wormald idea): a pair that would make a self-loop or a
  // duplicate goes back to the pool for the next pass; if the pool can no longer be completed, restart.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::unordered_set<std::uint64_t> present;
    present.reserve(static_cast<std::size_t>(n) * k);
    std::vector<Edge> edges;
    edges.reserve(static_cast<std::size_t>(n) * k / 2);
    std::vector<Index> stubs;
    stubs.reserve(static_cast<std::size_t>(n) * k);
    for (Index v = 0; v < n; ++v)
      for (Index j = 0; j < k; ++j) stubs.push_back(v);
    bool failed = false;
    while (!stubs.empty() && !failed) {
      shuffle(stubs, rng);
      std::vector<Index> rest;
      for (std::size_t i = 0; i + 1 < stubs.size(); i += 2) {
        const Index a = stubs[i], b = stubs[i + 1];
        if (a != b && present.insert(edge_key(a, b)).second)
          edges.push_back({std::min(a, b), std::max(a, b)});
        else {
          rest.push_back(a);
          rest.push_back(b);
        }
      }
      if (rest.size() == stubs.size()) {
        // No pair joined in this pass: continue only if some pair of distinct remaining nodes can still be joined.
        std::vector<Index> nodes(rest);
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        bool any = false;
        for (std::size_t i = 0; i < nodes.size() && !any; ++i)
          for (std::size_t j = i + 1; j < nodes.size() && !any; ++j) any = !present.count(edge_key(nodes[i], nodes[j]));
        failed = !any;
      }
      stubs.swap(rest);
    }
    if (!failed) {
      std::sort(edges.begin(), edges.end(),
                [](const Edge& x, const Edge& y) { return x.head != y.head ? x.head < y.head : x.tail < y.tail; });
      return Graph(n, std::move(edges));
    }
  }
  throw std::invalid_argument("kregular: could not complete a simple " + std::to_string(k) + "-regular graph on " +
                              std::to_string(n) + " nodes in 1000 attempts");
}

Graph make_watts_strogatz(Index n, Index k, double p, std::uint64_t seed) {
  require(k >= 2 && k % 2 == 0 && k < n,
          "ws: need an even k with 2 <= k < n (got n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  require_probability(p, "ws");
  checked_count(std::int64_t{n} * k / 2, "edges", "ws");
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Graph);
  std::vector<std::unordered_set<Index>> adj(static_cast<std::size_t>(n));
  std::vector<Edge> edges;
  for (Index j = 1; j <= k / 2; ++j)
    for (Index u = 0; u < n; ++u) {
      const Index v = (u + j) % n;
      edges.push_back({u, v});
      adj[u].insert(v);
      adj[v].insert(u);
    }
  // Rewire the far end of each lattice edge with probability p (Watts and Strogatz, 1998).
  for (auto& e : edges) {
    if (uniform01(rng) >= p) continue;
    const Index u = e.head;
    if (static_cast<Index>(adj[u].size()) >= n - 1) continue;
    Index w;
    do {
      w = static_cast<Index>(uniform_below(rng, static_cast<std::uint64_t>(n)));
    } while (w == u || adj[u].count(w));
    adj[u].erase(e.tail);
    adj[e.tail].erase(u);
    adj[u].insert(w);
    adj[w].insert(u);
    e.tail = w;
  }
  return Graph(n, std::move(edges));
}

Graph make_erdos_renyi(Index n, double p, std::uint64_t seed) {
  require(n >= 1, "er: needs at least 1 node (got " + std::to_string(n) + ")");
  require_probability(p, "er");
  const double expected = p * (static_cast<double>(n) * (n - 1) / 2);
  require(expected < static_cast<double>(kMaxIndex / 4),
          "er: about " + std::to_string(expected) + " edges expected, over the 32-bit index");
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Graph);
  std::vector<Edge> edges;
  if (p <= 0.0 || n < 2) return Graph(n, std::move(edges));
  if (p >= 1.0) return make_complete(n);
  // Geometric skipping over the pairs (v, w), w < v (Batagelj and Brandes, 2005): O(n + |E|).
  const double log_q = std::log1p(-p);
  std::int64_t v = 1, w = -1;
  while (v < n) {
    const double r = uniform01(rng);
    // The skip is geometric; for tiny p it can exceed every remaining pair (and the int64 range), so
    // compare it as a double before converting: pairs left < n^2 <= 2^62.
    const double skip = std::floor(std::log1p(-r) / log_q);
    if (!(skip < static_cast<double>(n) * static_cast<double>(n))) break;
    w += 1 + static_cast<std::int64_t>(skip);
    while (w >= v && v < n) {
      w -= v;
      ++v;
    }
    if (v < n) edges.push_back({static_cast<Index>(w), static_cast<Index>(v)});
  }
  return Graph(n, std::move(edges));
}

Graph make_barabasi_albert(Index n, Index m, std::uint64_t seed) {
  require(m >= 1 && m < n, "ba: need 1 <= m < n (got n=" + std::to_string(n) + ", m=" + std::to_string(m) + ")");
  checked_count(std::int64_t{n} * m, "edges", "ba");
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Graph);
  std::vector<Edge> edges;
  std::vector<Index> repeated;  // every node once per incident edge: sampling from it is preferential
  for (Index v = 1; v <= m; ++v) {
    edges.push_back({0, v});
    repeated.push_back(0);
    repeated.push_back(v);
  }
  std::vector<Index> targets;
  for (Index v = m + 1; v < n; ++v) {
    targets.clear();
    while (static_cast<Index>(targets.size()) < m) {
      const Index t = repeated[uniform_below(rng, repeated.size())];
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
    for (Index t : targets) {
      edges.push_back({t, v});
      repeated.push_back(t);
      repeated.push_back(v);
    }
  }
  return Graph(n, std::move(edges));
}

}  // namespace dualgibbs
