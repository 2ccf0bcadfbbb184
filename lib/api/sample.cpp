// The sample use case (api/sample.hpp).
#include <dualgibbs/api/sample.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include "api/distribution.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {
namespace {

// The checked options as the ensemble takes them, and the shape of what is written.
struct SamplePlan {
  Domain domain = Domain::Dual;
  EnsembleOptions ensemble;
  Eigen::Index dim = 0;
  std::uint64_t checkpoints = 0;
};

// The plan of a run on `model`, or (model null) on a lattice of `nodes` and `edges` split by its shape.
SamplePlan plan_sample(const Model* model, Index nodes, Index edges, const SampleOptions& so,
                       const Execution& execution) {
  SamplePlan p;
  p.domain = parse_domain(so.domain);
  if (p.domain == Domain::Dual && model) model->require_dual("sample --domain dual");
  EnsembleOptions& o = p.ensemble;
  o.chains = so.chains;
  o.sweeps = so.sweeps;
  o.scan = scan_order(so.scheme.scan);
  o.seed = so.seed;
  o.threads = execution.threads;
  o.group = execution.group;
  o.lockstep = so.lockstep;
  o.init = parse_initial_state(so.init);
  if ((o.init == InitialState::Given) != so.initial_state.has_value())
    throw std::invalid_argument("sample: init 'given' and an initial state go together");
  if (so.initial_state) o.given_state = *so.initial_state;
  o.init_value = so.init_value;
  if (so.init_scale != 1.0 && o.init != InitialState::Random)
    throw std::invalid_argument("sample: --init-scale applies only with --init random");
  o.init_scale = so.init_scale;
  o.noise = so.noise;
  if (so.draws != "x" && so.draws != "y")
    throw std::invalid_argument("sample: unknown --draws '" + so.draws + "' (expected 'x' or 'y')");
  if (p.domain == Domain::Primal && so.draws == "y")
    throw std::invalid_argument("sample: --draws y (the edge variables y~) applies to the dual domain only");
  o.observe_edges = p.domain == Domain::Dual && so.draws == "y";
  o.checkpoint_every = so.every == 0 ? std::max<std::size_t>(1, so.sweeps) : so.every;
  detail::check_distribution("sample", so.distribute, so.partition);
  if (so.distribute == "graph") {
    if (so.scheme.scan != "colored")
      throw std::invalid_argument(
          "sample: --distribute graph runs the colour-ordered sweep of gibbs, ssor or cheby-ssor (add --scan colored)");
  }
  p.dim = o.observe_edges ? edges : nodes;
  p.checkpoints = sample_checkpoints(so);
  return p;
}

Record sample_record(const Model* model, Index nodes, Index edges, const SampleOptions& so, const SamplePlan& p,
                     const SampleResult& r) {
  const EnsembleOptions& o = p.ensemble;
  Record j;
  j["nodes"] = nodes;
  j["edges"] = edges;
  j["domain"] = to_string(p.domain);
  j["draws"] = p.domain == Domain::Dual ? (so.draws == "y" ? "y_tilde" : "x_tilde") : "x";
  j["dim"] = p.dim;
  j["scan"] = to_string(o.scan);
  j["chains"] = o.chains;
  j["sweeps"] = o.sweeps;
  j["every"] = so.every;
  j["checkpoints"] = r.checkpoints;
  j["lockstep"] = o.lockstep;
  j["init"] = to_string(o.init);
  j["init_value"] = o.init_value;
  j["init_scale"] = o.init_scale;
  j["noise"] = o.noise;
  add_scheme_record(j, r.scheme);  // after "scan": the colored scan names itself there
  if (so.distribute == "graph") {
    j["distribute"] = "graph";
    j["partition"] = so.partition;
    j["parts"] = r.parts;
    j["ghosts_max"] = r.ghosts_max;
    j["cut_fraction"] = r.cut_fraction;
  }
  j["seconds"] = r.stats.seconds;
  j["ns_per_update"] = r.stats.ns_per_update;
  if (model && model->has_mean()) {
    // primal draws are of N(mu, Q^-1); dual draws are of the zero-mean fluctuation (add mu for the posterior)
    j["draws_mean"] = p.domain == Domain::Primal ? "posterior" : "zero";
    add_posterior_mean_record(j, r.mean, observed_nodes(*model, so.observed_nodes));
  }
  return j;
}

// A member's ghosts, its cut neighbour pairs and all its pairs: of its own rows (a local column outside `owned` is a
// ghost). A dual share's ghosts are the edges at its nodes whose head another part owns: each cut edge is a ghost of
// exactly one part (its tail's), so its ghosts count its share of the cut edges, and its own edges its pairs.
std::array<double, 3> share_cut(const GraphShare& share) {
  std::array<double, 3> mine{static_cast<double>(share.ghosts()), 0.0, 0.0};
  if (!share.nodes.empty()) {
    mine[1] = static_cast<double>(share.ghosts());
    mine[2] = static_cast<double>(share.owned.size());
    return mine;
  }
  std::vector<char> own(share.global.size(), 0);
  for (Index l : share.owned) own[static_cast<std::size_t>(l)] = 1;
  for (Index l : share.owned)
    for (SparseMatrix::InnerIterator it(share.precision, l); it; ++it) {
      if (it.col() == l) continue;
      mine[1] += own[static_cast<std::size_t>(it.col())] ? 0.0 : 1.0;
      mine[2] += 1.0;
    }
  return mine;
}

// What the cut left the members: the largest ghost layer, and the neighbour pairs cut over all pairs (collective).
void record_cut(ChainGroup& group, const GraphShare& share, SampleResult& r) {
  const std::array<double, 3> mine = share_cut(share);
  const auto k = static_cast<std::size_t>(group.size());
  std::vector<double> all(3 * k);
  group.all_gather(mine.data(), all.data(), std::vector<std::size_t>(k, 1), 3);
  double cut = 0.0, pairs = 0.0;
  for (std::size_t m = 0; m < k; ++m) {
    r.ghosts_max = std::max(r.ghosts_max, static_cast<std::size_t>(all[3 * m]));
    cut += all[3 * m + 1];
    pairs += all[3 * m + 2];
  }
  r.parts = group.size();
  r.cut_fraction = pairs > 0 ? cut / pairs : 0.0;
}

// A group of this process alone: the split sweep of a lattice given by its shape, run without MPI.
class SoloGroup final : public ChainGroup {
 public:
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }

 protected:
  int lowest_failure(bool failed) override { return failed ? 0 : 1; }
  void broadcast(int, int&, std::string&) override {}
  void gather_items(const double* mine, double* all, const std::vector<std::size_t>& counts,
                    std::size_t unit) override {
    if (mine != all) std::copy(mine, mine + counts[0] * unit, all);
  }
};

// The observer that hands the written checkpoints to the sink (and counts them in r).
Observer draws_writer(const SampleOptions& options, const SamplePlan& plan, DrawsSink& sink, SampleResult& r) {
  return [&options, &plan, &sink, &r](const Checkpoint& cp) {
    const EnsembleOptions& o = plan.ensemble;
    if (cp.sweep == 0 && o.sweeps > 0) return;  // the initial state: not a draw
    if (options.every == 0 && cp.sweep != o.sweeps) return;
    if (r.checkpoints == plan.checkpoints || cp.states.rows() != plan.dim)
      throw std::logic_error("sample: a checkpoint of unexpected count or dimension");
    if (!cp.states.allFinite())
      throw NumericalFailure("sample: a chain reached a non-finite value at sweep " + std::to_string(cp.sweep) +
                             " (the model is numerically degenerate)");
    sink.write(cp.sweep, cp.states);
    ++r.checkpoints;
  };
}

void check_written(const SamplePlan& plan, const SampleResult& r) {
  if (r.checkpoints != plan.checkpoints)
    throw std::logic_error("sample: " + std::to_string(r.checkpoints) + " checkpoints written, " +
                           std::to_string(plan.checkpoints) + " announced");
}

// The chains with every chain's graph cut over the execution's group (one process: the colour-ordered sweep itself,
// the same bits), and what the cut left each member: its ghost layer and its cut neighbour pairs.
void run_split(const Model& model, Domain domain, const EnsembleOptions& o, const std::string& partition,
               const Observer& write, const Execution& execution, SampleResult& r) {
  ChainGroup* group = execution.group && execution.group->size() > 1 ? execution.group : nullptr;
  if (!group) {
    r.stats = run_ensemble(model, domain, o, write, r.scheme);
    return;
  }
  GraphShare share;
  const std::vector<int> part =
      partition == "ranges" ? partition_ranges(model.num_nodes(), group->size()) : std::vector<int>();
  r.stats = run_partitioned(model, domain, o, write, *group, r.scheme, part, &share);
  record_cut(*group, share, r);
}

}  // namespace

std::uint64_t sample_checkpoints(const SampleOptions& so) noexcept {
  if (so.sweeps == 0 || so.every == 0) return 1;
  return so.sweeps / so.every + (so.sweeps % so.every != 0 ? 1 : 0);
}

