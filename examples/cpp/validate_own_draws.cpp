// Validating a sampler of your own against the exact truth.
//
// A hand-written random-scan Gibbs sampler of the primal precision Q = D_s^-1 + B D_sigma^-1 B^T [eqn:QPNH] (the
// conditional of x_v is N(-Q_vv^-1 sum_{u != v} Q_vu x_u, Q_vv^-1) [eqn:sampling_general]) draws 2000 independent
// chains on a 6x6 grid; api::validate compares their means, variances and edge covariances with the exact ones from
// a sparse Cholesky factorization (z-scores, Bonferroni over every test at false-alarm probability 1e-3). The same
// sampler with a bug (the conditional variance of x_v taken as s_v^2, the prior's) must be caught.
//
//   build/examples/cpp/example_validate_own_draws
#include <dualgibbs/dualgibbs.hpp>

#include <cmath>
#include <cstdio>
#include <random>

namespace {

// n chains of `sweeps` random-scan sweeps from x = 0; column c of the result is chain c's last state.
Eigen::MatrixXd my_gibbs(const dualgibbs::Model& model, int chains, int sweeps, bool buggy, unsigned seed) {
  const dualgibbs::SparseMatrix q = model.primal_precision();  // CSR, full symmetric storage
  const int n = static_cast<int>(q.rows());
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, chains);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> site(0, n - 1);
  for (int c = 0; c < chains; ++c)
    for (long t = 0; t < static_cast<long>(sweeps) * n; ++t) {
      const int v = site(rng);
      double diag = 0, off = 0;
      for (dualgibbs::SparseMatrix::InnerIterator it(q, v); it; ++it) {
        if (it.col() == v)
          diag = it.value();
        else
          off += it.value() * x(it.col(), c);
      }
      const double var = buggy ? model.node_variances()[v] : 1.0 / diag;
      x(v, c) = -off / diag + std::sqrt(var) * normal(rng);
    }
  return x;
}

bool consistent(const dualgibbs::Model& model, const Eigen::MatrixXd& draws) {
  dualgibbs::api::ValidationOptions options;
  options.domain = "primal";
  options.alpha = 1e-3;
  const dualgibbs::api::ValidationResult r = dualgibbs::api::validate(model, {draws}, {}, options);
  std::printf("  %zu tests, smallest p-value %.2e against the threshold %.2e: %s\n", r.report.tests,
              r.report.checkpoints.front().min_p, r.report.p_threshold,
              r.report.consistent ? "consistent" : "NOT consistent");
  return r.report.consistent;
}

}  // namespace

int main() {
  const dualgibbs::Model model(dualgibbs::make_grid(6, 6), /*s=*/1.0, /*sigma=*/0.5);
  std::printf("the correct sampler:\n");
  const bool good = consistent(model, my_gibbs(model, 2000, 50, false, 1));
  std::printf("the sampler with the prior's variance in place of the conditional one:\n");
  const bool bad = consistent(model, my_gibbs(model, 2000, 50, true, 2));
  return good && !bad ? 0 : 1;
}
