// The validate use case (api/validate.hpp).
#include <dualgibbs/api/output_file.hpp>
#include <dualgibbs/api/validate.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace dualgibbs::api {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// CPU seconds of the whole process (every thread) since the start.
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Draws per block: up to 2^22 values (32 MB), at least a checkpoint's minimum.
std::size_t block_draws(Eigen::Index dim) {
  return std::max<std::size_t>(kMinValidationDraws,
                               (std::size_t{1} << 22) / static_cast<std::size_t>(std::max<Eigen::Index>(1, dim)));
}

// Feeds one checkpoint of n draws to the validator in blocks: next(k, count) returns draws k .. k + count - 1 as
// dim x count contiguous values (column-major). The time of next() is reading, the validator's is validating.
template <class Next>
void feed_checkpoint(DrawValidator& validator, std::size_t n, double sweep, std::vector<std::size_t> offsets,
                     Eigen::Index dim, ValidationTimings& time, Next&& next) {
  validator.begin_checkpoint(n, sweep, std::move(offsets));
  const std::size_t block = block_draws(dim);
  for (std::size_t k = 0; k < n; k += block) {
    const std::size_t count = std::min(block, n - k);
    const auto t0 = Clock::now();
    const double c0 = cpu_now();
    const double* draws = next(k, count);
    const auto t1 = Clock::now();
    const double c1 = cpu_now();
    validator.add(Eigen::Map<const Eigen::MatrixXd>(draws, dim, static_cast<Eigen::Index>(count)));
    time.read += std::chrono::duration<double>(t1 - t0).count();
    time.read_cpu += c1 - c0;
    time.validate += since(t1);
    time.validate_cpu += cpu_now() - c1;
  }
  const auto t0 = Clock::now();
  const double c0 = cpu_now();
  validator.end_checkpoint();
  time.validate += since(t0);
  time.validate_cpu += cpu_now() - c0;
}

ValidationReport finish(DrawValidator& validator, ValidationTimings& time) {
  const auto t0 = Clock::now();
  const double c0 = cpu_now();
  ValidationReport r = validator.finish();
  time.validate += since(t0);
  time.validate_cpu += cpu_now() - c0;
  return r;
}

DrawValidator make_validator(const Model& model, DrawKind kind, const ValidationOptions& o, ValidationTimings& time) {
  const auto t0 = Clock::now();
  ExactTruth truth = validation_truth(model, kind);
  time.truth = since(t0);
  ValidateOptions vo;
  vo.alpha = o.alpha;
  vo.batches = o.batches;
  vo.worst = o.worst;
  return DrawValidator(model, kind, std::move(truth), vo);
}

Record checkpoint_record(const CheckpointValidation& c) {
  Record x;
  x["sweep"] = number(c.sweep);
  x["draws"] = c.draws;
  x["chains"] = c.chains;
  x["sequential"] = c.sequential;
  if (c.sequential) {
    x["batches"] = c.batches;
    x["batch_length"] = c.batch_length;
    x["ess_min"] = number(c.ess_min);
    x["ess_min_index"] = c.ess_min_index;
    x["ess_median"] = number(c.ess_median);
  }
  auto z = [](const ZSummary& s) { return Record{{"max_abs", s.max_abs}, {"rms", s.rms}, {"argmax", s.argmax}}; };
  x["mean_z"] = z(c.mean);
  x["variance_z"] = z(c.variance);
  if (c.edge_z.size()) {
    x["edge_z"] = z(c.edge);
    x["edge_covariance_error_max"] = c.edge_covariance_error_max;
    x["edge_covariance_error_rms"] = c.edge_covariance_error_rms;
  }
  x["global_statistic"] = c.global_statistic;
  x["global_se"] = c.global_se;
  x["global_z"] = c.global_z;
  x["Eu"] = c.error.Eu;
  x["Eu_se"] = c.error.Eu_se;
  x["Eb"] = c.error.Eb;
  x["Eb_floor"] = c.error.Eb_floor;
  x["tests"] = c.tests;
  x["min_p"] = c.min_p;
  x["consistent"] = c.consistent;
  return x;
}

