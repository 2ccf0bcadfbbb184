#pragma once
// Writing experiment results (CSV, JSON sidecar, plots through scripts/plot.py) and progress on stderr,
// shared by `dualgibbs reproduce`, `dualgibbs converge` and the default run.

#include <dualgibbs/experiments.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace dualgibbs::cli {

/// Progress on stderr for anything that runs longer than a second: a single line rewritten in place,
/// at most every 0.2 s, silent before the first second and when `quiet`.
class ProgressPrinter {
public:
  explicit ProgressPrinter(bool quiet) : m_quiet(quiet), m_start(std::chrono::steady_clock::now()) {}
  ~ProgressPrinter() { finish(); }
  void operator()(const std::string& stage, double fraction);
  /// Ends the progress line (if one was printed).
  void finish();
  ProgressFn callback() {
    return [this](const std::string& s, double f) { (*this)(s, f); };
  }

private:
  bool m_quiet;
  bool m_printed = false;
  std::chrono::steady_clock::time_point m_start;
  double m_last = -1;
};

/// What was written where.
struct WrittenFiles {
  std::vector<std::string> files;  ///< paths of everything written
  std::string plot_message;        ///< empty if the plots were drawn, else why not
};

/// The JSON sidecar of a result: figure, title, version, seed, parameters, threads, timings, wall time,
/// summary, rate table, notes, columns and files.
nlohmann::json result_json(const ExperimentResult& r, double wall_seconds, unsigned threads,
                           const std::string& command_line);

/// Writes DIR/NAME.csv, DIR/NAME_<extra>.csv and DIR/NAME.json (each to a temporary name, then renamed),
/// then draws DIR/NAME.png and DIR/NAME.pdf with scripts/plot.py unless `plot` is false. Creates DIR.
/// \throws std::runtime_error if a file cannot be written.
WrittenFiles write_result(const ExperimentResult& r, const std::string& dir, double wall_seconds, unsigned threads,
                          const std::string& command_line, bool plot);

/// The text report printed after a run: title, rate table, summary, notes, files, wall time.
std::string text_report(const ExperimentResult& r, const WrittenFiles& files, double wall_seconds);

/// Where scripts/plot.py is: $DUALGIBBS_PLOT_SCRIPT, else <bin>/../share/dualgibbs/plot.py, else the
/// source tree's scripts/plot.py. Empty if none exists.
std::string find_plot_script();

}  // namespace dualgibbs::cli
