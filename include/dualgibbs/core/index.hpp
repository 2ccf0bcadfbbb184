#pragma once
/// \file index.hpp
/// The integer type of node, edge and coordinate ids, shared by every layer.

#include <cstdint>

namespace dualgibbs {

/// Node and edge ids. 32-bit: a graph whose node count, edge count or adjacency size does not fit is
/// rejected with std::invalid_argument rather than silently wrapped.
using Index = std::int32_t;

}  // namespace dualgibbs
