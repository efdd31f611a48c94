// `tessera plan`: one planner on one scenario, validated, in the format asked.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "help_text.h"
#include "incremental_cli.h"
#include "output_file.h"
#include "shadow_cli.h"
#include "tessera/deployment_format.h"
#include "tessera/durations.h"
#include "tessera/plan/plan.h"
#include "tessera/plan_request.h"
#include "tessera/simulator.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct PlanFlags {
  PlanRequest request;
  std::string format = "table";
  std::string output;
  std::string svg;
  bool verify = false;
  std::string verify_duration = "60s";
};

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
  if (flags.format == "csv") {
    // Known before planning: whether the planner plans MPS (whole GPUs).
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(PlannerFor(flags.request));
    if (planner.ok() && (*planner)->Mode() == Sharing::kMps) {
      return ReportError(Status::InvalidArgument(
          "--format csv is ParvaGPU's map of MIG instances; MPS plans print as table or json"));
    }
  }
  std::optional<Scenario> scenario;
  if (flags.verify) {
    Result<Scenario> loaded = LoadScenario(flags.request.inputs);
    if (!loaded.ok()) return ReportError(loaded.status());
    Status fits = CheckSimulatedRequests("--verify-duration", *verify_s, TotalRate(*loaded));
    if (!fits.ok()) return ReportError(fits);
    scenario = std::move(loaded).value();
  }
  PlanRequest request = flags.request;
  request.scenario = std::move(scenario);
  request.notes = CliNotes();
  request.progress = CliProgress();
  Result<PlanRun> run = Plan(request);
  if (!run.ok()) return ReportError(run.status());
  const Deployment& d = run->deployment;
  std::optional<SimReport> sim;
  if (flags.verify) {
    Result<SimReport> simulated = Verify(d, run->problem, *verify_s);
    if (!simulated.ok()) return ReportError(simulated.status());
    sim = std::move(simulated).value();
  }
  if (Status written = WriteResults(flags, d, run->problem, sim, run->shadow); !written.ok()) {
    return ReportError(written);
  }
  if (sim) NoteSloMisses(*sim);
  NoteOutcomes(d);
  return run->outcome == PlanOutcome::kInfeasible ? kExitInfeasible : kExitOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan one scenario with one planner; print, save and draw the deployment");
  cmd->footer(kPlanHelp);
  AddInputFlags(*cmd, flags->request.inputs);
  AddSearchFlags(*cmd, flags->request.search);
  AddIncrementalFlags(*cmd, flags->request);
  AddShadowFlag(*cmd, flags->request.shadow);
  cmd->add_option("--planner", flags->request.planner,
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
