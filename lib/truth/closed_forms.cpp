// The paper's closed forms and the chooser of those that apply (include/dualgibbs/truth/closed_forms.hpp).
#include <dualgibbs/truth/closed_forms.hpp>

#include <dualgibbs/core/number_text.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

void check_sd(double x, const char* name) {
  if (!std::isfinite(x) || !(x > 0.0) || !std::isfinite(x * x) || !(x * x > 0.0))
    throw std::invalid_argument(std::string("closed form: ") + name + " = " + number_text(x) +
                                " must be a finite positive standard deviation");
}
// Checks s and sigma and scales both by the power of two that brings the larger into [0.5, 1). The closed forms of
// the rates and of lambda_max(A) depend on s and sigma only through their ratio (every term of a numerator or
// denominator has the same degree), and scaling by a power of two is exact: results are bitwise those of the unscaled
// formulas wherever those neither underflow nor overflow, and right where they did (the star's
// (sigma^2 + s^2)(sigma^2 + |E| s^2) underflows below s = sigma = 1e-77).
void check_and_scale(double& s, double& sigma) {
  check_sd(s, "s");
  check_sd(sigma, "sigma");
  int e = 0;
  std::frexp(std::max(s, sigma), &e);
  s = std::ldexp(s, -e);
  sigma = std::ldexp(sigma, -e);
}
void check_count(double x, const char* name) {
  if (!std::isfinite(x) || !(x >= 1.0))
    throw std::invalid_argument(std::string("closed form: ") + name + " = " + number_text(x) + " must be at least 1");
}
void check_index(Index x, Index lo, const char* what) {
  if (x < lo)
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(x) + " must be at least " +
                                std::to_string(lo));
}

// (1 - c/n)^n computed stably.
double power_rate(double c, double n) { return std::exp(n * std::log1p(-c / n)); }

double sin2(double x) {
  const double s = std::sin(x);
  return s * s;
}

// ---- the chooser ------------------------------------------------------------------------------------------

bool is_star(const Graph& g) {
  return g.num_nodes() >= 2 && g.num_components() == 1 && !g.has_cycles() && g.max_degree() == g.num_nodes() - 1;
}

// True if the graph has the node and edge counts of the spec's family, so that the family's closed forms are
// about this graph. Families without such forms (ws, er, ba, file) and hand-made specs with too few sizes
// describe nothing here.
bool spec_describes(const GraphSpec& spec, const Graph& g) {
  const std::vector<Index>& a = spec.sizes;
  double nodes = -1, edges = -1;
  const bool two = spec.family == GraphFamily::Torus || spec.family == GraphFamily::Grid ||
                   spec.family == GraphFamily::Bipartite || spec.family == GraphFamily::KRegular;
  if (a.size() < (two ? 2u : 1u)) return false;
  const auto at = [&](std::size_t i) { return static_cast<double>(a[i]); };
  switch (spec.family) {
    case GraphFamily::Torus:
      nodes = at(0) * at(1);
      edges = 2 * nodes;
      break;
    case GraphFamily::Grid:
      nodes = at(0) * at(1);
      edges = at(0) * (at(1) - 1) + at(1) * (at(0) - 1);
      break;
    case GraphFamily::Path:
      nodes = at(0), edges = at(0) - 1;
      break;
    case GraphFamily::Cycle:
      nodes = at(0), edges = at(0);
      break;
    case GraphFamily::Complete:
      nodes = at(0), edges = at(0) * (at(0) - 1) / 2;
      break;
    case GraphFamily::Star:
      nodes = at(0), edges = at(0) - 1;
      break;
    case GraphFamily::Bipartite:
      nodes = at(0) + at(1), edges = at(0) * at(1);
      break;
    case GraphFamily::KRegular:
      nodes = at(0), edges = at(0) * at(1) / 2;
      break;
    case GraphFamily::Hypercube:
      nodes = std::ldexp(1.0, static_cast<int>(a[0]));
      edges = at(0) * nodes / 2;
      break;
    default:
      return false;
  }
  return nodes == g.num_nodes() && edges == g.num_edges();
}

