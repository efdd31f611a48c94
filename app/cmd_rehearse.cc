// `tessera rehearse`: a plan's data path run on this machine (rehearsal.h),
// measured beside the simulator's prediction.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "autoscale_flags.h"
#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/autoscale_request.h"
#include "tessera/durations.h"
#include "tessera/problem_inputs.h"
#include "tessera/serving/rehearsal.h"
#include "tessera/simulate_request.h"
#include "tessera/util/text_io.h"
#include "tessera/workload/day_rates.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct RehearseFlags {
  PlanRequest plan;        // the scenario, its profiles and the rule flags
  std::string deployment;  // empty: plan the scenario (tessera plan's default planner)
  std::string transition;  // --transition: run it under the load
  std::optional<double> step_seconds;
  double duration_s = 60;
  double dilation = 0;  // 0: the smallest that keeps the load under kWallRateCap
  uint64_t seed = 1;
  std::string work_dir;
  bool keep = false;
  std::string haproxy = "haproxy";
  std::string fake_nvml;
  int base_port = 10000;
  int router_base_port = 9000;
  int router_metrics_port = 8404;
  std::string format = "text";
  std::string output;
  // --serve: under `tessera serve` in auto mode, one service's rate stepped.
  bool serve = false;
  std::string load_step;           // SERVICE:FACTOR@TIME
  std::optional<double> window_s;  // default: 10 s, a day's 15 minutes
  double replan_hold_s = 3;
  // --serve --rates: a compressed day, autoscaled by serve's policy.
  std::string rates;
  double minute_s = 0.25;
  int spare_gpus = 2;
  AutoscalePolicyOptions policy;
  std::string step_durations;
};

// serve's flags for the policy's options.
std::vector<std::string> PolicyArgs(const AutoscalePolicyOptions& o, int spare_gpus) {
  std::vector<std::string> args = {"--forecaster",     o.forecaster,
                                   "--lead",           fmt::format("{}s", o.lead_s),
                                   "--margin",         fmt::format("{}", o.margin),
                                   "--hysteresis",     fmt::format("{}", o.hysteresis),
                                   "--down-hold",      fmt::format("{}s", o.down_hold_s),
                                   "--step-durations", FormatStepDurations(o.durations),
                                   "--spare-gpus",     std::to_string(spare_gpus),
                                   "--plan-windows",   std::to_string(o.plan_windows)};
  if (o.consolidate) args.push_back("--consolidate");
  if (o.hedge_turns) args.push_back("--hedge-turns");
  return args;
}

// Requests per second of wall time the default dilation keeps the load
// under, so that the load, HAProxy and the emulators share two cores and
// the generator keeps its send jitter p99 under 1 ms. Measured on S6 (97
// emulators): 984 requests/s (dilation 40) gave 1.04 ms for 5 s and
// 1.40 ms for 60 s; 656 requests/s (dilation 60) gave 0.69 ms for 5 s.
constexpr double kWallRateCap = 650;

// Set by SIGINT and SIGTERM: the rehearsal stops its processes and ends.
std::atomic<bool> interrupted{false};

void Interrupt(int) { interrupted = true; }

fs::path SelfDirectory() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

// The plan (given or made), the serving model of its prediction, and the
// transition to run under the load (--transition).
struct Rehearsed {
  Deployment deployment;
  ServingModel model;  // empty services with a transition: its lives have the model
  std::optional<RehearsalTransition> transition;
  double total_rps = 0;  // the scenario's
};

