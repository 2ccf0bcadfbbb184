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

#include "harness.hpp"
#include "support/models.hpp"
#include "support/references.hpp"

#include <Eigen/Dense>

#include <malloc.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;
using testing::heterogeneous_torus;
using testing::worst_against_solves;

namespace {

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
  const bench::Stopwatch clock;
  f();
  const double s = clock.seconds();
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

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_exact [N=1000] [orderings=amd,metis,nesdis,auto]");
  const std::string n_text = args.positional(0, "1000"), orderings_text = args.positional(1, "amd,metis,nesdis,auto");
  args.finish();
  char* end = nullptr;
  const long n_value = std::strtol(n_text.c_str(), &end, 10);
  if (end == n_text.c_str() || *end != '\0' || n_value < 3 || n_value > 46340)
    args.fail("N must be a whole number in [3, 46340], not '" + n_text + "'");
  const auto n = static_cast<Index>(n_value);
  std::vector<Ordering> orderings;
  try {
    std::stringstream ss(orderings_text);
    for (std::string o; std::getline(ss, o, ',');) orderings.push_back(parse_ordering(o));
  } catch (const std::exception& e) {
    args.fail(e.what());
  }
  bench::print_machine_comment();
  std::cout << "# BLAS: " << blas_library() << "\n"
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
    note << "max rel diff vs 20 solves=" << worst_against_solves(CholeskyFactor(q), r.var, 20, 5);
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
    note << "max rel diff vs 20 solves=" << worst_against_solves(CholeskyFactor(r), run.var, 20, 5);
    row(name, "amd", "total", Step{total, 0, proc_status_mb("VmRSS:")}, note.str());
  }
  return 0;
}