// lambda_2(L) of the spec's family (Table I and the standard spectra), with the text `dualgibbs info` prints.
std::optional<ClosedForm> family_lambda2(const GraphSpec& spec) {
  const std::vector<Index>& a = spec.sizes;
  switch (spec.family) {
    case GraphFamily::Torus:
      return ClosedForm{lambda2_torus(a.at(0), a.at(1)), "Table I: n x n torus, 4 sin^2(pi/n) (n = the longer side)"};
    case GraphFamily::Complete:
      return ClosedForm{lambda2_complete(a.at(0)), "Table I: complete graph, |V|"};
    case GraphFamily::Bipartite:
      return ClosedForm{lambda2_complete_bipartite(a.at(0), a.at(1)), "Table I: K_{n,n}, n (K_{n1,n2}: min(n1, n2))"};
    case GraphFamily::Star:
      return ClosedForm{lambda2_star(a.at(0)), "Table I: star, 1"};
    case GraphFamily::KRegular:
      return ClosedForm{lambda2_random_regular_asymptotic(a.at(1)),
                        "Table I: random k-regular, k - 2 sqrt(k - 1) (limit |V| -> infinity)"};
    case GraphFamily::Path:
      return ClosedForm{lambda2_path(a.at(0)), "path: 4 sin^2(pi/(2n))"};
    case GraphFamily::Cycle:
      return ClosedForm{lambda2_cycle(a.at(0)), "cycle: 4 sin^2(pi/n)"};
    case GraphFamily::Grid:
      return ClosedForm{lambda2_grid(a.at(0), a.at(1)), "grid: 4 sin^2(pi/(2n)) (n = the longer side)"};
    case GraphFamily::Hypercube:
      return ClosedForm{lambda2_hypercube(static_cast<int>(a.at(0))), "hypercube: 2"};
    default:
      return std::nullopt;
  }
}

ClosedForms choose(const GraphSpec* spec, const Model& m, double lambda2_given) {
  ClosedForms t;
  const Graph& g = m.graph();
  const bool described = spec && spec_describes(*spec, g);
  if (described) {
    try {
      t.lambda2_L = family_lambda2(*spec);
    } catch (const std::invalid_argument&) {  // sizes outside the formula's range: no closed form
    }
  }
  if (!m.is_homogeneous() || g.num_edges() == 0) return t;
  const double s = m.s(), sigma = m.sigma();
  const double n = g.num_nodes(), ne = g.num_edges();
  if (described && spec->family == GraphFamily::Torus)
    t.marginal_variance = ClosedForm{torus_marginal_variance(spec->sizes[0], spec->sizes[1], s, sigma),
                                     "[eq:torus_true_var], homogeneous torus"};
  // lambda_2 for Prop. 5: the one given (computed), else the family's closed form.
  std::optional<ClosedForm> l2 = t.lambda2_L;
  if (std::isfinite(lambda2_given)) l2 = ClosedForm{lambda2_given, "the given lambda_2"};

  const Index k = g.max_degree();
  if (g.min_degree() == k) {
    const std::string src = "Prop. 1, k-regular, k = " + std::to_string(k);
    t.lambda_max_A_primal = ClosedForm{prop1_primal_lambda_max_A(k, s, sigma), src + ": k s^2/(sigma^2 + k s^2)"};
    t.rate_primal = ClosedForm{prop1_primal_rate(k, s, sigma, n), src};
    t.rate_primal_asymptotic =
        ClosedForm{prop1_primal_rate_asymptotic(k, s, sigma), src + ": exp(-sigma^2/(sigma^2 + k s^2))"};
  } else if (is_star(g)) {
    const double lambda = star_primal_lambda_max_A(g.num_edges(), s, sigma);
    t.lambda_max_A_primal = ClosedForm{lambda, "Appendix A, star: s^2 sqrt(|E|/((sigma^2 + s^2)(sigma^2 + |E| s^2)))"};
    t.rate_primal = ClosedForm{star_primal_rate(g.num_edges(), s, sigma), "Appendix A, star"};
    // exp(lambda - 1) with this star's lambda, comparable with the computed column; the paper's limit
    // [eqn:starrateAsy] also lets lambda_max(A) grow with the star.
    t.rate_primal_asymptotic =
        ClosedForm{random_sweep_rate_asymptotic(lambda),
                   "Appendix A, star: exp(lambda - 1); as the star grows, exp(s/sqrt(sigma^2 + s^2) - 1) = " +
                       std::to_string(star_primal_rate_asymptotic(s, sigma))};
  }
  if (g.has_cycles()) {
    t.lambda_max_A_dual =
        ClosedForm{prop4_dual_lambda_max_A(s, sigma), "Prop. 4, graph with cycles: 2 s^2/(sigma^2 + 2 s^2)"};
    t.rate_dual = ClosedForm{prop4_dual_rate(s, sigma, ne), "Prop. 4"};
    t.rate_dual_asymptotic =
        ClosedForm{prop4_dual_rate_asymptotic(s, sigma), "Prop. 4: exp(-sigma^2/(sigma^2 + 2 s^2))"};
    if (l2) {
      const std::string src = "Prop. 5 with " + l2->source.substr(0, l2->source.find(',')) +
                              (l2->source.find("limit") != std::string::npos ? " (asymptotic lambda_2)" : "");
      t.rate_dual_effective = ClosedForm{prop5_effective_dual_rate(l2->value, s, sigma, ne), src};
      t.rate_dual_effective_asymptotic = ClosedForm{prop5_effective_dual_rate_asymptotic(l2->value, s, sigma),
                                                    src + ": exp(-(sigma^2 + s^2 lambda_2)/(sigma^2 + 2 s^2))"};
    }
  } else if (is_star(g) && g.num_edges() >= 2) {
    t.lambda_max_A_dual =
        ClosedForm{star_dual_lambda_max_A(g.num_edges(), s, sigma), "Appendix A, star: s^2/(sigma^2 + 2 s^2)"};
    t.rate_dual = ClosedForm{star_dual_rate(s, sigma, ne), "Appendix A, star"};
    t.rate_dual_asymptotic =
        ClosedForm{star_dual_rate_asymptotic(s, sigma), "Appendix A, star: exp(-(sigma^2 + s^2)/(sigma^2 + 2 s^2))"};
  } else if (l2 && g.num_components() == 1) {
    // A tree: B^T B carries all non-zero eigenvalues of L, so the dual A = s^2 (2 I - B^T B)/(sigma^2 + 2 s^2)
    // peaks at lambda_2 (the spectrum in the proof of Prop. 5).
    const double l = prop5_cut_space_lambda_max_A(l2->value, s, sigma);
    t.lambda_max_A_dual = ClosedForm{l, "Prop. 5 spectrum, tree: s^2 (2 - lambda_2)/(sigma^2 + 2 s^2)"};
    t.rate_dual = ClosedForm{random_sweep_rate(l, ne), "Prop. 5 spectrum, tree"};
    t.rate_dual_asymptotic = ClosedForm{random_sweep_rate_asymptotic(l), "Prop. 5 spectrum, tree"};
  }
  return t;
}

}  // namespace

