#pragma once
// Private RAII wrapper over CHOLMOD (SuiteSparse), 64-bit integer interface (cholmod_l_*), so that factors
// with more than 2^31 entries are handled. Nothing outside lib/ includes this header.
#include <dualgibbs/exact.hpp>
#include <dualgibbs/model.hpp>

#include <cholmod.h>

#include <memory>
#include <string>

namespace dualgibbs::detail {

using CholmodInt = SuiteSparse_long;

/// Owns a cholmod_common (cholmod_l_start / cholmod_l_finish). Not copyable, not movable (CHOLMOD objects
/// keep no pointer to it, but every call needs the same one).
class CholmodCommon {
 public:
  CholmodCommon();
  ~CholmodCommon();
  CholmodCommon(const CholmodCommon&) = delete;
  CholmodCommon& operator=(const CholmodCommon&) = delete;

  cholmod_common* get() noexcept { return &m_common; }
  /// Throws the library exception that matches common.status after the call `what` (the one switch that
  /// translates CHOLMOD's status codes). Warnings other than CHOLMOD_NOT_POSDEF are ignored.
  void check(const char* what);

 private:
  cholmod_common m_common;
};

struct FactorDeleter {
  cholmod_common* common;
  void operator()(cholmod_factor* f) const noexcept { cholmod_l_free_factor(&f, common); }
};
struct DenseDeleter {
  cholmod_common* common;
  void operator()(cholmod_dense* d) const noexcept { cholmod_l_free_dense(&d, common); }
};
using FactorPtr = std::unique_ptr<cholmod_factor, FactorDeleter>;
using DensePtr = std::unique_ptr<cholmod_dense, DenseDeleter>;

/// A cholmod_sparse view (stype = 1: CHOLMOD reads the upper triangle) of a symmetric CSR matrix with full
/// storage. Because the matrix is symmetric, its CSR arrays are also its CSC arrays; the indices are copied
/// to 64 bits, the values are referenced (the matrix must outlive the view).
class SymmetricView {
 public:
  explicit SymmetricView(const SparseMatrix& m);
  cholmod_sparse* get() noexcept { return &m_sparse; }

 private:
  std::vector<CholmodInt> m_p, m_i;
  cholmod_sparse m_sparse{};
};

/// A cholmod_dense view of an Eigen column-major matrix (no copy).
cholmod_dense dense_view(const Eigen::MatrixXd& m);

/// Sets the fill-reducing ordering of the next analysis (supernodal LL^T, weighted postorder).
void set_ordering(cholmod_common* c, Ordering ordering);
/// The Ordering matching a factor's L->ordering.
Ordering ordering_of(const cholmod_factor* L);

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
