// `tessera autoscale`: a day of traffic (per-minute rates, or a day shape
// applied to the scenario's rates) autoscaled by the policy of
// autoscale_request.h, simulated minute by minute, and set beside the
// static plan for the day's peak and an oracle (docs/autoscale.md).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "autoscale_flags.h"
#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/autoscale_request.h"
#include "tessera/durations.h"

namespace tessera::cli {
namespace {

struct AutoscaleFlags {
  AutoscaleRequest request;
  std::string durations;
  std::string format = "text";
  std::string output;
  std::string svg;
};

constexpr const char* kFooter =
    "The rates file is CSV with a header: 'minute,multiplier' (a day shape applied to the\n"
    "scenario's rates, which are the rates at multiplier 1) or 'minute,<service>,...' (every\n"
    "service's rate in req/s); one row a minute from 0, '#' lines are comments. Each minute the\n"
    "policy forecasts every service over --lead, plans (1 + --margin) x the forecast peak when\n"
    "a service needs more than its plan (or, after --down-hold, less by --hysteresis and on\n"
    "fewer GPUs), and moves the cluster through a transition timed by --step-durations with at\n"
    "most --spare-gpus spare GPUs (--consolidate: re-plans replace several instances of a\n"
    "service by one larger where that takes less of the GPUs). Every minute is then simulated\n"
    "(--sample seconds; a minute a transition runs through, until it ends) against the static\n"
    "plan for the day's peak and an oracle that plans each --oracle-interval for its true peak\n"
    "and moves at once.\n\n"
    "Examples:\n"
    "  tessera autoscale --scenario examples/scenarios/s6.yaml \\\n"
    "      --rates examples/days/alibaba-2023-day.csv\n"
    "  tessera autoscale --scenario examples/scenarios/s3.yaml \\\n"
    "      --rates examples/days/alibaba-2023-day.csv --forecaster seasonal --format json -o "
    "day.json \\\n"
    "      --svg day.svg\n"
    "  tessera autoscale ... --step-durations model-load=30s,mig-create=5s --spare-gpus 1\n\n"
    "See docs/autoscale.md for the policy, the day shape and what is measured.";

int RunAutoscaleCommand(AutoscaleFlags& flags) {
  AutoscaleRequest& request = flags.request;
  if (request.inputs.scenario.empty() && request.inputs.parva_slo.empty()) {
    return ReportError(
        Status::InvalidArgument("autoscale: --scenario (or --parva-slo with --row) is required; "
                                "see tessera autoscale --help"));
  }
  if (Status d = ApplyStepDurations(flags.durations, request.options); !d.ok()) {
    return ReportError(d);
  }
  request.notes = CliNotes();
  request.progress = CliProgress();
  Result<AutoscaleReport> report = RunAutoscale(request);
  if (!report.ok()) return ReportError(report.status());
  const std::string text =
      flags.format == "json" ? FormatAutoscaleJson(*report) : FormatAutoscaleText(*report);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  if (!flags.svg.empty()) {
    if (Status written = WriteOutput(flags.svg, FormatAutoscaleSvg(*report)); !written.ok()) {
      return ReportError(written);
    }
  }
  return kExitOk;
}

}  // namespace

void AddAutoscaleCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<AutoscaleFlags>();
  AutoscaleOptions& o = flags->request.options;
  CLI::App* cmd = app.add_subcommand(
      "autoscale",
      "Autoscale a day of traffic: re-plan ahead of the load, move between plans, count GPU-hours");
  cmd->footer(kFooter);
  AddInputFlags(*cmd, flags->request.inputs);
  cmd->add_option("--rates", flags->request.rates_path,
                  "Per-minute rates: CSV 'minute,multiplier' or 'minute,<service>,...'")
      ->required();
  cmd->add_option("--season", flags->request.season_path,
                  "The previous day's rates, same format, for the seasonal forecaster "
                  "(default: the --rates day itself, a day that repeats)");
  cmd->add_option("--planner", flags->request.planner,
                  "MIG planner (default: the default planner)");
  AddAutoscalePolicyFlags(*cmd, o, flags->durations);
  cmd->add_option("--spare-gpus", o.spare_gpus,
                  "GPUs a transition may use beyond both plans', 0..1000")
      ->check(Within(kAutoscaleSpareGpus))
      ->capture_default_str();
  cmd->add_option("--sample", o.sample_s,
                  "Simulated seconds of a minute without a transition, 0.1s to 1m")
      ->transform(DurationFlag(kAutoscaleSample))
      ->default_str("3s");
  cmd->add_option("--oracle-interval", o.oracle_interval_s,
                  "The oracle plans each interval of this length for its true peak, 1m to 1d")
      ->transform(DurationFlag(kAutoscaleOracleInterval))
      ->default_str("15m");
  cmd->add_option("--jobs", o.jobs, "Simulation threads, 0 = one per core, at most 64")
      ->check(Within(kAutoscaleJobs))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the simulated arrivals")
      ->check(NonNegative())
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "text (for people) or json (every per-minute series)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write the report to FILE (default stdout)");
  cmd->add_option("--svg", flags->svg,
                  "Also draw the day to FILE: GPUs over the day, each service's rate against its "
                  "capacity, the moves marked");
  cmd->callback([flags, &exit_code] { exit_code = RunAutoscaleCommand(*flags); });
}

}  // namespace tessera::cli
