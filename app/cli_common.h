// Shared pieces of the `tessera` subcommands: exit codes, messages and
// notes, and the flags they share (output files: output_file.h). Flags become
// options only here, in app/ (style anchor 7).
#ifndef TESSERA_APP_CLI_COMMON_H_
#define TESSERA_APP_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/durations.h"
#include "tessera/gpu_catalog.h"
#include "tessera/latency_rule.h"
#include "tessera/plan_request.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/problem_inputs.h"
#include "tessera/profile/mps_from_profiles.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/util/input_limits.h"

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

// The bearer token in the file of --token-file: its one line, the trailing
// newline stripped; InvalidArgument naming the flag for an unreadable,
// empty or multi-line file.
Result<std::string> ReadTokenFile(const std::string& path);

// Writes `text` to stderr through EscapeMessage: every message and note the
// CLI prints goes through it, so that user text quoted in it (a name with a
// NUL or an escape sequence) never reaches the terminal raw. Collected
// instead while a NoteCollector lives on this thread.
void PrintMessage(std::string_view text);

// While one lives on a thread, PrintMessage on that thread appends its text
// here instead of writing it to stderr: the Python package attaches the
// notes of a run to its result. The innermost of nested collectors collects.
class NoteCollector {
 public:
  NoteCollector();
  ~NoteCollector();
  NoteCollector(const NoteCollector&) = delete;
  NoteCollector& operator=(const NoteCollector&) = delete;

  // The texts collected so far, each as PrintMessage would have written it.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  friend void PrintMessage(std::string_view text);
  NoteCollector* outer_;
  std::vector<std::string> notes_;
};

// The sink of the library's notes on the command line: each note printed
// as "tessera: note: <note>" through PrintMessage.
NoteSink CliNotes();
// The sink of a planner's progress lines: each printed as "tessera: <line>".
std::function<void(std::string_view)> CliProgress();

// Prints each infeasible service with why, and each service the iGniter
// model predicts misses its SLO, on stderr.
void NoteOutcomes(const Deployment& deployment);

// A flag validator for numbers >= 0, saying what is wrong: CLI11's
// NonNegativeNumber would print DBL_MAX in full, and an unsigned option takes
// "-1" as 2^64 - 1.
CLI::Validator NonNegative();
// A flag validator for numbers in `range` (input_limits.h), saying what is
// wrong in the words of every parser's range errors.
CLI::Validator Within(const InputRange& range);
// A time flag: ParseDuration's text (a number, optionally with a unit) in
// `range`, handed on as a plain number in `plain_unit_s` seconds; the
// error is ParseDuration's.
CLI::Validator DurationFlag(const DurationRange& range, double plain_unit_s = 1);

// Declares the SearchOptions options on `command`.
void AddSearchFlags(CLI::App& command, SearchOptions& flags);
// The context of the flags for `planner` (ContextFor), its progress lines
// printed as "tessera: <line>".
PlanContext ContextFrom(const SearchOptions& flags, const Planner& planner);

// Declares the options of the problem's inputs (--scenario, --profiles, ...)
// on `command`.
void AddInputFlags(CLI::App& command, ProblemInputs& flags);

}  // namespace tessera::cli

#endif  // TESSERA_APP_CLI_COMMON_H_
