#pragma once
/// \file accelerated.hpp
/// Accelerated samplers: the SSOR sampler (SymmetricSweep, sampler.hpp) and its Chebyshev acceleration (Fox and
/// Parker, "Accelerated Gibbs sampling of normal distributions using matrix splittings and polynomials", Bernoulli
/// 23(4B), 2017), the spectra they need, their predicted rates, and ensembles run with them.
///
/// For a precision A = L + D + L^T (L strictly lower) and omega in (0, 2), the SSOR splitting is A = M - N with
///
///   M = omega / (2 - omega) (D / omega + L) D^-1 (D / omega + L)^T,   N = M - A (positive semidefinite),
///
/// and one symmetric sweep (SymmetricSweep) is x <- x + M^-1 (c - A x), c ~ N(0, M + N). Every eigenvalue of
/// M^-1 A lies in (0, 1]. ChebyshevSsorSweep runs the second-order iteration
///
///   x_{k+1} = (1 - alpha_k) x_{k-1} + alpha_k (x_k + tau M^-1 (c_k - A x_k)),   tau = 2 / (lambda_min + lambda_max),
///
/// with the Chebyshev weights alpha_k of the interval [lambda_min, lambda_max] and the noise
/// c_k ~ N(0, (2 - alpha_k) / alpha_k ((2 / tau) M - A)), which keeps N(0, A^-1) invariant: docs/sampler.md
/// section 2 derives it. The mean error after k iterations is P_k(M^-1 A) times the initial one, P_k the scaled
/// Chebyshev polynomial, and the covariance error P_k (S_0 - A^-1) P_k^T.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(32, 32), 1.0, 0.25);
/// const dualgibbs::SsorSpectrum sp = dualgibbs::ssor_spectrum(model.primal_precision(), 1.5);
/// dualgibbs::CsrKernel kernel(model.primal_precision());
/// dualgibbs::GibbsSampler<dualgibbs::CsrKernel, 1, dualgibbs::ChebyshevSsorSweep> chain(
///     kernel, dualgibbs::ChebyshevSsorSweep(sp), 42);
/// chain.set_constant_state(1.0);
/// chain.sweep(20);  // 20 Chebyshev-SSOR iterations, 2n site updates each
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/sampling/scheme.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

// ---- spectra and rates -----------------------------------------------------------------------------------

/// The extreme eigenvalues of M_omega^-1 A for an SPD matrix A (full symmetric storage), from the symmetric
/// similar operator K^1/2 M_f^-1 A M_f^-T K^1/2 (M_f = D / omega + L, K = (2 - omega) / omega D): dense for n <= 400,
/// else Spectra's Lanczos (two runs, largest and smallest). O(nnz) per Lanczos step; the smallest eigenvalue of a
/// large lattice needs many steps (about a minute for the 10^6-node torus). Where many eigenvalues crowd just below 1
/// (the dual of a graph with many cycles) the largest does not converge in 200 restarts, and lambda_max is the bound 1
/// that every SSOR preconditioner obeys (an interval that still contains the spectrum).
/// \param A the SPD matrix, full symmetric storage
/// \param omega the relaxation, in (0, 2)
/// \return omega and the extreme eigenvalues
/// \throws std::invalid_argument for omega outside (0, 2), an empty, non-square or non-finite A, or a diagonal entry
///         that is not positive; std::runtime_error if Lanczos does not converge to the smallest eigenvalue or it is
///         not positive (A is not numerically positive definite: a numerical failure, as for a factorization).
DUALGIBBS_EXPORT SsorSpectrum ssor_spectrum(const SparseMatrix& A, double omega);

/// ssor_spectrum of the domain's precision: Q (primal) or R (dual, formed explicitly for the computation).
/// \param model the model
/// \param domain the domain whose precision is used
/// \param omega the relaxation, in (0, 2)
/// \return omega and the extreme eigenvalues
DUALGIBBS_EXPORT SsorSpectrum ssor_spectrum(const Model& model, Domain domain, double omega);

