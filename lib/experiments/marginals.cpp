// estimate_marginal_variances: the nine methods of `dualgibbs marginals` behind one stopping rule.
#include <dualgibbs/experiments/marginals.hpp>

#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/core/random.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/estimation/probing.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/partition.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "core/enum_names.hpp"
#include "estimation/chain_spread.hpp"

#include <Eigen/IterativeLinearSolvers>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {

using Clock = std::chrono::steady_clock;

constexpr detail::EnumName<MarginalMethod> kMethods[] = {
    {MarginalMethod::Primal, "primal"},     {MarginalMethod::Dual, "dual"},
    {MarginalMethod::DualCv, "dual-cv"},    {MarginalMethod::PrimalCv, "primal-cv"},
    {MarginalMethod::Cholesky, "cholesky"}, {MarginalMethod::Exact, "exact"},
    {MarginalMethod::Rbmc, "rbmc"},         {MarginalMethod::RbmcGibbs, "rbmc-gibbs"},
    {MarginalMethod::Probing, "probing"},   {MarginalMethod::Auto, "auto"}};

// Values (nodes x columns) kept by the automatic degree's pilot: 2e7 doubles, 160 MB.
constexpr std::size_t kPilotValues = 20000000;

// Thrown by the observer to end a run that reached its target or budget.
struct StopSampling {};

double rms_relative(const Eigen::VectorXd& se, const Eigen::VectorXd& est) {
  return std::sqrt((se.array() / est.array().abs()).square().mean());
}

void check_options(const MarginalOptions& o) {
  if (!std::isfinite(o.rel_rmse) || o.rel_rmse < 0)
    throw std::invalid_argument("marginals: the target relative RMSE " + std::to_string(o.rel_rmse) +
                                " must be a finite number > 0");
  if (!std::isfinite(o.seconds) || o.seconds < 0)
    throw std::invalid_argument("marginals: the time budget " + std::to_string(o.seconds) +
                                " s must be a finite number > 0");
  if (o.rel_rmse == 0 && o.seconds == 0)
    throw std::invalid_argument("marginals: give a target relative RMSE (> 0) or a time budget (> 0 seconds)");
  if (o.seconds > 0 && o.group && o.group->size() > 1)  // chain_group.hpp: every member must stop at the same sweep
    throw std::invalid_argument(
        "marginals: a time budget is not available over several processes (MPI ranks): their clocks would stop "
        "them at different sweeps; give a target relative RMSE");
  if (o.chains == 1)
    throw std::invalid_argument(
        "marginals: chains = 1; at least 2 independent chains are needed for a standard "
        "error (0 chooses the number)");
  if (o.every == 0) throw std::invalid_argument("marginals: every = 0; evaluations need at least 1 sweep between them");
  if (o.lockstep != 1 && o.lockstep != 2 && o.lockstep != 4 && o.lockstep != 8 && o.lockstep != 16)
    throw std::invalid_argument("marginals: lockstep = " + std::to_string(o.lockstep) +
                                " (expected 1, 2, 4, 8 or 16 chains per shared-schedule block)");
  if (o.degree < -1 || o.degree > 1000)
    throw std::invalid_argument("marginals: degree = " + std::to_string(o.degree) +
                                " (expected -1 for automatic or 0..1000)");
}

// Sweeps (iterations of the scheme) until the second moments' initial error has decayed by 1e-4 at rate r per
// sweep (at least 4). Chebyshev-SSOR: the covariance error is P_t (S_0 - S) P_t^T with |P_t| <= 2 r^t on the
// spectrum (docs/sampler.md section 2), so 4 r^(2t) <= 1e-4. Gibbs: only the domain's own rate is computed. The
// primal's lambda_max(A) to a relative tolerance of 1e-3 (the default 1e-10 took 0.2 s of a 0.8 s run on
// kregular:10000,4). The dual's lambda_2 of Prop. 5 to 5e-2, and lowered by that tolerance: a Ritz value never lies
// below lambda_2 (interlacing), and at convergence an eigenvalue lies within tolerance x theta of it, so
// theta (1 - tol) is below lambda_2 unless Lanczos missed lambda_2 altogether (its random start makes that
// improbable, as for any tolerance). A looser lambda_2 only lengthens the burn-in, by the factor
// (sigma^2 + s^2 lambda_2) / (sigma^2 + s^2 lambda_2 (1 - tol)) at most: on kregular:10000,4 (s/sigma = 4) 17 sweeps
// instead of 16, for a third of the Lanczos run's cost (10 ms instead of 32 ms, about a tenth of the whole run).
//
// On a connected graph the same Krylov run also finds lambda_max(L) (laplacian_spectrum_ends: Lanczos from both ends,
// at the cost of lambda_2 alone), and then *beta receives the control variate's interval top as FlowControlVariate
// would compute it, lambda_max(Q) = 1/s^2 + lambda_max(L)/sigma^2 (homogeneous) raised by 2% and at most the
// Gershgorin bound 1/s^2 + 2 Delta/sigma^2, provided its Ritz pair meets the tolerance of that run (relative residual
// 1e-2); else *beta is left alone and the first probe computes it (interval_top). Beta affects only the variance.
//
// `cv` is the burn-in of an automatic control variate's pilot: the decay to kCvBiasRatio x 1e-4 instead of 1e-4. A
// control variate's estimate E_v - mean(u_v^2) (dual) or l_v + mean(u_v^2) (primal) is biased by the transient of
// E[u_v^2] alone, which relative to V_v is the gap ratio gap_v / V_v times the transient's relative size: with a ratio
// of at most kCvBiasRatio (measured by the pilot, RMS over its tuning nodes) the shorter burn-in leaves a bias
// relative to V no larger than the full one leaves the plain estimators (on kregular:10000,4, ratio 0.083: 13 sweeps
// instead of 17). A pilot that measures a larger ratio does not count, and the run burns in to `full`.
constexpr double kCvBiasRatio = 0.1;
// Sweeps t with rate^(2t) <= 1 / decay, at least 4 and at most half of max_sweeps (4 for a rate outside (0, 1)).
std::size_t sweeps_to_decay(double rate, double decay, std::size_t max_sweeps) {
  if (!(rate > 0 && rate < 1)) return 4;
  const double t = std::ceil(std::log(decay) / (2 * -std::log(rate)));
  return static_cast<std::size_t>(std::clamp(t, 4.0, static_cast<double>(std::max<std::size_t>(4, max_sweeps / 2))));
}
struct BurnIn {
  std::size_t full = 0, cv = 0;
};
BurnIn burn_in_for(const Model& m, Domain domain, std::size_t max_sweeps, const SchemeOptions& scheme,
                   double* beta = nullptr) {
  double rate = std::numeric_limits<double>::quiet_NaN(), factor = 1e4;
  if (scheme.kind == SchemeKind::ChebyshevSsor) {
    rate = chebyshev_ssor_rate(scheme.spectrum);
    factor = 4e4;
  } else if (scheme.kind == SchemeKind::Ssor && std::isfinite(scheme.spectrum.lambda_min)) {
    rate = ssor_rate(scheme.spectrum);
  } else {
    constexpr double kTolerance = 1e-3, kLambda2Tolerance = 5e-2;
    SpectralOptions so;
    so.tolerance = kTolerance;
    const Graph& g = m.graph();
    if (domain == Domain::Dual && m.is_homogeneous() && g.has_cycles()) {
      // Prop. 5: x~ = B y~ sees only the cut space [eqn:effectiverate1], with lambda the smallest non-zero
      // eigenvalue of L (the least lambda_2 over the components with edges).
      SpectralOptions lo = so;
      lo.tolerance = kLambda2Tolerance;
      double lambda = std::numeric_limits<double>::infinity();
      if (g.num_components() == 1) {
        const LaplacianEnds ends = laplacian_spectrum_ends(g, lo);
        lambda = ends.lambda2;
        constexpr double kBetaResidual = 1e-2;  // interval_top's tolerance (lib/estimation/flow_cv.cpp)
        if (beta && ends.lambda_max_residual <= kBetaResidual) {
          const double inv_s2 = 1 / (m.s() * m.s()), inv_sigma2 = 1 / (m.sigma() * m.sigma());
          *beta = std::min(inv_s2 + 2 * static_cast<double>(g.max_degree()) * inv_sigma2,
                           1.02 * (inv_s2 + ends.lambda_max * inv_sigma2));
        }
      } else {
        for (double l2 : algebraic_connectivity_per_component(g, lo))
          if (std::isfinite(l2) && l2 > 0) lambda = std::min(lambda, l2);
      }
      if (std::isfinite(lambda))
        rate = prop5_effective_dual_rate(lambda * (1 - kLambda2Tolerance), m.s(), m.sigma(),
                                         static_cast<double>(g.num_edges()));
    }
    if (!std::isfinite(rate))  // [eqn:primalrate, eqn:dualrate]
      rate = random_sweep_rate(lambda_max_A(m, domain, so), static_cast<double>(m.dimension(domain)));
  }
  return {sweeps_to_decay(rate, factor, max_sweeps), sweeps_to_decay(rate, factor * kCvBiasRatio, max_sweeps)};
}

