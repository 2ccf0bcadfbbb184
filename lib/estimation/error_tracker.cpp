// The error tracker: split-half errors of checkpoints with jackknife standard errors. See error_tracker.hpp.

#include <dualgibbs/estimation/error_tracker.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/number_text.hpp>
#include "estimation/estimator_checks.hpp"
#include "estimation/run_tasks.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dualgibbs {

using detail::fail;

CovarianceErrorTracker::CovarianceErrorTracker(Domain observed, Eigen::VectorXd node_variances, Eigen::MatrixXd target,
                                               ErrorTrackerOptions options)
    : m_domain(observed), m_node_variances(std::move(node_variances)), m_target(std::move(target)), m_options(options) {
  const Eigen::Index n = m_node_variances.size();
  if (n == 0) fail("CovarianceErrorTracker", "no node variances given");
  if (m_target.rows() == n && m_target.cols() == n && n > 1) {
    m_kind = MomentKind::Full;
  } else if (m_target.rows() == n && m_target.cols() == 1) {
    m_kind = n == 1 ? MomentKind::Full : MomentKind::Diagonal;
  } else {
    fail("CovarianceErrorTracker", "target is " + std::to_string(m_target.rows()) + " x " +
                                       std::to_string(m_target.cols()) + ", expected " + std::to_string(n) + " x " +
                                       std::to_string(n) + " (covariance) or " + std::to_string(n) +
                                       " x 1 (marginal variances)");
  }
  if (!m_target.allFinite()) fail("CovarianceErrorTracker", "target contains NaN or infinite values");
  if (!m_node_variances.allFinite() || (m_node_variances.array() <= 0).any())
    fail("CovarianceErrorTracker", "node variances must be finite and positive");
  if (m_options.jackknife_groups < 2)
    fail("CovarianceErrorTracker",
         "jackknife_groups must be at least 2, got " + std::to_string(m_options.jackknife_groups));
}

