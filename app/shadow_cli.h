// The shadow guard (tessera/planners/shadow_guard.h) on the command line: the
// --shadow / --no-shadow flag of the MPS planning commands, and the guard's
// report beside a plan (a table after the plan's, a "shadow_guard" object in
// its JSON).
#ifndef TESSERA_APP_SHADOW_CLI_H_
#define TESSERA_APP_SHADOW_CLI_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/planners/shadow_guard.h"

namespace tessera::cli {

// Declares --shadow / --no-shadow on `command`; unset = the default of
// ShadowOn.
void AddShadowFlag(CLI::App& command, std::optional<bool>& shadow);

// The guard's report for people: the processes whose shadows took over, the
// standby headroom of every GPU, and what the model predicts after.
std::string FormatShadowTable(const ShadowGuardResult& guard);

}  // namespace tessera::cli

#endif  // TESSERA_APP_SHADOW_CLI_H_
