// Validation of a sampler's draws against the exact truth: per-coordinate tests (mean, marginal variance,
// edge differences), batch means for successive states, the split-half error, and a Bonferroni verdict. See
// validate.hpp and docs/validate.md.
#include <dualgibbs/estimation/validate.hpp>

#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/number_text.hpp>

#include "core/enum_names.hpp"
#include "estimation/run_tasks.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace dualgibbs {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Groups of independent draws for the global test's batch means (t with 63 degrees of freedom).
constexpr std::size_t kGlobalGroups = 64;
constexpr std::size_t kMinGroupDraws = 16;
// Smallest p-value carried through the normal quantile (below it the score saturates at |z| ~ 37.5).
constexpr double kMinP = 1e-300;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("validate_draws: " + what); }

std::string str(double v) { return number_text(v, 6); }  // as an ostream with its default precision

// The distributions with Boost's default policy (double promoted to long double inside): faster double-only
// evaluation was tried and overflows in tgamma for extreme arguments (a zero sample variance of 2000 draws).
using Normal = boost::math::normal_distribution<double>;
using ChiSquared = boost::math::chi_squared_distribution<double>;
using StudentsT = boost::math::students_t_distribution<double>;

// The signed two-sided normal score of a two-sided p-value.
double normal_score(double p, bool positive) {
  const double q = std::clamp(p, kMinP, 1.0) / 2;
  const double z = q >= 0.5 ? 0.0 : boost::math::quantile(boost::math::complement(Normal(), q));
  return positive ? z : -z;
}

// A test's outcome: two-sided p-value and signed equivalent normal score.
struct Outcome {
  double p = 1;
  double z = 0;
};

Outcome normal_test(double z) {
  if (!std::isfinite(z)) return {0.0, z};
  return {std::min(1.0, 2 * boost::math::cdf(boost::math::complement(Normal(), std::abs(z)))), z};
}

// (n - 1) S^2 / var ~ chi^2_{n-1} under the null; two-sided.
Outcome chi2_test(double ratio, double dof) {
  const ChiSquared dist(dof);
  const double x = ratio * dof;
  // One tail only: the smaller one is on the side of the ratio (below or above the median, about dof - 2/3).
  const bool above = x > dof - 2.0 / 3.0;
  const double tail = above ? boost::math::cdf(boost::math::complement(dist, x)) : boost::math::cdf(dist, x);
  const double p = std::min(1.0, 2 * tail);
  return {p, normal_score(p, above)};
}

// Student t with `dof` degrees of freedom (batch means); two-sided.
Outcome t_test(double estimate, double exact, double se, double dof) {
  if (!(se > 0)) {
    if (estimate == exact) return {1.0, 0.0};
    return {0.0, normal_score(0.0, estimate > exact)};
  }
  const double t = (estimate - exact) / se;
  const double p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(StudentsT(dof), std::abs(t))));
  return {p, normal_score(p, t > 0)};
}

ZSummary summarize(const Eigen::VectorXd& z, const std::vector<char>& tested) {
  ZSummary s;
  double sum2 = 0;
  std::size_t count = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    if (!tested[static_cast<std::size_t>(i)]) continue;
    sum2 += z[i] * z[i];
    ++count;
    if (s.argmax < 0 || std::abs(z[i]) > s.max_abs) {
      s.max_abs = std::abs(z[i]);
      s.argmax = static_cast<Index>(i);
    }
  }
  s.rms = count ? std::sqrt(sum2 / static_cast<double>(count)) : 0.0;
  return s;
}

// Batches of successive states: [start, end) column ranges inside each chain, about `target` in all.
std::vector<std::pair<std::size_t, std::size_t>> make_batches(const std::vector<std::size_t>& offsets,
                                                              std::size_t target) {
  const std::size_t n = offsets.back();
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t k = 0; k + 1 < offsets.size(); ++k) {
    const std::size_t len = offsets[k + 1] - offsets[k];
    const double share = static_cast<double>(target) * static_cast<double>(len) / static_cast<double>(n);
    const std::size_t b = std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(share)), 1, len);
    for (std::size_t i = 0; i < b; ++i) out.emplace_back(offsets[k] + i * len / b, offsets[k] + (i + 1) * len / b);
  }
  return out;
}

// Standard error of a mean from batch means m_b with weights w_b = len_b / n:
// se^2 = B / (B - 1) sum_b w_b^2 (m_b - m)^2 (the usual sum (m_b - m)^2 / (B (B - 1)) for equal batches).
struct BatchAccumulator {
  Eigen::MatrixXd sums;  // values x batches: per-batch sums of the statistic
  std::vector<double> lengths;
};

Eigen::VectorXd batch_standard_errors(const BatchAccumulator& acc, const Eigen::VectorXd& overall, double n) {
  const Eigen::Index batches = acc.sums.cols();
  Eigen::VectorXd v = Eigen::VectorXd::Zero(overall.size());
  for (Eigen::Index b = 0; b < batches; ++b) {
    const double len = acc.lengths[static_cast<std::size_t>(b)];
    const double w = len / n;
    v.array() += w * w * (acc.sums.col(b).array() / len - overall.array()).square();
  }
  const double bb = static_cast<double>(batches);
  return (v * (bb / (bb - 1))).cwiseSqrt();
}

void check_truth(const Model& model, DrawKind kind, const ExactTruth& truth, Index dim) {
  if (truth.variance.size() != dim)
    fail("the exact variances have length " + std::to_string(truth.variance.size()) + ", expected " +
         std::to_string(dim) + " (" + to_string(kind) + ")");
  for (Index i = 0; i < dim; ++i)
    if (!std::isfinite(truth.variance[i]) || truth.variance[i] < 0)
      fail("exact variance of coordinate " + std::to_string(i) + " is " + str(truth.variance[i]) +
           " (must be finite and non-negative)");
  if (truth.mean.size() != 0 && truth.mean.size() != dim)
    fail("the exact mean has length " + std::to_string(truth.mean.size()) + ", expected " + std::to_string(dim));
  if (truth.mean.size() != 0 && !truth.mean.allFinite()) fail("the exact mean has a NaN or infinite entry");
  if (truth.edge_covariance.size() == 0) return;
  if (!is_node_kind(kind))
    fail("edge covariances apply to draws over nodes (primal, dual-x), not to " + std::string(to_string(kind)));
  if (truth.edge_covariance.size() != model.num_edges())
    fail("the exact edge covariances have length " + std::to_string(truth.edge_covariance.size()) + ", expected " +
         std::to_string(model.num_edges()) + " (one per edge)");
  for (Index e = 0; e < model.num_edges(); ++e) {
    const Edge& ed = model.graph().edge(e);
    const double vd = truth.variance[ed.head] + truth.variance[ed.tail] - 2 * truth.edge_covariance[e];
    if (!std::isfinite(truth.edge_covariance[e]) || !(vd > 0))
      fail("edge " + std::to_string(e) + " (" + std::to_string(ed.head) + ", " + std::to_string(ed.tail) +
           "): exact covariance " + str(truth.edge_covariance[e]) + " gives Var(c_u - c_v) = " + str(vd) +
           " (must be positive)");
  }
}

