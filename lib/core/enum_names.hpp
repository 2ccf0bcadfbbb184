#pragma once
// Private: the names of the library's enum choices, one table per enum, behind every parse_X / to_string(X)
// pair, so that the accepted names, the printed names and the error message come from one list.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace dualgibbs::detail {

/// One entry of a name table.
template <class E>
struct EnumName {
  E value;
  const char* name;
};

/// The value called `name` in `table`. \throws std::invalid_argument "unknown WHAT 'name' (expected 'a', 'b' or
/// 'c')".
template <class E, std::size_t N>
E parse_enum(const EnumName<E> (&table)[N], const std::string& name, const char* what) {
  for (const EnumName<E>& e : table)
    if (name == e.name) return e.value;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i)
    expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + "'" + table[i].name + "'";
  throw std::invalid_argument(std::string("unknown ") + what + " '" + name + "' (expected " + expected + ")");
}

/// The name of `value` in `table`, "unknown" if it has none.
template <class E, std::size_t N>
const char* enum_name(const EnumName<E> (&table)[N], E value) noexcept {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.name;
  return "unknown";
}

}  // namespace dualgibbs::detail
