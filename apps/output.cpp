// JSON sidecars, experiment results and progress; see output.hpp.
#include "output.hpp"
#include "mpi_session.hpp"

#include <dualgibbs/api/experiment_record.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/version.hpp>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace dualgibbs::cli {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string sidecar_path(const std::string& result_path) { return result_path + ".json"; }

void write_json(const std::string& path, const nlohmann::json& j) {
  write_atomically(path, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

void write_sidecar(const std::string& result_path, nlohmann::json sidecar) {
  if (is_stream_destination(result_path)) return;
  sidecar["file"] = result_path;
  write_json(sidecar_path(result_path), sidecar);
}

// ---- experiments -----------------------------------------------------------------------------------------

ProgressPrinter::ProgressPrinter(bool quiet)
    : m_quiet(quiet), m_terminal(isatty(STDERR_FILENO) != 0), m_start(std::chrono::steady_clock::now()) {}

void ProgressPrinter::operator()(const std::string& stage, double fraction) {
  if (m_quiet) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  if (!m_terminal) {
    // A log file: whole lines, at most one per 10% step and 5 seconds, never carriage returns.
    const int step = static_cast<int>(10.0 * std::min(1.0, std::max(0.0, fraction)));
    if (t < 1.0 || step <= m_last_step || t - m_last < 5.0) return;
    m_last = t;
    m_last_step = step;
    std::cerr << "  " << std::setw(3) << 10 * step << "%  " << std::fixed << std::setprecision(1) << std::setw(6) << t
              << " s  " << stage << "\n"
              << std::flush;
    return;
  }
  if (t < 1.0 || t - m_last < 0.2) return;
  m_last = t;
  std::ostringstream line;
  line << "\r  " << std::setw(3) << static_cast<int>(std::lround(100.0 * std::min(1.0, std::max(0.0, fraction))))
       << "%  " << std::fixed << std::setprecision(1) << std::setw(6) << t << " s  " << stage;
  std::string s = line.str();
  if (s.size() > 100) s.resize(100);
  std::cerr << s << std::string(s.size() < 100 ? 100 - s.size() : 0, ' ') << std::flush;
  m_printed = true;
}

void ProgressPrinter::finish() {
  if (m_printed && m_terminal) std::cerr << "\r" << std::string(100, ' ') << "\r" << std::flush;
  m_printed = false;
}

namespace {

namespace fs = std::filesystem;

// Runs `python script name dir` with its standard output and error captured into `output`, and returns the exit status
// (-1 if it could not run or was killed). No shell: the arguments are passed as they are. The child asks the kernel
// to kill it when its parent dies (PR_SET_PDEATHSIG), so a plot never outlives the run that started it (after SIGTERM,
// say) and never writes into a directory its run has left.
int run_plotter(const std::string& python, const std::string& script, const std::string& name, const std::string& dir,
                std::string& output) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the request took effect
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    const char* argv[] = {python.c_str(), script.c_str(), name.c_str(), dir.c_str(), nullptr};
    ::execv(python.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n > 0) output.append(buf, static_cast<std::size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string find_plot_script() {
  if (const char* env = std::getenv("DUALGIBBS_PLOT_SCRIPT"); env && *env) return fs::exists(env) ? env : "";
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / ".." / "share" / "dualgibbs" / "plot.py";
    if (fs::exists(installed)) return installed.lexically_normal().string();
  }
#ifdef DUALGIBBS_SOURCE_DIR
  const fs::path source = fs::path(DUALGIBBS_SOURCE_DIR) / "scripts" / "plot.py";
  if (fs::exists(source)) return source.string();
#endif
  return "";
}

void prepare_output_directory(const std::string& dir) {
  if (dir.empty()) throw std::invalid_argument("cannot write into an output directory with an empty name");
  if (dir == "-")
    throw std::invalid_argument("cannot write an experiment's files to standard output ('-'): give a directory");
  std::error_code ec;
  fs::create_directories(fs::path(dir), ec);
  if (!is_directory(dir))
    throw std::invalid_argument("cannot write into '" + dir +
                                "': " + (ec ? ec.message() : std::string("it exists and is not a directory")));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument("cannot write into '" + dir + "': " + std::strerror(errno));
}

std::string draw_plots(const std::string& name, const fs::path& d);

WrittenFiles write_result(const ExperimentResult& r, nlohmann::json j, const std::string& dir, bool plot) {
  WrittenFiles w;
  prepare_output_directory(dir);
  const fs::path d(dir);
  // Every table and the sidecar are complete and flushed before any is renamed into place, so a failure (a full
  // disk) leaves none of them: never a table without its sidecar.
  std::vector<std::unique_ptr<AtomicOutput>> outputs;
  auto open = [&](const fs::path& p) -> std::ostream& {
    outputs.push_back(std::make_unique<AtomicOutput>(p.string()));
    w.files.push_back(p.string());
    return outputs.back()->stream();
  };
  r.table.write_csv(open(d / (r.name + ".csv")));
  for (const auto& [suffix, table] : r.extra_tables) table.write_csv(open(d / (r.name + "_" + suffix + ".csv")));
  const fs::path json = d / (r.name + ".json");
  nlohmann::json files = w.files;
  files.push_back(json.string());
  j["files"] = files;  // the plots are added once they exist
  open(json) << j.dump(2) << '\n';
  for (auto& o : outputs) o->flush();
  for (auto& o : outputs) o->commit();
  if (!plot) return w;
  const std::string plots[2] = {(d / (r.name + ".png")).string(), (d / (r.name + ".pdf")).string()};
  w.plot_message = draw_plots(r.name, d);
  if (!w.plot_message.empty()) {  // a plot drawn before the failure would not match the sidecar (or be stale)
    for (const std::string& p : plots) std::remove(p.c_str());
    return w;
  }
  for (const std::string& p : plots) files.push_back(p);
  j["files"] = files;
  try {
    write_json(json.string(), j);
  } catch (...) {  // the sidecar cannot list them: the run fails and leaves no plot it does not list
    for (const std::string& p : plots) std::remove(p.c_str());
    throw;
  }
  for (const std::string& p : plots) w.files.push_back(p);
  return w;
}

// Draws DIR/NAME.png and DIR/NAME.pdf with scripts/plot.py; returns why not ("" if drawn).
std::string draw_plots(const std::string& name, const fs::path& d) {
  const std::string script = find_plot_script();
  const char* py_env = std::getenv("DUALGIBBS_PYTHON");
  const std::string python = py_env && *py_env ? py_env : "/usr/bin/python3";
  if (script.empty()) return "scripts/plot.py not found (set DUALGIBBS_PLOT_SCRIPT): wrote CSV and JSON only";
  if (::access(python.c_str(), X_OK) != 0)
    return python + " not found (set DUALGIBBS_PYTHON): wrote CSV and JSON only, no plots";
  std::string output;
  const int code = run_plotter(python, script, name, d.string(), output);
  if (code == 0) return "";
  if (code == 3) return "matplotlib is not available to " + python + ": wrote CSV and JSON only, no plots";
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return "plotting failed (exit " + std::to_string(code) + "): " + output;
}

WrittenFiles write_result(const ExperimentResult& r, const std::string& dir, double wall_seconds, unsigned threads,
                          ChainGroup* group, const std::string& command_line, bool plot) {
  api::Execution execution;
  execution.threads = threads;
  execution.group = group;
  return write_result(r, api::experiment_record(r, wall_seconds, command_line, execution), dir, plot);
}

std::string text_report(const ExperimentResult& r, const WrittenFiles& files, double wall_seconds) {
  std::ostringstream os;
  os << r.name << ": " << r.title << "\n";
  if (!r.rates.empty()) os << "\npredicted vs fitted rates\n" << format_rate_table(r.rates);
  if (!r.summary.empty()) {
    os << "\n";
    for (const auto& [k, v] : r.summary) os << "  " << std::left << std::setw(44) << k << " " << v << "\n";
  }
  for (const auto& n : r.notes) os << "note: " << n << "\n";
  os << "\nfiles:\n";
  for (const auto& f : files.files) os << "  " << f << "\n";
  if (!files.plot_message.empty()) os << "  (" << files.plot_message << ")\n";
  os << "wall time " << std::fixed << std::setprecision(2) << wall_seconds << " s\n";
  return os.str();
}

}  // namespace dualgibbs::cli