void check_checkpoint(const DrawCheckpoint& cp, std::size_t index, Index dim, DrawKind kind) {
  const std::string where = "checkpoint " + std::to_string(index);
  if (cp.draws.rows() != dim)
    fail(where + ": draws have " + std::to_string(cp.draws.rows()) + " coordinates, expected " + std::to_string(dim) +
         " for " + to_string(kind) + (is_node_kind(kind) ? " (one per node)" : " (one per edge)"));
  const auto n = static_cast<std::size_t>(cp.draws.cols());
  if (n < kMinValidationDraws)
    fail(where + ": " + std::to_string(n) + " draws, need at least " + std::to_string(kMinValidationDraws) +
         " (two halves of three for the split-half error)");
  // Non-finite values are located by DrawValidator::add() as it sums (no extra pass here).
  if (!cp.chain_offsets.empty()) {
    const auto& o = cp.chain_offsets;
    if (o.size() < 2 || o.front() != 0 || o.back() != n)
      fail(where + ": chain_offsets must start at 0 and end at the number of draws (" + std::to_string(n) + ")");
    for (std::size_t k = 0; k + 1 < o.size(); ++k)
      if (o[k + 1] <= o[k]) fail(where + ": chain_offsets must increase strictly");
  }
  if (!std::isnan(cp.sweep) && !std::isfinite(cp.sweep)) fail(where + ": the sweep is infinite");
}

struct TestSink {
  std::vector<ValidationOffender>& all;
  CheckpointValidation& out;
  void add(const ValidationOffender& o) {
    ++out.tests;
    out.min_p = std::min(out.min_p, o.p);
    all.push_back(o);
  }
};

bool worse(const ValidationOffender& a, const ValidationOffender& b) {
  if (a.p != b.p) return a.p < b.p;
  return std::abs(a.z) > std::abs(b.z);
}

}  // namespace

namespace {
constexpr detail::EnumName<DrawKind> kDrawKindNames[] = {
    {DrawKind::Primal, "primal"}, {DrawKind::DualEdges, "dual-y"}, {DrawKind::DualNodes, "dual-x"}};
constexpr detail::EnumName<ValidationTest> kValidationTestNames[] = {{ValidationTest::Mean, "mean"},
                                                                     {ValidationTest::Variance, "variance"},
                                                                     {ValidationTest::EdgeDifference, "edge"},
                                                                     {ValidationTest::Global, "global"}};
}  // namespace

const char* to_string(DrawKind kind) noexcept { return detail::enum_name(kDrawKindNames, kind); }

DrawKind parse_draw_kind(const std::string& name) { return detail::parse_enum(kDrawKindNames, name, "draw domain"); }

Index draw_dimension(const Model& model, DrawKind kind) noexcept {
  return kind == DrawKind::DualEdges ? model.num_edges() : model.num_nodes();
}

const char* to_string(ValidationTest test) noexcept { return detail::enum_name(kValidationTestNames, test); }

ExactTruth node_truth_from_selected_inverse(const Model& model, const SparseMatrix& inverse_on_pattern) {
  const Index n = model.num_nodes();
  if (inverse_on_pattern.rows() != n || inverse_on_pattern.cols() != n)
    throw std::invalid_argument(
        "node_truth_from_selected_inverse: the matrix is " + std::to_string(inverse_on_pattern.rows()) + " x " +
        std::to_string(inverse_on_pattern.cols()) + ", expected " + std::to_string(n) + " x " + std::to_string(n));
  ExactTruth t;
  t.variance = inverse_on_pattern.diagonal();
  t.edge_covariance.resize(model.num_edges());
  for (Index e = 0; e < model.num_edges(); ++e) {
    const Edge& ed = model.graph().edge(e);
    t.edge_covariance[e] = inverse_on_pattern.coeff(ed.head, ed.tail);
  }
  return t;
}

ExactTruth dual_node_truth_from_primal(const Model& model, const ExactTruth& primal) {
  const Index n = model.num_nodes();
  if (primal.variance.size() != n)
    throw std::invalid_argument("dual_node_truth_from_primal: " + std::to_string(primal.variance.size()) +
                                " variances for " + std::to_string(n) + " nodes");
  if (primal.edge_covariance.size() != 0 && primal.edge_covariance.size() != model.num_edges())
    throw std::invalid_argument("dual_node_truth_from_primal: " + std::to_string(primal.edge_covariance.size()) +
                                " edge covariances for " + std::to_string(model.num_edges()) + " edges");
  if (primal.mean.size() != 0)
    throw std::invalid_argument("dual_node_truth_from_primal: the primal truth has a mean (zero-mean models only)");
  const Eigen::VectorXd& s2 = model.node_variances();
  ExactTruth t;
  t.variance = (s2.cwiseInverse() - primal.variance.cwiseQuotient(s2.cwiseAbs2())).cwiseMax(0.0);
  for (Index v = 0; v < n; ++v)
    if (model.graph().degree(v) == 0) t.variance[v] = 0;  // x~_v = 0 exactly; not a rounding residue
  if (primal.edge_covariance.size() != 0) {
    t.edge_covariance.resize(model.num_edges());
    for (Index e = 0; e < model.num_edges(); ++e) {
      const Edge& ed = model.graph().edge(e);
      t.edge_covariance[e] = -primal.edge_covariance[e] / (s2[ed.head] * s2[ed.tail]);
    }
  }
  return t;
}

// ---- DrawValidator ----------------------------------------------------------------------------------

