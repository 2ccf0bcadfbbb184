// `reproduce accel`: the mean-error decay and the covariance error of random-scan Gibbs, SSOR and
// Chebyshev-SSOR against sweep-equivalents and CPU seconds, primal x and dual x~ = B y~, on torus:100, torus:1000 and
// kregular:10000,4, with the predicted rates beside the fitted ones and CHOLMOD's cost per exact draw.

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <dualgibbs/paper/figures.hpp>

#include "experiments/fits.hpp"
#include "experiments/seeds.hpp"
#include "paper/figure_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One series of the figure: a scheme in a domain, its ensemble-mean curve (relative to the start) and its cost.
struct Series {
  std::string label;  // "cheby-ssor primal"
  SchemeKind kind = SchemeKind::Gibbs;
  Domain domain = Domain::Primal;
  double predicted = kNaN;  // -ln r per iteration
  std::string predicted_by;
  std::vector<double> iterations;
  std::vector<detail::MeanPoint> points;
  double updates_per_iteration = 1;  // in units of n (sweep-equivalents per iteration)
  double cpu_per_iteration = kNaN;   // CPU seconds of the sampling threads per iteration, all chains
  RateFit fit;
};

// The predicted relative mean error after k iterations: r^k for Gibbs and SSOR (r the asymptotic factor), the
// Chebyshev envelope 1 / T_k((hi + lo) / (hi - lo)) for cheby-ssor (docs/sampler.md section 2).
double predicted_error(const Series& s, const ChebyshevSsorSweep* cheby, double k) {
  if (s.kind != SchemeKind::ChebyshevSsor) return std::exp(-s.predicted * k);
  const double lo = cheby->interval_min(), hi = cheby->interval_max();
  if (!(hi > lo)) return k == 0 ? 1.0 : 0.0;
  return 1.0 / std::cosh(k * std::acosh((hi + lo) / (hi - lo)));
}

// The first iteration whose relative mean error is at most `level` while still clearly above its floor; NaN if
// none.
double iterations_to(const Series& s, double level) {
  const double start = s.points.front().norm;
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    if (s.points[k].norm <= 3 * s.points[k].floor) break;  // lost in the Monte Carlo noise first
    if (s.points[k].norm <= level * start) return s.iterations[k];
  }
  return kNaN;
}

// The covariance error of an ensemble at one checkpoint: 1 - sum_{v in S} var^(v) / sum_{v in S} Var(v) over the
// fixed node subset S, var^ the ensemble's sample variance (all chains started at one point, so it grows from 0
// to the target's Var as the sampler mixes; signed, positive while the ensemble is too narrow), and its floor: half
// the difference of the statistic on the two halves of the chains.
struct CovPoint {
  double error = 0;
  double floor = 0;
};

double variance_sum(const Eigen::MatrixXd& rows, Eigen::Index first, Eigen::Index count) {
  const Eigen::MatrixXd block = rows.middleCols(first, count);
  const Eigen::VectorXd mean = block.rowwise().mean();
  return (block.colwise() - mean).squaredNorm() / static_cast<double>(count - 1);
}

CovPoint cov_point(const Eigen::MatrixXd& states, const std::vector<Index>& subset, double truth_sum) {
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(subset.size()), states.cols());
  for (std::size_t k = 0; k < subset.size(); ++k) rows.row(static_cast<Eigen::Index>(k)) = states.row(subset[k]);
  const Eigen::Index L = states.cols(), half = L / 2;
  CovPoint p;
  p.error = 1.0 - variance_sum(rows, 0, L) / truth_sum;
  if (half >= 2 && L - half >= 2)
    p.floor = 0.5 * std::abs(variance_sum(rows, 0, half) - variance_sum(rows, half, L - half)) / truth_sum;
  return p;
}

// One panel of the figure: a graph, its chain count, its cap on site updates per series, and the graph whose SSOR
// spectra stand in for its own (empty: its own; the Lanczos run for lambda_min on 10^6 nodes takes over half an
// hour on a loaded machine, and on a homogeneous torus the extreme eigenvalues of M^-1 Q and M^-1 R hardly depend
// on the size beyond 100 x 100: the slowest primal mode sits near the constant vector, the dual's at the cycle
// space's sigma^2).
struct Panel {
  std::string graph;
  std::size_t chains;
  double max_updates;
  std::string spectrum_graph;
};

