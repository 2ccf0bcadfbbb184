#pragma once
/// \file io.hpp
/// Reading graphs and parameters: graph specs (`torus:100`, `file:PATH`, ...; parse_graph_spec() reads one once
/// into a GraphSpec), edge lists with optional per-edge sigma, node files with per-node s, Matrix Market files.
/// Every reader validates its input and reports the source and line number of the first problem as
/// std::invalid_argument.
///
/// Formats (docs/concepts.md, section 7):
///  - edge list: one edge a line, `u v [sigma_e]`, integer node ids from 0, `#` starts a comment, blank
///    lines ignored. The node count is 1 + the largest id. Duplicate edges (either orientation) and
///    self-loops are rejected with their line number.
///  - node file: `v s_v` lines, same comment rules; each node at most once.
///  - observation file: `v z_v` lines, the node file's rules; z_v any finite number (the observation of node v,
///    see Model::set_observations); a node without a line has z_v = 0.
///  - Matrix Market: `%%MatrixMarket matrix coordinate (pattern|real|integer) (symmetric|general)`;
///    the off-diagonal pattern is the graph (diagonal entries ignored; a general matrix must have a
///    symmetric pattern; each undirected edge is taken once).
/// sigma_e and s_v are standard deviations: finite and positive.

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/model.hpp>

#include <cstdint>
#include <istream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs {

/// Hard caps on what a reader will allocate, so no input can ask for absurd memory.
struct ReadLimits {
  std::int64_t max_nodes = 100'000'000;  ///< largest node count a file or spec may ask for
  std::int64_t max_edges = 100'000'000;  ///< largest edge count (about 3 GB of graph)
};

/// A graph read from a file or spec, with the per-edge sigma given there (NaN where none was given).
struct LoadedGraph {
  Graph graph;                     ///< the graph, edges in file order and orientation
  std::vector<double> edge_sigma;  ///< sigma_e per edge (a standard deviation), NaN where the input gave none
};

/// Reads an edge list. `source` names the input in error messages.
/// \param in the text to read
/// \param source the input's name in error messages
/// \param limits caps on nodes and edges
/// \return the graph and its per-edge sigma
DUALGIBBS_EXPORT LoadedGraph read_edge_list(std::istream& in, const std::string& source = "edge list",
                                            const ReadLimits& limits = {});
/// Reads a node file for a graph of `num_nodes` nodes: returns s_v per node, NaN where not given.
/// \param in the text to read
/// \param num_nodes |V| of the graph
/// \param source the input's name in error messages
/// \return s_v per node, NaN where not given
DUALGIBBS_EXPORT std::vector<double> read_node_file(std::istream& in, Index num_nodes,
                                                    const std::string& source = "node file");
/// Reads an observation file for a graph of `num_nodes` nodes: returns z_v per node, NaN where not given.
/// \param in the text to read
/// \param num_nodes |V| of the graph
/// \param source the input's name in error messages
/// \return z_v per node, NaN where not given
/// \throws std::invalid_argument naming `source` and the line for a malformed line, a node id out of range or
///         given twice, or a z_v that is not a finite number.
DUALGIBBS_EXPORT std::vector<double> read_observation_file(std::istream& in, Index num_nodes,
                                                           const std::string& source = "observation file");

/// Observations read from a file: z (length |V|, 0 for nodes without a line) and how many nodes had a line.
struct Observations {
  Eigen::VectorXd z;   ///< z_v per node, 0 where the file gave none
  Index observed = 0;  ///< number of nodes with a line in the file
};
/// Opens `path` and reads it with read_observation_file(). \throws std::invalid_argument if the file cannot be
/// opened or is malformed.
/// \param path the observation file
/// \param num_nodes |V| of the graph
/// \return z (0 where not given) and the number of observed nodes
DUALGIBBS_EXPORT Observations read_observations(const std::string& path, Index num_nodes);

/// Reads a Matrix Market file; its off-diagonal pattern is the graph (no edge sigmas).
/// \param in the text to read
/// \param source the input's name in error messages
/// \param limits caps on nodes and edges
/// \return the graph, edge sigmas all NaN
DUALGIBBS_EXPORT LoadedGraph read_matrix_market(std::istream& in, const std::string& source = "matrix market",
                                                const ReadLimits& limits = {});

/// Reads a precision matrix from a Matrix Market coordinate file (real or integer; symmetric, whose off-diagonal
/// entries are mirrored, or general, stored as given): the input of Model::from_precision(), which checks the values.
/// \param in the text to read
/// \param source the input's name in error messages
/// \param limits caps on rows and entries
/// \return the matrix, full storage
/// \throws std::invalid_argument naming `source` and the line for a malformed header, size line or entry, an index
///         out of range, a duplicate entry, a non-finite value or a pattern-only file.
DUALGIBBS_EXPORT SparseMatrix read_precision_matrix(std::istream& in, const std::string& source = "matrix market",
                                                    const ReadLimits& limits = {});
/// Opens `path` and reads it with read_precision_matrix().
/// \param path the Matrix Market file
/// \param limits caps on rows and entries
/// \return the matrix
/// \throws std::invalid_argument if the file cannot be opened or is malformed.
DUALGIBBS_EXPORT SparseMatrix read_precision_matrix(const std::string& path, const ReadLimits& limits = {});
/// Reads a canonical vector h from a file of `v h_v` lines (the format of the observation file; nodes without a line
/// get 0).
/// \param path the file
/// \param num_nodes |V|
/// \return h, length |V|
/// \throws std::invalid_argument if the file cannot be opened or is malformed.
DUALGIBBS_EXPORT Eigen::VectorXd read_canonical_vector(const std::string& path, Index num_nodes);

