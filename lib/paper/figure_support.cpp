// Private machinery shared by the figures (figure_support.hpp).
#include "paper/figure_support.hpp"

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/io.hpp>

#include "experiments/fits.hpp"
#include "experiments/seeds.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs::detail {

void check_options(const std::string& name, const ExperimentOptions& options) {
  if (options.chains > 0 && options.chains < kMinSplitHalfChains)
    throw std::invalid_argument(name + ": chains = " + std::to_string(options.chains) + " must be 0 (the figure's " +
                                "default) or at least " + std::to_string(kMinSplitHalfChains) +
                                " (two halves of three)");
  if (options.init && *options.init == InitialState::Given)
    throw std::invalid_argument(name + ": init must be constant or random (given states are for the library)");
  if (options.init_value && !std::isfinite(*options.init_value))
    throw std::invalid_argument(name + ": init_value = " + number_text(*options.init_value) + " is not finite");
  if (options.init_scale && !(std::isfinite(*options.init_scale) && *options.init_scale > 0))
    throw std::invalid_argument(name + ": init_scale = " + number_text(*options.init_scale) +
                                " must be finite and positive");
}

void apply_start(ConvergenceSettings& cs, const ExperimentOptions& opt, InitialState init, double value, double scale) {
  cs.init = opt.init.value_or(init);
  cs.init_value = opt.init_value.value_or(value);
  cs.init_scale = opt.init_scale.value_or(scale);
  if (opt.init_scale && cs.init != InitialState::Random)
    throw std::invalid_argument("init_scale applies only to a random start (init random), the start here is " +
                                std::string(to_string(cs.init)));
}

ProgressFn sub_progress(const ProgressFn& parent, double lo, double hi, const std::string& prefix) {
  if (!parent) return {};
  return [parent, lo, hi, prefix](const std::string& stage, double f) {
    parent(prefix.empty() ? stage : (stage.empty() ? prefix : prefix + ": " + stage), lo + (hi - lo) * f);
  };
}

std::size_t pick(std::size_t override_value, bool quick, std::size_t quick_value, std::size_t full_value) {
  if (override_value > 0) return override_value;
  return quick ? quick_value : full_value;
}

void add_common_parameters(ExperimentResult& r, const ExperimentOptions& opt) {
  r.parameters.emplace_back("preset", opt.as_published ? "as-published" : "paper-text");
  r.parameters.emplace_back("quick", opt.quick ? "true" : "false");
  r.parameters.emplace_back("seed", std::to_string(opt.seed));
  r.parameters.emplace_back("threads_requested", std::to_string(opt.threads));
  r.parameters.emplace_back("lockstep", "1");
}

void add_model_parameters(ExperimentResult& r, const std::string& graph, double s, double sigma) {
  r.parameters.emplace_back("graph", graph);
  r.parameters.emplace_back("s", number_text(s, 10));
  r.parameters.emplace_back("sigma", number_text(sigma, 10));
}

ConvergenceSettings settings_for(const ExperimentOptions& opt, std::size_t chains, std::size_t sweeps,
                                 std::uint64_t seed) {
  ConvergenceSettings cs;
  cs.chains = chains;
  cs.sweeps = sweeps;
  cs.seed = seed;
  cs.threads = opt.threads;
  cs.group = opt.group;
  return cs;
}

ExperimentResult start_figure(const std::string& name, std::string title, const ExperimentOptions& opt) {
  check_options(name, opt);
  ExperimentResult res;
  res.name = name;
  res.title = std::move(title);
  add_common_parameters(res, opt);
  return res;
}

ConvergenceCurves FigureRun::measure(const Model& m, const Eigen::MatrixXd& target, std::size_t i, std::size_t n,
                                     const std::string& label, double span) const {
  const auto total = static_cast<double>(n);
  return measure_convergence(
      m, target, settings,
      sub_progress(opt.progress, static_cast<double>(i) / total, (static_cast<double>(i) + span) / total), label);
}