namespace {

/// The deviation S^ - S of the Cov(X) estimate from sums `a` (minus the sums `minus`, if given), written
/// to out[0 .. D): primal S^ = (P - s s^T / n) / (n - 1); dual S^ = D_s - D_s C^ D_s with C^ the same
/// expression on x~ [eq:cov_woodbury3]. One pass over the scatter, no allocation but a dim-vector.
void deviation_into(MomentKind kind, Domain domain, const MomentSums& a, const MomentSums* minus,
                    const Eigen::VectorXd& ds, const Eigen::MatrixXd& target, Eigen::VectorXd& s, double* out) {
  const Eigen::Index dim = ds.size();
  const double n = a.count - (minus ? minus->count : 0.0);
  s = a.sum;
  if (minus) s -= minus->sum;
  const double inv = 1.0 / (n - 1.0), invn = 1.0 / n;
  const double* pa = a.scatter.data();
  const double* pm = minus ? minus->scatter.data() : nullptr;
  const double* t = target.data();
  const bool dual = domain == Domain::Dual;
  if (kind == MomentKind::Full) {
    for (Eigen::Index j = 0; j < dim; ++j) {
      const double sj = s(j) * invn, dsj = ds(j);
      const Eigen::Index col = j * dim;
      for (Eigen::Index i = 0; i < dim; ++i) {
        const Eigen::Index k = col + i;
        const double c = ((pm ? pa[k] - pm[k] : pa[k]) - s(i) * sj) * inv;
        const double v = dual ? (i == j ? dsj : 0.0) - ds(i) * dsj * c : c;
        out[k] = v - t[k];
      }
    }
  } else {
    for (Eigen::Index i = 0; i < dim; ++i) {
      const double c = ((pm ? pa[i] - pm[i] : pa[i]) - s(i) * s(i) * invn) * inv;
      const double v = dual ? ds(i) - ds(i) * ds(i) * c : c;
      out[i] = v - t[i];
    }
  }
}

// How many of `total_sets` checkpoints observe_batch() exchanges at once. The checkpoints go in chunks whose exchanged
// sums stay below glibc's largest mmap threshold (32 MiB): a larger buffer is a fresh mapping, page-faulted anew at
// every call (fig6 over 2 ranks in batches of 27 checkpoints: 360000 page faults and 1.2 s of system time per rank,
// against 0.3 s with per-checkpoint exchange).
std::size_t checkpoint_chunk(std::size_t total_sets, std::size_t groups, Eigen::Index dim, MomentKind kind,
                             const ChainGroup* group) {
  // A set's exchanged sums: a full scatter travels as its lower triangle (build_all). The chunks are of near-equal
  // size: every chunk is a few collectives, where the members wait for each other.
  const double d = static_cast<double>(dim);
  const double scatter = kind == MomentKind::Full ? d * (d + 1.0) / 2.0 : d;
  const double per_set = 8.0 * static_cast<double>(groups) * (1.0 + d + scatter);
  const auto most = static_cast<std::size_t>(std::max(1.0, std::floor(static_cast<double>(24 << 20) / per_set)));
  const std::size_t chunks = (total_sets + most - 1) / most;
  std::size_t chunk = (total_sets + chunks - 1) / chunks;
  // Over a chain group, a multiple of the members where it can be: member_share() gives a chunk's remainder to the
  // first members, who would score one checkpoint more than the others in every chunk while the others wait.
  if (const std::size_t k = group ? static_cast<std::size_t>(group->size()) : 1; k > 1 && chunk % k != 0) {
    const std::size_t up = (chunk / k + 1) * k, down = chunk / k * k;
    chunk = up <= most ? up : down >= k ? down : chunk;
  }
  return chunk;
}

// An estimate as the row of doubles in which a member's scores travel (observe_batch()), and back.
static_assert(sizeof(ErrorEstimate) == sizeof(std::size_t) + 9 * sizeof(double),
              "a new ErrorEstimate field must travel in the rows of pack_estimate()");
constexpr std::size_t kEstimateFields = 10;
void pack_estimate(const ErrorEstimate& e, double* row) {
  const double values[kEstimateFields] = {static_cast<double>(e.sweep),
                                          e.seconds,
                                          e.Eb,
                                          e.Eb_floor,
                                          e.Eb_se,
                                          e.Eu,
                                          e.Eu_se,
                                          e.mean_norm,
                                          e.mean_floor,
                                          e.max_abs_error};
  std::copy(values, values + kEstimateFields, row);
}
ErrorEstimate unpack_estimate(const double* q, std::size_t sweep) {
  ErrorEstimate e;
  e.sweep = sweep;  // q[0], exactly
  e.seconds = q[1];
  e.Eb = q[2];
  e.Eb_floor = q[3];
  e.Eb_se = q[4];
  e.Eu = q[5];
  e.Eu_se = q[6];
  e.mean_norm = q[7];
  e.mean_floor = q[8];
  e.max_abs_error = q[9];
  return e;
}

}  // namespace

