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

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
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
    const double* cur = m_cur.data();
    const double* prev = m_prev.data();
    if (m_iteration == 0) {
      for (std::size_t i = 0; i < len; ++i) z[i] = cur[i] + m_tau * (z[i] - cur[i]);
    } else {
      for (std::size_t i = 0; i < len; ++i) z[i] = prev[i] + a * (cur[i] + m_tau * (z[i] - cur[i]) - prev[i]);
    }
    std::swap(m_prev, m_cur);
    ctx.kernel.template rebuild_tally<W>(ctx.z, ctx.tally);
    m_alpha = next_alpha(m_iteration, m_alpha);
    ++m_iteration;
  }

 private:
  double next_alpha(std::size_t k, double alpha_k) const noexcept;

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

}  // namespace dualgibbs
