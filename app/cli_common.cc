#include "cli_common.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "durations.h"
#include "tessera/deployment_format.h"
#include "tessera/gpulet_tables.h"
#include "tessera/igniter_model.h"
#include "tessera/input_limits.h"
#include "tessera/mps_from_profiles.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"
#include "tessera/text_io.h"
#include "tessera/validator.h"

namespace tessera::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
      return kExitBadInput;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

int ReportError(const Status& status) {
  PrintMessage("tessera: error: " + status.message() + "\n");
  return ExitCodeFor(status);
}

namespace {
thread_local NoteCollector* current_collector = nullptr;
}  // namespace

NoteCollector::NoteCollector() : outer_(current_collector) { current_collector = this; }

NoteCollector::~NoteCollector() { current_collector = outer_; }

void PrintMessage(std::string_view text) {
  if (current_collector != nullptr) {
    current_collector->notes_.push_back(EscapeMessage(text));
    return;
  }
  std::cerr << EscapeMessage(text);
}

void AddInputFlags(CLI::App& command, InputFlags& flags) {
  auto* scenario = command.add_option("--scenario", flags.scenario,
                                      "Scenario YAML: gpu and services {name, model, rate_rps, "
                                      "slo_ms} (see examples/scenarios/)");
  auto* slo = command.add_option("--parva-slo", flags.parva_slo,
                                 "Import a scenario from a ParvaGPU SLO directory "
                                 "(SLO_req_rate.csv + SLO_latency.csv); needs --row");
  command.add_option("--row", flags.row, "Row of the ParvaGPU SLO files, 1-based")
      ->needs(slo)
      ->check(CLI::PositiveNumber);
  scenario->excludes(slo);
  command.add_option("--gpu", flags.gpu,
                     "GPU model (" + GpuNames() + "); default: the scenario's, else a100-80gb");
  auto* factor = command
                     .add_option("--latency-factor", flags.latency_factor,
                                 "A batch may take this share of the SLO (default 0.5)")
                     ->check(Within(limits::kLatencyFactor));
  command.add_option("--router", flags.router,
                     "How the serving side routes a service's requests among its processes, "
                     "recorded in the plan: leastconn (default: HAProxy's weighted leastconn, "
                     "what deploy ships), first (HAProxy's balance first, two batches of slots "
                     "per process), weighted (at random by SLO-safe capacity), equal (a "
                     "Kubernetes Service) or jsq (the simulator's ideal, which deploy cannot "
                     "ship); first, weighted and equal plan under --capacity-rule queueing "
                     "unless one is given (docs/routing.md)");
  command
      .add_option("--rate-margin", flags.rate_margin,
                  "Rates are estimates: plan for (1 + M) x every service's rate, " +
                      limits::kRateMargin.Describe() + " (default 0)")
      ->check(Within(limits::kRateMargin));
  command
      .add_option("--replicate", flags.replicate,
                  "Serve K copies of every service, named <name>#k (ParvaGPU's scalability "
                  "study grows S5 to 110 services with K = 10)")
      ->check(Within(limits::kReplicate));
  command.add_option("--profiles", flags.profiles,
                     "MIG planners: profile CSV file or ParvaGPU prof_data directory (format "
                     "detected); default: the embedded synthesized profiles");
  command
      .add_option("--compat", flags.compat,
                  "MIG planners: parva-artifact: ParvaGPU artifact's rule (latency < 0.45 x "
                  "integer SLO, at most 5 processes, bare capacity)")
      ->check(CLI::IsMember({"parva-artifact"}))
      ->excludes(factor);
  command.add_option(
      "--capacity-rule", flags.capacity_rule,
      "MIG planners: pooled (default): a service's processes form one pool behind the "
      "leastconn (or jsq) router, which may run closer to its capacity the more requests it serves "
      "per batch time (pooled:CV: batch latencies vary with coefficient CV, "
      "default 0.05; docs/capacity-rules.md); queueing: a segment counts only the "
      "share of its throughput at which its own queue still meets the SLO at "
      "p99.5 under Poisson arrivals; bursty:SHARE: the same for on/off bursts "
      "that are on SHARE of the time; bare: its whole throughput, as the papers "
      "do (--compat parva-artifact implies bare)");
  command.add_option(
      "--coeffs", flags.coefficients,
      "MPS planners (igniter, ffd+, gslice+, gpulet): the GPU's iGniter "
      "coefficients (JSON), to plan whole GPUs shared through MPS; e.g. "
      "fitted_coefficients_v100.json of iGniter's artifact (docs/data-sources.md), or fit your "
      "own with `tessera igniter fit`; default on a GPU with MIG: derived, with "
      "gpu-lets' tables, from its profiles (docs/igniter-planner.md, \"On MIG "
      "workloads\")");
  command.add_option("--gpulet-tables", flags.gpulet_tables,
                     "MPS planner gpulet: gpu-lets' profiling tables (JSON Lines), e.g. "
                     "gpulet.config of iGniter's artifact (docs/data-sources.md)");
  command
      .add_option("--price", flags.price_per_hour,
                  "MPS planners: hourly price of one GPU (default: the scenario pool's price, "
                  "else the catalog's one-GPU cloud instance, e.g. p3.2xlarge $3.06)")
      ->check(Within(limits::kPriceFlag));
}

