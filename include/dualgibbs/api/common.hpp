#pragma once
/// \file common.hpp
/// The service layer's shared pieces: where a use case's model comes from (ModelSource), how it runs (Execution)
/// and what it returns (a Record beside typed results).
///
/// The service layer (`dualgibbs/api/`) has one function per use case: sample, exact, validate, marginals,
/// converge, info, bench, reproduce. Each owns its checks, its defaults and its truth recipe, and returns one
/// result: typed fields (vectors, tables) and a Record of the report's scalar fields. The command (apps/) and the
/// Python module (python/) only map their arguments onto the options and print or convert the result, so both
/// front ends run the same code with the same defaults and report the same fields.
///
/// \code
/// dualgibbs::api::ModelSource source;
/// source.graph = "torus:10";
/// const dualgibbs::Model model = dualgibbs::api::load_model(source);
/// \endcode

#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace dualgibbs::api {

/// A use case's report: one JSON object of named fields (keys in sorted order). The command writes it with one
/// writer (write_record(), or `dump()` for `--json`); the Python module converts it to a dict with one function.
/// Non-finite numbers are written as JSON null.
using Record = nlohmann::json;

/// The model of a use case as the command describes it: a graph spec with the standard deviations s and sigma,
/// optionally per-node s (node_file) and observations (obs_file).
struct ModelSource {
  std::string graph = "torus:10";        ///< graph spec (parse_graph_spec())
  double s = 1.0;                        ///< node standard deviation, for nodes without a value in node_file
  double sigma = 0.1;                    ///< edge standard deviation, for edges without their own value
  std::optional<std::string> node_file;  ///< `v s_v` lines
  std::optional<std::string> obs_file;   ///< `v z_v` observations: the posterior model
  std::uint64_t seed = 1;                ///< seed of random graph families given without one
  /// A Matrix Market precision matrix Q (Model::from_precision()), in place of graph, s, sigma and node_file.
  std::optional<std::string> precision_file;
  /// `v h_v` lines: the canonical vector h of N(Q^-1 h, Q^-1) (nodes without a line get 0); not with obs_file.
  std::optional<std::string> canonical_file;
};

/// The graph spec a source stands for: its parsed `graph`, or for a precision file a `file` spec whose text is
/// `precision:PATH` (no closed form applies to it).
/// \param source the model's source
/// \return the spec
/// \throws std::invalid_argument for a bad graph spec.
DUALGIBBS_EXPORT GraphSpec source_spec(const ModelSource& source);

/// The source's name in records: its graph spec as written, or `precision:PATH`.
/// \param source the model's source
/// \return the name
DUALGIBBS_EXPORT std::string source_label(const ModelSource& source);

/// The source's model as command-line options: `--graph G --s S --sigma SIGMA` or `--precision FILE`.
/// \param source the model's source
/// \return the options' text
DUALGIBBS_EXPORT std::string model_arguments(const ModelSource& source);

/// A loaded model with what was read on the way.
struct LoadedModel {
  Model model;         ///< the prior, or the posterior when the source has observations and they were asked for
  GraphSpec spec;      ///< the parsed graph spec (closed forms use the family)
  Index observed = 0;  ///< nodes with a line in obs_file (0 without one)
};

/// Loads the model of `source`. With `observations` true and an obs_file, the observations are set
/// (Model::set_observations(); nodes without a line observe 0); otherwise the zero-mean prior.
/// \param source the graph spec and parameters
/// \param observations whether obs_file is read
/// \param group the MPI ranks that each load the model (agree_on_model() checks that they loaded the same one)
/// \return the model, its parsed spec and the observed-node count
/// \throws std::invalid_argument for a bad spec, bad parameters or a malformed file, or ranks that loaded different
///         models.
DUALGIBBS_EXPORT LoadedModel load_model(const ModelSource& source, bool observations = true,
                                        ChainGroup* group = nullptr);

/// A 64-bit digest (FNV-1a) of everything that defines a model: the node count, the oriented edges, s_v^2, sigma_e^2
/// and the canonical vector (the mean's data), bit for bit. Two models with equal digests are the same model (up to a
/// collision, about 2^-64).
/// \param model the model
/// \return the digest
DUALGIBBS_EXPORT std::uint64_t model_digest(const Model& model) noexcept;

/// Collective over `group` (nothing without one): every member checks that all members loaded the same model
/// (model_digest()), before any collective whose sizes depend on it.
/// \param model this member's model
/// \param group the members (null or a single member: nothing to check)
/// \throws std::invalid_argument on every member if a member's model differs from member 0's, naming the first such
///         member (a node-local or stale input file); whatever ChainGroup::all_gather() throws.
DUALGIBBS_EXPORT void agree_on_model(const Model& model, ChainGroup* group);

/// How a use case runs: threads, the chain group of MPI ranks, progress. The use case passes its threads and group on
/// to every library call it makes (EnsembleOptions, the experiments' options, the estimators: core/execution.hpp);
/// nothing is installed anywhere.
struct Execution {
  /// Threads (0 = available_threads(group)). The numbers never depend on it.
  unsigned threads = 0;
  /// The processes sharing the chains (MPI ranks), or null for one process. With a group of two or more a use case
  /// is collective, and its results are bitwise those of one process.
  ChainGroup* group = nullptr;
  /// Progress of long runs: stage and fraction in [0, 1] (may be empty).
  std::function<void(const std::string& stage, double fraction)> progress;

  /// The library's view of it: the threads and the group (core/execution.hpp).
  /// \return {threads, group}
  dualgibbs::Execution core() const noexcept { return dualgibbs::Execution{threads, group}; }
};

/// The thread count `execution.threads` stands for (0: available_threads() of its group).
/// \param execution the use case's threads and group
/// \return the thread count, >= 1
DUALGIBBS_EXPORT unsigned resolved_threads(const Execution& execution) noexcept;

/// Provenance fields of every result record: command, version, seed, threads (resolved), mpi_ranks,
/// hardware_threads, graph, s, sigma, node_file and obs_file (when given).
/// \param command the use case's name ("sample", "exact", ...)
/// \param source the model's description
/// \param execution how it ran
/// \return the provenance fields
DUALGIBBS_EXPORT Record provenance(const std::string& command, const ModelSource& source, const Execution& execution);

/// A numerical failure found by a use case itself (a chain that reached a non-finite value, a matrix numerically
/// singular although its factorization succeeded): exit 1 in the command, dualgibbs.NumericalError in Python.
class DUALGIBBS_EXPORT NumericalFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `v` as a record value: the number, or null when it is not finite.
/// \param v the number
/// \return `v` or null
DUALGIBBS_EXPORT Record number(double v);

}  // namespace dualgibbs::api