ClosedForms closed_forms(const GraphSpec& spec, const Model& model, double lambda2_L) {
  return choose(&spec, model, lambda2_L);
}

ClosedForms closed_forms(const Model& model, double lambda2_L) { return choose(nullptr, model, lambda2_L); }

// ---- the random-sweep rate --------------------------------------------------------------------------------

double random_sweep_rate(double lambda, double n) {
  if (!std::isfinite(n) || !(n >= 1.0))
    throw std::invalid_argument("random_sweep_rate: n = " + number_text(n) +
                                " coordinates must be finite and at least 1");
  if (!std::isfinite(lambda) || lambda > 1.0 || lambda < 1.0 - n)
    throw std::invalid_argument("random_sweep_rate: lambda_max(A) = " + number_text(lambda) +
                                " must lie in [1 - n, 1]");
  // [eqn:primalrate] ((n - 1 + lambda)/n)^n = (1 + (lambda - 1)/n)^n.
  return std::exp(n * std::log1p((lambda - 1.0) / n));
}

double random_sweep_rate_asymptotic(double lambda) {
  if (!std::isfinite(lambda) || lambda > 1.0)
    throw std::invalid_argument("random_sweep_rate_asymptotic: lambda_max(A) = " + number_text(lambda) +
                                " must be finite and at most 1");
  return std::exp(lambda - 1.0);
}

// ---- Props. 1, 4, 5 and appendix A ------------------------------------------------------------------------

double prop1_primal_lambda_max_A(Index k, double s, double sigma) {
  check_index(k, 0, "prop1: degree k");
  check_and_scale(s, sigma);
  const double ks2 = static_cast<double>(k) * s * s;
  return ks2 / (sigma * sigma + ks2);  // [eqn:primalrateHomogen]
}

