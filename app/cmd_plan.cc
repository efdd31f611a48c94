// `tessera plan`: one planner on one scenario, validated, in the format asked.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "tessera/deployment_format.h"
#include "tessera/plan.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct PlanFlags {
  InputFlags input;
  SearchFlags search;
  std::string planner;  // empty: parva, or exact for a pool of several models
  std::string format = "table";
  std::string output;
  std::string svg;
};

std::string Render(const Deployment& d, const GpuModel& gpu, const std::string& format) {
  if (format == "json") return FormatDeploymentJson(d);
  if (format == "csv") return FormatParvaCsv(d, gpu);
  return FormatDeploymentTable(d);
}

int RunPlan(const PlanFlags& flags) {
  Result<Inputs> in = LoadInputs(flags.input);
  if (!in.ok()) return ReportError(in.status());
  Result<Problem> problem = BuildProblem(*in);
  if (!problem.ok()) return ReportError(problem.status());
  const std::string planner_name =
      !flags.planner.empty() ? flags.planner : (problem->pool().size() > 1 ? "exact" : "parva");
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(planner_name);
  if (!planner.ok()) return ReportError(planner.status().WithContext("--planner"));
  Result<PlanReport> report = RunPlanner(**planner, *problem, ContextFrom(flags.search));
  if (!report.ok()) return ReportError(report.status());
  const Deployment& d = report->deployment;
  const std::vector<Violation> violations =
      ValidateDeployment(d, in->scenario, in->profiles, in->rule);
  if (!violations.empty()) {
    return ReportError(Status::Internal("planner " + planner_name + " produced an invalid plan:\n" +
                                        FormatViolations(violations)));
  }
  Status written = WriteOutput(flags.output, Render(d, *in->gpu, flags.format));
  if (written.ok() && !flags.svg.empty()) {
    written = WriteOutput(flags.svg, FormatDeploymentSvg(d, *in->gpu));
  }
  if (!written.ok()) return ReportError(written);
  if (report->outcome == PlanOutcome::kInfeasible) {
    for (const ServiceOutcome& s : d.services) {
      if (s.status == ServiceStatus::kInfeasible) {
        std::cerr << "tessera: service " << s.name << " is infeasible: " << s.reason << "\n";
      }
    }
    return kExitInfeasible;
  }
  return kExitOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan one scenario with one planner; print, save and draw the deployment");
  cmd->footer(
      "Plan one scenario with one planner and print the deployment.\n\n"
      "Every plan is checked by the independent validator (geometry, latency rule,\n"
      "capacity rule) before it is printed. A service no configuration can serve is\n"
      "reported with the best latency achievable (exit code 3), never dropped.\n\n"
      "Examples:\n"
      "  tessera plan --scenario examples/scenarios/s3.yaml --svg s3.svg\n"
      "  tessera plan --scenario s.yaml --gpu h100-80gb --format json -o plan.json\n"
      "  tessera plan --profiles ../shared/data/parvagpu/prof_data \\\n"
      "      --parva-slo ../shared/data/parvagpu/SLO --row 6 --compat parva-artifact\n"
      "  tessera plan --scenario examples/scenarios/s5.yaml --replicate 10 --planner exact\n"
      "  tessera plan --scenario examples/scenarios/pool.yaml --planner exact   # cheapest mix\n\n"
      "The exact planner proves its plan optimal (\"proven optimal: yes\") or, when\n"
      "--time-limit stops it first, reports the best plan, its proven bound and gap.");
  AddInputFlags(*cmd, flags->input);
  AddSearchFlags(*cmd, flags->search);
  cmd->add_option("--planner", flags->planner,
                  "Planner name (see `tessera compare --list`); default: parva, or exact for a "
                  "scenario with a pool of several GPU models");
  cmd->add_option("--format", flags->format,
                  "table (for people), json (canonical), csv (ParvaGPU deployment map)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write the deployment to FILE (default stdout)");
  cmd->add_option("--svg", flags->svg, "Also draw every GPU's MIG slices to FILE (SVG)");
  cmd->callback([flags, &exit_code] { exit_code = RunPlan(*flags); });
}

}  // namespace tessera::cli