CLI::Validator Within(const InputRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && range.Contains(*v) ? "" : OutOfRange(range, QuoteForMessage(text));
      },
      range.Describe());
}

Result<Scenario> Replicated(const Scenario& scenario, int copies) {
  if (!limits::kReplicate.Contains(copies)) {
    return Status::InvalidArgument("--replicate: " + OutOfRange(limits::kReplicate, copies));
  }
  const double services = static_cast<double>(scenario.services.size()) * copies;
  if (!limits::kServices.Contains(services)) {
    return Status::InvalidArgument(
        fmt::format("--replicate: {} copies of {} services make {:g}; a scenario holds {}", copies,
                    scenario.services.size(), services, limits::kServices.Describe()));
  }
  return ReplicateScenario(scenario, copies);
}

CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && *v >= 0 ? "" : "must be a number >= 0, got " + QuoteForMessage(text);
      },
      "NUMBER >= 0");
}

void AddSearchFlags(CLI::App& command, SearchFlags& flags) {
  command
      .add_option("--time-limit", flags.time_limit_s,
                  "Wall-clock time a planner may take, " + DescribeRange(kTimeLimit) +
                      ", e.g. 10, 30s or 2m (exact: returns the best plan found, its proven "
                      "bound and gap; migserving-ga: the best plan its rounds found; "
                      "migserving-greedy: the services its fast algorithm has not reached get "
                      "GPUs of their own; parva: the GPUs its allocation optimization has not "
                      "reached keep their segments; any planner with no plan covering every "
                      "service yet: an error); default: the planner's own (10 s for exact and "
                      "migserving-ga, none for the others)")
      ->transform(DurationFlag(kTimeLimit));
  command
      .add_option("--seed", flags.seed,
                  "Seed of a randomised planner (migserving-ga): same seed, same plan, unless "
                  "the time limit cuts the search short")
      ->check(NonNegative())
      ->capture_default_str();
  command
      .add_option("--score", flags.score,
                  "The heuristic score MIG-serving's planners (migserving-*) rank GPU "
                  "configurations by: capped (a service's utility counts up to what it still "
                  "needs) or paper (the paper's formula as written, each unsatisfied service's "
                  "whole utility); docs/migserving-planner.md")
      ->check(CLI::IsMember({"capped", "paper"}))
      ->capture_default_str();
}

PlanContext ContextFrom(const SearchFlags& flags, const Planner& planner) {
  PlanContext context;
  context.time_limit_s = flags.time_limit_s;
  context.seed = flags.seed;
  if (planner.UsesMigServingScore() && flags.score == "paper") {
    context.migserving_score = MigServingScore::kPaper;
  }
  context.progress = [](std::string_view line) {
    PrintMessage("tessera: " + std::string(line) + "\n");
  };
  return context;
}

Result<Deployment> LoadDeployment(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  return ParseDeploymentJson(text, path);
}

