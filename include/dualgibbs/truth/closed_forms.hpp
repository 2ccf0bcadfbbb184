#pragma once
/// \file closed_forms.hpp
/// The paper's closed forms in one place: the random-sweep rate [eqn:primalrate, eqn:dualrate], Prop. 1
/// (k-regular primal), Prop. 4 (dual with cycles), Prop. 5 (effective dual rate through lambda_2(L)),
/// appendix A (star), Table I and the standard spectra of the other generator families (lambda_2(L)), and
/// the torus marginal variance [eq:torus_true_var]; and closed_forms(), the one chooser that says which of
/// them apply to a model and its graph spec.
///
/// \code
/// const dualgibbs::GraphSpec spec = dualgibbs::parse_graph_spec("torus:30");
/// const dualgibbs::Model m(dualgibbs::load_graph(spec).graph, 1.0, 0.1);
/// const dualgibbs::ClosedForms cf = dualgibbs::closed_forms(spec, m);
/// // cf.lambda2_L->value == 4 sin^2(pi/30) ("Table I: ..."), cf.rate_primal: Prop. 1 with k = 4,
/// // cf.rate_dual: Prop. 4, cf.rate_dual_effective: Prop. 5, cf.marginal_variance: [eq:torus_true_var]
/// \endcode

#include <dualgibbs/export.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>

#include <limits>
#include <optional>
#include <string>

