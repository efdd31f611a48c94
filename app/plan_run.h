// One planning run as `tessera plan` makes it, and as the Python package
// (python/) makes it: the planner's flags checked against what it plans,
// the problem loaded, the plan made (from scratch or incrementally), the
// shadow guard applied where it is on, and the plan validated. The CLI
// then writes what this returns; the Python package wraps it in objects.
// One implementation, so that both give the same plans and the same
// error messages.
//
// Thread-safety: RunPlanRequest may run on any thread; it shares nothing
// but the planner registry (read-only) and stderr, where notes go.
#ifndef TESSERA_APP_PLAN_RUN_H_
#define TESSERA_APP_PLAN_RUN_H_

#include <optional>
#include <string>

#include "cli_common.h"
#include "incremental_cli.h"
#include "tessera/deployment.h"
#include "tessera/plan.h"
#include "tessera/problem.h"
#include "tessera/scenario.h"
#include "tessera/shadow_guard.h"
#include "tessera/status.h"

namespace tessera::cli {

struct PlanRequest {
  InputFlags input;
  SearchFlags search;
  IncrementalFlags incremental;
  std::string planner;         // empty: the default (PlannerFor)
  std::optional<bool> shadow;  // --shadow / --no-shadow; unset: GuardIfOn's default
};

struct PlanRun {
  Deployment deployment;
  Problem problem;
  bool mps = false;                         // the planner shares GPUs whole through MPS
  std::optional<ShadowGuardResult> shadow;  // the guard's report, when it applied
  PlanOutcome outcome = PlanOutcome::kFeasible;
};

// --planner, else igniter with --coeffs, else the default of plan.h.
std::string PlannerFor(const PlanRequest& request);

// Checks that the planner exists and that every flag given applies to it,
// then plans. `scenario` is the loaded scenario, or null to load it from
// request.input (--scenario or --parva-slo). Errors are those `tessera
// plan` reports, word for word; a plan the validator rejects is Internal.
Result<PlanRun> RunPlanRequest(const PlanRequest& request, const Scenario* scenario = nullptr);

}  // namespace tessera::cli

#endif  // TESSERA_APP_PLAN_RUN_H_
