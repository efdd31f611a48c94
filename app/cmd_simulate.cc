// `tessera simulate`: replays a deployment request by request on a simulated
// clock and reports each service's tail latency and SLO compliance, or (with
// --transition) the deployment while a transition changes it phase by phase.
// Also the simulation pieces `plan --verify` shares (commands.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "simulate_flags.h"
#include "tessera/deployment_format.h"
#include "tessera/durations.h"
#include "tessera/profile_io.h"
#include "tessera/simulate/transition_simulation.h"
#include "tessera/simulate_request.h"
#include "tessera/simulator.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

// The command's flags: the request, and where and how its report goes.
struct SimulateFlags {
  SimulateRequest request;
  std::string format = "table";
  std::string output;
};

int RunSimulate(SimulateFlags& flags) {
  flags.request.notes = CliNotes();
  Result<Simulation> sim = LoadSimulation(flags.request);
  if (!sim.ok()) return ReportError(sim.status());
  std::string text;
  if (sim->transition) {
    Result<TransitionSimReport> report = SimulateThroughTransition(*sim);
    if (!report.ok()) return ReportError(report.status());
    text = flags.format == "json" ? FormatTransitionSimJson(*report)
                                  : FormatTransitionSimTable(*report);
    if (Status written = WriteOutput(flags.output, text); !written.ok()) {
      return ReportError(written);
    }
    NoteTraceCut(sim->options, flags.request.notes);
    NoteSloMisses(report->overall);
    return kExitOk;
  }
  Result<SimReport> report = SimulatePlan(*sim);
  if (!report.ok()) return ReportError(report.status());
  text = flags.format == "json" ? FormatSimReportJson(*report) : FormatSimReportTable(*report);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  NoteTraceCut(sim->options, flags.request.notes);
  NoteSloMisses(*report);
  return kExitOk;
}

// ---- Help -----------------------------------------------------------------

constexpr const char* kFooter =
    "Replays a deployment request by request on a simulated clock, to show what the\n"
    "planner's average-rate rules cannot: queueing, batching and tail latency.\n\n"
    "What it models: each service's requests arrive at the scenario's rate_rps (Poisson,\n"
    "constant, on/off bursts, or a recorded trace); a router sends each request to one\n"
    "MPS process of the service's instances by the router the plan records (at random\n"
    "weighted by the capacity the planners count: throughput times the share the plan's\n"
    "latency rule lets it carry within the SLO; or to the shortest queue); a process\n"
    "starts a batch once its planned batch size is queued or\n"
    "the oldest request has waited --max-queue-delay-ms; a batch runs for its profiled\n"
    "latency (interpolated for partial batches), optionally with random variability.\n"
    "Latency = queueing + batching + execution. Arrivals stop after --duration; the run\n"
    "then drains, so every request gets a latency.\n\n"
    "A service with fewer than 99% of its requests within the SLO is marked MISS and\n"
    "noted on stderr: a finding, not an error (exit code 0). The scenario gives the rates\n"
    "and SLOs, so a plan can be tried at another load with the same services; a plan made\n"
    "with --profiles or --replicate needs the same flag here. Same seed, same report.\n\n"
    "Examples:\n"
    "  tessera plan --scenario examples/scenarios/s1.yaml --format json -o s1.json\n"
    "  tessera simulate --scenario examples/scenarios/s1.yaml --deployment s1.json\n"
    "  tessera simulate --scenario examples/scenarios/s1.yaml --deployment s1.json \\\n"
    "      --arrivals bursty --burst-on-share 0.25 --router jsq --variability lognormal:0.2\n"
    "  tessera simulate --scenario examples/scenarios/s1.yaml --deployment s1.json \\\n"
    "      --arrivals trace:requests.csv --format json -o sim.json\n\n"
    "A trace is a CSV with header 'service,time_s' and one request per row (seconds from\n"
    "the start, any order); it must cover every service. Without --duration it is replayed\n"
    "to its last request.\n\n"
    "With --transition T.json (tessera transition) and --step-seconds X the deployment\n"
    "changes phase by phase: X seconds as it is, X per phase, X in the final state. A\n"
    "destroyed or reconfigured instance takes no new requests from its phase's start and\n"
    "finishes its queue; a created one takes requests from its phase's end; a request\n"
    "with no instance of its service taking requests is dropped. The report adds each\n"
    "window's services (requests by arrival time).\n"
    "  tessera simulate --scenario s6.yaml --deployment A.json --transition T.json \\\n"
    "      --step-seconds 30";

void AddInputAndOutputFlags(CLI::App& cmd, SimulateFlags& flags) {
  ProblemInputs& inputs = flags.request.inputs;
  auto* scenario = cmd.add_option("--scenario", inputs.scenario,
                                  "Scenario YAML giving each service's rate and SLO");
  auto* slo =
      cmd.add_option("--parva-slo", inputs.parva_slo, "Or a ParvaGPU SLO directory (with --row)");
  cmd.add_option("--row", inputs.row, "Row of the ParvaGPU SLO files, 1-based")
      ->needs(slo)
      ->check(CLI::PositiveNumber);
  scenario->excludes(slo);
  cmd.add_option("--replicate", inputs.replicate,
                 "K copies of every service, as the deployment was planned with")
      ->check(Within(limits::kReplicate));
  cmd.add_option("--deployment", flags.request.deployment_path,
                 "Deployment JSON (tessera plan --format json)")
      ->required();
  cmd.add_option("--profiles", inputs.profiles,
                 "Profile CSV or ParvaGPU prof_data directory the deployment was planned with; "
                 "default: the embedded synthesized profiles of its GPU models");
  cmd.add_option("--coeffs", inputs.coefficients,
                 "iGniter coefficients (JSON) an MPS plan was made with (tessera plan --coeffs); "
                 "default for a MIG GPU run whole: derived from its profiles, as plan does");
  cmd.add_option("--format", flags.format, "table (for people) or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd.add_option("-o,--output", flags.output, "Write the report to FILE (default stdout)");
}

}  // namespace

void NoteSloMisses(const SimReport& report) {
  for (const ServiceReport& s : report.services) {
    if (s.requests == 0 || s.compliance >= kComplianceTarget) continue;
    // Rounded down, as the table shows it: 98.996% is not "99.00%".
    std::string note = fmt::format(
        "tessera: note: service {} served {:.2f}% of {} requests within its {:g} ms SLO "
        "(target {:g}%)",
        s.name, std::floor(s.compliance * 1e4 + 1e-6) / 100, s.requests, s.slo_ms,
        100 * kComplianceTarget);
    note += s.dropped == s.requests
                ? ": every request dropped\n"
                : fmt::format(": p99 {:.1f} ms, {} dropped\n", s.p99_ms, s.dropped);
    PrintMessage(note);
  }
}

void AddSimulateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Replay a deployment request by request; report tail latency and SLO misses");
  cmd->footer(kFooter);
  AddInputAndOutputFlags(*cmd, *flags);
  AddSimulationFlags(*cmd, flags->request);
  cmd->callback([flags, &exit_code] { exit_code = RunSimulate(*flags); });
}

}  // namespace tessera::cli
