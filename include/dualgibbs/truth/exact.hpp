#pragma once
/// \file exact.hpp
/// Exact inference: sparse Cholesky factorization (CHOLMOD, supernodal LL^T with a fill-reducing ordering),
/// log-determinants, solves, exact independent samples, full covariances for small graphs, marginal
/// variances for large graphs by selected inversion, and the paper's closed forms (torus marginal variance
/// [eq:torus_true_var], entropy bounds of appendix B).
///
/// CHOLMOD is private to the library: this header does not include cholmod.h.
///
/// \code
/// dualgibbs::Model m(dualgibbs::make_torus(100, 100), 1.0, 0.25);
/// dualgibbs::CholeskyFactor f(m.primal_precision());
/// Eigen::VectorXd var = f.marginal_variances();           // diag(Q^-1), all 10^4 nodes
/// // every var[v] equals dualgibbs::torus_marginal_variance(100, 100, 1.0, 0.25) (closed_forms.hpp)
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace dualgibbs {

/// Thrown when a matrix handed to CholeskyFactor is not (numerically) positive definite.
/// column() is the column of the input matrix (original numbering, not the fill-reducing ordering)
/// at which the factorization broke down.
class DUALGIBBS_EXPORT NotPositiveDefinite : public std::runtime_error {
 public:
  /// `column` is -1 when CHOLMOD reported the failure without a column.
  /// \param what the message
  /// \param column the failing column, or -1
  NotPositiveDefinite(const std::string& what, Index column) : std::runtime_error(what), m_column(column) {}
  /// The column (original numbering) at which the factorization broke down, or -1.
  /// \return the column, or -1
  Index column() const noexcept { return m_column; }

 private:
  Index m_column;
};

/// Thrown when CHOLMOD fails for a reason other than a non-positive-definite matrix (out of memory,
/// problem too large for its integer type, ...). The message carries CHOLMOD's status.
class DUALGIBBS_EXPORT FactorizationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Fill-reducing orderings CHOLMOD can use; Amd is the default.
/// Why AMD (measurements of every ordering): docs/exact.md, section 2, "Ordering".
enum class Ordering {
  Amd,     ///< approximate minimum degree (fastest to compute; the default)
  Auto,    ///< CHOLMOD's default strategy (nmethods = 0): AMD, and METIS as well when AMD's factor is
           ///< expensive (flops / nnz(L) >= 500 and nnz(L) / nnz(triu(M)) >= 5), keeping the smaller factor
  Metis,   ///< METIS nested dissection
  Nesdis,  ///< CHOLMOD's nested dissection (METIS with constrained minimum degree on the separators)
  Natural  ///< no reordering (for tests)
};

/// "auto" | "amd" | "metis" | "nesdis" | "natural". \throws std::invalid_argument otherwise.
/// \param name the ordering's name
/// \return the ordering
DUALGIBBS_EXPORT Ordering parse_ordering(const std::string& name);
/// The name parse_ordering() accepts for `o`.
/// \param o the ordering
/// \return its name
DUALGIBBS_EXPORT const char* to_string(Ordering o) noexcept;

/// What a factorization cost, for benchmarks and reports.
struct FactorStats {
  double analyze_seconds = 0;             ///< symbolic analysis (ordering, elimination tree, supernodes)
  double factorize_seconds = 0;           ///< numeric factorization
  double nnz_L = 0;                       ///< non-zeros of L (CHOLMOD's count, excluding supernodal padding)
  double flops = 0;                       ///< flop count of the numeric factorization (CHOLMOD's estimate)
  std::int64_t supernodes = 0;            ///< number of supernodes
  std::int64_t stored_L = 0;              ///< doubles stored for L (supernodal blocks, padding included)
  double selected_inversion_seconds = 0;  ///< the last marginal_variances() or selected_inverse() call
  Ordering ordering = Ordering::Amd;      ///< the ordering used (for Auto: the one CHOLMOD chose)
};

/// Sparse Cholesky factorization P M P^T = L L^T of a symmetric positive definite matrix M (supernodal,
/// LL^T, fill-reducing permutation P). Owns CHOLMOD's workspace and factor (RAII); movable, not copyable.
///
/// Two ways to use it: `CholeskyFactor f(M)` analyzes and factorizes at once; or, for many matrices with one
/// sparsity pattern (a parameter sweep: new s, sigma on the same graph), analyze the pattern once and
/// factorize each matrix on it, which redoes only the numeric part:
/// \code
/// dualgibbs::CholeskyFactor f;                       // AMD ordering
/// f.analyze(dualgibbs::Model(g, 1.0, 1.0).primal_precision());
/// for (double sigma : {0.1, 0.3, 1.0}) {
///   f.factorize(dualgibbs::Model(g, 1.0, sigma).primal_precision());   // refactorization, same analysis
///   double logdet = f.log_determinant();
/// }
/// \endcode
/// The dense kernels of the factorization, of the solves and of the selected inversion run on the system BLAS
/// (OpenBLAS on Debian with libopenblas0-pthread), limited to one thread while they run unless set_blas_threads()
/// asks for more; with one thread their bits do not depend on the cores the process may use.
/// Why one thread (speed on busy cores, bits): docs/exact.md, section 2, "BLAS".
/// Not thread-safe: use one factor per thread.
class DUALGIBBS_EXPORT CholeskyFactor {
 public:
  /// Factorizes `spd` (square, full symmetric storage as Model builds it).
  /// \param spd the SPD matrix M
  /// \param ordering the fill-reducing ordering
  /// \throws std::invalid_argument if `spd` is empty, not square, not symmetric or has non-finite entries;
  ///         NotPositiveDefinite if it is not positive definite, or is numerically singular: a pivot below
  ///         1e4 n u M_kk (u the unit roundoff) has fewer than 4 trustworthy digits, as happens when s / sigma
  ///         is too large for double precision; FactorizationError if CHOLMOD fails otherwise.
  explicit CholeskyFactor(const SparseMatrix& spd, Ordering ordering = Ordering::Amd);
  /// No pattern and no factor yet: call analyze() and factorize().
  /// \param ordering the fill-reducing ordering of the coming analyze()
  explicit CholeskyFactor(Ordering ordering = Ordering::Amd);
  ~CholeskyFactor();
  /// Moves the factor; the moved-from object may only be destroyed or assigned to.
  CholeskyFactor(CholeskyFactor&&) noexcept;
  /// Moves the factor; the moved-from object may only be destroyed or assigned to.
  /// \return this factor
  CholeskyFactor& operator=(CholeskyFactor&&) noexcept;
  CholeskyFactor(const CholeskyFactor&) = delete;
  CholeskyFactor& operator=(const CholeskyFactor&) = delete;

  /// Symbolic analysis (fill-reducing ordering, elimination tree, supernodes) of the pattern of `pattern`
  /// (square, full symmetric storage; its values are not read). Forgets any previous pattern and factor.
  /// \param pattern a matrix with the pattern to analyze
  /// \throws std::invalid_argument if `pattern` is empty or not square; FactorizationError if CHOLMOD fails.
  void analyze(const SparseMatrix& pattern);
  /// Numeric factorization of `spd`, which must have the analyzed pattern; calling it again refactorizes with
  /// the new values (the analysis is kept). On failure the object keeps its analysis but has no factor.
  /// \param spd the SPD matrix M, with the analyzed pattern
  /// \throws std::invalid_argument if nothing was analyzed, the pattern differs, or `spd` is not symmetric or has
  ///         non-finite entries; NotPositiveDefinite and FactorizationError as for the constructor; FactorizationError
  ///         before allocating when the factorization (and a planned selected inversion, plan_selected_inversion())
  ///         will not fit in the available memory, naming the estimate and the memory available.
  void factorize(const SparseMatrix& spd);
  /// Announces that marginal_variances() or selected_inverse() will follow (as many values as the factor again):
  /// factorize() then refuses, before allocating anything, when the factor, its workspace and the selected inverse
  /// together do not fit in the available memory (the estimate from the analysis, against MemAvailable or the room
  /// under `ulimit -v`), instead of failing after the factorization. Without it only the factorization's own memory
  /// is checked.
  /// \param planned whether a selected inversion will follow
  void plan_selected_inversion(bool planned = true) noexcept;
  /// OpenBLAS threads during factorize() and the solves: 1 (the default, see the class documentation) or more; 0
  /// leaves OpenBLAS's own thread count. \throws std::invalid_argument if negative.
  /// \param threads the OpenBLAS thread count, 0 for OpenBLAS's own
  void set_blas_threads(int threads);
  /// True after a successful analyze().
  /// \return true once analyzed
  bool analyzed() const noexcept;
  /// True after a successful factorize(). The methods below need a factor and throw std::logic_error without.
  /// \return true once factorized
  bool factorized() const noexcept;

  /// Dimension n of M (0 before analyze()).
  /// \return n
  Index size() const noexcept;
  /// log det M = 2 sum_k log L_kk.
  /// \return log det M
  double log_determinant() const;
  /// M^-1 b. \throws std::invalid_argument if b.size() != size().
  /// \param b the right-hand side, length n
  /// \return M^-1 b
  Eigen::VectorXd solve(const Eigen::VectorXd& b) const;
  /// M^-1 B, column by column. \throws std::invalid_argument if b.rows() != size().
  /// \param b the right-hand sides, n rows
  /// \return M^-1 B
  Eigen::MatrixXd solve(const Eigen::MatrixXd& b) const;
  /// `count` exact independent draws from N(0, M^-1) as the columns of an n x count matrix:
  /// x = P^T L^-T z with z ~ N(0, I). z comes from the stream make_stream(seed, 0, StreamPurpose::ExactDraws)
  /// through standard_normal() (core/random.hpp), filled column by column, so the draws are the same on every
  /// platform.
  /// \param count the number of draws
  /// \param seed the seed of the draws' stream
  /// \return the n x count draws
  Eigen::MatrixXd sample(std::size_t count, std::uint64_t seed) const;
  /// diag(M^-1) by supernodal selected inversion (Takahashi recursion over the whole pattern of L),
  /// O(flops of the factorization) time and one more copy of L in memory.
  /// \return diag(M^-1), length n
  Eigen::VectorXd marginal_variances() const;
  /// M^-1 at the positions of M's own non-zeros (a sparse matrix with M's pattern), from the same selected
  /// inversion as marginal_variances(): for Q, the diagonal and Cov(X_u, X_v) of every edge (u, v); for R,
  /// Cov(y~_e, y~_f) of every pair of edges sharing a node. \throws std::invalid_argument unless `pattern`
  /// is size() x size().
  /// \param pattern a matrix with M's pattern (n x n)
  /// \return M^-1 on that pattern
  SparseMatrix selected_inverse(const SparseMatrix& pattern) const;
  /// Dense M^-1 (n x n). \throws std::invalid_argument if n exceeds kMaxDenseDimension.
  /// \return M^-1
  Eigen::MatrixXd inverse() const;

  /// Timings and sizes of the analysis and factorization.
  /// \return the statistics
  const FactorStats& stats() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Name of the BLAS library CHOLMOD's supernodal kernels and the selected inversion run on (the target of
/// libblas.so.3 as resolved by the dynamic loader), for reports and benchmarks.
/// \return the library's path
DUALGIBBS_EXPORT std::string blas_library();

/// Largest dimension for which dense covariances are formed (a 20000 x 20000 matrix is 3.2 GB).
inline constexpr Index kMaxDenseDimension = 20000;

/// Cov(X) = Q^-1 (|V| x |V|, dense) [eqn:QPNH]. \throws std::invalid_argument if |V| > kMaxDenseDimension.
/// \param model the model
/// \return Q^-1
DUALGIBBS_EXPORT Eigen::MatrixXd covariance_primal(const Model& model);
/// Cov(y~) = R^-1 (|E| x |E|, dense) [eqn:QPNHDual]. \throws std::invalid_argument if the graph has no
/// edges or |E| > kMaxDenseDimension.
/// \param model the model
/// \return R^-1
DUALGIBBS_EXPORT Eigen::MatrixXd covariance_dual(const Model& model);
/// Cov(x~) = B R^-1 B^T (|V| x |V|) [eqn:XfromY], computed from a factorization of R (not by Woodbury,
/// so that Prop. 2 [eq:cov_woodbury] can be checked against it). A graph without edges gives the zero matrix.
/// \param model the model
/// \return B R^-1 B^T
DUALGIBBS_EXPORT Eigen::MatrixXd covariance_dual_nodes(const Model& model);
/// Cov(Y) = B^T Q^-1 B (|E| x |E|) [eqn:YfromX], from a factorization of Q. \throws std::invalid_argument if
/// the graph has no edges or |E| > kMaxDenseDimension.
/// \param model the model
/// \return B^T Q^-1 B
DUALGIBBS_EXPORT Eigen::MatrixXd covariance_primal_edges(const Model& model);
/// Marginal variances by selected inversion: diag(Q^-1) (length |V|) for Domain::Primal, diag(R^-1)
/// (length |E|) for Domain::Dual. \throws std::invalid_argument for Domain::Dual on a graph without edges.
/// \param model the model
/// \param domain the domain
/// \param ordering the fill-reducing ordering
/// \return the marginal variances
DUALGIBBS_EXPORT Eigen::VectorXd marginal_variances(const Model& model, Domain domain,
                                                    Ordering ordering = Ordering::Amd);

/// Var(Y_e) = Var(X_u - X_v) for every edge e = (u, v), the diagonal of Cov(Y) = B^T Q^-1 B, from the selected
/// inverse of Q (Q^-1_uu + Q^-1_vv - 2 Q^-1_uv; (u, v) is in the pattern of Q). Length |E| (empty without edges).
/// \param model the model
/// \param ordering the fill-reducing ordering
/// \return Var(Y_e) per edge
DUALGIBBS_EXPORT Eigen::VectorXd marginal_variances_primal_edges(const Model& model, Ordering ordering = Ordering::Amd);
/// Var(y~_e) = (R^-1)_ee for every edge (the dual marginal variances, length |E|) from `primal_inverse`, the
/// selected inverse Z of Q on Q's pattern (CholeskyFactor::selected_inverse(Q)), without factorizing R. Woodbury
/// (Prop. 3): R^-1 = D_sigma^-1 - D_sigma^-1 B^T Q^-1 B D_sigma^-1, so for e = (u, v)
/// (R^-1)_ee = (sigma_e^2 - Var(Y_e)) / sigma_e^4 with Var(Y_e) = Z_uu + Z_vv - 2 Z_uv ((u, v) is in Q's pattern).
/// The subtraction cancels digits when Var(Y_e) is close to sigma_e^2 (s_v much larger than sigma_e); where it
/// would amplify the rounding of Z by more than 1e3 (leaving fewer than 12 good digits), R is factorized and
/// selected-inverted instead, as marginal_variances(model, Domain::Dual, ordering) does. Agrees with that path to
/// about 1e-13 relative (tests/test_exact.cpp). \throws std::invalid_argument unless `primal_inverse` is
/// |V| x |V|.
/// \param model the model
/// \param primal_inverse the selected inverse of Q on Q's pattern
/// \param ordering the fill-reducing ordering, where R is factorized
/// \return Var(y~_e) per edge
DUALGIBBS_EXPORT Eigen::VectorXd marginal_variances_dual_from_primal(const Model& model,
                                                                     const SparseMatrix& primal_inverse,
                                                                     Ordering ordering = Ordering::Amd);
/// Var(x~_v) for every node, the diagonal of Cov(x~) = B R^-1 B^T, from the selected inverse of R
/// (sum over the edges e, f at v of B_ve B_vf R^-1_ef; such pairs are in the pattern of R). Length |V|;
/// zero for isolated nodes.
/// \param model the model
/// \param ordering the fill-reducing ordering
/// \return Var(x~_v) per node
DUALGIBBS_EXPORT Eigen::VectorXd marginal_variances_dual_nodes(const Model& model, Ordering ordering = Ordering::Amd);

/// Differential entropies of the model next to the bounds of appendix B (in nats).
///  - H(X) = |V|/2 ln(2 pi e) - 1/2 log det Q; Hadamard's inequality [eq:ExactdetCovUpperBounds] gives
///    sum_v ln(2 pi e / Q_vv) / 2 <= H(X) <= sum_v ln(2 pi e s_v^2) / 2 (per site, [eq:ExactdetCovUpperBoundsF]
///    for k-regular homogeneous models).
///  - H(y~) = |E|/2 ln(2 pi e) - 1/2 log det R with log det R = log det D_sigma + log det D_s + log det Q
///    (Sylvester's determinant identity, so R is never factorized); bounds
///    sum_e ln(2 pi e / R_ee) / 2 <= H(y~) <= sum_e ln(2 pi e / sigma_e^2) / 2 [eq:detinequality].
struct Entropy {
  double logdet_Q = 0;      ///< log det Q
  double logdet_R = 0;      ///< log det R; 0 for a graph without edges (R is empty)
  double primal = 0;        ///< H(X)
  double primal_lower = 0;  ///< Hadamard lower bound on H(X)
  double primal_upper = 0;  ///< upper bound on H(X) from Q >= D_s^-1 (NaN, like the dual fields, without a dual)
  double dual = 0;          ///< H(y~); 0 for a graph without edges
  double dual_lower = 0;    ///< Hadamard lower bound on H(y~)
  double dual_upper = 0;    ///< upper bound on H(y~) from R >= D_sigma
};
/// Entropies and bounds from a factorization of Q.
/// \param model the model
/// \return the entropies and bounds
DUALGIBBS_EXPORT Entropy entropy(const Model& model);
/// The same from a given log det Q (when Q is already factorized).
/// \param model the model
/// \param logdet_Q log det Q
/// \return the entropies and bounds
DUALGIBBS_EXPORT Entropy entropy(const Model& model, double logdet_Q);

}  // namespace dualgibbs
