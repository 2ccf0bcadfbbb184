#pragma once
/// \file rate_fits.hpp
/// Rate fits: the paper's normalisation of an error curve to sweep 0, and a robust (Theil–Sen) fit of its
/// geometric decay rate over the window where it is clearly above its Monte-Carlo noise.

#include <dualgibbs/export.hpp>

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace dualgibbs {

/// Divides every value by the first one (the paper's normalisation to sweep 0). If the first value is 0
/// or not finite the values are returned as NaN (there is no scale to normalise to).
/// \param values the curve
/// \return the normalised curve, values[0] = 1
DUALGIBBS_EXPORT std::vector<double> normalise_to_first(const std::vector<double>& values);

/// Theil–Sen line fit: the slope is the median of the pairwise slopes (y_j - y_i)/(x_j - x_i), i < j,
/// x_i != x_j; the intercept is the median of y_i - slope x_i. Robust to up to 29% outliers. O(n^2 log n).
struct LineFit {
  double slope = std::numeric_limits<double>::quiet_NaN();      ///< median pairwise slope
  double intercept = std::numeric_limits<double>::quiet_NaN();  ///< median of y_i - slope x_i
};
/// Theil–Sen line fit of y against x (see LineFit).
/// \param x the abscissae
/// \param y the values, one per abscissa
/// \return the slope and intercept
/// \throws std::invalid_argument if sizes differ, fewer than 2 points, or no two distinct x.
DUALGIBBS_EXPORT LineFit theil_sen(const std::vector<double>& x, const std::vector<double>& y);

/// Options of fit_decay_rate().
struct RateFitOptions {
  /// The curve decays like r^(exponent * sweep): 2 for squared errors (Eb, Eu: the paper's convention,
  /// -ln r = -slope / 2), 1 for norms such as the ensemble mean.
  double exponent = 2.0;
  /// The window starts at the first point with sweep >= first_sweep (1 skips the initial state).
  double first_sweep = 1.0;
  /// The window ends just before the first point whose value is <= snr * noise (or <= 0): past it the
  /// curve is lost in Monte-Carlo noise and has stopped decaying geometrically.
  double snr = 3.0;
  /// Fewer points than this in the window: no fit (NaN).
  std::size_t min_points = 3;
  /// Fit only the last fraction of the clean window (in (0, 1]; 1 = all of it). Use 0.5 to measure the
  /// asymptotic rate of a curve whose early sweeps still carry faster modes (e.g. the mean from a random
  /// initial vector); the window keeps at least min_points points.
  double tail_fraction = 1.0;
};

/// A fitted geometric decay rate.
struct RateFit {
  double neg_log_rate = std::numeric_limits<double>::quiet_NaN();  ///< -ln r per sweep
  double rate = std::numeric_limits<double>::quiet_NaN();          ///< r = exp(-neg_log_rate)
  double first_sweep = std::numeric_limits<double>::quiet_NaN();   ///< window [first_sweep, last_sweep]
  double last_sweep = std::numeric_limits<double>::quiet_NaN();    ///< end of the window
  std::size_t points = 0;                                          ///< points in the window
  std::string note;                                                ///< why there is no fit, if there is none
  /// \return true if there is a fit (points in the window and a finite rate)
  bool ok() const noexcept { return points > 0 && neg_log_rate == neg_log_rate; }
};

/// Robust decay-rate fit: Theil–Sen slope of ln(value) against sweep over the clean geometric window,
/// returning -ln r = -slope / exponent.
///
/// Window rule (documented, not tuned per figure): start at the first sweep >= options.first_sweep; end
/// before the first point where the curve is no longer clearly above its Monte-Carlo noise, i.e.
/// value <= snr * noise (noise: the split-half standard error Eu_se, or mean_floor for the mean). If
/// `noise` is empty the noise level is estimated from the tail as the median |value| of the last fifth
/// of the points (at least 3). Points with value <= 0 end the window. With tail_fraction < 1 only the
/// last part of that window is fitted.
/// \param sweeps the curve's sweeps
/// \param values the curve, one value per sweep
/// \param noise the Monte-Carlo noise level per sweep, or empty to estimate it from the tail
/// \param options the window rule and the exponent
/// \return the rate, its window, or a note why there is no fit
/// \throws std::invalid_argument if sizes differ, a sweep is not finite, a noise level is negative or NaN,
/// or an option is out of range (exponent not positive, tail_fraction outside (0, 1], snr negative or not
/// finite, first_sweep NaN). Empty input is no fit (a note, NaN rate).
DUALGIBBS_EXPORT RateFit fit_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& values,
                                        const std::vector<double>& noise, const RateFitOptions& options = {});

}  // namespace dualgibbs