namespace {

// The checks of CovarianceErrorTracker::score(): every checkpoint's sums of the tracker's kind and dimension, cut at
// group_offsets() of one common count, with a finite time. Returns the number of groups of a half.
std::size_t check_group_sums(const CovarianceErrorTracker& tracker, Eigen::Index dim,
                             const std::vector<double>& seconds, const std::vector<const GroupedMoments*>& gms) {
  std::size_t g = 0;
  for (std::size_t b = 0; b < gms.size(); ++b) {
    const GroupedMoments& gm = *gms[b];
    if (gm.kind() != tracker.kind() || gm.dimension() != dim)
      fail("CovarianceErrorTracker::observe", "group sums of dimension " + std::to_string(gm.dimension()) + " (" +
                                                  to_string(gm.kind()) + "), expected " + std::to_string(dim) + " (" +
                                                  to_string(tracker.kind()) + ")");
    if (!std::isfinite(seconds[b]))
      fail("CovarianceErrorTracker::observe", "seconds = " + number_text(seconds[b]) + " is not finite");
    const double count = gm.count();
    if (!(count >= 0) || count != std::floor(count) || count > 9e15)
      fail("CovarianceErrorTracker::observe", "group sums with count " + number_text(count));
    const std::vector<std::size_t> offsets = tracker.group_offsets(static_cast<std::size_t>(count));
    g = (offsets.size() - 1) / 2;
    bool matches = gm.num_groups() == 2 * g && (b == 0 || gm.count() == gms[0]->count());
    for (std::size_t j = 0; matches && j < 2 * g; ++j)
      matches = gm.group(j).count == static_cast<double>(offsets[j + 1] - offsets[j]);
    if (!matches)
      fail("CovarianceErrorTracker::observe",
           "the group sums are not cut at group_offsets(" + std::to_string(offsets.back()) + ") (" +
               std::to_string(gm.num_groups()) + " groups, expected " + std::to_string(2 * g) + ")");
  }
  return g;
}

// The jackknife standard errors of one checkpoint (CovarianceErrorTracker::score() explains them) into e.Eu_se and
// e.Eb_se, from `jack`: column j the deviation (D values) of delete-one-group replicate j of a half (g of half 1,
// then g of half 2), then its squared pooled norm; the columns are centred in place. d1, d2: the halves' deviations.
void jackknife_standard_errors(Eigen::MatrixXd& jack, Eigen::Index D, std::size_t g, const Eigen::VectorXd& d1,
                               const Eigen::VectorXd& d2, ErrorEstimate& e) {
  const auto gi = static_cast<Eigen::Index>(g);
  auto j1 = jack.topLeftCorner(D, gi);
  auto j2 = jack.block(0, gi, D, gi);
  const Eigen::VectorXd thb = jack.row(D).transpose();
  j1.colwise() -= column_mean(j1, 0, gi);
  j2.colwise() -= column_mean(j2, 0, gi);
  const double f = (static_cast<double>(g) - 1.0) / static_cast<double>(g);
  const double v1 = f * (j1.transpose() * d2).squaredNorm();
  const double v2 = f * (j2.transpose() * d1).squaredNorm();
  const double t12 = f * f * (j1.transpose() * j2).squaredNorm();
  e.Eu_se = std::sqrt(std::max(v1 + v2 - t12, t12));
  const double fb = (2.0 * static_cast<double>(g) - 1.0) / (2.0 * static_cast<double>(g));
  const double vb = fb * (thb.array() - thb.mean()).square().sum();
  e.Eb_se = std::sqrt(std::max(vb - 0.5 * t12, 0.5 * t12));
}

}  // namespace

std::vector<std::size_t> CovarianceErrorTracker::group_offsets(std::size_t chains) const {
  if (chains < kMinSplitHalfChains)
    fail("CovarianceErrorTracker::observe", "need at least " + std::to_string(kMinSplitHalfChains) +
                                                " chains (two halves of three: a jackknife replicate deletes a group "
                                                "and still needs two chains for a covariance), got " +
                                                std::to_string(chains));
  // Half 1 = chains [0, L/2), half 2 = [L/2, L), each cut into g groups of near-equal size. Deleting the
  // largest group must leave at least two chains in the half (else the replicate's covariance divides by
  // zero): raise g until it does (h >= 3 ends at g = h at the latest; half 2 has h or h + 1 chains).
  const std::size_t half = chains / 2;
  std::size_t g = std::min(m_options.jackknife_groups, half);
  while (g < half && half - (half + g - 1) / g < 2) ++g;
  std::vector<std::size_t> offsets;
  for (std::size_t k = 0; k < g; ++k) offsets.push_back(k * half / g);
  for (std::size_t k = 0; k < g; ++k) offsets.push_back(half + k * (chains - half) / g);
  offsets.push_back(chains);
  return offsets;
}

ErrorEstimate CovarianceErrorTracker::observe(std::size_t sweep, double seconds,
                                              const Eigen::Ref<const Eigen::MatrixXd>& states,
                                              const Execution& execution) {
  return observe(sweep, seconds, states, 0, static_cast<std::size_t>(states.cols()), execution);
}

