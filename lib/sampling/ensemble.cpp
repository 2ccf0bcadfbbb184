// run_ensemble: lock-step blocks of chains over a fork-join pool, observers at checkpoints.
#include <dualgibbs/sampling/ensemble.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/machine.hpp>

#include "core/enum_names.hpp"
#include "core/group_totals.hpp"
#include "sampling/ensemble_pool.hpp"
#include "sampling/scheme_ensemble.hpp"

#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs {

namespace {
constexpr detail::EnumName<InitialState> kInitialStates[] = {
    {InitialState::Constant, "constant"}, {InitialState::Random, "random"}, {InitialState::Given, "given"}};
}  // namespace

InitialState parse_initial_state(const std::string& name) {
  return detail::parse_enum(kInitialStates, name, "initial state");
}

const char* to_string(InitialState init) noexcept { return detail::enum_name(kInitialStates, init); }

namespace {

// CPU time of the calling thread (POSIX); 0 where unavailable.
double thread_cpu_seconds() noexcept {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0)
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
#endif
  return 0.0;
}

void check_lockstep(std::size_t lockstep) {
  if (lockstep != 1 && lockstep != 2 && lockstep != 4 && lockstep != 8 && lockstep != 16)
    throw std::invalid_argument("run_ensemble: lockstep = " + std::to_string(lockstep) +
                                " (expected 1, 2, 4, 8 or 16 chains per block)");
}

}  // namespace

std::vector<std::pair<std::size_t, int>> lockstep_blocks(std::size_t chains, std::size_t lockstep) {
  if (chains == 0) throw std::invalid_argument("run_ensemble: chains = 0; at least one chain is needed");
  check_lockstep(lockstep);
  std::vector<std::pair<std::size_t, int>> blocks;
  const std::size_t half = chains / 2;
  for (const auto& [begin, end] : {std::pair<std::size_t, std::size_t>{0, half}, {half, chains}}) {
    std::size_t c = begin;
    while (c < end) {
      std::size_t w = lockstep;
      while (w > end - c) w /= 2;  // the remainder of a half: decreasing powers of two
      blocks.emplace_back(c, static_cast<int>(w));
      c += w;
    }
  }
  return blocks;
}

