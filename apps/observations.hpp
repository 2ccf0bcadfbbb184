#pragma once
// The posterior mean in the command's options: --mean-solver / --mean-tolerance of the subcommands that solve for mu
// themselves (sample, marginals). The record fields every such output carries are api::add_posterior_mean_record()'s
// (docs/observations.md lists them).
#include "cli.hpp"

#include <dualgibbs/api/mean.hpp>

#include <CLI/CLI.hpp>

namespace dualgibbs::cli {

/// How a subcommand solves Q mu = h.
using MeanCliOptions = api::MeanChoice;

/// Adds --mean-solver and --mean-tolerance to `app`.
void add_mean_options(CLI::App& app, MeanCliOptions& opt);

}  // namespace dualgibbs::cli
