#include "plan_run.h"

#include <memory>
#include <utility>
#include <vector>

#include "shadow_cli.h"
#include "tessera/validator.h"

namespace tessera::cli {

std::string PlannerFor(const PlanRequest& request) {
  if (!request.planner.empty()) return request.planner;
  return request.input.coefficients.empty() ? std::string(kDefaultPlanner) : "igniter";
}

Result<PlanRun> RunPlanRequest(const PlanRequest& request, const Scenario* scenario) {
  const std::string name = PlannerFor(request);
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
  if (!planner.ok()) return planner.status().WithContext("--planner");
  const bool mps = (*planner)->Mode() == Sharing::kMps;
  TESSERA_RETURN_IF_ERROR(CheckFlagsApply(request.input, mps, "planner " + name));
  if (!mps && request.shadow) {
    return Status::InvalidArgument(
        "--shadow/--no-shadow does not apply to planner " + name +
        ": the shadow guard is for the MPS planners (whole GPUs shared through MPS)");
  }
  if (request.search.score != "capped" && !(*planner)->UsesMigServingScore()) {
    return Status::InvalidArgument(
        "--score does not apply to planner " + name +
        ": it chooses the heuristic score of MIG-serving's planners (migserving-*)");
  }
  TESSERA_ASSIGN_OR_RETURN(std::optional<Deployment> current,
                           LoadCurrent(request.incremental, **planner));
  // A re-plan keeps the rule its deployment was made under.
  const LatencyRule* recorded = current && current->rule_recorded ? &current->rule : nullptr;
  TESSERA_ASSIGN_OR_RETURN(
      Problem problem, scenario != nullptr ? LoadProblem(request.input, *scenario, mps, recorded)
                                           : LoadProblem(request.input, mps, recorded));
  if (current) AdoptRule(*current, request.incremental.current, problem.rule());
  TESSERA_ASSIGN_OR_RETURN(PlanReport report,
                           PlanProblem(request.incremental, current, request.planner, **planner,
                                       problem, ContextFrom(request.search, **planner)));
  PlanRun run{std::move(report.deployment), std::move(problem), mps, std::nullopt, report.outcome};
  if (mps) {
    TESSERA_ASSIGN_OR_RETURN(run.shadow, GuardIfOn(request.shadow, run.deployment, run.problem));
  }
  const std::vector<Violation> violations = ValidateDeployment(run.deployment, run.problem);
  if (!violations.empty()) {
    return Status::Internal("planner " + run.deployment.planner + " produced an invalid plan:\n" +
                            FormatViolations(violations));
  }
  return run;
}

}  // namespace tessera::cli