namespace {

void check_options(const EnsembleOptions& o, Index dimension, const char* domain_name) {
  if (o.chains == 0) throw std::invalid_argument("run_ensemble: chains = 0; at least one chain is needed");
  if (o.checkpoint_every == 0)
    throw std::invalid_argument("run_ensemble: checkpoint_every = 0; it must be at least 1 sweep");
  check_lockstep(o.lockstep);
  if (o.init == InitialState::Constant && !std::isfinite(o.init_value))
    throw std::invalid_argument("run_ensemble: init_value = " + std::to_string(o.init_value) + " is not finite");
  if (!(std::isfinite(o.init_scale) && o.init_scale > 0))
    throw std::invalid_argument("run_ensemble: init_scale = " + std::to_string(o.init_scale) +
                                " must be finite and positive");
  if (o.init == InitialState::Given) {
    if (o.given_state.size() != dimension)
      throw std::invalid_argument("run_ensemble: given_state has length " + std::to_string(o.given_state.size()) +
                                  " but the " + domain_name + " domain has " + std::to_string(dimension) +
                                  " coordinates");
    if (!o.given_state.allFinite()) throw std::invalid_argument("run_ensemble: given_state has a non-finite value");
  }
}

// Physical memory of the machine in bytes (POSIX), or 0 if unknown.
double physical_memory_bytes() noexcept {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
#endif
  return 0.0;
}

// Refuses a run whose chain states alone exceed the machine's memory (a mistyped --chains 1e12 would otherwise
// end in std::bad_alloc, or under AddressSanitizer in an abort), before anything is allocated.
void check_memory(std::size_t chains, Index dimension, Index tally_dimension, Index observed_dimension) {
  const double per_chain = 8.0 * (static_cast<double>(dimension) + tally_dimension + observed_dimension) + 64.0;
  const double bytes = per_chain * static_cast<double>(chains);
  const double available = physical_memory_bytes();
  if (available > 0 && bytes > available)
    throw std::invalid_argument("run_ensemble: " + std::to_string(chains) + " chains of " + std::to_string(dimension) +
                                " coordinates need about " + std::to_string(static_cast<long long>(bytes / 1e9)) +
                                " GB of memory for their states, more than this machine's " +
                                std::to_string(static_cast<long long>(available / 1e9)) + " GB");
}

// EnsembleOptions::local_cuts: empty, or 0 = c_0 < ... < c_m = chains, each cut the first chain of a lock-step block.
void check_local_cuts(const std::vector<std::size_t>& cuts, const std::vector<std::pair<std::size_t, int>>& spec,
                      std::size_t chains) {
  if (cuts.empty()) return;
  const std::string where = "run_ensemble: local_cuts ";
  if (cuts.size() < 2 || cuts.front() != 0 || cuts.back() != chains)
    throw std::invalid_argument(where + "must start at 0 and end at the number of chains " + std::to_string(chains));
  for (std::size_t k = 1; k < cuts.size(); ++k) {
    if (cuts[k] <= cuts[k - 1])
      throw std::invalid_argument(where + "must increase strictly (cut " + std::to_string(k) + " is " +
                                  std::to_string(cuts[k]) + ")");
    const bool on_block =
        cuts[k] == chains || std::binary_search(spec.begin(), spec.end(), std::pair{cuts[k], 0},
                                                [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!on_block)
      throw std::invalid_argument(where + "cut " + std::to_string(cuts[k]) +
                                  " falls inside a lock-step block (cuts must be block starts)");
  }
}

// The chains member r of k runs: [first, last). With local cuts, its share of the reduction blocks; else its share of
// the chain ids (member_blocks then takes the blocks starting in it).
std::pair<std::size_t, std::size_t> member_chains(const std::vector<std::size_t>& cuts, std::size_t chains, int r,
                                                  int k) {
  if (cuts.empty()) return member_share(chains, r, k);
  const auto [lo, hi] = member_share(cuts.size() - 1, r, k);
  return {cuts[lo], cuts[hi]};
}

// Over a chain group (EnsembleOptions::group, chain_group.hpp), member r runs a contiguous share of the blocks of one
// process: those whose first chain lies in member_share(chains, r, k), so no block crosses two members. Returns the
// range [first block, last block).
std::pair<std::size_t, std::size_t> member_blocks(const std::vector<std::pair<std::size_t, int>>& spec,
                                                  const std::vector<std::size_t>& cuts, std::size_t chains, int r,
                                                  int k) {
  const auto [lo, hi] = member_chains(cuts, chains, r, k);
  auto first_from = [&](std::size_t chain) {
    return static_cast<std::size_t>(
        std::partition_point(spec.begin(), spec.end(), [chain](const auto& b) { return b.first < chain; }) -
        spec.begin());
  };
  return {first_from(lo), first_from(hi)};
}

// The first chain of block b (the number of chains for b = spec.size()).
std::size_t block_start(const std::vector<std::pair<std::size_t, int>>& spec, std::size_t b, std::size_t chains) {
  return b < spec.size() ? spec[b].first : chains;
}

EnsembleStats run_blocks(const detail::EnsembleShape& shape, const EnsembleOptions& o,
                         const detail::BlockFactory& make_block, const Observer& observe) {
  using Clock = std::chrono::steady_clock;
  const bool show_tally = shape.show_tally;
  const Index obs_dim = show_tally ? shape.tally_dimension : shape.dimension;
  check_memory(o.chains, shape.dimension, shape.tally_dimension, observe ? obs_dim : 0);
  const auto spec = lockstep_blocks(o.chains, o.lockstep);
  check_local_cuts(o.local_cuts, spec, o.chains);
  ChainGroup* const group = o.group && o.group->size() > 1 ? o.group : nullptr;
  const auto [b_lo, b_hi] = group ? member_blocks(spec, o.local_cuts, o.chains, group->rank(), group->size())
                                  : std::pair<std::size_t, std::size_t>{0, spec.size()};
  // Local observation (EnsembleOptions::local_cuts): the observer sees this member's chains only, never gathered.
  const bool local = group && !o.local_cuts.empty();
  const std::size_t first_chain = local ? block_start(spec, b_lo, o.chains) : 0;
  const std::size_t shown = local ? block_start(spec, b_hi, o.chains) - first_chain : o.chains;
  // Alone, `work` just runs. In a group, a member's own failure is kept and settled at the next collective (the
  // checkpoint's gather or the final statistics), where every member learns of it (ChainGroup::settle); until then
  // the failed member skips its work. One settlement per checkpoint keeps the members' waits few.
  std::exception_ptr pending;
  if (group) group->clear_settled();
  auto attempt = [&](const std::function<void()>& work) {
    if (!group) return work();
    if (pending) return;
    try {
      work();
    } catch (...) {
      if (group->failure_settled()) throw;  // every member already knows
      pending = std::current_exception();
    }
  };
  std::vector<std::unique_ptr<detail::EnsembleBlock>> blocks(spec.size());

  unsigned threads = o.threads ? o.threads : available_threads(group);
  threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, b_hi - b_lo)));
  detail::WorkerPool pool(threads);
  std::vector<SweepWorkspace> workspaces(pool.participants());

  // Build (and initialize) the blocks in parallel: each block's construction depends only on its own streams.
  std::atomic<std::size_t> next{0};
  attempt([&] {
    next = b_lo;
    pool.run([&](unsigned) {
      for (std::size_t b; (b = next.fetch_add(1)) < b_hi;) blocks[b] = make_block(spec[b].first, spec[b].second);
    });
  });

  Eigen::MatrixXd states;
  if (observe) states.resize(obs_dim, static_cast<Eigen::Index>(shown));
  double seconds = 0.0;
  std::vector<double> cpu(pool.participants(), 0.0);
  // The members' chain counts, for gathering their columns in chain order.
  std::vector<std::size_t> columns;
  for (int r = 0; group && !local && r < group->size(); ++r) {
    const auto [first, last] = member_blocks(spec, o.local_cuts, o.chains, r, group->size());
    columns.push_back(block_start(spec, last, o.chains) - block_start(spec, first, o.chains));
  }
  auto checkpoint = [&](std::size_t sweep) {
    if (!observe) return;
    Eigen::MatrixXd* target = &states;  // or the caller's matrix (EnsembleOptions::states_buffer)
    attempt([&] {
      if (o.states_buffer) {
        if (Eigen::MatrixXd* given = o.states_buffer(sweep)) {
          given->resize(obs_dim, static_cast<Eigen::Index>(shown));
          target = given;
        }
      }
      next = b_lo;
      pool.run([&](unsigned) {
        for (std::size_t b; (b = next.fetch_add(1)) < b_hi;) blocks[b]->gather(*target, first_chain, show_tally);
      });
    });
    if (group && !local) {
      const std::size_t first = block_start(spec, b_lo, o.chains);
      group->all_gather(pending, target->data() + first * static_cast<std::size_t>(obs_dim), target->data(), columns,
                        static_cast<std::size_t>(obs_dim));
    }
    // The time is this member's (rank 0's is the one written): a timing, never a decision.
    attempt([&] { observe(Checkpoint{sweep, seconds, Eigen::Ref<const Eigen::MatrixXd>(*target), first_chain}); });
  };

  checkpoint(0);
  for (std::size_t done = 0; done < o.sweeps;) {
    const std::size_t count = std::min(o.checkpoint_every, o.sweeps - done);
    next = b_lo;
    const auto t0 = Clock::now();
    attempt([&] {
      pool.run([&](unsigned p) {
        const double c0 = thread_cpu_seconds();
        for (std::size_t b; (b = next.fetch_add(1)) < b_hi;) blocks[b]->sweep(count, workspaces[p]);
        cpu[p] += thread_cpu_seconds() - c0;
      });
    });
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    done += count;
    checkpoint(done);
  }
  EnsembleStats stats{};
  stats.seconds = seconds;
  stats.updates = static_cast<std::uint64_t>(o.chains) * o.sweeps * static_cast<std::uint64_t>(shape.dimension);
  stats.cpu_seconds = 0.0;
  for (double c : cpu) stats.cpu_seconds += c;
  if (group) {
    group->settle(pending);
    stats.seconds = detail::agreed_max(*group, seconds);
    stats.cpu_seconds = detail::agreed_sum(*group, stats.cpu_seconds);
  }
  stats.ns_per_update = stats.updates ? stats.seconds * 1e9 / static_cast<double>(stats.updates) : 0.0;
  return stats;
}

}  // namespace

