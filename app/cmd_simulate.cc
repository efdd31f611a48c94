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

#include "cli_common.h"
#include "commands.h"
#include "durations.h"
#include "simulate_transition.h"
#include "tessera/deployment_format.h"
#include "tessera/profile_io.h"
#include "tessera/simulator.h"
#include "tessera/text_io.h"
#include "tessera/transition_simulation.h"

namespace tessera::cli {
namespace {

constexpr std::string_view kDefaultDuration = "60s";

struct SimulateFlags {
  std::string scenario;
  std::string parva_slo;
  int row = 0;
  int replicate = 1;
  std::string profiles;
  std::string coefficients;  // --coeffs: an MPS plan's iGniter coefficients
  std::string deployment;
  std::string transition;
  std::optional<double> step_seconds;
  std::string duration;  // empty: 60 s, or the trace's span under trace:FILE
  std::string arrivals = "poisson";
  std::optional<double> burst_on_share;
  std::optional<double> burst_on_s;
  std::string router;                        // empty: the plan's
  std::optional<double> max_queue_delay_ms;  // absent: the SLO-derived default
  std::string variability = "none";
  double drop_after_ms = 0;
  std::uint64_t seed = 1;
  std::string format = "table";
  std::string output;
};

// Everything one run needs, loaded and checked.
struct SimInputs {
  Scenario scenario;
  Deployment deployment;
  std::optional<Transition> transition;  // --transition
  std::optional<Problem> problem;        // the scenario on the deployment's GPUs, under its rule
  SimOptions options;
};

// ---- Flags to SimOptions --------------------------------------------------

Status ParseArrivals(const SimulateFlags& flags, SimOptions& options, std::string& trace_path) {
  const std::string& a = flags.arrivals;
  if (a == "poisson") {
    options.arrivals = ArrivalKind::kPoisson;
  } else if (a == "constant") {
    options.arrivals = ArrivalKind::kConstant;
  } else if (a == "bursty") {
    options.arrivals = ArrivalKind::kBursty;
  } else if (a.starts_with("trace:")) {
    options.arrivals = ArrivalKind::kTrace;
    trace_path = a.substr(6);
    if (trace_path.empty()) {
      return Status::InvalidArgument("--arrivals: trace: needs a file, e.g. trace:requests.csv");
    }
  } else {
    return Status::InvalidArgument(
        "--arrivals: expected poisson, constant, bursty or trace:FILE, got " + QuoteForMessage(a));
  }
  // A burst shape without bursty arrivals would be silently ignored.
  if (options.arrivals != ArrivalKind::kBursty && (flags.burst_on_share || flags.burst_on_s)) {
    return Status::InvalidArgument(
        fmt::format("{}: only applies to --arrivals bursty",
                    flags.burst_on_share ? "--burst-on-share" : "--burst-on-s"));
  }
  if (flags.burst_on_share) options.burst.on_share = *flags.burst_on_share;
  if (flags.burst_on_s) options.burst.on_s = *flags.burst_on_s;
  return Status::Ok();
}

Status ParseVariability(const std::string& text, SimOptions& options) {
  constexpr std::string_view kLognormalCv = "lognormal:";
  const std::optional<double> cv =
      text.starts_with(kLognormalCv) ? ToDouble(std::string_view(text).substr(kLognormalCv.size()))
                                     : std::nullopt;
  if (text == "none") {
    options.variability = Variability::kNone;
  } else if (text == "exponential") {
    options.variability = Variability::kExponential;
  } else if (text == "lognormal") {
    options.variability = Variability::kLognormal;  // with the default CV
  } else if (cv) {
    options.variability = Variability::kLognormal;
    options.cv = *cv;  // its range is SimOptions::Validate's to judge
  } else {
    return Status::InvalidArgument(
        "--variability: expected none, exponential, lognormal or lognormal:CV (a coefficient "
        "of variation in (0, 100], e.g. lognormal:0.2), got " +
        QuoteForMessage(text));
  }
  return Status::Ok();
}

// SimOptions::Validate names the rule, not the flag. Only on an error, each
// flag's setting is validated alone to find the one to name.
Status ValidateNamingFlags(const SimOptions& options) {
  const Status all = options.Validate();
  if (all.ok()) return all;
  using Copy = void (*)(SimOptions&, const SimOptions&);
  const std::pair<std::string_view, Copy> probes[] = {
      {"--duration", [](SimOptions& p, const SimOptions& o) { p.duration_s = o.duration_s; }},
      {"--burst-on-share",
       [](SimOptions& p, const SimOptions& o) {
         p.arrivals = o.arrivals;
         p.burst.on_share = o.burst.on_share;
       }},
      {"--burst-on-s",
       [](SimOptions& p, const SimOptions& o) {
         p.arrivals = o.arrivals;
         p.burst.on_s = o.burst.on_s;
       }},
      {"--max-queue-delay-ms",
       [](SimOptions& p, const SimOptions& o) { p.max_queue_delay_ms = o.max_queue_delay_ms; }},
      {"--variability",
       [](SimOptions& p, const SimOptions& o) {
         p.variability = o.variability;
         p.cv = o.cv;
       }},
      {"--drop-after-ms",
       [](SimOptions& p, const SimOptions& o) { p.drop_after_ms = o.drop_after_ms; }},
  };
  for (const auto& [flag, copy] : probes) {
    SimOptions probe;
    copy(probe, options);
    if (!probe.Validate().ok()) return all.WithContext(flag);
  }
  return all.WithContext("simulation options");
}

// ---- Inputs ---------------------------------------------------------------

Result<Scenario> LoadScenarioOf(const SimulateFlags& flags) {
  Result<Scenario> scenario = Status::InvalidArgument(
      "give the scenario the deployment serves: --scenario FILE or --parva-slo DIR --row N");
  if (!flags.scenario.empty()) {
    scenario = LoadScenarioYaml(flags.scenario);
  } else if (!flags.parva_slo.empty()) {
    if (flags.row <= 0) return Status::InvalidArgument("--parva-slo needs --row N (1-based)");
    scenario = ImportParvaSloRow(flags.parva_slo, flags.row);
  }
  if (!scenario.ok()) return scenario.status();
  return Replicated(*scenario, flags.replicate);
}

Result<Deployment> LoadDeployment(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseDeploymentJson(text, path);
}

// The scenario on the deployment's GPU models under the plan's rule: with
// --profiles, or the embedded profiles of every GPU model the deployment uses
// (as `plan` synthesizes them for its pool); an MPS plan with the iGniter
// coefficients of --coeffs, or, on a MIG GPU run whole, with those derived
// from its profiles as `plan` derives them without --coeffs.
Result<Problem> ProblemFor(const SimulateFlags& flags, const Scenario& scenario,
                           const Deployment& d) {
  const std::string where = flags.deployment + ": field 'gpu'";
  if (d.sharing == Sharing::kMps) {
    Result<const GpuModel*> gpu = FindGpu(d.gpu);
    if (!gpu.ok()) return gpu.status().WithContext(where);
    if (!flags.coefficients.empty()) {
      TESSERA_ASSIGN_OR_RETURN(MpsCoefficients coefficients,
                               LoadMpsCoefficients(flags.coefficients));
      return Problem::BuildMps(scenario, {*gpu, 0, 0}, std::move(coefficients), d.rule);
    }
    if (!(*gpu)->HasMig()) {
      return Status::InvalidArgument(flags.deployment +
                                     ": an MPS plan is simulated with the iGniter coefficients "
                                     "it was made with: --coeffs FILE");
    }
    // Made without --coeffs: with the coefficients `plan` derived from the same profiles.
    TESSERA_ASSIGN_OR_RETURN(DerivedMps derived, DeriveMpsForGpu(flags.profiles, **gpu));
    return Problem::BuildMps(scenario, {*gpu, 0, 0}, std::move(derived.coefficients), d.rule);
  }
  if (!flags.coefficients.empty()) {
    return Status::InvalidArgument("--coeffs applies to MPS plans; " + flags.deployment +
                                   " is a MIG plan");
  }
  std::set<std::string> models = {d.gpu};
  for (const GpuAssignment& g : d.gpus) models.insert(GpuModelName(d, g));
  std::vector<GpuOffer> pool;
  std::vector<const GpuModel*> gpus;
  for (const std::string& name : models) {
    Result<const GpuModel*> gpu = FindMigGpu(name);
    if (!gpu.ok()) return gpu.status().WithContext(where);
    pool.push_back({*gpu, 0, 0});
    gpus.push_back(*gpu);
  }
  TESSERA_ASSIGN_OR_RETURN(ProfileTable profiles, flags.profiles.empty()
                                                      ? EmbeddedProfiles(gpus)
                                                      : LoadProfiles(flags.profiles, d.gpu));
  return Problem::BuildPool(scenario, std::move(pool), profiles, d.rule);
}

// The simulation replays the scenario's rates against the deployment's
// instances: both must name the same services, or the report would show a
// mistyped service as idle or as dropping everything.
Status CheckSameServices(const Scenario& scenario, const Deployment& d, const std::string& path) {
  std::set<std::string> planned;
  for (const ServiceOutcome& s : d.services) planned.insert(s.name);
  for (const Service& s : scenario.services) {
    if (planned.erase(s.name) == 0) {
      return Status::InvalidArgument(fmt::format(
          "{}: service {} of {} is not in the deployment; simulate a deployment with the "
          "scenario (and --replicate) it was planned for",
          path, QuoteForMessage(s.name), ServiceLocation(scenario, s.line)));
    }
  }
  if (!planned.empty()) {
    return Status::InvalidArgument(fmt::format("{}: service {} is not in the scenario {}", path,
                                               QuoteForMessage(*planned.begin()),
                                               ServiceLocation(scenario, 0)));
  }
  return Status::Ok();
}

// Loads the trace and checks that it gives every service its requests and
// names no other; its last arrival sets the default duration.
Status LoadTrace(const std::string& path, const Scenario& scenario, SimOptions& options,
                 bool duration_given) {
  TESSERA_ASSIGN_OR_RETURN(options.trace, LoadArrivalTrace(path));
  double last = 0;
  std::set<std::string> unused;
  for (const auto& [service, times] : options.trace) {
    unused.insert(service);
    last = std::max(last, times.back());
  }
  for (const Service& s : scenario.services) {
    if (unused.erase(s.name) == 0) {
      return Status::InvalidArgument(
          fmt::format("{}: no request of service {}; a trace gives every service of the "
                      "scenario its arrivals",
                      path, QuoteForMessage(s.name)));
    }
  }
  if (!unused.empty()) {
    return Status::InvalidArgument(fmt::format("{}: field 'service': {} is not a service of {}",
                                               path, QuoteForMessage(*unused.begin()),
                                               ServiceLocation(scenario, 0)));
  }
  // Whole seconds covering the last arrival: the default replays the whole trace.
  if (!duration_given) {
    options.duration_s = std::max(1.0, std::ceil(last));
    if (options.duration_s > kSimulatedTime.max_s) {
      return Status::InvalidArgument(fmt::format(
          "{}: the last request arrives at {:g} s, past {} (the longest simulated duration); "
          "give --duration to replay the trace's start",
          path, last, FormatDuration(kSimulatedTime.max_s)));
    }
  }
  return Status::Ok();
}

// The options of `flags`, validated; the trace (if any) loaded and checked.
// Through a transition the run's duration is its steps'.
Result<SimOptions> OptionsFrom(const SimulateFlags& flags, const Scenario& scenario,
                               const std::optional<Transition>& transition) {
  SimOptions options;
  std::string trace_path;
  const std::string_view duration = flags.duration.empty() ? kDefaultDuration : flags.duration;
  if (transition) {
    TESSERA_ASSIGN_OR_RETURN(options.duration_s,
                             TransitionRunSeconds(*transition, flags.step_seconds));
  } else {
    TESSERA_ASSIGN_OR_RETURN(options.duration_s,
                             ParseDuration("--duration", duration, kSimulatedTime));
  }
  TESSERA_RETURN_IF_ERROR(ParseArrivals(flags, options, trace_path));
  if (!flags.router.empty()) {
    TESSERA_ASSIGN_OR_RETURN(options.router, ParseRouter(flags.router));
  }
  if (flags.max_queue_delay_ms) options.max_queue_delay_ms = *flags.max_queue_delay_ms;
  TESSERA_RETURN_IF_ERROR(ParseVariability(flags.variability, options));
  options.drop_after_ms = flags.drop_after_ms;
  options.seed = flags.seed;
  TESSERA_RETURN_IF_ERROR(ValidateNamingFlags(options));
  if (options.arrivals == ArrivalKind::kTrace) {
    TESSERA_RETURN_IF_ERROR(LoadTrace(trace_path, scenario, options,
                                      !flags.duration.empty() || transition.has_value()));
  } else {
    TESSERA_RETURN_IF_ERROR(CheckSimulatedRequests(transition ? "--step-seconds" : "--duration",
                                                   options.duration_s, TotalRate(scenario)));
  }
  return options;
}

Result<SimInputs> LoadSimInputs(const SimulateFlags& flags) {
  SimInputs in;
  TESSERA_ASSIGN_OR_RETURN(in.scenario, LoadScenarioOf(flags));
  if (!flags.transition.empty()) {
    TESSERA_ASSIGN_OR_RETURN(in.transition, LoadTransition(flags.transition));
  }
  // Options before the deployment: a mistyped flag is reported first and cheaply.
  TESSERA_ASSIGN_OR_RETURN(in.options, OptionsFrom(flags, in.scenario, in.transition));
  TESSERA_ASSIGN_OR_RETURN(in.deployment, LoadDeployment(flags.deployment));
  // Through a transition the scenario also names the services its steps start.
  TESSERA_RETURN_IF_ERROR(CheckSameServices(
      in.scenario,
      in.transition ? WithStartedServices(in.deployment, *in.transition) : in.deployment,
      in.transition ? flags.deployment + " and " + flags.transition : flags.deployment));
  AdoptRule(in.deployment, flags.deployment, LatencyRule{});
  TESSERA_ASSIGN_OR_RETURN(in.problem, ProblemFor(flags, in.scenario, in.deployment));
  return in;
}

// Trace requests after --duration are not sent; say so rather than let the
// offered rates quietly differ from the trace's.
void NoteTraceCut(const SimOptions& options) {
  long cut = 0;
  for (const auto& [service, times] : options.trace) {
    cut +=
        std::count_if(times.begin(), times.end(), [&](double t) { return t > options.duration_s; });
  }
  if (cut > 0) {
    PrintMessage(fmt::format(
        "tessera: note: {} request(s) of the trace arrive after --duration ({:g} s) and are not "
        "sent\n",
        cut, options.duration_s));
  }
}

// The run through the transition, reported whole and window by window.
int RunThroughTransition(const SimulateFlags& flags, const SimInputs& in) {
  Result<TransitionSimReport> report = SimulateTransition(
      in.deployment, *in.transition, *in.problem, in.options, *flags.step_seconds);
  if (!report.ok()) return ReportError(report.status().WithContext(flags.transition));
  const std::string text =
      flags.format == "json" ? FormatTransitionSimJson(*report) : FormatTransitionSimTable(*report);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  NoteTraceCut(in.options);
  NoteSloMisses(report->overall);
  return kExitOk;
}

int RunSimulate(const SimulateFlags& flags) {
  Result<SimInputs> in = LoadSimInputs(flags);
  if (!in.ok()) return ReportError(in.status());
  if (in->transition) return RunThroughTransition(flags, *in);
  Result<ServingModel> model = BuildServingModel(in->deployment, *in->problem);
  if (!model.ok()) {
    // A deployment made with --profiles X needs the same profiles here.
    return ReportError(model.status().WithContext(
        flags.deployment + (flags.profiles.empty() ? " (with the embedded profiles)"
                                                   : " (with profiles " + flags.profiles + ")")));
  }
  Result<SimReport> report = Simulate(*model, in->options);
  if (!report.ok()) return ReportError(report.status());
  const std::string text =
      flags.format == "json" ? FormatSimReportJson(*report) : FormatSimReportTable(*report);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  NoteTraceCut(in->options);
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

// --burst-on-share: a share in [kMinBurstOnShare, 1], NaN rejected.
CLI::Validator BurstOnShare() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        if (v && *v >= kMinBurstOnShare && *v <= 1) return "";
        return fmt::format("expected a share of time in [{:g}, 1], got {}", kMinBurstOnShare,
                           QuoteForMessage(text));
      },
      "SHARE");
}

