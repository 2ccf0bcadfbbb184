#pragma once
// Everything the dualgibbs command writes: result files, their JSON sidecars, experiment results (CSV, sidecar,
// plots through scripts/plot.py) and progress on stderr. One writer for every command (sample, exact,
// reproduce, converge and the default run):
//
// Result files are never written half-way and never replace what is not a regular file (output_file.hpp has the
// whole policy): a new or regular-file destination is written to an exclusively created temporary file in its
// directory and renamed into place only once complete and flushed without error (removed on failure, on an
// exception and on SIGINT, SIGTERM or SIGHUP); "-" is standard output; an existing device or FIFO (/dev/null,
// /dev/stdout, a named pipe) is written directly, never renamed over or removed; a directory or a symbolic
// link to a file is refused. Every result written to a file gets a JSON sidecar (seed, version, parameters,
// thread count) written the same way: PATH.json next to a single result file, DIR/NAME.json for an
// experiment's files. A result on standard output or a device or FIFO has no sidecar (nothing sits "next to"
// it): commands that can write one elsewhere take an explicit path (sample --sidecar FILE).
//
// Errors: a destination that cannot be created or is refused (missing directory, no permission, a directory in
// the way, a link to a file, an output directory that is a file) is std::invalid_argument naming the path and
// the reason (exit 2 in the command); a write that fails part-way (disk full) is std::runtime_error (exit 1).

#include <dualgibbs/api/output_file.hpp>
#include "cli.hpp"

#include <dualgibbs/experiments/experiments.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace dualgibbs::cli {

// The library's safe output files (api/output_file.hpp), used by every subcommand.
using api::AtomicOutput;
using api::Destination;
using api::is_stream_destination;
using api::write_atomically;

/// The sidecar of a result file: PATH.json.
std::string sidecar_path(const std::string& result_path);

/// Writes the JSON `sidecar` plus {"file": result_path} to sidecar_path(result_path), atomically; does nothing
/// if `result_path` is standard output or a device or FIFO (is_stream_destination(): no file to sit next to).
void write_sidecar(const std::string& result_path, nlohmann::json sidecar);

/// Writes `j` (indented, one trailing newline) to `path` atomically: the one JSON writer of every sidecar.
void write_json(const std::string& path, const nlohmann::json& j);

// ---- experiments (reproduce, converge, the default run) -----------------------------------------------------

/// Progress on stderr for anything that runs longer than a second, silent before the first second and when
/// `quiet`: on a terminal a single line rewritten in place at most every 0.2 s; otherwise (a log file) whole
/// lines, at most one per 10% step and 5 s, so that logs hold no carriage returns.
class ProgressPrinter {
 public:
  /// Progress printer; nothing is printed when `quiet`.
  explicit ProgressPrinter(bool quiet);
  ~ProgressPrinter() { finish(); }
  void operator()(const std::string& stage, double fraction);
  /// Ends the progress line (if one was printed).
  void finish();
  ProgressFn callback() {
    return [this](const std::string& s, double f) { (*this)(s, f); };
  }

 private:
  bool m_quiet;
  bool m_terminal;
  bool m_printed = false;
  int m_last_step = 0;
  std::chrono::steady_clock::time_point m_start;
  double m_last = -1;
};

/// What was written where.
struct WrittenFiles {
  std::vector<std::string> files;  ///< paths of everything written
  std::string plot_message;        ///< empty if the plots were drawn, else why not
};

/// Creates the output directory DIR (and its parents) if needed and checks that files can be created in it,
/// so that a bad --out fails before a long run rather than after it.
/// \throws std::invalid_argument naming DIR and the reason (not a directory, permission denied, "-": an
///         experiment writes several files, so it cannot go to standard output).
void prepare_output_directory(const std::string& dir);

/// Writes DIR/NAME.csv, DIR/NAME_<extra>.csv and DIR/NAME.json (`record`, api::experiment_record(), with the
/// files added), each through AtomicOutput, then draws DIR/NAME.png and DIR/NAME.pdf with scripts/plot.py unless
/// `plot` is false. Creates DIR (prepare_output_directory()). \throws as AtomicOutput and prepare_output_directory().
WrittenFiles write_result(const ExperimentResult& r, nlohmann::json record, const std::string& dir, bool plot);

/// write_result() with the record api::experiment_record(r, wall_seconds, command_line) of a run on `threads`
/// threads (0 = available_threads()) over `group` (the session's ranks, or null for one process).
WrittenFiles write_result(const ExperimentResult& r, const std::string& dir, double wall_seconds, unsigned threads,
                          ChainGroup* group, const std::string& command_line, bool plot);

/// The text report printed after a run: title, rate table, summary, notes, files, wall time.
std::string text_report(const ExperimentResult& r, const WrittenFiles& files, double wall_seconds);

/// Where scripts/plot.py is: $DUALGIBBS_PLOT_SCRIPT, else <bin>/../share/dualgibbs/plot.py, else the
/// source tree's scripts/plot.py. Empty if none exists.
std::string find_plot_script();

}  // namespace dualgibbs::cli
