// Chebyshev potential-flow control variates (dual) and their Dirichlet mirror (primal): the precomputation of
// E_v and l_v, node by node on the k-hop ball or densely, and the online accumulation of the sampled terms.
// Derivations: include/dualgibbs/estimation/flow_cv.hpp and docs/accuracy.md ("What is computed").
#include <dualgibbs/estimation/flow_cv.hpp>

#include <dualgibbs/core/chain_group.hpp>

#include "estimation/ball_numbering.hpp"
#include "estimation/chain_spread.hpp"
#include "estimation/run_tasks.hpp"

#include <Spectra/MatOp/SparseSymMatProd.h>
#include <Spectra/SymEigsSolver.h>
#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

namespace {

// The Chebyshev iteration for Q phi = b on [alpha, beta] (Saad, Iterative Methods, Alg. 12.1): after k steps
// res = r_k(Q) b with r_k(lambda) = T_k((beta + alpha - 2 lambda) / (beta - alpha)) / T_k((beta + alpha) /
// (beta - alpha)), and phi = P_k(Q) b with r_k(lambda) = 1 - lambda P_k(lambda). One step's scalars.
struct Chebyshev {
  double theta, delta, sigma1;
  Chebyshev(double alpha, double beta) : theta((beta + alpha) / 2), delta((beta - alpha) / 2), sigma1(theta / delta) {}
};

constexpr double kNoEnergy = std::numeric_limits<double>::quiet_NaN();  // E_v of a model without D_s
constexpr const char* kNeedsDs =
    "FlowControlVariate: the model has no dual (its precision is not of factor width 2), so there is no D_s for ";

// The graph's structure as the local precomputation needs it: per node 1/s^2, Q_uu, and incident (neighbour,
// 1/sigma_e^2) pairs.
struct LocalGraph {
  std::vector<double> inv_s2, s2, diag;
  std::vector<Index> offsets, neighbors;
  std::vector<double> inv_sig2;
  // 1/sigma^2 when every edge has it (homogeneous models: the flows then read no weight array, which on an expander
  // is as large as the work arrays and competes with them for the cache), else 0.
  double uniform_weight = 0;
  // s_u^2 when every node has it (the energies then read no s^2 array: one random read per site of the ball less),
  // else 0.
  double uniform_s2 = 0;
  bool is_weighted = false;  // -Q_uv in inv_sig2 (a weighted, signed incidence)
  // D_s exists (the model has a dual). Without it (a given Q of factor width above 2) s2 is NaN: the flows give the
  // lower bound l_v alone (the Dirichlet identity needs only Q), and E_v is NaN.
  bool has_energy = true;

  explicit LocalGraph(const Model& m) {
    const Graph& g = m.graph();
    const auto n = static_cast<std::size_t>(m.num_nodes());
    inv_s2.resize(n);
    s2.resize(n);
    diag.resize(n);
    offsets.assign(g.incidence_offsets().begin(), g.incidence_offsets().end());
    neighbors.assign(g.incidence_neighbors().begin(), g.incidence_neighbors().end());
    inv_sig2.resize(neighbors.size());
    has_energy = m.has_dual();
    if (!m.unit_incidence() || m.given_precision())
      weighted(m);
    else
      for (std::size_t p = 0; p < neighbors.size(); ++p) inv_sig2[p] = 1.0 / m.edge_variances()[g.incidence_edges()[p]];
    uniform_weight = inv_sig2.empty() ? 0.0 : inv_sig2[0];
    for (double w : inv_sig2)
      if (w != uniform_weight) uniform_weight = 0;
    if (!is_weighted)
      for (std::size_t u = 0; u < n; ++u) {
        s2[u] = m.node_variances()[static_cast<Eigen::Index>(u)];
        inv_s2[u] = 1.0 / s2[u];
        diag[u] = inv_s2[u];
        for (Index p = offsets[u]; p < offsets[u + 1]; ++p) diag[u] += inv_sig2[static_cast<std::size_t>(p)];
      }
    uniform_s2 = s2.empty() || !(s2[0] > 0) ? 0.0 : s2[0];
    for (double x : s2)
      if (x != uniform_s2) uniform_s2 = 0;
  }
  // A weighted, signed incidence: the pushes read -Q_uv (b_u b_v / sigma_e^2 with its sign) in place of 1/sigma_e^2
  // and Q_uu from Q itself, so that the local flows solve with the Q the residual map uses (for a model made by
  // from_precision, the given matrix, whatever its incidence). The flow identity needs only Q = D_s^-1 + L_sigma with
  // L_sigma = B D_sigma^-1 B^T, which holds for any B (docs/general-precision.md, section 3). Without a dual (no
  // D_s) the same pushes give the potentials, and with them l_v; s2 is NaN.
  void weighted(const Model& m) {
    const SparseMatrix q = m.primal_precision();
    is_weighted = true;
    const Eigen::VectorXd node_variances =
        has_energy ? m.node_variances() : Eigen::VectorXd::Constant(static_cast<Eigen::Index>(diag.size()), kNoEnergy);
    for (std::size_t u = 0; u < diag.size(); ++u) {
      s2[u] = node_variances[static_cast<Eigen::Index>(u)];
      inv_s2[u] = 1.0 / s2[u];
      const int* cols = q.innerIndexPtr() + q.outerIndexPtr()[u];
      const int* end = q.innerIndexPtr() + q.outerIndexPtr()[u + 1];
      const double* vals = q.valuePtr() + q.outerIndexPtr()[u];
      auto entry = [&](Index c) { return vals[std::lower_bound(cols, end, c) - cols]; };  // Q's rows are sorted
      diag[u] = entry(static_cast<Index>(u));
      for (Index p = offsets[u]; p < offsets[u + 1]; ++p)
        inv_sig2[static_cast<std::size_t>(p)] = -entry(neighbors[static_cast<std::size_t>(p)]);
    }
  }

