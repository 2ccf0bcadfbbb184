// dualgibbs info: sizes, degrees, components and parameters of the model, then its spectra and the
// random-sweep convergence rates, computed (spectral.hpp) and, where the paper has one, in closed form beside
// them (Prop. 1, 4, 5, Appendix A, Table I).
#include "cli.hpp"

#include <dualgibbs/model/model.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dualgibbs::cli {
namespace {

nlohmann::json model_info(const Model& m) {
  const Graph& g = m.graph();
  nlohmann::json j;
  j["nodes"] = g.num_nodes();
  j["edges"] = g.num_edges();
  j["min_degree"] = g.min_degree();
  j["max_degree"] = g.max_degree();
  j["mean_degree"] = 2.0 * g.num_edges() / g.num_nodes();
  j["components"] = g.num_components();
  j["isolated_nodes"] = g.num_isolated();
  j["has_cycles"] = g.has_cycles();
  j["homogeneous"] = m.is_homogeneous();
  if (m.is_homogeneous()) {
    j["s"] = m.s();
    j["sigma"] = m.sigma();
  }
  j["nnz_Q"] = static_cast<std::int64_t>(g.num_nodes()) + 2 * static_cast<std::int64_t>(g.num_edges());
  j["nnz_R"] = m.dual_precision_nonzeros();
  return j;
}

// ---- closed forms -----------------------------------------------------------------------------------

struct ClosedForm {
  double value;
  std::string source;
};

// The family and integer arguments of a generator spec such as `torus:30x40` or `bipartite:5,7`; the graph
// loader has already accepted the spec, so anything unexpected just means "no closed form".
struct Spec {
  std::string family;
  std::vector<long> args;
};
std::optional<Spec> parse_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Spec out{spec.substr(0, colon), {}};
  if (out.family == "file") return std::nullopt;
  std::string rest = spec.substr(colon + 1);
  for (char& c : rest)
    if (c == 'x' || c == ',') c = ' ';
  std::istringstream in(rest);
  std::string token;
  while (in >> token) {
    try {
      std::size_t used = 0;
      const long v = std::stol(token, &used);
      if (used != token.size()) break;  // a probability such as 0.1: later arguments are not sizes
      out.args.push_back(v);
    } catch (const std::exception&) {
      break;
    }
  }
  return out;
}

