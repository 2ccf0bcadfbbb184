#pragma once
// Dense, independent oracles for the sampler tests: the matrices of the model built from the edge list (not
// from Model's sparse builders), the exact linear evolution of the mean and second moment of a Gibbs chain,
// and z-score checks with a Bonferroni threshold.
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/kernels.hpp>

#include <boost/math/distributions/normal.hpp>
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace oracle {

using dualgibbs::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// A site kernel written outside the library: the CSR update of any SPD matrix through CsrKernel's public members
// only, without run_updates (so the sampler runs its generic loop) and without set_site (so the relaxed schemes
// refuse it). Its chains must be the CSR kernel's.
class UserKernel {
 public:
  explicit UserKernel(const dualgibbs::CsrKernel& inner) : m_inner(inner) {}
  Index dimension() const noexcept { return m_inner.dimension(); }
  Index tally_dimension() const noexcept { return 0; }
  double conditional_sd(Index i) const noexcept { return m_inner.conditional_sd(i); }
  template <int W>
  void conditional_mean(Index i, const double* z, const double* t, double* mean) const noexcept {
    m_inner.conditional_mean<W>(i, z, t, mean);
  }
  template <int W>
  void update(Index i, double* z, double* t, const double* eps) const noexcept {
    double mean[W];
    conditional_mean<W>(i, z, t, mean);
    const double sd = conditional_sd(i);
    for (int c = 0; c < W; ++c) z[static_cast<std::size_t>(i) * W + c] = mean[c] + sd * eps[c];
  }
  template <int W>
  void prefetch(Index, const double*, const double*) const noexcept {}
  void prefetch_row(Index) const noexcept {}
  template <int W>
  void rebuild_tally(const double*, double*) const noexcept {}

 private:
  const dualgibbs::CsrKernel& m_inner;
};

// B[head, e] = +1, B[tail, e] = -1, or the weights of a weighted incidence.
inline MatrixXd incidence(const dualgibbs::Model& m) {
  MatrixXd B = MatrixXd::Zero(m.num_nodes(), m.num_edges());
  for (Index e = 0; e < m.num_edges(); ++e) {
    B(m.graph().edge(e).head, e) = m.head_weight(e);
    B(m.graph().edge(e).tail, e) = m.tail_weight(e);
  }
  return B;
}
inline VectorXd node_var(const dualgibbs::Model& m) {
  VectorXd v(m.num_nodes());
  for (Index i = 0; i < m.num_nodes(); ++i) v[i] = m.node_sd()[i] * m.node_sd()[i];
  return v;
}
inline VectorXd edge_var(const dualgibbs::Model& m) {
  VectorXd v(m.num_edges());
  for (Index i = 0; i < m.num_edges(); ++i) v[i] = m.edge_sd()[i] * m.edge_sd()[i];
  return v;
}
// Q = D_s^-1 + B D_sigma^-1 B^T [eqn:QPNH]
inline MatrixXd primal_precision(const dualgibbs::Model& m) {
  const MatrixXd B = incidence(m);
  return MatrixXd(node_var(m).cwiseInverse().asDiagonal()) +
         B * edge_var(m).cwiseInverse().asDiagonal() * B.transpose();
}
// R = D_sigma + B^T D_s B [eqn:QPNHDual]
inline MatrixXd dual_precision(const dualgibbs::Model& m) {
  const MatrixXd B = incidence(m);
  return MatrixXd(edge_var(m).asDiagonal()) + B.transpose() * node_var(m).asDiagonal() * B;
}

// A small heterogeneous model with cycles, a pendant node and unequal degrees: 6 nodes, 8 edges.
inline dualgibbs::Model small_model() {
  dualgibbs::Graph g(6, {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 1}, {4, 0}, {5, 3}});
  return dualgibbs::Model(std::move(g), std::vector<double>{1.0, 0.7, 1.3, 0.9, 1.6, 0.5},
                          std::vector<double>{0.4, 0.9, 0.3, 1.2, 0.6, 0.8, 0.5, 1.1});
}

