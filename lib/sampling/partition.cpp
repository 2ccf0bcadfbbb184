// One chain's graph over the members of a chain group: METIS partition, the parts' shares with their ghost layers,
// the colour-ordered sweep of one part with its halo exchanges, and the ensemble over it.
#include <dualgibbs/sampling/partition.hpp>

#include <dualgibbs/core/chain_group.hpp>

#include "core/group_totals.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace dualgibbs {

std::vector<int> partition_graph(const SparseMatrix& pattern, int parts) {
  const Index n = static_cast<Index>(pattern.rows());
  if (pattern.cols() != n)
    throw std::invalid_argument("partition_graph: the pattern is " + std::to_string(pattern.rows()) + " x " +
                                std::to_string(pattern.cols()) + ", not square");
  if (parts < 1 || parts > n)
    throw std::invalid_argument("partition_graph: " + std::to_string(parts) + " parts of " + std::to_string(n) +
                                " coordinates (expected 1 to the number of coordinates)");
  std::vector<int> part(static_cast<std::size_t>(n), 0);
  if (parts == 1) return part;
  // METIS's graph: the off-diagonal pattern, CSR without the diagonal.
  std::vector<idx_t> xadj(static_cast<std::size_t>(n) + 1, 0), adjncy;
  adjncy.reserve(static_cast<std::size_t>(pattern.nonZeros()));
  for (Index i = 0; i < n; ++i) {
    for (SparseMatrix::InnerIterator it(pattern, i); it; ++it)
      if (it.col() != i) adjncy.push_back(static_cast<idx_t>(it.col()));
    xadj[static_cast<std::size_t>(i) + 1] = static_cast<idx_t>(adjncy.size());
  }
  // GKlib's random generator, which METIS draws from, is one global state: calls from two threads at once would
  // mix their draws (and their partitions).
  static std::mutex metis_lock;
  const std::lock_guard<std::mutex> hold(metis_lock);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition on every member
  options[METIS_OPTION_NUMBERING] = 0;
  idx_t nvtxs = n, ncon = 1, nparts = parts, edgecut = 0;
  std::vector<idx_t> where(static_cast<std::size_t>(n), 0);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(), nullptr,
                                         nullptr, nullptr, &nparts, nullptr, nullptr, options, &edgecut, where.data());
  if (status != METIS_OK)
    throw std::runtime_error("partition_graph: METIS_PartGraphKway failed (status " + std::to_string(status) +
                             (status == METIS_ERROR_MEMORY ? ": out of memory)" : ")"));
  for (std::size_t i = 0; i < where.size(); ++i) part[i] = static_cast<int>(where[i]);
  return part;
}

std::vector<int> partition_ranges(Index n, int parts) {
  if (parts < 1 || parts > n)
    throw std::invalid_argument("partition_ranges: " + std::to_string(parts) + " parts of " + std::to_string(n) +
                                " coordinates (expected 1 to the number of coordinates)");
  std::vector<int> part(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < parts; ++r) {
    const auto [first, last] = member_share(static_cast<std::size_t>(n), r, parts);
    std::fill(part.begin() + static_cast<std::ptrdiff_t>(first), part.begin() + static_cast<std::ptrdiff_t>(last), r);
  }
  return part;
}

double cut_fraction(const SparseMatrix& pattern, const std::vector<int>& part) {
  if (part.size() != static_cast<std::size_t>(pattern.rows()))
    throw std::invalid_argument("cut_fraction: " + std::to_string(part.size()) + " parts for " +
                                std::to_string(pattern.rows()) + " coordinates");
  double pairs = 0, cut = 0;
  for (Index i = 0; i < pattern.rows(); ++i)
    for (SparseMatrix::InnerIterator it(pattern, i); it; ++it) {
      if (it.col() == i) continue;
      pairs += 1;
      cut += part[static_cast<std::size_t>(i)] != part[static_cast<std::size_t>(it.col())];
    }
  return pairs > 0 ? cut / pairs : 0.0;
}

