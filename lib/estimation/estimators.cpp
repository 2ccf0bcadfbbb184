// Estimators of the paper's Section VII: grouped moments, Woodbury reconstruction, split-half errors,
// jackknife and bootstrap, normalisation and the Theil–Sen decay-rate fit. See estimators.hpp.
#include <dualgibbs/estimation/estimators.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/core/random.hpp>
#include "core/blas_threads.hpp"
#include "estimation/run_tasks.hpp"

#include <Eigen/Core>

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace dualgibbs {

using detail::run_tasks;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

bool all_finite(const Eigen::Ref<const Eigen::MatrixXd>& m) { return m.allFinite(); }

/// Inputs of the error and reconstruction functions: non-empty and finite (a NaN in would be a NaN out).
void check_finite_matrix(const char* where, const char* what, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  if (m.size() == 0) fail(where, std::string(what) + " is empty");
  if (!m.allFinite()) fail(where, std::string(what) + " contains NaN or infinite values");
}

void check_node_variances(const char* where, const Eigen::VectorXd& v) {
  if (v.size() == 0) fail(where, "no node variances given");
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!(v(i) > 0) || !std::isfinite(v(i)))
      fail(where, "node variance s_v^2 of node " + std::to_string(i) + " = " + number_text(v(i)) +
                      " must be finite and positive");
}

void check_same_sizes(const char* where, const MomentSums& a, const MomentSums& b) {
  if (a.sum.size() != b.sum.size() || a.scatter.size() != b.scatter.size())
    fail(where, "sums of different shapes (dimension " + std::to_string(a.sum.size()) + ", scatter " +
                    std::to_string(a.scatter.size()) + " against dimension " + std::to_string(b.sum.size()) +
                    ", scatter " + std::to_string(b.scatter.size()) + ")");
}

double median_in_place(std::vector<double>& v) {
  const std::size_t n = v.size();
  const std::size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}

}  // namespace

Eigen::VectorXd column_mean(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index first, Eigen::Index count) {
  if (count < 1 || first < 0 || first > m.cols() - count)
    fail("column_mean", "columns [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                            std::to_string(count) + ") are empty or outside the " + std::to_string(m.cols()) +
                            " columns");
  Eigen::VectorXd acc = Eigen::VectorXd::Zero(m.rows());
  for (Eigen::Index k = first; k < first + count; ++k) acc += m.col(k);
  return acc / static_cast<double>(count);
}

const char* to_string(MomentKind kind) noexcept { return kind == MomentKind::Full ? "full" : "diagonal"; }

// ---- MomentSums ---------------------------------------------------------------------------------

MomentSums& MomentSums::operator+=(const MomentSums& other) {
  check_same_sizes("MomentSums::operator+=", *this, other);
  count += other.count;
  sum += other.sum;
  scatter += other.scatter;
  return *this;
}

MomentSums& MomentSums::operator-=(const MomentSums& other) {
  check_same_sizes("MomentSums::operator-=", *this, other);
  count -= other.count;
  sum -= other.sum;
  scatter -= other.scatter;
  return *this;
}

// ---- GroupedMoments -----------------------------------------------------------------------------

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
                               MomentKind kind)
    : m_kind(kind) {
  build(draws, offsets);
}

GroupedMoments::GroupedMoments(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t groups, MomentKind kind)
    : m_kind(kind) {
  if (draws.cols() == 0 || draws.rows() == 0) fail("GroupedMoments", "no draws (empty matrix)");
  build(draws, even_offsets(static_cast<std::size_t>(draws.cols()), groups));
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
                               const std::vector<std::size_t>& offsets, MomentKind kind)
    : m_kind(kind) {
  std::vector<GroupedMoments*> out{this};
  build_all({draws}, first, offsets, kind, out);
}

std::vector<GroupedMoments> GroupedMoments::batch(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                  std::size_t first, const std::vector<std::size_t>& offsets,
                                                  MomentKind kind) {
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
  build_all(draws, first, offsets, kind, out);
  return result;
}

std::vector<GroupedMoments> GroupedMoments::batch_share(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws,
                                                        std::size_t first, const std::vector<std::size_t>& offsets,
                                                        MomentKind kind) {
  if (draws.empty()) fail("GroupedMoments::batch_share", "no sets of draws");
  for (std::size_t b = 0; b < draws.size(); ++b)
    if (draws[b].rows() != draws[0].rows() || draws[b].cols() != draws[0].cols())
      fail("GroupedMoments::batch_share",
           "set " + std::to_string(b) + " of draws is " + std::to_string(draws[b].rows()) + " x " +
               std::to_string(draws[b].cols()) + ", set 0 is " + std::to_string(draws[0].rows()) + " x " +
               std::to_string(draws[0].cols()));
  const ChainGroup* group = current_chain_group();
  const auto [lo, hi] = group ? member_share(draws.size(), group->rank(), group->size())
                              : std::pair<std::size_t, std::size_t>{0, draws.size()};
  std::vector<GroupedMoments> result(hi - lo, GroupedMoments(kind));
  std::vector<GroupedMoments*> out;
  for (GroupedMoments& gm : result) out.push_back(&gm);
  build_all(draws, first, offsets, kind, out, true);
  return result;
}

void GroupedMoments::build(const Eigen::Ref<const Eigen::MatrixXd>& draws, const std::vector<std::size_t>& offsets) {
  const auto n = static_cast<std::size_t>(draws.cols());
  if (draws.rows() == 0 || n == 0) fail("GroupedMoments", "no draws (empty matrix)");
  if (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != n)
    fail("GroupedMoments", "group offsets must start at 0 and end at the number of draws " + std::to_string(n));
  std::vector<GroupedMoments*> out{this};
  build_all({draws}, 0, offsets, m_kind, out);
}

