// The flags the `tessera` subcommands share: the problem's inputs, the
// search, validators that say what is wrong in the words of the library's
// range errors, and --token-file. Flags become options only here, in app/
// (style anchor 7); what a command prints is cli_output.h.
#ifndef TESSERA_APP_CLI_FLAGS_H_
#define TESSERA_APP_CLI_FLAGS_H_

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

// The bearer token in the file of --token-file: its one line, the trailing
// newline stripped; InvalidArgument naming the flag for an unreadable,
// empty or multi-line file.
Result<std::string> ReadTokenFile(const std::string& path);

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

#endif  // TESSERA_APP_CLI_FLAGS_H_
