// dualgibbs marginals: the marginal variances of every node to a relative-RMSE target or within a time budget,
// by primal or dual Gibbs (plain or with the flow control variates), exact CHOLMOD draws, Rao-Blackwellized Monte
// Carlo, probing or selected inversion, or by the one predicted fastest (auto, the default).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "observations.hpp"
#include "output.hpp"

#include <dualgibbs/api/marginals.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace dualgibbs::cli {
namespace {

struct MarginalsCliOptions {
  api::MarginalsOptions m;
  unsigned threads = 0;
  std::string out;
  bool json = false;
};

// CSV: v, estimate, std_error, lower, upper (empty without a bracket; upper alone empty for a model without a dual,
// which has no flow energy E_v) and, with a mean, mean.
void write_csv(std::ostream& out, const api::MarginalsResult& res) {
  const MarginalResult& r = res.estimate;
  const bool bracket = r.lower.size() == r.estimate.size();
  out << (res.mean ? "v,estimate,std_error,lower,upper,mean\n" : "v,estimate,std_error,lower,upper\n")
      << std::setprecision(17);
  for (Eigen::Index v = 0; v < r.estimate.size(); ++v) {
    out << v << ',' << r.estimate[v] << ',' << r.std_error[v] << ',';
    if (bracket) {
      out << r.lower[v] << ',';
      if (std::isfinite(r.upper[v])) out << r.upper[v];
    } else
      out << ',';
    if (res.mean) out << ',' << res.mean->mean[v];
    out << '\n';
  }
}

void print_text(const api::MarginalsResult& res, const std::string& written) {
  const MarginalResult& r = res.estimate;
  const nlohmann::json& j = res.record;
  if (r.choice.automatic) std::cout << "auto chose " << r.choice.reason << "\n";
  std::cout << "marginal variances of " << r.estimate.size() << " nodes by " << to_string(r.method) << ": mean "
            << r.estimate.mean() << ", min " << r.estimate.minCoeff() << ", max " << r.estimate.maxCoeff() << "\n"
            << "relative standard error (RMS over nodes) " << r.rel_se_rms
            << (r.reached_target           ? " (target reached)"
                : res.options.rel_rmse > 0 ? " (target NOT reached)"
                                           : "")
            << "\n";
  if (r.method != MarginalMethod::Exact)
    std::cout << r.samples << " samples (" << r.chains
              << (r.method == MarginalMethod::Cholesky || r.method == MarginalMethod::Rbmc ? " draws per batch"
                                                                                           : " chains")
              << (r.sweeps ? ", " + std::to_string(r.sweeps) + " sweeps, burn-in " + std::to_string(r.burn_in) : "")
              << (r.degree ? ", Chebyshev degree " + std::to_string(r.degree) : "") << ")\n";
  if (!j["bracket_rel_width_rms"].is_null() && r.method != MarginalMethod::Exact)
    std::cout << "certified bracket l_v <= V_v <= E_v: RMS relative width " << j["bracket_rel_width_rms"].get<double>()
              << "\n";
  if (res.mean)
    std::cout << "posterior mean: mean " << res.mean->mean.mean() << ", min " << res.mean->mean.minCoeff() << ", max "
              << res.mean->mean.maxCoeff() << " (" << j["observed_nodes"].get<Index>() << " nodes observed, "
              << to_string(res.mean->solver) << ", relative residual " << res.mean->relative_residual << ")\n";
  std::cout << "seconds " << r.seconds << (written.empty() ? "" : ", written to " + written) << "\n";
}

int run_marginals(const CommonOptions& common, const MarginalsCliOptions& c) {
  if (c.json && (c.out == "-" || c.out == "/dev/stdout"))
    throw std::invalid_argument("marginals: --out - and --json would both write to standard output");
  std::optional<AtomicOutput> file;
  if (!c.out.empty())
    file.emplace(is_root() ? c.out : "/dev/null");  // a bad path fails before the run; rank 0 alone writes
  ProgressPrinter progress(common.quiet || c.json);
  api::Execution ex;
  ex.threads = c.threads;
  ex.group = common.group;
  ex.progress = progress.callback();
  api::MarginalsOptions o = c.m;
  api::MarginalsResult res = api::marginals(common, o, ex);
  progress.finish();
  if (file) {
    write_csv(file->stream(), res);
    res.record["file"] = c.out;
    if (is_stream_destination(c.out) ||
        !is_root()) {  // standard output, a device or FIFO: no file for a sidecar to sit next to
      file->commit();
    } else {
      AtomicOutput side(sidecar_path(c.out));
      side.stream() << res.record.dump(2) << '\n';
      file->commit();
      side.commit();
    }
  }
  if (c.json)
    print_json(res.record);
  else if (!common.quiet)
    print_text(res, file ? c.out : "");
  return res.succeeded() ? 0 : 1;
}

std::function<int()> setup_marginals(CLI::App& app, CommonOptions& common) {
  app.description("marginal variances of every node to a relative-RMSE target (or within a time budget)");
  static MarginalsCliOptions c;
  app.add_option(
      "--method", c.m.method,
      "auto | primal | dual | dual-cv | primal-cv | cholesky | rbmc | rbmc-gibbs | probing | exact (default: auto,\n"
      "the method predicted fastest: exact, probing on a complete graph, or dual-cv (primal-cv without a dual);\n"
      "it says why: docs/accuracy.md, \"The automatic method\")");
  app.add_option("--rel-rmse", c.m.rel_rmse,
                 "stop when the estimated relative standard error, RMS over nodes, is at most this (default 0.01 "
                 "unless --seconds is given)");
  app.add_option("--seconds", c.m.seconds, "stop after this many seconds (with --rel-rmse: whichever comes first)");
  add_count(app, "--chains", c.m.chains,
            "independent chains (sampling) or draws per batch (cholesky, rbmc); 0: 16 chains, 100 draws per batch")
      ->capture_default_str();
  add_count(app, "--every", c.m.every, "sweeps (iterations of --scheme) between evaluations (1 suits cheby-ssor)")
      ->capture_default_str();
  add_count(app, "--burn-in", c.m.burn_in, "sweeps discarded first (0: from the predicted convergence rate)")
      ->capture_default_str();
  add_count(app, "--max-sweeps", c.m.max_sweeps, "the sampling methods stop here whatever the target")
      ->capture_default_str();
  app.add_option("--degree", c.m.degree, "Chebyshev degree of the control variates (-1: automatic)")
      ->capture_default_str();
  add_count(app, "--lockstep", c.m.lockstep,
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
  add_scheme_options(app, c.m.scheme);
  app.add_option("--distribute", c.m.distribute,
                 "under mpirun: chains (each rank a share of the chains) or graph (every chain's graph cut over the\n"
                 "ranks, each rank estimating alone; the sampling methods, swept in colour order: the same estimates\n"
                 "for any number of ranks)")
      ->capture_default_str();
  app.add_option("--partition", c.m.partition,
                 "with --distribute graph: ranges (contiguous node ids) or metis (METIS's k-way cut)")
      ->capture_default_str();
  add_mean_options(app, c.m.mean);
  return [&common]() { return run_marginals(common, c); };
}

const Registration reg{{"marginals", setup_marginals}};

}  // namespace
}  // namespace dualgibbs::cli