// The stopping rule shared by the sampling and the Cholesky methods.
struct Stopper {
  const MarginalOptions& o;
  Clock::time_point start;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
  // True when the accumulator (>= 2 evaluations; MarginalVarianceCv or RbmcAccumulator) has reached the target or
  // the budget is spent.
  template <class Accumulator>
  bool done(const Accumulator& acc, double& rel) const {
    const bool enough = acc.evaluations() >= 2;
    if (enough) rel = rms_relative(acc.std_error(), acc.estimate());
    double fraction = 0;
    if (o.rel_rmse > 0 && enough) fraction = std::min(1.0, std::pow(o.rel_rmse / rel, 2));
    if (o.seconds > 0) fraction = std::max(fraction, std::min(1.0, elapsed() / o.seconds));
    if (o.progress) o.progress(fraction);
    if (enough && o.rel_rmse > 0 && rel <= o.rel_rmse) return true;
    return o.seconds > 0 && elapsed() >= o.seconds;
  }
};

// The estimate, its standard errors and the target's test from an accumulator (MarginalVarianceCv or
// RbmcAccumulator) of at least two evaluations.
template <class Accumulator>
void fill_estimate(const Accumulator& acc, MarginalResult& r, double target) {
  if (acc.evaluations() < 2)
    throw std::invalid_argument("marginals: the time budget ran out after " + std::to_string(acc.evaluations()) +
                                " evaluation(s); at least 2 are needed for an estimate with a standard error "
                                "(give more seconds)");
  r.estimate = acc.estimate();
  r.std_error = acc.std_error();
  r.rel_se_rms = rms_relative(r.std_error, r.estimate);
  r.gap_ratio_rms = rms_relative(acc.gap(), r.estimate);
  r.reached_target = target > 0 && r.rel_se_rms <= target;
}

void fill_from(const MarginalVarianceCv& acc, const FlowControlVariate& cv, bool bracket, MarginalResult& r,
               double target) {
  fill_estimate(acc, r, target);
  if (bracket) {
    r.lower = cv.lower_bound();
    r.upper = cv.flow_energy();
  }
}

// ---- Rao-Blackwellized Monte Carlo -----------------------------------------------------------------------
//
// Siden, Lindgren, Bolin and Villani (2018): the law of total variance over x_v given the rest,
//
//   V_v = E[Var(x_v | x_-v)] + Var(E[x_v | x_-v]) = 1/Q_vv + E[mu_v^2],   mu_v = x_v - (Q x)_v / Q_vv,
//
// (zero mean; mu_v is the Gibbs update's conditional mean [eqn:sampling_general]), estimated by 1/Q_vv + mean(mu_v^2)
// over draws x ~ N(0, Q^-1). It is the Dirichlet identity of the primal control variate (flow_cv.hpp),
// V_v = l(a) + E[((e_v - Q a)^T x)^2] with l(a) = 2 a_v - a^T Q a, at a = e_v / Q_vv: the best a supported on v
// alone, so 1/Q_vv >= the degree-1 Chebyshev variate's l_v = 2c - c^2 Q_vv (a = c e_v), and its gap E[mu_v^2] is
// at most that variate's (docs/accuracy.md, "Rao-Blackwellized Monte Carlo").
//
// The accumulator keeps, per node and chain (or draw of a batch), the sum of mu_v^2 over evaluations; the standard
// error is the spread over the chains, as MarginalVarianceCv's.
class RbmcAccumulator {
 public:
  RbmcAccumulator(const Model& model, std::size_t chains) : m_q(model.primal_precision()) {
    m_q.makeCompressed();
    m_inv_diag = m_q.diagonal().cwiseInverse();
    m_sums = Eigen::MatrixXd::Zero(m_q.rows(), static_cast<Eigen::Index>(chains));
  }
  // One evaluation: the draws x (nodes x chains).
  void add(const Eigen::Ref<const Eigen::MatrixXd>& x) {
    if (x.rows() != m_sums.rows() || x.cols() != m_sums.cols())
      throw std::invalid_argument("marginals (rbmc): draws are " + std::to_string(x.rows()) + " x " +
                                  std::to_string(x.cols()) + ", expected " + std::to_string(m_sums.rows()) + " x " +
                                  std::to_string(m_sums.cols()));
    m_qx.noalias() = m_q * x;
    m_sums.array() += (x.array() - m_qx.array().colwise() * m_inv_diag.array()).square();
    ++m_evaluations;
  }
  std::size_t evaluations() const { return m_evaluations; }
  Eigen::VectorXd gap() const { return m_sums.rowwise().mean() / static_cast<double>(m_evaluations); }
  Eigen::VectorXd estimate() const { return m_inv_diag + gap(); }
  Eigen::VectorXd std_error() const { return detail::chain_spread_std_error(m_sums, m_evaluations, gap()); }
  const Eigen::VectorXd& lower_bound() const { return m_inv_diag; }

 private:
  SparseMatrix m_q;
  Eigen::VectorXd m_inv_diag;  // 1/Q_vv
  Eigen::MatrixXd m_sums, m_qx;
  std::size_t m_evaluations = 0;
};

void fill_from(const RbmcAccumulator& acc, MarginalResult& r, double target) {
  fill_estimate(acc, r, target);
  r.lower = acc.lower_bound();
  r.upper = Eigen::VectorXd::Constant(r.estimate.size(), std::numeric_limits<double>::quiet_NaN());
}

