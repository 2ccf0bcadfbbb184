#define BOOST_TEST_MODULE experiments
#include <boost/test/unit_test.hpp>

#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/paper/figures.hpp>

#include "test_support.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dualgibbs;

namespace {

ExperimentOptions quick() {
  ExperimentOptions o;
  o.quick = true;
  o.seed = 1;
  return o;
}

/// Every documented column is present and every value of `finite_columns` is finite.
void check_columns(const Table& t, const std::vector<std::string>& documented, const std::vector<std::string>& finite) {
  BOOST_TEST(t.num_rows() > 0u);
  for (const auto& c : documented) BOOST_TEST(t.has_column(c), "missing column " << c);
  for (const auto& c : finite) {
    if (!t.has_column(c)) continue;
    for (double v : t.column(c)) BOOST_TEST(std::isfinite(v), "non-finite value in column " << c);
  }
}

const std::vector<std::string> kConvergenceColumns{
    "sweep",       "Eb_primal",       "Eu_primal",     "Eb_dual",           "Eu_dual",         "time_primal",
    "time_dual",   "Eb_floor_primal", "Eb_floor_dual", "Eb_se_primal",      "Eb_se_dual",      "Eu_se_primal",
    "Eu_se_dual",  "mean_primal",     "mean_dual",     "mean_floor_primal", "mean_floor_dual", "Eu_norm_primal",
    "Eu_norm_dual"};

/// The CSV text of a table parses back to the same header.
void check_csv_header(const Table& t) {
  std::ostringstream os;
  t.write_csv(os);
  const std::string text = os.str();
  const std::string header = text.substr(0, text.find('\n'));
  std::string expected = t.label_column();
  for (const auto& c : t.columns()) expected += (expected.empty() ? "" : ",") + c;
  BOOST_TEST(header == expected);
  BOOST_TEST(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) == t.num_rows() + 1);
}