void AddArrivalFlags(CLI::App& cmd, SimulateFlags& flags) {
  auto* duration =
      cmd.add_option("--duration", flags.duration,
                     "How long requests arrive, " + DescribeRange(kSimulatedTime) +
                         ": 60, 60s, 500ms, 2m or 1h (default 60s; with trace:FILE, the trace's "
                         "last request rounded up to a second)");
  auto* transition = cmd.add_option(
      "--transition", flags.transition,
      "Transition JSON (tessera transition) to run the deployment through, phase by phase");
  cmd.add_option("--step-seconds", flags.step_seconds,
                 "With --transition: how long each phase (and the states before and after) is "
                 "simulated, " +
                     DescribeRange(kTransitionStep) + "; a plain number is seconds")
      ->transform(DurationFlag(kTransitionStep))
      ->needs(transition);
  transition->excludes(duration);
  cmd.add_option("--arrivals", flags.arrivals,
                 "poisson, constant, bursty (on/off Markov-modulated Poisson, same mean rate) "
                 "or trace:FILE (CSV service,time_s)")
      ->capture_default_str();
  cmd.add_option("--burst-on-share", flags.burst_on_share,
                 fmt::format("bursty: long-run share of time 'on', in [{:g}, 1]; the rate while "
                             "on is rate / share (default 0.5)",
                             kMinBurstOnShare))
      ->check(BurstOnShare());
  cmd.add_option("--burst-on-s", flags.burst_on_s,
                 "bursty: mean length of an 'on' period, " + DescribeRange(kBurstOn) +
                     "; a plain number is seconds (default 1)")
      ->transform(DurationFlag(kBurstOn));
  cmd.add_option("--seed", flags.seed, "Seed of every random draw; same seed, same report")
      ->check(NonNegative())
      ->capture_default_str();
}

