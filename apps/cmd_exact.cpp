// dualgibbs exact: ground truth of the model from a sparse Cholesky factorization of Q: log-determinant,
// marginal variances of every node by selected inversion, entropies with the bounds of appendix B, the torus
// closed form [eq:torus_true_var] when it applies, and optionally per-node / per-edge variances as CSV. With
// --obs-file also the posterior mean mu = Q^-1 D_s^-1 z from the same factor (a `mean` column in --marginals).
#include "cli.hpp"
#include "observations.hpp"
#include "output.hpp"

#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <stdexcept>
#include <string>

namespace dualgibbs::cli {
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

struct ExactOptions {
  bool json = false;
  std::string ordering = "amd";
  std::string marginals;
  std::string edge_marginals;
};

int run_exact(const CommonOptions& common, const ExactOptions& opt) {
  const Ordering ordering = parse_ordering(opt.ordering);
  // A CSV on standard output: the report goes to stderr so that stdout holds the CSV alone; --json would mix them.
  auto on_stdout = [](const std::string& p) { return p == "-" || p == "/dev/stdout"; };
  const bool csv_on_stdout = on_stdout(opt.marginals) || on_stdout(opt.edge_marginals);
  if (csv_on_stdout && opt.json)
    throw std::invalid_argument(
        "exact: --json and a CSV on standard output (--marginals/--edge-marginals -) would "
        "mix on stdout; write the CSV to a file");
  if (on_stdout(opt.marginals) && on_stdout(opt.edge_marginals))
    throw std::invalid_argument("exact: --marginals and --edge-marginals cannot both write to standard output");
  std::ostream& report = csv_on_stdout ? std::cerr : std::cout;
  Index observed = 0;
  const Model m = common.posterior_model(&observed);
  const auto t0 = Clock::now();
  const SparseMatrix q = m.primal_precision();
  CholeskyFactor f(ordering);
  f.plan_selected_inversion();  // a factor whose selected inverse will not fit is refused before factorizing
  f.analyze(q);
  f.factorize(q);
  const FactorStats& st = f.stats();
  const double logdet = f.log_determinant();

  const auto t_si = Clock::now();
  Eigen::VectorXd var;
  SparseMatrix z;  // Q^-1 on the pattern of Q, only when edge variances are asked for
  if (opt.edge_marginals.empty()) {
    var = f.marginal_variances();
  } else {
    z = f.selected_inverse(q);
    var = z.diagonal();
  }
  const double si_seconds = since(t_si);
  // Never print a NaN or an infinity as a result: a variance that is not finite and positive means Q was
  // numerically singular for these parameters even though the factorization did not break down.
  if (!std::isfinite(logdet) || !var.allFinite() || !(var.array() > 0).all())
    throw std::runtime_error("exact: Q is numerically singular for these parameters (log det Q = " +
                             std::to_string(logdet) + ", a marginal variance is not finite and positive)");
  // The posterior mean from the same factor (one more solve).
  PosteriorMean pm;
  if (m.has_mean()) {
    const auto t_mean = Clock::now();
    pm.mean = posterior_mean(m, f);
    const double hn = m.canonical_vector().norm();
    pm.relative_residual = hn == 0.0 ? 0.0 : (m.canonical_vector() - q * pm.mean).norm() / hn;
    pm.seconds = since(t_mean);
    if (!pm.mean.allFinite())
      throw std::runtime_error("exact: the posterior mean is not finite (Q is numerically singular)");
  }
  const double seconds = since(t0);
  const Entropy h = entropy(m, logdet);

  nlohmann::json j;
  j["nodes"] = m.num_nodes();
  j["edges"] = m.num_edges();
  j["ordering"] = to_string(st.ordering);
  j["nnz_L"] = st.nnz_L;
  j["analyze_seconds"] = st.analyze_seconds;
  j["factorize_seconds"] = st.factorize_seconds;
  j["selected_inversion_seconds"] = si_seconds;
  j["logdet_Q"] = logdet;
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
  if (const auto nu = closed_forms(common.spec(), m).marginal_variance) {
    j["torus_marginal_variance"] = nu->value;
    j["torus_max_abs_error"] = (var.array() - nu->value).abs().maxCoeff();
  }
  if (m.has_mean()) api::add_posterior_mean_record(j, pm, observed);
  j["seconds"] = seconds;

  // Parameters of the run, for the sidecar of every CSV written (apps/output.hpp).
  nlohmann::json side = sidecar_base("exact", common, 1);
  side["ordering"] = to_string(st.ordering);
  side["nodes"] = m.num_nodes();
  side["edges"] = m.num_edges();
  side["logdet_Q"] = logdet;
  if (!opt.marginals.empty()) {
    write_atomically(opt.marginals, [&](std::ostream& out) {
      out << std::setprecision(17) << (m.has_mean() ? "node,variance,mean\n" : "node,variance\n");
      for (Index v = 0; v < m.num_nodes(); ++v) {
        out << v << ',' << var[v];
        if (m.has_mean()) out << ',' << pm.mean[v];
        out << '\n';
      }
    });
    nlohmann::json sj = side;
    sj["columns"] = m.has_mean() ? nlohmann::json{"node", "variance", "mean"} : nlohmann::json{"node", "variance"};
    write_sidecar(opt.marginals, sj);
  }
  if (!opt.edge_marginals.empty()) {
    // Var(Y_e) = Var(X_u - X_v) from Q^-1 on the pattern of Q; Var(y~_e) = (R^-1)_ee from the same selected
    // inverse by Woodbury (R is factorized only where that would cancel too many digits).
    const auto t_dual = Clock::now();
    Eigen::VectorXd var_y(m.num_edges()), var_dual(m.num_edges());
    for (Index e = 0; e < m.num_edges(); ++e) {
      const Edge& ed = m.graph().edge(e);
      var_y[e] = var[ed.head] + var[ed.tail] - 2 * z.coeff(ed.head, ed.tail);
    }
    if (m.num_edges() > 0) var_dual = marginal_variances_dual_from_primal(m, z, ordering);
    if (m.num_edges() > 0 && (!var_y.allFinite() || !var_dual.allFinite() || !(var_dual.array() > 0).all()))
      throw std::runtime_error(
          "exact: an edge variance is not finite and positive: R is numerically singular for "
          "these parameters");
    j["dual_seconds"] = since(t_dual);
    if (m.num_edges() > 0) {
      j["dual_marginal_variance_mean"] = accurate_mean(var_dual);
      j["dual_marginal_variance_min"] = var_dual.minCoeff();
      j["dual_marginal_variance_max"] = var_dual.maxCoeff();
      j["edge_variance_Y_mean"] = accurate_mean(var_y);
    }
    write_atomically(opt.edge_marginals, [&](std::ostream& out) {
      out << std::setprecision(17) << "edge,head,tail,variance_Y,variance_dual\n";
      for (Index e = 0; e < m.num_edges(); ++e)
        out << e << ',' << m.graph().edge(e).head << ',' << m.graph().edge(e).tail << ',' << var_y[e] << ','
            << var_dual[e] << '\n';
    });
    nlohmann::json sj = side;
    sj["columns"] = {"edge", "head", "tail", "variance_Y", "variance_dual"};
    write_sidecar(opt.edge_marginals, sj);
  }

  if (opt.json) {
    print_json(j);
    return 0;
  }
  report << std::setprecision(12);
  report << "model: " << m.summary() << "\n"
         << "factorization of Q: ordering " << to_string(st.ordering) << ", nnz(L) " << st.nnz_L << ", analyze "
         << st.analyze_seconds << " s, factorize " << st.factorize_seconds << " s; selected inversion " << si_seconds
         << " s\n"
         << "  logdet_Q                 " << logdet << "\n"
         << "  marginal variance mean   " << j["marginal_variance_mean"].get<double>() << "   (min " << var.minCoeff()
         << ", max " << var.maxCoeff() << ")\n";
  if (j.contains("torus_marginal_variance"))
    report << "  closed form (torus)      " << j["torus_marginal_variance"].get<double>()
           << "   [eq:torus_true_var], max |error| " << j["torus_max_abs_error"].get<double>() << "\n";
  if (m.has_mean())
    report << "  posterior mean           " << j["posterior_mean_mean"].get<double>() << "   (min "
           << pm.mean.minCoeff() << ", max " << pm.mean.maxCoeff() << "; " << observed
           << " nodes observed, relative residual " << pm.relative_residual << ")\n";
  report << "  trace Cov(X)             " << j["trace_cov"].get<double>() << "\n"
         << "  entropy H(X)             " << h.primal << "   bounds [" << h.primal_lower << ", " << h.primal_upper
         << "] (appendix B)\n";
  if (m.num_edges() > 0)
    report << "  entropy H(y~)            " << h.dual << "   bounds [" << h.dual_lower << ", " << h.dual_upper
           << "] (logdet_R " << h.logdet_R << ")\n";
  if (j.contains("dual_marginal_variance_mean"))
    report << "  dual variance mean       " << j["dual_marginal_variance_mean"].get<double>() << "   (R^-1 diagonal, "
           << j["dual_seconds"].get<double>() << " s)\n";
  if (!opt.marginals.empty()) report << "  node variances written to " << opt.marginals << "\n";
  if (!opt.edge_marginals.empty()) report << "  edge variances written to " << opt.edge_marginals << "\n";
  report << "  seconds                  " << seconds << "\n";
  return 0;
}

std::function<int()> setup_exact(CLI::App& app, CommonOptions& common) {
  app.description("exact ground truth: log det Q, marginal variances (selected inversion), entropies, closed forms");
  static ExactOptions opt;
  app.add_flag("--json", opt.json, "machine-readable output on stdout");
  app.add_option("--ordering", opt.ordering,
                 "fill-reducing ordering: amd, metis, nesdis, auto (CHOLMOD chooses), natural")
      ->capture_default_str();
  app.add_option("--marginals", opt.marginals,
                 "write per-node variances Var(X_v) to this CSV file (node,variance; with --obs-file also the\n"
                 "posterior mean: node,variance,mean); - for standard output (the report then goes to stderr)");
  app.add_option("--edge-marginals", opt.edge_marginals,
                 "also write per-edge variances to this CSV file (both from the selected inverse of Q)\n"
                 "(edge,head,tail,variance_Y,variance_dual: Var(X_u - X_v) and Var(y~_e)); - for standard output");
  return [&common]() { return run_exact(common, opt); };
}

const Registration reg{{"exact", setup_exact}};

}  // namespace
}  // namespace dualgibbs::cli
