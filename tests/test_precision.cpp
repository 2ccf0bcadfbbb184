// A user's own precision matrix: the factor-width-2 decomposition (Model::from_precision), the weighted signed
// incidence it leads to, and every layer on it (matrices, the dual kernel, exact truth, spectra), against dense
// oracles written here.
#define BOOST_TEST_MODULE precision
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/experiments/marginals.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/kernels.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "sampler_oracles.hpp"

#include <boost/test/unit_test.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

SparseMatrix sparse(const MatrixXd& dense) {
  SparseMatrix s = dense.sparseView();
  s.makeCompressed();
  return s;
}

// A random symmetric matrix on a torus pattern with couplings of both signs and a diagonal `margin` times the
// row's absolute off-diagonal sum.
MatrixXd signed_matrix(Index side, double margin, unsigned seed) {
  const Graph g = make_torus(side, side);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mag(0.2, 2.0);
  std::bernoulli_distribution positive(0.4);
  MatrixXd q = MatrixXd::Zero(g.num_nodes(), g.num_nodes());
  for (const Edge& e : g.edges()) {
    const double v = (positive(rng) ? 1.0 : -1.0) * mag(rng);
    q(e.head, e.tail) = q(e.tail, e.head) = v;
  }
  for (Index u = 0; u < q.rows(); ++u) q(u, u) = margin * q.row(u).cwiseAbs().sum() + 0.05;
  return q;
}

// D_s^-1 + B D_sigma^-1 B^T from the model's parts, dense.
MatrixXd reassembled(const Model& m) {
  const MatrixXd b = oracle::incidence(m);
  return MatrixXd(m.node_variances().cwiseInverse().asDiagonal()) +
         b * m.edge_variances().cwiseInverse().asDiagonal() * b.transpose();
}