ErrorEstimate CovarianceErrorTracker::observe(std::size_t sweep, double seconds,
                                              const Eigen::Ref<const Eigen::MatrixXd>& states, std::size_t first,
                                              std::size_t chains, const Execution& execution) {
  return observe_batch({sweep}, {seconds}, {states}, first, chains, execution).front();
}

std::vector<ErrorEstimate> CovarianceErrorTracker::observe_batch(
    const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states, std::size_t first, std::size_t chains,
    const Execution& execution) {
  return observe_chunks(sweeps, seconds, states, first, chains, execution, nullptr);
}

std::vector<ErrorEstimate> CovarianceErrorTracker::observe_batch(
    const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states, std::size_t first, std::size_t chains,
    const Execution& execution, const Mapped& mapped) {
  const char* where = "CovarianceErrorTracker::observe_batch";
  const Eigen::Index dim = m_node_variances.size();
  if (m_kind != MomentKind::Full || mapped.tracker.kind() != MomentKind::Full)
    fail(where, "the mapped tracker's sums are derived from the full scatter: both trackers must be of the full kind");
  if (&mapped.tracker == this) fail(where, "the mapped tracker is this tracker");
  if (mapped.tracker.m_node_variances.size() != dim || mapped.map.rows() != dim || mapped.map.cols() != dim)
    fail(where, "the mapped tracker has dimension " + std::to_string(mapped.tracker.m_node_variances.size()) +
                    " and the map is " + std::to_string(mapped.map.rows()) + " x " + std::to_string(mapped.map.cols()) +
                    ", expected " + std::to_string(dim));
  if (mapped.tracker.group_offsets(chains) != group_offsets(chains))
    fail(where, "the mapped tracker cuts the chains into other groups (its jackknife_groups differ)");
  if (!mapped.map.allFinite()) fail(where, "the map has a NaN or infinite entry");
  return observe_chunks(sweeps, seconds, states, first, chains, execution, &mapped);
}

