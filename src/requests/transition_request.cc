#include "tessera/transition_request.h"

#include <fmt/format.h>

#include <utility>

namespace tessera {

Status CheckMigPlan(const std::string& path, const Deployment& plan) {
  if (plan.sharing != Sharing::kMps) return Status::Ok();
  return Status::InvalidArgument(path +
                                 ": field 'sharing': an MPS plan (GPUs shared whole) has no MIG "
                                 "instances to move; transitions need MIG plans");
}

Result<TransitionRun> RunTransition(const Deployment& from, const Deployment& to, int spare_gpus) {
  TransitionOptions options;
  options.spare_gpus = spare_gpus;
  TESSERA_ASSIGN_OR_RETURN(TransitionPlan plan, PlanTransition(from, to, options));
  TransitionRun run;
  if (!plan.transition) {
    run.infeasible = fmt::format("transition: {}; rerun with --spare-gpus {}", plan.reason,
                                 plan.spare_gpus_needed);
    return run;
  }
  // The planner's bookkeeping is not trusted: the independent checker replays it.
  run.check = CheckTransition(from, to, *plan.transition);
  if (!run.check.ok()) {
    return Status::Internal(
        fmt::format("the planned transition breaks {} invariant(s), the first: {}",
                    run.check.violations.size(), run.check.violations.front()));
  }
  run.naive = NaiveTransition(from, to, plan.transition->gpu_map).summary;
  run.transition = std::move(plan.transition);
  return run;
}

}  // namespace tessera
