#pragma once
/// \file model.hpp
/// The thin-membrane Gaussian model on a graph and its sparse matrices.
///
/// Parameters are the paper's: every node has a standard deviation s_v and every edge a standard
/// deviation sigma_e; the variances s_v^2 and sigma_e^2 fill D_s = diag(s_v^2) and
/// D_sigma = diag(sigma_e^2). Then (paper, Sections II and V)
///
///   B  oriented incidence, |V| x |E|, B[head(e), e] = +1, B[tail(e), e] = -1
///   L  = B B^T, the graph Laplacian (independent of the orientation)
///   Q  = D_s^-1 + B D_sigma^-1 B^T          primal precision over nodes  [eqn:QPNH]
///   R  = D_sigma + B^T D_s B                dual precision over edges    [eqn:QPNHDual]
///
/// The incidence may be weighted and signed (the general form of a factor-width-2 precision): column e of B holds
/// b_head(e) at the head and b_tail(e) at the tail instead of +1 and -1, so that the edge factor is
/// exp(-(b_head x_u + b_tail x_v)^2 / 2 sigma_e^2). Every formula above holds with B's values in place of +1/-1
/// (docs/general-precision.md). Model::from_precision() finds this form for a user's own sparse precision matrix.
///
/// A model may carry a mean (the posterior of the paper's Bayesian image model, Section IX): with
/// observations z the node factors become exp(-(x_v - z_v)^2 / 2 s_v^2), the precision stays Q and the
/// density is N(mu, Q^-1) with the canonical vector h = D_s^-1 z and the posterior mean mu = Q^-1 h. A
/// canonical vector h can also be given directly. Without either the model is the zero-mean prior (h = 0).
///
/// All matrices are CSR (row-major Eigen sparse) with full symmetric storage and sorted columns.

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <string>
#include <vector>

namespace dualgibbs {

/// CSR sparse matrix: row-major, 32-bit indices, full symmetric storage.
using SparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

/// `m` itself when it is compressed, else `copy` made a compressed copy of it. Code that reads the CSR arrays
/// directly (outerIndexPtr, innerIndexPtr, valuePtr) needs this: Eigen's insert() leaves a matrix uncompressed, with
/// gaps in its arrays. The result refers to `m` or `copy`, so both must outlive it.
/// \param m the matrix
/// \param copy where a compressed copy goes if `m` is not compressed
/// \return `m` or `copy`
inline const SparseMatrix& compressed(const SparseMatrix& m, SparseMatrix& copy) {
  if (m.isCompressed()) return m;
  copy = m;
  copy.makeCompressed();
  return copy;
}

/// The two domains of the paper: the primal over nodes (x, precision Q) and the dual over edges (y~, precision R).
enum class Domain { Primal, Dual };

/// "primal" or "dual".
/// \param d the domain
/// \return its name
DUALGIBBS_EXPORT const char* to_string(Domain d) noexcept;
/// Parses "primal" / "dual". \throws std::invalid_argument otherwise.
/// \param name "primal" or "dual"
/// \return the domain
DUALGIBBS_EXPORT Domain parse_domain(const std::string& name);

class DualPrecisionOperator;

/// Checks that a standard deviation, its square and the inverse of its square are finite and positive.
/// \param sd the standard deviation
/// \param what what it is, for the message
/// \throws std::invalid_argument naming `what` and the value otherwise.
DUALGIBBS_EXPORT void check_standard_deviation(double sd, const std::string& what);

/// Options of Model::from_precision().
struct PrecisionOptions {
  /// Off-diagonal pairs may differ by this much relative to the larger of the two (they are then averaged); a larger
  /// difference is an error. 0 asks for exact symmetry.
  double symmetry_tolerance = 1e-12;
  /// Scale by d = M(Q)^-1 1 even when Q is strictly diagonally dominant (where d = 1 already serves).
  bool always_scale = false;
};

/// How a precision matrix given to Model::from_precision() splits into edge factors (the factor-width-2 test).
struct FactorWidthReport {
  bool given_precision = false;     ///< the model was made by from_precision()
  bool factor_width_two = true;     ///< Q is a sum of 2x2 PSD edge factors and a positive diagonal: the dual exists
  bool diagonally_dominant = true;  ///< strictly diagonally dominant: d = 1, no scaling
  double d_min = 1.0;               ///< the smallest entry of the scaling d = M(Q)^-1 1 (1 without scaling)
  double d_max = 1.0;               ///< the largest entry of d
  Index positive_couplings = 0;     ///< off-diagonal pairs with Q_uv > 0 (edges with b_head b_tail > 0)
  Index failing_row = -1;           ///< without a dual: a row where the comparison matrix M(Q) fails (0-based)
  std::string reason;               ///< without a dual: why, in one line
};

/// Graph + per-node s_v + per-edge sigma_e (standard deviations). The homogeneous model (one s, one sigma)
/// is the special case the paper's propositions are about.
///
/// \code
/// dualgibbs::Model m(dualgibbs::make_torus(10, 10), 1.0, 0.1);  // s = 1, sigma = 0.1
/// dualgibbs::SparseMatrix Q = m.primal_precision();               // diagonal 1 + 4/0.01 = 401
/// \endcode
class DUALGIBBS_EXPORT Model {
 public:
  /// Homogeneous model. \throws std::invalid_argument unless s and sigma are finite and positive with
  /// finite, positive, invertible squares.
  /// \param graph the graph G
  /// \param s every node's standard deviation
  /// \param sigma every edge's standard deviation
  Model(Graph graph, double s, double sigma);
  /// Heterogeneous model: s.size() == |V|, sigma.size() == |E|, each entry as above.
  /// \param graph the graph G
  /// \param s s_v per node, length |V|
  /// \param sigma sigma_e per edge, length |E|
  Model(Graph graph, std::vector<double> s, std::vector<double> sigma);
  /// General form: a weighted, signed incidence, B[head(e), e] = head_weight[e] and B[tail(e), e] = tail_weight[e]
  /// (each finite and non-zero), with s and sigma as above. head_weight = 1 and tail_weight = -1 everywhere is
  /// the thin membrane.
  /// \param graph the graph G
  /// \param s s_v per node, length |V|
  /// \param sigma sigma_e per edge, length |E|
  /// \param head_weight B[head(e), e] per edge, length |E|
  /// \param tail_weight B[tail(e), e] per edge, length |E|
  /// \throws std::invalid_argument for wrong lengths or invalid values.
  Model(Graph graph, std::vector<double> s, std::vector<double> sigma, std::vector<double> head_weight,
        std::vector<double> tail_weight);

