#pragma once
// Private: one number per member of a chain group, agreed by all members (the run totals of an ensemble: the slowest
// member's wall time, the sum of the members' CPU time).
#include <dualgibbs/core/chain_group.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dualgibbs::detail {

/// Every member's value, gathered in rank order (collective).
inline std::vector<double> gathered(ChainGroup& group, double mine) {
  std::vector<double> all(static_cast<std::size_t>(group.size()));
  all[static_cast<std::size_t>(group.rank())] = mine;
  group.all_gather(&all[static_cast<std::size_t>(group.rank())], all.data(), std::vector<std::size_t>(all.size(), 1),
                   1);
  return all;
}

/// The largest member's value (collective).
inline double agreed_max(ChainGroup& group, double mine) {
  const std::vector<double> all = gathered(group, mine);
  return *std::max_element(all.begin(), all.end());
}

/// The members' values summed in rank order (collective).
inline double agreed_sum(ChainGroup& group, double mine) {
  double sum = 0.0;
  for (double v : gathered(group, mine)) sum += v;  // rank order
  return sum;
}

}  // namespace dualgibbs::detail
