// The group reduction of draws to sums about their mean, here or over a chain group. See grouped_moments.hpp.

#include <dualgibbs/estimation/grouped_moments.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/number_text.hpp>
#include "core/blas_threads.hpp"
#include "estimation/estimator_checks.hpp"
#include "estimation/run_tasks.hpp"

#include <Eigen/Core>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace dualgibbs {

using detail::all_finite;
using detail::fail;
using detail::run_tasks;

namespace {

std::vector<std::size_t> even_offsets(std::size_t n, std::size_t groups) {
  if (groups < 1 || groups > n)
    fail("GroupedMoments", "number of groups " + std::to_string(groups) + " must be in [1, " + std::to_string(n) +
                               "] (the number of draws)");
  std::vector<std::size_t> off(groups + 1);
  for (std::size_t g = 0; g <= groups; ++g) off[g] = g * n / groups;
  return off;
}

// Copies the lower triangle of the column-major dim x dim matrix p into its upper triangle, in tiles (a plain
// p(j, i) = p(i, j) loop writes across columns, one cache line per value: it was most of a rank's share of
// GroupedMoments::build). Copies only: the bits are those of the lower triangle.
void mirror_lower(double* p, Eigen::Index dim) {
  constexpr Eigen::Index tile = 16;
  for (Eigen::Index j0 = 0; j0 < dim; j0 += tile) {
    const Eigen::Index j1 = std::min(dim, j0 + tile);
    for (Eigen::Index i0 = j0; i0 < dim; i0 += tile) {
      const Eigen::Index i1 = std::min(dim, i0 + tile);
      for (Eigen::Index i = i0; i < i1; ++i)                 // column i of the upper part
        for (Eigen::Index j = j0; j < std::min(j1, i); ++j)  // rows j < i of it
          p[i * dim + j] = p[j * dim + i];
    }
  }
}

// The diagonal kind's sums of `block` about `center` into sum and scatter (dim doubles each, sum already zero):
// O(n dim), no BLAS.
void diagonal_sums(const Eigen::Ref<const Eigen::MatrixXd>& block, const Eigen::VectorXd& center, double* sum,
                   double* scatter) {
  std::fill(scatter, scatter + center.size(), 0.0);
  for (Eigen::Index k = 0; k < block.cols(); ++k) {
    const double* x = block.col(k).data();
    for (Eigen::Index i = 0; i < center.size(); ++i) {
      const double c = x[i] - center(i);
      sum[i] += c;
      scatter[i] += c * c;
    }
  }
}

}  // namespace

GroupedMoments::GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets,
                               MomentKind kind, const Execution& execution)
    : m_kind(kind) {
  build(draws, offsets, execution);
}

GroupedMoments::GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t groups, MomentKind kind,
                               const Execution& execution)
    : m_kind(kind) {
  if (draws.cols() == 0 || draws.rows() == 0) fail("GroupedMoments", "no draws (empty matrix)");
  build(draws, even_offsets(static_cast<std::size_t>(draws.cols()), groups), execution);
}

GroupedMoments::GroupedMoments(MomentKind kind, Eigen::VectorXd center, std::vector<MomentSums> groups)
    : m_kind(kind), m_center(std::move(center)), m_groups(std::move(groups)) {
  const Eigen::Index dim = m_center.size();
  if (dim == 0 || m_groups.empty()) fail("GroupedMoments", "no groups or an empty centre");
  if (!m_center.allFinite()) fail("GroupedMoments", "the centre has a NaN or infinite entry");
  const Eigen::Index scatter_size = kind == MomentKind::Full ? dim * dim : dim;
  for (std::size_t g = 0; g < m_groups.size(); ++g) {
    const MomentSums& s = m_groups[g];
    if (!(s.count >= 1) || !std::isfinite(s.count))
      fail("GroupedMoments", "group " + std::to_string(g) + " has count " + number_text(s.count) + " (must be >= 1)");
    if (s.sum.size() != dim || s.scatter.size() != scatter_size)
      fail("GroupedMoments", "group " + std::to_string(g) + ": sums of the wrong shape (dimension " +
                                 std::to_string(s.sum.size()) + ", scatter " + std::to_string(s.scatter.size()) +
                                 ") for dimension " + std::to_string(dim) + " (" + to_string(kind) + ")");
    if (!s.sum.allFinite() || !s.scatter.allFinite())
      fail("GroupedMoments", "group " + std::to_string(g) + ": the sums have a NaN or infinite entry");
  }
  m_total = range(0, m_groups.size());
}

