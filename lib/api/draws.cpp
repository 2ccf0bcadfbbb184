// The draws file formats (api/draws.hpp): the CSV and binary writers of a sampling run, and the readers of those
// formats and .npy for validation, the binary and .npy ones streamed block by block.
#include <dualgibbs/api/draws.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace dualgibbs::api {

// ---- writing -----------------------------------------------------------------------------------------------------

void CsvDrawsWriter::begin(Eigen::Index, std::size_t, std::uint64_t) { m_out << std::setprecision(17); }

void CsvDrawsWriter::write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) {
  const Eigen::Index dim = states.rows();
  if (!m_header) {
    m_out << "sweep,chain";
    for (Eigen::Index i = 0; i < dim; ++i) m_out << ",c" << i;
    m_out << '\n';
    m_header = true;
  }
  for (Eigen::Index c = 0; c < states.cols(); ++c) {
    m_out << sweep << ',' << c;
    for (Eigen::Index i = 0; i < dim; ++i) m_out << ',' << states(i, c);
    m_out << '\n';
  }
}

namespace {

void put_u64(std::ostream& out, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  out.write(reinterpret_cast<const char*>(b), 8);
}

void put_f64(std::ostream& out, double x) {
  std::uint64_t v;
  static_assert(sizeof v == sizeof x, "double is 64 bits");
  std::memcpy(&v, &x, sizeof v);
  put_u64(out, v);
}

}  // namespace

void BinaryDrawsWriter::begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) {
  m_out.write("DGSAMPL1", 8);
  put_u64(m_out, static_cast<std::uint64_t>(dim));
  put_u64(m_out, chains);
  put_u64(m_out, checkpoints);
}

void BinaryDrawsWriter::write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) {
  put_u64(m_out, sweep);
  for (Eigen::Index c = 0; c < states.cols(); ++c)
    for (Eigen::Index i = 0; i < states.rows(); ++i) put_f64(m_out, states(i, c));
}

// ---- reading -----------------------------------------------------------------------------------------------------

// The file's layout: rows are draws; row r has its coordinates at values r * dim .. (r + 1) * dim - 1 in the
// logical (row-major) order, whatever the storage.
struct DrawsFile::State {
  enum class Storage { Memory, Binary, NpyC, NpyFortran2 };
  Storage storage = Storage::Memory;
  std::string path;
  std::ifstream in;
  Eigen::Index dim = 0;
  std::uint64_t data = 0;           // file offset of the first value (Binary: of the first checkpoint's sweep)
  std::size_t item = 8;             // bytes per value
  bool big = false;                 // big-endian values
  std::uint64_t per = 1;            // rows per group (binary: chains; .npy: the middle extent, or all rows)
  std::vector<double> values;       // Memory: row r is values[r * dim, (r + 1) * dim)
  std::vector<std::size_t> group;   // per row: its checkpoint (contiguous groups numbered from 0)
  std::vector<std::int64_t> chain;  // per row: its chain id (-1 if the file has none)
  std::vector<double> group_sweep;  // per group; NaN if unknown
  bool chain_ids = false;
  bool three_d = false;  // .npy of shape checkpoints x draws x coordinates
  std::vector<unsigned char> buffer;
  std::size_t rows() const { return group.size(); }
};

DrawsFile::DrawsFile() = default;
DrawsFile::~DrawsFile() = default;
DrawsFile::DrawsFile(DrawsFile&&) noexcept = default;
DrawsFile& DrawsFile::operator=(DrawsFile&&) noexcept = default;

namespace {

using State = DrawsFile::State;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument("validate: draws file '" + path + "': " + what);
}

constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 34;  // 128 GB of doubles: beyond any machine here

std::uint64_t file_size(std::ifstream& in) {
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  in.seekg(0, std::ios::beg);
  return end < 0 ? 0 : static_cast<std::uint64_t>(end);
}