namespace {
// Draws per piece of a block: the piece is transposed (coordinate-major) so that every edge difference is a
// contiguous vector over draws. Short pieces keep the transposed piece in cache (measured on 10^4 draws of a 10^4-node
// model: 128 draws 0.76, 32 draws 0.51, 16 draws 0.38, 8 draws 0.36 CPU s); at most 2^21 doubles (16 MB).
constexpr std::size_t kScratchValues = std::size_t{1} << 21;
constexpr std::size_t kMaxPiece = 16;
constexpr std::size_t kLanes = 2;  // pieces of a block are dealt to this many lanes (threads), whatever the hardware
}  // namespace

struct DrawValidator::Impl {
  const Model* model = nullptr;
  DrawKind kind = DrawKind::Primal;
  ExactTruth truth;
  ValidateOptions options;
  unsigned budget = 1;  // the threads the work of a block may use (ValidateOptions::threads, resolved)
  Index dim = 0;
  Index num_edges = 0;  // edges tested (0 without edge covariances)
  bool with_edges = false;
  Eigen::VectorXd mu, var_d, inv_var;
  double k_tested = 0;
  std::vector<char> tested, edge_tested;
  std::vector<Index> heads, tails;
  std::unique_ptr<CovarianceErrorTracker> tracker;
  ValidationReport report;
  std::vector<ValidationOffender> worst;
  bool short_batches = false;
  bool spent = false;

  // The open checkpoint.
  bool open = false;
  double sweep = kNaN;
  std::size_t n = 0, seen = 0;
  std::vector<std::size_t> chain_offsets;
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  std::vector<std::size_t> tracker_offsets;
  std::vector<std::size_t> bounds;  // segments [bounds[s], bounds[s + 1]): every batch and tracker group is a union
  std::size_t segment = 0;
  Eigen::VectorXd centre;
  bool centred = false;
  // Per segment: sums of (x - centre), (x - centre)^2, (edge difference - its centre)^2, and of the global
  // statistic's per-draw values; per lane while the checkpoint is open, the lanes' total when it closes.
  struct Sums {
    Eigen::MatrixXd s1, s2, e2;
    std::vector<double> gs;
  };
  // A lane: every kLanes-th piece of a block, on its own thread, with its own sums and scratch, so that the
  // numbers depend on the blocks but not on the thread count.
  struct Lane {
    Sums sums;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> xt;  // dim x piece: x - centre
    Eigen::VectorXd g;                                                          // per draw of the piece
  };
  std::array<Lane, kLanes> lanes;
  Eigen::MatrixXd s1, s2, e2;
  std::vector<double> gs;
  std::size_t piece = kMaxPiece;

  std::string where() const { return "checkpoint " + std::to_string(report.checkpoints.size()); }
  // Adds the draws x (in one segment) to a lane's sums; false if a value is not finite or a square overflows.
  bool accumulate(const Eigen::Ref<const Eigen::MatrixXd>& x, std::size_t seg, Lane& lane) const;
  // Throws for the first non-finite value of x (draws first_draw, first_draw + 1, ...), or, if every value is
  // finite, for values whose squares overflow.
  [[noreturn]] void locate_non_finite(const Eigen::Ref<const Eigen::MatrixXd>& x, std::size_t first_draw) const {
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      for (Index i = 0; i < dim; ++i)
        if (!std::isfinite(x(i, j)))
          fail(where() + ": draw " + std::to_string(first_draw + static_cast<std::size_t>(j)) + ", coordinate " +
               std::to_string(i) + " is " + str(x(i, j)) + " (not finite)");
    fail(where() + ": draws " + std::to_string(first_draw) + " to " +
         std::to_string(first_draw + static_cast<std::size_t>(x.cols()) - 1) +
         " have values so large that their sums or squares overflow");
  }
  void close();

  // The steps of close(). The moments of the checkpoint's draws about their mean, from the segment sums:
  struct Moments {
    Eigen::VectorXd delta;    // mean - centre
    Eigen::VectorXd mean;     // per coordinate
    Eigen::VectorXd s2v;      // sample variances (divisor n - 1)
    Eigen::VectorXd delta_e;  // per edge: delta of its head - delta of its tail
    Eigen::VectorXd d2;       // sample variances of the edge differences
  };
  // Batch sums about the mean: of x, of (x - mean)^2, of the edge differences' squares, of the global statistic.
  struct Batches {
    BatchAccumulator xs, sq, dq, gq;
  };
  // Records a test's outcome for the checkpoint being closed.
  struct Offenders {
    TestSink sink;
    std::size_t checkpoint;
    double sweep;
    void operator()(ValidationTest test, Index index, Outcome o, double estimate, double exact);
  };
  // The segment that ends at a batch's or tracker group's boundary `draw`.
  Eigen::Index segment_of(std::size_t draw) const;
  Moments add_lanes();
  Batches batch_sums(const Moments& m, bool sequential) const;
  void coordinate_tests(CheckpointValidation& out, const Moments& m, const Batches& bs, Offenders& offender);
  void global_test(CheckpointValidation& out, const BatchAccumulator& gq, Offenders& offender) const;
  void edge_tests(CheckpointValidation& out, const Moments& m, const BatchAccumulator& dq, Offenders& offender) const;
  ErrorEstimate split_half_error(std::size_t c);
};

