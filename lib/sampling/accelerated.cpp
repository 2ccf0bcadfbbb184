// Spectra of the SSOR-preconditioned operator, the Chebyshev weights and rates, and ensembles run with a scheme
// chosen at run time (accelerated.hpp; the derivation is in docs/sampler.md section 2).
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/sampling/accelerated.hpp>

#include "core/enum_names.hpp"
#include "sampling/scheme_ensemble.hpp"

#include <Spectra/SymEigsSolver.h>
#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace dualgibbs {

namespace {

void check_omega(double omega, const char* who) {
  if (!(omega > 0.0 && omega < 2.0))
    throw std::invalid_argument(std::string(who) + ": omega = " + number_text(omega) + " is not in (0, 2)");
}

// Largest n for which the spectrum is computed densely.
constexpr Index kDenseSpectrumMax = 400;

// The symmetric operator T = K^1/2 M_f^-1 A M_f^-T K^1/2, similar to M^-1 A (M = M_f K^-1 M_f^T), in Spectra's
// operator concept.
class SsorOperator {
 public:
  using Scalar = double;
  SsorOperator(const SparseMatrix& A, double omega) : m_A(A), m_sqrt_k(A.rows()), m_tmp(A.rows()) {
    const Index n = static_cast<Index>(A.rows());
    std::vector<Eigen::Triplet<double, int>> t;
    t.reserve(static_cast<std::size_t>(A.nonZeros() / 2 + n));
    for (Index i = 0; i < n; ++i) {
      bool has_diag = false;
      for (SparseMatrix::InnerIterator it(A, i); it; ++it) {
        const Index j = static_cast<Index>(it.col());
        if (!std::isfinite(it.value()))
          throw std::invalid_argument("ssor_spectrum: A(" + std::to_string(i) + ", " + std::to_string(j) +
                                      ") is not finite");
        if (j < i) t.emplace_back(i, j, it.value());
        if (j == i) {
          if (!(it.value() > 0.0))
            throw std::invalid_argument("ssor_spectrum: diagonal entry A(" + std::to_string(i) + ", " +
                                        std::to_string(i) + ") = " + number_text(it.value()) + " is not positive");
          has_diag = true;
          t.emplace_back(i, i, it.value() / omega);
          m_sqrt_k[i] = std::sqrt((2.0 - omega) / omega * it.value());
        }
      }
      if (!has_diag)
        throw std::invalid_argument("ssor_spectrum: diagonal entry A(" + std::to_string(i) + ", " + std::to_string(i) +
                                    ") is missing");
    }
    m_Mf.resize(A.rows(), A.cols());
    m_Mf.setFromTriplets(t.begin(), t.end());
    m_Mf.makeCompressed();
  }
  Eigen::Index rows() const noexcept { return m_A.rows(); }
  Eigen::Index cols() const noexcept { return m_A.rows(); }
  void perform_op(const double* in, double* out) const {
    const Eigen::Index n = rows();
    Eigen::Map<const Eigen::VectorXd> x(in, n);
    Eigen::Map<Eigen::VectorXd> y(out, n);
    m_tmp = m_sqrt_k.cwiseProduct(x);
    m_Mf.transpose().triangularView<Eigen::Upper>().solveInPlace(m_tmp);
    y = m_A * m_tmp;
    m_Mf.triangularView<Eigen::Lower>().solveInPlace(y);
    y = m_sqrt_k.cwiseProduct(y);
  }