// A pipe or FIFO (--draws <(...)) can be neither sized nor read twice: its bytes are copied to a temporary file that
// is unlinked at once (so nothing is left behind), and `in` is reopened on it, to be read as any regular file
// (streamed: a copy larger than memory is fine).
void spool(std::ifstream& in, const std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir && *dir ? dir : "/tmp") + "/dualgibbs-draws-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, std::string("cannot copy the stream to a temporary file: ") + std::strerror(errno));
  ::unlink(name.c_str());
  std::vector<char> buffer(1 << 16);
  bool ok = true;
  while (ok && in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())), in.gcount() > 0) {
    const char* p = buffer.data();
    for (auto left = static_cast<std::size_t>(in.gcount()); ok && left > 0;) {
      const ssize_t w = ::write(fd, p, left);
      ok = w > 0 || (w < 0 && errno == EINTR);
      if (w > 0) p += w, left -= static_cast<std::size_t>(w);
    }
  }
  const int err = errno;
  in.close();
  if (ok) in.open("/proc/self/fd/" + std::to_string(fd), std::ios::binary);
  ::close(fd);
  if (!ok || !in) fail(path, std::string("cannot copy the stream to a temporary file: ") + std::strerror(err));
}

// a * b, or fail if it overflows 64 bits.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& path, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) fail(path, what + " overflows");
  return a * b;
}

void check_finite(double v, const std::string& path, const std::string& where) {
  if (!std::isfinite(v)) {
    std::ostringstream os;
    os << where << " is " << v << " (not finite)";
    fail(path, os.str());
  }
}

// ---- binary: "DGSAMPL1", uint64 dim, chains, checkpoints; per checkpoint uint64 sweep, chains x dim float64 ----

std::uint64_t get_u64(const unsigned char* b) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

void open_binary(State& r, std::ifstream& in, std::uint64_t size, const std::string& path) {
  unsigned char head[32];
  if (size < 32 || !in.read(reinterpret_cast<char*>(head), 32)) fail(path, "truncated binary header (32 bytes needed)");
  const std::uint64_t dim = get_u64(head + 8), chains = get_u64(head + 16), checkpoints = get_u64(head + 24);
  if (dim == 0 || chains == 0 || checkpoints == 0)
    fail(path, "binary header gives dim " + std::to_string(dim) + ", chains " + std::to_string(chains) +
                   ", checkpoints " + std::to_string(checkpoints) +
                   " (all must be positive; an interrupted sample run?)");
  if (dim > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) fail(path, "dimension too large");
  const std::uint64_t per_checkpoint =
      8 + checked_mul(checked_mul(chains, dim, path, "chains x dim"), 8, path, "the checkpoint size");
  const std::uint64_t expected = 32 + checked_mul(checkpoints, per_checkpoint, path, "the data size");
  if (expected != size)
    fail(path, "binary header promises " + std::to_string(expected) + " bytes (" + std::to_string(checkpoints) +
                   " checkpoints of " + std::to_string(chains) + " chains x " + std::to_string(dim) +
                   " values), the file has " + std::to_string(size) + (size < expected ? " (truncated)" : ""));
  r.storage = State::Storage::Binary;
  r.dim = static_cast<Eigen::Index>(dim);
  r.data = 32;
  r.per = chains;
  r.chain_ids = true;
  for (std::uint64_t k = 0; k < checkpoints; ++k) {
    unsigned char sw[8];
    in.seekg(static_cast<std::streamoff>(32 + k * per_checkpoint));
    if (!in.read(reinterpret_cast<char*>(sw), 8)) fail(path, "read error in checkpoint " + std::to_string(k));
    r.group_sweep.push_back(static_cast<double>(get_u64(sw)));
    for (std::uint64_t c = 0; c < chains; ++c) {
      r.group.push_back(k);
      r.chain.push_back(static_cast<std::int64_t>(c));
    }
  }
}