DrawValidator::DrawValidator(const Model& model, DrawKind kind, ExactTruth truth, const ValidateOptions& options)
    : m_impl(std::make_unique<Impl>()) {
  if (!(options.alpha > 0 && options.alpha < 1)) fail("alpha must be in (0, 1), got " + str(options.alpha));
  if (options.jackknife_groups < 2)
    fail("jackknife_groups must be at least 2, got " + std::to_string(options.jackknife_groups));
  if (options.batches == 1) fail("batches must be 0 (automatic) or at least 2");
  Impl& m = *m_impl;
  m.model = &model;
  m.kind = kind;
  m.options = options;
  m.dim = draw_dimension(model, kind);
  if (m.dim == 0) fail(std::string("the model has no coordinates for ") + to_string(kind) + " draws (no edges)");
  check_truth(model, kind, truth, m.dim);
  m.truth = std::move(truth);
  const Index dim = m.dim;
  m.mu = m.truth.mean.size() ? m.truth.mean : Eigen::VectorXd::Zero(dim);
  const Eigen::VectorXd& var = m.truth.variance;
  m.with_edges = m.truth.edge_covariance.size() > 0;
  m.num_edges = m.with_edges ? model.num_edges() : 0;
  m.var_d.resize(m.num_edges);
  for (Index e = 0; e < m.num_edges; ++e) {
    const Edge& ed = model.graph().edge(e);
    m.heads.push_back(ed.head);
    m.tails.push_back(ed.tail);
    m.var_d[e] = var[ed.head] + var[ed.tail] - 2 * m.truth.edge_covariance[e];
  }
  m.tested.resize(static_cast<std::size_t>(dim));
  m.inv_var = Eigen::VectorXd::Zero(dim);
  for (Index i = 0; i < dim; ++i) {
    m.tested[static_cast<std::size_t>(i)] = var[i] > 0;
    if (var[i] > 0) {
      m.inv_var[i] = 1 / var[i];
      m.k_tested += 1;
    }
  }
  m.edge_tested.assign(static_cast<std::size_t>(m.num_edges), 1);

  // The split-half error of the marginal variances, in the paper's metric (CovarianceErrorTracker).
  const Domain tracker_domain = kind == DrawKind::DualNodes ? Domain::Dual : Domain::Primal;
  // Only the dual-x metric reads s^2 (Woodbury); the other kinds take ones (a model without a dual has no s).
  const Eigen::VectorXd tracker_s2 =
      kind == DrawKind::DualNodes ? Eigen::VectorXd(model.node_variances()) : Eigen::VectorXd::Ones(dim);
  const Eigen::VectorXd tracker_target = kind == DrawKind::DualNodes ? woodbury_primal_variances(tracker_s2, var) : var;
  ErrorTrackerOptions tracker_options;
  tracker_options.jackknife_groups = options.jackknife_groups;
  m.tracker = std::make_unique<CovarianceErrorTracker>(tracker_domain, tracker_s2, tracker_target, tracker_options);
  m.report.kind = kind;
  m.report.alpha = options.alpha;
  m.budget = Execution{options.threads}.thread_budget();
  m.piece = std::clamp<std::size_t>(kScratchValues / static_cast<std::size_t>(dim), 8, kMaxPiece);
}

DrawValidator::~DrawValidator() = default;
DrawValidator::DrawValidator(DrawValidator&&) noexcept = default;
DrawValidator& DrawValidator::operator=(DrawValidator&&) noexcept = default;

void DrawValidator::begin_checkpoint(std::size_t draws, double sweep, std::vector<std::size_t> chain_offsets) {
  if (!m_impl || m_impl->spent) fail("the validator is spent (finish() was called or an error occurred)");
  Impl& m = *m_impl;
  if (m.open) fail(m.where() + " is still open (end_checkpoint() first)");
  const std::string where = m.where();
  const std::size_t n = draws;
  if (n < kMinValidationDraws)
    fail(where + ": " + std::to_string(n) + " draws, need at least " + std::to_string(kMinValidationDraws) +
         " (two halves of three for the split-half error)");
  if (!chain_offsets.empty()) {
    const auto& o = chain_offsets;
    if (o.size() < 2 || o.front() != 0 || o.back() != n)
      fail(where + ": chain_offsets must start at 0 and end at the number of draws (" + std::to_string(n) + ")");
    for (std::size_t k = 0; k + 1 < o.size(); ++k)
      if (o[k + 1] <= o[k]) fail(where + ": chain_offsets must increase strictly");
  }
  if (!std::isnan(sweep) && !std::isfinite(sweep)) fail(where + ": the sweep is infinite");
  m.open = true;
  m.sweep = sweep;
  m.n = n;
  m.seen = 0;
  m.chain_offsets = std::move(chain_offsets);
  const double nd = static_cast<double>(n);
  // Batches: for successive states, contiguous batches inside each chain (batch means); for independent
  // draws, kGlobalGroups groups, used only by the global test (the per-coordinate tests are exact there).
  if (!m.chain_offsets.empty()) {
    const std::size_t target =
        m.options.batches ? m.options.batches
                          : std::clamp<std::size_t>(static_cast<std::size_t>(std::floor(std::sqrt(nd))), 6, 1000);
    m.batches = make_batches(m.chain_offsets, std::min(target, n));
  } else {
    // Groups of at least kMinGroupDraws draws: the scale of the global test is estimated from the group means,
    // whose tails must be near normal (single draws' quadratic forms are far from it: 2.9% false alarms at the
    // 1% level measured with 50 draws in 50 groups).
    m.batches = make_batches({0, n}, std::clamp<std::size_t>(n / kMinGroupDraws, 4, kGlobalGroups));
  }
  m.tracker_offsets = m.tracker->group_offsets(n);
  m.bounds = m.tracker_offsets;
  for (const auto& [first, last] : m.batches) {
    m.bounds.push_back(first);
    m.bounds.push_back(last);
  }
  std::sort(m.bounds.begin(), m.bounds.end());
  m.bounds.erase(std::unique(m.bounds.begin(), m.bounds.end()), m.bounds.end());
  const auto segments = static_cast<Eigen::Index>(m.bounds.size() - 1);
  m.segment = 0;
  for (Impl::Lane& lane : m.lanes) {
    lane.sums.s1.setZero(m.dim, segments);
    lane.sums.s2.setZero(m.dim, segments);
    lane.sums.e2.setZero(m.num_edges, segments);
    lane.sums.gs.assign(static_cast<std::size_t>(segments), 0.0);
  }
  m.centred = false;
}

