// ChainGroup: the error settlement shared by every transport, member shares, shared items.
#include <dualgibbs/core/chain_group.hpp>

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

// Codes carried by broadcast(): what the failed member threw.
constexpr int kInvalidArgument = 2;
constexpr int kFailure = 1;

}  // namespace

ChainGroup::~ChainGroup() = default;

void ChainGroup::settle(const std::exception_ptr& error) {
  m_unwinding = false;
  const int failed = lowest_failure(error != nullptr);
  if (failed >= size()) return;
  int code = kFailure;
  std::string text;
  if (failed == rank()) {
    try {
      std::rethrow_exception(error);
    } catch (const std::invalid_argument& e) {
      code = kInvalidArgument;
      text = e.what();
    } catch (const std::bad_alloc&) {
      text = "out of memory (the problem is too large for this machine)";
    } catch (const std::exception& e) {
      text = e.what();
    } catch (...) {
      text = "an unknown exception";
    }
  }
  broadcast(failed, code, text);
  m_unwinding = true;
  if (error) std::rethrow_exception(error);
  const std::string message = text + " (on rank " + std::to_string(failed) + ")";
  if (code == kInvalidArgument) throw std::invalid_argument(message);
  throw std::runtime_error(message);
}

void ChainGroup::all_gather(const double* mine, double* all, const std::vector<std::size_t>& counts, std::size_t unit) {
  all_gather(nullptr, mine, all, counts, unit);
}

void ChainGroup::all_gather(const std::exception_ptr& error, const double* mine, double* all,
                            const std::vector<std::size_t>& counts, std::size_t unit) {
  if (counts.size() != static_cast<std::size_t>(size()))
    throw std::invalid_argument("ChainGroup::all_gather: " + std::to_string(counts.size()) + " counts for " +
                                std::to_string(size()) + " members");
  settle(error);
  gather_items(mine, all, counts, unit);
}

void ChainGroup::all_to_all(const std::exception_ptr& error, const double* send, double* recv,
                            const std::vector<std::size_t>& counts, std::size_t unit) {
  const auto k = static_cast<std::size_t>(size());
  if (counts.size() != k * k)
    throw std::invalid_argument("ChainGroup::all_to_all: " + std::to_string(counts.size()) + " counts for " +
                                std::to_string(k) + " x " + std::to_string(k) + " members");
  settle(error);
  exchange_items(send, recv, counts, unit);
}

void ChainGroup::exchange_items(const double* send, double* recv, const std::vector<std::size_t>& counts,
                                std::size_t unit) {
  const auto k = static_cast<std::size_t>(size()), me = static_cast<std::size_t>(rank());
  // Every member's whole send buffer (row r of counts) to every member, in rank order.
  std::vector<std::size_t> rows(k, 0);
  for (std::size_t r = 0; r < k; ++r)
    for (std::size_t s = 0; s < k; ++s) rows[r] += counts[r * k + s];
  std::size_t total = 0;
  for (std::size_t r = 0; r < k; ++r) total += rows[r];
  std::vector<double> all(total * unit);
  gather_items(send, all.data(), rows, unit);
  // Keep the block each member sent here: in member r's buffer, after its blocks for members 0 .. me - 1.
  std::size_t row_start = 0, out = 0;
  for (std::size_t r = 0; r < k; ++r) {
    std::size_t at = row_start;
    for (std::size_t s = 0; s < me; ++s) at += counts[r * k + s];
    const std::size_t n = counts[r * k + me];
    std::copy(all.begin() + static_cast<std::ptrdiff_t>(at * unit),
              all.begin() + static_cast<std::ptrdiff_t>((at + n) * unit), recv + out * unit);
    out += n;
    row_start += rows[r];
  }
}

