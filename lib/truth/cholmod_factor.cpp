#include "truth/cholmod_factor.hpp"

#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>

#include "core/blas_threads.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs::detail {

namespace {

static_assert(sizeof(CholmodInt) == sizeof(std::int64_t), "CHOLMOD long interface is 64-bit");

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A factorization can run to the end on a matrix that is positive definite in exact arithmetic but numerically
// singular in double precision (Q = I/s^2 + L/sigma^2 with s/sigma = 1e150 has cond ~ 1e600): its last pivots are
// then rounding noise, and every result computed from the factor is wrong by orders of magnitude (measured: a
// marginal variance of 3e-286 where the truth is 6e298). The computed pivot d_k = L_kk^2 = M_kk - sum_j L_kj^2
// carries a rounding error of about n u M_kk (u the unit roundoff; (|L| |L^T|)_kk = M_kk for a Cholesky factor,
// Higham, Accuracy and Stability, Thm. 10.3). A pivot below kPivotDigits n u M_kk has fewer than 4 trustworthy
// digits: the factor is rejected as not (numerically) positive definite. On tori the resulting relative error of
// the marginal variances is about 0.15 n u M_kk / d_k (measured from 16 to 40000 nodes), so accepted factors give
// them to 5e-5 or better (measured).
constexpr double kPivotDigits = 1e4;

void check_pivots(const SparseMatrix& spd, const SupernodalFactor& v, const std::int64_t* perm) {
  const double tol = kPivotDigits * static_cast<double>(v.n) * std::numeric_limits<double>::epsilon() / 2;
  for (std::int64_t J = 0; J < v.nsuper; ++J) {
    const std::int64_t k1 = v.super[J], nc = v.super[J + 1] - k1, nrows = v.pi[J + 1] - v.pi[J];
    const double* lb = v.x + v.px[J];
    for (std::int64_t k = 0; k < nc; ++k) {
      const double l = lb[k * nrows + k];
      const auto col = static_cast<Eigen::Index>(perm ? perm[k1 + k] : k1 + k);
      const double diag = spd.coeff(col, col);
      if (l * l <= tol * diag)
        throw NotPositiveDefinite(
            "CholeskyFactor: matrix is numerically singular (not positive definite in double precision): the pivot "
            "of column " +
                std::to_string(col) + " is " + number_text(l * l / diag, 3) +
                " times its diagonal entry, below the rounding level " + number_text(tol, 3) +
                " (condition number too large; for a model, s / sigma is too large for the graph)",
            static_cast<Index>(col));
    }
  }
}

// The value of a "Key: N kB" line of a /proc file in bytes, or a negative number where it cannot be read.
double proc_kib_field(const char* file, const std::string& field) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, field.size(), field) == 0) return std::atof(line.c_str() + field.size()) * 1024.0;
  return -1;
}

}  // namespace

double available_memory_bytes() {
  double available = proc_kib_field("/proc/meminfo", "MemAvailable:");
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const double used = proc_kib_field("/proc/self/status", "VmSize:");
    const double room = std::max(0.0, static_cast<double>(limit.rlim_cur) - std::max(0.0, used));
    available = available < 0 ? room : std::min(available, room);
  }
  return available;
}

void check_memory_fits(double bytes, const std::string& what) {
  const double available = available_memory_bytes();
  if (available >= 0 && bytes > 0.9 * available)
    throw FactorizationError(what + " needs " + number_text(bytes / (1 << 30), 3) + " GiB and " +
                             number_text(available / (1 << 30), 3) +
                             " GiB are available (the system's available memory, or the process's address-space "
                             "limit, ulimit -v, when that is smaller; out of memory: the graph's factor fills in; use "
                             "a sampling method such as dual-cv)");
}

