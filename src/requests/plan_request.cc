#include "tessera/plan_request.h"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "tessera/deployment_format.h"
#include "tessera/durations.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "tessera/validator.h"
#include "transition/incremental_plan.h"

namespace tessera {
namespace {

void Note(const NoteSink& notes, const std::string& text) {
  if (notes) notes(text);
}

// The running deployment an incremental plan starts from, or nullopt for a
// plan from scratch. Incremental re-planning keeps MIG instances, so an MPS
// `planner` is an error.
Result<std::optional<Deployment>> Current(const PlanRequest& request, const Planner& planner) {
  if (request.current_path.empty() && !request.current) return std::optional<Deployment>();
  if (planner.Mode() == Sharing::kMps) {
    return Status::InvalidArgument(fmt::format(
        "--current: incremental re-planning keeps MIG instances; planner {} shares GPUs whole "
        "through MPS",
        planner.Name()));
  }
  if (request.current) return request.current;
  TESSERA_ASSIGN_OR_RETURN(Deployment d, LoadDeployment(request.current_path));
  return std::optional<Deployment>(std::move(d));
}

// Plans `problem` from `current` keeping what it can, new segments planned
// by the request's planner (default: IncrementalOptions'), with a note of
// what was kept.
Result<PlanReport> PlanFrom(const PlanRequest& request, const Deployment& current,
                            const Problem& problem, const PlanContext& context,
                            std::optional<IncrementStats>& increment) {
  IncrementalOptions options;
  options.max_extra_gpus = request.max_extra_gpus;
  options.repack_gpus = request.repack_gpus;
  options.consolidate = request.consolidate;
  if (!request.planner.empty()) options.planner = request.planner;
  Result<IncrementalPlan> planned =
      PlanIncremental(BuiltinPlanners(), problem, current, options, context);
  if (!planned.ok()) {
    return request.current_path.empty() ? planned.status()
                                        : planned.status().WithContext(request.current_path);
  }
  IncrementalPlan& plan = *planned;
  Note(request.notes,
       fmt::format("incremental: kept {}, moved {}, new {}, removed {} instances; {} GPUs (from "
                   "scratch: {}, {}; allowed {})",
                   plan.counts.kept, plan.counts.moved, plan.counts.added, plan.counts.removed,
                   plan.report.deployment.metrics.gpus, plan.scratch_gpus,
                   plan.scratch_proven ? "proven" : "not proven", plan.allowed_gpus));
  if (!plan.note.empty()) Note(request.notes, plan.note);
  increment = plan.counts;
  return std::move(plan.report);
}

// iGniter's shadow guard on `run`'s MPS plan when it is on: as asked, else
// on for igniter (the paper's iGniter guards its plans; its FFD+, GSLICE+
// and gpu-lets+ baselines do not).
Status GuardIfOn(const std::optional<bool>& shadow, PlanRun& run) {
  if (!shadow.value_or(run.deployment.planner == "igniter")) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(ShadowGuardResult guarded,
                           ApplyShadowGuard(run.deployment, run.problem));
  run.deployment = guarded.deployment;
  run.shadow = std::move(guarded);
  return Status::Ok();
}

// The request's numbers and names in their ranges: the CLI's flags arrive
// checked, the Python package's keywords are checked here.
Status CheckSearch(const PlanRequest& request) {
  const SearchOptions& search = request.search;
  if (search.time_limit_s != 0) {
    TESSERA_RETURN_IF_ERROR(
        CheckDuration("--time-limit", search.time_limit_s, kTimeLimit).status());
  }
  if (search.score != "capped" && search.score != "paper") {
    return Status::InvalidArgument("--score: expected capped or paper, got " +
                                   QuoteForMessage(search.score));
  }
  if (request.max_extra_gpus && !limits::kMaxExtraGpus.Contains(*request.max_extra_gpus)) {
    return Status::InvalidArgument("--max-extra-gpus: " +
                                   OutOfRange(limits::kMaxExtraGpus, *request.max_extra_gpus));
  }
  if (!limits::kRepackGpus.Contains(request.repack_gpus)) {
    return Status::InvalidArgument("--repack-gpus: " +
                                   OutOfRange(limits::kRepackGpus, request.repack_gpus));
  }
  if (request.inputs.price_per_hour &&
      !limits::kPriceFlag.Contains(*request.inputs.price_per_hour)) {
    return Status::InvalidArgument("--price: " +
                                   OutOfRange(limits::kPriceFlag, *request.inputs.price_per_hour));
  }
  return Status::Ok();
}

}  // namespace

std::string PlannerFor(const PlanRequest& request) {
  if (!request.planner.empty()) return request.planner;
  return request.inputs.coefficients.empty() ? std::string(kDefaultPlanner) : "igniter";
}

PlanContext ContextFor(const SearchOptions& search, const Planner& planner) {
  PlanContext context;
  context.time_limit_s = search.time_limit_s;
  context.seed = search.seed;
  if (planner.UsesMigServingScore() && search.score == "paper") {
    context.migserving_score = MigServingScore::kPaper;
  }
  return context;
}

Result<PlanRun> Plan(const PlanRequest& request) {
  TESSERA_RETURN_IF_ERROR(CheckSearch(request));
  const std::string name = PlannerFor(request);
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
  if (!planner.ok()) return planner.status().WithContext("--planner");
  const bool mps = (*planner)->Mode() == Sharing::kMps;
  TESSERA_RETURN_IF_ERROR(CheckInputsApply(request.inputs, mps, "planner " + name));
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
  if (request.max_extra_gpus && request.current_path.empty() && !request.current) {
    return Status::InvalidArgument(
        "--max-extra-gpus: bounds an incremental plan; give the current deployment (--current)");
  }
  if (request.repack_gpus > 0 && request.current_path.empty() && !request.current) {
    return Status::InvalidArgument(
        "--repack-gpus: repacks GPUs of an incremental plan; give the current deployment "
        "(--current)");
  }
  if (request.consolidate && request.current_path.empty() && !request.current) {
    return Status::InvalidArgument(
        "--consolidate: replaces instances of an incremental plan; give the current deployment "
        "(--current)");
  }
  TESSERA_ASSIGN_OR_RETURN(std::optional<Deployment> current, Current(request, **planner));
  // A re-plan keeps the rule its deployment was made under.
  const LatencyRule* recorded = current && current->rule_recorded ? &current->rule : nullptr;
  TESSERA_ASSIGN_OR_RETURN(
      Problem problem,
      request.scenario
          ? LoadProblem(request.inputs, *request.scenario, mps, recorded, request.notes)
          : LoadProblem(request.inputs, mps, recorded, request.notes));
  if (current) {
    AdoptRule(*current,
              request.current_path.empty() ? "the current deployment" : request.current_path,
              problem.rule(), request.notes);
  }
  PlanContext context = ContextFor(request.search, **planner);
  context.progress = request.progress;
  std::optional<IncrementStats> increment;
  Result<PlanReport> report = Status::Internal("not planned");
  if (current) {
    report = PlanFrom(request, *current, problem, context, increment);
  } else if (!request.planner.empty() || name != kDefaultPlanner) {
    report = RunPlanner(**planner, problem, context);
  } else {
    std::string note;
    report = RunDefaultPlanner(BuiltinPlanners(), problem, context, note);
    if (!note.empty()) Note(request.notes, note);
  }
  if (!report.ok()) return report.status();
  PlanRun run{std::move(report->deployment),
              std::move(problem),
              mps,
              std::nullopt,
              report->outcome,
              increment};
  if (mps) {
    TESSERA_RETURN_IF_ERROR(GuardIfOn(request.shadow, run));
  } else {
    run.deployment.profiles = SourceOf(request.inputs, run.problem);
  }
  const std::vector<Violation> violations = ValidateDeployment(run.deployment, run.problem);
  if (!violations.empty()) {
    return Status::Internal("planner " + run.deployment.planner + " produced an invalid plan:\n" +
                            FormatViolations(violations));
  }
  return run;
}

std::string WithShadowJson(std::string_view deployment_json, const ShadowGuardResult& guard) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(deployment_json, nullptr, false);
  if (!j.is_object()) return std::string(deployment_json);  // not ours: left as it is
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const ShadowProcess& p : guard.processes) {
    processes.push_back({{"gpu", p.gpu},
                         {"service", p.service},
                         {"resource_pct", p.resource_pct},
                         {"standby_extra_pct", p.standby_extra_pct},
                         {"activated", p.activated},
                         {"extra_pct", p.extra_pct},
                         {"planned_latency_ms", p.planned_latency_ms},
                         {"latency_ms", p.latency_ms},
                         {"meets_slo", p.meets_slo}});
  }
  j["shadow_guard"] = {{"max_extra_pct", kShadowMaxExtraPct},
                       {"activated", guard.activated},
                       {"still_missing", guard.still_missing},
                       {"processes", std::move(processes)}};
  // "replace", as FormatDeploymentJson: a name with invalid UTF-8 must not throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string PlanRunJson(const PlanRun& run) {
  const std::string json = FormatDeploymentJson(run.deployment);
  return run.shadow ? WithShadowJson(json, *run.shadow) : json;
}

}  // namespace tessera