Result<Scenario> LoadScenario(const InputFlags& flags) {
  Result<Scenario> scenario =
      Status::InvalidArgument("give a scenario: --scenario FILE or --parva-slo DIR --row N");
  if (!flags.scenario.empty()) {
    scenario = LoadScenarioYaml(flags.scenario);
  } else if (!flags.parva_slo.empty()) {
    if (flags.row <= 0) return Status::InvalidArgument("--parva-slo needs --row N (1-based)");
    scenario = ImportParvaSloRow(flags.parva_slo, flags.row);
  }
  if (!scenario.ok()) return scenario.status();
  return Replicated(*scenario, flags.replicate);
}

namespace {

// The rule the planning commands start from: for MIG planners the pooled
// capacity rule behind the leastconn router, which `tessera deploy` ships as
// HAProxy's weighted leastconn (docs/capacity-rules.md, docs/routing.md); for MPS
// planners, which count whole throughputs (Problem::BuildMps), the
// library's default.
LatencyRule DefaultRule(bool mps) {
  LatencyRule rule;
  if (mps) return rule;
  rule.pooled = true;
  rule.router = Router::kLeastConn;
  return rule;
}

// The rule of the flags: --compat, --latency-factor, --capacity-rule,
// --router and --rate-margin over the default.
Result<LatencyRule> RuleFrom(const InputFlags& flags, bool mps) {
  LatencyRule rule = DefaultRule(mps);
  if (flags.compat == "parva-artifact") rule = ParvaArtifactRule();
  if (flags.latency_factor) rule.factor = *flags.latency_factor;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--latency-factor"));
  if (!flags.capacity_rule.empty()) {
    TESSERA_RETURN_IF_ERROR(rule.SetCapacity(flags.capacity_rule).WithContext("--capacity-rule"));
    // The pooled rule is made for the router that pools.
    if (rule.pooled && !RouterPools(rule.router)) rule.router = Router::kLeastConn;
  }
  if (!flags.router.empty()) {
    TESSERA_ASSIGN_OR_RETURN(rule.router, ParseRouter(flags.router));
    if (rule.pooled && !RouterPools(rule.router)) {
      if (!flags.capacity_rule.empty()) {
        return Status::InvalidArgument(
            "--router: --capacity-rule pooled needs --router leastconn or jsq (processes behind " +
            std::string(RouterName(rule.router)) +
            " queue alone); give --capacity-rule queueing with --router " +
            std::string(RouterName(rule.router)));
      }
      // The default pooled rule does not hold for a random router.
      TESSERA_RETURN_IF_ERROR(rule.SetCapacity("queueing"));
    }
  }
  if (flags.rate_margin) rule.rate_margin = *flags.rate_margin;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--rate-margin"));
  return rule;
}

// A plan is checked under the rule it was made under; a rule flag that says
// otherwise is a contradiction, not an override.
Result<LatencyRule> RuleOf(const InputFlags& flags, bool mps, const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(LatencyRule from_flags, RuleFrom(flags, mps));
  if (recorded == nullptr) return from_flags;
  const bool given = flags.latency_factor || !flags.compat.empty() ||
                     !flags.capacity_rule.empty() || !flags.router.empty() ||
                     flags.rate_margin.has_value();
  if (given && !(from_flags == *recorded)) {
    return Status::InvalidArgument(
        "the plan records the rule it was made under (" + DescribeRule(*recorded) +
        "); the rule flags give " + DescribeRule(from_flags) +
        ": drop --latency-factor, --compat, --capacity-rule, --router and --rate-margin to check "
        "it under its own rule");
  }
  return *recorded;
}

// "<file>:<line>: field 'pool'" of the pool entry at `line`, for messages.
std::string PoolField(const Scenario& scenario, int line) {
  return ServiceLocation(scenario, line) + ": field 'pool'";
}

// "<file>:<line>: field 'gpu'" of the scenario's gpu (the file alone when
// the scenario does not name one).
std::string GpuField(const Scenario& scenario) {
  if (scenario.gpu.empty()) return ServiceLocation(scenario, 0);
  return ServiceLocation(scenario, scenario.gpu_line) + ": field 'gpu'";
}

// The scenario's pool as offers of catalog models with MIG, or the one model
// of `--gpu`, the scenario, or a100-80gb.
Result<std::vector<GpuOffer>> ChoosePool(const InputFlags& flags, const Scenario& scenario) {
  std::vector<GpuOffer> pool;
  if (!scenario.pool.empty()) {
    if (!flags.gpu.empty()) {
      return Status::InvalidArgument(
          "--gpu: the scenario lists a pool of GPU models; edit its pool instead of giving "
          "--gpu");
    }
    for (const PoolEntry& entry : scenario.pool) {
      Result<const GpuModel*> gpu = FindMigGpu(entry.gpu);
      if (!gpu.ok()) return gpu.status().WithContext(PoolField(scenario, entry.line));
      pool.push_back({*gpu, entry.price_per_hour, entry.max_count});
    }
    return pool;
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseGpu(flags.gpu, scenario));
  return std::vector<GpuOffer>{{gpu, 0, 0}};
}

Result<Problem> LoadMigProblem(const InputFlags& flags, const Scenario& scenario,
                               const LatencyRule& rule) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<GpuOffer> pool, ChoosePool(flags, scenario));
  ProfileTable profiles;
  if (flags.profile_table) {
    profiles = *flags.profile_table;
  } else if (flags.profiles.empty()) {
    std::vector<const GpuModel*> gpus;
    for (const GpuOffer& offer : pool) gpus.push_back(offer.gpu);
    TESSERA_ASSIGN_OR_RETURN(profiles, EmbeddedProfiles(gpus));
  } else {
    TESSERA_ASSIGN_OR_RETURN(profiles, LoadProfiles(flags.profiles));
  }
  return Problem::BuildPool(scenario, std::move(pool), profiles, rule);
}

