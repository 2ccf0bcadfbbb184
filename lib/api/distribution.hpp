#pragma once
// How a use case's group of processes shares the work: the names "chains" / "graph" and "ranges" / "metis" that
// sample, converge and marginals take.
#include <stdexcept>
#include <string>

namespace dualgibbs::api::detail {

/// \throws std::invalid_argument naming `command` unless distribute is "chains" or "graph" and partition "ranges" or
/// "metis".
inline void check_distribution(const std::string& command, const std::string& distribute,
                               const std::string& partition) {
  if (distribute != "chains" && distribute != "graph")
    throw std::invalid_argument(command + ": unknown --distribute '" + distribute + "' (expected 'chains' or 'graph')");
  if (partition != "ranges" && partition != "metis")
    throw std::invalid_argument(command + ": unknown --partition '" + partition + "' (expected 'ranges' or 'metis')");
}

}  // namespace dualgibbs::api::detail
