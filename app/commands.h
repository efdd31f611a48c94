// The `tessera` subcommands. Each Add*Command declares its flags on `app`
// and, when the command is chosen, stores its exit code in `exit_code`.
#ifndef TESSERA_APP_COMMANDS_H_
#define TESSERA_APP_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace tessera::cli {

void AddPlanCommand(CLI::App& app, int& exit_code);
void AddCompareCommand(CLI::App& app, int& exit_code);
void AddGpusCommand(CLI::App& app, int& exit_code);
void AddProfilesCommand(CLI::App& app, int& exit_code);
void AddValidateCommand(CLI::App& app, int& exit_code);

}  // namespace tessera::cli

#endif  // TESSERA_APP_COMMANDS_H_
