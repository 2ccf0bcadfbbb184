// Sampler throughput: nanoseconds per chain-update of run_ensemble for primal and dual, on the 100x100 and
// 1000x1000 tori and a random 32-regular graph on 1000 nodes; random and fixed scan; 1 and 2 threads; two
// independent chains per thread (lockstep 1) or two lock-step blocks of 8 or 16 chains per thread (a block never spans
// the two halves of the chains, so 2 x lockstep chains per thread give full-width blocks). Every row carries a plain
// baseline measured in the same process: one chain, std::mt19937_64 + std::normal_distribution +
// std::uniform_int_distribution, the CSR update on the explicit precision (Q, or R for the dual), so each figure is
// also a ratio. ns_per_update is wall time per chain-update (all threads together); cpu_ns_per_update is the CPU
// time the sampling threads spent per update, which stays meaningful when other work shares the machine.
//
// Usage: bench_sampler [--quick] [--repeat N] [--only torus100|torus1000|kregular32] [--paths]
// Output: CSV on stdout (one row per configuration), then the speed targets with PASS/MISS. The CPU model is
// printed first: figures from different CPUs of the same kind differ (Intel vs AMD Zen 4).
// --paths: instead, every combination of the deviate path (NormalStream) and the update path (run_updates) on
// the 100x100 torus, one thread, random scan, lockstep 1, 8 and 16, rounds interleaved so that load drift hits
// every combination alike; each row is also a ratio to the paths "auto" picks on this CPU.
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace dualgibbs;

namespace {

// The plain baseline: one chain, standard-library randomness, the textbook CSR update
// z_i <- -(1/M_ii) sum_{j != i} M_ij z_j + M_ii^{-1/2} eps on the explicit precision. Returns ns per update.
double baseline_ns(const SparseMatrix& M, ScanOrder scan, std::size_t min_updates) {
  const int n = static_cast<int>(M.rows());
  const int* outer = M.outerIndexPtr();
  const int* inner = M.innerIndexPtr();
  const double* val = M.valuePtr();
  std::vector<double> z(static_cast<std::size_t>(n), 1.0);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, n - 1);
  const std::size_t sweeps = std::max<std::size_t>(1, min_updates / static_cast<std::size_t>(n));
  const bench::Stopwatch clock;
  for (std::size_t s = 0; s < sweeps; ++s)
    for (int t = 0; t < n; ++t) {
      const int i = scan == ScanOrder::Random ? pick(rng) : t;
      double sum = 0, diag = 1;
      for (int p = outer[i]; p < outer[i + 1]; ++p) {
        if (inner[p] == i)
          diag = val[p];
        else
          sum += val[p] * z[static_cast<std::size_t>(inner[p])];
      }
      z[static_cast<std::size_t>(i)] = -sum / diag + normal(rng) / std::sqrt(diag);
    }
  const double sec = clock.seconds();
  volatile double sink = z[0];
  (void)sink;
  return sec * 1e9 / static_cast<double>(sweeps * static_cast<std::size_t>(n));
}

// One ensemble run of about `updates` chain-updates per thread: two full lock-step blocks per thread.
EnsembleStats timed_run(const Model& model, Domain domain, ScanOrder scan, unsigned threads, std::size_t lockstep,
                        std::size_t updates) {
  EnsembleOptions o;
  o.chains = 2 * threads * lockstep;  // two full blocks per thread (a block never spans the halves)
  o.sweeps =
      std::max<std::size_t>(1, updates * threads / (o.chains * static_cast<std::size_t>(model.dimension(domain))));
  o.checkpoint_every = o.sweeps;
  o.scan = scan;
  o.threads = threads;
  o.lockstep = lockstep;
  return run_ensemble(model, domain, o, Observer());
}