  // Gershgorin: lambda_max(Q) <= max_u (1/s_u^2 + 2 sum_{e at u} 1/sigma_e^2), and max_u (Q_uu + sum_v |Q_uv|) for a
  // weighted incidence.
  double gershgorin() const {
    double b = 0;
    if (is_weighted) {
      for (std::size_t u = 0; u < diag.size(); ++u) {
        double row = diag[u];
        for (Index p = offsets[u]; p < offsets[u + 1]; ++p) row += std::abs(inv_sig2[static_cast<std::size_t>(p)]);
        b = std::max(b, row);
      }
      return b;
    }
    for (std::size_t u = 0; u < diag.size(); ++u) b = std::max(b, 2 * diag[u] - inv_s2[u]);
    return b;
  }
};

// The upper end beta of the Chebyshev interval: lambda_max(Q) by Lanczos to a loose tolerance (1e-2: the top of an
// expander's spectrum is a dense band where a tighter one took 300 products on kregular:100000,32), raised by 2%,
// and never above the Gershgorin bound. Gershgorin alone overestimates lambda_max by half on a random 32-regular
// graph (1025 against 690 at s = 1, sigma = 0.25), which the powers of 2 of the kappa search cannot make up. The
// interval need not contain the spectrum for the identities to hold (any potential gives an unbiased estimator and
// a valid bracket); it only sets the variance. Spectra's start is a fixed-seed random vector: reproducible.
double interval_top(const SparseMatrix& q, double gershgorin) {
  const Eigen::Index n = q.rows();
  if (n < 3) return gershgorin;
  Spectra::SparseSymMatProd<double, Eigen::Lower, Eigen::RowMajor, int> op(q);
  Spectra::SymEigsSolver<decltype(op)> solver(op, 1, std::min<Eigen::Index>(n, 20));
  solver.init();
  solver.compute(Spectra::SortRule::LargestAlge, 1000, 1e-2);
  if (solver.info() != Spectra::CompInfo::Successful) return gershgorin;
  return std::min(gershgorin, 1.02 * solver.eigenvalues()[0]);
}

// Node-by-node precomputation on the growing ball, in arrays local to the ball.
//
// The Chebyshev direction d_j lives on the j-hop ball of v, so q = Q d_j is pushed from d's support (each site adds
// its diagonal term to itself and its off-diagonal terms to its neighbours, which joins them to the support): one
// visit per site and incidence of the j-hop ball, instead of pulling q on the (j + 1)-hop ball (which on an expander
// is (degree - 1) times larger). After k steps res = r_k(Q) e_v and phi = P_k(Q) e_v, and the energies follow
// without another pass over the edges: Q phi = e_v - res gives phi^T Q phi = phi_v - phi^T res, so
//   l_v = 2 phi_v - phi^T Q phi = phi_v + phi^T res,   E_v = l_v + sum_u s_u^2 res_u^2
// (E_v = sum_u s_u^2 p_u^2 + phi^T L_sigma phi with p = e_v - L_sigma phi = res + D_s^-1 phi).
//
// Layout. A site's number is its position in the ball (the order in which the pushes reached it), and its work
// entries, diagonal and neighbours (as local numbers) are stored under that number, so the arithmetic reads
// contiguous arrays of the ball's size (485 sites of 40 bytes at kregular:10000,4, k = 5: the L1 cache) instead of
// arrays of the whole graph's. The map from graph nodes to local numbers is read only when a site is expanded for
// the first time (its neighbours are translated once and kept): later steps push along the local lists. On a
// lattice, where the ball grows slowly, that is most of the pushes; on an expander, where it grows geometrically, a
// third of them. The order of the sites, of the pushes and of every sum is the one of the graph-indexed version
// before it (the same bits: the seeded `marginals` outputs do not move). Measured against it (bench_flow_precompute,
// CPU time, loaded machine, alternating runs): kregular:10000,4 k = 5 and 6 1.15x to 1.25x faster, torus:100 the
// same within the noise (its balls already fit in the L1 cache). Tried and not kept: sources in breadth-first order
// (no gain measurable through the noise).
class LocalFlows {
 public:
  explicit LocalFlows(const LocalGraph& g)
      : m_g(g),
        m_local(g.diag.size()),
        m_support(g.diag.size() + 1),
        m_work(g.diag.size() + 1),
        m_q{std::vector<double>(g.diag.size() + 1), std::vector<double>(g.diag.size() + 1)},
        m_diag(g.diag.size() + 1),
        m_adj_offsets(g.diag.size() + 1),
        m_adj(g.neighbors.size()),
        m_adj_weights(g.uniform_weight > 0 ? 0 : g.neighbors.size()) {}

  // E_v and l_v of node v for degree k on [alpha, beta]. With `row`, also the residual r_k(Q) e_v (its non-zeros,
  // as (node, value) pairs in the order the ball was reached): row v of the symmetric r_k(Q).
  //
  // One pass over the support per step: step j first finishes step j - 1 at each site of the j-hop ball (res -= the
  // q accumulated by the previous push, the next direction d), then pushes Q d_j into the other q slot (the slots
  // alternate, so a site's finished q is never mixed with the one being accumulated). The sites that the push adds
  // (the (j + 1)-hop shell) have res = d = 0 and an empty finished q, for which that update is the identity, so
  // it is skipped. The arithmetic per site is the same, in the same order, as two passes per step.
  //
  // Adding a newly reached site to the ball is a branch (taken when the site is new). On a lattice the ball grows
  // slowly and the branch is predictable; on an expander most first expansions reach a new site and a branch-free
  // append is faster. The previous node's share of new sites among its translated incidences chooses (a count, so
  // the bits never depend on it).
  void flow(Index v, int k, const Chebyshev& c, double& energy, double& lower,
            std::vector<std::pair<Index, double>>* row = nullptr) {
    const std::size_t translated = m_g.uniform_weight > 0
                                       ? (m_branch_free ? flow_impl<true, true>(v, k, c, energy, lower, row)
                                                        : flow_impl<false, true>(v, k, c, energy, lower, row))
                                       : (m_branch_free ? flow_impl<true, false>(v, k, c, energy, lower, row)
                                                        : flow_impl<false, false>(v, k, c, energy, lower, row));
    m_branch_free =
        translated > 0 && static_cast<double>(m_last_size) > kBranchFreeShare * static_cast<double>(translated);
  }

  // Memory visits (a site or one of its incidences) since construction: the deterministic cost of the flows (the
  // count of the graph-indexed version: one per site and incidence of the j-hop ball at step j, and one per site of
  // the k-hop ball for the energies).
  double visits() const noexcept { return m_visits; }
  // Whether E_v exists (the model has D_s).
  bool has_energy() const noexcept { return m_g.has_energy; }

 private:
  static constexpr double kBranchFreeShare = 0.6;
  // Sites of prefetch distance in the first expansions: their graph rows, and half as far ahead the map entries of
  // their neighbours (on an expander these are random reads into arrays of the whole graph).
  static constexpr std::size_t kPrefetchAhead = 4;
  static constexpr std::size_t kLineIndices = 64 / sizeof(Index);  // neighbour ids per cache line

  // One site's potential phi, residual res and direction d together (24 bytes). The two slots of q = Q d are arrays
  // of their own (m_q): the pushes scatter into them, and on an expander most of the sites they reach (the k-hop
  // shell) use nothing else, so the scattered writes stay within 8 bytes a site.
  struct Work {
    double phi = 0, res = 0, d = 0;
  };