/// The relaxation in [1, 1.95] minimising lambda_max / lambda_min of M_omega^-1 A (golden-section search on
/// ssor_spectrum, about 12 evaluations), i.e. the fastest Chebyshev-SSOR sampler. Returns its spectrum.
/// \param A the SPD matrix, full symmetric storage
/// \return the spectrum at the best omega found
DUALGIBBS_EXPORT SsorSpectrum optimal_ssor_spectrum(const SparseMatrix& A);

/// Coordinates up to which default_ssor_spectrum() searches the optimal relaxation.
constexpr Index kOptimalOmegaMaxDimension = 5000;

/// The spectrum a run uses when no relaxation is given: optimal_ssor_spectrum(A) for up to kOptimalOmegaMaxDimension
/// coordinates (about 13 spectra), else ssor_spectrum(A, 1) (one; the optimum's search would cost minutes there).
/// \param A the SPD matrix, full symmetric storage
/// \return the spectrum
DUALGIBBS_EXPORT SsorSpectrum default_ssor_spectrum(const SparseMatrix& A);

/// Predicted convergence factor per SSOR sweep (2n site updates) of the mean, 1 - lambda_min: the spectral radius
/// of I - M^-1 A (the covariance error decays as its square). \throws std::invalid_argument for a bad spectrum.
/// \param spectrum the SSOR spectrum
/// \return 1 - lambda_min
DUALGIBBS_EXPORT double ssor_rate(const SsorSpectrum& spectrum);

/// Predicted asymptotic convergence factor per Chebyshev-SSOR iteration (2n site updates) of the mean,
/// (sqrt(kappa) - 1) / (sqrt(kappa) + 1) with kappa = lambda_max / lambda_min of the interval the iteration uses
/// (ChebyshevSsorSweep::interval_max). \throws std::invalid_argument for a bad spectrum.
/// \param spectrum the SSOR spectrum
/// \return the factor per iteration
DUALGIBBS_EXPORT double chebyshev_ssor_rate(const SsorSpectrum& spectrum);

// ---- the Chebyshev-SSOR scheme ---------------------------------------------------------------------------

/// Chebyshev-accelerated SSOR (Fox and Parker 2017) as a sweep scheme of GibbsSampler: one sweep is one iteration,
/// a forward and a backward relaxed half-sweep (2n site updates, noise scaled per iteration) and the Chebyshev
/// combination with the previous iterate, which the scheme keeps (reset() when a state is set from outside
/// restarts the polynomial). The kernel needs set_site (both shipped kernels have it); the dual kernel's tally
/// x~ = B y~ is rebuilt exactly after each iteration.
///
/// Per iteration k (alpha_0 = 1, alpha_1 = 1 / (1 - rho^2 / 2), alpha_k = 1 / (1 - rho^2 alpha_{k-1} / 4),
/// rho = (lambda_max - lambda_min) / (lambda_max + lambda_min)): the forward half-sweep's deviates are scaled by
/// sqrt((2 - alpha_k) / alpha_k), the backward one's by sqrt((2 - alpha_k) / alpha_k (2 / tau - 1)). When
/// lambda_min + lambda_max < 1 the second factor would be imaginary; the scheme then uses the bound 1 >= lambda_max
/// (exact for every SSOR splitting) as the interval's top, which is slower but valid.
class DUALGIBBS_EXPORT ChebyshevSsorSweep {
 public:
  /// \param omega the relaxation, in (0, 2)
  /// \param lambda_min the smallest eigenvalue of M_omega^-1 A
  /// \param lambda_max the largest eigenvalue of M_omega^-1 A
  /// \throws std::invalid_argument unless 0 < omega < 2 and 0 < lambda_min <= lambda_max <= 1 (finite; lambda_max
  ///         up to 1 + 1e-9, clamped to 1), with a message saying that the bounds come from ssor_spectrum().
  ChebyshevSsorSweep(double omega, double lambda_min, double lambda_max);
  /// From a computed spectrum. \throws std::invalid_argument as above (e.g. for a default SsorSpectrum: no bounds).
  /// \param spectrum omega and the eigenvalue bounds
  explicit ChebyshevSsorSweep(const SsorSpectrum& spectrum)
      : ChebyshevSsorSweep(spectrum.omega, spectrum.lambda_min, spectrum.lambda_max) {}

