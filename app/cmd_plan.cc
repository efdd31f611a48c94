// `tessera plan`: one planner on one scenario, validated, in the format asked.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "durations.h"
#include "help_text.h"
#include "incremental_cli.h"
#include "shadow_cli.h"
#include "tessera/deployment_format.h"
#include "tessera/plan.h"
#include "tessera/simulator.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct PlanFlags {
  InputFlags input;
  SearchFlags search;
  IncrementalFlags incremental;
  std::string planner;  // empty: the default (PlannerFor)
  std::string format = "table";
  std::string output;
  std::string svg;
  bool verify = false;
  std::string verify_duration = "60s";
  std::optional<bool> shadow;  // --shadow / --no-shadow; unset: GuardIfOn's default
};

// --planner, else igniter with --coeffs, else the default of plan.h.
std::string PlannerFor(const PlanFlags& flags) {
  if (!flags.planner.empty()) return flags.planner;
  return flags.input.coefficients.empty() ? std::string(kDefaultPlanner) : "igniter";
}

// --verify: the plan replayed under its own rule with Poisson arrivals (seed
// 1). A plan the validator accepted that the simulator cannot run is a bug.
Result<SimReport> Verify(const Deployment& d, const Problem& problem, double duration_s) {
  Result<ServingModel> model = BuildServingModel(d, problem);
  if (!model.ok()) return Status::Internal("--verify: " + model.status().message());
  SimOptions options;
  options.duration_s = duration_s;
  Result<SimReport> report = Simulate(*model, options);
  if (!report.ok()) return Status::Internal("--verify: " + report.status().message());
  return report;
}

// Writes the deployment (and its SVG) with the --verify report: after the
// table for people; on stderr beside JSON and CSV, which programs read.
Status WriteResults(const PlanFlags& flags, const Deployment& d, const Problem& problem,
                    const std::optional<SimReport>& sim,
                    const std::optional<ShadowGuardResult>& shadow) {
  std::string rendered = flags.format == "json"  ? FormatDeploymentJson(d)
                         : flags.format == "csv" ? FormatParvaCsv(d, problem.gpu())
                                                 : FormatDeploymentTable(d);
  if (shadow) {
    rendered = flags.format == "json" ? WithShadowJson(rendered, *shadow)
                                      : rendered + "\n" + FormatShadowTable(*shadow);
  }
  if (sim && flags.format == "table") rendered += "\n" + FormatSimReportTable(*sim);
  TESSERA_RETURN_IF_ERROR(WriteOutput(flags.output, rendered));
  if (!flags.svg.empty()) {
    TESSERA_RETURN_IF_ERROR(WriteOutput(flags.svg, FormatDeploymentSvg(d, problem.gpu())));
  }
  if (sim && flags.format != "table") PrintMessage(FormatSimReportTable(*sim));
  return Status::Ok();
}

int RunPlan(const PlanFlags& flags) {
  Result<double> verify_s =
      ParseDuration("--verify-duration", flags.verify_duration, kSimulatedTime);
  if (!verify_s.ok()) return ReportError(verify_s.status());
  const std::string name = PlannerFor(flags);
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
  if (!planner.ok()) return ReportError(planner.status().WithContext("--planner"));
  const bool mps = (*planner)->Mode() == Sharing::kMps;
  if (Status s = CheckFlagsApply(flags.input, mps, "planner " + name); !s.ok()) {
    return ReportError(s);
  }
  if (!mps && flags.shadow) {
    return ReportError(Status::InvalidArgument(
        "--shadow/--no-shadow does not apply to planner " + name +
        ": the shadow guard is for the MPS planners (whole GPUs shared through MPS)"));
  }
  if (flags.search.score != "capped" && !(*planner)->UsesMigServingScore()) {
    return ReportError(Status::InvalidArgument(
        "--score does not apply to planner " + name +
        ": it chooses the heuristic score of MIG-serving's planners (migserving-*)"));
  }
  if (mps && flags.format == "csv") {
    return ReportError(Status::InvalidArgument(
        "--format csv is ParvaGPU's map of MIG instances; MPS plans print as table or json"));
  }
  Result<std::optional<Deployment>> current = LoadCurrent(flags.incremental, **planner);
  if (!current.ok()) return ReportError(current.status());
  // A re-plan keeps the rule its deployment was made under.
  const LatencyRule* recorded = *current && (*current)->rule_recorded ? &(*current)->rule : nullptr;
  Result<Problem> problem = LoadProblem(flags.input, mps, recorded);
  if (!problem.ok()) return ReportError(problem.status());
  if (*current) AdoptRule(**current, flags.incremental.current, problem->rule());
  if (flags.verify) {
    Status fits =
        CheckSimulatedRequests("--verify-duration", *verify_s, TotalRate(problem->scenario()));
    if (!fits.ok()) return ReportError(fits);
  }
  Result<PlanReport> report = PlanProblem(flags.incremental, *current, flags.planner, **planner,
                                          *problem, ContextFrom(flags.search, **planner));
  if (!report.ok()) return ReportError(report.status());
  std::optional<ShadowGuardResult> shadow;
  if (mps) {
    Result<std::optional<ShadowGuardResult>> guarded =
        GuardIfOn(flags.shadow, report->deployment, *problem);
    if (!guarded.ok()) return ReportError(guarded.status());
    shadow = std::move(guarded).value();
  }
  const Deployment& d = report->deployment;
  const std::vector<Violation> violations = ValidateDeployment(d, *problem);
  if (!violations.empty()) {
    return ReportError(Status::Internal("planner " + d.planner + " produced an invalid plan:\n" +
                                        FormatViolations(violations)));
  }
  std::optional<SimReport> sim;
  if (flags.verify) {
    Result<SimReport> simulated = Verify(d, *problem, *verify_s);
    if (!simulated.ok()) return ReportError(simulated.status());
    sim = std::move(simulated).value();
  }
  if (Status written = WriteResults(flags, d, *problem, sim, shadow); !written.ok()) {
    return ReportError(written);
  }
  if (sim) NoteSloMisses(*sim);
  NoteOutcomes(d);
  return report->outcome == PlanOutcome::kInfeasible ? kExitInfeasible : kExitOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan one scenario with one planner; print, save and draw the deployment");
  cmd->footer(kPlanHelp);
  AddInputFlags(*cmd, flags->input);
  AddSearchFlags(*cmd, flags->search);
  AddIncrementalFlags(*cmd, flags->incremental);
  AddShadowFlag(*cmd, flags->shadow);
  cmd->add_option("--planner", flags->planner,
                  "Planner name (see `tessera compare --list`); default: see below, or igniter "
                  "with --coeffs");
  cmd->add_option("--format", flags->format,
                  "table (for people), json (canonical), csv (ParvaGPU deployment map)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write the deployment to FILE (default stdout)");
  cmd->add_option("--svg", flags->svg, "Also draw every GPU to FILE (SVG)");
  auto* verify = cmd->add_flag("--verify", flags->verify,
                               "Also simulate the plan, request by request, under its own rule "
                               "and report its tail latency per service (see below)");
  cmd->add_option(
         "--verify-duration", flags->verify_duration,
         "Simulated time of --verify, " + DescribeRange(kSimulatedTime) + ": 60, 60s, 500ms, 2m")
      ->needs(verify)
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = RunPlan(*flags); });
}

}  // namespace tessera::cli
