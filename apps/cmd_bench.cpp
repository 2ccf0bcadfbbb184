// dualgibbs bench: sampler throughput of one configuration, as nanoseconds per chain-update (best of --repeat
// runs). For the full grid of the speed figures with their baseline, see bench/bench_sampler.cpp.
#include "cli.hpp"

#include <dualgibbs/api/bench.hpp>

#include <iostream>
#include <string>

namespace dualgibbs::cli {
namespace {

struct BenchCliOptions {
  api::BenchOptions b;
  unsigned threads = 1;
  bool json = false;
};

int run_bench(const CommonOptions& common, const BenchCliOptions& bo) {
  api::Execution ex;
  ex.threads = bo.threads;
  ex.group = common.group;
  const api::BenchResult r = api::bench(common, bo.b, ex);
  const nlohmann::json& j = r.record;
  if (bo.json) {
    print_json(j);
    return 0;
  }
  const EnsembleOptions& o = r.ensemble;
  const SchemeOptions& scheme = r.scheme;
  std::cout << "model: " << r.summary << "\n"
            << "  " << j["domain"].get<std::string>() << " domain, " << to_string(o.scan) << " scan, " << o.chains
            << " chains (" << o.lockstep << " per lock-step block, widest " << r.widest_block << "), " << o.threads
            << " thread(s), " << o.sweeps << " sweeps, best of " << bo.b.repeat << "\n"
            << "  scheme                " << to_string(scheme.kind)
            << (scheme.kind != SchemeKind::Gibbs ? ", omega " + std::to_string(scheme.omega) : std::string()) << ", "
            << r.per_sweep << " site updates per iteration\n"
            << "  ns per chain-update   " << r.best.ns_per_update << "   (CPU time per update " << r.best_cpu_ns
            << " ns)\n"
            << "  updates per second    " << j["updates_per_second"].get<double>() << "\n"
            << "  load average          " << j["load_average"].get<std::string>() << "\n"
            << "  CPU                   " << j["cpu"].get<std::string>() << "\n";
  return 0;
}

std::function<int()> setup_bench(CLI::App& app, CommonOptions& common) {
  app.description("sampler throughput: nanoseconds per chain-update of one configuration");
  static BenchCliOptions opt;
  api::BenchOptions& b = opt.b;
  app.add_option("--domain", b.domain, "primal or dual")->capture_default_str();
  app.add_option("--scan", b.scheme.scan,
                 "random, permutation, fixed or colored (one chain's colour classes on --threads threads)")
      ->capture_default_str();
  add_scheme_options(app, b.scheme);
  add_count(app, "--chains", b.chains, "number of chains (0: 2 x lockstep x threads: two full blocks per thread)")
      ->capture_default_str();
  add_count(app, "--sweeps", b.sweeps, "sweeps per run (0: about 5e7 updates)")->capture_default_str();
  add_count(app, "--threads", opt.threads, "threads (0 = the cores this process may use)")->capture_default_str();
  add_count(app, "--lockstep", b.lockstep, "chains per shared-schedule block: 1, 2, 4, 8 or 16")->capture_default_str();
  add_count(app, "--repeat", b.repeat, "runs; the best is reported")->capture_default_str();
  app.add_flag("--json", opt.json,
               "machine-readable output: ns_per_update (per site update), updates_per_second, cpu_ns_per_update,\n"
               "site_updates_per_iteration, domain, scan, scheme, chains, threads, lockstep, graph, ...");
  return [&common]() { return run_bench(common, opt); };
}

const Registration reg{{"bench", setup_bench}};

}  // namespace
}  // namespace dualgibbs::cli
