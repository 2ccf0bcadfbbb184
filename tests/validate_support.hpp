#pragma once
// Shared set-ups of the validate_draws() tests (test_validate.cpp, test_validate_long.cpp): the exact truth of x,
// draws of one checkpoint, and exact draws with one node's variance inflated.
#include <dualgibbs/core/random.hpp>
#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace validate_support {

using namespace dualgibbs;

// The exact truth of x (primal) on the pattern of Q: variances and every edge's covariance.
inline ExactTruth primal_truth(const Model& m) {
  const SparseMatrix q = m.primal_precision();
  return node_truth_from_selected_inverse(m, CholeskyFactor(q).selected_inverse(q));
}

// Draws of one checkpoint (optionally successive states of chains starting at `offsets`).
inline Draws one_checkpoint(DrawKind kind, Eigen::MatrixXd x, double sweep = 0, std::vector<std::size_t> offsets = {}) {
  Draws d;
  d.kind = kind;
  d.checkpoints.push_back({sweep, std::move(x), std::move(offsets)});
  return d;
}

// `count` exact draws of x (seed `draw_seed`) with independent N(0, fraction Var(X_v)) noise added to node v (from
// the Parameters stream of `noise_seed`): Cov + fraction Var(X_v) e_v e_v^T.
inline Eigen::MatrixXd inflated_draws(const Model& m, const ExactTruth& t, Index v, double fraction, std::size_t count,
                                      std::uint64_t draw_seed, std::uint64_t noise_seed) {
  Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(count, draw_seed);
  ChainEngine rng = make_stream(noise_seed, 0, StreamPurpose::Parameters);
  const double sd = std::sqrt(fraction * t.variance[v]);
  for (Eigen::Index j = 0; j < x.cols(); ++j) x(v, j) += sd * standard_normal(rng);
  return x;
}

// True when the offender is node v's test or the edge-difference test of an edge at v.
inline bool touches(const Model& m, const ValidationOffender& o, Index v) {
  return o.test == ValidationTest::EdgeDifference
             ? (m.graph().edge(o.index).head == v || m.graph().edge(o.index).tail == v)
             : o.index == v;
}

}  // namespace validate_support