// lambda_2(L) of the generator families with a known spectrum (Table I and the standard ones).
std::optional<ClosedForm> lambda2_closed_form(const std::string& graph_spec) {
  const auto spec = parse_spec(graph_spec);
  if (!spec || spec->args.empty()) return std::nullopt;
  const std::string& f = spec->family;
  const auto& a = spec->args;
  const auto arg = [&](std::size_t i) { return static_cast<Index>(a[i]); };
  try {
    if (f == "torus")
      return ClosedForm{lambda2_torus(arg(0), a.size() > 1 ? arg(1) : arg(0)),
                        "Table I: n x n torus, 4 sin^2(pi/n) (n = the longer side)"};
    if (f == "complete") return ClosedForm{lambda2_complete(arg(0)), "Table I: complete graph, |V|"};
    if (f == "bipartite" && a.size() > 1)
      return ClosedForm{lambda2_complete_bipartite(arg(0), arg(1)), "Table I: K_{n,n}, n (K_{n1,n2}: min(n1, n2))"};
    if (f == "star") return ClosedForm{lambda2_star(arg(0)), "Table I: star, 1"};
    if (f == "kregular" && a.size() > 1)
      return ClosedForm{lambda2_random_regular_asymptotic(arg(1)),
                        "Table I: random k-regular, k - 2 sqrt(k - 1) (limit |V| -> infinity)"};
    if (f == "path") return ClosedForm{lambda2_path(arg(0)), "path: 4 sin^2(pi/(2n))"};
    if (f == "cycle") return ClosedForm{lambda2_cycle(arg(0)), "cycle: 4 sin^2(pi/n)"};
    if (f == "grid")
      return ClosedForm{lambda2_grid(arg(0), a.size() > 1 ? arg(1) : arg(0)),
                        "grid: 4 sin^2(pi/(2n)) (n = the longer side)"};
    if (f == "hypercube") return ClosedForm{lambda2_hypercube(static_cast<int>(a[0])), "hypercube: 2"};
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

bool is_star(const Graph& g) {
  return g.num_nodes() >= 2 && g.num_components() == 1 && !g.has_cycles() && g.max_degree() == g.num_nodes() - 1;
}

struct Theory {
  std::optional<ClosedForm> lambda2, lp, ld, rp, rd, reff, rp_inf, rd_inf, reff_inf;
};

// Every closed form that applies to this model (homogeneous models only: the paper's propositions).
Theory closed_forms(const Model& m, const std::string& graph_spec) {
  Theory t;
  const Graph& g = m.graph();
  t.lambda2 = lambda2_closed_form(graph_spec);
  if (!m.is_homogeneous() || g.num_edges() == 0) return t;
  const double s = m.s(), sigma = m.sigma();
  const double n = g.num_nodes(), ne = g.num_edges();
  const Index k = g.max_degree();
  if (g.min_degree() == k) {
    const std::string src = "Prop. 1, k-regular, k = " + std::to_string(k);
    t.lp = ClosedForm{prop1_primal_lambda_max_A(k, s, sigma), src + ": k s^2/(sigma^2 + k s^2)"};
    t.rp = ClosedForm{prop1_primal_rate(k, s, sigma, n), src};
    t.rp_inf = ClosedForm{prop1_primal_rate_asymptotic(k, s, sigma), src + ": exp(-sigma^2/(sigma^2 + k s^2))"};
  } else if (is_star(g)) {
    t.lp = ClosedForm{star_primal_lambda_max_A(g.num_edges(), s, sigma),
                      "Appendix A, star: s^2 sqrt(|E|/((sigma^2 + s^2)(sigma^2 + |E| s^2)))"};
    t.rp = ClosedForm{star_primal_rate(g.num_edges(), s, sigma), "Appendix A, star"};
    // exp(lambda - 1) with this star's lambda, comparable with the computed column; the paper's limit
    // [eqn:starrateAsy] also lets lambda_max(A) grow with the star.
    t.rp_inf = ClosedForm{random_sweep_rate_asymptotic(t.lp->value),
                          "Appendix A, star: exp(lambda - 1); as the star grows, exp(s/sqrt(sigma^2 + s^2) - 1) = " +
                              std::to_string(star_primal_rate_asymptotic(s, sigma))};
  }
  if (g.has_cycles()) {
    t.ld = ClosedForm{prop4_dual_lambda_max_A(s, sigma), "Prop. 4, graph with cycles: 2 s^2/(sigma^2 + 2 s^2)"};
    t.rd = ClosedForm{prop4_dual_rate(s, sigma, ne), "Prop. 4"};
    t.rd_inf = ClosedForm{prop4_dual_rate_asymptotic(s, sigma), "Prop. 4: exp(-sigma^2/(sigma^2 + 2 s^2))"};
    if (t.lambda2) {
      const std::string src = "Prop. 5 with " + t.lambda2->source.substr(0, t.lambda2->source.find(',')) +
                              (t.lambda2->source.find("limit") != std::string::npos ? " (asymptotic lambda_2)" : "");
      t.reff = ClosedForm{prop5_effective_dual_rate(t.lambda2->value, s, sigma, ne), src};
      t.reff_inf = ClosedForm{prop5_effective_dual_rate_asymptotic(t.lambda2->value, s, sigma),
                              src + ": exp(-(sigma^2 + s^2 lambda_2)/(sigma^2 + 2 s^2))"};
    }
  } else if (is_star(g) && g.num_edges() >= 2) {
    t.ld = ClosedForm{star_dual_lambda_max_A(g.num_edges(), s, sigma), "Appendix A, star: s^2/(sigma^2 + 2 s^2)"};
    t.rd = ClosedForm{star_dual_rate(s, sigma, ne), "Appendix A, star"};
    t.rd_inf =
        ClosedForm{star_dual_rate_asymptotic(s, sigma), "Appendix A, star: exp(-(sigma^2 + s^2)/(sigma^2 + 2 s^2))"};
  } else if (t.lambda2 && g.num_components() == 1) {
    // A tree: B^T B carries all non-zero eigenvalues of L, so the dual A = s^2 (2 I - B^T B)/(sigma^2 + 2 s^2)
    // peaks at lambda_2 (the spectrum in the proof of Prop. 5).
    const double l = prop5_cut_space_lambda_max_A(t.lambda2->value, s, sigma);
    t.ld = ClosedForm{l, "Prop. 5 spectrum, tree: s^2 (2 - lambda_2)/(sigma^2 + 2 s^2)"};
    t.rd = ClosedForm{random_sweep_rate(l, ne), "Prop. 5 spectrum, tree"};
    t.rd_inf = ClosedForm{random_sweep_rate_asymptotic(l), "Prop. 5 spectrum, tree"};
  }
  return t;
}

// ---- output -------------------------------------------------------------------------------------------

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

void add_spectra(nlohmann::json& j, const Rates& r, const Theory& t) {
  j["lambda2_L"] = number_or_null(r.lambda2_L);
  j["lambda_max_A_primal"] = number_or_null(r.lambda_max_A_primal);
  j["lambda_max_A_dual"] = number_or_null(r.lambda_max_A_dual);
  j["rate_primal"] = number_or_null(r.rate_primal);
  j["rate_dual"] = number_or_null(r.rate_dual);
  j["rate_dual_effective"] = number_or_null(r.rate_dual_effective);
  j["rate_primal_asymptotic"] = number_or_null(r.rate_primal_asymptotic);
  j["rate_dual_asymptotic"] = number_or_null(r.rate_dual_asymptotic);
  j["rate_dual_effective_asymptotic"] = number_or_null(r.rate_dual_effective_asymptotic);
  j["lambda_min_nonzero_L"] = number_or_null(r.lambda_min_nonzero_L);
  if (r.components > 1 && r.components <= 1000) {
    nlohmann::json per = nlohmann::json::array();
    for (double x : r.lambda2_L_per_component) per.push_back(number_or_null(x));
    j["lambda2_L_per_component"] = per;
  }
  j["spectral"] = {{"method_lambda2", to_string(r.method_lambda2)},
                   {"method_primal", to_string(r.method_primal)},
                   {"method_dual", to_string(r.method_dual)},
                   {"seconds_lambda2", r.seconds_lambda2},
                   {"seconds_primal", r.seconds_primal},
                   {"seconds_dual", r.seconds_dual}};
  nlohmann::json cf = nlohmann::json::object();
  const auto put = [&](const char* key, const std::optional<ClosedForm>& c) {
    if (c) cf[key] = {{"value", number_or_null(c->value)}, {"source", c->source}};
  };
  put("lambda2_L", t.lambda2);
  put("lambda_max_A_primal", t.lp);
  put("lambda_max_A_dual", t.ld);
  put("rate_primal", t.rp);
  put("rate_dual", t.rd);
  put("rate_dual_effective", t.reff);
  put("rate_primal_asymptotic", t.rp_inf);
  put("rate_dual_asymptotic", t.rd_inf);
  put("rate_dual_effective_asymptotic", t.reff_inf);
  j["closed_forms"] = cf;
}

std::string fmt(double x) {
  if (std::isnan(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

void print_row(const char* name, double computed, const std::optional<ClosedForm>& c) {
  std::printf("  %-28s %-22s", name, fmt(computed).c_str());
  if (c) std::printf(" %-22s %s", fmt(c->value).c_str(), c->source.c_str());
  std::printf("\n");
}

void print_spectra(const Model& m, const Rates& r, const Theory& t) {
  const Graph& g = m.graph();
  std::printf("spectra (lambda_2: %s, primal: %s, dual: %s; %.3g s)\n", to_string(r.method_lambda2),
              to_string(r.method_primal), to_string(r.method_dual),
              r.seconds_lambda2 + r.seconds_primal + r.seconds_dual);
  std::printf("  %-28s %-22s %-22s %s\n", "", "computed", "closed form", "source");
  print_row("lambda_2(L)", r.lambda2_L, t.lambda2);
  if (r.components > 1) {
    std::printf("  %-28s", "  per component");
    const std::size_t shown = std::min<std::size_t>(r.lambda2_L_per_component.size(), 8);
    for (std::size_t c = 0; c < shown; ++c) std::printf(" %s", fmt(r.lambda2_L_per_component[c]).c_str());
    if (shown < r.lambda2_L_per_component.size()) std::printf(" ... (%zu in all)", r.lambda2_L_per_component.size());
    std::printf("\n");
    print_row("smallest non-zero of L", r.lambda_min_nonzero_L, std::nullopt);
  }
  print_row("lambda_max(A) primal", r.lambda_max_A_primal, t.lp);
  print_row("lambda_max(A) dual", r.lambda_max_A_dual, t.ld);
  std::printf("random-sweep convergence rates per sweep (asymptotic: limit of many coordinates)\n");
  print_row("r_p  primal", r.rate_primal, t.rp);
  print_row("r_p  asymptotic", r.rate_primal_asymptotic, t.rp_inf);
  print_row("r_d  dual", r.rate_dual, t.rd);
  print_row("r_d  asymptotic", r.rate_dual_asymptotic, t.rd_inf);
  print_row("r_d  effective (x~ = B y~)", r.rate_dual_effective, t.reff);
  print_row("r_d  effective asymptotic", r.rate_dual_effective_asymptotic, t.reff_inf);
  if (std::isnan(r.rate_dual_effective) && g.num_edges() > 0)
    std::printf("  (effective rate: Prop. 5 needs a homogeneous model on a graph with cycles%s)\n",
                g.has_cycles() ? "" : "; without cycles it equals r_d");
}

struct InfoOptions {
  bool json = false;
  bool no_spectra = false;
  std::string method = "auto";
  double tolerance = SpectralOptions{}.tolerance;
};

std::function<int()> setup_info(CLI::App& app, CommonOptions& common) {
  app.description("sizes, components, spectra and convergence rates of the model, with the paper's closed forms");
  static InfoOptions opt;
  app.add_flag("--json", opt.json, "machine-readable output on stdout");
  app.add_flag("--no-spectra", opt.no_spectra, "sizes only: skip the eigenvalue computations");
  app.add_option("--method", opt.method,
                 "eigensolver: auto | dense | shift-invert | lanczos (auto: dense for small problems, shift-invert\n"
                 "when the Cholesky factor of the Laplacian pattern is small, matrix-free Lanczos otherwise)")
      ->capture_default_str();
  app.add_option("--tolerance", opt.tolerance, "relative residual tolerance of the iterative eigensolvers")
      ->capture_default_str();
  return [&common]() {
    SpectralOptions so;
    so.method = parse_spectral_method(opt.method);
    so.tolerance = opt.tolerance;
    const Model m = common.model();
    nlohmann::json j = model_info(m);
    std::optional<Rates> rates;
    Theory theory;
    if (!opt.no_spectra) {
      rates = convergence_rates(m, so);
      theory = closed_forms(m, common.graph);
      add_spectra(j, *rates, theory);
    }
    if (opt.json) {
      print_json(j);
      return 0;
    }
    std::cout << "model: " << m.summary() << "\n";
    std::cout << "  nodes |V|            " << j["nodes"] << "\n"
              << "  edges |E|            " << j["edges"] << "\n"
              << "  degree min/mean/max  " << j["min_degree"] << " / " << j["mean_degree"] << " / " << j["max_degree"]
              << "\n"
              << "  components           " << j["components"]
              << (m.graph().num_components() > 1 ? "  (disconnected: spectra are per component)" : "") << "\n"
              << "  isolated nodes       " << j["isolated_nodes"] << "\n"
              << "  cycles               "
              << (m.graph().has_cycles() ? "yes" : "no (a forest: the dual has no cycle space)") << "\n"
              << "  nnz(Q), nnz(R)       " << j["nnz_Q"] << ", " << j["nnz_R"] << std::endl;
    if (rates) print_spectra(m, *rates, theory);
    std::fflush(stdout);
    return 0;
  };
}

const Registration reg{{"info", setup_info}};

}  // namespace
}  // namespace dualgibbs::cli
