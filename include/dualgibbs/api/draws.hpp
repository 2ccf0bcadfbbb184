#pragma once
/// \file draws.hpp
/// The draws file formats: writing the states of a sampler's chains (DrawsSink, CsvDrawsWriter,
/// BinaryDrawsWriter) and reading them back for validation (open_draws_file(), DrawsFile).
///
/// CSV: a header `sweep,chain,c0,c1,...` and one row per chain and written checkpoint, values with 17 significant
/// digits (they read back to the same doubles).
/// Binary (little-endian): "DGSAMPL1" (8 bytes), then uint64 dim, uint64 chains, uint64 checkpoints; then per
/// checkpoint uint64 sweep followed by chains x dim float64, chain after chain.
///
/// The reader takes the CSV and binary files the writers produce (with or without the sweep/chain columns) and NumPy
/// .npy arrays (float64 or float32, either byte order, C or Fortran order; shape draws x coordinates or checkpoints x
/// draws x coordinates). Every header is parsed and checked, sizes are checked against the file's length before
/// anything is allocated, and nothing is read past the end of the file. Bad input is std::invalid_argument naming
/// the file and the problem.
///
/// The binary files and .npy arrays (but 3-D Fortran order) are streamed: open_draws_file() reads the headers only,
/// and DrawsFile::read() reads the rows the validation asks for, block by block, so that files larger than memory
/// validate in one pass (a non-finite value is reported when its block is read). CSV files and 3-D Fortran-order
/// arrays are read whole into memory when opened.

#include <dualgibbs/estimation/validate.hpp>
#include <dualgibbs/export.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace dualgibbs::api {

// ---- writing ---------------------------------------------------------------------------------------------------

/// Where a sampling run's draws go: told the shape first, then given every written checkpoint in order. Called once
/// per checkpoint (never per update), from the thread that observes the ensemble.
class DUALGIBBS_EXPORT DrawsSink {
 public:
  virtual ~DrawsSink() = default;
  /// Before the run: every checkpoint will be `dim` x `chains`, and there will be `checkpoints` of them.
  /// \param dim coordinates per state
  /// \param chains chains (columns of every checkpoint)
  /// \param checkpoints checkpoints that will be written
  virtual void begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) = 0;
  /// One checkpoint: the chains' states after `sweep` sweeps, dim x chains (column c = chain c), all finite.
  /// \param sweep completed sweeps
  /// \param states the states, one column per chain
  virtual void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) = 0;
  /// After the last checkpoint (the run succeeded).
  virtual void end() {}
};

/// The CSV format (see the file comment) on a stream the caller owns and checks.
class DUALGIBBS_EXPORT CsvDrawsWriter final : public DrawsSink {
 public:
  /// Writes to `out` (which must outlive the writer).
  /// \param out the destination stream
  explicit CsvDrawsWriter(std::ostream& out) : m_out(out) {}
  /// Sets 17 significant digits; the header follows with the first checkpoint.
  /// \param dim coordinates per state
  /// \param chains chains (columns of every checkpoint)
  /// \param checkpoints checkpoints that will be written
  void begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) override;
  /// The header (first checkpoint only), then one row per chain.
  /// \param sweep completed sweeps
  /// \param states the states, one column per chain
  void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) override;

 private:
  std::ostream& m_out;
  bool m_header = false;
};

/// The binary format (see the file comment) on a stream the caller owns and checks. The header comes first, so the
/// counts are known before the run: no seeking back (the destination may be a pipe).
class DUALGIBBS_EXPORT BinaryDrawsWriter final : public DrawsSink {
 public:
  /// Writes to `out` (which must outlive the writer).
  /// \param out the destination stream
  explicit BinaryDrawsWriter(std::ostream& out) : m_out(out) {}
  /// "DGSAMPL1", dim, chains, checkpoints.
  /// \param dim coordinates per state
  /// \param chains chains (columns of every checkpoint)
  /// \param checkpoints checkpoints that will be written
  void begin(Eigen::Index dim, std::size_t chains, std::uint64_t checkpoints) override;
  /// The sweep, then chains x dim float64, chain after chain.
  /// \param sweep completed sweeps
  /// \param states the states, one column per chain
  void write(std::uint64_t sweep, const Eigen::Ref<const Eigen::MatrixXd>& states) override;

 private:
  std::ostream& m_out;
};

// ---- reading ---------------------------------------------------------------------------------------------------

/// How the draws of a file are grouped.
enum class DrawLayout {
  Auto,         ///< chain ids known (sample files): independent per checkpoint if there are >= 6 chains, else each
                ///< chain's successive checkpoints pooled as one chain; no chain ids (plain CSV, 2-D .npy): one chain
  Independent,  ///< every checkpoint's draws are independent (one per chain)
  Chain         ///< draws are successive states: each chain's draws (in file order) form one sequential chain
};

/// "auto" | "independent" | "chain".
/// \param name the layout's name
/// \return the layout
/// \throws std::invalid_argument otherwise.
DUALGIBBS_EXPORT DrawLayout parse_draw_layout(const std::string& name);

/// One checkpoint to validate: the file's rows that form it, in order, and how they are grouped.
struct PlannedCheckpoint {
  double sweep = 0;                        ///< the checkpoint's sweep (NaN if unknown)
  std::vector<std::size_t> rows;           ///< file rows (draws) in the order they are fed
  std::vector<std::size_t> chain_offsets;  ///< as DrawCheckpoint::chain_offsets (empty: independent draws)
};

/// An opened draws file: its shape, and its rows on demand.
class DUALGIBBS_EXPORT DrawsFile {
 public:
  std::string format;          ///< "csv", "binary" or "npy"
  std::size_t rows = 0;        ///< draws in the file
  Eigen::Index dimension = 0;  ///< coordinates per draw

  /// The checkpoints for a layout.
  /// \param layout how the rows are grouped
  /// \param description receives the layout in words (for the report)
  /// \return the checkpoints, in file order
  std::vector<PlannedCheckpoint> plan(DrawLayout layout, std::string& description) const;
  /// Reads rows[0 .. count) into out (dimension x count), one draw per column.
  /// \param rows the file rows to read
  /// \param count how many
  /// \param out receives the draws
  /// \throws std::invalid_argument for a read error or a non-finite value (naming where it is in the file).
  void read(const std::size_t* rows, std::size_t count, Eigen::MatrixXd& out);

  DrawsFile();
  ~DrawsFile();
  DrawsFile(DrawsFile&&) noexcept;             ///< moves the open file
  DrawsFile& operator=(DrawsFile&&) noexcept;  ///< moves the open file \return this file
  struct State;                                ///< the file's layout and its open stream (draws.cpp)
  std::unique_ptr<State> state;                ///< set by open_draws_file()
};

/// Opens a draws file (format from the content: the binary magic, the .npy magic, else CSV) and checks its header.
/// \param path the file
/// \return the opened file, its header checked
/// \throws std::invalid_argument for an unreadable, malformed or truncated file or an unsupported dtype.
DUALGIBBS_EXPORT DrawsFile open_draws_file(const std::string& path);

}  // namespace dualgibbs::api
