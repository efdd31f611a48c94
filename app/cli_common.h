// Shared pieces of the `tessera` subcommands: exit codes, input flags and
// their loading into a Problem, and atomic output files. Flags become
// options only here, in app/ (style anchor 7).
#ifndef TESSERA_APP_CLI_COMMON_H_
#define TESSERA_APP_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
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

// The flags every planning command shares.
struct InputFlags {
  std::string scenario;                  // --scenario FILE
  std::string parva_slo;                 // --parva-slo DIR
  int row = 0;                           // --row N (with --parva-slo)
  std::string profiles;                  // --profiles PATH (default: embedded synthesized profiles)
  std::string gpu;                       // --gpu NAME (default: the scenario's, else a100-80gb)
  std::optional<double> latency_factor;  // --latency-factor F
  std::string compat;                    // --compat parva-artifact
  std::string capacity_rule;             // --capacity-rule queueing|bursty:SHARE|bare
  int replicate = 1;                     // --replicate K: K copies of every service
};

// Search settings of the planners that search (e.g. exact).
struct SearchFlags {
  double time_limit_s = 0;  // --time-limit SECONDS; 0 = the planner's default
  std::uint64_t seed = 1;   // --seed N
};

// Declares the SearchFlags options on `command`.
void AddSearchFlags(CLI::App& command, SearchFlags& flags);
PlanContext ContextFrom(const SearchFlags& flags);

// Declares the InputFlags options on `command`.
void AddInputFlags(CLI::App& command, InputFlags& flags);

// Everything a planner run needs, loaded and checked once.
struct Inputs {
  Scenario scenario;
  const GpuModel* gpu = nullptr;  // the first model of a pool
  std::vector<GpuOffer> pool;     // the scenario's pool, or `gpu` alone, unpriced
  ProfileTable profiles;
  LatencyRule rule;
  std::string profiles_source;  // "embedded (synthesized)" or the path
};

// Loads and validates the inputs; errors name file, line and field.
Result<Inputs> LoadInputs(const InputFlags& flags);

// The one GPU model of a run: `gpu_flag` (--gpu) if given, else the
// scenario's `gpu`, else a100-80gb. NotFound names --gpu or the scenario file.
Result<const GpuModel*> ChooseGpu(const std::string& gpu_flag, const Scenario& scenario);

// The embedded (synthesized) profiles of every model in `gpus`, one table.
Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus);
// The planning problem of `in` (over its pool).
Result<Problem> BuildProblem(const Inputs& in);

// Writes `content` to `path` through a temporary file renamed into place, so
// a failed run never leaves a partial file. "-" writes to stdout.
Status WriteOutput(const std::string& path, const std::string& content);

}  // namespace tessera::cli

#endif  // TESSERA_APP_CLI_COMMON_H_
