// The planning engine: runs a Planner on a Problem and turns its segments
// into a complete Deployment (service outcomes, metrics, lower bound), timed
// with an injected clock.
//
// Thread-safety: pure functions of their arguments (the clock is only read).
#ifndef TESSERA_PLAN_H_
#define TESSERA_PLAN_H_

#include <string_view>

#include "tessera/clock.h"
#include "tessera/deployment.h"
#include "tessera/metrics.h"
#include "tessera/planner.h"
#include "tessera/problem.h"

namespace tessera {

enum class PlanOutcome {
  kFeasible,    // every service is served
  kInfeasible,  // some service has no triplet meeting its SLO (it is reported, not dropped)
};

struct PlanReport {
  Deployment deployment;
  PlanOutcome outcome = PlanOutcome::kFeasible;
};

// Describes `result` as a Deployment of `problem` made by `planner_name`:
// GPUs renumbered densely (empty ones dropped), instances sorted by start,
// service outcomes in scenario order, metrics against `bound`.
Deployment BuildDeployment(const Problem& problem, const PlanResult& result,
                           std::string_view planner_name, const LowerBound& bound, double plan_ms);

// Times planner.Plan() with `clock` and builds the report against the
// stronger of StrongestBound(problem) and the planner's proof (a GPU bound
// unless the pool is priced; then it fills cost_lower_bound). Propagates the
// planner's error Status; InvalidArgument for a pool of several models and a
// planner that does not support pools.
Result<PlanReport> RunPlanner(const Planner& planner, const Problem& problem,
                              const PlanContext& context, const Clock& clock = SystemClock());

}  // namespace tessera

#endif  // TESSERA_PLAN_H_
