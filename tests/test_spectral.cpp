#define BOOST_TEST_MODULE spectral
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <vector>

using namespace dualgibbs;
namespace bdata = boost::unit_test::data;

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

// ---- Independent oracles: dense matrices built here from the definitions, Eigen's dense eigensolvers --------

Eigen::MatrixXd dense_incidence(const Graph& g) {
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(g.num_nodes(), g.num_edges());
  for (Index e = 0; e < g.num_edges(); ++e) {
    b(g.edge(e).head, e) = 1.0;
    b(g.edge(e).tail, e) = -1.0;
  }
  return b;
}

// Q = D_s^-1 + B D_sigma^-1 B^T [eqn:QPNH] or R = D_sigma + B^T D_s B [eqn:QPNHDual], from standard deviations.
Eigen::MatrixXd oracle_precision(const Graph& g, const Eigen::VectorXd& s, const Eigen::VectorXd& sigma, Domain d) {
  const Eigen::MatrixXd b = dense_incidence(g);
  const Eigen::VectorXd s2 = s.array().square(), sigma2 = sigma.array().square();
  if (d == Domain::Primal)
    return Eigen::MatrixXd(s2.cwiseInverse().asDiagonal()) + b * sigma2.cwiseInverse().asDiagonal() * b.transpose();
  return Eigen::MatrixXd(sigma2.asDiagonal()) + b.transpose() * s2.asDiagonal() * b;
}

// lambda_max of the non-symmetric A = I - diag(M)^-1 M [eqn:AGen, eqn:AD] by Eigen's general eigensolver:
// independent of the symmetric form the library uses.
double oracle_lambda_max_A(const Eigen::MatrixXd& m) {
  const Eigen::Index n = m.rows();
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(n, n) - m.diagonal().cwiseInverse().asDiagonal() * m;
  Eigen::EigenSolver<Eigen::MatrixXd> es(a, false);
  BOOST_REQUIRE(es.info() == Eigen::Success);
  BOOST_REQUIRE(es.eigenvalues().imag().cwiseAbs().maxCoeff() < 1e-9);  // similar to a symmetric matrix
  return es.eigenvalues().real().maxCoeff();
}

Eigen::MatrixXd oracle_laplacian(const Graph& g) {
  const Eigen::MatrixXd b = dense_incidence(g);
  return b * b.transpose();
}

// Second-smallest Laplacian eigenvalue of each component (NaN for a single node).
std::vector<double> oracle_lambda2_per_component(const Graph& g) {
  const Eigen::MatrixXd l = oracle_laplacian(g);
  std::vector<double> out;
  for (Index c = 0; c < g.num_components(); ++c) {
    std::vector<Index> nodes;
    for (Index v = 0; v < g.num_nodes(); ++v)
      if (g.component_labels()[v] == c) nodes.push_back(v);
    if (nodes.size() == 1) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    Eigen::MatrixXd lc(nodes.size(), nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (std::size_t j = 0; j < nodes.size(); ++j) lc(i, j) = l(nodes[i], nodes[j]);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(lc, Eigen::EigenvaluesOnly);
    out.push_back(es.eigenvalues()[1]);
  }
  return out;
}

double oracle_rate(double lambda, double n) { return std::pow((n - 1.0 + lambda) / n, n); }

// Deterministic uniform numbers in [lo, hi) (splitmix64), for heterogeneous parameters.
struct Uniform {
  std::uint64_t state;
  double operator()(double lo, double hi) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1.0p-53;
  }
};

struct Parameters {
  Eigen::VectorXd s, sigma;
};

Parameters homogeneous(const Graph& g, double s, double sigma) {
  return {Eigen::VectorXd::Constant(g.num_nodes(), s), Eigen::VectorXd::Constant(g.num_edges(), sigma)};
}

Parameters heterogeneous(const Graph& g, std::uint64_t seed) {
  Uniform u{seed};
  Parameters p{Eigen::VectorXd(g.num_nodes()), Eigen::VectorXd(g.num_edges())};
  for (Index v = 0; v < g.num_nodes(); ++v) p.s[v] = u(0.3, 2.0);
  for (Index e = 0; e < g.num_edges(); ++e) p.sigma[e] = u(0.05, 1.5);
  return p;
}

Model make_model(const Graph& g, const Parameters& p) {
  return Model(g, std::vector<double>(p.s.data(), p.s.data() + p.s.size()),
               std::vector<double>(p.sigma.data(), p.sigma.data() + p.sigma.size()));
}

// ---- Graph families ----------------------------------------------------------------------------------------

struct Family {
  const char* name;
  std::function<Graph()> make;
};
std::ostream& operator<<(std::ostream& os, const Family& f) { return os << f.name; }

const std::vector<Family> kFamilies = {
    {"torus:6x7", [] { return make_torus(6, 7); }},
    {"grid:5x8", [] { return make_grid(5, 8); }},
    {"path:30", [] { return make_path(30); }},
    {"cycle:25", [] { return make_cycle(25); }},
    {"complete:12", [] { return make_complete(12); }},
    {"bipartite:5,7", [] { return make_complete_bipartite(5, 7); }},
    {"star:15", [] { return make_star(15); }},
    {"kregular:40,3", [] { return make_random_regular(40, 3, 7); }},
    {"ws:40,4,0.2", [] { return make_watts_strogatz(40, 4, 0.2, 3); }},
    {"er:40,0.08", [] { return make_erdos_renyi(40, 0.08, 5); }},  // disconnected, with isolated nodes
    {"ba:40,2", [] { return make_barabasi_albert(40, 2, 11); }},
    {"hypercube:5", [] { return make_hypercube(5); }},
};