void DrawValidator::add(const Eigen::Ref<const Eigen::MatrixXd>& block) {
  if (!m_impl || m_impl->spent) fail("the validator is spent (finish() was called or an error occurred)");
  Impl& m = *m_impl;
  if (!m.open) fail("add(): no checkpoint is open (begin_checkpoint() first)");
  const std::string where = m.where();
  if (block.rows() != m.dim) {
    m.spent = true;
    fail(where + ": draws have " + std::to_string(block.rows()) + " coordinates, expected " + std::to_string(m.dim) +
         " for " + to_string(m.kind) + (is_node_kind(m.kind) ? " (one per node)" : " (one per edge)"));
  }
  const auto k = static_cast<std::size_t>(block.cols());
  if (k > m.n - m.seen) {
    m.spent = true;
    fail(where + ": more draws than the " + std::to_string(m.n) + " announced");
  }
  if (k == 0) return;
  try {
    if (!m.centred) {
      m.centre = column_mean(block, 0, block.cols());
      if (!m.centre.allFinite()) m.locate_non_finite(block, m.seen);  // else every piece would look bad
      m.centred = true;
    }
    // Pieces: at most m.piece draws, inside one segment; dealt to the lanes in turn.
    struct Piece {
      std::size_t segment, first, len;
    };
    std::vector<Piece> pieces;
    for (std::size_t j0 = 0, seen = m.seen; j0 < k;) {
      while (seen >= m.bounds[m.segment + 1]) ++m.segment;
      const std::size_t len = std::min({m.piece, k - j0, m.bounds[m.segment + 1] - seen});
      pieces.push_back({m.segment, j0, len});
      j0 += len;
      seen += len;
    }
    std::array<std::size_t, kLanes> bad;
    bad.fill(pieces.size());
    const double work =
        static_cast<double>(k) * (5 * static_cast<double>(m.dim) + 3 * static_cast<double>(m.num_edges));
    detail::run_tasks(kLanes, work, m.budget, [&](std::size_t lane) {
      for (std::size_t p = lane; p < pieces.size(); p += kLanes) {
        const Piece& q = pieces[p];
        const auto cols = block.middleCols(static_cast<Eigen::Index>(q.first), static_cast<Eigen::Index>(q.len));
        if (!m.accumulate(cols, q.segment, m.lanes[lane])) {
          bad[lane] = p;
          return;
        }
      }
    });
    const std::size_t first_bad = *std::min_element(bad.begin(), bad.end());
    if (first_bad < pieces.size()) {
      const Piece& q = pieces[first_bad];
      m.locate_non_finite(block.middleCols(static_cast<Eigen::Index>(q.first), static_cast<Eigen::Index>(q.len)),
                          m.seen + q.first);
    }
    m.seen += k;
  } catch (...) {
    m.spent = true;
    throw;
  }
}

bool DrawValidator::Impl::accumulate(const Eigen::Ref<const Eigen::MatrixXd>& x, std::size_t seg, Lane& lane) const {
  const Eigen::Index len = x.cols();
  const auto sg = static_cast<Eigen::Index>(seg);
  auto& xt = lane.xt;
  Sums& sums = lane.sums;
  if (xt.rows() != dim || xt.cols() != static_cast<Eigen::Index>(piece))
    xt.resize(dim, static_cast<Eigen::Index>(piece));
  lane.g.setZero(len);
  double* g = lane.g.data();
  bool finite = true;
  // Pass 1 (by coordinates): x - centre, transposed into xt in tiles of 8 coordinates (one cache line of a draw, so
  // every line of x is read once), its sums and squares (a NaN or infinity makes the squares non-finite), and the
  // global statistic's per-draw sums sum_v (x_v - mu_v)^2 / var_v.
  for (Eigen::Index i0 = 0; i0 < dim; i0 += 8) {
    const Eigen::Index i1 = std::min<Eigen::Index>(dim, i0 + 8);
    for (Eigen::Index j = 0; j < len; ++j) {
      const double* col = x.col(j).data();
      double gj = 0;
      for (Eigen::Index i = i0; i < i1; ++i) {
        xt(i, j) = col[i] - centre[i];
        const double w = col[i] - mu[i];
        gj += w * w * inv_var[i];
      }
      g[j] += gj;
    }
    for (Eigen::Index i = i0; i < i1; ++i) {
      const Eigen::Map<const Eigen::VectorXd> r(xt.row(i).data(), len);
      sums.s1(i, sg) += r.sum();
      const double q = r.squaredNorm();
      sums.s2(i, sg) += q;
      finite = finite && std::isfinite(q);
    }
  }
  if (!finite) return false;
  // The global statistic's per-draw values f = mean over tested coordinates of (x_v - mu_v)^2 / var_v, minus 1.
  if (k_tested > 0)
    for (Eigen::Index j = 0; j < len; ++j) sums.gs[seg] += g[j] / k_tested - 1;
  // Pass 2 (by edges): the edge differences, contiguous over draws in xt.
  for (Eigen::Index e = 0; e < num_edges; ++e) {
    const Eigen::Map<const Eigen::VectorXd> h(xt.row(heads[static_cast<std::size_t>(e)]).data(), len);
    const Eigen::Map<const Eigen::VectorXd> u(xt.row(tails[static_cast<std::size_t>(e)]).data(), len);
    sums.e2(e, sg) += (h - u).squaredNorm();
  }
  return true;
}

void DrawValidator::end_checkpoint() {
  if (!m_impl || m_impl->spent) fail("the validator is spent (finish() was called or an error occurred)");
  Impl& m = *m_impl;
  if (!m.open) fail("end_checkpoint(): no checkpoint is open");
  if (m.seen != m.n) {
    m.spent = true;
    fail(m.where() + ": " + std::to_string(m.seen) + " draws added, " + std::to_string(m.n) + " announced");
  }
  m.close();
  m.open = false;
}

namespace {
// Sum of the columns [a, b) of m, in column order (the sums over a range of segments).
Eigen::VectorXd range_sum(const Eigen::MatrixXd& m, Eigen::Index a, Eigen::Index b) {
  Eigen::VectorXd acc = m.col(a);
  for (Eigen::Index s = a + 1; s < b; ++s) acc += m.col(s);
  return acc;
}
}  // namespace

Eigen::Index DrawValidator::Impl::segment_of(std::size_t draw) const {
  return static_cast<Eigen::Index>(std::lower_bound(bounds.begin(), bounds.end(), draw) - bounds.begin());
}

void DrawValidator::Impl::Offenders::operator()(ValidationTest test, Index index, Outcome o, double estimate,
                                                double exact) {
  ValidationOffender v;
  v.checkpoint = checkpoint;
  v.sweep = sweep;
  v.test = test;
  v.index = index;
  v.z = o.z;
  v.p = o.p;
  v.estimate = estimate;
  v.exact = exact;
  sink.add(v);
}

