// dualgibbs bench: sampler throughput of one configuration, as nanoseconds per chain-update (best of --repeat
// runs). For the full grid of the figures with their baseline, see bench/bench_sampler.cpp.
#include "cli.hpp"
#include "mpi_session.hpp"

#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs::cli {
namespace {

struct BenchOptions {
  std::string domain = "dual";
  std::string scan = "random";
  std::size_t chains = 0;  // 0: two full lock-step blocks per thread (one in each half of the chains)
  std::size_t sweeps = 0;  // 0: enough for about 5e7 updates
  unsigned threads = 1;
  std::size_t lockstep = 16;
  int repeat = 3;
  bool json = false;
  SchemeCli scheme;
};

int run_bench(const CommonOptions& common, const BenchOptions& bo) {
  const Domain domain = parse_domain(bo.domain);
  if (bo.repeat < 1) throw std::invalid_argument("bench: --repeat must be at least 1");
  common.refuse_obs_file("bench", "throughput does not depend on the mean");
  const Model model = common.model();
  const Index n = model.dimension(domain);
  if (n < 1) throw std::invalid_argument(std::string("bench: the ") + to_string(domain) + " domain has no coordinates");
  const SchemeOptions scheme = resolve_scheme(bo.scheme, bo.scan, bo.threads, model, domain, "bench");
  const std::size_t per_sweep = site_updates_per_sweep(scheme, n);
  EnsembleOptions o;
  o.scan = parse_scan(bo.scan);
  o.seed = common.seed;
  o.threads = bo.threads ? bo.threads : available_threads();
  o.lockstep = bo.lockstep;
  // A block never spans the two halves of the chains (split-half estimates), so full-width blocks need
  // 2 x lockstep chains per thread.
  o.chains = bo.chains ? bo.chains : 2 * o.lockstep * o.threads;
  o.sweeps = bo.sweeps ? bo.sweeps : std::max<std::size_t>(1, static_cast<std::size_t>(5e7) / (o.chains * per_sweep));
  o.checkpoint_every = o.sweeps;
  const std::string load_before = load_average();
  EnsembleStats best{};
  best.ns_per_update = 0;
  double best_cpu = 0;
  for (int r = 0; r < bo.repeat; ++r) {
    const EnsembleStats st = run_ensemble(model, domain, o, Observer(), scheme);
    const double cpu_ns = st.updates ? st.cpu_seconds * 1e9 / static_cast<double>(st.updates) : 0.0;
    if (r == 0 || st.ns_per_update < best.ns_per_update) best = st;
    if (r == 0 || cpu_ns < best_cpu) best_cpu = cpu_ns;
  }
  nlohmann::json j;
  j["graph"] = common.graph;
  j["nodes"] = model.num_nodes();
  j["edges"] = model.num_edges();
  j["domain"] = to_string(domain);
  j["scan"] = scheme.kind == SchemeKind::Colored ? "colored" : to_string(o.scan);
  j["scheme"] = scheme.kind == SchemeKind::Colored ? "gibbs" : to_string(scheme.kind);
  if (scheme.kind == SchemeKind::Colored) j["threads_per_chain"] = scheme.threads;
  if (scheme.kind != SchemeKind::Gibbs) j["omega"] = scheme.omega;
  j["site_updates_per_iteration"] = per_sweep;  // one iteration = one sweep of the scheme
  j["chains"] = o.chains;
  j["threads"] = o.threads;
  j["mpi_ranks"] = mpi_ranks();  // threads are per rank; ns_per_update is the slowest rank's time / all updates
  j["lockstep"] = o.lockstep;
  int widest = 0;
  for (const auto& block : lockstep_blocks(o.chains, o.lockstep)) widest = std::max(widest, block.second);
  j["widest_block"] = widest;  // chains actually advanced in lock-step (less than lockstep for few chains)
  j["sweeps"] = o.sweeps;
  j["repeat"] = bo.repeat;
  j["updates"] = best.updates;
  j["seconds"] = best.seconds;
  j["ns_per_update"] = best.ns_per_update;
  j["updates_per_second"] = best.ns_per_update > 0 ? 1e9 / best.ns_per_update : 0.0;
  j["cpu_ns_per_update"] = best_cpu;
  j["load_average"] = load_before;
  j["cpu"] = cpu_description();  // speed claims name the CPU
  if (bo.json) {
    print_json(j);
    return 0;
  }
  std::cout << "model: " << model.summary() << "\n"
            << "  " << to_string(domain) << " domain, " << to_string(o.scan) << " scan, " << o.chains << " chains ("
            << o.lockstep << " per lock-step block, widest " << widest << "), " << o.threads << " thread(s), "
            << o.sweeps << " sweeps, best of " << bo.repeat << "\n"
            << "  scheme                " << to_string(scheme.kind)
            << (scheme.kind != SchemeKind::Gibbs ? ", omega " + std::to_string(scheme.omega) : std::string()) << ", "
            << per_sweep << " site updates per iteration\n"
            << "  ns per chain-update   " << best.ns_per_update << "   (CPU time per update " << best_cpu << " ns)\n"
            << "  updates per second    " << j["updates_per_second"].get<double>() << "\n"
            << "  load average          " << load_before << "\n"
            << "  CPU                   " << j["cpu"].get<std::string>() << "\n";
  return 0;
}

std::function<int()> setup_bench(CLI::App& app, CommonOptions& common) {
  app.description("sampler throughput: nanoseconds per chain-update of one configuration");
  static BenchOptions opt;
  app.add_option("--domain", opt.domain, "primal or dual")->capture_default_str();
  app.add_option("--scan", opt.scan,
                 "random, permutation, fixed or colored (one chain's colour classes on --threads threads)")
      ->capture_default_str();
  add_scheme_options(app, opt.scheme);
  add_count(app, "--chains", opt.chains,
            "number of chains (default: 2 x lockstep x threads: two full blocks per thread)");
  add_count(app, "--sweeps", opt.sweeps, "sweeps per run (default: about 5e7 updates)");
  add_count(app, "--threads", opt.threads, "threads (0 = the cores this process may use)")->capture_default_str();
  add_count(app, "--lockstep", opt.lockstep, "chains per shared-schedule block: 1, 2, 4, 8 or 16")
      ->capture_default_str();
  add_count(app, "--repeat", opt.repeat, "runs; the best is reported")->capture_default_str();
  app.add_flag("--json", opt.json,
               "machine-readable output: ns_per_update (per site update), updates_per_second, cpu_ns_per_update,\n"
               "site_updates_per_iteration, domain, scan, scheme, chains, threads, lockstep, graph, ...");
  return [&common]() { return run_bench(common, opt); };
}

const Registration reg{{"bench", setup_bench}};

}  // namespace
}  // namespace dualgibbs::cli