// ---- probing ------------------------------------------------------------------------------------------------
//
// Sign sets of probe_diagonal() (estimation/probing.hpp) at a distance k, their mean the estimate and their spread
// the standard error. k is chosen as the control variates' degree is: for k = 1, 2, 3, ... two sign sets measure the
// single set's relative error e_k (RMS over nodes), which predicts the sets to the target, (e_k / t)^2, and so the
// solves, colours_k (e_k / t)^2. The prediction is not monotone in k (on kregular:10000,4 it fell from k = 2 to 3,
// rose at 4 and fell again at 5; on a lattice the error stays above 100% until k passes the correlation length), so
// k runs through kProbingDistances (roughly geometric) until two in a row do not improve on the best, or every node
// has a colour of its own (one set is then exact); then sets are added at the best k until the stopping rule is met.
// The pilot sets of the best k count.
constexpr int kProbingDistances[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128};
constexpr int kProbingPatience = 2;
class ProbingSets {
 public:
  explicit ProbingSets(Index n) : m_sum(Eigen::VectorXd::Zero(n)), m_sum_sq(Eigen::VectorXd::Zero(n)) {}
  void add(const Eigen::VectorXd& d) {
    m_sum += d;
    m_sum_sq += d.cwiseAbs2();
    ++m_sets;
  }
  std::size_t evaluations() const { return m_sets; }
  Eigen::VectorXd estimate() const { return m_sum / static_cast<double>(m_sets); }
  Eigen::VectorXd std_error() const {
    const auto sets = static_cast<double>(m_sets);
    const Eigen::VectorXd mean = estimate();
    const Eigen::VectorXd var = ((m_sum_sq / sets - mean.cwiseAbs2()) * (sets / (sets - 1))).cwiseMax(0.0);
    return (var / sets).cwiseSqrt();
  }

 private:
  Eigen::VectorXd m_sum, m_sum_sq;
  std::size_t m_sets = 0;
};

MarginalResult probing_marginals(const Model& model, const MarginalOptions& o, const Stopper& stop, MarginalResult& r) {
  const SparseMatrix q = model.primal_precision();
  const Index n = q.rows();
  const double target = o.rel_rmse > 0 ? o.rel_rmse : 0.01;
  // The solves' relative residual: three orders below the target, so their error stays well below the sampling
  // error even where kappa(Q) is in the hundreds (the relative error of x is at most kappa times the residual).
  const double tolerance = 1e-3 * target;
  const unsigned threads = o.threads ? o.threads : available_threads();
  double rel = 0;
  std::uint64_t set_seed = 0;
  // A time budget is asked before every solve (a set of many colours can outlast it): ProbeCancelled ends the set.
  const auto out_of_time = [&] { return o.seconds > 0 && stop.elapsed() >= o.seconds; };
  auto next_set = [&](const DistanceColoring& c) {
    Eigen::VectorXd d = probe_diagonal(q, c, mix64(o.seed + 0x9e3779b97f4a7c15ULL * ++set_seed), tolerance, threads,
                                       nullptr, out_of_time);
    r.samples += static_cast<std::size_t>(c.colors);
    return d;
  };
  // The search over k: two sets each.
  std::optional<DistanceColoring> best;
  std::optional<ProbingSets> best_sets;
  double best_cost = std::numeric_limits<double>::infinity();
  int worse = 0;  // consecutive distances that did not improve on the best
  for (const int k : kProbingDistances) {
    if (out_of_time()) break;
    DistanceColoring c = distance_coloring(q, k);
    // Two sets of this k cost more than the best prediction so far: it cannot win (nor, with more colours, a larger
    // k). On kregular:10000,4 this skips k = 8 and 10 (1602 and 9639 colours) after k = 6 (272 colours, predicted
    // 1211 solves), which cost 20 times the run's solves.
    if (2.0 * static_cast<double>(c.colors) >= best_cost) break;
    ProbingSets sets(n);
    try {
      sets.add(next_set(c));
      if (c.colors < n) sets.add(next_set(c));
    } catch (const ProbeCancelled&) {
      break;  // the budget ran out within this distance's sets: the best so far stands
    }
    const double single = c.colors < n ? rms_relative(sets.std_error(), sets.estimate()) * std::sqrt(2.0) : 0.0;
    const double cost = static_cast<double>(c.colors) * std::max(2.0, std::pow(single / target, 2));
    const bool better = cost < best_cost;  // false for a NaN
    worse = better ? 0 : worse + 1;
    if (better) {
      best_cost = cost;
      best = std::move(c);
      best_sets = std::move(sets);
    }
    if (worse == kProbingPatience || (best && best->colors == n) || out_of_time()) break;
  }
  if (!best)
    throw std::invalid_argument(
        "marginals: the time budget ran out before probing's first two sign sets (give more seconds)");
  r.degree = best->distance;
  if (best->colors == n) {  // every node its own colour: one set is exact (to the solves' tolerance)
    r.estimate = best_sets->estimate();
    r.std_error = Eigen::VectorXd::Zero(n);
  } else {
    try {
      while (!stop.done(*best_sets, rel)) best_sets->add(next_set(*best));
    } catch (const ProbeCancelled&) {  // the budget ran out within a set: the complete sets stand
    }
    r.estimate = best_sets->estimate();
    r.std_error = best_sets->std_error();
  }
  r.chains = best_sets->evaluations();
  r.rel_se_rms = rms_relative(r.std_error, r.estimate);
  r.reached_target = o.rel_rmse > 0 && r.rel_se_rms <= o.rel_rmse;
  r.seconds = stop.elapsed();
  return r;
}

// ---- the automatic Chebyshev degree ------------------------------------------------------------------------
//
// The control variate's degree k trades its precomputation (node by node on the k-hop ball: |V| x ball(k), which
// on an expander grows like (degree - 1)^k) against the sampling it saves (the standard-error ratio gap/V falls
// geometrically in k). A fixed k was measured to lose both ways: k = 8 on kregular:10000,4 (s/sigma = 4) spends
// 11 s precomputing a ratio of 0.006 where k = 5 reaches the 1% target in a tenth of that. So k is chosen from a
// pilot of two evaluations after the burn-in: for k = 1, 2, 3, ... the precomputation's cost is counted on the
// tuning nodes (probe_flow_degree), the gap on them is measured from the pilot's samples (V_v = E_v - gap_v in the
// dual, l_v + gap_v in the primal), and the k with the least predicted cost wins:
//
//   cost(k) = |V| visits(k) c_visit + n_eval(k) (sweep + k (nnz(Q) + 3 |V|) chains c_nnz),
//   n_eval(k) = max(2, 2 ratio(k)^2 / (target^2 chains)),   sweep = every x sites x chains x c_update,
//
// (the relative standard error of a mean of N terms u_v^2, u Gaussian, is sqrt(2 / N) gap_v / V_v). The costs are
// counted, not timed, so that the choice, and the result of a seed, does not depend on the machine's load; the
// constants are nanoseconds measured on an AMD EPYC Zen 4 on a graph that fits in its caches (a ratio of them is all
// that matters). The search stops when the precomputation alone, or the next probe, would exceed the best total. No
// truth is used. Re-measured (kregular:1000,4 at s = 1, sigma = 0.25, 16 chains, k = 5: its work arrays fit
// in the 1 MiB L2; CPU time by std::clock over 3 repetitions, machine loaded with load average 3.4; kregular:10000,4
// gave the same to 15%) after the fused residual map (was 0.9 per non-zero) and the lock-step kernels (were 7.0 and
// 4.3): the ratio of the map's to the sampler's constant halved, which weighs the evaluations' maps less against the
// sweeps and the precomputation.
// The sampler's random scan is the one cost that grows when its state leaves the caches: on torus3:50 (state 48 MB)
// 5.2 to 6.4 ns per update in blocks and 10.6 to 12.5 ns at lockstep 1, while the map (0.31 to 0.33 ns, rows in
// order) and the visits (1.4 ns, lattice-local balls) did not grow. With the in-cache constants alone the search chose
// k = 6 there (15.6 s of CPU) instead of 8 (8.9 s): the sweeps it traded for precomputation cost twice the count.
// The precomputation of one node: kNsPerVisit per visit (a site or incidence of the pushes) plus kNsPerBallSite per
// site of its k-hop ball (joining the ball: the local numbering and the neighbour list translated once). Fitted by
// least squares to the per-node CPU time of 10 (graph, k) pairs (kregular:1000,4 k = 3, 4, 5; kregular:2000,8 k = 3;
// torus:100 k = 5, 10; torus:30 k = 8; torus3:20 k = 5, 8; complete:50 k = 3): within 13% on each, where one constant
// per visit (2.2 ns) was off by up to 2.3x between expanders and lattices (a lattice's balls are small for their
// visits) and chose k = 8 on torus:100 (0.43 s of CPU) instead of 10 (0.33 s).
constexpr double kNsPerVisit = 0.82;
constexpr double kNsPerBallSite = 4.1;
constexpr double kNsPerUpdate = 4.2;  // one site update of one chain (random scan, lockstep 1: 3.8 to 4.5)
// The same in lock-step blocks of 8 or 16 (one vector update per site and block: 2.4 to 2.6 ns, primal and dual).
constexpr double kNsPerUpdateBlock = 2.55;
constexpr double kNsPerNnz = 0.29;  // one non-zero of Q times one sample in the residual map (0.27 to 0.31)
// Beyond kCacheBytes of chain state (sites and the dual's tally, 8 bytes per chain each; the L3 of the machine that
// measured these) an update costs these instead (torus3:50, above).
constexpr double kCacheBytes = 32.0 * 1024 * 1024;
constexpr double kNsPerUpdateMemory = 11.5;
constexpr double kNsPerUpdateBlockMemory = 5.3;

