#pragma once
// BallNumbering: graph node -> local number within one ball, emptied in O(1) (private header of the flows).

#include <dualgibbs/core/index.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dualgibbs::detail {

/// The local numbers of the sites of one ball (0, 1, 2, ... in the order they join), for balls taken one after
/// another on the same graph. Each node's entry holds stamp + its local number, where the stamp of a ball follows the
/// numbers of the ball before it: a node of the current ball has an entry in [stamp, stamp + size), every other node
/// a smaller one, so `find` tells them apart with one subtraction and a ball is emptied by advancing the stamp
/// instead of clearing its entries (on an expander a ball's sites are scattered over the graph, and clearing them
/// was a random write per site). Before a stamp could come within 2 (nodes + 1) of `limit`, where a stale entry's
/// difference would no longer exceed every local number, every entry is cleared and the stamps start again (once in
/// limit / (mean ball size) balls). `limit` is 2^32 - 1 but in tests of the restart.
class BallNumbering {
 public:
  explicit BallNumbering(std::size_t nodes, std::uint64_t limit = 0xffffffffu)
      : m_entry(nodes, 0u), m_limit(std::min<std::uint64_t>(limit, 0xffffffffu)) {}

  /// x's local number when x is in the current ball, else a value >= any local number the ball can reach
  /// (its size is at most the number of nodes).
  std::uint32_t find(Index x) const noexcept { return m_entry[static_cast<std::size_t>(x)] - m_stamp; }
  /// Makes x the site with local number `local` of the current ball.
  void set(Index x, std::uint32_t local) noexcept { m_entry[static_cast<std::size_t>(x)] = m_stamp + local; }
  /// Ends the current ball, which had `size` sites: the next ball starts empty.
  void next(std::size_t size) {
    m_stamp += static_cast<std::uint32_t>(size);
    const auto reach = 2 * (static_cast<std::uint64_t>(m_entry.size()) + 1);
    if (static_cast<std::uint64_t>(m_stamp) + reach >= m_limit) {
      std::fill(m_entry.begin(), m_entry.end(), 0u);
      m_stamp = 1;
      ++m_restarts;
    }
  }
  /// The entries (for prefetching x's entry ahead of find(x)).
  const std::uint32_t* data() const noexcept { return m_entry.data(); }
  /// Restarts of the stamps since construction.
  std::size_t restarts() const noexcept { return m_restarts; }

 private:
  std::vector<std::uint32_t> m_entry;
  std::uint64_t m_limit;
  std::uint32_t m_stamp = 1;
  std::size_t m_restarts = 0;
};

}  // namespace dualgibbs::detail
