// One output file written safely; see output_file.hpp.
#include <dualgibbs/api/output_file.hpp>

#include "api/digest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <vector>

namespace dualgibbs::api {
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

std::invalid_argument cannot_write(const std::string& path, const std::string& why) {
  return std::invalid_argument("cannot write '" + path + "': " + why);
}

bool is_special(mode_t mode) { return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode); }

}  // namespace

Destination classify_destination(const std::string& path) {
  if (path.empty()) throw std::invalid_argument("cannot write an output file with an empty name");
  if (path == "-" || path == "/dev/stdout") return Destination::Stdout;  // even when standard output is a file
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Destination::NewFile;  // missing (or unreachable: creation says why)
  if (S_ISREG(st.st_mode)) return Destination::NewFile;
  if (S_ISDIR(st.st_mode)) throw cannot_write(path, "it is a directory");
  if (is_special(st.st_mode)) return Destination::Special;
  // A symbolic link: followed only to a device or FIFO (/dev/stdout), which is written, never replaced.
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0)
    throw cannot_write(path, "it is a symbolic link that leads nowhere (" + std::string(std::strerror(errno)) +
                                 "); dualgibbs never creates or writes a file through a link");
  if (S_ISDIR(target.st_mode)) throw cannot_write(path, "it is a directory");
  if (is_special(target.st_mode)) return Destination::Special;
  throw cannot_write(path,
                     "it is a symbolic link to a file; dualgibbs never writes a file through a link (name the "
                     "target itself, or remove the link)");
}

bool same_destination(const std::string& a, const std::string& b) noexcept {
  if (a.empty() || b.empty()) return false;
  auto is_stdout = [](const std::string& p) { return p == "-" || p == "/dev/stdout"; };
  if (is_stdout(a) || is_stdout(b)) return is_stdout(a) && is_stdout(b);
  struct stat sa {
  }, sb{};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  std::error_code ca, cb;  // neither exists: compare the names in their resolved directories
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ca),
                              pb = std::filesystem::weakly_canonical(b, cb);
  return !ca && !cb ? pa == pb : a == b;
}