  /// The model of a sparse symmetric positive definite precision matrix Q (full or one-triangle storage is not
  /// assumed: Q must hold both (u, v) and (v, u)). Its off-diagonal non-zeros are the edges (u < v, head u). When Q
  /// has factor width 2 (a symmetric H-matrix: its comparison matrix M(Q), with -|Q_uv| off the diagonal, is
  /// positive definite) it is written as D_s^-1 + B D_sigma^-1 B^T with d = M(Q)^-1 1 (d = 1 when Q is strictly
  /// diagonally dominant): b_head = sqrt(d_v / d_u), b_tail = sign(Q_uv) sqrt(d_u / d_v), sigma_e^-2 = |Q_uv| and
  /// s_u^-2 = Q_uu - sum_v |Q_uv| d_v / d_u > 0; the model then has a dual. Otherwise it has only the primal
  /// (has_dual() is false and factor_width() names a row where M(Q) fails). primal_precision() returns Q itself.
  /// \param q the precision matrix
  /// \param options the symmetry tolerance and the scaling policy
  /// \return the model
  /// \throws std::invalid_argument if Q is not square, has a non-finite value, a non-positive diagonal entry, is not
  ///         symmetric, or is not positive definite (naming the failing pivot's row).
  static Model from_precision(const SparseMatrix& q, const PrecisionOptions& options = {});

  /// The graph G.
  /// \return G
  const Graph& graph() const noexcept { return m_graph; }
  /// |V|, the dimension of the primal domain.
  /// \return |V|
  Index num_nodes() const noexcept { return m_graph.num_nodes(); }
  /// |E|, the dimension of the dual domain.
  /// \return |E|
  Index num_edges() const noexcept { return m_graph.num_edges(); }
  /// Number of coordinates sampled in a domain: |V| (primal) or |E| (dual).
  /// \param d the domain
  /// \return |V| or |E|
  Index dimension(Domain d) const noexcept { return d == Domain::Primal ? num_nodes() : num_edges(); }

  /// s_v (standard deviations), length |V|.
  /// \return s_v per node
  /// \throws std::logic_error for a model without a dual (it has no s_v).
  const std::vector<double>& node_sd() const {
    require_dual("node_sd");
    return m_s;
  }
  /// sigma_e (standard deviations), length |E|.
  /// \return sigma_e per edge
  /// \throws std::logic_error for a model without a dual.
  const std::vector<double>& edge_sd() const {
    require_dual("edge_sd");
    return m_sigma;
  }
  /// s_v^2, the diagonal of D_s.
  /// \return s_v^2 per node
  /// \throws std::logic_error for a model without a dual.
  const Eigen::VectorXd& node_variances() const {
    require_dual("node_variances");
    return m_s2;
  }
  /// sigma_e^2, the diagonal of D_sigma.
  /// \return sigma_e^2 per edge
  /// \throws std::logic_error for a model without a dual.
  const Eigen::VectorXd& edge_variances() const {
    require_dual("edge_variances");
    return m_sigma2;
  }

