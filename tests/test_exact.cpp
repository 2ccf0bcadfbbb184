#define BOOST_TEST_MODULE exact
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>

#include "test_support.hpp"
#include "truth/cholmod_factor.hpp"
#include "truth/selected_inversion.hpp"

#include <Eigen/Dense>
#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;
namespace bdata = boost::unit_test::data;

namespace {

// ---- independent dense oracles, built from the edge list (not from Model's sparse matrices) ----------

struct Dense {
  Eigen::MatrixXd B, Ds, Dsigma, Q, R;
};

Dense dense_matrices(const Model& m) {
  const Graph& g = m.graph();
  Dense d;
  d.B = Eigen::MatrixXd::Zero(g.num_nodes(), g.num_edges());
  for (Index e = 0; e < g.num_edges(); ++e) {
    d.B(g.edge(e).head, e) = 1;
    d.B(g.edge(e).tail, e) = -1;
  }
  Eigen::VectorXd s2(g.num_nodes()), sigma2(g.num_edges());
  for (Index v = 0; v < g.num_nodes(); ++v) s2[v] = m.node_sd()[v] * m.node_sd()[v];
  for (Index e = 0; e < g.num_edges(); ++e) sigma2[e] = m.edge_sd()[e] * m.edge_sd()[e];
  d.Ds = s2.asDiagonal();
  d.Dsigma = sigma2.asDiagonal();
  d.Q = Eigen::MatrixXd(s2.cwiseInverse().asDiagonal()) + d.B * sigma2.cwiseInverse().asDiagonal() * d.B.transpose();
  d.R = d.Dsigma + d.B.transpose() * d.Ds * d.B;
  return d;
}

Eigen::MatrixXd dense_inverse(const Eigen::MatrixXd& a) {
  return a.llt().solve(Eigen::MatrixXd::Identity(a.rows(), a.cols()));
}

double dense_logdet(const Eigen::MatrixXd& a) {
  const Eigen::LLT<Eigen::MatrixXd> llt(a);
  BOOST_REQUIRE(llt.info() == Eigen::Success);
  return 2 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
}

// Largest entrywise difference relative to max(1, |expected|).
double max_rel_diff(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  BOOST_REQUIRE_EQUAL(got.rows(), want.rows());
  BOOST_REQUIRE_EQUAL(got.cols(), want.cols());
  if (got.size() == 0) return 0;
  return ((got - want).array().abs() / want.array().abs().max(1.0)).maxCoeff();
}

// Every graph family of generators.hpp, small enough for dense inverses.
const std::vector<std::string> kFamilies = {"torus", "grid",     "path", "cycle", "complete", "bipartite",
                                            "star",  "kregular", "ws",   "er",    "ba",       "hypercube"};

Graph family_graph(const std::string& f) {
  if (f == "torus") return make_torus(5, 7);
  if (f == "grid") return make_grid(4, 6);
  if (f == "path") return make_path(9);
  if (f == "cycle") return make_cycle(10);
  if (f == "complete") return make_complete(8);
  if (f == "bipartite") return make_complete_bipartite(3, 5);
  if (f == "star") return make_star(9);
  if (f == "kregular") return make_random_regular(16, 3, 7);
  if (f == "ws") return make_watts_strogatz(20, 4, 0.3, 11);
  if (f == "er") return make_erdos_renyi(20, 0.15, 5);  // may be disconnected: still a valid model
  if (f == "ba") return make_barabasi_albert(20, 2, 3);
  if (f == "hypercube") return make_hypercube(4);
  throw std::logic_error("unknown family " + f);
}

// Homogeneous (s = 1.3, sigma = 0.4) or heterogeneous (s_v in [0.5, 2], sigma_e in [0.1, 1]) model.
Model family_model(const std::string& f, bool heterogeneous) {
  Graph g = family_graph(f);
  if (!heterogeneous) return Model(std::move(g), 1.3, 0.4);
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> us(0.5, 2.0), usig(0.1, 1.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = us(rng);
  for (double& x : sigma) x = usig(rng);
  return Model(std::move(g), std::move(s), std::move(sigma));
}

SparseMatrix csr(Index n, const std::vector<Eigen::Triplet<double, int>>& t) {
  SparseMatrix m(n, n);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

}  // namespace

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(against_dense_inverses)

BOOST_DATA_TEST_CASE(marginal_variances_match_dense_inverse, bdata::make(kFamilies) * bdata::make({false, true}),
                     family, heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Dense d = dense_matrices(m);
  const Eigen::MatrixXd cov = dense_inverse(d.Q);
  for (Ordering o : {Ordering::Auto, Ordering::Amd, Ordering::Metis, Ordering::Nesdis, Ordering::Natural}) {
    BOOST_TEST_CONTEXT(family << (heterogeneous ? " heterogeneous" : " homogeneous") << " " << to_string(o)) {
      BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Primal, o), cov.diagonal()) < 1e-10);
      BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Dual, o), dense_inverse(d.R).diagonal()) < 1e-10);
    }
  }
}

