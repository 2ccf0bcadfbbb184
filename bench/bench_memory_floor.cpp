// The memory floor of a random-scan dual update: the cache lines one update of DualIncidenceKernel touches on a
// large torus (the edge's ends, y_e, x_u, x_v; y_e, x_u and x_v read and written back), in the same random order and
// with the same kind of software prefetch, but without the update's arithmetic, the deviates or the index draw. No
// sampler can update a chain faster than this on the machine at hand, so it tells whether a target per update is
// reachable here at all. One chain (the ensemble runs the chains of a thread one after the other between
// checkpoints), one thread; the edge indices are drawn beforehand into an array that is read in order.
//
// Usage: bench_memory_floor [--side N] [--updates N] [--repeat N]
// Output: the CPU model, then CSV: the layout (separate: the library's, ends, y and x in three arrays; y_beside_ends:
// a what-if with y_e in the edge's record), huge pages (the library's allocate_large, or plain operator new), state
// prefetch distance (0 = none; the edge's ends are prefetched max(16, twice that) updates ahead), ns per update (wall
// and CPU time of this thread), best of --repeat runs.
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/memory.hpp>
#include <dualgibbs/model/generators.hpp>

#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <random>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

struct Ends {
  Index head, tail;
};

// An array of T from allocate_large (2 MiB aligned, marked for transparent huge pages) or from operator new.
template <class T>
class Array {
 public:
  Array(std::size_t n, bool huge) : m_n(n), m_huge(huge) {
    m_p = static_cast<T*>(huge ? detail::allocate_large(n * sizeof(T))
                               : ::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  ~Array() {
    if (m_huge)
      detail::deallocate_large(m_p, m_n * sizeof(T));
    else
      ::operator delete (m_p, std::align_val_t{64});
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  T* data() noexcept { return m_p; }

 private:
  T* m_p;
  std::size_t m_n;
  bool m_huge;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The ends are prefetched max(16, 2 ahead) updates ahead (16 = detail::kRowPrefetch, the kernel's distance), so that
// they are in cache when the state lines are prefetched.
std::size_t ends_ahead(std::size_t ahead) noexcept { return std::max<std::size_t>(16, 2 * ahead); }

// The update's memory traffic for sites[0..count): y_e += c, x_u += c, x_v -= c (one add each, no dependency between
// updates other than through memory), the ends prefetched ends_ahead() and the three state lines `ahead` updates ahead.
void touch(const Ends* ends, const Index* sites, std::size_t count, double* y, double* x, std::size_t ahead) noexcept {
  const double c = 0x1.0p-60;
  const std::size_t first_ahead = ends_ahead(ahead);
  for (std::size_t t = 0; t < count; ++t) {
    if (t + first_ahead < count) detail::prefetch_read(&ends[sites[t + first_ahead]]);
    if (ahead != 0 && t + ahead < count) {
      const Index f = sites[t + ahead];
      detail::prefetch_write(y + f);
      detail::prefetch_write(x + ends[f].head);
      detail::prefetch_write(x + ends[f].tail);
    }
    const Index e = sites[t];
    y[e] += c;
    x[ends[e].head] += c;
    x[ends[e].tail] -= c;
  }
}

// A what-if layout, not the library's: y_e stored beside the edge's ends, one 16-byte record per edge, so that an
// update touches three random lines instead of four (at one chain per block).
struct EdgeRecord {
  double y;
  Index head, tail;
};
void touch_beside(EdgeRecord* edges, const Index* sites, std::size_t count, double* x, std::size_t ahead) noexcept {
  const double c = 0x1.0p-60;
  const std::size_t first_ahead = ends_ahead(ahead);
  for (std::size_t t = 0; t < count; ++t) {
    if (t + first_ahead < count) detail::prefetch_write(&edges[sites[t + first_ahead]]);
    if (ahead != 0 && t + ahead < count) {
      const EdgeRecord& f = edges[sites[t + ahead]];
      detail::prefetch_write(x + f.head);
      detail::prefetch_write(x + f.tail);
    }
    EdgeRecord& r = edges[sites[t]];
    r.y += c;
    x[r.head] += c;
    x[r.tail] -= c;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_memory_floor [--side N] [--updates N] [--repeat N]");
  const long long side = args.integer("--side", 1000, 3, 10000);
  const long long updates = args.integer("--updates", 40000000, 1, 1000000000);
  const long long repeat = args.integer("--repeat", 3, 1, 100);
  args.finish();
  const Graph g = make_torus(static_cast<Index>(side), static_cast<Index>(side));
  const auto m = static_cast<std::size_t>(g.num_edges());
  const auto n = static_cast<std::size_t>(g.num_nodes());
  bench::print_machine_comment();
  std::printf(
      "# torus %lldx%lld: %zu edges, %zu nodes; state %.1f MB, ends %.1f MB; %lld updates per run, best of %lld\n",
      side, side, m, n, 8e-6 * static_cast<double>(m + n), 8e-6 * static_cast<double>(m), updates, repeat);
  std::vector<Index> sites(static_cast<std::size_t>(updates));
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<Index> pick(0, static_cast<Index>(m) - 1);
  for (auto& s : sites) s = pick(rng);
  std::printf("layout,huge_pages,state_prefetch,ns_per_update,cpu_ns_per_update\n");
  double floor_library = 1e300,
         floor_beside = 1e300;  // best CPU ns per update of each layout (wall on an idle machine)
  auto measure = [&](const char* layout, bool huge, auto&& run) {
    for (std::size_t ahead : {std::size_t{0}, std::size_t{8}, std::size_t{16}, std::size_t{32}}) {
      double best_wall = 1e300, best_cpu = 1e300;
      for (long long r = 0; r < repeat; ++r) {
        const double c0 = thread_cpu_seconds();
        const bench::Stopwatch clock;
        run(ahead);
        const double wall = clock.seconds();
        best_wall = std::min(best_wall, wall);
        best_cpu = std::min(best_cpu, thread_cpu_seconds() - c0);
      }
      double& floor = std::strcmp(layout, "separate") == 0 ? floor_library : floor_beside;
      floor = std::min(floor, 1e9 * best_cpu / static_cast<double>(updates));
      std::printf("%s,%s,%zu,%.2f,%.2f\n", layout, huge ? "yes" : "no", ahead,
                  1e9 * best_wall / static_cast<double>(updates), 1e9 * best_cpu / static_cast<double>(updates));
      std::fflush(stdout);
    }
  };
  for (bool huge : {true, false}) {
    {
      Array<Ends> ends(m, huge);
      Array<double> y(m, huge), x(n, huge);
      for (std::size_t e = 0; e < m; ++e)
        ends.data()[e] = {g.edge(static_cast<Index>(e)).head, g.edge(static_cast<Index>(e)).tail};
      std::memset(y.data(), 0, m * sizeof(double));
      std::memset(x.data(), 0, n * sizeof(double));
      measure("separate", huge,
              [&](std::size_t ahead) { touch(ends.data(), sites.data(), sites.size(), y.data(), x.data(), ahead); });
    }
    {
      Array<EdgeRecord> edges(m, huge);
      Array<double> x(n, huge);
      for (std::size_t e = 0; e < m; ++e)
        edges.data()[e] = {0.0, g.edge(static_cast<Index>(e)).head, g.edge(static_cast<Index>(e)).tail};
      std::memset(x.data(), 0, n * sizeof(double));
      measure("y_beside_ends", huge,
              [&](std::size_t ahead) { touch_beside(edges.data(), sites.data(), sites.size(), x.data(), ahead); });
    }
  }
  std::printf("# floor (best CPU ns per update): library layout %.2f, y beside ends %.2f\n", floor_library,
              floor_beside);
  if (side == 1000)
    std::printf(
        "# the target for this torus (dual, --lockstep 1) is 10 ns per update: %s on this machine with "
        "the library's layout\n",
        floor_library <= 10.0 ? "above the floor" : "BELOW the floor, not reachable");
  return 0;
}