// small_model() with a weighted, signed incidence: b_head and b_tail of mixed signs and sizes (the general form).
inline dualgibbs::Model small_signed_model() {
  const dualgibbs::Model m = small_model();
  return dualgibbs::Model(m.graph(), m.node_sd(), m.edge_sd(), {1.3, 0.6, 1.0, 2.1, 0.8, 1.7, 0.9, 1.2},
                          {0.7, -1.4, 1.1, -0.5, 1.9, 0.6, -1.3, 0.8});
}

// The same graph with a signed unit incidence: every |b| = 1, with both signs at the heads and at the tails (the
// dual kernel's 32-byte signed record).
inline dualgibbs::Model small_signed_unit_model() {
  const dualgibbs::Model m = small_model();
  return dualgibbs::Model(m.graph(), m.node_sd(), m.edge_sd(), {1.0, -1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0},
                          {1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0});
}

// The site-update matrix of coordinate i: T_i = I - e_i (D^-1 M)_{i,:}, so that z <- T_i z + M_ii^{-1/2} eps e_i.
inline MatrixXd site_matrix(const MatrixXd& M, Index i) {
  MatrixXd T = MatrixXd::Identity(M.rows(), M.cols());
  T.row(i) -= M.row(i) / M(i, i);
  return T;
}

// Exact first and second moments (mean mu, P = E[z z^T]) of a Gibbs chain, advanced one sweep at a time.
struct Moments {
  VectorXd mean;
  MatrixXd second;  // E[z z^T]
  MatrixXd covariance() const { return second - mean * mean.transpose(); }
};

inline void apply_site(const MatrixXd& M, Index i, Moments& mo, bool noise = true) {
  const MatrixXd T = site_matrix(M, i);
  mo.mean = T * mo.mean;
  mo.second = T * mo.second * T.transpose();
  if (noise) mo.second(i, i) += 1.0 / M(i, i);
}

// Fixed scan: sites 0..n-1 in order.
inline Moments sweep_fixed(const MatrixXd& M, Moments mo, bool noise = true) {
  for (Index i = 0; i < M.rows(); ++i) apply_site(M, i, mo, noise);
  return mo;
}

// Random scan: n updates, each at a uniformly chosen site: the expectation of the update over the pick.
inline Moments sweep_random(const MatrixXd& M, Moments mo, bool noise = true) {
  const Index n = static_cast<Index>(M.rows());
  for (Index t = 0; t < n; ++t) {
    Moments acc{VectorXd::Zero(n), MatrixXd::Zero(n, n)};
    for (Index i = 0; i < n; ++i) {
      Moments one = mo;
      apply_site(M, i, one, noise);
      acc.mean += one.mean / n;
      acc.second += one.second / n;
    }
    mo = acc;
  }
  return mo;
}

// Permutation scan: the average over all n! orders of a sweep (n small).
inline Moments sweep_permutation(const MatrixXd& M, const Moments& mo, bool noise = true) {
  const Index n = static_cast<Index>(M.rows());
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  Moments acc{VectorXd::Zero(n), MatrixXd::Zero(n, n)};
  double count = 0;
  do {
    Moments one = mo;
    for (Index i : order) apply_site(M, i, one, noise);
    acc.mean += one.mean;
    acc.second += one.second;
    count += 1;
  } while (std::next_permutation(order.begin(), order.end()));
  acc.mean /= count;
  acc.second /= count;
  return acc;
}

// Two-sided z threshold such that `tests` z-scores all pass with probability >= 1 - alpha if each is N(0, 1)
// (Bonferroni).
inline double bonferroni_z(double alpha, double tests) {
  boost::math::normal n;
  return boost::math::quantile(boost::math::complement(n, alpha / (2.0 * tests)));
}

