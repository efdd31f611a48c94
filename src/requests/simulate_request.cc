#include "tessera/simulate_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "tessera/durations.h"
#include "tessera/gpu_catalog.h"
#include "tessera/profile_io.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// A run's length without --duration (and without a trace to set it).
constexpr double kDefaultDurationS = 60;

// The time options in their ranges (the CLI's flags arrive checked; the
// Python package's keywords are checked here), and those that only apply
// with or without a transition.
Status CheckDurations(const SimulateRequest& r, bool transition) {
  if (transition && r.duration_s) {
    return Status::InvalidArgument(
        "--duration: not with --transition: its steps (--step-seconds) set the run's length");
  }
  if (!transition && r.step_s) return Status::InvalidArgument("--step-seconds needs --transition");
  if (r.duration_s) {
    TESSERA_RETURN_IF_ERROR(CheckDuration("--duration", *r.duration_s, kSimulatedTime).status());
  }
  if (r.step_s) {
    TESSERA_RETURN_IF_ERROR(CheckDuration("--step-seconds", *r.step_s, kTransitionStep).status());
  }
  if (r.burst_on_s) {
    TESSERA_RETURN_IF_ERROR(CheckDuration("--burst-on-s", *r.burst_on_s, kBurstOn).status());
  }
  if (r.burst_on_share && !(*r.burst_on_share >= kMinBurstOnShare && *r.burst_on_share <= 1)) {
    return Status::InvalidArgument(
        fmt::format("--burst-on-share: expected a share of time in [{:g}, 1], got {}",
                    kMinBurstOnShare, QuoteForMessage(fmt::format("{}", *r.burst_on_share))));
  }
  if (r.max_queue_delay_ms) {
    TESSERA_RETURN_IF_ERROR(
        CheckDuration("--max-queue-delay-ms", *r.max_queue_delay_ms, kServingDelay, kMillisecond)
            .status());
  }
  return CheckDuration("--drop-after-ms", r.drop_after_ms, kServingDelay, kMillisecond).status();
}

// How long the run lasts: one step before, one per phase, one after.
Result<double> TransitionRunSeconds(const Transition& transition,
                                    const std::optional<double>& step_seconds) {
  if (!step_seconds) {
    return Status::InvalidArgument(
        "--step-seconds: required with --transition (how long each phase is simulated, " +
        DescribeRange(kTransitionStep) + ")");
  }
  const double steps = static_cast<double>(transition.phases.size()) + 2;
  const double run_s = steps * *step_seconds;
  if (run_s > kSimulatedTime.max_s) {
    return Status::InvalidArgument(fmt::format(
        "--step-seconds: {} phases + 2 steps of {} last {}, past {} (the longest simulated "
        "duration)",
        transition.phases.size(), FormatDuration(*step_seconds), FormatDuration(run_s),
        FormatDuration(kSimulatedTime.max_s)));
  }
  return run_s;
}

Status ParseArrivals(const SimulateRequest& request, SimOptions& options, std::string& trace_path) {
  const std::string& a = request.arrivals;
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
  if (options.arrivals != ArrivalKind::kBursty && (request.burst_on_share || request.burst_on_s)) {
    return Status::InvalidArgument(
        fmt::format("{}: only applies to --arrivals bursty",
                    request.burst_on_share ? "--burst-on-share" : "--burst-on-s"));
  }
  if (request.burst_on_share) options.burst.on_share = *request.burst_on_share;
  if (request.burst_on_s) options.burst.on_s = *request.burst_on_s;
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

// The options of `request`, checked; the trace (if any) loaded and checked
// against `scenario`. Through a transition the run's duration is its steps'.
Result<SimOptions> OptionsFrom(const SimulateRequest& request, const Scenario& scenario,
                               const std::optional<Transition>& transition) {
  SimOptions options;
  std::string trace_path;
  TESSERA_RETURN_IF_ERROR(CheckDurations(request, transition.has_value()));
  if (transition) {
    TESSERA_ASSIGN_OR_RETURN(options.duration_s, TransitionRunSeconds(*transition, request.step_s));
  } else {
    options.duration_s = request.duration_s.value_or(kDefaultDurationS);
  }
  TESSERA_RETURN_IF_ERROR(ParseArrivals(request, options, trace_path));
  if (!request.router.empty()) {
    TESSERA_ASSIGN_OR_RETURN(options.router, ParseRouter(request.router));
  }
  if (request.max_queue_delay_ms) options.max_queue_delay_ms = *request.max_queue_delay_ms;
  TESSERA_RETURN_IF_ERROR(ParseVariability(request.variability, options));
  options.drop_after_ms = request.drop_after_ms;
  options.seed = request.seed;
  TESSERA_RETURN_IF_ERROR(ValidateNamingFlags(options));
  if (options.arrivals == ArrivalKind::kTrace) {
    TESSERA_RETURN_IF_ERROR(LoadTrace(trace_path, scenario, options,
                                      request.duration_s.has_value() || transition.has_value()));
  } else {
    TESSERA_RETURN_IF_ERROR(CheckSimulatedRequests(transition ? "--step-seconds" : "--duration",
                                                   options.duration_s, TotalRate(scenario)));
  }
  return options;
}

// The scenario of the request: given, or loaded from its inputs.
Result<Scenario> ScenarioOf(const SimulateRequest& request) {
  if (request.scenario) return *request.scenario;
  if (request.inputs.scenario.empty() && request.inputs.parva_slo.empty()) {
    return Status::InvalidArgument(
        "give the scenario the deployment serves: --scenario FILE or --parva-slo DIR --row N");
  }
  return LoadScenario(request.inputs);
}

// Where the figures of `inputs` come from, for messages.
std::string FiguresOf(const ProblemInputs& inputs) {
  if (inputs.profile_table) return "with the profiles given";
  if (!inputs.profiles.empty()) return "with profiles " + inputs.profiles;
  return "with the embedded profiles";
}

}  // namespace

