#pragma once
/// \file bench.hpp
/// The `bench` use case: the sampler throughput of one configuration (domain, scheme, chains, threads, lock-step
/// blocks) as nanoseconds per chain-update, the best of several runs. The full grid with its baseline is
/// bench/bench_sampler.cpp.
///
/// \code
/// dualgibbs::api::ModelSource source;
/// source.graph = "torus:100";
/// const dualgibbs::api::BenchResult r = dualgibbs::api::bench(source, {});
/// std::cout << r.record["ns_per_update"] << "\n";
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/sampling/ensemble.hpp>

#include <cstddef>
#include <string>

namespace dualgibbs::api {

/// About this many site updates per run when BenchOptions::sweeps is 0.
constexpr double kBenchUpdates = 5e7;

/// The options of `bench`, with the command's defaults.
struct BenchOptions {
  std::string domain = "dual";  ///< primal or dual
  /// The sweep scheme and its scan: random, permutation, fixed or colored (one chain's colour classes on the
  /// execution's threads).
  SchemeChoice scheme;
  std::size_t chains = 0;     ///< chains; 0: 2 x lockstep x threads (two full lock-step blocks per thread)
  std::size_t sweeps = 0;     ///< sweeps per run; 0: about kBenchUpdates updates
  std::size_t lockstep = 16;  ///< chains per shared-schedule block: 1, 2, 4, 8 or 16
  int repeat = 3;             ///< runs; the best is reported (>= 1)
};

/// What bench measured.
struct BenchResult {
  /// graph, nodes, edges, domain, scan, scheme, threads_per_chain (colored), omega (ssor, cheby-ssor),
  /// site_updates_per_iteration, chains, threads, mpi_ranks, lockstep, widest_block, sweeps, repeat, updates,
  /// seconds, ns_per_update (the slowest rank's time over all updates), updates_per_second, cpu_ns_per_update,
  /// load_average (before the runs), cpu.
  Record record;
  std::string summary;        ///< Model::summary(): the model in one line
  SchemeOptions scheme;       ///< the scheme that ran
  EnsembleOptions ensemble;   ///< the ensemble's options (chains, sweeps, threads resolved)
  std::size_t per_sweep = 0;  ///< site updates per iteration of the scheme
  int widest_block = 0;       ///< chains actually advanced in lock-step
  EnsembleStats best{};       ///< the fastest run
  double best_cpu_ns = 0;     ///< the least CPU time per update over the runs, nanoseconds
};

/// The throughput of sampling `model`.
/// \param model the model
/// \param options the options
/// \param source the model's description (its graph spec for the record); its seed seeds the chains
/// \param execution threads (0 = available_threads()) and chain group
/// \return the record and the best run's statistics
/// \throws std::invalid_argument for an unknown domain, repeat < 1, an empty domain, and as make_scheme() and
///         run_ensemble().
DUALGIBBS_EXPORT BenchResult bench(const Model& model, const BenchOptions& options, const ModelSource& source,
                                   const Execution& execution);

/// The throughput of sampling the prior model `source` describes.
/// \param source the model's description; its seed seeds the chains
/// \param options the options
/// \param execution threads and chain group
/// \return the record and the best run's statistics
/// \throws std::invalid_argument for an obs_file (throughput does not depend on the mean), as load_model() and as
///         bench() above.
DUALGIBBS_EXPORT BenchResult bench(const ModelSource& source, const BenchOptions& options, const Execution& execution);

}  // namespace dualgibbs::api
