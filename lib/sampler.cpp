// Scan orders, random streams, and the constructors of the shipped site kernels.
#include <dualgibbs/sampler.hpp>

#include <boost/random/normal_distribution.hpp>

#include <Eigen/Cholesky>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dualgibbs {

ScanOrder parse_scan_order(const std::string& name) {
  if (name == "random") return ScanOrder::Random;
  if (name == "permutation") return ScanOrder::Permutation;
  if (name == "fixed") return ScanOrder::Fixed;
  throw std::invalid_argument("unknown scan order '" + name + "' (expected 'random', 'permutation' or 'fixed')");
}

const char* to_string(ScanOrder scan) noexcept {
  switch (scan) {
    case ScanOrder::Random: return "random";
    case ScanOrder::Permutation: return "permutation";
    case ScanOrder::Fixed: return "fixed";
  }
  return "unknown";
}

// ---- random streams --------------------------------------------------------------------------------------

namespace {

// The SplitMix64 finalizer: a bijection of 64-bit words with full avalanche.
std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__extension__ using u128 = unsigned __int128;

}  // namespace

ChainEngine make_stream(std::uint64_t seed, std::uint64_t chain, StreamPurpose purpose) noexcept {
  std::array<std::uint64_t, 4> s{};
  for (std::uint64_t k = 0; k < 4; ++k) {
    const std::uint64_t a = mix64(seed + (k + 1) * 0x9e3779b97f4a7c15ULL);
    const std::uint64_t b = mix64(a ^ chain);  // bijective in chain for a fixed seed and word
    s[k] = mix64(b + static_cast<std::uint64_t>(purpose) * 0xd1b54a32d192ed03ULL);
  }
  if ((s[0] | s[1] | s[2] | s[3]) == 0) s[0] = 1;  // the one forbidden state; never seen in practice
  return ChainEngine(s);
}

