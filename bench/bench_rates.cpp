// Benchmark of the paper's experiments:
//  1. the moment accumulation of one checkpoint (10^4 chains, |V| = 100, full covariance, two halves,
//     jackknife) against the baseline of a naive per-chain rank-1 update, in the same run;
//  2. fig6 and fig11 at the paper's full scale, end to end (targets on this 2-core machine: <= 15 s each);
//  3. the spectral-rate benchmark (`dualgibbs reproduce rates`): predicted r_p, r_d, r_d^eff beside the
//     rates fitted from the samplers, with the relative disagreement.
// Usage: bench_rates [--quick] [--skip-accumulation] [--skip-figures] [--skip-rates]
// Prints a human-readable report and one JSON line per part (prefix "json: ").
#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/paper/figures.hpp>

#include "harness.hpp"

#include <Eigen/Core>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace dualgibbs;

namespace {

/// Baseline: what a straightforward implementation does at a checkpoint - per half, one pass of rank-1
/// updates x x^T chain by chain (lower triangle, plain loops), then the covariance, the Woodbury
/// reconstruction is skipped (it is O(dim^2)), Eu and Eb.
double naive_checkpoint(const Eigen::MatrixXd& x, const Eigen::MatrixXd& target) {
  const Eigen::Index d = x.rows(), L = x.cols(), half = L / 2;
  Eigen::MatrixXd c[2];
  for (int h = 0; h < 2; ++h) {
    const Eigen::Index first = h == 0 ? 0 : half, n = h == 0 ? half : L - half;
    Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
    Eigen::MatrixXd s = Eigen::MatrixXd::Zero(d, d);
    for (Eigen::Index k = first; k < first + n; ++k) {
      const double* v = x.col(k).data();
      for (Eigen::Index j = 0; j < d; ++j) {
        mean(j) += v[j];
        for (Eigen::Index i = j; i < d; ++i) s(i, j) += v[i] * v[j];
      }
    }
    mean /= static_cast<double>(n);
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index i = j; i < d; ++i) s(j, i) = s(i, j) = (s(i, j) - n * mean(i) * mean(j)) / (n - 1.0);
    c[h] = s;
  }
  return ((c[0] - target).array() * (c[1] - target).array()).sum();
}

void accumulation_benchmark(bool quick) {
  const Eigen::Index d = 100, L = 10000;
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;  // timing only: any generator will do
  Eigen::MatrixXd x(d, L);
  for (Eigen::Index j = 0; j < L; ++j)
    for (Eigen::Index i = 0; i < d; ++i) x(i, j) = normal(rng);
  const Eigen::MatrixXd target = Eigen::MatrixXd::Identity(d, d);
  const int reps = quick ? 5 : 40;
  CovarianceErrorTracker tracker(Domain::Primal, Eigen::VectorXd::Ones(d), target);
  bench::Stopwatch clock;
  for (int r = 0; r < reps; ++r) tracker.observe(0, 0, x);
  const double ours = clock.seconds() / reps;
  // The rank-k updates alone (GroupedMoments), without the scoring and the jackknife.
  std::vector<std::size_t> offsets;
  for (int k = 0; k <= 32; ++k) offsets.push_back(static_cast<std::size_t>(k * L / 32));
  clock.restart();
  for (int r = 0; r < reps; ++r) GroupedMoments gm(x, offsets, MomentKind::Full);
  const double syrk = clock.seconds() / reps;
  const int nreps = quick ? 2 : 5;
  double sink = 0;
  clock.restart();
  for (int r = 0; r < nreps; ++r) sink += naive_checkpoint(x, target);
  const double naive = clock.seconds() / nreps;
  std::cout << "1. one checkpoint, 10^4 chains x |V| = 100, full covariance of both halves\n"
            << "   ours: grouped BLAS rank-k updates + scoring + jackknife " << std::setw(8) << std::setprecision(3)
            << 1e3 * ours << " ms\n"
            << "     of which the rank-k updates (32 groups)              " << std::setw(8) << 1e3 * syrk << " ms\n"
            << "   baseline: naive per-chain rank-1 update (Eu only)      " << std::setw(8) << 1e3 * naive << " ms   ("
            << std::setprecision(3) << naive / ours << "x slower; Eu of both " << (sink != 0 ? "agree" : "?") << ")\n"
            << "   fig6 has 2 x 201 checkpoints: " << std::setprecision(3) << 402 * ours << " s with ours, "
            << 402 * naive << " s with the baseline\n\n";
  bench::JsonLine()
      .text("part", "accumulation")
      .number("ms_per_checkpoint", 1e3 * ours, "%.3g")
      .number("ms_rank_k_updates", 1e3 * syrk, "%.3g")
      .number("baseline_ms_per_checkpoint", 1e3 * naive, "%.3g")
      .machine()
      .print("json: ");
  std::cout << "\n";
}

