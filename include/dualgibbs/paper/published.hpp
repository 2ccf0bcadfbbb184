#pragma once
/// \file published.hpp
/// The inputs of the authors' published runs that networkx and numpy made. The random inputs of their fig7 run
/// (Theborna/dual_gibbs, experiments.py `ws_hetero_builder`), regenerated bit for bit: their Watts–Strogatz graphs come
/// from networkx 2.8's `watts_strogatz_graph(n, k, p, seed=r)` driven by CPython's `random.Random(r)`, their node and
/// edge standard deviations from numpy's legacy generator (`np.random.seed(1000 + r)`, then `np.random.beta(1, 1)`
/// scaled to a range, nodes first, then edges in networkx's edge order). `reproduce fig7 --as-published`
/// uses these; tests/test_published.cpp checks them against networkx and numpy output. Their torus numbers its
/// edges in networkx's order, which `reproduce fig8 --as-published` uses for its fixed scan (networkx_torus()), and
/// `reproduce fig10` fits its Eu curves also as their K5 files were fitted (authors_decay_rate()).
///
/// \code
/// dualgibbs::Graph g = dualgibbs::networkx_watts_strogatz(64, 4, 0.3, 0);   // the authors' graph r = 0
/// dualgibbs::NumpyLegacyRandom rng(1000);
/// std::vector<double> s = rng.beta11(64, 0.75, 1.5);                          // its s_v
/// std::vector<double> sigma = rng.beta11(g.num_edges(), 0.25, 0.5);            // its sigma_e, edge by edge
/// \endcode

#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/paper/export.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace dualgibbs {

/// networkx 2.8 `watts_strogatz_graph(n, k, p, seed)` with an integer seed: the same edges, oriented and
/// numbered in the order networkx's `G.edges()` lists them (its adjacency insertion order). CPython's
/// Mersenne Twister seeding (`init_by_array` of the seed's 32-bit words), `random()` (53 bits from two words)
/// and `choice` (`_randbelow` by rejection on `getrandbits`) are reproduced exactly.
/// \param n number of nodes
/// \param k neighbours per node in the ring lattice
/// \param p rewiring probability
/// \param seed networkx's integer seed
/// \return the graph
/// \throws std::invalid_argument for k >= n, odd k, n < 3, or p outside [0, 1].
DUALGIBBS_PAPER_EXPORT Graph networkx_watts_strogatz(Index n, Index k, double p, std::uint32_t seed);

/// The authors' torus (graphs.py `GMRF_Torus`): networkx 2.8 `grid_2d_graph(rows, cols, periodic=True)` with node
/// (i, j) relabelled `i * cols + j` (`relabel_nodes`, a copy), its edges oriented and numbered in the order the
/// relabelled graph's `G.edges()` lists them: for 10 x 10, (0, 10), (0, 1), (0, 90), (0, 9), (1, 11), .... The
/// same edge set as make_torus(rows, cols) in another order; a fixed-scan dual sweep visits the edges in it.
/// \param rows the number of rows (>= 3)
/// \param cols the number of columns (>= 3)
/// \return the graph
/// \throws std::invalid_argument for rows or cols below 3 (networkx adds no wrap-around edge there) or more than
///         10^6 nodes.
DUALGIBBS_PAPER_EXPORT Graph networkx_torus(Index rows, Index cols);

/// The decay-rate fit of the authors' K5 result files (results/ratio_sweep_K5_Eu.csv and ratio_sweep_K5.csv;
/// experiments.py `_decay_rate` with `decades` = 2, `floor_mult` = 3), written anew for comparison with their
/// numbers: the noise floor is the median of |value| over the last max(3, n/5) points; the window runs from the
/// first point to the first whose value is not above max(10^-2 y0, 3 floor), y0 the first positive value, and holds
/// at least 4 points; its positive values, shifted by max(3 floor, 1e-12), are fitted by a line in ln with
/// scikit-learn's Theil–Sen estimator as they call it (the spatial median, by the modified Weiszfeld iteration from
/// the mean, tolerance 1e-3, of the lines through every pair of points); the rate is minus its slope over
/// `divisor` (2 for Eu, which decays as r^2; 1 for the norm of the ensemble mean). Unlike the library's
/// fit_decay_rate() it starts at sweep 0, so the first sweep's faster modes enter the fit, and it uses no standard
/// errors.
/// \param sweeps the sweep of every point
/// \param values the curve, one value per sweep
/// \param divisor 2 for an Eu curve, 1 for a mean-norm curve
/// \return the rate -ln r per sweep, or NaN with fewer than 4 positive points in the window
/// \throws std::invalid_argument if the sizes differ
DUALGIBBS_PAPER_EXPORT double authors_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& values,
                                                 double divisor);

/// numpy's legacy `np.random.seed(seed)` stream (MT19937 `init_genrand`, doubles from two words).
class DUALGIBBS_PAPER_EXPORT NumpyLegacyRandom {
 public:
  /// `np.random.seed(seed)`.
  /// \param seed numpy's seed
  explicit NumpyLegacyRandom(std::uint32_t seed) : m_engine(seed) {}
  /// `np.random.random_sample()`: (a >> 5, b >> 6) of two words, 53 bits.
  /// \return a uniform double in [0, 1)
  double uniform();
  /// `lo + (hi - lo) * np.random.beta(1, 1, count)`: Johnk's algorithm of numpy's legacy_beta for a, b <= 1
  /// (two uniforms U, V per try, accepted when U + V <= 1, value U / (U + V)).
  /// \param count the number of values
  /// \param lo the range's bottom
  /// \param hi the range's top
  /// \return the count values
  std::vector<double> beta11(std::size_t count, double lo, double hi);

 private:
  std::mt19937 m_engine;
};

}  // namespace dualgibbs
