// Experiments: tables, the primal-vs-dual convergence measurement, rate comparisons and the registry of
// figures. The figures themselves are in experiments_figures.cpp.
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "experiments/experiments_internal.hpp"
#include <dualgibbs/core/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace dualgibbs {

// ---- Table --------------------------------------------------------------------------------------

namespace {
/// Column names must be non-empty and distinct (column() looks them up by name).
void check_column_names(const std::string& label_column, const std::vector<std::string>& columns) {
  std::vector<std::string> all = columns;
  if (!label_column.empty()) all.push_back(label_column);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].empty()) throw std::invalid_argument("Table: column " + std::to_string(i) + " has an empty name");
    for (std::size_t j = 0; j < i; ++j)
      if (all[j] == all[i]) throw std::invalid_argument("Table: column name '" + all[i] + "' is given twice");
  }
}
}  // namespace

Table::Table(std::vector<std::string> columns) : m_columns(std::move(columns)) { check_column_names("", m_columns); }

Table::Table(std::string label_column, std::vector<std::string> columns)
    : m_label_column(std::move(label_column)), m_columns(std::move(columns)) {
  if (m_label_column.empty()) throw std::invalid_argument("Table: the label column needs a name");
  check_column_names(m_label_column, m_columns);
}

void Table::add_row(std::vector<double> row) {
  if (!m_label_column.empty())
    throw std::invalid_argument("Table::add_row: this table has a label column '" + m_label_column + "'; give a label");
  if (row.size() != m_columns.size())
    throw std::invalid_argument("Table::add_row: row has " + std::to_string(row.size()) + " values for " +
                                std::to_string(m_columns.size()) + " columns");
  m_rows.push_back(std::move(row));
}

void Table::add_row(std::string label, std::vector<double> row) {
  if (m_label_column.empty()) throw std::invalid_argument("Table::add_row: this table has no label column");
  if (row.size() != m_columns.size())
    throw std::invalid_argument("Table::add_row: row has " + std::to_string(row.size()) + " values for " +
                                std::to_string(m_columns.size()) + " columns");
  m_labels.push_back(std::move(label));
  m_rows.push_back(std::move(row));
}

std::size_t Table::column_index(const std::string& name) const {
  for (std::size_t i = 0; i < m_columns.size(); ++i)
    if (m_columns[i] == name) return i;
  throw std::invalid_argument("Table: no column '" + name + "'");
}

bool Table::has_column(const std::string& name) const noexcept {
  return std::find(m_columns.begin(), m_columns.end(), name) != m_columns.end();
}

std::vector<double> Table::column(const std::string& name) const {
  const std::size_t c = column_index(name);
  std::vector<double> out;
  out.reserve(m_rows.size());
  for (const auto& r : m_rows) out.push_back(r[c]);
  return out;
}

namespace {
std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}
}  // namespace

void Table::write_csv(std::ostream& out) const {
  bool first = true;
  if (!m_label_column.empty()) {
    out << csv_text(m_label_column);
    first = false;
  }
  for (const auto& c : m_columns) {
    if (!first) out << ',';
    out << csv_text(c);
    first = false;
  }
  out << '\n';
  char buf[64];
  for (std::size_t r = 0; r < m_rows.size(); ++r) {
    first = true;
    if (!m_label_column.empty()) {
      out << csv_text(m_labels[r]);
      first = false;
    }
    for (double v : m_rows[r]) {
      if (!first) out << ',';
      first = false;
      if (std::isnan(v)) {
        out << "nan";
      } else if (std::isinf(v)) {
        out << (v > 0 ? "inf" : "-inf");
      } else {
        std::snprintf(buf, sizeof buf, "%.10g", v);
        out << buf;
      }
    }
    out << '\n';
  }
}

// ---- private helpers ----------------------------------------------------------------------------

namespace detail {

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  auto mix = [](std::uint64_t z) { return mix64(z + 0x9e3779b97f4a7c15ULL); };  // a SplitMix64 step
  return mix(mix(mix(seed) ^ (a * 0x632be59bd9b4e019ULL)) ^ (b + 0x8cb92ba72f3d8dd7ULL));
}

std::string num(double v) {
  std::ostringstream os;
  os << std::setprecision(10) << v;
  return os.str();
}

double neg_log(double r) { return std::isnan(r) ? r : -std::log(r); }

double neg_log(const std::optional<ClosedForm>& r) { return r ? neg_log(r->value) : std::nan(""); }

