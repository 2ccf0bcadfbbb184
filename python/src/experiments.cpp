// dualgibbs.info, marginals, run_convergence, bench and run_experiment: the service layer's use cases (api/), each
// mapping its keyword arguments onto the use case's options and returning its record (record.hpp: the same fields,
// with the same names, as the command's JSON), plus the arrays and tables the record leaves out. The defaults are the
// command's (python/tests/test_option_parity.py checks them against `dualgibbs SUBCOMMAND --help`).
//
// A model given from Python has no graph spec: the records' `graph` is the model's summary (run_convergence: its
// `graph` argument when given), `s` and `sigma` those of a homogeneous model (NaN otherwise), `seed` the argument.
#include "experiments.hpp"

#include "record.hpp"

#include <dualgibbs/api/bench.hpp>
#include <dualgibbs/api/converge.hpp>
#include <dualgibbs/api/info.hpp>
#include <dualgibbs/api/marginals.hpp>
#include <dualgibbs/paper/reproduce.hpp>

#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace py = pybind11;
using namespace pybind11::literals;

namespace dualgibbs::python {
namespace {

using Progress = std::function<void(const std::string&, double)>;
using OptionalNumber = std::optional<double>;

api::ModelSource describe(const Model& model, std::uint64_t seed, const std::string& graph = "") {
  api::ModelSource source;
  source.graph = graph.empty() ? model.summary() : graph;
  source.s = model.is_homogeneous() ? model.s() : std::numeric_limits<double>::quiet_NaN();
  source.sigma = model.is_homogeneous() ? model.sigma() : std::numeric_limits<double>::quiet_NaN();
  source.seed = seed;
  return source;
}

api::SchemeChoice scheme_choice(const std::string& scan, const std::string& scheme, OptionalNumber omega,
                                OptionalNumber lambda_min, OptionalNumber lambda_max) {
  api::SchemeChoice c;
  c.scan = scan;
  c.scheme = scheme;
  c.omega = omega;
  c.lambda_min = lambda_min;
  c.lambda_max = lambda_max;
  return c;
}

// The execution of a call that releases the GIL: progress (if given) is called with the GIL held. The callback is
// captured by reference, so that the copies the library makes of it never touch a Python reference count without the
// GIL; `progress` outlives the call.
api::Execution execution(unsigned threads, const Progress& progress) {
  api::Execution ex;
  ex.threads = threads;
  if (progress)
    ex.progress = [&progress](const std::string& stage, double fraction) {
      const py::gil_scoped_acquire locked;
      progress(stage, fraction);
    };
  return ex;
}

py::dict table_dict(const Table& t) {
  py::dict d;
  if (!t.label_column().empty()) d[py::str(t.label_column())] = t.labels();
  for (std::size_t j = 0; j < t.columns().size(); ++j) {
    Eigen::VectorXd col(static_cast<Eigen::Index>(t.num_rows()));
    for (std::size_t r = 0; r < t.num_rows(); ++r) col[static_cast<Eigen::Index>(r)] = t.rows()[r][j];
    d[py::str(t.columns()[j])] = col;
  }
  return d;
}

// The record of an experiment with its name and tables: 'name', 'table' ({column: array}), 'extra_tables'.
py::dict experiment_dict(const api::ExperimentRun& run) {
  py::dict d = to_python(run.record);
  py::dict extra;
  for (const auto& [suffix, table] : run.result.extra_tables) extra[py::str(suffix)] = table_dict(table);
  d["name"] = run.result.name;
  d["table"] = table_dict(run.result.table);
  d["extra_tables"] = extra;
  return d;
}

py::object info(const Model& model, const std::optional<std::string>& spec, bool accel, bool spectra,
                const std::string& method, double tolerance) {
  std::optional<GraphSpec> parsed;
  if (spec) parsed = parse_graph_spec(*spec);
  api::InfoOptions o;
  o.spectra = spectra;
  o.accel = accel;
  o.method = method;
  o.tolerance = tolerance;
  api::InfoResult r;
  {
    const py::gil_scoped_release unlocked;
    r = api::info(model, parsed ? &*parsed : nullptr, o);
  }
  return to_python(r.record);
}

py::dict marginals(const Model& model, const std::optional<std::string>& method, OptionalNumber rel_rmse,
                   OptionalNumber seconds, std::size_t chains, std::size_t every, std::size_t burn_in,
                   std::size_t max_sweeps, int degree, std::size_t lockstep, unsigned threads, std::uint64_t seed,
                   const std::string& scheme, OptionalNumber omega, OptionalNumber lambda_min,
                   OptionalNumber lambda_max, const std::string& mean_solver, double mean_tolerance) {
  api::MarginalsOptions o;
  o.method = method;
  o.rel_rmse = rel_rmse;
  o.seconds = seconds;
  o.chains = chains;
  o.every = every;
  o.burn_in = burn_in;
  o.max_sweeps = max_sweeps;
  o.degree = degree;
  o.lockstep = lockstep;
  o.scheme = scheme_choice("random", scheme, omega, lambda_min, lambda_max);
  o.mean = {mean_solver, mean_tolerance};
  const api::ModelSource source = describe(model, seed);
  api::MarginalsResult r;
  {
    const py::gil_scoped_release unlocked;
    r = api::marginals(model, o, source, execution(threads, {}), model.has_mean() ? model.num_nodes() : 0);
  }
  py::dict d = to_python(r.record);
  d["estimate"] = std::move(r.estimate.estimate);
  d["std_error"] = std::move(r.estimate.std_error);
  d["lower"] = std::move(r.estimate.lower);
  d["upper"] = std::move(r.estimate.upper);
  if (r.mean) d["mean"] = std::move(r.mean->mean);
  return d;
}

py::dict run_convergence(const Model& model, std::size_t chains, std::size_t sweeps, std::size_t every,
                         const std::string& scan, const std::string& scheme, OptionalNumber omega,
                         OptionalNumber lambda_min, OptionalNumber lambda_max, const std::string& init,
                         double init_value, double init_scale, std::uint64_t seed, unsigned threads, Index full_max,
                         bool control_variate, const std::string& name, const std::string& graph,
                         const Progress& progress) {
  api::ConvergeOptions o;
  o.chains = chains;
  o.sweeps = sweeps;
  o.every = every;
  o.scheme = scheme_choice(scan, scheme, omega, lambda_min, lambda_max);
  o.init = init;
  o.init_value = init_value;
  o.init_scale = init_scale;
  o.full_max = full_max;
  o.control_variate = control_variate;
  o.name = name;
  const api::ModelSource source = describe(model, seed, graph);
  api::ExperimentRun run;
  {
    const py::gil_scoped_release unlocked;
    run = api::converge(model, o, source, execution(threads, progress));
  }
  return experiment_dict(run);
}

py::object bench(const Model& model, const std::string& domain, const std::string& scan, const std::string& scheme,
                 OptionalNumber omega, OptionalNumber lambda_min, OptionalNumber lambda_max, std::size_t chains,
                 std::size_t sweeps, unsigned threads, std::size_t lockstep, int repeat, std::uint64_t seed) {
  api::BenchOptions o;
  o.domain = domain;
  o.scheme = scheme_choice(scan, scheme, omega, lambda_min, lambda_max);
  o.chains = chains;
  o.sweeps = sweeps;
  o.lockstep = lockstep;
  o.repeat = repeat;
  const api::ModelSource source = describe(model, seed);
  api::BenchResult r;
  {
    const py::gil_scoped_release unlocked;
    r = api::bench(model, o, source, execution(threads, {}));
  }
  return to_python(r.record);
}

py::dict run_experiment(const std::string& name, bool quick, std::uint64_t seed, unsigned threads, std::size_t chains,
                        std::size_t sweeps, bool as_published, const std::optional<std::string>& init,
                        OptionalNumber init_value, OptionalNumber init_scale, const Progress& progress) {
  api::ReproduceOptions o;
  o.quick = quick;
  o.seed = seed;
  o.chains = chains;
  o.sweeps = sweeps;
  o.as_published = as_published;
  o.init = init;
  o.init_value = init_value;
  o.init_scale = init_scale;
  api::ExperimentRun run;
  {
    const py::gil_scoped_release unlocked;
    run = api::reproduce(name, o, execution(threads, progress));
  }
  return experiment_dict(run);
}

}  // namespace

void register_experiments(py::module_& m) {
  m.def("info", &info, "model"_a, "spec"_a = py::none(), py::kw_only(), "accel"_a = false, "spectra"_a = true,
        "method"_a = "auto", "tolerance"_a = api::InfoOptions{}.tolerance, R"doc(
Sizes, components, spectra and convergence rates of a model with the paper's closed forms, as `dualgibbs info --json`
(the same keys): nodes, edges, degrees, components, ..., lambda2_L, lambda_max_A_primal, lambda_max_A_dual,
rate_primal, rate_dual, rate_dual_effective (and _asymptotic), spectral (methods, seconds), closed_forms ({name:
{'value', 'source'}}), and the SSOR / Chebyshev-SSOR rates omega_D, rate_ssor_D, rate_cheby_ssor_D, ... (D = primal,
dual; None above 1000 coordinates, 50000 with accel=True). spec: the model's graph spec (e.g. 'torus:10') for the
family's closed forms (Table I). spectra=False: sizes only. method: 'auto', 'dense', 'shift-invert' or 'lanczos';
tolerance: relative residual of the iterative eigensolvers. The GIL is released.)doc");
  m.def("marginals", &marginals, "model"_a, py::kw_only(), "method"_a = py::none(), "rel_rmse"_a = py::none(),
        "seconds"_a = py::none(), "chains"_a = 0, "every"_a = 2, "burn_in"_a = 0, "max_sweeps"_a = 1000000,
        "degree"_a = -1, "lockstep"_a = 8, "threads"_a = 0, "seed"_a = 1, "scheme"_a = "gibbs", "omega"_a = py::none(),
        "lambda_min"_a = py::none(), "lambda_max"_a = py::none(), "mean_solver"_a = "cholesky",
        "mean_tolerance"_a = 1e-10, R"doc(
Marginal variances Var(X_v) of every node to a target accuracy, as `dualgibbs marginals` (docs/accuracy.md), with its
defaults. method: 'auto', 'primal', 'dual', 'dual-cv', 'primal-cv', 'cholesky', 'rbmc', 'rbmc-gibbs', 'probing' or
'exact'; None is 'auto', the method predicted fastest (exact, probing on a complete graph, or dual-cv, primal-cv without
a dual), which records why in 'auto_reason' and its predictions in 'auto_exact_seconds', 'auto_probing_seconds' and
'auto_sampling_seconds'. Stops when the RMS relative standard error is at most rel_rmse
(None: 0.01 unless `seconds` is given) or after `seconds`. chains = 0: 16 chains (100 draws per batch for cholesky);
lockstep: chains per shared-schedule block of the sampler (1, 2, 4, 8 or 16). scheme, omega, lambda_min, lambda_max:
the sweep scheme of the primal methods ('gibbs', 'ssor', 'cheby-ssor'). For a model with a mean, the posterior mean
is solved beside (mean_solver 'cholesky' or 'cg', mean_tolerance). Returns the record of `marginals --json` (method,
rel_se_rms, reached_target, sweeps, burn_in, chains, samples, degree, gap_ratio_rms, pilot_gap_ratio, seconds,
bracket_rel_width_rms, ...) with the arrays 'estimate', 'std_error', 'lower', 'upper' (the certified bracket of the
control variates and exact; empty otherwise) and, with a mean, 'mean'. The GIL is released.)doc");
  m.def("run_convergence", &run_convergence, "model"_a, py::kw_only(), "chains"_a = 2000, "sweeps"_a = 100,
        "every"_a = 1, "scan"_a = "random", "scheme"_a = "gibbs", "omega"_a = py::none(), "lambda_min"_a = py::none(),
        "lambda_max"_a = py::none(), "init"_a = "constant", "init_value"_a = 1.0, "init_scale"_a = 1.0, "seed"_a = 1,
        "threads"_a = 0, "full_max"_a = 2000, "control_variate"_a = false, "name"_a = "converge", "graph"_a = "",
        "progress"_a = py::none(), R"doc(
Primal against dual convergence on any model, as `dualgibbs converge` with its defaults: both samplers scored every
`every` sweeps against the exact Cov(X) (|V| <= full_max) or the exact marginal variances, with the split-half error
[eq:unbiased_error]. scan: 'random', 'permutation', 'fixed' or 'colored'; scheme ('gibbs', 'ssor', 'cheby-ssor') and
omega apply to both domains (each computes its own spectrum: lambda_min and lambda_max are refused, as by the
command). control_variate=True also scores the dual through the flow control variate. Returns the record of
`converge --json` (figure, title, parameters, rates, summary, notes, columns, timings_seconds, ...) with 'name',
'table' ({column: array}: sweep, Eb_primal, Eu_primal, Eb_dual, Eu_dual, ...) and 'extra_tables'. graph: the graph's
description in the record (default: the model's summary). progress(stage, fraction) is called from the calling
thread.)doc");
  m.def("bench", &bench, "model"_a, py::kw_only(), "domain"_a = "dual", "scan"_a = "random", "scheme"_a = "gibbs",
        "omega"_a = py::none(), "lambda_min"_a = py::none(), "lambda_max"_a = py::none(), "chains"_a = 0,
        "sweeps"_a = 0, "threads"_a = 1, "lockstep"_a = 16, "repeat"_a = 3, "seed"_a = 1, R"doc(
Sampler throughput of one configuration, as `dualgibbs bench --json` (the same keys): ns_per_update (per chain and
site update, the best of `repeat` runs), updates_per_second, cpu_ns_per_update, site_updates_per_iteration, domain,
scan, scheme, chains (0: 2 x lockstep x threads), sweeps (0: about 5e7 updates), threads, lockstep, widest_block,
load_average, cpu, ... The GIL is released.)doc");
  m.def("run_experiment", &run_experiment, "name"_a, py::kw_only(), "quick"_a = false, "seed"_a = 1, "threads"_a = 0,
        "chains"_a = 0, "sweeps"_a = 0, "as_published"_a = false, "init"_a = py::none(), "init_value"_a = py::none(),
        "init_scale"_a = py::none(), "progress"_a = py::none(), R"doc(
Run one of the paper's figures (see figures()) as `dualgibbs reproduce NAME` does, with its options (chains, sweeps:
0 = the figure's; as_published: the authors' published settings; init 'constant' or 'random' with init_value or
init_scale: the chains' start, None = the figure's). Returns the record of the figure's JSON sidecar (figure, title,
parameters, seed, threads, timings_seconds, summary, rates, notes, columns, ...) with 'name', 'table' ({column:
array}) and 'extra_tables' ({suffix: table}). progress(stage, fraction) is called from the calling thread.)doc");
}

}  // namespace dualgibbs::python
