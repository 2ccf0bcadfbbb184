#pragma once
// Private helpers shared by experiments.cpp and experiments_figures.cpp.
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/truth/closed_forms.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dualgibbs::detail {

/// Wall-clock stopwatch.
class Stopwatch {
public:
  Stopwatch() : m_start(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }

private:
  std::chrono::steady_clock::time_point m_start;
};

/// A seed for sub-run (a, b) of an experiment with master seed `seed` (splitmix64 of a mix): distinct
/// sub-runs get unrelated streams, and the whole experiment is a function of the master seed.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);

/// Text of a number for the parameter list (shortest round-trip-ish, 10 significant digits).
std::string num(double v);

/// -ln r of a rate r in (0, 1]; NaN for NaN.
double neg_log(double r);
/// -ln r of a closed-form rate; NaN where none applies.
double neg_log(const std::optional<ClosedForm>& r);

/// Draws graphs from `make(seed)` with seeds derive_seed(seed, salt, attempt) until one is connected
/// (at most 100 attempts). `attempts` receives the number of draws. \throws std::runtime_error if none is.
Graph connected_graph(const std::function<Graph(std::uint64_t)>& make, std::uint64_t seed, std::uint64_t salt,
                      int* attempts = nullptr);

/// Uniform double in [lo, hi) from a portable generator.
std::vector<double> uniform_vector(std::size_t n, double lo, double hi, std::uint64_t seed);

/// A standard normal vector (Box–Muller on a portable generator; reproducible across platforms).
Eigen::VectorXd normal_vector(Eigen::Index n, std::uint64_t seed);

/// Checks the options every experiment shares. \throws std::invalid_argument naming `name` for a chain
/// count override below kMinSplitHalfChains.
void check_options(const std::string& name, const ExperimentOptions& options);

/// Scales a progress callback into [lo, hi) of a larger task and prefixes its stage.
ProgressFn sub_progress(const ProgressFn& parent, double lo, double hi, const std::string& prefix = "");

/// Norm of the ensemble mean and its noise level ||m1 - m2|| / 2 from the two halves of the columns.
struct MeanPoint {
  double norm = 0;
  double floor = 0;
};
MeanPoint mean_point(const Eigen::Ref<const Eigen::MatrixXd>& states);

/// fit_decay_rate() on the mean curve (exponent 1, last half of the clean window).
RateFit fit_mean(const std::vector<double>& sweeps, const std::vector<MeanPoint>& points);

/// fit_decay_rate() on Eu (exponent 2, whole clean window, noise Eu_se) of one domain's history.
RateFit fit_eu(const std::vector<ErrorEstimate>& history);

}  // namespace dualgibbs::detail
