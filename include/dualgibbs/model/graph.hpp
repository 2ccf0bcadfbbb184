#pragma once
/// \file graph.hpp
/// Simple undirected graphs with a fixed edge orientation, the oriented incidence structure in CSR form,
/// and connected components.

#include <dualgibbs/core/index.hpp>
#include <dualgibbs/export.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dualgibbs {

/// An oriented edge e = (head, tail): B[head, e] = +1, B[tail, e] = -1 (paper, Section II).
struct Edge {
  Index head;  ///< u, where B[u, e] = +1
  Index tail;  ///< v, where B[v, e] = -1
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
  /// \param num_nodes |V| >= 1
  /// \param edges the oriented edges, edge id = position
  /// \throws std::invalid_argument for zero nodes, ids out of range, self-loops, duplicate edges, or
  ///         sizes that overflow Index.
  Graph(Index num_nodes, std::vector<Edge> edges);

  /// |V|.
  /// \return the number of nodes
  Index num_nodes() const noexcept { return m_num_nodes; }
  /// |E|.
  /// \return the number of edges
  Index num_edges() const noexcept { return static_cast<Index>(m_edges.size()); }
  /// The oriented edges, indexed by edge id.
  /// \return the edges, length |E|
  const std::vector<Edge>& edges() const noexcept { return m_edges; }
  /// Edge e, 0 <= e < num_edges() (not checked).
  /// \param e the edge id
  /// \return edge e
  const Edge& edge(Index e) const { return m_edges[static_cast<std::size_t>(e)]; }

  /// d_v, the number of edges at node v, 0 <= v < num_nodes() (not checked).
  /// \param v the node id
  /// \return the degree of v
  Index degree(Index v) const noexcept { return m_offsets[v + 1] - m_offsets[v]; }
  /// The smallest degree (0 if some node is isolated).
  /// \return the smallest degree
  Index min_degree() const noexcept;
  /// The largest degree.
  /// \return the largest degree
  Index max_degree() const noexcept;
  /// Number of isolated nodes (degree 0).
  /// \return the number of isolated nodes
  Index num_isolated() const noexcept;
  /// sum_v d_v^2; the dual precision R has sum_v d_v^2 - |E| non-zeros (see Model::dual_precision_nonzeros()).
  /// \return sum_v d_v^2
  std::int64_t sum_squared_degrees() const noexcept;

  /// CSR row offsets of the incidence, length |V| + 1: node v's entries are [offsets[v], offsets[v+1]).
  /// \return the row offsets
  const std::vector<Index>& incidence_offsets() const noexcept { return m_offsets; }
  /// Edge id of each incidence entry (length 2|E|), increasing within a node.
  /// \return the edge ids
  const std::vector<Index>& incidence_edges() const noexcept { return m_inc_edges; }
  /// The other end of the edge of each incidence entry (length 2|E|).
  /// \return the other ends
  const std::vector<Index>& incidence_neighbors() const noexcept { return m_inc_neighbors; }
  /// B[v, e] of each incidence entry: +1 if v is the head of e, -1 if the tail (length 2|E|).
  /// \return the signs, +1 or -1
  const std::vector<signed char>& incidence_signs() const noexcept { return m_inc_signs; }

  /// Number of connected components, labelled 0..num_components()-1 in order of their smallest node.
  /// \return the number of components
  Index num_components() const noexcept { return m_num_components; }
  /// The component label of every node (length |V|).
  /// \return the labels, length |V|
  const std::vector<Index>& component_labels() const noexcept { return m_component; }
  /// Number of nodes in each component.
  /// \return the sizes, length num_components()
  std::vector<Index> component_sizes() const;
  /// True if G contains a cycle (|E| > |V| - number of components): the dual precision's cycle space is then
  /// non-trivial.
  /// \return true if G has a cycle
  bool has_cycles() const noexcept {
    return static_cast<std::int64_t>(num_edges()) > static_cast<std::int64_t>(m_num_nodes) - m_num_components;
  }

  /// A one-line description such as "graph with 100 nodes, 200 edges, degree 4..4, 1 component".
  /// \return the description
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