// The counted cost of a sweep: site updates per sweep of one chain, and nanoseconds per update (in or out of the
// caches, one chain per schedule or blocks of 8 or more).
struct SweepCost {
  double sites = 0, update_ns = 0;
};
SweepCost sweep_cost(const Model& model, Domain domain, const SchemeOptions& scheme, std::size_t chains,
                     std::size_t lockstep) {
  const double n = static_cast<double>(model.num_nodes());
  const Index dim = domain == Domain::Dual ? model.num_edges() : model.num_nodes();
  SweepCost c;
  c.sites = static_cast<double>(site_updates_per_sweep(scheme, dim));  // 2n per SSOR iteration
  const double state_bytes =
      8.0 * static_cast<double>(chains) * (static_cast<double>(dim) + (domain == Domain::Dual ? n : 0.0));
  const bool in_cache = state_bytes <= kCacheBytes;
  c.update_ns = lockstep >= 8 ? (in_cache ? kNsPerUpdateBlock : kNsPerUpdateBlockMemory)
                              : (in_cache ? kNsPerUpdate : kNsPerUpdateMemory);
  return c;
}

struct DegreeChoice {
  int degree = 0;
  double kappa = 0;
  double beta = 0;
  double gap_ratio = 0;  // RMS over the tuning nodes of the pilot's gap_v / V_v
  double predicted_ns = std::numeric_limits<double>::infinity();
};

constexpr Index kProbeNodes = 50;  // tuning nodes of each probe
constexpr int kAutoDegrees[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64};

// `pilot`: the pilot's evaluations (nodes x columns each), used in place (copies of them cost page faults: a tenth of
// the process's faults on kregular:10000,4).
DegreeChoice choose_degree(const Model& model, Domain domain, const std::vector<Eigen::MatrixXd>& pilot,
                           std::size_t every, std::size_t chains, std::size_t lockstep, double target,
                           const SchemeOptions& scheme, double beta) {
  const double n = static_cast<double>(model.num_nodes());
  // Q's non-zeros, |V| + 2|E| (graphs have no parallel edges or self-loops), without forming Q.
  const double nnz_q = n + 2 * static_cast<double>(model.num_edges());
  Eigen::Index pilot_columns = 0;
  for (const Eigen::MatrixXd& p : pilot) pilot_columns += p.cols();
  const SweepCost cost = sweep_cost(model, domain, scheme, chains, lockstep);
  const double sweep_ns = static_cast<double>(every) * cost.sites * static_cast<double>(chains) * cost.update_ns;
  const double map_ns = (nnz_q + 3 * n) * static_cast<double>(chains) * kNsPerNnz;
  if (!(target > 0)) target = 0.01;  // a time budget alone: choose for the usual 1% target
  DegreeChoice best;
  double kappa_hint = 0;  // the previous degree's kappa: the next one's search starts there
  // `beta`: the interval's top when the burn-in's spectrum gave it, else 0 and the first probe computes it
  double prev_visits = 0;  // the previous probe's visits per node, and its degree
  int prev_degree = 0;
  for (std::size_t i = 0; i < std::size(kAutoDegrees); ++i) {
    const int k = kAutoDegrees[i];
    const FlowDegreeProbe probe = probe_flow_degree(model, k, kProbeNodes, kappa_hint, beta);
    kappa_hint = probe.kappa;
    beta = probe.beta;
    // The ball of a tuning node is its row's support in r_k(Q) (the k-hop ball).
    const double ball = static_cast<double>(probe.residual_rows.nonZeros()) / static_cast<double>(probe.nodes.size());
    const double node_ns = probe.visits_per_node * kNsPerVisit + ball * kNsPerBallSite;
    const double pre = n * node_ns;
    if (pre >= best.predicted_ns) break;  // the precomputation alone costs more, and it grows with k
    // The tuning nodes' terms (r_k(Q) b)_v from their rows of r_k(Q): no map over all nodes. b = D_s x~ (dual) or x
    // (primal): the scaling goes into the rows.
    const SparseMatrix rows = domain == Domain::Dual
                                  ? SparseMatrix(probe.residual_rows * model.node_variances().asDiagonal())
                                  : probe.residual_rows;
    Eigen::VectorXd squares = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(probe.nodes.size()));
    for (const Eigen::MatrixXd& p : pilot) squares += Eigen::MatrixXd(rows * p).rowwise().squaredNorm();
    double sum = 0;
    for (std::size_t t = 0; t < probe.nodes.size(); ++t) {
      const auto te = static_cast<Eigen::Index>(t);
      const double gap = squares[te] / static_cast<double>(pilot_columns);
      const double v = domain == Domain::Dual ? probe.energy[te] - gap : probe.lower[te] + gap;
      sum += v > 0 ? (gap / v) * (gap / v) : std::numeric_limits<double>::infinity();
    }
    const double ratio = std::sqrt(sum / static_cast<double>(probe.nodes.size()));
    const double n_eval = std::max(2.0, std::ceil(2 * ratio * ratio / (target * target * static_cast<double>(chains))));
    const double total = pre + n_eval * (sweep_ns + k * map_ns);
    if (total < best.predicted_ns) best = DegreeChoice{k, probe.kappa, probe.beta, ratio, total};
    // The next degree's precomputation, extrapolated from the growth of the visits since the previous probe (on an
    // expander the ball grows geometrically: kregular:10000,4 counts 616, 1892, 5626 visits per node at k = 4, 5,
    // 6), at most the whole graph's sites and incidences times the degree: when it alone exceeds the best total,
    // the next probe is not run (it would cost 5 flows per tuning node at that degree: the k = 8 probe there took
    // 46 ms of a 0.3 s run while k = 5 won).
    if (i + 1 < std::size(kAutoDegrees) && prev_visits > 0) {
      const int next = kAutoDegrees[i + 1];
      const double growth = std::max(1.0, probe.visits_per_node / prev_visits);
      const double whole = static_cast<double>(next) * nnz_q;
      // Geometric growth (an expander's ball) or polynomial growth (a lattice's: visits ~ k^p with p from the same two
      // probes), whichever predicts less: the geometric one alone overestimated a 3-D lattice's next ball (torus3:50,
      // k = 6 to 8: 3.0x predicted, about 2.4x actual) and stopped the search at k = 6, which then needed 6.6x the
      // samples of k = 8 (19.4 s of CPU against 10.9 s). Predicting too little only costs a probe.
      const double geometric = std::pow(growth, static_cast<double>(next - k) / (k - prev_degree));
      const double power =
          std::pow(static_cast<double>(next) / k, std::log(growth) / std::log(static_cast<double>(k) / prev_degree));
      const double next_visits = std::min(whole, probe.visits_per_node * std::min(geometric, power));
      // Every degree's cost includes at least two evaluations (n_eval >= 2), so this is a lower bound on the next
      // degree's predicted total: on kregular:10000,4 it skips the k = 6 probe that the precomputation alone did not
      // (predicted 197 ms of precomputation against 199 ms in total at k = 5).
      // The ball grows with the visits (their ratio is the ball's mean degree within it).
      const double next_node_ns = node_ns * next_visits / probe.visits_per_node;
      if (n * next_node_ns + 2 * (sweep_ns + next * map_ns) >= best.predicted_ns) break;
    }
    prev_visits = probe.visits_per_node;
    prev_degree = k;
    // A probe runs its flows on about 5 intervals (the kappa descent and the final one): the next, on a larger
    // ball, would itself cost more than the best run.
    const double probe_ns = 5 * static_cast<double>(probe.nodes.size()) * node_ns;
    if (probe_ns >= best.predicted_ns) break;
  }
  return best;
}

}  // namespace

