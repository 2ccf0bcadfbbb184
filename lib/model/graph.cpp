#include <dualgibbs/model/graph.hpp>

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace dualgibbs {

namespace {

std::string edge_text(Index e, const Edge& ed) {
  return "edge " + std::to_string(e) + " (" + std::to_string(ed.head) + ", " + std::to_string(ed.tail) + ")";
}

}  // namespace

Graph::Graph(Index num_nodes, std::vector<Edge> edges) : m_num_nodes(num_nodes), m_edges(std::move(edges)) {
  if (num_nodes <= 0)
    throw std::invalid_argument("Graph: the graph is empty (" + std::to_string(num_nodes) +
                                " nodes); at least one node is required");
  // The incidence stores 2|E| entries in 32-bit offsets.
  if (m_edges.size() > static_cast<std::size_t>(std::numeric_limits<Index>::max() / 2))
    throw std::invalid_argument("Graph: " + std::to_string(m_edges.size()) + " edges overflow the 32-bit edge index");
  const Index m = static_cast<Index>(m_edges.size());

  m_offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = m_edges[e];
    if (ed.head < 0 || ed.head >= num_nodes || ed.tail < 0 || ed.tail >= num_nodes)
      throw std::invalid_argument("Graph: " + edge_text(e, ed) + " has a node id outside 0.." +
                                  std::to_string(num_nodes - 1));
    if (ed.head == ed.tail) throw std::invalid_argument("Graph: " + edge_text(e, ed) + " is a self-loop");
    ++m_offsets[ed.head + 1];
    ++m_offsets[ed.tail + 1];
  }
  for (Index v = 0; v < num_nodes; ++v) m_offsets[v + 1] += m_offsets[v];

  const std::size_t nnz = 2 * static_cast<std::size_t>(m);
  m_inc_edges.resize(nnz);
  m_inc_neighbors.resize(nnz);
  m_inc_signs.resize(nnz);
  std::vector<Index> fill(m_offsets.begin(), m_offsets.end() - 1);
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = m_edges[e];
    Index p = fill[ed.head]++;
    m_inc_edges[p] = e;
    m_inc_neighbors[p] = ed.tail;
    m_inc_signs[p] = +1;
    p = fill[ed.tail]++;
    m_inc_edges[p] = e;
    m_inc_neighbors[p] = ed.head;
    m_inc_signs[p] = -1;
  }

  // Duplicate edges: sort each node's neighbours and look for repeats. Entries are kept in edge order
  // (the CSR above is filled in increasing edge id), so sort a copy.
  std::vector<std::pair<Index, Index>> nb;
  for (Index v = 0; v < num_nodes; ++v) {
    nb.clear();
    for (Index p = m_offsets[v]; p < m_offsets[v + 1]; ++p) nb.emplace_back(m_inc_neighbors[p], m_inc_edges[p]);
    std::sort(nb.begin(), nb.end());
    for (std::size_t i = 1; i < nb.size(); ++i)
      if (nb[i].first == nb[i - 1].first) {
        const Index first = std::min(nb[i - 1].second, nb[i].second), second = std::max(nb[i - 1].second, nb[i].second);
        throw std::invalid_argument("Graph: " + edge_text(second, m_edges[second]) + " duplicates " +
                                    edge_text(first, m_edges[first]));
      }
  }

  // Connected components by iterative depth-first search, labelled in order of their smallest node.
  m_component.assign(static_cast<std::size_t>(num_nodes), -1);
  std::vector<Index> stack;
  for (Index start = 0; start < num_nodes; ++start) {
    if (m_component[start] >= 0) continue;
    const Index label = m_num_components++;
    m_component[start] = label;
    stack.push_back(start);
    while (!stack.empty()) {
      const Index v = stack.back();
      stack.pop_back();
      for (Index p = m_offsets[v]; p < m_offsets[v + 1]; ++p) {
        const Index w = m_inc_neighbors[p];
        if (m_component[w] < 0) {
          m_component[w] = label;
          stack.push_back(w);
        }
      }
    }
  }
}

Index Graph::min_degree() const noexcept {
  Index d = std::numeric_limits<Index>::max();
  for (Index v = 0; v < m_num_nodes; ++v) d = std::min(d, degree(v));
  return d;
}

Index Graph::max_degree() const noexcept {
  Index d = 0;
  for (Index v = 0; v < m_num_nodes; ++v) d = std::max(d, degree(v));
  return d;
}

Index Graph::num_isolated() const noexcept {
  Index c = 0;
  for (Index v = 0; v < m_num_nodes; ++v) c += degree(v) == 0;
  return c;
}

std::int64_t Graph::sum_squared_degrees() const noexcept {
  std::int64_t s = 0;
  for (Index v = 0; v < m_num_nodes; ++v) s += static_cast<std::int64_t>(degree(v)) * degree(v);
  return s;
}

std::vector<Index> Graph::component_sizes() const {
  std::vector<Index> sizes(static_cast<std::size_t>(m_num_components), 0);
  for (Index c : m_component) ++sizes[c];
  return sizes;
}

std::string Graph::summary() const {
  std::ostringstream os;
  os << "graph with " << num_nodes() << " nodes, " << num_edges() << " edges, degree " << min_degree() << ".."
     << max_degree() << ", " << num_components() << (num_components() == 1 ? " component" : " components");
  if (num_isolated() > 0) os << " (" << num_isolated() << " isolated nodes)";
  return os.str();
}

}  // namespace dualgibbs