namespace {
// 1 - lambda_max(A) of Prop. 1, sigma^2 / (sigma^2 + k s^2), without the cancellation of 1 - lambda.
double prop1_gap(Index k, double s, double sigma) {
  check_index(k, 0, "prop1: degree k");
  check_and_scale(s, sigma);
  return sigma * sigma / (sigma * sigma + static_cast<double>(k) * s * s);
}
}  // namespace

double prop1_primal_rate(Index k, double s, double sigma, double num_nodes) {
  check_count(num_nodes, "|V|");
  return power_rate(prop1_gap(k, s, sigma), num_nodes);
}

double prop1_primal_rate_asymptotic(Index k, double s, double sigma) {
  return std::exp(-prop1_gap(k, s, sigma));  // [eqn:primalrate3]
}

double prop4_dual_lambda_max_A(double s, double sigma) {
  check_and_scale(s, sigma);
  return 2.0 * s * s / (sigma * sigma + 2.0 * s * s);  // [eqn:primalrateHomogenD]
}

double prop4_dual_rate(double s, double sigma, double num_edges) {
  check_and_scale(s, sigma);
  check_count(num_edges, "|E|");
  return power_rate(sigma * sigma / (sigma * sigma + 2.0 * s * s), num_edges);  // [eqn:dualrate2]
}

double prop4_dual_rate_asymptotic(double s, double sigma) {
  check_and_scale(s, sigma);
  return std::exp(-sigma * sigma / (sigma * sigma + 2.0 * s * s));  // [eqn:dualrate3]
}

namespace {
// lambda_2 = 0 (a disconnected graph) is allowed: the formulas then give Prop. 4's values.
void check_lambda2(double lambda2) {
  if (!std::isfinite(lambda2) || !(lambda2 >= 0.0))
    throw std::invalid_argument("prop5: lambda_2(L) = " + number_text(lambda2) + " must be finite and non-negative");
}
}  // namespace

double prop5_cut_space_lambda_max_A(double lambda2, double s, double sigma) {
  check_lambda2(lambda2);
  check_and_scale(s, sigma);
  return s * s * (2.0 - lambda2) / (sigma * sigma + 2.0 * s * s);
}

double prop5_effective_dual_rate(double lambda2, double s, double sigma, double num_edges) {
  check_lambda2(lambda2);
  check_and_scale(s, sigma);
  check_count(num_edges, "|E|");
  // [eqn:effectiverate1]
  return power_rate((sigma * sigma + s * s * lambda2) / (sigma * sigma + 2.0 * s * s), num_edges);
}

double prop5_effective_dual_rate_asymptotic(double lambda2, double s, double sigma) {
  check_lambda2(lambda2);
  check_and_scale(s, sigma);
  return std::exp(-(sigma * sigma + s * s * lambda2) / (sigma * sigma + 2.0 * s * s));  // [eq:r_eff_final]
}

double star_primal_lambda_max_A(Index num_edges, double s, double sigma) {
  check_index(num_edges, 1, "star: number of edges");
  check_and_scale(s, sigma);
  const double m = num_edges, s2 = s * s, g2 = sigma * sigma;
  return s2 * std::sqrt(m / ((g2 + s2) * (g2 + m * s2)));  // Appendix A
}

double star_primal_rate(Index num_edges, double s, double sigma) {
  return random_sweep_rate(star_primal_lambda_max_A(num_edges, s, sigma), static_cast<double>(num_edges) + 1.0);
}

double star_primal_rate_asymptotic(double s, double sigma) {
  check_and_scale(s, sigma);
  return std::exp(s / std::sqrt(sigma * sigma + s * s) - 1.0);  // [eqn:starrateAsy]
}

double star_dual_lambda_max_A(Index num_edges, double s, double sigma) {
  check_index(num_edges, 2, "star dual: number of edges");
  check_and_scale(s, sigma);
  return s * s / (sigma * sigma + 2.0 * s * s);
}

double star_dual_rate(double s, double sigma, double num_edges) {
  check_and_scale(s, sigma);
  if (!std::isfinite(num_edges) || !(num_edges >= 2.0))
    throw std::invalid_argument("star dual rate: |E| = " + number_text(num_edges) + " must be at least 2");
  return power_rate((sigma * sigma + s * s) / (sigma * sigma + 2.0 * s * s), num_edges);  // [eqn:dualrate5]
}