// The lanes' sums, added in lane order, and the moments of all draws about their mean from them.
DrawValidator::Impl::Moments DrawValidator::Impl::add_lanes() {
  const double nd = static_cast<double>(n);
  const auto segments = static_cast<Eigen::Index>(bounds.size() - 1);
  s1 = lanes[0].sums.s1;
  s2 = lanes[0].sums.s2;
  e2 = lanes[0].sums.e2;
  gs = lanes[0].sums.gs;
  for (std::size_t l = 1; l < kLanes; ++l) {
    s1 += lanes[l].sums.s1;
    s2 += lanes[l].sums.s2;
    e2 += lanes[l].sums.e2;
    for (std::size_t q = 0; q < gs.size(); ++q) gs[q] += lanes[l].sums.gs[q];
  }
  const Eigen::VectorXd t1 = range_sum(s1, 0, segments);
  const Eigen::VectorXd t2 = range_sum(s2, 0, segments);
  // Moments about the mean from sums about the centre: delta = mean - centre, sum (x - mean)^2 = t2 - n delta^2.
  Moments m;
  m.delta = t1 / nd;
  m.mean = centre + m.delta;
  m.s2v = (t2 - nd * m.delta.cwiseAbs2()) / (nd - 1);  // sample variances (divisor n - 1)
  m.delta_e.resize(num_edges);
  m.d2.resize(num_edges);
  if (num_edges > 0) {
    const Eigen::VectorXd te = range_sum(e2, 0, segments);
    for (Eigen::Index e = 0; e < num_edges; ++e) {
      m.delta_e[e] = m.delta[heads[static_cast<std::size_t>(e)]] - m.delta[tails[static_cast<std::size_t>(e)]];
      m.d2[e] = (te[e] - nd * m.delta_e[e] * m.delta_e[e]) / (nd - 1);  // sample variances of the edge differences
    }
  }
  return m;
}

// Batch sums about the mean (only the global test's for independent draws).
DrawValidator::Impl::Batches DrawValidator::Impl::batch_sums(const Moments& m, bool sequential) const {
  const auto nb = static_cast<Eigen::Index>(batches.size());
  Batches out{{Eigen::MatrixXd::Zero(sequential ? dim : 0, nb), {}},
              {Eigen::MatrixXd::Zero(sequential ? dim : 0, nb), {}},
              {Eigen::MatrixXd::Zero(sequential ? num_edges : 0, nb), {}},
              {Eigen::MatrixXd::Zero(1, nb), {}}};
  BatchAccumulator &xs = out.xs, &sq = out.sq, &dq = out.dq, &gq = out.gq;
  for (Eigen::Index b = 0; b < nb; ++b) {
    const auto [first, last] = batches[static_cast<std::size_t>(b)];
    const Eigen::Index sa = segment_of(first), sb = segment_of(last);
    const double len = static_cast<double>(last - first);
    xs.lengths.push_back(len);
    sq.lengths.push_back(len);
    dq.lengths.push_back(len);
    gq.lengths.push_back(len);
    for (Eigen::Index s = sa; s < sb; ++s) gq.sums(0, b) += gs[static_cast<std::size_t>(s)];
    if (!sequential) continue;
    const Eigen::VectorXd b1 = range_sum(s1, sa, sb);
    xs.sums.col(b) = b1 - len * m.delta;
    sq.sums.col(b) = range_sum(s2, sa, sb) - 2 * m.delta.cwiseProduct(b1) + len * m.delta.cwiseAbs2();
    if (num_edges > 0) {
      const Eigen::VectorXd be = range_sum(e2, sa, sb);
      for (Eigen::Index e = 0; e < num_edges; ++e) {
        const double r1 = b1[heads[static_cast<std::size_t>(e)]] - b1[tails[static_cast<std::size_t>(e)]];
        dq.sums(e, b) = be[e] - 2 * m.delta_e[e] * r1 + len * m.delta_e[e] * m.delta_e[e];
      }
    }
  }
  return out;
}

// The mean and variance tests of every coordinate: exact for independent draws, batch means for sequential ones.
void DrawValidator::Impl::coordinate_tests(CheckpointValidation& out, const Moments& m, const Batches& bs,
                                           Offenders& offender) {
  const double nd = static_cast<double>(n);
  const Eigen::VectorXd& var = truth.variance;
  const Eigen::VectorXd &mean = m.mean, &s2v = m.s2v;
  const double unbias = nd / (nd - 1);
  out.mean_z = Eigen::VectorXd::Zero(dim);
  out.variance_z = Eigen::VectorXd::Zero(dim);
  out.variance_ratio = Eigen::VectorXd::Constant(dim, kNaN);
  if (!out.sequential) {
    // The p-values (a chi^2 tail each: the fixed cost of a checkpoint) in parallel, then recorded in order.
    std::vector<Outcome> om(static_cast<std::size_t>(dim)), ov(static_cast<std::size_t>(dim));
    const Index chunk = 256;
    detail::run_tasks(static_cast<std::size_t>((dim + chunk - 1) / chunk), 2e3 * static_cast<double>(dim), budget,
                      [&](std::size_t t) {
                        const Index a = static_cast<Index>(t) * chunk, b = std::min<Index>(dim, a + chunk);
                        for (Index i = a; i < b; ++i) {
                          if (!tested[static_cast<std::size_t>(i)]) continue;
                          om[static_cast<std::size_t>(i)] = normal_test((mean[i] - mu[i]) / std::sqrt(var[i] / nd));
                          ov[static_cast<std::size_t>(i)] = chi2_test(s2v[i] / var[i], nd - 1);
                        }
                      });
    for (Index i = 0; i < dim; ++i) {
      if (!tested[static_cast<std::size_t>(i)]) continue;
      const auto k = static_cast<std::size_t>(i);
      out.mean_z[i] = om[k].z;
      offender(ValidationTest::Mean, i, om[k], mean[i], mu[i]);
      out.variance_ratio[i] = s2v[i] / var[i];
      out.variance_z[i] = ov[k].z;
      offender(ValidationTest::Variance, i, ov[k], s2v[i], var[i]);
    }
    return;
  }
  out.batches = batches.size();
  out.batch_length = n;
  for (const auto& [first, last] : batches) out.batch_length = std::min(out.batch_length, last - first);
  const double dof = static_cast<double>(batches.size()) - 1;
  // Batch means of x - mean (overall 0) and of (x - mean)^2 (overall s2 (n - 1) / n).
  const Eigen::VectorXd se_mean = batch_standard_errors(bs.xs, Eigen::VectorXd::Zero(dim), nd);
  const Eigen::VectorXd se_var = batch_standard_errors(bs.sq, s2v / unbias, nd) * unbias;
  std::vector<double> ess;
  double tau_max = 0;
  for (Index i = 0; i < dim; ++i) {
    if (!tested[static_cast<std::size_t>(i)]) continue;
    const Outcome om = t_test(mean[i], mu[i], se_mean[i], dof);
    out.mean_z[i] = om.z;
    offender(ValidationTest::Mean, i, om, mean[i], mu[i]);
    out.variance_ratio[i] = s2v[i] / var[i];
    const Outcome ov = t_test(s2v[i], var[i], se_var[i], dof);
    out.variance_z[i] = ov.z;
    offender(ValidationTest::Variance, i, ov, s2v[i], var[i]);
    // Effective sample size of the mean: Var(x) / se^2 (n for independent draws).
    const double e = se_mean[i] > 0 ? std::min(nd, s2v[i] / (se_mean[i] * se_mean[i])) : nd;
    ess.push_back(e);
    if (std::isnan(out.ess_min) || e < out.ess_min) {
      out.ess_min = e;
      out.ess_min_index = i;
    }
    tau_max = std::max(tau_max, nd / e);
  }
  if (!ess.empty()) {
    std::nth_element(ess.begin(), ess.begin() + static_cast<std::ptrdiff_t>(ess.size() / 2), ess.end());
    out.ess_median = ess[ess.size() / 2];
  }
  // Batch means are trustworthy when a batch spans many autocorrelation times.
  if (tau_max > static_cast<double>(out.batch_length) / 10) short_batches = true;
}

