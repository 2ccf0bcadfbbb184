// The accelerated samplers' targets, measured with public headers only, each against a baseline of the
// same run. Prints one JSON object per line:
//
//  - "decay": the mean-error decay of ssor and cheby-ssor on the decay graph (default torus:100, s = 1,
//    sigma = 0.25), primal x and dual x~ = B y~: -ln r per iteration fitted from the noise-free iteration from a
//    random start (the ensemble mean of the noisy sampler follows exactly this iteration: the sampler is linear)
//    beside the prediction from the SSOR spectrum;
//  - "iat": on the decay graph, primal, the predicted autocorrelation time of the slowest mode (below) against the
//    one measured from 20000 iterations of one chain, observed through the slowest mode itself (dense, up to 2500
//    nodes) and through the node average;
//  - "cost": on the cost graph (default torus:1000), primal, one chain on one thread: wall and CPU time per
//    iteration of random-scan Gibbs, ssor and cheby-ssor (with noise), iterations to bring the mean error to 1e-6
//    of its start (cheby-ssor: measured noise-free; Gibbs: predicted from r_p of the paper, the ensemble mean's
//    rate, which the project's rate benchmark checks), and the ratios;
//  - "exact": CHOLMOD's factorization time and time per exact draw (batched, --draws right-hand sides), and
//    cheby-ssor's integrated autocorrelation time of the slowest mode (from the AR(2) recurrence of the asymptotic
//    Chebyshev weights);
//  - "per_effective_sample", one line per lock-step width W (--widths): cheby-ssor's time per iteration per chain
//    when W chains share each pass over Q, times the autocorrelation time, against CHOLMOD's CPU time per draw of
//    the same run (the target: at most that).
//
// The first line names the CPU and the load average.
//
// Usage: bench_accel [--quick] [--decay-graph SPEC] [--cost-graph SPEC] [--spectrum-graph SPEC] [--sigma S]
//                    [--omega W|optimal] [--widths 1,8,16] [--draws K] [--cost-lambda-min L]
// --spectrum-graph SPEC: compute the cost graph's SSOR spectrum on this (smaller) graph, e.g. torus:100 for
// torus:1000 (the Lanczos run for lambda_min on 10^6 nodes takes over half an hour on a loaded machine; the torus's
// slowest mode of M^-1 Q is near the constant vector and hardly depends on the size). --cost-lambda-min L > 0: use
// [L, 1] instead. --omega optimal: the relaxation of optimal_ssor_spectrum() on the spectrum graph (default: the
// decay graph). --quick: torus:30 and torus:100, for a smoke run. The machine's load changes every time; compare
// the ratios within one run. The target: build/bench/bench_accel --spectrum-graph torus:100
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "harness.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

using Clock = bench::Stopwatch;

// ||observed|| after 0, 1, 2, ... noise-free iterations from a random start, until it falls below `floor` times its
// start or after max_iterations. Primal: the state; dual: the tally x~ = B y~.
template <class Kernel, class Scheme>
std::vector<double> noise_free_decay(const Kernel& kernel, const Scheme& scheme, std::size_t max_iterations,
                                     double floor, bool tally) {
  GibbsSampler<Kernel, 1, Scheme> g(kernel, scheme, 11, 0, /*noise=*/false);
  g.set_random_state();
  std::vector<double> norms{tally ? g.tally(0).norm() : g.state(0).norm()};
  for (std::size_t k = 0; k < max_iterations && norms.back() > floor * norms.front(); ++k) {
    g.sweep();
    norms.push_back(tally ? g.tally(0).norm() : g.state(0).norm());
  }
  return norms;
}

