#pragma once
// Shared plumbing of the dualgibbs command: the options every subcommand understands, and a registry so
// that each subcommand lives in its own file (apps/cmd_NAME.cpp) and registers itself.

#include <dualgibbs/api/common.hpp>
#include <dualgibbs/api/scheme.hpp>
#include <dualgibbs/model/io.hpp>
#include <dualgibbs/model/model.hpp>
#include <dualgibbs/sampling/accelerated.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dualgibbs::cli {

/// Options of the top-level command, shared by all subcommands (given before or after the subcommand): the model's
/// source (api::ModelSource: --graph, --s, --sigma, --node-file, --obs-file, --seed) and --quiet.
struct CommonOptions : api::ModelSource {
  bool quiet = false;
  /// The ranks sharing the work under mpirun (MpiSession::group(): two or more), or null for one process. Every
  /// subcommand passes it on explicitly (api::Execution::group).
  ChainGroup* group = nullptr;
  /// The parsed --graph spec (parsed on the first call). \throws std::invalid_argument for a bad spec.
  const GraphSpec& spec() const;
  /// Loads the model these options describe (the zero-mean prior: --obs-file is not read).
  /// \throws std::invalid_argument on bad input.
  Model model() const;
  /// The model with the observations of --obs-file set (api::load_model()), or the prior without --obs-file;
  /// `observed` (if given) receives the number of nodes with a line. \throws std::invalid_argument on bad input.
  Model posterior_model(Index* observed = nullptr) const;
  /// Refuses --obs-file for a subcommand that does not use it: std::invalid_argument "COMMAND: --obs-file does not
  /// apply: WHY".
  void refuse_obs_file(const std::string& command, const std::string& why) const;

 private:
  mutable std::optional<GraphSpec> m_spec;  // parsed once, after the command line has set `graph`
};

/// A subcommand: `setup` adds it to the app and returns the callback to run when it is chosen.
struct Command {
  std::string name;
  std::function<std::function<int()>(CLI::App& app, CommonOptions& common)> setup;
};

/// All registered subcommands.
std::vector<Command>& registry();

/// Registers a subcommand at static-initialisation time: `static Registration reg{{"info", setup_info}};`.
struct Registration {
  explicit Registration(Command c) { registry().push_back(std::move(c)); }
};

/// The run without a subcommand (the headline demo).
int run_default(const CommonOptions& common);

/// Adds a count option (chains, sweeps, threads, ...). CLI11 converts "-1" to an unsigned type by wrapping
/// around (2^64 - 1 sweeps: a run that never ends), so the value must be written as a non-negative integer;
/// anything else is a usage error naming the option.
template <class T>
CLI::Option* add_count(CLI::App& app, const std::string& name, T& target, const std::string& help) {
  return app.add_option(name, target, help)
      ->check(CLI::Validator(
          [](std::string& text) {
            return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "must be a non-negative integer, got '" + text + "'";
          },
          "COUNT"));
}

/// The sweep-scheme options of sample, converge, bench and marginals: --scheme, --omega, --lambda-min, --lambda-max
/// (the scan is each subcommand's --scan).
using SchemeCli = api::SchemeChoice;

/// Adds --scheme, --omega, --lambda-min and --lambda-max to a subcommand.
void add_scheme_options(CLI::App& app, SchemeCli& target);

/// api::make_scheme() with the subcommand's --scan and --threads.
inline SchemeOptions resolve_scheme(SchemeCli cli, const std::string& scan, unsigned threads, const Model& model,
                                    Domain domain, const std::string& command) {
  cli.scan = scan;
  return api::make_scheme(cli, threads, model, domain, command);
}

/// api::scan_order().
inline ScanOrder parse_scan(const std::string& scan) { return api::scan_order(scan); }

/// api::add_scheme_record().
inline void add_scheme_json(nlohmann::json& j, const SchemeOptions& scheme) { api::add_scheme_record(j, scheme); }

/// Prints JSON on stdout, one object per line.
void print_json(const nlohmann::json& j);

}  // namespace dualgibbs::cli
