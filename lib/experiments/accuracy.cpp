// Time to accuracy (accuracy issue, item 3): every method of estimate_marginal_variances() against selected
// inversion, CPU time to a relative-RMSE target, the achieved error beside the method's own estimate. Behind
// `dualgibbs reproduce accuracy` and bench/bench_accuracy.
#include <dualgibbs/experiments/marginals.hpp>

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "experiments/figure_support.hpp"
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

ExperimentResult run_accuracy(const ExperimentOptions& opt) {
  const detail::Stopwatch total;
  ExperimentResult res = detail::start_figure(
      "accuracy", "Time to accuracy of the marginal variances: CPU seconds (one thread) to a relative RMSE, per method",
      opt);
  if (opt.as_published || opt.init || opt.init_value || opt.init_scale)
    res.notes.push_back(
        "the accuracy benchmark has no published counterpart and sets its own starts: the preset and the start "
        "overrides do not change it.");
  AccuracySettings s;
  s.graphs = {{"torus:10", 1, 0.1}, {"kregular:64,4", 1, 0.25}};
  if (!opt.quick) {
    s.graphs.push_back({"torus:30", 1, 0.25});
    s.graphs.push_back({"complete:50", 1, 0.1});
    s.graphs.push_back({"torus:100", 1, 0.25});
    s.graphs.push_back({"kregular:10000,4", 1, 0.25});
    s.graphs.push_back({"torus3:20", 1, 0.25});
  }
  s.methods = {MarginalMethod::Exact,  MarginalMethod::Primal,   MarginalMethod::Dual,
               MarginalMethod::DualCv, MarginalMethod::PrimalCv, MarginalMethod::Cholesky};
  s.cheby_ssor = {MarginalMethod::Primal};
  s.targets = opt.quick ? std::vector<double>{0.05} : std::vector<double>{0.01, 0.001};
  s.replicates = opt.quick ? 2 : 5;
  s.budget_seconds = opt.quick ? 2 : 60;
  s.seed = opt.seed;
  s.group = opt.group;
  std::string graphs;
  for (const AccuracyCase& g : s.graphs)
    graphs += (graphs.empty() ? "" : "; ") + g.spec + " s=" + number_text(g.s, 4) + " sigma=" + number_text(g.sigma, 4);
  res.parameters.emplace_back("graphs", graphs);
  res.parameters.emplace_back("targets", opt.quick ? "0.05" : "0.01, 0.001");
  res.parameters.emplace_back("replicates", std::to_string(s.replicates));
  res.parameters.emplace_back("budget_seconds", number_text(s.budget_seconds, 4));
  res.parameters.emplace_back("threads", "1 (the table's times are CPU seconds of one thread; --threads is ignored)");
  res.table = time_to_accuracy(s, res.notes, opt.progress);
  // Headline: the control variate's speed-up over plain primal Gibbs at the first target, on each graph where both
  // reached it in every replicate, and the worst achieved error over its target (the honesty of the stopping rule).
  const std::size_t cpu_p = res.table.column_index("primal_cpu_seconds");
  const std::size_t cpu_cv = res.table.column_index("dual_cv_cpu_seconds");
  const std::size_t tgt = res.table.column_index("target");
  const std::size_t ok_p = res.table.column_index("primal_reached");
  const std::size_t ok_cv = res.table.column_index("dual_cv_reached");
  const std::size_t ach = res.table.column_index("dual_cv_achieved_rel_rmse");
  const std::size_t cpu_ch = res.table.column_index("primal_cheby_ssor_cpu_seconds");
  const std::size_t ok_ch = res.table.column_index("primal_cheby_ssor_reached");
  double worst_honesty = 0;
  for (std::size_t r = 0; r < res.table.num_rows(); ++r) {
    const std::vector<double>& row = res.table.rows()[r];
    if (row[tgt] == s.targets.front() && row[ok_p] == 1 && row[ok_cv] == 1 && row[cpu_cv] > 0)
      res.summary.emplace_back("speedup_dual_cv_over_primal_" + res.table.labels()[r], row[cpu_p] / row[cpu_cv]);
    if (row[tgt] == s.targets.front() && row[ok_p] == 1 && row[ok_ch] == 1 && row[cpu_ch] > 0)
      res.summary.emplace_back("speedup_primal_cheby_ssor_over_primal_" + res.table.labels()[r],
                               row[cpu_p] / row[cpu_ch]);
    if (std::isfinite(row[ach])) worst_honesty = std::max(worst_honesty, row[ach] / row[tgt]);
  }
  res.summary.emplace_back("dual_cv_worst_achieved_over_target", worst_honesty);
  return detail::finish(std::move(res), total);
}

}  // namespace dualgibbs
