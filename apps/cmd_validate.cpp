// dualgibbs validate: checks anyone's draws of x (primal), y~ or x~ = B y~ (dual) against the exact truth from a
// sparse Cholesky factorization. The reading, the truth and the statistics are api::validate()'s (api/validate.hpp);
// this file maps the options and reports. Exit 0 consistent, 3 not consistent, 2 bad input.
#include "cli.hpp"
#include "output.hpp"

#include <dualgibbs/api/draws.hpp>
#include <dualgibbs/api/validate.hpp>
#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/model/model.hpp>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace dualgibbs::cli {
namespace {
struct ValidateCliOptions {
  std::string draws;
  std::string domain;
  std::string layout = "auto";
  double alpha = 1e-3;
  std::size_t batches = 0;
  std::string out;
  bool no_plot = false;
  bool json = false;
};

std::string sweep_text(double s) {
  if (std::isnan(s)) return "-";
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string text(const api::ValidationResult& d, const Model& m, const ValidateCliOptions& o,
                 const WrittenFiles* files) {
  const ValidationReport& r = d.report;
  const api::ValidationTimings& time = d.timings;
  std::ostringstream os;
  os << "validate: " << d.rows << " draws of " << to_string(r.kind) << " (" << d.dimension << " coordinates) from "
     << o.draws << " (" << d.format << "): " << d.layout << "\n";
  os << "model: " << m.summary() << "\n\n";
  os << "  checkpoint  sweep     draws   max|z| mean (at)      max|z| var (at)       max|z| edge (at)      global z"
        "    Eu +- se               verdict\n";
  const char* unit = is_node_kind(r.kind) ? "" : "e";
  for (std::size_t k = 0; k < r.checkpoints.size(); ++k) {
    const CheckpointValidation& c = r.checkpoints[k];
    auto zs = [&](const ZSummary& z, const char* u) {
      std::ostringstream s;
      if (z.argmax < 0)
        s << "-";
      else
        s << std::fixed << std::setprecision(2) << z.max_abs << " (" << u << z.argmax << ")";
      return s.str();
    };
    std::ostringstream eu;
    eu << std::setprecision(3) << c.error.Eu << " +- " << c.error.Eu_se;
    os << "  " << std::setw(10) << k << "  " << std::setw(6) << sweep_text(c.sweep) << "  " << std::setw(8) << c.draws
       << "   " << std::left << std::setw(20) << zs(c.mean, unit) << "  " << std::setw(20) << zs(c.variance, unit)
       << "  " << std::setw(20) << zs(c.edge, "e") << std::right << "  " << std::setw(8) << std::fixed
       << std::setprecision(2) << c.global_z << std::defaultfloat << "    " << std::left << std::setw(22) << eu.str()
       << std::right << " " << (c.consistent ? "ok" : "NOT CONSISTENT") << "\n";
    if (c.sequential)
      os << "              batch means: " << c.batches << " batches (shortest " << c.batch_length
         << " draws), effective sample size min " << std::setprecision(4) << c.ess_min << " (coordinate "
         << c.ess_min_index << "), median " << c.ess_median << "\n";
    if (c.edge_z.size())
      os << "              edge covariance error: max " << std::setprecision(3) << c.edge_covariance_error_max
         << ", rms " << c.edge_covariance_error_rms << "\n";
  }
  os << "\nworst tests (threshold |z| > " << std::setprecision(4) << r.z_threshold << ", p < " << r.p_threshold
     << "):\n";
  for (const auto& w : r.worst)
    os << "  " << (w.p < r.p_threshold ? "* " : "  ") << "checkpoint " << w.checkpoint << " (sweep "
       << sweep_text(w.sweep) << ") " << std::left << std::setw(8) << to_string(w.test) << std::right << " "
       << std::setw(26) << std::left << api::offender_location(w, m, r.kind) << std::right << " z = " << std::setw(8)
       << std::setprecision(4) << w.z << "  p = " << std::setw(10) << w.p << "  estimate " << w.estimate << " exact "
       << w.exact << "\n";
  os << "\nmethod: " << r.method << "\n";
  for (const auto& n : r.notes) os << "note: " << n << "\n";
  if (files) {
    os << "files:\n";
    for (const auto& f : files->files) os << "  " << f << "\n";
    if (!files->plot_message.empty()) os << "  (" << files->plot_message << ")\n";
  }
  os << "exact truth " << std::fixed << std::setprecision(2) << time.truth << " s, reading " << time.read << " s (CPU "
     << time.read_cpu << " s), validation " << time.validate << " s (CPU " << time.validate_cpu << " s)\n";
  os << "verdict: " << (r.consistent ? "consistent" : "NOT CONSISTENT")
     << " with the exact distribution at alpha = " << std::defaultfloat << r.alpha << " (" << r.tests << " tests)\n";
  return os.str();
}

// The report as an ExperimentResult, so that apps/output.hpp writes it like every other result: validate.csv (one
// row per checkpoint), validate_cpK.csv (per coordinate), validate_cpK_edges.csv (per edge), validate.json, plots.
ExperimentResult as_result(const ValidationReport& r, const Model& m, const ValidateCliOptions& o,
                           const CommonOptions& common) {
  ExperimentResult x;
  x.name = "validate";
  x.title = std::string("validation of ") + o.draws + " (" + to_string(r.kind) + ") against the exact truth, alpha " +
            std::to_string(r.alpha);
  x.table = Table({"checkpoint",
                   "sweep",
                   "draws",
                   "mean_z_max",
                   "mean_z_rms",
                   "mean_z_argmax",
                   "variance_z_max",
                   "variance_z_rms",
                   "variance_z_argmax",
                   "edge_z_max",
                   "edge_z_rms",
                   "edge_z_argmax",
                   "edge_cov_error_max",
                   "edge_cov_error_rms",
                   "global_statistic",
                   "global_se",
                   "global_z",
                   "Eu",
                   "Eu_se",
                   "Eb",
                   "Eb_floor",
                   "min_p",
                   "consistent",
                   "z_threshold"});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t k = 0; k < r.checkpoints.size(); ++k) {
    const CheckpointValidation& c = r.checkpoints[k];
    const bool e = c.edge_z.size() > 0;
    x.table.add_row({static_cast<double>(k),
                     c.sweep,
                     static_cast<double>(c.draws),
                     c.mean.max_abs,
                     c.mean.rms,
                     static_cast<double>(c.mean.argmax),
                     c.variance.max_abs,
                     c.variance.rms,
                     static_cast<double>(c.variance.argmax),
                     e ? c.edge.max_abs : nan,
                     e ? c.edge.rms : nan,
                     e ? static_cast<double>(c.edge.argmax) : nan,
                     e ? c.edge_covariance_error_max : nan,
                     e ? c.edge_covariance_error_rms : nan,
                     c.global_statistic,
                     c.global_se,
                     c.global_z,
                     c.error.Eu,
                     c.error.Eu_se,
                     c.error.Eb,
                     c.error.Eb_floor,
                     c.min_p,
                     c.consistent ? 1.0 : 0.0,
                     r.z_threshold});
    Table per({"coordinate", "mean_z", "variance_z", "variance_ratio"});
    for (Eigen::Index i = 0; i < c.mean_z.size(); ++i)
      per.add_row({static_cast<double>(i), c.mean_z[i], c.variance_z[i], c.variance_ratio[i]});
    x.extra_tables.emplace_back("cp" + std::to_string(k), std::move(per));
    if (e) {
      Table edges({"edge", "head", "tail", "edge_z", "covariance_error"});
      for (Index i = 0; i < m.num_edges(); ++i)
        edges.add_row({static_cast<double>(i), static_cast<double>(m.graph().edge(i).head),
                       static_cast<double>(m.graph().edge(i).tail), c.edge_z[i], c.edge_covariance_error[i]});
      x.extra_tables.emplace_back("cp" + std::to_string(k) + "_edges", std::move(edges));
    }
  }
  x.summary = {{"consistent", r.consistent ? 1.0 : 0.0},
               {"alpha", r.alpha},
               {"tests", static_cast<double>(r.tests)},
               {"z_threshold", r.z_threshold}};
  x.parameters = {{"draws", o.draws},
                  {"domain", to_string(r.kind)},
                  {"layout", o.layout},
                  {"graph", common.spec().text},
                  {"seed", std::to_string(common.seed)}};
  x.notes = r.notes;
  x.notes.push_back(r.method);
  return x;
}

int run_validate(const CommonOptions& common, const ValidateCliOptions& o) {
  if (o.draws.empty()) throw std::invalid_argument("validate: --draws FILE is required");
  api::ValidationOptions vo;
  vo.domain = o.domain;
  vo.layout = o.layout;
  vo.alpha = o.alpha;
  vo.batches = o.batches;
  vo.graph = common.spec().text;
  (void)api::validation_kind(vo);            // bad options are named before the model is read
  const Model m = common.posterior_model();  // with --obs-file: primal draws are tested against the mean mu
  if (!o.out.empty()) prepare_output_directory(o.out);
  const auto t_wall = std::chrono::steady_clock::now();
  api::DrawsFile file = api::open_draws_file(o.draws);
  const api::ValidationResult v = api::validate(m, file, o.draws, vo);
  const ValidationReport& r = v.report;

  WrittenFiles files;
  if (!o.out.empty()) {
    std::ostringstream cmd;
    cmd << "dualgibbs validate " << api::model_arguments(common) << " --draws " << o.draws << " --domain " << o.domain
        << " --layout " << o.layout << " --alpha " << o.alpha;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_wall).count();
    files = write_result(as_result(r, m, o, common), o.out, wall, 1, common.group, cmd.str(), !o.no_plot);
  }
  if (o.json) {
    nlohmann::json j = v.record;
    if (!o.out.empty()) j["files"] = files.files;
    print_json(j);
  } else {
    std::cout << text(v, m, o, o.out.empty() ? nullptr : &files);
  }
  return r.consistent ? 0 : 3;
}

