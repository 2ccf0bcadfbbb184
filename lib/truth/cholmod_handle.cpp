#include "truth/cholmod_handle.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dualgibbs::detail {

CholmodCommon::CholmodCommon() {
  if (!cholmod_l_start(&m_common)) throw FactorizationError("CHOLMOD: cholmod_l_start failed");
  m_common.print = 0;  // errors are reported by exceptions, not printed
  m_common.error_handler = nullptr;
  m_common.supernodal = CHOLMOD_SUPERNODAL;  // LL^T with dense supernodal blocks on the system BLAS
  m_common.final_ll = 1;                     // keep LL^T (x = P^T L^-T z needs it; LDL^T would not do)
  m_common.final_super = 1;                  // keep the supernodal form (selected inversion works on it)
  m_common.quick_return_if_not_posdef = 1;
}

CholmodCommon::~CholmodCommon() { cholmod_l_finish(&m_common); }

void CholmodCommon::check(const char* what) {
  const int status = m_common.status;
  std::string where = std::string("CHOLMOD ") + what + ": ";
  switch (status) {
    case CHOLMOD_OK:
    case CHOLMOD_DSMALL:  // diagonal entry tiny but positive: the factor is still valid
      return;
    case CHOLMOD_NOT_POSDEF:
      throw NotPositiveDefinite(where + "matrix is not positive definite", -1);
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

SymmetricView::SymmetricView(const SparseMatrix& m)
    : m_p(m.outerIndexPtr(), m.outerIndexPtr() + m.outerSize() + 1),
      m_i(m.innerIndexPtr(), m.innerIndexPtr() + m.nonZeros()) {
  m_sparse.nrow = static_cast<size_t>(m.rows());
  m_sparse.ncol = static_cast<size_t>(m.cols());
  m_sparse.nzmax = static_cast<size_t>(m.nonZeros());
  m_sparse.p = m_p.data();
  m_sparse.i = m_i.data();
  m_sparse.nz = nullptr;
  m_sparse.x = const_cast<double*>(m.valuePtr());  // CHOLMOD does not write to its input
  m_sparse.z = nullptr;
  m_sparse.stype = 1;
  m_sparse.itype = CHOLMOD_LONG;
  m_sparse.xtype = CHOLMOD_REAL;
  m_sparse.dtype = CHOLMOD_DOUBLE;
  m_sparse.sorted = 1;
  m_sparse.packed = 1;
}

cholmod_dense dense_view(const Eigen::MatrixXd& m) {
  cholmod_dense d{};
  d.nrow = static_cast<size_t>(m.rows());
  d.ncol = static_cast<size_t>(m.cols());
  d.nzmax = d.nrow * d.ncol;
  d.d = d.nrow;
  d.x = const_cast<double*>(m.data());  // input only
  d.z = nullptr;
  d.xtype = CHOLMOD_REAL;
  d.dtype = CHOLMOD_DOUBLE;
  return d;
}

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

}  // namespace dualgibbs::detail
