// The spectral-rate benchmark (`reproduce rates`): for each family of the paper at two or three sizes and several
// s/sigma, the predicted r_p, r_d, r_d^eff beside the rates fitted from the samplers' mean and error decay.
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/paper/figures.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "experiments/fits.hpp"
#include "experiments/seeds.hpp"
#include "paper/figure_support.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

using detail::apply_start;
using detail::derive_seed;
using detail::FigureRun;
using detail::FigureSpec;
using detail::mean_decay;
using detail::note_missing_fits;
using detail::run_figure;
using detail::settings_for;

// A graph of the rate benchmark: its family and sizes (random graphs: the seed is derived, not the spec's).
struct RateConfig {
  std::string spec;
  std::function<Graph()> make;
};

// The benchmark's graphs and ratios s / sigma (fewer with --quick).
std::vector<RateConfig> rate_configs(const ExperimentOptions& opt, std::vector<double>& ratios) {
  const std::uint64_t gs = derive_seed(opt.seed, 12);
  auto kreg = [gs](Index n, Index k) {
    return RateConfig{"kregular:" + std::to_string(n) + "," + std::to_string(k), [gs, n, k] {
                        return detail::connected_graph(
                            [n, k](std::uint64_t sd) { return make_random_regular(n, k, sd); }, gs,
                            1200 + static_cast<std::uint64_t>(n * 64 + k));
                      }};
  };
  auto ws = [gs](Index n) {
    return RateConfig{"ws:" + std::to_string(n) + ",4,0.3", [gs, n] {
                        return detail::connected_graph(
                            [n](std::uint64_t sd) { return make_watts_strogatz(n, 4, 0.3, sd); }, gs,
                            1300 + static_cast<std::uint64_t>(n));
                      }};
  };
  std::vector<RateConfig> configs;
  if (opt.quick) {
    configs = {{"torus:6x6", [] { return make_torus(6, 6); }},
               kreg(32, 4),
               {"complete:5", [] { return make_complete(5); }},
               {"bipartite:4,4", [] { return make_complete_bipartite(4, 4); }},
               {"star:8", [] { return make_star(8); }},
               ws(32)};
    ratios = {2.0};
  } else {
    configs = {{"torus:6x6", [] { return make_torus(6, 6); }},
               {"torus:12x12", [] { return make_torus(12, 12); }},
               kreg(64, 4),
               kreg(64, 8),
               kreg(128, 4),
               {"complete:5", [] { return make_complete(5); }},
               {"complete:10", [] { return make_complete(10); }},
               {"bipartite:4,4", [] { return make_complete_bipartite(4, 4); }},
               {"bipartite:8,8", [] { return make_complete_bipartite(8, 8); }},
               {"star:8", [] { return make_star(8); }},
               {"star:16", [] { return make_star(16); }},
               ws(64),
               ws(128)};
    ratios = {0.5, 2.0, 8.0};
  }
  return configs;
}

// What every run of the rate benchmark shares, and the time its runs add up.
struct RatesRun {
  const ExperimentOptions& opt;
  std::size_t mean_chains, eu_chains;
  double sampling = 0, spectra_seconds = 0;
};