Result<Rehearsed> PlanAndModel(const RehearseFlags& f) {
  Rehearsed out;
  if (f.deployment.empty()) {
    if (!f.transition.empty()) {
      return Status::InvalidArgument(
          "--transition needs --deployment: the plan the transition starts from");
    }
    TESSERA_ASSIGN_OR_RETURN(PlanRun run, Plan(f.plan));
    TESSERA_ASSIGN_OR_RETURN(out.model, BuildServingModel(run.deployment, run.problem));
    out.deployment = std::move(run.deployment);
  } else {
    TESSERA_ASSIGN_OR_RETURN(const Scenario scenario, LoadScenario(f.plan.inputs));
    std::optional<Transition> transition;
    if (!f.transition.empty()) {
      TESSERA_ASSIGN_OR_RETURN(transition, LoadTransition(f.transition));
      if (!f.step_seconds) {
        return Status::InvalidArgument(
            "--transition needs --step-seconds X: the plan's time before, in each phase and "
            "after");
      }
    } else if (f.step_seconds) {
      return Status::InvalidArgument("--step-seconds needs --transition");
    }
    TESSERA_ASSIGN_OR_RETURN(out.deployment, LoadDeployment(f.deployment));
    // Through a transition the scenario also names the services its steps start.
    TESSERA_RETURN_IF_ERROR(CheckSameServices(
        scenario, transition ? WithStartedServices(out.deployment, *transition) : out.deployment,
        transition ? f.deployment + " and " + f.transition : f.deployment));
    AdoptRule(out.deployment, f.deployment, LatencyRule{}, CliNotes());
    ProblemInputs figures;
    figures.profiles = f.plan.inputs.profiles;
    TESSERA_ASSIGN_OR_RETURN(Problem problem, ProblemForPlan(figures, scenario, out.deployment,
                                                             f.deployment, CliNotes()));
    if (transition) {
      out.transition =
          RehearsalTransition{std::move(*transition), std::move(problem), *f.step_seconds};
    } else {
      Result<ServingModel> model = BuildServingModel(out.deployment, problem);
      if (!model.ok()) return model.status().WithContext(f.deployment);
      out.model = std::move(*model);
    }
    for (const Service& s : scenario.services) out.total_rps += s.rate_rps;
  }
  for (const ServingService& s : out.model.services) out.total_rps += s.rate_rps;
  return out;
}

// "SERVICE:FACTOR@TIME" of --load-step into the request.
Status ParseLoadStep(const std::string& text, ServedRehearsalRequest& r) {
  const size_t colon = text.rfind(':');
  const size_t at = text.rfind('@');
  if (colon == std::string::npos || at == std::string::npos || colon == 0 || at < colon) {
    return Status::InvalidArgument("--load-step " + QuoteForMessage(text) +
                                   ": expected SERVICE:FACTOR@TIME, e.g. resnet50:1.5@20s");
  }
  r.step_service = text.substr(0, colon);
  const std::string factor = text.substr(colon + 1, at - colon - 1);
  char* end = nullptr;
  r.step_factor = std::strtod(factor.c_str(), &end);
  if (factor.empty() || end != factor.c_str() + factor.size() || !(r.step_factor > 0) ||
      r.step_factor > 100) {
    return Status::InvalidArgument("--load-step " + QuoteForMessage(text) + ": the factor " +
                                   QuoteForMessage(factor) + " must be a number in (0, 100]");
  }
  TESSERA_ASSIGN_OR_RETURN(r.step_at_s,
                           ParseDuration("--load-step", text.substr(at + 1), kSimulatedTime));
  return Status::Ok();
}

// Fills in what both rehearsals take from the flags: binaries, ports, the
// work directory (`made`: the temporary one made, removed afterwards).
template <typename Request>
Status CommonRequest(const RehearseFlags& f, Request& r, std::string& made) {
  const fs::path self = SelfDirectory();
  r.tessera_binary = (self / "tessera").string();
  r.fake_nvml_library =
      f.fake_nvml.empty() ? (self / "libtessera-fake-nvml.so").string() : f.fake_nvml;
  if (!fs::exists(r.fake_nvml_library)) {
    return Status::InvalidArgument("--fake-nvml: " + QuoteForMessage(r.fake_nvml_library) +
                                   " does not exist; build it (make build) or name the library");
  }
  r.fake_nvml_library = fs::absolute(r.fake_nvml_library).string();
  r.haproxy_binary = f.haproxy;
  r.process_base_port = f.base_port;
  r.router_base_port = f.router_base_port;
  r.router_metrics_port = f.router_metrics_port;
  r.seed = f.seed;
  if (f.work_dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "tessera-rehearse-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError("cannot make a work directory under " +
                             fs::temp_directory_path().string());
    }
    made = pattern;
    r.work_dir = made;
  } else {
    r.work_dir = fs::absolute(f.work_dir).string();
  }
  r.progress = [](std::string_view line) { PrintMessage("tessera: " + std::string(line) + "\n"); };
  r.stop = &interrupted;
  struct sigaction action {};
  action.sa_handler = Interrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return Status::Ok();
}

