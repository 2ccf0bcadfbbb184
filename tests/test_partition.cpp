// One chain's graph over the members of a chain group (sampling/partition.hpp), the members threads of this process
// (tests/support/thread_group.hpp: the protocol of MPI ranks, in every build): the METIS partition, the shares'
// ghost layers and halo lists against their definitions, and the split sweep bitwise equal to one process's
// colour-ordered sweep for 1, 2 and 3 members, under METIS's partition and under a scattered one.
#define BOOST_TEST_MODULE partition
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/partition.hpp>

#include "support/models.hpp"
#include "support/thread_group.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace dualgibbs;
using dualgibbs::testing::on_members;
using dualgibbs::testing::ThreadMember;

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

// A precision with signed off-diagonal entries on a random 4-regular graph, strictly diagonally dominant: a user's
// own matrix (Model::from_precision), not a thin-membrane model.
Model general_precision_model() {
  const Graph g = make_random_regular(40, 4, 7);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  std::vector<Eigen::Triplet<double>> t;
  Eigen::VectorXd diag = Eigen::VectorXd::Constant(g.num_nodes(), 0.5);
  for (Index e = 0; e < g.num_edges(); ++e) {
    const double v = (e % 3 == 0 ? 1.0 : -1.0) * u(rng);
    const Index a = g.edge(e).head, b = g.edge(e).tail;
    t.emplace_back(a, b, v);
    t.emplace_back(b, a, v);
    diag[a] += std::abs(v);
    diag[b] += std::abs(v);
  }
  for (Index i = 0; i < g.num_nodes(); ++i) t.emplace_back(i, i, diag[i]);
  SparseMatrix q(g.num_nodes(), g.num_nodes());
  q.setFromTriplets(t.begin(), t.end());
  return Model::from_precision(q);
}

// The checkpoints of one process's colour-ordered sweep.
std::vector<Eigen::MatrixXd> one_process(const Model& model, const EnsembleOptions& o, Domain domain = Domain::Primal) {
  std::vector<Eigen::MatrixXd> states;
  SchemeOptions scheme;
  scheme.kind = SchemeKind::Colored;
  scheme.threads = 1;
  run_ensemble(
      model, domain, o, [&](const Checkpoint& cp) { states.emplace_back(cp.states); }, scheme);
  return states;
}

// How one member joins a split run: `run(member, observe)` calls a run_partitioned overload with them.
using MemberRun = std::function<void(ThreadMember& member, const Observer& observe)>;

// The checkpoints every member of a k-member group observes in `run` (all must agree, and no member may fail).
std::vector<Eigen::MatrixXd> split(int k, const MemberRun& run) {
  std::vector<std::vector<Eigen::MatrixXd>> seen(static_cast<std::size_t>(k));
  std::vector<std::string> errors(static_cast<std::size_t>(k));
  on_members(k, [&](ThreadMember& member) {
    auto& mine = seen[static_cast<std::size_t>(member.rank())];
    try {
      run(member, [&](const Checkpoint& cp) { mine.emplace_back(cp.states); });
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(member.rank())] = e.what();
    }
  });
  for (int r = 0; r < k; ++r) {
    BOOST_TEST_INFO("member " << r);
    BOOST_TEST(errors[static_cast<std::size_t>(r)] == "");
    BOOST_TEST(seen[static_cast<std::size_t>(r)].size() == seen[0].size());
    for (std::size_t c = 0; c < seen[0].size() && r > 0; ++c)
      BOOST_TEST(same_bits(seen[static_cast<std::size_t>(r)][c], seen[0][c]));
  }
  return seen[0];
}

// How one member joins a split run cut by `partition` (empty: METIS).
using CutRun = std::function<void(ThreadMember& member, const Observer& observe, const std::vector<int>& partition)>;

// The split runs over 1 to 3 members of an n-node model under METIS's partition, contiguous ranges and a scattered
// cut (node i in part (7 i mod 11) mod k: most neighbours are ghosts), each against one process's checkpoints.
void check_cuts(const std::vector<Eigen::MatrixXd>& reference, Index n, const std::string& name, const CutRun& run) {
  for (int k = 1; k <= 3; ++k) {
    std::vector<int> scattered(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) scattered[static_cast<std::size_t>(i)] = static_cast<int>((7 * i % 11) % k);
    const char* names[] = {"METIS", "ranges", "scattered"};
    const std::vector<int> partitions[] = {{}, partition_ranges(n, k), scattered};
    for (int p = 0; p < 3; ++p) {
      BOOST_TEST_INFO(name << ", " << k << " members, " << names[p]);
      const std::vector<Eigen::MatrixXd> got =
          split(k, [&](ThreadMember& member, const Observer& observe) { run(member, observe, partitions[p]); });
      BOOST_TEST_REQUIRE(got.size() == reference.size());
      for (std::size_t c = 0; c < got.size(); ++c) {
        BOOST_TEST_INFO("checkpoint " << c);
        BOOST_TEST(same_bits(got[c], reference[c]));
      }
    }
  }
}