BOOST_DATA_TEST_CASE(full_covariances_match_dense, bdata::make(kFamilies) * bdata::make({false, true}), family,
                     heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Dense d = dense_matrices(m);
  const Eigen::MatrixXd qinv = dense_inverse(d.Q), rinv = dense_inverse(d.R);
  BOOST_TEST(max_rel_diff(covariance_primal(m), qinv) < 1e-10);
  BOOST_TEST(max_rel_diff(covariance_dual(m), rinv) < 1e-10);
  BOOST_TEST(max_rel_diff(covariance_dual_nodes(m), d.B * rinv * d.B.transpose()) < 1e-10);
  BOOST_TEST(max_rel_diff(covariance_primal_edges(m), d.B.transpose() * qinv * d.B) < 1e-10);
}

BOOST_DATA_TEST_CASE(edge_and_dual_node_variances_match_dense, bdata::make(kFamilies) * bdata::make({false, true}),
                     family, heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Dense d = dense_matrices(m);
  const Eigen::MatrixXd qinv = dense_inverse(d.Q), rinv = dense_inverse(d.R);
  BOOST_TEST(max_rel_diff(marginal_variances_primal_edges(m), (d.B.transpose() * qinv * d.B).diagonal()) < 1e-10);
  BOOST_TEST(max_rel_diff(marginal_variances_dual_nodes(m), (d.B * rinv * d.B.transpose()).diagonal()) < 1e-10);
  // selected_inverse on the pattern of Q and of R: every stored entry equals the dense inverse's.
  for (const auto& [a, inv] : {std::pair<SparseMatrix, Eigen::MatrixXd>{m.primal_precision(), qinv},
                               std::pair<SparseMatrix, Eigen::MatrixXd>{m.dual_precision(), rinv}}) {
    const SparseMatrix z = CholeskyFactor(a).selected_inverse(a);
    BOOST_TEST(z.nonZeros() == a.nonZeros());
    double worst = 0;
    for (Eigen::Index r = 0; r < z.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(z, r); it; ++it)
        worst = std::max(
            worst, std::abs(it.value() - inv(it.row(), it.col())) / std::max(1.0, std::abs(inv(it.row(), it.col()))));
    BOOST_TEST(worst < 1e-10);
  }
}

BOOST_DATA_TEST_CASE(log_determinant_and_solve_match_dense, bdata::make(kFamilies) * bdata::make({false, true}), family,
                     heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Dense d = dense_matrices(m);
  const CholeskyFactor fq(m.primal_precision()), fr(m.dual_precision());
  BOOST_TEST(std::abs(fq.log_determinant() - dense_logdet(d.Q)) < 1e-10 * std::max(1.0, std::abs(dense_logdet(d.Q))));
  BOOST_TEST(std::abs(fr.log_determinant() - dense_logdet(d.R)) < 1e-10 * std::max(1.0, std::abs(dense_logdet(d.R))));
  std::mt19937_64 rng(1);
  std::normal_distribution<double> nd;
  Eigen::VectorXd b(m.num_nodes());
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] = nd(rng);
  const Eigen::VectorXd want = d.Q.llt().solve(b);
  BOOST_TEST(max_rel_diff(fq.solve(b), want) < 1e-10);
  Eigen::MatrixXd b2(m.num_nodes(), 3);
  for (Eigen::Index i = 0; i < b2.size(); ++i) b2.data()[i] = nd(rng);
  BOOST_TEST(max_rel_diff(fq.solve(b2), d.Q.llt().solve(b2)) < 1e-10);
  BOOST_TEST(max_rel_diff(fq.inverse(), dense_inverse(d.Q)) < 1e-10);
}