Eigen::MatrixXd dense_cov_x(const Model& m) {
  const Eigen::MatrixXd q(m.primal_precision());
  return q.llt().solve(Eigen::MatrixXd::Identity(q.rows(), q.cols()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tables)

BOOST_AUTO_TEST_CASE(csv_round_trip_and_errors) {
  Table t({"a", "b"});
  t.add_row({1.0, std::nan("")});
  t.add_row({0.1234567890123, -2e-300});
  std::ostringstream os;
  t.write_csv(os);
  BOOST_TEST(os.str() == "a,b\n1,nan\n0.123456789,-2e-300\n");
  BOOST_CHECK_THROW(t.add_row({1.0}), std::invalid_argument);
  BOOST_CHECK_THROW(t.add_row("x", {1.0, 2.0}), std::invalid_argument);
  BOOST_CHECK_THROW(t.column("c"), std::invalid_argument);
  Table l("graph", {"v"});
  l.add_row("kregular:64,4", {3.0});
  std::ostringstream ol;
  l.write_csv(ol);
  BOOST_TEST(ol.str() == "graph,v\n\"kregular:64,4\",3\n");
  BOOST_CHECK_THROW(l.add_row({1.0}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(unknown_experiment_is_rejected_with_the_list) {
  try {
    run_experiment("fig12", quick());
    BOOST_FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("fig11") != std::string::npos);
  }
  BOOST_TEST(experiment_names().size() == 10u);
  BOOST_CHECK_THROW(experiment_description("nope"), std::invalid_argument);
}

// The figure table is the one list: names, descriptions and run functions, in the paper's order, and the
// name-based entry points read it.
BOOST_AUTO_TEST_CASE(figure_table_drives_names_descriptions_and_dispatch) {
  const std::vector<std::string> expected{"fig5",  "fig6",  "fig7",     "fig8",  "fig9",
                                          "fig10", "fig11", "accuracy", "rates", "accel"};
  BOOST_TEST(experiment_names() == expected, boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(figures().size() == expected.size());
  for (const Figure& f : figures()) {
    BOOST_TEST_CONTEXT(f.name) {
      BOOST_TEST(!f.description.empty());
      BOOST_TEST(f.run != nullptr);
      BOOST_TEST(&find_figure(f.name) == &f);
      BOOST_TEST(experiment_description(f.name) == f.description);
    }
  }
  BOOST_TEST((find_figure("fig6").run == &run_fig6));
  BOOST_TEST((find_figure("rates").run == &run_rates));
  BOOST_TEST((find_figure("accel").run == &run_accel));
  BOOST_CHECK_EXCEPTION(find_figure("fig12"), std::invalid_argument,
                        testing::message_has({"unknown experiment 'fig12' (known: fig5, fig6, fig7, fig8, fig9, fig10, "
                                              "fig11, accuracy, rates, accel)"}));
}

BOOST_AUTO_TEST_CASE(measure_convergence_rejects_bad_settings) {
  const Model m(make_cycle(5), 1.0, 0.5);
  ConvergenceSettings cs;
  cs.chains = 3;
  BOOST_CHECK_THROW(measure_convergence(m, dense_cov_x(m), cs), std::invalid_argument);
  cs.chains = 5;  // halves of 2 and 3: the jackknife would divide 0 by 0
  BOOST_CHECK_THROW(measure_convergence(m, dense_cov_x(m), cs), std::invalid_argument);
  cs.chains = 8;
  cs.sweeps = 0;
  BOOST_CHECK_THROW(measure_convergence(m, dense_cov_x(m), cs), std::invalid_argument);
  cs.sweeps = 2;
  BOOST_CHECK_THROW(measure_convergence(m, Eigen::MatrixXd::Identity(4, 4), cs), std::invalid_argument);
  BOOST_CHECK_THROW(measure_convergence(Model(Graph(3, {}), 1.0, 1.0), Eigen::MatrixXd::Identity(3, 3), cs),
                    std::invalid_argument);
}

// ---- the bad-input audit: every function of experiments.hpp that takes user data -------------

BOOST_AUTO_TEST_CASE(tables_reject_empty_and_repeated_column_names) {
  BOOST_CHECK_EXCEPTION(Table t({"a", "b", "a"}), std::invalid_argument,
                        testing::message_has({"Table: column name 'a' is given twice"}));
  BOOST_CHECK_EXCEPTION(Table t({"a", ""}), std::invalid_argument,
                        testing::message_has({"Table: column 1 has an empty name"}));
  BOOST_CHECK_EXCEPTION(Table t("graph", {"graph"}), std::invalid_argument,
                        testing::message_has({"'graph' is given twice"}));
  BOOST_CHECK_EXCEPTION(Table t("", {"a"}), std::invalid_argument,
                        testing::message_has({"the label column needs a name"}));
  BOOST_TEST(Table(std::vector<std::string>{}).columns().empty());  // no columns: valid, header-only CSV
}

BOOST_AUTO_TEST_CASE(experiments_reject_chain_overrides_below_six_before_any_work) {
  for (const auto& name : experiment_names())
    for (std::size_t chains : {1, 3, 5}) {
      ExperimentOptions o = quick();
      o.chains = chains;
      o.progress = [&](const std::string&, double) { BOOST_FAIL(name << " started work with chains = " << chains); };
      BOOST_CHECK_EXCEPTION(run_experiment(name, o), std::invalid_argument,
                            testing::message_has({name + ": chains = " + std::to_string(chains) + " must be 0"}));
    }
  ExperimentOptions o = quick();
  o.chains = 2;
  // The figure functions check too.
  BOOST_CHECK_EXCEPTION(run_fig6(o), std::invalid_argument, testing::message_has({"at least 6"}));
  BOOST_CHECK_EXCEPTION(run_rates(o), std::invalid_argument, testing::message_has({"at least 6"}));
  BOOST_CHECK_EXCEPTION(experiment_description("fig99"), std::invalid_argument,
                        testing::message_has({"unknown experiment 'fig99' (known: fig5,"}));
}

BOOST_AUTO_TEST_CASE(convergence_rejects_every_bad_setting_and_six_chains_give_finite_numbers) {
  const Model m(make_cycle(5), 1.0, 0.5);
  const Eigen::MatrixXd target = dense_cov_x(m);
  ConvergenceSettings cs;
  cs.chains = 8;
  cs.sweeps = 3;
  auto fails = [&](const ConvergenceSettings& bad, const Eigen::MatrixXd& t, const std::string& part) {
    BOOST_CHECK_EXCEPTION(measure_convergence(m, t, bad), std::invalid_argument, testing::message_has({part}));
  };
  ConvergenceSettings b = cs;
  b.jackknife_groups = 1;
  fails(b, target, "jackknife_groups must be at least 2");
  b = cs;
  b.checkpoint_every = 0;
  fails(b, target, "checkpoint_every = 0");
  b = cs;
  b.init_value = std::nan("");
  fails(b, target, "init_value = nan");
  b = cs;
  b.init = InitialState::Given;  // no given states
  fails(b, target, "given_state has length 0");
  b.given_primal = Eigen::VectorXd::Ones(5);
  b.given_dual = Eigen::VectorXd::Ones(4);  // 5 edges
  fails(b, target, "given_state has length 4");
  Eigen::MatrixXd nan_target = target;
  nan_target(2, 3) = std::nan("");
  fails(cs, nan_target, "target contains NaN");
  fails(cs, Eigen::MatrixXd::Identity(5, 4), "target is 5 x 4");
  BOOST_CHECK_EXCEPTION(run_convergence(Model(Graph(3, {}), 1.0, 1.0), "x", "path", cs), std::invalid_argument,
                        testing::message_has({"no edges"}));

  // 6 chains (the minimum), a checkpoint interval beyond the sweeps, a marginal-variance target: every number of
  // the table is finite.
  cs.chains = 6;
  cs.checkpoint_every = 5;
  const ConvergenceCurves c = measure_convergence(m, target, cs);
  BOOST_TEST(c.primal.size() == 2u);  // sweeps 0 and 3
  const Table t = convergence_table(c);
  for (const auto& row : t.rows())
    for (double v : row) BOOST_TEST(std::isfinite(v));
  cs.checkpoint_every = 1;
  const ExperimentResult r = run_convergence(m, "x", "cycle:5", cs, /*max_full_nodes=*/0);  // <= 0: marginal variances
  BOOST_TEST(r.parameters.size() > 0u);
  for (const auto& row : r.table.rows())
    for (double v : row) BOOST_TEST(std::isfinite(v));

  // Empty curves: an empty table, and rate rows without a fit (NaN with a note), never an exception or a crash.
  const ConvergenceCurves none;
  BOOST_TEST(convergence_table(none).num_rows() == 0u);
  for (const auto& row : compare_rates(m, none)) {
    BOOST_TEST(!row.fit.ok());
    BOOST_TEST(!row.fit.note.empty());
  }
  BOOST_TEST(format_rate_table({}).find("label") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(rate_table_flags_short_fit_windows) {
  // A fit over fewer than 5 points is marked '^' and footnoted; a long one is not. Deterministic.
  RateComparison shortfit, longfit;
  shortfit.label = "short";
  shortfit.fitted_from = longfit.fitted_from = "Eu";
  shortfit.predicted = longfit.predicted = 0.2;
  shortfit.fit.neg_log_rate = 0.3;
  shortfit.fit.first_sweep = 1;
  shortfit.fit.last_sweep = 3;
  shortfit.fit.points = 3;
  longfit.label = "long";
  longfit.fit = shortfit.fit;
  longfit.fit.last_sweep = 40;
  longfit.fit.points = 40;
  const std::string both = format_rate_table({shortfit, longfit});
  BOOST_TEST(both.find("1..3^") != std::string::npos);
  BOOST_TEST(both.find("1..40^") == std::string::npos);
  BOOST_TEST(both.find("^:    a window of fewer than 5 points") != std::string::npos);
  BOOST_TEST(format_rate_table({longfit}).find("^:") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_figure_without_a_clean_fit_window_says_so) {
  // Two sweeps leave no window of 3 points: the fitted-rate columns are NaN (documented: no fit), and the result
  // carries a note for every missing fit instead of a number.
  ExperimentOptions o = quick();
  o.chains = 6;
  o.sweeps = 2;
  const ExperimentResult r = run_experiment("fig10", o);
  for (double v : r.table.column("rate_primal")) BOOST_TEST(std::isnan(v));
  for (double v : r.table.column("theory_primal")) BOOST_TEST(std::isfinite(v));
  std::size_t missing = 0;
  for (const auto& row : r.rates) missing += !row.fit.ok();
  std::size_t notes = 0;
  for (const auto& n : r.notes) notes += n.rfind("no ", 0) == 0 && n.find(" fit for '") != std::string::npos;
  BOOST_TEST(missing > 0u);
  BOOST_TEST(notes == missing);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(figures_quick)

BOOST_AUTO_TEST_CASE(fig5_variance_conservation) {
  const ExperimentResult r = run_experiment("fig5", quick());
  check_columns(r.table, {"replicate", "error"}, {"replicate", "error"});
  check_csv_header(r.table);
  BOOST_TEST(r.table.num_rows() == 1000u);
  BOOST_REQUIRE(r.extra_tables.size() == 1u);
  const Table& m = r.extra_tables[0].second;
  check_columns(m, {"i", "j", "primal", "dual", "residual", "dual_exact"},
                {"primal", "dual", "residual", "dual_exact"});
  BOOST_TEST(m.num_rows() == 64u * 64u);
  double exact_identity = -1, boot = -1, expected = -1;
  for (const auto& [k, v] : r.summary) {
    if (k == "exact_identity_max_abs") exact_identity = v;
    if (k == "bootstrap_mean") boot = v;
    if (k == "expected_bootstrap_mean_approx") expected = v;
  }
  // Prop. 2 on the exact matrices (independent of the samples).
  BOOST_TEST(exact_identity < 1e-12);
  // The residual is sampling noise of the expected size: ||Delta||_F^2 sums 4096 entries, so its relative
  // sd is ~2% and the bootstrap mean of 1000 replicates is sharper still; 15% is > 5 sd.
  BOOST_TEST(std::abs(boot / expected - 1.0) < 0.15);
}

BOOST_AUTO_TEST_CASE(fig6_matches_the_paper_at_sweep_zero) {
  const ExperimentResult r = run_experiment("fig6", quick());
  check_columns(r.table, kConvergenceColumns, kConvergenceColumns);
  check_csv_header(r.table);
  BOOST_TEST(r.table.num_rows() == 41u);
  // Constant start: every chain equal, so S^ = 0 (primal) and S^ = D_s (dual) exactly, and Eu(0) is
  // ||S||_F^2 and ||D_s - S||_F^2. Oracle: a dense inverse here; the paper's own result file
  // (results/convergence_torus10.csv) has 1.004199105 and 98.18285194.
  const Model m(make_torus(10, 10), 1.0, 0.1);
  const Eigen::MatrixXd S = dense_cov_x(m);
  const double p0 = r.table.column("Eu_primal")[0], d0 = r.table.column("Eu_dual")[0];
  BOOST_TEST(p0 == S.squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(d0 == (Eigen::MatrixXd::Identity(100, 100) - S).squaredNorm(), boost::test_tools::tolerance(1e-10));
  BOOST_TEST(p0 == 1.004199105, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(d0 == 98.18285194, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.table.column("sweep").back() == 40.0);
  BOOST_TEST(r.rates.size() == 4u);
}

BOOST_AUTO_TEST_CASE(fig8_as_published_starts_where_the_authors_file_does) {
  // --as-published fig8: sigma = 0.3 and random starts N(0, 4 diag(M)^-1). The split-half Eu at sweep 0 is
  // unbiased for ||4 diag(Q)^-1 - Q^-1||_F^2 (dense oracle: 1.2544; the authors' scan_torus10.csv has 1.2530;
  // scale 1 would give 1.1133, 33 Eu_se away at these 1000 chains). Tolerance 7 Eu_se: with Eu_se from 2 x 16
  // jackknife groups (about t with 30 degrees of freedom), false failure P(|t_30| > 7) = 9e-8 per scan, 3e-7
  // for the three scans' primal columns.
  ExperimentOptions o = quick();
  o.as_published = true;
  const ExperimentResult r = run_experiment("fig8", o);
  const Model m(make_torus(10, 10), 1.0, 0.3);
  const Eigen::MatrixXd q(m.primal_precision());
  const Eigen::MatrixXd start = (4.0 * q.diagonal().cwiseInverse()).asDiagonal();
  const double expected = (start - dense_cov_x(m)).squaredNorm();
  BOOST_TEST(expected == 1.2544, boost::test_tools::tolerance(1e-4));
  for (const char* scan : {"random", "permutation", "fixed"}) {
    const double eu = r.table.column(std::string("Eu_primal_") + scan)[0];
    const double se = r.table.column(std::string("Eu_se_primal_") + scan)[0];
    BOOST_TEST(std::abs(eu - expected) < 7.0 * se,
               scan << ": Eu(0) " << eu << " +- " << se << ", expected " << expected);
  }
  auto param = [&](const std::string& key) {
    for (const auto& kv : r.parameters)
      if (kv.first == key) return kv.second;
    return std::string("(missing)");
  };
  BOOST_TEST(param("preset") ==
             "as-published (torus edges in the authors' networkx order, which the fixed scan "
             "follows)");
  BOOST_TEST(param("sigma") == "0.3");
  BOOST_TEST(param("init") == "random");
  BOOST_TEST(param("init_scale") == "2");
  // The paper-text preset is the default and says so.
  BOOST_TEST(run_experiment("fig10", quick()).parameters.front().second == "paper-text");
  // fig10 as published: the Eu curves start where those of the authors' ratio_sweep_K5_Eu.csv did, N(0, 4 diag(M)^-1).
  const ExperimentResult k5 = run_experiment("fig10", o);
  auto k5_param = [&](const std::string& key) {
    for (const auto& kv : k5.parameters)
      if (kv.first == key) return kv.second;
    return std::string("(missing)");
  };
  BOOST_TEST(k5_param("init") == "random");
  BOOST_TEST(k5_param("init_scale") == "2");
  // and the mean-file fits run from the authors' constant start.
  BOOST_TEST(k5_param("mean_file_fit_init").find("10/sqrt(5)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(start_overrides_are_checked_before_any_work) {
  ExperimentOptions o = quick();
  o.init_scale = 2.0;  // the paper-text fig6 starts at the constant 1: a scale makes no sense
  BOOST_CHECK_THROW(run_experiment("fig6", o), std::invalid_argument);
  o.init = InitialState::Random;
  o.init_scale = -1.0;
  BOOST_CHECK_THROW(run_experiment("fig6", o), std::invalid_argument);
  o.init = InitialState::Given;
  o.init_scale.reset();
  BOOST_CHECK_THROW(run_experiment("fig6", o), std::invalid_argument);
  o.init = InitialState::Constant;
  o.init_value = std::numeric_limits<double>::infinity();
  BOOST_CHECK_THROW(run_experiment("fig6", o), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(fig7_band) {
  const ExperimentResult r = run_experiment("fig7", quick());
  const std::vector<std::string> cols{"sweep",      "Eu_primal_mean", "Eu_primal_lo", "Eu_primal_hi", "Eu_dual_mean",
                                      "Eu_dual_lo", "Eu_dual_hi",     "time_primal",  "time_dual"};
  check_columns(r.table, cols, cols);
  check_csv_header(r.table);
  BOOST_TEST(r.table.column("Eu_primal_mean")[0] == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.table.column("Eu_dual_lo")[0] == 1.0, boost::test_tools::tolerance(1e-12));
  for (double lohi : r.table.column("Eu_dual_hi")) BOOST_TEST(std::isfinite(lohi));
  BOOST_REQUIRE(r.extra_tables.size() == 1u);
  BOOST_TEST(r.extra_tables[0].second.num_rows() == 6u);
}

BOOST_AUTO_TEST_CASE(fig8_scan_orders) {
  const ExperimentResult r = run_experiment("fig8", quick());
  std::vector<std::string> cols{"sweep"};
  for (const char* scan : {"random", "permutation", "fixed"})
    for (const char* c : {"Eu_primal_", "Eu_dual_", "Eu_se_primal_", "Eu_se_dual_", "Eb_primal_", "Eb_dual_"})
      cols.push_back(std::string(c) + scan);
  check_columns(r.table, cols, cols);
  check_csv_header(r.table);
  BOOST_TEST(r.table.num_rows() == 31u);
}

BOOST_AUTO_TEST_CASE(fig9_k_regular) {
  const ExperimentResult r = run_experiment("fig9", quick());
  std::vector<std::string> cols{"sweep"};
  for (int k : {2, 4, 8, 16, 32})
    for (const char* c :
         {"Eu_primal_k", "Eu_dual_k", "Eu_se_primal_k", "Eu_se_dual_k", "Eu_norm_primal_k", "Eu_norm_dual_k"})
      cols.push_back(c + std::to_string(k));
  check_columns(r.table, cols, cols);
  check_csv_header(r.table);
  BOOST_REQUIRE(r.extra_tables.size() == 1u);
  const Table& th = r.extra_tables[0].second;
  check_columns(
      th,
      {"k", "lambda2", "pred_primal", "closed_primal", "pred_dual", "closed_dual", "pred_dual_eff", "closed_dual_eff",
       "fit_primal", "fit_dual"},
      {"k", "lambda2", "pred_primal", "closed_primal", "pred_dual", "closed_dual", "pred_dual_eff", "closed_dual_eff"});
  // Spectra against the closed forms: Prop. 1, 4, 5 hold exactly for homogeneous k-regular graphs.
  for (std::size_t i = 0; i < th.num_rows(); ++i) {
    BOOST_TEST(th.column("pred_primal")[i] == th.column("closed_primal")[i], boost::test_tools::tolerance(1e-8));
    BOOST_TEST(th.column("pred_dual")[i] == th.column("closed_dual")[i], boost::test_tools::tolerance(1e-8));
    BOOST_TEST(th.column("pred_dual_eff")[i] == th.column("closed_dual_eff")[i], boost::test_tools::tolerance(1e-8));
  }
  // Prop. 1 by hand: -ln r_p = -64 ln(1 - sigma^2 / (sigma^2 + k s^2) / 64), s = 1, sigma = 0.25.
  for (std::size_t i = 0; i < th.num_rows(); ++i) {
    const double k = th.column("k")[i];
    BOOST_TEST(th.column("closed_primal")[i] == -64.0 * std::log1p(-0.0625 / (0.0625 + k) / 64.0),
               boost::test_tools::tolerance(1e-12));
  }
}

BOOST_AUTO_TEST_CASE(fig10_complete_graph_theory) {
  const ExperimentResult r = run_experiment("fig10", quick());
  const std::vector<std::string> cols{"ratio",
                                      "s",
                                      "sigma",
                                      "rate_primal",
                                      "rate_dual",
                                      "rate_primal_mean",
                                      "rate_dual_mean",
                                      "theory_primal",
                                      "theory_dual",
                                      "theory_dual_eff",
                                      "asym_primal",
                                      "asym_dual_eff",
                                      "limit_dual_eff",
                                      "closed_primal",
                                      "closed_dual_eff",
                                      "window_end_primal",
                                      "window_end_dual",
                                      "rate_primal_file_fit",
                                      "rate_dual_file_fit",
                                      "rate_primal_mean_file_fit",
                                      "rate_dual_mean_file_fit"};
  check_columns(r.table, cols,
                {"ratio", "s", "sigma", "theory_primal", "theory_dual", "theory_dual_eff", "asym_primal",
                 "asym_dual_eff", "limit_dual_eff"});
  check_csv_header(r.table);
  BOOST_TEST(r.table.num_rows() == 5u);
  // Table I: lambda_2(K5) = 5, so the limit is 2.5; the finite-|E| effective rate [eqn:effectiverate1]
  // by hand: -10 ln(1 - (sigma^2 + 5 s^2) / (sigma^2 + 2 s^2) / 10).
  for (std::size_t i = 0; i < r.table.num_rows(); ++i) {
    const double s = r.table.column("s")[i], sg = r.table.column("sigma")[i];
    BOOST_TEST(r.table.column("limit_dual_eff")[i] == 2.5, boost::test_tools::tolerance(1e-9));
    const double eff = -10.0 * std::log1p(-(sg * sg + 5 * s * s) / (sg * sg + 2 * s * s) / 10.0);
    BOOST_TEST(r.table.column("theory_dual_eff")[i] == eff, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(s * s == r.table.column("ratio")[i], boost::test_tools::tolerance(1e-12));
  }
  // The primal mean decays exactly at r_p (the constant vector is A's top eigenvector on a regular graph):
  // where it is fitted, it agrees with the spectral rate. The quick run's fit is noisy at the two smallest ratios
  // s^2 / sigma^2 (0.01 and 0.1: the mean decays slowly against the noise): over seeds 1 to 6, with the random
  // streams of an earlier version and of this one, the relative error there reached 21%, and at most 2.6%
  // at ratios 1, 10 and 100. Bounds 35% and 6%.
  const auto fit = r.table.column("rate_primal_mean"), th = r.table.column("theory_primal");
  int fitted = 0;
  for (std::size_t i = 0; i < fit.size(); ++i)
    if (std::isfinite(fit[i])) {
      ++fitted;
      BOOST_TEST(std::abs(fit[i] / th[i] - 1.0) < (r.table.column("ratio")[i] < 0.5 ? 0.35 : 0.06));
    }
  BOOST_TEST(fitted >= 3);
}

BOOST_AUTO_TEST_CASE(fig11_marginal_variances) {
  const ExperimentResult r = run_experiment("fig11", quick());
  check_columns(r.table, kConvergenceColumns, kConvergenceColumns);
  check_csv_header(r.table);
  BOOST_TEST(r.table.num_rows() == 21u);
  double cross = -1;
  for (const auto& [k, v] : r.summary)
    if (k == "closed_form_vs_selected_inversion_max_abs") cross = v;
  BOOST_TEST(cross >= 0);
  BOOST_TEST(cross < 1e-10);
  // Constant start: every marginal variance estimate is 0 (primal) or s^2 = 1 (dual) at sweep 0, so
  // Eu(0) = |V| nu^2 and |V| (1 - nu)^2 with nu the closed form.
  double nu = 0;
  for (const auto& [k, v] : r.summary)
    if (k == "marginal_variance_closed_form") nu = v;
  BOOST_TEST(r.table.column("Eu_primal")[0] == 900.0 * nu * nu, boost::test_tools::tolerance(1e-10));
  BOOST_TEST(r.table.column("Eu_dual")[0] == 900.0 * (1 - nu) * (1 - nu), boost::test_tools::tolerance(1e-10));
}

BOOST_AUTO_TEST_CASE(rates_benchmark) {
  const ExperimentResult r = run_experiment("rates", quick());
  const std::vector<std::string> cols{"nodes",
                                      "edges",
                                      "ratio",
                                      "lambda2",
                                      "pred_primal",
                                      "pred_dual",
                                      "pred_dual_eff",
                                      "closed_primal",
                                      "closed_dual",
                                      "closed_dual_eff",
                                      "fit_primal_mean",
                                      "fit_dual_mean",
                                      "fit_dual_eff_mean",
                                      "fit_primal_Eu",
                                      "fit_dual_Eu",
                                      "rel_primal",
                                      "rel_dual",
                                      "rel_dual_eff",
                                      "sweeps"};
  check_columns(r.table, cols,
                {"nodes", "edges", "ratio", "lambda2", "pred_primal", "pred_dual", "fit_primal_mean", "fit_dual_mean",
                 "rel_primal", "rel_dual", "sweeps"});
  check_csv_header(r.table);
  BOOST_TEST(r.table.label_column() == "graph");
  std::set<std::string> families;
  for (const auto& l : r.table.labels()) families.insert(l.substr(0, l.find(':')));
  BOOST_TEST(families.size() == 6u);
  // Cross-validation of the samplers against the spectra: the ensemble mean decays at r_p (primal) and
  // r_d (dual y~) in every family (measured within 3.8%; 15% bound).
  for (double rel : r.table.column("rel_primal")) BOOST_TEST(std::abs(rel) < 0.15);
  for (double rel : r.table.column("rel_dual")) BOOST_TEST(std::abs(rel) < 0.15);
}

// reproduce accel, quick: on each of its two graphs six series (gibbs, ssor, cheby-ssor x primal, dual),
// each from relative error 1 at iteration 0 with non-decreasing sweep-equivalents and CPU seconds, and the fitted
// mean decay beside the prediction. The fitted -ln r of cheby-ssor (primal and dual x~) and of primal Gibbs against
// the spectral predictions: over seeds 1..16 of the quick run on torus:16 the relative differences had sd 0.006
// (cheby-ssor) and 0.002 (Gibbs), max 0.016 (seeds 1..12 of the two-graph run: max 0.021, sd at most 0.0064); the
// bounds 0.1 and 0.05 are over 15 sd (under a normal approximation, false failure < 1e-9 per check). The covariance
// error starts at exactly 1 (every chain at 0, the ensemble variance 0) and, for cheby-ssor, ends near 0: over seeds
// 1..12 (48 final values) mean -0.0004, sd 0.020, max |.| 0.057; the bound 0.25 is over 12 sd (false failure
// < 1e-9 per check). CHOLMOD's exact draws are timed for both domains of both graphs.
BOOST_AUTO_TEST_CASE(accel_figure) {
  const ExperimentResult r = run_experiment("accel", quick());
  check_columns(r.table,
                {"iteration", "sweep_equivalents", "cpu_seconds", "mean_error", "mean_floor", "predicted_error"},
                {"iteration", "sweep_equivalents", "cpu_seconds", "mean_error", "mean_floor", "predicted_error"});
  check_csv_header(r.table);
  BOOST_TEST(r.table.label_column() == "series");
  BOOST_REQUIRE(r.extra_tables.size() == 3u);
  BOOST_TEST(r.extra_tables[0].first == "rates");
  BOOST_TEST(r.extra_tables[1].first == "covariance");
  BOOST_TEST(r.extra_tables[2].first == "exact");
  const Table& cov = r.extra_tables[1].second;
  const auto& labels = r.table.labels();
  const auto it = r.table.column("iteration"), sweeps = r.table.column("sweep_equivalents"),
             err = r.table.column("mean_error"), cpu = r.table.column("cpu_seconds");
  const auto& cov_labels = cov.labels();
  const auto cov_it = cov.column("iteration"), cov_err = cov.column("cov_error"), cov_floor = cov.column("cov_floor");
  for (const std::string graph : {"torus:16", "kregular:256,4"}) {
    for (const std::string s :
         {"gibbs primal", "ssor primal", "cheby-ssor primal", "gibbs dual", "ssor dual", "cheby-ssor dual"}) {
      const std::string label = graph + " " + s;
      BOOST_TEST_CONTEXT(label) {
        const auto first = std::find(labels.begin(), labels.end(), label);
        BOOST_TEST_REQUIRE((first != labels.end()));
        const auto i = static_cast<std::size_t>(first - labels.begin());
        BOOST_TEST(it[i] == 0.0);
        BOOST_TEST(err[i] == 1.0);
        BOOST_TEST(sweeps[i + 1] == (s.rfind("gibbs", 0) == 0 ? 1.0 : 2.0));
        for (std::size_t k = i + 1; k < labels.size() && labels[k] == label; ++k) BOOST_TEST(cpu[k] >= cpu[k - 1]);
        const auto c0 = std::find(cov_labels.begin(), cov_labels.end(), label);
        BOOST_TEST_REQUIRE((c0 != cov_labels.end()));
        const auto j = static_cast<std::size_t>(c0 - cov_labels.begin());
        BOOST_TEST(cov_it[j] == 0.0);
        BOOST_TEST(cov_err[j] == 1.0);
        std::size_t last = j;
        while (last + 1 < cov_labels.size() && cov_labels[last + 1] == label) ++last;
        BOOST_TEST(last > j + 5);
        if (s.rfind("cheby-ssor", 0) == 0) BOOST_TEST(std::abs(cov_err[last]) < 0.25);
        BOOST_TEST(cov_floor[last] >= 0.0);
      }
    }
  }
  const Table& exact = r.extra_tables[2].second;
  BOOST_TEST(exact.labels().size() == 4u);
  for (double t : exact.column("cpu_seconds_per_draw")) BOOST_TEST(t > 0.0);
  BOOST_TEST(r.rates.size() == 12u);
  for (const RateComparison& row : r.rates) {
    BOOST_TEST_CONTEXT(row.label) {
      BOOST_TEST(row.fitted_from == "mean");
      BOOST_TEST(std::isfinite(row.predicted));
      if (row.label.find(" cheby-ssor ") != std::string::npos) {
        BOOST_TEST(row.predicted_by == "cheby-ssor");
        BOOST_TEST(std::abs(row.relative_disagreement()) < 0.1);
      }
      if (row.label == "torus:16 gibbs primal") BOOST_TEST(std::abs(row.relative_disagreement()) < 0.05);
    }
  }
}

BOOST_AUTO_TEST_CASE(same_seed_same_numbers) {
  ExperimentOptions o = quick();
  o.threads = 1;
  const ExperimentResult a = run_experiment("fig10", o);
  o.threads = 2;
  const ExperimentResult b = run_experiment("fig10", o);
  for (const char* c : {"rate_primal", "rate_dual", "rate_primal_mean"}) {
    const auto x = a.table.column(c), y = b.table.column(c);
    for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST((x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))));
  }
}

BOOST_AUTO_TEST_SUITE_END()