GroupedMoments::GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t first,
                               const std::vector<std::size_t>& offsets, MomentKind kind, const Execution& execution)
    : m_kind(kind) {
  std::vector<GroupedMoments*> out{this};
  build_all({draws}, first, offsets, kind, out, execution);
}

std::vector<GroupedMoments> GroupedMoments::batch(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                  std::size_t first, const std::vector<std::size_t>& offsets,
                                                  MomentKind kind, const Execution& execution) {
  if (draws.empty()) fail("GroupedMoments::batch", "no sets of draws");
  std::vector<GroupedMoments> result(draws.size(), GroupedMoments(kind));
  std::vector<GroupedMoments*> out;
  for (std::size_t b = 0; b < draws.size(); ++b) {
    if (draws[b].rows() != draws[0].rows() || draws[b].cols() != draws[0].cols())
      fail("GroupedMoments::batch", "set " + std::to_string(b) + " of draws is " + std::to_string(draws[b].rows()) +
                                        " x " + std::to_string(draws[b].cols()) + ", set 0 is " +
                                        std::to_string(draws[0].rows()) + " x " + std::to_string(draws[0].cols()));
    out.push_back(&result[b]);
  }
  build_all(draws, first, offsets, kind, out, execution);
  return result;
}

std::vector<GroupedMoments> GroupedMoments::batch_share(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                        std::size_t first, const std::vector<std::size_t>& offsets,
                                                        MomentKind kind, const Execution& execution) {
  if (draws.empty()) fail("GroupedMoments::batch_share", "no sets of draws");
  for (std::size_t b = 0; b < draws.size(); ++b)
    if (draws[b].rows() != draws[0].rows() || draws[b].cols() != draws[0].cols())
      fail("GroupedMoments::batch_share",
           "set " + std::to_string(b) + " of draws is " + std::to_string(draws[b].rows()) + " x " +
               std::to_string(draws[b].cols()) + ", set 0 is " + std::to_string(draws[0].rows()) + " x " +
               std::to_string(draws[0].cols()));
  const ChainGroup* group = execution.shared();
  const auto [lo, hi] = group ? member_share(draws.size(), group->rank(), group->size())
                              : std::pair<std::size_t, std::size_t>{0, draws.size()};
  std::vector<GroupedMoments> result(hi - lo, GroupedMoments(kind));
  std::vector<GroupedMoments*> out;
  for (GroupedMoments& gm : result) out.push_back(&gm);
  build_all(draws, first, offsets, kind, out, execution, true);
  return result;
}

void GroupedMoments::build(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets,
                           const Execution& execution) {
  const auto n = static_cast<std::size_t>(draws.cols());
  if (draws.rows() == 0 || n == 0) fail("GroupedMoments", "no draws (empty matrix)");
  if (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != n)
    fail("GroupedMoments", "group offsets must start at 0 and end at the number of draws " + std::to_string(n));
  std::vector<GroupedMoments*> out{this};
  build_all({draws}, 0, offsets, m_kind, out, execution);
}

namespace {

// The sets of draws of one GroupedMoments::build_all: every set holds draws [first, first + held) of the n draws
// cut into `groups` groups at `offsets`; every set has the same shape (batch() checks it; the single-set callers
// have one).
struct DrawSets {
  const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws;
  const std::vector<std::size_t>& offsets;
  MomentKind kind;
  std::size_t first, held, n, groups, sets;
  Eigen::Index dim;