 private:
  const SparseMatrix& m_A;
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> m_Mf;  // D / omega + L
  Eigen::VectorXd m_sqrt_k;
  mutable Eigen::VectorXd m_tmp;
};

// Lanczos restarts for lambda_max(M^-1 A), and the bound that stands in for it when they do not suffice: every SSOR
// preconditioner (0 < omega < 2) has lambda_max(M^-1 A) <= 1, and the dual of a graph with many cycles crowds
// eigenvalues just below 1 (ws:400,4,0.3 at omega 1.2: 0.9999999999 after 3700 restarts; ws:1100,4,0.3
// needed more than 20000 at some omegas, so that `info --accel` failed after minutes). The bound is an interval
// containing the spectrum, which is what Chebyshev-SSOR needs, and its rate is then a bound too. Converging runs take
// up to about 50 restarts.
constexpr Eigen::Index kLargestRestarts = 200;
constexpr double kSsorLambdaMaxBound = 1.0;

double extreme_eigenvalue(SsorOperator& op, Spectra::SortRule rule) {
  const Eigen::Index ncv = std::min<Eigen::Index>(40, op.rows());
  Spectra::SymEigsSolver<SsorOperator> solver(op, 1, ncv);
  solver.init();  // fixed-seed start: reproducible
  const bool largest = rule == Spectra::SortRule::LargestAlge;
  solver.compute(rule, largest ? kLargestRestarts : 20000, 1e-8, rule);
  if (largest && solver.info() == Spectra::CompInfo::NotConverging) return kSsorLambdaMaxBound;
  if (solver.info() != Spectra::CompInfo::Successful)
    throw std::runtime_error("ssor_spectrum: Lanczos did not converge after " +
                             std::to_string(solver.num_operations()) + " operator applications");
  return solver.eigenvalues()[0];
}

}  // namespace

SsorSpectrum ssor_spectrum(const SparseMatrix& A, double omega) {
  check_omega(omega, "ssor_spectrum");
  if (A.rows() != A.cols() || A.rows() < 1)
    throw std::invalid_argument("ssor_spectrum: A is " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) +
                                "; a non-empty square matrix is needed");
  SsorOperator op(A, omega);
  SsorSpectrum s;
  s.omega = omega;
  const Index n = static_cast<Index>(A.rows());
  if (n <= kDenseSpectrumMax) {
    Eigen::MatrixXd T(n, n);
    Eigen::VectorXd e = Eigen::VectorXd::Zero(n), col(n);
    for (Index j = 0; j < n; ++j) {
      e[j] = 1.0;
      op.perform_op(e.data(), col.data());
      T.col(j) = col;
      e[j] = 0.0;
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(0.5 * (T + T.transpose()), Eigen::EigenvaluesOnly);
    s.lambda_min = es.eigenvalues()[0];
    s.lambda_max = es.eigenvalues()[n - 1];
  } else {
    s.lambda_max = extreme_eigenvalue(op, Spectra::SortRule::LargestAlge);
    s.lambda_min = extreme_eigenvalue(op, Spectra::SortRule::SmallestAlge);
  }
  if (!(s.lambda_min > 0.0))
    throw std::runtime_error("ssor_spectrum: lambda_min(M^-1 A) = " + number_text(s.lambda_min) +
                             " is not positive: A is not numerically positive definite");
  return s;
}

SsorSpectrum ssor_spectrum(const Model& model, Domain domain, double omega) {
  return ssor_spectrum(model.precision(domain), omega);
}

SsorSpectrum optimal_ssor_spectrum(const SparseMatrix& A) {
  auto kappa = [](const SsorSpectrum& s) { return s.lambda_max / s.lambda_min; };
  // Golden-section search for the minimum of kappa(omega) on [1, 1.95] (unimodal in practice).
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double lo = 1.0, hi = 1.95;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  SsorSpectrum sa = ssor_spectrum(A, a), sb = ssor_spectrum(A, b);
  for (int it = 0; it < 10; ++it) {
    if (kappa(sa) < kappa(sb)) {
      hi = b;
      b = a;
      sb = sa;
      a = hi - g * (hi - lo);
      sa = ssor_spectrum(A, a);
    } else {
      lo = a;
      a = b;
      sa = sb;
      b = lo + g * (hi - lo);
      sb = ssor_spectrum(A, b);
    }
  }
  SsorSpectrum best = kappa(sa) < kappa(sb) ? sa : sb;
  const SsorSpectrum one = ssor_spectrum(A, 1.0);
  return kappa(one) <= kappa(best) ? one : best;
}

SsorSpectrum default_ssor_spectrum(const SparseMatrix& A) {
  return A.rows() <= kOptimalOmegaMaxDimension ? optimal_ssor_spectrum(A) : ssor_spectrum(A, 1.0);
}