int RunServedRehearse(const RehearseFlags& f) {
  if (!f.deployment.empty() || !f.transition.empty()) {
    return ReportError(Status::InvalidArgument(
        "--serve plans with tessera serve: --deployment and --transition do not apply"));
  }
  if (f.load_step.empty() == f.rates.empty()) {
    return ReportError(Status::InvalidArgument(
        "--serve needs --load-step SERVICE:FACTOR@TIME or --rates DAY.csv (one of them): the "
        "rate change serve answers"));
  }
  if (f.plan.inputs.scenario.empty()) {
    return ReportError(Status::InvalidArgument("--serve needs --scenario"));
  }
  Result<Scenario> scenario = LoadScenario(f.plan.inputs);
  if (!scenario.ok()) return ReportError(scenario.status());
  ServedRehearsalRequest r;
  r.scenario = std::move(*scenario);
  if (!f.rates.empty()) {
    Result<DayRates> day = LoadDayRates(f.rates, r.scenario);
    if (!day.ok()) return ReportError(day.status());
    r.day = std::move(*day);
    r.minute_s = f.minute_s;
    AutoscalePolicyOptions policy = f.policy;
    if (Status d = ApplyStepDurations(f.step_durations, policy); !d.ok()) return ReportError(d);
    // Refused here, before serve is started with them.
    if (Status checked = CheckAutoscalePolicy(policy); !checked.ok()) return ReportError(checked);
    r.autoscale_args = PolicyArgs(policy, f.spare_gpus);
    Result<Problem> problem =
        LoadProblem(f.plan.inputs, r.scenario, /*mps=*/false, nullptr, CliNotes());
    if (!problem.ok()) return ReportError(problem.status());
    r.problem = std::move(*problem);
  } else if (Status s = ParseLoadStep(f.load_step, r); !s.ok()) {
    return ReportError(s);
  }
  r.serve_args = {"--scenario", fs::absolute(f.plan.inputs.scenario).string()};
  if (!f.plan.inputs.profiles.empty()) {
    r.profiles = fs::absolute(f.plan.inputs.profiles).string();
    r.serve_args.insert(r.serve_args.end(), {"--profiles", r.profiles});
  }
  if (!r.scenario.gpu.empty()) r.gpu = r.scenario.gpu;
  r.duration_s = f.duration_s;
  r.window_s = f.window_s.value_or(f.rates.empty() ? 10 : 15 * f.minute_s);
  if (r.day) r.duration_s = r.day->minutes() * r.minute_s;
  r.replan_hold_s = f.replan_hold_s;
  r.dilation =
      f.dilation > 0 ? f.dilation : std::max(1.0, std::ceil(TotalRate(r.scenario) / kWallRateCap));
  std::string made;
  if (Status s = CommonRequest(f, r, made); !s.ok()) return ReportError(s);
  Result<ServedRehearsalReport> report = RunServedRehearsal(r);
  if (!made.empty() && !f.keep) {
    std::error_code ec;
    fs::remove_all(made, ec);
  }
  if (!report.ok()) return ReportError(report.status());
  const std::string text =
      f.format == "json" ? FormatServedRehearsalJson(*report) : FormatServedRehearsalTable(*report);
  if (Status written = WriteOutput(f.output, text); !written.ok()) return ReportError(written);
  return kExitOk;
}

int RunRehearse(const RehearseFlags& f) {
  if (f.serve) return RunServedRehearse(f);
  if (!f.load_step.empty() || !f.rates.empty()) {
    return ReportError(Status::InvalidArgument(
        fmt::format("{} needs --serve", f.rates.empty() ? "--load-step" : "--rates")));
  }
  Result<Rehearsed> planned = PlanAndModel(f);
  if (!planned.ok()) return ReportError(planned.status());
  RehearsalRequest r;
  r.deployment = std::move(planned->deployment);
  r.model = std::move(planned->model);
  r.transition = std::move(planned->transition);
  r.gpu = r.deployment.gpu;
  r.profiles = f.plan.inputs.profiles.empty() ? "" : fs::absolute(f.plan.inputs.profiles).string();
  r.duration_s = f.duration_s;
  r.dilation =
      f.dilation > 0 ? f.dilation : std::max(1.0, std::ceil(planned->total_rps / kWallRateCap));
  std::string made;
  if (Status s = CommonRequest(f, r, made); !s.ok()) return ReportError(s);
  Result<RehearsalReport> report = RunRehearsal(r);
  if (!report.ok() && report.status().message().starts_with("haproxy:")) {
    report = report.status().WithContext("--haproxy");
  }
  if (!made.empty() && !f.keep) {
    std::error_code ec;
    fs::remove_all(made, ec);
  }
  if (!report.ok()) return ReportError(report.status());
  const std::string text =
      f.format == "json" ? FormatRehearsalJson(*report) : FormatRehearsalTable(*report);
  if (Status written = WriteOutput(f.output, text); !written.ok()) return ReportError(written);
  return kExitOk;
}