SampleResult sample(const Model& model, const SampleOptions& options, DrawsSink& sink, const Execution& execution) {
  const SamplePlan plan = plan_sample(&model, model.num_nodes(), model.num_edges(), options, execution);
  const EnsembleOptions& o = plan.ensemble;
  SampleResult r;
  // The posterior mean before the run, so a solver failure writes nothing.
  if (model.has_mean()) r.mean = solve_posterior_mean(model, options.mean);
  r.scheme = make_scheme(options.scheme, resolved_threads(execution), model, plan.domain, "sample");
  if (options.distribute == "graph") r.scheme.threads = 1;  // one thread per member
  r.dim = plan.dim;
  sink.begin(plan.dim, o.chains, plan.checkpoints);
  const Observer write = draws_writer(options, plan, sink, r);
  if (options.distribute == "graph")
    run_split(model, plan.domain, o, options.partition, write, execution, r);
  else
    r.stats = run_ensemble(model, plan.domain, o, write, r.scheme);
  check_written(plan, r);
  sink.end();
  r.record = sample_record(&model, model.num_nodes(), model.num_edges(), options, plan, r);
  return r;
}

std::optional<LatticeShape> lattice_shape(const ModelSource& source, const SampleOptions& options) {
  if (options.distribute != "graph" || options.partition != "ranges" || options.scheme.scheme != "gibbs" ||
      (options.domain != "primal" && options.domain != "dual"))
    return std::nullopt;
  if (source.node_file || source.obs_file || source.precision_file || source.canonical_file) return std::nullopt;
  const GraphSpec spec = parse_graph_spec(source.graph);
  LatticeShape shape;
  shape.s = source.s;
  shape.sigma = source.sigma;
  shape.sides = spec.sizes;
  switch (spec.family) {
    case GraphFamily::Path:
    case GraphFamily::Grid:
      if (options.domain == "dual") return std::nullopt;  // the dual of an open lattice is split from its model
      shape.periodic = false;
      return shape;
    case GraphFamily::Cycle:
    case GraphFamily::Torus:
    case GraphFamily::Torus3:
      shape.periodic = true;
      return shape;
    default:
      return std::nullopt;
  }
}

SampleResult sample(const LatticeShape& shape, const SampleOptions& options, DrawsSink& sink,
                    const Execution& execution) {
  if (options.distribute != "graph")
    throw std::invalid_argument("sample: a lattice given by its shape is sampled split (distribute 'graph')");
  if (options.partition != "ranges")
    throw std::invalid_argument("sample: a lattice split by its shape is cut into id ranges (partition 'ranges')");
  if (options.scheme.omega || options.scheme.lambda_min || options.scheme.lambda_max)
    throw std::invalid_argument(
        "sample: --omega, --lambda-min and --lambda-max apply to --scheme ssor and "
        "cheby-ssor, not gibbs");
  // The nodes, and the edges: along each side, n / side lines of side - 1 links (side links when periodic).
  std::int64_t nodes = 1, edges = 0;
  for (Index side : shape.sides) nodes *= std::max<Index>(side, 1);
  for (Index side : shape.sides)
    edges += nodes / std::max<Index>(side, 1) * (shape.periodic ? side : std::max<Index>(side - 1, 0));
  if (shape.sides.empty() || nodes > std::numeric_limits<Index>::max() || edges > std::numeric_limits<Index>::max())
    throw std::invalid_argument("sample: a lattice of " + std::to_string(nodes) + " nodes and " +
                                std::to_string(edges) + " edges (1 to 3 sides, within 32-bit ids)");
  const SamplePlan plan =
      plan_sample(nullptr, static_cast<Index>(nodes), static_cast<Index>(edges), options, execution);
  SampleResult r;
  r.scheme.kind = SchemeKind::Colored;
  r.scheme.threads = 1;
  r.dim = plan.dim;
  SoloGroup solo;
  ChainGroup& group = execution.group && execution.group->size() > 1 ? *execution.group : solo;
  sink.begin(plan.dim, plan.ensemble.chains, plan.checkpoints);
  GraphShare share;
  r.stats = run_partitioned(shape, plan.domain, plan.ensemble, draws_writer(options, plan, sink, r), group, &share);
  record_cut(group, share, r);
  check_written(plan, r);
  sink.end();
  r.record = sample_record(nullptr, static_cast<Index>(nodes), static_cast<Index>(edges), options, plan, r);
  return r;
}

}  // namespace dualgibbs::api
