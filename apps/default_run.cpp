// The run without a subcommand: the headline demo. On the model of the common options (built-in default:
// 10x10 torus, s = 1, sigma = 0.1, the paper's Fig. 6) it prints the theory (spectral rates beside the
// paper's closed forms), runs primal and dual Gibbs (4000 chains, 100 sweeps: a few seconds), prints the
// measured rates next to the predicted ones, and writes demo.csv, demo.json and plots into ./dualgibbs-out
// (or $DUALGIBBS_OUT_DIR).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "output.hpp"

#include <dualgibbs/api/converge.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>
#include <dualgibbs/version.hpp>

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>
#include <vector>

namespace dualgibbs::cli {

namespace {

std::string fmt(double v) { return std::isnan(v) ? "-" : number_text(v, 6); }

double value_or_nan(const std::optional<ClosedForm>& c) { return c ? c->value : NAN; }

void print_theory(const Model& m, const GraphSpec& spec) {
  const Rates r = convergence_rates(m);
  // Prop. 5 at the computed lambda_2, so that it stands for the effective rate on any graph with cycles.
  const ClosedForms cf = closed_forms(spec, m, r.lambda2_L);
  const double c1 = value_or_nan(cf.rate_primal), c4 = value_or_nan(cf.rate_dual),
               c5 = value_or_nan(cf.rate_dual_effective), cl_p = value_or_nan(cf.lambda_max_A_primal),
               cl_d = value_or_nan(cf.lambda_max_A_dual);
  auto line = [](const std::string& name, double spectral, double closed, const std::string& where) {
    std::cout << "  " << std::left << std::setw(26) << name << std::right << std::setw(14) << fmt(spectral)
              << std::setw(14) << fmt(closed) << std::setw(12)
              << (std::isnan(spectral) ? "-" : fmt(-std::log(spectral))) << "   " << where << "\n";
  };
  std::cout << "theory (spectra of the model beside the paper's closed forms)\n"
            << "  " << std::left << std::setw(26) << "" << std::right << std::setw(14) << "spectral" << std::setw(14)
            << "closed form" << std::setw(12) << "-ln r"
            << "\n";
  std::cout << "  " << std::left << std::setw(26) << "lambda_2(L)" << std::right << std::setw(14) << fmt(r.lambda2_L)
            << std::setw(14) << "" << std::setw(12) << ""
            << "   algebraic connectivity (Table I)\n";
  std::cout << "  " << std::left << std::setw(26) << "lambda_max(A) primal" << std::right << std::setw(14)
            << fmt(r.lambda_max_A_primal) << std::setw(14) << fmt(cl_p) << std::setw(12) << ""
            << "   [eqn:AGen]\n";
  std::cout << "  " << std::left << std::setw(26) << "lambda_max(A) dual" << std::right << std::setw(14)
            << fmt(r.lambda_max_A_dual) << std::setw(14) << fmt(cl_d) << std::setw(12) << ""
            << "   [eqn:AD]\n";
  line("r_p  primal rate", r.rate_primal, c1, "Prop. 1 [eqn:primalrate]");
  line("r_d  dual rate (y~)", r.rate_dual, c4, "Prop. 4 [eqn:dualrate2]");
  line("r_d^eff  dual rate (x~)", r.rate_dual_effective, c5, "Prop. 5 [eqn:effectiverate1]");
  std::cout << "\n";
}

}  // namespace

int run_default(const CommonOptions& common) {
  common.refuse_obs_file("dualgibbs",
                         "the headline demo compares zero-mean convergence (use sample, exact or marginals)");
  const Model m = common.model();
  const char* env = std::getenv("DUALGIBBS_OUT_DIR");
  const std::string out = env && *env ? env : "dualgibbs-out";
  if (m.num_edges() == 0)
    throw std::invalid_argument("the demo compares the primal and the dual sampler, but the graph '" +
                                common.spec().text + "' has no edges (no dual domain)");
  m.require_dual("the demo (it compares the primal and the dual sampler)");
  on_root(common.group,
          [&] { prepare_output_directory(out); });  // a bad DUALGIBBS_OUT_DIR fails now, not after the run
  std::cout << "dualgibbs " << DUALGIBBS_VERSION_STRING << ": primal vs dual Gibbs sampling on " << m.summary()
            << "\n(the paper's Fig. 6 at demo size; 'dualgibbs reproduce fig6' runs it at full scale, "
               "'dualgibbs --help' lists everything)\n\n";
  print_theory(m, common.spec());

  api::ConvergeOptions co;
  co.chains = 4000;
  co.sweeps = 100;
  co.name = "demo";
  co.command_line = "dualgibbs " + (common.precision_file ? api::model_arguments(common) : "--graph " + common.graph);
  std::cout << "sampling " << co.chains << " independent chains x " << co.sweeps
            << " random sweeps in each domain; every sweep the covariance of x (primal) and of x~ = B y~ (dual,\n"
               "through Woodbury Cov(X) = D_s - D_s Cov(x~) D_s) is scored against the exact Cov(X) with the unbiased\n"
               "split-half error Eu = trace((S1 - S)^T (S2 - S)) [eq:unbiased_error]\n\n"
            << std::flush;
  ProgressPrinter progress(common.quiet);
  api::Execution ex;
  ex.group = common.group;
  ex.progress = progress.callback();
  const api::ExperimentRun run = api::converge(m, co, common, ex);
  progress.finish();
  const ExperimentResult& r = run.result;
  const double wall = run.wall_seconds;

  // Compare like with like: Eu is a squared error of the covariance, whose slowest mode decays like r^(2t), so
  // Eu ~ r^(4t) (docs/reproducing.md, Fig. 6). fit_decay_rate() follows the paper's convention E ~ r^(2t)
  // (-ln r = -slope / 2); the rate of r it implies is half of that. The mean is linear in the chain: r^t.
  std::vector<RateComparison> implied = r.rates;
  for (auto& row : implied)
    if (row.fitted_from == "Eu") {
      row.fitted_from = "Eu*";
      row.fit.neg_log_rate /= 2.0;
      row.fit.rate = std::exp(-row.fit.neg_log_rate);
    }
  std::cout
      << "measured vs predicted (-ln r per sweep)\n"
      << format_rate_table(implied)
      << "  Eu*:  from the split-half error Eu, which decays like r^(4t): fitted -ln r = -slope(ln Eu) / 4\n"
         "        (the covariance error decays like r^(2t); the paper's convention E ~ r^(2t) gives twice this;\n"
         "        docs/reproducing.md, Fig. 6)\n"
         "  mean: from the norm of the ensemble mean, which decays like r^t: fitted -ln r = -slope(ln ||mean||)\n\n";
  const auto sweep = r.table.column("sweep");
  const auto p = r.table.column("Eu_norm_primal"), d = r.table.column("Eu_norm_dual");
  const auto dse = r.table.column("Eu_se_dual");
  const double d0 = r.table.column("Eu_dual").front();
  std::size_t floor_sweep = sweep.size();
  for (std::size_t i = 1; i < sweep.size(); ++i)
    if (r.table.column("Eu_dual")[i] <= 3 * dse[i]) {
      floor_sweep = i;
      break;
    }
  std::cout << "  after " << static_cast<long long>(sweep.back()) << " sweeps the primal error is still "
            << fmt(100 * p.back()) << "% of its start;";
  if (floor_sweep < sweep.size())
    std::cout << " the dual's reached the Monte-Carlo noise floor (Eu < 3 s.e.) at sweep "
              << static_cast<long long>(sweep[floor_sweep]) << " (normalised " << fmt(d[floor_sweep]) << " +- "
              << fmt(dse[floor_sweep] / std::abs(d0)) << ").\n";
  else
    std::cout << " the dual's is " << fmt(100 * d.back()) << "%.\n";
  std::cout << "  sampling time: primal " << fmt(r.table.column("time_primal").back()) << " s, dual "
            << fmt(r.table.column("time_dual").back()) << " s (the same O(|E|) cost per sweep)\n\n";

  WrittenFiles files;
  on_root(common.group, [&] { files = write_result(r, run.record, out, true); });
  std::cout << "files:\n";
  for (const auto& f : files.files) std::cout << "  " << f << "\n";
  if (!files.plot_message.empty()) std::cout << "  (" << files.plot_message << ")\n";
  std::cout << "wall time " << std::fixed << std::setprecision(1) << wall << " s\n";
  return 0;
}

}  // namespace dualgibbs::cli
