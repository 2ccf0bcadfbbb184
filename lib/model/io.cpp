#include <dualgibbs/model/io.hpp>

#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/model/generators.hpp>

#include "core/enum_names.hpp"
#include "model/parameter_check.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dualgibbs {

namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<Index>::max();

[[noreturn]] void fail_at(const std::string& source, std::int64_t line, const std::string& what) {
  throw std::invalid_argument(source + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string_view> split_fields(std::string_view s, char comment) {
  if (auto c = s.find(comment); c != std::string_view::npos) s = s.substr(0, c);
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_int(std::string_view t, std::int64_t& out) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool parse_double(std::string_view t, double& out) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

// A token for an error message: at most 40 characters, non-printable bytes shown as '?', so that a
// binary file cannot spray control characters over the terminal.
std::string shown(std::string_view t) {
  std::string s(t.substr(0, 40));
  for (char& c : s)
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  if (t.size() > 40) s += "...";
  return "'" + s + "'";
}

// Why a token is not a valid integer: a run of digits that does not fit is "too large", anything else is
// not an integer at all.
std::string integer_problem(std::string_view t) {
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) t.remove_prefix(1);
  const bool digits = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? "is too large" : "is not an integer";
}

// Checks a standard deviation read from a file (the same test as the Model's, reported with the line).
void check_file_sd(double x, std::string_view token, const char* name, const std::string& source, std::int64_t line) {
  if (detail::is_valid_standard_deviation(x)) return;
  if (!std::isfinite(x) || !(x > 0.0))
    fail_at(source, line, std::string(name) + " " + shown(token) + " must be a finite positive standard deviation");
  fail_at(source, line,
          std::string(name) + " " + shown(token) + " gives a variance that overflows or underflows double precision");
}

// Opens a file named on the command line or in a spec, with a clear message for the usual mistakes.
std::ifstream open_input(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(std::string(what) + " '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(std::string("cannot open ") + what + " '" + path + "'");
  return in;
}

std::uint64_t pair_key(std::int64_t a, std::int64_t b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
}

// Reads one line; a line longer than 1 MiB is an error rather than an unbounded allocation. The limit is
// checked while reading (std::getline would first buffer the whole line: a multi-gigabyte file without a
// newline would be read into memory before being rejected).
bool next_line(std::istream& in, std::string& line, const std::string& source, std::int64_t lineno) {
  constexpr std::size_t kMaxLine = std::size_t{1} << 20;
  line.clear();
  const std::istream::sentry ok(in, true);  // keep leading whitespace
  if (!ok) {
    if (in.bad()) fail_at(source, lineno, "read error");
    return false;
  }
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (;;) {
    const auto c = buf->sbumpc();
    if (std::char_traits<char>::eq_int_type(c, std::char_traits<char>::eof())) {
      in.setstate(any ? std::ios::eofbit : std::ios::eofbit | std::ios::failbit);
      if (!any) return false;
      break;
    }
    any = true;
    if (c == '\n') break;
    if (line.size() >= kMaxLine) fail_at(source, lineno, "line longer than 1 MiB");
    line.push_back(std::char_traits<char>::to_char_type(c));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
  return true;
}

// True if the stream starts with the Matrix Market banner (case-insensitive); the stream is rewound.
bool starts_with_matrix_market_banner(std::istream& in) {
  const std::string banner = "%%matrixmarket";
  std::string head(banner.size(), '\0');
  in.read(&head[0], static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  in.clear();
  in.seekg(0);
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return head == banner;
}

}  // namespace

namespace {

// Calls record(lineno, fields) for every line of `in` that has fields before a '#' comment (lines counted from 1;
// blank and comment-only lines skipped): the loop of the edge-list and node-file readers.
template <class Record>
void for_each_record(std::istream& in, const std::string& source, Record&& record) {
  std::string line;
  std::int64_t lineno = 0;
  while (next_line(in, line, source, lineno + 1)) {
    ++lineno;
    const std::vector<std::string_view> fields = split_fields(line, '#');
    if (!fields.empty()) record(lineno, fields);
  }
}

}  // namespace

LoadedGraph read_edge_list(std::istream& in, const std::string& source, const ReadLimits& limits) {
  std::vector<Edge> edges;
  std::vector<double> sigma;
  std::unordered_map<std::uint64_t, std::int64_t> seen;  // edge -> line
  std::int64_t max_id = -1;
  for_each_record(in, source, [&](std::int64_t lineno, const std::vector<std::string_view>& f) {
    if (f.size() < 2 || f.size() > 3)
      fail_at(source, lineno, "expected 'u v [sigma_e]', found " + std::to_string(f.size()) + " fields");
    std::int64_t u, v;
    if (!parse_int(f[0], u)) fail_at(source, lineno, "node id " + shown(f[0]) + " " + integer_problem(f[0]));
    if (!parse_int(f[1], v)) fail_at(source, lineno, "node id " + shown(f[1]) + " " + integer_problem(f[1]));
    if (u < 0 || v < 0) fail_at(source, lineno, "negative node id " + std::to_string(std::min(u, v)));
    if (std::max(u, v) >= std::min<std::int64_t>(limits.max_nodes, kMaxIndex))
      fail_at(source, lineno,
              "node id " + std::to_string(std::max(u, v)) + " exceeds the limit of " +
                  std::to_string(std::min<std::int64_t>(limits.max_nodes, kMaxIndex)) + " nodes");
    if (u == v) fail_at(source, lineno, "self-loop at node " + std::to_string(u));
    double sg = std::numeric_limits<double>::quiet_NaN();
    if (f.size() == 3) {
      if (!parse_double(f[2], sg)) fail_at(source, lineno, "sigma_e " + shown(f[2]) + " is not a number");
      check_file_sd(sg, f[2], "sigma_e", source, lineno);
    }
    const auto [it, inserted] = seen.emplace(pair_key(u, v), lineno);
    if (!inserted)
      fail_at(source, lineno,
              "duplicate edge (" + std::to_string(u) + ", " + std::to_string(v) + "), first given on line " +
                  std::to_string(it->second));
    if (static_cast<std::int64_t>(edges.size()) >= limits.max_edges)
      fail_at(source, lineno, "more than " + std::to_string(limits.max_edges) + " edges");
    edges.push_back({static_cast<Index>(u), static_cast<Index>(v)});
    sigma.push_back(sg);
    max_id = std::max({max_id, u, v});
  });
  if (edges.empty()) throw std::invalid_argument(source + ": no edges (empty graph)");
  return {Graph(static_cast<Index>(max_id + 1), std::move(edges)), std::move(sigma)};
}

namespace {

// The reader of per-node value files (`v value` lines): node files and observation files share every rule (ids in
// range, each node at most once, comments); `check(value, token, lineno)` validates one value. Nodes without a
// line get NaN.
template <class Check>
std::vector<double> read_per_node_values(std::istream& in, Index num_nodes, const std::string& source,
                                         const char* value_name, Check&& check) {
  std::vector<double> values(static_cast<std::size_t>(std::max<Index>(num_nodes, 0)),
                             std::numeric_limits<double>::quiet_NaN());
  std::vector<std::int64_t> line_of(values.size(), 0);
  for_each_record(in, source, [&](std::int64_t lineno, const std::vector<std::string_view>& f) {
    if (f.size() != 2)
      fail_at(source, lineno,
              std::string("expected 'v ") + value_name + "', found " + std::to_string(f.size()) + " fields");
    std::int64_t v;
    double x;
    if (!parse_int(f[0], v)) fail_at(source, lineno, "node id " + shown(f[0]) + " " + integer_problem(f[0]));
    if (v < 0 || v >= num_nodes)
      fail_at(source, lineno,
              "node id " + std::to_string(v) + " is outside the graph's 0.." + std::to_string(num_nodes - 1));
    if (!parse_double(f[1], x))
      fail_at(source, lineno, std::string(value_name) + " " + shown(f[1]) + " is not a number");
    check(x, f[1], lineno);
    if (line_of[v] != 0)
      fail_at(source, lineno,
              "node " + std::to_string(v) + " given twice (first on line " + std::to_string(line_of[v]) + ")");
    line_of[v] = lineno;
    values[v] = x;
  });
  return values;
}

}  // namespace

std::vector<double> read_node_file(std::istream& in, Index num_nodes, const std::string& source) {
  return read_per_node_values(in, num_nodes, source, "s_v", [&](double x, std::string_view token, std::int64_t line) {
    check_file_sd(x, token, "s_v", source, line);
  });
}

std::vector<double> read_observation_file(std::istream& in, Index num_nodes, const std::string& source) {
  return read_per_node_values(in, num_nodes, source, "z_v", [&](double x, std::string_view token, std::int64_t line) {
    if (!std::isfinite(x)) fail_at(source, line, "observation z_v " + shown(token) + " is not finite");
  });
}

namespace {

// `v value` lines: the values, 0 for nodes without a line, and how many had one.
Observations read_node_values(const std::string& path, Index num_nodes, const char* what) {
  std::ifstream in = open_input(path, what);
  const std::vector<double> given = read_observation_file(in, num_nodes, path);
  Observations obs;
  obs.z = Eigen::VectorXd::Zero(num_nodes);
  for (Index v = 0; v < num_nodes; ++v)
    if (!std::isnan(given[static_cast<std::size_t>(v)])) {
      obs.z[v] = given[static_cast<std::size_t>(v)];
      ++obs.observed;
    }
  return obs;
}

}  // namespace

Observations read_observations(const std::string& path, Index num_nodes) {
  return read_node_values(path, num_nodes, "observation file");
}

namespace {

// The header and size line of a Matrix Market coordinate file.
struct MarketHeader {
  std::int64_t rows = 0, entries = 0, lineno = 0;  // lineno: the size line's
  bool pattern = false, symmetric = false;
};

MarketHeader read_market_header(std::istream& in, const std::string& source, const ReadLimits& limits) {
  std::string line;
  std::int64_t lineno = 1;
  if (!next_line(in, line, source, 1)) throw std::invalid_argument(source + ": empty file, no Matrix Market header");
  auto h = split_fields(line, '\0');
  std::vector<std::string> hdr;
  for (auto t : h) {
    std::string s(t);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    hdr.push_back(s);
  }
  if (hdr.size() != 5 || hdr[0] != "%%matrixmarket" || hdr[1] != "matrix")
    fail_at(source, 1, "not a Matrix Market header (expected '%%MatrixMarket matrix coordinate ...')");
  if (hdr[2] != "coordinate")
    fail_at(source, 1, "only the coordinate (sparse) format is supported, found '" + hdr[2] + "'");
  if (hdr[3] != "pattern" && hdr[3] != "real" && hdr[3] != "integer")
    fail_at(source, 1, "field '" + hdr[3] + "' is not supported (pattern, real or integer)");
  if (hdr[4] != "symmetric" && hdr[4] != "general")
    fail_at(source, 1, "symmetry '" + hdr[4] + "' is not supported (symmetric or general)");
  MarketHeader mh;
  mh.pattern = hdr[3] == "pattern";
  mh.symmetric = hdr[4] == "symmetric";

  std::vector<std::string_view> f;
  do {
    if (!next_line(in, line, source, lineno + 1)) fail_at(source, lineno, "truncated: no size line");
    ++lineno;
    f = split_fields(line, '%');
  } while (f.empty());
  std::int64_t rows, cols, nnz;
  if (f.size() != 3 || !parse_int(f[0], rows) || !parse_int(f[1], cols) || !parse_int(f[2], nnz))
    fail_at(source, lineno, "expected the size line 'rows cols entries' (three integers), found " + shown(line));
  if (rows != cols)
    fail_at(source, lineno, "the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square");
  if (rows <= 0) fail_at(source, lineno, "the matrix has no rows (empty graph)");
  if (rows > std::min<std::int64_t>(limits.max_nodes, kMaxIndex))
    fail_at(source, lineno,
            std::to_string(rows) + " rows exceed the limit of " +
                std::to_string(std::min<std::int64_t>(limits.max_nodes, kMaxIndex)) + " nodes");
  if (nnz < 0 || nnz > 2 * limits.max_edges + rows)
    fail_at(source, lineno,
            std::to_string(nnz) + " entries exceed the limit of " + std::to_string(limits.max_edges) + " edges");
  mh.rows = rows;
  mh.entries = nnz;
  mh.lineno = lineno;
  return mh;
}

// Anything after the declared entries must be blank or a comment.
void check_market_tail(std::istream& in, const std::string& source, std::int64_t lineno, std::int64_t entries) {
  std::string line;
  while (next_line(in, line, source, lineno + 1)) {
    ++lineno;
    if (!split_fields(line, '%').empty())
      fail_at(source, lineno, "more entries than the " + std::to_string(entries) + " declared");
  }
}

}  // namespace

SparseMatrix read_precision_matrix(std::istream& in, const std::string& source, const ReadLimits& limits) {
  const MarketHeader mh = read_market_header(in, source, limits);
  if (mh.pattern) fail_at(source, 1, "a precision matrix needs values: the field is 'pattern'");
  std::string line;
  std::int64_t lineno = mh.lineno;
  std::unordered_map<std::uint64_t, std::int64_t> seen;  // (i, j) as given -> its line
  std::vector<Eigen::Triplet<double, int>> entries;
  entries.reserve(static_cast<std::size_t>(mh.symmetric ? 2 * mh.entries : mh.entries));
  for (std::int64_t read = 0; read < mh.entries;) {
    if (!next_line(in, line, source, lineno + 1))
      throw std::invalid_argument(source + ": truncated: " + std::to_string(mh.entries) + " entries declared, " +
                                  std::to_string(read) + " found");
    ++lineno;
    const std::vector<std::string_view> f = split_fields(line, '%');
    if (f.empty()) continue;
    if (f.size() != 3) fail_at(source, lineno, "expected 'i j value', found " + std::to_string(f.size()) + " fields");
    std::int64_t i, j;
    double value;
    if (!parse_int(f[0], i)) fail_at(source, lineno, "row index " + shown(f[0]) + " " + integer_problem(f[0]));
    if (!parse_int(f[1], j)) fail_at(source, lineno, "column index " + shown(f[1]) + " " + integer_problem(f[1]));
    if (i < 1 || i > mh.rows || j < 1 || j > mh.rows)
      fail_at(source, lineno,
              "index (" + std::to_string(i) + ", " + std::to_string(j) + ") outside 1.." + std::to_string(mh.rows));
    if (!parse_double(f[2], value) || !std::isfinite(value))
      fail_at(source, lineno, "value " + shown(f[2]) + " is not a finite number");
    ++read;
    // A symmetric file gives each off-diagonal pair once, so (i, j) and (j, i) are the same entry there.
    const auto key = mh.symmetric ? pair_key(i - 1, j - 1)
                                  : (static_cast<std::uint64_t>(i - 1) << 32) | static_cast<std::uint64_t>(j - 1);
    const auto [it, inserted] = seen.emplace(key, lineno);
    if (!inserted)
      fail_at(source, lineno,
              "duplicate entry (" + std::to_string(i) + ", " + std::to_string(j) + "), first on line " +
                  std::to_string(it->second));
    entries.emplace_back(static_cast<int>(i - 1), static_cast<int>(j - 1), value);
    if (mh.symmetric && i != j) entries.emplace_back(static_cast<int>(j - 1), static_cast<int>(i - 1), value);
  }
  check_market_tail(in, source, lineno, mh.entries);
  SparseMatrix q(static_cast<Eigen::Index>(mh.rows), static_cast<Eigen::Index>(mh.rows));
  q.setFromTriplets(entries.begin(), entries.end());
  q.makeCompressed();
  return q;
}

SparseMatrix read_precision_matrix(const std::string& path, const ReadLimits& limits) {
  std::ifstream in = open_input(path, "precision matrix file");
  return read_precision_matrix(in, path, limits);
}

Eigen::VectorXd read_canonical_vector(const std::string& path, Index num_nodes) {
  return read_node_values(path, num_nodes, "canonical vector file").z;
}

LoadedGraph read_matrix_market(std::istream& in, const std::string& source, const ReadLimits& limits) {
  const MarketHeader mh = read_market_header(in, source, limits);
  const bool pattern = mh.pattern, symmetric = mh.symmetric;
  const std::int64_t rows = mh.rows, nnz = mh.entries;
  std::int64_t lineno = mh.lineno;
  std::string line;
  std::vector<std::string_view> f;

  struct Seen {
    std::int64_t line;
    int sides;  // bit 0: seen as (i < j), bit 1: seen as (i > j)
  };
  std::unordered_map<std::uint64_t, Seen> seen;
  std::vector<Edge> edges;
  std::int64_t read = 0;
  while (read < nnz) {
    if (!next_line(in, line, source, lineno + 1))
      throw std::invalid_argument(source + ": truncated: " + std::to_string(nnz) + " entries declared, " +
                                  std::to_string(read) + " found");
    ++lineno;
    f = split_fields(line, '%');
    if (f.empty()) continue;
    if (f.size() != (pattern ? 2u : 3u))
      fail_at(source, lineno,
              std::string("expected '") + (pattern ? "i j" : "i j value") + "', found " + std::to_string(f.size()) +
                  " fields");
    std::int64_t i, j;
    if (!parse_int(f[0], i)) fail_at(source, lineno, "row index " + shown(f[0]) + " " + integer_problem(f[0]));
    if (!parse_int(f[1], j)) fail_at(source, lineno, "column index " + shown(f[1]) + " " + integer_problem(f[1]));
    if (i < 1 || i > rows || j < 1 || j > rows)
      fail_at(source, lineno,
              "index (" + std::to_string(i) + ", " + std::to_string(j) + ") outside 1.." + std::to_string(rows));
    if (!pattern) {
      double val;
      if (!parse_double(f[2], val) || !std::isfinite(val))
        fail_at(source, lineno, "value " + shown(f[2]) + " is not a finite number");
    }
    ++read;
    if (i == j) continue;  // the diagonal does not change the graph
    const int side = i < j ? 1 : 2;
    auto [it, inserted] = seen.emplace(pair_key(i - 1, j - 1), Seen{lineno, side});
    if (inserted) {
      edges.push_back({static_cast<Index>(std::min(i, j) - 1), static_cast<Index>(std::max(i, j) - 1)});
      continue;
    }
    // A repeat is allowed only as the mirror entry of a general matrix.
    if (symmetric || (it->second.sides & side))
      fail_at(source, lineno,
              "duplicate entry (" + std::to_string(i) + ", " + std::to_string(j) + "), first on line " +
                  std::to_string(it->second.line));
    it->second.sides |= side;
  }
  check_market_tail(in, source, lineno, nnz);
  if (!symmetric)
    for (const auto& kv : seen)
      if (kv.second.sides != 3)
        fail_at(source, kv.second.line,
                "general matrix without the mirror of this entry: the pattern must be symmetric");
  if (static_cast<std::int64_t>(edges.size()) > limits.max_edges)
    throw std::invalid_argument(source + ": " + std::to_string(edges.size()) + " edges exceed the limit");
  std::vector<double> sigma(edges.size(), std::numeric_limits<double>::quiet_NaN());
  return {Graph(static_cast<Index>(rows), std::move(edges)), std::move(sigma)};
}

namespace {

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("graph spec '" + spec + "': " + why);
}

std::int64_t spec_int(const std::string& spec, const std::string& t, const char* name) {
  std::int64_t v;
  if (!parse_int(t, v)) bad_spec(spec, std::string(name) + " '" + t + "' is not an integer");
  return v;
}

double spec_double(const std::string& spec, const std::string& t, const char* name) {
  double v;
  if (!parse_double(t, v)) bad_spec(spec, std::string(name) + " '" + t + "' is not a number");
  return v;
}

std::uint64_t spec_seed(const std::string& spec, const std::string& t) {
  std::uint64_t v;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size())
    bad_spec(spec, "seed '" + t + "' is not a non-negative integer");
  return v;
}

// A count computed in double for an error message: an integer while it is exact, else in %g form.
std::string count_text(double x) {
  if (std::fabs(x) < 9.0e15) return std::to_string(static_cast<std::int64_t>(x));
  return number_text(x, 3);
}

// Checks a node or edge count against the limits (and the 32-bit index) before anything is allocated.
void check_size(const std::string& spec, double nodes, double edges, const ReadLimits& limits) {
  if (nodes > static_cast<double>(std::min<std::int64_t>(limits.max_nodes, kMaxIndex)))
    bad_spec(spec, "asks for " + count_text(nodes) + " nodes, over the limit of " +
                       std::to_string(std::min<std::int64_t>(limits.max_nodes, kMaxIndex)));
  if (edges > static_cast<double>(std::min<std::int64_t>(limits.max_edges, kMaxIndex / 2)))
    bad_spec(spec, "asks for about " + count_text(edges) + " edges, over the limit of " +
                       std::to_string(std::min<std::int64_t>(limits.max_edges, kMaxIndex / 2)));
}

Index to_index(const std::string& spec, std::int64_t v, const char* name) {
  if (v < 0 || v > kMaxIndex) bad_spec(spec, std::string(name) + " = " + std::to_string(v) + " is out of range");
  return static_cast<Index>(v);
}

constexpr detail::EnumName<GraphFamily> kFamilyNames[] = {
    {GraphFamily::Torus, "torus"},   {GraphFamily::Grid, "grid"},         {GraphFamily::Path, "path"},
    {GraphFamily::Cycle, "cycle"},   {GraphFamily::Complete, "complete"}, {GraphFamily::Bipartite, "bipartite"},
    {GraphFamily::Star, "star"},     {GraphFamily::KRegular, "kregular"}, {GraphFamily::WattsStrogatz, "ws"},
    {GraphFamily::ErdosRenyi, "er"}, {GraphFamily::BarabasiAlbert, "ba"}, {GraphFamily::Hypercube, "hypercube"},
    {GraphFamily::Torus3, "torus3"}, {GraphFamily::File, "file"},
};

}  // namespace

const char* to_string(GraphFamily family) noexcept { return detail::enum_name(kFamilyNames, family); }

GraphSpec parse_graph_spec(const std::string& spec, const ReadLimits& limits) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) bad_spec(spec, "expected FAMILY:ARGS such as torus:100 or file:PATH");
  const std::string family = spec.substr(0, colon), rest = spec.substr(colon + 1);
  GraphSpec out;
  out.text = spec;
  const auto known = std::find_if(std::begin(kFamilyNames), std::end(kFamilyNames),
                                  [&](const detail::EnumName<GraphFamily>& f) { return family == f.name; });
  if (known == std::end(kFamilyNames)) {
    std::string names;
    for (const auto& f : kFamilyNames) names += (names.empty() ? "" : ", ") + std::string(f.name);
    bad_spec(spec, "unknown graph family '" + family + "' (" + names + ")");
  }
  out.family = known->value;
  if (out.family == GraphFamily::File) {
    if (rest.empty()) bad_spec(spec, "no path after 'file:'");
    out.path = rest;
    return out;
  }
  std::vector<std::string> a;
  {
    std::size_t i = 0;
    const char sep = family == "torus" || family == "grid" || family == "torus3" ? 'x' : ',';
    while (true) {
      const auto j = rest.find(sep, i);
      a.push_back(rest.substr(i, j == std::string::npos ? std::string::npos : j - i));
      if (j == std::string::npos) break;
      i = j + 1;
    }
  }
  auto nargs = [&](std::size_t lo, std::size_t hi, const char* form) {
    if (a.size() < lo || a.size() > hi) bad_spec(spec, std::string("expected ") + form);
  };
  auto seed_at = [&](std::size_t k) {
    if (a.size() > k) out.seed = spec_seed(spec, a[k]);
  };
  const auto size = [&](std::int64_t v, const char* name) { out.sizes.push_back(to_index(spec, v, name)); };

  switch (out.family) {
    case GraphFamily::Torus:
    case GraphFamily::Grid: {
      nargs(1, 2, out.family == GraphFamily::Torus ? "torus:N or torus:NxM" : "grid:N or grid:NxM");
      const std::int64_t r = spec_int(spec, a[0], "side"), c = a.size() > 1 ? spec_int(spec, a[1], "side") : r;
      const double n = static_cast<double>(r) * static_cast<double>(c);
      check_size(spec, n, 2 * n, limits);
      size(r, "side");
      size(c, "side");
      break;
    }
    case GraphFamily::Torus3: {
      nargs(1, 3, "torus3:N or torus3:NxMxK");
      if (a.size() == 2) bad_spec(spec, "expected torus3:N or torus3:NxMxK");
      std::int64_t s3[3];
      for (int d = 0; d < 3; ++d) s3[d] = spec_int(spec, a[a.size() == 1 ? 0 : static_cast<std::size_t>(d)], "side");
      const double n = static_cast<double>(s3[0]) * static_cast<double>(s3[1]) * static_cast<double>(s3[2]);
      check_size(spec, n, 3 * n, limits);
      for (int d = 0; d < 3; ++d) size(s3[d], "side");
      break;
    }
    case GraphFamily::Path:
    case GraphFamily::Cycle:
    case GraphFamily::Complete:
    case GraphFamily::Star: {
      nargs(1, 1, (family + ":N").c_str());
      const std::int64_t n = spec_int(spec, a[0], "N");
      const double nd = static_cast<double>(n);
      check_size(spec, nd, out.family == GraphFamily::Complete ? nd * (nd - 1) / 2 : nd, limits);
      size(n, "N");
      break;
    }
    case GraphFamily::Bipartite: {
      nargs(2, 2, "bipartite:N1,N2");
      const std::int64_t n1 = spec_int(spec, a[0], "N1"), n2 = spec_int(spec, a[1], "N2");
      check_size(spec, static_cast<double>(n1) + static_cast<double>(n2),
                 static_cast<double>(n1) * static_cast<double>(n2), limits);
      size(n1, "N1");
      size(n2, "N2");
      break;
    }
    case GraphFamily::Hypercube: {
      nargs(1, 1, "hypercube:D");
      const std::int64_t d = spec_int(spec, a[0], "D");
      if (d < 0 || d > 26) bad_spec(spec, "dimension D = " + std::to_string(d) + " is not in 0..26");
      check_size(spec, std::ldexp(1.0, static_cast<int>(d)),
                 static_cast<double>(d) * std::ldexp(1.0, static_cast<int>(d) - 1), limits);
      size(d, "D");
      break;
    }
    case GraphFamily::KRegular:
    case GraphFamily::WattsStrogatz:
    case GraphFamily::BarabasiAlbert: {
      // N, a degree (K; ba's M edges per new node), ws's P, an optional seed.
      const bool ws = out.family == GraphFamily::WattsStrogatz, ba = out.family == GraphFamily::BarabasiAlbert;
      nargs(ws ? 3 : 2, ws ? 4 : 3, ws ? "ws:N,K,P[,SEED]" : ba ? "ba:N,M[,SEED]" : "kregular:N,K[,SEED]");
      const char* degree = ba ? "M" : "K";
      const std::int64_t n = spec_int(spec, a[0], "N"), k = spec_int(spec, a[1], degree);
      if (ws) out.probability = spec_double(spec, a[2], "P");
      check_size(spec, static_cast<double>(n), static_cast<double>(n) * static_cast<double>(k) / (ba ? 1 : 2), limits);
      seed_at(ws ? 3 : 2);
      size(n, "N");
      size(k, degree);
      break;
    }
    case GraphFamily::ErdosRenyi: {
      nargs(2, 3, "er:N,P[,SEED]");
      const std::int64_t n = spec_int(spec, a[0], "N");
      const double p = out.probability = spec_double(spec, a[1], "P");
      if (!(p >= 0.0 && p <= 1.0)) bad_spec(spec, "probability P must be in [0, 1]");
      check_size(spec, static_cast<double>(n), p * static_cast<double>(n) * (static_cast<double>(n) - 1) / 2, limits);
      seed_at(2);
      size(n, "N");
      break;
    }
    case GraphFamily::File:
      break;
  }
  return out;
}