  /// The relaxation.
  /// \return omega
  double omega() const noexcept { return m_omega; }
  /// The bottom of the Chebyshev interval (lambda_min).
  /// \return the interval's bottom
  double interval_min() const noexcept { return m_min; }
  /// The top of the Chebyshev interval: lambda_max, or 1 when lambda_min + lambda_max < 1.
  /// \return the interval's top
  double interval_max() const noexcept { return m_max; }
  /// tau = 2 / (interval_min + interval_max).
  /// \return tau
  double tau() const noexcept { return m_tau; }
  /// alpha_k of iteration k (0-based).
  /// \param k the iteration
  /// \return alpha_k
  double alpha(std::size_t k) const noexcept;
  /// alpha_{k+1} from alpha_k (the recurrence above).
  /// \param k the iteration of alpha_k
  /// \param alpha_k its alpha
  /// \return alpha_{k+1}
  double next_alpha(std::size_t k, double alpha_k) const noexcept;
  /// The step and the combination of one iteration, z = x_k + M^-1 (c_k - A x_k) on entry: z <- cur + tau (z - cur)
  /// at the first iteration, else z <- prev + alpha (cur + tau (z - cur) - prev), entry by entry.
  /// \param z the half-sweeps' result, overwritten with x_{k+1}
  /// \param cur x_k
  /// \param prev x_{k-1}
  /// \param len the entries
  /// \param first true at the first iteration
  /// \param alpha alpha_k
  /// \param tau the step
  static void combine(double* z, const double* cur, const double* prev, std::size_t len, bool first, double alpha,
                      double tau) noexcept {
    if (first) {
      for (std::size_t i = 0; i < len; ++i) z[i] = cur[i] + tau * (z[i] - cur[i]);
    } else {
      for (std::size_t i = 0; i < len; ++i) z[i] = prev[i] + alpha * (cur[i] + tau * (z[i] - cur[i]) - prev[i]);
    }
  }
  /// The backward half-sweep's extra noise factor sqrt(2 / tau - 1).
  /// \return the factor
  double backward_factor() const noexcept { return m_back; }

