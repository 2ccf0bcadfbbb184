// The bench use case (api/bench.hpp).
#include <dualgibbs/api/bench.hpp>
#include <dualgibbs/core/machine.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {
namespace {

Domain checked_domain(const BenchOptions& o) {
  const Domain domain = parse_domain(o.domain);
  if (o.repeat < 1) throw std::invalid_argument("bench: --repeat must be at least 1");
  return domain;
}

EnsembleOptions ensemble_options(const BenchOptions& b, const ModelSource& source, const Execution& execution,
                                 std::size_t per_sweep) {
  EnsembleOptions o;
  o.scan = scan_order(b.scheme.scan);
  o.seed = source.seed;
  o.threads = resolved_threads(execution);
  o.group = execution.group;
  o.lockstep = b.lockstep;
  // A block never spans the two halves of the chains (split-half estimates), so full-width blocks need
  // 2 x lockstep chains per thread.
  o.chains = b.chains ? b.chains : 2 * o.lockstep * o.threads;
  o.sweeps =
      b.sweeps ? b.sweeps : std::max<std::size_t>(1, static_cast<std::size_t>(kBenchUpdates) / (o.chains * per_sweep));
  o.checkpoint_every = o.sweeps;
  return o;
}

Record bench_record(const Model& model, const BenchResult& r, const BenchOptions& b, const ModelSource& source,
                    const Execution& execution, const std::string& load_before) {
  const SchemeOptions& scheme = r.scheme;
  const EnsembleOptions& o = r.ensemble;
  const bool colored = scheme.kind == SchemeKind::Colored;
  Record j;
  j["graph"] = source_label(source);
  j["nodes"] = model.num_nodes();
  j["edges"] = model.num_edges();
  j["domain"] = to_string(parse_domain(b.domain));
  j["scan"] = colored ? "colored" : to_string(o.scan);
  j["scheme"] = colored ? "gibbs" : to_string(scheme.kind);
  if (colored) j["threads_per_chain"] = scheme.threads;
  if (scheme.kind != SchemeKind::Gibbs) j["omega"] = scheme.omega;
  j["site_updates_per_iteration"] = r.per_sweep;  // one iteration = one sweep of the scheme
  j["chains"] = o.chains;
  j["threads"] = o.threads;
  // threads are per rank; ns_per_update is the slowest rank's time / all updates
  j["mpi_ranks"] = execution.group ? execution.group->size() : 1;
  j["lockstep"] = o.lockstep;
  j["widest_block"] = r.widest_block;  // chains actually advanced in lock-step (less than lockstep for few chains)
  j["sweeps"] = o.sweeps;
  j["repeat"] = b.repeat;
  j["updates"] = r.best.updates;
  j["seconds"] = r.best.seconds;
  j["ns_per_update"] = r.best.ns_per_update;
  j["updates_per_second"] = r.best.ns_per_update > 0 ? 1e9 / r.best.ns_per_update : 0.0;
  j["cpu_ns_per_update"] = r.best_cpu_ns;
  j["load_average"] = load_before;
  j["cpu"] = cpu_description();  // speed claims name the CPU
  return j;
}

}  // namespace

BenchResult bench(const Model& model, const BenchOptions& options, const ModelSource& source,
                  const Execution& execution) {
  const Domain domain = checked_domain(options);
  if (domain == Domain::Dual) model.require_dual("bench --domain dual");
  const Index n = model.dimension(domain);
  if (n < 1) throw std::invalid_argument(std::string("bench: the ") + to_string(domain) + " domain has no coordinates");
  BenchResult r;
  r.summary = model.summary();
  r.scheme = make_scheme(options.scheme, resolved_threads(execution), model, domain, "bench");
  r.per_sweep = site_updates_per_sweep(r.scheme, n);
  r.ensemble = ensemble_options(options, source, execution, r.per_sweep);
  const std::string load_before = load_average();
  for (int k = 0; k < options.repeat; ++k) {
    const EnsembleStats st = run_ensemble(model, domain, r.ensemble, Observer(), r.scheme);
    const double cpu_ns = st.updates ? st.cpu_seconds * 1e9 / static_cast<double>(st.updates) : 0.0;
    if (k == 0 || st.ns_per_update < r.best.ns_per_update) r.best = st;
    if (k == 0 || cpu_ns < r.best_cpu_ns) r.best_cpu_ns = cpu_ns;
  }
  // After the runs: run_ensemble() refuses a chain count whose states do not fit before this list is built.
  for (const auto& block : lockstep_blocks(r.ensemble.chains, r.ensemble.lockstep))
    r.widest_block = std::max(r.widest_block, block.second);
  r.record = bench_record(model, r, options, source, execution, load_before);
  return r;
}

BenchResult bench(const ModelSource& source, const BenchOptions& options, const Execution& execution) {
  (void)checked_domain(options);
  if (source.obs_file)
    throw std::invalid_argument("bench: --obs-file does not apply: throughput does not depend on the mean");
  return bench(load_model(source, false, execution.group).model, options, source, execution);
}

}  // namespace dualgibbs::api
