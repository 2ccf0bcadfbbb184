#pragma once
// The standard error of a mean over independent chains (private header): shared by the accumulators whose sums
// hold, per node and chain, a term summed over evaluations (MarginalVarianceCv, the marginals' RBMC accumulator).

#include <Eigen/Core>

#include <cmath>
#include <cstddef>

namespace dualgibbs::detail {

// sums: |V| x chains, the sum over `evaluations` evaluations of each chain's term; mean: the mean of the terms per
// node (the rows' mean over chains divided by evaluations). Returns per node sqrt(var / chains), var the sample
// variance over the chains of their means over evaluations. Row by row: no |V| x chains temporary, which with its
// page faults cost as much as the rest of a MarginalVarianceCv evaluation (2% of a dual-cv run on kregular:10000,4,
// where it runs at every evaluation for the stopping rule).
template <class Sums>
Eigen::VectorXd chain_spread_std_error(const Sums& sums, std::size_t evaluations, const Eigen::VectorXd& mean) {
  const auto chains = static_cast<double>(sums.cols());
  const auto evals = static_cast<double>(evaluations);
  Eigen::VectorXd se(sums.rows());
  for (Eigen::Index v = 0; v < sums.rows(); ++v) {
    const double var = ((sums.row(v).array() / evals) - mean[v]).square().sum() / (chains - 1);
    se[v] = std::sqrt(var / chains);
  }
  return se;
}

}  // namespace dualgibbs::detail