Record report_record(const ValidationResult& v, const Model& m, const ValidationOptions& o) {
  const ValidationReport& r = v.report;
  Record j;
  j["command"] = "validate";
  j["format"] = v.format;
  j["layout"] = v.layout;
  j["domain"] = to_string(r.kind);
  if (!o.graph.empty()) j["graph"] = o.graph;
  j["nodes"] = m.num_nodes();
  j["edges"] = m.num_edges();
  j["dimension"] = v.dimension;
  j["draws"] = v.rows;
  j["alpha"] = r.alpha;
  j["tests"] = r.tests;
  j["p_threshold"] = r.p_threshold;
  j["z_threshold"] = r.z_threshold;
  j["consistent"] = r.consistent;
  j["method"] = r.method;
  j["notes"] = r.notes;
  Record cps = Record::array();
  for (const auto& c : r.checkpoints) cps.push_back(checkpoint_record(c));
  j["checkpoints"] = cps;
  Record worst = Record::array();
  for (const auto& w : r.worst)
    worst.push_back({{"checkpoint", w.checkpoint},
                     {"sweep", number(w.sweep)},
                     {"test", to_string(w.test)},
                     {"index", w.index},
                     {"where", offender_location(w, m, r.kind)},
                     {"z", w.z},
                     {"p", w.p},
                     {"estimate", w.estimate},
                     {"exact", w.exact}});
  j["worst"] = worst;
  j["truth_seconds"] = v.timings.truth;
  j["read_seconds"] = v.timings.read;
  j["read_cpu_seconds"] = v.timings.read_cpu;
  j["validate_seconds"] = v.timings.validate;
  j["validate_cpu_seconds"] = v.timings.validate_cpu;
  return j;
}

}  // namespace

DrawKind validation_kind(const ValidationOptions& o) {
  if (o.domain.empty()) throw std::invalid_argument("validate: --domain primal|dual-y|dual-x is required");
  const DrawKind kind = parse_draw_kind(o.domain);
  (void)parse_draw_layout(o.layout);
  if (!(o.alpha > 0 && o.alpha < 1))
    throw std::invalid_argument("validate: --alpha must be in (0, 1), got " + std::to_string(o.alpha));
  return kind;
}

ExactTruth validation_truth(const Model& m, DrawKind kind) {
  if (kind == DrawKind::DualEdges) {
    if (m.num_edges() == 0) throw std::invalid_argument("validate: --domain dual-y needs a graph with edges");
    ExactTruth t;
    t.variance = marginal_variances(m, Domain::Dual);
    return t;
  }
  const SparseMatrix q = m.primal_precision();
  const CholeskyFactor f(q);
  ExactTruth primal = node_truth_from_selected_inverse(m, f.selected_inverse(q));
  if (!primal.variance.allFinite() || !(primal.variance.array() > 0).all())
    throw NumericalFailure(
        "validate: Q is numerically singular for these parameters (a marginal variance is not "
        "finite and positive)");
  if (kind != DrawKind::Primal) return dual_node_truth_from_primal(m, primal);  // the zero-mean fluctuation
  // With observations the primal draws are of N(mu, Q^-1): the known mean mu = Q^-1 D_s^-1 z from the same factor.
  if (m.has_mean()) primal.mean = posterior_mean(m, f);
  return primal;
}

namespace {
// The sidecar `sample` wrote next to FILE (FILE.json), if any, must agree with the domain and describe these draws,
// and draws of a posterior need a model with observations.
void check_sidecar(const std::string& path, DrawKind kind, bool has_obs) {
  std::ifstream in(path + ".json");
  if (!in) return;
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception&) {
    return;  // not sample's sidecar: nothing to check
  }
  if (!j.is_object() || !j.contains("draws") || !j["draws"].is_string()) return;
  const std::string d = j["draws"];
  const char* expected = d == "x" ? "primal" : d == "x_tilde" ? "dual-x" : d == "y_tilde" ? "dual-y" : nullptr;
  if (expected && std::string(expected) != to_string(kind))
    throw std::invalid_argument("validate: --domain " + std::string(to_string(kind)) + ", but " + (path + ".json") +
                                " says the draws are '" + d + "' (--domain " + expected + ")");
  // The sidecar's digest of its draws: a pair written by two runs at once (the draws of one, the sidecar of the
  // other) is refused rather than validated against the wrong description. A pipe is not read twice.
  struct stat st {};
  if (j.contains("data_digest") && j["data_digest"].is_string() && ::stat(path.c_str(), &st) == 0 &&
      S_ISREG(st.st_mode) && j["data_digest"].get<std::string>() != digest_text(file_digest(path)))
    throw std::invalid_argument("validate: " + (path + ".json") + " describes other draws than '" + path +
                                "' (their digests differ: another run replaced one of the two)");
  if (!has_obs && j.contains("draws_mean") && j["draws_mean"] == "posterior")
    throw std::invalid_argument("validate: " + (path + ".json") +
                                " says the draws are of a posterior (sample --obs-file): give the same --obs-file");
}
}  // namespace

