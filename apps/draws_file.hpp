#pragma once
// Reading a sampler's draws for `dualgibbs validate`: the CSV and binary files `dualgibbs sample` writes (with or
// without the sweep/chain columns) and NumPy .npy arrays (float64 or float32, either byte order, C or Fortran
// order; shape draws x coordinates or checkpoints x draws x coordinates). Every header is parsed and checked, sizes
// are checked against the file's length before anything is allocated, and nothing is read past the end of the
// file. Bad input is std::invalid_argument naming the file and the problem.

#include <dualgibbs/estimation/validate.hpp>

#include <string>

namespace dualgibbs::cli {

/// How the draws of a file are grouped.
enum class DrawLayout {
  Auto,         ///< chain ids known (sample files): independent per checkpoint if there are >= 6 chains, else each
                ///< chain's successive checkpoints pooled as one chain; no chain ids (plain CSV, 2-D .npy): one chain
  Independent,  ///< every checkpoint's draws are independent (one per chain)
  Chain         ///< draws are successive states: each chain's draws (in file order) form one sequential chain
};

/// "auto" | "independent" | "chain". \throws std::invalid_argument otherwise.
DrawLayout parse_draw_layout(const std::string& name);

/// What was read.
struct LoadedDraws {
  Draws draws;           ///< kind is left at its default: the caller sets it
  std::string format;    ///< "csv", "binary" or "npy"
  std::string layout;    ///< how the draws were grouped, in words (for the report)
  std::size_t rows = 0;  ///< draws read in all
  Eigen::Index dimension = 0;
};

/// Reads FILE (format from the content: the binary magic, the .npy magic, else CSV).
/// \throws std::invalid_argument for an unreadable, malformed or truncated file, an unsupported dtype, a
/// non-finite value (naming where), or a layout that does not fit the file.
LoadedDraws read_draws_file(const std::string& path, DrawLayout layout);

}  // namespace dualgibbs::cli
