#pragma once
/// \file output_file.hpp
/// One result file written safely, as the command writes every result and a program can write its own: a failed or
/// interrupted run leaves no partial file, and no write ever follows a link planted at a temporary name. Depends on
/// POSIX and the standard library only.
///
/// Where the bytes go depends on what the destination PATH is when the file is opened:
///
///   PATH                                   written                                       on failure or signal
///   does not exist, or a regular file      to a new temporary file in PATH's directory,  the temporary file is
///                                          renamed over PATH once complete (atomic)      removed; PATH untouched
///   "-" or "/dev/stdout"                   to standard output (descriptor 1), directly,  nothing is removed
///                                          whatever it is (a terminal, a pipe, a file)
///   a character or block device, a FIFO    directly: opened for writing (no truncation,  nothing is removed
///   (also through a link: /dev/fd/2)       never renamed over, never removed)
///   a directory                            refused (std::invalid_argument)
///   a symbolic link to a regular file, a   refused (std::invalid_argument): dualgibbs never writes a file
///   dangling link, a link loop             through a link; name the target itself, or remove the link
///   a socket                               refused by the system (open() gives ENXIO)
///
/// The temporary file is PATH.tmp.XXXXXXXXXXXX (12 random letters and digits, about 71 bits;
/// .dualgibbs.tmp.XXXXXXXXXXXX in PATH's directory when PATH's file name is too long to take the suffix within 255
/// bytes), created with O_CREAT | O_EXCL | O_NOFOLLOW: if anything (a file, a planted symbolic link) already has that
/// name, the creation fails and another random name is tried, so no write ever follows a link planted at a temporary
/// name and no existing file is ever truncated. Its permissions are those of a new file (0666 minus the umask). SIGINT,
/// SIGTERM and SIGHUP remove the temporary files of the process before it dies.

#include <dualgibbs/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace dualgibbs::api {

/// How a destination path is written (see the table at the top of this file).
enum class Destination {
  NewFile,  ///< does not exist or is a regular file: temporary file + rename
  Stdout,   ///< "-" or "/dev/stdout": standard output
  Special,  ///< an existing device or FIFO (possibly reached through a link): written directly
};

/// Classifies `path` (see the table at the top of this file).
/// \param path the destination
/// \return how it is written
/// \throws std::invalid_argument for an empty path, a directory, or a symbolic link to anything but a device or
///         FIFO.
DUALGIBBS_EXPORT Destination classify_destination(const std::string& path);

/// True if `path` is standard output ("-", "/dev/stdout") or an existing device or FIFO (no sidecar can sit
/// "next to" it). Never throws: a path that classify_destination() would refuse is not a stream.
/// \param path the destination
/// \return whether it is standard output, a device or a FIFO
DUALGIBBS_EXPORT bool is_stream_destination(const std::string& path);

/// True if `a` and `b` name the same destination: both standard output ("-", "/dev/stdout"), the same existing file
/// (the same device and inode, however it is reached: another spelling, a link to its directory, a hard link), or,
/// for files that do not exist yet, the same name in the same directory once links in the directory are resolved.
/// Empty paths name nothing (false). Never throws.
/// \param a one destination
/// \param b another
/// \return whether writing both would write one file twice
DUALGIBBS_EXPORT bool same_destination(const std::string& a, const std::string& b) noexcept;

/// The 64-bit FNV-1a digest of a file's bytes (what AtomicOutput::digest() gives for the bytes it wrote).
/// \param path a regular file
/// \return the digest
/// \throws std::invalid_argument if the file cannot be read.
DUALGIBBS_EXPORT std::uint64_t file_digest(const std::string& path);

/// A digest as sidecars record it: "fnv1a64:" and 16 hexadecimal digits.
/// \param digest the digest
/// \return the text
DUALGIBBS_EXPORT std::string digest_text(std::uint64_t digest);

/// A new file created exclusively: the open descriptor and its path.
struct ExclusiveFile {
  int fd = -1;       ///< open for writing, close-on-exec
  std::string path;  ///< prefix + suffix
};

/// 12 random letters and digits from the system's random source (std::random_device).
/// \return the suffix
DUALGIBBS_EXPORT std::string random_name_suffix();

/// Creates the new file `prefix + suffix()` with open(O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666):
/// a name that already exists (whatever it is: a file, a symbolic link, dangling or not) is never opened; another
/// suffix is drawn, at most `attempts` times. `suffix` is a parameter so that tests can choose the names.
/// \param prefix the new file's path up to the suffix
/// \param what what the file is, for messages
/// \param suffix draws a suffix
/// \param attempts names tried at most
/// \return the open descriptor and the path
/// \throws std::invalid_argument naming `what` if every name is taken or on any other error (the system's reason:
///         no such directory, permission denied, ...).
DUALGIBBS_EXPORT ExclusiveFile create_exclusive_file(const std::string& prefix, const std::string& what,
                                                     const std::function<std::string()>& suffix = random_name_suffix,
                                                     int attempts = 100);