namespace {
void check_spectrum(const SsorSpectrum& s, const char* who) {
  check_omega(s.omega, who);
  if (!(std::isfinite(s.lambda_min) && std::isfinite(s.lambda_max)))
    throw std::invalid_argument(std::string(who) + ": no spectrum bounds (lambda_min = " + number_text(s.lambda_min) +
                                ", lambda_max = " + number_text(s.lambda_max) +
                                "): cheby-ssor needs the extreme eigenvalues of the SSOR-preconditioned operator, "
                                "from ssor_spectrum() or given by the user");
  if (!(s.lambda_min > 0.0 && s.lambda_min <= s.lambda_max && s.lambda_max <= 1.0 + 1e-9))
    throw std::invalid_argument(std::string(who) + ": lambda_min = " + number_text(s.lambda_min) +
                                ", lambda_max = " + number_text(s.lambda_max) +
                                " (need 0 < lambda_min <= lambda_max <= 1: every eigenvalue of an SSOR-preconditioned "
                                "SPD operator lies in (0, 1])");
}
}  // namespace

double ssor_rate(const SsorSpectrum& spectrum) {
  check_spectrum(spectrum, "ssor_rate");
  return 1.0 - spectrum.lambda_min;
}

double chebyshev_ssor_rate(const SsorSpectrum& spectrum) {
  const ChebyshevSsorSweep c(spectrum);
  const double kappa = c.interval_max() / c.interval_min(), r = std::sqrt(kappa);
  return (r - 1.0) / (r + 1.0);
}

ChebyshevSsorSweep::ChebyshevSsorSweep(double omega, double lambda_min, double lambda_max)
    : m_omega(omega), m_min(lambda_min), m_max(std::min(lambda_max, 1.0)) {
  check_spectrum(SsorSpectrum{omega, lambda_min, lambda_max}, "ChebyshevSsorSweep");
  // The backward half-sweep's noise variance carries 2 / tau - 1 = lambda_min + lambda_max - 1, which must not be
  // negative; 1 >= lambda_max is always a valid top of the interval.
  if (m_min + m_max < 1.0) m_max = 1.0;
  m_tau = 2.0 / (m_min + m_max);
  const double rho = (m_max - m_min) / (m_max + m_min);
  m_rho2 = rho * rho;
  m_back = std::sqrt(std::max(0.0, 2.0 / m_tau - 1.0));
}

double ChebyshevSsorSweep::next_alpha(std::size_t k, double alpha_k) const noexcept {
  return k == 0 ? 1.0 / (1.0 - 0.5 * m_rho2) : 1.0 / (1.0 - 0.25 * m_rho2 * alpha_k);
}

double ChebyshevSsorSweep::alpha(std::size_t k) const noexcept {
  double a = 1.0;
  for (std::size_t j = 0; j < k; ++j) a = next_alpha(j, a);
  return a;
}

// ---- schemes chosen at run time --------------------------------------------------------------------------

namespace {
constexpr detail::EnumName<SchemeKind> kSchemeKinds[] = {{SchemeKind::Gibbs, "gibbs"},
                                                         {SchemeKind::Ssor, "ssor"},
                                                         {SchemeKind::ChebyshevSsor, "cheby-ssor"},
                                                         {SchemeKind::Colored, "colored"}};
}  // namespace

SchemeKind parse_scheme_kind(const std::string& name) { return detail::parse_enum(kSchemeKinds, name, "scheme"); }

const char* to_string(SchemeKind kind) noexcept { return detail::enum_name(kSchemeKinds, kind); }

std::size_t site_updates_per_sweep(const SchemeOptions& scheme, Index n) noexcept {
  const bool one = scheme.kind == SchemeKind::Gibbs || scheme.kind == SchemeKind::Colored;
  return (one ? 1u : 2u) * static_cast<std::size_t>(n);
}