// ---- .npy: "\x93NUMPY", version, header length, a Python dict literal, then the raw array -------------------

// The value of key `key` in the header dict, as text ('<f8', False, (3, 4)).
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted[2] = {"'" + key + "'", "\"" + key + "\""};
  std::size_t at = std::string::npos;
  for (const auto& q : quoted)
    if ((at = header.find(q)) != std::string::npos) {
      at += q.size();
      break;
    }
  if (at == std::string::npos) fail(path, ".npy header has no '" + key + "'");
  at = header.find(':', at);
  if (at == std::string::npos) fail(path, ".npy header: no value for '" + key + "'");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size()) fail(path, ".npy header: no value for '" + key + "'");
  std::size_t end;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) fail(path, ".npy header: unterminated shape");
    return header.substr(at, end + 1 - at);
  }
  if (header[at] == '\'' || header[at] == '"') {
    end = header.find(header[at], at + 1);
    if (end == std::string::npos) fail(path, ".npy header: unterminated string for '" + key + "'");
    return header.substr(at + 1, end - at - 1);
  }
  end = header.find_first_of(",}", at);
  if (end == std::string::npos) fail(path, ".npy header: malformed value for '" + key + "'");
  std::string v = header.substr(at, end - at);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

std::vector<std::uint64_t> parse_shape(const std::string& text, const std::string& path) {
  std::vector<std::uint64_t> shape;
  std::size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc() || ptr == text.data() + i) fail(path, ".npy header: malformed shape " + text);
    shape.push_back(v);
    i = static_cast<std::size_t>(ptr - text.data());
    if (i < text.size() && text[i] == 'L') ++i;  // Python 2 longs
  }
  return shape;
}

// One value from its file bytes (little-endian unless `big`), as double.
double decode_one(const unsigned char* p, std::size_t item, bool big) {
  unsigned char b[8];
  std::memcpy(b, p, item);
  if (big) std::reverse(b, b + item);  // the file's bytes in little-endian order
  double v;
  if (item == 8) {
    std::uint64_t bits = 0;
    for (int k = 7; k >= 0; --k) bits = (bits << 8) | b[k];
    std::memcpy(&v, &bits, 8);
  } else {
    std::uint32_t bits = 0;
    for (int k = 3; k >= 0; --k) bits = (bits << 8) | b[k];
    float f;
    std::memcpy(&f, &bits, 4);
    v = f;
  }
  return v;
}

bool host_little_endian() {
  const std::uint32_t one = 1;
  unsigned char b[4];
  std::memcpy(b, &one, 4);
  return b[0] == 1;
}