  // The local number of node x, which joins the ball if it is new (branch-free: the arrays have room for one more
  // site than the graph has nodes, and the slot past the ball is written whether or not it is taken).
  template <bool BranchFree>
  std::int32_t reach(Index x) {
    const std::uint32_t known = m_local.find(x);
    const auto size = static_cast<std::uint32_t>(m_size);
    if constexpr (BranchFree) {
      const bool fresh = known >= size;
      const std::uint32_t local = fresh ? size : known;
      m_local.set(x, local);
      m_support[m_size] = x;
      m_size += static_cast<std::size_t>(fresh);
      return static_cast<std::int32_t>(local);
    } else {
      if (known < size) return static_cast<std::int32_t>(known);
      m_local.set(x, size);
      m_support[m_size] = x;
      ++m_size;
      return static_cast<std::int32_t>(size);
    }
  }

  // flow() with the branch-free append or not, and with one weight for every edge or not; returns the incidences
  // translated to local numbers.
  template <bool BranchFree, bool Uniform>
  std::size_t flow_impl(Index v, int k, const Chebyshev& c, double& energy, double& lower,
                        std::vector<std::pair<Index, double>>* row) {
    m_size = 0;
    reach<false>(v);
    Work* work = m_work.data();
    work[0].res = 1.0;
    work[0].d = 1.0 / c.theta;
    double rho = 1.0 / c.sigma1, keep = 0, step = 0;
    std::size_t visits = 0, expanded = 0, listed = 0;  // sites with local lists, entries in them
    std::size_t inner = 1;  // the (k - 1)-hop ball (v itself for k = 0): the sites with phi, res or d; beyond, only q
    const Index* neighbors = m_g.neighbors.data();
    const double* weights = m_g.inv_sig2.data();
    const double uniform = m_g.uniform_weight;
    const Index* offsets = m_g.offsets.data();
    const double* graph_diag = m_g.diag.data();
    double* diag = m_diag.data();
    std::int32_t* adj = m_adj.data();
    double* adj_weights = m_adj_weights.data();
    std::size_t* adj_offsets = m_adj_offsets.data();
    adj_offsets[0] = 0;
    for (int j = 0; j < k; ++j) {
      double* const qd = m_q[(j + 1) & 1].data();  // q of step j - 1 (finished)
      double* const qn = m_q[j & 1].data();        // q of step j
      const std::size_t ball = m_size;             // d_j lives on sites [0, ball): the j-hop ball
      const bool keep_lists = j + 1 < k;           // the last step's lists would never be read
      // Finishes step j - 1 at site t (res -= Q d_(j-1), then d_j) and takes d_j into phi and the diagonal push.
      auto advance = [&](std::size_t t) {
        Work& wu = work[t];
        if (j > 0) {
          wu.res -= qd[t];
          qd[t] = 0.0;
          wu.d = keep * wu.d + step * wu.res;
        }
        wu.phi += wu.d;
        return wu.d;
      };
      for (std::size_t t = 0; t < expanded; ++t) {  // pushes along the sites' local lists
        const double du = advance(t);
        qn[t] += diag[t] * du;
        const std::size_t first = adj_offsets[t], last = adj_offsets[t + 1];
        visits += last - first + 2;
        for (std::size_t p = first; p < last; ++p) qn[adj[p]] -= (Uniform ? uniform : adj_weights[p]) * du;
      }
      for (std::size_t t = expanded; t < ball; ++t) {  // first expansions: translate the neighbours and keep them
        if (t + 2 * kPrefetchAhead < ball) {
          const auto ahead = static_cast<std::size_t>(m_support[t + 2 * kPrefetchAhead]);
          __builtin_prefetch(offsets + ahead);
          __builtin_prefetch(graph_diag + ahead);
        }
        if (t + kPrefetchAhead < ball) {
          const auto ahead = static_cast<std::size_t>(m_support[t + kPrefetchAhead]);
          const Index* row = neighbors + offsets[ahead];
          const Index* row_end = neighbors + offsets[ahead + 1];
          for (; row < row_end; row += kLineIndices) __builtin_prefetch(row);
          __builtin_prefetch(row_end - 1);
        }
        if (t + kPrefetchAhead / 2 < ball) {
          const auto ahead = static_cast<std::size_t>(m_support[t + kPrefetchAhead / 2]);
          for (Index p = offsets[ahead]; p < offsets[ahead + 1]; ++p)
            __builtin_prefetch(m_local.data() + neighbors[static_cast<std::size_t>(p)]);
        }
        const double du = advance(t);
        const auto u = static_cast<std::size_t>(m_support[t]);
        diag[t] = graph_diag[u];
        qn[t] += diag[t] * du;
        const auto first = static_cast<std::size_t>(offsets[u]), last = static_cast<std::size_t>(offsets[u + 1]);
        visits += last - first + 2;
        for (std::size_t p = first; p < last; ++p) {
          const std::int32_t x = reach<BranchFree>(neighbors[p]);
          if (keep_lists) {
            adj[listed] = x;
            if constexpr (!Uniform) adj_weights[listed] = weights[p];
          }
          ++listed;
          qn[x] -= (Uniform ? uniform : weights[p]) * du;
        }
        adj_offsets[t + 1] = listed;
      }
      expanded = ball;
      inner = ball;
      const double rho_next = 1.0 / (2 * c.sigma1 - rho);
      keep = rho_next * rho;
      step = 2 * rho_next / c.delta;
      rho = rho_next;
    }
    // Finish the last step on the k-hop ball (which holds every non-zero of res; phi lives on the (k - 1)-hop
    // ball), take the energies, and clear the work arrays. On the shell beyond the (k - 1)-hop ball res = 0 - q and
    // phi = 0, whose product adds nothing to phi_res.
    const double* q = m_q[(k + 1) & 1].data();
    double phi_res = 0, res_energy = 0;
    if (row) row->clear();
    const double* s2 = m_g.s2.data();
    const double uniform_s2 = m_g.uniform_s2;
    auto finish = [&](std::size_t t, double res) {
      const Index w = m_support[t];
      if (uniform_s2 == 0 && t + 2 * kPrefetchAhead < m_size)
        __builtin_prefetch(s2 + m_support[t + 2 * kPrefetchAhead]);
      res_energy += (uniform_s2 > 0 ? uniform_s2 : s2[static_cast<std::size_t>(w)]) * res * res;
      if (row) row->emplace_back(w, res);
    };
    for (std::size_t t = 0; t < inner; ++t) {
      const double res = work[t].res - q[t];
      phi_res += work[t].phi * res;
      finish(t, res);
    }
    for (std::size_t t = inner; t < m_size; ++t) finish(t, 0.0 - q[t]);
    lower = work[0].phi + phi_res;
    energy = lower + res_energy;
    std::fill(work, work + inner, Work());
    std::fill(m_q[(k + 1) & 1].begin(), m_q[(k + 1) & 1].begin() + static_cast<std::ptrdiff_t>(m_size), 0.0);
    m_local.next(m_size);
    m_visits += static_cast<double>(visits + m_size);
    m_last_size = m_size;
    return listed;
  }