BOOST_DATA_TEST_CASE(entropy_matches_dense_and_respects_appendix_b_bounds,
                     bdata::make(kFamilies) * bdata::make({false, true}), family, heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Dense d = dense_matrices(m);
  const Entropy h = entropy(m);
  const double c = std::log(2 * M_PI * M_E);
  const double n = m.num_nodes(), e = m.num_edges();
  BOOST_TEST(std::abs(h.logdet_Q - dense_logdet(d.Q)) < 1e-10 * std::abs(dense_logdet(d.Q)) + 1e-12);
  // logdet R comes from Sylvester's identity in the library; here from a dense factorization of R.
  BOOST_TEST(std::abs(h.logdet_R - dense_logdet(d.R)) < 1e-10 * std::abs(dense_logdet(d.R)) + 1e-12);
  BOOST_TEST(std::abs(h.primal - 0.5 * (n * c - dense_logdet(d.Q))) < 1e-9);
  BOOST_TEST(std::abs(h.dual - 0.5 * (e * c - dense_logdet(d.R))) < 1e-9);
  BOOST_TEST(h.primal_lower <= h.primal + 1e-12);
  BOOST_TEST(h.primal <= h.primal_upper + 1e-12);
  BOOST_TEST(h.dual_lower <= h.dual + 1e-12);
  BOOST_TEST(h.dual <= h.dual_upper + 1e-12);
  if (!heterogeneous && m.graph().min_degree() == m.graph().max_degree()) {
    // k-regular homogeneous model: the per-site bounds of [eq:ExactdetCovUpperBoundsF] and [eq:detinequality].
    const double k = m.graph().min_degree(), s2 = 1.3 * 1.3, sig2 = 0.4 * 0.4;
    BOOST_TEST(std::abs(h.primal_lower / n - 0.5 * std::log(2 * M_PI * M_E * s2 * sig2 / (sig2 + k * s2))) < 1e-12);
    BOOST_TEST(std::abs(h.primal_upper / n - 0.5 * std::log(2 * M_PI * M_E * s2)) < 1e-12);
    BOOST_TEST(std::abs(h.dual_lower / e - 0.5 * std::log(2 * M_PI * M_E / (sig2 + 2 * s2))) < 1e-12);
    BOOST_TEST(std::abs(h.dual_upper / e - 0.5 * std::log(2 * M_PI * M_E / sig2)) < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(dense_covariances_do_not_depend_on_the_openblas_thread_count) {
  // covariance_primal solves with n right-hand sides: CHOLMOD's supernodal solve runs BLAS-3 blocks, whose last bits
  // change with OpenBLAS's thread count (i.e. with the cores the process may use: an MPI rank bound to one core got
  // other bits than a plain run, docs/mpi.md). The factor limits its BLAS threads while solving too. Compared
  // bitwise with OpenBLAS set to 1, 2 and 3 threads around the call; skipped (with a message) on another BLAS.
  const dualgibbs::testing::OpenBlasThreads blas;
  if (!blas.available()) {
    BOOST_TEST_MESSAGE("skipped: the BLAS linked here is not OpenBLAS (no openblas_set_num_threads)");
    return;
  }
  const Model m(make_torus(40, 40), 1.0, 0.1);  // 1600 nodes: blocks well above OpenBLAS's threading thresholds
  blas.set(1);
  const Eigen::MatrixXd one = covariance_primal(m);
  for (int threads : {2, 3}) {
    blas.set(threads);
    const Eigen::MatrixXd more = covariance_primal(m);
    BOOST_TEST(std::memcmp(one.data(), more.data(), sizeof(double) * static_cast<std::size_t>(one.size())) == 0,
               "covariance_primal with OpenBLAS at " << threads << " threads differs from 1 thread");
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(woodbury)

// Prop. 2 [eq:cov_woodbury]: D_s^-1/2 Cov(X) D_s^-1/2 + D_s^1/2 Cov(x~) D_s^1/2 = I, and
// Prop. 3 [eq:cov_woodbury7]: D_sigma^1/2 Cov(y~) D_sigma^1/2 + D_sigma^-1/2 Cov(Y) D_sigma^-1/2 = I,
// on the exact matrices (computed from independent factorizations of Q and of R).
BOOST_DATA_TEST_CASE(propositions_2_and_3_hold_on_exact_matrices, bdata::make(kFamilies) * bdata::make({false, true}),
                     family, heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Eigen::VectorXd s = Eigen::Map<const Eigen::VectorXd>(m.node_sd().data(), m.num_nodes());
  const Eigen::VectorXd sg = Eigen::Map<const Eigen::VectorXd>(m.edge_sd().data(), m.num_edges());
  const Eigen::MatrixXd p2 = s.cwiseInverse().asDiagonal() * covariance_primal(m) * s.cwiseInverse().asDiagonal() +
                             s.asDiagonal() * covariance_dual_nodes(m) * s.asDiagonal();
  BOOST_TEST((p2 - Eigen::MatrixXd::Identity(m.num_nodes(), m.num_nodes())).cwiseAbs().maxCoeff() < 1e-12);
  const Eigen::MatrixXd p3 =
      sg.asDiagonal() * covariance_dual(m) * sg.asDiagonal() +
      sg.cwiseInverse().asDiagonal() * covariance_primal_edges(m) * sg.cwiseInverse().asDiagonal();
  BOOST_TEST((p3 - Eigen::MatrixXd::Identity(m.num_edges(), m.num_edges())).cwiseAbs().maxCoeff() < 1e-12);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(selected_inversion)

// The whole selected inverse, not only its diagonal: every stored entry Z(i, j) of the pattern of L must
// equal (P M P^T)^-1 (i, j), with both implementations of the dense kernels (Eigen and BLAS/LAPACK).
BOOST_DATA_TEST_CASE(covers_the_whole_pattern_of_L, bdata::make(kFamilies) * bdata::make({0.0, 1e300}), family,
                     blas_threshold) {
  const Model m = family_model(family, true);
  for (const SparseMatrix& a : {m.primal_precision(), m.dual_precision()}) {
    detail::CholmodFactor f(Ordering::Amd);
    f.analyze(a);
    f.factorize(a);
    BOOST_REQUIRE(f.factorized());
    const detail::SupernodalFactor v = f.view();
    detail::SelectedInversionOptions opt;
    opt.blas_threshold = blas_threshold;
    const std::vector<double> z = detail::selected_inverse(v, opt);
    const std::int64_t* perm = f.permutation();
    const Eigen::MatrixXd inv = dense_inverse(Eigen::MatrixXd(a));
    double worst = 0;
    std::int64_t checked = 0;
    for (std::int64_t J = 0; J < v.nsuper; ++J) {
      const std::int64_t k1 = v.super[J], nc = v.super[J + 1] - k1, nrows = v.pi[J + 1] - v.pi[J];
      for (std::int64_t j = 0; j < nc; ++j)
        for (std::int64_t r = 0; r < nrows; ++r) {
          const std::int64_t row = v.s[v.pi[J] + r];
          if (row < k1 + j) continue;  // upper part of the diagonal block: mirrored, checked as its transpose
          const double want = inv(perm[row], perm[k1 + j]);
          worst = std::max(worst, std::abs(z[v.px[J] + j * nrows + r] - want) / std::max(1.0, std::abs(want)));
          ++checked;
        }
    }
    BOOST_TEST(checked >= a.rows());
    BOOST_TEST(worst < 1e-10);
  }
}

// The tree-parallel schedule: the same selected inverse, bit for bit, for any number of worker threads.
BOOST_AUTO_TEST_CASE(result_does_not_depend_on_the_number_of_threads) {
  const Model m(make_grid(25, 31), 1.0, 0.3);
  const SparseMatrix a = m.primal_precision();
  detail::CholmodFactor f(Ordering::Amd);
  f.analyze(a);
  f.factorize(a);
  const detail::SupernodalFactor v = f.view();
  BOOST_REQUIRE(v.nsuper >= 64);  // below that the inversion runs on one thread
  detail::SelectedInversionOptions one, many;
  one.threads = 1;
  const std::vector<double> z1 = detail::selected_inverse(v, one);
  for (int t : {2, 3, 7}) {
    many.threads = t;
    BOOST_TEST((detail::selected_inverse(v, many) == z1));
  }
  const Eigen::MatrixXd inv = dense_inverse(Eigen::MatrixXd(a));
  const Eigen::VectorXd d = detail::selected_inverse_diagonal(v, z1);
  const std::int64_t* perm = f.permutation();
  double worst = 0;
  for (Eigen::Index k = 0; k < d.size(); ++k) worst = std::max(worst, std::abs(d[k] - inv(perm[k], perm[k])));
  BOOST_TEST(worst < 1e-12);
}

BOOST_AUTO_TEST_CASE(heterogeneous_torus_of_900_nodes_matches_dense) {
  const Model m = [] {
    Graph g = make_torus(30, 30);
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> us(0.3, 3.0), usig(0.05, 0.5);
    std::vector<double> s(900), sigma(1800);
    for (double& x : s) x = us(rng);
    for (double& x : sigma) x = usig(rng);
    return Model(std::move(g), s, sigma);
  }();
  const Dense d = dense_matrices(m);
  BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Primal), dense_inverse(d.Q).diagonal()) < 1e-10);
  BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Dual), dense_inverse(d.R).diagonal()) < 1e-10);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(analyze_and_refactorize)

namespace {
// The same graph with other parameters (homogeneous or heterogeneous in turn).
Model other_parameters(const Model& m, bool heterogeneous) {
  Graph g = m.graph();
  if (!heterogeneous) return Model(std::move(g), 0.6, 1.7);
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> us(0.3, 3.0), usig(0.05, 2.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = us(rng);
  for (double& x : sigma) x = usig(rng);
  return Model(std::move(g), std::move(s), std::move(sigma));
}

double rel(double got, double want) { return std::abs(got - want) / std::max(std::abs(want), 1e-300); }

// Largest difference of two sparse matrices with one pattern, relative to the largest entry of `want`.
double sparse_rel_diff(const SparseMatrix& got, const SparseMatrix& want) {
  BOOST_REQUIRE_EQUAL(got.nonZeros(), want.nonZeros());
  double worst = 0, scale = 0;
  for (Eigen::Index k = 0; k < want.nonZeros(); ++k) scale = std::max(scale, std::abs(want.valuePtr()[k]));
  for (Eigen::Index k = 0; k < want.nonZeros(); ++k)
    worst = std::max(worst, std::abs(got.valuePtr()[k] - want.valuePtr()[k]) / scale);
  return worst;
}
}  // namespace

// factorize() on an analyzed pattern with new values (a refactorization) gives what a fresh factorization of the
// new matrix gives: log-determinant, solves and selected inverse to 1e-12 relative, for Q and for R.
BOOST_DATA_TEST_CASE(refactorization_equals_a_fresh_factorization, bdata::make(kFamilies) * bdata::make({false, true}),
                     family, heterogeneous) {
  const Model a = family_model(family, heterogeneous);
  const Model b = other_parameters(a, heterogeneous);
  for (Domain domain : {Domain::Primal, Domain::Dual}) {
    BOOST_TEST_CONTEXT(family << (heterogeneous ? " heterogeneous " : " homogeneous ")
                              << (domain == Domain::Primal ? "Q" : "R")) {
      const SparseMatrix ma = a.precision(domain), mb = b.precision(domain);
      CholeskyFactor f;
      f.analyze(ma);
      BOOST_TEST(f.analyzed());
      BOOST_TEST(!f.factorized());
      f.factorize(ma);
      f.factorize(mb);  // refactorization with the other parameters
      const CholeskyFactor fresh(mb);
      BOOST_TEST(rel(f.log_determinant(), fresh.log_determinant()) < 1e-12);
      const Eigen::VectorXd rhs = Eigen::VectorXd::LinSpaced(mb.rows(), -1.0, 2.0);
      BOOST_TEST(max_rel_diff(f.solve(rhs), fresh.solve(rhs)) < 1e-12);
      BOOST_TEST(sparse_rel_diff(f.selected_inverse(mb), fresh.selected_inverse(mb)) < 1e-12);
      BOOST_TEST(max_rel_diff(f.marginal_variances(), fresh.marginal_variances()) < 1e-12);
    }
  }
}

// A sweep over sigma analyzes once: the analysis (its time and its predicted factor) stays the one of the first
// call, and every refactorization matches a fresh factorization.
BOOST_AUTO_TEST_CASE(one_analysis_serves_a_parameter_sweep) {
  const Graph g = make_torus(12, 15);
  CholeskyFactor f;
  f.analyze(Model(g, 1.0, 1.0).primal_precision());
  const FactorStats first = f.stats();
  for (double sigma : {0.05, 0.25, 1.0, 4.0}) {
    const Model m(g, 1.0, sigma);
    f.factorize(m.primal_precision());
    BOOST_TEST(f.stats().analyze_seconds == first.analyze_seconds);
    BOOST_TEST(f.stats().nnz_L == first.nnz_L);
    const CholeskyFactor fresh(m.primal_precision());
    BOOST_TEST(rel(f.log_determinant(), fresh.log_determinant()) < 1e-12);
    BOOST_TEST(max_rel_diff(f.marginal_variances(), fresh.marginal_variances()) < 1e-12);
  }
}

// The steps report misuse and numerical failure clearly, and a failed refactorization leaves the analysis usable.
BOOST_AUTO_TEST_CASE(refactorization_errors) {
  const Model m(make_cycle(6), 1.0, 0.5);
  const SparseMatrix q = m.primal_precision();
  CholeskyFactor f;
  BOOST_CHECK_THROW(f.factorize(q), std::invalid_argument);  // nothing analyzed
  BOOST_CHECK_THROW(f.log_determinant(), std::logic_error);  // no factor
  BOOST_CHECK_THROW(f.solve(Eigen::VectorXd(Eigen::VectorXd::Ones(6))), std::logic_error);
  BOOST_CHECK_THROW(f.analyze(SparseMatrix(2, 3)), std::invalid_argument);
  f.analyze(q);
  BOOST_CHECK_THROW(f.marginal_variances(), std::logic_error);
  BOOST_CHECK_THROW(f.factorize(Model(make_path(6), 1.0, 0.5).primal_precision()), std::invalid_argument);  // pattern
  SparseMatrix asym = q;
  asym.coeffRef(0, 1) = -3.0;  // same pattern, not symmetric
  BOOST_CHECK_THROW(f.factorize(asym), std::invalid_argument);
  SparseMatrix indefinite = q;
  indefinite.coeffRef(3, 3) = -1.0;  // same pattern, not positive definite at node 3
  try {
    f.factorize(indefinite);
    BOOST_FAIL("no exception");
  } catch (const NotPositiveDefinite& e) {
    BOOST_TEST(e.column() == 3);
    BOOST_TEST(std::string(e.what()).find("not positive definite") != std::string::npos);
  }
  BOOST_TEST(!f.factorized());
  BOOST_CHECK_THROW(f.log_determinant(), std::logic_error);
  f.factorize(q);  // the analysis survived the failure
  BOOST_TEST(rel(f.log_determinant(), CholeskyFactor(q).log_determinant()) < 1e-12);
  BOOST_CHECK_THROW(f.set_blas_threads(-1), std::invalid_argument);
}

// diag(R^-1) from the selected inverse of Q by Woodbury (what `dualgibbs exact --edge-marginals` uses) against a
// dense inverse of R and against the selected inversion of R (the path it replaces): 1e-12 relative. s >> sigma
// (Var(Y_e) close to sigma_e^2, the subtraction would cancel) takes the fallback through R and still matches.
BOOST_DATA_TEST_CASE(dual_variances_from_the_primal_selected_inverse,
                     bdata::make(kFamilies) * bdata::make({false, true}), family, heterogeneous) {
  const Model m = family_model(family, heterogeneous);
  const Model stiff(m.graph(), 100.0, 0.01);
  for (const Model* model : {&m, &stiff}) {
    if (model->num_edges() == 0) continue;
    const SparseMatrix q = model->primal_precision();
    const SparseMatrix z = CholeskyFactor(q).selected_inverse(q);
    const Eigen::VectorXd got = marginal_variances_dual_from_primal(*model, z);
    const Eigen::VectorXd via_r = marginal_variances(*model, Domain::Dual);
    if (model == &stiff) {  // cond(R) ~ 1e8 here: the dense oracle is off by 1e-8; the fallback is the R path itself
      BOOST_TEST(((got - via_r).array().abs()).maxCoeff() == 0.0);
      continue;
    }
    BOOST_TEST(max_rel_diff(got, dense_inverse(dense_matrices(*model).R).diagonal()) < 1e-10);
    BOOST_TEST(((got - via_r).array().abs() / via_r.array().abs()).maxCoeff() < 1e-12);
  }
  BOOST_CHECK_THROW(marginal_variances_dual_from_primal(m, SparseMatrix(2, 2)), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(closed_forms)

BOOST_AUTO_TEST_CASE(torus_closed_form_matches_dense_inverse_rectangular) {
  const Model m(make_torus(5, 8), 1.7, 0.35);
  const Eigen::MatrixXd cov = dense_inverse(dense_matrices(m).Q);
  const double nu = torus_marginal_variance(5, 8, 1.7, 0.35);
  for (Index v = 0; v < m.num_nodes(); ++v) BOOST_TEST(std::abs(cov(v, v) - nu) < 1e-12);
}

BOOST_AUTO_TEST_CASE(torus_closed_form_matches_selected_inversion_100x100) {
  const Model m(make_torus(100, 100), 1.0, 0.25);
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  const double nu = torus_marginal_variance(100, 100, 1.0, 0.25);
  BOOST_TEST((var.array() - nu).abs().maxCoeff() < 1e-12);
}

BOOST_AUTO_TEST_CASE(torus_closed_form_for_the_papers_1000x1000_torus) {
  // The published value (0.0308251569...) for s = 1, sigma = 0.25.
  BOOST_TEST(std::abs(torus_marginal_variance(1000, 1000, 1.0, 0.25) - 0.0308251569) < 1e-10);
}

BOOST_AUTO_TEST_CASE(torus_closed_form_rejects_bad_input) {
  BOOST_CHECK_THROW(torus_marginal_variance(2, 5, 1, 1), std::invalid_argument);
  BOOST_CHECK_THROW(torus_marginal_variance(5, 0, 1, 1), std::invalid_argument);
  BOOST_CHECK_THROW(torus_marginal_variance(5, 5, 0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(torus_marginal_variance(5, 5, 1, std::nan("")), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(exact_sampler)

// Sample covariance and mean of N exact draws against Q^-1 with z-scores. For a Gaussian with known zero
// mean, S_ij = mean_k x_i x_j has variance (Sigma_ii Sigma_jj + Sigma_ij^2) / N and the mean has variance
// Sigma_ii / N. With n = 12 nodes there are 78 + 12 = 90 z-scores; each two-sided test has level 1e-6 / 90
// (Bonferroni), so the test fails with probability <= 1e-6 when the sampler is right (normal approximation,
// N = 4e5). It detects a relative covariance error of about 1.5% (5.7 standard errors of sqrt(2/N)).
BOOST_AUTO_TEST_CASE(sample_covariance_matches_inverse_precision) {
  const Model m = [] {
    Graph g = make_grid(3, 4);
    std::vector<double> s{0.7, 1.4, 1.0, 2.0, 0.5, 1.2, 0.9, 1.6, 1.1, 0.6, 1.8, 1.3};
    std::vector<double> sigma(static_cast<std::size_t>(g.num_edges()));
    for (std::size_t e = 0; e < sigma.size(); ++e) sigma[e] = 0.3 + 0.1 * static_cast<double>(e % 5);
    return Model(std::move(g), s, sigma);
  }();
  const Eigen::MatrixXd sigma = dense_inverse(dense_matrices(m).Q);
  const std::size_t N = 400000;
  const Eigen::MatrixXd x = CholeskyFactor(m.primal_precision()).sample(N, 42);
  BOOST_REQUIRE_EQUAL(x.rows(), 12);
  BOOST_REQUIRE_EQUAL(x.cols(), static_cast<Eigen::Index>(N));
  const Eigen::MatrixXd s = x * x.transpose() / static_cast<double>(N);
  const Eigen::VectorXd mean = x.rowwise().mean();
  const int tests = 12 * 13 / 2 + 12;
  const double z_max = boost::math::quantile(boost::math::complement(boost::math::normal(), 1e-6 / tests / 2));
  double worst = 0;
  for (int i = 0; i < 12; ++i) {
    worst = std::max(worst, std::abs(mean[i]) / std::sqrt(sigma(i, i) / N));
    for (int j = 0; j <= i; ++j) {
      const double sd = std::sqrt((sigma(i, i) * sigma(j, j) + sigma(i, j) * sigma(i, j)) / N);
      worst = std::max(worst, std::abs(s(i, j) - sigma(i, j)) / sd);
    }
  }
  BOOST_TEST_MESSAGE("largest |z| = " << worst << ", threshold " << z_max);
  BOOST_TEST(worst < z_max);
}

BOOST_AUTO_TEST_CASE(same_seed_same_draws) {
  const Model m(make_cycle(7), 1.0, 0.5);
  const CholeskyFactor f(m.primal_precision());
  BOOST_TEST((f.sample(5, 3) - f.sample(5, 3)).cwiseAbs().maxCoeff() == 0.0);
  BOOST_TEST((f.sample(5, 3) - f.sample(5, 4)).cwiseAbs().maxCoeff() > 0.0);
  BOOST_TEST(f.sample(0, 3).cols() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(bad_and_edge_cases)

BOOST_AUTO_TEST_CASE(indefinite_matrix_throws_with_its_column) {
  // [[1, 2], [2, 1]] has eigenvalues 3 and -1: the natural order breaks down at column 1.
  const SparseMatrix a = csr(2, {{0, 0, 1.0}, {0, 1, 2.0}, {1, 0, 2.0}, {1, 1, 1.0}});
  try {
    CholeskyFactor f(a, Ordering::Natural);
    BOOST_FAIL("no exception");
  } catch (const NotPositiveDefinite& e) {
    BOOST_TEST(e.column() == 1);
  }
  // diag(1, -1, 1): only column 1 can fail, whatever the ordering.
  const SparseMatrix b = csr(3, {{0, 0, 1.0}, {1, 1, -1.0}, {2, 2, 1.0}});
  for (Ordering o : {Ordering::Auto, Ordering::Amd, Ordering::Metis, Ordering::Nesdis, Ordering::Natural}) {
    try {
      CholeskyFactor f(b, o);
      BOOST_FAIL("no exception");
    } catch (const NotPositiveDefinite& e) {
      BOOST_TEST(e.column() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(uncompressed_input_is_read_correctly) {
  // Eigen's insert() leaves gaps in the arrays of an uncompressed matrix; the factor must not read them.
  SparseMatrix a(3, 3);
  a.reserve(Eigen::VectorXi::Constant(3, 4));
  a.insert(0, 0) = 4;
  a.insert(0, 1) = 1;
  a.insert(1, 0) = 1;
  a.insert(1, 1) = 3;
  a.insert(2, 2) = 2;
  BOOST_REQUIRE(!a.isCompressed());
  Eigen::Matrix3d d;
  d << 4, 1, 0, 1, 3, 0, 0, 0, 2;
  BOOST_TEST(max_rel_diff(CholeskyFactor(a).marginal_variances(), d.inverse().diagonal()) < 1e-15);
  BOOST_TEST(std::abs(CholeskyFactor(a).log_determinant() - std::log(d.determinant())) < 1e-14);
}

BOOST_AUTO_TEST_CASE(singular_laplacian_is_not_positive_definite) {
  const Model m(make_cycle(6), 1.0, 1.0);
  BOOST_CHECK_THROW(CholeskyFactor f(m.laplacian()), NotPositiveDefinite);
  BOOST_CHECK_THROW(CholeskyFactor f(csr(3, {{0, 0, 1.0}, {2, 2, 1.0}})), NotPositiveDefinite);  // zero pivot
}

BOOST_AUTO_TEST_CASE(rejects_malformed_matrices) {
  BOOST_CHECK_THROW(CholeskyFactor f(SparseMatrix(0, 0)), std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor f(SparseMatrix(2, 3)), std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor f(csr(2, {{0, 0, 2.0}, {0, 1, 1.0}, {1, 1, 2.0}})), std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor f(csr(2, {{0, 0, 2.0}, {0, 1, 1.0}, {1, 0, 0.5}, {1, 1, 2.0}})),
                    std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor f(csr(2, {{0, 0, std::nan("")}, {1, 1, 2.0}})), std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor f(csr(2, {{0, 0, INFINITY}, {1, 1, 2.0}})), std::invalid_argument);
  BOOST_CHECK_THROW(parse_ordering("colamd"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(rejects_wrong_sizes_and_dense_requests_too_large) {
  const Model m(make_path(4), 1.0, 1.0);
  const CholeskyFactor f(m.primal_precision());
  BOOST_CHECK_THROW(f.solve(Eigen::VectorXd(3)), std::invalid_argument);
  BOOST_CHECK_THROW(f.solve(Eigen::MatrixXd(5, 2)), std::invalid_argument);
  BOOST_CHECK_THROW(f.selected_inverse(SparseMatrix(3, 3)), std::invalid_argument);
  // An entry outside the pattern of L (with the natural order, L of a long path is bidiagonal up to the few
  // explicit zeros of supernodal amalgamation).
  const CholeskyFactor nat(Model(make_path(200), 1.0, 1.0).primal_precision(), Ordering::Natural);
  BOOST_CHECK_THROW(nat.selected_inverse(csr(200, {{0, 199, 1.0}})), std::invalid_argument);
  const Model big(make_path(kMaxDenseDimension + 1), 1.0, 1.0);
  BOOST_CHECK_THROW(covariance_primal(big), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_dual_nodes(big), std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor(big.primal_precision()).inverse(), std::invalid_argument);
  const Model big_edges(make_star(kMaxDenseDimension + 2), 1.0, 1.0);
  BOOST_CHECK_THROW(covariance_dual(big_edges), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_primal_edges(big_edges), std::invalid_argument);
  // ... but the marginal variances of such graphs are fine (selected inversion). A path's Q is tridiagonal.
  BOOST_TEST(marginal_variances(big, Domain::Primal).size() == kMaxDenseDimension + 1);
}

BOOST_AUTO_TEST_CASE(tiny_graphs_are_exact) {
  // One node, no edge: Var(X) = s^2, the dual domain is empty.
  const Model one(Graph(1, {}), 1.5, 0.3);
  BOOST_TEST(std::abs(marginal_variances(one, Domain::Primal)[0] - 2.25) < 1e-15);
  BOOST_TEST(std::abs(covariance_primal(one)(0, 0) - 2.25) < 1e-15);
  BOOST_CHECK_THROW(marginal_variances(one, Domain::Dual), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_dual(one), std::invalid_argument);
  BOOST_CHECK_THROW(covariance_primal_edges(one), std::invalid_argument);
  BOOST_TEST(covariance_dual_nodes(one).cwiseAbs().maxCoeff() == 0.0);
  BOOST_TEST(marginal_variances_dual_nodes(one).size() == 1);
  BOOST_TEST(marginal_variances_dual_nodes(one)[0] == 0.0);
  BOOST_TEST(marginal_variances_primal_edges(one).size() == 0);
  BOOST_TEST(std::abs(entropy(one).primal - 0.5 * std::log(2 * M_PI * M_E * 2.25)) < 1e-14);
  BOOST_TEST(entropy(one).dual == 0.0);
  // Two nodes, one edge, by hand: Q = [[1/s^2 + 1/sg^2, -1/sg^2], [-1/sg^2, 1/s^2 + 1/sg^2]],
  // Var(X_v) = (1/s^2 + 1/sg^2) / det Q; R = sg^2 + 2 s^2 (1 x 1).
  const double s = 1.5, sg = 0.3, a = 1 / (s * s) + 1 / (sg * sg), c = 1 / (sg * sg);
  const Model two(make_path(2), s, sg);
  const Eigen::VectorXd v2 = marginal_variances(two, Domain::Primal);
  BOOST_TEST(std::abs(v2[0] - a / (a * a - c * c)) < 1e-14);
  BOOST_TEST(std::abs(v2[1] - a / (a * a - c * c)) < 1e-14);
  BOOST_TEST(std::abs(marginal_variances(two, Domain::Dual)[0] - 1 / (sg * sg + 2 * s * s)) < 1e-15);
  // Three nodes: path and triangle against dense.
  for (const Graph& g : {make_path(3), make_cycle(3)}) {
    const Model m(g, 0.8, 1.1);
    const Dense d = dense_matrices(m);
    BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Primal), dense_inverse(d.Q).diagonal()) < 1e-13);
    BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Dual), dense_inverse(d.R).diagonal()) < 1e-13);
  }
}

BOOST_AUTO_TEST_CASE(disconnected_graph_with_isolated_node_is_exact) {
  // Components {0,1,2}, {3}, {4,5}: Q is block diagonal and stays positive definite.
  const Model m(Graph(6, {{0, 1}, {1, 2}, {4, 5}}), std::vector<double>{1.0, 0.5, 2.0, 1.5, 0.7, 1.2},
                std::vector<double>{0.2, 0.9, 0.4});
  const Dense d = dense_matrices(m);
  BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Primal), dense_inverse(d.Q).diagonal()) < 1e-12);
  BOOST_TEST(max_rel_diff(marginal_variances(m, Domain::Dual), dense_inverse(d.R).diagonal()) < 1e-12);
  BOOST_TEST(std::abs(marginal_variances(m, Domain::Primal)[3] - 2.25) < 1e-15);  // isolated: Var = s^2
  BOOST_TEST(max_rel_diff(covariance_primal(m), dense_inverse(d.Q)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(factor_is_movable_and_reports_stats) {
  const Model m(make_torus(20, 20), 1.0, 0.25);
  CholeskyFactor f(m.primal_precision(), Ordering::Amd);
  const Eigen::VectorXd v = f.marginal_variances();
  CholeskyFactor g = std::move(f);
  BOOST_TEST((g.marginal_variances() - v).cwiseAbs().maxCoeff() == 0.0);
  BOOST_TEST(g.size() == 400);
  BOOST_TEST(g.stats().nnz_L >= 400 + 800);  // at least the lower triangle of Q
  BOOST_TEST(g.stats().stored_L >= g.stats().nnz_L);
  BOOST_TEST(g.stats().supernodes > 0);
  BOOST_TEST(std::string(to_string(g.stats().ordering)) == "amd");
}

BOOST_AUTO_TEST_SUITE_END()
