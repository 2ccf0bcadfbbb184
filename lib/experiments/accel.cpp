// `reproduce accel` (issue 13): the mean-error decay of random-scan Gibbs, SSOR and Chebyshev-SSOR against
// sweep-equivalents and CPU seconds, primal x and dual x~ = B y~, with the predicted rates beside the fitted ones.
#include <dualgibbs/experiments/experiments.hpp>

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "experiments/figure_support.hpp"
#include "experiments/fits.hpp"
#include "experiments/seeds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
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

}  // namespace

ExperimentResult run_accel(const ExperimentOptions& opt) {
  const detail::Stopwatch total;
  ExperimentResult res = detail::start_figure(
      "accel",
      "Accelerated samplers: ensemble-mean error of random-scan Gibbs, SSOR and Chebyshev-SSOR against "
      "sweep-equivalents and CPU seconds, primal x and dual x~, " +
          std::string(opt.quick ? "torus:16" : "torus:100") + ", s = 1, sigma = 0.25",
      opt);
  if (opt.as_published || opt.init || opt.init_value || opt.init_scale)
    res.notes.push_back(
        "accel has no published counterpart and runs the mean-decay start of fig10 and rates (1e6 x a fixed normal "
        "vector): the preset and the start overrides do not change it.");
  const std::string graph = opt.quick ? "torus:16" : "torus:100";
  const double s = 1.0, sigma = 0.25, omega = 1.5;
  const std::size_t chains = detail::pick(opt.chains, opt.quick, 40, 100);
  const Model model = load_model(graph, s, sigma);
  detail::add_model_parameters(res, graph, s, sigma);
  res.parameters.emplace_back("omega", number_text(omega, 10));
  res.parameters.emplace_back("chains", std::to_string(chains));
  res.parameters.emplace_back("init", "given: 1e6 x a fixed N(0, I) vector (|.| in the primal), same for every chain");
  res.parameters.emplace_back("observed", "primal: x; dual: x~ = B y~");

  const detail::Stopwatch spectra_clock;
  const Rates rates = convergence_rates(model);
  const SsorSpectrum spectrum[2] = {ssor_spectrum(model, Domain::Primal, omega),
                                    ssor_spectrum(model, Domain::Dual, omega)};
  res.timings.emplace_back("spectra", spectra_clock.seconds());
  const double gibbs_dual = std::isfinite(rates.rate_dual_effective) ? rates.rate_dual_effective : rates.rate_dual;

  // The dual's start: y~ = B^T v in the cut space (x~ sees nothing else), v a normal node vector smoothed by the heat
  // flow of the Laplacian, v <- v - L v / (2 d_max), until the modes above lambda(L) ~ 0.3 d_max are gone. The slowest
  // mode of x~ is the smoothest cut mode (lambda_2 of L); a rough start carries it with weight ~ 1 / sqrt(|V|), below
  // the spread the independent chains' random schedules cause, and the Gibbs fit would measure faster modes.
  Eigen::VectorXd dual_start;
  {
    const SparseMatrix B = model.incidence();
    const SparseMatrix L = B * SparseMatrix(B.transpose());
    const double step = 1.0 / (2.0 * static_cast<double>(std::max<Index>(1, model.graph().max_degree())));
    Eigen::VectorXd v = detail::normal_vector(model.num_nodes(), detail::derive_seed(opt.seed, 102));
    for (int k = 0; k < 40; ++k) v -= step * (L * v);
    dual_start = B.transpose() * v;
    dual_start *= 1e6 * std::sqrt(static_cast<double>(dual_start.size())) / dual_start.norm();
  }

  std::vector<Series> series;
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const SsorSpectrum& sp = spectrum[d == Domain::Primal ? 0 : 1];
    for (SchemeKind kind : {SchemeKind::Gibbs, SchemeKind::Ssor, SchemeKind::ChebyshevSsor}) {
      Series ser;
      ser.kind = kind;
      ser.domain = d;
      ser.label = std::string(to_string(kind)) + (d == Domain::Primal ? " primal" : " dual");
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

  // Iterations: enough to bring the predicted mean error to 1e-9 of its start (below the Monte Carlo floor of
  // these chain counts), at most 2000 and at most 2e9 site updates per series (the slow dual SSOR).
  const double max_updates = 2e9;
  double sampling_cpu = 0;
  for (std::size_t i = 0; i < series.size(); ++i) {
    Series& ser = series[i];
    std::size_t iterations = opt.sweeps;
    if (iterations == 0) {
      const double need = std::ceil(std::log(1e9) / ser.predicted);
      const double per_iteration =
          ser.updates_per_iteration * static_cast<double>(model.dimension(ser.domain)) * static_cast<double>(chains);
      const auto cap = static_cast<std::size_t>(std::clamp(std::floor(max_updates / per_iteration), 10.0, 2000.0));
      iterations = std::isfinite(need) ? std::clamp<std::size_t>(static_cast<std::size_t>(need), 10, cap) : cap;
    }
    SchemeOptions scheme;
    scheme.kind = ser.kind;
    scheme.omega = ser.kind == SchemeKind::Gibbs ? 1.0 : omega;
    scheme.spectrum = spectrum[ser.domain == Domain::Primal ? 0 : 1];
    EnsembleOptions o;
    o.chains = chains;
    o.sweeps = iterations;
    o.seed = detail::derive_seed(opt.seed, 1300, i);
    o.threads = opt.threads;
    o.init = InitialState::Given;
    // The start of detail::mean_decay (fig10, rates): large, the same for every chain; positive in the primal so
    // that it carries the Perron vector, the slowest mode of Gibbs, with a sizeable weight.
    Eigen::VectorXd start = 1e6 * detail::normal_vector(model.num_nodes(), detail::derive_seed(opt.seed, 101));
    if (ser.domain == Domain::Primal) start = start.cwiseAbs();
    if (ser.domain == Domain::Dual) start = dual_start;
    o.given_state = start;
    o.observe_edges = ser.domain == Domain::Dual;
    o.lockstep = 1;
    const SparseMatrix B = model.incidence();
    if (opt.progress) opt.progress("accel: " + ser.label, static_cast<double>(i) / static_cast<double>(series.size()));
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
    sampling_cpu += st.cpu_seconds;
    ser.fit = detail::fit_mean(ser.iterations, ser.points);
  }
  res.timings.emplace_back("sampling_cpu", sampling_cpu);

  res.table =
      Table("series", {"iteration", "sweep_equivalents", "cpu_seconds", "mean_error", "mean_floor", "predicted_error"});
  Table rate_table("series", {"sweep_equivalents_per_iteration", "predicted_neg_log_rate", "fitted_neg_log_rate",
                              "rel_diff", "predicted_per_sweep_equivalent", "fitted_per_sweep_equivalent",
                              "window_first", "window_last", "cpu_seconds_per_iteration", "iterations_to_1e-6",
                              "sweep_equivalents_to_1e-6", "cpu_seconds_to_1e-6"});
  for (const Series& ser : series) {
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
  res.extra_tables.emplace_back("rates", rate_table);

  // Headlines: the Chebyshev-SSOR fit against its prediction, and its cost to 1e-6 against Gibbs (primal).
  const auto find = [&](const std::string& label) -> const Series& {
    return *std::find_if(series.begin(), series.end(), [&](const Series& x) { return x.label == label; });
  };
  for (const char* d : {"primal", "dual"}) {
    const Series& c = find(std::string("cheby-ssor ") + d);
    res.summary.emplace_back(std::string("cheby_ssor_") + d + "_rel_diff", c.fit.neg_log_rate / c.predicted - 1.0);
    const Series& g = find(std::string("gibbs ") + d);
    const double kc = iterations_to(c, 1e-6), kg = iterations_to(g, 1e-6);
    res.summary.emplace_back(std::string("sweep_ratio_gibbs_over_cheby_ssor_to_1e-6_") + d, kg / (2 * kc));
    res.summary.emplace_back(std::string("cpu_ratio_gibbs_over_cheby_ssor_to_1e-6_") + d,
                             kg * g.cpu_per_iteration / (kc * c.cpu_per_iteration));
  }
  res.notes.push_back(
      "one iteration of ssor and cheby-ssor is 2n site updates (2 sweep-equivalents); rates are -ln r per "
      "iteration; CPU seconds are those of the sampling threads for all chains (the observers excluded), on a "
      "machine whose load the sidecar does not record: compare ratios.");
  res.notes.push_back(
      "the dual's prediction for ssor, 1 - lambda_min(M^-1 R), belongs to a mode that mixes cycle and cut space; x~ "
      "sees only the cut space (docs/sampler.md section 2, 'The dual').");
  detail::note_missing_fits(res);
  return detail::finish(std::move(res), total);
}

}  // namespace dualgibbs
