// Where a planning problem comes from, and its loading: the scenario (a
// YAML file, a ParvaGPU SLO row, or one in memory), the GPU model or pool,
// the performance figures (MIG profiles from a file, a table in memory or
// the embedded synthesized ones; iGniter coefficients for the MPS planners,
// from a file or derived from the profiles) and the latency rule. Every
// front-end (the CLI's flags, the Python package's keywords, the control
// plane's options) fills one ProblemInputs and calls these, so that a
// problem, and every error about its inputs, is the same whichever one
// asked.
//
// Errors name the file, line and field, or the input by its command-line
// spelling ("--profiles", "--coeffs"), which is how docs/cli.md and every
// front-end's reference name them. A note (a default taken, a rule adopted)
// goes to the NoteSink given, as one line without a prefix or newline; an
// empty sink drops it.
//
// Thread-safety: pure functions over their arguments; they read files and
// the embedded profiles, and share nothing else.
#ifndef TESSERA_PROBLEM_INPUTS_H_
#define TESSERA_PROBLEM_INPUTS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/latency_rule.h"
#include "tessera/problem.h"
#include "tessera/profile/mps_from_profiles.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/status.h"

namespace tessera {

// Receives one note of a run: a line, without "tessera: note: " or a newline.
using NoteSink = std::function<void(std::string_view note)>;

// The inputs of a planning problem. Empty / unset = not given.
struct ProblemInputs {
  std::string scenario;                  // scenario YAML file
  std::string parva_slo;                 // a ParvaGPU SLO directory (with row)
  int row = 0;                           // its row, 1-based
  int replicate = 1;                     // copies of every service
  std::string gpu;                       // GPU model (default: the scenario's, else a100-80gb)
  std::optional<double> latency_factor;  // a batch's share of the SLO
  std::string router;                    // first|leastconn|weighted|equal|jsq
  std::optional<double> rate_margin;     // plan for (1 + M) x every rate
  // MIG planners only.
  std::string profiles;  // profile CSV or ParvaGPU prof_data (default: embedded)
  // Profiles in memory, in place of `profiles`.
  std::shared_ptr<const ProfileTable> profile_table;
  std::string compat;                       // parva-artifact
  std::string capacity_rule;                // pooled[:CV]|queueing|bursty:SHARE|bare
  std::optional<double> capacity_quantile;  // its headroom quantile (not bare)
  // MPS planners only.
  std::string coefficients;              // iGniter coefficients (JSON)
  std::string gpulet_tables;             // gpu-lets' tables (JSON Lines)
  std::optional<double> price_per_hour;  // one GPU's hourly price
};

// `copies` copies of every service (ReplicateScenario) when the count stays
// within limits::kReplicate and the copies within limits::kServices;
// otherwise InvalidArgument naming --replicate.
Result<Scenario> Replicated(const Scenario& scenario, int copies);

// The scenario of `inputs.scenario`, or of `parva_slo` and `row`, with
// `replicate` applied.
Result<Scenario> LoadScenario(const ProblemInputs& inputs);

// Ok iff every input given applies to planners that share GPUs as `mps`
// says (MIG inputs to MIG planners, MPS inputs to MPS planners); otherwise
// InvalidArgument naming the first input that does not, and `planners`.
Status CheckInputsApply(const ProblemInputs& inputs, bool mps, std::string_view planners);

// The problem the inputs describe for MIG planners (mps = false: the
// scenario's pool or one GPU model, the profiles, the rule) or for MPS
// planners (mps = true: one GPU model shared whole, the iGniter
// coefficients, its price, gpu-lets' tables when given). The rule comes
// from the inputs, or is `recorded` (a plan's own rule) when given; a rule
// input that contradicts `recorded` is an error.
Result<Problem> LoadProblem(const ProblemInputs& inputs, const Scenario& scenario, bool mps,
                            const LatencyRule* recorded, const NoteSink& notes);
// The same, the scenario loaded with LoadScenario(inputs).
Result<Problem> LoadProblem(const ProblemInputs& inputs, bool mps, const LatencyRule* recorded,
                            const NoteSink& notes);

// The iGniter coefficients and gpu-lets' tables of `gpu` (a MIG GPU) run
// whole, derived from its MIG profiles (`table` when not null, else
// `profiles_path`, else the embedded ones; mps_from_profiles.h), with a note
// saying so: what the MPS planners, validate and simulate use when no
// coefficients are given.
Result<DerivedMps> DeriveMpsForGpu(const std::string& profiles_path, const GpuModel& gpu,
                                   const ProfileTable* table, const NoteSink& notes);

// Where the problem's performance figures come from, for titles: "profiles:
// embedded (synthesized)", "profiles: PATH" or "iGniter coefficients: PATH".
std::string InputsSource(const ProblemInputs& inputs, bool mps);

// The deployment JSON file at `path`; errors name it.
Result<Deployment> LoadDeployment(const std::string& path);

// A deployment read from JSON written before plans recorded their rule gets
// `rule`, with a note naming `path` and the rule; a recorded rule stays.
void AdoptRule(Deployment& deployment, const std::string& path, const LatencyRule& rule,
               const NoteSink& notes);

// The MIG plan `plan` (read from `path`) must serve the scenario of
// `inputs`: the validator, under the plan's own rule (AdoptRule gives a plan
// without one the inputs' rule). MPS inputs are errors naming `command`.
// Returns the problem (the scenario's rates and SLOs); InvalidArgument
// "<path>: does not serve <scenario>: N violation(s), the first: ..."
// otherwise.
Result<Problem> CheckPlanServes(const ProblemInputs& inputs, const std::string& path,
                                Deployment& plan, std::string_view command, const NoteSink& notes);

// Ok iff `plan` (read from `path`) passes the validator against `problem`;
// otherwise InvalidArgument "<path>: does not serve <scenario>: N
// violation(s), the first: ...".
Status CheckServes(const std::string& path, const Deployment& plan, const Problem& problem);

// The one MIG GPU model of a run: `gpu` if given, else the scenario's
// `gpu`, else a100-80gb. NotFound names --gpu or the scenario file; a GPU
// without MIG is an InvalidArgument that says how to plan it.
Result<const GpuModel*> ChooseGpu(const std::string& gpu, const Scenario& scenario);

// The embedded (synthesized) profiles of every model in `gpus`, one table.
Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus);