  /// Allocates the previous and current iterates (n x width each).
  /// \param n the number of coordinates
  /// \param width the lanes W
  void prepare(Index n, int width) {
    m_prev.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(width), 0.0);
    m_cur.assign(m_prev.size(), 0.0);
    m_iteration = 0;
  }
  /// Restarts the polynomial (the next iteration is iteration 0).
  void reset() noexcept { m_iteration = 0; }
  /// 2n site updates per iteration.
  /// \param n the number of coordinates
  /// \return 2n
  std::size_t site_updates(Index n) const noexcept { return 2 * static_cast<std::size_t>(n); }
  /// Iterations since the last reset().
  /// \return the iterations run
  std::size_t iteration() const noexcept { return m_iteration; }

  /// \throws std::invalid_argument for a kernel without set_site.
  template <class Kernel, int W>
  void check_kernel(const Kernel&) const {
    if (!detail::HasSetSite<Kernel, W>::value)
      throw std::invalid_argument(
          "ChebyshevSsorSweep: the site kernel has no set_site (the commit hook of relaxed updates), so the "
          "cheby-ssor scheme is not defined for it");
  }

  /// One Chebyshev-SSOR iteration of every lane.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) {
    const auto n = static_cast<std::size_t>(ctx.dimension());
    const std::size_t len = n * W;
    double* z = ctx.z;
    std::copy(z, z + len, m_cur.begin());
    const double a = m_iteration == 0 ? 1.0 : m_alpha;
    const double base = std::sqrt(m_omega * (2.0 - m_omega)), factor = std::sqrt((2.0 - a) / a);
    const auto ascending = [](std::size_t start, std::size_t count, Index* buf) {
      for (std::size_t t = 0; t < count; ++t) buf[t] = static_cast<Index>(start + t);
      return static_cast<const Index*>(buf);
    };
    const auto descending = [n](std::size_t start, std::size_t count, Index* buf) {
      for (std::size_t t = 0; t < count; ++t) buf[t] = static_cast<Index>(n - 1 - start - t);
      return static_cast<const Index*>(buf);
    };
    detail::relaxed_updates(ctx, n, ascending, m_omega, base * factor);
    detail::relaxed_updates(ctx, n, descending, m_omega, base * factor * m_back);
    // z is now x_k + M^-1 (c_k - A x_k); take the step tau and combine with x_{k-1}.
    combine(z, m_cur.data(), m_prev.data(), len, m_iteration == 0, a, m_tau);
    std::swap(m_prev, m_cur);
    ctx.kernel.template rebuild_tally<W>(ctx.z, ctx.tally);
    m_alpha = next_alpha(m_iteration, m_alpha);
    ++m_iteration;
  }

 private:
  double m_omega, m_min, m_max, m_tau, m_rho2, m_back;
  double m_alpha = 1.0;  // alpha of the next iteration
  std::size_t m_iteration = 0;
  std::vector<double> m_prev, m_cur;
};

// ---- colour-ordered sweeps: one chain on several threads ------------------------------------------------

namespace detail {
/// Helper threads kept for the life of their owner (ColoredSweep): run(parties, task) calls task(p) for p = 1 ..
/// parties - 1 on the helpers and task(0) on the calling thread, and returns when all calls have returned. The helpers
/// start at the first run() that needs them and sleep on a condition variable between runs, so a run costs a wake-up
/// instead of a thread start. A copy is a new team without threads. The task must not throw (a helper that throws
/// ends the program, as a std::thread does).
class DUALGIBBS_EXPORT WorkerTeam {
 public:
  WorkerTeam() noexcept;
  /// A new team without threads (the threads are not copied).
  WorkerTeam(const WorkerTeam&) noexcept;
  /// Keeps this team's threads.
  WorkerTeam& operator=(const WorkerTeam&) noexcept { return *this; }
  /// Stops and joins the helpers.
  ~WorkerTeam();
  /// task(0) here and task(p) on helper p for p < parties, concurrently; returns when all have returned.
  void run(std::size_t parties, const std::function<void(std::size_t)>& task);

 private:
  struct State;
  std::unique_ptr<State> m_state;
};
}  // namespace detail

/// Greedy colouring of the coordinates of a symmetric sparsity pattern (the off-diagonal entries of `pattern`):
/// coordinate i, in order 0..n-1, gets the smallest colour no earlier neighbour has. Returns the colour classes
/// (each in increasing order), which are independent sets of the precision: the Gibbs updates of one class commute.
/// \param pattern the symmetric sparsity pattern, n x n
/// \return the colour classes
/// \throws std::invalid_argument for a non-square matrix.
DUALGIBBS_EXPORT std::vector<std::vector<Index>> greedy_coloring(const SparseMatrix& pattern);

/// Greedy colouring of the edges of a graph so that edges of one colour share no node (edge e, in order, gets the
/// smallest colour not used at its head or tail): the independent sets of the dual precision R, whose edge updates
/// touch y~_e and the tally at its two end nodes only.
/// \param graph the graph
/// \return the colour classes of edge ids
DUALGIBBS_EXPORT std::vector<std::vector<Index>> greedy_edge_coloring(const Graph& graph);

