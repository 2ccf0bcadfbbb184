// Atomic result files and their JSON sidecars; see output.hpp.
#include "output.hpp"

#include <dualgibbs/version.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace dualgibbs::cli {
namespace {

// Temporary files to remove if the process is killed by SIGINT, SIGTERM or SIGHUP. The handler may only make
// async-signal-safe calls, so the paths live in fixed buffers and a slot is claimed with an atomic flag.
constexpr int kSlots = 16;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> claimed{false};  // owned by an AtomicOutput
  std::atomic<bool> ready{false};    // path filled in: the handler may read it
  char path[kPathMax];
};
Slot g_slots[kSlots];
std::atomic<bool> g_handlers_installed{false};

extern "C" void remove_temporaries_and_die(int sig) {
  for (Slot& s : g_slots)
    if (s.ready.load()) ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  if (g_handlers_installed.exchange(true)) return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // keep an ignored SIGHUP ignored
    struct sigaction sa {};
    sa.sa_handler = remove_temporaries_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

int register_temporary(const std::string& path) {
  if (path.size() >= kPathMax) return -1;  // still removed on exceptions, only not on signals
  install_handlers();
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].claimed.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].ready.store(true);
    return i;
  }
  return -1;  // more than kSlots files open at once: the others are removed on exceptions, not on signals
}

void unregister_temporary(int slot) {
  if (slot < 0) return;
  g_slots[slot].ready.store(false);
  g_slots[slot].claimed.store(false);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::atomic<unsigned> g_counter{0};

}  // namespace

AtomicOutput::AtomicOutput(std::string path) : m_path(std::move(path)) {
  if (m_path.empty()) throw std::invalid_argument("cannot write an output file with an empty name");
  if (is_directory(m_path)) throw std::invalid_argument("cannot write '" + m_path + "': it is a directory");
  // Same directory as the destination, unique per process and per file.
  m_tmp = m_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_counter++);
  m_slot = register_temporary(m_tmp);
  errno = 0;
  m_out.open(m_tmp, std::ios::out | std::ios::binary | std::ios::trunc);
  if (!m_out) {
    const int err = errno;
    unregister_temporary(m_slot);
    m_slot = -1;
    m_done = true;
    throw std::invalid_argument("cannot write '" + m_path + "': " + (err ? std::strerror(err) : "cannot create a file there"));
  }
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::discard() noexcept {
  if (m_done) return;
  m_done = true;
  if (m_out.is_open()) m_out.close();
  std::remove(m_tmp.c_str());
  unregister_temporary(m_slot);
}

void AtomicOutput::commit() {
  if (m_done) throw std::logic_error("AtomicOutput::commit: '" + m_path + "' already committed or discarded");
  m_out.flush();
  const bool ok = static_cast<bool>(m_out);
  m_out.close();
  if (!ok || m_out.fail()) {
    discard();
    throw std::runtime_error("error while writing '" + m_path + "' (disk full?): nothing was written");
  }
  if (std::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
    const int err = errno;
    discard();
    throw std::invalid_argument("cannot write '" + m_path + "': " + std::strerror(err));
  }
  m_done = true;
  unregister_temporary(m_slot);
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  AtomicOutput out(path);
  fill(out.stream());
  out.commit();
}

std::string sidecar_path(const std::string& result_path) { return result_path + ".json"; }

nlohmann::json sidecar_base(const std::string& command, const CommonOptions& common, unsigned threads) {
  nlohmann::json j;
  j["command"] = command;
  j["version"] = DUALGIBBS_VERSION_STRING;
  j["seed"] = common.seed;
  const unsigned hw = std::thread::hardware_concurrency();
  j["threads"] = threads == 0 ? (hw ? hw : 1u) : threads;
  j["hardware_threads"] = hw;
  j["graph"] = common.graph;
  j["s"] = common.s;
  j["sigma"] = common.sigma;
  if (common.node_file) j["node_file"] = *common.node_file;
  return j;
}

void write_sidecar(const std::string& result_path, nlohmann::json sidecar) {
  sidecar["file"] = result_path;
  write_atomically(sidecar_path(result_path), [&](std::ostream& out) { out << sidecar.dump(2) << '\n'; });
}

}  // namespace dualgibbs::cli
