// dualgibbs marginals: the marginal variances of every node to a relative-RMSE target or within a time budget,
// by primal or dual Gibbs (plain or with the flow control variates), exact CHOLMOD draws, or selected inversion.
#include "cli.hpp"
#include "mpi_session.hpp"
#include "observations.hpp"
#include "output.hpp"

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/experiments/marginals.hpp>

#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace dualgibbs::cli {
namespace {

struct MarginalsCliOptions {
  std::string method;  // empty: default_marginal_method
  std::optional<double> rel_rmse;
  std::optional<double> seconds;
  std::size_t chains = 0;
  std::size_t every = 2;
  std::size_t burn_in = 0;
  std::size_t max_sweeps = 1000000;
  int degree = -1;
  std::size_t lockstep = 8;
  unsigned threads = 0;
  std::string out;
  bool json = false;
  MeanCliOptions mean;
  SchemeCli scheme;
};

int run_marginals(const CommonOptions& common, const MarginalsCliOptions& c) {
  // With --obs-file: the variances are those of the prior's Q (the mean does not change them); the posterior mean
  // is solved separately and goes into the CSV's `mean` column and the JSON.
  Index observed = 0;
  const Model model = common.posterior_model(&observed);
  MarginalOptions o;
  o.method = c.method.empty() ? default_marginal_method(model) : parse_marginal_method(c.method);
  // A target, a budget or both; the default is a 1% target.
  o.rel_rmse = c.rel_rmse.value_or(c.seconds ? 0.0 : 0.01);
  o.seconds = c.seconds.value_or(0.0);
  if (c.rel_rmse && !(*c.rel_rmse > 0))
    throw std::invalid_argument("marginals: --rel-rmse " + std::to_string(*c.rel_rmse) + " must be > 0");
  if (c.seconds && !(*c.seconds > 0))
    throw std::invalid_argument("marginals: --seconds " + std::to_string(*c.seconds) + " must be > 0");
  if (c.seconds && current_chain_group())
    throw std::invalid_argument(
        "marginals: --seconds is not available under mpirun with more than one rank (the ranks' clocks would "
        "stop them at different sweeps); give --rel-rmse and --max-sweeps");
  o.chains = c.chains;
  o.every = c.every;
  o.burn_in = c.burn_in;
  o.max_sweeps = c.max_sweeps;
  o.degree = c.degree;
  o.lockstep = c.lockstep;
  o.seed = common.seed;
  o.threads = resolved_threads(c.threads);
  if (o.method == MarginalMethod::Primal || o.method == MarginalMethod::PrimalCv)
    o.scheme = resolve_scheme(c.scheme, model, Domain::Primal, "marginals");
  else if (c.scheme.scheme != "gibbs" || c.scheme.omega || c.scheme.lambda_min || c.scheme.lambda_max)
    throw std::invalid_argument(std::string("marginals: --scheme, --omega, --lambda-min and --lambda-max apply to ") +
                                "--method primal and primal-cv, not " + to_string(o.method));
  if (c.json && (c.out == "-" || c.out == "/dev/stdout"))
    throw std::invalid_argument("marginals: --out - and --json would both write to standard output");
  std::optional<AtomicOutput> file;
  if (!c.out.empty())
    file.emplace(is_root() ? c.out : "/dev/null");  // a bad path fails before the run; rank 0 alone writes
  ProgressPrinter progress(common.quiet || c.json);
  o.progress = [&progress](double f) { progress("marginals", f); };
  PosteriorMean pm;
  if (model.has_mean()) pm = api::solve_posterior_mean(model, c.mean);
  const MarginalResult r = estimate_marginal_variances(model, o);
  progress.finish();

  const bool bracket = r.lower.size() == r.estimate.size();
  double width = 0;
  if (bracket) width = std::sqrt(((r.upper - r.lower).array() / r.estimate.array()).square().mean());
  nlohmann::json j = sidecar_base("marginals", common, o.threads);
  j["method"] = to_string(r.method);
  add_scheme_json(j, o.scheme);
  j["nodes"] = model.num_nodes();
  j["edges"] = model.num_edges();
  j["estimate_mean"] = r.estimate.mean();
  j["rel_se_rms"] = r.rel_se_rms;
  j["target_rel_rmse"] = o.rel_rmse;
  j["budget_seconds"] = o.seconds;
  j["reached_target"] = r.reached_target;
  j["seconds"] = r.seconds;
  j["sweeps"] = r.sweeps;
  j["burn_in"] = r.burn_in;
  j["chains"] = r.chains;
  j["lockstep"] = o.lockstep;
  j["samples"] = r.samples;
  j["degree"] = r.degree;
  j["gap_ratio_rms"] = r.gap_ratio_rms;
  j["pilot_gap_ratio"] = r.pilot_gap_ratio;
  j["bracket_rel_width_rms"] = bracket ? nlohmann::json(width) : nlohmann::json(nullptr);
  if (model.has_mean()) api::add_posterior_mean_record(j, pm, observed);
  if (file) {
    file->stream() << (model.has_mean() ? "v,estimate,std_error,lower,upper,mean\n"
                                        : "v,estimate,std_error,lower,upper\n")
                   << std::setprecision(17);
    for (Eigen::Index v = 0; v < r.estimate.size(); ++v) {
      file->stream() << v << ',' << r.estimate[v] << ',' << r.std_error[v] << ',';
      if (bracket)
        file->stream() << r.lower[v] << ',' << r.upper[v];
      else
        file->stream() << ',';
      if (model.has_mean()) file->stream() << ',' << pm.mean[v];
      file->stream() << '\n';
    }
    j["file"] = c.out;
    if (is_stream_destination(c.out) ||
        !is_root()) {  // standard output, a device or FIFO: no file for a sidecar to sit next to
      file->commit();
    } else {
      AtomicOutput side(sidecar_path(c.out));
      side.stream() << j.dump(2) << '\n';
      file->commit();
      side.commit();
    }
  }
  if (c.json) {
    print_json(j);
  } else if (!common.quiet) {
    std::cout << "marginal variances of " << model.num_nodes() << " nodes by " << to_string(r.method) << ": mean "
              << r.estimate.mean() << ", min " << r.estimate.minCoeff() << ", max " << r.estimate.maxCoeff() << "\n"
              << "relative standard error (RMS over nodes) " << r.rel_se_rms
              << (r.reached_target ? " (target reached)"
                  : o.rel_rmse > 0 ? " (target NOT reached)"
                                   : "")
              << "\n";
    if (r.method != MarginalMethod::Exact)
      std::cout << r.samples << " samples (" << r.chains
                << (r.method == MarginalMethod::Cholesky ? " draws per batch" : " chains")
                << (r.sweeps ? ", " + std::to_string(r.sweeps) + " sweeps, burn-in " + std::to_string(r.burn_in) : "")
                << (r.degree ? ", Chebyshev degree " + std::to_string(r.degree) : "") << ")\n";
    if (bracket && r.method != MarginalMethod::Exact)
      std::cout << "certified bracket l_v <= V_v <= E_v: RMS relative width " << width << "\n";
    if (model.has_mean())
      std::cout << "posterior mean: mean " << pm.mean.mean() << ", min " << pm.mean.minCoeff() << ", max "
                << pm.mean.maxCoeff() << " (" << observed << " nodes observed, " << to_string(pm.solver)
                << ", relative residual " << pm.relative_residual << ")\n";
    std::cout << "seconds " << r.seconds << (file ? ", written to " + c.out : "") << "\n";
  }
  return r.reached_target || o.rel_rmse == 0 ? 0 : 1;
}

std::function<int()> setup_marginals(CLI::App& app, CommonOptions& common) {
  app.description("marginal variances of every node to a relative-RMSE target (or within a time budget)");
  static MarginalsCliOptions c;
  app.add_option("--method", c.method,
                 "primal | dual | dual-cv | primal-cv | cholesky | exact (default: exact on lattice-like graphs, "
                 "dual-cv otherwise; see docs/accuracy.md)");
  app.add_option("--rel-rmse", c.rel_rmse,
                 "stop when the estimated relative standard error, RMS over nodes, is at most this (default 0.01 "
                 "unless --seconds is given)");
  app.add_option("--seconds", c.seconds, "stop after this many seconds (with --rel-rmse: whichever comes first)");
  add_count(app, "--chains", c.chains,
            "independent chains (sampling) or draws per batch (cholesky); 0: 16 chains, 100 draws per batch")
      ->capture_default_str();
  add_count(app, "--every", c.every, "sweeps (iterations of --scheme) between evaluations (1 suits cheby-ssor)")
      ->capture_default_str();
  add_count(app, "--burn-in", c.burn_in, "sweeps discarded first (0: from the predicted convergence rate)")
      ->capture_default_str();
  add_count(app, "--max-sweeps", c.max_sweeps, "the sampling methods stop here whatever the target")
      ->capture_default_str();
  app.add_option("--degree", c.degree, "Chebyshev degree of the control variates (-1: automatic)")
      ->capture_default_str();
  add_count(app, "--lockstep", c.lockstep,
            "chains per shared-schedule block of the sampler: 1, 2, 4, 8 or 16 (faster; the chains of a block are\n"
            "independent given their schedule, so the variances and their standard errors stay honest after the\n"
            "burn-in: docs/accuracy.md)")
      ->capture_default_str();
  add_count(app, "--threads", c.threads, "threads of the samplers and estimators (0 = the cores this process may use)")
      ->capture_default_str();
  app.add_option("--out,-o", c.out,
                 "CSV: v, estimate, std_error, lower, upper (and mean, the posterior mean, with --obs-file)\n"
                 "(JSON sidecar FILE.json; '-' = standard output, no sidecar then nor for a device or FIFO)");
  app.add_flag("--json", c.json, "print the result's summary as JSON on stdout");
  add_scheme_options(app, c.scheme);
  add_mean_options(app, c.mean);
  return [&common]() { return run_marginals(common, c); };
}

const Registration reg{{"marginals", setup_marginals}};

}  // namespace
}  // namespace dualgibbs::cli
