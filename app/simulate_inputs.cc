#include "simulate_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "cli_common.h"
#include "durations.h"
#include "simulate_transition.h"
#include "tessera/profile_io.h"
#include "tessera/text_io.h"

namespace tessera::cli {
namespace {

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
                 "rule), jsq (the process whose batch would end first), equal (at random, equal "
                 "odds: a Kubernetes Service), leastconn or first (HAProxy's balance leastconn "
                 "or first, as deploy ships them; docs/routing.md); default: the router the "
                 "plan records")
      ->check(CLI::IsMember({"weighted", "jsq", "equal", "leastconn", "first"}));
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

}  // namespace

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
    TESSERA_ASSIGN_OR_RETURN(
        DerivedMps derived,
        DeriveMpsForGpu(flags.profiles, **gpu, flags.profile_table.get(), CliNotes()));
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
  ProblemInputs given;
  given.profiles = flags.profiles;
  given.profile_table = flags.profile_table;
  const ProblemInputs inputs = InputsForPlan(given, d, CliNotes());
  TESSERA_ASSIGN_OR_RETURN(ProfileTable profiles,
                           inputs.profile_table      ? Result(*inputs.profile_table)
                           : inputs.profiles.empty() ? EmbeddedProfiles(gpus)
                                                     : LoadProfiles(inputs.profiles, d.gpu));
  TESSERA_ASSIGN_OR_RETURN(Problem problem,
                           Problem::BuildPool(scenario, std::move(pool), profiles, d.rule));
  NoteOtherProfiles(d, inputs, problem, CliNotes());
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

Result<SimReport> SimulateOn(const SimulateFlags& flags, const Deployment& d,
                             const Problem& problem, const SimOptions& options) {
  Result<ServingModel> model = BuildServingModel(d, problem);
  if (!model.ok()) {
    const std::string profiles = flags.profile_table ? " (with the profiles given)"
                                 : flags.profiles.empty()
                                     ? " (with the embedded profiles)"
                                     : " (with profiles " + flags.profiles + ")";
    return model.status().WithContext(flags.deployment + profiles);
  }
  return Simulate(*model, options);
}

void AddSimulationFlags(CLI::App& cmd, SimulateFlags& flags) {
  AddArrivalFlags(cmd, flags);
  AddServingFlags(cmd, flags);
}

}  // namespace tessera::cli