Panel make_panel(const char* graph, std::size_t chains, double max_updates, const char* spectrum_graph) {
  Panel p;
  p.graph = graph;
  p.chains = chains;
  p.max_updates = max_updates;
  p.spectrum_graph = spectrum_graph;
  return p;
}

// The figure's other tables and its time, filled panel by panel.
struct AccelTables {
  Table cov{"series", {"iteration", "sweep_equivalents", "cpu_seconds", "cov_error", "cov_floor"}};
  Table rate{"series",
             {"sweep_equivalents_per_iteration", "predicted_neg_log_rate", "fitted_neg_log_rate", "rel_diff",
              "predicted_per_sweep_equivalent", "fitted_per_sweep_equivalent", "window_first", "window_last",
              "cpu_seconds_per_iteration", "iterations_to_1e-6", "sweep_equivalents_to_1e-6", "cpu_seconds_to_1e-6"}};
  Table exact{"graph",
              {"domain_dual", "dimension", "factorize_cpu_seconds", "cpu_seconds_per_draw", "draws", "chains"}};
  double sampling_cpu = 0, spectra_seconds = 0, truth_seconds = 0;
};

// The truth of the covariance error: Var(X_v) on the subset by selected inversion of Q, and Var(x~_v) from it by
// Woodbury (Prop. 2, docs/concepts.md: Cov(X) = D_s - D_s Cov(x~) D_s with D_s = diag(s_v^2)), no factor of R
// needed. truth_sum[0]: the primal's sum over the subset, truth_sum[1]: the dual's.
struct CovTruth {
  std::vector<Index> subset;
  double truth_sum[2] = {0, 0};
};

CovTruth covariance_truth(const Model& model) {
  CovTruth t;
  const Index n = model.num_nodes();
  const auto m = static_cast<Index>(std::min<Index>(n, 2000));
  for (Index k = 0; k < m; ++k) t.subset.push_back(static_cast<Index>(static_cast<double>(k) * n / m));
  const CholeskyFactor f(model.primal_precision());
  const Eigen::VectorXd var = f.marginal_variances();
  for (Index v : t.subset) {
    const double s2 = model.node_variances()[v];
    t.truth_sum[0] += var[v];
    t.truth_sum[1] += (s2 - var[v]) / (s2 * s2);
  }
  return t;
}

// Exact sampling's cost: CHOLMOD's factorization and batched draws of each domain's precision (R only up to
// kMaxExactDualEdges edges), a row of the exact table each.
void time_exact_sampling(const Model& model, const std::string& graph, std::size_t chains, std::uint64_t seed,
                         std::size_t g, Table& exact_table, std::vector<std::string>& notes) {
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    constexpr Index kMaxExactDualEdges = 1000000;
    if (d == Domain::Dual && model.num_edges() > kMaxExactDualEdges) {
      notes.push_back(graph + ": CHOLMOD's exact sampling of the dual (R, " + std::to_string(model.num_edges()) +
                      " edges) is not timed (more than " + std::to_string(kMaxExactDualEdges) +
                      " edges); the primal's line stands for both.");
      continue;
    }
    const std::size_t draws = 16;
    std::clock_t c0 = std::clock();
    const CholeskyFactor f(d == Domain::Primal ? model.primal_precision() : model.dual_precision());
    const double factor_cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    c0 = std::clock();
    const Eigen::MatrixXd x = f.sample(draws, detail::derive_seed(seed, 1301, g));
    const double draw_cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / static_cast<double>(draws);
    if (!x.allFinite()) throw std::runtime_error("accel: CHOLMOD's exact draws are not finite on " + graph);
    exact_table.add_row(graph, {d == Domain::Dual ? 1.0 : 0.0, static_cast<double>(model.dimension(d)), factor_cpu,
                                draw_cpu, static_cast<double>(draws), static_cast<double>(chains)});
  }
}

