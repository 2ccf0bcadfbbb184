#pragma once
/// \file estimators.hpp
/// Estimators of the paper's Section VII: moments across many independent chains at one checkpoint,
/// split into two independent halves; the Woodbury reconstruction of the primal covariance from dual
/// samples [eq:cov_woodbury3]; the biased error ||S^ - S||_F^2 and the unbiased split-half error
/// trace((S^1 - S)^T (S^2 - S)) [eq:unbiased_error]; marginal-variance errors; jackknife standard errors;
/// the bootstrap; normalisation to sweep 0; and a robust (Theil–Sen) fit of a geometric decay rate.
///
/// Everything here works on plain matrices of draws (dimension x count, one column per draw), so it does
/// not depend on how the draws were produced. The experiments module feeds it the checkpoints of
/// run_ensemble(); tests feed it exact draws.
///
/// Bias and Monte-Carlo variance are reported separately for every error estimate:
///  - `Eb` is biased upwards by the Monte-Carlo variance of S^; its estimated floor `Eb_floor` is reported
///    next to it (so `Eb - Eb_floor` is an estimate of the true error);
///  - `Eu` is unbiased; its standard error `Eu_se` is reported next to it (group jackknife with the
///    degenerate term removed: unbiased away from convergence, conservative near it, where the true
///    variance is bounded below by tr(C1 C2) and the estimate is floored there). The dual's
///    Woodbury estimate D_s - D_s Cov^(x~) D_s can carry far more Monte-Carlo variance than the primal's
///    sample covariance (the weights s_v^2 multiply the noise of Cov^(x~)); `Eu_se` and `Eb_floor` make
///    that visible.
///
/// \code
/// // states: |V| x L matrix of x~ = B y~ from L independent dual chains at one sweep
/// dualgibbs::CovarianceErrorTracker track(dualgibbs::Domain::Dual, model.node_variances(), exact_cov_x);
/// dualgibbs::ErrorEstimate e = track.observe(sweep, seconds, states);
/// std::cout << e.Eu << " +- " << e.Eu_se << "\n";
/// \endcode
///
/// One header a concept, all included here: moments.hpp (sample moments and their sums), grouped_moments.hpp
/// (the group reduction), bootstrap.hpp, woodbury.hpp (the reconstruction [eq:cov_woodbury3]), errors.hpp (biased
/// and split-half errors), error_tracker.hpp (checkpoints scored with jackknife standard errors) and rate_fits.hpp
/// (normalisation and decay-rate fits).

#include <dualgibbs/estimation/bootstrap.hpp>
#include <dualgibbs/estimation/error_tracker.hpp>
#include <dualgibbs/estimation/errors.hpp>
#include <dualgibbs/estimation/grouped_moments.hpp>
#include <dualgibbs/estimation/moments.hpp>
#include <dualgibbs/estimation/rate_fits.hpp>
#include <dualgibbs/estimation/woodbury.hpp>
