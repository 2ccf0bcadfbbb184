// Benchmark of the spectral module: lambda_2(L) of the N x N torus (shift-invert: one sparse Cholesky factor of
// the grounded Laplacian) and of a random k-regular graph (matrix-free Lanczos), each timed end to end through
// the public algebraic_connectivity() with Auto, with the accuracy against an independent reference:
//  - torus: Table I's closed form 4 sin^2(pi/N);
//  - k-regular: a second method written here, the plain three-term Lanczos recurrence without restarts or
//    reorthogonalization (Paige: its extreme Ritz values are reliable), from another start vector.
// The torus run is also broken into its steps (symbolic analysis, numeric factorization, one solve), with the
// peak memory each adds. Baselines from the same run: one Laplacian matrix-vector product of the same graph (so
// every time is also a count of matvecs), and the dense eigensolver on a 30 x 30 torus.
// Optionally (--rates) the three problems of `dualgibbs info`, convergence_rates(), on the same graphs.
//
// Usage: bench_spectral [--side N=1000] [--nodes n=100000] [--degree k=32] [--rates]
// CSV on stdout (lines starting with '#' are context).
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "harness.hpp"

#include <Eigen/Eigenvalues>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

// VmRSS or VmHWM of this process in MB, from /proc/self/status.
double proc_status_mb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t len = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, len, key) == 0) return std::stod(line.substr(len + 1)) / 1024.0;
  return NAN;
}

struct Step {
  double seconds, cpu_seconds, peak_extra_mb;
};
// Wall time, CPU time (on a loaded machine the wall time is mostly waiting) and the peak memory f adds above
// the resident set at its start.
template <class F>
Step measure(F&& f) {
  malloc_trim(0);
  { std::ofstream("/proc/self/clear_refs") << "5"; }  // reset VmHWM
  const double rss0 = proc_status_mb("VmRSS:");
  const bench::Stopwatch clock;  // CPU: the whole process (all threads)
  f();
  return {clock.seconds(), clock.cpu_seconds(), proc_status_mb("VmHWM:") - rss0};
}

// y = L x on the graph's adjacency (the operation matrix-free Lanczos repeats).
void laplacian_product(const Graph& g, const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  const auto& off = g.incidence_offsets();
  const auto& nb = g.incidence_neighbors();
  for (Index v = 0; v < g.num_nodes(); ++v) {
    double acc = static_cast<double>(off[v + 1] - off[v]) * x[v];
    for (Index p = off[v]; p < off[v + 1]; ++p) acc -= x[nb[p]];
    y[v] = acc;
  }
}

// Median time of one Laplacian matvec over `reps` repetitions.
double matvec_seconds(const Graph& g, int reps) {
  Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(g.num_nodes(), -1.0, 1.0), y(g.num_nodes());
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const bench::Stopwatch clock;
    laplacian_product(g, x, y);
    t.push_back(clock.seconds());
    x.swap(y);
    x /= x.norm();
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}

// The reference for the k-regular graph: plain Lanczos on L restricted to the complement of the constant vector
// (projected out of every new vector), no restart, no reorthogonalization; the smallest Ritz value of the tridiagonal
// matrix is checked every 25 steps and accepted when it has moved by less than 1e-13 relative over the last 100 steps
// and Paige's residual bound beta_j |s_j| is below 1e-9 of it.
struct PlainLanczos {
  double value;
  int steps;
  double residual_bound;
};
PlainLanczos plain_lanczos_lambda2(const Graph& g, std::uint64_t seed, int max_steps) {
  const Index n = g.num_nodes();
  std::mt19937_64 rng(seed);
  Eigen::VectorXd v(n), v_prev = Eigen::VectorXd::Zero(n), w(n);
  for (Index i = 0; i < n; ++i) v[i] = static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5;
  v.array() -= v.mean();
  v /= v.norm();
  std::vector<double> alpha, beta;
  double beta_prev = 0.0, last = NAN;
  int stable_since = 0;
  for (int j = 1; j <= max_steps; ++j) {
    laplacian_product(g, v, w);
    w -= beta_prev * v_prev;
    const double a = w.dot(v);
    w -= a * v;
    w.array() -= w.mean();  // after the update: a constant component left in w would grow by a/b every step
    const double b = w.norm();
    alpha.push_back(a);
    beta.push_back(b);
    v_prev.swap(v);
    v = w / b;
    beta_prev = b;
    if (j % 25 != 0) continue;
    Eigen::VectorXd diag = Eigen::Map<Eigen::VectorXd>(alpha.data(), j);
    Eigen::VectorXd sub = Eigen::Map<Eigen::VectorXd>(beta.data(), j - 1);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
    es.computeFromTridiagonal(diag, sub, Eigen::ComputeEigenvectors);
    const double theta = es.eigenvalues()[0];
    const double bound = std::abs(b * es.eigenvectors()(j - 1, 0));
    if (std::abs(theta - last) > 1e-13 * theta) stable_since = j;
    last = theta;
    if (j - stable_since >= 100 && bound <= 1e-9 * theta) return {theta, j, bound};
  }
  return {NAN, max_steps, NAN};
}

