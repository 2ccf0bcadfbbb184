#pragma once
/// \file flow_cv.hpp
/// Flow control variates for the marginal variances V_v = Var(X_v): the dual sampler's potential flow and its
/// primal mirror (the Dirichlet control variate), with a certified bracket l_v <= V_v <= E_v.
///
/// **The identity** (derived in docs/accuracy.md, "What is computed"). For any node vector phi, the potential flow
/// p = e_v - L_sigma phi, h = D_sigma^-1 B^T phi is a unit current from v to ground in the resistor network (s_u^2
/// from every node to ground, sigma_e^2 on every edge), L_sigma = B D_sigma^-1 B^T, and
///
///   V_v = E_v - E[(g_v^T x~)^2],   E_v = sum_u s_u^2 p_u^2 + sum_e (B^T phi)_e^2 / sigma_e^2,   g_v = D_s p - phi,
///
/// for x~ = B y~ with y~ ~ N(0, R^-1) [eqn:XfromY]. The variance of the estimator E_v - (g_v^T x~)^2 is
/// 2 (E_v - V_v)^2 against 2 V_v^2 for the primal sample variance: its standard-error ratio is (E_v - V_v) / V_v.
/// The Woodbury plug-in s_v^2 - s_v^4 x~_v^2 [eq:cov_woodbury3] is the trivial flow phi = 0 (ratio 26 to 70 on
/// strongly coupled graphs); the optimal potential is phi = Q^-1 e_v (zero variance).
///
/// **Chebyshev potential.** phi_v = P_k(Q) e_v, the k-step Chebyshev iteration for Q phi = e_v on [alpha, beta]
/// (beta: lambda_max(Q) by Lanczos plus 2%, at most the Gershgorin bound; alpha = beta / kappa). Then g_v^T x~ =
/// [r_k(Q) D_s x~]_v with the residual polynomial r_k(lambda) = 1 - lambda P_k(lambda), so one sample costs k products
/// with Q for all nodes together, and the estimate depends on y~ only through x~ (it keeps the dual's fast mixing).
/// phi_v lives on the (k - 1)-hop ball of v, so the precomputation is local: O(|V| x ball x degree) time, O(|V|)
/// memory.
///
/// **Primal mirror** (Dirichlet principle): V_v = l_v + E[((r_k(Q) x)_v)^2] for x ~ N(0, Q^-1), with
/// l_v = 2 phi_v[v] - phi_v^T Q phi_v. Both identities are exact for any alpha and k; together they give the
/// certified bracket l_v <= V_v <= E_v without sampling.
///
/// \code
/// dualgibbs::Model model(dualgibbs::make_torus(10, 10), 1.0, 0.1);
/// dualgibbs::FlowControlVariate cv(model);              // degree and interval chosen without the truth
/// dualgibbs::MarginalVarianceCv acc(cv, dualgibbs::Domain::Dual, 1000);
/// // in a run_ensemble observer of the dual sampler, every few sweeps after burn-in: acc.add(cp.states);
/// Eigen::VectorXd v = acc.estimate(), se = acc.std_error();
/// \endcode

#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/export.hpp>
#include <dualgibbs/model/model.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace dualgibbs {

/// How the per-node potentials are computed.
enum class FlowPrecompute {
  Local,  ///< node by node on the k-hop ball (any size)
  Dense   ///< the matrix polynomial P_k(Q) as a dense |V| x |V| matrix (small graphs; an independent check)
};