namespace dualgibbs {

// ---- the chooser ----------------------------------------------------------------------------------------

/// One closed form: its value and where it comes from in the paper (the text `dualgibbs info` prints).
struct ClosedForm {
  double value = std::numeric_limits<double>::quiet_NaN();  ///< the closed form's value
  std::string source;                                       ///< where it comes from, e.g. "Prop. 4"
};

/// Every closed form that applies to one model; each is empty where none does. The names follow Rates
/// (spectral.hpp), whose computed values they stand beside.
struct ClosedForms {
  /// lambda_2(L) of the spec's family (Table I; the standard spectra of path, cycle, grid, hypercube).
  std::optional<ClosedForm> lambda2_L;
  std::optional<ClosedForm> lambda_max_A_primal;             ///< Prop. 1 or appendix A
  std::optional<ClosedForm> lambda_max_A_dual;               ///< Prop. 4, the Prop. 5 spectrum (trees) or appendix A
  std::optional<ClosedForm> rate_primal;                     ///< r_p [eqn:primalrate]
  std::optional<ClosedForm> rate_dual;                       ///< r_d [eqn:dualrate]
  std::optional<ClosedForm> rate_dual_effective;             ///< r_d^eff, Prop. 5 [eqn:effectiverate1]
  std::optional<ClosedForm> rate_primal_asymptotic;          ///< r_p as |V| -> infinity [eqn:primalrate3]
  std::optional<ClosedForm> rate_dual_asymptotic;            ///< r_d as |E| -> infinity [eqn:dualrate3]
  std::optional<ClosedForm> rate_dual_effective_asymptotic;  ///< r_d^eff as |E| -> infinity [eq:r_eff_final]
  /// The marginal variance Var(X_v) shared by every node of a homogeneous torus [eq:torus_true_var].
  std::optional<ClosedForm> marginal_variance;
};

/// Which closed forms apply, and their values. Homogeneous models with edges only (the paper's propositions);
/// a heterogeneous model or a graph without edges gets at most lambda2_L.
///  - from the graph itself: Prop. 1 (regular graphs), else appendix A (a star: one centre joined to every other
///    node); Prop. 4 (graphs with cycles), else appendix A's dual (a star with at least 2 edges), else the
///    spectrum in the proof of Prop. 5 for a connected tree (needs lambda_2);
///  - from the spec's family: lambda_2(L) (Table I and the standard spectra), the torus marginal variance;
///    only if the graph has the node and edge counts the spec implies (a spec that does not describe the
///    model's graph gives nothing);
///  - Prop. 5 (graphs with cycles) and the tree spectrum use `lambda2_L` if it is finite (e.g. the computed
///    algebraic connectivity, Rates::lambda2_L), else the family's closed-form lambda_2.
/// Formulas that reject the family's sizes (a 2-regular "kregular" has no Table I value) are left out.
/// \param spec the spec the model's graph was built from
/// \param model the model
/// \param lambda2_L a computed lambda_2(L), or NaN to use the family's closed form
/// \return the closed forms that apply
DUALGIBBS_EXPORT ClosedForms closed_forms(const GraphSpec& spec, const Model& model,
                                          double lambda2_L = std::numeric_limits<double>::quiet_NaN());
/// The same for a graph of unknown family (built in code rather than from a spec): only what the graph itself
/// and `lambda2_L` give.
/// \param model the model
/// \param lambda2_L a computed lambda_2(L), or NaN
/// \return the closed forms that apply
DUALGIBBS_EXPORT ClosedForms closed_forms(const Model& model,
                                          double lambda2_L = std::numeric_limits<double>::quiet_NaN());

// ---- the formulas ---------------------------------------------------------------------------------------

/// Rate of the random-sweep Gibbs sampler with n coordinates: ((n - 1 + lambda) / n)^n
/// [eqn:primalrate, eqn:dualrate], computed as exp(n log1p((lambda - 1) / n)) so that it stays accurate when
/// n is large and lambda close to 1.
/// \param lambda_max_A lambda_max(A), the iteration matrix's largest eigenvalue
/// \param n the number of coordinates
/// \return the rate
/// \throws std::invalid_argument unless n >= 1 is finite and 1 - n <= lambda <= 1.
DUALGIBBS_EXPORT double random_sweep_rate(double lambda_max_A, double n);
/// The limit of random_sweep_rate as n -> infinity: exp(lambda - 1).
/// \param lambda_max_A lambda_max(A)
/// \return the limiting rate
/// \throws std::invalid_argument unless lambda is finite and <= 1.
DUALGIBBS_EXPORT double random_sweep_rate_asymptotic(double lambda_max_A);

/// \name Closed forms of the paper for homogeneous models (s, sigma: standard deviations)
/// Each throws std::invalid_argument for a non-finite or non-positive s or sigma, a count below 1, a degree
/// below 0, or a negative lambda_2 (lambda_2 = 0, a disconnected graph, reduces Prop. 5 to Prop. 4).
/// @{

/// Prop. 1: lambda_max(A) of the primal of a k-regular model, k s^2 / (sigma^2 + k s^2) [eqn:primalrateHomogen].
/// \param k the degree
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return lambda_max(A)
DUALGIBBS_EXPORT double prop1_primal_lambda_max_A(Index k, double s, double sigma);
/// Prop. 1: r_p = (1 - sigma^2 / (sigma^2 + k s^2) / |V|)^|V|.
/// \param k the degree
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \param num_nodes |V|
/// \return r_p
DUALGIBBS_EXPORT double prop1_primal_rate(Index k, double s, double sigma, double num_nodes);
/// Prop. 1: exp(-sigma^2 / (sigma^2 + k s^2)) [eqn:primalrate3].
/// \param k the degree
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return the limiting r_p
DUALGIBBS_EXPORT double prop1_primal_rate_asymptotic(Index k, double s, double sigma);
/// Prop. 4: lambda_max(A) of the dual of a model with cycles, 2 s^2 / (sigma^2 + 2 s^2) [eqn:primalrateHomogenD].
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return lambda_max(A)
DUALGIBBS_EXPORT double prop4_dual_lambda_max_A(double s, double sigma);
/// Prop. 4: r_d = (1 - sigma^2 / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:dualrate2].
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \param num_edges |E|
/// \return r_d
DUALGIBBS_EXPORT double prop4_dual_rate(double s, double sigma, double num_edges);
/// Prop. 4: exp(-sigma^2 / (sigma^2 + 2 s^2)) [eqn:dualrate3].
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return the limiting r_d
DUALGIBBS_EXPORT double prop4_dual_rate_asymptotic(double s, double sigma);
/// Prop. 5: mu_2 = s^2 (2 - lambda_2) / (sigma^2 + 2 s^2), the largest eigenvalue of the dual A on the cut space.
/// \param lambda2 lambda_2(L)
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return mu_2
DUALGIBBS_EXPORT double prop5_cut_space_lambda_max_A(double lambda2, double s, double sigma);
/// Prop. 5: r_d^eff = (1 - (sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:effectiverate1].
/// \param lambda2 lambda_2(L)
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \param num_edges |E|
/// \return r_d^eff
DUALGIBBS_EXPORT double prop5_effective_dual_rate(double lambda2, double s, double sigma, double num_edges);
/// Prop. 5: exp(-(sigma^2 + s^2 lambda_2) / (sigma^2 + 2 s^2)) [eq:r_eff_final].
/// \param lambda2 lambda_2(L)
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return the limiting r_d^eff
DUALGIBBS_EXPORT double prop5_effective_dual_rate_asymptotic(double lambda2, double s, double sigma);
/// Appendix A, star with |E| leaves: primal lambda_max(A) = s^2 sqrt(|E| / ((sigma^2 + s^2)(sigma^2 + |E| s^2))).
/// \param num_edges |E|, the number of leaves
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return lambda_max(A)
DUALGIBBS_EXPORT double star_primal_lambda_max_A(Index num_edges, double s, double sigma);
/// Appendix A: the primal rate of the star, random_sweep_rate(star_primal_lambda_max_A, |E| + 1).
/// \param num_edges |E|, the number of leaves
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return r_p
DUALGIBBS_EXPORT double star_primal_rate(Index num_edges, double s, double sigma);
/// Appendix A: exp(s / sqrt(sigma^2 + s^2) - 1) [eqn:starrateAsy].
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return the limiting r_p
DUALGIBBS_EXPORT double star_primal_rate_asymptotic(double s, double sigma);
/// Appendix A: dual lambda_max(A) of the star with |E| >= 2 leaves, s^2 / (sigma^2 + 2 s^2). (For |E| = 1 the
/// dual has one coordinate and A = 0, which the appendix's eigenvalue count excludes: this throws.)
/// \param num_edges |E|, the number of leaves, >= 2
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return lambda_max(A)
DUALGIBBS_EXPORT double star_dual_lambda_max_A(Index num_edges, double s, double sigma);
/// Appendix A: r_d = (1 - (sigma^2 + s^2) / (sigma^2 + 2 s^2) / |E|)^|E| [eqn:dualrate5], |E| >= 2.
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \param num_edges |E|, >= 2
/// \return r_d
DUALGIBBS_EXPORT double star_dual_rate(double s, double sigma, double num_edges);
/// Appendix A: exp(-(sigma^2 + s^2) / (sigma^2 + 2 s^2)) [eqn:dualrate6].
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return the limiting r_d
DUALGIBBS_EXPORT double star_dual_rate_asymptotic(double s, double sigma);
/// @}

/// \name lambda_2(L) of graph families (Table I and the standard spectra of the other generators)
/// Each throws std::invalid_argument for sizes outside the family (as the generators do).
/// @{

/// Complete graph K_n (n >= 2): n.
/// \param n number of nodes
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_complete(Index n);
/// Complete bipartite K_{n1,n2} (n1, n2 >= 1): min(n1, n2), or 2 for K_{1,1}; Table I: K_{n,n} gives n.
/// \param n1 nodes on the first side
/// \param n2 nodes on the second side
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_complete_bipartite(Index n1, Index n2);
/// rows x cols torus (sides >= 3): 4 sin^2(pi / max(rows, cols)); Table I: 4 sin^2(pi / n) for n x n.
/// \param rows number of rows
/// \param cols number of columns
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_torus(Index rows, Index cols);
/// Random k-regular graph, |V| -> infinity (Friedman): k - 2 sqrt(k - 1), k >= 3. Asymptotic only.
/// \param k the degree
/// \return the limit of lambda_2(L)
DUALGIBBS_EXPORT double lambda2_random_regular_asymptotic(Index k);
/// Star S_n with n nodes in all (n >= 2): 1, or 2 for the single edge S_2.
/// \param n number of nodes, centre included
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_star(Index n);
/// Path of n >= 2 nodes: 4 sin^2(pi / (2 n)).
/// \param n number of nodes
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_path(Index n);
/// Cycle of n >= 3 nodes: 4 sin^2(pi / n).
/// \param n number of nodes
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_cycle(Index n);
/// rows x cols open grid with at least 2 nodes: 4 sin^2(pi / (2 max(rows, cols))).
/// \param rows number of rows
/// \param cols number of columns
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_grid(Index rows, Index cols);
/// d-dimensional hypercube, d >= 1: 2.
/// \param d the dimension
/// \return lambda_2(L)
DUALGIBBS_EXPORT double lambda2_hypercube(int d);
/// @}

// ---- exact ------------------------------------------------------------------------------------------------

/// The marginal variance shared by every node of the homogeneous rows x cols torus [eq:torus_true_var]:
/// nu = (1 / (rows cols)) sum_{a,b} (1/s^2 + lambda_ab / sigma^2)^-1 with
/// lambda_ab = 4 - 2 cos(2 pi a / rows) - 2 cos(2 pi b / cols) [eq:torus_true_var2] (the paper's n x n case
/// for rows = cols). O(rows cols). \throws std::invalid_argument unless rows, cols >= 3 and s, sigma are valid.
/// \param rows number of rows
/// \param cols number of columns
/// \param s the node standard deviation
/// \param sigma the edge standard deviation
/// \return nu
DUALGIBBS_EXPORT double torus_marginal_variance(Index rows, Index cols, double s, double sigma);

}  // namespace dualgibbs
