#pragma once
/// \file bootstrap.hpp
/// The nonparametric bootstrap of single draws for a statistic of the sample moments (the block bootstrap of
/// grouped draws is GroupedMoments::bootstrap()).

#include <dualgibbs/estimation/moments.hpp>
#include <dualgibbs/export.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace dualgibbs {

/// Nonparametric bootstrap of single draws for a statistic of the full sample moments: `replicates` resamples of
/// the n columns of `draws` (dim x n) with replacement, replicate r drawing its n column indices with
/// uniform_below(rng, n) from make_stream(seed, r, StreamPurpose::Bootstrap), each evaluated by `statistic` on the
/// resample's SampleMoments (count n, mean, covariance with divisor n - 1).
///
/// The multiplicities w turn a replicate into weighted sums: about the mean c of all draws, the resample's scatter
/// is sum_k (x_k - c)(x_k - c)^T + sum_k (w_k - 1)(x_k - c)(x_k - c)^T, and the second sum for a batch of replicates
/// is one matrix product of the draws' dim (dim + 3) / 2 products and means (lower triangle and the draw itself)
/// with the integer weights w - 1, in single precision (exact weights; the products rounded to 2^-24 relative, an
/// error below 1e-6 of the statistic's bootstrap spread in fig5), accumulated in double over chunks of draws. Work:
/// replicates x n x dim (dim + 3) / 2 multiply-adds (fig5: 10^4 x 10^5 x 2144 = 2.1e12), spread over the hardware
/// threads (at most `threads`) in fixed blocks, so the numbers do not depend on the thread count (the replicate
/// count, which sets the products' blocking, moves them by about 1e-10 relative).
/// \param draws the draws, dim x n, one per column
/// \param replicates the number of resamples
/// \param seed the seed of the resamples' streams
/// \param statistic the statistic of a resample's moments
/// \param threads the threads it may use, counting the caller (0: available_threads())
/// \return the statistic of every replicate, in replicate order
/// \throws std::invalid_argument for fewer than 2 draws, non-finite draws, no statistic or zero replicates.
DUALGIBBS_EXPORT std::vector<double> bootstrap_draws(const Eigen::Ref<const Eigen::MatrixXd>& draws,
                                                     std::size_t replicates, std::uint64_t seed,
                                                     const std::function<double(const SampleMoments&)>& statistic,
                                                     unsigned threads = 0);

}  // namespace dualgibbs