// --paths: every (deviate path, update path) pair, interleaved rounds, best of `repeat`.
int compare_paths(int repeat, bool quick) {
  const Model model(make_torus(100, 100), 1.0, 0.25);
  const std::size_t updates = quick ? 5000000u : 20000000u;
  std::printf("domain,lockstep,normal_path,update_path,ns_per_update,ratio_to_auto\n");
  for (Domain domain : {Domain::Dual, Domain::Primal})
    for (std::size_t lockstep : {std::size_t{1}, std::size_t{8}, std::size_t{16}}) {
      std::map<std::pair<std::string, std::string>, double> best;
      for (int r = 0; r < repeat; ++r)
        for (const char* np : {"auto", "avx512", "avx2", "scalar"})
          for (const char* up : {"auto", "avx512", "avx2", "scalar"}) {
            if ((std::strcmp(np, "auto") == 0) != (std::strcmp(up, "auto") == 0)) continue;
            const char* n_now = detail::select_normal_path(np);
            const char* u_now = detail::select_update_path(up);
            if (!n_now || !u_now) continue;  // not supported on this CPU
            const std::string key_n = std::strcmp(np, "auto") == 0 ? "auto" : n_now;
            const std::string key_u = std::strcmp(up, "auto") == 0 ? "auto" : u_now;
            const double v = timed_run(model, domain, ScanOrder::Random, 1, lockstep, updates).ns_per_update;
            auto [it, fresh] = best.try_emplace({key_n, key_u}, v);
            if (!fresh) it->second = std::min(it->second, v);
          }
      detail::select_normal_path("auto");
      detail::select_update_path("auto");
      const double automatic = best[{"auto", "auto"}];
      for (const auto& [k, v] : best)
        std::printf("%s,%zu,%s,%s,%.3f,%.3f\n", to_string(domain), lockstep, k.first.c_str(), k.second.c_str(), v,
                    v / automatic);
      std::fflush(stdout);
    }
  std::printf("# auto picks here: deviates %s, updates %s; load average at end: %s\n",
              detail::select_normal_path("auto"), detail::select_update_path("auto"), load_average().c_str());
  return 0;
}