namespace {

// Bytes as GiB in messages.
std::string gib(double bytes) { return number_text(bytes / (1 << 30), 3) + " GiB"; }

// Sets the fill-reducing ordering of the next analysis (supernodal LL^T, weighted postorder).
void set_ordering(cholmod_common* c, Ordering ordering) {
  c->postorder = 1;
  switch (ordering) {
    case Ordering::Auto:
      c->nmethods = 0;
      return;
    case Ordering::Amd:
      c->method[0].ordering = CHOLMOD_AMD;
      break;
    case Ordering::Metis:
      c->method[0].ordering = CHOLMOD_METIS;
      break;
    case Ordering::Nesdis:
      c->method[0].ordering = CHOLMOD_NESDIS;
      break;
    case Ordering::Natural:
      c->method[0].ordering = CHOLMOD_NATURAL;
      c->postorder = 0;
      break;
  }
  c->nmethods = 1;
}

// The Ordering matching a factor's L->ordering.
Ordering ordering_of(const cholmod_factor* L) {
  switch (L->ordering) {
    case CHOLMOD_METIS:
      return Ordering::Metis;
    case CHOLMOD_NESDIS:
      return Ordering::Nesdis;
    case CHOLMOD_NATURAL:
    case CHOLMOD_POSTORDERED:
      return Ordering::Natural;
    default:
      return Ordering::Amd;
  }
}

}  // namespace

CholmodFactor::CholmodFactor(Ordering ordering, int blas_threads) : m_ordering(ordering), m_blas_threads(blas_threads) {
  if (!cholmod_l_start(&m_common)) throw FactorizationError("CHOLMOD: cholmod_l_start failed");
  m_common.print = 0;  // errors are reported by exceptions, not printed
  m_common.error_handler = nullptr;
  m_common.supernodal = CHOLMOD_SUPERNODAL;  // LL^T with dense supernodal blocks on the system BLAS
  m_common.final_ll = 1;                     // keep LL^T (x = P^T L^-T z needs it; LDL^T would not do)
  m_common.final_super = 1;                  // keep the supernodal form (selected inversion works on it)
  m_common.quick_return_if_not_posdef = 1;
}

CholmodFactor::~CholmodFactor() {
  release();
  cholmod_l_finish(&m_common);
}

void CholmodFactor::release() noexcept {
  cholmod_l_free_factor(&m_factor, &m_common);
  cholmod_l_free_dense(&m_x, &m_common);
  cholmod_l_free_dense(&m_y, &m_common);
  cholmod_l_free_dense(&m_e, &m_common);
  m_factorized = false;
}

void CholmodFactor::check(const char* what) {
  const int status = m_common.status;
  const std::string where = std::string("CHOLMOD ") + what + ": ";
  switch (status) {
    case CHOLMOD_OK:
    case CHOLMOD_DSMALL:  // diagonal entry tiny but positive: the factor is still valid
      return;
    case CHOLMOD_NOT_POSDEF: {
      // minor is the elimination step that broke down; Perm maps it to the input's numbering.
      const auto step = m_factor ? static_cast<std::int64_t>(m_factor->minor) : -1;
      const bool known = m_factor && step >= 0 && step < static_cast<std::int64_t>(m_factor->n);
      const Index column = known ? static_cast<Index>(static_cast<const std::int64_t*>(m_factor->Perm)[step]) : -1;
      throw NotPositiveDefinite(
          known ? "CholeskyFactor: matrix is not positive definite (the factorization broke down at column " +
                      std::to_string(column) + ", elimination step " + std::to_string(step) + " of " +
                      std::to_string(m_factor->n) + ")"
                : where + "matrix is not positive definite",
          column);
    }
    case CHOLMOD_NOT_INSTALLED:
      throw FactorizationError(where + "a required CHOLMOD module is not installed");
    case CHOLMOD_OUT_OF_MEMORY:
      throw FactorizationError(where + "out of memory");
    case CHOLMOD_TOO_LARGE:
      throw FactorizationError(where + "problem too large (integer overflow)");
    case CHOLMOD_INVALID:
      throw FactorizationError(where + "invalid input");
    case CHOLMOD_GPU_PROBLEM:
      throw FactorizationError(where + "GPU problem");
    default:
      if (status < 0) throw FactorizationError(where + "failed with status " + std::to_string(status));
      return;  // other warnings
  }
}