// -ln r per iteration: least-squares slope of ln ||.|| over the last three quarters of the curve.
double fitted_rate(const std::vector<double>& norms) {
  const std::size_t first = norms.size() / 4, count = norms.size() - first;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = first; k < norms.size(); ++k) {
    const double x = static_cast<double>(k), y = std::log(norms[k]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double c = static_cast<double>(count);
  return -(c * sxy - sx * sy) / (c * sxx - sx * sx);
}

// First iteration at which the norm is at most `target` times its start (SIZE_MAX if never).
std::size_t iterations_to(const std::vector<double>& norms, double target) {
  for (std::size_t k = 0; k < norms.size(); ++k)
    if (norms[k] <= target * norms.front()) return k;
  return static_cast<std::size_t>(-1);
}

// Wall and CPU seconds per iteration of `count` noisy iterations of a lock-step block of W chains (all W together).
template <int W = 1, class Kernel, class Scheme>
std::pair<double, double> time_per_iteration(const Kernel& kernel, const Scheme& scheme, std::size_t count) {
  GibbsSampler<Kernel, W, Scheme> g(kernel, scheme, 5);
  g.set_random_state();
  g.sweep(1);  // warm-up: pages touched, caches filled
  const Clock c;
  g.sweep(count);
  return {c.seconds() / static_cast<double>(count), c.cpu_seconds() / static_cast<double>(count)};
}

// Integrated autocorrelation time (in iterations) of the AR(2) process x_{k+1} = phi1 x_k + phi2 x_{k-1} + noise.
double ar2_iat(double phi1, double phi2) {
  double r_prev = 1.0, r = phi1 / (1.0 - phi2), sum = r;
  for (int k = 2; k < 100000 && std::abs(r) > 1e-14; ++k) {
    const double next = phi1 * r + phi2 * r_prev;
    r_prev = r;
    r = next;
    sum += r;
  }
  return 1.0 + 2.0 * sum;
}

// The slowest mode's AR(2) coefficients (phi1, phi2) of a Chebyshev-SSOR sweep under the asymptotic weights
// alpha = 2 / (1 + sqrt(1 - rho^2)): x_{k+1} = alpha (1 - tau lambda_min) x_k + (1 - alpha) x_{k-1} + noise.
std::pair<double, double> slowest_mode_ar2(const ChebyshevSsorSweep& cheby) {
  const double lo = cheby.interval_min(), hi = cheby.interval_max(), tau = cheby.tau();
  const double rho = (hi - lo) / (hi + lo), alpha = 2.0 / (1.0 + std::sqrt(1.0 - rho * rho));
  return {alpha * (1.0 - tau * lo), 1.0 - alpha};
}

// Integrated autocorrelation time of a series with Sokal's automatic window (the smallest W >= 5 tau(W)), and its
// standard error tau sqrt(2 (2 W + 1) / N) (Madras and Sokal 1988).
std::pair<double, double> measured_iat(const std::vector<double>& x) {
  const std::size_t n = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  const auto autocov = [&](std::size_t lag) {
    double sum = 0;
    for (std::size_t t = 0; t + lag < n; ++t) sum += (x[t] - mean) * (x[t + lag] - mean);
    return sum / static_cast<double>(n);
  };
  const double c0 = autocov(0);
  double tau = 1.0;
  std::size_t w = 1;
  for (; w < n / 2; ++w) {
    tau += 2.0 * autocov(w) / c0;
    if (static_cast<double>(w) >= 5.0 * tau) break;
  }
  return {tau, tau * std::sqrt(2.0 * (2.0 * static_cast<double>(w) + 1.0) / static_cast<double>(n))};
}

// time_per_iteration of a block of `width` chains (1, 2, 4, 8 or 16), divided by the width: CPU and wall seconds per
// iteration per chain.
template <class Kernel, class Scheme>
std::pair<double, double> time_per_chain_iteration(const Kernel& kernel, const Scheme& scheme, std::size_t count,
                                                   int width) {
  std::pair<double, double> t;
  switch (width) {
    case 1:
      t = time_per_iteration<1>(kernel, scheme, count);
      break;
    case 2:
      t = time_per_iteration<2>(kernel, scheme, count);
      break;
    case 4:
      t = time_per_iteration<4>(kernel, scheme, count);
      break;
    case 8:
      t = time_per_iteration<8>(kernel, scheme, count);
      break;
    case 16:
      t = time_per_iteration<16>(kernel, scheme, count);
      break;
    default:
      throw std::invalid_argument("bench_accel: width " + std::to_string(width) + " is not 1, 2, 4, 8 or 16");
  }
  return {t.first / width, t.second / width};
}

// "1,8,16" -> {1, 8, 16}.
std::vector<int> parse_widths(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(std::atoi(text.substr(start, comma - start).c_str()));
    start = comma + 1;
  }
  return out;
}