  // Group g's columns in set b.
  auto columns(std::size_t b, std::size_t g) const {
    if (offsets[g] < first || offsets[g + 1] > first + held)
      fail("GroupedMoments", "group " + std::to_string(g) + " (draws [" + std::to_string(offsets[g]) + ", " +
                                 std::to_string(offsets[g + 1]) + ")) is not among the draws held here [" +
                                 std::to_string(first) + ", " + std::to_string(first + held) + ")");
    return draws[b].middleCols(static_cast<Eigen::Index>(offsets[g] - first),
                               static_cast<Eigen::Index>(offsets[g + 1] - offsets[g]));
  }
  Eigen::Index scatter_size() const { return kind == MomentKind::Full ? dim * dim : dim; }
};

// Checks the cuts and the draws held against them.
DrawSets check_draw_sets(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws, std::size_t first,
                         const std::vector<std::size_t>& offsets, MomentKind kind) {
  const Eigen::Index dim = draws.front().rows();
  if (offsets.size() < 2 || offsets.front() != 0)
    fail("GroupedMoments", "group offsets must start at 0 and end at the number of draws");
  const std::size_t n = offsets.back();
  for (std::size_t g = 0; g + 1 < offsets.size(); ++g)
    if (offsets[g + 1] <= offsets[g])
      fail("GroupedMoments", "group offsets must increase strictly (group " + std::to_string(g) + " is empty)");
  const auto held = static_cast<std::size_t>(draws.front().cols());
  if (dim == 0) fail("GroupedMoments", "no draws (empty matrix)");
  if (first > n || held > n - first)
    fail("GroupedMoments", "draws [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                               std::to_string(held) + ") lie outside the " + std::to_string(n) +
                               " draws of the groups");
  // The full kind hands dim x dim matrices to the BLAS (32-bit int sizes); the diagonal kind has no limit.
  if (kind == MomentKind::Full && (dim > std::numeric_limits<int>::max() / std::max<Eigen::Index>(dim, 1) ||
                                   n > static_cast<std::size_t>(std::numeric_limits<int>::max())))
    fail("GroupedMoments", "dimension " + std::to_string(dim) + " or count " + std::to_string(n) +
                               " too large for the full covariance (use MomentKind::Diagonal)");
  return {draws, offsets, kind, first, held, n, offsets.size() - 1, draws.size(), dim};
}

// Runs `compute(first group, last group)` for every group: here (`group` null), or over the members' shares with
// `unit` doubles of each group's results gathered into `packed` (group-major).
void over_groups(std::size_t groups, ChainGroup* group, std::size_t unit, Eigen::VectorXd& packed,
                 const std::function<void(std::size_t, std::size_t)>& compute) {
  if (!group) return compute(0, groups);
  packed.resize(static_cast<Eigen::Index>(groups * unit));  // not zero-filled: every item is written
  shared_items(group, groups, unit, packed.data(), compute);
}

// Pass 1: the common centre of every set, the mean of all its draws: each group's column sum (columns in order;
// contiguous and vectorised, unlike Eigen's rowwise() reductions of a column-major matrix), then the groups' sums
// in group order, so a member needs only its own groups' draws (`share_over`: gathered over that chain group, when
// not null). Finiteness is checked on the way.
std::vector<Eigen::VectorXd> common_centres(const DrawSets& d, ChainGroup* share_over, unsigned threads) {
  const bool share_centre = share_over != nullptr;
  const auto udim = static_cast<std::size_t>(d.dim);
  const std::size_t sets = d.sets, groups = d.groups;
  std::vector<Eigen::MatrixXd> column_sums(sets, Eigen::MatrixXd(d.dim, static_cast<Eigen::Index>(groups)));
  Eigen::VectorXd packed;
  over_groups(groups, share_over, sets * udim, packed, [&](std::size_t lo, std::size_t hi) {
    // A group's sum is its own: the groups spread over the threads with the same bits (run_tasks).
    const double adds = static_cast<double>(d.dim) * static_cast<double>(d.held) * static_cast<double>(sets);
    run_tasks((hi - lo) * sets, adds, threads, [&](std::size_t i) {
      const std::size_t g = lo + i / sets, b = i % sets;
      const auto block = d.columns(b, g);
      double* sum = share_centre ? packed.data() + (g * sets + b) * udim
                                 : column_sums[b].col(static_cast<Eigen::Index>(g)).data();
      Eigen::Map<Eigen::VectorXd> acc(sum, d.dim);
      acc.setZero();
      for (Eigen::Index k = 0; k < block.cols(); ++k) acc += block.col(k);
      // A NaN or an infinity among the draws makes their sum non-finite: the block is read once, not twice.
      if (!acc.allFinite())
        fail("GroupedMoments",
             all_finite(block) ? "draws too large: their sum overflows" : "draws contain NaN or infinite values");
    });
  });
  std::vector<Eigen::VectorXd> centres(sets);
  for (std::size_t b = 0; b < sets; ++b) {
    for (std::size_t g = 0; share_centre && g < groups; ++g)
      column_sums[b].col(static_cast<Eigen::Index>(g)) =
          Eigen::Map<const Eigen::VectorXd>(packed.data() + (g * sets + b) * udim, d.dim);
    Eigen::VectorXd total = column_sums[b].col(0);
    for (std::size_t g = 1; g < groups; ++g) total += column_sums[b].col(static_cast<Eigen::Index>(g));
    centres[b] = total / static_cast<double>(d.n);
  }
  return centres;
}

