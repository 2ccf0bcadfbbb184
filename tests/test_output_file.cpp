// The library's safe output files (api/output_file.hpp): exclusive temporary files that never follow a planted link,
// atomic replacement of regular files, direct writes to devices and FIFOs that are never replaced, refusals.
#define BOOST_TEST_MODULE output_file
#include <boost/test/unit_test.hpp>

#include <dualgibbs/api/output_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace dualgibbs::api;

namespace {

// A fresh directory under $TMPDIR, removed at the end of the test.
struct TempDir {
  fs::path dir;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "dg_output_file_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool is_symlink(const std::string& path) { return fs::is_symlink(fs::symlink_status(path)); }

mode_t file_type(const std::string& path) {
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::lstat(path.c_str(), &st), 0);
  return st.st_mode & S_IFMT;
}

// Suffixes handed out in order (the names a test plants links at).
struct Names {
  std::vector<std::string> names;
  std::size_t next = 0;
  std::string operator()() { return names.at(next++); }
};

// A message check for BOOST_CHECK_EXCEPTION.
auto says(const std::string& part) {
  return [part](const std::exception& e) {
    BOOST_TEST_MESSAGE(e.what());
    return std::string(e.what()).find(part) != std::string::npos;
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exclusive_temporary_files)

BOOST_AUTO_TEST_CASE(planted_links_at_the_chosen_names_are_skipped_never_written_through) {
  TempDir t;
  write_text(t / "victim", "precious");
  fs::create_symlink(t / "victim", t / "out.tmp.AAAA");           // a link to an existing file
  fs::create_symlink(t / "created_through", t / "out.tmp.BBBB");  // a dangling link: O_CREAT would create its target
  write_text(t / "out.tmp.CCCC", "someone else's file");          // an ordinary file: never truncated
  Names names{{"AAAA", "BBBB", "CCCC", "DDDD"}};
  const ExclusiveFile f = create_exclusive_file(t / "out.tmp.", t / "out", std::ref(names));
  BOOST_REQUIRE_GE(f.fd, 0);
  BOOST_CHECK_EQUAL(f.path, t / "out.tmp.DDDD");
  BOOST_CHECK_EQUAL(names.next, 4u);
  BOOST_CHECK_EQUAL(::write(f.fd, "new", 3), 3);
  ::close(f.fd);
  BOOST_CHECK_EQUAL(read_all(t / "victim"), "precious");
  BOOST_CHECK(!fs::exists(t / "created_through"));
  BOOST_CHECK(is_symlink(t / "out.tmp.AAAA"));
  BOOST_CHECK(is_symlink(t / "out.tmp.BBBB"));
  BOOST_CHECK_EQUAL(read_all(t / "out.tmp.CCCC"), "someone else's file");
  BOOST_CHECK_EQUAL(read_all(t / "out.tmp.DDDD"), "new");
}

BOOST_AUTO_TEST_CASE(fails_with_a_clear_error_when_every_name_is_a_planted_link) {
  TempDir t;
  write_text(t / "victim", "precious");
  fs::create_symlink(t / "victim", t / "out.tmp.AAAA");
  BOOST_CHECK_EXCEPTION(create_exclusive_file(
                            t / "out.tmp.", t / "out", [] { return std::string("AAAA"); }, 5),
                        std::invalid_argument, says("5 random names were all taken"));
  BOOST_CHECK_EQUAL(read_all(t / "victim"), "precious");
  BOOST_CHECK(is_symlink(t / "out.tmp.AAAA"));
}

BOOST_AUTO_TEST_CASE(names_the_system_reason_for_a_missing_directory) {
  TempDir t;
  BOOST_CHECK_EXCEPTION(create_exclusive_file(t / "no/such/out.tmp.", t / "no/such/out"), std::invalid_argument,
                        says("No such file or directory"));
}

BOOST_AUTO_TEST_CASE(random_suffixes_are_12_letters_or_digits_and_differ) {
  const std::string a = random_name_suffix(), b = random_name_suffix();
  BOOST_CHECK_EQUAL(a.size(), 12u);
  for (char c : a) BOOST_CHECK(std::isalnum(static_cast<unsigned char>(c)));
  BOOST_CHECK_NE(a, b);  // fails with probability 62^-12
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(atomic_output)

BOOST_AUTO_TEST_CASE(a_new_file_appears_only_on_commit_with_no_temporary_left) {
  TempDir t;
  const std::string path = t / "r.csv";
  {
    AtomicOutput out(path);
    BOOST_CHECK(out.destination() == Destination::NewFile);
    BOOST_CHECK_EQUAL(out.temporary_path().rfind(path + ".tmp.", 0), 0u);
    BOOST_CHECK_EQUAL(out.temporary_path().size(), path.size() + 5 + 12);
    BOOST_CHECK(fs::exists(out.temporary_path()));
    out.stream() << std::string(200000, 'x') << "end";  // more than the 64 KiB buffer
    BOOST_CHECK(!fs::exists(path));
    out.commit();
  }
  BOOST_CHECK_EQUAL(read_all(path), std::string(200000, 'x') + "end");
  BOOST_CHECK((t.entries() == std::vector<std::string>{"r.csv"}));
}

BOOST_AUTO_TEST_CASE(a_regular_file_is_replaced_only_on_commit_and_kept_on_discard) {
  TempDir t;
  const std::string path = t / "r.csv";
  write_text(path, "old");
  {
    AtomicOutput out(path);
    out.stream() << "half-written";
  }  // destructor: discarded
  BOOST_CHECK_EQUAL(read_all(path), "old");
  BOOST_CHECK((t.entries() == std::vector<std::string>{"r.csv"}));
  write_atomically(path, [](std::ostream& o) { o << "new"; });
  BOOST_CHECK_EQUAL(read_all(path), "new");
  BOOST_CHECK_EQUAL(file_type(path), mode_t(S_IFREG));
}

BOOST_AUTO_TEST_CASE(a_symbolic_link_to_a_file_or_nowhere_is_refused_and_left_alone) {
  TempDir t;
  write_text(t / "victim", "precious");
  fs::create_symlink(t / "victim", t / "link.csv");
  fs::create_symlink(t / "would_be_created", t / "dangling.csv");
  BOOST_CHECK_EXCEPTION(AtomicOutput(t / "link.csv"), std::invalid_argument,
                        says("is a symbolic link to a file; dualgibbs never writes a file through a link"));
  BOOST_CHECK_EXCEPTION(AtomicOutput(t / "dangling.csv"), std::invalid_argument, says("leads nowhere"));
  BOOST_CHECK_EQUAL(read_all(t / "victim"), "precious");
  BOOST_CHECK(is_symlink(t / "link.csv"));
  BOOST_CHECK(is_symlink(t / "dangling.csv"));
  BOOST_CHECK(!fs::exists(t / "would_be_created"));
  BOOST_CHECK((t.entries() == std::vector<std::string>{"dangling.csv", "link.csv", "victim"}));
}

BOOST_AUTO_TEST_CASE(directories_and_empty_names_are_refused) {
  TempDir t;
  fs::create_directory(t / "d");
  fs::create_directory_symlink(t / "d", t / "dlink");
  BOOST_CHECK_EXCEPTION(AtomicOutput(t / "d"), std::invalid_argument, says("it is a directory"));
  BOOST_CHECK_EXCEPTION(AtomicOutput(t / "dlink"), std::invalid_argument, says("it is a directory"));
  BOOST_CHECK_EXCEPTION(AtomicOutput(""), std::invalid_argument, says("empty name"));
}

BOOST_AUTO_TEST_CASE(a_fifo_is_written_directly_and_stays_a_fifo) {
  TempDir t;
  const std::string fifo = t / "pipe";
  BOOST_REQUIRE_EQUAL(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });  // opening the FIFO's write end waits for it
  std::string sent;
  for (int i = 0; i < 100000; ++i) sent += std::to_string(i) + "\n";  // far more than the pipe's buffer
  {
    AtomicOutput out(fifo);
    if (out.destination() != Destination::Special) {  // a regression: release the reader rather than hang
      ::close(::open(fifo.c_str(), O_WRONLY));
      reader.join();
      BOOST_FAIL("the FIFO is not written directly");
    }
    BOOST_CHECK(out.temporary_path().empty());
    out.stream() << sent;
    out.commit();
  }
  reader.join();
  BOOST_CHECK(received == sent);
  BOOST_CHECK_EQUAL(file_type(fifo), mode_t(S_IFIFO));
  BOOST_CHECK((t.entries() == std::vector<std::string>{"pipe"}));
}

BOOST_AUTO_TEST_CASE(dev_null_is_written_directly_and_never_replaced_or_removed) {
  BOOST_REQUIRE_EQUAL(file_type("/dev/null"), mode_t(S_IFCHR));
  write_atomically("/dev/null", [](std::ostream& o) { o << std::string(100000, 'x'); });
  BOOST_CHECK_EQUAL(file_type("/dev/null"), mode_t(S_IFCHR));
  {
    AtomicOutput out("/dev/null");
    out.stream() << "discarded";
  }  // discard: a device is closed, never removed
  BOOST_CHECK_EQUAL(file_type("/dev/null"), mode_t(S_IFCHR));
  BOOST_CHECK(is_stream_destination("/dev/null"));
  BOOST_CHECK(is_stream_destination("-"));
}

BOOST_AUTO_TEST_CASE(a_link_to_a_device_is_written_through_and_stays_a_link) {
  TempDir t;
  fs::create_symlink("/dev/null", t / "null");
  BOOST_CHECK(classify_destination(t / "null") == Destination::Special);
  write_atomically(t / "null", [](std::ostream& o) { o << "x"; });
  BOOST_CHECK(is_symlink(t / "null"));
  BOOST_CHECK_EQUAL(file_type("/dev/null"), mode_t(S_IFCHR));
}

BOOST_AUTO_TEST_CASE(a_full_device_fails_with_the_reason_and_is_not_replaced) {
  if (!fs::exists("/dev/full")) {
    BOOST_TEST_MESSAGE("no /dev/full here: skipped");
    return;
  }
  BOOST_CHECK_EXCEPTION(write_atomically("/dev/full", [](std::ostream& o) { o << std::string(100000, 'x'); }),
                        std::runtime_error, says("No space left on device"));
  BOOST_CHECK_EQUAL(file_type("/dev/full"), mode_t(S_IFCHR));
}

BOOST_AUTO_TEST_CASE(regular_files_and_missing_paths_are_not_streams) {
  TempDir t;
  write_text(t / "f", "x");
  BOOST_CHECK(!is_stream_destination(t / "f"));
  BOOST_CHECK(!is_stream_destination(t / "missing"));
  BOOST_CHECK(!is_stream_destination(t.dir.string()));
  BOOST_CHECK(classify_destination("-") == Destination::Stdout);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(aliasing)

BOOST_AUTO_TEST_CASE(same_destination_compares_files_not_spellings) {
  TempDir t;
  fs::create_directory(t / "d");
  fs::create_directory_symlink(t / "d", t / "link");
  write_text(t / "d/x.csv", "x");
  fs::create_hard_link(t / "d/x.csv", t / "d/hard.csv");
  BOOST_TEST(same_destination(t / "d/x.csv", t / "d/./x.csv"));
  BOOST_TEST(same_destination(t / "d/x.csv", t / "link/x.csv"));      // through a link to the directory
  BOOST_TEST(same_destination(t / "d/x.csv", t / "d/hard.csv"));      // a hard link: one inode
  BOOST_TEST(same_destination(t / "d/new.csv", t / "link/new.csv"));  // not there yet: the resolved names
  BOOST_TEST(same_destination(t / "d/new.csv", t / "d/../d/new.csv"));
  BOOST_TEST(!same_destination(t / "d/new.csv", t / "d/other.csv"));
  BOOST_TEST(!same_destination(t / "d/x.csv", t / "d/new.csv"));  // one exists, the other does not
  BOOST_TEST(same_destination("-", "/dev/stdout"));
  BOOST_TEST(!same_destination("-", t / "d/x.csv"));
  BOOST_TEST(!same_destination("", ""));
}

BOOST_AUTO_TEST_CASE(long_names_get_a_short_temporary_name) {
  TempDir t;
  const std::string name = t / (std::string(250, 'a') + ".csv");  // 254 bytes: no room for ".tmp.XXXXXXXXXXXX"
  AtomicOutput out(name);
  BOOST_TEST(fs::path(out.temporary_path()).filename().string().rfind(".dualgibbs.tmp.", 0) == 0);
  out.stream() << "x";
  out.commit();
  BOOST_TEST(read_all(name) == "x");
}

BOOST_AUTO_TEST_SUITE_END()