const SpectralMethod kMethods[] = {SpectralMethod::Dense, SpectralMethod::ShiftInvert, SpectralMethod::Lanczos,
                                   SpectralMethod::Auto};

SpectralOptions with(SpectralMethod m) {
  SpectralOptions o;
  o.method = m;
  return o;
}

bool close_rel(double a, double b, double tol) { return std::abs(a - b) <= tol * std::abs(b); }

}  // namespace

BOOST_AUTO_TEST_SUITE(spectral_against_dense_eigensolvers)

BOOST_DATA_TEST_CASE(lambda2_matches_dense_per_component, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  const std::vector<double> expected = oracle_lambda2_per_component(g);
  for (SpectralMethod m : kMethods) {
    BOOST_TEST_CONTEXT(family.name << ", method " << to_string(m)) {
      const std::vector<double> got = algebraic_connectivity_per_component(g, m);
      BOOST_TEST_REQUIRE(got.size() == expected.size());
      for (std::size_t c = 0; c < got.size(); ++c) {
        if (std::isnan(expected[c])) {
          BOOST_TEST(std::isnan(got[c]));
        } else {
          BOOST_TEST(close_rel(got[c], expected[c], 1e-10),
                     "component " << c << ": " << std::setprecision(17) << got[c] << " vs " << expected[c]);
        }
      }
      if (g.num_components() == 1) BOOST_TEST(close_rel(algebraic_connectivity(g, m), expected[0], 1e-10));
    }
  }
}

// Both ends of the Laplacian spectrum from one run (the burn-in's lambda_2 and the control variate's interval top in
// `marginals`), against the dense oracle, for every connected family and method: complete:12 (every non-zero
// eigenvalue 12, so the Lanczos operator is 12 I) and hypercube:5 (multiplicities 5, 10, ...) are the degenerate cases.
BOOST_DATA_TEST_CASE(laplacian_spectrum_ends_match_dense, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  if (g.num_components() != 1) {
    BOOST_CHECK_THROW(laplacian_spectrum_ends(g), std::invalid_argument);
    return;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(oracle_laplacian(g), Eigen::EigenvaluesOnly);
  const double l2 = es.eigenvalues()[1], top = es.eigenvalues()[g.num_nodes() - 1];
  for (SpectralMethod m : kMethods) {
    BOOST_TEST_CONTEXT(family.name << ", method " << to_string(m)) {
      const LaplacianEnds ends = laplacian_spectrum_ends(g, with(m));
      BOOST_TEST(close_rel(ends.lambda2, l2, 1e-9), std::setprecision(17) << ends.lambda2 << " vs " << l2);
      BOOST_TEST(close_rel(ends.lambda_max, top, 1e-9), std::setprecision(17) << ends.lambda_max << " vs " << top);
      BOOST_TEST(ends.lambda_max_residual <= 1e-9);
      BOOST_TEST((ends.method != SpectralMethod::Auto));
    }
  }
}

// The loose tolerance `marginals` uses (5e-2) on an expander: the Ritz values never leave the spectrum (lambda2 not
// below lambda_2, so the burn-in's lambda2 (1 - tol) is a lower bound), both within the tolerance, and the reported
// residual is the pair's true one (recomputed here from the dense spectrum's bound: an eigenvalue lies within it).
BOOST_AUTO_TEST_CASE(laplacian_spectrum_ends_loose_tolerance_on_expander) {
  const Graph g = make_random_regular(400, 4, 5);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(oracle_laplacian(g), Eigen::EigenvaluesOnly);
  const double l2 = es.eigenvalues()[1], top = es.eigenvalues()[g.num_nodes() - 1];
  SpectralOptions o = with(SpectralMethod::Lanczos);
  o.tolerance = 5e-2;
  const LaplacianEnds ends = laplacian_spectrum_ends(g, o);
  BOOST_TEST(ends.lambda2 >= l2 * (1 - 1e-12));
  BOOST_TEST(ends.lambda2 * (1 - o.tolerance) <= l2);
  BOOST_TEST(ends.lambda_max <= top * (1 + 1e-12));
  BOOST_TEST(ends.lambda_max >= top * (1 - o.tolerance));
  BOOST_TEST(ends.lambda_max_residual <= o.tolerance);
  double nearest = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < es.eigenvalues().size(); ++i)
    nearest = std::min(nearest, std::abs(es.eigenvalues()[i] - ends.lambda_max));
  BOOST_TEST(nearest <= ends.lambda_max_residual * ends.lambda_max * (1 + 1e-9));
  BOOST_CHECK_THROW(laplacian_spectrum_ends(Graph(1, {})), std::invalid_argument);
}

