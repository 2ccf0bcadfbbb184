// Probing for the diagonal of Q^-1: distance-k colourings and one sign set's estimate. See probing.hpp.
#include <dualgibbs/estimation/probing.hpp>

#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/core/random.hpp>
#include "estimation/run_tasks.hpp"

#include <Eigen/IterativeLinearSolvers>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

namespace dualgibbs {

DistanceColoring distance_coloring(const SparseMatrix& matrix, int k) {
  if (matrix.rows() != matrix.cols())
    throw std::invalid_argument("distance_coloring: the matrix is " + std::to_string(matrix.rows()) + " x " +
                                std::to_string(matrix.cols()) + ", not square");
  if (k < 1) throw std::invalid_argument("distance_coloring: distance k = " + std::to_string(k) + " (expected >= 1)");
  SparseMatrix copy;
  const SparseMatrix& q = compressed(matrix, copy);
  const Index n = q.rows();
  DistanceColoring out;
  out.distance = k;
  out.color.assign(static_cast<std::size_t>(n), -1);
  // seen[u] == v: u already reached from v's search; used[c] == v: colour c taken within k hops of v.
  std::vector<Index> seen(static_cast<std::size_t>(n), -1), used, frontier, next;
  for (Index v = 0; v < n; ++v) {
    frontier.assign(1, v);
    seen[static_cast<std::size_t>(v)] = v;
    for (int hop = 0; hop < k && !frontier.empty(); ++hop) {
      next.clear();
      for (const Index u : frontier)
        for (SparseMatrix::InnerIterator it(q, u); it; ++it) {
          const auto w = static_cast<std::size_t>(it.col());
          if (seen[w] == v) continue;
          seen[w] = v;
          next.push_back(it.col());
          if (out.color[w] >= 0) used[static_cast<std::size_t>(out.color[w])] = v;
        }
      frontier.swap(next);
    }
    Index c = 0;
    while (c < static_cast<Index>(used.size()) && used[static_cast<std::size_t>(c)] == v) ++c;
    if (c == static_cast<Index>(used.size())) used.push_back(-1);
    out.color[static_cast<std::size_t>(v)] = c;
  }
  out.colors = static_cast<Index>(used.size());
  return out;
}

Eigen::VectorXd probe_diagonal(const SparseMatrix& matrix, const DistanceColoring& coloring, std::uint64_t seed,
                               double tolerance, unsigned threads, ProbeStats* stats,
                               const std::function<bool()>& cancel) {
  SparseMatrix copy;
  const SparseMatrix& q = compressed(matrix, copy);
  const Index n = q.rows();
  if (static_cast<Index>(coloring.color.size()) != n || q.cols() != n)
    throw std::invalid_argument("probe_diagonal: a colouring of " + std::to_string(coloring.color.size()) +
                                " nodes for a " + std::to_string(q.rows()) + " x " + std::to_string(q.cols()) +
                                " matrix");
  if (!(tolerance > 0 && tolerance < 1))
    throw std::invalid_argument("probe_diagonal: tolerance " + number_text(tolerance) + " (expected in (0, 1))");
  for (Index v = 0; v < n; ++v)
    if (!(q.coeff(v, v) > 0) || !std::isfinite(q.coeff(v, v)))
      throw std::invalid_argument("probe_diagonal: the diagonal entry Q[" + std::to_string(v) + "," +
                                  std::to_string(v) + "] = " + number_text(q.coeff(v, v)) +
                                  " (a positive definite matrix has a positive, finite diagonal)");
  // The nodes of each colour, and each node's sign from (seed, v) alone.
  std::vector<std::vector<Index>> members(static_cast<std::size_t>(coloring.colors));
  for (Index v = 0; v < n; ++v)
    members[static_cast<std::size_t>(coloring.color[static_cast<std::size_t>(v)])].push_back(v);
  auto sign = [seed](Index v) { return (mix64(seed ^ mix64(static_cast<std::uint64_t>(v) + 1)) & 1) ? 1.0 : -1.0; };
  using Solver =
      Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>>;
  const unsigned workers =
      static_cast<unsigned>(std::min<std::size_t>(threads ? threads : available_threads(), members.size()));
  std::vector<std::unique_ptr<Solver>> solvers(std::max(1u, workers));
  Eigen::VectorXd d(n);
  std::vector<long long> iterations(members.size(), 0);
  std::vector<double> residuals(members.size(), 0.0);
  detail::run_worker_tasks(members.size(), std::max(1u, workers), [&](std::size_t c, unsigned worker) {
    if (cancel && cancel())
      throw ProbeCancelled("probe_diagonal: cancelled before colour " + std::to_string(c) + " of " +
                           std::to_string(members.size()));
    std::unique_ptr<Solver>& cg = solvers[worker];
    if (!cg) {
      cg = std::make_unique<Solver>();
      cg->setTolerance(tolerance);
      cg->setMaxIterations(10 * n);
      cg->compute(q);
    }
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    for (const Index v : members[c]) z[v] = sign(v);
    const Eigen::VectorXd x = cg->solve(z);
    if (cg->info() != Eigen::Success)
      throw std::runtime_error("probe_diagonal: conjugate gradients did not reach the relative residual " +
                               number_text(tolerance) + " in " + std::to_string(cg->iterations()) +
                               " iterations (colour " + std::to_string(c) + "; is Q positive definite?)");
    iterations[c] = cg->iterations();
    residuals[c] = cg->error();
    for (const Index v : members[c]) d[v] = z[v] * x[v];
  });
  if (stats) {
    stats->iterations = 0;
    stats->max_residual = 0;
    for (std::size_t c = 0; c < members.size(); ++c) {
      stats->iterations += iterations[c];
      stats->max_residual = std::max(stats->max_residual, residuals[c]);
    }
  }
  return d;
}

}  // namespace dualgibbs