struct Config {
  std::string graph;
  Domain domain;
  ScanOrder scan;
  unsigned threads;
  std::size_t lockstep;
};

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_sampler [--quick] [--repeat N] [--only torus100|torus1000|kregular32] [--paths]");
  const bool quick = args.flag("--quick"), paths = args.flag("--paths");
  const int repeat = static_cast<int>(std::max<long long>(1, args.integer("--repeat", 3)));
  const std::string only = args.text("--only", "");
  args.finish();
  std::printf("# CPU: %s\n", cpu_description().c_str());
  if (paths) return compare_paths(repeat, quick);
  std::printf("# bench_sampler: ns per chain-update (best of %d); load average at start: %s\n", repeat,
              load_average().c_str());
  std::printf(
      "# reference: the paper's numba kernels, 100x100 torus, ns per update: dual 24, primal 46 (Intel; "
      "1000x1000: dual 77, primal 983); dual 25, primal 47 (AMD EPYC Zen 4)\n");
  std::printf(
      "graph,domain,scan,threads,lockstep,chains,ns_per_update,cpu_ns_per_update,updates_per_second,"
      "baseline_ns,speedup_vs_baseline\n");

  struct GraphSpec {
    std::string name;
    Graph (*make)();
    std::size_t updates;  // per measurement, per thread
  };
  const std::vector<GraphSpec> graphs = {
      {"torus100", [] { return make_torus(100, 100); }, quick ? 20000000u : 100000000u},
      {"torus1000", [] { return make_torus(1000, 1000); }, quick ? 64000000u : 128000000u},
      {"kregular32", [] { return make_random_regular(1000, 32, 1); }, quick ? 10000000u : 50000000u},
  };

  std::map<std::tuple<std::string, int, int, unsigned, std::size_t>, double> results, cpu_results;
  for (const GraphSpec& gs : graphs) {
    if (!only.empty() && only != gs.name) continue;
    const Model model(gs.make(), 1.0, 0.25);
    for (Domain domain : {Domain::Primal, Domain::Dual}) {
      const SparseMatrix M = model.precision(domain);
      for (ScanOrder scan : {ScanOrder::Random, ScanOrder::Fixed}) {
        double base = 1e300;
        for (int r = 0; r < repeat; ++r) base = std::min(base, baseline_ns(M, scan, gs.updates / 8));
        for (std::size_t lockstep : {std::size_t{1}, std::size_t{8}, std::size_t{16}})
          for (unsigned threads : {1u, 2u}) {
            double best = 1e300, best_cpu = 1e300;
            std::size_t chains = 0;
            for (int r = 0; r < repeat; ++r) {
              const EnsembleStats st = timed_run(model, domain, scan, threads, lockstep, gs.updates);
              chains = 2 * threads * lockstep;
              best = std::min(best, st.ns_per_update);
              best_cpu = std::min(best_cpu, st.cpu_seconds * 1e9 / static_cast<double>(st.updates));
            }
            results[{gs.name, static_cast<int>(domain), static_cast<int>(scan), threads, lockstep}] = best;
            cpu_results[{gs.name, static_cast<int>(domain), static_cast<int>(scan), threads, lockstep}] = best_cpu;
            std::printf("%s,%s,%s,%u,%zu,%zu,%.3f,%.3f,%.4g,%.3f,%.2f\n", gs.name.c_str(), to_string(domain),
                        to_string(scan), threads, lockstep, chains, best, best_cpu, 1e9 / best, base, base / best);
            std::fflush(stdout);
          }
      }
    }
  }

  // The targets: one thread, random scan, at the best lock-step width (8 or 16) and with independent
  // chains (lockstep 1).
  std::printf("# targets: one thread, random scan (wall; cpu in brackets)\n");
  auto get = [&](const std::string& g, Domain d, ScanOrder s, unsigned t, std::size_t l) {
    auto it = results.find({g, static_cast<int>(d), static_cast<int>(s), t, l});
    return it == results.end() ? -1.0 : it->second;
  };
  auto get_cpu = [&](const std::string& g, Domain d, ScanOrder s, unsigned t, std::size_t l) {
    auto it = cpu_results.find({g, static_cast<int>(d), static_cast<int>(s), t, l});
    return it == cpu_results.end() ? -1.0 : it->second;
  };
  struct Target {
    const char* graph;
    Domain domain;
    bool best_width;  // best of lockstep 8 and 16, else lockstep 1
    double ns;
  };
  for (const Target& t :
       {Target{"torus100", Domain::Dual, true, 2.5}, Target{"torus100", Domain::Primal, true, 3.0},
        Target{"torus100", Domain::Dual, false, 3.5}, Target{"torus100", Domain::Primal, false, 4.0},
        Target{"torus1000", Domain::Dual, false, 10.0}, Target{"torus1000", Domain::Primal, false, 12.0}}) {
    std::size_t l = 1;
    if (t.best_width)
      l = get(t.graph, t.domain, ScanOrder::Random, 1, 8) <= get(t.graph, t.domain, ScanOrder::Random, 1, 16) ? 8 : 16;
    const double v = get(t.graph, t.domain, ScanOrder::Random, 1, l);
    if (v < 0) continue;
    std::printf("# %-10s %-6s %.2f ns [cpu %.2f] with lockstep %2zu (target <= %.1f): %s\n", t.graph,
                to_string(t.domain), v, get_cpu(t.graph, t.domain, ScanOrder::Random, 1, l), l, t.ns,
                v <= t.ns ? "PASS" : "MISS");
  }
  std::printf("# 2-thread throughput / 1-thread (target >= 1.85 in every configuration):\n");
  for (const auto& [key, v] : results) {
    const auto& [g, d, s, threads, l] = key;
    if (threads != 2) continue;
    const double one = get(g, static_cast<Domain>(d), static_cast<ScanOrder>(s), 1, l);
    std::printf("#   %-10s %-6s %-6s lockstep %2zu: %.2fx\n", g.c_str(), to_string(static_cast<Domain>(d)),
                to_string(static_cast<ScanOrder>(s)), l, one / v);
  }
  std::printf("# load average at end: %s\n", load_average().c_str());
  return 0;
}
