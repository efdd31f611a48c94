// tessera: plans MIG + MPS spatial sharing of NVIDIA GPUs for DNN inference.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "tessera/util/text_io.h"

namespace {

// Levenshtein distance of two short words.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The error for a first argument that names no command (CLI11 would take
// `tessera rehaerse --help` as the main help and exit 0): the closest
// command when one is within two edits.
std::string UnknownCommand(const CLI::App& app, std::string_view word) {
  std::string closest;
  size_t best = 3;
  for (const CLI::App* command : app.get_subcommands({})) {
    const size_t d = Distance(word, command->get_name());
    if (d < best) {
      best = d;
      closest = command->get_name();
    }
  }
  return "unknown command '" + std::string(word) + "'" +
         (closest.empty() ? "" : "; did you mean '" + closest + "'?") +
         " (see `tessera --help` for the commands)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Tessera plans how to cut NVIDIA GPUs into MIG instances, which DNN service runs in\n"
      "each with what batch size and how many MPS processes, so every service meets its\n"
      "request rate and latency SLO on as few GPUs as possible; it checks every plan with\n"
      "an independent validator.",
      "tessera"};
  app.footer(
      "Examples:\n"
      "  tessera plan --scenario examples/scenarios/s3.yaml --svg plan.svg\n"
      "  tessera compare --scenario examples/scenarios/s6.yaml\n"
      "  tessera gpus --gpu a100-80gb --layouts\n"
      "  tessera simulate --scenario examples/scenarios/s3.yaml --deployment plan.json\n"
      "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml\n"
      "  tessera replay --nodes NODES.csv --pods PODS.csv --compare\n"
      "  tessera deploy --deployment plan.json --scenario examples/scenarios/s3.yaml --out "
      "deploy\n"
      "  tessera agent --node node-0 --plan deploy/nodes/node-0.json --state-dir st --once\n"
      "  tessera serve --db tessera.db --listen 127.0.0.1:8080\n\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input, 3 some service cannot meet its SLO.\n"
      "Run `tessera COMMAND --help` for a command's flags and examples.");
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  int exit_code = tessera::cli::kExitOk;
  tessera::cli::AddPlanCommand(app, exit_code);
  tessera::cli::AddCompareCommand(app, exit_code);
  tessera::cli::AddGpusCommand(app, exit_code);
  tessera::cli::AddProfilesCommand(app, exit_code);
  tessera::cli::AddValidateCommand(app, exit_code);
  tessera::cli::AddSimulateCommand(app, exit_code);
  tessera::cli::AddGsliceCommand(app, exit_code);
  tessera::cli::AddReplayCommand(app, exit_code);
  tessera::cli::AddGenCommand(app, exit_code);
  tessera::cli::AddIgniterCommand(app, exit_code);
  tessera::cli::AddTransitionCommand(app, exit_code);
  tessera::cli::AddAutoscaleCommand(app, exit_code);
  tessera::cli::AddDeployCommand(app, exit_code);
  tessera::cli::AddAgentCommand(app, exit_code);
  tessera::cli::AddServeCommand(app, exit_code);
  tessera::cli::AddRouterAgentCommand(app, exit_code);
  tessera::cli::AddK8sCommand(app, exit_code);
  tessera::cli::AddEmulateCommand(app, exit_code);
  tessera::cli::AddRehearseCommand(app, exit_code);
  const std::vector<CLI::App*> commands = app.get_subcommands({});
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(),
                   [&](const CLI::App* command) { return command->check_name(argv[1]); })) {
    tessera::cli::PrintMessage("tessera: error: " + UnknownCommand(app, argv[1]) + "\n");
    return tessera::cli::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other error: what is wrong and where to read more,
    // escaped as every message is.
    tessera::cli::PrintMessage("tessera: error: " + std::string(e.what()) + " (see `tessera " +
                               (argc > 1 ? std::string(argv[1]) + " " : std::string()) +
                               "--help`)\n");
    return tessera::cli::kExitBadInput;
  }
  return exit_code;
}