/// Options of FlowControlVariate.
struct FlowCvOptions {
  /// Chebyshev degree k >= 1; 0 is the trivial flow phi = 0 (no control variate: the dual plug-in
  /// s_v^2 - s_v^4 x~_v^2 and the plain primal sample variance, E_v = s_v^2 and l_v = 0); -1 chooses k = 8 ceil(r /
  /// 10), r = max_v s_v / min_e sigma_e, at most 64 (k about 8 for s/sigma <= 10, growing in proportion to s/sigma;
  /// 8 for a model without a dual, which has no s or sigma). The sampled gap (MarginalVarianceCv::gap) tells whether k
  /// was enough: its ratio to the estimate is the achieved standard-error ratio, and a caller that finds it too large
  /// builds the variate again with a larger k.
  int degree = -1;
  /// beta / alpha > 1; 0 chooses it by minimising sum_v E_v over kappa = 2^j, j = 1..16 (every other power, then the
  /// two beside the best) (no truth needed: E_v - V_v is the gap and V_v is fixed); without a dual (no E_v) by
  /// maximising sum_v l_v (V_v - l_v is the primal estimator's gap).
  double kappa = 0;
  /// Nodes (evenly spaced ids) on which kappa and the degree are tuned; the whole graph when it is smaller.
  Index tuning_nodes = 200;
  /// Local (default) or dense precomputation.
  FlowPrecompute precompute = FlowPrecompute::Local;
  /// Upper end of the Chebyshev interval; 0 computes it (FlowControlVariate::beta). A caller that builds several
  /// variates of one model passes the first one's to save the Lanczos run.
  double beta = 0;
};

/// The Chebyshev potential flows of every node of a model: E_v, l_v and the residual map r_k(Q).
class DUALGIBBS_EXPORT FlowControlVariate {
 public:
  /// Precomputes the potential flows of every node of `model`, node by node on the execution's threads; over a
  /// group of two or more members (`execution`'s) the members split the nodes and gather them: collective. The bits
  /// depend on neither.
  /// \param model the model
  /// \param options the degree, interval and precomputation
  /// \param execution the threads and the members sharing the nodes (null group: this process alone)
  /// \throws std::invalid_argument for a degree below -1 or over 1000, kappa in (0, 1], a non-finite
  ///         kappa, a negative or non-finite beta, tuning_nodes < 1, or FlowPrecompute::Dense on more than 5000
  ///         nodes.
  explicit FlowControlVariate(const Model& model, const FlowCvOptions& options = FlowCvOptions(),
                              const Execution& execution = Execution());

  /// \return the Chebyshev degree k
  int degree() const noexcept { return m_degree; }
  /// \return the lower end alpha of the Chebyshev interval
  double alpha() const noexcept { return m_alpha; }
  /// Upper end beta of the Chebyshev interval: lambda_max(Q) by Lanczos (tolerance 1e-2) plus 2%, at most the
  /// Gershgorin bound.
  /// \return beta
  double beta() const noexcept { return m_beta; }
  /// E_v, the energy of node v's flow: the estimator's constant and the upper end of the bracket. NaN for a model
  /// without a dual (Model::has_dual(): a given Q of factor width above 2 has no D_s), which has l_v alone.
  /// \return E_v per node
  const Eigen::VectorXd& flow_energy() const noexcept { return m_energy; }
  /// \return l_v per node, the certified lower bound on V_v
  const Eigen::VectorXd& lower_bound() const noexcept { return m_lower; }
  /// \return whether E_v, the dual terms and the energy matrix exist (the model has D_s: Model::has_dual())
  bool has_energy() const noexcept { return m_has_energy; }

