#pragma once
// Private: how many threads the system BLAS uses, for the code that calls it (exact solves, selected inversion,
// the estimators' rank-k updates) without reaching into the CHOLMOD wrapper.
#include <string>

namespace dualgibbs::detail {

/// Limits OpenBLAS to `threads` threads for its lifetime and restores the previous count afterwards
/// (openblas_set_num_threads, looked up at run time: with another BLAS this does nothing). The selected
/// inversion makes many mid-sized BLAS calls; when the machine's cores are busy with other work, OpenBLAS's
/// threads spin-wait on every such call and the inversion runs ten times slower (measured: 53 s instead of 5 s
/// for the 1000 x 1000 torus on 2 loaded cores), so it runs them single-threaded. Not thread-safe: it changes
/// a process-wide setting.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  /// OpenBLAS's current thread count (0 with another BLAS).
  static int current();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int m_previous = 0;
};

/// Name of the BLAS library CHOLMOD's supernodal kernels run on (the target of libblas.so.3 as resolved by
/// the dynamic loader), for reports.
std::string blas_library();

}  // namespace dualgibbs::detail