/// The graph families a spec can name.
enum class GraphFamily {
  Torus,
  Grid,
  Path,
  Cycle,
  Complete,
  Bipartite,
  Star,
  KRegular,
  WattsStrogatz,
  ErdosRenyi,
  BarabasiAlbert,
  Hypercube,
  Torus3,  ///< the 3-D torus torus3:N or torus3:NxMxK
  File
};

/// The spec's name of a family: "torus", "grid", "path", "cycle", "complete", "bipartite", "star", "kregular",
/// "ws", "er", "ba", "hypercube", "torus3", "file".
/// \param family the family
/// \return its name in a spec
DUALGIBBS_EXPORT const char* to_string(GraphFamily family) noexcept;

/// A parsed graph spec: the family and its arguments, checked against the limits (parse_graph_spec()); the one
/// place that reads spec text. What the family's generator itself rejects (a torus side below 3, k >= n, ...)
/// is left to load_graph(), which reports it as the generator does.
struct GraphSpec {
  GraphFamily family = GraphFamily::Torus;  ///< the family named before the colon
  /// The integer arguments, in the spec's order: torus and grid {rows, cols} (`torus:N` gives {N, N}); path,
  /// cycle, complete and star {n}; bipartite {n1, n2}; kregular {n, k}; ws {n, k}; er {n}; ba {n, m};
  /// hypercube {d}; torus3 {n0, n1, n2} (`torus3:N` gives {N, N, N}); file {}.
  std::vector<Index> sizes;
  /// The probability P of ws and er (NaN for the other families).
  double probability = std::numeric_limits<double>::quiet_NaN();
  /// The SEED of kregular, ws, er and ba if the spec gives one (load_graph() uses its default_seed otherwise).
  std::optional<std::uint64_t> seed;
  /// The PATH of `file:PATH`.
  std::string path;
  /// The spec as written (for messages and records).
  std::string text;
};

/// Parses a spec: `torus:N`, `torus:NxM`, `grid:NxM`, `path:N`, `cycle:N`, `complete:N`, `bipartite:N1,N2`,
/// `star:N`, `kregular:N,K[,SEED]`, `ws:N,K,P[,SEED]`, `er:N,P[,SEED]`, `ba:N,M[,SEED]`, `hypercube:D`,
/// `file:PATH`. Node and edge counts are checked against `limits` and the 32-bit index here, before anything
/// is allocated; the file is not opened.
/// \param spec the spec text
/// \param limits caps on nodes and edges
/// \return the parsed spec
/// \throws std::invalid_argument for unknown families, a wrong number of arguments, malformed numbers, sizes
///         out of range or over the limits (the message names the spec).
DUALGIBBS_EXPORT GraphSpec parse_graph_spec(const std::string& spec, const ReadLimits& limits = {});

/// Builds the graph of a parsed spec; `file:PATH` is a Matrix Market file if PATH ends in `.mtx` or the file
/// starts with the `%%MatrixMarket` banner, an edge list otherwise. `default_seed` is used by random
/// families given without a seed.
/// \param spec the parsed spec
/// \param default_seed the seed of a random family given without one
/// \param limits caps on nodes and edges
/// \return the graph and its per-edge sigma
/// \throws std::invalid_argument for sizes the family's generator rejects, unreadable or malformed files and
///         files over the limits.
DUALGIBBS_EXPORT LoadedGraph load_graph(const GraphSpec& spec, std::uint64_t default_seed = 1,
                                        const ReadLimits& limits = {});
/// load_graph(parse_graph_spec(spec, limits), default_seed, limits).
/// \param spec the spec text
/// \param default_seed the seed of a random family given without one
/// \param limits caps on nodes and edges
/// \return the graph and its per-edge sigma
DUALGIBBS_EXPORT LoadedGraph load_graph(const std::string& spec, std::uint64_t default_seed = 1,
                                        const ReadLimits& limits = {});

/// Builds a model from a parsed spec and parameters: `s` for every node without a value in `node_file`
/// (if given), `sigma` for every edge without its own value in the edge list.
/// \param spec the parsed spec
/// \param s the node standard deviation where the node file gives none
/// \param sigma the edge standard deviation where the edge list gives none
/// \param node_file path of a node file with per-node s_v, if any
/// \param default_seed the seed of a random family given without one
/// \param limits caps on nodes and edges
/// \return the model
DUALGIBBS_EXPORT Model load_model(const GraphSpec& spec, double s, double sigma,
                                  const std::optional<std::string>& node_file = std::nullopt,
                                  std::uint64_t default_seed = 1, const ReadLimits& limits = {});
/// load_model(parse_graph_spec(spec, limits), ...).
/// \param spec the spec text
/// \param s the node standard deviation where the node file gives none
/// \param sigma the edge standard deviation where the edge list gives none
/// \param node_file path of a node file with per-node s_v, if any
/// \param default_seed the seed of a random family given without one
/// \param limits caps on nodes and edges
/// \return the model
DUALGIBBS_EXPORT Model load_model(const std::string& spec, double s, double sigma,
                                  const std::optional<std::string>& node_file = std::nullopt,
                                  std::uint64_t default_seed = 1, const ReadLimits& limits = {});

}  // namespace dualgibbs