namespace {

// \throws std::invalid_argument (message from `where`) unless `part` gives each of n `items` a part in [0, parts) and
// me is one of them.
void check_parts(const std::string& where, const std::vector<int>& part, Index n, const char* item, int me, int parts) {
  if (part.size() != static_cast<std::size_t>(n))
    throw std::invalid_argument(where + std::to_string(part.size()) + " parts given for " + std::to_string(n) + " " +
                                item + "s");
  if (parts < 1 || me < 0 || me >= parts)
    throw std::invalid_argument(where + "part " + std::to_string(me) + " of " + std::to_string(parts));
  for (std::size_t i = 0; i < part.size(); ++i)
    if (part[i] < 0 || part[i] >= parts)
      throw std::invalid_argument(where + item + " " + std::to_string(i) + " is in part " + std::to_string(part[i]) +
                                  ", outside 0.." + std::to_string(parts - 1));
}

void check_share_input(const SparseMatrix& m, const Eigen::VectorXd& rhs,
                       const std::vector<std::vector<Index>>& classes, const std::vector<int>& part, int me,
                       int parts) {
  const std::string where = "make_share: ";
  const Index n = static_cast<Index>(m.rows());
  if (m.cols() != n) throw std::invalid_argument(where + "the precision is not square");
  if (rhs.size() != 0 && rhs.size() != n)
    throw std::invalid_argument(where + "a right-hand side of length " + std::to_string(rhs.size()) + " for " +
                                std::to_string(n) + " coordinates");
  check_parts(where, part, n, "coordinate", me, parts);
  std::size_t sites = 0;
  for (const auto& c : classes) sites += c.size();
  if (sites != static_cast<std::size_t>(n))
    throw std::invalid_argument(where + "the colour classes hold " + std::to_string(sites) + " sites for " +
                                std::to_string(n) + " coordinates");
}

// The class of every coordinate. \throws std::invalid_argument unless the classes partition 0..n-1.
std::vector<Index> class_of(const std::vector<std::vector<Index>>& classes, Index n) {
  std::vector<Index> cls(static_cast<std::size_t>(n), -1);
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (Index i : classes[k]) {
      if (i < 0 || i >= n || cls[static_cast<std::size_t>(i)] >= 0)
        throw std::invalid_argument("make_share: site " + std::to_string(i) + " of colour class " + std::to_string(k) +
                                    " is outside 0.." + std::to_string(n - 1) + " or in two classes");
      cls[static_cast<std::size_t>(i)] = static_cast<Index>(k);
    }
  return cls;
}

// The local coordinates (owned and their neighbours, increasing) and the local index of each global one (-1 if none).
std::vector<Index> local_coordinates(const SparseMatrix& m, const std::vector<int>& part, int me,
                                     std::vector<Index>& local_of) {
  const Index n = static_cast<Index>(m.rows());
  std::vector<char> keep(static_cast<std::size_t>(n), 0);
  for (Index i = 0; i < n; ++i) {
    if (part[static_cast<std::size_t>(i)] != me) continue;
    for (SparseMatrix::InnerIterator it(m, i); it; ++it) keep[static_cast<std::size_t>(it.col())] = 1;
    keep[static_cast<std::size_t>(i)] = 1;
  }
  std::vector<Index> global;
  local_of.assign(static_cast<std::size_t>(n), -1);
  for (Index i = 0; i < n; ++i)
    if (keep[static_cast<std::size_t>(i)]) {
      local_of[static_cast<std::size_t>(i)] = static_cast<Index>(global.size());
      global.push_back(i);
    }
  return global;
}

// M[global, global]: row by row in local order, the entries whose column is local (all of them for an owned row).
SparseMatrix local_matrix(const SparseMatrix& m, const std::vector<Index>& global, const std::vector<Index>& local_of) {
  const Index nl = static_cast<Index>(global.size());
  SparseMatrix local(nl, nl);
  std::size_t nnz = 0;
  for (Index g : global) nnz += static_cast<std::size_t>(m.outerIndexPtr()[g + 1] - m.outerIndexPtr()[g]);
  local.reserve(static_cast<Eigen::Index>(nnz));
  for (Index r = 0; r < nl; ++r) {
    local.startVec(r);
    for (SparseMatrix::InnerIterator it(m, global[static_cast<std::size_t>(r)]); it; ++it) {
      const Index c = local_of[static_cast<std::size_t>(it.col())];
      if (c >= 0) local.insertBack(r, c) = it.value();
    }
  }
  local.finalize();
  return local;
}

// The halo lists of share s (neighbors, send and receive sites per class), from the global structure.
void halo_lists(const SparseMatrix& m, const std::vector<int>& part, const std::vector<Index>& cls,
                const std::vector<Index>& local_of, std::size_t classes, GraphShare& s) {
  const int me = s.part;
  std::vector<char> is_neighbor(static_cast<std::size_t>(s.parts), 0);
  for (Index g : s.global)
    if (part[static_cast<std::size_t>(g)] != me)
      is_neighbor[static_cast<std::size_t>(part[static_cast<std::size_t>(g)])] = 1;
  std::vector<int> slot(static_cast<std::size_t>(s.parts), -1);
  for (int q = 0; q < s.parts; ++q)
    if (is_neighbor[static_cast<std::size_t>(q)]) {
      slot[static_cast<std::size_t>(q)] = static_cast<int>(s.neighbors.size());
      s.neighbors.push_back(q);
    }
  const std::size_t nb = s.neighbors.size();
  // Per class and neighbour, in increasing global order: owned sites a neighbour holds as ghosts (send), and the
  // neighbour's sites held here as ghosts (receive).
  std::vector<std::vector<std::vector<Index>>> send(classes, std::vector<std::vector<Index>>(nb)), recv = send;
  std::vector<int> seen(static_cast<std::size_t>(s.parts), -1);
  for (Index g : s.global) {
    const int owner = part[static_cast<std::size_t>(g)];
    const auto k = static_cast<std::size_t>(cls[static_cast<std::size_t>(g)]);
    const Index l = local_of[static_cast<std::size_t>(g)];
    if (owner != me) {
      recv[k][static_cast<std::size_t>(slot[static_cast<std::size_t>(owner)])].push_back(l);
      continue;
    }
    for (SparseMatrix::InnerIterator it(m, g); it; ++it) {
      const int q = part[static_cast<std::size_t>(it.col())];
      if (q == me || seen[static_cast<std::size_t>(q)] == g) continue;
      seen[static_cast<std::size_t>(q)] = g;
      send[k][static_cast<std::size_t>(slot[static_cast<std::size_t>(q)])].push_back(l);
    }
  }
  auto flatten = [nb](const std::vector<std::vector<Index>>& groups, std::vector<Index>& sites,
                      std::vector<std::size_t>& counts) {
    counts.assign(nb, 0);
    for (std::size_t j = 0; j < nb; ++j) {
      counts[j] = groups[j].size();
      sites.insert(sites.end(), groups[j].begin(), groups[j].end());
    }
  };
  s.send_sites.assign(classes, {});
  s.send_counts.assign(classes, {});
  s.recv_sites.assign(classes, {});
  s.recv_counts.assign(classes, {});
  for (std::size_t k = 0; k < classes; ++k) {
    flatten(send[k], s.send_sites[k], s.send_counts[k]);
    flatten(recv[k], s.recv_sites[k], s.recv_counts[k]);
  }
}

}  // namespace

GraphShare make_share(const SparseMatrix& precision, const Eigen::VectorXd& rhs,
                      const std::vector<std::vector<Index>>& classes, const std::vector<int>& part, int me, int parts) {
  check_share_input(precision, rhs, classes, part, me, parts);
  const Index n = static_cast<Index>(precision.rows());
  const std::vector<Index> cls = class_of(classes, n);
  GraphShare s;
  s.part = me;
  s.parts = parts;
  s.global_dimension = n;
  std::vector<Index> local_of;
  s.global = local_coordinates(precision, part, me, local_of);
  for (std::size_t l = 0; l < s.global.size(); ++l)
    if (part[static_cast<std::size_t>(s.global[l])] == me) s.owned.push_back(static_cast<Index>(l));
  s.precision = local_matrix(precision, s.global, local_of);
  if (rhs.size() != 0) {
    s.rhs.resize(static_cast<Eigen::Index>(s.global.size()));
    for (std::size_t l = 0; l < s.global.size(); ++l) s.rhs[static_cast<Eigen::Index>(l)] = rhs[s.global[l]];
  }
  s.class_sites.assign(classes.size(), {});
  s.class_places.assign(classes.size(), {});
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (std::size_t p = 0; p < classes[k].size(); ++p) {
      const Index g = classes[k][p];
      if (part[static_cast<std::size_t>(g)] != me) continue;
      s.class_sites[k].push_back(local_of[static_cast<std::size_t>(g)]);
      s.class_places[k].push_back(p);
    }
  halo_lists(precision, part, cls, local_of, classes.size(), s);
  return s;
}

// ---- the dual domain's share --------------------------------------------------------------------------------

namespace {

void check_dual_share_input(const Graph& graph, const std::vector<std::vector<Index>>& classes,
                            const std::vector<int>& part, int me, int parts) {
  const std::string where = "make_dual_share: ";
  const Index n = graph.num_nodes(), m = graph.num_edges();
  if (m < 1) throw std::invalid_argument(where + "the graph has no edges, so the dual domain is empty");
  check_parts(where, part, n, "node", me, parts);
  std::vector<char> seen(static_cast<std::size_t>(m), 0);
  std::vector<std::size_t> at(static_cast<std::size_t>(n), classes.size());  // the last class seen at each node
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (Index e : classes[k]) {
      if (e < 0 || e >= m || seen[static_cast<std::size_t>(e)])
        throw std::invalid_argument(where + "edge " + std::to_string(e) + " of colour class " + std::to_string(k) +
                                    " is outside 0.." + std::to_string(m - 1) + " or in two classes");
      seen[static_cast<std::size_t>(e)] = 1;
      for (Index v : {graph.edge(e).head, graph.edge(e).tail}) {
        if (at[static_cast<std::size_t>(v)] == k)
          throw std::invalid_argument(where + "colour class " + std::to_string(k) + " has two edges at node " +
                                      std::to_string(v) + " (the classes must be matchings)");
        at[static_cast<std::size_t>(v)] = k;
      }
    }
  if (std::find(seen.begin(), seen.end(), 0) != seen.end())
    throw std::invalid_argument(where + "the colour classes do not hold every edge");
}

// Per neighbour part (grouped), in increasing local order within a group: the flattened lists of one exchange.
void flatten_groups(const std::vector<int>& neighbors, std::vector<std::vector<Index>>& groups,
                    std::vector<Index>& sites, std::vector<std::size_t>& counts) {
  sites.clear();
  counts.assign(neighbors.size(), 0);
  for (std::size_t j = 0; j < neighbors.size(); ++j) {
    std::vector<Index>& g = groups[static_cast<std::size_t>(neighbors[j])];
    std::sort(g.begin(), g.end());
    counts[j] = g.size();
    sites.insert(sites.end(), g.begin(), g.end());
  }
}

}  // namespace