std::vector<ErrorEstimate> CovarianceErrorTracker::observe_chunks(
    const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states, std::size_t first, std::size_t chains,
    const Execution& execution, const Mapped* mapped) {
  const char* where = "CovarianceErrorTracker::observe";
  if (states.empty() || sweeps.size() != states.size() || seconds.size() != states.size())
    fail(where, std::to_string(sweeps.size()) + " sweeps, " + std::to_string(seconds.size()) + " times and " +
                    std::to_string(states.size()) + " sets of states (expected the same number, at least one)");
  const Eigen::Index dim = m_node_variances.size();
  for (const auto& st : states)
    if (st.rows() != dim)
      fail(where, "states have " + std::to_string(st.rows()) + " rows, expected " + std::to_string(dim) +
                      " (x, or x~ = B y~ for the dual)");
  const std::vector<std::size_t> offsets = group_offsets(chains);
  for (const auto& st : states)
    if (first > chains || static_cast<std::size_t>(st.cols()) > chains - first)
      fail(where, "states of chains [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                      std::to_string(st.cols()) + ") outside the " + std::to_string(chains) + " chains");
  for (double t : seconds)
    if (!std::isfinite(t)) fail(where, "seconds = " + number_text(t) + " is not finite");
  const std::size_t total_sets = states.size();
  ChainGroup* const group = execution.shared();
  const std::size_t chunk = checkpoint_chunk(total_sets, offsets.size() - 1, dim, m_kind, group);
  for (std::size_t c0 = 0; c0 < total_sets; c0 += chunk) {
    const std::size_t c1 = std::min(total_sets, c0 + chunk), sets = c1 - c0;
    const auto at = [c0](std::size_t b) { return static_cast<std::ptrdiff_t>(c0 + b); };
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>> chunk_states(states.begin() + at(0),
                                                                      states.begin() + at(sets));
    const bool split = group && sets > 1;
    // One checkpoint: every member gets every group's sums and scores it. Several: each member gets every group's
    // sums of its share of the checkpoints only (GroupedMoments::batch_share).
    const std::vector<GroupedMoments> gms =
        split ? GroupedMoments::batch_share(chunk_states, first, offsets, m_kind, execution)
              : GroupedMoments::batch(chunk_states, first, offsets, m_kind, execution);
    const std::vector<std::size_t> chunk_sweeps(sweeps.begin() + at(0), sweeps.begin() + at(sets));
    const std::vector<double> chunk_seconds(seconds.begin() + at(0), seconds.begin() + at(sets));
    std::vector<const GroupedMoments*> list;
    for (const GroupedMoments& gm : gms) list.push_back(&gm);
    const unsigned threads = execution.thread_budget();
    if (!mapped) {
      score_chunk(chunk_sweeps, chunk_seconds, list, group, split, threads);
      continue;
    }
    // The mapped tracker's sums from these (the same checkpoints, the same share of them on every member). In one
    // process this tracker's scoring is one more task among the mapping's (its scores are its own, and only the
    // mapping calls the BLAS); over a group, first, so that the exchanges come in the same order on every member.
    const bool alongside = !group && threads > 1;
    if (!alongside) score_chunk(chunk_sweeps, chunk_seconds, list, group, split, threads);
    const std::function<void()> own_scores = [&] { score_chunk(chunk_sweeps, chunk_seconds, list, nullptr, false, 1); };
    std::vector<GroupedMoments> images;
    images.reserve(gms.size());
    for (std::size_t b = 0; b < gms.size(); ++b)
      images.push_back(gms[b].mapped(mapped->map, execution.alone(), alongside && b == 0 ? own_scores : nullptr));
    std::vector<const GroupedMoments*> image_list;
    for (const GroupedMoments& gm : images) image_list.push_back(&gm);
    mapped->tracker.score_chunk(chunk_sweeps, chunk_seconds, image_list, group, split, threads);
  }
  return {m_history.end() - static_cast<std::ptrdiff_t>(total_sets), m_history.end()};
}

void CovarianceErrorTracker::score_chunk(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                         const std::vector<const GroupedMoments*>& list, ChainGroup* group, bool split,
                                         unsigned threads) {
  const char* where = "CovarianceErrorTracker::observe";
  if (!split) return score(sweeps, seconds, list, group, threads);
  // Rather than each member scoring every checkpoint (the halves' sums, the deviations, the jackknife's products:
  // the same work on every member), each scores its share of the checkpoints alone, exactly as one process (its
  // own jackknife replicates included), from the sums it alone received, and the estimates are gathered in
  // checkpoint order; the last checkpoint's estimate matrix comes from its scorer.
  const std::size_t sets = sweeps.size();
  constexpr std::size_t fields = kEstimateFields;
  const std::size_t before = m_history.size();
  std::vector<double> packed(sets * fields);
  shared_items(group, sets, fields, packed.data(), [&](std::size_t lo, std::size_t hi) {
    if (hi - lo != list.size()) fail(where, "internal: the shares of checkpoints differ");
    if (lo == hi) return;
    try {  // no exchange inside: this member scores these checkpoints alone
      score({sweeps.begin() + static_cast<std::ptrdiff_t>(lo), sweeps.begin() + static_cast<std::ptrdiff_t>(hi)},
            {seconds.begin() + static_cast<std::ptrdiff_t>(lo), seconds.begin() + static_cast<std::ptrdiff_t>(hi)},
            list, nullptr,
            threads);  // list = checkpoints [lo, hi): batch_share's and shared_items' shares are the same
    } catch (...) {
      m_history.resize(before);  // the history stays the same on every member
      throw;
    }
    for (std::size_t b = lo; b < hi; ++b) pack_estimate(m_history[before + b - lo], packed.data() + b * fields);
    m_history.resize(before);
  });
  for (std::size_t b = 0; b < sets; ++b) m_history.push_back(unpack_estimate(packed.data() + b * fields, sweeps[b]));
  // The last checkpoint's estimate: from the member that scored it (one item of its size, from that member only).
  std::vector<std::size_t> counts(static_cast<std::size_t>(group->size()), 0);
  int last_owner = 0;
  for (int r = 0; r < group->size(); ++r)
    if (member_share(sets, r, group->size()).second == sets && member_share(sets, r, group->size()).first < sets)
      last_owner = r;
  counts[static_cast<std::size_t>(last_owner)] = 1;
  if (group->rank() != last_owner) m_estimate.resize(m_target.rows(), m_target.cols());
  group->all_gather(m_estimate.data(), m_estimate.data(), counts, static_cast<std::size_t>(m_target.size()));
}

