#include "truth/selected_inversion.hpp"

#include <dualgibbs/core/machine.hpp>

#include "core/blas_threads.hpp"
#include "truth/cholmod_factor.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cassert>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

// The system BLAS and LAPACK (Fortran interface, LP64; the trailing size_t are gfortran's hidden lengths of
// the character arguments). CHOLMOD's supernodal factorization runs on the same libraries.
extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t, std::size_t);
void dsymm_(const char* side, const char* uplo, const int* m, const int* n, const double* alpha, const double* a,
            const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc, std::size_t,
            std::size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t, std::size_t,
            std::size_t, std::size_t);
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

namespace {

// Per-thread workspace: S = Z_RR (lower triangle), Lt = L_RJ L_JJ^-1, positions of R in a supernode.
struct Workspace {
  std::vector<double> s, lt;
  std::vector<std::int64_t> pos;
  Eigen::MatrixXd linv;
};

// Computes the block of Z for supernode J (its columns, all its rows), given the blocks of its ancestors.
void process_supernode(std::int64_t J, const SupernodalFactor& L, const std::vector<std::int64_t>& owner, double* z,
                       Workspace& w, const SelectedInversionOptions& options) {
  const std::int64_t nc = L.super[J + 1] - L.super[J];
  const std::int64_t nrows = L.pi[J + 1] - L.pi[J];
  const std::int64_t nr = nrows - nc;
  const std::int64_t* R = L.s + L.pi[J] + nc;  // global rows below the diagonal block
  const double* lb = L.x + L.px[J];
  double* zb = z + L.px[J];

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
        w.pos[i] = R[i] - k1;
      } else {
        p = std::lower_bound(rows_k + p, rows_k + nrows_k, R[i]) - rows_k;
        if (p == nrows_k || rows_k[p] != R[i])
          throw std::logic_error("selected_inverse: row " + std::to_string(R[i]) + " missing from supernode " +
                                 std::to_string(K));
        w.pos[i] = p;
      }
    }
    const double* zk = z + L.px[K];
    for (std::int64_t j = a; j < b; ++j) {
      const double* zcol = zk + (R[j] - k1) * nrows_k;
      double* scol = w.s.data() + j * nr;
      for (std::int64_t i = j; i < nr; ++i) scol[i] = zcol[w.pos[i]];
    }
    a = b;
  }

  const double work = static_cast<double>(nr * nr + nc * nc) * static_cast<double>(nc);
  if (work >= options.blas_threshold) {
    const int inc = static_cast<int>(nc), inr = static_cast<int>(nr), ld = static_cast<int>(nrows);
    const double one = 1.0, minus_one = -1.0, zero = 0.0;
    // Z_JJ <- lower(L_JJ); then L_JJ^-1 (dtrtri); then L_JJ^-T L_JJ^-1 (dlauum), lower triangle.
    for (std::int64_t j = 0; j < nc; ++j) std::copy(lb + j * nrows + j, lb + j * nrows + nc, zb + j * nrows + j);
    int info = 0;
    dtrtri_("L", "N", &inc, zb, &ld, &info, 1, 1);
    if (info != 0) throw std::logic_error("selected_inverse: dtrtri failed with info " + std::to_string(info));
    dlauum_("L", &inc, zb, &ld, &info, 1);
    if (info != 0) throw std::logic_error("selected_inverse: dlauum failed with info " + std::to_string(info));
    for (std::int64_t j = 0; j < nc; ++j)  // mirror to the upper triangle
      for (std::int64_t i = j + 1; i < nc; ++i) zb[i * nrows + j] = zb[j * nrows + i];
    if (nr > 0) {
      // Lt = L_RJ L_JJ^-1; Z_RJ = -S Lt; Z_JJ -= Lt^T Z_RJ.
      for (std::int64_t j = 0; j < nc; ++j) std::copy(lb + j * nrows + nc, lb + (j + 1) * nrows, w.lt.data() + j * nr);
      dtrsm_("R", "L", "N", "N", &inr, &inc, &one, lb, &ld, w.lt.data(), &inr, 1, 1, 1, 1);
      dsymm_("L", "L", &inr, &inc, &minus_one, w.s.data(), &inr, w.lt.data(), &inr, &zero, zb + nc, &ld, 1, 1);
      dgemm_("T", "N", &inc, &inc, &inr, &minus_one, w.lt.data(), &inr, zb + nc, &ld, &one, zb, &ld, 1, 1);
    }
  } else {
    const Eigen::Index enc = nc, enr = nr, ld = nrows;
    ConstMapMat ljj(lb, enc, enc, Stride(ld));
    MapMat zjj(zb, enc, enc, Stride(ld));
    w.linv.setIdentity(enc, enc);
    ljj.triangularView<Eigen::Lower>().solveInPlace(w.linv);
    zjj.noalias() = w.linv.transpose().triangularView<Eigen::Upper>() * w.linv;
    if (nr > 0) {
      ConstMapMat lrj(lb + nc, enr, enc, Stride(ld));
      MapMat lt(w.lt.data(), enr, enc, Stride(enr));
      MapMat zrj(zb + nc, enr, enc, Stride(ld));
      ConstMapMat s(w.s.data(), enr, enr, Stride(enr));
      lt = lrj;
      ljj.triangularView<Eigen::Lower>().solveInPlace<Eigen::OnTheRight>(lt);
      zrj.setZero();
      zrj.noalias() -= s.selfadjointView<Eigen::Lower>() * lt;
      zjj.noalias() -= lt.transpose() * zrj;
    }
  }
}

