// A consumer compiled for a wider vector unit than the library (-mavx2 -mfma, the library for the x86-64 baseline):
// Eigen's heap blocks made in the library are freed here and the other way round, which needs both sides to allocate
// them the same way (the library exports EIGEN_MALLOC_ALREADY_ALIGNED=0 with its compile flags). Without it the first
// of the library's vectors freed here crashes.
#include <dualgibbs/dualgibbs.hpp>

#include <Eigen/Core>

#include <cmath>
#include <iostream>

int main() {
  const dualgibbs::Model model(dualgibbs::make_torus(4, 5), 1.0, 0.5);
  const Eigen::MatrixXd draws = Eigen::MatrixXd::Random(model.num_nodes(), 64);
  double trace = 0.0;
  for (int k = 0; k < 3; ++k) {
    const dualgibbs::GroupedMoments gm(draws, 4, dualgibbs::MomentKind::Full);  // its sums allocated in the library
    trace += gm.moments().covariance.trace();  // the moments' blocks allocated inline here, freed here
  }
  Eigen::VectorXd variances = model.node_variances();  // a copy made here of the library's vector
  variances.resize(40);                                // reallocated here
  std::cout << "trace " << trace << ", " << variances.size() << " entries\n";
  return std::isfinite(trace) && trace > 0 ? 0 : 1;
}
