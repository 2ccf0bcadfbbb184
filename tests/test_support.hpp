#pragma once
// Shared helpers of the Boost.Test suites: error-message predicates, a small instance of every graph
// family (for BOOST_DATA_TEST_CASE), and seeded random parameters. Nothing here computes an expected
// value: the oracles live in the tests themselves.

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/graph.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::testing {

/// Predicate for BOOST_CHECK_EXCEPTION: the exception's message contains every fragment (case-sensitive).
/// On a mismatch it prints the message, so a failing check shows what was actually said.
struct MessageHas {
  std::vector<std::string> parts;
  bool operator()(const std::exception& e) const {
    const std::string what = e.what();
    for (const auto& p : parts)
      if (what.find(p) == std::string::npos) {
        std::cerr << "  message '" << what << "' lacks '" << p << "'\n";
        return false;
      }
    return true;
  }
};
inline MessageHas message_has(std::initializer_list<std::string> parts) { return MessageHas{parts}; }

/// OpenBLAS's thread count, read and set through openblas_get_num_threads / openblas_set_num_threads looked up at
/// run time, so the suites build against any BLAS (with another one available() is false and a test skips, saying
/// so). The count at construction is restored at destruction.
class OpenBlasThreads {
 public:
  OpenBlasThreads()
      : m_set(reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))),
        m_get(reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))),
        m_saved(available() ? m_get() : 0) {}
  ~OpenBlasThreads() {
    if (available()) m_set(m_saved);
  }
  OpenBlasThreads(const OpenBlasThreads&) = delete;
  OpenBlasThreads& operator=(const OpenBlasThreads&) = delete;
  bool available() const noexcept { return m_set && m_get; }
  void set(int threads) const { m_set(threads); }
  int get() const { return m_get(); }

 private:
  using Set = void (*)(int);
  using Get = int (*)();
  Set m_set;
  Get m_get;
  int m_saved;
};

/// A named small instance of a graph family.
struct Family {
  std::string name;
  std::function<Graph()> make;
};

/// One small instance of every graph family, plus graphs with isolated nodes and several components.
inline const std::vector<Family>& families() {
  static const std::vector<Family> list = {
      {"torus_3x3", [] { return make_torus(3, 3); }},
      {"torus_4x5", [] { return make_torus(4, 5); }},
      {"grid_3x4", [] { return make_grid(3, 4); }},
      {"grid_1x1", [] { return make_grid(1, 1); }},
      {"path_6", [] { return make_path(6); }},
      {"cycle_7", [] { return make_cycle(7); }},
      {"complete_6", [] { return make_complete(6); }},
      {"bipartite_3_4", [] { return make_complete_bipartite(3, 4); }},
      {"star_6", [] { return make_star(6); }},
      {"kregular_12_3", [] { return make_random_regular(12, 3, 7); }},
      {"kregular_9_6", [] { return make_random_regular(9, 6, 3); }},
      {"ws_12_4_0.3", [] { return make_watts_strogatz(12, 4, 0.3, 5); }},
      {"er_15_0.3", [] { return make_erdos_renyi(15, 0.3, 11); }},
      {"er_20_0.05", [] { return make_erdos_renyi(20, 0.05, 2); }},  // sparse: several components
      {"ba_14_2", [] { return make_barabasi_albert(14, 2, 13); }},
      {"hypercube_4", [] { return make_hypercube(4); }},
      {"torus3_3x4x3", [] { return make_torus3(3, 4, 3); }},
      {"isolated_nodes",
       [] {
         return Graph(7, {{0, 1}, {2, 1}, {4, 5}});
       }},  // nodes 3 and 6 isolated
  };
  return list;
}

inline std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& f : families()) names.push_back(f.name);
  return names;
}

inline Graph make_family(const std::string& name) {
  for (const auto& f : families())
    if (f.name == name) return f.make();
  throw std::logic_error("test_support: no family " + name);
}

/// `count` values uniform in [lo, hi) from a fixed seed (parameters for heterogeneous models).
inline std::vector<double> random_values(std::size_t count, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(count);
  for (double& x : v) x = lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return v;
}

}  // namespace dualgibbs::testing