GraphShare make_dual_share(const Graph& graph, const std::vector<std::vector<Index>>& classes,
                           const std::vector<int>& part, int me, int parts) {
  check_dual_share_input(graph, classes, part, me, parts);
  const Index n = graph.num_nodes(), m = graph.num_edges();
  const auto& offsets = graph.incidence_offsets();
  const auto& around = graph.incidence_neighbors();
  const auto owner_of = [&](Index v) { return part[static_cast<std::size_t>(v)]; };
  GraphShare s;
  s.part = me;
  s.parts = parts;
  s.global_dimension = m;
  s.edge_owner.resize(static_cast<std::size_t>(m));
  // Local nodes: the own nodes and their neighbours; local edges: every edge at an own node.
  std::vector<char> local_node(static_cast<std::size_t>(n), 0);
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = graph.edge(e);
    s.edge_owner[static_cast<std::size_t>(e)] = owner_of(ed.head);
    if (owner_of(ed.head) != me && owner_of(ed.tail) != me) continue;
    s.global.push_back(e);
    if (owner_of(ed.head) == me) s.owned.push_back(static_cast<Index>(s.global.size() - 1));
    local_node[static_cast<std::size_t>(ed.head)] = local_node[static_cast<std::size_t>(ed.tail)] = 1;
  }
  std::vector<Index> node_local(static_cast<std::size_t>(n), -1), edge_local(static_cast<std::size_t>(m), -1);
  for (Index v = 0; v < n; ++v) {
    if (!local_node[static_cast<std::size_t>(v)] && owner_of(v) != me) continue;
    node_local[static_cast<std::size_t>(v)] = static_cast<Index>(s.nodes.size());
    if (owner_of(v) == me) s.owned_nodes.push_back(static_cast<Index>(s.nodes.size()));
    s.nodes.push_back(v);
  }
  for (std::size_t l = 0; l < s.global.size(); ++l)
    edge_local[static_cast<std::size_t>(s.global[l])] = static_cast<Index>(l);
  s.class_sites.assign(classes.size(), {});
  s.class_places.assign(classes.size(), {});
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (std::size_t p = 0; p < classes[k].size(); ++p) {
      const Index e = classes[k][p];
      if (s.edge_owner[static_cast<std::size_t>(e)] != me) continue;
      s.class_sites[k].push_back(edge_local[static_cast<std::size_t>(e)]);
      s.class_places[k].push_back(p);
    }
  // The parts holding node v: its owner and the owners of its neighbours.
  std::vector<int> holders;
  const auto holders_of = [&](Index v) {
    holders.assign(1, owner_of(v));
    for (Index t = offsets[static_cast<std::size_t>(v)]; t < offsets[static_cast<std::size_t>(v) + 1]; ++t)
      holders.push_back(owner_of(around[static_cast<std::size_t>(t)]));
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    return holders;
  };
  // Per list and part: the local nodes sent to or received from it (global order = local order).
  using Groups = std::vector<std::vector<Index>>;
  const auto none = Groups(static_cast<std::size_t>(parts));
  std::vector<Groups> send(classes.size(), none), recv(classes.size(), none);
  Groups start_send = none, start_recv = none;
  for (Index l : s.owned_nodes)
    for (int q : holders_of(s.nodes[static_cast<std::size_t>(l)]))
      if (q != me) start_send[static_cast<std::size_t>(q)].push_back(l);
  for (std::size_t l = 0; l < s.nodes.size(); ++l)
    if (owner_of(s.nodes[l]) != me)
      start_recv[static_cast<std::size_t>(owner_of(s.nodes[l]))].push_back(static_cast<Index>(l));
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (Index e : classes[k]) {
      const int p = s.edge_owner[static_cast<std::size_t>(e)];
      for (Index v : {graph.edge(e).head, graph.edge(e).tail}) {
        const Index l = node_local[static_cast<std::size_t>(v)];
        if (p == me) {
          for (int q : holders_of(v))
            if (q != me) send[k][static_cast<std::size_t>(q)].push_back(l);
        } else if (l >= 0) {
          recv[k][static_cast<std::size_t>(p)].push_back(l);
        }
      }
    }
  // The edges a Chebyshev-SSOR combination must bring up to date: own edges whose tail another part owns (a ghost
  // there), and this part's ghost edges (from their heads' owners).
  Groups edge_send = none, edge_recv = none;
  for (std::size_t l = 0; l < s.global.size(); ++l) {
    const Edge& ed = graph.edge(s.global[l]);
    const int head = owner_of(ed.head), tail = owner_of(ed.tail);
    if (head == me && tail != me) edge_send[static_cast<std::size_t>(tail)].push_back(static_cast<Index>(l));
    if (head != me) edge_recv[static_cast<std::size_t>(head)].push_back(static_cast<Index>(l));
  }
  // The neighbours: every part this one sends to or receives from in any list (a symmetric relation).
  std::vector<char> is_neighbor(static_cast<std::size_t>(parts), 0);
  for (const Groups* g : {&start_send, &start_recv, &edge_send, &edge_recv})
    for (int q = 0; q < parts; ++q)
      is_neighbor[static_cast<std::size_t>(q)] |= !(*g)[static_cast<std::size_t>(q)].empty();
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (int q = 0; q < parts; ++q)
      is_neighbor[static_cast<std::size_t>(q)] |=
          !send[k][static_cast<std::size_t>(q)].empty() || !recv[k][static_cast<std::size_t>(q)].empty();
  for (int q = 0; q < parts; ++q)
    if (is_neighbor[static_cast<std::size_t>(q)] && q != me) s.neighbors.push_back(q);
  flatten_groups(s.neighbors, start_send, s.start_send_sites, s.start_send_counts);
  flatten_groups(s.neighbors, edge_send, s.edge_send_sites, s.edge_send_counts);
  flatten_groups(s.neighbors, edge_recv, s.edge_recv_sites, s.edge_recv_counts);
  flatten_groups(s.neighbors, start_recv, s.start_recv_sites, s.start_recv_counts);
  s.send_sites.assign(classes.size(), {});
  s.send_counts.assign(classes.size(), {});
  s.recv_sites.assign(classes.size(), {});
  s.recv_counts.assign(classes.size(), {});
  for (std::size_t k = 0; k < classes.size(); ++k) {
    flatten_groups(s.neighbors, send[k], s.send_sites[k], s.send_counts[k]);
    flatten_groups(s.neighbors, recv[k], s.recv_sites[k], s.recv_counts[k]);
  }
  return s;
}

// ---- a lattice's share, without its graph ------------------------------------------------------------------

