// Time to accuracy at full sizes: for each graph and method of `dualgibbs
// marginals`, the CPU time (one thread) to reach a relative RMSE of 1% and of 0.1% of all marginal variances, the
// error measured against the exact values (selected inversion) over independent replicates, each method's own
// error estimate beside it; the exact solve's CPU time is the baseline measured in the same run. The table is
// dualgibbs::time_to_accuracy's (docs/accuracy.md); `dualgibbs reproduce accuracy` runs the small graphs with a plot.
//
// Usage: bench_accuracy [--quick] [--replicates R] [--budget SECONDS] [--only SPEC] [--methods a,b,...]
//                       [--targets t1,t2] [--cheby-ssor a,b|none]  (primal methods also run with the cheby-ssor
//                       scheme, columns M_cheby_ssor_*; default primal)
// Output: CSV on stdout (label column `graph`, then nodes, edges, s, sigma, target, truth_cpu_seconds and per
// method M: M_cpu_seconds, M_reached, M_achieved_rel_rmse, M_estimated_rel_se, M_degree), then `# note:` lines
// for every cell that failed or did not reach its target within the budget (default 600 s, quick 20 s).
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/experiments/marginals.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(
      argc, argv,
      "bench_accuracy [--quick] [--replicates R] [--budget SECONDS] [--only SPEC] "
      "[--methods primal,dual,dual-cv,primal-cv,cholesky,rbmc,rbmc-gibbs,probing,auto] [--targets 0.01,0.001] "
      "[--cheby-ssor primal,primal-cv|none]");
  const bool quick = args.flag("--quick");
  const long long replicates_arg = args.integer("--replicates", 0);
  const int replicates = replicates_arg ? static_cast<int>(std::max<long long>(2, replicates_arg)) : 0;
  const double budget = args.number("--budget", 0);
  const std::string only = args.text("--only", ""), methods_arg = args.text("--methods", "");
  const std::string targets_arg = args.text("--targets", ""), cheby_arg = args.text("--cheby-ssor", "primal");
  args.finish();
  AccuracySettings s;
  s.replicates = replicates ? replicates : (quick ? 3 : 10);
  s.budget_seconds = budget > 0 ? budget : (quick ? 20 : 600);
  // The benchmark's graphs: fig6's torus, fig11's torus at 10^4 and 10^6 nodes, two expanders (CHOLMOD's
  // factor fills in: kregular:100000,32 needs 51 GiB and is refused with its size), a 3-D lattice, and a dense
  // graph with s/sigma = 10.
  const std::vector<AccuracyCase> all = {
      {"torus:10", 1, 0.1},          {"torus:100", 1, 0.25},          {"torus:1000", 1, 0.25},
      {"kregular:10000,4", 1, 0.25}, {"kregular:100000,32", 1, 0.25}, {"torus3:50", 1, 0.25},
      {"complete:50", 1, 0.1}};
  const std::vector<AccuracyCase> small = {{"torus:10", 1, 0.1}, {"kregular:64,4", 1, 0.25}, {"complete:50", 1, 0.1}};
  for (const AccuracyCase& g : quick ? small : all)
    if (only.empty() || only == g.spec) s.graphs.push_back(g);
  if (s.graphs.empty() && !only.empty()) s.graphs.push_back({only, 1, 0.25});
  s.methods = {MarginalMethod::Exact};
  try {  // a bad method name is bad input: exit 2 with the parser's message
    for (const std::string& m : split(
             methods_arg.empty() ? "primal,dual,dual-cv,primal-cv,cholesky,rbmc,rbmc-gibbs,probing,auto" : methods_arg))
      s.methods.push_back(parse_marginal_method(m));
    if (cheby_arg != "none")
      for (const std::string& m : split(cheby_arg)) s.cheby_ssor.push_back(parse_marginal_method(m));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_accuracy: %s\n", e.what());
    return 2;
  }
  s.targets.clear();
  for (const std::string& t : split(targets_arg.empty() ? (quick ? "0.01" : "0.01,0.001") : targets_arg))
    s.targets.push_back(std::atof(t.c_str()));
  std::printf("# bench_accuracy: one thread, %d replicates, budget %g s per run\n", s.replicates, s.budget_seconds);
  bench::print_machine_comment();
  std::vector<std::string> notes;
  try {
    const Table table = time_to_accuracy(s, notes, [](const std::string& stage, double) {
      std::fprintf(stderr, "bench_accuracy: %s\n", stage.c_str());
    });
    table.write_csv(std::cout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_accuracy: %s\n", e.what());
    return 2;
  }
  for (const std::string& n : notes) std::cout << "# note: " << n << "\n";
  return 0;
}