void GroupedMoments::build_all(const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& draws, std::size_t first,
                               const std::vector<std::size_t>& offsets, MomentKind kind,
                               std::vector<GroupedMoments*>& out, bool owners_only) {
  // Every set has the same shape (batch() checks it; the single-set callers have one).
  const std::size_t sets = draws.size();
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
  const std::size_t groups = offsets.size() - 1;
  // This process holds every draw (one process, or a member given all of them), or, in a chain group, only its share
  // of the groups (member_share(groups, rank, size): the chains EnsembleOptions::local_cuts gave it). Then every pass
  // below runs on the groups it holds and their sums are gathered in group order (chain_group.hpp). A batch of sets
  // travels together: an exchanged item is one group's results for every set (group-major, then set).
  const bool holds_all = first == 0 && held == n;
  ChainGroup* const group = current_chain_group();
  // The sets whose objects are built here (out[b - own_lo]): all, or with `owners_only` this member's share.
  const bool to_owners = owners_only && group;
  const auto [own_lo, own_hi] =
      to_owners ? member_share(sets, group->rank(), group->size()) : std::pair<std::size_t, std::size_t>{0, sets};
  if (out.size() != own_hi - own_lo) fail("GroupedMoments", "internal: objects for the wrong number of sets");
  auto columns = [&](std::size_t b, std::size_t g) {  // group g's columns in set b
    if (offsets[g] < first || offsets[g + 1] > first + held)
      fail("GroupedMoments", "group " + std::to_string(g) + " (draws [" + std::to_string(offsets[g]) + ", " +
                                 std::to_string(offsets[g + 1]) + ")) is not among the draws held here [" +
                                 std::to_string(first) + ", " + std::to_string(first + held) + ")");
    return draws[b].middleCols(static_cast<Eigen::Index>(offsets[g] - first),
                               static_cast<Eigen::Index>(offsets[g + 1] - offsets[g]));
  };
  // Runs `compute(first group, last group)` for every group: here, or over the members' shares with `unit` doubles
  // of each group's results gathered into `packed` (group-major).
  auto over_groups = [&](bool shared, std::size_t unit, Eigen::VectorXd& packed,
                         const std::function<void(std::size_t, std::size_t)>& compute) {
    if (!shared) return compute(0, groups);
    packed.resize(static_cast<Eigen::Index>(groups * unit));  // not zero-filled: every item is written
    shared_items(groups, unit, packed.data(), compute);
  };

  // Pass 1: the common centre, the mean of all draws: each group's column sum (columns in order; contiguous and
  // vectorised, unlike Eigen's rowwise() reductions of a column-major matrix), then the groups' sums in group order,
  // so a member needs only its own groups' draws. Finiteness is checked on the way.
  const auto udim = static_cast<std::size_t>(dim);
  std::vector<Eigen::MatrixXd> column_sums(sets, Eigen::MatrixXd(dim, static_cast<Eigen::Index>(groups)));
  Eigen::VectorXd packed;
  const bool share_centre = group && !holds_all;
  over_groups(share_centre, sets * udim, packed, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t g = lo; g < hi; ++g)
      for (std::size_t b = 0; b < sets; ++b) {
        const auto block = columns(b, g);
        if (!all_finite(block)) fail("GroupedMoments", "draws contain NaN or infinite values");
        double* sum = share_centre ? packed.data() + (g * sets + b) * udim
                                   : column_sums[b].col(static_cast<Eigen::Index>(g)).data();
        Eigen::Map<Eigen::VectorXd> acc(sum, dim);
        acc.setZero();
        for (Eigen::Index k = 0; k < block.cols(); ++k) acc += block.col(k);
      }
  });
  std::vector<Eigen::VectorXd> centres(sets);
  for (std::size_t b = 0; b < sets; ++b) {
    for (std::size_t g = 0; share_centre && g < groups; ++g)
      column_sums[b].col(static_cast<Eigen::Index>(g)) =
          Eigen::Map<const Eigen::VectorXd>(packed.data() + (g * sets + b) * udim, dim);
    Eigen::VectorXd total = column_sums[b].col(0);
    for (std::size_t g = 1; g < groups; ++g) total += column_sums[b].col(static_cast<Eigen::Index>(g));
    centres[b] = total / static_cast<double>(n);
  }
  for (std::size_t b = own_lo; b < own_hi; ++b) out[b - own_lo]->m_center = centres[b];

  // Pass 2: each group's sums about the centre; the full scatter by one single-threaded BLAS symmetric rank-k
  // update per group (lower triangle, then mirrored), groups spread over the threads (run_tasks: the bits do
  // not depend on any thread count), and over the members of a chain group (the full kind always, the diagonal
  // kind when the members hold only their shares), the sums then travelling packed as (count, sum, scatter):
  // copies, so the bits are those of one process.
  const Eigen::Index scatter_size = kind == MomentKind::Full ? dim * dim : dim;
  for (GroupedMoments* gm : out) gm->m_groups.assign(groups, MomentSums{});
  // Group g's sums of set b about its centre into count, sum (dim doubles) and scatter (scatter_size doubles).
  // `mirror` = false leaves the full scatter's upper triangle unwritten.
  auto group_sums = [&](std::size_t b, std::size_t g, double* count, double* sum, double* scatter, bool mirror = true) {
    const auto block = columns(b, g);
    const Eigen::VectorXd& center = centres[b];
    *count = static_cast<double>(block.cols());
    Eigen::Map<Eigen::VectorXd> acc(sum, dim);
    acc.setZero();
    if (kind == MomentKind::Diagonal) return diagonal_sums(block, center, sum, scatter);
    const Eigen::MatrixXd centred = block.colwise() - center;
    for (Eigen::Index k = 0; k < centred.cols(); ++k) acc += centred.col(k);
    const int nd = static_cast<int>(dim), k = static_cast<int>(centred.cols());
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nd, k, 1.0, centred.data(), nd, 0.0, scatter, nd);
    if (mirror) mirror_lower(scatter, dim);
  };
  const detail::ScopedBlasThreads single_threaded_blas(1);
  // The diagonal kind is O(n dim): one thread, as the BLAS-free loop it is.
  const double flops =
      kind == MomentKind::Full ? static_cast<double>(dim) * static_cast<double>(dim) * static_cast<double>(n) : 0.0;
  const auto unit = static_cast<std::size_t>(1 + dim + scatter_size);
  if (to_owners) {
    // Each member computes its groups' sums of every set straight into its send buffer, ordered by the member that
    // keeps the set (then group, then set), and receives every group's sums of the sets it keeps: from member r its
    // groups, so the received items run group-major over all groups, then over this member's sets. A full scatter
    // travels as its lower triangle, column by column (half the bytes), and the keeper mirrors it, as one process
    // does after its rank-k update: the same numbers.
    const Eigen::Index tri = dim * (dim + 1) / 2;
    const auto item = static_cast<std::size_t>(1 + dim + (kind == MomentKind::Full ? tri : scatter_size));
    const int members = group->size();
    const auto k = static_cast<std::size_t>(members);
    const auto [g_lo, g_hi] = member_share(groups, group->rank(), members);
    std::vector<std::size_t> counts(k * k), set_lo(k), block_at(k);
    std::vector<std::size_t> keeper(sets);
    std::size_t at = 0;
    for (int r = 0; r < members; ++r) {
      const auto [gr_lo, gr_hi] = member_share(groups, r, members);
      for (int t = 0; t < members; ++t) {
        const auto [s_lo, s_hi] = member_share(sets, t, members);
        counts[static_cast<std::size_t>(r) * k + static_cast<std::size_t>(t)] = (gr_hi - gr_lo) * (s_hi - s_lo);
        if (r != group->rank()) continue;
        set_lo[static_cast<std::size_t>(t)] = s_lo;
        block_at[static_cast<std::size_t>(t)] = at;
        at += (gr_hi - gr_lo) * (s_hi - s_lo);
        for (std::size_t b = s_lo; b < s_hi; ++b) keeper[b] = static_cast<std::size_t>(t);
      }
    }
    Eigen::VectorXd send(static_cast<Eigen::Index>(at * item));
    group->clear_settled();
    std::exception_ptr error;
    try {
      const double task_flops = flops * static_cast<double>(sets) * static_cast<double>(g_hi - g_lo);
      run_tasks((g_hi - g_lo) * sets, task_flops / static_cast<double>(groups), [&](std::size_t i) {
        const std::size_t g = g_lo + i / sets, b = i % sets, t = keeper[b];
        const std::size_t kept = t + 1 < k ? set_lo[t + 1] - set_lo[t] : sets - set_lo[t];
        double* q = send.data() + (block_at[t] + (g - g_lo) * kept + (b - set_lo[t])) * item;
        if (kind != MomentKind::Full) return group_sums(b, g, q, q + 1, q + 1 + dim);
        // The rank-k update's dim x dim output (uninitialised: dsyrk with beta 0 writes the lower triangle without
        // reading it, and only that is copied), then its lower triangle column by column.
        const std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(scatter_size)]);
        group_sums(b, g, q, q + 1, full.get(), false);
        double* lower = q + 1 + dim;
        for (Eigen::Index j = 0; j < dim; lower += dim - j, ++j)
          std::copy(full.get() + j * dim + j, full.get() + (j + 1) * dim, lower);
      });
    } catch (...) {
      if (group->failure_settled()) throw;
      error = std::current_exception();
    }
    const std::size_t mine = own_hi - own_lo;
    Eigen::VectorXd recv(static_cast<Eigen::Index>(groups * mine * item));
    group->all_to_all(error, send.data(), recv.data(), counts, item);
    for (std::size_t b = own_lo; b < own_hi; ++b) {
      GroupedMoments& gm = *out[b - own_lo];
      for (std::size_t g = 0; g < groups; ++g) {
        const double* q = recv.data() + (g * mine + (b - own_lo)) * item;
        MomentSums& s = gm.m_groups[g];
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
      gm.m_total = gm.range(0, groups);
    }
    return;
  }

  // Otherwise every member gets every set's sums: computed here, or gathered in group order.
  auto one_group = [&](std::size_t b, std::size_t g) {
    MomentSums& s = out[b]->m_groups[g];
    s.sum.resize(dim);
    s.scatter.resize(scatter_size);
    group_sums(b, g, &s.count, s.sum.data(), s.scatter.data());
  };
  const bool share_sums = group && (kind == MomentKind::Full || !holds_all);
  over_groups(share_sums, sets * unit, packed, [&](std::size_t lo, std::size_t hi) {
    const double task_flops = flops * static_cast<double>(sets) * static_cast<double>(hi - lo);
    run_tasks((hi - lo) * sets, task_flops / static_cast<double>(groups), [&](std::size_t i) {
      const std::size_t g = lo + i / sets, b = i % sets;
      if (!share_sums) return one_group(b, g);
      double* q = packed.data() + (g * sets + b) * unit;
      group_sums(b, g, q, q + 1, q + 1 + dim);  // straight into the exchanged buffer
    });
  });
  // (Here every member receives every set's sums: sending only the lower triangle of a full scatter halves the bytes
  // but costs a strided mirror of every group on every member, measured slower. The keepers above mirror only the
  // sets they keep, a mirror one process makes too.)
  for (std::size_t b = 0; b < sets; ++b) {
    for (std::size_t g = 0; share_sums && g < groups; ++g) {
      const double* q = packed.data() + (g * sets + b) * unit;
      MomentSums& s = out[b]->m_groups[g];
      s.count = q[0];
      s.sum = Eigen::Map<const Eigen::VectorXd>(q + 1, dim);
      s.scatter = Eigen::Map<const Eigen::VectorXd>(q + 1 + dim, scatter_size);
    }
    out[b]->m_total = out[b]->range(0, groups);
  }
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