  const LocalGraph& m_g;
  detail::BallNumbering m_local;  // graph node -> local number in the ball
  std::vector<Index> m_support;   // local number -> graph node
  std::vector<Work> m_work;
  std::vector<double> m_q[2];              // the two slots of q = Q d by local number
  std::vector<double> m_diag;              // Q_uu by local number (expanded sites)
  std::vector<std::size_t> m_adj_offsets;  // local lists of the expanded sites: neighbours' local numbers
  std::vector<std::int32_t> m_adj;         // and, unless every edge has one weight, their 1/sigma_e^2
  std::vector<double> m_adj_weights;
  std::size_t m_size = 0, m_last_size = 0;
  bool m_branch_free = false;
  double m_visits = 0;
};

// The flows of many nodes on the threads of a budget, one LocalFlows (work arrays of the graph's size) per worker, made
// when the worker first needs it and kept for the later batches. A node's E_v and l_v depend on nothing but the node,
// the degree and the interval (a LocalFlows carries scratch space, and a branch choice that never changes a result),
// so the bits do not depend on the number of threads or on which worker computes which node. The nodes are split
// into chunks of consecutive positions, about 16 per thread: on an expander the balls are all alike, on a lattice
// with boundaries or a graph of mixed degrees the later chunks balance the load.
class FlowPool {
 public:
  FlowPool(const LocalGraph& g, unsigned threads) : m_g(g), m_workers(std::max(1u, threads)) {}

  // E and l of node node_of(i), i in [0, count), handed to store(i, E, l) (each i once, from any thread).
  template <class NodeOf, class Store>
  void run(std::size_t count, const NodeOf& node_of, int k, const Chebyshev& c, const Store& store) {
    const auto threads = static_cast<unsigned>(m_workers.size());
    const std::size_t chunk = std::max<std::size_t>(1, count / (16 * static_cast<std::size_t>(threads)));
    detail::run_worker_tasks((count + chunk - 1) / chunk, threads, [&](std::size_t t, unsigned w) {
      LocalFlows& local = worker(w);
      for (std::size_t i = t * chunk; i < std::min(count, (t + 1) * chunk); ++i) {
        double energy = 0, lower = 0;
        local.flow(node_of(i), k, c, energy, lower);
        store(i, energy, lower);
      }
    });
  }

  // The first worker (for a caller's serial flows).
  LocalFlows& first() { return worker(0); }
  bool has_energy() const noexcept { return m_g.has_energy; }

 private:
  LocalFlows& worker(unsigned w) {
    if (!m_workers[w]) m_workers[w] = std::make_unique<LocalFlows>(m_g);
    return *m_workers[w];
  }

