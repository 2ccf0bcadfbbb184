#pragma once
// Everything the dualgibbs command writes: result files, their JSON sidecars, experiment results (CSV, sidecar,
// plots through scripts/plot.py) and progress on stderr. One writer for every command (sample, exact,
// reproduce, converge and the default run):
//
// Result files are never written half-way. Every output goes to a temporary file in the same directory as its
// destination (same file system, so the final rename is atomic) and is renamed into place only once it is
// complete and flushed without error. On failure, on an exception and on SIGINT, SIGTERM or SIGHUP the
// temporary file is removed, so an interrupted or failed run leaves neither a truncated result nor a stray
// temporary behind. Every result gets a JSON sidecar (seed, version, parameters, thread count) written the same
// way: PATH.json next to a single result file, DIR/NAME.json for an experiment's files.
//
// Errors: a destination that cannot be created (missing directory, no permission, a directory in the way, an
// output directory that is a file) is std::invalid_argument naming the path and the system's reason (exit 2 in
// the command); a write that fails part-way (disk full) is std::runtime_error (exit 1).

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

/// One output file being written: a stream on a temporary file that becomes `path` on commit().
class AtomicOutput {
public:
  /// Opens a fresh temporary file next to `path` (binary mode: the bytes written are the bytes stored).
  /// \throws std::invalid_argument if it cannot be created or `path` is an existing directory.
  explicit AtomicOutput(std::string path);
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  /// The stream to write to (seekable).
  std::ofstream& stream() noexcept { return m_out; }
  /// The final path.
  const std::string& path() const noexcept { return m_path; }
  /// The temporary path (for messages and tests).
  const std::string& temporary_path() const noexcept { return m_tmp; }
  /// Flushes, checks that every write succeeded, closes and renames the file into place.
  /// \throws std::runtime_error on a write error, std::invalid_argument if the rename fails; either way the
  ///         temporary file is removed.
  void commit();
  /// Closes and removes the temporary file now (also done by the destructor).
  void discard() noexcept;

private:
  std::string m_path;
  std::string m_tmp;
  std::ofstream m_out;
  int m_slot = -1;  // index in the signal-cleanup table, -1 if not registered
  bool m_done = false;
};

/// Writes `fill`'s output to `path` atomically (see AtomicOutput).
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

/// The sidecar of a result file: PATH.json.
std::string sidecar_path(const std::string& result_path);

/// Fields every sidecar carries: command, version, seed, threads (the count used; 0 = all cores is resolved),
/// hardware_threads, graph spec, s, sigma, node_file (if any). Callers add their own parameters.
nlohmann::json sidecar_base(const std::string& command, const CommonOptions& common, unsigned threads);

/// Writes the JSON `sidecar` plus {"file": result_path} to sidecar_path(result_path), atomically.
void write_sidecar(const std::string& result_path, nlohmann::json sidecar);

/// Writes `j` (indented, one trailing newline) to `path` atomically: the one JSON writer of every sidecar.
void write_json(const std::string& path, const nlohmann::json& j);

/// The thread count a run uses for a requested count (0 = all hardware threads, at least 1).
unsigned resolved_threads(unsigned requested);

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

/// The JSON sidecar of an experiment's result: figure, title, version, seed, parameters, threads
/// ({requested, used, hardware}), timings, wall time, summary, rate table, notes, columns (files are added
/// by write_result()).
nlohmann::json result_json(const ExperimentResult& r, double wall_seconds, unsigned threads,
                           const std::string& command_line);

/// Creates the output directory DIR (and its parents) if needed and checks that files can be created in it,
/// so that a bad --out fails before a long run rather than after it.
/// \throws std::invalid_argument naming DIR and the reason (not a directory, permission denied, ...).
void prepare_output_directory(const std::string& dir);

/// Writes DIR/NAME.csv, DIR/NAME_<extra>.csv and DIR/NAME.json, each through AtomicOutput, then draws
/// DIR/NAME.png and DIR/NAME.pdf with scripts/plot.py unless `plot` is false. Creates DIR
/// (prepare_output_directory()). \throws as AtomicOutput and prepare_output_directory().
WrittenFiles write_result(const ExperimentResult& r, const std::string& dir, double wall_seconds, unsigned threads,
                          const std::string& command_line, bool plot);

/// The text report printed after a run: title, rate table, summary, notes, files, wall time.
std::string text_report(const ExperimentResult& r, const WrittenFiles& files, double wall_seconds);

/// Where scripts/plot.py is: $DUALGIBBS_PLOT_SCRIPT, else <bin>/../share/dualgibbs/plot.py, else the
/// source tree's scripts/plot.py. Empty if none exists.
std::string find_plot_script();

}  // namespace dualgibbs::cli