std::vector<double> GroupedMoments::bootstrap(std::size_t replicates, std::uint64_t seed,
                                              const std::function<double(const SampleMoments&)>& statistic) const {
  if (!statistic) fail("GroupedMoments::bootstrap", "no statistic given");
  const std::size_t groups = m_groups.size();
  if (groups < 2) fail("GroupedMoments::bootstrap", "need at least 2 groups to resample");
  const Eigen::Index dim = m_center.size();
  const Eigen::Index scatter_size = m_groups.front().scatter.size();
  // Group statistics side by side, so a batch of replicates is one matrix product with the multiplicities.
  Eigen::MatrixXd sums(dim, static_cast<Eigen::Index>(groups));
  Eigen::MatrixXd scatters(scatter_size, static_cast<Eigen::Index>(groups));
  Eigen::RowVectorXd counts(static_cast<Eigen::Index>(groups));
  for (std::size_t g = 0; g < groups; ++g) {
    const auto gi = static_cast<Eigen::Index>(g);
    sums.col(gi) = m_groups[g].sum;
    scatters.col(gi) = m_groups[g].scatter;
    counts(gi) = m_groups[g].count;
  }
  ChainEngine rng = make_stream(seed, 0, StreamPurpose::Bootstrap);
  std::vector<double> out;
  out.reserve(replicates);
  const std::size_t batch = 64;
  Eigen::MatrixXd w;
  MomentSums s;
  for (std::size_t done = 0; done < replicates; done += batch) {
    const auto b = static_cast<Eigen::Index>(std::min(batch, replicates - done));
    w.setZero(static_cast<Eigen::Index>(groups), b);
    for (Eigen::Index r = 0; r < b; ++r)
      for (std::size_t k = 0; k < groups; ++k) w(static_cast<Eigen::Index>(uniform_below(rng, groups)), r) += 1.0;
    const Eigen::MatrixXd bs = sums * w;
    const Eigen::RowVectorXd bc = counts * w;
    // scatters * w: the big product, by single-threaded BLAS calls on fixed blocks of rows (run_tasks).
    Eigen::MatrixXd bp(scatter_size, b);
    {
      const detail::ScopedBlasThreads single_threaded_blas(1);
      const Eigen::Index rows_per_task = 4096;
      const auto tasks = static_cast<std::size_t>((scatter_size + rows_per_task - 1) / rows_per_task);
      run_tasks(tasks, static_cast<double>(scatter_size) * static_cast<double>(b) * static_cast<double>(groups),
                [&](std::size_t t) {
                  const Eigen::Index r0 = static_cast<Eigen::Index>(t) * rows_per_task;
                  const Eigen::Index rows = std::min(rows_per_task, scatter_size - r0);
                  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(b),
                              static_cast<int>(groups), 1.0, scatters.data() + r0, static_cast<int>(scatter_size),
                              w.data(), static_cast<int>(groups), 0.0, bp.data() + r0, static_cast<int>(scatter_size));
                });
    }
    for (Eigen::Index r = 0; r < b; ++r) {
      s.count = bc(r);
      s.sum = bs.col(r);
      s.scatter = bp.col(r);
      out.push_back(statistic(moments(s)));
    }
  }
  return out;
}

