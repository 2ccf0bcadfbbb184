// Time to accuracy: for each graph and method of `dualgibbs marginals`, the CPU time (one thread) to reach a
// relative RMSE of 1% and of 0.1% of all marginal variances, with the error measured against the exact values
// (selected inversion) over independent replicates, and each method's own error estimate beside the measured one.
// The baseline of every row is the same graph's exact solve (selected inversion) timed in the same run.
//
// Usage: bench_accuracy [--quick] [--replicates R] [--budget SECONDS] [--only SPEC] [--methods a,b,...]
// Output: CSV on stdout, one row per (graph, method, target): graph, nodes, method, target, replicates, reached,
//   cpu_seconds_median, achieved_rel_rmse, estimated_rel_se, achieved_over_target, exact_cpu_seconds, note.
// A method that does not reach the target within the budget (default 600 s, quick 20 s) is reported as such.
#include <dualgibbs/experiments/marginals.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/truth/exact.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct GraphCase {
  std::string spec;
  double s, sigma;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int replicates = 0;
  double budget = 0;
  std::string only, methods_arg;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[a], "--replicates") && a + 1 < argc)
      replicates = std::max(2, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--budget") && a + 1 < argc)
      budget = std::atof(argv[++a]);
    else if (!std::strcmp(argv[a], "--only") && a + 1 < argc)
      only = argv[++a];
    else if (!std::strcmp(argv[a], "--methods") && a + 1 < argc)
      methods_arg = argv[++a];
    else {
      std::fprintf(stderr,
                   "usage: bench_accuracy [--quick] [--replicates R] [--budget SECONDS] [--only SPEC] "
                   "[--methods primal,dual,dual-cv,primal-cv,cholesky]\n");
      return 2;
    }
  }
  if (replicates == 0) replicates = quick ? 5 : 20;
  if (budget <= 0) budget = quick ? 20 : 600;
  std::vector<GraphCase> graphs = {{"torus:10", 1, 0.1}, {"kregular:64,4", 1, 0.25}, {"complete:50", 1, 0.1}};
  if (!quick) {
    graphs.push_back({"torus:100", 1, 0.25});
    graphs.push_back({"kregular:10000,4", 1, 0.25});
    graphs.push_back({"torus:1000", 1, 0.25});
    graphs.push_back({"kregular:100000,32", 1, 0.25});
  }
  std::vector<MarginalMethod> methods;
  for (const std::string& m : split(methods_arg.empty() ? "primal,dual,dual-cv,primal-cv,cholesky" : methods_arg))
    methods.push_back(parse_marginal_method(m));
  const std::vector<double> targets = quick ? std::vector<double>{0.01} : std::vector<double>{0.01, 0.001};

  std::printf("# bench_accuracy: one thread, %d replicates, budget %.0f s per run\n", replicates, budget);
  std::printf(
      "graph,nodes,method,target,replicates,reached,cpu_seconds_median,achieved_rel_rmse,estimated_rel_se,"
      "achieved_over_target,exact_cpu_seconds,note\n");
  for (const GraphCase& gc : graphs) {
    if (!only.empty() && only != gc.spec) continue;
    const Model model = load_model(gc.spec, gc.s, gc.sigma);
    double exact_cpu = 0;
    Eigen::VectorXd truth;
    std::string exact_note;
    try {
      const double c0 = cpu_now();
      truth = marginal_variances(model, Domain::Primal);
      exact_cpu = cpu_now() - c0;
    } catch (const std::exception& e) {
      exact_note = std::string("exact failed: ") + e.what();
    }
    std::printf("%s,%d,exact,0,1,%d,%.4g,0,0,0,%.4g,%s\n", gc.spec.c_str(), model.num_nodes(), truth.size() ? 1 : 0,
                exact_cpu, exact_cpu, exact_note.c_str());
    std::fflush(stdout);
    if (truth.size() == 0) continue;
    for (MarginalMethod method : methods)
      for (double target : targets) {
        std::vector<double> cpu;
        double sum_sq = 0, sum_est = 0;
        int reached = 0;
        std::string note;
        for (int r = 0; r < replicates; ++r) {
          MarginalOptions o;
          o.method = method;
          o.rel_rmse = target;
          o.seconds = budget;
          o.threads = 1;
          o.seed = 1000 + static_cast<std::uint64_t>(r);
          const double c0 = cpu_now();
          try {
            const MarginalResult res = estimate_marginal_variances(model, o);
            cpu.push_back(cpu_now() - c0);
            reached += res.reached_target;
            sum_sq += ((res.estimate - truth).array() / truth.array()).square().mean();
            sum_est += res.rel_se_rms * res.rel_se_rms;
            if (!res.reached_target) {
              note = "not reached within " + std::to_string(static_cast<int>(budget)) + " s";
              break;  // one replicate that cannot reach it in the budget says enough
            }
          } catch (const std::exception& e) {
            note = std::string("failed: ") + e.what();
            break;
          }
        }
        const int done = static_cast<int>(cpu.size());
        std::sort(cpu.begin(), cpu.end());
        const double median = done ? cpu[static_cast<std::size_t>(done / 2)] : std::nan("");
        const double achieved = done ? std::sqrt(sum_sq / done) : std::nan("");
        std::printf("%s,%d,%s,%g,%d,%d,%.4g,%.3g,%.3g,%.3g,%.4g,%s\n", gc.spec.c_str(), model.num_nodes(),
                    to_string(method), target, done, reached, median, achieved,
                    done ? std::sqrt(sum_est / done) : std::nan(""), achieved / target, exact_cpu, note.c_str());
        std::fflush(stdout);
      }
  }
  return 0;
}