MarginalMethod parse_marginal_method(const std::string& name) {
  return detail::parse_enum(kMethods, name, "marginals method");
}

const char* to_string(MarginalMethod method) noexcept { return detail::enum_name(kMethods, method); }

namespace {

// The exact method: selected inversion of Q.
MarginalResult exact_marginals(const Model& model, const Stopper& stop, MarginalResult& r,
                               CholeskyFactor* analyzed = nullptr) {
  if (analyzed) {  // the automatic method's analysis of Q; factorize() refuses a factor that does not fit in memory
    analyzed->factorize(model.primal_precision());
    r.estimate = analyzed->marginal_variances();
  } else {
    r.estimate = marginal_variances(model, Domain::Primal);
  }
  r.std_error = Eigen::VectorXd::Zero(r.estimate.size());
  r.lower = r.upper = r.estimate;
  r.reached_target = true;
  r.seconds = stop.elapsed();
  return r;
}

// The cholesky method: batches of o.chains exact draws (CHOLMOD) until the stopping rule is met.
MarginalResult cholesky_marginals(const Model& model, const MarginalOptions& o, const Stopper& stop,
                                  MarginalResult& r) {
  const Execution execution{o.threads, o.group};
  double rel = 0;
  FlowCvOptions fo;
  fo.degree = 0;
  const FlowControlVariate cv(model, fo, execution);
  MarginalVarianceCv acc(cv, Domain::Primal, o.chains);
  const CholeskyFactor factor(model.primal_precision());
  for (std::uint64_t batch = 0;; ++batch) {
    acc.add(factor.sample(o.chains, mix64(o.seed + batch * 0x9e3779b97f4a7c15ULL)), execution);
    r.samples += o.chains;
    if (stop.done(acc, rel)) break;
  }
  fill_from(acc, cv, false, r, o.rel_rmse);
  r.seconds = stop.elapsed();
  return r;
}

// The rbmc method: batches of o.chains exact draws (CHOLMOD), the Rao-Blackwellized terms, the stopping rule.
MarginalResult rbmc_marginals(const Model& model, const MarginalOptions& o, const Stopper& stop, MarginalResult& r) {
  double rel = 0;
  RbmcAccumulator acc(model, o.chains);
  const CholeskyFactor factor(model.primal_precision());
  for (std::uint64_t batch = 0;; ++batch) {
    acc.add(factor.sample(o.chains, mix64(o.seed + batch * 0x9e3779b97f4a7c15ULL)));
    r.samples += o.chains;
    if (stop.done(acc, rel)) break;
  }
  fill_from(acc, r, o.rel_rmse);
  r.seconds = stop.elapsed();
  return r;
}

// The ensemble of the sampling methods: o's chains, seed, threads, group and blocks, random starts, an evaluation
// every o.every sweeps, at least `burn_in` + o.every sweeps.
EnsembleOptions sampling_ensemble(const MarginalOptions& o, std::size_t burn_in) {
  EnsembleOptions eo;
  eo.chains = o.chains;
  eo.sweeps = std::max(o.max_sweeps, burn_in + o.every);
  eo.checkpoint_every = o.every;
  eo.seed = o.seed;
  eo.threads = o.threads;
  eo.group = o.split_graph ? nullptr : o.group;  // a split graph: the sweeps' group is run_partitioned's
  eo.init = InitialState::Random;
  eo.lockstep = o.lockstep;
  return eo;
}

// The chains of a sampling method: in one process or over the group's chains, or every chain's graph split over it.
bool split_over_group(const MarginalOptions& o) { return o.split_graph && o.group && o.group->size() > 1; }
void run_sampler(const Model& model, Domain domain, const EnsembleOptions& eo, const Observer& observe,
                 const MarginalOptions& o) {
  if (split_over_group(o))
    run_partitioned(model, domain, eo, observe, *o.group, o.scheme, o.partition);
  else
    run_ensemble(model, domain, eo, observe, o.scheme);
}

// The rbmc-gibbs method: primal Gibbs draws (o.scheme) after the primal burn-in, the Rao-Blackwellized terms at
// every evaluation, the stopping rule.
MarginalResult rbmc_gibbs_marginals(const Model& model, const MarginalOptions& o, const Stopper& stop,
                                    MarginalResult& r) {
  double rel = 0;
  RbmcAccumulator acc(model, o.chains);
  r.burn_in = o.burn_in ? o.burn_in : burn_in_for(model, Domain::Primal, o.max_sweeps, o.scheme).full;
  try {
    run_sampler(
        model, Domain::Primal, sampling_ensemble(o, r.burn_in),
        [&](const Checkpoint& cp) {
          r.sweeps = cp.sweep;
          if (cp.sweep < r.burn_in) {
            if (o.seconds > 0 && stop.elapsed() >= o.seconds) throw StopSampling{};
            return;
          }
          acc.add(cp.states);
          r.samples += o.chains;
          if (stop.done(acc, rel)) throw StopSampling{};
        },
        o);
  } catch (const StopSampling&) {
  }
  fill_from(acc, r, o.rel_rmse);
  r.seconds = stop.elapsed();
  return r;
}

// What the automatic method gives the sampling run (sampling_marginals): the burn-in and interval top it computed,
// and the alternative's predicted cost, above which the pilot's prediction of the remaining run turns it away.
struct SamplingPlan {
  BurnIn burn_in;
  double beta = 0;
  double turn_ns = std::numeric_limits<double>::infinity();
  double predicted_ns = std::numeric_limits<double>::quiet_NaN();  // the pilot's prediction, once made
};
struct TurnAway {};

// The sampling methods with the Woodbury or sample-variance estimators and the flow control variates: primal, dual,
// dual-cv, primal-cv. `plan` (the automatic method; may be null) gives the burn-in and interval top it computed, and
// the cost above which the pilot's prediction turns the run away (TurnAway) before the control variate is built.
MarginalResult sampling_marginals(const Model& model, const MarginalOptions& o, const Stopper& stop, MarginalResult& r,
                                  SamplingPlan* plan) {
  const bool dual = o.method == MarginalMethod::Dual || o.method == MarginalMethod::DualCv;
  const bool with_cv = o.method == MarginalMethod::DualCv || o.method == MarginalMethod::PrimalCv;
  const Domain domain = dual ? Domain::Dual : Domain::Primal;
  double rel = 0;

  // The control variate is built before sampling when its degree is fixed (0 without one), and from a pilot of
  // two evaluations after the burn-in when it is automatic (choose_degree).
  // The control variate's precomputation and the accumulator's terms, split over the threads and the group's members
  // (with the graph split over the group every member estimates alone: the group is the sweeps' only).
  const Execution execution{o.threads, split_over_group(o) ? nullptr : o.group};
  std::unique_ptr<FlowControlVariate> cv;
  std::unique_ptr<MarginalVarianceCv> acc;
  auto build = [&](int degree, double kappa, double top) {
    FlowCvOptions fo;
    fo.degree = degree;
    fo.kappa = kappa;
    fo.beta = top;
    cv = std::make_unique<FlowControlVariate>(model, fo, execution);  // collective over a group
    acc = std::make_unique<MarginalVarianceCv>(*cv, domain, o.chains);
    r.degree = cv->degree();
  };
  const bool automatic = with_cv && o.degree < 0;
  double beta = 0;  // the control variate's interval top, when the burn-in's spectrum gives it (burn_in_for)
  const BurnIn burn_in = o.burn_in ? BurnIn{o.burn_in, o.burn_in}
                         : plan    ? plan->burn_in
                                   : burn_in_for(model, domain, o.max_sweeps, o.scheme, with_cv ? &beta : nullptr);
  if (plan && !o.burn_in) beta = plan->beta;
  // The automatic degree's pilot starts after the shorter burn-in, which stands when the pilot's gap ratio allows it.
  r.burn_in = automatic ? burn_in.cv : burn_in.full;
  if (!automatic) build(with_cv ? o.degree : 0, 0, beta);
  // The pilot keeps all chains when that is small (then its evaluations count), else the first columns only.
  const auto n_nodes = static_cast<std::size_t>(model.num_nodes());
  const std::size_t pilot_columns = std::clamp<std::size_t>(kPilotValues / std::max<std::size_t>(1, 2 * n_nodes),
                                                            std::min<std::size_t>(8, o.chains), o.chains);
  std::vector<Eigen::MatrixXd> pilot;  // its two evaluations

  try {
    run_sampler(
        model, domain, sampling_ensemble(o, burn_in.full),
        [&](const Checkpoint& cp) {
          r.sweeps = cp.sweep;
          if (cp.sweep < r.burn_in) {
            if (o.seconds > 0 && stop.elapsed() >= o.seconds) throw StopSampling{};
            return;
          }
          if (!acc) {  // the automatic degree's pilot: two evaluations
            pilot.emplace_back(cp.states.leftCols(static_cast<Eigen::Index>(pilot_columns)));
            if (pilot.size() < 2) return;
            const DegreeChoice choice =
                choose_degree(model, domain, pilot, o.every, o.chains, o.lockstep, o.rel_rmse, o.scheme, beta);
            if (plan) {  // the automatic method: the pilot's prediction against the alternative's
              plan->predicted_ns = choice.predicted_ns;
              if (choice.predicted_ns > plan->turn_ns) throw TurnAway{};
            }
            build(choice.degree, choice.kappa, choice.beta);
            r.pilot_gap_ratio = choice.gap_ratio;
            if (choice.gap_ratio > kCvBiasRatio && r.burn_in < burn_in.full) {
              r.burn_in = burn_in.full;  // burn_in_for: the ratio is too large for the short burn-in; drop the pilot
            } else if (pilot_columns == o.chains) {  // the pilot's evaluations count when it kept every chain
              for (const Eigen::MatrixXd& states : pilot) {
                acc->add(states, execution);
                r.samples += o.chains;
              }
            }
            pilot.clear();
            if (acc->evaluations() >= 2 && stop.done(*acc, rel)) throw StopSampling{};
            return;
          }
          acc->add(cp.states, execution);
          r.samples += o.chains;
          if (stop.done(*acc, rel)) throw StopSampling{};
        },
        o);
  } catch (const StopSampling&) {
  }
  if (!acc)
    throw std::invalid_argument(
        "marginals: the time budget ran out before the two pilot evaluations that choose the "
        "control variate's degree (give more seconds, or a --degree)");
  fill_from(*acc, *cv, with_cv, r, o.rel_rmse);
  r.seconds = stop.elapsed();
  return r;
}

// ---- the automatic method ----------------------------------------------------------------------------------
//
// Each candidate's CPU time (one thread) is predicted from counts, cheapest prediction first, and the least wins:
//
// - exact: the selected inversion from the symbolic analysis, seconds = kExactStart + kExactPerFlop flops +
//   kExactPerFactorNonzero nnz(L) + kExactPerNode |V|. Fitted (least squares on relative errors) to the measured
//   factorization and selected inversion of 12 graphs (torus:100, 300, 1000, grid:500x500, torus3:30, 40, 50,
//   kregular:3000,8, 10000,4, 30000,4, complete:50, 300; s = 1, sigma = 0.25; one thread, Intel Xeon Sapphire
//   Rapids): within 13% on each graph above a millisecond. On a complete graph the factor is dense and its counts
//   are known without the analysis (n^3/3 flops, n(n+1)/2 non-zeros).
// - probing, on a complete graph only: the distance-1 colouring gives every node its own colour, so one sign set is
//   exact, |V| solves; their iterations are those of one pilot solve (Q e_0), each costing kCgNsPerNonzero per
//   non-zero of Q and kCgNsPerNode per node. Elsewhere its stochastic form was slower than another method on every
//   graph measured (docs/accuracy.md), and its own search is what predicts it: not a candidate.
// - the sampling method (dual-cv, or primal-cv for a model without a dual): at least the burn-in and two evaluations
//   of its chains at the sweep cost of choose_degree (the shortest burn-in, 4 sweeps, before the rate's Lanczos run;
//   then the predicted one). When that floor is below the others the run starts, and its pilot's prediction of the
//   remaining run (choose_degree) is compared with them: above the least it turns to that method, its sampling
//   spent.
//
// rbmc and rbmc-gibbs are not candidates: rbmc needs exact's factor and then more draws than its selected inversion
// costs on every graph measured (1.4 to 36 times exact's time), and rbmc-gibbs is primal-cv at degree 1 where Q's
// diagonal is constant, which primal-cv's degree search includes. Nor are cholesky, primal and dual (dominated by
// rbmc and the control variates).
constexpr double kExactStart = 1e-3;
constexpr double kExactPerFlop = 2.42e-11;
constexpr double kExactPerFactorNonzero = 7.35e-8;
constexpr double kExactPerNode = 1.27e-6;
// What a sampling run costs besides its counted sweeps, maps and precomputation (the rate's Lanczos run, the degree's
// probes, the sampler's set-up): 11 to 19 ms on kregular:1000,4 to 10000,4 (measured runs against their
// predictions, Intel Xeon Sapphire Rapids).
constexpr double kSamplingStart = 0.01;
constexpr double kCgNsPerNonzero = 0.8;
constexpr double kCgNsPerNode = 4.0;

// An upper bound on lambda_2(L) of a connected graph, in O(|E|): the Rayleigh quotient of the centred distance from
// a pseudo-peripheral node (the farthest node of a breadth-first search, searched from again). On an N x N torus it is
// 1.22 lambda_2 (the circular distance's quotient, 12 / N^2, against 4 pi^2 / N^2). A test vector orthogonal to the
// constants bounds lambda_2 from above whatever it is, so the burn-in it predicts is never longer than the true one.
double fiedler_upper_bound(const Graph& g) {
  const Index n = g.num_nodes();
  const std::vector<Index>& offsets = g.incidence_offsets();
  const std::vector<Index>& neighbors = g.incidence_neighbors();
  std::vector<Index> dist(static_cast<std::size_t>(n));
  auto search = [&](Index source) {
    std::fill(dist.begin(), dist.end(), Index{-1});
    std::vector<Index> queue{source};
    dist[static_cast<std::size_t>(source)] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const Index v = queue[head];
      for (Index p = offsets[static_cast<std::size_t>(v)]; p < offsets[static_cast<std::size_t>(v) + 1]; ++p) {
        const Index u = neighbors[static_cast<std::size_t>(p)];
        if (dist[static_cast<std::size_t>(u)] < 0) {
          dist[static_cast<std::size_t>(u)] = dist[static_cast<std::size_t>(v)] + 1;
          queue.push_back(u);
        }
      }
    }
    return queue.back();  // a farthest node
  };
  search(search(0));
  double mean = 0;
  for (const Index d : dist) mean += static_cast<double>(d);
  mean /= static_cast<double>(n);
  double num = 0, den = 0;
  for (const Edge& e : g.edges()) {
    const double diff =
        static_cast<double>(dist[static_cast<std::size_t>(e.head)] - dist[static_cast<std::size_t>(e.tail)]);
    num += diff * diff;
  }
  for (const Index d : dist) den += (static_cast<double>(d) - mean) * (static_cast<double>(d) - mean);
  return den > 0 ? num / den : std::numeric_limits<double>::infinity();
}