std::vector<double> bootstrap_draws(const Eigen::Ref<const Eigen::MatrixXd>& draws, std::size_t replicates,
                                    std::uint64_t seed, const std::function<double(const SampleMoments&)>& statistic) {
  const std::string where = "bootstrap_draws";
  if (!statistic) fail(where, "no statistic given");
  if (replicates == 0) fail(where, "zero replicates");
  const Eigen::Index dim = draws.rows(), n = draws.cols();
  if (dim < 1 || n < 2)
    fail(where,
         "need at least 2 draws of dimension >= 1, got " + std::to_string(n) + " of dimension " + std::to_string(dim));
  // One group: the finiteness check, the centre c (the mean of all draws) and the total scatter about it, in double.
  const GroupedMoments all(draws, 1, MomentKind::Full);
  const MomentSums& total = all.total();
  const Eigen::MatrixXd centred = draws.colwise() - all.center();
  // Feature rows of a draw: the lower triangle of (x - c)(x - c)^T (i >= j, column by column), then x - c.
  const Eigen::Index tri = dim * (dim + 1) / 2, rows = tri + dim;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> pairs;
  pairs.reserve(static_cast<std::size_t>(tri));
  for (Eigen::Index j = 0; j < dim; ++j)
    for (Eigen::Index i = j; i < dim; ++i) pairs.emplace_back(i, j);
  const Eigen::Index chunk = 4096;     // draws per single-precision product (accumulated in double between chunks)
  const Eigen::Index block_rows = 96;  // feature rows per task: fixed, so the bits depend on no thread count
  const std::size_t batch = 512;       // replicates per product
  const auto row_tasks = static_cast<std::size_t>((rows + block_rows - 1) / block_rows);
  const double dn = static_cast<double>(n);
  std::vector<double> out;
  out.reserve(replicates);
  Eigen::MatrixXf excess;  // n x b: w_k - 1 of each replicate (small integers, exact in float)
  Eigen::MatrixXd acc;     // rows x b: sum_k (w_k - 1) f_k
  MomentSums s;
  const detail::ScopedBlasThreads single_threaded_blas(1);
  for (std::size_t done = 0; done < replicates; done += batch) {
    const auto b = static_cast<Eigen::Index>(std::min(batch, replicates - done));
    excess.setConstant(n, b, -1.0F);
    run_tasks(static_cast<std::size_t>(b), dn * 1e3, [&](std::size_t r) {
      ChainEngine rng = make_stream(seed, done + r, StreamPurpose::Bootstrap);
      float* col = excess.data() + static_cast<Eigen::Index>(r) * n;
      for (Eigen::Index k = 0; k < n; ++k) col[uniform_below(rng, static_cast<std::uint64_t>(n))] += 1.0F;
    });
    acc.setZero(rows, b);
    run_tasks(row_tasks, static_cast<double>(rows) * dn * static_cast<double>(b), [&](std::size_t t) {
      const Eigen::Index r0 = static_cast<Eigen::Index>(t) * block_rows;
      const Eigen::Index rb = std::min(block_rows, rows - r0);
      Eigen::MatrixXf features(rb, std::min(chunk, n));
      Eigen::MatrixXf product(rb, b);
      for (Eigen::Index k0 = 0; k0 < n; k0 += chunk) {
        const Eigen::Index kc = std::min(chunk, n - k0);
        for (Eigen::Index k = 0; k < kc; ++k) {
          const double* x = centred.data() + (k0 + k) * dim;
          float* f = features.data() + k * rb;
          for (Eigen::Index q = 0; q < rb; ++q) {
            const Eigen::Index row = r0 + q;
            if (row < tri) {
              const auto& ij = pairs[static_cast<std::size_t>(row)];
              f[q] = static_cast<float>(x[ij.first] * x[ij.second]);
            } else {
              f[q] = static_cast<float>(x[row - tri]);
            }
          }
        }
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rb), static_cast<int>(b),
                    static_cast<int>(kc), 1.0F, features.data(), static_cast<int>(rb), excess.data() + k0,
                    static_cast<int>(n), 0.0F, product.data(), static_cast<int>(rb));
        acc.middleRows(r0, rb) += product.cast<double>();
      }
    });
    for (Eigen::Index r = 0; r < b; ++r) {
      s.count = dn;  // a multinomial resample of n draws has n draws
      s.sum = total.sum + acc.block(tri, r, dim, 1);
      s.scatter = total.scatter;
      Eigen::Map<Eigen::MatrixXd> p(s.scatter.data(), dim, dim);
      for (Eigen::Index q = 0; q < tri; ++q) {
        const auto& ij = pairs[static_cast<std::size_t>(q)];
        p(ij.first, ij.second) += acc(q, r);
        if (ij.first != ij.second) p(ij.second, ij.first) += acc(q, r);
      }
      out.push_back(statistic(all.moments(s)));
    }
  }
  return out;
}

