// `tessera plan`: one planner on one scenario, validated, in the format asked.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "mps_cli.h"
#include "tessera/deployment_format.h"
#include "tessera/plan.h"
#include "tessera/simulator.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct PlanFlags {
  InputFlags input;
  SearchFlags search;
  MpsFlags mps;
  std::string planner;  // empty: parva, or exact for a pool of several models
  std::string format = "table";
  std::string output;
  std::string svg;
  bool verify = false;
  std::string verify_duration = "60s";
};

std::string Render(const Deployment& d, const GpuModel& gpu, const std::string& format) {
  if (format == "json") return FormatDeploymentJson(d);
  if (format == "csv") return FormatParvaCsv(d, gpu);
  return FormatDeploymentTable(d);
}

// --verify: the plan's serving model replayed with Poisson arrivals (seed 1).
// A plan the validator accepted that the simulator cannot run is a bug, not
// bad input.
Result<SimReport> SimulatePlan(const Result<ServingModel>& model, double duration_s) {
  if (!model.ok()) return Status::Internal("--verify: " + model.status().message());
  SimOptions options;
  options.duration_s = duration_s;
  Result<SimReport> report = Simulate(*model, options);
  if (!report.ok()) return Status::Internal("--verify: " + report.status().message());
  return report;
}

// Writes the deployment (and its SVG) with the --verify report, if any. The
// table is for people: the simulation follows the deployment. JSON and CSV
// stay exactly what programs read; the simulation table goes to stderr.
Status WriteResults(const PlanFlags& flags, const Deployment& d, const GpuModel& gpu,
                    const std::optional<SimReport>& sim) {
  std::string rendered = Render(d, gpu, flags.format);
  if (sim && flags.format == "table") rendered += "\n" + FormatSimReportTable(*sim);
  TESSERA_RETURN_IF_ERROR(WriteOutput(flags.output, rendered));
  if (!flags.svg.empty())
    TESSERA_RETURN_IF_ERROR(WriteOutput(flags.svg, FormatDeploymentSvg(d, gpu)));
  if (sim && flags.format != "table") std::cerr << FormatSimReportTable(*sim);
  return Status::Ok();
}

// The MPS planners' path: whole GPUs shared through MPS (mps_plan.h).
int RunMpsPlan(const PlanFlags& flags, double verify_s) {
  if (flags.format == "csv" || !flags.svg.empty()) {
    return ReportError(Status::InvalidArgument(
        "MPS plans print as --format table or json (csv and --svg draw MIG slices)"));
  }
  Result<MpsProblem> problem = LoadMpsProblem(flags.input, flags.mps);
  if (!problem.ok()) return ReportError(problem.status());
  const std::string name = flags.planner.empty() ? "igniter" : flags.planner;
  Result<std::unique_ptr<MpsPlanner>> planner = BuiltinMpsPlanners().Create(name);
  if (!planner.ok()) return ReportError(planner.status().WithContext("--planner"));
  Result<MpsDeployment> d = RunMpsPlanner(**planner, *problem, ContextFrom(flags.search));
  if (!d.ok()) return ReportError(d.status());
  const std::vector<std::string> issues = ValidateMpsDeployment(*d, *problem);
  if (!issues.empty()) {
    return ReportError(Status::Internal(
        fmt::format("planner {} produced an invalid plan:\n{}", name, fmt::join(issues, "\n"))));
  }
  std::optional<SimReport> sim;
  if (flags.verify) {
    Result<SimReport> simulated = SimulatePlan(BuildMpsServingModel(*d, *problem), verify_s);
    if (!simulated.ok()) return ReportError(simulated.status());
    sim = std::move(simulated).value();
  }
  std::string rendered =
      flags.format == "json" ? FormatMpsDeploymentJson(*d) : FormatMpsDeploymentTable(*d);
  if (sim && flags.format == "table") rendered += "\n" + FormatSimReportTable(*sim);
  if (Status s = WriteOutput(flags.output, rendered); !s.ok()) return ReportError(s);
  if (sim && flags.format != "table") std::cerr << FormatSimReportTable(*sim);
  if (sim) NoteSloMisses(*sim);
  int code = kExitOk;
  for (const MpsServiceOutcome& s : d->services) {
    if (s.status == ServiceStatus::kInfeasible) {
      std::cerr << "tessera: service " << s.name << " is infeasible: " << s.reason << "\n";
      code = kExitInfeasible;
    } else if (s.predicted_violation) {
      std::cerr << "tessera: note: the iGniter model predicts " << s.name
                << " misses its latency budget or rate on this plan\n";
    }
  }
  return code;
}

