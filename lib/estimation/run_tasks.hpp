#pragma once
// run_tasks(): fixed pieces of work spread over the available threads, shared by the estimators (private header).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace dualgibbs::detail {

/// Runs task(i, worker) for every i in [0, count) on `threads` threads (at most `count`), the calling thread
/// included, where `worker` in [0, threads) names the thread that runs it (for per-thread scratch space: which worker
/// runs which task varies from run to run, so a task's result must not depend on it). The first exception a task
/// throws is rethrown after every thread has stopped.
template <class Task>
void run_worker_tasks(std::size_t count, unsigned threads, const Task& task) {
  threads = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, threads), count));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) task(i, 0u);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto work = [&](unsigned worker) {
    for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < count;) {
      try {
        task(i, worker);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

/// Runs task(i) for every i in [0, count), spread over `budget` threads (one if `flops` is small), the calling
/// thread included: the caller's thread budget (Execution::thread_budget(), core/execution.hpp).
///
/// Why not let the BLAS thread its calls: OpenBLAS gives different bits for different thread counts (it
/// partitions the output differently, and its edge kernels round differently; measured for dsyrk and dgemm of
/// 100 x 100 and 300 x 300 outputs with 1, 2 and 3 threads), so results would change with OPENBLAS_NUM_THREADS
/// or the machine's core count. Instead every task is a fixed piece of work (one group's rank-k update, one
/// fixed block of rows) done by one single-threaded BLAS call (the caller holds a ScopedBlasThreads(1)), so its
/// bits do not depend on which thread runs it or on how many there are. The first exception a task throws is
/// rethrown here after every thread has stopped.
template <class Task>
void run_tasks(std::size_t count, double flops, unsigned budget, const Task& task) {
  const auto threads = static_cast<unsigned>(std::min<std::size_t>(flops < 4e6 ? 1 : std::max(1u, budget), count));
  run_worker_tasks(count, threads, [&](std::size_t i, unsigned) { task(i); });
}

}  // namespace dualgibbs::detail