void check_bitwise(const Model& model, const EnsembleOptions& o, const std::string& name,
                   Domain domain = Domain::Primal) {
  check_cuts(one_process(model, o, domain), model.num_nodes(), name,
             [&](ThreadMember& member, const Observer& observe, const std::vector<int>& partition) {
               run_partitioned(model, domain, o, observe, member, partition);
             });
}

}  // namespace

BOOST_AUTO_TEST_CASE(metis_partition_covers_every_part_and_cuts_a_lattice_along_few_pairs) {
  const Model model(make_torus(30, 30), 1.0, 0.1);
  const SparseMatrix& q = model.primal_precision();
  for (int k : {1, 2, 3, 4}) {
    const std::vector<int> part = partition_graph(q, k);
    BOOST_TEST(part == partition_graph(q, k));  // the same on every call (every member computes it)
    std::vector<int> sizes(static_cast<std::size_t>(k), 0);
    for (int p : part) {
      BOOST_TEST_REQUIRE((p >= 0 && p < k));
      ++sizes[static_cast<std::size_t>(p)];
    }
    BOOST_TEST(*std::min_element(sizes.begin(), sizes.end()) >= static_cast<int>(0.9 * 900 / k));
    // A 30 x 30 torus cut into k strips crosses 2 x 30 x ... pairs: far below the 1 - 1/k of a random split.
    if (k > 1) BOOST_TEST(cut_fraction(q, part) < 0.1);
  }
  const std::vector<int> ranges = partition_ranges(10, 3);
  BOOST_TEST(ranges == std::vector<int>({0, 0, 0, 0, 1, 1, 1, 2, 2, 2}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(partition_ranges(10, 11), std::invalid_argument);
  BOOST_CHECK_THROW(partition_graph(q, 0), std::invalid_argument);
  BOOST_CHECK_THROW(partition_graph(q, 901), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_share_holds_its_rows_whole_its_ghosts_and_matching_halo_lists) {
  const Model model = dualgibbs::testing::heterogeneous_torus(9, 3);
  const SparseMatrix& q = model.primal_precision();
  const auto classes = greedy_coloring(q);
  const int k = 3;
  std::vector<int> part(static_cast<std::size_t>(q.rows()));
  for (std::size_t i = 0; i < part.size(); ++i) part[i] = static_cast<int>((5 * i) % 7 % k);
  std::vector<GraphShare> shares;
  for (int r = 0; r < k; ++r) shares.push_back(make_share(q, Eigen::VectorXd(), classes, part, r, k));
  std::size_t owned_total = 0;
  for (const GraphShare& s : shares) {
    owned_total += s.owned.size();
    BOOST_TEST(std::is_sorted(s.global.begin(), s.global.end()));
    std::set<Index> local(s.global.begin(), s.global.end());
    for (Index l : s.owned) {
      const Index g = s.global[static_cast<std::size_t>(l)];
      BOOST_TEST(part[static_cast<std::size_t>(g)] == s.part);
      // The owned row is the global row: same values at the same global columns, in the same order.
      std::vector<std::pair<Index, double>> mine, whole;
      for (SparseMatrix::InnerIterator it(s.precision, l); it; ++it)
        mine.emplace_back(s.global[static_cast<std::size_t>(it.col())], it.value());
      for (SparseMatrix::InnerIterator it(q, g); it; ++it) whole.emplace_back(it.col(), it.value());
      BOOST_TEST((mine == whole));
    }
    // Every local coordinate is owned or a neighbour of an owned one.
    for (Index g : s.global) {
      bool near = part[static_cast<std::size_t>(g)] == s.part;
      for (SparseMatrix::InnerIterator it(q, g); it && !near; ++it)
        near = part[static_cast<std::size_t>(it.col())] == s.part;
      BOOST_TEST(near);
    }
  }
  BOOST_TEST(owned_total == static_cast<std::size_t>(q.rows()));
  // What r sends s in class c is, in global ids and order, what s receives from r.
  for (const GraphShare& a : shares)
    for (std::size_t j = 0; j < a.neighbors.size(); ++j) {
      const GraphShare& b = shares[static_cast<std::size_t>(a.neighbors[j])];
      const auto back = std::find(b.neighbors.begin(), b.neighbors.end(), a.part);
      BOOST_TEST_REQUIRE((back != b.neighbors.end()));  // the neighbour relation is symmetric
      const auto jb = static_cast<std::size_t>(back - b.neighbors.begin());
      for (std::size_t c = 0; c < classes.size(); ++c) {
        auto slice = [](const GraphShare& s, const std::vector<Index>& sites, const std::vector<std::size_t>& counts,
                        std::size_t at) {
          std::size_t first = 0;
          for (std::size_t i = 0; i < at; ++i) first += counts[i];
          std::vector<Index> g;
          for (std::size_t i = first; i < first + counts[at]; ++i)
            g.push_back(s.global[static_cast<std::size_t>(sites[i])]);
          return g;
        };
        BOOST_TEST(slice(a, a.send_sites[c], a.send_counts[c], j) == slice(b, b.recv_sites[c], b.recv_counts[c], jb));
      }
    }
  BOOST_CHECK_THROW(make_share(q, Eigen::VectorXd(), classes, part, 3, k), std::invalid_argument);
  std::vector<int> bad = part;
  bad[4] = k;
  BOOST_CHECK_THROW(make_share(q, Eigen::VectorXd(), classes, bad, 0, k), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(split_sweeps_give_one_process_colored_bits_on_lattices_expanders_and_general_precisions) {
  EnsembleOptions o;
  o.chains = 5;  // lock-step blocks of 2 and 1 (lockstep 2), or five single chains
  o.sweeps = 7;
  o.checkpoint_every = 3;
  o.seed = 2024;
  check_bitwise(Model(make_torus(10, 12), 1.0, 0.1), o, "torus 10 x 12");
  check_bitwise(Model(make_torus3(4, 5, 6), 1.0, 0.3), o, "3-D torus 4 x 5 x 6");
  check_bitwise(Model(make_random_regular(50, 3, 5), 1.0, 0.5), o, "random 3-regular, 50 nodes");
  check_bitwise(general_precision_model(), o, "general precision");
  o.lockstep = 2;
  o.init = InitialState::Given;
  Eigen::VectorXd start = Eigen::VectorXd::LinSpaced(81, -2.0, 3.0);
  o.given_state = start;
  Model posterior = dualgibbs::testing::heterogeneous_torus(9, 5);
  posterior.set_observations(Eigen::VectorXd::LinSpaced(81, 1.0, -1.0));
  check_bitwise(posterior, o, "a posterior (a mean), lock-step pairs, given start");
  o.noise = false;
  check_bitwise(posterior, o, "Gauss-Seidel (no noise)");
  o.noise = true;
  o.init = InitialState::Random;
  o.init_scale = 2.0;
  check_bitwise(posterior, o, "a random start (each coordinate the deviate of its place)");
  check_bitwise(Model(make_random_regular(50, 3, 5), 1.0, 0.5), o, "random 3-regular, random start");
}

namespace {

// A precision whose off-diagonal entries are +-1 (a signed unit incidence: the dual kernel's signed path).
Model signed_unit_model() {
  const Graph g = make_random_regular(30, 3, 4);
  std::vector<Eigen::Triplet<double>> t;
  for (Index e = 0; e < g.num_edges(); ++e) {
    const double v = e % 2 == 0 ? 1.0 : -1.0;
    t.emplace_back(g.edge(e).head, g.edge(e).tail, v);
    t.emplace_back(g.edge(e).tail, g.edge(e).head, v);
  }
  for (Index i = 0; i < g.num_nodes(); ++i) t.emplace_back(i, i, 3.5 + 0.1 * static_cast<double>(i % 4));
  SparseMatrix q(g.num_nodes(), g.num_nodes());
  q.setFromTriplets(t.begin(), t.end());
  return Model::from_precision(q);
}

// A weighted signed incidence B (entries of several magnitudes) on a random 4-regular graph: the dual kernel's
// weighted path.
Model weighted_model() {
  Graph g = make_random_regular(36, 4, 9);
  const auto m = static_cast<std::size_t>(g.num_edges()), n = static_cast<std::size_t>(g.num_nodes());
  std::vector<double> s(n), sigma(m), head(m), tail(m);
  for (std::size_t i = 0; i < n; ++i) s[i] = 0.8 + 0.05 * static_cast<double>(i % 7);
  for (std::size_t e = 0; e < m; ++e) {
    sigma[e] = 0.3 + 0.02 * static_cast<double>(e % 5);
    head[e] = 0.5 + 0.25 * static_cast<double>(e % 4);
    tail[e] = e % 3 == 0 ? 0.7 : -1.3;
  }
  return Model(std::move(g), std::move(s), std::move(sigma), std::move(head), std::move(tail));
}

}  // namespace

BOOST_AUTO_TEST_CASE(split_dual_sweeps_give_one_process_colored_bits_for_every_incidence) {
  EnsembleOptions o;
  o.chains = 5;
  o.sweeps = 7;
  o.checkpoint_every = 3;
  o.seed = 99;
  check_bitwise(Model(make_torus(10, 12), 1.0, 0.1), o, "dual, torus 10 x 12 (homogeneous)", Domain::Dual);
  check_bitwise(dualgibbs::testing::heterogeneous_torus(9, 4), o, "dual, heterogeneous torus", Domain::Dual);
  check_bitwise(Model(make_torus3(4, 5, 6), 1.0, 0.3), o, "dual, 3-D torus 4 x 5 x 6", Domain::Dual);
  check_bitwise(Model(make_random_regular(50, 3, 5), 1.0, 0.5), o, "dual, random 3-regular", Domain::Dual);
  const Model general = general_precision_model();
  check_bitwise(general, o, "dual, general precision", Domain::Dual);
  const Model weighted = weighted_model();
  BOOST_TEST_REQUIRE(DualIncidenceKernel(weighted).weighted());
  check_bitwise(weighted, o, "dual, weighted incidence", Domain::Dual);
  const Model signed_unit = signed_unit_model();
  BOOST_TEST_REQUIRE(DualIncidenceKernel(signed_unit).signed_unit());
  check_bitwise(signed_unit, o, "dual, signed unit incidence", Domain::Dual);
  // The edges' own values (observe_edges), lock-step pairs, a given start and no noise.
  const Model torus = dualgibbs::testing::heterogeneous_torus(7, 8);
  o.observe_edges = true;
  o.lockstep = 2;
  check_bitwise(torus, o, "dual, edges observed", Domain::Dual);
  o.init = InitialState::Given;
  o.given_state = Eigen::VectorXd::LinSpaced(torus.num_edges(), -1.0, 2.0);
  check_bitwise(torus, o, "dual, given start", Domain::Dual);
  o.observe_edges = false;
  o.noise = false;
  check_bitwise(torus, o, "dual, Gauss-Seidel (no noise)", Domain::Dual);
  o.noise = true;
  o.init = InitialState::Random;
  check_bitwise(torus, o, "dual, random start", Domain::Dual);
  o.observe_edges = true;
  check_bitwise(weighted_model(), o, "dual edges, weighted incidence, random start", Domain::Dual);
}

BOOST_AUTO_TEST_CASE(a_dual_share_owns_its_heads_edges_and_exchanges_what_the_others_hold) {
  const Model model = dualgibbs::testing::heterogeneous_torus(6, 2);
  const Graph& g = model.graph();
  const auto classes = greedy_edge_coloring(g);
  const int k = 3;
  std::vector<int> part(static_cast<std::size_t>(g.num_nodes()));
  for (std::size_t i = 0; i < part.size(); ++i) part[i] = static_cast<int>((5 * i) % 7 % k);
  std::vector<GraphShare> shares;
  for (int r = 0; r < k; ++r) shares.push_back(make_dual_share(g, classes, part, r, k));
  std::size_t owned_total = 0;
  for (const GraphShare& s : shares) {
    owned_total += s.owned.size();
    std::set<Index> nodes(s.nodes.begin(), s.nodes.end());
    for (Index e : s.global) {
      const Index u = g.edge(e).head, v = g.edge(e).tail;
      BOOST_TEST((part[static_cast<std::size_t>(u)] == s.part || part[static_cast<std::size_t>(v)] == s.part));
      BOOST_TEST((nodes.count(u) == 1 && nodes.count(v) == 1));
    }
    for (Index l : s.owned)
      BOOST_TEST(part[static_cast<std::size_t>(g.edge(s.global[static_cast<std::size_t>(l)]).head)] == s.part);
    // Every edge at an own node is local (the own nodes' tallies are complete).
    std::set<Index> edges(s.global.begin(), s.global.end());
    for (Index e = 0; e < g.num_edges(); ++e)
      if (part[static_cast<std::size_t>(g.edge(e).head)] == s.part ||
          part[static_cast<std::size_t>(g.edge(e).tail)] == s.part)
        BOOST_TEST(edges.count(e) == 1);
  }
  BOOST_TEST(owned_total == static_cast<std::size_t>(g.num_edges()));
  // What a sends b, in global node ids and order, is what b receives from a: per class and at the start.
  const auto slice = [](const GraphShare& s, const std::vector<Index>& sites, const std::vector<std::size_t>& counts,
                        std::size_t at) {
    std::size_t first = 0;
    for (std::size_t i = 0; i < at; ++i) first += counts[i];
    std::vector<Index> nodes;
    for (std::size_t i = first; i < first + counts[at]; ++i)
      nodes.push_back(s.nodes[static_cast<std::size_t>(sites[i])]);
    return nodes;
  };
  for (const GraphShare& a : shares)
    for (std::size_t j = 0; j < a.neighbors.size(); ++j) {
      const GraphShare& b = shares[static_cast<std::size_t>(a.neighbors[j])];
      const auto back = std::find(b.neighbors.begin(), b.neighbors.end(), a.part);
      BOOST_TEST_REQUIRE((back != b.neighbors.end()));
      const auto jb = static_cast<std::size_t>(back - b.neighbors.begin());
      BOOST_TEST(slice(a, a.start_send_sites, a.start_send_counts, j) ==
                 slice(b, b.start_recv_sites, b.start_recv_counts, jb));
      for (std::size_t c = 0; c < classes.size(); ++c)
        BOOST_TEST(slice(a, a.send_sites[c], a.send_counts[c], j) == slice(b, b.recv_sites[c], b.recv_counts[c], jb));
    }
  std::vector<std::vector<Index>> clash = classes;
  clash[0].push_back(clash[1].front());  // an edge in two classes
  BOOST_CHECK_THROW(make_dual_share(g, clash, part, 0, k), std::invalid_argument);
  std::vector<std::vector<Index>> joined = classes;
  joined[0].insert(joined[0].end(), joined[1].begin(), joined[1].end());  // two edges of one class at a node
  joined.erase(joined.begin() + 1);
  BOOST_CHECK_THROW(make_dual_share(g, joined, part, 0, k), std::invalid_argument);
  BOOST_CHECK_THROW(make_dual_share(g, classes, part, 3, k), std::invalid_argument);
  BOOST_CHECK_THROW(make_dual_share(g, classes, std::vector<int>(5, 0), 0, k), std::invalid_argument);
}

namespace {

// The colour-ordered SSOR (no spectrum) or Chebyshev-SSOR scheme of a domain, its spectrum that of the colour order.
SchemeOptions colored_ssor(const Model& model, Domain domain, double omega, bool chebyshev) {
  SchemeOptions sc;
  sc.kind = chebyshev ? SchemeKind::ChebyshevSsor : SchemeKind::Ssor;
  sc.colored_order = true;
  sc.omega = omega;
  if (chebyshev)
    sc.spectrum = ssor_spectrum(color_permuted(model.precision(domain), domain_coloring(model, domain)), omega);
  return sc;
}

// The split run of `scheme` against one process's, for 1 to 3 members under METIS, contiguous and scattered cuts.
void check_scheme_bitwise(const Model& model, Domain domain, const EnsembleOptions& o, const SchemeOptions& scheme,
                          const std::string& name) {
  std::vector<Eigen::MatrixXd> reference;
  run_ensemble(
      model, domain, o, [&](const Checkpoint& cp) { reference.emplace_back(cp.states); }, scheme);
  check_cuts(reference, model.num_nodes(), name,
             [&](ThreadMember& member, const Observer& observe, const std::vector<int>& partition) {
               run_partitioned(model, domain, o, observe, member, scheme, partition);
             });
}

}  // namespace

BOOST_AUTO_TEST_CASE(split_ssor_and_chebyshev_ssor_give_one_process_colour_ordered_bits) {
  EnsembleOptions o;
  o.chains = 3;
  o.sweeps = 5;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  o.seed = 313;
  const Model torus = dualgibbs::testing::heterogeneous_torus(9, 6);
  const Model models[] = {torus, Model(make_torus3(4, 5, 6), 1.0, 0.3), Model(make_random_regular(50, 3, 5), 1.0, 0.5),
                          general_precision_model(), weighted_model()};
  const char* names[] = {"heterogeneous torus", "3-D torus", "random 3-regular", "general precision",
                         "weighted incidence"};
  for (std::size_t m = 0; m < 5; ++m)
    for (const Domain d : {Domain::Primal, Domain::Dual}) {
      const std::string name = std::string(names[m]) + ", " + to_string(d);
      check_scheme_bitwise(models[m], d, o, colored_ssor(models[m], d, 1.3, true), name + ", cheby-ssor");
      check_scheme_bitwise(models[m], d, o, colored_ssor(models[m], d, 1.3, false), name + ", ssor");
    }
  // A posterior (its mean in the primal), a given start, the dual's edges observed, no noise.
  Model posterior = dualgibbs::testing::heterogeneous_torus(7, 2);
  posterior.set_observations(Eigen::VectorXd::LinSpaced(49, 1.0, -1.0));
  o.init = InitialState::Given;
  o.given_state = Eigen::VectorXd::LinSpaced(49, -2.0, 3.0);
  check_scheme_bitwise(posterior, Domain::Primal, o, colored_ssor(posterior, Domain::Primal, 1.5, true),
                       "posterior, given start, cheby-ssor");
  o.given_state = Eigen::VectorXd::LinSpaced(posterior.num_edges(), -1.0, 1.0);
  o.observe_edges = true;
  check_scheme_bitwise(posterior, Domain::Dual, o, colored_ssor(posterior, Domain::Dual, 1.5, true),
                       "dual edges, given start, cheby-ssor");
  o.noise = false;
  check_scheme_bitwise(posterior, Domain::Dual, o, colored_ssor(posterior, Domain::Dual, 1.5, true),
                       "dual edges, no noise, cheby-ssor");
  o.noise = true;
  o.init = InitialState::Random;
  check_scheme_bitwise(posterior, Domain::Dual, o, colored_ssor(posterior, Domain::Dual, 1.5, true),
                       "dual edges, random start, cheby-ssor");
  o.observe_edges = false;
  check_scheme_bitwise(posterior, Domain::Primal, o, colored_ssor(posterior, Domain::Primal, 1.5, false),
                       "posterior, random start, ssor");
  // The natural order is not a split graph's.
  SchemeOptions natural = colored_ssor(torus, Domain::Primal, 1.3, true);
  natural.colored_order = false;
  std::vector<int> refused(2, 0);
  on_members(2, [&](ThreadMember& member) {
    try {
      run_partitioned(torus, Domain::Primal, o, {}, member, natural);
    } catch (const std::invalid_argument&) {
      refused[static_cast<std::size_t>(member.rank())] = 1;
    }
  });
  BOOST_TEST(refused == std::vector<int>({1, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(classes_of_several_deviate_blocks_keep_their_places) {
  // 110 x 110 torus: two classes of 6050 sites, each two blocks of ColoredSweep::kBlock = 4096 deviates.
  EnsembleOptions o;
  o.chains = 2;
  o.sweeps = 2;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  check_bitwise(Model(make_torus(110, 110), 1.0, 0.2), o, "torus 110 x 110");
}

BOOST_AUTO_TEST_CASE(a_failure_on_one_member_ends_every_member_with_its_message) {
  const Model model(make_torus(8, 8), 1.0, 0.1);
  EnsembleOptions o;
  o.chains = 2;
  o.sweeps = 4;
  std::mutex lock;
  std::vector<std::string> messages;
  on_members(3, [&](ThreadMember& member) {
    try {
      run_partitioned(
          model, Domain::Primal, o,
          [&](const Checkpoint& cp) {
            if (member.rank() == 1 && cp.sweep == 2) throw std::runtime_error("observer of member 1 failed");
          },
          member);
    } catch (const std::exception& e) {
      const std::lock_guard<std::mutex> g(lock);
      messages.emplace_back(e.what());
    }
  });
  BOOST_TEST(messages.size() == 3u);
  // Member 1 rethrows its own exception, the others its message with its rank.
  std::sort(messages.begin(), messages.end());
  BOOST_TEST(
      messages == std::vector<std::string>({"observer of member 1 failed", "observer of member 1 failed (on rank 1)",
                                            "observer of member 1 failed (on rank 1)"}),
      boost::test_tools::per_element());
  // A stop every member's observer decides at the same checkpoint (a rule on the states all see) reaches each member
  // as its own exception, of its own type.
  struct Stop {};
  std::vector<int> stopped(3, 0);
  on_members(3, [&](ThreadMember& member) {
    try {
      run_partitioned(
          model, Domain::Primal, o,
          [&](const Checkpoint& cp) {
            if (cp.sweep == 2) throw Stop{};
          },
          member);
    } catch (const Stop&) {
      stopped[static_cast<std::size_t>(member.rank())] = 1;
    } catch (...) {
    }
  });
  BOOST_TEST(stopped == std::vector<int>({1, 1, 1}), boost::test_tools::per_element());
  // Input errors are the same on every member (Boost.Test's checks stay on this thread: the members record).
  std::vector<int> refused(2, 0);
  on_members(2, [&](ThreadMember& member) {
    EnsembleOptions short_start = o, edges = o;
    short_start.init = InitialState::Given;
    short_start.given_state = Eigen::VectorXd::Ones(63);  // the torus has 64 nodes
    edges.observe_edges = true;                           // the primal domain has no edges to observe
    auto refuses = [&](const std::function<void()>& call) {
      try {
        call();
      } catch (const std::invalid_argument&) {
        return 1;
      }
      return 0;
    };
    refused[static_cast<std::size_t>(member.rank())] =
        refuses([&] { run_partitioned(model, Domain::Primal, edges, {}, member); }) +
        refuses([&] { run_partitioned(model, Domain::Primal, short_start, {}, member); }) +
        refuses([&] { run_partitioned(model, Domain::Primal, o, {}, member, std::vector<int>(64, 2)); });
    // Without an observer the checkpoints still settle, and the run completes on every member.
    const EnsembleStats st = run_partitioned(model, Domain::Primal, o, {}, member);
    if (st.updates == 2u * 4u * 64u) refused[static_cast<std::size_t>(member.rank())] += 10;
  });
  BOOST_TEST(refused == std::vector<int>({13, 13}), boost::test_tools::per_element());
}

namespace {

// Every field of two shares, the precision's values bit for bit.
bool same_share(const GraphShare& a, const GraphShare& b) {
  const auto same_matrix = [](const SparseMatrix& x, const SparseMatrix& y) {
    if (x.rows() != y.rows() || x.nonZeros() != y.nonZeros()) return false;
    for (Index r = 0; r < x.rows(); ++r) {
      SparseMatrix::InnerIterator i(x, r), j(y, r);
      for (; i && j; ++i, ++j)
        if (i.col() != j.col() || !(i.value() == j.value())) return false;
      if (i || j) return false;
    }
    return true;
  };
  return a.part == b.part && a.parts == b.parts && a.global_dimension == b.global_dimension && a.global == b.global &&
         a.owned == b.owned && same_matrix(a.precision, b.precision) && a.neighbors == b.neighbors &&
         a.class_sites == b.class_sites && a.class_places == b.class_places && a.send_sites == b.send_sites &&
         a.send_counts == b.send_counts && a.recv_sites == b.recv_sites && a.recv_counts == b.recv_counts;
}

struct LatticeCase {
  const char* name;
  LatticeShape shape;
  Graph graph;
};

LatticeShape shape_of(std::vector<Index> sides, bool periodic, double s, double sigma) {
  LatticeShape shape;
  shape.sides = std::move(sides);
  shape.periodic = periodic;
  shape.s = s;
  shape.sigma = sigma;
  return shape;
}

std::vector<LatticeCase> lattice_cases() {
  std::vector<LatticeCase> cases;
  cases.push_back(LatticeCase{"path:11", shape_of({11}, false, 0.7, 0.3), make_path(11)});
  cases.push_back(LatticeCase{"cycle:9", shape_of({9}, true, 1.0, 0.1), make_cycle(9)});
  cases.push_back(LatticeCase{"grid:5x7", shape_of({5, 7}, false, 1.3, 0.4), make_grid(5, 7)});
  cases.push_back(LatticeCase{"torus:6x5", shape_of({6, 5}, true, 1.0, 0.2), make_torus(6, 5)});
  cases.push_back(LatticeCase{"torus3:3x4x5", shape_of({3, 4, 5}, true, 0.9, 0.3), make_torus3(3, 4, 5)});
  return cases;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_lattice_share_from_its_shape_is_the_share_of_its_model) {
  for (const LatticeCase& c : lattice_cases()) {
    const Model model(c.graph, c.shape.s, c.shape.sigma);
    const SparseMatrix& q = model.primal_precision();
    const auto classes = greedy_coloring(q);
    for (int k : {1, 2, 3, 4}) {
      const std::vector<int> part = partition_ranges(model.num_nodes(), k);
      for (int r = 0; r < k; ++r) {
        BOOST_TEST_INFO(c.name << ", part " << r << " of " << k);
        BOOST_TEST(same_share(lattice_share(c.shape, r, k), make_share(q, Eigen::VectorXd(), classes, part, r, k)));
      }
    }
  }
  BOOST_CHECK_THROW(lattice_share(shape_of({2, 5}, true, 1.0, 0.1), 0, 1), std::invalid_argument);  // side 2, periodic
  BOOST_CHECK_THROW(lattice_share(shape_of({}, true, 1.0, 0.1), 0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lattice_share(shape_of({4, 4, 4, 4}, false, 1.0, 0.1), 0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lattice_share(shape_of({4, 4}, false, 0.0, 0.1), 0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(lattice_share(shape_of({4, 4}, false, 1.0, 0.1), 2, 2), std::invalid_argument);
  BOOST_CHECK_THROW(lattice_share(shape_of({50000, 50000}, false, 1.0, 0.1), 0, 1), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_periodic_lattice_dual_share_from_its_shape_is_the_dual_share_of_its_graph) {
  for (const LatticeCase& c : lattice_cases()) {
    if (!c.shape.periodic) {
      BOOST_CHECK_THROW(lattice_dual_share(c.shape, 0, 1), std::invalid_argument);
      continue;
    }
    const auto classes = greedy_edge_coloring(c.graph);
    for (int k : {1, 2, 3, 4}) {
      const std::vector<int> part = partition_ranges(c.graph.num_nodes(), k);
      for (int r = 0; r < k; ++r) {
        BOOST_TEST_INFO(c.name << ", part " << r << " of " << k);
        GraphShare want = make_dual_share(c.graph, classes, part, r, k);
        want.edge_owner.clear();  // the lattice's share leaves it empty
        const GraphShare got = lattice_dual_share(c.shape, r, k);
        BOOST_TEST(same_share(got, want));
        BOOST_TEST((got.nodes == want.nodes && got.owned_nodes == want.owned_nodes && got.edge_owner.empty()));
        BOOST_TEST((got.start_send_sites == want.start_send_sites && got.start_send_counts == want.start_send_counts &&
                    got.start_recv_sites == want.start_recv_sites && got.start_recv_counts == want.start_recv_counts));
        BOOST_TEST((got.edge_send_sites == want.edge_send_sites && got.edge_send_counts == want.edge_send_counts &&
                    got.edge_recv_sites == want.edge_recv_sites && got.edge_recv_counts == want.edge_recv_counts));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_periodic_lattice_split_by_its_shape_gives_one_process_dual_bits) {
  EnsembleOptions o;
  o.chains = 3;
  o.sweeps = 5;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  o.seed = 78;
  for (const LatticeCase& c : lattice_cases()) {
    if (!c.shape.periodic) continue;
    for (bool edges : {false, true}) {
      o.observe_edges = edges;
      o.init = edges ? InitialState::Random : InitialState::Constant;
      const std::vector<Eigen::MatrixXd> reference =
          one_process(Model(c.graph, c.shape.s, c.shape.sigma), o, Domain::Dual);
      for (int k = 1; k <= 3; ++k) {
        BOOST_TEST_INFO(c.name << ", dual, " << (edges ? "edges" : "tallies") << ", " << k << " members");
        const std::vector<Eigen::MatrixXd> got = split(k, [&](ThreadMember& member, const Observer& observe) {
          run_partitioned(c.shape, Domain::Dual, o, observe, member);
        });
        BOOST_TEST_REQUIRE(got.size() == reference.size());
        for (std::size_t t = 0; t < reference.size(); ++t) BOOST_TEST(same_bits(got[t], reference[t]));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_lattice_split_by_its_shape_gives_one_process_colored_bits) {
  EnsembleOptions o;
  o.chains = 5;
  o.sweeps = 5;
  o.checkpoint_every = 2;
  o.lockstep = 2;
  o.seed = 77;
  for (const LatticeCase& c : lattice_cases()) {
    o.init = c.shape.periodic ? InitialState::Random : InitialState::Constant;  // both starts
    const std::vector<Eigen::MatrixXd> reference = one_process(Model(c.graph, c.shape.s, c.shape.sigma), o);
    for (int k = 1; k <= 3; ++k) {
      BOOST_TEST_INFO(c.name << ", " << k << " members");
      const std::vector<Eigen::MatrixXd> got = split(
          k, [&](ThreadMember& member, const Observer& observe) { run_partitioned(c.shape, o, observe, member); });
      BOOST_TEST_REQUIRE(got.size() == reference.size());
      for (std::size_t t = 0; t < reference.size(); ++t) BOOST_TEST(same_bits(got[t], reference[t]));
    }
  }
}
