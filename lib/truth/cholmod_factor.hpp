#pragma once
// Private to lib/truth/: the library's one CHOLMOD wrapper (SuiteSparse, 64-bit cholmod_l_* interface, so
// that factors with more than 2^31 entries are handled). Nothing outside lib/ includes this header; the public
// face is CholeskyFactor (include/dualgibbs/truth/exact.hpp).
//
// Steps, as in Eigen's sparse solver concept: analyze() once per sparsity pattern (fill-reducing ordering,
// elimination tree, supernodes), factorize() per set of values on that pattern (calling it again refactorizes:
// only the numeric part is redone), then solves, the log-determinant and the supernodal factor for the selected
// inversion. CHOLMOD's status is translated into the library's exceptions in one switch (check()).
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "truth/selected_inversion.hpp"

#include <cholmod.h>

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace dualgibbs::detail {

using CholmodInt = SuiteSparse_long;

/// Supernodal LL^T factorization P M P^T = L L^T of symmetric positive definite matrices sharing one pattern.
/// Owns cholmod_common, the factor and the solve workspace (RAII). Not copyable, not movable, not thread-safe.
class CholmodFactor {
 public:
  /// `blas_threads`: OpenBLAS threads while factorizing and solving with several right-hand sides (1, the default,
  /// see core/blas_threads.hpp; 0 = leave OpenBLAS's own count).
  explicit CholmodFactor(Ordering ordering = Ordering::Amd, int blas_threads = 1);
  ~CholmodFactor();
  CholmodFactor(const CholmodFactor&) = delete;
  CholmodFactor& operator=(const CholmodFactor&) = delete;

  /// Symbolic analysis of the pattern of `pattern` (square, symmetric, full storage, compressed; the values are
  /// not read). Forgets any previous analysis and factor.
  /// \throws FactorizationError if CHOLMOD fails (out of memory, integer overflow).
  void analyze(const SparseMatrix& pattern);
  /// Numeric factorization of `values`, which must have the analyzed pattern (checked). With `pivot_check`, a
  /// factor whose pivots fall below the rounding level is rejected as numerically singular.
  /// \throws std::invalid_argument if the pattern differs or nothing was analyzed; NotPositiveDefinite (with the
  ///         failing column, original numbering); FactorizationError for any other CHOLMOD failure.
  void factorize(const SparseMatrix& values, bool pivot_check = true);

  /// OpenBLAS threads during factorize() and solve() (as in the constructor).
  void set_blas_threads(int threads) noexcept { m_blas_threads = threads; }
  /// Whether a selected inversion of the factor will follow (its memory then counts in factorize()'s check, so
  /// that a method that cannot finish is refused before the numeric factorization instead of after it).
  void plan_selected_inversion(bool planned) noexcept { m_plan_inverse = planned; }
  /// The memory that factorize() (and, when planned, the selected inversion after it) will allocate, estimated
  /// from the analysis: bytes of the factor's values, of the numeric factorization's workspace, and of the selected
  /// inverse with its workspace (0 unless planned). \throws std::logic_error before analyze().
  struct PeakEstimate {
    double factor = 0, factorize_workspace = 0, inverse = 0;
    /// The peak: the factor's values with the larger of the two others (the workspace is freed before the
    /// selected inversion).
    double total() const noexcept { return factor + (factorize_workspace > inverse ? factorize_workspace : inverse); }
  };
  PeakEstimate peak_estimate() const;
  bool analyzed() const noexcept { return m_factor != nullptr; }
  bool factorized() const noexcept { return m_factorized; }
  Index size() const noexcept { return m_n; }
  /// Predicted non-zeros and flops of the factor (from the analysis).
  double predicted_nonzeros() const noexcept { return m_stats.nnz_L; }
  double predicted_flops() const noexcept { return m_stats.flops; }
  const FactorStats& stats() const noexcept { return m_stats; }

  /// log det M = 2 sum_k log L_kk.
  double log_determinant() const;
  /// Solves with CHOLMOD's system `sys` (CHOLMOD_A, CHOLMOD_Lt, CHOLMOD_Pt, ...), all columns of b at once.
  Eigen::MatrixXd solve(int sys, const Eigen::MatrixXd& b) const;
  /// x = M^-1 b for one vector, reusing CHOLMOD's workspace between calls (cholmod_l_solve2): the fast path of
  /// iterative eigensolvers.
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const;
  /// The factor in the layout of the selected inversion.
  SupernodalFactor view() const;
  /// Perm[k]: row k of P M P^T is row Perm[k] of M.
  const std::int64_t* permutation() const;

 private:
  // Throws the exception matching m_common.status after the call `what`: the one switch over CHOLMOD's codes.
  void check(const char* what);
  void release() noexcept;
  cholmod_sparse view_of(const SparseMatrix& m) const;

  cholmod_common m_common;
  cholmod_factor* m_factor = nullptr;
  mutable cholmod_dense* m_x = nullptr;  // cholmod_l_solve2 workspace: kept between solves
  mutable cholmod_dense* m_y = nullptr;
  mutable cholmod_dense* m_e = nullptr;
  std::vector<CholmodInt> m_p, m_i;  // the analyzed pattern, 64-bit (CSR of a symmetric matrix = its CSC)
  Ordering m_ordering;
  int m_blas_threads;
  Index m_n = 0;
  bool m_factorized = false;
  bool m_plan_inverse = false;
  FactorStats m_stats;
};

/// Rejects what CHOLMOD would silently misread (it sees only the upper triangle): a matrix that is empty, not
/// square, not symmetric or has a non-finite entry. `who` starts the message. \throws std::invalid_argument.
/// Bytes available for a new allocation: MemAvailable of /proc/meminfo, or the room left under the process's
/// address-space limit (RLIMIT_AS, `ulimit -v`) when that is smaller; negative where neither can be read.
double available_memory_bytes();
/// Throws FactorizationError naming `what`, the bytes it needs and those available when `bytes` exceeds 90% of
/// available_memory_bytes(): a block that overcommit would grant and then page the machine to a halt (or that the
/// address-space limit would refuse inside a library) is refused before it is allocated.
void check_memory_fits(double bytes, const std::string& what);
void check_symmetric(const SparseMatrix& m, const char* who);

}  // namespace dualgibbs::detail
