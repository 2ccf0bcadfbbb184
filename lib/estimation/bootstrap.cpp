// The block bootstrap of grouped draws and the bootstrap of single draws. See bootstrap.hpp and
// grouped_moments.hpp.

#include <dualgibbs/estimation/bootstrap.hpp>
#include <dualgibbs/estimation/grouped_moments.hpp>

#include <dualgibbs/core/random.hpp>
#include "core/blas_threads.hpp"
#include "estimation/estimator_checks.hpp"
#include "estimation/run_tasks.hpp"

#include <Eigen/Core>

#include <cblas.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

using detail::fail;
using detail::run_tasks;

std::vector<double> GroupedMoments::bootstrap(std::size_t replicates, std::uint64_t seed,
                                              const std::function<double(const SampleMoments&)>& statistic,
                                              unsigned threads) const {
  const unsigned budget = Execution{threads}.thread_budget();
  if (!statistic) fail("GroupedMoments::bootstrap", "no statistic given");
  const std::size_t groups = m_groups.size();
  if (groups < 2) fail("GroupedMoments::bootstrap", "need at least 2 groups to resample");
  const Eigen::Index dim = m_center.size();
  const Eigen::Index scatter_size = m_groups.front().scatter.size();
  // Group statistics side by side, so a batch of replicates is one matrix product with the multiplicities.
  Eigen::MatrixXd sums(dim, static_cast<Eigen::Index>(groups));
  Eigen::MatrixXd scatters(scatter_size, static_cast<Eigen::Index>(groups));
  Eigen::RowVectorXd counts(static_cast<Eigen::Index>(groups));
  for (std::size_t g = 0; g < groups; ++g) {
    const auto gi = static_cast<Eigen::Index>(g);
    sums.col(gi) = m_groups[g].sum;
    scatters.col(gi) = m_groups[g].scatter;
    counts(gi) = m_groups[g].count;
  }
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Bootstrap);
  std::vector<double> out;
  out.reserve(replicates);
  const std::size_t batch = 64;
  Eigen::MatrixXd w;
  MomentSums s;
  for (std::size_t done = 0; done < replicates; done += batch) {
    const auto b = static_cast<Eigen::Index>(std::min(batch, replicates - done));
    w.setZero(static_cast<Eigen::Index>(groups), b);
    for (Eigen::Index r = 0; r < b; ++r)
      for (std::size_t k = 0; k < groups; ++k) w(static_cast<Eigen::Index>(uniform_below(rng, groups)), r) += 1.0;
    const Eigen::MatrixXd bs = sums * w;
    const Eigen::RowVectorXd bc = counts * w;
    // scatters * w: the big product, by single-threaded BLAS calls on fixed blocks of rows (run_tasks).
    Eigen::MatrixXd bp(scatter_size, b);
    {
      const detail::ScopedBlasThreads single_threaded_blas(1);
      const Eigen::Index rows_per_task = 4096;
      const auto tasks = static_cast<std::size_t>((scatter_size + rows_per_task - 1) / rows_per_task);
      run_tasks(tasks, static_cast<double>(scatter_size) * static_cast<double>(b) * static_cast<double>(groups), budget,
                [&](std::size_t t) {
                  const Eigen::Index r0 = static_cast<Eigen::Index>(t) * rows_per_task;
                  const Eigen::Index rows = std::min(rows_per_task, scatter_size - r0);
                  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(b),
                              static_cast<int>(groups), 1.0, scatters.data() + r0, static_cast<int>(scatter_size),
                              w.data(), static_cast<int>(groups), 0.0, bp.data() + r0, static_cast<int>(scatter_size));
                });
    }
    for (Eigen::Index r = 0; r < b; ++r) {
      s.count = bc(r);
      s.sum = bs.col(r);
      s.scatter = bp.col(r);
      out.push_back(statistic(moments(s)));
    }
  }
  return out;
}

