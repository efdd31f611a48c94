// How `tessera plan` plans: from scratch with the named planner or the
// default one, or incrementally from a running deployment (--current,
// incremental_plan.h), keeping as many of its instances in place as it can.
#ifndef TESSERA_APP_INCREMENTAL_CLI_H_
#define TESSERA_APP_INCREMENTAL_CLI_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli_common.h"
#include "tessera/deployment.h"
#include "tessera/plan.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/status.h"

namespace tessera::cli {

struct IncrementalFlags {
  std::string current;                // --current FILE; empty = plan from scratch
  std::optional<int> max_extra_gpus;  // --max-extra-gpus K (needs --current)
};

// Declares --current and --max-extra-gpus on `command`.
void AddIncrementalFlags(CLI::App& command, IncrementalFlags& flags);

// The deployment of --current, or nullopt without it. InvalidArgument when
// `planner` (the planner --planner or --coeffs chose) shares GPUs through
// MPS, or the file is not a MIG plan; errors name the file (and the JSON
// path of a bad field).
Result<std::optional<Deployment>> LoadCurrent(const IncrementalFlags& flags,
                                              const Planner& planner);

// Plans `problem`. With `current`: incrementally (PlanIncremental), new
// segments planned by `planner_flag`'s planner (default parva), and one
// note on stderr: "tessera: note: incremental: kept K, moved M, new N,
// removed R instances; G GPUs (from scratch: S, proven|not proven; allowed
// A)", then why the plan from scratch was used, if it was. Without: the
// named planner, or the default one (plan.h) with its note.
Result<PlanReport> PlanProblem(const IncrementalFlags& flags,
                               const std::optional<Deployment>& current,
                               const std::string& planner_flag, const Planner& planner,
                               const Problem& problem, const PlanContext& context);

}  // namespace tessera::cli

#endif  // TESSERA_APP_INCREMENTAL_CLI_H_