LoadedGraph load_graph(const GraphSpec& spec, std::uint64_t default_seed, const ReadLimits& limits) {
  if (spec.family == GraphFamily::File) {
    const std::string& path = spec.path;
    if (path.empty()) bad_spec(spec.text, "no path after 'file:'");
    std::ifstream file = open_input(path, "graph file");
    // A pipe or FIFO (file:<(...)) cannot be rewound after the banner check: its bytes are read into memory first.
    std::istringstream piped;
    std::istream& in = file.tellg() < 0 ? piped : static_cast<std::istream&>(file);
    if (&in == &piped) piped.str(std::string(std::istreambuf_iterator<char>(file), {}));
    // Matrix Market by its extension or by its banner (so a .txt download of a .mtx file still works).
    const bool mtx =
        (path.size() >= 4 && path.compare(path.size() - 4, 4, ".mtx") == 0) || starts_with_matrix_market_banner(in);
    return mtx ? read_matrix_market(in, path, limits) : read_edge_list(in, path, limits);
  }
  const std::vector<Index>& n = spec.sizes;
  const std::size_t arity = spec.family == GraphFamily::Torus3 ? 3
                            : spec.family == GraphFamily::Torus || spec.family == GraphFamily::Grid ||
                                    spec.family == GraphFamily::Bipartite || spec.family == GraphFamily::KRegular ||
                                    spec.family == GraphFamily::WattsStrogatz ||
                                    spec.family == GraphFamily::BarabasiAlbert
                                ? 2
                                : 1;
  if (n.size() != arity)
    throw std::invalid_argument(std::string("GraphSpec: ") + to_string(spec.family) + " takes " +
                                std::to_string(arity) + " sizes, got " + std::to_string(n.size()));
  const std::uint64_t seed = spec.seed.value_or(default_seed);
  Graph g = [&] {
    switch (spec.family) {
      case GraphFamily::Torus:
        return make_torus(n[0], n[1]);
      case GraphFamily::Grid:
        return make_grid(n[0], n[1]);
      case GraphFamily::Path:
        return make_path(n[0]);
      case GraphFamily::Cycle:
        return make_cycle(n[0]);
      case GraphFamily::Complete:
        return make_complete(n[0]);
      case GraphFamily::Star:
        return make_star(n[0]);
      case GraphFamily::Bipartite:
        return make_complete_bipartite(n[0], n[1]);
      case GraphFamily::Hypercube:
        return make_hypercube(static_cast<int>(n[0]));
      case GraphFamily::Torus3:
        return make_torus3(n[0], n[1], n[2]);
      case GraphFamily::KRegular:
        return make_random_regular(n[0], n[1], seed);
      case GraphFamily::WattsStrogatz:
        return make_watts_strogatz(n[0], n[1], spec.probability, seed);
      case GraphFamily::ErdosRenyi:
        return make_erdos_renyi(n[0], spec.probability, seed);
      case GraphFamily::BarabasiAlbert:
        return make_barabasi_albert(n[0], n[1], seed);
      case GraphFamily::File:
        break;
    }
    throw std::logic_error("load_graph: unhandled graph family");
  }();
  std::vector<double> sg(static_cast<std::size_t>(g.num_edges()), std::numeric_limits<double>::quiet_NaN());
  return LoadedGraph{std::move(g), std::move(sg)};
}

