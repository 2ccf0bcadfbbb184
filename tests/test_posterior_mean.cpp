#define BOOST_TEST_MODULE posterior_mean
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/kernels.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;
using dualgibbs::testing::message_has;

namespace {

// Dense Q = D_s^-1 + B D_sigma^-1 B^T built from the edge list, independent of Model's sparse assembly.
Eigen::MatrixXd dense_q(const Model& m) {
  const Graph& g = m.graph();
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(g.num_nodes(), g.num_nodes());
  for (Index v = 0; v < g.num_nodes(); ++v) q(v, v) = 1.0 / (m.node_sd()[v] * m.node_sd()[v]);
  for (Index e = 0; e < g.num_edges(); ++e) {
    const double w = 1.0 / (m.edge_sd()[e] * m.edge_sd()[e]);
    const Index u = g.edge(e).head, v = g.edge(e).tail;
    q(u, u) += w;
    q(v, v) += w;
    q(u, v) -= w;
    q(v, u) -= w;
  }
  return q;
}

// A heterogeneous model on `g` with observations drawn from a fixed stream.
Model observed_model(Graph g, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> sd(0.3, 2.0), obs(-3.0, 5.0);
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = sd(rng);
  for (double& x : sigma) x = sd(rng);
  Model m(std::move(g), s, sigma);
  Eigen::VectorXd z(m.num_nodes());
  for (Index v = 0; v < m.num_nodes(); ++v) z[v] = obs(rng);
  m.set_observations(z);
  return m;
}

double relative_error(const Eigen::VectorXd& a, const Eigen::VectorXd& b) { return (a - b).norm() / b.norm(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(model_mean)

BOOST_AUTO_TEST_CASE(observations_give_h_equal_to_z_over_s_squared) {
  Model m(make_path(3), std::vector<double>{1.0, 2.0, 0.5}, std::vector<double>{1.0, 1.0});
  BOOST_TEST(!m.has_mean());
  m.set_observations(Eigen::Vector3d(1.0, -4.0, 0.25));
  BOOST_TEST(m.has_mean());
  BOOST_TEST(m.canonical_vector()[0] == 1.0);
  BOOST_TEST(m.canonical_vector()[1] == -1.0);
  BOOST_TEST(m.canonical_vector()[2] == 1.0);
  BOOST_TEST(m.observations()[1] == -4.0);
  BOOST_TEST(m.summary().find("with observations") != std::string::npos);
  m.set_canonical_vector(Eigen::Vector3d(0.0, 1.0, 2.0));
  BOOST_TEST(m.observations().size() == 0);
  BOOST_TEST(m.canonical_vector()[2] == 2.0);
  const Model prior = m.without_mean();
  BOOST_TEST(!prior.has_mean());
  BOOST_TEST(m.has_mean());
  m.clear_mean();
  BOOST_TEST(!m.has_mean());
}

BOOST_AUTO_TEST_CASE(rejects_bad_observations) {
  Model m(make_cycle(4), 1.0, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(m.set_observations(Eigen::VectorXd::Zero(3)), std::invalid_argument,
                        message_has({"3 observations given for 4 nodes"}));
  BOOST_CHECK_EXCEPTION(m.set_observations(Eigen::Vector4d(0, nan, 0, 0)), std::invalid_argument,
                        message_has({"node 1", "nan", "not finite"}));
  BOOST_CHECK_EXCEPTION(m.set_observations(Eigen::Vector4d(0, 0, -inf, 0)), std::invalid_argument,
                        message_has({"node 2", "not finite"}));
  BOOST_CHECK_EXCEPTION(m.set_canonical_vector(Eigen::Vector4d(inf, 0, 0, 0)), std::invalid_argument,
                        message_has({"h_v of node 0", "not finite"}));
  BOOST_CHECK_EXCEPTION(m.set_canonical_vector(Eigen::VectorXd::Zero(5)), std::invalid_argument,
                        message_has({"length 5 given for 4 nodes"}));
  BOOST_TEST(!m.has_mean());               // nothing was set by the failed calls
  Model tiny(make_cycle(4), 1e-150, 1.0);  // s^2 = 1e-300: z / s^2 overflows for |z| > 1.8e8
  BOOST_CHECK_EXCEPTION(tiny.set_observations(Eigen::Vector4d(0, 0, 0, 1e10)), std::invalid_argument,
                        message_has({"node 3", "overflows"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(solvers)

// Oracle: a dense Eigen solve of the independently built Q; the tolerance 1e-10 is far above the rounding of
// either solve for these well-conditioned Q (cond < 1e3).
BOOST_AUTO_TEST_CASE(cholesky_matches_a_dense_solve) {
  const std::vector<Graph> graphs = {make_torus(5, 4), make_grid(6, 7), make_star(9),
                                     make_complete(8), make_path(2),    make_random_regular(20, 3, 7)};
  unsigned seed = 1;
  for (const Graph& g : graphs) {
    const Model m = observed_model(g, seed++);
    const Eigen::MatrixXd q = dense_q(m);
    const Eigen::VectorXd h = m.observations().cwiseQuotient(m.node_variances());
    const Eigen::VectorXd want = q.llt().solve(h);
    const PosteriorMean pm = posterior_mean(m);
    BOOST_TEST(relative_error(pm.mean, want) < 1e-10, g.summary());
    BOOST_TEST(pm.relative_residual < 1e-12);
    BOOST_TEST(pm.iterations == 0u);
    const CholeskyFactor f(m.primal_precision());
    BOOST_TEST(relative_error(posterior_mean(m, f), want) < 1e-10);
  }
}

BOOST_AUTO_TEST_CASE(conjugate_gradients_agree_with_cholesky_to_their_tolerance) {
  const Model m = observed_model(make_grid(40, 30), 11);
  const Eigen::VectorXd exact = posterior_mean(m).mean;
  // cond(Q) <= 2 max_v Q_vv s_max^2 (the bound the header states).
  const Eigen::VectorXd d = m.primal_diagonal();
  const double s_max = *std::max_element(m.node_sd().begin(), m.node_sd().end());
  const double cond_bound = 2.0 * d.maxCoeff() * s_max * s_max;
  for (double tol : {1e-4, 1e-8, 1e-12}) {
    PosteriorMeanOptions o;
    o.solver = MeanSolver::ConjugateGradient;
    o.tolerance = tol;
    const PosteriorMean cg = posterior_mean(m, o);
    BOOST_TEST(cg.iterations > 0u);
    BOOST_TEST(cg.relative_residual <= 10 * tol);
    BOOST_TEST(relative_error(cg.mean, exact) <= cond_bound * 10 * tol, "tolerance " << tol);
  }
}

BOOST_AUTO_TEST_CASE(a_model_without_mean_has_mean_zero) {
  const Model m(make_torus(4, 4), 1.0, 0.5);
  BOOST_TEST(posterior_mean(m).mean.isZero(0.0));
  PosteriorMeanOptions o;
  o.solver = MeanSolver::ConjugateGradient;
  BOOST_TEST(posterior_mean(m, o).mean.isZero(0.0));
  Model zero_obs = m;
  zero_obs.set_observations(Eigen::VectorXd::Zero(16));
  BOOST_TEST(posterior_mean(zero_obs, o).mean.isZero(0.0));
}

BOOST_AUTO_TEST_CASE(rejects_bad_options_and_reports_non_convergence) {
  const Model m = observed_model(make_grid(20, 20), 3);
  PosteriorMeanOptions o;
  o.solver = MeanSolver::ConjugateGradient;
  for (double bad : {0.0, 1.0, -1e-3, std::numeric_limits<double>::quiet_NaN()}) {
    o.tolerance = bad;
    BOOST_CHECK_EXCEPTION(posterior_mean(m, o), std::invalid_argument, message_has({"tolerance", "not in (0, 1)"}));
  }
  o.tolerance = 1e-12;
  o.max_iterations = 2;
  BOOST_CHECK_EXCEPTION(posterior_mean(m, o), SolverNotConverged,
                        message_has({"conjugate gradients stopped after 2 iterations", "above the tolerance"}));
  try {
    posterior_mean(m, o);
  } catch (const SolverNotConverged& e) {
    BOOST_TEST(e.iterations() == 2u);
    BOOST_TEST(e.relative_residual() > 1e-12);
  }
  CholeskyFactor empty;
  BOOST_CHECK_EXCEPTION(posterior_mean(m, empty), std::invalid_argument, message_has({"has no factor"}));
  const CholeskyFactor other(Model(make_cycle(5), 1.0, 1.0).primal_precision());
  BOOST_CHECK_EXCEPTION(posterior_mean(m, other), std::invalid_argument, message_has({"dimension 5", "400 nodes"}));
  BOOST_TEST((parse_mean_solver("cg") == MeanSolver::ConjugateGradient));
  BOOST_TEST(std::string(to_string(MeanSolver::Cholesky)) == "cholesky");
  BOOST_CHECK_EXCEPTION(parse_mean_solver("lu"), std::invalid_argument, message_has({"unknown mean solver 'lu'"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(samplers)

// Noise-free sweeps of the kernel with a right-hand side are Gauss–Seidel for Q mu = h: they must reach mu.
BOOST_AUTO_TEST_CASE(noise_free_primal_sweeps_solve_for_the_mean) {
  const Model m = observed_model(make_torus(6, 5), 5);
  const Eigen::VectorXd mu = posterior_mean(m).mean;
  const CsrKernel k(m.primal_precision(), m.canonical_vector());
  BOOST_TEST(k.has_rhs());
  GibbsSampler<CsrKernel, 4> gs(k, ScanOrder::Fixed, 1, 0, false);
  gs.set_constant_state(0.0);
  gs.sweep(2000);
  for (int c = 0; c < 4; ++c) BOOST_TEST(relative_error(gs.state(c), mu) < 1e-12);
  // The kernel without a right-hand side and the zero vector as right-hand side give the same bits.
  const CsrKernel k0(m.primal_precision());
  const CsrKernel kz(m.primal_precision(), Eigen::VectorXd::Zero(m.num_nodes()));
  GibbsSampler<CsrKernel, 4> a(k0, ScanOrder::Random, 9), b(kz, ScanOrder::Random, 9);
  a.set_random_state();
  b.set_random_state();
  a.sweep(20);
  b.sweep(20);
  for (int c = 0; c < 4; ++c) BOOST_TEST((a.state(c) == b.state(c)));
}

BOOST_AUTO_TEST_CASE(rejects_a_bad_right_hand_side) {
  const Model m(make_cycle(5), 1.0, 1.0);
  BOOST_CHECK_EXCEPTION(CsrKernel(m.primal_precision(), Eigen::VectorXd::Zero(4)), std::invalid_argument,
                        message_has({"right-hand side of length 4 for 5 coordinates"}));
  Eigen::VectorXd h = Eigen::VectorXd::Zero(5);
  h[3] = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(CsrKernel(m.primal_precision(), h), std::invalid_argument,
                        message_has({"right-hand side entry 3", "not finite"}));
}

// Stationary moments of the primal sampler with the data term and of the dual sampler plus mu, against the exact
// mean and variances and against each other. The chains are independent (lockstep 1) and run 300 sweeps from the
// constant 1: the primal rate on this model is about exp(-0.2) per sweep and the dual's faster, so the initial
// bias (of order 10^-26) is negligible against the standard errors (about 0.004). Each statistic is a mean over
// 20000 independent chains, so its z-score is N(0, 1) up to a CLT error (skewness of a chi-square_1 average:
// 0.02); the bound |z| < 5.8 over the 16 x 5 statistics below gives a false-failure probability below
// 80 x 6.7e-9 < 6e-7 under the normal approximation. It detects a mean off by 0.03 (about 7 standard errors) or a
// variance off by 4%.
BOOST_AUTO_TEST_CASE(primal_draws_have_the_posterior_moments_and_dual_plus_mu_agrees) {
  Model m(make_torus(4, 4), 1.0, 1.0);
  Eigen::VectorXd z(16);
  for (Index v = 0; v < 16; ++v) z[v] = std::sin(1.7 * static_cast<double>(v)) * 3.0;
  m.set_observations(z);
  const Eigen::VectorXd mu = posterior_mean(m).mean;
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  const double kZ = 5.8;
  const std::size_t L = 20000;
  EnsembleOptions o;
  o.chains = L;
  o.sweeps = 300;
  o.checkpoint_every = 300;
  o.seed = 2024;
  Eigen::MatrixXd primal, dual;
  run_ensemble(m, Domain::Primal, o, [&](const Checkpoint& cp) {
    if (cp.sweep == 300) primal = cp.states;
  });
  run_ensemble(m, Domain::Dual, o, [&](const Checkpoint& cp) {
    if (cp.sweep == 300) dual = cp.states;  // x~ = B y~ of each chain
  });
  const auto n = static_cast<double>(L);
  for (Index v = 0; v < 16; ++v) {
    const Eigen::ArrayXd x = primal.row(v).transpose().array();
    const double mean = x.mean();
    const double sd_mean = std::sqrt(var[v] / n);
    BOOST_TEST(std::abs(mean - mu[v]) / sd_mean < kZ, "primal mean of node " << v);
    // Variance about the known mean: (x - mu)^2 averages to var.
    const Eigen::ArrayXd sq = (x - mu[v]).square();
    const double se_p = std::sqrt((sq - sq.mean()).square().sum() / (n - 1) / n);
    BOOST_TEST(std::abs(sq.mean() - var[v]) / se_p < kZ, "primal variance of node " << v);
    // Dual: Woodbury per draw, s^2 - s^4 x~^2 [eq:cov_woodbury3] (s = 1 here), averages to var.
    const Eigen::ArrayXd w = 1.0 - dual.row(v).transpose().array().square();
    const double se_d = std::sqrt((w - w.mean()).square().sum() / (n - 1) / n);
    BOOST_TEST(std::abs(w.mean() - var[v]) / se_d < kZ, "dual variance of node " << v);
    // The two samplers' variances agree with each other (independent runs: standard errors add in quadrature).
    BOOST_TEST(std::abs(w.mean() - sq.mean()) / std::hypot(se_p, se_d) < kZ, "primal vs dual at node " << v);
  }
  // The dual chain ignores the mean: its x~ has mean zero (fluctuation only).
  for (Index v = 0; v < 16; ++v) {
    const Eigen::ArrayXd xt = dual.row(v).transpose().array();
    const double se = std::sqrt((xt - xt.mean()).square().sum() / (n - 1) / n);
    BOOST_TEST(std::abs(xt.mean()) / se < kZ, "dual x~ mean at node " << v);
  }
}

BOOST_AUTO_TEST_SUITE_END()