  const LocalGraph& m_g;
  std::vector<std::unique_ptr<LocalFlows>> m_workers;  // each touched by its own thread only
};

// E and l of every node by dense matrix algebra: Phi = P_k(Q) (the same recurrence on the identity), then
// E_v = sum_u s_u^2 P_uv^2 + (Phi^T L_sigma Phi)_vv with P = I - L_sigma Phi, and l_v = 2 Phi_vv - (Phi^T Q Phi)_vv.
// Phi = P_k(Q) densely: the Chebyshev recurrence on the identity (column v is node v's potential).
Eigen::MatrixXd dense_potentials(const Eigen::MatrixXd& Q, int k, const Chebyshev& c) {
  const Eigen::Index n = Q.rows();
  Eigen::MatrixXd phi = Eigen::MatrixXd::Zero(n, n), res = Eigen::MatrixXd::Identity(n, n), d = res / c.theta;
  double rho = 1.0 / c.sigma1;
  for (int j = 0; j < k; ++j) {
    phi += d;
    res -= Q * d;
    const double rho_next = 1.0 / (2 * c.sigma1 - rho);
    d = rho_next * rho * d + (2 * rho_next / c.delta) * res;
    rho = rho_next;
  }
  return phi;
}

// L_sigma = Q - D_s^-1, dense.
Eigen::MatrixXd dense_weighted_laplacian(const Eigen::MatrixXd& Q, const Eigen::VectorXd& s2) {
  Eigen::MatrixXd Ls = Q;
  Ls.diagonal() -= s2.cwiseInverse();
  return Ls;
}

void dense_flows(const Model& m, int k, const Chebyshev& c, Eigen::VectorXd& energy, Eigen::VectorXd& lower) {
  const Eigen::MatrixXd Q = Eigen::MatrixXd(m.primal_precision());
  const Eigen::Index n = Q.rows();
  if (!m.has_dual()) {  // l_v = 2 Phi_vv - (Phi^T Q Phi)_vv alone
    const Eigen::MatrixXd phi = dense_potentials(Q, k, c);
    const Eigen::MatrixXd quad = phi.transpose() * Q * phi;
    energy = Eigen::VectorXd::Constant(n, kNoEnergy);
    lower = 2 * phi.diagonal() - quad.diagonal();
    return;
  }
  const Eigen::VectorXd s2 = m.node_variances();
  const Eigen::MatrixXd Ls = dense_weighted_laplacian(Q, s2);
  const Eigen::MatrixXd phi = dense_potentials(Q, k, c);
  const Eigen::MatrixXd P = Eigen::MatrixXd::Identity(n, n) - Ls * phi;
  const Eigen::MatrixXd edge = phi.transpose() * Ls * phi, quad = phi.transpose() * Q * phi;
  energy.resize(n);
  lower.resize(n);
  for (Eigen::Index v = 0; v < n; ++v) {
    energy[v] = (s2.array() * P.col(v).array().square()).sum() + edge(v, v);
    lower[v] = 2 * phi(v, v) - quad(v, v);
  }
}

// The tuning nodes: evenly spaced ids.
std::vector<Index> tuning_set(Index n, Index count) {
  std::vector<Index> out;
  if (count >= n) {
    for (Index v = 0; v < n; ++v) out.push_back(v);
    return out;
  }
  for (Index t = 0; t < count; ++t) out.push_back(static_cast<Index>(static_cast<std::int64_t>(t) * n / count));
  return out;
}

// Sum of E_v over the tuning nodes for degree k and kappa: E_v - V_v is the gap and V_v is fixed, so the kappa
// that minimises it is the best one without knowing the truth (section 4A of the research note). Searched over
// kappa = 2^j, j = 1..16: first every other power (4, 16, ..., 65536), then the two powers beside the best. With a
// hint (the best kappa of a neighbouring degree), a descent over the powers of 2 from the hint instead: the sum
// is unimodal in log kappa on every graph measured, and the best kappa moves by a power or two from one degree to
// the next, so this takes 3 or 4 sums instead of 10.
// Without D_s (no E_v) the sum of -l_v instead: V_v - l_v = E[((r_k(Q) x)_v)^2] is the primal estimator's gap and V_v
// is fixed, so the kappa that maximises the lower bounds minimises the primal gaps, again without the truth.
double best_kappa(FlowPool& pool, const std::vector<Index>& tune, int k, double beta, double hint = 0) {
  const bool energy = pool.has_energy();
  std::vector<double> terms(tune.size());  // E_v, or -l_v without D_s
  auto energy_sum = [&](double kappa) {
    pool.run(
        tune.size(), [&](std::size_t i) { return tune[i]; }, k, Chebyshev(beta / kappa, beta),
        [&](std::size_t i, double e, double l) { terms[i] = energy ? e : -l; });
    double sum = 0;
    for (double term : terms) sum += term;  // in the tuning nodes' order, whatever the threads
    return sum;
  };
  double kappa = 4, best_sum = std::numeric_limits<double>::infinity();
  auto consider = [&](double candidate) {
    const double sum = energy_sum(candidate);
    if (sum < best_sum) {
      best_sum = sum;
      kappa = candidate;
      return true;
    }
    return false;
  };
  if (hint > 0) {
    kappa = std::clamp(std::exp2(std::round(std::log2(hint))), 2.0, 65536.0);
    const double start = kappa;
    consider(start);
    bool up = false;
    for (double c = start * 2; c <= 65536 && consider(c); c *= 2) up = true;
    if (!up)
      for (double c = start / 2; c >= 2 && consider(c); c /= 2) {
      }
    return kappa;
  }
  for (double candidate = 4; candidate <= 65536; candidate *= 4) consider(candidate);
  const double coarse = kappa;
  consider(coarse / 2);
  if (coarse < 65536) consider(coarse * 2);
  return kappa;
}

// ---- the residual map on a row-major block ---------------------------------------------------------------------
//
// r_k(Q) B for a block of `width` columns stored row by row (all samples of one node together), fused: one pass over
// Q's rows per Chebyshev step computes res -= Q d for a row and, from it, the next direction dn = keep d + step res
// of that row (d is read by the later rows of the same step, so the new direction goes to a second buffer). The last
// step instead adds res^2 to `sums` (when given) and keeps res. Each entry gets the same operations in the same order
// whatever the width and the instruction set (-ffp-contract=off: no fused multiply-adds), so the bits do not depend
// on either: the AVX2 and AVX-512F instances only run four or eight lanes at a time. Against Eigen's sparse-times-dense
// product followed by a separate update of d (two more passes over the block), this took about half the CPU time on
// kregular:10000,4 with 16 chains at k = 5 (docs/accuracy.md).
struct CsrView {
  const int* outer;
  const int* inner;
  const double* value;
  Index rows;
};

// A fixed-width row (W a multiple of 8) works on GCC vectors of eight doubles: left to loops over arrays of W doubles,
// GCC kept the accumulator in W scalar registers (one vmulsd and one vaddsd per column and non-zero). Lane by lane a
// vector performs the same multiplies and adds in the same order, so the bits are those of the scalar loops.
typedef double Lanes8 __attribute__((vector_size(8 * sizeof(double))));

// One row of a step: acc = (Q d)_i over the row's non-zeros, then res_i -= acc and either dn_i = keep d_i + step res_i
// or sums_i += res_i^2 (last step). W > 0: the width at compile time, in vectors held in registers; W = 0: `w`
// columns, the accumulator in `scratch`.
template <int W>
[[gnu::always_inline]] inline void residual_row(const CsrView& q, std::size_t i, std::size_t w,
                                                const double* __restrict d, double* __restrict res,
                                                double* __restrict dn, double* __restrict sums, double keep,
                                                double step, double* __restrict scratch) {
  if constexpr (W > 0) {
    static_assert(W % 8 == 0, "residual_row: a fixed width of whole vectors");
    constexpr int V = W / 8;
    constexpr std::size_t bytes = sizeof(Lanes8);
    Lanes8 acc[V];
    for (int v = 0; v < V; ++v) acc[v] = Lanes8{};
    for (int p = q.outer[i]; p < q.outer[i + 1]; ++p) {
      const double a = q.value[p];
      const double* dj = d + static_cast<std::size_t>(q.inner[p]) * W;
      for (int v = 0; v < V; ++v) {
        Lanes8 x;
        std::memcpy(&x, dj + 8 * v, bytes);
        acc[v] += a * x;
      }
    }
    for (int v = 0; v < V; ++v) {
      const std::size_t at = i * W + 8 * static_cast<std::size_t>(v);
      Lanes8 r;
      std::memcpy(&r, res + at, bytes);
      r -= acc[v];
      std::memcpy(res + at, &r, bytes);
      if (dn) {
        Lanes8 x;
        std::memcpy(&x, d + at, bytes);
        const Lanes8 next = keep * x + step * r;
        std::memcpy(dn + at, &next, bytes);
      } else if (sums) {
        Lanes8 sq;
        std::memcpy(&sq, sums + at, bytes);
        sq += r * r;
        std::memcpy(sums + at, &sq, bytes);
      }
    }
  } else {
    double* __restrict acc = scratch;
    for (std::size_t t = 0; t < w; ++t) acc[t] = 0.0;
    for (int p = q.outer[i]; p < q.outer[i + 1]; ++p) {
      const double a = q.value[p];
      const double* __restrict dj = d + static_cast<std::size_t>(q.inner[p]) * w;
      for (std::size_t t = 0; t < w; ++t) acc[t] += a * dj[t];
    }
    double* __restrict ri = res + i * w;
    const double* __restrict di = d + i * w;
    if (dn) {
      double* __restrict ni = dn + i * w;
      for (std::size_t t = 0; t < w; ++t) {
        ri[t] -= acc[t];
        ni[t] = keep * di[t] + step * ri[t];
      }
    } else if (sums) {
      double* __restrict si = sums + i * w;
      for (std::size_t t = 0; t < w; ++t) {
        ri[t] -= acc[t];
        si[t] += ri[t] * ri[t];
      }
    } else {
      for (std::size_t t = 0; t < w; ++t) ri[t] -= acc[t];
    }
  }
}

constexpr std::size_t kAhead = 4;  // rows of prefetch distance in residual_block_impl

template <int W>
[[gnu::always_inline]] inline void residual_block_impl(const CsrView& q, int k, const Chebyshev& c, Index width,
                                                       double* res, double* d, double* dn, double* sums) {
  const auto w = static_cast<std::size_t>(width);
  const auto n = static_cast<std::size_t>(q.rows);
  std::vector<double> scratch(W > 0 ? 0 : w);
  double rho = 1.0 / c.sigma1;
  for (int j = 0; j < k; ++j) {
    const double rho_next = 1.0 / (2 * c.sigma1 - rho);
    const double keep = rho_next * rho, step = 2 * rho_next / c.delta;
    double* next = j + 1 < k ? dn : nullptr;
    double* squares = j + 1 < k ? nullptr : sums;
    for (std::size_t i = 0; i < n; ++i) {
      // The rows of d that row i + kAhead will read: on an expander they are scattered over the whole block, which
      // exceeds the L2 cache at 16 chains of 10^4 nodes, and no hardware prefetcher guesses them.
      if (i + kAhead < n)
        for (int p = q.outer[i + kAhead]; p < q.outer[i + kAhead + 1]; ++p) {
          const double* dj = d + static_cast<std::size_t>(q.inner[p]) * w;
          __builtin_prefetch(dj);
          if (w > 8) __builtin_prefetch(dj + 8);
        }
      residual_row<W>(q, i, w, d, res, next, squares, keep, step, scratch.data());
    }
    std::swap(d, dn);
    rho = rho_next;
  }
}

template <int W>
__attribute__((target("avx2"))) void residual_block_avx2(const CsrView& q, int k, const Chebyshev& c, Index width,
                                                         double* res, double* d, double* dn, double* sums) {
  residual_block_impl<W>(q, k, c, width, res, d, dn, sums);
}

template <int W>
__attribute__((target("avx512f"))) void residual_block_avx512(const CsrView& q, int k, const Chebyshev& c, Index width,
                                                              double* res, double* d, double* dn, double* sums) {
  residual_block_impl<W>(q, k, c, width, res, d, dn, sums);
}

template <int W>
void residual_block_plain(const CsrView& q, int k, const Chebyshev& c, Index width, double* res, double* d, double* dn,
                          double* sums) {
  residual_block_impl<W>(q, k, c, width, res, d, dn, sums);
}

// res (row-major, rows x width) holds b on entry and r_k(Q) b on exit; d and dn are work blocks of the same size;
// sums, when not null, gets res^2 added. k >= 1.
void residual_block(const SparseMatrix& matrix, int k, const Chebyshev& c, Index width, double* res, double* d,
                    double* dn, double* sums) {
  SparseMatrix copy;
  const SparseMatrix& qm = compressed(matrix, copy);
  const CsrView q{qm.outerIndexPtr(), qm.innerIndexPtr(), qm.valuePtr(), static_cast<Index>(qm.rows())};
  const std::size_t size = static_cast<std::size_t>(q.rows) * static_cast<std::size_t>(width);
  for (std::size_t e = 0; e < size; ++e) d[e] = res[e] / c.theta;
  static const bool avx2 = __builtin_cpu_supports("avx2"), avx512 = __builtin_cpu_supports("avx512f");
  if (width == 16)
    (avx512 ? residual_block_avx512<16>
     : avx2 ? residual_block_avx2<16>
            : residual_block_plain<16>)(q, k, c, width, res, d, dn, sums);
  else if (width == 8)
    (avx512 ? residual_block_avx512<8>
     : avx2 ? residual_block_avx2<8>
            : residual_block_plain<8>)(q, k, c, width, res, d, dn, sums);
  else
    (avx2 ? residual_block_avx2<0> : residual_block_plain<0>)(q, k, c, width, res, d, dn, sums);
}

// r_k(Q) b for column-major b, in tiles of kResidualTile columns, the tiles spread over `threads` threads
// (run_tasks): a tile's three row-major work blocks (|V| x 16 doubles each) stay in the L1 or L2 cache, where the
// whole block of 10^4 chains (fig6: 8 MB each) streamed from memory at every step. Every column gets the same
// operations in the same order whatever the tile and the thread (residual_block), so the bits are those of one
// block of every column.
constexpr Index kResidualTile = 16;
// r_k(Q) (in .* B) .* out_scale into `out` (resized, its memory reused), B's rows scaled by `in` and the result's
// by `out_scale` where given, tile by tile: the same operations, element by element, as scaling B, mapping it and
// scaling the map, without a temporary of B's size.
void tiled_residual_into(const SparseMatrix& q, int k, const Chebyshev& c, const Eigen::Ref<const Eigen::MatrixXd>& b,
                         unsigned threads, Eigen::MatrixXd& out, const Eigen::VectorXd* in = nullptr,
                         const Eigen::VectorXd* out_scale = nullptr) {
  using RowBlock = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  SparseMatrix copy;
  const SparseMatrix& qc = compressed(q, copy);
  out.resize(b.rows(), b.cols());
  const auto tiles = static_cast<std::size_t>((b.cols() + kResidualTile - 1) / kResidualTile);
  const double flops = 2.0 * k * static_cast<double>(qc.nonZeros()) * static_cast<double>(b.cols());
  detail::run_tasks(tiles, flops, threads, [&](std::size_t t) {
    const Index first = static_cast<Index>(t) * kResidualTile;
    const Index width = std::min<Index>(kResidualTile, static_cast<Index>(b.cols()) - first);
    RowBlock res = b.middleCols(first, width), d(b.rows(), width), dn(b.rows(), width);
    if (in) res.array().colwise() *= in->array();
    if (k > 0) residual_block(qc, k, c, width, res.data(), d.data(), dn.data(), nullptr);
    if (out_scale) res.array().colwise() *= out_scale->array();
    out.middleCols(first, width) = res;
  });
}

Eigen::MatrixXd tiled_residual(const SparseMatrix& q, int k, const Chebyshev& c,
                               const Eigen::Ref<const Eigen::MatrixXd>& b, unsigned threads) {
  Eigen::MatrixXd out;
  tiled_residual_into(q, k, c, b, threads, out);
  return out;
}

// Samples of the control variate's maps have one row per node.
void check_sample_rows(Index rows, Index nodes) {
  if (rows != nodes)
    throw std::invalid_argument("FlowControlVariate: samples have " + std::to_string(rows) + " rows, the model " +
                                std::to_string(nodes) + " nodes");
}

}  // namespace

