// The flow control variate's per-node precomputation alone (FlowControlVariate with a fixed degree, kappa and beta:
// no Lanczos run, no kappa search): CPU nanoseconds per visit (a site or one of its incidences, the count that
// probe_flow_degree reports) at degrees k = 4, 5, 6 on `kregular:10000,4` and `torus:100` (s = 1, sigma = 0.25).
// Baseline measured in the same run, alternating with the precomputation: one product y = Q x with Eigen's sparse
// matrix, in CPU nanoseconds per non-zero of Q (the same graph's random accesses without the ball expansion), so a
// loaded machine shows in both columns. `bits` is a hash of every E_v and l_v: two builds that print the same hash
// computed the same numbers to the last bit.
//
// Usage: bench_flow_precompute [--reps R=7] [--graphs 'spec;spec'] [--degrees 4,5,6]
// Output: CSV on stdout (graph, nodes, k, visits_per_node, precompute_cpu_ms, ns_per_visit, spmv_ns_per_nnz,
// ratio = ns_per_visit / spmv_ns_per_nnz, bits); the CPU time of each is the minimum over R repetitions (the
// one least disturbed by other processes on a loaded machine).
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
  bench::Args args(argc, argv, "bench_flow_precompute [--reps R] [--graphs 'spec;spec'] [--degrees 4,5,6]");
  const int reps = static_cast<int>(std::max<long long>(1, args.integer("--reps", 7)));
  const std::vector<std::string> graphs = split(args.text("--graphs", "kregular:10000,4;torus:100"), ';');
  std::vector<int> degrees;
  for (const std::string& d : split(args.text("--degrees", "4,5,6")))
    degrees.push_back(std::max(1, std::atoi(d.c_str())));
  args.finish();
  bench::print_machine_comment();
  std::printf("graph,nodes,k,visits_per_node,precompute_cpu_ms,ns_per_visit,spmv_ns_per_nnz,ratio,bits\n");
  for (const std::string& spec : graphs) {
    const Model model = load_model(spec, 1.0, 0.25);
    const SparseMatrix& q = model.primal_precision();
    const Eigen::Index n = q.rows();
    const double beta = FlowControlVariate(model, FlowCvOptions{1, 4.0, 1, FlowPrecompute::Local, 0}).beta();
    Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(n, 1.0, 2.0), y(n);
    for (int k : degrees) {
      // Every node is a tuning node: the visits of the whole precomputation, not a sample's.
      const FlowDegreeProbe probe = probe_flow_degree(model, k, static_cast<Index>(n), 64.0, beta);
      const FlowCvOptions options{k, probe.kappa, 1, FlowPrecompute::Local, beta};
      std::vector<double> pre, spmv;
      std::uint64_t bits = 0;
      // The products are repeated to take about as long as the precomputation (a single one is too short to time).
      const int products = std::max(1, static_cast<int>(probe.visits_per_node / 10));
      for (int r = 0; r < reps; ++r) {
        bench::Stopwatch clock;
        for (int p = 0; p < products; ++p) {
          y.noalias() = q * x;
          x[p % n] += 1e-9 * y[(p * 7919) % n];
        }
        spmv.push_back(clock.cpu_seconds() / products);
        clock.restart();
        const FlowControlVariate cv(model, options);
        pre.push_back(clock.cpu_seconds());
        bits = bits_hash(cv.flow_energy(), cv.lower_bound());
      }
      const double pre_s = minimum(pre), spmv_ns = 1e9 * minimum(spmv) / static_cast<double>(q.nonZeros());
      const double ns_visit = 1e9 * pre_s / (static_cast<double>(n) * probe.visits_per_node);
      std::printf("%s,%lld,%d,%.1f,%.2f,%.3f,%.3f,%.3f,%016llx\n", spec.c_str(), static_cast<long long>(n), k,
                  probe.visits_per_node, 1e3 * pre_s, ns_visit, spmv_ns, ns_visit / spmv_ns,
                  static_cast<unsigned long long>(bits));
      std::fflush(stdout);
    }
  }
  std::printf("# load average at end: %s (a loaded machine: compare ratios and runs alternated in one session)\n",
              load_average().c_str());
  return 0;
}