double star_dual_rate_asymptotic(double s, double sigma) {
  check_and_scale(s, sigma);
  return std::exp(-(sigma * sigma + s * s) / (sigma * sigma + 2.0 * s * s));  // [eqn:dualrate6]
}

// ---- Table I ----------------------------------------------------------------------------------------------

double lambda2_complete(Index n) {
  check_index(n, 2, "lambda2_complete: n");
  return n;
}

double lambda2_complete_bipartite(Index n1, Index n2) {
  check_index(n1, 1, "lambda2_complete_bipartite: n1");
  check_index(n2, 1, "lambda2_complete_bipartite: n2");
  // Spectrum of L(K_{n1,n2}): 0, n1 (multiplicity n2 - 1), n2 (multiplicity n1 - 1), n1 + n2.
  double best = static_cast<double>(n1) + n2;
  if (n2 >= 2) best = std::min(best, static_cast<double>(n1));
  if (n1 >= 2) best = std::min(best, static_cast<double>(n2));
  return best;
}

double lambda2_torus(Index rows, Index cols) {
  check_index(rows, 3, "lambda2_torus: rows");
  check_index(cols, 3, "lambda2_torus: cols");
  return 4.0 * sin2(kPi / std::max(rows, cols));
}

double lambda2_random_regular_asymptotic(Index k) {
  check_index(k, 3, "lambda2_random_regular_asymptotic: k");
  return k - 2.0 * std::sqrt(k - 1.0);
}

double lambda2_star(Index n) {
  check_index(n, 2, "lambda2_star: n");
  return n == 2 ? 2.0 : 1.0;
}

double lambda2_path(Index n) {
  check_index(n, 2, "lambda2_path: n");
  return 4.0 * sin2(kPi / (2.0 * n));
}

double lambda2_cycle(Index n) {
  check_index(n, 3, "lambda2_cycle: n");
  return 4.0 * sin2(kPi / n);
}

double lambda2_grid(Index rows, Index cols) {
  check_index(rows, 1, "lambda2_grid: rows");
  check_index(cols, 1, "lambda2_grid: cols");
  if (std::max(rows, cols) < 2) throw std::invalid_argument("lambda2_grid: a 1 x 1 grid has a single node");
  return 4.0 * sin2(kPi / (2.0 * std::max(rows, cols)));
}

double lambda2_hypercube(int d) {
  if (d < 1)
    throw std::invalid_argument("lambda2_hypercube: dimension d = " + std::to_string(d) + " must be at least 1");
  return 2.0;
}

// ---- torus marginal variance ------------------------------------------------------------------------------

double torus_marginal_variance(Index rows, Index cols, double s, double sigma) {
  if (rows < 3 || cols < 3)
    throw std::invalid_argument("torus_marginal_variance: torus is " + std::to_string(rows) + " x " +
                                std::to_string(cols) + ", each side must be at least 3");
  check_standard_deviation(s, "s");
  check_standard_deviation(sigma, "sigma");
  const double pi = std::acos(-1.0);
  // a = 1/s^2 and b = 1/sigma^2 are finite for every valid s, sigma; the form s^2 sigma^2 / (sigma^2 + s^2 lambda)
  // overflowed (s = sigma = 1e150: inf) or underflowed (s = sigma = 1e-150: 0) in the product s^2 sigma^2.
  const double a = 1.0 / (s * s), b = 1.0 / (sigma * sigma);
  std::vector<double> row_part(static_cast<std::size_t>(rows)), col_part(static_cast<std::size_t>(cols));
  for (Index r = 0; r < rows; ++r) row_part[r] = 2 - 2 * std::cos(2 * pi * r / rows);
  for (Index c = 0; c < cols; ++c) col_part[c] = 2 - 2 * std::cos(2 * pi * c / cols);
  // [eq:torus_true_var]: the mean of (1/s^2 + lambda/sigma^2)^-1, summed row by row so the rounding error stays far
  // below 1e-12 relative even for 10^6 terms.
  double total = 0;
  for (Index r = 0; r < rows; ++r) {
    double row_sum = 0;
    for (Index c = 0; c < cols; ++c) row_sum += 1.0 / (a + b * (row_part[r] + col_part[c]));
    total += row_sum;
  }
  return total / (static_cast<double>(rows) * cols);
}

}  // namespace dualgibbs