// ---- Woodbury and errors ------------------------------------------------------------------------

Eigen::MatrixXd woodbury_primal_covariance(const Eigen::VectorXd& node_variances, const Eigen::MatrixXd& cov_x_tilde) {
  check_node_variances("woodbury_primal_covariance", node_variances);
  const Eigen::Index n = node_variances.size();
  if (cov_x_tilde.rows() != n || cov_x_tilde.cols() != n)
    fail("woodbury_primal_covariance", "Cov(x~) is " + std::to_string(cov_x_tilde.rows()) + " x " +
                                           std::to_string(cov_x_tilde.cols()) + ", expected " + std::to_string(n) +
                                           " x " + std::to_string(n));
  check_finite_matrix("woodbury_primal_covariance", "Cov(x~)", cov_x_tilde);
  // [eq:cov_woodbury3] Cov(X) = D_s - D_s Cov(x~) D_s
  Eigen::MatrixXd out = -(node_variances.asDiagonal() * cov_x_tilde * node_variances.asDiagonal());
  out.diagonal() += node_variances;
  return out;
}

Eigen::VectorXd woodbury_primal_variances(const Eigen::VectorXd& node_variances, const Eigen::VectorXd& var_x_tilde) {
  check_node_variances("woodbury_primal_variances", node_variances);
  if (var_x_tilde.size() != node_variances.size())
    fail("woodbury_primal_variances", "Var(x~) has length " + std::to_string(var_x_tilde.size()) + ", expected " +
                                          std::to_string(node_variances.size()));
  check_finite_matrix("woodbury_primal_variances", "Var(x~)", var_x_tilde);
  // [eq:cov_woodbury5] Var(X_v) = s_v^2 - s_v^4 Var(x~_v)
  return node_variances - node_variances.cwiseProduct(node_variances).cwiseProduct(var_x_tilde);
}

Eigen::MatrixXd primal_covariance_estimate(Domain observed, const Eigen::VectorXd& node_variances,
                                           const SampleMoments& moments) {
  const bool full = moments.covariance.size() > 0;
  const Eigen::Index dim = moments.variance.size();
  if (dim == 0) fail("primal_covariance_estimate", "the moments are empty");
  if (node_variances.size() != dim || (full && (moments.covariance.rows() != dim || moments.covariance.cols() != dim)))
    fail("primal_covariance_estimate", "moments of dimension " + std::to_string(dim) + " (covariance " +
                                           std::to_string(moments.covariance.rows()) + " x " +
                                           std::to_string(moments.covariance.cols()) + ") for " +
                                           std::to_string(node_variances.size()) + " node variances");
  if (observed == Domain::Primal) return full ? moments.covariance : Eigen::MatrixXd(moments.variance);
  return full ? woodbury_primal_covariance(node_variances, moments.covariance)
              : Eigen::MatrixXd(woodbury_primal_variances(node_variances, moments.variance));
}

