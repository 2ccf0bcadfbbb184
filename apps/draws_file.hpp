#pragma once
// Reading a sampler's draws for `dualgibbs validate`: the CSV and binary files `dualgibbs sample` writes (with or
// without the sweep/chain columns) and NumPy .npy arrays (float64 or float32, either byte order, C or Fortran
// order; shape draws x coordinates or checkpoints x draws x coordinates). Every header is parsed and checked, sizes
// are checked against the file's length before anything is allocated, and nothing is read past the end of the
// file. Bad input is std::invalid_argument naming the file and the problem.
//
// The binary files and .npy arrays (but 3-D Fortran order) are streamed: open_draws_file() reads the headers only,
// and DrawsFile::read() reads the rows the validation asks for, block by block, so that files larger than memory
// validate in one pass (a non-finite value is reported when its block is read). CSV files and 3-D Fortran-order
// arrays are read whole into memory when opened.

#include <dualgibbs/estimation/validate.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

/// One checkpoint to validate: the file's rows that form it, in order, and how they are grouped.
struct PlannedCheckpoint {
  double sweep = 0;                        ///< the checkpoint's sweep (NaN if unknown)
  std::vector<std::size_t> rows;           ///< file rows (draws) in the order they are fed
  std::vector<std::size_t> chain_offsets;  ///< as DrawCheckpoint::chain_offsets (empty: independent draws)
};

/// An opened draws file: its shape, and its rows on demand.
class DrawsFile {
 public:
  std::string format;          ///< "csv", "binary" or "npy"
  std::size_t rows = 0;        ///< draws in the file
  Eigen::Index dimension = 0;  ///< coordinates per draw

  /// The checkpoints for a layout, and the layout in words (for the report).
  std::vector<PlannedCheckpoint> plan(DrawLayout layout, std::string& description) const;
  /// Reads rows[0 .. count) into out (dimension x count), one draw per column.
  /// \throws std::invalid_argument for a read error or a non-finite value (naming where it is in the file).
  void read(const std::size_t* rows, std::size_t count, Eigen::MatrixXd& out);

  DrawsFile();
  ~DrawsFile();
  DrawsFile(DrawsFile&&) noexcept;             ///< moves the open file
  DrawsFile& operator=(DrawsFile&&) noexcept;  ///< moves the open file
  struct State;                                ///< the file's layout and its open stream (draws_file.cpp)
  std::unique_ptr<State> state;                ///< set by open_draws_file()
};

/// Opens FILE (format from the content: the binary magic, the .npy magic, else CSV) and checks its header.
/// \throws std::invalid_argument for an unreadable, malformed or truncated file or an unsupported dtype.
DrawsFile open_draws_file(const std::string& path);

}  // namespace dualgibbs::cli