Result<Problem> ProblemForPlan(const ProblemInputs& inputs, const Scenario& scenario,
                               const Deployment& d, const std::string& path,
                               const NoteSink& notes) {
  const std::string where = path + ": field 'gpu'";
  if (d.sharing == Sharing::kMps) {
    Result<const GpuModel*> gpu = FindGpu(d.gpu);
    if (!gpu.ok()) return gpu.status().WithContext(where);
    if (!inputs.coefficients.empty()) {
      TESSERA_ASSIGN_OR_RETURN(MpsCoefficients coefficients,
                               LoadMpsCoefficients(inputs.coefficients));
      return Problem::BuildMps(scenario, {*gpu, 0, 0}, std::move(coefficients), d.rule);
    }
    if (!(*gpu)->HasMig()) {
      return Status::InvalidArgument(path +
                                     ": an MPS plan is simulated with the iGniter coefficients "
                                     "it was made with: --coeffs FILE");
    }
    // Made without --coeffs: with the coefficients `plan` derived from the same profiles.
    TESSERA_ASSIGN_OR_RETURN(
        DerivedMps derived,
        DeriveMpsForGpu(inputs.profiles, **gpu, inputs.profile_table.get(), notes));
    return Problem::BuildMps(scenario, {*gpu, 0, 0}, std::move(derived.coefficients), d.rule);
  }
  if (!inputs.coefficients.empty()) {
    return Status::InvalidArgument("--coeffs applies to MPS plans; " + path + " is a MIG plan");
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
  const ProblemInputs used = InputsForPlan(inputs, d, notes);
  TESSERA_ASSIGN_OR_RETURN(ProfileTable profiles, used.profile_table ? Result(*used.profile_table)
                                                  : used.profiles.empty()
                                                      ? EmbeddedProfiles(gpus)
                                                      : LoadProfiles(used.profiles, d.gpu));
  TESSERA_ASSIGN_OR_RETURN(Problem problem,
                           Problem::BuildPool(scenario, std::move(pool), profiles, d.rule));
  NoteOtherProfiles(d, used, problem, notes);
  return problem;
}

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

Deployment WithStartedServices(Deployment d, const Transition& transition) {
  for (const TransitionPhase& phase : transition.phases) {
    for (const TransitionStep& step : phase.steps) {
      if (step.action == StepAction::kDestroy ||
          std::any_of(d.services.begin(), d.services.end(),
                      [&](const ServiceOutcome& s) { return s.name == step.service; })) {
        continue;
      }
      ServiceOutcome started;
      started.name = step.service;
      started.model = step.model;
      d.services.push_back(std::move(started));
    }
  }
  return d;
}

Result<Transition> LoadTransition(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseTransitionJson(text, path);
}

Result<Simulation> LoadSimulation(const SimulateRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, ScenarioOf(request));
  std::optional<Transition> transition = request.transition;
  if (!transition && !request.transition_path.empty()) {
    TESSERA_ASSIGN_OR_RETURN(transition, LoadTransition(request.transition_path));
  }
  // Options before the deployment: a mistyped option is reported first and cheaply.
  TESSERA_ASSIGN_OR_RETURN(SimOptions options, OptionsFrom(request, scenario, transition));
  const std::string& path = request.deployment_path;
  Deployment deployment;
  if (request.deployment) {
    deployment = *request.deployment;
  } else {
    TESSERA_ASSIGN_OR_RETURN(deployment, LoadDeployment(path));
  }
  // Through a transition the scenario also names the services its steps start.
  TESSERA_RETURN_IF_ERROR(CheckSameServices(
      scenario, transition ? WithStartedServices(deployment, *transition) : deployment,
      transition ? path + " and " + request.transition_path : path));
  AdoptRule(deployment, path, LatencyRule{}, request.notes);
  TESSERA_ASSIGN_OR_RETURN(
      Problem problem, ProblemForPlan(request.inputs, scenario, deployment, path, request.notes));
  const bool through = transition.has_value();
  return Simulation{std::move(scenario),
                    std::move(deployment),
                    through ? request.transition_path : path,
                    std::move(transition),
                    through ? *request.step_s : 0,
                    std::move(problem),
                    std::move(options),
                    FiguresOf(request.inputs)};
}

Result<SimReport> SimulatePlan(const Simulation& sim) {
  Result<ServingModel> model = BuildServingModel(sim.deployment, sim.problem);
  if (!model.ok()) return model.status().WithContext(sim.name + " (" + sim.figures + ")");
  return Simulate(*model, sim.options);
}

Result<TransitionSimReport> SimulateThroughTransition(const Simulation& sim) {
  Result<TransitionSimReport> report =
      SimulateTransition(sim.deployment, *sim.transition, sim.problem, sim.options, sim.step_s);
  if (!report.ok()) return report.status().WithContext(sim.name);
  return report;
}

void NoteTraceCut(const SimOptions& options, const NoteSink& notes) {
  long cut = 0;
  for (const auto& [service, times] : options.trace) {
    cut +=
        std::count_if(times.begin(), times.end(), [&](double t) { return t > options.duration_s; });
  }
  if (cut > 0 && notes) {
    notes(
        fmt::format("{} request(s) of the trace arrive after --duration ({:g} s) and are not sent",
                    cut, options.duration_s));
  }
}

}  // namespace tessera