// The "decay" lines: predicted vs measured -ln r per iteration of ssor and cheby-ssor on the decay graph.
void measure_decay(const std::string& decay_graph, double sigma, double omega) {
  const Model m = load_model(decay_graph, 1.0, sigma);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    const SsorSpectrum sp = ssor_spectrum(m, d, omega);
    const ChebyshevSsorSweep cheby(sp);
    std::vector<double> cheby_norms, ssor_norms;
    if (d == Domain::Primal) {
      const CsrKernel k(m.primal_precision(), SpdCheck::Cheap);
      cheby_norms = noise_free_decay(k, cheby, 400, 1e-12, false);
      ssor_norms = noise_free_decay(k, SymmetricSweep(omega), 3000, 1e-12, false);
    } else {
      const DualIncidenceKernel k(m);
      cheby_norms = noise_free_decay(k, cheby, 400, 1e-12, true);
      ssor_norms = noise_free_decay(k, SymmetricSweep(omega), 3000, 1e-12, true);
    }
    const double pc = -std::log(chebyshev_ssor_rate(sp)), fc = fitted_rate(cheby_norms);
    const double ps = -std::log(ssor_rate(sp)), fs = fitted_rate(ssor_norms);
    bench::JsonLine()
        .text("measure", "decay")
        .text("graph", decay_graph)
        .text("domain", to_string(d))
        .text("observed", d == Domain::Primal ? "x" : "x~ = B y~")
        .number("lambda_min", sp.lambda_min)
        .number("lambda_max", sp.lambda_max)
        .number("cheby_predicted_neg_log_rate", pc, "%.5g")
        .number("cheby_fitted_neg_log_rate", fc, "%.5g")
        .number("cheby_rel_diff", fc / pc - 1.0, "%.4f")
        .integer("cheby_iterations", static_cast<long long>(cheby_norms.size() - 1))
        .number("ssor_predicted_neg_log_rate", ps, "%.5g")
        .number("ssor_fitted_neg_log_rate", fs, "%.5g")
        .number("ssor_rel_diff", fs / ps - 1.0, "%.4f")
        .integer("ssor_iterations", static_cast<long long>(ssor_norms.size() - 1))
        .print();
  }
}

// The "iat" line: the autocorrelation time the per-sample cost rests on, checked on the decay graph (primal).
// The predicted IAT of the slowest mode against the one measured from a run of one chain, observed through the
// slowest mode's coefficient c = v^T M x (A v = lambda_min M v, v^T M v = 1, dense, for up to 2500 nodes) and
// through the node average (Q's smallest eigenvector on a homogeneous graph, which carries most of that mode).
void measure_iat(const std::string& decay_graph, double sigma, double omega) {
  const Model m = load_model(decay_graph, 1.0, sigma);
  const CsrKernel k(m.primal_precision(), SpdCheck::Cheap);
  const ChebyshevSsorSweep cheby(ssor_spectrum(m, Domain::Primal, omega));
  const Index n = m.num_nodes();
  Eigen::VectorXd mode;  // M v
  if (n <= 2500) {
    const Eigen::MatrixXd A = Eigen::MatrixXd(m.primal_precision());
    const Eigen::MatrixXd L = A.triangularView<Eigen::StrictlyLower>();
    const Eigen::VectorXd d = A.diagonal();
    const Eigen::MatrixXd F = Eigen::MatrixXd(d.asDiagonal()) / omega + L;
    const Eigen::MatrixXd M = omega / (2.0 - omega) * F * d.cwiseInverse().asDiagonal() * F.transpose();
    const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> es(A, M);
    mode = M * es.eigenvectors().col(0);
  }
  GibbsSampler<CsrKernel, 1, ChebyshevSsorSweep> g(k, cheby, 21);
  g.set_random_state();
  g.sweep(100);  // burn-in, far beyond the mean's 1e-12
  const std::size_t count = 20000;
  std::vector<double> average(count), slowest(count);
  for (std::size_t t = 0; t < count; ++t) {
    g.sweep();
    const Eigen::VectorXd x = g.state(0);
    average[t] = x.mean();
    slowest[t] = mode.size() ? mode.dot(x) : 0.0;
  }
  const auto [phi1, phi2] = slowest_mode_ar2(cheby);
  const auto [tau_a, se_a] = measured_iat(average);
  const auto [tau_s, se_s] = mode.size() ? measured_iat(slowest) : std::pair<double, double>{NAN, NAN};
  bench::JsonLine()
      .text("measure", "iat")
      .text("graph", decay_graph)
      .text("domain", "primal")
      .integer("iterations", static_cast<long long>(count))
      .number("predicted_iat_slowest_mode", ar2_iat(phi1, phi2), "%.4g")
      .number("measured_iat_slowest_mode", tau_s, "%.4g")
      .number("measured_iat_slowest_mode_se", se_s, "%.2g")
      .number("measured_iat_node_average", tau_a, "%.4g")
      .number("measured_iat_node_average_se", se_a, "%.2g")
      .print();
}