void row(const std::string& c, const std::string& step, const Step& t, double value, double reference,
         double baseline_seconds) {
  const double rel = std::isfinite(reference) ? std::abs(value - reference) / std::abs(reference) : NAN;
  std::printf("%s,%s,%.4f,%.4f,%.1f,%.17g,%.17g,%.3g,%.1f\n", c.c_str(), step.c_str(), t.seconds, t.cpu_seconds,
              t.peak_extra_mb, value, reference, rel, t.seconds / baseline_seconds);
}

// The three rates of the graph at s = 1, sigma = 0.25, timed, the dual one against Prop. 4's closed form.
void rates_row(const std::string& c, const Graph& g, double baseline_seconds) {
  Rates r;
  const Step t = measure([&] { r = convergence_rates(Model(g, 1.0, 0.25)); });
  row(c, "convergence_rates_s1_sigma0.25", t, r.rate_dual, prop4_dual_rate(1.0, 0.25, g.num_edges()), baseline_seconds);
  std::printf("# convergence_rates: lambda_2 %.2f s (%s), primal %.2f s (%s), dual %.2f s (%s)\n", r.seconds_lambda2,
              to_string(r.method_lambda2), r.seconds_primal, to_string(r.method_primal), r.seconds_dual,
              to_string(r.method_dual));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // line-buffered: progress is visible when piped
  bench::Args args(argc, argv, "bench_spectral [--side N] [--nodes n] [--degree k] [--rates]");
  const auto side = static_cast<Index>(args.integer("--side", 1000, 1, 1 << 20));
  const auto nodes = static_cast<Index>(args.integer("--nodes", 100000, 1, 1 << 30));
  const auto degree = static_cast<Index>(args.integer("--degree", 32, 1, 1 << 20));
  const bool rates = args.flag("--rates");
  args.finish();
  std::printf("# bench_spectral: lambda_2(L) at scale\n");
  bench::print_machine_comment();
  std::printf("case,step,seconds,cpu_seconds,peak_extra_mb,value,reference,relative_error,seconds_in_matvecs\n");

  // Baseline 1: the dense eigensolver on a 30 x 30 torus.
  {
    const Graph small = make_torus(30, 30);
    double l2 = 0;
    const Step s = measure([&] { l2 = algebraic_connectivity(small, SpectralMethod::Dense); });
    std::printf("# baseline: dense SelfAdjointEigenSolver, 900 x 900 Laplacian: %.3f s\n", s.seconds);
    row("torus:30", "dense", s, l2, lambda2_torus(30, 30), matvec_seconds(small, 51));
  }

  // ---- the N x N torus: shift-invert ------------------------------------------------------------------
  {
    const Graph g = make_torus(side, side);
    const std::string c = "torus:" + std::to_string(side);
    const double mv = matvec_seconds(g, 21);
    std::printf("# baseline: one Laplacian matvec of %s: %.5f s\n", c.c_str(), mv);
    const double reference = lambda2_torus(side, side);
    std::printf("# Auto chooses %s for %s\n", to_string(choose_spectral_method(g, g.num_nodes())), c.c_str());

    // The steps of the shift-invert method's factorization, through the public CholeskyFactor (the same CHOLMOD
    // wrapper, AMD ordering): the Laplacian grounded at node 0, as algebraic_connectivity does at a node of
    // largest degree (every node of the torus has degree 4). The grounded edges keep their entries as zeros.
    std::vector<Eigen::Triplet<double, int>> t;
    for (Index v = 0; v < g.num_nodes(); ++v) t.emplace_back(v, v, v == 0 ? 1.0 : 0.0);
    for (const Edge& e : g.edges()) {
      const bool grounded = e.head == 0 || e.tail == 0;
      t.emplace_back(e.head, e.tail, grounded ? 0.0 : -1.0);
      t.emplace_back(e.tail, e.head, grounded ? 0.0 : -1.0);
      if (e.head != 0) t.emplace_back(e.head, e.head, 1.0);
      if (e.tail != 0) t.emplace_back(e.tail, e.tail, 1.0);
    }
    SparseMatrix grounded(g.num_nodes(), g.num_nodes());
    grounded.setFromTriplets(t.begin(), t.end());
    grounded.makeCompressed();
    std::unique_ptr<CholeskyFactor> chol = std::make_unique<CholeskyFactor>(Ordering::Amd);
    const Step analyze = measure([&] { chol->analyze(grounded); });
    std::printf("# symbolic analysis (AMD): nnz(L) = %.4g, %.4g flops\n", chol->stats().nnz_L, chol->stats().flops);
    row(c, "analyze", analyze, NAN, NAN, mv);
    const Step factorize = measure([&] { chol->factorize(grounded); });
    row(c, "factorize", factorize, NAN, NAN, mv);
    Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(g.num_nodes(), -1.0, 1.0), x;
    b[0] = 0.0;
    const Step solve = measure([&] { x = chol->solve(b); });
    row(c, "one_solve", solve, NAN, NAN, mv);
    chol.reset();

    double l2 = 0;
    const Step total = measure([&] { l2 = algebraic_connectivity(g); });
    row(c, "algebraic_connectivity_auto", total, l2, reference, mv);
    std::printf(
        "# %s: lambda_2 = %.17g, 4 sin^2(pi/N) = %.17g, relative error %.2g (target <= 1e-6), %.2f s "
        "(target <= 10 s)\n",
        c.c_str(), l2, reference, std::abs(l2 - reference) / reference, total.seconds);
    if (rates) rates_row(c, g, mv);
  }

  // ---- the random k-regular graph: matrix-free Lanczos ------------------------------------------------
  {
    const std::string c = "kregular:" + std::to_string(nodes) + "," + std::to_string(degree);
    const Graph g = load_graph(c).graph;  // seed 1, as `dualgibbs info --graph kregular:N,K`
    const double mv = matvec_seconds(g, 21);
    std::printf("# baseline: one Laplacian matvec of %s: %.5f s\n", c.c_str(), mv);
    SpectralMethod chosen = SpectralMethod::Auto;
    const Step choose = measure([&] { chosen = choose_spectral_method(g, g.num_nodes()); });
    std::printf("# Auto chooses %s for %s (decided in %.3f s)\n", to_string(chosen), c.c_str(), choose.seconds);

    double l2 = 0;
    const Step total = measure([&] { l2 = algebraic_connectivity(g); });
    PlainLanczos second{};
    const Step check = measure([&] { second = plain_lanczos_lambda2(g, 20240601, 20000); });
    row(c, "algebraic_connectivity_auto", total, l2, second.value, mv);
    row(c, "plain_lanczos_reference", check, second.value, l2, mv);
    std::printf(
        "# %s: lambda_2 = %.17g; plain Lanczos (%d steps, residual bound %.2g) %.17g; relative difference "
        "%.2g (target <= 1e-6); %.2f s (target <= 10 s); Friedman's limit k - 2 sqrt(k - 1) = %.6g\n",
        c.c_str(), l2, second.steps, second.residual_bound, second.value, std::abs(l2 - second.value) / l2,
        total.seconds, lambda2_random_regular_asymptotic(degree));
    if (rates) rates_row(c, g, mv);
  }
  return 0;
}
