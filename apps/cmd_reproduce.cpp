// dualgibbs reproduce FIG: the paper's figures (fig5 ... fig11) and the spectral-rate benchmark (rates),
// each written as FIG.csv, a JSON sidecar FIG.json and plots FIG.png / FIG.pdf. See docs/reproducing.md.
#include "cli.hpp"
#include "mpi_session.hpp"
#include "output.hpp"

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/experiments/experiments.hpp>

#include <chrono>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::cli {
namespace {

struct ReproduceOptions {
  std::string figure;
  bool quick = false;
  std::string out = "dualgibbs-out";
  std::size_t chains = 0;
  std::size_t sweeps = 0;
  unsigned threads = 0;
  bool no_plot = false;
  bool json = false;
  bool as_published = false;
  std::string init;  // empty: the figure's (preset's) start
  double init_value = 1.0;
  double init_scale = 1.0;
};

std::function<int()> setup_reproduce(CLI::App& app, CommonOptions& common) {
  // The list, the help and the dispatch all come from the figure table (experiments.hpp).
  std::string names, table;
  for (const Figure& f : figures()) {
    names += (names.empty() ? "" : ", ") + f.name;
    table += "\n  " + f.name + std::string(f.name.size() < 7 ? 7 - f.name.size() : 1, ' ') + f.description;
  }
  app.description("reproduce a figure of the paper's Section VII: " + names + ", or all");
  app.footer("figures:" + table + "\n  all    every figure above, in this order");
  static ReproduceOptions o;
  app.add_option("figure", o.figure, "figure to reproduce: " + names + " or all")->required();
  app.add_flag("--quick", o.quick, "reduced run (fewer chains, sweeps and graphs) for previews and tests");
  app.add_option("--out", o.out, "output directory (created if needed)")->capture_default_str();
  add_count(app, "--chains", o.chains, "override the figure's number of chains (fig5: samples)");
  add_count(app, "--sweeps", o.sweeps, "override the figure's number of sweeps (fig5: burn-in sweeps)");
  add_count(app, "--threads", o.threads, "threads of the samplers and estimators (0 = the cores this process may use)")
      ->capture_default_str();
  app.add_flag("--as-published", o.as_published,
               "the settings of the authors' published code and result files (starts, parameter ranges, sigma, "
               "fig7's graphs) instead of the paper's text; docs/reproducing.md lists them");
  auto* init = app.add_option("--init", o.init,
                              "start of the figure's chains: constant | random (default: the figure's own; fig10 "
                              "and rates keep their large start for the mean fits)");
  auto* value = app.add_option("--init-value", o.init_value, "the constant of --init constant");
  auto* scale = app.add_option("--init-scale", o.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)");
  app.add_flag("--no-plot", o.no_plot, "write CSV and JSON only");
  app.add_flag("--json", o.json, "print the JSON sidecar(s) on stdout instead of the text report");
  return [&common, init, value, scale]() {
    common.refuse_obs_file("reproduce", "the paper's figures are of zero-mean models");
    std::optional<InitialState> init_state;
    if (init->count() > 0) {
      init_state = parse_initial_state(o.init);  // throws std::invalid_argument naming the known starts
      if (*init_state == InitialState::Given)
        throw std::invalid_argument("reproduce: --init must be constant or random (given states are for the library)");
    }
    if (value->count() > 0 && init_state != InitialState::Constant)
      throw std::invalid_argument("reproduce: --init-value applies only with --init constant");
    if (scale->count() > 0 && init_state != InitialState::Random)
      throw std::invalid_argument("reproduce: --init-scale applies only with --init random");
    std::vector<const Figure*> chosen;
    if (o.figure == "all") {
      for (const Figure& f : figures()) chosen.push_back(&f);
    } else {
      chosen = {&find_figure(o.figure)};  // throws std::invalid_argument naming the known figures
    }
    if (o.chains > 0 && o.chains < kMinSplitHalfChains)
      throw std::invalid_argument("reproduce: --chains must be at least " + std::to_string(kMinSplitHalfChains) +
                                  " (two halves of three chains), got " + std::to_string(o.chains));
    on_root([] { prepare_output_directory(o.out); });  // a bad --out fails now, not after the run
    int status = 0;
    for (const Figure* figure : chosen) {
      const std::string& fig = figure->name;
      ExperimentOptions eo;
      eo.quick = o.quick;
      eo.seed = common.seed;
      eo.threads = o.threads;
      eo.chains = o.chains;
      eo.sweeps = o.sweeps;
      eo.as_published = o.as_published;
      eo.init = init_state;
      if (value->count() > 0) eo.init_value = o.init_value;
      if (scale->count() > 0) eo.init_scale = o.init_scale;
      ProgressPrinter progress(common.quiet);
      eo.progress = progress.callback();
      if (!common.quiet && !o.json) std::cerr << "dualgibbs reproduce " << fig << (o.quick ? " (quick)" : "") << "\n";
      const auto t0 = std::chrono::steady_clock::now();
      const ExperimentResult r = figure->run(eo);
      progress.finish();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string cmd = "dualgibbs reproduce " + fig + (o.quick ? " --quick" : "") + " --out " + o.out + " --seed " +
                        std::to_string(common.seed);
      if (o.chains) cmd += " --chains " + std::to_string(o.chains);
      if (o.sweeps) cmd += " --sweeps " + std::to_string(o.sweeps);
      if (o.threads) cmd += " --threads " + std::to_string(o.threads);
      if (o.as_published) cmd += " --as-published";
      if (init_state) cmd += " --init " + o.init;
      if (value->count() > 0) cmd += " --init-value " + number_text(o.init_value);
      if (scale->count() > 0) cmd += " --init-scale " + number_text(o.init_scale);
      WrittenFiles files;
      on_root([&] { files = write_result(r, o.out, wall, o.threads, cmd, !o.no_plot); });
      if (o.json) {
        print_json(result_json(r, wall, o.threads, cmd));
      } else {
        std::cout << text_report(r, files, wall) << std::endl;
      }
      if (!files.plot_message.empty() && !common.quiet) std::cerr << "dualgibbs: " << files.plot_message << "\n";
    }
    return status;
  };
}

const Registration reg{{"reproduce", setup_reproduce}};

}  // namespace
}  // namespace dualgibbs::cli