/// An output stream buffer on a file descriptor (64 KiB buffer, write(2) retried on EINTR and short writes).
/// A failed write makes sync()/overflow() fail (the stream's badbit) and keeps the error number.
class DUALGIBBS_EXPORT FdStreambuf : public std::streambuf {
 public:
  /// A buffer attached to no descriptor yet.
  FdStreambuf();
  /// Writes to `fd` from now on (the descriptor is not owned: the caller closes it).
  /// \param fd the descriptor
  void attach(int fd) noexcept { m_fd = fd; }
  /// \return the digest (64-bit FNV-1a, file_digest()'s) of every byte written to the descriptor so far
  std::uint64_t digest() const noexcept { return m_digest; }
  /// \return the errno of the first failed write, 0 if none
  int error() const noexcept { return m_error; }
  /// Drops the buffered bytes without writing them.
  void drop() noexcept { setp(m_buffer.data(), m_buffer.data() + m_buffer.size()); }

 protected:
  /// Writes the buffer out and stores `c`. \param c the character \return `c`, or EOF if a write failed
  int_type overflow(int_type c) override;
  /// Writes the buffer out. \return 0, or -1 if a write failed
  int sync() override;
  /// Writes `n` characters. \param s the characters \param n how many \return `n`, or fewer if a write failed
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool write_all(const char* p, std::size_t n) noexcept;
  bool flush_buffer() noexcept;
  int m_fd = -1;
  int m_error = 0;
  std::uint64_t m_digest;  // FNV-1a of the bytes written (its start value set by the constructor)
  std::vector<char> m_buffer;
};

/// One output file being written (see the table at the top of this file): to a temporary file that becomes
/// `path` on commit(), or directly to standard output, a device or a FIFO.
class DUALGIBBS_EXPORT AtomicOutput {
 public:
  /// Opens the destination: creates the temporary file next to `path`, or opens the device or FIFO for writing
  /// (which waits for a reader of a FIFO, as a shell redirection does), or takes standard output for "-" and
  /// "/dev/stdout".
  /// \param path the destination
  /// \throws std::invalid_argument naming `path` if it cannot be written or is refused (classify_destination()).
  explicit AtomicOutput(std::string path);
  /// discard() unless commit() succeeded.
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  /// \return the stream to write to (binary: the bytes written are the bytes stored; not seekable)
  std::ostream& stream() noexcept { return m_out; }
  /// \return the final path (as given; "-" for standard output)
  const std::string& path() const noexcept { return m_path; }
  /// \return the digest of the bytes written so far (after flush() or commit(): all of them), as file_digest() gives
  ///         it for the file: a sidecar that records it lets a reader tell its own data from another run's
  std::uint64_t digest() const noexcept { return m_buf.digest(); }
  /// \return how the destination is written
  Destination destination() const noexcept { return m_kind; }
  /// \return the temporary path (for messages and tests); empty if the destination is written directly
  const std::string& temporary_path() const noexcept { return m_tmp; }
  /// \throws std::runtime_error naming the path and the system's reason if a write has failed so far.
  void check() const;
  /// Writes out what is buffered and checks that every write so far succeeded, without renaming anything: the first
  /// step of committing several files together (flush each, then commit each), so that a failure leaves none.
  /// \throws std::runtime_error naming the path and the system's reason (disk full); the file stays open, and is
  ///         removed by discard() or the destructor.
  void flush();
  /// Flushes and checks that every write succeeded, then renames the temporary file into place (or, for a direct
  /// destination, closes it).
  /// \throws std::runtime_error on a write error (disk full), std::invalid_argument if the rename fails; either
  ///         way a temporary file is removed.
  void commit();
  /// Closes and removes the temporary file now (also done by the destructor); a direct destination is closed,
  /// never removed, and the bytes still buffered are dropped.
  void discard() noexcept;

 private:
  void close_fd() noexcept;
  std::string m_path;
  std::string m_tmp;
  Destination m_kind = Destination::NewFile;
  int m_fd = -1;
  FdStreambuf m_buf;
  std::ostream m_out;
  int m_slot = -1;  // index in the signal-cleanup table, -1 if not registered
  bool m_done = false;
};

/// Writes `fill`'s output to `path` through AtomicOutput (atomically for a regular file).
/// \param path the destination
/// \param fill writes the content to the stream it is given
/// \throws as AtomicOutput's constructor and commit(), and whatever `fill` throws (nothing is then left behind).
DUALGIBBS_EXPORT void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace dualgibbs::api