// The global test of the per-draw statistic g (its batches `gq`).
void DrawValidator::Impl::global_test(CheckpointValidation& out, const BatchAccumulator& gq,
                                      Offenders& offender) const {
  const double nd = static_cast<double>(n);
  const auto nb = static_cast<Eigen::Index>(batches.size());
  // g's standard error from the same draws is correlated with g (draws with small squares give a small mean
  // and a small spread: a t test then rejects too often in its lower tail, measured 6x at the 0.5% level).
  // So the batches are split: the first half estimates the scale, the second half's mean is tested. 1 + g_B is
  // a weighted sum of chi^2 variables with mean 1: Satterthwaite's chi^2_nu / nu with nu = 2 / se_B^2, made
  // normal by Wilson-Hilferty's cube root, N(1 - 2 / (9 nu), 2 / (9 nu)), and referred to Student t with
  // B_A - 1 degrees of freedom since the scale is estimated from B_A batches.
  const double g = gq.sums.sum() / nd;
  const Eigen::Index half = nb / 2;
  BatchAccumulator a{gq.sums.leftCols(half), {gq.lengths.begin(), gq.lengths.begin() + half}};
  BatchAccumulator bb{gq.sums.rightCols(nb - half), {gq.lengths.begin() + half, gq.lengths.end()}};
  double n_a = 0, n_b = 0;
  for (double l : a.lengths) n_a += l;
  for (double l : bb.lengths) n_b += l;
  const double g_a = a.sums.sum() / n_a, g_b = bb.sums.sum() / n_b;
  const double se_a = batch_standard_errors(a, Eigen::VectorXd::Constant(1, g_a), n_a)[0];
  const double se_b = se_a * std::sqrt(n_a / n_b);
  Outcome o{1.0, 0.0};
  if (se_b > 0) {
    const double nu = 2 / (se_b * se_b);
    o = t_test(std::cbrt(std::max(0.0, 1 + g_b)), 1 - 2 / (9 * nu), std::sqrt(2 / (9 * nu)),
               static_cast<double>(half) - 1);
  } else if (g_b != 0) {
    o = {0.0, normal_score(0.0, g_b > 0)};
  }
  out.global_statistic = g;
  out.global_se = batch_standard_errors(gq, Eigen::VectorXd::Constant(1, g), nd)[0];
  out.global_z = o.z;
  offender(ValidationTest::Global, -1, o, g, 0.0);
}

// The tests of the edge differences' variances and the edge covariances' errors.
void DrawValidator::Impl::edge_tests(CheckpointValidation& out, const Moments& m, const BatchAccumulator& dq,
                                     Offenders& offender) const {
  const double nd = static_cast<double>(n);
  const double unbias = nd / (nd - 1);
  const Eigen::VectorXd &s2v = m.s2v, &d2 = m.d2;
  out.edge_z = Eigen::VectorXd::Zero(num_edges);
  out.edge_covariance_error = Eigen::VectorXd::Zero(num_edges);
  const Eigen::VectorXd se_d =
      out.sequential ? Eigen::VectorXd(batch_standard_errors(dq, d2 / unbias, nd) * unbias) : Eigen::VectorXd();
  const double dof = static_cast<double>(batches.size()) - 1;
  double sum2 = 0;
  std::vector<Outcome> oe(static_cast<std::size_t>(num_edges));
  const Index chunk = 256;
  detail::run_tasks(static_cast<std::size_t>((num_edges + chunk - 1) / chunk), 2e3 * static_cast<double>(num_edges),
                    budget, [&](std::size_t t) {
                      const Index a = static_cast<Index>(t) * chunk, b = std::min<Index>(num_edges, a + chunk);
                      for (Index e = a; e < b; ++e)
                        oe[static_cast<std::size_t>(e)] = out.sequential ? t_test(d2[e], var_d[e], se_d[e], dof)
                                                                         : chi2_test(d2[e] / var_d[e], nd - 1);
                    });
  for (Index e = 0; e < num_edges; ++e) {
    const Index h = heads[static_cast<std::size_t>(e)], t = tails[static_cast<std::size_t>(e)];
    const Outcome o = oe[static_cast<std::size_t>(e)];
    out.edge_z[e] = o.z;
    offender(ValidationTest::EdgeDifference, e, o, d2[e], var_d[e]);
    // Cov^(u, v) = (S_u + S_v - S_{u-v}) / 2.
    const double err = 0.5 * (s2v[h] + s2v[t] - d2[e]) - truth.edge_covariance[e];
    out.edge_covariance_error[e] = err;
    out.edge_covariance_error_max = std::max(out.edge_covariance_error_max, std::abs(err));
    sum2 += err * err;
  }
  out.edge_covariance_error_rms = std::sqrt(sum2 / static_cast<double>(num_edges));
  out.edge = summarize(out.edge_z, edge_tested);
}

