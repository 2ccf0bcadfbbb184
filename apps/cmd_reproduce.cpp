// dualgibbs reproduce FIG: the paper's figures (fig5 ... fig11) and the spectral-rate benchmark (rates),
// each written as FIG.csv, a JSON sidecar FIG.json and plots FIG.png / FIG.pdf. See docs/reproducing.md.
#include "cli.hpp"
#include "mpi_session.hpp"
#include "output.hpp"

#include <dualgibbs/paper/figures.hpp>
#include <dualgibbs/paper/reproduce.hpp>

#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::cli {
namespace {

struct ReproduceCliOptions {
  std::string figure;
  api::ReproduceOptions r;
  unsigned threads = 0;
  bool no_plot = false;
  bool json = false;
};

int run_reproduce(const CommonOptions& common, const ReproduceCliOptions& o) {
  common.refuse_obs_file("reproduce", "the paper's figures are of zero-mean models");
  api::ReproduceOptions ro = o.r;
  ro.seed = common.seed;
  const std::vector<std::string> chosen = api::reproduce_figures(o.figure, ro);
  on_root(common.group, [&] { prepare_output_directory(ro.out); });  // a bad --out fails now, not after the run
  for (const std::string& fig : chosen) {
    ProgressPrinter progress(common.quiet);
    api::Execution ex;
    ex.threads = o.threads;
    ex.group = common.group;
    ex.progress = progress.callback();
    if (!common.quiet && !o.json) std::cerr << "dualgibbs reproduce " << fig << (ro.quick ? " (quick)" : "") << "\n";
    const api::ExperimentRun run = api::reproduce(fig, ro, ex);
    progress.finish();
    WrittenFiles files;
    on_root(common.group, [&] { files = write_result(run.result, run.record, ro.out, !o.no_plot); });
    if (o.json) {
      print_json(run.record);
    } else {
      std::cout << text_report(run.result, files, run.wall_seconds) << std::endl;
    }
    if (!files.plot_message.empty() && !common.quiet) std::cerr << "dualgibbs: " << files.plot_message << "\n";
  }
  return 0;
}

std::function<int()> setup_reproduce(CLI::App& app, CommonOptions& common) {
  // The list, the help and the dispatch all come from the figure table (paper/figures.hpp).
  std::string names, table;
  for (const Figure& f : figures()) {
    names += (names.empty() ? "" : ", ") + f.name;
    table += "\n  " + f.name + std::string(f.name.size() < 7 ? 7 - f.name.size() : 1, ' ') + f.description;
  }
  app.description("reproduce a figure of the paper's Section VII: " + names + ", or all");
  app.footer("figures:" + table + "\n  all    every figure above, in this order");
  static ReproduceCliOptions o;
  o.r.out = "dualgibbs-out";
  app.add_option("figure", o.figure, "figure to reproduce: " + names + " or all")->required();
  app.add_flag("--quick", o.r.quick, "reduced run (fewer chains, sweeps and graphs) for previews and tests");
  app.add_option("--out", o.r.out, "output directory (created if needed)")->capture_default_str();
  add_count(app, "--chains", o.r.chains, "override the figure's number of chains (fig5: samples; 0: the figure's)")
      ->capture_default_str();
  add_count(app, "--sweeps", o.r.sweeps,
            "override the figure's number of sweeps (fig5: burn-in sweeps; 0: the figure's)")
      ->capture_default_str();
  add_count(app, "--threads", o.threads, "threads of the samplers and estimators (0 = the cores this process may use)")
      ->capture_default_str();
  app.add_flag("--as-published", o.r.as_published,
               "the settings of the authors' published code and result files (starts, parameter ranges, sigma, "
               "fig7's graphs, fig8's edge order) instead of the paper's text; docs/reproducing.md lists them");
  app.add_option("--init", o.r.init,
                 "start of the figure's chains: constant | random (default: the figure's own; fig10 "
                 "and rates keep their large start for the mean fits)");
  app.add_option("--init-value", o.r.init_value, "the constant of --init constant");
  app.add_option("--init-scale", o.r.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)");
  app.add_flag("--no-plot", o.no_plot, "write CSV and JSON only");
  app.add_flag("--json", o.json, "print the JSON sidecar(s) on stdout instead of the text report");
  return [&common]() { return run_reproduce(common, o); };
}

const Registration reg{{"reproduce", setup_reproduce}};

}  // namespace
}  // namespace dualgibbs::cli