std::vector<double> bootstrap_draws(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t replicates,
                                    std::uint64_t seed, const std::function<double(const SampleMoments&)>& statistic,
                                    unsigned threads) {
  const std::string where = "bootstrap_draws";
  if (!statistic) fail(where, "no statistic given");
  if (replicates == 0) fail(where, "zero replicates");
  const Eigen::Index dim = draws.rows(), n = draws.cols();
  if (dim < 1 || n < 2)
    fail(where,
         "need at least 2 draws of dimension >= 1, got " + std::to_string(n) + " of dimension " + std::to_string(dim));
  // One group: the finiteness check, the centre c (the mean of all draws) and the total scatter about it, in double.
  const Execution alone{threads};
  const unsigned budget = alone.thread_budget();
  const GroupedMoments all(draws, 1, MomentKind::Full, alone);
  const MomentSums& total = all.total();
  const Eigen::MatrixXd centred = draws.colwise() - all.center();
  // Feature rows of a draw: the lower triangle of (x - c)(x - c)^T (i >= j, column by column), then x - c.
  const Eigen::Index tri = dim * (dim + 1) / 2, rows = tri + dim;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> pairs;
  pairs.reserve(static_cast<std::size_t>(tri));
  for (Eigen::Index j = 0; j < dim; ++j)
    for (Eigen::Index i = j; i < dim; ++i) pairs.emplace_back(i, j);
  const Eigen::Index chunk = 4096;     // draws per single-precision product (accumulated in double between chunks)
  const Eigen::Index block_rows = 96;  // feature rows per task: fixed, so the bits depend on no thread count
  const std::size_t batch = 512;       // replicates per product
  const auto row_tasks = static_cast<std::size_t>((rows + block_rows - 1) / block_rows);
  const double dn = static_cast<double>(n);
  std::vector<double> out;
  out.reserve(replicates);
  Eigen::MatrixXf excess;  // n x b: w_k - 1 of each replicate (small integers, exact in float)
  Eigen::MatrixXd acc;     // rows x b: sum_k (w_k - 1) f_k
  MomentSums s;
  const detail::ScopedBlasThreads single_threaded_blas(1);
  for (std::size_t done = 0; done < replicates; done += batch) {
    const auto b = static_cast<Eigen::Index>(std::min(batch, replicates - done));
    excess.setConstant(n, b, -1.0F);
    run_tasks(static_cast<std::size_t>(b), dn * 1e3, budget, [&](std::size_t r) {
      ChainEngine rng = make_stream(seed, done + r, StreamPurpose::Bootstrap);
      float* col = excess.data() + static_cast<Eigen::Index>(r) * n;
      for (Eigen::Index k = 0; k < n; ++k) col[uniform_below(rng, static_cast<std::uint64_t>(n))] += 1.0F;
    });
    acc.setZero(rows, b);
    run_tasks(row_tasks, static_cast<double>(rows) * dn * static_cast<double>(b), budget, [&](std::size_t t) {
      const Eigen::Index r0 = static_cast<Eigen::Index>(t) * block_rows;
      const Eigen::Index rb = std::min(block_rows, rows - r0);
      Eigen::MatrixXf features(rb, std::min(chunk, n));
      Eigen::MatrixXf product(rb, b);
      for (Eigen::Index k0 = 0; k0 < n; k0 += chunk) {
        const Eigen::Index kc = std::min(chunk, n - k0);
        for (Eigen::Index k = 0; k < kc; ++k) {
          const double* x = centred.data() + (k0 + k) * dim;
          float* f = features.data() + k * rb;
          for (Eigen::Index q = 0; q < rb; ++q) {
            const Eigen::Index row = r0 + q;
            if (row < tri) {
              const auto& ij = pairs[static_cast<std::size_t>(row)];
              f[q] = static_cast<float>(x[ij.first] * x[ij.second]);
            } else {
              f[q] = static_cast<float>(x[row - tri]);
            }
          }
        }
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rb), static_cast<int>(b),
                    static_cast<int>(kc), 1.0F, features.data(), static_cast<int>(rb), excess.data() + k0,
                    static_cast<int>(n), 0.0F, product.data(), static_cast<int>(rb));
        acc.middleRows(r0, rb) += product.cast<double>();
      }
    });
    for (Eigen::Index r = 0; r < b; ++r) {
      s.count = dn;  // a multinomial resample of n draws has n draws
      s.sum = total.sum + acc.block(tri, r, dim, 1);
      s.scatter = total.scatter;
      Eigen::Map<Eigen::MatrixXd> p(s.scatter.data(), dim, dim);
      for (Eigen::Index q = 0; q < tri; ++q) {
        const auto& ij = pairs[static_cast<std::size_t>(q)];
        p(ij.first, ij.second) += acc(q, r);
        if (ij.first != ij.second) p(ij.second, ij.first) += acc(q, r);
      }
      out.push_back(statistic(all.moments(s)));
    }
  }
  return out;
}

}  // namespace dualgibbs
