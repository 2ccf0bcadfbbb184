// The dual kernel of a weighted, signed incidence (a precision matrix of factor width 2, Model::from_precision)
// against the thin membrane's dual kernel on the same graph, per chain-update: run_ensemble, dual domain, random
// scan, one thread. Four models on each torus: the thin membrane with one s and one sigma (the compact 8-byte edge
// loop), the thin membrane with per-node s and per-edge sigma (the 32-byte per-edge loop), and the general form with
// the same s and sigma: signed, incidence weights +-1 of both signs (what a diagonally dominant precision matrix
// gives; the 32-byte signed loop), and scaled, weights of both signs and magnitudes in [0.5, 2] (what an H-matrix
// that needs scaling gives; the 64-byte weighted loop). Rounds interleave the four so that load drift hits them
// alike; each row reports the median CPU ns per update over the rounds and its ratio to the heterogeneous thin
// membrane measured in the same run (the like-for-like baseline: per-edge coefficients in all three) and to the
// compact one.
//
// Usage: bench_general_dual [--quick] [--rounds N]
// Output: one JSON line per (graph, lockstep, model), then a summary line per graph with the ratios.
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace dualgibbs;
using bench::Args;

namespace {

struct Models {
  Model homogeneous, heterogeneous, signed_unit, scaled;
};

Models make_models(Index side) {
  const Graph g = make_torus(side, side);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> spread(0.5, 1.5), weight(0.5, 2.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& v : s) v = spread(rng);
  for (double& v : sigma) v = 0.25 * spread(rng);
  std::vector<double> head(sigma.size()), tail(sigma.size()), unit_head(sigma.size(), 1.0), unit_tail(sigma.size());
  for (std::size_t e = 0; e < sigma.size(); ++e) {
    head[e] = weight(rng);
    tail[e] = (rng() % 3 == 0 ? 1.0 : -1.0) * weight(rng);
    unit_tail[e] = tail[e] > 0 ? 1.0 : -1.0;
  }
  return {Model(g, 1.0, 0.25), Model(g, s, sigma), Model(g, s, sigma, unit_head, unit_tail),
          Model(g, s, sigma, head, tail)};
}

double cpu_ns_per_update(const Model& m, std::size_t lockstep, std::size_t sweeps) {
  EnsembleOptions o;
  o.chains = 2 * lockstep;
  o.lockstep = lockstep;
  o.sweeps = sweeps;
  o.threads = 1;
  o.scan = ScanOrder::Random;
  o.seed = 3;
  const bench::Stopwatch clock;
  run_ensemble(m, Domain::Dual, o, [](const Checkpoint&) {});
  const double updates =
      static_cast<double>(o.chains) * static_cast<double>(sweeps) * static_cast<double>(m.num_edges());
  return 1e9 * clock.cpu_seconds() / updates;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argc, argv, "bench_general_dual [--quick] [--rounds N]");
  const bool quick = args.flag("--quick");
  const int rounds = static_cast<int>(args.integer("--rounds", quick ? 3 : 7, 1, 1000));
  args.finish();
  bench::print_machine_comment();
  for (const Index side : {Index{100}, Index{1000}}) {
    if (quick && side > 100) continue;
    const Models models = make_models(side);
    const std::size_t sweeps =
        side == 100 ? 200 : 12;  // enough sweeps that building the kernel and the state is a small part
    for (const std::size_t lockstep : {std::size_t{1}, std::size_t{8}}) {
      std::vector<double> hom, het, sgn, scl;
      for (int r = 0; r < rounds; ++r) {
        hom.push_back(cpu_ns_per_update(models.homogeneous, lockstep, sweeps));
        het.push_back(cpu_ns_per_update(models.heterogeneous, lockstep, sweeps));
        sgn.push_back(cpu_ns_per_update(models.signed_unit, lockstep, sweeps));
        scl.push_back(cpu_ns_per_update(models.scaled, lockstep, sweeps));
      }
      const double h = median(hom), t = median(het), g = median(sgn), c = median(scl);
      const std::string graph = "torus:" + std::to_string(side);
      for (const auto& [name, value] : {std::pair<const char*, double>{"thin-homogeneous", h},
                                        {"thin-heterogeneous", t},
                                        {"general-signed", g},
                                        {"general-scaled", c}})
        bench::JsonLine()
            .text("graph", graph)
            .integer("lockstep", static_cast<long long>(lockstep))
            .text("model", name)
            .number("cpu_ns_per_update", value)
            .integer("rounds", rounds)
            .print();
      bench::JsonLine()
          .text("graph", graph)
          .integer("lockstep", static_cast<long long>(lockstep))
          .number("signed_over_heterogeneous", g / t, "%.3f")
          .number("signed_over_homogeneous", g / h, "%.3f")
          .number("scaled_over_heterogeneous", c / t, "%.3f")
          .number("scaled_over_homogeneous", c / h, "%.3f")
          .print();
    }
  }
  return 0;
}