void ChainGroup::set_halo_neighbors(const std::vector<int>& neighbors) {
  for (std::size_t j = 0; j < neighbors.size(); ++j) {
    const int r = neighbors[j];
    if (r < 0 || r >= size() || r == rank() || (j > 0 && r <= neighbors[j - 1]))
      throw std::invalid_argument("ChainGroup::set_halo_neighbors: neighbour " + std::to_string(r) + " of member " +
                                  std::to_string(rank()) + " of " + std::to_string(size()) +
                                  " (expected other members in increasing order)");
  }
  m_halo = neighbors;
  declare_halo(m_halo);
}

void ChainGroup::declare_halo(const std::vector<int>&) {}

void ChainGroup::halo_exchange(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                               const std::vector<std::size_t>& recv_counts, std::size_t unit) {
  if (send_counts.size() != m_halo.size() || recv_counts.size() != m_halo.size())
    throw std::invalid_argument("ChainGroup::halo_exchange: " + std::to_string(send_counts.size()) + " send and " +
                                std::to_string(recv_counts.size()) + " receive counts for " +
                                std::to_string(m_halo.size()) + " neighbours");
  exchange_halo(send, send_counts, recv, recv_counts, unit);
}

void ChainGroup::exchange_halo(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                               const std::vector<std::size_t>& recv_counts, std::size_t unit) {
  // Every member's row of the count matrix, then the whole-group exchange: the neighbours' blocks are in
  // increasing rank order on both sides, as exchange_items() orders them.
  const auto k = static_cast<std::size_t>(size()), me = static_cast<std::size_t>(rank());
  std::vector<double> row(k, 0.0), matrix(k * k, 0.0);
  for (std::size_t j = 0; j < m_halo.size(); ++j)
    row[static_cast<std::size_t>(m_halo[j])] = static_cast<double>(send_counts[j]);
  gather_items(row.data(), matrix.data(), std::vector<std::size_t>(k, 1), k);
  std::vector<std::size_t> counts(k * k);
  for (std::size_t i = 0; i < k * k; ++i) counts[i] = static_cast<std::size_t>(matrix[i]);
  for (std::size_t j = 0; j < m_halo.size(); ++j)
    if (counts[static_cast<std::size_t>(m_halo[j]) * k + me] != recv_counts[j])
      throw std::invalid_argument("ChainGroup::halo_exchange: member " + std::to_string(m_halo[j]) + " sends " +
                                  std::to_string(counts[static_cast<std::size_t>(m_halo[j]) * k + me]) +
                                  " items to member " + std::to_string(me) + ", which expects " +
                                  std::to_string(recv_counts[j]));
  exchange_items(send, recv, counts, unit);
}

void ChainGroup::run(const std::function<void()>& work) {
  std::exception_ptr error;
  m_unwinding = false;
  try {
    work();
  } catch (...) {
    if (m_unwinding) throw;  // settled by a collective inside `work`
    error = std::current_exception();
  }
  settle(error);
}

std::pair<std::size_t, std::size_t> member_share(std::size_t count, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("member_share: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                " members");
  const auto k = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
  const std::size_t base = count / k, extra = count % k;
  const std::size_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

void shared_items(ChainGroup* group, std::size_t count, std::size_t unit, double* out,
                  const std::function<void(std::size_t first, std::size_t last)>& compute) {
  if (!group || group->size() < 2) {
    compute(0, count);
    return;
  }
  const auto [first, last] = member_share(count, group->rank(), group->size());
  group->clear_settled();
  std::exception_ptr error;
  try {
    compute(first, last);
  } catch (...) {
    if (group->failure_settled()) throw;  // settled by a collective inside `compute`
    error = std::current_exception();
  }
  std::vector<std::size_t> counts(static_cast<std::size_t>(group->size()));
  for (int r = 0; r < group->size(); ++r) {
    const auto [f, l] = member_share(count, r, group->size());
    counts[static_cast<std::size_t>(r)] = l - f;
  }
  group->all_gather(error, out + first * unit, out, counts, unit);
}

}  // namespace dualgibbs
