#pragma once
// Result files of the dualgibbs command are never written half-way. Every output goes to a temporary file in
// the same directory as its destination (same file system, so the final rename is atomic) and is renamed into
// place only once it is complete and flushed without error. On failure, on an exception and on SIGINT,
// SIGTERM or SIGHUP the temporary file is removed, so an interrupted or failed run leaves neither a truncated
// result nor a stray temporary behind. Every result file gets a JSON sidecar PATH.json (seed, version,
// parameters, thread count) written the same way.
//
// Errors: a destination that cannot be created (missing directory, no permission, a directory in the way) is
// std::invalid_argument naming the path and the system's reason (exit 2 in the command); a write that fails
// part-way (disk full) is std::runtime_error (exit 1).

#include "cli.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>

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

}  // namespace dualgibbs::cli