// Group g's sums of set b about `center` into count, sum (dim doubles) and scatter (scatter_size doubles): the full
// scatter by one single-threaded BLAS symmetric rank-k update (lower triangle, then mirrored). `mirror` = false
// leaves the full scatter's upper triangle unwritten.
void group_sums(const DrawSets& d, const Eigen::VectorXd& center, std::size_t b, std::size_t g, double* count,
                double* sum, double* scatter, bool mirror = true) {
  const auto block = d.columns(b, g);
  *count = static_cast<double>(block.cols());
  Eigen::Map<Eigen::VectorXd> acc(sum, d.dim);
  acc.setZero();
  if (d.kind == MomentKind::Diagonal) return diagonal_sums(block, center, sum, scatter);
  const Eigen::MatrixXd centred = block.colwise() - center;
  for (Eigen::Index k = 0; k < centred.cols(); ++k) acc += centred.col(k);
  const int nd = static_cast<int>(d.dim), k = static_cast<int>(centred.cols());
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nd, k, 1.0, centred.data(), nd, 0.0, scatter, nd);
  if (mirror) mirror_lower(scatter, d.dim);
}

// Pass 2 when every set is kept by one member of the chain group (GroupedMoments::batch_share): each member computes
// its groups' sums of every set straight into its send buffer, ordered by the member that keeps the set (then group,
// then set), and receives every group's sums of the sets it keeps [own_lo, own_hi) into kept[b - own_lo]: from
// member r its groups, so the received items run group-major over all groups, then over this member's sets. A full
// scatter travels as its lower triangle, column by column (half the bytes), and the keeper mirrors it, as one
// process does after its rank-k update: the same numbers.
void sums_to_keepers(const DrawSets& d, const std::vector<Eigen::VectorXd>& centres, ChainGroup& group,
                     std::size_t own_lo, std::size_t own_hi, double flops, unsigned threads,
                     const std::vector<std::vector<MomentSums>*>& kept) {
  const Eigen::Index dim = d.dim, scatter_size = d.scatter_size();
  const std::size_t sets = d.sets, groups = d.groups;
  const MomentKind kind = d.kind;
  const Eigen::Index tri = dim * (dim + 1) / 2;
  const auto item = static_cast<std::size_t>(1 + dim + (kind == MomentKind::Full ? tri : scatter_size));
  const int members = group.size();
  const auto k = static_cast<std::size_t>(members);
  const auto [g_lo, g_hi] = member_share(groups, group.rank(), members);
  std::vector<std::size_t> counts(k * k), set_lo(k), block_at(k);
  std::vector<std::size_t> keeper(sets);
  std::size_t at = 0;
  for (int r = 0; r < members; ++r) {
    const auto [gr_lo, gr_hi] = member_share(groups, r, members);
    for (int t = 0; t < members; ++t) {
      const auto [s_lo, s_hi] = member_share(sets, t, members);
      counts[static_cast<std::size_t>(r) * k + static_cast<std::size_t>(t)] = (gr_hi - gr_lo) * (s_hi - s_lo);
      if (r != group.rank()) continue;
      set_lo[static_cast<std::size_t>(t)] = s_lo;
      block_at[static_cast<std::size_t>(t)] = at;
      at += (gr_hi - gr_lo) * (s_hi - s_lo);
      for (std::size_t b = s_lo; b < s_hi; ++b) keeper[b] = static_cast<std::size_t>(t);
    }
  }
  Eigen::VectorXd send(static_cast<Eigen::Index>(at * item));
  group.clear_settled();
  std::exception_ptr error;
  try {
    const double task_flops = flops * static_cast<double>(sets) * static_cast<double>(g_hi - g_lo);
    run_tasks((g_hi - g_lo) * sets, task_flops / static_cast<double>(groups), threads, [&](std::size_t i) {
      const std::size_t g = g_lo + i / sets, b = i % sets, t = keeper[b];
      const std::size_t kept_sets = t + 1 < k ? set_lo[t + 1] - set_lo[t] : sets - set_lo[t];
      double* q = send.data() + (block_at[t] + (g - g_lo) * kept_sets + (b - set_lo[t])) * item;
      if (kind != MomentKind::Full) return group_sums(d, centres[b], b, g, q, q + 1, q + 1 + dim);
      // The rank-k update's dim x dim output (uninitialised: dsyrk with beta 0 writes the lower triangle without
      // reading it, and only that is copied), then its lower triangle column by column.
      const std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(scatter_size)]);
      group_sums(d, centres[b], b, g, q, q + 1, full.get(), false);
      double* lower = q + 1 + dim;
      for (Eigen::Index j = 0; j < dim; lower += dim - j, ++j)
        std::copy(full.get() + j * dim + j, full.get() + (j + 1) * dim, lower);
    });
  } catch (...) {
    if (group.failure_settled()) throw;
    error = std::current_exception();
  }
  const std::size_t mine = own_hi - own_lo;
  Eigen::VectorXd recv(static_cast<Eigen::Index>(groups * mine * item));
  group.all_to_all(error, send.data(), recv.data(), counts, item);
  for (std::size_t b = own_lo; b < own_hi; ++b)
    for (std::size_t g = 0; g < groups; ++g) {
      const double* q = recv.data() + (g * mine + (b - own_lo)) * item;
      MomentSums& s = (*kept[b - own_lo])[g];
      s.count = q[0];
      s.sum = Eigen::Map<const Eigen::VectorXd>(q + 1, dim);
      if (kind != MomentKind::Full) {
        s.scatter = Eigen::Map<const Eigen::VectorXd>(q + 1 + dim, scatter_size);
        continue;
      }
      s.scatter.resize(scatter_size);
      const double* lower = q + 1 + dim;
      for (Eigen::Index j = 0; j < dim; lower += dim - j, ++j)
        std::copy(lower, lower + (dim - j), s.scatter.data() + j * dim + j);
      mirror_lower(s.scatter.data(), dim);
    }
}