FlowControlVariate::FlowControlVariate(const Model& model, const FlowCvOptions& o, const Execution& execution)
    : m_q(model.primal_precision()),
      m_s2(model.has_dual() ? model.node_variances() : Eigen::VectorXd::Constant(model.num_nodes(), kNoEnergy)),
      m_has_energy(model.has_dual()) {
  if (o.degree < -1 || o.degree > 1000)
    throw std::invalid_argument("FlowControlVariate: degree = " + std::to_string(o.degree) +
                                " (expected -1 for automatic, 0 for no control variate, or 1..1000)");
  if (!std::isfinite(o.kappa) || (o.kappa != 0 && !(o.kappa > 1)))
    throw std::invalid_argument("FlowControlVariate: kappa = " + std::to_string(o.kappa) +
                                " (expected 0 for automatic, or a finite value > 1)");
  if (!std::isfinite(o.beta) || o.beta < 0)
    throw std::invalid_argument("FlowControlVariate: beta = " + std::to_string(o.beta) +
                                " (expected 0 for automatic, or a finite value > 0)");
  if (o.tuning_nodes < 1)
    throw std::invalid_argument("FlowControlVariate: tuning_nodes = " + std::to_string(o.tuning_nodes) +
                                " (expected at least 1)");
  if (o.precompute == FlowPrecompute::Dense && model.num_nodes() > 5000)
    throw std::invalid_argument(
        "FlowControlVariate: the dense precomputation is for graphs of at most 5000 nodes, "
        "this one has " +
        std::to_string(model.num_nodes()));
  const LocalGraph g(model);
  FlowPool pool(g, execution.thread_budget());
  const std::vector<Index> tune = tuning_set(model.num_nodes(), o.tuning_nodes);

  m_degree = o.degree;
  if (m_degree < 0) {
    // Without D_s and D_sigma there is no s/sigma: the rule's k = 8, and the sampled gap tells whether it was enough.
    const double ratio = model.num_edges() == 0 || !model.has_dual()
                             ? 0.0
                             : std::sqrt(model.node_variances().maxCoeff() / model.edge_variances().minCoeff());
    m_degree = static_cast<int>(std::min(64.0, 8.0 * std::max(1.0, std::ceil(ratio / 10.0))));
  }
  // The trivial flow does not depend on the interval: no Lanczos run for it.
  m_beta = o.beta > 0 ? o.beta : m_degree == 0 ? g.gershgorin() : interval_top(m_q, g.gershgorin());
  double kappa = o.kappa;
  if (kappa == 0 && m_degree == 0) kappa = 2;  // the trivial flow does not depend on the interval
  if (kappa == 0) kappa = best_kappa(pool, tune, m_degree, m_beta);
  m_alpha = m_beta / kappa;
  const Chebyshev c(m_alpha, m_beta);
  if (o.precompute == FlowPrecompute::Dense) {
    dense_flows(model, m_degree, c, m_energy, m_lower);
    return;
  }
  // Node by node on the threads, the nodes split over the group's members (each computes its share, then every
  // member gathers all: the same bits as one process).
  const auto n = static_cast<std::size_t>(model.num_nodes());
  std::vector<double> both(2 * n);  // E_v and l_v of node v at 2v and 2v + 1
  shared_items(execution.shared(), n, 2, both.data(), [&](std::size_t first, std::size_t last) {
    pool.run(
        last - first, [&](std::size_t i) { return static_cast<Index>(first + i); }, m_degree, c,
        [&](std::size_t i, double e, double l) {
          both[2 * (first + i)] = e;
          both[2 * (first + i) + 1] = l;
        });
  });
  m_energy.resize(model.num_nodes());
  m_lower.resize(model.num_nodes());
  for (std::size_t v = 0; v < n; ++v) {
    m_energy[static_cast<Eigen::Index>(v)] = both[2 * v];
    m_lower[static_cast<Eigen::Index>(v)] = both[2 * v + 1];
  }
}

