// Scale runs of the spectral module (ctest label "long": `ctest --test-dir build -L long`). A few minutes on
// two cores: the 10^6-node torus (shift-invert), the 10^5-node random 32-regular graph (Lanczos), and
// agreement of the methods with each other and with the paper's closed forms on mid-sized graphs.
#define BOOST_TEST_MODULE spectral_long
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace dualgibbs;

namespace {

bool close_rel(double a, double b, double tol) { return std::abs(a - b) <= tol * std::abs(b); }

SpectralOptions with(SpectralMethod m) {
  SpectralOptions o;
  o.method = m;
  return o;
}

// Heterogeneous parameters from a fixed-seed splitmix64 stream.
Model heterogeneous(const Graph& g, std::uint64_t seed) {
  std::uint64_t state = seed;
  const auto uniform = [&](double lo, double hi) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1.0p-53;
  };
  std::vector<double> s(static_cast<std::size_t>(g.num_nodes())), sigma(static_cast<std::size_t>(g.num_edges()));
  for (double& x : s) x = uniform(0.3, 2.0);
  for (double& x : sigma) x = uniform(0.05, 1.5);
  return Model(g, s, sigma);
}

}  // namespace

BOOST_AUTO_TEST_CASE(torus_1000_lambda2_matches_table1) {
  const Graph g = make_torus(1000, 1000);
  BOOST_TEST((choose_spectral_method(g, g.num_nodes()) == SpectralMethod::ShiftInvert));
  BOOST_TEST(close_rel(algebraic_connectivity(g), lambda2_torus(1000, 1000), 1e-9));
}

BOOST_AUTO_TEST_CASE(random_regular_100000_32) {
  const Graph g = load_graph("kregular:100000,32").graph;
  BOOST_TEST((choose_spectral_method(g, g.num_nodes()) == SpectralMethod::Lanczos));
  const double l2 = algebraic_connectivity(g);
  SpectralOptions other = with(SpectralMethod::Lanczos);
  other.krylov_dimension = 64;
  other.tolerance = 1e-12;
  BOOST_TEST(close_rel(l2, algebraic_connectivity(g, other), 1e-9));
  BOOST_TEST(std::abs(l2 - lambda2_random_regular_asymptotic(32)) < 0.05);  // Friedman, finite-size spread
  // The primal and dual of the homogeneous model: Prop. 1 and Prop. 4, matrix-free.
  const Rates r = convergence_rates(Model(g, 1.0, 0.25));
  BOOST_TEST(std::abs(r.lambda_max_A_primal - prop1_primal_lambda_max_A(32, 1.0, 0.25)) <= 1e-10);
  BOOST_TEST(std::abs(r.lambda_max_A_dual - prop4_dual_lambda_max_A(1.0, 0.25)) <= 1e-10);
  BOOST_TEST(close_rel(r.rate_dual_effective, prop5_effective_dual_rate(l2, 1.0, 0.25, g.num_edges()), 1e-12));
}

// Homogeneous 300 x 300 torus: all three problems against Prop. 1, Prop. 4 and Prop. 5 with Table I.
BOOST_AUTO_TEST_CASE(torus_300_rates_match_closed_forms) {
  const Graph g = make_torus(300, 300);
  for (const auto& [s, sigma] : {std::pair{1.0, 0.25}, std::pair{1.0, 0.01}, std::pair{0.5, 2.0}}) {
    BOOST_TEST_CONTEXT("s " << s << ", sigma " << sigma) {
      const Rates r = convergence_rates(Model(g, s, sigma));
      BOOST_TEST((r.method_lambda2 == SpectralMethod::ShiftInvert && r.method_dual == SpectralMethod::ShiftInvert));
      BOOST_TEST(close_rel(r.lambda2_L, lambda2_torus(300, 300), 1e-9));
      BOOST_TEST(std::abs(r.lambda_max_A_primal - prop1_primal_lambda_max_A(4, s, sigma)) <= 1e-10);
      BOOST_TEST(std::abs(r.lambda_max_A_dual - prop4_dual_lambda_max_A(s, sigma)) <= 1e-10);
      BOOST_TEST(close_rel(r.rate_primal, prop1_primal_rate(4, s, sigma, g.num_nodes()), 1e-9));
      BOOST_TEST(close_rel(r.rate_dual, prop4_dual_rate(s, sigma, g.num_edges()), 1e-9));
      BOOST_TEST(close_rel(r.rate_dual_effective,
                           prop5_effective_dual_rate(lambda2_torus(300, 300), s, sigma, g.num_edges()), 1e-9));
    }
  }
}

// Heterogeneous models on mid-sized graphs: shift-invert and Lanczos agree with each other, and with the
// dense solver where it is affordable.
BOOST_AUTO_TEST_CASE(heterogeneous_methods_agree) {
  {
    const Graph g = make_grid(40, 50);  // 2000 nodes: the dense primal is affordable
    const Model m = heterogeneous(g, 3);
    const double dense = lambda_max_A(m, Domain::Primal, with(SpectralMethod::Dense));
    BOOST_TEST(std::abs(lambda_max_A(m, Domain::Primal, with(SpectralMethod::ShiftInvert)) - dense) <= 1e-10);
    BOOST_TEST(std::abs(lambda_max_A(m, Domain::Primal, with(SpectralMethod::Lanczos)) - dense) <= 1e-10);
    BOOST_TEST(std::abs(lambda_max_A(m, Domain::Dual, with(SpectralMethod::ShiftInvert)) -
                        lambda_max_A(m, Domain::Dual, with(SpectralMethod::Lanczos))) <= 1e-10);
  }
  for (const char* spec : {"ws:20000,6,0.05", "er:5000,0.002", "ba:5000,3", "kregular:20000,4"}) {
    BOOST_TEST_CONTEXT(spec) {
      const Graph g = load_graph(spec).graph;
      const Model m = heterogeneous(g, 8);
      for (Domain d : {Domain::Primal, Domain::Dual})
        BOOST_TEST(std::abs(lambda_max_A(m, d, with(SpectralMethod::ShiftInvert)) -
                            lambda_max_A(m, d, with(SpectralMethod::Lanczos))) <= 1e-10);
      const auto si = algebraic_connectivity_per_component(g, SpectralMethod::ShiftInvert);
      const auto la = algebraic_connectivity_per_component(g, SpectralMethod::Lanczos);
      BOOST_TEST_REQUIRE(si.size() == la.size());
      for (std::size_t c = 0; c < si.size(); ++c)
        if (!std::isnan(si[c])) BOOST_TEST(close_rel(si[c], la[c], 1e-9));
    }
  }
}