// Pass 2 when every member gets every set's sums (out[b] for set b): computed here, or (`share_over` not null) over
// the members' shares of the groups and gathered in group order, the sums travelling packed as (count, sum,
// scatter): copies, so the bits are those of one process.
void sums_to_all(const DrawSets& d, const std::vector<Eigen::VectorXd>& centres, ChainGroup* share_over, double flops,
                 unsigned threads, const std::vector<std::vector<MomentSums>*>& out) {
  const bool share_sums = share_over != nullptr;
  const Eigen::Index dim = d.dim, scatter_size = d.scatter_size();
  const std::size_t sets = d.sets, groups = d.groups;
  const auto unit = static_cast<std::size_t>(1 + dim + scatter_size);
  auto one_group = [&](std::size_t b, std::size_t g) {
    MomentSums& s = (*out[b])[g];
    s.sum.resize(dim);
    s.scatter.resize(scatter_size);
    group_sums(d, centres[b], b, g, &s.count, s.sum.data(), s.scatter.data());
  };
  Eigen::VectorXd packed;
  over_groups(groups, share_over, sets * unit, packed, [&](std::size_t lo, std::size_t hi) {
    const double task_flops = flops * static_cast<double>(sets) * static_cast<double>(hi - lo);
    run_tasks((hi - lo) * sets, task_flops / static_cast<double>(groups), threads, [&](std::size_t i) {
      const std::size_t g = lo + i / sets, b = i % sets;
      if (!share_sums) return one_group(b, g);
      double* q = packed.data() + (g * sets + b) * unit;
      group_sums(d, centres[b], b, g, q, q + 1, q + 1 + dim);  // straight into the exchanged buffer
    });
  });
  // (Here every member receives every set's sums: sending only the lower triangle of a full scatter halves the bytes
  // but costs a strided mirror of every group on every member, measured slower. The keepers of sums_to_keepers()
  // mirror only the sets they keep, a mirror one process makes too.)
  for (std::size_t b = 0; share_sums && b < sets; ++b)
    for (std::size_t g = 0; g < groups; ++g) {
      const double* q = packed.data() + (g * sets + b) * unit;
      MomentSums& s = (*out[b])[g];
      s.count = q[0];
      s.sum = Eigen::Map<const Eigen::VectorXd>(q + 1, dim);
      s.scatter = Eigen::Map<const Eigen::VectorXd>(q + 1 + dim, scatter_size);
    }
}

}  // namespace