namespace {
void check_same_shape(const char* where, const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    fail(where, "shapes differ: " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " and " +
                    std::to_string(b.rows()) + " x " + std::to_string(b.cols()));
  check_finite_matrix(where, "the first matrix", a);
  check_finite_matrix(where, "the second matrix", b);
}
}  // namespace

double biased_error(const Eigen::MatrixXd& estimate, const Eigen::MatrixXd& target) {
  check_same_shape("biased_error", estimate, target);
  return (estimate - target).squaredNorm();
}

double unbiased_error(const Eigen::MatrixXd& half1, const Eigen::MatrixXd& half2, const Eigen::MatrixXd& target) {
  check_same_shape("unbiased_error", half1, target);
  check_same_shape("unbiased_error", half2, target);
  // [eq:unbiased_error] trace((S1 - S)^T (S2 - S)) = <S1 - S, S2 - S>_F
  return ((half1 - target).array() * (half2 - target).array()).sum();
}

// ---- CovarianceErrorTracker ---------------------------------------------------------------------

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
                                              const Eigen::Ref<const Eigen::MatrixXd>& states) {
  return observe(sweep, seconds, states, 0, static_cast<std::size_t>(states.cols()));
}

ErrorEstimate CovarianceErrorTracker::observe(std::size_t sweep, double seconds,
                                              const Eigen::Ref<const Eigen::MatrixXd>& states, std::size_t first,
                                              std::size_t chains) {
  return observe_batch({sweep}, {seconds}, {states}, first, chains).front();
}

