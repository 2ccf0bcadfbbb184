#pragma once
/// \file sample.hpp
/// The sample use case: run an ensemble of Gibbs chains and hand their states at the written checkpoints to a
/// DrawsSink (a file writer of api/draws.hpp, or an array), with the options, defaults and checks of
/// `dualgibbs sample` and the record of its sidecar.
///
/// Checkpoints: every `every` sweeps (k, 2k, ...) and the last sweep, or the last sweep alone with every = 0 (sweep
/// 0, the initial state, when there are no sweeps). With a model that has a mean (observations) the primal draws are
/// of the posterior N(mu, Q^-1); the dual draws stay the zero-mean fluctuation (x~ or y~), and mu is solved before the
/// run (so a solver failure writes nothing) and returned beside them.
///
/// \code
/// dualgibbs::api::SampleOptions o;
/// o.domain = "primal";
/// std::ofstream out("draws.csv");
/// dualgibbs::api::CsvDrawsWriter writer(out);
/// const dualgibbs::api::SampleResult r = dualgibbs::api::sample(model, o, writer, {});
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/draws.hpp>
#include <dualgibbs/api/mean.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dualgibbs::api {

/// Every option of `dualgibbs sample` that is not about files, with the command's defaults.
struct SampleOptions {
  std::string domain = "dual";                   ///< primal (x over nodes) or dual (y~ over edges)
  std::size_t chains = 10;                       ///< independent chains
  std::size_t sweeps = 100;                      ///< sweeps per chain
  std::size_t every = 0;                         ///< also write every `every` sweeps (0: only after the last sweep)
  std::size_t lockstep = 1;                      ///< chains per shared-schedule block: 1, 2, 4, 8 or 16
  std::uint64_t seed = 1;                        ///< with the chain index, determines every random number
  std::string init = "constant";                 ///< constant, random or given (initial_state)
  double init_value = 1.0;                       ///< the constant of init constant
  double init_scale = 1.0;                       ///< init random starts from N(0, init_scale^2 diag(M)^-1)
  std::optional<Eigen::VectorXd> initial_state;  ///< init given: one state of the domain, copied to every chain
  bool noise = true;                             ///< false: plain Gauss-Seidel
  std::string draws = "x";                       ///< dual: x (x~ = B y~ over nodes) or y (y~ over edges)
  SchemeChoice scheme;                  ///< the sweep scheme and the scan (random, permutation, fixed, colored)
  MeanChoice mean;                      ///< how the posterior mean is solved (models with a mean)
  std::optional<Index> observed_nodes;  ///< for the record (default: observed_nodes())
  /// How a group of processes (Execution::group) shares the work: "chains" (each member a share of the chains,
  /// every member holding the whole graph) or "graph" (every chain's graph cut over the members, each holding its
  /// part and a ghost layer: sampling/partition.hpp; the colored scan of gibbs, ssor or cheby-ssor, one thread per
  /// member, either domain).
  /// The draws are the same bits either way as one process's with the same scan.
  std::string distribute = "chains";
  /// distribute "graph": how the graph is cut, "ranges" (contiguous ranges of node ids: slabs of a lattice, few
  /// unused deviates) or "metis" (METIS's k-way partition: the fewest cut pairs, but every rank draws the deviates of
  /// nearly every block; docs/mpi.md). The draws do not depend on it.
  std::string partition = "ranges";
};

/// What a sampling run returns beside the draws it handed to the sink.
struct SampleResult {
  EnsembleStats stats{};          ///< timing and update counts
  SchemeOptions scheme;           ///< the resolved scheme
  PosteriorMean mean;             ///< mu for a model with a mean (empty vector otherwise)
  Eigen::Index dim = 0;           ///< coordinates per draw
  std::uint64_t checkpoints = 0;  ///< checkpoints written
  int parts = 1;                  ///< distribute "graph": the parts the graph was cut into (the members)
  std::size_t ghosts_max = 0;     ///< distribute "graph": the largest ghost layer of a member (coordinates)
  double cut_fraction = 0.0;      ///< distribute "graph": neighbour pairs cut by the partition, over all pairs
  /// The run's fields of the sidecar: nodes, edges, domain, draws, dim, scan, chains, sweeps, every, checkpoints,
  /// lockstep, init, init_value, init_scale, noise, the scheme's fields (add_scheme_record()), seconds,
  /// ns_per_update, and with a mean draws_mean ("posterior" for primal draws, "zero" for dual ones) and the mean's
  /// fields (add_posterior_mean_record()); with distribute "graph" also distribute, partition, parts (the members),
  /// ghosts_max
  /// (the largest ghost layer of a member) and cut_fraction (the neighbour pairs cut by the partition).
  Record record;
};

/// The number of checkpoints a run of these options writes: 1 with every = 0 or no sweeps, else ceil(sweeps / every).
/// \param options the run's options
/// \return the checkpoint count, >= 1
DUALGIBBS_EXPORT std::uint64_t sample_checkpoints(const SampleOptions& options) noexcept;

/// The lattice a run of these options on this source samples by its shape, never building its graph: with
/// distribute "graph", partition "ranges" and the gibbs scheme, a `path`, `cycle`, `grid`, `torus` or `torus3` spec
/// (in the dual domain a `cycle`, `torus` or `torus3`) with one `s` and one `sigma` (no node, observation, precision or
/// canonical file). Every front end decides with this.
/// \param source the model's source
/// \param options the run's options
/// \return the lattice's shape (then sample(shape, ...)), or empty (load the model, sample(model, ...))
/// \throws std::invalid_argument for a bad graph spec.
DUALGIBBS_EXPORT std::optional<LatticeShape> lattice_shape(const ModelSource& source, const SampleOptions& options);

/// sample() of a lattice given by its shape, split over execution.group (distribute "graph", partition "ranges", the
/// colored scan): every member builds only its share (lattice_share(), lattice_dual_share()), never the whole
/// graph, and the draws are bitwise those of sample() on the lattice's Model with the colored scan. Without a group
/// of two or more members the one process runs the same split sweep alone.
/// \param shape the lattice (lattice_shape())
/// \param options the run's options
/// \param sink where the draws go
/// \param execution the members (group) sharing the graph
/// \return the run's statistics and record, as sample()
/// \throws std::invalid_argument for options sample() refuses with distribute "graph", another distribute or
///         partition, or a shape lattice_share() refuses; the failure of any member, on every member.
DUALGIBBS_EXPORT SampleResult sample(const LatticeShape& shape, const SampleOptions& options, DrawsSink& sink,
                                     const Execution& execution = {});

/// Runs the chains and hands every written checkpoint to `sink` (begin(), write() per checkpoint, end()).
/// \param model the model sampled
/// \param options the run's options
/// \param sink where the draws go
/// \param execution threads and chain group (passed on to the ensemble: EnsembleOptions::group)
/// \return the statistics, the resolved scheme, the mean and the record
/// \throws std::invalid_argument for bad options (unknown domain, scan, scheme, init or draws; init given without
///         an initial state or the reverse; init_scale without init random; draws y in the primal domain; those of
///         make_scheme() and run_ensemble()); NumericalFailure when a chain reaches a non-finite value (the sink is
///         not given that checkpoint); the posterior mean's exceptions; whatever the sink throws.
DUALGIBBS_EXPORT SampleResult sample(const Model& model, const SampleOptions& options, DrawsSink& sink,
                                     const Execution& execution);

}  // namespace dualgibbs::api