BOOST_DATA_TEST_CASE(lambda_max_A_matches_dense_general_eigensolver, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  const Parameters params[] = {homogeneous(g, 1.0, 0.25), homogeneous(g, 1.0, 0.01), homogeneous(g, 0.5, 3.0),
                               heterogeneous(g, 42)};
  for (const Parameters& p : params) {
    const Model model = make_model(g, p);
    for (Domain d : {Domain::Primal, Domain::Dual}) {
      const double expected = oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, d));
      for (SpectralMethod m : kMethods) {
        BOOST_TEST_CONTEXT(family.name << ", " << to_string(d) << ", "
                                       << (model.is_homogeneous() ? "homogeneous s = " : "heterogeneous")
                                       << (model.is_homogeneous() ? model.s() : 0.0) << ", sigma "
                                       << (model.is_homogeneous() ? model.sigma() : 0.0) << ", method "
                                       << to_string(m)) {
          const double got = lambda_max_A(model, d, with(m));
          BOOST_TEST(std::abs(got - expected) <= 1e-10, std::setprecision(17) << got << " vs " << expected);
          BOOST_TEST(got >= -1e-14);
          BOOST_TEST(got < 1.0);
        }
      }
    }
  }
}

BOOST_DATA_TEST_CASE(convergence_rates_match_dense_values, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  for (const Parameters& p : {homogeneous(g, 1.0, 0.25), heterogeneous(g, 9)}) {
    const Model model = make_model(g, p);
    const double lp = oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, Domain::Primal));
    const double ld = oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, Domain::Dual));
    const std::vector<double> l2 = oracle_lambda2_per_component(g);
    double l2_min = std::numeric_limits<double>::infinity();
    for (double x : l2)
      if (!std::isnan(x)) l2_min = std::min(l2_min, x);
    const double n = g.num_nodes(), m = g.num_edges();
    for (SpectralMethod method : kMethods) {
      BOOST_TEST_CONTEXT(family.name << (model.is_homogeneous() ? " homogeneous" : " heterogeneous") << ", method "
                                     << to_string(method)) {
        const Rates r = convergence_rates(model, with(method));
        BOOST_TEST(r.components == g.num_components());
        BOOST_TEST(r.lambda2_L_per_component.size() == l2.size());
        if (g.num_components() == 1)
          BOOST_TEST(close_rel(r.lambda2_L, l2[0], 1e-10));
        else
          BOOST_TEST(r.lambda2_L == 0.0);
        BOOST_TEST(close_rel(r.lambda_min_nonzero_L, l2_min, 1e-10));
        BOOST_TEST(std::abs(r.lambda_max_A_primal - lp) <= 1e-10);
        BOOST_TEST(std::abs(r.lambda_max_A_dual - ld) <= 1e-10);
        BOOST_TEST(close_rel(r.rate_primal, oracle_rate(lp, n), 1e-9));
        BOOST_TEST(close_rel(r.rate_dual, oracle_rate(ld, m), 1e-9));
        BOOST_TEST(close_rel(r.rate_primal_asymptotic, std::exp(lp - 1.0), 1e-9));
        BOOST_TEST(close_rel(r.rate_dual_asymptotic, std::exp(ld - 1.0), 1e-9));
        if (model.is_homogeneous() && g.has_cycles()) {
          const double s2 = 1.0, sigma2 = 0.0625;
          const double mu2 = s2 * (2.0 - l2_min) / (sigma2 + 2.0 * s2);
          BOOST_TEST(close_rel(r.rate_dual_effective, oracle_rate(mu2, m), 1e-9));
          BOOST_TEST(close_rel(r.rate_dual_effective_asymptotic, std::exp(mu2 - 1.0), 1e-9));
          BOOST_TEST(r.rate_dual_effective <= r.rate_dual * (1.0 + 1e-12));  // Prop. 5: never slower
        } else {
          BOOST_TEST(std::isnan(r.rate_dual_effective));
          BOOST_TEST(std::isnan(r.rate_dual_effective_asymptotic));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(closed_forms)

// Prop. 1: lambda_max(A) = k s^2 / (sigma^2 + k s^2) on every k-regular homogeneous model; the closed forms are
// compared with the dense oracle (they must be right) and with the library (it must agree with them).
BOOST_AUTO_TEST_CASE(prop1_holds_on_regular_graphs) {
  const std::vector<std::pair<Graph, Index>> graphs = {{make_random_regular(50, 3, 1), 3},
                                                       {make_random_regular(40, 6, 2), 6},
                                                       {make_torus(5, 6), 4},
                                                       {make_cycle(17), 2},
                                                       {make_complete(9), 8},
                                                       {make_hypercube(4), 4},
                                                       {make_complete_bipartite(6, 6), 6}};
  for (const auto& [g, k] : graphs) {
    for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, std::pair{2.0, 0.1}, std::pair{0.3, 1.7}}) {
      BOOST_TEST_CONTEXT(g.summary() << ", s " << s << ", sigma " << sigma) {
        const Model model(g, s, sigma);
        const double oracle = oracle_lambda_max_A(
            oracle_precision(g, homogeneous(g, s, sigma).s, homogeneous(g, s, sigma).sigma, Domain::Primal));
        BOOST_TEST(std::abs(prop1_primal_lambda_max_A(k, s, sigma) - oracle) <= 1e-12);
        const Rates r = convergence_rates(model);
        BOOST_TEST(std::abs(r.lambda_max_A_primal - prop1_primal_lambda_max_A(k, s, sigma)) <= 1e-10);
        BOOST_TEST(close_rel(prop1_primal_rate(k, s, sigma, g.num_nodes()), oracle_rate(oracle, g.num_nodes()), 1e-11));
        BOOST_TEST(close_rel(r.rate_primal, prop1_primal_rate(k, s, sigma, g.num_nodes()), 1e-9));
        BOOST_TEST(close_rel(prop1_primal_rate_asymptotic(k, s, sigma), std::exp(oracle - 1.0), 1e-11));
      }
    }
  }
}

// Prop. 4: lambda_max(A) = 2 s^2 / (sigma^2 + 2 s^2) for the dual of every homogeneous graph with cycles.
BOOST_DATA_TEST_CASE(prop4_holds_on_graphs_with_cycles, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  if (!g.has_cycles()) return;
  for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, std::pair{2.0, 0.1}, std::pair{0.3, 1.7}}) {
    BOOST_TEST_CONTEXT(family.name << ", s " << s << ", sigma " << sigma) {
      const Parameters p = homogeneous(g, s, sigma);
      const double oracle = oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, Domain::Dual));
      BOOST_TEST(std::abs(prop4_dual_lambda_max_A(s, sigma) - oracle) <= 1e-12);
      const Model model(g, s, sigma);
      for (SpectralMethod m : kMethods)
        BOOST_TEST(std::abs(lambda_max_A(model, Domain::Dual, with(m)) - prop4_dual_lambda_max_A(s, sigma)) <= 1e-10);
      BOOST_TEST(close_rel(prop4_dual_rate(s, sigma, g.num_edges()), oracle_rate(oracle, g.num_edges()), 1e-11));
      BOOST_TEST(close_rel(convergence_rates(model).rate_dual, prop4_dual_rate(s, sigma, g.num_edges()), 1e-9));
      BOOST_TEST(close_rel(prop4_dual_rate_asymptotic(s, sigma), std::exp(oracle - 1.0), 1e-11));
    }
  }
}