// Flops of supernode J's step, for load balancing.
double supernode_work(const SupernodalFactor& L, std::int64_t J) {
  const double nc = static_cast<double>(L.super[J + 1] - L.super[J]);
  const double nr = static_cast<double>(L.pi[J + 1] - L.pi[J]) - nc;
  return nc * (nr * nr + nr * nc + nc * nc) + nr * nr;  // dsymm, dtrsm + dgemm, dtrtri + dlauum, gather
}

// Splits the supernodal elimination tree for `threads` workers: label[J] = -1 for the supernodes done first by
// the calling thread (the top of the tree), else the worker that owns J's subtree. Greedy: keep a frontier of
// subtree roots, deal them to the least-loaded worker (largest first); while the largest subtree is more than
// the fair share, move its root to the serial top and put its children on the frontier instead.
std::vector<int> partition_tree(const SupernodalFactor& L, const std::vector<std::int64_t>& parent, int threads) {
  const std::int64_t ns = L.nsuper;
  std::vector<int> label(static_cast<std::size_t>(ns), -1);
  if (threads <= 1) {
    std::fill(label.begin(), label.end(), 0);
    return label;
  }
  std::vector<double> subtree(static_cast<std::size_t>(ns));
  std::vector<std::vector<std::int64_t>> children(static_cast<std::size_t>(ns));
  std::vector<std::int64_t> frontier;
  for (std::int64_t J = 0; J < ns; ++J) {  // parent[J] > J: children are done before their parent
    subtree[J] += supernode_work(L, J);
    if (parent[J] >= 0) {
      subtree[parent[J]] += subtree[J];
      children[parent[J]].push_back(J);
    } else {
      frontier.push_back(J);
    }
  }
  std::vector<int> root_label;
  for (int iter = 0; iter < 64; ++iter) {
    std::sort(frontier.begin(), frontier.end(),
              [&](std::int64_t a, std::int64_t b) { return subtree[a] > subtree[b]; });
    double sum = 0;
    for (std::int64_t r : frontier) sum += subtree[r];
    std::vector<double> load(static_cast<std::size_t>(threads), 0.0);
    root_label.assign(frontier.size(), 0);
    for (std::size_t k = 0; k < frontier.size(); ++k) {
      const int t = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[t] += subtree[frontier[k]];
      root_label[k] = t;
    }
    const double worst = *std::max_element(load.begin(), load.end());
    if (frontier.empty() || worst <= 1.05 * sum / threads || children[frontier[0]].empty()) break;
    const std::int64_t top = frontier[0];  // stays -1: done serially before the workers start
    frontier.erase(frontier.begin());
    for (std::int64_t c : children[top]) frontier.push_back(c);
  }
  for (std::size_t k = 0; k < frontier.size(); ++k) label[frontier[k]] = root_label[k];
  for (std::int64_t J = ns - 1; J >= 0; --J)  // everything below a frontier root goes with it
    if (label[J] < 0 && parent[J] >= 0 && label[parent[J]] >= 0) label[J] = label[parent[J]];
  return label;
}

}  // namespace

