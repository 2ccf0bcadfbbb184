// Time to accuracy: every method of estimate_marginal_variances() against selected
// inversion, CPU time to a relative-RMSE target, the achieved error beside the method's own estimate. Behind
// `dualgibbs reproduce accuracy` and bench/bench_accuracy.
#include <dualgibbs/experiments/marginals.hpp>

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "experiments/seeds.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

std::string column_name(MarginalMethod m, bool cheby = false) {
  std::string name = std::string(to_string(m)) + (cheby ? "_cheby_ssor" : "");
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

void check(const AccuracySettings& s) {
  if (s.graphs.empty()) throw std::invalid_argument("time_to_accuracy: no graphs");
  if (s.methods.empty()) throw std::invalid_argument("time_to_accuracy: no methods");
  if (s.targets.empty()) throw std::invalid_argument("time_to_accuracy: no targets");
  for (MarginalMethod m : s.cheby_ssor)
    if (m != MarginalMethod::Primal && m != MarginalMethod::PrimalCv)
      throw std::invalid_argument(std::string("time_to_accuracy: cheby-ssor runs the primal sampler; method '") +
                                  to_string(m) + "' is not primal or primal-cv");
  for (double t : s.targets)
    if (!(t > 0 && t < 1))
      throw std::invalid_argument("time_to_accuracy: target " + std::to_string(t) + " (expected a value in (0, 1))");
  if (s.replicates < 2)
    throw std::invalid_argument("time_to_accuracy: replicates = " + std::to_string(s.replicates) +
                                " (at least 2 for an RMS over replicates)");
  if (!(s.budget_seconds > 0) || !std::isfinite(s.budget_seconds))
    throw std::invalid_argument("time_to_accuracy: the budget must be a finite number of seconds > 0");
}

// One cell: `replicates` runs of `method` to `target`, stopping at the first run that misses it.
struct Cell {
  double cpu_median = kNaN, reached = kNaN, achieved = kNaN, estimated = kNaN, degree = kNaN;
  std::string note;
};

// `scheme`: the primal sampler's scheme; `extra_cpu` (its spectrum's CPU seconds) is added to every run's time.
Cell run_cell(const Model& model, const Eigen::VectorXd& truth, MarginalMethod method, double target,
              const AccuracySettings& s, std::uint64_t cell_seed, const SchemeOptions& scheme = {},
              double extra_cpu = 0) {
  Cell c;
  std::vector<double> cpu, degrees;
  double sum_sq = 0, sum_est = 0;
  int reached = 0;
  for (int r = 0; r < s.replicates; ++r) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = target;
    o.seconds = s.budget_seconds;
    // The budget, not the sweep count, ends a run here: the default max_sweeps (10^6) stopped plain primal on
    // torus:10 at 0.1% after 10 s of its 600 s budget.
    o.max_sweeps = std::size_t{1} << 40;
    o.threads = 1;
    o.group = s.group;
    o.seed = detail::derive_seed(cell_seed, static_cast<std::uint64_t>(r));
    o.scheme = scheme;
    // Chebyshev-SSOR decorrelates within an iteration or two: evaluating every iteration costs ~1/3 of the CPU of
    // every 4 (docs/accuracy.md, "Accelerated primal chains").
    if (scheme.kind == SchemeKind::ChebyshevSsor) o.every = 1;
    const double c0 = cpu_now();
    MarginalResult res;
    try {
      res = estimate_marginal_variances(model, o);
    } catch (const std::exception& e) {
      c.note = std::string("failed: ") + e.what();
      break;
    }
    cpu.push_back(cpu_now() - c0 + extra_cpu);
    degrees.push_back(res.degree);
    reached += res.reached_target;
    if (truth.size()) sum_sq += ((res.estimate - truth).array() / truth.array()).square().mean();
    sum_est += res.rel_se_rms * res.rel_se_rms;
    if (!res.reached_target) {
      c.note = "not reached within " + number_text(s.budget_seconds, 4) + " s (" + number_text(res.rel_se_rms, 3) +
               " after " + std::to_string(res.sweeps) + " sweeps)";
      break;
    }
  }
  const auto done = cpu.size();
  if (done == 0) return c;
  std::sort(cpu.begin(), cpu.end());
  c.cpu_median = done % 2 ? cpu[done / 2] : 0.5 * (cpu[done / 2 - 1] + cpu[done / 2]);
  c.reached = static_cast<double>(reached) / static_cast<double>(done);
  c.achieved = truth.size() ? std::sqrt(sum_sq / static_cast<double>(done)) : kNaN;
  c.estimated = std::sqrt(sum_est / static_cast<double>(done));
  std::sort(degrees.begin(), degrees.end());
  c.degree = degrees[done / 2];
  return c;
}

}  // namespace