  /// E_uv = p_u^T D_s p_v + (B^T phi_u)^T D_sigma^-1 (B^T phi_v) for all pairs (dense; diagonal = flow_energy()), so
  /// that Cov(X_u, X_v) = E_uv - E[u_u u_v] with u = dual_terms(x~) (the bilinear flow identity).
  /// \return E, |V| x |V|
  /// \throws std::invalid_argument for more than 5000 nodes.
  Eigen::MatrixXd energy_matrix() const;
  /// U = r_k(Q) B, column by column (k products of Q with the block). Over a group of two or more (`execution`'s,
  /// every member holding the same block) the members split the columns and gather them in order: collective, the
  /// same bits.
  /// \param b the block B, |V| rows
  /// \param execution the members sharing the columns (null group: this process alone)
  /// \return U, the shape of B
  /// \throws std::invalid_argument for a wrong number of rows.
  Eigen::MatrixXd residual(const Eigen::Ref<const Eigen::MatrixXd>& b, const Execution& execution = Execution()) const;
  /// The dual terms u = r_k(Q) D_s x~ of samples x~ (columns; |V| rows): V_v = E_v - E[u_v^2]. Collective as
  /// residual().
  /// \param x_tilde the samples x~, one per column
  /// \param execution the members sharing the columns (null group: this process alone)
  /// \return u, one column per sample
  Eigen::MatrixXd dual_terms(const Eigen::Ref<const Eigen::MatrixXd>& x_tilde,
                             const Execution& execution = Execution()) const;
  /// The dual terms scaled back, w = D_s^-1 u = D_s^-1 r_k(Q) D_s x~ (what a dual-domain covariance tracker scores
  /// against the shifted target), into `out`, resized to the shape of x~ with its memory reused: no temporary of that
  /// size (a checkpoint of 10^4 nodes and 600 chains is 48 MB, which the system would fault in anew at every call).
  /// Bitwise D_s^-1 dual_terms(x~). In this process alone, over at most `threads` threads (the bits depend on none).
  /// \param x_tilde the samples x~, one per column
  /// \param out the terms w, one column per sample
  /// \param threads the threads it may use, counting the caller (0: available_threads())
  /// \throws std::invalid_argument for a wrong number of rows, or a model without a dual.
  void scaled_dual_terms(const Eigen::Ref<const Eigen::MatrixXd>& x_tilde, Eigen::MatrixXd& out,
                         unsigned threads = 0) const;
  /// The primal terms u = r_k(Q) x of samples x (columns; |V| rows): V_v = l_v + E[u_v^2]. Collective as residual().
  /// \param x the samples x, one per column
  /// \param execution the members sharing the columns (null group: this process alone)
  /// \return u, one column per sample
  Eigen::MatrixXd primal_terms(const Eigen::Ref<const Eigen::MatrixXd>& x,
                               const Execution& execution = Execution()) const;

 private:
  friend class MarginalVarianceCv;  // its add() runs the residual map on its own buffers
  SparseMatrix m_q;
  Eigen::VectorXd m_s2;  // D_s's diagonal; NaN without a dual
  bool m_has_energy = true;
  int m_degree = 0;
  double m_alpha = 0, m_beta = 0;
  Eigen::VectorXd m_energy, m_lower;
};

/// One candidate degree of the control variates measured on the tuning nodes: the pilot of an automatic choice of
/// k that weighs the precomputation's cost against the sampled gap (estimate_marginal_variances does this).
struct FlowDegreeProbe {
  int degree = 0;            ///< the Chebyshev degree k
  double kappa = 0;          ///< beta / alpha, tuned as FlowCvOptions::kappa = 0 does
  double alpha = 0;          ///< lower end of the Chebyshev interval
  double beta = 0;           ///< upper end (as FlowControlVariate::beta)
  std::vector<Index> nodes;  ///< the tuning nodes
  Eigen::VectorXd energy;    ///< E_v on the tuning nodes
  Eigen::VectorXd lower;     ///< l_v on the tuning nodes
  /// Visits (to a site or to one of its incidences) of one node's precomputation at this degree, mean over the
  /// tuning nodes: a deterministic measure of its cost (a wall-clock time would make an automatic choice, and so the
  /// results of a seed, depend on the machine's load).
  double visits_per_node = 0;
  /// Row t is r_k(Q) e_v for v = nodes[t] (non-zero on the k-hop ball of v): for samples b, (residual_rows b)_t =
  /// (r_k(Q) b)_v, the terms of the tuning nodes without the map over all nodes.
  SparseMatrix residual_rows;
};

