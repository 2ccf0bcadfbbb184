// `reproduce accuracy`: time_to_accuracy() (experiments/marginals.hpp) on the figure's graphs (paper/figures.hpp).
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/experiments/marginals.hpp>
#include <dualgibbs/paper/figures.hpp>

#include "paper/figure_support.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

ExperimentResult run_accuracy(const ExperimentOptions& opt) {
  const detail::FigureSpec spec(
      "accuracy", "Time to accuracy of the marginal variances: CPU seconds (one thread) to a relative RMSE, per method",
      std::nullopt, {}, {});
  return detail::run_figure(spec, opt, [&](detail::FigureRun& run) {
    ExperimentResult& res = run.res;
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
    s.methods = {MarginalMethod::Exact,    MarginalMethod::Primal,   MarginalMethod::Dual, MarginalMethod::DualCv,
                 MarginalMethod::PrimalCv, MarginalMethod::Cholesky, MarginalMethod::Rbmc, MarginalMethod::RbmcGibbs,
                 MarginalMethod::Probing,  MarginalMethod::Auto};
    s.cheby_ssor = {MarginalMethod::Primal};
    s.targets = opt.quick ? std::vector<double>{0.05} : std::vector<double>{0.01, 0.001};
    s.replicates = opt.quick ? 2 : 5;
    s.budget_seconds = opt.quick ? 2 : 60;
    s.seed = opt.seed;
    s.group = opt.group;
    std::string graphs;
    for (const AccuracyCase& g : s.graphs)
      graphs +=
          (graphs.empty() ? "" : "; ") + g.spec + " s=" + number_text(g.s, 4) + " sigma=" + number_text(g.sigma, 4);
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
  });
}

}  // namespace dualgibbs