Graph connected_graph(const std::function<Graph(std::uint64_t)>& make, std::uint64_t seed, std::uint64_t salt,
                      int* attempts) {
  for (int k = 0; k < 100; ++k) {
    Graph g = make(derive_seed(seed, salt, static_cast<std::uint64_t>(k)));
    if (g.num_components() == 1) {
      if (attempts) *attempts = k + 1;
      return g;
    }
  }
  throw std::runtime_error("experiments: no connected graph in 100 draws");
}

std::vector<double> uniform_vector(std::size_t n, double lo, double hi, std::uint64_t seed) {
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Parameters);
  std::vector<double> v(n);
  for (auto& x : v) x = lo + (hi - lo) * uniform01(rng);
  return v;
}

Eigen::VectorXd normal_vector(Eigen::Index n, std::uint64_t seed) {
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Parameters);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = standard_normal(rng);
  return v;
}

void check_options(const std::string& name, const ExperimentOptions& options) {
  if (options.chains > 0 && options.chains < kMinSplitHalfChains)
    throw std::invalid_argument(name + ": chains = " + std::to_string(options.chains) + " must be 0 (the figure's " +
                                "default) or at least " + std::to_string(kMinSplitHalfChains) +
                                " (two halves of three)");
}

ProgressFn sub_progress(const ProgressFn& parent, double lo, double hi, const std::string& prefix) {
  if (!parent) return {};
  return [parent, lo, hi, prefix](const std::string& stage, double f) {
    parent(prefix.empty() ? stage : (stage.empty() ? prefix : prefix + ": " + stage), lo + (hi - lo) * f);
  };
}

MeanPoint mean_point(const Eigen::Ref<const Eigen::MatrixXd>& states) {
  const Eigen::Index L = states.cols(), half = L / 2;
  MeanPoint p;
  p.norm = column_mean(states, 0, L).norm();
  if (half >= 1 && L - half >= 1)
    p.floor = 0.5 * (column_mean(states, 0, half) - column_mean(states, half, L - half)).norm();
  return p;
}

RateFit fit_mean(const std::vector<double>& sweeps, const std::vector<MeanPoint>& points) {
  std::vector<double> v, n;
  for (const auto& p : points) {
    v.push_back(p.norm);
    n.push_back(p.floor);
  }
  RateFitOptions o;
  o.exponent = 1.0;
  o.tail_fraction = 0.5;
  return fit_decay_rate(sweeps, v, n, o);
}

RateFit fit_eu(const std::vector<ErrorEstimate>& history) {
  std::vector<double> t, v, n;
  for (const auto& e : history) {
    t.push_back(static_cast<double>(e.sweep));
    v.push_back(e.Eu);
    n.push_back(e.Eu_se);
  }
  return fit_decay_rate(t, v, n, RateFitOptions{});
}

}  // namespace detail

// ---- convergence --------------------------------------------------------------------------------

Eigen::MatrixXd exact_target(const Model& model, Index max_full_nodes) {
  if (model.num_nodes() <= max_full_nodes) return covariance_primal(model);
  return Eigen::MatrixXd(marginal_variances(model, Domain::Primal));
}