namespace {

// The nodes of a lattice by their ids (row-major, the last side fastest) and their neighbours, as the generators
// number them (make_path, make_cycle, make_torus, make_grid, make_torus3).
class Lattice {
 public:
  explicit Lattice(const LatticeShape& shape) : m_sides(shape.sides), m_periodic(shape.periodic) {
    const std::string where = "lattice_share: ";
    if (m_sides.empty() || m_sides.size() > 3)
      throw std::invalid_argument(where + std::to_string(m_sides.size()) + " sides (expected 1, 2 or 3)");
    std::int64_t n = 1;
    for (Index side : m_sides) {
      if (side < (m_periodic ? 3 : 1))
        throw std::invalid_argument(where + "a side of " + std::to_string(side) +
                                    (m_periodic ? " (a periodic side needs at least 3 nodes)" : " (at least 1)"));
      n *= side;
      if (n > std::numeric_limits<Index>::max())
        throw std::invalid_argument(where + "more nodes than a 32-bit index holds");
    }
    if (!(std::isfinite(shape.s) && shape.s != 0 && std::isfinite(shape.sigma) && shape.sigma != 0))
      throw std::invalid_argument(where + "s and sigma must be finite and non-zero");
    m_n = static_cast<Index>(n);
    m_stride.assign(m_sides.size(), 1);
    for (std::size_t k = m_sides.size() - 1; k > 0; --k) m_stride[k - 1] = m_stride[k] * m_sides[k];
  }
  Index size() const noexcept { return m_n; }
  // The neighbours of v, increasing (at most 6).
  void neighbors(Index v, std::vector<Index>& out) const {
    out.clear();
    for (std::size_t k = 0; k < m_sides.size(); ++k) {
      const Index c = (v / m_stride[k]) % m_sides[k], base = v - c * m_stride[k];
      if (c > 0 || m_periodic) out.push_back(base + ((c + m_sides[k] - 1) % m_sides[k]) * m_stride[k]);
      if (c + 1 < m_sides[k] || m_periodic) out.push_back(base + ((c + 1) % m_sides[k]) * m_stride[k]);
    }
    std::sort(out.begin(), out.end());
  }
  std::size_t dims() const noexcept { return m_sides.size(); }
  bool periodic() const noexcept { return m_periodic; }
  // The node one step from v along side d, forward (+1) or back (-1), wrapping around (periodic lattices).
  Index step(Index v, std::size_t d, int dir) const noexcept {
    const Index c = (v / m_stride[d]) % m_sides[d], base = v - c * m_stride[d];
    return base + ((c + m_sides[d] + dir) % m_sides[d]) * m_stride[d];
  }
  // Edge e = D v + t of a periodic lattice, as the generators number them (make_cycle, make_torus, make_torus3): head
  // v, tail the next node along side D - 1 - t.
  Index edge_head(Index e) const noexcept { return e / static_cast<Index>(dims()); }
  Index edge_tail(Index e) const noexcept {
    const auto d = static_cast<Index>(dims());
    return step(e / d, static_cast<std::size_t>(d - 1 - e % d), +1);
  }

 private:
  std::vector<Index> m_sides, m_stride;
  bool m_periodic;
  Index m_n = 0;
};

// The nodes 0..n-1 cut into `parts` contiguous ranges (partition_ranges(): member_share()), and the part of a node.
class NodeRanges {
 public:
  NodeRanges(Index n, int parts) : m_bounds(static_cast<std::size_t>(parts) + 1, 0) {
    for (int r = 0; r < parts; ++r) m_bounds[static_cast<std::size_t>(r) + 1] = member_share(n, r, parts).second;
  }
  // The first node of part r (r = parts: n).
  Index first(int r) const noexcept { return static_cast<Index>(m_bounds[static_cast<std::size_t>(r)]); }
  int owner(Index v) const noexcept {
    return static_cast<int>(std::upper_bound(m_bounds.begin(), m_bounds.end(), static_cast<std::size_t>(v)) -
                            m_bounds.begin()) -
           1;
  }

 private:
  std::vector<std::size_t> m_bounds;
};

// greedy_coloring() of the lattice's Q, from the formula of its neighbours: one byte per node.
std::vector<std::uint8_t> lattice_colors(const Lattice& lat) {
  std::vector<std::uint8_t> color(static_cast<std::size_t>(lat.size()), 0);
  std::vector<Index> nb;
  for (Index v = 0; v < lat.size(); ++v) {
    lat.neighbors(v, nb);
    unsigned used = 0;  // bit c: an earlier neighbour has colour c (at most 6 neighbours: colours < 7)
    for (Index u : nb)
      if (u < v) used |= 1u << color[static_cast<std::size_t>(u)];
    std::uint8_t c = 0;
    while (used & (1u << c)) ++c;
    color[static_cast<std::size_t>(v)] = c;
  }
  return color;
}

// The halo lists of a lattice's share s (own nodes lo..hi-1, `ghosts` increasing): neighbours, and per class the own
// sites each neighbour holds as ghosts and the ghosts each neighbour sends, in increasing id.
template <class Owner, class LocalOf>
void lattice_halo(const Lattice& lat, const std::vector<std::uint8_t>& color, std::size_t classes, const Owner& owner,
                  const LocalOf& local_of, Index lo, Index hi, const std::vector<Index>& ghosts, GraphShare& s) {
  for (Index g : ghosts) s.neighbors.push_back(owner(g));
  std::sort(s.neighbors.begin(), s.neighbors.end());
  s.neighbors.erase(std::unique(s.neighbors.begin(), s.neighbors.end()), s.neighbors.end());
  const std::size_t nb_count = s.neighbors.size();
  const auto slot = [&](int q) {
    return static_cast<std::size_t>(std::lower_bound(s.neighbors.begin(), s.neighbors.end(), q) - s.neighbors.begin());
  };
  std::vector<std::vector<std::vector<Index>>> send(classes, std::vector<std::vector<Index>>(nb_count)), recv = send;
  std::vector<Index> nb;
  std::vector<int> seen;
  for (Index v = lo; v < hi; ++v) {
    lat.neighbors(v, nb);
    seen.clear();
    for (Index u : nb) {
      if (u >= lo && u < hi) continue;
      const int q = owner(u);
      if (std::find(seen.begin(), seen.end(), q) != seen.end()) continue;
      seen.push_back(q);
      send[color[static_cast<std::size_t>(v)]][slot(q)].push_back(local_of(v));
    }
  }
  for (Index g : ghosts) recv[color[static_cast<std::size_t>(g)]][slot(owner(g))].push_back(local_of(g));
  s.send_sites.assign(classes, {});
  s.send_counts.assign(classes, std::vector<std::size_t>(nb_count, 0));
  s.recv_sites.assign(classes, {});
  s.recv_counts.assign(classes, std::vector<std::size_t>(nb_count, 0));
  for (std::size_t k = 0; k < classes; ++k)
    for (std::size_t j = 0; j < nb_count; ++j) {
      s.send_counts[k][j] = send[k][j].size();
      s.send_sites[k].insert(s.send_sites[k].end(), send[k][j].begin(), send[k][j].end());
      s.recv_counts[k][j] = recv[k][j].size();
      s.recv_sites[k].insert(s.recv_sites[k].end(), recv[k][j].begin(), recv[k][j].end());
    }
}

}  // namespace

