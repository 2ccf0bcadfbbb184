#pragma once
/// \file ensemble.hpp
/// Many Gibbs chains in one call, over threads, with observers at checkpoints.
///
/// `run_ensemble` runs L chains of the primal (x, precision Q, `CsrKernel`) or dual (y~, precision R,
/// `DualIncidenceKernel`) sampler for a number of sweeps and hands the states of all chains to an observer every
/// `checkpoint_every` sweeps, so estimators can accumulate moments without storing trajectories. Memory is
/// O(L (|V| + |E|)) for the chains, plus one |obs| x L matrix for the observer.
///
/// **Reproducibility.** Chain c draws its deviates from `make_stream(seed, c, Noise)`, its random initial state
/// from `make_stream(seed, c, Initial)`, and the schedule of the block starting at chain c from
/// `make_stream(seed, c, Schedule)`. A block's evolution depends on nothing else, and the states are gathered in
/// chain order, so the same seed gives bitwise-identical checkpoints for any number of threads.
///
/// **Lock-step blocks** (`EnsembleOptions::lockstep` = B > 1). The chains of one block share their scan schedule
/// (the sequence of sites visited) and differ only in their deviates, so one site update runs as a vector operation
/// over B chains (see sampler.hpp). Each chain on its own still follows the exact random-sweep law, so any average
/// over chains of a function of *one* chain (means, marginal variances, E[x x^T]) is estimated without bias; but the
/// chains of one block are *not* independent, and the mean-subtracted sample covariance over L chains has a bias of
/// relative order (B - 1) / L until the chains have converged. The default is lockstep = 1 (every chain its own
/// schedule: exactly unbiased, the setting of the experiments). Blocks never straddle chain L/2, so the two halves of
/// a split-half estimator [eq:unbiased_error] stay independent of each other whatever B is.
/// Why (the bias formula): docs/sampler.md, section 5.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::EnsembleOptions opt;
/// opt.chains = 1000; opt.sweeps = 50; opt.checkpoint_every = 10;
/// dualgibbs::run_ensemble(model, dualgibbs::Domain::Dual, opt, [](const dualgibbs::Checkpoint& cp) {
///   // cp.states is |V| x 1000: column c is x~ = B y~ of chain c after cp.sweep sweeps
/// });
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/sampling/scheme.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

class ChainGroup;

/// How every chain starts.
enum class InitialState {
  Constant,  ///< every coordinate = EnsembleOptions::init_value (the paper's constant initial vector)
  Random,    ///< N(0, s^2 diag(M)^-1): z_i = s M_ii^{-1/2} eps_i, s = EnsembleOptions::init_scale, per chain
  Given      ///< EnsembleOptions::given_state, copied to every chain
};

/// "constant", "random" or "given". \throws std::invalid_argument otherwise.
/// \param name the start's name
/// \return the start
DUALGIBBS_EXPORT InitialState parse_initial_state(const std::string& name);
/// The name parse_initial_state() accepts.
/// \param init the start
/// \return its name
DUALGIBBS_EXPORT const char* to_string(InitialState init) noexcept;

