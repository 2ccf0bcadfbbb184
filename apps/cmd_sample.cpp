// dualgibbs sample: runs an ensemble of Gibbs chains (api::sample()) and writes their states (draws) to a CSV or
// binary file (api/draws.hpp has the formats), with a JSON sidecar recording the seed, version and parameters.
//
// With --obs-file the primal draws are of the posterior N(mu, Q^-1); the dual draws stay the zero-mean fluctuation
// (x~ or y~) and the posterior mean mu is solved separately: summarised in the sidecar, written in full with
// --mean-output (CSV `node,mean`).
#include "cli.hpp"
#include "mpi_session.hpp"
#include "observations.hpp"
#include "output.hpp"

#include <dualgibbs/api/sample.hpp>
#include <dualgibbs/model/model.hpp>

#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace dualgibbs::cli {
namespace {

struct SampleCliOptions {
  api::SampleOptions run;  // everything that is not about files (the seed is --seed)
  unsigned threads = 0;
  bool noise_free = false;
  std::string output;
  std::string sidecar;  // empty: OUTPUT.json next to a regular file, none for standard output, a device or FIFO
  std::string format;   // csv | binary; default from the extension
  bool json = false;
  std::string mean_output;  // with --obs-file: CSV node,mean
};

std::string format_of(const SampleCliOptions& o) {
  if (!o.format.empty()) {
    if (o.format != "csv" && o.format != "binary")
      throw std::invalid_argument("sample: unknown --format '" + o.format + "' (expected 'csv' or 'binary')");
    return o.format;
  }
  const auto dot = o.output.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : o.output.substr(dot + 1);
  return ext == "bin" ? "binary" : "csv";
}

// The draws file, opened when the run starts (after every check and the posterior mean) and written to a temporary
// file renamed into place at the end, or directly to standard output or a device or FIFO (api/output_file.hpp): a
// failed or interrupted run leaves no partial file. A failed write (disk full) ends the run at its checkpoint.
class FileSink final : public api::DrawsSink {
 public:
  FileSink(std::string path, std::string format) : m_path(std::move(path)), m_format(std::move(format)) {}
  void begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) override {
    m_file.emplace(is_root() ? m_path : "/dev/null");  // under mpirun rank 0 alone writes (docs/mpi.md)
    if (m_format == "binary")
      m_writer = std::make_unique<api::BinaryDrawsWriter>(m_file->stream());
    else
      m_writer = std::make_unique<api::CsvDrawsWriter>(m_file->stream());
    m_writer->begin(dim, chains, checkpoints);
  }
  void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) override {
    m_writer->write(sweep, states);
    m_file->check();
  }
  AtomicOutput& file() { return *m_file; }

 private:
  std::string m_path, m_format;
  std::optional<AtomicOutput> m_file;
  std::unique_ptr<api::DrawsSink> m_writer;
};

// The destinations' checks; returns the sidecar's path (empty: none).
std::string check_destinations(const SampleCliOptions& so) {
  if (so.output.empty()) throw std::invalid_argument("sample: --output FILE is required");
  // The sidecar sits next to a file; standard output, a device or a FIFO has none unless --sidecar names one.
  const std::string sidecar = !so.sidecar.empty()                ? so.sidecar
                              : is_stream_destination(so.output) ? ""
                                                                 : sidecar_path(so.output);
  if (int(so.output == "-") + int(sidecar == "-") + int(so.json) > 1)
    throw std::invalid_argument(
        "sample: more than one of --output -, --sidecar - and --json would write to "
        "standard output");
  if (api::same_destination(sidecar, so.output))
    throw std::invalid_argument("sample: --sidecar and --output name the same file '" + sidecar + "'");
  if (so.run.init == "given")
    throw std::invalid_argument("sample: --init given is available through the library only (constant or random here)");
  return sidecar;
}

void check_mean_output(const SampleCliOptions& so, const Model& model, const std::string& sidecar) {
  if (!so.mean_output.empty() && !model.has_mean())
    throw std::invalid_argument("sample: --mean-output needs --obs-file (without observations the mean is zero)");
  if (api::same_destination(so.mean_output, so.output) || api::same_destination(so.mean_output, sidecar))
    throw std::invalid_argument("sample: --mean-output names the same file as --output or --sidecar");
  if (so.mean_output == "-" && (so.output == "-" || sidecar == "-" || so.json))
    throw std::invalid_argument("sample: --mean-output - and another output would both write to standard output");
}

// The chains on the model, or on the lattice given by its shape when it is set.
api::SampleResult run_chains(const Model* model, const std::optional<LatticeShape>& lattice, api::SampleOptions o,
                             FileSink& sink, const api::Execution& exec) {
  try {
    return lattice ? api::sample(*lattice, o, sink, exec) : api::sample(*model, o, sink, exec);
  } catch (const api::NumericalFailure& e) {
    throw std::runtime_error(std::string(e.what()) + "; nothing was written");
  }
}