std::string seconds_text(double s) {
  return std::isfinite(s) ? number_text(s, 2) + " s" : std::string("no prediction");
}

// The sampling method's burn-in at least: as burn_in_for predicts it from an upper bound on lambda_2 (the dual of a
// homogeneous, connected graph with cycles; the automatic degree's shorter one), else at least 4 sweeps.
std::size_t burn_in_floor(const Model& model, const MarginalOptions& o) {
  if (o.burn_in) return o.burn_in;
  const Graph& g = model.graph();
  if (!model.has_dual() || !model.is_homogeneous() || !g.has_cycles() || g.num_components() != 1) return 4;
  const double rate =
      prop5_effective_dual_rate(fiedler_upper_bound(g), model.s(), model.sigma(), static_cast<double>(g.num_edges()));
  return sweeps_to_decay(rate, o.degree < 0 ? 1e4 * kCvBiasRatio : 1e4, o.max_sweeps);
}

// Probing with every node its own colour (a complete graph at distance 1): |V| solves of the iterations of one pilot
// solve, Q x = e_0, to probing_marginals' tolerance; infinity if it does not converge.
double unit_probing_seconds(const SparseMatrix& q, double target, long long& iterations) {
  const Index n = q.rows();
  Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>> cg;
  cg.setTolerance(1e-3 * target);
  cg.setMaxIterations(10 * n);
  cg.compute(q);
  Eigen::VectorXd e0 = Eigen::VectorXd::Zero(n);
  e0[0] = 1;
  const Eigen::VectorXd x = cg.solve(e0);
  if (cg.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  iterations = cg.iterations();
  const double dn = static_cast<double>(n);
  return 1e-9 * dn * static_cast<double>(iterations + 1) *
         (static_cast<double>(q.nonZeros()) * kCgNsPerNonzero + dn * kCgNsPerNode);
}

// The counts of exact's prediction: a complete graph's dense factor, else CHOLMOD's symbolic analysis (kept in
// `factor` for the run; infinite counts where it fails).
struct ExactCounts {
  double nodes = 0, flops = 0, factor_nonzeros = 0;
  double seconds() const {
    return kExactStart + kExactPerFlop * flops + kExactPerFactorNonzero * factor_nonzeros + kExactPerNode * nodes;
  }
};
ExactCounts exact_counts(const SparseMatrix& q, bool complete, std::optional<CholeskyFactor>& factor) {
  const double n = static_cast<double>(q.rows());
  ExactCounts c{n, n * n * n / 3, n * (n + 1) / 2};
  if (complete) return c;
  try {
    factor.emplace();
    factor->plan_selected_inversion();
    factor->analyze(q);
    c.flops = factor->stats().flops;
    c.factor_nonzeros = factor->stats().nnz_L;
  } catch (const FactorizationError&) {
    factor.reset();
    c.flops = c.factor_nonzeros = std::numeric_limits<double>::infinity();
  }
  return c;
}

MarginalResult auto_marginals(const Model& model, MarginalOptions& o, const Stopper& stop, MarginalResult& r) {
  MethodChoice& c = r.choice;
  c.automatic = true;
  const auto run_exact = [&](CholeskyFactor* analyzed, const std::string& why) {
    o.method = r.method = MarginalMethod::Exact;
    c.reason = "exact: " + why;
    return exact_marginals(model, stop, r, analyzed);
  };
  // A fresh result for the next method, the choice kept (after a method that gave up).
  const auto restart = [&] {
    const MethodChoice kept = c;
    r = MarginalResult{};
    r.chains = o.chains;
    r.choice = kept;
  };
  const Index n = model.num_nodes();
  const double dn = static_cast<double>(n), dm = static_cast<double>(model.num_edges());
  if (model.num_edges() == 0) return run_exact(nullptr, "the graph has no edges (Q is diagonal)");
  const bool dual = model.has_dual();
  const MarginalMethod sampler = dual ? MarginalMethod::DualCv : MarginalMethod::PrimalCv;
  const Domain domain = dual ? Domain::Dual : Domain::Primal;
  const SweepCost sweep = sweep_cost(model, domain, o.scheme, o.chains, o.lockstep);
  const double eval_ns = static_cast<double>(o.every) * sweep.sites * static_cast<double>(o.chains) * sweep.update_ns;
  const auto sampling_floor = [&](std::size_t burn_in) {
    return kSamplingStart +
           1e-9 * (static_cast<double>(burn_in) * sweep.sites * static_cast<double>(o.chains) * sweep.update_ns +
                   2 * eval_ns);
  };
  const SparseMatrix q = model.primal_precision();
  const bool complete = dm == dn * (dn - 1) / 2;
  const double target = o.rel_rmse > 0 ? o.rel_rmse : 0.01;

  // The cheapest predictions first.
  const std::size_t floor_burn_in = burn_in_floor(model, o);
  c.sampling_seconds = sampling_floor(floor_burn_in);
  long long pilot_iterations = 0;
  if (complete) c.probing_seconds = unit_probing_seconds(q, target, pilot_iterations);
  std::optional<CholeskyFactor> factor;
  const ExactCounts counts = exact_counts(q, complete, factor);
  c.exact_seconds = counts.seconds();
  const std::string exact_text = seconds_text(c.exact_seconds) + " (" + number_text(counts.flops, 2) + " flops, " +
                                 number_text(counts.factor_nonzeros, 2) + " factor non-zeros)";
  const auto run_probing = [&](const std::string& against) {
    o.method = r.method = MarginalMethod::Probing;
    c.reason = "probing: predicted " + seconds_text(c.probing_seconds) + " (a complete graph: one sign set of " +
               std::to_string(n) + " colours is exact; " + std::to_string(pilot_iterations) +
               " conjugate-gradient iterations per solve) against " + against;
    return probing_marginals(model, o, stop, r);
  };
  const std::string sampler_name = to_string(sampler);
  const auto run_least = [&](const std::string& sampling_text, CholeskyFactor* analyzed) {
    if (c.probing_seconds < c.exact_seconds) return run_probing("exact's " + exact_text + " and " + sampling_text);
    try {
      return run_exact(analyzed, "predicted " + exact_text + " against " + sampling_text);
    } catch (const FactorizationError& e) {  // the factor does not fit in memory: the sampling method after all
      restart();
      r.choice.exact_seconds = std::numeric_limits<double>::infinity();
      r.choice.reason = sampler_name + ": exact was predicted faster (" + exact_text + ") but failed: " + e.what();
      o.method = r.method = sampler;
      return sampling_marginals(model, o, stop, r, nullptr);
    }
  };
  if (std::min(c.exact_seconds, c.probing_seconds) <= c.sampling_seconds)
    return run_least("at least " + seconds_text(c.sampling_seconds) + " for " + sampler_name +
                         " (a burn-in of at least " + std::to_string(floor_burn_in) + " sweeps and two evaluations)",
                     factor ? &*factor : nullptr);

  // The sampling method's own burn-in (a Lanczos run on the graph).
  SamplingPlan plan;
  plan.burn_in =
      o.burn_in ? BurnIn{o.burn_in, o.burn_in} : burn_in_for(model, domain, o.max_sweeps, o.scheme, &plan.beta);
  const std::size_t first = o.degree < 0 ? plan.burn_in.cv : plan.burn_in.full;
  c.sampling_seconds = sampling_floor(first);
  if (std::min(c.exact_seconds, c.probing_seconds) <= c.sampling_seconds)
    return run_least("at least " + seconds_text(c.sampling_seconds) + " for " + sampler_name + " (a burn-in of " +
                         std::to_string(first) + " sweeps and two evaluations)",
                     factor ? &*factor : nullptr);
  plan.turn_ns = 1e9 * std::min(c.exact_seconds, c.probing_seconds);
  o.method = r.method = sampler;
  try {
    sampling_marginals(model, o, stop, r, &plan);
  } catch (const TurnAway&) {
    c.sampling_seconds = 1e-9 * plan.predicted_ns + c.sampling_seconds;
    restart();
    return run_least("its pilot's " + seconds_text(1e-9 * plan.predicted_ns) + " more for " + sampler_name +
                         " (turned away after its pilot)",
                     factor ? &*factor : nullptr);
  }
  if (std::isfinite(plan.predicted_ns)) c.sampling_seconds += 1e-9 * plan.predicted_ns;  // the floor holds the start
  c.reason = sampler_name + ": predicted " + seconds_text(c.sampling_seconds) + " (" +
             (std::isfinite(plan.predicted_ns) ? "its burn-in and pilot's prediction" : "at least its burn-in") +
             ") against exact's " + exact_text +
             (std::isfinite(c.probing_seconds) ? " and probing's " + seconds_text(c.probing_seconds) : "");
  return r;
}
}  // namespace