// Prop. 5: the largest eigenvalue of the dual A on the cut space R(B^T) is s^2 (2 - lambda_2) / (sigma^2 + 2 s^2).
// Oracle: an orthonormal basis U of R(B^T) from a dense SVD of B^T, then the eigenvalues of U^T A U.
BOOST_DATA_TEST_CASE(prop5_cut_space_eigenvalue, bdata::make(kFamilies), family) {
  const Graph g = family.make();
  if (!g.has_cycles() || g.num_components() > 1) return;
  for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, std::pair{0.7, 2.0}}) {
    BOOST_TEST_CONTEXT(family.name << ", s " << s << ", sigma " << sigma) {
      const Parameters p = homogeneous(g, s, sigma);
      const Eigen::MatrixXd r = oracle_precision(g, p.s, p.sigma, Domain::Dual);
      const Eigen::Index m = r.rows();
      const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(m, m) - r / (sigma * sigma + 2 * s * s);  // homogeneous
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(dense_incidence(g).transpose(), Eigen::ComputeThinU);
      const Eigen::Index rank = g.num_nodes() - 1;  // connected graph: rank B = |V| - 1
      BOOST_REQUIRE(svd.singularValues()[rank - 1] > 1e-8);
      const Eigen::MatrixXd u = svd.matrixU().leftCols(rank);
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(u.transpose() * a * u, Eigen::EigenvaluesOnly);
      const double mu2 = es.eigenvalues().maxCoeff();
      const double l2 = oracle_lambda2_per_component(g)[0];
      BOOST_TEST(std::abs(prop5_cut_space_lambda_max_A(l2, s, sigma) - mu2) <= 1e-11);
      BOOST_TEST(close_rel(prop5_effective_dual_rate(l2, s, sigma, m), oracle_rate(mu2, m), 1e-11));
      BOOST_TEST(close_rel(prop5_effective_dual_rate_asymptotic(l2, s, sigma), std::exp(mu2 - 1.0), 1e-11));
      const Rates rates = convergence_rates(Model(g, s, sigma));
      BOOST_TEST(close_rel(rates.rate_dual_effective, oracle_rate(mu2, m), 1e-9));
      BOOST_TEST(rates.rate_dual_effective < rates.rate_dual);
    }
  }
}

