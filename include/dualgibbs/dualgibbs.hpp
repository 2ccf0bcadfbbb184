#pragma once
/// \file dualgibbs.hpp
/// Includes the whole public interface of dualgibbs, layer by layer (docs/concepts.md has the map).

#include <dualgibbs/export.hpp>
#include <dualgibbs/version.hpp>

// core/: ids, the one source of random numbers, how a call runs (processes and threads)
#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/index.hpp>
#include <dualgibbs/core/machine.hpp>
#include <dualgibbs/core/memory.hpp>
#include <dualgibbs/core/number_text.hpp>
#include <dualgibbs/core/random.hpp>
// model/: graphs, generators, readers, the thin-membrane model (B, L, Q, R)
#include <dualgibbs/model/generators.hpp>
#include <dualgibbs/model/graph.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
// sampling/: site kernels, the sweep engine, ensembles of chains
#include <dualgibbs/sampling/accelerated.hpp>
#include <dualgibbs/sampling/ensemble.hpp>
#include <dualgibbs/sampling/kernels.hpp>
#include <dualgibbs/sampling/partition.hpp>
#include <dualgibbs/sampling/sampler.hpp>
#include <dualgibbs/sampling/scheme.hpp>
// truth/: exact solves and selected inversion (CHOLMOD), spectra and rates (Spectra), the paper's closed forms
#include <dualgibbs/truth/closed_forms.hpp>
#include <dualgibbs/truth/exact.hpp>
#include <dualgibbs/truth/posterior_mean.hpp>
#include <dualgibbs/truth/spectral.hpp>
// estimation/: moments, Woodbury, split-half errors, fits
#include <dualgibbs/estimation/estimators.hpp>
#include <dualgibbs/estimation/flow_cv.hpp>
#include <dualgibbs/estimation/probing.hpp>
#include <dualgibbs/estimation/validate.hpp>
// experiments/: the convergence measurement, marginal variances to a target
#include <dualgibbs/experiments/experiments.hpp>
#include <dualgibbs/experiments/marginals.hpp>
// api/: one function per use case (the service layer under the command and the Python module)
#include <dualgibbs/api/bench.hpp>
#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/converge.hpp>
#include <dualgibbs/api/draws.hpp>
#include <dualgibbs/api/exact.hpp>
#include <dualgibbs/api/experiment_record.hpp>
#include <dualgibbs/api/info.hpp>
#include <dualgibbs/api/marginals.hpp>
#include <dualgibbs/api/mean.hpp>
#include <dualgibbs/api/sample.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/api/validate.hpp>
// paper/: the paper's figures are a library of their own, dualgibbs::paper (link it, then include
// <dualgibbs/paper/figures.hpp> and <dualgibbs/paper/reproduce.hpp>)
