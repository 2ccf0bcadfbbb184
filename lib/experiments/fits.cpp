// Decay-rate fits of the experiments and the predicted-versus-fitted rate comparisons (fits.hpp,
// experiments.hpp).
#include "experiments/fits.hpp"

#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace dualgibbs {

namespace detail {

double neg_log(double r) { return std::isnan(r) ? r : -std::log(r); }

double neg_log(const std::optional<ClosedForm>& r) { return r ? neg_log(r->value) : std::nan(""); }

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
  if (curves.dual.empty()) {  // a model without a dual: the primal alone
    RateComparison pm = p;
    pm.fitted_from = "mean";
    pm.fit = mean_curve(curves.primal);
    rows.push_back(pm);
    return rows;
  }
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

namespace {
// The predicted factor per sweep (iteration) of an accelerated scheme; NaN for Gibbs.
double scheme_rate(const SchemeOptions& s) {
  if (s.kind == SchemeKind::ChebyshevSsor) return chebyshev_ssor_rate(s.spectrum);
  if (s.kind == SchemeKind::Ssor && std::isfinite(s.spectrum.lambda_min)) return ssor_rate(s.spectrum);
  return std::nan("");
}
}  // namespace

void predict_scheme_rates(std::vector<RateComparison>& rows, const SchemeOptions& primal, const SchemeOptions& dual) {
  for (auto& row : rows) {
    const bool is_dual = row.label.find("dual") != std::string::npos;
    const SchemeOptions& s = is_dual ? dual : primal;
    if (s.kind == SchemeKind::Gibbs) continue;
    row.predicted_by = to_string(s.kind);
    row.predicted = detail::neg_log(scheme_rate(s));
    row.closed_form = std::nan("");
  }
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
     << std::setw(10) << "window" << std::setw(10) << "rel.diff"
     << "   (-ln r per sweep)\n";
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
    os << std::left << std::setw(static_cast<int>(lw)) << r.label << std::right << "  " << std::setw(4) << r.fitted_from
       << cell(r.predicted, 11) << std::setw(9) << r.predicted_by << cell(r.closed_form, 12)
       << cell(r.fit.neg_log_rate, 11) << std::setw(10) << win.str() << std::setw(10) << rel.str() << "\n";
  }
  if (any_short)
    os << "  ^:    a window of fewer than 5 points (typically: the error met the Monte-Carlo noise floor that early);\n"
          "        modes faster than the slowest still decay inside it, so the fit need not match the slowest's -ln "
          "r\n";
  return os.str();
}

}  // namespace dualgibbs
