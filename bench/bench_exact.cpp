// Benchmark of the exact module: time and peak memory of each step (analyze, factorize, selected inversion)
// for Q of the N x N torus (s = 1, sigma = 0.25) with each fill-reducing ordering, for a heterogeneous model on
// the same graph, and for the dual precision R of a smaller torus; accuracy against the closed form
// [eq:torus_true_var] and against independent solves. Baselines measured in the same run: a dense inverse of a
// 2500-node torus next to the selected inversion of the same matrix, and the factorization itself (the
// selected inversion is reported as a multiple of its factorization time).
//
// Usage: bench_exact [N=1000] [orderings=amd,metis,nesdis,auto]   (CSV on stdout, '#' lines are context)
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <Eigen/Dense>

#include <malloc.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// VmRSS or VmHWM of this process in MB, from /proc/self/status.
double proc_status_mb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return NAN;
}

// Measures one step: wall time and the peak memory it added above the resident set at its start (the peak
// high-water mark is reset through /proc/self/clear_refs before the step).
struct Step {
  double seconds, peak_extra_mb, rss_after_mb;
};
template <class F>
Step measure(F f) {
  malloc_trim(0);  // hand freed heap pages back, so that memory reused by this step counts as new
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const double rss0 = proc_status_mb("VmRSS:");
  const auto t0 = Clock::now();
  f();
  const double s = since(t0);
  return {s, proc_status_mb("VmHWM:") - rss0, proc_status_mb("VmRSS:")};
}

void row(const std::string& matrix, const std::string& ordering, const std::string& step, const Step& st,
         const std::string& note = "") {
  std::cout << matrix << ',' << ordering << ',' << step << ',' << st.seconds << ',' << st.peak_extra_mb << ','
            << st.rss_after_mb << ',' << note << std::endl;
}

// analyze, factorize, selected inversion as three measured steps of the public CholeskyFactor; returns the
// variances (original order) and the factorize / selected-inversion times. The factorize rows report CHOLMOD's
// numeric factorization alone (FactorStats::factorize_seconds; the step's memory includes the input checks).
struct Run {
  Eigen::VectorXd var;
  double factorize_seconds = 0, si_seconds = 0;
  double total_seconds = 0;  ///< analyze + factorize + selected inversion (not the extra refactorizations)
};
Run run_steps(const std::string& name, const SparseMatrix& a, Ordering ordering) {
  CholeskyFactor f(ordering);
  const Step an = measure([&] { f.analyze(a); });
  const double flops = f.stats().flops, lnz = f.stats().nnz_L;
  const std::string ord = to_string(f.stats().ordering);
  std::ostringstream note;
  note << "nnz(L)=" << lnz << " flops=" << flops;
  row(name, ord, "analyze", an, note.str());
  Step fa = measure([&] { f.factorize(a); });  // OpenBLAS limited to one thread, CholeskyFactor's default
  fa.seconds = f.stats().factorize_seconds;
  std::ostringstream note2;
  note2 << "supernodes=" << f.stats().supernodes << " stored_L=" << f.stats().stored_L
        << " GFlop/s=" << flops / fa.seconds / 1e9;
  row(name, ord, "factorize", fa, note2.str());
  // The same numeric factorization again (a refactorization: the analysis is kept), with one BLAS thread and
  // with OpenBLAS's own thread count, to show what limiting the threads costs or saves on this machine as loaded.
  for (int threads : {1, 0}) {
    f.set_blas_threads(threads);
    Step again = measure([&] { f.factorize(a); });
    again.seconds = f.stats().factorize_seconds;
    std::ostringstream n1;
    n1 << "GFlop/s=" << flops / again.seconds / 1e9;
    row(name, ord, threads > 0 ? "refactorize_1_blas_thread" : "refactorize_openblas_threads", again, n1.str());
  }
  f.set_blas_threads(1);
  Run r;
  const Step si = measure([&] { r.var = f.marginal_variances(); });
  std::ostringstream note3;
  note3 << "x factorize=" << si.seconds / fa.seconds;
  row(name, ord, "selected_inversion", si, note3.str());
  r.factorize_seconds = fa.seconds;
  r.si_seconds = si.seconds;
  r.total_seconds = an.seconds + fa.seconds + si.seconds;
  return r;
}