Eigen::MatrixXd FlowControlVariate::energy_matrix() const {
  const Eigen::Index n = m_q.rows();
  if (!has_energy()) throw std::invalid_argument(kNeedsDs + std::string("energy_matrix"));
  if (n > 5000)
    throw std::invalid_argument(
        "FlowControlVariate::energy_matrix: dense, for graphs of at most 5000 nodes; this one has " +
        std::to_string(n));
  const Eigen::MatrixXd Q = Eigen::MatrixXd(m_q);
  const Eigen::MatrixXd Ls = dense_weighted_laplacian(Q, m_s2);
  const Eigen::MatrixXd phi = dense_potentials(Q, m_degree, Chebyshev(m_alpha, m_beta));
  const Eigen::MatrixXd P = Eigen::MatrixXd::Identity(n, n) - Ls * phi;
  return P.transpose() * m_s2.asDiagonal() * P + phi.transpose() * Ls * phi;
}

Eigen::MatrixXd FlowControlVariate::residual(const Eigen::Ref<const Eigen::MatrixXd>& b,
                                             const Execution& execution) const {
  check_sample_rows(b.rows(), m_q.rows());
  // Column by column the same arithmetic whatever the number of columns, so over a chain group the members split
  // the columns (one per chain) and gather them in order (chain_group.hpp): the same bits.
  ChainGroup* const group = execution.shared();
  if (!group) {
    if (m_degree == 0) return b;
    return tiled_residual(m_q, m_degree, Chebyshev(m_alpha, m_beta), b, execution.thread_budget());
  }
  Eigen::MatrixXd out(b.rows(), b.cols());
  shared_items(group, static_cast<std::size_t>(b.cols()), static_cast<std::size_t>(b.rows()), out.data(),
               [&](std::size_t first, std::size_t last) {
                 const auto f = static_cast<Eigen::Index>(first), n = static_cast<Eigen::Index>(last - first);
                 if (n > 0)
                   out.middleCols(f, n) = chebyshev_residual(m_q, m_degree, m_alpha, m_beta, b.middleCols(f, n));
               });
  return out;
}

Eigen::MatrixXd chebyshev_residual(const SparseMatrix& q, int degree, double alpha, double beta,
                                   const Eigen::Ref<const Eigen::MatrixXd>& b) {
  if (b.rows() != q.rows())
    throw std::invalid_argument("chebyshev_residual: samples have " + std::to_string(b.rows()) + " rows, the matrix " +
                                std::to_string(q.rows()));
  if (degree < 0) throw std::invalid_argument("chebyshev_residual: degree = " + std::to_string(degree));
  if (degree > 0 && !(alpha > 0 && alpha < beta && std::isfinite(beta)))
    throw std::invalid_argument("chebyshev_residual: the interval [" + std::to_string(alpha) + ", " +
                                std::to_string(beta) + "] must have 0 < alpha < beta");
  if (degree == 0) return b;
  // Row-major blocks: a row of the sparse Q times the block then reads whole rows (all samples of one node)
  // contiguously; with the column-major input it read each with a stride of |V| (3x slower, measured).
  return tiled_residual(q, degree, Chebyshev(alpha, beta), b, 1);
}