void open_npy(State& r, std::ifstream& in, std::uint64_t size, const std::string& path) {
  unsigned char pre[10];
  if (size < 10 || !in.read(reinterpret_cast<char*>(pre), 10)) fail(path, "truncated .npy header");
  const int major = pre[6];
  std::uint64_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = pre[8] | (pre[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    unsigned char more[2];
    if (size < 12 || !in.read(reinterpret_cast<char*>(more), 2)) fail(path, "truncated .npy header");
    header_len = pre[8] | (pre[9] << 8) | (std::uint64_t{more[0]} << 16) | (std::uint64_t{more[1]} << 24);
    offset = 12;
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (offset + header_len > size)
    fail(path, "truncated .npy header (" + std::to_string(header_len) + " header bytes announced, " +
                   std::to_string(size - offset) + " in the file)");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) fail(path, "truncated .npy header");
  const std::string descr = dict_value(header, "descr", path);
  const std::string fortran = dict_value(header, "fortran_order", path);
  const std::vector<std::uint64_t> shape = parse_shape(dict_value(header, "shape", path), path);
  std::size_t item = 0;
  if (descr == "<f8" || descr == "=f8" || descr == ">f8") item = 8;
  if (descr == "<f4" || descr == "=f4" || descr == ">f4") item = 4;
  const bool big = !descr.empty() && descr[0] == '>';
  if (item == 0) fail(path, "unsupported .npy dtype '" + descr + "' (float64 '<f8' or float32 '<f4' expected)");
  if (fortran != "False" && fortran != "True") fail(path, ".npy header: fortran_order is '" + fortran + "'");
  const bool fortran_order = fortran == "True";
  if (shape.size() != 2 && shape.size() != 3)
    fail(path, ".npy array has " + std::to_string(shape.size()) +
                   " dimensions; expected draws x coordinates or checkpoints x draws x coordinates");
  std::uint64_t count = 1;
  for (auto s : shape) count = checked_mul(count, s, path, "the .npy shape");
  if (count == 0) fail(path, ".npy array is empty");
  const std::uint64_t bytes = checked_mul(count, item, path, "the .npy data size");
  if (offset + header_len + bytes != size)
    fail(path, ".npy header promises " + std::to_string(bytes) + " data bytes, the file has " +
                   std::to_string(size - offset - header_len) +
                   (offset + header_len + bytes > size ? " (truncated)" : ""));
  const bool three = shape.size() == 3;
  const std::uint64_t groups = three ? shape[0] : 1;
  const std::uint64_t per = three ? shape[1] : shape[0];
  const std::uint64_t dim = shape.back();
  if (dim > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) fail(path, "dimension too large");
  r.dim = static_cast<Eigen::Index>(dim);
  r.data = offset + header_len;
  r.item = item;
  r.big = big;
  r.per = per;
  r.three_d = three;
  r.chain_ids = three;
  for (std::uint64_t g = 0; g < groups; ++g) {
    r.group_sweep.push_back(three ? static_cast<double>(g) : std::numeric_limits<double>::quiet_NaN());
    for (std::uint64_t j = 0; j < per; ++j) {
      r.group.push_back(g);
      r.chain.push_back(three ? static_cast<std::int64_t>(j) : -1);
    }
  }
  if (!fortran_order) {
    r.storage = State::Storage::NpyC;
    return;
  }
  if (!three) {
    r.storage = State::Storage::NpyFortran2;
    return;
  }
  // Checkpoints x draws x coordinates in Fortran order: a draw's values lie groups x per values apart and a run of
  // draws is no run in the file, so this (rare) layout is read whole.
  if (count > kMaxValues) fail(path, "too many values");
  r.storage = State::Storage::Memory;
  std::vector<unsigned char> buf(bytes);
  in.seekg(static_cast<std::streamoff>(r.data));
  if (!in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(bytes)))
    fail(path, "read error in the .npy data");
  r.values.resize(count);
  for (std::uint64_t g = 0; g < groups; ++g)
    for (std::uint64_t j = 0; j < per; ++j)
      for (std::uint64_t i = 0; i < dim; ++i) {
        // Element (g, j, i) in Fortran order (first index fastest).
        const std::uint64_t at = g + groups * (j + per * i);
        const double v = decode_one(buf.data() + at * item, item, big);
        if (!std::isfinite(v))
          check_finite(v, path,
                       "element [" + std::to_string(g) + ", " + std::to_string(j) + ", " + std::to_string(i) + "]");
        r.values[(g * per + j) * dim + i] = v;
      }
}

// ---- CSV: optional header (sweep, chain, then coordinates), one draw per line ----------------------------------

