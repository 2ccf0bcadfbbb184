// dualgibbs sample: runs an ensemble of Gibbs chains and writes their states (draws) to a CSV or binary file, with
// a JSON sidecar recording the seed, version and parameters.
//
// CSV: a header `sweep,chain,c0,c1,...` and one row per chain and written checkpoint.
// Binary (little-endian): "DGSAMPL1" (8 bytes), then uint64 dim, uint64 chains, uint64 checkpoints; then per
// checkpoint uint64 sweep followed by chains x dim float64, chain after chain.
//
// With --obs-file the primal draws are of the posterior N(mu, Q^-1); the dual draws stay the zero-mean fluctuation
// (x~ or y~) and the posterior mean mu is solved separately: summarised in the sidecar, written in full with
// --mean-output (CSV `node,mean`).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "observations.hpp"
#include "output.hpp"

#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <stdexcept>
#include <string>

namespace dualgibbs::cli {
namespace {

struct SampleOptions {
  std::string domain = "dual";
  std::string scan = "random";
  std::size_t chains = 10;
  std::size_t sweeps = 100;
  std::size_t every = 0;  // 0: only the last sweep
  unsigned threads = 0;
  std::size_t lockstep = 1;
  std::string init = "constant";
  double init_value = 1.0;
  double init_scale = 1.0;
  bool noise_free = false;
  std::string draws = "x";  // dual: "x" (x~ = B y~, |V|) or "y" (y~, |E|)
  std::string output;
  std::string sidecar;  // empty: OUTPUT.json next to a regular file, none for standard output, a device or FIFO
  std::string format;   // csv | binary; default from the extension
  bool json = false;
  std::string mean_output;  // with --obs-file: CSV node,mean
  MeanCliOptions mean;
  SchemeCli scheme;
};

std::string format_of(const SampleOptions& o) {
  if (!o.format.empty()) {
    if (o.format != "csv" && o.format != "binary")
      throw std::invalid_argument("sample: unknown --format '" + o.format + "' (expected 'csv' or 'binary')");
    return o.format;
  }
  const auto dot = o.output.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : o.output.substr(dot + 1);
  return ext == "bin" ? "binary" : "csv";
}

void put_u64(std::ostream& out, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  out.write(reinterpret_cast<const char*>(b), 8);
}

void put_f64(std::ostream& out, double x) {
  std::uint64_t v;
  static_assert(sizeof v == sizeof x, "double is 64 bits");
  std::memcpy(&v, &x, sizeof v);
  put_u64(out, v);
}

int run_sample(const CommonOptions& common, const SampleOptions& so) {
  if (so.output.empty()) throw std::invalid_argument("sample: --output FILE is required");
  // The sidecar sits next to a file; standard output, a device or a FIFO has none unless --sidecar names one.
  const std::string sidecar = !so.sidecar.empty()                ? so.sidecar
                              : is_stream_destination(so.output) ? ""
                                                                 : sidecar_path(so.output);
  if (int(so.output == "-") + int(sidecar == "-") + int(so.json) > 1)
    throw std::invalid_argument(
        "sample: more than one of --output -, --sidecar - and --json would write to "
        "standard output");
  if (!sidecar.empty() && sidecar == so.output)
    throw std::invalid_argument("sample: --sidecar and --output name the same file '" + sidecar + "'");
  const Domain domain = parse_domain(so.domain);
  EnsembleOptions o;
  o.chains = so.chains;
  o.sweeps = so.sweeps;
  o.scan = parse_scan(so.scan);
  o.seed = common.seed;
  o.threads = so.threads;
  o.lockstep = so.lockstep;
  o.init = parse_initial_state(so.init);
  if (o.init == InitialState::Given)
    throw std::invalid_argument("sample: --init given is available through the library only (constant or random here)");
  o.init_value = so.init_value;
  if (so.init_scale != 1.0 && o.init != InitialState::Random)
    throw std::invalid_argument("sample: --init-scale applies only with --init random");
  o.init_scale = so.init_scale;
  o.noise = !so.noise_free;
  if (so.draws != "x" && so.draws != "y")
    throw std::invalid_argument("sample: unknown --draws '" + so.draws + "' (expected 'x' or 'y')");
  if (domain == Domain::Primal && so.draws == "y")
    throw std::invalid_argument("sample: --draws y (the edge variables y~) applies to the dual domain only");
  o.observe_edges = domain == Domain::Dual && so.draws == "y";
  o.checkpoint_every = so.every == 0 ? std::max<std::size_t>(1, so.sweeps) : so.every;
  const std::string format = format_of(so);
  Index observed = 0;
  const Model model = common.posterior_model(&observed);
  if (!so.mean_output.empty() && !model.has_mean())
    throw std::invalid_argument("sample: --mean-output needs --obs-file (without observations the mean is zero)");
  if (!so.mean_output.empty() && (so.mean_output == so.output || so.mean_output == sidecar))
    throw std::invalid_argument("sample: --mean-output names the same file as --output or --sidecar");
  if (so.mean_output == "-" && (so.output == "-" || sidecar == "-" || so.json))
    throw std::invalid_argument("sample: --mean-output - and another output would both write to standard output");
  // The posterior mean before the run, so a solver failure leaves no file behind.
  PosteriorMean pm;
  if (model.has_mean()) pm = solve_posterior_mean(model, so.mean);
  const SchemeOptions scheme = resolve_scheme(so.scheme, so.scan, so.threads, model, domain, "sample");

  // The binary header comes first, so its counts are known before the run (no seeking back: the output may be a
  // pipe). Checkpoints are at sweeps k, 2k, ..., and the last sweep (only sweep 0 if there are no sweeps).
  const Eigen::Index dim = o.observe_edges ? model.num_edges() : model.num_nodes();
  const std::uint64_t checkpoints =
      so.sweeps == 0 || so.every == 0 ? 1 : so.sweeps / so.every + (so.sweeps % so.every != 0 ? 1 : 0);

  // The draws and the sidecar go to temporary files renamed into place at the end, or directly to standard output
  // or a device or FIFO (apps/output_file.hpp): a failed or interrupted run leaves no partial file.
  AtomicOutput file(is_root() ? so.output : "/dev/null");  // under mpirun rank 0 alone writes (docs/mpi.md)
  std::ostream& out = file.stream();
  std::uint64_t written = 0;
  if (format == "binary") {
    out.write("DGSAMPL1", 8);
    put_u64(out, static_cast<std::uint64_t>(dim));
    put_u64(out, so.chains);
    put_u64(out, checkpoints);
  } else {
    out << std::setprecision(17);
  }
  const EnsembleStats st = run_ensemble(
      model, domain, o,
      [&](const Checkpoint& cp) {
        if (cp.sweep == 0 && o.sweeps > 0) return;  // the initial state: not a draw
        if (so.every == 0 && cp.sweep != o.sweeps) return;
        if (cp.states.rows() != dim) throw std::logic_error("sample: a checkpoint of unexpected dimension");
        if (!cp.states.allFinite())
          throw std::runtime_error("sample: a chain reached a non-finite value at sweep " + std::to_string(cp.sweep) +
                                   " (the model is numerically degenerate); nothing was written");
        if (format == "binary") {
          put_u64(out, cp.sweep);
          for (Eigen::Index c = 0; c < cp.states.cols(); ++c)
            for (Eigen::Index i = 0; i < dim; ++i) put_f64(out, cp.states(i, c));
        } else {
          if (written == 0) {
            out << "sweep,chain";
            for (Eigen::Index i = 0; i < dim; ++i) out << ",c" << i;
            out << '\n';
          }
          for (Eigen::Index c = 0; c < cp.states.cols(); ++c) {
            out << cp.sweep << ',' << c;
            for (Eigen::Index i = 0; i < dim; ++i) out << ',' << cp.states(i, c);
            out << '\n';
          }
        }
        ++written;
        file.check();  // a failed write (disk full) ends the run now
      },
      scheme);
  if (written != checkpoints)
    throw std::logic_error("sample: " + std::to_string(written) + " checkpoints written, " +
                           std::to_string(checkpoints) + " announced");

  nlohmann::json j = sidecar_base("sample", common, o.threads);
  j["nodes"] = model.num_nodes();
  j["edges"] = model.num_edges();
  j["domain"] = to_string(domain);
  j["draws"] = domain == Domain::Dual ? (so.draws == "y" ? "y_tilde" : "x_tilde") : "x";
  j["dim"] = dim;
  j["scan"] = to_string(o.scan);
  j["chains"] = o.chains;
  j["sweeps"] = o.sweeps;
  j["every"] = so.every;
  j["checkpoints"] = written;
  j["lockstep"] = o.lockstep;
  j["init"] = to_string(o.init);
  j["init_value"] = o.init_value;
  j["init_scale"] = o.init_scale;
  j["noise"] = o.noise;
  add_scheme_json(j, scheme);
  j["format"] = format;
  j["output"] = so.output;
  j["seconds"] = st.seconds;
  j["ns_per_update"] = st.ns_per_update;
  j["file"] = so.output;
  if (model.has_mean()) {
    // primal draws are of N(mu, Q^-1); dual draws are of the zero-mean fluctuation (add mu for the posterior)
    j["draws_mean"] = domain == Domain::Primal ? "posterior" : "zero";
    record_posterior_mean(j, pm, observed);
    if (!so.mean_output.empty()) j["mean_output"] = so.mean_output;
  }
  if (!so.mean_output.empty() && is_root()) {  // rank 0 alone writes
    write_atomically(so.mean_output, [&](std::ostream& mo) {
      mo << std::setprecision(17) << "node,mean\n";
      for (Index v = 0; v < model.num_nodes(); ++v) mo << v << ',' << pm.mean[v] << '\n';
    });
  }
  if (sidecar.empty() || !is_root()) {
    file.commit();
  } else {
    AtomicOutput side(sidecar);
    side.stream() << j.dump(2) << '\n';
    file.commit();
    side.commit();
  }
  if (so.json) {
    print_json(j);
  } else if (!common.quiet) {
    std::cerr << "dualgibbs sample: " << written << " checkpoint(s) of " << o.chains << " chains x " << dim
              << " values written to " << (so.output == "-" ? "standard output" : so.output) << " (" << format
              << "), parameters " << (sidecar.empty() ? "not written (no --sidecar)" : "in " + sidecar) << "; "
              << st.seconds << " s, " << st.ns_per_update << " ns per update\n";
  }
  return 0;
}

std::function<int()> setup_sample(CLI::App& app, CommonOptions& common) {
  app.description("run Gibbs chains and write their draws to a CSV or binary file (plus a JSON sidecar)");
  static SampleOptions opt;
  app.add_option("--domain", opt.domain, "primal (x over nodes) or dual (y~ over edges)")->capture_default_str();
  app.add_option("--scan", opt.scan,
                 "random (the paper's random sweep), permutation, fixed, or colored (greedy colour classes in\n"
                 "order, each class updated by --threads threads of one chain; chains run one after another)")
      ->capture_default_str();
  add_count(app, "--chains", opt.chains, "number of chains")->capture_default_str();
  add_count(app, "--sweeps", opt.sweeps, "sweeps per chain (a sweep = one update per coordinate on average)")
      ->capture_default_str();
  add_count(app, "--every", opt.every, "also write the draws every K sweeps (default: only after the last sweep)");
  add_count(app, "--threads", opt.threads,
            "threads (0 = the cores this process may use); the output does not depend on it")
      ->capture_default_str();
  add_count(app, "--lockstep", opt.lockstep,
            "chains per shared-schedule block: 1, 2, 4, 8 or 16 (faster, but chains of a block are dependent;\n"
            "see docs/sampler.md)")
      ->capture_default_str();
  add_scheme_options(app, opt.scheme);
  app.add_option("--init", opt.init, "initial state: constant (every coordinate = --init-value) or random")
      ->capture_default_str();
  app.add_option("--init-value", opt.init_value, "the constant of --init constant")->capture_default_str();
  app.add_option("--init-scale", opt.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)")
      ->capture_default_str();
  app.add_flag("--noise-free", opt.noise_free, "plain Gauss-Seidel (no noise): deterministic for a fixed scan");
  app.add_option("--draws", opt.draws, "dual domain: x (x~ = B y~ over nodes) or y (y~ over edges)")
      ->capture_default_str();
  app.add_option("--output,-o", opt.output,
                 "output file (written to a temporary file, renamed when complete; parameters in FILE.json);\n"
                 "'-' = standard output; a device or FIFO (/dev/null, a named pipe) is written directly.\n"
                 "A symbolic link to a file is refused (docs/hardening.md, section 3)");
  app.add_option("--sidecar", opt.sidecar,
                 "write the JSON sidecar here (default: FILE.json; none when --output is '-', a device or FIFO)");
  app.add_option("--format", opt.format, "csv or binary (default: binary for *.bin, csv otherwise)");
  app.add_flag("--json", opt.json, "print the run's parameters and timing as JSON on stdout");
  app.add_option("--mean-output", opt.mean_output,
                 "with --obs-file: write the posterior mean mu to this CSV file (node,mean); primal draws are of\n"
                 "N(mu, Q^-1), dual draws stay the zero-mean fluctuation");
  add_mean_options(app, opt.mean);
  return [&common]() { return run_sample(common, opt); };
}

const Registration reg{{"sample", setup_sample}};

}  // namespace
}  // namespace dualgibbs::cli