// Checks sample means and second moments of the columns of X (independent draws) against exact values.
// Means use the exact variance; second moments use the sample variance of the products. Returns the largest |z|.
inline double check_moments(const MatrixXd& X, const Moments& exact, double z_max, const std::string& what) {
  const Index d = static_cast<Index>(X.rows());
  const double N = static_cast<double>(X.cols());
  const MatrixXd Xt = X.transpose();  // contiguous columns
  const MatrixXd cov = exact.covariance();
  double worst = 0;
  for (Index i = 0; i < d; ++i) {
    const double m = Xt.col(i).mean();
    const double z = (m - exact.mean[i]) / std::sqrt(std::max(cov(i, i), 1e-300) / N);
    worst = std::max(worst, std::abs(z));
    BOOST_TEST(std::abs(z) < z_max,
               what << ": mean of coordinate " << i << " = " << m << ", exact " << exact.mean[i] << ", z = " << z);
  }
  for (Index i = 0; i < d; ++i)
    for (Index j = i; j < d; ++j) {
      const Eigen::ArrayXd prod = Xt.col(i).array() * Xt.col(j).array();
      const double m = prod.mean();
      const double var = (prod - m).square().sum() / (N - 1);
      const double z = (m - exact.second(i, j)) / std::sqrt(var / N);
      worst = std::max(worst, std::abs(z));
      BOOST_TEST(std::abs(z) < z_max, what << ": E[z_" << i << " z_" << j << "] = " << m << ", exact "
                                           << exact.second(i, j) << ", z = " << z);
    }
  return worst;
}

// Number of z-scores check_moments makes for dimension d.
inline double moment_tests(Index d) { return d + d * (d + 1) / 2.0; }

// ---- ensembles against the exact moments ----

using dualgibbs::Domain;
using dualgibbs::EnsembleOptions;
using dualgibbs::InitialState;
using dualgibbs::Model;
using dualgibbs::ScanOrder;

inline MatrixXd precision(const Model& model, Domain d) {
  return d == Domain::Primal ? primal_precision(model) : dual_precision(model);
}

inline Moments initial_moments(const MatrixXd& M, const EnsembleOptions& o) {
  const Eigen::Index n = M.rows();
  if (o.init == InitialState::Random) return {VectorXd::Zero(n), MatrixXd(M.diagonal().cwiseInverse().asDiagonal())};
  const VectorXd z0 = o.init == InitialState::Given ? o.given_state : VectorXd::Constant(n, o.init_value);
  return {z0, z0 * z0.transpose()};
}

inline Moments advance(const MatrixXd& M, const Moments& mo, ScanOrder scan, bool noise) {
  switch (scan) {
    case ScanOrder::Fixed:
      return sweep_fixed(M, mo, noise);
    case ScanOrder::Random:
      return sweep_random(M, mo, noise);
    case ScanOrder::Permutation:
      return sweep_permutation(M, mo, noise);
  }
  return mo;
}

// Compares the sampled moments at sweeps 1..3 (and 0 for a random start) with the exact linear evolution, for
// both domains (dual: y~, via observe_edges). With L chains a z-score of 6 corresponds to a relative error of
// about 6 sqrt(2 / L) in a variance: 1.3% for the default L = 400000 (the _long test goes further).
inline void check_exact_moments(ScanOrder scan, InitialState init, std::size_t chains = 400000, std::size_t sweeps = 3,
                                const Model& model = small_model(), double alpha = 1e-6) {
  EnsembleOptions o;
  o.chains = chains;
  o.sweeps = sweeps;
  o.scan = scan;
  o.seed = 20240607;
  o.threads = 2;
  o.init = init;
  o.init_value = 1.0;
  const double checkpoints = static_cast<double>(init == InitialState::Random ? sweeps + 1 : sweeps);
  const double tests = checkpoints * (moment_tests(model.num_nodes()) + moment_tests(model.num_edges()));
  const double z_max = bonferroni_z(alpha, tests);
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    o.observe_edges = d == Domain::Dual;
    const MatrixXd M = precision(model, d);
    std::vector<Moments> exact{initial_moments(M, o)};
    for (std::size_t k = 1; k <= sweeps; ++k) exact.push_back(advance(M, exact.back(), scan, true));
    std::size_t seen = 0;
    dualgibbs::run_ensemble(model, d, o, [&](const dualgibbs::Checkpoint& cp) {
      ++seen;
      if (cp.sweep == 0 && init != InitialState::Random) return;
      check_moments(cp.states, exact.at(cp.sweep), z_max,
                    std::string(dualgibbs::to_string(d)) + " " + dualgibbs::to_string(scan) + " sweep " +
                        std::to_string(cp.sweep));
    });
    BOOST_TEST(seen == sweeps + 1);
  }
}

// ---- the slowest mode of the random sweep ----