// FNV-1a 64 of `table` written as Tessera's profile CSV, 16 hex digits: the
// same for the same rows however they were read.
std::string ProfilesHash(const ProfileTable& table);

// The record of the MIG profiles of `problem`, loaded from `inputs`.
ProfileSource SourceOf(const ProblemInputs& inputs, const Problem& problem);

// The inputs to check or replay `plan` with: `given`, and when it names no
// profiles and the plan records a path it was made on, that path, with a
// note saying so (a plan made on the embedded profiles needs none).
ProblemInputs InputsForPlan(const ProblemInputs& given, const Deployment& plan,
                            const NoteSink& notes);

// A note when `plan` records the profiles it was made on and `problem`'s
// (from `inputs`) are other ones: its figures were made on those.
void NoteOtherProfiles(const Deployment& plan, const ProblemInputs& inputs, const Problem& problem,
                       const NoteSink& notes);

// The problem to check `plan` against, as LoadProblem under the rule the
// plan records, the scenario `scenario` when not null (else the inputs'):
// for a MIG plan (mps false) with the profiles it records when `given` names
// none (InputsForPlan), and a note when they are other ones
// (NoteOtherProfiles). A caller that keeps the inputs for later loads
// calls those two itself.
Result<Problem> LoadPlanProblem(const ProblemInputs& given, const Deployment& plan, bool mps,
                                const Scenario* scenario, const NoteSink& notes);

}  // namespace tessera

#endif  // TESSERA_PROBLEM_INPUTS_H_