namespace {
template <class Kernel, class Scheme>
EnsembleStats run_scheme(const Kernel& kernel, const EnsembleOptions& o, const Observer& observe,
                         const Scheme& scheme) {
  EnsembleStats st = run_ensemble(kernel, o, observe, scheme);
  st.updates = st.updates / static_cast<std::uint64_t>(kernel.dimension()) *
               scheme.site_updates(kernel.dimension());  // a sweep of SSOR schemes is 2n site updates
  st.ns_per_update = st.updates ? st.seconds * 1e9 / static_cast<double>(st.updates) : 0.0;
  return st;
}

template <class Kernel>
EnsembleStats run_kernel(const Kernel& kernel, const EnsembleOptions& o, const Observer& observe,
                         const SchemeOptions& scheme, const Model& model, Domain domain) {
  if (scheme.kind == SchemeKind::Colored) {
    EnsembleOptions one = o;
    one.threads = 1;  // the threads work inside each chain
    return run_scheme(kernel, one, observe, ColoredSweep(domain_coloring(model, domain), scheme.threads));
  }
  if (scheme.colored_order) {
    auto classes = domain_coloring(model, domain);
    if (scheme.kind == SchemeKind::Ssor)
      return run_scheme(kernel, o, observe, ColoredSsorSweep(std::move(classes), scheme.omega));
    return run_scheme(kernel, o, observe, ColoredSsorSweep(std::move(classes), scheme.spectrum));
  }
  if (scheme.kind == SchemeKind::Ssor) return run_scheme(kernel, o, observe, SymmetricSweep(scheme.omega));
  return run_scheme(kernel, o, observe, ChebyshevSsorSweep(scheme.spectrum));
}
}  // namespace

namespace detail {

EnsembleStats run_scheme_ensemble(const Model& model, Domain domain, const EnsembleOptions& options,
                                  const Observer& observe, const SchemeOptions& scheme) {
  if (scheme.kind != SchemeKind::Colored) check_omega(scheme.omega, "run_ensemble");
  if (scheme.kind == SchemeKind::ChebyshevSsor) {
    check_spectrum(scheme.spectrum, "run_ensemble (cheby-ssor)");
    if (scheme.spectrum.omega != scheme.omega)
      throw std::invalid_argument("run_ensemble (cheby-ssor): the spectrum bounds were computed at omega = " +
                                  number_text(scheme.spectrum.omega) +
                                  ", the scheme runs at omega = " + number_text(scheme.omega));
  }
  if (domain == Domain::Primal) {
    if (options.observe_edges)
      throw std::invalid_argument("run_ensemble: observe_edges applies only to the dual domain");
    // As run_ensemble(model, ...): a model with a mean samples N(mu, Q^-1) through the canonical vector (Q mu = h).
    if (model.has_mean()) {
      const CsrKernel kernel(model.primal_precision(), model.canonical_vector(), SpdCheck::Cheap);
      return run_kernel(kernel, options, observe, scheme, model, domain);
    }
    const CsrKernel kernel(model.primal_precision(), SpdCheck::Cheap);
    return run_kernel(kernel, options, observe, scheme, model, domain);
  }
  if (model.num_edges() < 1)
    throw std::invalid_argument("run_ensemble: the graph has no edges, so the dual domain is empty");
  const DualIncidenceKernel kernel(model);
  return run_kernel(kernel, options, observe, scheme, model, domain);
}

}  // namespace detail

// ---- colourings and the colour-ordered sweep -------------------------------------------------------------

namespace {
std::vector<std::vector<Index>> classes_of(const std::vector<int>& colour) {
  std::vector<std::vector<Index>> classes;
  for (std::size_t i = 0; i < colour.size(); ++i) {
    const auto c = static_cast<std::size_t>(colour[i]);
    if (c >= classes.size()) classes.resize(c + 1);
    classes[c].push_back(static_cast<Index>(i));
  }
  return classes;
}
}  // namespace

std::vector<std::vector<Index>> greedy_coloring(const SparseMatrix& pattern) {
  if (pattern.rows() != pattern.cols())
    throw std::invalid_argument("greedy_coloring: the pattern is " + std::to_string(pattern.rows()) + " x " +
                                std::to_string(pattern.cols()) + ", not square");
  const auto n = static_cast<std::size_t>(pattern.rows());
  std::vector<int> colour(n, -1);
  std::vector<std::size_t> seen;  // seen[c] == i + 1: colour c is taken by a neighbour of i
  for (std::size_t i = 0; i < n; ++i) {
    for (SparseMatrix::InnerIterator it(pattern, static_cast<Eigen::Index>(i)); it; ++it) {
      const auto j = static_cast<std::size_t>(it.col());
      if (j == i || colour[j] < 0) continue;
      const auto c = static_cast<std::size_t>(colour[j]);
      if (c >= seen.size()) seen.resize(c + 1, 0);
      seen[c] = i + 1;
    }
    int c = 0;
    while (static_cast<std::size_t>(c) < seen.size() && seen[static_cast<std::size_t>(c)] == i + 1) ++c;
    colour[i] = c;
  }
  return classes_of(colour);
}

