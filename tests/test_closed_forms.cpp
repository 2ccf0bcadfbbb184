#define BOOST_TEST_MODULE closed_forms
// The chooser closed_forms(spec, model): every closed form it claims is the paper's formula for that model
// (the formulas themselves are checked against dense oracles in test_spectral.cpp and test_exact.cpp) and agrees
// with the computed spectra; it claims nothing for models the paper's propositions do not cover.
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

bool close_rel(double a, double b, double tol) { return std::abs(a - b) <= tol * std::abs(b); }

struct Built {
  GraphSpec spec;
  Model model;
};

Built build(const std::string& text, double s = 1.0, double sigma = 0.25) {
  GraphSpec spec = parse_graph_spec(text);
  Model model(load_graph(spec, 3).graph, s, sigma);
  return {std::move(spec), std::move(model)};
}

// Every claimed rate and lambda_max(A) agrees with the computed spectra of the model (the closed forms are exact for
// the models they are claimed for; Table I's random k-regular lambda_2 is a limit and is left out here).
void check_against_spectra(const ClosedForms& cf, const Model& m) {
  const Rates r = convergence_rates(m);
  const auto agree = [](const std::optional<ClosedForm>& c, double computed, const char* what) {
    if (c) BOOST_TEST(close_rel(c->value, computed, 1e-8), what << ": " << c->value << " vs " << computed);
  };
  agree(cf.lambda_max_A_primal, r.lambda_max_A_primal, "lambda_max_A_primal");
  agree(cf.lambda_max_A_dual, r.lambda_max_A_dual, "lambda_max_A_dual");
  agree(cf.rate_primal, r.rate_primal, "rate_primal");
  agree(cf.rate_dual, r.rate_dual, "rate_dual");
  agree(cf.rate_primal_asymptotic, r.rate_primal_asymptotic, "rate_primal_asymptotic");
  agree(cf.rate_dual_asymptotic, r.rate_dual_asymptotic, "rate_dual_asymptotic");
  if (cf.lambda2_L && cf.lambda2_L->source.find("limit") == std::string::npos) {
    agree(cf.lambda2_L, r.lambda2_L, "lambda2_L");
    agree(cf.rate_dual_effective, r.rate_dual_effective, "rate_dual_effective");
    agree(cf.rate_dual_effective_asymptotic, r.rate_dual_effective_asymptotic, "rate_dual_effective_asymptotic");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chooser)

BOOST_AUTO_TEST_CASE(torus_gets_table1_props_1_4_5_and_the_marginal_variance) {
  const auto [spec, m] = build("torus:6x9", 1.3, 0.4);
  const ClosedForms cf = closed_forms(spec, m);
  BOOST_TEST_REQUIRE(cf.lambda2_L.has_value());
  BOOST_TEST(cf.lambda2_L->value == lambda2_torus(6, 9));
  BOOST_TEST(cf.lambda2_L->source == "Table I: n x n torus, 4 sin^2(pi/n) (n = the longer side)");
  BOOST_TEST_REQUIRE(cf.rate_primal.has_value());
  BOOST_TEST(cf.rate_primal->value == prop1_primal_rate(4, 1.3, 0.4, 54));
  BOOST_TEST(cf.rate_primal->source == "Prop. 1, k-regular, k = 4");
  BOOST_TEST(cf.lambda_max_A_primal->value == prop1_primal_lambda_max_A(4, 1.3, 0.4));
  BOOST_TEST(cf.rate_primal_asymptotic->value == prop1_primal_rate_asymptotic(4, 1.3, 0.4));
  BOOST_TEST(cf.lambda_max_A_dual->value == prop4_dual_lambda_max_A(1.3, 0.4));
  BOOST_TEST(cf.rate_dual->value == prop4_dual_rate(1.3, 0.4, 108));
  BOOST_TEST(cf.rate_dual_asymptotic->value == prop4_dual_rate_asymptotic(1.3, 0.4));
  BOOST_TEST(cf.rate_dual_effective->value == prop5_effective_dual_rate(lambda2_torus(6, 9), 1.3, 0.4, 108));
  BOOST_TEST(cf.rate_dual_effective->source == "Prop. 5 with Table I: n x n torus");
  BOOST_TEST(cf.rate_dual_effective_asymptotic->value ==
             prop5_effective_dual_rate_asymptotic(lambda2_torus(6, 9), 1.3, 0.4));
  BOOST_TEST_REQUIRE(cf.marginal_variance.has_value());
  BOOST_TEST(cf.marginal_variance->value == torus_marginal_variance(6, 9, 1.3, 0.4));
  const Eigen::VectorXd var = marginal_variances(m, Domain::Primal);
  BOOST_TEST((var.array() - cf.marginal_variance->value).abs().maxCoeff() < 1e-12);
  check_against_spectra(cf, m);
}

BOOST_AUTO_TEST_CASE(star_gets_appendix_a) {
  const auto [spec, m] = build("star:20", 1.0, 0.1);
  const ClosedForms cf = closed_forms(spec, m);
  BOOST_TEST(cf.lambda2_L->value == lambda2_star(20));
  BOOST_TEST(cf.lambda_max_A_primal->value == star_primal_lambda_max_A(19, 1.0, 0.1));
  BOOST_TEST(cf.rate_primal->value == star_primal_rate(19, 1.0, 0.1));
  BOOST_TEST(cf.rate_primal->source == "Appendix A, star");
  BOOST_TEST(cf.lambda_max_A_dual->value == star_dual_lambda_max_A(19, 1.0, 0.1));
  BOOST_TEST(cf.rate_dual->value == star_dual_rate(1.0, 0.1, 19));
  BOOST_TEST(cf.rate_dual_asymptotic->value == star_dual_rate_asymptotic(1.0, 0.1));
  BOOST_TEST(!cf.rate_dual_effective.has_value());  // no cycle space
  BOOST_TEST(!cf.marginal_variance.has_value());
  check_against_spectra(cf, m);
}

BOOST_AUTO_TEST_CASE(every_table1_family_agrees_with_the_spectra) {
  for (const char* text : {"complete:12", "bipartite:4,4", "bipartite:3,5", "hypercube:4", "cycle:9", "path:7",
                           "grid:4x6", "star:2", "kregular:40,4"}) {
    BOOST_TEST_CONTEXT(text) {
      const auto [spec, m] = build(text, 0.8, 0.3);
      const ClosedForms cf = closed_forms(spec, m);
      BOOST_TEST(cf.lambda2_L.has_value());
      check_against_spectra(cf, m);
    }
  }
  // Prop. 1 on the regular ones, Prop. 4 on those with cycles, the tree spectrum on the path.
  BOOST_TEST(closed_forms(build("complete:12").spec, build("complete:12").model).rate_primal->source ==
             "Prop. 1, k-regular, k = 11");
  const auto [pspec, path] = build("path:7", 0.8, 0.3);
  const ClosedForms p = closed_forms(pspec, path);
  BOOST_TEST(p.rate_dual->source == "Prop. 5 spectrum, tree");
  BOOST_TEST(p.rate_dual->value == random_sweep_rate(prop5_cut_space_lambda_max_A(lambda2_path(7), 0.8, 0.3), 6));
  BOOST_TEST(!p.rate_primal.has_value());  // a path is neither regular nor a star
  const auto [kspec, kreg] = build("kregular:40,4");
  BOOST_TEST(closed_forms(kspec, kreg).rate_dual_effective->source ==
             "Prop. 5 with Table I: random k-regular "
             "(asymptotic lambda_2)");
}

BOOST_AUTO_TEST_CASE(a_given_lambda2_drives_prop5) {
  const auto [spec, m] = build("kregular:40,4", 1.0, 0.25);
  const Rates r = convergence_rates(m);
  const ClosedForms cf = closed_forms(spec, m, r.lambda2_L);
  BOOST_TEST(cf.rate_dual_effective->value == prop5_effective_dual_rate(r.lambda2_L, 1.0, 0.25, 80));
  BOOST_TEST(close_rel(cf.rate_dual_effective->value, r.rate_dual_effective, 1e-12));
  BOOST_TEST(cf.lambda2_L->value == lambda2_random_regular_asymptotic(4));  // still the family's lambda_2
  // Without a spec: the same structural forms, nothing from a family.
  const ClosedForms bare = closed_forms(m, r.lambda2_L);
  BOOST_TEST(!bare.lambda2_L.has_value());
  BOOST_TEST(bare.rate_primal->value == cf.rate_primal->value);
  BOOST_TEST(bare.rate_dual_effective->value == cf.rate_dual_effective->value);
  BOOST_TEST(!closed_forms(m).rate_dual_effective.has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(claims_nothing_outside_the_propositions)

BOOST_AUTO_TEST_CASE(heterogeneous_model_gets_only_the_graph_spectrum) {
  const GraphSpec spec = parse_graph_spec("torus:6");
  const Graph g = load_graph(spec).graph;
  std::vector<double> sv(36, 1.0);
  sv[5] = 1.5;  // one node differs
  const Model m(g, sv, std::vector<double>(72, 0.3));
  BOOST_TEST_REQUIRE(!m.is_homogeneous());
  const ClosedForms cf = closed_forms(spec, m);
  BOOST_TEST(cf.lambda2_L.has_value());  // a property of the graph alone
  BOOST_TEST(!cf.lambda_max_A_primal.has_value());
  BOOST_TEST(!cf.lambda_max_A_dual.has_value());
  BOOST_TEST(!cf.rate_primal.has_value());
  BOOST_TEST(!cf.rate_dual.has_value());
  BOOST_TEST(!cf.rate_dual_effective.has_value());
  BOOST_TEST(!cf.marginal_variance.has_value());
}

BOOST_AUTO_TEST_CASE(grid_is_neither_regular_nor_a_torus) {
  const auto [spec, m] = build("grid:4x6");
  const ClosedForms cf = closed_forms(spec, m);
  BOOST_TEST(!cf.rate_primal.has_value());
  BOOST_TEST(!cf.lambda_max_A_primal.has_value());
  BOOST_TEST(!cf.marginal_variance.has_value());
  BOOST_TEST(cf.rate_dual->source == "Prop. 4");  // it has cycles
  BOOST_TEST(cf.lambda2_L->source == "grid: 4 sin^2(pi/(2n)) (n = the longer side)");
}

BOOST_AUTO_TEST_CASE(a_spec_that_does_not_describe_the_graph_gives_no_family_forms) {
  const GraphSpec torus = parse_graph_spec("torus:4x6");
  const Model grid(make_grid(4, 6), 1.0, 0.25);  // 24 nodes like the torus, but 38 edges, not 48
  const ClosedForms cf = closed_forms(torus, grid);
  BOOST_TEST(!cf.lambda2_L.has_value());
  BOOST_TEST(!cf.marginal_variance.has_value());
  BOOST_TEST(!cf.rate_dual_effective.has_value());
  BOOST_TEST(cf.rate_dual.has_value());  // Prop. 4 is about the graph itself
  GraphSpec short_spec;                  // a hand-made spec with too few sizes describes nothing
  short_spec.family = GraphFamily::Bipartite;
  short_spec.sizes = {4};
  BOOST_TEST(!closed_forms(short_spec, Model(make_complete_bipartite(4, 4), 1.0, 0.25)).lambda2_L.has_value());
}

BOOST_AUTO_TEST_CASE(families_without_a_closed_form) {
  for (const char* text : {"ws:30,4,0.3,2", "er:30,0.3,4", "ba:30,2,3", "kregular:30,2,5"}) {
    BOOST_TEST_CONTEXT(text) {
      const auto [spec, m] = build(text);
      const ClosedForms cf = closed_forms(spec, m);
      BOOST_TEST(!cf.lambda2_L.has_value());  // kregular with k = 2: Table I needs k >= 3
      BOOST_TEST(!cf.marginal_variance.has_value());
      check_against_spectra(cf, m);
    }
  }
}

BOOST_AUTO_TEST_CASE(graph_without_edges) {
  const Model m(Graph(5, {}), 1.0, 1.0);
  const ClosedForms cf = closed_forms(m);
  BOOST_TEST(!cf.rate_primal.has_value());
  BOOST_TEST(!cf.rate_dual.has_value());
}

// The closed forms depend on s and sigma only through their ratio: at s = sigma = 1e-100 (where the star's
// (sigma^2 + s^2)(sigma^2 + |E| s^2) underflows) and 1e100 they equal their values at s = sigma = 1, and at
// s = sigma = 0.75 (no scaling needed) they are bitwise those of 0.75 * 2^-300 (scaling by a power of two is exact).
BOOST_AUTO_TEST_CASE(closed_forms_are_scale_free) {
  for (double scale : {1e-100, 1e-150, 1e100}) {
    BOOST_TEST_CONTEXT("scale " << scale) {
      BOOST_CHECK_CLOSE(star_primal_lambda_max_A(49, scale, scale), star_primal_lambda_max_A(49, 1.0, 1.0), 1e-10);
      BOOST_CHECK_CLOSE(star_primal_rate(49, scale, 0.3 * scale), star_primal_rate(49, 1.0, 0.3), 1e-10);
      BOOST_CHECK_CLOSE(star_dual_rate(scale, 2 * scale, 49.0), star_dual_rate(1.0, 2.0, 49.0), 1e-10);
      BOOST_CHECK_CLOSE(prop1_primal_rate(4, scale, 0.25 * scale, 100.0), prop1_primal_rate(4, 1.0, 0.25, 100.0),
                        1e-10);
      BOOST_CHECK_CLOSE(prop5_effective_dual_rate(0.4, scale, 0.1 * scale, 200.0),
                        prop5_effective_dual_rate(0.4, 1.0, 0.1, 200.0), 1e-10);
    }
  }
  const double tiny = std::ldexp(0.75, -300);
  BOOST_TEST(star_primal_lambda_max_A(49, tiny, tiny) == star_primal_lambda_max_A(49, 0.75, 0.75));
  BOOST_TEST(prop4_dual_rate(tiny, 0.5 * tiny, 200.0) == prop4_dual_rate(0.75, 0.375, 200.0));
}

BOOST_AUTO_TEST_SUITE_END()