/// Options of run_ensemble().
struct EnsembleOptions {
  std::size_t chains = 1000;                   ///< L >= 1
  std::size_t sweeps = 100;                    ///< sweeps per chain (a sweep = n coordinate updates)
  ScanOrder scan = ScanOrder::Random;          ///< order of the coordinate updates within a sweep
  std::uint64_t seed = 1;                      ///< with the chain index, determines every random number
  unsigned threads = 0;                        ///< 0 = available_threads() (core/machine.hpp)
  std::size_t checkpoint_every = 1;            ///< observer at sweep 0, k, 2k, ... and always at the last sweep; k >= 1
  InitialState init = InitialState::Constant;  ///< how every chain starts
  double init_value = 1.0;                     ///< the constant of InitialState::Constant (paper: constant vector)
  double init_scale = 1.0;      ///< InitialState::Random: N(0, init_scale^2 diag(M)^-1) (the authors' files
                                ///< use 1 and 2); finite and > 0
  Eigen::VectorXd given_state;  ///< InitialState::Given: one state of the domain's dimension, copied to all chains
  /// InitialState::Random on a part of a split graph (partition.hpp): the place in the whole state of each of the
  /// kernel's coordinates (increasing), whose deviates they take (GibbsSampler::set_random_state). Empty: 0..n-1.
  std::vector<Index> random_places;
  bool noise = true;           ///< false = plain Gauss–Seidel (deterministic)
  bool observe_edges = false;  ///< dual only: observer sees y~ (|E|) instead of x~ = B y~ (|V|)
  std::size_t lockstep = 1;    ///< chains per shared-schedule block: 1, 2, 4, 8 or 16 (1 = independent)
  /// The processes sharing the chains (chain_group.hpp; e.g. MPI ranks, dualgibbs::mpi::Group), or null (the
  /// default) for this process alone. With a group of two or more members run_ensemble() is collective: every member
  /// calls it with the same options, runs a contiguous share of the lock-step blocks and (without local_cuts) sees
  /// every chain's states at every checkpoint, bitwise those of one process. The observer's own library calls are
  /// shared only if it passes them the group too (an Execution, core/execution.hpp). Must outlive the call.
  ChainGroup* group = nullptr;
  /// Local observation in a chain group (`group`). Empty (the default): every member's observer sees the
  /// states of all chains, gathered in chain order. Otherwise chain offsets 0 = c_0 < c_1 < ... < c_m = chains that
  /// cut the chains into m reduction blocks (e.g. CovarianceErrorTracker::group_offsets(chains)), each a whole number
  /// of lock-step blocks: member r runs the blocks member_share(m, r, K) and its observer sees only those chains
  /// (Checkpoint::first_chain, the columns of its share; no states are gathered), which it reduces to per-block sums
  /// and exchanges itself (CovarianceErrorTracker::observe with a first chain, GroupedMoments over a share). Without
  /// a group the cuts are only checked and the observer sees all chains.
  std::vector<std::size_t> local_cuts;
  /// Where a checkpoint's states are gathered (optional): called with the checkpoint's sweep just before its states
  /// are gathered; a matrix returned is resized to the states' shape and gathered into, and Checkpoint::states then
  /// refers to it, so an observer that keeps the states (e.g. for deferred scoring) needs no copy of its own. The
  /// matrix must stay valid and untouched until the observer returns. Empty, or returning nullptr: a matrix of the
  /// run's own (reused from checkpoint to checkpoint). The states are the same either way.
  std::function<Eigen::MatrixXd*(std::size_t sweep)> states_buffer;
};

/// What the observer is shown.
struct Checkpoint {
  std::size_t sweep;                         ///< number of completed sweeps
  double seconds;                            ///< wall-clock sampling time since the start (observers excluded)
  Eigen::Ref<const Eigen::MatrixXd> states;  ///< dim x chains, column c = chain first_chain + c (chain-index order);
                                             ///< primal: x (|V|); dual: x~ = B y~ (|V|), or y~ (|E|) with observe_edges
  std::size_t first_chain = 0;               ///< the chain of column 0: 0, except for a member's share under local_cuts
};

/// Called from the calling thread at every checkpoint. The matrix is valid only during the call.
using Observer = std::function<void(const Checkpoint&)>;

/// Totals of a run.
struct EnsembleStats {
  double seconds;         ///< wall-clock sampling time (observers and gathering excluded)
  std::uint64_t updates;  ///< chains x sweeps x n coordinate updates
  double ns_per_update;   ///< 1e9 seconds / updates (0 if there were no updates)
  double cpu_seconds;     ///< CPU time the sampling threads spent sweeping, summed over threads: on a machine
                          ///< shared with other work this is the cost of the updates, wall time its latency
};