/// The slowest mode of the random-sweep Gibbs chain on a precision M (dense): with D = diag(M),
/// lambda_max(A) = 1 - lambda_min(D^-1/2 M D^-1/2) [eqn:AGen], r = ((n - 1 + lambda_max(A)) / n)^n
/// [eqn:primalrate, eqn:dualrate], z0 = D^-1/2 u for u the eigenvector of lambda_min, and w = D z0. Started at
/// z0, the expected random-scan update E[z'] = (I - D^-1 M / n) z multiplies z0 by (n - 1 + lambda_max(A)) / n,
/// so after k sweeps E[w^T z_k] / w^T z0 = r^k (with or without the noise, which has mean zero).
struct SlowestMode {
  double lambda_max_A = 0;
  double rate = 0;
  VectorXd z0, w;
};

inline SlowestMode slowest_mode(const MatrixXd& M) {
  const Eigen::Index n = M.rows();
  const VectorXd dm = M.diagonal();
  const VectorXd inv_sqrt = dm.cwiseSqrt().cwiseInverse();
  const MatrixXd S = inv_sqrt.asDiagonal() * M * inv_sqrt.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<MatrixXd> es(S);
  SlowestMode mode;
  mode.lambda_max_A = 1.0 - es.eigenvalues()[0];
  mode.rate =
      std::pow((static_cast<double>(n) - 1 + mode.lambda_max_A) / static_cast<double>(n), static_cast<double>(n));
  mode.z0 = inv_sqrt.asDiagonal() * es.eigenvectors().col(0);
  mode.w = dm.asDiagonal() * mode.z0;
  return mode;
}

/// Runs the ensemble `o` (its start is set to the mode's z0) and z-tests, at every checkpoint k >= 1, the mean
/// over chains of w^T z_k / w^T z0 against r^k, with threshold z_max.
inline void check_slowest_mode_decay(const Model& model, Domain d, const SlowestMode& mode, EnsembleOptions o,
                                     double z_max, const std::string& what) {
  o.init = InitialState::Given;
  o.given_state = mode.z0;
  o.observe_edges = d == Domain::Dual;
  dualgibbs::run_ensemble(model, d, o, [&](const dualgibbs::Checkpoint& cp) {
    if (cp.sweep == 0) return;
    const Eigen::ArrayXd p = (mode.w.transpose() * cp.states).array() / mode.w.dot(mode.z0);
    const double m = p.mean(), var = (p - m).square().sum() / static_cast<double>(p.size() - 1);
    const double expect = std::pow(mode.rate, static_cast<double>(cp.sweep));
    const double z = (m - expect) / std::sqrt(var / static_cast<double>(p.size()));
    BOOST_TEST(std::abs(z) < z_max,
               what << " sweep " << cp.sweep << ": " << m << " vs r^k = " << expect << ", z = " << z);
  });
}

// ---- checkpoints ----

/// Runs an ensemble and keeps the checkpoint matrices by sweep.
inline std::map<std::size_t, MatrixXd> collect(const Model& model, Domain d, const EnsembleOptions& o) {
  std::map<std::size_t, MatrixXd> out;
  dualgibbs::run_ensemble(model, d, o, [&](const dualgibbs::Checkpoint& cp) { out[cp.sweep] = cp.states; });
  return out;
}

// ---- the shipped kernels, for BOOST_AUTO_TEST_CASE_TEMPLATE ----

/// The kernels a kernel-generic test runs over: CSR on the primal precision Q, the O(1) dual kernel on R.
using Kernels = boost::mpl::list<dualgibbs::CsrKernel, dualgibbs::DualIncidenceKernel>;

/// How a kernel-generic test builds `Kernel` for a model; `domain` names the precision it samples (Q or R),
/// whose dense oracle is precision(model, domain). The tally of the dual kernel is x~ = B y~ (incidence()).
template <class Kernel>
struct KernelFor;
template <>
struct KernelFor<dualgibbs::CsrKernel> {
  static constexpr Domain domain = Domain::Primal;
  static dualgibbs::CsrKernel make(const Model& m) { return dualgibbs::CsrKernel(m.primal_precision()); }
};
template <>
struct KernelFor<dualgibbs::DualIncidenceKernel> {
  static constexpr Domain domain = Domain::Dual;
  static dualgibbs::DualIncidenceKernel make(const Model& m) { return dualgibbs::DualIncidenceKernel(m); }
};

}  // namespace oracle
