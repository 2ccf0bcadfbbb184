// Numerical failure: parameters at the edge of double precision (s or sigma at 1e-150 and
// 1e150, and mixed), a star with 10^6 leaves on one centre, and indefinite or near-singular user precisions.
// Every computation must give a correct answer, checked here against closed forms written in the test
// (Laplacian spectra of cycles, stars and tori; the Schur complement of the star), or end in the documented
// exception: never a NaN or an infinity returned as a result. All tests are deterministic.
#define BOOST_TEST_MODULE numerical_failure
#include <boost/test/unit_test.hpp>

#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/spectral.hpp>

#include "sampler_oracles.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace dualgibbs;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

const double kPi = std::acos(-1.0);

// Largest |a - b| / |b| over the entries (b the oracle; no entry of the oracles below is zero).
double max_rel(const VectorXd& a, const VectorXd& b) {
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  double r = 0;
  for (Eigen::Index i = 0; i < a.size(); ++i) r = std::max(r, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return r;
}

// A homogeneous test graph with its Laplacian spectrum in closed form and the exact marginal variances of
// Q = I/s^2 + L/sigma^2 as a function of (a, b) = (1/s^2, 1/sigma^2).
struct Case {
  std::string name;
  Graph graph;
  std::vector<double> laplacian_eigenvalues;                       // all |V| of them
  std::function<VectorXd(double a, double b)> marginal_variances;  // diag(Q^-1)
};

// Cycle C_n: lambda_k = 2 - 2 cos(2 pi k / n); vertex-transitive, so every variance is the mean of 1/(a + b lambda).
Case cycle_case(Index n) {
  Case c{"cycle:" + std::to_string(n), make_cycle(n), {}, {}};
  for (Index k = 0; k < n; ++k) c.laplacian_eigenvalues.push_back(2 - 2 * std::cos(2 * kPi * k / n));
  const auto ev = c.laplacian_eigenvalues;
  c.marginal_variances = [ev, n](double a, double b) {
    double sum = 0;
    for (double l : ev) sum += 1 / (a + b * l);
    return VectorXd::Constant(n, sum / n);
  };
  return c;
}

// Torus r x c: lambda = 4 - 2 cos(2 pi i / r) - 2 cos(2 pi j / c) [eq:torus_true_var2]; vertex-transitive.
Case torus_case(Index r, Index cols) {
  Case c{"torus:" + std::to_string(r) + "x" + std::to_string(cols), make_torus(r, cols), {}, {}};
  for (Index i = 0; i < r; ++i)
    for (Index j = 0; j < cols; ++j)
      c.laplacian_eigenvalues.push_back(4 - 2 * std::cos(2 * kPi * i / r) - 2 * std::cos(2 * kPi * j / cols));
  const auto ev = c.laplacian_eigenvalues;
  const Index n = r * cols;
  c.marginal_variances = [ev, n](double a, double b) {
    double sum = 0;
    for (double l : ev) sum += 1 / (a + b * l);
    return VectorXd::Constant(n, sum / n);
  };
  return c;
}

// Star with centre 0 and m = n - 1 leaves: spectrum {0, 1 (m - 1 times), n}. Marginal variances by the Schur
// complement of the leaves: Var(x_c) = 1 / (a + m b - m b^2 / (a + b)) = 1 / (a + m a b / (a + b)), and given the
// centre each leaf is N(b x_c / (a + b), 1 / (a + b)), so Var(x_l) = 1 / (a + b) + (b / (a + b))^2 Var(x_c).
VectorXd star_variances(Index n, double a, double b) {
  const double m = n - 1;
  const double w = b / (a + b);  // in (0, 1]; a b / (a + b) = a w without the overflow of a b at a = b = 1e300
  const double var_c = 1 / (a + m * a * w);
  const double var_l = 1 / (a + b) + w * w * var_c;
  VectorXd v = VectorXd::Constant(n, var_l);
  v[0] = var_c;
  return v;
}

Case star_case(Index n) {
  Case c{"star:" + std::to_string(n), make_star(n), {0.0}, {}};
  for (Index k = 0; k + 2 < n; ++k) c.laplacian_eigenvalues.push_back(1.0);
  c.laplacian_eigenvalues.push_back(n);
  c.marginal_variances = [n](double a, double b) { return star_variances(n, a, b); };
  return c;
}

std::vector<Case> cases() { return {cycle_case(7), torus_case(4, 4), torus_case(3, 5), star_case(9)}; }

// The parameters at the edge of what a Model accepts: s^2, sigma^2 and their inverses all representable.
const std::vector<std::pair<double, double>> kExtremes = {{1e-150, 1e-150}, {1e150, 1e150}, {1e-150, 1e150},
                                                          {1e150, 1e-150},  {1.0, 1e-150},  {1e150, 1.0}};

std::string label(const Case& c, double s, double sigma) {
  std::ostringstream os;
  os << c.name << " s=" << s << " sigma=" << sigma;
  return os.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(extreme_parameters)

BOOST_AUTO_TEST_CASE(model_matrices_are_finite_and_exact) {
  // Q and R entries are sums of at most degree+1 positive or single terms: compare with the dense formulas
  // built from the edge list (sampler_oracles.hpp) to the last bits.
  for (const Case& c : cases())
    for (const auto& [s, sigma] : kExtremes) {
      const Model m(c.graph, s, sigma);
      const MatrixXd Q = MatrixXd(m.primal_precision()), R = MatrixXd(m.dual_precision());
      BOOST_TEST(Q.allFinite(), label(c, s, sigma));
      BOOST_TEST(R.allFinite(), label(c, s, sigma));
      const MatrixXd Qd = oracle::primal_precision(m), Rd = oracle::dual_precision(m);
      BOOST_TEST((Q - Qd).cwiseAbs().maxCoeff() <= 1e-15 * Qd.cwiseAbs().maxCoeff(), label(c, s, sigma));
      BOOST_TEST((R - Rd).cwiseAbs().maxCoeff() <= 1e-15 * Rd.cwiseAbs().maxCoeff(), label(c, s, sigma));
      BOOST_TEST(m.primal_diagonal().allFinite());
      BOOST_TEST(m.dual_diagonal().allFinite());
    }
}

BOOST_AUTO_TEST_CASE(parameters_just_outside_double_range_are_rejected_at_construction) {
  // s = 1e-155 squares to 1e-310 (subnormal: its inverse overflows); s = 1e155 squares to infinity.
  for (double bad : {1e-155, 1e155, 1e-200, 1e200})
    for (const auto& [s, sigma] : {std::pair{bad, 1.0}, std::pair{1.0, bad}})
      BOOST_CHECK_EXCEPTION(Model(make_cycle(5), s, sigma), std::invalid_argument, [](const std::invalid_argument& e) {
        return std::string(e.what()).find("overflows or underflows") != std::string::npos;
      });
}

BOOST_AUTO_TEST_CASE(exact_inference_is_correct_or_throws_not_positive_definite) {
  // log det Q = sum_k log(a + b lambda_k) and diag(Q^-1) in closed form. When s / sigma <= 1, cond(Q) <= 1 + 2 d_max
  // and the factor must reproduce the closed forms to 1e-12. When s / sigma >= 1e150, cond(Q) >= 1e300: no
  // double-precision factorization can resolve the smallest eigenvalue, and before this test a torus factor
  // returned marginal variances of 3e-286 where the truth is 6e298. These must end in NotPositiveDefinite.
  for (const Case& c : cases())
    for (const auto& [s, sigma] : kExtremes) {
      const Model m(c.graph, s, sigma);
      const double a = 1 / (s * s), b = 1 / (sigma * sigma);
      if (s / sigma >= 1e150) {
        BOOST_CHECK_THROW(CholeskyFactor f(m.primal_precision()), NotPositiveDefinite);
        BOOST_CHECK_THROW(marginal_variances(m, Domain::Primal), NotPositiveDefinite);
        BOOST_CHECK_THROW(entropy(m), NotPositiveDefinite);
        if (c.graph.has_cycles()) {  // R = sigma^2 I + s^2 B^T B is singular to rounding on the cycle space
          BOOST_CHECK_THROW(marginal_variances(m, Domain::Dual), NotPositiveDefinite);
        }
        continue;
      }
      BOOST_REQUIRE(s / sigma <= 1.0);
      double logdet = 0;
      for (double l : c.laplacian_eigenvalues) logdet += std::log(a + b * l);
      const VectorXd var = c.marginal_variances(a, b);
      const CholeskyFactor f(m.primal_precision());
      const double got = f.log_determinant();
      const VectorXd got_var = f.marginal_variances();
      BOOST_TEST(std::abs(got - logdet) <= 1e-12 * std::abs(logdet), label(c, s, sigma)
                                                                         << ": " << got << " vs " << logdet);
      BOOST_TEST(max_rel(got_var, var) <= 1e-12, label(c, s, sigma) << ": " << got_var.transpose() << " vs " << var[0]);
      BOOST_TEST(max_rel(marginal_variances(m, Domain::Primal), var) <= 1e-12, label(c, s, sigma));
      BOOST_TEST(std::abs(entropy(m).logdet_Q - logdet) <= 1e-12 * std::abs(logdet), label(c, s, sigma));
      // Dual: diag(R^-1) from R = sigma^2 I + s^2 B^T B against the dense inverse of the dense oracle R (well
      // conditioned here: cond(R) <= 1 + 2 d_max s^2 / sigma^2 <= 1 + 2 d_max).
      const MatrixXd Rd = oracle::dual_precision(m);
      const VectorXd dual_want = Rd.llt().solve(MatrixXd::Identity(Rd.rows(), Rd.cols())).diagonal();
      BOOST_TEST(max_rel(marginal_variances(m, Domain::Dual), dual_want) <= 1e-12, label(c, s, sigma));
    }
}

BOOST_AUTO_TEST_CASE(torus_closed_form_is_finite_and_exact_at_the_extremes) {
  // torus_marginal_variance computed s^2 sigma^2 / (...) and returned inf at s = sigma = 1e150 and 0 at
  // s = sigma = 1e-150. It is a closed form: no conditioning limit, so every extreme must match.
  for (const auto& [rows, cols] : {std::pair<Index, Index>{4, 4}, std::pair<Index, Index>{3, 5}}) {
    const Case c = torus_case(rows, cols);
    for (const auto& [s, sigma] : kExtremes) {
      const double want = c.marginal_variances(1 / (s * s), 1 / (sigma * sigma))[0];
      const double got = torus_marginal_variance(rows, cols, s, sigma);
      BOOST_TEST(std::abs(got - want) <= 1e-12 * want, label(c, s, sigma) << ": " << got << " vs " << want);
    }
  }
}

BOOST_AUTO_TEST_CASE(ill_conditioned_factor_is_rejected_before_it_loses_four_digits) {
  // The 4x4 torus with sigma = 1: cond(Q) = 1 + 8 s^2. The marginal variance (closed form) is computed to better
  // than 1e-4 where the factor is accepted (measured up to s = 3e5: 4e-5), and s = 1e7 (relative error 6e-2 before
  // the pivot check) is rejected.
  const Case c = torus_case(4, 4);
  for (double s : {1e2, 1e3, 1e4, 1e5, 3e5, 1e7, 1e8}) {
    const Model m(c.graph, s, 1.0);
    const double want = c.marginal_variances(1 / (s * s), 1.0)[0];
    try {
      const VectorXd got = marginal_variances(m, Domain::Primal);
      BOOST_TEST(max_rel(got, VectorXd::Constant(got.size(), want)) <= 1e-4, "s = " << s);
      BOOST_TEST(s <= 3e5, "s = " << s << " was accepted");
    } catch (const NotPositiveDefinite& e) {
      BOOST_TEST(s > 3e5, "s = " << s << " was rejected: " << e.what());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(extreme_parameters_sampling)

BOOST_AUTO_TEST_CASE(noise_free_sweeps_are_dense_gauss_seidel_at_the_extremes) {
  // Three fixed-scan Gauss–Seidel sweeps from the constant vector, against the update written on the dense
  // precision, in both domains. Deterministic.
  for (const Case& c : cases())
    for (const auto& [s, sigma] : kExtremes) {
      const Model m(c.graph, s, sigma);
      for (Domain d : {Domain::Primal, Domain::Dual}) {
        const MatrixXd M = d == Domain::Primal ? oracle::primal_precision(m) : oracle::dual_precision(m);
        VectorXd z = VectorXd::Constant(M.rows(), 1.0);
        for (int sweep = 0; sweep < 3; ++sweep)
          for (Index i = 0; i < M.rows(); ++i) z[i] -= M.row(i).dot(z) / M(i, i);
        VectorXd got;
        // SpdCheck::Cheap as run_ensemble uses it: Q and R of a valid model are positive definite by construction,
        // and the dense check (SpdCheck::Auto) refuses the numerically singular ones (s / sigma = 1e150) with
        // std::invalid_argument, which is the clear error, not what is tested here.
        if (d == Domain::Primal) {
          const CsrKernel k(m.primal_precision(), SpdCheck::Cheap);
          GibbsSampler<CsrKernel> g(k, ScanOrder::Fixed, 1, 0, false);
          g.set_constant_state(1.0);
          g.sweep(3);
          got = g.state(0);
        } else {
          const DualIncidenceKernel k(m);
          GibbsSampler<DualIncidenceKernel> g(k, ScanOrder::Fixed, 1, 0, false);
          g.set_constant_state(1.0);
          g.sweep(3);
          got = g.state(0);
        }
        BOOST_TEST(got.allFinite(), label(c, s, sigma) << " " << to_string(d));
        const double scale = std::max(z.cwiseAbs().maxCoeff(), 1e-300);
        BOOST_TEST((got - z).cwiseAbs().maxCoeff() <= 1e-12 * scale, label(c, s, sigma) << " " << to_string(d));
      }
    }
}

BOOST_AUTO_TEST_CASE(ensembles_stay_finite_and_the_two_dual_kernels_agree) {
  // Random-scan sweeps with noise: every checkpoint finite, in both domains; the O(1) dual kernel and the CSR
  // kernel on the explicit R run the same chain (same seed) up to rounding. Deterministic.
  for (const Case& c : cases())
    for (const auto& [s, sigma] : kExtremes) {
      const Model m(c.graph, s, sigma);
      for (Domain d : {Domain::Primal, Domain::Dual})
        for (InitialState init : {InitialState::Constant, InitialState::Random}) {
          EnsembleOptions o;
          o.chains = 4;
          o.sweeps = 5;
          o.threads = 1;
          o.init = init;
          bool finite = true;
          run_ensemble(m, d, o, [&](const Checkpoint& cp) { finite = finite && cp.states.allFinite(); });
          BOOST_TEST(finite, label(c, s, sigma) << " " << to_string(d));
        }
      const CsrKernel csr(m.dual_precision(), SpdCheck::Cheap);
      const DualIncidenceKernel dual(m);
      GibbsSampler<CsrKernel> a(csr, ScanOrder::Random, 5);
      GibbsSampler<DualIncidenceKernel> b(dual, ScanOrder::Random, 5);
      a.set_random_state();
      b.set_random_state();
      a.sweep(5);
      b.sweep(5);
      const VectorXd ya = a.state(0), yb = b.state(0);
      BOOST_TEST(yb.allFinite());
      BOOST_TEST((ya - yb).cwiseAbs().maxCoeff() <= 1e-9 * ya.cwiseAbs().maxCoeff(), label(c, s, sigma));
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(extreme_parameters_spectra)

BOOST_AUTO_TEST_CASE(lambda_max_A_and_rates_are_correct_or_a_clear_error) {
  // lambda_max(A) in closed form: primal on a k-regular graph k s^2 / (sigma^2 + k s^2) (Prop. 1); dual on a graph
  // with cycles 2 s^2 / (sigma^2 + 2 s^2) (Prop. 4); dual on a star s^2 / (sigma^2 + 2 s^2) (appendix A). Written
  // here in terms of r = sigma^2 / s^2 so that no square over- or underflows. Absolute tolerance: lambda is in
  // [0, 1] and the symmetric eigenproblem is solved to about 1e-10 relative accuracy. An EigensolverError is a
  // clear error; anything else must be a number in [0, 1] (rates too), NaN only where documented.
  for (const Case& c : cases())
    for (const auto& [s, sigma] : kExtremes) {
      const Model m(c.graph, s, sigma);
      const double r = (sigma / s) * (sigma / s);
      const bool regular = c.name.rfind("star", 0) != 0;
      const double k = regular ? 2.0 * c.graph.num_edges() / c.graph.num_nodes() : 0.0;
      for (Domain d : {Domain::Primal, Domain::Dual}) {
        double want = std::nan("");
        if (d == Domain::Primal && regular) want = k / (r + k);
        if (d == Domain::Dual) want = regular ? 2 / (r + 2) : 1 / (r + 2);
        try {
          const double l = lambda_max_A(m, d);
          BOOST_TEST((l >= 0.0 && l <= 1.0), label(c, s, sigma) << " " << to_string(d) << ": " << l);
          if (!std::isnan(want))
            BOOST_TEST(std::abs(l - want) <= 1e-9, label(c, s, sigma)
                                                       << " " << to_string(d) << ": " << l << " vs " << want);
        } catch (const EigensolverError& e) {
          BOOST_TEST_MESSAGE(label(c, s, sigma) << ": " << e.what());
        }
      }
      try {
        const Rates rates = convergence_rates(m);
        for (double x : {rates.lambda_max_A_primal, rates.lambda_max_A_dual, rates.rate_primal, rates.rate_dual,
                         rates.rate_primal_asymptotic, rates.rate_dual_asymptotic})
          BOOST_TEST((x >= 0.0 && x <= 1.0), label(c, s, sigma) << ": " << x);
        for (double x : {rates.rate_dual_effective, rates.rate_dual_effective_asymptotic})
          BOOST_TEST((std::isnan(x) || (x >= 0.0 && x <= 1.0)), label(c, s, sigma) << ": " << x);
        BOOST_TEST((c.graph.has_cycles() || std::isnan(rates.rate_dual_effective)));
      } catch (const EigensolverError& e) {
        BOOST_TEST_MESSAGE(label(c, s, sigma) << ": " << e.what());
      }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(star_with_a_million_leaves)

// star:1000001: one centre (node 0) and 10^6 leaves; edge e joins 0 (head) to leaf e + 1 (tail).
constexpr Index kStarNodes = 1'000'001;

BOOST_AUTO_TEST_CASE(primal_marginal_variances_match_the_schur_complement) {
  for (const auto& [s, sigma] : {std::pair{1.0, 0.1}, std::pair{0.3, 2.0}}) {
    const Model m(make_star(kStarNodes), s, sigma);
    const double a = 1 / (s * s), b = 1 / (sigma * sigma);
    const VectorXd want = star_variances(kStarNodes, a, b);
    const CholeskyFactor f(m.primal_precision());
    const VectorXd got = f.marginal_variances();
    // cond(Q) <= (a + b N) / a (Gershgorin over lambda_min >= a): the pivot of the centre sums 10^6 terms that cancel
    // to 1% (s = 1, sigma = 0.1), so the forward error is of order cond(Q) u (2.2e-8 there; measured 1.8e-9, and
    // 4.8e-11 for s = 0.3, sigma = 2).
    // Summing the 10^6 terms adds about 10^6 u more: tolerance 4 (cond(Q) + 10^6) u.
    const double tol = 4 * ((a + b * kStarNodes) / a + 1e6) * 2.2e-16;
    BOOST_TEST(max_rel(got, want) <= tol, "s " << s << " sigma " << sigma << ": " << max_rel(got, want));
    // log det Q = log a + (m - 1) log(a + b) + log(a + b N): the star's Laplacian spectrum {0, 1, ..., 1, N}.
    const double m_leaves = kStarNodes - 1;
    const double logdet = std::log(a) + (m_leaves - 1) * std::log(a + b) + std::log(a + b * kStarNodes);
    // 10^6 logarithms are summed: rounding of order 1e6 u relative in the worst case; measured 1.5e-11.
    BOOST_TEST(std::abs(f.log_determinant() - logdet) <= 1e-10 * std::abs(logdet));
  }
}

BOOST_AUTO_TEST_CASE(explicit_dual_precision_is_rejected_but_the_matrix_free_parts_work) {
  const Model m(make_star(kStarNodes), 1.0, 0.1);
  // R would have sum_v d_v^2 - |E| = 10^12 non-zeros: over the 32-bit index, rejected before allocating.
  BOOST_TEST(m.dual_precision_nonzeros() == std::int64_t{1'000'000} * 1'000'000);
  BOOST_CHECK_EXCEPTION(m.dual_precision(), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()).find("non-zeros") != std::string::npos;
  });
  BOOST_CHECK_THROW(CsrKernel(m.dual_precision()), std::invalid_argument);

  // The matrix-free operator: (R y)_e = sigma^2 y_e + s^2 (x_c - x_{leaf}) with x = B y, i.e. for the star
  // x_c = sum_f y_f and x_{leaf e} = -y_e, so (R y)_e = sigma^2 y_e + s^2 (sum_f y_f + y_e).
  const Index ne = m.num_edges();
  VectorXd y(ne);
  for (Index e = 0; e < ne; ++e) y[e] = std::sin(0.001 * e) + 0.5;
  double total = 0;
  for (Index e = 0; e < ne; ++e) total += y[e];
  const VectorXd ry = m.dual_operator().apply(y);
  double worst = 0;
  for (Index e = 0; e < ne; ++e) {
    const double want = 0.01 * y[e] + (total + y[e]);
    worst = std::max(worst, std::abs(ry[e] - want) / std::abs(want));
  }
  BOOST_TEST(worst <= 1e-12);

  // The O(1) dual sampler: one noise-free fixed-scan sweep from y = 1 against Gauss–Seidel written for the star,
  // where sum_{f != e} R_ef y_f = s^2 (sum_{f != e} y_f) (every pair of edges shares the centre with the same sign)
  // and R_ee = sigma^2 + 2 s^2.
  const DualIncidenceKernel k(m);
  GibbsSampler<DualIncidenceKernel> g(k, ScanOrder::Fixed, 1, 0, false);
  g.set_constant_state(1.0);
  g.sweep(1);
  const VectorXd got = g.state(0);
  VectorXd z = VectorXd::Constant(ne, 1.0);
  double sum = ne;  // sum_f z_f
  for (Index e = 0; e < ne; ++e) {
    const double others = sum - z[e];
    const double updated = -others / (0.01 + 2.0);
    sum += updated - z[e];
    z[e] = updated;
  }
  BOOST_TEST((got - z).cwiseAbs().maxCoeff() <= 1e-12 * z.cwiseAbs().maxCoeff());

  // Ensembles in both domains run and stay finite.
  for (Domain d : {Domain::Primal, Domain::Dual}) {
    EnsembleOptions o;
    o.chains = 2;
    o.sweeps = 2;
    o.threads = 2;
    bool finite = true;
    const EnsembleStats st =
        run_ensemble(m, d, o, [&](const Checkpoint& cp) { finite = finite && cp.states.allFinite(); });
    BOOST_TEST(finite, to_string(d));
    BOOST_TEST(st.updates == 2u * 2u * static_cast<std::uint64_t>(m.dimension(d)));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(user_precisions)

SparseMatrix from_dense(const MatrixXd& d) { return d.sparseView(); }

BOOST_AUTO_TEST_CASE(indefinite_and_singular_precisions_raise_the_documented_exceptions) {
  // Indefinite although its diagonal and every 2x2 minor are positive (eigenvalues 1.9, 1.9, -0.8).
  MatrixXd indef(3, 3);
  indef << 1, 0.9, 0.9, 0.9, 1, -0.9, 0.9, -0.9, 1;
  BOOST_CHECK_THROW(CsrKernel{from_dense(indef)}, std::invalid_argument);
  BOOST_CHECK_THROW(CsrKernel(from_dense(indef), SpdCheck::Cholesky), std::invalid_argument);
  BOOST_CHECK_EXCEPTION(CholeskyFactor{from_dense(indef)}, NotPositiveDefinite,
                        [](const NotPositiveDefinite& e) { return e.column() >= 0 && e.column() < 3; });

  // Singular in double precision: 1 + 1e-17 rounds to 1, so the matrix is [[1, 1], [1, 1]].
  MatrixXd sing(2, 2);
  sing << 1, 1, 1, 1 + 1e-17;
  BOOST_CHECK_THROW(CsrKernel{from_dense(sing)}, std::invalid_argument);  // 2x2 minor 1 * 1 - 1^2 = 0
  BOOST_CHECK_THROW(CholeskyFactor{from_dense(sing)}, NotPositiveDefinite);

  // Positive definite but with the smallest eigenvalue at the rounding level of the largest (cond 4e15): the
  // factorization runs to the end, and the pivot check rejects its last pivot.
  MatrixXd near(2, 2);
  near << 1, 1 - 2.5e-16, 1 - 2.5e-16, 1;
  BOOST_CHECK_THROW(CholeskyFactor{from_dense(near)}, NotPositiveDefinite);

  // Near-singular but resolvable (cond 2e8): the inverse is exact to cond * u.
  MatrixXd ok(2, 2);
  const double eps = 1e-8;
  ok << 1, 1 - eps, 1 - eps, 1;
  const CholeskyFactor f(from_dense(ok));
  const double det = 1 - (1 - eps) * (1 - eps);
  const VectorXd var = f.marginal_variances();
  BOOST_TEST(std::abs(var[0] - 1 / det) <= 1e-6 / det);
  BOOST_TEST(std::abs(var[1] - 1 / det) <= 1e-6 / det);
  BOOST_CHECK_NO_THROW(CsrKernel{from_dense(ok)});

  // Non-finite entries are input errors.
  MatrixXd inf = ok;
  inf(0, 0) = INFINITY;
  BOOST_CHECK_THROW(CsrKernel{from_dense(inf)}, std::invalid_argument);
  BOOST_CHECK_THROW(CholeskyFactor{from_dense(inf)}, std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
