// The figure table (figures.hpp): every figure's name, description and run function, in one list.
#include <dualgibbs/paper/figures.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

const std::vector<Figure>& figures() {
  static const std::vector<Figure> table = {
      {"fig5", "variance conservation [eq:cov_woodbury] on the 8x8 torus from dual samples, bootstrap", run_fig5},
      {"fig6", "primal vs dual covariance error against sweeps and time, 10x10 torus, s=1, sigma=0.1", run_fig6},
      {"fig7", "band over 64 heterogeneous Watts-Strogatz graphs WS(64,4,0.3)", run_fig7},
      {"fig8", "scan orders (random, permutation, fixed) on the 10x10 torus", run_fig8},
      {"fig9", "k-regular graphs |V|=64, k in {2,4,8,16,32}: primal worse, dual better as k grows", run_fig9},
      {"fig10", "K5: -ln r against s/sigma, dual effective rate -> lambda_2/2 = 2.5", run_fig10},
      {"fig11", "100x100 torus marginal variances against the closed form [eq:torus_true_var]", run_fig11},
      {"accuracy", "time to accuracy of the marginal variances: CPU seconds per method to 1% and 0.1%", run_accuracy},
      {"rates", "spectral-rate benchmark: predicted r_p, r_d, r_d^eff beside fitted rates, all families", run_rates},
      {"accel",
       "accelerated samplers: mean and covariance error of gibbs, ssor, cheby-ssor against sweeps and CPU time, "
       "torus:100, torus:1000, kregular:10000,4",
       run_accel},
  };
  return table;
}

const Figure& find_figure(const std::string& name) {
  std::string known;
  for (const Figure& f : figures()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw std::invalid_argument("unknown experiment '" + name + "' (known: " + known + ")");
}

std::vector<std::string> experiment_names() {
  std::vector<std::string> names;
  for (const Figure& f : figures()) names.push_back(f.name);
  return names;
}

std::string experiment_description(const std::string& name) { return find_figure(name).description; }

ExperimentResult run_experiment(const std::string& name, const ExperimentOptions& options) {
  return find_figure(name).run(options);
}

}  // namespace dualgibbs