// The "exact" line (CHOLMOD's factorization and time per exact draw, cheby-ssor's autocorrelation time) and the
// "per_effective_sample" lines, one per lock-step width, on the cost graph's model `m` (its kernel `k`).
void measure_exact(const Model& m, const CsrKernel& k, const ChebyshevSsorSweep& cheby, const std::string& cost_graph,
                   std::size_t draws, const std::vector<int>& widths) {
  const Clock factor_clock;
  const CholeskyFactor f(m.primal_precision());
  const double factor_seconds = factor_clock.seconds(), factor_cpu = factor_clock.cpu_seconds();
  const Clock draw_clock;
  const Eigen::MatrixXd x = f.sample(draws, 3);
  const double draw_seconds = draw_clock.seconds() / static_cast<double>(draws),
               draw_cpu = draw_clock.cpu_seconds() / static_cast<double>(draws);
  // The slowest mode (eigenvalue lambda_min of M^-1 A) under the asymptotic weights alpha = 2 / (1 + sqrt(1 -
  // rho^2)): x_{k+1} = alpha (1 - tau lambda_min) x_k + (1 - alpha) x_{k-1} + noise.
  const auto [phi1, phi2] = slowest_mode_ar2(cheby);
  const double iat = ar2_iat(phi1, phi2);
  bench::JsonLine()
      .text("measure", "exact")
      .text("graph", cost_graph)
      .number("cholmod_factorize_wall", factor_seconds, "%.4g")
      .number("cholmod_factorize_cpu", factor_cpu, "%.4g")
      .number("cholmod_wall_per_draw", draw_seconds, "%.4g")
      .number("cholmod_cpu_per_draw", draw_cpu, "%.4g")
      .integer("draws", static_cast<long long>(draws))
      .number("cheby_iat_iterations", iat, "%.4g")
      .number("check", x.norm(), "%.3g")
      .print();
  // Chebyshev-SSOR per effectively independent sample, per chain, for lock-step blocks of W chains: the chains of a
  // block share each pass over Q (one row read serves W lanes) but draw their own deviates; with the fixed sweep
  // order of the scheme a lane is bit for bit the single chain of the same seed and index (test_accelerated), so
  // the W chains are independent. CHOLMOD's draws are batched (`draws` right-hand sides) in the same way.
  for (int w : widths) {
    const std::size_t count = std::max<std::size_t>(2, 40 / static_cast<std::size_t>(w));
    const auto t = time_per_chain_iteration(k, cheby, count, w);
    bench::JsonLine()
        .text("measure", "per_effective_sample")
        .text("graph", cost_graph)
        .text("scheme", "cheby-ssor")
        .integer("width", w)
        .integer("iterations_timed", static_cast<long long>(count))
        .number("cheby_wall_per_iteration_per_chain", t.first, "%.4g")
        .number("cheby_cpu_per_iteration_per_chain", t.second, "%.4g")
        .number("cheby_wall_per_effective_sample", iat * t.first, "%.4g")
        .number("cheby_cpu_per_effective_sample", iat * t.second, "%.4g")
        .number("cholmod_cpu_per_draw", draw_cpu, "%.4g")
        .number("cpu_ratio_cholmod_draw_over_cheby_effective", draw_cpu / (iat * t.second), "%.3g")
        .boolean("target_met", draw_cpu >= iat * t.second)
        .print();
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv,
                   "bench_accel [--quick] [--decay-graph SPEC] [--cost-graph SPEC] [--spectrum-graph SPEC] "
                   "[--sigma S] [--omega W|optimal] [--widths 1,8,16] [--draws K] [--cost-lambda-min L]");
  const bool quick = args.flag("--quick");
  const std::string decay_graph = args.text("--decay-graph", quick ? "torus:30" : "torus:100");
  const std::string cost_graph = args.text("--cost-graph", quick ? "torus:100" : "torus:1000");
  const std::string spectrum_graph = args.text("--spectrum-graph", "");
  const std::string omega_text = args.text("--omega", "1.5"), widths_text = args.text("--widths", "1,8,16");
  const double sigma = args.number("--sigma", 0.25);
  const auto draws = static_cast<std::size_t>(args.integer("--draws", 16, 1));
  // > 0: the cost graph's spectrum is [this, 1] (the Lanczos run for lambda_min of a 10^6-node torus takes over half
  // an hour on a loaded machine)
  const double cost_lambda_min = args.number("--cost-lambda-min", 0);
  args.finish();
  const std::vector<int> widths = parse_widths(widths_text);
  for (int w : widths)
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
      args.fail("--widths takes widths from 1, 2, 4, 8, 16, got '" + widths_text + "'");
  // The relaxation: given, or the optimum (optimal_ssor_spectrum) of the primal Q of the spectrum graph (default the
  // decay graph), which the cost graph then uses as well.
  double omega = 0;
  const std::string omega_graph = spectrum_graph.empty() ? decay_graph : spectrum_graph;
  double omega_search_seconds = 0;
  if (omega_text == "optimal") {
    const Clock c;
    omega = optimal_ssor_spectrum(load_model(omega_graph, 1.0, sigma).primal_precision()).omega;
    omega_search_seconds = c.seconds();
  } else {
    omega = std::atof(omega_text.c_str());
  }
  bench::JsonLine()
      .text("bench", "accel")
      .machine()
      .number("omega", omega)
      .text("omega_from", omega_text == "optimal" ? "optimal_ssor_spectrum(" + omega_graph + ")" : "given")
      .number("omega_search_seconds", omega_search_seconds, "%.3g")
      .number("sigma", sigma, "%g")
      .print();

  measure_decay(decay_graph, sigma, omega);
  measure_iat(decay_graph, sigma, omega);

  // ---- cost to a mean error of 1e-6, primal, one chain, one thread ----
  const Model m = load_model(cost_graph, 1.0, sigma);
  const CsrKernel k(m.primal_precision(), SpdCheck::Cheap);
  const Clock spectrum_clock;
  // The cost graph's spectrum: given as [L, 1], computed on a smaller stand-in graph (the torus's slowest mode of
  // M^-1 Q, near the constant vector, hardly depends on the size beyond ~100 x 100), or computed on the graph.
  std::string spectrum_from = cost_graph;
  SsorSpectrum sp;
  if (cost_lambda_min > 0) {
    sp = SsorSpectrum{omega, cost_lambda_min, 1.0};
    spectrum_from = "--cost-lambda-min";
  } else if (!spectrum_graph.empty()) {
    sp = ssor_spectrum(load_model(spectrum_graph, 1.0, sigma), Domain::Primal, omega);
    spectrum_from = spectrum_graph;
  } else {
    sp = ssor_spectrum(m, Domain::Primal, omega);
  }
  const double spectrum_seconds = spectrum_clock.seconds();
  const ChebyshevSsorSweep cheby(sp);
  const std::vector<double> cheby_norms = noise_free_decay(k, cheby, 400, 1e-7, false);
  const std::size_t cheby_iterations = iterations_to(cheby_norms, 1e-6);
  const double rate_p = convergence_rates(m).rate_primal;
  const double gibbs_sweeps = std::ceil(std::log(1e-6) / std::log(rate_p));
  const auto gibbs_time = time_per_iteration(k, ScanSweep(ScanOrder::Random), 5);
  const auto ssor_time = time_per_iteration(k, SymmetricSweep(omega), 5);
  const auto cheby_time = time_per_iteration(k, cheby, 5);
  const double cheby_sweep_equivalents = 2.0 * static_cast<double>(cheby_iterations);
  bench::JsonLine()
      .text("measure", "cost")
      .text("graph", cost_graph)
      .text("domain", "primal")
      .text("spectrum_from", spectrum_from)
      .number("lambda_min_used", sp.lambda_min)
      .number("lambda_max_used", sp.lambda_max)
      .number("spectrum_seconds", spectrum_seconds, "%.3g")
      .number("gibbs_rate_per_sweep", rate_p, "%.8g")
      .number("gibbs_sweeps_to_1e-6_predicted", gibbs_sweeps, "%.0f")
      .number("gibbs_wall_per_sweep", gibbs_time.first, "%.4g")
      .number("gibbs_cpu_per_sweep", gibbs_time.second, "%.4g")
      .number("ssor_wall_per_iteration", ssor_time.first, "%.4g")
      .number("ssor_cpu_per_iteration", ssor_time.second, "%.4g")
      .integer("cheby_iterations_to_1e-6_measured", static_cast<long long>(cheby_iterations))
      .number("cheby_sweep_equivalents", cheby_sweep_equivalents, "%.0f")
      .number("cheby_wall_per_iteration", cheby_time.first, "%.4g")
      .number("cheby_cpu_per_iteration", cheby_time.second, "%.4g")
      .number("sweep_ratio_gibbs_over_cheby", gibbs_sweeps / cheby_sweep_equivalents, "%.3g")
      .number("cpu_ratio_gibbs_over_cheby",
              gibbs_sweeps * gibbs_time.second / (static_cast<double>(cheby_iterations) * cheby_time.second), "%.3g")
      .number("wall_ratio_gibbs_over_cheby",
              gibbs_sweeps * gibbs_time.first / (static_cast<double>(cheby_iterations) * cheby_time.first), "%.3g")
      .print();

  measure_exact(m, k, cheby, cost_graph, draws, widths);
  return 0;
}