GraphShare lattice_share(const LatticeShape& shape, int me, int parts) {
  const Lattice lat(shape);
  const Index n = lat.size();
  if (parts < 1 || parts > n || me < 0 || me >= parts)
    throw std::invalid_argument("lattice_share: part " + std::to_string(me) + " of " + std::to_string(parts) + " for " +
                                std::to_string(n) + " nodes");
  // Model's arithmetic: Q_vv = 1/s^2 + w + ... + w (one w = 1/sigma^2 per edge), Q_uv = (1 x -1) w [eqn:QPNH].
  const double s2 = shape.s * shape.s, w = 1.0 / (shape.sigma * shape.sigma), off = 1.0 * -1.0 * w;
  const std::vector<std::uint8_t> color = lattice_colors(lat);
  std::size_t classes = 0;
  for (std::uint8_t c : color) classes = std::max<std::size_t>(classes, c + 1u);
  const NodeRanges ranges(n, parts);
  const auto owner = [&ranges](Index v) { return ranges.owner(v); };
  const Index lo = ranges.first(me), hi = ranges.first(me + 1);
  GraphShare s;
  s.part = me;
  s.parts = parts;
  s.global_dimension = n;
  std::vector<Index> nb, ghosts;
  for (Index v = lo; v < hi; ++v) {
    lat.neighbors(v, nb);
    for (Index u : nb)
      if (u < lo || u >= hi) ghosts.push_back(u);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  const auto split = std::lower_bound(ghosts.begin(), ghosts.end(), lo);
  s.global.assign(ghosts.begin(), split);
  for (Index v = lo; v < hi; ++v) s.global.push_back(v);
  s.global.insert(s.global.end(), split, ghosts.end());
  const auto local_of = [&](Index v) {
    const auto it = std::lower_bound(s.global.begin(), s.global.end(), v);
    return it != s.global.end() && *it == v ? static_cast<Index>(it - s.global.begin()) : Index{-1};
  };
  const auto first_own = static_cast<Index>(split - ghosts.begin());
  for (Index l = first_own; l < first_own + (hi - lo); ++l) s.owned.push_back(l);
  // The rows of Q over the local nodes, restricted to local columns (the own rows whole).
  const auto nl = static_cast<Index>(s.global.size());
  s.precision.resize(nl, nl);
  s.precision.reserve(static_cast<Eigen::Index>(s.global.size()) * 7);
  for (Index r = 0; r < nl; ++r) {
    const Index v = s.global[static_cast<std::size_t>(r)];
    lat.neighbors(v, nb);
    double diag = 1.0 / s2;
    for (std::size_t t = 0; t < nb.size(); ++t) diag += w;
    s.precision.startVec(r);
    bool diag_done = false;
    for (Index u : nb) {
      if (!diag_done && u > v) {
        s.precision.insertBack(r, r) = diag;
        diag_done = true;
      }
      const Index c = local_of(u);
      if (c >= 0) s.precision.insertBack(r, c) = off;
    }
    if (!diag_done) s.precision.insertBack(r, r) = diag;
  }
  s.precision.finalize();
  // Own sites per class in increasing id (their places: the class's sites below `lo` come first).
  std::vector<std::size_t> place(classes, 0);
  for (Index v = 0; v < lo; ++v) ++place[color[static_cast<std::size_t>(v)]];
  s.class_sites.assign(classes, {});
  s.class_places.assign(classes, {});
  for (Index v = lo; v < hi; ++v) {
    const std::size_t k = color[static_cast<std::size_t>(v)];
    s.class_sites[k].push_back(first_own + (v - lo));
    s.class_places[k].push_back(place[k]++);
  }
  lattice_halo(lat, color, classes, owner, local_of, lo, hi, ghosts, s);
  return s;
}

namespace {

// greedy_edge_coloring() of a periodic lattice's edges, edge by edge from the formula of their ends: one byte per edge
// and a mask of used colours per node (at most 2 x 6 - 1 = 11 colours).
std::vector<std::uint8_t> lattice_edge_colors(const Lattice& lat) {
  const std::size_t m = static_cast<std::size_t>(lat.size()) * lat.dims();
  std::vector<std::uint8_t> color(m, 0);
  std::vector<std::uint16_t> used(static_cast<std::size_t>(lat.size()), 0);
  for (std::size_t e = 0; e < m; ++e) {
    const auto u = static_cast<std::size_t>(lat.edge_head(static_cast<Index>(e)));
    const auto v = static_cast<std::size_t>(lat.edge_tail(static_cast<Index>(e)));
    const unsigned taken = used[u] | used[v];
    std::uint8_t c = 0;
    while (taken & (1u << c)) ++c;
    color[e] = c;
    used[u] = static_cast<std::uint16_t>(used[u] | (1u << c));
    used[v] = static_cast<std::uint16_t>(used[v] | (1u << c));
  }
  return color;
}

// The halo lists of a periodic lattice's dual share s (edges, nodes, own nodes and edges set), as make_dual_share()
// makes them from the lattice's graph.
template <class Owner, class LocalNode>
void lattice_dual_halo(const Lattice& lat, const std::vector<std::uint8_t>& color, std::size_t classes,
                       const Owner& owner, const LocalNode& local_node, GraphShare& s) {
  const int me = s.part;
  const auto d = static_cast<Index>(lat.dims());
  std::vector<Index> nb;
  std::vector<int> holders;
  const auto holders_of = [&](Index v) -> const std::vector<int>& {
    lat.neighbors(v, nb);
    holders.assign(1, owner(v));
    for (Index u : nb) holders.push_back(owner(u));
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    return holders;
  };
  using Groups = std::vector<std::vector<Index>>;
  const auto none = Groups(static_cast<std::size_t>(s.parts));
  std::vector<Groups> send(classes, none), recv(classes, none);
  Groups start_send = none, start_recv = none, edge_send = none, edge_recv = none;
  for (Index l : s.owned_nodes)
    for (int q : holders_of(s.nodes[static_cast<std::size_t>(l)]))
      if (q != me) start_send[static_cast<std::size_t>(q)].push_back(l);
  for (std::size_t l = 0; l < s.nodes.size(); ++l) {
    const Index x = s.nodes[l];
    if (owner(x) != me) start_recv[static_cast<std::size_t>(owner(x))].push_back(static_cast<Index>(l));
    // The edges at x that another part owns: x's tally changes when they do.
    for (Index t = 0; t < d; ++t)
      for (const Index e : {x * d + t, lat.step(x, static_cast<std::size_t>(d - 1 - t), -1) * d + t}) {
        const int p = owner(lat.edge_head(e));
        if (p != me)
          recv[color[static_cast<std::size_t>(e)]][static_cast<std::size_t>(p)].push_back(static_cast<Index>(l));
      }
  }
  for (Index l : s.owned) {
    const Index e = s.global[static_cast<std::size_t>(l)];
    for (const Index x : {lat.edge_head(e), lat.edge_tail(e)})
      for (int q : holders_of(x))
        if (q != me) send[color[static_cast<std::size_t>(e)]][static_cast<std::size_t>(q)].push_back(local_node(x));
    if (owner(lat.edge_tail(e)) != me) edge_send[static_cast<std::size_t>(owner(lat.edge_tail(e)))].push_back(l);
  }
  for (std::size_t l = 0; l < s.global.size(); ++l) {
    const int p = owner(lat.edge_head(s.global[l]));
    if (p != me) edge_recv[static_cast<std::size_t>(p)].push_back(static_cast<Index>(l));
  }
  std::vector<char> is_neighbor(static_cast<std::size_t>(s.parts), 0);
  for (const Groups* g : {&start_send, &start_recv, &edge_send, &edge_recv})
    for (int q = 0; q < s.parts; ++q)
      is_neighbor[static_cast<std::size_t>(q)] |= !(*g)[static_cast<std::size_t>(q)].empty();
  for (std::size_t k = 0; k < classes; ++k)
    for (int q = 0; q < s.parts; ++q)
      is_neighbor[static_cast<std::size_t>(q)] |=
          !send[k][static_cast<std::size_t>(q)].empty() || !recv[k][static_cast<std::size_t>(q)].empty();
  for (int q = 0; q < s.parts; ++q)
    if (is_neighbor[static_cast<std::size_t>(q)] && q != me) s.neighbors.push_back(q);
  flatten_groups(s.neighbors, start_send, s.start_send_sites, s.start_send_counts);
  flatten_groups(s.neighbors, start_recv, s.start_recv_sites, s.start_recv_counts);
  flatten_groups(s.neighbors, edge_send, s.edge_send_sites, s.edge_send_counts);
  flatten_groups(s.neighbors, edge_recv, s.edge_recv_sites, s.edge_recv_counts);
  s.send_sites.assign(classes, {});
  s.send_counts.assign(classes, {});
  s.recv_sites.assign(classes, {});
  s.recv_counts.assign(classes, {});
  for (std::size_t k = 0; k < classes; ++k) {
    flatten_groups(s.neighbors, send[k], s.send_sites[k], s.send_counts[k]);
    flatten_groups(s.neighbors, recv[k], s.recv_sites[k], s.recv_counts[k]);
  }
}

}  // namespace

GraphShare lattice_dual_share(const LatticeShape& shape, int me, int parts) {
  const Lattice lat(shape);
  const Index n = lat.size();
  if (!lat.periodic())
    throw std::invalid_argument("lattice_dual_share: a path or grid (not periodic) is split from its model");
  if (parts < 1 || parts > n || me < 0 || me >= parts)
    throw std::invalid_argument("lattice_dual_share: part " + std::to_string(me) + " of " + std::to_string(parts) +
                                " for " + std::to_string(n) + " nodes");
  const auto d = static_cast<Index>(lat.dims());
  if (static_cast<std::int64_t>(n) * d > std::numeric_limits<Index>::max())
    throw std::invalid_argument("lattice_dual_share: more edges than a 32-bit index holds");
  const std::vector<std::uint8_t> color = lattice_edge_colors(lat);
  std::size_t classes = 0;
  for (std::uint8_t c : color) classes = std::max<std::size_t>(classes, c + 1u);
  const NodeRanges ranges(n, parts);
  const auto owner = [&ranges](Index v) { return ranges.owner(v); };
  const Index lo = ranges.first(me), hi = ranges.first(me + 1);
  GraphShare s;
  s.part = me;
  s.parts = parts;
  s.global_dimension = n * d;
  // Local edges: the own ones (heads lo..hi-1: ids d lo .. d hi - 1) and those whose tail only is own; local nodes:
  // the own ones and their neighbours.
  std::vector<Index> nb;
  for (Index v = lo; v < hi; ++v) {
    for (Index t = 0; t < d; ++t) {
      const Index u = lat.step(v, static_cast<std::size_t>(d - 1 - t), -1);  // the head of edge t into v
      if (u < lo || u >= hi) s.global.push_back(u * d + t);
    }
    lat.neighbors(v, nb);
    s.nodes.insert(s.nodes.end(), nb.begin(), nb.end());
    s.nodes.push_back(v);
  }
  for (Index e = lo * d; e < hi * d; ++e) s.global.push_back(e);
  std::sort(s.global.begin(), s.global.end());
  std::sort(s.nodes.begin(), s.nodes.end());
  s.nodes.erase(std::unique(s.nodes.begin(), s.nodes.end()), s.nodes.end());
  const auto local_edge = [&](Index e) {
    return static_cast<Index>(std::lower_bound(s.global.begin(), s.global.end(), e) - s.global.begin());
  };
  const auto local_node = [&](Index v) {
    const auto it = std::lower_bound(s.nodes.begin(), s.nodes.end(), v);
    return it != s.nodes.end() && *it == v ? static_cast<Index>(it - s.nodes.begin()) : Index{-1};
  };
  for (Index e = lo * d; e < hi * d; ++e) s.owned.push_back(local_edge(e));
  for (Index v = lo; v < hi; ++v) s.owned_nodes.push_back(local_node(v));
  // Own edges per class in increasing id (their places: the class's edges below d lo come first).
  std::vector<std::size_t> place(classes, 0);
  for (Index e = 0; e < lo * d; ++e) ++place[color[static_cast<std::size_t>(e)]];
  s.class_sites.assign(classes, {});
  s.class_places.assign(classes, {});
  for (Index e = lo * d; e < hi * d; ++e) {
    const std::size_t k = color[static_cast<std::size_t>(e)];
    s.class_sites[k].push_back(local_edge(e));
    s.class_places[k].push_back(place[k]++);
  }
  lattice_dual_halo(lat, color, classes, owner, local_node, s);
  return s;
}

// ---- the sweep of one part -----------------------------------------------------------------------------

PartitionedColoredSweep::PartitionedColoredSweep(const GraphShare& share, ChainGroup& group)
    : m_share(&share), m_group(&group) {}

void PartitionedColoredSweep::prepare(Index n, int width) {
  if (static_cast<std::size_t>(n) != m_share->global.size())
    throw std::invalid_argument("PartitionedColoredSweep: a kernel of " + std::to_string(n) +
                                " coordinates for a share of " + std::to_string(m_share->global.size()));
  const auto w = static_cast<std::size_t>(width);
  m_block_eps.assign(ColoredSweep::kBlock * w, 0.0);
  m_eps.assign(ColoredSweep::kBlock * w, 0.0);
  m_streams.reserve(w);
  std::size_t send = m_share->start_send_sites.size(), recv = m_share->start_recv_sites.size();
  for (std::size_t k = 0; k < m_share->send_sites.size(); ++k) {
    send = std::max(send, m_share->send_sites[k].size());
    recv = std::max(recv, m_share->recv_sites[k].size());
  }
  m_send.assign(send * w, 0.0);
  m_recv.assign(recv * w, 0.0);
}

namespace {
// One halo exchange of `data` (width values per site): the sites `send` to the neighbours (send_counts each), the
// sites `recv` from them, through the buffers (large enough).
void exchange_sites(ChainGroup& group, const std::vector<Index>& send, const std::vector<std::size_t>& send_counts,
                    const std::vector<Index>& recv, const std::vector<std::size_t>& recv_counts, double* data,
                    std::size_t width, double* send_buffer, double* recv_buffer) {
  if (group.size() < 2) return;
  for (std::size_t t = 0; t < send.size(); ++t)
    std::copy_n(data + static_cast<std::size_t>(send[t]) * width, width, send_buffer + t * width);
  group.halo_exchange(send_buffer, send_counts, recv_buffer, recv_counts, width);
  for (std::size_t t = 0; t < recv.size(); ++t)
    std::copy_n(recv_buffer + t * width, width, data + static_cast<std::size_t>(recv[t]) * width);
}

// The exchanges of ColoredSsorSweep over a share: after each class its values (primal) or the tallies it changed
// (dual); in the dual, before the Chebyshev tally rebuild the ghost edges, after it (and at the start) the tallies.
class ShareHalo final : public detail::ColoredHalo {
 public:
  ShareHalo(const GraphShare& share, ChainGroup& group) : m_share(share), m_group(group) {}
  void after_class(std::size_t k, double* z, double* tally, int width) override {
    run(m_share.send_sites[k], m_share.send_counts[k], m_share.recv_sites[k], m_share.recv_counts[k],
        m_share.nodes.empty() ? z : tally, width);
  }
  void before_rebuild(double* z, int width) override {
    if (!m_share.nodes.empty())
      run(m_share.edge_send_sites, m_share.edge_send_counts, m_share.edge_recv_sites, m_share.edge_recv_counts, z,
          width);
  }
  void after_rebuild(double* tally, int width) override {
    if (!m_share.nodes.empty())
      run(m_share.start_send_sites, m_share.start_send_counts, m_share.start_recv_sites, m_share.start_recv_counts,
          tally, width);
  }

 private:
  void run(const std::vector<Index>& send, const std::vector<std::size_t>& send_counts, const std::vector<Index>& recv,
           const std::vector<std::size_t>& recv_counts, double* data, int width) {
    const auto w = static_cast<std::size_t>(width);
    if (m_send.size() < send.size() * w) m_send.resize(send.size() * w);
    if (m_recv.size() < recv.size() * w) m_recv.resize(recv.size() * w);
    exchange_sites(m_group, send, send_counts, recv, recv_counts, data, w, m_send.data(), m_recv.data());
  }

  const GraphShare& m_share;
  ChainGroup& m_group;
  std::vector<double> m_send, m_recv;
};
}  // namespace

void PartitionedColoredSweep::exchange(const std::vector<Index>& send, const std::vector<std::size_t>& send_counts,
                                       const std::vector<Index>& recv, const std::vector<std::size_t>& recv_counts,
                                       double* data, int width) {
  exchange_sites(*m_group, send, send_counts, recv, recv_counts, data, static_cast<std::size_t>(width), m_send.data(),
                 m_recv.data());
}

// ---- the ensemble over a partitioned graph --------------------------------------------------------------

namespace {

// n: the coordinates of the domain (nodes, or edges for the dual).
void check_partitioned_options(Index n, Domain domain, const EnsembleOptions& o) {
  const std::string where = "run_partitioned: ";
  if (o.observe_edges && domain != Domain::Dual)
    throw std::invalid_argument(where + "observe_edges applies only to the dual domain");
  if (o.init == InitialState::Given && o.given_state.size() != n)
    throw std::invalid_argument(where + "given_state has length " + std::to_string(o.given_state.size()) + " but the " +
                                (domain == Domain::Dual ? "dual" : "primal") + " domain has " + std::to_string(n) +
                                " coordinates");
}

// The schemes a split graph runs: the colour-ordered Gibbs sweep, and SSOR or Chebyshev-SSOR in colour order.
void check_partitioned_scheme(const SchemeOptions& scheme) {
  if ((scheme.kind == SchemeKind::Ssor || scheme.kind == SchemeKind::ChebyshevSsor) && !scheme.colored_order)
    throw std::invalid_argument(std::string("run_partitioned: ") + to_string(scheme.kind) +
                                " over a split graph sweeps the colour classes in order (set colored_order, with the "
                                "spectrum of the colour-ordered precision)");
  if (scheme.kind == SchemeKind::ChebyshevSsor) (void)ChebyshevSsorSweep(scheme.spectrum);  // checks the bounds
}

// What a member's observer is shown of its share: the rows `rows` (local indices) of the n observed coordinates,
// whose parts are `part` (empty: contiguous ranges, partition_ranges() of n, the gathered rows already in order).
// `width`: with contiguous ranges, each member shows `width` coordinates per node of its range (a lattice's d edges).
struct Shown {
  const std::vector<Index>* rows;
  const std::vector<int>* part;
  Index n;
  std::size_t width = 1;
};

// The observer of one member's local run: its own rows of every chain gathered from all members into the global
// order, then the caller's observer; a failure of any member's observer ends the call on every member.
class GatheringObserver {
 public:
  GatheringObserver(const Observer& observe, ChainGroup& group, const Shown& shown, std::size_t chains)
      : m_observe(observe), m_group(group), m_rows(*shown.rows), m_n(shown.n), m_chains(chains) {
    const auto n = static_cast<std::size_t>(shown.n);
    const std::vector<int>& part = *shown.part;
    m_counts.assign(static_cast<std::size_t>(group.size()), 0);
    if (part.empty()) {
      for (int r = 0; r < group.size(); ++r) {
        const auto [first, last] = member_share(n / shown.width, r, group.size());
        m_counts[static_cast<std::size_t>(r)] = (last - first) * shown.width;
      }
      return;
    }
    for (int p : part) ++m_counts[static_cast<std::size_t>(p)];
    // The global coordinate of each gathered row: member by member, each member's own coordinates increasing.
    std::vector<std::size_t> at(m_counts.size(), 0);
    for (std::size_t r = 1; r < at.size(); ++r) at[r] = at[r - 1] + m_counts[r - 1];
    m_row_of.resize(n);
    for (std::size_t g = 0; g < n; ++g) m_row_of[at[static_cast<std::size_t>(part[g])]++] = g;
  }

  void operator()(const Checkpoint& cp) {
    const std::size_t owned = m_rows.size();
    m_mine.resize(owned * m_chains);
    for (std::size_t t = 0; t < owned; ++t)
      for (std::size_t c = 0; c < m_chains; ++c)
        m_mine[t * m_chains + c] = cp.states(m_rows[t], static_cast<Eigen::Index>(c));
    const auto n = static_cast<std::size_t>(m_n);
    m_all.resize(n * m_chains);
    m_group.all_gather(m_mine.data(), m_all.data(), m_counts, m_chains);
    m_states.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(m_chains));
    for (std::size_t row = 0; row < n; ++row) {
      const std::size_t g = m_row_of.empty() ? row : m_row_of[row];
      for (std::size_t c = 0; c < m_chains; ++c)
        m_states(static_cast<Eigen::Index>(g), static_cast<Eigen::Index>(c)) = m_all[row * m_chains + c];
    }
    std::exception_ptr error;
    try {
      m_observe(Checkpoint{cp.sweep, cp.seconds, Eigen::Ref<const Eigen::MatrixXd>(m_states), 0});
    } catch (...) {
      error = std::current_exception();
    }
    // An exception every member's observer throws at this checkpoint (a stopping rule on the states all members see)
    // is each member's own to rethrow; one that only some throw ends the call on every member with its message.
    m_agreed = detail::agreed_sum(m_group, error ? 1.0 : 0.0) == static_cast<double>(m_group.size());
    if (m_agreed) std::rethrow_exception(error);
    m_group.settle(error);
  }
  // True when every member's observer threw at the last checkpoint.
  bool agreed_failure() const noexcept { return m_agreed; }

 private:
  const Observer& m_observe;
  ChainGroup& m_group;
  const std::vector<Index>& m_rows;
  Index m_n;
  std::size_t m_chains;
  std::vector<std::size_t> m_counts;  // coordinates per member
  std::vector<std::size_t> m_row_of;  // gathered row -> global coordinate (empty: the same)
  std::vector<double> m_mine, m_all;
  Eigen::MatrixXd m_states;
  bool m_agreed = false;
};

// Runs the chains on this member's share with the kernel make_kernel() builds for it, after settling the set-up's
// outcome `error`; the observer is shown `shown`, and the totals are the whole group's.
template <class MakeKernel>
EnsembleStats run_share(GraphShare& share, const Shown& shown, const EnsembleOptions& options, const Observer& observe,
                        ChainGroup& group, std::exception_ptr error, GraphShare* share_out, const SchemeOptions& scheme,
                        const MakeKernel& make_kernel) {
  group.settle(error);
  group.set_halo_neighbors(share.neighbors);
  EnsembleOptions local = options;
  local.threads = 1;  // the blocks one after another: every member makes the same exchanges in the same order
  local.group = nullptr;
  local.local_cuts.clear();
  local.states_buffer = nullptr;
  if (options.init == InitialState::Random) local.random_places = share.global;  // each its place in the whole chain
  if (options.init == InitialState::Given) {
    local.given_state.resize(static_cast<Eigen::Index>(share.global.size()));
    for (std::size_t l = 0; l < share.global.size(); ++l)
      local.given_state[static_cast<Eigen::Index>(l)] = options.given_state[share.global[l]];
  }
  GatheringObserver gather(observe, group, shown, options.chains);
  // Every checkpoint settles, with or without the caller's observer: a member that failed to build its kernel or
  // its blocks (memory) ends the call on every member at checkpoint 0, before any exchange could wait for it.
  const Observer local_observe = [&](const Checkpoint& cp) {
    if (observe)
      gather(cp);
    else
      group.settle(nullptr);
  };
  EnsembleStats st{};
  error = nullptr;
  try {
    const auto kernel = make_kernel(share);
    if (scheme.kind == SchemeKind::Ssor || scheme.kind == SchemeKind::ChebyshevSsor) {
      ShareHalo halo(share, group);
      const bool cheby = scheme.kind == SchemeKind::ChebyshevSsor;
      st = run_ensemble(kernel, local, local_observe,
                        ColoredSsorSweep(share.class_sites, share.class_places, scheme.omega,
                                         cheby ? &scheme.spectrum : nullptr, halo));
    } else {
      st = run_ensemble(kernel, local, local_observe, PartitionedColoredSweep(share, group));
    }
  } catch (...) {
    if (group.failure_settled() || gather.agreed_failure()) throw;
    error = std::current_exception();
  }
  group.settle(error);
  st.seconds = detail::agreed_max(group, st.seconds);
  st.cpu_seconds = detail::agreed_sum(group, st.cpu_seconds);
  st.updates = static_cast<std::uint64_t>(options.chains) * options.sweeps *
               site_updates_per_sweep(scheme, share.global_dimension);
  st.ns_per_update = st.updates ? st.seconds * 1e9 / static_cast<double>(st.updates) : 0.0;
  if (share_out) *share_out = std::move(share);
  return st;
}

// The kernel of a primal share: its local precision, with its right-hand side if it has one.
CsrKernel primal_kernel(const GraphShare& share) {
  return share.rhs.size() != 0 ? CsrKernel(share.precision, share.rhs, SpdCheck::Cheap)
                               : CsrKernel(share.precision, SpdCheck::Cheap);
}

// The nodes' cut: `partition`, or member 0's METIS cut of Q received by every member (one partition, whatever METIS
// does elsewhere). A failure is left in `error` (settled later, with the set-up's).
std::vector<int> node_cut(const Model& model, ChainGroup& group, const std::vector<int>& partition,
                          std::exception_ptr& error) {
  if (!partition.empty()) return partition;
  std::vector<int> part;
  const SparseMatrix& q = model.primal_precision();
  try {
    if (group.rank() == 0) part = partition_graph(q, group.size());
  } catch (...) {
    error = std::current_exception();
  }
  std::vector<double> cut(static_cast<std::size_t>(q.rows()));
  for (std::size_t i = 0; i < part.size(); ++i) cut[i] = part[i];
  std::vector<std::size_t> counts(static_cast<std::size_t>(group.size()), 0);
  counts[0] = cut.size();
  group.all_gather(error, cut.data(), cut.data(), counts, 1);
  return std::vector<int>(cut.begin(), cut.end());
}

}  // namespace