Table time_to_accuracy(const AccuracySettings& s, std::vector<std::string>& notes, const ProgressFn& progress) {
  check(s);
  std::vector<std::string> columns = {"nodes", "edges", "s", "sigma", "target", "truth_cpu_seconds"};
  const auto add_columns = [&](MarginalMethod m, bool cheby) {
    for (const char* what : {"_cpu_seconds", "_reached", "_achieved_rel_rmse", "_estimated_rel_se", "_degree"})
      columns.push_back(column_name(m, cheby) + what);
  };
  for (MarginalMethod m : s.methods) add_columns(m, false);
  for (MarginalMethod m : s.cheby_ssor) add_columns(m, true);
  Table table("graph", columns);
  const double cells =
      static_cast<double>(s.graphs.size() * s.targets.size() * (s.methods.size() + s.cheby_ssor.size()));
  double done = 0;
  for (std::size_t g = 0; g < s.graphs.size(); ++g) {
    const AccuracyCase& gc = s.graphs[g];
    const Model model = load_model(gc.spec, gc.s, gc.sigma);
    if (progress) progress(gc.spec + ": exact", done / cells);
    Eigen::VectorXd truth;
    double exact_cpu = kNaN;
    try {
      const double c0 = cpu_now();
      truth = marginal_variances(model, Domain::Primal);
      exact_cpu = cpu_now() - c0;
    } catch (const std::exception& e) {
      notes.push_back(gc.spec + ": no exact truth (" + e.what() + "); the sampling methods' errors are not measured");
    }
    SchemeOptions cheby;
    double cheby_cpu = 0;
    if (!s.cheby_ssor.empty()) {
      if (progress) progress(gc.spec + ": SSOR spectrum", done / cells);
      const double c0 = cpu_now();
      cheby.kind = SchemeKind::ChebyshevSsor;
      cheby.spectrum = default_ssor_spectrum(model.primal_precision());
      cheby.omega = cheby.spectrum.omega;
      cheby_cpu = cpu_now() - c0;
    }
    for (std::size_t t = 0; t < s.targets.size(); ++t) {
      const double target = s.targets[t];
      std::vector<double> row = {static_cast<double>(model.num_nodes()),
                                 static_cast<double>(model.num_edges()),
                                 gc.s,
                                 gc.sigma,
                                 target,
                                 exact_cpu};
      for (std::size_t m = 0; m < s.methods.size(); ++m) {
        const MarginalMethod method = s.methods[m];
        if (progress) progress(gc.spec + ": " + to_string(method) + " to " + number_text(target, 3), done / cells);
        Cell c;
        if (method == MarginalMethod::Exact) {
          c.cpu_median = exact_cpu;
          c.reached = truth.size() ? 1.0 : 0.0;
          c.achieved = c.estimated = c.degree = 0;
          if (!truth.size()) c.note = "failed (see above)";
        } else {
          c = run_cell(model, truth, method, target, s, detail::derive_seed(s.seed, 100 + g, 10 * m + t));
        }
        if (!c.note.empty())
          notes.push_back(gc.spec + ", " + to_string(method) + ", target " + number_text(target, 3) + ": " + c.note);
        row.insert(row.end(), {c.cpu_median, c.reached, c.achieved, c.estimated, c.degree});
        done += 1;
      }
      for (std::size_t m = 0; m < s.cheby_ssor.size(); ++m) {
        const MarginalMethod method = s.cheby_ssor[m];
        const std::string name = std::string(to_string(method)) + " (cheby-ssor)";
        if (progress) progress(gc.spec + ": " + name + " to " + number_text(target, 3), done / cells);
        const Cell c = run_cell(model, truth, method, target, s,
                                detail::derive_seed(s.seed, 100 + g, 1000 + 10 * m + t), cheby, cheby_cpu);
        if (!c.note.empty())
          notes.push_back(gc.spec + ", " + name + ", target " + number_text(target, 3) + ": " + c.note);
        row.insert(row.end(), {c.cpu_median, c.reached, c.achieved, c.estimated, c.degree});
        done += 1;
      }
      table.add_row(gc.spec, row);
    }
  }
  if (progress) progress("done", 1.0);
  return table;
}

}  // namespace dualgibbs