void AddServingFlags(CLI::App& cmd, SimulateFlags& flags) {
  cmd.add_option("--router", flags.router,
                 "weighted (at random, by each process's SLO-safe capacity under the plan's "
                 "rule) or jsq (the process whose batch would end first); default: the router the "
                 "plan records")
      ->check(CLI::IsMember({"weighted", "jsq"}));
  cmd.add_option("--max-queue-delay-ms", flags.max_queue_delay_ms,
                 "A partial batch starts once its oldest request has waited this long (default: "
                 "the plan's batch budget, e.g. half the SLO, minus the planned batch's latency, "
                 "at least 0); " +
                     DescribeRange(kServingDelay) + ", a plain number is ms")
      ->transform(DurationFlag(kServingDelay, kMillisecond));
  cmd.add_option("--variability", flags.variability,
                 "Batch execution time: none, exponential, lognormal or lognormal:CV (mean 1 x "
                 "the profiled latency; CV in (0, 100], default 0.1)")
      ->capture_default_str();
  cmd.add_option("--drop-after-ms", flags.drop_after_ms,
                 "Drop a request that has waited longer than this when its batch forms (counted "
                 "as missing its SLO); 0 = never, else up to " +
                     FormatDuration(kServingDelay.max_s) + ", a plain number is ms")
      ->transform(DurationFlag(kServingDelay, kMillisecond))
      ->capture_default_str();
}