  /// True if the model has the form D_s^-1 + B D_sigma^-1 B^T with positive s and sigma, hence a dual domain: every
  /// model but one made by from_precision() from a matrix without factor width 2.
  /// \return true if the dual exists
  bool has_dual() const noexcept { return m_report.factor_width_two; }
  /// Throws unless has_dual().
  /// \param who the caller, for the message
  /// \throws std::invalid_argument naming the row where the comparison matrix fails.
  void require_dual(const char* who) const {
    if (!has_dual()) throw_no_dual(who);
  }
  /// True for the thin membrane's incidence (+1 at the head, -1 at the tail of every edge).
  /// \return true for a unit incidence
  bool unit_incidence() const noexcept { return m_head_weight.empty(); }
  /// B[head(e), e]: 1 for a unit incidence. 0 <= e < num_edges() (not checked).
  /// \param e the edge id
  /// \return the head's weight
  double head_weight(Index e) const noexcept { return m_head_weight.empty() ? 1.0 : m_head_weight[e]; }
  /// B[tail(e), e]: -1 for a unit incidence. 0 <= e < num_edges() (not checked).
  /// \param e the edge id
  /// \return the tail's weight
  double tail_weight(Index e) const noexcept { return m_tail_weight.empty() ? -1.0 : m_tail_weight[e]; }
  /// True if the model was made from a precision matrix (from_precision()).
  /// \return true for a given precision
  bool given_precision() const noexcept { return m_report.given_precision; }
  /// How the given precision split into edge factors (defaults for a model made from a graph).
  /// \return the report
  const FactorWidthReport& factor_width() const noexcept { return m_report; }

  /// True if all s_v are equal, all sigma_e are equal and the incidence is the unit one (the thin membrane the
  /// paper's closed forms are about).
  /// \return true for a homogeneous model
  bool is_homogeneous() const noexcept { return m_homogeneous; }
  /// The common s of a homogeneous model. \throws std::logic_error for a heterogeneous one.
  /// \return s
  double s() const;
  /// The common sigma of a homogeneous model. For a graph without edges it is the sigma given to the
  /// homogeneous constructor, and NaN after the per-edge constructor (there is no edge to carry one).
  /// \return sigma
  /// \throws std::logic_error for a heterogeneous model.
  double sigma() const;

  /// Oriented incidence B (|V| x |E|), CSR: +1/-1, or head_weight(e)/tail_weight(e) in the general form.
  /// \return B
  /// \throws std::logic_error for a model without a dual.
  SparseMatrix incidence() const;
  /// Laplacian L = B B^T (|V| x |V|), of the unit incidence: the graph's Laplacian even in the general form.
  /// \return L
  SparseMatrix laplacian() const;
  /// Primal precision Q = D_s^-1 + B D_sigma^-1 B^T [eqn:QPNH]; nnz = |V| + 2|E|. For a model made by
  /// from_precision() it is the given matrix (symmetrized), not the sum reassembled.
  /// \return Q
  SparseMatrix primal_precision() const;
  /// Dual precision R = D_sigma + B^T D_s B [eqn:QPNHDual]; one row per edge e = (u, v) with
  /// d_u + d_v - 1 non-zeros, sum_v d_v^2 - |E| in all. Build it only when it fits: see
  /// dual_precision_nonzeros() and dual_operator().
  /// \return R
  /// \throws std::invalid_argument if the number of non-zeros overflows the 32-bit index.
  SparseMatrix dual_precision() const;
  /// Number of non-zeros dual_precision() would have.
  /// \return nnz(R) = sum_v d_v^2 - |E|
  std::int64_t dual_precision_nonzeros() const noexcept;
  /// The precision of a domain: Q or R.
  /// \param d the domain
  /// \return Q or R
  SparseMatrix precision(Domain d) const { return d == Domain::Primal ? primal_precision() : dual_precision(); }
  /// Diagonal of Q: 1/s_v^2 + sum_{e at v} 1/sigma_e^2.
  /// \return diag(Q), length |V|
  Eigen::VectorXd primal_diagonal() const;
  /// Diagonal of R: sigma_e^2 + s_u^2 + s_v^2 for e = (u, v) [Examples 3 and 4: sigma^2 + 2 s^2].
  /// \return diag(R), length |E|
  Eigen::VectorXd dual_diagonal() const;
  /// Matrix-free y -> R y in O(|V| + |E|), for graphs where R is too large to store.
  /// \return the operator; this model must outlive it
  DualPrecisionOperator dual_operator() const;