std::vector<std::vector<Index>> greedy_edge_coloring(const Graph& graph) {
  const auto m = static_cast<std::size_t>(graph.num_edges());
  std::vector<std::vector<int>> used(static_cast<std::size_t>(graph.num_nodes()));  // colours at each node
  std::vector<int> colour(m, 0);
  for (std::size_t e = 0; e < m; ++e) {
    const Edge& ed = graph.edge(static_cast<Index>(e));
    auto& a = used[static_cast<std::size_t>(ed.head)];
    auto& b = used[static_cast<std::size_t>(ed.tail)];
    int c = 0;
    while (std::find(a.begin(), a.end(), c) != a.end() || std::find(b.begin(), b.end(), c) != b.end()) ++c;
    colour[e] = c;
    a.push_back(c);
    b.push_back(c);
  }
  return classes_of(colour);
}

std::vector<std::vector<Index>> domain_coloring(const Model& model, Domain domain) {
  return domain == Domain::Primal ? greedy_coloring(model.primal_precision()) : greedy_edge_coloring(model.graph());
}

namespace detail {

struct WorkerTeam::State {
  std::mutex mutex;
  std::condition_variable start, done;
  std::vector<std::thread> helpers;  // helper p runs task(p), p = 1 .. helpers.size()
  const std::function<void(std::size_t)>* task = nullptr;
  std::uint64_t generation = 0;  // counts runs; a helper runs once per new generation
  std::size_t parties = 0;       // of the current run
  std::size_t pending = 0;       // helpers of the current run still working
  bool stop = false;

  void serve(std::size_t p, std::uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      start.wait(lock, [&] { return stop || generation != seen; });
      if (stop) return;
      seen = generation;
      if (p >= parties) continue;  // not needed in this run
      const auto* t = task;
      lock.unlock();
      (*t)(p);
      lock.lock();
      if (--pending == 0) done.notify_one();
    }
  }
};

WorkerTeam::WorkerTeam() noexcept = default;
WorkerTeam::WorkerTeam(const WorkerTeam&) noexcept {}

WorkerTeam::~WorkerTeam() {
  if (!m_state) return;
  {
    const std::lock_guard<std::mutex> lock(m_state->mutex);
    m_state->stop = true;
  }
  m_state->start.notify_all();
  for (std::thread& h : m_state->helpers) h.join();
}

void WorkerTeam::run(std::size_t parties, const std::function<void(std::size_t)>& task) {
  if (parties <= 1) {
    task(0);
    return;
  }
  if (!m_state) m_state = std::make_unique<State>();
  State& st = *m_state;
  {
    std::unique_lock<std::mutex> lock(st.mutex);
    while (st.helpers.size() + 1 < parties)  // a new helper waits for the next generation
      st.helpers.emplace_back(&State::serve, &st, st.helpers.size() + 1, st.generation);
    st.task = &task;
    st.parties = parties;
    st.pending = parties - 1;
    ++st.generation;
  }
  st.start.notify_all();
  task(0);
  std::unique_lock<std::mutex> lock(st.mutex);
  st.done.wait(lock, [&] { return st.pending == 0; });
}

}  // namespace detail

ColoredSweep::ColoredSweep(std::vector<std::vector<Index>> classes, unsigned threads)
    : m_classes(std::move(classes)), m_threads(threads) {
  if (threads == 0) throw std::invalid_argument("ColoredSweep: threads = 0; at least one thread is needed");
  if (m_classes.empty()) throw std::invalid_argument("ColoredSweep: no colour classes");
}

namespace {
// \throws std::invalid_argument naming `who` unless the classes partition 0..n-1.
void check_partition(const std::vector<std::vector<Index>>& classes, Index n, const std::string& who) {
  std::vector<char> hit(static_cast<std::size_t>(n), 0);
  for (std::size_t c = 0; c < classes.size(); ++c) {
    for (Index i : classes[c]) {
      if (i < 0 || i >= n)
        throw std::invalid_argument(who + ": site " + std::to_string(i) + " of colour class " + std::to_string(c) +
                                    " is outside 0.." + std::to_string(n - 1));
      if (hit[static_cast<std::size_t>(i)]++)
        throw std::invalid_argument(who + ": site " + std::to_string(i) +
                                    " is in more than one colour class (or twice in one)");
    }
  }
  for (Index i = 0; i < n; ++i)
    if (!hit[static_cast<std::size_t>(i)])
      throw std::invalid_argument(who + ": site " + std::to_string(i) +
                                  " is in no colour class: the classes must partition the " + std::to_string(n) +
                                  " coordinates");
}
}  // namespace