// The split-half error of checkpoint c from the same sums, cut at the tracker's groups.
ErrorEstimate DrawValidator::Impl::split_half_error(std::size_t c) {
  std::vector<MomentSums> groups;
  for (std::size_t j = 0; j + 1 < tracker_offsets.size(); ++j) {
    const Eigen::Index sa = segment_of(tracker_offsets[j]), sb = segment_of(tracker_offsets[j + 1]);
    MomentSums g;
    g.count = static_cast<double>(tracker_offsets[j + 1] - tracker_offsets[j]);
    g.sum = range_sum(s1, sa, sb);
    g.scatter = range_sum(s2, sa, sb);
    groups.push_back(std::move(g));
  }
  return tracker->observe(std::isnan(sweep) ? c : static_cast<std::size_t>(std::max(0.0, sweep)), 0.0,
                          GroupedMoments(MomentKind::Diagonal, centre, std::move(groups)));
}

// The tests of the open checkpoint from its segment sums (see validate_draws()).
void DrawValidator::Impl::close() {
  const std::size_t c = report.checkpoints.size();
  CheckpointValidation out;
  out.sweep = sweep;
  out.draws = n;
  out.sequential = !chain_offsets.empty();
  out.chains = out.sequential ? chain_offsets.size() - 1 : n;
  std::vector<ValidationOffender> all;
  Offenders offender{TestSink{all, out}, c, sweep};

  const Moments m = add_lanes();
  const Batches bs = batch_sums(m, out.sequential);
  coordinate_tests(out, m, bs, offender);
  // Coordinates with exact variance 0 (x~ of an isolated node): the draws must be exactly the mean.
  for (Index i = 0; i < dim; ++i) {
    if (tested[static_cast<std::size_t>(i)]) continue;
    ++out.degenerate;
    if (m.s2v[i] > 0 || m.mean[i] != mu[i]) {
      Outcome o{0.0, normal_score(0.0, true)};
      out.variance_z[i] = o.z;
      offender(ValidationTest::Variance, i, o, m.s2v[i], 0.0);
    }
  }
  if (k_tested > 0 && batches.size() >= 4) global_test(out, bs.gq, offender);
  out.mean = summarize(out.mean_z, tested);
  out.variance = summarize(out.variance_z, tested);
  if (with_edges) edge_tests(out, m, bs.dq, offender);
  out.error = split_half_error(c);

  // Keep only the worst few tests between checkpoints.
  worst.insert(worst.end(), all.begin(), all.end());
  const std::size_t keep = std::min(worst.size(), options.worst);
  std::partial_sort(worst.begin(), worst.begin() + static_cast<std::ptrdiff_t>(keep), worst.end(), worse);
  worst.resize(keep);
  report.tests += out.tests;
  report.checkpoints.push_back(std::move(out));
}

ValidationReport DrawValidator::finish() {
  if (!m_impl || m_impl->spent) fail("the validator is spent (finish() was called or an error occurred)");
  Impl& m = *m_impl;
  if (m.open) fail(m.where() + " is still open (end_checkpoint() first)");
  if (m.report.checkpoints.empty()) fail("no checkpoint (no draws)");
  m.spent = true;
  ValidationReport report = std::move(m.report);
  const ValidateOptions& options = m.options;
  const DrawKind kind = m.kind;
  report.p_threshold = options.alpha / static_cast<double>(std::max<std::size_t>(1, report.tests));
  report.z_threshold = normal_score(report.p_threshold, true);
  for (auto& cv : report.checkpoints) {
    cv.consistent = !(cv.min_p < report.p_threshold);
    if (!cv.consistent) report.consistent = false;
  }
  report.worst = std::move(m.worst);

  std::ostringstream ms;
  ms << "Per coordinate: the mean (z = (mean^ - mu) / sqrt(var / n), normal), the marginal variance "
        "((n - 1) S^2 / var ~ chi^2_{n-1}, two-sided)"
     << (m.with_edges ? " and, per edge, the variance of c_u - c_v (Var = var_u + var_v - 2 Cov(u, v), chi^2_{n-1})"
                      : "")
     << "; globally, g = mean of (c_v - mu_v)^2 / var_v - 1 over draws and coordinates (the mean of the second half of "
        "up to "
     << kGlobalGroups
     << " groups of draws against the scale of the first half: Wilson-Hilferty, Student t); successive states of "
        "chains "
        "are tested by batch means instead "
        "(Student t, B - 1 degrees of freedom). "
        "Verdict: Bonferroni over all "
     << report.tests << " tests: not consistent iff some two-sided p < alpha / tests = " << report.p_threshold
     << " (|z| > " << report.z_threshold
     << "), so exact draws are called inconsistent with probability at most alpha = " << options.alpha
     << ". Eu (split-half error of the marginal variances, "
     << (kind == DrawKind::DualEdges ? "Var(y~)" : "primal metric Var(X)")
     << ") and its standard error are reported, not tested.";
  report.method = ms.str();
  if (m.short_batches)
    report.notes.push_back(
        "batch means: the largest integrated autocorrelation time n / ESS exceeds a tenth of the batch length: the "
        "batches may be too short for the t tests to hold (give more draws or fewer batches)");
  std::size_t degenerate = 0;
  for (const auto& cv : report.checkpoints) degenerate = std::max(degenerate, cv.degenerate);
  if (degenerate)
    report.notes.push_back(std::to_string(degenerate) +
                           " coordinate(s) with exact variance 0 (x~ of isolated nodes): checked to be constant and "
                           "equal to the exact mean, not z-tested");
  return report;
}

ValidationReport validate_draws(const Model& model, const Draws& draws, const ExactTruth& truth,
                                const ValidateOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1)) fail("alpha must be in (0, 1), got " + str(options.alpha));
  if (options.jackknife_groups < 2)
    fail("jackknife_groups must be at least 2, got " + std::to_string(options.jackknife_groups));
  if (draws.checkpoints.empty()) fail("no checkpoint (no draws)");
  const DrawKind kind = draws.kind;
  const Index dim = draw_dimension(model, kind);
  if (dim == 0) fail(std::string("the model has no coordinates for ") + to_string(kind) + " draws (no edges)");
  for (std::size_t c = 0; c < draws.checkpoints.size(); ++c) check_checkpoint(draws.checkpoints[c], c, dim, kind);
  DrawValidator v(model, kind, truth, options);
  // Each checkpoint in one block: its centre is its mean (the two-pass algorithm).
  for (const DrawCheckpoint& cp : draws.checkpoints) {
    v.begin_checkpoint(static_cast<std::size_t>(cp.draws.cols()), cp.sweep, cp.chain_offsets);
    v.add(cp.draws);
    v.end_checkpoint();
  }
  return v.finish();
}

}  // namespace dualgibbs