void GroupedMoments::build_all(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws, std::size_t first,
                               const std::vector<std::size_t>& offsets, MomentKind kind,
                               std::vector<GroupedMoments*>& out, const Execution& execution, bool owners_only) {
  const DrawSets d = check_draw_sets(draws, first, offsets, kind);
  // This process holds every draw (one process, or a member given all of them), or, in a chain group, only its share
  // of the groups (member_share(groups, rank, size): the chains EnsembleOptions::local_cuts gave it). Then every pass
  // runs on the groups it holds and their sums are gathered in group order over `execution`'s group (chain_group.hpp).
  // A batch of sets travels together: an exchanged item is one group's results for every set (group-major, then
  // set).
  const bool holds_all = first == 0 && d.held == d.n;
  ChainGroup* const group = execution.shared();
  const unsigned threads = execution.thread_budget();
  // The sets whose objects are built here (out[b - own_lo]): all, or with `owners_only` this member's share.
  const bool to_owners = owners_only && group;
  const auto [own_lo, own_hi] =
      to_owners ? member_share(d.sets, group->rank(), group->size()) : std::pair<std::size_t, std::size_t>{0, d.sets};
  if (out.size() != own_hi - own_lo) fail("GroupedMoments", "internal: objects for the wrong number of sets");

  const std::vector<Eigen::VectorXd> centres = common_centres(d, holds_all ? nullptr : group, threads);
  for (std::size_t b = own_lo; b < own_hi; ++b) out[b - own_lo]->m_center = centres[b];

  // Pass 2: each group's sums about the centre, groups spread over the threads (run_tasks: the bits do not depend on
  // any thread count), and over the members of a chain group (the full kind always, the diagonal kind when the
  // members hold only their shares).
  std::vector<std::vector<MomentSums>*> sums;
  for (GroupedMoments* gm : out) {
    gm->m_groups.assign(d.groups, MomentSums{});
    sums.push_back(&gm->m_groups);
  }
  const detail::ScopedBlasThreads single_threaded_blas(1);
  // The diagonal kind is O(n dim): one thread, as the BLAS-free loop it is.
  const double flops = kind == MomentKind::Full
                           ? static_cast<double>(d.dim) * static_cast<double>(d.dim) * static_cast<double>(d.n)
                           : 0.0;
  if (to_owners)
    sums_to_keepers(d, centres, *group, own_lo, own_hi, flops, threads, sums);
  else
    sums_to_all(d, centres, kind == MomentKind::Full || !holds_all ? group : nullptr, flops, threads, sums);
  for (GroupedMoments* gm : out) gm->m_total = gm->range(0, d.groups);
}

GroupedMoments GroupedMoments::mapped(const Eigen::MatrixXd& map, const Execution& execution,
                                      const std::function<void()>& alongside) const {
  const Eigen::Index dim = dimension();
  if (m_kind != MomentKind::Full)
    fail("GroupedMoments::mapped",
         std::string("the sums of mapped draws need the full scatter (these are ") + to_string(m_kind) + ")");
  if (map.rows() != dim || map.cols() != dim)
    fail("GroupedMoments::mapped", "map is " + std::to_string(map.rows()) + " x " + std::to_string(map.cols()) +
                                       ", expected " + std::to_string(dim) + " x " + std::to_string(dim));
  if (dim > std::numeric_limits<int>::max() / std::max<Eigen::Index>(dim, 1))
    fail("GroupedMoments::mapped", "dimension " + std::to_string(dim) + " too large for the BLAS");
  if (!map.allFinite()) fail("GroupedMoments::mapped", "map has a NaN or infinite entry");
  GroupedMoments out(m_kind);
  out.m_center = map * m_center;
  out.m_groups.assign(m_groups.size(), MomentSums{});
  const detail::ScopedBlasThreads single_threaded_blas(1);
  const double flops = 4.0 * static_cast<double>(dim) * static_cast<double>(dim) * static_cast<double>(dim);
  const int nd = static_cast<int>(dim);
  const std::size_t extra = alongside ? 1 : 0;
  run_tasks(m_groups.size() + extra, flops * static_cast<double>(m_groups.size()), execution.thread_budget(),
            [&](std::size_t i) {
              if (i < extra) return alongside();
              const std::size_t g = i - extra;
              const MomentSums& from = m_groups[g];
              MomentSums& to = out.m_groups[g];
              to.count = from.count;
              to.sum = map * from.sum;
              // map P, then (map P) map^T: only the lower triangle is kept, and mirrored.
              Eigen::MatrixXd left(dim, dim);
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nd, nd, nd, 1.0, map.data(), nd,
                          from.scatter.data(), nd, 0.0, left.data(), nd);
              to.scatter.resize(dim * dim);
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, nd, nd, nd, 1.0, left.data(), nd, map.data(), nd,
                          0.0, to.scatter.data(), nd);
              mirror_lower(to.scatter.data(), dim);
            });
  for (const MomentSums& s : out.m_groups)
    if (!s.sum.allFinite() || !s.scatter.allFinite())
      fail("GroupedMoments::mapped", "the mapped sums overflow (a map or draws too large)");
  out.m_total = out.range(0, out.m_groups.size());
  return out;
}

