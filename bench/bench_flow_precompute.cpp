// The flow control variate's per-node precomputation alone (FlowControlVariate with a fixed degree, kappa and beta:
// no Lanczos run, no kappa search): CPU nanoseconds per visit (a site or one of its incidences, the count that
// probe_flow_degree reports) at degrees k = 4, 5, 6 on `kregular:10000,4` and `torus:100` (s = 1, sigma = 0.25), and
// the wall-clock speed-up of each thread count over the first one (`speedup`, the threads alternated within each
// repetition; the bits must not move).
// Baseline measured in the same run, alternating with the precomputation: one product y = Q x with Eigen's sparse
// matrix, in CPU nanoseconds per non-zero of Q (the same graph's random accesses without the ball expansion), so a
// loaded machine shows in both columns. `bits` is a hash of every E_v and l_v: two builds that print the same hash
// computed the same numbers to the last bit.
//
// Usage: bench_flow_precompute [--reps R=7] [--graphs 'spec;spec'] [--degrees 4,5,6] [--threads 1,2]
//        [--probe-nodes N=all]
// Output: CSV on stdout (graph, nodes, k, visits_per_node, threads, precompute_cpu_ms, precompute_wall_ms,
// ns_per_visit (CPU), spmv_ns_per_nnz, ratio = ns_per_visit / spmv_ns_per_nnz, speedup, bits); each time is the
// minimum over R repetitions (the one least disturbed by other processes on a loaded machine). --probe-nodes counts
// the visits on N evenly spaced nodes instead of every node (for a large expander, e.g.
// --graphs kregular:100000,32 --degrees 3 --probe-nodes 200).
#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/model/io.hpp>

#include "harness.hpp"

#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

double minimum(const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); }

std::vector<std::string> split(const std::string& s, char by = ',') {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, by);) out.push_back(item);
  return out;
}

// FNV-1a over the bytes of the energies and lower bounds.
std::uint64_t bits_hash(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  std::uint64_t h = 1469598103934665603ull;
  for (const Eigen::VectorXd* v : {&a, &b})
    for (Eigen::Index i = 0; i < v->size(); ++i) {
      std::uint64_t word = 0;
      std::memcpy(&word, v->data() + i, sizeof word);
      for (int byte = 0; byte < 8; ++byte) {
        h ^= (word >> (8 * byte)) & 0xff;
        h *= 1099511628211ull;
      }
    }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv,
                   "bench_flow_precompute [--reps R] [--graphs 'spec;spec'] [--degrees 4,5,6] [--threads 1,2] "
                   "[--probe-nodes N]");
  const int reps = static_cast<int>(std::max<long long>(1, args.integer("--reps", 7)));
  const std::vector<std::string> graphs = split(args.text("--graphs", "kregular:10000,4;torus:100"), ';');
  std::vector<int> degrees;
  for (const std::string& d : split(args.text("--degrees", "4,5,6")))
    degrees.push_back(std::max(1, std::atoi(d.c_str())));
  std::vector<unsigned> thread_counts;
  for (const std::string& t : split(args.text("--threads", "1,2")))
    thread_counts.push_back(static_cast<unsigned>(std::max(1, std::atoi(t.c_str()))));
  const long long probe_nodes = args.integer("--probe-nodes", 0);
  args.finish();
  bench::print_machine_comment();
  std::printf(
      "graph,nodes,k,visits_per_node,threads,precompute_cpu_ms,precompute_wall_ms,ns_per_visit,spmv_ns_per_nnz,ratio,"
      "speedup,bits\n");
  for (const std::string& spec : graphs) {
    const Model model = load_model(spec, 1.0, 0.25);
    const SparseMatrix& q = model.primal_precision();
    const Eigen::Index n = q.rows();
    const double beta = FlowControlVariate(model, FlowCvOptions{1, 4.0, 1, FlowPrecompute::Local, 0}).beta();
    Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(n, 1.0, 2.0), y(n);
    for (int k : degrees) {
      // The visits of every node by default (the whole precomputation's count), of evenly spaced nodes with
      // --probe-nodes (on a large expander every node's row of r_k(Q) would not fit in memory).
      const auto tuning = static_cast<Index>(probe_nodes > 0 ? std::min<long long>(probe_nodes, n) : n);
      const FlowDegreeProbe probe = probe_flow_degree(model, k, tuning, 64.0, beta);
      const FlowCvOptions options{k, probe.kappa, 1, FlowPrecompute::Local, beta};
      // The products are repeated to take about as long as the precomputation (a single one is too short to time).
      const int products = std::max(1, static_cast<int>(probe.visits_per_node / 10));
      std::vector<std::vector<double>> cpu(thread_counts.size()), wall(thread_counts.size());
      std::vector<double> spmv;
      std::vector<std::uint64_t> bits(thread_counts.size());
      for (int r = 0; r < reps; ++r) {
        bench::Stopwatch clock;
        for (int p = 0; p < products; ++p) {
          y.noalias() = q * x;
          x[p % n] += 1e-9 * y[(p * 7919) % n];
        }
        spmv.push_back(clock.cpu_seconds() / products);
        for (std::size_t t = 0; t < thread_counts.size(); ++t) {  // alternating the thread counts within a repetition
          Execution execution;
          execution.threads = thread_counts[t];
          clock.restart();
          const FlowControlVariate cv(model, options, execution);
          cpu[t].push_back(clock.cpu_seconds());
          wall[t].push_back(clock.seconds());
          bits[t] = bits_hash(cv.flow_energy(), cv.lower_bound());
        }
      }
      const double spmv_ns = 1e9 * minimum(spmv) / static_cast<double>(q.nonZeros());
      for (std::size_t t = 0; t < thread_counts.size(); ++t) {
        const double pre_s = minimum(cpu[t]);
        const double ns_visit = 1e9 * pre_s / (static_cast<double>(n) * probe.visits_per_node);
        std::printf("%s,%lld,%d,%.1f,%u,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%016llx\n", spec.c_str(),
                    static_cast<long long>(n), k, probe.visits_per_node, thread_counts[t], 1e3 * pre_s,
                    1e3 * minimum(wall[t]), ns_visit, spmv_ns, ns_visit / spmv_ns, minimum(wall[0]) / minimum(wall[t]),
                    static_cast<unsigned long long>(bits[t]));
      }
      std::fflush(stdout);
    }
  }
  std::printf("# load average at end: %s (a loaded machine: compare ratios and runs alternated in one session)\n",
              load_average().c_str());
  return 0;
}