/// Runs options.chains chains of `domain`'s sampler (primal: CsrKernel on Q; dual: DualIncidenceKernel) with the
/// sweep scheme `scheme` (default: the Gibbs scan options.scan, the paper's samplers) and calls `observe` (may be
/// empty) at the checkpoints: the one entry point for a model (run_ensemble(kernel, ...) below runs a kernel of one's
/// own).
///
/// A model with a mean (Model::has_mean()): the primal chains sample N(mu, Q^-1) (CsrKernel with the right-hand
/// side h); the dual chains sample the zero-mean fluctuation exactly as without a mean (the dual has no data term),
/// and the posterior's moments are mu = posterior_mean(model) (truth/posterior_mean.hpp) and
/// Cov(X) = D_s - D_s Cov(x~) D_s [eq:cov_woodbury3] from the observed x~: the paper's suggestion, sample the
/// fluctuation in the dual and add mu.
///
/// Schemes other than Gibbs (scheme.hpp, accelerated.hpp): colored ignores EnsembleOptions::threads (the chains run
/// one after another, each on scheme.threads threads); EnsembleStats::updates and ns_per_update count site updates
/// (2n per sweep for ssor and cheby-ssor).
/// \param model the model
/// \param domain the domain to sample
/// \param options chains, sweeps, seed, threads, checkpoints, start
/// \param observe called at every checkpoint (may be empty)
/// \param scheme the sweep scheme and its parameters
/// \return the run's totals
/// \throws std::invalid_argument for zero chains, checkpoint_every = 0, a lockstep other than 1/2/4/8/16, local_cuts
///         that do not start at 0, end at the number of chains and increase strictly on lock-step block starts, a
///         given state of the wrong length or with non-finite values, a non-finite init_value, an init_scale that
///         is not finite and positive, observe_edges in the primal domain, the dual domain of a graph without edges
///         or of a model without a dual, omega outside (0, 2), and cheby-ssor without spectrum bounds or with bounds
///         computed at another omega. Exceptions thrown by the observer propagate.
DUALGIBBS_EXPORT EnsembleStats run_ensemble(const Model& model, Domain domain, const EnsembleOptions& options,
                                            const Observer& observe, const SchemeOptions& scheme = SchemeOptions());

namespace detail {

/// One lock-step block of chains behind a virtual interface: the ensemble core calls it once per block and
/// segment of sweeps, never per update.
class EnsembleBlock {
 public:
  virtual ~EnsembleBlock() = default;
  /// Runs `count` sweeps of every lane.
  virtual void sweep(std::size_t count, SweepWorkspace& ws) = 0;
  /// Writes lane c's state (or its tally) into column first + c - offset of `out` (`out` holds chains from
  /// `offset` on).
  virtual void gather(Eigen::MatrixXd& out, std::size_t offset, bool tally) const = 0;
};

/// The block of `W` chains starting at chain `first`: a GibbsSampler<Kernel, W, Scheme> set to the options' start.
template <class Kernel, int W, class Scheme>
class KernelBlock final : public EnsembleBlock {
 public:
  /// Builds the sampler and sets its initial state (EnsembleOptions::init).
  KernelBlock(const Kernel& kernel, const EnsembleOptions& o, const Scheme& scheme, std::size_t first)
      : m_first(first), m_sampler(kernel, scheme, o.seed, first, o.noise) {
    switch (o.init) {
      case InitialState::Constant:
        m_sampler.set_constant_state(o.init_value);
        break;
      case InitialState::Random:
        m_sampler.set_random_state(o.init_scale, o.random_places.empty() ? nullptr : &o.random_places);
        break;
      case InitialState::Given:
        for (int c = 0; c < W; ++c) m_sampler.set_state(c, o.given_state);
        break;
    }
  }
  void sweep(std::size_t count, SweepWorkspace& ws) override { m_sampler.sweep(count, ws); }
  void gather(Eigen::MatrixXd& out, std::size_t offset, bool tally) const override {
    const double* src = tally ? m_sampler.tally_data() : m_sampler.state_data();
    for (int c = 0; c < W; ++c) {
      double* col = out.col(static_cast<Eigen::Index>(m_first - offset) + c).data();
      for (Eigen::Index i = 0; i < out.rows(); ++i) col[i] = src[static_cast<std::size_t>(i) * W + c];
    }
  }

 private:
  std::size_t m_first;
  GibbsSampler<Kernel, W, Scheme> m_sampler;
};

/// What the ensemble core needs to know of a kernel: its dimensions and what the observer is shown.
struct EnsembleShape {
  Index dimension;        ///< coordinates per chain
  Index tally_dimension;  ///< tally entries per chain
  bool show_tally;        ///< the observer sees the tally (else the state)
};

/// Builds the block of `width` chains starting at chain `first`.
using BlockFactory = std::function<std::unique_ptr<EnsembleBlock>(std::size_t first, int width)>;

/// The non-template core of run_ensemble: checks the options, forms the lock-step blocks (lockstep_blocks), builds
/// them in parallel, runs them over the thread pool and calls the observer at the checkpoints. Compiled once in
/// libdualgibbs for every kernel and scheme.
DUALGIBBS_EXPORT EnsembleStats run_ensemble_core(const EnsembleShape& shape, const EnsembleOptions& options,
                                                 const BlockFactory& make_block, const Observer& observe);

}  // namespace detail

