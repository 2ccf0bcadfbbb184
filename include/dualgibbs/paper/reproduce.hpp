#pragma once
/// \file reproduce.hpp
/// The `reproduce` use case: one of the paper's figures (figures(), paper/figures.hpp) with the command's options,
/// recorded by api::experiment_record() (api/experiment_record.hpp). Part of dualgibbs::paper, like the figures.
///
/// \code
/// dualgibbs::api::ReproduceOptions o;
/// o.quick = true;
/// const dualgibbs::api::ExperimentRun run = dualgibbs::api::reproduce("fig6", o);
/// run.result.table.write_csv(std::cout);
/// std::cout << run.record["rates"].dump(2) << "\n";
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/experiment_record.hpp>
#include <dualgibbs/paper/export.hpp>
#include <dualgibbs/paper/figures.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs::api {

/// The options of `reproduce`, with the command's defaults.
struct ReproduceOptions {
  bool quick = false;      ///< a reduced run (fewer chains, sweeps and graphs) for previews and tests
  std::uint64_t seed = 1;  ///< master seed of every ensemble, random graph and parameter draw
  /// Override the figure's number of chains (fig5: samples); 0: the figure's, else at least kMinSplitHalfChains.
  std::size_t chains = 0;
  std::size_t sweeps = 0;     ///< override the figure's number of sweeps (fig5: burn-in sweeps); 0: the figure's
  bool as_published = false;  ///< the settings of the authors' published code and result files
  /// Start of the figure's chains: constant or random; empty: the figure's own (fig10 and rates keep their large
  /// start for the mean fits).
  std::optional<std::string> init;
  std::optional<double> init_value;  ///< the constant of init constant (requires it)
  std::optional<double> init_scale;  ///< init random starts from N(0, K^2 diag(M)^-1) (requires it)
  /// The output directory the caller writes the files to; only recorded in the command line (empty: none).
  std::string out;
};

/// The figures `figure` names, after checking `options`: every figure for "all", else the one named.
/// \param figure a name of figures() or "all"
/// \param options the options
/// \return the figures to run, in order
/// \throws std::invalid_argument for an unknown figure (naming the known ones), an unknown or given init, an
///         init_value without init constant, an init_scale without init random, or 1 to kMinSplitHalfChains - 1
///         chains.
DUALGIBBS_PAPER_EXPORT std::vector<std::string> reproduce_figures(const std::string& figure,
                                                                  const ReproduceOptions& options);

/// Runs one figure.
/// \param figure a name of figures()
/// \param options the options
/// \param execution threads, chain group and progress
/// \return the figure's tables and record
/// \throws std::invalid_argument as reproduce_figures() (for "all" too: one figure at a time) and the figure's own
///         checks; the figure's numerical failures.
DUALGIBBS_PAPER_EXPORT ExperimentRun reproduce(const std::string& figure, const ReproduceOptions& options,
                                               const Execution& execution = {});

}  // namespace dualgibbs::api
