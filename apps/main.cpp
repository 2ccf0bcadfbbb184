// The dualgibbs command: a thin layer over libdualgibbs. Each subcommand is in apps/cmd_NAME.cpp.
#include "cli.hpp"
#include "mpi_session.hpp"

#include <dualgibbs/model/io.hpp>
#include <dualgibbs/version.hpp>

#include <malloc.h>

#include <algorithm>
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <utility>

namespace dualgibbs::cli {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

const GraphSpec& CommonOptions::spec() const {
  m_spec = api::source_spec(*this);
  return *m_spec;
}

// Under mpirun every rank loads the model from its own files: the ranks agree that they loaded the same one before
// anything else (a node-local or stale file would otherwise mix two models, or abort in a collective).
Model CommonOptions::model() const { return api::load_model(*this, false, group).model; }

Model CommonOptions::posterior_model(Index* observed) const {
  api::LoadedModel loaded = api::load_model(*this, true, group);
  if (observed) *observed = loaded.observed;
  return std::move(loaded.model);
}

void CommonOptions::refuse_obs_file(const std::string& command, const std::string& why) const {
  if (obs_file) throw std::invalid_argument(command + ": --obs-file does not apply: " + why);
}

void print_json(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

// glibc returns a freed block above its mmap threshold (or at the top of the heap above its trim threshold) to the
// system at once, so that an ensemble's checkpoint matrices, allocated and freed at every checkpoint, are faulted in
// page by page each time: 2.5 s of system time in `reproduce fig6` (15% of the run; 0.1 s with the thresholds
// below, the same results and peak memory). Blocks up to 32 MiB (glibc's largest mmap threshold) now come from the
// heap, and freed memory goes back to the system only above 1 GiB at the heap's top. The process's own policy:
// the library does not change it for programs that link it (docs/sampler.md, section 8).
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace dualgibbs::cli

int main(int argc, char** argv) {
  using namespace dualgibbs::cli;
  keep_freed_memory();
  // A reader that goes away (`dualgibbs sample -o - | head`) makes the next write fail with EPIPE, reported as a
  // write error naming the destination (exit 1), instead of killing the process silently by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  MpiSession session(argc, argv);  // under mpirun: the ranks share the chains (docs/mpi.md)
  CLI::App app{"dualgibbs " DUALGIBBS_VERSION_STRING
               ": Gibbs sampling and exact inference for thin-membrane Gaussian graphical models,\n"
               "in the primal (nodes, precision Q) and dual (edges, precision R) domains.\n"
               "Without a subcommand: the headline demo on a 10x10 torus, s = 1, sigma = 0.1."};
  app.set_version_flag("--version", DUALGIBBS_VERSION_STRING);
  app.fallthrough();
  CommonOptions common;
  common.group = session.group();
  app.add_option(
         "--graph", common.graph,
         "graph spec: torus:N|torus:NxM, grid:NxM, path:N, cycle:N, complete:N, bipartite:N1,N2, star:N,\n"
         "kregular:N,K[,SEED], ws:N,K,P[,SEED], er:N,P[,SEED], ba:N,M[,SEED], hypercube:D, torus3:N|torus3:NxMxK,\n"
         "file:PATH")
      ->capture_default_str();
  app.add_option("--s", common.s, "node standard deviation s (for every node without a value in --node-file)")
      ->capture_default_str();
  app.add_option("--sigma", common.sigma, "edge standard deviation sigma (for every edge without its own value)")
      ->capture_default_str();
  app.add_option("--node-file", common.node_file, "file of 'v s_v' lines giving per-node standard deviations");
  app.add_option("--obs-file", common.obs_file,
                 "file of 'v z_v' lines: observations z with node factors exp(-(x_v - z_v)^2 / 2 s_v^2), giving the\n"
                 "posterior N(mu, Q^-1), mu = Q^-1 D_s^-1 z (nodes without a line observe 0); used by sample,\n"
                 "exact, marginals and validate (docs/observations.md)");
  app.add_option("--precision", common.precision_file,
                 "Matrix Market file of your own sparse precision matrix Q (symmetric or general, real), in place of\n"
                 "--graph/--s/--sigma: every primal method runs on any SPD Q, the dual when Q has factor width 2\n"
                 "(docs/general-precision.md)");
  app.add_option("--canonical", common.canonical_file,
                 "file of 'v h_v' lines: the canonical vector h of N(Q^-1 h, Q^-1) (nodes without a line get 0); the\n"
                 "mean of a --precision model, or of any model in place of --obs-file");
  app.add_option("--seed", common.seed, "seed for random graphs and samplers (a non-negative integer)")
      ->capture_default_str()
      ->check([](const std::string& text) {
        return text.find('-') == std::string::npos ? std::string()
                                                   : "--seed must be a non-negative integer, got " + text;
      });
  app.add_flag("--quiet", common.quiet, "no progress on stderr");

  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name);
    runners.emplace_back(sub, c.setup(*sub, common));
  }
  app.require_subcommand(0, 1);

  int code = 0;
  std::exception_ptr error;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with exit 0; a usage error (an unknown option, a malformed number, a missing
    // argument) is bad input like any other: one line and exit 2.
    if (e.get_exit_code() == 0) return session.finish(app.exit(e), nullptr);
    std::cerr << "dualgibbs: error: " << e.what() << " (--help lists the options)" << std::endl;
    return session.finish(2, std::current_exception());
  }
  try {
    // A precision matrix is the whole model: a graph or its parameters given beside it would be silently ignored.
    if (common.precision_file)
      for (const char* option : {"--graph", "--s", "--sigma"})
        if (app.count(option) > 0)
          throw std::invalid_argument(std::string(option) +
                                      " does not apply with --precision: the matrix defines the whole model");
    bool ran = false;
    for (auto& [sub, run] : runners)
      if (sub->parsed()) {
        code = run();
        ran = true;
        break;
      }
    if (!ran) code = run_default(common);
  } catch (const std::invalid_argument& e) {
    std::cerr << "dualgibbs: error: " << e.what() << std::endl;
    code = 2;
    error = std::current_exception();
  } catch (const std::bad_alloc&) {
    std::cerr << "dualgibbs: failed: out of memory (the problem is too large for this machine)" << std::endl;
    code = 1;
    error = std::current_exception();
  } catch (const std::exception& e) {
    std::cerr << "dualgibbs: failed: " << e.what() << std::endl;
    code = 1;
    error = std::current_exception();
  }
  return session.finish(code, error);
}
