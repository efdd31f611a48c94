// What the `tessera` subcommands print and how they end: exit codes,
// errors, notes and progress on stderr. Their shared flags are
// cli_flags.h, their output files output_file.h.
#ifndef TESSERA_APP_CLI_OUTPUT_H_
#define TESSERA_APP_CLI_OUTPUT_H_

#include <functional>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/problem_inputs.h"
#include "tessera/status.h"

namespace tessera::cli {

// Exit codes (DESIGN.md, Errors).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;    // a bug, e.g. a plan the validator rejects
inline constexpr int kExitBadInput = 2;    // bad flags, files or values
inline constexpr int kExitInfeasible = 3;  // some service cannot meet its SLO

// Exit code for an error Status.
int ExitCodeFor(const Status& status);
// Prints "tessera: error: <message>" to stderr and returns ExitCodeFor(status).
int ReportError(const Status& status);

// Writes `text` to stderr through EscapeMessage: every message and note the
// CLI prints goes through it, so that user text quoted in it (a name with a
// NUL or an escape sequence) never reaches the terminal raw.
void PrintMessage(std::string_view text);

// The sink of the library's notes on the command line: each note printed
// as "tessera: note: <note>" through PrintMessage.
NoteSink CliNotes();
// The sink of a planner's progress lines: each printed as "tessera: <line>".
std::function<void(std::string_view)> CliProgress();

// Prints each infeasible service with why, and each service the iGniter
// model predicts misses its SLO, on stderr.
void NoteOutcomes(const Deployment& deployment);

}  // namespace tessera::cli

#endif  // TESSERA_APP_CLI_OUTPUT_H_
