// Sampling the dual domain through the service layer, with draws handed to a sink of your own.
//
// api::sample runs the chains with the options and defaults of `dualgibbs sample` and hands every written checkpoint
// to a DrawsSink: here one that keeps the last states of x~ = B y~ (the dual draws seen on the nodes). The Woodbury
// identity [eq:cov_woodbury3] turns them into the primal marginal variances, Var(X_v) = s_v^2 - s_v^4 Var(x~_v), which
// the example compares with the torus closed form [eq:torus_true_var].
//
//   build/examples/cpp/example_sample_dual
#include <dualgibbs/dualgibbs.hpp>

#include <cmath>
#include <cstdio>

namespace {

// Keeps the states of the last checkpoint (dim x chains, one column per chain).
class LastStates final : public dualgibbs::api::DrawsSink {
 public:
  void begin(Eigen::Index dim, std::size_t chains, std::uint64_t /*checkpoints*/) override {
    states.resize(dim, static_cast<Eigen::Index>(chains));
  }
  void write(std::uint64_t /*sweep*/, const Eigen::Ref<const Eigen::MatrixXd>& s) override { states = s; }
  Eigen::MatrixXd states;
};

}  // namespace

int main() {
  const double s = 1.0, sigma = 0.5;
  const dualgibbs::Model model(dualgibbs::make_torus(12, 12), s, sigma);

  dualgibbs::api::SampleOptions options;  // the command's defaults, then ours
  options.domain = "dual";
  options.draws = "x";  // x~ = B y~ over the nodes
  options.chains = 4000;
  options.sweeps = 60;
  options.seed = 3;
  LastStates sink;
  const dualgibbs::api::SampleResult run = dualgibbs::api::sample(model, options, sink, {});

  // Per chain, the Woodbury reconstruction averaged over the nodes (every node of a homogeneous torus has the same
  // variance, and the mean of x~ is zero): independent over the chains, so their mean and standard error follow.
  const double s2 = s * s;
  const Eigen::ArrayXd per_chain = (s2 - s2 * s2 * sink.states.array().square()).colwise().mean().transpose();
  const double estimate = per_chain.mean();
  const double se = std::sqrt((per_chain - estimate).square().sum() / (per_chain.size() - 1) / per_chain.size());
  const double truth = dualgibbs::torus_marginal_variance(12, 12, s, sigma);
  std::printf("%zu chains x %zu sweeps in %.3f s (%.2f ns per update)\n", options.chains, options.sweeps,
              run.stats.seconds, run.stats.ns_per_update);
  std::printf("Var(X_v) from the dual draws %.5f +- %.5f, closed form %.5f (%.1f standard errors apart)\n", estimate,
              se, truth, std::abs(estimate - truth) / se);
  // Beyond 5 standard errors is a failure (probability below 1e-6 for a correct sampler after its burn-in).
  return std::abs(estimate - truth) < 5 * se ? 0 : 1;
}
