// The five-line use of dualgibbs from the README: build a model, get its primal precision.
#include <cmath>
#include <dualgibbs/dualgibbs.hpp>  // the whole public interface: it must compile without private dependencies
#include <iostream>

int main() {
  const dualgibbs::Model model(dualgibbs::make_torus(10, 10), /*s=*/1.0, /*sigma=*/0.1);
  const dualgibbs::SparseMatrix Q = model.primal_precision();              // Q = D_s^-1 + B D_sigma^-1 B^T
  std::cout << model.summary() << "\nQ(0,0) = " << Q.coeff(0, 0) << "\n";  // 1/s^2 + 4/sigma^2 = 401
  return std::abs(Q.coeff(0, 0) - 401.0) < 1e-9 ? 0 : 1;
}