constexpr const char* kRehearseHelp =
    "Runs a plan's whole data path on this machine and measures it (docs/rehearse.md):\n"
    "one `tessera agent` per node applies the plan on the fake NVML library and starts a\n"
    "`tessera emulate` for every serving process (Triton's protocol and dynamic batcher,\n"
    "the profiled batch times); HAProxy routes each service as the plan's router says,\n"
    "as `tessera deploy` ships it; an open-loop generator sends Poisson requests at each\n"
    "service's rate for --duration. Then it prints per service what was offered, served\n"
    "and failed, p50 and p99 latency and the share within the SLO, beside `tessera\n"
    "simulate`'s prediction for the same plan, router, duration and seed.\n\n"
    "--dilation K runs everything K times slower (rates / K, batch times and queue\n"
    "delays x K) so that two cores carry a whole plan; latencies are reported in the\n"
    "plan's time. Default: the smallest K that keeps the load under 650 requests/s.\n\n"
    "--transition T.json (tessera transition, from --deployment) with --step-seconds X\n"
    "runs the transition under the load, as `tessera simulate --transition` does: X\n"
    "seconds of the plan's time as it is, X per phase, X after. At each phase's start\n"
    "HAProxy drains the servers of what the phase destroys (runtime API), every node's\n"
    "agent runs the phase (`tessera agent --transition T --phase K`), and at the phase's\n"
    "end the servers of what it created get their weights and take requests (each window\n"
    "runs its phase's worst state, as the simulator's); the report adds each phase's\n"
    "timings and each window's services beside the simulated window.\n\n"
    "Examples:\n"
    "  tessera rehearse --scenario examples/scenarios/s3.yaml --duration 60s\n"
    "  tessera plan --scenario examples/scenarios/s6.yaml --format json -o s6.json\n"
    "  tessera rehearse --scenario examples/scenarios/s6.yaml --deployment s6.json \\\n"
    "      --duration 20s --dilation 100 --format json\n"
    "  tessera rehearse --scenario examples/scenarios/s6-floor.yaml --deployment day.json \\\n"
    "      --transition t.json --step-seconds 5\n\n"
    "--serve --load-step SERVICE:FACTOR@TIME rehearses the control loop instead:\n"
    "`tessera serve` in auto mode plans and deploys the scenario (node agents on the\n"
    "fake NVML, `tessera router-agent` running HAProxy and reporting the traffic it\n"
    "measures); the load steps one service's rate, serve re-plans once the move has held\n"
    "for --replan-hold, and the transition runs under the load. The report has every\n"
    "--window's measured compliance and when each transition started and ended.\n"
    "  tessera rehearse --serve --scenario examples/scenarios/s3.yaml \\\n"
    "      --load-step resnet50:1.5@20s --duration 60s\n\n"
    "--serve --rates DAY.csv rehearses a compressed day instead: every service follows the\n"
    "day's per-minute rates (tessera autoscale's rates file), each minute --minute of the\n"
    "plan's time, and serve runs the autoscaling policy (--autoscale; the policy flags\n"
    "--forecaster, --lead, ... are passed on, its durations in the day's minutes). Every\n"
    "--window (default 15 minutes of the day) is measured beside the simulator's\n"
    "prediction for the plans serve ran.\n"
    "  tessera rehearse --serve --scenario examples/scenarios/s3.yaml \\\n"
    "      --rates examples/days/alibaba-2023-day.csv --minute 0.25s\n\n"
    "Needs haproxy (Debian's haproxy 2.6) and the fake NVML library built beside tessera.\n"
    "Exit codes: 0 done; 2 bad flags or inputs, or a process of the data path failed (the\n"
    "message names it and its log; --keep-work-dir keeps every log).";

}  // namespace

void AddRehearseCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RehearseFlags>();
  CLI::App* cmd = app.add_subcommand(
      "rehearse", "Run a plan's data path here (agents, emulators, HAProxy) under real load");
  cmd->footer(kRehearseHelp);
  AddInputFlags(*cmd, flags->plan.inputs);
  flags->plan.notes = CliNotes();
  flags->plan.progress = CliProgress();
  cmd->add_option("--deployment", flags->deployment,
                  "The plan (deployment JSON) to rehearse; default: plan the scenario");
  cmd->add_option("--transition", flags->transition,
                  "A transition from --deployment (tessera transition) to run under the load");
  cmd->add_option("--step-seconds", flags->step_seconds,
                  "With --transition: the plan's time before, in each phase and after, " +
                      DescribeRange(kSimulatedTime))
      ->transform(DurationFlag(kSimulatedTime));
  cmd->add_option("--duration", flags->duration_s,
                  "How long requests arrive, in the plan's time, " + DescribeRange(kSimulatedTime) +
                      " (default 60s)")
      ->transform(DurationFlag(kSimulatedTime));
  cmd->add_option("--dilation", flags->dilation,
                  "Time dilation K in [1, 1000] (default: the smallest K keeping the load "
                  "under 650 requests/s)")
      ->check(Within(InputRange{1.0, 1000.0}));
  cmd->add_option("--seed", flags->seed, "Seed of the arrivals and the prediction")
      ->capture_default_str();
  cmd->add_option("--work-dir", flags->work_dir,
                  "Folder for the node plans, configs and logs (default: a temporary one, "
                  "removed afterwards)");
  cmd->add_flag("--keep-work-dir", flags->keep, "Keep the temporary work folder");
  cmd->add_option("--haproxy", flags->haproxy, "The HAProxy binary")->capture_default_str();
  cmd->add_option("--fake-nvml", flags->fake_nvml,
                  "The fake NVML library (default: libtessera-fake-nvml.so beside tessera)");
  cmd->add_option("--base-port", flags->base_port, "First port of node 0's serving processes")
      ->check(Within(limits::kPort))
      ->capture_default_str();
  cmd->add_option("--router-base-port", flags->router_base_port,
                  "The router's port for the first service")
      ->check(Within(limits::kPort))
      ->capture_default_str();
  cmd->add_option("--router-metrics-port", flags->router_metrics_port, "The router's metrics port")
      ->check(Within(limits::kPort))
      ->capture_default_str();
  cmd->add_flag("--serve", flags->serve,
                "Rehearse under `tessera serve` in auto mode: it plans and deploys the scenario, "
                "the router agent reports the traffic, and --load-step moves it");
  cmd->add_option("--load-step", flags->load_step,
                  "With --serve: SERVICE:FACTOR@TIME, that service's rate x FACTOR from TIME "
                  "(the plan's time) on, e.g. resnet50:1.5@20s");
  cmd->add_option("--window", flags->window_s,
                  "With --serve: the measured windows' length, the plan's time (default 10s; with "
                  "--rates 15 minutes of the day)")
      ->transform(DurationFlag(kSimulatedTime));
  CLI::Option* rates =
      cmd->add_option("--rates", flags->rates,
                      "With --serve: a day to rehearse compressed (tessera autoscale's rates file: "
                      "'minute,multiplier' or 'minute,<service>,...'), autoscaled by serve");
  cmd->add_option("--minute", flags->minute_s,
                  "With --rates: the plan's time each minute of the day takes, up to 1m")
      ->transform(DurationFlag(DurationRange{kMillisecond, kMinute}))
      ->default_str("250ms")
      ->needs(rates);
  cmd->add_option("--spare-gpus", flags->spare_gpus,
                  "With --rates: GPUs a transition may use beyond both plans', 0..1000")
      ->check(Within(kAutoscaleSpareGpus))
      ->capture_default_str()
      ->needs(rates);
  for (CLI::Option* option : AddAutoscalePolicyFlags(*cmd, flags->policy, flags->step_durations)) {
    option->needs(rates);
  }
  cmd->add_option("--replan-hold", flags->replan_hold_s,
                  "With --serve: serve's --replan-hold, wall seconds (default 3)")
      ->check(Within(InputRange{0.0, 3600.0}));
  cmd->add_option("--format", flags->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-o,--output", flags->output, "Write the report here (default: stdout)");
  cmd->callback([flags, &exit_code] { exit_code = RunRehearse(*flags); });
}

}  // namespace tessera::cli