// The dual's start: y~ = B^T v in the cut space (x~ sees nothing else), v a normal node vector smoothed by the
// heat flow of the Laplacian, v <- v - L v / (2 d_max), until the modes above lambda(L) ~ 0.3 d_max are gone.
// The slowest mode of x~ is the smoothest cut mode (lambda_2 of L); a rough start carries it with weight
// ~ 1 / sqrt(|V|), below the spread the independent chains' random schedules cause, and the Gibbs fit would
// measure faster modes.
Eigen::VectorXd smooth_dual_start(const Model& model, const SparseMatrix& B, std::uint64_t seed) {
  const SparseMatrix L = B * SparseMatrix(B.transpose());
  const double step = 1.0 / (2.0 * static_cast<double>(std::max<Index>(1, model.graph().max_degree())));
  Eigen::VectorXd v = detail::normal_vector(model.num_nodes(), detail::derive_seed(seed, 102));
  for (int k = 0; k < 40; ++k) v -= step * (L * v);
  Eigen::VectorXd dual_start = B.transpose() * v;
  dual_start *= 1e6 * std::sqrt(static_cast<double>(dual_start.size())) / dual_start.norm();
  return dual_start;
}

// The six series of a panel (Gibbs, SSOR, Chebyshev-SSOR in each domain) with their predicted rates.
std::vector<Series> panel_series(const std::string& graph, const Rates& rates, const SsorSpectrum (&spectrum)[2]) {
  const double gibbs_dual = std::isfinite(rates.rate_dual_effective) ? rates.rate_dual_effective : rates.rate_dual;
  std::vector<Series> series;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const SsorSpectrum& sp = spectrum[d == Domain::Primal ? 0 : 1];
    for (SchemeKind kind : {SchemeKind::Gibbs, SchemeKind::Ssor, SchemeKind::ChebyshevSsor}) {
      Series ser;
      ser.kind = kind;
      ser.domain = d;
      ser.label = graph + " " + to_string(kind) + (d == Domain::Primal ? " primal" : " dual");
      ser.updates_per_iteration = kind == SchemeKind::Gibbs ? 1 : 2;
      if (kind == SchemeKind::Gibbs) {
        ser.predicted = detail::neg_log(d == Domain::Primal ? rates.rate_primal : gibbs_dual);
        ser.predicted_by = d == Domain::Primal ? "r_p" : (std::isfinite(rates.rate_dual_effective) ? "r_d^eff" : "r_d");
      } else if (kind == SchemeKind::Ssor) {
        ser.predicted = detail::neg_log(ssor_rate(sp));
        ser.predicted_by = "ssor";
      } else {
        ser.predicted = detail::neg_log(chebyshev_ssor_rate(sp));
        ser.predicted_by = "cheby-ssor";
      }
      series.push_back(std::move(ser));
    }
  }
  return series;
}

// What a panel's series runs share.
struct PanelRun {
  const ExperimentOptions& opt;
  const Panel& panel;
  std::size_t g;            // the panel's index
  std::size_t panel_count;  // panels of the figure
  std::size_t chains;
  double omega;
  const Model& model;
  const SparseMatrix& B;
  const SsorSpectrum (&spectrum)[2];
  const CovTruth& truth;
  const Eigen::VectorXd& dual_start;
};