// Appendix A: the star S_n, primal lambda_max(A) = s^2 sqrt(|E| / ((sigma^2 + s^2)(sigma^2 + |E| s^2))), dual
// s^2 / (sigma^2 + 2 s^2) and r_d = (1 - (sigma^2 + s^2)/(sigma^2 + 2 s^2)/|E|)^|E|, which is Prop. 5 with lambda_2
// = 1.
BOOST_AUTO_TEST_CASE(star_appendix) {
  for (Index n : {3, 4, 10, 60, 900, 20000}) {
    for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, std::pair{1.0, 0.01}, std::pair{0.4, 3.0}}) {
      BOOST_TEST_CONTEXT("star " << n << ", s " << s << ", sigma " << sigma) {
        const Graph g = make_star(n);
        const Index m = n - 1;
        const Model model(g, s, sigma);
        if (n <= 60) {
          const Parameters p = homogeneous(g, s, sigma);
          BOOST_TEST(std::abs(star_primal_lambda_max_A(m, s, sigma) -
                              oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, Domain::Primal))) <= 1e-12);
          BOOST_TEST(std::abs(star_dual_lambda_max_A(m, s, sigma) -
                              oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, Domain::Dual))) <= 1e-12);
        }
        const Rates r = convergence_rates(model);
        BOOST_TEST(std::abs(r.lambda_max_A_primal - star_primal_lambda_max_A(m, s, sigma)) <= 1e-10);
        BOOST_TEST(std::abs(r.lambda_max_A_dual - star_dual_lambda_max_A(m, s, sigma)) <= 1e-10);
        BOOST_TEST(close_rel(r.rate_primal, star_primal_rate(m, s, sigma), 1e-9));
        BOOST_TEST(close_rel(r.rate_dual, star_dual_rate(s, sigma, m), 1e-9));
        BOOST_TEST(close_rel(star_dual_rate(s, sigma, m), prop5_effective_dual_rate(1.0, s, sigma, m), 1e-13));
        BOOST_TEST(
            close_rel(star_dual_rate_asymptotic(s, sigma), prop5_effective_dual_rate_asymptotic(1.0, s, sigma), 1e-13));
        BOOST_TEST(close_rel(star_primal_rate_asymptotic(s, sigma),
                             std::exp(s / std::sqrt(sigma * sigma + s * s) - 1.0), 1e-14));
        BOOST_TEST(r.lambda2_L == 1.0, boost::test_tools::tolerance(1e-10));
      }
    }
  }
  // Limits |V| -> infinity of the finite-size star rates.
  BOOST_TEST(close_rel(star_primal_rate(2'000'000'000, 1.0, 0.5), star_primal_rate_asymptotic(1.0, 0.5), 1e-8));
  BOOST_TEST(close_rel(star_dual_rate(1.0, 0.5, 1e12), star_dual_rate_asymptotic(1.0, 0.5), 1e-9));
  // The dual formulas need |E| >= 2: a single edge has A = 0.
  BOOST_CHECK_THROW(star_dual_lambda_max_A(1, 1.0, 0.5), std::invalid_argument);
  BOOST_TEST(lambda_max_A(Model(make_star(2), 1.0, 0.5), Domain::Dual) == 0.0, boost::test_tools::tolerance(1e-15));
}

// Table I and the other families: the closed-form lambda_2 against the dense oracle and the library.
BOOST_AUTO_TEST_CASE(table1_lambda2) {
  struct Case {
    Graph g;
    double closed_form;
  };
  const std::vector<Case> cases = {
      {make_complete(2), lambda2_complete(2)},
      {make_complete(7), lambda2_complete(7)},
      {make_complete(30), lambda2_complete(30)},
      {make_complete_bipartite(1, 1), lambda2_complete_bipartite(1, 1)},
      {make_complete_bipartite(6, 6), lambda2_complete_bipartite(6, 6)},
      {make_complete_bipartite(3, 8), lambda2_complete_bipartite(3, 8)},
      {make_complete_bipartite(1, 5), lambda2_complete_bipartite(1, 5)},
      {make_torus(3, 3), lambda2_torus(3, 3)},
      {make_torus(8, 8), lambda2_torus(8, 8)},
      {make_torus(9, 5), lambda2_torus(9, 5)},
      {make_torus(30, 30), lambda2_torus(30, 30)},
      {make_star(2), lambda2_star(2)},
      {make_star(3), lambda2_star(3)},
      {make_star(40), lambda2_star(40)},
      {make_path(2), lambda2_path(2)},
      {make_path(37), lambda2_path(37)},
      {make_cycle(3), lambda2_cycle(3)},
      {make_cycle(41), lambda2_cycle(41)},
      {make_grid(4, 9), lambda2_grid(4, 9)},
      {make_grid(1, 6), lambda2_grid(1, 6)},
      {make_hypercube(1), lambda2_hypercube(1)},
      {make_hypercube(6), lambda2_hypercube(6)},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.g.summary()) {
      BOOST_TEST(close_rel(c.closed_form, oracle_lambda2_per_component(c.g)[0], 1e-11));
      for (SpectralMethod m : kMethods) BOOST_TEST(close_rel(algebraic_connectivity(c.g, m), c.closed_form, 1e-10));
    }
  }
  // Table I's values by name.
  BOOST_TEST(lambda2_complete(10) == 10.0);
  BOOST_TEST(lambda2_complete_bipartite(7, 7) == 7.0);
  BOOST_TEST(lambda2_star(100) == 1.0);
  BOOST_TEST(close_rel(lambda2_torus(100, 100), 4.0 * std::pow(std::sin(kPi / 100), 2), 1e-15));
  BOOST_TEST(close_rel(lambda2_random_regular_asymptotic(3), 3.0 - 2.0 * std::sqrt(2.0), 1e-15));
}

// Friedman: lambda_2 of a random k-regular graph approaches k - 2 sqrt(k - 1). A fixed-seed graph; the band is
// the finite-size spread at 4000 nodes (Tracy-Widom scale n^-2/3 is about 0.004 here).
BOOST_AUTO_TEST_CASE(random_regular_lambda2_near_friedman_bound) {
  const Graph g = make_random_regular(4000, 6, 3);
  const double l2 = algebraic_connectivity(g);
  BOOST_TEST(std::abs(l2 - lambda2_random_regular_asymptotic(6)) < 0.1, l2);
}

BOOST_AUTO_TEST_CASE(closed_forms_reject_bad_input) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  BOOST_CHECK_THROW(prop1_primal_lambda_max_A(-1, 1.0, 1.0), std::invalid_argument);
  BOOST_CHECK_THROW(prop1_primal_rate(4, 0.0, 1.0, 10), std::invalid_argument);
  BOOST_CHECK_THROW(prop1_primal_rate(4, 1.0, nan, 10), std::invalid_argument);
  BOOST_CHECK_THROW(prop1_primal_rate(4, 1.0, 1.0, 0.5), std::invalid_argument);
  BOOST_CHECK_THROW(prop4_dual_rate(-1.0, 1.0, 10), std::invalid_argument);
  BOOST_CHECK_THROW(prop4_dual_rate(1.0, inf, 10), std::invalid_argument);
  BOOST_CHECK_THROW(prop4_dual_rate(1.0, 1.0, nan), std::invalid_argument);
  BOOST_CHECK_THROW(prop5_effective_dual_rate(-0.5, 1.0, 1.0, 10), std::invalid_argument);
  // lambda_2 = 0 (disconnected) reduces Prop. 5 to Prop. 4.
  BOOST_TEST(prop5_effective_dual_rate(0.0, 1.0, 0.3, 10) == prop4_dual_rate(1.0, 0.3, 10),
             boost::test_tools::tolerance(1e-15));
  BOOST_CHECK_THROW(prop5_effective_dual_rate(nan, 1.0, 1.0, 10), std::invalid_argument);
  BOOST_CHECK_THROW(star_primal_lambda_max_A(0, 1.0, 1.0), std::invalid_argument);
  BOOST_CHECK_THROW(star_dual_rate(1.0, 1.0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_torus(2, 5), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_complete(1), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_complete_bipartite(0, 3), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_random_regular_asymptotic(2), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_path(1), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_cycle(2), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_grid(1, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_hypercube(0), std::invalid_argument);
  BOOST_CHECK_THROW(lambda2_star(1), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rates)

BOOST_AUTO_TEST_CASE(random_sweep_rate_is_the_power_formula) {
  for (double n : {1.0, 2.0, 7.0, 100.0, 12345.0})
    for (double lambda : {0.0, 0.1, 0.5, 0.9, 0.999})
      BOOST_TEST(close_rel(random_sweep_rate(lambda, n), oracle_rate(lambda, n), 1e-12), n << " " << lambda);
  BOOST_TEST(random_sweep_rate(1.0, 50) == 1.0);
  BOOST_TEST(random_sweep_rate(0.0, 1) == 0.0);  // one coordinate, A = 0: exact after one update
  // Large n tends to exp(lambda - 1); the naive pow((n - 1 + lambda)/n, n) loses all digits at n = 1e17.
  BOOST_TEST(close_rel(random_sweep_rate(0.3, 1e12), std::exp(-0.7), 1e-11));
  BOOST_TEST(close_rel(random_sweep_rate(0.3, 1e17), std::exp(-0.7), 1e-15));
  BOOST_TEST(random_sweep_rate_asymptotic(0.25) == std::exp(-0.75));
}

BOOST_AUTO_TEST_CASE(random_sweep_rate_rejects_bad_input) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(random_sweep_rate(0.5, 0.5), std::invalid_argument);
  BOOST_CHECK_THROW(random_sweep_rate(0.5, nan), std::invalid_argument);
  BOOST_CHECK_THROW(random_sweep_rate(1.5, 10), std::invalid_argument);
  BOOST_CHECK_THROW(random_sweep_rate(-20.0, 10), std::invalid_argument);
  BOOST_CHECK_THROW(random_sweep_rate(nan, 10), std::invalid_argument);
  BOOST_CHECK_THROW(random_sweep_rate_asymptotic(1.01), std::invalid_argument);
}

// A tree has no cycle space: Prop. 5's spectrum still gives the dual's lambda_max(A) = s^2 (2 - lambda_2)/(sigma^2 + 2
// s^2), and the effective rate is reported as NaN (it would equal r_d).
BOOST_AUTO_TEST_CASE(tree_dual_spectrum_and_effective_rate) {
  const Graph g = make_path(50);
  const Model model(g, 1.3, 0.4);
  const Rates r = convergence_rates(model);
  BOOST_TEST(std::abs(r.lambda_max_A_dual - prop5_cut_space_lambda_max_A(lambda2_path(50), 1.3, 0.4)) <= 1e-10);
  BOOST_TEST(std::isnan(r.rate_dual_effective));
}

BOOST_AUTO_TEST_CASE(disconnected_graph_reports_per_component) {
  // Triangle, a path of 4, an isolated node: components {0,1,2}, {3,4,5,6}, {7}.
  const Graph g(8, {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 6}});
  BOOST_CHECK_THROW(algebraic_connectivity(g), std::invalid_argument);
  for (SpectralMethod m : kMethods) {
    const std::vector<double> l2 = algebraic_connectivity_per_component(g, m);
    BOOST_TEST_REQUIRE(l2.size() == 3u);
    BOOST_TEST(close_rel(l2[0], 3.0, 1e-12));
    BOOST_TEST(close_rel(l2[1], lambda2_path(4), 1e-12));
    BOOST_TEST(std::isnan(l2[2]));
  }
  const Rates r = convergence_rates(Model(g, 1.0, 0.5));
  BOOST_TEST(r.components == 3);
  BOOST_TEST(r.lambda2_L == 0.0);
  BOOST_TEST(close_rel(r.lambda_min_nonzero_L, lambda2_path(4), 1e-12));
  BOOST_TEST(close_rel(r.rate_dual_effective, prop5_effective_dual_rate(lambda2_path(4), 1.0, 0.5, 6), 1e-10));
}

BOOST_AUTO_TEST_CASE(tiny_graphs) {
  // One node: no lambda_2, primal A = 0, no dual coordinates.
  const Graph one(1, {});
  BOOST_CHECK_THROW(algebraic_connectivity(one), std::invalid_argument);
  BOOST_TEST(std::isnan(algebraic_connectivity_per_component(one)[0]));
  const Model m1(one, 1.0, 1.0);
  BOOST_TEST(lambda_max_A(m1, Domain::Primal) == 0.0);
  BOOST_CHECK_THROW(lambda_max_A(m1, Domain::Dual), std::invalid_argument);
  const Rates r1 = convergence_rates(m1);
  BOOST_TEST(std::isnan(r1.lambda2_L));
  BOOST_TEST(r1.rate_primal == 0.0);
  BOOST_TEST(std::isnan(r1.rate_dual));
  BOOST_TEST(std::isnan(r1.lambda_max_A_dual));
  // Two and three nodes, every method (dimensions 1 to 3 exercise the dense fallback and the smallest Krylov spaces).
  const std::vector<std::pair<Graph, double>> graphs = {
      {make_path(2), 2.0}, {make_path(3), 1.0}, {make_cycle(3), 3.0}, {Graph(3, {{0, 1}}), 0.0}};
  for (const auto& [g, l2] : graphs) {
    for (SpectralMethod m : kMethods) {
      BOOST_TEST_CONTEXT(g.summary() << ", " << to_string(m)) {
        if (g.num_components() == 1) BOOST_TEST(close_rel(algebraic_connectivity(g, m), l2, 1e-12));
        const Parameters p = heterogeneous(g, 5);
        const Model model = make_model(g, p);
        for (Domain d : {Domain::Primal, Domain::Dual})
          BOOST_TEST(std::abs(lambda_max_A(model, d, with(m)) -
                              oracle_lambda_max_A(oracle_precision(g, p.s, p.sigma, d))) <= 1e-12);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(graph_without_edges) {
  const Model m(Graph(700, {}), 1.0, 1.0);  // above the dense threshold: shift-invert on a diagonal
  BOOST_TEST(std::abs(lambda_max_A(m, Domain::Primal)) <= 1e-14);
  const Rates r = convergence_rates(m);
  BOOST_TEST(r.components == 700);
  BOOST_TEST(std::isnan(r.lambda_min_nonzero_L));
  BOOST_TEST(std::isnan(r.rate_dual));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(methods_and_errors)

BOOST_AUTO_TEST_CASE(auto_chooses_by_size_and_fill) {
  BOOST_TEST((choose_spectral_method(make_torus(10, 10), 100) == SpectralMethod::Dense));
  BOOST_TEST((choose_spectral_method(make_torus(10, 10), 2) == SpectralMethod::Dense));
  BOOST_TEST((choose_spectral_method(make_torus(60, 60), 3600) == SpectralMethod::ShiftInvert));
  BOOST_TEST((choose_spectral_method(make_path(5000), 5000) == SpectralMethod::ShiftInvert));
  // A large expander: the breadth-first test sends it to Lanczos without a symbolic analysis.
  BOOST_TEST((choose_spectral_method(make_random_regular(30000, 8, 1), 30000) == SpectralMethod::Lanczos));
  // A 10000-node expander as well: its factor would fit, but shift-invert took 6.3 s where Lanczos takes 0.34 s
  // (kregular:10000,4, measured).
  BOOST_TEST((choose_spectral_method(make_random_regular(10000, 4, 1), 10000) == SpectralMethod::Lanczos));
  // Auto then gives the same number as the explicit methods (a 3600-node torus, Table I).
  BOOST_TEST(close_rel(algebraic_connectivity(make_torus(60, 60)), lambda2_torus(60, 60), 1e-10));
}

BOOST_AUTO_TEST_CASE(method_names_round_trip) {
  for (SpectralMethod m : kMethods) BOOST_TEST((parse_spectral_method(to_string(m)) == m));
  BOOST_CHECK_THROW(parse_spectral_method("arnoldi"), std::invalid_argument);
  BOOST_TEST(std::string(to_string(EigensolverError::Status::NotConverging)) == "NotConverging");
}

BOOST_AUTO_TEST_CASE(rejects_bad_options) {
  const Graph g = make_cycle(10);
  SpectralOptions o;
  o.tolerance = 0.0;
  BOOST_CHECK_THROW(algebraic_connectivity(g, o), std::invalid_argument);
  o.tolerance = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(lambda_max_A(Model(g, 1.0, 1.0), Domain::Primal, o), std::invalid_argument);
  o = SpectralOptions{};
  o.max_restarts = 0;
  BOOST_CHECK_THROW(convergence_rates(Model(g, 1.0, 1.0), o), std::invalid_argument);
  o = SpectralOptions{};
  o.krylov_dimension = 1;
  BOOST_CHECK_THROW(algebraic_connectivity_per_component(g, o), std::invalid_argument);
  // A forced dense run on a problem far too large for dense matrices is refused before allocating.
  BOOST_CHECK_THROW(algebraic_connectivity(make_path(9000), SpectralMethod::Dense), std::invalid_argument);
}

// Non-convergence is an exception carrying Spectra's status, never a number.
// convergence_rates lets lambda_2 share the dual's factorization (d I + w L for a homogeneous model) when the
// shift c = d/w is at most 10 lambda_2, and falls back to the grounded Laplacian otherwise: both give the dense
// values, over shifts from far below to far above lambda_2. The three problems run in lock-step on the one factor
// (the torus and the cycle are regular: the primal joins them; the grid's primal runs after them).
BOOST_AUTO_TEST_CASE(lambda2_on_the_shared_shifted_laplacian_matches_dense) {
  for (const Graph& g : {make_torus(12, 13), make_grid(10, 12), make_cycle(40)}) {
    const double l2 = algebraic_connectivity(g, SpectralMethod::Dense);
    for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, {0.05, 1.0}, {0.01, 1.0}, {10.0, 0.1}}) {
      BOOST_TEST_CONTEXT(g.num_nodes() << " nodes, s = " << s << ", sigma = " << sigma) {
        const Model m(g, s, sigma);
        const Rates r = convergence_rates(m, with(SpectralMethod::ShiftInvert));
        BOOST_TEST(close_rel(r.lambda2_L, l2, 1e-9));
        BOOST_TEST(std::abs(r.lambda_max_A_primal - lambda_max_A(m, Domain::Primal, with(SpectralMethod::Dense))) <=
                   1e-10);
        BOOST_TEST(std::abs(r.lambda_max_A_dual - lambda_max_A(m, Domain::Dual, with(SpectralMethod::Dense))) <= 1e-10);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(non_convergence_throws_with_status) {
  SpectralOptions o;
  o.method = SpectralMethod::Lanczos;
  o.krylov_dimension = 3;
  o.max_restarts = 1;
  const Graph g = make_torus(20, 20);  // lambda_2 = 0.098 in a spectrum up to 8: far from 1 restart of 3 vectors
  try {
    algebraic_connectivity(g, o);
    BOOST_FAIL("expected EigensolverError");
  } catch (const EigensolverError& e) {
    BOOST_TEST((e.status() == EigensolverError::Status::NotConverging));
    BOOST_TEST((e.method() == SpectralMethod::Lanczos));
    BOOST_TEST(e.restarts() >= 1);
    BOOST_TEST(e.operations() >= 3);
    BOOST_TEST(std::string(e.what()).find("NotConverging") != std::string::npos);
  }
  BOOST_CHECK_THROW(lambda_max_A(Model(g, 1.0, 0.1), Domain::Primal, o), EigensolverError);
  BOOST_CHECK_THROW(lambda_max_A(Model(g, 1.0, 0.1), Domain::Dual, o), EigensolverError);
  BOOST_CHECK_THROW(convergence_rates(Model(g, 1.0, 0.1), o), EigensolverError);
}

// The lock-step shift-invert runs of convergence_rates (lambda_2, primal and dual on one factor, one thread each):
// a run that fails ends the others and reaches the caller as its EigensolverError, with no thread left waiting.
// With 3 Krylov vectors and 1 restart the near-degenerate top of a large torus' shifted spectra cannot converge.
BOOST_AUTO_TEST_CASE(a_failing_lock_step_run_throws_and_ends_the_others) {
  SpectralOptions o;
  o.method = SpectralMethod::ShiftInvert;
  o.krylov_dimension = 3;
  o.max_restarts = 1;
  o.tolerance = 1e-14;
  for (const Graph& g : {make_torus(40, 40), make_grid(30, 31)}) {  // primal in the batch, and after it
    try {
      convergence_rates(Model(g, 1.0, 0.1), o);
      BOOST_FAIL("expected EigensolverError");
    } catch (const EigensolverError& e) {
      BOOST_TEST((e.method() == SpectralMethod::ShiftInvert));
      BOOST_TEST((e.status() == EigensolverError::Status::NotConverging));
    }
  }
}

// lambda_max(A) and the rates depend on s and sigma only through their ratios: a heterogeneous model and the same
// model with every standard deviation scaled by 1e-100 (whose variances' products underflow) have the same spectra.
BOOST_AUTO_TEST_CASE(spectra_are_scale_free) {
  const Graph g = make_star(200);
  std::vector<double> s(200), sigma(199);
  for (std::size_t v = 0; v < s.size(); ++v) s[v] = 0.5 + 0.01 * static_cast<double>(v % 7);
  for (std::size_t e = 0; e < sigma.size(); ++e) sigma[e] = 0.2 + 0.03 * static_cast<double>(e % 5);
  auto scaled = [](std::vector<double> v, double c) {
    for (double& x : v) x *= c;
    return v;
  };
  const Model plain(g, s, sigma);
  for (double c : {1e-100, 1e-150, 1e100}) {
    BOOST_TEST_CONTEXT("scale " << c) {
      const Model tiny(g, scaled(s, c), scaled(sigma, c));
      for (Domain d : {Domain::Primal, Domain::Dual})
        BOOST_CHECK_CLOSE(lambda_max_A(tiny, d), lambda_max_A(plain, d), 1e-8);
      const Rates a = convergence_rates(tiny), b = convergence_rates(plain);
      BOOST_CHECK_CLOSE(a.rate_primal, b.rate_primal, 1e-8);
      BOOST_CHECK_CLOSE(a.rate_dual, b.rate_dual, 1e-8);
    }
  }
  const Model star(make_star(1000), 1e-150, 1e-150);  // homogeneous: Lanczos failed on it unscaled
  BOOST_CHECK_CLOSE(lambda_max_A(star, Domain::Primal), lambda_max_A(Model(make_star(1000), 1.0, 1.0), Domain::Primal),
                    1e-8);
}

BOOST_AUTO_TEST_SUITE_END()
