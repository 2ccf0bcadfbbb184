// dualgibbs validate: checks anyone's draws of x (primal), y~ or x~ = B y~ (dual) against the exact truth from a
// sparse Cholesky factorization (issue 17). The statistics are validate_draws()'s (estimation/validate.hpp); this
// file reads the draws (draws_file.hpp), computes the truth and reports. Exit 0 consistent, 3 not consistent,
// 2 bad input.
#include <dualgibbs/api/draws.hpp>
#include "cli.hpp"
#include "output.hpp"

#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace dualgibbs::cli {
namespace {
using api::DrawLayout;
using api::DrawsFile;
using api::open_draws_file;
using api::parse_draw_layout;
using api::PlannedCheckpoint;

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

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// CPU seconds of the whole process (every thread) since the start.
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// What was read, for the report.
struct LoadedDraws {
  std::string format;    // "csv", "binary" or "npy"
  std::string layout;    // how the draws were grouped, in words
  std::size_t rows = 0;  // draws read in all
  Eigen::Index dimension = 0;
};

// Where the time went (wall and CPU seconds of the process).
struct Timings {
  double truth = 0, read = 0, validate = 0, read_cpu = 0, validate_cpu = 0;
};

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The exact truth of the draws' coordinates: Q^-1 on Q's pattern (node variances and every edge's covariance) for
// x, the same through Woodbury for x~, diag(R^-1) for y~.
ExactTruth exact_truth(const Model& m, DrawKind kind) {
  if (kind == DrawKind::DualEdges) {
    if (m.num_edges() == 0) throw std::invalid_argument("validate: --domain dual-y needs a graph with edges");
    ExactTruth t;
    t.variance = marginal_variances(m, Domain::Dual);
    return t;
  }
  const SparseMatrix q = m.primal_precision();
  const CholeskyFactor f(q);
  ExactTruth primal = node_truth_from_selected_inverse(m, f.selected_inverse(q));
  if (!primal.variance.allFinite() || !(primal.variance.array() > 0).all())
    throw std::runtime_error(
        "validate: Q is numerically singular for these parameters (a marginal variance is not "
        "finite and positive)");
  if (kind != DrawKind::Primal) return dual_node_truth_from_primal(m, primal);  // the zero-mean fluctuation
  // With --obs-file the primal draws are of N(mu, Q^-1): the known mean mu = Q^-1 D_s^-1 z from the same factor.
  if (m.has_mean()) primal.mean = posterior_mean(m, f);
  return primal;
}

// The sidecar `sample` wrote next to FILE, if any, must agree with --domain, and posterior draws need --obs-file.
void check_sidecar(const std::string& path, DrawKind kind, bool has_obs) {
  std::ifstream in(sidecar_path(path));
  if (!in) return;
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception&) {
    return;  // not sample's sidecar: nothing to check
  }
  if (!j.is_object() || !j.contains("draws") || !j["draws"].is_string()) return;
  const std::string d = j["draws"];
  const char* expected = d == "x" ? "primal" : d == "x_tilde" ? "dual-x" : d == "y_tilde" ? "dual-y" : nullptr;
  if (expected && std::string(expected) != to_string(kind))
    throw std::invalid_argument("validate: --domain " + std::string(to_string(kind)) + ", but " + sidecar_path(path) +
                                " says the draws are '" + d + "' (--domain " + expected + ")");
  if (!has_obs && j.contains("draws_mean") && j["draws_mean"] == "posterior")
    throw std::invalid_argument("validate: " + sidecar_path(path) +
                                " says the draws are of a posterior (sample --obs-file): give the same --obs-file");
}

std::string where(const ValidationOffender& o, const Model& m, DrawKind kind) {
  std::ostringstream os;
  if (o.test == ValidationTest::Global) return "all coordinates";
  if (o.test == ValidationTest::EdgeDifference) {
    const Edge& e = m.graph().edge(o.index);
    os << "edge " << o.index << " (" << e.head << ", " << e.tail << ")";
  } else {
    os << (is_node_kind(kind) ? "node " : "edge ") << o.index;
  }
  return os.str();
}

std::string sweep_text(double s) {
  if (std::isnan(s)) return "-";
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string text(const ValidationReport& r, const LoadedDraws& d, const Model& m, const ValidateCliOptions& o,
                 const WrittenFiles* files, const Timings& time) {
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
       << std::setw(26) << std::left << where(w, m, r.kind) << std::right << " z = " << std::setw(8)
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

nlohmann::json report_json(const ValidationReport& r, const LoadedDraws& d, const Model& m, const ValidateCliOptions& o,
                           const CommonOptions& common) {
  nlohmann::json j;
  j["command"] = "validate";
  j["draws_file"] = o.draws;
  j["format"] = d.format;
  j["layout"] = d.layout;
  j["domain"] = to_string(r.kind);
  j["graph"] = common.graph;
  j["nodes"] = m.num_nodes();
  j["edges"] = m.num_edges();
  j["dimension"] = d.dimension;
  j["draws"] = d.rows;
  j["alpha"] = r.alpha;
  j["tests"] = r.tests;
  j["p_threshold"] = r.p_threshold;
  j["z_threshold"] = r.z_threshold;
  j["consistent"] = r.consistent;
  j["method"] = r.method;
  j["notes"] = r.notes;
  nlohmann::json cps = nlohmann::json::array();
  for (const auto& c : r.checkpoints) {
    nlohmann::json x;
    x["sweep"] = number(c.sweep);
    x["draws"] = c.draws;
    x["chains"] = c.chains;
    x["sequential"] = c.sequential;
    if (c.sequential) {
      x["batches"] = c.batches;
      x["batch_length"] = c.batch_length;
      x["ess_min"] = number(c.ess_min);
      x["ess_min_index"] = c.ess_min_index;
      x["ess_median"] = number(c.ess_median);
    }
    auto z = [](const ZSummary& s) {
      return nlohmann::json{{"max_abs", s.max_abs}, {"rms", s.rms}, {"argmax", s.argmax}};
    };
    x["mean_z"] = z(c.mean);
    x["variance_z"] = z(c.variance);
    if (c.edge_z.size()) {
      x["edge_z"] = z(c.edge);
      x["edge_covariance_error_max"] = c.edge_covariance_error_max;
      x["edge_covariance_error_rms"] = c.edge_covariance_error_rms;
    }
    x["global_statistic"] = c.global_statistic;
    x["global_se"] = c.global_se;
    x["global_z"] = c.global_z;
    x["Eu"] = c.error.Eu;
    x["Eu_se"] = c.error.Eu_se;
    x["Eb"] = c.error.Eb;
    x["Eb_floor"] = c.error.Eb_floor;
    x["tests"] = c.tests;
    x["min_p"] = c.min_p;
    x["consistent"] = c.consistent;
    cps.push_back(x);
  }
  j["checkpoints"] = cps;
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : r.worst)
    worst.push_back({{"checkpoint", w.checkpoint},
                     {"sweep", number(w.sweep)},
                     {"test", to_string(w.test)},
                     {"index", w.index},
                     {"where", where(w, m, r.kind)},
                     {"z", w.z},
                     {"p", w.p},
                     {"estimate", w.estimate},
                     {"exact", w.exact}});
  j["worst"] = worst;
  return j;
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
                  {"graph", common.graph},
                  {"seed", std::to_string(common.seed)}};
  x.notes = r.notes;
  x.notes.push_back(r.method);
  return x;
}

int run_validate(const CommonOptions& common, const ValidateCliOptions& o) {
  if (o.draws.empty()) throw std::invalid_argument("validate: --draws FILE is required");
  if (o.domain.empty()) throw std::invalid_argument("validate: --domain primal|dual-y|dual-x is required");
  const DrawKind kind = parse_draw_kind(o.domain);
  const DrawLayout layout = parse_draw_layout(o.layout);
  if (!(o.alpha > 0 && o.alpha < 1))
    throw std::invalid_argument("validate: --alpha must be in (0, 1), got " + std::to_string(o.alpha));
  const Model m = common.posterior_model();  // with --obs-file: primal draws are tested against the mean mu
  if (!o.out.empty()) prepare_output_directory(o.out);
  check_sidecar(o.draws, kind, m.has_mean());
  const auto t_wall = Clock::now();
  DrawsFile file = open_draws_file(o.draws);
  if (file.dimension != draw_dimension(m, kind))
    throw std::invalid_argument(
        "validate: the draws have " + std::to_string(file.dimension) + " coordinates, but " +
        std::string(to_string(kind)) + " draws of this model have " + std::to_string(draw_dimension(m, kind)) +
        (is_node_kind(kind) ? " (one per node)" : " (one per edge)") + ": wrong --domain or --graph?");
  LoadedDraws d;
  d.format = file.format;
  d.rows = file.rows;
  d.dimension = file.dimension;
  const std::vector<PlannedCheckpoint> plan = file.plan(layout, d.layout);
  Timings time;
  const auto t_truth = Clock::now();
  const ExactTruth truth = exact_truth(m, kind);
  time.truth = since(t_truth);
  ValidateOptions vo;
  vo.alpha = o.alpha;
  vo.batches = o.batches;
  // One pass over the file: blocks of up to 2^22 values (32 MB) are read and fed to the streaming validator, so
  // the draws are never all in memory (10^5 draws of a 10^4-node model are 8 GB).
  DrawValidator validator(m, kind, truth, vo);
  const std::size_t block =
      std::max<std::size_t>(kMinValidationDraws, (std::size_t{1} << 22) / static_cast<std::size_t>(d.dimension));
  Eigen::MatrixXd buffer;
  for (const PlannedCheckpoint& cp : plan) {
    validator.begin_checkpoint(cp.rows.size(), cp.sweep, cp.chain_offsets);
    for (std::size_t k = 0; k < cp.rows.size(); k += block) {
      const std::size_t count = std::min(block, cp.rows.size() - k);
      const auto t0 = Clock::now();
      const double c0 = cpu_now();
      file.read(cp.rows.data() + k, count, buffer);
      const auto t1 = Clock::now();
      const double c1 = cpu_now();
      validator.add(buffer);
      time.read += std::chrono::duration<double>(t1 - t0).count();
      time.read_cpu += c1 - c0;
      time.validate += since(t1);
      time.validate_cpu += cpu_now() - c1;
    }
    const auto t0 = Clock::now();
    const double c0 = cpu_now();
    validator.end_checkpoint();
    time.validate += since(t0);
    time.validate_cpu += cpu_now() - c0;
  }
  const auto t0 = Clock::now();
  const double c0 = cpu_now();
  const ValidationReport r = validator.finish();
  time.validate += since(t0);
  time.validate_cpu += cpu_now() - c0;

  WrittenFiles files;
  if (!o.out.empty()) {
    std::ostringstream cmd;
    cmd << "dualgibbs validate --graph " << common.graph << " --s " << common.s << " --sigma " << common.sigma
        << " --draws " << o.draws << " --domain " << o.domain << " --layout " << o.layout << " --alpha " << o.alpha;
    files = write_result(as_result(r, m, o, common), o.out, since(t_wall), 1, cmd.str(), !o.no_plot);
  }
  if (o.json) {
    nlohmann::json j = report_json(r, d, m, o, common);
    j["truth_seconds"] = time.truth;
    j["read_seconds"] = time.read;
    j["read_cpu_seconds"] = time.read_cpu;
    j["validate_seconds"] = time.validate;
    j["validate_cpu_seconds"] = time.validate_cpu;
    if (!o.out.empty()) j["files"] = files.files;
    print_json(j);
  } else {
    std::cout << text(r, d, m, o, o.out.empty() ? nullptr : &files, time);
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
  add_count(app, "--batches", o.batches, "batch count for successive states (0 = floor(sqrt(n)) in [6, 1000])");
  app.add_option("--out", o.out, "write validate.csv, validate_cpK.csv per checkpoint, validate.json and plots here");
  app.add_flag("--no-plot", o.no_plot, "with --out: CSV and JSON only");
  app.add_flag("--json", o.json, "print the report as JSON on stdout");
  return [&common]() { return run_validate(common, o); };
}

const Registration reg{{"validate", setup_validate}};

}  // namespace
}  // namespace dualgibbs::cli