int RunPlan(const PlanFlags& flags) {
  Result<double> verify_s = 0.0;
  if (flags.verify) verify_s = ParseDuration("--verify-duration", flags.verify_duration);
  if (!verify_s.ok()) return ReportError(verify_s.status());
  if (!flags.mps.coefficients.empty() || IsMpsPlanner(flags.planner)) {
    return RunMpsPlan(flags, *verify_s);
  }
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
  std::optional<SimReport> sim;
  if (flags.verify) {
    Result<SimReport> simulated =
        SimulatePlan(BuildServingModel(d, in->scenario, in->profiles), *verify_s);
    if (!simulated.ok()) return ReportError(simulated.status());
    sim = std::move(simulated).value();
  }
  if (Status written = WriteResults(flags, d, *in->gpu, sim); !written.ok()) {
    return ReportError(written);
  }
  if (sim) NoteSloMisses(*sim);
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
      "--time-limit stops it first, reports the best plan, its proven bound and gap.\n\n"
      "--verify replays the plan in the serving simulator (`tessera simulate`: Poisson\n"
      "arrivals at each rate, seed 1, for --verify-duration) and reports each service's\n"
      "p50/p95/p99 latency and share of requests within its SLO. With --format table the\n"
      "simulation follows the deployment in the output; with json or csv the output is\n"
      "unchanged and the simulation table goes to stderr. A service below 99% within its\n"
      "SLO is noted on stderr; the exit code does not change.\n"
      "  tessera plan --scenario examples/scenarios/s1.yaml --verify --verify-duration 2m\n\n"
      "MPS sharing of whole GPUs (V100, T4, A10G, or MIG GPUs run whole): the planners\n"
      "igniter (default), ffd+, gslice+ and gpulet place each service as MPS processes\n"
      "with a batch and a share of the SMs; the iGniter model (--coeffs) predicts every\n"
      "process's latency and throughput next to its neighbours, and the plan reports its\n"
      "hourly cost and the services it predicts miss their SLO:\n"
      "  tessera plan --scenario examples/scenarios/igniter-12.yaml \\\n"
      "      --coeffs ../shared/data/igniter/derived/fitted_coefficients_v100.json --verify");
  AddInputFlags(*cmd, flags->input);
  AddSearchFlags(*cmd, flags->search);
  AddMpsFlags(*cmd, flags->mps);
  cmd->add_option("--planner", flags->planner,
                  "Planner name (see `tessera compare --list`); default: parva, or exact for a "
                  "scenario with a pool of several GPU models, or igniter with --coeffs");
  cmd->add_option("--format", flags->format,
                  "table (for people), json (canonical), csv (ParvaGPU deployment map)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write the deployment to FILE (default stdout)");
  cmd->add_option("--svg", flags->svg, "Also draw every GPU's MIG slices to FILE (SVG)");
  auto* verify = cmd->add_flag("--verify", flags->verify,
                               "Also simulate the plan, request by request, and report its tail "
                               "latency per service (see below)");
  cmd->add_option("--verify-duration", flags->verify_duration,
                  "Simulated time of --verify: 60, 60s, 500ms, 2m")
      ->needs(verify)
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = RunPlan(*flags); });
}

}  // namespace tessera::cli