// The GPU an MPS plan uses: --gpu, the scenario's (or its pool's one entry),
// or the coefficients' hardware.gpu.
Result<const GpuModel*> ChooseMpsGpu(const InputFlags& flags, const Scenario& scenario,
                                     const MpsCoefficients& coefficients) {
  if (!flags.gpu.empty()) {
    Result<const GpuModel*> gpu = FindGpu(flags.gpu);
    return gpu.ok() ? gpu : gpu.status().WithContext("--gpu");
  }
  std::string name = scenario.gpu;
  std::string from = GpuField(scenario);
  if (name.empty() && scenario.pool.size() == 1) {
    name = scenario.pool.front().gpu;
    from = PoolField(scenario, scenario.pool.front().line);
  }
  if (!scenario.pool.empty() && name.empty()) {
    std::vector<std::string> models;
    for (const PoolEntry& entry : scenario.pool) models.push_back(entry.gpu);
    return Status::InvalidArgument(fmt::format(
        "{}: MPS planners plan one GPU type, the pool lists {} ({}); list one in `pool` or give "
        "--gpu",
        PoolField(scenario, scenario.pool[1].line), models.size(), fmt::join(models, ", ")));
  }
  if (name.empty()) from = flags.coefficients;
  if (name.empty()) name = coefficients.hardware.gpu;
  if (name.empty()) {
    return Status::InvalidArgument(
        "name the GPU the plan uses: --gpu NAME, `gpu:` in the scenario, or \"gpu\" in the "
        "coefficients' hardware (" +
        GpuNames() + ")");
  }
  Result<const GpuModel*> gpu = FindGpu(name);
  return gpu.ok() ? gpu : gpu.status().WithContext(from);
}

// --price, else the scenario pool's price of `gpu`, else its cloud instance's.
double ChoosePrice(const InputFlags& flags, const Scenario& scenario, const GpuModel& gpu) {
  if (flags.price_per_hour) return *flags.price_per_hour;
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu.name) return entry.price_per_hour;
  }
  return gpu.cloud.price_per_hour;
}

// The scenario pool's max_count of `gpu`; 0 (no cap) when it has none.
int ChooseMaxCount(const Scenario& scenario, const GpuModel& gpu) {
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu.name) return entry.max_count;
  }
  return 0;
}

