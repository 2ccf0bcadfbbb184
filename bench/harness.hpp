#pragma once
// The benchmarks' common harness (header-only, public headers of the library only): command-line options with
// defaults and a one-line usage error, a stopwatch of wall and CPU time, and a printer of JSON lines and of the
// machine context (the CPU and the load average) that every figure of a loaded, shared machine must carry.
//
//   bench::Args args(argc, argv, "bench_x [--quick] [--repeat N]");
//   const bool quick = args.flag("--quick");
//   const long repeat = args.integer("--repeat", 5, 1, 100);
//   args.finish();  // an unknown argument or a bad value: the usage line on stderr, exit 2
//   const bench::Stopwatch clock;
//   ...
//   bench::JsonLine().text("measure", "decay").number("seconds", clock.seconds()).print();
#include <dualgibbs/core/machine.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs::bench {

/// The arguments of a benchmark: `--name value` options and `--name` flags, each read once with its default, and
/// positional arguments. Every value is checked in full (a number must be a whole number or a floating-point number
/// with nothing after it); finish() rejects what no one read. A mistake prints `PROGRAM: WHAT; usage: USAGE` on
/// stderr and exits with status 2.
class Args {
 public:
  /// `usage` is the usage line without "usage: ", starting with the program's name.
  Args(int argc, char** argv, std::string usage) : m_usage(std::move(usage)) {
    for (int i = 1; i < argc; ++i) m_args.emplace_back(argv[i]);
    m_used.assign(m_args.size(), false);
    m_positional.assign(m_args.size(), false);
  }

  /// True if `--name` is given.
  bool flag(const std::string& name) {
    bool seen = false;
    for (std::size_t i = 0; i < m_args.size(); ++i)
      if (!m_used[i] && m_args[i] == name) m_used[i] = seen = true;
    return seen;
  }
  /// The value of `--name value` (the last one if given more than once), or `fallback`.
  std::string text(const std::string& name, const std::string& fallback) {
    std::string value = fallback;
    for (std::size_t i = 0; i < m_args.size(); ++i) {
      if (m_used[i] || m_args[i] != name) continue;
      if (i + 1 >= m_args.size()) fail(name + " needs a value");
      m_used[i] = m_used[i + 1] = true;
      value = m_args[++i];
    }
    return value;
  }
  /// A floating-point value of `--name value`, or `fallback`.
  double number(const std::string& name, double fallback) {
    const std::string t = text(name, "");
    return t.empty() ? fallback : parse_number(name, t);
  }
  /// A whole-number value of `--name value` in [low, high], or `fallback`.
  long long integer(const std::string& name, long long fallback, long long low = -(1LL << 62),
                    long long high = 1LL << 62) {
    const std::string t = text(name, "");
    if (t.empty()) return fallback;
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (end == t.c_str() || *end != '\0' || v < low || v > high)
      fail(name + " takes a whole number in [" + std::to_string(low) + ", " + std::to_string(high) + "], not '" + t +
           "'");
    return v;
  }
  /// Positional argument `index` (0 = the first argument that is not an option), or `fallback`. Read positionals
  /// after every option, so that options' values are not taken for them.
  std::string positional(std::size_t index, const std::string& fallback) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < m_args.size(); ++i) {
      const bool is_positional = m_positional[i] || (!m_used[i] && m_args[i].rfind("--", 0) != 0);
      if (!is_positional) continue;
      if (k++ == index) {
        m_used[i] = m_positional[i] = true;
        return m_args[i];
      }
    }
    return fallback;
  }
  /// Fails with the usage line if an argument was not read.
  void finish() const {
    for (std::size_t i = 0; i < m_args.size(); ++i)
      if (!m_used[i]) fail("unknown argument '" + m_args[i] + "'");
  }
  /// Prints `PROGRAM: what; usage: USAGE` on stderr and exits with status 2.
  [[noreturn]] void fail(const std::string& what) const {
    const std::string program = m_usage.substr(0, m_usage.find(' '));
    std::fprintf(stderr, "%s: %s; usage: %s\n", program.c_str(), what.c_str(), m_usage.c_str());
    std::exit(2);
  }

 private:
  double parse_number(const std::string& name, const std::string& t) const {
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end != '\0') fail(name + " takes a number, not '" + t + "'");
    return v;
  }

  std::string m_usage;
  std::vector<std::string> m_args;
  std::vector<bool> m_used;        // read as an option, a flag or a positional
  std::vector<bool> m_positional;  // read as a positional
};

/// CPU seconds of the process so far (every thread; CLOCK_PROCESS_CPUTIME_ID, nanosecond resolution where std::clock
/// has microseconds).
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Wall-clock (steady) and CPU time (all threads of the process) since construction or restart().
class Stopwatch {
 public:
  Stopwatch() { restart(); }
  /// Starts again from now.
  void restart() {
    m_wall = std::chrono::steady_clock::now();
    m_cpu = process_cpu_seconds();
  }
  /// Wall-clock seconds.
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_wall).count(); }
  /// CPU seconds of the process (every thread).
  double cpu_seconds() const { return process_cpu_seconds() - m_cpu; }

 private:
  std::chrono::steady_clock::time_point m_wall;
  double m_cpu = 0;
};

/// One JSON object on one line, keys in the order added. Numbers are printed with a printf format (default
/// "%.6g", the precision of a default ostream); a NaN or infinite number is printed as null.
class JsonLine {
 public:
  /// A string value (escaped).
  JsonLine& text(const std::string& key, const std::string& value) {
    std::string e;
    for (char c : value) {
      if (c == '"' || c == '\\') e += '\\';
      if (static_cast<unsigned char>(c) < 0x20) {
        char u[8];
        std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        e += u;
        continue;
      }
      e += c;
    }
    return raw(key, "\"" + e + "\"");
  }
  /// A number, printed with `format` (one printf conversion of a double).
  JsonLine& number(const std::string& key, double value, const char* format = "%.6g") {
    if (!std::isfinite(value)) return raw(key, "null");
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return raw(key, buf);
  }
  /// A whole number.
  JsonLine& integer(const std::string& key, long long value) { return raw(key, std::to_string(value)); }
  /// true or false.
  JsonLine& boolean(const std::string& key, bool value) { return raw(key, value ? "true" : "false"); }
  /// The machine: "cpu" (dualgibbs::cpu_description()) and "load_average" (dualgibbs::load_average()).
  JsonLine& machine() { return text("cpu", cpu_description()).text("load_average", load_average()); }
  /// The object's text, without a newline.
  std::string str() const { return "{" + m_body + "}"; }
  /// Prints `prefix`, the object and a newline on stdout, and flushes it (a long run shows its lines as they come).
  void print(const char* prefix = "") const {
    std::printf("%s%s\n", prefix, str().c_str());
    std::fflush(stdout);
  }

 private:
  JsonLine& raw(const std::string& key, const std::string& value) {
    if (!m_body.empty()) m_body += ", ";
    m_body += "\"" + key + "\": " + value;
    return *this;
  }
  std::string m_body;
};

/// The machine context of a CSV benchmark as comment lines: `# CPU: ...` and `# load average at WHEN: ...`.
inline void print_machine_comment(const char* when = "start") {
  std::printf("# CPU: %s\n# load average at %s: %s\n", cpu_description().c_str(), when, load_average().c_str());
  std::fflush(stdout);
}

}  // namespace dualgibbs::bench