int run_sample(const CommonOptions& common, const SampleCliOptions& so) {
  const std::string sidecar = check_destinations(so);
  const std::string format = format_of(so);
  api::SampleOptions o = so.run;
  o.seed = common.seed;
  o.noise = !so.noise_free;
  api::Execution exec;
  exec.threads = so.threads;
  exec.group = common.group;
  FileSink sink(so.output, format);
  // A lattice split over the ranks by its shape: no rank builds the whole graph (docs/mpi.md, section 9).
  const std::optional<LatticeShape> lattice = api::lattice_shape(common, o);
  std::optional<Model> model;
  if (lattice && !so.mean_output.empty())
    throw std::invalid_argument("sample: --mean-output needs --obs-file (without observations the mean is zero)");
  if (!lattice) {
    Index observed = 0;
    model.emplace(common.posterior_model(&observed));
    check_mean_output(so, *model, sidecar);
    o.observed_nodes = observed;
  }
  const api::SampleResult r = run_chains(model ? &*model : nullptr, lattice, o, sink, exec);

  nlohmann::json j = api::provenance("sample", common, exec);
  j.update(r.record);
  j["format"] = format;
  j["output"] = so.output;
  j["file"] = so.output;
  if (model && model->has_mean() && !so.mean_output.empty()) j["mean_output"] = so.mean_output;
  // Every file is complete and flushed before any is renamed into place: a failure (a full disk, a device that
  // refuses the sidecar) leaves none of them behind. The sidecar records the draws' digest, so that a reader can tell
  // them from another run's that replaced them (two runs writing the same names at once). Rank 0 alone writes.
  sink.file().flush();
  if (is_root()) j["data_digest"] = api::digest_text(sink.file().digest());
  std::optional<AtomicOutput> mean_file, side;
  if (!so.mean_output.empty() && is_root()) {
    mean_file.emplace(so.mean_output);
    mean_file->stream() << std::setprecision(17) << "node,mean\n";
    for (Index v = 0; v < model->num_nodes(); ++v) mean_file->stream() << v << ',' << r.mean.mean[v] << '\n';
  }
  if (!sidecar.empty() && is_root()) {
    side.emplace(sidecar);
    side->stream() << j.dump(2) << '\n';
  }
  for (auto* f : {&mean_file, &side})
    if (*f) (*f)->flush();
  sink.file().commit();
  for (auto* f : {&mean_file, &side})
    if (*f) (*f)->commit();
  if (so.json) {
    print_json(j);
  } else if (!common.quiet) {
    std::cerr << "dualgibbs sample: " << r.checkpoints << " checkpoint(s) of " << o.chains << " chains x " << r.dim
              << " values written to " << (so.output == "-" ? "standard output" : so.output) << " (" << format
              << "), parameters " << (sidecar.empty() ? "not written (no --sidecar)" : "in " + sidecar) << "; "
              << r.stats.seconds << " s, " << r.stats.ns_per_update << " ns per update\n";
  }
  return 0;
}

std::function<int()> setup_sample(CLI::App& app, CommonOptions& common) {
  app.description("run Gibbs chains and write their draws to a CSV or binary file (plus a JSON sidecar)");
  static SampleCliOptions opt;
  app.add_option("--domain", opt.run.domain, "primal (x over nodes) or dual (y~ over edges)")->capture_default_str();
  app.add_option("--scan", opt.run.scheme.scan,
                 "random (the paper's random sweep), permutation, fixed, or colored (greedy colour classes in\n"
                 "order, each class updated by --threads threads of one chain; chains run one after another)")
      ->capture_default_str();
  add_count(app, "--chains", opt.run.chains, "number of chains")->capture_default_str();
  add_count(app, "--sweeps", opt.run.sweeps, "sweeps per chain (a sweep = one update per coordinate on average)")
      ->capture_default_str();
  add_count(app, "--every", opt.run.every, "also write the draws every K sweeps (0: only after the last sweep)")
      ->capture_default_str();
  add_count(app, "--threads", opt.threads,
            "threads (0 = the cores this process may use); the output does not depend on it")
      ->capture_default_str();
  add_count(app, "--lockstep", opt.run.lockstep,
            "chains per shared-schedule block: 1, 2, 4, 8 or 16 (faster, but chains of a block are dependent;\n"
            "see docs/sampler.md)")
      ->capture_default_str();
  add_scheme_options(app, opt.run.scheme);
  app.add_option("--distribute", opt.run.distribute,
                 "under mpirun: chains (each rank a share of the chains, the whole graph on every rank) or graph\n"
                 "(every chain's graph cut over the ranks (--partition), each rank its part and a ghost layer;\n"
                 "with gibbs a cycle, torus or torus3 (and in the primal a path or grid) is never built whole;\n"
                 "--scan colored with --scheme gibbs, ssor or cheby-ssor, one thread per rank); the draws are the\n"
                 "same either way")
      ->capture_default_str();
  app.add_option(
         "--partition", opt.run.partition,
         "with --distribute graph: ranges (contiguous node ids: slabs of a lattice) or metis (METIS's\n"
         "k-way cut: fewer cut pairs, more deviates drawn per rank; docs/mpi.md); the draws do not depend on it")
      ->capture_default_str();
  app.add_option("--init", opt.run.init, "initial state: constant (every coordinate = --init-value) or random")
      ->capture_default_str();
  app.add_option("--init-value", opt.run.init_value, "the constant of --init constant")->capture_default_str();
  app.add_option("--init-scale", opt.run.init_scale, "--init random starts from N(0, K^2 diag(M)^-1)")
      ->capture_default_str();
  app.add_flag("--noise-free", opt.noise_free, "plain Gauss-Seidel (no noise): deterministic for a fixed scan");
  app.add_option("--draws", opt.run.draws, "dual domain: x (x~ = B y~ over nodes) or y (y~ over edges)")
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
  add_mean_options(app, opt.run.mean);
  return [&common]() { return run_sample(common, opt); };
}

const Registration reg{{"sample", setup_sample}};

}  // namespace
}  // namespace dualgibbs::cli