ConvergenceCurves measure_convergence(const Model& model, const Eigen::MatrixXd& target,
                                      const ConvergenceSettings& settings, const ProgressFn& progress,
                                      const std::string& label) {
  if (settings.chains < kMinSplitHalfChains)
    throw std::invalid_argument("measure_convergence: need at least " + std::to_string(kMinSplitHalfChains) +
                                " chains (two halves of three), got " + std::to_string(settings.chains));
  if (settings.sweeps < 1) throw std::invalid_argument("measure_convergence: sweeps must be at least 1");
  if (model.num_edges() == 0) throw std::invalid_argument("measure_convergence: the graph has no edges (no dual domain)");
  const Index n = model.num_nodes();
  if (target.rows() != n || (target.cols() != n && target.cols() != 1))
    throw std::invalid_argument("measure_convergence: target is " + std::to_string(target.rows()) + " x " +
                                std::to_string(target.cols()) + ", expected " + std::to_string(n) + " x " +
                                std::to_string(n) + " or " + std::to_string(n) + " x 1");
  ErrorTrackerOptions topt;
  topt.jackknife_groups = settings.jackknife_groups;
  ConvergenceCurves out;
  const detail::Stopwatch clock;
  for (Domain domain : {Domain::Primal, Domain::Dual}) {
    EnsembleOptions o;
    o.chains = settings.chains;
    o.sweeps = settings.sweeps;
    o.scan = settings.scan;
    o.seed = detail::derive_seed(settings.seed, domain == Domain::Primal ? 1 : 2);
    o.threads = settings.threads;
    o.checkpoint_every = settings.checkpoint_every;
    o.init = settings.init;
    o.init_value = settings.init_value;
    o.init_scale = settings.init_scale;
    if (settings.init == InitialState::Given)
      o.given_state = domain == Domain::Primal ? settings.given_primal : settings.given_dual;
    o.lockstep = 1;  // independent schedules: the split-half estimator needs independent chains
    CovarianceErrorTracker tracker(domain, model.node_variances(), target, topt);
    const std::string stage = (label.empty() ? std::string() : label + " ") + to_string(domain);
    const double lo = domain == Domain::Primal ? 0.0 : 0.5;
    const auto sweeps = static_cast<double>(settings.sweeps);
    const EnsembleStats stats = run_ensemble(model, domain, o, [&](const Checkpoint& cp) {
      tracker.observe(cp.sweep, cp.seconds, cp.states);
      if (progress) progress(stage, lo + 0.5 * static_cast<double>(cp.sweep) / sweeps);
    });
    if (domain == Domain::Primal) {
      out.primal = tracker.history();
      out.primal_stats = stats;
    } else {
      out.dual = tracker.history();
      out.dual_stats = stats;
    }
    out.kind = tracker.kind();
  }
  out.seconds = clock.seconds();
  return out;
}

Table convergence_table(const ConvergenceCurves& c) {
  Table t({"sweep", "Eb_primal", "Eu_primal", "Eb_dual", "Eu_dual", "time_primal", "time_dual", "Eb_floor_primal",
           "Eb_floor_dual", "Eb_se_primal", "Eb_se_dual", "Eu_se_primal", "Eu_se_dual", "mean_primal", "mean_dual",
           "mean_floor_primal", "mean_floor_dual", "Eu_norm_primal", "Eu_norm_dual"});
  std::vector<double> eup, eud;
  for (const auto& e : c.primal) eup.push_back(e.Eu);
  for (const auto& e : c.dual) eud.push_back(e.Eu);
  const auto np = normalise_to_first(eup), nd = normalise_to_first(eud);
  const std::size_t rows = std::min(c.primal.size(), c.dual.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const ErrorEstimate& p = c.primal[i];
    const ErrorEstimate& d = c.dual[i];
    t.add_row({static_cast<double>(p.sweep), p.Eb, p.Eu, d.Eb, d.Eu, p.seconds, d.seconds, p.Eb_floor, d.Eb_floor,
               p.Eb_se, d.Eb_se, p.Eu_se, d.Eu_se, p.mean_norm, d.mean_norm, p.mean_floor, d.mean_floor, np[i], nd[i]});
  }
  return t;
}

std::vector<RateComparison> compare_rates(const Model& model, const ConvergenceCurves& curves,
                                          const std::string& prefix) {
  const Rates r = convergence_rates(model);
  const bool effective = std::isfinite(r.rate_dual_effective);
  const ClosedForms cf = closed_forms(model, r.lambda2_L);  // Prop. 5 at the computed lambda_2
  const double closed_p = detail::neg_log(cf.rate_primal),
               closed_d = detail::neg_log(effective ? cf.rate_dual_effective : cf.rate_dual);

  auto mean_curve = [](const std::vector<ErrorEstimate>& h) {
    std::vector<double> t;
    std::vector<detail::MeanPoint> m;
    for (const auto& e : h) {
      t.push_back(static_cast<double>(e.sweep));
      m.push_back({e.mean_norm, e.mean_floor});
    }
    RateFit f = detail::fit_mean(t, m);
    if (!f.ok() && !h.empty() && h.front().mean_norm < 1e-12)
      f.note = "the ensemble mean starts at 0 (e.g. x~ = B 1 = 0 on a torus): no decay to fit";
    return f;
  };
  std::vector<RateComparison> rows;
  RateComparison p;
  p.label = prefix + "primal";
  p.fitted_from = "Eu";
  p.predicted_by = "r_p";
  p.predicted = detail::neg_log(r.rate_primal);
  p.closed_form = closed_p;
  p.fit = detail::fit_eu(curves.primal);
  rows.push_back(p);
  RateComparison d;
  d.label = prefix + "dual x~";
  d.fitted_from = "Eu";
  d.predicted_by = effective ? "r_d^eff" : "r_d";
  d.predicted = detail::neg_log(effective ? r.rate_dual_effective : r.rate_dual);
  d.closed_form = closed_d;
  d.fit = detail::fit_eu(curves.dual);
  rows.push_back(d);
  RateComparison pm = p;
  pm.fitted_from = "mean";
  pm.fit = mean_curve(curves.primal);
  rows.push_back(pm);
  RateComparison dm = d;
  dm.fitted_from = "mean";
  dm.fit = mean_curve(curves.dual);
  rows.push_back(dm);
  return rows;
}

