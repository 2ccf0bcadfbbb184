#pragma once
// The bindings of the service layer's info, marginals, converge, bench and reproduce (python/src/experiments.cpp).
#include <pybind11/pybind11.h>

namespace dualgibbs::python {

/// Adds info, marginals, run_convergence, bench and run_experiment to the module `m`.
void register_experiments(pybind11::module_& m);

}  // namespace dualgibbs::python
