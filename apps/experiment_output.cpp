// Writing experiment results and progress; see experiment_output.hpp.
#include "experiment_output.hpp"

#include <dualgibbs/version.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>

namespace dualgibbs::cli {

namespace fs = std::filesystem;

void ProgressPrinter::operator()(const std::string& stage, double fraction) {
  if (m_quiet) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
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
  if (m_printed) std::cerr << "\r" << std::string(100, ' ') << "\r" << std::flush;
  m_printed = false;
}

namespace {

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

/// Writes `fill`'s output to path via a temporary file in the same directory, then renames it.
template <class Fill>
void write_atomically(const fs::path& path, Fill fill) {
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    fill(out);
    out.flush();
    if (!out) throw std::runtime_error("error while writing " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot rename to " + path.string());
  }
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
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

nlohmann::json result_json(const ExperimentResult& r, double wall_seconds, unsigned threads,
                           const std::string& command_line) {
  nlohmann::json j;
  j["figure"] = r.name;
  j["title"] = r.title;
  j["version"] = DUALGIBBS_VERSION_STRING;
  j["command"] = command_line;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : r.parameters) params[k] = v;
  j["parameters"] = params;
  for (const auto& [k, v] : r.parameters)
    if (k == "seed") j["seed"] = std::stoull(v);
  j["threads"] = {{"requested", threads}, {"hardware", std::thread::hardware_concurrency()}};
  nlohmann::json timings = nlohmann::json::object();
  for (const auto& [k, v] : r.timings) timings[k] = number(v);
  j["timings_seconds"] = timings;
  j["wall_seconds"] = wall_seconds;
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [k, v] : r.summary) summary[k] = number(v);
  j["summary"] = summary;
  nlohmann::json rates = nlohmann::json::array();
  for (const auto& c : r.rates) {
    nlohmann::json x;
    x["label"] = c.label;
    x["fitted_from"] = c.fitted_from;
    x["predicted_by"] = c.predicted_by;
    x["predicted_neg_log_rate"] = number(c.predicted);
    x["closed_form_neg_log_rate"] = number(c.closed_form);
    x["fitted_neg_log_rate"] = number(c.fit.neg_log_rate);
    x["window_first_sweep"] = number(c.fit.first_sweep);
    x["window_last_sweep"] = number(c.fit.last_sweep);
    x["window_points"] = c.fit.points;
    x["relative_disagreement"] = number(c.relative_disagreement());
    if (!c.fit.note.empty()) x["note"] = c.fit.note;
    rates.push_back(x);
  }
  j["rates"] = rates;
  j["notes"] = r.notes;
  nlohmann::json cols = r.table.columns();
  if (!r.table.label_column().empty()) cols.insert(cols.begin(), r.table.label_column());
  j["columns"] = cols;
  return j;
}

WrittenFiles write_result(const ExperimentResult& r, const std::string& dir, double wall_seconds, unsigned threads,
                          const std::string& command_line, bool plot) {
  WrittenFiles w;
  const fs::path d(dir);
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec || !fs::is_directory(d)) throw std::runtime_error("cannot create output directory " + dir);
  const fs::path csv = d / (r.name + ".csv");
  write_atomically(csv, [&](std::ostream& o) { r.table.write_csv(o); });
  w.files.push_back(csv.string());
  for (const auto& [suffix, table] : r.extra_tables) {
    const fs::path p = d / (r.name + "_" + suffix + ".csv");
    write_atomically(p, [&](std::ostream& o) { table.write_csv(o); });
    w.files.push_back(p.string());
  }
  nlohmann::json j = result_json(r, wall_seconds, threads, command_line);
  nlohmann::json files = w.files;
  files.push_back((d / (r.name + ".json")).string());
  if (plot) {
    files.push_back((d / (r.name + ".png")).string());
    files.push_back((d / (r.name + ".pdf")).string());
  }
  j["files"] = files;
  const fs::path json = d / (r.name + ".json");
  write_atomically(json, [&](std::ostream& o) { o << j.dump(2) << "\n"; });
  w.files.push_back(json.string());
  if (!plot) return w;

  const std::string script = find_plot_script();
  const char* py_env = std::getenv("DUALGIBBS_PYTHON");
  const std::string python = py_env && *py_env ? py_env : "/usr/bin/python3";
  if (script.empty()) {
    w.plot_message = "scripts/plot.py not found (set DUALGIBBS_PLOT_SCRIPT): wrote CSV and JSON only";
    return w;
  }
  if (::access(python.c_str(), X_OK) != 0) {
    w.plot_message = python + " not found (set DUALGIBBS_PYTHON): wrote CSV and JSON only, no plots";
    return w;
  }
  const std::string cmd = shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(r.name) + " " +
                          shell_quote(d.string()) + " 2>&1";
  std::string output;
  int status = -1;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe)) output += buf;
    status = ::pclose(pipe);
  }
  const int code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  if (code == 0) {
    w.files.push_back((d / (r.name + ".png")).string());
    w.files.push_back((d / (r.name + ".pdf")).string());
  } else if (code == 3) {
    w.plot_message = "matplotlib is not available to " + python + ": wrote CSV and JSON only, no plots";
  } else {
    while (!output.empty() && output.back() == '\n') output.pop_back();
    w.plot_message = "plotting failed (exit " + std::to_string(code) + "): " + output;
  }
  return w;
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