std::string format_rate_table(const std::vector<RateComparison>& rates) {
  std::ostringstream os;
  auto cell = [](double v, int width) {
    std::ostringstream c;
    if (std::isnan(v))
      c << std::setw(width) << "-";
    else
      c << std::setw(width) << std::setprecision(4) << v;
    return c.str();
  };
  std::size_t lw = 5;
  for (const auto& r : rates) lw = std::max(lw, r.label.size());
  os << std::left << std::setw(static_cast<int>(lw)) << "label" << std::right << "  from " << std::setw(10)
     << "predicted" << std::setw(9) << "by" << std::setw(12) << "closed form" << std::setw(11) << "fitted"
     << std::setw(10) << "window" << std::setw(10) << "rel.diff" << "   (-ln r per sweep)\n";
  // A window this short sees more than the slowest mode: flagged, with a footnote.
  constexpr std::size_t kShortWindow = 5;
  bool any_short = false;
  for (const auto& r : rates) {
    std::ostringstream win;
    if (r.fit.ok()) {
      win << static_cast<long long>(r.fit.first_sweep) << ".." << static_cast<long long>(r.fit.last_sweep);
      if (r.fit.points < kShortWindow) {
        win << "^";
        any_short = true;
      }
    } else {
      win << "none";
    }
    std::ostringstream rel;
    const double dis = r.relative_disagreement();
    if (std::isfinite(dis))
      rel << std::showpos << std::fixed << std::setprecision(1) << 100.0 * dis << "%";
    else
      rel << "-";
    os << std::left << std::setw(static_cast<int>(lw)) << r.label << std::right << "  " << std::setw(4)
       << r.fitted_from << cell(r.predicted, 11) << std::setw(9) << r.predicted_by << cell(r.closed_form, 12)
       << cell(r.fit.neg_log_rate, 11) << std::setw(10) << win.str() << std::setw(10) << rel.str() << "\n";
  }
  if (any_short)
    os << "  ^:    a window of fewer than 5 points (typically: the error met the Monte-Carlo noise floor that early);\n"
          "        modes faster than the slowest still decay inside it, so the fit need not match the slowest's -ln r\n";
  return os.str();
}

// ---- registry -----------------------------------------------------------------------------------

std::vector<std::string> experiment_names() { return {"fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "rates"}; }

std::string experiment_description(const std::string& name) {
  if (name == "fig5") return "variance conservation [eq:cov_woodbury] on the 8x8 torus from dual samples, bootstrap";
  if (name == "fig6") return "primal vs dual covariance error against sweeps and time, 10x10 torus, s=1, sigma=0.1";
  if (name == "fig7") return "band over 64 heterogeneous Watts-Strogatz graphs WS(64,4,0.3)";
  if (name == "fig8") return "scan orders (random, permutation, fixed) on the 10x10 torus";
  if (name == "fig9") return "k-regular graphs |V|=64, k in {2,4,8,16,32}: primal worse, dual better as k grows";
  if (name == "fig10") return "K5: -ln r against s/sigma, dual effective rate -> lambda_2/2 = 2.5";
  if (name == "fig11") return "100x100 torus marginal variances against the closed form [eq:torus_true_var]";
  if (name == "rates") return "spectral-rate benchmark: predicted r_p, r_d, r_d^eff beside fitted rates, all families";
  std::string known;
  for (const auto& n : experiment_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown experiment '" + name + "' (known: " + known + ")");
}

ExperimentResult run_experiment(const std::string& name, const ExperimentOptions& options) {
  if (name == "fig5") return run_fig5(options);
  if (name == "fig6") return run_fig6(options);
  if (name == "fig7") return run_fig7(options);
  if (name == "fig8") return run_fig8(options);
  if (name == "fig9") return run_fig9(options);
  if (name == "fig10") return run_fig10(options);
  if (name == "fig11") return run_fig11(options);
  if (name == "rates") return run_rates(options);
  experiment_description(name);  // throws std::invalid_argument naming the known experiments
  return {};
}

}  // namespace dualgibbs
