// dualgibbs converge: primal vs dual error curves on any model (--graph, --s, --sigma, --node-file), scored
// against the exact covariance (small graphs) or the exact marginal variances (large graphs).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "output.hpp"

#include <dualgibbs/api/converge.hpp>
#include <dualgibbs/experiments/experiments.hpp>

#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace dualgibbs::cli {
namespace {

struct ConvergeCliOptions {
  api::ConvergeOptions c;
  unsigned threads = 0;
  std::string out;
  bool no_plot = false;
  bool json = false;
};

/// A few rows of the normalised curves, for the terminal (the primal alone for a model without a dual).
std::string curve_excerpt(const ExperimentResult& r) {
  const bool dual = r.table.has_column("Eu_dual");
  const auto sweep = r.table.column("sweep");
  const auto p = r.table.column("Eu_norm_primal"), pse = r.table.column("Eu_se_primal");
  const auto p0 = r.table.column("Eu_primal").front();
  const auto d = dual ? r.table.column("Eu_norm_dual") : std::vector<double>();
  const auto dse = dual ? r.table.column("Eu_se_dual") : std::vector<double>();
  const auto d0 = dual ? r.table.column("Eu_dual").front() : 0.0;
  std::ostringstream os;
  os << (dual ? "  sweep   Eu primal (norm.)          Eu dual (norm.)\n" : "  sweep   Eu primal (norm.)\n");
  std::size_t next = 0;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    if (sweep[i] < static_cast<double>(next) && i + 1 != sweep.size()) continue;
    os << "  " << std::setw(5) << static_cast<long long>(sweep[i]) << "   " << std::setw(10) << std::setprecision(4)
       << p[i] << " +- " << std::setw(9) << pse[i] / std::abs(p0);
    if (dual) os << "   " << std::setw(10) << d[i] << " +- " << std::setw(9) << dse[i] / std::abs(d0);
    os << "\n";
    next = next == 0 ? 1 : (next < 4 ? next + 1 : next * 2);
  }
  return os.str();
}

int run_converge(const CommonOptions& common, const ConvergeCliOptions& o) {
  if (!o.out.empty())
    on_root(common.group, [&] { prepare_output_directory(o.out); });  // a bad --out fails now, not after the run
  ProgressPrinter progress(common.quiet);
  api::Execution ex;
  ex.threads = o.threads;
  ex.group = common.group;
  ex.progress = progress.callback();
  const api::ExperimentRun run = api::converge(common, o.c, ex);
  progress.finish();
  WrittenFiles files;
  if (!o.out.empty()) on_root(common.group, [&] { files = write_result(run.result, run.record, o.out, !o.no_plot); });
  if (o.json) {
    print_json(run.record);
  } else {
    std::cout << text_report(run.result, files, run.wall_seconds) << "\n" << curve_excerpt(run.result);
  }
  return 0;
}

std::function<int()> setup_converge(CLI::App& app, CommonOptions& common) {
  app.description(
      "primal vs dual Gibbs: error of the covariance (or marginal variances) against the exact truth (the primal "
      "alone for a given precision without a dual)");
  static ConvergeCliOptions o;
  api::ConvergeOptions& c = o.c;
  add_count(app, "--chains", c.chains, "independent chains per domain (split into two halves)")->capture_default_str();
  add_count(app, "--sweeps", c.sweeps, "sweeps per chain")->capture_default_str();
  add_count(app, "--every", c.every, "checkpoint every N sweeps")->capture_default_str();
  app.add_option("--scan", c.scheme.scan,
                 "scan order: random | permutation | fixed | colored (colour classes, --threads threads per chain)")
      ->capture_default_str();
  add_scheme_options(app, c.scheme);
  app.add_option("--init", c.init, "initial state: constant | random")->capture_default_str();
  app.add_option("--init-value", c.init_value, "the constant of --init constant")->capture_default_str();
  app.add_option("--init-scale", c.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)")->capture_default_str();
  app.add_option("--distribute", c.distribute,
                 "under mpirun: chains (each rank a share of the chains and the scoring) or graph (every chain's\n"
                 "graph cut over the ranks, each rank scoring all chains; --scan colored); the\n"
                 "curves are the same either way")
      ->capture_default_str();
  app.add_option("--partition", c.partition,
                 "with --distribute graph: ranges (contiguous node ids) or metis (METIS's k-way cut)")
      ->capture_default_str();
  add_count(app, "--threads", o.threads, "threads of the samplers and estimators (0 = the cores this process may use)")
      ->capture_default_str();
  app.add_option("--full-max", c.full_max, "full covariance up to this many nodes, marginal variances above")
      ->capture_default_str();
  app.add_option("--out", o.out, "write converge.csv, converge.json and plots into this directory");
  app.add_flag("--no-plot", o.no_plot, "with --out: CSV and JSON only");
  app.add_flag("--json", o.json, "print the JSON sidecar on stdout");
  return [&common]() { return run_converge(common, o); };
}

const Registration reg{{"converge", setup_converge}};

}  // namespace
}  // namespace dualgibbs::cli