const MomentSums& GroupedMoments::group(std::size_t g) const {
  if (g >= m_groups.size())
    fail("GroupedMoments::group", "group " + std::to_string(g) + " of " + std::to_string(m_groups.size()) + " groups");
  return m_groups[g];
}

MomentSums GroupedMoments::range(std::size_t first, std::size_t last) const {
  if (first >= last || last > m_groups.size())
    fail("GroupedMoments::range", "group range [" + std::to_string(first) + ", " + std::to_string(last) +
                                      ") is empty or beyond " + std::to_string(m_groups.size()) + " groups");
  MomentSums s = m_groups[first];
  for (std::size_t g = first + 1; g < last; ++g) s += m_groups[g];
  return s;
}

SampleMoments GroupedMoments::moments(const MomentSums& sums) const {
  const Eigen::Index dim = m_center.size();
  if (!(sums.count > 1))
    fail("GroupedMoments::moments",
         "need more than one draw for a sample covariance, got count " + number_text(sums.count));
  if (sums.sum.size() != dim || sums.scatter.size() != (m_kind == MomentKind::Full ? dim * dim : dim))
    fail("GroupedMoments::moments", "sums of the wrong shape (dimension " + std::to_string(sums.sum.size()) +
                                        ", scatter " + std::to_string(sums.scatter.size()) + ") for dimension " +
                                        std::to_string(dim) + " (" + to_string(m_kind) + ")");
  SampleMoments m;
  m.count = sums.count;
  const Eigen::VectorXd delta = sums.sum / sums.count;  // mean - centre
  m.mean = m_center + delta;
  const double denom = sums.count - 1.0;
  if (m_kind == MomentKind::Full) {
    Eigen::Map<const Eigen::MatrixXd> p(sums.scatter.data(), dim, dim);
    // sum (x - mean)(x - mean)^T = P - n delta delta^T
    m.covariance = (p - sums.count * delta * delta.transpose()) / denom;
    m.variance = m.covariance.diagonal();
  } else {
    m.variance = (sums.scatter - sums.count * delta.cwiseProduct(delta)) / denom;
  }
  return m;
}

SampleMoments GroupedMoments::moments_weighted(const std::vector<double>& weights) const {
  if (weights.size() != m_groups.size())
    fail("GroupedMoments::moments_weighted",
         "got " + std::to_string(weights.size()) + " weights for " + std::to_string(m_groups.size()) + " groups");
  MomentSums s;
  s.sum.setZero(m_center.size());
  s.scatter.setZero(m_groups.front().scatter.size());
  for (std::size_t g = 0; g < weights.size(); ++g) {
    if (!(weights[g] >= 0) || !std::isfinite(weights[g]))
      fail("GroupedMoments::moments_weighted",
           "weight of group " + std::to_string(g) + " is " + number_text(weights[g]));
    if (weights[g] == 0) continue;
    s.count += weights[g] * m_groups[g].count;
    s.sum += weights[g] * m_groups[g].sum;
    s.scatter += weights[g] * m_groups[g].scatter;
  }
  return moments(s);
}

}  // namespace dualgibbs