Model heterogeneous_torus(Index n, std::uint64_t seed) {
  Graph g = make_torus(n, n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> us(0.5, 2.0), usig(0.1, 1.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = us(rng);
  for (double& x : sigma) x = usig(rng);
  return Model(std::move(g), std::move(s), std::move(sigma));
}

// Largest relative difference between selected-inversion variances and e_i^T M^-1 e_i from CHOLMOD solves
// at `count` random coordinates (an independent path through the same factor's triangular solves).
double check_by_solves(const SparseMatrix& a, const Eigen::VectorXd& var, int count) {
  const CholeskyFactor f(a);
  std::mt19937_64 rng(5);
  double worst = 0;
  for (int k = 0; k < count; ++k) {
    const Eigen::Index i = static_cast<Eigen::Index>(rng() % static_cast<std::uint64_t>(a.rows()));
    Eigen::VectorXd e = Eigen::VectorXd::Zero(a.rows());
    e[i] = 1;
    worst = std::max(worst, std::abs(f.solve(e)[i] - var[i]) / var[i]);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const Index n = argc > 1 ? static_cast<Index>(std::stol(argv[1])) : 1000;
  std::vector<Ordering> orderings;
  {
    std::stringstream ss(argc > 2 ? argv[2] : "amd,metis,nesdis,auto");
    for (std::string o; std::getline(ss, o, ',');) orderings.push_back(parse_ordering(o));
  }
  std::cout << "# BLAS: " << blas_library() << "\n# load average at start: " << load_average() << "\n"
            << "# peak_extra_MB: peak resident memory during the step minus the resident set at its start\n"
            << "# total = analyze + factorize + selected_inversion (the refactorize rows are extra runs)\n"
            << "matrix,ordering,step,seconds,peak_extra_MB,rss_after_MB,note" << std::endl;

  // Baseline: dense inverse (Eigen LLT) of Q for a 50 x 50 torus, next to selected inversion of the same Q.
  {
    const Model m(make_torus(50, 50), 1.0, 0.25);
    const SparseMatrix q = m.primal_precision();
    Eigen::MatrixXd inv;
    const Step dense = measure([&] {
      const Eigen::MatrixXd qd(q);
      inv = qd.llt().solve(Eigen::MatrixXd::Identity(qd.rows(), qd.cols()));
    });
    row("Q torus 50x50", "-", "dense_inverse_baseline", dense);
    const Run r = run_steps("Q torus 50x50", q, Ordering::Amd);
    std::ostringstream note;
    note << "dense/selected=" << dense.seconds / r.si_seconds
         << " max|diff|=" << (r.var - inv.diagonal()).cwiseAbs().maxCoeff();
    row("Q torus 50x50", "-", "baseline_ratio", Step{0, 0, proc_status_mb("VmRSS:")}, note.str());
  }

  // The paper's torus: each ordering, accuracy against the closed form.
  const double nu = torus_marginal_variance(n, n, 1.0, 0.25);
  const std::string tname = "Q torus " + std::to_string(n) + "x" + std::to_string(n);
  for (Ordering o : orderings) {
    const Model m(make_torus(n, n), 1.0, 0.25);
    const SparseMatrix q = m.primal_precision();
    const Run r = run_steps(tname, q, o);
    std::ostringstream note;
    note.precision(17);
    note << "closed_form=" << nu << " max|error|=" << (r.var.array() - nu).abs().maxCoeff();
    row(tname, to_string(o), "total", Step{r.total_seconds, 0, proc_status_mb("VmRSS:")}, note.str());
  }

  // Heterogeneous model on the same graph (s_v in [0.5, 2], sigma_e in [0.1, 1]), the default ordering (AMD).
  {
    const Model m = heterogeneous_torus(n, 17);
    const SparseMatrix q = m.primal_precision();
    const Run r = run_steps("Q heterogeneous " + std::to_string(n) + "x" + std::to_string(n), q, Ordering::Amd);
    const double total = r.total_seconds;
    std::ostringstream note;
    note << "max rel diff vs 20 solves=" << check_by_solves(q, r.var, 20);
    row("Q heterogeneous " + std::to_string(n) + "x" + std::to_string(n), "amd", "total",
        Step{total, 0, proc_status_mb("VmRSS:")}, note.str());
  }

  // Dual precision R (edge variances) of a smaller torus, heterogeneous.
  {
    const Index nd = std::max<Index>(3, n / 2);
    const Model m = heterogeneous_torus(nd, 23);
    const SparseMatrix r = m.dual_precision();
    const std::string name = "R heterogeneous " + std::to_string(nd) + "x" + std::to_string(nd);
    const Run run = run_steps(name, r, Ordering::Amd);
    const double total = run.total_seconds;
    std::ostringstream note;
    note << "max rel diff vs 20 solves=" << check_by_solves(r, run.var, 20);
    row(name, "amd", "total", Step{total, 0, proc_status_mb("VmRSS:")}, note.str());
  }
  return 0;
}