/// The colour classes of a domain: greedy_coloring(Q) (primal) or greedy_edge_coloring(graph) (dual).
/// \param model the model
/// \param domain the domain to colour
/// \return the colour classes
DUALGIBBS_EXPORT std::vector<std::vector<Index>> domain_coloring(const Model& model, Domain domain);

/// A colour-ordered Gibbs sweep: the classes in order, each class's sites in order, plain Gibbs updates. Each class is
/// cut into blocks of kBlock sites (in class order); the deviates of block b of class k in sweep s come, for lane c
/// (chain first_chain + c), from their own stream NormalStream(block_seed(seed, s, k, b), first_chain + c), in site
/// order. The blocks are dealt to `threads` threads as contiguous ranges (the caller and threads - 1 helpers kept for
/// the life of the scheme, detail::WorkerTeam; each draws its blocks' deviates and updates them), so the deviates and
/// the result do not depend on the thread count. The sites of a class
/// must not be neighbours in the precision (greedy_coloring, greedy_edge_coloring), so their updates commute: the
/// result is bitwise the sequential sweep in colour order with the same deviates, for any number of threads. n site
/// updates per sweep. The lanes' own streams (GibbsSampler) are not used.
class DUALGIBBS_EXPORT ColoredSweep {
 public:
  /// Classes below this many sites are updated by the calling thread alone (waking the helpers costs microseconds).
  static constexpr std::size_t kMinParallelClass = 8192;
  /// Sites per block of keyed deviates (the unit a thread takes).
  static constexpr std::size_t kBlock = 4096;

  /// \param classes the colour classes, a partition of 0..n-1 into independent sets
  /// \param threads threads per class, >= 1
  /// \throws std::invalid_argument for threads = 0 or no classes.
  explicit ColoredSweep(std::vector<std::vector<Index>> classes, unsigned threads = 1);

  /// The seed of the deviate streams of block `block` of class `cls` in sweep `sweep` of a sampler seeded `seed`:
  /// mix64 (core/random.hpp) of the four, chained, different from `seed` itself for practical purposes.
  /// \param seed the sampler's seed
  /// \param sweep the sweep, from 0
  /// \param cls the colour class
  /// \param block the block within the class
  /// \return the block's seed
  static std::uint64_t block_seed(std::uint64_t seed, std::uint64_t sweep, std::uint64_t cls,
                                  std::uint64_t block) noexcept {
    return mix64(mix64(mix64(mix64(seed ^ 0x636f6c6f72656421ULL) + sweep) + cls) + block);
  }

  /// The colour classes.
  /// \return the classes
  const std::vector<std::vector<Index>>& classes() const noexcept { return m_classes; }
  /// Threads that update one class.
  /// \return the threads per class
  unsigned threads() const noexcept { return m_threads; }

  /// Allocates each thread's deviates and streams. \throws std::invalid_argument unless the classes partition 0..n-1.
  /// \param n the number of coordinates
  /// \param width the lanes W
  void prepare(Index n, int width);
  /// No history.
  void reset() noexcept {}
  /// n updates per sweep.
  /// \param n the number of coordinates
  /// \return n
  std::size_t site_updates(Index n) const noexcept { return static_cast<std::size_t>(n); }