// A field as it may be quoted in a message: at most 40 bytes, control bytes (ESC, BEL, CR, ...) shown as '?', so that
// an error never sends a file's control sequences to the terminal.
std::string printable(const std::string& cell) {
  std::string out = cell.substr(0, 40);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

void read_csv(DrawsFile::State& r, std::ifstream& in, const std::string& path) {
  std::string line;
  std::size_t lineno = 0;
  int sweep_col = -1, chain_col = -1;
  std::size_t ncols = 0;
  bool first = true;
  std::vector<double> row;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      cells.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto number = [&](const std::string& c, double& v) {
      std::size_t b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
      if (b == std::string::npos) return false;
      const char* p = c.data() + b;
      const char* q = c.data() + e + 1;
      if (*p == '+') ++p;
      const auto [ptr, ec] = std::from_chars(p, q, v);
      return ec == std::errc() && ptr == q;
    };
    if (first) {
      first = false;
      double v;
      if (!number(cells[0], v)) {  // a header
        for (std::size_t c = 0; c < cells.size(); ++c) {
          if (cells[c] == "sweep") sweep_col = static_cast<int>(c);
          if (cells[c] == "chain") chain_col = static_cast<int>(c);
        }
        ncols = cells.size();
        continue;
      }
      ncols = cells.size();
    }
    if (cells.size() != ncols)
      fail(path, "line " + std::to_string(lineno) + " has " + std::to_string(cells.size()) + " fields, expected " +
                     std::to_string(ncols));
    row.clear();
    double sweep = std::numeric_limits<double>::quiet_NaN();
    std::int64_t chain = -1;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double v;
      if (!number(cells[c], v))
        fail(path, "line " + std::to_string(lineno) + ", field " + std::to_string(c + 1) + ": '" + printable(cells[c]) +
                       "' is not a number");
      if (static_cast<int>(c) == sweep_col) {
        // A sweep that is not a count (nan, -1, 2.5) would make every row a checkpoint of its own.
        if (!(v >= 0 && v < 9e15 && v == std::floor(v)))
          fail(path, "line " + std::to_string(lineno) + ": sweep '" + printable(cells[c]) +
                         "' is not a non-negative integer");
        sweep = v;
      } else if (static_cast<int>(c) == chain_col) {
        if (!(v >= 0 && v < 9e15 && v == std::floor(v)))
          fail(path, "line " + std::to_string(lineno) + ": chain id '" + printable(cells[c]) +
                         "' is not a non-negative integer");
        chain = static_cast<std::int64_t>(v);
      } else {
        check_finite(v, path, "line " + std::to_string(lineno) + ", field " + std::to_string(c + 1));
        row.push_back(v);
      }
    }
    if (row.empty()) fail(path, "line " + std::to_string(lineno) + " has no coordinate values");
    if (r.values.size() + row.size() > kMaxValues) fail(path, "too many values");
    r.dim = static_cast<Eigen::Index>(row.size());
    r.values.insert(r.values.end(), row.begin(), row.end());
    // Checkpoints: consecutive rows with the same sweep (every row its own group without a sweep column only when
    // there are chain ids... which sample files always pair with sweeps).
    if (r.group.empty() || (sweep_col >= 0 && !(sweep == r.group_sweep.back()))) r.group_sweep.push_back(sweep);
    r.group.push_back(r.group_sweep.size() - 1);
    r.chain.push_back(chain);
  }
  if (in.bad()) fail(path, "read error");
  if (r.rows() == 0) fail(path, "no draws (an empty file, or a header only)");
  r.chain_ids = chain_col >= 0;
}

}  // namespace

DrawLayout parse_draw_layout(const std::string& name) {
  if (name == "auto") return DrawLayout::Auto;
  if (name == "independent") return DrawLayout::Independent;
  if (name == "chain") return DrawLayout::Chain;
  throw std::invalid_argument("validate: unknown --layout '" + name + "' (expected auto, independent or chain)");
}

