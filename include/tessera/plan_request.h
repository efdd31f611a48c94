// One plan, as every front-end asks for it: `tessera plan`, the Python
// package's tessera.plan() and the control plane's POST /v1/plans build a
// PlanRequest and call Plan(), which checks that the planner exists and
// that every input applies to it, loads the problem, plans from scratch (the
// named planner, or the default one: plan.h, RunDefaultPlanner) or
// incrementally from a running deployment (incremental_plan.h), applies
// iGniter's shadow guard where it is on (shadow_guard.h), and validates the
// plan. One implementation, so that all of them give the same plans and the
// same error messages.
//
// Errors: InvalidArgument / NotFound / IoError for bad inputs (naming the
// file, line and field, or the input by its command-line spelling), and
// Internal for a plan the validator rejects (a planner's bug). An infeasible
// service is not an error: PlanRun::outcome says so, and the deployment's
// services say why.
//
// Thread-safety: Plan() may run on any thread; it shares nothing but the
// planner registry (read-only) and the sinks its request gives.
#ifndef TESSERA_PLAN_REQUEST_H_
#define TESSERA_PLAN_REQUEST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/plan/plan.h"
#include "tessera/planner.h"
#include "tessera/planners/shadow_guard.h"
#include "tessera/problem.h"
#include "tessera/problem_inputs.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

// How the planners that search do so.
struct SearchOptions {
  double time_limit_s = 0;       // 0: the planner's own default
  std::uint64_t seed = 1;        // a randomised planner's seed (migserving-ga)
  std::string score = "capped";  // MIG-serving's heuristic score: capped|paper
};

struct PlanRequest {
  ProblemInputs inputs;
  // The scenario in memory; unset: loaded from `inputs` (LoadScenario).
  std::optional<Scenario> scenario;
  std::string planner;  // empty: the default (PlannerFor)
  SearchOptions search;
  // An incremental plan starts from a running deployment: the JSON file at
  // `current_path`, or `current` in memory. Neither: a plan from scratch.
  std::string current_path;
  std::optional<Deployment> current;
  // GPUs an incremental plan may use beyond the best plan from scratch
  // (IncrementalOptions::max_extra_gpus); only with a current deployment.
  std::optional<int> max_extra_gpus;
  // The least-filled GPUs of the current deployment an incremental plan
  // repacks: their instances are planned afresh, the other GPUs' kept
  // (IncrementalOptions::repack_gpus); 0: none. Only with a current
  // deployment.
  int repack_gpus = 0;
  // Replace several instances of a service by one larger instance where
  // that takes less of the GPUs (IncrementalOptions::consolidate). Only
  // with a current deployment.
  bool consolidate = false;
  // iGniter's shadow guard (MPS planners only); unset: on for igniter.
  std::optional<bool> shadow;
  NoteSink notes;                                  // notes of the run; empty: dropped
  std::function<void(std::string_view)> progress;  // the planner's progress lines
};

struct PlanRun {
  Deployment deployment;
  Problem problem;
  bool mps = false;                         // the planner shares GPUs whole through MPS
  std::optional<ShadowGuardResult> shadow;  // the guard's report, when it applied
  PlanOutcome outcome = PlanOutcome::kFeasible;
  std::optional<IncrementStats> increment;  // set for an incremental plan
};

// The planner `request` runs: its own, else igniter with iGniter
// coefficients, else kDefaultPlanner.
std::string PlannerFor(const PlanRequest& request);

// The PlanContext of `search` for `planner`: the score reaches it only when
// the planner UsesMigServingScore().
PlanContext ContextFor(const SearchOptions& search, const Planner& planner);

// Plans `request` (see the top of this file).
Result<PlanRun> Plan(const PlanRequest& request);

// `deployment_json` (FormatDeploymentJson) with the shadow guard's report
// added as "shadow_guard" {max_extra_pct, activated, still_missing,
// processes: [...]} after its other keys, as `tessera plan --format json`
// writes an iGniter plan; readers of deployments ignore the key.
std::string WithShadowJson(std::string_view deployment_json, const ShadowGuardResult& guard);

// The plan's JSON as `tessera plan --format json` writes it: the deployment,
// with the shadow guard's report when the guard applied.
std::string PlanRunJson(const PlanRun& run);

}  // namespace tessera

#endif  // TESSERA_PLAN_REQUEST_H_