  /// Sets the observations z (length |V|, finite), one per node: the node factors become
  /// exp(-(x_v - z_v)^2 / 2 s_v^2) and the canonical vector h = D_s^-1 z (h_v = z_v / s_v^2). Replaces any
  /// earlier mean. The precision Q, and so every variance, is unchanged.
  /// \param z z_v per node
  /// \throws std::invalid_argument for a wrong length, a non-finite z_v, or an h_v that overflows, and for a model
  ///         made by from_precision() (its split into node and edge factors is a choice: give h instead).
  void set_observations(Eigen::VectorXd z);
  /// Sets the canonical vector h directly (length |V|, finite): the density is proportional to
  /// exp(-x^T Q x / 2 + h^T x), i.e. N(mu, Q^-1) with Q mu = h. Replaces any earlier mean; observations()
  /// becomes empty. \throws std::invalid_argument for a wrong length or a non-finite h_v.
  /// \param h h_v per node
  void set_canonical_vector(Eigen::VectorXd h);
  /// Removes the mean: back to the zero-mean prior.
  void clear_mean() noexcept;
  /// True if observations or a canonical vector were set (even if all zero).
  /// \return true if the model has a mean
  bool has_mean() const noexcept { return m_h.size() > 0; }
  /// h with Q mu = h (length |V|), or an empty vector for a zero-mean model.
  /// \return h, or an empty vector
  const Eigen::VectorXd& canonical_vector() const noexcept { return m_h; }
  /// The observations z given to set_observations() (length |V|), or an empty vector.
  /// \return z, or an empty vector
  const Eigen::VectorXd& observations() const noexcept { return m_z; }
  /// The same model without its mean (the zero-mean fluctuation x - mu has this law).
  /// \return the zero-mean model
  Model without_mean() const;

  /// A one-line description: graph summary plus parameters.
  /// \return the description
  std::string summary() const;

 private:
  void validate_and_square();
  void check_sizes() const;
  void check_weights();
  [[noreturn]] void throw_no_dual(const char* who) const;
  static Model primal_only(Graph graph, SparseMatrix q, FactorWidthReport report);

  Graph m_graph;
  std::vector<double> m_s;
  std::vector<double> m_sigma;
  Eigen::VectorXd m_s2;
  Eigen::VectorXd m_sigma2;
  bool m_homogeneous = true;
  double m_common_sigma = 0.0;
  Eigen::VectorXd m_z;                // observations (empty unless given)
  Eigen::VectorXd m_h;                // canonical vector (empty: zero mean)
  std::vector<double> m_head_weight;  // B[head(e), e]; empty: +1 (unit incidence)
  std::vector<double> m_tail_weight;  // B[tail(e), e]; empty: -1
  SparseMatrix m_given_q;             // the matrix given to from_precision() (empty otherwise)
  FactorWidthReport m_report;
};

/// Matrix-free dual precision, R y = D_sigma y + B^T (D_s (B y)). Follows Spectra's operator concept
/// (rows(), cols(), perform_op) so it can be handed to Spectra eigen-solvers directly.
/// Holds a reference to the model: the model must outlive it.
class DUALGIBBS_EXPORT DualPrecisionOperator {
 public:
  using Scalar = double;  ///< Spectra's operator concept
  /// An operator for `model`, which must outlive it (only a pointer is kept).
  /// \param model the model
  explicit DualPrecisionOperator(const Model& model) : m_model(&model) {}
  /// |E|.
  /// \return |E|
  Eigen::Index rows() const noexcept { return m_model->num_edges(); }
  /// |E|.
  /// \return |E|
  Eigen::Index cols() const noexcept { return m_model->num_edges(); }
  /// y_out = R x_in; both arrays of length |E|, not aliased. O(|V| + |E|), no allocation but a |V| buffer
  /// kept per thread.
  /// \param x_in the vector x, |E| doubles
  /// \param y_out where R x goes, |E| doubles
  void perform_op(const double* x_in, double* y_out) const;
  /// Convenience: returns R y.
  /// \param y a vector of length |E|
  /// \return R y
  Eigen::VectorXd apply(const Eigen::VectorXd& y) const;

 private:
  const Model* m_model;
};

}  // namespace dualgibbs