FlowDegreeProbe probe_flow_degree(const Model& model, int degree, Index tuning_nodes, double kappa_hint, double beta) {
  if (degree < 1 || degree > 1000)
    throw std::invalid_argument("probe_flow_degree: degree = " + std::to_string(degree) + " (expected 1..1000)");
  if (tuning_nodes < 1)
    throw std::invalid_argument("probe_flow_degree: tuning_nodes = " + std::to_string(tuning_nodes) +
                                " (expected at least 1)");
  if (!(kappa_hint == 0 || (std::isfinite(kappa_hint) && kappa_hint > 1)))
    throw std::invalid_argument("probe_flow_degree: kappa_hint = " + std::to_string(kappa_hint) +
                                " (expected 0 for none, or a finite value > 1)");
  if (!std::isfinite(beta) || beta < 0)
    throw std::invalid_argument("probe_flow_degree: beta = " + std::to_string(beta) +
                                " (expected 0 for automatic, or a finite value > 0)");
  const LocalGraph g(model);
  FlowPool pool(g, 1);
  LocalFlows& local = pool.first();
  FlowDegreeProbe p;
  p.degree = degree;
  p.beta = beta > 0 ? beta : interval_top(model.primal_precision(), g.gershgorin());
  p.nodes = tuning_set(model.num_nodes(), tuning_nodes);
  p.kappa = best_kappa(pool, p.nodes, degree, p.beta, kappa_hint);
  p.alpha = p.beta / p.kappa;
  const Chebyshev c(p.alpha, p.beta);
  const auto n = static_cast<Eigen::Index>(p.nodes.size());
  p.energy.resize(n);
  p.lower.resize(n);
  const double visits_before = local.visits();
  std::vector<Eigen::Triplet<double, int>> entries;
  std::vector<std::pair<Index, double>> row;
  for (Eigen::Index t = 0; t < n; ++t) {
    local.flow(p.nodes[static_cast<std::size_t>(t)], degree, c, p.energy[t], p.lower[t], &row);
    for (const auto& [u, value] : row) entries.emplace_back(static_cast<int>(t), static_cast<int>(u), value);
  }
  p.visits_per_node = (local.visits() - visits_before) / static_cast<double>(n);
  p.residual_rows.resize(static_cast<int>(n), static_cast<int>(model.num_nodes()));
  p.residual_rows.setFromTriplets(entries.begin(), entries.end());
  return p;
}

Eigen::MatrixXd FlowControlVariate::dual_terms(const Eigen::Ref<const Eigen::MatrixXd>& x_tilde,
                                               const Execution& execution) const {
  if (!has_energy()) throw std::invalid_argument(kNeedsDs + std::string("dual_terms"));
  if (x_tilde.rows() != m_s2.size()) return residual(x_tilde, execution);  // residual() names the mismatch
  return residual(m_s2.asDiagonal() * x_tilde, execution);
}

void FlowControlVariate::scaled_dual_terms(const Eigen::Ref<const Eigen::MatrixXd>& x_tilde, Eigen::MatrixXd& out,
                                           unsigned threads) const {
  if (!has_energy()) throw std::invalid_argument(kNeedsDs + std::string("scaled_dual_terms"));
  check_sample_rows(x_tilde.rows(), m_s2.size());
  const Eigen::VectorXd inverse = m_s2.cwiseInverse();
  tiled_residual_into(m_q, m_degree, Chebyshev(m_alpha, m_beta), x_tilde, Execution{threads}.thread_budget(), out,
                      &m_s2, &inverse);
}

Eigen::MatrixXd FlowControlVariate::primal_terms(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                                 const Execution& execution) const {
  return residual(x, execution);
}

MarginalVarianceCv::MarginalVarianceCv(const FlowControlVariate& cv, Domain domain, std::size_t chains)
    : m_cv(&cv), m_domain(domain) {
  if (domain == Domain::Dual && !cv.has_energy())
    throw std::invalid_argument(
        "MarginalVarianceCv: the dual estimate E_v - mean(u_v^2) needs D_s, and the model has "
        "no dual (its precision is not of factor width 2): use the primal domain");
  if (chains < 2)
    throw std::invalid_argument("MarginalVarianceCv: chains = " + std::to_string(chains) +
                                "; at least 2 independent chains are needed for a standard error");
  m_sums = Eigen::MatrixXd::Zero(cv.flow_energy().size(), static_cast<Eigen::Index>(chains));
}

void MarginalVarianceCv::add(const Eigen::Ref<const Eigen::MatrixXd>& states, const Execution& execution) {
  if (states.rows() != m_sums.rows() || states.cols() != m_sums.cols())
    throw std::invalid_argument("MarginalVarianceCv::add: states are " + std::to_string(states.rows()) + " x " +
                                std::to_string(states.cols()) + ", expected " + std::to_string(m_sums.rows()) + " x " +
                                std::to_string(m_sums.cols()) + " (nodes x chains)");
  if (!states.allFinite()) throw std::invalid_argument("MarginalVarianceCv::add: a state has a non-finite value");
  const bool dual = m_domain == Domain::Dual;
  if (execution.shared() || m_cv->degree() == 0) {  // the members split the columns (residual())
    const Eigen::MatrixXd u = dual ? m_cv->dual_terms(states, execution) : m_cv->primal_terms(states, execution);
    m_sums += u.cwiseAbs2();
  } else {
    // The fused row-major map (residual_block) into buffers kept between evaluations, squares added in its last
    // step: the same arithmetic as residual(), without its three conversions and temporaries.
    m_res = states;
    if (dual) m_res.array().colwise() *= m_cv->m_s2.array();
    m_d.resize(m_res.rows(), m_res.cols());
    m_dn.resize(m_res.rows(), m_res.cols());
    residual_block(m_cv->m_q, m_cv->degree(), Chebyshev(m_cv->alpha(), m_cv->beta()), m_res.cols(), m_res.data(),
                   m_d.data(), m_dn.data(), m_sums.data());
  }
  ++m_evaluations;
}

Eigen::VectorXd MarginalVarianceCv::gap() const {
  if (m_evaluations == 0) throw std::logic_error("MarginalVarianceCv: no evaluation added yet");
  return m_sums.rowwise().mean() / static_cast<double>(m_evaluations);
}

Eigen::VectorXd MarginalVarianceCv::estimate() const {
  return m_domain == Domain::Dual ? Eigen::VectorXd(m_cv->flow_energy() - gap())
                                  : Eigen::VectorXd(m_cv->lower_bound() + gap());
}

Eigen::VectorXd MarginalVarianceCv::std_error() const {
  return detail::chain_spread_std_error(m_sums, m_evaluations, gap());  // row by row (the sums are row-major)
}

}  // namespace dualgibbs
