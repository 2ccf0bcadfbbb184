#pragma once
/// \file graph.hpp
/// Simple undirected graphs with a fixed edge orientation, the oriented incidence structure in CSR form,
/// and connected components.

#include <dualgibbs/export.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dualgibbs {

/// Node and edge ids. 32-bit: a graph whose node count, edge count or adjacency size does not fit is
/// rejected with std::invalid_argument rather than silently wrapped.
using Index = std::int32_t;

/// An oriented edge e = (head, tail): B[head, e] = +1, B[tail, e] = -1 (paper, Section II).
struct Edge {
  Index head;
  Index tail;
};

/// A finite simple graph G = (V, E) with nodes 0..n-1 and edges 0..m-1 in a fixed orientation.
///
/// The constructor validates: at least one node, every id in range, no self-loop, no duplicate edge
/// (in either orientation). Isolated nodes and several components are allowed: the model stays
/// positive definite on them.
///
/// The incidence is kept in CSR form: the edges at node v are the entries
/// `[incidence_offsets()[v], incidence_offsets()[v+1])` of `incidence_edges()` (edge id),
/// `incidence_neighbors()` (the other end) and `incidence_signs()` (+1 if v is the head, -1 if the tail).
///
/// \code
/// dualgibbs::Graph g(3, {{0, 1}, {1, 2}, {2, 0}});   // a triangle
/// assert(g.degree(1) == 2 && g.num_components() == 1);
/// \endcode
class DUALGIBBS_EXPORT Graph {
public:
  /// \throws std::invalid_argument for zero nodes, ids out of range, self-loops, duplicate edges, or
  ///         sizes that overflow Index.
  Graph(Index num_nodes, std::vector<Edge> edges);

  Index num_nodes() const noexcept { return m_num_nodes; }
  Index num_edges() const noexcept { return static_cast<Index>(m_edges.size()); }
  const std::vector<Edge>& edges() const noexcept { return m_edges; }
  const Edge& edge(Index e) const { return m_edges[static_cast<std::size_t>(e)]; }

  Index degree(Index v) const noexcept { return m_offsets[v + 1] - m_offsets[v]; }
  Index min_degree() const noexcept;
  Index max_degree() const noexcept;
  /// Number of isolated nodes (degree 0).
  Index num_isolated() const noexcept;
  /// sum_v d_v^2; the dual precision R has sum_v d_v^2 - |E| non-zeros (see Model::dual_precision_nonzeros()).
  std::int64_t sum_squared_degrees() const noexcept;

  const std::vector<Index>& incidence_offsets() const noexcept { return m_offsets; }
  const std::vector<Index>& incidence_edges() const noexcept { return m_inc_edges; }
  const std::vector<Index>& incidence_neighbors() const noexcept { return m_inc_neighbors; }
  const std::vector<signed char>& incidence_signs() const noexcept { return m_inc_signs; }

  /// Connected components, labelled 0..num_components()-1 in order of their smallest node.
  Index num_components() const noexcept { return m_num_components; }
  const std::vector<Index>& component_labels() const noexcept { return m_component; }
  /// Number of nodes in each component.
  std::vector<Index> component_sizes() const;
  /// True if G contains a cycle (|E| > |V| - #components): the dual precision's cycle space is then non-trivial.
  bool has_cycles() const noexcept {
    return static_cast<std::int64_t>(num_edges()) > static_cast<std::int64_t>(m_num_nodes) - m_num_components;
  }

  /// A one-line description such as "graph with 100 nodes, 200 edges, degree 4..4, 1 component".
  std::string summary() const;

private:
  Index m_num_nodes;
  std::vector<Edge> m_edges;
  std::vector<Index> m_offsets;
  std::vector<Index> m_inc_edges;
  std::vector<Index> m_inc_neighbors;
  std::vector<signed char> m_inc_signs;
  std::vector<Index> m_component;
  Index m_num_components = 0;
};

}  // namespace dualgibbs