bool is_stream_destination(const std::string& path) {
  try {
    return classify_destination(path) != Destination::NewFile;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::string random_name_suffix() {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string s(12, ' ');
  for (char& c : s) c = kAlphabet[rd() % (sizeof kAlphabet - 1)];
  return s;
}

ExclusiveFile create_exclusive_file(const std::string& prefix, const std::string& what,
                                    const std::function<std::string()>& suffix, int attempts) {
  for (int i = 0; i < attempts; ++i) {
    ExclusiveFile f;
    f.path = prefix + suffix();
    // O_EXCL: fails with EEXIST on any existing name, a symbolic link included (which is never followed).
    f.fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f.fd >= 0) return f;
    if (errno != EEXIST) throw cannot_write(what, std::strerror(errno));
  }
  throw cannot_write(what, "could not create a new temporary file '" + prefix + "...' (" + std::to_string(attempts) +
                               " random names were all taken)");
}

// ---- FdStreambuf ---------------------------------------------------------------------------------------------

FdStreambuf::FdStreambuf() : m_digest(detail::kFnv1aStart), m_buffer(std::size_t{1} << 16) { drop(); }

bool FdStreambuf::write_all(const char* p, std::size_t n) noexcept {
  if (m_error) return false;
  while (n > 0) {
    const ssize_t w = ::write(m_fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      m_error = errno;
      return false;
    }
    m_digest = detail::fnv1a(m_digest, p, static_cast<std::size_t>(w));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::uint64_t file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read '" + path + "' for its digest");
  std::uint64_t h = detail::kFnv1aStart;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    h = detail::fnv1a(h, buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) throw std::invalid_argument("cannot read '" + path + "' for its digest");
  return h;
}

std::string digest_text(std::uint64_t digest) {
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx", static_cast<unsigned long long>(digest));
  return text;
}

bool FdStreambuf::flush_buffer() noexcept {
  const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
  drop();
  return ok;
}

FdStreambuf::int_type FdStreambuf::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

int FdStreambuf::sync() { return flush_buffer() ? 0 : -1; }

std::streamsize FdStreambuf::xsputn(const char* s, std::streamsize n) {
  if (n <= epptr() - pptr()) {
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!flush_buffer()) return 0;
  if (static_cast<std::size_t>(n) >= m_buffer.size()) return write_all(s, static_cast<std::size_t>(n)) ? n : 0;
  std::memcpy(pptr(), s, static_cast<std::size_t>(n));
  pbump(static_cast<int>(n));
  return n;
}

// ---- AtomicOutput --------------------------------------------------------------------------------------------

namespace {
// The temporary file's name: PATH.tmp.XXXXXXXXXXXX, or, when the final name leaves no room for the 17 bytes of that
// suffix within a file name's NAME_MAX (255) bytes, .dualgibbs.tmp.XXXXXXXXXXXX in the same directory.
std::string temporary_prefix(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? path.size() : path.size() - slash - 1;
  if (base + 17 <= 255) return path + ".tmp.";
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".dualgibbs.tmp.";
}
}  // namespace

AtomicOutput::AtomicOutput(std::string path) : m_path(std::move(path)), m_out(&m_buf) {
  m_kind = classify_destination(m_path);
  if (m_kind == Destination::Stdout) {
    std::cout.flush();  // what the command printed before comes first
    std::fflush(stdout);
    m_fd = STDOUT_FILENO;
  } else if (m_kind == Destination::Special) {
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (m_fd < 0) {
      const int err = errno;
      m_done = true;
      throw cannot_write(m_path, std::strerror(err));
    }
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || !is_special(st.st_mode)) {  // replaced by a file since classify_destination()
      close_fd();
      m_done = true;
      throw cannot_write(m_path, "it changed while being opened");
    }
  } else {
    // Same directory as the destination (same file system: the final rename is atomic), an unpredictable name.
    ExclusiveFile f;
    try {
      f = create_exclusive_file(temporary_prefix(m_path), m_path);
    } catch (...) {
      m_done = true;
      throw;
    }
    m_fd = f.fd;
    m_tmp = std::move(f.path);
    m_slot = register_temporary(m_tmp);
  }
  m_buf.attach(m_fd);
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::close_fd() noexcept {
  if (m_fd >= 0 && m_fd != STDOUT_FILENO) ::close(m_fd);  // standard output stays open
  m_fd = -1;
}

void AtomicOutput::discard() noexcept {
  if (m_done) return;
  m_done = true;
  m_buf.drop();
  close_fd();
  if (!m_tmp.empty()) ::unlink(m_tmp.c_str());
  unregister_temporary(m_slot);
}

void AtomicOutput::check() const {
  if (m_buf.error() != 0 || !m_out)
    throw std::runtime_error("error while writing '" + m_path +
                             "': " + (m_buf.error() ? std::strerror(m_buf.error()) : "the stream failed") +
                             (m_tmp.empty() ? "" : " (nothing was written)"));
}

void AtomicOutput::flush() {
  if (m_done) throw std::logic_error("AtomicOutput::flush: '" + m_path + "' already committed or discarded");
  m_out.flush();
  check();
}

void AtomicOutput::commit() {
  if (m_done) throw std::logic_error("AtomicOutput::commit: '" + m_path + "' already committed or discarded");
  m_out.flush();
  // close() can report a deferred write error (NFS): count it as one.
  int close_error = 0;
  if (m_fd >= 0 && m_fd != STDOUT_FILENO && ::close(m_fd) != 0) close_error = errno;
  if (m_fd != STDOUT_FILENO) m_fd = -1;
  try {
    check();
    if (close_error != 0)
      throw std::runtime_error("error while writing '" + m_path + "': " + std::strerror(close_error));
  } catch (...) {
    discard();
    throw;
  }
  if (m_kind == Destination::NewFile && std::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
    const int err = errno;
    discard();
    throw cannot_write(m_path, std::strerror(err));
  }
  m_done = true;
  m_fd = -1;
  unregister_temporary(m_slot);
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  AtomicOutput out(path);
  fill(out.stream());
  out.commit();
}

}  // namespace dualgibbs::api
