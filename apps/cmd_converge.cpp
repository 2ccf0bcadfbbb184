// dualgibbs converge: primal vs dual error curves on any model (--graph, --s, --sigma, --node-file), scored
// against the exact covariance (small graphs) or the exact marginal variances (large graphs).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "output.hpp"

#include <dualgibbs/experiments/experiments.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace dualgibbs::cli {
namespace {

struct ConvergeOptions {
  std::size_t chains = 2000;
  std::size_t sweeps = 100;
  std::size_t every = 1;
  std::string scan = "random";
  std::string init = "constant";
  double init_value = 1.0;
  double init_scale = 1.0;
  unsigned threads = 0;
  Index full_max = 2000;
  std::string out;
  bool no_plot = false;
  bool json = false;
  SchemeCli scheme;
};

/// A few rows of the normalised curves, for the terminal.
std::string curve_excerpt(const ExperimentResult& r) {
  const auto sweep = r.table.column("sweep");
  const auto p = r.table.column("Eu_norm_primal"), d = r.table.column("Eu_norm_dual");
  const auto pse = r.table.column("Eu_se_primal"), dse = r.table.column("Eu_se_dual");
  const auto p0 = r.table.column("Eu_primal").front(), d0 = r.table.column("Eu_dual").front();
  std::ostringstream os;
  os << "  sweep   Eu primal (norm.)          Eu dual (norm.)\n";
  std::size_t next = 0;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    if (sweep[i] < static_cast<double>(next) && i + 1 != sweep.size()) continue;
    os << "  " << std::setw(5) << static_cast<long long>(sweep[i]) << "   " << std::setw(10) << std::setprecision(4)
       << p[i] << " +- " << std::setw(9) << pse[i] / std::abs(p0) << "   " << std::setw(10) << d[i] << " +- "
       << std::setw(9) << dse[i] / std::abs(d0) << "\n";
    next = next == 0 ? 1 : (next < 4 ? next + 1 : next * 2);
  }
  return os.str();
}

std::function<int()> setup_converge(CLI::App& app, CommonOptions& common) {
  app.description("primal vs dual Gibbs: error of the covariance (or marginal variances) against the exact truth");
  static ConvergeOptions o;
  add_count(app, "--chains", o.chains, "independent chains per domain (split into two halves)")->capture_default_str();
  add_count(app, "--sweeps", o.sweeps, "sweeps per chain")->capture_default_str();
  add_count(app, "--every", o.every, "checkpoint every N sweeps")->capture_default_str();
  app.add_option("--scan", o.scan,
                 "scan order: random | permutation | fixed | colored (colour classes, --threads threads per chain)")
      ->capture_default_str();
  add_scheme_options(app, o.scheme);
  app.add_option("--init", o.init, "initial state: constant | random")->capture_default_str();
  app.add_option("--init-value", o.init_value, "the constant of --init constant")->capture_default_str();
  app.add_option("--init-scale", o.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)")->capture_default_str();
  add_count(app, "--threads", o.threads, "threads of the samplers and estimators (0 = the cores this process may use)")
      ->capture_default_str();
  app.add_option("--full-max", o.full_max, "full covariance up to this many nodes, marginal variances above")
      ->capture_default_str();
  app.add_option("--out", o.out, "write converge.csv, converge.json and plots into this directory");
  app.add_flag("--no-plot", o.no_plot, "with --out: CSV and JSON only");
  app.add_flag("--json", o.json, "print the JSON sidecar on stdout");
  return [&common]() {
    ConvergenceSettings cs;
    cs.chains = o.chains;
    cs.sweeps = o.sweeps;
    cs.checkpoint_every = o.every;
    cs.scan = parse_scan(o.scan);
    cs.init = parse_initial_state(o.init);
    if (cs.init == InitialState::Given)
      throw std::invalid_argument("converge: --init must be constant or random (given states are for the library)");
    cs.init_value = o.init_value;
    if (o.init_scale != 1.0 && cs.init != InitialState::Random)
      throw std::invalid_argument("converge: --init-scale applies only with --init random");
    cs.init_scale = o.init_scale;
    cs.seed = common.seed;
    cs.threads = o.threads;
    if (o.every < 1) throw std::invalid_argument("converge: --every must be at least 1");
    if (o.full_max < 1) throw std::invalid_argument("converge: --full-max must be at least 1");
    common.refuse_obs_file("converge",
                           "the error curves are of covariances, which the mean does not change (sample and validate "
                           "test draws of the posterior)");
    const Model model = common.model();
    if (parse_scheme_kind(o.scheme.scheme) != SchemeKind::Gibbs || o.scan == "colored") {
      if (o.scheme.lambda_min || o.scheme.lambda_max)
        throw std::invalid_argument(
            "converge: --lambda-min and --lambda-max would apply to both domains; converge computes each domain's "
            "spectrum itself");
      cs.scheme_primal = resolve_scheme(o.scheme, o.scan, o.threads, model, Domain::Primal, "converge");
      cs.scheme_dual = resolve_scheme(o.scheme, o.scan, o.threads, model, Domain::Dual, "converge");
    } else {
      resolve_scheme(o.scheme, model, Domain::Primal, "converge");  // refuses --omega with gibbs
    }
    if (!o.out.empty()) on_root([] { prepare_output_directory(o.out); });  // a bad --out fails now, not after the run
    ProgressPrinter progress(common.quiet);
    const auto t0 = std::chrono::steady_clock::now();
    const ExperimentResult r = run_convergence(model, "converge", common.graph, cs, o.full_max, progress.callback());
    progress.finish();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ostringstream cmd;
    cmd << "dualgibbs converge --graph " << common.graph << " --s " << common.s << " --sigma " << common.sigma
        << " --seed " << common.seed << " --chains " << o.chains << " --sweeps " << o.sweeps << " --every " << o.every
        << " --scan " << o.scan << " --init " << o.init;
    if (cs.scheme_primal.kind != SchemeKind::Gibbs && cs.scheme_primal.kind != SchemeKind::Colored) {
      cmd << " --scheme " << o.scheme.scheme;
      if (o.scheme.omega) cmd << " --omega " << *o.scheme.omega;
    }
    WrittenFiles files;
    if (!o.out.empty()) on_root([&] { files = write_result(r, o.out, wall, o.threads, cmd.str(), !o.no_plot); });
    if (o.json) {
      print_json(result_json(r, wall, o.threads, cmd.str()));
    } else {
      std::cout << text_report(r, files, wall) << "\n" << curve_excerpt(r);
    }
    return 0;
  };
}

const Registration reg{{"converge", setup_converge}};

}  // namespace
}  // namespace dualgibbs::cli