MarginalResult estimate_marginal_variances(const Model& model_in, const MarginalOptions& options) {
  // The variances do not depend on the model's mean, and the estimators assume zero-mean draws (mean(x_v^2)):
  // sample the zero-mean fluctuation.
  std::optional<Model> zero_mean;
  if (model_in.has_mean()) zero_mean = model_in.without_mean();
  const Model& model = zero_mean ? *zero_mean : model_in;
  check_options(options);
  // The dual and its flow energies E_v need D_s; primal-cv's Dirichlet identity needs only Q (FlowControlVariate gives
  // a model without a dual its lower bound l_v alone).
  const bool needs_dual = options.method == MarginalMethod::Dual || options.method == MarginalMethod::DualCv;
  if (needs_dual) model.require_dual((std::string("marginals --method ") + to_string(options.method)).c_str());
  MarginalOptions o = options;
  const bool exact_draws = o.method == MarginalMethod::Cholesky || o.method == MarginalMethod::Rbmc;
  if (o.chains == 0) o.chains = exact_draws ? kAutoCholeskyBatch : kAutoChains;
  const bool sampling = o.method == MarginalMethod::Primal || o.method == MarginalMethod::PrimalCv ||
                        o.method == MarginalMethod::RbmcGibbs || o.method == MarginalMethod::Dual ||
                        o.method == MarginalMethod::DualCv;
  if (o.split_graph && !sampling)
    throw std::invalid_argument(std::string("marginals: a graph split over the group is sampled by primal, dual, ") +
                                "dual-cv, primal-cv or rbmc-gibbs, not " + to_string(o.method));
  // The dual methods run Gibbs, in colour order (Colored) for a split graph.
  if (o.scheme.kind != SchemeKind::Gibbs && !(o.scheme.kind == SchemeKind::Colored && sampling) &&
      o.method != MarginalMethod::Primal && o.method != MarginalMethod::PrimalCv &&
      o.method != MarginalMethod::RbmcGibbs)
    throw std::invalid_argument(std::string("marginals: the scheme '") + to_string(o.scheme.kind) +
                                "' applies to the primal sampling methods (primal, primal-cv, rbmc-gibbs), not to '" +
                                to_string(o.method) + "'");
  const Stopper stop{o, Clock::now()};
  MarginalResult r;
  r.method = o.method;

  if (o.method == MarginalMethod::Exact) return exact_marginals(model, stop, r);

  const bool dual = o.method == MarginalMethod::Dual || o.method == MarginalMethod::DualCv;
  if (dual && model.num_edges() == 0)
    throw std::invalid_argument(std::string("marginals: the method '") + to_string(o.method) +
                                "' samples the dual domain, and this graph has no edges");
  r.chains = o.chains;
  if (o.method == MarginalMethod::Cholesky) return cholesky_marginals(model, o, stop, r);
  if (o.method == MarginalMethod::Rbmc) return rbmc_marginals(model, o, stop, r);
  if (o.method == MarginalMethod::RbmcGibbs) return rbmc_gibbs_marginals(model, o, stop, r);
  if (o.method == MarginalMethod::Probing) return probing_marginals(model, o, stop, r);
  if (o.method == MarginalMethod::Auto) return auto_marginals(model, o, stop, r);
  return sampling_marginals(model, o, stop, r, nullptr);
}

}  // namespace dualgibbs