// Series i of a panel: the mean run (a large start, the ensemble mean at every iteration, its rate fitted) and the
// covariance run (every chain from 0, the sample variance of the subset at every iteration, rows of the covariance
// table). Iterations: enough to bring the predicted mean error to 1e-9 of its start (below the Monte Carlo floor of
// these chain counts), at most 2000 and at most the panel's cap of site updates per series (the slow dual SSOR,
// Gibbs on 10^6 nodes). The covariance run: to a predicted 1e-3 (the error decays as r^2 per iteration; the floor
// of these chain counts is about 1e-2), under the same caps.
void run_series(const PanelRun& p, std::size_t i, std::size_t series_count, Series& ser, AccelTables& tables) {
  const ExperimentOptions& opt = p.opt;
  const Model& model = p.model;
  const SparseMatrix& B = p.B;
  const std::size_t g = p.g, chains = p.chains;
  const double per_iteration =
      ser.updates_per_iteration * static_cast<double>(model.dimension(ser.domain)) * static_cast<double>(chains);
  const auto cap = static_cast<std::size_t>(std::clamp(std::floor(p.panel.max_updates / per_iteration), 10.0, 2000.0));
  const auto iterations_for = [&](double level) {
    if (opt.sweeps != 0) return opt.sweeps;
    const double need = std::ceil(std::log(level) / ser.predicted);
    return std::isfinite(need) ? std::clamp<std::size_t>(static_cast<std::size_t>(need), 10, cap) : cap;
  };
  const std::size_t iterations = iterations_for(1e9), cov_iterations = iterations_for(std::sqrt(1e3));
  SchemeOptions scheme;
  scheme.kind = ser.kind;
  scheme.omega = ser.kind == SchemeKind::Gibbs ? 1.0 : p.omega;
  scheme.spectrum = p.spectrum[ser.domain == Domain::Primal ? 0 : 1];
  EnsembleOptions o;
  o.chains = chains;
  o.sweeps = iterations;
  o.seed = detail::derive_seed(opt.seed, 1300 + 10 * g, i);
  o.threads = opt.threads;
  o.group = opt.group;
  o.init = InitialState::Given;
  // The start of detail::mean_decay (fig10, rates): large, the same for every chain; positive in the primal so
  // that it carries the Perron vector, the slowest mode of Gibbs, with a sizeable weight.
  Eigen::VectorXd start = 1e6 * detail::normal_vector(model.num_nodes(), detail::derive_seed(opt.seed, 101));
  if (ser.domain == Domain::Primal) start = start.cwiseAbs();
  if (ser.domain == Domain::Dual) start = p.dual_start;
  o.given_state = start;
  o.observe_edges = ser.domain == Domain::Dual;
  // The SSOR schemes draw no schedule randomness, so a lane of a lock-step block is bit for bit the independent
  // chain (test_accelerated): blocks of 8 share each pass over the matrix at no cost to the statistics. Gibbs's
  // random scan would share its schedule: independent chains.
  o.lockstep = ser.kind == SchemeKind::Gibbs ? 1 : 8;
  if (opt.progress)
    opt.progress("accel: " + ser.label,
                 (static_cast<double>(g) + static_cast<double>(i) / static_cast<double>(series_count)) /
                     static_cast<double>(p.panel_count));
  const EnsembleStats st = run_ensemble(
      model, ser.domain, o,
      [&](const Checkpoint& cp) {
        ser.iterations.push_back(static_cast<double>(cp.sweep));
        if (ser.domain == Domain::Dual) {
          const Eigen::MatrixXd xt = B * cp.states;
          ser.points.push_back(detail::mean_point(xt));
        } else {
          ser.points.push_back(detail::mean_point(cp.states));
        }
      },
      scheme);
  ser.cpu_per_iteration = st.cpu_seconds / static_cast<double>(iterations);
  tables.sampling_cpu += st.cpu_seconds;
  ser.fit = detail::fit_mean(ser.iterations, ser.points);

  o.sweeps = cov_iterations;
  o.seed = detail::derive_seed(opt.seed, 1305 + 10 * g, i);
  o.given_state = Eigen::VectorXd::Zero(model.dimension(ser.domain));
  const double ts = p.truth.truth_sum[ser.domain == Domain::Primal ? 0 : 1];
  const std::vector<Index>& subset = p.truth.subset;
  std::vector<std::pair<double, CovPoint>> cov;
  const EnsembleStats cst = run_ensemble(
      model, ser.domain, o,
      [&](const Checkpoint& cp) {
        const CovPoint pt =
            ser.domain == Domain::Dual ? cov_point(B * cp.states, subset, ts) : cov_point(cp.states, subset, ts);
        cov.emplace_back(static_cast<double>(cp.sweep), pt);
      },
      scheme);
  tables.sampling_cpu += cst.cpu_seconds;
  const double cov_cpu_per_iteration = cst.cpu_seconds / static_cast<double>(cov_iterations);
  for (const auto& [it, pt] : cov)
    tables.cov.add_row(ser.label, {it, it * ser.updates_per_iteration, it * cov_cpu_per_iteration, pt.error, pt.floor});
}