// Without --coeffs: the coefficients and gpu-lets' tables derived from the
// MIG profiles (--profiles, else the embedded ones) of the scenario's GPU
// run whole (mps_from_profiles.h), with a note saying so.
Result<DerivedMps> DeriveMps(const InputFlags& flags, const Scenario& scenario) {
  Result<const GpuModel*> gpu =
      scenario.pool.empty() ? ChooseGpu(flags.gpu, scenario) : ChooseMpsGpu(flags, scenario, {});
  if (!gpu.ok() || !(*gpu)->HasMig()) {
    return Status::InvalidArgument(
        "MPS planners need the GPU's iGniter coefficients: --coeffs FILE (e.g. "
        "fitted_coefficients_v100.json, docs/data-sources.md), or a GPU with MIG whose "
        "profiles they are derived from (" +
        (gpu.ok() ? (*gpu)->name + " has no MIG" : gpu.status().message()) + ")");
  }
  return DeriveMpsForGpu(flags.profiles, **gpu, flags.profile_table.get());
}

Result<Problem> LoadMpsProblem(const InputFlags& flags, const Scenario& scenario,
                               const LatencyRule& rule) {
  MpsCoefficients coefficients;
  std::shared_ptr<const GpuletTables> gpulet;
  if (flags.coefficients.empty()) {
    TESSERA_ASSIGN_OR_RETURN(DerivedMps derived, DeriveMps(flags, scenario));
    coefficients = std::move(derived.coefficients);
    gpulet = std::make_shared<const GpuletTables>(std::move(derived.gpulet));
  } else {
    TESSERA_ASSIGN_OR_RETURN(coefficients, LoadMpsCoefficients(flags.coefficients));
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseMpsGpu(flags, scenario, coefficients));
  if (!flags.gpulet_tables.empty()) {
    TESSERA_ASSIGN_OR_RETURN(GpuletTables tables, LoadGpuletTables(flags.gpulet_tables));
    gpulet = std::make_shared<const GpuletTables>(std::move(tables));
  }
  return Problem::BuildMps(
      scenario, {gpu, ChoosePrice(flags, scenario, *gpu), ChooseMaxCount(scenario, *gpu)},
      std::move(coefficients), rule, std::move(gpulet));
}

}  // namespace

Result<DerivedMps> DeriveMpsForGpu(const std::string& profiles_path, const GpuModel& gpu,
                                   const ProfileTable* table) {
  TESSERA_ASSIGN_OR_RETURN(ProfileTable profiles, table != nullptr ? Result(*table)
                                                  : profiles_path.empty()
                                                      ? EmbeddedProfiles({&gpu})
                                                      : LoadProfiles(profiles_path));
  TESSERA_ASSIGN_OR_RETURN(DerivedMps derived, DeriveMpsFromProfiles(profiles, gpu));
  PrintMessage(fmt::format(
      "tessera: note: no --coeffs: the MPS planners use iGniter coefficients and gpu-lets' "
      "tables derived from the {} profiles of {} run whole ({}; docs/igniter-planner.md, \"On "
      "MIG workloads\")\n",
      table != nullptr        ? "given"
      : profiles_path.empty() ? "embedded"
                              : profiles_path,
      gpu.name, DescribeDerivedFits(derived)));
  return derived;
}

Status CheckFlagsApply(const InputFlags& flags, bool mps, std::string_view planners) {
  struct Given {
    const char* flag;
    bool given;
    bool for_mps;
  };
  const Given all[] = {
      // Without --coeffs, the MPS planners' coefficients come from the profiles.
      {"--profiles",
       (!flags.profiles.empty() || flags.profile_table) && !(mps && flags.coefficients.empty()),
       false},
      {"--compat", !flags.compat.empty(), false},
      {"--capacity-rule", !flags.capacity_rule.empty(), false},
      {"--rate-margin", flags.rate_margin.has_value(), false},
      {"--coeffs", !flags.coefficients.empty(), true},
      {"--gpulet-tables", !flags.gpulet_tables.empty(), true},
      {"--price", flags.price_per_hour.has_value(), true},
  };
  for (const Given& g : all) {
    if (!g.given || g.for_mps == mps) continue;
    return Status::InvalidArgument(fmt::format(
        "{} does not apply to {}: it is for the {} planners ({}); see `tessera compare --list`",
        g.flag, planners, g.for_mps ? "MPS" : "MIG",
        g.for_mps ? "whole GPUs shared through MPS" : "GPUs cut into MIG instances"));
  }
  return Status::Ok();
}

