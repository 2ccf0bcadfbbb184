#pragma once
// Private: the decay-rate fits every experiment shares (-ln r, the ensemble-mean curve, the split-half error).
// Exported for dualgibbs::paper (the paper's figures), which is built with the library; the header is not installed.
#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/truth/closed_forms.hpp>

#include <Eigen/Core>

#include <optional>
#include <vector>

namespace dualgibbs::detail {

/// -ln r of a rate r in (0, 1]; NaN for NaN.
DUALGIBBS_EXPORT double neg_log(double r);
/// -ln r of a closed-form rate; NaN where none applies.
DUALGIBBS_EXPORT double neg_log(const std::optional<ClosedForm>& r);

/// Norm of the ensemble mean and its noise level ||m1 - m2|| / 2 from the two halves of the columns.
struct MeanPoint {
  double norm = 0;
  double floor = 0;
};
DUALGIBBS_EXPORT MeanPoint mean_point(const Eigen::Ref<const Eigen::MatrixXd>& states);

/// fit_decay_rate() on the mean curve (exponent 1, last half of the clean window).
DUALGIBBS_EXPORT RateFit fit_mean(const std::vector<double>& sweeps, const std::vector<MeanPoint>& points);

/// fit_decay_rate() on Eu (exponent 2, whole clean window, noise Eu_se) of one domain's history.
DUALGIBBS_EXPORT RateFit fit_eu(const std::vector<ErrorEstimate>& history);

}  // namespace dualgibbs::detail