// stype = 1: CHOLMOD reads the upper triangle. A symmetric CSR matrix's arrays are also its CSC arrays; the
// indices are the 64-bit copies of the analyzed pattern, the values are referenced (CHOLMOD does not write them).
cholmod_sparse CholmodFactor::view_of(const SparseMatrix& m) const {
  cholmod_sparse a{};
  a.nrow = a.ncol = static_cast<size_t>(m_n);
  a.nzmax = m_i.size();
  a.p = const_cast<CholmodInt*>(m_p.data());
  a.i = const_cast<CholmodInt*>(m_i.data());
  a.x = const_cast<double*>(m.valuePtr());
  a.stype = 1;
  a.itype = CHOLMOD_LONG;
  a.xtype = CHOLMOD_REAL;
  a.dtype = CHOLMOD_DOUBLE;
  a.sorted = 1;
  a.packed = 1;
  return a;
}

void CholmodFactor::analyze(const SparseMatrix& pattern) {
  if (pattern.rows() != pattern.cols() || pattern.rows() == 0 || !pattern.isCompressed())
    throw std::invalid_argument("CholmodFactor::analyze: the pattern must be square, non-empty and compressed");
  release();
  m_n = static_cast<Index>(pattern.rows());
  m_p.assign(pattern.outerIndexPtr(), pattern.outerIndexPtr() + pattern.outerSize() + 1);
  m_i.assign(pattern.innerIndexPtr(), pattern.innerIndexPtr() + pattern.nonZeros());
  m_stats = FactorStats{};
  set_ordering(&m_common, m_ordering);
  cholmod_sparse a = view_of(pattern);
  const auto t0 = Clock::now();
  m_factor = cholmod_l_analyze(&a, &m_common);
  check("analyze");
  if (!m_factor) throw FactorizationError("CHOLMOD analyze: no factor returned");
  m_stats.analyze_seconds = seconds_since(t0);
  m_stats.flops = m_common.fl;
  m_stats.nnz_L = m_common.lnz;
  m_stats.ordering = ordering_of(m_factor);
}

void CholmodFactor::factorize(const SparseMatrix& values, bool pivot_check) {
  if (!m_factor) throw std::invalid_argument("CholeskyFactor::factorize: no pattern analyzed");
  const auto nnz = static_cast<std::size_t>(values.nonZeros());
  if (values.rows() != m_n || values.cols() != m_n || !values.isCompressed() || nnz != m_i.size() ||
      !std::equal(m_p.begin(), m_p.end(), values.outerIndexPtr()) ||
      !std::equal(m_i.begin(), m_i.end(), values.innerIndexPtr()))
    throw std::invalid_argument("CholeskyFactor::factorize: the matrix does not have the analyzed pattern (" +
                                std::to_string(m_n) + " x " + std::to_string(m_n) + ", " + std::to_string(m_i.size()) +
                                " non-zeros)");
  m_factorized = false;
  // A supernodal factor needs its values (xsize doubles) at once, and CHOLMOD allocates them in one block: on a
  // graph whose factor fills in (an expander of 10^5 nodes needs tens of GB) that allocation can succeed under
  // Linux's overcommit and then drive the machine into swap or the OOM killer. Refuse it beforehand with the size,
  // together with everything else the factorization (and a planned selected inversion) will allocate: under a
  // limit that the factor alone fits (torus3:50 under ulimit -v 6 GiB) the method otherwise failed with CHOLMOD's
  // bare "out of memory" after 81 s of factorization, or after it for the inverse.
  const PeakEstimate peak = peak_estimate();
  std::string parts =
      "its values " + gib(peak.factor) + " with the numeric factorization's workspace " + gib(peak.factorize_workspace);
  if (m_plan_inverse) parts += ", then with the selected inverse and its workspace " + gib(peak.inverse);
  check_memory_fits(peak.total(), "CHOLMOD factorize: the factor of this " + std::to_string(m_n) + " x " +
                                      std::to_string(m_n) + " matrix (" + parts + ")");
  cholmod_sparse a = view_of(values);
  const auto t0 = Clock::now();
  {
    std::optional<ScopedBlasThreads> limit;
    if (m_blas_threads > 0) limit.emplace(m_blas_threads);
    cholmod_l_factorize(&a, m_factor, &m_common);
  }
  m_stats.factorize_seconds = seconds_since(t0);
  // cholmod_factorize returns TRUE on an indefinite matrix: the verdict is in status and L->minor.
  if (m_common.status >= CHOLMOD_OK && m_factor->minor < m_factor->n) m_common.status = CHOLMOD_NOT_POSDEF;
  check("factorize");
  if (!m_factor->is_ll || !m_factor->is_super)
    throw FactorizationError("CHOLMOD factorize: expected a supernodal LL^T factor");
  if (pivot_check) check_pivots(values, view(), permutation());
  m_stats.supernodes = static_cast<std::int64_t>(m_factor->nsuper);
  m_stats.stored_L = static_cast<std::int64_t>(m_factor->xsize);
  m_factorized = true;
}

