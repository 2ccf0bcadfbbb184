// Normalisation to sweep 0 and the Theil–Sen decay-rate fit. See rate_fits.hpp.

#include <dualgibbs/estimation/rate_fits.hpp>

#include <dualgibbs/core/number_text.hpp>
#include "estimation/estimator_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace dualgibbs {

using detail::fail;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_in_place(std::vector<double>& v) {
  const std::size_t n = v.size();
  const std::size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}

}  // namespace

std::vector<double> normalise_to_first(const std::vector<double>& values) {
  std::vector<double> out(values.size(), kNaN);
  if (values.empty()) return out;
  const double ref = values.front();
  if (ref == 0 || !std::isfinite(ref)) return out;
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i] / ref;
  return out;
}

LineFit theil_sen(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    fail("theil_sen", "x has " + std::to_string(x.size()) + " points, y has " + std::to_string(y.size()));
  if (x.size() < 2) fail("theil_sen", "need at least 2 points, got " + std::to_string(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      fail("theil_sen", "point " + std::to_string(i) + " is not finite");
  std::vector<double> slopes;
  slopes.reserve(x.size() * (x.size() - 1) / 2);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j)
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
  if (slopes.empty()) fail("theil_sen", "all x are equal");
  LineFit fit;
  fit.slope = median_in_place(slopes);
  std::vector<double> icpt(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) icpt[i] = y[i] - fit.slope * x[i];
  fit.intercept = median_in_place(icpt);
  return fit;
}

RateFit fit_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& values,
                       const std::vector<double>& noise, const RateFitOptions& options) {
  if (sweeps.size() != values.size())
    fail("fit_decay_rate",
         "got " + std::to_string(sweeps.size()) + " sweeps and " + std::to_string(values.size()) + " values");
  if (!noise.empty() && noise.size() != values.size())
    fail("fit_decay_rate",
         "got " + std::to_string(noise.size()) + " noise levels for " + std::to_string(values.size()) + " values");
  if (!(options.exponent > 0) || !std::isfinite(options.exponent))
    fail("fit_decay_rate", "exponent must be positive, got " + number_text(options.exponent));
  if (!(options.tail_fraction > 0 && options.tail_fraction <= 1))
    fail("fit_decay_rate", "tail_fraction must be in (0, 1], got " + number_text(options.tail_fraction));
  if (!(options.snr >= 0) || !std::isfinite(options.snr))
    fail("fit_decay_rate", "snr must be finite and non-negative, got " + number_text(options.snr));
  if (std::isnan(options.first_sweep)) fail("fit_decay_rate", "first_sweep is NaN");
  for (std::size_t k = 0; k < sweeps.size(); ++k)
    if (!std::isfinite(sweeps[k]))
      fail("fit_decay_rate", "sweep " + std::to_string(k) + " is " + number_text(sweeps[k]));
  for (std::size_t k = 0; k < noise.size(); ++k)
    if (!(noise[k] >= 0))
      fail("fit_decay_rate",
           "noise level " + std::to_string(k) + " = " + number_text(noise[k]) + " must be non-negative");
  RateFit fit;
  const std::size_t n = values.size();
  // Noise level: given per point, or estimated from the tail (median |value| of the last fifth, >= 3 points).
  std::vector<double> level(n, 0.0);
  if (!noise.empty()) {
    level = noise;
  } else if (n > 0) {
    const std::size_t tail = std::min(n, std::max<std::size_t>(3, n / 5));
    std::vector<double> t;
    for (std::size_t i = n - tail; i < n; ++i) t.push_back(std::abs(values[i]));
    std::fill(level.begin(), level.end(), median_in_place(t));
  }
  std::size_t start = 0;
  while (start < n && !(sweeps[start] >= options.first_sweep)) ++start;
  std::vector<double> x, y;
  std::size_t i = start;
  for (; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v) || v <= 0 || v <= options.snr * level[i]) break;
    x.push_back(sweeps[i]);
    y.push_back(std::log(v));
  }
  if (x.size() < std::max<std::size_t>(2, options.min_points)) {
    std::ostringstream os;
    os << "only " << x.size() << " point(s) above " << options.snr << " x noise from sweep " << options.first_sweep;
    fit.note = os.str();
    return fit;
  }
  if (options.tail_fraction < 1) {
    const auto keep = std::max<std::size_t>(
        std::max<std::size_t>(2, options.min_points),
        static_cast<std::size_t>(std::ceil(options.tail_fraction * static_cast<double>(x.size()))));
    if (keep < x.size()) {
      x.erase(x.begin(), x.end() - static_cast<std::ptrdiff_t>(keep));
      y.erase(y.begin(), y.end() - static_cast<std::ptrdiff_t>(keep));
    }
  }
  const LineFit line = theil_sen(x, y);
  fit.neg_log_rate = -line.slope / options.exponent;
  fit.rate = std::exp(-fit.neg_log_rate);
  fit.first_sweep = x.front();
  fit.last_sweep = x.back();
  fit.points = x.size();
  return fit;
}

}  // namespace dualgibbs