// A series' rows of the mean table and the rate table, and its rate comparison.
void report_series(const Series& ser, const SsorSpectrum (&spectrum)[2], ExperimentResult& res, Table& rate_table) {
  const ChebyshevSsorSweep* cheby = nullptr;
  std::optional<ChebyshevSsorSweep> sweep;
  if (ser.kind == SchemeKind::ChebyshevSsor) cheby = &sweep.emplace(spectrum[ser.domain == Domain::Primal ? 0 : 1]);
  const double start = ser.points.front().norm;
  for (std::size_t k = 0; k < ser.points.size(); ++k) {
    const double it = ser.iterations[k];
    res.table.add_row(ser.label,
                      {it, it * ser.updates_per_iteration, it * ser.cpu_per_iteration, ser.points[k].norm / start,
                       ser.points[k].floor / start, predicted_error(ser, cheby, it)});
  }
  const double k6 = iterations_to(ser, 1e-6);
  const double fitted = ser.fit.neg_log_rate;
  rate_table.add_row(ser.label, {ser.updates_per_iteration, ser.predicted, fitted, fitted / ser.predicted - 1.0,
                                 ser.predicted / ser.updates_per_iteration, fitted / ser.updates_per_iteration,
                                 ser.fit.first_sweep, ser.fit.last_sweep, ser.cpu_per_iteration, k6,
                                 k6 * ser.updates_per_iteration, k6 * ser.cpu_per_iteration});
  RateComparison row;
  row.label = ser.label + (ser.domain == Domain::Dual ? " x~" : "");
  row.fitted_from = "mean";
  row.predicted_by = ser.predicted_by;
  row.predicted = ser.predicted;
  row.fit = ser.fit;
  res.rates.push_back(row);
}

// Headlines: the Chebyshev-SSOR fit against its prediction, and its cost to 1e-6 against Gibbs.
void headlines(const std::string& graph, const std::vector<Series>& series, ExperimentResult& res) {
  const auto find = [&](const std::string& label) -> const Series& {
    return *std::find_if(series.begin(), series.end(), [&](const Series& x) { return x.label == label; });
  };
  for (const char* d : {"primal", "dual"}) {
    const Series& c = find(graph + " cheby-ssor " + d);
    res.summary.emplace_back(graph + " cheby_ssor_" + d + "_rel_diff", c.fit.neg_log_rate / c.predicted - 1.0);
    const Series& gb = find(graph + " gibbs " + d);
    const double kc = iterations_to(c, 1e-6), kg = iterations_to(gb, 1e-6);
    res.summary.emplace_back(graph + " sweep_ratio_gibbs_over_cheby_ssor_to_1e-6_" + d, kg / (2 * kc));
    res.summary.emplace_back(graph + " cpu_ratio_gibbs_over_cheby_ssor_to_1e-6_" + d,
                             kg * gb.cpu_per_iteration / (kc * c.cpu_per_iteration));
  }
}

// Panel g of the figure: its spectra, its truth, exact sampling's cost, then its six series.
void run_panel(const ExperimentOptions& opt, const std::vector<Panel>& panels, std::size_t g, double s, double sigma,
               double omega, ExperimentResult& res, AccelTables& tables) {
  const Panel& panel = panels[g];
  const std::string& graph = panel.graph;
  const std::size_t chains = detail::pick(opt.chains, false, 0, panel.chains);
  const Model model = load_model(graph, s, sigma);

  const detail::Stopwatch spectra_clock;
  const Rates rates = convergence_rates(model);
  const std::optional<Model> stand_in =
      panel.spectrum_graph.empty() ? std::nullopt : std::optional<Model>(load_model(panel.spectrum_graph, s, sigma));
  const Model& spectral_model = stand_in ? *stand_in : model;
  const SsorSpectrum spectrum[2] = {ssor_spectrum(spectral_model, Domain::Primal, omega),
                                    ssor_spectrum(spectral_model, Domain::Dual, omega)};
  tables.spectra_seconds += spectra_clock.seconds();
  if (stand_in)
    res.notes.push_back(graph + ": the SSOR spectra (Chebyshev interval and predictions of ssor and cheby-ssor) are " +
                        panel.spectrum_graph +
                        "'s, standing in for its own (Lanczos for lambda_min on this size takes over half an hour); "
                        "the fitted rates test the stand-in.");

  const detail::Stopwatch truth_clock;
  const CovTruth truth = covariance_truth(model);
  tables.truth_seconds += truth_clock.seconds();
  time_exact_sampling(model, graph, chains, opt.seed, g, tables.exact, res.notes);

  const SparseMatrix B = model.incidence();
  const Eigen::VectorXd dual_start = smooth_dual_start(model, B, opt.seed);
  std::vector<Series> series = panel_series(graph, rates, spectrum);
  const PanelRun run{opt, panel, g, panels.size(), chains, omega, model, B, spectrum, truth, dual_start};
  for (std::size_t i = 0; i < series.size(); ++i) run_series(run, i, series.size(), series[i], tables);
  for (const Series& ser : series) report_series(ser, spectrum, res, tables.rate);
  headlines(graph, series, res);
}