CholmodFactor::PeakEstimate CholmodFactor::peak_estimate() const {
  if (!m_factor) throw std::logic_error("CholmodFactor::peak_estimate: no pattern analyzed");
  const cholmod_factor* L = m_factor;
  const double n = static_cast<double>(m_n), nnz = static_cast<double>(m_i.size());
  PeakEstimate e;
  if (!L->is_super) {  // not reached with CHOLMOD_SUPERNODAL; the simplicial factor's values and pattern
    e.factor = 16.0 * m_stats.nnz_L;
    e.factorize_workspace = 8.0 * 4 * n;
    if (m_plan_inverse) e.inverse = 8.0 * m_stats.nnz_L;
    return e;
  }
  const double nsuper = static_cast<double>(L->nsuper);
  e.factor = 8.0 * static_cast<double>(L->xsize);
  // cholmod_super_numeric (SuiteSparse's Supernodal/cholmod_super_numeric.c): the update matrix C (maxcsize
  // doubles), the permuted upper triangle S = A(p,p)' (cholmod_ptranspose: nnz values and indices, n + 1 column
  // pointers) and the integer workspace (Iwork: 2 n + 5 nsuper; Map, Head, Flag: n each).
  e.factorize_workspace =
      8.0 * static_cast<double>(L->maxcsize) + 16.0 * nnz + 8.0 * (n + 1) + 8.0 * (5 * n + 5 * nsuper);
  if (m_plan_inverse) {
    // selected_inverse (selected_inversion.cpp): z with the factor's xsize values, the owner and parent maps and
    // the tree's labels, and the dense blocks of the largest supernode: s (nr x nr), lt (nr x nc) and pos (nr),
    // with nr its rows below the diagonal block. The peak (PeakEstimate::total) against the measured peak resident
    // set of `dualgibbs exact` (2 hardware threads, process about 34 MiB before the factor): torus3:30 estimate
    // 455 MiB, measured 505; kregular:8000,12 estimate 680 MiB, measured 716; torus3:50 estimate 6.25 GiB,
    // measured 6.4 GiB. check_memory_fits leaves 10% beside it.
    const auto* super = static_cast<const std::int64_t*>(L->super);
    const auto* pi = static_cast<const std::int64_t*>(L->pi);
    double max_nr = 0, max_lt = 0;
    for (std::size_t J = 0; J < L->nsuper; ++J) {
      const double nc = static_cast<double>(super[J + 1] - super[J]);
      const double nr = static_cast<double>(pi[J + 1] - pi[J]) - nc;
      max_nr = std::max(max_nr, nr);
      max_lt = std::max(max_lt, nr * nc);
    }
    // One set of blocks per worker thread (SelectedInversionOptions::threads = 0: available_threads()).
    const double workers = available_threads();
    e.inverse = 8.0 * static_cast<double>(L->xsize) + 8.0 * (n + 3 * nsuper) +
                workers * 8.0 * (max_nr * max_nr + max_lt + max_nr);
  }
  return e;
}

SupernodalFactor CholmodFactor::view() const {
  const cholmod_factor* L = m_factor;
  SupernodalFactor v;
  v.n = static_cast<std::int64_t>(L->n);
  v.nsuper = static_cast<std::int64_t>(L->nsuper);
  v.xsize = static_cast<std::int64_t>(L->xsize);
  v.super = static_cast<const std::int64_t*>(L->super);
  v.pi = static_cast<const std::int64_t*>(L->pi);
  v.px = static_cast<const std::int64_t*>(L->px);
  v.s = static_cast<const std::int64_t*>(L->s);
  v.x = static_cast<const double*>(L->x);
  return v;
}

const std::int64_t* CholmodFactor::permutation() const { return static_cast<const std::int64_t*>(m_factor->Perm); }

