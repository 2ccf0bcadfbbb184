// The exact use case (api/exact.hpp).
#include <dualgibbs/api/exact.hpp>
#include <dualgibbs/api/mean.hpp>
#include <dualgibbs/truth/closed_forms.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Neumaier's compensated sum: the mean of 10^6 variances stays exact to the last digit printed.
double accurate_sum(const Eigen::VectorXd& v) {
  double sum = 0, c = 0;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    const double t = sum + v[i];
    c += std::abs(sum) >= std::abs(v[i]) ? (sum - t) + v[i] : (v[i] - t) + sum;
    sum = t;
  }
  return sum + c;
}
double accurate_mean(const Eigen::VectorXd& v) { return accurate_sum(v) / static_cast<double>(v.size()); }

// The factorization, the node variances (and Q^-1 on Q's pattern in `z` when edge variances are asked for) and the
// posterior mean from the same factor.
void factor_and_invert(const Model& m, Ordering ordering, bool edges, ExactResult& r, SparseMatrix& z) {
  const auto t0 = Clock::now();
  const SparseMatrix q = m.primal_precision();
  CholeskyFactor f(ordering);
  f.plan_selected_inversion();  // a factor whose selected inverse will not fit is refused before factorizing
  f.analyze(q);
  f.factorize(q);
  r.factor = f.stats();
  r.log_determinant = f.log_determinant();
  const auto t_si = Clock::now();
  if (!edges) {
    r.variance = f.marginal_variances();
  } else {
    z = f.selected_inverse(q);
    r.variance = z.diagonal();
  }
  r.selected_inversion_seconds = since(t_si);
  // Never report a NaN or an infinity as a result: a variance that is not finite and positive means Q was
  // numerically singular for these parameters even though the factorization did not break down.
  if (!std::isfinite(r.log_determinant) || !r.variance.allFinite() || !(r.variance.array() > 0).all())
    throw NumericalFailure("exact: Q is numerically singular for these parameters (log det Q = " +
                           std::to_string(r.log_determinant) + ", a marginal variance is not finite and positive)");
  if (m.has_mean()) {  // one more solve with the same factor
    const auto t_mean = Clock::now();
    r.mean.mean = posterior_mean(m, f);
    const double hn = m.canonical_vector().norm();
    r.mean.relative_residual = hn == 0.0 ? 0.0 : (m.canonical_vector() - q * r.mean.mean).norm() / hn;
    r.mean.seconds = since(t_mean);
    if (!r.mean.mean.allFinite())
      throw NumericalFailure("exact: the posterior mean is not finite (Q is numerically singular)");
  }
  r.seconds = since(t0);
}

// Var(Y_e) = Var(X_u - X_v) from Q^-1 on the pattern of Q; Var(y~_e) = (R^-1)_ee from the same selected inverse by
// Woodbury (R is factorized only where that would cancel too many digits).
void edge_variances(const Model& m, const SparseMatrix& z, Ordering ordering, ExactResult& r) {
  const auto t_dual = Clock::now();
  const Eigen::VectorXd& var = r.variance;
  r.edge_variance_Y.resize(m.num_edges());
  r.edge_variance_dual.resize(m.num_edges());
  for (Index e = 0; e < m.num_edges(); ++e) {
    const Edge& ed = m.graph().edge(e);
    r.edge_variance_Y[e] = var[ed.head] + var[ed.tail] - 2 * z.coeff(ed.head, ed.tail);
  }
  if (m.num_edges() > 0) r.edge_variance_dual = marginal_variances_dual_from_primal(m, z, ordering);
  if (m.num_edges() > 0 && (!r.edge_variance_Y.allFinite() || !r.edge_variance_dual.allFinite() ||
                            !(r.edge_variance_dual.array() > 0).all()))
    throw NumericalFailure(
        "exact: an edge variance is not finite and positive: R is numerically singular for "
        "these parameters");
  Record& j = r.record;
  j["dual_seconds"] = since(t_dual);
  if (m.num_edges() > 0) {
    j["dual_marginal_variance_mean"] = accurate_mean(r.edge_variance_dual);
    j["dual_marginal_variance_min"] = r.edge_variance_dual.minCoeff();
    j["dual_marginal_variance_max"] = r.edge_variance_dual.maxCoeff();
    j["edge_variance_Y_mean"] = accurate_mean(r.edge_variance_Y);
  }
}

Record exact_record(const Model& m, const ExactResult& r, const GraphSpec* spec, Index observed) {
  const Eigen::VectorXd& var = r.variance;
  const Entropy& h = r.entropy;
  Record j;
  j["nodes"] = m.num_nodes();
  j["edges"] = m.num_edges();
  j["ordering"] = to_string(r.factor.ordering);
  j["nnz_L"] = r.factor.nnz_L;
  j["analyze_seconds"] = r.factor.analyze_seconds;
  j["factorize_seconds"] = r.factor.factorize_seconds;
  j["selected_inversion_seconds"] = r.selected_inversion_seconds;
  j["logdet_Q"] = r.log_determinant;
  j["marginal_variance_mean"] = accurate_mean(var);
  j["marginal_variance_min"] = var.minCoeff();
  j["marginal_variance_max"] = var.maxCoeff();
  j["trace_cov"] = accurate_sum(var);
  j["entropy_primal"] = h.primal;
  j["entropy_primal_lower"] = h.primal_lower;
  j["entropy_primal_upper"] = h.primal_upper;
  if (m.num_edges() > 0) {
    j["logdet_R"] = h.logdet_R;
    j["entropy_dual"] = h.dual;
    j["entropy_dual_lower"] = h.dual_lower;
    j["entropy_dual_upper"] = h.dual_upper;
  }
  if (spec)
    if (const auto nu = closed_forms(*spec, m).marginal_variance) {
      j["torus_marginal_variance"] = nu->value;
      j["torus_max_abs_error"] = (var.array() - nu->value).abs().maxCoeff();
    }
  if (m.has_mean()) add_posterior_mean_record(j, r.mean, observed);
  j["seconds"] = r.seconds;
  return j;
}

}  // namespace

ExactResult exact(const Model& model, const ExactOptions& options, const GraphSpec* spec) {
  const Ordering ordering = parse_ordering(options.ordering);
  ExactResult r;
  SparseMatrix z;  // Q^-1 on the pattern of Q, only when edge variances are asked for
  factor_and_invert(model, ordering, options.edge_variances, r, z);
  r.entropy = entropy(model, r.log_determinant);
  r.record = exact_record(model, r, spec, observed_nodes(model, options.observed_nodes));
  if (options.edge_variances) edge_variances(model, z, ordering, r);
  return r;
}

}  // namespace dualgibbs::api