std::vector<ErrorEstimate> CovarianceErrorTracker::observe_batch(
    const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>>& states, std::size_t first, std::size_t chains) {
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
  // The checkpoints go in chunks whose exchanged sums stay below glibc's largest mmap threshold (32 MiB): a larger
  // buffer is a fresh mapping, page-faulted anew at every call (fig6 over 2 ranks in batches of 27 checkpoints:
  // 360000 page faults and 1.2 s of system time per rank, against 0.3 s with per-checkpoint exchange).
  const std::size_t total_sets = states.size();
  ChainGroup* const group = current_chain_group();
  // A set's exchanged sums: a full scatter travels as its lower triangle (build_all). The chunks are of near-equal
  // size: every chunk is a few collectives, where the members wait for each other.
  const double d = static_cast<double>(dim);
  const double scatter = m_kind == MomentKind::Full ? d * (d + 1.0) / 2.0 : d;
  const double per_set = 8.0 * static_cast<double>(offsets.size() - 1) * (1.0 + d + scatter);
  const auto most = static_cast<std::size_t>(std::max(1.0, std::floor(static_cast<double>(24 << 20) / per_set)));
  const std::size_t chunks = (total_sets + most - 1) / most;
  std::size_t chunk = (total_sets + chunks - 1) / chunks;
  // Over a chain group, a multiple of the members where it can be: member_share() gives a chunk's remainder to the
  // first members, who would score one checkpoint more than the others in every chunk while the others wait.
  if (const std::size_t k = group ? static_cast<std::size_t>(group->size()) : 1; k > 1 && chunk % k != 0) {
    const std::size_t up = (chunk / k + 1) * k, down = chunk / k * k;
    chunk = up <= most ? up : down >= k ? down : chunk;
  }
  for (std::size_t c0 = 0; c0 < total_sets; c0 += chunk) {
    const std::size_t c1 = std::min(total_sets, c0 + chunk), sets = c1 - c0;
    const auto at = [c0](std::size_t b) { return static_cast<std::ptrdiff_t>(c0 + b); };
    const std::vector<Eigen::Ref<const Eigen::MatrixXd>> chunk_states(states.begin() + at(0),
                                                                      states.begin() + at(sets));
    const bool split = group && sets > 1;
    // One checkpoint: every member gets every group's sums and scores it. Several: each member gets every group's
    // sums of its share of the checkpoints only (GroupedMoments::batch_share).
    const std::vector<GroupedMoments> gms = split ? GroupedMoments::batch_share(chunk_states, first, offsets, m_kind)
                                                  : GroupedMoments::batch(chunk_states, first, offsets, m_kind);
    const std::vector<std::size_t> chunk_sweeps(sweeps.begin() + at(0), sweeps.begin() + at(sets));
    const std::vector<double> chunk_seconds(seconds.begin() + at(0), seconds.begin() + at(sets));
    std::vector<const GroupedMoments*> list;
    for (const GroupedMoments& gm : gms) list.push_back(&gm);
    if (!split) {
      score(chunk_sweeps, chunk_seconds, list);
    } else {
      // Rather than each member scoring every checkpoint (the halves' sums, the deviations, the jackknife's products:
      // the same work on every member), each scores its share of the checkpoints alone, exactly as one process (its
      // own jackknife replicates included), from the sums it alone received, and the estimates are gathered in
      // checkpoint order; the last checkpoint's estimate matrix comes from its scorer.
      static_assert(sizeof(ErrorEstimate) == sizeof(std::size_t) + 9 * sizeof(double),
                    "a new ErrorEstimate field must travel in the rows gathered below");
      constexpr std::size_t fields = 10;
      const std::size_t before = m_history.size();
      std::vector<double> packed(sets * fields);
      shared_items(sets, fields, packed.data(), [&](std::size_t lo, std::size_t hi) {
        if (hi - lo != list.size()) fail(where, "internal: the shares of checkpoints differ");
        if (lo == hi) return;
        const ScopedLocalWork own_checkpoints;  // no exchange inside: this member scores these checkpoints alone
        try {
          score({chunk_sweeps.begin() + static_cast<std::ptrdiff_t>(lo),
                 chunk_sweeps.begin() + static_cast<std::ptrdiff_t>(hi)},
                {chunk_seconds.begin() + static_cast<std::ptrdiff_t>(lo),
                 chunk_seconds.begin() + static_cast<std::ptrdiff_t>(hi)},
                list);  // list = checkpoints [lo, hi): batch_share's and shared_items' shares are the same
        } catch (...) {
          m_history.resize(before);  // the history stays the same on every member
          throw;
        }
        for (std::size_t b = lo; b < hi; ++b) {
          const ErrorEstimate& e = m_history[before + b - lo];
          const double row[fields] = {static_cast<double>(e.sweep),
                                      e.seconds,
                                      e.Eb,
                                      e.Eb_floor,
                                      e.Eb_se,
                                      e.Eu,
                                      e.Eu_se,
                                      e.mean_norm,
                                      e.mean_floor,
                                      e.max_abs_error};
          std::copy(row, row + fields, packed.data() + b * fields);
        }
        m_history.resize(before);
      });
      for (std::size_t b = 0; b < sets; ++b) {
        const double* q = packed.data() + b * fields;
        ErrorEstimate e;
        e.sweep = chunk_sweeps[b];  // q[0], exactly
        e.seconds = q[1];
        e.Eb = q[2];
        e.Eb_floor = q[3];
        e.Eb_se = q[4];
        e.Eu = q[5];
        e.Eu_se = q[6];
        e.mean_norm = q[7];
        e.mean_floor = q[8];
        e.max_abs_error = q[9];
        m_history.push_back(e);
      }
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
  }
  return {m_history.end() - static_cast<std::ptrdiff_t>(total_sets), m_history.end()};
}

ErrorEstimate CovarianceErrorTracker::observe(std::size_t sweep, double seconds, const GroupedMoments& gm) {
  score({sweep}, {seconds}, {&gm});
  return m_history.back();
}

void CovarianceErrorTracker::score(const std::vector<std::size_t>& sweeps, const std::vector<double>& seconds,
                                   const std::vector<const GroupedMoments*>& gms) {
  const Eigen::Index dim = m_node_variances.size();
  const std::size_t sets = gms.size();
  std::size_t g = 0;
  for (std::size_t b = 0; b < sets; ++b) {
    const GroupedMoments& gm = *gms[b];
    if (gm.kind() != m_kind || gm.dimension() != dim)
      fail("CovarianceErrorTracker::observe", "group sums of dimension " + std::to_string(gm.dimension()) + " (" +
                                                  to_string(gm.kind()) + "), expected " + std::to_string(dim) + " (" +
                                                  to_string(m_kind) + ")");
    if (!std::isfinite(seconds[b]))
      fail("CovarianceErrorTracker::observe", "seconds = " + number_text(seconds[b]) + " is not finite");
    const double count = gm.count();
    if (!(count >= 0) || count != std::floor(count) || count > 9e15)
      fail("CovarianceErrorTracker::observe", "group sums with count " + number_text(count));
    const std::vector<std::size_t> offsets = group_offsets(static_cast<std::size_t>(count));
    g = (offsets.size() - 1) / 2;
    bool matches = gm.num_groups() == 2 * g && (b == 0 || gm.count() == gms[0]->count());
    for (std::size_t j = 0; matches && j < 2 * g; ++j)
      matches = gm.group(j).count == static_cast<double>(offsets[j + 1] - offsets[j]);
    if (!matches)
      fail("CovarianceErrorTracker::observe",
           "the group sums are not cut at group_offsets(" + std::to_string(offsets.back()) + ") (" +
               std::to_string(gm.num_groups()) + " groups, expected " + std::to_string(2 * g) + ")");
  }

  // Without an exchange (one process, or a member scoring its own share of a batch) the checkpoints are scored one
  // at a time: each one's jackknife columns are then written in place and read back while in the cache, where a
  // batch's columns would all be written to one buffer first and copied back checkpoint by checkpoint. The same
  // numbers: a checkpoint's columns and products are its own. On an error the history is as before the call.
  if (sets > 1 && !current_chain_group()) {
    const std::size_t before = m_history.size();
    try {
      for (std::size_t b = 0; b < sets; ++b) score({sweeps[b]}, {seconds[b]}, {gms[b]});
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
  shared_items(2 * g, sets * unit, jack, [&](std::size_t lo, std::size_t hi) {
    Eigen::VectorXd scratch;
    m_jb.resize(D, 1);  // the pooled replicates are only needed through their norms
    for (std::size_t j = lo; j < hi; ++j)
      for (std::size_t b = 0; b < sets; ++b) {
        const GroupedMoments& gm = *gms[b];
        double* q = jack + (j * sets + b) * unit;
        deviation_into(m_kind, m_domain, j < g ? hv[b].h1 : hv[b].h2, &gm.group(j), m_node_variances, m_target, scratch,
                       q);
        deviation_into(m_kind, m_domain, gm.total(), &gm.group(j), m_node_variances, m_target, scratch, m_jb.data());
        q[D] = m_jb.squaredNorm();
      }
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
    auto j1 = m_jack.topLeftCorner(D, gi);
    auto j2 = m_jack.block(0, gi, D, gi);
    const Eigen::VectorXd thb = m_jack.row(D).transpose();
    j1.colwise() -= column_mean(j1, 0, gi);
    j2.colwise() -= column_mean(j2, 0, gi);
    const double f = (static_cast<double>(g) - 1.0) / static_cast<double>(g);
    const double v1 = f * (j1.transpose() * h.d2).squaredNorm();
    const double v2 = f * (j2.transpose() * h.d1).squaredNorm();
    const double t12 = f * f * (j1.transpose() * j2).squaredNorm();
    e.Eu_se = std::sqrt(std::max(v1 + v2 - t12, t12));
    const double fb = (2.0 * static_cast<double>(g) - 1.0) / (2.0 * static_cast<double>(g));
    const double vb = fb * (thb.array() - thb.mean()).square().sum();
    e.Eb_se = std::sqrt(std::max(vb - 0.5 * t12, 0.5 * t12));

    const Eigen::VectorXd m1 = h.h1.sum / h.h1.count, m2 = h.h2.sum / h.h2.count;  // means minus the common centre
    e.mean_norm = (gm.center() + all.sum / all.count).norm();
    e.mean_floor = 0.5 * (m1 - m2).norm();
    m_history.push_back(e);
  }
}

// ---- normalisation and rate fits ----------------------------------------------------------------

std::vector<double> normalise_to_first(const std::vector<double>& values) {
  std::vector<double> out(values.size(), kNaN);
  if (values.empty()) return out;
  const double ref = values.front();
  if (ref == 0 || !std::isfinite(ref)) return out;
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i] / ref;
  return out;
}

LineFit theil_sen(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    fail("theil_sen", "x has " + std::to_string(x.size()) + " points, y has " + std::to_string(y.size()));
  if (x.size() < 2) fail("theil_sen", "need at least 2 points, got " + std::to_string(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      fail("theil_sen", "point " + std::to_string(i) + " is not finite");
  std::vector<double> slopes;
  slopes.reserve(x.size() * (x.size() - 1) / 2);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j)
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
  if (slopes.empty()) fail("theil_sen", "all x are equal");
  LineFit fit;
  fit.slope = median_in_place(slopes);
  std::vector<double> icpt(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) icpt[i] = y[i] - fit.slope * x[i];
  fit.intercept = median_in_place(icpt);
  return fit;
}

RateFit fit_decay_rate(const std::vector<double>& sweeps, const std::vector<double>& values,
                       const std::vector<double>& noise, const RateFitOptions& options) {
  if (sweeps.size() != values.size())
    fail("fit_decay_rate",
         "got " + std::to_string(sweeps.size()) + " sweeps and " + std::to_string(values.size()) + " values");
  if (!noise.empty() && noise.size() != values.size())
    fail("fit_decay_rate",
         "got " + std::to_string(noise.size()) + " noise levels for " + std::to_string(values.size()) + " values");
  if (!(options.exponent > 0) || !std::isfinite(options.exponent))
    fail("fit_decay_rate", "exponent must be positive, got " + number_text(options.exponent));
  if (!(options.tail_fraction > 0 && options.tail_fraction <= 1))
    fail("fit_decay_rate", "tail_fraction must be in (0, 1], got " + number_text(options.tail_fraction));
  if (!(options.snr >= 0) || !std::isfinite(options.snr))
    fail("fit_decay_rate", "snr must be finite and non-negative, got " + number_text(options.snr));
  if (std::isnan(options.first_sweep)) fail("fit_decay_rate", "first_sweep is NaN");
  for (std::size_t k = 0; k < sweeps.size(); ++k)
    if (!std::isfinite(sweeps[k]))
      fail("fit_decay_rate", "sweep " + std::to_string(k) + " is " + number_text(sweeps[k]));
  for (std::size_t k = 0; k < noise.size(); ++k)
    if (!(noise[k] >= 0))
      fail("fit_decay_rate",
           "noise level " + std::to_string(k) + " = " + number_text(noise[k]) + " must be non-negative");
  RateFit fit;
  const std::size_t n = values.size();
  // Noise level: given per point, or estimated from the tail (median |value| of the last fifth, >= 3 points).
  std::vector<double> level(n, 0.0);
  if (!noise.empty()) {
    level = noise;
  } else if (n > 0) {
    const std::size_t tail = std::min(n, std::max<std::size_t>(3, n / 5));
    std::vector<double> t;
    for (std::size_t i = n - tail; i < n; ++i) t.push_back(std::abs(values[i]));
    std::fill(level.begin(), level.end(), median_in_place(t));
  }
  std::size_t start = 0;
  while (start < n && !(sweeps[start] >= options.first_sweep)) ++start;
  std::vector<double> x, y;
  std::size_t i = start;
  for (; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v) || v <= 0 || v <= options.snr * level[i]) break;
    x.push_back(sweeps[i]);
    y.push_back(std::log(v));
  }
  if (x.size() < std::max<std::size_t>(2, options.min_points)) {
    std::ostringstream os;
    os << "only " << x.size() << " point(s) above " << options.snr << " x noise from sweep " << options.first_sweep;
    fit.note = os.str();
    return fit;
  }
  if (options.tail_fraction < 1) {
    const auto keep = std::max<std::size_t>(
        std::max<std::size_t>(2, options.min_points),
        static_cast<std::size_t>(std::ceil(options.tail_fraction * static_cast<double>(x.size()))));
    if (keep < x.size()) {
      x.erase(x.begin(), x.end() - static_cast<std::ptrdiff_t>(keep));
      y.erase(y.begin(), y.end() - static_cast<std::ptrdiff_t>(keep));
    }
  }
  const LineFit line = theil_sen(x, y);
  fit.neg_log_rate = -line.slope / options.exponent;
  fit.rate = std::exp(-fit.neg_log_rate);
  fit.first_sweep = x.front();
  fit.last_sweep = x.back();
  fit.points = x.size();
  return fit;
}

}  // namespace dualgibbs