double max_relative(const MatrixXd& a, const MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// `triangles` triangles, each with three positive couplings 0.6 (M(Q) of a triangle is not positive definite:
// 1 - 2 * 0.6 < 0), joined in a ring by weak negative couplings: SPD but not an H-matrix.
MatrixXd triangle_ring(double coupling, int triangles = 3) {
  const int n = 3 * triangles;
  MatrixXd q = MatrixXd::Identity(n, n);
  for (int t = 0; t < triangles; ++t) {
    for (int a = 0; a < 3; ++a)
      for (int b = a + 1; b < 3; ++b) q(3 * t + a, 3 * t + b) = q(3 * t + b, 3 * t + a) = coupling;
    const int u = 3 * t + 2, v = (3 * t + 3) % n;
    q(u, v) = q(v, u) = -0.05;
  }
  return q;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_diagonally_dominant_signed_matrix_splits_into_edge_factors_without_scaling) {
  const MatrixXd q = signed_matrix(5, 1.2, 7);
  const Model m = Model::from_precision(sparse(q));
  BOOST_TEST(m.has_dual());
  BOOST_TEST(m.given_precision());
  BOOST_TEST(m.factor_width().diagonally_dominant);
  BOOST_TEST(m.factor_width().d_min == 1.0);
  BOOST_TEST(m.factor_width().positive_couplings > 0);
  BOOST_TEST(!m.unit_incidence());
  BOOST_TEST(!m.is_homogeneous());
  BOOST_TEST(m.num_edges() == 50);
  BOOST_TEST(max_relative(reassembled(m), q) < 1e-14);
  BOOST_TEST(max_relative(MatrixXd(m.primal_precision()), q) == 0.0);  // the given matrix itself
  // R = D_sigma + B^T D_s B [eqn:QPNHDual] with B's weights, and its diagonal.
  const MatrixXd b = oracle::incidence(m);
  const MatrixXd r = MatrixXd(m.edge_variances().asDiagonal()) + b.transpose() * m.node_variances().asDiagonal() * b;
  BOOST_TEST(max_relative(MatrixXd(m.dual_precision()), r) < 1e-15);
  BOOST_TEST((m.dual_diagonal() - r.diagonal()).cwiseAbs().maxCoeff() < 1e-14 * r.diagonal().maxCoeff());
  const VectorXd y = VectorXd::LinSpaced(m.num_edges(), -1.0, 2.0);
  BOOST_TEST((m.dual_operator().apply(y) - r * y).cwiseAbs().maxCoeff() < 1e-12 * (r * y).cwiseAbs().maxCoeff());
}

BOOST_AUTO_TEST_CASE(an_h_matrix_dominant_only_after_scaling_is_scaled_by_the_comparison_matrix) {
  // D M D with M strictly diagonally dominant and D far from constant: an H-matrix, not diagonally dominant.
  const MatrixXd m0 = signed_matrix(4, 1.05, 11);
  VectorXd scale(m0.rows());
  for (Index i = 0; i < scale.size(); ++i) scale[i] = std::exp(1.5 * std::sin(1.7 * static_cast<double>(i)));
  const MatrixXd q = scale.asDiagonal() * m0 * scale.asDiagonal();
  bool dominant = true;
  for (Index u = 0; u < q.rows(); ++u) dominant = dominant && 2 * q(u, u) > q.row(u).cwiseAbs().sum();
  BOOST_TEST_REQUIRE(!dominant);
  const Model m = Model::from_precision(sparse(q));
  BOOST_TEST_REQUIRE(m.has_dual());
  BOOST_TEST(!m.factor_width().diagonally_dominant);
  BOOST_TEST(m.factor_width().d_min > 0.0);
  BOOST_TEST(m.factor_width().d_max > 2 * m.factor_width().d_min);
  BOOST_TEST(max_relative(reassembled(m), q) < 1e-12);
  // Woodbury [eq:cov_woodbury3]: Q^-1 = D_s - D_s B R^-1 B^T D_s, and the exact dual marginals on nodes.
  const MatrixXd cov = q.inverse();
  const MatrixXd b = oracle::incidence(m);
  const MatrixXd ds = m.node_variances().asDiagonal();
  const MatrixXd woodbury = ds - ds * b * MatrixXd(m.dual_precision()).inverse() * b.transpose() * ds;
  BOOST_TEST(max_relative(woodbury, cov) < 1e-10);
  const VectorXd from_dual =
      m.node_variances() - m.node_variances().cwiseAbs2().cwiseProduct(marginal_variances_dual_nodes(m));
  BOOST_TEST((from_dual - cov.diagonal()).cwiseQuotient(cov.diagonal()).cwiseAbs().maxCoeff() < 1e-9);
  const VectorXd exact = marginal_variances(m, Domain::Primal);
  BOOST_TEST((exact - cov.diagonal()).cwiseQuotient(cov.diagonal()).cwiseAbs().maxCoeff() < 1e-12);
  // Var(b_u x_u + b_v x_v) per edge, and the dual's own marginals both ways.
  const VectorXd edge_var = (b.transpose() * cov * b).diagonal();
  BOOST_TEST((marginal_variances_primal_edges(m) - edge_var).cwiseQuotient(edge_var).cwiseAbs().maxCoeff() < 1e-10);
  const VectorXd dual_var = MatrixXd(m.dual_precision()).inverse().diagonal();
  BOOST_TEST((marginal_variances(m, Domain::Dual) - dual_var).cwiseQuotient(dual_var).cwiseAbs().maxCoeff() < 1e-11);
}

BOOST_AUTO_TEST_CASE(an_spd_matrix_without_factor_width_two_has_only_the_primal) {
  const MatrixXd q = triangle_ring(0.6);
  BOOST_TEST_REQUIRE(Eigen::SelfAdjointEigenSolver<MatrixXd>(q).eigenvalues().minCoeff() > 0.0);
  const Model m = Model::from_precision(sparse(q));
  BOOST_TEST(!m.has_dual());
  BOOST_TEST(m.factor_width().failing_row >= 0);
  BOOST_TEST(m.factor_width().failing_row < 9);
  BOOST_TEST(m.factor_width().positive_couplings == 9);
  BOOST_CHECK_THROW(DualIncidenceKernel{m}, std::invalid_argument);
  BOOST_CHECK_THROW(m.dual_precision(), std::invalid_argument);
  BOOST_CHECK_THROW(m.node_variances(), std::invalid_argument);
  BOOST_CHECK_THROW(marginal_variances(m, Domain::Dual), std::invalid_argument);
  try {
    DualIncidenceKernel k(m);
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("row " + std::to_string(m.factor_width().failing_row)) != std::string::npos,
               e.what());
  }
  const VectorXd want = q.inverse().diagonal();
  BOOST_TEST((marginal_variances(m, Domain::Primal) - want).cwiseQuotient(want).cwiseAbs().maxCoeff() < 1e-12);
  const Rates rates = convergence_rates(m);
  BOOST_TEST(std::isfinite(rates.rate_primal));
  BOOST_TEST(std::isnan(rates.rate_dual));
  BOOST_TEST(std::isfinite(entropy(m).primal));
}