std::vector<double> selected_inverse(const SupernodalFactor& L, const SelectedInversionOptions& options) {
  check_layout(L);
  const int blas_threads = ScopedBlasThreads::current();
  const ScopedBlasThreads single_threaded(1);
  // The selected inverse has the factor's pattern: as much memory again as the factor (torus3:50: 6.4 GiB peak).
  check_memory_fits(
      8.0 * static_cast<double>(L.xsize),
      "selected inversion: the selected inverse (the factor's pattern, " + std::to_string(L.xsize) + " values)");
  std::vector<double> z(static_cast<std::size_t>(L.xsize), 0.0);
  if (L.n == 0) return z;

  // owner[c] = the supernode holding column c; parent[J] = the supernode owning J's first row below its
  // diagonal block (the supernodal elimination tree), -1 for a root.
  std::vector<std::int64_t> owner(static_cast<std::size_t>(L.n)), parent(static_cast<std::size_t>(L.nsuper));
  std::int64_t max_nr = 0, max_lt = 0;
  for (std::int64_t J = 0; J < L.nsuper; ++J)
    for (std::int64_t c = L.super[J]; c < L.super[J + 1]; ++c) owner[c] = J;
  for (std::int64_t J = 0; J < L.nsuper; ++J) {
    const std::int64_t nc = L.super[J + 1] - L.super[J];
    const std::int64_t nr = L.pi[J + 1] - L.pi[J] - nc;
    max_nr = std::max(max_nr, nr);
    max_lt = std::max(max_lt, nr * nc);
    parent[J] = nr > 0 ? owner[L.s[L.pi[J] + nc]] : -1;
    if (parent[J] >= 0 && parent[J] <= J)
      throw std::invalid_argument("selected_inverse: supernode " + std::to_string(J) + " has an earlier parent");
  }
  const auto make_workspace = [&] {
    Workspace w;
    w.s.resize(static_cast<std::size_t>(max_nr * max_nr));
    w.lt.resize(static_cast<std::size_t>(std::max<std::int64_t>(max_lt, 1)));
    w.pos.resize(static_cast<std::size_t>(std::max<std::int64_t>(max_nr, 1)));
    return w;
  };

  const int threads = options.threads > 0 ? options.threads : static_cast<int>(available_threads());
  const std::vector<int> label = partition_tree(L, parent, L.nsuper >= 64 ? threads : 1);
  Workspace w0 = make_workspace();
  // The top of the tree first (label -1), on this thread; then each worker its subtrees, right to left, so that
  // every supernode comes after all its ancestors. Workers write disjoint blocks and read finished ones.
  // The few huge supernodes at the very top (the last separators: 3 of them, with 55% of the work, for the
  // 1000 x 1000 torus) each make calls of a second or so, long enough for OpenBLAS's own threads to pay off.
  for (std::int64_t J = L.nsuper - 1; J >= 0; --J) {
    if (label[J] >= 0) continue;
    if (blas_threads > 1 && supernode_work(L, J) >= options.big_block_work) {
      const ScopedBlasThreads all(blas_threads);
      process_supernode(J, L, owner, z.data(), w0, options);
    } else {
      process_supernode(J, L, owner, z.data(), w0, options);
    }
  }
  const int workers = *std::max_element(label.begin(), label.end()) + 1;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  const auto work = [&](int t, Workspace& w) {
    try {
      for (std::int64_t J = L.nsuper - 1; J >= 0; --J)
        if (label[J] == t) process_supernode(J, L, owner, z.data(), w, options);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  std::vector<Workspace> spaces;
  spaces.reserve(static_cast<std::size_t>(workers));
  for (int t = 1; t < workers; ++t) spaces.push_back(make_workspace());
  for (int t = 1; t < workers; ++t) pool.emplace_back(work, t, std::ref(spaces[t - 1]));
  if (workers > 0) work(0, w0);
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
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