void AddInputAndOutputFlags(CLI::App& cmd, SimulateFlags& flags) {
  auto* scenario = cmd.add_option("--scenario", flags.scenario,
                                  "Scenario YAML giving each service's rate and SLO");
  auto* slo =
      cmd.add_option("--parva-slo", flags.parva_slo, "Or a ParvaGPU SLO directory (with --row)");
  cmd.add_option("--row", flags.row, "Row of the ParvaGPU SLO files, 1-based")
      ->needs(slo)
      ->check(CLI::PositiveNumber);
  scenario->excludes(slo);
  cmd.add_option("--replicate", flags.replicate,
                 "K copies of every service, as the deployment was planned with")
      ->check(Within(limits::kReplicate));
  cmd.add_option("--deployment", flags.deployment, "Deployment JSON (tessera plan --format json)")
      ->required();
  cmd.add_option("--profiles", flags.profiles,
                 "Profile CSV or ParvaGPU prof_data directory the deployment was planned with; "
                 "default: the embedded synthesized profiles of its GPU models");
  cmd.add_option("--coeffs", flags.coefficients,
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
  AddArrivalFlags(*cmd, *flags);
  AddServingFlags(*cmd, *flags);
  cmd->callback([flags, &exit_code] { exit_code = RunSimulate(*flags); });
}

}  // namespace tessera::cli