/// run_ensemble over any site kernel (kernels.hpp) and sweep scheme (sampler.hpp): the same threads, blocks,
/// streams, checkpoints and guarantees as for the shipped kernels, so a user's kernel runs ensembles too. The
/// observer sees the tally when the kernel has one (tally_dimension() > 0) and observe_edges is false, else the
/// state. options.scan is ignored here: the scheme says how a sweep runs.
/// \param kernel the site kernel
/// \param options chains, sweeps, seed, threads, checkpoints, start (scan ignored)
/// \param observe called at every checkpoint (may be empty)
/// \param scheme the sweep scheme of every chain
/// \return the run's totals
/// \throws std::invalid_argument as run_ensemble(model, ...), and for observe_edges with a kernel without tally.
template <class Kernel, class Scheme>
EnsembleStats run_ensemble(const Kernel& kernel, const EnsembleOptions& options, const Observer& observe,
                           const Scheme& scheme) {
  if (options.observe_edges && kernel.tally_dimension() == 0)
    throw std::invalid_argument("run_ensemble: observe_edges applies only to the dual domain (a kernel with a tally)");
  const detail::EnsembleShape shape{kernel.dimension(), kernel.tally_dimension(),
                                    kernel.tally_dimension() > 0 && !options.observe_edges};
  return detail::run_ensemble_core(
      shape, options,
      [&](std::size_t first, int width) -> std::unique_ptr<detail::EnsembleBlock> {
#define DUALGIBBS_BLOCK_CASE(K, W) \
  case W:                          \
    return std::make_unique<detail::KernelBlock<K, W, Scheme>>(kernel, options, scheme, first);
        switch (width) {
          DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_BLOCK_CASE, Kernel)
          default:
            throw std::logic_error("run_ensemble: unsupported block width " + std::to_string(width));
        }
#undef DUALGIBBS_BLOCK_CASE
      },
      observe);
}

/// run_ensemble over any site kernel with the scan sweep of options.scan.
/// \param kernel the site kernel
/// \param options chains, sweeps, seed, threads, checkpoints, start, scan
/// \param observe called at every checkpoint (may be empty)
/// \return the run's totals
template <class Kernel>
EnsembleStats run_ensemble(const Kernel& kernel, const EnsembleOptions& options, const Observer& observe) {
  return run_ensemble(kernel, options, observe, ScanSweep(options.scan));
}

// The shipped kernels' scans are compiled into the library: a caller's run_ensemble(kernel, options, observe) over
// them instantiates nothing.
/// \cond
extern template DUALGIBBS_EXPORT EnsembleStats run_ensemble<CsrKernel, ScanSweep>(const CsrKernel&,
                                                                                  const EnsembleOptions&,
                                                                                  const Observer&, const ScanSweep&);
extern template DUALGIBBS_EXPORT EnsembleStats run_ensemble<DualIncidenceKernel, ScanSweep>(const DualIncidenceKernel&,
                                                                                            const EnsembleOptions&,
                                                                                            const Observer&,
                                                                                            const ScanSweep&);
/// \endcond

/// The lock-step blocks run_ensemble forms, as (first chain, width) in chain order: each half [0, L/2) and
/// [L/2, L) is cut into blocks of `lockstep` chains, and the remainder of a half into blocks of decreasing powers
/// of two, so no block straddles L/2. \throws std::invalid_argument for chains = 0 or a bad lockstep.
/// \param chains the number of chains L
/// \param lockstep the block width B: 1, 2, 4, 8 or 16
/// \return the blocks as (first chain, width)
DUALGIBBS_EXPORT std::vector<std::pair<std::size_t, int>> lockstep_blocks(std::size_t chains, std::size_t lockstep);

}  // namespace dualgibbs