DrawsFile open_draws_file(const std::string& path) {
  DrawsFile f;
  f.state = std::make_unique<State>();
  State& r = *f.state;
  r.path = path;
  r.in.open(path, std::ios::binary);
  std::ifstream& in = r.in;
  if (!in) fail(path, std::string("cannot open it: ") + std::strerror(errno));
  if (in.tellg() < 0) spool(r.in, path);  // a pipe or FIFO: read from a regular copy
  const std::uint64_t size = file_size(in);
  if (size == 0) fail(path, "the file is empty");
  char magic[8] = {};
  in.read(magic, static_cast<std::streamsize>(std::min<std::uint64_t>(8, size)));
  in.clear();
  in.seekg(0);
  if (size >= 8 && std::memcmp(magic, "DGSAMPL1", 8) == 0) {
    open_binary(r, in, size, path);
    f.format = "binary";
  } else if (magic[0] == '\x93') {  // the .npy magic "\x93NUMPY" (checked with the rest of the header)
    if (size < 6 || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "truncated or malformed .npy magic");
    open_npy(r, in, size, path);
    f.format = "npy";
  } else {
    read_csv(r, in, path);
    f.format = "csv";
  }
  f.rows = r.rows();
  f.dimension = r.dim;
  return f;
}

namespace {
// True if no checkpoint holds two rows of one chain: only then are a checkpoint's rows independent draws (a file
// whose rows all carry one chain id holds successive states of that chain).
bool distinct_chains_per_group(const DrawsFile::State& r) {
  std::vector<std::int64_t> ids;
  for (std::size_t k = 0; k < r.rows(); ++k) {
    ids.push_back(r.chain[k]);
    if (k + 1 == r.rows() || r.group[k + 1] != r.group[k]) {
      std::sort(ids.begin(), ids.end());
      if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) return false;
      ids.clear();
    }
  }
  return true;
}
}  // namespace

std::vector<PlannedCheckpoint> DrawsFile::plan(DrawLayout layout, std::string& description) const {
  const State& r = *state;
  const std::size_t groups = r.group_sweep.size();
  // Groups are contiguous runs of rows: the smallest run.
  std::size_t min_per_group = r.rows();
  for (std::size_t k = 0, run = 0; k < r.rows(); ++k) {
    ++run;
    if (k + 1 == r.rows() || r.group[k + 1] != r.group[k]) {
      min_per_group = std::min(min_per_group, run);
      run = 0;
    }
  }
  bool independent;
  if (layout == DrawLayout::Independent)
    independent = true;
  else if (layout == DrawLayout::Chain)
    independent = false;
  else
    independent = r.chain_ids && min_per_group >= kMinValidationDraws && distinct_chains_per_group(r);

  std::vector<PlannedCheckpoint> out;
  if (independent) {
    for (std::size_t g = 0, row = 0; g < groups; ++g) {
      PlannedCheckpoint cp;
      cp.sweep = r.group_sweep[g];
      for (; row < r.rows() && r.group[row] == g; ++row) cp.rows.push_back(row);
      out.push_back(std::move(cp));
    }
    description = std::to_string(groups) + " checkpoint(s) of independent draws (one per chain)";
    return out;
  }
  // Successive states: each chain's rows, in file order, form one chain; chains in order of first appearance.
  std::vector<std::int64_t> order;
  std::map<std::int64_t, std::vector<std::size_t>> rows_of;
  for (std::size_t k = 0; k < r.rows(); ++k) {
    const std::int64_t c = r.chain_ids ? r.chain[k] : -1;
    if (!rows_of.count(c)) order.push_back(c);
    rows_of[c].push_back(k);
  }
  PlannedCheckpoint cp;
  cp.sweep = r.group_sweep.back();
  cp.chain_offsets.push_back(0);
  for (auto c : order) {
    const auto& rows_c = rows_of[c];
    cp.rows.insert(cp.rows.end(), rows_c.begin(), rows_c.end());
    cp.chain_offsets.push_back(cp.rows.size());
  }
  out.push_back(std::move(cp));
  description = "successive states of " + std::to_string(order.size()) + " chain(s), " + std::to_string(r.rows()) +
                " draws pooled into one checkpoint (batch means)";
  return out;
}