EnsembleStats run_partitioned(const Model& model, Domain domain, const EnsembleOptions& options,
                              const Observer& observe, ChainGroup& group, const std::vector<int>& partition,
                              GraphShare* share_out) {
  SchemeOptions colored;
  colored.kind = SchemeKind::Colored;
  return run_partitioned(model, domain, options, observe, group, colored, partition, share_out);
}

EnsembleStats run_partitioned(const Model& model, Domain domain, const EnsembleOptions& options,
                              const Observer& observe, ChainGroup& group, const SchemeOptions& scheme,
                              const std::vector<int>& partition, GraphShare* share_out) {
  const bool dual = domain == Domain::Dual;
  check_partitioned_options(dual ? model.num_edges() : model.num_nodes(), domain, options);
  check_partitioned_scheme(scheme);
  // The set-up may fail on one member alone (memory): settled, so every member ends with its message.
  GraphShare share;
  std::exception_ptr error;
  const std::vector<int> part = node_cut(model, group, partition, error);
  try {
    if (dual) {
      model.require_dual("run_partitioned");
      share = make_dual_share(model.graph(), domain_coloring(model, Domain::Dual), part, group.rank(), group.size());
    } else {
      share = make_share(model.primal_precision(), model.has_mean() ? model.canonical_vector() : Eigen::VectorXd(),
                         domain_coloring(model, Domain::Primal), part, group.rank(), group.size());
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (!dual)
    return run_share(share, Shown{&share.owned, &part, model.num_nodes()}, options, observe, group, error, share_out,
                     scheme, primal_kernel);
  // The dual observer sees the tallies x~ of the nodes, or the edges' y~ (observe_edges).
  const Shown shown = options.observe_edges ? Shown{&share.owned, &share.edge_owner, model.num_edges()}
                                            : Shown{&share.owned_nodes, &part, model.num_nodes()};
  return run_share(share, shown, options, observe, group, error, share_out, scheme, [&model](const GraphShare& s) {
    return DualIncidenceKernel(DualIncidenceKernel(model), s.global, s.nodes);
  });
}

EnsembleStats run_partitioned(const LatticeShape& shape, const EnsembleOptions& options, const Observer& observe,
                              ChainGroup& group, GraphShare* share_out) {
  return run_partitioned(shape, Domain::Primal, options, observe, group, share_out);
}

EnsembleStats run_partitioned(const LatticeShape& shape, Domain domain, const EnsembleOptions& options,
                              const Observer& observe, ChainGroup& group, GraphShare* share_out) {
  const bool dual = domain == Domain::Dual;
  GraphShare share;
  std::exception_ptr error;
  try {
    share =
        dual ? lattice_dual_share(shape, group.rank(), group.size()) : lattice_share(shape, group.rank(), group.size());
    check_partitioned_options(share.global_dimension, domain, options);
  } catch (...) {
    error = std::current_exception();
  }
  const std::vector<int> contiguous;
  SchemeOptions colored;
  colored.kind = SchemeKind::Colored;
  if (!dual)
    return run_share(share, Shown{&share.owned, &contiguous, share.global_dimension}, options, observe, group, error,
                     share_out, colored, primal_kernel);
  // The part's own model: its local nodes and edges (in increasing global order), one s and one sigma, whose
  // DualIncidenceKernel has the whole lattice's coefficients and update path (unit incidence, homogeneous).
  const auto dual_kernel = [&shape](const GraphShare& s) {
    const Lattice lat(shape);
    std::vector<Edge> edges;
    edges.reserve(s.global.size());
    const auto local = [&](Index v) {
      return static_cast<Index>(std::lower_bound(s.nodes.begin(), s.nodes.end(), v) - s.nodes.begin());
    };
    for (Index e : s.global) edges.push_back({local(lat.edge_head(e)), local(lat.edge_tail(e))});
    return DualIncidenceKernel(
        Model(Graph(static_cast<Index>(s.nodes.size()), std::move(edges)), shape.s, shape.sigma));
  };
  const Index nodes = share.global_dimension / static_cast<Index>(std::max<std::size_t>(1, shape.sides.size()));
  const Shown shown = options.observe_edges
                          ? Shown{&share.owned, &contiguous, share.global_dimension, shape.sides.size()}
                          : Shown{&share.owned_nodes, &contiguous, nodes};
  return run_share(share, shown, options, observe, group, error, share_out, colored, dual_kernel);
}

}  // namespace dualgibbs
