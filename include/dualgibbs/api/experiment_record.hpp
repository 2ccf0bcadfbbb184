#pragma once
/// \file experiment_record.hpp
/// The record of an experiment's result (the JSON sidecar written next to its tables), shared by `converge`
/// (api/converge.hpp) and `reproduce` (paper/reproduce.hpp, the paper's figures).
///
/// \code
/// const dualgibbs::api::ExperimentRun run = dualgibbs::api::converge(source, o);
/// std::cout << run.record["rates"].dump(2) << "\n";
/// \endcode

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/export.hpp>

#include <string>

namespace dualgibbs::api {

/// An experiment that ran: its tables and its record.
struct ExperimentRun {
  ExperimentResult result;  ///< the tables, rates, summary, parameters, timings and notes
  /// experiment_record() of the result.
  Record record;
  double wall_seconds = 0;  ///< wall time of the run
};

/// The record of an experiment's result: figure (the result's name), title, version, command (how it ran),
/// parameters ({name: text}), seed (from the parameters), threads ({requested, used, hardware}), mpi_ranks,
/// timings_seconds, wall_seconds, summary, rates (label, fitted_from, predicted_by, predicted_neg_log_rate,
/// closed_form_neg_log_rate, fitted_neg_log_rate, window_first_sweep, window_last_sweep, window_points,
/// relative_disagreement, note when the fit has one), notes and columns (the main table's, its label column first).
/// Non-finite numbers are null.
/// \param result the experiment's result
/// \param wall_seconds wall time of the run
/// \param command_line how it ran (the equivalent command line)
/// \param execution its threads and chain group
/// \return the record
DUALGIBBS_EXPORT Record experiment_record(const ExperimentResult& result, double wall_seconds,
                                          const std::string& command_line, const Execution& execution);

}  // namespace dualgibbs::api
