// The planning engine: runs a Planner on a Problem and turns its segments
// into a complete Deployment (service outcomes, metrics, lower bound), timed
// with an injected clock.
//
// Thread-safety: pure functions of their arguments (the clock is only read).
#ifndef TESSERA_PLAN_H_
#define TESSERA_PLAN_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/plan/metrics.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/util/clock.h"

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

// Ok iff `planner` can plan `problem`: an MPS planner needs an MPS problem
// (Problem::BuildMps) and a MIG planner a MIG one, a pool of several models a
// planner that supports pools, and the planner's own Check() must pass.
// InvalidArgument saying what is missing otherwise.
Status CheckPlannerFits(const Planner& planner, const Problem& problem);

// Times planner.Plan() with `clock` and builds the report against the
// stronger of StrongestBound(problem) and the planner's proof (a GPU bound
// unless the pool is priced; then it fills cost_lower_bound). Propagates the
// planner's error Status and CheckPlannerFits'. A planner that took more
// than 10% over context.time_limit_s (one that cannot stop early) is noted
// on context.progress, with the time it took. A plan that uses more GPUs of
// a model than its pool entry's max_count (GpuOffer::max_count > 0) is
// InvalidArgument "<scenario>:<line>: field 'max_count': planner <name>'s
// plan needs N <gpu> GPUs, more than the pool's max_count M; ...": planners
// without pool support ignore caps, so every plan is checked here.
Result<PlanReport> RunPlanner(const Planner& planner, const Problem& problem,
                              const PlanContext& context, const Clock& clock = SystemClock());

// The planner `tessera plan` uses when none is named: the exact planner,
// which proves its plan optimal in milliseconds on every bundled scenario
// (README, "Choosing a planner"), and the heuristic run beside it when it
// cannot within its time limit.
inline constexpr std::string_view kDefaultPlanner = "exact";
inline constexpr std::string_view kFallbackPlanner = "parva";
// Above this many services the exact planner does not keep its time limit
// yet (measured: 300 services with a 5 s limit took 12.6 s and 0.7 GB, 1,000
// took 77 s and 2.4 GB), so the default plans them with kFallbackPlanner.
inline constexpr size_t kDefaultExactMaxServices = 300;

// Runs kDefaultPlanner of `planners`. When it proves no optimum in time (or
// finds no plan at all) and the problem has one GPU model, also runs
// kFallbackPlanner and keeps the plan with fewer GPUs (the exact one on a
// tie); a problem of one GPU model with more than kDefaultExactMaxServices
// services gets kFallbackPlanner alone. `note` then says so, else it is left
// empty. Errors as RunPlanner.
Result<PlanReport> RunDefaultPlanner(const PlannerRegistry& planners, const Problem& problem,
                                     const PlanContext& context, std::string& note,
                                     const Clock& clock = SystemClock());

}  // namespace tessera

#endif  // TESSERA_PLAN_H_