ErrorEstimate CovarianceErrorTracker::observe(std::size_t sweep, double seconds, const GroupedMoments& gm,
                                              const Execution& execution) {
  score({sweep}, {seconds}, {&gm}, execution.shared(), execution.thread_budget());
  return m_history.back();
}

void CovarianceErrorTracker::score(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                   const std::vector<const GroupedMoments*>& gms, ChainGroup* group, unsigned threads) {
  const Eigen::Index dim = m_node_variances.size();
  const std::size_t sets = gms.size();
  const std::size_t g = check_group_sums(*this, dim, seconds, gms);

  // Without an exchange (one process, or a member scoring its own share of a batch) the checkpoints are scored one
  // at a time: each one's jackknife columns are then written in place and read back while in the cache, where a
  // batch's columns would all be written to one buffer first and copied back checkpoint by checkpoint. The same
  // numbers: a checkpoint's columns and products are its own. On an error the history is as before the call.
  if (sets > 1 && !group) {
    const std::size_t before = m_history.size();
    try {
      for (std::size_t b = 0; b < sets; ++b) score({sweeps[b]}, {seconds[b]}, {gms[b]}, nullptr, threads);
    } catch (...) {
      m_history.resize(before);
      throw;
    }
    return;
  }

  const Eigen::Index D = m_kind == MomentKind::Full ? dim * dim : dim;
  const auto gi = static_cast<Eigen::Index>(g);
  struct Halves {
    MomentSums h1, h2;
    Eigen::VectorXd d, d1, d2;
  };
  std::vector<Halves> hv(sets);
  for (std::size_t b = 0; b < sets; ++b) {
    const GroupedMoments& gm = *gms[b];
    Halves& h = hv[b];
    h.h1 = gm.range(0, g);
    h.h2 = gm.range(g, 2 * g);
    h.d.resize(D);
    h.d1.resize(D);
    h.d2.resize(D);
    Eigen::VectorXd s;
    deviation_into(m_kind, m_domain, gm.total(), nullptr, m_node_variances, m_target, s, h.d.data());
    deviation_into(m_kind, m_domain, h.h1, nullptr, m_node_variances, m_target, s, h.d1.data());
    deviation_into(m_kind, m_domain, h.h2, nullptr, m_node_variances, m_target, s, h.d2.data());
  }

  // Standard errors from delete-one-group jackknife replicates (vectorised deviations, one column per
  // deleted group). Eu = <A1, A2> is bilinear in two independent halves: with C_h the covariance of A_h,
  // Var(Eu) = A2' C1 A2 + A1' C2 A1 - tr(C1 C2) in expectation of the plug-ins (the multivariate form of
  // Goodman's unbiased variance of a product of independent estimates). The plain two-sample jackknife
  // V1 + V2 (Arvesen 1969) counts tr(C1 C2) twice, i.e. overstates the variance by up to 2x near
  // convergence; subtracting T12 = tr(C1^ C2^) removes that. The difference is unbiased but, when one
  // direction dominates the noise (the primal's constant mode), negative about a third of the time at
  // convergence; since Var(Eu) >= tr(C1 C2), whose unbiased estimate is T12, the estimate is floored at
  // T12. So Eu_se is unbiased away from convergence and conservative near it (measured: variance up to
  // 1.9x on a 4x4 torus at sigma = 0.1, primal; 1.2x dual). Eb = ||A||^2 from all chains: pooled
  // jackknife V_b minus its own double count, 2 tr(C^2) ~ T12 / 2 (pooled noise = mean of the halves'
  // noise, equal halves), floored at T12 / 2.
  // Column j of m_jack: the deviation of replicate j (half 1's groups, then half 2's), then its squared pooled norm.
  // Over the members of a chain group each computes its share of the columns exactly as alone (its own scratch, the
  // same types) and the columns are gathered, one item = replicate j of every checkpoint of the batch (so one
  // checkpoint's columns lie in place in m_jack); both ways the products below read the same layout and numbers.
  const auto unit = static_cast<std::size_t>(D + 1);
  m_jack.resize(D + 1, 2 * gi);
  Eigen::VectorXd batch_jack;
  if (sets > 1) batch_jack.resize(static_cast<Eigen::Index>(2 * g * sets * unit));
  double* const jack = sets > 1 ? batch_jack.data() : m_jack.data();
  // A replicate's columns are its own: they spread over the threads (each with its own scratch) with the same bits.
  shared_items(group, 2 * g, sets * unit, jack, [&](std::size_t lo, std::size_t hi) {
    const double work = static_cast<double>(D) * static_cast<double>(sets) * static_cast<double>(hi - lo);
    const unsigned workers = work < 1e5 ? 1u : static_cast<unsigned>(std::min<std::size_t>(threads, hi - lo));
    std::vector<Eigen::VectorXd> scratch(std::max(1u, workers));
    std::vector<Eigen::MatrixXd> pooled(std::max(1u, workers));  // the pooled replicates, needed through their norms
    detail::run_worker_tasks(hi - lo, workers, [&](std::size_t i, unsigned w) {
      const std::size_t j = lo + i;
      pooled[w].resize(D, 1);
      for (std::size_t b = 0; b < sets; ++b) {
        const GroupedMoments& gm = *gms[b];
        double* q = jack + (j * sets + b) * unit;
        deviation_into(m_kind, m_domain, j < g ? hv[b].h1 : hv[b].h2, &gm.group(j), m_node_variances, m_target,
                       scratch[w], q);
        deviation_into(m_kind, m_domain, gm.total(), &gm.group(j), m_node_variances, m_target, scratch[w],
                       pooled[w].data());
        q[D] = pooled[w].squaredNorm();
      }
    });
  });

  for (std::size_t b = 0; b < sets; ++b) {
    const GroupedMoments& gm = *gms[b];
    const Halves& h = hv[b];
    const MomentSums& all = gm.total();
    m_estimate = m_target + Eigen::Map<const Eigen::MatrixXd>(h.d.data(), m_target.rows(), m_target.cols());
    ErrorEstimate e;
    e.sweep = sweeps[b];
    e.seconds = seconds[b];
    e.Eb = h.d.squaredNorm();
    e.Eu = h.d1.dot(h.d2);  // [eq:unbiased_error]
    e.Eb_floor = 0.25 * (h.d1 - h.d2).squaredNorm();
    e.max_abs_error = h.d.cwiseAbs().maxCoeff();

    if (sets > 1)
      for (std::size_t j = 0; j < 2 * g; ++j)
        std::copy(jack + (j * sets + b) * unit, jack + (j * sets + b + 1) * unit,
                  m_jack.data() + j * unit);  // copies: the layout of a one-checkpoint call
    jackknife_standard_errors(m_jack, D, g, h.d1, h.d2, e);

    const Eigen::VectorXd m1 = h.h1.sum / h.h1.count, m2 = h.h2.sum / h.h2.count;  // means minus the common centre
    e.mean_norm = (gm.center() + all.sum / all.count).norm();
    e.mean_floor = 0.5 * (m1 - m2).norm();
    m_history.push_back(e);
  }
}

}  // namespace dualgibbs