double CholmodFactor::log_determinant() const {
  const SupernodalFactor v = view();
  double sum = 0;
  for (std::int64_t J = 0; J < v.nsuper; ++J) {
    const std::int64_t nc = v.super[J + 1] - v.super[J], nrows = v.pi[J + 1] - v.pi[J];
    const double* lb = v.x + v.px[J];
    for (std::int64_t k = 0; k < nc; ++k) sum += std::log(lb[k * nrows + k]);
  }
  return 2 * sum;
}

Eigen::MatrixXd CholmodFactor::solve(int sys, const Eigen::MatrixXd& b) const {
  cholmod_dense bv{};
  bv.nrow = static_cast<size_t>(b.rows());
  bv.ncol = static_cast<size_t>(b.cols());
  bv.nzmax = bv.nrow * bv.ncol;
  bv.d = bv.nrow;
  bv.x = const_cast<double*>(b.data());  // input only
  bv.xtype = CHOLMOD_REAL;
  bv.dtype = CHOLMOD_DOUBLE;
  auto& c = const_cast<cholmod_common&>(m_common);
  // Several right-hand sides go through BLAS-3 blocks, whose last bits depend on OpenBLAS's thread count.
  std::optional<ScopedBlasThreads> limit;
  if (m_blas_threads > 0) limit.emplace(m_blas_threads);
  cholmod_dense* x = cholmod_l_solve(sys, m_factor, &bv, &c);
  limit.reset();
  if (!x || c.status < CHOLMOD_OK) {
    cholmod_l_free_dense(&x, &c);
    const_cast<CholmodFactor*>(this)->check("solve");
    throw FactorizationError("CHOLMOD solve: no result");
  }
  Eigen::MatrixXd out(b.rows(), b.cols());
  const double* xs = static_cast<const double*>(x->x);
  for (Eigen::Index j = 0; j < b.cols(); ++j)
    std::copy(xs + j * static_cast<Eigen::Index>(x->d), xs + j * static_cast<Eigen::Index>(x->d) + b.rows(),
              out.col(j).data());
  cholmod_l_free_dense(&x, &c);
  return out;
}

void CholmodFactor::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
  cholmod_dense bv{};
  bv.nrow = bv.nzmax = bv.d = static_cast<size_t>(b.size());
  bv.ncol = 1;
  bv.x = const_cast<double*>(b.data());
  bv.xtype = CHOLMOD_REAL;
  bv.dtype = CHOLMOD_DOUBLE;
  auto& c = const_cast<cholmod_common&>(m_common);
  if (!cholmod_l_solve2(CHOLMOD_A, m_factor, &bv, nullptr, &m_x, nullptr, &m_y, &m_e, &c) || c.status < CHOLMOD_OK) {
    const_cast<CholmodFactor*>(this)->check("solve");
    throw FactorizationError("CHOLMOD solve: no result");
  }
  x = Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(m_x->x), b.size());
}

void check_symmetric(const SparseMatrix& m, const char* who) {
  const std::string w = who;
  if (m.rows() != m.cols())
    throw std::invalid_argument(w + ": matrix is " + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
                                ", not square");
  if (m.rows() == 0) throw std::invalid_argument(w + ": matrix is empty");
  for (Eigen::Index k = 0; k < m.nonZeros(); ++k)
    if (!std::isfinite(m.valuePtr()[k])) throw std::invalid_argument(w + ": matrix has a non-finite entry");
  const SparseMatrix t = m.transpose();
  for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
    SparseMatrix::InnerIterator a(m, r), b(t, r);
    while (a || b) {
      double va = 0, vb = 0;
      Eigen::Index col;
      if (a && (!b || a.col() <= b.col())) {
        col = a.col();
        va = a.value();
        if (b && b.col() == col) {
          vb = b.value();
          ++b;
        }
        ++a;
      } else {
        col = b.col();
        vb = b.value();
        ++b;
      }
      if (std::abs(va - vb) > 8 * std::numeric_limits<double>::epsilon() * std::max(std::abs(va), std::abs(vb)))
        throw std::invalid_argument(w + ": matrix is not symmetric: entry (" + std::to_string(r) + ", " +
                                    std::to_string(col) + ") differs from its transpose");
    }
  }
}

}  // namespace dualgibbs::detail
