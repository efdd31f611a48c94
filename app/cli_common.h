// Shared pieces of the `tessera` subcommands: exit codes, input flags and
// their loading into a Problem, and atomic output files. Flags become
// options only here, in app/ (style anchor 7).
#ifndef TESSERA_APP_CLI_COMMON_H_
#define TESSERA_APP_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/input_limits.h"
#include "tessera/latency_rule.h"
#include "tessera/mps_from_profiles.h"
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

// Prints each infeasible service with why, and each service the iGniter
// model predicts misses its SLO, on stderr.
void NoteOutcomes(const Deployment& deployment);

// The flags every planning command shares. Empty / unset = not given.
struct InputFlags {
  std::string scenario;                  // --scenario FILE
  std::string parva_slo;                 // --parva-slo DIR
  int row = 0;                           // --row N (with --parva-slo)
  int replicate = 1;                     // --replicate K: K copies of every service
  std::string gpu;                       // --gpu NAME (default: the scenario's, else a100-80gb)
  std::optional<double> latency_factor;  // --latency-factor F
  std::string router;                    // --router first|leastconn|weighted|equal|jsq
  std::optional<double> rate_margin;     // --rate-margin M: plan for (1 + M) x every rate
  // MIG planners only.
  std::string profiles;  // --profiles PATH (default: embedded synthesized profiles)
  // Profiles given in memory (the Python package's ProfileTable), in place
  // of --profiles; never set by a flag.
  std::shared_ptr<const ProfileTable> profile_table;
  std::string compat;         // --compat parva-artifact
  std::string capacity_rule;  // --capacity-rule pooled[:CV]|queueing|bursty:SHARE|bare
  // MPS planners only.
  std::string coefficients;              // --coeffs FILE
  std::string gpulet_tables;             // --gpulet-tables FILE
  std::optional<double> price_per_hour;  // --price USD
};

// Search settings of the planners that search (e.g. exact).
struct SearchFlags {
  double time_limit_s = 0;       // --time-limit SECONDS; 0 = the planner's default
  std::uint64_t seed = 1;        // --seed N
  std::string score = "capped";  // --score capped|paper (MIG-serving's planners)
};

// A flag validator for numbers >= 0, saying what is wrong: CLI11's
// NonNegativeNumber would print DBL_MAX in full, and an unsigned option takes
// "-1" as 2^64 - 1.
CLI::Validator NonNegative();
// A flag validator for numbers in `range` (input_limits.h), saying what is
// wrong in the words of every parser's range errors.
CLI::Validator Within(const InputRange& range);

// `copies` copies of every service (ReplicateScenario) when --replicate
// stays within limits::kReplicate and the copies within limits::kServices;
// otherwise InvalidArgument naming --replicate.
Result<Scenario> Replicated(const Scenario& scenario, int copies);

// Declares the SearchFlags options on `command`.
void AddSearchFlags(CLI::App& command, SearchFlags& flags);
// The context of the flags for `planner`: --score reaches it only when it
// UsesMigServingScore().
PlanContext ContextFrom(const SearchFlags& flags, const Planner& planner);

// Declares the InputFlags options on `command`.
void AddInputFlags(CLI::App& command, InputFlags& flags);

// Ok iff every flag given applies to planners that share GPUs as `sharing`
// does (MIG flags to MIG planners, MPS flags to MPS planners); otherwise
// InvalidArgument naming the first flag that does not, and `planners`.
Status CheckFlagsApply(const InputFlags& flags, bool mps, std::string_view planners);

// The problem the inputs describe for MIG planners (mps = false: the
// scenario's pool or one GPU model, the profiles, the rule) or for MPS
// planners (mps = true: one GPU model shared whole, the iGniter
// coefficients, its price, gpu-lets' tables when given). The rule comes
// from the flags, or is `recorded` (a plan's own rule) when given; a rule
// flag that contradicts `recorded` is an error. Errors name file, line and
// field, or the flag.
Result<Problem> LoadProblem(const InputFlags& flags, bool mps,
                            const LatencyRule* recorded = nullptr);
// The iGniter coefficients and gpu-lets' tables of `gpu` (a MIG GPU) run
// whole, derived from its MIG profiles (`table` when not null, else
// `profiles_path`, else the embedded ones; mps_from_profiles.h), with a note
// on stderr saying so: what the MPS planners, validate and simulate use when
// no --coeffs is given.
Result<DerivedMps> DeriveMpsForGpu(const std::string& profiles_path, const GpuModel& gpu,
                                   const ProfileTable* table = nullptr);
// The same for a scenario already loaded with LoadScenario(flags), so that a
// command planning it both ways reads the file once.
Result<Problem> LoadProblem(const InputFlags& flags, const Scenario& scenario, bool mps,
                            const LatencyRule* recorded = nullptr);

// The scenario of --scenario, or of --parva-slo and --row, with --replicate
// applied.
Result<Scenario> LoadScenario(const InputFlags& flags);

// The deployment JSON file at `path`; errors name it.
Result<Deployment> LoadDeployment(const std::string& path);

// Where the problem's performance figures come from, for titles: "profiles:
// embedded (synthesized)", "profiles: PATH" or "iGniter coefficients: PATH".
std::string InputsSource(const InputFlags& flags, bool mps);

// A deployment read from JSON written before plans recorded their rule gets
// `rule` (the flags'), with a note on stderr naming `path` and the rule; a
// recorded rule stays.
void AdoptRule(Deployment& deployment, const std::string& path, const LatencyRule& rule);

// The MIG plan `plan` (read from `path`) must serve the scenario of `input`:
// the validator, under the plan's own rule (AdoptRule gives a plan without
// one the flags' rule). MPS flags are errors naming `command`. Returns the
// problem (the scenario's rates and SLOs); InvalidArgument "<path>: does
// not serve <scenario>: N violation(s), the first: ..." otherwise.
Result<Problem> CheckPlanServes(const InputFlags& input, const std::string& path, Deployment& plan,
                                std::string_view command);

// Ok iff `plan` (read from `path`) passes the validator against `problem`;
// otherwise InvalidArgument "<path>: does not serve <scenario>: N
// violation(s), the first: ...".
Status CheckServes(const std::string& path, const Deployment& plan, const Problem& problem);

// The one MIG GPU model of a run: `gpu_flag` (--gpu) if given, else the
// scenario's `gpu`, else a100-80gb. NotFound names --gpu or the scenario
// file; a GPU without MIG is an InvalidArgument that says how to plan it.
Result<const GpuModel*> ChooseGpu(const std::string& gpu_flag, const Scenario& scenario);

// The embedded (synthesized) profiles of every model in `gpus`, one table.
Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus);

// Writes `content` to `path`. "-" (or "") writes to stdout. A regular file,
// or a path where nothing is yet, is written through a temporary file beside
// it renamed into place, so a failed run never leaves a partial file (an
// existing file keeps its permissions, a new one gets 0666 less the umask).
// A FIFO or a character device
// (/dev/null, a terminal) is written through in place, never replaced. A
// symbolic link stays a link: its target is written by these same rules (a
// dangling link's target is created). A directory, a block device or a
// socket is an IoError naming the path, and so is any failure.
Status WriteOutput(const std::string& path, const std::string& content);

}  // namespace tessera::cli

#endif  // TESSERA_APP_CLI_COMMON_H_
