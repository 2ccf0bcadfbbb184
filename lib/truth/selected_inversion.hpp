#pragma once
// Supernodal selected inversion: the entries of A^-1 on the sparsity pattern of a supernodal Cholesky factor
// A = L L^T (Takahashi, Fagan and Chin 1973; supernodal form as in Lin, Yang, Meza, Lu, Ying and E,
// "SelInv", ACM TOMS 37(4), 2011). Private to lib/.
#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace dualgibbs::detail {

/// Read-only view of a supernodal LL^T factor in CHOLMOD's layout (64-bit indices):
/// supernode J holds columns super[J] .. super[J+1]-1; its row indices are s[pi[J] .. pi[J+1]) (the first
/// ncols of them are its own columns, in order; the rest ascending); its values are a dense column-major
/// block of (pi[J+1]-pi[J]) rows x ncols starting at x[px[J]], lower triangle significant in the top square.
struct SupernodalFactor {
  std::int64_t n = 0;
  std::int64_t nsuper = 0;
  std::int64_t xsize = 0;
  const std::int64_t* super = nullptr;
  const std::int64_t* pi = nullptr;
  const std::int64_t* px = nullptr;
  const std::int64_t* s = nullptr;
  const double* x = nullptr;
};

/// Options of the selected inversion (for tests: force one path of the dense kernels or the other).
struct SelectedInversionOptions {
  /// Dense block operations with at least this many multiply-adds go to the system BLAS/LAPACK; smaller ones
  /// are done by Eigen (no call overhead). 0 = always BLAS; a huge value = always Eigen.
  double blas_threshold = 32.0 * 32.0 * 32.0;
  /// Worker threads over independent subtrees of the supernodal elimination tree (the top of the tree runs
  /// first on the calling thread); 0 = available_threads() (core/machine.hpp). Each worker calls BLAS
  /// single-threaded. The result does not depend on the number of threads (each block is computed by the
  /// same operations in the same order, whichever thread does it).
  int threads = 0;
  /// Supernodes at the top of the tree (done before the workers start) with at least this many multiply-adds
  /// call OpenBLAS with its own thread count; everything else runs BLAS single-threaded.
  double big_block_work = 1e9;
};

/// Z = A^-1 restricted to the pattern of L, stored in the same layout as L's values (x): the block of
/// supernode J holds Z(rows of J, columns of J), with the top square (the diagonal block) stored in full.
/// Processes supernodes right to left: with Lt = L_RJ L_JJ^-1,
///   Z_RJ = -Z_RR Lt,   Z_JJ = L_JJ^-T L_JJ^-1 - Lt^T Z_RJ,
/// where R are the rows of J below its diagonal block; Z_RR (a clique of the filled graph) has been computed
/// already and is gathered from the supernodes owning R. Cost: about that of the numeric factorization.
/// Throws std::invalid_argument if the factor's row indices are not in the order described above.
std::vector<double> selected_inverse(const SupernodalFactor& L, const SelectedInversionOptions& options = {});

/// diag(A^-1) in the factor's (permuted) numbering, from selected_inverse.
Eigen::VectorXd selected_inverse_diagonal(const SupernodalFactor& L, const std::vector<double>& z);

}  // namespace dualgibbs::detail
