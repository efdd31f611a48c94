#include "incremental_cli.h"

#include <fmt/format.h>

#include "tessera/deployment_format.h"
#include "tessera/incremental_plan.h"
#include "tessera/input_limits.h"
#include "tessera/text_io.h"

namespace tessera::cli {

void AddIncrementalFlags(CLI::App& command, IncrementalFlags& flags) {
  auto* current = command.add_option(
      "--current", flags.current,
      "Re-plan from this running deployment (JSON of tessera plan): keep the instances of "
      "services whose model, SLO and rate are unchanged, only those still needed when a rate "
      "fell, add segments where a rate rose, plan new or changed services afresh");
  command
      .add_option("--max-extra-gpus", flags.max_extra_gpus,
                  "With --current: GPUs the re-plan may use beyond the best plan from scratch "
                  "before that plan is used instead (default: 0 when it is proven optimal, "
                  "else 1)")
      ->check(Within(limits::kMaxExtraGpus))
      ->needs(current);
}

Result<std::optional<Deployment>> LoadCurrent(const IncrementalFlags& flags,
                                              const Planner& planner) {
  if (flags.current.empty()) return std::optional<Deployment>();
  if (planner.Mode() == Sharing::kMps) {
    return Status::InvalidArgument(fmt::format(
        "--current: incremental re-planning keeps MIG instances; planner {} shares GPUs whole "
        "through MPS",
        planner.Name()));
  }
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(flags.current));
  TESSERA_ASSIGN_OR_RETURN(Deployment d, ParseDeploymentJson(text, flags.current));
  return std::optional<Deployment>(std::move(d));
}

Result<PlanReport> PlanProblem(const IncrementalFlags& flags,
                               const std::optional<Deployment>& current,
                               const std::string& planner_flag, const Planner& planner,
                               const Problem& problem, const PlanContext& context) {
  if (current) {
    IncrementalOptions options;
    options.max_extra_gpus = flags.max_extra_gpus;
    if (!planner_flag.empty()) options.planner = planner_flag;
    Result<IncrementalPlan> planned =
        PlanIncremental(BuiltinPlanners(), problem, *current, options, context);
    if (!planned.ok()) return planned.status().WithContext(flags.current);
    IncrementalPlan& plan = *planned;
    PrintMessage(fmt::format(
        "tessera: note: incremental: kept {}, moved {}, new {}, removed {} instances; {} GPUs "
        "(from scratch: {}, {}; allowed {})\n",
        plan.kept, plan.moved, plan.added, plan.removed, plan.report.deployment.metrics.gpus,
        plan.scratch_gpus, plan.scratch_proven ? "proven" : "not proven", plan.allowed_gpus));
    if (!plan.note.empty()) PrintMessage("tessera: note: " + plan.note + "\n");
    return std::move(plan.report);
  }
  if (!planner_flag.empty() || planner.Name() != kDefaultPlanner) {
    return RunPlanner(planner, problem, context);
  }
  std::string note;
  Result<PlanReport> report = RunDefaultPlanner(BuiltinPlanners(), problem, context, note);
  if (!note.empty()) PrintMessage("tessera: note: " + note + "\n");
  return report;
}

}  // namespace tessera::cli
