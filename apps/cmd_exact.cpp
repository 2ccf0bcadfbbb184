// dualgibbs exact: ground truth of the model from a sparse Cholesky factorization of Q: log-determinant,
// marginal variances of every node by selected inversion, entropies with the bounds of appendix B, the torus
// closed form [eq:torus_true_var] when it applies, and optionally per-node / per-edge variances as CSV. With
// --obs-file also the posterior mean mu = Q^-1 D_s^-1 z from the same factor (a `mean` column in --marginals). The
// recipe is api::exact()'s; this file writes the CSV files, their sidecars and the report.
#include "cli.hpp"
#include "output.hpp"

#include <dualgibbs/api/exact.hpp>
#include <dualgibbs/model/model.hpp>

#include <iomanip>
#include <iostream>
#include <stdexcept>
#include <string>

namespace dualgibbs::cli {
namespace {

struct ExactCliOptions {
  bool json = false;
  std::string ordering = "amd";
  std::string marginals;
  std::string edge_marginals;
};

// The CSV files and their sidecars.
void write_csvs(const CommonOptions& common, const ExactCliOptions& opt, const Model& m, const api::ExactResult& r) {
  // Parameters of the run, for the sidecar of every CSV written (apps/output.hpp).
  api::Execution one_thread;
  one_thread.threads = 1;
  one_thread.group = common.group;
  nlohmann::json side = api::provenance("exact", common, one_thread);
  side["ordering"] = to_string(r.factor.ordering);
  side["nodes"] = m.num_nodes();
  side["edges"] = m.num_edges();
  side["logdet_Q"] = r.log_determinant;
  if (!opt.marginals.empty()) {
    write_atomically(opt.marginals, [&](std::ostream& out) {
      out << std::setprecision(17) << (m.has_mean() ? "node,variance,mean\n" : "node,variance\n");
      for (Index v = 0; v < m.num_nodes(); ++v) {
        out << v << ',' << r.variance[v];
        if (m.has_mean()) out << ',' << r.mean.mean[v];
        out << '\n';
      }
    });
    nlohmann::json sj = side;
    sj["columns"] = m.has_mean() ? nlohmann::json{"node", "variance", "mean"} : nlohmann::json{"node", "variance"};
    write_sidecar(opt.marginals, sj);
  }
  if (!opt.edge_marginals.empty()) {
    write_atomically(opt.edge_marginals, [&](std::ostream& out) {
      out << std::setprecision(17) << "edge,head,tail,variance_Y,variance_dual\n";
      for (Index e = 0; e < m.num_edges(); ++e)
        out << e << ',' << m.graph().edge(e).head << ',' << m.graph().edge(e).tail << ',' << r.edge_variance_Y[e] << ','
            << r.edge_variance_dual[e] << '\n';
    });
    nlohmann::json sj = side;
    sj["columns"] = {"edge", "head", "tail", "variance_Y", "variance_dual"};
    write_sidecar(opt.edge_marginals, sj);
  }
}

void print_report(std::ostream& report, const ExactCliOptions& opt, const Model& m, const api::ExactResult& r,
                  Index observed) {
  const nlohmann::json& j = r.record;
  const FactorStats& st = r.factor;
  const Entropy& h = r.entropy;
  report << std::setprecision(12);
  report << "model: " << m.summary() << "\n"
         << "factorization of Q: ordering " << to_string(st.ordering) << ", nnz(L) " << st.nnz_L << ", analyze "
         << st.analyze_seconds << " s, factorize " << st.factorize_seconds << " s; selected inversion "
         << r.selected_inversion_seconds << " s\n"
         << "  logdet_Q                 " << r.log_determinant << "\n"
         << "  marginal variance mean   " << j["marginal_variance_mean"].get<double>() << "   (min "
         << r.variance.minCoeff() << ", max " << r.variance.maxCoeff() << ")\n";
  if (j.contains("torus_marginal_variance"))
    report << "  closed form (torus)      " << j["torus_marginal_variance"].get<double>()
           << "   [eq:torus_true_var], max |error| " << j["torus_max_abs_error"].get<double>() << "\n";
  if (m.has_mean())
    report << "  posterior mean           " << j["posterior_mean_mean"].get<double>() << "   (min "
           << r.mean.mean.minCoeff() << ", max " << r.mean.mean.maxCoeff() << "; " << observed
           << " nodes observed, relative residual " << r.mean.relative_residual << ")\n";
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
  report << "  seconds                  " << r.seconds << "\n";
}

int run_exact(const CommonOptions& common, const ExactCliOptions& opt) {
  // A CSV on standard output: the report goes to stderr so that stdout holds the CSV alone; --json would mix them.
  auto on_stdout = [](const std::string& p) { return p == "-" || p == "/dev/stdout"; };
  const bool csv_on_stdout = on_stdout(opt.marginals) || on_stdout(opt.edge_marginals);
  if (csv_on_stdout && opt.json)
    throw std::invalid_argument(
        "exact: --json and a CSV on standard output (--marginals/--edge-marginals -) would "
        "mix on stdout; write the CSV to a file");
  if (on_stdout(opt.marginals) && on_stdout(opt.edge_marginals))
    throw std::invalid_argument("exact: --marginals and --edge-marginals cannot both write to standard output");
  if (api::same_destination(opt.marginals, opt.edge_marginals))
    throw std::invalid_argument("exact: --marginals and --edge-marginals name the same file '" + opt.marginals + "'");
  std::ostream& report = csv_on_stdout ? std::cerr : std::cout;
  Index observed = 0;
  const Model m = common.posterior_model(&observed);
  api::ExactOptions o;
  o.ordering = opt.ordering;
  o.edge_variances = !opt.edge_marginals.empty();
  o.observed_nodes = observed;
  const api::ExactResult r = api::exact(m, o, &common.spec());
  write_csvs(common, opt, m, r);
  if (opt.json)
    print_json(r.record);
  else
    print_report(report, opt, m, r, observed);
  return 0;
}

std::function<int()> setup_exact(CLI::App& app, CommonOptions& common) {
  app.description("exact ground truth: log det Q, marginal variances (selected inversion), entropies, closed forms");
  static ExactCliOptions opt;
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