  /// One sweep of every lane.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) {
    for (std::size_t k = 0; k < m_classes.size(); ++k) {
      const std::vector<Index>& cls = m_classes[k];
      const std::size_t count = cls.size(), blocks = (count + kBlock - 1) / kBlock;
      const auto run_blocks = [&](std::size_t first, std::size_t last, Scratch& scratch) {
        double* eps = scratch.eps.data();
        for (std::size_t b = first; b < last; ++b) {
          const std::size_t start = b * kBlock, len = std::min(kBlock, count - start);
          if (ctx.noise) {
            const std::uint64_t key = block_seed(ctx.seed, ctx.sweep, k, b);
            scratch.streams.clear();
            for (int c = 0; c < W; ++c)
              scratch.streams.emplace_back(key, ctx.first_chain + static_cast<std::uint64_t>(c));
            NormalStream::fill_lanes(scratch.streams.data(), W, len, eps);
          } else {
            std::fill(eps, eps + len * W, 0.0);
          }
          for (std::size_t off = 0; off < len; off += ctx.kChunk)
            ctx.run_updates(cls.data() + start + off, std::min(ctx.kChunk, len - off), eps + off * W);
        }
      };
      const std::size_t t = count >= kMinParallelClass ? std::min<std::size_t>(m_threads, blocks) : 1;
      if (t == 1) {
        run_blocks(0, blocks, m_scratch[0]);
        continue;
      }
      m_team.run(t, [&](std::size_t p) { run_blocks(blocks * p / t, blocks * (p + 1) / t, m_scratch[p]); });
    }
  }

 private:
  struct Scratch {
    std::vector<double> eps;            // kBlock x width deviates
    std::vector<NormalStream> streams;  // one per lane, rebuilt per block
  };
  std::vector<std::vector<Index>> m_classes;
  unsigned m_threads;
  std::vector<Scratch> m_scratch;  // one per thread
  detail::WorkerTeam m_team;       // the threads - 1 helpers
};

// ---- colour-ordered SSOR and Chebyshev-SSOR: the order a split graph sweeps ------------------------------

/// A's rows and columns in colour order, P A P^T: the sites of class 0 in class order, then class 1's, ... The SSOR
/// splitting of this matrix is the one ColoredSsorSweep runs, so its ssor_spectrum() gives the Chebyshev bounds.
/// \param A the n x n matrix
/// \param classes the colour classes, a partition of 0..n-1
/// \return P A P^T
/// \throws std::invalid_argument unless the classes partition 0..n-1.
DUALGIBBS_EXPORT SparseMatrix color_permuted(const SparseMatrix& A, const std::vector<std::vector<Index>>& classes);

namespace detail {
/// The exchanges of ColoredSsorSweep over one part of a graph split over a chain group (partition.hpp): where the
/// parts' values must agree before the next step reads them. One process has none.
class DUALGIBBS_EXPORT ColoredHalo {
 public:
  virtual ~ColoredHalo() = default;
  /// After the part's updates of class k (in either half-sweep).
  /// \param k the class
  /// \param z the state
  /// \param tally the kernel's tally
  /// \param width the lanes W
  virtual void after_class(std::size_t k, double* z, double* tally, int width) = 0;
  /// After the Chebyshev combination, before the tally is rebuilt from the state.
  /// \param z the state
  /// \param width the lanes W
  virtual void before_rebuild(double* z, int width) = 0;
  /// After the tally was rebuilt from the state, and before the first sweep after a state was set.
  /// \param tally the kernel's tally
  /// \param width the lanes W
  virtual void after_rebuild(double* tally, int width) = 0;
};
}  // namespace detail

/// SSOR and Chebyshev-SSOR (ChebyshevSsorSweep's iteration) in colour order: the forward half-sweep runs the colour
/// classes 0, 1, ..., C - 1, the backward one C - 1, ..., 0, every site with relaxation omega. The sites of a class are
/// independent, so this is the SSOR sampler of P A P^T (color_permuted()), whose spectrum the Chebyshev bounds must be.
/// The deviates are keyed like ColoredSweep's, by half-sweep, class and block of ColoredSweep::kBlock places in the
/// class (half_seed()), so a part of a split graph (partition.hpp) draws the deviates of its own sites alone, and the
/// run is bitwise the same for any partition. 2n site updates per sweep; the lanes' own streams are not used.
class DUALGIBBS_EXPORT ColoredSsorSweep {
 public:
  /// The deviates' seed of one block of class `cls` in half-sweep `half` (0 forward, 1 backward) of sweep `sweep`.
  /// \param seed the run's seed
  /// \param sweep the sweep
  /// \param half 0 or 1
  /// \param cls the class
  /// \param block the block in the class
  /// \return the block's seed
  static std::uint64_t half_seed(std::uint64_t seed, std::uint64_t sweep, std::uint64_t half, std::uint64_t cls,
                                 std::uint64_t block) noexcept {
    return ColoredSweep::block_seed(seed ^ 0x73736f722d636f6cULL, 2 * sweep + half, cls, block);
  }