// The figure's panels: small graphs for --quick.
std::vector<Panel> accel_panels(bool quick) {
  if (quick) return {make_panel("torus:16", 40, 2e9, ""), make_panel("kregular:256,4", 40, 2e9, "")};
  return {make_panel("torus:100", 100, 2e9, ""), make_panel("torus:1000", 16, 2e9, "torus:100"),
          make_panel("kregular:10000,4", 100, 2e9, "")};
}

}  // namespace

ExperimentResult run_accel(const ExperimentOptions& opt) {
  const std::vector<Panel> panels = accel_panels(opt.quick);
  std::string graphs;
  for (const Panel& p : panels) graphs += (graphs.empty() ? "" : ", ") + p.graph;
  const detail::FigureSpec spec(
      "accel",
      "Accelerated samplers: ensemble-mean and covariance error of random-scan Gibbs, SSOR and Chebyshev-SSOR "
      "against sweep-equivalents and CPU seconds, primal x and dual x~, " +
          graphs + ", s = 1, sigma = 0.25",
      std::nullopt, {}, {});
  return detail::run_figure(spec, opt, [&](detail::FigureRun& run) {
    ExperimentResult& res = run.res;
    if (opt.as_published || opt.init || opt.init_value || opt.init_scale)
      res.notes.push_back(
          "accel has no published counterpart and runs the mean-decay start of fig10 and rates (1e6 x a fixed normal "
          "vector): the preset and the start overrides do not change it.");
    const double s = 1.0, sigma = 0.25, omega = 1.5;
    res.parameters.emplace_back("graphs", graphs);
    res.parameters.emplace_back("s", number_text(s, 10));
    res.parameters.emplace_back("sigma", number_text(sigma, 10));
    res.parameters.emplace_back("omega", number_text(omega, 10));
    {
      std::string chains;
      for (const Panel& p : panels)
        chains += (chains.empty() ? "" : ", ") + p.graph + ": " +
                  std::to_string(detail::pick(opt.chains, false, 0, p.chains));
      res.parameters.emplace_back("chains", chains);
    }
    res.parameters.emplace_back("init",
                                "mean: 1e6 x a fixed N(0, I) vector (|.| in the primal), same for every chain; "
                                "covariance: 0 for every chain");
    res.parameters.emplace_back("observed", "primal: x; dual: x~ = B y~");
    res.parameters.emplace_back(
        "cov_error",
        "1 - sum_{v in S} var^(v) / sum_{v in S} Var(v), S = min(|V|, 2000) evenly spaced nodes, "
        "var^ the ensemble's sample variance, Var by selected inversion of Q (dual x~: "
        "(s_v^2 - Var(X_v)) / s_v^4, Woodbury)");

    res.table = Table("series",
                      {"iteration", "sweep_equivalents", "cpu_seconds", "mean_error", "mean_floor", "predicted_error"});
    AccelTables tables;
    for (std::size_t g = 0; g < panels.size(); ++g) run_panel(opt, panels, g, s, sigma, omega, res, tables);
    res.timings.emplace_back("spectra", tables.spectra_seconds);
    res.timings.emplace_back("truth_and_exact_sampling", tables.truth_seconds);
    res.timings.emplace_back("sampling_cpu", tables.sampling_cpu);
    res.extra_tables.emplace_back("rates", tables.rate);
    res.extra_tables.emplace_back("covariance", tables.cov);
    res.extra_tables.emplace_back("exact", tables.exact);
    res.notes.push_back(
        "one iteration of ssor and cheby-ssor is 2n site updates (2 sweep-equivalents); rates are -ln r per "
        "iteration; CPU seconds are those of the sampling threads for all chains (the observers excluded), on a "
        "machine whose load the sidecar does not record: compare ratios.");
    res.notes.push_back(
        "the dual's prediction for ssor, 1 - lambda_min(M^-1 R), belongs to a mode that mixes cycle and cut space; x~ "
        "sees only the cut space (docs/sampler.md section 2, 'The dual').");
    res.notes.push_back(
        "accel_exact.csv: CHOLMOD's CPU seconds to factorize each domain's precision and per exact draw (16 batched); "
        "the time of `chains` exact draws is the line to compare the CPU axis with.");
    detail::note_missing_fits(res);
  });
}

}  // namespace dualgibbs