namespace {

// Where value `v` (row * dim + coordinate) is, as the file's format names it.
std::string value_location(const State& r, std::uint64_t v) {
  const auto dim = static_cast<std::uint64_t>(r.dim);
  const std::uint64_t row = v / dim, i = v % dim;
  if (r.storage == State::Storage::Binary)
    return "checkpoint " + std::to_string(row / r.per) + ", chain " + std::to_string(row % r.per) + ", coordinate " +
           std::to_string(i);
  if (r.three_d)
    return "element [" + std::to_string(row / r.per) + ", " + std::to_string(row % r.per) + ", " + std::to_string(i) +
           "]";
  return "element [" + std::to_string(row) + ", " + std::to_string(i) + "]";
}

void read_bytes(State& r, std::uint64_t offset, std::size_t bytes, void* out) {
  r.in.clear();
  r.in.seekg(static_cast<std::streamoff>(offset));
  if (!r.in.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes)))
    fail(r.path, "read error at byte " + std::to_string(offset));
}

// Values [first, first + count) of the logical order (first = row * dim + coordinate), stored contiguously in the
// file at byte `offset`, into out[0], out[stride], ...; every value checked to be finite.
void read_values(State& r, std::uint64_t offset, std::uint64_t first, std::size_t count, double* out,
                 std::size_t stride, std::uint64_t logical_step) {
  static const bool little = host_little_endian();
  if (r.item == 8 && !r.big && little && stride == 1) {
    read_bytes(r, offset, count * 8, out);
  } else {
    r.buffer.resize(count * r.item);
    read_bytes(r, offset, count * r.item, r.buffer.data());
    for (std::size_t t = 0; t < count; ++t) out[t * stride] = decode_one(r.buffer.data() + t * r.item, r.item, r.big);
  }
  for (std::size_t t = 0; t < count; ++t)
    if (!std::isfinite(out[t * stride]))
      check_finite(out[t * stride], r.path, value_location(r, first + t * logical_step));
}

// Rows [first, first + count) into out (dim x count, column-major); the rows lie in one checkpoint of a binary file.
void read_run(State& r, std::size_t first, std::size_t count, double* out) {
  const auto dim = static_cast<std::uint64_t>(r.dim);
  const std::uint64_t v0 = static_cast<std::uint64_t>(first) * dim;
  switch (r.storage) {
    case State::Storage::Memory:
      std::copy(r.values.begin() + static_cast<std::ptrdiff_t>(v0),
                r.values.begin() + static_cast<std::ptrdiff_t>(v0 + count * dim), out);
      return;
    case State::Storage::NpyC:
      read_values(r, r.data + v0 * r.item, v0, count * dim, out, 1, 1);
      return;
    case State::Storage::Binary: {
      const std::uint64_t k = first / r.per, c = first % r.per;
      const std::uint64_t offset = r.data + k * (8 + r.per * dim * 8) + 8 + c * dim * 8;
      read_values(r, offset, v0, count * dim, out, 1, 1);
      return;
    }
    case State::Storage::NpyFortran2:
      // Element (j, i) at j + rows * i: coordinate i of the run is contiguous in the file.
      for (std::uint64_t i = 0; i < dim; ++i)
        read_values(r, r.data + (first + r.per * i) * r.item, v0 + i, count, out + i, dim, dim);
      return;
  }
}

}  // namespace

void DrawsFile::read(const std::size_t* rows, std::size_t count, Eigen::MatrixXd& out) {
  State& r = *state;
  out.resize(r.dim, static_cast<Eigen::Index>(count));
  for (std::size_t t = 0; t < count;) {
    // A run of consecutive rows (inside one checkpoint of a binary file).
    std::size_t e = t + 1;
    while (e < count && rows[e] == rows[e - 1] + 1 &&
           (r.storage != State::Storage::Binary || rows[e] / r.per == rows[t] / r.per))
      ++e;
    read_run(r, rows[t], e - t, out.data() + static_cast<std::ptrdiff_t>(t) * r.dim);
    t = e;
  }
}

}  // namespace dualgibbs::api