  /// Colour-ordered SSOR at relaxation omega.
  /// \param classes the colour classes (greedy_coloring, greedy_edge_coloring), a partition of the sites
  /// \param omega the relaxation, in (0, 2)
  /// \throws std::invalid_argument for omega outside (0, 2) or no class.
  ColoredSsorSweep(std::vector<std::vector<Index>> classes, double omega);
  /// Colour-ordered Chebyshev-SSOR with the spectrum of the colour-ordered precision (ssor_spectrum(color_permuted())).
  /// \param classes the colour classes, a partition of the sites
  /// \param spectrum omega and the bounds
  /// \throws std::invalid_argument as ChebyshevSsorSweep(spectrum), or for no class.
  ColoredSsorSweep(std::vector<std::vector<Index>> classes, const SsorSpectrum& spectrum);
  /// One part of a split graph: per class its own sites and their places in the whole class, the relaxation, the
  /// spectrum (null: plain SSOR) and the exchanges (which must outlive the scheme and its copies).
  /// \param sites per class, the part's sites (local indices) in class order
  /// \param places per class, each site's place in the whole class
  /// \param omega the relaxation, in (0, 2)
  /// \param spectrum the bounds for Chebyshev-SSOR (at omega), or null for SSOR
  /// \param halo the part's exchanges
  ColoredSsorSweep(std::vector<std::vector<Index>> sites, std::vector<std::vector<std::size_t>> places, double omega,
                   const SsorSpectrum* spectrum, detail::ColoredHalo& halo);

  /// Allocates the deviates and the iterates. \throws std::invalid_argument unless the classes partition 0..n-1 (one
  /// process).
  /// \param n the number of coordinates
  /// \param width the lanes W
  void prepare(Index n, int width);
  /// Restarts the polynomial; a part first exchanges its start tallies.
  void reset() noexcept {
    m_iteration = 0;
    m_fresh = true;
  }
  /// 2 x the sites updated.
  /// \return the site updates per sweep
  std::size_t site_updates(Index) const noexcept { return 2 * m_sites; }
  /// True for Chebyshev-SSOR, false for SSOR.
  /// \return true with Chebyshev acceleration
  bool chebyshev() const noexcept { return m_cheb.has_value(); }

  /// \throws std::invalid_argument for a kernel without set_site.
  template <class Kernel, int W>
  void check_kernel(const Kernel&) const {
    if (!detail::HasSetSite<Kernel, W>::value)
      throw std::invalid_argument(
          "ColoredSsorSweep: the site kernel has no set_site (the commit hook of relaxed "
          "updates)");
  }

  /// One iteration of every lane: the two half-sweeps and, for Chebyshev-SSOR, the combination with the previous
  /// iterate (ChebyshevSsorSweep's arithmetic) and the tally rebuilt.
  /// \param ctx the sweep's view of the sampler
  template <class Kernel, int W>
  void sweep(SweepContext<Kernel, W>& ctx) {
    const std::size_t len = static_cast<std::size_t>(ctx.dimension()) * W;
    if (m_fresh && m_halo) m_halo->after_rebuild(ctx.tally, W);
    m_fresh = false;
    const double base = std::sqrt(m_omega * (2.0 - m_omega));
    double forward = base, backward = base;
    const double a = m_iteration == 0 ? 1.0 : m_alpha;
    if (m_cheb) {
      std::copy(ctx.z, ctx.z + len, m_cur.begin());
      const double factor = std::sqrt((2.0 - a) / a);
      forward = base * factor;
      backward = base * factor * m_cheb->backward_factor();
    }
    const std::size_t classes = m_layout->sites.size();
    for (std::size_t k = 0; k < classes; ++k) relax_class(ctx, k, 0, forward);
    for (std::size_t k = classes; k-- > 0;) relax_class(ctx, k, 1, backward);
    if (!m_cheb) return;
    // z is now x_k + M^-1 (c_k - A x_k): ChebyshevSsorSweep's step tau and combination with x_{k-1}.
    ChebyshevSsorSweep::combine(ctx.z, m_cur.data(), m_prev.data(), len, m_iteration == 0, a, m_cheb->tau());
    std::swap(m_prev, m_cur);
    if (m_halo) m_halo->before_rebuild(ctx.z, W);
    ctx.kernel.template rebuild_tally<W>(ctx.z, ctx.tally);
    if (m_halo) m_halo->after_rebuild(ctx.tally, W);
    m_alpha = m_cheb->next_alpha(m_iteration, m_alpha);
    ++m_iteration;
  }

