// The flow control variate's residual map u = r_k(Q) b (chebyshev_residual) on a block of 16 chains, against the same
// map column by column in the same run: one column is the kernel's run-time-width loop, 16 columns its vector path
// (GCC vectors of eight doubles, AVX2 or AVX-512F as the CPU has). Both give the same bits (checked here); the ratio
// is column-by-column time / block time. One JSON line per graph and degree, with the CPU and the load average.
//
//   bench_residual_map [--quick] [--repeat N] [--chains C]
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>

#include "harness.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

struct Case {
  std::string name;
  Graph graph;
};

// The fastest of `repeat` evaluations of `run`, in milliseconds (the least disturbed on a shared machine).
template <class F>
double best_ms(long repeat, F&& run) {
  double best = std::numeric_limits<double>::infinity();
  for (long r = 0; r < repeat; ++r) {
    const bench::Stopwatch clock;
    run();
    best = std::min(best, clock.seconds() * 1e3);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_residual_map [--quick] [--repeat N] [--chains C]");
  const bool quick = args.flag("--quick");
  const long repeat = args.integer("--repeat", quick ? 5 : 40, 1, 10000);
  const long chains = args.integer("--chains", 16, 1, 4096);
  args.finish();
  std::vector<Case> cases;
  cases.push_back({"torus:100", make_torus(100, 100)});
  cases.push_back({"kregular:10000,4", make_random_regular(10000, 4, 1)});
  for (const Case& c : cases) {
    const Model model(c.graph, 1.0, 0.25);
    const SparseMatrix& q = model.primal_precision();
    double beta = 0;  // Gershgorin: the largest absolute row sum of Q bounds its spectrum
    for (Eigen::Index i = 0; i < q.outerSize(); ++i) {
      double row = 0;
      for (SparseMatrix::InnerIterator it(q, i); it; ++it) row += std::abs(it.value());
      beta = std::max(beta, row);
    }
    const double alpha = beta / 64.0;
    const Eigen::MatrixXd b = Eigen::MatrixXd::Random(q.rows(), chains);
    for (int k : {5, 8}) {
      Eigen::MatrixXd block, columns(q.rows(), chains);
      const double block_ms = best_ms(repeat, [&] { block = chebyshev_residual(q, k, alpha, beta, b); });
      const double column_ms = best_ms(repeat, [&] {
        for (Eigen::Index j = 0; j < chains; ++j) columns.col(j) = chebyshev_residual(q, k, alpha, beta, b.col(j));
      });
      const bool same = (block.array() == columns.array()).all();
      bench::JsonLine()
          .text("graph", c.name)
          .integer("nodes", q.rows())
          .integer("chains", chains)
          .integer("degree", k)
          .number("block_ms", block_ms)
          .number("column_by_column_ms", column_ms)
          .number("ratio", column_ms / block_ms, "%.3f")
          .boolean("same_bits", same)
          .machine()
          .print();
      if (!same) {
        std::fprintf(stderr, "bench_residual_map: the block and the columns differ on %s at k = %d\n", c.name.c_str(),
                     k);
        return 1;
      }
    }
  }
  return 0;
}