ExperimentResult run_figure(const FigureSpec& spec, const ExperimentOptions& opt, const FigureBody& body) {
  const Stopwatch total;
  ExperimentResult res = start_figure(spec.name, spec.title, opt);
  FigureRun run{opt,
                res,
                pick(opt.chains, opt.quick, spec.chains.quick, spec.chains.full),
                pick(opt.sweeps, opt.quick, spec.sweeps.quick, spec.sweeps.full),
                std::nullopt,
                ConvergenceSettings{}};
  if (spec.model) {
    const FigureModel& m = *spec.model;
    add_model_parameters(res, m.graph, m.s, m.sigma);
    run.model.emplace(load_model(m.graph, m.s, m.sigma));
  }
  res.parameters.insert(res.parameters.end(), spec.parameters.begin(), spec.parameters.end());
  if (spec.convergence) {
    const FigureChains& c = *spec.convergence;
    run.settings = settings_for(opt, run.chains, run.sweeps, c.seed_salt ? derive_seed(opt.seed, c.seed_salt) : 0);
    apply_start(run.settings, opt, opt.as_published ? c.published : InitialState::Constant, 1.0, c.scale);
    run.settings.control_variate = c.control_variate;
    add_settings_parameters(res, run.settings);
  }
  body(run);
  return finish(std::move(res), total);
}

Table curves_table(const std::vector<ConvergenceCurves>& curves, const std::vector<std::string>& names,
                   const std::vector<CurveColumn>& columns) {
  std::vector<std::string> heads{"sweep"};
  for (const std::string& name : names)
    for (const CurveColumn& c : columns) heads.push_back(c.prefix + name);
  Table table(heads);
  for (std::size_t t = 0; t < curves.front().primal.size(); ++t) {
    std::vector<double> row{static_cast<double>(curves.front().primal[t].sweep)};
    for (const ConvergenceCurves& run : curves)
      for (const CurveColumn& c : columns) {
        const std::vector<ErrorEstimate>& errors = c.dual ? run.dual : run.primal;
        const double x = errors[t].*c.field;
        row.push_back(c.normalised ? x / (errors.front().*c.field) : x);
      }
    table.add_row(std::move(row));
  }
  return table;
}

void mean_and_sd(const std::vector<double>& v, double& mean, double& sd) {
  mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
}

std::vector<RateComparison> only(const std::vector<RateComparison>& rows, const std::string& from) {
  std::vector<RateComparison> out;
  for (const auto& r : rows)
    if (r.fitted_from == from) out.push_back(r);
  return out;
}

RateFit mean_decay(const Model& m, Domain domain, std::size_t chains, std::size_t sweeps, std::uint64_t seed,
                   unsigned threads, ChainGroup* group, RateFit* x_tilde_fit, double* seconds) {
  EnsembleOptions o;
  o.chains = chains;
  o.sweeps = sweeps;
  o.seed = seed;
  o.threads = threads;
  o.group = group;
  o.init = InitialState::Given;
  // A large random start, so the mean stays far above its Monte Carlo floor while it decays. In the primal the
  // start is made positive: A = I - D^-1 Q has non-negative entries (Q's off-diagonal entries are -1/sigma_e^2), so
  // on a connected graph its slowest mode is a positive vector (Perron–Frobenius) and a positive start always
  // carries it with a sizeable weight; a signed random start can nearly miss it by chance, and the fit then
  // measures a faster mode (seen on ws:32,4,0.3 and kregular:32,4 for some seeds).
  Eigen::VectorXd start = 1e6 * normal_vector(m.dimension(domain), derive_seed(seed, 101));
  if (domain == Domain::Primal) start = start.cwiseAbs();
  o.given_state = start;
  o.observe_edges = domain == Domain::Dual;
  o.lockstep = 1;
  std::vector<double> t;
  std::vector<MeanPoint> a, b;
  const SparseMatrix B = m.incidence();
  const EnsembleStats st = run_ensemble(m, domain, o, [&](const Checkpoint& cp) {
    t.push_back(static_cast<double>(cp.sweep));
    a.push_back(mean_point(cp.states));
    if (domain == Domain::Dual) {
      const Eigen::MatrixXd xt = B * cp.states;
      b.push_back(mean_point(xt));
    }
  });
  if (seconds) *seconds += st.seconds;
  if (x_tilde_fit && domain == Domain::Dual) *x_tilde_fit = fit_mean(t, b);
  return fit_mean(t, a);
}

}  // namespace dualgibbs::detail