LoadedGraph load_graph(const std::string& spec, std::uint64_t default_seed, const ReadLimits& limits) {
  return load_graph(parse_graph_spec(spec, limits), default_seed, limits);
}

Model load_model(const std::string& spec, double s, double sigma, const std::optional<std::string>& node_file,
                 std::uint64_t default_seed, const ReadLimits& limits) {
  check_standard_deviation(s, "s");  // the parameters first, as before the spec was parsed separately
  check_standard_deviation(sigma, "sigma");
  return load_model(parse_graph_spec(spec, limits), s, sigma, node_file, default_seed, limits);
}

Model load_model(const GraphSpec& spec, double s, double sigma, const std::optional<std::string>& node_file,
                 std::uint64_t default_seed, const ReadLimits& limits) {
  check_standard_deviation(s, "s");
  check_standard_deviation(sigma, "sigma");
  LoadedGraph lg = load_graph(spec, default_seed, limits);
  const Index n = lg.graph.num_nodes();
  std::vector<double> sv(static_cast<std::size_t>(n), s);
  if (node_file) {
    std::ifstream in = open_input(*node_file, "node file");
    const auto given = read_node_file(in, n, *node_file);
    for (Index v = 0; v < n; ++v)
      if (!std::isnan(given[v])) sv[v] = given[v];
  }
  // Nothing given per node or per edge: the homogeneous model, which keeps sigma even without edges.
  const bool per_item =
      node_file || std::any_of(lg.edge_sigma.begin(), lg.edge_sigma.end(), [](double x) { return !std::isnan(x); });
  std::vector<double> sg = std::move(lg.edge_sigma);
  for (double& x : sg)
    if (std::isnan(x)) x = sigma;
  if (!per_item) return Model(std::move(lg.graph), s, sigma);
  return Model(std::move(lg.graph), std::move(sv), std::move(sg));
}

}  // namespace dualgibbs
