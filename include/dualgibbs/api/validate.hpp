#pragma once
/// \file validate.hpp
/// The validate use case: anyone's draws of x (primal), y~ or x~ = B y~ (dual) checked against the exact truth from a
/// sparse Cholesky factorization (estimation/validate.hpp has the tests and the verdict), with the report record
/// `dualgibbs validate --json` prints. Two ways in: a draws file (api/draws.hpp), streamed block by block, or
/// checkpoints in memory; both feed the same validator the same blocks, so the same draws give the same report.
///
/// \code
/// dualgibbs::api::ValidationOptions o;
/// o.domain = "primal";
/// dualgibbs::api::DrawsFile file = dualgibbs::api::open_draws_file("draws.csv");
/// const dualgibbs::api::ValidationResult r = dualgibbs::api::validate(model, file, "draws.csv", o);
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/draws.hpp>
#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/export.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace dualgibbs::api {

/// The options of `dualgibbs validate` that are not about files, with its defaults.
struct ValidationOptions {
  std::string domain;           ///< primal (x), dual-y (y~) or dual-x (x~ = B y~); required
  std::string layout = "auto";  ///< a file's grouping: auto, independent or chain (parse_draw_layout())
  double alpha = 1e-3;          ///< false-alarm probability of the whole report, in (0, 1)
  std::size_t batches = 0;      ///< batch count for successive states (0: automatic)
  std::size_t worst = 10;       ///< how many of the worst tests the report names
  std::string graph;            ///< the model's graph spec, for the report (empty: not recorded)
};

/// Where the time went (wall and CPU seconds of the process).
struct ValidationTimings {
  double truth = 0;         ///< the exact truth
  double read = 0;          ///< reading the draws (0 in memory)
  double read_cpu = 0;      ///< CPU seconds of reading
  double validate = 0;      ///< the validator
  double validate_cpu = 0;  ///< CPU seconds of the validator
};

/// A validation's outcome.
struct ValidationResult {
  ValidationReport report;     ///< the tests, per checkpoint, and the verdict
  std::string format;          ///< "csv", "binary", "npy" (a file) or "array" (in memory)
  std::string layout;          ///< how the draws were grouped, in words
  std::size_t rows = 0;        ///< draws read in all
  Eigen::Index dimension = 0;  ///< coordinates per draw
  ValidationTimings timings;   ///< where the time went
  /// The report: command, draws_file (a file), format, layout, domain, graph (when given), nodes, edges, dimension,
  /// draws, alpha, tests, p_threshold, z_threshold, consistent, method, notes, checkpoints (per checkpoint: sweep,
  /// draws, chains, sequential, the z summaries mean_z, variance_z, edge_z, the global test, Eu, Eu_se, Eb, Eb_floor,
  /// tests, min_p, consistent), worst (the smallest p-values with where they are), and the timings truth_seconds,
  /// read_seconds, read_cpu_seconds, validate_seconds, validate_cpu_seconds.
  Record record;
};

/// Checks the options (domain, layout, alpha) and returns the kind of draws they name.
/// \param options the options
/// \return the kind of draws
/// \throws std::invalid_argument for a missing or unknown domain, an unknown layout or alpha outside (0, 1).
DUALGIBBS_EXPORT DrawKind validation_kind(const ValidationOptions& options);

/// The exact truth of draws of `kind`: Q^-1 on Q's pattern (node variances and every edge's covariance) for x, with
/// the posterior mean mu = Q^-1 h from the same factor when the model has a mean (primal draws are then of
/// N(mu, Q^-1)); the same through Woodbury for x~ (the zero-mean fluctuation); diag(R^-1) for y~.
/// \param model the model
/// \param kind what the draws are
/// \return the truth the draws are checked against
/// \throws std::invalid_argument for y~ of a graph without edges; NumericalFailure when Q is numerically singular;
///         the factorization's exceptions.
DUALGIBBS_EXPORT ExactTruth validation_truth(const Model& model, DrawKind kind);

/// Validates a draws file, streamed: blocks of up to 2^22 values (32 MB) are read and fed to the validator, so the
/// draws are never all in memory. The sidecar `sample` writes next to the file (NAME.json), if there is one, must
/// agree: the same domain, these very draws (its data_digest), and a model with observations for draws of a
/// posterior.
/// \param model the model the draws should be of
/// \param file the opened file
/// \param name the file's path, for the report and for its sidecar NAME.json
/// \param options the options
/// \return the report, its record and timings
/// \throws std::invalid_argument for bad options, a sidecar that disagrees (another domain, other draws, a posterior
///         without observations), draws of another dimension than the domain's, a bad or unreadable file and the
///         validator's checks; as validation_truth().
DUALGIBBS_EXPORT ValidationResult validate(const Model& model, DrawsFile& file, const std::string& name,
                                           const ValidationOptions& options);

/// Validates checkpoints in memory, each one of independent draws (one per chain; the layout is ignored).
/// \param model the model the draws should be of
/// \param checkpoints per checkpoint dim x n, one draw per column
/// \param sweeps the checkpoints' sweeps (empty: unknown)
/// \param options the options
/// \return the report, its record and timings
/// \throws std::invalid_argument for bad options, sweeps of another count than the checkpoints, and the validator's
///         checks (dimension, fewer than kMinValidationDraws draws, non-finite values); as validation_truth().
DUALGIBBS_EXPORT ValidationResult validate(const Model& model, const std::vector<Eigen::MatrixXd>& checkpoints,
                                           const std::vector<double>& sweeps, const ValidationOptions& options);

/// Where a test is, in words: "all coordinates", "node 3", "edge 5", or "edge 5 (head, tail)" for an edge difference.
/// \param offender the test
/// \param model the model
/// \param kind the draws' kind
/// \return the test's location in words
DUALGIBBS_EXPORT std::string offender_location(const ValidationOffender& offender, const Model& model, DrawKind kind);

}  // namespace dualgibbs::api