Result<Problem> LoadProblem(const InputFlags& flags, bool mps, const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, LoadScenario(flags));
  return LoadProblem(flags, scenario, mps, recorded);
}

Result<Problem> LoadProblem(const InputFlags& flags, const Scenario& scenario, bool mps,
                            const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(LatencyRule rule, RuleOf(flags, mps, recorded));
  return mps ? LoadMpsProblem(flags, scenario, rule) : LoadMigProblem(flags, scenario, rule);
}

std::string InputsSource(const InputFlags& flags, bool mps) {
  if (mps && flags.coefficients.empty()) {
    return "iGniter coefficients derived from profiles: " +
           (flags.profiles.empty() ? std::string("embedded (synthesized)") : flags.profiles);
  }
  if (mps) return "iGniter coefficients: " + flags.coefficients;
  return "profiles: " +
         (flags.profiles.empty() ? std::string("embedded (synthesized)") : flags.profiles);
}

void NoteOutcomes(const Deployment& deployment) {
  for (const ServiceOutcome& s : deployment.services) {
    if (s.status == ServiceStatus::kInfeasible) {
      PrintMessage("tessera: service " + s.name + " is infeasible: " + s.reason + "\n");
    } else if (s.predicted_violation) {
      PrintMessage("tessera: note: the iGniter model predicts " + s.name +
                   " misses its latency budget or rate on this plan\n");
    }
  }
}

void AdoptRule(Deployment& deployment, const std::string& path, const LatencyRule& rule) {
  if (deployment.rule_recorded) return;
  deployment.rule = rule;
  PrintMessage("tessera: note: " + path +
               " records no latency rule (it predates plans recording theirs); using " +
               DescribeRule(rule) + "\n");
}

Result<Problem> CheckPlanServes(const InputFlags& input, const std::string& path, Deployment& plan,
                                std::string_view command) {
  TESSERA_RETURN_IF_ERROR(CheckFlagsApply(input, false, command));
  TESSERA_ASSIGN_OR_RETURN(Problem problem,
                           LoadProblem(input, false, plan.rule_recorded ? &plan.rule : nullptr));
  AdoptRule(plan, path, problem.rule());
  TESSERA_RETURN_IF_ERROR(CheckServes(path, plan, problem));
  return problem;
}

Status CheckServes(const std::string& path, const Deployment& plan, const Problem& problem) {
  const std::vector<Violation> violations = ValidateDeployment(plan, problem);
  if (violations.empty()) return Status::Ok();
  std::string first = FormatViolations({violations.front()});
  first.pop_back();  // the line's newline: the message is one line
  return Status::InvalidArgument(
      fmt::format("{}: does not serve {}: {} violation(s), the first: {}", path,
                  ServiceLocation(problem.scenario(), 0), violations.size(), first));
}

Result<const GpuModel*> ChooseGpu(const std::string& gpu_flag, const Scenario& scenario) {
  const std::string name =
      !gpu_flag.empty() ? gpu_flag : (!scenario.gpu.empty() ? scenario.gpu : "a100-80gb");
  Result<const GpuModel*> gpu = FindMigGpu(name);
  if (gpu.ok()) return gpu;
  return gpu.status().WithContext(gpu_flag.empty() ? GpuField(scenario) : "--gpu");
}

Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus) {
  ProfileTable table;
  for (const GpuModel* gpu : gpus) TESSERA_RETURN_IF_ERROR(table.Merge(DefaultProfiles(*gpu)));
  return table;
}