// One graph at one ratio s / sigma (s = 1): predicted, closed-form and fitted rates, a row of the table and five
// rate comparisons. `q_factor` holds the symbolic analysis of Q's pattern for the graph.
void rates_of_model(RatesRun& run, const Graph& g, const std::string& spec_text, const GraphSpec& spec,
                    CholeskyFactor& q_factor, std::size_t gi, std::size_t ri, double ratio, double progress,
                    ExperimentResult& res) {
  const ExperimentOptions& opt = run.opt;
  const double s = 1.0, sigma = 1.0 / ratio;
  const Model m(g, s, sigma);
  const detail::Stopwatch sp;
  const Rates r = convergence_rates(m);
  run.spectra_seconds += sp.seconds();
  const double pp = detail::neg_log(r.rate_primal), pd = detail::neg_log(r.rate_dual),
               pe = detail::neg_log(r.rate_dual_effective);
  const double slowest = std::min(pp, pd);
  std::size_t sweeps = static_cast<std::size_t>(std::clamp(std::ceil(25.0 / slowest), 30.0, 200.0));
  if (opt.quick) sweeps = std::min<std::size_t>(sweeps, 60);
  if (opt.sweeps) sweeps = opt.sweeps;
  const std::string label = spec_text + " s/sigma=" + number_text(ratio, 10);
  if (opt.progress) opt.progress("rates " + label, progress);
  const std::uint64_t seed = derive_seed(opt.seed, 120 + gi, ri);
  RateFit fit_xt;
  const RateFit fit_p = mean_decay(m, Domain::Primal, run.mean_chains, sweeps, derive_seed(seed, 1), opt.threads,
                                   opt.group, nullptr, &run.sampling);
  const RateFit fit_y = mean_decay(m, Domain::Dual, run.mean_chains, sweeps, derive_seed(seed, 2), opt.threads,
                                   opt.group, &fit_xt, &run.sampling);
  ConvergenceSettings cs = settings_for(opt, run.eu_chains, sweeps, derive_seed(seed, 3));
  apply_start(cs, opt, InitialState::Constant);
  q_factor.factorize(m.primal_precision());
  const ConvergenceCurves c = measure_convergence(m, q_factor.inverse(), cs);  // target = covariance_primal(m)
  run.sampling += c.primal_stats.seconds + c.dual_stats.seconds;
  const RateFit eu_p = detail::fit_eu(c.primal), eu_d = detail::fit_eu(c.dual);
  const Graph& gg = m.graph();
  const double e = static_cast<double>(gg.num_edges());
  // Closed forms: Prop. 1 (regular), Prop. 4 and 5 (cycles, Prop. 5 at the computed lambda_2), appendix A.
  const ClosedForms cf = closed_forms(spec, m, r.lambda2_L);
  const double cp = detail::neg_log(cf.rate_primal), cd = detail::neg_log(cf.rate_dual),
               ce = detail::neg_log(cf.rate_dual_effective);
  res.table.add_row(label, {static_cast<double>(gg.num_nodes()), e, ratio, r.lambda2_L, pp, pd, pe, cp, cd, ce,
                            fit_p.neg_log_rate, fit_y.neg_log_rate, fit_xt.neg_log_rate, eu_p.neg_log_rate,
                            eu_d.neg_log_rate, fit_p.neg_log_rate / pp - 1.0, fit_y.neg_log_rate / pd - 1.0,
                            fit_xt.neg_log_rate / (std::isnan(pe) ? pd : pe) - 1.0, static_cast<double>(sweeps)});
  auto row = [&](const std::string& what, const std::string& by, double pred, double closed, const RateFit& f,
                 const std::string& from) {
    RateComparison rc;
    rc.label = label + " " + what;
    rc.fitted_from = from;
    rc.predicted_by = by;
    rc.predicted = pred;
    rc.closed_form = closed;
    rc.fit = f;
    res.rates.push_back(rc);
  };
  row("primal", "r_p", pp, cp, fit_p, "mean");
  row("dual y~", "r_d", pd, cd, fit_y, "mean");
  // On a tree B is injective (no cycle space): x~ converges at r_d itself.
  const double ce_or_tree = std::isnan(pe) ? cd : ce;
  row("dual x~", std::isnan(pe) ? "r_d" : "r_d^eff", std::isnan(pe) ? pd : pe, ce_or_tree, fit_xt, "mean");
  row("primal", "r_p", pp, cp, eu_p, "Eu");
  row("dual x~", std::isnan(pe) ? "r_d" : "r_d^eff", std::isnan(pe) ? pd : pe, ce_or_tree, eu_d, "Eu");
}

// Agreement summary over the mean fits (the primary measurement).
void summarise_rate_agreement(ExperimentResult& res) {
  std::vector<double> rel;
  for (const auto& rw : res.table.rows())
    for (std::size_t c : {res.table.column_index("rel_primal"), res.table.column_index("rel_dual"),
                          res.table.column_index("rel_dual_eff")})
      if (std::isfinite(rw[c])) rel.push_back(std::abs(rw[c]));
  std::sort(rel.begin(), rel.end());
  if (!rel.empty()) {
    res.summary.emplace_back("mean_fit_median_abs_rel_disagreement", rel[rel.size() / 2]);
    res.summary.emplace_back("mean_fit_max_abs_rel_disagreement", rel.back());
  }
}

