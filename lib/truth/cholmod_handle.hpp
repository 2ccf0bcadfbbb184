#pragma once
// Private RAII wrapper over CHOLMOD (SuiteSparse), 64-bit integer interface (cholmod_l_*), so that factors
// with more than 2^31 entries are handled. Nothing outside lib/ includes this header.
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/model/model.hpp>

#include "core/blas_threads.hpp"

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

}  // namespace dualgibbs::detail
