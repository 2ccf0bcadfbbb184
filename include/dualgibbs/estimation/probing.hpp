#pragma once
/// \file probing.hpp
/// The diagonal of Q^-1 by probing (Tang and Saad, "A probing method for computing the diagonal of a matrix
/// inverse", 2012): a distance-k colouring of Q's graph, one probing vector per colour with random signs on the nodes
/// of that colour, the solves Q x_c = z_c by conjugate gradients with the Jacobi preconditioner, and
///
///   d_v = z_c(v) x_c(v) = (Q^-1)_vv + sum_{u != v, colour(u) = c} z_c(u) z_c(v) (Q^-1)_uv   (c the colour of v).
///
/// Nodes of one colour are more than k hops apart, where the entries of Q^-1 have decayed; the random signs make the
/// remainder zero-mean, so d_v is unbiased and independent sign sets give a standard error. With k at least the
/// graph's diameter every node has a colour of its own and d_v is exact (to the solver's tolerance).
///
/// \code
/// const dualgibbs::DistanceColoring c = dualgibbs::distance_coloring(model.primal_precision(), 4);
/// Eigen::VectorXd d = dualgibbs::probe_diagonal(model.primal_precision(), c, 1, 1e-8);   // one sign set
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

namespace dualgibbs {

/// A colouring of a matrix's graph in which nodes at most k hops apart have different colours.
struct DistanceColoring {
  int distance = 0;          ///< k
  Index colors = 0;          ///< the number of colours
  std::vector<Index> color;  ///< the colour of each node, in [0, colors)
};

/// Greedy distance-k colouring of the graph of a square sparse matrix (i and j adjacent when Q_ij != 0, i != j):
/// nodes in order, each the smallest colour not used within k hops. Costs |V| times the k-hop ball.
/// \param q the matrix (its pattern)
/// \param k the distance, >= 1
/// \return the colouring
/// \throws std::invalid_argument for a non-square matrix or k < 1
DUALGIBBS_EXPORT DistanceColoring distance_coloring(const SparseMatrix& q, int k);

/// What probe_diagonal() did besides its estimate.
struct ProbeStats {
  long long iterations = 0;  ///< conjugate-gradient iterations over all colours
  double max_residual = 0;   ///< the largest relative residual |Q x_c - z_c| / |z_c| reached
};

/// One sign set's probing estimate of diag(Q^-1): d_v = z_c(v) x_c(v) as above, the signs z_c(v) = +-1 from
/// (seed, v) alone, each colour's solve by conjugate gradients with the Jacobi preconditioner to a relative residual
/// of `tolerance`. The colours are spread over `threads` threads; the result does not depend on their number.
/// \param q the symmetric positive definite matrix
/// \param coloring a colouring of q's graph (distance_coloring)
/// \param seed the sign set's seed
/// \param tolerance the solves' relative residual, in (0, 1)
/// \param threads threads (0: available_threads())
/// \param stats where the iterations and residuals go (may be null)
/// \return the estimate of diag(Q^-1)
/// \param cancel asked before each colour's solve (may be empty): true ends the call with ProbeCancelled (a time
///        budget that runs out within a sign set of many colours)
/// \throws std::invalid_argument for a colouring of another size, a tolerance outside (0, 1) or a diagonal entry
///         that is not positive and finite; std::runtime_error when a solve does not reach the tolerance in 10 |V|
///         iterations (too ill-conditioned for the tolerance); ProbeCancelled when `cancel` returned true. Q must be
///         positive definite: beyond its diagonal this is not checked (conjugate gradients can converge on an
///         indefinite matrix, to a meaningless estimate).
DUALGIBBS_EXPORT Eigen::VectorXd probe_diagonal(const SparseMatrix& q, const DistanceColoring& coloring,
                                                std::uint64_t seed, double tolerance, unsigned threads = 1,
                                                ProbeStats* stats = nullptr, const std::function<bool()>& cancel = {});

/// Thrown by probe_diagonal() when its `cancel` returned true: the sign set is incomplete and has no estimate.
class DUALGIBBS_EXPORT ProbeCancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dualgibbs