BOOST_AUTO_TEST_CASE(bad_matrices_are_refused_naming_the_problem) {
  auto message = [](const MatrixXd& q) {
    try {
      (void)Model::from_precision(sparse(q));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string indefinite = message(triangle_ring(1.2));
  BOOST_TEST(indefinite.find("not positive definite") != std::string::npos, indefinite);
  BOOST_TEST(indefinite.find("pivot of row") != std::string::npos, indefinite);
  MatrixXd asym = signed_matrix(3, 1.5, 3);
  asym(0, 1) += 1e-3;
  BOOST_TEST(message(asym).find("not symmetric") != std::string::npos, message(asym));
  MatrixXd one_sided = signed_matrix(3, 1.5, 3);
  one_sided(1, 0) = 0.0;
  BOOST_TEST(message(one_sided).find("mirror") != std::string::npos, message(one_sided));
  MatrixXd zero_diag = signed_matrix(3, 1.5, 3);
  zero_diag(4, 4) = 0.0;
  BOOST_TEST(message(zero_diag).find("row 4") != std::string::npos, message(zero_diag));
  MatrixXd nan = signed_matrix(3, 1.5, 3);
  nan(2, 2) = std::nan("");
  BOOST_TEST(message(nan).find("not finite") != std::string::npos, message(nan));
  BOOST_TEST(message(MatrixXd::Identity(3, 4)).find("not square") != std::string::npos);
  // A tiny asymmetry within the tolerance is averaged; the default tolerance is 1e-12 relative.
  MatrixXd near = signed_matrix(3, 1.5, 3);
  near(0, 1) *= 1 + 1e-14;
  BOOST_TEST(message(near) == "accepted");
}

BOOST_AUTO_TEST_CASE(a_laplacian_like_matrix_keeps_the_unit_incidence) {
  // Negative couplings and strict diagonal dominance: d = 1 and b = (+1, -1), the thin membrane exactly.
  const Model paper(make_torus(4, 4), 0.8, 0.5);
  const Model m = Model::from_precision(paper.primal_precision());
  BOOST_TEST(m.unit_incidence());
  BOOST_TEST(m.has_dual());
  BOOST_TEST((m.node_variances() - paper.node_variances()).cwiseAbs().maxCoeff() < 1e-14);
  BOOST_TEST((m.edge_variances() - paper.edge_variances()).cwiseAbs().maxCoeff() < 1e-14);
  BOOST_CHECK_THROW(Model(m).set_observations(VectorXd::Zero(16)), std::invalid_argument);
  Model with_h = m;
  with_h.set_canonical_vector(VectorXd::Ones(16));
  BOOST_TEST(with_h.has_mean());
}

BOOST_AUTO_TEST_CASE(the_weighted_constructor_checks_its_weights) {
  const Model base = oracle::small_model();
  std::vector<double> head(8, 1.0), tail(8, -1.0);
  BOOST_TEST(Model(base.graph(), base.node_sd(), base.edge_sd(), head, tail).unit_incidence());
  tail[3] = 0.0;
  BOOST_CHECK_THROW(Model(base.graph(), base.node_sd(), base.edge_sd(), head, tail), std::invalid_argument);
  tail[3] = std::nan("");
  BOOST_CHECK_THROW(Model(base.graph(), base.node_sd(), base.edge_sd(), head, tail), std::invalid_argument);
  tail.pop_back();
  BOOST_CHECK_THROW(Model(base.graph(), base.node_sd(), base.edge_sd(), head, tail), std::invalid_argument);
}

// The thin membrane written with explicit unit weights is the same model: the same bits in every domain.
BOOST_AUTO_TEST_CASE(explicit_unit_weights_give_the_thin_membranes_bits) {
  const Model a = oracle::small_model();
  const Model b(a.graph(), a.node_sd(), a.edge_sd(), std::vector<double>(8, 1.0), std::vector<double>(8, -1.0));
  EnsembleOptions o;
  o.chains = 5;
  o.sweeps = 7;
  o.seed = 4;
  for (const Domain d : {Domain::Primal, Domain::Dual}) {
    const auto x = oracle::collect(a, d, o), y = oracle::collect(b, d, o);
    BOOST_TEST((x.at(7) - y.at(7)).cwiseAbs().maxCoeff() == 0.0);
  }
}

// The weighted dual kernel and the CSR kernel on Q evolve the exact first and second moments of the Gibbs chain on
// R and Q (the dense linear evolution of sampler_oracles.hpp). 400000 chains, Bonferroni over every moment of every
// checkpoint at a family-wise false-failure probability of 1e-6.
BOOST_AUTO_TEST_CASE(the_weighted_samplers_follow_the_exact_moments) {
  const Model m = oracle::small_signed_model();
  BOOST_TEST_REQUIRE(!m.unit_incidence());
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Constant, 400000, 3, m);
  oracle::check_exact_moments(ScanOrder::Fixed, InitialState::Random, 400000, 2, m);
}

// The measured mean decay along the slowest mode matches the computed random-sweep rate, primal and dual, on a
// signed model made from a precision matrix (the rate from convergence_rates(), not the dense oracle).
BOOST_AUTO_TEST_CASE(the_measured_decay_matches_the_computed_rate_on_a_signed_model) {
  const Model m = Model::from_precision(sparse(signed_matrix(4, 1.1, 5)));
  const Rates rates = convergence_rates(m);
  for (const Domain d : {Domain::Primal, Domain::Dual}) {
    const oracle::SlowestMode mode = oracle::slowest_mode(MatrixXd(m.precision(d)));
    const double computed = d == Domain::Primal ? rates.rate_primal : rates.rate_dual;
    BOOST_TEST(std::abs(std::log(computed) / std::log(mode.rate) - 1) < 1e-8);
    EnsembleOptions o;
    o.chains = 20000;
    o.sweeps = 6;
    o.seed = 99;
    o.scan = ScanOrder::Random;
    // 6 z-tests per domain at |z| < 5: false-failure probability below 1e-5.
    oracle::check_slowest_mode_decay(m, d, mode, o, 5.0, std::string("signed 4x4 ") + to_string(d));
  }
}

namespace {

// One pass of run_updates at width 4 on every vector path the CPU has equals the per-site update loop, bit for bit.
void check_vector_paths_give_the_scalar_bits(const Model& m) {
  const DualIncidenceKernel k(m);
  for (const char* path : {"scalar", "avx2", "avx512"}) {
    if (!detail::select_update_path(path)) continue;
    constexpr int W = 4;
    const std::size_t n = static_cast<std::size_t>(k.dimension());
    std::vector<double> y(n * W), x(static_cast<std::size_t>(m.num_nodes()) * W), eps(3 * n * W);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::sin(0.37 * static_cast<double>(i));
    for (std::size_t i = 0; i < eps.size(); ++i) eps[i] = std::cos(1.13 * static_cast<double>(i));
    std::vector<Index> sites;
    for (std::size_t t = 0; t < 3 * n; ++t) sites.push_back(static_cast<Index>((5 * t + 1) % n));
    k.rebuild_tally<W>(y.data(), x.data());
    std::vector<double> y2 = y, x2 = x;
    k.run_updates<W>(sites.data(), sites.size(), y.data(), x.data(), eps.data());
    for (std::size_t t = 0; t < sites.size(); ++t) k.update<W>(sites[t], y2.data(), x2.data(), eps.data() + t * W);
    BOOST_TEST(y == y2, path);
    BOOST_TEST(x == x2, path);
  }
  detail::select_update_path("auto");
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_vector_paths_of_the_weighted_dual_kernel_give_the_scalar_bits) {
  const Model m = oracle::small_signed_model();
  const DualIncidenceKernel k(m);
  BOOST_TEST(k.weighted());
  BOOST_TEST(!k.signed_unit());
  BOOST_TEST(!k.uniform_coefficients());
  check_vector_paths_give_the_scalar_bits(m);
}

// A signed unit incidence (every |b| = 1, signs of both kinds at heads and tails) runs on the 32-byte record with
// the signs in alpha and beta: its vector paths give the scalar bits, its tally is B y~ for the model's own B, and
// its chain follows the exact moments of the Gibbs chain on R (as above: 400000 chains, family-wise false-failure
// probability 1e-6).
BOOST_AUTO_TEST_CASE(a_signed_unit_incidence_runs_on_the_short_record) {
  const Model m = oracle::small_signed_unit_model();
  BOOST_TEST_REQUIRE(!m.unit_incidence());
  const DualIncidenceKernel k(m);
  BOOST_TEST(k.signed_unit());
  BOOST_TEST(!k.weighted());
  check_vector_paths_give_the_scalar_bits(m);
  VectorXd y(m.num_edges());
  for (Index e = 0; e < m.num_edges(); ++e) y[e] = std::sin(0.7 * static_cast<double>(e) + 0.2);
  VectorXd x(m.num_nodes());
  k.rebuild_tally<1>(y.data(), x.data());
  const VectorXd expected = SparseMatrix(m.incidence()) * y;
  BOOST_TEST((x - expected).cwiseAbs().maxCoeff() < 1e-14);
  oracle::check_exact_moments(ScanOrder::Random, InitialState::Constant, 400000, 3, m);
  // The diagonally dominant signed matrix (d = 1) of the tests above gives unit weights of both signs.
  const DualIncidenceKernel from_matrix(Model::from_precision(sparse(signed_matrix(4, 1.1, 5))));
  BOOST_TEST(from_matrix.signed_unit());
}

// The flow control variates carry over to a weighted incidence (the flow identity needs only Q = D_s^-1 + L_sigma,
// L_sigma = B D_sigma^-1 B^T): their certified bracket l_v <= V_v <= E_v holds exactly (a deterministic check), and
// the dual-cv and primal-cv estimates agree with the exact variances within their standard errors: |z| < 4.5 over
// the 25 + 25 nodes of the two runs, a false-failure probability of about 50 x 6.8e-6 = 3.4e-4 (fixed seeds).
BOOST_AUTO_TEST_CASE(flow_control_variates_hold_on_a_signed_model) {
  // An odd torus: not bipartite, so flipping every coupling's sign is not a similarity that keeps the variances.
  const Model m = Model::from_precision(sparse(signed_matrix(5, 1.1, 5)));
  BOOST_TEST_REQUIRE(!m.unit_incidence());
  const VectorXd exact = MatrixXd(m.primal_precision()).inverse().diagonal();
  for (const MarginalMethod method : {MarginalMethod::DualCv, MarginalMethod::PrimalCv}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.01;
    o.seed = 17;
    o.threads = 2;
    const MarginalResult r = estimate_marginal_variances(m, o);
    BOOST_TEST_REQUIRE(r.lower.size() == exact.size());
    for (Index v = 0; v < exact.size(); ++v) {
      BOOST_TEST(r.lower[v] <= exact[v] * (1 + 1e-12), to_string(method) << " node " << v);
      BOOST_TEST(r.upper[v] >= exact[v] * (1 - 1e-12), to_string(method) << " node " << v);
      const double z = (r.estimate[v] - exact[v]) / r.std_error[v];
      BOOST_TEST(std::abs(z) < 4.5, to_string(method) << " node " << v << ": z = " << z);
    }
    BOOST_TEST(r.gap_ratio_rms < 1.0, to_string(method) << " gap ratio " << r.gap_ratio_rms);
  }
}

// Without a dual there is no D_s, so no flow energy E_v; the Dirichlet identity V_v = l_v + E[((r_k(Q) x)_v)^2] needs
// only Q. Deterministic: the lower bounds hold on every node and the local precomputation equals the dense one;
// E_v is NaN and every dual use is refused by name.
BOOST_AUTO_TEST_CASE(the_dirichlet_control_variate_runs_without_a_dual) {
  const MatrixXd q = triangle_ring(0.6, 30);
  const Model m = Model::from_precision(sparse(q));
  BOOST_TEST_REQUIRE(!m.has_dual());
  const VectorXd exact = q.inverse().diagonal();
  FlowCvOptions local, dense;
  local.degree = dense.degree = 6;
  dense.precompute = FlowPrecompute::Dense;
  const FlowControlVariate cv(m, local);
  dense.kappa = cv.beta() / cv.alpha();
  dense.beta = cv.beta();
  const FlowControlVariate reference(m, dense);
  BOOST_TEST(!cv.has_energy());
  BOOST_TEST(cv.flow_energy().array().isNaN().all());
  for (Index v = 0; v < exact.size(); ++v) {
    BOOST_TEST(cv.lower_bound()[v] <= exact[v] * (1 + 1e-12), "node " << v);
    BOOST_TEST(std::abs(cv.lower_bound()[v] - reference.lower_bound()[v]) < 1e-12 * exact[v], "node " << v);
  }
  // The tuned kappa bounds the variances more tightly than an untuned interval (the sum of l_v is what it maximises).
  FlowCvOptions untuned = local;
  untuned.kappa = 2;
  BOOST_TEST(cv.lower_bound().sum() >= FlowControlVariate(m, untuned).lower_bound().sum());
  BOOST_TEST(cv.lower_bound().sum() > 0.9 * exact.sum());
  BOOST_CHECK_THROW(cv.dual_terms(MatrixXd::Ones(exact.size(), 2)), std::invalid_argument);
  BOOST_CHECK_THROW(cv.energy_matrix(), std::invalid_argument);
  BOOST_CHECK_THROW(MarginalVarianceCv(cv, Domain::Dual, 4), std::invalid_argument);
}

// Every primal method of `marginals` on a matrix without a dual, against its dense inverse: |z| < 4.5 over the 90
// nodes of each of the two runs (64 chains: Student's t with 63 degrees of freedom, P(|t| > 4.5) = 3e-5 per node),
// a false-failure probability below 180 x 3e-5 = 5.4e-3 (fixed seeds); the dual methods are refused naming the row.
BOOST_AUTO_TEST_CASE(every_primal_marginals_method_runs_without_a_dual) {
  const MatrixXd q = triangle_ring(0.6, 30);
  const Model m = Model::from_precision(sparse(q));
  const VectorXd exact = q.inverse().diagonal();
  {  // the automatic method: on 90 nodes of a lattice-like ring the factor is cheapest
    MarginalOptions o;
    o.method = MarginalMethod::Auto;
    const MarginalResult r = estimate_marginal_variances(m, o);
    BOOST_TEST(std::string(to_string(r.method)) == "exact");
    BOOST_TEST(r.choice.automatic);
    BOOST_TEST((r.estimate - exact).cwiseAbs().maxCoeff() <= 1e-12 * exact.maxCoeff());
  }
  for (const MarginalMethod method : {MarginalMethod::PrimalCv, MarginalMethod::Primal}) {
    MarginalOptions o;
    o.method = method;
    o.rel_rmse = 0.01;
    o.chains = 64;
    o.seed = 23;
    const MarginalResult r = estimate_marginal_variances(m, o);
    BOOST_TEST(r.rel_se_rms <= 0.01);
    for (Index v = 0; v < exact.size(); ++v) {
      const double z = (r.estimate[v] - exact[v]) / r.std_error[v];
      BOOST_TEST(std::abs(z) < 4.5, to_string(method) << " node " << v << ": z = " << z);
    }
    if (method == MarginalMethod::PrimalCv) {
      BOOST_TEST(r.lower.size() == exact.size());
      BOOST_TEST(r.upper.array().isNaN().all());  // no flow energy without D_s
      BOOST_TEST(r.gap_ratio_rms < 0.5);
    }
  }
  MarginalOptions o;
  o.method = MarginalMethod::Exact;
  BOOST_TEST((estimate_marginal_variances(m, o).estimate - exact).cwiseQuotient(exact).cwiseAbs().maxCoeff() < 1e-12);
  for (const MarginalMethod method : {MarginalMethod::Dual, MarginalMethod::DualCv}) {
    o.method = method;
    try {
      (void)estimate_marginal_variances(m, o);
      BOOST_ERROR(to_string(method) << " ran without a dual");
    } catch (const std::invalid_argument& e) {
      const std::string row = "row " + std::to_string(m.factor_width().failing_row);
      BOOST_TEST(std::string(e.what()).find(row) != std::string::npos, e.what());
    }
  }
}

// The convergence measurement of a model without a dual runs the primal sampler alone: its table has the primal
// columns only, its rates the primal rows, and the error decays to the noise (the last Eu within 4 standard errors
// of 0: a false-failure probability below 1e-4 for the split-half estimator's near-Gaussian error, fixed seed).
BOOST_AUTO_TEST_CASE(the_convergence_of_a_model_without_a_dual_is_the_primal_alone) {
  const Model m = Model::from_precision(sparse(triangle_ring(0.6, 10)));
  ConvergenceSettings cs;
  cs.chains = 600;
  cs.sweeps = 40;
  cs.seed = 5;
  const ExperimentResult r = run_convergence(m, "ring", "triangle ring", cs);
  BOOST_TEST(r.table.has_column("Eu_primal"));
  BOOST_TEST(!r.table.has_column("Eu_dual"));
  BOOST_TEST_REQUIRE(!r.rates.empty());
  for (const auto& row : r.rates) {
    BOOST_TEST(row.label == "primal");
    BOOST_TEST(std::isfinite(row.predicted));
  }
  const auto eu = r.table.column("Eu_primal"), se = r.table.column("Eu_se_primal");
  BOOST_TEST(eu.front() > 0.0);
  BOOST_TEST(std::abs(eu.back()) < 4 * se.back(), "Eu " << eu.back() << " +- " << se.back());
  cs.control_variate = true;  // the dual's control variate: refused by name
  BOOST_CHECK_THROW(run_convergence(m, "ring", "triangle ring", cs), std::invalid_argument);
}
