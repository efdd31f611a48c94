// The `tessera` subcommands. Each Add*Command declares its flags on `app`
// and, when the command is chosen, stores its exit code in `exit_code`.
#ifndef TESSERA_APP_COMMANDS_H_
#define TESSERA_APP_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <string_view>

#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera::cli {

void AddPlanCommand(CLI::App& app, int& exit_code);
void AddCompareCommand(CLI::App& app, int& exit_code);
void AddGpusCommand(CLI::App& app, int& exit_code);
void AddProfilesCommand(CLI::App& app, int& exit_code);
void AddValidateCommand(CLI::App& app, int& exit_code);
void AddSimulateCommand(CLI::App& app, int& exit_code);
void AddGsliceCommand(CLI::App& app, int& exit_code);
void AddReplayCommand(CLI::App& app, int& exit_code);
void AddGenCommand(CLI::App& app, int& exit_code);
void AddIgniterCommand(CLI::App& app, int& exit_code);
void AddTransitionCommand(CLI::App& app, int& exit_code);
void AddAutoscaleCommand(CLI::App& app, int& exit_code);
void AddDeployCommand(CLI::App& app, int& exit_code);
void AddAgentCommand(CLI::App& app, int& exit_code);
void AddServeCommand(CLI::App& app, int& exit_code);
void AddRouterAgentCommand(CLI::App& app, int& exit_code);
void AddK8sCommand(CLI::App& app, int& exit_code);
void AddEmulateCommand(CLI::App& app, int& exit_code);
void AddRehearseCommand(CLI::App& app, int& exit_code);

// ---- Shared by `simulate` and `plan --verify` (defined in cmd_simulate.cc) ----

// Prints "tessera: note: service ..." on stderr for every service the
// simulation served below 99% within its SLO: findings, not errors.
void NoteSloMisses(const SimReport& report);

}  // namespace tessera::cli

#endif  // TESSERA_APP_COMMANDS_H_
