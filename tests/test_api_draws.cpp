// api/draws.hpp: the writers produce exactly the documented CSV and binary bytes, and the reader gives the written
// doubles back bit for bit with their checkpoints and chains.
#define BOOST_TEST_MODULE api_draws
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

#include <dualgibbs/api/draws.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <unistd.h>

using namespace dualgibbs;
using dualgibbs::testing::message_has;
namespace fs = std::filesystem;

namespace {

// A 3 x 2 checkpoint (3 coordinates, 2 chains) with values that need all 17 digits.
Eigen::MatrixXd states(double shift) {
  Eigen::MatrixXd s(3, 2);
  s << 0.1 + shift, -1.0 / 3.0, 2.0, 1e-300, -0.0, 12345.678901234567;
  return s;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("dg_api_draws_" + std::to_string(::getpid()) + "_" + name)).string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::uint64_t u64_at(const std::string& bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(writers)

BOOST_AUTO_TEST_CASE(csv_writer_writes_a_header_and_17_digits) {
  std::ostringstream out;
  api::CsvDrawsWriter w(out);
  w.begin(3, 2, 2);
  w.write(5, states(0));
  w.write(10, states(1));
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  BOOST_TEST(line == "sweep,chain,c0,c1,c2");
  std::getline(in, line);
  BOOST_TEST(line == "5,0,0.10000000000000001,2,-0");
  std::getline(in, line);
  BOOST_TEST(line == "5,1,-0.33333333333333331,1e-300,12345.678901234567");
  int rows = 2;
  while (std::getline(in, line)) ++rows;
  BOOST_TEST(rows == 4);  // one header, one row per chain and checkpoint
}

BOOST_AUTO_TEST_CASE(binary_writer_writes_the_dgsampl1_layout) {
  std::ostringstream out;
  api::BinaryDrawsWriter w(out);
  w.begin(3, 2, 1);
  w.write(7, states(0));
  const std::string b = out.str();
  BOOST_REQUIRE(b.size() == 32 + 8 + 2 * 3 * 8);
  BOOST_TEST(b.substr(0, 8) == "DGSAMPL1");
  BOOST_TEST(u64_at(b, 8) == 3u);
  BOOST_TEST(u64_at(b, 16) == 2u);
  BOOST_TEST(u64_at(b, 24) == 1u);
  BOOST_TEST(u64_at(b, 32) == 7u);
  // chain after chain: chain 1's coordinate 1 is the fifth value
  const std::uint64_t bits = u64_at(b, 40 + 4 * 8);
  double v;
  std::memcpy(&v, &bits, 8);
  BOOST_TEST(v == 1e-300);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reader)

BOOST_AUTO_TEST_CASE(written_files_read_back_bit_for_bit) {
  for (const bool binary : {false, true}) {
    std::ostringstream out;
    std::unique_ptr<api::DrawsSink> w;
    if (binary)
      w = std::make_unique<api::BinaryDrawsWriter>(out);
    else
      w = std::make_unique<api::CsvDrawsWriter>(out);
    w->begin(3, 2, 2);
    w->write(5, states(0));
    w->write(10, states(1));
    const std::string path = temp_path(binary ? "x.bin" : "x.csv");
    write_file(path, out.str());
    api::DrawsFile f = api::open_draws_file(path);
    BOOST_TEST(f.format == (binary ? "binary" : "csv"));
    BOOST_TEST(f.rows == 4u);
    BOOST_TEST(f.dimension == 3);
    std::string layout;
    const auto plan = f.plan(api::DrawLayout::Independent, layout);
    BOOST_REQUIRE(plan.size() == 2u);
    BOOST_TEST(plan[1].sweep == 10.0);
    Eigen::MatrixXd got;
    f.read(plan[1].rows.data(), plan[1].rows.size(), got);
    const Eigen::MatrixXd want = states(1);
    BOOST_TEST(std::memcmp(got.data(), want.data(), sizeof(double) * 6) == 0);
    fs::remove(path);
  }
}

BOOST_AUTO_TEST_CASE(rejects_a_truncated_binary_file_and_an_unknown_layout) {
  std::ostringstream out;
  api::BinaryDrawsWriter w(out);
  w.begin(3, 2, 2);
  w.write(5, states(0));  // one of the two announced checkpoints
  const std::string path = temp_path("short.bin");
  write_file(path, out.str());
  BOOST_CHECK_EXCEPTION(api::open_draws_file(path), std::invalid_argument, message_has({"truncated"}));
  fs::remove(path);
  BOOST_CHECK_EXCEPTION(api::parse_draw_layout("rows"), std::invalid_argument, message_has({"unknown --layout"}));
}

BOOST_AUTO_TEST_SUITE_END()