void rates(FigureRun& run) {
  const ExperimentOptions& opt = run.opt;
  ExperimentResult& res = run.res;
  std::vector<double> ratios;
  const std::vector<RateConfig> configs = rate_configs(opt, ratios);
  if (opt.as_published)
    res.notes.push_back("as published: the authors published no rate benchmark; this is the paper-text run.");
  const std::size_t eu_chains = opt.quick ? 400 : 1000;
  res.parameters.emplace_back("graphs", std::to_string(configs.size()) +
                                            " (torus, k-regular, complete, complete "
                                            "bipartite, star, Watts-Strogatz)");
  res.parameters.emplace_back("s", "1");
  res.parameters.emplace_back("sigma", "1 / ratio");
  res.parameters.emplace_back("ratios_s_over_sigma", opt.quick ? "2" : "0.5, 2, 8");
  res.parameters.emplace_back("mean_fit_chains", std::to_string(run.chains));
  res.parameters.emplace_back("mean_fit_init", "given: 1e6 x a fixed N(0, I) vector, same for every chain");
  res.parameters.emplace_back("Eu_fit_chains", std::to_string(eu_chains));
  res.parameters.emplace_back("Eu_fit_init", "constant 1");
  res.parameters.emplace_back("sweeps", "clamp(ceil(25 / min(-ln r_p, -ln r_d)), 30, 200) per model (quick: <= 60)");
  res.table = Table("graph",
                    {"nodes", "edges", "ratio", "lambda2", "pred_primal", "pred_dual", "pred_dual_eff", "closed_primal",
                     "closed_dual", "closed_dual_eff", "fit_primal_mean", "fit_dual_mean", "fit_dual_eff_mean",
                     "fit_primal_Eu", "fit_dual_Eu", "rel_primal", "rel_dual", "rel_dual_eff", "sweeps"});
  RatesRun rr{opt, run.chains, eu_chains};
  const std::size_t total_runs = configs.size() * ratios.size();
  std::size_t runs = 0;
  for (std::size_t gi = 0; gi < configs.size(); ++gi) {
    const Graph g = configs[gi].make();
    const GraphSpec spec = parse_graph_spec(configs[gi].spec);
    CholeskyFactor q_factor;  // one symbolic analysis of Q's pattern for the graph's ratios
    q_factor.analyze(Model(g, 1.0, 1.0).primal_precision());
    for (std::size_t ri = 0; ri < ratios.size(); ++ri, ++runs)
      rates_of_model(rr, g, configs[gi].spec, spec, q_factor, gi, ri, ratios[ri],
                     static_cast<double>(runs) / static_cast<double>(total_runs), res);
  }
  summarise_rate_agreement(res);
  res.notes.push_back(
      "pred_dual_eff is undefined on trees (no cycle space): there x~ = B y~ converges at r_d, and "
      "rel_dual_eff compares with r_d.");
  res.notes.push_back(
      "mean fits: norm of the ensemble mean from a large common random start, last half of the "
      "clean window; the dual runs observe y~ (worst-case rate r_d, cycle space) and x~ = B y~ "
      "(effective rate r_d^eff, cut space). Eu fits: split-half covariance error from the constant "
      "start, paper convention E ~ r^(2t).");
  note_missing_fits(res);
  res.timings.emplace_back("sampling", rr.sampling);
  res.timings.emplace_back("spectra", rr.spectra_seconds);
}

}  // namespace

ExperimentResult run_rates(const ExperimentOptions& opt) {
  // Chains: the mean fits' (200, 500); sweeps: per model (rates_of_model).
  return run_figure(
      FigureSpec("rates",
                 "Spectral rates r_p, r_d, r_d^eff beside the rates fitted from the samplers' mean and error decay",
                 std::nullopt, {200, 500}, {}),
      opt, rates);
}

}  // namespace dualgibbs