std::uint64_t uniform_below(ChainEngine& rng, std::uint64_t n) noexcept {
  // Lemire, "Fast random integer generation in an interval" (2019): multiply-shift, rejecting the
  // (2^64 mod n) low products that would bias the result.
  u128 m = static_cast<u128>(rng()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(rng()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double standard_normal(ChainEngine& rng) noexcept {
  boost::random::normal_distribution<double> normal;
  return normal(rng);
}

namespace detail {

void fill_standard_normals(ChainEngine& rng, std::size_t count, double* out, std::size_t stride) noexcept {
  ChainEngine local = rng;  // a local copy keeps the state in registers
  boost::random::normal_distribution<double> normal;
  for (std::size_t t = 0; t < count; ++t) out[t * stride] = normal(local);
  rng = local;
}

void fill_uniform_indices(ChainEngine& rng, std::uint32_t n, std::size_t count, Index* out) noexcept {
  ChainEngine local = rng;
  for (std::size_t t = 0; t < count; ++t) out[t] = static_cast<Index>(uniform_below(local, n));
  rng = local;
}

void fill_permutation(ChainEngine& rng, Index n, Index* out) noexcept {
  for (Index i = 0; i < n; ++i) out[i] = i;
  ChainEngine local = rng;
  for (Index i = n - 1; i > 0; --i) {
    const auto j = static_cast<Index>(uniform_below(local, static_cast<std::uint64_t>(i) + 1));
    std::swap(out[i], out[j]);
  }
  rng = local;
}

}  // namespace detail

// ---- CsrKernel -------------------------------------------------------------------------------------------

namespace {

std::string number(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

std::string entry(Index i, Index j) { return "M(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

}  // namespace

CsrKernel::CsrKernel(const SparseMatrix& precision_in, SpdCheck check) {
  if (precision_in.rows() != precision_in.cols())
    throw std::invalid_argument("CsrKernel: the precision is " + std::to_string(precision_in.rows()) + " x " +
                                std::to_string(precision_in.cols()) + ", not square");
  if (precision_in.rows() < 1) throw std::invalid_argument("CsrKernel: the precision is empty (0 x 0)");
  SparseMatrix compressed;
  const SparseMatrix* mp = &precision_in;
  if (!precision_in.isCompressed()) {
    compressed = precision_in;
    compressed.makeCompressed();
    mp = &compressed;
  }
  const SparseMatrix& M = *mp;
  m_n = static_cast<Index>(M.rows());
  const auto n = static_cast<std::size_t>(m_n);
  m_diag.assign(n, 0.0);
  std::vector<char> has_diag(n, 0);

  // Pass 1: finite values, diagonal present and positive.
  for (Index i = 0; i < m_n; ++i) {
    for (SparseMatrix::InnerIterator it(M, i); it; ++it) {
      const Index j = static_cast<Index>(it.col());
      if (!std::isfinite(it.value()))
        throw std::invalid_argument("CsrKernel: " + entry(i, j) + " = " + number(it.value()) + " is not finite");
      if (j == i) {
        m_diag[static_cast<std::size_t>(i)] = it.value();
        has_diag[static_cast<std::size_t>(i)] = 1;
      }
    }
    if (!has_diag[static_cast<std::size_t>(i)])
      throw std::invalid_argument("CsrKernel: diagonal entry " + entry(i, i) +
                                  " is missing (zero): the precision is not positive definite");
    if (!(m_diag[static_cast<std::size_t>(i)] > 0.0))
      throw std::invalid_argument("CsrKernel: diagonal entry " + entry(i, i) + " = " +
                                  number(m_diag[static_cast<std::size_t>(i)]) +
                                  " is not positive: the precision is not positive definite");
  }

  // Pass 2: symmetry and positive 2x2 principal minors; build the scaled off-diagonal CSR.
  m_offsets.assign(n + 1, 0);
  for (Index i = 0; i < m_n; ++i) {
    const double dii = m_diag[static_cast<std::size_t>(i)];
    for (SparseMatrix::InnerIterator it(M, i); it; ++it) {
      const Index j = static_cast<Index>(it.col());
      if (j == i) continue;
      const double a = it.value(), b = M.coeff(j, i);
      if (std::abs(a - b) > 1e-12 * std::max(std::abs(a), std::abs(b)))
        throw std::invalid_argument("CsrKernel: " + entry(i, j) + " = " + number(a) + " but " + entry(j, i) + " = " +
                                    number(b) + ": the precision must be symmetric");
      if (a == 0.0) continue;
      const double djj = m_diag[static_cast<std::size_t>(j)];
      if (!(a * a < dii * djj))
        throw std::invalid_argument("CsrKernel: " + entry(i, j) + " = " + number(a) + " with diagonal " + number(dii) +
                                    " and " + number(djj) +
                                    ": a 2x2 principal minor is not positive, so the precision is not positive definite");
      m_cols.push_back(j);
      m_coef.push_back(-a / dii);
    }
    m_offsets[static_cast<std::size_t>(i) + 1] = static_cast<Index>(m_cols.size());
  }
  m_sd.resize(n);
  for (std::size_t i = 0; i < n; ++i) m_sd[i] = 1.0 / std::sqrt(m_diag[i]);

  // Optional factorization: the only complete test of positive definiteness.
  const bool dense = check == SpdCheck::Auto && m_n <= kDenseCheckMaxSize;
  if (dense) {
    const Eigen::MatrixXd D = Eigen::MatrixXd(M);
    Eigen::LLT<Eigen::MatrixXd> llt(D);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("CsrKernel: the precision (" + std::to_string(m_n) + " x " + std::to_string(m_n) +
                                  ") is not positive definite (dense Cholesky factorization failed)");
  } else if (check == SpdCheck::Cholesky) {
    Eigen::SparseMatrix<double, Eigen::ColMajor, int> C(M);
    Eigen::SimplicialLLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int>, Eigen::Lower, Eigen::AMDOrdering<int>> llt(C);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("CsrKernel: the precision (" + std::to_string(m_n) + " x " + std::to_string(m_n) +
                                  ") is not positive definite (sparse Cholesky factorization failed)");
  }
}

// ---- DualIncidenceKernel ---------------------------------------------------------------------------------

DualIncidenceKernel::DualIncidenceKernel(const Model& model) : m_num_nodes(model.num_nodes()) {
  const Index m = model.num_edges();
  if (m < 1)
    throw std::invalid_argument("DualIncidenceKernel: the model has no edges, so the dual domain is empty");
  const Eigen::VectorXd& s2 = model.node_variances();
  const Eigen::VectorXd& sig2 = model.edge_variances();
  m_edges.resize(static_cast<std::size_t>(m));
  for (Index e = 0; e < m; ++e) {
    const Edge& ed = model.graph().edge(e);
    const double r = sig2[e] + s2[ed.head] + s2[ed.tail];  // R_ee [eqn:QPNHDual]
    EdgeCoef& k = m_edges[static_cast<std::size_t>(e)];
    k.head = ed.head;
    k.tail = ed.tail;
    k.alpha = s2[ed.head] / r;
    k.beta = s2[ed.tail] / r;
    k.gamma = k.alpha + k.beta;
    k.sd = 1.0 / std::sqrt(r);
  }
}

}  // namespace dualgibbs