void figure_benchmark(const std::string& name, double target_seconds) {
  ExperimentOptions o;
  const bench::Stopwatch clock;
  const ExperimentResult r = run_experiment(name, o);
  const double wall = clock.seconds(), cpu = clock.cpu_seconds();
  double sp = 0, sd = 0, acc = 0;
  for (const auto& [k, v] : r.timings) {
    if (k == "sampling_primal") sp = v;
    if (k == "sampling_dual") sd = v;
    if (k == "primal_and_dual_with_accumulation") acc = v;
  }
  std::string params;
  for (const auto& [k, v] : r.parameters)
    if (k == "graph" || k == "chains" || k == "sweeps" || k == "moments") params += k + "=" + v + " ";
  std::cout << "2. " << name << " at full scale (" << params << ")\n"
            << "   end to end " << std::setprecision(3) << wall << " s wall (" << cpu << " s CPU, "
            << std::thread::hardware_concurrency() << " hardware threads; target <= " << target_seconds
            << " s: " << (wall <= target_seconds ? "met" : "NOT met") << ")\n"
            << "   sampling primal " << sp << " s + dual " << sd << " s; accumulation and scoring " << acc - sp - sd
            << " s\n";
  std::cout << format_rate_table(r.rates) << "\n";
  bench::JsonLine()
      .text("part", name)
      .number("wall_seconds", wall, "%.3g")
      .number("cpu_seconds", cpu, "%.3g")
      .number("sampling_primal", sp, "%.3g")
      .number("sampling_dual", sd, "%.3g")
      .number("accumulation", acc - sp - sd, "%.3g")
      .number("target_seconds", target_seconds, "%.3g")
      .machine()
      .print("json: ");
  std::cout << "\n";
}

void rates_benchmark(bool quick) {
  ExperimentOptions o;
  o.quick = quick;
  const bench::Stopwatch clock;
  const ExperimentResult r = run_experiment("rates", o);
  const double wall = clock.seconds();
  std::cout << "3. spectral-rate benchmark (" << (quick ? "quick" : "full") << "): -ln r per sweep\n";
  const Table& t = r.table;
  std::cout << std::left << std::setw(32) << "graph, s/sigma" << std::right;
  for (const char* c : {"pred_p", "fit_p", "pred_d", "fit_d(y~)", "pred_eff", "fit_eff(x~)", "Eu_p/2", "Eu_d/2"})
    std::cout << std::setw(11) << c;
  std::cout << "\n";
  for (std::size_t i = 0; i < t.num_rows(); ++i) {
    std::cout << std::left << std::setw(32) << t.labels()[i] << std::right << std::setprecision(4);
    for (const char* c : {"pred_primal", "fit_primal_mean", "pred_dual", "fit_dual_mean", "pred_dual_eff",
                          "fit_dual_eff_mean", "fit_primal_Eu", "fit_dual_Eu"})
      std::cout << std::setw(11) << t.rows()[i][t.column_index(c)];
    std::cout << "\n";
  }
  for (const auto& [k, v] : r.summary) std::cout << "   " << k << " = " << v << "\n";
  std::cout << "   wall " << wall << " s\n";
  bench::JsonLine()
      .text("part", "rates")
      .number("wall_seconds", wall, "%.4g")
      .integer("rows", static_cast<long long>(t.num_rows()))
      .machine()
      .print("json: ");
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_rates [--quick] [--skip-accumulation] [--skip-figures] [--skip-rates]");
  const bool quick = args.flag("--quick");
  const bool acc = !args.flag("--skip-accumulation"), figs = !args.flag("--skip-figures");
  const bool rates = !args.flag("--skip-rates");
  args.finish();
  if (acc) accumulation_benchmark(quick);
  if (figs && !quick) {
    figure_benchmark("fig6", 15.0);
    figure_benchmark("fig11", 15.0);
  }
  if (rates) rates_benchmark(quick);
  return 0;
}
