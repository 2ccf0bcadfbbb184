#pragma once
/// \file number_text.hpp
/// The one number-to-text helper of the library and the command: error messages, parameter records and
/// printed tables all write a double through it.
///
/// \code
/// dualgibbs::number_text(0.1);         // "0.1" (the shortest text that reads back as 0.1)
/// dualgibbs::number_text(1.0 / 3, 4);  // "0.3333" (%.4g)
/// \endcode

#include <charconv>
#include <cstdio>
#include <string>

namespace dualgibbs {

/// Text of x: with `significant_digits` = 0 the shortest text that reads back as x exactly ("0.1", not
/// "0.10000000000000001"); otherwise printf's `%.Ng` with N = significant_digits (what an ostream with
/// setprecision(N) writes). NaN and infinities are written "nan", "inf", "-inf" (or "-nan").
/// \param x the number
/// \param significant_digits 0 for the shortest exact text, else the digits of `%.Ng`
/// \return the text
inline std::string number_text(double x, int significant_digits = 0) {
  char buf[64];
  if (significant_digits <= 0) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
  }
  const int n = std::snprintf(buf, sizeof buf, "%.*g", significant_digits > 40 ? 40 : significant_digits, x);
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace dualgibbs