namespace detail {

EnsembleStats run_ensemble_core(const EnsembleShape& shape, const EnsembleOptions& options,
                                const BlockFactory& make_block, const Observer& observe) {
  check_options(options, shape.dimension, shape.tally_dimension > 0 ? "dual" : "kernel's");
  return run_blocks(shape, options, make_block, observe);
}

}  // namespace detail

template EnsembleStats run_ensemble<CsrKernel, ScanSweep>(const CsrKernel&, const EnsembleOptions&, const Observer&,
                                                          const ScanSweep&);
template EnsembleStats run_ensemble<DualIncidenceKernel, ScanSweep>(const DualIncidenceKernel&, const EnsembleOptions&,
                                                                    const Observer&, const ScanSweep&);

namespace {

// The Gibbs scan of a model's domain (SchemeKind::Gibbs).
EnsembleStats run_gibbs(const Model& model, Domain domain, const EnsembleOptions& options, const Observer& observe) {
  if (domain == Domain::Primal) {
    check_options(options, model.num_nodes(), "primal");
    if (options.observe_edges)
      throw std::invalid_argument("run_ensemble: observe_edges applies only to the dual domain");
    // Q is positive definite by construction (validated model), so only the cheap structural checks run. A model
    // with a mean samples N(mu, Q^-1): the kernel gets the canonical vector h (Q mu = h).
    if (model.has_mean()) {
      const CsrKernel kernel(model.primal_precision(), model.canonical_vector(), SpdCheck::Cheap);
      return run_ensemble(kernel, options, observe);
    }
    const CsrKernel kernel(model.primal_precision(), SpdCheck::Cheap);
    return run_ensemble(kernel, options, observe);
  }
  // The dual chain is the zero-mean fluctuation whatever the model's mean (the mean is added in the primal
  // statistics: mu = posterior_mean(model), Cov(X) by Woodbury [eq:cov_woodbury3]).
  check_options(options, model.num_edges(), "dual");
  const DualIncidenceKernel kernel(model);
  return run_ensemble(kernel, options, observe);
}

}  // namespace

EnsembleStats run_ensemble(const Model& model, Domain domain, const EnsembleOptions& options, const Observer& observe,
                           const SchemeOptions& scheme) {
  if (scheme.kind == SchemeKind::Gibbs) return run_gibbs(model, domain, options, observe);
  return detail::run_scheme_ensemble(model, domain, options, observe, scheme);
}

}  // namespace dualgibbs