ValidationResult validate(const Model& model, DrawsFile& file, const std::string& name,
                          const ValidationOptions& options) {
  const DrawKind kind = validation_kind(options);
  check_sidecar(name, kind, model.has_mean());
  if (file.dimension != draw_dimension(model, kind))
    throw std::invalid_argument(
        "validate: the draws have " + std::to_string(file.dimension) + " coordinates, but " +
        std::string(to_string(kind)) + " draws of this model have " + std::to_string(draw_dimension(model, kind)) +
        (is_node_kind(kind) ? " (one per node)" : " (one per edge)") + ": wrong --domain or --graph?");
  ValidationResult v;
  v.format = file.format;
  v.rows = file.rows;
  v.dimension = file.dimension;
  const std::vector<PlannedCheckpoint> plan = file.plan(parse_draw_layout(options.layout), v.layout);
  DrawValidator validator = make_validator(model, kind, options, v.timings);
  Eigen::MatrixXd buffer;
  for (const PlannedCheckpoint& cp : plan)
    feed_checkpoint(validator, cp.rows.size(), cp.sweep, cp.chain_offsets, v.dimension, v.timings,
                    [&](std::size_t k, std::size_t count) {
                      file.read(cp.rows.data() + k, count, buffer);
                      return buffer.data();
                    });
  v.report = finish(validator, v.timings);
  v.record = report_record(v, model, options);
  v.record["draws_file"] = name;
  return v;
}

ValidationResult validate(const Model& model, const std::vector<Eigen::MatrixXd>& checkpoints,
                          const std::vector<double>& sweeps, const ValidationOptions& options) {
  const DrawKind kind = validation_kind(options);
  if (!sweeps.empty() && sweeps.size() != checkpoints.size())
    throw std::invalid_argument("validate: " + std::to_string(sweeps.size()) + " sweeps given for " +
                                std::to_string(checkpoints.size()) + " checkpoints");
  ValidationResult v;
  v.format = "array";
  v.dimension = checkpoints.empty() ? draw_dimension(model, kind) : checkpoints.front().rows();
  v.layout = std::to_string(checkpoints.size()) + " checkpoint(s) of independent draws (one per chain)";
  DrawValidator validator = make_validator(model, kind, options, v.timings);
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    const Eigen::MatrixXd& c = checkpoints[k];
    v.rows += static_cast<std::size_t>(c.cols());
    const double sweep = sweeps.empty() ? std::numeric_limits<double>::quiet_NaN() : sweeps[k];
    feed_checkpoint(
        validator, static_cast<std::size_t>(c.cols()), sweep, {}, c.rows(), v.timings,
        [&](std::size_t first, std::size_t) { return c.data() + first * static_cast<std::size_t>(c.rows()); });
  }
  v.report = finish(validator, v.timings);
  v.record = report_record(v, model, options);
  return v;
}

std::string offender_location(const ValidationOffender& o, const Model& m, DrawKind kind) {
  std::ostringstream os;
  if (o.test == ValidationTest::Global) return "all coordinates";
  if (o.test == ValidationTest::EdgeDifference) {
    const Edge& e = m.graph().edge(o.index);
    os << "edge " << o.index << " (" << e.head << ", " << e.tail << ")";
  } else {
    os << (is_node_kind(kind) ? "node " : "edge ") << o.index;
  }
  return os.str();
}

}  // namespace dualgibbs::api