namespace {

// The error of a failed write to `path`, with the system's reason.
Status WriteError(const std::string& path, int error) {
  return Status::IoError(fmt::format("cannot write {}: {}", QuoteForMessage(path),
                                     std::generic_category().message(error)));
}

// Writes all of `content` to the open descriptor `fd`; the errno of a
// failure, else 0.
int WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// A FIFO or a character device (/dev/null, a terminal): written through in
// place, never replaced.
Status WriteThrough(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return WriteError(path, errno);
  const int error = WriteAll(fd, content);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (error != 0 || closed != 0) return WriteError(path, error != 0 ? error : closed);
  return Status::Ok();
}

// A regular file, or a path where nothing is yet: a temporary file beside it
// renamed over it, so that a failed run never leaves a partial file. An
// existing file keeps its permissions; a new one gets 0666 less the umask.
Status WriteReplacing(const std::string& path, const std::string& content,
                      std::optional<mode_t> mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return WriteError(path, errno);
  int error = WriteAll(fd, content);
  // mkstemp makes the file 0600: a new file gets what open() would give it.
  if (!mode) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (error == 0 && ::fchmod(fd, *mode & 07777) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    return WriteError(path, error);
  }
  return Status::Ok();
}

// Where the symbolic link `link` points, as a path usable from here (a
// relative target is relative to the link's directory).
Result<std::string> LinkTarget(const std::string& link) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(link, ec);
  if (ec) return WriteError(link, ec.value());
  if (target.is_absolute()) return target.string();
  return (std::filesystem::path(link).parent_path() / target).string();
}

// `path` (not a link) by its type `mode`; `shown` is the path the user gave.
Status WriteByType(const std::string& path, mode_t mode, const std::string& shown,
                   const std::string& content) {
  if (S_ISREG(mode)) return WriteReplacing(path, content, mode);
  if (S_ISFIFO(mode) || S_ISCHR(mode)) return WriteThrough(path, content);
  const char* what = S_ISDIR(mode)    ? "a directory"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a regular file";
  return Status::IoError(
      fmt::format("cannot write {}: {} is {}; give a regular file, a FIFO or a character device",
                  QuoteForMessage(shown), path == shown ? "it" : QuoteForMessage(path), what));
}

// A symbolic link: what it leads to is written, never the link itself.
Status WriteThroughLink(const std::string& path, const std::string& content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    // The kernel follows the links (also /proc/self/fd/N, whose text may be
    // "pipe:[...]"): a FIFO or device is opened through them, a regular file
    // is replaced at its real path.
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return WriteThrough(path, content);
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    if (ec) return WriteError(path, ec.value());
    return WriteByType(real.string(), st.st_mode, path, content);
  }
  if (errno != ENOENT) return WriteError(path, errno);
  // A dangling link: follow it name by name to the file it would be, and
  // create that file (at most as many links as the system follows).
  constexpr int kMaxLinks = 40;
  std::string target = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    TESSERA_ASSIGN_OR_RETURN(target, LinkTarget(target));
    if (::lstat(target.c_str(), &st) != 0) {
      if (errno == ENOENT) return WriteReplacing(target, content, std::nullopt);
      return WriteError(path, errno);
    }
    if (!S_ISLNK(st.st_mode)) return WriteError(path, ENOENT);  // a missing directory
  }
  return WriteError(path, ELOOP);
}

}  // namespace

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("cannot write to stdout");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return WriteReplacing(path, content, std::nullopt);
    return WriteError(path, errno);
  }
  if (S_ISLNK(st.st_mode)) return WriteThroughLink(path, content);
  return WriteByType(path, st.st_mode, path, content);
}

// The token of --token-file: its one line, the trailing newline stripped.
Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Status::InvalidArgument("--token-file: " + text.status().message());
  std::string token = std::move(*text);
  if (token.ends_with('\n')) token.pop_back();
  if (token.ends_with('\r')) token.pop_back();
  if (token.empty())
    return Status::InvalidArgument("--token-file: " + path + " is empty: write the token in it");
  if (token.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("--token-file: " + path +
                                   " holds more than one line: it must hold the token alone");
  return token;
}

}  // namespace tessera::cli