void ColoredSweep::prepare(Index n, int width) {
  check_partition(m_classes, n, "ColoredSweep");
  m_scratch.assign(m_threads, Scratch{});
  for (Scratch& s : m_scratch) {
    s.eps.assign(kBlock * static_cast<std::size_t>(width), 0.0);
    s.streams.reserve(static_cast<std::size_t>(width));
  }
}

// ---- colour-ordered SSOR ------------------------------------------------------------------------------

SparseMatrix color_permuted(const SparseMatrix& A, const std::vector<std::vector<Index>>& classes) {
  const Index n = static_cast<Index>(A.rows());
  if (A.cols() != n) throw std::invalid_argument("color_permuted: A is not square");
  check_partition(classes, n, "color_permuted");
  // perm[i] = the place of site i in colour order.
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, Index> perm(n);
  Index next = 0;
  for (const auto& cls : classes)
    for (Index i : cls) perm.indices()[i] = next++;
  SparseMatrix out(n, n);
  out = A.twistedBy(perm);
  out.makeCompressed();
  return out;
}

ColoredSsorSweep::ColoredSsorSweep(std::vector<std::vector<Index>> classes, double omega)
    : m_layout(std::make_shared<const Layout>(Layout{std::move(classes), {}})), m_omega(omega) {
  check_omega(omega, "ColoredSsorSweep");
  if (m_layout->sites.empty()) throw std::invalid_argument("ColoredSsorSweep: no colour classes");
  for (const auto& c : m_layout->sites) m_sites += c.size();
}

ColoredSsorSweep::ColoredSsorSweep(std::vector<std::vector<Index>> classes, const SsorSpectrum& spectrum)
    : ColoredSsorSweep(std::move(classes), spectrum.omega) {
  m_cheb.emplace(spectrum);
}

ColoredSsorSweep::ColoredSsorSweep(std::vector<std::vector<Index>> sites, std::vector<std::vector<std::size_t>> places,
                                   double omega, const SsorSpectrum* spectrum, detail::ColoredHalo& halo)
    : m_layout(std::make_shared<const Layout>(Layout{std::move(sites), std::move(places)})),
      m_omega(omega),
      m_halo(&halo) {
  check_omega(omega, "ColoredSsorSweep");
  if (m_layout->sites.empty() || m_layout->places.size() != m_layout->sites.size())
    throw std::invalid_argument("ColoredSsorSweep: a part needs its sites and their places for every class");
  for (std::size_t k = 0; k < m_layout->sites.size(); ++k) {
    if (m_layout->places[k].size() != m_layout->sites[k].size())
      throw std::invalid_argument("ColoredSsorSweep: class " + std::to_string(k) + " has " +
                                  std::to_string(m_layout->sites[k].size()) + " sites and " +
                                  std::to_string(m_layout->places[k].size()) + " places");
    m_sites += m_layout->sites[k].size();
  }
  if (spectrum) {
    if (spectrum->omega != omega)
      throw std::invalid_argument("ColoredSsorSweep: the spectrum belongs to omega = " + number_text(spectrum->omega) +
                                  ", the sweep runs at omega = " + number_text(omega));
    m_cheb.emplace(*spectrum);
  }
}

void ColoredSsorSweep::prepare(Index n, int width) {
  if (m_layout->places.empty()) check_partition(m_layout->sites, n, "ColoredSsorSweep");
  const auto w = static_cast<std::size_t>(width);
  m_block_eps.assign(ColoredSweep::kBlock * w, 0.0);
  if (!m_layout->places.empty()) m_eps.assign(ColoredSweep::kBlock * w, 0.0);
  m_streams.reserve(w);
  if (m_cheb) {
    m_prev.assign(static_cast<std::size_t>(n) * w, 0.0);
    m_cur.assign(m_prev.size(), 0.0);
  }
  m_iteration = 0;
  m_fresh = true;
}

}  // namespace dualgibbs
