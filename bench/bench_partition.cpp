// What cutting one chain's graph over K ranks leaves each rank (sampling/partition.hpp), for the scaling model of
// docs/mpi.md: METIS's partition of Q's graph into K parts, then every part's share: its own coordinates, its ghost
// layer (the other parts' neighbours of its own), the neighbour parts it exchanges with, and the values it receives
// per sweep (its ghosts, one per chain, once per colour class of the ghost). No MPI: the shares are built in this
// process, part after part, as each rank builds its own.
//
// Usage: bench_partition [--graphs 'SPEC;SPEC;...'] [--parts K,K,...]
// Output: one JSON line per (graph, K, partitioner: METIS's partition_graph or contiguous partition_ranges): nodes,
// colours, K, the partitioning time, the cut fraction (neighbour pairs cut over all pairs), owned (largest part),
// ghosts_max and ghosts_mean, ghost_fraction (ghosts_max / owned of that part), neighbors_max, bytes_per_sweep_max (8 x
// the largest ghost layer: what one chain's sweep brings into a rank), and deviate_overdraw_max (the deviates a part
// draws over those it uses, the largest: see deviate_overdraw).
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ';');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// Deviates a part draws per sweep over those it uses: PartitionedColoredSweep draws each touched block of
// ColoredSweep::kBlock places from its start to the part's last place in it.
double deviate_overdraw(const GraphShare& s) {
  double drawn = 0.0, used = 0.0;
  for (const std::vector<std::size_t>& places : s.class_places) {
    for (std::size_t t = 0; t < places.size(); ++t) {
      const std::size_t block = places[t] / ColoredSweep::kBlock;
      if (t + 1 == places.size() || places[t + 1] / ColoredSweep::kBlock != block)
        drawn += static_cast<double>(places[t] - block * ColoredSweep::kBlock + 1);
    }
    used += static_cast<double>(places.size());
  }
  return used > 0 ? drawn / used : 1.0;
}

void measure(const std::string& spec, int parts, const std::string& partitioner) {
  const Model model = load_model(spec, 1.0, 0.1);
  const SparseMatrix& q = model.primal_precision();
  const auto classes = greedy_coloring(q);
  bench::Stopwatch clock;
  const std::vector<int> part =
      partitioner == "ranges" ? partition_ranges(model.num_nodes(), parts) : partition_graph(q, parts);
  const double partition_seconds = clock.seconds();
  std::size_t owned_max = 0, ghosts_max = 0, ghosts_sum = 0, neighbors_max = 0;
  double ghost_fraction = 0.0, overdraw = 0.0;
  for (int r = 0; r < parts; ++r) {
    const GraphShare s = make_share(q, Eigen::VectorXd(), classes, part, r, parts);
    overdraw = std::max(overdraw, deviate_overdraw(s));
    owned_max = std::max(owned_max, s.owned.size());
    ghosts_sum += s.ghosts();
    neighbors_max = std::max(neighbors_max, s.neighbors.size());
    if (s.ghosts() >= ghosts_max) {
      ghosts_max = s.ghosts();
      ghost_fraction = s.owned.empty() ? 0.0 : static_cast<double>(s.ghosts()) / static_cast<double>(s.owned.size());
    }
  }
  bench::JsonLine()
      .text("graph", spec)
      .text("partitioner", partitioner)
      .integer("nodes", model.num_nodes())
      .integer("colours", static_cast<long long>(classes.size()))
      .integer("parts", parts)
      .number("partition_seconds", partition_seconds, "%.3f")
      .number("cut_fraction", cut_fraction(q, part), "%.4f")
      .integer("owned_max", static_cast<long long>(owned_max))
      .integer("ghosts_max", static_cast<long long>(ghosts_max))
      .number("ghosts_mean", static_cast<double>(ghosts_sum) / parts, "%.1f")
      .number("ghost_fraction", ghost_fraction, "%.4f")
      .integer("neighbors_max", static_cast<long long>(neighbors_max))
      .integer("bytes_per_sweep_max", static_cast<long long>(8 * ghosts_max))
      .number("deviate_overdraw_max", overdraw, "%.2f")
      .print();
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_partition [--graphs 'SPEC;SPEC;...'] [--parts K,K,...]");
  const std::string graphs = args.text("--graphs", "torus3:60;torus:300;kregular:200000,4;kregular:200000,16");
  const std::string parts_text = args.text("--parts", "2,3,8,64");
  args.finish();
  std::vector<int> parts;
  std::stringstream in(parts_text);
  for (std::string item; std::getline(in, item, ',');) parts.push_back(std::stoi(item));
  bench::print_machine_comment();
  for (const std::string& spec : split_list(graphs))
    for (int k : parts)
      for (const char* partitioner : {"metis", "ranges"}) measure(spec, k, partitioner);
  return 0;
}
