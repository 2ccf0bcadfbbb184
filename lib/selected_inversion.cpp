#include "selected_inversion.hpp"

#include "cholmod_handle.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

// The system BLAS and LAPACK (Fortran interface, LP64; the trailing size_t are gfortran's hidden lengths of
// the character arguments). CHOLMOD's supernodal factorization runs on the same libraries.
extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t, std::size_t);
void dsymm_(const char* side, const char* uplo, const int* m, const int* n, const double* alpha, const double* a,
            const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc,
            std::size_t, std::size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t,
            std::size_t, std::size_t, std::size_t);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info, std::size_t,
             std::size_t);
void dlauum_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
}

namespace dualgibbs::detail {

namespace {

using Stride = Eigen::OuterStride<>;
using MapMat = Eigen::Map<Eigen::MatrixXd, 0, Stride>;
using ConstMapMat = Eigen::Map<const Eigen::MatrixXd, 0, Stride>;

// Checks the layout assumptions: each supernode's rows start with its own columns in order and continue
// strictly ascending below them.
void check_layout(const SupernodalFactor& L) {
  if (L.nsuper < 0 || L.n < 0 || (L.n > 0 && L.super[L.nsuper] != L.n))
    throw std::invalid_argument("selected_inverse: inconsistent supernodal factor");
  for (std::int64_t J = 0; J < L.nsuper; ++J) {
    const std::int64_t k1 = L.super[J], nc = L.super[J + 1] - k1;
    const std::int64_t* rows = L.s + L.pi[J];
    const std::int64_t nrows = L.pi[J + 1] - L.pi[J];
    if (nc <= 0 || nrows < nc || L.px[J + 1] - L.px[J] < nrows * nc)
      throw std::invalid_argument("selected_inverse: supernode " + std::to_string(J) + " has an invalid shape");
    for (std::int64_t k = 0; k < nc; ++k)
      if (rows[k] != k1 + k)
        throw std::invalid_argument("selected_inverse: supernode " + std::to_string(J) +
                                    " does not start with its own columns");
    for (std::int64_t k = nc; k < nrows; ++k)
      if (rows[k] <= rows[k - 1] || rows[k] >= L.n)
        throw std::invalid_argument("selected_inverse: rows of supernode " + std::to_string(J) +
                                    " are not strictly ascending");
  }
}

}  // namespace

std::vector<double> selected_inverse(const SupernodalFactor& L, const SelectedInversionOptions& options) {
  check_layout(L);
  const ScopedBlasThreads single_threaded(1);
  std::vector<double> z(static_cast<std::size_t>(L.xsize), 0.0);
  if (L.n == 0) return z;

  // owner[c] = the supernode holding column c.
  std::vector<std::int64_t> owner(static_cast<std::size_t>(L.n));
  std::int64_t max_nr = 0, max_lt = 0;
  for (std::int64_t J = 0; J < L.nsuper; ++J) {
    for (std::int64_t c = L.super[J]; c < L.super[J + 1]; ++c) owner[c] = J;
    const std::int64_t nc = L.super[J + 1] - L.super[J];
    const std::int64_t nr = L.pi[J + 1] - L.pi[J] - nc;
    max_nr = std::max(max_nr, nr);
    max_lt = std::max(max_lt, nr * nc);
  }
  // Workspace, allocated once: S = Z_RR (lower triangle), Lt = L_RJ L_JJ^-1, positions of R in a supernode.
  std::vector<double> s_buf(static_cast<std::size_t>(max_nr * max_nr));
  std::vector<double> lt_buf(static_cast<std::size_t>(std::max<std::int64_t>(max_lt, 1)));
  std::vector<std::int64_t> pos(static_cast<std::size_t>(std::max<std::int64_t>(max_nr, 1)));
  Eigen::MatrixXd linv;

  for (std::int64_t J = L.nsuper - 1; J >= 0; --J) {
    const std::int64_t nc = L.super[J + 1] - L.super[J];
    const std::int64_t nrows = L.pi[J + 1] - L.pi[J];
    const std::int64_t nr = nrows - nc;
    const std::int64_t* R = L.s + L.pi[J] + nc;  // global rows below the diagonal block
    const double* lb = L.x + L.px[J];
    double* zb = z.data() + L.px[J];

    // Gather S = Z_RR (lower triangle, nr x nr, leading dimension nr). Rows R are a clique of the filled
    // graph: for the run of R owned by supernode K, all later rows of R are rows of K.
    for (std::int64_t a = 0; a < nr;) {
      const std::int64_t K = owner[R[a]];
      const std::int64_t k1 = L.super[K], k2 = L.super[K + 1];
      const std::int64_t* rows_k = L.s + L.pi[K];
      const std::int64_t nrows_k = L.pi[K + 1] - L.pi[K];
      std::int64_t b = a;
      while (b < nr && R[b] < k2) ++b;
      // Positions of R[a..nr) among the rows of K: its own columns directly, the rest by a forward search.
      std::int64_t p = k2 - k1;
      for (std::int64_t i = a; i < nr; ++i) {
        if (R[i] < k2) {
          pos[i] = R[i] - k1;
        } else {
          p = std::lower_bound(rows_k + p, rows_k + nrows_k, R[i]) - rows_k;
          if (p == nrows_k || rows_k[p] != R[i])
            throw std::logic_error("selected_inverse: row " + std::to_string(R[i]) + " missing from supernode " +
                                   std::to_string(K));
          pos[i] = p;
        }
      }
      const double* zk = z.data() + L.px[K];
      for (std::int64_t j = a; j < b; ++j) {
        const double* zcol = zk + (R[j] - k1) * nrows_k;
        double* scol = s_buf.data() + j * nr;
        for (std::int64_t i = j; i < nr; ++i) scol[i] = zcol[pos[i]];
      }
      a = b;
    }

    const double work = static_cast<double>(nr * nr + nc * nc) * static_cast<double>(nc);
    if (work >= options.blas_threshold) {
      const int inc = static_cast<int>(nc), inr = static_cast<int>(nr), ld = static_cast<int>(nrows);
      const double one = 1.0, minus_one = -1.0, zero = 0.0;
      // Z_JJ <- lower(L_JJ); then L_JJ^-1 (dtrtri); then L_JJ^-T L_JJ^-1 (dlauum), lower triangle.
      for (std::int64_t j = 0; j < nc; ++j)
        std::copy(lb + j * nrows + j, lb + j * nrows + nc, zb + j * nrows + j);
      int info = 0;
      dtrtri_("L", "N", &inc, zb, &ld, &info, 1, 1);
      if (info != 0) throw std::logic_error("selected_inverse: dtrtri failed with info " + std::to_string(info));
      dlauum_("L", &inc, zb, &ld, &info, 1);
      if (info != 0) throw std::logic_error("selected_inverse: dlauum failed with info " + std::to_string(info));
      for (std::int64_t j = 0; j < nc; ++j)  // mirror to the upper triangle
        for (std::int64_t i = j + 1; i < nc; ++i) zb[i * nrows + j] = zb[j * nrows + i];
      if (nr > 0) {
        // Lt = L_RJ L_JJ^-1; Z_RJ = -S Lt; Z_JJ -= Lt^T Z_RJ.
        for (std::int64_t j = 0; j < nc; ++j) std::copy(lb + j * nrows + nc, lb + (j + 1) * nrows, lt_buf.data() + j * nr);
        dtrsm_("R", "L", "N", "N", &inr, &inc, &one, lb, &ld, lt_buf.data(), &inr, 1, 1, 1, 1);
        dsymm_("L", "L", &inr, &inc, &minus_one, s_buf.data(), &inr, lt_buf.data(), &inr, &zero, zb + nc, &ld, 1, 1);
        dgemm_("T", "N", &inc, &inc, &inr, &minus_one, lt_buf.data(), &inr, zb + nc, &ld, &one, zb, &ld, 1, 1);
      }
    } else {
      const Eigen::Index enc = nc, enr = nr, ld = nrows;
      ConstMapMat ljj(lb, enc, enc, Stride(ld));
      MapMat zjj(zb, enc, enc, Stride(ld));
      linv.setIdentity(enc, enc);
      ljj.triangularView<Eigen::Lower>().solveInPlace(linv);
      zjj.noalias() = linv.transpose().triangularView<Eigen::Upper>() * linv;
      if (nr > 0) {
        ConstMapMat lrj(lb + nc, enr, enc, Stride(ld));
        MapMat lt(lt_buf.data(), enr, enc, Stride(enr));
        MapMat zrj(zb + nc, enr, enc, Stride(ld));
        ConstMapMat s(s_buf.data(), enr, enr, Stride(enr));
        lt = lrj;
        ljj.triangularView<Eigen::Lower>().solveInPlace<Eigen::OnTheRight>(lt);
        zrj.setZero();
        zrj.noalias() -= s.selfadjointView<Eigen::Lower>() * lt;
        zjj.noalias() -= lt.transpose() * zrj;
      }
    }
  }
  return z;
}

Eigen::VectorXd selected_inverse_diagonal(const SupernodalFactor& L, const std::vector<double>& z) {
  Eigen::VectorXd d(L.n);
  for (std::int64_t J = 0; J < L.nsuper; ++J) {
    const std::int64_t k1 = L.super[J], nc = L.super[J + 1] - k1, nrows = L.pi[J + 1] - L.pi[J];
    const double* zb = z.data() + L.px[J];
    for (std::int64_t k = 0; k < nc; ++k) d[k1 + k] = zb[k * nrows + k];
  }
  return d;
}

}  // namespace dualgibbs::detail
