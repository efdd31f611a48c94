// One replay as `tessera replay` runs it (without --sweep), and as the
// Python package's replay() runs it: the flags validated, the trace loaded
// and shaped, the optimum solved when asked, and every policy asked for
// replayed. The CLI renders what this returns; the Python package wraps it.
//
// Thread-safety: RunReplayFlags may run on any thread; notes go to stderr.
#ifndef TESSERA_APP_REPLAY_RUN_H_
#define TESSERA_APP_REPLAY_RUN_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tessera/replay.h"
#include "tessera/replay_optimum.h"
#include "tessera/status.h"
#include "tessera/vm_trace.h"
#include "trace_flags.h"

namespace tessera::cli {

struct ReplayFlags {
  TraceFlags trace;
  std::string policy = "grmu";
  bool compare = false;
  double heavy_share = 0.3;
  double fair_factor = 0.55;
  std::string consolidate_every = "off";
  bool no_defragment = false;
  std::string mecc_window = "24h";
  std::string format = "table";
  std::string svg;
  std::string output;
  bool optimum = false;
  double optimum_time_limit = 60;
  std::string sweep;
  bool policy_given = false;  // --policy on the command line (a sweep runs every policy without)
  bool heavy_share_given = false;
};

struct ReplayRun {
  VmTrace trace;
  std::vector<ReplayReport> reports;     // one per policy replayed
  std::optional<ReplayOptimum> optimum;  // with --optimum
};

// Declares the trace, policy and --optimum flags on `cmd` (not --format,
// --svg, -o or --sweep, which are the command's).
void AddReplayFlags(CLI::App& cmd, ReplayFlags& flags);
// After parsing: records whether --policy and --heavy-share were given.
void NoteReplayFlagsGiven(const CLI::App& cmd, ReplayFlags& flags);

// The replay the flags ask for (flags.sweep must be empty); with
// `describe_trace`, what the loader did to the trace goes to stderr first.
// Errors name the flag, or the file's line and field.
Result<ReplayRun> RunReplayFlags(const ReplayFlags& flags, bool describe_trace);

}  // namespace tessera::cli

#endif  // TESSERA_APP_REPLAY_RUN_H_
