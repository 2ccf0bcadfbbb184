// posterior_mean: mu = Q^-1 h by CHOLMOD or by Jacobi-preconditioned conjugate gradients (Eigen).
#include <dualgibbs/truth/posterior_mean.hpp>

#include <dualgibbs/core/number_text.hpp>

#include "core/enum_names.hpp"

#include <Eigen/IterativeLinearSolvers>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dualgibbs {

namespace {

constexpr detail::EnumName<MeanSolver> kMeanSolvers[] = {{MeanSolver::Cholesky, "cholesky"},
                                                         {MeanSolver::ConjugateGradient, "cg"}};

// ||h - Q x|| / ||h||, 0 for h = 0.
double relative_residual(const SparseMatrix& q, const Eigen::VectorXd& h, const Eigen::VectorXd& x) {
  const double hn = h.norm();
  return hn == 0.0 ? (x.norm() == 0.0 ? 0.0 : (q * x).norm()) : (h - q * x).norm() / hn;
}

}  // namespace

MeanSolver parse_mean_solver(const std::string& name) { return detail::parse_enum(kMeanSolvers, name, "mean solver"); }

const char* to_string(MeanSolver solver) noexcept { return detail::enum_name(kMeanSolvers, solver); }

PosteriorMean posterior_mean(const Model& model, const PosteriorMeanOptions& o) {
  if (!(o.tolerance > 0.0 && o.tolerance < 1.0))
    throw std::invalid_argument("posterior_mean: tolerance = " + number_text(o.tolerance) + " is not in (0, 1)");
  const auto t0 = std::chrono::steady_clock::now();
  PosteriorMean r;
  r.solver = o.solver;
  const Index n = model.num_nodes();
  if (!model.has_mean()) {
    r.mean = Eigen::VectorXd::Zero(n);
    return r;
  }
  const Eigen::VectorXd& h = model.canonical_vector();
  const SparseMatrix q = model.primal_precision();  // [eqn:QPNH]
  if (o.solver == MeanSolver::Cholesky) {
    r.mean = CholeskyFactor(q, o.ordering).solve(h);
  } else {
    // Eigen's CG with its default Jacobi (diagonal) preconditioner; its tolerance is the relative residual
    // ||h - Q x|| / ||h||, the quantity documented. Both triangles are stored (Lower|Upper: the full product).
    Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper> cg;
    cg.setTolerance(o.tolerance);
    const std::size_t limit = o.max_iterations ? o.max_iterations : 10 * static_cast<std::size_t>(n) + 100;
    cg.setMaxIterations(static_cast<Eigen::Index>(limit));
    cg.compute(q);
    r.mean = cg.solve(h);
    r.iterations = static_cast<std::size_t>(cg.iterations());
    const double res = relative_residual(q, h, r.mean);
    if (cg.info() != Eigen::Success || !r.mean.allFinite() || !(res <= o.tolerance * 10.0))
      throw SolverNotConverged("posterior_mean: conjugate gradients stopped after " + std::to_string(r.iterations) +
                                   " iterations at relative residual " + number_text(res) + " above the tolerance " +
                                   number_text(o.tolerance) + " (raise max_iterations or use the Cholesky solver)",
                               r.iterations, res);
  }
  r.relative_residual = relative_residual(q, h, r.mean);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Eigen::VectorXd posterior_mean(const Model& model, const CholeskyFactor& factor_of_Q) {
  if (!factor_of_Q.factorized())
    throw std::invalid_argument("posterior_mean: the CholeskyFactor has no factor (call factorize first)");
  if (factor_of_Q.size() != model.num_nodes())
    throw std::invalid_argument("posterior_mean: a factor of dimension " + std::to_string(factor_of_Q.size()) +
                                " for a model of " + std::to_string(model.num_nodes()) + " nodes");
  if (!model.has_mean()) return Eigen::VectorXd::Zero(model.num_nodes());
  return factor_of_Q.solve(model.canonical_vector());
}

}  // namespace dualgibbs
