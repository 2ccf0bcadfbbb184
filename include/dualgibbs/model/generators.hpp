#pragma once
/// \file generators.hpp
/// Graph families of the paper (torus, random k-regular, complete, complete bipartite, star,
/// Watts–Strogatz) and the usual others (path, cycle, grid, hypercube, Erdős–Rényi, Barabási–Albert).
/// Random families take an explicit seed: the same seed gives the same graph on every platform
/// (the generators draw from make_stream(seed, 0, StreamPurpose::Graph) of core/random.hpp, with integer
/// arithmetic and uniform_below / uniform01 only).
///
/// Every generator throws std::invalid_argument for parameters that do not describe a simple graph
/// (for example a torus side below 3, k*n odd for a k-regular graph) or that overflow Index.

#include <dualgibbs/model/graph.hpp>

#include <cstdint>

namespace dualgibbs {

/// n x m torus (periodic grid), rows and cols >= 3. Node (i, j) has id i*cols + j; each node is the head of
/// its edge to the right neighbour and of its edge to the neighbour below. |E| = 2|V|.
/// \param rows number of rows, >= 3
/// \param cols number of columns, >= 3
/// \return the torus
DUALGIBBS_EXPORT Graph make_torus(Index rows, Index cols);
/// rows x cols open grid (rows, cols >= 1).
/// \param rows number of rows, >= 1
/// \param cols number of columns, >= 1
/// \return the grid
DUALGIBBS_EXPORT Graph make_grid(Index rows, Index cols);
/// The 3-D torus Z_n0 x Z_n1 x Z_n2 (6-regular, 3 n0 n1 n2 edges): node (i, j, k) is (i n1 + j) n2 + k, and its edges
/// go to (i, j, k+1), (i, j+1, k), (i+1, j, k) (mod the sides), in that order. \throws std::invalid_argument for a
/// side below 3 (self-loops or duplicate edges) or sizes over the 32-bit index.
/// \param n0 first side, >= 3
/// \param n1 second side, >= 3
/// \param n2 third side, >= 3
/// \return the 3-D torus
DUALGIBBS_EXPORT Graph make_torus3(Index n0, Index n1, Index n2);
/// Path 0-1-...-(n-1), n >= 1.
/// \param n number of nodes
/// \return the path
DUALGIBBS_EXPORT Graph make_path(Index n);
/// Cycle of n >= 3 nodes.
/// \param n number of nodes
/// \return the cycle
DUALGIBBS_EXPORT Graph make_cycle(Index n);
/// Complete graph K_n, n >= 1.
/// \param n number of nodes
/// \return K_n
DUALGIBBS_EXPORT Graph make_complete(Index n);
/// Complete bipartite graph K_{n1,n2}: nodes 0..n1-1 on one side, n1..n1+n2-1 on the other.
/// \param n1 nodes on the first side
/// \param n2 nodes on the second side
/// \return K_{n1,n2}
DUALGIBBS_EXPORT Graph make_complete_bipartite(Index n1, Index n2);
/// Star S_n with n >= 2 nodes in all: centre 0, leaves 1..n-1, edges (0, leaf).
/// \param n number of nodes, centre included
/// \return the star
DUALGIBBS_EXPORT Graph make_star(Index n);
/// d-dimensional hypercube: 2^d nodes, d 2^(d-1) edges, 0 <= d <= 26 (d = 27 would overflow the edge index).
/// \param d the dimension
/// \return the hypercube
DUALGIBBS_EXPORT Graph make_hypercube(int d);
/// Random k-regular simple graph on n nodes (0 <= k < n, n*k even): random stubs are paired in rounds and
/// pairs that would make a self-loop or a duplicate are redrawn (after Steger and Wormald, asymptotically
/// uniform for k = o(n^(1/28)) and close to uniform in practice); for k > (n-1)/2 the complement of a
/// random (n-1-k)-regular graph is returned, so dense graphs are drawn quickly too.
/// \param n number of nodes
/// \param k the degree
/// \param seed the graph's seed
/// \return the graph
DUALGIBBS_EXPORT Graph make_random_regular(Index n, Index k, std::uint64_t seed);
/// Watts–Strogatz: ring lattice of n nodes each joined to its k nearest neighbours (k even, 2 <= k < n),
/// every edge's far end rewired with probability p to a uniform node, avoiding self-loops and duplicates.
/// \param n number of nodes
/// \param k neighbours per node in the ring lattice
/// \param p rewiring probability, 0 <= p <= 1
/// \param seed the graph's seed
/// \return the graph
DUALGIBBS_EXPORT Graph make_watts_strogatz(Index n, Index k, double p, std::uint64_t seed);
/// Erdős–Rényi G(n, p).
/// \param n number of nodes
/// \param p probability of each edge, 0 <= p <= 1
/// \param seed the graph's seed
/// \return the graph
DUALGIBBS_EXPORT Graph make_erdos_renyi(Index n, double p, std::uint64_t seed);
/// Barabási–Albert preferential attachment: start from a star on m+1 nodes, each new node attaches m edges.
/// \param n number of nodes
/// \param m edges per new node
/// \param seed the graph's seed
/// \return the graph
DUALGIBBS_EXPORT Graph make_barabasi_albert(Index n, Index m, std::uint64_t seed);

}  // namespace dualgibbs