/// Tunes kappa for degree k on `tuning_nodes` evenly spaced nodes and measures one node's precomputation there; the
/// whole-graph precomputation then visits about |V| x visits_per_node sites and incidences. Without a hint kappa is
/// searched as FlowCvOptions::kappa = 0 does; with `kappa_hint` > 1 (the best kappa of a neighbouring degree) by a
/// descent over the powers of 2 from the nearest one (3 or 4 trials instead of 10). `beta` > 0 is the interval's
/// upper end (an earlier probe's, to save the Lanczos run), 0 computes it.
/// \param model the model
/// \param degree the Chebyshev degree k
/// \param tuning_nodes how many evenly spaced nodes are probed
/// \param kappa_hint the best kappa of a neighbouring degree, or 0
/// \param beta the interval's upper end, or 0 to compute it
/// \return the probe: kappa, interval, E_v and l_v on the tuning nodes and the cost per node
/// \throws std::invalid_argument for a degree outside 1..1000, tuning_nodes < 1, a hint that is not 0 or a finite
/// value > 1, or a negative or non-finite beta.
DUALGIBBS_EXPORT FlowDegreeProbe probe_flow_degree(const Model& model, int degree, Index tuning_nodes = 200,
                                                   double kappa_hint = 0, double beta = 0);

/// r_k(Q) b, column by column: the residual of k Chebyshev steps for Q phi = b on [alpha, beta] (the map behind
/// FlowControlVariate::residual, for any interval).
/// \param q the precision Q
/// \param degree the number of Chebyshev steps k
/// \param alpha the interval's lower end
/// \param beta the interval's upper end
/// \param b the right-hand sides, one per column
/// \return r_k(Q) b, the shape of b
/// \throws std::invalid_argument for a wrong number of rows, a negative degree or not 0 < alpha < beta.
DUALGIBBS_EXPORT Eigen::MatrixXd chebyshev_residual(const SparseMatrix& q, int degree, double alpha, double beta,
                                                    const Eigen::Ref<const Eigen::MatrixXd>& b);

/// Marginal variances from samples accumulated online (never stored): for L independent chains, add() takes the
/// states of one evaluation (|V| x L: x~ = B y~ of the dual sampler, or x of the primal) and keeps per-chain
/// running sums of u_v^2. The estimate is E_v - mean(u_v^2) (dual) or l_v + mean(u_v^2) (primal); its standard
/// error comes from the spread of the per-chain means over the independent chains (several evaluations of one
/// chain are correlated, so they are averaged within the chain first).
class DUALGIBBS_EXPORT MarginalVarianceCv {
 public:
  /// An empty accumulator for `chains` independent chains.
  /// \param cv the control variate (must outlive the accumulator)
  /// \param domain the sampler's domain: dual (states x~) or primal (states x)
  /// \param chains the number of chains L
  /// \throws std::invalid_argument for fewer than 2 chains.
  MarginalVarianceCv(const FlowControlVariate& cv, Domain domain, std::size_t chains);
  /// One evaluation of every chain. Over a group of two or more (`execution`'s, every member holding all L states)
  /// the members split the chains' terms (FlowControlVariate::residual()): collective, the same bits.
  /// \param states the chains' states, |V| x L
  /// \param execution the members sharing the work (null group: this process alone)
  /// \throws std::invalid_argument for a wrong shape or a non-finite value.
  void add(const Eigen::Ref<const Eigen::MatrixXd>& states, const Execution& execution = Execution());
  /// \return the evaluations added so far
  std::size_t evaluations() const noexcept { return m_evaluations; }
  /// \return the estimates V_v
  /// \throws std::logic_error before the first add().
  Eigen::VectorXd estimate() const;
  /// \return the standard errors of estimate() from the independent chains
  /// \throws std::logic_error before the first add().
  Eigen::VectorXd std_error() const;
  /// mean(u_v^2): the estimated gap E_v - V_v (dual) or V_v - l_v (primal), the control variate's own quality.
  /// \return the gap per node
  Eigen::VectorXd gap() const;

 private:
  const FlowControlVariate* m_cv;
  Domain m_domain;
  using RowBlock = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowBlock m_sums;            // |V| x chains: sum over evaluations of u_v^2 (row-major, as the map's blocks)
  RowBlock m_res, m_d, m_dn;  // the residual map's work blocks, kept between evaluations
  std::size_t m_evaluations = 0;
};

}  // namespace dualgibbs
