// The halo exchange of a split graph (ChainGroup::halo_exchange over dualgibbs::mpi::Group: MPI_Ineighbor_alltoallv
// on a distributed-graph communicator) as the scaling model of docs/mpi.md needs it: the time of one exchange with
// every other rank as a neighbour, for message sizes from 1 to --max doubles per neighbour, median of --repeat, so that
// latency (the time at 1 double) and bandwidth (the slope) can be read off. Run under mpirun with 2 or more ranks.
//
// Usage: mpirun -np K bench_halo [--max N] [--repeat R]
// Output (rank 0): the CPU model, then one JSON line per size: ranks, doubles per neighbour, bytes per neighbour,
// median microseconds per exchange, and the bandwidth that time implies (bytes received by a rank / time).
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/sampling/mpi.hpp>

#include "harness.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace dualgibbs;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    bench::Args args(argc, argv, "mpirun -np K bench_halo [--max N] [--repeat R]");
    const auto max = static_cast<std::size_t>(args.integer("--max", 1 << 20, 1, 1 << 26));
    const int repeat = static_cast<int>(args.integer("--repeat", 50, 1, 100000));
    args.finish();
    mpi::Group group(MPI_COMM_WORLD);
    std::vector<int> neighbors;
    for (int r = 0; r < group.size(); ++r)
      if (r != group.rank()) neighbors.push_back(r);
    group.set_halo_neighbors(neighbors);
    if (group.rank() == 0) bench::print_machine_comment();
    for (std::size_t m = 1; m <= max; m *= 8) {
      const std::size_t k = neighbors.size();
      std::vector<double> send(m * k, 1.0), recv(m * k, 0.0);
      const std::vector<std::size_t> counts(k, m);
      std::vector<double> times;
      for (int t = 0; t < repeat + 2; ++t) {
        MPI_Barrier(MPI_COMM_WORLD);
        const auto start = std::chrono::steady_clock::now();
        group.halo_exchange(send.data(), counts, recv.data(), counts, 1);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        if (t >= 2) times.push_back(us);  // two warm-up exchanges
      }
      std::sort(times.begin(), times.end());
      const double median = times[times.size() / 2];
      if (group.rank() == 0)
        bench::JsonLine()
            .integer("ranks", group.size())
            .integer("doubles", static_cast<long long>(m))
            .integer("bytes", static_cast<long long>(8 * m))
            .number("us_median", median, "%.2f")
            .number("gb_per_s", 8.0 * static_cast<double>(m * k) / (median * 1e3), "%.3f")
            .print();
    }
  }
  MPI_Finalize();
  return code;
}