std::function<int()> setup_validate(CLI::App& app, CommonOptions& common) {
  app.description(
      "check a sampler's draws (x, y~ or x~ = B y~) against the exact truth: z-scores, split-half error and a verdict\n"
      "at a stated false-alarm probability (exit 0 consistent, 3 not consistent, 2 bad input; docs/validate.md)");
  static ValidateCliOptions o;
  app.add_option("--draws", o.draws,
                 "draws file: CSV or binary as `dualgibbs sample` writes (sweep/chain columns optional), or NumPy\n"
                 ".npy (float64/float32; draws x coordinates, or checkpoints x chains x coordinates)");
  app.add_option("--domain", o.domain,
                 "primal (x over nodes), dual-y (y~ over edges) or dual-x (x~ = B y~ over nodes)");
  app.add_option("--layout", o.layout,
                 "auto, independent (every checkpoint's draws independent) or chain (successive states: batch means)")
      ->capture_default_str();
  app.add_option("--alpha", o.alpha, "false-alarm probability of the whole report (Bonferroni over all tests)")
      ->capture_default_str();
  add_count(app, "--batches", o.batches, "batch count for successive states (0 = floor(sqrt(n)) in [6, 1000])")
      ->capture_default_str();
  app.add_option("--out", o.out, "write validate.csv, validate_cpK.csv per checkpoint, validate.json and plots here");
  app.add_flag("--no-plot", o.no_plot, "with --out: CSV and JSON only");
  app.add_flag("--json", o.json, "print the report as JSON on stdout");
  return [&common]() { return run_validate(common, o); };
}

const Registration reg{{"validate", setup_validate}};

}  // namespace
}  // namespace dualgibbs::cli