 private:
  struct Layout {
    std::vector<std::vector<Index>> sites;         // per class, the sites in class order
    std::vector<std::vector<std::size_t>> places;  // per class, each site's place (empty: site t at place t)
  };

  // The relaxed updates of class k's sites in half-sweep `half`, their deviates scaled by `scale`.
  template <class Kernel, int W>
  void relax_class(SweepContext<Kernel, W>& ctx, std::size_t k, std::uint64_t half, double scale) {
    constexpr std::size_t kBlock = ColoredSweep::kBlock;
    const std::vector<Index>& sites = m_layout->sites[k];
    const std::size_t* places = m_layout->places.empty() ? nullptr : m_layout->places[k].data();
    const auto place = [places](std::size_t t) { return places ? places[t] : t; };
    for (std::size_t t = 0; t < sites.size();) {
      // The sites t..end of one deviate block.
      const std::size_t block = place(t) / kBlock;
      std::size_t end = t;
      while (end < sites.size() && place(end) / kBlock == block) ++end;
      const std::size_t first = block * kBlock, drawn = place(end - 1) - first + 1;
      double* eps = places ? m_eps.data() : m_block_eps.data();
      if (ctx.noise) {
        const std::uint64_t key = half_seed(ctx.seed, ctx.sweep, half, k, block);
        m_streams.clear();
        for (int c = 0; c < W; ++c) m_streams.emplace_back(key, ctx.first_chain + static_cast<std::uint64_t>(c));
        NormalStream::fill_lanes(m_streams.data(), W, drawn, m_block_eps.data());
        if (places)
          for (std::size_t s = t; s < end; ++s)
            for (int c = 0; c < W; ++c) eps[(s - t) * W + c] = m_block_eps[(place(s) - first) * W + c];
      } else {
        std::fill(eps, eps + (end - t) * W, 0.0);
      }
      for (std::size_t off = t; off < end; off += ctx.kChunk)
        detail::relaxed_chunk(ctx, sites.data() + off, std::min(ctx.kChunk, end - off), eps + (off - t) * W, m_omega,
                              scale);
      t = end;
    }
    if (m_halo) m_halo->after_class(k, ctx.z, ctx.tally, W);
  }

  std::shared_ptr<const Layout> m_layout;  // shared by the copies (one per lock-step block)
  std::size_t m_sites = 0;                 // sites in the layout
  double m_omega;
  std::optional<ChebyshevSsorSweep> m_cheb;  // the Chebyshev constants (its own iterates unused)
  detail::ColoredHalo* m_halo = nullptr;
  double m_alpha = 1.0;  // alpha of the next iteration
  std::size_t m_iteration = 0;
  bool m_fresh = true;
  std::vector<double> m_prev, m_cur;  // the previous and current iterates (Chebyshev)
  std::vector<double> m_block_eps;    // kBlock x W deviates of one block
  std::vector<double> m_eps;          // a part's sites' deviates of one block
  std::vector<NormalStream> m_streams;
};

}  // namespace dualgibbs
